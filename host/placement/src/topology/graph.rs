//! General graphs (PARING): switches and servers joined by unit-hop links; fat-tree generator.

use std::collections::{HashMap, VecDeque};

use serde::Deserialize;

use super::TopologyError;

/// What a graph vertex is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A switch; `programmable` switches may aggregate.
    Switch {
        /// Whether the switch can aggregate (an FPGA switch).
        programmable: bool,
    },
    /// A server; an `occupied` one cannot host a worker or the PS.
    Server {
        /// Whether the server is already in use.
        occupied: bool,
    },
}

/// A vertex of a general graph.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vertex {
    /// Id users refer to.
    pub id: String,
    /// Switch or server.
    pub kind: Kind,
}

/// An undirected graph with unit-hop links.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// Vertices.
    pub vertices: Vec<Vertex>,
    adj: Vec<Vec<usize>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawGraph {
    nodes: Vec<RawVertex>,
    links: Vec<(String, String)>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawVertex {
    id: String,
    kind: String,
    #[serde(default)]
    programmable: bool,
    #[serde(default)]
    occupied: bool,
}

impl Graph {
    /// Builds a graph, rejecting duplicate ids, unknown link ends, self-loops and disconnection.
    pub fn new(vertices: Vec<Vertex>, links: &[(usize, usize)]) -> Result<Self, TopologyError> {
        let mut ids = HashMap::new();
        for v in &vertices {
            if ids.insert(v.id.clone(), ()).is_some() {
                return Err(TopologyError::Invalid(format!(
                    "node {:?}: duplicate id",
                    v.id
                )));
            }
        }
        let mut adj = vec![Vec::new(); vertices.len()];
        for &(a, b) in links {
            if a == b {
                return Err(TopologyError::Invalid(format!(
                    "node {:?}: link to itself",
                    vertices[a].id
                )));
            }
            if !adj[a].contains(&b) {
                adj[a].push(b);
                adj[b].push(a);
            }
        }
        for a in &mut adj {
            a.sort_unstable();
        }
        let g = Self { vertices, adj };
        if let Some(first) = (0..g.len()).next() {
            let d = g.hops_from(first);
            if let Some(u) = d.iter().position(|x| x.is_none()) {
                return Err(TopologyError::Invalid(format!(
                    "node {:?}: not connected to {:?}",
                    g.vertices[u].id, g.vertices[first].id
                )));
            }
        }
        Ok(g)
    }

    /// Parses the graph JSON format (see docs/placement.md).
    pub fn from_json(text: &str) -> Result<Self, TopologyError> {
        let raw: RawGraph = serde_json::from_str(text)
            .map_err(|e| TopologyError::Invalid(format!("graph JSON: {e}")))?;
        let mut vertices = Vec::new();
        for v in raw.nodes {
            let kind = match v.kind.as_str() {
                "switch" => Kind::Switch {
                    programmable: v.programmable,
                },
                "server" => Kind::Server {
                    occupied: v.occupied,
                },
                k => {
                    return Err(TopologyError::Invalid(format!(
                        "node {:?}: unknown kind {k:?} (expected switch or server)",
                        v.id
                    )))
                }
            };
            vertices.push(Vertex { id: v.id, kind });
        }
        let index: HashMap<&str, usize> = vertices
            .iter()
            .enumerate()
            .map(|(i, v)| (v.id.as_str(), i))
            .collect();
        let mut links = Vec::new();
        for (a, b) in &raw.links {
            let f = |x: &String| {
                index.get(x.as_str()).copied().ok_or_else(|| {
                    TopologyError::Invalid(format!("link {a:?}-{b:?}: unknown node {x:?}"))
                })
            };
            links.push((f(a)?, f(b)?));
        }
        Self::new(vertices, &links)
    }

    /// Serialises to the graph JSON format.
    pub fn to_json(&self) -> String {
        let nodes: Vec<serde_json::Value> = self
            .vertices
            .iter()
            .map(|v| match v.kind {
                Kind::Switch { programmable } => {
                    serde_json::json!({"id": v.id, "kind": "switch", "programmable": programmable})
                }
                Kind::Server { occupied } => {
                    serde_json::json!({"id": v.id, "kind": "server", "occupied": occupied})
                }
            })
            .collect();
        let mut links = Vec::new();
        for (a, n) in self.adj.iter().enumerate() {
            for &b in n.iter().filter(|&&b| b > a) {
                links.push(serde_json::json!([
                    self.vertices[a].id,
                    self.vertices[b].id
                ]));
            }
        }
        serde_json::json!({"nodes": nodes, "links": links}).to_string()
    }

    /// Number of vertices.
    pub fn len(&self) -> usize {
        self.vertices.len()
    }

    /// Whether the graph has no vertex.
    pub fn is_empty(&self) -> bool {
        self.vertices.is_empty()
    }

    /// Neighbours of `v`, ascending.
    pub fn neighbours(&self, v: usize) -> &[usize] {
        &self.adj[v]
    }

    /// The index of the vertex named `id`.
    pub fn find(&self, id: &str) -> Option<usize> {
        self.vertices.iter().position(|v| v.id == id)
    }

    /// Hop distances from `s` (`None`: unreachable).
    pub fn hops_from(&self, s: usize) -> Vec<Option<u32>> {
        self.bfs_tree(s).0
    }

    /// Breadth-first distances and parents from `s`; ties go to the lowest-index neighbour.
    pub fn bfs_tree(&self, s: usize) -> (Vec<Option<u32>>, Vec<Option<usize>>) {
        let mut d = vec![None; self.len()];
        let mut p = vec![None; self.len()];
        d[s] = Some(0);
        let mut q = VecDeque::from([s]);
        while let Some(v) = q.pop_front() {
            for &u in &self.adj[v] {
                if d[u].is_none() {
                    d[u] = Some(d[v].unwrap() + 1);
                    p[u] = Some(v);
                    q.push_back(u);
                }
            }
        }
        (d, p)
    }

    /// Sets which switches are programmable (all others not).
    pub fn set_programmable(&mut self, set: &[usize]) {
        for v in &mut self.vertices {
            if let Kind::Switch { programmable } = &mut v.kind {
                *programmable = false;
            }
        }
        for &i in set {
            if let Kind::Switch { programmable } = &mut self.vertices[i].kind {
                *programmable = true;
            }
        }
    }
}

/// `fat-tree:K`: the k-ary fat-tree (k even): (k/2)² core, k²/2 aggregation, k²/2 edge
/// switches and k³/4 servers.
///
/// Ids: core `c{i}`; pod p's aggregation `p{p}a{j}` and edge `p{p}e{j}` (j < k/2); server
/// `p{p}e{j}h{h}` under edge `p{p}e{j}`. Aggregation `p{p}a{j}` links to cores
/// `c{j·k/2}..c{j·k/2+k/2-1}`. Every switch starts programmable; see [`programmable_order`].
pub fn fat_tree(k: usize) -> Result<Graph, TopologyError> {
    if k < 2 || k % 2 != 0 || k > 64 {
        return Err(TopologyError::Invalid(format!(
            "fat-tree:{k}: K must be even, between 2 and 64"
        )));
    }
    let h = k / 2;
    let mut vertices = Vec::new();
    let sw = |id: String| Vertex {
        id,
        kind: Kind::Switch { programmable: true },
    };
    for i in 0..h * h {
        vertices.push(sw(format!("c{i}")));
    }
    let agg = |p: usize, j: usize| h * h + p * h + j;
    let edge = |p: usize, j: usize| h * h + k * h + p * h + j;
    for p in 0..k {
        for j in 0..h {
            vertices.push(sw(format!("p{p}a{j}")));
        }
    }
    for p in 0..k {
        for j in 0..h {
            vertices.push(sw(format!("p{p}e{j}")));
        }
    }
    let mut links = Vec::new();
    for p in 0..k {
        for j in 0..h {
            for c in 0..h {
                links.push((agg(p, j), j * h + c));
                links.push((agg(p, j), edge(p, c)));
            }
            for s in 0..h {
                let id = vertices.len();
                vertices.push(Vertex {
                    id: format!("p{p}e{j}h{s}"),
                    kind: Kind::Server { occupied: false },
                });
                links.push((edge(p, j), id));
            }
        }
    }
    Graph::new(vertices, &links)
}

/// The order in which `--programmable M` makes fat-tree switches programmable.
///
/// First edge switch 0 of every pod (`p0e0, p1e0, ...`: k switches, "the first six edge
/// switches" for k = 6), then every aggregation switch pod-round-robin (`p0a0, p1a0, ...,
/// p0a1, ...`), then the remaining edge switches pod-round-robin, then the cores.
pub fn programmable_order(g: &Graph, k: usize) -> Vec<usize> {
    let h = k / 2;
    let f = |id: String| g.find(&id).expect("fat-tree id");
    let mut order: Vec<usize> = (0..k).map(|p| f(format!("p{p}e0"))).collect();
    for j in 0..h {
        order.extend((0..k).map(|p| f(format!("p{p}a{j}"))));
    }
    for j in 1..h {
        order.extend((0..k).map(|p| f(format!("p{p}e{j}"))));
    }
    order.extend((0..h * h).map(|c| f(format!("c{c}"))));
    order
}
