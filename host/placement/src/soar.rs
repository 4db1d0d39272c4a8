//! SOAR: the optimal placement of at most k aggregating switches minimising total
//! utilisation φ = Σ_e msg_e / ω(e) (SOAR-Gather and SOAR-Color, errata fixed).
//!
//! Tables are indexed by ℓ = hops from a node to its closest blue ancestor or the
//! destination, ℓ ∈ 1..=δ(v) (δ(root) = 1), and by i = the most blue nodes in the subtree.
//! Colour traces each node's own (ℓ, i) cell, whose split was recorded when that very cell
//! was computed, so the printed mSplit off-by-one cannot occur. Table widths are capped by
//! the number of useful candidates in the subtree, which makes the run much faster than
//! the O(n·h·k²) bound on small subtrees.

use crate::dp::{add, merge, Shape, INF};
use crate::metrics::{evaluate, membership, Scale};
use crate::topology::Tree;
use crate::{Placement, PlacementError};

struct NodeDp {
    cap: usize,
    rows: usize,
    x: Vec<i128>,
    blue: Vec<bool>,
    rsize: Vec<usize>,
    rsplit: Vec<u32>,
    roff: Vec<usize>,
    zsize: usize,
    bsplit: Vec<u32>,
    boff: Vec<usize>,
}

/// Runs SOAR on `tree` with `loads`, candidate set `avail` (Λ) and budget `k`.
pub fn soar(
    tree: &Tree,
    scale: &Scale,
    loads: &[u64],
    avail: &[bool],
    k: usize,
) -> Result<Placement, PlacementError> {
    let n = tree.len();
    scale.check(n, loads.iter().sum())?;
    let shape = Shape::new(tree);
    let d = shape.d;
    let w = n as i128 + 2;
    let below = tree.subtree_loads(loads);
    let eligible = |v: usize| v < n && avail[v] && below[v] > 0 && k > 0;
    let depth = |v: usize| if v == d { 0 } else { tree.depth(v) as usize };
    let mut dp: Vec<Option<NodeDp>> = (0..=n).map(|_| None).collect();
    let (mut acc, mut out) = (Vec::new(), Vec::new());
    for v in shape.post_order() {
        let kids = shape.children(v);
        let rows = depth(v) + 1;
        // rho_l[ℓ] = scaled ρ(v, A_v^ℓ): cost of one message from v up ℓ links.
        let mut rho_l = vec![0i128; rows];
        let (mut cur, mut s) = (v, 0i128);
        for r in rho_l.iter_mut().skip(1) {
            s += scale.rho(cur);
            *r = s;
            cur = tree.nodes[cur].parent.unwrap_or(d);
        }
        let own = if v == d { 0 } else { loads[v] as i128 };
        let lo = if v == d { 0 } else { 1 };
        let child_caps: usize = kids.iter().map(|&c| dp[c].as_ref().unwrap().cap).sum();
        let red_cap = k.min(child_caps);
        let elig = eligible(v);
        let cap = if elig { k.min(1 + child_caps) } else { red_cap };
        let mut node = NodeDp {
            cap,
            rows,
            x: vec![INF; rows * (cap + 1)],
            blue: vec![false; rows * (cap + 1)],
            rsize: Vec::new(),
            rsplit: Vec::new(),
            roff: Vec::new(),
            zsize: 0,
            bsplit: Vec::new(),
            boff: Vec::new(),
        };
        // Blue: children see ℓ = 1; independent of v's own ℓ.
        let mut z = vec![0i128];
        if elig {
            for &c in kids {
                let cd = dp[c].as_ref().unwrap();
                let row = &cd.x[(cd.cap + 1)..2 * (cd.cap + 1)];
                node.boff.push(node.bsplit.len());
                merge(&z, row, k - 1, &mut out, &mut node.bsplit);
                std::mem::swap(&mut z, &mut out);
            }
            node.zsize = z.len() - 1;
        }
        // Red: per ℓ, children see ℓ + 1.
        let mut sizes = vec![0usize; kids.len()];
        let mut offs_per_child: Vec<Vec<usize>> = vec![Vec::new(); kids.len()];
        #[allow(clippy::needless_range_loop)]
        for l in lo..rows {
            acc.clear();
            acc.push(own * rho_l[l] * w);
            for (m, &c) in kids.iter().enumerate() {
                let cd = dp[c].as_ref().unwrap();
                let row = &cd.x[(l + 1) * (cd.cap + 1)..(l + 2) * (cd.cap + 1)];
                offs_per_child[m].push(node.rsplit.len());
                merge(&acc, row, k, &mut out, &mut node.rsplit);
                sizes[m] = out.len() - 1;
                std::mem::swap(&mut acc, &mut out);
            }
            let rs = acc.len() - 1;
            for i in 0..=cap {
                let red = acc[i.min(rs)];
                let mut best = red;
                let mut is_blue = false;
                if elig && i >= 1 {
                    let b = add(z[(i - 1).min(node.zsize)], rho_l[l] * w + 1);
                    if b < red {
                        best = b;
                        is_blue = true;
                    }
                }
                node.x[l * (cap + 1) + i] = best;
                node.blue[l * (cap + 1) + i] = is_blue;
            }
        }
        node.rsize = sizes;
        // roff[m * rows + l] = offset of child m's split block for row l.
        node.roff = vec![0; kids.len() * rows];
        for (m, offs) in offs_per_child.iter().enumerate() {
            for (li, &o) in offs.iter().enumerate() {
                node.roff[m * rows + lo + li] = o;
            }
        }
        for &c in kids {
            dp[c].as_mut().unwrap().x = Vec::new();
        }
        dp[v] = Some(node);
    }
    // Colour: top-down from the destination with (ℓ, i).
    let root = dp[d].as_ref().unwrap();
    let best = root.x[root.cap];
    let mut blue = Vec::new();
    let mut stack = vec![(d, 0usize, root.cap)];
    while let Some((v, l, i)) = stack.pop() {
        let node = dp[v].as_ref().unwrap();
        let kids = shape.children(v);
        if node.blue[l * (node.cap + 1) + i] {
            blue.push(v);
            let mut rem = (i - 1).min(node.zsize);
            for m in (0..kids.len()).rev() {
                let j = node.bsplit[node.boff[m] + rem] as usize;
                stack.push((kids[m], 1, j));
                rem -= j;
            }
        } else {
            let mut rem = i.min(node.rsize.last().copied().unwrap_or(0));
            for m in (0..kids.len()).rev() {
                let j = node.rsplit[node.roff[m * node.rows + l] + rem] as usize;
                stack.push((kids[m], l + 1, j));
                rem -= j;
            }
        }
    }
    blue.sort_unstable();
    let metrics = evaluate(tree, scale, loads, &membership(n, &blue));
    debug_assert_eq!(scale.to_rat(best / w), metrics.utilization);
    debug_assert_eq!((best % w) as usize, blue.len());
    Ok(Placement {
        algorithm: "soar".into(),
        k,
        blue,
        metrics,
    })
}
