//! The fanin switch's register interface without the RTL: the core configuration, the
//! register map (offsets, the table docs/registers.md and the C header are generated from)
//! and the driver's register-write encoders. A host-side board driver depends on this
//! crate alone; `fanin-hdl` builds its decoder from the same table.

pub mod board;
pub mod config;
pub mod driver;
pub mod layout;
pub mod map;
pub mod verify;

pub use config::{ConfigError, CoreConfig, RamStyle};
pub use driver::{
    check_fits, check_loadable, check_supported, child_fields, identity_writes, job_fields,
    job_remove_writes, job_writes, mac48, port_below, route_remove_writes, route_writes,
    switch_writes, Unsupported, MAX_PORTS,
};
pub use map::*;
