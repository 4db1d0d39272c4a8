//! PRED's conditions, as terms of registers: the slot copy's state and how the frame
//! relates to it (same block, subset/disjoint bitmaps, newer, stale), the job's quota
//! with the busy count as DECIDE leaves it, the copy's bitmap and flags after a merge and
//! both row counts, and the checks of the frame against its job and child entries (ranks,
//! child index and degree, source, the root's session floor, completion): `c`, a `Conds`.
//! The engine registers them in PRED (`q_c`, `q_qf*`; `mg`, a `Merged`, as `x_mg`).
//! The front end's timer scan visit reads the copy's state and age in SLAT and registers
//! its conditions (`s`, a `ScanConds`) in SPRED (`front.rs`).
//!
//! The quota conditions: every offset's comparison of the count LOOK latched (`bcur`,
//! 32-bit, wrapping as the sum would) against the quota is made from registers, and the
//! update in flight (`bcd`) and the copy's state only pick one: no adder between the
//! metadata read and the comparison. `qf0` is the count after this copy is reclaimed;
//! `qfp`/`qfm` with one more or one fewer busy copy (an update of the older frame's DECIDE
//! beside PRED, which `bcd` does not hold).
//!
//! A leaf with no registers, as `finish.rs`: its inputs are registers (the metadata
//! port's, the job-table RAM's read, LOOK's and PRED's), its outputs go to the engine.
//! The engine drives the inputs straight from those outputs and registers: through one of
//! its own locals (`m`, `sj`), Verilator lint reported UNOPTFLAT on the outputs (the
//! engine's one `always` block then both feeds and reads the leaf).

use crate::layout::{ChildWord, JobWord, MetaWord, CHILD_W};
use fanin_proto::model::CopyState;
use fanin_proto::wire::Flags;
use fanin_regs::layout::job;
use rust_hdl::prelude::*;

use super::states::{copy_state, flag, Conds, Fields, Merged, ScanConds};
use super::{JOB_W, META_W};

/// PRED's conditions (see the module documentation).
#[derive(LogicBlock)]
pub struct Pred {
    /// The copy's metadata (`metaport.rs`' `m`).
    pub m: Signal<In, Bits<META_W>>,
    /// The job entry read (the scan's: the one the copy was written under).
    pub sj: Signal<In, Bits<JOB_W>>,
    /// A timer scan visit (the copy's liveness against `sj`, not the frame's entry).
    pub e_scan: Signal<In, bool>,
    /// The frame's job entry (`x_ji`).
    pub x_ji: Signal<In, Bits<8>>,
    /// The frame's job entry's epoch (`jep`).
    pub jep: Signal<In, Bits<32>>,
    /// The frame's fields (`xp_f`).
    pub f: Signal<In, Fields>,
    /// The frame's (or the scan visit's) tick.
    pub now: Signal<In, Bits<32>>,
    /// The frame's job entry (`je`).
    pub je: Signal<In, Bits<JOB_W>>,
    /// The job's busy count LOOK latched.
    pub bcur: Signal<In, Bits<32>>,
    /// The busy-count update in flight then (bit 0: +1, bit 1: -1).
    pub bcd: Signal<In, Bits<2>>,
    /// Elements per row, as a mask (`c_rowmask`).
    pub rowmask: Signal<In, Bits<16>>,
    /// log2 of the elements per row (`c_rowlog`).
    pub rowlog: Signal<In, Bits<16>>,
    /// The frame's child entry (`chr`).
    pub chr: Signal<In, Bits<CHILD_W>>,
    /// The ranks below the children on the frame's ingress port (`pbr`).
    pub pbr: Signal<In, Bits<64>>,
    /// The root's open session's first block (`sbq`).
    pub sbq: Signal<In, Bits<32>>,
    /// The root has a session open (`soq`).
    pub soq: Signal<In, bool>,
    /// The frame's ingress port.
    pub sel: Signal<In, Bits<4>>,
    /// A slot's lanes (`c_lanes`).
    pub lanes: Signal<In, Bits<16>>,
    /// A scan visit's age of the copy's timer (`sage`, registered in SLAT).
    pub sage: Signal<In, Bits<32>>,
    /// A scan visit's ticks since the copy's last progress (`tage`, registered in SLAT).
    pub tage: Signal<In, Bits<32>>,
    /// The copy's state (Free unless it is live: written under the current epoch of its job entry).
    st: Signal<Local, Bits<3>>,
    /// The copy is busy (Aggregating or Emitted).
    busy_st: Signal<Local, bool>,
    /// The copy is not Free.
    same: Signal<Local, bool>,
    /// The copy holds the packet's block.
    samebl: Signal<Local, bool>,
    /// The packet's bitmap is a subset of the copy's.
    subset: Signal<Local, bool>,
    /// The packet's bitmap and the copy's are disjoint.
    disjoint: Signal<Local, bool>,
    /// The copy's block is newer than the packet's (serial arithmetic).
    newer_cb: Signal<Local, bool>,
    /// The packet's block is newer than the copy's.
    newer_bc: Signal<Local, bool>,
    /// Ticks since the copy's timer.
    pub age: Signal<Out, Bits<32>>,
    /// A timeout-mode copy past `flush_after + reclaim_after`.
    stale: Signal<Local, bool>,
    /// The job's quota is full with the busy count as it will be (see the module documentation).
    pub qf0: Signal<Out, bool>,
    /// `qf0` with one more busy copy.
    pub qfp: Signal<Out, bool>,
    /// `qf0` with one fewer busy copy.
    pub qfm: Signal<Out, bool>,
    /// The copy's metadata, its bitmap and flags after a merge, the rows (for DECIDE).
    pub mg: Signal<Out, Merged>,
    newbm: Signal<Local, Bits<64>>,
    mflags: Signal<Local, Bits<8>>,
    rows_p: Signal<Local, Bits<16>>,
    rows_m: Signal<Local, Bits<16>>,
    /// A scan visit's conditions (against `sj`, the entry the copy was written under).
    pub s: Signal<Out, ScanConds>,
    /// The decision's conditions for DSEL (`dsel.rs`).
    pub c: Signal<Out, Conds>,
    /// The frame carries BYPASS.
    byp: Signal<Local, bool>,
    /// The frame's block less the open session's first (its sign: before the session).
    ses_d: Signal<Local, Bits<32>>,
    m_st: Signal<Local, Bits<3>>,
    m_jidx: Signal<Local, Bits<8>>,
    m_block: Signal<Local, Bits<32>>,
    m_bitmap: Signal<Local, Bits<64>>,
    m_exp: Signal<Local, Bits<8>>,
    m_flags: Signal<Local, Bits<8>>,
    m_elem: Signal<Local, Bits<16>>,
    m_timer: Signal<Local, Bits<32>>,
    m_ep: Signal<Local, Bits<32>>,
    sj_ep: Signal<Local, Bits<32>>,
    live: Signal<Local, bool>,
    d_cb: Signal<Local, Bits<32>>,
    d_bc: Signal<Local, Bits<32>>,
    lim33: Signal<Local, Bits<33>>,
    ge_m3: Signal<Local, bool>,
    ge_m2: Signal<Local, bool>,
    ge_m1: Signal<Local, bool>,
    ge_0: Signal<Local, bool>,
    ge_p1: Signal<Local, bool>,
    ge_p2: Signal<Local, bool>,
    cs_free: Constant<Bits<3>>,
    cs_aggregating: Constant<Bits<3>>,
    cs_emitted: Constant<Bits<3>>,
    fl_exp_mismatch: Constant<Bits<8>>,
    fl_kept: Constant<Bits<8>>,
    fl_bypass: Constant<Bits<8>>,
    sc_ip_port: Constant<Bits<2>>,
}

impl Default for Pred {
    fn default() -> Self {
        Self {
            m: Default::default(),
            sj: Default::default(),
            e_scan: Default::default(),
            x_ji: Default::default(),
            jep: Default::default(),
            f: Default::default(),
            now: Default::default(),
            je: Default::default(),
            bcur: Default::default(),
            bcd: Default::default(),
            rowmask: Default::default(),
            rowlog: Default::default(),
            chr: Default::default(),
            pbr: Default::default(),
            sbq: Default::default(),
            soq: Default::default(),
            sel: Default::default(),
            lanes: Default::default(),
            sage: Default::default(),
            tage: Default::default(),
            st: Default::default(),
            busy_st: Default::default(),
            same: Default::default(),
            samebl: Default::default(),
            subset: Default::default(),
            disjoint: Default::default(),
            newer_cb: Default::default(),
            newer_bc: Default::default(),
            age: Default::default(),
            stale: Default::default(),
            qf0: Default::default(),
            qfp: Default::default(),
            qfm: Default::default(),
            mg: Default::default(),
            newbm: Default::default(),
            mflags: Default::default(),
            rows_p: Default::default(),
            rows_m: Default::default(),
            s: Default::default(),
            c: Default::default(),
            byp: Default::default(),
            ses_d: Default::default(),
            m_st: Default::default(),
            m_jidx: Default::default(),
            m_block: Default::default(),
            m_bitmap: Default::default(),
            m_exp: Default::default(),
            m_flags: Default::default(),
            m_elem: Default::default(),
            m_timer: Default::default(),
            m_ep: Default::default(),
            sj_ep: Default::default(),
            live: Default::default(),
            d_cb: Default::default(),
            d_bc: Default::default(),
            lim33: Default::default(),
            ge_m3: Default::default(),
            ge_m2: Default::default(),
            ge_m1: Default::default(),
            ge_0: Default::default(),
            ge_p1: Default::default(),
            ge_p2: Default::default(),
            cs_free: copy_state(CopyState::Free),
            cs_aggregating: copy_state(CopyState::Aggregating),
            cs_emitted: copy_state(CopyState::Emitted),
            fl_exp_mismatch: flag(Flags::EXP_MISMATCH),
            fl_kept: flag(Flags::OVERFLOW | Flags::EXP_MISMATCH),
            fl_bypass: flag(Flags::BYPASS),
            sc_ip_port: Constant::new(job::SRC_CHECK_IP_PORT.into()),
        }
    }
}

impl Logic for Pred {
    #[hdl_gen]
    fn update(&mut self) {
        self.m_st.next = self.m.val().get_value_state();
        self.m_jidx.next = self.m.val().get_value_entry();
        self.m_block.next = self.m.val().get_value_block();
        self.m_bitmap.next = self.m.val().get_value_bitmap();
        self.m_exp.next = self.m.val().get_value_exponent();
        self.m_flags.next = self.m.val().get_value_flags();
        self.m_elem.next = self.m.val().get_value_elements();
        self.m_timer.next = self.m.val().get_value_timer();
        self.m_ep.next = bit_cast::<32, 16>(self.m.val().get_value_epoch_lo())
            | (bit_cast::<32, 16>(self.m.val().get_value_epoch_hi()) << 16);
        self.sj_ep.next = self.sj.val().get_value_epoch();
        // A copy is live only if written under the current epoch of its job entry;
        // otherwise it is Free (its job was replaced or removed).
        if self.e_scan.val() {
            self.live.next =
                self.sj.val().get_value_valid() & (self.m_ep.val() == self.sj_ep.val());
        } else {
            self.live.next =
                (self.m_jidx.val() == self.x_ji.val()) & (self.m_ep.val() == self.jep.val());
        }
        if self.live.val() {
            self.st.next = self.m_st.val();
        } else {
            self.st.next = self.cs_free.val();
        }
        self.busy_st.next =
            (self.st.val() == self.cs_aggregating.val()) | (self.st.val() == self.cs_emitted.val());
        self.same.next = self.st.val() != self.cs_free.val();
        self.samebl.next = self.same.val() & (self.m_block.val() == self.f.val().block);
        self.subset.next = (self.f.val().bitmap & !self.m_bitmap.val()) == 0;
        self.disjoint.next = (self.f.val().bitmap & self.m_bitmap.val()) == 0;
        self.d_cb.next = self.m_block.val() - self.f.val().block;
        self.d_bc.next = self.f.val().block - self.m_block.val();
        // (d != 0 is the blocks' inequality, off the subtraction's carry chain.)
        self.newer_cb.next =
            !self.d_cb.val().get_bit(31) & (self.m_block.val() != self.f.val().block);
        self.newer_bc.next =
            !self.d_bc.val().get_bit(31) & (self.m_block.val() != self.f.val().block);
        self.age.next = self.now.val() - self.m_timer.val();
        self.lim33.next = bit_cast::<33, 32>(self.je.val().get_value_flush_after())
            + bit_cast::<33, 32>(self.je.val().get_value_reclaim_after());
        self.stale.next = self.je.val().get_value_timeout()
            & (bit_cast::<33, 32>(self.age.val()) >= self.lim33.val());
        // The quota check on the job's busy count once this copy is reclaimed: the count
        // LOOK latched (`bcur`), plus an update that was in flight then (`bcd`: +1, -1),
        // minus the copy if it is busy; `_p`/`_m` with one more or one fewer busy copy (an
        // update of the older frame's DECIDE beside PRED, which `bcd` does not hold). Every
        // offset's comparison (32-bit, wrapping as the sum would) is made from registers,
        // and the copy's state only picks one: no adder between the metadata read and the
        // comparison.
        self.ge_m3.next = (self.bcur.val() - 3) >= self.je.val().get_value_quota();
        self.ge_m2.next = (self.bcur.val() - 2) >= self.je.val().get_value_quota();
        self.ge_m1.next = (self.bcur.val() - 1) >= self.je.val().get_value_quota();
        self.ge_0.next = self.bcur.val() >= self.je.val().get_value_quota();
        self.ge_p1.next = (self.bcur.val() + 1) >= self.je.val().get_value_quota();
        self.ge_p2.next = (self.bcur.val() + 2) >= self.je.val().get_value_quota();
        self.qf0.next = self.ge_0.val();
        self.qfp.next = self.ge_p1.val();
        self.qfm.next = self.ge_m1.val();
        if self.bcd.val().get_bit(0) & !self.busy_st.val() {
            self.qf0.next = self.ge_p1.val();
            self.qfp.next = self.ge_p2.val();
            self.qfm.next = self.ge_0.val();
        }
        if !self.bcd.val().get_bit(0) & (self.bcd.val().get_bit(1) ^ self.busy_st.val()) {
            self.qf0.next = self.ge_m1.val();
            self.qfp.next = self.ge_0.val();
            self.qfm.next = self.ge_m2.val();
        }
        if self.bcd.val().get_bit(1) & self.busy_st.val() {
            self.qf0.next = self.ge_m2.val();
            self.qfp.next = self.ge_m1.val();
            self.qfm.next = self.ge_m3.val();
        }
        self.newbm.next = self.m_bitmap.val() | self.f.val().bitmap;
        if self.f.val().exponent != self.m_exp.val() {
            self.mflags.next = self.m_flags.val()
                | (self.f.val().flags & self.fl_kept.val())
                | self.fl_exp_mismatch.val();
        } else {
            self.mflags.next = self.m_flags.val() | (self.f.val().flags & self.fl_kept.val());
        }
        self.rows_p.next = ((self.f.val().elements << 2) + self.rowmask.val()) >> self.rowlog.val();
        self.rows_m.next = ((self.m_elem.val() << 2) + self.rowmask.val()) >> self.rowlog.val();
        self.mg.next.m = self.m.val();
        self.mg.next.newbm = self.newbm.val();
        self.mg.next.mflags = self.mflags.val();
        self.mg.next.sflags = self.f.val().flags & self.fl_kept.val();
        self.mg.next.rows_m = self.rows_m.val();
        self.mg.next.rows = self.rows_p.val();
        self.mg.next.rle1 = self.rows_p.val() <= 1;
        self.mg.next.partial = self.m_bitmap.val() != self.je.val().get_value_expected();
        // A scan visit's conditions (`Switch::scan_slot`).
        self.s.next.flush = self.sj.val().get_value_timeout()
            & self.sj.val().get_value_inner()
            & (self.st.val() == self.cs_aggregating.val())
            & (self.sage.val() >= self.sj.val().get_value_flush_after());
        self.s.next.recl = self.sj.val().get_value_timeout()
            & (self.st.val() == self.cs_emitted.val())
            & (self.sage.val() >= self.sj.val().get_value_reclaim_after());
        self.s.next.partial = self.m_bitmap.val() != self.sj.val().get_value_expected();
        // Slot hygiene, every mode: a busy copy without progress for `reclaim_idle`.
        self.s.next.idle = (self.sj.val().get_value_reclaim_idle() != 0)
            & self.busy_st.val()
            & (self.tage.val() >= self.sj.val().get_value_reclaim_idle());
        self.s.next.emit = self.st.val() == self.cs_emitted.val();
        self.s.next.rows = self.rows_m.val();
        self.s.next.more = self.rows_m.val() != 0;
        self.s.next.last = self.rows_m.val() == 1;
        // The decision's conditions for DSEL.
        self.c.next.st = self.st.val();
        self.c.next.busy_st = self.busy_st.val();
        self.c.next.same = self.same.val();
        self.c.next.samebl = self.samebl.val();
        self.c.next.subset = self.subset.val();
        self.c.next.disjoint = self.disjoint.val();
        self.c.next.newer_cb = self.newer_cb.val();
        self.c.next.newer_bc = self.newer_bc.val();
        self.c.next.stale = self.stale.val();
        self.byp.next = (self.f.val().flags & self.fl_bypass.val()) != 0;
        self.c.next.badrank = (self.f.val().bitmap & !self.je.val().get_value_ranks()) != 0;
        self.c.next.toolong = self.f.val().elements > self.lanes.val();
        self.c.next.badchild =
            !self.byp.val() & (self.f.val().child >= self.je.val().get_value_children());
        self.c.next.chrank =
            !self.byp.val() & ((self.f.val().bitmap & !self.chr.val().get_value_ranks()) != 0);
        self.c.next.degree =
            !self.byp.val() & (self.f.val().child >= self.je.val().get_value_degree_limit());
        // Source validation (`Switch::check_child_source`): a bypass-flagged packet only
        // with ranks below the children on its ingress port (`pbr`), any other only from
        // its child's IPv4 source (and UDP source port).
        self.c.next.badsrc = (self.byp.val()
            & (self.je.val().get_value_src_check() != 0)
            & ((self.f.val().bitmap & !self.pbr.val()) != 0))
            | (!self.byp.val()
                & (self.je.val().get_value_src_check() != 0)
                & (self.f.val().src_ip != self.chr.val().get_value_ip()))
            | (!self.byp.val()
                & (self.je.val().get_value_src_check() == self.sc_ip_port.val())
                & (self.f.val().src_port != self.chr.val().get_value_udp()));
        // A result only on the port facing the parent (`from_above`).
        self.c.next.rbadsrc = (self.je.val().get_value_src_check() != 0)
            & (self.sel.val() != self.je.val().get_value_parent_port());
        // A root's session floor (`Switch::session_floor`): no session open, or a block
        // before the open session's first (serial arithmetic: the sign of the difference).
        self.ses_d.next = self.f.val().block - self.sbq.val();
        self.c.next.ses_nos =
            self.je.val().get_value_sessions() & !self.je.val().get_value_inner() & !self.soq.val();
        self.c.next.ses_old = self.je.val().get_value_sessions()
            & !self.je.val().get_value_inner()
            & self.soq.val()
            & self.ses_d.val().get_bit(31);
        self.c.next.cpl0 = self.f.val().bitmap == self.je.val().get_value_expected();
        self.c.next.cpl1 = self.newbm.val() == self.je.val().get_value_expected();
        self.c.next.elne = self.f.val().elements != self.m_elem.val();
    }
}
