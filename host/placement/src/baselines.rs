//! Baseline placements on trees: Top, Max, Level and Random (all-red / all-blue are in
//! [`crate::place`]). Each returns at most k switches of Λ; ties are broken as documented.

use rand::seq::SliceRandom;

use crate::topology::Tree;
use crate::workload::rng;

/// Top: the k available switches closest to the destination; ties go to the larger
/// subtree load, then to breadth-first order.
pub fn top(tree: &Tree, loads: &[u64], avail: &[bool], k: usize) -> Vec<usize> {
    let below = tree.subtree_loads(loads);
    let mut c: Vec<(u32, std::cmp::Reverse<u64>, usize, usize)> = tree
        .bfs()
        .iter()
        .enumerate()
        .filter(|(_, &v)| avail[v])
        .map(|(pos, &v)| (tree.depth(v), std::cmp::Reverse(below[v]), pos, v))
        .collect();
    c.sort_unstable();
    c.into_iter().take(k).map(|t| t.3).collect()
}

/// Max: the k available switches with the largest own load (load > 0); ties go to
/// breadth-first order.
pub fn max(tree: &Tree, loads: &[u64], avail: &[bool], k: usize) -> Vec<usize> {
    let mut c: Vec<(std::cmp::Reverse<u64>, usize, usize)> = tree
        .bfs()
        .iter()
        .enumerate()
        .filter(|(_, &v)| avail[v] && loads[v] > 0)
        .map(|(pos, &v)| (std::cmp::Reverse(loads[v]), pos, v))
        .collect();
    c.sort_unstable();
    c.into_iter().take(k).map(|t| t.2).collect()
}

/// Level: the available switches of the deepest level that has at most k switches (on a
/// complete binary tree with k a power of two: exactly level log2 k).
pub fn level(tree: &Tree, avail: &[bool], k: usize) -> Vec<usize> {
    let h = tree.height() as usize;
    let mut count = vec![0usize; h + 1];
    for v in 0..tree.len() {
        count[tree.depth(v) as usize] += 1;
    }
    match (1..=h).rev().find(|&t| count[t] <= k) {
        Some(t) => (0..tree.len())
            .filter(|&v| tree.depth(v) as usize == t && avail[v])
            .collect(),
        None => Vec::new(),
    }
}

/// Random: k distinct available switches drawn with ChaCha8 seeded by `seed`.
pub fn random(tree: &Tree, avail: &[bool], k: usize, seed: u64) -> Vec<usize> {
    let cands: Vec<usize> = (0..tree.len()).filter(|&v| avail[v]).collect();
    cands.choose_multiple(&mut rng(seed), k).copied().collect()
}
