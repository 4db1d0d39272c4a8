//! Seeded closed-loop allreduces through the core with loss, duplication, reordering and
//! retransmission; every emitted frame and counter is checked against the model and every
//! worker must hold the exact sum. `FANIN_SEED` picks the first seed, `FANIN_SIM_RUNS` the
//! number of runs (CI: a modest count; raise it for soak runs).

use fanin_proto::fault::FaultSpec;
use fanin_sim::allreduce::{run, Setup};
use fanin_sim::tb::Pacing;

use crate::common::*;

#[test]
fn random_allreduces_match_the_model_exactly() {
    let runs = sim_runs(40);
    let base = seed();
    for i in 0..runs {
        let s = base + i;
        let pacing = Pacing::CORNERS[(i % 4) as usize];
        let setup = Setup {
            workers: 2 + (s % 5) as usize,
            elements: 40 + (s % 397) as usize,
            per_packet: [8, 16, 64][(s % 3) as usize],
            slots: [2, 4, 8][(s / 3 % 3) as usize],
            faults: FaultSpec {
                loss: [0.0, 0.05, 0.15][(s % 3) as usize],
                dup: [0.0, 0.1][(s % 2) as usize],
                reorder: [0.0, 0.2][(s / 2 % 2) as usize],
                hold: 8,
            },
            retransmit_after: 3000,
            pacing,
            seed: s,
            allreduces: 1 + (s / 4 % 2) as usize,
            sessions: s % 2 == 1,
        };
        match run(config(), &setup) {
            Ok(o) => eprintln!("seed {s}: {o:?}"),
            Err(e) => panic!("seed {s} ({setup:?}): {e}"),
        }
    }
}
