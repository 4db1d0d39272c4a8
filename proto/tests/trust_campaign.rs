//! Campaign (a) of the trust issue: a structure-aware fuzz of `Switch::handle`.
//!
//! Two jobs share a root. A stream of hostile inputs, interleaved with timer scans, hits it:
//! well-formed headers of every type with random fields, forged ranks and child indices,
//! strangers' and wrong-port sources, mutated and random bytes. Meanwhile job B's workers run a
//! real allreduce. Checked: no panic; every input counted exactly once; the busy counts agree;
//! no copy stays busy past the idle-reclaim time; job B ends with the exact sum; job A, after
//! the storm, completes an allreduce with the exact sum.
//!
//! Seeded: `FANIN_CAMPAIGN_SEED` (default below) and `FANIN_CAMPAIGN_CASES` (a soak raises it);
//! a failure names its seed.

mod common;

use core::net::Ipv4Addr;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fanin_proto::config::{Mode, Trust};
use fanin_proto::forge;
use fanin_proto::join::{JoinReply, Joiner};
use fanin_proto::model::{Counter, Switch, Verdict};
use fanin_proto::plan::{self, Addressing, JobSpec, Plan};
use fanin_proto::wire::{Datagram, Flags, L4Addr};
use fanin_proto::worker::{Received, Sending, Worker};

const IDLE: u64 = 400;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

fn plans() -> (Vec<Plan>, Switch) {
    let mk = |job| {
        let spec = JobSpec {
            job,
            slot_count: 4,
            elements: 8,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust {
                reclaim_idle: IDLE,
                first_block: Some(job as u32 * 1_000_000),
                ..Trust::default()
            },
        };
        plan::build(&plan::star(3), spec).unwrap()
    };
    let ps = vec![mk(1), mk(2)];
    let cfgs = plan::merge(&ps).unwrap();
    let s = Switch::new(&cfgs[0]).unwrap();
    (ps, s)
}

/// Job B's (or A's) workers: join, then allreduce; frames go through `s` on port rank + 1.
struct Team {
    joiners: Vec<Joiner>,
    workers: Vec<Worker>,
    want: Vec<i32>,
}

impl Team {
    fn new(p: &Plan, rng: &mut ChaCha8Rng, nonce: u32) -> Self {
        let len = rng.gen_range(1..=40);
        let data: Vec<Vec<i32>> = (0..3)
            .map(|_| (0..len).map(|_| rng.gen_range(-1000..1000)).collect())
            .collect();
        let want = (0..len).map(|i| data.iter().map(|d| d[i]).sum()).collect();
        let sending = Sending {
            window: 4,
            retransmit_after: 30,
            first_block: 0,
            exponent: 0,
        };
        Self {
            joiners: p
                .workers
                .iter()
                .map(|a| Joiner::new(a.clone(), nonce + a.rank as u32, 30))
                .collect(),
            workers: p
                .workers
                .iter()
                .zip(&data)
                .map(|(a, d)| Worker::new(a.clone(), sending, d).unwrap())
                .collect(),
            want,
        }
    }

    fn done(&self) -> bool {
        self.workers.iter().all(|w| w.done())
    }

    /// One round at tick `now`; returns the number of inputs it gave the switch.
    fn step(&mut self, s: &mut Switch, now: u64) -> u64 {
        let mut frames = Vec::new();
        for (r, (j, w)) in self.joiners.iter_mut().zip(&mut self.workers).enumerate() {
            if j.base().is_none() {
                if j.poll(now) {
                    frames.push((r as u8 + 1, j.frame()));
                }
            } else {
                for b in w.poll(now) {
                    frames.push((r as u8 + 1, w.frame(b)));
                }
            }
        }
        let n = frames.len() as u64;
        for (port, f) in frames {
            for o in s.handle(now, port, &f).outputs {
                for (j, w) in self.joiners.iter_mut().zip(&mut self.workers) {
                    if j.base().is_none() {
                        if let JoinReply::Accepted(b) = j.receive(&o.frame) {
                            w.set_first_block(b);
                        }
                    } else {
                        let r = w.receive(&o.frame);
                        assert!(!matches!(r, Received::Refused { .. }), "refused: {r:?}");
                    }
                }
            }
        }
        n
    }

    fn check(&self, seed: u64, what: &str) {
        for w in &self.workers {
            let got = w.result().map(|r| r.0);
            assert_eq!(got.as_ref(), Some(&self.want), "seed {seed}: {what}");
        }
    }
}

/// One hostile input aimed at the job of plan `p` (or at nothing in particular).
fn hostile(rng: &mut ChaCha8Rng, p: &Plan, me: L4Addr, base: u32) -> (u8, Vec<u8>) {
    let port = rng.gen_range(0..5u8);
    if rng.gen_bool(0.15) {
        return (port, forge::junk(rng, 200));
    }
    let target = forge::Target {
        job: p.workers[0].job,
        ranks: 4,
        elements: 8,
        first_block: base,
        other_jobs: 0.1,
        session_types: true,
    };
    let payload = forge::forged_payload(rng, &target);
    // A stranger, or a worker's address with the wrong UDP port.
    let w = p.workers[rng.gen_range(0..p.workers.len())].me;
    let src = if rng.gen_bool(0.5) {
        L4Addr {
            mac: [2, 0, 0, 0, 0, 9],
            ip: Ipv4Addr::new(10, 200, rng.gen(), rng.gen()),
            port: rng.gen(),
        }
    } else {
        L4Addr {
            mac: w.mac,
            ip: w.ip,
            port: w.udp_port.wrapping_add(rng.gen_range(1..100)),
        }
    };
    let mut f = Datagram {
        src,
        dst: me,
        payload: &payload,
    }
    .to_frame(rng.gen_bool(0.5));
    if rng.gen_bool(0.1) {
        // Flips in the fanin header and payload (a flip in the addresses could forge a
        // worker's exact source, which no source check can tell from the worker).
        let i = rng.gen_range(42..f.len());
        f[i] ^= 1 << rng.gen_range(0..8);
    }
    // A bypass-flagged packet is checked by the link it arrives on (its source is a worker's
    // below some switch): a forged one on the link of the child whose ranks it claims cannot
    // be told from that child's (docs/protocol.md, "Trust"), so forgeries come from others.
    let claims = u64::from_be_bytes(f[56..64].try_into().expect("8 bytes"));
    let port = if f[44] & Flags::BYPASS != 0 && port >= 1 && claims >> (port - 1) & 1 == 1 {
        0
    } else {
        port
    };
    (port, f)
}

fn case(seed: u64) {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let (ps, mut s) = plans();
    let me = s.address();
    let mut b = Team::new(&ps[1], &mut rng, 100);
    let mut inputs = 0u64;
    let mut now = 0u64;
    let storm = rng.gen_range(200..2000);
    let base_a = ps[0].switches[0].jobs[0].trust.first_block.unwrap();
    for i in 0..storm {
        now += rng.gen_range(0..3);
        let (port, f) = hostile(&mut rng, &ps[0], me, base_a);
        let before = s.session(1).map(|x| x.pending);
        let v = s.handle(now, port, &f).verdict;
        if std::env::var("FANIN_CAMPAIGN_DEBUG").is_ok()
            && before != s.session(1).map(|x| x.pending)
        {
            eprintln!(
                "input {i} on port {port} changed job A's pending: {v:?} {:02x?}",
                &f
            );
        }
        inputs += 1;
        assert!(
            !matches!(
                v,
                Verdict::Aggregated | Verdict::Completed | Verdict::SessionOpened
            ),
            "seed {seed}: hostile input {i} was taken: {v:?}"
        );
        if i % 4 == 0 {
            inputs += b.step(&mut s, now);
        }
        if i % 16 == 0 {
            s.tick(now);
        }
        let busy = s.job_busy(1).unwrap() + s.job_busy(2).unwrap();
        assert_eq!(
            busy as u64,
            s.counters().get(Counter::SlotsInUse),
            "seed {seed}"
        );
        assert_eq!(
            common::accounted(&s),
            inputs,
            "seed {seed}: input {i} ({v:?})"
        );
    }
    // No copy outlives the idle time, whatever came in.
    s.tick(now + IDLE);
    assert_eq!(s.job_busy(1), Some(0), "seed {seed}: job A holds a copy");
    // Job B finishes exactly; then job A runs an allreduce of its own, exactly.
    let mut t = now + IDLE;
    while !b.done() && t < now + 200_000 {
        t += 1;
        b.step(&mut s, t);
        s.tick(t);
    }
    b.check(seed, "job B beside the storm");
    let mut a = Team::new(&ps[0], &mut rng, 500);
    while !a.done() && t < now + 400_000 {
        t += 1;
        a.step(&mut s, t);
        s.tick(t);
    }
    if !a.done() {
        eprintln!(
            "seed {seed}: job A stuck: session {:?}\ncounters {:?}\njoined {:?}",
            s.session(1).map(|x| (x.opened, x.base, x.high, x.pending)),
            s.counters().named(),
            a.joiners.iter().map(|j| j.base()).collect::<Vec<_>>()
        );
    }
    a.check(seed, "job A after the storm");
}

#[test]
fn hostile_streams_never_wedge_or_corrupt() {
    let first = env("FANIN_CAMPAIGN_SEED", 0x7a57);
    let cases = env("FANIN_CAMPAIGN_CASES", 40);
    for k in 0..cases {
        let seed = first.wrapping_add(k);
        if let Err(e) = std::panic::catch_unwind(|| case(seed)) {
            eprintln!("trust campaign failed at seed {seed} (rerun: FANIN_CAMPAIGN_SEED={seed} FANIN_CAMPAIGN_CASES=1)");
            std::panic::resume_unwind(e);
        }
    }
}
