//! Brute-force oracles: on thousands of random small trees, SOAR and SMC equal exhaustive
//! search over every U ⊆ Λ with |U| ≤ k (k from 0 to n + 1).

use fanin_placement::metrics::Scale;
use fanin_placement::rational::Rat;
use fanin_placement::topology::Tree;
use fanin_placement::{place, TreeAlgo};
use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, ToPrimitive};

use crate::common::{base_seed, random_tree, rng};

/// An independent evaluator: ρ scaled by its own LCM, messages by direct recursion.
struct Brute {
    parent: Vec<Option<usize>>,
    rho: Vec<i128>,
    denom: BigInt,
    loads: Vec<u64>,
    order: Vec<usize>,
}

impl Brute {
    fn new(t: &Tree) -> Self {
        let mut l = BigInt::one();
        for v in &t.nodes {
            if let Some(r) = &v.rate {
                l = l.lcm(r.numer());
            }
        }
        let rho = t
            .nodes
            .iter()
            .map(|v| {
                v.rate
                    .as_ref()
                    .map_or(0, |r| (r.denom() * &l / r.numer()).to_i128().unwrap())
            })
            .collect();
        // Children after parents: sort by depth computed by walking up.
        let parent: Vec<Option<usize>> = t.nodes.iter().map(|v| v.parent).collect();
        let depth = |mut v: usize| {
            let mut d = 0;
            while let Some(p) = parent[v] {
                v = p;
                d += 1;
            }
            d
        };
        let mut order: Vec<usize> = (0..t.len()).collect();
        order.sort_by_key(|&v| std::cmp::Reverse(depth(v)));
        Self {
            parent,
            rho,
            denom: l,
            loads: t.loads(),
            order,
        }
    }

    /// (φ, ψ) scaled, for blue mask `mask`.
    fn cost(&self, blue: &[bool]) -> (i128, i128) {
        let n = self.parent.len();
        let mut up = self.loads.iter().map(|&x| x as i128).collect::<Vec<_>>();
        let mut below = up.clone();
        for &v in &self.order {
            if blue[v] {
                up[v] = below[v].min(1);
            }
            if let Some(p) = self.parent[v] {
                up[p] += up[v];
                below[p] += below[v];
            }
        }
        let (mut phi, mut psi) = (0, 0);
        for (u, r) in up.iter().zip(&self.rho).take(n) {
            phi += u * r;
            psi = psi.max(u * r);
        }
        (phi, psi)
    }

    fn rat(&self, x: i128) -> Rat {
        Rat::new(BigInt::from(x), self.denom.clone())
    }
}

/// Best (φ, ψ) over all U ⊆ Λ, |U| ≤ k.
fn exhaustive(t: &Tree, b: &Brute, k: usize) -> (i128, i128) {
    let cand: Vec<usize> = (0..t.len()).filter(|&v| t.nodes[v].available).collect();
    let (mut phi, mut psi) = (i128::MAX, i128::MAX);
    for mask in 0u32..(1 << cand.len()) {
        if mask.count_ones() as usize > k {
            continue;
        }
        let mut blue = vec![false; t.len()];
        for (i, &c) in cand.iter().enumerate() {
            blue[c] = mask >> i & 1 == 1;
        }
        let (p, s) = b.cost(&blue);
        phi = phi.min(p);
        psi = psi.min(s);
    }
    (phi, psi)
}

fn check_case(case_seed: u64) {
    let mut r = rng(case_seed);
    let t = random_tree(&mut r, 10);
    let scale = Scale::new(&t).unwrap();
    let b = Brute::new(&t);
    let loads = t.loads();
    let avail: Vec<bool> = t.nodes.iter().map(|v| v.available).collect();
    for k in 0..=t.len() + 1 {
        let (phi, psi) = exhaustive(&t, &b, k);
        let s = place(TreeAlgo::Soar, &t, &scale, &loads, &avail, k, 0).unwrap();
        let m = place(TreeAlgo::Smc, &t, &scale, &loads, &avail, k, 0).unwrap();
        let ctx = || format!("seed {case_seed:#x}, k {k}, tree {}", t.to_json());
        assert_eq!(
            s.metrics.utilization,
            b.rat(phi),
            "SOAR ≠ brute force; {}",
            ctx()
        );
        assert_eq!(
            m.metrics.congestion,
            b.rat(psi),
            "SMC ≠ brute force; {}",
            ctx()
        );
        for p in [&s, &m] {
            assert!(p.blue.len() <= k, "|U| > k; {}", ctx());
            assert!(p.blue.iter().all(|&v| avail[v]), "U ⊄ Λ; {}", ctx());
            let mut mask = vec![false; t.len()];
            p.blue.iter().for_each(|&v| mask[v] = true);
            let (pp, ps) = b.cost(&mask);
            assert_eq!(
                (b.rat(pp), b.rat(ps)),
                (p.metrics.utilization.clone(), p.metrics.congestion.clone()),
                "reported metrics wrong; {}",
                ctx()
            );
        }
    }
}

#[test]
fn soar_and_smc_equal_exhaustive_search_on_random_small_trees() {
    let base = base_seed();
    for i in 0..4000u64 {
        let seed = base.wrapping_mul(1_000_003).wrapping_add(i);
        if std::panic::catch_unwind(|| check_case(seed)).is_err() {
            panic!("oracle case failed: case seed {seed:#x} (base seed {base:#x}, set FANIN_TEST_SEED to reproduce)");
        }
    }
}
