//! Shared pieces of the tree dynamic programs: lexicographic costs and knapsack merges.
//!
//! A DP value packs `(cost, blue count)` into one `i128` as `cost · W + count` with
//! `W = n + 2 > count`, so one integer comparison minimises the cost first and the number of
//! aggregating switches second. That is the documented tie-break rule.

/// "Infeasible" / "not yet reached".
pub const INF: i128 = i128::MAX / 4;

/// Saturating sum of two packed values.
#[inline]
pub fn add(a: i128, b: i128) -> i128 {
    if a >= INF || b >= INF {
        INF
    } else {
        a + b
    }
}

/// Min-plus merge of two "at most i blue" tables, capped at `k` entries past 0.
///
/// `out[i] = min_j acc[i-j] + child[j]`; `split` receives the smallest optimal `j`
/// for each `i` (the child gets as few blue nodes as possible on ties).
pub fn merge(acc: &[i128], child: &[i128], k: usize, out: &mut Vec<i128>, split: &mut Vec<u32>) {
    let sa = acc.len() - 1;
    let sc = child.len() - 1;
    let size = k.min(sa + sc);
    out.clear();
    for i in 0..=size {
        let mut best = INF;
        let mut bj = i.saturating_sub(sa);
        for j in i.saturating_sub(sa)..=i.min(sc) {
            let v = add(acc[i - j], child[j]);
            if v < best {
                best = v;
                bj = j;
            }
        }
        out.push(best);
        split.push(bj as u32);
    }
}

/// Structure shared by both DPs: children lists including the virtual destination (index n).
pub struct Shape<'a> {
    /// The tree.
    pub tree: &'a crate::topology::Tree,
    /// Index of the virtual destination node.
    pub d: usize,
}

impl<'a> Shape<'a> {
    /// Wraps a tree.
    pub fn new(tree: &'a crate::topology::Tree) -> Self {
        Self {
            tree,
            d: tree.len(),
        }
    }

    /// Children of `v` (the destination's children are the roots).
    pub fn children(&self, v: usize) -> &'a [usize] {
        if v == self.d {
            self.tree.roots()
        } else {
            self.tree.children(v)
        }
    }

    /// Bottom-up order: every switch after its children, the destination last.
    pub fn post_order(&self) -> Vec<usize> {
        let mut o: Vec<usize> = self.tree.bfs().iter().rev().copied().collect();
        o.push(self.d);
        o
    }
}
