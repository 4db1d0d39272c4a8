//! DSEL, the second decision stage: the model's branch for the frame in the decision
//! stages (`Switch::contribution` / `result` / `same_block`, `relay_down`, `join`), chosen
//! from the conditions PRED registered (`c`, a `Conds`) and registered for DECIDE: the
//! `states::Branch` (`q`): the counter events, the action, the Acc operation, whether the
//! copy completes or merges, whether a result takes effect, a REFUSE's reason and whether
//! a contribution moves the root's session floor on. The engine strobes it (`go`) in the DSEL cycle and keeps the
//! stage's state and the copy of the frame's fields for DECIDE (`dx_*`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered).

use fanin_proto::model::{CopyState, Counter};
use fanin_proto::wire::{Flags, PacketType, RefuseReason};
use rust_hdl::prelude::*;

use super::states::{copy_state, event, flag, packet_type, Action, Branch, Conds};

/// The decision's branch select (see the module documentation).
#[derive(LogicBlock)]
pub struct DSel {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// The frame is in DSEL this cycle: choose its branch.
    pub go: Signal<In, bool>,
    /// The frame's packet type.
    pub ptype: Signal<In, Bits<8>>,
    /// The frame's header flags.
    pub flags: Signal<In, Bits<8>>,
    /// The job entry is an inner switch's (not the root's).
    pub inner: Signal<In, bool>,
    /// The job entry's root runs sessions.
    pub sessions: Signal<In, bool>,
    /// PRED's registered conditions.
    pub c: Signal<In, Conds>,
    /// The job's quota is full (PRED's condition for the busy count DECIDE leaves).
    pub qf: Signal<In, bool>,
    /// The branch, registered.
    pub q: Signal<Out, Branch>,
    ev: DFF<Bits<32>>,
    act: DFF<Action>,
    aop: DFF<Bits<2>>,
    cpl: DFF<bool>,
    merge: DFF<bool>,
    rok: DFF<bool>,
    why: DFF<Bits<8>>,
    hup: DFF<bool>,
    cs_aggregating: Constant<Bits<3>>,
    cs_done: Constant<Bits<3>>,
    cs_emitted: Constant<Bits<3>>,
    ev_aggregated: Constant<Bits<32>>,
    ev_bad_source: Constant<Bits<32>>,
    ev_bypass_collision: Constant<Bits<32>>,
    ev_bypass_degree: Constant<Bits<32>>,
    ev_bypass_quota: Constant<Bits<32>>,
    ev_bypass_straggler: Constant<Bits<32>>,
    ev_bypass_transit: Constant<Bits<32>>,
    ev_duplicates: Constant<Bits<32>>,
    ev_joins: Constant<Bits<32>>,
    ev_malformed: Constant<Bits<32>>,
    ev_overlaps: Constant<Bits<32>>,
    ev_reclaims: Constant<Bits<32>>,
    ev_reemits: Constant<Bits<32>>,
    ev_refused: Constant<Bits<32>>,
    ev_results_sent: Constant<Bits<32>>,
    ev_root_drops: Constant<Bits<32>>,
    fl_bypass: Constant<Bits<8>>,
    pt_accept: Constant<Bits<8>>,
    pt_contribution: Constant<Bits<8>>,
    pt_join: Constant<Bits<8>>,
    pt_refuse: Constant<Bits<8>>,
    pt_result: Constant<Bits<8>>,
    rr_no_session: Constant<Bits<8>>,
    rr_stale: Constant<Bits<8>>,
}

impl Default for DSel {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            go: Default::default(),
            ptype: Default::default(),
            flags: Default::default(),
            inner: Default::default(),
            sessions: Default::default(),
            c: Default::default(),
            qf: Default::default(),
            q: Default::default(),
            ev: Default::default(),
            act: Default::default(),
            aop: Default::default(),
            cpl: Default::default(),
            merge: Default::default(),
            rok: Default::default(),
            why: Default::default(),
            hup: Default::default(),
            cs_aggregating: copy_state(CopyState::Aggregating),
            cs_done: copy_state(CopyState::Done),
            cs_emitted: copy_state(CopyState::Emitted),
            ev_aggregated: event(Counter::Aggregated),
            ev_bad_source: event(Counter::BadSource),
            ev_bypass_collision: event(Counter::BypassCollision),
            ev_bypass_degree: event(Counter::BypassDegree),
            ev_bypass_quota: event(Counter::BypassQuota),
            ev_bypass_straggler: event(Counter::BypassStraggler),
            ev_bypass_transit: event(Counter::BypassTransit),
            ev_duplicates: event(Counter::Duplicates),
            ev_joins: event(Counter::Joins),
            ev_malformed: event(Counter::Malformed),
            ev_overlaps: event(Counter::Overlaps),
            ev_reclaims: event(Counter::Reclaims),
            ev_reemits: event(Counter::Reemits),
            ev_refused: event(Counter::Refused),
            ev_results_sent: event(Counter::ResultsSent),
            ev_root_drops: event(Counter::RootDrops),
            fl_bypass: flag(Flags::BYPASS),
            pt_accept: packet_type(PacketType::Accept),
            pt_contribution: packet_type(PacketType::Contribution),
            pt_join: packet_type(PacketType::Join),
            pt_refuse: packet_type(PacketType::Refuse),
            pt_result: packet_type(PacketType::Result),
            rr_no_session: Constant::new((RefuseReason::NoSession as u64).into()),
            rr_stale: Constant::new((RefuseReason::StaleBlock as u64).into()),
        }
    }
}

impl Logic for DSel {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, ev, act, aop, cpl, merge, rok, why, hup);
        self.q.next.ev = self.ev.q.val();
        self.q.next.act = self.act.q.val();
        self.q.next.aop = self.aop.q.val();
        self.q.next.cpl = self.cpl.q.val();
        self.q.next.merge = self.merge.q.val();
        self.q.next.rok = self.rok.q.val();
        self.q.next.why = self.why.q.val();
        self.q.next.hup = self.hup.q.val();
        if self.go.val() {
            // DSEL: the model's branch for this frame (Switch::contribution / result /
            // same_block), from the registered conditions, registered for DECIDE.
            self.ev.d.next = 0.into();
            self.act.d.next = Action::Drop;
            self.aop.d.next = 1.into();
            self.cpl.d.next = self.c.val().cpl0;
            self.merge.d.next = false;
            self.rok.d.next = true;
            self.why.d.next = self.rr_no_session.val();
            // A contribution that passes a root's session floor moves `high` on.
            self.hup.d.next = (self.ptype.val() == self.pt_contribution.val())
                & self.sessions.val()
                & !self.inner.val()
                & !self.c.val().badrank
                & !self.c.val().toolong
                & !self.c.val().badchild
                & !self.c.val().chrank
                & !self.c.val().badsrc
                & !self.c.val().degree
                & !self.c.val().ses_nos
                & !self.c.val().ses_old;
            if self.ptype.val() == self.pt_result.val() {
                // Result (its effects are DECIDE's, unless it came from elsewhere).
                if !self.inner.val() {
                    self.ev.d.next = self.ev_malformed.val();
                } else if self.c.val().rbadsrc {
                    self.ev.d.next = self.ev_bad_source.val();
                    self.rok.d.next = false;
                }
            } else if (self.ptype.val() == self.pt_accept.val())
                | (self.ptype.val() == self.pt_refuse.val())
            {
                // ACCEPT or REFUSE (Switch::relay_down): from the parent's port, down to
                // the children delivering one of its ranks.
                if !self.inner.val() | !self.sessions.val() {
                    self.ev.d.next = self.ev_malformed.val();
                } else if self.c.val().rbadsrc {
                    self.ev.d.next = self.ev_bad_source.val();
                } else if self.c.val().badrank {
                    self.ev.d.next = self.ev_malformed.val();
                } else {
                    self.act.d.next = Action::Relay;
                }
            } else if self.ptype.val() == self.pt_join.val() {
                // JOIN (Switch::join): source-checked like a contribution (without the
                // element count and the degree limit), then up to the parent with
                // BYPASS, the worker's source kept.
                if !self.sessions.val()
                    | self.c.val().badrank
                    | self.c.val().badchild
                    | self.c.val().chrank
                {
                    self.ev.d.next = self.ev_malformed.val();
                } else if self.c.val().badsrc {
                    self.ev.d.next = self.ev_bad_source.val();
                } else if self.inner.val() {
                    self.ev.d.next = self.ev_joins.val();
                    self.act.d.next = Action::Bypass;
                } else {
                    // At the root: the session unit.
                    self.ev.d.next = self.ev_joins.val();
                    self.act.d.next = Action::Join;
                }
            } else if self.c.val().badrank {
                self.ev.d.next = self.ev_malformed.val();
            } else if self.c.val().toolong {
                self.ev.d.next = self.ev_malformed.val();
            } else if self.c.val().badchild {
                self.ev.d.next = self.ev_malformed.val();
            } else if self.c.val().chrank {
                self.ev.d.next = self.ev_malformed.val();
            } else if self.c.val().badsrc {
                self.ev.d.next = self.ev_bad_source.val();
            } else if self.c.val().degree {
                // Degree limit: bypass.
                self.ev.d.next = self.ev_bypass_degree.val();
                self.act.d.next = Action::Bypass;
            } else if ((self.flags.val() & self.fl_bypass.val()) != 0) & self.inner.val() {
                // Transit.
                self.ev.d.next = self.ev_bypass_transit.val();
                self.act.d.next = Action::Bypass;
            } else if self.c.val().ses_nos | self.c.val().ses_old {
                // Refused at a root with sessions, answered with a REFUSE.
                self.ev.d.next = self.ev_refused.val();
                self.act.d.next = Action::Refuse;
                if self.c.val().ses_old {
                    self.why.d.next = self.rr_stale.val();
                }
            } else if self.c.val().samebl {
                // Same block (Switch::same_block).
                if self.c.val().st == self.cs_aggregating.val() {
                    if self.c.val().subset {
                        self.ev.d.next = self.ev_duplicates.val();
                    } else if !self.c.val().disjoint {
                        self.ev.d.next = self.ev_overlaps.val();
                    } else if self.c.val().elne {
                        self.ev.d.next = self.ev_malformed.val();
                    } else {
                        // Merge.
                        self.ev.d.next = self.ev_aggregated.val();
                        self.act.d.next = Action::Aggregate;
                        self.aop.d.next = 2.into();
                        self.cpl.d.next = self.c.val().cpl1;
                        self.merge.d.next = true;
                    }
                } else if (self.c.val().st == self.cs_emitted.val()) & self.c.val().subset {
                    // Emitted: re-emit the stored aggregate.
                    self.ev.d.next = self.ev_duplicates.val() | self.ev_reemits.val();
                    self.act.d.next = Action::ReEmit;
                } else if (self.c.val().st == self.cs_done.val()) & !self.inner.val() {
                    if self.c.val().subset {
                        // Done at the root: replay to the sender.
                        self.ev.d.next = self.ev_duplicates.val() | self.ev_results_sent.val();
                        self.act.d.next = Action::Replay;
                    } else {
                        self.ev.d.next = self.ev_overlaps.val();
                    }
                } else if !self.c.val().disjoint & !self.c.val().subset {
                    self.ev.d.next = self.ev_overlaps.val();
                } else {
                    self.ev.d.next = self.ev_bypass_straggler.val();
                    self.act.d.next = Action::Bypass;
                }
            } else if self.c.val().same & self.c.val().newer_cb {
                // An older block than the copy holds.
                if self.inner.val() {
                    self.ev.d.next = self.ev_bypass_straggler.val();
                    self.act.d.next = Action::Bypass;
                } else {
                    self.ev.d.next = self.ev_duplicates.val();
                }
            } else if self.c.val().busy_st
                & !(self.c.val().st == self.cs_emitted.val())
                & !(!self.inner.val()
                    & (self.c.val().st == self.cs_aggregating.val())
                    & self.c.val().newer_bc
                    & self.c.val().stale)
            {
                // Collision: root drop or bypass.
                if self.inner.val() {
                    self.ev.d.next = self.ev_bypass_collision.val();
                    self.act.d.next = Action::Bypass;
                } else {
                    self.ev.d.next = self.ev_root_drops.val();
                }
            } else if self.qf.val() {
                // Quota (a stale root copy counts as reclaimed even so).
                if self.inner.val() {
                    self.ev.d.next = self.ev_bypass_quota.val();
                    self.act.d.next = Action::Bypass;
                } else if (self.c.val().st == self.cs_aggregating.val()) & self.c.val().busy_st {
                    self.ev.d.next = self.ev_root_drops.val() | self.ev_reclaims.val();
                } else {
                    self.ev.d.next = self.ev_root_drops.val();
                }
            } else {
                // Start a new epoch of the copy.
                if !self.inner.val() & (self.c.val().st == self.cs_aggregating.val()) {
                    self.ev.d.next = self.ev_aggregated.val() | self.ev_reclaims.val();
                } else {
                    self.ev.d.next = self.ev_aggregated.val();
                }
                self.act.d.next = Action::Aggregate;
            }
        }
    }
}
