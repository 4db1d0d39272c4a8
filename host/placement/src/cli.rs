//! `fanin place` and `fanin experiment`: clap arguments, validation into a typed job, and
//! output (a readable table, or one JSON object with `--json`).

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{anyhow, bail, Context, Result};
use serde_json::json;

use crate::aggtree::AggTree;
use crate::emit::{self, EmitOptions};
use crate::metrics::Scale;
use crate::multi::{capacities, online};
use crate::paring::{self, GraphPlacement, ParingConfig};
use crate::rational::{exact, parse_positive, to_f64, Rat};
use crate::topology::{fat_tree, programmable_order, Graph, RateScheme, Topology, Tree};
use crate::workload::{rng, LoadSpec};
use crate::{place, TreeAlgo};

/// Placement algorithm names accepted by `--algo`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Algo {
    /// SOAR: optimal utilisation (trees).
    Soar,
    /// SMC: optimal congestion (trees).
    Smc,
    /// Top baseline (trees).
    Top,
    /// Max baseline (trees).
    Max,
    /// Level baseline (trees).
    Level,
    /// Random baseline, seeded (trees).
    Random,
    /// No aggregation (trees).
    AllRed,
    /// Every available switch aggregates (trees).
    AllBlue,
    /// PARING (graphs).
    Paring,
    /// DeepSys: local placement, no aggregation (graphs).
    Deepsys,
    /// ATP-like first-programmable-switch aggregation (graphs).
    Atp,
}

/// Arguments of `fanin place`.
#[derive(Debug, Clone, clap::Args)]
pub struct PlaceArgs {
    /// Topology: a JSON file (tree or graph format), bt:N, sf:N:SEED or fat-tree:K.
    #[arg(long)]
    pub topology: String,
    /// Placement algorithm.
    #[arg(long, value_enum)]
    pub algo: Algo,
    /// Budget: the most aggregating switches per workload (tree algorithms).
    #[arg(long)]
    pub k: Option<usize>,
    /// Leaf loads of a generated tree: uniform, uniform:LO:HI, power-law, mixed, or a JSON file.
    #[arg(long)]
    pub loads: Option<String>,
    /// Seed of the load generator and of Random.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Link rates of a generated tree: constant (default), linear or exp:BASE.
    #[arg(long)]
    pub rates: Option<String>,
    /// Number of workloads placed online, one after another (tree algorithms).
    #[arg(long)]
    pub workloads: Option<usize>,
    /// Aggregation capacity a(s) of every switch without its own `capacity` (online mode).
    #[arg(long)]
    pub switch_capacity: Option<u32>,
    /// Number of workers n (graph algorithms).
    #[arg(long)]
    pub workers: Option<usize>,
    /// Aggregation capacity B of programmable switches and the PS, in Gbps (graph algorithms).
    #[arg(long)]
    pub capacity_gbps: Option<String>,
    /// Upper bound R on the gradient sending rate, in Gbps (graph algorithms).
    #[arg(long)]
    pub rate_limit_gbps: Option<String>,
    /// Gradient size b per worker, in GB; decimals or fractions such as 1627/1024 (graph algorithms).
    #[arg(long)]
    pub gradient_gb: Option<String>,
    /// Make only the first M fat-tree switches programmable (documented order; default all).
    #[arg(long)]
    pub programmable: Option<usize>,
    /// Coarse-grained INA routing: no partial aggregation (paring, atp; deepsys is unchanged).
    #[arg(long)]
    pub coarse: bool,
    /// Print one JSON object instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Write per-switch job-table configurations and workers.json into this directory.
    #[arg(long)]
    pub emit_config: Option<PathBuf>,
    /// With --emit-config: every node on 127.0.0.1 with UDP port BASE + its rank.
    #[arg(long)]
    pub base_port: Option<u16>,
    /// With --emit-config: slots per job.
    #[arg(long, default_value_t = 64)]
    pub slots: u32,
    /// With --emit-config: jobs without sessions, source checks and idle reclaim (the
    /// protocol before the trust features).
    #[arg(long, conflicts_with = "no_sessions")]
    pub no_trust: bool,
    /// With --emit-config: jobs without sessions, with source checks and the idle reclaim
    /// (for traffic that numbers its own blocks, as `fanin send --no-session` does).
    #[arg(long)]
    pub no_sessions: bool,
    /// With --emit-config: elements per packet of every job (the switches' lane count; the
    /// RTL configurations take at most 256, software switches up to 2237).
    #[arg(long, default_value_t = fanin_proto::wire::DEFAULT_ELEMENTS)]
    pub packet_elements: u16,
    /// With --emit-config: the jobs' completion mode (docs/protocol.md).
    #[arg(long, value_enum, default_value_t = EmitMode::Static)]
    pub mode: EmitMode,
    /// With --emit-config and --mode timeout|dynamic: ticks from a copy's first contribution
    /// to its flush.
    #[arg(long, default_value_t = 1000)]
    pub flush_after: u64,
    /// With --emit-config and --mode timeout|dynamic: ticks from a flush to the reclaim.
    #[arg(long, default_value_t = 100_000)]
    pub reclaim_after: u64,
}

/// `fanin place --mode`: the job mode written into emitted configurations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum EmitMode {
    /// Complete when every expected contribution arrived.
    Static,
    /// Also flush partial aggregates on a timer (fixed tree).
    Timeout,
    /// Canary's dynamic trees: intercept in transit, record ingress ports.
    Dynamic,
}

/// Arguments of `fanin experiment`.
#[derive(Debug, Clone, clap::Args)]
pub struct ExperimentArgs {
    /// Which evaluation to reproduce.
    #[arg(value_enum)]
    pub name: crate::experiment::Name,
    /// Output directory for the CSV and SVG files.
    #[arg(long)]
    pub out: PathBuf,
    /// Repetitions averaged per point (the papers use 10).
    #[arg(long, default_value_t = 10)]
    pub reps: usize,
    /// Base seed.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Small sizes that run within a minute (the ASK experiments).
    #[arg(long)]
    pub quick: bool,
    /// canary-* only: the fabric's link-level flow control (default lossless).
    #[arg(long, value_enum)]
    pub flow: Option<FlowArg>,
}

/// `fanin experiment canary-* --flow`: how the simulated fabric's links treat a full buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum FlowArg {
    /// Credit-based link-level flow control: senders wait, nothing is dropped.
    Lossless,
    /// Finite drop-tail output queues.
    DropTail,
}

/// A validated tree job.
pub struct TreeJob {
    /// The topology as given.
    pub spec: String,
    /// The tree (rates applied).
    pub tree: Tree,
    /// Algorithm.
    pub algo: TreeAlgo,
    /// Budget.
    pub k: usize,
    /// Loads per workload.
    pub workloads: Vec<Vec<u64>>,
    /// Capacities when placing online (None: a single independent workload).
    pub capacity: Option<Vec<u32>>,
    /// Seed for Random.
    pub seed: u64,
}

/// A validated graph job.
pub struct GraphJob {
    /// The topology as given.
    pub spec: String,
    /// The graph (programmable set applied).
    pub graph: Graph,
    /// Algorithm.
    pub algo: Algo,
    /// Parameters.
    pub cfg: ParingConfig,
    /// Coarse-grained routing (no partial aggregation).
    pub coarse: bool,
}

/// `fanin place` after validation.
pub enum PlaceJob {
    /// A tree algorithm.
    Tree(TreeJob),
    /// A graph algorithm.
    Graph(GraphJob),
}

fn tree_algo(a: Algo) -> Option<TreeAlgo> {
    Some(match a {
        Algo::Soar => TreeAlgo::Soar,
        Algo::Smc => TreeAlgo::Smc,
        Algo::Top => TreeAlgo::Top,
        Algo::Max => TreeAlgo::Max,
        Algo::Level => TreeAlgo::Level,
        Algo::Random => TreeAlgo::Random,
        Algo::AllRed => TreeAlgo::AllRed,
        Algo::AllBlue => TreeAlgo::AllBlue,
        _ => return None,
    })
}

impl PlaceArgs {
    /// Validates the flags and loads the topology into a typed job.
    pub fn validate(&self) -> Result<PlaceJob> {
        let most = fanin_proto::wire::MAX_WIRE_ELEMENTS;
        if self.packet_elements == 0 || self.packet_elements > most {
            bail!(
                "--packet-elements {}: must be 1..={most} (at most 256 for an RTL switch)",
                self.packet_elements
            );
        }
        let topo = Topology::load(&self.topology).map_err(|e| anyhow!("--topology: {e}"))?;
        let generated = ["bt:", "sf:", "fat-tree:"]
            .iter()
            .any(|p| self.topology.starts_with(p));
        match (tree_algo(self.algo), topo) {
            (Some(algo), Topology::Tree(mut tree)) => {
                for (flag, set) in [
                    ("--workers", self.workers.is_some()),
                    ("--capacity-gbps", self.capacity_gbps.is_some()),
                    ("--rate-limit-gbps", self.rate_limit_gbps.is_some()),
                    ("--gradient-gb", self.gradient_gb.is_some()),
                    ("--programmable", self.programmable.is_some()),
                    ("--coarse", self.coarse),
                ] {
                    if set {
                        bail!(
                            "{flag} applies to --algo paring|deepsys|atp, not to tree algorithms"
                        );
                    }
                }
                let k = match (self.k, algo) {
                    (Some(k), _) => k,
                    (None, TreeAlgo::AllRed | TreeAlgo::AllBlue) => 0,
                    (None, _) => bail!("--k is required for --algo {}", algo.name()),
                };
                if let Some(r) = &self.rates {
                    if !generated {
                        bail!("--rates applies to generated topologies; a topology file carries its own rates");
                    }
                    RateScheme::parse(r)
                        .map_err(|e| anyhow!("--rates: {e}"))?
                        .apply(&mut tree);
                }
                let w = self.workloads.unwrap_or(1);
                if w == 0 {
                    bail!("--workloads must be at least 1");
                }
                let spec = match (&self.loads, generated) {
                    (Some(_), false) => bail!("--loads applies to generated topologies; a topology file carries its own loads"),
                    (Some(s), true) => Some(LoadSpec::parse(s).map_err(|e| anyhow!(e))?),
                    (None, true) if self.topology.starts_with("bt:") => Some(if w > 1 { LoadSpec::Mixed(4, 6) } else { LoadSpec::Uniform(4, 6) }),
                    (None, _) => None,
                };
                let mut r = rng(self.seed);
                let mut workloads = Vec::new();
                for _ in 0..w {
                    workloads.push(match &spec {
                        Some(s) => s.generate(&tree, &mut r).map_err(|e| anyhow!(e))?,
                        None => tree.loads(),
                    });
                }
                let online = w > 1 || self.switch_capacity.is_some();
                let capacity =
                    online.then(|| capacities(&tree, self.switch_capacity.unwrap_or(u32::MAX)));
                Ok(PlaceJob::Tree(TreeJob {
                    spec: self.topology.clone(),
                    tree,
                    algo,
                    k,
                    workloads,
                    capacity,
                    seed: self.seed,
                }))
            }
            (Some(_), Topology::Graph { .. }) => {
                bail!("--algo {:?} needs a tree topology (a tree file, bt:N or sf:N:SEED); {} is a general graph", self.algo, self.topology)
            }
            (None, Topology::Tree(_)) => bail!(
                "--algo paring|deepsys|atp needs a graph topology (a graph file or fat-tree:K)"
            ),
            (
                None,
                Topology::Graph {
                    mut graph,
                    fat_tree_k,
                },
            ) => {
                for (flag, set) in [
                    ("--k", self.k.is_some()),
                    ("--loads", self.loads.is_some()),
                    ("--rates", self.rates.is_some()),
                    ("--workloads", self.workloads.is_some()),
                ] {
                    if set {
                        bail!(
                            "{flag} applies to tree algorithms, not to --algo paring|deepsys|atp"
                        );
                    }
                }
                let need = |v: &Option<String>, flag: &str| -> Result<Rat> {
                    let s = v
                        .as_ref()
                        .ok_or_else(|| anyhow!("{flag} is required for graph algorithms"))?;
                    parse_positive(s, flag).map_err(|e| anyhow!(e))
                };
                let cfg = ParingConfig {
                    workers: self
                        .workers
                        .ok_or_else(|| anyhow!("--workers is required for graph algorithms"))?,
                    capacity: need(&self.capacity_gbps, "--capacity-gbps")?,
                    rate_limit: need(&self.rate_limit_gbps, "--rate-limit-gbps")?,
                    gradient: need(&self.gradient_gb, "--gradient-gb")?,
                };
                if let Some(m) = self.programmable {
                    let k = fat_tree_k.ok_or_else(|| anyhow!("--programmable applies to fat-tree:K; a graph file marks its programmable switches"))?;
                    let order = programmable_order(&fat_tree(k)?, k);
                    if m > order.len() {
                        bail!(
                            "--programmable {m}: fat-tree:{k} has only {} switches",
                            order.len()
                        );
                    }
                    graph.set_programmable(&order[..m]);
                }
                paring::check(&graph, &cfg)?;
                Ok(PlaceJob::Graph(GraphJob {
                    spec: self.topology.clone(),
                    graph,
                    algo: self.algo,
                    cfg,
                    coarse: self.coarse,
                }))
            }
        }
    }
}

/// Runs `fanin place`: validates, places, prints, and optionally emits configurations.
pub fn run_place(args: &PlaceArgs) -> Result<()> {
    let job = args.validate()?;
    if args.slots == 0 {
        bail!("--slots must be at least 1");
    }
    if args.mode != EmitMode::Static && (args.flush_after == 0 || args.reclaim_after == 0) {
        bail!("--flush-after and --reclaim-after must be at least 1 tick with --mode timeout or dynamic");
    }
    let (flush_after, reclaim_after) = (args.flush_after, args.reclaim_after);
    let opts = EmitOptions {
        slots: args.slots,
        base_port: args.base_port,
        mode: match args.mode {
            EmitMode::Static => fanin_proto::config::Mode::Static,
            EmitMode::Timeout => fanin_proto::config::Mode::Timeout {
                flush_after,
                reclaim_after,
            },
            EmitMode::Dynamic => fanin_proto::config::Mode::Dynamic {
                flush_after,
                reclaim_after,
            },
        },
        trust: if args.no_trust {
            fanin_proto::config::Trust::OFF
        } else if args.no_sessions {
            fanin_proto::config::Trust {
                sessions: false,
                ..fanin_proto::config::Trust::default()
            }
        } else {
            fanin_proto::config::Trust::default()
        },
        packet_elements: args.packet_elements,
    };
    let out = match job {
        PlaceJob::Tree(t) => run_tree(&t, args, &opts)?,
        PlaceJob::Graph(g) => run_graph(&g, args, &opts)?,
    };
    println!("{out}");
    Ok(())
}

fn num(r: &Rat) -> serde_json::Value {
    json!(to_f64(r))
}

fn run_tree(job: &TreeJob, args: &PlaceArgs, opts: &EmitOptions) -> Result<String> {
    let tree = &job.tree;
    let scale = Scale::new(tree)?;
    let ids = |b: &[usize]| {
        b.iter()
            .map(|&v| tree.nodes[v].id.clone())
            .collect::<Vec<_>>()
    };
    let avail: Vec<bool> = tree.nodes.iter().map(|v| v.available).collect();
    let (value, jobs) = match &job.capacity {
        None => {
            let loads = &job.workloads[0];
            let t0 = Instant::now();
            let p = place(job.algo, tree, &scale, loads, &avail, job.k, job.seed)?;
            let secs = t0.elapsed().as_secs_f64();
            let red = place(TreeAlgo::AllRed, tree, &scale, loads, &avail, 0, 0)?;
            let v = json!({
                "algorithm": job.algo.name(), "k": job.k, "topology": job.spec, "switches": tree.len(),
                "servers": loads.iter().sum::<u64>(), "blue": ids(&p.blue),
                "utilization": num(&p.metrics.utilization), "utilization_exact": exact(&p.metrics.utilization),
                "congestion": num(&p.metrics.congestion), "congestion_exact": exact(&p.metrics.congestion),
                "all_red_utilization": num(&red.metrics.utilization), "all_red_congestion": num(&red.metrics.congestion),
                "seconds": secs,
            });
            (v, vec![(0u16, AggTree::from_tree(tree, loads, &p.blue))])
        }
        Some(cap) => {
            let t0 = Instant::now();
            let o = online(tree, &scale, &job.workloads, job.k, cap, job.algo, job.seed)?;
            let secs = t0.elapsed().as_secs_f64();
            let per: Vec<_> = o
                .placements
                .iter()
                .map(|p| json!({"blue": ids(&p.blue), "utilization": num(&p.metrics.utilization), "congestion": num(&p.metrics.congestion)}))
                .collect();
            let v = json!({
                "algorithm": job.algo.name(), "k": job.k, "topology": job.spec, "switches": tree.len(), "workloads": job.workloads.len(),
                "blue": ids(&o.placements.iter().flat_map(|p| p.blue.iter().copied()).collect::<std::collections::BTreeSet<_>>().into_iter().collect::<Vec<_>>()),
                "utilization": num(&o.utilization), "utilization_exact": exact(&o.utilization),
                "congestion": num(&o.congestion), "congestion_exact": exact(&o.congestion),
                "placements": per, "seconds": secs,
            });
            let jobs = o
                .placements
                .iter()
                .zip(&job.workloads)
                .enumerate()
                .map(|(t, (p, l))| (t as u16, AggTree::from_tree(tree, l, &p.blue)))
                .collect();
            (v, jobs)
        }
    };
    let written = emit_if_asked(args, &jobs, opts)?;
    if args.json {
        let mut v = value;
        if let Some(w) = written {
            v["emitted"] = json!(w);
        }
        return Ok(v.to_string());
    }
    let mut rows = vec![
        (
            "algorithm".to_string(),
            value["algorithm"].as_str().unwrap_or("").to_string(),
        ),
        (
            "topology".into(),
            format!(
                "{} ({} switches, height {})",
                job.spec,
                tree.len(),
                tree.height()
            ),
        ),
        ("k".into(), job.k.to_string()),
    ];
    if let Some(w) = value.get("workloads") {
        rows.push(("workloads".into(), w.to_string()));
    } else {
        rows.push(("servers".into(), value["servers"].to_string()));
    }
    let blue: Vec<String> = value["blue"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap().to_string())
        .collect();
    rows.push((
        format!("blue ({})", blue.len()),
        if blue.is_empty() {
            "-".into()
        } else {
            blue.join(" ")
        },
    ));
    rows.push((
        "utilization".into(),
        format!(
            "{} (exact {})",
            value["utilization"],
            value["utilization_exact"].as_str().unwrap()
        ),
    ));
    rows.push((
        "congestion".into(),
        format!(
            "{} (exact {})",
            value["congestion"],
            value["congestion_exact"].as_str().unwrap()
        ),
    ));
    if let Some(u) = value.get("all_red_utilization") {
        rows.push((
            "all-red".into(),
            format!(
                "utilization {u}, congestion {}",
                value["all_red_congestion"]
            ),
        ));
    }
    rows.push((
        "seconds".into(),
        format!("{:.6}", value["seconds"].as_f64().unwrap()),
    ));
    if let Some(w) = written {
        rows.push(("emitted".into(), format!("{} files", w.len())));
    }
    Ok(table(&rows))
}

fn run_graph(job: &GraphJob, args: &PlaceArgs, opts: &EmitOptions) -> Result<String> {
    let g = &job.graph;
    let t0 = Instant::now();
    let p: GraphPlacement = match (job.algo, job.coarse) {
        (Algo::Paring, false) => paring::paring(g, &job.cfg)?,
        (Algo::Paring, true) => paring::paring_coarse(g, &job.cfg)?,
        (Algo::Deepsys, _) => paring::deepsys(g, &job.cfg)?,
        (Algo::Atp, false) => paring::atp(g, &job.cfg)?,
        (Algo::Atp, true) => paring::atp_coarse(g, &job.cfg)?,
        _ => unreachable!("validated"),
    };
    let routing = if job.coarse { "coarse" } else { "fine" };
    let secs = t0.elapsed().as_secs_f64();
    let dist = paring::distances(g);
    let name = |v: usize| g.vertices[v].id.clone();
    let mut edges = Vec::new();
    for a in &p.nodes {
        for (i, &c) in a.children.iter().enumerate() {
            edges.push(json!({"child": name(c), "parent": name(a.vertex), "hops": dist[c][a.vertex], "aggregated": i < a.limit}));
        }
    }
    let aggs: Vec<_> = p.nodes.iter().map(|a| json!({"id": name(a.vertex), "children": a.children.len(), "degree_limit": a.limit})).collect();
    let v = json!({
        "algorithm": p.algorithm, "routing": routing, "topology": job.spec, "ps": name(p.ps), "workers": p.workers.iter().map(|&w| name(w)).collect::<Vec<_>>(),
        "rate_gbps": num(&p.rate), "rate_exact": exact(&p.rate), "hops": p.hops,
        "traffic_gb": num(&p.traffic), "traffic_exact": exact(&p.traffic), "time_s": num(&p.time), "time_exact": exact(&p.time),
        "aggregators": aggs, "tree": edges, "seconds": secs,
    });
    let written = emit_if_asked(args, &[(0, AggTree::from_graph(g, &p))], opts)?;
    if args.json {
        let mut v = v;
        if let Some(w) = written {
            v["emitted"] = json!(w);
        }
        return Ok(v.to_string());
    }
    let mut rows = vec![
        ("algorithm".to_string(), p.algorithm.clone()),
        ("routing".into(), routing.into()),
        (
            "topology".into(),
            format!("{} ({} vertices)", job.spec, g.len()),
        ),
        ("ps".into(), name(p.ps)),
        (
            format!("workers ({})", p.workers.len()),
            p.workers
                .iter()
                .map(|&w| name(w))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        (
            "aggregators".into(),
            p.nodes
                .iter()
                .map(|a| format!("{}:{}/{}", name(a.vertex), a.limit, a.children.len()))
                .collect::<Vec<_>>()
                .join(" "),
        ),
        (
            "rate".into(),
            format!("{} Gbps (exact {})", v["rate_gbps"], exact(&p.rate)),
        ),
        (
            "traffic".into(),
            format!("{} GB ({} hops)", v["traffic_gb"], p.hops),
        ),
        ("time".into(), format!("{} s", v["time_s"])),
        ("seconds".into(), format!("{secs:.6}")),
    ];
    if let Some(w) = written {
        rows.push(("emitted".into(), format!("{} files", w.len())));
    }
    Ok(table(&rows))
}

fn emit_if_asked(
    args: &PlaceArgs,
    jobs: &[(u16, AggTree)],
    opts: &EmitOptions,
) -> Result<Option<Vec<String>>> {
    let Some(dir) = &args.emit_config else {
        return Ok(None);
    };
    let e = emit::emit(jobs, opts).context("--emit-config")?;
    Ok(Some(emit::write(dir, &e).context("--emit-config")?))
}

/// Two-column text table.
pub fn table(rows: &[(String, String)]) -> String {
    let w = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    rows.iter()
        .map(|(a, b)| format!("{a:<w$}  {b}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// Runs `fanin experiment`.
pub fn run_experiment(args: &ExperimentArgs) -> Result<()> {
    if args.reps == 0 {
        bail!("--reps must be at least 1");
    }
    let summary = crate::experiment::run(args.name, &args.out, args.reps, args.seed)?;
    println!("{summary}");
    Ok(())
}
