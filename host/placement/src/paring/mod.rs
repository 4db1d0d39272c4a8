//! PARING on general graphs: PS selection (Step 1), the degree-limited rate (Step 2) and
//! the degree-constrained Steiner aggregation tree (Step 3), plus the DeepSys and ATP-like
//! baselines, each with fine-grained (partial aggregation allowed) or coarse-grained routing
//! ([`coarse`]). Rates are exact rationals in Gbps; traffic is in GB; time in seconds.

mod baselines;
pub mod coarse;
mod improve;
mod steiner;

pub use baselines::{atp, atp_coarse, deepsys};
pub use steiner::CapMode;

use num_traits::{ToPrimitive, Zero};

use crate::rational::{floor_div, int, Rat};
use crate::topology::{Graph, Kind};
use crate::PlacementError;

/// Inputs of a PARING-style placement.
#[derive(Debug, Clone, PartialEq)]
pub struct ParingConfig {
    /// Number of workers n.
    pub workers: usize,
    /// Aggregation capacity B (Gbps) of every programmable switch and of the PS.
    pub capacity: Rat,
    /// Upper bound R (Gbps) on the gradient sending rate.
    pub rate_limit: Rat,
    /// Gradient size b (GB) per worker per iteration.
    pub gradient: Rat,
}

/// An aggregating vertex of the result: the PS or a switch, its children in order, and how
/// many of them it aggregates (the rest are forwarded unaggregated to the PS).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggVertex {
    /// Graph vertex.
    pub vertex: usize,
    /// Children (workers or switches), by child index.
    pub children: Vec<usize>,
    /// Fan-in limit: children `0..limit` are aggregated here.
    pub limit: usize,
}

/// A placement on a graph: PS, workers, aggregation tree, rate, traffic and time.
#[derive(Debug, Clone, PartialEq)]
pub struct GraphPlacement {
    /// `paring`, `deepsys` or `atp`.
    pub algorithm: String,
    /// The PS server.
    pub ps: usize,
    /// Worker servers, ascending.
    pub workers: Vec<usize>,
    /// The PS first, then aggregating switches.
    pub nodes: Vec<AggVertex>,
    /// Gradient sending rate r (Gbps).
    pub rate: Rat,
    /// Σ hops of the upward tree (bypassed streams count their whole path to the PS).
    pub hops: u64,
    /// b · hops (GB).
    pub traffic: Rat,
    /// 8 · b / r (seconds: GB to Gb over Gbps).
    pub time: Rat,
}

impl GraphPlacement {
    fn finish(
        algorithm: &str,
        ps: usize,
        mut workers: Vec<usize>,
        nodes: Vec<AggVertex>,
        rate: Rat,
        hops: u64,
        cfg: &ParingConfig,
    ) -> Self {
        workers.sort_unstable();
        let traffic = &cfg.gradient * int(hops as i64);
        let time = &cfg.gradient * int(8) / &rate;
        Self {
            algorithm: algorithm.into(),
            ps,
            workers,
            nodes,
            rate,
            hops,
            traffic,
            time,
        }
    }

    /// The parent of every tree member (PS has none).
    pub fn parents(&self) -> std::collections::BTreeMap<usize, usize> {
        let mut p = std::collections::BTreeMap::new();
        for a in &self.nodes {
            for &c in &a.children {
                p.insert(c, a.vertex);
            }
        }
        p
    }
}

/// All-pairs hop distances (BFS from every vertex).
pub fn distances(g: &Graph) -> Vec<Vec<u32>> {
    (0..g.len())
        .map(|s| {
            g.hops_from(s)
                .into_iter()
                .map(|d| d.unwrap_or(u32::MAX))
                .collect()
        })
        .collect()
}

/// Idle servers.
pub fn idle_servers(g: &Graph) -> Vec<usize> {
    (0..g.len())
        .filter(|&v| matches!(g.vertices[v].kind, Kind::Server { occupied: false }))
        .collect()
}

/// Programmable switches.
pub fn programmable(g: &Graph) -> Vec<usize> {
    (0..g.len())
        .filter(|&v| matches!(g.vertices[v].kind, Kind::Switch { programmable: true }))
        .collect()
}

/// Checks the configuration against the graph.
pub fn check(g: &Graph, cfg: &ParingConfig) -> Result<(), PlacementError> {
    let idle = idle_servers(g).len();
    if cfg.workers == 0 {
        return Err(PlacementError::Invalid(
            "--workers must be at least 1".into(),
        ));
    }
    if idle < cfg.workers + 1 {
        return Err(PlacementError::Invalid(format!(
            "{} workers and a PS need {} idle servers; the topology has {idle}",
            cfg.workers,
            cfg.workers + 1
        )));
    }
    for (what, r) in [
        ("capacity", &cfg.capacity),
        ("rate limit", &cfg.rate_limit),
        ("gradient size", &cfg.gradient),
    ] {
        if r <= &Rat::zero() {
            return Err(PlacementError::Invalid(format!("{what} must be positive")));
        }
    }
    Ok(())
}

/// Step 1: the idle server whose n nearest idle servers are nearest on average (all servers
/// have the same capacity B); ties go to the lowest vertex index.
pub fn select_ps(g: &Graph, dist: &[Vec<u32>], n: usize) -> usize {
    let idle = idle_servers(g);
    let score = |v: usize| {
        let mut d: Vec<u32> = idle
            .iter()
            .filter(|&&u| u != v)
            .map(|&u| dist[v][u])
            .collect();
        d.sort_unstable();
        d.iter().take(n).map(|&x| x as u64).sum::<u64>()
    };
    *idle
        .iter()
        .min_by_key(|&&v| (score(v), v))
        .expect("at least one idle server")
}

/// Step 2 (errata applied): the largest rate r ≤ R at which the fan-in slots ⌊B_v/r⌋ of the
/// PS and of the switches that can fuse two streams (B_v ≥ 2r) absorb all streams.
pub fn step2_rate(switches: usize, cfg: &ParingConfig) -> Rat {
    let b = &cfg.capacity;
    let n = cfg.workers as u64;
    let ok = |r: &Rat| {
        let kept = if *b >= r * int(2) { switches as u64 } else { 0 };
        floor_div(b, r) * (kept + 1) >= n + kept
    };
    let all = switches as i64 + 1;
    let mut r = cfg
        .rate_limit
        .clone()
        .min(b * int(all) / int(n as i64 + switches as i64));
    while !ok(&r) {
        r = next_rate(b, &r);
    }
    r
}

/// The next lower rate at which a vertex of capacity `b` gains a fan-in slot (line 13,
/// without the printed outer floor).
pub fn next_rate(b: &Rat, r: &Rat) -> Rat {
    b / int(floor_div(b, r) as i64 + 1)
}

/// Degree limit of a switch at rate r: ⌊B/r⌋ + 1 (the parent edge included).
pub fn switch_degree(b: &Rat, r: &Rat) -> usize {
    floor_div(b, r).to_usize().unwrap_or(usize::MAX) + 1
}

/// Degree limit of the PS at rate r: max(1, ⌊B/r⌋).
pub fn ps_degree(b: &Rat, r: &Rat) -> usize {
    floor_div(b, r).to_usize().unwrap_or(usize::MAX).max(1)
}

/// Line 23 (errata applied): the rate the tree sustains, from actual fan-ins, capped by R.
pub fn tree_rate(nodes: &[AggVertex], cfg: &ParingConfig) -> Rat {
    let mut r = cfg.rate_limit.clone();
    for a in nodes {
        let fan = a.limit.min(a.children.len());
        if fan > 0 {
            r = r.min(&cfg.capacity / int(fan as i64));
        }
    }
    r
}

/// PARING: PS by Step 1, rate by Step 2, tree by Alg. 3 under both degree caps; if no tree
/// connects all workers the rate is lowered (line 13's rule) and Step 3 retried. Each tree
/// is improved by a rate-preserving local search. The result is the best, by (rate, then
/// traffic), of those trees, the locally improved first-programmable-switch tree on the same
/// PS, their coarse-grained adjustments and the DeepSys star, keeping only trees at least as
/// good as DeepSys on both.
pub fn paring(g: &Graph, cfg: &ParingConfig) -> Result<GraphPlacement, PlacementError> {
    Ok(paring_both(g, cfg)?.0)
}

/// PARING under coarse-grained routing (no partial aggregation): the fine candidate trees
/// and Step 3 restricted to clean spiders, each adjusted by [`coarse::adjust`] at its own
/// rate (lowered by line 13's rule until the PS can fuse all it receives), and coarse ATP;
/// the best by (rate, then traffic) that is at least as good as DeepSys on both, else the
/// DeepSys star. Never better than [`paring`], which also considers these trees.
pub fn paring_coarse(g: &Graph, cfg: &ParingConfig) -> Result<GraphPlacement, PlacementError> {
    Ok(paring_both(g, cfg)?.1)
}

/// Adjusts `nodes` (a tree at rate `from`) to coarse-grained routing at the highest rate of
/// line 13's sequence from `from` at which that succeeds.
fn coarse_candidate(
    g: &Graph,
    dist: &[Vec<u32>],
    p: &GraphPlacement,
    cfg: &ParingConfig,
) -> Option<GraphPlacement> {
    let mut r = p.rate.clone();
    loop {
        let limit = floor_div(&cfg.capacity, &r)
            .to_usize()
            .unwrap_or(usize::MAX);
        if let Some(nodes) = coarse::adjust(g, dist, &p.nodes, p.ps, limit) {
            let rate = tree_rate(&nodes, cfg);
            let hops = tree_hops(&nodes, dist);
            return Some(GraphPlacement::finish(
                "paring",
                p.ps,
                p.workers.clone(),
                nodes,
                rate,
                hops,
                cfg,
            ));
        }
        if limit >= cfg.workers {
            return None;
        }
        r = next_rate(&cfg.capacity, &r);
    }
}

/// The best of `cands` and `base` by (rate, then traffic), among those that are at least as
/// good as `base` on both.
fn pick(base: &GraphPlacement, cands: &[GraphPlacement]) -> GraphPlacement {
    let mut best = GraphPlacement {
        algorithm: "paring".into(),
        ..base.clone()
    };
    for c in cands {
        let dominates_base = c.rate >= base.rate && c.hops <= base.hops;
        let better = c.rate > best.rate || (c.rate == best.rate && c.hops < best.hops);
        if dominates_base && better {
            best = c.clone();
        }
    }
    best
}

/// PARING's fine-grained and coarse-grained results on the same candidates.
fn paring_both(
    g: &Graph,
    cfg: &ParingConfig,
) -> Result<(GraphPlacement, GraphPlacement), PlacementError> {
    check(g, cfg)?;
    let dist = distances(g);
    let ps = select_ps(g, &dist, cfg.workers);
    let switches = programmable(g);
    let terminals: Vec<usize> = idle_servers(g).into_iter().filter(|&v| v != ps).collect();
    let base = deepsys(g, cfg)?;
    // A tree at its own rate, improved by the rate-preserving local search.
    let improved = |nodes: &[AggVertex], kept: &[usize]| {
        let rate = tree_rate(nodes, cfg);
        let limit = floor_div(&cfg.capacity, &rate) as usize;
        let search = improve::Search {
            dist: &dist,
            ps,
            ps_limit: limit,
            switches: kept,
            switch_limit: limit,
            terminals: &terminals,
        };
        let nodes = search.run(nodes);
        debug_assert!(tree_rate(&nodes, cfg) >= rate);
        placement_of(ps, nodes, rate, &terminals, &dist, cfg)
    };
    // Step 3 from Step 2's rate down, until some variant connects every worker; `coarse`
    // keeps only spiders that respect coarse-grained routing.
    let grow = |coarse: Option<&Graph>| {
        let mut r = step2_rate(switches.len(), cfg);
        let mut trees = Vec::new();
        loop {
            let kept: Vec<usize> = switches
                .iter()
                .copied()
                .filter(|_| cfg.capacity >= &r * int(2))
                .collect();
            for mode in [CapMode::ThreeHalves, CapMode::Strict] {
                let inst = steiner::Instance {
                    dist: &dist,
                    ps,
                    ps_degree: ps_degree(&cfg.capacity, &r),
                    switches: &kept,
                    switch_degree: switch_degree(&cfg.capacity, &r),
                    terminals: &terminals,
                    n: cfg.workers,
                    mode,
                    coarse,
                };
                if let Some(nodes) = steiner::spider_tree(&inst) {
                    if coarse.is_some() {
                        let rate = tree_rate(&nodes, cfg);
                        trees.push(placement_of(
                            ps,
                            nodes.clone(),
                            rate,
                            &terminals,
                            &dist,
                            cfg,
                        ));
                    }
                    trees.push(improved(&nodes, &kept));
                }
            }
            if !trees.is_empty() || floor_div(&cfg.capacity, &r) >= cfg.workers as u64 {
                return trees;
            }
            r = next_rate(&cfg.capacity, &r);
        }
    };
    let mut cands = grow(None);
    // The first-programmable-switch tree on the same PS, when it bypasses nothing, also
    // seeds the local search (our Alg. 3 is weaker on traffic than the paper reports).
    let seed = atp(g, cfg)?;
    if seed.nodes.iter().all(|a| a.limit == a.children.len()) {
        let limit = floor_div(&cfg.capacity, &seed.rate) as usize;
        let search = improve::Search {
            dist: &dist,
            ps,
            ps_limit: limit,
            switches: &switches,
            switch_limit: limit,
            terminals: &terminals,
        };
        let nodes = search.run(&seed.nodes);
        let rate = tree_rate(&nodes, cfg);
        cands.push(placement_of(ps, nodes, rate, &terminals, &dist, cfg));
    }
    // Coarse: every tree adjusted, plus Step 3 restricted to clean spiders, and coarse ATP.
    let mut coarse: Vec<GraphPlacement> = cands
        .iter()
        .chain(&grow(Some(g)))
        .filter_map(|c| coarse_candidate(g, &dist, c, cfg))
        .collect();
    coarse.push(GraphPlacement {
        algorithm: "paring".into(),
        ..atp_coarse(g, cfg)?
    });
    let coarse_best = pick(&base, &coarse);
    cands.extend(coarse);
    Ok((pick(&base, &cands), coarse_best))
}

/// The placement of a tree at `rate`: its workers are the terminals among the children.
fn placement_of(
    ps: usize,
    nodes: Vec<AggVertex>,
    rate: Rat,
    terminals: &[usize],
    dist: &[Vec<u32>],
    cfg: &ParingConfig,
) -> GraphPlacement {
    let hops = tree_hops(&nodes, dist);
    let workers = nodes
        .iter()
        .flat_map(|a| a.children.iter().copied())
        .filter(|c| terminals.contains(c))
        .collect();
    GraphPlacement::finish("paring", ps, workers, nodes, rate, hops, cfg)
}

/// Σ hops over the edges of a tree whose children are all aggregated.
fn tree_hops(nodes: &[AggVertex], dist: &[Vec<u32>]) -> u64 {
    nodes
        .iter()
        .flat_map(|a| a.children.iter().map(move |&c| dist[a.vertex][c] as u64))
        .sum()
}
