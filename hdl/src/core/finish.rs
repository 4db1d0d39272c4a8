//! When the back end's item finishes: the terms of `b_done` that depend only on the back
//! end's registers (`done_now`), and the one that also needs the destination ports' room
//! (`done_if_room`), with the two conditions the back end's states share (`hdr_ok`,
//! `last_sel`).
//!
//! A leaf of the back end (`back.rs`) with no registers: its inputs are the back end's
//! registers, its outputs go to the engine, which forms `b_done` from them in the cycle it
//! hands the next item over. rust-hdl writes one `always` block per module, and Verilator
//! orders each as one unit: computed in the back end's own block, these outputs would sit
//! in the `always` that also reads the hand-over's inputs, a combinational loop to
//! Verilator (UNOPTFLAT) though no input reaches them.

use crate::ram::ADDR_W;
use rust_hdl::prelude::*;

use super::states::BackState;

/// The back end's end-of-item terms (see the module documentation).
#[derive(LogicBlock, Default)]
pub struct Finish {
    /// The back end's state.
    pub bstate: Signal<In, BackState>,
    /// The item's last RMW cycle (`rl`).
    pub rl: Signal<In, bool>,
    /// The item sends a frame after its RMW (`b_emit`).
    pub emit: Signal<In, bool>,
    /// A row was copied already (`ri != 0`).
    pub ri_nz: Signal<In, bool>,
    /// Rows left to copy (`e_more`).
    pub e_more: Signal<In, bool>,
    /// The row copied next is the last (`e_last`).
    pub e_last: Signal<In, bool>,
    /// The destination ports left (`pmask`).
    pub pmask: Signal<In, Bits<8>>,
    /// Two ports were left in the cycle before (`pm_two`).
    pub pm_two: Signal<In, bool>,
    /// A later multicast round follows (`more`).
    pub more: Signal<In, bool>,
    /// The item pushes its original header (`e_orig`).
    pub orig: Signal<In, bool>,
    /// The item is a multicast (`e_mc`).
    pub mc: Signal<In, bool>,
    /// The item's header carries its copy's overflow bit (`b_eovf`).
    pub eovf: Signal<In, bool>,
    /// The item's slot copy (`b_cadr`).
    pub cadr: Signal<In, Bits<ADDR_W>>,
    /// The copy whose overflow bit was read last (`ovb.or_a_q`).
    pub or_a: Signal<In, Bits<ADDR_W>>,
    /// The destination pipeline's select stage holds a port (`dest.v_a_q`).
    pub v_a: Signal<In, bool>,
    /// Its header stage holds one (`dest.v_c_q`).
    pub v_c: Signal<In, bool>,
    /// The header may be built: the copy's overflow bit is readable.
    pub hdr_ok: Signal<Out, bool>,
    /// The destination selected this cycle is the item's last.
    pub last_sel: Signal<Out, bool>,
    /// The item finishes this cycle.
    pub done_now: Signal<Out, bool>,
    /// The item finishes this cycle if its destination ports have room.
    pub done_if_room: Signal<Out, bool>,
    /// The copy's end condition but for the ports' room.
    cp_end: Signal<Local, bool>,
}

impl Logic for Finish {
    #[hdl_gen]
    fn update(&mut self) {
        // A header that carries the copy's overflow bit waits until that bit was read
        // for its own copy (the read port may have served an RMW tag the cycle before).
        self.hdr_ok.next = !self.eovf.val() | (self.or_a.val() == self.cadr.val());
        // The last destination is selected in this cycle: the rest of the pipeline runs by
        // itself with the fields registered at the select (`hs_*`, `hx_*`), and the next
        // item may start (a routed frame's original header is not carried: its item waits
        // for the push; so does a multicast round with more to come). Shallow on purpose
        // (it reaches the hand-over and, through it, the decision stages): the first
        // select is the last for an item that is not a multicast (one destination port);
        // a later select (`BackState::Select`, always the cycle after a select) is the last
        // when the mask had two ports in the cycle before (`pm_two`, registered).
        if self.bstate.val() == BackState::Select {
            self.last_sel.next = self.pm_two.val() & !self.more.val() & !self.orig.val();
        } else {
            self.last_sel.next =
                (self.pmask.val() != 0) & !self.mc.val() & !self.more.val() & !self.orig.val();
        }
        // The states' ends (`back.rs`): the RMW's last row without a frame to send; the
        // copy's last row (or its start without rows) with the last select, once a row was
        // copied (else when the ports have room and no select is under way); the first
        // header with the last select; a select with the last one, or the round's end
        // without another; a release.
        self.cp_end.next =
            self.hdr_ok.val() & self.last_sel.val() & (!self.e_more.val() | self.e_last.val());
        self.done_now.next = false;
        match self.bstate.val() {
            BackState::Rmw => {
                self.done_now.next = self.rl.val() & !self.emit.val();
            }
            BackState::CopyRows => {
                self.done_now.next = self.ri_nz.val() & self.cp_end.val();
            }
            BackState::FirstHeader => {
                self.done_now.next = self.hdr_ok.val() & self.last_sel.val();
            }
            BackState::Select => {
                self.done_now.next = ((self.pmask.val() != 0) & self.last_sel.val())
                    | ((self.pmask.val() == 0)
                        & !self.v_a.val()
                        & !self.v_c.val()
                        & !self.more.val());
            }
            BackState::Release => {
                self.done_now.next = true;
            }
            _ => {}
        }
        self.done_if_room.next =
            (self.bstate.val() == BackState::CopyRows) & !self.v_a.val() & self.cp_end.val();
    }
}
