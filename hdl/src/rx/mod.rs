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

mod checksum;
mod desc;
pub use checksum::{CkTotal, IpMask, MaskSum, OkFlags, PseudoSum, Repeat, UdpMask};
pub use desc::{DescReg, DescRoom, HdrCap, KeepCount};

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
    /// The UDP pseudo header's sum of the capture (registered in `psh`).
    pss: PseudoSum,
    /// The pseudo header's sum of the frame whose descriptor is loaded (taken with it).
    psh: DFF<Bits<32>>,
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
            pss: Default::default(),
            psh: Default::default(),
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
            s0_v, s0_first, um, ur, im, pend_a, pend, pa_row, psh, p_utot, p_itot, p_uck0, pend_c,
            dwl, wq_we, wq_addr, wq_data
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
        self.uws.psh.next = self.psh.q.val();
        self.iws.tw.next = self.s1_is.q.val();
        self.iws.acc.next = self.isum.q.val();
        self.iws.first.next = self.s1_first.q.val();
        self.iws.psh.next = 0.into();
        self.pss.hdr.next = self.hc.hdr.val();
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
        if self.pend_a.q.val() {
            self.psh.d.next = self.pss.s.val();
        }
        // The totals of the last beat are ready two cycles after tlast, a cycle after the
        // capture may have started on the next frame: the UDP pseudo header's sum is
        // registered with the descriptor (`psh`, this frame's capture from `pend_a` on; one
        // operand of the last total instead of six), and `p_uck0` comes from the
        // descriptor register, taken before it can reload.
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
