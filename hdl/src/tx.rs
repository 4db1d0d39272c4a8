//! Egress: a frame queue of one port, serialised to AXI-Stream.
//!
//! The engine writes a frame as `WB`-bit payload rows followed by a descriptor (the
//! 64-byte header region and the frame length). A frame is sent only once complete,
//! so the MAC never sees an underrun.

use crate::layout::{at, desc, TxDesc};
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

/// Width of an egress descriptor: 512-bit header region, 16-bit length, 16-bit first row.
pub const TXD_W: usize = 512 + 32;
/// Egress descriptor FIFO depth.
pub const TXD_DEPTH: usize = 8;

/// One egress port.
#[derive(LogicBlock)]
pub struct Tx<const DW: usize, const KW: usize, const WB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, bool>,
    /// Room for one more maximum-size frame.
    pub ready: Signal<Out, bool>,
    /// Write one payload row.
    pub w_we: Signal<In, bool>,
    /// The payload row.
    pub w_row: Signal<In, Bits<WB>>,
    /// Commit the frame written since the last push.
    pub push: Signal<In, bool>,
    /// Its 64-byte header region (byte 0 in bits 7:0).
    pub p_hdr: Signal<In, Bits<512>>,
    /// Its length in bytes.
    pub p_len: Signal<In, Bits<16>>,
    /// AXI-Stream data.
    pub tdata: Signal<Out, Bits<DW>>,
    /// AXI-Stream byte enables.
    pub tkeep: Signal<Out, Bits<KW>>,
    /// AXI-Stream valid.
    pub tvalid: Signal<Out, bool>,
    /// AXI-Stream ready.
    pub tready: Signal<In, bool>,
    /// AXI-Stream last.
    pub tlast: Signal<Out, bool>,
    /// AXI-Stream user (always 0: emitted frames are good).
    pub tuser: Signal<Out, bool>,
    /// Pulse with the length of each frame sent (tx counters).
    pub sent: Signal<Out, bool>,
    /// Length of the frame `sent` reports.
    pub sent_len: Signal<Out, Bits<64>>,
    /// Payload rows buffered.
    pub c_rows: Constant<Bits<16>>,
    /// Rows one maximum frame can need.
    pub c_maxrows: Constant<Bits<16>>,
    /// Chunks per row minus one.
    pub c_cmax: Constant<Bits<8>>,
    /// Beats of the header region.
    pub c_hbeats: Constant<Bits<16>>,
    /// DATA_W.
    pub c_dw: Constant<Bits<16>>,
    /// Bytes per beat.
    pub c_kb: Constant<Bits<16>>,
    /// Descriptor layout: where the length and the first row sit (`layout::desc`).
    pub at_len: Constant<Bits<16>>,
    /// See `at_len`.
    pub at_row0: Constant<Bits<16>>,
    /// Twice that.
    pub c_kb2: Constant<Bits<16>>,
    /// log2 of bytes per row.
    pub c_rowlog: Constant<Bits<16>>,
    /// Bytes per row minus one.
    pub c_rowmask: Constant<Bits<16>>,
    data: FaninRam<WB>,
    desc: FaninRam<TXD_W>,
    /// The header beat at `hshift`.
    hword: WordSel<512, DW>,
    /// The payload chunk at `cshift`.
    cword: WordSel<WB, DW>,
    wrow: DFF<Bits<16>>,
    frow: DFF<Bits<16>>,
    rdrow: DFF<Bits<16>>,
    dw: DFF<Bits<4>>,
    dwq: DFF<Bits<4>>,
    dr: DFF<Bits<4>>,
    busy: DFF<bool>,
    dr_moved: DFF<bool>,
    rdy: DFF<bool>,
    hdr: DFF<Bits<512>>,
    len: DFF<Bits<16>>,
    row0: DFF<Bits<16>>,
    beat: DFF<Bits<16>>,
    left_b: DFF<Bits<16>>,
    hshift: DFF<Bits<16>>,
    /// The current beat is a header beat (`beat < c_hbeats`), registered a beat ahead.
    hsel: DFF<bool>,
    chunk: DFF<Bits<8>>,
    cshift: DFF<Bits<16>>,
    rpa: DFF<Bits<16>>,
    rpb: DFF<Bits<16>>,
    last_q: DFF<bool>,
    dvalid: Signal<Local, bool>,
    ld: Signal<Local, bool>,
    dfill: Signal<Local, Bits<4>>,
    rem: Signal<Local, Bits<16>>,
    last: Signal<Local, bool>,
    prow_n: Signal<Local, Bits<16>>,
    nrows: Signal<Local, Bits<16>>,
}

impl<const DW: usize, const KW: usize, const WB: usize> Tx<DW, KW, WB> {
    /// An egress port buffering `rows` payload rows for frames up to `max_frame` bytes.
    pub fn new(rows: usize, max_frame: usize) -> Self {
        let wbb = WB / 8;
        // (Two rows of margin: `ready` is a cycle old, and the frame before may still have
        // rows in the engine's slot pipeline when the next copy starts.)
        let maxrows = (max_frame.saturating_sub(64)).div_ceil(wbb) + 2;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            ready: Default::default(),
            w_we: Default::default(),
            w_row: Default::default(),
            push: Default::default(),
            p_hdr: Default::default(),
            p_len: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            sent: Default::default(),
            sent_len: Default::default(),
            c_rows: Constant::new((rows as u64).into()),
            c_maxrows: Constant::new((maxrows as u64).into()),
            c_cmax: Constant::new(((WB / DW - 1) as u64).into()),
            c_hbeats: Constant::new(((512 / DW) as u64).into()),
            c_dw: Constant::new((DW as u64).into()),
            c_kb: Constant::new(((DW / 8) as u64).into()),
            at_len: at(desc::TX_LEN),
            at_row0: at(desc::TX_ROW),
            c_kb2: Constant::new(((DW / 4) as u64).into()),
            c_rowlog: Constant::new((wbb.trailing_zeros() as u64).into()),
            c_rowmask: Constant::new(((wbb - 1) as u64).into()),
            data: FaninRam::new(rows, 1),
            desc: FaninRam::new(TXD_DEPTH, 1),
            hword: Default::default(),
            cword: Default::default(),
            wrow: Default::default(),
            frow: Default::default(),
            rdrow: Default::default(),
            dw: Default::default(),
            dwq: Default::default(),
            dr: Default::default(),
            busy: Default::default(),
            dr_moved: Default::default(),
            rdy: Default::default(),
            hdr: Default::default(),
            len: Default::default(),
            row0: Default::default(),
            beat: Default::default(),
            left_b: Default::default(),
            hshift: Default::default(),
            hsel: Default::default(),
            chunk: Default::default(),
            cshift: Default::default(),
            rpa: Default::default(),
            rpb: Default::default(),
            last_q: Default::default(),
            dvalid: Default::default(),
            ld: Default::default(),
            dfill: Default::default(),
            rem: Default::default(),
            last: Default::default(),
            prow_n: Default::default(),
            nrows: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize, const WB: usize> Logic for Tx<DW, KW, WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, wrow, frow, rdrow, dw, dwq, dr, busy, hdr, len, row0, beat, left_b,
            hshift, hsel, chunk, cshift, rpa, rpb, last_q, dr_moved, rdy
        );
        self.data.clock.next = self.clock.val();
        self.desc.clock.next = self.clock.val();
        // Write side (engine). FIFO fill in a sized signal: Verilog would widen it next to a literal.
        self.dfill.next = self.dw.q.val() - self.dr.q.val();
        // `ready` is registered (the engine's copy decision starts from a flip-flop), so it
        // is a cycle old: it keeps room for the row and the descriptor that cycle may add.
        self.rdy.d.next = ((self.wrow.q.val() - self.rdrow.q.val()) + self.c_maxrows.val()
            < self.c_rows.val())
            & (self.dfill.val() < 6);
        self.ready.next = self.rdy.q.val();
        self.data.waddr.next = bit_cast::<ADDR_W, 16>(self.wrow.q.val());
        self.data.wdata.next = self.w_row.val();
        self.data.we.next = bit_cast::<32, 1>(self.w_we.val().into());
        if self.w_we.val() {
            self.wrow.d.next = self.wrow.q.val() + 1;
        }
        self.desc.waddr.next = bit_cast::<ADDR_W, 4>(self.dw.q.val());
        self.desc.wdata.next = bit_cast::<TXD_W, 512>(self.p_hdr.val())
            | (bit_cast::<TXD_W, 16>(self.p_len.val()) << self.at_len.val())
            | (bit_cast::<TXD_W, 16>(self.frow.q.val()) << self.at_row0.val());
        self.desc.we.next = bit_cast::<32, 1>(self.push.val().into());
        if self.push.val() {
            self.dw.d.next = self.dw.q.val() + 1;
            if self.w_we.val() {
                self.frow.d.next = self.wrow.q.val() + 1;
            } else {
                self.frow.d.next = self.wrow.q.val();
            }
        }
        // Payload rows of the frame in flight: ceil((len - 64) / row bytes).
        if self.len.q.val() > 64 {
            self.nrows.next = (self.len.q.val() - 64 + self.c_rowmask.val()) >> self.c_rowlog.val();
        } else {
            self.nrows.next = 0.into();
        }
        // Read side: serialise header beats, then payload chunks.
        self.dwq.d.next = self.dw.q.val();
        self.desc.raddr.next = bit_cast::<ADDR_W, 4>(self.dr.q.val());
        // The next descriptor is there and the RAM shows it (the read address moved at least
        // a cycle ago): it may start on the cycle after the current frame's last beat.
        self.dvalid.next = (self.dwq.q.val() != self.dr.q.val()) & !self.dr_moved.q.val();
        self.dr_moved.d.next = false;
        self.ld.next = false;
        // Bytes left in the frame (`left_b`, counting down from the length) and "this beat is
        // the last", both registered a beat ahead.
        self.rem.next = self.left_b.q.val();
        self.last.next = self.last_q.q.val();
        self.tvalid.next = self.busy.q.val();
        self.tlast.next = self.busy.q.val() & self.last.val();
        self.tuser.next = false;
        self.sent.next = false;
        self.sent_len.next = bit_cast::<64, 16>(self.len.q.val());
        if self.last.val() {
            self.tkeep.next = !(!bits::<KW>(0) << bit_cast::<KW, 16>(self.rem.val()));
        } else {
            self.tkeep.next = !bits::<KW>(0);
        }
        // The beat's data from flip-flops: the header/payload select registered a beat
        // ahead, and word selects instead of shifts (`hshift` is `beat · DW`, below 512
        // while a header beat is sent; `cshift` is `chunk · DW`, below WB): a small mux,
        // not a barrel shifter (the output is a timing end point of its own, the MAC's
        // input), and a word extraction for a simulator.
        self.hword.a.next = self.hdr.q.val();
        self.hword.sh.next = self.hshift.q.val();
        self.cword.a.next = self.data.rdata.val();
        self.cword.sh.next = self.cshift.q.val();
        if self.hsel.q.val() {
            self.tdata.next = self.hword.y.val();
        } else {
            self.tdata.next = self.cword.y.val();
        }
        self.prow_n.next = self.rpa.q.val();
        if !self.busy.q.val() {
            self.ld.next = self.dvalid.val();
        } else if self.tready.val() {
            self.beat.d.next = self.beat.q.val() + 1;
            self.left_b.d.next = self.left_b.q.val() - self.c_kb.val();
            self.last_q.d.next = self.left_b.q.val() <= self.c_kb2.val();
            self.hshift.d.next = self.hshift.q.val() + self.c_dw.val();
            self.hsel.d.next = (self.beat.q.val() + 1) < self.c_hbeats.val();
            if !self.hsel.q.val() {
                if self.chunk.q.val() == self.c_cmax.val() {
                    self.chunk.d.next = 0.into();
                    self.cshift.d.next = 0.into();
                    self.rpa.d.next = self.rpb.q.val();
                    self.rpb.d.next = self.rpb.q.val() + 1;
                    self.prow_n.next = self.rpb.q.val();
                } else {
                    self.chunk.d.next = self.chunk.q.val() + 1;
                    self.cshift.d.next = self.cshift.q.val() + self.c_dw.val();
                }
            }
            if self.last.val() {
                self.busy.d.next = false;
                self.sent.next = true;
                self.rdrow.d.next = self.row0.q.val() + self.nrows.val();
                // Back to back: the next frame starts with the next beat.
                self.ld.next = self.dvalid.val();
            }
        }
        if self.ld.val() {
            self.busy.d.next = true;
            self.dr.d.next = self.dr.q.val() + 1;
            self.dr_moved.d.next = true;
            self.hdr.d.next = self.desc.rdata.val().get_value_hdr();
            self.len.d.next = self.desc.rdata.val().get_value_len();
            self.row0.d.next = self.desc.rdata.val().get_value_row0();
            self.beat.d.next = 0.into();
            self.left_b.d.next = self.desc.rdata.val().get_value_len();
            self.last_q.d.next = self.desc.rdata.val().get_value_len() <= self.c_kb.val();
            self.hshift.d.next = 0.into();
            self.hsel.d.next = true;
            self.chunk.d.next = 0.into();
            self.cshift.d.next = 0.into();
            self.rpa.d.next = self.desc.rdata.val().get_value_row0();
            self.rpb.d.next = self.desc.rdata.val().get_value_row0() + 1;
        }
        // Prefetch: the RAM samples the row the next beat needs.
        if self.busy.q.val() & !self.ld.val() {
            self.data.raddr.next = bit_cast::<ADDR_W, 16>(self.prow_n.val());
        } else {
            self.data.raddr.next = bit_cast::<ADDR_W, 16>(self.desc.rdata.val().get_value_row0());
        }
        if self.rst.val() {
            self.wrow.d.next = 0.into();
            self.frow.d.next = 0.into();
            self.rdrow.d.next = 0.into();
            self.dw.d.next = 0.into();
            self.dr.d.next = 0.into();
            self.busy.d.next = false;
            self.dr_moved.d.next = false;
        }
    }
}

/// The `W`-bit word of `a` that `a >> sh` starts with when `sh` is a multiple of `W`
/// below `N` (the word index is `sh`'s bits `log2(N)-1 .. log2(W)`; the bits below and
/// above are taken to be zero): an `N/W`-way multiplexer instead of a shifter (a
/// simulator extracts the word instead of shifting `N` bits).
#[derive(LogicBlock, Default)]
pub struct WordSel<const N: usize, const W: usize> {
    /// The wide value.
    pub a: Signal<In, Bits<N>>,
    /// The bit offset (a multiple of `W` below `N`).
    pub sh: Signal<In, Bits<16>>,
    /// The selected word.
    pub y: Signal<Out, Bits<W>>,
}

impl<const N: usize, const W: usize> WordSel<N, W> {
    fn lg(x: usize) -> usize {
        x.trailing_zeros() as usize
    }
}

impl<const N: usize, const W: usize> Logic for WordSel<N, W> {
    fn update(&mut self) {
        let idx = (self.sh.val().index() & (N - 1)) >> Self::lg(W);
        self.y.next = bit_cast::<W, N>(self.a.val() >> bits::<16>((idx * W) as u64));
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        assert!(N.is_power_of_two() && W.is_power_of_two() && N <= 1 << 16);
        if N == W {
            return Verilog::Custom("assign y = a;\n".into());
        }
        let (hi, lo) = (Self::lg(N) - 1, Self::lg(W));
        Verilog::Custom(format!(
            "assign y = a[{{sh[{hi}:{lo}], {lo}'d0}} +: {W}];\n"
        ))
    }
}
