//! Invariants on larger random trees: cost never increases with k, the optimum is never worse
//! than any baseline, U ⊆ Λ and |U| ≤ k; online placement respects switch capacities.

use fanin_placement::metrics::Scale;
use fanin_placement::multi::online;
use fanin_placement::{place, TreeAlgo};
use rand::Rng;

use crate::common::{base_seed, random_tree, rng};

#[test]
fn optimum_is_monotone_in_k_and_beats_every_baseline() {
    for i in 0..150u64 {
        let seed = base_seed() ^ (i << 20);
        let mut r = rng(seed);
        let t = random_tree(&mut r, 60);
        let s = Scale::new(&t).unwrap();
        let l = t.loads();
        let av: Vec<bool> = t.nodes.iter().map(|v| v.available).collect();
        let (mut last_u, mut last_c) = (None, None);
        for k in [0, 1, 2, 3, 5, 8, 13, 64] {
            let soar = place(TreeAlgo::Soar, &t, &s, &l, &av, k, 0).unwrap();
            let smc = place(TreeAlgo::Smc, &t, &s, &l, &av, k, 0).unwrap();
            for b in [
                TreeAlgo::Top,
                TreeAlgo::Max,
                TreeAlgo::Level,
                TreeAlgo::Random,
                TreeAlgo::AllRed,
            ] {
                let p = place(b, &t, &s, &l, &av, k, seed).unwrap();
                assert!(
                    p.blue.len() <= k && p.blue.iter().all(|&v| av[v]),
                    "seed {seed:#x}: {b:?} k {k}"
                );
                assert!(
                    soar.metrics.utilization <= p.metrics.utilization,
                    "seed {seed:#x}: SOAR worse than {b:?} at k {k}"
                );
                assert!(
                    smc.metrics.congestion <= p.metrics.congestion,
                    "seed {seed:#x}: SMC worse than {b:?} at k {k}"
                );
            }
            for p in [&soar, &smc] {
                assert!(
                    p.blue.len() <= k && p.blue.iter().all(|&v| av[v]),
                    "seed {seed:#x}"
                );
            }
            if let Some(u) = &last_u {
                assert!(
                    &soar.metrics.utilization <= u,
                    "seed {seed:#x}: φ grew with k"
                );
            }
            if let Some(c) = &last_c {
                assert!(
                    &smc.metrics.congestion <= c,
                    "seed {seed:#x}: ψ grew with k"
                );
            }
            last_u = Some(soar.metrics.utilization.clone());
            last_c = Some(smc.metrics.congestion.clone());
        }
        let all_blue = place(TreeAlgo::AllBlue, &t, &s, &l, &av, 0, 0).unwrap();
        let big = place(TreeAlgo::Soar, &t, &s, &l, &av, t.len(), 0).unwrap();
        assert_eq!(
            big.metrics.utilization, all_blue.metrics.utilization,
            "seed {seed:#x}: k = n must reach all-blue"
        );
    }
}

#[test]
fn online_placement_respects_capacities() {
    for i in 0..40u64 {
        let seed = base_seed() ^ (i << 24) ^ 0xabc;
        let mut r = rng(seed);
        let t = random_tree(&mut r, 30);
        let s = Scale::new(&t).unwrap();
        let cap: Vec<u32> = (0..t.len()).map(|_| r.gen_range(0..3)).collect();
        let wl: Vec<Vec<u64>> = (0..6)
            .map(|_| (0..t.len()).map(|_| r.gen_range(0..5)).collect())
            .collect();
        for a in [
            TreeAlgo::Soar,
            TreeAlgo::Smc,
            TreeAlgo::Top,
            TreeAlgo::Random,
        ] {
            let o = online(&t, &s, &wl, 3, &cap, a, seed).unwrap();
            let mut used = vec![0u32; t.len()];
            for p in &o.placements {
                assert!(p.blue.len() <= 3);
                for &b in &p.blue {
                    used[b] += 1;
                    assert!(t.nodes[b].available);
                }
            }
            for v in 0..t.len() {
                assert!(
                    used[v] <= cap[v],
                    "seed {seed:#x}: {a:?} overused {}",
                    t.nodes[v].id
                );
                assert_eq!(o.residual[v], cap[v] - used[v]);
            }
            let sum: fanin_placement::rational::Rat = o
                .placements
                .iter()
                .map(|p| p.metrics.utilization.clone())
                .sum();
            assert_eq!(o.utilization, sum);
            let max_single = o
                .placements
                .iter()
                .map(|p| p.metrics.congestion.clone())
                .max()
                .unwrap();
            assert!(
                o.congestion >= max_single,
                "cumulative congestion is at least any single workload's"
            );
        }
    }
}
