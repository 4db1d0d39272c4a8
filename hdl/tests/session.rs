//! rust-hdl native simulation of the root's session unit on its own (`core::session`):
//! driven through its ports as the engine drives it, checked against the model's rules
//! (`Switch::join`, `open_session`, `next_base`).

use fanin_hdl::core::session::SessionUnit;
use fanin_hdl::core::Fields;
use fanin_hdl::sim::{settle, tick};
use rust_hdl::prelude::*;

mod common;

struct Bench {
    u: SessionUnit,
}

impl Bench {
    fn new() -> Self {
        let mut u = SessionUnit::new(&common::tiny());
        u.connect_all();
        let mut b = Self { u };
        b.idle_inputs();
        b.u.rst.next = true;
        b.step();
        b.u.rst.next = false;
        b
    }

    fn idle_inputs(&mut self) {
        self.u.join_go.next = false;
        self.u.hu_v.next = false;
        self.u.reset.next = false;
        self.u.ac_take.next = false;
    }

    fn step(&mut self) {
        settle(&mut self.u);
        tick(&mut self.u, |u| &mut u.clock);
        self.idle_inputs();
    }

    /// A job commit of entry `e` with `first_block` (slot count 4: `jcm` = 3).
    fn commit(&mut self, e: u64, first_block: u64) {
        for j in 0..2 {
            self.u.jcm[j].next = 3.into();
        }
        self.u.reset.next = true;
        self.u.reset_entry.next = e.into();
        self.u.reset_high.next = (first_block - 1).into();
        self.step();
    }

    /// DECIDE hands over a JOIN of `rank` (the entry's ranks: `ranks`) with `nonce`.
    fn join(&mut self, e: u64, rank: u32, ranks: u64, nonce: u64) {
        assert!(!self.u.busy.val(), "JOIN handed to a busy unit");
        self.u.join_go.next = true;
        self.u.join_entry.next = e.into();
        self.u.join_f.next = Fields {
            bitmap: (1u64 << rank).into(),
            block: nonce.into(),
            ..Default::default()
        };
        self.u.join_ranks.next = ranks.into();
        self.u.join_port.next = 1.into();
        self.step();
    }

    /// Runs until the unit is idle; returns the ACCEPTs it offered (block, rank bit, nonce),
    /// each taken one cycle after it is offered.
    fn drain(&mut self) -> Vec<(u64, u64, u64)> {
        let mut out = Vec::new();
        for _ in 0..2000 {
            settle(&mut self.u);
            if !self.u.busy.val() {
                return out;
            }
            if self.u.ac_ready.val() {
                let ac = self.u.ac.val();
                out.push((ac.block.to_u64(), ac.bm.to_u64(), ac.nonce.to_u64()));
                self.u.ac_take.next = true;
            }
            self.step();
        }
        panic!("session unit still busy after 2000 cycles");
    }

    /// DECIDE's `high` update for entry `e`, block `b` (registered, as `hu_*` are).
    fn high(&mut self, e: u64, b: u64) {
        self.u.hu_v.next = true;
        self.u.hu_j.next = e.into();
        self.u.hu_b.next = b.into();
        self.step();
    }
}

/// The first session opens at `first_block`, every member is answered in rank order with
/// its own nonce, and a repeated JOIN of the open session is answered again; a later session
/// opens at `next_base(high)`, where `high` followed DECIDE's updates, including two of one
/// entry two cycles apart (the second reads the first's write forwarded) and an older block
/// after a newer one (no effect).
#[test]
fn sessions_open_at_first_block_then_next_base_of_high() {
    let mut b = Bench::new();
    b.commit(1, 100);
    // Ranks 0 and 2 of entry 1: the first JOIN waits, the second opens.
    b.join(1, 2, 0b101, 0x22);
    assert_eq!(b.drain(), vec![], "one of two ranks joined: no ACCEPT yet");
    b.join(1, 0, 0b101, 0x11);
    assert_eq!(
        b.drain(),
        vec![(100, 0b001, 0x11), (100, 0b100, 0x22)],
        "the session opens at first_block, ACCEPTs in rank order with each member's nonce"
    );
    assert!(b.u.ss_open[1].val() && !b.u.ss_open[0].val());
    assert_eq!(b.u.ss_base[1].val().to_u64(), 100);
    // A repeat of rank 2's JOIN (same nonce): answered again, nothing else changes.
    b.join(1, 2, 0b101, 0x22);
    assert_eq!(b.drain(), vec![(100, 0b100, 0x22)]);
    // `high`: 200, then 150 two cycles later (forwarded: stays 200), then 120.
    b.high(1, 200);
    b.step();
    b.high(1, 150);
    b.step();
    b.step();
    b.high(1, 120);
    for _ in 0..4 {
        b.step();
    }
    // A new session: both ranks join again with new nonces.
    b.join(1, 0, 0b101, 0x33);
    assert_eq!(b.drain(), vec![]);
    b.join(1, 2, 0b101, 0x44);
    // next_base(200) with 4 slots: the first multiple of 8 at least 16 past it, 216.
    let next_base = |high: u64, slots: u64| (high + 4 * slots) & !(2 * slots - 1);
    assert_eq!(next_base(200, 4), 216);
    assert_eq!(
        b.drain(),
        vec![(216, 0b001, 0x33), (216, 0b100, 0x44)],
        "the second session opens at next_base(high = 200)"
    );
    // A job commit of the entry: its session is gone.
    b.commit(1, 7);
    settle(&mut b.u);
    assert!(!b.u.ss_open[1].val());
    b.join(1, 0, 0b1, 0x55);
    assert_eq!(
        b.drain(),
        vec![(7, 0b1, 0x55)],
        "after a commit: first_block again"
    );
}
