//! `fanin switchd`: its arguments, validated into a [`SwitchdConfig`], and the run.

use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, UdpSocket};
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{mpsc, Arc};

use anyhow::Context;
use clap::Args;
use fanin_proto::config::SwitchConfig;
use fanin_proto::wire::{FANIN_UDP_PORT, MAX_WORKERS};

use super::{read_json, static_cap, FaultArgs};
use crate::error::input_error;
use crate::link::{Faults, Faulty, Link, PcapTap, UdpLink};
use crate::switchd::{self, Control, SingleJob, SoftSwitch};

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
