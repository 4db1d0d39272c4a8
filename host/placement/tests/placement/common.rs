//! Shared helpers: seeded random trees and the papers' example trees.

use fanin_placement::rational::{int, Rat};
use fanin_placement::topology::{Node, Tree};
use rand::seq::SliceRandom;
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// Base seed: `FANIN_TEST_SEED` or a fixed default.
pub fn base_seed() -> u64 {
    std::env::var("FANIN_TEST_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0x5eed)
}

pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

/// A random tree of 1..=max_n switches: random shapes, rates (integers and decimals),
/// availability, loads (zeros included, on any switch), some roots without a destination link.
pub fn random_tree(r: &mut ChaCha8Rng, max_n: usize) -> Tree {
    let n = r.gen_range(1..=max_n);
    let rates = [
        int(1),
        int(2),
        int(3),
        int(1) / int(2),
        int(1) / int(10),
        int(5) / int(2),
        int(3) / int(4),
    ];
    let mut nodes = Vec::new();
    for i in 0..n {
        let parent = if i == 0 || r.gen_bool(0.1) {
            None
        } else {
            Some(r.gen_range(0..i))
        };
        let rate = if parent.is_none() && r.gen_bool(0.2) {
            None
        } else {
            Some(rates.choose(r).unwrap().clone())
        };
        let load = if r.gen_bool(0.35) {
            0
        } else {
            r.gen_range(1..=6)
        };
        nodes.push(Node {
            id: format!("n{i}"),
            parent,
            rate,
            load,
            available: r.gen_bool(0.75),
            capacity: None,
        });
    }
    // Shuffle the file order: parents need not come first.
    let mut perm: Vec<usize> = (0..n).collect();
    perm.shuffle(r);
    let mut inv = vec![0; n];
    for (new, &old) in perm.iter().enumerate() {
        inv[old] = new;
    }
    let shuffled = perm.iter().map(|&old| {
        let mut v = nodes[old].clone();
        v.parent = v.parent.map(|p| inv[p]);
        v
    });
    Tree::new("d", shuffled.collect()).expect("valid random tree")
}

fn node(id: &str, parent: Option<usize>, load: u64) -> Node {
    Node {
        id: id.into(),
        parent,
        rate: Some(int(1)),
        load,
        available: true,
        capacity: None,
    }
}

/// The 7-switch complete binary tree of the papers with leaf loads `l`.
pub fn seven(names: [&str; 7], l: [u64; 4]) -> Tree {
    let [r, a, b, l1, l2, l3, l4] = names;
    Tree::new(
        "d",
        vec![
            node(r, None, 0),
            node(a, Some(0), 0),
            node(b, Some(0), 0),
            node(l1, Some(1), l[0]),
            node(l2, Some(1), l[1]),
            node(l3, Some(2), l[2]),
            node(l4, Some(2), l[3]),
        ],
    )
    .unwrap()
}

pub fn ids(t: &Tree, b: &[usize]) -> Vec<String> {
    let mut v: Vec<String> = b.iter().map(|&i| t.nodes[i].id.clone()).collect();
    v.sort();
    v
}

pub fn rat(s: &str) -> Rat {
    fanin_placement::rational::parse_rat(s).unwrap()
}
