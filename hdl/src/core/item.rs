//! The item stage between DECIDE and the back end: one item (`sq_v`: it holds one) with
//! its fields (`sq_*`), the first round of a staged multicast item scanned while it waits
//! (`ps_*`: its children from index 0 while their egress ports are distinct, one read per
//! cycle from this block's copy of the child table, `chram3`; `sq_psd`: done), and the
//! last such scan kept for the next multicast item of the same job (`pc_*`; `pc_v`: valid,
//! cleared by a child-table write or a job commit, `ps_dirty`: one came during the scan).
//!
//! Two loaders write an item: DECIDE (`dec_go`; a multicast item, `mc`, is scanned or takes
//! the kept scan) and the root's session unit, an ACCEPT (`ac_go`); the item's fields come
//! in as `ld_*`, which the engine holds at the stage's own values (`*_q`) when a loader does
//! not write a field (DECIDE does not write `ld_b_nonce`, an ACCEPT not `ld_b_hdr` and
//! `ld_b_len`). The back end's hand-over empties the stage (`drain`, the engine's `sq_ld`,
//! from `sq_v`, `sq_psd` and the back end's `b_free`); DECIDE may load in the same cycle.
//! The engine writes the child table's rows to `chram3` as to its own (`c_*`) and strobes
//! a job commit (`jc`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::{ChildWord, CHILD_W};
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

use super::n;
use super::states::{BackState, OutFields};

/// The item stage (see the module documentation).
#[derive(LogicBlock)]
pub struct ItemStage {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// DECIDE loads its item (the first-round scan restarts from child 0).
    pub dec_go: Signal<In, bool>,
    /// The session unit's ACCEPT is loaded.
    pub ac_go: Signal<In, bool>,
    /// DECIDE's item is a multicast (scanned here, or the kept scan of its job taken).
    pub mc: Signal<In, bool>,
    /// The item moves to the back end (the engine's `sq_ld`).
    pub drain: Signal<In, bool>,
    /// A job commit (the kept scan is stale).
    pub jc: Signal<In, bool>,
    /// The child table's write address (a commit).
    pub c_waddr: Signal<In, Bits<ADDR_W>>,
    /// The child table's write data.
    pub c_wdata: Signal<In, Bits<CHILD_W>>,
    /// The child table's write enable (bit 0).
    pub c_we: Signal<In, Bits<32>>,
    /// The item's back-end state at hand-over.
    pub ld_hst: Signal<In, BackState>,
    /// The item releases its ingress rows (`rl`).
    pub ld_rl: Signal<In, bool>,
    /// The item's one payload row is `ld_b_nonce` (an ACCEPT).
    pub ld_reg: Signal<In, bool>,
    /// The ACCEPT's nonce.
    pub ld_b_nonce: Signal<In, Bits<32>>,
    /// The Acc operation of the item's rows.
    pub ld_agg_op: Signal<In, Bits<2>>,
    /// The item's slot copy.
    pub ld_b_cadr: Signal<In, Bits<ADDR_W>>,
    /// The item emits from the slot after its RMW.
    pub ld_b_emit: Signal<In, bool>,
    /// Rows the item emits.
    pub ld_b_enr: Signal<In, Bits<16>>,
    /// The item's frame carries the copy's overflow bit.
    pub ld_b_eovf: Signal<In, bool>,
    /// The frame's header region.
    pub ld_b_hdr: Signal<In, Bits<512>>,
    /// The item's job-table entry.
    pub ld_b_ji: Signal<In, Bits<8>>,
    /// The frame's length.
    pub ld_b_len: Signal<In, Bits<16>>,
    /// The job's children.
    pub ld_b_nch: Signal<In, Bits<8>>,
    /// The frame's payload rows.
    pub ld_b_nrows: Signal<In, Bits<16>>,
    /// The frame's first payload row.
    pub ld_b_row0: Signal<In, Bits<16>>,
    /// The frame's ingress port.
    pub ld_b_sel: Signal<In, Bits<4>>,
    /// The item emits one row.
    pub ld_e_last: Signal<In, bool>,
    /// The item emits from slot rows.
    pub ld_e_slot: Signal<In, bool>,
    /// The item relays an ACCEPT or REFUSE.
    pub ld_rly: Signal<In, bool>,
    /// The item emits rows.
    pub ld_e_more: Signal<In, bool>,
    /// Rows of the item's RMW.
    pub ld_nr: Signal<In, Bits<16>>,
    /// The originated frame's header fields.
    pub ld_o: Signal<In, OutFields>,
    /// The item's destination ports (a multicast's: from the scan).
    pub ld_pmask: Signal<In, Bits<8>>,
    /// The stage holds an item.
    pub v_q: Signal<Out, bool>,
    /// The item's first round is known (always, but for a multicast being scanned).
    pub psd_q: Signal<Out, bool>,
    /// The staged item's fields (as loaded, `ld_*`).
    pub hst_q: Signal<Out, BackState>,
    /// (`ld_rl`)
    pub rl_q: Signal<Out, bool>,
    /// (`ld_reg`)
    pub reg_q: Signal<Out, bool>,
    /// (`ld_b_nonce`)
    pub b_nonce_q: Signal<Out, Bits<32>>,
    /// (`ld_agg_op`)
    pub agg_op_q: Signal<Out, Bits<2>>,
    /// (`ld_b_cadr`)
    pub b_cadr_q: Signal<Out, Bits<ADDR_W>>,
    /// (`ld_b_emit`)
    pub b_emit_q: Signal<Out, bool>,
    /// (`ld_b_enr`)
    pub b_enr_q: Signal<Out, Bits<16>>,
    /// (`ld_b_eovf`)
    pub b_eovf_q: Signal<Out, bool>,
    /// (`ld_b_hdr`)
    pub b_hdr_q: Signal<Out, Bits<512>>,
    /// (`ld_b_ji`)
    pub b_ji_q: Signal<Out, Bits<8>>,
    /// (`ld_b_len`)
    pub b_len_q: Signal<Out, Bits<16>>,
    /// (`ld_b_nch`)
    pub b_nch_q: Signal<Out, Bits<8>>,
    /// (`ld_b_nrows`)
    pub b_nrows_q: Signal<Out, Bits<16>>,
    /// (`ld_b_row0`)
    pub b_row0_q: Signal<Out, Bits<16>>,
    /// (`ld_b_sel`)
    pub b_sel_q: Signal<Out, Bits<4>>,
    /// (`ld_e_last`)
    pub e_last_q: Signal<Out, bool>,
    /// The item is a multicast (`mc`).
    pub e_mc_q: Signal<Out, bool>,
    /// (`ld_rly`)
    pub rly_q: Signal<Out, bool>,
    /// (`ld_e_more`)
    pub e_more_q: Signal<Out, bool>,
    /// (`ld_e_slot`)
    pub e_slot_q: Signal<Out, bool>,
    /// (`ld_nr`)
    pub nr_q: Signal<Out, Bits<16>>,
    /// (`ld_o`)
    pub o_q: Signal<Out, OutFields>,
    /// The destination ports (a multicast's first round: its children's ports).
    pub pmask_q: Signal<Out, Bits<8>>,
    /// A multicast's next round starts at this child.
    pub ei_q: Signal<Out, Bits<8>>,
    /// A multicast has rounds after the first.
    pub more_q: Signal<Out, bool>,
    /// Per port: the first round's child on it (MAC, IPv4, UDP port, index).
    pub pp_mac_q: Vec<Signal<Out, Bits<48>>>,
    /// (see `pp_mac_q`)
    pub pp_ip_q: Vec<Signal<Out, Bits<32>>>,
    /// (see `pp_mac_q`)
    pub pp_udp_q: Vec<Signal<Out, Bits<16>>>,
    /// (see `pp_mac_q`)
    pub pp_child_q: Vec<Signal<Out, Bits<8>>>,
    sq_v: DFF<bool>,
    sq_hst: DFF<BackState>,
    sq_rl: DFF<bool>,
    sq_agg_op: DFF<Bits<2>>,
    sq_b_cadr: DFF<Bits<ADDR_W>>,
    sq_b_emit: DFF<bool>,
    sq_b_enr: DFF<Bits<16>>,
    sq_b_eovf: DFF<bool>,
    sq_b_hdr: DFF<Bits<512>>,
    sq_b_ji: DFF<Bits<8>>,
    sq_b_len: DFF<Bits<16>>,
    sq_b_nch: DFF<Bits<8>>,
    sq_b_nrows: DFF<Bits<16>>,
    sq_b_row0: DFF<Bits<16>>,
    sq_b_sel: DFF<Bits<4>>,
    sq_e_last: DFF<bool>,
    sq_e_mc: DFF<bool>,
    // The staged item relays an ACCEPT or REFUSE: its scans skip children without one of
    // its ranks, and its pushes are not `results_sent`.
    sq_rly: DFF<bool>,
    sq_e_more: DFF<bool>,
    sq_e_slot: DFF<bool>,
    sq_nr: DFF<Bits<16>>,
    sq_o: DFF<OutFields>,
    sq_pmask: DFF<Bits<8>>,
    // The staged item's one payload row is `sq_b_nonce` (an ACCEPT), not a buffer's.
    sq_reg: DFF<bool>,
    sq_b_nonce: DFF<Bits<32>>,
    // A multicast item's first round, scanned while it is staged (`sq_psd`: done): the
    // child ports (`sq_pmask`), each port's child (`sq_pp_*`), where the next round starts.
    sq_psd: DFF<bool>,
    sq_ei: DFF<Bits<8>>,
    sq_more: DFF<bool>,
    sq_pp_mac: Vec<DFF<Bits<48>>>,
    sq_pp_ip: Vec<DFF<Bits<32>>>,
    sq_pp_udp: Vec<DFF<Bits<16>>>,
    sq_pp_child: Vec<DFF<Bits<8>>>,
    ps_i: DFF<Bits<8>>,
    ps_j: DFF<Bits<8>>,
    ps_v: DFF<bool>,
    ps_port: Signal<Local, Bits<4>>,
    ps_hit: Signal<Local, bool>,
    // The child read in the item stage takes part in the round (a relay: one of its ranks).
    ps_ok: Signal<Local, bool>,
    chram3: FaninRam<CHILD_W>,
    // The last first-round scan, kept for the next multicast item of the same job
    // (`pc_v`: valid; cleared by a child-table write or a job commit).
    pc_v: DFF<bool>,
    pc_j: DFF<Bits<8>>,
    pc_pmask: DFF<Bits<8>>,
    pc_ei: DFF<Bits<8>>,
    pc_more: DFF<bool>,
    ps_dirty: DFF<bool>,
    ps_pm: Signal<Local, Bits<8>>,
    ps_done: Signal<Local, bool>,
    pc_hit: Signal<Local, bool>,
    c_idx4: Vec<Constant<Bits<4>>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
}

impl ItemStage {
    /// The item stage for a validated configuration (its ports, jobs and children).
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        let nj = cfg.max_jobs as usize;
        let mclog = cfg.child_bits();
        Self {
            clock: Default::default(),
            rst: Default::default(),
            dec_go: Default::default(),
            ac_go: Default::default(),
            mc: Default::default(),
            drain: Default::default(),
            jc: Default::default(),
            c_waddr: Default::default(),
            c_wdata: Default::default(),
            c_we: Default::default(),
            ld_hst: Default::default(),
            ld_rl: Default::default(),
            ld_reg: Default::default(),
            ld_b_nonce: Default::default(),
            ld_agg_op: Default::default(),
            ld_b_cadr: Default::default(),
            ld_b_emit: Default::default(),
            ld_b_enr: Default::default(),
            ld_b_eovf: Default::default(),
            ld_b_hdr: Default::default(),
            ld_b_ji: Default::default(),
            ld_b_len: Default::default(),
            ld_b_nch: Default::default(),
            ld_b_nrows: Default::default(),
            ld_b_row0: Default::default(),
            ld_b_sel: Default::default(),
            ld_e_last: Default::default(),
            ld_e_slot: Default::default(),
            ld_rly: Default::default(),
            ld_e_more: Default::default(),
            ld_nr: Default::default(),
            ld_o: Default::default(),
            ld_pmask: Default::default(),
            v_q: Default::default(),
            psd_q: Default::default(),
            hst_q: Default::default(),
            rl_q: Default::default(),
            reg_q: Default::default(),
            b_nonce_q: Default::default(),
            agg_op_q: Default::default(),
            b_cadr_q: Default::default(),
            b_emit_q: Default::default(),
            b_enr_q: Default::default(),
            b_eovf_q: Default::default(),
            b_hdr_q: Default::default(),
            b_ji_q: Default::default(),
            b_len_q: Default::default(),
            b_nch_q: Default::default(),
            b_nrows_q: Default::default(),
            b_row0_q: Default::default(),
            b_sel_q: Default::default(),
            e_last_q: Default::default(),
            e_mc_q: Default::default(),
            rly_q: Default::default(),
            e_more_q: Default::default(),
            e_slot_q: Default::default(),
            nr_q: Default::default(),
            o_q: Default::default(),
            pmask_q: Default::default(),
            ei_q: Default::default(),
            more_q: Default::default(),
            pp_mac_q: n(p),
            pp_ip_q: n(p),
            pp_udp_q: n(p),
            pp_child_q: n(p),
            sq_v: Default::default(),
            sq_hst: Default::default(),
            sq_rl: Default::default(),
            sq_agg_op: Default::default(),
            sq_b_cadr: Default::default(),
            sq_b_emit: Default::default(),
            sq_b_enr: Default::default(),
            sq_b_eovf: Default::default(),
            sq_b_hdr: Default::default(),
            sq_b_ji: Default::default(),
            sq_b_len: Default::default(),
            sq_b_nch: Default::default(),
            sq_b_nrows: Default::default(),
            sq_b_row0: Default::default(),
            sq_b_sel: Default::default(),
            sq_e_last: Default::default(),
            sq_e_mc: Default::default(),
            sq_rly: Default::default(),
            sq_e_more: Default::default(),
            sq_e_slot: Default::default(),
            sq_nr: Default::default(),
            sq_o: Default::default(),
            sq_pmask: Default::default(),
            sq_reg: Default::default(),
            sq_b_nonce: Default::default(),
            sq_psd: Default::default(),
            sq_ei: Default::default(),
            sq_more: Default::default(),
            sq_pp_mac: n(p),
            sq_pp_ip: n(p),
            sq_pp_udp: n(p),
            sq_pp_child: n(p),
            ps_i: Default::default(),
            ps_j: Default::default(),
            ps_v: Default::default(),
            ps_port: Default::default(),
            ps_hit: Default::default(),
            ps_ok: Default::default(),
            chram3: FaninRam::new(nj << mclog, 1),
            pc_v: Default::default(),
            pc_j: Default::default(),
            pc_pmask: Default::default(),
            pc_ei: Default::default(),
            pc_more: Default::default(),
            ps_dirty: Default::default(),
            ps_pm: Default::default(),
            ps_done: Default::default(),
            pc_hit: Default::default(),
            c_idx4: (0..p).map(|i| Constant::new((i as u64).into())).collect(),
            c_mclog: Constant::new((mclog as u64).into()),
            c_mcmask: Constant::new(((1u64 << mclog) - 1).into()),
        }
    }
}

impl Logic for ItemStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, sq_v, sq_hst, sq_rl, sq_agg_op, sq_b_cadr, sq_b_emit, sq_b_enr, sq_b_eovf,
            sq_b_hdr, sq_b_ji, sq_b_len, sq_b_nch, sq_b_nrows, sq_b_row0, sq_b_sel, sq_e_last,
            sq_e_mc, sq_rly, sq_e_more, sq_e_slot, sq_nr, sq_o, sq_pmask, sq_reg, sq_b_nonce,
            sq_psd, sq_ei, sq_more, ps_i, ps_j, ps_v, pc_v, pc_j, pc_pmask, pc_ei, pc_more,
            ps_dirty
        );
        for p in 0..self.sq_pp_mac.len() {
            self.sq_pp_mac[p].clock.next = self.clock.val();
            self.sq_pp_mac[p].d.next = self.sq_pp_mac[p].q.val();
            self.sq_pp_ip[p].clock.next = self.clock.val();
            self.sq_pp_ip[p].d.next = self.sq_pp_ip[p].q.val();
            self.sq_pp_udp[p].clock.next = self.clock.val();
            self.sq_pp_udp[p].d.next = self.sq_pp_udp[p].q.val();
            self.sq_pp_child[p].clock.next = self.clock.val();
            self.sq_pp_child[p].d.next = self.sq_pp_child[p].q.val();
            // Outputs: registers.
            self.pp_mac_q[p].next = self.sq_pp_mac[p].q.val();
            self.pp_ip_q[p].next = self.sq_pp_ip[p].q.val();
            self.pp_udp_q[p].next = self.sq_pp_udp[p].q.val();
            self.pp_child_q[p].next = self.sq_pp_child[p].q.val();
        }
        // The item stage's copy of the child table, written by commits as the engine's.
        self.chram3.clock.next = self.clock.val();
        self.chram3.waddr.next = self.c_waddr.val();
        self.chram3.wdata.next = self.c_wdata.val();
        self.chram3.we.next = self.c_we.val();
        // Outputs: registers.
        self.v_q.next = self.sq_v.q.val();
        self.psd_q.next = self.sq_psd.q.val();
        self.hst_q.next = self.sq_hst.q.val();
        self.rl_q.next = self.sq_rl.q.val();
        self.reg_q.next = self.sq_reg.q.val();
        self.b_nonce_q.next = self.sq_b_nonce.q.val();
        self.agg_op_q.next = self.sq_agg_op.q.val();
        self.b_cadr_q.next = self.sq_b_cadr.q.val();
        self.b_emit_q.next = self.sq_b_emit.q.val();
        self.b_enr_q.next = self.sq_b_enr.q.val();
        self.b_eovf_q.next = self.sq_b_eovf.q.val();
        self.b_hdr_q.next = self.sq_b_hdr.q.val();
        self.b_ji_q.next = self.sq_b_ji.q.val();
        self.b_len_q.next = self.sq_b_len.q.val();
        self.b_nch_q.next = self.sq_b_nch.q.val();
        self.b_nrows_q.next = self.sq_b_nrows.q.val();
        self.b_row0_q.next = self.sq_b_row0.q.val();
        self.b_sel_q.next = self.sq_b_sel.q.val();
        self.e_last_q.next = self.sq_e_last.q.val();
        self.e_mc_q.next = self.sq_e_mc.q.val();
        self.rly_q.next = self.sq_rly.q.val();
        self.e_more_q.next = self.sq_e_more.q.val();
        self.e_slot_q.next = self.sq_e_slot.q.val();
        self.nr_q.next = self.sq_nr.q.val();
        self.o_q.next = self.sq_o.q.val();
        self.pmask_q.next = self.sq_pmask.q.val();
        self.ei_q.next = self.sq_ei.q.val();
        self.more_q.next = self.sq_more.q.val();
        // The item moves to the back end; the stage is then free for the next item.
        if self.drain.val() {
            self.sq_v.d.next = false;
        }
        // The first round of a staged multicast item: its children from index 0 while
        // their ports are distinct (as the back end's child scan does for later rounds),
        // one read per cycle from the item stage's copy of the child table (`chram3`).
        self.chram3.raddr.next = (bit_cast::<ADDR_W, 8>(self.sq_b_ji.q.val())
            << self.c_mclog.val())
            | (bit_cast::<ADDR_W, 8>(self.ps_i.q.val()) & self.c_mcmask.val());
        self.ps_port.next = self.chram3.rdata.val().get_value_port();
        self.ps_hit.next =
            (self.sq_pmask.q.val() & (bits::<8>(1) << bit_cast::<8, 4>(self.ps_port.val()))) != 0;
        self.ps_ok.next = !self.sq_rly.q.val()
            | ((self.chram3.rdata.val().get_value_ranks() & self.sq_o.q.val().bitmap) != 0);
        self.ps_v.d.next = false;
        self.ps_pm.next = self.sq_pmask.q.val();
        self.ps_done.next = false;
        if self.sq_v.q.val() & !self.sq_psd.q.val() {
            if self.ps_i.q.val() < self.sq_b_nch.q.val() {
                self.ps_v.d.next = true;
                self.ps_j.d.next = self.ps_i.q.val();
                self.ps_i.d.next = self.ps_i.q.val() + 1;
            }
            if self.ps_v.q.val() & self.ps_ok.val() & self.ps_hit.val() {
                // A second child on a port already taken: the next round starts there.
                self.sq_ei.d.next = self.ps_j.q.val();
                self.sq_more.d.next = true;
                self.pc_ei.d.next = self.ps_j.q.val();
                self.pc_more.d.next = true;
                self.ps_done.next = true;
            } else {
                if self.ps_v.q.val() & self.ps_ok.val() {
                    self.ps_pm.next = self.sq_pmask.q.val()
                        | (bits::<8>(1) << bit_cast::<8, 4>(self.ps_port.val()));
                    self.sq_pmask.d.next = self.ps_pm.val();
                    for p in 0..self.sq_pp_mac.len() {
                        if self.ps_port.val() == self.c_idx4[p].val() {
                            self.sq_pp_mac[p].d.next = self.chram3.rdata.val().get_value_mac();
                            self.sq_pp_ip[p].d.next = self.chram3.rdata.val().get_value_ip();
                            self.sq_pp_udp[p].d.next = self.chram3.rdata.val().get_value_udp();
                            self.sq_pp_child[p].d.next = self.ps_j.q.val();
                        }
                    }
                }
                if self.ps_i.q.val() >= self.sq_b_nch.q.val() {
                    self.pc_ei.d.next = 0.into();
                    self.pc_more.d.next = false;
                    self.ps_done.next = true;
                }
            }
            if self.ps_done.val() {
                self.sq_psd.d.next = true;
                self.pc_v.d.next = !self.ps_dirty.q.val() & !self.sq_rly.q.val();
                self.pc_j.d.next = self.sq_b_ji.q.val();
                self.pc_pmask.d.next = self.ps_pm.val();
            }
        }
        // A multicast item of the job scanned last takes that scan's result.
        self.pc_hit.next = self.pc_v.q.val() & (self.pc_j.q.val() == self.ld_b_ji.val());
        // A loader's item (DECIDE's, or the session unit's ACCEPT; never both in a cycle,
        // nor while the scan above runs: the stage is then full and not emptied).
        if self.dec_go.val() | self.ac_go.val() {
            self.sq_v.d.next = true;
            self.sq_psd.d.next = true;
            self.sq_e_mc.d.next = false;
            self.sq_ei.d.next = 0.into();
            self.sq_more.d.next = false;
            self.sq_hst.d.next = self.ld_hst.val();
            self.sq_rl.d.next = self.ld_rl.val();
            self.sq_reg.d.next = self.ld_reg.val();
            self.sq_b_nonce.d.next = self.ld_b_nonce.val();
            self.sq_agg_op.d.next = self.ld_agg_op.val();
            self.sq_b_cadr.d.next = self.ld_b_cadr.val();
            self.sq_b_emit.d.next = self.ld_b_emit.val();
            self.sq_b_enr.d.next = self.ld_b_enr.val();
            self.sq_b_eovf.d.next = self.ld_b_eovf.val();
            self.sq_b_hdr.d.next = self.ld_b_hdr.val();
            self.sq_b_ji.d.next = self.ld_b_ji.val();
            self.sq_b_len.d.next = self.ld_b_len.val();
            self.sq_b_nch.d.next = self.ld_b_nch.val();
            self.sq_b_nrows.d.next = self.ld_b_nrows.val();
            self.sq_b_row0.d.next = self.ld_b_row0.val();
            self.sq_b_sel.d.next = self.ld_b_sel.val();
            self.sq_e_last.d.next = self.ld_e_last.val();
            self.sq_e_slot.d.next = self.ld_e_slot.val();
            self.sq_rly.d.next = self.ld_rly.val();
            self.sq_e_more.d.next = self.ld_e_more.val();
            self.sq_nr.d.next = self.ld_nr.val();
            self.sq_o.d.next = self.ld_o.val();
            self.sq_pmask.d.next = self.ld_pmask.val();
            if self.mc.val() {
                // A multicast item (a result passing down, or the root's result): its
                // first round is scanned here, or taken at once from the kept scan of the
                // same job.
                self.sq_e_mc.d.next = true;
                self.sq_psd.d.next = false;
                self.sq_pmask.d.next = 0.into();
                self.ps_dirty.d.next = false;
                // (The kept scan is of every child: not for a relay, whose scan skips
                // children.)
                if self.pc_hit.val() & !self.ld_rly.val() {
                    self.sq_psd.d.next = true;
                    self.sq_pmask.d.next = self.pc_pmask.q.val();
                    self.sq_ei.d.next = self.pc_ei.q.val();
                    self.sq_more.d.next = self.pc_more.q.val();
                }
            }
        }
        if self.dec_go.val() {
            self.ps_i.d.next = 0.into();
            self.ps_v.d.next = false;
        }
        // A child-table write or a job commit: the kept scan is stale (and so is the one
        // under way).
        if (self.c_we.val() != 0) | self.jc.val() {
            self.pc_v.d.next = false;
            self.ps_dirty.d.next = true;
        }
        if self.rst.val() {
            self.sq_v.d.next = false;
            self.pc_v.d.next = false;
        }
    }
}
