//! The frame-switch network of dynamic (Canary) jobs: one port per tree edge at every
//! switch, forwarding routes on those ports, and `links.json`, which says how to run it.
//!
//! A dynamic job's switches take contributions *in transit* toward each block's leader host,
//! so they need forwarding routes (docs/protocol.md, "Dynamic mode"). `fanin_proto::plan`
//! numbers a switch's ports per job tree (0 the parent, 1 + i the i-th child); switches
//! shared by several jobs need one numbering. Here every edge of the union of the jobs'
//! trees gets one physical port at each end, in the order the jobs and their plan ports
//! first name it, and every route is renumbered onto it. That union must be a forest: a node
//! hangs below the same parent in every job, otherwise there is no single forwarding table
//! (one clear error).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};

use fanin_proto::config::{Role, Route, SwitchConfig};
use serde::{Deserialize, Serialize};

use crate::aggtree::{AggKind, AggTree};
use crate::emit::EmitError;

/// Most ports of a dynamic switch: it records a copy's ingress ports in a 64-bit set.
pub const MAX_DYNAMIC_PORTS: usize = 64;

/// `DIR/links.json`: how the emitted frame switches and workers connect.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Wiring {
    /// Every switch, in configuration order.
    pub switches: Vec<SwitchWiring>,
    /// Every worker of every job, by job then rank.
    pub workers: Vec<WorkerWiring>,
}

/// One switch's ports.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchWiring {
    /// Node name (its configuration is `<name>.json`, as `emit::file_name` spells it).
    pub name: String,
    /// Its in-frame IPv4 address.
    pub ip: Ipv4Addr,
    /// With `--base-port`: the UDP address its switchd listens on.
    pub listen: Option<SocketAddrV4>,
    /// One link per port.
    pub links: Vec<LinkEnd>,
    /// With `--base-port`: the `fanin switchd` arguments that run it (from `DIR`).
    pub switchd_args: Vec<String>,
}

/// The neighbour behind one port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkEnd {
    /// The port (the model's port number, `--link PORT=...`).
    pub port: u8,
    /// The neighbour's node name.
    pub peer: String,
    /// The neighbour's in-frame IPv4 address.
    pub ip: Ipv4Addr,
    /// With `--base-port`: the neighbour's UDP tunnel address.
    pub tunnel: Option<SocketAddrV4>,
}

/// One worker of a dynamic job.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerWiring {
    /// Job id.
    pub job: u16,
    /// Rank.
    pub rank: u16,
    /// Node name.
    pub name: String,
    /// Its in-frame IPv4 address (`--peer` entry of its rank).
    pub ip: Ipv4Addr,
    /// Its switch's node name.
    pub switch: String,
    /// With `--base-port`: its own UDP tunnel address (`--bind`).
    pub bind: Option<SocketAddrV4>,
    /// With `--base-port`: its switch's UDP tunnel address (`--switch`).
    pub switch_tunnel: Option<SocketAddrV4>,
    /// With `--base-port`: the `fanin send` arguments of this worker, but for the data
    /// (`--input`, `--out`, `--scale`).
    pub send_args: Vec<String>,
}

/// The physical ports of every switch of the dynamic jobs, built job by job.
#[derive(Debug, Default)]
pub struct Ports {
    /// Switch address → (neighbour address → port), ports in assignment order.
    ports: BTreeMap<u32, BTreeMap<u32, u8>>,
    /// Node address → (parent address, first job naming it).
    parent: BTreeMap<u32, (u32, u16)>,
    /// Node address → name.
    names: BTreeMap<u32, String>,
}

impl Ports {
    /// Adds a job's tree: its edges get ports, and a node with another parent than in an
    /// earlier job is an error.
    pub fn add(&mut self, job: u16, tree: &AggTree) -> Result<(), EmitError> {
        for node in &tree.nodes {
            self.names
                .entry(node.addr)
                .or_insert_with(|| node.name.clone());
        }
        for (v, node) in tree.nodes.iter().enumerate() {
            for &c in &node.children {
                let (a, b) = (node.addr, tree.nodes[c].addr);
                match self.parent.get(&b) {
                    Some(&(p, j)) if p != a => {
                        return Err(EmitError::Wiring(format!(
                            "node {:?} hangs below {:?} in job {j} and below {:?} in job {job}; the dynamic jobs' switches need one forwarding table, so their trees must agree on every node's parent: emit these jobs separately",
                            tree.nodes[c].name, self.names[&p], tree.nodes[v].name
                        )));
                    }
                    Some(_) => {}
                    None => {
                        self.parent.insert(b, (a, job));
                    }
                }
                if node.kind != AggKind::Worker {
                    self.link(a, b)?;
                }
                if tree.nodes[c].kind != AggKind::Worker {
                    self.link(b, a)?;
                }
            }
        }
        Ok(())
    }

    fn link(&mut self, sw: u32, nb: u32) -> Result<(), EmitError> {
        let m = self.ports.entry(sw).or_default();
        if !m.contains_key(&nb) {
            if m.len() == MAX_DYNAMIC_PORTS {
                return Err(EmitError::Wiring(format!(
                    "switch {:?} needs more than {MAX_DYNAMIC_PORTS} ports (a dynamic switch records a copy's ingress ports in a 64-bit set): place fewer workers below it",
                    self.names[&sw]
                )));
            }
            let p = m.len() as u8;
            m.insert(nb, p);
        }
        Ok(())
    }

    /// Number of ports of the switch at `sw`.
    pub fn count(&self, sw: u32) -> usize {
        self.ports.get(&sw).map_or(0, BTreeMap::len)
    }

    /// Renumbers `plan`, the configuration `fanin_proto::plan` built for switch node `v` of
    /// `tree` (its ports: 0 the parent, 1 + i child i), onto the physical ports: its job
    /// entries' child and parent endpoints in place, and its routes as it merges them into
    /// `into` (a destination routed two ways is an error).
    pub fn renumber(
        &self,
        tree: &AggTree,
        v: usize,
        plan: &mut SwitchConfig,
        into: &mut SwitchConfig,
    ) -> Result<(), EmitError> {
        let me = tree.nodes[v].addr;
        let phys = &self.ports[&me];
        // Plan port → neighbour address, read from the plan's own routes to the children.
        let mut nb_of: BTreeMap<u8, u32> = BTreeMap::new();
        if let Some(&(p, _)) = self.parent.get(&me) {
            nb_of.insert(0, p);
        }
        let ip_of = |a: u32| plan.routes.iter().find(|r| r.ip == network_ip(a));
        for &c in &tree.nodes[v].children {
            let a = tree.nodes[c].addr;
            let r = ip_of(a).ok_or_else(|| {
                EmitError::Wiring(format!(
                    "the plan of {:?} has no route to its child {:?} (a bug)",
                    tree.nodes[v].name, tree.nodes[c].name
                ))
            })?;
            nb_of.insert(r.port, a);
        }
        let phys_of = |port: u8, what: &str| {
            nb_of.get(&port).map(|nb| phys[nb]).ok_or_else(|| {
                EmitError::Wiring(format!(
                    "the plan of {:?} sends {what} to port {port}, which no tree edge has (a bug)",
                    tree.nodes[v].name
                ))
            })
        };
        for j in &mut plan.jobs {
            for c in &mut j.children {
                c.endpoint.port = phys_of(c.endpoint.port, "a child")?;
            }
            if let Role::Inner { parent, .. } = &mut j.role {
                parent.port = phys_of(parent.port, "the parent")?;
            }
        }
        for r in &plan.routes {
            let port = phys_of(r.port, &r.ip.to_string())?;
            match into.routes.iter().find(|x| x.ip == r.ip) {
                Some(x) if x.port != port => {
                    return Err(EmitError::Wiring(format!(
                        "switch {:?} would route {} to two ports ({} and {port})",
                        tree.nodes[v].name, r.ip, x.port
                    )));
                }
                Some(_) => {}
                None => into.routes.push(Route { ip: r.ip, port }),
            }
        }
        Ok(())
    }

    /// The wiring of the switches `configs` (by address) and of the dynamic jobs' workers;
    /// `tunnel` gives a node's UDP tunnel address with `--base-port`, `packet` the jobs'
    /// elements per packet and slots.
    pub fn wiring(
        &self,
        switches: &[(u32, &SwitchConfig)],
        jobs: &[(u16, &AggTree)],
        tunnel: &dyn Fn(u32) -> Option<SocketAddrV4>,
        file_name: &dyn Fn(&str) -> String,
        packet: (u16, u32),
    ) -> Wiring {
        let switches = switches
            .iter()
            .map(|&(a, cfg)| {
                let mut links: Vec<LinkEnd> = self.ports[&a]
                    .iter()
                    .map(|(&nb, &port)| LinkEnd {
                        port,
                        peer: self.names[&nb].clone(),
                        ip: network_ip(nb),
                        tunnel: tunnel(nb),
                    })
                    .collect();
                links.sort_by_key(|l| l.port);
                let listen = tunnel(a);
                let mut args = Vec::new();
                if let Some(l) = listen {
                    args = vec![
                        "switchd".into(),
                        "--config".into(),
                        file_name(&cfg.name),
                        "--listen".into(),
                        l.to_string(),
                    ];
                    for e in &links {
                        if let Some(t) = e.tunnel {
                            args.push("--link".into());
                            args.push(format!("{}={t}", e.port));
                        }
                    }
                }
                SwitchWiring {
                    name: cfg.name.clone(),
                    ip: cfg.ip,
                    listen,
                    links,
                    switchd_args: args,
                }
            })
            .collect();
        let mut workers = Vec::new();
        for &(job, tree) in jobs {
            let ws = tree.workers();
            let peers: Vec<Ipv4Addr> = ws.iter().map(|&w| network_ip(tree.nodes[w].addr)).collect();
            for (rank, &w) in ws.iter().enumerate() {
                let a = tree.nodes[w].addr;
                let sw = self.parent[&a].0;
                let (bind, switch_tunnel) = (tunnel(a), tunnel(sw));
                let mut args = Vec::new();
                if let (Some(b), Some(s)) = (bind, switch_tunnel) {
                    args = vec![
                        "send".into(),
                        "--dynamic".into(),
                        "--job".into(),
                        job.to_string(),
                        "--rank".into(),
                        rank.to_string(),
                        "--bind".into(),
                        b.to_string(),
                        "--switch".into(),
                        s.to_string(),
                        "--packet-elements".into(),
                        packet.0.to_string(),
                        "--slots".into(),
                        packet.1.to_string(),
                    ];
                    for p in &peers {
                        args.push("--peer".into());
                        args.push(p.to_string());
                    }
                }
                workers.push(WorkerWiring {
                    job,
                    rank: rank as u16,
                    name: tree.nodes[w].name.clone(),
                    ip: network_ip(a),
                    switch: self.names[&sw].clone(),
                    bind,
                    switch_tunnel,
                    send_args: args,
                });
            }
        }
        Wiring { switches, workers }
    }
}

/// The in-frame IPv4 address of address number `a` (docs/placement.md, "Addresses").
pub fn network_ip(a: u32) -> Ipv4Addr {
    Ipv4Addr::new(10, (a >> 16) as u8, (a >> 8) as u8, a as u8)
}
