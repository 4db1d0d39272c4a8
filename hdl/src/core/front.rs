//! The front end: one frame or timer-scan visit at a time (`state`, `FrontState`), in the
//! order of the monitor's events.
//!
//! - **IDLE** applies a pending job commit (`jc`), takes the picked frame (`take`), or
//!   starts a visit of the slot under the scan pointer (`scan_go`).
//! - **The take** registers the frame's port, length, header region, rows and fields from
//!   the pick's look-ahead and its parser (`pick.rs`); **PREP2** registers the parser's
//!   checks (`classify`).
//! - **PARSE** hands a contribution or result of a known job to LOOK (`look_load`, with
//!   its job, child, port-below and metadata reads), and any other frame to the back end
//!   (`h_go`: forwarded, an ARP reply, or only released), with the counter it raises.
//! - **The scan visit** (SCAN, SWAIT, SLAT, SPRED, SDEC, SNEXT) reads both copies of the
//!   slot, registers their conditions (`pred.rs`, `s_q`), and flushes, reclaims or frees
//!   them (`Switch::scan_slot`).
//!
//! Its state and the frame's registers are outputs; its strobes (`take`, `h_go` and the
//! back end's `fi`, the metadata write, the counter events) are terms of its registers
//! and of inputs that are registers or sub-block outputs (`hand.rs`'s `b_free`/`lk_free`).
//! The engine applies the strobes, and gives the writes of the decision stages, which
//! never coincide with the front end's, precedence.

use crate::config::CoreConfig;
use crate::layout::{at, mask, HdrWindow, JobWord, MetaWord};
use crate::parse::{
    Classify, FrameClass, PARSE_W, TERMS_ARP, TERMS_BAD, TERMS_IP_BAD, TERMS_NON_IP, TERMS_ROUTE,
    TERMS_WIRE_BAD,
};
use crate::ram::ADDR_W;
use fanin_proto::model::{CopyState, Counter};
use fanin_regs::layout::meta;
use rust_hdl::prelude::*;

use super::states::{
    copy_state, event, BackState, Ctx, DecState, Fields, FrontItem, FrontState, ScanConds,
};
use super::util::{idx4, k16, mc_mask, n};
use super::{JOB_W, META_W};

/// The front end (see the module documentation).
#[derive(LogicBlock)]
pub struct FrontEnd {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (to IDLE).
    pub rst: Signal<In, bool>,
    /// The back end takes an item this cycle if one is handed over (`hand.rs`).
    pub b_free: Signal<In, bool>,
    /// LOOK is free or its frame leaves (`hand.rs`).
    pub lk_free: Signal<In, bool>,
    /// The decision stages' state.
    pub xstate: Signal<In, DecState>,
    /// LOOK holds a frame.
    pub look_v: Signal<In, bool>,
    /// The item stage holds an item.
    pub item_v: Signal<In, bool>,
    /// The session unit works.
    pub sess_busy: Signal<In, bool>,
    /// The session unit moves an entry's epoch (a commit of that entry).
    pub epoch_move: Signal<In, bool>,
    /// A job commit is pending.
    pub jc_pend: Signal<In, bool>,
    /// A job commit takes effect.
    pub jc_q: Signal<In, bool>,
    /// The pending commit's entry.
    pub jc_i: Signal<In, Bits<8>>,
    /// The pick has a port (`pick.rs`).
    pub pk_any: Signal<In, bool>,
    /// The look-ahead holds the picked port's current head.
    pub la_ok: Signal<In, bool>,
    /// The picked port.
    pub pk_idx: Signal<In, Bits<4>>,
    /// The picked frame's length.
    pub la_len: Signal<In, Bits<16>>,
    /// Its header region.
    pub la_hdr: Signal<In, Bits<PARSE_W>>,
    /// Its first row.
    pub la_row: Signal<In, Bits<16>>,
    /// Each port's head's bitmap population count.
    pub hp_pop: Vec<Signal<In, Bits<8>>>,
    /// The parser's fields of the picked frame.
    pub pf: Signal<In, Fields>,
    /// The parser's check terms (`TERMS_*`).
    pub c_terms: Signal<In, Bits<16>>,
    /// The element count the frame's length implies.
    pub c_count: Signal<In, Bits<8>>,
    /// The job table's first hit (`lookup.rs`).
    pub jsel: Signal<In, Bits<8>>,
    /// The frame's job has an entry.
    pub jhit: Signal<In, bool>,
    /// The frame's destination has a route.
    pub rhit: Signal<In, bool>,
    /// The route hit, one-hot.
    pub rone: Vec<Signal<In, bool>>,
    /// Each route's egress ports (`csr.rs`).
    pub route_pm: Vec<Signal<In, Bits<8>>>,
    /// The frame's slot (for its block).
    pub slot: Signal<In, Bits<ADDR_W>>,
    /// The frame's slot copy within the slot.
    pub ci: Signal<In, bool>,
    /// The slot under the scan pointer belongs to a timeout-mode job.
    pub own: Signal<In, bool>,
    /// A timeout-mode job exists.
    pub any_to: Signal<In, bool>,
    /// A sweep is under way (`timer.rs`).
    pub sweep_on: Signal<In, bool>,
    /// The tick.
    pub now: Signal<In, Bits<32>>,
    /// The scan pointer.
    pub scan_ptr: Signal<In, Bits<ADDR_W>>,
    /// The scan visits the slot's second copy.
    pub scan_c: Signal<In, bool>,
    /// Ticks since the last sweep started.
    pub sweep_el: Signal<In, Bits<32>>,
    /// Ticks between sweeps (0: no scan).
    pub scan_ticks: Signal<In, Bits<32>>,
    /// The ARP reply to the frame's header (`hdrgen.rs`).
    pub arp_y: Signal<In, Bits<512>>,
    /// The metadata of the copy read (`metaport.rs`).
    pub m: Signal<In, Bits<META_W>>,
    /// The job table's read data.
    pub jr: Signal<In, Bits<JOB_W>>,
    /// The copy's age (`pred.rs`).
    pub age: Signal<In, Bits<32>>,
    /// The scan's conditions on the copy (`pred.rs`).
    pub s: Signal<In, ScanConds>,
    /// The taken frame's (or the scan visit's) context: tick, port, header, length, rows.
    pub c: Signal<Out, Ctx>,
    /// Its fields.
    pub f_q: Signal<Out, Fields>,
    /// Its job entry (PARSE's; LOOK's while LOOK holds it).
    pub ji_q: Signal<Out, Bits<8>>,
    /// Its slot copy's address, or the scan's.
    pub cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// The front end works on a scan visit.
    pub e_scan_q: Signal<Out, bool>,
    /// The visited copy's age (SLAT).
    pub sage_q: Signal<Out, Bits<32>>,
    /// Ticks since its last progress (SLAT).
    pub tage_q: Signal<Out, Bits<32>>,
    /// The scan's conditions (SPRED).
    pub s_q: Signal<Out, ScanConds>,
    /// The visited copy's job entry (SPRED).
    pub sj_q: Signal<Out, Bits<JOB_W>>,
    /// The picked frame is taken.
    pub take: Signal<Out, bool>,
    /// The pending job commit is applied.
    pub jc: Signal<Out, bool>,
    /// A scan visit starts.
    pub scan_go: Signal<Out, bool>,
    /// PARSE hands its frame to LOOK.
    pub look_load: Signal<Out, bool>,
    /// The back end takes the front end's item or frame (`back.rs`'s `f_go`).
    pub h_go: Signal<Out, bool>,
    /// The back end's first state for it.
    pub h_st: Signal<Out, BackState>,
    /// The frame and its item for the back end.
    pub fi: Signal<Out, FrontItem>,
    /// The metadata read address.
    pub m_raddr: Signal<Out, Bits<ADDR_W>>,
    /// The scan's metadata write (to `cadr_q`).
    pub m_we: Signal<Out, bool>,
    /// Its data.
    pub m_wdata: Signal<Out, Bits<META_W>>,
    /// The job table's read address.
    pub j_raddr: Signal<Out, Bits<ADDR_W>>,
    /// The child table's read address.
    pub ch_raddr: Signal<Out, Bits<ADDR_W>>,
    /// The port-below table's read address.
    pub pb_raddr: Signal<Out, Bits<ADDR_W>>,
    /// The counter events of the front end (`states::event`).
    pub ev: Signal<Out, Bits<32>>,
    /// The scan removes a busy copy of `bz_j`.
    pub bz_dec: Signal<Out, bool>,
    /// The job entry of a busy-count update (default: the frame's).
    pub bz_j: Signal<Out, Bits<8>>,
    /// Monitor event (`Core`'s `dbg_*`).
    pub dbg_valid: Signal<Out, bool>,
    /// Its kind.
    pub dbg_kind: Signal<Out, Bits<2>>,
    /// Its argument.
    pub dbg_arg: Signal<Out, Bits<32>>,
    /// The scan pointer moves on (`timer.rs`).
    pub t_adv: Signal<Out, bool>,
    /// A sweep starts.
    pub t_start: Signal<Out, bool>,
    /// The scan moves to the slot's second copy.
    pub t_cset: Signal<Out, bool>,
    /// The scan returns to the first copy.
    pub t_cclr: Signal<Out, bool>,
    state: DFF<FrontState>,
    sel: DFF<Bits<4>>,
    len: DFF<Bits<16>>,
    hdr: DFF<Bits<PARSE_W>>,
    row0: DFF<Bits<16>>,
    nrows: DFF<Bits<16>>,
    f: DFF<Fields>,
    ji: DFF<Bits<8>>,
    cadr: DFF<Bits<ADDR_W>>,
    now_r: DFF<Bits<32>>,
    e_scan: DFF<bool>,
    sage: DFF<Bits<32>>,
    tage: DFF<Bits<32>>,
    q_s: DFF<ScanConds>,
    q_sj: DFF<Bits<JOB_W>>,
    // The parser's check terms (registered at the take, read in PREP2) and its verdicts
    // (PREP2, read by `cls` in PARSE), the population-count check.
    la_chk: DFF<Bits<16>>,
    pc_non_ip: DFF<bool>,
    pc_arp: DFF<bool>,
    pc_ip_bad: DFF<bool>,
    pc_route: DFF<bool>,
    pc_bad: DFF<bool>,
    pc_wbad: DFF<bool>,
    pc_popok: DFF<bool>,
    pc_count: DFF<Bits<8>>,
    pc_pop: DFF<Bits<8>>,
    cls: Classify,
    // The child and port-below read addresses PARSE issued, held while LOOK waits.
    cha_q: DFF<Bits<ADDR_W>>,
    pba_q: DFF<Bits<ADDR_W>>,
    // Cycles since the scan pointer moved (2: `own` is current); the scan's turn.
    own_age: DFF<Bits<2>>,
    scan_turn: DFF<bool>,
    kind: Signal<Local, FrameClass>,
    pick_ok: Signal<Local, bool>,
    jc_hold: Signal<Local, bool>,
    scan_due: Signal<Local, bool>,
    rpm: Signal<Local, Bits<8>>,
    m_jidx: Signal<Local, Bits<8>>,
    c_idx4: Vec<Constant<Bits<4>>>,
    c_rowlog: Constant<Bits<16>>,
    c_rowmask: Constant<Bits<16>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
    ev_unknown_job: Constant<Bits<32>>,
    ev_idle_reclaims: Constant<Bits<32>>,
    ev_malformed: Constant<Bits<32>>,
    ev_timeouts: Constant<Bits<32>>,
    ev_reclaims: Constant<Bits<32>>,
    ev_forwarded: Constant<Bits<32>>,
    ev_no_route: Constant<Bits<32>>,
    ev_non_ip: Constant<Bits<32>>,
    ev_arp: Constant<Bits<32>>,
    cs_free: Constant<Bits<3>>,
    cs_emitted: Constant<Bits<3>>,
    cs_stale: Constant<Bits<3>>,
    t_non_ip: Constant<Bits<16>>,
    t_ip_bad: Constant<Bits<16>>,
    t_route: Constant<Bits<16>>,
    t_bad: Constant<Bits<16>>,
    t_wire_bad: Constant<Bits<16>>,
    t_arp: Constant<Bits<16>>,
    at_meta_timer: Constant<Bits<16>>,
    at_meta_touched: Constant<Bits<16>>,
    mk_meta_state: Constant<Bits<META_W>>,
    mk_meta_state_times: Constant<Bits<META_W>>,
}

impl FrontEnd {
    /// The front end for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let wbb = cfg.engine_w as usize / 8;
        let mclog = cfg.child_bits() as u64;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            b_free: Default::default(),
            lk_free: Default::default(),
            xstate: Default::default(),
            look_v: Default::default(),
            item_v: Default::default(),
            sess_busy: Default::default(),
            epoch_move: Default::default(),
            jc_pend: Default::default(),
            jc_q: Default::default(),
            jc_i: Default::default(),
            pk_any: Default::default(),
            la_ok: Default::default(),
            pk_idx: Default::default(),
            la_len: Default::default(),
            la_hdr: Default::default(),
            la_row: Default::default(),
            hp_pop: n(cfg.ports as usize),
            pf: Default::default(),
            c_terms: Default::default(),
            c_count: Default::default(),
            jsel: Default::default(),
            jhit: Default::default(),
            rhit: Default::default(),
            rone: n(cfg.max_routes as usize),
            route_pm: n(cfg.max_routes as usize),
            slot: Default::default(),
            ci: Default::default(),
            own: Default::default(),
            any_to: Default::default(),
            sweep_on: Default::default(),
            now: Default::default(),
            scan_ptr: Default::default(),
            scan_c: Default::default(),
            sweep_el: Default::default(),
            scan_ticks: Default::default(),
            arp_y: Default::default(),
            m: Default::default(),
            jr: Default::default(),
            age: Default::default(),
            s: Default::default(),
            c: Default::default(),
            f_q: Default::default(),
            ji_q: Default::default(),
            cadr_q: Default::default(),
            e_scan_q: Default::default(),
            sage_q: Default::default(),
            tage_q: Default::default(),
            s_q: Default::default(),
            sj_q: Default::default(),
            take: Default::default(),
            jc: Default::default(),
            scan_go: Default::default(),
            look_load: Default::default(),
            h_go: Default::default(),
            h_st: Default::default(),
            fi: Default::default(),
            m_raddr: Default::default(),
            m_we: Default::default(),
            m_wdata: Default::default(),
            j_raddr: Default::default(),
            ch_raddr: Default::default(),
            pb_raddr: Default::default(),
            ev: Default::default(),
            bz_dec: Default::default(),
            bz_j: Default::default(),
            dbg_valid: Default::default(),
            dbg_kind: Default::default(),
            dbg_arg: Default::default(),
            t_adv: Default::default(),
            t_start: Default::default(),
            t_cset: Default::default(),
            t_cclr: Default::default(),
            state: Default::default(),
            sel: Default::default(),
            len: Default::default(),
            hdr: Default::default(),
            row0: Default::default(),
            nrows: Default::default(),
            f: Default::default(),
            ji: Default::default(),
            cadr: Default::default(),
            now_r: Default::default(),
            e_scan: Default::default(),
            sage: Default::default(),
            tage: Default::default(),
            q_s: Default::default(),
            q_sj: Default::default(),
            la_chk: Default::default(),
            pc_non_ip: Default::default(),
            pc_arp: Default::default(),
            pc_ip_bad: Default::default(),
            pc_route: Default::default(),
            pc_bad: Default::default(),
            pc_wbad: Default::default(),
            pc_popok: Default::default(),
            pc_count: Default::default(),
            pc_pop: Default::default(),
            cls: Default::default(),
            cha_q: Default::default(),
            pba_q: Default::default(),
            own_age: Default::default(),
            scan_turn: Default::default(),
            kind: Default::default(),
            pick_ok: Default::default(),
            jc_hold: Default::default(),
            scan_due: Default::default(),
            rpm: Default::default(),
            m_jidx: Default::default(),
            c_idx4: idx4(8),
            c_rowlog: k16(wbb.trailing_zeros() as u64),
            c_rowmask: k16((wbb - 1) as u64),
            c_mclog: k16(mclog),
            c_mcmask: mc_mask(mclog),
            ev_unknown_job: event(Counter::UnknownJob),
            ev_idle_reclaims: event(Counter::IdleReclaims),
            ev_malformed: event(Counter::Malformed),
            ev_timeouts: event(Counter::Timeouts),
            ev_reclaims: event(Counter::Reclaims),
            ev_forwarded: event(Counter::Forwarded),
            ev_no_route: event(Counter::NoRoute),
            ev_non_ip: event(Counter::NonIp),
            ev_arp: event(Counter::ArpReplies),
            cs_free: copy_state(CopyState::Free),
            cs_emitted: copy_state(CopyState::Emitted),
            cs_stale: copy_state(CopyState::Stale),
            t_non_ip: k16(TERMS_NON_IP),
            t_ip_bad: k16(TERMS_IP_BAD),
            t_route: k16(TERMS_ROUTE),
            t_bad: k16(TERMS_BAD),
            t_wire_bad: k16(TERMS_WIRE_BAD),
            t_arp: k16(TERMS_ARP),
            at_meta_timer: at(meta::TIMER),
            at_meta_touched: at(meta::TOUCHED),
            mk_meta_state: mask(&[meta::STATE]),
            mk_meta_state_times: mask(&[meta::STATE, meta::TIMER, meta::TOUCHED]),
        }
    }
}

impl Logic for FrontEnd {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, state, sel, len, hdr, row0, nrows, f, ji, cadr, now_r, e_scan, sage, tage,
            q_s, q_sj, la_chk, pc_non_ip, pc_arp, pc_ip_bad, pc_route, pc_bad, pc_wbad, pc_popok,
            pc_count, pc_pop, cha_q, pba_q, own_age, scan_turn
        );
        self.c.next.now = self.now_r.q.val();
        self.c.next.sel = self.sel.q.val();
        self.c.next.hdr = self.hdr.q.val().get_value_headers();
        self.c.next.len = self.len.q.val();
        self.c.next.row0 = self.row0.q.val();
        self.c.next.nrows = self.nrows.q.val();
        self.f_q.next = self.f.q.val();
        self.ji_q.next = self.ji.q.val();
        self.cadr_q.next = self.cadr.q.val();
        self.e_scan_q.next = self.e_scan.q.val();
        self.sage_q.next = self.sage.q.val();
        self.tage_q.next = self.tage.q.val();
        self.s_q.next = self.q_s.q.val();
        self.sj_q.next = self.q_sj.q.val();
        // PARSE's verdict, from PREP2's registered checks.
        self.cls.non_ip.next = self.pc_non_ip.q.val();
        self.cls.arp.next = self.pc_arp.q.val();
        self.cls.ip_bad.next = self.pc_ip_bad.q.val();
        self.cls.route.next = self.pc_route.q.val();
        self.cls.bad.next = self.pc_bad.q.val();
        self.cls.wire_bad.next = self.pc_wbad.q.val();
        self.cls.pop_ok.next = self.pc_popok.q.val();
        self.kind.next = self.cls.kind.val();
        // The route's egress ports: the routes' ports ORed under the route hit one-hot.
        self.rpm.next = 0.into();
        for r in 0..self.rone.len() {
            if self.rone[r].val() {
                self.rpm.next = self.rpm.val() | self.route_pm[r].val();
            }
        }
        // The entry is read from the job table (address in PARSE, data in LOOK); the scan
        // reads the entry a slot copy was written under (address in SLAT).
        if self.look_v.val() {
            self.j_raddr.next = bit_cast::<ADDR_W, 8>(self.ji.q.val());
        } else {
            self.j_raddr.next = bit_cast::<ADDR_W, 8>(self.jsel.val());
        }
        // The slot under the scan pointer is a timeout-mode job's (others are skipped:
        // `Switch::scan_slot` does nothing for them) once `own` is current (`own_age` 2).
        if self.own_age.q.val() != 2 {
            self.own_age.d.next = self.own_age.q.val() + 1;
        }
        self.scan_due.next = self.sweep_on.val() & self.own.val() & (self.own_age.q.val() == 2);
        // Child and port-below reads: PARSE's addresses, held while LOOK waits.
        self.ch_raddr.next = self.cha_q.q.val();
        self.pb_raddr.next = self.pba_q.q.val();
        self.m_raddr.next = self.cadr.q.val();
        self.m_wdata.next = 0.into();
        self.m_we.next = false;
        self.m_jidx.next = self.m.val().get_value_entry();
        self.bz_dec.next = false;
        self.bz_j.next = self.ji.q.val();
        self.jc.next = false;
        self.take.next = false;
        self.scan_go.next = false;
        self.look_load.next = false;
        self.dbg_valid.next = false;
        self.dbg_kind.next = 0.into();
        self.dbg_arg.next = 0.into();
        self.ev.next = 0.into();
        self.t_adv.next = false;
        self.t_start.next = false;
        self.t_cset.next = false;
        self.t_cclr.next = false;
        // The back end's item, set where the front end hands one over.
        self.h_go.next = false;
        self.h_st.next = BackState::Idle;
        self.fi.next.sel = self.sel.q.val();
        self.fi.next.row0 = self.row0.q.val();
        self.fi.next.nrows = self.nrows.q.val();
        self.fi.next.rel = !self.e_scan.q.val();
        self.fi.next.cadr = self.cadr.q.val();
        self.fi.next.orig = false;
        self.fi.next.hdr = self.hdr.q.val().get_value_headers();
        self.fi.next.len = self.len.q.val();
        self.fi.next.item = false;
        self.fi.next.enr = 0.into();
        self.fi.next.more = false;
        self.fi.next.last = false;
        self.fi.next.pmask = 0.into();
        self.fi.next.slot = false;
        // A frame is taken when the front end is idle (also while the decision stages work
        // on the frame before), unless the scan has its turn or a commit is pending. A job
        // commit waits for the front end to be idle and holds it for a cycle after
        // (`jc_hold`): no decision straddles it.
        self.jc_hold.next =
            self.jc_pend.val() | self.jc_q.val() | self.sess_busy.val() | self.epoch_move.val();
        self.pick_ok.next = self.pk_any.val()
            & self.la_ok.val()
            & !self.jc_hold.val()
            & !(self.scan_due.val() & self.scan_turn.q.val());
        match self.state.q.val() {
            FrontState::Idle => {
                // IDLE: apply a pending job commit, take the picked frame, or visit the slot
                // under the scan pointer. A frame may be taken while LOOK and the decision
                // stages still hold the ones before (LOOK has its own copy of the fields a
                // take overwrites); a commit or a scan visit waits until they are empty.
                if self.jc_pend.val() {
                    if (self.xstate.val() == DecState::Idle)
                        & !self.look_v.val()
                        & !self.sess_busy.val()
                    {
                        self.jc.next = true;
                        self.dbg_valid.next = true;
                        self.dbg_kind.next = 2.into();
                        self.dbg_arg.next = bit_cast::<32, 8>(self.jc_i.val());
                    }
                } else if self.pick_ok.val() {
                    self.take.next = true;
                } else if self.scan_due.val()
                    & !self.jc_hold.val()
                    & (self.xstate.val() == DecState::Idle)
                    & !self.look_v.val()
                {
                    self.scan_go.next = true;
                    self.scan_turn.d.next = false;
                    self.now_r.d.next = self.now.val();
                    self.e_scan.d.next = true;
                    self.t_cclr.next = true;
                    self.cadr.d.next = self.scan_ptr.val() << 1;
                    self.dbg_valid.next = true;
                    self.dbg_kind.next = 1.into();
                    self.dbg_arg.next = bit_cast::<32, ADDR_W>(self.scan_ptr.val());
                    self.state.d.next = FrontState::Scan;
                }
                if self.sweep_on.val()
                    & !self.own.val()
                    & (self.own_age.q.val() == 2)
                    & !self.jc_hold.val()
                {
                    // Not a timeout-mode slot: skip it without a visit.
                    self.own_age.d.next = 0.into();
                    self.t_adv.next = true;
                }
            }
            FrontState::Prep2 => {
                // PREP2: the parser's checks (`TERMS_*`, registered at the take) and the
                // population-count check, registered.
                self.pc_non_ip.d.next = (self.la_chk.q.val() & self.t_non_ip.val()) != 0;
                self.pc_arp.d.next = (self.la_chk.q.val() & self.t_arp.val()) == self.t_arp.val();
                self.pc_ip_bad.d.next = (self.la_chk.q.val() & self.t_ip_bad.val()) != 0;
                self.pc_route.d.next = (self.la_chk.q.val() & self.t_route.val()) != 0;
                self.pc_bad.d.next = (self.la_chk.q.val() & self.t_bad.val()) != 0;
                self.pc_wbad.d.next = (self.la_chk.q.val() & self.t_wire_bad.val()) != 0;
                self.pc_popok.d.next = self.pc_pop.q.val() == self.pc_count.q.val();
                self.state.d.next = FrontState::Parse;
            }
            FrontState::Parse => {
                // PARSE: the job, child entry and slot copy (LOOK's: loaded when LOOK is free
                // or its frame leaves, so that they stay put while it waits); their reads.
                if self.lk_free.val() {
                    self.ji.d.next = self.jsel.val();
                    self.ch_raddr.next = (bit_cast::<ADDR_W, 8>(self.jsel.val())
                        << self.c_mclog.val())
                        | (bit_cast::<ADDR_W, 8>(self.f.q.val().child) & self.c_mcmask.val());
                    self.cha_q.d.next = self.ch_raddr.val();
                    self.pb_raddr.next = (bit_cast::<ADDR_W, 8>(self.jsel.val()) << 3)
                        | bit_cast::<ADDR_W, 4>(self.sel.q.val());
                    self.pba_q.d.next = self.pb_raddr.val();
                    self.cadr.d.next =
                        self.slot.val() | bit_cast::<ADDR_W, 1>(self.ci.val().into());
                    self.m_raddr.next =
                        self.slot.val() | bit_cast::<ADDR_W, 1>(self.ci.val().into());
                    self.j_raddr.next = bit_cast::<ADDR_W, 8>(self.jsel.val());
                }
                // A contribution or result of a known job goes to LOOK once it is free (the
                // next frame may be taken in the same cycle); any other frame to the back end
                // once the decision before has handed over its item (items stay in decision
                // order): forwarded, or only released and counted.
                if (self.kind.val() == FrameClass::Fanin) & self.jhit.val() {
                    if self.lk_free.val() {
                        self.look_load.next = true;
                        self.state.d.next = FrontState::Idle;
                        if !self.jc_pend.val() & self.pick_ok.val() {
                            self.take.next = true;
                        }
                    }
                } else if self.b_free.val()
                    & (self.xstate.val() == DecState::Idle)
                    & !self.item_v.val()
                    & !self.look_v.val()
                {
                    self.h_go.next = true;
                    self.h_st.next = BackState::Release;
                    self.state.d.next = FrontState::Idle;
                    // The counter each class raises (`ev_<counter>`, `states::event`).
                    match self.kind.val() {
                        FrameClass::NonIp => {
                            self.ev.next = self.ev_non_ip.val();
                        }
                        FrameClass::Arp => {
                            // The reply, as a routed frame of its own header region only
                            // (60 bytes, no rows), out of the ingress port.
                            self.ev.next = self.ev_arp.val();
                            self.fi.next.orig = true;
                            self.fi.next.hdr = self.arp_y.val();
                            self.fi.next.len = 60.into();
                            self.fi.next.item = true;
                            self.fi.next.pmask = bits::<8>(1) << bit_cast::<8, 4>(self.sel.q.val());
                            self.h_st.next = BackState::CopyRows;
                        }
                        FrameClass::Malformed => {
                            self.ev.next = self.ev_malformed.val();
                        }
                        FrameClass::Route => {
                            if self.rhit.val() {
                                self.ev.next = self.ev_forwarded.val();
                                self.fi.next.orig = true;
                                self.fi.next.item = true;
                                self.fi.next.enr = self.nrows.q.val();
                                self.fi.next.more = self.nrows.q.val() != 0;
                                self.fi.next.last = self.nrows.q.val() == 1;
                                self.fi.next.pmask = self.rpm.val();
                                self.h_st.next = BackState::CopyRows;
                            } else {
                                self.ev.next = self.ev_no_route.val();
                            }
                        }
                        FrameClass::Fanin => {
                            // Of an unknown job.
                            self.ev.next = self.ev_unknown_job.val();
                        }
                    }
                }
            }
            FrontState::Scan => {
                // SCAN: metadata of (scan_ptr, scan_c) under way.
                self.state.d.next = FrontState::SWait;
            }
            FrontState::SWait => {
                // SWAIT: the metadata arrives (registered into `mq`, or `mf`: `metaport.rs`).
                self.state.d.next = FrontState::SLat;
            }
            FrontState::SLat => {
                // SLAT: the copy's metadata is here: read the job entry it was written
                // under; its age, registered.
                self.j_raddr.next = bit_cast::<ADDR_W, 8>(self.m_jidx.val());
                self.sage.d.next = self.age.val();
                self.tage.d.next = self.now_r.q.val() - self.m.val().get_value_touched();
                self.state.d.next = FrontState::SPred;
            }
            FrontState::SPred => {
                // SPRED: the scan decision's conditions and the copy's job entry, registered.
                self.q_sj.d.next = self.jr.val();
                self.q_s.d.next = self.s.val();
                self.state.d.next = FrontState::SDec;
            }
            FrontState::SDec => {
                // SDEC (Switch::scan_slot for one copy).
                self.state.d.next = FrontState::SNext;
                if self.q_s.q.val().flush {
                    // Flush the partial aggregate upward (once the back end can take it).
                    if self.b_free.val() & !self.item_v.val() {
                        self.h_go.next = true;
                        self.h_st.next = BackState::CopyRows;
                        self.fi.next.slot = true;
                        self.fi.next.item = true;
                        self.ev.next = self.ev_timeouts.val();
                        self.m_wdata.next = (self.m.val() & !self.mk_meta_state_times.val())
                            | bit_cast::<META_W, 3>(self.cs_emitted.val())
                            | (bit_cast::<META_W, 32>(self.now_r.q.val())
                                << self.at_meta_timer.val())
                            | (bit_cast::<META_W, 32>(self.now_r.q.val())
                                << self.at_meta_touched.val());
                        self.m_we.next = true;
                        self.fi.next.pmask = bits::<8>(1)
                            << bit_cast::<8, 4>(self.q_sj.q.val().get_value_parent_port());
                        self.fi.next.enr = self.q_s.q.val().rows;
                        self.fi.next.more = self.q_s.q.val().more;
                        self.fi.next.last = self.q_s.q.val().last;
                    } else {
                        self.state.d.next = FrontState::SDec;
                    }
                } else if self.q_s.q.val().recl {
                    // Reclaim the emitted copy: Stale.
                    self.ev.next = self.ev_reclaims.val();
                    self.m_wdata.next = (self.m.val() & !self.mk_meta_state.val())
                        | bit_cast::<META_W, 3>(self.cs_stale.val());
                    self.m_we.next = true;
                    self.bz_dec.next = true;
                    self.bz_j.next = self.m_jidx.val();
                } else if self.q_s.q.val().idle {
                    // Idle reclaim: an emitted copy becomes Stale, an aggregating one Free.
                    self.ev.next = self.ev_idle_reclaims.val();
                    if self.q_s.q.val().emit {
                        self.m_wdata.next = (self.m.val() & !self.mk_meta_state.val())
                            | bit_cast::<META_W, 3>(self.cs_stale.val());
                    } else {
                        self.m_wdata.next = (self.m.val() & !self.mk_meta_state.val())
                            | bit_cast::<META_W, 3>(self.cs_free.val());
                    }
                    self.m_we.next = true;
                    self.bz_dec.next = true;
                    self.bz_j.next = self.m_jidx.val();
                }
            }
            FrontState::SNext => {
                // SNEXT: the slot's second copy, or the next slot.
                if !self.scan_c.val() {
                    self.t_cset.next = true;
                    self.cadr.d.next = (self.scan_ptr.val() << 1) | 1;
                    self.state.d.next = FrontState::Scan;
                } else {
                    self.t_cclr.next = true;
                    self.own_age.d.next = 0.into();
                    self.t_adv.next = true;
                    self.state.d.next = FrontState::Idle;
                }
            }
            _ => {
                self.state.d.next = FrontState::Idle;
            }
        }
        // The take: the picked frame's port, length, header region, rows and fields (from
        // the look-ahead and its parser), and the parser's check terms for PREP2.
        if self.take.val() {
            self.sel.d.next = self.pk_idx.val();
            self.len.d.next = self.la_len.val();
            self.now_r.d.next = self.now.val();
            self.e_scan.d.next = false;
            self.scan_turn.d.next = true;
            self.dbg_valid.next = true;
            self.dbg_kind.next = 0.into();
            self.dbg_arg.next = bit_cast::<32, 4>(self.pk_idx.val());
            self.hdr.d.next = self.la_hdr.val();
            self.row0.d.next = self.la_row.val();
            if self.la_len.val() > 64 {
                self.nrows.d.next =
                    (self.la_len.val() - 64 + self.c_rowmask.val()) >> self.c_rowlog.val();
            } else {
                self.nrows.d.next = 0.into();
            }
            self.f.d.next = self.pf.val();
            self.pc_count.d.next = self.c_count.val();
            for p in 0..self.hp_pop.len() {
                if self.pk_idx.val() == self.c_idx4[p].val() {
                    self.pc_pop.d.next = self.hp_pop[p].val();
                }
            }
            self.state.d.next = FrontState::Prep2;
        }
        self.la_chk.d.next = self.c_terms.val();
        // Sweep start: every `scan_ticks` ticks (0: no scan), while a timeout-mode job
        // exists.
        if !self.sweep_on.val()
            & self.any_to.val()
            & (self.scan_ticks.val() != 0)
            & (self.sweep_el.val() >= self.scan_ticks.val())
        {
            self.t_start.next = true;
            self.own_age.d.next = 0.into();
        }
        // A job commit or a session's epoch move restarts the scan's ownership test.
        if self.jc_q.val() | self.epoch_move.val() {
            self.own_age.d.next = 0.into();
        }
        if self.rst.val() {
            self.state.d.next = FrontState::Idle;
            self.own_age.d.next = 0.into();
        }
    }
}
