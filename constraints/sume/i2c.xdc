# fanin: NetFPGA SUME FPGA I2C bus (PCA9548 mux -> Si5324 jitter attenuator). Part: xc7vx690tffg1761-3.
# Pin data: the NetFPGA-SUME reference designs' nf_sume_general.xdc ("Main I2C Bus - 100KHz":
# iic_fpga_scl_io AK24, iic_fpga_sda_io AK25, LVCMOS18, pull-ups; iic_reset[0] AM39 "iic_mux
# reset - high active" LVCMOS15, iic_reset[1] BA29 "si5324 reset - high active" LVCMOS18),
# cross-checked with corundum fpga/mqnic/NetFPGA_SUME/fpga/fpga.xdc (i2c_scl, i2c_sda,
# i2c_mux_reset, sfp_clk_rst on the same pins and standards).
# Si5324 alarm output (SFP_CLK_ALARM_B, active low): AM29 LVCMOS18 in the NetFPGA-SUME
# reference designs' XDC (sfp_clk_alarm_b) and, commented out, in corundum's (pulled up).
# Read as board status bit 3 (set = pin low); its function is whatever the Si5324's
# registers 20-24 select (fanin does not write them: docs/boards.md, "Not verified").
# The bus runs at 100 kHz from fanin_si5324_init (init_clk); no timing paths to constrain.

set_property -dict {LOC AK24 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 12 PULLUP true} [get_ports i2c_scl]
set_property -dict {LOC AK25 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 12 PULLUP true} [get_ports i2c_sda]
set_property -dict {LOC AM39 IOSTANDARD LVCMOS15 SLEW SLOW DRIVE 12} [get_ports i2c_mux_reset]
set_property -dict {LOC BA29 IOSTANDARD LVCMOS18 SLEW SLOW DRIVE 12} [get_ports si5324_rst]

set_false_path -to [get_ports {i2c_scl i2c_sda i2c_mux_reset si5324_rst}]
set_false_path -from [get_ports {i2c_scl i2c_sda}]
set_property -dict {LOC AM29 IOSTANDARD LVCMOS18 PULLUP true} [get_ports si5324_alarm_b]
set_false_path -from [get_ports si5324_alarm_b]
