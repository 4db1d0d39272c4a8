//! The aggregation tree of one job, independent of the algorithm that chose it: the root
//! (destination / PS), aggregating switches and workers, each with an address number.

use crate::paring::GraphPlacement;
use crate::topology::{Graph, Tree};

/// What an aggregation-tree node is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AggKind {
    /// The job's root (the destination host, or the PS).
    Root,
    /// An aggregating switch.
    Switch,
    /// A worker (leaf).
    Worker,
}

/// A node of an aggregation tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggNode {
    /// Name (topology id; workers `SWITCH/wJ` on trees, the server id on graphs).
    pub name: String,
    /// Root, switch or worker.
    pub kind: AggKind,
    /// Address number: defines IP, MAC and (with a base port) the UDP port.
    pub addr: u32,
    /// Children, by child index.
    pub children: Vec<usize>,
    /// Children `0..degree_limit` are aggregated here.
    pub degree_limit: usize,
}

/// A job's aggregation tree; node 0 is the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggTree {
    /// Nodes; index 0 is the root.
    pub nodes: Vec<AggNode>,
}

/// Address numbers of tree workers start here (10.1.x.y).
pub const WORKER_ADDR_BASE: u32 = 1 << 16;

impl AggTree {
    /// Workers in rank order (depth-first from the root).
    pub fn workers(&self) -> Vec<usize> {
        let mut out = Vec::new();
        let mut stack = vec![0usize];
        while let Some(v) = stack.pop() {
            if self.nodes[v].kind == AggKind::Worker {
                out.push(v);
            }
            stack.extend(self.nodes[v].children.iter().rev());
        }
        out
    }

    /// Builds the tree of a blue set on a weighted tree: switch v has address v + 1 (the
    /// destination 0); each of v's `loads[v]` servers is a worker `id/wJ` attached to the
    /// nearest blue switch at or above v (or the destination). Blue switches without any
    /// worker below them carry nothing and are left out.
    pub fn from_tree(tree: &Tree, loads: &[u64], blue: &[usize]) -> Self {
        let n = tree.len();
        let below = tree.subtree_loads(loads);
        let mut is_blue = vec![false; n];
        for &b in blue {
            is_blue[b] = below[b] > 0;
        }
        let mut nodes = vec![AggNode {
            name: tree.destination.clone(),
            kind: AggKind::Root,
            addr: 0,
            children: vec![],
            degree_limit: 0,
        }];
        let mut worker_no = 0u32;
        // Depth-first (file order) so that ranks follow the tree.
        let mut stack: Vec<(usize, usize)> =
            tree.roots().iter().rev().map(|&r| (r, 0usize)).collect();
        while let Some((v, agg_parent)) = stack.pop() {
            let here = if is_blue[v] {
                let id = nodes.len();
                nodes.push(AggNode {
                    name: tree.nodes[v].id.clone(),
                    kind: AggKind::Switch,
                    addr: v as u32 + 1,
                    children: vec![],
                    degree_limit: 0,
                });
                nodes[agg_parent].children.push(id);
                id
            } else {
                agg_parent
            };
            for j in 0..loads[v] {
                let id = nodes.len();
                nodes.push(AggNode {
                    name: format!("{}/w{j}", tree.nodes[v].id),
                    kind: AggKind::Worker,
                    addr: WORKER_ADDR_BASE + worker_no,
                    children: vec![],
                    degree_limit: 0,
                });
                worker_no += 1;
                nodes[here].children.push(id);
            }
            for &c in tree.children(v).iter().rev() {
                stack.push((c, here));
            }
        }
        for v in &mut nodes {
            v.degree_limit = v.children.len();
        }
        Self { nodes }
    }

    /// Builds the tree of a graph placement: addresses are graph vertex indices.
    pub fn from_graph(g: &Graph, p: &GraphPlacement) -> Self {
        let mut index = std::collections::HashMap::new();
        let mut nodes = Vec::new();
        let mut add = |v: usize, kind: AggKind, nodes: &mut Vec<AggNode>| {
            *index.entry(v).or_insert_with(|| {
                nodes.push(AggNode {
                    name: g.vertices[v].id.clone(),
                    kind,
                    addr: v as u32,
                    children: vec![],
                    degree_limit: 0,
                });
                nodes.len() - 1
            })
        };
        add(p.ps, AggKind::Root, &mut nodes);
        let aggs: std::collections::HashSet<usize> = p.nodes.iter().map(|a| a.vertex).collect();
        for a in &p.nodes {
            let me = add(
                a.vertex,
                if a.vertex == p.ps {
                    AggKind::Root
                } else {
                    AggKind::Switch
                },
                &mut nodes,
            );
            for &c in &a.children {
                let kind = if aggs.contains(&c) {
                    AggKind::Switch
                } else {
                    AggKind::Worker
                };
                let ci = add(c, kind, &mut nodes);
                nodes[me].children.push(ci);
            }
            nodes[me].degree_limit = a.limit;
        }
        Self { nodes }
    }
}
