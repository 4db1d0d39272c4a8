//! Small constructors the engine's blocks share: default `Vec`s of ports and registers,
//! and the constants their per-port and per-entry loops compare with.

use crate::ram::ADDR_W;
use rust_hdl::prelude::*;

/// `k` default values (a `Vec` of ports or registers).
pub(super) fn n<T: Default>(k: usize) -> Vec<T> {
    (0..k).map(|_| T::default()).collect()
}

/// A 16-bit constant (register addresses, indices, field offsets).
pub(super) fn k16(v: u64) -> Constant<Bits<16>> {
    Constant::new(v.into())
}

/// Port numbers `0..k` as 4-bit constants (a per-port loop compares a port field with them).
pub(super) fn idx4(k: usize) -> Vec<Constant<Bits<4>>> {
    (0..k).map(|i| Constant::new((i as u64).into())).collect()
}

/// The job-entry indices `0..max(k, 8)` as 8-bit constants (per-entry compares).
pub(super) fn idx8(k: usize) -> Vec<Constant<Bits<8>>> {
    (0..k.max(8))
        .map(|i| Constant::new((i as u64).into()))
        .collect()
}

/// The mask of a child's row within its job's rows of a child table (`mclog` bits).
pub(super) fn mc_mask(mclog: u64) -> Constant<Bits<ADDR_W>> {
    Constant::new(((1u64 << mclog) - 1).into())
}
