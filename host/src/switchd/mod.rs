//! The software switch: UDP datagrams in, [`fanin_proto::model::Switch`] in the middle,
//! UDP datagrams out. The host adds no semantics of its own: it hands each datagram and its
//! source to the model's datagram path and sends the datagrams the model returns (the
//! frame path, `--frame-path`, wraps them in frames and parses the model's frames back).

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

use fanin_proto::config::{
    Child, ConfigError, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig,
};
use fanin_proto::model::{DatagramOutput, Switch, Verdict};
use fanin_proto::wire::frame::classify;
use fanin_proto::wire::{Datagram, FrameKind, L4Addr};

use crate::link::{mac_for, Dgram, FaultCounts, Link};

mod control;
use control::{answer, reload_from};
pub use control::{
    control, fetch_stats, serve_stats, Control, ControlReply, ControlRequest, HostCounters,
    Request, Snapshot,
};

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
mod tests;
