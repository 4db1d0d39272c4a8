//! The software switch: UDP datagrams in, [`fanin_proto::model::Switch`] in the middle,
//! UDP datagrams out. The host adds no semantics of its own: it hands each datagram and its
//! source to the model's datagram path and sends the datagrams the model returns (the
//! frame path, `--frame-path`, wraps them in frames and parses the model's frames back).

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fanin_proto::config::{
    Child, ConfigError, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig,
};
use fanin_proto::model::{DatagramOutput, Switch, Verdict};
use fanin_proto::wire::frame::classify;
use fanin_proto::wire::{Datagram, FrameKind, L4Addr};
use serde::{Deserialize, Serialize};

use crate::link::{mac_for, Dgram, FaultCounts, Link};

/// The reference model behind a datagram interface.
///
/// Every peer the configuration names (children and parents of every job) gets a model port
/// of its own, `1..`, in order of first mention; datagrams from anyone else arrive on port 0.
/// So the model's link checks (bypass packets from a child's link, results from the parent's)
/// are exact source checks here. Ticks are microseconds.
pub struct SoftSwitch {
    sw: Switch,
    me: L4Addr,
    cfg: SwitchConfig,
    model_cfg: SwitchConfig,
    pp: PeerPorts,
    tick_every: Option<u64>,
    last_tick: u64,
    /// Jobs registered over the control port, which a reload from the file keeps.
    registered: Vec<JobEntry>,
    /// Datagrams the model produced that were not UDP (cannot happen with a valid config).
    pub unroutable: u64,
    /// Take the model's frame path instead of its datagram path (to measure the difference).
    pub frame_path: bool,
    /// Frame-switch mode (`--link`): model port → UDP peer; every datagram is a frame.
    links: Option<Links>,
    /// Frames from addresses that are no link (frame-switch mode), dropped.
    pub unknown_peer: u64,
}

/// The links of a frame switch: model port `p` is a UDP tunnel to `peer[p]`.
#[derive(Debug, Clone, Default)]
struct Links {
    by_addr: HashMap<SocketAddrV4, u8>,
    by_port: Vec<Option<SocketAddrV4>>,
}

impl Links {
    /// Checks the links against a configuration: ports in range, distinct, every route's
    /// port linked.
    fn new(cfg: &SwitchConfig, links: &[(u8, SocketAddrV4)]) -> Result<Self, ConfigError> {
        let bad = |value: u64, why: &'static str| ConfigError::BadParam {
            name: "link",
            value,
            why,
        };
        let mut l = Links {
            by_addr: HashMap::new(),
            by_port: vec![None; cfg.params.ports as usize],
        };
        for &(p, a) in links {
            if p as usize >= l.by_port.len() {
                return Err(bad(
                    p as u64,
                    "a --link port must be below the configuration's params.ports",
                ));
            }
            if l.by_port[p as usize].is_some() {
                return Err(bad(p as u64, "two --link flags name the same port"));
            }
            if l.by_addr.insert(a, p).is_some() {
                return Err(bad(p as u64, "two --link flags name the same address"));
            }
            l.by_port[p as usize] = Some(a);
        }
        if let Some(r) = cfg
            .routes
            .iter()
            .find(|r| l.by_port.get(r.port as usize).copied().flatten().is_none())
        {
            return Err(bad(
                r.port as u64,
                "a route leaves on a port without --link",
            ));
        }
        Ok(l)
    }
}

/// Model ports of a switchd: every peer address keeps the number it first got.
#[derive(Debug, Clone, Default)]
struct PeerPorts {
    ports: HashMap<SocketAddrV4, u8>,
    peers: Vec<SocketAddrV4>,
}

/// Model ports: 0 for strangers, one per peer address (at most 254).
const MODEL_PORTS: u8 = 255;

/// The model configuration switchd runs for `cfg`: every peer on a port of its own (port 0
/// for strangers; peers seen before keep their numbers), and a random first block for each
/// job whose entry leaves it open, so a restarted switchd never hands out its predecessor's
/// block ids again.
fn model_config(cfg: &SwitchConfig, pp: &mut PeerPorts) -> Result<SwitchConfig, ConfigError> {
    let mut m = cfg.clone();
    let mut port_of = |e: &mut Endpoint| -> Result<(), ConfigError> {
        let a = sock(e);
        if !pp.ports.contains_key(&a) {
            if pp.peers.len() + 1 >= MODEL_PORTS as usize {
                return Err(ConfigError::BadParam {
                    name: "peers",
                    value: pp.peers.len() as u64 + 1,
                    why: "at most 254 distinct peer addresses per switchd",
                });
            }
            pp.peers.push(a);
            pp.ports.insert(a, pp.peers.len() as u8);
        }
        e.port = pp.ports[&a];
        Ok(())
    };
    for j in &mut m.jobs {
        for c in &mut j.children {
            port_of(&mut c.endpoint)?;
        }
        if let Role::Inner { parent, .. } = &mut j.role {
            port_of(parent)?;
        }
        if j.trust.sessions && j.trust.first_block.is_none() {
            j.trust.first_block = Some(rand::random());
        }
    }
    m.params.ports = MODEL_PORTS;
    m.routes.clear();
    Ok(m)
}

/// Refuses dynamic-mode (Canary) jobs on a datagram switch: they intercept traffic addressed
/// to others, which only a frame switch (`--link`) sees (docs/host.md, "Dynamic jobs").
fn refuse_dynamic(cfg: &SwitchConfig) -> Result<(), ConfigError> {
    match cfg
        .jobs
        .iter()
        .find(|j| matches!(j.mode, fanin_proto::config::Mode::Dynamic { .. }))
    {
        Some(j) => Err(ConfigError::BadJob {
            job: j.job,
            why: "a dynamic (Canary) job needs switchd as a frame switch: give its links with --link PORT=ADDR (docs/host.md, \"Dynamic jobs\"), or use mode static or timeout".into(),
        }),
        None => Ok(()),
    }
}

impl SoftSwitch {
    /// Builds the model from a configuration.
    pub fn new(cfg: &SwitchConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        refuse_dynamic(cfg)?;
        let mut pp = PeerPorts::default();
        let m = model_config(cfg, &mut pp)?;
        let sw = Switch::new(&m)?;
        Ok(Self {
            me: sw.address(),
            sw,
            tick_every: tick_every(&m),
            cfg: cfg.clone(),
            model_cfg: m,
            pp,
            last_tick: 0,
            registered: Vec::new(),
            unroutable: 0,
            frame_path: false,
            links: None,
            unknown_peer: 0,
        })
    }

    /// A frame switch: model port `p` of each `(p, addr)` is a UDP tunnel to `addr`, every
    /// datagram carries an Ethernet frame, and the configuration's ports and routes are used
    /// as they are. This is how switchd runs dynamic (Canary) jobs (docs/host.md).
    pub fn with_links(
        cfg: &SwitchConfig,
        links: &[(u8, SocketAddrV4)],
    ) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let l = Links::new(cfg, links)?;
        let sw = Switch::new(cfg)?;
        Ok(Self {
            me: sw.address(),
            sw,
            tick_every: tick_every(cfg),
            cfg: cfg.clone(),
            model_cfg: cfg.clone(),
            pp: PeerPorts::default(),
            last_tick: 0,
            registered: Vec::new(),
            unroutable: 0,
            frame_path: true,
            links: Some(l),
            unknown_peer: 0,
        })
    }

    /// Jobs registered over the control port (and not removed or replaced by the file since).
    pub fn registered(&self) -> &[JobEntry] {
        &self.registered
    }

    /// Adds a job entry, or replaces the one with its id, as the control port's `register`
    /// does: validated as a reload of the running configuration plus this entry. A later
    /// reload from the file keeps it (see [`SoftSwitch::reload_file`]).
    pub fn register(&mut self, entry: JobEntry) -> Result<String, String> {
        let job = entry.job;
        let mut cfg = self.cfg.clone();
        cfg.jobs.retain(|j| j.job != job);
        cfg.jobs.push(entry.clone());
        let m = self.reload(&cfg)?;
        self.registered.retain(|j| j.job != job);
        self.registered.push(entry);
        Ok(m)
    }

    /// Removes a job from the job table (registered or from the file) until the next reload
    /// brings it back from the file.
    pub fn remove(&mut self, job: u16) -> Result<String, String> {
        if !self.cfg.jobs.iter().any(|j| j.job == job) {
            return Err(format!("no job {job} in the job table"));
        }
        let mut cfg = self.cfg.clone();
        cfg.jobs.retain(|j| j.job != job);
        let m = self.reload(&cfg)?;
        self.registered.retain(|j| j.job != job);
        Ok(m)
    }

    /// Reloads from a configuration file's contents, keeping the jobs registered over the
    /// control port; a file entry with the same job id replaces the registered one. Nothing
    /// changes on error (a registered job's slots overlapping a file job's, for instance).
    pub fn reload_file(&mut self, file: &SwitchConfig) -> Result<String, String> {
        let mut cfg = file.clone();
        let (replaced, kept): (Vec<_>, Vec<_>) = self
            .registered
            .iter()
            .cloned()
            .partition(|r| file.jobs.iter().any(|j| j.job == r.job));
        cfg.jobs.extend(kept.iter().cloned());
        let mut m = self.reload(&cfg).map_err(|e| {
            format!(
                "{e} (with the {} job(s) registered over the control port kept)",
                kept.len()
            )
        })?;
        for r in &replaced {
            m += &format!(
                "; job {} from the file replaces the one registered over the control port",
                r.job
            );
        }
        self.registered = kept;
        Ok(m)
    }

    /// The configuration as loaded (before switchd's port numbering).
    pub fn config(&self) -> &SwitchConfig {
        &self.cfg
    }

    /// Resets `job` (frees its copies, closes its session); false if there is no such job.
    pub fn reset_job(&mut self, job: u16) -> bool {
        self.sw.reset_job(job)
    }

    /// Loads a new configuration: jobs added, changed (and so reset) or removed. The identity
    /// and table sizes cannot change while running. Nothing changes on error.
    pub fn reload(&mut self, cfg: &SwitchConfig) -> Result<String, String> {
        cfg.validate().map_err(|e| e.to_string())?;
        if self.links.is_none() {
            refuse_dynamic(cfg).map_err(|e| e.to_string())?;
        }
        let old = &self.cfg;
        if (cfg.ip, cfg.udp_port, cfg.mac) != (old.ip, old.udp_port, old.mac)
            || cfg.params != old.params
        {
            return Err(
                "the new configuration changes the switch's address or table sizes: restart switchd for that".into(),
            );
        }
        let mut pp = self.pp.clone();
        let m = match &self.links {
            Some(l) => {
                let links: Vec<_> = l.by_addr.iter().map(|(a, p)| (*p, *a)).collect();
                Links::new(cfg, &links).map_err(|e| e.to_string())?;
                if cfg.routes != old.routes {
                    return Err(
                        "the new configuration changes the routes: restart switchd for that".into(),
                    );
                }
                cfg.clone()
            }
            None => model_config(cfg, &mut pp).map_err(|e| e.to_string())?,
        };
        // Applied to a copy, so a refused entry changes nothing.
        let mut sw = self.sw.clone();
        let mut changed = Vec::new();
        for j in &old.jobs {
            if !cfg.jobs.iter().any(|n| n.job == j.job) {
                sw.remove_job(j.job);
                changed.push(format!("job {} removed", j.job));
            }
        }
        for (n, mj) in cfg.jobs.iter().zip(&m.jobs) {
            if old.jobs.iter().any(|o| o == n) {
                continue;
            }
            sw.set_job(mj.clone()).map_err(|e| e.to_string())?;
            changed.push(format!(
                "job {} loaded (its copies freed, its session closed)",
                n.job
            ));
        }
        self.sw = sw;
        self.pp = pp;
        self.tick_every = tick_every(&m);
        self.model_cfg = m;
        self.cfg = cfg.clone();
        if changed.is_empty() {
            Ok("configuration unchanged".into())
        } else {
            Ok(changed.join("; "))
        }
    }

    /// The model.
    pub fn model(&self) -> &Switch {
        &self.sw
    }

    /// Feeds one received datagram at tick `now`; appends the datagrams to send to `out`.
    /// It takes the model's datagram path (no frame built or parsed; docs/host.md).
    pub fn handle(
        &mut self,
        now: u64,
        from: SocketAddrV4,
        payload: &[u8],
        out: &mut Vec<Dgram>,
    ) -> Verdict {
        if self.links.is_some() {
            return self.handle_linked(now, from, payload, out);
        }
        if self.frame_path {
            return self.handle_frame(now, from, payload, out);
        }
        let src = L4Addr {
            mac: mac_for(*from.ip()),
            ip: *from.ip(),
            port: from.port(),
        };
        let port = self.pp.ports.get(&from).copied().unwrap_or(STRANGER_PORT);
        let r = self.sw.handle_datagram(now, port, src, payload);
        out.extend(r.outputs.into_iter().map(dgram));
        r.verdict
    }

    /// Frame-switch mode: the datagram from link `from` is a frame on that link's port; each
    /// output frame goes to the link of its port.
    fn handle_linked(
        &mut self,
        now: u64,
        from: SocketAddrV4,
        frame: &[u8],
        out: &mut Vec<Dgram>,
    ) -> Verdict {
        let links = self.links.as_ref().expect("frame-switch mode");
        let Some(&port) = links.by_addr.get(&from) else {
            self.unknown_peer += 1;
            return Verdict::NonIp;
        };
        let r = self.sw.handle(now, port, frame);
        self.tunnel(r.outputs, out);
        r.verdict
    }

    /// Sends model frames down the links of their ports.
    fn tunnel(&mut self, frames: Vec<fanin_proto::model::Output>, out: &mut Vec<Dgram>) {
        let links = self.links.as_ref().expect("frame-switch mode");
        for o in frames {
            match links.by_port.get(o.port as usize).copied().flatten() {
                Some(peer) => out.push(Dgram::new(peer, o.frame)),
                None => self.unroutable += 1,
            }
        }
    }

    /// Feeds one received datagram through the model's frame path (wrapped in a frame, the
    /// outputs parsed back): what [`SoftSwitch::handle`] did before the datagram path, and
    /// does with [`SoftSwitch::frame_path`] set.
    pub fn handle_frame(
        &mut self,
        now: u64,
        from: SocketAddrV4,
        payload: &[u8],
        out: &mut Vec<Dgram>,
    ) -> Verdict {
        // The kernel has verified the UDP checksum; 0 ("none") spares computing it again.
        let frame = Datagram {
            src: L4Addr {
                mac: mac_for(*from.ip()),
                ip: *from.ip(),
                port: from.port(),
            },
            dst: self.me,
            payload,
        }
        .to_frame(false);
        let port = self.pp.ports.get(&from).copied().unwrap_or(STRANGER_PORT);
        let r = self.sw.handle(now, port, &frame);
        for o in r.outputs {
            match classify(&o.frame) {
                FrameKind::Ipv4 {
                    udp: Some(Ok(d)), ..
                } => out.push(Dgram::new(
                    SocketAddrV4::new(d.dst.ip, d.dst.port),
                    d.payload.to_vec(),
                )),
                _ => self.unroutable += 1,
            }
        }
        r.verdict
    }

    /// Runs the model's timer scan when due (timeout-mode jobs only).
    pub fn tick(&mut self, now: u64, out: &mut Vec<Dgram>) {
        let Some(every) = self.tick_every else { return };
        if now < self.last_tick + every {
            return;
        }
        self.last_tick = now;
        if self.links.is_some() {
            let frames = self.sw.tick(now);
            self.tunnel(frames, out);
            return;
        }
        out.extend(self.sw.tick_datagrams(now).into_iter().map(dgram));
    }

    /// Counters as a serialisable snapshot.
    pub fn snapshot(&self, name: &str, faults: FaultCounts, send_errors: u64) -> Snapshot {
        let c = self.sw.counters();
        let (used, peers) = match &self.links {
            Some(l) => (
                l.by_port.len(),
                l.by_port
                    .iter()
                    .map(|a| a.map_or("no link".to_string(), |a| a.to_string()))
                    .collect(),
            ),
            None => (
                self.pp.peers.len() + 1,
                std::iter::once("strangers".to_string())
                    .chain(self.pp.peers.iter().map(|p| p.to_string()))
                    .collect(),
            ),
        };
        Snapshot {
            name: name.into(),
            counters: c
                .named()
                .into_iter()
                .chain(
                    (!self.sw.kv().is_empty())
                        .then(|| self.sw.kv().counters().named())
                        .into_iter()
                        .flatten(),
                )
                .map(|(k, v)| (k.to_string(), v))
                .collect(),
            ports: c.ports[..used.min(c.ports.len())].to_vec(),
            peers,
            host: HostCounters {
                send_errors,
                unroutable: self.unroutable,
                unknown_peer: self.unknown_peer,
                faults,
            },
        }
    }
}

/// The output as a datagram to send: its buffer (the model's frame) passed on, no copy.
fn dgram(o: DatagramOutput) -> Dgram {
    let peer = SocketAddrV4::new(o.dst.ip, o.dst.port);
    let (buf, head) = o.into_buffer();
    Dgram::with_head(peer, buf, head)
}

fn sock(e: &Endpoint) -> SocketAddrV4 {
    SocketAddrV4::new(e.ip, e.udp_port)
}

/// The model port of datagrams from addresses the configuration does not name.
pub const STRANGER_PORT: u8 = 0;

/// How often the timer scan runs (µs): a quarter of the shortest flush or idle-reclaim time,
/// at least every 1 ms for flushes and every 100 ms for idle reclaims.
fn tick_every(cfg: &SwitchConfig) -> Option<u64> {
    cfg.jobs
        .iter()
        .flat_map(|j| {
            let flush = match j.mode {
                Mode::Timeout { flush_after, .. } | Mode::Dynamic { flush_after, .. } => {
                    Some((flush_after / 4).clamp(1, 1000))
                }
                Mode::Static => None,
            };
            let idle =
                (j.trust.reclaim_idle > 0).then(|| (j.trust.reclaim_idle / 4).clamp(1, 100_000));
            flush.into_iter().chain(idle)
        })
        .min()
}

/// Counters of the host around the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCounters {
    /// Datagrams the socket failed to send.
    pub send_errors: u64,
    /// Model outputs that were not UDP datagrams, or (frame switch) left on a port without a link.
    pub unroutable: u64,
    /// Frame switch: datagrams from an address that is no link, dropped.
    #[serde(default)]
    pub unknown_peer: u64,
    /// Injected faults.
    #[serde(default)]
    pub faults: FaultCounts,
}

/// Everything `fanin stats` shows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Snapshot {
    /// Switch name.
    pub name: String,
    /// Model counters in register order.
    pub counters: Vec<(String, u64)>,
    /// Per-port counters: port 0 holds datagrams from unconfigured addresses, port `i` those
    /// of `peers[i]`.
    pub ports: Vec<fanin_proto::model::PortCounters>,
    /// Who each port is.
    #[serde(default)]
    pub peers: Vec<String>,
    /// Host-side counters.
    pub host: HostCounters,
}

impl Snapshot {
    /// A counter by name (0 if absent).
    pub fn get(&self, name: &str) -> u64 {
        self.counters
            .iter()
            .find(|(k, _)| k == name)
            .map_or(0, |(_, v)| *v)
    }

    /// Aligned `name value` lines.
    pub fn to_text(&self) -> String {
        let mut s = format!("switch {}\n", self.name);
        for (k, v) in &self.counters {
            s += &format!("  {k:<18} {v}\n");
        }
        for (i, p) in self.ports.iter().enumerate() {
            let who = self
                .peers
                .get(i)
                .map_or(String::new(), |w| format!(" ({w})"));
            s += &format!(
                "  port {i}{who}: rx {} packets {} bytes, tx {} packets {} bytes\n",
                p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes
            );
        }
        let f = self.host.faults;
        s += &format!(
            "  host: {} send errors, {} unroutable, {} from no link; faults: {} lost, {} duplicated, {} reordered\n",
            self.host.send_errors, self.host.unroutable, self.host.unknown_peer, f.lost, f.duplicated, f.reordered
        );
        s
    }
}

/// What a client asks switchd on its TCP control port: one JSON line (none: `stats`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "op", rename_all = "snake_case")]
pub enum ControlRequest {
    /// The counters ([`Snapshot`]).
    Stats,
    /// Free a job's slot copies and close its session.
    Reset {
        /// The job.
        job: u16,
    },
    /// Read the configuration file again (as SIGHUP does).
    Reload,
    /// Add a job entry, or replace the one with its job id; validated exactly as a
    /// configuration file is (a reload of the running configuration plus this entry). A
    /// later reload from the file keeps it, unless the file has an entry with its job id.
    Register {
        /// The entry.
        entry: Box<JobEntry>,
    },
    /// Remove a job from the job table.
    Remove {
        /// The job.
        job: u16,
    },
}

/// switchd's answer to a reset or reload.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ControlReply {
    /// True if it was done.
    pub ok: bool,
    /// What was done, or why not.
    pub message: String,
}

/// A request to the switch loop, with where to send the answer.
pub enum Request {
    /// A counter snapshot.
    Stats(Sender<Snapshot>),
    /// A reset or reload.
    Control(ControlRequest, Sender<ControlReply>),
}

/// Serves the control port at `listener`: each connection sends at most one request line
/// and gets one JSON document back.
pub fn serve_stats(listener: TcpListener, requests: Sender<Request>, stop: Arc<AtomicBool>) {
    listener.set_nonblocking(true).ok();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((mut conn, _)) => {
                let body = match read_request(&mut conn) {
                    Ok(ControlRequest::Stats) => {
                        let (tx, rx) = mpsc::channel();
                        if requests.send(Request::Stats(tx)).is_err() {
                            return;
                        }
                        rx.recv_timeout(Duration::from_secs(2))
                            .ok()
                            .map(|s| serde_json::to_string(&s).expect("snapshot serialises"))
                    }
                    Ok(req) => {
                        let (tx, rx) = mpsc::channel();
                        if requests.send(Request::Control(req, tx)).is_err() {
                            return;
                        }
                        rx.recv_timeout(Duration::from_secs(5))
                            .ok()
                            .map(|r| serde_json::to_string(&r).expect("reply serialises"))
                    }
                    Err(message) => Some(
                        serde_json::to_string(&ControlReply { ok: false, message })
                            .expect("reply serialises"),
                    ),
                };
                if let Some(b) = body {
                    reply(conn, &b);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

/// Reads one request line; a client that sends nothing within 200 ms asks for stats.
fn read_request(conn: &mut TcpStream) -> Result<ControlRequest, String> {
    conn.set_nonblocking(false).ok();
    conn.set_read_timeout(Some(Duration::from_millis(200))).ok();
    let mut buf = Vec::new();
    let mut byte = [0u8; 1];
    while buf.len() < 4096 {
        match conn.read(&mut byte) {
            Ok(1) if byte[0] != b'\n' => buf.push(byte[0]),
            _ => break,
        }
    }
    let line = String::from_utf8_lossy(&buf);
    if line.trim().is_empty() {
        return Ok(ControlRequest::Stats);
    }
    serde_json::from_str(line.trim()).map_err(|e| {
        format!("bad control request {:?}: {e} (send {{\"op\":\"stats\"}}, {{\"op\":\"reset\",\"job\":N}}, {{\"op\":\"reload\"}}, {{\"op\":\"register\",\"entry\":{{...}}}} or {{\"op\":\"remove\",\"job\":N}})", line.trim())
    })
}

fn reply(mut conn: TcpStream, body: &str) {
    conn.set_write_timeout(Some(Duration::from_secs(2))).ok();
    let _ = conn.write_all(body.as_bytes());
}

fn ask(addr: SocketAddrV4, req: &ControlRequest, timeout: Duration) -> std::io::Result<String> {
    let mut c = TcpStream::connect_timeout(&addr.into(), timeout)?;
    c.set_read_timeout(Some(timeout))?;
    let mut line = serde_json::to_string(req).expect("request serialises");
    line.push('\n');
    c.write_all(line.as_bytes())?;
    let mut s = String::new();
    c.read_to_string(&mut s)?;
    Ok(s)
}

/// Fetches a snapshot from a running switchd's control (stats) address.
pub fn fetch_stats(addr: SocketAddrV4, timeout: Duration) -> std::io::Result<Snapshot> {
    let s = ask(addr, &ControlRequest::Stats, timeout)?;
    serde_json::from_str(&s).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// Sends a reset or reload to a running switchd and returns its answer.
pub fn control(
    addr: SocketAddrV4,
    req: &ControlRequest,
    timeout: Duration,
) -> std::io::Result<ControlReply> {
    let s = ask(addr, req, timeout)?;
    serde_json::from_str(&s).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The switch loop's handles from outside.
pub struct Control {
    /// Set to stop the loop.
    pub stop: Arc<AtomicBool>,
    /// Stats and control requests.
    pub stats: Receiver<Request>,
    /// Set (by SIGHUP) to reload the configuration file.
    pub reload: Arc<AtomicBool>,
    /// The configuration file, if switchd was started with one.
    pub config_path: Option<std::path::PathBuf>,
}

impl Control {
    /// Handles with no configuration file to reload (in-process switches).
    pub fn new(stop: Arc<AtomicBool>, stats: Receiver<Request>) -> Self {
        Self {
            stop,
            stats,
            reload: Arc::new(AtomicBool::new(false)),
            config_path: None,
        }
    }
}

/// Reads and applies the configuration file again.
fn reload_from(sw: &mut SoftSwitch, path: Option<&std::path::Path>) -> ControlReply {
    let Some(path) = path else {
        return ControlReply {
            ok: false,
            message: "switchd was started without --config: nothing to reload".into(),
        };
    };
    let r = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))
        .and_then(|t| {
            serde_json::from_str::<SwitchConfig>(&t)
                .map_err(|e| format!("{} is not valid: {e}", path.display()))
        })
        .and_then(|cfg| sw.reload_file(&cfg));
    match r {
        Ok(message) => ControlReply { ok: true, message },
        Err(e) => ControlReply {
            ok: false,
            message: format!("reload refused, nothing changed: {e}"),
        },
    }
}

fn answer(
    sw: &mut SoftSwitch,
    req: ControlRequest,
    path: Option<&std::path::Path>,
) -> ControlReply {
    match req {
        ControlRequest::Reset { job } if sw.reset_job(job) => ControlReply {
            ok: true,
            message: format!("job {job} reset: its copies freed, its session closed"),
        },
        ControlRequest::Reset { job } => ControlReply {
            ok: false,
            message: format!("no job {job} in the job table"),
        },
        ControlRequest::Reload => reload_from(sw, path),
        ControlRequest::Register { entry } => {
            let job = entry.job;
            applied(sw.register(*entry), &format!("register of job {job}"))
        }
        ControlRequest::Remove { job } if sw.config().jobs.iter().any(|j| j.job == job) => {
            applied(sw.remove(job), &format!("remove of job {job}"))
        }
        ControlRequest::Remove { job } => ControlReply {
            ok: false,
            message: format!("no job {job} in the job table"),
        },
        ControlRequest::Stats => ControlReply {
            ok: true,
            message: String::new(),
        },
    }
}

fn applied(r: Result<String, String>, what: &str) -> ControlReply {
    match r {
        Ok(message) => ControlReply { ok: true, message },
        Err(e) => ControlReply {
            ok: false,
            message: format!("{what} refused, nothing changed: {e}"),
        },
    }
}

/// Runs the switch over `link` until `ctl.stop` is set; returns the final snapshot.
pub fn run<L: Link + ?Sized>(
    name: &str,
    sw: &mut SoftSwitch,
    link: &mut L,
    ctl: &Control,
) -> Snapshot {
    let start = Instant::now();
    let mut out = Vec::with_capacity(crate::link::BATCH * 2);
    let mut send_errors = 0u64;
    let mut warned = false;
    while !ctl.stop.load(Ordering::Relaxed) {
        // Each datagram is handled where the link received it (no copy); the batch shares
        // the time it arrived at.
        let mut at = None;
        let r = link.recv_each(Duration::from_millis(1), &mut |peer, p| {
            let now = *at.get_or_insert_with(|| start.elapsed().as_micros() as u64);
            sw.handle(now, peer, p, &mut out);
        });
        if let Err(e) = r {
            eprintln!("fanin switchd: receive failed: {e}");
            std::thread::sleep(Duration::from_millis(1));
        }
        let now = at.unwrap_or_else(|| start.elapsed().as_micros() as u64);
        sw.tick(now, &mut out);
        if !out.is_empty() {
            // Each peer's datagrams together, in their order: a result multicast to N children
            // becomes N runs the link can send segmented (GSO) instead of N x blocks single
            // datagrams. Datagrams to different peers were never ordered with each other.
            out.sort_by_key(|d| d.peer);
            let n = out.len() as u64;
            if let Err(e) = link.send(&mut out) {
                send_errors += n.min(1);
                if !warned {
                    eprintln!("fanin switchd: {e} (further send errors are only counted)");
                    warned = true;
                }
            }
        }
        while let Ok(req) = ctl.stats.try_recv() {
            match req {
                Request::Stats(tx) => {
                    let _ = tx.send(sw.snapshot(name, link.fault_counts(), send_errors));
                }
                Request::Control(r, tx) => {
                    let a = answer(sw, r, ctl.config_path.as_deref());
                    eprintln!("fanin switchd: {}", a.message);
                    let _ = tx.send(a);
                }
            }
        }
        if ctl.reload.swap(false, Ordering::Relaxed) {
            let a = reload_from(sw, ctl.config_path.as_deref());
            eprintln!("fanin switchd: SIGHUP: {}", a.message);
        }
    }
    let _ = link.flush();
    sw.snapshot(name, link.fault_counts(), send_errors)
}

/// Flags for a single root job when no configuration file is given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SingleJob {
    /// Job id.
    pub job: u16,
    /// The workers, by rank (child index = rank).
    pub workers: Vec<SocketAddrV4>,
    /// Elements per packet (slot lanes).
    pub elements: u16,
    /// Slots of the job.
    pub slots: u32,
}

/// The configuration of a root switch at `me` serving one job.
pub fn single_job_config(me: SocketAddrV4, j: &SingleJob) -> SwitchConfig {
    let ip = if me.ip().is_unspecified() {
        Ipv4Addr::LOCALHOST
    } else {
        *me.ip()
    };
    let mut cfg = SwitchConfig::new("switchd", mac_for(ip), ip);
    cfg.udp_port = me.port();
    let n = j.workers.len();
    cfg.params = Params {
        slots: j.slots,
        elements: j.elements,
        max_children: n.clamp(1, 64) as u8,
        ports: (n + 1).clamp(2, 255) as u8,
        ..Params::default()
    };
    let ranks = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    cfg.jobs.push(JobEntry {
        job: j.job,
        role: Role::Root,
        mode: Mode::Static,
        degree_limit: n.min(255) as u8,
        children: j
            .workers
            .iter()
            .enumerate()
            .map(|(i, w)| Child {
                endpoint: Endpoint {
                    mac: mac_for(*w.ip()),
                    ip: *w.ip(),
                    udp_port: w.port(),
                    port: (1 + i).min(254) as u8,
                },
                ranks: 1 << i,
                below: 0,
            })
            .collect(),
        ranks,
        ranks_hi: vec![],
        slot_base: 0,
        slot_count: j.slots,
        quota: 0,
        trust: fanin_proto::config::Trust::default(),
    });
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanin_proto::plan::{build, star, Addressing, JobSpec};
    use rand::{Rng, SeedableRng};

    /// Register adds a validated job entry (a bad one changes nothing); remove takes it out.
    #[test]
    fn dynamic_jobs_are_refused_without_links() {
        let spec = fanin_proto::plan::JobSpec {
            job: 4,
            slot_count: 4,
            elements: 4,
            mode: fanin_proto::config::Mode::Dynamic {
                flush_after: 10,
                reclaim_after: 100,
            },
            addressing: fanin_proto::plan::Addressing::Network,
            trust: fanin_proto::config::Trust::OFF,
        };
        let dynamic = fanin_proto::plan::build(&fanin_proto::plan::star(2), spec)
            .unwrap()
            .switches
            .remove(0);
        let e = SoftSwitch::new(&dynamic).err().unwrap().to_string();
        assert!(
            e.starts_with("job 4: a dynamic (Canary) job needs switchd as a frame switch"),
            "{e}"
        );
        let mut stat = dynamic.clone();
        stat.jobs[0].mode = fanin_proto::config::Mode::Static;
        let mut sw = SoftSwitch::new(&stat).unwrap();
        let e = sw.reload(&dynamic).unwrap_err();
        assert!(
            e.starts_with("job 4: a dynamic (Canary) job needs switchd as a frame switch"),
            "{e}"
        );
        assert_eq!(sw.config(), &stat);
    }

    /// A frame switch: a frame from a link enters on that link's port, the model's output
    /// goes to the link of its port, and datagrams from no link are dropped and counted.
    #[test]
    fn a_frame_switch_maps_model_ports_to_links() {
        use fanin_proto::config::{Route, Trust};
        use fanin_proto::wire::{Flags, PacketType, Repr};
        let a = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
        let ip = |x| Ipv4Addr::new(10, 0, 0, x);
        let mut cfg = SwitchConfig::new("s", mac_for(ip(1)), ip(1));
        cfg.params.ports = 3;
        cfg.params.slots = 4;
        cfg.params.elements = 4;
        cfg.routes = vec![
            Route {
                ip: ip(10),
                port: 1,
            },
            Route {
                ip: ip(11),
                port: 2,
            },
        ];
        cfg.jobs.push(JobEntry {
            job: 5,
            role: Role::Root,
            mode: Mode::Dynamic {
                flush_after: 100,
                reclaim_after: 1000,
            },
            degree_limit: 1,
            children: vec![],
            ranks: 0b11,
            ranks_hi: vec![],
            slot_base: 0,
            slot_count: 4,
            quota: 0,
            trust: Trust::OFF,
        });
        let e = SoftSwitch::with_links(&cfg, &[(1, a(9001))]).err().unwrap();
        assert!(e.to_string().contains("without --link"), "{e}");
        let mut sw = SoftSwitch::with_links(&cfg, &[(1, a(9001)), (2, a(9002))]).unwrap();
        // Rank 1 (10.0.0.11) contributes block 0, whose leader is rank 0 (10.0.0.10): the
        // copy completes at once and leaves toward the leader, on port 1.
        let l4 = |x| L4Addr {
            mac: mac_for(ip(x)),
            ip: ip(x),
            port: fanin_proto::wire::FANIN_UDP_PORT,
        };
        let repr = Repr {
            ptype: PacketType::Contribution,
            flags: Flags(0),
            exponent: 0,
            job: 5,
            elements: 2,
            block: 0,
            child: 0,
            bitmap: 0b10,
        };
        let payload = repr.to_bytes(&[7, -3]);
        let frame = Datagram {
            src: l4(11),
            dst: l4(10),
            payload: &payload,
        }
        .to_frame(false);
        let mut out = Vec::new();
        assert_eq!(sw.handle(0, a(9002), &frame, &mut out), Verdict::Completed);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].peer, a(9001));
        match classify(out[0].payload()) {
            FrameKind::Ipv4 {
                dst,
                udp: Some(Ok(d)),
            } => {
                assert_eq!(dst, ip(10));
                assert_eq!(d.src.ip, ip(1));
            }
            k => panic!("not a UDP frame: {k:?}"),
        }
        out.clear();
        sw.handle(1, a(9999), &frame, &mut out);
        assert!(out.is_empty());
        let snap = sw.snapshot("s", FaultCounts::default(), 0);
        assert_eq!(snap.host.unknown_peer, 1);
        assert_eq!(snap.get("aggregated"), 1);
        assert_eq!(snap.peers, ["no link", "127.0.0.1:9001", "127.0.0.1:9002"]);
    }

    /// A dynamic job of 100 ranks (header version 2, docs/protocol.md "Header version 2")
    /// through a frame switch: 99 contributions and a duplicate in, one exact aggregate of
    /// 99 ranks out toward the leader, and the leader's result down the recorded link.
    #[test]
    fn a_frame_switch_runs_a_100_rank_job_in_header_version_2() {
        use fanin_proto::config::{Route, Trust};
        use fanin_proto::wire::{wide, Flags, PacketType, RankSet, WideRepr, VERSION_2};
        let a = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
        let ip = |x| Ipv4Addr::new(10, 0, 0, x);
        let mut cfg = SwitchConfig::new("s", mac_for(ip(1)), ip(1));
        cfg.params.ports = 3;
        cfg.params.slots = 4;
        cfg.params.elements = 4;
        cfg.routes = vec![Route {
            ip: ip(10),
            port: 1,
        }];
        let all = RankSet::first(100);
        cfg.jobs.push(JobEntry {
            job: 5,
            role: Role::Root,
            mode: Mode::Dynamic {
                flush_after: 100,
                reclaim_after: 1000,
            },
            degree_limit: 1,
            children: vec![],
            ranks: all.0[0],
            ranks_hi: vec![all.0[1]],
            slot_base: 0,
            slot_count: 4,
            quota: 0,
            trust: Trust::OFF,
        });
        let mut sw = SoftSwitch::with_links(&cfg, &[(1, a(9001)), (2, a(9002))]).unwrap();
        let l4 = |x| L4Addr {
            mac: mac_for(ip(x)),
            ip: ip(x),
            port: fanin_proto::wire::FANIN_UDP_PORT,
        };
        let hdr = |ptype, bitmap| WideRepr {
            version: VERSION_2,
            ptype,
            flags: Flags(0),
            exponent: 0,
            job: 5,
            elements: 2,
            block: 0,
            child: 0,
            bitmap,
        };
        // Block 0's leader is rank 0 (10.0.0.10, behind link 9001); ranks 1..100 arrive on
        // link 9002, rank 70 twice.
        let mut out = Vec::new();
        let mut sum = [0i32; 2];
        for r in (1..100u32).chain([70]) {
            let payload = hdr(PacketType::Contribution, RankSet::one(r)).to_bytes(&[r as i32, -1]);
            let frame = Datagram {
                src: l4(11),
                dst: l4(10),
                payload: &payload,
            }
            .to_frame(false);
            let v = sw.handle(0, a(9002), &frame, &mut out);
            let want = match r {
                99 => Verdict::Completed,
                70 if sum[1] == -99 => Verdict::Duplicate,
                _ => Verdict::Aggregated,
            };
            assert_eq!(v, want, "rank {r}");
            if v != Verdict::Duplicate {
                sum[0] += r as i32;
                sum[1] -= 1;
            }
        }
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].peer, a(9001));
        let FrameKind::Ipv4 {
            dst,
            udp: Some(Ok(d)),
        } = classify(out[0].payload())
        else {
            panic!("not a UDP frame");
        };
        assert_eq!(dst, ip(10));
        let up = WideRepr::parse(d.payload).unwrap();
        let mut want = all;
        want.remove(0);
        assert_eq!((up.version, up.bitmap), (VERSION_2, want));
        assert_eq!(wide::elements(d.payload), [4950, -99]);
        // The leader's result (every rank, own data added) goes down link 9002.
        out.clear();
        let payload = hdr(PacketType::Result, all).to_bytes(&[4950, -100]);
        let frame = Datagram {
            src: l4(10),
            dst: L4Addr {
                mac: [0xff; 6],
                ip: Ipv4Addr::BROADCAST,
                port: fanin_proto::wire::FANIN_UDP_PORT,
            },
            payload: &payload,
        }
        .to_frame(false);
        assert_eq!(
            sw.handle(1, a(9001), &frame, &mut out),
            Verdict::ResultForwarded
        );
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].peer, a(9002));
        let snap = sw.snapshot("s", FaultCounts::default(), 0);
        assert_eq!(snap.get("aggregated"), 99);
        assert_eq!(snap.get("duplicates"), 1);
        assert_eq!(snap.get("malformed"), 0);
    }

    #[test]
    fn register_and_remove_jobs_on_the_control_port() {
        let me = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40000);
        let w = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
        let one = SingleJob {
            job: 1,
            workers: vec![w(40001), w(40002)],
            elements: 64,
            slots: 16,
        };
        let mut cfg = single_job_config(me, &one);
        cfg.params.slots = 32;
        let mut sw = SoftSwitch::new(&cfg).unwrap();
        let mut entry = cfg.jobs[0].clone();
        entry.job = 2;
        entry.slot_base = 16;
        // Through the JSON a client sends.
        let line = serde_json::to_string(&ControlRequest::Register {
            entry: Box::new(entry.clone()),
        })
        .unwrap();
        let req: ControlRequest = serde_json::from_str(&line).unwrap();
        let r = answer(&mut sw, req, None);
        assert!(r.ok, "{}", r.message);
        assert!(sw.model().job(2).is_some());
        // Overlapping job 1's slots: refused as a configuration file would be.
        let mut bad = entry.clone();
        bad.job = 3;
        bad.slot_base = 8;
        let r = answer(
            &mut sw,
            ControlRequest::Register {
                entry: Box::new(bad),
            },
            None,
        );
        assert!(!r.ok && r.message.contains("refused"), "{}", r.message);
        assert!(sw.model().job(3).is_none());
        assert_eq!(sw.config().jobs.len(), 2);
        let r = answer(&mut sw, ControlRequest::Remove { job: 2 }, None);
        assert!(r.ok, "{}", r.message);
        assert!(sw.model().job(2).is_none());
        let r = answer(&mut sw, ControlRequest::Remove { job: 2 }, None);
        assert!(!r.ok && r.message.contains("no job 2"), "{}", r.message);
    }

    /// Regression: a reload from the configuration file (SIGHUP, `fanin reload`) dropped the
    /// jobs registered over the control port. It keeps them now; a file entry with the same
    /// job id replaces one, and a file that collides with one is refused, changing nothing.
    #[test]
    fn reload_from_the_file_keeps_registered_jobs() {
        let me = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 40100);
        let w = |p| SocketAddrV4::new(Ipv4Addr::LOCALHOST, p);
        let one = SingleJob {
            job: 1,
            workers: vec![w(40101), w(40102)],
            elements: 64,
            slots: 16,
        };
        let mut file = single_job_config(me, &one);
        file.params.slots = 64;
        let dir = std::env::temp_dir().join(format!("fanin-reload-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("switch.json");
        let write = |c: &SwitchConfig| {
            std::fs::write(&path, serde_json::to_string_pretty(c).unwrap()).unwrap()
        };
        write(&file);
        let mut sw = SoftSwitch::new(&file).unwrap();
        let mut reg = file.jobs[0].clone();
        reg.job = 2;
        reg.slot_base = 16;
        let r = answer(
            &mut sw,
            ControlRequest::Register {
                entry: Box::new(reg.clone()),
            },
            Some(&path),
        );
        assert!(r.ok, "{}", r.message);
        // An unchanged file: the registered job stays, with its session state untouched.
        let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
        assert!(r.ok, "{}", r.message);
        assert!(sw.model().job(2).is_some(), "reload dropped job 2");
        assert_eq!(sw.registered().len(), 1);
        // The file adds job 3 beside it.
        let mut j3 = file.jobs[0].clone();
        j3.job = 3;
        j3.slot_base = 32;
        file.jobs.push(j3.clone());
        write(&file);
        let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
        assert!(r.ok, "{}", r.message);
        let mut jobs: Vec<u16> = sw.config().jobs.iter().map(|j| j.job).collect();
        jobs.sort();
        assert_eq!(jobs, [1, 2, 3]);
        // A file job on the registered job's slots: refused, nothing changed.
        let mut clash = file.clone();
        clash.jobs[1].slot_base = 16;
        write(&clash);
        let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
        assert!(!r.ok && r.message.contains("refused"), "{}", r.message);
        assert_eq!(sw.config().jobs.len(), 3);
        assert_eq!(sw.model().job(3).unwrap().slot_base, 32);
        // The file takes job 2 over: the registration is forgotten.
        let mut own = file.clone();
        own.jobs.push(JobEntry {
            slot_base: 48,
            ..reg.clone()
        });
        write(&own);
        let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
        assert!(r.ok && r.message.contains("replaces"), "{}", r.message);
        assert_eq!(sw.model().job(2).unwrap().slot_base, 48);
        assert!(sw.registered().is_empty());
        // Removed over the control port: gone until the file brings it back.
        write(&file);
        let r = answer(&mut sw, ControlRequest::Reload, Some(&path));
        assert!(r.ok, "{}", r.message);
        assert!(sw.model().job(2).is_none());
        std::fs::remove_dir_all(&dir).ok();
    }

    /// Random bytes from every source never crash the switch and are all counted.
    #[test]
    fn random_datagrams_are_counted_never_fatal() {
        let plan = build(
            &star(3),
            JobSpec {
                job: 1,
                slot_count: 8,
                elements: 64,
                mode: Mode::Timeout {
                    flush_after: 10,
                    reclaim_after: 10,
                },
                addressing: Addressing::Loopback { base: 30000 },
                trust: fanin_proto::config::Trust::default(),
            },
        )
        .unwrap();
        let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
        let seed = 0xfa41;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let mut out = Vec::new();
        let n = 20_000;
        for i in 0..n {
            let len = rng.gen_range(0..400);
            let mut b: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
            if i % 2 == 0 && len > 22 {
                b[0] = 1; // plausible version, so deeper checks run
                b[1] = rng.gen_range(1..=2);
            }
            let from = SocketAddrV4::new(Ipv4Addr::LOCALHOST, 30000 + rng.gen_range(0..5));
            sw.handle(i, from, &b, &mut out);
            sw.tick(i, &mut out);
        }
        let s = sw.snapshot("t", FaultCounts::default(), 0);
        let dropped = s.get("malformed") + s.get("unknown_job");
        assert!(dropped > n * 9 / 10, "seed {seed}: {}", s.to_text());
        assert_eq!(
            s.ports.iter().map(|p| p.rx_packets).sum::<u64>(),
            n,
            "seed {seed}"
        );
    }
}
