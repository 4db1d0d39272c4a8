//! The overflow bit of every slot copy (`ovram`), kept for the back end: the tag of each
//! RMW row follows the Acc's pipeline (`t1`..`t4`; the copy's bit is read at `t3`); at
//! stage 4, where the Acc reports the row's saturation (`sat`), it is ORed into the copy's
//! bit (the first row of a start clears it) and written back. The decision never needs
//! the bit; frames built from slot rows OR it into their flags when pushed.
//!
//! Every output is a register, or a function of this block's registers and its RAM's read
//! data only (`rd`: the bit read, the write of the cycle before forwarded; `prev`: the
//! bit before the stage-4 row's saturation): no input reaches an output in the same cycle
//! (issue #24: cut only where a stage's outputs are registered). The engine ORs the Acc's
//! saturation into `prev` itself (`ov_new`), as this block does for its write.

use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

/// The slot copies' overflow bits (see the module documentation).
#[derive(LogicBlock)]
pub struct OvfBits {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// An RMW row is issued to the Acc this cycle (its tag enters `t1`).
    pub tg_v: Signal<In, bool>,
    /// The row is its item's first.
    pub tg_first: Signal<In, bool>,
    /// The item starts its copy (the Acc's `OP_START`: the first row clears the bit).
    pub start: Signal<In, bool>,
    /// The back end's slot copy (the row's tag; read when no tag is at stage 3).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// The Acc's saturation of the row at its stage 4.
    pub sat: Signal<In, bool>,
    /// A tag at stage 3.
    pub t3_v_q: Signal<Out, bool>,
    /// The stage-3 tag's copy.
    pub t3_a_q: Signal<Out, Bits<ADDR_W>>,
    /// A tag at stage 4.
    pub t4_v_q: Signal<Out, bool>,
    /// The stage-4 tag's copy.
    pub t4_a_q: Signal<Out, Bits<ADDR_W>>,
    /// The copy whose bit `rd` is (the read address of the cycle before).
    pub or_a_q: Signal<Out, Bits<ADDR_W>>,
    /// The bit of copy `or_a_q`.
    pub rd: Signal<Out, bool>,
    /// The stage-4 copy's bit before that row's saturation.
    pub prev: Signal<Out, bool>,
    ovram: FaninRam<2>,
    t1_v: DFF<bool>,
    t1_first: DFF<bool>,
    t1_start: DFF<bool>,
    t1_a: DFF<Bits<ADDR_W>>,
    t2_v: DFF<bool>,
    t2_first: DFF<bool>,
    t2_start: DFF<bool>,
    t2_a: DFF<Bits<ADDR_W>>,
    t3_v: DFF<bool>,
    t3_first: DFF<bool>,
    t3_start: DFF<bool>,
    t3_a: DFF<Bits<ADDR_W>>,
    t4_v: DFF<bool>,
    t4_first: DFF<bool>,
    t4_start: DFF<bool>,
    t4_a: DFF<Bits<ADDR_W>>,
    // The bit of the item's rows so far; the last write's bit, and whether it went to the
    // copy read in the same cycle (`ow_hit`, compared a cycle ahead: forwarded to the read).
    ov_run: DFF<bool>,
    ow_hit: DFF<bool>,
    ow_val: DFF<bool>,
    or_a: DFF<Bits<ADDR_W>>,
    ov_ra: Signal<Local, Bits<ADDR_W>>,
    ov_rd: Signal<Local, bool>,
    ov_prev: Signal<Local, bool>,
    ov_new: Signal<Local, bool>,
}

impl OvfBits {
    /// The bits of `copies` slot copies.
    pub fn new(copies: usize) -> Self {
        Self {
            clock: Default::default(),
            tg_v: Default::default(),
            tg_first: Default::default(),
            start: Default::default(),
            cadr: Default::default(),
            sat: Default::default(),
            t3_v_q: Default::default(),
            t3_a_q: Default::default(),
            t4_v_q: Default::default(),
            t4_a_q: Default::default(),
            or_a_q: Default::default(),
            rd: Default::default(),
            prev: Default::default(),
            ovram: FaninRam::new(copies, 1),
            t1_v: Default::default(),
            t1_first: Default::default(),
            t1_start: Default::default(),
            t1_a: Default::default(),
            t2_v: Default::default(),
            t2_first: Default::default(),
            t2_start: Default::default(),
            t2_a: Default::default(),
            t3_v: Default::default(),
            t3_first: Default::default(),
            t3_start: Default::default(),
            t3_a: Default::default(),
            t4_v: Default::default(),
            t4_first: Default::default(),
            t4_start: Default::default(),
            t4_a: Default::default(),
            ov_run: Default::default(),
            ow_hit: Default::default(),
            ow_val: Default::default(),
            or_a: Default::default(),
            ov_ra: Default::default(),
            ov_rd: Default::default(),
            ov_prev: Default::default(),
            ov_new: Default::default(),
        }
    }
}

impl Logic for OvfBits {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, t1_v, t1_first, t1_start, t1_a, t2_v, t2_first, t2_start, t2_a, t3_v,
            t3_first, t3_start, t3_a, t4_v, t4_first, t4_start, t4_a, ov_run, ow_hit, ow_val, or_a
        );
        self.ovram.clock.next = self.clock.val();
        // Read: the stage-3 tag's copy, else the back end's; the write of the cycle before
        // forwarded.
        if self.t3_v.q.val() {
            self.ov_ra.next = self.t3_a.q.val();
        } else {
            self.ov_ra.next = self.cadr.val();
        }
        self.ovram.raddr.next = self.ov_ra.val();
        self.or_a.d.next = self.ov_ra.val();
        // The stage-4 write of this cycle is to the copy read in this cycle: its bit is
        // forwarded to the read data next cycle (the compare registered, off the read's
        // path to the pushed header).
        self.ow_hit.d.next = self.t4_v.q.val() & (self.t4_a.q.val() == self.ov_ra.val());
        if self.ow_hit.q.val() {
            self.ov_rd.next = self.ow_val.q.val();
        } else {
            self.ov_rd.next = self.ovram.rdata.val().get_bit(0);
        }
        if self.t4_first.q.val() {
            self.ov_prev.next = !self.t4_start.q.val() & self.ov_rd.val();
        } else {
            self.ov_prev.next = self.ov_run.q.val();
        }
        self.ov_new.next = self.ov_prev.val() | self.sat.val();
        // Outputs: registers, and the bits above (registers and the RAM's read data).
        self.t3_v_q.next = self.t3_v.q.val();
        self.t3_a_q.next = self.t3_a.q.val();
        self.t4_v_q.next = self.t4_v.q.val();
        self.t4_a_q.next = self.t4_a.q.val();
        self.or_a_q.next = self.or_a.q.val();
        self.rd.next = self.ov_rd.val();
        self.prev.next = self.ov_prev.val();
        // The tags, one stage per cycle; stage 4 writes the copy's bit.
        self.t1_v.d.next = self.tg_v.val();
        self.t1_first.d.next = self.tg_first.val();
        self.t1_start.d.next = self.start.val();
        self.t1_a.d.next = self.cadr.val();
        self.t2_v.d.next = self.t1_v.q.val();
        self.t2_first.d.next = self.t1_first.q.val();
        self.t2_start.d.next = self.t1_start.q.val();
        self.t2_a.d.next = self.t1_a.q.val();
        self.t3_v.d.next = self.t2_v.q.val();
        self.t3_first.d.next = self.t2_first.q.val();
        self.t3_start.d.next = self.t2_start.q.val();
        self.t3_a.d.next = self.t2_a.q.val();
        self.t4_v.d.next = self.t3_v.q.val();
        self.t4_first.d.next = self.t3_first.q.val();
        self.t4_start.d.next = self.t3_start.q.val();
        self.t4_a.d.next = self.t3_a.q.val();
        self.ovram.waddr.next = self.t4_a.q.val();
        self.ovram.wdata.next = bit_cast::<2, 1>(self.ov_new.val().into());
        self.ovram.we.next = 0.into();
        if self.t4_v.q.val() {
            self.ovram.we.next = 1.into();
            self.ow_val.d.next = self.ov_new.val();
            self.ov_run.d.next = self.ov_new.val();
        }
    }
}
