//! From a physical tree of switches and workers to every node's configuration.
//!
//! The single place that decides ranks, child indices, degree-limited rank sets, ports,
//! routes and addresses of a job's tree. `fanin place --emit-config`, `fanin allreduce`,
//! the property tests and the RTL testbenches all build their configurations here.
//!
//! Ports: a switch's port 0 faces its parent (if any) and ports `1..` face its children in
//! order. Aggregating switches form the job's aggregation tree: each worker or aggregating
//! switch reports to its nearest aggregating ancestor; non-aggregating switches only
//! forward. The tree's top node must aggregate: it is the job's root.

use core::net::Ipv4Addr;

use crate::config::{Child, Endpoint, JobEntry, Mode, Params, Role, Route, SwitchConfig, Trust};
use crate::wire::{RankSet, FANIN_UDP_PORT, MAX_RANKS, MAX_WORKERS};
use crate::worker::Assignment;

/// What a node of the physical tree is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// A switch. `aggregate` puts it in the job's aggregation tree; `degree_limit` caps
    /// how many of its aggregation children it sums (None: all).
    Switch {
        /// Aggregates this job (blue) or only forwards (red).
        aggregate: bool,
        /// Largest number of aggregation children summed here.
        degree_limit: Option<u8>,
    },
    /// A worker (server).
    Worker,
}

/// One node of the physical tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeSpec {
    /// Name, for configs and error messages.
    pub name: String,
    /// Index of the parent node; `None` for the top.
    pub parent: Option<usize>,
    /// Switch or worker.
    pub kind: NodeKind,
}

/// How nodes get addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Addressing {
    /// Node `i` gets 10.1.(a/256).(a%256) with `a = i + 1`, MAC 02:fa:00:00:(a/256):(a%256),
    /// and the fanin port.
    Network,
    /// Every node is 127.0.0.1 with UDP port `base + i` (for local `fanin switchd` trees); no routes.
    Loopback {
        /// UDP port of node 0.
        base: u16,
    },
}

impl Addressing {
    /// Address of node `i`.
    pub fn endpoint(self, i: usize) -> Endpoint {
        let a = i + 1;
        let (hi, lo) = ((a / 256) as u8, (a % 256) as u8);
        let mac = [0x02, 0xfa, 0, 0, hi, lo];
        match self {
            Addressing::Network => Endpoint {
                mac,
                ip: Ipv4Addr::new(10, 1, hi, lo),
                udp_port: FANIN_UDP_PORT,
                port: 0,
            },
            Addressing::Loopback { base } => Endpoint {
                mac,
                ip: Ipv4Addr::LOCALHOST,
                udp_port: base + i as u16,
                port: 0,
            },
        }
    }
}

/// Job-wide settings of a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct JobSpec {
    /// Job id.
    pub job: u16,
    /// Slots per switch for this job (the workers' window limit).
    pub slot_count: u32,
    /// Elements per packet.
    pub elements: u16,
    /// Completion mode at every aggregating switch.
    pub mode: Mode,
    /// Addressing scheme.
    pub addressing: Addressing,
    /// Sessions, source validation and slot hygiene at every aggregating switch.
    pub trust: Trust,
}

/// Every node's configuration for one job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// One config per switch, in node order (`switch_nodes[i]` is its node index).
    pub switches: Vec<SwitchConfig>,
    /// Node index of each entry of `switches`.
    pub switch_nodes: Vec<usize>,
    /// One assignment per worker, by rank.
    pub workers: Vec<Assignment>,
    /// Node index of each worker, by rank.
    pub worker_nodes: Vec<usize>,
    /// Node index of the root.
    pub root: usize,
}

/// A tree that cannot be turned into a plan.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// Structural problem, naming the node.
    #[error("node {node}: {why}")]
    Node {
        /// Node name.
        node: String,
        /// What is wrong.
        why: String,
    },
    /// Job-level problem.
    #[error("{0}")]
    Job(String),
}

/// Builds every node's configuration for `spec` over `nodes`, addressed by `spec.addressing`.
pub fn build(nodes: &[NodeSpec], spec: JobSpec) -> Result<Plan, PlanError> {
    build_with(nodes, spec, &|i| spec.addressing.endpoint(i))
}

/// Like [`build`], with node `i` at address `addr(i)` (its `port` field is ignored).
/// Forwarding tables are filled only if every node has a distinct IPv4 address.
pub fn build_with(
    nodes: &[NodeSpec],
    spec: JobSpec,
    addr: &dyn Fn(usize) -> Endpoint,
) -> Result<Plan, PlanError> {
    let n = nodes.len();
    let err = |i: usize, why: String| PlanError::Node {
        node: nodes[i].name.clone(),
        why,
    };
    let mut kids: Vec<Vec<usize>> = vec![vec![]; n];
    let mut top = None;
    for (i, nd) in nodes.iter().enumerate() {
        match nd.parent {
            Some(p) if p >= n => return Err(err(i, format!("parent index {p} does not exist"))),
            Some(p) => {
                if nodes[p].kind == NodeKind::Worker {
                    return Err(err(i, format!("parent {} is a worker", nodes[p].name)));
                }
                kids[p].push(i);
            }
            None if top.is_some() => return Err(err(i, "second node without a parent".into())),
            None => top = Some(i),
        }
    }
    let root = top.ok_or_else(|| PlanError::Job("no node without a parent (cycle?)".into()))?;
    if let Some(i) = (0..n).find(|&i| kids[i].len() > 254) {
        return Err(err(
            i,
            format!(
                "{} children: a switch has at most 255 ports, one of them up",
                kids[i].len()
            ),
        ));
    }
    if !matches!(
        nodes[root].kind,
        NodeKind::Switch {
            aggregate: true,
            ..
        }
    ) {
        return Err(err(
            root,
            "the top node must be an aggregating switch (the job's root)".into(),
        ));
    }
    // Depth-first order from the root; detects unreachable nodes (cycles).
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![root];
    while let Some(v) = stack.pop() {
        order.push(v);
        stack.extend(kids[v].iter().rev());
    }
    if order.len() != n {
        let lost = (0..n).find(|i| !order.contains(i)).unwrap_or(0);
        return Err(err(lost, "not reachable from the top (cycle)".into()));
    }
    let blue = |i: usize| {
        matches!(
            nodes[i].kind,
            NodeKind::Switch {
                aggregate: true,
                ..
            }
        )
    };
    // Ranks in DFS order.
    let worker_nodes: Vec<usize> = order
        .iter()
        .copied()
        .filter(|&i| nodes[i].kind == NodeKind::Worker)
        .collect();
    if worker_nodes.is_empty() {
        return Err(PlanError::Job("the tree has no workers".into()));
    }
    let dynamic = matches!(spec.mode, Mode::Dynamic { .. });
    let nw = worker_nodes.len();
    if dynamic && nw as u32 > MAX_RANKS {
        return Err(PlanError::Job(format!(
            "{nw} workers exceed the {MAX_RANKS} ranks a dynamic job can hold (MAX_RANKS, header version 2's bitmap)"
        )));
    }
    if !dynamic && nw as u32 > MAX_WORKERS {
        return Err(PlanError::Job(format!(
            "{nw} workers: static and timeout jobs hold at most {MAX_WORKERS} ranks (header version 1's bitmap); use mode dynamic for up to {MAX_RANKS}"
        )));
    }
    let mut rank = vec![u16::MAX; n];
    for (r, &w) in worker_nodes.iter().enumerate() {
        rank[w] = r as u16;
    }
    // A dynamic job's switches all hold the job's whole rank set: the leader of a block is
    // the (block mod N)-th rank of it, which every switch and host must agree on.
    let all = RankSet::first(nw as u32);
    // Aggregation parent (nearest blue ancestor) and physical port toward each descendant.
    let mut agg_parent = vec![None; n];
    for &v in &order {
        let mut p = nodes[v].parent;
        while let Some(q) = p {
            if blue(q) {
                break;
            }
            p = nodes[q].parent;
        }
        agg_parent[v] = p;
    }
    let mut agg_kids: Vec<Vec<usize>> = vec![vec![]; n];
    for &v in &order {
        if v != root && (blue(v) || nodes[v].kind == NodeKind::Worker) {
            let p = agg_parent[v].ok_or_else(|| err(v, "has no aggregating ancestor".into()))?;
            agg_kids[p].push(v);
        }
    }
    // subtree ranks and delivered ranks, bottom-up.
    // (Only while the ranks fit 64 bits: a dynamic job's may not, and then its entries have
    // no children, which dynamic mode does not use anyway.)
    let narrow = nw <= 64;
    let mut subtree = vec![0u64; n];
    let mut delivered = vec![0u64; n];
    for &v in order.iter().rev() {
        if !narrow {
            break;
        }
        if nodes[v].kind == NodeKind::Worker {
            subtree[v] = 1 << rank[v];
            delivered[v] = subtree[v];
        } else {
            subtree[v] = kids[v].iter().fold(0, |m, &c| m | subtree[c]);
            if blue(v) {
                let lim = limit(nodes[v].kind, agg_kids[v].len());
                delivered[v] = agg_kids[v]
                    .iter()
                    .take(lim)
                    .fold(0, |m, &c| m | delivered[c]);
            }
        }
    }
    let addr = |i: usize| Endpoint { port: 0, ..addr(i) };
    let distinct_ips = {
        let mut ips: Vec<Ipv4Addr> = (0..n).map(|i| addr(i).ip).collect();
        ips.sort_unstable();
        ips.dedup();
        ips.len() == n
    };
    // Port of switch s toward descendant d: 1 + index of the child subtree containing d.
    let port_toward = |s: usize, d: usize| -> u8 {
        let mut x = d;
        while nodes[x].parent != Some(s) {
            x = nodes[x].parent.expect("descendant");
        }
        1 + kids[s].iter().position(|&k| k == x).expect("child") as u8
    };
    let ports_of = |s: usize| (1 + kids[s].len()).max(2) as u8;
    let max_children = agg_kids.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let mut switches = Vec::new();
    let mut switch_nodes = Vec::new();
    for &s in &order {
        let NodeKind::Switch { .. } = nodes[s].kind else {
            continue;
        };
        let me = addr(s);
        let mut cfg = SwitchConfig::new(&nodes[s].name, me.mac, me.ip);
        cfg.udp_port = me.udp_port;
        cfg.params = Params {
            slots: spec.slot_count.max(1),
            elements: spec.elements,
            max_children: max_children.min(MAX_WORKERS as usize) as u8,
            ports: ports_of(s),
            max_routes: (n as u16).max(1),
            ..Params::default()
        };
        if distinct_ips {
            for d in 0..n {
                if d == s {
                    continue;
                }
                let port = if is_ancestor(nodes, s, d) {
                    port_toward(s, d)
                } else {
                    0
                };
                cfg.routes.push(Route {
                    ip: addr(d).ip,
                    port,
                });
            }
        }
        if blue(s) {
            // A dynamic switch takes any contribution in transit: its children are unused,
            // and left out when the ranks do not fit their 64-bit sets.
            let children = agg_kids[s]
                .iter()
                .filter(|_| narrow)
                .map(|&c| Child {
                    endpoint: Endpoint {
                        port: port_toward(s, c),
                        ..addr(c)
                    },
                    ranks: delivered[c],
                    below: if subtree[c] == delivered[c] {
                        0
                    } else {
                        subtree[c]
                    },
                })
                .collect::<Vec<_>>();
            let role = match agg_parent[s] {
                None => Role::Root,
                Some(p) => Role::Inner {
                    parent: addr(p),
                    index_at_parent: agg_kids[p]
                        .iter()
                        .position(|&k| k == s)
                        .expect("child of parent") as u8,
                },
            };
            let lim = limit(nodes[s].kind, children.len()).max(1);
            if role == Role::Root && lim < children.len() {
                return Err(err(
                    s,
                    "the root cannot have a degree limit below its fan-in".into(),
                ));
            }
            cfg.jobs.push(JobEntry {
                job: spec.job,
                role,
                mode: spec.mode,
                degree_limit: lim as u8,
                children,
                ranks: if dynamic { all.0[0] } else { subtree[s] },
                ranks_hi: if dynamic {
                    all.0[1..nw.div_ceil(64).max(1)].to_vec()
                } else {
                    vec![]
                },
                slot_base: 0,
                slot_count: spec.slot_count,
                quota: 0,
                trust: spec.trust,
            });
        }
        cfg.validate().map_err(|e| err(s, e.to_string()))?;
        switches.push(cfg);
        switch_nodes.push(s);
    }
    let workers = worker_nodes
        .iter()
        .map(|&w| {
            let p = agg_parent[w].expect("worker has an aggregating ancestor");
            Assignment {
                job: spec.job,
                rank: rank[w],
                workers: nw as u16,
                child: agg_kids[p].iter().position(|&k| k == w).expect("child") as u8,
                me: addr(w),
                parent: addr(p),
                window_limit: spec.slot_count,
                elements: spec.elements,
                session: spec.trust.sessions,
            }
        })
        .collect();
    Ok(Plan {
        switches,
        switch_nodes,
        workers,
        worker_nodes,
        root,
    })
}

fn limit(kind: NodeKind, fan_in: usize) -> usize {
    match kind {
        NodeKind::Switch {
            degree_limit: Some(d),
            ..
        } => (d as usize).min(fan_in).max(1),
        _ => fan_in,
    }
}

fn is_ancestor(nodes: &[NodeSpec], a: usize, mut d: usize) -> bool {
    while let Some(p) = nodes[d].parent {
        if p == a {
            return true;
        }
        d = p;
    }
    false
}

/// Two levels: root switch `r` (index 0) with worker `w3` under it, and inner switch `a`
/// (index 1, degree limit `degree_limit`) with workers `w0`, `w1`, `w2` under it.
pub fn two_level(degree_limit: Option<u8>) -> Vec<NodeSpec> {
    let sw = |name: &str, parent, degree_limit| NodeSpec {
        name: name.into(),
        parent,
        kind: NodeKind::Switch {
            aggregate: true,
            degree_limit,
        },
    };
    let w = |name: &str, parent| NodeSpec {
        name: name.into(),
        parent: Some(parent),
        kind: NodeKind::Worker,
    };
    vec![
        sw("r", None, None),
        sw("a", Some(0), degree_limit),
        w("w0", 1),
        w("w1", 1),
        w("w2", 1),
        w("w3", 0),
    ]
}

/// A single aggregating switch (the root) with `workers` workers: the SwitchML setup.
pub fn star(workers: usize) -> Vec<NodeSpec> {
    let mut v = vec![NodeSpec {
        name: "root".into(),
        parent: None,
        kind: NodeKind::Switch {
            aggregate: true,
            degree_limit: None,
        },
    }];
    for i in 0..workers {
        v.push(NodeSpec {
            name: format!("w{i}"),
            parent: Some(0),
            kind: NodeKind::Worker,
        });
    }
    v
}

/// Merges plans of several jobs over the same nodes into one config per switch, giving
/// each job its own slot range (jobs in order, ranges back to back).
pub fn merge(plans: &[Plan]) -> Result<Vec<SwitchConfig>, PlanError> {
    let first = plans
        .first()
        .ok_or_else(|| PlanError::Job("no plans to merge".into()))?;
    let mut out = first.switches.clone();
    for cfg in &mut out {
        cfg.jobs.clear();
    }
    let mut base = 0u32;
    for p in plans {
        if p.switch_nodes != first.switch_nodes {
            return Err(PlanError::Job("plans are over different trees".into()));
        }
        let count = p
            .switches
            .iter()
            .flat_map(|s| &s.jobs)
            .map(|j| j.slot_count)
            .max()
            .unwrap_or(0);
        for (cfg, src) in out.iter_mut().zip(&p.switches) {
            cfg.params.max_children = cfg.params.max_children.max(src.params.max_children);
            cfg.params.elements = cfg.params.elements.max(src.params.elements);
            for j in &src.jobs {
                cfg.jobs.push(JobEntry {
                    slot_base: base,
                    ..j.clone()
                });
            }
        }
        base += count;
    }
    for cfg in &mut out {
        cfg.params.slots = base.max(1);
        cfg.params.max_jobs = cfg.params.max_jobs.max(plans.len() as u16);
        cfg.validate().map_err(|e| PlanError::Node {
            node: cfg.name.clone(),
            why: e.to_string(),
        })?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::netsim::{JobRun, Links, Net};
    use crate::worker::Sending;

    /// A root over `groups.len()` aggregating switches with `groups[g]` workers each.
    fn two_level(groups: &[usize], degree_limit: Option<u8>) -> Vec<NodeSpec> {
        let sw = |name: String, parent, degree_limit| NodeSpec {
            name,
            parent,
            kind: NodeKind::Switch {
                aggregate: true,
                degree_limit,
            },
        };
        let mut v = vec![sw("r".into(), None, None)];
        for (g, &k) in groups.iter().enumerate() {
            let s = v.len();
            v.push(sw(format!("s{g}"), Some(0), degree_limit));
            for i in 0..k {
                v.push(NodeSpec {
                    name: format!("w{g}.{i}"),
                    parent: Some(s),
                    kind: NodeKind::Worker,
                });
            }
        }
        v
    }

    fn spec(mode: Mode) -> JobSpec {
        JobSpec {
            job: 1,
            slot_count: 8,
            elements: 4,
            mode,
            addressing: Addressing::Network,
            trust: Trust::default(),
        }
    }

    const DYNAMIC: Mode = Mode::Dynamic {
        flush_after: 10,
        reclaim_after: 100,
    };

    /// A dynamic job (which runs without the trust protections).
    fn dynamic_spec() -> JobSpec {
        JobSpec {
            trust: Trust::OFF,
            ..spec(DYNAMIC)
        }
    }

    /// A dynamic plan of 300 workers: every switch holds the job's whole rank set (the
    /// leader of a block is its (block mod 300)-th rank everywhere), in header version 2,
    /// and the workers have ranks 0..300.
    #[test]
    fn a_dynamic_plan_holds_up_to_512_ranks_with_the_whole_set_at_every_switch() {
        let nodes = two_level(&[50; 6], None);
        let p = build(&nodes, dynamic_spec()).unwrap();
        assert_eq!(p.switches.len(), 7);
        for s in &p.switches {
            let j = &s.jobs[0];
            assert_eq!(j.rank_set(), RankSet::first(300), "{}", s.name);
            assert_eq!(j.header_version(), crate::wire::VERSION_2);
            assert!(j.children.is_empty());
        }
        let ranks: Vec<u16> = p.workers.iter().map(|a| a.rank).collect();
        assert_eq!(ranks, (0..300).collect::<Vec<_>>());
        assert!(p.workers.iter().all(|a| a.workers == 300));
        // 512 is the most; a dynamic job of 64 or fewer stays in version 1.
        let e = build(&two_level(&[57; 9], None), spec(DYNAMIC)).unwrap_err();
        assert_eq!(e.to_string(), "513 workers exceed the 512 ranks a dynamic job can hold (MAX_RANKS, header version 2's bitmap)");
        let small = build(&two_level(&[32, 32], None), dynamic_spec()).unwrap();
        assert_eq!(small.switches[1].jobs[0].rank_set(), RankSet::first(64));
        assert_eq!(
            small.switches[1].jobs[0].header_version(),
            crate::wire::VERSION
        );
    }

    /// Every worker's contribution to a block led elsewhere is aggregated by its leaf switch
    /// of a two-level dynamic plan, in version 1 (64 ranks) and version 2 (120 ranks). With
    /// the leaf's own subtree as the job's set (as plans had), the leaf picked a different
    /// leader and refused one of its ranks as not of the job, so that rank never got through.
    #[test]
    fn every_rank_of_a_two_level_dynamic_plan_is_aggregated_at_its_leaf() {
        use crate::model::{Switch, Verdict};
        use crate::wire::{Datagram, L4Addr, PacketType, WideRepr};
        for groups in [&[32usize, 32][..], &[40, 40, 40]] {
            let nodes = two_level(groups, None);
            let p = build(&nodes, dynamic_spec()).unwrap();
            let n = p.workers.len() as u32;
            let set = RankSet::first(n);
            // A block led by the first worker of the last leaf.
            let block = n - groups[groups.len() - 1] as u32;
            let leader = &p.workers[block as usize];
            for (leaf, &node) in p.switch_nodes.iter().enumerate().skip(1) {
                let cfg = &p.switches[leaf];
                for a in p
                    .workers
                    .iter()
                    .filter(|a| nodes[p.worker_nodes[a.rank as usize]].parent == Some(node))
                {
                    if a.rank as u32 == block {
                        continue;
                    }
                    let mut sw = Switch::new(cfg).unwrap();
                    let payload = WideRepr {
                        version: crate::wire::wide::version_for(&set),
                        ptype: PacketType::Contribution,
                        flags: crate::wire::Flags(0),
                        exponent: 0,
                        job: 1,
                        elements: 1,
                        block,
                        child: 0,
                        bitmap: RankSet::one(a.rank as u32),
                    }
                    .to_bytes(&[1]);
                    let l4 = |e: &Endpoint| L4Addr {
                        mac: e.mac,
                        ip: e.ip,
                        port: e.udp_port,
                    };
                    let frame = Datagram {
                        src: l4(&a.me),
                        dst: l4(&leader.me),
                        payload: &payload,
                    }
                    .to_frame(true);
                    let port = cfg
                        .routes
                        .iter()
                        .find(|r| r.ip == a.me.ip)
                        .expect("route to the worker")
                        .port;
                    let v = sw.handle(0, port, &frame).verdict;
                    assert_eq!(
                        v,
                        Verdict::Aggregated,
                        "{n} ranks: rank {} at {}",
                        a.rank,
                        cfg.name
                    );
                }
            }
        }
    }

    /// Static and timeout plans stop at 64 workers and say how to go further.
    #[test]
    fn static_and_timeout_plans_stop_at_64_naming_dynamic_mode() {
        let nodes = two_level(&[33, 32], None);
        for mode in [
            Mode::Static,
            Mode::Timeout {
                flush_after: 10,
                reclaim_after: 100,
            },
        ] {
            let e = build(&nodes, spec(mode)).unwrap_err().to_string();
            assert_eq!(e, "65 workers: static and timeout jobs hold at most 64 ranks (header version 1's bitmap); use mode dynamic for up to 512");
        }
        let e = build(&star(255), spec(DYNAMIC)).unwrap_err().to_string();
        assert_eq!(
            e,
            "node root: 255 children: a switch has at most 255 ports, one of them up"
        );
    }

    /// Regression for "a 64-rank session open stalls": a 64-rank job (every bit of the
    /// version-1 bitmap) opens its session and ends with the exact sums, in a star, two
    /// levels, two levels with a degree limit, and 64 single-worker switches.
    #[test]
    fn a_64_rank_session_opens_in_every_shape() {
        for (name, nodes) in [
            ("star", star(64)),
            ("2x32", two_level(&[32, 32], None)),
            ("2x32, degree limit 8", two_level(&[32, 32], Some(8))),
            ("63+1", two_level(&[63, 1], None)),
            ("64x1", two_level(&[1; 64], None)),
        ] {
            let p = build(&nodes, spec(Mode::Static)).unwrap();
            assert!(p.workers.iter().all(|a| a.session));
            let data: Vec<Vec<i32>> = (0..64).map(|r| vec![r, -r, 1, 7 * r, 0]).collect();
            let runs = [JobRun {
                plan: p,
                sending: Sending {
                    window: 2,
                    retransmit_after: 100,
                    first_block: 0,
                    exponent: 0,
                },
                data,
                start: vec![],
            }];
            let mut net = Net::new(&nodes, &runs, Links::default(), 1).unwrap();
            let out = net.run(1_000_000);
            assert!(out.finished, "{name}: the session or the allreduce stalled");
            for r in 0..64 {
                let w = net.worker(1, r).unwrap();
                assert_eq!(
                    w.result().unwrap().0,
                    vec![2016, -2016, 64, 7 * 2016, 0],
                    "{name}: rank {r}"
                );
            }
        }
    }
}
