//! PARING: the Sec. II example, and validity on random settings (tree valid, degree limits
//! hold at the returned rate, rate ≤ R, never worse than DeepSys).

use fanin_placement::paring::{atp, deepsys, paring, GraphPlacement, ParingConfig};
use fanin_placement::rational::{floor_div, int, Rat};
use fanin_placement::topology::{fat_tree, programmable_order, Graph, Kind};
use rand::Rng;

use crate::common::{base_seed, rat, rng};

/// Fig. 1's cluster as we read it: 12 of 20 switches programmable; the PS's own edge switch,
/// the second aggregation switch of every pod and cores c1..c3 are not.
pub fn sec2_graph() -> Graph {
    let mut g = fat_tree(4).unwrap();
    let off = ["p0e0", "p0a1", "p1a1", "p2a1", "p3a1", "c1", "c2", "c3"];
    let on: Vec<usize> = (0..g.len())
        .filter(|&v| {
            matches!(g.vertices[v].kind, Kind::Switch { .. })
                && !off.contains(&g.vertices[v].id.as_str())
        })
        .collect();
    assert_eq!(on.len(), 12);
    g.set_programmable(&on);
    g
}

#[test]
fn sec2_example_deepsys_and_paring() {
    let g = sec2_graph();
    let cfg = ParingConfig {
        workers: 7,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    let d = deepsys(&g, &cfg).unwrap();
    assert_eq!(
        (d.traffic.clone(), d.rate.clone(), d.time.clone()),
        (int(34), int(2) / int(7), int(28))
    );
    let p = paring(&g, &cfg).unwrap();
    assert_eq!(
        (p.traffic.clone(), p.rate.clone(), p.time.clone()),
        (int(15), int(1), int(8))
    );
    check_valid(&g, &cfg, &p);
}

pub fn check_valid(g: &Graph, cfg: &ParingConfig, p: &GraphPlacement) {
    let ctx = format!(
        "{} n={} B={} R={}",
        p.algorithm, cfg.workers, cfg.capacity, cfg.rate_limit
    );
    assert_eq!(p.workers.len(), cfg.workers, "{ctx}");
    assert!(p.rate <= cfg.rate_limit && p.rate > int(0), "{ctx}");
    let parents = p.parents();
    // Every worker is a leaf that reaches the PS without a cycle.
    for &w in &p.workers {
        assert!(
            matches!(g.vertices[w].kind, Kind::Server { occupied: false }) && w != p.ps,
            "{ctx}"
        );
        assert!(
            p.nodes.iter().all(|a| a.vertex != w),
            "{ctx}: worker aggregates"
        );
        let (mut v, mut steps) = (w, 0);
        while v != p.ps {
            v = parents[&v];
            steps += 1;
            assert!(steps <= g.len(), "{ctx}: cycle");
        }
    }
    assert_eq!(p.nodes[0].vertex, p.ps);
    let slots = floor_div(&cfg.capacity, &p.rate) as usize;
    let dist = fanin_placement::paring::distances(g);
    let mut hops = 0u64;
    for a in &p.nodes {
        if a.vertex != p.ps {
            assert!(
                matches!(
                    g.vertices[a.vertex].kind,
                    Kind::Switch { programmable: true }
                ),
                "{ctx}: non-programmable aggregator"
            );
        }
        // Degree limit at the returned rate: fan-in · r ≤ B.
        assert!(
            a.limit <= slots && a.limit >= 1 && a.limit <= a.children.len(),
            "{ctx}: {} fuses {} > {slots}",
            g.vertices[a.vertex].id,
            a.limit
        );
        for (i, &c) in a.children.iter().enumerate() {
            hops += if i < a.limit {
                dist[c][a.vertex]
            } else {
                dist[c][p.ps]
            } as u64;
        }
    }
    assert_eq!(hops, p.hops, "{ctx}");
    assert_eq!(p.traffic, &cfg.gradient * int(hops as i64));
    assert_eq!(p.time, &cfg.gradient * int(8) / &p.rate);
}

#[test]
fn paring_is_valid_and_never_worse_than_deepsys() {
    for i in 0..25u64 {
        let seed = base_seed() ^ (i * 7919);
        let mut r = rng(seed);
        let k = if r.gen_bool(0.5) { 4 } else { 6 };
        let mut g = fat_tree(k).unwrap();
        let order = programmable_order(&g, k);
        let m = r.gen_range(0..=order.len());
        g.set_programmable(&order[..m]);
        let servers = k * k * k / 4;
        let n = r.gen_range(1..servers.min(36));
        let caps = ["1", "2", "2.5", "10", "7/3"];
        let rates = ["0.4", "1", "5", "6", "100"];
        let cfg = ParingConfig {
            workers: n,
            capacity: rat(caps[r.gen_range(0..caps.len())]),
            rate_limit: rat(rates[r.gen_range(0..rates.len())]),
            gradient: int(1627) / int(1024),
        };
        let p = paring(&g, &cfg).unwrap();
        let d = deepsys(&g, &cfg).unwrap();
        let a = atp(&g, &cfg).unwrap();
        for x in [&p, &d, &a] {
            check_valid(&g, &cfg, x);
        }
        let ctx = format!("seed {seed:#x}: k={k} M={m} n={n}");
        assert!(
            p.rate >= d.rate,
            "{ctx}: rate {} < DeepSys {}",
            p.rate,
            d.rate
        );
        assert!(
            p.traffic <= d.traffic,
            "{ctx}: traffic {} > DeepSys {}",
            p.traffic,
            d.traffic
        );
        assert_eq!(
            d.rate,
            cfg.rate_limit.clone().min(&cfg.capacity / int(n as i64)),
            "{ctx}"
        );
        let _: Rat = p.time;
    }
}

#[test]
fn deepsys_on_the_evaluation_cluster_matches_the_paper() {
    // Sec. V: 20 workers on fat-tree k = 6 → 100 hops = 158.9 GB at 1627 MB.
    let g = fat_tree(6).unwrap();
    let cfg = ParingConfig {
        workers: 20,
        capacity: int(10),
        rate_limit: int(5),
        gradient: int(1627) / int(1024),
    };
    let d = deepsys(&g, &cfg).unwrap();
    assert_eq!(d.hops, 100);
    assert!((fanin_placement::rational::to_f64(&d.traffic) - 158.9).abs() < 0.05);
}
