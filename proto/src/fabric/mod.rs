//! A seeded, packet-level discrete-event simulator of a leaf–spine fabric that runs the
//! reference model ([`crate::model::Switch`]) at every switch.
//!
//! Every leaf has `hosts_per_leaf` hosts and one uplink to each spine. Links have a bandwidth
//! and a propagation delay; every switch port has a finite drop-tail output queue. Leaves
//! apply Canary's up-port rule to packets for hosts and leaves: the model's forwarding table
//! gives the default up-port, and if that port's queue is over half full (or its path is down)
//! the packet leaves on the live up-port with the fewest queued bytes (a result sent down a
//! recorded port keeps it). Hosts outside the allreduce send background traffic, a random
//! derangement of them per message round, optionally for a warm-up before the allreduces
//! start; participating hosts may delay each
//! packet (noise); links lose, duplicate and delay frames as the shared seeded fault model
//! ([`crate::fault`]) decides, and links and spines can fail. Schemes run in the same
//! fabric: Canary (dynamic mode), one or several static trees (block `b` on tree `b mod n`),
//! and a host ring.
//!
//! The event queue is a `BinaryHeap` ordered by (time, sequence number), like
//! [`crate::netsim`]; docs/protocol.md ("Fabric simulator") says why no crate is used.

mod hosts;

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use core::net::Ipv4Addr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::{Child, Endpoint, JobEntry, Mode, Params, Role, Route, SwitchConfig, Trust};
use crate::fault::{FaultSpec, Faults as FaultModel};
use crate::model::Switch;
use crate::wire::{frame::classify, FrameKind, FANIN_UDP_PORT};

pub use hosts::HostStats;

/// The fabric's shape and link parameters (times in nanoseconds).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fabric {
    /// Leaf switches.
    pub leaves: usize,
    /// Hosts below each leaf.
    pub hosts_per_leaf: usize,
    /// Spine switches (each leaf has one uplink to each).
    pub spines: usize,
    /// Link bandwidth in Gbit/s (bits per nanosecond).
    pub gbps: u64,
    /// Propagation delay of every link.
    pub prop_ns: u64,
    /// Capacity of each switch output queue, in bytes (drop-tail).
    pub queue_bytes: usize,
}

impl Fabric {
    /// Number of hosts.
    pub fn hosts(&self) -> usize {
        self.leaves * self.hosts_per_leaf
    }

    fn ser_ns(&self, bytes: usize) -> u64 {
        ((bytes as u64 * 8).div_ceil(self.gbps)).max(1)
    }
}

/// How the allreduce runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    /// Canary: dynamic mode, leader host `block mod n`, flush after `flush_ns`.
    Canary {
        /// Flush timeout of a switch's copy.
        flush_ns: u64,
    },
    /// Static trees rooted at spines `root, root+1, ...`: block `b` runs on tree `b mod trees`.
    Static {
        /// Number of trees (1: today's single tree).
        trees: usize,
    },
    /// Host-based ring allreduce (reduce-scatter then allgather), no switch aggregation.
    Ring,
}

/// One allreduce job.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Job {
    /// Job id (static trees use ids `job .. job + trees`).
    pub job: u16,
    /// Participating hosts, by rank (at most 64, distinct).
    pub hosts: Vec<usize>,
    /// int32 elements per host.
    pub elements: usize,
    /// First spine used as a static root (static trees use `root_spine + t mod spines`).
    pub root_spine: usize,
}

/// Background traffic and host noise.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Load {
    /// Offered load of each non-participating host, as a fraction of its link (0: none).
    pub background: f64,
    /// Packets per background message. Messages go in rounds: in round `k` every background
    /// host sends its `k`-th message to its image under the round's random derangement of
    /// the background hosts, so each sends to one random host and receives from another
    /// (Canary, Sect. 5.2), and every host changes peer each round.
    pub message_packets: u32,
    /// Probability that a participating host delays a packet by `noise_ns`.
    pub noise_prob: f64,
    /// Delay of a noisy packet.
    pub noise_ns: u64,
    /// Time the background runs alone before the allreduces start, so that they start in a
    /// network already congested (their times are measured from it).
    pub warmup_ns: u64,
}

impl Default for Load {
    fn default() -> Self {
        Self {
            background: 0.0,
            message_packets: 64,
            noise_prob: 0.0,
            noise_ns: 1000,
            warmup_ns: 0,
        }
    }
}

/// Faults injected into the fabric.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Faults {
    /// Loss, duplication and reordering of every frame on every link (a held-back copy
    /// arrives `hold` ns late; [`FaultSpec::jitter`] gives a uniform extra delay).
    pub frames: FaultSpec,
    /// Leaf–spine links that fail: `(time, leaf, spine)`.
    pub link_down: Vec<(u64, usize, usize)>,
    /// Spines that fail, losing their state: `(time, spine)`.
    pub spine_down: Vec<(u64, usize)>,
}

/// A whole run: fabric, jobs, scheme, load, faults, seed and limits.
#[derive(Debug, Clone, PartialEq)]
pub struct Run {
    /// The fabric.
    pub fabric: Fabric,
    /// The allreduce jobs (disjoint hosts).
    pub jobs: Vec<Job>,
    /// The scheme every job uses.
    pub scheme: Scheme,
    /// int32 elements per packet (the switch's lanes).
    pub packet_elements: u16,
    /// Blocks a host may have outstanding (sent, result not yet received).
    pub window: u32,
    /// Background traffic and noise.
    pub load: Load,
    /// Faults.
    pub faults: Faults,
    /// Host retransmission timeout (doubles per retry, up to 8x).
    pub rto_ns: u64,
    /// Simulated time after which the run gives up.
    pub limit_ns: u64,
    /// Seed of every random choice.
    pub seed: u64,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    /// True if every job's every host finished before the limit.
    pub finished: bool,
    /// Per job: the time its last host finished (ns, from the allreduces' start after the
    /// warm-up), or the limit.
    pub job_ns: Vec<u64>,
    /// Per job: true if every host ended with the exact sum of every block.
    pub exact: Vec<bool>,
    /// Frames dropped by full output queues.
    pub queue_drops: u64,
    /// Of those, dropped at leaf uplinks, spine downlinks, and leaf ports to hosts.
    pub drops_at: [u64; 3],
    /// Frames lost to link faults or failed links/switches.
    pub lost: u64,
    /// Host-side figures summed over every participating host.
    pub hosts: HostStats,
    /// Switch counters summed over all switches: aggregated, timeouts, straggler forwards,
    /// collision bypasses.
    pub switch: SwitchStats,
    /// Bytes carried per link direction, for utilisation: (leaf→spine, spine→leaf).
    pub uplink_bytes: (u64, u64),
}

/// Selected switch counters summed over the fabric.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct SwitchStats {
    /// Contributions added into a slot copy.
    pub aggregated: u64,
    /// Copies flushed by their timer.
    pub timeouts: u64,
    /// Stragglers forwarded without BYPASS.
    pub stragglers: u64,
    /// Contributions sent on with BYPASS because of a collision or quota.
    pub collisions: u64,
}

impl Outcome {
    /// Goodput of job `j` in Gbit/s: its per-host data over its completion time.
    pub fn goodput_gbps(&self, run: &Run, j: usize) -> f64 {
        let bytes = run.jobs[j].elements as f64 * 4.0;
        bytes * 8.0 / self.job_ns[j].max(1) as f64
    }
}

/// Why a run cannot start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RunError {
    /// The fabric or run parameters are out of range.
    #[error("fabric run: {0}")]
    Bad(String),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NodeId {
    Switch(usize),
    Host(usize),
}

#[derive(Debug)]
enum Ev {
    /// A frame arrives at a node's port.
    Arrive(NodeId, u8, Vec<u8>),
    /// A node's port finished serialising its head frame.
    TxDone(NodeId, u8),
    /// A host's NIC may send again (after noise).
    Wake(usize),
    /// A host's retransmission check.
    Retx(usize),
    /// A background host generates a packet.
    Gen(usize),
    /// A switch runs its timer scan.
    Tick(usize),
    /// A leaf–spine link fails.
    LinkDown(usize, usize),
    /// A spine fails.
    SpineDown(usize),
}

struct Entry {
    time: u64,
    seq: u64,
    ev: Ev,
}

impl PartialEq for Entry {
    fn eq(&self, o: &Self) -> bool {
        (self.time, self.seq) == (o.time, o.seq)
    }
}
impl Eq for Entry {}
impl PartialOrd for Entry {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Entry {
    fn cmp(&self, o: &Self) -> Ordering {
        (o.time, o.seq).cmp(&(self.time, self.seq))
    }
}

/// One output queue of a port.
#[derive(Debug, Default)]
struct Port {
    queue: VecDeque<Vec<u8>>,
    bytes: usize,
    busy: bool,
}

struct SwitchNode {
    model: Switch,
    cfg: SwitchConfig,
    ports: Vec<Port>,
    tick_armed: bool,
}

/// The address of host `h`.
pub fn host_ip(f: &Fabric, h: usize) -> Ipv4Addr {
    let l = h / f.hosts_per_leaf;
    let i = h % f.hosts_per_leaf;
    Ipv4Addr::new(10, (l >> 8) as u8, l as u8, i as u8 + 1)
}

/// The MAC of host `h`.
pub fn host_mac(h: usize) -> [u8; 6] {
    [2, 0, 0, 1, (h >> 8) as u8, h as u8]
}

fn switch_ip(sw: usize) -> Ipv4Addr {
    Ipv4Addr::new(10, 200, (sw >> 8) as u8, sw as u8 + 1)
}

fn switch_mac(sw: usize) -> [u8; 6] {
    [2, 0, 0, 2, (sw >> 8) as u8, sw as u8]
}

/// The simulator state.
pub struct Sim {
    run: Run,
    now: u64,
    seq: u64,
    queue: BinaryHeap<Entry>,
    rng: ChaCha8Rng,
    /// Frame faults, seeded with the run's seed (on the fault model's own stream).
    faults: FaultModel,
    switches: Vec<SwitchNode>,
    hosts: Vec<hosts::Host>,
    /// `up[l][s]`: the link between leaf `l` and spine `s` works.
    up: Vec<Vec<bool>>,
    spine_alive: Vec<bool>,
    tick_ns: Option<u64>,
    background_hosts: Vec<usize>,
    queue_drops: u64,
    drops_at: [u64; 3],
    lost: u64,
    uplink_bytes: (u64, u64),
}

impl Sim {
    /// Builds the fabric, the switch configurations and the hosts of `run`.
    pub fn new(run: Run) -> Result<Self, RunError> {
        let f = run.fabric;
        let bad = |s: String| Err(RunError::Bad(s));
        if f.leaves == 0 || f.spines == 0 || f.hosts_per_leaf == 0 {
            return bad("leaves, spines and hosts per leaf must be at least 1".into());
        }
        if f.hosts_per_leaf + f.spines > 64 || f.leaves > 64 {
            return bad("a switch has at most 64 ports".into());
        }
        if f.gbps == 0 || f.queue_bytes < 2048 {
            return bad("links need a bandwidth and queues at least 2 KiB".into());
        }
        if run.window == 0 || !run.window.is_power_of_two() {
            return bad(format!("window {} must be a power of two", run.window));
        }
        let mut seen = vec![false; f.hosts()];
        for j in &run.jobs {
            // Static trees use header version 1 (64 ranks); Canary and the ring take up to
            // MAX_RANKS (Canary's jobs of more than 64 ranks use header version 2).
            let most = match run.scheme {
                Scheme::Static { .. } => crate::wire::MAX_WORKERS,
                _ => crate::wire::MAX_RANKS,
            };
            if j.hosts.len() < 2 || j.hosts.len() > most as usize {
                return bad(format!(
                    "job {}: {} hosts; this scheme takes 2..={most}",
                    j.job,
                    j.hosts.len()
                ));
            }
            for &h in &j.hosts {
                if h >= f.hosts() || seen[h] {
                    return bad(format!("job {}: host {h} missing or shared", j.job));
                }
                seen[h] = true;
            }
            if j.elements == 0 {
                return bad(format!("job {}: no elements", j.job));
            }
        }
        let configs = configs(&run)?;
        let tick_ns = match run.scheme {
            Scheme::Canary { flush_ns } => Some((flush_ns / 8).max(10)),
            _ => None,
        };
        let faults = FaultModel::new(run.faults.frames, run.seed)
            .map_err(|e| RunError::Bad(e.to_string()))?;
        let mut rng = ChaCha8Rng::seed_from_u64(run.seed);
        let switches = configs
            .into_iter()
            .map(|cfg| {
                let n = cfg.params.ports as usize;
                Ok(SwitchNode {
                    model: Switch::new(&cfg).map_err(|e| RunError::Bad(e.to_string()))?,
                    cfg,
                    ports: (0..n).map(|_| Port::default()).collect(),
                    tick_armed: false,
                })
            })
            .collect::<Result<Vec<_>, RunError>>()?;
        let hosts = hosts::build(&run, &mut rng);
        let mut sim = Self {
            now: 0,
            seq: 0,
            queue: BinaryHeap::new(),
            rng,
            faults,
            switches,
            hosts,
            up: vec![vec![true; f.spines]; f.leaves],
            spine_alive: vec![true; f.spines],
            tick_ns,
            background_hosts: Vec::new(),
            queue_drops: 0,
            drops_at: [0; 3],
            lost: 0,
            uplink_bytes: (0, 0),
            run,
        };
        sim.background_hosts = (0..sim.hosts.len())
            .filter(|&h| sim.hosts[h].background)
            .collect();
        for (i, &h) in sim.background_hosts.iter().enumerate() {
            sim.hosts[h].bg_index = i;
        }
        for h in 0..sim.hosts.len() {
            if sim.hosts[h].background && sim.background_hosts.len() > 1 {
                if sim.run.load.background > 0.0 {
                    let t = sim.rng.gen_range(0..1000);
                    sim.push(t, Ev::Gen(h));
                }
            } else if sim.hosts[h].participant() {
                sim.push(sim.run.load.warmup_ns, Ev::Wake(h));
            }
        }
        for &(t, l, s) in &sim.run.faults.link_down.clone() {
            sim.push(t, Ev::LinkDown(l, s));
        }
        for &(t, s) in &sim.run.faults.spine_down.clone() {
            sim.push(t, Ev::SpineDown(s));
        }
        Ok(sim)
    }

    fn push(&mut self, time: u64, ev: Ev) {
        self.seq += 1;
        self.queue.push(Entry {
            time,
            seq: self.seq,
            ev,
        });
    }

    /// Runs until every job finished or the limit, and checks every host's sums.
    pub fn run(mut self) -> Outcome {
        while let Some(e) = self.queue.pop() {
            if e.time > self.run.limit_ns {
                break;
            }
            self.now = e.time;
            self.step(e.ev);
            if self.hosts.iter().all(|h| !h.participant() || h.finished()) {
                break;
            }
        }
        let start = self.run.load.warmup_ns;
        let mut job_ns = vec![0; self.run.jobs.len()];
        let mut exact = vec![true; self.run.jobs.len()];
        let mut finished = true;
        let mut stats = HostStats::default();
        for h in &self.hosts {
            let Some(j) = h.job else { continue };
            stats.add(&h.stats);
            match h.done_at {
                Some(t) => job_ns[j] = job_ns[j].max(t.saturating_sub(start)),
                None => {
                    finished = false;
                    job_ns[j] = self.run.limit_ns.saturating_sub(start);
                }
            }
            exact[j] &= h.exact(&self.run);
        }
        let mut sw = SwitchStats::default();
        for s in &self.switches {
            use crate::model::Counter as C;
            let c = s.model.counters();
            sw.aggregated += c.get(C::Aggregated);
            sw.timeouts += c.get(C::Timeouts);
            sw.stragglers += c.get(C::BypassStraggler);
            sw.collisions += c.get(C::BypassCollision) + c.get(C::BypassQuota);
        }

        Outcome {
            finished,
            job_ns,
            exact,
            queue_drops: self.queue_drops,
            drops_at: self.drops_at,
            lost: self.lost,
            hosts: stats,
            switch: sw,
            uplink_bytes: self.uplink_bytes,
        }
    }

    fn step(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive(NodeId::Switch(s), port, frame) => self.switch_rx(s, port, frame),
            Ev::Arrive(NodeId::Host(h), _, frame) => {
                let out = hosts::receive(self, h, &frame);
                for f in out {
                    self.host_enqueue(h, f, true);
                }
            }
            Ev::TxDone(node, port) => self.tx_done(node, port),
            Ev::Wake(h) => {
                self.hosts[h].sleeping = false;
                self.host_pump(h);
            }
            Ev::Retx(h) => {
                let out = hosts::retransmit(self, h);
                for f in out {
                    self.host_enqueue(h, f, true);
                }
            }
            Ev::Gen(h) => self.background(h),
            Ev::Tick(s) => {
                self.switches[s].tick_armed = false;
                let out = self.switches[s].model.tick(self.now);
                for o in out {
                    self.switch_tx(s, o.port, o.frame);
                }
                self.arm_tick(s);
            }
            Ev::LinkDown(l, s) => self.link_down(l, s),
            Ev::SpineDown(s) => {
                self.spine_alive[s] = false;
                for l in 0..self.run.fabric.leaves {
                    self.link_down(l, s);
                }
                let sw = self.run.fabric.leaves + s;
                let cfg = self.switches[sw].cfg.clone();
                self.switches[sw].model = Switch::new(&cfg).expect("validated before");
            }
        }
    }

    fn link_down(&mut self, l: usize, s: usize) {
        let f = self.run.fabric;
        self.up[l][s] = false;
        let leaf_port = &mut self.switches[l].ports[f.hosts_per_leaf + s];
        self.lost += leaf_port.queue.len() as u64;
        leaf_port.queue.clear();
        leaf_port.bytes = 0;
        let spine_port = &mut self.switches[f.leaves + s].ports[l];
        self.lost += spine_port.queue.len() as u64;
        spine_port.queue.clear();
        spine_port.bytes = 0;
    }

    fn arm_tick(&mut self, s: usize) {
        let Some(t) = self.tick_ns else { return };
        let sw = &mut self.switches[s];
        if !sw.tick_armed && sw.model.counters().get(crate::model::Counter::SlotsInUse) > 0 {
            sw.tick_armed = true;
            self.push(self.now + t, Ev::Tick(s));
        }
    }

    fn switch_rx(&mut self, s: usize, port: u8, frame: Vec<u8>) {
        let r = self.switches[s].model.handle(self.now, port, &frame);
        for o in r.outputs {
            self.switch_tx(s, o.port, o.frame);
        }
        self.arm_tick(s);
    }

    /// Queues a frame at switch `s`, applying the up-port rule at leaves.
    fn switch_tx(&mut self, s: usize, port: u8, frame: Vec<u8>) {
        let f = self.run.fabric;
        let mut port = port as usize;
        if s < f.leaves && port >= f.hosts_per_leaf {
            port = self.up_port(s, port - f.hosts_per_leaf, &frame) + f.hosts_per_leaf;
        }
        self.enqueue(NodeId::Switch(s), port, frame);
    }

    /// Canary's rule: the default up-port unless its queue is over half full or its path is
    /// down; then the live up-port with the fewest queued bytes. Frames for a spine's own
    /// address (static trees) keep their port, and so do results sent to [`BROADCAST`]: the
    /// model sends those down the ports it recorded (a leader's leaf sends them *up* to the
    /// spines its stragglers came from), and only the switch behind that port holds the
    /// copy that passes the result on; a result sent elsewhere is a duplicate there, and the
    /// hosts below the recorded switch wait for their retransmission timeout.
    ///
    /// [`BROADCAST`]: crate::model::dynamic::BROADCAST
    fn up_port(&self, leaf: usize, default: usize, frame: &[u8]) -> usize {
        let f = self.run.fabric;
        let FrameKind::Ipv4 { dst, .. } = classify(frame) else {
            return default;
        };
        if dst == crate::model::dynamic::BROADCAST {
            return default;
        }
        let target_leaf = self.leaf_of(dst);
        if target_leaf.is_none() {
            return default;
        }
        let live = |s: usize| {
            self.up[leaf][s] && target_leaf.is_none_or(|t| t >= f.leaves || self.up[t][s])
        };
        let q = |s: usize| self.switches[leaf].ports[f.hosts_per_leaf + s].bytes;
        if live(default) && q(default) * 2 <= f.queue_bytes {
            return default;
        }
        (0..f.spines)
            .filter(|&s| live(s))
            .min_by_key(|&s| (q(s), s))
            .unwrap_or(default)
    }

    /// The leaf an address is under (hosts and leaves; `leaves` for broadcast), or `None`
    /// for a spine's address.
    fn leaf_of(&self, ip: Ipv4Addr) -> Option<usize> {
        let f = self.run.fabric;
        let o = ip.octets();
        if ip == crate::model::dynamic::BROADCAST {
            return Some(f.leaves);
        }
        if o[0] == 10 && o[1] == 200 {
            let sw = (o[2] as usize) << 8 | (o[3] as usize - 1);
            return (sw < f.leaves).then_some(sw);
        }
        Some(((o[1] as usize) << 8 | o[2] as usize).min(f.leaves))
    }

    fn enqueue(&mut self, node: NodeId, port: usize, frame: Vec<u8>) {
        let f = self.run.fabric;
        let cap = f.queue_bytes;
        let p = match node {
            NodeId::Switch(s) => &mut self.switches[s].ports[port],
            NodeId::Host(h) => &mut self.hosts[h].nic,
        };
        if let NodeId::Switch(s) = node {
            if p.bytes + frame.len() > cap {
                self.queue_drops += 1;
                let at = if s >= f.leaves {
                    1
                } else if port >= f.hosts_per_leaf {
                    0
                } else {
                    2
                };
                self.drops_at[at] += 1;
                return;
            }
        }
        p.bytes += frame.len();
        p.queue.push_back(frame);
        if !p.busy {
            self.start_tx(node, port);
        }
    }

    fn start_tx(&mut self, node: NodeId, port: usize) {
        let f = self.run.fabric;
        let p = match node {
            NodeId::Switch(s) => &mut self.switches[s].ports[port],
            NodeId::Host(h) => &mut self.hosts[h].nic,
        };
        let Some(fr) = p.queue.front() else {
            p.busy = false;
            return;
        };
        p.busy = true;
        let t = self.now + f.ser_ns(fr.len() + 24);
        self.push(t, Ev::TxDone(node, port as u8));
    }

    fn tx_done(&mut self, node: NodeId, port: u8) {
        let f = self.run.fabric;
        let p = match node {
            NodeId::Switch(s) => &mut self.switches[s].ports[port as usize],
            NodeId::Host(h) => &mut self.hosts[h].nic,
        };
        let Some(frame) = p.queue.pop_front() else {
            // The link failed while the frame was in flight: its queue was dropped.
            p.busy = false;
            return;
        };
        p.bytes -= frame.len();
        p.busy = false;
        if !p.queue.is_empty() {
            self.start_tx(node, port as usize);
        }
        let peer = self.peer(node, port as usize);
        match peer {
            Some((to, to_port)) => {
                if let (NodeId::Switch(a), NodeId::Switch(_)) = (node, to) {
                    if a < f.leaves {
                        self.uplink_bytes.0 += frame.len() as u64;
                    } else {
                        self.uplink_bytes.1 += frame.len() as u64;
                    }
                }
                self.deliver(to, to_port, frame);
            }
            None => self.lost += 1,
        }
        if let NodeId::Host(h) = node {
            self.host_pump(h);
        }
    }

    /// The other end of a port, or `None` if the link is down.
    fn peer(&self, node: NodeId, port: usize) -> Option<(NodeId, u8)> {
        let f = self.run.fabric;
        match node {
            NodeId::Host(h) => Some((
                NodeId::Switch(h / f.hosts_per_leaf),
                (h % f.hosts_per_leaf) as u8,
            )),
            NodeId::Switch(l) if l < f.leaves => {
                if port < f.hosts_per_leaf {
                    Some((NodeId::Host(l * f.hosts_per_leaf + port), 0))
                } else {
                    let s = port - f.hosts_per_leaf;
                    self.up[l][s].then_some((NodeId::Switch(f.leaves + s), l as u8))
                }
            }
            NodeId::Switch(sw) => {
                let s = sw - f.leaves;
                (port < f.leaves && self.up[port][s])
                    .then_some((NodeId::Switch(port), (f.hosts_per_leaf + s) as u8))
            }
        }
    }

    fn deliver(&mut self, to: NodeId, port: u8, frame: Vec<u8>) {
        let fate = self.faults.fate();
        if fate.lost() {
            self.lost += 1;
        }
        for &hold in fate.holds() {
            let t = self.now + self.run.fabric.prop_ns + hold;
            self.push(t, Ev::Arrive(to, port, frame.clone()));
        }
    }

    /// Queues a frame at host `h`'s NIC (urgent frames go before new blocks).
    fn host_enqueue(&mut self, h: usize, frame: Vec<u8>, _urgent: bool) {
        self.hosts[h].urgent.push_back(frame);
        self.host_pump(h);
    }

    /// Feeds host `h`'s NIC when it is idle: urgent frames, then the next new block.
    fn host_pump(&mut self, h: usize) {
        let host = &self.hosts[h];
        if host.nic.busy || host.sleeping || !host.nic.queue.is_empty() {
            return;
        }
        let frame = match self.hosts[h].urgent.pop_front() {
            Some(f) => Some(f),
            None => hosts::next_block(self, h),
        };
        let Some(frame) = frame else { return };
        let load = self.run.load;
        if self.hosts[h].participant()
            && load.noise_prob > 0.0
            && self.rng.gen_bool(load.noise_prob)
        {
            // Host noise: this packet leaves `noise_ns` late.
            self.hosts[h].sleeping = true;
            self.hosts[h].urgent.push_front(frame);
            self.hosts[h].stats.noisy += 1;
            self.push(self.now + load.noise_ns, Ev::Wake(h));
            return;
        }
        self.enqueue(NodeId::Host(h), 0, frame);
    }

    fn background(&mut self, h: usize) {
        let f = self.run.fabric;
        let load = self.run.load;
        let host = &mut self.hosts[h];
        if host.bg_left == 0 {
            // Round `bg_round` of this host: its peer under that round's derangement.
            let n = self.background_hosts.len();
            if n < 2 {
                return;
            }
            let i = host.bg_index;
            host.bg_peer = self.background_hosts[derangement(self.run.seed, host.bg_round, n)[i]];
            host.bg_round += 1;
            host.bg_left = load.message_packets.max(1);
        }
        host.bg_left -= 1;
        let size = self.run.packet_elements as usize * 4 + 22;
        let frame = crate::wire::Datagram {
            src: crate::wire::L4Addr {
                mac: host_mac(h),
                ip: host_ip(&f, h),
                port: 7000,
            },
            dst: crate::wire::L4Addr {
                mac: host_mac(host.bg_peer),
                ip: host_ip(&f, host.bg_peer),
                port: 7000,
            },
            payload: &vec![0u8; size],
        }
        .to_frame(false);
        let len = frame.len();
        // A background host never queues more than a few packets: beyond that it is
        // back-pressured (its offered load is a ceiling, not a queue).
        if self.hosts[h].nic.queue.len() < 4 {
            self.enqueue(NodeId::Host(h), 0, frame);
        }
        let gap = (f.ser_ns(len + 24) as f64 / load.background) as u64;
        let gap = self.rng.gen_range(gap / 2..=gap + gap / 2).max(1);
        self.push(self.now + gap, Ev::Gen(h));
    }
}

/// Round `round`'s random derangement of `0..n` (`n >= 2`): seeded by the run's seed and the
/// round, so every background host of the round draws from the same permutation.
fn derangement(seed: u64, round: u32, n: usize) -> Vec<usize> {
    use rand::seq::SliceRandom;
    let mut rng = ChaCha8Rng::seed_from_u64(seed ^ 0xb4c6_0000_0000_0000 ^ (round as u64) << 8);
    let mut p: Vec<usize> = (0..n).collect();
    p.shuffle(&mut rng);
    // A fixed point swaps with its neighbour: the swap leaves neither fixed.
    for i in 0..n {
        if p[i] == i {
            let k = (i + 1) % n;
            p.swap(i, k);
        }
    }
    p
}

/// Every switch's configuration for `run`: forwarding tables and the job entries the scheme
/// needs (switches `0..leaves` are leaves, then the spines).
#[allow(clippy::needless_range_loop)]
fn configs(run: &Run) -> Result<Vec<SwitchConfig>, RunError> {
    let f = run.fabric;
    let n = f.leaves + f.spines;
    let ports = (f.hosts_per_leaf + f.spines).max(f.leaves) as u8;
    let slot_count = run.window.max(4);
    let trees = match run.scheme {
        Scheme::Static { trees } => trees.clamp(1, f.spines),
        _ => 1,
    };
    let jobs_per_switch = run.jobs.len() * trees;
    let params = Params {
        slots: (slot_count as usize * jobs_per_switch.max(1)) as u32,
        elements: run.packet_elements,
        max_jobs: jobs_per_switch.max(1) as u16,
        max_children: 64,
        max_routes: (f.hosts() + n + 1) as u16,
        ports,
    };
    let mut cfgs: Vec<SwitchConfig> = (0..n)
        .map(|sw| {
            let mut c = SwitchConfig::new(&format!("sw{sw}"), switch_mac(sw), switch_ip(sw));
            c.params = params;
            c
        })
        .collect();
    for (sw, c) in cfgs.iter_mut().enumerate() {
        for h in 0..f.hosts() {
            let l = h / f.hosts_per_leaf;
            let port = if sw < f.leaves {
                if l == sw {
                    h % f.hosts_per_leaf
                } else {
                    f.hosts_per_leaf + h % f.spines
                }
            } else {
                l
            };
            c.routes.push(Route {
                ip: host_ip(&f, h),
                port: port as u8,
            });
        }
        for other in 0..n {
            if other == sw {
                continue;
            }
            let port = match (sw < f.leaves, other < f.leaves) {
                (true, true) => f.hosts_per_leaf + other % f.spines,
                (true, false) => f.hosts_per_leaf + (other - f.leaves),
                (false, true) => other,
                (false, false) => continue,
            };
            c.routes.push(Route {
                ip: switch_ip(other),
                port: port as u8,
            });
        }
    }
    let leaf_ep = |l: usize, port: usize| Endpoint {
        mac: switch_mac(l),
        ip: switch_ip(l),
        udp_port: FANIN_UDP_PORT,
        port: port as u8,
    };
    for (ji, job) in run.jobs.iter().enumerate() {
        let all = crate::wire::RankSet::first(job.hosts.len() as u32);
        let ranks = all.0[0];
        let last = all.0.iter().rposition(|&w| w != 0).unwrap_or(0);
        let ranks_hi = all.0[1..=last].to_vec();
        match run.scheme {
            Scheme::Ring => {}
            Scheme::Canary { flush_ns } => {
                let e = JobEntry {
                    job: job.job,
                    role: Role::Root,
                    mode: Mode::Dynamic {
                        flush_after: flush_ns,
                        reclaim_after: run.rto_ns * 4,
                    },
                    degree_limit: 1,
                    children: vec![],
                    ranks,
                    ranks_hi: ranks_hi.clone(),
                    slot_base: ji as u32 * slot_count,
                    slot_count,
                    quota: 0,
                    trust: Trust::OFF,
                };
                for c in cfgs.iter_mut() {
                    c.jobs.push(e.clone());
                }
            }
            Scheme::Static { .. } => {
                for t in 0..trees {
                    let id = job.job + t as u16;
                    let spine = (job.root_spine + t) % f.spines;
                    let base = ((ji * trees + t) as u32) * slot_count;
                    let mut leaf_children = Vec::new();
                    for l in 0..f.leaves {
                        let mine: Vec<(usize, usize)> = job
                            .hosts
                            .iter()
                            .enumerate()
                            .filter(|(_, &h)| h / f.hosts_per_leaf == l)
                            .map(|(r, &h)| (r, h))
                            .collect();
                        if mine.is_empty() {
                            continue;
                        }
                        let children: Vec<Child> = mine
                            .iter()
                            .map(|&(r, h)| Child {
                                endpoint: Endpoint {
                                    mac: host_mac(h),
                                    ip: host_ip(&f, h),
                                    udp_port: FANIN_UDP_PORT,
                                    port: (h % f.hosts_per_leaf) as u8,
                                },
                                ranks: 1 << r,
                                below: 0,
                            })
                            .collect();
                        let lranks = children.iter().fold(0, |m, c| m | c.ranks);
                        cfgs[l].jobs.push(JobEntry {
                            job: id,
                            role: Role::Inner {
                                parent: Endpoint {
                                    mac: switch_mac(f.leaves + spine),
                                    ip: switch_ip(f.leaves + spine),
                                    udp_port: FANIN_UDP_PORT,
                                    port: (f.hosts_per_leaf + spine) as u8,
                                },
                                index_at_parent: leaf_children.len() as u8,
                            },
                            mode: Mode::Static,
                            degree_limit: children.len() as u8,
                            children,
                            ranks: lranks,
                            ranks_hi: vec![],
                            slot_base: base,
                            slot_count,
                            quota: 0,
                            trust: Trust::OFF,
                        });
                        leaf_children.push(Child {
                            endpoint: leaf_ep(l, l),
                            ranks: lranks,
                            below: 0,
                        });
                    }
                    cfgs[f.leaves + spine].jobs.push(JobEntry {
                        job: id,
                        role: Role::Root,
                        mode: Mode::Static,
                        degree_limit: leaf_children.len() as u8,
                        children: leaf_children,
                        ranks,
                        ranks_hi: vec![],
                        slot_base: base,
                        slot_count,
                        quota: 0,
                        trust: Trust::OFF,
                    });
                }
            }
        }
    }
    for c in &cfgs {
        c.validate().map_err(|e| RunError::Bad(e.to_string()))?;
    }
    Ok(cfgs)
}

/// Runs `run` and returns its outcome.
pub fn simulate(run: Run) -> Result<Outcome, RunError> {
    Ok(Sim::new(run)?.run())
}

#[cfg(test)]
mod tests;
