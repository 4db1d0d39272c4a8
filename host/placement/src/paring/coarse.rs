//! Coarse-grained INA routing (PARING groups 4–6): a programmable switch either aggregates
//! every gradient stream of the job that reaches it or forwards them all.
//!
//! A fine-grained solution is turned into a coarse one by [`adjust`] (docs/placement.md,
//! "Coarse-grained routing"): bypassed children become children of the PS, then, to a fixed
//! point, (1) an aggregating switch with more than `limit` children, or with at most one,
//! forwards everything (its children move to its parent), and (2) a tree edge c → p whose
//! every shortest path crosses another aggregating switch is re-routed to the crossed
//! switch nearest to c (that switch receives the stream, so it must aggregate it); if that
//! switch lies below c it forwards everything instead.

use std::collections::VecDeque;

use super::AggVertex;
use crate::topology::Graph;

/// A tree being adjusted: logical parent links and the aggregating switches.
struct Work<'a> {
    g: &'a Graph,
    dist: &'a [Vec<u32>],
    ps: usize,
    parent: Vec<Option<usize>>,
    agg: Vec<bool>,
}

impl Work<'_> {
    fn children(&self) -> Vec<Vec<usize>> {
        let mut kids = vec![Vec::new(); self.parent.len()];
        for (c, p) in self.parent.iter().enumerate() {
            if let Some(p) = p {
                kids[*p].push(c);
            }
        }
        kids
    }

    /// Switch `s` stops aggregating: its children are sent on to its parent.
    fn forward_all(&mut self, s: usize) {
        let p = self.parent[s];
        for c in self.parent.iter_mut() {
            if *c == Some(s) {
                *c = p;
            }
        }
        self.parent[s] = None;
        self.agg[s] = false;
    }

    fn crossed(&self, c: usize, p: usize) -> Option<usize> {
        let aggs: Vec<usize> = (0..self.agg.len()).filter(|&s| self.agg[s]).collect();
        crossed(self.g, self.dist, &self.agg, &aggs, c, p)
    }

    /// Whether `s` is in the subtree of `c`.
    fn below(&self, s: usize, c: usize) -> bool {
        let mut v = Some(s);
        let mut steps = 0;
        while let Some(x) = v {
            if x == c {
                return true;
            }
            v = self.parent[x];
            steps += 1;
            if steps > self.parent.len() {
                return false;
            }
        }
        false
    }
}

/// The aggregating switch a stream c → p must cross (`is_agg` marks the aggregating
/// switches, `aggs` lists them): the nearest to c among those on shortest c–p paths (lowest
/// index on ties), or `None` if some shortest path avoids them all.
pub fn crossed(
    g: &Graph,
    dist: &[Vec<u32>],
    is_agg: &[bool],
    aggs: &[usize],
    c: usize,
    p: usize,
) -> Option<usize> {
    let d = dist;
    let len = d[c][p];
    let nearest = aggs
        .iter()
        .copied()
        .filter(|&s| s != c && s != p && d[c][s].saturating_add(d[s][p]) == len)
        .min_by_key(|&s| (d[c][s], s))?;
    // Is there a shortest path whose interior avoids every aggregating switch?
    let mut seen = vec![false; is_agg.len()];
    let mut queue = VecDeque::from([c]);
    seen[c] = true;
    while let Some(u) = queue.pop_front() {
        if u == p {
            return None;
        }
        for &w in g.neighbours(u) {
            let forward = d[c][w] == d[c][u] + 1 && d[w][p].saturating_add(d[c][w]) == len;
            if !seen[w] && forward && (w == p || !is_agg[w]) {
                seen[w] = true;
                queue.push_back(w);
            }
        }
    }
    Some(nearest)
}

/// Adjusts a (fine-grained) tree, given as aggregating vertices with the PS first, into a
/// coarse-grained one in which every aggregating vertex has at most `limit` children and
/// aggregates all of them; `None` if the PS is then left with more than `limit` children.
pub fn adjust(
    g: &Graph,
    dist: &[Vec<u32>],
    nodes: &[AggVertex],
    ps: usize,
    limit: usize,
) -> Option<Vec<AggVertex>> {
    let nv = dist.len();
    let mut w = Work {
        g,
        dist,
        ps,
        parent: vec![None; nv],
        agg: vec![false; nv],
    };
    for a in nodes {
        if a.vertex != ps {
            w.agg[a.vertex] = true;
        }
        for (i, &c) in a.children.iter().enumerate() {
            w.parent[c] = Some(if i < a.limit { a.vertex } else { ps });
        }
    }
    // Aggregators whose every child was bypassed receive nothing aggregated.
    for v in 0..nv {
        if w.agg[v] && w.parent[v].is_none() {
            w.forward_all(v);
        }
    }
    loop {
        let kids = w.children();
        if let Some(s) =
            (0..nv).find(|&s| w.agg[s] && (kids[s].len() > limit || kids[s].len() <= 1))
        {
            w.forward_all(s);
            continue;
        }
        let mut changed = false;
        for c in 0..nv {
            let Some(p) = w.parent[c] else { continue };
            if let Some(s) = w.crossed(c, p) {
                if w.below(s, c) {
                    w.forward_all(s);
                } else {
                    w.parent[c] = Some(s);
                }
                changed = true;
                break;
            }
        }
        if !changed {
            break;
        }
    }
    let kids = w.children();
    if kids[w.ps].len() > limit {
        return None;
    }
    let mut out = vec![AggVertex {
        vertex: w.ps,
        limit: kids[w.ps].len(),
        children: kids[w.ps].clone(),
    }];
    for (v, children) in kids.into_iter().enumerate() {
        if w.agg[v] {
            out.push(AggVertex {
                vertex: v,
                limit: children.len(),
                children,
            });
        }
    }
    Some(out)
}

/// Whether a tree is coarse-grained: every aggregating vertex aggregates all its children
/// and no tree edge must cross an aggregating switch that does not aggregate it.
pub fn is_coarse(g: &Graph, dist: &[Vec<u32>], nodes: &[AggVertex], ps: usize) -> bool {
    let nv = dist.len();
    let mut w = Work {
        g,
        dist,
        ps,
        parent: vec![None; nv],
        agg: vec![false; nv],
    };
    for a in nodes {
        if a.limit != a.children.len() {
            return false;
        }
        if a.vertex != ps {
            w.agg[a.vertex] = true;
        }
        for &c in &a.children {
            w.parent[c] = Some(a.vertex);
        }
    }
    (0..nv).all(|c| w.parent[c].is_none_or(|p| w.crossed(c, p).is_none()))
}
