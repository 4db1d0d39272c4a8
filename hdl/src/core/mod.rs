//! The switch core: P ingress ports, the engine, P egress ports and the AXI4-Lite
//! register interface. Ports are rust-hdl `Vec`s; `verilog.rs` wraps the generated top in
//! `fanin_core` with flat per-port names.

// The decision mirrors the model branch by branch, in its order: several branches share a
// verdict (e.g. the malformed ones), and the collision condition is spelled as the model's.
// `hdl_gen` translates plain `match` arms only (no guards), so conditions stay inside the arms.
#![allow(
    clippy::if_same_then_else,
    clippy::nonminimal_bool,
    clippy::collapsible_match
)]

use crate::hdrgen::ArpLayout;
use crate::layout::JobWord;
use crate::parse::Parser;
use crate::ram::{FaninRam, ADDR_W};
use crate::rx::Rx;
use crate::tx::Tx;
use fanin_proto::model::Counter;
use rust_hdl::prelude::*;
use states::event;
pub use states::{
    Action, BackState, Conds, Ctx, DecState, Fields, FrontState, Merged, OutFields, ScanConds,
    SessState,
};

pub mod axil;
pub mod back;
pub mod commit;
pub mod copy;
pub mod counters;
pub mod csr;
pub mod dest;
pub mod dsel;
pub mod finish;
pub mod front;
pub mod hand;
pub mod item;
pub mod loads;
pub mod look;
pub mod lookup;
pub mod metaport;
mod new;
pub mod overflow;
pub mod pick;
pub mod pred;
pub mod readback;
pub mod session;
pub mod staging;
pub mod states;
pub mod timer;
mod util;

use axil::AxiLite;
use back::BackEnd;
use commit::Commit;
use counters::Counters;
use csr::Csr;
use dsel::DSel;
use front::FrontEnd;
use hand::Hand;
use item::ItemStage;
use loads::Loads;
use look::Look;
use lookup::Lookup;
use metaport::MetaPort;
use pick::Pick;
use pred::Pred;
use session::SessionUnit;
use timer::Timer;

pub use crate::layout::{CHILD_W, JOB_W, META_W};

// The states of the front end (`state`), the decision stages (`xstate`) and the back end
// (`bstate`), and the decision's actions, are the enums in `states.rs`; parser verdicts are
// `crate::parse::FrameClass`.

/// The fanin switch core for bus width `DW` (`KW` = DW/8) and internal bus width `WB`.
#[derive(LogicBlock)]
pub struct Core<const DW: usize, const KW: usize, const WB: usize> {
    /// Clock (all logic is in one clock domain).
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// Ingress AXI-Stream data, per port.
    pub s_tdata: Vec<Signal<In, Bits<DW>>>,
    /// Ingress byte enables.
    pub s_tkeep: Vec<Signal<In, Bits<KW>>>,
    /// Ingress valid.
    pub s_tvalid: Vec<Signal<In, bool>>,
    /// Ingress ready.
    pub s_tready: Vec<Signal<Out, bool>>,
    /// Ingress last.
    pub s_tlast: Vec<Signal<In, bool>>,
    /// Ingress bad-frame flag.
    pub s_tuser: Vec<Signal<In, bool>>,
    /// Egress data.
    pub m_tdata: Vec<Signal<Out, Bits<DW>>>,
    /// Egress byte enables.
    pub m_tkeep: Vec<Signal<Out, Bits<KW>>>,
    /// Egress valid.
    pub m_tvalid: Vec<Signal<Out, bool>>,
    /// Egress ready.
    pub m_tready: Vec<Signal<In, bool>>,
    /// Egress last.
    pub m_tlast: Vec<Signal<Out, bool>>,
    /// Egress user.
    pub m_tuser: Vec<Signal<Out, bool>>,
    /// The AXI4-Lite register interface (`axil.rs`; `s_axil_*` in `fanin_core`).
    pub axil: AxiLite,
    /// Monitor: the engine took a frame or the timer scan visited a slot this cycle.
    pub dbg_valid: Signal<Out, bool>,
    /// Monitor: 0 frame taken from ingress port `dbg_arg`; 1 timer scan of slot `dbg_arg`;
    /// 2 job-table entry `dbg_arg` committed.
    pub dbg_kind: Signal<Out, Bits<2>>,
    /// Monitor: port, slot or job-table entry.
    pub dbg_arg: Signal<Out, Bits<32>>,
    /// Monitor: the tick the decision uses as the model's `now`.
    pub dbg_tick: Signal<Out, Bits<32>>,
    // The control and status registers: AXI4-Lite, table staging and read-back (`csr.rs`,
    // `staging.rs`, `readback.rs`); the counters (`counters.rs`).
    csr: Csr,
    counters: Counters,
    // The root's session unit and per-entry session state (`session.rs`).
    sess: SessionUnit,
    rx: Vec<Rx<DW, KW, WB>>,
    tx: Vec<Tx<DW, KW, WB>>,
    parser: Parser,
    /// The ARP reply to the frame in the front end's `hdr` (pure wiring; the back end
    /// pushes it for an ARP request handed over).
    arp_lay: ArpLayout,
    // The slot copies' metadata RAM and its read side, the writes it misses forwarded
    // (`metaport.rs`).
    meta: MetaPort,
    // Job table: the packed entries in `jram` (read by index); the lookup (`lookup.rs`):
    // the entries' keys and busy counts, the job and route hits, each entry's slot copy
    // for the frame's block, the timer scan's ownership test.
    jram: FaninRam<JOB_W>,
    lookup: Lookup,
    // The child table and the back end's copy of it (the child scan of a later multicast
    // round). The port-below table (bypass source checks, `Switch::bypass_source_ok`): row
    // `entry << 3 | port`, read with the child entry. Both are written by `csr`'s commits.
    chram: FaninRam<CHILD_W>,
    chram2: FaninRam<CHILD_W>,
    pbram: FaninRam<64>,
    // The front end's port pick and look-ahead (`pick.rs`): the ports' registered heads,
    // the round-robin arbiter, the registered pick, the picked port's head registered, and
    // each port's bitmap population count.
    pick: Pick,
    // Timer and scan: the tick, the sweep and the scan's pointer (`timer.rs`).
    timer: Timer,
    // The front end (`front.rs`): the take, PREP2, PARSE and the timer scan's visits.
    front: FrontEnd,
    // The hand-overs of this cycle (`hand.rs`): the back end free, the item stage's item
    // to it, LOOK's frame to PRED.
    hand: Hand,
    // LOOK: the frame PARSE handed over, waiting for the decision stages (`look.rs`).
    look: Look,
    // Decision stages (PRED, DSEL, DECIDE): their own copy of the decision's context, so
    // that the front end can take, parse and look up the next frame meanwhile.
    xstate: DFF<DecState>,
    x_mg: DFF<Merged>,
    xp_f: DFF<Fields>,
    x_je: DFF<Bits<JOB_W>>,
    x_jep: DFF<Bits<32>>,
    x_ji: DFF<Bits<8>>,
    x_cadr: DFF<Bits<ADDR_W>>,
    x_c: DFF<Ctx>,
    // The frame in the decision stages is a JOIN: LOOK waits until its DECIDE.
    x_join: DFF<bool>,
    // PRED's conditions, terms of registers (`pred.rs`), and those registered in PRED:
    // the conditions DSEL reads (`states::Conds`, `dsel.rs`), and the others; the quota
    // condition for the outcomes of a busy-count update in flight (`q_qf_p`/`q_qf_m`,
    // selected by `q_bi`/`q_bd`).
    pred: Pred,
    q_c: DFF<Conds>,
    q_qfull: DFF<bool>,
    q_qf_p: DFF<bool>,
    q_qf_m: DFF<bool>,
    q_bi: DFF<bool>,
    q_bd: DFF<bool>,
    qf: Signal<Local, bool>,
    // DSEL (`dsel.rs`): the branch for DECIDE.
    dsel: DSel,
    // DECIDE's own copy of the frame's fields (loaded in DSEL), so that the next frame
    // can leave LOOK for PRED while this one is in DSEL (`xo_v`: PRED runs beside an
    // older frame's DECIDE).
    xo_v: DFF<bool>,
    dx_f: DFF<Fields>,
    dx_ji: DFF<Bits<8>>,
    dx_cadr: DFF<Bits<ADDR_W>>,
    dx_c: DFF<Ctx>,
    dec_v: Signal<Local, bool>,
    // DECIDE's and the session unit's ACCEPT's items for the item stage, with DECIDE's
    // effects: terms of registers (`loads.rs`).
    loads: Loads,
    // The item stage between DECIDE and the back end, with a multicast item's first round
    // of children scanned while it waits and the last such scan kept (`item.rs`).
    item: ItemStage,
    // The back end (`back.rs`): the row work of one item at a time, its destinations, the
    // Acc.
    back: BackEnd<WB>,
    // Busy-count updates (`bz_*`, `hwc`; registered a cycle after the decision, `bq_*`),
    // counter events (`ev`; the back end's, `ev_b`), the ports' takes.
    bz_inc: Signal<Local, bool>,
    bz_dec: Signal<Local, bool>,
    bz_j: Signal<Local, Bits<8>>,
    hwc: Signal<Local, bool>,
    bq_inc: DFF<bool>,
    bq_dec: DFF<bool>,
    bq_hwc: DFF<bool>,
    bq_j: DFF<Bits<8>>,
    ev: Signal<Local, Bits<32>>,
    ev_b: Signal<Local, Bits<32>>,
    rx_ev: Vec<Signal<Local, bool>>,
    // `high` update: DECIDE's (entry, block), then the entry's `high` read, then the write.
    hu_v: DFF<bool>,
    hu_j: DFF<Bits<8>>,
    hu_b: DFF<Bits<32>>,
    // Job commits and the job table's write port (`commit.rs`).
    commit: Commit,
    // Constants (from the configuration) and named values (`states.rs`): counter events
    // (`ev_<counter>`: bit k of `ev` counts `Counter::ALL[k]`), packet types.
    c_idx4: Vec<Constant<Bits<4>>>,
    c_rowlog: Constant<Bits<16>>,
    c_rowmask: Constant<Bits<16>>,
    c_lanes: Constant<Bits<16>>,
    ev_results_sent: Constant<Bits<32>>,
    ev_sessions: Constant<Bits<32>>,
    pt_join: Constant<Bits<8>>,
}

impl<const DW: usize, const KW: usize, const WB: usize> Logic for Core<DW, KW, WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, xstate, x_mg, xp_f, x_je, x_jep, x_ji, x_cadr, x_c, x_join, q_c, q_qfull,
            q_qf_p, q_qf_m, q_bi, q_bd, xo_v, dx_f, dx_ji, dx_cadr, dx_c, bq_inc, bq_dec, bq_hwc,
            bq_j, hu_v, hu_j, hu_b
        );
        self.meta.clock.next = self.clock.val();
        self.meta.rst.next = self.rst.val();
        self.jram.clock.next = self.clock.val();
        self.chram.clock.next = self.clock.val();
        self.pbram.clock.next = self.clock.val();
        self.chram2.clock.next = self.clock.val();
        self.item.clock.next = self.clock.val();
        self.item.rst.next = self.rst.val();
        // Timer and scan (`timer.rs`: `tick_div` cycles per tick, the block's); the scan's
        // strobes are the front end's (its visits and the sweep start).
        self.timer.clock.next = self.clock.val();
        self.timer.rst.next = self.rst.val();
        self.timer.tick_div.next = self.csr.tick_div.val();
        self.timer.adv.next = self.front.t_adv.val();
        self.timer.start.next = self.front.t_start.val();
        self.timer.c_set.next = self.front.t_cset.val();
        self.timer.c_clr.next = self.front.t_cclr.val();
        self.arp_lay.req.next = self.front.c.val().hdr;
        self.arp_lay.mac.next = self.csr.me_mac.val();
        self.arp_lay.ip.next = self.csr.me_ip.val();
        // Ports: wire the AXI-Stream interfaces to the ingress/egress blocks.
        for p in 0..self.rx.len() {
            self.rx[p].clock.next = self.clock.val();
            self.rx[p].rst.next = self.rst.val();
            self.rx[p].tdata.next = self.s_tdata[p].val();
            self.rx[p].tkeep.next = self.s_tkeep[p].val();
            self.rx[p].tvalid.next = self.s_tvalid[p].val();
            self.rx[p].tlast.next = self.s_tlast[p].val();
            self.rx[p].tuser.next = self.s_tuser[p].val();
            self.s_tready[p].next = self.rx[p].tready.val();
            self.rx[p].r_addr.next = self.back.r_addr.val();
            self.rx[p].rel_row.next = self.back.rel_row.val();
            self.rx[p].d_pop.next = false;
            self.rx[p].rel.next = false;
            self.tx[p].clock.next = self.clock.val();
            self.tx[p].rst.next = self.rst.val();
            self.m_tdata[p].next = self.tx[p].tdata.val();
            self.m_tkeep[p].next = self.tx[p].tkeep.val();
            self.m_tvalid[p].next = self.tx[p].tvalid.val();
            self.m_tlast[p].next = self.tx[p].tlast.val();
            self.m_tuser[p].next = self.tx[p].tuser.val();
            self.tx[p].tready.next = self.m_tready[p].val();
            self.tx[p].w_we.next = self.back.w_we.val().get_bit(p);
            self.tx[p].push.next = self.back.push.val().get_bit(p);
            self.tx[p].w_row.next = self.back.w_row.val();
            self.tx[p].p_hdr.next = self.back.p_hdr.val();
            self.tx[p].p_len.next = self.back.p_len.val();
            self.rx_ev[p].next = false;
        }
        // The port pick and look-ahead (`pick.rs`): the picked port's head, registered
        // (`la_*_q`), and the parser on it, so that a frame's fields and checks are ready in
        // the cycle it is taken (the front end registers them at the take, `front.rs`).
        self.parser.hdr.next = self.pick.la_hdr_q.val();
        self.parser.len.next = self.pick.la_len_q.val();
        self.parser.me_ip.next = self.csr.me_ip.val();
        self.parser.me_port.next = self.csr.me_port.val();
        self.parser.udp_ok.next = self.pick.la_udp_q.val();
        self.parser.ip_ok.next = self.pick.la_ip_q.val();
        // The job table's write port: job commits and a session's epoch move at the root
        // (`commit.rs`).
        self.jram.waddr.next = self.commit.waddr.val();
        self.jram.wdata.next = self.commit.wdata.val();
        self.jram.we.next = self.commit.we.val();
        // The tables' reads are the front end's: the job entry (PARSE, or the entry a slot
        // copy was written under for a scan visit), the child and port-below entries
        // (PARSE's, held while LOOK waits), the slot copy's metadata.
        self.jram.raddr.next = self.front.j_raddr.val();
        self.chram.raddr.next = self.front.ch_raddr.val();
        self.pbram.raddr.next = self.front.pb_raddr.val();
        self.meta.raddr.next = self.front.m_raddr.val();
        // The metadata write: the scan's (SDEC), or DECIDE's (below).
        self.meta.waddr.next = self.front.cadr_q.val();
        self.meta.wdata.next = self.front.m_wdata.val();
        self.meta.we.next = 0.into();
        if self.front.m_we.val() {
            self.meta.we.next = 1.into();
        }
        // PRED's conditions (`pred.rs`), terms of registers: the copy just read against
        // the frame in PRED, or against its job entry for a scan visit.
        self.pred.m.next = self.meta.m.val();
        self.pred.sj.next = self.jram.rdata.val();
        self.pred.e_scan.next = self.front.e_scan_q.val();
        self.pred.x_ji.next = self.x_ji.q.val();
        self.pred.jep.next = self.look.jep_q.val();
        self.pred.f.next = self.xp_f.q.val();
        self.pred.now.next = self.x_c.q.val().now;
        self.pred.je.next = self.look.je_q.val();
        self.pred.bcur.next = self.look.bcur_q.val();
        self.pred.bcd.next = self.look.bcd_q.val();
        self.pred.rowmask.next = self.c_rowmask.val();
        self.pred.rowlog.next = self.c_rowlog.val();
        self.pred.chr.next = self.look.chr_q.val();
        self.pred.pbr.next = self.look.pbr_q.val();
        self.pred.sbq.next = self.look.sbq_q.val();
        self.pred.soq.next = self.look.soq_q.val();
        self.pred.sel.next = self.x_c.q.val().sel;
        self.pred.lanes.next = self.c_lanes.val();
        self.pred.sage.next = self.front.sage_q.val();
        self.pred.tage.next = self.front.tage_q.val();
        // Busy-count updates and counter events: the front end's (a scan's reclaim, the
        // counter of a frame handed over), or DECIDE's (below).
        self.bz_inc.next = false;
        self.bz_dec.next = self.front.bz_dec.val();
        self.bz_j.next = self.front.bz_j.val();
        self.hwc.next = false;
        self.ev.next = self.front.ev.val();
        self.ev_b.next = 0.into();
        self.dbg_valid.next = self.front.dbg_valid.val();
        self.dbg_kind.next = self.front.dbg_kind.val();
        self.dbg_arg.next = self.front.dbg_arg.val();
        self.dbg_tick.next = self.timer.now_q.val();
        // ---- Back end (`back.rs`): its inputs. ----
        self.back.clock.next = self.clock.val();
        self.back.room.next = self.hand.all_rdy.val();
        self.back.ch_data.next = self.chram2.rdata.val();
        self.chram2.raddr.next = self.back.ch_addr.val();
        for p in 0..self.rx.len() {
            self.back.rx_data[p].next = self.rx[p].r_data.val();
        }
        // ---- Hand-over (`hand.rs`): the back end takes its next item when it is idle or
        // finishing its item this cycle (`b_free`): the item stage's (`sq_ld`) or the front
        // end's (`front.h_go`). A finished item releases its frame's rows. ----
        self.hand.done_now.next = self.back.done_now.val();
        self.hand.done_if_room.next = self.back.done_if_room.val();
        self.hand.b_idle.next = self.back.idle.val();
        self.hand.pmask.next = self.back.pmask_q.val();
        for p in 0..self.rx.len() {
            self.hand.tx_rdy[p].next = self.tx[p].ready.val();
        }
        self.hand.item_v.next = self.item.v_q.val();
        self.hand.item_psd.next = self.item.psd_q.val();
        self.hand.look_v.next = self.look.v_q.val();
        self.hand.look_ne.next = self.look.ne_q.val();
        self.hand.look_old.next = self.look.old_q.val();
        self.hand.x_join.next = self.x_join.q.val();
        self.hand.sess_busy.next = self.sess.busy.val();
        self.hand.xstate.next = self.xstate.q.val();
        if self.hand.b_done.val() & self.back.rel_q.val() {
            for p in 0..self.rx.len() {
                if self.back.sel_q.val() == self.c_idx4[p].val() {
                    self.rx[p].rel.next = true;
                }
            }
        }
        if self.back.push_mc.val() {
            self.ev_b.next = self.ev_results_sent.val();
        }
        // The front end's frame (the back end loads it whenever it is free) and its item.
        self.back.f_go.next = self.front.h_go.val();
        self.back.f_st.next = self.front.h_st.val();
        self.back.f_rl.next = self.x_mg.q.val().rle1;
        self.back.fi.next = self.front.fi.val();
        // The scan's flush (`fi.slot`, SDEC): the copy's partial aggregate to the parent
        // (`loads.rs`).
        self.back.f_o.next = self.loads.sf_o.val();
        // The item DECIDE staged moves to the back end when the back end is idle or
        // finishing its item; the stage is then free for the next decision's item.
        self.back.l_go.next = self.hand.sq_ld.val();
        self.back.l_item.next = self.item.sq_q.val();
        self.back.l_o.next = self.item.o_q.val();
        for p in 0..self.rx.len() {
            self.back.l_pp_mac[p].next = self.item.pp_mac_q[p].val();
            self.back.l_pp_ip[p].next = self.item.pp_ip_q[p].val();
            self.back.l_pp_udp[p].next = self.item.pp_udp_q[p].val();
            self.back.l_pp_child[p].next = self.item.pp_child_q[p].val();
        }
        // The item stage (`item.rs`): emptied by the hand-over above; DECIDE and the
        // session unit's ACCEPT load it below (`dec_go`, `ac_go`), a field they do not
        // write holding the stage's value. It scans a multicast item's first round itself.
        self.item.drain.next = self.hand.sq_ld.val();
        self.item.dec_go.next = false;
        self.item.ac_go.next = false;
        self.item.mc.next = false;
        self.item.mc_ji.next = self.dx_ji.q.val();
        self.item.mc_rly.next = self.dsel.q.val().act == Action::Relay;
        self.item.ld.next = self.item.sq_q.val();
        self.item.ld_o.next = self.item.o_q.val();
        // ---- Front end (`front.rs`): one frame or scan visit at a time, in the order of
        // the dbg events. PARSE hands a frame of a known job to LOOK (`look.load`) when
        // LOOK is free or its frame moves to PRED (`hand.lk_go`) in this cycle. ----
        self.look.go.next = self.hand.lk_go.val();
        self.look.load.next = self.front.look_load.val();
        // A scan visit's tick is the decision stages' `now` (PRED's age terms).
        if self.front.scan_go.val() {
            self.x_c.d.next.now = self.timer.now_q.val();
        }
        // DECIDE holds a frame: the newest one, or an older one beside PRED (`xo_v`).
        self.dec_v.next = (self.xstate.q.val() == DecState::Decide) | self.xo_v.q.val();
        // DECIDE holds a frame: its item and effects (`loads.rs`) are terms of its
        // registers (`dsel.q`, the conditions, the context), applied when DECIDE
        // completes and forwarded to the frame in LOOK, which may move to PRED in the same
        // cycle.
        self.loads.br.next = self.dsel.q.val();
        self.loads.f.next = self.dx_f.q.val();
        self.loads.c.next = self.dx_c.q.val();
        self.loads.ji.next = self.dx_ji.q.val();
        self.loads.cadr.next = self.dx_cadr.q.val();
        self.loads.je.next = self.x_je.q.val();
        self.loads.jep.next = self.x_jep.q.val();
        self.loads.mg.next = self.x_mg.q.val();
        self.loads.busy_st.next = self.q_c.q.val().busy_st;
        self.loads.samebl.next = self.q_c.q.val().samebl;
        self.loads.me_mac.next = self.csr.me_mac.val();
        self.loads.me_ip.next = self.csr.me_ip.val();
        self.loads.me_port.next = self.csr.me_port.val();
        self.loads.sq.next = self.item.sq_q.val();
        self.loads.ac_in.next = self.sess.ac.val();
        self.loads.ac_entry.next = self.sess.entry.val();
        self.loads.sm.next = self.meta.m.val();
        self.loads.sj.next = self.front.sj_q.val();
        self.loads.spartial.next = self.front.s_q.val().partial;
        // ---- Decision stages (`xstate`: PRED, DSEL, DECIDE), overlapping the front
        // end's take, PREP2, PARSE and LOOK of the next frame. ----
        // DECIDE (before PRED and DSEL below: with an older frame in DECIDE while the next
        // one is in PRED, `xo_v`, PRED's `xstate` wins).
        self.hu_v.d.next = false;
        self.sess.join_go.next = false;
        if self.dec_v.val() {
            // DECIDE (Switch::contribution / result / same_block / try_complete): slot
            // metadata, busy counts and counters change here, in decision order; the rows
            // are the back end's. The item is staged (`sq_*`); waits until the stage is
            // free or being emptied this cycle.
            if !self.item.v_q.val() | self.hand.sq_ld.val() {
                self.item.dec_go.next = true;
                // (Only the JOIN's own DECIDE ends the wait: with two frames in the decision
                // stages, the older one's DECIDE comes first.)
                if self.dx_f.q.val().ptype == self.pt_join.val() {
                    self.x_join.d.next = false;
                }
                // A contribution past the session floor: `high` moves on (two cycles on).
                self.hu_v.d.next = self.dsel.q.val().hup;
                self.hu_j.d.next = self.dx_ji.q.val();
                self.hu_b.d.next = self.dx_f.q.val().block;
                self.xstate.d.next = DecState::Idle;
                // The item, its counter events, the metadata write and the busy-count
                // update (`loads.rs`); a JOIN goes to the session unit.
                self.item.ld.next = self.loads.ld.val();
                self.item.ld_o.next = self.loads.ld_o.val();
                self.item.mc.next = self.loads.mc.val();
                self.ev.next = self.loads.ev.val();
                self.sess.join_go.next = self.loads.join_go.val();
                self.meta.waddr.next = self.dx_cadr.q.val();
                if self.loads.dwe.val() {
                    self.meta.wdata.next = self.loads.dwd.val();
                    self.meta.we.next = 1.into();
                }
                self.bz_j.next = self.dx_ji.q.val();
                self.bz_inc.next = self.loads.dbi.val();
                self.bz_dec.next = self.loads.dbd.val();
                self.hwc.next = self.loads.dhwc.val();
            }
        }
        // The quota condition for DSEL (see `q_bi`).
        if self.q_bi.q.val() {
            self.qf.next = self.q_qf_p.q.val();
        } else if self.q_bd.q.val() {
            self.qf.next = self.q_qf_m.q.val();
        } else {
            self.qf.next = self.q_qfull.q.val();
        }
        match self.xstate.q.val() {
            DecState::Pred => {
                // PRED: the decision's conditions on the copy's metadata, the packet and the
                // job entry, registered (the metadata read stays on the same address).
                self.q_c.d.next = self.pred.c.val();
                self.q_qfull.d.next = self.pred.qf0.val();
                self.q_qf_p.d.next = self.pred.qfp.val();
                self.q_qf_m.d.next = self.pred.qfm.val();
                // An older frame's DECIDE beside this PRED (it completes now) changes the
                // busy count of its job by `dbi`/`dbd`: DSEL picks the matching condition.
                self.q_bi.d.next = self.xo_v.q.val()
                    & self.loads.dbi.val()
                    & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.q_bd.d.next = self.xo_v.q.val()
                    & self.loads.dbd.val()
                    & (self.dx_ji.q.val() == self.x_ji.q.val());
                self.xstate.d.next = DecState::DSel;
                // The decision's context, copied for DSEL and DECIDE (the frame's fields
                // were copied when it left LOOK): LOOK registers the next frame's meanwhile.
                self.x_mg.d.next = self.pred.mg.val();
                self.x_je.d.next = self.look.je_q.val();
                self.x_jep.d.next = self.look.jep_q.val();
            }
            DecState::DSel => {
                // DSEL: the branch (`dsel.rs`, strobed by `dsel.go`).
                self.xstate.d.next = DecState::Decide;
                // DECIDE's copy of the frame's fields: the next frame may leave LOOK now.
                self.dx_f.d.next = self.xp_f.q.val();
                self.dx_ji.d.next = self.x_ji.q.val();
                self.dx_cadr.d.next = self.x_cadr.q.val();
                self.dx_c.d.next = self.x_c.q.val();
            }
            _ => {}
        }
        // DSEL's inputs (`dsel.rs`).
        self.dsel.clock.next = self.clock.val();
        self.dsel.go.next = self.xstate.q.val() == DecState::DSel;
        self.dsel.ptype.next = self.xp_f.q.val().ptype;
        self.dsel.flags.next = self.xp_f.q.val().flags;
        self.dsel.inner.next = self.x_je.q.val().get_value_inner();
        self.dsel.sessions.next = self.x_je.q.val().get_value_sessions();
        self.dsel.c.next = self.q_c.q.val();
        self.dsel.qf.next = self.qf.val();
        // ---- LOOK (`look.rs`): PARSE's frame waits for the decision stages and moves to
        // PRED at `hand.lk_go`, its fields copied into their registers (below). ----
        self.xo_v.d.next = false;
        self.look.clock.next = self.clock.val();
        self.look.rst.next = self.rst.val();
        self.look.f.next = self.front.f_q.val();
        self.look.c.next = self.front.c.val();
        self.look.ji.next = self.front.ji_q.val();
        self.look.cadr.next = self.front.cadr_q.val();
        self.look.x_cadr.next = self.x_cadr.q.val();
        self.look.jr.next = self.jram.rdata.val();
        self.look.ch.next = self.chram.rdata.val();
        self.look.pb.next = self.pbram.rdata.val();
        for j in 0..self.lookup.jbusy.len() {
            self.look.jbusy[j].next = self.lookup.jbusy[j].val();
        }
        for j in 0..self.sess.ss_base.len() {
            self.look.ss_base[j].next = self.sess.ss_base[j].val();
            self.look.ss_open[j].next = self.sess.ss_open[j].val();
        }
        self.look.dec_v.next = self.dec_v.val();
        self.look.dbi.next = self.loads.dbi.val();
        self.look.dbd.next = self.loads.dbd.val();
        self.look.dx_ji.next = self.dx_ji.q.val();
        self.look.bq_inc.next = self.bq_inc.q.val();
        self.look.bq_dec.next = self.bq_dec.q.val();
        self.look.bq_j.next = self.bq_j.q.val();
        if self.hand.lk_go.val() {
            self.x_join.d.next = self.look.f_q.val().ptype == self.pt_join.val();
            self.xstate.d.next = DecState::Pred;
            self.xo_v.d.next = self.xstate.q.val() == DecState::DSel;
            self.xp_f.d.next = self.look.f_q.val();
            self.x_ji.d.next = self.front.ji_q.val();
            self.x_cadr.d.next = self.front.cadr_q.val();
            self.x_c.d.next = self.look.c_q.val();
        }
        // DECIDE's write in this cycle, forwarded to the metadata read (`metaport.rs`), for
        // a frame leaving LOOK.
        self.meta.dw_v.next = self.dec_v.val() & self.loads.dwe.val();
        self.meta.dw_a.next = self.dx_cadr.q.val();
        self.meta.dw_d.next = self.loads.dwd.val();
        // The take pops the frame's descriptor from its port.
        if self.front.take.val() {
            for p in 0..self.rx.len() {
                if self.pick.pk_idx_q.val() == self.c_idx4[p].val() {
                    self.rx[p].d_pop.next = true;
                    self.rx_ev[p].next = true;
                }
            }
        }
        // The control and status registers (`csr.rs`): the AXI4-Lite slave, the staging,
        // identity, timer and route registers, the counters and the table read-back.
        self.csr.clock.next = self.clock.val();
        self.csr.rst.next = self.rst.val();
        AxiLite::link(&mut self.axil, &mut self.csr.axil);
        // The child table and the back end's and the item stage's copies of it (their own
        // read ports for multicast rounds), and the port-below table, written by commits.
        self.chram.waddr.next = self.csr.child_waddr.val();
        self.chram.wdata.next = self.csr.child_wdata.val();
        self.chram.we.next = self.csr.child_we.val();
        self.chram2.waddr.next = self.csr.child_waddr.val();
        self.chram2.wdata.next = self.csr.child_wdata.val();
        self.chram2.we.next = self.csr.child_we.val();
        self.item.c_waddr.next = self.csr.child_waddr.val();
        self.item.c_wdata.next = self.csr.child_wdata.val();
        self.item.c_we.next = self.csr.child_we.val();
        self.pbram.waddr.next = self.csr.pb_waddr.val();
        self.pbram.wdata.next = self.csr.pb_wdata.val();
        self.pbram.we.next = self.csr.pb_we.val();
        // (A job commit makes the item stage's kept scan stale, as a child-table write.)
        self.item.jc.next = self.commit.go.val();
        // ---- The root's session unit (`session.rs`): a JOIN handed over by DECIDE, the
        // session state LOOK and PRED read, and the ACCEPTs it offers, staged here when the
        // item stage is free (`Switch::accept_frame`: one element, the nonce). ----
        self.sess.clock.next = self.clock.val();
        self.sess.rst.next = self.rst.val();
        self.sess.ac_take.next = false;
        if self.sess.ac_ready.val() & !self.item.v_q.val() & !self.dec_v.val() {
            self.sess.ac_take.next = true;
            self.item.ac_go.next = true;
            self.item.ld.next = self.loads.ac.val();
            self.item.ld_o.next = self.loads.ac_o.val();
        }
        // A session opened at the root: `sessions` (a JOIN was counted in `joins` at its
        // decision).
        if self.sess.opened.val() {
            self.ev.next = self.ev.val() | self.ev_sessions.val();
        }
        // Occupancy: slots_in_use (counter 0), its high water (counter 1), per-job busy
        // copies, a cycle after the decision (`bq_*`; a frame in LOOK latches the count
        // with the update of the decision of the cycle before, `bq_*`, or of DECIDE in the
        // same cycle, `dbi`/`dbd`, added in PRED).
        self.bq_inc.d.next = self.bz_inc.val();
        self.bq_dec.d.next = self.bz_dec.val();
        self.bq_hwc.d.next = self.hwc.val();
        self.bq_j.d.next = self.bz_j.val();
        // Job commits (`commit.rs`): requested by a register write, applied by the front
        // end when it is idle (`front.jc`).
        self.commit.clock.next = self.clock.val();
        self.commit.rst.next = self.rst.val();
        self.commit.req.next = self.csr.job_commit.val();
        self.commit.req_entry.next = self.csr.job_commit_entry.val();
        self.commit.job_word.next = self.csr.job_word.val();
        self.commit.apply.next = self.front.jc.val();
        self.commit.epoch_move.next = self.sess.epoch_move.val();
        self.commit.sess_entry.next = self.sess.entry.val();
        self.commit.x_je.next = self.x_je.q.val();
        for j in 0..self.lookup.jbusy.len() {
            self.commit.jbusy[j].next = self.lookup.jbusy[j].val();
        }
        // The session unit's inputs (after every assignment to them).
        self.sess.join_entry.next = self.dx_ji.q.val();
        self.sess.join_f.next = self.dx_f.q.val();
        self.sess.join_port.next = self.dx_c.q.val().sel;
        self.sess.join_ranks.next = self.x_je.q.val().get_value_ranks();
        self.sess.hu_v.next = self.hu_v.q.val();
        self.sess.hu_j.next = self.hu_j.q.val();
        self.sess.hu_b.next = self.hu_b.q.val();
        // A job commit: the entry starts without a session (`Session::new`).
        self.sess.reset.next = self.commit.q.val();
        self.sess.reset_entry.next = self.commit.entry_q.val();
        self.sess.reset_high.next = self.commit.word.val().get_value_first_block() - 1;
        for j in 0..self.lookup.jcm.len() {
            self.sess.jcm[j].next = self.lookup.jcm[j].val();
        }
        // The front end's inputs: registers and sub-block outputs only (`front.rs`).
        self.front.clock.next = self.clock.val();
        self.front.rst.next = self.rst.val();
        self.front.b_free.next = self.hand.b_free.val();
        self.front.lk_free.next = self.hand.lk_free.val();
        self.front.xstate.next = self.xstate.q.val();
        self.front.look_v.next = self.look.v_q.val();
        self.front.item_v.next = self.item.v_q.val();
        self.front.sess_busy.next = self.sess.busy.val();
        self.front.epoch_move.next = self.sess.epoch_move.val();
        self.front.jc_pend.next = self.commit.pend_q.val();
        self.front.jc_q.next = self.commit.q.val();
        self.front.jc_i.next = self.commit.entry_q.val();
        self.front.pk_any.next = self.pick.pk_any_q.val();
        self.front.la_ok.next = self.pick.la_ok.val();
        self.front.pk_idx.next = self.pick.pk_idx_q.val();
        self.front.la_len.next = self.pick.la_len_q.val();
        self.front.la_hdr.next = self.pick.la_hdr_q.val();
        self.front.la_row.next = self.pick.la_row_q.val();
        for p in 0..self.rx.len() {
            self.front.hp_pop[p].next = self.pick.hp_pop_q[p].val();
        }
        self.front.pf.next = self.parser.f.val();
        self.front.c_terms.next = self.parser.c_terms.val();
        self.front.c_count.next = self.parser.c_count.val();
        self.front.jsel.next = self.lookup.jsel.val();
        self.front.jhit.next = self.lookup.jhit_q.val();
        self.front.rhit.next = self.lookup.rhit_q.val();
        for r in 0..self.lookup.rone.len() {
            self.front.rone[r].next = self.lookup.rone[r].val();
            self.front.route_pm[r].next = self.csr.route_pm[r].val();
        }
        self.front.slot.next = self.lookup.slot.val();
        self.front.ci.next = self.lookup.ci.val();
        self.front.own.next = self.lookup.own_q.val();
        self.front.any_to.next = self.lookup.any_to_q.val();
        self.front.sweep_on.next = self.timer.sweep_on_q.val();
        self.front.now.next = self.timer.now_q.val();
        self.front.scan_ptr.next = self.timer.scan_ptr_q.val();
        self.front.scan_c.next = self.timer.scan_c_q.val();
        self.front.sweep_el.next = self.timer.sweep_el_q.val();
        self.front.scan_ticks.next = self.csr.scan_ticks.val();
        self.front.arp_y.next = self.arp_lay.y.val();
        self.front.m.next = self.meta.m.val();
        self.front.jr.next = self.jram.rdata.val();
        self.front.age.next = self.pred.age.val();
        self.front.s.next = self.pred.s.val();
        // The lookup's inputs (after every assignment to them).
        self.lookup.clock.next = self.clock.val();
        self.lookup.rst.next = self.rst.val();
        self.lookup.hit_ld.next = self.front.take.val();
        self.lookup.job.next = self.parser.f.val().job;
        self.lookup.dst_ip.next = self.parser.dst_ip.val();
        for r in 0..self.lookup.route_ip.len() {
            self.lookup.route_valid[r].next = self.csr.route_valid[r].val();
            self.lookup.route_ip[r].next = self.csr.route_ip[r].val();
        }
        self.lookup.frame_block.next = self.front.f_q.val().block;
        self.lookup.scan_ptr.next = self.timer.scan_ptr_q.val();
        self.lookup.busy_inc.next = self.bq_inc.q.val();
        self.lookup.busy_dec.next = self.bq_dec.q.val();
        self.lookup.busy_entry.next = self.bq_j.q.val();
        self.lookup.commit.next = self.commit.go.val();
        self.lookup.commit_entry.next = self.commit.idx.val();
        self.lookup.commit_word.next = self.commit.word.val();
        // The pick's inputs (after every assignment to them).
        self.pick.clock.next = self.clock.val();
        for p in 0..self.rx.len() {
            self.pick.d_valid[p].next = self.rx[p].d_valid.val();
            self.pick.d_hdr[p].next = self.rx[p].d_hdr.val();
            self.pick.d_len[p].next = self.rx[p].d_len.val();
            self.pick.d_udp_ok[p].next = self.rx[p].d_udp_ok.val();
            self.pick.d_ip_ok[p].next = self.rx[p].d_ip_ok.val();
            self.pick.d_row[p].next = self.rx[p].d_row.val();
            self.pick.d_bitmap[p].next = self.rx[p].d_bitmap.val();
        }
        self.pick.last.next = self.front.c.val().sel;
        self.pick.take.next = self.front.take.val();
        // The control and status registers' inputs (after every assignment to them).
        // Register writes wait while a job commit is pending or being applied: it reads the
        // staged entry in its `commit.q` cycle.
        self.csr.hold.next = self.commit.pend_q.val() | self.commit.q.val();
        self.csr.now.next = self.timer.now_q.val();
        for j in 0..self.lookup.jbusy.len() {
            self.csr.jbusy[j].next = self.lookup.jbusy[j].val();
        }
        self.csr.jt_waddr.next = self.jram.waddr.val();
        self.csr.jt_wdata.next = self.jram.wdata.val();
        self.csr.jt_we.next = self.jram.we.val();
        self.csr.cnt_rd.next = self.counters.rd.val();
        // The counters: the engine's events and the register read address.
        self.counters.clock.next = self.clock.val();
        self.counters.rst.next = self.rst.val();
        self.counters.araddr.next = self.axil.araddr.val();
        self.counters.ev.next = self.ev.val();
        self.counters.ev_b.next = self.ev_b.val();
        self.counters.occ_inc.next = self.bq_inc.q.val();
        self.counters.occ_dec.next = self.bq_dec.q.val();
        self.counters.occ_hwc.next = self.bq_hwc.q.val();
        self.counters.occ_free.next = self.commit.freed.val();
        self.counters.rx_len.next = self.pick.la_len_q.val();
        for p in 0..self.rx.len() {
            self.counters.rx_take[p].next = self.rx_ev[p].val();
            self.counters.tx_sent[p].next = self.tx[p].sent.val();
            self.counters.tx_len[p].next = self.tx[p].sent_len.val();
            self.counters.rx_bad[p].next = self.rx[p].bad.val();
        }
        if self.rst.val() {
            self.xstate.d.next = DecState::Idle;
            self.xo_v.d.next = false;
            self.x_join.d.next = false;
            self.hu_v.d.next = false;
            self.bq_inc.d.next = false;
            self.bq_dec.d.next = false;
        }
    }
}
