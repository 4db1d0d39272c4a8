//! The item stage between DECIDE and the back end: one item (`sq_v`: it holds one) with its
//! fields (`sq`, a `Staged`, and `sq_o`), the first round of a staged multicast item
//! scanned while it waits (`ps_*`: its children from index 0 while their egress ports are
//! distinct, one read per cycle from this block's copy of the child table, `chram3`;
//! `sq_psd`: done), and the last such scan kept for the next multicast item of the same job
//! (`pc_*`; `pc_v`: valid, cleared by a child-table write or a job commit, `ps_dirty`: one
//! came during the scan).
//!
//! Two loaders write an item: DECIDE (`dec_go`; a multicast item, `mc`, is scanned or takes
//! the kept scan) and the root's session unit, an ACCEPT (`ac_go`); the item comes in as
//! `ld` (a `Staged`) and `ld_o`, which the engine holds at the stage's own values (`sq_q`,
//! `o_q`) where a loader does not write a field (DECIDE does not write `ld.nonce`, an
//! ACCEPT not `ld.hdr` and `ld.len`). The back end's hand-over empties the stage (`drain`,
//! `Hand`'s `sq_ld`, from `sq_v`, `sq_psd` and the back end's `b_free`); DECIDE may
//! load in the same cycle. The engine writes the child table's rows to `chram3` as to its
//! own (`c_*`) and strobes a job commit (`jc`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24: cut
//! only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::{ChildWord, CHILD_W};
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

use super::states::{OutFields, Staged};
use super::util::{idx4, k16, mc_mask, n};

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
    /// DECIDE's job-table entry (for the kept scan; a register, `dx_ji`, so that
    /// the test does not wait for the load's condition).
    pub mc_ji: Signal<In, Bits<8>>,
    /// DECIDE's item relays an ACCEPT or REFUSE (its scan skips children: the kept scan
    /// is not for it).
    pub mc_rly: Signal<In, bool>,
    /// The item moves to the back end (`Hand`'s `sq_ld`).
    pub drain: Signal<In, bool>,
    /// A job commit (the kept scan is stale).
    pub jc: Signal<In, bool>,
    /// The child table's write address (a commit).
    pub c_waddr: Signal<In, Bits<ADDR_W>>,
    /// The child table's write data.
    pub c_wdata: Signal<In, Bits<CHILD_W>>,
    /// The child table's write enable (bit 0).
    pub c_we: Signal<In, Bits<32>>,
    /// The loader's item (`states::Staged`; its `mc`, `ei` and `more` are the stage's own).
    pub ld: Signal<In, Staged>,
    /// The originated frame's header fields.
    pub ld_o: Signal<In, OutFields>,
    /// The stage holds an item.
    pub v_q: Signal<Out, bool>,
    /// The item's first round is known (always, but for a multicast being scanned).
    pub psd_q: Signal<Out, bool>,
    /// The staged item (as loaded, `ld`; a multicast's first round from the scan).
    pub sq_q: Signal<Out, Staged>,
    /// (`ld_o`)
    pub o_q: Signal<Out, OutFields>,
    /// Per port: the first round's child on it (MAC, IPv4, UDP port, index).
    pub pp_mac_q: Vec<Signal<Out, Bits<48>>>,
    /// (see `pp_mac_q`)
    pub pp_ip_q: Vec<Signal<Out, Bits<32>>>,
    /// (see `pp_mac_q`)
    pub pp_udp_q: Vec<Signal<Out, Bits<16>>>,
    /// (see `pp_mac_q`)
    pub pp_child_q: Vec<Signal<Out, Bits<8>>>,
    sq_v: DFF<bool>,
    // The staged item (`sq_o`: its header fields and destination; `sq_pp_*`: a
    // multicast's first-round children per port).
    sq: DFF<Staged>,
    sq_o: DFF<OutFields>,
    // A multicast item's first round, scanned while it is staged (`sq_psd`: done): the
    // child ports (`sq_pmask`), each port's child (`sq_pp_*`), where the next round starts.
    sq_psd: DFF<bool>,
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
            mc_ji: Default::default(),
            mc_rly: Default::default(),
            drain: Default::default(),
            jc: Default::default(),
            c_waddr: Default::default(),
            c_wdata: Default::default(),
            c_we: Default::default(),
            ld_o: Default::default(),
            ld: Default::default(),
            sq_q: Default::default(),
            sq: Default::default(),
            v_q: Default::default(),
            psd_q: Default::default(),
            o_q: Default::default(),
            pp_mac_q: n(p),
            pp_ip_q: n(p),
            pp_udp_q: n(p),
            pp_child_q: n(p),
            sq_v: Default::default(),
            sq_o: Default::default(),
            sq_psd: Default::default(),
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
            c_idx4: idx4(p),
            c_mclog: k16(mclog as u64),
            c_mcmask: mc_mask(mclog as u64),
        }
    }
}

impl Logic for ItemStage {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, sq_v, sq_o, sq_psd, ps_i, ps_j, ps_v, pc_v, pc_j, pc_pmask, pc_ei,
            pc_more, ps_dirty, sq
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
        self.sq_q.next = self.sq.q.val();
        self.psd_q.next = self.sq_psd.q.val();
        self.o_q.next = self.sq_o.q.val();
        // The item moves to the back end; the stage is then free for the next item.
        if self.drain.val() {
            self.sq_v.d.next = false;
        }
        // The first round of a staged multicast item: its children from index 0 while
        // their ports are distinct (as the back end's child scan does for later rounds),
        // one read per cycle from the item stage's copy of the child table (`chram3`).
        self.chram3.raddr.next = (bit_cast::<ADDR_W, 8>(self.sq.q.val().ji) << self.c_mclog.val())
            | (bit_cast::<ADDR_W, 8>(self.ps_i.q.val()) & self.c_mcmask.val());
        self.ps_port.next = self.chram3.rdata.val().get_value_port();
        self.ps_hit.next =
            (self.sq.q.val().pmask & (bits::<8>(1) << bit_cast::<8, 4>(self.ps_port.val()))) != 0;
        self.ps_ok.next = !self.sq.q.val().rly
            | ((self.chram3.rdata.val().get_value_ranks() & self.sq_o.q.val().bitmap) != 0);
        self.ps_v.d.next = false;
        self.ps_pm.next = self.sq.q.val().pmask;
        self.ps_done.next = false;
        if self.sq_v.q.val() & !self.sq_psd.q.val() {
            if self.ps_i.q.val() < self.sq.q.val().nch {
                self.ps_v.d.next = true;
                self.ps_j.d.next = self.ps_i.q.val();
                self.ps_i.d.next = self.ps_i.q.val() + 1;
            }
            if self.ps_v.q.val() & self.ps_ok.val() & self.ps_hit.val() {
                // A second child on a port already taken: the next round starts there.
                self.sq.d.next.ei = self.ps_j.q.val();
                self.sq.d.next.more = true;
                self.pc_ei.d.next = self.ps_j.q.val();
                self.pc_more.d.next = true;
                self.ps_done.next = true;
            } else {
                if self.ps_v.q.val() & self.ps_ok.val() {
                    self.ps_pm.next = self.sq.q.val().pmask
                        | (bits::<8>(1) << bit_cast::<8, 4>(self.ps_port.val()));
                    self.sq.d.next.pmask = self.ps_pm.val();
                    for p in 0..self.sq_pp_mac.len() {
                        if self.ps_port.val() == self.c_idx4[p].val() {
                            self.sq_pp_mac[p].d.next = self.chram3.rdata.val().get_value_mac();
                            self.sq_pp_ip[p].d.next = self.chram3.rdata.val().get_value_ip();
                            self.sq_pp_udp[p].d.next = self.chram3.rdata.val().get_value_udp();
                            self.sq_pp_child[p].d.next = self.ps_j.q.val();
                        }
                    }
                }
                if self.ps_i.q.val() >= self.sq.q.val().nch {
                    self.pc_ei.d.next = 0.into();
                    self.pc_more.d.next = false;
                    self.ps_done.next = true;
                }
            }
            if self.ps_done.val() {
                self.sq_psd.d.next = true;
                self.pc_v.d.next = !self.ps_dirty.q.val() & !self.sq.q.val().rly;
                self.pc_j.d.next = self.sq.q.val().ji;
                self.pc_pmask.d.next = self.ps_pm.val();
            }
        }
        // A multicast item of the job scanned last takes that scan's result.
        self.pc_hit.next = self.pc_v.q.val() & (self.pc_j.q.val() == self.mc_ji.val());
        // A loader's item (DECIDE's, or the session unit's ACCEPT; never both in a cycle,
        // nor while the scan above runs: the stage is then full and not emptied).
        if self.dec_go.val() | self.ac_go.val() {
            self.sq_v.d.next = true;
            self.sq_psd.d.next = true;
            self.sq.d.next = self.ld.val();
            self.sq_o.d.next = self.ld_o.val();
            self.sq.d.next.mc = false;
            self.sq.d.next.ei = 0.into();
            self.sq.d.next.more = false;
            if self.mc.val() {
                // A multicast item (a result passing down, or the root's result): its
                // first round is scanned here, or taken at once from the kept scan of the
                // same job.
                self.sq.d.next.mc = true;
                self.sq_psd.d.next = false;
                self.sq.d.next.pmask = 0.into();
                self.ps_dirty.d.next = false;
                // (The kept scan is of every child: not for a relay, whose scan skips
                // children.)
                if self.pc_hit.val() & !self.mc_rly.val() {
                    self.sq_psd.d.next = true;
                    self.sq.d.next.pmask = self.pc_pmask.q.val();
                    self.sq.d.next.ei = self.pc_ei.q.val();
                    self.sq.d.next.more = self.pc_more.q.val();
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
