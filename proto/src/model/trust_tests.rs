//! Directed tests of sessions, source validation and slot hygiene (docs/protocol.md, "Trust").

use super::*;
use crate::config::{Mode, Trust};
use crate::join::{JoinHistory, JoinReply, Joiner};
use crate::plan::{self, Addressing, JobSpec};

fn spec(trust: Trust) -> JobSpec {
    JobSpec {
        job: 7,
        slot_count: 4,
        elements: 4,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust,
    }
}

/// A root with `n` workers and every protection on (first session at block 1000).
fn star(n: usize, trust: Trust) -> (Switch, plan::Plan) {
    let t = Trust {
        first_block: Some(1000),
        ..trust
    };
    let p = plan::build(&plan::star(n), spec(t)).unwrap();
    (Switch::new(&p.switches[0]).unwrap(), p)
}

fn contrib(p: &plan::Plan, rank: usize, block: u32, data: &[i32]) -> Vec<u8> {
    p.workers[rank].contribution_frame(block, 0, data)
}

fn decode(frame: &[u8]) -> (Repr, Vec<i32>) {
    let FrameKind::Ipv4 {
        udp: Some(Ok(d)), ..
    } = crate::wire::frame::classify(frame)
    else {
        panic!("not UDP")
    };
    let p = Packet::new_checked(d.payload).unwrap();
    (Repr::parse(&p).unwrap(), p.elements())
}

/// Every worker of `p` joins with nonce `nonce + rank` (worker `r` on port `r + 1`);
/// returns the session's first block, checked to be the same in every ACCEPT.
fn join_all(s: &mut Switch, p: &plan::Plan, nonce: u32) -> u32 {
    let mut js: Vec<Joiner> = p
        .workers
        .iter()
        .map(|a| Joiner::new(a.clone(), nonce + a.rank as u32, 10))
        .collect();
    let mut base = None;
    for r in 0..js.len() {
        assert!(js[r].poll(0));
        let out = s.handle(0, r as u8 + 1, &js[r].frame());
        let last = r + 1 == js.len();
        assert_eq!(
            out.verdict,
            if last {
                Verdict::SessionOpened
            } else {
                Verdict::Joined
            }
        );
        for o in out.outputs {
            for j in js.iter_mut() {
                if let JoinReply::Accepted(b) = j.receive(&o.frame) {
                    assert!(base.is_none_or(|x| x == b));
                    base = Some(b);
                }
            }
        }
    }
    assert!(
        js.iter().all(|j| j.base().is_some()),
        "every worker accepted"
    );
    base.unwrap()
}

/// The bug this fixes: a second allreduce of a job, with the same block numbering, got the
/// first one's sum. Now its blocks are fresh and an earlier session's block is refused.
#[test]
fn second_session_never_returns_the_first_sum() {
    let (mut s, p) = star(2, Trust::default());
    let b1 = join_all(&mut s, &p, 10);
    assert_eq!(b1, 1000);
    s.handle(1, 1, &contrib(&p, 0, b1, &[1, 2, 3, 4]));
    let r = s.handle(2, 2, &contrib(&p, 1, b1, &[10, 20, 30, 40]));
    assert_eq!(decode(&r.outputs[0].frame).1, vec![11, 22, 33, 44]);

    let b2 = join_all(&mut s, &p, 50);
    assert_eq!(b2, next_base(b1, 4));
    assert!(newer(b2, b1 + 8));
    // A sender still numbering from the first session is refused, never replayed.
    let r = s.handle(3, 1, &contrib(&p, 0, b1, &[7; 4]));
    assert_eq!(r.verdict, Verdict::Refused(RefuseReason::StaleBlock));
    let (repr, data) = decode(&r.outputs[0].frame);
    assert_eq!(repr.ptype, PacketType::Refuse);
    assert_eq!(
        (repr.block, repr.child, repr.bitmap),
        (b1, RefuseReason::StaleBlock as u8, 1)
    );
    assert!(data.is_empty());
    assert_eq!(r.outputs[0].port, 1, "refused out of the ingress port");
    // The second session's own sum.
    s.handle(4, 1, &contrib(&p, 0, b2, &[5; 4]));
    let r = s.handle(5, 2, &contrib(&p, 1, b2, &[6; 4]));
    assert_eq!(r.verdict, Verdict::Completed);
    assert_eq!(decode(&r.outputs[0].frame).1, vec![11; 4]);
    let c = s.counters();
    assert_eq!(c.get(Counter::Sessions), 2);
    assert_eq!(c.get(Counter::Joins), 4);
    assert_eq!(c.get(Counter::Refused), 1);
}

#[test]
fn contribution_before_any_session_is_refused() {
    let (mut s, p) = star(2, Trust::default());
    let r = s.handle(0, 1, &contrib(&p, 0, 1000, &[1; 4]));
    assert_eq!(r.verdict, Verdict::Refused(RefuseReason::NoSession));
    let (repr, _) = decode(&r.outputs[0].frame);
    assert_eq!(repr.child, RefuseReason::NoSession as u8);
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    // The worker sees the refusal of its own outstanding block.
    let mut w = crate::worker::Worker::new(
        p.workers[0].clone(),
        crate::worker::Sending {
            window: 1,
            retransmit_after: 10,
            first_block: 1000,
            exponent: 0,
        },
        &[1; 4],
    )
    .unwrap();
    assert_eq!(w.poll(0), vec![0]);
    assert_eq!(
        w.receive(&r.outputs[0].frame),
        crate::worker::Received::Refused {
            block: 1000,
            reason: RefuseReason::NoSession
        }
    );
}

#[test]
fn repeated_join_is_answered_with_the_same_session() {
    let (mut s, p) = star(2, Trust::default());
    let base = join_all(&mut s, &p, 10);
    // Rank 1's ACCEPT was lost: its JOIN again gets the same first block, opens nothing.
    let j = Joiner::new(p.workers[1].clone(), 11, 10);
    let r = s.handle(9, 2, &j.frame());
    assert_eq!(r.verdict, Verdict::JoinAnswered);
    let (repr, data) = decode(&r.outputs[0].frame);
    assert_eq!(
        (repr.ptype, repr.block, data),
        (PacketType::Accept, base, vec![11])
    );
    assert_eq!(s.counters().get(Counter::Sessions), 1);
    // A new nonce is a new allreduce: it waits for the other rank.
    let j = Joiner::new(p.workers[1].clone(), 99, 10);
    assert_eq!(s.handle(10, 2, &j.frame()).verdict, Verdict::Joined);
    assert_eq!(s.session(7).unwrap().pending, 0b10);
}

#[test]
fn session_open_frees_the_jobs_copies() {
    let (mut s, p) = star(2, Trust::default());
    let b = join_all(&mut s, &p, 1);
    s.handle(1, 1, &contrib(&p, 0, b, &[1; 4]));
    s.handle(1, 1, &contrib(&p, 0, b + 1, &[1; 4]));
    assert_eq!(s.counters().get(Counter::SlotsInUse), 2);
    // Rank 1 died; both restart the allreduce.
    join_all(&mut s, &p, 100);
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    assert_eq!(s.job_busy(7), Some(0));
}

#[test]
fn reset_job_closes_the_session_and_keeps_ids_fresh() {
    let (mut s, p) = star(2, Trust::default());
    let b1 = join_all(&mut s, &p, 1);
    s.handle(1, 1, &contrib(&p, 0, b1 + 3, &[1; 4]));
    assert!(s.reset_job(7));
    assert!(!s.reset_job(8));
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    let r = s.handle(2, 2, &contrib(&p, 1, b1 + 3, &[1; 4]));
    assert_eq!(r.verdict, Verdict::Refused(RefuseReason::NoSession));
    let b2 = join_all(&mut s, &p, 7);
    assert_eq!(
        b2,
        next_base(b1 + 3, 4),
        "beyond every block used before the reset"
    );
}

#[test]
fn forged_sources_are_dropped_and_counted() {
    let (mut s, p) = star(2, Trust::default());
    let b = join_all(&mut s, &p, 1);
    // Rank 0's packet sent from worker 1's address.
    let mut a = p.workers[0].clone();
    a.me = p.workers[1].me;
    let forged = a.contribution_frame(b, 0, &[9; 4]);
    assert_eq!(s.handle(1, 2, &forged).verdict, Verdict::BadSource);
    // The right address but another UDP port.
    let mut a = p.workers[0].clone();
    a.me.udp_port += 1;
    let forged = a.contribution_frame(b, 0, &[9; 4]);
    assert_eq!(s.handle(1, 1, &forged).verdict, Verdict::BadSource);
    // A stranger claiming rank 1 with BYPASS, on a port facing no child.
    let mut a = p.workers[1].clone();
    a.me.ip = core::net::Ipv4Addr::new(10, 9, 9, 9);
    let mut f = a.contribution_frame(b, 0, &[9; 4]);
    f[42 + 2] = Flags::BYPASS;
    let f = reseal(f);
    assert_eq!(s.handle(1, 0, &f).verdict, Verdict::BadSource);
    // A forged JOIN.
    let mut a = p.workers[0].clone();
    a.me.ip = core::net::Ipv4Addr::new(10, 9, 9, 9);
    let j = Joiner::new(a, 5, 1);
    assert_eq!(s.handle(1, 1, &j.frame()).verdict, Verdict::BadSource);
    let c = s.counters();
    assert_eq!(c.get(Counter::BadSource), 4);
    assert_eq!(c.get(Counter::SlotsInUse), 0);
    assert_eq!(c.get(Counter::Aggregated), 0);
    // The real workers are unaffected.
    s.handle(2, 1, &contrib(&p, 0, b, &[1; 4]));
    let r = s.handle(3, 2, &contrib(&p, 1, b, &[2; 4]));
    assert_eq!(decode(&r.outputs[0].frame).1, vec![3; 4]);
}

/// Recomputes the UDP checksum after a test mutated the payload.
fn reseal(mut f: Vec<u8>) -> Vec<u8> {
    f[40] = 0;
    f[41] = 0;
    f
}

#[test]
fn results_only_from_the_parent_link() {
    let nodes = plan::two_level(None);
    let p = plan::build(&nodes, spec(Trust::default())).unwrap();
    let mut a = Switch::new(&p.switches[1]).unwrap();
    let root = p.switches[0].clone();
    let res = Repr {
        ptype: PacketType::Result,
        flags: Flags(Flags::MULTICAST),
        exponent: 0,
        job: 7,
        elements: 4,
        block: 0,
        child: 0,
        bitmap: 0b1111,
    };
    let frame = Datagram {
        src: L4Addr {
            mac: root.mac,
            ip: root.ip,
            port: root.udp_port,
        },
        dst: a.address(),
        payload: &res.to_bytes(&[1; 4]),
    }
    .to_frame(false);
    // From below (a child's link): dropped.
    assert_eq!(a.handle(0, 1, &frame).verdict, Verdict::BadSource);
    assert_eq!(a.counters().get(Counter::BadSource), 1);
    // From the parent's link: multicast to the three children.
    let r = a.handle(0, 0, &frame);
    assert_eq!(r.verdict, Verdict::ResultForwarded);
    assert_eq!(r.outputs.len(), 3);
}

#[test]
fn join_passes_up_and_accept_comes_down_a_tree() {
    let nodes = plan::two_level(None);
    let t = Trust {
        first_block: Some(77),
        ..Trust::default()
    };
    let p = plan::build(&nodes, spec(t)).unwrap();
    let mut root = Switch::new(&p.switches[0]).unwrap();
    let mut a = Switch::new(&p.switches[1]).unwrap();
    let mut js: Vec<Joiner> = p
        .workers
        .iter()
        .map(|w| Joiner::new(w.clone(), 40 + w.rank as u32, 10))
        .collect();
    // Workers 0..3 sit under switch a (ports 1..3); worker 3 under the root (port 2).
    let mut accepts = Vec::new();
    for (r, j) in js.iter_mut().enumerate() {
        j.poll(0);
        if r < 3 {
            let up = a.handle(0, r as u8 + 1, &j.frame());
            assert_eq!(up.verdict, Verdict::JoinForwarded);
            let (repr, _) = decode(&up.outputs[0].frame);
            assert!(repr.flags.has(Flags::BYPASS));
            accepts.extend(root.handle(0, 1, &up.outputs[0].frame).outputs);
        } else {
            accepts.extend(root.handle(0, 2, &j.frame()).outputs);
        }
    }
    assert_eq!(root.counters().get(Counter::Sessions), 1);
    assert_eq!(accepts.len(), 4);
    for o in &accepts {
        for j in js.iter_mut() {
            j.receive(&o.frame);
        }
    }
    assert!(js.iter().all(|j| j.base() == Some(77)));
}

/// A REFUSE of an inner switch's aggregate comes back to that switch, which passes it down
/// to the children holding its ranks with its reason intact, so that each worker learns
/// why (and an ACCEPT addressed to the switch is passed down the same way).
#[test]
fn refuse_and_accept_pass_down_to_the_children_holding_their_ranks() {
    let t = Trust {
        first_block: Some(500),
        ..Trust::default()
    };
    let p = plan::build(&plan::two_level(None), spec(t)).unwrap();
    let mut root = Switch::new(&p.switches[0]).unwrap();
    let mut a = Switch::new(&p.switches[1]).unwrap();
    // No session yet: a's aggregate of ranks 0..3 is refused to a, and a passes the REFUSE
    // to its three workers.
    let mut up = Vec::new();
    for r in 0..3 {
        up = a
            .handle(0, r as u8 + 1, &contrib(&p, r, 9, &[1, 2, 3, 4]))
            .outputs;
    }
    assert_eq!(up.len(), 1, "a completes the block and sends it up");
    let refused = root.handle(0, 1, &up[0].frame);
    assert_eq!(refused.verdict, Verdict::Refused(RefuseReason::NoSession));
    let down = a.handle(0, 0, &refused.outputs[0].frame);
    assert_eq!(down.verdict, Verdict::Relayed);
    assert_eq!(
        down.outputs.iter().map(|o| o.port).collect::<Vec<_>>(),
        vec![1, 2, 3]
    );
    for (o, rank) in down.outputs.iter().zip(0u8..) {
        let FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } = crate::wire::frame::classify(&o.frame)
        else {
            panic!("not UDP")
        };
        assert_eq!(
            crate::join::refusal(d.payload, 7, rank),
            Some((9, RefuseReason::NoSession)),
            "rank {rank} learns why"
        );
    }
    // An ACCEPT for rank 1 addressed to a reaches worker 1 only, unchanged.
    let accept = Repr {
        ptype: PacketType::Accept,
        flags: Flags(0),
        exponent: 0,
        job: 7,
        elements: 1,
        block: 512,
        child: 0,
        bitmap: 1 << 1,
    };
    let payload = accept.to_bytes(&[41]);
    let f = crate::wire::Datagram {
        src: root.address(),
        dst: a.address(),
        payload: &payload,
    }
    .to_frame(true);
    let down = a.handle(0, 0, &f);
    assert_eq!(down.outputs.len(), 1);
    assert_eq!(down.outputs[0].port, 2);
    let (r, e) = decode(&down.outputs[0].frame);
    assert_eq!((r, e), (accept, vec![41]));
}

#[test]
fn idle_copies_are_reclaimed_in_static_mode() {
    let t = Trust {
        reclaim_idle: 100,
        ..Trust::default()
    };
    let (mut s, p) = star(2, t);
    let b = join_all(&mut s, &p, 3);
    s.handle(10, 1, &contrib(&p, 0, b, &[1; 4]));
    assert!(s.tick(109).is_empty());
    assert_eq!(s.counters().get(Counter::SlotsInUse), 1);
    s.tick(110);
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    assert_eq!(s.counters().get(Counter::IdleReclaims), 1);
    // Retransmissions recover the block exactly.
    s.handle(200, 1, &contrib(&p, 0, b, &[1; 4]));
    let r = s.handle(201, 2, &contrib(&p, 1, b, &[2; 4]));
    assert_eq!(decode(&r.outputs[0].frame).1, vec![3; 4]);
}

#[test]
fn progress_postpones_the_idle_reclaim() {
    let t = Trust {
        reclaim_idle: 100,
        ..Trust::default()
    };
    let (mut s, p) = star(3, t);
    let b = join_all(&mut s, &p, 3);
    s.handle(0, 1, &contrib(&p, 0, b, &[1; 4]));
    s.handle(90, 2, &contrib(&p, 1, b, &[1; 4]));
    s.tick(150);
    assert_eq!(s.counters().get(Counter::SlotsInUse), 1, "progress at 90");
    s.tick(190);
    assert_eq!(s.counters().get(Counter::IdleReclaims), 1);
}

#[test]
fn emitted_copies_become_stale_after_idle() {
    let nodes = plan::two_level(None);
    let t = Trust {
        reclaim_idle: 50,
        ..Trust::default()
    };
    let p = plan::build(&nodes, spec(t)).unwrap();
    let mut a = Switch::new(&p.switches[1]).unwrap();
    for r in 0..3 {
        a.handle(0, r as u8 + 1, &contrib(&p, r, 0, &[1; 4]));
    }
    assert_eq!(a.copy(0, 0).state, CopyState::Emitted);
    a.tick(50);
    assert_eq!(a.copy(0, 0).state, CopyState::Stale);
    assert_eq!(a.counters().get(Counter::SlotsInUse), 0);
}

#[test]
fn session_packets_for_a_job_without_sessions_are_malformed() {
    let (mut s, p) = star(2, Trust::OFF);
    let j = Joiner::new(p.workers[0].clone(), 5, 1);
    assert_eq!(
        s.handle(0, 1, &j.frame()).verdict,
        Verdict::Malformed(MalformedReason::NoSessions)
    );
    // And without sessions a contribution is taken at any block, from any source.
    assert_eq!(
        s.handle(0, 3, &contrib(&p, 0, 5, &[1; 4])).verdict,
        Verdict::Aggregated
    );
}

#[test]
fn join_with_wrong_shape_is_malformed() {
    let (mut s, p) = star(2, Trust::default());
    let j = Joiner::new(p.workers[0].clone(), 5, 1);
    let mut f = j.frame();
    // Two ranks in one JOIN.
    f[42 + 13] = 2;
    f[42 + 21] = 0b11;
    let f = reseal(f);
    assert!(matches!(
        s.handle(0, 1, &f).verdict,
        Verdict::Malformed(MalformedReason::Wire(WireError::BadSessionPacket))
    ));
}

/// A JOIN of allreduce 1 delayed past it reaches the root after the same rank's JOIN of
/// allreduce 2 and replaces its nonce: the session opens with an ACCEPT naming the old
/// nonce. Without its history the worker ignores it and the allreduce cannot start (its
/// new JOIN now waits for the session after); with it, the worker takes it. A late repeat
/// of the first session's ACCEPT is taken by neither.
#[test]
fn a_join_delayed_past_an_allreduce_does_not_stall_the_next() {
    let (mut s, p) = star(2, Trust::default());
    let base1 = join_all(&mut s, &p, 10);
    let old = Joiner::new(p.workers[0].clone(), 10, 10);
    let mut history = JoinHistory::default();
    history.record(10, Some(base1));
    // A repeat of the old JOIN while the first session is open gets its ACCEPT again
    // (nonce 10, base1): arriving late, during allreduce 2, it is nobody's.
    let out = s.handle(19, 1, &old.frame());
    assert_eq!(out.verdict, Verdict::JoinAnswered);
    let repeat = &out.outputs[0].frame;
    // Allreduce 2: rank 0 joins with nonce 20, then its stale JOIN (nonce 10) arrives.
    let mut plain = Joiner::new(p.workers[0].clone(), 20, 10);
    let mut kept = Joiner::new(p.workers[0].clone(), 20, 10).with_history(&history);
    assert_eq!(s.handle(20, 1, &plain.frame()).verdict, Verdict::Joined);
    assert_eq!(s.handle(21, 1, &old.frame()).verdict, Verdict::Joined);
    assert_eq!(plain.receive(repeat), JoinReply::Ignored);
    assert_eq!(kept.receive(repeat), JoinReply::Ignored);
    let other = Joiner::new(p.workers[1].clone(), 21, 10);
    let out = s.handle(22, 2, &other.frame());
    assert_eq!(out.verdict, Verdict::SessionOpened);
    let accept0 = &out
        .outputs
        .iter()
        .find(|o| decode(&o.frame).0.bitmap == 1)
        .expect("an ACCEPT for rank 0")
        .frame;
    assert_eq!(
        decode(accept0).1,
        vec![10],
        "the session opened with the stale nonce"
    );
    assert_eq!(plain.receive(accept0), JoinReply::Ignored);
    let JoinReply::Accepted(base2) = kept.receive(accept0) else {
        panic!("the worker with its history did not take its session");
    };
    assert!(newer(base2, base1));
    // Without the history, rank 0's next JOIN only joins the session after.
    assert_eq!(s.handle(30, 1, &plain.frame()).verdict, Verdict::Joined);
    assert_eq!(s.session(7).unwrap().pending, 0b01);
    let mut h = history.clone();
    h.record(20, Some(base2));
    assert_eq!(h.last_base(), Some(base2));
}
