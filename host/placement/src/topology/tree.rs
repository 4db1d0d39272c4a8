//! Weighted trees (SOAR/SMC): the required JSON format, validation and derived structure.

use std::collections::HashMap;

use serde::Deserialize;
use serde_json::value::RawValue;

use super::TopologyError;
use crate::rational::{parse_positive, Rat};

/// A switch of a tree topology.
#[derive(Debug, Clone, PartialEq)]
pub struct Node {
    /// The node id users refer to.
    pub id: String,
    /// Parent switch; `None` when the parent is the destination (or there is none).
    pub parent: Option<usize>,
    /// Rate ω of the link to the parent; `None` for a root without a destination link.
    pub rate: Option<Rat>,
    /// Servers attached (workers).
    pub load: u64,
    /// Whether the switch may aggregate (is in Λ).
    pub available: bool,
    /// Number of workloads the switch can aggregate (multi-workload placement).
    pub capacity: Option<u32>,
}

/// A tree of switches below a destination `d`, with derived traversal orders.
#[derive(Debug, Clone, PartialEq)]
pub struct Tree {
    /// Id of the destination (the aggregation root host).
    pub destination: String,
    /// The switches.
    pub nodes: Vec<Node>,
    children: Vec<Vec<usize>>,
    roots: Vec<usize>,
    depth: Vec<u32>,
    bfs: Vec<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTree<'a> {
    destination: String,
    #[serde(borrow)]
    nodes: Vec<&'a RawValue>,
}

impl Tree {
    /// Builds a tree from nodes, checking parents, cycles, ids and rates.
    pub fn new(destination: &str, nodes: Vec<Node>) -> Result<Self, TopologyError> {
        let bad = |id: &str, why: String| TopologyError::Invalid(format!("node {id:?}: {why}"));
        let n = nodes.len();
        let mut seen = HashMap::new();
        for (i, v) in nodes.iter().enumerate() {
            if v.id == destination {
                return Err(bad(&v.id, "uses the destination's id".into()));
            }
            if v.id.is_empty() {
                return Err(TopologyError::Invalid(format!("node #{i}: empty id")));
            }
            if seen.insert(v.id.as_str(), i).is_some() {
                return Err(bad(&v.id, "duplicate id".into()));
            }
            if let Some(r) = &v.rate {
                if *r <= Rat::from_integer(0.into()) {
                    return Err(bad(&v.id, format!("non-positive rate {r}")));
                }
            } else if v.parent.is_some() {
                return Err(bad(&v.id, "missing rate".into()));
            }
            if let Some(p) = v.parent {
                if p >= n {
                    return Err(bad(&v.id, "unknown parent".into()));
                }
                if p == i {
                    return Err(bad(&v.id, "is its own parent".into()));
                }
            }
        }
        let mut children = vec![Vec::new(); n];
        let mut roots = Vec::new();
        for (i, v) in nodes.iter().enumerate() {
            match v.parent {
                Some(p) => children[p].push(i),
                None => roots.push(i),
            }
        }
        let mut depth = vec![0u32; n];
        let mut bfs = Vec::with_capacity(n);
        for &r in &roots {
            depth[r] = 1;
            bfs.push(r);
        }
        let mut head = 0;
        while head < bfs.len() {
            let v = bfs[head];
            head += 1;
            for &c in &children[v] {
                depth[c] = depth[v] + 1;
                bfs.push(c);
            }
        }
        if bfs.len() < n {
            let stuck = (0..n).find(|&i| depth[i] == 0).expect("an unreached node");
            return Err(bad(
                &nodes[stuck].id,
                "its parent chain is a cycle (never reaches the destination)".into(),
            ));
        }
        Ok(Self {
            destination: destination.into(),
            nodes,
            children,
            roots,
            depth,
            bfs,
        })
    }

    /// Parses the tree JSON format (see docs/placement.md); errors name the offending node.
    pub fn from_json(text: &str) -> Result<Self, TopologyError> {
        let raw: RawTree = serde_json::from_str(text)
            .map_err(|e| TopologyError::Invalid(format!("tree JSON: {e}")))?;
        let d = raw.destination;
        let mut parents = Vec::new();
        let mut nodes = Vec::new();
        for (i, r) in raw.nodes.iter().enumerate() {
            let (node, parent) = parse_node(i, r.get())?;
            nodes.push(node);
            parents.push(parent);
        }
        let index: HashMap<&str, usize> = nodes
            .iter()
            .enumerate()
            .map(|(i, v)| (v.id.as_str(), i))
            .collect();
        let mut resolved = Vec::with_capacity(nodes.len());
        for (v, p) in nodes.iter().zip(&parents) {
            resolved.push(match p {
                None => None,
                Some(p) if *p == d => None,
                Some(p) => Some(*index.get(p.as_str()).ok_or_else(|| {
                    TopologyError::Invalid(format!("node {:?}: unknown parent {p:?}", v.id))
                })?),
            });
        }
        for ((v, p), r) in nodes.iter_mut().zip(&parents).zip(resolved) {
            if p.is_none() && v.rate.is_some() {
                // A root without a destination link: its rate is meaningless.
                v.rate = None;
            }
            v.parent = r;
        }
        for (v, p) in nodes.iter().zip(&parents) {
            if p.is_some() && v.rate.is_none() {
                return Err(TopologyError::Invalid(format!(
                    "node {:?}: missing rate",
                    v.id
                )));
            }
        }
        Self::new(&d, nodes)
    }

    /// Serialises to the tree JSON format (exact rates as strings when not integral).
    pub fn to_json(&self) -> String {
        let nodes: Vec<serde_json::Value> = self
            .nodes
            .iter()
            .map(|v| {
                let mut m = serde_json::Map::new();
                m.insert("id".into(), v.id.clone().into());
                m.insert(
                    "parent".into(),
                    match (v.parent, &v.rate) {
                        (Some(p), _) => self.nodes[p].id.clone().into(),
                        (None, Some(_)) => self.destination.clone().into(),
                        (None, None) => serde_json::Value::Null,
                    },
                );
                if let Some(r) = &v.rate {
                    m.insert("rate".into(), crate::rational::exact(r).into());
                }
                m.insert("load".into(), v.load.into());
                m.insert("aggregate".into(), v.available.into());
                if let Some(c) = v.capacity {
                    m.insert("capacity".into(), c.into());
                }
                serde_json::Value::Object(m)
            })
            .collect();
        serde_json::json!({"destination": self.destination, "nodes": nodes}).to_string()
    }

    /// Number of switches.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether the tree has no switch.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }

    /// Children of switch `v`, in file order.
    pub fn children(&self, v: usize) -> &[usize] {
        &self.children[v]
    }

    /// Switches whose parent is the destination (or none).
    pub fn roots(&self) -> &[usize] {
        &self.roots
    }

    /// Hops from `v` to the destination (a root has depth 1).
    pub fn depth(&self, v: usize) -> u32 {
        self.depth[v]
    }

    /// Height h: the largest depth.
    pub fn height(&self) -> u32 {
        self.depth.iter().copied().max().unwrap_or(0)
    }

    /// Switches in breadth-first order from the destination (parents before children).
    pub fn bfs(&self) -> &[usize] {
        &self.bfs
    }

    /// The index of the switch named `id`.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.nodes.iter().position(|v| v.id == id)
    }

    /// Loads of all switches.
    pub fn loads(&self) -> Vec<u64> {
        self.nodes.iter().map(|v| v.load).collect()
    }

    /// Leaves (switches without children).
    pub fn leaves(&self) -> Vec<usize> {
        (0..self.len())
            .filter(|&v| self.children[v].is_empty())
            .collect()
    }

    /// Subtree sums of `loads` (index by switch).
    pub fn subtree_loads(&self, loads: &[u64]) -> Vec<u64> {
        let mut s = loads.to_vec();
        for &v in self.bfs.iter().rev() {
            if let Some(p) = self.nodes[v].parent {
                s[p] += s[v];
            }
        }
        s
    }

    /// Height of each switch above its deepest leaf (leaves 0).
    pub fn heights(&self) -> Vec<u32> {
        let mut h = vec![0u32; self.len()];
        for &v in self.bfs.iter().rev() {
            if let Some(p) = self.nodes[v].parent {
                h[p] = h[p].max(h[v] + 1);
            }
        }
        h
    }
}

fn parse_node(i: usize, text: &str) -> Result<(Node, Option<String>), TopologyError> {
    let fields: HashMap<String, &RawValue> = serde_json::from_str(text)
        .map_err(|e| TopologyError::Invalid(format!("node #{i}: not an object ({e})")))?;
    let id: String = match fields.get("id") {
        Some(v) => serde_json::from_str(v.get())
            .map_err(|_| TopologyError::Invalid(format!("node #{i}: id must be a string")))?,
        None => return Err(TopologyError::Invalid(format!("node #{i}: missing id"))),
    };
    let bad = |why: String| TopologyError::Invalid(format!("node {id:?}: {why}"));
    for k in fields.keys() {
        if !["id", "parent", "rate", "load", "aggregate", "capacity"].contains(&k.as_str()) {
            return Err(bad(format!(
                "unknown field {k:?} (expected id, parent, rate, load, aggregate, capacity)"
            )));
        }
    }
    let parent: Option<String> = match fields.get("parent") {
        Some(v) => serde_json::from_str(v.get())
            .map_err(|_| bad("parent must be a string or null".into()))?,
        None => {
            return Err(bad(
                "missing parent (use null for a root without a destination link)".into(),
            ))
        }
    };
    let rate = match fields.get("rate") {
        Some(v) => Some(parse_positive(&number_text(v), "rate").map_err(bad)?),
        None => None,
    };
    let load = match fields.get("load") {
        Some(v) => number_text(v).parse::<u64>().map_err(|_| {
            bad(format!(
                "load must be a non-negative integer, got {}",
                v.get()
            ))
        })?,
        None => 0,
    };
    let available = match fields.get("aggregate") {
        Some(v) => serde_json::from_str(v.get())
            .map_err(|_| bad("aggregate must be true or false".into()))?,
        None => true,
    };
    let capacity = match fields.get("capacity") {
        Some(v) => Some(number_text(v).parse::<u32>().map_err(|_| {
            bad(format!(
                "capacity must be a non-negative integer, got {}",
                v.get()
            ))
        })?),
        None => None,
    };
    Ok((
        Node {
            id: id.clone(),
            parent: None,
            rate,
            load,
            available,
            capacity,
        },
        parent,
    ))
}

/// The text of a JSON number, or the contents of a JSON string.
fn number_text(v: &RawValue) -> String {
    serde_json::from_str::<String>(v.get()).unwrap_or_else(|_| v.get().to_string())
}
