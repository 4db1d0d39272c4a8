//! Campaign (c) of the trust issue: stray and forged traffic through the Verilated core beside
//! a real allreduce, with the scoreboard comparing every frame and counter with the model.
//!
//! The first test runs the job with every trust protection off, so forged contributions with
//! a worker's rank are summed by both: the point is that the RTL and the model agree on every
//! input, hostile ones included. The second turns on what the RTL implements of them (source
//! validation and the idle reclaim; docs/rtl.md, "Trust in the RTL") and checks the real
//! allreduce's exact sums as well. Forged JOIN, ACCEPT and REFUSE packets go to the
//! configured job and to others. `FANIN_SEED` picks the seed, `FANIN_SIM_RUNS` the number
//! of runs.

use fanin_proto::config::{Mode, Trust};
use fanin_proto::forge;
use fanin_proto::model::Counter;
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{Datagram, L4Addr};
use fanin_sim::tb::Pacing;
use rand::{Rng, SeedableRng};

use crate::common::*;

#[test]
fn stray_traffic_beside_an_allreduce_matches_the_model() {
    let runs = sim_runs(4);
    let spec = JobSpec {
        job: 7,
        slot_count: 4,
        elements: 8,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: Trust::OFF,
    };
    let p = plan::build(&plan::star(3), spec).unwrap();
    let cfg = fold(&p.switches[0], &core());
    for i in 0..runs {
        let s = seed() + i;
        let pacing = Pacing::CORNERS[(i % 4) as usize];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s);
        let (mut tb, mut sb) = setup_with(&cfg, pacing, s);
        let me = me();
        let ports = tb.src.len();
        for n in 0..300u32 {
            // A real worker's contribution every third input.
            if n % 3 == 0 {
                let r = (n / 3 % 3) as usize;
                let b = n / 9;
                let data: Vec<i32> = (0..8).map(|k| (b * 10 + k) as i32).collect();
                let f = p.workers[r].contribution_frame(b, 0, &data);
                let port = fold_port(1 + r as u8, ports as u8) as usize;
                tb.src[port].push(f, false);
                continue;
            }
            let target = forge::Target {
                job: 7,
                ranks: 4,
                elements: 8,
                first_block: 0,
                other_jobs: 0.2,
                session_types: rng.gen_bool(0.4),
            };
            let f = stranger_frame(&mut rng, &target, me, 0.2);
            let port = rng.gen_range(0..ports);
            tb.src[port].push(f, false);
        }
        finish(&mut tb, &mut sb, "stray", pacing, s);
        let c = sb.model.counters();
        assert!(
            c.get(Counter::Malformed) > 0 && c.get(Counter::Aggregated) > 0,
            "seed {s}: the run reached malformed inputs and aggregation"
        );
        assert_eq!(
            c.get(Counter::BadSource),
            0,
            "no source checks in Trust::OFF"
        );
    }
}

/// The results the DUT sent for `block` (payloads of result frames to any worker).
fn results_for(tb: &fanin_sim::tb::Tb, block: u32) -> Vec<Vec<i32>> {
    use fanin_proto::wire::frame::classify;
    use fanin_proto::wire::{FrameKind, Packet, PacketType, Repr};
    let mut out = Vec::new();
    for s in &tb.sink {
        for f in &s.frames {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(&f.data)
            else {
                continue;
            };
            let Ok(p) = Packet::new_checked(d.payload) else {
                continue;
            };
            let Ok(r) = Repr::parse(&p) else { continue };
            if r.ptype == PacketType::Result && r.block == block {
                out.push(p.elements());
            }
        }
    }
    out
}

/// Campaign (c) with source validation and the idle reclaim on and sessions off (the
/// workers number their own blocks; with sessions too: `sessions.rs`): forged contributions and results from unconfigured sources are dropped as
/// `bad_source`, copies that a worker started and nobody finished are reclaimed after
/// `reclaim_idle` ticks, and the real allreduce beside it completes with exact sums, in the
/// RTL and the model alike (every frame and counter compared).
#[test]
fn stray_traffic_with_source_checks_and_the_idle_reclaim_matches_the_model() {
    use fanin_proto::config::SourceCheck;
    let runs = sim_runs(2);
    const IDLE: u64 = 3000;
    let spec = JobSpec {
        job: 7,
        slot_count: 4,
        elements: 8,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: Trust {
            sessions: false,
            source_check: SourceCheck::IpPort,
            reclaim_idle: IDLE,
            first_block: None,
        },
    };
    let p = plan::build(&plan::star(3), spec).unwrap();
    let cfg = fold(&p.switches[0], &core());
    let data = |r: usize, b: u32| -> Vec<i32> {
        (0..8)
            .map(|k| (b as i32 * 100 + k) * (r as i32 + 1))
            .collect()
    };
    let sum = |b: u32| -> Vec<i32> {
        (0..8)
            .map(|k| (0..3).map(|r| data(r, b)[k]).sum())
            .collect()
    };
    for i in 0..runs {
        let s = seed() + i;
        let pacing = Pacing::CORNERS[(i % 4) as usize];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s);
        let (mut tb, mut sb) = setup_with(&cfg, pacing, s);
        let me = me();
        let ports = tb.src.len();
        let port_of = |r: usize| fold_port(1 + r as u8, ports as u8) as usize;
        // Phase 1: blocks 0..8 of the real allreduce, among forged traffic from strangers.
        for n in 0..240u32 {
            if n % 3 == 0 {
                let r = (n / 3 % 3) as usize;
                let b = n / 9;
                if b < 8 {
                    let f = p.workers[r].contribution_frame(b, 0, &data(r, b));
                    tb.src[port_of(r)].push(f, false);
                }
                continue;
            }
            let target = forge::Target {
                job: 7,
                ranks: 3,
                elements: 8,
                first_block: 0,
                other_jobs: 0.0,
                session_types: false,
            };
            let payload = forge::forged_payload(&mut rng, &target);
            let src = L4Addr {
                mac: [2, 0, 0, 0, 0, 9],
                ip: [10, 200, rng.gen(), rng.gen()].into(),
                port: rng.gen(),
            };
            let f = Datagram {
                src,
                dst: me,
                payload: &payload,
            }
            .to_frame(true);
            // On port 0, where no worker is: on a worker's own link, a forged bypassed packet
            // with that worker's rank passes the (per-link) check by design.
            tb.src[0].push(f, false);
        }
        tb.drain(300, 2_000_000).unwrap();
        // Phase 2: worker 0 starts blocks 8..12 and the others never come: every copy of
        // the job is held until the idle reclaim frees it.
        for b in 8..12 {
            let f = p.workers[0].contribution_frame(b, 0, &data(0, b));
            tb.src[port_of(0)].push(f, false);
        }
        tb.drain(300, 2_000_000).unwrap();
        // Idle for the reclaim time, plus a sweep of the timer scan over every slot (a few
        // cycles per slot it skips: on the large configurations that is the longer wait).
        for _ in 0..3 * IDLE + 8 * core().slots as u64 {
            tb.step();
        }
        sb.replay(&tb).unwrap();
        let busy = tb.read(fanin_regs::JOB_BUSY_BASE).unwrap();
        assert_eq!(
            busy, 0,
            "seed {s}: copies still busy after the reclaim time and a sweep"
        );
        // Phase 3: every worker (worker 0 retransmitting) sends blocks 8..12.
        for b in 8..12 {
            for r in 0..3 {
                let f = p.workers[r].contribution_frame(b, 0, &data(r, b));
                tb.src[port_of(r)].push(f, false);
            }
        }
        finish(&mut tb, &mut sb, "stray+trust", pacing, s);
        let c = sb.model.counters();
        assert!(
            c.get(Counter::BadSource) > 0,
            "seed {s}: no forged packet was counted in bad_source"
        );
        assert_eq!(
            c.get(Counter::IdleReclaims),
            4,
            "seed {s}: the four held copies are reclaimed"
        );
        for b in 0..12 {
            let got = results_for(&tb, b);
            assert_eq!(got.len(), 3, "seed {s}: block {b}: one result per worker");
            for g in got {
                assert_eq!(g, sum(b), "seed {s}: block {b}: exact sum");
            }
        }
    }
}
