# fanin: Alveo U250 clocks. Part: xcu250-figd2104-2L-e.
# Pin data: Alveo U200/U250 Data Center Accelerator Cards User Guide (UG1289), "Clocks"
# (300 MHz SYSCLK0, DDR4 C0 bank), cross-checked with corundum fpga/mqnic/AU250/fpga_100g/fpga.xdc.

# 300 MHz system oscillator -> ip/clk_core.tcl (MMCM): core_clk and the 100 MHz CMAC init_clk.
set_property -dict {LOC AY37 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {LOC AY38 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 3.333 -name sysclk [get_ports sysclk_p]

# Core clock at the configuration's target (`alveo`: 250 MHz, 4.000 ns; 322 MHz, 3.106 ns,
# with `alveo+clock_mhz=322`): the MMCM's first output (ip/clk_core.tcl), renamed so reports
# name it; build.tcl refuses a core_clk period off the configuration's by > 1 %.
create_generated_clock -name core_clk [get_pins -hierarchical -filter {NAME =~ *clk_core_inst*/CLKOUT0}]
