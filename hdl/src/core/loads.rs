//! The item stage's two loaders, as terms of registers: DECIDE's item with its effects
//! (the copy's metadata write `dwe`/`dwd`, the busy-count update `dbi`/`dbd`/`dhwc`, the
//! counter events `ev`, a multicast `mc`, a JOIN for the session unit `join_go`), and the
//! root's session unit's ACCEPT (`ac`, `ac_o`); and the header fields of the timer scan's
//! flush, which the back end loads (`sf_o`). The branch was chosen in DSEL (`dsel.rs`);
//! this block fills the item's fields for it (`Switch::contribution` / `result` /
//! `aggregate_frame` / `refuse_frame` / `accept_frame`).
//!
//! A leaf with no registers, as `finish.rs`: its inputs are registers (DECIDE's copies
//! `dx_*`, the decision's context `x_*` and `q_*` (PRED's `x_mg`), DSEL's branch, the item stage's `sq`,
//! the session unit's ACCEPT, the scan's `q_*`, the metadata port's output, the identity
//! registers), and the engine loads the item
//! stage from its outputs when DECIDE completes (`item.dec_go`) or an ACCEPT is staged
//! (`item.ac_go`). A field a loader does not write holds the stage's value (`sq`): DECIDE
//! does not write `nonce`, an ACCEPT not `hdr` and `len`.

use crate::layout::{at, mask, JobWord, MetaWord, RegValue};
use crate::ram::ADDR_W;
use fanin_proto::model::{CopyState, Counter};
use fanin_proto::wire::{Flags, PacketType};
use fanin_regs::layout::meta;
use rust_hdl::prelude::*;

use super::states::{
    copy_state, event, flag, packet_type, Accept, Action, BackState, Branch, Ctx, Fields, Merged,
    OutFields, Staged,
};
use super::{JOB_W, META_W};

/// DECIDE's and the ACCEPT's items and the scan flush's fields (see the module documentation).
#[derive(LogicBlock)]
pub struct Loads {
    /// DSEL's branch.
    pub br: Signal<In, Branch>,
    /// DECIDE's frame fields (`dx_f`).
    pub f: Signal<In, Fields>,
    /// DECIDE's frame context (`dx_c`).
    pub c: Signal<In, Ctx>,
    /// DECIDE's job entry index (`dx_ji`).
    pub ji: Signal<In, Bits<8>>,
    /// DECIDE's slot copy address (`dx_cadr`).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// The decision's job entry (`x_je`).
    pub je: Signal<In, Bits<JOB_W>>,
    /// The job entry's epoch (`x_jep`).
    pub jep: Signal<In, Bits<32>>,
    /// PRED's copy of the slot copy's metadata, the merge and the rows (`x_mg`).
    pub mg: Signal<In, Merged>,
    /// PRED's condition: the copy is busy.
    pub busy_st: Signal<In, bool>,
    /// PRED's condition: the copy holds the packet's block.
    pub samebl: Signal<In, bool>,
    /// Our MAC address.
    pub me_mac: Signal<In, Bits<48>>,
    /// Our IPv4 address.
    pub me_ip: Signal<In, Bits<32>>,
    /// Our UDP port.
    pub me_port: Signal<In, Bits<16>>,
    /// The item stage's item (the fields a loader does not write).
    pub sq: Signal<In, Staged>,
    /// The session unit's ACCEPT.
    pub ac_in: Signal<In, Accept>,
    /// The ACCEPT's job entry.
    pub ac_entry: Signal<In, Bits<8>>,
    /// The scan's copy's metadata (`metaport.rs`' `m`).
    pub sm: Signal<In, Bits<META_W>>,
    /// The job entry the scan's copy was written under (`q_sj`).
    pub sj: Signal<In, Bits<JOB_W>>,
    /// The scan's copy is partial (`q_s.partial`).
    pub spartial: Signal<In, bool>,
    /// DECIDE's item.
    pub ld: Signal<Out, Staged>,
    /// DECIDE's item's header fields.
    pub ld_o: Signal<Out, OutFields>,
    /// DECIDE's item is a multicast.
    pub mc: Signal<Out, bool>,
    /// DECIDE's counter events.
    pub ev: Signal<Out, Bits<32>>,
    /// DECIDE hands a JOIN to the session unit.
    pub join_go: Signal<Out, bool>,
    /// DECIDE writes the copy's metadata (`dwd`).
    pub dwe: Signal<Out, bool>,
    /// The metadata DECIDE writes.
    pub dwd: Signal<Out, Bits<META_W>>,
    /// DECIDE adds a busy copy to the job.
    pub dbi: Signal<Out, bool>,
    /// DECIDE removes a busy copy from the job.
    pub dbd: Signal<Out, bool>,
    /// DECIDE raises the busy copies' high water.
    pub dhwc: Signal<Out, bool>,
    /// The ACCEPT's item.
    pub ac: Signal<Out, Staged>,
    /// The ACCEPT's header fields.
    pub ac_o: Signal<Out, OutFields>,
    /// The header fields of the scan's flush (for the back end's `f_o`).
    pub sf_o: Signal<Out, OutFields>,
    /// The copy's metadata after an aggregation (a new epoch, or the merge).
    cmw: Signal<Local, Bits<META_W>>,
    /// The copy completes at the root.
    cr: Signal<Local, bool>,
    /// The item's back-end state.
    st: Signal<Local, BackState>,
    // PRED's copy of the metadata word (`mg.m`) and its fields.
    xm: Signal<Local, Bits<META_W>>,
    xm_flags: Signal<Local, Bits<8>>,
    xm_exp: Signal<Local, Bits<8>>,
    xm_elem: Signal<Local, Bits<16>>,
    xm_block: Signal<Local, Bits<32>>,
    xm_bitmap: Signal<Local, Bits<64>>,
    cs_aggregating: Constant<Bits<3>>,
    cs_done: Constant<Bits<3>>,
    cs_emitted: Constant<Bits<3>>,
    ev_completions: Constant<Bits<32>>,
    fl_bypass: Constant<Bits<8>>,
    fl_multicast: Constant<Bits<8>>,
    fl_partial: Constant<Bits<8>>,
    pt_accept: Constant<Bits<8>>,
    pt_contribution: Constant<Bits<8>>,
    pt_refuse: Constant<Bits<8>>,
    pt_result: Constant<Bits<8>>,
    at_meta_entry: Constant<Bits<16>>,
    at_meta_epoch_lo: Constant<Bits<16>>,
    at_meta_epoch_hi: Constant<Bits<16>>,
    at_meta_block: Constant<Bits<16>>,
    at_meta_bitmap: Constant<Bits<16>>,
    at_meta_exponent: Constant<Bits<16>>,
    at_meta_flags: Constant<Bits<16>>,
    at_meta_elements: Constant<Bits<16>>,
    at_meta_timer: Constant<Bits<16>>,
    at_meta_touched: Constant<Bits<16>>,
    mk_meta_state: Constant<Bits<META_W>>,
    mk_meta_state_times: Constant<Bits<META_W>>,
    mk_meta_bitmap_flags: Constant<Bits<META_W>>,
}

impl Default for Loads {
    fn default() -> Self {
        Self {
            br: Default::default(),
            f: Default::default(),
            c: Default::default(),
            ji: Default::default(),
            cadr: Default::default(),
            je: Default::default(),
            jep: Default::default(),
            mg: Default::default(),
            busy_st: Default::default(),
            samebl: Default::default(),
            me_mac: Default::default(),
            me_ip: Default::default(),
            me_port: Default::default(),
            sq: Default::default(),
            ac_in: Default::default(),
            ac_entry: Default::default(),
            sm: Default::default(),
            sj: Default::default(),
            spartial: Default::default(),
            ld: Default::default(),
            ld_o: Default::default(),
            mc: Default::default(),
            ev: Default::default(),
            join_go: Default::default(),
            dwe: Default::default(),
            dwd: Default::default(),
            dbi: Default::default(),
            dbd: Default::default(),
            dhwc: Default::default(),
            ac: Default::default(),
            ac_o: Default::default(),
            sf_o: Default::default(),
            cmw: Default::default(),
            cr: Default::default(),
            st: Default::default(),
            xm_flags: Default::default(),
            xm_exp: Default::default(),
            xm_elem: Default::default(),
            xm: Default::default(),
            xm_block: Default::default(),
            xm_bitmap: Default::default(),
            cs_aggregating: copy_state(CopyState::Aggregating),
            cs_done: copy_state(CopyState::Done),
            cs_emitted: copy_state(CopyState::Emitted),
            ev_completions: event(Counter::Completions),
            fl_bypass: flag(Flags::BYPASS),
            fl_multicast: flag(Flags::MULTICAST),
            fl_partial: flag(Flags::PARTIAL),
            pt_accept: packet_type(PacketType::Accept),
            pt_contribution: packet_type(PacketType::Contribution),
            pt_refuse: packet_type(PacketType::Refuse),
            pt_result: packet_type(PacketType::Result),
            at_meta_entry: at(meta::ENTRY),
            at_meta_epoch_lo: at(meta::EPOCH_LO),
            at_meta_epoch_hi: at(meta::EPOCH_HI),
            at_meta_block: at(meta::BLOCK),
            at_meta_bitmap: at(meta::BITMAP),
            at_meta_exponent: at(meta::EXPONENT),
            at_meta_flags: at(meta::FLAGS),
            at_meta_elements: at(meta::ELEMENTS),
            at_meta_timer: at(meta::TIMER),
            at_meta_touched: at(meta::TOUCHED),
            mk_meta_state: mask(&[meta::STATE]),
            mk_meta_state_times: mask(&[meta::STATE, meta::TIMER, meta::TOUCHED]),
            mk_meta_bitmap_flags: mask(&[meta::BITMAP, meta::FLAGS, meta::TOUCHED]),
        }
    }
}

impl Logic for Loads {
    #[hdl_gen]
    fn update(&mut self) {
        self.xm.next = self.mg.val().m;
        self.xm_block.next = self.xm.val().get_value_block();
        self.xm_bitmap.next = self.xm.val().get_value_bitmap();
        self.xm_exp.next = self.xm.val().get_value_exponent();
        self.xm_flags.next = self.xm.val().get_value_flags();
        self.xm_elem.next = self.xm.val().get_value_elements();
        self.mc.next = false;
        self.join_go.next = false;
        self.ld.next = self.sq.val();
        // Aggregation defaults: start a new epoch of the copy.
        self.cmw.next = bit_cast::<META_W, 3>(self.cs_aggregating.val())
            | (bit_cast::<META_W, 8>(self.ji.val()) << self.at_meta_entry.val())
            | (bit_cast::<META_W, 16>(self.jep.val().get_value_epoch_lo())
                << self.at_meta_epoch_lo.val())
            | (bit_cast::<META_W, 16>(self.jep.val().get_value_epoch_hi())
                << self.at_meta_epoch_hi.val())
            | (bit_cast::<META_W, 32>(self.f.val().block) << self.at_meta_block.val())
            | (bit_cast::<META_W, 64>(self.f.val().bitmap) << self.at_meta_bitmap.val())
            | (bit_cast::<META_W, 8>(self.f.val().exponent) << self.at_meta_exponent.val())
            | (bit_cast::<META_W, 8>(self.mg.val().sflags) << self.at_meta_flags.val())
            | (bit_cast::<META_W, 16>(self.f.val().elements) << self.at_meta_elements.val())
            | (bit_cast::<META_W, 32>(self.c.val().now) << self.at_meta_timer.val())
            | (bit_cast::<META_W, 32>(self.c.val().now) << self.at_meta_touched.val());
        if self.br.val().merge {
            // A merge is progress: `touched` moves on (the timer stays the first
            // contribution's).
            self.cmw.next = (self.xm.val() & !self.mk_meta_bitmap_flags.val())
                | (bit_cast::<META_W, 64>(self.mg.val().newbm) << self.at_meta_bitmap.val())
                | (bit_cast::<META_W, 8>(self.mg.val().mflags) << self.at_meta_flags.val())
                | (bit_cast::<META_W, 32>(self.c.val().now) << self.at_meta_touched.val());
        }
        self.cr.next = self.br.val().cpl & !self.je.val().get_value_inner();
        self.dwe.next = false;
        self.dwd.next = self.cmw.val();
        self.dbi.next = false;
        self.dbd.next = false;
        self.dhwc.next = false;
        if (self.f.val().ptype == self.pt_result.val())
            & self.je.val().get_value_inner()
            & self.br.val().rok
            & self.samebl.val()
        {
            // A result at an inner switch: the copy holding this block is Done.
            self.dwe.next = true;
            self.dwd.next = (self.xm.val() & !self.mk_meta_state.val())
                | bit_cast::<META_W, 3>(self.cs_done.val());
            self.dbd.next = self.busy_st.val();
        }
        if self.br.val().act == Action::Aggregate {
            // Aggregate: the copy's metadata after the merge (Switch::try_complete: Emitted
            // at an inner switch, Done at the root on completion).
            self.dwe.next = true;
            if self.br.val().cpl {
                if self.je.val().get_value_inner() {
                    self.dwd.next = (self.cmw.val() & !self.mk_meta_state_times.val())
                        | bit_cast::<META_W, 3>(self.cs_emitted.val())
                        | (bit_cast::<META_W, 32>(self.c.val().now) << self.at_meta_timer.val())
                        | (bit_cast::<META_W, 32>(self.c.val().now) << self.at_meta_touched.val());
                } else {
                    self.dwd.next = (self.cmw.val() & !self.mk_meta_state.val())
                        | bit_cast::<META_W, 3>(self.cs_done.val());
                }
            }
            if self.br.val().aop == 1 {
                self.dhwc.next = !self.busy_st.val();
                self.dbi.next = !self.busy_st.val() & !self.cr.val();
                self.dbd.next = self.busy_st.val() & self.cr.val();
            } else {
                self.dbd.next = self.cr.val();
            }
        }
        self.ld.next.slot = false;
        self.ld.next.emit = false;
        self.ld.next.eovf = false;
        self.ld.next.accept = false;
        self.st.next = BackState::Release;
        // The item's frame fields are the decision's copies.
        self.ld.next.sel = self.c.val().sel;
        self.ld.next.row0 = self.c.val().row0;
        self.ld.next.nrows = self.c.val().nrows;
        self.ld.next.hdr = self.c.val().hdr;
        self.ld.next.len = self.c.val().len;
        self.ld.next.cadr = self.cadr.val();
        self.ld.next.ji = self.ji.val();
        self.ld.next.nch = self.je.val().get_value_children();
        // Fields of originated frames, by default from the packet.
        self.ld_o.next.src_mac = self.me_mac.val();
        self.ld_o.next.src_ip = self.me_ip.val();
        self.ld_o.next.src_port = self.me_port.val();
        self.ld_o.next.dst_mac = self.je.val().get_value_parent_mac();
        self.ld_o.next.dst_ip = self.je.val().get_value_parent_ip();
        self.ld_o.next.dst_port = self.je.val().get_value_parent_udp();
        self.ld.next.pmask =
            bits::<8>(1) << bit_cast::<8, 4>(self.je.val().get_value_parent_port());
        self.ld_o.next.ptype = self.f.val().ptype;
        self.ld_o.next.flags = self.f.val().flags;
        self.ld_o.next.exponent = self.f.val().exponent;
        self.ld_o.next.job = self.f.val().job;
        self.ld_o.next.elements = self.f.val().elements;
        self.ld.next.enr = self.mg.val().rows;
        self.ld.next.more_rows = self.mg.val().rows != 0;
        self.ld.next.last = self.mg.val().rows == 1;
        self.ld_o.next.block = self.f.val().block;
        self.ld_o.next.child = self.f.val().child;
        self.ld_o.next.bitmap = self.f.val().bitmap;
        self.ld.next.nr = self.mg.val().rows;
        // The branch was chosen in DSEL; its metadata write and busy-count update
        // are `dwe`/`dwd`, `dbi`/`dbd` (above).
        self.ev.next = self.br.val().ev;
        if (self.f.val().ptype == self.pt_result.val())
            & self.je.val().get_value_inner()
            & self.br.val().rok
        {
            // Result at an inner switch: multicast to the children.
            self.ld_o.next.src_ip = self.me_ip.val();
            self.ld_o.next.flags = self.f.val().flags | self.fl_multicast.val();
            self.mc.next = true;
            self.st.next = BackState::CopyRows;
        }
        match self.br.val().act {
            Action::Bypass => {
                // Bypass toward the parent: the sender's IPv4/UDP source, our MAC.
                self.ld_o.next.src_ip = self.f.val().src_ip;
                self.ld_o.next.src_port = self.f.val().src_port;
                self.ld_o.next.flags = self.f.val().flags | self.fl_bypass.val();
                self.st.next = BackState::CopyRows;
            }
            Action::Aggregate => {
                // Aggregate: the copy's metadata after the merge (Switch::try_complete:
                // Emitted at an inner switch, Done at the root on completion).
                self.st.next = BackState::Rmw;
                if self.br.val().cpl {
                    self.ev.next = self.ev.val() | self.ev_completions.val();
                    self.ld.next.emit = true;
                    self.ld.next.slot = true;
                    self.ld.next.eovf = true;
                    self.ld_o.next.exponent = self.cmw.val().get_value_exponent();
                    self.ld_o.next.bitmap = self.cmw.val().get_value_bitmap();
                    if self.je.val().get_value_inner() {
                        // Aggregate upward.
                        self.ld_o.next.ptype = self.pt_contribution.val();
                        self.ld_o.next.flags = self.cmw.val().get_value_flags();
                        self.ld_o.next.child = self.je.val().get_value_index_at_parent();
                    } else {
                        // Result multicast to the children.
                        self.ld_o.next.ptype = self.pt_result.val();
                        self.ld_o.next.flags =
                            self.cmw.val().get_value_flags() | self.fl_multicast.val();
                        self.mc.next = true;
                    }
                }
            }
            Action::ReEmit => {
                // Re-emit the stored aggregate (Switch::aggregate_frame).
                self.ld.next.slot = true;
                self.ld_o.next.ptype = self.pt_contribution.val();
                if self.mg.val().partial {
                    self.ld_o.next.flags = self.xm_flags.val() | self.fl_partial.val();
                } else {
                    self.ld_o.next.flags = self.xm_flags.val();
                }
                self.ld_o.next.exponent = self.xm_exp.val();
                self.ld_o.next.elements = self.xm_elem.val();
                self.ld.next.enr = self.mg.val().rows_m;
                self.ld.next.more_rows = self.mg.val().rows_m != 0;
                self.ld.next.last = self.mg.val().rows_m == 1;
                self.ld_o.next.block = self.xm_block.val();
                self.ld_o.next.child = self.je.val().get_value_index_at_parent();
                self.ld_o.next.bitmap = self.xm_bitmap.val();
                self.ld.next.eovf = true;
                self.st.next = BackState::CopyRows;
            }
            Action::Refuse => {
                // REFUSE to the sender out of the ingress port (Switch::refuse_frame):
                // the header only, the reason in `child`.
                self.ld_o.next.ptype = self.pt_refuse.val();
                self.ld_o.next.flags = 0.into();
                self.ld_o.next.exponent = 0.into();
                self.ld_o.next.elements = 0.into();
                self.ld_o.next.child = self.br.val().why;
                self.ld.next.enr = 0.into();
                self.ld.next.more_rows = false;
                self.ld.next.last = false;
                self.ld_o.next.dst_mac = self.f.val().src_mac;
                self.ld_o.next.dst_ip = self.f.val().src_ip;
                self.ld_o.next.dst_port = self.f.val().src_port;
                self.ld.next.pmask = bits::<8>(1) << bit_cast::<8, 4>(self.c.val().sel);
                self.st.next = BackState::CopyRows;
            }
            Action::Join => {
                // A JOIN at the root goes to the session unit; its frame is released.
                self.join_go.next = true;
            }
            Action::Relay => {
                // ACCEPT/REFUSE down to the children with one of its ranks: a
                // multicast of the packet as it came (no MULTICAST flag), from us.
                self.mc.next = true;
                self.st.next = BackState::CopyRows;
            }
            Action::Replay => {
                // Replay the result to the sender out of the ingress port.
                self.ld.next.slot = true;
                self.ld.next.eovf = true;
                self.ld_o.next.ptype = self.pt_result.val();
                self.ld_o.next.flags = self.xm_flags.val();
                self.ld_o.next.exponent = self.xm_exp.val();
                self.ld_o.next.elements = self.xm_elem.val();
                self.ld.next.enr = self.mg.val().rows_m;
                self.ld.next.more_rows = self.mg.val().rows_m != 0;
                self.ld.next.last = self.mg.val().rows_m == 1;
                self.ld_o.next.block = self.xm_block.val();
                self.ld_o.next.bitmap = self.xm_bitmap.val();
                self.ld_o.next.dst_mac = self.f.val().src_mac;
                self.ld_o.next.dst_ip = self.f.val().src_ip;
                self.ld_o.next.dst_port = self.f.val().src_port;
                self.ld.next.pmask = bits::<8>(1) << bit_cast::<8, 4>(self.c.val().sel);
                self.st.next = BackState::CopyRows;
            }
            _ => {}
        }
        self.ld.next.aop = self.br.val().aop;
        self.ld.next.rly = self.br.val().act == Action::Relay;
        self.ld.next.st = self.st.val();
        self.ld.next.rl = self.mg.val().rle1;
        // The ACCEPT (`Switch::accept_frame`: one element, the nonce).
        self.ac.next = self.sq.val();
        self.ac.next.st = BackState::CopyRows;
        self.ac.next.rl = true;
        self.ac.next.aop = 0.into();
        self.ac.next.nr = 0.into();
        self.ac.next.slot = false;
        self.ac.next.emit = false;
        self.ac.next.eovf = false;
        self.ac.next.rly = false;
        self.ac.next.accept = true;
        self.ac.next.nonce = self.ac_in.val().nonce;
        self.ac.next.enr = 1.into();
        self.ac.next.more_rows = true;
        self.ac.next.last = true;
        self.ac.next.sel = self.ac_in.val().port;
        self.ac.next.row0 = 0.into();
        self.ac.next.nrows = 0.into();
        self.ac.next.cadr = 0.into();
        self.ac.next.ji = self.ac_entry.val();
        self.ac.next.nch = 0.into();
        self.ac_o.next.src_mac = self.me_mac.val();
        self.ac_o.next.src_ip = self.me_ip.val();
        self.ac_o.next.src_port = self.me_port.val();
        self.ac_o.next.dst_mac = self.ac_in.val().mac;
        self.ac_o.next.dst_ip = self.ac_in.val().ip;
        self.ac_o.next.dst_port = self.ac_in.val().udp;
        self.ac.next.pmask = bits::<8>(1) << bit_cast::<8, 4>(self.ac_in.val().port);
        self.ac_o.next.ptype = self.pt_accept.val();
        self.ac_o.next.flags = 0.into();
        self.ac_o.next.exponent = 0.into();
        self.ac_o.next.job = self.ac_in.val().job;
        self.ac_o.next.elements = 1.into();
        self.ac_o.next.block = self.ac_in.val().block;
        self.ac_o.next.child = 0.into();
        self.ac_o.next.bitmap = self.ac_in.val().bm;
        // The timer scan's flush (SDEC): the copy's partial aggregate to the parent.
        self.sf_o.next.src_mac = self.me_mac.val();
        self.sf_o.next.src_ip = self.me_ip.val();
        self.sf_o.next.src_port = self.me_port.val();
        self.sf_o.next.dst_mac = self.sj.val().get_value_parent_mac();
        self.sf_o.next.dst_ip = self.sj.val().get_value_parent_ip();
        self.sf_o.next.dst_port = self.sj.val().get_value_parent_udp();
        self.sf_o.next.ptype = self.pt_contribution.val();
        if self.spartial.val() {
            self.sf_o.next.flags = self.sm.val().get_value_flags() | self.fl_partial.val();
        } else {
            self.sf_o.next.flags = self.sm.val().get_value_flags();
        }
        self.sf_o.next.exponent = self.sm.val().get_value_exponent();
        self.sf_o.next.job = self.sj.val().get_value_job();
        self.sf_o.next.elements = self.sm.val().get_value_elements();
        self.sf_o.next.block = self.sm.val().get_value_block();
        self.sf_o.next.child = self.sj.val().get_value_index_at_parent();
        self.sf_o.next.bitmap = self.sm.val().get_value_bitmap();
    }
}
