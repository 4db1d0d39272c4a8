//! Online placement of a sequence of workloads with per-switch aggregation capacities.
//!
//! Workload t is placed with Λ_t = {s ∈ Λ : a_t(s) > 0}; every switch it colours blue loses
//! one unit of capacity. The reported metrics are cumulative over the sequence:
//! utilisation Σ_t φ_t, and congestion max_e Σ_t msg_{e,t} / ω(e) (the links carry all
//! workloads at once), which is the documented choice for the papers' open metric.

use crate::metrics::{scaled, Scale};
use crate::rational::Rat;
use crate::topology::Tree;
use crate::{place, Placement, PlacementError, TreeAlgo};

/// The outcome of an online run.
#[derive(Debug, Clone, PartialEq)]
pub struct Online {
    /// One placement per workload, in arrival order.
    pub placements: Vec<Placement>,
    /// Σ_t φ_t.
    pub utilization: Rat,
    /// max_e Σ_t msg_{e,t} / ω(e).
    pub congestion: Rat,
    /// Residual capacity of each switch after the last workload.
    pub residual: Vec<u32>,
}

/// Places `workloads` one after another with `algo`, budget `k` per workload and initial
/// capacities `capacity` (per switch). Random uses seed `seed + t` for workload t.
pub fn online(
    tree: &Tree,
    scale: &Scale,
    workloads: &[Vec<u64>],
    k: usize,
    capacity: &[u32],
    algo: TreeAlgo,
    seed: u64,
) -> Result<Online, PlacementError> {
    let n = tree.len();
    let mut left = capacity.to_vec();
    let mut sum = vec![0u64; n];
    let mut placements = Vec::new();
    let mut phi = 0i128;
    for (t, loads) in workloads.iter().enumerate() {
        let avail: Vec<bool> = (0..n)
            .map(|v| tree.nodes[v].available && left[v] > 0)
            .collect();
        let p = place(
            algo,
            tree,
            scale,
            loads,
            &avail,
            k,
            seed.wrapping_add(t as u64),
        )?;
        for &b in &p.blue {
            left[b] -= 1;
        }
        for (s, m) in sum.iter_mut().zip(&p.metrics.msgs) {
            *s += m;
        }
        phi += scaled(scale, &p.metrics.msgs).0;
        placements.push(p);
    }
    let psi = scaled(scale, &sum).1;
    Ok(Online {
        placements,
        utilization: scale.to_rat(phi),
        congestion: scale.to_rat(psi),
        residual: left,
    })
}

/// Initial capacities: each switch's `capacity` from the topology, else `default`.
pub fn capacities(tree: &Tree, default: u32) -> Vec<u32> {
    tree.nodes
        .iter()
        .map(|v| v.capacity.unwrap_or(default))
        .collect()
}
