//! `fanin send`: its arguments, validated into a sender configuration, and the run of one
//! worker (static and timeout jobs through `sender`, dynamic ones through `leader`).

use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fanin_proto::config::Endpoint;
use fanin_proto::quant::{EXP_MAX, EXP_MIN};
use fanin_proto::wire::{Flags, FANIN_UDP_PORT, MAX_RANKS, MAX_WIRE_ELEMENTS, MAX_WORKERS};
use fanin_proto::worker::Assignment;

use super::{read_json, static_cap};
use crate::error::input_error;
use crate::link::{mac_for, Link, PcapTap, UdpLink};
use crate::scheme::QuantMode;
use crate::sender::{self, SendConfig};
use crate::tensor;

/// `fanin send --dynamic`: one worker of a dynamic (Canary) job, fixed point with --scale.
fn run_send_dynamic(args: &SendArgs) -> anyhow::Result<()> {
    let n = args.peer.len();
    let rank = args.rank.unwrap_or(0) as usize;
    if !(2..=MAX_RANKS as usize).contains(&n) {
        return Err(input_error(format!(
            "a dynamic job needs 2..={MAX_RANKS} ranks (MAX_RANKS, header version 2's bitmap): give --peer once per rank ({n} given)"
        )));
    }
    if let Some((r, ip)) = args
        .peer
        .iter()
        .enumerate()
        .find(|(r, ip)| args.peer[..*r].contains(ip))
    {
        return Err(input_error(format!(
            "--peer {ip} is given twice (rank {r} and an earlier one): every rank needs its own address"
        )));
    }
    if rank >= n || args.workers.is_some_and(|w| w as usize != n) {
        return Err(input_error(format!(
            "--rank {rank} must be below the {n} --peer addresses (and --workers, if given, equal to them)"
        )));
    }
    let switch = args
        .switch
        .ok_or_else(|| input_error("--dynamic needs --switch ADDR: its switchd's link address"))?;
    let e = args.scale.expect("clap requires --scale");
    if !(EXP_MIN..=EXP_MAX).contains(&e) {
        return Err(input_error(format!(
            "--scale {e} must be {EXP_MIN}..={EXP_MAX}"
        )));
    }
    let most = crate::leader::max_elements(n);
    if args.packet_elements == 0 || args.packet_elements > most {
        return Err(input_error(format!(
            "--packet-elements {} must be 1..={most}{}",
            args.packet_elements,
            if most < MAX_WIRE_ELEMENTS {
                " (a job of more than 64 ranks uses header version 2, 86 bytes)"
            } else {
                ""
            }
        )));
    }
    if args.window == 0 || args.window > args.slots {
        return Err(input_error(format!(
            "--window {} must be between 1 and the job's slot count {}",
            args.window, args.slots
        )));
    }
    if !(args.timeout > 0.0 && args.timeout.is_finite()) || args.retransmit_ms == 0 {
        return Err(input_error(
            "--timeout and --retransmit-ms must be positive",
        ));
    }
    let data = match (&args.input, args.synthetic) {
        (Some(p), _) => tensor::read(p).map_err(|e| input_error(e.to_string()))?,
        (None, Some(0)) => return Err(input_error("--synthetic needs at least 1 element")),
        (None, Some(k)) => tensor::synthetic(k, args.seed),
        (None, None) => unreachable!("clap requires an input"),
    };
    if let Some(want) = args.elements {
        if data.len() != want {
            return Err(input_error(format!(
                "the input has {} elements, --elements says {want}",
                data.len()
            )));
        }
    }
    tensor::check_finite(&data).map_err(|e| input_error(e.to_string()))?;
    let f = (e as f64).exp2();
    let q: Vec<i32> = data
        .iter()
        .map(|&x| {
            (x as f64 * f)
                .round()
                .clamp(i32::MIN as f64, i32::MAX as f64) as i32
        })
        .collect();
    let cfg = crate::leader::DynConfig {
        job: args.job.unwrap_or(1),
        rank,
        peers: args.peer.clone(),
        udp_port: FANIN_UDP_PORT,
        switch,
        elements: args.packet_elements,
        window: args.window,
        first_block: args.first_block.unwrap_or(0),
        retransmit: Duration::from_millis(args.retransmit_ms),
        timeout: Duration::from_secs_f64(args.timeout),
        linger: Duration::from_millis(args.linger_ms),
    };
    let bind = args.bind.expect("clap requires --bind");
    let mut link: Box<dyn Link> =
        Box::new(UdpLink::bind(bind).with_context(|| format!("cannot bind udp {bind}"))?);
    let (sums, rep) = crate::leader::run(&cfg, &mut link, &q).map_err(anyhow::Error::msg)?;
    let values: Vec<f32> = sums.iter().map(|&s| (s as f64 / f) as f32).collect();
    if let Some(p) = &args.out {
        tensor::write(p, &values)?;
    }
    if args.json {
        let j = serde_json::json!({
            "job": cfg.job, "rank": rank, "elements": values.len(), "blocks": rep.blocks,
            "led": rep.led, "seconds": rep.elapsed.as_secs_f64(),
            "retransmissions": rep.retransmits, "leader_merges": rep.leader_merges,
            "leader_duplicates": rep.leader_duplicates, "leader_overlaps": rep.leader_overlaps,
            "unicasts": rep.unicasts,
        });
        println!("{j}");
    } else {
        println!("{}", rep.summary());
    }
    Ok(())
}

/// `fanin send`: one worker.
#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    /// Tensor file: raw little-endian f32, or .npy (f32).
    #[arg(
        long,
        value_name = "FILE",
        conflicts_with = "synthetic",
        required_unless_present = "synthetic"
    )]
    pub input: Option<PathBuf>,
    /// Use N synthetic elements uniform in [-1, 1) instead of a file.
    #[arg(long, value_name = "N")]
    pub synthetic: Option<usize>,
    /// Seed of the synthetic tensor.
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// Expected element count of --input (checked).
    #[arg(long, value_name = "N")]
    pub elements: Option<usize>,
    /// Worker assignment JSON: one assignment, or the list `fanin place` writes to
    /// workers.json (then --rank, and --job if several jobs, pick the entry).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["switch", "workers", "child"])]
    pub assignment: Option<PathBuf>,
    /// The switch (parent) to send to.
    #[arg(long, value_name = "ADDR", required_unless_present = "assignment")]
    pub switch: Option<SocketAddrV4>,
    /// This worker's rank (below 64 in a static job, below 512 with --dynamic).
    #[arg(long)]
    pub rank: Option<u16>,
    /// Workers in the job (at most 64: static jobs use header version 1's 64-bit bitmap).
    #[arg(long, required_unless_present_any = ["assignment", "dynamic"])]
    pub workers: Option<u16>,
    /// Job id.
    #[arg(long)]
    pub job: Option<u16>,
    /// Child index at the switch [default: the rank].
    #[arg(long)]
    pub child: Option<u8>,
    /// Local UDP address, where results arrive [default: the assignment's; required otherwise].
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<SocketAddrV4>,
    /// Elements per packet (without --assignment).
    #[arg(long, default_value_t = 64)]
    pub packet_elements: u16,
    /// The job's slot count at the switch, the largest window (without --assignment).
    #[arg(long, default_value_t = 256)]
    pub slots: u32,
    /// Blocks in flight.
    #[arg(long, default_value_t = 64)]
    pub window: u32,
    /// Retransmission timeout in milliseconds.
    #[arg(long, default_value_t = 20)]
    pub retransmit_ms: u64,
    /// The job is configured without sessions (`fanin place --no-sessions`): no JOIN, and blocks start
    /// at --first-block, which must be fresh for every run of the job on that switch.
    #[arg(long)]
    pub no_session: bool,
    /// Block id of the first packet, with --no-session [default: 0]. With sessions the
    /// switch hands out block ids never used before in the job's life.
    #[arg(long)]
    pub first_block: Option<u32>,
    /// Dynamic (Canary) job: lead the blocks `b mod N` = --rank, contribute to the others'
    /// leaders through --switch, a frame switch (docs/host.md "Dynamic jobs"). Needs --peer
    /// for every rank, --bind and --scale.
    #[arg(
        long,
        conflicts_with_all = ["assignment", "pcap", "child", "no_session"],
        requires_all = ["peer", "scale", "bind"]
    )]
    pub dynamic: bool,
    /// Dynamic job: the network address of each rank, once per rank in rank order (the
    /// addresses inside the frames, which the switches' routes name).
    #[arg(long, value_name = "IPV4", requires = "dynamic")]
    pub peer: Vec<Ipv4Addr>,
    /// Dynamic job: after the last result, keep answering retransmissions (as a leader) until
    /// nothing arrived for this many milliseconds (at least 16 retransmission timeouts).
    #[arg(long, default_value_t = 500, requires = "dynamic")]
    pub linger_ms: u64,
    /// Fixed-point mode: q = round(x·2^E) with this exponent, no exponent vote.
    #[arg(long, value_name = "E", allow_hyphen_values = true)]
    pub scale: Option<i8>,
    /// Give up after this many seconds without a new result.
    #[arg(long, default_value_t = 10.0)]
    pub timeout: f64,
    /// Write the dequantized sums here (.npy, or raw little-endian f32).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Capture every frame sent and received as pcap.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Print the report as one JSON object.
    #[arg(long)]
    pub json: bool,
}

/// A validated `fanin send`.
#[derive(Debug, Clone)]
pub struct SendJob {
    /// The worker.
    pub config: SendConfig,
    /// The tensor.
    pub data: Vec<f32>,
    /// Local address.
    pub bind: SocketAddrV4,
    /// Output file.
    pub out: Option<PathBuf>,
    /// Capture file.
    pub pcap: Option<PathBuf>,
}

impl SendArgs {
    /// Reads the input and validates every flag.
    pub fn validate(&self) -> anyhow::Result<SendJob> {
        let assignment = if let Some(p) = &self.assignment {
            self.pick_assignment(p)?
        } else {
            let workers = self.workers.expect("clap requires --workers");
            let rank = self.rank.unwrap_or(0);
            if workers == 0 || workers as u32 > MAX_WORKERS {
                return Err(input_error(format!(
                    "--workers {workers}: {}",
                    static_cap("a job")
                )));
            }
            if rank >= workers {
                return Err(input_error(format!(
                    "--rank {rank} must be below --workers {workers}"
                )));
            }
            let sw = self.switch.expect("clap requires --switch");
            let bind = self.bind.ok_or_else(|| {
                input_error(
                    "give --bind ADDR: the switch sends results to the address in its job table",
                )
            })?;
            Assignment {
                job: self.job.unwrap_or(1),
                rank,
                workers,
                child: self.child.unwrap_or(rank as u8),
                me: endpoint(bind),
                parent: endpoint(sw),
                window_limit: self.slots,
                elements: self.packet_elements,
                session: true,
            }
        };
        let mut assignment = assignment;
        if self.no_session {
            assignment.session = false;
        }
        assignment
            .check()
            .map_err(|e| input_error(format!("{e}")))?;
        if assignment.elements == 0 || assignment.elements > MAX_WIRE_ELEMENTS {
            return Err(input_error(format!(
                "packet elements {} must be 1..={MAX_WIRE_ELEMENTS}",
                assignment.elements
            )));
        }
        if self.window == 0 || self.window > assignment.window_limit {
            return Err(input_error(format!(
                "--window {} must be between 1 and the job's slot count {}",
                self.window, assignment.window_limit
            )));
        }
        if let Some(e) = self.scale {
            if !(EXP_MIN..=EXP_MAX).contains(&e) {
                return Err(input_error(format!(
                    "--scale {e} must be {EXP_MIN}..={EXP_MAX}"
                )));
            }
        }
        if !(self.timeout > 0.0 && self.timeout.is_finite()) || self.retransmit_ms == 0 {
            return Err(input_error(
                "--timeout and --retransmit-ms must be positive",
            ));
        }
        let data = match (&self.input, self.synthetic) {
            (Some(p), _) => {
                let v = tensor::read(p).map_err(|e| input_error(e.to_string()))?;
                if let Some(want) = self.elements {
                    if v.len() != want {
                        return Err(input_error(
                            tensor::TensorError::Count {
                                path: p.clone(),
                                got: v.len(),
                                want,
                            }
                            .to_string(),
                        ));
                    }
                }
                v
            }
            (None, Some(0)) => return Err(input_error("--synthetic needs at least 1 element")),
            (None, Some(n)) => tensor::synthetic(n, self.seed),
            (None, None) => unreachable!("clap requires an input"),
        };
        if data.len() > u32::MAX as usize / 2 {
            return Err(input_error("tensors are limited to 2^31 elements"));
        }
        tensor::check_finite(&data).map_err(|e| input_error(e.to_string()))?;
        let bind = self
            .bind
            .unwrap_or(SocketAddrV4::new(assignment.me.ip, assignment.me.udp_port));
        Ok(SendJob {
            config: SendConfig {
                assignment,
                window: self.window,
                retransmit: Duration::from_millis(self.retransmit_ms),
                first_block: self.first_block.unwrap_or(0),
                quant: self.scale.map_or(QuantMode::Auto, QuantMode::Scale),
                timeout: Duration::from_secs_f64(self.timeout),
                progress: !self.json,
                joins: None,
            },
            data,
            bind,
            out: self.out.clone(),
            pcap: self.pcap.clone(),
        })
    }
}

impl SendArgs {
    /// Reads an assignment file: one object, or a list selected by --rank and --job.
    fn pick_assignment(&self, p: &PathBuf) -> anyhow::Result<Assignment> {
        let v: serde_json::Value = read_json(p, "assignment")?;
        if !v.is_array() {
            return serde_json::from_value(v)
                .map_err(|e| input_error(format!("assignment {} is not valid: {e}", p.display())));
        }
        let all: Vec<Assignment> = serde_json::from_value(v).map_err(|e| {
            input_error(format!("assignment list {} is not valid: {e}", p.display()))
        })?;
        let hits: Vec<&Assignment> = all
            .iter()
            .filter(|a| {
                self.rank.is_none_or(|r| a.rank == r) && self.job.is_none_or(|j| a.job == j)
            })
            .collect();
        match hits.as_slice() {
            [one] => Ok((*one).clone()),
            [] => Err(input_error(format!(
                "no assignment in {} matches --rank {:?} --job {:?}",
                p.display(),
                self.rank,
                self.job
            ))),
            _ => Err(input_error(format!(
                "{} holds {} assignments: pick one with --rank (and --job)",
                p.display(),
                hits.len()
            ))),
        }
    }
}

fn endpoint(a: SocketAddrV4) -> Endpoint {
    Endpoint {
        mac: mac_for(*a.ip()),
        ip: *a.ip(),
        udp_port: a.port(),
        port: 0,
    }
}

/// Runs `fanin send`.
pub fn run_send(args: &SendArgs) -> anyhow::Result<()> {
    if args.dynamic {
        return run_send_dynamic(args);
    }
    if args.first_block.is_some() && !args.no_session {
        return Err(input_error(
            "--first-block needs --no-session (with sessions the switch hands out block ids) or --dynamic",
        ));
    }
    let job = args.validate()?;
    let udp = UdpLink::bind(job.bind).with_context(|| format!("cannot bind udp {}", job.bind))?;
    let mut link: Box<dyn Link> = Box::new(udp);
    if let Some(p) = &job.pcap {
        let me = if job.bind.ip().is_unspecified() {
            SocketAddrV4::new(job.config.assignment.me.ip, link.local_addr().port())
        } else {
            link.local_addr()
        };
        link = Box::new(
            PcapTap::create(link, me, p)
                .map_err(|e| input_error(format!("cannot create {}: {e}", p.display())))?,
        );
    }
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    let r = sender::run(&job.config, &job.data, &mut link, Some(&stop));
    let _ = link.flush();
    let rep = r.map_err(|e| match e {
        sender::SendError::Agree(a) => input_error(a.to_string()),
        sender::SendError::Setup(s) => input_error(s.to_string()),
        e => anyhow::Error::new(e),
    })?;
    if let Some(p) = &job.out {
        tensor::write(p, &rep.values)?;
    }
    if rep.flags.has(Flags::OVERFLOW) {
        eprintln!("warning: some sums saturated int32; use a smaller --scale (or none)");
    }
    let a = &job.config.assignment;
    if args.json {
        let j = serde_json::json!({
            "job": a.job, "rank": a.rank, "elements": rep.values.len(),
            "exponent": rep.exponent, "flags": rep.flags.0,
            "seconds": rep.elapsed.as_secs_f64(), "total_seconds": rep.total.as_secs_f64(),
            "goodput_gbps": rep.goodput_gbps(), "elements_per_sec": rep.elements_per_sec(),
            "packets_per_sec": rep.packets_per_sec(), "packets": rep.packets,
            "retransmissions": rep.retransmissions, "received": rep.received,
        });
        println!("{j}");
    } else {
        println!(
            "fanin send: job {} rank {}: {}",
            a.job,
            a.rank,
            rep.summary()
        );
    }
    Ok(())
}
