//! switchd's control plane: its counters and snapshots, and the JSON requests on its TCP
//! port (stats, reset, reload, register, remove).

use std::io::{Read, Write};
use std::net::{SocketAddrV4, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::time::Duration;

use fanin_proto::config::{JobEntry, SwitchConfig};
use serde::{Deserialize, Serialize};

use super::SoftSwitch;
use crate::link::FaultCounts;

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
pub(super) fn reload_from(sw: &mut SoftSwitch, path: Option<&std::path::Path>) -> ControlReply {
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

pub(super) fn answer(
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

pub(super) fn applied(r: Result<String, String>, what: &str) -> ControlReply {
    match r {
        Ok(message) => ControlReply { ok: true, message },
        Err(e) => ControlReply {
            ok: false,
            message: format!("{what} refused, nothing changed: {e}"),
        },
    }
}
