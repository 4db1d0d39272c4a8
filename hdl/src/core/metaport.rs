//! The slot copies' metadata RAM (`ram`) and its read side: the metadata of the copy read
//! two cycles before (`m`): the RAM's read data registered (`mq`), or a write the read
//! misses (`mf`, `mfs`). Block RAM reads the old row on a write in the read's cycle, so
//! the write of that cycle, registered with the read address (`ra_q`, `wq_*`), is
//! forwarded instead; so is DECIDE's write of the next cycle (`dw_*`), for a frame
//! leaving LOOK.
//!
//! The engine drives the RAM's ports (`raddr`, `waddr`, `wdata`, `we`: its final values
//! of the cycle) as it drove the RAM. Every output is a function of this block's
//! registers only (`m`: `mf` if `mfs`, else `mq`): no input reaches an output in the same
//! cycle (issue #24: cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::META_W;
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

/// The metadata RAM and its read side (see the module documentation).
#[derive(LogicBlock)]
pub struct MetaPort {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// The RAM's write address (a slot copy).
    pub waddr: Signal<In, Bits<ADDR_W>>,
    /// The RAM's write data.
    pub wdata: Signal<In, Bits<META_W>>,
    /// The RAM's write enable (bit 0).
    pub we: Signal<In, Bits<32>>,
    /// The RAM's read address (a slot copy).
    pub raddr: Signal<In, Bits<ADDR_W>>,
    /// DECIDE writes this cycle (forwarded to a read of its copy).
    pub dw_v: Signal<In, bool>,
    /// DECIDE's copy.
    pub dw_a: Signal<In, Bits<ADDR_W>>,
    /// DECIDE's metadata.
    pub dw_d: Signal<In, Bits<META_W>>,
    /// The metadata of the copy read two cycles before, with the writes since forwarded.
    pub m: Signal<Out, Bits<META_W>>,
    ram: FaninRam<META_W>,
    mq: DFF<Bits<META_W>>,
    mf: DFF<Bits<META_W>>,
    mfs: DFF<bool>,
    wq_v: DFF<bool>,
    wq_a: DFF<Bits<ADDR_W>>,
    wq_d: DFF<Bits<META_W>>,
    ra_q: DFF<Bits<ADDR_W>>,
}

impl MetaPort {
    /// The metadata of the configuration's slot copies (two per slot).
    pub fn new(cfg: &CoreConfig) -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            we: Default::default(),
            raddr: Default::default(),
            dw_v: Default::default(),
            dw_a: Default::default(),
            dw_d: Default::default(),
            m: Default::default(),
            ram: FaninRam::new(2 * cfg.slots as usize, 1),
            mq: Default::default(),
            mf: Default::default(),
            mfs: Default::default(),
            wq_v: Default::default(),
            wq_a: Default::default(),
            wq_d: Default::default(),
            ra_q: Default::default(),
        }
    }
}

impl Logic for MetaPort {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, mq, mf, mfs, wq_v, wq_a, wq_d, ra_q);
        self.ram.clock.next = self.clock.val();
        self.ram.raddr.next = self.raddr.val();
        self.ram.waddr.next = self.waddr.val();
        self.ram.wdata.next = self.wdata.val();
        self.ram.we.next = self.we.val();
        // The metadata of the copy read two cycles before (see below).
        if self.mfs.q.val() {
            self.m.next = self.mf.q.val();
        } else {
            self.m.next = self.mq.q.val();
        }
        // Metadata of the copy just read (registered: the decision reads it as `m`). The
        // RAM's read data goes straight into its output register (`mq`); the writes it
        // misses are registered beside it and chosen after (`mfs`, `mf`): a write in the
        // cycle the read was issued is not in the read data (block RAM reads the old row),
        // the registered write is forwarded instead (`wq_*`); so is DECIDE's write in this
        // cycle, for a frame leaving LOOK.
        self.mq.d.next = self.ram.rdata.val();
        self.mfs.d.next = false;
        if self.dw_v.val() & (self.dw_a.val() == self.ra_q.q.val()) {
            self.mfs.d.next = true;
            self.mf.d.next = self.dw_d.val();
        } else if self.wq_v.q.val() & (self.wq_a.q.val() == self.ra_q.q.val()) {
            self.mfs.d.next = true;
            self.mf.d.next = self.wq_d.q.val();
        }
        // The RAM's read address and write of this cycle, registered (`mf` forwards the
        // write to a read of the same copy).
        self.ra_q.d.next = self.raddr.val();
        self.wq_v.d.next = self.we.val() != 0;
        self.wq_a.d.next = self.waddr.val();
        self.wq_d.d.next = self.wdata.val();
        if self.rst.val() {
            self.wq_v.d.next = false;
        }
    }
}
