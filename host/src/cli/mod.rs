//! Command-line arguments of `fanin switchd` (`switchd_cmd.rs`), `send` (`send_cmd.rs`), `stats`,
//! `reset`, `reload` and `allreduce`: parsed by clap, then validated into typed
//! configurations before any work starts.

use std::net::SocketAddrV4;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fanin_proto::wire::{MAX_RANKS, MAX_WIRE_ELEMENTS, MAX_WORKERS};

use crate::allreduce::{self, AllreduceConfig};
use crate::error::input_error;
use crate::link::{FaultSpec, Faults};
use crate::switchd;

mod send_cmd;
mod switchd_cmd;
pub use send_cmd::{run_send, SendArgs, SendJob};
pub use switchd_cmd::{run_switchd, SwitchdArgs, SwitchdConfig};

fn probability(s: &str) -> Result<f64, String> {
    let p: f64 = s.parse().map_err(|_| format!("`{s}` is not a number"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability between 0 and 1"))
    }
}

/// Seeded fault-injection flags: a [`FaultSpec`] of the shared fault model
/// ([`fanin_proto::fault`]), a held-back datagram waiting `1..=hold` batches.
#[derive(Debug, Clone, Args)]
pub struct FaultArgs {
    /// Probability that a datagram is lost (each direction).
    #[arg(long, default_value = "0", value_parser = probability, value_name = "P")]
    pub loss: f64,
    /// Probability that a datagram is duplicated (each direction).
    #[arg(long, default_value = "0", value_parser = probability, value_name = "P")]
    pub dup: f64,
    /// Probability that a datagram is held back behind later ones (each direction).
    #[arg(long, default_value = "0", value_parser = probability, value_name = "P")]
    pub reorder: f64,
    /// A held-back datagram waits 1 to N batches (send or receive calls), uniformly.
    #[arg(long = "reorder-hold", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..), value_name = "N")]
    pub reorder_hold: u64,
    /// Seed of the fault generator.
    #[arg(long = "fault-seed", default_value_t = 1, value_name = "S")]
    pub fault_seed: u64,
}

impl FaultArgs {
    /// The seeded fault process these flags describe.
    pub fn faults(&self) -> anyhow::Result<Faults> {
        let spec = FaultSpec {
            loss: self.loss,
            dup: self.dup,
            reorder: self.reorder,
            hold: self.reorder_hold,
        };
        Faults::new(spec, self.fault_seed).map_err(|e| input_error(e.to_string()))
    }
}

/// `fanin stats`: a running switchd's counters.
#[derive(Debug, Clone, Args)]
pub struct StatsArgs {
    /// The switchd's stats address (its listen address unless it was given --stats).
    pub addr: SocketAddrV4,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs `fanin stats`.
pub fn run_stats(args: &StatsArgs) -> anyhow::Result<()> {
    let snap = switchd::fetch_stats(args.addr, Duration::from_secs(3))
        .with_context(|| format!("no switchd answering on tcp {}", args.addr))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&snap)?);
    } else {
        print!("{}", snap.to_text());
    }
    Ok(())
}

/// `fanin reset`: reset one job of a running switchd.
#[derive(Debug, Clone, Args)]
pub struct ResetArgs {
    /// The switchd's control (stats) address.
    pub addr: SocketAddrV4,
    /// The job to reset.
    #[arg(long)]
    pub job: u16,
}

/// `fanin reload`: a running switchd reads its configuration file again.
#[derive(Debug, Clone, Args)]
pub struct ReloadArgs {
    /// The switchd's control (stats) address.
    pub addr: SocketAddrV4,
}

/// Sends a reset or reload to a running switchd; an error if it refused.
pub fn run_control(addr: SocketAddrV4, req: &switchd::ControlRequest) -> anyhow::Result<()> {
    let r = switchd::control(addr, req, Duration::from_secs(5))
        .with_context(|| format!("no switchd answering on tcp {addr}"))?;
    if !r.ok {
        return Err(input_error(format!("switchd {addr}: {}", r.message)));
    }
    println!("switchd {addr}: {}", r.message);
    Ok(())
}

/// `fanin allreduce`: a local switch and N workers, one allreduce.
#[derive(Debug, Clone, Args)]
pub struct AllreduceArgs {
    /// Number of workers (at most 64: the local switch runs a static job).
    #[arg(long)]
    pub workers: u16,
    /// Elements per worker.
    #[arg(long)]
    pub elements: usize,
    /// Check every result against a local float sum within the quantisation bound.
    #[arg(long)]
    pub verify: bool,
    /// Integer tensors at --scale 0: check the sums are exact.
    #[arg(long)]
    pub int: bool,
    /// Seed of the synthetic tensors (rank r uses seed + r).
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Elements per packet.
    #[arg(long, default_value_t = 64)]
    pub packet_elements: u16,
    /// Slots of the job at the switch.
    #[arg(long, default_value_t = 256)]
    pub slots: u32,
    /// Blocks in flight per worker.
    #[arg(long, default_value_t = 64)]
    pub window: u32,
    /// Retransmission timeout in milliseconds.
    #[arg(long, default_value_t = 20)]
    pub retransmit_ms: u64,
    /// Give up after this many seconds without progress.
    #[arg(long, default_value_t = 30.0)]
    pub timeout: f64,
    /// The switch wraps each datagram in a frame for the model and parses its output frames
    /// (the frame path; slower, for measuring the datagram fast path).
    #[arg(long)]
    pub frame_path: bool,
    /// Faults at the switch.
    #[command(flatten)]
    pub faults: FaultArgs,
}

impl AllreduceArgs {
    /// Validates the flags.
    pub fn validate(&self) -> anyhow::Result<AllreduceConfig> {
        if self.workers == 0 || self.workers as u32 > MAX_WORKERS {
            return Err(input_error(format!(
                "--workers {}: {}",
                self.workers,
                static_cap("fanin allreduce's local job")
            )));
        }
        if self.elements == 0 {
            return Err(input_error("--elements must be at least 1"));
        }
        if self.packet_elements == 0 || self.packet_elements > MAX_WIRE_ELEMENTS {
            return Err(input_error(format!(
                "--packet-elements must be 1..={MAX_WIRE_ELEMENTS}"
            )));
        }
        if self.window == 0 || self.window > self.slots {
            return Err(input_error(format!(
                "--window {} must be between 1 and --slots {}",
                self.window, self.slots
            )));
        }
        if self.faults.loss >= 1.0 {
            return Err(input_error(
                "--loss 1 loses everything; nothing could finish",
            ));
        }
        if !(self.timeout > 0.0 && self.timeout.is_finite()) || self.retransmit_ms == 0 {
            return Err(input_error(
                "--timeout and --retransmit-ms must be positive",
            ));
        }
        Ok(AllreduceConfig {
            workers: self.workers as u8,
            elements: self.elements,
            packet_elements: self.packet_elements,
            slots: self.slots,
            window: self.window,
            retransmit: Duration::from_millis(self.retransmit_ms),
            faults: self.faults.faults()?,
            seed: self.seed,
            verify: self.verify,
            int: self.int,
            timeout: Duration::from_secs_f64(self.timeout),
            frame_path: self.frame_path,
        })
    }
}

/// Runs `fanin allreduce` and prints its figures; fails on any mismatch.
pub fn run_allreduce(args: &AllreduceArgs) -> anyhow::Result<()> {
    let cfg = args.validate()?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    let r = allreduce::run(&cfg, stop)?;
    let secs = r.elapsed.as_secs_f64();
    let n = cfg.workers as f64;
    let total_elems = cfg.elements as f64 * n;
    println!(
        "allreduce: {} workers x {} elements in {secs:.3}s, exponent {}",
        cfg.workers, cfg.elements, r.workers[0].exponent
    );
    let g: Vec<f64> = r.workers.iter().map(|w| w.goodput_gbps()).collect();
    println!(
        "  goodput per worker: min {:.3} / max {:.3} Gbps; all workers: {:.3} Gbps, {:.0} elements/s, {:.0} packets/s",
        g.iter().cloned().fold(f64::MAX, f64::min),
        g.iter().cloned().fold(0.0, f64::max),
        total_elems * 32.0 / secs / 1e9,
        total_elems / secs,
        r.workers.iter().map(|w| (w.packets + w.retransmissions) as f64).sum::<f64>() / secs,
    );
    println!(
        "  packets {} sent, {} retransmissions, {} results received",
        r.workers.iter().map(|w| w.packets).sum::<u64>(),
        r.workers.iter().map(|w| w.retransmissions).sum::<u64>(),
        r.workers.iter().map(|w| w.received).sum::<u64>(),
    );
    let s = &r.switch;
    let f = s.host.faults;
    println!(
        "  switch: aggregated {}, completions {}, results_sent {}, duplicates {}, root_drops {}, malformed {}; faults: {} lost, {} duplicated, {} reordered",
        s.get("aggregated"), s.get("completions"), s.get("results_sent"), s.get("duplicates"),
        s.get("root_drops"), s.get("malformed"), f.lost, f.duplicated, f.reordered
    );
    if cfg.verify || cfg.int {
        let (bad, count) = &r.mismatches;
        if *count > 0 {
            for b in bad {
                eprintln!("  mismatch: {b}");
            }
            anyhow::bail!(
                "verification failed: {count} of {} results differ from the local sum (first: {})",
                r.checked,
                bad[0]
            );
        }
        if cfg.int {
            println!("  verify: {} sums checked, all exact", r.checked);
        } else {
            println!(
                "  verify: {} sums checked, all within the quantisation bound (worst error {:.3e} of the bound)",
                r.checked, r.worst_ratio
            );
        }
    }
    Ok(())
}

/// Reads a JSON file, with errors naming `what` and the path.
fn read_json<T: serde::de::DeserializeOwned>(path: &PathBuf, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input_error(format!("cannot read {what} {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| input_error(format!("{what} {} is not valid: {e}", path.display())))
}

/// Why `what`, a static job, stops at 64 ranks, and the way past it (one line).
pub fn static_cap(what: &str) -> String {
    format!(
        "{what} must have 1..={MAX_WORKERS} workers: static jobs hold at most {MAX_WORKERS} ranks (header version 1's bitmap); a dynamic job (switchd with --link, `fanin send --dynamic`, `fanin place --emit-config --mode dynamic`) holds up to {MAX_RANKS}"
    )
}
