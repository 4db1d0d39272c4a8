//! `fanin kv`: key-value stream aggregation (ASK) over UDP — `send`, `recv` and a local
//! `allreduce` — plus the `ask-prioritisation` and `ask-goodput` experiments.
//!
//! The state machines are `fanin_proto::kv::host`'s; this module reads and writes tuple
//! files, drives the machines over sockets and runs the software switch for local runs.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufWriter, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use clap::{Args, Subcommand, ValueEnum};
use fanin_proto::config::{Endpoint, SwitchConfig};
use fanin_proto::kv::host::{KvReceiver, KvSender, ReceiverConfig, ReceiverStats, SenderConfig};
use fanin_proto::kv::{channel_of, KvJobEntry};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::allreduce::bind_consecutive;
use crate::cli::FaultArgs;
use crate::error::input_error;
use crate::link::{mac_for, Dgram, Faults, Faulty, Link, UdpLink};
use crate::switchd::{self, Control, SoftSwitch};

/// One tuple: a u32 key and an i32 value.
pub type Tuple = (u32, i32);

/// Reads a tuple file: one `key value` per line (decimal u32 key, decimal i32 value);
/// blank lines and lines starting with `#` are skipped.
pub fn read_tuples(path: &Path) -> anyhow::Result<Vec<Tuple>> {
    let f = std::fs::File::open(path)
        .map_err(|e| input_error(format!("cannot read {}: {e}", path.display())))?;
    let mut v = Vec::new();
    for (i, line) in std::io::BufReader::new(f).lines().enumerate() {
        let line =
            line.map_err(|e| input_error(format!("{}: cannot read: {e}", path.display())))?;
        v.extend(
            parse_line(&line)
                .map_err(|e| input_error(format!("{}:{}: {e}", path.display(), i + 1)))?,
        );
    }
    Ok(v)
}

/// Parses one line of a tuple file (None for blank and comment lines).
pub fn parse_line(line: &str) -> Result<Option<Tuple>, String> {
    let t = line.trim();
    if t.is_empty() || t.starts_with('#') {
        return Ok(None);
    }
    let mut it = t.split_whitespace();
    let (Some(k), Some(v), None) = (it.next(), it.next(), it.next()) else {
        return Err(format!("expected `key value`, found `{t}`"));
    };
    let key: u64 = k
        .parse()
        .map_err(|_| format!("key `{k}` is not a non-negative decimal integer"))?;
    let key = u32::try_from(key).map_err(|_| {
        format!(
            "key {key} does not fit in 32 bits (key-value jobs use u32 keys; see docs/protocol.md)"
        )
    })?;
    let val: i32 = v
        .parse()
        .map_err(|_| format!("value `{v}` is not a decimal 32-bit signed integer"))?;
    Ok(Some((key, val)))
}

/// Writes `key sum` lines sorted by key.
pub fn write_sums(path: &Path, sums: &BTreeMap<u32, i32>) -> anyhow::Result<()> {
    let f = std::fs::File::create(path)
        .map_err(|e| input_error(format!("cannot create {}: {e}", path.display())))?;
    let mut w = BufWriter::new(f);
    for (k, v) in sums {
        writeln!(w, "{k} {v}")?;
    }
    w.flush()?;
    Ok(())
}

/// Wrapping per-key sums of tuples (what a receiver must end with).
pub fn local_sums<'a>(tuples: impl IntoIterator<Item = &'a Tuple>) -> BTreeMap<u32, i32> {
    let mut m = BTreeMap::new();
    for &(k, v) in tuples {
        let s = m.entry(k).or_insert(0i32);
        *s = s.wrapping_add(v);
    }
    m
}

/// Key distribution of a synthetic stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Dist {
    /// Every key equally likely, in random order.
    Uniform,
    /// Zipf (exponent [`ZIPF_S`]); hot keys first: the stream is ordered by key rank.
    Zipf,
    /// The same Zipf tuples, cold keys first (reverse rank order).
    ZipfReverse,
}

/// The Zipf exponent of the synthetic streams (Zipf's law: frequency ∝ 1/rank).
pub const ZIPF_S: f64 = 1.0;

/// A synthetic stream of `tuples` tuples over keys `0..keys` (key = rank − 1), values in
/// −100..=100. Zipf streams are sorted by rank (reverse: descending), as ASK §5.4 describes.
pub fn synthetic(dist: Dist, keys: u32, tuples: usize, seed: u64) -> Vec<Tuple> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut v: Vec<Tuple> = match dist {
        Dist::Uniform => (0..tuples)
            .map(|_| (rng.gen_range(0..keys), rng.gen_range(-100..=100)))
            .collect(),
        Dist::Zipf | Dist::ZipfReverse => {
            let mut cdf = Vec::with_capacity(keys as usize);
            let mut acc = 0.0;
            for r in 1..=keys {
                acc += 1.0 / (r as f64).powf(ZIPF_S);
                cdf.push(acc);
            }
            (0..tuples)
                .map(|_| {
                    let u = rng.gen_range(0.0..acc);
                    let k = cdf.partition_point(|&c| c <= u).min(keys as usize - 1);
                    (k as u32, rng.gen_range(-100..=100))
                })
                .collect()
        }
    };
    match dist {
        Dist::Uniform => {}
        Dist::Zipf => v.sort_by_key(|t| t.0),
        Dist::ZipfReverse => v.sort_by_key(|t| std::cmp::Reverse(t.0)),
    }
    v
}

/// Splits one host's tuples over its `channels` data channels by key.
pub fn split_channels(tuples: &[Tuple], channels: usize) -> Vec<Vec<Tuple>> {
    let mut v = vec![Vec::new(); channels];
    for &t in tuples {
        v[channel_of(t.0, channels)].push(t);
    }
    v
}

/// Drives senders (one per data channel) over one socket until every FIN is answered.
pub fn drive_senders<L: Link + ?Sized>(
    link: &mut L,
    switch: SocketAddrV4,
    senders: &mut [KvSender],
    tick: Duration,
    timeout: Duration,
    stop: Option<&AtomicBool>,
) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let mut last_heard = Instant::now();
    let mut inbox = Vec::new();
    let mut out = Vec::new();
    while !senders.iter().all(KvSender::done) {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            bail!("interrupted");
        }
        let now = (t0.elapsed().as_nanos() / tick.as_nanos().max(1)) as u64;
        for s in senders.iter_mut() {
            out.extend(s.poll(now).into_iter().map(|data| Dgram::new(switch, data)));
        }
        if !out.is_empty() {
            link.send(&mut out).context("sending to the switch")?;
        }
        link.recv(&mut inbox, Duration::from_micros(200))?;
        if !inbox.is_empty() {
            last_heard = Instant::now();
        }
        let now = (t0.elapsed().as_nanos() / tick.as_nanos().max(1)) as u64;
        for d in inbox.drain(..) {
            for s in senders.iter_mut() {
                if s.receive(d.payload(), now) {
                    break;
                }
            }
        }
        if last_heard.elapsed() > timeout {
            bail!(
                "no answer from the switch at {switch} for {:.1} s",
                timeout.as_secs_f64()
            );
        }
    }
    Ok(())
}

/// Drives a receiver over a socket until every FIN is in and the switch copies are merged.
pub fn drive_receiver<L: Link + ?Sized>(
    link: &mut L,
    switch: SocketAddrV4,
    rx: &mut KvReceiver,
    tick: Duration,
    timeout: Duration,
    stop: Option<&AtomicBool>,
) -> anyhow::Result<()> {
    let t0 = Instant::now();
    let mut last_heard = Instant::now();
    let mut inbox = Vec::new();
    let mut out = Vec::new();
    while !rx.done() {
        if stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
            bail!("interrupted");
        }
        let now = (t0.elapsed().as_nanos() / tick.as_nanos().max(1)) as u64;
        out.extend(
            rx.poll(now)
                .into_iter()
                .map(|data| Dgram::new(switch, data)),
        );
        if !out.is_empty() {
            link.send(&mut out).context("sending to the switch")?;
        }
        link.recv(&mut inbox, Duration::from_micros(200))?;
        if !inbox.is_empty() {
            last_heard = Instant::now();
        }
        for d in inbox.drain(..) {
            out.extend(
                rx.receive(d.payload())
                    .into_iter()
                    .map(|data| Dgram::new(switch, data)),
            );
        }
        if rx.done() && !out.is_empty() {
            // The last FIN replies.
            link.send(&mut out).context("sending to the switch")?;
        }
        if last_heard.elapsed() > timeout {
            bail!(
                "nothing received for {:.1} s (is the switch at {switch} running this job?)",
                timeout.as_secs_f64()
            );
        }
    }
    // Answer late FIN retransmissions for a moment: a sender whose FIN reply was lost
    // would otherwise wait forever.
    let linger = Instant::now();
    while linger.elapsed() < Duration::from_millis(100) {
        link.recv(&mut inbox, Duration::from_millis(5))?;
        for d in inbox.drain(..) {
            out.extend(
                rx.receive(d.payload())
                    .into_iter()
                    .map(|data| Dgram::new(switch, data)),
            );
        }
        if !out.is_empty() {
            let _ = link.send(&mut out);
        }
    }
    Ok(())
}

/// Flags shared by every `fanin kv` command: the job's shape.
#[derive(Debug, Clone, Args)]
pub struct JobArgs {
    /// Key-value job id.
    #[arg(long, default_value_t = 1)]
    pub job: u16,
    /// Tuples per packet (= the job's aggregator arrays), 1..=64.
    #[arg(long, default_value_t = 8)]
    pub arrays: u8,
    /// Aggregators per array and shadow copy (a power of two).
    #[arg(long, default_value_t = 1024)]
    pub size: u32,
    /// Sender window in packets (a power of two up to 1024).
    #[arg(long, default_value_t = 16)]
    pub window: u32,
    /// Retransmission timeout in microseconds.
    #[arg(long = "rto-us", default_value_t = 2000)]
    pub rto_us: u64,
    /// Give up after this many seconds without hearing anything.
    #[arg(long = "timeout-s", default_value_t = 10)]
    pub timeout_s: u64,
}

impl JobArgs {
    fn check(&self) -> anyhow::Result<()> {
        let bad = |m: String| Err(input_error(m));
        if !(1..=64).contains(&self.arrays) {
            return bad(format!("--arrays {} must be in 1..=64", self.arrays));
        }
        if !self.size.is_power_of_two() || self.size > fanin_proto::kv::MAX_SIZE {
            return bad(format!(
                "--size {} must be a power of two up to 1048576",
                self.size
            ));
        }
        if !self.window.is_power_of_two() || self.window > fanin_proto::kv::MAX_WINDOW {
            return bad(format!(
                "--window {} must be a power of two up to 1024",
                self.window
            ));
        }
        if self.rto_us == 0 || self.timeout_s == 0 {
            return bad("--rto-us and --timeout-s must be at least 1".into());
        }
        Ok(())
    }
    fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_s)
    }
}

/// `fanin kv`: key-value stream aggregation.
#[derive(Debug, Clone, Args)]
pub struct KvArgs {
    /// What to run.
    #[command(subcommand)]
    pub cmd: KvCmd,
}

/// `fanin kv` subcommands.
#[derive(Debug, Clone, Subcommand)]
pub enum KvCmd {
    /// Send a tuple file through a switch running the key-value job.
    Send(SendArgs),
    /// Receive a key-value job's result and write `key sum` lines.
    Recv(RecvArgs),
    /// Run a local switch, N senders and a receiver; optionally check every key's sum.
    Allreduce(AllreduceArgs),
}

/// `fanin kv send`.
#[derive(Debug, Clone, Args)]
pub struct SendArgs {
    /// The switch's UDP address.
    #[arg(long, value_name = "ADDR")]
    pub switch: SocketAddrV4,
    /// Tuple file: one `key value` per line (decimal u32 key, decimal i32 value).
    #[arg(long, value_name = "FILE")]
    pub input: PathBuf,
    /// This sender's first data channel id.
    #[arg(long = "first-channel", default_value_t = 0)]
    pub first_channel: u8,
    /// Data channels of this sender (keys are partitioned over them by hash).
    #[arg(long, default_value_t = 1)]
    pub channels: u8,
    /// Local UDP address [default: 127.0.0.1, any port].
    #[arg(long, value_name = "ADDR")]
    pub bind: Option<SocketAddrV4>,
    /// The job.
    #[command(flatten)]
    pub job: JobArgs,
}

/// `fanin kv recv`.
#[derive(Debug, Clone, Args)]
pub struct RecvArgs {
    /// The switch's UDP address.
    #[arg(long, value_name = "ADDR")]
    pub switch: SocketAddrV4,
    /// Local UDP address: the job's receiver endpoint in the switch configuration.
    #[arg(long, value_name = "ADDR")]
    pub bind: SocketAddrV4,
    /// Data channels `0..N` that will send (one FIN from each ends the job).
    #[arg(long)]
    pub channels: u16,
    /// Swap the switch's copies after this many forwarded packets (0: only at the end).
    #[arg(long = "swap-after", default_value_t = 256)]
    pub swap_after: u64,
    /// Output file: one `key sum` line per key, sorted by key.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// The job.
    #[command(flatten)]
    pub job: JobArgs,
}

/// `fanin kv allreduce`.
#[derive(Debug, Clone, Args)]
pub struct AllreduceArgs {
    /// Sender hosts.
    #[arg(long, default_value_t = 4)]
    pub senders: u8,
    /// Data channels per sender.
    #[arg(long = "channels-per-sender", default_value_t = 1)]
    pub channels_per_sender: u8,
    /// Distinct keys.
    #[arg(long, default_value_t = 4096)]
    pub keys: u32,
    /// Key distribution.
    #[arg(long, value_enum, default_value_t = Dist::Uniform)]
    pub dist: Dist,
    /// Tuples per sender.
    #[arg(long, default_value_t = 100_000)]
    pub tuples: usize,
    /// Swap the switch's copies after this many forwarded packets (0: only at the end).
    #[arg(long = "swap-after", default_value_t = 256)]
    pub swap_after: u64,
    /// Seed of the synthetic streams.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Check every key's sum against a locally computed one.
    #[arg(long)]
    pub verify: bool,
    /// Faults on the switch's socket.
    #[command(flatten)]
    pub faults: FaultArgs,
    /// The job.
    #[command(flatten)]
    pub job: JobArgs,
}

/// Runs `fanin kv`.
pub fn run(args: &KvArgs) -> anyhow::Result<()> {
    match &args.cmd {
        KvCmd::Send(a) => run_send(a),
        KvCmd::Recv(a) => run_recv(a),
        KvCmd::Allreduce(a) => {
            let rep = allreduce(&a.validate()?, None)?;
            println!("{}", rep.summary());
            if rep.mismatches > 0 {
                bail!(
                    "{} of {} keys differ from the local sums (first: {})",
                    rep.mismatches,
                    rep.keys,
                    rep.first_mismatch
                );
            }
            Ok(())
        }
    }
}

fn run_send(a: &SendArgs) -> anyhow::Result<()> {
    a.job.check()?;
    if a.channels == 0 || a.first_channel as u16 + a.channels as u16 > 256 {
        bail!(input_error(format!(
            "--first-channel {} with --channels {} must name channels within 0..256 (and at least one)",
            a.first_channel, a.channels
        )));
    }
    let tuples = read_tuples(&a.input)?;
    let mut senders = senders_for(&tuples, a.first_channel, a.channels, &a.job)?;
    let bind = a.bind.unwrap_or(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0));
    let mut link = UdpLink::bind(bind).with_context(|| format!("cannot bind {bind}"))?;
    let t0 = Instant::now();
    drive_senders(
        &mut link,
        a.switch,
        &mut senders,
        Duration::from_micros(1),
        a.job.timeout(),
        None,
    )?;
    let packets: usize = senders.iter().map(KvSender::packets).sum();
    let re: u64 = senders.iter().map(|s| s.stats().retransmits).sum();
    println!(
        "sent {} tuples in {packets} packets ({re} retransmissions) in {:.3} s",
        tuples.len(),
        t0.elapsed().as_secs_f64()
    );
    Ok(())
}

fn senders_for(
    tuples: &[Tuple],
    first: u8,
    channels: u8,
    job: &JobArgs,
) -> anyhow::Result<Vec<KvSender>> {
    split_channels(tuples, channels as usize)
        .iter()
        .enumerate()
        .map(|(i, t)| {
            KvSender::new(
                SenderConfig {
                    job: job.job,
                    channel: first + i as u8,
                    arrays: job.arrays,
                    window: job.window,
                    retransmit_after: job.rto_us,
                },
                t,
            )
            .map_err(|e| input_error(e.to_string()))
        })
        .collect()
}

fn receiver_for(
    job: &JobArgs,
    channels: u16,
    swap_after: u64,
    drain: bool,
) -> anyhow::Result<KvReceiver> {
    KvReceiver::new(ReceiverConfig {
        job: job.job,
        arrays: job.arrays,
        size: job.size,
        window: job.window,
        channels: (0..channels).map(|c| c as u8).collect(),
        swap_after: (swap_after > 0 && drain).then_some(swap_after),
        retransmit_after: job.rto_us,
        drain,
    })
    .map_err(|e| input_error(e.to_string()))
}

fn run_recv(a: &RecvArgs) -> anyhow::Result<()> {
    a.job.check()?;
    if a.channels == 0 || a.channels > 256 {
        bail!(input_error(format!(
            "--channels {} must be in 1..=256",
            a.channels
        )));
    }
    let mut rx = receiver_for(&a.job, a.channels, a.swap_after, true)?;
    let mut link = UdpLink::bind(a.bind).with_context(|| format!("cannot bind {}", a.bind))?;
    // Learn nothing from the wire: the switch knows this address from its job entry.
    drive_receiver(
        &mut link,
        a.switch,
        &mut rx,
        Duration::from_micros(1),
        Duration::from_secs(a.job.timeout_s.max(60)),
        None,
    )?;
    write_sums(&a.out, rx.sums())?;
    let st = rx.stats();
    println!(
        "{} keys written to {}; receiver aggregated {} tuples itself, merged {} from the switch ({} swaps)",
        rx.sums().len(),
        a.out.display(),
        st.local_tuples,
        st.fetched,
        st.swaps
    );
    Ok(())
}

/// A validated `fanin kv allreduce`.
#[derive(Debug, Clone)]
pub struct KvRun {
    /// Each sender's tuples.
    pub streams: Vec<Vec<Tuple>>,
    /// Data channels per sender.
    pub channels_per_sender: u8,
    /// The job's shape.
    pub job: JobArgs,
    /// Swap after this many forwarded packets (0: only at the end).
    pub swap_after: u64,
    /// Faults on the switch's socket.
    pub faults: Faults,
    /// Check the sums.
    pub verify: bool,
    /// Senders address the receiver directly (one sender; no switch aggregation): the
    /// "receiver aggregates everything itself" baseline.
    pub direct: bool,
}

impl AllreduceArgs {
    /// Validates the flags and generates the streams.
    pub fn validate(&self) -> anyhow::Result<KvRun> {
        self.job.check()?;
        if self.senders == 0 || self.channels_per_sender == 0 {
            bail!(input_error(
                "--senders and --channels-per-sender must be at least 1"
            ));
        }
        if self.senders as u16 * self.channels_per_sender as u16 > 256 {
            bail!(input_error(format!(
                "{} senders × {} channels exceed the 256 data channels of a job",
                self.senders, self.channels_per_sender
            )));
        }
        if self.keys == 0 {
            bail!(input_error("--keys must be at least 1"));
        }
        let streams = (0..self.senders)
            .map(|s| synthetic(self.dist, self.keys, self.tuples, self.seed + s as u64))
            .collect();
        Ok(KvRun {
            streams,
            channels_per_sender: self.channels_per_sender,
            job: self.job.clone(),
            swap_after: self.swap_after,
            faults: self.faults.faults()?,
            verify: self.verify,
            direct: false,
        })
    }
}

/// The outcome of a local key-value run.
#[derive(Debug, Clone)]
pub struct KvReport {
    /// Tuples sent by all senders.
    pub tuples: u64,
    /// Data packets sent (first transmissions).
    pub packets: u64,
    /// Retransmissions (data and FIN).
    pub retransmits: u64,
    /// Receiver counters.
    pub receiver: ReceiverStats,
    /// Wall time from the first send to the receiver's result.
    pub elapsed: Duration,
    /// Distinct keys in the result.
    pub keys: usize,
    /// Keys whose sum differs from the local one (0 without verification).
    pub mismatches: usize,
    /// The first mismatch, described.
    pub first_mismatch: String,
    /// Whether sums were checked.
    pub verified: bool,
}

impl KvReport {
    /// Share of tuples aggregated in the switch (not by the receiver itself).
    pub fn in_switch(&self) -> f64 {
        if self.tuples == 0 {
            return 0.0;
        }
        1.0 - self.receiver.local_tuples as f64 / self.tuples as f64
    }
    /// Tuples per second end to end.
    pub fn tuples_per_sec(&self) -> f64 {
        self.tuples as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// One-paragraph summary.
    pub fn summary(&self) -> String {
        let mut s = format!(
            "{} tuples in {} packets ({} retransmissions) in {:.3} s: {:.0} tuples/s; {:.1}% aggregated in the switch, {} swaps, {} entries fetched; {} keys",
            self.tuples,
            self.packets,
            self.retransmits,
            self.elapsed.as_secs_f64(),
            self.tuples_per_sec(),
            100.0 * self.in_switch(),
            self.receiver.swaps,
            self.receiver.fetched,
            self.keys
        );
        if self.verified {
            if self.mismatches == 0 {
                s += "; verified: every key's sum is exact";
            } else {
                let _ = write!(s, "; {} keys WRONG", self.mismatches);
            }
        }
        s
    }
}

/// Runs a local switch (unless `direct`), the senders and the receiver on loopback.
pub fn allreduce(cfg: &KvRun, stop: Option<Arc<AtomicBool>>) -> anyhow::Result<KvReport> {
    let n = cfg.streams.len();
    if cfg.direct && n != 1 {
        bail!("a direct run has exactly one sender");
    }
    let (base, mut socks) = bind_consecutive(n + 2)?;
    let sw_addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, base);
    let rx_addr = SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + 1);
    let channels = n as u16 * cfg.channels_per_sender as u16;
    let mut sc = SwitchConfig::new("kv", mac_for(*sw_addr.ip()), *sw_addr.ip());
    sc.udp_port = base;
    sc.kv_jobs.push(KvJobEntry {
        job: cfg.job.job,
        arrays: cfg.job.arrays,
        size: cfg.job.size,
        channels,
        window: cfg.job.window,
        receiver: Endpoint {
            mac: mac_for(*rx_addr.ip()),
            ip: *rx_addr.ip(),
            udp_port: rx_addr.port(),
            port: 0,
        },
    });
    let mut sw = SoftSwitch::new(&sc).map_err(|e| input_error(e.to_string()))?;
    let sw_sock = socks.remove(0);
    let rx_sock = socks.remove(0);
    let stop = stop.unwrap_or_default();
    let sw_stop = Arc::new(AtomicBool::new(false));
    let (_stats_tx, stats_rx) = mpsc::channel();
    let ctl = Control::new(sw_stop.clone(), stats_rx);
    let faults = cfg.faults.clone();
    let direct = cfg.direct;
    let sw_thread =
        thread::Builder::new()
            .name("switchd".into())
            .spawn(move || -> std::io::Result<()> {
                if direct {
                    return Ok(());
                }
                let udp = UdpLink::from_socket(sw_sock)?;
                let mut link: Box<dyn Link> = if faults.is_none() {
                    Box::new(udp)
                } else {
                    Box::new(Faulty::new(udp, faults))
                };
                switchd::run("kv", &mut sw, &mut link, &ctl);
                Ok(())
            })?;
    let tick = Duration::from_micros(1);
    let timeout = cfg.job.timeout();
    let mut rx = receiver_for(&cfg.job, channels, cfg.swap_after, !direct)?;
    let rx_stop = stop.clone();
    // In a direct run the receiver's "switch" is the one sender.
    let rx_peer = if direct {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + 2)
    } else {
        sw_addr
    };
    let t0 = Instant::now();
    let rx_thread = thread::Builder::new().name("receiver".into()).spawn(
        move || -> anyhow::Result<KvReceiver> {
            let mut link = UdpLink::from_socket(rx_sock)?;
            drive_receiver(&mut link, rx_peer, &mut rx, tick, timeout, Some(&rx_stop))?;
            Ok(rx)
        },
    )?;
    let mut handles = Vec::new();
    for (i, sock) in socks.into_iter().enumerate() {
        let first = i as u8 * cfg.channels_per_sender;
        let mut senders = senders_for(&cfg.streams[i], first, cfg.channels_per_sender, &cfg.job)?;
        let stop = stop.clone();
        let to = if direct { rx_addr } else { sw_addr };
        handles.push(thread::Builder::new().name(format!("sender{i}")).spawn(
            move || -> anyhow::Result<Vec<KvSender>> {
                let mut link = UdpLink::from_socket(sock)?;
                drive_senders(&mut link, to, &mut senders, tick, timeout, Some(&stop))?;
                Ok(senders)
            },
        )?);
    }
    let mut done = Vec::new();
    let mut first_err = None;
    for (i, h) in handles.into_iter().enumerate() {
        match h.join().expect("sender thread panicked") {
            Ok(s) => done.extend(s),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                first_err.get_or_insert(e.context(format!("sender {i}")));
            }
        }
    }
    let rx = match rx_thread.join().expect("receiver thread panicked") {
        Ok(r) => Some(r),
        Err(e) => {
            first_err.get_or_insert(e.context("receiver"));
            None
        }
    };
    let elapsed = t0.elapsed();
    sw_stop.store(true, Ordering::Relaxed);
    sw_thread.join().expect("switch thread panicked")?;
    if let Some(e) = first_err {
        return Err(e);
    }
    let rx = rx.expect("no error, so the receiver finished");
    let (mut mismatches, mut first_mismatch) = (0, String::new());
    if cfg.verify {
        let want = local_sums(cfg.streams.iter().flatten());
        let got = rx.sums();
        for k in want
            .keys()
            .chain(got.keys().filter(|k| !want.contains_key(k)))
        {
            let (w, g) = (want.get(k), got.get(k));
            if w != g {
                mismatches += 1;
                if first_mismatch.is_empty() {
                    first_mismatch = format!("key {k}: got {g:?}, expected {w:?}");
                }
            }
        }
    }
    Ok(KvReport {
        tuples: cfg.streams.iter().map(|s| s.len() as u64).sum(),
        packets: done.iter().map(|s| s.packets() as u64).sum(),
        retransmits: done.iter().map(|s| s.stats().retransmits).sum(),
        receiver: rx.stats(),
        elapsed,
        keys: rx.sums().len(),
        mismatches,
        first_mismatch,
        verified: cfg.verify,
    })
}
