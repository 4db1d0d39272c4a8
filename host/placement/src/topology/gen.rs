//! Tree generators: `bt:N` (complete binary tree) and `sf:N:SEED` (preferential attachment).

use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::tree::{Node, Tree};
use super::TopologyError;
use crate::rational::{int, parse_positive, Rat};

/// How link rates grow from the leaves (rate 1) towards the destination.
#[derive(Debug, Clone, PartialEq)]
pub enum RateScheme {
    /// Every link has rate 1.
    Constant,
    /// A link whose lower end has height j (leaves 0) has rate 1 + j.
    Linear,
    /// A link whose lower end has height j has rate base^j.
    Exponential(Rat),
}

impl RateScheme {
    /// Parses `constant`, `linear` or `exp:BASE` (e.g. `exp:2`, `exp:1.5`).
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "constant" => Ok(Self::Constant),
            "linear" => Ok(Self::Linear),
            _ => match s.strip_prefix("exp:") {
                Some(b) => Ok(Self::Exponential(parse_positive(b, "exp base")?)),
                None => Err(format!(
                    "unknown rate scheme {s:?} (expected constant, linear or exp:BASE)"
                )),
            },
        }
    }

    /// The rate of a link whose lower end has height `j`.
    pub fn rate(&self, j: u32) -> Rat {
        match self {
            Self::Constant => int(1),
            Self::Linear => int(1 + j as i64),
            Self::Exponential(b) => num_traits::pow(b.clone(), j as usize),
        }
    }

    /// Sets every link's rate of `tree` by this scheme.
    pub fn apply(&self, tree: &mut Tree) {
        let h = tree.heights();
        for (v, node) in tree.nodes.iter_mut().enumerate() {
            if node.rate.is_some() {
                node.rate = Some(self.rate(h[v]));
            }
        }
    }
}

fn switch(id: String, parent: Option<usize>) -> Node {
    Node {
        id,
        parent,
        rate: Some(int(1)),
        load: 0,
        available: true,
        capacity: None,
    }
}

/// `bt:N`: a complete binary tree of N nodes counting the destination `d`.
///
/// Switches are `s1..s{N-1}` in heap order: `s1` is the root, `s{i}`'s children are
/// `s{2i}` and `s{2i+1}`. All rates 1, no load (set loads with a workload generator).
pub fn binary_tree(n: usize) -> Result<Tree, TopologyError> {
    if n < 2 {
        return Err(TopologyError::Invalid(format!(
            "bt:{n}: N counts the destination and must be at least 2"
        )));
    }
    let nodes = (1..n)
        .map(|i| switch(format!("s{i}"), if i == 1 { None } else { Some(i / 2 - 1) }))
        .collect();
    Tree::new("d", nodes)
}

/// `sf:N:SEED`: a random preferential-attachment tree of N nodes counting `d`.
///
/// Switches are `s1..s{N-1}` in arrival order; `s1` is the root (linked to `d`). Switch
/// `s{i}` attaches to an earlier switch chosen with probability proportional to its degree
/// (the root's link to `d` counts). Every switch has load 1, as in SOAR's appendix B.
pub fn scale_free(n: usize, seed: u64) -> Result<Tree, TopologyError> {
    if n < 2 {
        return Err(TopologyError::Invalid(format!(
            "sf:{n}: N counts the destination and must be at least 2"
        )));
    }
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    // Each switch appears in `ends` once per incident link: sampling uniformly is degree-proportional.
    let mut ends: Vec<usize> = vec![0];
    let mut nodes = vec![switch("s1".into(), None)];
    for i in 1..n - 1 {
        let p = ends[rng.gen_range(0..ends.len())];
        nodes.push(switch(format!("s{}", i + 1), Some(p)));
        ends.push(p);
        ends.push(i);
    }
    for v in &mut nodes {
        v.load = 1;
    }
    Tree::new("d", nodes)
}
