//! Loads (servers per switch): the papers' seeded generators and load files.

use std::collections::HashMap;

use rand::distributions::{Distribution, WeightedIndex};
use rand::Rng;
use rand_chacha::rand_core::SeedableRng;
use rand_chacha::ChaCha8Rng;

use crate::topology::Tree;

/// Exponent of the power-law load: P(x) ∝ (x + SHIFT)^-ALPHA on 1..=63.
pub const POWER_LAW_ALPHA: f64 = 1.23;
/// Shift of the power-law load (see [`POWER_LAW_ALPHA`]).
pub const POWER_LAW_SHIFT: f64 = -0.71;
/// Largest power-law load (the papers' maximum, 63).
pub const POWER_LAW_MAX: u64 = 63;

/// Where leaf loads come from.
#[derive(Debug, Clone, PartialEq)]
pub enum LoadSpec {
    /// Uniform integer in `lo..=hi` per leaf (SOAR: 4..=6, SMC: 1..=9).
    Uniform(u64, u64),
    /// The papers' power law on 1..=63 with mean 5 (see [`POWER_LAW_ALPHA`]).
    PowerLaw,
    /// Each workload uniform or power law with probability 1/2 (the multi-workload mix);
    /// the uniform range is given.
    Mixed(u64, u64),
    /// Loads by switch id from a JSON object file (`{"s4": 2, ...}`; missing ids get 0).
    File(HashMap<String, u64>),
}

impl LoadSpec {
    /// Parses `uniform`, `uniform:LO:HI`, `power-law`, `mixed[:LO:HI]` or a file path.
    pub fn parse(s: &str) -> Result<Self, String> {
        let range = |rest: &str, what: &str| -> Result<(u64, u64), String> {
            let (a, b) = rest
                .split_once(':')
                .ok_or_else(|| format!("{what}:LO:HI expected, got {s:?}"))?;
            let a: u64 = a
                .parse()
                .map_err(|_| format!("{s:?}: LO must be an integer"))?;
            let b: u64 = b
                .parse()
                .map_err(|_| format!("{s:?}: HI must be an integer"))?;
            if a > b {
                return Err(format!("{s:?}: LO exceeds HI"));
            }
            Ok((a, b))
        };
        match s {
            "uniform" => Ok(Self::Uniform(4, 6)),
            "power-law" => Ok(Self::PowerLaw),
            "mixed" => Ok(Self::Mixed(4, 6)),
            _ => {
                if let Some(r) = s.strip_prefix("uniform:") {
                    let (a, b) = range(r, "uniform")?;
                    Ok(Self::Uniform(a, b))
                } else if let Some(r) = s.strip_prefix("mixed:") {
                    let (a, b) = range(r, "mixed")?;
                    Ok(Self::Mixed(a, b))
                } else {
                    let text = std::fs::read_to_string(s)
                        .map_err(|e| format!("--loads {s}: {e} (expected uniform, uniform:LO:HI, power-law, mixed or a JSON file)"))?;
                    let m: HashMap<String, u64> = serde_json::from_str(&text).map_err(|e| {
                        format!("--loads {s}: expected a JSON object of id -> load: {e}")
                    })?;
                    Ok(Self::File(m))
                }
            }
        }
    }

    /// Loads for every switch of `tree`: generated specs fill leaves only; `rng` draws them.
    pub fn generate(&self, tree: &Tree, rng: &mut ChaCha8Rng) -> Result<Vec<u64>, String> {
        let mut loads = vec![0u64; tree.len()];
        match self {
            Self::File(m) => {
                for (id, &l) in m {
                    let v = tree
                        .find(id)
                        .ok_or_else(|| format!("--loads: unknown switch {id:?}"))?;
                    loads[v] = l;
                }
            }
            Self::Uniform(a, b) => tree
                .leaves()
                .into_iter()
                .for_each(|v| loads[v] = rng.gen_range(*a..=*b)),
            Self::PowerLaw => {
                let d = power_law();
                tree.leaves()
                    .into_iter()
                    .for_each(|v| loads[v] = d.sample(rng) as u64 + 1);
            }
            Self::Mixed(a, b) => {
                let inner = if rng.gen_bool(0.5) {
                    Self::Uniform(*a, *b)
                } else {
                    Self::PowerLaw
                };
                return inner.generate(tree, rng);
            }
        }
        Ok(loads)
    }
}

/// The power-law load distribution over 1..=63 (index 0 is load 1).
fn power_law() -> WeightedIndex<f64> {
    let w: Vec<f64> = (1..=POWER_LAW_MAX)
        .map(|x| (x as f64 + POWER_LAW_SHIFT).powf(-POWER_LAW_ALPHA))
        .collect();
    WeightedIndex::new(w).expect("positive weights")
}

/// A seeded generator (ChaCha8) for workloads.
pub fn rng(seed: u64) -> ChaCha8Rng {
    ChaCha8Rng::seed_from_u64(seed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::topology::binary_tree;

    #[test]
    fn power_law_has_the_papers_moments() {
        let t = binary_tree(1 << 15).unwrap();
        let l = LoadSpec::PowerLaw.generate(&t, &mut rng(7)).unwrap();
        let leaves: Vec<f64> = t.leaves().iter().map(|&v| l[v] as f64).collect();
        let mean = leaves.iter().sum::<f64>() / leaves.len() as f64;
        let var = leaves.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / leaves.len() as f64;
        assert!((mean - 5.0).abs() < 0.3, "mean {mean}");
        assert!((var - 97.1).abs() < 12.0, "variance {var}");
        assert!(leaves.iter().all(|&x| (1.0..=63.0).contains(&x)));
    }

    #[test]
    fn loads_are_seeded_and_leaf_only() {
        let t = binary_tree(16).unwrap();
        let a = LoadSpec::Uniform(4, 6).generate(&t, &mut rng(1)).unwrap();
        let b = LoadSpec::Uniform(4, 6).generate(&t, &mut rng(1)).unwrap();
        assert_eq!(a, b);
        for (v, &l) in a.iter().enumerate() {
            assert_eq!(l > 0, t.children(v).is_empty());
        }
    }
}
