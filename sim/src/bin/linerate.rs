//! `linerate --config NAME`: every input port offers back-to-back contribution frames at
//! 100% load; the contributions of each block arrive on all ports at once, so consecutive
//! frames hit the same slot. Prints per-port throughput (beats/cycle), aggregated elements
//! per cycle, frames lost or mis-aggregated (checked against the reference model, must be 0)
//! and the latency from a block's last contribution beat to its first result beat.
//! The last line is `linerate: X beats/cycle/port`.
//!
//! `--wire-gbps G` paces each port as a real MAC receiving back-to-back frames at G Gb/s
//! would (frame + 4 bytes FCS + 8 preamble + 12 inter-frame gap on the wire, at the
//! configuration's clock or `--clock-mhz`) instead of 100% of the beats, and prints the
//! largest backlog of a port: beats the MAC had delivered that the core had not yet
//! accepted. On a board those wait in the RX FIFO (docs/boards.md), which drops whole
//! frames once full.

use std::collections::HashMap;

use clap::Parser;
use fanin_hdl::CoreConfig;
use fanin_proto::config::{Mode, Route};
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{frame::classify, FrameKind, Packet};
use fanin_proto::worker::{Sending, Worker};
use fanin_sim::scoreboard::{params, program, Scoreboard};
use fanin_sim::tb::{Pacing, Tb};

#[derive(Parser)]
struct Args {
    /// Configuration (must be built in: FANIN_SIM_CONFIGS).
    #[arg(long, default_value = "default")]
    config: String,
    /// Elements per contribution (default: the configuration's lanes per slot); fewer
    /// make shorter frames, more of them per beat.
    #[arg(long)]
    elements: Option<u16>,
    /// Blocks per worker.
    #[arg(long, default_value_t = 2000)]
    blocks: u32,
    /// Write a VCD of the run to this file (needs a model built with FANIN_SIM_TRACE=1;
    /// use few blocks: on `alveo` the file grows by about 10 kB per cycle).
    #[arg(long)]
    vcd: Option<String>,
    /// Offer frames at this Ethernet line rate per port (Gb/s) instead of 100% of the
    /// beats, and report the largest backlog (e.g. 100 for `alveo`, 10 for `sume`).
    #[arg(long)]
    wire_gbps: Option<f64>,
    /// With --wire-gbps: the core clock in MHz that paces the wire (default: the
    /// configuration's `clock_mhz`), e.g. 250 to check `alveo` at a 250 MHz cycle budget.
    #[arg(long)]
    clock_mhz: Option<u32>,
}

/// Ethernet bytes on the wire besides the frame the MAC delivers: FCS, preamble + SFD,
/// inter-frame gap.
const WIRE_OVERHEAD: usize = 4 + 8 + 12;

fn block_of(frame: &[u8]) -> Option<u32> {
    match classify(frame) {
        FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } => Packet::new_checked(d.payload).ok().map(|p| p.block()),
        _ => None,
    }
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let mut core = CoreConfig::by_name(&a.config)?;
    match a.clock_mhz {
        Some(0) => anyhow::bail!("--clock-mhz 0: must be a positive number of MHz"),
        Some(m) => core.clock_mhz = m,
        None => {}
    }
    let ports = core.ports as usize;
    let lanes = match a.elements {
        None => core.lanes as u16,
        Some(e) if (1..=core.lanes).contains(&(e as u32)) => e,
        Some(e) => anyhow::bail!("--elements {e}: must be 1 to {} ({})", core.lanes, a.config),
    };
    // One worker per port, all children of the root (the DUT); slots as many as the core has.
    let slots = core.slots.min(1 << 12);
    let spec = JobSpec {
        job: 1,
        slot_count: slots,
        elements: lanes,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: fanin_proto::config::Trust::OFF,
    };
    let plan = plan::build(&plan::star(ports), spec)?;
    let mut cfg = plan.switches[0].clone();
    cfg.params = params(&core);
    for (i, c) in cfg.jobs[0].children.iter_mut().enumerate() {
        c.endpoint.port = i as u8;
    }
    cfg.routes = plan
        .workers
        .iter()
        .map(|w| Route {
            ip: w.me.ip,
            port: w.rank as u8,
        })
        .collect();
    let elements = a.blocks as usize * lanes as usize;
    let sending = Sending {
        window: 1,
        retransmit_after: u64::MAX / 2,
        first_block: 0,
        exponent: 0,
    };
    let workers: Vec<Worker> = plan
        .workers
        .iter()
        .map(|w| Worker::new(w.clone(), sending, &vec![w.rank as i32 + 1; elements]))
        .collect::<Result<_, _>>()?;
    let mut tb = Tb::new(&a.config, Pacing::FULL, 1)?;
    let mut sb = Scoreboard::new(&core, &cfg)?;
    program(&mut tb, &sb.regs, &cfg)?;
    if let Some(path) = &a.vcd {
        tb.m.trace(path)?;
    }
    // Open loop: every block is offered on every port at once (the worker's frame builder
    // only), or with --wire-gbps each frame from the cycle its last byte is on the wire.
    let frames: Vec<Vec<Vec<u8>>> = workers
        .iter()
        .map(|w| (0..a.blocks as usize).map(|b| w.frame(b)).collect())
        .collect();
    let kb = core.data_w as usize / 8;
    let beats_of = |f: &[u8]| f.len().div_ceil(kb) as u64;
    // Cycles per wire byte at the core's clock.
    let per_byte = match a.wire_gbps {
        Some(g) if g.is_finite() && g > 0.0 => Some(8.0 / g * core.clock_mhz as f64 / 1000.0),
        Some(g) => anyhow::bail!("--wire-gbps {g}: must be a positive number of Gb/s"),
        None => None,
    };
    let mut due: Vec<Vec<u64>> = Vec::new();
    for fs in &frames {
        let mut t = 0.0;
        due.push(
            fs.iter()
                .map(|f| {
                    t += (f.len() + WIRE_OVERHEAD) as f64 * per_byte.unwrap_or(0.0);
                    t.ceil() as u64
                })
                .collect(),
        );
    }
    let mut next = vec![0usize; ports];
    let mut offered = vec![0u64; ports];
    let mut backlog = vec![0u64; ports];
    let start = tb.m.cycle();
    let mut last_in: HashMap<u32, u64> = HashMap::new();
    let mut done_at = vec![0u64; ports];
    while next.iter().any(|&n| n < a.blocks as usize) || tb.src.iter().any(|s| s.pending() > 0) {
        let now = tb.m.cycle() - start;
        for p in 0..ports {
            while next[p] < frames[p].len() && due[p][next[p]] <= now {
                let f = &frames[p][next[p]];
                offered[p] += beats_of(f);
                tb.src[p].push(f.clone(), false);
                next[p] += 1;
            }
            backlog[p] = backlog[p].max(offered[p] - tb.src[p].beats);
        }
        let before: Vec<u64> = tb.src.iter().map(|s| s.sent).collect();
        tb.step();
        for (p, s) in tb.src.iter().enumerate() {
            if s.sent > before[p] {
                let f = &s.completed[s.completed.len() - 1];
                if let Some(b) = block_of(&f.data) {
                    last_in.insert(b, tb.m.cycle());
                }
                if s.pending() == 0 && next[p] == a.blocks as usize {
                    done_at[p] = tb.m.cycle() - start;
                }
            }
        }
    }
    tb.drain(500, 50_000_000)?;
    if a.vcd.is_some() {
        tb.m.trace_close();
    }
    sb.replay(&tb)?;
    let mismatch = sb.check_frames(&tb).err();
    let beats: Vec<u64> = tb.src.iter().map(|s| s.beats).collect();
    let per_port: Vec<f64> = beats
        .iter()
        .zip(&done_at)
        .map(|(&b, &c)| b as f64 / c.max(1) as f64)
        .collect();
    let span = *done_at.iter().max().unwrap_or(&1);
    let results: u64 = tb.sink.iter().map(|s| s.frames.len() as u64).sum();
    let mut lat = Vec::new();
    for s in &tb.sink {
        for (f, &t) in s.frames.iter().zip(&s.first_beat) {
            if let Some(b) = block_of(&f.data) {
                if let Some(&tin) = last_in.get(&b) {
                    lat.push(t.saturating_sub(tin));
                }
            }
        }
    }
    lat.sort_unstable();
    let expected_results = a.blocks as u64 * ports as u64;
    let lost = expected_results.saturating_sub(results) + mismatch.is_some() as u64;
    println!(
        "config {}: {} ports x {} bits, {} elements/frame, {} blocks x {} workers",
        a.config, ports, core.data_w, lanes, a.blocks, ports
    );
    for (p, x) in per_port.iter().enumerate() {
        println!(
            "  port {p}: {} beats in {} cycles = {x:.3} beats/cycle",
            beats[p], done_at[p]
        );
    }
    println!(
        "aggregated elements per cycle: {:.2}",
        (a.blocks as f64 * lanes as f64 * ports as f64) / span as f64
    );
    println!(
        "frames lost or mis-aggregated: {lost}{}",
        mismatch.map(|e| format!(" ({e})")).unwrap_or_default()
    );
    if !lat.is_empty() {
        println!("latency last contribution beat -> first result beat: min {} / median {} / max {} cycles", lat[0], lat[lat.len() / 2], lat[lat.len() - 1]);
    }
    if let Some(g) = a.wire_gbps {
        let offered: f64 = frames
            .iter()
            .zip(&due)
            .map(|(fs, d)| {
                fs.iter().map(|f| beats_of(f)).sum::<u64>() as f64 / d[d.len() - 1] as f64
            })
            .sum::<f64>()
            / ports as f64;
        println!(
            "offered at {g} Gb/s per port ({} MHz core clock): {offered:.3} beats/cycle/port; largest backlog {} beats (ports {backlog:?})",
            core.clock_mhz,
            backlog.iter().max().unwrap_or(&0),
        );
    }
    let x = per_port.iter().sum::<f64>() / ports as f64;
    println!("linerate: {x:.3} beats/cycle/port");
    if lost > 0 {
        std::process::exit(1);
    }
    Ok(())
}
