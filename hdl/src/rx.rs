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
//!
//! Logic depth (at most 4 LUT levels per path after yosys `synth_xilinx` on every
//! configuration): every decision taken in the cycle of a beat is made from the beat's
//! own signals and flags registered a beat ahead (a one-hot beat index, the payload-write
//! phase, the gearbox chunk as a one-hot, "the frame has used its rows", the byte budget
//! left before `max_frame` as "negative" / "under one beat" flags and a bit index into
//! `tkeep`, the UDP and IPv4-header byte masks of the next beat); no counter is compared
//! in the beat's cycle except the room check, one subtractor's sign. The payload write to
//! the row buffer is registered (it lands a cycle after its beat, long before the frame
//! can be committed and read); the descriptor's length, first row and the UDP pseudo
//! header are taken from registers the cycle after `tlast`, when the checksum totals are
//! complete, and the verdicts are compared without folding adders a cycle later, when the
//! descriptor is written (tlast + 2, as before). Ports and cycle-level behaviour are
//! unchanged.

use crate::layout::{HdrWindow, RxDesc};
use crate::parse::PARSE_W;
use crate::ram::{FaninRam, ADDR_W};
use rust_hdl::prelude::*;

/// Width of an ingress descriptor: 640-bit capture (bits 639:0), 16-bit length (655:640),
/// 16-bit first row (671:656). (The checksum verdicts are a cycle later than the rest and
/// sit beside the RAM, in [`OkFlags`].)
pub const DESC_W: usize = PARSE_W + 32;
/// Descriptor FIFO depth (frames buffered per port).
pub const DESC_DEPTH: usize = 8;

/// Beats that hold the 80-byte parser capture at `DW` bits per beat.
fn cap_beats(dw: usize) -> usize {
    PARSE_W.div_ceil(dw)
}

/// Words (16-bit) per slot of a masked checksum beat: the masking stage adds groups of
/// this many words so that the per-beat sum has at most 8 slots (a 3-level adder tree).
fn ck_group(kw: usize) -> usize {
    (kw / 2 / 8).max(1)
}

/// One ingress port.
#[derive(LogicBlock)]
pub struct Rx<const DW: usize, const KW: usize, const WB: usize> {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous reset.
    pub rst: Signal<In, bool>,
    /// AXI-Stream data.
    pub tdata: Signal<In, Bits<DW>>,
    /// AXI-Stream byte enables, contiguous from byte 0 in every beat (the byte count and
    /// the `max_frame` check read `tkeep` as a thermometer code).
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
    /// The fanin header's contributor bitmap in `d_hdr` (for the engine's per-port
    /// population count).
    pub d_bitmap: Signal<Out, Bits<64>>,
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
    /// `max_frame`, 17 bits (the byte budget's reload value).
    c_maxlen17: Constant<Bits<17>>,
    /// Reset value of `wx`: `-(c_rows - c_maxrows + 1)`.
    c_wx0: Constant<Bits<16>>,
    /// The sign bit of `wx - rdrow` taken modulo twice a power of two above `2·c_rows`.
    c_sgn: Constant<Bits<16>>,
    /// `c_maxrows - 1`.
    c_mrm1: Constant<Bits<16>>,
    /// Valid bits of the one-hot beat index (`cap_beats + 1`).
    c_bmask: Constant<Bits<16>>,
    /// The beat-index bit "past the capture" (sticky).
    c_bpast: Constant<Bits<16>>,
    /// The beat-index bit of the last beat before the payload (`512 / DW - 1`).
    c_bhb: Constant<Bits<16>>,
    /// Valid bits of the one-hot gearbox chunk.
    c_cmask: Constant<Bits<32>>,
    /// The last gearbox chunk.
    c_clast: Constant<Bits<32>>,
    /// log2(KW): `rem >> c_k` is the byte budget in whole beats.
    c_k: Constant<Bits<17>>,
    data: FaninRam<WB>,
    desc: FaninRam<DESC_W>,
    rep: Repeat<DW, WB>,
    in_frame: DFF<bool>,
    /// One-hot index of the current beat in the capture (bit 0: first beat, i.e. not
    /// `in_frame`; bit `cap_beats`: past the capture, sticky).
    bo: DFF<Bits<16>>,
    /// The current beat lies in the payload (beat index >= 512 / DW, in a frame).
    ph: DFF<bool>,
    drop: DFF<bool>,
    /// The frame has used `c_maxrows` rows (`wrow - row0 >= c_maxrows`).
    full: DFF<bool>,
    /// `wrow - row0` within a frame.
    nrow: DFF<Bits<16>>,
    /// One-hot gearbox chunk (bit `k`: the next payload beat goes to chunk `k`).
    ch: DFF<Bits<32>>,
    wrow: DFF<Bits<16>>,
    row0: DFF<Bits<16>>,
    /// `wrow - (c_rows - c_maxrows + 1)`, kept beside `wrow` for the room check.
    wx: DFF<Bits<16>>,
    /// `row0 - (c_rows - c_maxrows + 1)`.
    r0x: DFF<Bits<16>>,
    rdrow: DFF<Bits<16>>,
    /// Byte budget: `max_frame` minus the bytes of the frame so far (17-bit signed).
    rem: DFF<Bits<17>>,
    /// `rem < 0`.
    neg: DFF<bool>,
    /// `0 <= rem < KW`.
    hz: DFF<bool>,
    dw: DFF<Bits<4>>,
    dwq: DFF<Bits<4>>,
    dr: DFF<Bits<4>>,
    /// Descriptors buffered: `dw - dr`, kept as a register (one LUT from `d_pop`).
    occ: DFF<Bits<4>>,
    popped: DFF<bool>,
    usum: DFF<Bits<32>>,
    isum: DFF<Bits<32>>,
    s1_v: DFF<bool>,
    s1_first: DFF<bool>,
    s1_us: DFF<Bits<DW>>,
    s1_is: DFF<Bits<DW>>,
    /// The UDP and IPv4 byte masks of the beat before (applied to `wq_data`, the beat
    /// registered).
    umk: DFF<Bits<KW>>,
    imk: DFF<Bits<KW>>,
    s0_v: DFF<bool>,
    s0_first: DFF<bool>,
    /// UDP bytes of the current beat (after the beat holding the UDP length).
    um: DFF<Bits<KW>>,
    /// UDP bytes left from the start of the current beat (17-bit signed).
    ur: DFF<Bits<17>>,
    /// IPv4-header words of the current beat (after the beat holding byte 14).
    im: DFF<Bits<32>>,
    dfl: DescRoom,
    kc: KeepCount<KW>,
    /// The capture register (`hc.hdr`).
    hc: HdrCap<DW>,
    usm: UdpMask<DW, KW>,
    ums: MaskSum<DW, KW>,
    ism: IpMask<DW, KW>,
    ims: MaskSum<DW, KW>,
    uws: CkTotal<DW>,
    iws: CkTotal<DW>,
    pend_a: DFF<bool>,
    pend: DFF<bool>,
    pa_row: DFF<Bits<16>>,
    /// The descriptor register (fields taken the cycle after `tlast`) and the RAM's
    /// write word.
    p_desc: DescReg,
    p_utot: DFF<Bits<32>>,
    p_itot: DFF<Bits<32>>,
    /// The frame's UDP checksum field is 0 (taken beside `p_utot`).
    p_uck0: DFF<bool>,
    /// A descriptor was written the cycle before (its UDP verdict is written now).
    pend_c: DFF<bool>,
    /// The write pointer of the cycle before (the entry `pend_c` completes).
    dwl: DFF<Bits<4>>,
    /// The UDP and IPv4 checksum verdicts of the FIFO entries.
    oku: OkFlags,
    oki: OkFlags,
    wq_we: DFF<Bits<32>>,
    wq_addr: DFF<Bits<16>>,
    wq_data: DFF<Bits<DW>>,
    uok: Signal<Local, bool>,
    iok: Signal<Local, bool>,
    h1: Signal<Local, bool>,
    rbase: Signal<Local, Bits<17>>,
    tlong: Signal<Local, bool>,
    discard: Signal<Local, bool>,
    pw: Signal<Local, bool>,
    cwrap: Signal<Local, bool>,
    cnz: Signal<Local, bool>,
    acc: Signal<Local, bool>,
    room: Signal<Local, bool>,
    dlen: Signal<Local, Bits<16>>,
}

impl<const DW: usize, const KW: usize, const WB: usize> Rx<DW, KW, WB> {
    /// An ingress port buffering `rows` payload rows; frames above `max_frame` bytes are dropped.
    pub fn new(rows: usize, max_frame: usize) -> Self {
        let wbb = WB / 8;
        let maxrows = (max_frame.saturating_sub(64)).div_ceil(wbb) + 1;
        let chunks = WB / DW;
        let cb = cap_beats(DW);
        let hb = 512 / DW;
        assert!(KW == DW / 8 && KW.is_power_of_two() && (8..=64).contains(&KW));
        assert!((1..=32).contains(&chunks) && WB % DW == 0 && cb < 16 && hb >= 1);
        // The room check works modulo 2^(sgn+1) on the invariant 0 <= wrow - rdrow <= rows.
        assert!(
            maxrows <= rows && rows <= 1 << 14,
            "rows {rows}, maxrows {maxrows}"
        );
        // The byte budget after the first beat is at least one whole beat.
        assert!((2 * KW..=30000).contains(&max_frame));
        let sgn = (2 * rows).next_power_of_two().trailing_zeros();
        let k16 = |v: usize| Constant::new((v as u64 & 0xffff).into());
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
            d_bitmap: Default::default(),
            d_len: Default::default(),
            d_row: Default::default(),
            d_udp_ok: Default::default(),
            d_ip_ok: Default::default(),
            r_addr: Default::default(),
            r_data: Default::default(),
            rel: Default::default(),
            rel_row: Default::default(),
            bad: Default::default(),
            c_rows: k16(rows),
            c_maxrows: k16(maxrows),
            c_maxlen: k16(max_frame),
            c_maxlen17: Constant::new((max_frame as u64).into()),
            c_wx0: k16(0x1_0000 - (rows - maxrows + 1)),
            c_sgn: k16(1 << sgn),
            c_mrm1: k16(maxrows - 1),
            c_bmask: k16((1 << (cb + 1)) - 1),
            c_bpast: k16(1 << cb),
            c_bhb: k16(1 << (hb - 1)),
            c_cmask: Constant::new((((1u64 << chunks) - 1) & 0xffff_ffff).into()),
            c_clast: Constant::new((1u64 << (chunks - 1)).into()),
            c_k: Constant::new((KW.trailing_zeros() as u64).into()),
            data: FaninRam::new(rows, chunks),
            desc: FaninRam::new(DESC_DEPTH, 1),
            rep: Default::default(),
            in_frame: Default::default(),
            bo: Default::default(),
            ph: Default::default(),
            drop: Default::default(),
            full: Default::default(),
            nrow: Default::default(),
            ch: Default::default(),
            wrow: Default::default(),
            row0: Default::default(),
            wx: Default::default(),
            r0x: Default::default(),
            rdrow: Default::default(),
            rem: Default::default(),
            neg: Default::default(),
            hz: Default::default(),
            dw: Default::default(),
            dwq: Default::default(),
            dr: Default::default(),
            occ: Default::default(),
            popped: Default::default(),
            usum: Default::default(),
            isum: Default::default(),
            s1_v: Default::default(),
            s1_first: Default::default(),
            s1_us: Default::default(),
            s1_is: Default::default(),
            umk: Default::default(),
            imk: Default::default(),
            s0_v: Default::default(),
            s0_first: Default::default(),
            um: Default::default(),
            ur: Default::default(),
            im: Default::default(),
            dfl: Default::default(),
            kc: Default::default(),
            hc: Default::default(),
            usm: Default::default(),
            ums: Default::default(),
            ism: Default::default(),
            ims: Default::default(),
            uws: Default::default(),
            iws: Default::default(),
            pend_a: Default::default(),
            pend: Default::default(),
            pa_row: Default::default(),
            p_desc: Default::default(),
            p_utot: Default::default(),
            p_itot: Default::default(),
            p_uck0: Default::default(),
            pend_c: Default::default(),
            dwl: Default::default(),
            oku: Default::default(),
            oki: Default::default(),
            wq_we: Default::default(),
            wq_addr: Default::default(),
            wq_data: Default::default(),
            uok: Default::default(),
            iok: Default::default(),
            h1: Default::default(),
            rbase: Default::default(),
            tlong: Default::default(),
            discard: Default::default(),
            pw: Default::default(),
            cwrap: Default::default(),
            cnz: Default::default(),
            acc: Default::default(),
            room: Default::default(),
            dlen: Default::default(),
        }
    }
}

impl<const DW: usize, const KW: usize, const WB: usize> Logic for Rx<DW, KW, WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, in_frame, bo, ph, drop, full, nrow, ch, wrow, row0, wx, r0x, rdrow, rem,
            neg, hz, dw, dwq, dr, occ, popped, usum, isum, s1_v, s1_first, s1_us, s1_is, umk, imk,
            s0_v, s0_first, um, ur, im, pend_a, pend, pa_row, p_utot, p_itot, p_uck0, pend_c, dwl,
            wq_we, wq_addr, wq_data
        );
        self.data.clock.next = self.clock.val();
        self.desc.clock.next = self.clock.val();
        self.oku.clock.next = self.clock.val();
        self.oki.clock.next = self.clock.val();
        // Accept a new frame only with room for a maximum frame and a descriptor slot
        // (`dfl`: descriptors buffered and in the pipeline leave one free).
        // Rows: `wrow - rdrow + c_maxrows <= c_rows`. As `0 <= wrow - rdrow <= c_rows`
        // always holds, that is the sign of `wx - rdrow` (`wx = wrow - (c_rows -
        // c_maxrows + 1)`) in a modulus above twice `c_rows`: one subtractor.
        self.room.next =
            (((self.wx.q.val() - self.rdrow.q.val()) & self.c_sgn.val()) != 0) & self.dfl.ok.val();
        self.tready.next = self.in_frame.q.val() | self.room.val();
        self.acc.next = self.tvalid.val() & self.tready.val();
        // Leaves, fed only by ports and registers.
        self.dfl.occ.next = self.occ.q.val();
        self.dfl.pend_a.next = self.pend_a.q.val();
        self.dfl.pend.next = self.pend.q.val();
        self.kc.tkeep.next = self.tkeep.val();
        self.kc.rem.next = self.rem.q.val();
        // The capture register lives in its leaf (`hc`).
        self.hc.clock.next = self.clock.val();
        self.hc.en.next = self.acc.val();
        self.hc.tdata.next = self.tdata.val();
        self.hc.bo.next = self.bo.q.val();
        self.hc.in_frame.next = self.in_frame.q.val();
        self.usm.tdata.next = self.tdata.val();
        self.usm.bo.next = self.bo.q.val();
        self.usm.um.next = self.um.q.val();
        self.usm.ur.next = self.ur.q.val();
        self.ums.td.next = self.wq_data.q.val();
        self.ums.mk.next = self.umk.q.val();
        self.ism.tdata.next = self.tdata.val();
        self.ism.bo.next = self.bo.q.val();
        self.ism.hdr.next = self.hc.hdr.val();
        self.ism.im.next = self.im.q.val();
        self.ims.td.next = self.wq_data.q.val();
        self.ims.mk.next = self.imk.q.val();
        self.uws.tw.next = self.s1_us.q.val();
        self.uws.acc.next = self.usum.q.val();
        self.uws.first.next = self.s1_first.q.val();
        self.uws.hdr.next = self.p_desc.hq.val();
        self.iws.tw.next = self.s1_is.q.val();
        self.iws.acc.next = self.isum.q.val();
        self.iws.first.next = self.s1_first.q.val();
        self.iws.hdr.next = self.hc.hdr.val();
        self.rep.a.next = self.wq_data.q.val();
        // A payload write happens on an accepted beat in the payload phase of a frame that
        // is not being dropped and has a row left.
        self.pw.next = self.ph.q.val() & !self.drop.q.val() & !self.full.q.val();
        self.cwrap.next = (self.ch.q.val() & self.c_clast.val()) != 0;
        self.cnz.next = !self.ch.q.val().get_bit(0);
        // Longer than `max_frame` with this beat: `nb > rem`, i.e. the budget is already
        // negative, or under a beat and `tkeep[rem mod KW]` is set (`kc.tsel`).
        self.tlong.next =
            self.in_frame.q.val() & (self.neg.q.val() | (self.hz.q.val() & self.kc.tsel.val()));
        self.discard.next = self.tuser.val() | self.drop.q.val() | self.tlong.val();
        // The budget in whole beats is 1 (it reaches 0 when this beat crosses a beat
        // boundary of it).
        self.h1.next = (self.rem.q.val() >> self.c_k.val()) == 1;
        if self.in_frame.q.val() {
            self.rbase.next = self.rem.q.val();
        } else {
            self.rbase.next = self.c_maxlen17.val();
        }
        // UDP checksum: one's-complement sum of the big-endian words of bytes
        // 34 .. 34 + udp_len (odd length: the last byte padded with zero), plus the pseudo
        // header. IPv4 header checksum: the words of bytes 14 .. 14 + 4·IHL. Each beat's
        // byte masks are registered first (`umk`, `imk`: on the beat holding the UDP length
        // or the IHL they are compares against it, too deep to add after), applied to the
        // registered beat (`wq_data`) and grouped the cycle after (`ums`, `ims` ->
        // `s1_us`, `s1_is`), then summed and accumulated.
        if self.s1_v.q.val() {
            self.usum.d.next = self.uws.tot.val();
            self.isum.d.next = self.iws.tot.val();
        }
        self.s0_v.d.next = self.acc.val();
        self.s0_first.d.next = !self.in_frame.q.val();
        self.s1_v.d.next = self.s0_v.q.val();
        self.s1_first.d.next = self.s0_first.q.val();
        self.umk.d.next = self.usm.mk.val();
        self.imk.d.next = self.ism.mk.val();
        self.s1_us.d.next = self.ums.gs.val();
        self.s1_is.d.next = self.ims.gs.val();
        // The verdicts are taken three cycles after tlast from the registered totals, a
        // cycle after the descriptor's write (into `oku`, `oki`, beside the RAM). Two folds
        // of a 32-bit sum `x` give 0xffff exactly
        // when `lo + hi` is 0xffff or 0x1fffe (`lo`, `hi`: its halves), i.e. when
        // `lo ^ hi` or `lo & hi` is 0xffff; the second needs `x >= 0xffff0000`, beyond
        // any sum of a frame of at most 30000 bytes (`new` asserts `max_frame`; longer
        // frames are discarded), so the check is `lo ^ hi == 0xffff`: no adder.
        self.uok.next = (((self.p_utot.q.val() & 0xffff) ^ (self.p_utot.q.val() >> 16)) == 0xffff)
            | self.p_uck0.q.val();
        self.iok.next = ((self.p_itot.q.val() & 0xffff) ^ (self.p_itot.q.val() >> 16)) == 0xffff;
        // Payload gearbox write, registered: the row, the chunk enables and the beat land
        // in the row buffer a cycle after the beat (each chunk takes its copy of the beat).
        self.wq_addr.d.next = self.wrow.q.val();
        self.wq_data.d.next = self.tdata.val();
        self.wq_we.d.next = 0.into();
        if self.acc.val() & self.pw.val() {
            self.wq_we.d.next = self.ch.q.val();
        }
        self.data.waddr.next = bit_cast::<ADDR_W, 16>(self.wq_addr.q.val());
        self.data.wdata.next = self.rep.y.val();
        self.data.we.next = self.wq_we.q.val();
        self.desc.waddr.next = bit_cast::<ADDR_W, 4>(self.dw.q.val());
        self.desc.wdata.next = self.p_desc.wdata.val();
        self.desc.we.next = bit_cast::<32, 1>(self.pend.q.val().into());
        // Descriptor pipeline: tlast (A: commit) -> +1 (fields from the registers the last
        // beat wrote: capture, byte budget, first row; totals incl. the last beat and, for
        // UDP, the pseudo header from the capture) -> +2 (verdicts, write).
        self.pend_a.d.next = self.acc.val() & self.tlast.val() & !self.discard.val();
        self.pend.d.next = self.pend_a.q.val();
        self.pa_row.d.next = self.row0.q.val();
        // (The descriptor register loads only when a descriptor is one cycle from its write:
        // it is read by nothing else.)
        self.dlen.next = self.c_maxlen.val() - bit_cast::<16, 17>(self.rem.q.val());
        self.p_desc.clock.next = self.clock.val();
        self.p_desc.en.next = self.pend_a.q.val();
        self.p_desc.hdr.next = self.hc.hdr.val();
        self.p_desc.len.next = self.dlen.val();
        self.p_desc.row.next = self.pa_row.q.val();
        // The totals of the last beat are ready two cycles after tlast, a cycle after the
        // capture may have started on the next frame: the UDP pseudo header comes from the
        // descriptor register (this frame's capture from `pend_a` on), and so does
        // `p_uck0`, taken before the register can reload.
        self.p_utot.d.next = self.uws.ptot.val();
        self.p_itot.d.next = self.iws.tot.val();
        self.p_uck0.d.next = self.p_desc.uck.val() == 0;
        self.pend_c.d.next = self.pend.q.val();
        self.dwl.d.next = self.dw.q.val();
        self.oku.we.next = self.pend_c.q.val();
        self.oku.waddr.next = self.dwl.q.val();
        self.oku.wd.next = self.uok.val();
        self.oki.we.next = self.pend_c.q.val();
        self.oki.waddr.next = self.dwl.q.val();
        self.oki.wd.next = self.iok.val();
        if self.pend.q.val() {
            self.dw.d.next = self.dw.q.val() + 1;
        }
        self.bad.next = self.acc.val() & self.tlast.val() & self.discard.val();
        if self.acc.val() {
            self.in_frame.d.next = !self.tlast.val();
            // Byte budget: `nb` bytes of this beat (`max_frame - nb` on a first beat).
            self.rem.d.next = self.rbase.val() - bit_cast::<17, 8>(self.kc.nb.val());
            if self.in_frame.q.val() {
                self.neg.d.next = self.neg.q.val() | (self.hz.q.val() & self.kc.tsel.val());
                self.hz.d.next =
                    (self.hz.q.val() & !self.kc.tsel.val()) | (self.h1.val() & self.kc.tsel.val());
            } else {
                self.neg.d.next = false;
                self.hz.d.next = false;
            }
            self.um.d.next = self.usm.um_n.val();
            self.ur.d.next = self.usm.ur_n.val();
            self.im.d.next = self.ism.im_n.val();
            if self.tlast.val() {
                self.bo.d.next = 1.into();
                self.ph.d.next = false;
                self.drop.d.next = false;
                self.full.d.next = false;
                self.nrow.d.next = 0.into();
                self.ch.d.next = 1.into();
                self.im.d.next = 0.into();
                if self.discard.val() {
                    // Discard: rewind the payload write pointer.
                    self.wrow.d.next = self.row0.q.val();
                    self.wx.d.next = self.r0x.q.val();
                } else if self.pw.val() | self.cnz.val() {
                    // Commit: the next frame starts on a fresh row.
                    self.wrow.d.next = self.wrow.q.val() + 1;
                    self.row0.d.next = self.wrow.q.val() + 1;
                    self.wx.d.next = self.wx.q.val() + 1;
                    self.r0x.d.next = self.wx.q.val() + 1;
                } else {
                    self.row0.d.next = self.wrow.q.val();
                    self.r0x.d.next = self.wx.q.val();
                }
            } else {
                self.bo.d.next = ((self.bo.q.val() << 1) | (self.bo.q.val() & self.c_bpast.val()))
                    & self.c_bmask.val();
                self.ph.d.next = self.ph.q.val() | ((self.bo.q.val() & self.c_bhb.val()) != 0);
                if self.ph.q.val() & !self.drop.q.val() & self.full.q.val() {
                    self.drop.d.next = true;
                }
                if self.pw.val() {
                    if self.cwrap.val() {
                        self.ch.d.next = 1.into();
                        self.wrow.d.next = self.wrow.q.val() + 1;
                        self.wx.d.next = self.wx.q.val() + 1;
                        self.nrow.d.next = self.nrow.q.val() + 1;
                        self.full.d.next = self.nrow.q.val() == self.c_mrm1.val();
                    } else {
                        self.ch.d.next = (self.ch.q.val() << 1) & self.c_cmask.val();
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
        if self.pend.q.val() & !self.d_pop.val() {
            self.occ.d.next = self.occ.q.val() + 1;
        } else if !self.pend.q.val() & self.d_pop.val() {
            self.occ.d.next = self.occ.q.val() - 1;
        }
        self.d_hdr.next = self.desc.rdata.val().get_value_hdr();
        self.d_bitmap.next = self.d_hdr.val().get_value_bitmap();
        self.d_len.next = self.desc.rdata.val().get_value_len();
        self.d_row.next = self.desc.rdata.val().get_value_row0();
        // The verdicts of the head: written the cycle before `d_valid` can first rise (a
        // descriptor is visible two cycles after its write); read at `dr`, which equals
        // the RAM's registered read address whenever `d_valid` is set.
        self.oku.raddr.next = self.dr.q.val();
        self.oki.raddr.next = self.dr.q.val();
        self.d_udp_ok.next = self.oku.rd.val();
        self.d_ip_ok.next = self.oki.rd.val();
        self.data.raddr.next = bit_cast::<ADDR_W, 16>(self.r_addr.val());
        self.r_data.next = self.data.rdata.val();
        if self.rel.val() {
            self.rdrow.d.next = self.rel_row.val();
        }
        if self.rst.val() {
            self.in_frame.d.next = false;
            self.bo.d.next = 1.into();
            self.ph.d.next = false;
            self.drop.d.next = false;
            self.full.d.next = false;
            self.nrow.d.next = 0.into();
            self.ch.d.next = 1.into();
            self.im.d.next = 0.into();
            self.wrow.d.next = 0.into();
            self.row0.d.next = 0.into();
            self.wx.d.next = self.c_wx0.val();
            self.r0x.d.next = self.c_wx0.val();
            self.rdrow.d.next = 0.into();
            self.dw.d.next = 0.into();
            self.dr.d.next = 0.into();
            self.occ.d.next = 0.into();
            self.pend.d.next = false;
            self.pend_a.d.next = false;
            self.pend_c.d.next = false;
            self.s0_v.d.next = false;
            self.s1_v.d.next = false;
        }
    }
}

/// A Verilog expression for `x > c` on the `n`-bit unsigned `x` (a signal name; bits
/// `x[n-1:0]`) against a constant, as plain logic (no comparator cell: yosys would map one
/// to a carry chain with a LUT level per operand bit group).
fn gt_const(x: &str, n: usize, c: usize) -> String {
    // x > c over bits i..0: if c[i] is set, x[i] and the rest; else x[i] or the rest.
    fn rec(x: &str, i: usize, c: usize) -> Option<String> {
        // None: false.
        let low = if i == 0 { None } else { rec(x, i - 1, c) };
        if c >> i & 1 == 1 {
            low.map(|l| format!("({x}[{i}] & {l})"))
        } else {
            Some(match low {
                Some(l) => format!("({x}[{i}] | {l})"),
                None => format!("{x}[{i}]"),
            })
        }
    }
    if c >> n != 0 {
        return "1'b0".into();
    }
    rec(x, n - 1, c).unwrap_or_else(|| "1'b0".into())
}

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
    /// The registered capture's UDP checksum field (bytes 40, 41: bits 335:320).
    pub uck: Signal<Out, Bits<16>>,
    /// The registered capture.
    pub hq: Signal<Out, Bits<PARSE_W>>,
    /// The descriptor: the register and the verdicts.
    pub wdata: Signal<Out, Bits<DESC_W>>,
    /// The register (native model).
    q: Signal<Local, Bits<DESC_W>>,
}

impl Logic for DescReg {
    fn update(&mut self) {
        if self.clock.pos_edge() && self.en.val() {
            self.q.next = bit_cast::<DESC_W, PARSE_W>(self.hdr.val())
                | (bit_cast::<DESC_W, 16>(self.len.val()) << 640)
                | (bit_cast::<DESC_W, 16>(self.row.val()) << 656);
        }
        self.uck.next = self.q.val().get_bits::<16>(320);
        self.hq.next = self.q.val().get_bits::<PARSE_W>(0);
        self.wdata.next = self.q.val();
    }
    fn connect(&mut self) {
        self.uck.connect();
        self.hq.connect();
        self.wdata.connect();
        self.q.connect();
    }
    fn hdl(&self) -> Verilog {
        // `q` is declared by rust-hdl as a local of DESC_W bits.
        Verilog::Custom(format!(
            "initial begin\n    q = {DESC_W}'h0;\nend\n\n\
             always @(posedge clock) begin\n    if (en) q <= {{row, len, hdr}};\nend\n\n\
             assign uck = q[335:320];\n\
             assign hq = q[{hm}:0];\n\
             assign wdata = q;\n",
            hm = PARSE_W - 1,
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "desc".into(),
            clock: "clock".into(),
            inputs: vec!["en".into(), "hdr".into(), "len".into(), "row".into()],
            outputs: vec!["uck".into(), "hq".into()],
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

/// Appends to `v` the Verilog that adds groups of [`ck_group`] masked words `w{i}` into
/// the slots of `gs` (balanced, zero-extended).
fn group_sums(v: &mut String, kw: usize) {
    let g = ck_group(kw);
    let (nw, sw) = (kw / 2, 16 * g);
    let vb = 16 + g.trailing_zeros() as usize;
    for s in 0..nw / g {
        let mut terms: Vec<String> = (0..g)
            .map(|i| format!("{{{}'d0, w{}}}", vb - 16, s * g + i))
            .map(|t| {
                if vb == 16 {
                    t.replace("{0'd0, ", "{")
                } else {
                    t
                }
            })
            .collect();
        let mut lvl = 0;
        while terms.len() > 1 {
            let mut next = Vec::new();
            for (i, p) in terms.chunks(2).enumerate() {
                let n = format!("g{s}_{lvl}_{i}");
                v.push_str(&format!("wire [{}:0] {n} = {} + {};\n", vb - 1, p[0], p[1]));
                next.push(n);
            }
            terms = next;
            lvl += 1;
        }
        let lo = s * sw;
        v.push_str(&format!(
            "assign gs[{}:{lo}] = {};\n",
            lo + vb - 1,
            terms[0]
        ));
        if sw > vb {
            v.push_str(&format!(
                "assign gs[{}:{}] = {}'d0;\n",
                lo + sw - 1,
                lo + vb,
                sw - vb
            ));
        }
    }
}

/// The native counterpart of [`group_sums`]: `words` (masked, big-endian values) added in
/// groups into the slots of a `DW`-bit word.
fn group_sums_native<const DW: usize>(words: &[u64]) -> Bits<DW> {
    let g = ck_group(DW / 8);
    let mut out = Bits::<DW>::default();
    for (s, grp) in words.chunks(g).enumerate() {
        let sum: u64 = grp.iter().sum();
        out = out | (bit_cast::<DW, 32>(sum.into()) << bits::<16>((s * 16 * g) as u64));
    }
    out
}

/// The UDP byte mask of one beat: every byte inside `[34, 34 + udp_len)`. The UDP length
/// (bytes 38..39) is read from the beat that holds it (`bu = 38 / KW`; the bytes from 34 on
/// in that beat are masked against it directly); for every later beat the mask was
/// registered a beat ahead (`um`, from `ur`, the UDP bytes left at the start of the beat).
/// Beats before `bu` hold no byte from 34 on. The mask is registered and applied to the
/// registered beat by [`MaskSum`] (the compare against the length is three LUT levels).
#[derive(LogicBlock, Default)]
pub struct UdpMask<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// One-hot beat index.
    pub bo: Signal<In, Bits<16>>,
    /// UDP bytes of this beat (when past beat `bu`).
    pub um: Signal<In, Bits<KW>>,
    /// UDP bytes left from the start of this beat (when past beat `bu`; 17-bit signed).
    pub ur: Signal<In, Bits<17>>,
    /// This beat's UDP bytes (bit `j`: byte `j`).
    pub mk: Signal<Out, Bits<KW>>,
    /// `um` of the next beat.
    pub um_n: Signal<Out, Bits<KW>>,
    /// `ur` of the next beat.
    pub ur_n: Signal<Out, Bits<17>>,
}

impl<const DW: usize, const KW: usize> UdpMask<DW, KW> {
    /// (bu, c): the beat holding the UDP length and `(bu + 1)·KW - 34`, the bytes of
    /// that beat from 34 on (`ur` of the next beat is `udp_len - c`).
    fn params() -> (usize, usize) {
        let bu = 38 / KW;
        let c = (bu + 1) * KW - 34;
        assert!(c <= 32, "UDP bytes of the length beat: {c}");
        (bu, c)
    }
}

impl<const DW: usize, const KW: usize> Logic for UdpMask<DW, KW> {
    fn update(&mut self) {
        let (bu, c) = Self::params();
        let bo = self.bo.val().index();
        let cur = bo >> bu & 1 == 1;
        let past = bo & ((1 << (bu + 1)) - 1) == 0;
        let td = self.tdata.val();
        let byte = |j: usize| td.get_bits::<8>(8 * j).index();
        let ulen = byte(38 - bu * KW) << 8 | byte(39 - bu * KW);
        let um = self.um.val();
        let ur = self.ur.val().index();
        let (urneg, urlo) = (ur >> 16 & 1 == 1, ur & 0xffff);
        let mut mk = Bits::<KW>::default();
        let mut un = Bits::<KW>::default();
        for j in 0..KW {
            let ob = bu * KW + j;
            mk = mk.replace_bit(
                j,
                (cur && ob >= 34 && ulen > ob - 34) || (past && um.get_bit(j)),
            );
            let b = if cur {
                ulen > c + j
            } else {
                !urneg && urlo > KW + j
            };
            un = un.replace_bit(j, b);
        }
        self.mk.next = mk;
        self.um_n.next = un;
        let urn = if cur {
            (ulen as u64).wrapping_sub(c as u64)
        } else {
            (ur as u64).wrapping_sub(KW as u64)
        };
        self.ur_n.next = (urn & 0x1_ffff).into();
    }
    fn connect(&mut self) {
        self.mk.connect();
        self.um_n.connect();
        self.ur_n.connect();
    }
    fn hdl(&self) -> Verilog {
        let (bu, c) = Self::params();
        let kw = KW;
        let (b38, b39) = (8 * (38 - bu * kw), 8 * (39 - bu * kw));
        let mut v = format!(
            "wire [15:0] ulen = {{tdata[{h38}:{b38}], tdata[{h39}:{b39}]}};\n\
             wire cur = bo[{bu}];\n\
             wire past = ~|bo[{bu}:0];\n\
             wire [4:0] ulo = ulen[4:0];\n\
             wire chi = cur & (|ulen[15:5]);\n",
            h38 = b38 + 7,
            h39 = b39 + 7
        );
        for j in 0..kw {
            let ob = bu * kw + j;
            let same = if ob >= 34 {
                // `ulen > ob - 34` with `ob - 34 < c <= 32`: the high bits or the low five.
                format!("chi | (cur & {}) | ", gt_const("ulo", 5, ob - 34))
            } else {
                String::new()
            };
            v.push_str(&format!(
                "assign mk[{j}] = {same}(past & um[{j}]);\n\
                 assign um_n[{j}] = cur ? {cj} : (~ur[16] & {kj});\n",
                cj = gt_const("ulen", 16, c + j),
                kj = gt_const("ur", 16, kw + j)
            ));
        }
        v.push_str(&format!(
            "assign ur_n = cur ? ({{1'b0, ulen}} - 17'd{c}) : (ur - 17'd{kw});\n"
        ));
        Verilog::Custom(v)
    }
}

/// The checksum share of a beat (UDP or IPv4): its big-endian 16-bit words with every byte outside
/// the mask zeroed, added in groups of [`ck_group`] words (one slot each; [`CkTotal`] adds
/// the slots a cycle later).
#[derive(LogicBlock, Default)]
pub struct MaskSum<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub td: Signal<In, Bits<DW>>,
    /// The byte mask (bit `j`: byte `j`).
    pub mk: Signal<In, Bits<KW>>,
    /// Group sums of the masked words.
    pub gs: Signal<Out, Bits<DW>>,
}

impl<const DW: usize, const KW: usize> Logic for MaskSum<DW, KW> {
    fn update(&mut self) {
        let (td, mk) = (self.td.val(), self.mk.val());
        let byte = |j: usize| {
            if mk.get_bit(j) {
                td.get_bits::<8>(8 * j).index() as u64
            } else {
                0
            }
        };
        let words: Vec<u64> = (0..KW / 2)
            .map(|w| byte(2 * w) << 8 | byte(2 * w + 1))
            .collect();
        self.gs.next = group_sums_native::<DW>(&words);
    }
    fn connect(&mut self) {
        self.gs.connect();
    }
    fn hdl(&self) -> Verilog {
        let mut v = String::new();
        for j in 0..KW {
            v.push_str(&format!(
                "wire [7:0] b{j} = mk[{j}] ? td[{h}:{l}] : 8'd0;\n",
                h = 8 * j + 7,
                l = 8 * j
            ));
        }
        for w in 0..KW / 2 {
            v.push_str(&format!(
                "wire [15:0] w{w} = {{b{}, b{}}};\n",
                2 * w,
                2 * w + 1
            ));
        }
        group_sums(&mut v, KW);
        Verilog::Custom(v)
    }
}

/// One flag per descriptor-FIFO entry, written by address and read combinationally: the
/// UDP checksum verdicts, which are ready a cycle after the rest of the descriptor.
#[derive(LogicBlock, Default)]
pub struct OkFlags {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Write `wd` at `waddr`.
    pub we: Signal<In, bool>,
    /// Write address (the low bits index the [`DESC_DEPTH`] entries).
    pub waddr: Signal<In, Bits<4>>,
    /// Write data.
    pub wd: Signal<In, bool>,
    /// Read address.
    pub raddr: Signal<In, Bits<4>>,
    /// The flag at `raddr`.
    pub rd: Signal<Out, bool>,
    /// The flags (native model; a register in the Verilog).
    f: Signal<Local, Bits<DESC_DEPTH>>,
}

impl Logic for OkFlags {
    fn update(&mut self) {
        let m = DESC_DEPTH - 1;
        if self.clock.pos_edge() && self.we.val() {
            self.f.next = self
                .f
                .val()
                .replace_bit(self.waddr.val().index() & m, self.wd.val());
        }
        self.rd.next = self.f.val().get_bit(self.raddr.val().index() & m);
    }
    fn connect(&mut self) {
        self.rd.connect();
        self.f.connect();
    }
    fn hdl(&self) -> Verilog {
        let ab = DESC_DEPTH.trailing_zeros() as usize;
        // One write enable per flag, decoded from the address: `f[waddr] <= wd` becomes a
        // shifter with a subtractor in yosys (6 LUT levels on `alveo`).
        let writes: String = (0..DESC_DEPTH)
            .map(|i| {
                format!(
                    "    if (we && waddr[{h}:0] == {ab}'d{i}) f[{i}] <= wd;\n",
                    h = ab - 1
                )
            })
            .collect();
        Verilog::Custom(format!(
            "initial begin\n    f = {DESC_DEPTH}'h0;\nend\n\n\
             always @(posedge clock) begin\n{writes}end\n\n\
             assign rd = f[raddr[{h}:0]];\n",
            h = ab - 1
        ))
    }
    fn timing(&self) -> Vec<TimingInfo> {
        vec![TimingInfo {
            name: "flags".into(),
            clock: "clock".into(),
            inputs: vec!["we".into(), "waddr".into(), "wd".into()],
            outputs: vec![],
        }]
    }
}

/// First byte of the IPv4 header (after the 14-byte Ethernet header).
const IP_FIRST: usize = 14;
/// One past the last byte of the longest IPv4 header (IHL 15).
const IP_LAST: usize = IP_FIRST + 60;

/// Whether the word at byte offset `o` lies in an IPv4 header of IHL `ihl`:
/// `14 <= o < 14 + 4·ihl`, i.e. `ihl > (o - 14) / 4` (`None`: never).
fn ip_word_min(o: usize) -> Option<usize> {
    (IP_FIRST..IP_LAST).contains(&o).then(|| (o - IP_FIRST) / 4)
}

/// The IPv4 header byte mask of one beat: the bytes of `[14, 14 + 4·IHL)` (applied and
/// summed a cycle later by [`MaskSum`]). IHL is the low nibble of
/// byte 14: in the beat that holds it (`b14 = 14 / KW`) the words are masked against it
/// directly; for every later beat the word mask was registered a beat ahead (`im`, from
/// the capture's or this beat's byte 14 and the one-hot beat index). A beat before `b14`
/// has no word in the range.
#[derive(LogicBlock, Default)]
pub struct IpMask<const DW: usize, const KW: usize> {
    /// The beat (byte 0 in bits 7:0).
    pub tdata: Signal<In, Bits<DW>>,
    /// One-hot beat index.
    pub bo: Signal<In, Bits<16>>,
    /// Capture of the earlier beats.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// Header words of this beat (when past beat `b14`).
    pub im: Signal<In, Bits<32>>,
    /// This beat's IPv4-header bytes (bit `j`: byte `j`; at most 60 in a frame, so their
    /// words add up to at most 30 · 0xffff).
    pub mk: Signal<Out, Bits<KW>>,
    /// `im` of the next beat.
    pub im_n: Signal<Out, Bits<32>>,
}

impl<const DW: usize, const KW: usize> Logic for IpMask<DW, KW> {
    fn update(&mut self) {
        let kw = KW;
        let (b14, cb) = (IP_FIRST / kw, cap_beats(DW));
        let bo = self.bo.val().index();
        let cur = bo >> b14 & 1 == 1;
        let td = self.tdata.val();
        let tdi = td.get_bits::<4>(8 * (IP_FIRST % kw)).index();
        let hdi = self.hdr.val().get_bits::<4>(8 * IP_FIRST).index();
        let ihn = if cur { tdi } else { hdi };
        let im = self.im.val().index();
        let mut mk = Bits::<KW>::default();
        for w in 0..kw / 2 {
            let same = ip_word_min(b14 * kw + 2 * w).is_some_and(|c| cur && tdi > c);
            let m = same || im >> w & 1 == 1;
            mk = mk.replace_bit(2 * w, m).replace_bit(2 * w + 1, m);
        }
        self.mk.next = mk;
        let mut imn = 0u64;
        for w in 0..kw / 2 {
            for b in b14..cb.saturating_sub(1) {
                if let Some(c) = ip_word_min((b + 1) * kw + 2 * w) {
                    if bo >> b & 1 == 1 && ihn > c {
                        imn |= 1 << w;
                    }
                }
            }
        }
        self.im_n.next = imn.into();
    }
    fn connect(&mut self) {
        self.mk.connect();
        self.im_n.connect();
    }
    fn hdl(&self) -> Verilog {
        let kw = KW;
        let (b14, cb) = (IP_FIRST / kw, cap_beats(DW));
        let l14 = 8 * (IP_FIRST % kw);
        let h14 = 8 * IP_FIRST;
        let mut v = format!(
            "wire [3:0] tdi = tdata[{h}:{l14}];\n\
             wire [3:0] hdi = hdr[{hh}:{h14}];\n\
             wire cur = bo[{b14}];\n\
             wire [3:0] ihn = cur ? tdi : hdi;\n",
            h = l14 + 3,
            hh = h14 + 3
        );
        for w in 0..kw / 2 {
            let same = match ip_word_min(b14 * kw + 2 * w) {
                Some(c) => format!("(cur & {}) | ", gt_const("tdi", 4, c)),
                None => String::new(),
            };
            let nexts: Vec<String> = (b14..cb.saturating_sub(1))
                .filter_map(|b| {
                    ip_word_min((b + 1) * kw + 2 * w)
                        .map(|c| format!("(bo[{b}] & {})", gt_const("ihn", 4, c)))
                })
                .collect();
            let nexts = if nexts.is_empty() {
                "1'b0".to_string()
            } else {
                nexts.join(" | ")
            };
            v.push_str(&format!(
                "wire m{w} = {same}im[{w}];\n\
                 assign mk[{b}:{a}] = {{2{{m{w}}}}};\n\
                 assign im_n[{w}] = {nexts};\n",
                a = 2 * w,
                b = 2 * w + 1
            ));
        }
        if kw / 2 < 32 {
            v.push_str(&format!(
                "assign im_n[31:{}] = {}'d0;\n",
                kw / 2,
                32 - kw / 2
            ));
        }
        Verilog::Custom(v)
    }
}

/// The checksum totals of a beat a cycle after its masking: the slots of the masked beat
/// ([`ck_group`] words per slot, at most 8) added in a balanced tree, plus the sum of the
/// earlier beats (`acc`, unless this is a first beat): `tot`; and `ptot`, the same plus
/// the UDP pseudo header (17 + UDP length + the IPv4 addresses, bytes 26..33 of the
/// capture), for the total of a frame's last beat (the capture then holds every byte).
#[derive(LogicBlock, Default)]
pub struct CkTotal<const DW: usize> {
    /// The group sums of the masked beat.
    pub tw: Signal<In, Bits<DW>>,
    /// The sum of the frame's earlier beats.
    pub acc: Signal<In, Bits<32>>,
    /// The beat is a first beat (`acc` is not added).
    pub first: Signal<In, bool>,
    /// The capture (for the pseudo header).
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// The sum so far (not folded).
    pub tot: Signal<Out, Bits<32>>,
    /// `tot` plus the UDP pseudo header.
    pub ptot: Signal<Out, Bits<32>>,
}

impl<const DW: usize> Logic for CkTotal<DW> {
    fn update(&mut self) {
        let g = ck_group(DW / 8);
        let mut s = 0u64;
        for i in 0..DW / 16 / g {
            s += self.tw.val().get_bits::<32>(16 * g * i).index() as u64
                & ((1 << (16 + g.trailing_zeros())) - 1);
        }
        if !self.first.val() {
            s += self.acc.val().index() as u64;
        }
        let h = self.hdr.val();
        let w = |o: usize| {
            (h.get_bits::<8>(8 * o).index() << 8 | h.get_bits::<8>(8 * o + 8).index()) as u64
        };
        let p = 17 + w(38) + w(26) + w(28) + w(30) + w(32);
        self.tot.next = (s & 0xffff_ffff).into();
        self.ptot.next = ((s + p) & 0xffff_ffff).into();
    }
    fn connect(&mut self) {
        self.tot.connect();
        self.ptot.connect();
    }
    fn hdl(&self) -> Verilog {
        let g = ck_group(DW / 8);
        let vb = 16 + g.trailing_zeros() as usize;
        let mut v = String::new();
        let mut terms = Vec::new();
        for i in 0..DW / 16 / g {
            let lo = 16 * g * i;
            v.push_str(&format!(
                "wire [31:0] t{i} = {{{}'d0, tw[{}:{lo}]}};\n",
                32 - vb,
                lo + vb - 1
            ));
            terms.push(format!("t{i}"));
        }
        // `ptot` pairs the slots differently from `tot`, so that the two trees share no
        // adder (a shared one would be a separate multi-operand adder in series).
        let n = terms.len();
        let order: Vec<usize> = (0..n).step_by(2).chain((1..n).step_by(2)).collect();
        let tree = |ts: Vec<String>| -> String {
            let mut ts = ts;
            while ts.len() > 1 {
                ts = ts
                    .chunks(2)
                    .map(|p| match p {
                        [x, y] => format!("({x} + {y})"),
                        _ => p[0].clone(),
                    })
                    .collect();
            }
            ts.remove(0)
        };
        let w = |o: usize| {
            format!(
                "{{16'd0, hdr[{}:{}], hdr[{}:{}]}}",
                8 * o + 7,
                8 * o,
                8 * o + 15,
                8 * o + 8
            )
        };
        v.push_str(&format!(
            "wire [31:0] base = first ? 32'd0 : acc;\n\
             assign tot = base + {st};\n\
             assign ptot = (base + {sp}) + ((({ul} + 32'd17) + ({w26} + {w28})) + ({w30} + {w32}));\n",
            st = tree(terms.clone()),
            sp = tree(order.iter().map(|&i| terms[i].clone()).collect()),
            ul = w(38),
            w26 = w(26),
            w28 = w(28),
            w30 = w(30),
            w32 = w(32)
        ));
        Verilog::Custom(v)
    }
}

/// `WB / DW` copies of a beat side by side (each gearbox chunk of the row buffer takes
/// its own; the chunk enables pick the one written).
#[derive(LogicBlock, Default)]
pub struct Repeat<const DW: usize, const WB: usize> {
    /// The beat.
    pub a: Signal<In, Bits<DW>>,
    /// The copies.
    pub y: Signal<Out, Bits<WB>>,
}

impl<const DW: usize, const WB: usize> Logic for Repeat<DW, WB> {
    fn update(&mut self) {
        let mut y = Bits::<WB>::default();
        for c in 0..WB / DW {
            y = y | (bit_cast::<WB, DW>(self.a.val()) << bits::<16>((c * DW) as u64));
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        Verilog::Custom(format!("assign y = {{{}{{a}}}};\n", WB / DW))
    }
}
