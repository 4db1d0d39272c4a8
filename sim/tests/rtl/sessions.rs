//! Sessions through a Verilated inner switch (docs/rtl.md, "Sessions in the RTL").
//!
//! The tree of `plan::two_level`: inner switch `a` (workers 0..3, degree limit 2, so worker
//! 2 is bypassed) is the DUT, checked frame by frame and counter by counter against its own
//! model by the scoreboard; the root `r` is the reference model itself, as `fanin switchd`
//! would run it. Every allreduce opens a session: the workers' JOINs go up through `a` with
//! BYPASS, the root's ACCEPTs come down through `a` to the children holding their ranks, and
//! the blocks start where the ACCEPT says. Two allreduces run back to back with the same
//! block numbering in the workers' terms; each must end with its own exact sums. Between
//! them, forged and malformed session packets are sent to `a`. `FANIN_SEED` picks the seed.

use fanin_proto::config::{Mode, SourceCheck, Trust};
use fanin_proto::join::Joiner;
use fanin_proto::model::{Counter, Switch};
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{
    frame::classify, Datagram, Flags, FrameKind, L4Addr, PacketType, RefuseReason, Repr,
};
use fanin_proto::worker::Sending;
use fanin_sim::allreduce::Host;
use fanin_sim::tb::{Pacing, Tb};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::*;

const ELEMENTS: usize = 200;

struct Tree {
    a: Tb,
    sa: fanin_sim::scoreboard::Scoreboard,
    r: Switch,
    p: plan::Plan,
    a_up: usize,
    r_to_a: u8,
    /// (under `a`, port) of each rank.
    at: Vec<(bool, usize)>,
    seen: Vec<usize>,
    now: u64,
}

impl Tree {
    /// Frames for the workers, after running `a` and the root for a few cycles.
    fn step(&mut self, hosts: &mut [Host], data: &[Vec<i32>], sending: Sending) {
        let mut to_workers: Vec<Vec<u8>> = Vec::new();
        let mut to_root: Vec<(u8, Vec<u8>)> = Vec::new();
        for (rank, h) in hosts.iter_mut().enumerate() {
            let (under_a, port) = self.at[rank];
            for f in h.poll(self.now) {
                if under_a {
                    self.a.src[port].push(f, false);
                } else {
                    to_root.push((port as u8, f));
                }
            }
        }
        for _ in 0..8 {
            self.a.step();
            self.now += 1;
        }
        for port in 0..self.a.ports() {
            let new: Vec<Vec<u8>> = self.a.sink[port].frames[self.seen[port]..]
                .iter()
                .map(|f| f.data.clone())
                .collect();
            self.seen[port] = self.a.sink[port].frames.len();
            for f in new {
                if port == self.a_up {
                    to_root.push((self.r_to_a, f));
                } else {
                    to_workers.push(f);
                }
            }
        }
        let w3 = self.p.workers[3].me.ip;
        for (port, f) in to_root {
            for o in self.r.handle(self.now, port, &f).outputs {
                let dst = match classify(&o.frame) {
                    FrameKind::Ipv4 { dst, .. } => dst,
                    _ => continue,
                };
                if o.port == self.r_to_a && dst != w3 {
                    self.a.src[self.a_up].push(o.frame, false);
                } else {
                    to_workers.push(o.frame);
                }
            }
        }
        for f in to_workers {
            let FrameKind::Ipv4 { dst, .. } = classify(&f) else {
                continue;
            };
            for (rank, h) in hosts.iter_mut().enumerate() {
                let a = &self.p.workers[rank];
                if a.me.ip != dst {
                    continue;
                }
                h.receive(&f, a, sending, &data[rank]).unwrap();
            }
        }
    }

    /// One allreduce of `data` (one tensor per rank) with fresh nonces; the results by rank.
    fn allreduce(&mut self, rng: &mut ChaCha8Rng, data: &[Vec<i32>], what: &str) -> Vec<Vec<i32>> {
        let sending = Sending {
            window: 4,
            retransmit_after: 40_000,
            first_block: 0,
            exponent: 0,
        };
        let mut hosts: Vec<Host> = (0..4)
            .map(|rank| {
                let a = self.p.workers.iter().find(|w| w.rank == rank).unwrap();
                Host::Joining(Joiner::new(a.clone(), rng.gen_range(1..u32::MAX), 40_000))
            })
            .collect();
        let start = self.now;
        while hosts.iter().any(|h| !h.done()) {
            if self.now - start > 2_000_000 {
                // Say why: a mismatch with the model first, else where the hosts are.
                self.a.drain(300, 200_000).unwrap();
                if let Err(e) = self.sa.replay(&self.a) {
                    panic!("{what}: the allreduce did not finish; the DUT differs: {e}");
                }
                finish(&mut self.a, &mut self.sa, what, Pacing::CORNERS[0], 0);
                let st: Vec<String> = hosts
                    .iter()
                    .map(|h| match h {
                        Host::Joining(j) => format!("joining ({} JOINs)", j.sent()),
                        Host::Sending(w) => format!("sending (done {})", w.done()),
                    })
                    .collect();
                let sinks: Vec<usize> = self.a.sink.iter().map(|s| s.frames.len()).collect();
                panic!(
                    "{what}: the allreduce did not finish: {st:?}; a_up {} r_to_a {} at {:?} sinks {sinks:?}; a: {:?}; r: {:?}",
                    self.a_up, self.r_to_a, self.at,
                    self.sa.model.counters(),
                    self.r.counters()
                );
            }
            self.step(&mut hosts, data, sending);
        }
        hosts.iter().map(|h| h.result().unwrap()).collect()
    }
}

/// The ports of `a` other than its uplink on which it sent a `ptype` packet for `block`.
fn relayed(t: &Tree, ptype: PacketType, block: u32) -> Vec<usize> {
    (0..t.a.ports())
        .filter(|&p| p != t.a_up)
        .flat_map(|p| t.a.sink[p].frames.iter().map(move |f| (p, f)))
        .filter(|(_, f)| {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(&f.data)
            else {
                return false;
            };
            let Ok(pk) = fanin_proto::wire::Packet::new_checked(d.payload) else {
                return false;
            };
            Repr::parse(&pk).is_ok_and(|r| r.ptype == ptype && r.block == block)
        })
        .map(|(p, _)| p)
        .collect()
}

fn session_frame(src: L4Addr, dst: L4Addr, r: Repr, payload: &[i32]) -> Vec<u8> {
    Datagram {
        src,
        dst,
        payload: &r.to_bytes(payload),
    }
    .to_frame(true)
}

#[test]
fn sessions_through_an_inner_switch_match_the_model_and_never_mix_allreduces() {
    for pacing in [Pacing::CORNERS[0], Pacing::CORNERS[3]] {
        let s = seed();
        let spec = JobSpec {
            job: 5,
            slot_count: 4,
            elements: 16,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust {
                sessions: true,
                source_check: SourceCheck::IpPort,
                reclaim_idle: 0,
                first_block: Some(40),
            },
        };
        let p = plan::build(&plan::two_level(Some(2)), spec).unwrap();
        let core = core();
        let (rc, ac) = (fold(&p.switches[0], &core), fold(&p.switches[1], &core));
        fanin_regs::check_loadable(&ac).expect("an inner switch with sessions loads");
        let (a, sa) = setup_with(&ac, pacing, s);
        let port_to = |cfg: &fanin_proto::config::SwitchConfig, ip| {
            cfg.routes.iter().find(|x| x.ip == ip).unwrap().port
        };
        let at = (0..4)
            .map(|rank| {
                let ip = p.workers.iter().find(|w| w.rank == rank).unwrap().me.ip;
                if rank < 3 {
                    (true, port_to(&ac, ip) as usize)
                } else {
                    (false, port_to(&rc, ip) as usize)
                }
            })
            .collect();
        let mut t = Tree {
            a_up: port_to(&ac, rc.ip) as usize,
            r_to_a: port_to(&rc, ac.ip),
            seen: vec![0; a.ports()],
            a,
            sa,
            r: Switch::new(&rc).unwrap(),
            at,
            p,
            now: 0,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let tensors = |rng: &mut ChaCha8Rng| -> Vec<Vec<i32>> {
            (0..4)
                .map(|_| (0..ELEMENTS).map(|_| rng.gen_range(-1000..1000)).collect())
                .collect()
        };
        let sum = |d: &[Vec<i32>]| -> Vec<i32> {
            (0..ELEMENTS)
                .map(|i| d.iter().map(|x| x[i]).sum())
                .collect()
        };
        let idle = Sending {
            window: 1,
            retransmit_after: 1,
            first_block: 0,
            exponent: 0,
        };
        // Before any session: workers 0 and 1 send block 7; `a` (which keeps no session
        // state) completes it and sends the aggregate up from its own address; the root
        // refuses it to `a` (no session), and `a` passes the REFUSE, reason intact, down to
        // both (worker 2 is bypassed by the degree limit).
        for rank in 0..2 {
            let f = t.p.workers[rank].contribution_frame(7, 0, &[1; 16]);
            t.a.src[t.at[rank].1].push(f, false);
        }
        for _ in 0..500 {
            t.step(&mut [], &[], idle);
        }
        assert_eq!(
            relayed(&t, PacketType::Refuse, 7),
            vec![t.at[0].1, t.at[1].1],
            "{pacing:?} seed {s}: the root's refusal of a's aggregate reaches both workers"
        );
        let first = tensors(&mut rng);
        for (rank, got) in t.allreduce(&mut rng, &first, "first").iter().enumerate() {
            assert_eq!(got, &sum(&first), "{pacing:?} seed {s}: first, rank {rank}");
        }

        // Forged and malformed session packets at `a`: an ACCEPT and a REFUSE from a child's
        // port (bad_source), an ACCEPT for a rank outside the job, a JOIN with a forged
        // source, a JOIN with nonce 0 and a REFUSE with an unknown reason (malformed).
        let me = L4Addr {
            mac: ac.mac,
            ip: ac.ip,
            port: ac.udp_port,
        };
        let w0 = &t.p.workers[0];
        let w0_src = L4Addr {
            mac: w0.me.mac,
            ip: w0.me.ip,
            port: w0.me.udp_port,
        };
        let r_src = L4Addr {
            mac: [2, 0, 0, 0, 0, 0x77],
            ip: rc.ip,
            port: rc.udp_port,
        };
        let hdr = |ptype, block, child, bitmap, elements| Repr {
            ptype,
            flags: Flags(0),
            exponent: 0,
            job: 5,
            elements,
            block,
            child,
            bitmap,
        };
        let p0 = t.at[0].1;
        let forged = [
            (p0, w0_src, hdr(PacketType::Accept, 99, 0, 1, 1), vec![7]),
            (
                p0,
                w0_src,
                hdr(PacketType::Refuse, 99, RefuseReason::StaleBlock as u8, 1, 0),
                vec![],
            ),
            (
                t.a_up,
                r_src,
                hdr(PacketType::Accept, 99, 0, 1 << 9, 1),
                vec![7],
            ),
            (
                p0,
                L4Addr {
                    port: w0.me.udp_port ^ 1,
                    ..w0_src
                },
                hdr(PacketType::Join, 1234, 0, 1, 0),
                vec![],
            ),
            (p0, w0_src, hdr(PacketType::Join, 0, 0, 1, 0), vec![]),
            (t.a_up, r_src, hdr(PacketType::Refuse, 9, 7, 1, 0), vec![]),
            // From the parent's port and addressed to `a`: relayed to the children holding
            // the ranks (rank 1's child; ranks 0 and 1's children).
            (
                t.a_up,
                r_src,
                hdr(PacketType::Accept, 99, 0, 1 << 1, 1),
                vec![7],
            ),
            (
                t.a_up,
                r_src,
                hdr(PacketType::Refuse, 19, 1, 0b01, 0),
                vec![],
            ),
            (
                t.a_up,
                r_src,
                hdr(PacketType::Refuse, 29, 1, 0b10, 0),
                vec![],
            ),
            (
                t.a_up,
                r_src,
                hdr(
                    PacketType::Refuse,
                    9,
                    RefuseReason::NoSession as u8,
                    0b11,
                    0,
                ),
                vec![],
            ),
        ];
        for (port, src, r, payload) in forged {
            let f = session_frame(src, me, r, &payload);
            t.a.src[port].push(f, false);
        }
        // A block from before the open session, from workers 0 and 1: its copies at `a` hold
        // newer blocks, so `a` passes both on as stragglers and the root refuses each
        // (stale), straight to its worker.
        for rank in 0..2 {
            let f = t.p.workers[rank].contribution_frame(38, 0, &[1; 16]);
            t.a.src[t.at[rank].1].push(f, false);
        }
        for _ in 0..2000 {
            t.step(&mut [], &[], idle);
        }
        assert_eq!(relayed(&t, PacketType::Accept, 99), vec![t.at[1].1]);
        assert_eq!(relayed(&t, PacketType::Refuse, 19), vec![t.at[0].1]);
        assert_eq!(relayed(&t, PacketType::Refuse, 29), vec![t.at[1].1]);
        assert_eq!(
            relayed(&t, PacketType::Refuse, 9),
            vec![t.at[0].1, t.at[1].1]
        );
        assert_eq!(
            relayed(&t, PacketType::Refuse, 38),
            vec![t.at[0].1, t.at[1].1],
            "{pacing:?} seed {s}: the root's refusals of the stale block reach both workers"
        );

        // The second allreduce: the workers number their blocks from the new ACCEPT's base,
        // and must get their own sums, never the first allreduce's.
        let second = tensors(&mut rng);
        for (rank, got) in t.allreduce(&mut rng, &second, "second").iter().enumerate() {
            assert_eq!(
                got,
                &sum(&second),
                "{pacing:?} seed {s}: second, rank {rank}"
            );
        }
        let Tree {
            mut a, mut sa, r, ..
        } = t;
        finish(&mut a, &mut sa, "sessions: inner a", pacing, s);
        let c = sa.model.counters();
        assert_eq!(c.get(Counter::Joins), 6, "three JOINs per allreduce at a");
        assert_eq!(c.get(Counter::BadSource), 3, "three forged sources");
        assert_eq!(
            c.get(Counter::Malformed),
            3,
            "the three malformed session packets"
        );
        assert_eq!(
            r.counters().get(Counter::Sessions),
            2,
            "two sessions opened"
        );
    }
}

/// The workers of a star whose root is the DUT: JOIN, then the allreduce from the ACCEPT's
/// first block; the results by rank. Frames the DUT sends to a worker are kept in
/// `inbox[rank]` as well.
#[allow(clippy::too_many_arguments)]
fn star_allreduce(
    tb: &mut Tb,
    p: &plan::Plan,
    port_of: &dyn Fn(usize) -> usize,
    seen: &mut [usize],
    inbox: &mut [Vec<Vec<u8>>],
    rng: &mut ChaCha8Rng,
    data: &[Vec<i32>],
    what: &str,
) -> Vec<Vec<i32>> {
    let n = p.workers.len();
    let sending = Sending {
        window: 4,
        retransmit_after: 40_000,
        first_block: 0,
        exponent: 0,
    };
    let mut hosts: Vec<Host> = (0..n)
        .map(|rank| {
            Host::Joining(Joiner::new(
                p.workers[rank].clone(),
                rng.gen_range(1..u32::MAX),
                40_000,
            ))
        })
        .collect();
    let mut now = 0u64;
    while hosts.iter().any(|h| !h.done()) {
        assert!(now < 2_000_000, "{what}: the allreduce did not finish");
        for (rank, h) in hosts.iter_mut().enumerate() {
            for f in h.poll(now) {
                tb.src[port_of(rank)].push(f, false);
            }
        }
        for _ in 0..8 {
            tb.step();
            now += 1;
        }
        for (port, seen) in seen.iter_mut().enumerate() {
            let new: Vec<Vec<u8>> = tb.sink[port].frames[*seen..]
                .iter()
                .map(|f| f.data.clone())
                .collect();
            *seen = tb.sink[port].frames.len();
            for f in new {
                let FrameKind::Ipv4 { dst, .. } = classify(&f) else {
                    continue;
                };
                for (rank, h) in hosts.iter_mut().enumerate() {
                    let a = &p.workers[rank];
                    if a.me.ip != dst {
                        continue;
                    }
                    inbox[rank].push(f.clone());
                    h.receive(&f, a, sending, &data[rank]).unwrap();
                }
            }
        }
    }
    hosts.iter().map(|h| h.result().unwrap()).collect()
}

/// A star of three workers whose root is the DUT, with every protection on: the plan, the
/// (folded) configuration, the programmed testbench and its scoreboard.
fn star_with_sessions(
    job: u16,
    reclaim_idle: u64,
    first_block: u32,
    pacing: Pacing,
    seed: u64,
) -> (
    plan::Plan,
    fanin_proto::config::SwitchConfig,
    Tb,
    fanin_sim::scoreboard::Scoreboard,
) {
    let spec = JobSpec {
        job,
        slot_count: 4,
        elements: 16,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: Trust {
            sessions: true,
            source_check: SourceCheck::IpPort,
            reclaim_idle,
            first_block: Some(first_block),
        },
    };
    let p = plan::build(&plan::star(3), spec).unwrap();
    let cfg = fold(&p.switches[0], &core());
    let (tb, sb) = setup_with(&cfg, pacing, seed);
    (p, cfg, tb, sb)
}

/// Moves the frames the DUT sent since `seen` into the inbox of the worker they address.
fn collect(tb: &Tb, p: &plan::Plan, seen: &mut [usize], inbox: &mut [Vec<Vec<u8>>]) {
    for (port, seen) in seen.iter_mut().enumerate() {
        for f in &tb.sink[port].frames[*seen..] {
            if let FrameKind::Ipv4 { dst, .. } = classify(&f.data) {
                for (r, w) in p.workers.iter().enumerate() {
                    if w.me.ip == dst {
                        inbox[r].push(f.data.clone());
                    }
                }
            }
        }
        *seen = tb.sink[port].frames.len();
    }
}

/// Every packet of type `ptype` in `inbox`, as (block, child, first element).
fn of_type(inbox: &[Vec<u8>], ptype: PacketType) -> Vec<(u32, u8, Option<i32>)> {
    inbox
        .iter()
        .filter_map(|f| {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(f)
            else {
                return None;
            };
            let pk = fanin_proto::wire::Packet::new_checked(d.payload).ok()?;
            let r = Repr::parse(&pk).ok()?;
            (r.ptype == ptype).then(|| (r.block, r.child, pk.elements().first().copied()))
        })
        .collect()
}

/// Sessions at a Verilated root (a star of three workers, every protection on): a
/// contribution before any session is refused (no session); two allreduces back to back
/// each open a session and end with their own exact sums; the second starts beyond every
/// block of the first (`next_base`); a JOIN repeated with the open session's nonce is
/// answered again with the same first block; a contribution of the first session after the
/// second opened is refused (stale). Every frame and counter is compared with the model.
#[test]
fn sessions_at_a_root_match_the_model_and_never_mix_allreduces() {
    for pacing in [Pacing::CORNERS[0], Pacing::CORNERS[3]] {
        let s = seed();
        let (p, _, mut tb, mut sb) = star_with_sessions(9, 0, 1000, pacing, s);
        let ports = tb.ports();
        let port_of = |r: usize| fold_port(1 + r as u8, ports as u8) as usize;
        let mut seen = vec![0; ports];
        let mut inbox = vec![Vec::new(); 3];
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let tensors = |rng: &mut ChaCha8Rng| -> Vec<Vec<i32>> {
            (0..3)
                .map(|_| (0..ELEMENTS).map(|_| rng.gen_range(-1000..1000)).collect())
                .collect()
        };
        let sum = |d: &[Vec<i32>]| -> Vec<i32> {
            (0..ELEMENTS)
                .map(|i| d.iter().map(|x| x[i]).sum())
                .collect()
        };
        // Before any session.
        let f = p.workers[0].contribution_frame(1000, 0, &[5; 16]);
        tb.src[port_of(0)].push(f, false);
        tb.drain(300, 200_000).unwrap();
        let first = tensors(&mut rng);
        let got = star_allreduce(
            &mut tb, &p, &port_of, &mut seen, &mut inbox, &mut rng, &first, "first",
        );
        for (rank, g) in got.iter().enumerate() {
            assert_eq!(g, &sum(&first), "{pacing:?} seed {s}: first, rank {rank}");
        }
        assert_eq!(
            of_type(&inbox[0], PacketType::Refuse),
            vec![(1000, RefuseReason::NoSession as u8, None)],
            "{pacing:?} seed {s}: refused before any session"
        );
        let accepts = of_type(&inbox[1], PacketType::Accept);
        assert_eq!(accepts.len(), 1);
        assert_eq!(
            accepts[0].0, 1000,
            "the first session starts at first_block"
        );
        // Worker 1 repeats its JOIN (as if the ACCEPT was lost): the same ACCEPT again.
        let nonce = accepts[0].2.unwrap() as u32;
        let again = Joiner::new(p.workers[1].clone(), nonce, 1);
        tb.src[port_of(1)].push(again.frame(), false);
        // Worker 0 starts block 1014 of the first session and nobody follows: the copy is
        // held until the next session opens and frees the job's copies.
        let f = p.workers[0].contribution_frame(1014, 0, &[3; 16]);
        tb.src[port_of(0)].push(f, false);
        tb.drain(300, 200_000).unwrap();
        assert_eq!(
            tb.read(fanin_regs::JOB_BUSY_BASE).unwrap(),
            1,
            "{pacing:?} seed {s}: block 1014 holds a copy"
        );
        let second = tensors(&mut rng);
        let got = star_allreduce(
            &mut tb, &p, &port_of, &mut seen, &mut inbox, &mut rng, &second, "second",
        );
        for (rank, g) in got.iter().enumerate() {
            assert_eq!(g, &sum(&second), "{pacing:?} seed {s}: second, rank {rank}");
        }
        // (The repeat's ACCEPT may have come after the loop moved on.)
        collect(&tb, &p, &mut seen, &mut inbox);
        let accepts = of_type(&inbox[1], PacketType::Accept);
        assert_eq!(accepts.len(), 3, "{accepts:?}");
        assert_eq!(accepts[1], accepts[0], "the repeated JOIN's ACCEPT");
        // 1000 + 13 blocks and block 1014: high 1014, next_base(1014, 4) = 1024.
        assert_eq!(accepts[2].0, 1024, "the second session starts at next_base");
        // Contributions of the open session, back to back, the newest first: block 1040 + 4t
        // from worker t, then older ones from the others (other slot copies, so decisions may
        // follow two cycles apart), for t = 0, 1, 2: `high` must end at 1048, and a third
        // session start at next_base(1048) = 1064 (next_base(1047) would be 1056).
        for top in 0..3 {
            let f = p.workers[top].contribution_frame(1040 + 4 * top as u32, 0, &[1; 16]);
            tb.src[port_of(top)].push(f, false);
            for r in (0..3).filter(|&r| r != top) {
                for k in 1..4 {
                    let b = 1040 + 4 * top as u32 - k;
                    let f = p.workers[r].contribution_frame(b, 0, &[1; 16]);
                    tb.src[port_of(r)].push(f, false);
                }
            }
            tb.drain(300, 200_000).unwrap();
        }
        for r in 0..3 {
            let j = Joiner::new(p.workers[r].clone(), 77 + r as u32, 1);
            tb.src[port_of(r)].push(j.frame(), false);
        }
        tb.drain(300, 200_000).unwrap();
        collect(&tb, &p, &mut seen, &mut inbox);
        let third = of_type(&inbox[2], PacketType::Accept);
        assert_eq!(
            third.last().map(|a| (a.0, a.2)),
            Some((1064, Some(79))),
            "{pacing:?} seed {s}: the third session starts beyond the newest block"
        );
        // A block of the first session now: stale.
        let f = p.workers[2].contribution_frame(1005, 0, &[5; 16]);
        tb.src[port_of(2)].push(f, false);
        finish(&mut tb, &mut sb, "sessions: root", pacing, s);
        collect(&tb, &p, &mut seen, &mut inbox);
        assert_eq!(
            of_type(&inbox[2], PacketType::Refuse),
            vec![(1005, RefuseReason::StaleBlock as u8, None)],
            "{pacing:?} seed {s}: refused as stale"
        );
        let c = sb.model.counters();
        assert_eq!(c.get(Counter::Sessions), 3);
        assert_eq!(c.get(Counter::Refused), 2);
        assert_eq!(c.get(Counter::Joins), 10, "nine JOINs and the repeat");
    }
}

/// Campaign (c) of the trust issue with every protection on, sessions included: bursts of
/// forged and malformed traffic from strangers (every packet type, the job's own and
/// others, block ids around the sessions'), each beside an allreduce that opens a session;
/// every allreduce ends with its own exact sums, the strangers' packets land in
/// `bad_source` or `malformed` (or are refused), and every frame and counter matches the
/// model. `FANIN_SEED` picks the seed, `FANIN_SIM_RUNS` the number of runs.
#[test]
fn stray_traffic_beside_allreduces_with_every_protection_matches_the_model() {
    use fanin_proto::forge;
    let runs = sim_runs(2);
    for i in 0..runs {
        let s = seed() + i;
        let pacing = Pacing::CORNERS[(i % 4) as usize];
        let (p, cfg, mut tb, mut sb) = star_with_sessions(7, 3000, 64, pacing, s);
        let ports = tb.ports();
        let port_of = |r: usize| fold_port(1 + r as u8, ports as u8) as usize;
        let mut seen = vec![0; ports];
        let mut inbox = vec![Vec::new(); 3];
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let me = L4Addr {
            mac: cfg.mac,
            ip: cfg.ip,
            port: cfg.udp_port,
        };
        for round in 0..3 {
            // The burst, on port 0 (no worker there): it is taken while the allreduce runs.
            for _ in 0..150 {
                let target = forge::Target {
                    job: 7,
                    ranks: 3,
                    elements: 16,
                    first_block: 64 + 16 * round,
                    other_jobs: 0.2,
                    session_types: true,
                };
                let f = stranger_frame(&mut rng, &target, me, 0.15);
                tb.src[0].push(f, false);
            }
            let data: Vec<Vec<i32>> = (0..3)
                .map(|_| (0..ELEMENTS).map(|_| rng.gen_range(-1000..1000)).collect())
                .collect();
            let want: Vec<i32> = (0..ELEMENTS)
                .map(|k| data.iter().map(|d| d[k]).sum())
                .collect();
            let what = format!("stray round {round}");
            let got = star_allreduce(
                &mut tb, &p, &port_of, &mut seen, &mut inbox, &mut rng, &data, &what,
            );
            for (rank, g) in got.iter().enumerate() {
                assert_eq!(g, &want, "{pacing:?} seed {s}: round {round}, rank {rank}");
            }
        }
        finish(&mut tb, &mut sb, "stray+sessions", pacing, s);
        let c = sb.model.counters();
        assert_eq!(c.get(Counter::Sessions), 3, "seed {s}");
        assert!(
            c.get(Counter::BadSource) > 0,
            "seed {s}: forged sources counted"
        );
        assert!(
            c.get(Counter::Malformed) > 0,
            "seed {s}: malformed packets counted"
        );
    }
}
