//! A deterministic in-memory network of reference switches and workers.
//!
//! Nodes are connected as the [`plan`](crate::plan) tree says (a switch's port 0 faces its
//! parent, ports `1..` its children). Every frame crosses one link at a time, so
//! non-aggregating switches really forward by their tables. Links lose, duplicate and delay
//! (reorder) frames as the shared seeded fault model ([`crate::fault`]) decides, a held-back
//! copy arriving that many ticks late; workers may start late (stragglers).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use crate::config::Mode;
use crate::fault::{FaultCounts, FaultSpec, Faults};
use crate::join::{JoinReply, Joiner};
use crate::model::Switch;
use crate::plan::{merge, NodeKind, NodeSpec, Plan, PlanError};
use crate::wire::{frame::classify, FrameKind};
use crate::worker::{Sending, Worker};

/// The links of a simulated network: every link has the same delay and faults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Links {
    /// Base link delay in ticks (at least 1).
    pub delay: u64,
    /// Faults of every frame on every link; a held-back copy arrives `hold` ticks late
    /// ([`FaultSpec::jitter`] gives the classic uniform extra delay).
    pub faults: FaultSpec,
}

impl Default for Links {
    /// One tick, no faults.
    fn default() -> Self {
        Self {
            delay: 1,
            faults: FaultSpec::NONE,
        }
    }
}

enum Node {
    Switch(Box<Switch>),
    /// A server: one worker per job.
    Workers(Vec<Host>),
}

/// One worker on a server: its start tick, and its JOIN until the session is accepted.
struct Host {
    worker: Worker,
    start: u64,
    join: Option<Joiner>,
}

/// One job to run: its plan, how its workers send, their data by rank and start ticks by rank.
#[derive(Debug, Clone)]
pub struct JobRun {
    /// The job's plan over the network's nodes.
    pub plan: Plan,
    /// Sending parameters of every worker.
    pub sending: Sending,
    /// Each worker's tensor, by rank.
    pub data: Vec<Vec<i32>>,
    /// Each worker's start tick, by rank (missing: 0).
    pub start: Vec<u64>,
}

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Tick at which the run stopped.
    pub time: u64,
    /// True if every worker finished.
    pub finished: bool,
    /// Frames lost by link faults.
    pub lost: u64,
    /// Frames delivered on links.
    pub delivered: u64,
    /// Every fault injected.
    pub faults: FaultCounts,
}

/// A frame in flight: (arrival tick, sequence, node, ingress port, frame).
type InFlight = Reverse<(u64, u64, usize, u8, Vec<u8>)>;

/// The network.
pub struct Net {
    nodes: Vec<Node>,
    parent: Vec<Option<usize>>,
    kids: Vec<Vec<usize>>,
    queue: BinaryHeap<InFlight>,
    seq: u64,
    now: u64,
    delay: u64,
    faults: Faults,
    tick_every: Option<u64>,
    delivered: u64,
}

impl Net {
    /// Builds the network over `nodes` running every job of `runs` at once; `seed` seeds the
    /// link faults and the workers' nonces.
    pub fn new(
        nodes: &[NodeSpec],
        runs: &[JobRun],
        links: Links,
        seed: u64,
    ) -> Result<Self, PlanError> {
        let faults = Faults::new(links.faults, seed).map_err(|e| PlanError::Job(e.to_string()))?;
        let n = nodes.len();
        let mut kids = vec![vec![]; n];
        for (i, nd) in nodes.iter().enumerate() {
            if let Some(p) = nd.parent {
                kids[p].push(i);
            }
        }
        let mut slots: Vec<Option<Node>> = (0..n).map(|_| None).collect();
        let plans: Vec<Plan> = runs.iter().map(|r| r.plan.clone()).collect();
        let configs = merge(&plans)?;
        let first = &runs
            .first()
            .ok_or_else(|| PlanError::Job("no jobs".into()))?
            .plan;
        for (cfg, &i) in configs.iter().zip(&first.switch_nodes) {
            let s = Switch::new(cfg).map_err(|e| PlanError::Node {
                node: cfg.name.clone(),
                why: e.to_string(),
            })?;
            slots[i] = Some(Node::Switch(Box::new(s)));
        }
        for run in runs {
            for (a, &i) in run.plan.workers.iter().zip(&run.plan.worker_nodes) {
                let r = a.rank as usize;
                let data = run
                    .data
                    .get(r)
                    .ok_or_else(|| PlanError::Job(format!("no data for rank {r}")))?;
                let w = Worker::new(a.clone(), run.sending, data)
                    .map_err(|e| PlanError::Job(e.to_string()))?;
                let start = run.start.get(r).copied().unwrap_or(0);
                // Nonces differ per worker and per run; any value works in a simulation.
                let nonce = (seed as u32 ^ 0x9e37_79b9).wrapping_mul(r as u32 + 1) | 1;
                let join = a
                    .session
                    .then(|| Joiner::new(a.clone(), nonce, run.sending.retransmit_after));
                let host = Host {
                    worker: w,
                    start,
                    join,
                };
                match slots[i].get_or_insert_with(|| Node::Workers(Vec::new())) {
                    Node::Workers(ws) => ws.push(host),
                    Node::Switch(_) => unreachable!("plans agree on which nodes are switches"),
                }
            }
        }
        let timers = configs.iter().flat_map(|s| &s.jobs).flat_map(|j| {
            let flush = match j.mode {
                Mode::Timeout { flush_after, .. } | Mode::Dynamic { flush_after, .. } => {
                    Some(flush_after)
                }
                Mode::Static => None,
            };
            let idle = (j.trust.reclaim_idle > 0).then_some(j.trust.reclaim_idle);
            flush.into_iter().chain(idle)
        });
        let tick_every = timers.min().map(|t| (t / 4).max(1));
        debug_assert!(nodes
            .iter()
            .all(|n| matches!(n.kind, NodeKind::Worker | NodeKind::Switch { .. })));
        Ok(Self {
            nodes: slots
                .into_iter()
                .map(|s| s.unwrap_or(Node::Workers(Vec::new())))
                .collect(),
            parent: nodes.iter().map(|n| n.parent).collect(),
            kids,
            queue: BinaryHeap::new(),
            seq: 0,
            now: 0,
            delay: links.delay.max(1),
            faults,
            tick_every,
            delivered: 0,
        })
    }

    /// Sends `frame` out of `port` of node `from`, through the faulty link.
    fn transmit(&mut self, from: usize, port: u8, frame: Vec<u8>) {
        let to = if port == 0 {
            match self.parent[from] {
                Some(p) => p,
                None => return,
            }
        } else {
            match self.kids[from].get(port as usize - 1) {
                Some(&k) => k,
                None => return,
            }
        };
        let in_port = if self.parent[from] == Some(to) {
            1 + self.kids[to]
                .iter()
                .position(|&k| k == from)
                .expect("child") as u8
        } else {
            0
        };
        for &hold in self.faults.fate().holds() {
            let t = self.now + self.delay + hold;
            self.seq += 1;
            self.queue
                .push(Reverse((t, self.seq, to, in_port, frame.clone())));
        }
    }

    fn poll_workers(&mut self) {
        for i in 0..self.nodes.len() {
            let now = self.now;
            let Node::Workers(ws) = &mut self.nodes[i] else {
                continue;
            };
            let mut frames = Vec::new();
            for h in ws.iter_mut().filter(|h| now >= h.start) {
                if let Some(j) = &mut h.join {
                    if j.poll(now) {
                        frames.push(j.frame());
                    }
                    continue;
                }
                let idx = h.worker.poll(now);
                frames.extend(idx.into_iter().map(|b| h.worker.frame(b)));
            }
            for f in frames {
                self.transmit(i, 0, f);
            }
        }
    }

    fn next_time(&self) -> Option<u64> {
        let mut t = self.queue.peek().map(|Reverse((t, ..))| *t);
        for n in &self.nodes {
            if let Node::Workers(ws) = n {
                for h in ws {
                    let due = match &h.join {
                        Some(j) => j.deadline(),
                        None => h.worker.deadline(),
                    };
                    if let Some(d) = due {
                        let d = d.max(h.start);
                        t = Some(t.map_or(d, |x| x.min(d)));
                    }
                }
            }
        }
        if let (Some(every), Some(x)) = (self.tick_every, t) {
            let next_tick = (self.now / every + 1) * every;
            t = Some(x.min(next_tick));
        }
        t
    }

    /// Runs until every worker is done or `limit` ticks pass.
    pub fn run(&mut self, limit: u64) -> Outcome {
        self.poll_workers();
        while !self.finished() {
            let Some(t) = self.next_time() else { break };
            if t > limit {
                break;
            }
            self.now = self.now.max(t);
            while let Some(Reverse((t, ..))) = self.queue.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, _, to, port, frame)) = self.queue.pop().expect("peeked");
                self.delivered += 1;
                self.deliver(to, port, frame);
            }
            if let Some(every) = self.tick_every {
                if self.now % every == 0 {
                    for i in 0..self.nodes.len() {
                        if let Node::Switch(s) = &mut self.nodes[i] {
                            let out = s.tick(self.now);
                            for o in out {
                                self.transmit(i, o.port, o.frame);
                            }
                        }
                    }
                }
            }
            self.poll_workers();
        }
        Outcome {
            time: self.now,
            finished: self.finished(),
            lost: self.faults.counts().lost,
            delivered: self.delivered,
            faults: self.faults.counts(),
        }
    }

    fn deliver(&mut self, to: usize, port: u8, frame: Vec<u8>) {
        match &mut self.nodes[to] {
            Node::Switch(s) => {
                let r = s.handle(self.now, port, &frame);
                for o in r.outputs {
                    self.transmit(to, o.port, o.frame);
                }
            }
            Node::Workers(ws) => {
                if let FrameKind::Ipv4 { dst, .. } = classify(&frame) {
                    for h in ws.iter_mut().filter(|h| h.worker.assignment().me.ip == dst) {
                        match &mut h.join {
                            Some(j) => {
                                if let JoinReply::Accepted(base) = j.receive(&frame) {
                                    h.worker.set_first_block(base);
                                    h.join = None;
                                }
                            }
                            None => {
                                h.worker.receive(&frame);
                            }
                        }
                    }
                }
            }
        }
    }

    /// True when every worker is done.
    pub fn finished(&self) -> bool {
        self.workers().all(|w| w.done())
    }

    /// Every worker of every job.
    pub fn workers(&self) -> impl Iterator<Item = &Worker> {
        self.nodes.iter().flat_map(|n| match n {
            Node::Workers(ws) => ws.iter().map(|h| &h.worker).collect::<Vec<_>>(),
            Node::Switch(_) => Vec::new(),
        })
    }

    /// The worker of `job` with rank `rank`.
    pub fn worker(&self, job: u16, rank: u16) -> Option<&Worker> {
        self.workers()
            .find(|w| w.assignment().job == job && w.assignment().rank == rank)
    }

    /// The switch at node index `i`.
    pub fn switch(&self, i: usize) -> &Switch {
        match &self.nodes[i] {
            Node::Switch(s) => s,
            Node::Workers(_) => panic!("node {i} is a server"),
        }
    }
}
