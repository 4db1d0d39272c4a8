# fanin: Alveo U280 QSFP28 cages (2 x 100G through CMAC, GTY quads 134 and 135).
# Part: xcu280-fsvh2892-2L-e.
# Pin data: Alveo U280 User Guide (UG1314), "QSFP28 Interfaces", and the Alveo U280 master
# XDC, cross-checked with corundum fpga/mqnic/AU280/fpga_100g/fpga.xdc.
# Port 0 of the core is QSFP0 (CMACE4_X0Y6), port 1 is QSFP1 (CMACE4_X0Y7). Only P pins
# are placed; the N pin of each pair follows.

set_property -dict {LOC L53} [get_ports {qsfp0_rx_p[0]}] ;# MGTYRXP0_134 GTYE4_CHANNEL_X0Y40
set_property -dict {LOC K51} [get_ports {qsfp0_rx_p[1]}] ;# MGTYRXP1_134 GTYE4_CHANNEL_X0Y41
set_property -dict {LOC J53} [get_ports {qsfp0_rx_p[2]}] ;# MGTYRXP2_134 GTYE4_CHANNEL_X0Y42
set_property -dict {LOC H51} [get_ports {qsfp0_rx_p[3]}] ;# MGTYRXP3_134 GTYE4_CHANNEL_X0Y43
set_property -dict {LOC L48} [get_ports {qsfp0_tx_p[0]}] ;# MGTYTXP0_134
set_property -dict {LOC L44} [get_ports {qsfp0_tx_p[1]}] ;# MGTYTXP1_134
set_property -dict {LOC K46} [get_ports {qsfp0_tx_p[2]}] ;# MGTYTXP2_134
set_property -dict {LOC J48} [get_ports {qsfp0_tx_p[3]}] ;# MGTYTXP3_134
set_property -dict {LOC R40} [get_ports qsfp0_refclk_p] ;# MGTREFCLK1P_134 from the SI546
set_property -dict {LOC R41} [get_ports qsfp0_refclk_n]

set_property -dict {LOC G53} [get_ports {qsfp1_rx_p[0]}] ;# MGTYRXP0_135 GTYE4_CHANNEL_X0Y44
set_property -dict {LOC F51} [get_ports {qsfp1_rx_p[1]}] ;# MGTYRXP1_135 GTYE4_CHANNEL_X0Y45
set_property -dict {LOC E53} [get_ports {qsfp1_rx_p[2]}] ;# MGTYRXP2_135 GTYE4_CHANNEL_X0Y46
set_property -dict {LOC D51} [get_ports {qsfp1_rx_p[3]}] ;# MGTYRXP3_135 GTYE4_CHANNEL_X0Y47
set_property -dict {LOC G48} [get_ports {qsfp1_tx_p[0]}] ;# MGTYTXP0_135
set_property -dict {LOC E48} [get_ports {qsfp1_tx_p[1]}] ;# MGTYTXP1_135
set_property -dict {LOC C48} [get_ports {qsfp1_tx_p[2]}] ;# MGTYTXP2_135
set_property -dict {LOC A49} [get_ports {qsfp1_tx_p[3]}] ;# MGTYTXP3_135
set_property -dict {LOC M42} [get_ports qsfp1_refclk_p] ;# MGTREFCLK1P_135 from the SI546
set_property -dict {LOC M43} [get_ports qsfp1_refclk_n]

# 161.1328125 MHz CMAC reference clocks (SI546 with FS = 1, set by gpio.xdc's pins).
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
create_clock -period 6.206 -name qsfp1_refclk [get_ports qsfp1_refclk_p]
