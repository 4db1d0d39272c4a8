//! The back end: the row work of one item at a time, in decision order, and the item's
//! destinations. An item comes from the item stage (`l_*`: a decision's, or an ACCEPT of
//! the session unit) or straight from the front end (`fi`, `f_*`: a routed frame, an ARP reply,
//! a frame only released, the timer scan's flush); `bstate` is its state (`BackState`):
//! RMW of the slot rows through the Acc, the child scan of a later multicast round, the
//! copy of the payload rows to every destination port, then one destination per cycle
//! through the destination pipeline (`dest.rs`), or a release only.
//!
//! The children are the ones whose strobes depend on the egress ports' room: the Acc
//! (`acc.rs`), the destination pipeline, the copied rows (`copy.rs`) and the slot copies'
//! overflow bits (`overflow.rs`); and the end-of-item terms (`finish.rs`).
//!
//! Every output is a register, or a function of this block's and its children's registers
//! (issue #24: cut only where a stage's outputs are registered). The item finishes this
//! cycle (`b_done`) when `done_now`, or when `done_if_room` and the destination ports have
//! room for a maximum frame (`room`, `Hand`'s `all_rdy` from the egress ports'
//! `ready`); `Finish` computes the two terms from this block's registers. `Hand` forms
//! the same `b_done` from the two outputs, because the front end and the item stage hand
//! over in that cycle (`b_free`).

use crate::acc::Acc;
use crate::config::CoreConfig;
use crate::layout::{ChildWord, CHILD_W};
use crate::ram::ADDR_W;
use fanin_proto::wire::Flags;
use rust_hdl::prelude::*;

use super::copy::CopyPipe;
use super::dest::DestPipe;
use super::finish::Finish;
use super::overflow::OvfBits;
use super::states::{BackState, FrontItem, OutFields, Staged};
use super::util::{idx4, k16, mc_mask, n};

/// The back end of the engine (see the module documentation).
#[derive(LogicBlock)]
pub struct BackEnd<const WB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Every destination port of the item has room for a maximum frame (`all_rdy`).
    pub room: Signal<In, bool>,
    /// Each ingress port's payload row, read the cycle before at `r_addr`.
    pub rx_data: Vec<Signal<In, Bits<WB>>>,
    /// The back end's child-table copy's read data (`chram2`, read at `ch_addr`).
    pub ch_data: Signal<In, Bits<CHILD_W>>,
    /// The front end hands over an item this cycle (`front.h_go`; only when the back end
    /// is free), in state `f_st`.
    pub f_go: Signal<In, bool>,
    /// (The state of the front end's item.)
    pub f_st: Signal<In, BackState>,
    /// (The front end's item is its RMW's last cycle: `x_mg.rle1`.)
    pub f_rl: Signal<In, bool>,
    /// The front end's frame and item, loaded whenever the back end is free.
    pub fi: Signal<In, FrontItem>,
    /// (The flush's header fields and destination.)
    pub f_o: Signal<In, OutFields>,
    /// The item stage hands over its item this cycle (`sq_ld`; only when the back end is
    /// free), with the fields below (the item stage's `sq_*`).
    pub l_go: Signal<In, bool>,
    /// (The item: `states::Staged`.)
    pub l_item: Signal<In, Staged>,
    /// (`sq_o`.)
    pub l_o: Signal<In, OutFields>,
    /// (`sq_pp_mac`, per port.)
    pub l_pp_mac: Vec<Signal<In, Bits<48>>>,
    /// (`sq_pp_ip`, per port.)
    pub l_pp_ip: Vec<Signal<In, Bits<32>>>,
    /// (`sq_pp_udp`, per port.)
    pub l_pp_udp: Vec<Signal<In, Bits<16>>>,
    /// (`sq_pp_child`, per port.)
    pub l_pp_child: Vec<Signal<In, Bits<8>>>,
    /// No item.
    pub idle: Signal<Out, bool>,
    /// The item finishes this cycle.
    pub done_now: Signal<Out, bool>,
    /// The item finishes this cycle if its destination ports have room (`room`).
    pub done_if_room: Signal<Out, bool>,
    /// The item's destination ports left (for `room`).
    pub pmask_q: Signal<Out, Bits<8>>,
    /// The item's ingress frame is released when it finishes (at port `sel_q`).
    pub rel_q: Signal<Out, bool>,
    /// (The item's ingress port.)
    pub sel_q: Signal<Out, Bits<4>>,
    /// The ingress buffer row read this cycle (the item's port's data next cycle).
    pub r_addr: Signal<Out, Bits<16>>,
    /// The ingress buffer's first row after the item's frame (its release).
    pub rel_row: Signal<Out, Bits<16>>,
    /// The child-table copy's read address (`chram2`).
    pub ch_addr: Signal<Out, Bits<ADDR_W>>,
    /// The egress ports that push the header `p_hdr` (length `p_len`) this cycle.
    pub push: Signal<Out, Bits<8>>,
    /// This cycle's push is a multicast result (`results_sent`).
    pub push_mc: Signal<Out, bool>,
    /// The header pushed.
    pub p_hdr: Signal<Out, Bits<512>>,
    /// The length pushed.
    pub p_len: Signal<Out, Bits<16>>,
    /// The egress ports that write the row `w_row` this cycle.
    pub w_we: Signal<Out, Bits<8>>,
    /// The row written.
    pub w_row: Signal<Out, Bits<WB>>,
    // The end-of-item terms (`finish.rs`).
    fin: Finish,
    // The slot RAM and its read-modify-write pipeline.
    acc: Acc<WB>,
    // The destination pipeline (`dest.rs`): select, HdrGen's two stages, push.
    dest: DestPipe,
    // The copied rows from the read to the egress ports (`copy.rs`); a row is read this
    // cycle (`cp_rd`).
    copy: CopyPipe,
    cp_rd: Signal<Local, bool>,
    // Overflow bit per slot copy, with the tags that follow RMW rows through the Acc
    // (`overflow.rs`).
    ovb: OvfBits,
    // The item (written at hand-over).
    bstate: DFF<BackState>,
    b_sel: DFF<Bits<4>>,
    b_row0: DFF<Bits<16>>,
    b_nrows: DFF<Bits<16>>,
    b_enr: DFF<Bits<16>>,
    b_rel: DFF<bool>,
    b_cadr: DFF<Bits<ADDR_W>>,
    b_hdr: DFF<Bits<512>>,
    b_len: DFF<Bits<16>>,
    b_ji: DFF<Bits<8>>,
    b_nch: DFF<Bits<8>>,
    b_emit: DFF<bool>,
    b_eovf: DFF<bool>,
    // The item's one payload row is `b_nonce` (an ACCEPT), not a buffer's.
    b_reg: DFF<bool>,
    b_nonce: DFF<Bits<32>>,
    // The item relays an ACCEPT or REFUSE (`sq_rly`).
    b_rly: DFF<bool>,
    agg_op: DFF<Bits<2>>,
    nr: DFF<Bits<16>>,
    // `max(nr, 1)`, registered with `nr` (the RMW's last-row test starts from it).
    nr1: DFF<Bits<16>>,
    o_f: DFF<OutFields>,
    e_mc: DFF<bool>,
    e_slot: DFF<bool>,
    e_orig: DFF<bool>,
    // The row count: `ri`, and `ri + 2` kept beside it (the last-row compare reads it: no
    // adder before it); `rl`: this is the RMW's last cycle; `e_more`: ri != b_enr;
    // `e_last`: ri + 1 == b_enr.
    ri: DFF<Bits<16>>,
    ri2: DFF<Bits<16>>,
    rl: DFF<bool>,
    e_more: DFF<bool>,
    e_last: DFF<bool>,
    // Multicast rounds: child scan and destination ports.
    cs_i: DFF<Bits<8>>,
    cs_j: DFF<Bits<8>>,
    cs_v: DFF<bool>,
    ei: DFF<Bits<8>>,
    more: DFF<bool>,
    pmask: DFF<Bits<8>>,
    pm_two: DFF<bool>,
    // Each destination port's child (a multicast round's).
    pp_mac: Vec<DFF<Bits<48>>>,
    pp_ip: Vec<DFF<Bits<32>>>,
    pp_udp: Vec<DFF<Bits<16>>>,
    pp_child: Vec<DFF<Bits<8>>>,
    b_done: Signal<Local, bool>,
    b_free: Signal<Local, bool>,
    /// `e_last` for an item or round handed over this cycle (written when `b_free`).
    el_init: Signal<Local, bool>,
    pm_low: Signal<Local, Bits<8>>,
    sel_mac: Signal<Local, Bits<48>>,
    sel_ip: Signal<Local, Bits<32>>,
    sel_udp: Signal<Local, Bits<16>>,
    sel_child: Signal<Local, Bits<8>>,
    cs_port: Signal<Local, Bits<4>>,
    cs_hit: Signal<Local, bool>,
    // The child read in the back end's scan takes part in the round (as `ps_ok`).
    cs_ok: Signal<Local, bool>,
    tg_v: Signal<Local, bool>,
    tg_first: Signal<Local, bool>,
    ov_new: Signal<Local, bool>,
    ov_cur: Signal<Local, bool>,
    h_latch: Signal<Local, bool>,
    rx_row_data: Signal<Local, Bits<WB>>,
    nonce_be: Signal<Local, Bits<32>>,
    nonce_row: Signal<Local, Bits<WB>>,
    c_idx4: Vec<Constant<Bits<4>>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
    c_rpclog: Constant<Bits<16>>,
    c_lprlog: Constant<Bits<16>>,
    c_ovbit: Constant<Bits<512>>,
}

impl<const WB: usize> BackEnd<WB> {
    /// The back end for a validated configuration (its ports, slots, lanes and child-table
    /// rows per job).
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        let mclog = cfg.child_bits();
        let rpc = cfg.lanes as usize * 32 / WB;
        let lpr = WB / 32;
        Self {
            clock: Default::default(),
            room: Default::default(),
            rx_data: n(p),
            ch_data: Default::default(),
            f_go: Default::default(),
            f_st: Default::default(),
            f_rl: Default::default(),
            fi: Default::default(),
            f_o: Default::default(),
            l_go: Default::default(),
            l_item: Default::default(),
            l_o: Default::default(),
            l_pp_mac: n(p),
            l_pp_ip: n(p),
            l_pp_udp: n(p),
            l_pp_child: n(p),
            idle: Default::default(),
            done_now: Default::default(),
            done_if_room: Default::default(),
            pmask_q: Default::default(),
            rel_q: Default::default(),
            sel_q: Default::default(),
            r_addr: Default::default(),
            rel_row: Default::default(),
            ch_addr: Default::default(),
            push: Default::default(),
            push_mc: Default::default(),
            p_hdr: Default::default(),
            p_len: Default::default(),
            w_we: Default::default(),
            w_row: Default::default(),
            fin: Default::default(),
            acc: Acc::with_style(2 * cfg.slots as usize * rpc, cfg.slot_ram),
            dest: Default::default(),
            copy: Default::default(),
            cp_rd: Default::default(),
            ovb: OvfBits::new(2 * cfg.slots as usize),
            bstate: Default::default(),
            b_sel: Default::default(),
            b_row0: Default::default(),
            b_nrows: Default::default(),
            b_enr: Default::default(),
            b_rel: Default::default(),
            b_cadr: Default::default(),
            b_hdr: Default::default(),
            b_len: Default::default(),
            b_ji: Default::default(),
            b_nch: Default::default(),
            b_emit: Default::default(),
            b_eovf: Default::default(),
            b_reg: Default::default(),
            b_nonce: Default::default(),
            b_rly: Default::default(),
            agg_op: Default::default(),
            nr: Default::default(),
            nr1: Default::default(),
            o_f: Default::default(),
            e_mc: Default::default(),
            e_slot: Default::default(),
            e_orig: Default::default(),
            ri: Default::default(),
            ri2: Default::default(),
            rl: Default::default(),
            e_more: Default::default(),
            e_last: Default::default(),
            cs_i: Default::default(),
            cs_j: Default::default(),
            cs_v: Default::default(),
            ei: Default::default(),
            more: Default::default(),
            pmask: Default::default(),
            pm_two: Default::default(),
            pp_mac: n(p),
            pp_ip: n(p),
            pp_udp: n(p),
            pp_child: n(p),
            b_done: Default::default(),
            b_free: Default::default(),
            el_init: Default::default(),
            pm_low: Default::default(),
            sel_mac: Default::default(),
            sel_ip: Default::default(),
            sel_udp: Default::default(),
            sel_child: Default::default(),
            cs_port: Default::default(),
            cs_hit: Default::default(),
            cs_ok: Default::default(),
            tg_v: Default::default(),
            tg_first: Default::default(),
            ov_new: Default::default(),
            ov_cur: Default::default(),
            h_latch: Default::default(),
            rx_row_data: Default::default(),
            nonce_be: Default::default(),
            nonce_row: Default::default(),
            c_idx4: idx4(8),
            c_mclog: k16(mclog as u64),
            c_mcmask: mc_mask(mclog as u64),
            c_rpclog: k16(rpc.trailing_zeros() as u64),
            c_lprlog: k16(lpr.trailing_zeros() as u64),
            // The OVERFLOW flag in the header region (AXI-Stream byte order).
            c_ovbit: Constant::new(Bits::<512>::default().replace_bit(
                8 * (fanin_proto::wire::L2L4_LEN + fanin_proto::wire::header::field::FLAGS)
                    + Flags::OVERFLOW.trailing_zeros() as usize,
                true,
            )),
        }
    }
}

impl<const WB: usize> Logic for BackEnd<WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, bstate, b_sel, b_row0, b_nrows, b_enr, b_rel, b_cadr, b_hdr, b_len, b_ji,
            b_nch, b_emit, b_eovf, b_reg, b_nonce, b_rly, agg_op, nr, nr1, o_f, e_mc, e_slot,
            e_orig, ri, ri2, rl, e_more, e_last, cs_i, cs_j, cs_v, ei, more, pmask, pm_two
        );
        for p in 0..self.pp_mac.len() {
            self.pp_mac[p].clock.next = self.clock.val();
            self.pp_mac[p].d.next = self.pp_mac[p].q.val();
            self.pp_ip[p].clock.next = self.clock.val();
            self.pp_ip[p].d.next = self.pp_ip[p].q.val();
            self.pp_udp[p].clock.next = self.clock.val();
            self.pp_udp[p].d.next = self.pp_udp[p].q.val();
            self.pp_child[p].clock.next = self.clock.val();
            self.pp_child[p].d.next = self.pp_child[p].q.val();
        }
        self.acc.clock.next = self.clock.val();
        self.idle.next = self.bstate.q.val() == BackState::Idle;
        self.pmask_q.next = self.pmask.q.val();
        self.rel_q.next = self.b_rel.q.val();
        self.sel_q.next = self.b_sel.q.val();
        self.r_addr.next = self.b_row0.q.val() + self.ri.q.val();
        self.rel_row.next = self.b_row0.q.val() + self.b_nrows.q.val();
        // Payload row read in the previous cycle (the port is the one of that cycle's item,
        // `copy.sel_q`: the next item may already have started).
        self.rx_row_data.next = self.rx_data[0].val();
        for p in 0..self.rx_data.len() {
            if self.copy.sel_q.val() == self.c_idx4[p].val() {
                self.rx_row_data.next = self.rx_data[p].val();
            }
        }
        // Rows copied to the egress: the Acc's stage-3 row (slot rows read by `OP_READ`),
        // or the ingress row it carries alongside (`bd`: forwarded frames).
        // (`e_slot` of the item that read the row three cycles before, `copy.slot_q`: the
        // next item may already have started; `copy.rs`.)
        // An ACCEPT's one row is its nonce (an element, big-endian; `b_reg`, as `e_slot`).
        // (Swapped in a 32-bit signal first: inside `bit_cast` the Verilog shifts would be
        // evaluated at the row's width and keep the bits shifted out; toolchain notes.)
        self.nonce_be.next = (self.copy.nonce_q.val() >> 24)
            | ((self.copy.nonce_q.val() >> 8) & 0xff00)
            | ((self.copy.nonce_q.val() << 8) & 0xff0000)
            | (self.copy.nonce_q.val() << 24);
        self.nonce_row.next = bit_cast::<WB, 32>(self.nonce_be.val());
        if self.copy.slot_q.val() {
            self.w_row.next = self.acc.rd.val();
        } else if self.copy.accept_q.val() {
            self.w_row.next = self.nonce_row.val();
        } else {
            self.w_row.next = self.acc.bd.val();
        }
        // Destination ports of the item: the lowest one is selected next.
        self.pm_low.next = self.pmask.q.val() & (!self.pmask.q.val() + 1);
        self.sel_mac.next = 0.into();
        self.sel_ip.next = 0.into();
        self.sel_udp.next = 0.into();
        self.sel_child.next = 0.into();
        for p in 0..self.pp_mac.len() {
            if self.pm_low.val().get_bit(p) {
                self.sel_mac.next = self.sel_mac.val() | self.pp_mac[p].q.val();
                self.sel_ip.next = self.sel_ip.val() | self.pp_ip[p].q.val();
                self.sel_udp.next = self.sel_udp.val() | self.pp_udp[p].q.val();
                self.sel_child.next = self.sel_child.val() | self.pp_child[p].q.val();
            }
        }
        // The slot copy's overflow bit (`overflow.rs`): with the Acc's saturation of the
        // stage-4 row (`ov_new`), and as of this cycle (`ov_cur`, for headers of frames
        // built from slot rows).
        self.ov_new.next = self.ovb.prev.val() | self.acc.ovf.val();
        if self.ovb.t4_v_q.val() & (self.ovb.t4_a_q.val() == self.b_cadr.q.val()) {
            self.ov_cur.next = self.ov_new.val();
        } else {
            self.ov_cur.next = self.ovb.rd.val();
        }
        // The header pushed (`p_hdr`): the destination pipeline's header register, with
        // the copy's overflow bit of the RMW row that reaches stage 4 in the push cycle
        // (`pb_hit_q`, see `dest.rs`).
        self.p_hdr.next = self.dest.hdr_q.val();
        if self.dest.pb_hit_q.val() {
            if self.dest.pb_fov_q.val() | self.ov_new.val() {
                self.p_hdr.next = self.dest.hdr_q.val() | self.c_ovbit.val();
            } else {
                self.p_hdr.next = self.dest.hdr_q.val() & !self.c_ovbit.val();
            }
        }
        // Slot data path.
        self.acc.op.next = 0.into();
        self.acc.addr.next =
            (self.b_cadr.q.val() << self.c_rpclog.val()) + bit_cast::<ADDR_W, 16>(self.ri.q.val());
        self.acc.lim.next = self.o_f.q.val().elements - (self.ri.q.val() << self.c_lprlog.val());
        self.acc.b.next = self.rx_row_data.val();
        self.cp_rd.next = false;
        // ---- The item's state (`BackState`). ----
        self.h_latch.next = false;
        self.tg_v.next = false;
        self.tg_first.next = false;
        self.cs_port.next = self.ch_data.val().get_value_port();
        self.cs_hit.next =
            (self.pmask.q.val() & (bits::<8>(1) << bit_cast::<8, 4>(self.cs_port.val()))) != 0;
        self.cs_ok.next = !self.b_rly.q.val()
            | ((self.ch_data.val().get_value_ranks() & self.o_f.q.val().bitmap) != 0);
        self.ch_addr.next = (bit_cast::<ADDR_W, 8>(self.b_ji.q.val()) << self.c_mclog.val())
            | (bit_cast::<ADDR_W, 8>(self.cs_i.q.val()) & self.c_mcmask.val());
        self.pm_two.d.next = false;
        for a in 0..8 {
            for b in 0..8 {
                if (a < b) & (self.pmask.q.val() == ((bits::<8>(1) << a) | (bits::<8>(1) << b))) {
                    self.pm_two.d.next = true;
                }
            }
        }
        // The destination pipeline (`dest.rs`: select, then HdrGen's field registers, its
        // header register, the push), one port per cycle. It runs by itself, so the back
        // end may hand over to the next item in the cycle of the last select (`last_sel`).
        self.push.next = self.dest.push.val();
        self.push_mc.next = self.dest.push_mc.val();
        self.p_len.next = self.dest.len_q.val();
        // The item finishes this cycle (`b_done`, hence `b_free`): the states' ends, as
        // terms of registers (`finish.rs`), and the ports' room.
        self.b_done.next =
            self.fin.done_now.val() | (self.fin.done_if_room.val() & self.room.val());
        self.done_now.next = self.fin.done_now.val();
        self.done_if_room.next = self.fin.done_if_room.val();
        match self.bstate.q.val() {
            BackState::Rmw => {
                // RMW: one slot row per cycle through the Acc (an item without rows still
                // records its overflow bit). The next item's rows may follow at once.
                self.tg_v.next = true;
                self.tg_first.next = self.ri.q.val() == 0;
                if self.ri.q.val() < self.nr.q.val() {
                    self.acc.op.next = self.agg_op.q.val();
                }
                self.ri.d.next = self.ri.q.val() + 1;
                self.ri2.d.next = self.ri2.q.val() + 1;
                // `rl`: this is the item's last RMW cycle (set at hand-over for row 0).
                self.rl.d.next = (self.ri.q.val() + 2) >= self.nr1.q.val();
                if self.rl.q.val() {
                    self.ri.d.next = 0.into();
                    self.ri2.d.next = 2.into();
                    self.e_more.d.next = self.b_enr.q.val() != 0;
                    self.e_last.d.next = self.b_enr.q.val() == 1;
                    if !self.b_emit.q.val() {
                        self.bstate.d.next = BackState::Idle;
                    } else {
                        // (A multicast's first round was scanned in the item stage.)
                        self.bstate.d.next = BackState::CopyRows;
                    }
                }
            }
            BackState::ChildScan => {
                // Child scan of one multicast round: the children from `ei` on while their
                // ports are distinct (one frame per port per round keeps every port's frames
                // in child order); a child on a port already taken starts the next round.
                if self.cs_i.q.val() < self.b_nch.q.val() {
                    self.cs_v.d.next = true;
                    self.cs_j.d.next = self.cs_i.q.val();
                    self.cs_i.d.next = self.cs_i.q.val() + 1;
                } else {
                    self.cs_v.d.next = false;
                }
                if self.cs_v.q.val() & self.cs_ok.val() & self.cs_hit.val() {
                    self.ei.d.next = self.cs_j.q.val();
                    self.more.d.next = true;
                    self.bstate.d.next = BackState::CopyRows;
                } else {
                    if self.cs_v.q.val() & self.cs_ok.val() {
                        self.pmask.d.next = self.pmask.q.val()
                            | (bits::<8>(1) << bit_cast::<8, 4>(self.cs_port.val()));
                        for p in 0..self.pp_mac.len() {
                            if self.cs_port.val() == self.c_idx4[p].val() {
                                self.pp_mac[p].d.next = self.ch_data.val().get_value_mac();
                                self.pp_ip[p].d.next = self.ch_data.val().get_value_ip();
                                self.pp_udp[p].d.next = self.ch_data.val().get_value_udp();
                                self.pp_child[p].d.next = self.cs_j.q.val();
                            }
                        }
                    }
                    if self.cs_i.q.val() >= self.b_nch.q.val() {
                        self.more.d.next = false;
                        self.bstate.d.next = BackState::CopyRows;
                    }
                }
            }
            BackState::CopyRows => {
                // Copy the payload rows (slot rows or ingress rows) to all destination ports
                // at once, starting when every one of them has room for a maximum frame.
                // (Not in the cycle after a select: the egress ports' `ready` counts the
                // rows the item before still has in the Acc's pipeline (three cycles from
                // read to egress write) only from two cycles after they are written; this
                // bounds those uncounted rows to three, the margin `Tx` keeps.)
                if (self.ri.q.val() != 0) | (self.room.val() & !self.dest.v_a_q.val()) {
                    // (`e_more`: ri != b_enr; `e_last`: ri + 1 == b_enr; both registered,
                    // set at hand-over and updated as ri counts.)
                    if self.e_more.q.val() {
                        if self.e_slot.q.val() {
                            self.acc.op.next = 3.into();
                        }
                        self.ri.d.next = self.ri.q.val() + 1;
                        self.ri2.d.next = self.ri2.q.val() + 1;
                        self.e_more.d.next = !self.e_last.q.val();
                        self.e_last.d.next = self.ri2.q.val() == self.b_enr.q.val();
                        self.cp_rd.next = true;
                        if self.e_last.q.val() {
                            // The first destination is selected with the last row (its
                            // push comes after the row reaches the egress ports).
                            self.bstate.d.next = BackState::FirstHeader;
                            if self.fin.hdr_ok.val() {
                                self.h_latch.next = self.pmask.q.val() != 0;
                                self.bstate.d.next = BackState::Select;
                                if self.fin.last_sel.val() {
                                    self.bstate.d.next = BackState::Idle;
                                }
                            }
                        }
                    } else {
                        // (No rows: the first destination is selected at once.)
                        self.bstate.d.next = BackState::FirstHeader;
                        if self.fin.hdr_ok.val() {
                            self.h_latch.next = self.pmask.q.val() != 0;
                            self.bstate.d.next = BackState::Select;
                            if self.fin.last_sel.val() {
                                self.bstate.d.next = BackState::Idle;
                            }
                        }
                    }
                }
            }
            BackState::FirstHeader => {
                // Destinations, four stages per port, one port per cycle: select (the
                // destination's and the item's header fields into `hs_*`/`hx_*`), build in
                // two (HdrGen's field registers, then its header register), push. Starts
                // once the copy's overflow bit is readable (it joins the flags; a later
                // RMW row's update is caught at the build, `ov_now`).
                if self.fin.hdr_ok.val() {
                    self.h_latch.next = self.pmask.q.val() != 0;
                    self.bstate.d.next = BackState::Select;
                    if self.fin.last_sel.val() {
                        self.bstate.d.next = BackState::Idle;
                    }
                }
            }
            BackState::Select => {
                if self.pmask.q.val() != 0 {
                    self.h_latch.next = true;
                    if self.fin.last_sel.val() {
                        self.bstate.d.next = BackState::Idle;
                    }
                } else if !self.dest.v_a_q.val() & !self.dest.v_c_q.val() {
                    // This cycle's push (if any) is the last of the round.
                    if self.more.q.val() {
                        // The next multicast round.
                        self.cs_i.d.next = self.ei.q.val();
                        self.cs_v.d.next = false;
                        self.more.d.next = false;
                        self.ri.d.next = 0.into();
                        self.ri2.d.next = 2.into();
                        self.e_more.d.next = self.b_enr.q.val() != 0;
                        self.e_last.d.next = self.b_enr.q.val() == 1;
                        self.bstate.d.next = BackState::ChildScan;
                    } else {
                        self.bstate.d.next = BackState::Idle;
                    }
                }
            }
            BackState::Release => {
                // Release only (the frame was dropped or only counted).
                self.bstate.d.next = BackState::Idle;
            }
            _ => {}
        }
        // Select the lowest remaining destination port: the destination pipeline takes it
        // with the destination's fields (a multicast child's, or the item's own) and the
        // item's header fields.
        if self.h_latch.val() {
            self.pmask.d.next = self.pmask.q.val() & !self.pm_low.val();
        }
        self.dest.clock.next = self.clock.val();
        self.dest.ld.next = self.h_latch.val();
        self.dest.port.next = self.pm_low.val();
        self.dest.mc.next = self.e_mc.q.val();
        self.dest.rly.next = self.b_rly.q.val();
        self.dest.ch_mac.next = self.sel_mac.val();
        self.dest.ch_ip.next = self.sel_ip.val();
        self.dest.ch_udp.next = self.sel_udp.val();
        self.dest.ch_child.next = self.sel_child.val();
        self.dest.item.next = self.o_f.q.val();
        self.dest.eovf.next = self.b_eovf.q.val();
        self.dest.ov.next = self.ov_cur.val();
        self.dest.cadr.next = self.b_cadr.q.val();
        self.dest.orig.next = self.e_orig.q.val();
        self.dest.orig_hdr.next = self.b_hdr.q.val();
        self.dest.orig_len.next = self.b_len.q.val();
        self.dest.t3_v.next = self.ovb.t3_v_q.val();
        self.dest.t3_a.next = self.ovb.t3_a_q.val();
        self.dest.t4_v.next = self.ovb.t4_v_q.val();
        self.dest.t4_a.next = self.ovb.t4_a_q.val();
        self.dest.ov_new.next = self.ov_new.val();
        // A copied row reaches the Acc's stage 3 three cycles after its read was issued
        // (`copy.rs`), and is written there to the destination ports of the read's cycle.
        self.copy.clock.next = self.clock.val();
        self.copy.rd.next = self.cp_rd.val();
        self.copy.mask.next = self.pmask.q.val();
        self.copy.slot.next = self.e_slot.q.val();
        self.copy.accept.next = self.b_reg.q.val();
        self.copy.nonce_in.next = self.b_nonce.q.val();
        self.copy.sel.next = self.b_sel.q.val();
        self.w_we.next = self.copy.wm_q.val();
        // The overflow bits of the slot copies (`overflow.rs`): the tag of this cycle's RMW
        // row follows it through the Acc.
        self.ovb.clock.next = self.clock.val();
        self.ovb.tg_v.next = self.tg_v.val();
        self.ovb.tg_first.next = self.tg_first.val();
        self.ovb.start.next = self.agg_op.q.val() == 1;
        self.ovb.cadr.next = self.b_cadr.q.val();
        self.ovb.sat.next = self.acc.ovf.val();
        // The end-of-item terms (`finish.rs`) from the registers.
        self.fin.bstate.next = self.bstate.q.val();
        self.fin.rl.next = self.rl.q.val();
        self.fin.emit.next = self.b_emit.q.val();
        self.fin.ri_nz.next = self.ri.q.val() != 0;
        self.fin.e_more.next = self.e_more.q.val();
        self.fin.e_last.next = self.e_last.q.val();
        self.fin.pmask.next = self.pmask.q.val();
        self.fin.pm_two.next = self.pm_two.q.val();
        self.fin.more.next = self.more.q.val();
        self.fin.orig.next = self.e_orig.q.val();
        self.fin.mc.next = self.e_mc.q.val();
        self.fin.eovf.next = self.b_eovf.q.val();
        self.fin.cadr.next = self.b_cadr.q.val();
        self.fin.or_a.next = self.ovb.or_a_q.val();
        self.fin.v_a.next = self.dest.v_a_q.val();
        self.fin.v_c.next = self.dest.v_c_q.val();
        // ---- Hand-over: the next item comes in when the back end is idle or finishing
        // this cycle (`b_free`): the defaults first (the front end's frame), then the item
        // stage's item (`l_go`) or the front end's (`f_go`, `fi.item`, `fi.slot`). ----
        self.b_free.next = (self.bstate.q.val() == BackState::Idle) | self.b_done.val();
        // (`e_last` is written last from `el_init` when `b_free`: every hand-over below
        // implies it, and one mux on `b_free` keeps its row compare off a long chain.)
        self.el_init.next = self.b_enr.q.val() == 1;
        if self.b_free.val() {
            self.b_sel.d.next = self.fi.val().sel;
            self.b_row0.d.next = self.fi.val().row0;
            self.b_nrows.d.next = self.fi.val().nrows;
            self.b_rel.d.next = self.fi.val().rel;
            self.b_hdr.d.next = self.fi.val().hdr;
            self.b_len.d.next = self.fi.val().len;
            self.e_orig.d.next = self.fi.val().orig;
            self.e_mc.d.next = false;
            self.b_rly.d.next = false;
            self.b_reg.d.next = false;
            self.e_slot.d.next = self.fi.val().slot;
            self.b_emit.d.next = false;
            self.b_eovf.d.next = self.fi.val().slot;
            self.ri.d.next = 0.into();
            self.ri2.d.next = 2.into();
            self.e_more.d.next = self.b_enr.q.val() != 0;
            self.ei.d.next = 0.into();
            self.more.d.next = false;
        }
        // The item stage's item (it moves here when the back end is free).
        if self.l_go.val() {
            self.bstate.d.next = self.l_item.val().st;
            self.rl.d.next = self.l_item.val().rl;
            // (An ACCEPT of the session unit has no ingress frame to release.)
            self.b_rel.d.next = !self.l_item.val().accept;
            self.b_reg.d.next = self.l_item.val().accept;
            self.b_nonce.d.next = self.l_item.val().nonce;
            self.agg_op.d.next = self.l_item.val().aop;
            self.b_cadr.d.next = self.l_item.val().cadr;
            self.b_emit.d.next = self.l_item.val().emit;
            self.b_enr.d.next = self.l_item.val().enr;
            self.b_eovf.d.next = self.l_item.val().eovf;
            self.b_hdr.d.next = self.l_item.val().hdr;
            self.b_ji.d.next = self.l_item.val().ji;
            self.b_len.d.next = self.l_item.val().len;
            self.b_nch.d.next = self.l_item.val().nch;
            self.b_nrows.d.next = self.l_item.val().nrows;
            self.b_row0.d.next = self.l_item.val().row0;
            self.b_sel.d.next = self.l_item.val().sel;
            self.el_init.next = self.l_item.val().last;
            self.e_mc.d.next = self.l_item.val().mc;
            self.b_rly.d.next = self.l_item.val().rly;
            self.e_more.d.next = self.l_item.val().more_rows;
            self.e_slot.d.next = self.l_item.val().slot;
            self.nr.d.next = self.l_item.val().nr;
            if self.l_item.val().nr == 0 {
                self.nr1.d.next = 1.into();
            } else {
                self.nr1.d.next = self.l_item.val().nr;
            }
            self.o_f.d.next = self.l_o.val();
            self.pmask.d.next = self.l_item.val().pmask;
            self.ei.d.next = self.l_item.val().ei;
            self.more.d.next = self.l_item.val().more;
            for p in 0..self.pp_mac.len() {
                self.pp_mac[p].d.next = self.l_pp_mac[p].val();
                self.pp_ip[p].d.next = self.l_pp_ip[p].val();
                self.pp_udp[p].d.next = self.l_pp_udp[p].val();
                self.pp_child[p].d.next = self.l_pp_child[p].val();
            }
        }
        // The front end's item: a frame to send (a routed frame, an ARP reply, the scan's
        // flush), the flushed copy.
        if self.fi.val().item {
            self.b_enr.d.next = self.fi.val().enr;
            self.e_more.d.next = self.fi.val().more;
            self.el_init.next = self.fi.val().last;
            self.pmask.d.next = self.fi.val().pmask;
        }
        if self.fi.val().slot {
            self.b_cadr.d.next = self.fi.val().cadr;
            self.o_f.d.next = self.f_o.val();
        }
        if self.b_free.val() {
            self.e_last.d.next = self.el_init.val();
        }
        if self.f_go.val() {
            self.bstate.d.next = self.f_st.val();
            self.rl.d.next = self.f_rl.val();
        }
    }
}
