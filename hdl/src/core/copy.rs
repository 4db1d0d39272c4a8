//! The back end's copied rows on their way from the read to the egress ports: a row read
//! in one cycle (`rd`) reaches the Acc's stage 3 three cycles later and is written there to
//! the destination ports of its read's cycle (`wm`), from the source its item had then: a
//! slot row (`slot_q`), an ACCEPT's nonce (`accept_q`, `nonce_q`) or the ingress row the
//! Acc carries alongside. The back end may have taken its next item meanwhile, so each of
//! these travels with the row. Also the ingress port of the row read in the cycle before
//! (`sel_q`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered). The engine selects the row itself
//! (the Acc's and the ports' read data, the nonce as an element).

use rust_hdl::prelude::*;

/// The copied rows' write ports and sources (see the module documentation).
#[derive(LogicBlock, Default)]
pub struct CopyPipe {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// A payload row is read this cycle (for the destination ports `mask`).
    pub rd: Signal<In, bool>,
    /// The destination ports of the row read (the back end's `pmask`).
    pub mask: Signal<In, Bits<8>>,
    /// The back end's item copies slot rows (`e_slot`).
    pub slot: Signal<In, bool>,
    /// The back end's item is an ACCEPT: its one row is `nonce_in` (`b_reg`).
    pub accept: Signal<In, bool>,
    /// The ACCEPT's nonce.
    pub nonce_in: Signal<In, Bits<32>>,
    /// The back end's ingress port (`b_sel`).
    pub sel: Signal<In, Bits<4>>,
    /// The egress ports that write the row at the Acc's stage 3 this cycle.
    pub wm_q: Signal<Out, Bits<8>>,
    /// That row is a slot row (the Acc's read data).
    pub slot_q: Signal<Out, bool>,
    /// That row is an ACCEPT's nonce (`nonce_q`).
    pub accept_q: Signal<Out, bool>,
    /// The nonce of that row's item.
    pub nonce_q: Signal<Out, Bits<32>>,
    /// The ingress port of the row read in the cycle before.
    pub sel_q: Signal<Out, Bits<4>>,
    // The read one and two cycles before, the ports of the read (`cp_mask`) carried
    // (`cm2`) to stage 3 (`wm`), since a select in the read's cycle takes one off `pmask`.
    v1: DFF<bool>,
    v2: DFF<bool>,
    cp_mask: DFF<Bits<8>>,
    cm2: DFF<Bits<8>>,
    wm: DFF<Bits<8>>,
    // The item's source of the row, one to three cycles after the read.
    cp_slot1: DFF<bool>,
    cp_slot2: DFF<bool>,
    cp_slot3: DFF<bool>,
    cp_reg1: DFF<bool>,
    cp_reg2: DFF<bool>,
    cp_reg3: DFF<bool>,
    cp_n1: DFF<Bits<32>>,
    cp_n2: DFF<Bits<32>>,
    cp_n3: DFF<Bits<32>>,
    s1_sel: DFF<Bits<4>>,
}

impl Logic for CopyPipe {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, v1, v2, cp_mask, cm2, wm, cp_slot1, cp_slot2, cp_slot3, cp_reg1, cp_reg2,
            cp_reg3, cp_n1, cp_n2, cp_n3, s1_sel
        );
        // Outputs: registers.
        self.wm_q.next = self.wm.q.val();
        self.slot_q.next = self.cp_slot3.q.val();
        self.accept_q.next = self.cp_reg3.q.val();
        self.nonce_q.next = self.cp_n3.q.val();
        self.sel_q.next = self.s1_sel.q.val();
        self.s1_sel.d.next = self.sel.val();
        self.cp_slot1.d.next = self.slot.val();
        self.cp_slot2.d.next = self.cp_slot1.q.val();
        self.cp_slot3.d.next = self.cp_slot2.q.val();
        self.cp_reg1.d.next = self.accept.val();
        self.cp_reg2.d.next = self.cp_reg1.q.val();
        self.cp_reg3.d.next = self.cp_reg2.q.val();
        self.cp_n1.d.next = self.nonce_in.val();
        self.cp_n2.d.next = self.cp_n1.q.val();
        self.cp_n3.d.next = self.cp_n2.q.val();
        self.v1.d.next = self.rd.val();
        if self.rd.val() {
            self.cp_mask.d.next = self.mask.val();
        }
        self.v2.d.next = self.v1.q.val();
        self.cm2.d.next = self.cp_mask.q.val();
        if self.v2.q.val() {
            self.wm.d.next = self.cm2.q.val();
        } else {
            self.wm.d.next = 0.into();
        }
    }
}
