//! Header builder: the 64-byte header region (Ethernet + IPv4 + UDP + fanin header) of a
//! frame the switch originates, exactly as `Datagram::to_frame(false)` writes it: IHL 5,
//! DSCP/ECN 0, ident 0, DF, TTL 64, correct header checksum, UDP checksum 0; the fanin
//! count byte is the population count of the bitmap.

use rust_hdl::prelude::*;

/// Header builder in two registered stages: `ld1` registers the fields with the partial
/// IPv4 checksum and the bitmap's population count (whose per-byte counts are registered
/// every cycle from `pc_bitmap`, so `pc_bitmap` must be the bitmap a cycle before `ld1`);
/// `hdr`/`len` are built from those
/// registers, and `ld` loads them (or the original header) into the header register.
/// Output in AXI-Stream byte order (byte 0 in bits 7:0).
#[derive(LogicBlock, Default)]
pub struct HdrGen {
    /// Destination MAC.
    pub dst_mac: Signal<In, Bits<48>>,
    /// Source MAC.
    pub src_mac: Signal<In, Bits<48>>,
    /// Source IPv4.
    pub src_ip: Signal<In, Bits<32>>,
    /// Destination IPv4.
    pub dst_ip: Signal<In, Bits<32>>,
    /// UDP source port.
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// fanin type.
    pub ptype: Signal<In, Bits<8>>,
    /// fanin flags.
    pub flags: Signal<In, Bits<8>>,
    /// fanin exponent.
    pub exponent: Signal<In, Bits<8>>,
    /// Job id.
    pub job: Signal<In, Bits<16>>,
    /// Element count.
    pub elements: Signal<In, Bits<16>>,
    /// Block id.
    pub block: Signal<In, Bits<32>>,
    /// Child index.
    pub child: Signal<In, Bits<8>>,
    /// Contributor bitmap.
    pub bitmap: Signal<In, Bits<64>>,
    /// The bitmap of the next `ld1`, a cycle ahead (its population count's first stage).
    pub pc_bitmap: Signal<In, Bits<64>>,
    /// The header region.
    pub hdr: Signal<Out, Bits<512>>,
    /// Clock of the header registers.
    pub clock: Signal<In, Clock>,
    /// Register the fields above (stage 1); `hdr` and `len` show them from the next cycle.
    pub ld1: Signal<In, bool>,
    /// Load the header register: with `orig`, `orig_hdr`/`orig_len`; else `hdr`/`len`.
    pub ld: Signal<In, bool>,
    /// Set the overflow flag (0x08) in the built header that `ld` loads.
    pub ovf: Signal<In, bool>,
    /// Load the original header (a routed frame) instead of a built one.
    pub orig: Signal<In, bool>,
    /// Original header region.
    pub orig_hdr: Signal<In, Bits<512>>,
    /// Original frame length.
    pub orig_len: Signal<In, Bits<16>>,
    /// The header register (the engine pushes it; the checksum stays off the push path).
    pub hdr_q: Signal<Out, Bits<512>>,
    /// The length register.
    pub len_q: Signal<Out, Bits<16>>,
    hq: DFF<Bits<512>>,
    lq: DFF<Bits<16>>,
    /// Frame length: 64 + 4 * elements (of the registered fields).
    pub len: Signal<Out, Bits<16>>,
    r_dst_mac: DFF<Bits<48>>,
    r_src_mac: DFF<Bits<48>>,
    r_src_ip: DFF<Bits<32>>,
    r_dst_ip: DFF<Bits<32>>,
    r_src_port: DFF<Bits<16>>,
    r_dst_port: DFF<Bits<16>>,
    r_ptype: DFF<Bits<8>>,
    r_flags: DFF<Bits<8>>,
    r_exp: DFF<Bits<8>>,
    r_job: DFF<Bits<16>>,
    r_elements: DFF<Bits<16>>,
    r_block: DFF<Bits<32>>,
    r_child: DFF<Bits<8>>,
    r_bitmap: DFF<Bits<64>>,
    r_cs0: DFF<Bits<20>>,
    r_total: DFF<Bits<16>>,
    r_pc: DFF<Bits<8>>,
    pcq: DFF<Bits<64>>,
    lay: HdrLayout,
    total: Signal<Local, Bits<16>>,
    cs0: Signal<Local, Bits<20>>,
    cs1: Signal<Local, Bits<20>>,
    cs2: Signal<Local, Bits<20>>,
    csum: Signal<Local, Bits<16>>,
    pc1: Signal<Local, Bits<64>>,
    pc2: Signal<Local, Bits<64>>,
    pc3: Signal<Local, Bits<64>>,
    pc4: Signal<Local, Bits<64>>,
    pc5: Signal<Local, Bits<64>>,
    pc6: Signal<Local, Bits<64>>,
}

impl Logic for HdrGen {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self, clock, hq, lq, r_dst_mac, r_src_mac, r_src_ip, r_dst_ip, r_src_port, r_dst_port,
            r_ptype, r_flags, r_exp, r_job, r_elements, r_block, r_child, r_bitmap, r_cs0, r_total,
            r_pc, pcq
        );
        // Stage 1: the fields, the checksum's sum before folding, the population count.
        self.total.next = (self.elements.val() << 2) + 50;
        self.cs0.next = bit_cast::<20, 16>(self.total.val())
            + 0x4500
            + 0x4000
            + 0x4011
            + bit_cast::<20, 16>(self.src_ip.val().get_bits::<16>(16))
            + bit_cast::<20, 16>(self.src_ip.val().get_bits::<16>(0))
            + bit_cast::<20, 16>(self.dst_ip.val().get_bits::<16>(16))
            + bit_cast::<20, 16>(self.dst_ip.val().get_bits::<16>(0));
        self.pc1.next =
            self.pc_bitmap.val() - ((self.pc_bitmap.val() >> 1) & 0x5555_5555_5555_5555u64);
        self.pc2.next = (self.pc1.val() & 0x3333_3333_3333_3333u64)
            + ((self.pc1.val() >> 2) & 0x3333_3333_3333_3333u64);
        self.pc3.next = (self.pc2.val() + (self.pc2.val() >> 4)) & 0x0f0f_0f0f_0f0f_0f0fu64;
        // (per-byte counts registered every cycle: `pc_bitmap` is the bitmap a cycle
        // before `ld1`)
        self.pcq.d.next = self.pc3.val();
        self.pc4.next = self.pcq.q.val() + (self.pcq.q.val() >> 8);
        self.pc5.next = self.pc4.val() + (self.pc4.val() >> 16);
        self.pc6.next = (self.pc5.val() + (self.pc5.val() >> 32)) & 0x7f;
        if self.ld1.val() {
            self.r_dst_mac.d.next = self.dst_mac.val();
            self.r_src_mac.d.next = self.src_mac.val();
            self.r_src_ip.d.next = self.src_ip.val();
            self.r_dst_ip.d.next = self.dst_ip.val();
            self.r_src_port.d.next = self.src_port.val();
            self.r_dst_port.d.next = self.dst_port.val();
            self.r_ptype.d.next = self.ptype.val();
            self.r_flags.d.next = self.flags.val();
            self.r_exp.d.next = self.exponent.val();
            self.r_job.d.next = self.job.val();
            self.r_elements.d.next = self.elements.val();
            self.r_block.d.next = self.block.val();
            self.r_child.d.next = self.child.val();
            self.r_bitmap.d.next = self.bitmap.val();
            self.r_cs0.d.next = self.cs0.val();
            self.r_total.d.next = self.total.val();
            self.r_pc.d.next = self.pc6.val().get_bits::<8>(0);
        }
        // Stage 2: fold the checksum, lay the header out.
        self.len.next = self.r_total.q.val() + 14;
        self.cs1.next = (self.r_cs0.q.val() & 0xffff) + (self.r_cs0.q.val() >> 16);
        self.cs2.next = (self.cs1.val() & 0xffff) + (self.cs1.val() >> 16);
        self.csum.next = !self.cs2.val().get_bits::<16>(0);
        // The header region in AXI-Stream byte order (`HdrLayout`: a concatenation).
        self.lay.dst_mac.next = self.r_dst_mac.q.val();
        self.lay.src_mac.next = self.r_src_mac.q.val();
        self.lay.total.next = self.r_total.q.val();
        self.lay.csum.next = self.csum.val();
        self.lay.src_ip.next = self.r_src_ip.q.val();
        self.lay.dst_ip.next = self.r_dst_ip.q.val();
        self.lay.src_port.next = self.r_src_port.q.val();
        self.lay.dst_port.next = self.r_dst_port.q.val();
        self.lay.udp_len.next = self.r_total.q.val() - 20;
        self.lay.ptype.next = self.r_ptype.q.val();
        if self.ovf.val() {
            self.lay.flags.next = self.r_flags.q.val() | 0x08;
        } else {
            self.lay.flags.next = self.r_flags.q.val();
        }
        self.lay.exponent.next = self.r_exp.q.val();
        self.lay.job.next = self.r_job.q.val();
        self.lay.elements.next = self.r_elements.q.val();
        self.lay.block.next = self.r_block.q.val();
        self.lay.child.next = self.r_child.q.val();
        self.lay.count.next = self.r_pc.q.val();
        self.lay.bitmap.next = self.r_bitmap.q.val();
        self.hdr.next = self.lay.y.val();
        if self.ld.val() {
            if self.orig.val() {
                self.hq.d.next = self.orig_hdr.val();
                self.lq.d.next = self.orig_len.val();
            } else {
                self.hq.d.next = self.lay.y.val();
                self.lq.d.next = self.len.val();
            }
        }
        self.hdr_q.next = self.hq.q.val();
        self.len_q.next = self.lq.q.val();
    }
}

/// The header region's fields in network order: (input, bytes, value); an empty input
/// name is the constant `value`.
const LAYOUT: &[(&str, usize, u64)] = &[
    ("dst_mac", 6, 0),
    ("src_mac", 6, 0),
    ("", 2, 0x0800),
    ("", 2, 0x4500),
    ("total", 2, 0),
    ("", 2, 0),
    ("", 2, 0x4000),
    ("", 2, 0x4011),
    ("csum", 2, 0),
    ("src_ip", 4, 0),
    ("dst_ip", 4, 0),
    ("src_port", 2, 0),
    ("dst_port", 2, 0),
    ("udp_len", 2, 0),
    ("", 2, 0),
    ("", 1, 1),
    ("ptype", 1, 0),
    ("flags", 1, 0),
    ("exponent", 1, 0),
    ("job", 2, 0),
    ("elements", 2, 0),
    ("block", 4, 0),
    ("child", 1, 0),
    ("count", 1, 0),
    ("bitmap", 8, 0),
];

/// The 64-byte header region (IHL 5, DF, TTL 64, UDP, UDP checksum 0, fanin version 1)
/// from its variable fields, in AXI-Stream byte order (network byte `o` in bits
/// `8o+7:8o`): one concatenation of field bytes (pure wiring).
#[derive(LogicBlock, Default)]
pub struct HdrLayout {
    /// Destination MAC.
    pub dst_mac: Signal<In, Bits<48>>,
    /// Source MAC.
    pub src_mac: Signal<In, Bits<48>>,
    /// IPv4 total length.
    pub total: Signal<In, Bits<16>>,
    /// IPv4 header checksum.
    pub csum: Signal<In, Bits<16>>,
    /// Source IPv4.
    pub src_ip: Signal<In, Bits<32>>,
    /// Destination IPv4.
    pub dst_ip: Signal<In, Bits<32>>,
    /// UDP source port.
    pub src_port: Signal<In, Bits<16>>,
    /// UDP destination port.
    pub dst_port: Signal<In, Bits<16>>,
    /// UDP length.
    pub udp_len: Signal<In, Bits<16>>,
    /// fanin type.
    pub ptype: Signal<In, Bits<8>>,
    /// fanin flags.
    pub flags: Signal<In, Bits<8>>,
    /// fanin exponent.
    pub exponent: Signal<In, Bits<8>>,
    /// Job id.
    pub job: Signal<In, Bits<16>>,
    /// Element count.
    pub elements: Signal<In, Bits<16>>,
    /// Block id.
    pub block: Signal<In, Bits<32>>,
    /// Child index.
    pub child: Signal<In, Bits<8>>,
    /// Contributor count.
    pub count: Signal<In, Bits<8>>,
    /// Contributor bitmap.
    pub bitmap: Signal<In, Bits<64>>,
    /// The header region.
    pub y: Signal<Out, Bits<512>>,
}

/// A field of at most 64 bits as a number (byte by byte: `index` takes only short values).
fn u<const N: usize>(b: Bits<N>) -> u64 {
    (0..N.div_ceil(8)).fold(0, |a, i| {
        a | (b.get_bits::<8>(8 * i).index() as u64) << (8 * i)
    })
}

impl HdrLayout {
    fn field(&self, name: &str) -> u64 {
        match name {
            "dst_mac" => u(self.dst_mac.val()),
            "src_mac" => u(self.src_mac.val()),
            "total" => u(self.total.val()),
            "csum" => u(self.csum.val()),
            "src_ip" => u(self.src_ip.val()),
            "dst_ip" => u(self.dst_ip.val()),
            "src_port" => u(self.src_port.val()),
            "dst_port" => u(self.dst_port.val()),
            "udp_len" => u(self.udp_len.val()),
            "ptype" => u(self.ptype.val()),
            "flags" => u(self.flags.val()),
            "exponent" => u(self.exponent.val()),
            "job" => u(self.job.val()),
            "elements" => u(self.elements.val()),
            "block" => u(self.block.val()),
            "child" => u(self.child.val()),
            "count" => u(self.count.val()),
            "bitmap" => u(self.bitmap.val()),
            _ => unreachable!(),
        }
    }
}

impl Logic for HdrLayout {
    fn update(&mut self) {
        let mut y = Bits::<512>::default();
        let mut o = 0;
        for &(name, n, k) in LAYOUT {
            let v = if name.is_empty() { k } else { self.field(name) };
            for i in 0..n {
                let byte = (v >> (8 * (n - 1 - i))) & 0xff;
                y = y | (bit_cast::<512, 8>(byte.into()) << bits::<16>((8 * (o + i)) as u64));
            }
            o += n;
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        // Network bytes, first to last; the concatenation lists them last first.
        let mut bytes = Vec::new();
        for &(name, n, k) in LAYOUT {
            for i in 0..n {
                let lo = 8 * (n - 1 - i);
                bytes.push(if name.is_empty() {
                    format!("8'h{:02x}", (k >> lo) & 0xff)
                } else {
                    format!("{name}[{}:{lo}]", lo + 7)
                });
            }
        }
        assert_eq!(bytes.len(), 64);
        bytes.reverse();
        Verilog::Custom(format!("assign y = {{{}}};\n", bytes.join(", ")))
    }
}

/// Where byte `k` of an ARP reply comes from (`fanin_proto::wire::arp`, network order).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ArpByte {
    /// Byte `i` of the request.
    Req(usize),
    /// Byte `i` (network order) of the switch's MAC address.
    Mac(usize),
    /// Byte `i` (network order) of the switch's IPv4 address.
    Ip(usize),
    /// A constant.
    Const(u8),
}

/// The 64-byte region of the ARP reply to a request (`wire::arp::reply`, then zeros to
/// byte 64): the request's sender as the destination and target, the switch as the source
/// and sender.
fn arp_bytes() -> [ArpByte; 64] {
    use fanin_proto::wire::arp::{field, REPLY_LEN, REQUEST_FIXED};
    const { assert!(REPLY_LEN <= 64) };
    let mut b = [ArpByte::Const(0); 64];
    for i in 0..6 {
        b[field::DST_MAC.start + i] = ArpByte::Req(field::SHA.start + i);
        b[field::SRC_MAC.start + i] = ArpByte::Mac(i);
        b[field::SHA.start + i] = ArpByte::Mac(i);
        b[field::THA.start + i] = ArpByte::Req(field::SHA.start + i);
    }
    for (i, &k) in REQUEST_FIXED.iter().enumerate() {
        b[field::FIXED.start + i] = ArpByte::Const(k);
    }
    b[field::OPER] = ArpByte::Const(2);
    for i in 0..4 {
        b[field::SPA.start + i] = ArpByte::Ip(i);
        b[field::TPA.start + i] = ArpByte::Req(field::SPA.start + i);
    }
    b
}

/// The header region of the ARP reply to the request in `req` (the request's header
/// region), in AXI-Stream byte order: one concatenation of bytes (pure wiring).
#[derive(LogicBlock, Default)]
pub struct ArpLayout {
    /// The request's first 64 bytes, byte 0 in bits 7:0.
    pub req: Signal<In, Bits<512>>,
    /// The switch's MAC address (a number: network byte 0 is bits 47:40).
    pub mac: Signal<In, Bits<48>>,
    /// The switch's IPv4 address (a number).
    pub ip: Signal<In, Bits<32>>,
    /// The reply's first 64 bytes (60 bytes and 4 zero bytes), byte 0 in bits 7:0.
    pub y: Signal<Out, Bits<512>>,
}

impl Logic for ArpLayout {
    fn update(&mut self) {
        let mut y = Bits::<512>::default();
        for (k, src) in arp_bytes().into_iter().enumerate() {
            let byte: u64 = match src {
                ArpByte::Req(i) => self.req.val().get_bits::<8>(8 * i).index() as u64,
                ArpByte::Mac(i) => self.mac.val().get_bits::<8>(8 * (5 - i)).index() as u64,
                ArpByte::Ip(i) => self.ip.val().get_bits::<8>(8 * (3 - i)).index() as u64,
                ArpByte::Const(c) => c as u64,
            };
            y = y | (bit_cast::<512, 8>(byte.into()) << bits::<16>((8 * k) as u64));
        }
        self.y.next = y;
    }
    fn connect(&mut self) {
        self.y.connect();
    }
    fn hdl(&self) -> Verilog {
        // Bytes first to last; the concatenation lists them last first.
        let mut bytes: Vec<String> = arp_bytes()
            .into_iter()
            .map(|src| match src {
                ArpByte::Req(i) => format!("req[{}:{}]", 8 * i + 7, 8 * i),
                ArpByte::Mac(i) => format!("mac[{}:{}]", 8 * (5 - i) + 7, 8 * (5 - i)),
                ArpByte::Ip(i) => format!("ip[{}:{}]", 8 * (3 - i) + 7, 8 * (3 - i)),
                ArpByte::Const(c) => format!("8'h{c:02x}"),
            })
            .collect();
        bytes.reverse();
        Verilog::Custom(format!("assign y = {{{}}};\n", bytes.join(", ")))
    }
}
