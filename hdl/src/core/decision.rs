//! The decision stages' registers (`xstate`: PRED, DSEL, DECIDE), which overlap the front
//! end's take, PREP2, PARSE and LOOK of the next frame.
//!
//! - **LOOK → PRED** (`go`, `hand.rs`'s `lk_go`): the frame's fields, job entry index, slot
//!   copy and context (`xp_f`, `x_ji`, `x_cadr`, `x_c`), whether it is a JOIN (`x_join`:
//!   LOOK waits until its DECIDE), and whether an older frame's DECIDE completes beside
//!   this PRED (`xo_v`: it left LOOK while that one was in DSEL).
//! - **PRED** registers `Pred`'s conditions (`q_c`, the quota conditions, `q_partial`, the
//!   rows) and the decision's context for DSEL and DECIDE (`x_m`, `x_newbm`, the flags,
//!   `x_je`, `x_jep`), while LOOK registers the next frame's.
//! - **DSEL** copies the frame for DECIDE (`dx_*`), so that the next frame may leave LOOK.
//! - **DECIDE** completes (`dec_go`, `hand.rs`): the stages empty, a JOIN's wait ends, and
//!   a contribution past the session floor moves `high` (`hu_*`, to the session unit).
//!
//! Every output is a register, or a term of this block's registers only (`dec_v`, `qf`):
//! no input reaches an output in the same cycle. A scan visit's tick is the stages' `now`
//! (`scan_go`: PRED's age terms read `x_c.now`).

use crate::layout::{JOB_W, META_W};
use crate::ram::ADDR_W;
use fanin_proto::wire::PacketType;
use rust_hdl::prelude::*;

use super::states::{packet_type, Conds, Ctx, DecState, Fields};

/// The decision stages' registers (see the module documentation).
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
    /// A scan visit starts (its tick is `now`).
    pub scan_go: Signal<In, bool>,
    /// The tick.
    pub now: Signal<In, Bits<32>>,
    /// LOOK's frame's fields.
    pub look_f: Signal<In, Fields>,
    /// Its context.
    pub look_c: Signal<In, Ctx>,
    /// Its job entry index (the front end's `ji`).
    pub ji: Signal<In, Bits<8>>,
    /// Its slot copy (the front end's `cadr`).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// Its job entry (LOOK's).
    pub je: Signal<In, Bits<JOB_W>>,
    /// The entry's epoch.
    pub jep: Signal<In, Bits<32>>,
    /// The copy's metadata (`metaport.rs`).
    pub m: Signal<In, Bits<META_W>>,
    /// PRED's conditions for DSEL (`pred.rs`).
    pub c: Signal<In, Conds>,
    /// The quota is full (no busy-count update in flight).
    pub qf0: Signal<In, bool>,
    /// It is full after a busy copy more.
    pub qfp: Signal<In, bool>,
    /// It is full after a busy copy less.
    pub qfm: Signal<In, bool>,
    /// The merged bitmap is not the expected one.
    pub partial: Signal<In, bool>,
    /// The frame's payload rows.
    pub rows_p: Signal<In, Bits<16>>,
    /// The merged bitmap.
    pub newbm: Signal<In, Bits<64>>,
    /// The merged flags.
    pub mflags: Signal<In, Bits<8>>,
    /// The flags the copy keeps.
    pub sflags: Signal<In, Bits<8>>,
    /// The copy's payload rows.
    pub rows_m: Signal<In, Bits<16>>,
    /// DECIDE adds a busy copy (`loads.rs`).
    pub dbi: Signal<In, bool>,
    /// DECIDE removes a busy copy.
    pub dbd: Signal<In, bool>,
    /// DECIDE's contribution moves the session floor (`dsel.rs`).
    pub hup: Signal<In, bool>,
    /// The stages' state.
    pub xstate_q: Signal<Out, DecState>,
    /// An older frame's DECIDE runs beside PRED.
    pub xo_v_q: Signal<Out, bool>,
    /// A JOIN is in the stages.
    pub x_join_q: Signal<Out, bool>,
    /// DECIDE holds a frame: the newest one, or an older one beside PRED.
    pub dec_v: Signal<Out, bool>,
    /// The quota condition for DSEL, for the busy-count update in flight.
    pub qf: Signal<Out, bool>,
    /// PRED's and DSEL's frame: fields.
    pub xp_f_q: Signal<Out, Fields>,
    /// Its job entry index.
    pub x_ji_q: Signal<Out, Bits<8>>,
    /// Its slot copy.
    pub x_cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// Its context.
    pub x_c_q: Signal<Out, Ctx>,
    /// The copy's metadata (PRED).
    pub x_m_q: Signal<Out, Bits<META_W>>,
    /// The merged bitmap.
    pub x_newbm_q: Signal<Out, Bits<64>>,
    /// The merged flags.
    pub x_mflags_q: Signal<Out, Bits<8>>,
    /// The flags the copy keeps.
    pub x_sflags_q: Signal<Out, Bits<8>>,
    /// The copy's payload rows.
    pub x_rows_m_q: Signal<Out, Bits<16>>,
    /// The job entry.
    pub x_je_q: Signal<Out, Bits<JOB_W>>,
    /// Its epoch.
    pub x_jep_q: Signal<Out, Bits<32>>,
    /// PRED's conditions for DSEL.
    pub q_c_q: Signal<Out, Conds>,
    /// The merged bitmap is not the expected one.
    pub q_partial_q: Signal<Out, bool>,
    /// The frame's payload rows.
    pub q_rows_q: Signal<Out, Bits<16>>,
    /// It has at most one.
    pub q_rle1_q: Signal<Out, bool>,
    /// DECIDE's frame: fields.
    pub dx_f_q: Signal<Out, Fields>,
    /// Its job entry index.
    pub dx_ji_q: Signal<Out, Bits<8>>,
    /// Its slot copy.
    pub dx_cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// Its context.
    pub dx_c_q: Signal<Out, Ctx>,
    /// `high` moves on (to the session unit).
    pub hu_v_q: Signal<Out, bool>,
    /// For this entry.
    pub hu_j_q: Signal<Out, Bits<8>>,
    /// To this block.
    pub hu_b_q: Signal<Out, Bits<32>>,
    xstate: DFF<DecState>,
    xo_v: DFF<bool>,
    x_join: DFF<bool>,
    xp_f: DFF<Fields>,
    x_ji: DFF<Bits<8>>,
    x_cadr: DFF<Bits<ADDR_W>>,
    x_c: DFF<Ctx>,
    x_m: DFF<Bits<META_W>>,
    x_newbm: DFF<Bits<64>>,
    x_mflags: DFF<Bits<8>>,
    x_sflags: DFF<Bits<8>>,
    x_rows_m: DFF<Bits<16>>,
    x_je: DFF<Bits<JOB_W>>,
    x_jep: DFF<Bits<32>>,
    q_c: DFF<Conds>,
    q_qfull: DFF<bool>,
    q_qf_p: DFF<bool>,
    q_qf_m: DFF<bool>,
    q_bi: DFF<bool>,
    q_bd: DFF<bool>,
    q_partial: DFF<bool>,
    q_rows: DFF<Bits<16>>,
    q_rle1: DFF<bool>,
    dx_f: DFF<Fields>,
    dx_ji: DFF<Bits<8>>,
    dx_cadr: DFF<Bits<ADDR_W>>,
    dx_c: DFF<Ctx>,
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
            scan_go: Default::default(),
            now: Default::default(),
            look_f: Default::default(),
            look_c: Default::default(),
            ji: Default::default(),
            cadr: Default::default(),
            je: Default::default(),
            jep: Default::default(),
            m: Default::default(),
            c: Default::default(),
            qf0: Default::default(),
            qfp: Default::default(),
            qfm: Default::default(),
            partial: Default::default(),
            rows_p: Default::default(),
            newbm: Default::default(),
            mflags: Default::default(),
            sflags: Default::default(),
            rows_m: Default::default(),
            dbi: Default::default(),
            dbd: Default::default(),
            hup: Default::default(),
            xstate_q: Default::default(),
            xo_v_q: Default::default(),
            x_join_q: Default::default(),
            dec_v: Default::default(),
            qf: Default::default(),
            xp_f_q: Default::default(),
            x_ji_q: Default::default(),
            x_cadr_q: Default::default(),
            x_c_q: Default::default(),
            x_m_q: Default::default(),
            x_newbm_q: Default::default(),
            x_mflags_q: Default::default(),
            x_sflags_q: Default::default(),
            x_rows_m_q: Default::default(),
            x_je_q: Default::default(),
            x_jep_q: Default::default(),
            q_c_q: Default::default(),
            q_partial_q: Default::default(),
            q_rows_q: Default::default(),
            q_rle1_q: Default::default(),
            dx_f_q: Default::default(),
            dx_ji_q: Default::default(),
            dx_cadr_q: Default::default(),
            dx_c_q: Default::default(),
            hu_v_q: Default::default(),
            hu_j_q: Default::default(),
            hu_b_q: Default::default(),
            xstate: Default::default(),
            xo_v: Default::default(),
            x_join: Default::default(),
            xp_f: Default::default(),
            x_ji: Default::default(),
            x_cadr: Default::default(),
            x_c: Default::default(),
            x_m: Default::default(),
            x_newbm: Default::default(),
            x_mflags: Default::default(),
            x_sflags: Default::default(),
            x_rows_m: Default::default(),
            x_je: Default::default(),
            x_jep: Default::default(),
            q_c: Default::default(),
            q_qfull: Default::default(),
            q_qf_p: Default::default(),
            q_qf_m: Default::default(),
            q_bi: Default::default(),
            q_bd: Default::default(),
            q_partial: Default::default(),
            q_rows: Default::default(),
            q_rle1: Default::default(),
            dx_f: Default::default(),
            dx_ji: Default::default(),
            dx_cadr: Default::default(),
            dx_c: Default::default(),
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
            self, clock, xstate, xo_v, x_join, xp_f, x_ji, x_cadr, x_c, x_m, x_newbm, x_mflags,
            x_sflags, x_rows_m, x_je, x_jep, q_c, q_qfull, q_qf_p, q_qf_m, q_bi, q_bd, q_partial,
            q_rows, q_rle1, dx_f, dx_ji, dx_cadr, dx_c, hu_v, hu_j, hu_b
        );
        self.xstate_q.next = self.xstate.q.val();
        self.xo_v_q.next = self.xo_v.q.val();
        self.x_join_q.next = self.x_join.q.val();
        self.xp_f_q.next = self.xp_f.q.val();
        self.x_ji_q.next = self.x_ji.q.val();
        self.x_cadr_q.next = self.x_cadr.q.val();
        self.x_c_q.next = self.x_c.q.val();
        self.x_m_q.next = self.x_m.q.val();
        self.x_newbm_q.next = self.x_newbm.q.val();
        self.x_mflags_q.next = self.x_mflags.q.val();
        self.x_sflags_q.next = self.x_sflags.q.val();
        self.x_rows_m_q.next = self.x_rows_m.q.val();
        self.x_je_q.next = self.x_je.q.val();
        self.x_jep_q.next = self.x_jep.q.val();
        self.q_c_q.next = self.q_c.q.val();
        self.q_partial_q.next = self.q_partial.q.val();
        self.q_rows_q.next = self.q_rows.q.val();
        self.q_rle1_q.next = self.q_rle1.q.val();
        self.dx_f_q.next = self.dx_f.q.val();
        self.dx_ji_q.next = self.dx_ji.q.val();
        self.dx_cadr_q.next = self.dx_cadr.q.val();
        self.dx_c_q.next = self.dx_c.q.val();
        self.hu_v_q.next = self.hu_v.q.val();
        self.hu_j_q.next = self.hu_j.q.val();
        self.hu_b_q.next = self.hu_b.q.val();
        self.dec_v.next = (self.xstate.q.val() == DecState::Decide) | self.xo_v.q.val();
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
            if self.dx_f.q.val().ptype == self.pt_join.val() {
                self.x_join.d.next = false;
            }
            // A contribution past the session floor: `high` moves on (two cycles on).
            self.hu_v.d.next = self.hup.val();
            self.hu_j.d.next = self.dx_ji.q.val();
            self.hu_b.d.next = self.dx_f.q.val().block;
            self.xstate.d.next = DecState::Idle;
        }
        match self.xstate.q.val() {
            DecState::Pred => {
                // PRED: the decision's conditions on the copy's metadata, the packet and the
                // job entry, registered (the metadata read stays on the same address).
                self.q_c.d.next = self.c.val();
                self.q_qfull.d.next = self.qf0.val();
                self.q_qf_p.d.next = self.qfp.val();
                self.q_qf_m.d.next = self.qfm.val();
                // An older frame's DECIDE beside this PRED (it completes now) changes the
                // busy count of its job by `dbi`/`dbd`: DSEL picks the matching condition.
                self.q_bi.d.next =
                    self.xo_v.q.val() & self.dbi.val() & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.q_bd.d.next =
                    self.xo_v.q.val() & self.dbd.val() & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.q_partial.d.next = self.partial.val();
                self.q_rows.d.next = self.rows_p.val();
                self.q_rle1.d.next = self.rows_p.val() <= 1;
                self.xstate.d.next = DecState::DSel;
                // The decision's context, copied for DSEL and DECIDE (the frame's fields
                // were copied when it left LOOK): LOOK registers the next frame's meanwhile.
                self.x_m.d.next = self.m.val();
                self.x_newbm.d.next = self.newbm.val();
                self.x_mflags.d.next = self.mflags.val();
                self.x_sflags.d.next = self.sflags.val();
                self.x_rows_m.d.next = self.rows_m.val();
                self.x_je.d.next = self.je.val();
                self.x_jep.d.next = self.jep.val();
            }
            DecState::DSel => {
                // DSEL: the branch (`dsel.rs`). DECIDE's copy of the frame's fields: the
                // next frame may leave LOOK now.
                self.xstate.d.next = DecState::Decide;
                self.dx_f.d.next = self.xp_f.q.val();
                self.dx_ji.d.next = self.x_ji.q.val();
                self.dx_cadr.d.next = self.x_cadr.q.val();
                self.dx_c.d.next = self.x_c.q.val();
            }
            _ => {}
        }
        if self.scan_go.val() {
            self.x_c.d.next.now = self.now.val();
        }
        // LOOK's frame moves to PRED.
        self.xo_v.d.next = false;
        if self.go.val() {
            self.x_join.d.next = self.look_f.val().ptype == self.pt_join.val();
            self.xstate.d.next = DecState::Pred;
            self.xo_v.d.next = self.xstate.q.val() == DecState::DSel;
            self.xp_f.d.next = self.look_f.val();
            self.x_ji.d.next = self.ji.val();
            self.x_cadr.d.next = self.cadr.val();
            self.x_c.d.next = self.look_c.val();
        }
        if self.rst.val() {
            self.xstate.d.next = DecState::Idle;
            self.xo_v.d.next = false;
            self.x_join.d.next = false;
            self.hu_v.d.next = false;
        }
    }
}
