# fanin: NetFPGA SUME clocks. Part: xc7vx690tffg1761-3.
# Pin data: NetFPGA SUME Reference Manual (Digilent) and the NetFPGA-SUME master XDC,
# cross-checked with corundum fpga/mqnic/NetFPGA_SUME/fpga/fpga.xdc (200 MHz system clock, bank 38).

# 200 MHz system oscillator -> ip/clk_core.tcl (MMCM): core_clk and the 100 MHz dclk.
set_property -dict {LOC H19 IOSTANDARD LVDS} [get_ports sysclk_p]
set_property -dict {LOC G18 IOSTANDARD LVDS} [get_ports sysclk_n]
create_clock -period 5.000 -name sysclk [get_ports sysclk_p]

# Core clock at the `sume` configuration's target, 200 MHz (5.000 ns): the MMCM's first
# output, renamed so reports name it; build.tcl refuses a core_clk period other than 5.000 ns.
create_generated_clock -name core_clk [get_pins -hierarchical -filter {NAME =~ *clk_core_inst*/CLKOUT0}]
