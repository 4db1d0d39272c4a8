//! Exact cost of a placement: messages per link, utilisation φ and congestion ψ.
//!
//! Rates are rationals; [`Scale`] multiplies every ρ(e) = 1/ω(e) by the least common
//! multiple of the rate numerators so that all costs are exact `i128` integers.

use num_bigint::BigInt;
use num_integer::Integer;
use num_traits::{One, ToPrimitive};

use crate::rational::Rat;
use crate::topology::Tree;
use crate::PlacementError;

/// ρ(e) of every uplink as an integer multiple of 1/D.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scale {
    denom: BigInt,
    rho: Vec<i128>,
    max_rho: i128,
}

/// Largest scaled cost magnitude the algorithms accept (leaves headroom for tie-break packing).
const COST_LIMIT: i128 = 1 << 100;

impl Scale {
    /// Computes D and the scaled ρ of every link; fails if they do not fit 128-bit arithmetic.
    pub fn new(tree: &Tree) -> Result<Self, PlacementError> {
        let mut d = BigInt::one();
        for r in tree.nodes.iter().filter_map(|v| v.rate.as_ref()) {
            d = d.lcm(r.numer());
        }
        let mut rho = Vec::with_capacity(tree.len());
        for v in &tree.nodes {
            let s = match &v.rate {
                Some(r) => (r.denom() * &d / r.numer())
                    .to_i128()
                    .filter(|&x| x < COST_LIMIT)
                    .ok_or_else(|| {
                        PlacementError::Arithmetic(format!(
                            "rate of {:?} needs more than 100 bits at the common scale",
                            v.id
                        ))
                    })?,
                None => 0,
            };
            rho.push(s);
        }
        let max_rho = rho.iter().copied().max().unwrap_or(0);
        Ok(Self {
            denom: d,
            rho,
            max_rho,
        })
    }

    /// Scaled ρ of `v`'s uplink (0 when `v` has no destination link).
    pub fn rho(&self, v: usize) -> i128 {
        self.rho[v]
    }

    /// Whether switch `v` has an uplink that counts.
    pub fn has_link(&self, v: usize) -> bool {
        self.rho[v] > 0
    }

    /// A scaled cost back as an exact rational.
    pub fn to_rat(&self, x: i128) -> Rat {
        Rat::new(BigInt::from(x), self.denom.clone())
    }

    /// Checks that every cost over `n` switches with total load `total` fits, with room
    /// for packing a blue-node count below the cost (`× (n + 2)`).
    pub fn check(&self, n: usize, total: u64) -> Result<(), PlacementError> {
        let bound = BigInt::from(self.max_rho)
            * BigInt::from(total + n as u64 + 1)
            * BigInt::from(n + 1)
            * BigInt::from(n + 2);
        if bound >= BigInt::from(COST_LIMIT) * BigInt::from(1u64 << 20) {
            return Err(PlacementError::Arithmetic(
                "loads and rates too large for exact 128-bit costs".into(),
            ));
        }
        Ok(())
    }
}

/// Both metrics of one placement, exactly.
#[derive(Debug, Clone, PartialEq)]
pub struct Metrics {
    /// φ = Σ_e msg_e / ω(e).
    pub utilization: Rat,
    /// ψ = max_e msg_e / ω(e).
    pub congestion: Rat,
    /// Messages on each switch's uplink.
    pub msgs: Vec<u64>,
}

/// Messages each switch sends up: a blue switch sends min(1, load below it), a red one its
/// own load plus everything its children sent.
pub fn messages(tree: &Tree, loads: &[u64], blue: &[bool]) -> Vec<u64> {
    let mut up = loads.to_vec();
    let mut below = loads.to_vec();
    for &v in tree.bfs().iter().rev() {
        if blue[v] {
            up[v] = below[v].min(1);
        }
        if let Some(p) = tree.nodes[v].parent {
            up[p] += up[v];
            below[p] += below[v];
        }
    }
    up
}

/// Scaled utilisation and congestion of per-link message counts.
pub fn scaled(scale: &Scale, msgs: &[u64]) -> (i128, i128) {
    let mut phi = 0i128;
    let mut psi = 0i128;
    for (v, &m) in msgs.iter().enumerate() {
        let c = m as i128 * scale.rho(v);
        phi += c;
        psi = psi.max(c);
    }
    (phi, psi)
}

/// Evaluates a blue set (given as a membership vector) exactly.
pub fn evaluate(tree: &Tree, scale: &Scale, loads: &[u64], blue: &[bool]) -> Metrics {
    let msgs = messages(tree, loads, blue);
    let (phi, psi) = scaled(scale, &msgs);
    Metrics {
        utilization: scale.to_rat(phi),
        congestion: scale.to_rat(psi),
        msgs,
    }
}

/// A blue set as a membership vector over `n` switches.
pub fn membership(n: usize, blue: &[usize]) -> Vec<bool> {
    let mut m = vec![false; n];
    for &b in blue {
        m[b] = true;
    }
    m
}
