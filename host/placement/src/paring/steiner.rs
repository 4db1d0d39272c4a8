//! Alg. 3/4: a degree-constrained Steiner aggregation tree grown greedily from spiders.
//!
//! Decisions (docs/placement.md): the logical graph is the metric closure of the topology
//! (Alg. 1), where a minimum-cost leg is always the direct edge, so Alg. 4's min-cost flow
//! reduces to "the i cheapest direct edges to unconnected terminals" plus, for a centre not
//! yet in the tree, the cheapest edge to a tree vertex with a free degree. A centre's degree
//! grows by i (in the tree) or i + 1 (new: its parent edge counts). The cap ⌊3d(v)/2⌋ is
//! cumulative over the whole run ([`CapMode::Strict`] uses d(v) instead). Reusing a tree
//! vertex as a centre costs nothing extra. With [`Instance::coarse`] only spiders that keep
//! the tree coarse-grained are considered (docs/placement.md, "Coarse-grained routing").

use std::cmp::Ordering;

use super::{coarse, AggVertex};
use crate::topology::Graph;

/// How far a vertex may exceed its degree limit d(v).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CapMode {
    /// The paper's cumulative cap ⌊3 d(v) / 2⌋.
    ThreeHalves,
    /// Never exceed d(v), and never take the tree's last free degree slot before every
    /// worker is connected (so the greedy cannot paint itself into a corner).
    Strict,
}

/// One Steiner-tree problem.
pub struct Instance<'a> {
    /// All-pairs hop distances.
    pub dist: &'a [Vec<u32>],
    /// The PS (root).
    pub ps: usize,
    /// d(PS).
    pub ps_degree: usize,
    /// Switches that may aggregate.
    pub switches: &'a [usize],
    /// d(v) of every such switch.
    pub switch_degree: usize,
    /// Candidate worker servers.
    pub terminals: &'a [usize],
    /// Workers to connect.
    pub n: usize,
    /// Degree cap.
    pub mode: CapMode,
    /// Coarse-grained routing: only add spiders whose edges cross no aggregating switch and
    /// whose new centre lies on no existing edge's every shortest path.
    pub coarse: Option<&'a Graph>,
}

struct Spider {
    centre: usize,
    conn: Option<usize>,
    feet: Vec<usize>,
    cost: u64,
}

/// Grows the tree; `None` if some worker cannot be connected within the caps. The result
/// has the PS first; switches left with a single child are spliced out.
pub fn spider_tree(inst: &Instance) -> Option<Vec<AggVertex>> {
    let nv = inst.dist.len();
    let mut centres = vec![inst.ps];
    centres.extend_from_slice(inst.switches);
    let mut d = vec![0usize; nv];
    d[inst.ps] = inst.ps_degree;
    for &s in inst.switches {
        d[s] = inst.switch_degree;
    }
    let cap = |v: usize| match inst.mode {
        CapMode::ThreeHalves => 3 * d[v] / 2,
        CapMode::Strict => d[v],
    };
    let mut in_tree = vec![false; nv];
    in_tree[inst.ps] = true;
    let mut deg = vec![0usize; nv];
    let mut deleted = vec![false; nv];
    let mut connected = vec![false; nv];
    let mut parent: Vec<Option<usize>> = vec![None; nv];
    // Aggregating switches so far (coarse mode).
    let mut agg = vec![false; nv];
    let mut aggs: Vec<usize> = Vec::new();
    let mut m = 0usize;
    while m < inst.n {
        let q = inst.n - m;
        loop {
            let free: Vec<usize> = inst
                .terminals
                .iter()
                .copied()
                .filter(|&t| !connected[t])
                .collect();
            // Free degree slots of the tree (Strict keeps at least one until all are connected).
            let slots: usize = centres
                .iter()
                .filter(|&&u| in_tree[u] && !deleted[u])
                .map(|&u| cap(u).saturating_sub(deg[u]))
                .sum();
            let mut best: Option<Spider> = None;
            for &v in &centres {
                if deleted[v] || d[v] < 2 {
                    continue;
                }
                let extra = usize::from(!in_tree[v]);
                let Some(room) = cap(v).checked_sub(deg[v] + extra) else {
                    continue;
                };
                // Coarse mode: the aggregators once v is one, and whether an edge is clean.
                let mut is_agg_v = Vec::new();
                let mut aggs_v = Vec::new();
                if inst.coarse.is_some() {
                    is_agg_v = agg.clone();
                    aggs_v = aggs.clone();
                    if v != inst.ps && !is_agg_v[v] {
                        is_agg_v[v] = true;
                        aggs_v.push(v);
                    }
                }
                let clean = |c: usize, p: usize| match inst.coarse {
                    None => true,
                    Some(g) => coarse::crossed(g, inst.dist, &is_agg_v, &aggs_v, c, p).is_none(),
                };
                if inst.coarse.is_some() && !in_tree[v] {
                    let dd = inst.dist;
                    let crossed = (0..nv).any(|c| {
                        parent[c].is_some_and(|p| {
                            dd[c][v].saturating_add(dd[v][p]) == dd[c][p] && !clean(c, p)
                        })
                    });
                    if crossed {
                        continue;
                    }
                }
                let (conn, conn_cost) = if in_tree[v] {
                    (None, 0u64)
                } else {
                    let u = centres
                        .iter()
                        .copied()
                        .filter(|&u| in_tree[u] && !deleted[u] && deg[u] < cap(u))
                        .filter(|&u| clean(v, u))
                        .min_by_key(|&u| (inst.dist[v][u], u));
                    match u {
                        Some(u) => (Some(u), inst.dist[v][u] as u64),
                        None => continue,
                    }
                };
                let mut near = free.clone();
                near.sort_unstable_by_key(|&t| (inst.dist[v][t], t));
                let want = room.min(d[v]).min(inst.n - m);
                let near: Vec<usize> = near
                    .into_iter()
                    .filter(|&t| clean(t, v))
                    .take(want)
                    .collect();
                let imax = near.len();
                if imax == 0 {
                    continue;
                }
                let mut cost = conn_cost;
                for i in 1..=imax {
                    cost += inst.dist[v][near[i - 1]] as u64;
                    if inst.mode == CapMode::Strict && m + i < inst.n {
                        let after = if in_tree[v] {
                            slots - i
                        } else {
                            slots - 1 + cap(v) - (i + 1)
                        };
                        if after == 0 {
                            continue;
                        }
                    }
                    let better = match &best {
                        None => true,
                        Some(b) => {
                            let (bi, bc) = (b.feet.len() as u64, b.cost);
                            match (cost * bi).cmp(&(bc * i as u64)) {
                                Ordering::Less => true,
                                Ordering::Equal => i as u64 > bi,
                                Ordering::Greater => false,
                            }
                        }
                    };
                    if better {
                        best = Some(Spider {
                            centre: v,
                            conn,
                            feet: near[..i].to_vec(),
                            cost,
                        });
                    }
                }
            }
            let s = best?;
            if s.centre != inst.ps && !agg[s.centre] {
                agg[s.centre] = true;
                aggs.push(s.centre);
            }
            if let Some(u) = s.conn {
                parent[s.centre] = Some(u);
                deg[u] += 1;
                deg[s.centre] += 1;
                in_tree[s.centre] = true;
            }
            for &t in &s.feet {
                parent[t] = Some(s.centre);
                connected[t] = true;
                deg[t] = 1;
                deg[s.centre] += 1;
            }
            m += s.feet.len();
            if q <= 6 || 8 * (inst.n - m) < 7 * q {
                break;
            }
        }
        if q > 6 {
            for &v in &centres {
                if 5 * deg[v] >= 6 * d[v] {
                    deleted[v] = true;
                }
            }
        }
    }
    splice(&mut parent, inst);
    let mut nodes: Vec<AggVertex> = Vec::new();
    for &v in &centres {
        let children: Vec<usize> = (0..nv).filter(|&c| parent[c] == Some(v)).collect();
        if v == inst.ps || !children.is_empty() {
            let limit = children.len();
            nodes.push(AggVertex {
                vertex: v,
                children,
                limit,
            });
        }
    }
    Some(nodes)
}

/// Removes switches with one child (or none): the child moves to the switch's parent, which
/// never costs more hops (triangle inequality) and frees a degree.
fn splice(parent: &mut [Option<usize>], inst: &Instance) {
    loop {
        let mut changed = false;
        for &s in inst.switches {
            let Some(p) = parent[s] else { continue };
            let kids: Vec<usize> = (0..parent.len())
                .filter(|&c| parent[c] == Some(s))
                .collect();
            if kids.len() <= 1 {
                for c in kids {
                    parent[c] = Some(p);
                }
                parent[s] = None;
                changed = true;
            }
        }
        if !changed {
            return;
        }
    }
}
