//! The ingress port's descriptor pieces: room in the descriptor FIFO, the descriptor
//! register, the byte count of a beat's `tkeep` and the parser capture.

use super::{cap_beats, DESC_W};
use crate::layout::{desc, small};
use crate::parse::PARSE_W;
use rust_hdl::prelude::*;

/// Room in the descriptor FIFO for one more frame: `occ + pend_a + pend < 7`
/// (descriptors buffered plus those in the commit pipeline), a 6-input function written
/// as a constant table so that synthesis maps it as one LUT, not as adders and a compare.
#[derive(LogicBlock, Default)]
pub struct DescRoom {
    /// Descriptors buffered (`dw - dr`).
    pub occ: Signal<In, Bits<4>>,
    /// A descriptor is one cycle from its write.
    pub pend_a: Signal<In, bool>,
    /// A descriptor is being written.
    pub pend: Signal<In, bool>,
    /// Room.
    pub ok: Signal<Out, bool>,
}

impl DescRoom {
    fn f(i: usize) -> bool {
        (i >> 2) + (i >> 1 & 1) + (i & 1) < 7
    }
}

impl Logic for DescRoom {
    fn update(&mut self) {
        let i = self.occ.val().index() << 2
            | (self.pend_a.val() as usize) << 1
            | self.pend.val() as usize;
        self.ok.next = Self::f(i);
    }
    fn connect(&mut self) {
        self.ok.connect();
    }
    fn hdl(&self) -> Verilog {
        let t: u64 = (0..64).fold(0, |a, i| a | (Self::f(i) as u64) << i);
        Verilog::Custom(format!(
            "wire [63:0] tbl = 64'h{t:016x};\nassign ok = tbl[{{occ, pend_a, pend}}];\n"
        ))
    }
}

/// A field's bit range as a Verilog part select (`msb:lsb`).
fn range(f: fanin_regs::layout::Field) -> String {
    format!("{}:{}", f.msb(), f.offset)
}

// The Verilog's `{row, len, hdr}` is the layout's field order (`layout::RxDesc`).
const _: () = assert!(
    desc::RX_HDR.offset == 0
        && desc::RX_LEN.offset == desc::RX_HDR.width
        && desc::RX_ROW.offset == desc::RX_LEN.offset + desc::RX_LEN.width
);

/// The descriptor register: the capture, the frame length and the first row, loaded on
/// `en`: the descriptor RAM's write word (see [`DESC_W`]). Written as a concatenation (a
/// simulator copies words instead of shifting 672-bit values).
#[derive(LogicBlock, Default)]
pub struct DescReg {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Load the fields.
    pub en: Signal<In, bool>,
    /// The capture.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// The frame length.
    pub len: Signal<In, Bits<16>>,
    /// The first row.
    pub row: Signal<In, Bits<16>>,
    /// The registered capture's UDP checksum field (`layout::small::UDP_CSUM`).
    pub uck: Signal<Out, Bits<16>>,
    /// The descriptor: the register and the verdicts.
    pub wdata: Signal<Out, Bits<DESC_W>>,
    /// The register (native model).
    q: Signal<Local, Bits<DESC_W>>,
}

impl Logic for DescReg {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.en.val() {
            self.q.next = bit_cast::<DESC_W, PARSE_W>(self.hdr.val())
                | (bit_cast::<DESC_W, 16>(self.len.val()) << desc::RX_LEN.offset as u64)
                | (bit_cast::<DESC_W, 16>(self.row.val()) << desc::RX_ROW.offset as u64);
        }
        self.uck.next = self.q.val().get_bits::<16>(small::UDP_CSUM.offset);
        self.wdata.next = self.q.val();
    }
    fn connect(&mut self) {
        self.uck.connect();
        self.wdata.connect();
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        // `q` is declared by rust-hdl as a local of DESC_W bits.
        Verilog::Custom(format!(
            "initial begin\n    q = {DESC_W}'h0;\nend\n\n\
             always @(posedge clock) begin\n    if (en) q <= {{row, len, hdr}};\nend\n\n\
             assign uck = q[{ck}];\n\
             assign wdata = q;\n",
            ck = range(small::UDP_CSUM),
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "desc".into(),
            clock: "clock".into(),
            inputs: vec!["en".into(), "hdr".into(), "len".into(), "row".into()],
            outputs: vec!["uck".into()],
        }]
    }
}

/// The byte count of a beat from its `tkeep` (contiguous from byte 0, a thermometer code:
/// bit `j` of the count is the OR of the `1 -> 0` steps at positions `≡ 2^j - 1` mod
/// `2^(j+1)`, a balanced OR instead of a priority chain), and `tkeep` at the bit index
/// `rem mod KW` (the byte budget's position in the beat: the beat ends the frame past
/// `max_frame` exactly when that bit is set while `0 <= rem < KW`).
#[derive(LogicBlock, Default)]
pub struct KeepCount<const KW: usize> {
    /// Byte enables.
    pub tkeep: Signal<In, Bits<KW>>,
    /// The byte budget (only its low log2(KW) bits are used).
    pub rem: Signal<In, Bits<17>>,
    /// Bytes in the beat (0..=KW).
    pub nb: Signal<Out, Bits<8>>,
    /// `tkeep[rem mod KW]`.
    pub tsel: Signal<Out, bool>,
}

impl<const KW: usize> Logic for KeepCount<KW> {
    fn update(&mut self) {
        let k = KW.trailing_zeros() as usize;
        let t = |i: usize| self.tkeep.val().get_bit(i);
        let mut nb = 0u64;
        for j in 0..k {
            let s = 1 << (j + 1);
            if (0..KW / s).any(|m| t(m * s + s / 2 - 1) && !t(m * s + s - 1)) {
                nb |= 1 << j;
            }
        }
        if t(KW - 1) {
            nb |= 1 << k;
        }
        self.nb.next = nb.into();
        self.tsel.next = t(self.rem.val().index() & (KW - 1));
    }
    fn connect(&mut self) {
        self.nb.connect();
        self.tsel.connect();
    }
    fn hdl(&self) -> Verilog {
        let k = KW.trailing_zeros() as usize;
        let mut v = String::new();
        for j in 0..k {
            let s = 1 << (j + 1);
            let terms: Vec<String> = (0..KW / s)
                .map(|m| format!("(tkeep[{}] & ~tkeep[{}])", m * s + s / 2 - 1, m * s + s - 1))
                .collect();
            v.push_str(&format!("assign nb[{j}] = {};\n", terms.join(" | ")));
        }
        v.push_str(&format!("assign nb[{k}] = tkeep[{}];\n", KW - 1));
        if k < 7 {
            v.push_str(&format!("assign nb[7:{}] = {}'d0;\n", k + 1, 7 - k));
        }
        v.push_str(&format!("assign tsel = tkeep[rem[{}:0]];\n", k - 1));
        Verilog::Custom(v)
    }
}

/// The capture register (`hdr`): on an accepted (`en`) first beat the beat itself
/// (zero-extended); on a later beat the capture so far with the beat ORed into the slot of
/// its one-hot beat index (nothing past the capture). One LUT per bit instead of a
/// shifter. The register lives in this leaf, its next value written inside the clocked
/// block, so that a simulator computes it once per clock edge instead of again whenever
/// an input or a register changes (same logic, same flip-flops).
#[derive(LogicBlock, Default)]
pub struct HdrCap<const DW: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// The beat is accepted (the capture takes it).
    pub en: Signal<In, bool>,
    /// The beat.
    pub tdata: Signal<In, Bits<DW>>,
    /// One-hot beat index.
    pub bo: Signal<In, Bits<16>>,
    /// The beat is not the frame's first.
    pub in_frame: Signal<In, bool>,
    /// The capture of the accepted beats (registered).
    pub hdr: Signal<Out, Bits<PARSE_W>>,
}

impl<const DW: usize> Logic for HdrCap<DW> {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.en.val() {
            let td = bit_cast::<PARSE_W, DW>(self.tdata.val());
            if !self.in_frame.val() {
                self.hdr.next = td;
            } else {
                let bo = self.bo.val().index();
                let mut h = self.hdr.val();
                for b in 0..cap_beats(DW) {
                    if bo >> b & 1 == 1 {
                        h = h | (td << bits::<16>((b * DW) as u64));
                    }
                }
                self.hdr.next = h;
            }
        }
    }
    fn connect(&mut self) {
        self.hdr.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = format!(
            "initial begin\n    hdr = {PARSE_W}'h0;\nend\n\nalways @(posedge clock) begin\n    if (en) begin\n"
        );
        for b in 0..cap_beats(DW) {
            let lo = b * DW;
            let w = DW.min(PARSE_W - lo);
            let first = if b == 0 {
                format!("tdata[{}:0]", w - 1)
            } else {
                format!("{w}'d0")
            };
            v.push_str(&format!(
                "        hdr[{h}:{lo}] <= in_frame ? (hdr[{h}:{lo}] | ({{{w}{{bo[{b}]}}}} & tdata[{m}:0])) : {first};\n",
                h = lo + w - 1,
                m = w - 1
            ));
        }
        v.push_str("    end\nend\n");
        Verilog::Custom(v)
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "hdr".into(),
            clock: "clock".into(),
            inputs: vec!["en".into(), "tdata".into(), "bo".into(), "in_frame".into()],
            outputs: vec!["hdr".into()],
        }]
    }
}
