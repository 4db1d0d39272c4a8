//! A minimal cycle driver for rust-hdl native simulation of sub-blocks in tests.

use rust_hdl::prelude::*;

/// Propagates combinational changes until the block is stable.
pub fn settle<B: Block>(b: &mut B) {
    for _ in 0..10_000 {
        b.update_all();
        if !b.has_changed() {
            return;
        }
    }
    panic!("combinational logic did not settle (loop?)");
}

/// One rising clock edge on `clock` (the caller sets inputs before, reads outputs after).
pub fn tick<B: Block>(b: &mut B, clock: impl Fn(&mut B) -> &mut Signal<In, Clock>) {
    clock(b).next = Clock { clk: true };
    settle(b);
    clock(b).next = Clock { clk: false };
    settle(b);
}
