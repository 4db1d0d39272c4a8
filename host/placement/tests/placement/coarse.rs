//! Coarse-grained routing (PARING groups 4–6): no partial aggregation, checked against an
//! independent oracle; never better than fine-grained, never worse than DeepSys.

use std::collections::VecDeque;

use fanin_placement::aggtree::AggTree;
use fanin_placement::emit::{emit, EmitOptions};
use fanin_placement::paring::coarse::is_coarse;
use fanin_placement::paring::{
    atp, atp_coarse, deepsys, distances, paring, paring_coarse, GraphPlacement, ParingConfig,
};
use fanin_placement::rational::{floor_div, int};
use fanin_placement::topology::{fat_tree, programmable_order, Graph};
use rand::Rng;

use crate::common::{base_seed, rat, rng};
use crate::paring::{check_valid, sec2_graph};

/// Oracle: every aggregating vertex aggregates all its children, within ⌊B/r⌋, and every
/// tree edge c → p has a shortest path (BFS in the graph without the other aggregating
/// switches) crossing no aggregating switch, so no switch forwards a stream it could fuse.
fn assert_coarse(g: &Graph, cfg: &ParingConfig, p: &GraphPlacement) {
    let ctx = format!("{} n={} R={}", p.algorithm, cfg.workers, cfg.rate_limit);
    let dist = distances(g);
    let slots = floor_div(&cfg.capacity, &p.rate) as usize;
    let aggs: Vec<usize> = p.nodes[1..].iter().map(|a| a.vertex).collect();
    for a in &p.nodes {
        assert_eq!(a.limit, a.children.len(), "{ctx}: partial aggregation");
        assert!(a.children.len() <= slots, "{ctx}: fan-in above ⌊B/r⌋");
        for &c in &a.children {
            let mut d = vec![u32::MAX; g.len()];
            d[c] = 0;
            let mut q = VecDeque::from([c]);
            while let Some(u) = q.pop_front() {
                for &w in g.neighbours(u) {
                    let blocked = aggs.contains(&w) && w != a.vertex;
                    if d[w] == u32::MAX && !blocked {
                        d[w] = d[u] + 1;
                        q.push_back(w);
                    }
                }
            }
            assert_eq!(
                d[a.vertex], dist[c][a.vertex],
                "{ctx}: {} -> {} crosses an aggregating switch",
                g.vertices[c].id, g.vertices[a.vertex].id
            );
        }
    }
}

#[test]
fn coarse_is_valid_never_above_fine_never_below_deepsys() {
    for i in 0..25u64 {
        let seed = base_seed() ^ (i * 104_729);
        let mut r = rng(seed);
        let k = if r.gen_bool(0.5) { 4 } else { 6 };
        let mut g = fat_tree(k).unwrap();
        let order = programmable_order(&g, k);
        let m = r.gen_range(0..=order.len());
        g.set_programmable(&order[..m]);
        let n = r.gen_range(1..(k * k * k / 4).min(36));
        let caps = ["1", "2", "2.5", "10", "7/3"];
        let rates = ["0.4", "1", "5", "6", "100"];
        let cfg = ParingConfig {
            workers: n,
            capacity: rat(caps[r.gen_range(0..caps.len())]),
            rate_limit: rat(rates[r.gen_range(0..rates.len())]),
            gradient: int(1627) / int(1024),
        };
        let ctx = format!("seed {seed:#x}: k={k} M={m} n={n}");
        let d = deepsys(&g, &cfg).unwrap();
        for (fine, coarse) in [
            (paring(&g, &cfg).unwrap(), paring_coarse(&g, &cfg).unwrap()),
            (atp(&g, &cfg).unwrap(), atp_coarse(&g, &cfg).unwrap()),
        ] {
            check_valid(&g, &cfg, &coarse);
            assert_coarse(&g, &cfg, &coarse);
            assert_eq!(coarse.ps, fine.ps, "{ctx}");
            assert!(
                coarse.rate <= fine.rate,
                "{ctx}: {} coarse rate above fine",
                fine.algorithm
            );
            assert!(
                coarse.rate >= d.rate && coarse.traffic <= d.traffic,
                "{ctx}: {} worse than DeepSys",
                fine.algorithm
            );
            if fine.algorithm == "paring" {
                // Fine PARING chooses among a superset of coarse PARING's trees.
                assert!(
                    coarse.rate < fine.rate || coarse.traffic >= fine.traffic,
                    "{ctx}: coarse PARING beats fine"
                );
            }
        }
    }
}

#[test]
fn deepsys_star_is_coarse() {
    let g = sec2_graph();
    let cfg = ParingConfig {
        workers: 7,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    assert_coarse(&g, &cfg, &deepsys(&g, &cfg).unwrap());
}

#[test]
fn sec2_example_needs_no_partial_aggregation() {
    // Fig. 1(c)'s PARING tree fuses everything it receives: coarse = fine = 15 GB, 1 Gbps, 8 s.
    let g = sec2_graph();
    let cfg = ParingConfig {
        workers: 7,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    let fine = paring(&g, &cfg).unwrap();
    let p = paring_coarse(&g, &cfg).unwrap();
    assert_eq!(
        (p.traffic.clone(), p.rate.clone(), p.time.clone()),
        (int(15), int(1), int(8))
    );
    assert!(is_coarse(&g, &distances(&g), &fine.nodes, fine.ps));
    assert_coarse(&g, &cfg, &p);
    let a = atp_coarse(&g, &cfg).unwrap();
    assert_coarse(&g, &cfg, &a);
    assert!(a.rate <= atp(&g, &cfg).unwrap().rate);
}

#[test]
fn fat_tree_six_five_workers_worked_example() {
    // M = 8, n = 5, B = 10, R = 5, b = 1. Fine: PS p0e0h0 ← {p0e0 ← {h1, h2}, p0a0 ← …},
    // 12 GB at 5 Gbps; p0a0's stream to the PS can only pass p0e0, which aggregates h1 and h2
    // and forwards it: partial aggregation. Coarse: p0e0 must fuse 3 streams, so 10/3 Gbps
    // (10 GB: p0e0 ← {h1, h2, p0a0 ← three servers of rack p0e1}).
    let mut g = fat_tree(6).unwrap();
    let order = programmable_order(&g, 6);
    g.set_programmable(&order[..8]);
    let cfg = ParingConfig {
        workers: 5,
        capacity: int(10),
        rate_limit: int(5),
        gradient: int(1),
    };
    let id = |v: usize| g.vertices[v].id.clone();
    let fine = paring(&g, &cfg).unwrap();
    assert_eq!((fine.hops, fine.rate.clone()), (12, int(5)));
    let parents = fine.parents();
    let p0a0 = g.find("p0a0").unwrap();
    assert_eq!(id(parents[&p0a0]), "p0e0h0");
    assert!(fine.nodes.iter().any(|a| id(a.vertex) == "p0e0"));
    assert!(!is_coarse(&g, &distances(&g), &fine.nodes, fine.ps));
    let p = paring_coarse(&g, &cfg).unwrap();
    assert_eq!((p.hops, p.rate.clone()), (10, int(10) / int(3)));
    assert_coarse(&g, &cfg, &p);
    let mut fans: Vec<(String, usize)> = p
        .nodes
        .iter()
        .map(|a| (id(a.vertex), a.children.len()))
        .collect();
    fans.sort();
    assert_eq!(
        fans,
        [
            ("p0a0".to_string(), 3),
            ("p0e0".into(), 3),
            ("p0e0h0".into(), 1)
        ]
    );
}

#[test]
fn coarse_configs_aggregate_every_child() {
    let mut g = fat_tree(4).unwrap();
    let order = programmable_order(&g, 4);
    g.set_programmable(&order[..6]);
    let cfg = ParingConfig {
        workers: 9,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    for p in [
        paring_coarse(&g, &cfg).unwrap(),
        atp_coarse(&g, &cfg).unwrap(),
    ] {
        let e = emit(&[(0, AggTree::from_graph(&g, &p))], &EmitOptions::default()).unwrap();
        assert_eq!(e.workers.len(), 9);
        for c in &e.switches {
            c.validate().unwrap();
            fanin_proto::model::Switch::new(c).unwrap();
            let j = &c.jobs[0];
            assert_eq!(j.degree_limit as usize, j.children.len(), "{}", c.name);
        }
    }
}

#[test]
fn coarse_experiments_write_figures_11_to_19() {
    use fanin_placement::experiment::{run, Name};
    let dir = std::env::temp_dir().join(format!("fanin-coarse-exp-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (name, tag, figs) in [
        (
            Name::ParingWorkersCoarse,
            "paring-workers-coarse",
            [11, 12, 13],
        ),
        (
            Name::ParingProgrammableCoarse,
            "paring-programmable-coarse",
            [14, 15, 16],
        ),
        (Name::ParingRateCoarse, "paring-rate-coarse", [17, 18, 19]),
    ] {
        let summary = run(name, &dir, 1, 1).unwrap();
        assert!(summary.contains("coarse-grained"), "{summary}");
        let csv = std::fs::read_to_string(dir.join(format!("{tag}.csv"))).unwrap();
        assert!(csv.starts_with("x,algorithm,rate_gbps,traffic_gb,time_s,hops\n"));
        // Three algorithms per point; PARING's rate is never below the baselines'.
        let rows: Vec<Vec<&str>> = csv
            .lines()
            .skip(1)
            .map(|l| l.split(',').collect())
            .collect();
        assert_eq!(rows.len() % 3, 0);
        for point in rows.chunks(3) {
            let rate = |i: usize| point[i][2].parse::<f64>().unwrap();
            assert_eq!(point[0][1], "paring");
            assert!(rate(0) >= rate(1) && rate(0) >= rate(2), "{point:?}");
        }
        for (fig, m) in figs.iter().zip(["traffic", "rate", "time"]) {
            assert!(dir.join(format!("paring-fig{fig}-{m}.svg")).exists());
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
