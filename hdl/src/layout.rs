//! Named fields of the core's packed words, from the tables in `fanin_regs::layout`.
//!
//! Each word type gets a trait of `get_value_<field>` accessors: rust-hdl's `hdl_gen`
//! translates `x.val().get_value_f()` into the slice `x[offset +: width]`, asking the
//! receiver's `get_my_offset_f()` and `get_my_width_f()` for the numbers, so the logic
//! names fields and only the tables hold offsets. An accessor may read fewer bits than the
//! field holds (the egress ports: 4 of 8); a const check keeps every accessor inside its
//! field.

use fanin_regs::layout::{child, job, member, meta, Field};
use rust_hdl::prelude::*;

/// Width of a packed job-table entry.
pub const JOB_W: usize = job::LAYOUT.width;
/// Width of a child-table entry.
pub const CHILD_W: usize = child::LAYOUT.width;
/// Width of a slot-copy metadata word.
pub const META_W: usize = meta::LAYOUT.width;
/// Width of a session member row.
pub const MEMBER_W: usize = member::LAYOUT.width;
const fn inside(f: Field, width: usize, word: usize) -> bool {
    width <= f.width && f.offset + f.width <= word
}

macro_rules! word {
    (
        $(#[$doc:meta])* $tr:ident for $w:expr;
        bits { $( $f:ident : $n:literal = $field:expr ),* $(,)? }
        flags { $( $g:ident = $gfield:expr ),* $(,)? }
    ) => {
        paste::paste! {
            $(#[$doc])*
            pub trait $tr {
                $(
                    #[doc = concat!("Field `", stringify!($f), "`.")]
                    fn [<get_value_ $f>](&self) -> Bits<$n>;
                    #[doc(hidden)]
                    fn [<get_my_width_ $f>](&self) -> usize;
                    #[doc(hidden)]
                    fn [<get_my_offset_ $f>](&self) -> u32;
                )*
                $(
                    #[doc = concat!("Flag `", stringify!($g), "`.")]
                    fn [<get_value_ $g>](&self) -> bool;
                    #[doc(hidden)]
                    fn [<get_my_width_ $g>](&self) -> usize;
                    #[doc(hidden)]
                    fn [<get_my_offset_ $g>](&self) -> u32;
                )*
            }
            impl $tr for Bits<{ $w }> {
                $(
                    fn [<get_value_ $f>](&self) -> Bits<$n> {
                        self.get_bits::<$n>($field.offset)
                    }
                    fn [<get_my_width_ $f>](&self) -> usize {
                        $n
                    }
                    fn [<get_my_offset_ $f>](&self) -> u32 {
                        $field.offset as u32
                    }
                )*
                $(
                    fn [<get_value_ $g>](&self) -> bool {
                        self.get_bit($gfield.offset)
                    }
                    fn [<get_my_width_ $g>](&self) -> usize {
                        1
                    }
                    fn [<get_my_offset_ $g>](&self) -> u32 {
                        $gfield.offset as u32
                    }
                )*
            }
            const _: () = {
                $( assert!(inside($field, $n, $w)); )*
                $( assert!(inside($gfield, 1, $w)); )*
            };
        }
    };
}

word! {
    /// Fields of a job-table entry (`je`, `x_je`, `sj`, `q_sj`, the job RAM's read data).
    JobWord for JOB_W;
    bits {
        degree_limit: 8 = job::DEGREE_LIMIT,
        children: 8 = job::CHILDREN,
        index_at_parent: 8 = job::INDEX_AT_PARENT,
        job: 16 = job::JOB,
        ranks: 64 = job::RANKS,
        expected: 64 = job::EXPECTED,
        quota: 32 = job::QUOTA,
        flush_after: 32 = job::FLUSH_AFTER,
        reclaim_after: 32 = job::RECLAIM_AFTER,
        parent_ip: 32 = job::PARENT_IP,
        parent_mac: 48 = job::PARENT_MAC,
        parent_udp: 16 = job::PARENT_UDP,
        parent_port: 4 = job::PARENT_PORT,
        epoch: 32 = job::EPOCH,
        src_check: 2 = job::SRC_CHECK,
        reclaim_idle: 32 = job::RECLAIM_IDLE,
        first_block: 32 = job::FIRST_BLOCK,
        slot_base: 32 = job::SLOT_BASE,
        slot_count: 32 = job::SLOT_COUNT,
    }
    flags {
        valid = job::VALID,
        inner = job::INNER,
        timeout = job::TIMEOUT,
        sessions = job::SESSIONS,
    }
}

word! {
    /// Fields of a child-table entry (the child RAMs' read data, `chr`).
    ChildWord for CHILD_W;
    bits {
        ranks: 64 = child::RANKS,
        mac: 48 = child::MAC,
        ip: 32 = child::IP,
        udp: 16 = child::UDP,
        port: 4 = child::PORT,
    }
    flags {}
}

word! {
    /// Fields of a session member row (the members RAM's read data, `su_m`).
    MemberWord for MEMBER_W;
    bits {
        nonce: 32 = member::NONCE,
        mac: 48 = member::MAC,
        ip: 32 = member::IP,
        udp: 16 = member::UDP,
        port: 4 = member::PORT,
    }
    flags {}
}

word! {
    /// Fields of a slot-copy metadata word (`m`, `xm`, `cmw`).
    MetaWord for META_W;
    bits {
        state: 3 = meta::STATE,
        entry: 8 = meta::ENTRY,
        epoch_lo: 16 = meta::EPOCH_LO,
        block: 32 = meta::BLOCK,
        bitmap: 64 = meta::BITMAP,
        exponent: 8 = meta::EXPONENT,
        flags: 8 = meta::FLAGS,
        elements: 16 = meta::ELEMENTS,
        timer: 32 = meta::TIMER,
        epoch_hi: 16 = meta::EPOCH_HI,
        touched: 32 = meta::TOUCHED,
    }
    flags {}
}

/// Fields of the smaller words the core splits: register values (`wdata`, the staging
/// registers), the 48-bit MAC read as two registers, an epoch
/// stored as two halves, and the frame's header window.
pub mod small {
    use fanin_proto::wire::{header::field, L2L4_LEN, PAYLOAD_OFFSET};
    use fanin_regs::layout::Field;

    const fn f(name: &'static str, offset: usize, width: usize, doc: &'static str) -> Field {
        Field::new(name, offset, width, doc)
    }

    /// A 16-bit register value (UDP ports, the job id, the MAC's high register).
    pub const LOW16: Field = f("low16", 0, 16, "bits 15:0");
    /// An 8-bit register value (egress ports, `job_commit`'s entry index).
    pub const LOW8: Field = f("low8", 0, 8, "bits 7:0");
    /// `child_commit`: the child index.
    pub const COMMIT_CHILD: Field = f("commit_child", 0, 8, "child index");
    /// A row's low word (the read-back window's word, shifted down to bits 31:0).
    pub const LOW32: Field = f("low32", 0, 32, "bits 31:0");
    /// `port_below_commit`: the port.
    pub const COMMIT_PORT: Field = f("commit_port", 0, 8, "port");
    /// `tbl_sel`: the table.
    pub const TBL_TABLE: Field = f("tbl_table", 28, 4, "table");
    /// `child_commit`: the job-table entry.
    pub const COMMIT_ENTRY: Field = f("commit_entry", 8, 8, "job-table entry");
    /// An epoch's low half (the metadata's `epoch_lo`).
    pub const EPOCH_LO: Field = f("epoch_lo", 0, 16, "epoch bits 15:0");
    /// An epoch's high half (the metadata's `epoch_hi`).
    pub const EPOCH_HI: Field = f("epoch_hi", 16, 16, "epoch bits 31:16");
    /// `route_port`: the egress port.
    pub const ROUTE_EGRESS: Field = f("egress", 0, 4, "egress port");
    /// `route_port`: valid (0 removes the entry).
    pub const ROUTE_VALID: Field = f("valid", 7, 1, "valid");
    /// A MAC address's low register (`*_mac_lo`: bytes 2..5).
    pub const MAC_LO: Field = f("mac_lo", 0, 32, "bytes 2..5");
    /// A MAC address's high register (`*_mac_hi`: bytes 0..1).
    pub const MAC_HI: Field = f("mac_hi", 32, 16, "bytes 0..1");
    /// Header window: the Ethernet, IPv4, UDP and fanin headers (the bytes before the
    /// payload), which a frame's item carries.
    pub const HEADERS: Field = f("headers", 0, PAYLOAD_OFFSET * 8, "bytes before the payload");
    /// Header window: the UDP checksum (frame bytes 40, 41, in AXI byte order: only
    /// compared with zero, by the ingress port's checksum check).
    pub const UDP_CSUM: Field = f("udp_csum", (L2L4_LEN - 2) * 8, 16, "UDP checksum");
    /// Header window: the fanin header's contributor bitmap.
    pub const BITMAP: Field = f(
        "bitmap",
        (L2L4_LEN + field::BITMAP.start) * 8,
        (field::BITMAP.end - field::BITMAP.start) * 8,
        "contributor bitmap",
    );
}

word! {
    /// Fields of a 32-bit register value or epoch (`wdata`, `x_jep`).
    RegValue for 32;
    bits {
        low16: 16 = small::LOW16,
        low8: 8 = small::LOW8,
        commit_child: 8 = small::COMMIT_CHILD,
        commit_entry: 8 = small::COMMIT_ENTRY,
        commit_port: 3 = small::COMMIT_PORT,
        tbl_table: 4 = small::TBL_TABLE,
        epoch_lo: 16 = small::EPOCH_LO,
        epoch_hi: 16 = small::EPOCH_HI,
    }
    flags {}
}

word! {
    /// A table row as the read-back window holds it (`tbl_q`, `tbl_sh`: job-entry wide).
    RowWord for JOB_W;
    bits {
        low32: 32 = small::LOW32,
    }
    flags {}
}

word! {
    /// Fields of the staged `route_port` value (`st_route_port`).
    RoutePort for 8;
    bits {
        egress: 4 = small::ROUTE_EGRESS,
    }
    flags {
        valid = small::ROUTE_VALID,
    }
}

word! {
    /// The two registers of a MAC address (`me_mac`).
    Mac48 for 48;
    bits {
        mac_lo: 32 = small::MAC_LO,
        mac_hi: 16 = small::MAC_HI,
    }
    flags {}
}

word! {
    /// Fields of the frame's header window (`hdr`, a descriptor's `d_hdr`).
    HdrWindow for crate::parse::PARSE_W;
    bits {
        headers: 512 = small::HEADERS,
        bitmap: 64 = small::BITMAP,
    }
    flags {}
}

/// The offset of `f`, as the core's shift constants (`at_<word>_<field>`) hold it.
pub fn at(f: Field) -> Constant<Bits<16>> {
    Constant::new((f.offset as u64).into())
}

/// The bits of `fields` in an `N`-bit word, as the core's mask constants (`mk_*`).
pub fn mask<const N: usize>(fields: &[Field]) -> Constant<Bits<N>> {
    let mut m = Bits::<N>::default();
    for f in fields {
        assert!(f.offset + f.width <= N, "{} outside the word", f.name);
        for i in f.offset..f.offset + f.width {
            m = m.replace_bit(i, true);
        }
    }
    Constant::new(m)
}

/// The frame's header window in network byte order (the parser's `be`, `PARSE_W` bits):
/// frame byte `o` of an `n`-byte field sits at bits `PARSE_W - 8·(o + n)` and up. One
/// table, from the byte offsets of Ethernet, IPv4 and UDP (RFC 894, 791, 768) and the fanin
/// header's `fanin_proto::wire::header::field`; a test reads every field out of frames
/// `fanin_proto` builds.
pub mod net {
    use crate::parse::PARSE_W;
    use fanin_proto::wire::{arp::field as arp, header::field, L2L4_LEN};
    use fanin_regs::layout::Field;

    /// Bytes `o .. o + n` of the frame, as bits of the window.
    const fn bytes(name: &'static str, o: usize, n: usize, doc: &'static str) -> Field {
        Field::new(name, PARSE_W - 8 * (o + n), 8 * n, doc)
    }

    /// Bits `lo .. lo + w` (counted from the byte's least significant bit) of frame byte `o`.
    const fn bits(name: &'static str, o: usize, lo: usize, w: usize, doc: &'static str) -> Field {
        Field::new(name, PARSE_W - 8 * (o + 1) + lo, w, doc)
    }

    const IP: usize = 14;
    const UDP: usize = 34;
    const F: usize = L2L4_LEN;

    /// Ethernet destination MAC.
    pub const DST_MAC: Field = bytes("dst_mac", 0, 6, "Ethernet destination");
    /// Ethernet source MAC.
    pub const SRC_MAC: Field = bytes("src_mac", 6, 6, "Ethernet source");
    /// EtherType.
    pub const ETHERTYPE: Field = bytes("ethertype", 12, 2, "EtherType");
    /// IPv4 version (high nibble of byte 14).
    pub const IP_VERSION: Field = bits("ip_version", IP, 4, 4, "IPv4 version");
    /// IPv4 header length in 32-bit words (low nibble of byte 14).
    pub const IP_IHL: Field = bits("ip_ihl", IP, 0, 4, "IPv4 IHL");
    /// IPv4 total length.
    pub const IP_TOTAL: Field = bytes("ip_total", IP + 2, 2, "IPv4 total length");
    /// IPv4 more-fragments flag.
    pub const IP_MF: Field = bits("ip_mf", IP + 6, 5, 1, "IPv4 MF flag");
    /// IPv4 fragment offset (13 bits).
    pub const IP_FRAG: Field = Field::new(
        "ip_frag",
        PARSE_W - 8 * (IP + 8),
        13,
        "IPv4 fragment offset",
    );
    /// IPv4 protocol.
    pub const IP_PROTO: Field = bytes("ip_proto", IP + 9, 1, "IPv4 protocol");
    /// IPv4 source address.
    pub const SRC_IP: Field = bytes("src_ip", IP + 12, 4, "IPv4 source");
    /// IPv4 destination address.
    pub const DST_IP: Field = bytes("dst_ip", IP + 16, 4, "IPv4 destination");
    /// UDP source port.
    pub const SRC_PORT: Field = bytes("src_port", UDP, 2, "UDP source port");
    /// UDP destination port.
    pub const DST_PORT: Field = bytes("dst_port", UDP + 2, 2, "UDP destination port");
    /// UDP length.
    pub const UDP_LEN: Field = bytes("udp_len", UDP + 4, 2, "UDP length");
    /// fanin version.
    pub const VERSION: Field = bytes("version", F + field::VERSION, 1, "fanin version");
    /// fanin packet type.
    pub const PTYPE: Field = bytes("ptype", F + field::TYPE, 1, "packet type");
    /// fanin flags.
    pub const FLAGS: Field = bytes("flags", F + field::FLAGS, 1, "flags");
    /// Scale exponent.
    pub const EXPONENT: Field = bytes("exponent", F + field::EXPONENT, 1, "exponent");
    /// Job id.
    pub const JOB: Field = bytes("job", F + field::JOB.start, 2, "job id");
    /// Element count.
    pub const ELEMENTS: Field = bytes("elements", F + field::ELEMENTS.start, 2, "elements");
    /// Block id.
    pub const BLOCK: Field = bytes("block", F + field::BLOCK.start, 4, "block id");
    /// Child index.
    pub const CHILD: Field = bytes("child", F + field::CHILD, 1, "child index");
    /// Contribution count.
    pub const COUNT: Field = bytes("count", F + field::COUNT, 1, "contribution count");
    /// Contributor bitmap.
    pub const BITMAP: Field = bytes("bitmap", F + field::BITMAP.start, 8, "bitmap");
    /// ARP hardware and protocol types, address lengths and operation (bytes 14..22;
    /// `fanin_proto::wire::arp::REQUEST_FIXED` after the EtherType for a request).
    pub const ARP_FIXED: Field = bytes(
        "arp_fixed",
        arp::FIXED.start + 2,
        arp::FIXED.end - arp::FIXED.start - 2,
        "ARP types, lengths, operation",
    );
    /// ARP target IPv4 address.
    pub const ARP_TPA: Field = bytes(
        "arp_tpa",
        arp::TPA.start,
        arp::TPA.end - arp::TPA.start,
        "ARP target IPv4",
    );

    const _: () = {
        assert!(field::JOB.end - field::JOB.start == 2);
        assert!(field::ELEMENTS.end - field::ELEMENTS.start == 2);
        assert!(field::BLOCK.end - field::BLOCK.start == 4);
        assert!(field::BITMAP.end - field::BITMAP.start == 8);
    };
}

word! {
    /// Fields of the header window in network byte order (the parser's `be`).
    NetHdr for crate::parse::PARSE_W;
    bits {
        dst_mac: 48 = net::DST_MAC,
        src_mac: 48 = net::SRC_MAC,
        ethertype: 16 = net::ETHERTYPE,
        ip_version: 4 = net::IP_VERSION,
        ip_ihl: 4 = net::IP_IHL,
        ip_total: 16 = net::IP_TOTAL,
        ip_frag: 13 = net::IP_FRAG,
        ip_proto: 8 = net::IP_PROTO,
        src_ip: 32 = net::SRC_IP,
        dst_ip: 32 = net::DST_IP,
        src_port: 16 = net::SRC_PORT,
        dst_port: 16 = net::DST_PORT,
        udp_len: 16 = net::UDP_LEN,
        version: 8 = net::VERSION,
        ptype: 8 = net::PTYPE,
        flags: 8 = net::FLAGS,
        exponent: 8 = net::EXPONENT,
        job: 16 = net::JOB,
        elements: 16 = net::ELEMENTS,
        block: 32 = net::BLOCK,
        child: 8 = net::CHILD,
        count: 8 = net::COUNT,
        bitmap: 64 = net::BITMAP,
        arp_fixed: 64 = net::ARP_FIXED,
        arp_tpa: 32 = net::ARP_TPA,
    }
    flags {
        ip_mf = net::IP_MF,
    }
}

#[cfg(test)]
mod net_tests {
    use super::NetHdr;
    use crate::parse::PARSE_W;
    use fanin_proto::wire::{Datagram, Flags, L4Addr, PacketType, Repr};
    use rust_hdl::prelude::*;

    /// Every field of the network-order window, read out of a frame `fanin_proto` builds,
    /// equals what went into it (the window as the byte swap presents it: frame byte 0 in
    /// the top byte).
    #[test]
    fn header_window_fields_match_a_built_frame() {
        let repr = Repr {
            ptype: PacketType::Result,
            flags: Flags(Flags::MULTICAST),
            exponent: -3,
            job: 0x1234,
            elements: 3,
            block: 0xdead_beef,
            child: 9,
            bitmap: 0x0102_0304_0506_0708,
        };
        let payload = repr.to_bytes(&[1, 2, 3]);
        let src = L4Addr {
            mac: [2, 1, 2, 3, 4, 5],
            ip: [10, 1, 2, 3].into(),
            port: 4567,
        };
        let dst = L4Addr {
            mac: [2, 9, 8, 7, 6, 5],
            ip: [10, 9, 8, 7].into(),
            port: 9999,
        };
        let frame = Datagram {
            src,
            dst,
            payload: &payload,
        }
        .to_frame(true);
        let mut be = Bits::<PARSE_W>::default();
        for (o, &b) in frame.iter().take(PARSE_W / 8).enumerate() {
            let at = PARSE_W - 8 * (o + 1);
            be = be | (bit_cast::<PARSE_W, 8>((b as u64).into()) << at as u64);
        }
        let mac = |m: [u8; 6]| m.iter().fold(0u64, |a, &b| a << 8 | b as u64);
        assert_eq!(be.get_value_dst_mac().to_u64(), mac(dst.mac));
        assert_eq!(be.get_value_src_mac().to_u64(), mac(src.mac));
        assert_eq!(be.get_value_ethertype().to_u64(), 0x0800);
        assert_eq!(be.get_value_ip_version().to_u64(), 4);
        assert_eq!(be.get_value_ip_ihl().to_u64(), 5);
        assert_eq!(be.get_value_ip_total().to_u64(), (frame.len() - 14) as u64);
        assert_eq!(be.get_value_ip_frag().to_u64(), 0);
        assert!(!be.get_value_ip_mf());
        assert_eq!(be.get_value_ip_proto().to_u64(), 17);
        assert_eq!(be.get_value_src_ip().to_u64(), u32::from(src.ip) as u64);
        assert_eq!(be.get_value_dst_ip().to_u64(), u32::from(dst.ip) as u64);
        assert_eq!(be.get_value_src_port().to_u64(), 4567);
        assert_eq!(be.get_value_dst_port().to_u64(), 9999);
        assert_eq!(be.get_value_udp_len().to_u64(), (frame.len() - 34) as u64);
        assert_eq!(
            be.get_value_version().to_u64(),
            fanin_proto::wire::VERSION as u64
        );
        assert_eq!(be.get_value_ptype().to_u64(), PacketType::Result as u64);
        assert_eq!(be.get_value_flags().to_u64(), Flags::MULTICAST as u64);
        assert_eq!(be.get_value_exponent().to_u64(), (-3i8) as u8 as u64);
        assert_eq!(be.get_value_job().to_u64(), 0x1234);
        assert_eq!(be.get_value_elements().to_u64(), 3);
        assert_eq!(be.get_value_block().to_u64(), 0xdead_beef);
        assert_eq!(be.get_value_child().to_u64(), 9);
        assert_eq!(be.get_value_count().to_u64(), 13, "popcount of the bitmap");
        assert_eq!(be.get_value_bitmap().to_u64(), 0x0102_0304_0506_0708);
    }
}

/// The egress and ingress frame descriptors (`tx::TXD_W`, `rx::DESC_W`): the header region,
/// the frame length and the frame's first row.
pub mod desc {
    use fanin_regs::layout::Field;

    const fn f(name: &'static str, offset: usize, width: usize, doc: &'static str) -> Field {
        Field::new(name, offset, width, doc)
    }

    /// Egress: the 64-byte header region (byte 0 in bits 7:0).
    pub const TX_HDR: Field = f("hdr", 0, 512, "header region");
    /// Egress: the frame length in bytes.
    pub const TX_LEN: Field = f("len", 512, 16, "frame length");
    /// Egress: the frame's first payload row.
    pub const TX_ROW: Field = f("row0", 528, 16, "first row");
    /// Ingress: the parser's capture (`PARSE_W` bits).
    pub const RX_HDR: Field = f("hdr", 0, crate::parse::PARSE_W, "capture");
    /// Ingress: the frame length in bytes.
    pub const RX_LEN: Field = f("len", crate::parse::PARSE_W, 16, "frame length");
    /// Ingress: the frame's first row.
    pub const RX_ROW: Field = f("row0", crate::parse::PARSE_W + 16, 16, "first row");
}

word! {
    /// Fields of an egress descriptor (`tx::TXD_W`).
    TxDesc for crate::tx::TXD_W;
    bits {
        hdr: 512 = desc::TX_HDR,
        len: 16 = desc::TX_LEN,
        row0: 16 = desc::TX_ROW,
    }
    flags {}
}

word! {
    /// Fields of an ingress descriptor (`rx::DESC_W`; `DescReg` concatenates
    /// `{row, len, hdr}` in this order).
    RxDesc for crate::rx::DESC_W;
    bits {
        hdr: 640 = desc::RX_HDR,
        len: 16 = desc::RX_LEN,
        row0: 16 = desc::RX_ROW,
    }
    flags {}
}

const _: () = {
    assert!(desc::RX_HDR.width == crate::parse::PARSE_W);
    assert!(desc::RX_ROW.offset + desc::RX_ROW.width == crate::rx::DESC_W);
    assert!(desc::TX_ROW.offset + desc::TX_ROW.width == crate::tx::TXD_W);
};
