//! Property tests of dynamic mode (Canary) in the fabric simulator: random leaf–spine fabrics
//! with loss, duplication, reordering, background traffic, host noise, link and spine
//! failures, and one or two concurrent jobs, with drop-tail queues or lossless (credit-based)
//! links. Every host of every job must end with the exact int32 sum of every block.
//!
//! Seeded: `FANIN_CANARY_SEED` fixes the first case's seed (default below); `FANIN_CANARY_CASES`
//! raises the count for soak runs. A failure prints the case's seed, which replays it.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use fanin_proto::fabric::{simulate, Fabric, Faults, Flow, Job, Load, Run, Scheme};
use fanin_proto::fault::FaultSpec;

const DEFAULT_SEED: u64 = 0xca4a_0001;

fn env(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// A random run from `seed`: fabric, jobs, faults and load.
fn scenario(seed: u64, faulty: bool) -> Run {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let fabric = Fabric {
        leaves: rng.gen_range(2..=4),
        hosts_per_leaf: rng.gen_range(2..=4),
        spines: rng.gen_range(2..=4),
        gbps: 100,
        prop_ns: rng.gen_range(100..=1000),
        queue_bytes: rng.gen_range(8..=64) * 1024,
        flow: Flow::DropTail,
    };
    let mut free: Vec<usize> = (0..fabric.hosts()).collect();
    let njobs = rng.gen_range(1..=2).min(free.len() / 2);
    let mut jobs = Vec::new();
    for j in 0..njobs {
        let n = rng.gen_range(2..=(free.len() / (njobs - j)).max(2));
        let mut hosts = Vec::new();
        for _ in 0..n {
            hosts.push(free.swap_remove(rng.gen_range(0..free.len())));
        }
        jobs.push(Job {
            job: 10 + 10 * j as u16,
            hosts,
            elements: rng.gen_range(1..=40) * 16 + rng.gen_range(0..16),
            root_spine: rng.gen_range(0..fabric.spines),
        });
    }
    let mut faults = Faults::default();
    if faulty {
        faults.frames = FaultSpec {
            loss: [0.0, 0.02, 0.1][rng.gen_range(0..3)],
            dup: [0.0, 0.05][rng.gen_range(0..2)],
            ..FaultSpec::NONE
        }
        .jitter([0, 500, 3000][rng.gen_range(0..3)]);
        if fabric.spines >= 3 && rng.gen_bool(0.5) {
            let dead = rng.gen_range(0..fabric.spines);
            faults.spine_down.push((rng.gen_range(0..20_000), dead));
            let s = (dead + 1) % fabric.spines;
            faults
                .link_down
                .push((rng.gen_range(0..20_000), rng.gen_range(0..fabric.leaves), s));
        } else if fabric.spines >= 2 && rng.gen_bool(0.5) {
            let l = rng.gen_range(0..fabric.leaves);
            faults
                .link_down
                .push((rng.gen_range(0..20_000), l, rng.gen_range(0..fabric.spines)));
        }
    }
    let load = Load {
        background: [0.0, 0.3][rng.gen_range(0..2)],
        message_packets: 8,
        noise_prob: [0.0, 0.1][rng.gen_range(0..2)],
        noise_ns: 1000,
        warmup_ns: [0, 5000][rng.gen_range(0..2)],
    };
    // Drawn last, so that the cases' other draws are those of before the flow existed.
    let fabric = Fabric {
        flow: [Flow::DropTail, Flow::Lossless][rng.gen_range(0..2)],
        ..fabric
    };
    Run {
        fabric,
        jobs,
        scheme: Scheme::Canary {
            flush_ns: [500, 2000, 8000][rng.gen_range(0..3)],
        },
        packet_elements: 16,
        window: [4, 16, 64][rng.gen_range(0..3)],
        load,
        faults,
        rto_ns: 30_000,
        limit_ns: 200_000_000,
        seed,
    }
}

fn check(faulty: bool, salt: u64) {
    check_scheme(faulty, salt, None, None, 16);
}

/// `cases` random runs (or `FANIN_CANARY_CASES`), with `scheme` in place of Canary and
/// `flow` in place of the drawn flow control if given.
fn check_scheme(faulty: bool, salt: u64, scheme: Option<Scheme>, flow: Option<Flow>, cases: u64) {
    let cases = env("FANIN_CANARY_CASES", cases);
    let first = env("FANIN_CANARY_SEED", DEFAULT_SEED) ^ salt;
    for i in 0..cases {
        let seed = first.wrapping_add(i);
        let mut run = scenario(seed, faulty);
        if let Some(s) = scheme {
            run.scheme = s;
        }
        if let Some(f) = flow {
            run.fabric.flow = f;
        }
        let o = simulate(run.clone()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(
            o.finished && o.exact.iter().all(|&e| e) && o.hosts.wrong == 0,
            "seed {seed:#x} (replay: FANIN_CANARY_SEED={} FANIN_CANARY_CASES=1): {o:?}\n{run:?}",
            seed ^ salt
        );
        // Lossless links drop nothing: every loss is an injected fault or a failure.
        if run.fabric.flow == Flow::Lossless {
            assert_eq!(o.queue_drops, 0, "seed {seed:#x}: {o:?}");
            assert!(
                o.peak_ingress_bytes <= run.fabric.queue_bytes,
                "seed {seed:#x}: {o:?}"
            );
            if !faulty {
                assert_eq!(o.lost, 0, "seed {seed:#x}: {o:?}");
            }
        }
    }
}

#[test]
fn dynamic_mode_is_exact_on_clean_fabrics_with_congestion_and_noise() {
    check(false, 0);
}

#[test]
fn dynamic_mode_is_exact_under_loss_duplication_reordering_and_failures() {
    check(true, 0x5a5a);
}

/// The ring baseline carries the data (reduce-scatter, then allgather) and every host's
/// sums are checked like the others', through loss, duplication, reordering and failures.
#[test]
fn the_ring_baseline_is_exact_under_faults() {
    check_scheme(true, 0x7177, Some(Scheme::Ring), None, 8);
}

/// Lossless (credit-based) links in every case, with loss, duplication, reordering and link
/// and spine failures: the dead links' frames are lost and their credits forgotten, nothing
/// wedges, and every host ends with the exact sums.
#[test]
fn dynamic_mode_is_exact_on_lossless_fabrics_under_faults_and_failures() {
    check_scheme(true, 0x1055, None, Some(Flow::Lossless), 8);
}

/// The oracle can fail: a fabric whose every spine dies cannot finish, and says so.
#[test]
fn a_partitioned_fabric_does_not_report_success() {
    let mut run = scenario(DEFAULT_SEED, false);
    run.jobs = vec![Job {
        job: 3,
        hosts: vec![0, run.fabric.hosts() - 1],
        elements: 64,
        root_spine: 0,
    }];
    run.faults.spine_down = (0..run.fabric.spines).map(|s| (0, s)).collect();
    run.limit_ns = 2_000_000;
    let o = simulate(run).unwrap();
    assert!(!o.finished);
    assert_eq!(o.exact, [false]);
}

/// A 256-rank job (header version 2) on a 16 × 17-host fabric with background traffic:
/// every host ends with the exact sums, on a clean fabric, under loss, duplication and
/// reordering, and with a spine and a link failing. `FANIN_CANARY_SEED` / `FANIN_CANARY_CASES` replay and extend it like the others.
#[test]
fn a_256_rank_job_is_exact_under_loss_duplication_reordering_and_failures() {
    let cases = env("FANIN_CANARY_CASES", 3);
    let first = env("FANIN_CANARY_SEED", DEFAULT_SEED) ^ 0x256;
    for i in 0..cases {
        let seed = first.wrapping_add(i);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let fabric = Fabric {
            leaves: 16,
            hosts_per_leaf: 17,
            spines: 4,
            gbps: 100,
            prop_ns: 500,
            queue_bytes: 64 * 1024,
            // Odd cases run lossless links (case 1: with frame faults).
            flow: [Flow::DropTail, Flow::Lossless][i as usize % 2],
        };
        let mut hosts: Vec<usize> = (0..fabric.hosts()).collect();
        for k in (1..hosts.len()).rev() {
            hosts.swap(k, rng.gen_range(0..=k));
        }
        hosts.truncate(256);
        // Case 0 is clean; case 1 loses, duplicates and reorders frames; case 2 also loses
        // a spine (and its copies) and a leaf–spine link mid-run; and so on, cyclically.
        let faults = Faults {
            frames: if i % 3 == 0 {
                FaultSpec::NONE
            } else {
                FaultSpec {
                    loss: 0.02,
                    dup: 0.05,
                    ..FaultSpec::NONE
                }
                .jitter(2000)
            },
            spine_down: if i % 3 == 2 {
                vec![(rng.gen_range(0..20_000), rng.gen_range(0..4))]
            } else {
                vec![]
            },
            link_down: if i % 3 == 2 {
                vec![(
                    rng.gen_range(0..20_000),
                    rng.gen_range(0..16),
                    rng.gen_range(0..4),
                )]
            } else {
                vec![]
            },
        };
        let run = Run {
            fabric,
            jobs: vec![Job {
                job: 40,
                hosts,
                elements: 5 * 16 + 3,
                root_spine: 0,
            }],
            scheme: Scheme::Canary { flush_ns: 2000 },
            packet_elements: 16,
            window: 4,
            load: Load {
                background: 0.2,
                message_packets: 8,
                ..Load::default()
            },
            faults,
            rto_ns: 30_000,
            limit_ns: 200_000_000,
            seed,
        };
        let o = simulate(run.clone()).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
        assert!(
            o.finished && o.exact == [true] && o.hosts.wrong == 0,
            "seed {seed:#x} (replay: FANIN_CANARY_SEED={} FANIN_CANARY_CASES={}): {o:?}",
            first ^ 0x256,
            i + 1
        );
        // The switches aggregated (not only the leaders): the version-2 path ran.
        assert!(o.switch.aggregated > 256, "seed {seed:#x}: {o:?}");
    }
}

/// More ranks than the version-2 bitmap holds are refused by name.
#[test]
fn a_job_beyond_512_ranks_is_refused() {
    let mut run = scenario(DEFAULT_SEED, false);
    run.fabric = Fabric {
        leaves: 16,
        hosts_per_leaf: 33,
        spines: 4,
        ..run.fabric
    };
    run.jobs = vec![Job {
        job: 3,
        hosts: (0..513).collect(),
        elements: 16,
        root_spine: 0,
    }];
    let e = simulate(run.clone()).expect_err("refused").to_string();
    assert!(e.contains("513 hosts; this scheme takes 2..=512"), "{e}");
    run.scheme = Scheme::Static { trees: 1 };
    run.jobs[0].hosts.truncate(65);
    let e = simulate(run).expect_err("refused").to_string();
    assert!(e.contains("65 hosts; this scheme takes 2..=64"), "{e}");
}
