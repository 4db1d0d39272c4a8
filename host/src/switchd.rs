//! The software switch: UDP datagrams in, [`fanin_proto::model::Switch`] in the middle,
//! UDP datagrams out. The host adds no semantics of its own; it only turns datagrams into
//! frames for the model and the model's frames back into datagrams.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use fanin_proto::config::{Child, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig};
use fanin_proto::model::{Switch, Verdict};
use fanin_proto::wire::frame::classify;
use fanin_proto::wire::{Datagram, FrameKind, L4Addr};
use serde::{Deserialize, Serialize};

use crate::link::{mac_for, Dgram, FaultCounts, Link};

/// The reference model behind a datagram interface.
pub struct SoftSwitch {
    sw: Switch,
    me: L4Addr,
    ports: HashMap<SocketAddrV4, u8>,
    tick_every: Option<u64>,
    last_tick: u64,
    /// Datagrams the model produced that were not UDP (cannot happen with a valid config).
    pub unroutable: u64,
}

impl SoftSwitch {
    /// Builds the model from a configuration.
    pub fn new(cfg: &SwitchConfig) -> Result<Self, fanin_proto::config::ConfigError> {
        let sw = Switch::new(cfg)?;
        let mut ports = HashMap::new();
        for j in &cfg.jobs {
            for c in &j.children {
                ports.insert(sock(&c.endpoint), c.endpoint.port);
            }
            if let Role::Inner { parent, .. } = j.role {
                ports.insert(sock(&parent), parent.port);
            }
        }
        let tick_every = cfg
            .jobs
            .iter()
            .filter_map(|j| match j.mode {
                Mode::Timeout { flush_after, .. } => Some((flush_after / 4).clamp(1, 1000)),
                Mode::Static => None,
            })
            .min();
        Ok(Self {
            me: sw.address(),
            sw,
            ports,
            tick_every,
            last_tick: 0,
            unroutable: 0,
        })
    }

    /// The model.
    pub fn model(&self) -> &Switch {
        &self.sw
    }

    /// Feeds one received datagram at tick `now`; appends the datagrams to send to `out`.
    pub fn handle(
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
        let port = self.ports.get(&from).copied().unwrap_or(0);
        let r = self.sw.handle(now, port, &frame);
        for o in r.outputs {
            self.emit(&o.frame, out);
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
        for o in self.sw.tick(now) {
            self.emit(&o.frame, out);
        }
    }

    fn emit(&mut self, frame: &[u8], out: &mut Vec<Dgram>) {
        match classify(frame) {
            FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } => out.push(Dgram {
                peer: SocketAddrV4::new(d.dst.ip, d.dst.port),
                data: d.payload.to_vec(),
            }),
            _ => self.unroutable += 1,
        }
    }

    /// Counters as a serialisable snapshot.
    pub fn snapshot(&self, name: &str, faults: FaultCounts, send_errors: u64) -> Snapshot {
        let c = self.sw.counters();
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
            ports: c.ports.clone(),
            host: HostCounters {
                send_errors,
                unroutable: self.unroutable,
                faults,
            },
        }
    }
}

fn sock(e: &Endpoint) -> SocketAddrV4 {
    SocketAddrV4::new(e.ip, e.udp_port)
}

/// Counters of the host around the model.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostCounters {
    /// Datagrams the socket failed to send.
    pub send_errors: u64,
    /// Model outputs that were not UDP datagrams.
    pub unroutable: u64,
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
    /// Per-port counters.
    pub ports: Vec<fanin_proto::model::PortCounters>,
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
            s += &format!(
                "  port {i}: rx {} packets {} bytes, tx {} packets {} bytes\n",
                p.rx_packets, p.rx_bytes, p.tx_packets, p.tx_bytes
            );
        }
        let f = self.host.faults;
        s += &format!(
            "  host: {} send errors, {} unroutable; faults: {} lost, {} duplicated, {} reordered\n",
            self.host.send_errors, self.host.unroutable, f.lost, f.duplicated, f.reordered
        );
        s
    }
}

/// A request for a counter snapshot, answered by the switch loop.
pub type StatsRequest = Sender<Snapshot>;

/// Serves snapshots over TCP at `listener`: each connection gets one JSON document.
pub fn serve_stats(listener: TcpListener, requests: Sender<StatsRequest>, stop: Arc<AtomicBool>) {
    listener.set_nonblocking(true).ok();
    while !stop.load(Ordering::Relaxed) {
        match listener.accept() {
            Ok((conn, _)) => {
                let (tx, rx) = mpsc::channel();
                if requests.send(tx).is_err() {
                    return;
                }
                if let Ok(snap) = rx.recv_timeout(Duration::from_secs(2)) {
                    reply(conn, &snap);
                }
            }
            Err(_) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
}

fn reply(mut conn: TcpStream, snap: &Snapshot) {
    conn.set_nonblocking(false).ok();
    conn.set_write_timeout(Some(Duration::from_secs(2))).ok();
    let body = serde_json::to_string(snap).expect("snapshot serialises");
    let _ = conn.write_all(body.as_bytes());
}

/// Fetches a snapshot from a running switchd's stats address.
pub fn fetch_stats(addr: SocketAddrV4, timeout: Duration) -> std::io::Result<Snapshot> {
    let mut c = TcpStream::connect_timeout(&addr.into(), timeout)?;
    c.set_read_timeout(Some(timeout))?;
    let mut s = String::new();
    c.read_to_string(&mut s)?;
    serde_json::from_str(&s).map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e))
}

/// The switch loop's handles from outside: stop flag and stats requests.
pub struct Control {
    /// Set to stop the loop.
    pub stop: Arc<AtomicBool>,
    /// Snapshot requests.
    pub stats: Receiver<StatsRequest>,
}

/// Runs the switch over `link` until `ctl.stop` is set; returns the final snapshot.
pub fn run<L: Link + ?Sized>(
    name: &str,
    sw: &mut SoftSwitch,
    link: &mut L,
    ctl: &Control,
) -> Snapshot {
    let start = Instant::now();
    let mut inbox = Vec::with_capacity(crate::link::BATCH);
    let mut out = Vec::with_capacity(crate::link::BATCH * 2);
    let mut send_errors = 0u64;
    let mut warned = false;
    while !ctl.stop.load(Ordering::Relaxed) {
        if let Err(e) = link.recv(&mut inbox, Duration::from_millis(1)) {
            eprintln!("fanin switchd: receive failed: {e}");
            std::thread::sleep(Duration::from_millis(1));
        }
        let now = start.elapsed().as_micros() as u64;
        for d in inbox.drain(..) {
            sw.handle(now, d.peer, &d.data, &mut out);
        }
        sw.tick(now, &mut out);
        if !out.is_empty() {
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
            let _ = req.send(sw.snapshot(name, link.fault_counts(), send_errors));
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
            })
            .collect(),
        ranks,
        slot_base: 0,
        slot_count: j.slots,
        quota: 0,
    });
    cfg
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanin_proto::plan::{build, star, Addressing, JobSpec};
    use rand::{Rng, SeedableRng};

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
