//! `fanin._native`: the Rust worker ([`fanin::sender`]) and the in-process software switch
//! ([`fanin::switchd`]) for the Python package `fanin` (host/python/fanin). Private: the
//! Python layer validates arguments and holds the framework glue.

use std::collections::HashMap;
use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use fanin::link::{mac_for, UdpLink};
use fanin::scheme::{result_bound, QuantMode};
use fanin::sender::{self, SendConfig, SendError, SendReport};
use fanin::switchd::{self, single_job_config, Control, ControlRequest, SingleJob, SoftSwitch};
use fanin_proto::config::Endpoint;
use fanin_proto::join::JoinHistory;
use fanin_proto::wire::Flags;
use fanin_proto::worker::Assignment;
use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyRuntimeError, PyTypeError, PyValueError};
use pyo3::prelude::*;

create_exception!(
    _native,
    FaninError,
    PyRuntimeError,
    "An allreduce failed: dead peer, unreachable switch, timeout or REFUSE (the CLI's message)."
);

fn addr(s: &str, what: &str) -> PyResult<SocketAddrV4> {
    s.parse().map_err(|_| {
        PyValueError::new_err(format!(
            "{what} {s:?} is not an IPv4 address with a port, like 127.0.0.1:48879"
        ))
    })
}

fn endpoint(a: SocketAddrV4) -> Endpoint {
    Endpoint {
        mac: mac_for(*a.ip()),
        ip: *a.ip(),
        udp_port: a.port(),
        port: 0,
    }
}

/// The software switch running in this process: one root job on a UDP socket.
#[pyclass(module = "fanin._native")]
struct Switch {
    address: SocketAddrV4,
    stop: Arc<AtomicBool>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

#[pymethods]
impl Switch {
    /// Binds `bind` (`ip:port`, port 0 picks one) and serves `lanes` jobs `job`,
    /// `job + 1`, ... with `elements` per packet and `slots` slots each; `workers` holds the
    /// workers' addresses lane by lane, by rank within a lane (`lanes` × world entries).
    #[new]
    #[pyo3(signature = (bind, workers, job, elements, slots, lanes=1))]
    fn new(
        bind: &str,
        workers: Vec<String>,
        job: u16,
        elements: u16,
        slots: u32,
        lanes: usize,
    ) -> PyResult<Self> {
        let me = addr(bind, "switch address")?;
        let workers = workers
            .iter()
            .map(|w| addr(w, "worker address"))
            .collect::<PyResult<Vec<_>>>()?;
        if lanes == 0 || lanes > 16 || job as usize + lanes > 65536 {
            return Err(PyValueError::new_err(format!(
                "lanes must be 1 to 16 with job ids up to 65535, not {lanes} from job {job}"
            )));
        }
        if workers.len() % lanes != 0 {
            return Err(PyValueError::new_err(format!(
                "{} worker addresses do not split into {lanes} lanes",
                workers.len()
            )));
        }
        let world = workers.len() / lanes;
        if world == 0 || world as u32 > fanin_proto::wire::MAX_WORKERS {
            return Err(PyValueError::new_err(format!(
                "{world} workers: {}",
                static_cap()
            )));
        }
        let sock = UdpSocket::bind(me)
            .map_err(|e| FaninError::new_err(format!("cannot bind the switch at {me}: {e}")))?;
        let address = match sock.local_addr() {
            Ok(std::net::SocketAddr::V4(a)) => a,
            _ => return Err(FaninError::new_err("the switch socket is not IPv4")),
        };
        // One job per lane, each with its own slots: lanes run their sessions independently.
        let mut cfg = single_job_config(
            address,
            &SingleJob {
                job,
                workers: workers[..world].to_vec(),
                elements,
                slots,
            },
        );
        for k in 1..lanes {
            let lane = single_job_config(
                address,
                &SingleJob {
                    job: job + k as u16,
                    workers: workers[k * world..(k + 1) * world].to_vec(),
                    elements,
                    slots,
                },
            );
            cfg.jobs.extend(lane.jobs.into_iter().map(|mut e| {
                e.slot_base = k as u32 * slots;
                e
            }));
        }
        cfg.params.slots = slots.checked_mul(lanes as u32).ok_or_else(|| {
            PyValueError::new_err(format!("{lanes} lanes of {slots} slots overflow"))
        })?;
        cfg.params.max_jobs = cfg.params.max_jobs.max(lanes as u16);
        let mut sw = SoftSwitch::new(&cfg)
            .map_err(|e| PyValueError::new_err(format!("bad switch configuration: {e}")))?;
        let mut link =
            UdpLink::from_socket(sock).map_err(|e| FaninError::new_err(e.to_string()))?;
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let thread = std::thread::Builder::new()
            .name("fanin-switchd".into())
            .spawn(move || {
                // Nobody asks this switch for stats: the sender half is dropped at once.
                let (_tx, rx) = mpsc::channel();
                let ctl = Control::new(s, rx);
                switchd::run("embedded", &mut sw, &mut link, &ctl);
            })
            .map_err(|e| FaninError::new_err(e.to_string()))?;
        Ok(Self {
            address,
            stop,
            thread: Mutex::new(Some(thread)),
        })
    }

    /// The switch's `ip:port`.
    #[getter]
    fn address(&self) -> String {
        self.address.to_string()
    }

    /// Stops the switch thread (idempotent).
    fn close(&self, py: Python<'_>) {
        self.stop.store(true, Ordering::Relaxed);
        let t = self.thread.lock().expect("switch lock").take();
        if let Some(t) = t {
            py.allow_threads(|| {
                let _ = t.join();
            });
        }
    }
}

impl Drop for Switch {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A worker's join histories, per (job, rank).
type JoinHistories = Mutex<HashMap<(u16, u16), Arc<Mutex<JoinHistory>>>>;

/// One worker of one job: a UDP socket and its place in the job.
#[pyclass(module = "fanin._native")]
struct Worker {
    link: Mutex<UdpLink>,
    address: SocketAddrV4,
    /// Per (job, rank): what the worker remembers of its earlier joins, so that a JOIN of
    /// an earlier allreduce delayed past it cannot stall the next one (`JoinHistory`).
    joins: JoinHistories,
}

/// Sets `stop` after `secs` unless `done` is signalled first.
struct Watchdog {
    done: Arc<(Mutex<bool>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

impl Watchdog {
    fn start(stop: Arc<AtomicBool>, secs: f64) -> Self {
        let done = Arc::new((Mutex::new(false), Condvar::new()));
        let d = done.clone();
        let thread = std::thread::spawn(move || {
            let (m, c) = &*d;
            let g = m.lock().expect("watchdog lock");
            let (g, _) = c
                .wait_timeout_while(g, Duration::from_secs_f64(secs), |fin| !*fin)
                .expect("watchdog wait");
            if !*g {
                stop.store(true, Ordering::Relaxed);
            }
        });
        Self {
            done,
            thread: Some(thread),
        }
    }
}

impl Drop for Watchdog {
    fn drop(&mut self) {
        let (m, c) = &*self.done;
        *m.lock().expect("watchdog lock") = true;
        c.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[pymethods]
impl Worker {
    /// Binds a UDP socket at `bind` (`ip:port`, port 0 picks one).
    #[new]
    fn new(bind: &str) -> PyResult<Self> {
        let a = addr(bind, "worker address")?;
        let link = UdpLink::bind(a)
            .map_err(|e| FaninError::new_err(format!("cannot bind a worker socket at {a}: {e}")))?;
        let address = fanin::link::Link::local_addr(&link);
        Ok(Self {
            link: Mutex::new(link),
            address,
            joins: Mutex::new(HashMap::new()),
        })
    }

    /// The worker's `ip:port` (where results arrive).
    #[getter]
    fn address(&self) -> String {
        self.address.to_string()
    }

    /// Sums `buf` (a writable C-contiguous float32 or int32 buffer) in place with the other
    /// `workers` workers of job `job` through the switch at `switch`. float32 is quantised
    /// (returns the agreed exponent, for `result_bound`); int32 is exact (returns 0). Raises
    /// FaninError with the CLI's one-line message on failure, and never runs past `timeout`.
    #[allow(clippy::too_many_arguments)]
    /// `window` caps the blocks in flight (default and maximum: `slots`); `retransmit_ms` is
    /// the retransmission timeout (default 20). `child` is the worker's child index at its
    /// parent (default: the rank); `session=False` runs without JOIN/ACCEPT.
    #[pyo3(signature = (buf, switch, job, rank, workers, elements, slots, timeout, window=None, child=None, session=true, retransmit_ms=20))]
    fn allreduce(
        &self,
        py: Python<'_>,
        buf: &Bound<'_, PyAny>,
        switch: &str,
        job: u16,
        rank: u16,
        workers: u16,
        elements: u16,
        slots: u32,
        timeout: f64,
        window: Option<u32>,
        child: Option<u8>,
        session: bool,
        retransmit_ms: u64,
    ) -> PyResult<i32> {
        if !(timeout.is_finite() && timeout > 0.0) {
            return Err(PyValueError::new_err(format!(
                "timeout must be a positive number of seconds, not {timeout}"
            )));
        }
        if retransmit_ms == 0 {
            return Err(PyValueError::new_err(
                "the retransmission timeout must be at least 1 ms",
            ));
        }
        if workers == 0 || workers as u32 > fanin_proto::wire::MAX_WORKERS {
            return Err(PyValueError::new_err(format!(
                "workers={workers}: {}",
                static_cap()
            )));
        }
        if rank >= workers {
            return Err(PyValueError::new_err(format!(
                "rank {rank} is not in a job of {workers} workers"
            )));
        }
        let parent = addr(switch, "switch address")?;
        let cfg = SendConfig {
            assignment: Assignment {
                job,
                rank,
                workers,
                child: child.unwrap_or(rank as u8),
                me: endpoint(self.address),
                parent: endpoint(parent),
                window_limit: slots,
                elements,
                session,
            },
            window: window.unwrap_or(slots).min(slots).max(1),
            retransmit: Duration::from_millis(retransmit_ms),
            first_block: 0,
            quant: QuantMode::Auto,
            timeout: Duration::from_secs_f64(timeout),
            progress: false,
            joins: session.then(|| {
                let mut joins = self.joins.lock().expect("join histories");
                joins.entry((job, rank)).or_default().clone()
            }),
        };
        let stop = Arc::new(AtomicBool::new(false));
        let go = |r: Result<SendReport, SendError>| -> PyResult<SendReport> {
            match r {
                Ok(rep) => Ok(rep),
                Err(SendError::Interrupted) => Err(FaninError::new_err(format!(
                    "timed out after {timeout:.1}s: the allreduce of job {job} (rank {rank} of {workers}) did not finish"
                ))),
                Err(e) => Err(FaninError::new_err(e.to_string())),
            }
        };
        if let Ok(b) = PyBuffer::<f32>::get(buf) {
            check_buf(&b)?;
            let mut data = b.to_vec(py)?;
            let rep = py.allow_threads(|| {
                let _w = Watchdog::start(stop.clone(), timeout);
                let mut link = self.link.lock().expect("worker lock");
                sender::run(&cfg, &data, &mut *link, Some(&stop))
            });
            let rep = go(rep)?;
            data.copy_from_slice(&rep.values);
            b.copy_from_slice(py, &data)?;
            Ok(rep.exponent as i32)
        } else if let Ok(b) = PyBuffer::<i32>::get(buf) {
            check_buf(&b)?;
            let data = b.to_vec(py)?;
            let rep = py.allow_threads(|| {
                let _w = Watchdog::start(stop.clone(), timeout);
                let mut link = self.link.lock().expect("worker lock");
                sender::run_i32(&cfg, &data, &mut *link, Some(&stop))
            });
            let rep = go(rep)?;
            if rep.flags.has(Flags::OVERFLOW) {
                return Err(FaninError::new_err(format!(
                    "int32 overflow: a sum of job {job} does not fit in 32 bits (the switch saturated it)"
                )));
            }
            b.copy_from_slice(py, &rep.sums)?;
            Ok(0)
        } else {
            Err(PyTypeError::new_err(
                "fanin allreduces float32 or int32 buffers only",
            ))
        }
    }
}

fn check_buf<T: pyo3::buffer::Element>(b: &PyBuffer<T>) -> PyResult<()> {
    if b.readonly() {
        return Err(PyValueError::new_err(
            "the array is read-only: fanin sums in place",
        ));
    }
    if !b.is_c_contiguous() {
        return Err(PyValueError::new_err(
            "the array is not contiguous: pass a contiguous copy",
        ));
    }
    Ok(())
}

/// Registers job `job` for `workers` (their addresses by rank) at the external `fanin
/// switchd` at `switch` (its control port is the same address over TCP), using `slots`
/// slots from `slot_base`; `remove=True` removes the job instead. Returns switchd's answer;
/// raises FaninError if it refuses or cannot be reached.
#[pyfunction]
#[pyo3(signature = (switch, workers, job, elements, slots, slot_base=0, remove=false, timeout=5.0))]
#[allow(clippy::too_many_arguments)]
fn register_job(
    py: Python<'_>,
    switch: &str,
    workers: Vec<String>,
    job: u16,
    elements: u16,
    slots: u32,
    slot_base: u32,
    remove: bool,
    timeout: f64,
) -> PyResult<String> {
    let sw = addr(switch, "FANIN_SWITCH")?;
    let workers = workers
        .iter()
        .map(|w| addr(w, "worker address"))
        .collect::<PyResult<Vec<_>>>()?;
    let req = if remove {
        ControlRequest::Remove { job }
    } else {
        let cfg = single_job_config(
            sw,
            &SingleJob {
                job,
                workers,
                elements,
                slots,
            },
        );
        let mut entry = cfg.jobs[0].clone();
        entry.slot_base = slot_base;
        ControlRequest::Register {
            entry: Box::new(entry),
        }
    };
    let r = py
        .allow_threads(|| switchd::control(sw, &req, Duration::from_secs_f64(timeout.max(0.1))))
        .map_err(|e| {
            FaninError::new_err(format!(
                "cannot reach the control port of the fanin switchd at {sw} (TCP): {e}; is `fanin switchd` running there?"
            ))
        })?;
    if r.ok {
        Ok(r.message)
    } else {
        Err(FaninError::new_err(format!(
            "the fanin switchd at {sw} refused job {job}: {}",
            r.message
        )))
    }
}

/// Reads `path` (the `workers.json` of `fanin place --emit-config`: a list of
/// `fanin_proto::worker::Assignment`, or one assignment) and returns the assignment of `rank`
/// (of `job`; None: the file's only job) as a dict with `job`, `rank`, `workers`, `child`,
/// `me` and `parent` (`ip:port`), `window_limit`, `elements` and `session`. Checks it against
/// `world`, the caller's number of ranks. Raises OSError if the file cannot be read and
/// ValueError with one line naming the file and what is wrong otherwise.
#[pyfunction]
#[pyo3(signature = (path, rank, world=None, job=None))]
fn read_assignment<'py>(
    py: Python<'py>,
    path: &str,
    rank: u32,
    world: Option<u32>,
    job: Option<u16>,
) -> PyResult<Bound<'py, pyo3::types::PyDict>> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        pyo3::exceptions::PyOSError::new_err(format!("cannot read the assignment file {path}: {e}"))
    })?;
    let a = pick_assignment(path, &text, rank, world, job).map_err(PyValueError::new_err)?;
    let d = pyo3::types::PyDict::new(py);
    d.set_item("job", a.job)?;
    d.set_item("rank", a.rank)?;
    d.set_item("workers", a.workers)?;
    d.set_item("child", a.child)?;
    d.set_item("me", SocketAddrV4::new(a.me.ip, a.me.udp_port).to_string())?;
    d.set_item(
        "parent",
        SocketAddrV4::new(a.parent.ip, a.parent.udp_port).to_string(),
    )?;
    d.set_item("window_limit", a.window_limit)?;
    d.set_item("elements", a.elements)?;
    d.set_item("session", a.session)?;
    Ok(d)
}

/// The assignment of `rank` (of `job`) in the JSON `text` of file `path`, checked; or the
/// one-line reason it cannot be used.
fn pick_assignment(
    path: &str,
    text: &str,
    rank: u32,
    world: Option<u32>,
    job: Option<u16>,
) -> Result<Assignment, String> {
    let v: serde_json::Value = serde_json::from_str(text)
        .map_err(|e| format!("the assignment file {path} is not JSON: {e}"))?;
    let list = v.is_array();
    let all: Vec<Assignment> = if list {
        serde_json::from_value(v)
            .map_err(|e| format!("the assignment list in {path} is not valid: {e}"))?
    } else {
        vec![serde_json::from_value(v)
            .map_err(|e| format!("the assignment in {path} is not valid: {e}"))?]
    };
    let mut jobs: Vec<u16> = all.iter().map(|a| a.job).collect();
    jobs.sort_unstable();
    jobs.dedup();
    let job = match (job, jobs.as_slice()) {
        (_, []) => return Err(format!("the assignment file {path} holds no assignment")),
        (Some(j), _) if !jobs.contains(&j) => {
            return Err(format!(
                "the assignment file {path} holds no assignment of job {j} (its jobs: {jobs:?})"
            ))
        }
        (Some(j), _) => j,
        (None, [j]) => *j,
        (None, _) => {
            return Err(format!(
            "the assignment file {path} holds jobs {jobs:?}: set FANIN_JOB (or job=) to pick one"
        ))
        }
    };
    let mine: Vec<&Assignment> = all.iter().filter(|a| a.job == job).collect();
    let workers = mine[0].workers;
    if workers == 0 || workers as u32 > fanin_proto::wire::MAX_WORKERS {
        return Err(format!(
            "job {job} in {path} has {workers} workers: {}",
            static_cap()
        ));
    }
    if let Some(a) = mine.iter().find(|a| a.workers != workers) {
        return Err(format!(
            "job {job} in {path}: rank {} says {} workers, rank {} says {workers}",
            a.rank, a.workers, mine[0].rank
        ));
    }
    if let Some(w) = world {
        if w != workers as u32 {
            return Err(format!(
                "job {job} in {path} has {workers} workers, but this group has {w} ranks: \
                 start as many ranks as the placement has workers"
            ));
        }
    }
    let mut ranks: Vec<u16> = mine.iter().map(|a| a.rank).collect();
    ranks.sort_unstable();
    if let Some(d) = ranks.windows(2).find(|p| p[0] == p[1]) {
        return Err(format!("job {job} in {path} lists rank {} twice", d[0]));
    }
    if let Some(a) = mine.iter().find(|a| a.rank >= workers) {
        return Err(format!(
            "job {job} in {path}: rank {} is not below its {workers} workers",
            a.rank
        ));
    }
    if list && ranks.len() != workers as usize {
        return Err(format!(
            "job {job} in {path} lists {} of its {workers} ranks: a placement's workers.json lists them all",
            ranks.len()
        ));
    }
    let a = mine.iter().find(|a| a.rank as u32 == rank).ok_or_else(|| {
        format!("job {job} in {path} has no assignment for rank {rank} (ranks {ranks:?})")
    })?;
    if a.elements == 0 || a.elements > fanin_proto::wire::MAX_ELEMENTS {
        return Err(format!(
            "rank {rank} of job {job} in {path}: elements {} must be 1..={}",
            a.elements,
            fanin_proto::wire::MAX_ELEMENTS
        ));
    }
    if a.window_limit == 0 {
        return Err(format!(
            "rank {rank} of job {job} in {path}: window_limit must be at least 1"
        ));
    }
    Ok((*a).clone())
}

/// Largest error of a float32 result `r` of `workers` contributions at exponent `e`
/// (`fanin::scheme::result_bound`: `workers·2^-(e+1) + 2^-24·|r|`).
#[pyfunction]
fn result_bound_of(workers: u32, exponent: i8, r: f32) -> f64 {
    result_bound(workers, exponent, r)
}

/// The loopback address, for defaults.
#[pyfunction]
fn loopback() -> String {
    Ipv4Addr::LOCALHOST.to_string()
}

/// The private extension module of the `fanin` Python package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Switch>()?;
    m.add_class::<Worker>()?;
    m.add_function(wrap_pyfunction!(result_bound_of, m)?)?;
    m.add_function(wrap_pyfunction!(loopback, m)?)?;
    m.add_function(wrap_pyfunction!(register_job, m)?)?;
    m.add_function(wrap_pyfunction!(read_assignment, m)?)?;
    m.add("FaninError", m.py().get_type::<FaninError>())?;
    Ok(())
}

/// Why the binding's jobs stop at 64 workers, and the way past it (one line).
fn static_cap() -> String {
    format!(
        "the Python binding runs static jobs, which hold 1 to {} workers (header version 1's bitmap); dynamic jobs of up to {} ranks run with `fanin send --dynamic`",
        fanin_proto::wire::MAX_WORKERS,
        fanin_proto::wire::MAX_RANKS
    )
}
