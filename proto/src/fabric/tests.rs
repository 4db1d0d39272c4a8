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
