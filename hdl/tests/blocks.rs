//! rust-hdl native simulations of sub-blocks, checked against fanin-proto.

use core::net::Ipv4Addr;
use fanin_hdl::parse::{
    Parser, CLASS_FANIN, CLASS_MALFORMED, CLASS_NON_IP, CLASS_ROUTE, PARSE_BYTES, PARSE_W,
};
use fanin_hdl::sim::settle;
use fanin_proto::model::Counter;
use fanin_proto::wire::frame::{classify, udp_checksum_ok};
use fanin_proto::wire::{Datagram, FrameKind, L4Addr, Packet, PacketType, Repr};
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const PORT: u16 = fanin_proto::wire::FANIN_UDP_PORT;

/// The class the model gives a frame (`Switch::dispatch` up to the job lookup).
fn model_class(f: &[u8]) -> u64 {
    match classify(f) {
        FrameKind::NonIp => CLASS_NON_IP,
        FrameKind::BadIpv4(_) => CLASS_MALFORMED,
        FrameKind::Ipv4 { dst, .. } if dst != ME => CLASS_ROUTE,
        FrameKind::Ipv4 {
            udp: Some(Ok(_)), ..
        } if !udp_checksum_ok(f) => CLASS_MALFORMED,
        FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } if d.dst.port == PORT => match Packet::new_checked(d.payload) {
            Ok(p) if Repr::parse(&p).is_ok() => CLASS_FANIN,
            _ => CLASS_MALFORMED,
        },
        _ => CLASS_MALFORMED,
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
    let n = rng.gen_range(0..6u16);
    let bitmap: u64 = rng.gen::<u64>() | 1;
    let repr = Repr {
        ptype: if rng.gen_bool(0.5) {
            PacketType::Contribution
        } else {
            PacketType::Result
        },
        flags: fanin_proto::wire::Flags(rng.gen_range(0..32)),
        exponent: rng.gen(),
        job: rng.gen(),
        elements: n,
        block: rng.gen(),
        child: rng.gen(),
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
            // IPv4 options (IHL 6) with a correct checksum: routed when not for us, else malformed.
            if f.len() > 34 {
                f.splice(34..34, [1, 1, 1, 1]);
                f[14] = 0x46;
                let tl = u16::from_be_bytes([f[16], f[17]]) + 4;
                f[16..18].copy_from_slice(&tl.to_be_bytes());
                fix_csum(f, 24);
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

/// The parser agrees with the model's classification and header checks on random
/// well-formed and mutated frames.
#[test]
fn parser_matches_model() {
    let seed = std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(7u64);
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uut = Parser::default();
    uut.connect_all();
    let mut seen = [0usize; 4];
    for i in 0..300 {
        let mut f = fanin_frame(&mut rng);
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
        settle(&mut uut);
        let want = model_class(&f);
        let got = uut.kind.val().index() as u64;
        assert_eq!(got, want, "seed {seed} frame {i}: {:02x?}", f);
        seen[want as usize] += 1;
        if want == CLASS_FANIN {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(&f)
            else {
                unreachable!()
            };
            let r = Repr::parse(&Packet::new_checked(d.payload).unwrap()).unwrap();
            assert_eq!(uut.job.val().index() as u16, r.job);
            assert_eq!(uut.block.val().index() as u32, r.block);
            assert_eq!(uut.elements.val().index() as u16, r.elements);
            assert_eq!(uut.bitmap.val().to_u64(), r.bitmap);
            assert_eq!(uut.src_ip.val().index() as u32, u32::from(d.src.ip));
        }
    }
    assert!(
        seen.iter().all(|&n| n > 5),
        "every class exercised: {seen:?}"
    );
}

/// The counter indices the RTL hard-codes (`ev` bit k increments `Counter::ALL[k]`).
#[test]
fn counter_indices_match_the_model() {
    let used = [
        (14, Counter::UnknownJob),
        (15, Counter::Malformed),
        (18, Counter::Forwarded),
        (19, Counter::NoRoute),
        (20, Counter::NonIp),
    ];
    for (k, c) in used {
        assert_eq!(Counter::ALL[k], c, "hdl/src/core.rs uses bit {k} for {c:?}");
    }
}
