# fanin: Alveo U250 PCIe (XDMA, Gen3 x16, AXI-Lite master on BAR0). Part: xcu250-figd2104-2L-e.
# Pin data: Alveo U200/U250 User Guide (UG1289), "PCI Express Endpoint", as placed in corundum's
# fpga/mqnic/AU200/fpga_100g/fpga.xdc (same board and package: GTY quads 224-227, refclk
# MGTREFCLK0_226, PERST# BD21) and the U250 master XDC.
# Lane p of pcie_rx_p/pcie_tx_p is PCIe lane p of the edge connector (GTY quads 227 (lanes 0-3) down to 224 (lanes 12-15)); only P
# pins are placed, the N pin of each pair follows. The 100 MHz reference clock is the
# slot's (through IBUFDS_GTE4); PERST# is the slot reset.

set_property -dict {LOC AF2} [get_ports {pcie_rx_p[0]}]
set_property -dict {LOC AF7} [get_ports {pcie_tx_p[0]}]
set_property -dict {LOC AG4} [get_ports {pcie_rx_p[1]}]
set_property -dict {LOC AG9} [get_ports {pcie_tx_p[1]}]
set_property -dict {LOC AH2} [get_ports {pcie_rx_p[2]}]
set_property -dict {LOC AH7} [get_ports {pcie_tx_p[2]}]
set_property -dict {LOC AJ4} [get_ports {pcie_rx_p[3]}]
set_property -dict {LOC AJ9} [get_ports {pcie_tx_p[3]}]
set_property -dict {LOC AK2} [get_ports {pcie_rx_p[4]}]
set_property -dict {LOC AK7} [get_ports {pcie_tx_p[4]}]
set_property -dict {LOC AL4} [get_ports {pcie_rx_p[5]}]
set_property -dict {LOC AL9} [get_ports {pcie_tx_p[5]}]
set_property -dict {LOC AM2} [get_ports {pcie_rx_p[6]}]
set_property -dict {LOC AM7} [get_ports {pcie_tx_p[6]}]
set_property -dict {LOC AN4} [get_ports {pcie_rx_p[7]}]
set_property -dict {LOC AN9} [get_ports {pcie_tx_p[7]}]
set_property -dict {LOC AP2} [get_ports {pcie_rx_p[8]}]
set_property -dict {LOC AP7} [get_ports {pcie_tx_p[8]}]
set_property -dict {LOC AR4} [get_ports {pcie_rx_p[9]}]
set_property -dict {LOC AR9} [get_ports {pcie_tx_p[9]}]
set_property -dict {LOC AT2} [get_ports {pcie_rx_p[10]}]
set_property -dict {LOC AT7} [get_ports {pcie_tx_p[10]}]
set_property -dict {LOC AU4} [get_ports {pcie_rx_p[11]}]
set_property -dict {LOC AU9} [get_ports {pcie_tx_p[11]}]
set_property -dict {LOC AV2} [get_ports {pcie_rx_p[12]}]
set_property -dict {LOC AV7} [get_ports {pcie_tx_p[12]}]
set_property -dict {LOC AW4} [get_ports {pcie_rx_p[13]}]
set_property -dict {LOC BB5} [get_ports {pcie_tx_p[13]}]
set_property -dict {LOC BA2} [get_ports {pcie_rx_p[14]}]
set_property -dict {LOC BD5} [get_ports {pcie_tx_p[14]}]
set_property -dict {LOC BC2} [get_ports {pcie_rx_p[15]}]
set_property -dict {LOC BF5} [get_ports {pcie_tx_p[15]}]

set_property -dict {LOC AM11} [get_ports pcie_refclk_p] ;# MGTREFCLK0P_226
create_clock -period 10.000 -name pcie_refclk [get_ports pcie_refclk_p]

set_property -dict {LOC BD21 IOSTANDARD LVCMOS12 PULLUP true} [get_ports pcie_perst_n]
set_false_path -from [get_ports pcie_perst_n]
