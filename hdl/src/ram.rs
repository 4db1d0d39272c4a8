//! Custom-Verilog leaves: the inferable RAM and a byte-order swap (pure wiring).

use rust_hdl::prelude::*;

/// Core-wide RAM address width; each RAM uses only the low `ceil(log2(depth))` bits.
pub const ADDR_W: usize = 24;

/// Simple dual-port RAM with synchronous read-old-data, written in a style yosys and
/// Vivado infer as block RAM (no `initial` block). Writes are split into `chunks`
/// equal chunks, each with its own enable bit (`we[k]`), for the ingress gearbox.
#[derive(LogicBlock)]
pub struct FaninRam<const W: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Write address.
    pub waddr: Signal<In, Bits<ADDR_W>>,
    /// Write data.
    pub wdata: Signal<In, Bits<W>>,
    /// Per-chunk write enables (only the low `chunks` bits are used).
    pub we: Signal<In, Bits<32>>,
    /// Read address.
    pub raddr: Signal<In, Bits<ADDR_W>>,
    /// Read data, one cycle after `raddr` (old data on a same-cycle write).
    pub rdata: Signal<Out, Bits<W>>,
    _depth: usize,
    _chunks: usize,
    _mem: Vec<Bits<W>>,
}

impl<const W: usize> FaninRam<W> {
    /// A RAM of `depth` words written in `chunks` chunks.
    pub fn new(depth: usize, chunks: usize) -> Self {
        assert!(depth >= 2 && (1..=32).contains(&chunks) && W % chunks == 0);
        Self {
            clock: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            we: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            _depth: depth,
            _chunks: chunks,
            // The native simulator only needs the memory in small test configurations.
            _mem: if depth * W <= (1 << 22) {
                vec![Bits::default(); depth]
            } else {
                vec![]
            },
        }
    }

    fn aw(&self) -> usize {
        (usize::BITS - (self._depth - 1).leading_zeros()) as usize
    }
}

impl<const W: usize> Logic for FaninRam<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let mask = (1usize << self.aw()) - 1;
            let ra = (self.raddr.val().index() & mask) % self._depth.max(1);
            let wa = (self.waddr.val().index() & mask) % self._depth.max(1);
            self.rdata.next = self._mem.get(ra).copied().unwrap_or_default();
            let cw = W / self._chunks;
            for k in 0..self._chunks {
                if self.we.val().get_bit(k) {
                    if let Some(m) = self._mem.get_mut(wa) {
                        let mut v = *m;
                        for b in 0..cw {
                            v = v.replace_bit(k * cw + b, self.wdata.val().get_bit(k * cw + b));
                        }
                        *m = v;
                    }
                }
            }
        }
    }
    fn connect(&mut self) {
        self.rdata.connect();
    }
    fn hdl(&self) -> Verilog {
        let aw = self.aw();
        let cw = W / self._chunks;
        let mut writes = String::new();
        for k in 0..self._chunks {
            writes.push_str(&format!(
                "    if (we[{k}]) mem[waddr[{a}:0]][{lo} +: {cw}] <= wdata[{lo} +: {cw}];\n",
                a = aw - 1,
                lo = k * cw
            ));
        }
        Verilog::Custom(format!(
            "// {depth} x {W} simple dual-port RAM, read-old-data, {chunks} write chunk(s).
// Only the low {aw} address bits and {chunks} enable bits are used by this instance.
(* ram_style = \"block\" *) reg [{wm}:0] mem [0:{dm}];
reg [{wm}:0] rdata_r;
assign rdata = rdata_r;
always @(posedge clock) begin
    rdata_r <= mem[raddr[{am}:0]];
{writes}end
",
            depth = self._depth,
            chunks = self._chunks,
            wm = W - 1,
            dm = self._depth - 1,
            am = aw - 1,
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "ram".into(),
            clock: "clock".into(),
            inputs: vec!["raddr".into(), "waddr".into(), "wdata".into(), "we".into()],
            outputs: vec!["rdata".into()],
        }]
    }
}

/// Reverses the byte order of an `N`-bit word: AXI-Stream byte 0 (bits 7:0) becomes the
/// most significant byte, so network-order fields are contiguous bit ranges.
#[derive(LogicBlock, Default)]
pub struct ByteSwap<const N: usize> {
    /// Input word.
    pub a: Signal<In, Bits<N>>,
    /// Byte-reversed word.
    pub y: Signal<Out, Bits<N>>,
}

impl<const N: usize> Logic for ByteSwap<N> {
    fn update(&mut self) {
        let mut v = Bits::<N>::default();
        let nb = N / 8;
        for b in 0..nb {
            for i in 0..8 {
                v = v.replace_bit((nb - 1 - b) * 8 + i, self.a.val().get_bit(b * 8 + i));
            }
        }
        self.y.next = v;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        let nb = N / 8;
        let parts: Vec<String> = (0..nb)
            .map(|b| format!("a[{}:{}]", b * 8 + 7, b * 8))
            .collect();
        Verilog::Custom(format!("assign y = {{{}}};\n", parts.join(", ")))
    }
}
