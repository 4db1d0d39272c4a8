//! fanin-placement: which switches aggregate which jobs, and the job tables they load.
//!
//! - [`topology`]: trees (JSON, `bt:N`, `sf:N:SEED`) and graphs (JSON, `fat-tree:K`);
//! - [`workload`]: seeded uniform / power-law loads and load files;
//! - [`soar`] (min utilisation), [`smc`] (min congestion), [`baselines`], [`multi`] (online
//!   workloads with switch capacities) on trees, all in exact arithmetic ([`metrics`]);
//! - [`paring`]: PS selection, degree-limited rate and Steiner tree on general graphs;
//! - [`emit`]: per-switch [`fanin_proto::config::SwitchConfig`] files and worker assignments;
//! - [`cli`] and [`experiment`]: `fanin place` and `fanin experiment`.
#![forbid(unsafe_code)]

pub mod aggtree;
pub mod baselines;
pub mod cli;
mod dp;
pub mod emit;
pub mod experiment;
pub mod metrics;
pub mod multi;
pub mod paring;
pub mod plot;
pub mod rational;
pub mod smc;
pub mod soar;
pub mod topology;
pub mod wiring;
pub mod workload;

use metrics::{Metrics, Scale};
use topology::Tree;

/// Why a placement could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlacementError {
    /// The topology is unusable.
    #[error(transparent)]
    Topology(#[from] topology::TopologyError),
    /// Exact integer arithmetic would overflow.
    #[error("exact arithmetic: {0}")]
    Arithmetic(String),
    /// The request is inconsistent (e.g. Level with an unsupported k).
    #[error("{0}")]
    Invalid(String),
}

/// A set of aggregating (blue) switches on a tree and its exact metrics.
#[derive(Debug, Clone, PartialEq)]
pub struct Placement {
    /// Algorithm name.
    pub algorithm: String,
    /// Budget k.
    pub k: usize,
    /// Blue switches, ascending by index.
    pub blue: Vec<usize>,
    /// Utilisation, congestion and per-link messages.
    pub metrics: Metrics,
}

/// A tree placement algorithm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, clap::ValueEnum)]
pub enum TreeAlgo {
    /// SOAR: optimal utilisation.
    Soar,
    /// SMC: optimal congestion.
    Smc,
    /// The k switches closest to the destination.
    Top,
    /// The k switches with the largest load.
    Max,
    /// One whole level of the tree.
    Level,
    /// k random switches (seeded).
    Random,
    /// No aggregation.
    AllRed,
    /// Every available switch aggregates.
    AllBlue,
}

impl TreeAlgo {
    /// Every tree algorithm, in display order.
    pub const ALL: [TreeAlgo; 8] = [
        Self::Soar,
        Self::Smc,
        Self::Top,
        Self::Max,
        Self::Level,
        Self::Random,
        Self::AllRed,
        Self::AllBlue,
    ];

    /// The CLI name.
    pub fn name(self) -> &'static str {
        match self {
            Self::Soar => "soar",
            Self::Smc => "smc",
            Self::Top => "top",
            Self::Max => "max",
            Self::Level => "level",
            Self::Random => "random",
            Self::AllRed => "all-red",
            Self::AllBlue => "all-blue",
        }
    }
}

/// Runs one tree algorithm with candidate set `avail`; `seed` drives Random.
pub fn place(
    algo: TreeAlgo,
    tree: &Tree,
    scale: &Scale,
    loads: &[u64],
    avail: &[bool],
    k: usize,
    seed: u64,
) -> Result<Placement, PlacementError> {
    let mut p = match algo {
        TreeAlgo::Soar => return soar::soar(tree, scale, loads, avail, k),
        TreeAlgo::Smc => return smc::smc(tree, scale, loads, avail, k),
        TreeAlgo::Top => baselines::top(tree, loads, avail, k),
        TreeAlgo::Max => baselines::max(tree, loads, avail, k),
        TreeAlgo::Level => baselines::level(tree, avail, k),
        TreeAlgo::Random => baselines::random(tree, avail, k, seed),
        TreeAlgo::AllRed => Vec::new(),
        TreeAlgo::AllBlue => (0..tree.len()).filter(|&v| avail[v]).collect(),
    };
    p.sort_unstable();
    let metrics = metrics::evaluate(tree, scale, loads, &metrics::membership(tree.len(), &p));
    Ok(Placement {
        algorithm: algo.name().into(),
        k,
        blue: p,
        metrics,
    })
}
