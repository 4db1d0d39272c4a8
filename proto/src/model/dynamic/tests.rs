//! Unit tests of dynamic mode on one switch: interception, windows, stragglers, results.

use super::*;
use crate::config::{JobEntry, Role, Route, SwitchConfig, Trust};
use crate::model::Switch;

const JOB: u16 = 5;
const LEADER: Ipv4Addr = Ipv4Addr::new(10, 0, 9, 9);

fn host(rank: u8) -> L4Addr {
    L4Addr {
        mac: [2, 0, 0, 0, 1, rank],
        ip: Ipv4Addr::new(10, 0, 1, rank),
        port: 40000 + rank as u16,
    }
}

fn leader() -> L4Addr {
    L4Addr {
        mac: [2, 0, 0, 0, 9, 9],
        ip: LEADER,
        port: crate::wire::FANIN_UDP_PORT,
    }
}

fn entry(flush_after: u64) -> JobEntry {
    JobEntry {
        job: JOB,
        role: Role::Root,
        mode: Mode::Dynamic {
            flush_after,
            reclaim_after: 1000,
        },
        degree_limit: 1,
        children: vec![],
        // Ranks 0..=3; rank 3 leads block 3 (and every block 3 mod 4).
        ranks: 0b1111,
        ranks_hi: vec![],
        slot_base: 4,
        slot_count: 4,
        quota: 0,
        trust: Trust::OFF,
    }
}

/// A switch: ports 0..=2 face ranks 0..=2, port 3 leads to the leader (rank 3).
fn switch(flush_after: u64) -> Switch {
    let mut cfg = SwitchConfig::new("leaf", [2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 1, 0, 1));
    cfg.routes.push(Route {
        ip: LEADER,
        port: 3,
    });
    cfg.jobs.push(entry(flush_after));
    Switch::new(&cfg).unwrap()
}

fn contribution(rank: u8, block: u32, data: &[i32], flags: u8) -> Vec<u8> {
    let r = Repr {
        ptype: PacketType::Contribution,
        flags: Flags(flags),
        exponent: 0,
        job: JOB,
        elements: data.len() as u16,
        block,
        child: 0,
        bitmap: 1 << rank,
    };
    Datagram {
        src: host(rank),
        dst: leader(),
        payload: &r.to_bytes(data),
    }
    .to_frame(false)
}

fn result(block: u32, bitmap: u64, data: &[i32]) -> Vec<u8> {
    let r = Repr {
        ptype: PacketType::Result,
        flags: Flags(Flags::MULTICAST),
        exponent: 0,
        job: JOB,
        elements: data.len() as u16,
        block,
        child: 0,
        bitmap,
    };
    Datagram {
        src: leader(),
        dst: L4Addr {
            mac: BROADCAST_MAC,
            ip: BROADCAST,
            port: crate::wire::FANIN_UDP_PORT,
        },
        payload: &r.to_bytes(data),
    }
    .to_frame(false)
}

fn parse(frame: &[u8]) -> (Ipv4Addr, Repr, Vec<i32>) {
    let crate::wire::FrameKind::Ipv4 {
        dst,
        udp: Some(Ok(d)),
    } = crate::wire::frame::classify(frame)
    else {
        panic!("not a UDP frame");
    };
    let p = Packet::new_checked(d.payload).unwrap();
    (dst, Repr::parse(&p).unwrap(), p.elements())
}

#[test]
fn leader_is_round_robin_over_the_ranks() {
    let ranks = 0b1011_0000;
    let leaders: Vec<u32> = (0..5).map(|b| leader_rank(ranks, b)).collect();
    assert_eq!(leaders, [4, 5, 7, 4, 5]);
    assert_eq!(expected(ranks, 2), 0b0011_0000);
}

#[test]
fn contributions_in_transit_are_summed_and_the_result_goes_down_the_recorded_ports() {
    let mut s = switch(100);
    for (rank, port) in [(0u8, 0u8), (1, 1)] {
        let r = s.handle(10, port, &contribution(rank, 3, &[rank as i32 + 1, 10], 0));
        assert_eq!(r.verdict, Verdict::Aggregated);
        assert!(r.outputs.is_empty());
    }
    let r = s.handle(11, 2, &contribution(2, 3, &[3, 10], 0));
    assert_eq!(r.verdict, Verdict::Completed);
    assert_eq!(r.outputs.len(), 1);
    assert_eq!(r.outputs[0].port, 3);
    let (dst, repr, data) = parse(&r.outputs[0].frame);
    assert_eq!(dst, LEADER);
    assert_eq!(repr.bitmap, 0b0111);
    assert!(!repr.flags.has(Flags::PARTIAL));
    assert_eq!(data, [6, 30]);
    assert_eq!(s.dynamic().busy(JOB), Some(1));
    // Regression: a copy flushed because it held every rank was not counted (`completions`).
    assert_eq!(s.counters().get(Counter::Completions), 1);
    assert_eq!(s.counters().get(Counter::Timeouts), 0);

    let r = s.handle(20, 3, &result(3, 0b0111, &[10, 40]));
    assert_eq!(r.verdict, Verdict::ResultForwarded);
    let ports: Vec<u8> = r.outputs.iter().map(|o| o.port).collect();
    assert_eq!(ports, [0, 1, 2]);
    for o in &r.outputs {
        let (dst, repr, data) = parse(&o.frame);
        assert_eq!(dst, BROADCAST);
        assert!(repr.flags.has(Flags::MULTICAST));
        assert_eq!(data, [10, 40]);
    }
    assert_eq!(s.dynamic().copy(JOB, 3).unwrap().state, CopyState::Done);
    assert_eq!(s.dynamic().busy(JOB), Some(0));
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    // A second copy of the result is dropped.
    let r = s.handle(21, 3, &result(3, 0b0111, &[10, 40]));
    assert_eq!(r.verdict, Verdict::Duplicate);
    assert!(r.outputs.is_empty());
}

#[test]
fn duplicates_are_suppressed_and_the_timer_flushes_a_partial() {
    let mut s = switch(100);
    let f = contribution(0, 3, &[5], 0);
    assert_eq!(s.handle(0, 0, &f).verdict, Verdict::Aggregated);
    assert_eq!(s.handle(1, 0, &f).verdict, Verdict::Duplicate);
    assert!(s.tick(99).is_empty());
    let out = s.tick(100);
    assert_eq!(out.len(), 1);
    let (_, repr, data) = parse(&out[0].frame);
    assert_eq!(repr.bitmap, 0b0001);
    assert!(repr.flags.has(Flags::PARTIAL));
    assert_eq!(data, [5]);
    assert_eq!(s.counters().get(Counter::Timeouts), 1);
    assert_eq!(s.counters().get(Counter::Completions), 0);
    // The same rank again after the flush: already sent up, dropped.
    assert_eq!(s.handle(101, 0, &f).verdict, Verdict::Duplicate);
    // A straggler: forwarded unchanged (no BYPASS), and its port recorded.
    let st = contribution(1, 3, &[7], 0);
    let r = s.handle(102, 1, &st);
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Straggler));
    assert_eq!(r.outputs, [Output { port: 3, frame: st }]);
    let r = s.handle(150, 3, &result(3, 0b0111, &[1]));
    let ports: Vec<u8> = r.outputs.iter().map(|o| o.port).collect();
    assert_eq!(ports, [0, 1]);
}

#[test]
fn bypass_passes_untouched_and_a_collision_is_sent_on_with_bypass() {
    let mut s = switch(100);
    let by = contribution(0, 3, &[5], Flags::BYPASS);
    let r = s.handle(0, 0, &by);
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Transit));
    assert_eq!(r.outputs, [Output { port: 3, frame: by }]);
    assert_eq!(s.dynamic().busy(JOB), Some(0));
    assert_eq!(
        s.handle(1, 0, &contribution(0, 3, &[5], 0)).verdict,
        Verdict::Aggregated
    );
    // Block 3 + 8 maps to the same copy (4 slots, 2 copies) while block 3 is busy.
    let r = s.handle(2, 1, &contribution(1, 11, &[6], 0));
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Collision));
    let (dst, repr, data) = parse(&r.outputs[0].frame);
    assert_eq!((dst, repr.block, data), (LEADER, 11, vec![6]));
    assert!(repr.flags.has(Flags::BYPASS));
}

#[test]
fn flushed_copies_are_reclaimed_and_a_newer_block_reuses_them() {
    let mut s = switch(10);
    s.handle(0, 0, &contribution(0, 3, &[5], 0));
    assert_eq!(s.tick(10).len(), 1);
    assert_eq!(s.dynamic().busy(JOB), Some(1));
    assert!(s.tick(1009).is_empty());
    assert!(s.tick(1010).is_empty());
    assert_eq!(s.dynamic().copy(JOB, 3).unwrap().state, CopyState::Stale);
    assert_eq!(s.dynamic().busy(JOB), Some(0));
    assert_eq!(s.counters().get(Counter::Reclaims), 1);
    // A late result still goes down the recorded port.
    let r = s.handle(1011, 3, &result(3, 0b0111, &[1]));
    assert_eq!(r.outputs.len(), 1);
    assert_eq!(
        s.handle(1012, 1, &contribution(1, 11, &[6], 0)).verdict,
        Verdict::Aggregated
    );
    // The older block is now only a duplicate.
    assert_eq!(
        s.handle(1013, 2, &contribution(2, 3, &[6], 0)).verdict,
        Verdict::Duplicate
    );
}

#[test]
fn the_leaders_rank_and_foreign_ranks_are_malformed() {
    let mut s = switch(10);
    let r = s.handle(0, 0, &contribution(3, 3, &[5], 0));
    assert_eq!(
        r.verdict,
        Verdict::Malformed(MalformedReason::RanksNotOfJob)
    );
    let r = s.handle(0, 0, &contribution(4, 3, &[5], 0));
    assert_eq!(
        r.verdict,
        Verdict::Malformed(MalformedReason::RanksNotOfJob)
    );
    assert_eq!(s.dynamic().busy(JOB), Some(0));
}

#[test]
fn other_traffic_is_switched_as_before() {
    let mut s = switch(10);
    let mut f = contribution(0, 3, &[5], 0);
    // Another job id: not intercepted, routed by the forwarding table.
    f[14 + 20 + 8 + 4..14 + 20 + 8 + 6].copy_from_slice(&77u16.to_be_bytes());
    let r = s.handle(0, 0, &f);
    assert_eq!(r.verdict, Verdict::Forwarded);
    assert_eq!(r.outputs[0].port, 3);
    // A unicast result to someone else is routed, not multicast.
    let res = result(3, 1, &[1]);
    let crate::wire::FrameKind::Ipv4 {
        udp: Some(Ok(d)), ..
    } = crate::wire::frame::classify(&res)
    else {
        unreachable!()
    };
    let uni = Datagram {
        src: d.src,
        dst: leader(),
        payload: d.payload,
    }
    .to_frame(false);
    assert_eq!(s.handle(1, 0, &uni).verdict, Verdict::Forwarded);
}

#[test]
fn dynamic_jobs_count_toward_the_job_table() {
    let mut cfg = SwitchConfig::new("leaf", [2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 1, 0, 1));
    cfg.params.max_jobs = 1;
    cfg.routes.push(Route {
        ip: LEADER,
        port: 3,
    });
    cfg.jobs.push(entry(10));
    let mut s = Switch::new(&cfg).unwrap();
    let mut other = entry(10);
    other.job = JOB + 1;
    other.slot_base = 0;
    let e = s.set_job(other).unwrap_err().to_string();
    assert!(e.contains("exceed the job table"), "{e}");
    // Replacing the same job is allowed, and removing it frees its busy copies.
    s.set_job(entry(10)).unwrap();
    s.handle(0, 0, &contribution(0, 3, &[5], 0));
    assert_eq!(s.counters().get(Counter::SlotsInUse), 1);
    assert!(s.remove_job(JOB));
    assert_eq!(s.counters().get(Counter::SlotsInUse), 0);
    assert!(!s.dynamic().has(JOB));
}

#[test]
fn bad_dynamic_entries_are_refused_by_name() {
    let p = Params::default();
    let mut e = entry(10);
    e.trust = Trust::default();
    let err = e.validate(&p).unwrap_err().to_string();
    assert!(
        err.starts_with("job 5: dynamic mode has no sessions"),
        "{err}"
    );
    let mut e = entry(10);
    e.ranks = 1;
    assert!(e
        .validate(&p)
        .unwrap_err()
        .to_string()
        .contains("at least 2 ranks"));
    let mut e = entry(0);
    e.mode = Mode::Dynamic {
        flush_after: 0,
        reclaim_after: 5,
    };
    assert!(e
        .validate(&p)
        .unwrap_err()
        .to_string()
        .contains("at least 1 tick"));
    let p = Params {
        ports: 65,
        ..Params::default()
    };
    assert!(entry(10)
        .validate(&p)
        .unwrap_err()
        .to_string()
        .contains("64-bit set"));
}

#[test]
fn the_leader_counts_each_rank_once() {
    let ranks = 0b1111;
    let mut b = LeaderBlock::new(ranks, 3, &[100]);
    let rep = |bitmap: u64, flags: u8| Repr {
        ptype: PacketType::Contribution,
        flags: Flags(flags),
        exponent: 0,
        job: JOB,
        elements: 1,
        block: 3,
        child: 0,
        bitmap,
    };
    assert_eq!(b.take(host(0), &rep(0b011, 0), &[3]), LeaderEvent::Merged);
    assert_eq!(
        b.take(host(1), &rep(0b001, Flags::BYPASS), &[1]),
        LeaderEvent::Duplicate
    );
    assert_eq!(b.take(host(2), &rep(0b110, 0), &[9]), LeaderEvent::Overlap);
    assert_eq!(
        b.take(host(2), &rep(0b100, Flags::BYPASS), &[4]),
        LeaderEvent::Completed
    );
    assert_eq!(b.result, Some(vec![107]));
    assert_eq!(b.unicast, [host(1), host(2)]);
    assert_eq!(
        b.take(host(0), &rep(0b001, 0), &[1]),
        LeaderEvent::Duplicate
    );
}
