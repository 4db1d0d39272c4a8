//! The frame parser: Ethernet/IPv4/UDP classification and fanin header checks, exactly as
//! `fanin_proto::wire::frame::classify`, `Packet::new_checked` and `Repr::parse` decide.
//!
//! Input is the first 80 bytes of the frame (AXI-Stream byte order: byte 0 in bits 7:0),
//! the frame length, and the two checksum verdicts the ingress computes as the frame
//! streams in (IPv4 header checksum over IHL words, UDP checksum). The decisions use bytes
//! 0..64 (the L2-L4 + fanin header region); bytes 64..80 are captured but unused here.

use crate::core::states::Fields;
use crate::layout::NetHdr;
use crate::ram::ByteSwap;
use rust_hdl::prelude::*;

/// Bytes of the frame the parser sees.
pub const PARSE_BYTES: usize = 80;
/// Bits of the frame the parser sees.
pub const PARSE_W: usize = PARSE_BYTES * 8;

/// The parser's verdict on a frame (`Parser::kind`; `Switch::dispatch` up to the job
/// lookup).
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum FrameClass {
    /// Not IPv4 (dropped, `non_ip`).
    NonIp,
    /// An ARP request for the switch's address (answered, `arp_replies`).
    Arp,
    /// Malformed (dropped, `malformed`).
    Malformed,
    /// Valid IPv4 not addressed to the switch (forwarding table).
    Route,
    /// A well-formed fanin packet addressed to the switch.
    Fanin,
}

// The parser's element-count test (term 12) is written for this limit.
const _: () = assert!(fanin_proto::wire::MAX_WIRE_ELEMENTS == 0x8bd);

/// `c_terms` bits whose OR is `c_non_ip`.
pub const TERMS_NON_IP: u64 = 0x0001;
/// `c_terms` bits whose OR is `c_ip_bad`.
pub const TERMS_IP_BAD: u64 = 0x001e;
/// `c_terms` bits whose OR is `c_route`.
pub const TERMS_ROUTE: u64 = 0x0020;
/// `c_terms` bits whose OR is `c_bad`.
pub const TERMS_BAD: u64 = 0x01c0;
/// `c_terms` bits whose OR is `c_wire_bad`.
pub const TERMS_WIRE_BAD: u64 = 0x7c00;
/// `c_terms` bits whose AND is `c_arp`: bit 9, the request's length, type and fixed fields;
/// bit 15, its target address is the switch's (two terms, so that neither is deep).
pub const TERMS_ARP: u64 = 0x8200;

// The literals the parser (`arp_fixed`, the 42-byte minimum) and the engine (the reply's
// 60 bytes) compare and load, against `fanin_proto::wire::arp`.
const _: () = {
    assert!(fanin_proto::wire::arp::ARP_LEN == 42);
    assert!(fanin_proto::wire::arp::REPLY_LEN == 60);
    let f = fanin_proto::wire::arp::REQUEST_FIXED;
    let w = u64::from_be_bytes([f[2], f[3], f[4], f[5], f[6], f[7], f[8], f[9]]);
    assert!(w == 0x0001_0800_0604_0001);
    assert!(f[0] == 0x08 && f[1] == 0x06);
};

/// Combinational frame parser.
#[derive(LogicBlock, Default)]
pub struct Parser {
    /// First 80 frame bytes, byte 0 in bits 7:0.
    pub hdr: Signal<In, Bits<PARSE_W>>,
    /// Frame length in bytes.
    pub len: Signal<In, Bits<16>>,
    /// The switch's IPv4 address.
    pub me_ip: Signal<In, Bits<32>>,
    /// The switch's fanin UDP port.
    pub me_port: Signal<In, Bits<16>>,
    /// The UDP checksum is absent or correct (computed by the ingress over the whole datagram).
    pub udp_ok: Signal<In, bool>,
    /// The IPv4 header checksum over `4·IHL` bytes from byte 14 is correct (computed by the
    /// ingress, `Rx::d_ip_ok`). Used only for frames holding the whole IPv4 header with
    /// IHL >= 5; any other frame is malformed (or not IPv4) whatever its value.
    pub ip_ok: Signal<In, bool>,
    /// The verdict (the checks below through [`Classify`]).
    pub kind: Signal<Out, FrameClass>,
    /// Check: not IPv4 (or too short for Ethernet).
    pub c_non_ip: Signal<Out, bool>,
    /// Check: an ARP request for the switch's address (`fanin_proto::wire::arp::reply`
    /// answers it): at least 42 bytes, EtherType 0x0806, Ethernet/IPv4 types and lengths,
    /// operation 1, target address `me_ip`.
    pub c_arp: Signal<Out, bool>,
    /// Check: malformed IPv4 header (incl. the ingress checksum verdict).
    pub c_ip_bad: Signal<Out, bool>,
    /// Check: not addressed to the switch.
    pub c_route: Signal<Out, bool>,
    /// Check: not a well-formed UDP datagram to the fanin port (UDP, lengths, checksum,
    /// port).
    pub c_bad: Signal<Out, bool>,
    /// Check: the fanin header fails a check of its own (length, version, type, flags,
    /// element count, empty bitmap, the session types' own rules), all but the bitmap's
    /// population count.
    pub c_wire_bad: Signal<Out, bool>,
    /// The checks split into terms that each take a few LUT levels, for a core that
    /// registers them before ORing (`c_non_ip` = bit 0, `c_ip_bad` = OR of bits 1..=4,
    /// `c_route` = bit 5, `c_bad` = OR of bits 6..=8, `c_arp` = AND of bits 9 and 15,
    /// `c_wire_bad` = OR of bits 10..=14). See [`TERMS_IP_BAD`] and the other masks.
    pub c_terms: Signal<Out, Bits<16>>,
    /// Population counts of the bitmap's bytes (a nibble per byte, low nibble).
    pub c_pc: Signal<Out, Bits<64>>,
    /// The header's count byte (must equal the bitmap's population count).
    pub c_count: Signal<Out, Bits<8>>,
    cls: Classify,
    pchk: PopCheck,
    /// The fanin header's fields and the frame's source (`states::Fields`).
    pub f: Signal<Out, Fields>,
    /// Destination IPv4 (forwarding key).
    pub dst_ip: Signal<Out, Bits<32>>,
    src_mac: Signal<Local, Bits<48>>,
    src_ip: Signal<Local, Bits<32>>,
    src_port: Signal<Local, Bits<16>>,
    ptype: Signal<Local, Bits<8>>,
    flags: Signal<Local, Bits<8>>,
    elements: Signal<Local, Bits<16>>,
    block: Signal<Local, Bits<32>>,
    child: Signal<Local, Bits<8>>,
    bitmap: Signal<Local, Bits<64>>,
    swap: ByteSwap<PARSE_W>,
    be: Signal<Local, Bits<PARSE_W>>,
    ihl: Signal<Local, Bits<16>>,
    total: Signal<Local, Bits<16>>,
    iplen: Signal<Local, Bits<16>>,
    non_ip: Signal<Local, bool>,
    arp: Signal<Local, bool>,
    arp_tpa: Signal<Local, bool>,
    ip_bad0: Signal<Local, bool>,
    udp_cand: Signal<Local, bool>,
    bad0: Signal<Local, bool>,
    wire_bad0: Signal<Local, bool>,
    sess_bad: Signal<Local, bool>,
    terms: Signal<Local, Bits<16>>,
    ul_k: Signal<Local, Bits<16>>,
    ul_g: Signal<Local, Bits<16>>,
    pl_k: Signal<Local, Bits<16>>,
    pl_g: Signal<Local, Bits<16>>,
    udp_len_bad: Signal<Local, bool>,
    pl_bad: Signal<Local, bool>,
    pop: BytePop,
}

impl Logic for Parser {
    #[hdl_gen]
    fn update(&mut self) {
        // Network byte order view: frame byte `o` of an `n`-byte field sits at bit 640-8(o+n);
        // its fields are named once, in `layout::net`.
        self.swap.a.next = self.hdr.val();
        self.be.next = self.swap.y.val();
        self.src_mac.next = self.be.val().get_value_src_mac();
        self.ihl.next = bit_cast::<16, 4>(self.be.val().get_value_ip_ihl()) << 2;
        self.total.next = self.be.val().get_value_ip_total();
        self.src_ip.next = self.be.val().get_value_src_ip();
        self.dst_ip.next = self.be.val().get_value_dst_ip();
        self.src_port.next = self.be.val().get_value_src_port();
        self.iplen.next = self.len.val() - 14;
        // Ethernet: shorter than a header, or not IPv4.
        self.non_ip.next = (self.len.val() < 14) | (self.be.val().get_value_ethertype() != 0x0800);
        // ARP: a request (term 9; `wire::arp::REQUEST_FIXED`) for the switch's address
        // (term 15). Two terms, ANDed after their registers: one AND tree of the length
        // compare, the 80 constant bits and the 32-bit address compare measured 7 LUT levels.
        // (`len >= 42` as the high bits' OR and a 6-bit compare: no carry chain.)
        self.arp.next = (((self.len.val() & 0xffc0) != 0) | ((self.len.val() & 0x3f) >= 42))
            & (self.be.val().get_value_ethertype() == 0x0806)
            & (self.be.val().get_value_arp_fixed() == 0x0001_0800_0604_0001u64);
        self.arp_tpa.next = self.be.val().get_value_arp_tpa() == self.me_ip.val();
        // IPv4 header: the checksum over ihl*4 bytes comes from the ingress (`ip_ok`); the
        // length checks here reject every frame for which that verdict is not meaningful
        // (shorter than 14 + ihl*4 bytes, or ihl < 20). Terms 1..=4 of `c_terms`.
        self.ip_bad0.next = (self.len.val() < 34)
            | (self.be.val().get_value_ip_version() != 4)
            | (self.ihl.val() < 20)
            | !self.ip_ok.val();
        // Unfragmented UDP without options, and a UDP length that matches the IPv4 length
        // (terms 6..=8, with the checksum verdict and the port).
        self.udp_cand.next = (self.be.val().get_value_ip_proto() == 17)
            & (self.ihl.val() == 20)
            & !self.be.val().get_value_ip_mf()
            & (self.be.val().get_value_ip_frag() == 0);
        self.bad0.next = !self.udp_cand.val()
            | !self.udp_ok.val()
            | (self.be.val().get_value_dst_port() != self.me_port.val());
        // fanin header (Packet::new_checked, then Repr::parse, in that order).
        self.ptype.next = self.be.val().get_value_ptype();
        self.flags.next = self.be.val().get_value_flags();
        self.elements.next = self.be.val().get_value_elements();
        self.block.next = self.be.val().get_value_block();
        self.child.next = self.be.val().get_value_child();
        self.bitmap.next = self.be.val().get_value_bitmap();
        self.f.next.ptype = self.ptype.val();
        self.f.next.flags = self.flags.val();
        self.f.next.exponent = self.be.val().get_value_exponent();
        self.f.next.job = self.be.val().get_value_job();
        self.f.next.elements = self.elements.val();
        self.f.next.block = self.block.val();
        self.f.next.child = self.child.val();
        self.f.next.bitmap = self.bitmap.val();
        self.f.next.src_ip = self.src_ip.val();
        self.f.next.src_port = self.src_port.val();
        self.f.next.src_mac = self.src_mac.val();
        // The UDP length against the IPv4 length (term 8: udp_len + 20 == total) and the
        // fanin length against the element count (term 11: 4 * elements + 50 == total,
        // i.e. payload = 4 * elements + 22; modulo 2^16, which differs from the exact
        // comparison only for elements > 16378, rejected by term 12 anyway). Both are
        // carry-free equality tests, not a subtractor and a comparator: with the carries
        // `k` of `a + b`, `c = a ^ b ^ k`, so `k = a ^ b ^ c`; the sum is `c` exactly when
        // each bit's carry out, `maj(a, b, k) = (a & b) | ((a | b) & !c)`, is the next bit's
        // `k` (and `k_0 = 0`): a LUT level per bit pair and a 16-input OR. (Inline: a
        // sub-block fed and read in this block is a combinational loop to Verilator.)
        self.ul_k.next = self.be.val().get_value_udp_len() ^ 20 ^ self.total.val();
        self.ul_g.next = (self.be.val().get_value_udp_len() & 20)
            | ((self.be.val().get_value_udp_len() | 20) & !self.total.val());
        self.udp_len_bad.next = self.ul_k.val() != (self.ul_g.val() << 1);
        self.pl_k.next = (self.elements.val() << 2) ^ 50 ^ self.total.val();
        self.pl_g.next = ((self.elements.val() << 2) & 50)
            | (((self.elements.val() << 2) | 50) & !self.total.val());
        self.pl_bad.next = self.pl_k.val() != (self.pl_g.val() << 1);
        // Population count of the bitmap's bytes, compared with the count byte.
        self.pop.x.next = self.bitmap.val();
        // (terms 10..=12: the lengths, then the fields. The element count's limit is the
        // wire's, `MAX_WIRE_ELEMENTS` = 2237 = 0x8bd, as `Repr::parse` has it (a switch's own
        // lane count is PRED's `toolong`, after the job lookup), written as bit tests, not
        // a comparator: its carry chain put this term at 6 LUT levels on `alveo`.)
        self.wire_bad0.next = (self.be.val().get_value_version() != 1)
            | ((self.flags.val() & 0xe0) != 0)
            | ((self.elements.val() & 0xf000) != 0)
            | (self.elements.val().get_bit(11)
                & (((self.elements.val() & 0x0700) != 0)
                    | (self.elements.val().get_bit(7)
                        & (self.elements.val().get_bit(6)
                            | ((self.elements.val() & 0x003e) == 0x003e)))))
            | (self.bitmap.val() == 0);
        // The session types' own rules (term 13; `Repr::parse`, `BadSessionPacket`): a JOIN
        // names one rank (the count byte; a count that is not the bitmap's population is
        // malformed anyway), carries no elements and a non-zero nonce; an ACCEPT one rank
        // and one element (the nonce); a REFUSE no elements and a known reason.
        self.sess_bad.next = ((self.ptype.val() == 3)
            & ((self.be.val().get_value_count() != 1)
                | (self.elements.val() != 0)
                | (self.block.val() == 0)))
            | ((self.ptype.val() == 4)
                & ((self.be.val().get_value_count() != 1) | (self.elements.val() != 1)))
            | ((self.ptype.val() == 5)
                & ((self.elements.val() != 0)
                    | ((self.child.val() != 1) & (self.child.val() != 2))));
        self.terms.next = bit_cast::<16, 1>(self.non_ip.val().into())
            | (bit_cast::<16, 1>(self.ip_bad0.val().into()) << 1)
            | (bit_cast::<16, 1>((self.iplen.val() < self.ihl.val()).into()) << 2)
            | (bit_cast::<16, 1>((self.total.val() < self.ihl.val()).into()) << 3)
            | (bit_cast::<16, 1>((self.total.val() > self.iplen.val()).into()) << 4)
            | (bit_cast::<16, 1>((self.dst_ip.val() != self.me_ip.val()).into()) << 5)
            | (bit_cast::<16, 1>(self.bad0.val().into()) << 6)
            | (bit_cast::<16, 1>((self.total.val() < 28).into()) << 7)
            | (bit_cast::<16, 1>(self.udp_len_bad.val().into()) << 8)
            | (bit_cast::<16, 1>(self.arp.val().into()) << 9)
            | (bit_cast::<16, 1>(((self.total.val() >= 28) & (self.total.val() < 50)).into())
                << 10)
            | (bit_cast::<16, 1>(self.pl_bad.val().into()) << 11)
            | (bit_cast::<16, 1>(self.wire_bad0.val().into()) << 12)
            | (bit_cast::<16, 1>(self.sess_bad.val().into()) << 13)
            | (bit_cast::<16, 1>(((self.ptype.val() == 0) | (self.ptype.val() > 5)).into()) << 14)
            | (bit_cast::<16, 1>(self.arp_tpa.val().into()) << 15);
        self.c_terms.next = self.terms.val();
        self.c_non_ip.next = (self.terms.val() & 0x0001) != 0;
        self.c_arp.next = (self.terms.val() & 0x8200) == 0x8200;
        self.c_ip_bad.next = (self.terms.val() & 0x001e) != 0;
        self.c_route.next = (self.terms.val() & 0x0020) != 0;
        self.c_bad.next = (self.terms.val() & 0x01c0) != 0;
        self.c_wire_bad.next = (self.terms.val() & 0x7c00) != 0;
        self.c_pc.next = self.pop.pc.val();
        self.c_count.next = self.be.val().get_value_count();
        self.cls.non_ip.next = self.c_non_ip.val();
        self.cls.arp.next = self.c_arp.val();
        self.cls.ip_bad.next = self.c_ip_bad.val();
        self.cls.route.next = self.c_route.val();
        self.cls.bad.next = self.c_bad.val();
        self.cls.wire_bad.next = self.c_wire_bad.val();
        self.pchk.pc.next = self.c_pc.val();
        self.pchk.count.next = self.c_count.val();
        self.cls.pop_ok.next = self.pchk.ok.val();
        self.kind.next = self.cls.kind.val();
    }
}

/// The parser's verdict from its checks: the priority of `classify` (not IPv4, an ARP
/// request for the switch among those, malformed IPv4, routed, then the UDP/fanin checks
/// and the population count). A block of its own
/// so that the core can register the checks and classify from flip-flops.
#[derive(LogicBlock, Default)]
pub struct Classify {
    /// Not IPv4.
    pub non_ip: Signal<In, bool>,
    /// An ARP request for the switch (a frame that is not IPv4).
    pub arp: Signal<In, bool>,
    /// Malformed IPv4.
    pub ip_bad: Signal<In, bool>,
    /// Not addressed to the switch.
    pub route: Signal<In, bool>,
    /// UDP checks failed (not UDP, lengths, checksum, port).
    pub bad: Signal<In, bool>,
    /// fanin header checks failed (all but the population count).
    pub wire_bad: Signal<In, bool>,
    /// The count byte equals the bitmap's population count ([`PopCheck`]).
    pub pop_ok: Signal<In, bool>,
    /// The verdict.
    pub kind: Signal<Out, FrameClass>,
}

impl Logic for Classify {
    #[hdl_gen]
    fn update(&mut self) {
        if self.non_ip.val() & self.arp.val() {
            self.kind.next = FrameClass::Arp;
        } else if self.non_ip.val() {
            self.kind.next = FrameClass::NonIp;
        } else if self.ip_bad.val() {
            self.kind.next = FrameClass::Malformed;
        } else if self.route.val() {
            self.kind.next = FrameClass::Route;
        } else if self.bad.val() | self.wire_bad.val() | !self.pop_ok.val() {
            self.kind.next = FrameClass::Malformed;
        } else {
            self.kind.next = FrameClass::Fanin;
        }
    }
}

/// Per-byte population counts of a 64-bit word (SWAR; each byte's count in its low nibble).
#[derive(LogicBlock, Default)]
pub struct BytePop {
    /// The word.
    pub x: Signal<In, Bits<64>>,
    /// Per-byte counts, for `PopCheck::pc`.
    pub pc: Signal<Out, Bits<64>>,
    pc1: Signal<Local, Bits<64>>,
    pc2: Signal<Local, Bits<64>>,
}

impl Logic for BytePop {
    #[hdl_gen]
    fn update(&mut self) {
        self.pc1.next = self.x.val() - ((self.x.val() >> 1) & 0x5555_5555_5555_5555u64);
        self.pc2.next = (self.pc1.val() & 0x3333_3333_3333_3333u64)
            + ((self.pc1.val() >> 2) & 0x3333_3333_3333_3333u64);
        self.pc.next = (self.pc2.val() + (self.pc2.val() >> 4)) & 0x0f0f_0f0f_0f0f_0f0fu64;
    }
}

/// The count byte against the bitmap's population count, summed from per-byte counts (a
/// small adder tree).
#[derive(LogicBlock, Default)]
pub struct PopCheck {
    /// Per-byte population counts of the bitmap (low nibble of each byte).
    pub pc: Signal<In, Bits<64>>,
    /// The count byte.
    pub count: Signal<In, Bits<8>>,
    /// They agree.
    pub ok: Signal<Out, bool>,
    /// The population count.
    pub pop: Signal<Out, Bits<8>>,
    s01: Signal<Local, Bits<8>>,
    s23: Signal<Local, Bits<8>>,
    s45: Signal<Local, Bits<8>>,
    s67: Signal<Local, Bits<8>>,
}

impl Logic for PopCheck {
    #[hdl_gen]
    fn update(&mut self) {
        self.s01.next = bit_cast::<8, 4>(self.pc.val().get_bits::<4>(0))
            + bit_cast::<8, 4>(self.pc.val().get_bits::<4>(8));
        self.s23.next = bit_cast::<8, 4>(self.pc.val().get_bits::<4>(16))
            + bit_cast::<8, 4>(self.pc.val().get_bits::<4>(24));
        self.s45.next = bit_cast::<8, 4>(self.pc.val().get_bits::<4>(32))
            + bit_cast::<8, 4>(self.pc.val().get_bits::<4>(40));
        self.s67.next = bit_cast::<8, 4>(self.pc.val().get_bits::<4>(48))
            + bit_cast::<8, 4>(self.pc.val().get_bits::<4>(56));
        self.pop.next = (self.s01.val() + self.s23.val()) + (self.s45.val() + self.s67.val());
        self.ok.next = self.pop.val() == self.count.val();
    }
}
