//! rust-hdl description of the fanin aggregation switch core.
#![allow(clippy::needless_range_loop)]

pub mod acc;
pub mod core;
pub mod hdrgen;
pub mod layout;
pub mod parse;
pub mod ram;
pub mod rx;
pub mod sim;
pub mod tx;
pub mod verilog;

pub use config::{ConfigError, CoreConfig, RamStyle};
/// The register map and the driver's encoders (the `fanin-regs` crate).
pub use fanin_regs as regs;
/// The core configuration (from `fanin-regs`, which a host driver uses without rust-hdl).
pub use fanin_regs::config;
pub use verilog::verilog;
