//! Directed tests of the reference model, one per semantic.

use super::*;
use crate::config::{Child, Mode};
use crate::plan::{self, Addressing, JobSpec, NodeSpec};
use crate::wire::frame::udp_checksum_ok;

fn spec(mode: Mode) -> JobSpec {
    JobSpec {
        job: 7,
        slot_count: 4,
        elements: 4,
        mode,
        addressing: Addressing::Network,
        trust: crate::config::Trust {
            sessions: false,
            ..crate::config::Trust::default()
        },
    }
}

/// A root switch with `n` workers.
fn star(n: usize, mode: Mode) -> (Switch, plan::Plan) {
    let p = plan::build(&plan::star(n), spec(mode)).unwrap();
    (Switch::new(&p.switches[0]).unwrap(), p)
}

/// The contribution frame of worker `rank` for `block` with `data`.
fn contrib(p: &plan::Plan, rank: usize, block: u32, data: &[i32]) -> Vec<u8> {
    p.workers[rank].contribution_frame(block, 0, data)
}

/// Recomputes the UDP checksum after a test mutated the payload.
fn reseal(mut f: Vec<u8>) -> Vec<u8> {
    let (src, dst) = {
        let ip = smoltcp::wire::Ipv4Packet::new_unchecked(&f[14..]);
        (ip.src_addr(), ip.dst_addr())
    };
    let total = f.len();
    let mut udp = smoltcp::wire::UdpPacket::new_unchecked(&mut f[34..total]);
    udp.fill_checksum(
        &smoltcp::wire::IpAddress::Ipv4(src),
        &smoltcp::wire::IpAddress::Ipv4(dst),
    );
    f
}

fn decode(frame: &[u8]) -> (Datagram<'_>, Repr, Vec<i32>) {
    let FrameKind::Ipv4 {
        udp: Some(Ok(d)), ..
    } = classify(frame)
    else {
        panic!("not UDP")
    };
    let p = Packet::new_checked(d.payload).unwrap();
    let r = Repr::parse(&p).unwrap();
    let e = p.elements();
    (d, r, e)
}

#[test]
fn completion_at_fan_in_multicasts_exact_sum() {
    let (mut s, p) = star(3, Mode::Static);
    assert_eq!(
        s.handle(0, 1, &contrib(&p, 0, 0, &[1, 2, 3, 4])).verdict,
        Verdict::Aggregated
    );
    assert_eq!(
        s.handle(1, 2, &contrib(&p, 1, 0, &[10, 20, 30, 40]))
            .verdict,
        Verdict::Aggregated
    );
    let r = s.handle(2, 3, &contrib(&p, 2, 0, &[100, 200, 300, -400]));
    assert_eq!(r.verdict, Verdict::Completed);
    assert_eq!(r.outputs.len(), 3);
    for (i, o) in r.outputs.iter().enumerate() {
        assert_eq!(o.port, 1 + i as u8);
        let (d, repr, data) = decode(&o.frame);
        assert_eq!(d.dst.ip, p.workers[i].me.ip);
        assert_eq!(repr.ptype, PacketType::Result);
        assert_eq!(repr.flags, Flags(Flags::MULTICAST));
        assert_eq!(repr.child, i as u8);
        assert_eq!(repr.count(), 3);
        assert_eq!(data, vec![111, 222, 333, -356]);
        assert!(udp_checksum_ok(&o.frame));
    }
    let c = s.counters();
    assert_eq!(c.get(Counter::Aggregated), 3);
    assert_eq!(c.get(Counter::Completions), 1);
    assert_eq!(c.get(Counter::ResultsSent), 3);
    assert_eq!(c.get(Counter::SlotsInUse), 0);
    assert_eq!(c.get(Counter::SlotsHighWater), 1);
    assert_eq!(c.ports[1].rx_packets, 1);
    assert_eq!(c.ports[3].tx_packets, 1);
}

#[test]
fn result_frame_exact_bytes() {
    let (mut s, p) = star(1, Mode::Static);
    let r = s.handle(0, 1, &contrib(&p, 0, 0x01020304, &[-1, 0, 1, 2]));
    let f = &r.outputs[0].frame;
    let want_tail: [u8; 38] = [
        1, 2, 0x02, 0, 0, 7, 0, 4, 1, 2, 3, 4, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, // header
        0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 2, // payload
    ];
    assert_eq!(&f[42..], &want_tail);
    assert_eq!(f.len(), 64 + 16);
    // UDP checksum is zero on switch-emitted frames.
    assert_eq!(&f[40..42], &[0, 0]);
}

#[test]
fn duplicate_before_result_is_suppressed() {
    let (mut s, p) = star(2, Mode::Static);
    s.handle(0, 1, &contrib(&p, 0, 0, &[5; 4]));
    assert_eq!(
        s.handle(1, 1, &contrib(&p, 0, 0, &[5; 4])).verdict,
        Verdict::Duplicate
    );
    let r = s.handle(2, 2, &contrib(&p, 1, 0, &[1; 4]));
    assert_eq!(decode(&r.outputs[0].frame).2, vec![6; 4]);
    assert_eq!(s.counters().get(Counter::Duplicates), 1);
}

#[test]
fn duplicate_after_result_replays_the_result() {
    let (mut s, p) = star(2, Mode::Static);
    s.handle(0, 1, &contrib(&p, 0, 3, &[5; 4]));
    s.handle(1, 2, &contrib(&p, 1, 3, &[1; 4]));
    let r = s.handle(2, 2, &contrib(&p, 1, 3, &[1; 4]));
    assert_eq!(r.verdict, Verdict::Replayed);
    assert_eq!(r.outputs.len(), 1);
    assert_eq!(r.outputs[0].port, 2, "replayed out of the ingress port");
    let (d, repr, data) = decode(&r.outputs[0].frame);
    assert_eq!(d.dst.ip, p.workers[1].me.ip);
    assert_eq!(repr.flags, Flags(0), "a replay is not a multicast copy");
    assert_eq!(data, vec![6; 4]);
}

#[test]
fn overflow_saturates_and_flags() {
    let (mut s, p) = star(2, Mode::Static);
    s.handle(0, 1, &contrib(&p, 0, 0, &[i32::MAX, i32::MIN, 1, -1]));
    let r = s.handle(0, 2, &contrib(&p, 1, 0, &[1, -1, 1, -1]));
    let (_, repr, data) = decode(&r.outputs[0].frame);
    assert_eq!(data, vec![i32::MAX, i32::MIN, 2, -2]);
    assert!(repr.flags.has(Flags::OVERFLOW));
}

#[test]
fn shadow_copies_alternate_and_old_blocks_are_stale() {
    let (mut s, p) = star(1, Mode::Static);
    // slot_count 4: blocks 0 and 4 use slot 0 copies 0 and 1; block 8 reuses copy 0.
    for b in [0u32, 4, 8] {
        assert_eq!(
            s.handle(b as u64, 1, &contrib(&p, 0, b, &[b as i32; 4]))
                .verdict,
            Verdict::Completed
        );
    }
    assert_eq!(s.copy(0, 0).block, 8);
    assert_eq!(s.copy(0, 1).block, 4);
    // Block 0 is older than what copy 0 holds: a late duplicate, dropped at the root.
    assert_eq!(
        s.handle(9, 1, &contrib(&p, 0, 0, &[0; 4])).verdict,
        Verdict::Duplicate
    );
    // Block 4 is still stored: replayed.
    assert_eq!(
        s.handle(9, 1, &contrib(&p, 0, 4, &[4; 4])).verdict,
        Verdict::Replayed
    );
}

/// Root r with an inner switch a (workers 0..3 under it, degree limit `lim`) and worker 3 under r.
fn two_level(lim: Option<u8>, mode: Mode) -> (Vec<NodeSpec>, plan::Plan) {
    let nodes = plan::two_level(lim);
    let p = plan::build(&nodes, spec(mode)).unwrap();
    (nodes, p)
}

#[test]
fn inner_switch_sends_aggregate_up_with_its_index() {
    let (_, p) = two_level(None, Mode::Static);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    a.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    a.handle(0, 2, &contrib(&p, 1, 0, &[2; 4]));
    let r = a.handle(0, 3, &contrib(&p, 2, 0, &[3; 4]));
    assert_eq!(r.verdict, Verdict::Completed);
    assert_eq!(r.outputs.len(), 1);
    assert_eq!(r.outputs[0].port, 0);
    let (d, repr, data) = decode(&r.outputs[0].frame);
    assert_eq!(d.dst.ip, plan::Addressing::Network.endpoint(0).ip);
    assert_eq!(repr.ptype, PacketType::Contribution);
    assert_eq!(repr.bitmap, 0b0111);
    assert_eq!(repr.child, 0, "a is the root's child 0");
    assert_eq!(data, vec![6; 4]);
    // A duplicate now re-sends the stored aggregate (the parent may have lost it).
    let r = a.handle(1, 1, &contrib(&p, 0, 0, &[1; 4]));
    assert_eq!(r.verdict, Verdict::Reemitted);
    assert_eq!(decode(&r.outputs[0].frame).2, vec![6; 4]);
}

#[test]
fn degree_limit_bypasses_extra_children() {
    let (_, p) = two_level(Some(2), Mode::Static);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    let r = a.handle(0, 3, &contrib(&p, 2, 0, &[3; 4]));
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Degree));
    let (d, repr, data) = decode(&r.outputs[0].frame);
    assert!(repr.flags.has(Flags::BYPASS));
    assert_eq!(d.src.ip, p.workers[2].me.ip, "the original sender is kept");
    assert_eq!(d.dst.ip, plan::Addressing::Network.endpoint(0).ip);
    assert_eq!(data, vec![3; 4]);
    assert_eq!(a.counters().get(Counter::BypassDegree), 1);
    // Children 0 and 1 complete the degree-limited aggregate.
    a.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    let r = a.handle(0, 2, &contrib(&p, 1, 0, &[2; 4]));
    assert_eq!(decode(&r.outputs[0].frame).1.bitmap, 0b011);
}

#[test]
fn root_aggregates_bypassed_packets() {
    let (_, p) = two_level(Some(2), Mode::Static);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    let mut r = Switch::new(&p.switches[0]).unwrap();
    let by = a
        .handle(0, 3, &contrib(&p, 2, 0, &[3; 4]))
        .outputs
        .remove(0);
    assert_eq!(r.handle(0, 1, &by.frame).verdict, Verdict::Aggregated);
    a.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    let agg = a
        .handle(0, 2, &contrib(&p, 1, 0, &[2; 4]))
        .outputs
        .remove(0);
    assert_eq!(r.handle(0, 1, &agg.frame).verdict, Verdict::Aggregated);
    let done = r.handle(0, 2, &contrib(&p, 3, 0, &[4; 4]));
    assert_eq!(done.verdict, Verdict::Completed);
    assert_eq!(
        done.outputs.len(),
        2,
        "root's children: switch a and worker 3"
    );
    assert_eq!(decode(&done.outputs[0].frame).2, vec![10; 4]);
    // The result passes down through a to its three workers.
    let down = a.handle(1, 0, &done.outputs[0].frame);
    assert_eq!(down.verdict, Verdict::ResultForwarded);
    assert_eq!(down.outputs.len(), 3);
    assert!(down
        .outputs
        .iter()
        .all(|o| decode(&o.frame).2 == vec![10; 4]));
    assert_eq!(a.counters().get(Counter::SlotsInUse), 0);
}

#[test]
fn timeout_flushes_partial_and_reclaims() {
    let mode = Mode::Timeout {
        flush_after: 10,
        reclaim_after: 20,
    };
    let (_, p) = two_level(None, mode);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    a.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    assert!(a.tick(9).is_empty());
    let out = a.tick(10);
    assert_eq!(out.len(), 1);
    let (_, repr, data) = decode(&out[0].frame);
    assert!(repr.flags.has(Flags::PARTIAL));
    assert_eq!(repr.bitmap, 0b001);
    assert_eq!(data, vec![1; 4]);
    assert_eq!(a.counters().get(Counter::Timeouts), 1);
    // A straggler after the flush is forwarded, not aggregated.
    let r = a.handle(11, 2, &contrib(&p, 1, 0, &[2; 4]));
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Straggler));
    assert_eq!(a.counters().get(Counter::SlotsInUse), 1);
    assert!(a.tick(29).is_empty());
    a.tick(30);
    assert_eq!(a.counters().get(Counter::Reclaims), 1);
    assert_eq!(a.counters().get(Counter::SlotsInUse), 0, "no slot leaks");
    assert_eq!(a.copy(0, 0).state, CopyState::Stale);
}

#[test]
fn collision_and_quota_bypass_at_inner_and_drop_at_root() {
    let (_, p) = two_level(None, Mode::Static);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    a.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    // Block 8 maps to the same copy as block 0 (slot_count 4), which is still aggregating.
    let r = a.handle(0, 1, &contrib(&p, 0, 8, &[1; 4]));
    assert_eq!(r.verdict, Verdict::Bypassed(BypassReason::Collision));
    assert_eq!(r.outputs.len(), 1);
    let mut root = Switch::new(&p.switches[0]).unwrap();
    root.handle(0, 2, &contrib(&p, 3, 0, &[1; 4]));
    assert_eq!(
        root.handle(0, 2, &contrib(&p, 3, 8, &[1; 4])).verdict,
        Verdict::RootDrop(BypassReason::Collision)
    );
    assert_eq!(root.counters().get(Counter::RootDrops), 1);

    let mut cfg = p.switches[1].clone();
    cfg.jobs[0].quota = 1;
    let mut q = Switch::new(&cfg).unwrap();
    q.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    assert_eq!(
        q.handle(0, 1, &contrib(&p, 0, 1, &[1; 4])).verdict,
        Verdict::Bypassed(BypassReason::Quota)
    );
    assert_eq!(q.job_busy(7), Some(1));
}

#[test]
fn malformed_input_is_counted_and_never_corrupts_state() {
    let (mut s, p) = star(2, Mode::Static);
    s.handle(0, 1, &contrib(&p, 0, 0, &[1; 4]));
    let before = s.copy(0, 0).clone();
    let good = contrib(&p, 1, 0, &[2; 4]);
    let mut cases: Vec<(Vec<u8>, MalformedReason)> = Vec::new();
    cases.push((
        good[..60].to_vec(),
        MalformedReason::Frame(FrameError::BadIpLength),
    ));
    let mut v = good.clone();
    v[42] = 9;
    cases.push((reseal(v), MalformedReason::Wire(WireError::BadVersion)));
    // Element count says 5, datagram holds 4.
    let mut v = good.clone();
    v[49] = 5;
    cases.push((reseal(v), MalformedReason::Wire(WireError::BadLength)));
    let mut v = good.clone();
    v[54] = 9; // child 9 of 2
    cases.push((reseal(v), MalformedReason::ChildOutOfRange));
    let mut v = good.clone();
    v[54] = 0; // child 0 claiming rank 1
    cases.push((reseal(v), MalformedReason::RanksNotOfChild));
    let mut v = good.clone();
    v[70] ^= 0x40; // an element bit, checksum left stale
    cases.push((v, MalformedReason::Frame(FrameError::BadUdpChecksum)));
    // Truncated fanin header inside a valid UDP datagram.
    let a = &p.workers[1];
    let src = L4Addr {
        mac: a.me.mac,
        ip: a.me.ip,
        port: a.me.udp_port,
    };
    let dst = L4Addr {
        mac: a.parent.mac,
        ip: a.parent.ip,
        port: a.parent.udp_port,
    };
    cases.push((
        Datagram {
            src,
            dst,
            payload: &good[42..50],
        }
        .to_frame(true),
        MalformedReason::Wire(WireError::Truncated),
    ));
    for (i, (f, why)) in cases.iter().enumerate() {
        let r = s.handle(1, 2, f);
        assert_eq!(r.verdict, Verdict::Malformed(*why), "case {i}");
        assert!(r.outputs.is_empty());
    }
    assert_eq!(s.counters().get(Counter::Malformed), cases.len() as u64);
    assert_eq!(s.copy(0, 0), &before);
    // Unknown job.
    let mut v = good.clone();
    v[47] = 99;
    assert_eq!(s.handle(1, 2, &reseal(v)).verdict, Verdict::UnknownJob);
    // The good packet still completes the block.
    assert_eq!(s.handle(2, 2, &good).verdict, Verdict::Completed);
}

#[test]
fn non_fanin_frames_are_switched_by_the_table() {
    let (_, p) = two_level(None, Mode::Static);
    let mut a = Switch::new(&p.switches[1]).unwrap();
    let w1 = p.workers[1].me;
    let w0 = p.workers[0].me;
    let src = L4Addr {
        mac: w0.mac,
        ip: w0.ip,
        port: 5,
    };
    let dst = L4Addr {
        mac: w1.mac,
        ip: w1.ip,
        port: 6,
    };
    let f = Datagram {
        src,
        dst,
        payload: b"hello",
    }
    .to_frame(true);
    let r = a.handle(0, 1, &f);
    assert_eq!(r.verdict, Verdict::Forwarded);
    assert_eq!(
        r.outputs,
        vec![Output {
            port: 2,
            frame: f.clone()
        }]
    );
    let mut unknown = f.clone();
    unknown[33] = 200; // dst 10.1.0.200 has no route; fix the checksum
    let mut ip = smoltcp::wire::Ipv4Packet::new_unchecked(&mut unknown[14..]);
    ip.fill_checksum();
    assert_eq!(a.handle(0, 1, &unknown).verdict, Verdict::NoRoute);
    let mut arp = f.clone();
    arp[12..14].copy_from_slice(&[0x08, 0x06]);
    assert_eq!(a.handle(0, 1, &arp).verdict, Verdict::NonIp);
}

#[test]
fn job_table_errors_leave_the_table_unchanged() {
    let (mut s, p) = star(2, Mode::Static);
    let mut bad = p.switches[0].jobs[0].clone();
    bad.job = 8;
    // Overlaps job 7's slots.
    assert!(s.set_job(bad.clone()).is_err());
    bad.slot_base = 100;
    bad.children[1] = Child {
        endpoint: bad.children[1].endpoint,
        ranks: 0b11,
        below: 0,
    };
    let e = s.set_job(bad).unwrap_err().to_string();
    assert!(e.contains("job 8") && e.contains("shares ranks"), "{e}");
    assert!(s.job(8).is_none());
    assert!(s.job(7).is_some());
}

/// An ARP request for the switch's address is answered on its ingress port, byte for byte
/// as `wire::arp` builds it, and counted; a request for another address, and an ARP
/// reply, are non-IPv4 frames: dropped and counted as such.
#[test]
fn arp_request_for_the_switch_is_answered_on_its_port() {
    let (mut sw, p) = star(2, Mode::Static);
    let (me_mac, me_ip) = (p.switches[0].mac, p.switches[0].ip);
    let host = [0x02, 0, 0, 0, 0, 0x33];
    let host_ip = std::net::Ipv4Addr::new(10, 9, 8, 7);
    let req = crate::wire::arp::request(host, host_ip, me_ip);
    let r = sw.handle(0, 1, &req);
    assert_eq!(r.verdict, Verdict::ArpReplied);
    let want = crate::wire::arp::reply(&req, me_mac, me_ip).unwrap();
    assert_eq!(
        r.outputs,
        vec![Output {
            port: 1,
            frame: want
        }]
    );
    assert_eq!(&r.outputs[0].frame[0..6], &host);
    assert_eq!(sw.counters().get(Counter::ArpReplies), 1);
    assert_eq!(sw.counters().get(Counter::NonIp), 0);
    assert_eq!(sw.counters().ports[1].tx_packets, 1);
    let other = crate::wire::arp::request(host, host_ip, std::net::Ipv4Addr::new(10, 9, 8, 9));
    let r = sw.handle(0, 1, &other);
    assert_eq!((r.verdict, r.outputs.len()), (Verdict::NonIp, 0));
    let mut answer = req.clone();
    answer[21] = 2;
    assert_eq!(sw.handle(0, 0, &answer).verdict, Verdict::NonIp);
    assert_eq!(sw.counters().get(Counter::ArpReplies), 1);
    assert_eq!(sw.counters().get(Counter::NonIp), 2);
}
