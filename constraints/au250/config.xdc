# fanin: Alveo U250 configuration/bitstream settings. Part: xcu250-figd2104-2L-e.
# Source: Alveo U200/U250 User Guide (UG1289), "Configuration" (SPIx4 flash, 1.8 V bank 0).
set_property CFGBVS GND [current_design]
set_property CONFIG_VOLTAGE 1.8 [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS true [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.SPI_32BIT_ADDR YES [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 63.8 [current_design]
set_property BITSTREAM.CONFIG.UNUSEDPIN PULLUP [current_design]
