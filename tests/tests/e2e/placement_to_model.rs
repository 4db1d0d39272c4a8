//! A placement computed by fanin-placement, turned into switch configurations by
//! `fanin_proto::plan`, runs through reference switches on lossy links: every worker must
//! end with the exact sum. This is the path `fanin place --emit-config` feeds to switches.

use fanin_placement::aggtree::AggTree;
use fanin_placement::emit::plan_nodes;
use fanin_placement::metrics::Scale;
use fanin_placement::paring::{paring, ParingConfig};
use fanin_placement::rational::int;
use fanin_placement::soar::soar;
use fanin_placement::topology::{binary_tree, fat_tree, Kind};
use fanin_proto::config::Mode;
use fanin_proto::fault::FaultSpec;
use fanin_proto::netsim::{JobRun, Links, Net};
use fanin_proto::plan::{self, Addressing, JobSpec, NodeKind, NodeSpec};
use fanin_proto::worker::Sending;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn run(nodes: &[NodeSpec], mode: Mode, seed: u64) {
    let spec = JobSpec {
        job: 5,
        slot_count: 8,
        elements: 16,
        mode,
        addressing: Addressing::Network,
        trust: fanin_proto::config::Trust::default(),
    };
    let plan = plan::build(nodes, spec).unwrap_or_else(|e| panic!("seed {seed}: {e}"));
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let n = plan.workers.len();
    let data: Vec<Vec<i32>> = (0..n)
        .map(|_| (0..100).map(|_| rng.gen_range(-1000..1000)).collect())
        .collect();
    let sending = Sending {
        window: 8,
        retransmit_after: 300,
        first_block: 0,
        exponent: 0,
    };
    let runs = [JobRun {
        plan: plan.clone(),
        sending,
        data: data.clone(),
        start: vec![],
    }];
    let faults = Links {
        delay: 2,
        faults: FaultSpec {
            loss: 0.1,
            dup: 0.05,
            ..FaultSpec::NONE
        }
        .jitter(10),
    };
    let mut net = Net::new(nodes, &runs, faults, seed).unwrap();
    let out = net.run(20_000_000);
    assert!(out.finished, "seed {seed}: allreduce did not finish");
    let want: Vec<i32> = (0..100).map(|i| data.iter().map(|d| d[i]).sum()).collect();
    for a in &plan.workers {
        assert_eq!(
            net.worker(5, a.rank).unwrap().result().unwrap().0,
            want,
            "seed {seed}: rank {}",
            a.rank
        );
    }
}

#[test]
fn soar_placement_on_a_binary_tree_aggregates_exactly() {
    let tree = binary_tree(15).unwrap();
    let mut loads = vec![0u64; tree.len()];
    for (i, &l) in tree.leaves().iter().enumerate() {
        loads[l] = [3, 1, 4, 1, 5, 2, 6, 2][i % 8];
    }
    let scale = Scale::new(&tree).unwrap();
    let avail = vec![true; tree.len()];
    for k in [0, 2, 4] {
        let p = soar(&tree, &scale, &loads, &avail, k).unwrap();
        let agg = AggTree::from_tree(&tree, &loads, &p.blue);
        let nodes = plan_nodes(&agg);
        let switches = nodes
            .iter()
            .filter(|n| matches!(n.kind, NodeKind::Switch { .. }))
            .count();
        assert!(
            switches <= k + 1,
            "k={k}: {switches} aggregation nodes for {} blue",
            p.blue.len()
        );
        for mode in [
            Mode::Static,
            Mode::Timeout {
                flush_after: 200,
                reclaim_after: 2000,
            },
        ] {
            run(&nodes, mode, 100 + k as u64);
        }
    }
}

#[test]
fn paring_tree_with_degree_limits_aggregates_exactly() {
    let mut g = fat_tree(4).unwrap();
    let switches: Vec<usize> = (0..g.len())
        .filter(|&v| matches!(g.vertices[v].kind, Kind::Switch { .. }))
        .collect();
    g.set_programmable(&switches);
    let cfg = ParingConfig {
        workers: 7,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    let p = paring(&g, &cfg).unwrap();
    let agg = AggTree::from_graph(&g, &p);
    let nodes = plan_nodes(&agg);
    assert!(nodes.iter().any(|n| matches!(
        n.kind,
        NodeKind::Switch {
            degree_limit: Some(_),
            ..
        }
    )));
    run(&nodes, Mode::Static, 7);
}
