use super::*;
use fanin_proto::plan::{build, star, Addressing, JobSpec};
use rand::{Rng, SeedableRng};

/// Register adds a validated job entry (a bad one changes nothing); remove takes it out.
#[test]
fn dynamic_jobs_are_refused_without_links() {
    let spec = fanin_proto::plan::JobSpec {
        job: 4,
        slot_count: 4,
        elements: 4,
        mode: fanin_proto::config::Mode::Dynamic {
            flush_after: 10,
            reclaim_after: 100,
        },
        addressing: fanin_proto::plan::Addressing::Network,
        trust: fanin_proto::config::Trust::OFF,
    };
    let dynamic = fanin_proto::plan::build(&fanin_proto::plan::star(2), spec)
        .unwrap()
        .switches
        .remove(0);
    let e = SoftSwitch::new(&dynamic).err().unwrap().to_string();
    assert!(
        e.starts_with("job 4: a dynamic (Canary) job needs switchd as a frame switch"),
        "{e}"
    );
    let mut stat = dynamic.clone();
    stat.jobs[0].mode = fanin_proto::config::Mode::Static;
    let mut sw = SoftSwitch::new(&stat).unwrap();
    let e = sw.reload(&dynamic).unwrap_err();
    assert!(
        e.starts_with("job 4: a dynamic (Canary) job needs switchd as a frame switch"),
        "{e}"
    );
    assert_eq!(sw.config(), &stat);
}

/// A frame switch: a frame from a link enters on that link's port, the model's output
/// goes to the link of its port, and datagrams from no link are dropped and counted.
#[test]
fn a_frame_switch_maps_model_ports_to_links() {
    use fanin_proto::config::{Route, Trust};
    use fanin_proto::wire::{Flags, PacketType, Repr};
    let a = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
    let ip = |x| Ipv4Addr::new(10, 0, 0, x);
    let mut cfg = SwitchConfig::new("s", mac_for(ip(1)), ip(1));
    cfg.params.ports = 3;
    cfg.params.slots = 4;
    cfg.params.elements = 4;
    cfg.routes = vec![
        Route {
            ip: ip(10),
            port: 1,
        },
        Route {
            ip: ip(11),
            port: 2,
        },
    ];
    cfg.jobs.push(JobEntry {
        job: 5,
        role: Role::Root,
        mode: Mode::Dynamic {
            flush_after: 100,
            reclaim_after: 1000,
        },
        degree_limit: 1,
        children: vec![],
        ranks: 0b11,
        ranks_hi: vec![],
        slot_base: 0,
        slot_count: 4,
        quota: 0,
        trust: Trust::OFF,
    });
    let e = SoftSwitch::with_links(&cfg, &[(1, a(9001))]).err().unwrap();
    assert!(e.to_string().contains("without --link"), "{e}");
    let mut sw = SoftSwitch::with_links(&cfg, &[(1, a(9001)), (2, a(9002))]).unwrap();
    // Rank 1 (10.0.0.11) contributes block 0, whose leader is rank 0 (10.0.0.10): the
    // copy completes at once and leaves toward the leader, on port 1.
    let l4 = |x| L4Addr {
        mac: mac_for(ip(x)),
        ip: ip(x),
        port: fanin_proto::wire::FANIN_UDP_PORT,
    };
    let repr = Repr {
        ptype: PacketType::Contribution,
        flags: Flags(0),
        exponent: 0,
        job: 5,
        elements: 2,
        block: 0,
        child: 0,
        bitmap: 0b10,
    };
    let payload = repr.to_bytes(&[7, -3]);
    let frame = Datagram {
        src: l4(11),
        dst: l4(10),
        payload: &payload,
    }
    .to_frame(false);
    let mut out = Vec::new();
    assert_eq!(sw.handle(0, a(9002), &frame, &mut out), Verdict::Completed);
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].peer, a(9001));
    match classify(out[0].payload()) {
        FrameKind::Ipv4 {
            dst,
            udp: Some(Ok(d)),
        } => {
            assert_eq!(dst, ip(10));
            assert_eq!(d.src.ip, ip(1));
        }
        k => panic!("not a UDP frame: {k:?}"),
    }
    out.clear();
    sw.handle(1, a(9999), &frame, &mut out);
    assert!(out.is_empty());
    let snap = sw.snapshot("s", FaultCounts::default(), 0);
    assert_eq!(snap.host.unknown_peer, 1);
    assert_eq!(snap.get("aggregated"), 1);
    assert_eq!(snap.peers, ["no link", "127.0.0.1:9001", "127.0.0.1:9002"]);
}

/// A dynamic job of 100 ranks (header version 2, docs/protocol.md "Header version 2")
/// through a frame switch: 99 contributions and a duplicate in, one exact aggregate of
/// 99 ranks out toward the leader, and the leader's result down the recorded link.
#[test]
fn a_frame_switch_runs_a_100_rank_job_in_header_version_2() {
    use fanin_proto::config::{Route, Trust};
    use fanin_proto::wire::{wide, Flags, PacketType, RankSet, WideRepr, VERSION_2};
    let a = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
    let ip = |x| Ipv4Addr::new(10, 0, 0, x);
    let mut cfg = SwitchConfig::new("s", mac_for(ip(1)), ip(1));
    cfg.params.ports = 3;
    cfg.params.slots = 4;
    cfg.params.elements = 4;
    cfg.routes = vec![Route {
        ip: ip(10),
        port: 1,
    }];
    let all = RankSet::first(100);
    cfg.jobs.push(JobEntry {
        job: 5,
        role: Role::Root,
        mode: Mode::Dynamic {
            flush_after: 100,
            reclaim_after: 1000,
        },
        degree_limit: 1,
        children: vec![],
        ranks: all.0[0],
        ranks_hi: vec![all.0[1]],
        slot_base: 0,
        slot_count: 4,
        quota: 0,
        trust: Trust::OFF,
    });
    let mut sw = SoftSwitch::with_links(&cfg, &[(1, a(9001)), (2, a(9002))]).unwrap();
    let l4 = |x| L4Addr {
        mac: mac_for(ip(x)),
        ip: ip(x),
        port: fanin_proto::wire::FANIN_UDP_PORT,
    };
    let hdr = |ptype, bitmap| WideRepr {
        version: VERSION_2,
        ptype,
        flags: Flags(0),
        exponent: 0,
        job: 5,
        elements: 2,
        block: 0,
        child: 0,
        bitmap,
    };
    // Block 0's leader is rank 0 (10.0.0.10, behind link 9001); ranks 1..100 arrive on
    // link 9002, rank 70 twice.
    let mut out = Vec::new();
    let mut sum = [0i32; 2];
    for r in (1..100u32).chain([70]) {
        let payload = hdr(PacketType::Contribution, RankSet::one(r)).to_bytes(&[r as i32, -1]);
        let frame = Datagram {
            src: l4(11),
            dst: l4(10),
            payload: &payload,
        }
        .to_frame(false);
        let v = sw.handle(0, a(9002), &frame, &mut out);
        let want = match r {
            99 => Verdict::Completed,
            70 if sum[1] == -99 => Verdict::Duplicate,
            _ => Verdict::Aggregated,
        };
        assert_eq!(v, want, "rank {r}");
        if v != Verdict::Duplicate {
            sum[0] += r as i32;
            sum[1] -= 1;
        }
    }
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].peer, a(9001));
    let FrameKind::Ipv4 {
        dst,
        udp: Some(Ok(d)),
    } = classify(out[0].payload())
    else {
        panic!("not a UDP frame");
    };
    assert_eq!(dst, ip(10));
    let up = WideRepr::parse(d.payload).unwrap();
    let mut want = all;
    want.remove(0);
    assert_eq!((up.version, up.bitmap), (VERSION_2, want));
    assert_eq!(wide::elements(d.payload), [4950, -99]);
    // The leader's result (every rank, own data added) goes down link 9002.
    out.clear();
    let payload = hdr(PacketType::Result, all).to_bytes(&[4950, -100]);
    let frame = Datagram {
        src: l4(10),
        dst: L4Addr {
            mac: [0xff; 6],
            ip: Ipv4Addr::BROADCAST,
            port: fanin_proto::wire::FANIN_UDP_PORT,
        },
        payload: &payload,
    }
    .to_frame(false);
    assert_eq!(
        sw.handle(1, a(9001), &frame, &mut out),
        Verdict::ResultForwarded
    );
    assert_eq!(out.len(), 1);
    assert_eq!(out[0].peer, a(9002));
    let snap = sw.snapshot("s", FaultCounts::default(), 0);
    assert_eq!(snap.get("aggregated"), 99);
    assert_eq!(snap.get("duplicates"), 1);
    assert_eq!(snap.get("malformed"), 0);
}

#[test]
fn register_and_remove_jobs_on_the_control_port() {
    let me = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40000);
    let w = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
    let one = SingleJob {
        job: 1,
        workers: vec![w(40001), w(40002)],
        elements: 64,
        slots: 16,
    };
    let mut cfg = single_job_config(me, &one);
    cfg.params.slots = 32;
    let mut sw = SoftSwitch::new(&cfg).unwrap();
    let mut entry = cfg.jobs[0].clone();
    entry.job = 2;
    entry.slot_base = 16;
    // Through the JSON a client sends.
    let line = serde_json::to_string(&ControlRequest::Register {
        entry: Box::new(entry.clone()),
    })
    .unwrap();
    let req: ControlRequest = serde_json::from_str(&line).unwrap();
    let r = answer(&mut sw, req, None);
    assert!(r.ok, "{}", r.message);
    assert!(sw.model().job(2).is_some());
    // Overlapping job 1's slots: refused as a configuration file would be.
    let mut bad = entry.clone();
    bad.job = 3;
    bad.slot_base = 8;
    let r = answer(
        &mut sw,
        ControlRequest::Register {
            entry: Box::new(bad),
        },
        None,
    );
    assert!(!r.ok && r.message.contains("refused"), "{}", r.message);
    assert!(sw.model().job(3).is_none());
    assert_eq!(sw.config().jobs.len(), 2);
    let r = answer(&mut sw, ControlRequest::Remove { job: 2 }, None);
    assert!(r.ok, "{}", r.message);
    assert!(sw.model().job(2).is_none());
    let r = answer(&mut sw, ControlRequest::Remove { job: 2 }, None);
    assert!(!r.ok && r.message.contains("no job 2"), "{}", r.message);
}

/// Regression: a reload from the configuration file (SIGHUP, `fanin reload`) dropped the
/// jobs registered over the control port. It keeps them now; a file entry with the same
/// job id replaces one, and a file that collides with one is refused, changing nothing.
#[test]
fn reload_from_the_file_keeps_registered_jobs() {
    let me = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40100);
    let w = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
    let one = SingleJob {
        job: 1,
        workers: vec![w(40101), w(40102)],
        elements: 64,
        slots: 16,
    };
    let mut file = single_job_config(me, &one);
    file.params.slots = 64;
    let dir = std::env::temp_dir().join(format!("fanin-reload-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("switch.json");
    let write =
        |c: &SwitchConfig| std::fs::write(&path, serde_json::to_string_pretty(c).unwrap()).unwrap();
    write(&file);
    let mut sw = SoftSwitch::new(&file).unwrap();
    let mut reg = file.jobs[0].clone();
    reg.job = 2;
    reg.slot_base = 16;
    let r = answer(
        &mut sw,
        ControlRequest::Register {
            entry: Box::new(reg.clone()),
        },
        Some(&path),
    );
    assert!(r.ok, "{}", r.message);
    // An unchanged file: the registered job stays, with its session state untouched.
    let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
    assert!(r.ok, "{}", r.message);
    assert!(sw.model().job(2).is_some(), "reload dropped job 2");
    assert_eq!(sw.registered().len(), 1);
    // The file adds job 3 beside it.
    let mut j3 = file.jobs[0].clone();
    j3.job = 3;
    j3.slot_base = 32;
    file.jobs.push(j3.clone());
    write(&file);
    let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
    assert!(r.ok, "{}", r.message);
    let mut jobs: Vec<u16> = sw.config().jobs.iter().map(|j| j.job).collect();
    jobs.sort();
    assert_eq!(jobs, [1, 2, 3]);
    // A file job on the registered job's slots: refused, nothing changed.
    let mut clash = file.clone();
    clash.jobs[1].slot_base = 16;
    write(&clash);
    let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
    assert!(!r.ok && r.message.contains("refused"), "{}", r.message);
    assert_eq!(sw.config().jobs.len(), 3);
    assert_eq!(sw.model().job(3).unwrap().slot_base, 32);
    // The file takes job 2 over: the registration is forgotten.
    let mut own = file.clone();
    own.jobs.push(JobEntry {
        slot_base: 48,
        ..reg.clone()
    });
    write(&own);
    let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
    assert!(r.ok && r.message.contains("replaces"), "{}", r.message);
    assert_eq!(sw.model().job(2).unwrap().slot_base, 48);
    assert!(sw.registered().is_empty());
    // Removed over the control port: gone until the file brings it back.
    write(&file);
    let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
    assert!(r.ok, "{}", r.message);
    assert!(sw.model().job(2).is_none());
    std::fs::remove_dir_all(&dir).ok();
}

/// Random bytes from every source never crash the switch and are all counted.
#[test]
fn random_datagrams_are_counted_never_fatal() {
    let plan = build(
        &star(3),
        JobSpec {
            job: 1,
            slot_count: 8,
            elements: 64,
            mode: Mode::Timeout {
                flush_after: 10,
                reclaim_after: 10,
            },
            addressing: Addressing::Loopback { base: 30000 },
            trust: fanin_proto::config::Trust::default(),
        },
    )
    .unwrap();
    let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
    let seed = 0xfa41;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut out = Vec::new();
    let n = 20_000;
    for i in 0..n {
        let len = rng.gen_range(0..400);
        let mut b: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if i % 2 == 0 && len > 22 {
            b[0] = 1; // plausible version, so deeper checks run
            b[1] = rng.gen_range(1..=2);
        }
        let from = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 30000 + rng.gen_range(0..5));
        sw.handle(i, from, &b, &mut out);
        sw.tick(i, &mut out);
    }
    let s = sw.snapshot("t", FaultCounts::default(), 0);
    let dropped = s.get("malformed") + s.get("unknown_job");
    assert!(dropped > n * 9 / 10, "seed {seed}: {}", s.to_text());
    assert_eq!(
        s.ports.iter().map(|p| p.rx_packets).sum::<u64>(),
        n,
        "seed {seed}"
    );
}
