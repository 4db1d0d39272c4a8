//! Smoke tests of the fabric simulator: every scheme finishes with exact sums.

use super::*;
use crate::wire::FANIN_UDP_PORT;

pub(crate) fn small(scheme: Scheme, seed: u64) -> Run {
    Run {
        fabric: Fabric {
            leaves: 4,
            hosts_per_leaf: 4,
            spines: 4,
            gbps: 100,
            prop_ns: 500,
            queue_bytes: 64 * 1024,
            flow: Flow::DropTail,
        },
        jobs: vec![Job {
            job: 10,
            hosts: vec![0, 1, 5, 6, 10, 15],
            elements: 64 * 64,
            root_spine: 1,
        }],
        scheme,
        packet_elements: 64,
        window: 32,
        load: Load::default(),
        faults: Faults::default(),
        rto_ns: 100_000,
        limit_ns: 50_000_000,
        seed,
    }
}

const SCHEMES: [Scheme; 4] = [
    Scheme::Canary { flush_ns: 2000 },
    Scheme::Static { trees: 1 },
    Scheme::Static { trees: 4 },
    Scheme::Ring,
];

#[test]
fn every_scheme_finishes_exactly_on_an_idle_fabric() {
    for flow in [Flow::DropTail, Flow::Lossless] {
        for scheme in SCHEMES {
            let mut run = small(scheme, 1);
            run.fabric.flow = flow;
            let o = simulate(run.clone()).unwrap();
            eprintln!(
                "{flow:?} {scheme:?}: {o:?} goodput {:.1} Gb/s",
                o.goodput_gbps(&run, 0)
            );
            assert!(o.finished, "{flow:?} {scheme:?}: {o:?}");
            assert_eq!(o.exact, [true], "{flow:?} {scheme:?}");
            assert_eq!(o.hosts.retransmits, 0, "{flow:?} {scheme:?}: {o:?}");
        }
    }
}

/// The run of `small` with every other host sending line-rate background into 8 KiB
/// buffers: congested enough that drop-tail queues overflow.
fn congested(scheme: Scheme, flow: Flow, seed: u64) -> Run {
    let mut run = small(scheme, seed);
    run.fabric.queue_bytes = 8 * 1024;
    run.fabric.flow = flow;
    run.load = Load {
        background: 1.0,
        message_packets: 16,
        warmup_ns: 5000,
        ..Load::default()
    };
    run
}

/// Runs `sim` to its end, then lets the network drain (no new background) and returns
/// what is left of the credits: nothing when they are conserved.
fn finish_and_drain(mut sim: Sim) -> (Outcome, Vec<String>) {
    sim.run_until_done();
    let o = sim.outcome();
    assert!(o.finished, "the run did not finish: {o:?}");
    let mut steps = 0u64;
    while let Some(e) = sim.queue.pop() {
        sim.now = e.time;
        steps += 1;
        if steps > 1_000_000 {
            let head = match e.ev {
                Ev::TxDone(NodeId::Switch(s), p) => sim.switches[s].ports[p as usize]
                    .queue
                    .front()
                    .map(|q| format!("{:?}", classify(&q.frame))),
                _ => None,
            };
            panic!(
                "the network does not drain: at {} ns, {:?} {head:?}",
                sim.now, e.ev
            );
        }
        if !matches!(e.ev, Ev::Gen(_)) {
            sim.step(e.ev);
        }
    }
    (o, sim.credit_leaks())
}

/// Lossless mode under congestion that makes drop-tail queues drop: no frame is dropped or
/// lost, senders waited for credit (the congestion was there), no ingress buffer ever held
/// more than its size, every host has the exact sums, and once the network drains every
/// live link's credit is back to full and no buffer is held.
#[test]
fn a_congested_lossless_run_drops_nothing_and_conserves_credits() {
    for scheme in SCHEMES {
        let dt = simulate(congested(scheme, Flow::DropTail, 1)).unwrap();
        assert!(
            dt.queue_drops > 0,
            "{scheme:?}: drop-tail was not congested: {dt:?}"
        );
        let run = congested(scheme, Flow::Lossless, 1);
        let (o, leaks) = finish_and_drain(Sim::new(run.clone()).unwrap());
        eprintln!("{scheme:?}: drop-tail {dt:?}\nlossless {o:?}");
        assert!(o.finished && o.exact == [true], "{scheme:?}: {o:?}");
        assert_eq!((o.queue_drops, o.lost), (0, 0), "{scheme:?}: {o:?}");
        assert_eq!(o.hosts.retransmits, 0, "{scheme:?}: {o:?}");
        assert!(
            o.stalls_at.iter().sum::<u64>() > 0,
            "{scheme:?}: no wait: {o:?}"
        );
        assert!(o.peak_ingress_bytes <= run.fabric.queue_bytes, "{o:?}");
        assert!(o.peak_ingress_bytes > run.fabric.queue_bytes / 2, "{o:?}");
        assert!(
            leaks.is_empty(),
            "{scheme:?}: credits not conserved: {leaks:?}"
        );
    }
}

/// Lossless mode with a spine and a link failing mid-run (not under static trees' paths),
/// and frame loss, duplication and reordering: every host still ends with the exact sums (the dead links' frames are lost
/// and their credits forgotten; nothing wedges), and the live links' credits are conserved.
#[test]
fn lossless_runs_with_failures_and_faults_complete_exactly() {
    for scheme in SCHEMES {
        for seed in 1..=3 {
            let mut run = congested(scheme, Flow::Lossless, seed);
            run.rto_ns = 30_000;
            run.faults = Faults {
                frames: crate::fault::FaultSpec {
                    loss: if seed == 1 { 0.0 } else { 0.02 },
                    dup: if seed == 3 { 0.05 } else { 0.0 },
                    ..crate::fault::FaultSpec::NONE
                }
                .jitter(if seed == 3 { 2000 } else { 0 }),
                link_down: vec![(8_000, 2, 3)],
                spine_down: vec![(12_000, 0)],
            };
            // A static tree has one path per leaf: its root spine and the links to it must
            // survive. Spine 0 and link (2, 3) fail, so one tree is rooted at spine 1; four
            // trees use every spine and meet only frame faults.
            run.jobs[0].root_spine = 1;
            if scheme == (Scheme::Static { trees: 4 }) {
                run.faults.spine_down.clear();
                run.faults.link_down.clear();
                run.faults.frames.loss = 0.02;
            }
            let (o, leaks) = finish_and_drain(Sim::new(run).unwrap());
            let tag = format!("{scheme:?} seed {seed}");
            assert!(o.finished && o.exact == [true], "{tag}: {o:?}");
            assert_eq!(o.queue_drops, 0, "{tag}: {o:?}");
            assert!(o.lost > 0, "{tag}: the failures lost nothing: {o:?}");
            assert!(leaks.is_empty(), "{tag}: credits not conserved: {leaks:?}");
        }
    }
}

/// A lossless buffer must hold the largest frame, or no sender could ever start one.
#[test]
fn a_lossless_buffer_smaller_than_a_frame_is_refused() {
    let mut run = small(Scheme::Ring, 1);
    run.fabric.flow = Flow::Lossless;
    run.fabric.queue_bytes = 2048;
    run.packet_elements = 1024;
    let e = simulate(run).expect_err("refused").to_string();
    assert!(
        e.contains("a lossless buffer of 2048 bytes cannot hold a 4224-byte frame"),
        "{e}"
    );
}

/// Frame faults come from the shared model: a bad spec is refused by name.
#[test]
fn bad_frame_faults_are_refused() {
    let mut run = small(Scheme::Ring, 1);
    run.faults.frames.dup = 2.0;
    let e = simulate(run).expect_err("refused").to_string();
    assert!(e.contains("dup = 2 is not a probability"), "{e}");
}

/// The up-port rule reroutes frames toward a host from a congested uplink, but never a
/// result sent to 255.255.255.255: the model sends it down a port it recorded, and only
/// the switch behind that port can pass it on (rerouted, it was a duplicate elsewhere and
/// the hosts below waited for their retransmission timeout).
#[test]
fn the_up_port_rule_keeps_a_results_recorded_port() {
    let run = small(Scheme::Canary { flush_ns: 2000 }, 1);
    let f = run.fabric;
    let mut sim = Sim::new(run).unwrap();
    // Leaf 0's uplink to spine 1 is over half full.
    let up1 = f.hosts_per_leaf + 1;
    sim.switches[0].ports[up1].bytes = f.queue_bytes * 3 / 4;
    let frame_to = |ip: Ipv4Addr| {
        crate::wire::Datagram {
            src: crate::wire::L4Addr {
                mac: switch_mac(0),
                ip: switch_ip(0),
                port: FANIN_UDP_PORT,
            },
            dst: crate::wire::L4Addr {
                mac: [0xff; 6],
                ip,
                port: FANIN_UDP_PORT,
            },
            payload: &[0u8; 64],
        }
        .to_frame(false)
    };
    let to_host = frame_to(host_ip(&f, 13));
    assert_ne!(
        sim.up_port(0, 1, &to_host),
        1,
        "a unicast frame avoids the full queue"
    );
    let result = frame_to(crate::model::dynamic::BROADCAST);
    assert_eq!(
        sim.up_port(0, 1, &result),
        1,
        "a result keeps its recorded port"
    );
}
