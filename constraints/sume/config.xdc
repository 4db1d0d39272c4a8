# fanin: NetFPGA SUME configuration/bitstream settings. Part: xc7vx690tffg1761-3.
# Source: NetFPGA SUME Reference Manual (Digilent), configuration bank voltage 1.8 V.
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN Pullup [current_design]
# BPI x16 flash (build.tcl writes out/fpga_sume.mcs: write_cfgmem -interface BPIx16), read
# asynchronously (no synchronous burst mode), as Xilinx's 7-series BPI boards do.
set_property CONFIG_MODE BPI16 [current_design]
set_property BITSTREAM.CONFIG.BPI_SYNC_MODE Disable [current_design]
