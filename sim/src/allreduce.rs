//! A closed-loop allreduce through the Verilated core: reference workers
//! (`fanin_proto::worker::Worker`) send through seeded lossy, duplicating, reordering links;
//! the core's outputs go back to them; every frame the core emits is checked against the
//! reference model, and every worker must end with the exact sum.

use fanin_hdl::CoreConfig;
use fanin_proto::config::{Mode, Route, SwitchConfig};
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{frame::classify, FrameKind};
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
    /// Probability a frame is lost, each way.
    pub loss: f64,
    /// Probability a worker's frame is duplicated.
    pub dup: f64,
    /// Probability a worker's frame is held back behind later ones.
    pub reorder: f64,
    /// Cycles before an unanswered block is sent again.
    pub retransmit_after: u64,
    /// Stream pacing.
    pub pacing: Pacing,
    /// Seed of data, faults and pacing.
    pub seed: u64,
}

/// How a run went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    /// Cycles until every worker finished.
    pub cycles: u64,
    /// Contribution frames delivered to the core.
    pub frames_in: u64,
    /// Frames the core emitted.
    pub frames_out: u64,
    /// Retransmissions by all workers.
    pub retransmissions: u64,
    /// Frames lost by the injected faults.
    pub lost: u64,
}

/// Runs one allreduce of `s.workers` workers through a root switch of configuration `core`.
pub fn run(core_name: &str, s: &Setup) -> Result<Outcome, SimError> {
    let core = CoreConfig::by_name(core_name).map_err(|e| SimError::Check(e.to_string()))?;
    let ports = core.ports as usize;
    let spec = JobSpec {
        job: 1,
        slot_count: s.slots,
        elements: s.per_packet,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: fanin_proto::config::Trust::OFF,
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
    let data: Vec<Vec<i32>> = (0..s.workers)
        .map(|_| {
            (0..s.elements)
                .map(|_| rng.gen_range(-(1 << 24)..(1 << 24)))
                .collect()
        })
        .collect();
    let sending = Sending {
        window: s.slots,
        retransmit_after: s.retransmit_after,
        first_block: rng.gen(),
        exponent: 0,
    };
    let mut workers: Vec<Worker> = plan
        .workers
        .iter()
        .map(|a| Worker::new(a.clone(), sending, &data[a.rank as usize]))
        .collect::<Result<_, _>>()
        .map_err(|e| SimError::Check(e.to_string()))?;
    let mut tb = Tb::new(core_name, s.pacing, s.seed)?;
    let mut sb = Scoreboard::new(&core, &cfg)?;
    program(&mut tb, &sb.regs, &cfg)?;
    let start = tb.m.cycle();
    let mut held: Vec<(usize, Vec<u8>)> = Vec::new();
    let mut seen = vec![0usize; ports];
    let (mut frames_in, mut lost) = (0u64, 0u64);
    let limit = 200_000
        + 2_000 * (s.elements as u64 / s.per_packet as u64 + 1) * (1 + s.retransmit_after / 100);
    while workers.iter().any(|w| !w.done()) {
        let now = tb.m.cycle() - start;
        if now > limit {
            let waiting: Vec<_> = workers
                .iter()
                .filter(|w| !w.done())
                .map(|w| (w.assignment().rank, w.waiting_for()))
                .collect();
            return Err(SimError::Check(format!(
                "seed {}: not finished after {now} cycles; waiting (rank, block): {waiting:?}",
                s.seed
            )));
        }
        for w in workers.iter_mut() {
            let port = port_of(w.assignment().rank as usize);
            for b in w.poll(now) {
                let f = w.frame(b);
                if rng.gen_bool(s.loss) {
                    lost += 1;
                    continue;
                }
                let copies = if rng.gen_bool(s.dup) { 2 } else { 1 };
                for _ in 0..copies {
                    if rng.gen_bool(s.reorder) {
                        held.push((port, f.clone()));
                    } else {
                        tb.src[port].push(f.clone(), false);
                        frames_in += 1;
                    }
                }
            }
        }
        // Held frames are released after later ones.
        if !held.is_empty() && rng.gen_bool(0.2) {
            let (port, f) = held.remove(rng.gen_range(0..held.len()));
            tb.src[port].push(f, false);
            frames_in += 1;
        }
        for _ in 0..8 {
            tb.step();
        }
        for (p, sink) in tb.sink.iter().enumerate() {
            for f in &sink.frames[seen[p]..] {
                if rng.gen_bool(s.loss) {
                    lost += 1;
                    continue;
                }
                if let FrameKind::Ipv4 { dst, .. } = classify(&f.data) {
                    for w in workers.iter_mut().filter(|w| w.assignment().me.ip == dst) {
                        w.receive(&f.data);
                    }
                }
            }
            seen[p] = sink.frames.len();
        }
    }
    let cycles = tb.m.cycle() - start;
    tb.drain(300, 1_000_000)?;
    sb.replay(&tb)?;
    sb.check_frames(&tb)?;
    sb.check_counters(&mut tb)?;
    let want: Vec<i32> = (0..s.elements)
        .map(|i| data.iter().map(|d| d[i]).sum())
        .collect();
    for w in &workers {
        let (got, _) = w.result().expect("done");
        if got != want {
            return Err(SimError::Check(format!(
                "seed {}: rank {} result differs from the exact sum",
                s.seed,
                w.assignment().rank
            )));
        }
    }
    Ok(Outcome {
        cycles,
        frames_in,
        frames_out: tb.sink.iter().map(|k| k.frames.len() as u64).sum(),
        retransmissions: workers.iter().map(|w| w.stats().retransmissions).sum(),
        lost,
    })
}
