//! Local search after Alg. 3: lowers traffic without raising any fan-in above the limit of
//! the tree's rate, so the rate is kept. Moves (first improvement, repeated to a fixed
//! point): move a worker to an idle server closer to an aggregator with room; re-parent a subtree to a closer
//! aggregator with a free slot; insert an unused programmable switch under an aggregator to
//! fuse several of its children; splice out switches left with one child.

use super::AggVertex;

/// A tree being improved: parent links over graph vertices.
pub struct Search<'a> {
    /// All-pairs hops.
    pub dist: &'a [Vec<u32>],
    /// The PS.
    pub ps: usize,
    /// Fan-in limit of the PS.
    pub ps_limit: usize,
    /// Programmable switches and their fan-in limit.
    pub switches: &'a [usize],
    /// Fan-in limit of a switch.
    pub switch_limit: usize,
    /// Idle servers other than the PS.
    pub terminals: &'a [usize],
}

impl Search<'_> {
    /// Improves the tree given as aggregating vertices (PS first); returns the new ones.
    pub fn run(&self, nodes: &[AggVertex]) -> Vec<AggVertex> {
        let nv = self.dist.len();
        let mut parent: Vec<Option<usize>> = vec![None; nv];
        for a in nodes {
            for &c in &a.children {
                parent[c] = Some(a.vertex);
            }
        }
        let is_switch = {
            let mut s = vec![false; nv];
            for &v in self.switches {
                s[v] = true;
            }
            s
        };
        let limit = |v: usize| {
            if v == self.ps {
                self.ps_limit
            } else {
                self.switch_limit
            }
        };
        let d = |a: usize, b: usize| self.dist[a][b] as i64;
        for _round in 0..10_000 {
            let kids = |parent: &[Option<usize>], v: usize| -> Vec<usize> {
                (0..nv).filter(|&c| parent[c] == Some(v)).collect()
            };
            let in_tree = |parent: &[Option<usize>], v: usize| v == self.ps || parent[v].is_some();
            let aggs: Vec<usize> = std::iter::once(self.ps)
                .chain(
                    self.switches
                        .iter()
                        .copied()
                        .filter(|&s| parent[s].is_some()),
                )
                .collect();
            // Splice switches with at most one child.
            if let Some(&s) = aggs
                .iter()
                .find(|&&s| s != self.ps && kids(&parent, s).len() <= 1)
            {
                let p = parent[s];
                for c in kids(&parent, s) {
                    parent[c] = p;
                }
                parent[s] = None;
                continue;
            }
            let mut moved = false;
            // Move a worker's place to an idle server closer to an aggregator with room
            // (its own parent included).
            'swap: for &w in self.terminals {
                let Some(p) = parent[w] else { continue };
                for &q in &aggs {
                    if q != p && kids(&parent, q).len() >= limit(q) {
                        continue;
                    }
                    for &t in self.terminals {
                        if parent[t].is_none() && d(t, q) < d(w, p) {
                            parent[t] = Some(q);
                            parent[w] = None;
                            moved = true;
                            break 'swap;
                        }
                    }
                }
            }
            if moved {
                continue;
            }
            // Re-parent a subtree to a closer aggregator with a free slot (not below it).
            'rep: for c in 0..nv {
                let Some(p) = parent[c] else { continue };
                for &q in &aggs {
                    if q == p || d(c, q) >= d(c, p) || kids(&parent, q).len() >= limit(q) {
                        continue;
                    }
                    let mut a = Some(q);
                    let mut below = false;
                    while let Some(x) = a {
                        if x == c {
                            below = true;
                            break;
                        }
                        a = parent[x];
                    }
                    if !below {
                        parent[c] = Some(q);
                        moved = true;
                        break 'rep;
                    }
                }
            }
            if moved {
                continue;
            }
            // Insert an unused switch to fuse children of one aggregator.
            'ins: for &s in self.switches {
                if in_tree(&parent, s) || self.switch_limit < 2 || !is_switch[s] {
                    continue;
                }
                for &p in &aggs {
                    let mut gains: Vec<(i64, usize)> = kids(&parent, p)
                        .into_iter()
                        .map(|c| (d(c, p) - d(c, s), c))
                        .collect();
                    gains.sort_unstable_by(|a, b| b.cmp(a));
                    gains.truncate(self.switch_limit);
                    let mut best = (0i64, 0usize);
                    let mut acc = -d(s, p);
                    for (i, g) in gains.iter().enumerate() {
                        acc += g.0;
                        if i >= 1 && acc > best.0 {
                            best = (acc, i + 1);
                        }
                    }
                    if best.0 > 0 {
                        for &(_, c) in &gains[..best.1] {
                            parent[c] = Some(s);
                        }
                        parent[s] = Some(p);
                        moved = true;
                        break 'ins;
                    }
                }
            }
            if !moved {
                break;
            }
        }
        let mut out = Vec::new();
        for v in std::iter::once(self.ps).chain(self.switches.iter().copied()) {
            let children: Vec<usize> = (0..nv).filter(|&c| parent[c] == Some(v)).collect();
            if v == self.ps || !children.is_empty() {
                out.push(AggVertex {
                    vertex: v,
                    limit: children.len(),
                    children,
                });
            }
        }
        out
    }
}
