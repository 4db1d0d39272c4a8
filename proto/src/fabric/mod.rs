//! A seeded, packet-level discrete-event simulator of a leaf–spine fabric that runs the
//! reference model ([`crate::model::Switch`]) at every switch.
//!
//! Every leaf has `hosts_per_leaf` hosts and one uplink to each spine. Links have a bandwidth
//! and a propagation delay; links are drop-tail (every switch port has a finite output
//! queue) or lossless (credit-based flow control, [`Flow`], module `flow`). Leaves
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

mod configs;
mod flow;
mod hosts;
mod links;

use std::cmp::Ordering;
use std::collections::{BinaryHeap, VecDeque};

use core::net::Ipv4Addr;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::config::SwitchConfig;
use crate::fault::{FaultSpec, Faults as FaultModel};
use crate::model::Switch;
use crate::wire::{frame::classify, FrameKind};

use configs::configs;
pub use flow::Flow;
use flow::{Holds, Queued};
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
    /// Buffer per switch port, in bytes: each output queue's capacity (drop-tail), or the
    /// receiving switch's buffer per ingress link, which is the sender's credit (lossless).
    pub queue_bytes: usize,
    /// Link-level flow control: drop-tail queues or lossless credits.
    pub flow: Flow,
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
    /// Lossless: times a head frame waited for credit, at host NICs, leaf uplinks and spine
    /// downlinks (one per wait, however long).
    pub stalls_at: [u64; 3],
    /// Lossless: the most bytes any switch held for one ingress link (at most `queue_bytes`).
    pub peak_ingress_bytes: usize,
    /// The most bytes queued at one port: leaf uplinks, spine downlinks, leaf ports to hosts.
    pub peak_queue: [usize; 3],
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
    /// A frame arrives at a node's port; true if it holds the sender's credit (lossless).
    Arrive(NodeId, u8, Vec<u8>, bool),
    /// Credit for a node's port comes back from the switch at the link's other end.
    Credit(NodeId, u8, usize),
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
    queue: VecDeque<Queued>,
    bytes: usize,
    busy: bool,
    /// Lossless: bytes the receiver can take (`usize::MAX`: unlimited).
    credit: usize,
    /// Lossless: the head frame waits for credit (counted once per wait).
    stalled: bool,
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
    holds: Holds,
    stalls_at: [u64; 3],
    peak_queue: [usize; 3],
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
        // The largest frame: a version-2 header (86 bytes) and the lanes, or a ring packet,
        // behind Ethernet, IPv4 and UDP headers. A lossless link must hold one.
        let largest = 42 + 86 + 4 * run.packet_elements as usize;
        if f.flow == Flow::Lossless && f.queue_bytes < largest {
            return bad(format!(
                "a lossless buffer of {} bytes cannot hold a {largest}-byte frame",
                f.queue_bytes
            ));
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
            holds: Holds::default(),
            stalls_at: [0; 3],
            peak_queue: [0; 3],
            run,
        };
        sim.init_credits();
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
        self.run_until_done();
        self.outcome()
    }

    /// Processes events until every participating host finished, or the limit.
    fn run_until_done(&mut self) {
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
    }

    /// The outcome so far: completion times, exactness and counters.
    fn outcome(&self) -> Outcome {
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
            stalls_at: self.stalls_at,
            peak_ingress_bytes: self.holds.peak,
            peak_queue: self.peak_queue,
            hosts: stats,
            switch: sw,
            uplink_bytes: self.uplink_bytes,
        }
    }

    fn step(&mut self, ev: Ev) {
        match ev {
            Ev::Arrive(NodeId::Switch(s), port, frame, credited) => {
                self.switch_rx(s, port, frame, credited)
            }
            Ev::Credit(node, port, bytes) => self.credit(node, port, bytes),
            Ev::Arrive(NodeId::Host(h), _, frame, _) => {
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
                    // A switch's own flush takes no ingress credit.
                    self.switch_tx(s, o.port, o.frame, None);
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

    fn arm_tick(&mut self, s: usize) {
        let Some(t) = self.tick_ns else { return };
        let sw = &mut self.switches[s];
        if !sw.tick_armed && sw.model.counters().get(crate::model::Counter::SlotsInUse) > 0 {
            sw.tick_armed = true;
            self.push(self.now + t, Ev::Tick(s));
        }
    }

    /// Switch `s` receives a frame on `port` (`credited`: it holds the sender's credit).
    fn switch_rx(&mut self, s: usize, port: u8, frame: Vec<u8>, credited: bool) {
        let r = self.switches[s].model.handle(self.now, port, &frame);
        let hold = self.hold(s, port, frame.len(), credited, r.outputs.len());
        for o in r.outputs {
            self.switch_tx(s, o.port, o.frame, hold);
        }
        self.arm_tick(s);
    }

    /// Queues a frame at switch `s`, applying the up-port rule at leaves; `hold` is the
    /// ingress buffer it frees when it leaves.
    fn switch_tx(&mut self, s: usize, port: u8, frame: Vec<u8>, hold: Option<u32>) {
        let f = self.run.fabric;
        let mut port = port as usize;
        if s < f.leaves && port >= f.hosts_per_leaf {
            port = self.up_port(s, port - f.hosts_per_leaf, &frame) + f.hosts_per_leaf;
        }
        self.enqueue(NodeId::Switch(s), port, Queued { frame, hold });
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
        self.enqueue(NodeId::Host(h), 0, Queued { frame, hold: None });
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
            self.enqueue(NodeId::Host(h), 0, Queued { frame, hold: None });
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

/// Runs `run` and returns its outcome.
pub fn simulate(run: Run) -> Result<Outcome, RunError> {
    Ok(Sim::new(run)?.run())
}

#[cfg(test)]
mod tests;
