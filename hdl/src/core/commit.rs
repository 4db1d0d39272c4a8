//! Job commits and the job table's write port.
//!
//! A register write (`Csr`'s `job_commit`) sets `pend` with its entry; the front end
//! applies it when it is idle (`apply`, a `dbg` event of kind 2), so every decision before
//! it has been taken and its busy update (a cycle later) made, and no frame is picked until
//! the new entry is in place. It takes effect a cycle later (`q`: the staged entry with a
//! new epoch, busy count 0, the session state reset, the scan's ownership test restarted)
//! and leaves slots_in_use a cycle after that (`freed`: the entry's busy copies).
//!
//! The same write path (`go`, `idx`, `word`) applies a session's opening at the root
//! (`epoch_move`: the entry as DECIDE read it, with a new epoch, to the session unit's
//! entry). Epochs come from one counter (`jgen`), so no two commits share one.
//!
//! The write path's outputs are terms of this block's registers and of inputs that are
//! registers or sub-block outputs (the session unit's, the register block's, the lookup's
//! busy counts, the engine's `x_je`).

use crate::config::CoreConfig;
use crate::layout::{at, mask, JOB_W};
use crate::ram::ADDR_W;
use fanin_regs::layout::job;
use rust_hdl::prelude::*;

use super::util::{idx8, n};

/// The job commit path (see the module documentation).
#[derive(LogicBlock)]
pub struct Commit {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (nothing pending).
    pub rst: Signal<In, bool>,
    /// A job commit is requested (`Csr`'s `job_commit`).
    pub req: Signal<In, bool>,
    /// Its entry.
    pub req_entry: Signal<In, Bits<8>>,
    /// The staged entry, packed (epoch 0).
    pub job_word: Signal<In, Bits<JOB_W>>,
    /// The front end applies the pending commit (IDLE).
    pub apply: Signal<In, bool>,
    /// A session opens at the root: the entry's epoch moves on.
    pub epoch_move: Signal<In, bool>,
    /// The session unit's entry.
    pub sess_entry: Signal<In, Bits<8>>,
    /// The entry DECIDE read (the engine's `x_je`).
    pub x_je: Signal<In, Bits<JOB_W>>,
    /// The busy count of each job entry (`lookup.rs`).
    pub jbusy: Vec<Signal<In, Bits<32>>>,
    /// A commit is pending.
    pub pend_q: Signal<Out, bool>,
    /// Its entry.
    pub entry_q: Signal<Out, Bits<8>>,
    /// The commit takes effect.
    pub q: Signal<Out, bool>,
    /// The write path applies now (a commit or an epoch move).
    pub go: Signal<Out, bool>,
    /// To this entry.
    pub idx: Signal<Out, Bits<8>>,
    /// With this word (epoch 0).
    pub word: Signal<Out, Bits<JOB_W>>,
    /// The job table's write address.
    pub waddr: Signal<Out, Bits<ADDR_W>>,
    /// Its write data (the word with its epoch).
    pub wdata: Signal<Out, Bits<JOB_W>>,
    /// Its write enable.
    pub we: Signal<Out, Bits<32>>,
    /// The busy copies the commit frees from slots_in_use (two cycles after `q`).
    pub freed: Signal<Out, Bits<64>>,
    pend: DFF<bool>,
    entry: DFF<Bits<8>>,
    jc_q: DFF<bool>,
    jc2: DFF<bool>,
    bq: DFF<Bits<32>>,
    jgen: DFF<Bits<32>>,
    busy: Signal<Local, Bits<32>>,
    c_idx8: Vec<Constant<Bits<8>>>,
    at_job_epoch: Constant<Bits<16>>,
    mk_job_epoch: Constant<Bits<JOB_W>>,
}

impl Commit {
    /// The commit path for a validated configuration (its job entries).
    pub fn new(cfg: &CoreConfig) -> Self {
        let nj = cfg.max_jobs as usize;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            req: Default::default(),
            req_entry: Default::default(),
            job_word: Default::default(),
            apply: Default::default(),
            epoch_move: Default::default(),
            sess_entry: Default::default(),
            x_je: Default::default(),
            jbusy: n(nj),
            pend_q: Default::default(),
            entry_q: Default::default(),
            q: Default::default(),
            go: Default::default(),
            idx: Default::default(),
            word: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            we: Default::default(),
            freed: Default::default(),
            pend: Default::default(),
            entry: Default::default(),
            jc_q: Default::default(),
            jc2: Default::default(),
            bq: Default::default(),
            jgen: Default::default(),
            busy: Default::default(),
            c_idx8: idx8(nj),
            at_job_epoch: at(job::EPOCH),
            mk_job_epoch: mask(&[job::EPOCH]),
        }
    }
}

impl Logic for Commit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, pend, entry, jc_q, jc2, bq, jgen);
        self.pend_q.next = self.pend.q.val();
        self.entry_q.next = self.entry.q.val();
        self.q.next = self.jc_q.q.val();
        // Applied in IDLE; requested (in the same cycle, a new one pends).
        if self.apply.val() {
            self.pend.d.next = false;
        }
        if self.req.val() {
            self.pend.d.next = true;
            self.entry.d.next = self.req_entry.val();
        }
        self.jc_q.d.next = self.apply.val();
        // The write path: a commit (`jc_q`: the staged entry, to its entry) or a session's
        // opening (the entry as it is, with a new epoch, to the session unit's entry).
        self.go.next = self.jc_q.q.val() | self.epoch_move.val();
        if self.epoch_move.val() {
            self.idx.next = self.sess_entry.val();
            self.word.next = self.x_je.val() & !self.mk_job_epoch.val();
        } else {
            self.idx.next = self.entry.q.val();
            self.word.next = self.job_word.val();
        }
        self.waddr.next = bit_cast::<ADDR_W, 8>(self.idx.val());
        self.wdata.next =
            self.word.val() | (bit_cast::<JOB_W, 32>(self.jgen.q.val()) << self.at_job_epoch.val());
        self.we.next = 0.into();
        self.busy.next = 0.into();
        for j in 0..self.jbusy.len() {
            if self.idx.val() == self.c_idx8[j].val() {
                self.busy.next = self.busy.val() | self.jbusy[j].val();
                if self.go.val() {
                    self.we.next = 1.into();
                }
            }
        }
        if self.go.val() {
            self.jgen.d.next = self.jgen.q.val() + 1;
        }
        // The entry's busy copies leave slots_in_use two cycles on.
        self.bq.d.next = self.busy.val();
        self.jc2.d.next = self.go.val();
        if self.jc2.q.val() {
            self.freed.next = bit_cast::<64, 32>(self.bq.q.val());
        } else {
            self.freed.next = 0.into();
        }
        if self.rst.val() {
            self.pend.d.next = false;
            self.jc_q.d.next = false;
            self.jc2.d.next = false;
        }
    }
}
