//! Arbitrary and mutated key-value datagrams against the parser and a switch with a
//! key-value job: no panics, exact round trips, and malformed input never changes state.
//! Seeded like the other property tests (PROPTEST_RNG_SEED, PROPTEST_CASES).

mod common;

use core::net::Ipv4Addr;
use proptest::prelude::*;

use fanin_proto::config::{Endpoint, SwitchConfig};
use fanin_proto::kv::switch::KvVerdict;
use fanin_proto::kv::wire::{KvRepr, KvType};
use fanin_proto::kv::KvJobEntry;
use fanin_proto::model::{Switch, Verdict};
use fanin_proto::wire::{Datagram, L4Addr, FANIN_UDP_PORT};

fn switch() -> Switch {
    let mut cfg = SwitchConfig::new("kv", [2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 9, 0, 1));
    cfg.kv_jobs.push(KvJobEntry {
        job: 1,
        arrays: 4,
        size: 64,
        channels: 4,
        window: 8,
        receiver: Endpoint {
            mac: [2, 0, 0, 0, 0, 2],
            ip: Ipv4Addr::new(10, 9, 0, 2),
            udp_port: 9000,
            port: 1,
        },
    });
    Switch::new(&cfg).unwrap()
}

fn frame(src_ip: Ipv4Addr, src_port: u16, payload: &[u8]) -> Vec<u8> {
    Datagram {
        src: L4Addr {
            mac: [2, 0, 0, 0, 0, 3],
            ip: src_ip,
            port: src_port,
        },
        dst: L4Addr {
            mac: [2, 0, 0, 0, 0, 1],
            ip: Ipv4Addr::new(10, 9, 0, 1),
            port: FANIN_UDP_PORT,
        },
        payload,
    }
    .to_frame(true)
}

fn state(s: &Switch) -> String {
    format!("{:?} {:?}", s.kv().memory(1).unwrap(), s.kv().epoch(1))
}

proptest! {
    #![proptest_config(common::config(0x4b56, 2000))]

    #[test]
    fn parser_never_panics_and_round_trips(mut bytes in prop::collection::vec(any::<u8>(), 0..600), t in 8u8..=13) {
        if bytes.len() >= 2 {
            bytes[0] = 1;
            bytes[1] = t;
        }
        if let Ok(r) = KvRepr::parse(&bytes) {
            prop_assert_eq!(r.to_bytes(), bytes);
        }
    }

    #[test]
    fn mutated_packets_never_corrupt_the_switch(muts in prop::collection::vec((0usize..60, any::<u8>()), 1..5), from_rx in any::<bool>()) {
        let mut s = switch();
        // Some state first: one absorbed data packet.
        let good = KvRepr {
            ktype: KvType::Data,
            reply: false,
            lane: 1,
            job: 1,
            seq: 0,
            copy: 0,
            aux: 0b1111,
            tuples: vec![(1, 1), (2, 2), (3, 3), (4, 4)],
        };
        let sender = Ipv4Addr::new(10, 9, 0, 3);
        s.handle(0, 0, &frame(sender, 5000, &good.to_bytes()));
        let before = state(&s);
        let mut b = KvRepr { seq: 1, ..good }.to_bytes();
        for (at, v) in muts {
            let i = at % b.len();
            b[i] = v;
        }
        let (ip, port) = if from_rx { (Ipv4Addr::new(10, 9, 0, 2), 9000) } else { (sender, 5000) };
        let r = s.handle(1, 0, &frame(ip, port, &b));
        match r.verdict {
            Verdict::Kv(KvVerdict::Malformed(_) | KvVerdict::UnknownJob) | Verdict::Malformed(_) => {
                prop_assert_eq!(state(&s), before);
                prop_assert!(r.outputs.is_empty());
            }
            Verdict::Kv(_) => {}
            other => prop_assert!(false, "unexpected verdict {:?}", other),
        }
    }
}
