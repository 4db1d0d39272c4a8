//! rust-hdl description of the fanin aggregation switch core.
#![allow(clippy::needless_range_loop)]

pub mod acc;
pub mod config;
pub mod core;
pub mod hdrgen;
pub mod parse;
pub mod ram;
pub mod regs;
pub mod rx;
pub mod sim;
pub mod tx;
pub mod verilog;

pub use config::{ConfigError, CoreConfig, RamStyle};
pub use verilog::verilog;
