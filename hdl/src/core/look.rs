//! LOOK, the stage between the front end's PARSE and the decision stages: one frame (`v_q`)
//! with its fields and context (`f_q`, `c_q`), waiting for PRED. Its job entry, child entry
//! and port-below ranks (read in PARSE) arrive and are registered every cycle it waits
//! (`je_q`, `jep_q`, `chr_q`, `pbr_q`), with the job's busy count and session state (`bcur_q`,
//! `sbq_q`, `soq_q`, picked from the lookup's and the session unit's per-entry registers)
//! and the busy-count update still in flight (`bcd_q`: DECIDE's of this cycle, else the
//! one of the decision before, `bq_*`).
//!
//! `Hand` decides when the frame leaves (`go`, its `lk_go`: the decision
//! stages are empty or DECIDE completes, or the frame is for another slot copy than the
//! one in DSEL, `ne_q`, after a cycle in LOOK, `old_q`) and when PARSE hands the next one
//! over (`load`, the front end's `look_load`, in the same cycle or when LOOK is empty); the
//! engine copies the outputs into the decision stages' registers when the frame leaves.
//! Leaving as DECIDE completes, the frame gets DECIDE's metadata write and busy-count
//! update forwarded (the metadata port's `dw_*`, `bcd_q`), so that the next decision starts
//! right behind (three cycles per frame); for another slot copy it leaves while the frame
//! before is in DSEL (two cycles per frame: that DECIDE runs beside this PRED, whose quota
//! condition DSEL picks for the busy-count update DECIDE made, the engine's `q_bi`/`q_bd`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::{JobWord, CHILD_W};
use crate::ram::ADDR_W;
use rust_hdl::prelude::*;

use super::states::{Ctx, Fields};
use super::util::{idx8, n};
use super::JOB_W;

/// LOOK (see the module documentation).
#[derive(LogicBlock)]
pub struct Look {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset (LOOK empties).
    pub rst: Signal<In, bool>,
    /// The frame leaves for PRED this cycle.
    pub go: Signal<In, bool>,
    /// PARSE hands a frame over this cycle (`f`, `c`).
    pub load: Signal<In, bool>,
    /// The frame's fields PARSE hands over.
    pub f: Signal<In, Fields>,
    /// Its context.
    pub c: Signal<In, Ctx>,
    /// The frame's job entry index (`ji`, PARSE's).
    pub ji: Signal<In, Bits<8>>,
    /// Its slot copy's address (`cadr`, PARSE's).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// The slot copy of the frame in PRED and DSEL (`x_cadr`).
    pub x_cadr: Signal<In, Bits<ADDR_W>>,
    /// The job table's read data.
    pub jr: Signal<In, Bits<JOB_W>>,
    /// The child table's read data.
    pub ch: Signal<In, Bits<CHILD_W>>,
    /// The port-below table's read data.
    pub pb: Signal<In, Bits<64>>,
    /// The busy count of each job entry (`lookup.rs`).
    pub jbusy: Vec<Signal<In, Bits<32>>>,
    /// The open session's first block of each entry (`session.rs`).
    pub ss_base: Vec<Signal<In, Bits<32>>>,
    /// Each entry has a session open.
    pub ss_open: Vec<Signal<In, bool>>,
    /// DECIDE completes this cycle (with `dbi`/`dbd` for `dx_ji`).
    pub dec_v: Signal<In, bool>,
    /// DECIDE adds a busy copy.
    pub dbi: Signal<In, bool>,
    /// DECIDE removes a busy copy.
    pub dbd: Signal<In, bool>,
    /// DECIDE's job entry.
    pub dx_ji: Signal<In, Bits<8>>,
    /// The decision before's busy-count update (a cycle late: `bq_*`).
    pub bq_inc: Signal<In, bool>,
    /// Its decrement.
    pub bq_dec: Signal<In, bool>,
    /// Its job entry.
    pub bq_j: Signal<In, Bits<8>>,
    /// LOOK holds a frame.
    pub v_q: Signal<Out, bool>,
    /// Its fields.
    pub f_q: Signal<Out, Fields>,
    /// Its context.
    pub c_q: Signal<Out, Ctx>,
    /// Its slot copy differs from the one in PRED/DSEL (registered a cycle late).
    pub ne_q: Signal<Out, bool>,
    /// It has waited a cycle in LOOK.
    pub old_q: Signal<Out, bool>,
    /// Its job entry.
    pub je_q: Signal<Out, Bits<JOB_W>>,
    /// The job entry's epoch.
    pub jep_q: Signal<Out, Bits<32>>,
    /// Its child entry.
    pub chr_q: Signal<Out, Bits<CHILD_W>>,
    /// The ranks below the children on its ingress port.
    pub pbr_q: Signal<Out, Bits<64>>,
    /// The job's busy count.
    pub bcur_q: Signal<Out, Bits<32>>,
    /// The busy-count update in flight then (bit 0: +1, bit 1: -1).
    pub bcd_q: Signal<Out, Bits<2>>,
    /// The job's open session's first block.
    pub sbq_q: Signal<Out, Bits<32>>,
    /// The job has a session open.
    pub soq_q: Signal<Out, bool>,
    v: DFF<bool>,
    f_r: DFF<Fields>,
    c_r: DFF<Ctx>,
    ne: DFF<bool>,
    old: DFF<bool>,
    je: DFF<Bits<JOB_W>>,
    jep: DFF<Bits<32>>,
    chr: DFF<Bits<CHILD_W>>,
    pbr: DFF<Bits<64>>,
    bcur: DFF<Bits<32>>,
    bcd: DFF<Bits<2>>,
    sbq: DFF<Bits<32>>,
    soq: DFF<bool>,
    /// The busy count of the frame's job.
    busy_cur: Signal<Local, Bits<32>>,
    /// Its session's first block.
    sb_cur: Signal<Local, Bits<32>>,
    /// Its session is open.
    so_cur: Signal<Local, bool>,
    c_idx8: Vec<Constant<Bits<8>>>,
}

impl Look {
    /// LOOK for a validated configuration (its job entries).
    pub fn new(cfg: &CoreConfig) -> Self {
        let nj = cfg.max_jobs as usize;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            go: Default::default(),
            load: Default::default(),
            f: Default::default(),
            c: Default::default(),
            ji: Default::default(),
            cadr: Default::default(),
            x_cadr: Default::default(),
            jr: Default::default(),
            ch: Default::default(),
            pb: Default::default(),
            jbusy: n(nj),
            ss_base: n(nj),
            ss_open: n(nj),
            dec_v: Default::default(),
            dbi: Default::default(),
            dbd: Default::default(),
            dx_ji: Default::default(),
            bq_inc: Default::default(),
            bq_dec: Default::default(),
            bq_j: Default::default(),
            v_q: Default::default(),
            f_q: Default::default(),
            c_q: Default::default(),
            ne_q: Default::default(),
            old_q: Default::default(),
            je_q: Default::default(),
            jep_q: Default::default(),
            chr_q: Default::default(),
            pbr_q: Default::default(),
            bcur_q: Default::default(),
            bcd_q: Default::default(),
            sbq_q: Default::default(),
            soq_q: Default::default(),
            v: Default::default(),
            f_r: Default::default(),
            c_r: Default::default(),
            ne: Default::default(),
            old: Default::default(),
            je: Default::default(),
            jep: Default::default(),
            chr: Default::default(),
            pbr: Default::default(),
            bcur: Default::default(),
            bcd: Default::default(),
            sbq: Default::default(),
            soq: Default::default(),
            busy_cur: Default::default(),
            sb_cur: Default::default(),
            so_cur: Default::default(),
            c_idx8: idx8(nj),
        }
    }
}

impl Logic for Look {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, v, f_r, c_r, ne, old, je, jep, chr, pbr, bcur, bcd, sbq, soq);
        self.v_q.next = self.v.q.val();
        self.f_q.next = self.f_r.q.val();
        self.c_q.next = self.c_r.q.val();
        self.ne_q.next = self.ne.q.val();
        self.old_q.next = self.old.q.val();
        self.je_q.next = self.je.q.val();
        self.jep_q.next = self.jep.q.val();
        self.chr_q.next = self.chr.q.val();
        self.pbr_q.next = self.pbr.q.val();
        self.bcur_q.next = self.bcur.q.val();
        self.bcd_q.next = self.bcd.q.val();
        self.sbq_q.next = self.sbq.q.val();
        self.soq_q.next = self.soq.q.val();
        // The busy count and session state of the frame's job entry.
        self.busy_cur.next = 0.into();
        for j in 0..self.jbusy.len() {
            if self.ji.val() == self.c_idx8[j].val() {
                self.busy_cur.next = self.busy_cur.val() | self.jbusy[j].val();
            }
        }
        self.sb_cur.next = 0.into();
        self.so_cur.next = false;
        for j in 0..self.ss_base.len() {
            if self.ji.val() == self.c_idx8[j].val() {
                self.sb_cur.next = self.sb_cur.val() | self.ss_base[j].val();
                self.so_cur.next = self.so_cur.val() | self.ss_open[j].val();
            }
        }
        // The frame leaves, and PARSE may hand over the next one in the same cycle.
        if self.go.val() {
            self.v.d.next = false;
        }
        if self.load.val() {
            self.v.d.next = true;
            self.f_r.d.next = self.f.val();
            self.c_r.d.next = self.c.val();
        }
        self.ne.d.next = self.cadr.val() != self.x_cadr.val();
        self.old.d.next = self.v.q.val() & !self.go.val();
        // The entries read in PARSE, registered every cycle the frame waits.
        if self.v.q.val() {
            self.chr.d.next = self.ch.val();
            self.pbr.d.next = self.pb.val();
            self.bcur.d.next = self.busy_cur.val();
            self.sbq.d.next = self.sb_cur.val();
            self.soq.d.next = self.so_cur.val();
            self.bcd.d.next = 0.into();
            if self.dec_v.val()
                & (self.dbi.val() | self.dbd.val())
                & (self.dx_ji.val() == self.ji.val())
            {
                self.bcd.d.next = bit_cast::<2, 1>(self.dbi.val().into())
                    | (bit_cast::<2, 1>(self.dbd.val().into()) << 1);
            } else if self.bq_j.val() == self.ji.val() {
                self.bcd.d.next = bit_cast::<2, 1>(self.bq_inc.val().into())
                    | (bit_cast::<2, 1>(self.bq_dec.val().into()) << 1);
            }
            self.je.d.next = self.jr.val();
            self.jep.d.next = self.jr.val().get_value_epoch();
        }
        if self.rst.val() {
            self.v.d.next = false;
        }
    }
}
