//! Command-line arguments of `fanin switchd`, `send`, `stats` and `allreduce`: parsed by
//! clap, then validated into typed configurations before any work starts.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use fanin_proto::config::{Endpoint, SwitchConfig};
use fanin_proto::quant::{EXP_MAX, EXP_MIN};
use fanin_proto::wire::{Flags, FANIN_UDP_PORT, MAX_RANKS, MAX_WIRE_ELEMENTS, MAX_WORKERS};
use fanin_proto::worker::Assignment;

use crate::allreduce::{self, AllreduceConfig};
use crate::error::input_error;
use crate::link::{mac_for, FaultSpec, Faults, Faulty, Link, PcapTap, UdpLink};
use crate::scheme::QuantMode;
use crate::sender::{self, SendConfig};
use crate::switchd::{self, Control, SingleJob, SoftSwitch};
use crate::tensor;

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

/// `fanin switchd`: the software switch.
#[derive(Debug, Clone, Args)]
pub struct SwitchdArgs {
    /// Switch configuration (SwitchConfig JSON, as `fanin place` emits per switch).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["worker", "job"])]
    pub config: Option<PathBuf>,
    /// UDP address to listen on [default: the configuration's ip:udp_port, or 127.0.0.1:48879].
    #[arg(long, value_name = "ADDR")]
    pub listen: Option<SocketAddrV4>,
    /// TCP address serving `fanin stats` [default: the listen address].
    #[arg(long, value_name = "ADDR")]
    pub stats: Option<SocketAddrV4>,
    /// Single job without a file: a worker's address, once per rank in order.
    #[arg(long, value_name = "ADDR")]
    pub worker: Vec<SocketAddrV4>,
    /// Single job without a file: the job id.
    #[arg(long)]
    pub job: Option<u16>,
    /// Single job without a file: elements per packet.
    #[arg(long, default_value_t = 64)]
    pub elements: u16,
    /// Single job without a file: slots of the job.
    #[arg(long, default_value_t = 256)]
    pub slots: u32,
    /// Capture every datagram in and out as pcap.
    #[arg(long, value_name = "FILE")]
    pub pcap: Option<PathBuf>,
    /// Frame switch: model port PORT is a UDP tunnel to ADDR carrying Ethernet frames (once
    /// per port; needed for dynamic jobs, docs/host.md "Dynamic jobs").
    #[arg(long, value_name = "PORT=ADDR", requires = "config", value_parser = parse_link)]
    pub link: Vec<(u8, SocketAddrV4)>,
    /// Fault injection.
    #[command(flatten)]
    pub faults: FaultArgs,
}

/// Parses `PORT=ADDR` of `--link`.
fn parse_link(s: &str) -> Result<(u8, SocketAddrV4), String> {
    let (p, a) = s
        .split_once('=')
        .ok_or_else(|| format!("{s:?} is not PORT=ADDR (e.g. 1=127.0.0.1:9001)"))?;
    let p = p
        .parse::<u8>()
        .map_err(|e| format!("port {p:?} of {s:?} is not 0..=255: {e}"))?;
    let a = a
        .parse::<SocketAddrV4>()
        .map_err(|e| format!("address {a:?} of {s:?} is not IPV4:PORT: {e}"))?;
    Ok((p, a))
}

/// A validated switchd invocation.
#[derive(Debug, Clone)]
pub struct SwitchdConfig {
    /// The switch.
    pub switch: SwitchConfig,
    /// Where to listen (port 0: any).
    pub listen: SocketAddrV4,
    /// Where to serve stats (None: same address as `listen`).
    pub stats: Option<SocketAddrV4>,
    /// Capture file.
    pub pcap: Option<PathBuf>,
    /// Faults.
    pub faults: Faults,
    /// Frame-switch links (port, peer); empty: a datagram switch.
    pub links: Vec<(u8, SocketAddrV4)>,
}

fn read_json<T: serde::de::DeserializeOwned>(path: &PathBuf, what: &str) -> anyhow::Result<T> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| input_error(format!("cannot read {what} {}: {e}", path.display())))?;
    serde_json::from_str(&text)
        .map_err(|e| input_error(format!("{what} {} is not valid: {e}", path.display())))
}

impl SwitchdArgs {
    /// Validates the flags into a configuration.
    pub fn validate(&self) -> anyhow::Result<SwitchdConfig> {
        let (switch, listen) = if let Some(path) = &self.config {
            let cfg: SwitchConfig = read_json(path, "switch configuration")?;
            cfg.validate().map_err(|e| {
                input_error(format!("switch configuration {}: {e}", path.display()))
            })?;
            let listen = self
                .listen
                .unwrap_or(SocketAddrV4::new(cfg.ip, cfg.udp_port));
            (cfg, listen)
        } else {
            if self.worker.is_empty() {
                return Err(input_error(
                    "give a job table: --config FILE, or --worker ADDR once per worker",
                ));
            }
            if self.worker.len() > MAX_WORKERS as usize {
                return Err(input_error(format!(
                    "{} --worker addresses: {}",
                    self.worker.len(),
                    static_cap("the --worker job")
                )));
            }
            let listen = self
                .listen
                .unwrap_or(SocketAddrV4::new(Ipv4Addr::LOCALHOST, FANIN_UDP_PORT));
            let j = SingleJob {
                job: self.job.unwrap_or(1),
                workers: self.worker.clone(),
                elements: self.elements,
                slots: self.slots,
            };
            let cfg = switchd::single_job_config(listen, &j);
            cfg.validate()
                .map_err(|e| input_error(format!("switch flags: {e}")))?;
            (cfg, listen)
        };
        Ok(SwitchdConfig {
            switch,
            listen,
            stats: self.stats,
            pcap: self.pcap.clone(),
            faults: self.faults.faults()?,
            links: self.link.clone(),
        })
    }
}

/// Why `what`, a static job, stops at 64 ranks, and the way past it (one line).
pub fn static_cap(what: &str) -> String {
    format!(
        "{what} must have 1..={MAX_WORKERS} workers: static jobs hold at most {MAX_WORKERS} ranks (header version 1's bitmap); a dynamic job (switchd with --link, `fanin send --dynamic`, `fanin place --emit-config --mode dynamic`) holds up to {MAX_RANKS}"
    )
}

/// Binds the UDP data socket and the TCP stats listener (same port number by default).
fn bind_switch(c: &SwitchdConfig) -> anyhow::Result<(UdpSocket, TcpListener)> {
    let tries = if c.listen.port() == 0 && c.stats.is_none() {
        20
    } else {
        1
    };
    let mut last = None;
    for _ in 0..tries {
        let udp = UdpSocket::bind(c.listen)
            .with_context(|| format!("cannot listen on udp {}", c.listen))?;
        let at = match (c.stats, udp.local_addr()?) {
            (Some(s), _) => s,
            (None, std::net::SocketAddr::V4(a)) => a,
            (None, a) => anyhow::bail!("unexpected local address {a}"),
        };
        match TcpListener::bind(at) {
            Ok(t) => return Ok((udp, t)),
            Err(e) => last = Some((at, e)),
        }
    }
    let (at, e) = last.expect("at least one try");
    Err(anyhow::anyhow!(
        "cannot serve stats on tcp {at}: {e} (choose another with --stats ADDR)"
    ))
}

/// Runs `fanin switchd` until SIGINT or SIGTERM, then prints the final counters.
pub fn run_switchd(args: &SwitchdArgs) -> anyhow::Result<()> {
    let c = args.validate()?;
    let (udp, tcp) = bind_switch(&c)?;
    let mut sw = if c.links.is_empty() {
        SoftSwitch::new(&c.switch)
    } else {
        SoftSwitch::with_links(&c.switch, &c.links)
    }
    .map_err(|e| input_error(e.to_string()))?;
    let stop = Arc::new(AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("cannot install signal handler")?;
    }
    let udp_link = UdpLink::from_socket(udp)?;
    let local = udp_link.local_addr();
    let stats_at = tcp.local_addr()?;
    let mut link: Box<dyn Link> = Box::new(udp_link);
    if let Some(p) = &c.pcap {
        let me = if local.ip().is_unspecified() {
            SocketAddrV4::new(c.switch.ip, local.port())
        } else {
            local
        };
        link = Box::new(
            PcapTap::create(link, me, p)
                .map_err(|e| input_error(format!("cannot create {}: {e}", p.display())))?,
        );
    }
    if !c.faults.is_none() {
        link = Box::new(Faulty::new(link, c.faults.clone()));
    }
    let (req_tx, req_rx) = mpsc::channel();
    let stats_stop = stop.clone();
    std::thread::spawn(move || switchd::serve_stats(tcp, req_tx, stats_stop));
    println!(
        "fanin switchd {}: listening on {local} (udp), stats on {stats_at} (tcp), {} job(s)",
        c.switch.name,
        c.switch.jobs.len()
    );
    let reload = Arc::new(AtomicBool::new(false));
    signal_hook::flag::register(signal_hook::consts::SIGHUP, reload.clone())
        .context("cannot install signal handler")?;
    let ctl = Control {
        stop,
        stats: req_rx,
        reload,
        config_path: args.config.clone(),
    };
    let snap = switchd::run(&c.switch.name, &mut sw, &mut link, &ctl);
    println!("fanin switchd {}: stopped; final counters:", c.switch.name);
    print!("{}", snap.to_text());
    Ok(())
}

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
