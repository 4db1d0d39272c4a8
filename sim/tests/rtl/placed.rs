//! From `fanin place` to a programmed core: a SOAR placement's switch configurations,
//! emitted with `fanin place --no-sessions` (source validation and the idle reclaim on,
//! sessions off: the workers here number their own blocks), are each programmed into a core with the write
//! sequence `fanin hw program` sends a card (`fanin_regs::switch_writes`, which
//! `scoreboard::program` replays through the AXI4-Lite master), then fed that switch's
//! traffic: its workers' contributions and, from child switches, the partial aggregates their
//! reference models send up. Every frame and counter is checked against the model, and the
//! core must complete every block.

use std::collections::HashMap;

use fanin_placement::aggtree::AggTree;
use fanin_placement::emit::{emit, EmitOptions};
use fanin_placement::metrics::Scale;
use fanin_placement::soar::soar;
use fanin_placement::topology::binary_tree;
use fanin_proto::config::{Role, SwitchConfig, Trust};
use fanin_proto::model::{Counter, Switch};
use fanin_proto::worker::Assignment;
use fanin_sim::tb::Pacing;
use rand::{Rng, SeedableRng};

use crate::common::*;

const BLOCKS: u32 = 3;
const ELEMENTS: usize = 16;

/// Frames that reach switch `cfg` on each of its ports for every block: worker
/// contributions, and the aggregate each child switch's reference model sends up.
fn arrivals(
    cfg: &SwitchConfig,
    switches: &HashMap<core::net::Ipv4Addr, SwitchConfig>,
    workers: &HashMap<core::net::Ipv4Addr, Assignment>,
    data: &HashMap<u16, Vec<i32>>,
) -> Vec<(u8, Vec<u8>)> {
    let job = &cfg.jobs[0];
    let mut out = Vec::new();
    for c in &job.children {
        let ip = c.endpoint.ip;
        if let Some(w) = workers.get(&ip) {
            for block in 0..BLOCKS {
                let frame = w.contribution_frame(block, 0, &data[&w.rank]);
                out.push((c.endpoint.port, frame));
            }
        } else {
            let child = &switches[&ip];
            let Role::Inner { parent, .. } = child.jobs[0].role else {
                panic!("child switch {} is a root", child.name);
            };
            let mut model = Switch::new(child).unwrap();
            let up: Vec<Vec<u8>> = arrivals(child, switches, workers, data)
                .into_iter()
                .flat_map(|(p, f)| model.handle(0, p, &f).outputs)
                .filter(|o| o.port == parent.port)
                .map(|o| o.frame)
                .collect();
            assert_eq!(up.len(), BLOCKS as usize, "{} sent up", child.name);
            out.extend(up.into_iter().map(|f| (c.endpoint.port, f)));
        }
    }
    out
}

#[test]
fn soar_placement_programmed_by_the_driver_sequence_aggregates_as_the_model() {
    let s = seed();
    let tree = binary_tree(7).unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(s);
    let leaves = tree.leaves();
    let loads: Vec<u64> = (0..tree.len())
        .map(|v| {
            if leaves.contains(&v) {
                rng.gen_range(1..=2)
            } else {
                0
            }
        })
        .collect();
    let scale = Scale::new(&tree).unwrap();
    let avail = vec![true; tree.len()];
    let p = soar(&tree, &scale, &loads, &avail, 2).unwrap();
    let agg = AggTree::from_tree(&tree, &loads, &p.blue);
    let e = emit(
        &[(5, agg)],
        &EmitOptions {
            slots: 4,
            trust: Trust {
                sessions: false,
                ..Trust::default()
            },
            ..EmitOptions::default()
        },
    )
    .unwrap();
    assert!(
        e.switches.len() >= 2,
        "seed {s}: {} switches",
        e.switches.len()
    );
    let switches: HashMap<_, _> = e.switches.iter().map(|c| (c.ip, c.clone())).collect();
    let workers: HashMap<_, _> = e.workers.iter().map(|w| (w.me.ip, w.clone())).collect();
    let data: HashMap<u16, Vec<i32>> = e
        .workers
        .iter()
        .map(|w| {
            let v = (0..ELEMENTS)
                .map(|_| rng.gen_range(-(1 << 20)..(1 << 20)))
                .collect();
            (w.rank, v)
        })
        .collect();
    let core = core();
    for cfg in &e.switches {
        let pacing = Pacing::CORNERS[1];
        let (mut tb, mut sb) = setup_with(cfg, pacing, s);
        for (port, frame) in arrivals(cfg, &switches, &workers, &data) {
            let port = fold_port(port, core.ports) as usize;
            tb.src[port].push(frame, false);
        }
        let what = format!("placed switch {}", cfg.name);
        finish(&mut tb, &mut sb, &what, pacing, s);
        let done = sb.model.counters().get(Counter::Completions);
        assert_eq!(done, BLOCKS as u64, "{what} seed {s}: {done} completions");
        // What `fanin hw verify` reads: every table row as the file asks, after traffic.
        // (As programmed: ports folded onto the core's, its table sizes.)
        let mut on_core = fold(cfg, &core);
        on_core.params = core.params();
        let diff = fanin_regs::verify::verify(&on_core, &core, &mut TbBus(&mut tb)).unwrap();
        assert_eq!(diff, vec![], "{what}: tables read back");
    }
}
