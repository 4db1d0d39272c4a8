# fanin: NetFPGA SUME SFP+ cages (4 x 10GBASE-R, GTH quad 119, refclk quad 118). Part: xc7vx690tffg1761-3.
# Pin data: NetFPGA SUME Reference Manual (Digilent) and the NetFPGA-SUME master XDC,
# cross-checked with corundum fpga/mqnic/NetFPGA_SUME/fpga/fpga.xdc and the VC709 XDC
# (same xc7vx690t-ffg1761 package: A6 = MGTHRXP3_119).
# Port p of the core is SFP cage p+1 ("nf0".."nf3" on the bracket). Only P pins are placed;
# Vivado places the N pin of each differential pair.

set_property -dict {LOC A6} [get_ports {sfp_rx_p[0]}] ;# MGTHRXP3_119 GTHE2_CHANNEL_X1Y39
set_property -dict {LOC B4} [get_ports {sfp_tx_p[0]}] ;# MGTHTXP3_119 GTHE2_CHANNEL_X1Y39
set_property -dict {LOC B8} [get_ports {sfp_rx_p[1]}] ;# MGTHRXP2_119 GTHE2_CHANNEL_X1Y38
set_property -dict {LOC C2} [get_ports {sfp_tx_p[1]}] ;# MGTHTXP2_119 GTHE2_CHANNEL_X1Y38
set_property -dict {LOC C6} [get_ports {sfp_rx_p[2]}] ;# MGTHRXP1_119 GTHE2_CHANNEL_X1Y37
set_property -dict {LOC D4} [get_ports {sfp_tx_p[2]}] ;# MGTHTXP1_119 GTHE2_CHANNEL_X1Y37
set_property -dict {LOC D8} [get_ports {sfp_rx_p[3]}] ;# MGTHRXP0_119 GTHE2_CHANNEL_X1Y36
set_property -dict {LOC E2} [get_ports {sfp_tx_p[3]}] ;# MGTHTXP0_119 GTHE2_CHANNEL_X1Y36

# 156.25 MHz SFP+ reference clock from the Si5324 jitter attenuator (IC20), MGTREFCLK0_118.
set_property -dict {LOC E10} [get_ports sfp_refclk_p]
set_property -dict {LOC E9} [get_ports sfp_refclk_n]
create_clock -period 6.400 -name sfp_refclk [get_ports sfp_refclk_p]

# SFP+ transmitter disable, driven by the 10G Ethernet subsystems.
set_property -dict {LOC M18 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_tx_disable[0]}]
set_property -dict {LOC B31 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_tx_disable[1]}]
set_property -dict {LOC J38 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_tx_disable[2]}]
set_property -dict {LOC L21 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_tx_disable[3]}]

# SFP+ module status (inputs, pulled up on the board side of the cage; high = asserted):
# loss of signal (RX_LOS, no light) drives the 10G subsystem's signal_detect (inverted),
# TX_FAULT its tx_fault; both are also port p's link bits 8 and 9 in the board register window.
# Pins from corundum fpga/mqnic/NetFPGA_SUME/fpga/fpga.xdc (sfp_N_los, sfp_N_tx_fault; cage N =
# port N-1), same bank standard as sfp_tx_disable.
set_property -dict {LOC L17  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_los[0]}]
set_property -dict {LOC L20  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_los[1]}]
set_property -dict {LOC G37  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_los[2]}]
set_property -dict {LOC J36  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_los[3]}]
set_property -dict {LOC M19  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[0]}]
set_property -dict {LOC C26  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[1]}]
set_property -dict {LOC E39  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[2]}]
set_property -dict {LOC J26  IOSTANDARD LVCMOS15 PULLUP true} [get_ports {sfp_tx_fault[3]}]
set_false_path -from [get_ports {sfp_los[*] sfp_tx_fault[*]}]
