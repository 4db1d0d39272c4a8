# fanin: Alveo U250 QSFP28 cages (2 x 100GBASE-SR4/CR4 through CMAC, GTY quads 231 and 230).
# Part: xcu250-figd2104-2L-e.
# Pin data: Alveo U200/U250 User Guide (UG1289), "QSFP28 Interfaces", and the Alveo U250
# master XDC, cross-checked with corundum fpga/mqnic/AU250/fpga_100g/fpga.xdc.
# Port 0 of the core is QSFP0 (CMACE4_X0Y8), port 1 is QSFP1 (CMACE4_X0Y7). Only P pins
# are placed; the N pin of each pair follows.

set_property -dict {LOC N4} [get_ports {qsfp0_rx_p[0]}] ;# MGTYRXP0_231 GTYE4_CHANNEL_X1Y44
set_property -dict {LOC M2} [get_ports {qsfp0_rx_p[1]}] ;# MGTYRXP1_231 GTYE4_CHANNEL_X1Y45
set_property -dict {LOC L4} [get_ports {qsfp0_rx_p[2]}] ;# MGTYRXP2_231 GTYE4_CHANNEL_X1Y46
set_property -dict {LOC K2} [get_ports {qsfp0_rx_p[3]}] ;# MGTYRXP3_231 GTYE4_CHANNEL_X1Y47
set_property -dict {LOC N9} [get_ports {qsfp0_tx_p[0]}] ;# MGTYTXP0_231
set_property -dict {LOC M7} [get_ports {qsfp0_tx_p[1]}] ;# MGTYTXP1_231
set_property -dict {LOC L9} [get_ports {qsfp0_tx_p[2]}] ;# MGTYTXP2_231
set_property -dict {LOC K7} [get_ports {qsfp0_tx_p[3]}] ;# MGTYTXP3_231
set_property -dict {LOC K11} [get_ports qsfp0_refclk_p] ;# MGTREFCLK1P_231 from the Si5335
set_property -dict {LOC K10} [get_ports qsfp0_refclk_n]

set_property -dict {LOC U4} [get_ports {qsfp1_rx_p[0]}] ;# MGTYRXP0_230 GTYE4_CHANNEL_X1Y40
set_property -dict {LOC T2} [get_ports {qsfp1_rx_p[1]}] ;# MGTYRXP1_230 GTYE4_CHANNEL_X1Y41
set_property -dict {LOC R4} [get_ports {qsfp1_rx_p[2]}] ;# MGTYRXP2_230 GTYE4_CHANNEL_X1Y42
set_property -dict {LOC P2} [get_ports {qsfp1_rx_p[3]}] ;# MGTYRXP3_230 GTYE4_CHANNEL_X1Y43
set_property -dict {LOC U9} [get_ports {qsfp1_tx_p[0]}] ;# MGTYTXP0_230
set_property -dict {LOC T7} [get_ports {qsfp1_tx_p[1]}] ;# MGTYTXP1_230
set_property -dict {LOC R9} [get_ports {qsfp1_tx_p[2]}] ;# MGTYTXP2_230
set_property -dict {LOC P7} [get_ports {qsfp1_tx_p[3]}] ;# MGTYTXP3_230
set_property -dict {LOC P11} [get_ports qsfp1_refclk_p] ;# MGTREFCLK1P_230 from the Si5335
set_property -dict {LOC P10} [get_ports qsfp1_refclk_n]

# 161.1328125 MHz CMAC reference clocks (Si5335 with FS = 0b10, set by gpio.xdc's pins).
create_clock -period 6.206 -name qsfp0_refclk [get_ports qsfp0_refclk_p]
create_clock -period 6.206 -name qsfp1_refclk [get_ports qsfp1_refclk_p]
