# fanin: Alveo U280 PCIe (XDMA, Gen3 x16, AXI-Lite master on BAR0). Part: xcu280-fsvh2892-2L-e.
# Pin data: Alveo U280 User Guide (UG1314), "PCI Express Endpoint", as listed in corundum's
# fpga/mqnic/AU280/fpga_100g/fpga.xdc (GTY quads 224-227, refclk MGTREFCLK0_225 "for x16",
# PERST# BH26).
# Lane p of pcie_rx_p/pcie_tx_p is PCIe lane p of the edge connector (GTY quads 227 (lanes 0-3) down to 224 (lanes 12-15)); only P
# pins are placed, the N pin of each pair follows. The 100 MHz reference clock is the
# slot's (through IBUFDS_GTE4); PERST# is the slot reset.

set_property -dict {LOC AL2} [get_ports {pcie_rx_p[0]}]
set_property -dict {LOC AL11} [get_ports {pcie_tx_p[0]}]
set_property -dict {LOC AM4} [get_ports {pcie_rx_p[1]}]
set_property -dict {LOC AM9} [get_ports {pcie_tx_p[1]}]
set_property -dict {LOC AN6} [get_ports {pcie_rx_p[2]}]
set_property -dict {LOC AN11} [get_ports {pcie_tx_p[2]}]
set_property -dict {LOC AN2} [get_ports {pcie_rx_p[3]}]
set_property -dict {LOC AP9} [get_ports {pcie_tx_p[3]}]
set_property -dict {LOC AP4} [get_ports {pcie_rx_p[4]}]
set_property -dict {LOC AR11} [get_ports {pcie_tx_p[4]}]
set_property -dict {LOC AR2} [get_ports {pcie_rx_p[5]}]
set_property -dict {LOC AR7} [get_ports {pcie_tx_p[5]}]
set_property -dict {LOC AT4} [get_ports {pcie_rx_p[6]}]
set_property -dict {LOC AT9} [get_ports {pcie_tx_p[6]}]
set_property -dict {LOC AU2} [get_ports {pcie_rx_p[7]}]
set_property -dict {LOC AU11} [get_ports {pcie_tx_p[7]}]
set_property -dict {LOC AV4} [get_ports {pcie_rx_p[8]}]
set_property -dict {LOC AU7} [get_ports {pcie_tx_p[8]}]
set_property -dict {LOC AW6} [get_ports {pcie_rx_p[9]}]
set_property -dict {LOC AV9} [get_ports {pcie_tx_p[9]}]
set_property -dict {LOC AW2} [get_ports {pcie_rx_p[10]}]
set_property -dict {LOC AW11} [get_ports {pcie_tx_p[10]}]
set_property -dict {LOC AY4} [get_ports {pcie_rx_p[11]}]
set_property -dict {LOC AY9} [get_ports {pcie_tx_p[11]}]
set_property -dict {LOC BA6} [get_ports {pcie_rx_p[12]}]
set_property -dict {LOC BA11} [get_ports {pcie_tx_p[12]}]
set_property -dict {LOC BA2} [get_ports {pcie_rx_p[13]}]
set_property -dict {LOC BB9} [get_ports {pcie_tx_p[13]}]
set_property -dict {LOC BB4} [get_ports {pcie_rx_p[14]}]
set_property -dict {LOC BC11} [get_ports {pcie_tx_p[14]}]
set_property -dict {LOC BC2} [get_ports {pcie_rx_p[15]}]
set_property -dict {LOC BC7} [get_ports {pcie_tx_p[15]}]

set_property -dict {LOC AR15} [get_ports pcie_refclk_p] ;# MGTREFCLK0P_225
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]

set_property -dict {LOC BH26 IOSTANDARD LVCMOS18 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]
