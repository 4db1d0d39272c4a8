//! Custom-Verilog leaves: the inferable RAM and a byte-order swap (pure wiring).

pub use crate::config::RamStyle;
use rust_hdl::prelude::*;

/// Core-wide RAM address width; each RAM uses only the low `ceil(log2(depth))` bits.
pub const ADDR_W: usize = 24;

/// Simple dual-port RAM with a one-cycle synchronous read, written in a style yosys and
/// Vivado infer as block RAM or UltraRAM ([`RamStyle`], fixed at construction; no `initial`
/// block). Block RAM reads old data on a same-cycle write to the read row; UltraRAM does
/// not promise that, so its user must not read a row in the cycle it writes it (or must
/// forward, as the accumulator does). Writes are split into `chunks` equal chunks, each
/// with its own enable bit (`we[k]`), for the ingress gearbox. A read may go through
/// further registers in the same block ([`FaninRam::with_latency`]): the first is the
/// RAM's output register (block RAM `DO_REG`, UltraRAM `OREG`), the next ones are pipeline
/// registers a deep UltraRAM cascade places between its blocks.
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
    /// Read data, `latency` cycles after `raddr` (one unless [`FaninRam::with_latency`];
    /// block RAM: old data on a same-cycle write).
    pub rdata: Signal<Out, Bits<W>>,
    _depth: usize,
    _chunks: usize,
    _style: RamStyle,
    _latency: usize,
    _mem: Vec<Bits<W>>,
    _pipe: Vec<Bits<W>>,
}

impl<const W: usize> FaninRam<W> {
    /// A block RAM of `depth` words written in `chunks` chunks.
    pub fn new(depth: usize, chunks: usize) -> Self {
        Self::with_style(depth, chunks, RamStyle::Block)
    }

    /// A RAM of `depth` words written in `chunks` chunks, in the memory `style` asks for.
    pub fn with_style(depth: usize, chunks: usize, style: RamStyle) -> Self {
        Self::with_latency(depth, chunks, style, 1)
    }

    /// A RAM as [`FaninRam::with_style`] whose read data comes `latency` cycles after the
    /// address (1 to 4): the RAM's own read latch, then `latency - 1` registers written in
    /// the same block (output register, then cascade pipeline registers).
    pub fn with_latency(depth: usize, chunks: usize, style: RamStyle, latency: usize) -> Self {
        assert!(depth >= 2 && (1..=32).contains(&chunks) && W % chunks == 0);
        assert!((1..=4).contains(&latency));
        Self {
            clock: Default::default(),
            waddr: Default::default(),
            wdata: Default::default(),
            we: Default::default(),
            raddr: Default::default(),
            rdata: Default::default(),
            _depth: depth,
            _chunks: chunks,
            _style: style,
            _latency: latency,
            _pipe: vec![Bits::default(); latency - 1],
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

    /// The memory this RAM asks synthesis for.
    pub fn style(&self) -> RamStyle {
        self._style
    }

    /// Cycles from `raddr` to `rdata`.
    pub fn latency(&self) -> usize {
        self._latency
    }
}

impl<const W: usize> Logic for FaninRam<W> {
    fn update(&mut self) {
        if self.clock.pos_edge() {
            let mask = (1usize << self.aw()) - 1;
            let ra = (self.raddr.val().index() & mask) % self._depth.max(1);
            let wa = (self.waddr.val().index() & mask) % self._depth.max(1);
            let word = self._mem.get(ra).copied().unwrap_or_default();
            // The registers after the read latch shift by one, oldest out.
            self._pipe.push(word);
            self.rdata.next = self._pipe.remove(0);
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
        // Block RAM keeps the original text (the golden `default` Verilog is byte-stable).
        let (kind, note) = match self._style {
            RamStyle::Block => ("read-old-data", ""),
            RamStyle::Ultra => (
                "UltraRAM",
                "\n// UltraRAM: a read of the row written in the same cycle is not read-old-data;\n\
                 // the user of this memory forwards that case.",
            ),
        };
        // Registers after the read latch (none at latency 1: the text stays as it was).
        let mut regs = String::new();
        let mut shifts = String::new();
        let mut out = "rdata_r".to_string();
        for k in 1..self._latency {
            let what = if k == 1 {
                "output register"
            } else {
                "pipeline register"
            };
            regs.push_str(&format!("reg [{}:0] rdata_r{k}; // {what}\n", W - 1));
            shifts.push_str(&format!("    rdata_r{k} <= {out};\n"));
            out = format!("rdata_r{k}");
        }
        let lat = if self._latency > 1 {
            format!(
                "\n// Read latency {}: the read latch, then {} register(s) in this block.",
                self._latency,
                self._latency - 1
            )
        } else {
            String::new()
        };
        Verilog::Custom(format!(
            "// {depth} x {W} simple dual-port RAM, {kind}, {chunks} write chunk(s).{note}{lat}
// Only the low {aw} address bits and {chunks} enable bits are used by this instance.
(* ram_style = \"{style}\" *) reg [{wm}:0] mem [0:{dm}];
reg [{wm}:0] rdata_r;
{regs}assign rdata = {out};
always @(posedge clock) begin
    rdata_r <= mem[raddr[{am}:0]];
{shifts}{writes}end
",
            depth = self._depth,
            chunks = self._chunks,
            style = self._style.attr(),
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

#[cfg(test)]
mod tests {
    use super::*;

    fn text(style: RamStyle) -> String {
        match FaninRam::<64>::with_style(1024, 2, style).hdl() {
            Verilog::Custom(s) => s,
            _ => unreachable!(),
        }
    }

    /// Block RAM keeps the exact text it had before the style existed (golden Verilog).
    #[test]
    fn block_ram_text_is_unchanged() {
        assert!(text(RamStyle::Block).starts_with(
            "// 1024 x 64 simple dual-port RAM, read-old-data, 2 write chunk(s).\n\
             // Only the low 10 address bits and 2 enable bits are used by this instance.\n\
             (* ram_style = \"block\" *) reg [63:0] mem [0:1023];\n"
        ));
        assert_eq!(FaninRam::<64>::new(1024, 2).style(), RamStyle::Block);
    }

    /// Extra read registers shift in the same block, oldest last; the native model agrees.
    #[test]
    fn read_latency_registers() {
        let t = match FaninRam::<64>::with_latency(1024, 1, RamStyle::Ultra, 3).hdl() {
            Verilog::Custom(s) => s,
            _ => unreachable!(),
        };
        assert!(t.contains("assign rdata = rdata_r2;"), "{t}");
        assert!(
            t.contains("    rdata_r1 <= rdata_r;\n    rdata_r2 <= rdata_r1;\n"),
            "{t}"
        );
        assert!(!text(RamStyle::Block).contains("rdata_r1"));
    }

    #[test]
    fn ultra_ram_asks_for_uram() {
        let t = text(RamStyle::Ultra);
        assert!(
            t.contains("(* ram_style = \"ultra\" *) reg [63:0] mem [0:1023];"),
            "{t}"
        );
        assert!(!t.contains("\"block\""));
    }
}
