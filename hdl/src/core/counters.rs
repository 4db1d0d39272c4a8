//! The statistics counters: the engine's counter events (`Counter::ALL`), the slot
//! occupancy and its high water, and the per-port frame and byte counts, with the selects
//! and the read word of the AXI4-Lite read path.
//!
//! A block of the core beside the control and status registers (`csr.rs`), which OR its
//! read word into theirs. That one output is a function of its own registers only (the
//! read's registered selects and the counters), so no input reaches it in the same cycle
//! (issue #24: cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::regs;
use fanin_proto::model::Counter;
use rust_hdl::prelude::*;

use super::util::{k16, n};

/// The counters of a core (see the module documentation).
#[derive(LogicBlock)]
pub struct Counters {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset: every counter to 0.
    pub rst: Signal<In, bool>,
    /// AXI4-Lite read address: selects the counter word read in the next cycle.
    pub araddr: Signal<In, Bits<16>>,
    /// Engine: counter events of the front end (bit k counts `Counter::ALL[k]`).
    pub ev: Signal<In, Bits<32>>,
    /// Engine: counter events of the back end (multicast pushes).
    pub ev_b: Signal<In, Bits<32>>,
    /// Engine: a slot copy was taken (`slots_in_use` + 1).
    pub occ_inc: Signal<In, bool>,
    /// Engine: a slot copy was released (`slots_in_use` - 1).
    pub occ_dec: Signal<In, bool>,
    /// Engine: the taken copy may set a new `slots_in_high_water`.
    pub occ_hwc: Signal<In, bool>,
    /// Engine: copies a job commit frees at once (subtracted from `slots_in_use`).
    pub occ_free: Signal<In, Bits<64>>,
    /// Per ingress port: the engine took a frame (length `rx_len`).
    pub rx_take: Vec<Signal<In, bool>>,
    /// The length of the frame taken.
    pub rx_len: Signal<In, Bits<16>>,
    /// Per egress port: a frame was sent.
    pub tx_sent: Vec<Signal<In, bool>>,
    /// Per egress port: the length of the frame sent.
    pub tx_len: Vec<Signal<In, Bits<64>>>,
    /// Per ingress port: a frame was dropped at ingress.
    pub rx_bad: Vec<Signal<In, bool>>,
    /// The counter word the previous cycle's `araddr` selected (0 if none).
    pub rd: Signal<Out, Bits<32>>,
    acc: Signal<Local, Bits<32>>,
    // The events a cycle late, the counters.
    evq: DFF<Bits<32>>,
    evbq: DFF<Bits<32>>,
    cnt: Vec<DFF<Bits<64>>>,
    rxp: Vec<DFF<Bits<64>>>,
    rxb: Vec<DFF<Bits<64>>>,
    txp: Vec<DFF<Bits<64>>>,
    txb: Vec<DFF<Bits<64>>>,
    rxbad: Vec<DFF<Bits<32>>>,
    // The read's registered selects: low/high word of a counter, one of a port's nine.
    s_cnt: Vec<DFF<Bits<2>>>,
    s_port: Vec<DFF<Bits<16>>>,
    c_idx16: Vec<Constant<Bits<16>>>,
    a_cnt: Constant<Bits<16>>,
    a_port: Constant<Bits<16>>,
    a_rxbad: Constant<Bits<16>>,
}

impl Counters {
    /// The counters of a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        let nc = Counter::COUNT;
        let map = regs::RegMap::new(cfg);
        Self {
            clock: Default::default(),
            rst: Default::default(),
            araddr: Default::default(),
            ev: Default::default(),
            ev_b: Default::default(),
            occ_inc: Default::default(),
            occ_dec: Default::default(),
            occ_hwc: Default::default(),
            occ_free: Default::default(),
            rx_take: n(p),
            rx_len: Default::default(),
            tx_sent: n(p),
            tx_len: n(p),
            rx_bad: n(p),
            rd: Default::default(),
            acc: Default::default(),
            evq: Default::default(),
            evbq: Default::default(),
            cnt: n(nc),
            rxp: n(p),
            rxb: n(p),
            txp: n(p),
            txb: n(p),
            rxbad: n(p),
            s_cnt: n(nc),
            s_port: n(p),
            c_idx16: (0..nc.max(p).max(8)).map(|i| k16(i as u64)).collect(),
            a_cnt: k16(map.counter_base as u64),
            a_port: k16(map.port_base as u64),
            a_rxbad: k16(map.rx_bad_base as u64),
        }
    }
}

impl Logic for Counters {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, evq, evbq);
        for k in 0..self.cnt.len() {
            self.cnt[k].clock.next = self.clock.val();
            self.cnt[k].d.next = self.cnt[k].q.val();
            self.s_cnt[k].clock.next = self.clock.val();
            self.s_cnt[k].d.next = self.s_cnt[k].q.val();
        }
        for p in 0..self.s_port.len() {
            self.s_port[p].clock.next = self.clock.val();
            self.s_port[p].d.next = self.s_port[p].q.val();
            self.rxp[p].clock.next = self.clock.val();
            self.rxp[p].d.next = self.rxp[p].q.val();
            self.rxb[p].clock.next = self.clock.val();
            self.rxb[p].d.next = self.rxb[p].q.val();
            self.txp[p].clock.next = self.clock.val();
            self.txp[p].d.next = self.txp[p].q.val();
            self.txb[p].clock.next = self.clock.val();
            self.txb[p].d.next = self.txb[p].q.val();
            self.rxbad[p].clock.next = self.clock.val();
            self.rxbad[p].d.next = self.rxbad[p].q.val();
        }
        // Read selects, registered from the address.
        for k in 0..self.s_cnt.len() {
            self.s_cnt[k].d.next = 0.into();
            if self.araddr.val() == self.a_cnt.val() + (self.c_idx16[k].val() << 3) {
                self.s_cnt[k].d.next = 1.into();
            }
            if self.araddr.val() == self.a_cnt.val() + (self.c_idx16[k].val() << 3) + 4 {
                self.s_cnt[k].d.next = 2.into();
            }
        }
        for p in 0..self.s_port.len() {
            self.s_port[p].d.next = 0.into();
            for w in 0..8 {
                if self.araddr.val()
                    == self.a_port.val()
                        + (self.c_idx16[p].val() << 5)
                        + (self.c_idx16[w].val() << 2)
                {
                    self.s_port[p].d.next = bits::<16>(1) << self.c_idx16[w].val();
                }
            }
            if self.araddr.val() == self.a_rxbad.val() + (self.c_idx16[p].val() << 2) {
                self.s_port[p].d.next = bits::<16>(1) << 8;
            }
        }
        // The read word. A 64-bit counter reads as two registers, low word (bits 31:0) then
        // high word (63:32). These are the only literal slices left in the core: inside a
        // loop over a `Vec`, `hdl_gen` cannot use a layout accessor (it evaluates the
        // field's offset outside the loop, where the index is not defined).
        self.acc.next = 0.into();
        for k in 0..self.s_cnt.len() {
            if self.s_cnt[k].q.val().get_bit(0) {
                self.acc.next = self.acc.val() | self.cnt[k].q.val().get_bits::<32>(0);
            }
            if self.s_cnt[k].q.val().get_bit(1) {
                self.acc.next = self.acc.val() | self.cnt[k].q.val().get_bits::<32>(32);
            }
        }
        for p in 0..self.s_port.len() {
            if self.s_port[p].q.val().get_bit(0) {
                self.acc.next = self.acc.val() | self.rxp[p].q.val().get_bits::<32>(0);
            }
            if self.s_port[p].q.val().get_bit(1) {
                self.acc.next = self.acc.val() | self.rxp[p].q.val().get_bits::<32>(32);
            }
            if self.s_port[p].q.val().get_bit(2) {
                self.acc.next = self.acc.val() | self.rxb[p].q.val().get_bits::<32>(0);
            }
            if self.s_port[p].q.val().get_bit(3) {
                self.acc.next = self.acc.val() | self.rxb[p].q.val().get_bits::<32>(32);
            }
            if self.s_port[p].q.val().get_bit(4) {
                self.acc.next = self.acc.val() | self.txp[p].q.val().get_bits::<32>(0);
            }
            if self.s_port[p].q.val().get_bit(5) {
                self.acc.next = self.acc.val() | self.txp[p].q.val().get_bits::<32>(32);
            }
            if self.s_port[p].q.val().get_bit(6) {
                self.acc.next = self.acc.val() | self.txb[p].q.val().get_bits::<32>(0);
            }
            if self.s_port[p].q.val().get_bit(7) {
                self.acc.next = self.acc.val() | self.txb[p].q.val().get_bits::<32>(32);
            }
            if self.s_port[p].q.val().get_bit(8) {
                self.acc.next = self.acc.val() | self.rxbad[p].q.val();
            }
        }
        self.rd.next = self.acc.val();
        // Counters: the engine's decisions and the back end's multicast pushes, a cycle
        // after the events (registered: the decision logic stays shallow).
        self.evq.d.next = self.ev.val();
        self.evbq.d.next = self.ev_b.val();
        for k in 0..self.cnt.len() {
            if self.evq.q.val().get_bit(k) & self.evbq.q.val().get_bit(k) {
                self.cnt[k].d.next = self.cnt[k].q.val() + 2;
            } else if self.evq.q.val().get_bit(k) | self.evbq.q.val().get_bit(k) {
                self.cnt[k].d.next = self.cnt[k].q.val() + 1;
            }
        }
        // Occupancy: `slots_in_use` (counter 0) and its high water (counter 1).
        if self.occ_inc.val() {
            self.cnt[0].d.next = self.cnt[0].q.val() + 1 - self.occ_free.val();
        } else if self.occ_dec.val() {
            self.cnt[0].d.next = self.cnt[0].q.val() - 1 - self.occ_free.val();
        } else {
            self.cnt[0].d.next = self.cnt[0].q.val() - self.occ_free.val();
        }
        if self.occ_hwc.val() & ((self.cnt[0].q.val() + 1) > self.cnt[1].q.val()) {
            self.cnt[1].d.next = self.cnt[0].q.val() + 1;
        }
        for p in 0..self.rxp.len() {
            if self.rx_take[p].val() {
                self.rxp[p].d.next = self.rxp[p].q.val() + 1;
                self.rxb[p].d.next = self.rxb[p].q.val() + bit_cast::<64, 16>(self.rx_len.val());
            }
            if self.tx_sent[p].val() {
                self.txp[p].d.next = self.txp[p].q.val() + 1;
                self.txb[p].d.next = self.txb[p].q.val() + self.tx_len[p].val();
            }
            if self.rx_bad[p].val() {
                self.rxbad[p].d.next = self.rxbad[p].q.val() + 1;
            }
        }
        if self.rst.val() {
            for k in 0..self.cnt.len() {
                self.cnt[k].d.next = 0.into();
            }
            for p in 0..self.rxp.len() {
                self.rxp[p].d.next = 0.into();
                self.rxb[p].d.next = 0.into();
                self.txp[p].d.next = 0.into();
                self.txb[p].d.next = 0.into();
                self.rxbad[p].d.next = 0.into();
            }
        }
    }
}
