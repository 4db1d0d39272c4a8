//! The back end's destination pipeline: one destination port per cycle, in four stages
//! (select, HdrGen's field registers, its header register, push), after the back end
//! selected it (`ld`: the lowest port left in the item's mask).
//!
//! It runs by itself, so that the back end may take its next item in the cycle of its
//! item's last select: what the later stages need of the item travels with them (the
//! destination's fields in `hs_*`, the item's in `hx_*`, then `c_*`/`mc_*`/`orig_c`; a
//! routed frame's original header is not carried: its item waits for the push). The copy's
//! overflow bit follows the RMW rows still in the Acc (`t3_*`/`t4_*`, `ov_new`) into the
//! header's flags.
//!
//! Every output is a register, or a function of this block's registers only (the header
//! and length registers of its `HdrGen`, the push mask gated by its stage valid): no input
//! reaches an output in the same cycle (issue #24: cut only where a stage's outputs are
//! registered). The header the engine pushes ORs the late overflow bit in itself
//! (`pb_hit`/`pb_fov` here, `ov_new` there).

use crate::hdrgen::HdrGen;
use crate::ram::ADDR_W;
use fanin_proto::wire::Flags;
use rust_hdl::prelude::*;

use super::states::{flag, Fields, OutFields};

/// The destination pipeline of the back end (see the module documentation).
#[derive(LogicBlock)]
pub struct DestPipe {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Select destination port `port` this cycle (the back end's `h_latch`).
    pub ld: Signal<In, bool>,
    /// The selected port, one-hot (the lowest left in the item's mask).
    pub port: Signal<In, Bits<8>>,
    /// The item is a multicast: the destination is the port's child (`ch_*`).
    pub mc: Signal<In, bool>,
    /// The item relays an ACCEPT or REFUSE: it keeps its own child field, and its pushes
    /// are not `results_sent`.
    pub rly: Signal<In, bool>,
    /// The selected port's child: MAC.
    pub ch_mac: Signal<In, Bits<48>>,
    /// The selected port's child: IPv4 address.
    pub ch_ip: Signal<In, Bits<32>>,
    /// The selected port's child: UDP port.
    pub ch_udp: Signal<In, Bits<16>>,
    /// The selected port's child: its index.
    pub ch_child: Signal<In, Bits<8>>,
    /// The item's header fields and (not a multicast) destination.
    pub item: Signal<In, OutFields>,
    /// The item's header carries its copy's overflow bit.
    pub eovf: Signal<In, bool>,
    /// The copy's overflow bit as of this cycle.
    pub ov: Signal<In, bool>,
    /// The item's slot copy.
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// The item pushes its original header (a routed frame).
    pub orig: Signal<In, bool>,
    /// The item's original header region.
    pub orig_hdr: Signal<In, Bits<512>>,
    /// The item's original frame length.
    pub orig_len: Signal<In, Bits<16>>,
    /// An RMW row's tag at the Acc's stage 3, and its copy.
    pub t3_v: Signal<In, bool>,
    /// (The copy of the stage-3 tag.)
    pub t3_a: Signal<In, Bits<ADDR_W>>,
    /// An RMW row's tag at the Acc's stage 4, and its copy.
    pub t4_v: Signal<In, bool>,
    /// (The copy of the stage-4 tag.)
    pub t4_a: Signal<In, Bits<ADDR_W>>,
    /// The stage-4 copy's overflow bit with that row's saturation.
    pub ov_new: Signal<In, bool>,
    /// A destination was selected in the cycle before (stage A).
    pub v_a_q: Signal<Out, bool>,
    /// A destination's header register loads this cycle (stage C).
    pub v_c_q: Signal<Out, bool>,
    /// The ports the header register is pushed to this cycle (one-hot or 0).
    pub push: Signal<Out, Bits<8>>,
    /// This cycle's push is a multicast result (`results_sent`).
    pub push_mc: Signal<Out, bool>,
    /// The push's header takes the overflow bit of the RMW row at stage 4 now.
    pub pb_hit_q: Signal<Out, bool>,
    /// The push's header fields carry the OVERFLOW flag.
    pub pb_fov_q: Signal<Out, bool>,
    /// The header register.
    pub hdr_q: Signal<Out, Bits<512>>,
    /// The length register.
    pub len_q: Signal<Out, Bits<16>>,
    hg: HdrGen,
    v_a: DFF<bool>,
    v_b: DFF<bool>,
    v_c: DFF<bool>,
    // Select: the destination's fields, the item's.
    hlow_s: DFF<Bits<8>>,
    hs_mac: DFF<Bits<48>>,
    hs_ip: DFF<Bits<32>>,
    hs_udp: DFF<Bits<16>>,
    hs_child: DFF<Bits<8>>,
    hx_f: DFF<Fields>,
    hx_eovf: DFF<bool>,
    hx_ov: DFF<bool>,
    hx_ca: DFF<Bits<ADDR_W>>,
    hx_mc: DFF<bool>,
    hx_orig: DFF<bool>,
    // HdrGen's field registers loaded (stage A to C).
    hlow1: DFF<Bits<8>>,
    mc_c: DFF<bool>,
    c_ov: DFF<bool>,
    c_ca: DFF<Bits<ADDR_W>>,
    c_eovf: DFF<bool>,
    c_fov: DFF<bool>,
    orig_c: DFF<bool>,
    // The header register loaded (stage C to the push).
    hlow: DFF<Bits<8>>,
    mc_b: DFF<bool>,
    pb_hit: DFF<bool>,
    pb_fov: DFF<bool>,
    ov_now: Signal<Local, bool>,
    fl_overflow: Constant<Bits<8>>,
}

impl Default for DestPipe {
    fn default() -> Self {
        Self {
            clock: Default::default(),
            ld: Default::default(),
            port: Default::default(),
            mc: Default::default(),
            rly: Default::default(),
            ch_mac: Default::default(),
            ch_ip: Default::default(),
            ch_udp: Default::default(),
            ch_child: Default::default(),
            item: Default::default(),
            eovf: Default::default(),
            ov: Default::default(),
            cadr: Default::default(),
            orig: Default::default(),
            orig_hdr: Default::default(),
            orig_len: Default::default(),
            t3_v: Default::default(),
            t3_a: Default::default(),
            t4_v: Default::default(),
            t4_a: Default::default(),
            ov_new: Default::default(),
            v_a_q: Default::default(),
            v_c_q: Default::default(),
            push: Default::default(),
            push_mc: Default::default(),
            pb_hit_q: Default::default(),
            pb_fov_q: Default::default(),
            hdr_q: Default::default(),
            len_q: Default::default(),
            hg: Default::default(),
            v_a: Default::default(),
            v_b: Default::default(),
            v_c: Default::default(),
            hlow_s: Default::default(),
            hs_mac: Default::default(),
            hs_ip: Default::default(),
            hs_udp: Default::default(),
            hs_child: Default::default(),
            hx_f: Default::default(),
            hx_eovf: Default::default(),
            hx_ov: Default::default(),
            hx_ca: Default::default(),
            hx_mc: Default::default(),
            hx_orig: Default::default(),
            hlow1: Default::default(),
            mc_c: Default::default(),
            c_ov: Default::default(),
            c_ca: Default::default(),
            c_eovf: Default::default(),
            c_fov: Default::default(),
            orig_c: Default::default(),
            hlow: Default::default(),
            mc_b: Default::default(),
            pb_hit: Default::default(),
            pb_fov: Default::default(),
            ov_now: Default::default(),
            fl_overflow: flag(Flags::OVERFLOW),
        }
    }
}

impl Logic for DestPipe {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, v_a, v_b, v_c, hlow_s, hs_mac, hs_ip, hs_udp, hs_child, hx_f, hx_eovf,
            hx_ov, hx_ca, hx_mc, hx_orig, hlow1, mc_c, c_ov, c_ca, c_eovf, c_fov, orig_c, hlow,
            mc_b, pb_hit, pb_fov
        );
        // Outputs: registers, and the push mask of the push stage.
        self.v_a_q.next = self.v_a.q.val();
        self.v_c_q.next = self.v_c.q.val();
        self.pb_hit_q.next = self.pb_hit.q.val();
        self.pb_fov_q.next = self.pb_fov.q.val();
        self.hdr_q.next = self.hg.hdr_q.val();
        self.len_q.next = self.hg.len_q.val();
        self.push.next = 0.into();
        self.push_mc.next = false;
        if self.v_b.q.val() {
            self.push.next = self.hlow.q.val();
            self.push_mc.next = self.mc_b.q.val();
        }
        // Stage A's copy overflow bit, registered at the select, updated if the RMW row
        // that sets it reaches stage 4 in this cycle (a one-row item's select may come
        // before that).
        if self.t4_v.val() & (self.t4_a.val() == self.hx_ca.q.val()) {
            self.ov_now.next = self.ov_new.val();
        } else {
            self.ov_now.next = self.hx_ov.q.val();
        }
        // HdrGen: the fields registered at the select.
        self.hg.clock.next = self.clock.val();
        self.hg.dst_mac.next = self.hs_mac.q.val();
        self.hg.src_mac.next = self.hx_f.q.val().src_mac;
        self.hg.src_ip.next = self.hx_f.q.val().src_ip;
        self.hg.dst_ip.next = self.hs_ip.q.val();
        self.hg.src_port.next = self.hx_f.q.val().src_port;
        self.hg.dst_port.next = self.hs_udp.q.val();
        self.hg.ptype.next = self.hx_f.q.val().ptype;
        self.hg.flags.next = self.hx_f.q.val().flags;
        // (The copy's overflow bit joins the flags of frames built from slot rows when the
        // header register is loaded, `v_c`; and at the push, `pb_hit` below: the select in
        // the last copy cycle of a one-row item comes three cycles before its RMW row
        // reaches stage 4.)
        if self.t4_v.val() & (self.t4_a.val() == self.c_ca.q.val()) {
            self.hg.ovf.next = self.c_eovf.q.val() & self.ov_new.val();
        } else {
            self.hg.ovf.next = self.c_eovf.q.val() & self.c_ov.q.val();
        }
        self.hg.exponent.next = self.hx_f.q.val().exponent;
        self.hg.job.next = self.hx_f.q.val().job;
        self.hg.elements.next = self.hx_f.q.val().elements;
        self.hg.block.next = self.hx_f.q.val().block;
        self.hg.child.next = self.hs_child.q.val();
        self.hg.bitmap.next = self.hx_f.q.val().bitmap;
        // (its population count's first stage a cycle ahead: the item's own bitmap in the
        // select's cycle)
        self.hg.pc_bitmap.next = self.item.val().bitmap;
        self.hg.orig.next = self.orig_c.q.val();
        self.hg.orig_hdr.next = self.orig_hdr.val();
        self.hg.orig_len.next = self.orig_len.val();
        self.hg.ld.next = false;
        self.hg.ld1.next = false;
        // The stages: A (HdrGen's field registers), C (its header register), B (the push).
        self.v_a.d.next = false;
        self.v_b.d.next = self.v_c.q.val();
        self.v_c.d.next = self.v_a.q.val();
        if self.v_a.q.val() {
            self.hg.ld1.next = true;
            self.c_fov.d.next = (self.hx_f.q.val().flags & self.fl_overflow.val()) != 0;
            self.hlow1.d.next = self.hlow_s.q.val();
            self.mc_c.d.next = self.hx_mc.q.val();
            self.c_ov.d.next = self.ov_now.val();
            self.c_ca.d.next = self.hx_ca.q.val();
            self.c_eovf.d.next = self.hx_eovf.q.val();
            self.orig_c.d.next = self.hx_orig.q.val();
        }
        if self.v_c.q.val() {
            self.hg.ld.next = true;
            self.pb_fov.d.next = self.c_fov.q.val();
            self.hlow.d.next = self.hlow1.q.val();
            self.mc_b.d.next = self.mc_c.q.val();
        }
        // The header pushed: the header register, with the copy's overflow bit of the RMW
        // row that reaches stage 4 in the push cycle (`pb_hit`, registered at the load:
        // that row's tag was at stage 3 and for this header's copy) ORed with the
        // OVERFLOW flag of the header's own fields (`pb_fov`: what HdrGen's `ovf` input
        // adds to). A one-row item's first destination is selected with its copy row, in
        // the cycle after its RMW row, and its header loaded two cycles later, a cycle
        // before that row's saturation is known.
        self.pb_hit.d.next = self.v_c.q.val()
            & self.c_eovf.q.val()
            & !self.orig_c.q.val()
            & self.t3_v.val()
            & (self.t3_a.val() == self.c_ca.q.val());
        if self.ld.val() {
            // Select: the destination's fields (a multicast child's, or the item's own)
            // and the item's header fields, for HdrGen in the next cycle.
            self.v_a.d.next = true;
            self.hlow_s.d.next = self.port.val();
            if self.mc.val() {
                self.hs_mac.d.next = self.ch_mac.val();
                self.hs_ip.d.next = self.ch_ip.val();
                self.hs_udp.d.next = self.ch_udp.val();
                // (A relay keeps the packet's child field: a REFUSE's reason.)
                if self.rly.val() {
                    self.hs_child.d.next = self.item.val().child;
                } else {
                    self.hs_child.d.next = self.ch_child.val();
                }
            } else {
                self.hs_mac.d.next = self.item.val().dst_mac;
                self.hs_ip.d.next = self.item.val().dst_ip;
                self.hs_udp.d.next = self.item.val().dst_port;
                self.hs_child.d.next = self.item.val().child;
            }
            self.hx_f.d.next.src_mac = self.item.val().src_mac;
            self.hx_f.d.next.src_ip = self.item.val().src_ip;
            self.hx_f.d.next.src_port = self.item.val().src_port;
            self.hx_f.d.next.ptype = self.item.val().ptype;
            self.hx_f.d.next.flags = self.item.val().flags;
            self.hx_f.d.next.exponent = self.item.val().exponent;
            self.hx_f.d.next.job = self.item.val().job;
            self.hx_f.d.next.elements = self.item.val().elements;
            self.hx_f.d.next.block = self.item.val().block;
            self.hx_f.d.next.bitmap = self.item.val().bitmap;
            self.hx_eovf.d.next = self.eovf.val();
            self.hx_ov.d.next = self.ov.val();
            self.hx_ca.d.next = self.cadr.val();
            self.hx_mc.d.next = self.mc.val() & !self.rly.val();
            self.hx_orig.d.next = self.orig.val();
        }
    }
}
