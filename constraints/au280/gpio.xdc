# fanin: Alveo U280 GPIO: reference-clock control and the HBM CATTRIP pin. Part: xcu280-fsvh2892-2L-e.
# Pin data: Alveo U280 User Guide (UG1314), "QSFP28 Interfaces" and "HBM CATTRIP",
# cross-checked with corundum fpga/mqnic/AU280/fpga_100g/fpga.xdc.
# The U280 has no user LEDs reachable from the FPGA; link state is read over AXI-Lite.

# SI546 reference-clock output enable (active low) and frequency select (1: 161.1328125 MHz).
set_property -dict {LOC H32 IOSTANDARD LVCMOS18} [get_ports qsfp0_refclk_oe_b]
set_property -dict {LOC G32 IOSTANDARD LVCMOS18} [get_ports qsfp0_refclk_fs]
set_property -dict {LOC H30 IOSTANDARD LVCMOS18} [get_ports qsfp1_refclk_oe_b]
set_property -dict {LOC G33 IOSTANDARD LVCMOS18} [get_ports qsfp1_refclk_fs]

# HBM over-temperature: must be driven low, or the card management controller powers the card off.
set_property -dict {LOC D32 IOSTANDARD LVCMOS18 PULLDOWN true} [get_ports hbm_cattrip]
