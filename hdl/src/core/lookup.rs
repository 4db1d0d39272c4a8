//! The job and route tables' lookup: the job-table entries' keys (valid, swept by the timer
//! scan, job id, slot base and count, copied from the entry's word at commit; `jbase`/`jcm`:
//! base and count - 1 at the slot address width) and busy counts, the per-entry hits of
//! the frame the engine picks (registered from the parser's fields, `jh`/`rh`), the first
//! hit one-hot (`jone`/`rone`, prefix OR), every entry's slot copy for the frame's block
//! (`jslot`, `jci`), and the timer scan's ownership test of the slot under its pointer
//! (`own_in`, then `own`).
//!
//! The lowest-numbered matching entry wins. The entry's index (`jsel`) and slot copy
//! (`slot`, `ci`) are AND-ORs under the one-hot; the route's egress ports are the front
//! end's (`front.rs`: they are the register block's), so the route one-hot is an output.
//!
//! Every output is a register, or a function of this block's registers only (the AND-ORs
//! under `jone`): no input reaches an output in the same cycle (issue #24: cut only where
//! a stage's outputs are registered). The engine keeps what selects by its own registers
//! (the latched job's busy count, a commit's freed count).

use crate::config::CoreConfig;
use crate::layout::{JobWord, JOB_W};
use crate::ram::ADDR_W;
use rust_hdl::prelude::*;

use super::util::{idx8, n};

/// The job and route tables' lookup (see the module documentation).
#[derive(LogicBlock)]
pub struct Lookup {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// The front end takes a frame this cycle: its table hits are registered (`front.take`).
    pub hit_ld: Signal<In, bool>,
    /// The picked frame's job id (the parser's).
    pub job: Signal<In, Bits<16>>,
    /// The picked frame's destination IPv4 address (the parser's).
    pub dst_ip: Signal<In, Bits<32>>,
    /// Per route-table entry: valid.
    pub route_valid: Vec<Signal<In, bool>>,
    /// Per route-table entry: its IPv4 address.
    pub route_ip: Vec<Signal<In, Bits<32>>>,
    /// The frame's block (PREP2's fields): each entry's slot copy follows it.
    pub frame_block: Signal<In, Bits<32>>,
    /// The timer scan's pointer.
    pub scan_ptr: Signal<In, Bits<ADDR_W>>,
    /// A decision's busy update: one more slot copy in use by entry `busy_entry`.
    pub busy_inc: Signal<In, bool>,
    /// A decision's busy update: one fewer.
    pub busy_dec: Signal<In, bool>,
    /// The busy update's entry.
    pub busy_entry: Signal<In, Bits<8>>,
    /// A job commit or a session's epoch move writes entry `commit_entry` this cycle
    /// (`commit.go`).
    pub commit: Signal<In, bool>,
    /// The committed entry (`commit.idx`).
    pub commit_entry: Signal<In, Bits<8>>,
    /// The committed entry's word (`commit.word`).
    pub commit_word: Signal<In, Bits<JOB_W>>,
    /// The picked frame hit a job-table entry (registered in PREP2).
    pub jhit_q: Signal<Out, bool>,
    /// The picked frame hit a route-table entry (registered in PREP2).
    pub rhit_q: Signal<Out, bool>,
    /// Per route-table entry: the first hit, one-hot (registered in PREP2).
    pub rone: Vec<Signal<Out, bool>>,
    /// The first job-table hit's index (0 without a hit).
    pub jsel: Signal<Out, Bits<8>>,
    /// The first job-table hit's slot copy address for the frame's block (`2·slot`).
    pub slot: Signal<Out, Bits<ADDR_W>>,
    /// The first job-table hit's copy bit for the frame's block.
    pub ci: Signal<Out, bool>,
    /// The slot under the scan pointer belongs to a swept entry (two registered stages).
    pub own_q: Signal<Out, bool>,
    /// Some valid entry is swept by the timer scan (registered).
    pub any_to_q: Signal<Out, bool>,
    /// Per job-table entry: the slot copies in use.
    pub jbusy: Vec<Signal<Out, Bits<32>>>,
    /// Per job-table entry: slot count - 1 at the slot address width.
    pub jcm: Vec<Signal<Out, Bits<ADDR_W>>>,
    // The keys.
    jk_valid: Vec<DFF<bool>>,
    jk_scan: Vec<DFF<bool>>,
    jk_job: Vec<DFF<Bits<16>>>,
    jk_sbase: Vec<DFF<Bits<32>>>,
    jk_scount: Vec<DFF<Bits<32>>>,
    jbusy_r: Vec<DFF<Bits<32>>>,
    jbase: Vec<DFF<Bits<ADDR_W>>>,
    jcm_r: Vec<DFF<Bits<ADDR_W>>>,
    // A commit's base and count - 1 at the slot address width.
    jc_base: Signal<Local, Bits<ADDR_W>>,
    jc_cm: Signal<Local, Bits<ADDR_W>>,
    // Per-entry hits (PREP), the first hit one-hot (PREP2), any hit.
    jh: Vec<DFF<bool>>,
    jone: Vec<DFF<bool>>,
    rh: Vec<DFF<bool>>,
    rone_r: Vec<DFF<bool>>,
    jpre: Vec<Signal<Local, bool>>,
    rpre: Vec<Signal<Local, bool>>,
    jhit: DFF<bool>,
    rhit: DFF<bool>,
    // Every entry's slot copy address for the frame's block (`2·slot`) and copy bit.
    jslot: Vec<DFF<Bits<ADDR_W>>>,
    jci: Vec<DFF<bool>>,
    pr_blk_a: Signal<Local, Bits<ADDR_W>>,
    // The scan's ownership: per entry, then ORed.
    own_in: Vec<DFF<bool>>,
    scan_own: Signal<Local, bool>,
    own: DFF<bool>,
    any_to: DFF<bool>,
    c_idx8: Vec<Constant<Bits<8>>>,
    c_smask: Constant<Bits<ADDR_W>>,
}

impl Lookup {
    /// The lookup for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let nj = cfg.max_jobs as usize;
        let nr = cfg.max_routes as usize;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            hit_ld: Default::default(),
            job: Default::default(),
            dst_ip: Default::default(),
            route_valid: n(nr),
            route_ip: n(nr),
            frame_block: Default::default(),
            scan_ptr: Default::default(),
            busy_inc: Default::default(),
            busy_dec: Default::default(),
            busy_entry: Default::default(),
            commit: Default::default(),
            commit_entry: Default::default(),
            commit_word: Default::default(),
            jhit_q: Default::default(),
            rhit_q: Default::default(),
            rone: n(nr),
            jsel: Default::default(),
            slot: Default::default(),
            ci: Default::default(),
            own_q: Default::default(),
            any_to_q: Default::default(),
            jbusy: n(nj),
            jcm: n(nj),
            jk_valid: n(nj),
            jk_scan: n(nj),
            jk_job: n(nj),
            jk_sbase: n(nj),
            jk_scount: n(nj),
            jbusy_r: n(nj),
            jbase: n(nj),
            jcm_r: n(nj),
            jc_base: Default::default(),
            jc_cm: Default::default(),
            jh: n(nj),
            jone: n(nj),
            rh: n(nr),
            rone_r: n(nr),
            jpre: n(nj + 1),
            rpre: n(nr + 1),
            jhit: Default::default(),
            rhit: Default::default(),
            jslot: n(nj),
            jci: n(nj),
            pr_blk_a: Default::default(),
            own_in: n(nj),
            scan_own: Default::default(),
            own: Default::default(),
            any_to: Default::default(),
            c_idx8: idx8(nj),
            c_smask: Constant::new(((cfg.slots - 1) as u64).into()),
        }
    }
}

impl Logic for Lookup {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, jhit, rhit, own, any_to);
        for r in 0..self.rh.len() {
            self.rh[r].clock.next = self.clock.val();
            self.rh[r].d.next = self.rh[r].q.val();
            self.rone_r[r].clock.next = self.clock.val();
            self.rone_r[r].d.next = self.rone_r[r].q.val();
        }
        for j in 0..self.jk_valid.len() {
            self.jk_valid[j].clock.next = self.clock.val();
            self.jk_valid[j].d.next = self.jk_valid[j].q.val();
            self.jk_scan[j].clock.next = self.clock.val();
            self.jk_scan[j].d.next = self.jk_scan[j].q.val();
            self.jk_job[j].clock.next = self.clock.val();
            self.jk_job[j].d.next = self.jk_job[j].q.val();
            self.jk_sbase[j].clock.next = self.clock.val();
            self.jk_sbase[j].d.next = self.jk_sbase[j].q.val();
            self.jk_scount[j].clock.next = self.clock.val();
            self.jk_scount[j].d.next = self.jk_scount[j].q.val();
            self.jh[j].clock.next = self.clock.val();
            self.jh[j].d.next = self.jh[j].q.val();
            self.jone[j].clock.next = self.clock.val();
            self.jone[j].d.next = self.jone[j].q.val();
            self.own_in[j].clock.next = self.clock.val();
            self.own_in[j].d.next = self.own_in[j].q.val();
            self.jslot[j].clock.next = self.clock.val();
            self.jbase[j].clock.next = self.clock.val();
            self.jbase[j].d.next = self.jbase[j].q.val();
            self.jcm_r[j].clock.next = self.clock.val();
            self.jcm_r[j].d.next = self.jcm_r[j].q.val();
            self.jci[j].clock.next = self.clock.val();
            self.jbusy_r[j].clock.next = self.clock.val();
            self.jbusy_r[j].d.next = self.jbusy_r[j].q.val();
        }
        // Outputs: registers.
        self.jhit_q.next = self.jhit.q.val();
        self.rhit_q.next = self.rhit.q.val();
        self.own_q.next = self.own.q.val();
        self.any_to_q.next = self.any_to.q.val();
        for r in 0..self.rone.len() {
            self.rone[r].next = self.rone_r[r].q.val();
        }
        for j in 0..self.jbusy.len() {
            self.jbusy[j].next = self.jbusy_r[j].q.val();
            self.jcm[j].next = self.jcm_r[j].q.val();
        }
        // The first hit as a one-hot vector (prefix OR over the hits, registered).
        self.rpre[0].next = false;
        self.rhit.d.next = false;
        for r in 0..self.rh.len() {
            self.rpre[r + 1].next = self.rpre[r].val() | self.rh[r].q.val();
            self.rone_r[r].d.next = self.rh[r].q.val() & !self.rpre[r].val();
            if self.rh[r].q.val() {
                self.rhit.d.next = true;
            }
        }
        self.jpre[0].next = false;
        self.jhit.d.next = false;
        for j in 0..self.jh.len() {
            self.jpre[j + 1].next = self.jpre[j].val() | self.jh[j].q.val();
            self.jone[j].d.next = self.jh[j].q.val() & !self.jpre[j].val();
            if self.jh[j].q.val() {
                self.jhit.d.next = true;
            }
        }
        // Outputs: AND-ORs of the entries' registers under the one-hot.
        self.jsel.next = 0.into();
        for j in 0..self.jone.len() {
            if self.jone[j].q.val() {
                self.jsel.next = self.jsel.val() | self.c_idx8[j].val();
            }
        }
        // The slot under the scan pointer belongs to a swept entry (others are skipped:
        // `Switch::scan_slot` does nothing for them): per entry, then ORed, each registered.
        for j in 0..self.jk_valid.len() {
            self.own_in[j].d.next = self.jk_valid[j].q.val()
                & self.jk_scan[j].q.val()
                & ((bit_cast::<32, ADDR_W>(self.scan_ptr.val()) - self.jk_sbase[j].q.val())
                    < self.jk_scount[j].q.val());
        }
        self.scan_own.next = false;
        for j in 0..self.own_in.len() {
            self.scan_own.next = self.scan_own.val() | self.own_in[j].q.val();
        }
        self.own.d.next = self.scan_own.val();
        // Slot copy of the frame's block: slot_base + (block mod count), copy (block / count)
        // mod 2; every entry's candidate, registered in PREP2 from the entry's keys, so that
        // PARSE picks the matching entry's and the metadata read starts there.
        self.pr_blk_a.next = bit_cast::<ADDR_W, 32>(self.frame_block.val());
        for j in 0..self.jk_valid.len() {
            self.jslot[j].d.next = ((self.jbase[j].q.val()
                + (self.pr_blk_a.val() & self.jcm_r[j].q.val()))
                & self.c_smask.val())
                << 1;
            self.jci[j].d.next = (self.frame_block.val() & self.jk_scount[j].q.val()) != 0;
        }
        self.slot.next = 0.into();
        self.ci.next = false;
        for j in 0..self.jone.len() {
            if self.jone[j].q.val() {
                self.slot.next = self.slot.val() | self.jslot[j].q.val();
            }
            if self.jone[j].q.val() & self.jci[j].q.val() {
                self.ci.next = true;
            }
        }
        // The picked frame's hits (from the look-ahead parser).
        if self.hit_ld.val() {
            for r in 0..self.rh.len() {
                self.rh[r].d.next =
                    self.route_valid[r].val() & (self.route_ip[r].val() == self.dst_ip.val());
            }
            for j in 0..self.jh.len() {
                self.jh[j].d.next =
                    self.jk_valid[j].q.val() & (self.jk_job[j].q.val() == self.job.val());
            }
        }
        // Sweep start needs a swept entry.
        self.any_to.d.next = false;
        for j in 0..self.jk_valid.len() {
            if self.jk_valid[j].q.val() & self.jk_scan[j].q.val() {
                self.any_to.d.next = true;
            }
        }
        // Busy updates, then a commit (the entry as committed, busy count 0), then reset.
        self.jc_base.next = bit_cast::<ADDR_W, 32>(self.commit_word.val().get_value_slot_base());
        self.jc_cm.next = bit_cast::<ADDR_W, 32>(self.commit_word.val().get_value_slot_count() - 1);
        for j in 0..self.jbusy_r.len() {
            if self.busy_entry.val() == self.c_idx8[j].val() {
                if self.busy_inc.val() {
                    self.jbusy_r[j].d.next = self.jbusy_r[j].q.val() + 1;
                }
                if self.busy_dec.val() {
                    self.jbusy_r[j].d.next = self.jbusy_r[j].q.val() - 1;
                }
            }
            if (self.commit_entry.val() == self.c_idx8[j].val()) & self.commit.val() {
                self.jk_valid[j].d.next = self.commit_word.val().get_value_valid();
                // Swept by the timer scan: timeout mode, or an idle reclaim.
                self.jk_scan[j].d.next = self.commit_word.val().get_value_timeout()
                    | (self.commit_word.val().get_value_reclaim_idle() != 0);
                self.jk_job[j].d.next = self.commit_word.val().get_value_job();
                self.jk_sbase[j].d.next = self.commit_word.val().get_value_slot_base();
                self.jk_scount[j].d.next = self.commit_word.val().get_value_slot_count();
                self.jbusy_r[j].d.next = 0.into();
                self.jbase[j].d.next = self.jc_base.val();
                self.jcm_r[j].d.next = self.jc_cm.val();
            }
        }
        if self.rst.val() {
            for j in 0..self.jk_valid.len() {
                self.jk_valid[j].d.next = false;
                self.jk_scan[j].d.next = false;
                self.jk_job[j].d.next = 0.into();
                self.jk_sbase[j].d.next = 0.into();
                self.jk_scount[j].d.next = 0.into();
                self.jbusy_r[j].d.next = 0.into();
            }
        }
    }
}
