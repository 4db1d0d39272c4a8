//! The aggregation data path: slot memory with a one-row-per-cycle read-modify-write
//! pipeline, int32 saturating lane adders and hazard forwarding at distances 1, 2 and 3.
//!
//! Pipeline (one row per cycle, never stalls):
//!
//! * stage 0 (cycle t): `op`, `addr`, `lim` are presented; the RAM read of `addr` starts.
//! * stage 1 (cycle t+1): the RAM's read latch holds the slot row; `b` (the ingress row
//!   read in cycle t) arrives and is registered.
//! * stage 2 (cycle t+2): the row is in the RAM's output register (block RAM `DO_REG`,
//!   UltraRAM `OREG`); the rows the two ops before wrote are merged into one forwarding
//!   register.
//! * stage 3 (cycle t+3): the row is in a pipeline register after the output register (a
//!   deep UltraRAM cascade, `alveo`'s 8 blocks, uses it between its blocks), so the adders
//!   start from a flip-flop, not from a RAM; `y = b` (start), `y = sat(row + b)` (merge) or
//!   `y = row` (read); starts and merges write `y` back to `addr` at the end of the cycle;
//!   `rd` is the row as read, `bd` the `b` of this op.
//! * stage 4 (cycle t+4): `ovf` reports whether the merge saturated a valid lane.
//!
//! An op reads the RAM three cycles before its stage 3, so the rows written by the three
//! ops right before it (a packet to the same slot right behind the previous one) are not
//! in what it read: the first was written two cycles after its read, the second one cycle
//! after, the third in the cycle of its read (old data on block RAM, undefined on
//! UltraRAM). Those are the only hazards (distances 1, 2 and 3); ops four or more cycles
//! later see the RAM. The row written by the op right before (distance 1) is taken at
//! stage 3 from the forwarding register `f1`; the rows of distances 2 and 3 are known a
//! cycle earlier, so stage 2 picks the newer matching one of them (`f1`, `f2`) into one
//! register (`fx`): the mux in front of the adders stays three-way (`f1`, `fx`, the RAM's
//! row), as it was with distances 1 and 2 only.

use crate::ram::{FaninRam, RamStyle, ADDR_W};
use rust_hdl::prelude::*;

/// No operation.
pub const OP_NONE: u64 = 0;
/// Write `b` (the first contribution of a block).
pub const OP_START: u64 = 1;
/// Write `sat(row + b)`.
pub const OP_MERGE: u64 = 2;
/// Read the row (emission).
pub const OP_READ: u64 = 3;
/// Cycles from a slot row's address to its data at the adders: the RAM's read latch, its
/// output register and a pipeline register (see the module docs).
pub const READ_LATENCY: usize = 3;

/// Stage 3 of the pipeline as one leaf: the forwarding mux, the per-lane int32 saturating
/// adders over rows of big-endian (wire order) lanes, and the op mux. `ovl` reports
/// saturation of a merge in the lanes set in `lm` only (lanes past the block's elements hold
/// don't-care bytes). One leaf, so that Verilator sees no false combinational loop
/// through rust-hdl's single `always` block per module.
#[derive(LogicBlock, Default)]
pub struct SatAdd<const W: usize> {
    /// The RAM's row (read-old data, from its last pipeline register).
    pub rdata: Signal<In, Bits<W>>,
    /// Use `fwd_data` instead of `rdata` (the row written by the op right before).
    pub fwd: Signal<In, bool>,
    /// The row written by the op right before (distance 1).
    pub fwd_data: Signal<In, Bits<W>>,
    /// Use `fwd2_data` (unless `fwd`): a row written by an older op (distance 2 or 3).
    pub fwd2: Signal<In, bool>,
    /// The row written by an older op (the newer of distances 2 and 3 that matches).
    pub fwd2_data: Signal<In, Bits<W>>,
    /// Ingress row (wire byte order: lane `l` is bytes `4l..4l+4`, big-endian).
    pub b: Signal<In, Bits<W>>,
    /// Stage-3 op (`OP_*`).
    pub op: Signal<In, Bits<2>>,
    /// Valid lanes of this row: bit `l` for lane `l` (see [`LaneMask`]).
    pub lm: Signal<In, Bits<64>>,
    /// The slot row before the op (after forwarding).
    pub cur: Signal<Out, Bits<W>>,
    /// `b` (start), lane-wise saturating `cur + b` (merge) or `cur`.
    pub y: Signal<Out, Bits<W>>,
    /// Bit `l`: a merge saturated lane `l`, a valid lane.
    pub ovl: Signal<Out, Bits<64>>,
}

fn lane_get<const W: usize>(v: Bits<W>, l: usize) -> i32 {
    let mut x: u32 = 0;
    for k in 0..4 {
        let byte = v.get_bits::<8>(32 * l + 8 * k).index() as u32;
        x = (x << 8) | byte;
    }
    x as i32
}

fn lane_set<const W: usize>(v: Bits<W>, l: usize, x: i32) -> Bits<W> {
    let x = x as u32;
    let mut v = v;
    for k in 0..4 {
        let byte = (x >> (8 * (3 - k))) & 0xff;
        for i in 0..8 {
            v = v.replace_bit(32 * l + 8 * k + i, (byte >> i) & 1 == 1);
        }
    }
    v
}

impl<const W: usize> Logic for SatAdd<W> {
    fn update(&mut self) {
        let cur = if self.fwd.val() {
            self.fwd_data.val()
        } else if self.fwd2.val() {
            self.fwd2_data.val()
        } else {
            self.rdata.val()
        };
        let mut sum = Bits::<W>::default();
        let mut ovl = 0u64;
        let lm = self.lm.val();
        for l in 0..W / 32 {
            let (s, o) =
                fanin_proto::model::saturating_add(lane_get(cur, l), lane_get(self.b.val(), l));
            sum = lane_set(sum, l, s);
            if o && lm.get_bit(l) {
                ovl |= 1 << l;
            }
        }
        let op = self.op.val().index() as u64;
        self.cur.next = cur;
        self.y.next = match op {
            OP_START => self.b.val(),
            OP_MERGE => sum,
            _ => cur,
        };
        self.ovl.next = if op == OP_MERGE { ovl.into() } else { 0.into() };
    }
    fn connect(&mut self) {
        self.cur.connect();
        self.y.connect();
        self.ovl.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut s = String::from(
            "wire [W1:0] a = fwd ? fwd_data : fwd2 ? fwd2_data : rdata;\nassign cur = a;\nwire [W1:0] sum;\n",
        )
        .replace("W1", &(W - 1).to_string());
        let mut ovf = Vec::new();
        for l in 0..W / 32 {
            let sw = |v: &str| {
                format!(
                    "{{{v}[{}:{}], {v}[{}:{}], {v}[{}:{}], {v}[{}:{}]}}",
                    32 * l + 7,
                    32 * l,
                    32 * l + 15,
                    32 * l + 8,
                    32 * l + 23,
                    32 * l + 16,
                    32 * l + 31,
                    32 * l + 24
                )
            };
            s.push_str(&format!(
                "wire [31:0] a{l} = {};\nwire [31:0] b{l} = {};\n\
                 wire [32:0] s{l} = {{a{l}[31], a{l}}} + {{b{l}[31], b{l}}};\n\
                 wire o{l} = s{l}[32] ^ s{l}[31];\n\
                 wire [31:0] r{l} = o{l} ? (s{l}[32] ? 32'h80000000 : 32'h7fffffff) : s{l}[31:0];\n\
                 assign sum[{}:{}] = {{r{l}[7:0], r{l}[15:8], r{l}[23:16], r{l}[31:24]}};\n",
                sw("a"),
                sw("b"),
                32 * l + 31,
                32 * l
            ));
            ovf.push(format!("(o{l} & lm[{l}])"));
        }
        s.push_str(&format!(
            "assign ovl = {{{}}} & {{64{{op == 2'd2}}}};\nassign y = (op == 2'd1) ? b : (op == 2'd2) ? sum : a;\n",
            ovf.iter().rev().cloned().collect::<Vec<_>>().join(", ")
        ));
        Verilog::Custom(s)
    }
}

/// The valid-lane mask of a row: bit `l` set for every lane `l < lim` (of 64), one
/// comparison with a constant per bit, so the saturation check after the adders is a
/// plain AND-OR.
#[derive(LogicBlock, Default)]
pub struct LaneMask {
    /// Number of valid lanes.
    pub lim: Signal<In, Bits<16>>,
    /// Bit `l`: `l < lim`.
    pub mask: Signal<Out, Bits<64>>,
}

impl Logic for LaneMask {
    fn update(&mut self) {
        let lim = self.lim.val().index();
        let mut m = 0u64;
        for l in 0..64 {
            if l < lim {
                m |= 1 << l;
            }
        }
        self.mask.next = m.into();
    }
    fn connect(&mut self) {
        self.mask.connect();
    }
    fn hdl(&self) -> Verilog {
        let bits: Vec<String> = (0..64).rev().map(|l| format!("(lim > 16'd{l})")).collect();
        Verilog::Custom(format!("assign mask = {{{}}};\n", bits.join(", ")))
    }
}

/// Slot memory plus the read-modify-write pipeline (see the module docs).
#[derive(LogicBlock)]
pub struct Acc<const W: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Stage 0: one of `OP_*`.
    pub op: Signal<In, Bits<2>>,
    /// Stage 0: slot row address.
    pub addr: Signal<In, Bits<ADDR_W>>,
    /// Stage 0: valid lanes in the row (for the overflow flag).
    pub lim: Signal<In, Bits<16>>,
    /// Stage 1: the ingress row of the op issued one cycle earlier.
    pub b: Signal<In, Bits<W>>,
    /// Stage 3: the row as read (after forwarding), before the op: emission data.
    pub rd: Signal<Out, Bits<W>>,
    /// Stage 3: `b` as presented two cycles before (the ingress row of the stage-3 op).
    pub bd: Signal<Out, Bits<W>>,
    /// Stage 4: the merge of the previous cycle saturated a valid lane (registered, so
    /// that no combinational path runs from `b` back to the engine).
    pub ovf: Signal<Out, bool>,
    ram: FaninRam<W>,
    add: SatAdd<W>,
    op1: DFF<Bits<2>>,
    addr1: DFF<Bits<ADDR_W>>,
    op2: DFF<Bits<2>>,
    addr2: DFF<Bits<ADDR_W>>,
    op3: DFF<Bits<2>>,
    addr3: DFF<Bits<ADDR_W>>,
    we4: DFF<bool>,
    addr4: DFF<Bits<ADDR_W>>,
    lmask: LaneMask,
    lm1: DFF<Bits<64>>,
    lm2: DFF<Bits<64>>,
    lm3: DFF<Bits<64>>,
    b1: DFF<Bits<W>>,
    b2: DFF<Bits<W>>,
    g2: DFF<bool>,
    g3: DFF<bool>,
    h1: DFF<bool>,
    hx: DFF<bool>,
    f1: DFF<Bits<W>>,
    f2: DFF<Bits<W>>,
    fx: DFF<Bits<W>>,
    ovf3: DFF<Bits<64>>,
    we: Signal<Local, bool>,
}

impl<const W: usize> Acc<W> {
    /// A slot memory of `rows` rows in block RAM.
    pub fn new(rows: usize) -> Self {
        Self::with_style(rows, RamStyle::Block)
    }

    /// A slot memory of `rows` rows in the memory `style` asks for (the configuration's
    /// `slot_ram`), read with latency 3 (read latch, output register, pipeline register).
    /// UltraRAM is safe here: the only same-row read-during-write (distance 3) is served by
    /// a forwarding register, never by the RAM.
    pub fn with_style(rows: usize, style: RamStyle) -> Self {
        Self {
            clock: Default::default(),
            op: Default::default(),
            addr: Default::default(),
            lim: Default::default(),
            b: Default::default(),
            rd: Default::default(),
            bd: Default::default(),
            ovf: Default::default(),
            ram: FaninRam::with_latency(rows, 1, style, READ_LATENCY),
            add: Default::default(),
            op1: Default::default(),
            addr1: Default::default(),
            op2: Default::default(),
            addr2: Default::default(),
            op3: Default::default(),
            addr3: Default::default(),
            we4: Default::default(),
            addr4: Default::default(),
            lmask: Default::default(),
            lm1: Default::default(),
            lm2: Default::default(),
            lm3: Default::default(),
            b1: Default::default(),
            b2: Default::default(),
            g2: Default::default(),
            g3: Default::default(),
            h1: Default::default(),
            hx: Default::default(),
            f1: Default::default(),
            f2: Default::default(),
            fx: Default::default(),
            ovf3: Default::default(),
            we: Default::default(),
        }
    }
}

impl<const W: usize> Logic for Acc<W> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, op1, addr1, op2, addr2, op3, addr3, we4, addr4, lm1, lm2, lm3, b1, b2, g2,
            g3, h1, hx, f1, f2, fx, ovf3
        );
        self.ram.clock.next = self.clock.val();
        self.ram.raddr.next = self.addr.val();
        // Stage 0 -> 1.
        self.op1.d.next = self.op.val();
        self.addr1.d.next = self.addr.val();
        self.lmask.lim.next = self.lim.val();
        self.lm1.d.next = self.lmask.mask.val();
        // Stage 1 -> 2: `b`, and which of the rows written by the ops two and three before
        // (now in stage 3, and the one that left it a cycle ago) this op's read misses.
        self.op2.d.next = self.op1.q.val();
        self.addr2.d.next = self.addr1.q.val();
        self.lm2.d.next = self.lm1.q.val();
        self.b1.d.next = self.b.val();
        self.we.next = (self.op3.q.val() == 1) | (self.op3.q.val() == 2);
        self.g2.d.next = self.we.val() & (self.addr1.q.val() == self.addr3.q.val());
        self.g3.d.next = self.we4.q.val() & (self.addr1.q.val() == self.addr4.q.val());
        // Stage 2 -> 3: the newer of those rows (now in `f1` and `f2`), and whether the op
        // right before (now in stage 3) writes this op's row.
        self.op3.d.next = self.op2.q.val();
        self.addr3.d.next = self.addr2.q.val();
        self.lm3.d.next = self.lm2.q.val();
        self.b2.d.next = self.b1.q.val();
        self.h1.d.next = self.we.val() & (self.addr2.q.val() == self.addr3.q.val());
        self.hx.d.next = self.g2.q.val() | self.g3.q.val();
        if self.g2.q.val() {
            self.fx.d.next = self.f1.q.val();
        } else {
            self.fx.d.next = self.f2.q.val();
        }
        // Stage 3: the op, the write-back, the forwarding registers.
        self.add.rdata.next = self.ram.rdata.val();
        self.add.fwd.next = self.h1.q.val();
        self.add.fwd_data.next = self.f1.q.val();
        self.add.fwd2.next = self.hx.q.val();
        self.add.fwd2_data.next = self.fx.q.val();
        self.add.b.next = self.b2.q.val();
        self.add.op.next = self.op3.q.val();
        self.add.lm.next = self.lm3.q.val();
        self.rd.next = self.add.cur.val();
        self.bd.next = self.b2.q.val();
        self.ram.waddr.next = self.addr3.q.val();
        self.ram.wdata.next = self.add.y.val();
        self.ram.we.next = bit_cast::<32, 1>(self.we.val().into());
        self.we4.d.next = self.we.val();
        self.addr4.d.next = self.addr3.q.val();
        self.f1.d.next = self.add.y.val();
        self.f2.d.next = self.f1.q.val();
        // Per-lane saturation registered, ORed at stage 4 (off the adders' path).
        self.ovf3.d.next = self.add.ovl.val();
        self.ovf.next = self.ovf3.q.val() != 0;
    }
}
