//! The hand-overs between the engine's stages in the cycle they happen: the back end takes
//! its next item (`b_free`: it is idle, or its item finishes, `b_done`), the item stage
//! hands its item to it (`sq_ld`), and LOOK's frame moves to PRED (`lk_go`; `lk_free`: LOOK
//! can take PARSE's next frame).
//!
//! A leaf with no registers, fed only by registers and sub-block outputs: the front end
//! (`front.rs`) reads `b_free` and `lk_free` to decide its own hand-overs in the same
//! cycle. Computed in the engine, they would be locals of the engine's `always` block, and
//! a block fed by them and read by the engine a combinational loop to Verilator
//! (UNOPTFLAT, rtl.md).

use rust_hdl::prelude::*;

use super::states::DecState;

/// The hand-over terms (see the module documentation).
#[derive(LogicBlock, Default)]
pub struct Hand {
    /// The back end finishes its item regardless of its ports (`back.rs`).
    pub done_now: Signal<In, bool>,
    /// It finishes its item if its destination ports have room.
    pub done_if_room: Signal<In, bool>,
    /// The back end is idle.
    pub b_idle: Signal<In, bool>,
    /// The back end's destination ports.
    pub pmask: Signal<In, Bits<8>>,
    /// Each egress port has room for a maximum frame.
    pub tx_rdy: Vec<Signal<In, bool>>,
    /// The item stage holds an item.
    pub item_v: Signal<In, bool>,
    /// Its item is ready for the back end (a multicast item's first round scanned).
    pub item_psd: Signal<In, bool>,
    /// LOOK holds a frame.
    pub look_v: Signal<In, bool>,
    /// LOOK's frame is for another slot copy than DSEL's (`look.rs`).
    pub look_ne: Signal<In, bool>,
    /// LOOK's frame has waited a cycle.
    pub look_old: Signal<In, bool>,
    /// A JOIN is in the decision stages.
    pub x_join: Signal<In, bool>,
    /// The session unit works.
    pub sess_busy: Signal<In, bool>,
    /// The decision stages' state.
    pub xstate: Signal<In, DecState>,
    /// Every destination port of the back end's item has room.
    pub all_rdy: Signal<Out, bool>,
    /// The back end's item finishes this cycle.
    pub b_done: Signal<Out, bool>,
    /// The back end takes an item this cycle if one is handed over.
    pub b_free: Signal<Out, bool>,
    /// The item stage hands its item to the back end.
    pub sq_ld: Signal<Out, bool>,
    /// LOOK's frame moves to PRED.
    pub lk_go: Signal<Out, bool>,
    /// LOOK is free or its frame leaves.
    pub lk_free: Signal<Out, bool>,
}

impl Hand {
    /// The terms for `ports` egress ports.
    pub fn new(ports: usize) -> Self {
        Self {
            tx_rdy: super::util::n(ports),
            ..Default::default()
        }
    }
}

impl Logic for Hand {
    #[hdl_gen]
    fn update(&mut self) {
        self.all_rdy.next = true;
        for p in 0..self.tx_rdy.len() {
            if self.pmask.val().get_bit(p) & !self.tx_rdy[p].val() {
                self.all_rdy.next = false;
            }
        }
        // The item finishes when the back end says so, or when it may and its destination
        // ports have room (`back.rs`).
        self.b_done.next = self.done_now.val() | (self.done_if_room.val() & self.all_rdy.val());
        self.b_free.next = self.b_idle.val() | self.b_done.val();
        self.sq_ld.next = self.item_v.val() & self.b_free.val() & self.item_psd.val();
        // LOOK's frame moves to PRED when the decision stages are empty or DECIDE completes
        // in this cycle (the item stage is empty or hands its item over); a frame for
        // another slot copy than the one in DSEL may also leave while it is in DSEL, after
        // a cycle in LOOK, if the item stage is free in the next cycle: that DECIDE then
        // completes beside the next PRED (`xo_v`). Not while a JOIN is in the decision
        // stages or the session unit works: a session that opens changes the job's entry
        // and state before the next decision.
        self.lk_go.next = self.look_v.val()
            & !self.x_join.val()
            & !self.sess_busy.val()
            & ((self.xstate.val() == DecState::Idle)
                | (((self.xstate.val() == DecState::Decide)
                    | ((self.xstate.val() == DecState::DSel)
                        & self.look_ne.val()
                        & self.look_old.val()))
                    & (!self.item_v.val() | self.sq_ld.val())));
        self.lk_free.next = !self.look_v.val() | self.lk_go.val();
    }
}
