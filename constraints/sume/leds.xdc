# fanin: NetFPGA SUME LEDs. Part: xc7vx690tffg1761-3.
# Pin data: NetFPGA SUME Reference Manual (Digilent) and the NetFPGA-SUME master XDC,
# cross-checked with corundum fpga/mqnic/NetFPGA_SUME/fpga/fpga.xdc.
# sfp_led[p]: link (PCS block lock) of port p; led[0]: MMCM locked; led[1]: QPLL locked.

set_property -dict {LOC G13  IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_led[0]}]
set_property -dict {LOC AL22 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_led[1]}]
set_property -dict {LOC AY18 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_led[2]}]
set_property -dict {LOC P31  IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {sfp_led[3]}]
set_property -dict {LOC AR22 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {led[0]}]
set_property -dict {LOC AR23 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports {led[1]}]
set_false_path -to [get_ports {sfp_led[*] led[*]}]
