//! SMC: the optimal placement of at most k aggregating switches minimising the congestion
//! ψ = max_e msg_e / ω(e): an exact search over candidate values plus the feasibility DP.
//!
//! Errata fixed: the blue case uses i − j (v is not counted twice); a blue entry is 1
//! message, not a sum; a blue node's own uplink is checked against X; zero-load subtrees
//! never turn blue. The search is exact: the optimum equals m · ρ(e) for some link rate and
//! message count m, and for each distinct ρ we binary-search the smallest feasible m
//! (skipping any ρ that cannot beat the best value found so far).

use crate::dp::{merge, Shape, INF};
use crate::metrics::{evaluate, membership, Scale};
use crate::topology::Tree;
use crate::{Placement, PlacementError};

/// Colouring data of one feasibility run.
struct Trace {
    cap: Vec<usize>,
    blue: Vec<Vec<bool>>,
    rsize: Vec<usize>,
    rsplit: Vec<Vec<u32>>,
    roff: Vec<Vec<usize>>,
    jmin: Vec<usize>,
}

struct Gather<'a> {
    tree: &'a Tree,
    shape: Shape<'a>,
    scale: &'a Scale,
    loads: &'a [u64],
    avail: &'a [bool],
    below: Vec<u64>,
    k: usize,
    w: i128,
}

impl Gather<'_> {
    /// β tables for bound `x`; returns the destination's best value and, if asked, the trace.
    fn run(&self, x: i128, store: bool) -> (i128, Option<Trace>) {
        let n = self.tree.len();
        let d = self.shape.d;
        let w = self.w;
        let mut beta: Vec<Vec<i128>> = vec![Vec::new(); n + 1];
        let mut tr = Trace {
            cap: vec![0; n + 1],
            blue: vec![Vec::new(); n + 1],
            rsize: vec![0; n + 1],
            rsplit: vec![Vec::new(); n + 1],
            roff: vec![Vec::new(); n + 1],
            jmin: vec![0; n + 1],
        };
        let (mut acc, mut out, mut scratch) = (Vec::new(), Vec::new(), Vec::new());
        for v in self.shape.post_order() {
            let kids = self.shape.children(v);
            let rho = if v == d { 0 } else { self.scale.rho(v) };
            let own = if v == d { 0 } else { self.loads[v] as i128 };
            let elig = v < n && self.avail[v] && self.below[v] > 0 && self.k > 0;
            let child_caps: usize = kids.iter().map(|&c| tr.cap[c]).sum();
            let cap = if elig {
                self.k.min(1 + child_caps)
            } else {
                self.k.min(child_caps)
            };
            acc.clear();
            acc.push(own * w);
            let split = if store {
                &mut tr.rsplit[v]
            } else {
                &mut scratch
            };
            for &c in kids {
                if store {
                    tr.roff[v].push(split.len());
                }
                merge(&acc, &beta[c], self.k, &mut out, split);
                std::mem::swap(&mut acc, &mut out);
            }
            scratch.clear();
            let rs = acc.len() - 1;
            for a in acc.iter_mut() {
                if *a < INF && (*a / w) * rho > x {
                    *a = INF;
                }
            }
            // Blue: one message if load is below, children need only be feasible.
            let mut need = 1usize;
            let pos = if v < n {
                self.below[v].min(1) as i128
            } else {
                0
            };
            let mut blue_ok = elig && rho * pos <= x;
            if blue_ok {
                for &c in kids {
                    match beta[c].iter().position(|&b| b < INF) {
                        Some(j) => need += j,
                        None => blue_ok = false,
                    }
                }
            }
            let bval = w * pos + need as i128;
            let mut b = Vec::with_capacity(cap + 1);
            let mut bl = Vec::with_capacity(cap + 1);
            for i in 0..=cap {
                let red = acc[i.min(rs)];
                if blue_ok && i >= need && bval < red {
                    b.push(bval);
                    bl.push(true);
                } else {
                    b.push(red);
                    bl.push(false);
                }
            }
            tr.cap[v] = cap;
            tr.rsize[v] = rs;
            if store {
                tr.blue[v] = bl;
                tr.jmin[v] = need;
            }
            beta[v] = b;
            for &c in kids {
                if !store {
                    beta[c] = Vec::new();
                }
            }
        }
        let best = beta[d][tr.cap[d]];
        if store {
            // Children of a blue node get their smallest feasible budget.
            for (j, b) in tr.jmin.iter_mut().zip(&beta) {
                *j = b.iter().position(|&x| x < INF).unwrap_or(0);
            }
            (best, Some(tr))
        } else {
            (best, None)
        }
    }
}

/// Runs SMC on `tree` with `loads`, candidate set `avail` (Λ) and budget `k`.
pub fn smc(
    tree: &Tree,
    scale: &Scale,
    loads: &[u64],
    avail: &[bool],
    k: usize,
) -> Result<Placement, PlacementError> {
    let n = tree.len();
    let total: u64 = loads.iter().sum();
    scale.check(n, total)?;
    let g = Gather {
        tree,
        shape: Shape::new(tree),
        scale,
        loads,
        avail,
        below: tree.subtree_loads(loads),
        k,
        w: n as i128 + 2,
    };
    let feasible = |x: i128| g.run(x, false).0 < INF;
    let mut rhos: Vec<i128> = (0..n).map(|v| scale.rho(v)).filter(|&r| r > 0).collect();
    rhos.sort_unstable_by(|a, b| b.cmp(a));
    rhos.dedup();
    let mut best = if feasible(0) {
        0
    } else {
        total as i128 * rhos[0]
    };
    for &rho in &rhos {
        if best == 0 {
            break;
        }
        let hi = (best - 1) / rho;
        if hi < 1 || !feasible(hi * rho) {
            continue;
        }
        let (mut lo, mut hi) = (1i128, hi);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if feasible(mid * rho) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        best = lo * rho;
    }
    let (val, tr) = g.run(best, true);
    debug_assert!(val < INF);
    let tr = tr.expect("stored trace");
    let shape = Shape::new(tree);
    let mut blue = Vec::new();
    let mut stack = vec![(shape.d, tr.cap[shape.d])];
    while let Some((v, i)) = stack.pop() {
        let kids = shape.children(v);
        if tr.blue[v][i] {
            blue.push(v);
            for &c in kids {
                stack.push((c, tr.jmin[c]));
            }
        } else {
            let mut rem = i.min(tr.rsize[v]);
            for m in (0..kids.len()).rev() {
                let j = tr.rsplit[v][tr.roff[v][m] + rem] as usize;
                stack.push((kids[m], j));
                rem -= j;
            }
        }
    }
    blue.sort_unstable();
    let metrics = evaluate(tree, scale, loads, &membership(n, &blue));
    debug_assert_eq!(metrics.congestion, scale.to_rat(best));
    Ok(Placement {
        algorithm: "smc".into(),
        k,
        blue,
        metrics,
    })
}
