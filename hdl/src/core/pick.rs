//! The front end's port pick and look-ahead: the ports' heads registered (`dv`, the
//! arbiter's requests), the round-robin arbiter used twice (the pick, and the pick after a
//! take), the registered pick (`pk_any`, `pk_idx`), the picked port's head descriptor
//! registered every cycle (`la_*`) with its age since the last take (`la_age`, `la_pp`),
//! and each port's bitmap population count in two registered stages (`hp_pc`, `hp_pop`).
//!
//! The engine keeps the parser on the look-ahead (`parser`); the front end (`front.rs`) its
//! verdict (`cls`, the check terms `la_chk`), the round-robin pointer (its `sel`, written at
//! a take: `last` here) and the take itself (`take`: the strobe here, the pops, `sel`,
//! `hdr`, ...).
//!
//! Every output is a register, or a function of this block's registers only (`la_ok`): no
//! input reaches an output in the same cycle (issue #24: cut only where a stage's outputs
//! are registered). The arbiter is a loop over its two uses inside this block, not a block
//! of its own: a combinational sub-block feeding a flip-flop reads stale in rust-hdl's
//! native simulation (`55317ba`).

use crate::config::CoreConfig;
use crate::parse::{BytePop, PopCheck, PARSE_W};
use rust_hdl::prelude::*;

use super::util::n;

/// The port pick and look-ahead (see the module documentation).
#[derive(LogicBlock)]
pub struct Pick {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Per port: a committed frame's descriptor is available (the port's `d_valid`).
    pub d_valid: Vec<Signal<In, bool>>,
    /// Per port: the head descriptor's header region (`d_hdr`).
    pub d_hdr: Vec<Signal<In, Bits<PARSE_W>>>,
    /// Per port: the head frame's length in bytes (`d_len`).
    pub d_len: Vec<Signal<In, Bits<16>>>,
    /// Per port: the head frame's UDP check (`d_udp_ok`).
    pub d_udp_ok: Vec<Signal<In, bool>>,
    /// Per port: the head frame's IPv4 check (`d_ip_ok`).
    pub d_ip_ok: Vec<Signal<In, bool>>,
    /// Per port: the head frame's first payload row (`d_row`).
    pub d_row: Vec<Signal<In, Bits<16>>>,
    /// Per port: the head frame's bitmap (`d_bitmap`).
    pub d_bitmap: Vec<Signal<In, Bits<64>>>,
    /// The last port served (the front end's `sel`): the pick's round-robin pointer.
    pub last: Signal<In, Bits<4>>,
    /// The front end takes the picked frame this cycle (its `take`).
    pub take: Signal<In, bool>,
    /// Some port is picked (registered).
    pub pk_any_q: Signal<Out, bool>,
    /// The picked port (registered).
    pub pk_idx_q: Signal<Out, Bits<4>>,
    /// The picked port's head: header region (registered).
    pub la_hdr_q: Signal<Out, Bits<PARSE_W>>,
    /// The picked port's head: length (registered).
    pub la_len_q: Signal<Out, Bits<16>>,
    /// The picked port's head: UDP check (registered).
    pub la_udp_q: Signal<Out, bool>,
    /// The picked port's head: IPv4 check (registered).
    pub la_ip_q: Signal<Out, bool>,
    /// The picked port's head: first payload row (registered).
    pub la_row_q: Signal<Out, Bits<16>>,
    /// `la_*_q` hold the picked port's current head (a compare of this block's registers).
    pub la_ok: Signal<Out, bool>,
    /// Per port: the population count of the head's bitmap of two cycles before.
    pub hp_pop_q: Vec<Signal<Out, Bits<8>>>,
    // The ports' registered `d_valid` (the arbiter's input).
    dv: Vec<DFF<bool>>,
    // The round-robin arbiter, used twice (index a: 0 the pick, 1 the pick after a take):
    // requests, pointer, the ready and ready-above chains (row a·9 + p), the pick, its
    // lowest bit, any, its index.
    rr_req: Vec<Signal<Local, Bits<8>>>,
    rr_ptr: Vec<Signal<Local, Bits<4>>>,
    vb: Vec<Signal<Local, Bits<8>>>,
    hb: Vec<Signal<Local, Bits<8>>>,
    pick: Vec<Signal<Local, Bits<8>>>,
    onehot: Vec<Signal<Local, Bits<8>>>,
    any: Vec<Signal<Local, bool>>,
    pidx: Vec<Signal<Local, Bits<4>>>,
    // The registered pick.
    pk_any: DFF<bool>,
    pk_idx: DFF<Bits<4>>,
    // The look-ahead: the picked port's head, the port it came from, its age since the
    // last take and the port taken then.
    la_hdr: DFF<Bits<PARSE_W>>,
    la_len: DFF<Bits<16>>,
    la_udp: DFF<bool>,
    la_ip: DFF<bool>,
    la_row: DFF<Bits<16>>,
    la_src: DFF<Bits<4>>,
    la_age: DFF<Bits<2>>,
    la_pp: DFF<Bits<4>>,
    // Population count of each port's head's bitmap, in two registered stages (per-byte
    // counts, then their sum), from the ports' descriptors.
    hp_byte: Vec<BytePop>,
    hp_pc: Vec<DFF<Bits<64>>>,
    hp_sum: Vec<PopCheck>,
    hp_pop: Vec<DFF<Bits<8>>>,
    c_onehot: Vec<Constant<Bits<8>>>,
    c_idx4: Vec<Constant<Bits<4>>>,
}

impl Pick {
    /// The pick and look-ahead for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        Self {
            clock: Default::default(),
            d_valid: n(p),
            d_hdr: n(p),
            d_len: n(p),
            d_udp_ok: n(p),
            d_ip_ok: n(p),
            d_row: n(p),
            d_bitmap: n(p),
            last: Default::default(),
            take: Default::default(),
            pk_any_q: Default::default(),
            pk_idx_q: Default::default(),
            la_hdr_q: Default::default(),
            la_len_q: Default::default(),
            la_udp_q: Default::default(),
            la_ip_q: Default::default(),
            la_row_q: Default::default(),
            la_ok: Default::default(),
            hp_pop_q: n(p),
            dv: n(p),
            rr_req: n(2),
            rr_ptr: n(2),
            vb: n(18),
            hb: n(18),
            pick: n(2),
            onehot: n(2),
            any: n(2),
            pidx: n(2),
            pk_any: Default::default(),
            pk_idx: Default::default(),
            la_hdr: Default::default(),
            la_len: Default::default(),
            la_udp: Default::default(),
            la_ip: Default::default(),
            la_row: Default::default(),
            la_src: Default::default(),
            la_age: Default::default(),
            la_pp: Default::default(),
            hp_byte: n(p),
            hp_pc: n(p),
            hp_sum: n(p),
            hp_pop: n(p),
            c_onehot: (0..8).map(|i| Constant::new((1u64 << i).into())).collect(),
            c_idx4: super::util::idx4(8),
        }
    }
}

impl Logic for Pick {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, pk_any, pk_idx, la_hdr, la_len, la_udp, la_ip, la_row, la_src, la_age,
            la_pp
        );
        for p in 0..self.dv.len() {
            self.dv[p].clock.next = self.clock.val();
            self.dv[p].d.next = self.dv[p].q.val();
        }
        // Outputs: registers.
        self.pk_any_q.next = self.pk_any.q.val();
        self.pk_idx_q.next = self.pk_idx.q.val();
        self.la_hdr_q.next = self.la_hdr.q.val();
        self.la_len_q.next = self.la_len.q.val();
        self.la_udp_q.next = self.la_udp.q.val();
        self.la_ip_q.next = self.la_ip.q.val();
        self.la_row_q.next = self.la_row.q.val();
        for p in 0..self.hp_pop.len() {
            self.hp_pop_q[p].next = self.hp_pop[p].q.val();
        }
        // The ports' heads, registered (`dv`: the arbiter's requests).
        for p in 0..self.dv.len() {
            self.dv[p].d.next = self.d_valid[p].val();
        }
        // Round-robin arbitration, one arbiter used twice (`rr_*[a]`): the lowest requesting
        // port above the pointer, else the lowest requesting port. a = 0: the pick, from the
        // last port served (`last`); a = 1: the pick after a take (registered in the take's
        // cycle), from the port taken (`pk_idx`) and never that port (its head changes two
        // cycles after the pop), so that the next port's look-ahead is ready three cycles
        // after the take.
        self.rr_ptr[0].next = self.last.val();
        self.rr_ptr[1].next = self.pk_idx.q.val();
        self.rr_req[0].next = 0.into();
        self.rr_req[1].next = 0.into();
        for p in 0..self.dv.len() {
            if self.dv[p].q.val() {
                self.rr_req[0].next = self.rr_req[0].val() | self.c_onehot[p].val();
                if self.c_idx4[p].val() != self.pk_idx.q.val() {
                    self.rr_req[1].next = self.rr_req[1].val() | self.c_onehot[p].val();
                }
            }
        }
        for a in 0..2 {
            self.vb[a * 9].next = 0.into();
            self.hb[a * 9].next = 0.into();
            for p in 0..8 {
                if self.rr_req[a].val().get_bit(p) {
                    self.vb[a * 9 + p + 1].next = self.vb[a * 9 + p].val() | self.c_onehot[p].val();
                    if self.c_idx4[p].val() > self.rr_ptr[a].val() {
                        self.hb[a * 9 + p + 1].next =
                            self.hb[a * 9 + p].val() | self.c_onehot[p].val();
                    } else {
                        self.hb[a * 9 + p + 1].next = self.hb[a * 9 + p].val();
                    }
                } else {
                    self.vb[a * 9 + p + 1].next = self.vb[a * 9 + p].val();
                    self.hb[a * 9 + p + 1].next = self.hb[a * 9 + p].val();
                }
            }
            if self.hb[a * 9 + 8].val() != 0 {
                self.pick[a].next = self.hb[a * 9 + 8].val();
            } else {
                self.pick[a].next = self.vb[a * 9 + 8].val();
            }
            self.onehot[a].next = self.pick[a].val() & (!self.pick[a].val() + 1);
            self.any[a].next = self.pick[a].val() != 0;
            self.pidx[a].next = 0.into();
            for p in 0..8 {
                if self.onehot[a].val().get_bit(p) {
                    self.pidx[a].next = self.c_idx4[p].val();
                }
            }
        }
        // The pick, registered, from the ports' registered `d_valid` (`dv`): IDLE acts on
        // the arbitration of the cycle before. A descriptor only disappears when IDLE pops
        // it (`d_valid` drops the cycle after); the pick registered in a take's cycle is
        // the pick after a take (`rr_*[1]`, below), which never names the port popped, and
        // the next take is at least two cycles later (`la_ok` needs the pick unchanged for
        // a cycle, and a pick of the popped port waits for `la_age`), so the registered pick
        // is never stale when used.
        self.pk_any.d.next = self.any[0].val();
        self.pk_idx.d.next = self.pidx[0].val();
        // Look-ahead: the head descriptor of the picked port, registered every cycle
        // (`la_*`), and the engine's parser on it, so that a frame's fields and checks are
        // ready in the cycle it is taken. `la_ok`: `la_*` hold the picked port's current
        // head (the same port as the cycle before, and no pop of it in the last three
        // cycles: a pop changes the head two cycles later).
        for p in 0..self.dv.len() {
            if self.pk_idx.q.val() == self.c_idx4[p].val() {
                self.la_hdr.d.next = self.d_hdr[p].val();
                self.la_len.d.next = self.d_len[p].val();
                self.la_udp.d.next = self.d_udp_ok[p].val();
                self.la_ip.d.next = self.d_ip_ok[p].val();
                self.la_row.d.next = self.d_row[p].val();
            }
        }
        self.la_src.d.next = self.pk_idx.q.val();
        if self.la_age.q.val() != 3 {
            self.la_age.d.next = self.la_age.q.val() + 1;
        }
        self.la_ok.next = ((self.la_age.q.val() == 3)
            | (self.la_pp.q.val() != self.pk_idx.q.val()))
            & (self.la_src.q.val() == self.pk_idx.q.val());
        // The bitmap's population count, per port from its head descriptor (bytes 56..63 of
        // the header region), two registered stages: `hp_pop` is the sum for the head of two
        // cycles before, which the take needs (a head changes two cycles after a pop, and
        // the port is taken again at least four cycles after it; a new head is picked at
        // least three cycles after its `d_valid`). The engine takes it at the pick
        // (`pc_pop`) and compares it with the count byte taken with the frame (`pc_count`)
        // in PREP2.
        for p in 0..self.hp_pop.len() {
            self.hp_byte[p].x.next = self.d_bitmap[p].val();
            self.hp_pc[p].clock.next = self.clock.val();
            self.hp_pc[p].d.next = self.hp_byte[p].pc.val();
            self.hp_sum[p].pc.next = self.hp_pc[p].q.val();
            self.hp_sum[p].count.next = 0.into();
            self.hp_pop[p].clock.next = self.clock.val();
            self.hp_pop[p].d.next = self.hp_sum[p].pop.val();
        }
        // A take (the front end's `take`): the look-ahead's age restarts from the port taken.
        if self.take.val() {
            self.la_age.d.next = 0.into();
            self.la_pp.d.next = self.pk_idx.q.val();
            if self.any[1].val() {
                // The next pick: another port's head, ready by the next take.
                self.pk_idx.d.next = self.pidx[1].val();
                self.pk_any.d.next = true;
            }
        }
    }
}
