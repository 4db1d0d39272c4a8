//! Verilator testbench harness (filled in by the sim issue).
