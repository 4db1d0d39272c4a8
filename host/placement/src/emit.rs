//! Per-switch configuration: the job-table entries of every aggregation node and the
//! workers' assignments, in the `fanin_proto` formats the switches and workers load.
//!
//! Addressing (documented in docs/placement.md): address number a gives IP
//! `10.(a>>16).(a>>8 & 255).(a & 255)` and MAC `02:00:00:(a>>16):(a>>8 & 255):(a & 255)`,
//! UDP port `FANIN_UDP_PORT`. With a base port P every node is `127.0.0.1` instead and gets
//! UDP port P + its rank among all address numbers (so a whole tree runs on one host).
//! Egress ports are logical: 0 is the uplink, 1 + i the i-th child; dynamic jobs' switches
//! get physical ports and routes instead (`crate::wiring`, which also writes `links.json`).

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;

use fanin_proto::config::{Endpoint, JobEntry, Mode, Params, SwitchConfig};
use fanin_proto::plan::{self, Addressing as PlanAddressing, JobSpec, NodeKind, NodeSpec};
use fanin_proto::wire::{DEFAULT_ELEMENTS, FANIN_UDP_PORT, MAX_RANKS, MAX_WORKERS};
use fanin_proto::worker::Assignment;

use crate::aggtree::{AggKind, AggTree};
use crate::wiring::{network_ip, Ports, Wiring};

/// Options of the emission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitOptions {
    /// Slots per job (job t uses slots t·slots .. (t+1)·slots).
    pub slots: u32,
    /// Give every node 127.0.0.1 and UDP port base + rank.
    pub base_port: Option<u16>,
    /// The jobs' trust settings (sessions, source checks, idle reclaim).
    pub trust: fanin_proto::config::Trust,
    /// Elements per packet of every job (each switch's lane count, every worker's packets).
    pub packet_elements: u16,
    /// Completion mode of every job entry (dynamic mode turns the trust protections off,
    /// which it does not support yet).
    pub mode: Mode,
}

impl Default for EmitOptions {
    fn default() -> Self {
        Self {
            slots: 64,
            base_port: None,
            trust: fanin_proto::config::Trust::default(),
            packet_elements: DEFAULT_ELEMENTS,
            mode: Mode::Static,
        }
    }
}

/// Why configurations could not be emitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The job has more workers than the contributor bitmap holds.
    #[error("job {job} has {workers} workers; {}", if *max == MAX_WORKERS { format!("static and timeout jobs hold at most {MAX_WORKERS} ranks (header version 1's bitmap): use --mode dynamic for up to {MAX_RANKS}, or fewer servers") } else { format!("a dynamic job holds at most {max} ranks (MAX_RANKS, header version 2's bitmap): use fewer servers") })]
    TooManyWorkers {
        /// Job id.
        job: u16,
        /// Its workers.
        workers: usize,
        /// The limit.
        max: u32,
    },
    /// The job has no worker at all.
    #[error("job {0} has no workers (all loads are zero)")]
    NoWorkers(u16),
    /// A node has more children than a job entry can name.
    #[error("node {0:?} has {1} children; a job entry holds at most 64")]
    TooManyChildren(String, usize),
    /// Ports or slots overflow.
    #[error("{0}")]
    Overflow(String),
    /// The job's tree cannot be planned.
    #[error("job {0}: {1}")]
    Plan(u16, String),
    /// The generated configuration fails validation (a bug).
    #[error("configuration of {0:?} is invalid: {1}")]
    Invalid(String, fanin_proto::config::ConfigError),
    /// A dynamic job's frame-switch network cannot be wired (`crate::wiring`).
    #[error("{0}")]
    Wiring(String),
    /// Writing a file failed.
    #[error("writing {0}: {1}")]
    Io(String, String),
}

/// Every emitted file: one configuration per aggregation node (root first) and the workers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Emitted {
    /// Switch (and root host) configurations.
    pub switches: Vec<SwitchConfig>,
    /// One assignment per worker of every job.
    pub workers: Vec<Assignment>,
    /// Dynamic mode: the frame switches' ports and tunnels (`links.json`).
    pub wiring: Option<Wiring>,
}

struct Addressing {
    base_port: Option<u16>,
    rank: BTreeMap<u32, u16>,
}

impl Addressing {
    fn new(jobs: &[(u16, AggTree)], base_port: Option<u16>) -> Result<Self, EmitError> {
        let mut rank = BTreeMap::new();
        let mut all: Vec<u32> = jobs
            .iter()
            .flat_map(|(_, t)| t.nodes.iter().map(|n| n.addr))
            .collect();
        all.sort_unstable();
        all.dedup();
        if let Some(p) = base_port {
            if p as usize + all.len() > u16::MAX as usize + 1 {
                return Err(EmitError::Overflow(format!(
                    "--base-port {p} leaves no room for {} nodes",
                    all.len()
                )));
            }
        }
        for (i, a) in all.into_iter().enumerate() {
            rank.insert(a, i as u16);
        }
        Ok(Self { base_port, rank })
    }

    fn ip(&self, a: u32) -> Ipv4Addr {
        match self.base_port {
            Some(_) => Ipv4Addr::LOCALHOST,
            None => network_ip(a),
        }
    }

    fn mac(a: u32) -> [u8; 6] {
        [0x02, 0, 0, (a >> 16) as u8, (a >> 8) as u8, a as u8]
    }

    fn port(&self, a: u32) -> u16 {
        match self.base_port {
            Some(p) => p + self.rank[&a],
            None => FANIN_UDP_PORT,
        }
    }

    fn endpoint(&self, a: u32, port: u8) -> Endpoint {
        Endpoint {
            mac: Self::mac(a),
            ip: self.ip(a),
            udp_port: self.port(a),
            port,
        }
    }

    /// The in-frame endpoint of a dynamic job's node: always the network address (the
    /// base port, if any, gives its tunnel instead).
    fn network_endpoint(a: u32) -> Endpoint {
        Endpoint {
            mac: Self::mac(a),
            ip: network_ip(a),
            udp_port: FANIN_UDP_PORT,
            port: 0,
        }
    }

    /// With a base port: the node's UDP tunnel address (a frame switch's `--listen`, a
    /// worker's `--bind`).
    fn tunnel(&self, a: u32) -> Option<SocketAddrV4> {
        self.base_port
            .map(|p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p + self.rank[&a]))
    }
}

/// Emits the configurations of several jobs (job id, tree) that share the switches.
///
/// Each job's tree is turned into configurations by `fanin_proto::plan::build_with`, the
/// single definition of ranks, child indices, degree-limited rank sets and roles; this
/// function only assigns addresses and slot ranges and merges jobs per switch.
pub fn emit(jobs: &[(u16, AggTree)], opts: &EmitOptions) -> Result<Emitted, EmitError> {
    let addr = Addressing::new(jobs, opts.base_port)?;
    let dynamic = matches!(opts.mode, Mode::Dynamic { .. });
    let mut ports = Ports::default();
    let mut configs: BTreeMap<u32, SwitchConfig> = BTreeMap::new();
    let mut workers = Vec::new();
    for (slot_job, (job, tree)) in jobs.iter().enumerate() {
        let ws = tree.workers();
        if ws.is_empty() {
            return Err(EmitError::NoWorkers(*job));
        }
        let max = if dynamic { MAX_RANKS } else { MAX_WORKERS };
        if ws.len() > max as usize {
            return Err(EmitError::TooManyWorkers {
                job: *job,
                workers: ws.len(),
                max,
            });
        }
        if let Some(n) = tree
            .nodes
            .iter()
            .find(|n| n.children.len() > MAX_WORKERS as usize)
        {
            return Err(EmitError::TooManyChildren(n.name.clone(), n.children.len()));
        }
        if dynamic {
            ports.add(*job, tree)?;
        }
        let slot_base = (slot_job as u32)
            .checked_mul(opts.slots)
            .ok_or_else(|| EmitError::Overflow("too many jobs for the slot space".into()))?;
        let nodes = plan_nodes(tree);
        let spec = JobSpec {
            job: *job,
            slot_count: opts.slots,
            elements: opts.packet_elements,
            mode: opts.mode,
            addressing: PlanAddressing::Network,
            // Dynamic mode does not support the trust protections yet.
            trust: if dynamic {
                fanin_proto::config::Trust::OFF
            } else {
                opts.trust
            },
        };
        // A dynamic job's frames carry network addresses, which its switches route on.
        let endpoint = |i: usize| match dynamic {
            true => Addressing::network_endpoint(tree.nodes[i].addr),
            false => addr.endpoint(tree.nodes[i].addr, 0),
        };
        let plan = plan::build_with(&nodes, spec, &endpoint)
            .map_err(|e| EmitError::Plan(*job, e.to_string()))?;
        workers.extend(plan.workers);
        for (mut cfg, &v) in plan.switches.into_iter().zip(&plan.switch_nodes) {
            let a = tree.nodes[v].addr;
            let merged = configs.entry(a).or_insert_with(|| SwitchConfig {
                jobs: Vec::new(),
                routes: Vec::new(),
                ..cfg.clone()
            });
            // Static and timeout jobs' ports are logical per job (no routes): a datagram
            // switch needs none. Dynamic jobs' routes go onto the physical ports.
            if dynamic {
                ports.renumber(tree, v, &mut cfg, merged)?;
            }
            merged
                .jobs
                .extend(cfg.jobs.into_iter().map(|j| JobEntry { slot_base, ..j }));
        }
    }
    let mut switches = Vec::new();
    let mut addrs = Vec::new();
    for (a, mut cfg) in configs {
        size_params(&mut cfg, dynamic.then(|| ports.count(a)))?;
        cfg.validate()
            .map_err(|e| EmitError::Invalid(cfg.name.clone(), e))?;
        switches.push(cfg);
        addrs.push(a);
    }
    let wiring = dynamic.then(|| {
        let sw: Vec<(u32, &SwitchConfig)> = addrs.iter().copied().zip(&switches).collect();
        let js: Vec<(u16, &AggTree)> = jobs.iter().map(|(j, t)| (*j, t)).collect();
        ports.wiring(
            &sw,
            &js,
            &|a| addr.tunnel(a),
            &file_name,
            (opts.packet_elements, opts.slots),
        )
    });
    Ok(Emitted {
        switches,
        workers,
        wiring,
    })
}

/// The tree as `fanin_proto::plan` nodes: every non-worker node aggregates.
pub fn plan_nodes(tree: &AggTree) -> Vec<NodeSpec> {
    let mut parent = vec![None; tree.nodes.len()];
    for (v, node) in tree.nodes.iter().enumerate() {
        for &c in &node.children {
            parent[c] = Some(v);
        }
    }
    tree.nodes
        .iter()
        .enumerate()
        .map(|(v, n)| NodeSpec {
            name: n.name.clone(),
            parent: parent[v],
            kind: match n.kind {
                AggKind::Worker => NodeKind::Worker,
                AggKind::Root => NodeKind::Switch {
                    aggregate: true,
                    degree_limit: None,
                },
                AggKind::Switch => NodeKind::Switch {
                    aggregate: true,
                    degree_limit: Some(n.degree_limit.clamp(1, MAX_WORKERS as usize) as u8),
                },
            },
        })
        .collect()
}

/// Table sizes: the defaults, grown to fit the emitted jobs and routes; the lane count is the
/// plan's. `links` is a dynamic switch's number of physical ports.
fn size_params(cfg: &mut SwitchConfig, links: Option<usize>) -> Result<(), EmitError> {
    let d = Params::default();
    let slots = cfg
        .jobs
        .iter()
        .map(|j| j.slot_base as u64 + j.slot_count as u64)
        .max()
        .unwrap_or(0);
    let children = cfg.jobs.iter().map(|j| j.children.len()).max().unwrap_or(0);
    if slots > 1 << 20 {
        return Err(EmitError::Overflow(format!(
            "{} needs {slots} slots (at most 1048576)",
            cfg.name
        )));
    }
    cfg.params = Params {
        // The lanes the plan gave the switch (the packet size of its jobs).
        elements: cfg.params.elements,
        slots: d.slots.max(slots as u32),
        max_jobs: d.max_jobs.max(cfg.jobs.len() as u16),
        max_children: d.max_children.max(children as u8),
        ports: match links {
            Some(n) => d.ports.max(n as u8).max(2),
            None => d.ports.max(children as u8 + 1),
        },
        max_routes: d.max_routes.max(cfg.routes.len() as u16),
    };
    Ok(())
}

/// File name for a node name: unsafe characters become `_`.
pub fn file_name(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || "._-".contains(c) {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("{s}.json")
}

/// Writes `DIR/<node>.json` per configuration and `DIR/workers.json`.
pub fn write(dir: &Path, e: &Emitted) -> Result<Vec<String>, EmitError> {
    let io =
        |p: &Path, err: std::io::Error| EmitError::Io(p.display().to_string(), err.to_string());
    std::fs::create_dir_all(dir).map_err(|err| io(dir, err))?;
    let mut written = Vec::new();
    for cfg in &e.switches {
        let p = dir.join(file_name(&cfg.name));
        std::fs::write(&p, serde_json::to_string_pretty(cfg).expect("serialisable"))
            .map_err(|err| io(&p, err))?;
        written.push(p.display().to_string());
    }
    let p = dir.join("workers.json");
    std::fs::write(
        &p,
        serde_json::to_string_pretty(&e.workers).expect("serialisable"),
    )
    .map_err(|err| io(&p, err))?;
    written.push(p.display().to_string());
    if let Some(w) = &e.wiring {
        // The switchd arguments name their configuration by its path in DIR.
        let mut w = w.clone();
        for s in &mut w.switches {
            if let Some(i) = s.switchd_args.iter().position(|a| a == "--config") {
                let f = &mut s.switchd_args[i + 1];
                *f = dir.join(&*f).display().to_string();
            }
        }
        let p = dir.join("links.json");
        std::fs::write(&p, serde_json::to_string_pretty(&w).expect("serialisable"))
            .map_err(|err| io(&p, err))?;
        written.push(p.display().to_string());
    }
    Ok(written)
}
