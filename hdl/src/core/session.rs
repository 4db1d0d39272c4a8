//! The root's session unit (`Switch::join`, `open_session`) and the per-entry session
//! state (`Session`: open, first block, newest block, ranks joined).
//!
//! One JOIN at a time, handed over by DECIDE (`join_go`; `join` is a Verilog keyword), while the engine's LOOK waits
//! (`busy`). The unit reads the rank's member row; a repeat of the open session's JOIN is
//! answered again; otherwise the row is written and `pending` grows, and the JOIN that
//! completes the job's ranks opens the session: its first block (`next_base`), the entry's
//! epoch moved on (the job's copies freed: `epoch_move`, applied by the engine's commit
//! path), and one ACCEPT per rank in rank order (`ac_ready` until the engine stages it,
//! `ac_take`).
//!
//! `high`, the newest block of the entry's session, follows DECIDE's contributions past the
//! floor (`hu_*`): the entry's `high` read (the write of the stage after next forwarded),
//! compared, written. Decisions are at least two cycles apart, so the next update reads in
//! the cycle of this one's write.
//!
//! Every output is a register, or a compare of one: no input reaches an output in the same
//! cycle (issue #24: cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::{at, MemberWord, MEMBER_W};
use crate::ram::{FaninRam, ADDR_W};
use fanin_regs::layout::member;
use rust_hdl::prelude::*;

use super::states::{Accept, Fields, SessState};
use super::util::n;

/// The root's session unit (see the module documentation).
#[derive(LogicBlock)]
pub struct SessionUnit {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// DECIDE hands a JOIN over this cycle (the unit is idle).
    pub join_go: Signal<In, bool>,
    /// The JOIN's job-table entry.
    pub join_entry: Signal<In, Bits<8>>,
    /// The JOIN's fields: its rank (`bitmap`, one bit), nonce (`block`), source addresses
    /// and job id.
    pub join_f: Signal<In, Fields>,
    /// The JOIN's ingress port.
    pub join_port: Signal<In, Bits<4>>,
    /// The entry's ranks.
    pub join_ranks: Signal<In, Bits<64>>,
    /// DECIDE: a contribution past the session floor (`high` may move on), registered.
    pub hu_v: Signal<In, bool>,
    /// Its job-table entry.
    pub hu_j: Signal<In, Bits<8>>,
    /// Its block.
    pub hu_b: Signal<In, Bits<32>>,
    /// A job commit applies to entry `reset_entry`: its session starts afresh.
    pub reset: Signal<In, bool>,
    /// The committed entry.
    pub reset_entry: Signal<In, Bits<8>>,
    /// The committed entry's `first_block` - 1 (its `high`).
    pub reset_high: Signal<In, Bits<32>>,
    /// Per entry, slot count - 1 (`next_base` rounds to it).
    pub jcm: Vec<Signal<In, Bits<ADDR_W>>>,
    /// The engine stages the ACCEPT offered (`ac_ready`) this cycle.
    pub ac_take: Signal<In, bool>,
    /// A JOIN is being served (LOOK waits).
    pub busy: Signal<Out, bool>,
    /// A session opened: the entry's epoch moves on (the engine's commit path), this cycle.
    pub epoch_move: Signal<Out, bool>,
    /// The served JOIN's entry.
    pub entry: Signal<Out, Bits<8>>,
    /// A session opens (counted in `sessions`), this cycle.
    pub opened: Signal<Out, bool>,
    /// Per entry: a session is open.
    pub ss_open: Vec<Signal<Out, bool>>,
    /// Per entry: the session's first block.
    pub ss_base: Vec<Signal<Out, Bits<32>>>,
    /// An ACCEPT waits to be staged.
    pub ac_ready: Signal<Out, bool>,
    /// The ACCEPT waiting (`ac_ready`).
    pub ac: Signal<Out, Accept>,
    // The unit: its state and the JOIN it serves.
    su_st: DFF<SessState>,
    su_v: DFF<bool>,
    su_j: DFF<Bits<8>>,
    su_bm: DFF<Bits<64>>,
    su_nonce: DFF<Bits<32>>,
    su_mac: DFF<Bits<48>>,
    su_ip: DFF<Bits<32>>,
    su_udp: DFF<Bits<16>>,
    su_port: DFF<Bits<4>>,
    su_job: DFF<Bits<16>>,
    su_rank: DFF<Bits<6>>,
    su_pend: DFF<Bits<64>>,
    su_open: DFF<bool>,
    su_base: DFF<Bits<32>>,
    su_high: DFF<Bits<32>>,
    su_cm: DFF<Bits<32>>,
    su_ranks: DFF<Bits<64>>,
    su_m: DFF<Bits<MEMBER_W>>,
    su_left: DFF<Bits<64>>,
    su_low: DFF<Bits<64>>,
    su_rep: DFF<bool>,
    su_ein: Signal<Local, Bits<64>>,
    su_enc: Signal<Local, Bits<6>>,
    su_pcur: Signal<Local, Bits<64>>,
    su_ocur: Signal<Local, bool>,
    su_bcur: Signal<Local, Bits<32>>,
    su_hcur: Signal<Local, Bits<32>>,
    su_cmcur: Signal<Local, Bits<ADDR_W>>,
    su_np: Signal<Local, Bits<64>>,
    // The ACCEPT staged next.
    ac_nonce_r: DFF<Bits<32>>,
    ac_mac_r: DFF<Bits<48>>,
    ac_ip_r: DFF<Bits<32>>,
    ac_udp_r: DFF<Bits<16>>,
    ac_port_r: DFF<Bits<4>>,
    ac_bm_r: DFF<Bits<64>>,
    so_q: DFF<bool>,
    // `high` update: the entry's `high` read, then the write.
    hu2_v: DFF<bool>,
    hu2_j: DFF<Bits<8>>,
    hu2_b: DFF<Bits<32>>,
    hu_h: DFF<Bits<32>>,
    hu3_v: DFF<bool>,
    hu3_j: DFF<Bits<8>>,
    hu3_b: DFF<Bits<32>>,
    hu_hcur: Signal<Local, Bits<32>>,
    hu_d: Signal<Local, Bits<32>>,
    // Per job-table entry, the session: open, first block, newest block, ranks joined.
    ss_open_r: Vec<DFF<bool>>,
    ss_base_r: Vec<DFF<Bits<32>>>,
    ss_high: Vec<DFF<Bits<32>>>,
    ss_pend: Vec<DFF<Bits<64>>>,
    // Session members (row `entry · 64 + rank`, `layout::member`).
    mram: FaninRam<MEMBER_W>,
    c_idx8: Vec<Constant<Bits<8>>>,
    c_r6: Vec<Constant<Bits<6>>>,
    at_mem_mac: Constant<Bits<16>>,
    at_mem_ip: Constant<Bits<16>>,
    at_mem_udp: Constant<Bits<16>>,
    at_mem_port: Constant<Bits<16>>,
}

impl SessionUnit {
    /// The unit for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let nj = cfg.max_jobs as usize;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            join_go: Default::default(),
            join_entry: Default::default(),
            join_f: Default::default(),
            join_port: Default::default(),
            join_ranks: Default::default(),
            hu_v: Default::default(),
            hu_j: Default::default(),
            hu_b: Default::default(),
            reset: Default::default(),
            reset_entry: Default::default(),
            reset_high: Default::default(),
            jcm: n(nj),
            ac_take: Default::default(),
            busy: Default::default(),
            epoch_move: Default::default(),
            entry: Default::default(),
            opened: Default::default(),
            ss_open: n(nj),
            ss_base: n(nj),
            ac_ready: Default::default(),
            ac: Default::default(),
            su_st: Default::default(),
            su_v: Default::default(),
            su_j: Default::default(),
            su_bm: Default::default(),
            su_nonce: Default::default(),
            su_mac: Default::default(),
            su_ip: Default::default(),
            su_udp: Default::default(),
            su_port: Default::default(),
            su_job: Default::default(),
            su_rank: Default::default(),
            su_pend: Default::default(),
            su_open: Default::default(),
            su_base: Default::default(),
            su_high: Default::default(),
            su_cm: Default::default(),
            su_ranks: Default::default(),
            su_m: Default::default(),
            su_left: Default::default(),
            su_low: Default::default(),
            su_rep: Default::default(),
            su_ein: Default::default(),
            su_enc: Default::default(),
            su_pcur: Default::default(),
            su_ocur: Default::default(),
            su_bcur: Default::default(),
            su_hcur: Default::default(),
            su_cmcur: Default::default(),
            su_np: Default::default(),
            ac_nonce_r: Default::default(),
            ac_mac_r: Default::default(),
            ac_ip_r: Default::default(),
            ac_udp_r: Default::default(),
            ac_port_r: Default::default(),
            ac_bm_r: Default::default(),
            so_q: Default::default(),
            hu2_v: Default::default(),
            hu2_j: Default::default(),
            hu2_b: Default::default(),
            hu_h: Default::default(),
            hu3_v: Default::default(),
            hu3_j: Default::default(),
            hu3_b: Default::default(),
            hu_hcur: Default::default(),
            hu_d: Default::default(),
            ss_open_r: n(nj),
            ss_base_r: n(nj),
            ss_high: n(nj),
            ss_pend: n(nj),
            mram: FaninRam::new(nj << 6, 1),
            c_idx8: (0..nj.max(8))
                .map(|i| Constant::new((i as u64).into()))
                .collect(),
            c_r6: (0..64).map(|i| Constant::new((i as u64).into())).collect(),
            at_mem_mac: at(member::MAC),
            at_mem_ip: at(member::IP),
            at_mem_udp: at(member::UDP),
            at_mem_port: at(member::PORT),
        }
    }
}

impl Logic for SessionUnit {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, su_st, su_v, su_j, su_bm, su_nonce, su_mac, su_ip, su_udp, su_port,
            su_job, su_rank, su_pend, su_open, su_base, su_high, su_cm, su_ranks, su_m, su_left,
            su_low, su_rep, ac_nonce_r, ac_mac_r, ac_ip_r, ac_udp_r, ac_port_r, ac_bm_r, so_q,
            hu2_v, hu2_j, hu2_b, hu_h, hu3_v, hu3_j, hu3_b
        );
        for j in 0..self.ss_open_r.len() {
            self.ss_open_r[j].clock.next = self.clock.val();
            self.ss_open_r[j].d.next = self.ss_open_r[j].q.val();
            self.ss_base_r[j].clock.next = self.clock.val();
            self.ss_base_r[j].d.next = self.ss_base_r[j].q.val();
            self.ss_high[j].clock.next = self.clock.val();
            self.ss_high[j].d.next = self.ss_high[j].q.val();
            self.ss_pend[j].clock.next = self.clock.val();
            self.ss_pend[j].d.next = self.ss_pend[j].q.val();
        }
        self.mram.clock.next = self.clock.val();
        // Outputs: registers.
        self.busy.next = self.su_v.q.val();
        self.epoch_move.next = self.so_q.q.val();
        self.entry.next = self.su_j.q.val();
        self.opened.next = self.su_st.q.val() == SessState::Apply;
        for j in 0..self.ss_open_r.len() {
            self.ss_open[j].next = self.ss_open_r[j].q.val();
            self.ss_base[j].next = self.ss_base_r[j].q.val();
        }
        self.ac_ready.next = self.su_st.q.val() == SessState::AStage;
        self.ac.next.nonce = self.ac_nonce_r.q.val();
        self.ac.next.mac = self.ac_mac_r.q.val();
        self.ac.next.ip = self.ac_ip_r.q.val();
        self.ac.next.udp = self.ac_udp_r.q.val();
        self.ac.next.port = self.ac_port_r.q.val();
        self.ac.next.bm = self.ac_bm_r.q.val();
        self.ac.next.job = self.su_job.q.val();
        self.ac.next.block = self.su_base.q.val();
        // `high`: read (forwarding the write of the stage after next), compare, write.
        self.hu2_v.d.next = self.hu_v.val();
        self.hu2_j.d.next = self.hu_j.val();
        self.hu2_b.d.next = self.hu_b.val();
        self.hu_hcur.next = 0.into();
        for j in 0..self.ss_high.len() {
            if self.hu_j.val() == self.c_idx8[j].val() {
                self.hu_hcur.next = self.hu_hcur.val() | self.ss_high[j].q.val();
            }
        }
        if self.hu3_v.q.val() & (self.hu3_j.q.val() == self.hu_j.val()) {
            self.hu_h.d.next = self.hu3_b.q.val();
        } else {
            self.hu_h.d.next = self.hu_hcur.val();
        }
        // `newer(block, high)`: the difference is nonzero and its sign bit clear. Nonzero is
        // tested as inequality of the two registers, beside the subtraction rather than as an
        // OR over its 32 result bits after it (a 32-bit OR after the carry chain measured 6
        // LUT levels on `alveo`, whose target is 5; docs/resources.md).
        self.hu_d.next = self.hu2_b.q.val() - self.hu_h.q.val();
        self.hu3_v.d.next = self.hu2_v.q.val()
            & (self.hu2_b.q.val() != self.hu_h.q.val())
            & !self.hu_d.val().get_bit(31);
        self.hu3_j.d.next = self.hu2_j.q.val();
        self.hu3_b.d.next = self.hu2_b.q.val();
        if self.hu3_v.q.val() {
            for j in 0..self.ss_high.len() {
                if self.hu3_j.q.val() == self.c_idx8[j].val() {
                    self.ss_high[j].d.next = self.hu3_b.q.val();
                }
            }
        }
        // The session unit.
        self.so_q.d.next = false;
        self.mram.we.next = 0.into();
        self.mram.waddr.next = (bit_cast::<ADDR_W, 8>(self.su_j.q.val()) << 6)
            | bit_cast::<ADDR_W, 6>(self.su_rank.q.val());
        self.mram.raddr.next = (bit_cast::<ADDR_W, 8>(self.su_j.q.val()) << 6)
            | bit_cast::<ADDR_W, 6>(self.su_rank.q.val());
        self.mram.wdata.next = bit_cast::<MEMBER_W, 32>(self.su_nonce.q.val())
            | (bit_cast::<MEMBER_W, 48>(self.su_mac.q.val()) << self.at_mem_mac.val())
            | (bit_cast::<MEMBER_W, 32>(self.su_ip.q.val()) << self.at_mem_ip.val())
            | (bit_cast::<MEMBER_W, 16>(self.su_udp.q.val()) << self.at_mem_udp.val())
            | (bit_cast::<MEMBER_W, 4>(self.su_port.q.val()) << self.at_mem_port.val());
        // The rank of a one-bit set (the JOIN's, or the lowest left to answer).
        if self.su_st.q.val() == SessState::Load {
            self.su_ein.next = self.su_bm.q.val();
        } else {
            self.su_ein.next = self.su_low.q.val();
        }
        self.su_enc.next = 0.into();
        for k in 0..64 {
            if self.su_ein.val().get_bit(k) {
                self.su_enc.next = self.su_enc.val() | self.c_r6[k].val();
            }
        }
        // The served entry's session state, slot mask and newest block.
        self.su_pcur.next = 0.into();
        self.su_ocur.next = false;
        self.su_bcur.next = 0.into();
        self.su_hcur.next = 0.into();
        self.su_cmcur.next = 0.into();
        for j in 0..self.ss_pend.len() {
            if self.su_j.q.val() == self.c_idx8[j].val() {
                self.su_pcur.next = self.su_pcur.val() | self.ss_pend[j].q.val();
                self.su_ocur.next = self.su_ocur.val() | self.ss_open_r[j].q.val();
                self.su_bcur.next = self.su_bcur.val() | self.ss_base_r[j].q.val();
                self.su_hcur.next = self.su_hcur.val() | self.ss_high[j].q.val();
                self.su_cmcur.next = self.su_cmcur.val() | self.jcm[j].val();
            }
        }
        self.su_np.next = self.su_pend.q.val() | self.su_bm.q.val();
        match self.su_st.q.val() {
            SessState::Load => {
                self.su_rank.d.next = self.su_enc.val();
                self.su_pend.d.next = self.su_pcur.val();
                self.su_open.d.next = self.su_ocur.val();
                self.su_base.d.next = self.su_bcur.val();
                self.su_st.d.next = SessState::Read;
            }
            SessState::Read => {
                self.su_st.d.next = SessState::Wait;
            }
            SessState::Wait => {
                self.su_m.d.next = self.mram.rdata.val();
                self.su_high.d.next = self.su_hcur.val();
                self.su_cm.d.next = bit_cast::<32, ADDR_W>(self.su_cmcur.val());
                self.su_st.d.next = SessState::Decide;
            }
            SessState::Decide => {
                if ((self.su_pend.q.val() & self.su_bm.q.val()) == 0)
                    & (self.su_m.q.val().get_value_nonce() == self.su_nonce.q.val())
                    & self.su_open.q.val()
                {
                    // A repeat of the open session's JOIN (its ACCEPT was lost): answer
                    // again, to this JOIN's source.
                    self.ac_nonce_r.d.next = self.su_nonce.q.val();
                    self.ac_mac_r.d.next = self.su_mac.q.val();
                    self.ac_ip_r.d.next = self.su_ip.q.val();
                    self.ac_udp_r.d.next = self.su_udp.q.val();
                    self.ac_port_r.d.next = self.su_port.q.val();
                    self.ac_bm_r.d.next = self.su_bm.q.val();
                    self.su_rep.d.next = true;
                    self.su_st.d.next = SessState::AStage;
                } else {
                    self.mram.we.next = 1.into();
                    for j in 0..self.ss_pend.len() {
                        if self.su_j.q.val() == self.c_idx8[j].val() {
                            self.ss_pend[j].d.next = self.su_np.val();
                        }
                    }
                    if self.su_np.val() == self.su_ranks.q.val() {
                        self.su_st.d.next = SessState::Open;
                    } else {
                        self.su_v.d.next = false;
                        self.su_st.d.next = SessState::Idle;
                    }
                }
            }
            SessState::Open => {
                // The first session starts at `first_block` (`high` + 1), every later one
                // at `next_base(high)`: the first multiple of two slot ranges at least two
                // slot ranges and one block past it.
                if self.su_open.q.val() {
                    self.su_base.d.next = (self.su_high.q.val() + ((self.su_cm.q.val() + 1) << 2))
                        & !((self.su_cm.q.val() << 1) | 1);
                } else {
                    self.su_base.d.next = self.su_high.q.val() + 1;
                }
                self.su_st.d.next = SessState::Apply;
            }
            SessState::Apply => {
                for j in 0..self.ss_pend.len() {
                    if self.su_j.q.val() == self.c_idx8[j].val() {
                        self.ss_open_r[j].d.next = true;
                        self.ss_base_r[j].d.next = self.su_base.q.val();
                        self.ss_high[j].d.next = self.su_base.q.val() - 1;
                        self.ss_pend[j].d.next = 0.into();
                    }
                }
                self.so_q.d.next = true;
                self.su_left.d.next = self.su_ranks.q.val();
                self.su_rep.d.next = false;
                self.su_st.d.next = SessState::Next;
            }
            SessState::Next => {
                if self.su_left.q.val() == 0 {
                    self.su_v.d.next = false;
                    self.su_st.d.next = SessState::Idle;
                } else {
                    self.su_low.d.next = self.su_left.q.val() & (!self.su_left.q.val() + 1);
                    self.su_st.d.next = SessState::Enc;
                }
            }
            SessState::Enc => {
                self.su_rank.d.next = self.su_enc.val();
                self.su_left.d.next = self.su_left.q.val() & !self.su_low.q.val();
                self.su_st.d.next = SessState::ARead;
            }
            SessState::ARead => {
                self.su_st.d.next = SessState::AWait;
            }
            SessState::AWait => {
                self.su_m.d.next = self.mram.rdata.val();
                self.su_st.d.next = SessState::ASet;
            }
            SessState::ASet => {
                self.ac_nonce_r.d.next = self.su_m.q.val().get_value_nonce();
                self.ac_mac_r.d.next = self.su_m.q.val().get_value_mac();
                self.ac_ip_r.d.next = self.su_m.q.val().get_value_ip();
                self.ac_udp_r.d.next = self.su_m.q.val().get_value_udp();
                self.ac_port_r.d.next = self.su_m.q.val().get_value_port();
                self.ac_bm_r.d.next = self.su_low.q.val();
                self.su_st.d.next = SessState::AStage;
            }
            SessState::AStage => {
                // The engine stages the ACCEPT (Switch::accept_frame) when its item stage
                // is free.
                if self.ac_take.val() {
                    if self.su_rep.q.val() {
                        self.su_v.d.next = false;
                        self.su_st.d.next = SessState::Idle;
                    } else {
                        self.su_st.d.next = SessState::Next;
                    }
                }
            }
            _ => {}
        }
        // A JOIN handed over by DECIDE (only while the unit is idle: LOOK waits meanwhile).
        if self.join_go.val() {
            self.su_v.d.next = true;
            self.su_st.d.next = SessState::Load;
            self.su_j.d.next = self.join_entry.val();
            self.su_bm.d.next = self.join_f.val().bitmap;
            self.su_nonce.d.next = self.join_f.val().block;
            self.su_mac.d.next = self.join_f.val().src_mac;
            self.su_ip.d.next = self.join_f.val().src_ip;
            self.su_udp.d.next = self.join_f.val().src_port;
            self.su_port.d.next = self.join_port.val();
            self.su_job.d.next = self.join_f.val().job;
            self.su_ranks.d.next = self.join_ranks.val();
        }
        // A job commit: the entry starts without a session (`Session::new`).
        if self.reset.val() {
            for j in 0..self.ss_open_r.len() {
                if self.reset_entry.val() == self.c_idx8[j].val() {
                    self.ss_open_r[j].d.next = false;
                    self.ss_pend[j].d.next = 0.into();
                    self.ss_high[j].d.next = self.reset_high.val();
                }
            }
        }
        if self.rst.val() {
            self.so_q.d.next = false;
            self.su_v.d.next = false;
            self.su_st.d.next = SessState::Idle;
            self.hu2_v.d.next = false;
            self.hu3_v.d.next = false;
            for j in 0..self.ss_open_r.len() {
                self.ss_open_r[j].d.next = false;
                self.ss_pend[j].d.next = 0.into();
            }
        }
    }
}
