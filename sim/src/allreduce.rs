//! Closed-loop allreduces through the Verilated core: reference workers
//! (`fanin_proto::worker::Worker`, after a `Joiner` with sessions) send through links that
//! lose, duplicate and reorder frames each way as the shared seeded fault model
//! ([`fanin_proto::fault`]) decides; the core's outputs go back to them; every frame the core
//! emits is checked against the reference model, and every worker must end every allreduce
//! with that allreduce's exact sum. Before the first allreduce every worker resolves the
//! switch's MAC address by ARP, as a host does (without faults).

use fanin_hdl::CoreConfig;
use fanin_proto::config::{Mode, Route, SourceCheck, SwitchConfig, Trust};
use fanin_proto::fault::{FaultSpec, Faults};
use fanin_proto::join::{JoinReply, Joiner};
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{arp, frame::classify, FrameKind};
use fanin_proto::worker::{Sending, Worker};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dut::SimError;
use crate::scoreboard::{params, program, Scoreboard};
use crate::tb::{Pacing, Tb};

/// What to run.
#[derive(Debug, Clone, Copy)]
pub struct Setup {
    /// Workers (the root switch's children).
    pub workers: usize,
    /// int32 elements per worker.
    pub elements: usize,
    /// Elements per packet.
    pub per_packet: u16,
    /// Slots of the job (a power of two) and the workers' window.
    pub slots: u32,
    /// Faults of every frame each way (worker to core, core to worker); a held-back frame
    /// waits `hold` steps of [`STEP`] cycles.
    pub faults: FaultSpec,
    /// Cycles before an unanswered block is sent again.
    pub retransmit_after: u64,
    /// Stream pacing.
    pub pacing: Pacing,
    /// Seed of data, faults (their own stream) and pacing.
    pub seed: u64,
    /// Allreduces run one after the other on the live core (each with new data).
    pub allreduces: usize,
    /// The job has every trust protection on, sessions included: each allreduce opens a
    /// session with JOINs (lost, duplicated and reordered like the rest); without, the job
    /// has none and each allreduce takes fresh block ids.
    pub sessions: bool,
}

/// How a run went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// Cycles until every worker finished.
    pub cycles: u64,
    /// Contribution frames delivered to the core.
    pub frames_in: u64,
    /// Frames the core emitted.
    pub frames_out: u64,
    /// Retransmissions by all workers.
    pub retransmissions: u64,
    /// Frames lost by the injected faults (and copies still held back when an allreduce
    /// ended).
    pub lost: u64,
    /// First block id of each allreduce (with sessions: the one the root's ACCEPT gave).
    pub first_blocks: Vec<u32>,
    /// The switch's MAC address as every worker's ARP request found it.
    pub arp_mac: [u8; 6],
}

/// Cycles the core runs between two rounds of worker polls and deliveries.
pub const STEP: u64 = 8;

/// A worker of one allreduce: joining the session, then sending.
pub enum Host {
    /// Waiting for the root's ACCEPT.
    Joining(Joiner),
    /// Sending its tensor (from the session's first block, with sessions).
    Sending(Worker),
}

impl Host {
    /// The frames due at tick `now`.
    pub fn poll(&mut self, now: u64) -> Vec<Vec<u8>> {
        match self {
            Host::Joining(j) => j.poll(now).then(|| j.frame()).into_iter().collect(),
            Host::Sending(w) => w.poll(now).into_iter().map(|b| w.frame(b)).collect(),
        }
    }

    /// Takes a frame addressed to this worker (`a`). An ACCEPT with its nonce turns a joining
    /// worker into one sending `data` with `sending` from the session's first block, which
    /// is returned.
    pub fn receive(
        &mut self,
        f: &[u8],
        a: &fanin_proto::worker::Assignment,
        sending: Sending,
        data: &[i32],
    ) -> Result<Option<u32>, fanin_proto::worker::WorkerError> {
        let base = match self {
            Host::Joining(j) => match j.receive(f) {
                JoinReply::Accepted(base) => base,
                JoinReply::Ignored => return Ok(None),
            },
            Host::Sending(w) => {
                w.receive(f);
                return Ok(None);
            }
        };
        let s = Sending {
            first_block: base,
            ..sending
        };
        *self = Host::Sending(Worker::new(a.clone(), s, data)?);
        Ok(Some(base))
    }

    /// True once every block's result is in.
    pub fn done(&self) -> bool {
        matches!(self, Host::Sending(w) if w.done())
    }

    /// The sums, once done.
    pub fn result(&self) -> Option<Vec<i32>> {
        match self {
            Host::Sending(w) => w.result().map(|r| r.0),
            Host::Joining(_) => None,
        }
    }
}

/// Runs `s.allreduces` allreduces (at least 1) of `s.workers` workers through a root switch
/// of configuration `core`.
pub fn run(core_name: &str, s: &Setup) -> Result<Outcome, SimError> {
    if s.allreduces == 0 {
        return Err(SimError::Check("allreduces: 0 (at least 1)".into()));
    }
    let core = CoreConfig::by_name(core_name).map_err(|e| SimError::Check(e.to_string()))?;
    let ports = core.ports as usize;
    let spec = JobSpec {
        job: 1,
        slot_count: s.slots,
        elements: s.per_packet,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: if s.sessions {
            Trust {
                sessions: true,
                source_check: SourceCheck::IpPort,
                reclaim_idle: 1_000_000,
                first_block: None,
            }
        } else {
            Trust::OFF
        },
    };
    let plan =
        plan::build(&plan::star(s.workers), spec).map_err(|e| SimError::Check(e.to_string()))?;
    // Fold the workers onto the core's ports 1.. (port 0 faces the absent parent).
    let port_of = |rank: usize| 1 + rank % (ports - 1).max(1);
    let mut cfg: SwitchConfig = plan.switches[0].clone();
    cfg.params = params(&core);
    for (i, c) in cfg.jobs[0].children.iter_mut().enumerate() {
        c.endpoint.port = port_of(i) as u8;
    }
    cfg.routes = plan
        .workers
        .iter()
        .map(|a| Route {
            ip: a.me.ip,
            port: port_of(a.rank as usize) as u8,
        })
        .collect();
    let mut rng = ChaCha8Rng::seed_from_u64(s.seed);
    if s.sessions {
        cfg.jobs[0].trust.first_block = Some(rng.gen());
    }
    let mut faults = Faults::new(s.faults, s.seed).map_err(|e| SimError::Check(e.to_string()))?;
    let mut tb = Tb::new(core_name, s.pacing, s.seed)?;
    let mut sb = Scoreboard::new(&core, &cfg)?;
    program(&mut tb, &sb.regs, &cfg)?;
    let arp_mac = resolve(&mut tb, &plan.workers, &port_of, (cfg.mac, cfg.ip), s.seed)?;
    let start = tb.m.cycle();
    // Held-back copies: (step due, core port, frame) toward the core, (step due, frame) back.
    let mut held_in: Vec<(u64, usize, Vec<u8>)> = Vec::new();
    let mut held_out: Vec<(u64, Vec<u8>)> = Vec::new();
    let mut step = 0u64;
    let mut seen: Vec<usize> = tb.sink.iter().map(|k| k.frames.len()).collect();
    let (mut frames_in, mut drained, mut retransmissions) = (0u64, 0u64, 0u64);
    let mut first_blocks = Vec::with_capacity(s.allreduces);
    let limit = 200_000
        + 2_000 * (s.elements as u64 / s.per_packet as u64 + 1) * (1 + s.retransmit_after / 100);
    let mut next_first: u32 = rng.gen();
    for round in 0..s.allreduces {
        // Frames still held back from the allreduce before are lost: the network drains
        // between allreduces (a JOIN of the last one arriving after the next opened would
        // join the session after it).
        drained += (held_in.len() + held_out.len()) as u64;
        held_in.clear();
        held_out.clear();
        let data: Vec<Vec<i32>> = (0..s.workers)
            .map(|_| {
                (0..s.elements)
                    .map(|_| rng.gen_range(-(1 << 24)..(1 << 24)))
                    .collect()
            })
            .collect();
        // Without sessions, every allreduce numbers its blocks afresh.
        let sending = Sending {
            window: s.slots,
            retransmit_after: s.retransmit_after,
            first_block: next_first,
            exponent: 0,
        };
        next_first = next_first.wrapping_add(1 << 20);
        let mut hosts: Vec<Host> = plan
            .workers
            .iter()
            .map(|a| {
                Ok(if s.sessions {
                    Host::Joining(Joiner::new(a.clone(), rng.gen(), s.retransmit_after))
                } else {
                    Host::Sending(Worker::new(a.clone(), sending, &data[a.rank as usize])?)
                })
            })
            .collect::<Result<_, fanin_proto::worker::WorkerError>>()
            .map_err(|e| SimError::Check(e.to_string()))?;
        let mut round_first = sending.first_block;
        // Hands a frame from the core to the worker it is addressed to.
        let mut deliver = |hosts: &mut [Host], f: &[u8]| -> Result<(), SimError> {
            let FrameKind::Ipv4 { dst, .. } = classify(f) else {
                return Ok(());
            };
            for (rank, h) in hosts.iter_mut().enumerate() {
                let a = &plan.workers[rank];
                if a.me.ip != dst {
                    continue;
                }
                if let Some(base) = h
                    .receive(f, a, sending, &data[rank])
                    .map_err(|e| SimError::Check(e.to_string()))?
                {
                    round_first = base;
                }
            }
            Ok(())
        };
        let t0 = tb.m.cycle();
        while hosts.iter().any(|h| !h.done()) {
            let now = tb.m.cycle() - start;
            if tb.m.cycle() - t0 > limit {
                let waiting: Vec<_> = hosts
                    .iter()
                    .map(|h| match h {
                        Host::Joining(j) => format!("joining ({} JOINs)", j.sent()),
                        Host::Sending(w) => format!("waiting for {:?}", w.waiting_for()),
                    })
                    .collect();
                return Err(SimError::Check(format!(
                    "seed {}: allreduce {round} not finished after {limit} cycles: {waiting:?}",
                    s.seed
                )));
            }
            for (rank, h) in hosts.iter_mut().enumerate() {
                let port = port_of(rank);
                for f in h.poll(now) {
                    for &k in faults.fate().holds() {
                        if k == 0 {
                            tb.src[port].push(f.clone(), false);
                            frames_in += 1;
                        } else {
                            held_in.push((step + k, port, f.clone()));
                        }
                    }
                }
            }
            // Held frames due now go in after the fresh ones, which overtook them.
            let (due, wait): (Vec<_>, Vec<_>) = held_in.drain(..).partition(|h| h.0 <= step);
            held_in = wait;
            for (_, port, f) in due {
                tb.src[port].push(f, false);
                frames_in += 1;
            }
            for _ in 0..STEP {
                tb.step();
            }
            let mut back = Vec::new();
            for (p, sink) in tb.sink.iter().enumerate() {
                for f in &sink.frames[seen[p]..] {
                    for &k in faults.fate().holds() {
                        if k == 0 {
                            back.push(f.data.clone());
                        } else {
                            held_out.push((step + k, f.data.clone()));
                        }
                    }
                }
                seen[p] = sink.frames.len();
            }
            let (due, wait): (Vec<_>, Vec<_>) = held_out.drain(..).partition(|h| h.0 <= step);
            held_out = wait;
            for f in back.iter().chain(due.iter().map(|d| &d.1)) {
                deliver(&mut hosts, f)?;
            }
            step += 1;
        }
        first_blocks.push(round_first);
        let want: Vec<i32> = (0..s.elements)
            .map(|i| data.iter().map(|d| d[i]).sum())
            .collect();
        for (rank, h) in hosts.iter().enumerate() {
            let Host::Sending(w) = h else { unreachable!() };
            retransmissions += w.stats().retransmissions;
            if w.result().expect("done").0 != want {
                return Err(SimError::Check(format!(
                    "seed {}: allreduce {round}: rank {rank} result differs from its exact sum",
                    s.seed
                )));
            }
        }
    }
    let cycles = tb.m.cycle() - start;
    tb.drain(300, 1_000_000)?;
    sb.replay(&tb)?;
    sb.check_frames(&tb)?;
    sb.check_counters(&mut tb)?;
    Ok(Outcome {
        cycles,
        frames_in,
        frames_out: tb.sink.iter().map(|k| k.frames.len() as u64).sum(),
        retransmissions,
        lost: faults.counts().lost + drained,
        first_blocks,
        arp_mac,
    })
}

/// Every worker asks for the switch's address by ARP on its port; each must get its own
/// reply there, byte for byte `arp::reply` of its request by a switch of address `me` (the
/// scoreboard checks the frames against the model too). Returns the MAC address the
/// replies name.
fn resolve(
    tb: &mut Tb,
    workers: &[fanin_proto::worker::Assignment],
    port_of: &dyn Fn(usize) -> usize,
    me: ([u8; 6], std::net::Ipv4Addr),
    seed: u64,
) -> Result<[u8; 6], SimError> {
    let reqs: Vec<Vec<u8>> = workers
        .iter()
        .map(|a| arp::request(a.me.mac, a.me.ip, me.1))
        .collect();
    for (rank, r) in reqs.iter().enumerate() {
        tb.src[port_of(rank)].push(r.clone(), false);
    }
    let replies = |tb: &Tb, port: usize| -> Vec<Vec<u8>> {
        tb.sink[port]
            .frames
            .iter()
            .map(|f| f.data.clone())
            .collect()
    };
    for _ in 0..20_000 {
        tb.step();
    }
    for (rank, r) in reqs.iter().enumerate() {
        let got = replies(tb, port_of(rank));
        let found = got.iter().find(|f| f.len() >= 42 && f[0..6] == r[6..12]);
        let Some(f) = found else {
            return Err(SimError::Check(format!(
                "seed {seed}: worker {rank}'s ARP request for {} got no reply on port {}",
                me.1,
                port_of(rank)
            )));
        };
        if *f != arp::reply(r, me.0, me.1).expect("a request") {
            return Err(SimError::Check(format!(
                "seed {seed}: worker {rank}'s ARP reply is not the reply to its request: {f:02x?}"
            )));
        }
    }
    Ok(me.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bad fault spec is refused, naming the field, before any Verilator model is built.
    #[test]
    fn bad_faults_are_refused_by_name() {
        let s = Setup {
            workers: 2,
            elements: 16,
            per_packet: 8,
            slots: 4,
            faults: FaultSpec {
                dup: f64::NAN,
                ..FaultSpec::NONE
            },
            retransmit_after: 3000,
            pacing: Pacing::FULL,
            seed: 1,
            allreduces: 1,
            sessions: false,
        };
        let e = run("default", &s).expect_err("refused").to_string();
        assert!(e.contains("dup = NaN is not a probability"), "{e}");
    }
}
