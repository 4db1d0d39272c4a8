# fanin: Alveo U280 clocks. Part: xcu280-fsvh2892-2L-e.
# Pin data: Alveo U280 Data Center Accelerator Card User Guide (UG1314), "Clocks"
# (100 MHz SYSCLK2), cross-checked with corundum fpga/mqnic/AU280/fpga_100g/fpga.xdc.

# 100 MHz system oscillator -> ip/clk_core.tcl (MMCM): core_clk and the 100 MHz CMAC init_clk.
set_property -dict {LOC G31 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {LOC F31 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 10.000 -name sysclk [get_ports sysclk_p]

# Core clock at the configuration's target (`alveo`: 250 MHz, 4.000 ns; 322 MHz, 3.106 ns,
# with `alveo+clock_mhz=322`): the MMCM's first output (ip/clk_core.tcl), renamed so reports
# name it; build.tcl refuses a core_clk period off the configuration's by > 1 %.
create_generated_clock -name core_clk [get_pins -hierarchical -filter {NAME =~ *clk_core_inst*/CLKOUT0}]
