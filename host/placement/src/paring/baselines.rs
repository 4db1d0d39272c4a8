//! PARING's baselines: DeepSys (rack/pod-local placement, no aggregation) and an ATP-like
//! placement (DeepSys placement, aggregation at the first programmable switch on the path).

use super::{
    check, coarse, distances, idle_servers, programmable, select_ps, tree_hops, AggVertex,
    GraphPlacement, ParingConfig,
};
use crate::rational::{floor_div, int, Rat};
use crate::topology::Graph;
use crate::PlacementError;

/// DeepSys placement: the PS of Step 1, and the n idle servers nearest to it (its rack
/// first, then its pod, then other pods; ties by vertex index).
fn placement(g: &Graph, dist: &[Vec<u32>], cfg: &ParingConfig) -> (usize, Vec<usize>) {
    let ps = select_ps(g, dist, cfg.workers);
    let mut w: Vec<usize> = idle_servers(g).into_iter().filter(|&v| v != ps).collect();
    w.sort_unstable_by_key(|&v| (dist[ps][v], v));
    w.truncate(cfg.workers);
    (ps, w)
}

/// DeepSys: every worker sends straight to the PS: r = min(R, B / n), no aggregation.
pub fn deepsys(g: &Graph, cfg: &ParingConfig) -> Result<GraphPlacement, PlacementError> {
    check(g, cfg)?;
    let dist = distances(g);
    let (ps, workers) = placement(g, &dist, cfg);
    let hops = workers.iter().map(|&w| dist[ps][w] as u64).sum();
    let rate = cfg
        .rate_limit
        .clone()
        .min(&cfg.capacity / int(workers.len() as i64));
    let nodes = vec![AggVertex {
        vertex: ps,
        children: workers.clone(),
        limit: workers.len(),
    }];
    Ok(GraphPlacement::finish(
        "deepsys", ps, workers, nodes, rate, hops, cfg,
    ))
}

/// ATP-like: DeepSys placement; each stream (a worker's gradient or a switch's partial
/// aggregate) is aggregated at the first programmable switch on its shortest path to the PS
/// (breadth-first tree from the PS, lowest-index ties), which fuses at most ⌊B/r⌋ streams
/// (children in vertex order) and forwards the rest unaggregated to the PS. The rate is the
/// largest r ≤ R (among R and every B/m) at which the PS can fuse everything it receives.
pub fn atp(g: &Graph, cfg: &ParingConfig) -> Result<GraphPlacement, PlacementError> {
    check(g, cfg)?;
    let dist = distances(g);
    let (ps, workers) = placement(g, &dist, cfg);
    let (_, up) = g.bfs_tree(ps);
    let prog = programmable(g);
    for r in atp_rates(g, cfg) {
        let (nodes, hops, fits) = atp_tree(g, &dist, (ps, &workers), (&up, &prog), cfg, &r);
        if fits {
            return Ok(GraphPlacement::finish(
                "atp", ps, workers, nodes, r, hops, cfg,
            ));
        }
    }
    unreachable!("r = B / n always lets the PS fuse every stream")
}

/// ATP-like under coarse-grained routing: for each of ATP's candidate rates r, from the
/// fine-grained ATP rate down, the fine-grained ATP tree at r is adjusted
/// ([`coarse::adjust`]) with fan-in limit ⌊B/r⌋; the first r at which the PS can fuse all it
/// then receives is the rate.
pub fn atp_coarse(g: &Graph, cfg: &ParingConfig) -> Result<GraphPlacement, PlacementError> {
    let fine = atp(g, cfg)?;
    let dist = distances(g);
    let (ps, workers) = placement(g, &dist, cfg);
    let (_, up) = g.bfs_tree(ps);
    let prog = programmable(g);
    for r in atp_rates(g, cfg).into_iter().filter(|r| *r <= fine.rate) {
        let (nodes, _, _) = atp_tree(g, &dist, (ps, &workers), (&up, &prog), cfg, &r);
        let limit = floor_div(&cfg.capacity, &r) as usize;
        if let Some(nodes) = coarse::adjust(g, &dist, &nodes, ps, limit) {
            let hops = tree_hops(&nodes, &dist);
            return Ok(GraphPlacement::finish(
                "atp", ps, workers, nodes, r, hops, cfg,
            ));
        }
    }
    unreachable!("r = B / n lets every vertex fuse every stream")
}

/// ATP's candidate rates, descending: R, then every B/m < R for m = 1..=n + switches.
fn atp_rates(g: &Graph, cfg: &ParingConfig) -> Vec<Rat> {
    let mut rates: Vec<Rat> = vec![cfg.rate_limit.clone()];
    for m in 1..=(cfg.workers + programmable(g).len()) as i64 {
        let r = &cfg.capacity / int(m);
        if r < cfg.rate_limit {
            rates.push(r);
        }
    }
    rates
}

/// The fine-grained ATP tree at rate r: aggregating vertices (PS first), Σ hops, and
/// whether the PS can fuse every stream it receives.
fn atp_tree(
    g: &Graph,
    dist: &[Vec<u32>],
    (ps, workers): (usize, &[usize]),
    (up, prog): (&[Option<usize>], &[usize]),
    cfg: &ParingConfig,
    r: &Rat,
) -> (Vec<AggVertex>, u64, bool) {
    let mut is_agg = vec![false; g.len()];
    for &s in prog {
        is_agg[s] = true;
    }
    is_agg[ps] = true;
    let first_agg = |mut v: usize| loop {
        v = up[v].expect("connected to the PS");
        if is_agg[v] {
            return v;
        }
    };
    let slots = floor_div(&cfg.capacity, r) as usize;
    // Aggregation points deepest first, so switch outputs are known before their parents.
    let mut order: Vec<usize> = prog
        .iter()
        .copied()
        .filter(|&s| dist[ps][s] != u32::MAX)
        .collect();
    order.sort_unstable_by_key(|&s| (std::cmp::Reverse(dist[ps][s]), s));
    let mut incoming: Vec<Vec<usize>> = vec![Vec::new(); g.len()];
    for &w in workers {
        incoming[first_agg(w)].push(w);
    }
    let mut hops = 0u64;
    let mut ps_streams = 0usize;
    let mut nodes = Vec::new();
    for &s in &order {
        let mut kids = std::mem::take(&mut incoming[s]);
        if kids.is_empty() {
            continue;
        }
        kids.sort_unstable();
        let limit = kids.len().min(slots);
        for (i, &c) in kids.iter().enumerate() {
            if i < limit {
                hops += dist[c][s] as u64;
            } else {
                hops += dist[c][ps] as u64;
                ps_streams += 1;
            }
        }
        if limit > 0 {
            incoming[first_agg(s)].push(s);
        }
        nodes.push(AggVertex {
            vertex: s,
            children: kids,
            limit,
        });
    }
    let mut root_kids = std::mem::take(&mut incoming[ps]);
    root_kids.sort_unstable();
    for &c in &root_kids {
        hops += dist[c][ps] as u64;
    }
    ps_streams += root_kids.len();
    let mut all = vec![AggVertex {
        vertex: ps,
        limit: root_kids.len(),
        children: root_kids,
    }];
    all.extend(nodes.into_iter().filter(|a| a.limit > 0));
    (all, hops, ps_streams <= slots)
}
