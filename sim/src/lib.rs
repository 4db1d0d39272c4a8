//! fanin-sim: cycle-accurate testbenches for the fanin RTL, in Rust, around a Verilator model.
//!
//! - [`allreduce`]: a closed-loop allreduce of reference workers through the core;
//! - [`dut`]: the safe API over the Verilated core (the device under test) (reset, tick, ports by name, VCD);
//! - [`axis`]: AXI-Stream frame sources and sinks with idle and backpressure inserters;
//! - [`axil`]: an AXI4-Lite master;
//! - [`board`]: a board's whole top (wrapper, vendor-IP models, core) in its clock domains;
//! - [`tb`]: the testbench that steps them together with idle/backpressure pacing;
//! - [`scoreboard`]: the reference model fed the same frames, compared frame by frame.
//!
//! See sim/README.md for the build pipeline and how to add a test.

pub mod allreduce;
pub mod axil;
pub mod axis;
pub mod board;
pub mod dut;
pub mod scoreboard;
pub mod tb;

pub use dut::{Dut, PortId, SimError};
