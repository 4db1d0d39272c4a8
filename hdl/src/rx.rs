//! Ingress: store-and-forward buffering of one port.
//!
//! The first 80 bytes of a frame are captured into a descriptor (parser input; bytes
//! 0..64 are the L2-L4 + fanin header region). Bytes from 64 on (the fanin payload, or
//! the rest of any other frame) are written through a gearbox into `WB`-bit rows, so the
//! engine reads a whole internal-bus row per cycle and payload lanes are row-aligned.
//! A frame is committed only at `tlast`: one with `tuser[0]` set or longer than
//! `max_frame` is discarded (nothing of it reaches the engine) and counted.
//! The IPv4 header checksum and the UDP checksum are summed as the frame streams in, one
//! beat per cycle, and their verdicts travel in the descriptor.

use crate::parse::PARSE_W;
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

/// Width of an ingress descriptor: 640-bit capture (bits 639:0), 16-bit length (655:640),
/// 16-bit first row (671:656), UDP-checksum-ok flag (bit 672), IPv4-header-checksum-ok
/// flag (bit 673).
pub const DESC_W: usize = PARSE_W + 41;
/// Descriptor FIFO depth (frames buffered per port).
pub const DESC_DEPTH: usize = 8;

/// One ingress port.
#[derive(LogicBlock)]
pub struct Rx<const DW: usize, const KW: usize, const WB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, bool>,
    /// AXI-Stream data.
    pub tdata: Signal<In, Bits<DW>>,
    /// AXI-Stream byte enables (contiguous from byte 0).
    pub tkeep: Signal<In, Bits<KW>>,
    /// AXI-Stream valid.
    pub tvalid: Signal<In, bool>,
    /// AXI-Stream ready.
    pub tready: Signal<Out, bool>,
    /// AXI-Stream last beat.
    pub tlast: Signal<In, bool>,
    /// AXI-Stream bad-frame flag (valid on the `tlast` beat).
    pub tuser: Signal<In, bool>,
    /// A committed frame's descriptor is available.
    pub d_valid: Signal<Out, bool>,
    /// Consume the descriptor.
    pub d_pop: Signal<In, bool>,
    /// Captured first 80 bytes.
    pub d_hdr: Signal<Out, Bits<PARSE_W>>,
    /// Frame length in bytes.
    pub d_len: Signal<Out, Bits<16>>,
    /// First payload row of the frame.
    pub d_row: Signal<Out, Bits<16>>,
    /// The UDP checksum is 0 (absent) or correct (`udp_checksum_ok`), computed over the
    /// UDP length as the frame streams in; meaningful only for IPv4/UDP frames without
    /// options, which is all the parser accepts.
    pub d_udp_ok: Signal<Out, bool>,
    /// The IPv4 header checksum is correct: the one's-complement sum of the big-endian
    /// words of bytes `14 .. 14 + 4·IHL` (IHL = low nibble of byte 14) is 0xffff, as
    /// smoltcp's `Ipv4Packet::verify_checksum`, summed as the frame streams in.
    /// Meaningful only when the frame holds the whole header (at least `14 + 4·IHL`
    /// bytes); the parser rejects every other frame (and IHL < 5) for other reasons.
    pub d_ip_ok: Signal<Out, bool>,
    /// Payload row read address (engine).
    pub r_addr: Signal<In, Bits<16>>,
    /// Payload row, one cycle after `r_addr`.
    pub r_data: Signal<Out, Bits<WB>>,
    /// Release rows up to (not including) `rel_row`.
    pub rel: Signal<In, bool>,
    /// New read pointer on `rel`.
    pub rel_row: Signal<In, Bits<16>>,
    /// Pulse: a frame was discarded for `tuser` or length.
    pub bad: Signal<Out, bool>,
    /// Payload rows buffered.
    pub c_rows: Constant<Bits<16>>,
    /// Rows one maximum frame can need.
    pub c_maxrows: Constant<Bits<16>>,
    /// `max_frame`: longer frames are discarded.
    pub c_maxlen: Constant<Bits<16>>,
    /// Chunks (DW beats) per row, minus one.
    pub c_cmax: Constant<Bits<8>>,
    /// Beats that hold the 64-byte header region.
    pub c_hbeats: Constant<Bits<16>>,
    /// Beats that hold the 80-byte parser capture.
    pub c_cbeats: Constant<Bits<16>>,
    /// DATA_W as a constant.
    pub c_dw: Constant<Bits<16>>,
    /// Bytes 1..=KW, for the last-beat byte count.
    pub c_nb: Vec<Constant<Bits<16>>>,
    data: FaninRam<WB>,
    desc: FaninRam<DESC_W>,
    in_frame: DFF<bool>,
    drop: DFF<bool>,
    beat: DFF<Bits<16>>,
    hshift: DFF<Bits<16>>,
    chunk: DFF<Bits<8>>,
    cshift: DFF<Bits<16>>,
    wrow: DFF<Bits<16>>,
    row0: DFF<Bits<16>>,
    rdrow: DFF<Bits<16>>,
    lenq: DFF<Bits<16>>,
    hdr: DFF<Bits<PARSE_W>>,
    dw: DFF<Bits<4>>,
    dwq: DFF<Bits<4>>,
    dr: DFF<Bits<4>>,
    popped: DFF<bool>,
    usum: DFF<Bits<32>>,
    usb: UdpSum<DW>,
    isum: DFF<Bits<32>>,
    s1_v: DFF<bool>,
    s1_first: DFF<bool>,
    s1_us: DFF<Bits<DW>>,
    s1_is: DFF<Bits<DW>>,
    uws: WordSum<DW>,
    iws: WordSum<DW>,
    pend_a: DFF<bool>,
    pa_desc: DFF<Bits<DESC_W>>,
    pa_pseudo: DFF<Bits<32>>,
    pseudo: Signal<Local, Bits<32>>,
    pend: DFF<bool>,
    p_desc: DFF<Bits<DESC_W>>,
    p_utot: DFF<Bits<32>>,
    p_itot: DFF<Bits<32>>,
    isb: IpSum<DW>,
    itot: Signal<Local, Bits<32>>,
    if1: Signal<Local, Bits<32>>,
    if2: Signal<Local, Bits<32>>,
    iok: Signal<Local, bool>,
    utot: Signal<Local, Bits<32>>,
    ufin: Signal<Local, Bits<32>>,
    uf1: Signal<Local, Bits<32>>,
    uf2: Signal<Local, Bits<32>>,
    uok: Signal<Local, bool>,
    hnext: Signal<Local, Bits<PARSE_W>>,
    nb: Signal<Local, Bits<16>>,
    flen: Signal<Local, Bits<16>>,
    acc: Signal<Local, bool>,
    dfill: Signal<Local, Bits<4>>,
    wr: Signal<Local, bool>,
    room: Signal<Local, bool>,
}

impl<const DW: usize, const KW: usize, const WB: usize> Rx<DW, KW, WB> {
    /// An ingress port buffering `rows` payload rows; frames above `max_frame` bytes are dropped.
    pub fn new(rows: usize, max_frame: usize) -> Self {
        let wbb = WB / 8;
        let maxrows = (max_frame.saturating_sub(64)).div_ceil(wbb) + 1;
        Self {
            clock: Default::default(),
            rst: Default::default(),
            tdata: Default::default(),
            tkeep: Default::default(),
            tvalid: Default::default(),
            tready: Default::default(),
            tlast: Default::default(),
            tuser: Default::default(),
            d_valid: Default::default(),
            d_pop: Default::default(),
            d_hdr: Default::default(),
            d_len: Default::default(),
            d_row: Default::default(),
            d_udp_ok: Default::default(),
            d_ip_ok: Default::default(),
            r_addr: Default::default(),
            r_data: Default::default(),
            rel: Default::default(),
            rel_row: Default::default(),
            bad: Default::default(),
            c_rows: Constant::new((rows as u64).into()),
            c_maxrows: Constant::new((maxrows as u64).into()),
            c_maxlen: Constant::new((max_frame as u64).into()),
            c_cmax: Constant::new(((WB / DW - 1) as u64).into()),
            c_hbeats: Constant::new(((512 / DW) as u64).into()),
            c_cbeats: Constant::new((PARSE_W.div_ceil(DW) as u64).into()),
            c_dw: Constant::new((DW as u64).into()),
            c_nb: (1..=KW).map(|i| Constant::new((i as u64).into())).collect(),
            data: FaninRam::new(rows, WB / DW),
            desc: FaninRam::new(DESC_DEPTH, 1),
            in_frame: Default::default(),
            drop: Default::default(),
            beat: Default::default(),
            hshift: Default::default(),
            chunk: Default::default(),
            cshift: Default::default(),
            wrow: Default::default(),
            row0: Default::default(),
            rdrow: Default::default(),
            lenq: Default::default(),
            hdr: Default::default(),
            dw: Default::default(),
            dwq: Default::default(),
            dr: Default::default(),
            popped: Default::default(),
            usum: Default::default(),
            usb: Default::default(),
            isum: Default::default(),
            s1_v: Default::default(),
            s1_first: Default::default(),
            s1_us: Default::default(),
            s1_is: Default::default(),
            uws: Default::default(),
            iws: Default::default(),
            pend_a: Default::default(),
            pa_desc: Default::default(),
            pa_pseudo: Default::default(),
            pseudo: Default::default(),
            pend: Default::default(),
            p_desc: Default::default(),
            p_utot: Default::default(),
            p_itot: Default::default(),
            isb: Default::default(),
            itot: Default::default(),
            if1: Default::default(),
            if2: Default::default(),
            iok: Default::default(),
            utot: Default::default(),
            ufin: Default::default(),
            uf1: Default::default(),
            uf2: Default::default(),
            uok: Default::default(),
            hnext: Default::default(),
            nb: Default::default(),
            flen: Default::default(),
            acc: Default::default(),
            dfill: Default::default(),
            wr: Default::default(),
            room: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize, const WB: usize> Logic for Rx<DW, KW, WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_frame, drop, beat, hshift, chunk, cshift, wrow, row0, rdrow, lenq, hdr,
            dw, dwq, dr, popped, usum, isum, s1_v, s1_first, s1_us, s1_is, pend_a, pa_desc,
            pa_pseudo, pend, p_desc, p_utot, p_itot
        );
        self.data.clock.next = self.clock.val();
        self.desc.clock.next = self.clock.val();
        // FIFO fill in a sized signal: Verilog would widen the subtraction next to a literal.
        self.dfill.next = self.dw.q.val() - self.dr.q.val();
        // Accept a new frame only with room for a maximum frame and a descriptor slot.
        self.room.next = ((self.wrow.q.val() - self.rdrow.q.val()) + self.c_maxrows.val()
            <= self.c_rows.val())
            & ((self.dfill.val()
                + bit_cast::<4, 1>(self.pend_a.q.val().into())
                + bit_cast::<4, 1>(self.pend.q.val().into()))
                < 7);
        self.tready.next = self.in_frame.q.val() | self.room.val();
        self.acc.next = self.tvalid.val() & self.tready.val();
        // Bytes in this beat (tkeep is contiguous from byte 0).
        self.nb.next = 0.into();
        for i in 0..KW {
            if self.tkeep.val().get_bit(i) {
                self.nb.next = self.c_nb[i].val();
            }
        }
        // (A frame's first beat may also be its last: start from 0, not the previous length.)
        if self.in_frame.q.val() {
            self.flen.next = self.lenq.q.val() + self.nb.val();
        } else {
            self.flen.next = self.nb.val();
        }
        // Header capture.
        if !self.in_frame.q.val() {
            self.hnext.next = bit_cast::<PARSE_W, DW>(self.tdata.val());
        } else if self.beat.q.val() < self.c_cbeats.val() {
            self.hnext.next = self.hdr.q.val()
                | (bit_cast::<PARSE_W, DW>(self.tdata.val()) << self.hshift.q.val());
        } else {
            self.hnext.next = self.hdr.q.val();
        }
        // UDP checksum: one's-complement sum of the big-endian words of bytes
        // 34 .. 34 + udp_len (odd length: the last byte padded with zero), plus the pseudo
        // header at tlast.
        self.usb.tdata.next = self.tdata.val();
        self.usb.in_frame.next = self.in_frame.q.val();
        self.usb.beat.next = self.beat.q.val();
        self.usb.hdr.next = self.hdr.q.val();
        // Each beat's masked words are registered (`s1_*`), summed and accumulated the
        // cycle after.
        self.uws.tw.next = self.s1_us.q.val();
        self.iws.tw.next = self.s1_is.q.val();
        if self.s1_first.q.val() {
            self.utot.next = self.uws.sum.val();
        } else {
            self.utot.next = self.usum.q.val() + self.uws.sum.val();
        }
        // The verdicts are finished one cycle after tlast from the registered sums (the
        // descriptor is written then), which keeps the fold off the per-beat path.
        // (The pseudo header was summed at tlast and added to the total a cycle later.)
        self.ufin.next = self.p_utot.q.val();
        self.pseudo.next = bits::<32>(17)
            + bit_cast::<32, 16>(self.usb.ulen.val())
            + ((bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(208)) << 8)
                | bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(216)))
            + ((bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(224)) << 8)
                | bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(232)))
            + ((bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(240)) << 8)
                | bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(248)))
            + ((bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(256)) << 8)
                | bit_cast::<32, 8>(self.hnext.val().get_bits::<8>(264)));
        self.uf1.next = (self.ufin.val() & 0xffff) + (self.ufin.val() >> 16);
        self.uf2.next = (self.uf1.val() & 0xffff) + (self.uf1.val() >> 16);
        self.uok.next = (self.uf2.val() == 0xffff) | (self.p_desc.q.val().get_bits::<16>(320) == 0);
        // IPv4 header checksum: one's-complement sum of the big-endian words of bytes
        // 14 .. 14 + 4·IHL, each beat adding only its own words; folded at tlast (the sum of
        // at most 30 words fits in 21 bits, so two folds reach 16 bits).
        self.isb.tdata.next = self.tdata.val();
        self.isb.in_frame.next = self.in_frame.q.val();
        self.isb.beat.next = self.beat.q.val();
        self.isb.hdr.next = self.hdr.q.val();
        if self.s1_first.q.val() {
            self.itot.next = self.iws.sum.val();
        } else {
            self.itot.next = self.isum.q.val() + self.iws.sum.val();
        }
        self.if1.next = (self.p_itot.q.val() & 0xffff) + (self.p_itot.q.val() >> 16);
        self.if2.next = (self.if1.val() & 0xffff) + (self.if1.val() >> 16);
        self.iok.next = self.if2.val() == 0xffff;
        // Payload gearbox write.
        self.data.waddr.next = bit_cast::<ADDR_W, 16>(self.wrow.q.val());
        self.data.wdata.next = bit_cast::<WB, DW>(self.tdata.val()) << self.cshift.q.val();
        self.data.we.next = 0.into();
        self.desc.waddr.next = bit_cast::<ADDR_W, 4>(self.dw.q.val());
        self.desc.wdata.next = self.p_desc.q.val()
            | (bit_cast::<DESC_W, 1>(self.uok.val().into()) << 672)
            | (bit_cast::<DESC_W, 1>(self.iok.val().into()) << 673);
        self.desc.we.next = bit_cast::<32, 1>(self.pend.q.val().into());
        // Descriptor pipeline: tlast (A: fields) -> +1 (totals incl. the last beat) -> +2
        // (verdicts, write).
        if self.s1_v.q.val() {
            self.usum.d.next = self.utot.val();
            self.isum.d.next = self.itot.val();
        }
        self.s1_v.d.next = self.acc.val();
        self.s1_first.d.next = !self.in_frame.q.val();
        self.s1_us.d.next = self.usb.tw.val();
        self.s1_is.d.next = self.isb.tw.val();
        self.pend_a.d.next = false;
        self.pend.d.next = self.pend_a.q.val();
        self.p_desc.d.next = self.pa_desc.q.val();
        self.p_utot.d.next = self.utot.val() + self.pa_pseudo.q.val();
        self.p_itot.d.next = self.itot.val();
        if self.pend.q.val() {
            self.dw.d.next = self.dw.q.val() + 1;
        }
        self.bad.next = false;
        self.wr.next = false;
        if self.acc.val() {
            self.hdr.d.next = self.hnext.val();
            self.lenq.d.next = self.lenq.q.val() + self.nb.val();
            self.beat.d.next = self.beat.q.val() + 1;
            self.hshift.d.next = self.hshift.q.val() + self.c_dw.val();
            if !self.in_frame.q.val() {
                self.in_frame.d.next = true;
                self.beat.d.next = 1.into();
                self.hshift.d.next = self.c_dw.val();
                self.lenq.d.next = self.nb.val();
            }
            if ((self.beat.q.val() >= self.c_hbeats.val()) & self.in_frame.q.val())
                & !self.drop.q.val()
            {
                if (self.wrow.q.val() - self.row0.q.val()) >= self.c_maxrows.val() {
                    self.drop.d.next = true;
                } else {
                    self.wr.next = true;
                    self.data.we.next =
                        bit_cast::<32, 1>(1.into()) << bit_cast::<32, 8>(self.chunk.q.val());
                    if self.chunk.q.val() == self.c_cmax.val() {
                        self.chunk.d.next = 0.into();
                        self.cshift.d.next = 0.into();
                        self.wrow.d.next = self.wrow.q.val() + 1;
                    } else {
                        self.chunk.d.next = self.chunk.q.val() + 1;
                        self.cshift.d.next = self.cshift.q.val() + self.c_dw.val();
                    }
                }
            }
            if self.tlast.val() {
                self.in_frame.d.next = false;
                self.drop.d.next = false;
                self.chunk.d.next = 0.into();
                self.cshift.d.next = 0.into();
                if self.tuser.val() | self.drop.q.val() | (self.flen.val() > self.c_maxlen.val()) {
                    // Discard: rewind the payload write pointer.
                    self.wrow.d.next = self.row0.q.val();
                    self.bad.next = true;
                } else {
                    self.pend_a.d.next = true;
                    self.pa_desc.d.next = bit_cast::<DESC_W, PARSE_W>(self.hnext.val())
                        | (bit_cast::<DESC_W, 16>(self.flen.val()) << 640)
                        | (bit_cast::<DESC_W, 16>(self.row0.q.val()) << 656);
                    self.pa_pseudo.d.next = self.pseudo.val();
                    // Commit: the next frame starts on a fresh row.
                    if self.wr.val() | (self.chunk.q.val() != 0) {
                        self.wrow.d.next = self.wrow.q.val() + 1;
                        self.row0.d.next = self.wrow.q.val() + 1;
                    } else {
                        self.row0.d.next = self.wrow.q.val();
                    }
                }
            }
        }
        // Descriptor FIFO read side: data is valid one cycle after the write pointer moved
        // and one cycle after a pop.
        self.dwq.d.next = self.dw.q.val();
        self.desc.raddr.next = bit_cast::<ADDR_W, 4>(self.dr.q.val());
        self.d_valid.next = (self.dwq.q.val() != self.dr.q.val()) & !self.popped.q.val();
        self.popped.d.next = self.d_pop.val();
        if self.d_pop.val() {
            self.dr.d.next = self.dr.q.val() + 1;
        }
        self.d_hdr.next = self.desc.rdata.val().get_bits::<PARSE_W>(0);
        self.d_len.next = self.desc.rdata.val().get_bits::<16>(640);
        self.d_row.next = self.desc.rdata.val().get_bits::<16>(656);
        self.d_udp_ok.next = self.desc.rdata.val().get_bit(672);
        self.d_ip_ok.next = self.desc.rdata.val().get_bit(673);
        self.data.raddr.next = bit_cast::<ADDR_W, 16>(self.r_addr.val());
        self.r_data.next = self.data.rdata.val();
        if self.rel.val() {
            self.rdrow.d.next = self.rel_row.val();
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
            self.drop.d.next = false;
            self.wrow.d.next = 0.into();
            self.row0.d.next = 0.into();
            self.rdrow.d.next = 0.into();
            self.dw.d.next = 0.into();
            self.dr.d.next = 0.into();
            self.pend.d.next = false;
            self.pend_a.d.next = false;
            self.s1_v.d.next = false;
            self.chunk.d.next = 0.into();
            self.cshift.d.next = 0.into();
        }
    }
}

/// The UDP checksum share of one beat: the sum of the big-endian 16-bit words whose
/// bytes lie in `[34, 34 + udp_len)` (a word straddling the end keeps its first byte),
/// and the UDP length (bytes 38..39, from this beat or the capture of earlier beats; it
/// is known before any byte it masks arrives). A leaf fed only by ports and registers:
/// `bit_cast` cannot take a loop index in `#[hdl_gen]`, and a sub-block fed by values
/// computed in rust-hdl's single `always` block looks like a loop to Verilator.
#[derive(LogicBlock, Default)]
pub struct UdpSum<const DW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// The beat is not the frame's first.
    pub in_frame: Signal<In, bool>,
    /// Beats of the frame before this one (when `in_frame`).
    pub beat: Signal<In, Bits<16>>,
    /// Capture of the earlier beats.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// The beat with every byte outside the UDP datagram zeroed (its words are summed by
    /// [`WordSum`] a cycle later).
    pub tw: Signal<Out, Bits<DW>>,
    /// The UDP length field.
    pub ulen: Signal<Out, Bits<16>>,
}

impl<const DW: usize> Logic for UdpSum<DW> {
    fn update(&mut self) {
        let kw = DW / 8;
        let boff = if self.in_frame.val() {
            self.beat.val().index() * kw
        } else {
            0
        };
        let byte = |k: usize| -> u64 {
            if k >= boff && k - boff < kw {
                self.tdata.val().get_bits::<8>(8 * (k - boff)).index() as u64
            } else if self.in_frame.val() {
                self.hdr.val().get_bits::<8>(8 * k).index() as u64
            } else {
                0
            }
        };
        let ulen = (byte(38) << 8 | byte(39)) as usize;
        let uend = ulen + 34;
        let mut t = Bits::<DW>::default();
        for w in 0..kw / 2 {
            let o = boff + 2 * w;
            if o >= 34 && o < uend {
                for i in 0..8 {
                    t = t.replace_bit(16 * w + i, self.tdata.val().get_bit(16 * w + i));
                    if o + 1 < uend {
                        t = t.replace_bit(16 * w + 8 + i, self.tdata.val().get_bit(16 * w + 8 + i));
                    }
                }
            }
        }
        self.tw.next = t;
        self.ulen.next = (ulen as u64).into();
    }
    fn connect(&mut self) {
        self.tw.connect();
        self.ulen.connect();
    }
    fn hdl(&self) -> Verilog {
        let kw = DW / 8;
        let lg = kw.trailing_zeros();
        let mut v = format!(
            "wire [16:0] boff = in_frame ? {{1'b0, beat}} << {lg} : 17'd0;\n\
             wire [7:0] b38 = (boff <= 17'd38 && 17'd38 - boff < 17'd{kw}) ? tdata[(38 - boff) * 8 +: 8] : (in_frame ? hdr[304 +: 8] : 8'd0);\n\
             wire [7:0] b39 = (boff <= 17'd39 && 17'd39 - boff < 17'd{kw}) ? tdata[(39 - boff) * 8 +: 8] : (in_frame ? hdr[312 +: 8] : 8'd0);\n\
             assign ulen = {{b38, b39}};\n\
             wire [16:0] uend = {{1'b0, b38, b39}} + 17'd34;\n"
        );
        for w in 0..kw / 2 {
            let (a, b) = (16 * w, 16 * w + 8);
            v.push_str(&format!(
                "wire [16:0] o{w} = boff + 17'd{o};\n\
                 assign tw[{ah}:{a}] = (o{w} >= 17'd34 && o{w} < uend) ? tdata[{ah}:{a}] : 8'd0;\n\
                 assign tw[{bh}:{b}] = (o{w} >= 17'd34 && o{w} + 17'd1 < uend) ? tdata[{bh}:{b}] : 8'd0;\n",
                o = 2 * w,
                ah = a + 7,
                bh = b + 7
            ));
        }
        Verilog::Custom(v)
    }
}

/// First byte of the IPv4 header (after the 14-byte Ethernet header).
const IP_FIRST: usize = 14;
/// One past the last byte of the longest IPv4 header (IHL 15).
const IP_LAST: usize = IP_FIRST + 60;

/// The IPv4 header checksum share of one beat: the sum of the big-endian 16-bit words
/// of this beat whose bytes lie in `[14, 14 + 4·IHL)`. IHL is the low nibble of byte 14,
/// taken from this beat or from the capture of earlier beats (a beat before the one
/// holding byte 14 has no word in the range, whatever IHL is). Each word lane has only
/// the few beat indices for which it can lie in bytes 14..74; the masked words are added
/// in a balanced tree. A leaf for the same reasons as [`UdpSum`].
#[derive(LogicBlock, Default)]
pub struct IpSum<const DW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// The beat is not the frame's first.
    pub in_frame: Signal<In, bool>,
    /// Beats of the frame before this one (when `in_frame`).
    pub beat: Signal<In, Bits<16>>,
    /// Capture of the earlier beats.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// The beat with every word outside the IPv4 header zeroed (summed by [`WordSum`]
    /// a cycle later; at most 30 words in all, 30 · 0xffff).
    pub tw: Signal<Out, Bits<DW>>,
}

impl<const DW: usize> Logic for IpSum<DW> {
    fn update(&mut self) {
        let kw = DW / 8;
        let bidx = if self.in_frame.val() {
            self.beat.val().index()
        } else {
            0
        };
        let b14 = if bidx == IP_FIRST / kw {
            self.tdata.val().get_bits::<8>(8 * (IP_FIRST % kw)).index()
        } else {
            self.hdr.val().get_bits::<8>(8 * IP_FIRST).index()
        };
        let hend = IP_FIRST + 4 * (b14 & 15);
        let mut t = Bits::<DW>::default();
        for w in 0..kw / 2 {
            let o = bidx * kw + 2 * w;
            if o >= IP_FIRST && o < hend {
                for i in 0..16 {
                    t = t.replace_bit(16 * w + i, self.tdata.val().get_bit(16 * w + i));
                }
            }
        }
        self.tw.next = t;
    }
    fn connect(&mut self) {
        self.tw.connect();
    }
    fn hdl(&self) -> Verilog {
        let kw = DW / 8;
        let (b14, l14) = (IP_FIRST / kw, IP_FIRST % kw);
        let mut v = format!(
            "wire [15:0] bidx = in_frame ? beat : 16'd0;\n\
             wire [7:0] b14 = (bidx == 16'd{b14}) ? tdata[{lh}:{ll}] : hdr[{hh}:{hl}];\n\
             wire [6:0] hend = {{1'b0, b14[3:0], 2'b00}} + 7'd{IP_FIRST};\n",
            ll = 8 * l14,
            lh = 8 * l14 + 7,
            hl = 8 * IP_FIRST,
            hh = 8 * IP_FIRST + 7
        );
        for w in 0..kw / 2 {
            // Beats in which lane `w` holds a word of bytes 14..74.
            let conds: Vec<String> = (0..)
                .map(|b| (b, b * kw + 2 * w))
                .take_while(|&(_, o)| o < IP_LAST)
                .filter(|&(_, o)| o >= IP_FIRST)
                .map(|(b, o)| format!("(bidx == 16'd{b} && 7'd{o} < hend)"))
                .collect();
            let (a, h) = (16 * w, 16 * w + 15);
            if conds.is_empty() {
                v.push_str(&format!("assign tw[{h}:{a}] = 16'd0;\n"));
            } else {
                v.push_str(&format!(
                    "assign tw[{h}:{a}] = ({c}) ? tdata[{h}:{a}] : 16'd0;\n",
                    c = conds.join(" || ")
                ));
            }
        }
        Verilog::Custom(v)
    }
}

/// The sum of the big-endian 16-bit words of a beat (word `w` = byte `2w` · 256 + byte
/// `2w + 1`), in a balanced adder tree: the second stage of the ingress checksums, fed
/// from a register so that masking and adding are in different cycles.
#[derive(LogicBlock, Default)]
pub struct WordSum<const DW: usize> {
    /// The masked beat.
    pub tw: Signal<In, Bits<DW>>,
    /// The sum (not folded).
    pub sum: Signal<Out, Bits<32>>,
}

impl<const DW: usize> Logic for WordSum<DW> {
    fn update(&mut self) {
        let mut s = 0u64;
        for w in 0..DW / 16 {
            let hi = self.tw.val().get_bits::<8>(16 * w).index() as u64;
            let lo = self.tw.val().get_bits::<8>(16 * w + 8).index() as u64;
            s += hi << 8 | lo;
        }
        self.sum.next = (s & 0xffff_ffff).into();
    }
    fn connect(&mut self) {
        self.sum.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        let mut terms = Vec::new();
        for w in 0..DW / 16 {
            let (a, b) = (16 * w, 16 * w + 8);
            v.push_str(&format!(
                "wire [31:0] t{w} = {{16'd0, tw[{ah}:{a}], tw[{bh}:{b}]}};\n",
                ah = a + 7,
                bh = b + 7
            ));
            terms.push(format!("t{w}"));
        }
        let mut level = 0;
        while terms.len() > 1 {
            let mut next = Vec::new();
            for (i, pair) in terms.chunks(2).enumerate() {
                if let [x, y] = pair {
                    let n = format!("s{level}_{i}");
                    v.push_str(&format!("wire [31:0] {n} = {x} + {y};\n"));
                    next.push(n);
                } else {
                    next.push(pair[0].clone());
                }
            }
            terms = next;
            level += 1;
        }
        v.push_str(&format!("assign sum = {};\n", terms[0]));
        Verilog::Custom(v)
    }
}
