//! The decision stages' control (`xstate`: PRED, DSEL, DECIDE), which overlaps the front
//! end's take, PREP2, PARSE and LOOK of the next frame.
//!
//! - **LOOK → PRED** (`go`, `hand.rs`' `lk_go`): the frame's job entry index and slot copy
//!   (`x_ji`, `x_cadr`), whether it is a JOIN (`x_join`: LOOK waits until its DECIDE), and
//!   whether an older frame's DECIDE completes beside this PRED (`xo_v`: the frame left
//!   LOOK while that one was in DSEL).
//! - **PRED** registers `Pred`'s quota conditions (`qf0`, `qfp`, `qfm`) and which of them
//!   DSEL reads (`qf`): an older frame's DECIDE beside PRED changes its job's busy count by
//!   `dbi`/`dbd`, which the count LOOK latched does not hold, and it matters only for a
//!   frame of the same job entry (`q_bi`, `q_bd`).
//! - **DSEL** copies the indices for DECIDE (`dx_ji`, `dx_cadr`), so that the next frame
//!   may leave LOOK.
//! - **DECIDE** completes (`dec_go`, `hand.rs`): the stages empty, a JOIN's own DECIDE ends
//!   the wait, and a contribution past the session floor moves `high` on (`hu_*`, to the
//!   session unit, two cycles on).
//!
//! The frame's wide copies (its fields and context, PRED's conditions and context) stay
//! in the engine, loaded when `xstate_q` says: a block's inputs are copied every cycle in
//! the Verilated model, and this block's are narrow (docs/rtl.md, "simspeed").
//!
//! Every output is a register, or a term of this block's registers only (`qf`): no input
//! reaches an output in the same cycle (issue #24: cut only where a stage's outputs are
//! registered).

use crate::ram::ADDR_W;
use fanin_proto::wire::PacketType;
use rust_hdl::prelude::*;

use super::states::{packet_type, DecState};

/// The decision stages' control (see the module documentation).
#[derive(LogicBlock)]
pub struct Decision {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (the stages empty).
    pub rst: Signal<In, bool>,
    /// LOOK's frame moves to PRED.
    pub go: Signal<In, bool>,
    /// DECIDE completes (its item is staged).
    pub dec_go: Signal<In, bool>,
    /// LOOK's frame's packet type.
    pub look_ptype: Signal<In, Bits<8>>,
    /// LOOK's frame's job entry index (the front end's `ji`).
    pub ji: Signal<In, Bits<8>>,
    /// Its slot copy (the front end's `cadr`).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// PRED: the quota is full with the busy count as LOOK latched it (`pred.rs`).
    pub qf0: Signal<In, bool>,
    /// It is full with a busy copy more.
    pub qfp: Signal<In, bool>,
    /// It is full with a busy copy less.
    pub qfm: Signal<In, bool>,
    /// DECIDE adds a busy copy (`loads.rs`).
    pub dbi: Signal<In, bool>,
    /// DECIDE removes a busy copy.
    pub dbd: Signal<In, bool>,
    /// DECIDE's contribution moves the session floor on (`dsel.rs`).
    pub hup: Signal<In, bool>,
    /// DECIDE's frame's packet type (the engine's `dx_f`).
    pub dx_ptype: Signal<In, Bits<8>>,
    /// DECIDE's frame's block.
    pub dx_block: Signal<In, Bits<32>>,
    /// The stages' state.
    pub xstate_q: Signal<Out, DecState>,
    /// An older frame's DECIDE runs beside PRED.
    pub xo_v_q: Signal<Out, bool>,
    /// A JOIN is in the stages.
    pub x_join_q: Signal<Out, bool>,
    /// PRED's and DSEL's frame: its job entry index.
    pub x_ji_q: Signal<Out, Bits<8>>,
    /// Its slot copy.
    pub x_cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// DECIDE's frame: its job entry index.
    pub dx_ji_q: Signal<Out, Bits<8>>,
    /// Its slot copy.
    pub dx_cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// The quota condition for DSEL, for the busy-count update in flight.
    pub qf: Signal<Out, bool>,
    /// `high` moves on (to the session unit).
    pub hu_v_q: Signal<Out, bool>,
    /// For this entry.
    pub hu_j_q: Signal<Out, Bits<8>>,
    /// To this block.
    pub hu_b_q: Signal<Out, Bits<32>>,
    xstate: DFF<DecState>,
    xo_v: DFF<bool>,
    x_join: DFF<bool>,
    x_ji: DFF<Bits<8>>,
    x_cadr: DFF<Bits<ADDR_W>>,
    q_qfull: DFF<bool>,
    q_qf_p: DFF<bool>,
    q_qf_m: DFF<bool>,
    q_bi: DFF<bool>,
    q_bd: DFF<bool>,
    dx_ji: DFF<Bits<8>>,
    dx_cadr: DFF<Bits<ADDR_W>>,
    hu_v: DFF<bool>,
    hu_j: DFF<Bits<8>>,
    hu_b: DFF<Bits<32>>,
    pt_join: Constant<Bits<8>>,
}

impl Default for Decision {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            go: Default::default(),
            dec_go: Default::default(),
            look_ptype: Default::default(),
            ji: Default::default(),
            cadr: Default::default(),
            qf0: Default::default(),
            qfp: Default::default(),
            qfm: Default::default(),
            dbi: Default::default(),
            dbd: Default::default(),
            hup: Default::default(),
            dx_ptype: Default::default(),
            dx_block: Default::default(),
            xstate_q: Default::default(),
            xo_v_q: Default::default(),
            x_join_q: Default::default(),
            x_ji_q: Default::default(),
            x_cadr_q: Default::default(),
            dx_ji_q: Default::default(),
            dx_cadr_q: Default::default(),
            qf: Default::default(),
            hu_v_q: Default::default(),
            hu_j_q: Default::default(),
            hu_b_q: Default::default(),
            xstate: Default::default(),
            xo_v: Default::default(),
            x_join: Default::default(),
            x_ji: Default::default(),
            x_cadr: Default::default(),
            q_qfull: Default::default(),
            q_qf_p: Default::default(),
            q_qf_m: Default::default(),
            q_bi: Default::default(),
            q_bd: Default::default(),
            dx_ji: Default::default(),
            dx_cadr: Default::default(),
            hu_v: Default::default(),
            hu_j: Default::default(),
            hu_b: Default::default(),
            pt_join: packet_type(PacketType::Join),
        }
    }
}

impl Logic for Decision {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, xstate, xo_v, x_join, x_ji, x_cadr, q_qfull, q_qf_p, q_qf_m, q_bi, q_bd,
            dx_ji, dx_cadr, hu_v, hu_j, hu_b
        );
        self.xstate_q.next = self.xstate.q.val();
        self.xo_v_q.next = self.xo_v.q.val();
        self.x_join_q.next = self.x_join.q.val();
        self.x_ji_q.next = self.x_ji.q.val();
        self.x_cadr_q.next = self.x_cadr.q.val();
        self.dx_ji_q.next = self.dx_ji.q.val();
        self.dx_cadr_q.next = self.dx_cadr.q.val();
        self.hu_v_q.next = self.hu_v.q.val();
        self.hu_j_q.next = self.hu_j.q.val();
        self.hu_b_q.next = self.hu_b.q.val();
        // The quota condition for DSEL (see `q_bi`).
        if self.q_bi.q.val() {
            self.qf.next = self.q_qf_p.q.val();
        } else if self.q_bd.q.val() {
            self.qf.next = self.q_qf_m.q.val();
        } else {
            self.qf.next = self.q_qfull.q.val();
        }
        // DECIDE completes (before PRED and DSEL below: with an older frame in DECIDE while
        // the next one is in PRED, `xo_v`, PRED's `xstate` wins).
        self.hu_v.d.next = false;
        if self.dec_go.val() {
            // (Only the JOIN's own DECIDE ends the wait: with two frames in the decision
            // stages, the older one's DECIDE comes first.)
            if self.dx_ptype.val() == self.pt_join.val() {
                self.x_join.d.next = false;
            }
            self.hu_v.d.next = self.hup.val();
            self.hu_j.d.next = self.dx_ji.q.val();
            self.hu_b.d.next = self.dx_block.val();
            self.xstate.d.next = DecState::Idle;
        }
        match self.xstate.q.val() {
            DecState::Pred => {
                self.q_qfull.d.next = self.qf0.val();
                self.q_qf_p.d.next = self.qfp.val();
                self.q_qf_m.d.next = self.qfm.val();
                // An older frame's DECIDE beside this PRED (it completes now) changes the
                // busy count of its job by `dbi`/`dbd`: DSEL picks the matching condition.
                self.q_bi.d.next =
                    self.xo_v.q.val() & self.dbi.val() & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.q_bd.d.next =
                    self.xo_v.q.val() & self.dbd.val() & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.xstate.d.next = DecState::DSel;
            }
            DecState::DSel => {
                self.xstate.d.next = DecState::Decide;
                self.dx_ji.d.next = self.x_ji.q.val();
                self.dx_cadr.d.next = self.x_cadr.q.val();
            }
            _ => {}
        }
        // LOOK's frame moves to PRED.
        self.xo_v.d.next = false;
        if self.go.val() {
            self.x_join.d.next = self.look_ptype.val() == self.pt_join.val();
            self.xstate.d.next = DecState::Pred;
            self.xo_v.d.next = self.xstate.q.val() == DecState::DSel;
            self.x_ji.d.next = self.ji.val();
            self.x_cadr.d.next = self.cadr.val();
        }
        if self.rst.val() {
            self.xstate.d.next = DecState::Idle;
            self.xo_v.d.next = false;
            self.x_join.d.next = false;
            self.hu_v.d.next = false;
        }
    }
}
