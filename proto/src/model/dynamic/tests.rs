//! Unit tests of dynamic mode on one switch: interception, windows, stragglers, results.

use super::*;
use crate::config::{JobEntry, Role, Route, SwitchConfig, Trust};
use crate::model::Switch;
use crate::wire::{Packet, Repr, WideRepr};

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
    assert_eq!(expected(ranks, 2), RankSet::from_u64(0b0011_0000));
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
    assert_eq!(b.take(host(0), rep(0b011, 0), &[3]), LeaderEvent::Merged);
    assert_eq!(
        b.take(host(1), rep(0b001, Flags::BYPASS), &[1]),
        LeaderEvent::Duplicate
    );
    assert_eq!(b.take(host(2), rep(0b110, 0), &[9]), LeaderEvent::Overlap);
    assert_eq!(
        b.take(host(2), rep(0b100, Flags::BYPASS), &[4]),
        LeaderEvent::Completed
    );
    assert_eq!(b.result, Some(vec![107]));
    assert_eq!(b.unicast, [host(1), host(2)]);
    assert_eq!(b.take(host(0), rep(0b001, 0), &[1]), LeaderEvent::Duplicate);
}

// ---- Jobs of more than 64 ranks: header version 2 ----

/// `entry` with ranks 0..256 (rank `b mod 256` leads block `b`).
fn wide_entry(flush_after: u64) -> JobEntry {
    JobEntry {
        ranks: u64::MAX,
        ranks_hi: vec![u64::MAX; 3],
        ..entry(flush_after)
    }
}

fn wide_switch(flush_after: u64) -> Switch {
    let mut cfg = SwitchConfig::new("leaf", [2, 0, 0, 0, 0, 1], Ipv4Addr::new(10, 1, 0, 1));
    cfg.routes.push(Route {
        ip: LEADER,
        port: 3,
    });
    cfg.jobs.push(wide_entry(flush_after));
    Switch::new(&cfg).unwrap()
}

fn wide_repr(ptype: PacketType, block: u32, bitmap: RankSet, n: usize, flags: u8) -> WideRepr {
    WideRepr {
        version: crate::wire::VERSION_2,
        ptype,
        flags: Flags(flags),
        exponent: 0,
        job: JOB,
        elements: n as u16,
        block,
        child: 0,
        bitmap,
    }
}

/// A version-2 contribution of rank `rank` (its host is `host(rank mod 256)`).
fn contribution2(rank: u32, block: u32, data: &[i32], flags: u8) -> Vec<u8> {
    let r = wide_repr(
        PacketType::Contribution,
        block,
        RankSet::one(rank),
        data.len(),
        flags,
    );
    Datagram {
        src: host(rank as u8),
        dst: leader(),
        payload: &r.to_bytes(data),
    }
    .to_frame(false)
}

fn parse2(frame: &[u8]) -> (Ipv4Addr, WideRepr, Vec<i32>) {
    let crate::wire::FrameKind::Ipv4 {
        dst,
        udp: Some(Ok(d)),
    } = crate::wire::frame::classify(frame)
    else {
        panic!("not a UDP frame");
    };
    let r = WideRepr::parse(d.payload).unwrap();
    (dst, r, wide::elements(d.payload))
}

#[test]
fn a_256_rank_job_sums_version_2_contributions_exactly_once() {
    let mut s = wide_switch(100);
    let mut held = RankSet::EMPTY;
    for (i, rank) in [0u32, 100, 255].into_iter().enumerate() {
        let r = s.handle(10, i as u8, &contribution2(rank, 3, &[rank as i32, 1], 0));
        assert_eq!(r.verdict, Verdict::Aggregated, "rank {rank}");
        held.insert(rank);
    }
    // A duplicate of a rank above 64 is suppressed by the longer bitmap.
    let dup = contribution2(100, 3, &[100, 1], 0);
    assert_eq!(s.handle(11, 1, &dup).verdict, Verdict::Duplicate);
    let out = s.tick(110);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].port, 3);
    assert_eq!(out[0].frame.len(), crate::wire::PAYLOAD_OFFSET_V2 + 8);
    let (dst, repr, data) = parse2(&out[0].frame);
    assert_eq!(dst, LEADER);
    assert_eq!(repr.version, crate::wire::VERSION_2);
    assert_eq!(repr.bitmap, held);
    assert!(repr.flags.has(Flags::PARTIAL));
    assert_eq!(data, [355, 3]);
    // A straggler of rank 200 goes on unchanged (version 2, no BYPASS); its port is recorded.
    let late = contribution2(200, 3, &[200, 1], 0);
    let r = s.handle(120, 2, &late);
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Straggler));
    assert_eq!(r.outputs[0].frame, late);
    // The result (every rank) comes down the recorded ports in version 2.
    let res = wide_repr(
        PacketType::Result,
        3,
        RankSet::first(256),
        2,
        Flags::MULTICAST,
    );
    let frame = Datagram {
        src: leader(),
        dst: L4Addr {
            mac: BROADCAST_MAC,
            ip: BROADCAST,
            port: crate::wire::FANIN_UDP_PORT,
        },
        payload: &res.to_bytes(&[7, 256]),
    }
    .to_frame(false);
    let r = s.handle(130, 3, &frame);
    assert_eq!(r.verdict, Verdict::ResultForwarded);
    assert_eq!(
        r.outputs.iter().map(|o| o.port).collect::<Vec<_>>(),
        [0, 1, 2]
    );
    for o in &r.outputs {
        let (dst, repr, data) = parse2(&o.frame);
        assert_eq!(
            (dst, repr.bitmap, data),
            (BROADCAST, res.bitmap, vec![7, 256])
        );
    }
    assert_eq!(s.dynamic().busy(JOB), Some(0));
}

#[test]
fn a_256_rank_copy_completes_when_it_holds_all_255_other_ranks() {
    let mut s = wide_switch(1_000_000);
    // Block 300: leader rank 300 mod 256 = 44.
    let block = 300;
    assert_eq!(leader_rank(wide_entry(1).rank_set(), block), 44);
    let mut sum = 0;
    for rank in (0..256u32).filter(|&r| r != 44) {
        let r = s.handle(
            1,
            (rank % 3) as u8,
            &contribution2(rank, block, &[rank as i32], 0),
        );
        sum += rank as i32;
        let want = if rank == 255 {
            Verdict::Completed
        } else {
            Verdict::Aggregated
        };
        assert_eq!(r.verdict, want, "rank {rank}");
        // Every duplicate, of any word of the bitmap, is suppressed.
        let d = s.handle(1, 0, &contribution2(rank, block, &[rank as i32], 0));
        assert_eq!(d.verdict, Verdict::Duplicate, "rank {rank}");
        if rank == 255 {
            let (_, repr, data) = parse2(&r.outputs[0].frame);
            assert_eq!(repr.bitmap, expected(wide_entry(1).rank_set(), block));
            assert_eq!(repr.bitmap.count(), 255);
            assert!(!repr.flags.has(Flags::PARTIAL));
            assert_eq!(data, [sum]);
        }
    }
    assert_eq!(s.counters().get(Counter::Aggregated), 255);
    assert_eq!(s.counters().get(Counter::Duplicates), 255);
    // The leader's own rank and ranks outside the job are malformed.
    for rank in [44, 256, 511] {
        assert_eq!(
            s.handle(2, 0, &contribution2(rank, block, &[1], 0)).verdict,
            Verdict::Malformed(MalformedReason::RanksNotOfJob),
            "rank {rank}"
        );
    }
}

/// A version-1 packet of a wide job is malformed; a version-2 packet of a job that uses
/// version 1 is treated as before version 2 existed (not intercepted).
#[test]
fn a_packet_in_the_other_header_version_is_not_taken() {
    let mut s = wide_switch(10);
    let r = s.handle(0, 0, &contribution(0, 3, &[5], 0));
    assert_eq!(
        r.verdict,
        Verdict::Malformed(MalformedReason::Wire(WireError::BadVersion))
    );
    assert_eq!(s.counters().get(Counter::Malformed), 1);
    assert_eq!(s.dynamic().busy(JOB), Some(0));

    let mut narrow = switch(10);
    let v2 = contribution2(0, 3, &[5], 0);
    let r = narrow.handle(0, 0, &v2);
    assert_eq!(r.verdict, Verdict::Forwarded);
    assert_eq!(r.outputs[0].frame, v2);
    assert_eq!(narrow.dynamic().busy(JOB), Some(0));
}

/// A version-2 frame at a switch without wide jobs is handled exactly like a frame of an
/// unknown version (what the RTL does: `wire_bad0`): same verdict class, same counters, no
/// output, whether it is addressed to the switch or passing through.
#[test]
fn a_version_2_frame_at_a_version_1_switch_is_a_bad_version_frame() {
    use crate::config::{Child, Endpoint};
    let me = Ipv4Addr::new(10, 1, 0, 1);
    let mut cfg = SwitchConfig::new("root", [2, 0, 0, 0, 0, 1], me);
    cfg.routes.push(Route {
        ip: LEADER,
        port: 3,
    });
    let kid = |r: u8| Child {
        endpoint: Endpoint {
            mac: host(r).mac,
            ip: host(r).ip,
            udp_port: host(r).port,
            port: r,
        },
        ranks: 1 << r,
        below: 0,
    };
    cfg.jobs.push(JobEntry {
        mode: Mode::Static,
        degree_limit: 2,
        children: vec![kid(0), kid(1)],
        ranks: 0b11,
        ..entry(10)
    });
    let to_switch = |payload: &[u8]| {
        Datagram {
            src: host(0),
            dst: L4Addr {
                mac: cfg.mac,
                ip: me,
                port: crate::wire::FANIN_UDP_PORT,
            },
            payload,
        }
        .to_frame(false)
    };
    let v2 = wide_repr(PacketType::Contribution, 3, RankSet::one(0), 2, 0).to_bytes(&[1, 2]);
    let mut v3 = v2.clone();
    v3[0] = 3;
    for through in [false, true] {
        let mut a = Switch::new(&cfg).unwrap();
        let mut b = Switch::new(&cfg).unwrap();
        let (fa, fb) = if through {
            let f = |p: &[u8]| {
                Datagram {
                    src: host(0),
                    dst: leader(),
                    payload: p,
                }
                .to_frame(false)
            };
            (f(&v2), f(&v3))
        } else {
            (to_switch(&v2), to_switch(&v3))
        };
        let (ra, rb) = (a.handle(0, 0, &fa), b.handle(0, 0, &fb));
        assert_eq!(ra.verdict, rb.verdict, "through {through}");
        assert_eq!(a.counters(), b.counters(), "through {through}");
        if through {
            assert_eq!(ra.verdict, Verdict::Forwarded);
        } else {
            assert!(matches!(ra.verdict, Verdict::Malformed(_)), "{ra:?}");
            assert!(ra.outputs.is_empty());
            assert_eq!(a.counters().get(Counter::Malformed), 1);
        }
    }
}

#[test]
fn rank_sets_beyond_64_need_dynamic_mode_and_at_most_512_ranks() {
    let p = Params::default();
    wide_entry(10).validate(&p).unwrap();
    let mut e = wide_entry(10);
    e.ranks_hi = vec![u64::MAX; 7];
    e.validate(&p).unwrap();
    assert_eq!(e.rank_set().count(), 512);
    e.ranks_hi.push(1);
    let err = e.validate(&p).unwrap_err().to_string();
    assert_eq!(err, "job 5: ranks_hi has 8 words: a job has at most 512 ranks (MAX_RANKS, the version-2 header's bitmap), so at most 7 words above ranks");
    let mut e = wide_entry(10);
    e.mode = Mode::Static;
    let err = e.validate(&p).unwrap_err().to_string();
    assert_eq!(err, "job 5: ranks at or above 64 (ranks_hi) need mode dynamic: static and timeout jobs use the 64-rank bitmap of header version 1");
    // Zero words above 64 are a version-1 job.
    let mut e = entry(10);
    e.ranks_hi = vec![0, 0];
    assert_eq!(e.header_version(), crate::wire::VERSION);
    assert_eq!(wide_entry(1).header_version(), crate::wire::VERSION_2);
    // JSON: `ranks_hi` is optional and omitted when empty, so version-1 configurations are
    // unchanged.
    let j = serde_json::to_string(&entry(10)).unwrap();
    assert!(!j.contains("ranks_hi"), "{j}");
    let back: JobEntry = serde_json::from_str(&j).unwrap();
    assert_eq!(back, entry(10));
    let j = serde_json::to_string(&wide_entry(10)).unwrap();
    let back: JobEntry = serde_json::from_str(&j).unwrap();
    assert_eq!(back.rank_set(), RankSet::first(256));
}

#[test]
fn the_leader_counts_each_of_256_ranks_once() {
    let ranks = RankSet::first(256);
    let mut b = LeaderBlock::new(ranks, 7, &[1000]);
    let set = |rs: &[u32]| {
        let mut s = RankSet::EMPTY;
        rs.iter().for_each(|&r| s.insert(r));
        s
    };
    let rep = |rs: &[u32], flags| wide_repr(PacketType::Contribution, 7, set(rs), 1, flags);
    assert_eq!(
        b.take(host(0), rep(&[0, 70], 0), &[70]),
        LeaderEvent::Merged
    );
    assert_eq!(
        b.take(host(1), rep(&[70], 0), &[70]),
        LeaderEvent::Duplicate
    );
    assert_eq!(
        b.take(host(2), rep(&[70, 71], 0), &[141]),
        LeaderEvent::Overlap
    );
    assert_eq!(b.take(host(2), rep(&[7], 0), &[7]), LeaderEvent::Overlap);
    let rest: Vec<u32> = (1..256).filter(|&r| r != 7 && r != 70).collect();
    let sum: i32 = rest.iter().map(|&r| r as i32).sum();
    assert_eq!(
        b.take(host(3), rep(&rest, Flags::BYPASS), &[sum]),
        LeaderEvent::Completed
    );
    assert_eq!(b.result, Some(vec![1000 + 70 + sum]));
    assert_eq!(b.held, expected(ranks, 7));
}
