//! Smoke tests of the fabric simulator: every scheme finishes with exact sums.

use super::*;

pub(crate) fn small(scheme: Scheme, seed: u64) -> Run {
    Run {
        fabric: Fabric {
            leaves: 4,
            hosts_per_leaf: 4,
            spines: 4,
            gbps: 100,
            prop_ns: 500,
            queue_bytes: 64 * 1024,
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

#[test]
fn every_scheme_finishes_exactly_on_an_idle_fabric() {
    for scheme in [
        Scheme::Canary { flush_ns: 2000 },
        Scheme::Static { trees: 1 },
        Scheme::Static { trees: 4 },
        Scheme::Ring,
    ] {
        let run = small(scheme, 1);
        let o = simulate(run.clone()).unwrap();
        eprintln!(
            "{scheme:?}: {o:?} goodput {:.1} Gb/s",
            o.goodput_gbps(&run, 0)
        );
        assert!(o.finished, "{scheme:?}: {o:?}");
        assert_eq!(o.exact, [true], "{scheme:?}");
        assert_eq!(o.hosts.retransmits, 0, "{scheme:?}: {o:?}");
    }
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
