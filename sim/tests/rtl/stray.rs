//! Campaign (c) of the trust issue: stray and forged traffic through the Verilated core beside
//! a real allreduce, with the scoreboard comparing every frame and counter with the model.
//!
//! The RTL runs jobs with every trust protection off (docs/rtl.md, "Not in the RTL yet"), so
//! here forged contributions with a worker's rank are summed by both: the point is that the
//! RTL and the model agree on every input, hostile ones included. JOIN, ACCEPT and REFUSE are
//! sent for the configured job only: for a job the switch does not have, the model counts
//! them in `unknown_job` while the RTL, which has no session types yet, counts `malformed`.
//! `FANIN_SEED` picks the seed, `FANIN_SIM_RUNS` the number of runs.

use fanin_proto::config::{Mode, Trust};
use fanin_proto::forge;
use fanin_proto::model::Counter;
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{Datagram, L4Addr};
use fanin_sim::tb::Pacing;
use rand::{Rng, SeedableRng};

use crate::common::*;

#[test]
fn stray_traffic_beside_an_allreduce_matches_the_model() {
    let runs: u64 = std::env::var("FANIN_SIM_RUNS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4);
    let spec = JobSpec {
        job: 7,
        slot_count: 4,
        elements: 8,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: Trust::OFF,
    };
    let p = plan::build(&plan::star(3), spec).unwrap();
    let cfg = fold(&p.switches[0], &core());
    for i in 0..runs {
        let s = seed() + i;
        let pacing = Pacing::CORNERS[(i % 4) as usize];
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s);
        let (mut tb, mut sb) = setup_with(&cfg, pacing, s);
        let me = me();
        let ports = tb.src.len();
        for n in 0..300u32 {
            // A real worker's contribution every third input.
            if n % 3 == 0 {
                let r = (n / 3 % 3) as usize;
                let b = n / 9;
                let data: Vec<i32> = (0..8).map(|k| (b * 10 + k) as i32).collect();
                let f = p.workers[r].contribution_frame(b, 0, &data);
                let port = fold_port(1 + r as u8, ports as u8) as usize;
                tb.src[port].push(f, false);
                continue;
            }
            let f = if rng.gen_bool(0.2) {
                let mut j = forge::junk(&mut rng, 200);
                j.resize(j.len().max(14), 0);
                j
            } else {
                // Session types for the configured job only (see above).
                let session_types = rng.gen_bool(0.4);
                let target = forge::Target {
                    job: 7,
                    ranks: 4,
                    elements: 8,
                    first_block: 0,
                    other_jobs: if session_types { 0.0 } else { 0.2 },
                    session_types,
                };
                let payload = forge::forged_payload(&mut rng, &target);
                let src = L4Addr {
                    mac: [2, 0, 0, 0, 0, 9],
                    ip: [10, 200, rng.gen(), rng.gen()].into(),
                    port: rng.gen(),
                };
                Datagram {
                    src,
                    dst: me,
                    payload: &payload,
                }
                .to_frame(rng.gen_bool(0.5))
            };
            let port = rng.gen_range(0..ports);
            tb.src[port].push(f, false);
        }
        finish(&mut tb, &mut sb, "stray", pacing, s);
        let c = sb.model.counters();
        assert!(
            c.get(Counter::Malformed) > 0 && c.get(Counter::Aggregated) > 0,
            "seed {s}: the run reached malformed inputs and aggregation"
        );
        assert_eq!(
            c.get(Counter::BadSource),
            0,
            "no source checks in Trust::OFF"
        );
    }
}
