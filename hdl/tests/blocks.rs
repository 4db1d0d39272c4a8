//! rust-hdl native simulations of sub-blocks, checked against fanin-proto.

use core::net::Ipv4Addr;
use fanin_hdl::parse::{
    FrameClass, Parser, PARSE_BYTES, PARSE_W, TERMS_ARP, TERMS_BAD, TERMS_IP_BAD, TERMS_NON_IP,
    TERMS_ROUTE, TERMS_WIRE_BAD,
};
use fanin_hdl::rx::Rx;

/// The parser's population-count check: the count byte equals the bitmap's popcount.
fn uut_pop_ok(p: &Parser) -> bool {
    let bm = p.f.val().bitmap;
    let pop: u32 = (0..8)
        .map(|k| bm.get_bits::<8>(8 * k).index().count_ones())
        .sum();
    pop as usize == p.c_count.val().index()
}
use fanin_hdl::sim::{settle, tick};
use fanin_proto::model::Counter;
use fanin_proto::wire::frame::{classify, udp_checksum_ok};
use fanin_proto::wire::{Datagram, FrameKind, L4Addr, Packet, PacketType, Repr};
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;
use smoltcp::wire::{IpAddress, Ipv4Packet, UdpPacket};
use std::collections::VecDeque;

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const PORT: u16 = fanin_proto::wire::FANIN_UDP_PORT;

/// The class the model gives a frame (`Switch::dispatch` up to the job lookup).
fn model_class(f: &[u8]) -> FrameClass {
    match classify(f) {
        FrameKind::NonIp if fanin_proto::wire::arp::reply(f, [2; 6], ME).is_some() => {
            FrameClass::Arp
        }
        FrameKind::NonIp => FrameClass::NonIp,
        FrameKind::BadIpv4(_) => FrameClass::Malformed,
        FrameKind::Ipv4 { dst, .. } if dst != ME => FrameClass::Route,
        FrameKind::Ipv4 {
            udp: Some(Ok(_)), ..
        } if !udp_checksum_ok(f) => FrameClass::Malformed,
        FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } if d.dst.port == PORT => match Packet::new_checked(d.payload) {
            Ok(p) if Repr::parse(&p).is_ok() => FrameClass::Fanin,
            _ => FrameClass::Malformed,
        },
        _ => FrameClass::Malformed,
    }
}

fn hdr_bits(f: &[u8]) -> Bits<PARSE_W> {
    let mut b = Bits::<PARSE_W>::default();
    for (i, byte) in f.iter().take(PARSE_BYTES).enumerate() {
        for k in 0..8 {
            b = b.replace_bit(i * 8 + k, (byte >> k) & 1 == 1);
        }
    }
    b
}

fn fanin_frame(rng: &mut impl Rng) -> Vec<u8> {
    let ptype = match rng.gen_range(0..5) {
        0 => PacketType::Contribution,
        1 => PacketType::Result,
        2 => PacketType::Join,
        3 => PacketType::Accept,
        _ => PacketType::Refuse,
    };
    // The session types mostly in their own shape (one rank; no elements or one; a non-zero
    // nonce; a known reason), sometimes not.
    let shaped = ptype as u8 >= 3 && rng.gen_bool(0.7);
    let n = if shaped {
        u16::from(ptype == PacketType::Accept)
    } else {
        rng.gen_range(0..6u16)
    };
    let bitmap: u64 = if shaped && ptype != PacketType::Refuse {
        1 << rng.gen_range(0..64)
    } else {
        rng.gen::<u64>() | 1
    };
    let block = if shaped && rng.gen_bool(0.9) {
        rng.gen::<u32>() | 1
    } else if rng.gen_bool(0.1) {
        0
    } else {
        rng.gen()
    };
    let child = if shaped && rng.gen_bool(0.9) {
        rng.gen_range(1..=2)
    } else {
        rng.gen()
    };
    let repr = Repr {
        ptype,
        flags: fanin_proto::wire::Flags(rng.gen_range(0..32)),
        exponent: rng.gen(),
        job: rng.gen(),
        elements: n,
        block,
        child,
        bitmap,
    };
    let data: Vec<i32> = (0..n).map(|_| rng.gen()).collect();
    let payload = repr.to_bytes(&data);
    let dst = if rng.gen_bool(0.8) {
        ME
    } else {
        Ipv4Addr::new(10, 0, 0, rng.gen_range(2..5))
    };
    let d = Datagram {
        src: L4Addr {
            mac: [2, 0, 0, 0, 0, 9],
            ip: Ipv4Addr::new(10, 0, 0, 9),
            port: rng.gen(),
        },
        dst: L4Addr {
            mac: [2, 0, 0, 0, 0, 1],
            ip: dst,
            port: if rng.gen_bool(0.9) { PORT } else { 7 },
        },
        payload: &payload,
    };
    d.to_frame(false)
}

fn mutate(f: &mut Vec<u8>, rng: &mut impl Rng) {
    match rng.gen_range(0..8) {
        0 => {}
        1 => {
            let i = rng.gen_range(0..f.len().min(80));
            f[i] ^= 1 << rng.gen_range(0..8);
        }
        2 => f.truncate(rng.gen_range(0..f.len())),
        3 => f.extend(std::iter::repeat_n(0, rng.gen_range(1..10))),
        4 => {
            // Change a fanin field and keep the IPv4 checksum valid.
            let i = rng.gen_range(42..64.min(f.len()));
            f[i] = rng.gen();
        }
        5 => {
            // IPv4 options (IHL 6..15) with a correct checksum (routed when not for us, else
            // malformed), sometimes with a corrupted option byte (malformed).
            if f.len() > 34 {
                let k = rng.gen_range(1..=10usize);
                let opts: Vec<u8> = (0..4 * k).map(|_| rng.gen()).collect();
                f.splice(34..34, opts);
                f[14] = 0x45 + k as u8;
                let tl = u16::from_be_bytes([f[16], f[17]]) + 4 * k as u16;
                f[16..18].copy_from_slice(&tl.to_be_bytes());
                fix_csum(f, 20 + 4 * k);
                if rng.gen_bool(0.3) {
                    f[rng.gen_range(34..34 + 4 * k)] ^= 1 << rng.gen_range(0..8);
                }
            }
        }
        6 => {
            let i = rng.gen_range(14..34.min(f.len()));
            f[i] = rng.gen();
            if f.len() >= 34 {
                fix_csum(f, 20);
            }
        }
        _ => {
            f[12] = 0x86;
            f[13] = 0xdd;
        }
    }
}

fn fix_csum(f: &mut [u8], hl: usize) {
    if f.len() < 14 + hl {
        return;
    }
    f[24] = 0;
    f[25] = 0;
    let mut s: u32 = 0;
    for w in 0..hl / 2 {
        s += u16::from_be_bytes([f[14 + 2 * w], f[15 + 2 * w]]) as u32;
    }
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    let c = !(s as u16);
    f[24..26].copy_from_slice(&c.to_be_bytes());
}

/// What `Rx` computes for `d_ip_ok` (when the bytes after the frame's end in its last beat
/// are zero): the one's-complement sum of the big-endian words of bytes
/// `14 .. 14 + 4·IHL` (IHL = low nibble of byte 14; missing bytes read as 0) is 0xffff.
fn ip_hdr_ok(f: &[u8]) -> bool {
    let byte = |i: usize| f.get(i).copied().unwrap_or(0) as u32;
    let hl = 4 * (byte(14) & 15) as usize;
    let mut s: u32 = (0..hl / 2)
        .map(|w| byte(14 + 2 * w) << 8 | byte(15 + 2 * w))
        .sum();
    while s > 0xffff {
        s = (s & 0xffff) + (s >> 16);
    }
    s == 0xffff
}

/// The model's IPv4 header checksum verdict (smoltcp's `Ipv4Packet::verify_checksum`, as
/// `classify` calls it), where it is defined: the frame holds the whole header.
fn model_ip_ok(f: &[u8]) -> Option<bool> {
    let hl = 4 * (*f.get(14)? & 15) as usize;
    (f.len() >= 14 + hl).then(|| Ipv4Packet::new_unchecked(&f[14..]).verify_checksum())
}

/// The parser agrees with the model's classification and header checks on random
/// well-formed and mutated frames. The IPv4 header checksum verdict is the ingress's
/// (`ip_hdr_ok`); for frames without a whole IPv4 header or with IHL < 5, the class must
/// not depend on it at all.
#[test]
fn parser_matches_model() {
    let seed = std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7u64);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uut = Parser::default();
    uut.connect_all();
    let mut seen = [0usize; 5];
    let (mut unused, mut bad_ck) = (0, 0);
    let mut term_seen = [[0usize; 2]; 12];
    for i in 0..400 {
        // One frame in eight an ARP request, for the switch or another address.
        let mut f = if i % 8 == 0 {
            let tpa = if rng.gen_bool(0.7) {
                ME
            } else {
                Ipv4Addr::new(10, 0, 0, 2)
            };
            fanin_proto::wire::arp::request(rng.gen(), Ipv4Addr::from(rng.gen::<u32>()), tpa)
        } else {
            fanin_frame(&mut rng)
        };
        mutate(&mut f, &mut rng);
        uut.hdr.next = hdr_bits(&f);
        uut.len.next = (f.len() as u64).into();
        uut.me_ip.next = (u32::from(ME) as u64).into();
        uut.me_port.next = (PORT as u64).into();
        // The ingress computes the UDP checksum verdict (checked in engine.rs); here it is given.
        uut.udp_ok.next = match classify(&f) {
            FrameKind::Ipv4 {
                udp: Some(Ok(_)), ..
            } => udp_checksum_ok(&f),
            _ => true,
        };
        let ip_ok = ip_hdr_ok(&f);
        let ihl = f.get(14).map_or(0, |b| b & 15);
        let used = model_ip_ok(&f).filter(|_| ihl >= 5);
        if let Some(m) = used {
            assert_eq!(ip_ok, m, "seed {seed} frame {i}: helper vs smoltcp");
        }
        uut.ip_ok.next = ip_ok;
        settle(&mut uut);
        let want = model_class(&f);
        let got = uut.kind.val();
        assert_eq!(got, want, "seed {seed} frame {i}: {:02x?}", f);
        // The check terms the core registers give the same class through the `TERMS_*`
        // masks (the core ORs them with these masks).
        let t = uut.c_terms.val().index() as u64;
        let from_terms = if t & TERMS_NON_IP != 0 && t & TERMS_ARP == TERMS_ARP {
            FrameClass::Arp
        } else if t & TERMS_NON_IP != 0 {
            FrameClass::NonIp
        } else if t & TERMS_IP_BAD != 0 {
            FrameClass::Malformed
        } else if t & TERMS_ROUTE != 0 {
            FrameClass::Route
        } else if t & (TERMS_BAD | TERMS_WIRE_BAD) != 0 || !uut_pop_ok(&uut) {
            FrameClass::Malformed
        } else {
            FrameClass::Fanin
        };
        assert_eq!(
            from_terms, want,
            "seed {seed} frame {i}: class from c_terms"
        );
        // The length terms on their own (each can hide behind another term in the class):
        // 8 UDP length + 20 != IPv4 total, 10 28 <= total < 50, 11 total != 4·elements + 50
        // (mod 2^16), from the zero-padded header bytes.
        let mut h = [0u8; PARSE_BYTES];
        let n = f.len().min(PARSE_BYTES);
        h[..n].copy_from_slice(&f[..n]);
        let be16 = |o: usize| u16::from_be_bytes([h[o], h[o + 1]]);
        let total = be16(16);
        let want_terms = [
            (8, be16(38).wrapping_add(20) != total),
            (10, (28..50).contains(&total)),
            (11, be16(48).wrapping_mul(4).wrapping_add(50) != total),
        ];
        for (k, w) in want_terms {
            assert_eq!(t >> k & 1 == 1, w, "seed {seed} frame {i}: term {k}");
            term_seen[k][usize::from(w)] += 1;
        }
        if used.is_none() {
            // The verdict is meaningless here: the class must not depend on it.
            uut.ip_ok.next = !ip_ok;
            settle(&mut uut);
            let other = uut.kind.val();
            assert_eq!(other, want, "seed {seed} frame {i}: ip_ok used: {:02x?}", f);
            unused += 1;
        } else if !ip_ok {
            bad_ck += 1;
        }
        seen[want as usize] += 1;
        if want == FrameClass::Fanin {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(&f)
            else {
                unreachable!()
            };
            let r = Repr::parse(&Packet::new_checked(d.payload).unwrap()).unwrap();
            // Every field the core registers at the take, against the model's parse.
            let g = uut.f.val();
            let mut mac = [0u8; 8];
            mac[2..].copy_from_slice(&d.src.mac);
            let got = (
                (
                    g.ptype.to_u64(),
                    g.flags.to_u64(),
                    g.exponent.to_u64() as u8 as i8,
                ),
                (g.job.to_u64(), g.elements.to_u64(), g.block.to_u64()),
                (g.child.to_u64(), g.bitmap.to_u64()),
                (g.src_ip.to_u64(), g.src_port.to_u64(), g.src_mac.to_u64()),
            );
            let want = (
                (r.ptype as u64, r.flags.0 as u64, r.exponent),
                (r.job as u64, r.elements as u64, r.block as u64),
                (r.child as u64, r.bitmap),
                (
                    u32::from(d.src.ip) as u64,
                    d.src.port as u64,
                    u64::from_be_bytes(mac),
                ),
            );
            assert_eq!(got, want, "seed {seed} frame {i}: fields");
        }
    }
    assert!(
        seen.iter().all(|&n| n > 5) && unused > 5 && bad_ck > 5,
        "every class exercised: {seen:?}, without a whole IPv4 header {unused}, bad IPv4 checksum {bad_ck}"
    );
    for k in [8, 11] {
        assert!(
            term_seen[k].iter().all(|&n| n > 5),
            "term {k} both ways: {:?}",
            term_seen[k]
        );
    }
}

/// Counter events are named by their counter: `ev` bit k increments `Counter::ALL[k]`, the
/// register order the scoreboard reads.
#[test]
fn counter_events_follow_the_register_order() {
    for (k, c) in Counter::ALL.iter().enumerate() {
        assert_eq!(
            fanin_hdl::core::states::event(*c).val(),
            Bits::<32>::from(1u64 << k),
            "{c:?}"
        );
    }
}

/// A random frame for the ingress checksum test: mostly IPv4 with IHL 5..15 (random
/// options) and a correct header checksum, some with IHL < 5 or another ethertype; then
/// possibly a corrupted header bit or checksum, or truncated anywhere (at least 1 byte).
fn ip_frame(rng: &mut impl Rng, max_len: usize) -> Vec<u8> {
    let ihl: usize = if rng.gen_bool(0.1) {
        rng.gen_range(0..5)
    } else {
        rng.gen_range(5..=15)
    };
    let hl = 4 * ihl;
    let pay = rng.gen_range(0..=max_len - 14 - 60);
    let mut f: Vec<u8> = (0..14 + hl.max(20) + pay).map(|_| rng.gen()).collect();
    if rng.gen_bool(0.9) {
        f[12] = 0x08;
        f[13] = 0x00;
    }
    f[14] = 0x40 | ihl as u8;
    let tl = (f.len() - 14) as u16;
    f[16..18].copy_from_slice(&tl.to_be_bytes());
    if hl >= 20 {
        let mut p = Ipv4Packet::new_unchecked(&mut f[14..]);
        p.fill_checksum();
    }
    match rng.gen_range(0..10) {
        0 | 1 => {
            let i = rng.gen_range(14..14 + hl.max(20));
            f[i] ^= 1 << rng.gen_range(0..8);
        }
        2 => {
            f[24] = rng.gen();
            f[25] = rng.gen();
        }
        3..=5 => f.truncate(rng.gen_range(1..f.len())),
        _ => {}
    }
    f
}

/// A random IPv4/UDP frame for the ingress UDP checksum test: IHL 5, a UDP length of 8
/// bytes up (a third of them under 30, so that the datagram ends inside the beat that holds
/// the length at every width), random Ethernet padding after it, and a UDP checksum that is
/// correct, zero (absent), or wrong (a corrupted datagram or pseudo-header byte).
fn udp_frame(rng: &mut impl Rng, max_len: usize) -> Vec<u8> {
    let ulen = if rng.gen_bool(0.33) {
        rng.gen_range(8..30)
    } else {
        rng.gen_range(8..=max_len - 42)
    };
    let pad = if rng.gen_bool(0.5) {
        0
    } else {
        rng.gen_range(1..=(max_len - 34 - ulen).min(40))
    };
    let mut f: Vec<u8> = (0..34 + ulen + pad).map(|_| rng.gen()).collect();
    f[12..14].copy_from_slice(&[0x08, 0x00]);
    f[14] = 0x45;
    f[16..18].copy_from_slice(&((20 + ulen) as u16).to_be_bytes());
    f[20..22].copy_from_slice(&[0, 0]);
    f[23] = 17;
    f[38..40].copy_from_slice(&(ulen as u16).to_be_bytes());
    let (src, dst) = (
        Ipv4Addr::new(f[26], f[27], f[28], f[29]),
        Ipv4Addr::new(f[30], f[31], f[32], f[33]),
    );
    UdpPacket::new_unchecked(&mut f[34..34 + ulen])
        .fill_checksum(&IpAddress::Ipv4(src), &IpAddress::Ipv4(dst));
    match rng.gen_range(0..10) {
        0 | 1 => f[40..42].copy_from_slice(&[0, 0]),
        2 | 3 => {
            // Any datagram byte but the length, or a pseudo-header address byte.
            let i = if rng.gen_bool(0.8) {
                *[34, 35, 36, 37, 40, 41]
                    .iter()
                    .chain(&(42..34 + ulen).collect::<Vec<_>>())
                    .nth(rng.gen_range(0..ulen - 2))
                    .unwrap()
            } else {
                rng.gen_range(26..34)
            };
            f[i] ^= 1 << rng.gen_range(0..8);
        }
        _ => {}
    }
    Ipv4Packet::new_unchecked(&mut f[14..34]).fill_checksum();
    f
}

fn bits_of<const N: usize>(bytes: &[u8]) -> Bits<N> {
    let mut b = Bits::<N>::default();
    for (i, byte) in bytes.iter().enumerate() {
        for k in 0..8 {
            if (byte >> k) & 1 == 1 {
                b = b.replace_bit(i * 8 + k, true);
            }
        }
    }
    b
}

/// Streams random frames through an ingress port (random idle cycles, random bytes after
/// the end of the last beat, some `tuser`-bad or oversize frames that must leave no
/// descriptor) and checks every descriptor's `d_ip_ok`: against smoltcp's
/// `Ipv4Packet::verify_checksum` wherever the frame holds the whole IPv4 header, and
/// against `ip_hdr_ok` for frames whose last beat was padded with zeros; and its
/// `d_udp_ok` against the model's `udp_checksum_ok` for every well-formed IPv4/UDP frame.
fn rx_checksums_match_model<const DW: usize, const KW: usize, const WB: usize>(frames: usize) {
    let seed = std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7u64)
        + DW as u64;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let kw = DW / 8;
    let wbb = WB / 8;
    let max_frame = 200;
    let mut uut = Rx::<DW, KW, WB>::new(32, max_frame);
    uut.connect_all();
    uut.rst.next = true;
    tick(&mut uut, |u| &mut u.clock);
    uut.rst.next = false;
    // (frame, last beat padded with zeros), in commit order.
    let mut want: VecDeque<(Vec<u8>, bool)> = VecDeque::new();
    let (mut checked, mut model_checked, mut model_bad, mut opts) = (0, 0, 0, 0);
    let (mut udp_checked, mut udp_bad, mut udp_short) = (0, 0, 0);
    let mut cyc = 0usize;
    // One cycle: drive `beat` (if any), pop a descriptor if one is valid; true if the beat
    // was accepted.
    let mut step = |uut: &mut Rx<DW, KW, WB>,
                    rng: &mut rand_chacha::ChaCha8Rng,
                    want: &mut VecDeque<(Vec<u8>, bool)>,
                    beat: Option<(&[u8], bool, bool, bool)>|
     -> bool {
        cyc += 1;
        assert!(cyc < 200_000, "seed {seed} DW {DW}: stuck");
        uut.d_pop.next = false;
        uut.rel.next = false;
        match beat {
            Some((bytes, zeros, last, bad)) => {
                let mut b = bytes.to_vec();
                while b.len() < kw {
                    b.push(if zeros { 0 } else { rng.gen() });
                }
                uut.tdata.next = bits_of::<DW>(&b);
                let mut keep = Bits::<KW>::default();
                for i in 0..bytes.len() {
                    keep = keep.replace_bit(i, true);
                }
                uut.tkeep.next = keep;
                uut.tvalid.next = true;
                uut.tlast.next = last;
                uut.tuser.next = bad && last;
            }
            None => {
                uut.tvalid.next = false;
                uut.tdata.next = bits_of::<DW>(&(0..kw).map(|_| rng.gen()).collect::<Vec<u8>>());
                uut.tlast.next = rng.gen();
            }
        }
        settle(uut);
        let acc = uut.tvalid.val() && uut.tready.val();
        if uut.d_valid.val() {
            let (f, zeros) = want
                .pop_front()
                .expect("descriptor without a committed frame");
            assert_eq!(
                uut.d_len.val().index(),
                f.len(),
                "seed {seed} DW {DW}: length"
            );
            if let FrameKind::Ipv4 {
                udp: Some(Ok(_)), ..
            } = classify(&f)
            {
                assert_eq!(
                    uut.d_udp_ok.val(),
                    udp_checksum_ok(&f),
                    "seed {seed} DW {DW}: d_udp_ok vs the model: {f:02x?}"
                );
                udp_checked += 1;
                udp_bad += !udp_checksum_ok(&f) as usize;
                udp_short += (f.len() >= 40 && u16::from_be_bytes([f[38], f[39]]) < 30) as usize;
            }
            let got = uut.d_ip_ok.val();
            if let Some(m) = model_ip_ok(&f) {
                assert_eq!(got, m, "seed {seed} DW {DW}: d_ip_ok vs smoltcp: {f:02x?}");
                model_checked += 1;
                model_bad += !m as usize;
                opts += (f[14] & 15 > 5) as usize;
            }
            if zeros {
                assert_eq!(
                    got,
                    ip_hdr_ok(&f),
                    "seed {seed} DW {DW}: d_ip_ok vs helper: {f:02x?}"
                );
            }
            checked += 1;
            let rows = if f.len() > 64 {
                (f.len() - 64).div_ceil(wbb)
            } else {
                0
            };
            uut.d_pop.next = true;
            uut.rel.next = true;
            uut.rel_row.next = ((uut.d_row.val().index() + rows) as u64).into();
            settle(uut);
        }
        tick(uut, |u| &mut u.clock);
        acc
    };
    for _ in 0..frames {
        let mut f = if rng.gen_bool(0.5) {
            ip_frame(&mut rng, max_frame)
        } else {
            udp_frame(&mut rng, max_frame)
        };
        let mut bad = false;
        match rng.gen_range(0..20) {
            0 => bad = true,
            1 => f.resize(max_frame + 1 + rng.gen_range(0..40), 0x55),
            _ => {}
        }
        let zeros = rng.gen_bool(0.5);
        let beats = f.len().div_ceil(kw);
        let mut b = 0;
        while b < beats {
            if rng.gen_bool(0.15) {
                step(&mut uut, &mut rng, &mut want, None);
                continue;
            }
            let chunk = &f[b * kw..f.len().min((b + 1) * kw)];
            let last = b == beats - 1;
            if last && !bad && f.len() <= max_frame {
                // Committed at the tick that accepts it; queued before the pop can see it.
                want.push_back((f.clone(), zeros));
            }
            if step(
                &mut uut,
                &mut rng,
                &mut want,
                Some((chunk, zeros, last, bad)),
            ) {
                b += 1;
            } else if last && !bad && f.len() <= max_frame {
                want.pop_back();
            }
        }
    }
    for _ in 0..50 {
        step(&mut uut, &mut rng, &mut want, None);
    }
    assert!(
        want.is_empty(),
        "seed {seed} DW {DW}: {} frames never committed",
        want.len()
    );
    assert!(
        checked > frames * 3 / 4 && model_checked > frames / 2 && model_bad > frames / 20 && opts > frames / 8,
        "seed {seed} DW {DW}: {checked} descriptors, {model_checked} checked against smoltcp ({model_bad} bad, {opts} with options)"
    );
    assert!(
        udp_checked > frames / 3 && udp_bad > frames / 20 && udp_short > frames / 10,
        "seed {seed} DW {DW}: {udp_checked} UDP verdicts checked ({udp_bad} bad, {udp_short} shorter than 30)"
    );
}

/// `Rx::d_ip_ok` and `d_udp_ok` at DATA_W 64 (the IPv4 header spans up to 10 beats; byte 14 in beat 1).
#[test]
fn rx_checksums_match_model_64() {
    rx_checksums_match_model::<64, 8, 128>(300);
}

/// `Rx::d_ip_ok` and `d_udp_ok` at DATA_W 256 (byte 14 in beat 0; a long header ends in beat 2).
#[test]
fn rx_checksums_match_model_256() {
    rx_checksums_match_model::<256, 32, 512>(300);
}

/// `Rx::d_ip_ok` and `d_udp_ok` at DATA_W 512 (`alveo`: the UDP length in beat 0, one-beat
/// frames back to back).
#[test]
fn rx_checksums_match_model_512() {
    rx_checksums_match_model::<512, 64, 2048>(300);
}

/// The element count's limit is the wire's (`MAX_WIRE_ELEMENTS`, as `Repr::parse`), not a
/// switch's lane count: a contribution of 257 elements parses (an unknown job, or
/// `TooManyElements` after the lookup), one of `MAX_WIRE_ELEMENTS + 1` is malformed, with
/// lengths that agree so that no other check decides.
#[test]
fn parser_element_limit_is_the_wires() {
    let most = fanin_proto::wire::MAX_WIRE_ELEMENTS;
    let mut uut = Parser::default();
    uut.connect_all();
    for (n, want) in [
        (1, FrameClass::Fanin),
        (256, FrameClass::Fanin),
        (257, FrameClass::Fanin),
        (most, FrameClass::Fanin),
        (most + 1, FrameClass::Malformed),
    ] {
        let repr = Repr {
            ptype: PacketType::Contribution,
            flags: fanin_proto::wire::Flags(0),
            exponent: 0,
            job: 9,
            elements: n,
            block: 1,
            child: 0,
            bitmap: 1,
        };
        let payload = repr.to_bytes(&vec![3; n as usize]);
        let f = Datagram {
            src: L4Addr {
                mac: [2, 0, 0, 0, 0, 9],
                ip: Ipv4Addr::new(10, 0, 0, 9),
                port: 5000,
            },
            dst: L4Addr {
                mac: [2, 0, 0, 0, 0, 1],
                ip: ME,
                port: PORT,
            },
            payload: &payload,
        }
        .to_frame(false);
        assert_eq!(model_class(&f), want, "{n} elements: the model");
        uut.hdr.next = hdr_bits(&f);
        uut.len.next = (f.len() as u64).into();
        uut.me_ip.next = (u32::from(ME) as u64).into();
        uut.me_port.next = (PORT as u64).into();
        uut.udp_ok.next = true;
        uut.ip_ok.next = ip_hdr_ok(&f);
        settle(&mut uut);
        assert_eq!(uut.kind.val(), want, "{n} elements: the parser");
    }
}
