//! Per-switch configuration: the job-table entries of every aggregation node and the
//! workers' assignments, in the `fanin_proto` formats the switches and workers load.
//!
//! Addressing (documented in docs/placement.md): address number a gives IP
//! `10.(a>>16).(a>>8 & 255).(a & 255)` and MAC `02:00:00:(a>>16):(a>>8 & 255):(a & 255)`,
//! UDP port `FANIN_UDP_PORT`. With a base port P every node is `127.0.0.1` instead and gets
//! UDP port P + its rank among all address numbers (so a whole tree runs on one host).
//! Egress ports are logical: 0 is the uplink, 1 + i the i-th child.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::path::Path;

use fanin_proto::config::{Child, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig};
use fanin_proto::wire::{DEFAULT_ELEMENTS, FANIN_UDP_PORT, MAX_WORKERS};
use fanin_proto::worker::Assignment;

use crate::aggtree::{AggKind, AggTree};

/// Options of the emission.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EmitOptions {
    /// Slots per job (job t uses slots t·slots .. (t+1)·slots).
    pub slots: u32,
    /// Give every node 127.0.0.1 and UDP port base + rank.
    pub base_port: Option<u16>,
}

impl Default for EmitOptions {
    fn default() -> Self {
        Self {
            slots: 64,
            base_port: None,
        }
    }
}

/// Why configurations could not be emitted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EmitError {
    /// The job has more workers than the contributor bitmap holds.
    #[error("job {job} has {workers} workers; a job holds at most {max} (fanin_proto::wire::MAX_WORKERS): use fewer servers")]
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
    /// The generated configuration fails validation (a bug).
    #[error("configuration of {0:?} is invalid: {1}")]
    Invalid(String, fanin_proto::config::ConfigError),
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
            None => Ipv4Addr::new(10, (a >> 16) as u8, (a >> 8) as u8, a as u8),
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
}

/// Emits the configurations of several jobs (job id, tree) that share the switches.
pub fn emit(jobs: &[(u16, AggTree)], opts: &EmitOptions) -> Result<Emitted, EmitError> {
    let addr = Addressing::new(jobs, opts.base_port)?;
    let mut configs: BTreeMap<u32, SwitchConfig> = BTreeMap::new();
    let mut workers = Vec::new();
    for (slot_job, (job, tree)) in jobs.iter().enumerate() {
        let ws = tree.workers();
        if ws.is_empty() {
            return Err(EmitError::NoWorkers(*job));
        }
        if ws.len() > MAX_WORKERS as usize {
            return Err(EmitError::TooManyWorkers {
                job: *job,
                workers: ws.len(),
                max: MAX_WORKERS,
            });
        }
        let slot_base = (slot_job as u32)
            .checked_mul(opts.slots)
            .ok_or_else(|| EmitError::Overflow("too many jobs for the slot space".into()))?;
        let mut rank_of = vec![0u64; tree.nodes.len()];
        for (r, &w) in ws.iter().enumerate() {
            rank_of[w] = 1u64 << r;
        }
        // Subtree ranks (all) and delivered ranks (what non-bypass packets carry).
        let (all, delivered) = ranks(tree, &rank_of);
        let mut parent = vec![(0usize, 0u8); tree.nodes.len()];
        for (v, node) in tree.nodes.iter().enumerate() {
            for (i, &c) in node.children.iter().enumerate() {
                parent[c] = (v, i as u8);
            }
        }
        for (v, node) in tree.nodes.iter().enumerate() {
            if node.kind == AggKind::Worker {
                let (p, idx) = parent[v];
                workers.push(Assignment {
                    job: *job,
                    rank: rank_of[v].trailing_zeros() as u8,
                    workers: ws.len() as u8,
                    child: idx,
                    me: addr.endpoint(node.addr, 0),
                    parent: addr.endpoint(tree.nodes[p].addr, 0),
                    window_limit: opts.slots,
                    elements: DEFAULT_ELEMENTS,
                });
                continue;
            }
            if node.children.len() > MAX_WORKERS as usize {
                return Err(EmitError::TooManyChildren(
                    node.name.clone(),
                    node.children.len(),
                ));
            }
            let children = node
                .children
                .iter()
                .enumerate()
                .map(|(i, &c)| Child {
                    endpoint: addr.endpoint(tree.nodes[c].addr, i as u8 + 1),
                    ranks: delivered[c],
                })
                .collect::<Vec<_>>();
            let role = match node.kind {
                AggKind::Root => Role::Root,
                _ => {
                    let (p, idx) = parent[v];
                    Role::Inner {
                        parent: addr.endpoint(tree.nodes[p].addr, 0),
                        index_at_parent: idx,
                    }
                }
            };
            let degree_limit = if node.kind == AggKind::Root {
                children.len()
            } else {
                node.degree_limit.clamp(1, children.len())
            };
            let entry = JobEntry {
                job: *job,
                role,
                mode: Mode::Static,
                degree_limit: degree_limit as u8,
                children,
                ranks: all[v],
                slot_base,
                slot_count: opts.slots,
                quota: 0,
            };
            let cfg = configs.entry(node.addr).or_insert_with(|| {
                let mut c =
                    SwitchConfig::new(&node.name, Addressing::mac(node.addr), addr.ip(node.addr));
                c.udp_port = addr.port(node.addr);
                c
            });
            cfg.jobs.push(entry);
        }
    }
    let mut switches = Vec::new();
    for (_, mut cfg) in configs {
        size_params(&mut cfg)?;
        cfg.validate()
            .map_err(|e| EmitError::Invalid(cfg.name.clone(), e))?;
        switches.push(cfg);
    }
    Ok(Emitted { switches, workers })
}

/// Table sizes: the defaults, grown to fit the emitted jobs.
fn size_params(cfg: &mut SwitchConfig) -> Result<(), EmitError> {
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
        slots: d.slots.max(slots as u32),
        max_jobs: d.max_jobs.max(cfg.jobs.len() as u16),
        max_children: d.max_children.max(children as u8),
        ports: d.ports.max(children as u8 + 1),
        ..d
    };
    Ok(())
}

/// Per node: all ranks below it, and the ranks its non-bypass packets carry.
fn ranks(tree: &AggTree, own: &[u64]) -> (Vec<u64>, Vec<u64>) {
    let n = tree.nodes.len();
    let mut all = own.to_vec();
    let mut delivered = own.to_vec();
    let mut order = Vec::with_capacity(n);
    let mut stack = vec![0usize];
    while let Some(v) = stack.pop() {
        order.push(v);
        stack.extend(&tree.nodes[v].children);
    }
    for &v in order.iter().rev() {
        let node = &tree.nodes[v];
        if node.kind == AggKind::Worker {
            continue;
        }
        all[v] = node.children.iter().fold(0, |m, &c| m | all[c]);
        delivered[v] = node
            .children
            .iter()
            .take(node.degree_limit)
            .fold(0, |m, &c| m | delivered[c]);
    }
    (all, delivered)
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
    Ok(written)
}
