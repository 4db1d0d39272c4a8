//! The scoreboard: the same inputs go to the RTL and to `fanin_proto::model::Switch`; every
//! output frame (per egress port, in order) and every counter must match exactly.

use fanin_hdl::CoreConfig;
use fanin_regs::RegMap;
use std::collections::VecDeque;

use fanin_proto::config::{JobEntry, Params, SwitchConfig};
use fanin_proto::model::{Counter, Switch};

use crate::axis::Frame;
use crate::dut::SimError;
use crate::tb::{DbgEvent, Tb};

/// What the scoreboard needs of a testbench: the engine's decisions, the frames each
/// ingress delivered and each egress emitted, register access and a clock cycle. [`Tb`]
/// drives `fanin_core` alone; `board::BoardTb` a whole board top.
pub trait Bench {
    /// The `dbg_*` decisions recorded so far, in order (empty without a monitor port).
    fn events(&self) -> &[DbgEvent];
    /// Drops the recorded decisions `from..` that `keep` refuses.
    fn retain_events(&mut self, from: usize, keep: &mut dyn FnMut(&DbgEvent) -> bool);
    /// True if the core has the `dbg_*` monitor port.
    fn has_monitor(&self) -> bool;
    /// Frames fully delivered into ingress `port`, in order (`None`: no such port).
    fn delivered(&self, port: usize) -> Option<&[Frame]>;
    /// Frames emitted by each egress port, in order.
    fn emitted(&self) -> Vec<&[Frame]>;
    /// Writes a register.
    fn write(&mut self, addr: u32, data: u32) -> Result<(), SimError>;
    /// Reads a 64-bit counter (low word at `addr`, high word at `addr + 4`).
    fn read64(&mut self, addr: u32) -> Result<u64, SimError>;
    /// One core clock cycle.
    fn step(&mut self);
}

impl Bench for Tb {
    fn events(&self) -> &[DbgEvent] {
        &self.events
    }
    fn retain_events(&mut self, from: usize, keep: &mut dyn FnMut(&DbgEvent) -> bool) {
        let mut i = 0;
        self.events.retain(|e| {
            i += 1;
            i <= from || keep(e)
        });
    }
    fn has_monitor(&self) -> bool {
        Tb::has_monitor(self)
    }
    fn delivered(&self, port: usize) -> Option<&[Frame]> {
        self.src.get(port).map(|s| s.completed.as_slice())
    }
    fn emitted(&self) -> Vec<&[Frame]> {
        self.sink.iter().map(|s| s.frames.as_slice()).collect()
    }
    fn write(&mut self, addr: u32, data: u32) -> Result<(), SimError> {
        Tb::write(self, addr, data)
    }
    fn read64(&mut self, addr: u32) -> Result<u64, SimError> {
        Tb::read64(self, addr)
    }
    fn step(&mut self) {
        Tb::step(self)
    }
}

/// Reference model plus the frames it says each egress port must emit.
pub struct Scoreboard {
    /// The reference switch.
    pub model: Switch,
    /// Expected frames per egress port, in order.
    pub expected: Vec<Vec<Vec<u8>>>,
    /// Register map of the DUT's configuration.
    pub regs: RegMap,
    max_frame: usize,
    replayed: usize,
    next: Vec<usize>,
    commits: VecDeque<(u8, JobEntry)>,
    entries: Vec<Option<u16>>,
}

impl Scoreboard {
    /// A scoreboard for a DUT of configuration `core` programmed with `cfg`.
    pub fn new(core: &CoreConfig, cfg: &SwitchConfig) -> Result<Self, SimError> {
        let model =
            Switch::new(cfg).map_err(|e| SimError::Check(format!("reference config: {e}")))?;
        let ports = core.ports as usize;
        Ok(Self {
            model,
            expected: vec![Vec::new(); ports],
            regs: RegMap::new(core),
            max_frame: core.max_frame as usize,
            replayed: 0,
            next: vec![0; ports],
            commits: VecDeque::new(),
            entries: cfg.jobs.iter().map(|j| Some(j.job)).collect(),
        })
    }

    /// Announces a job-table commit written to the DUT while it runs (see
    /// [`commit_job`]): when the DUT reports that commit of `entry` in its decision order,
    /// the model drops the job the entry held before (if it was another one) and applies
    /// `job` (`Switch::set_job`). Commits are reported in write order.
    pub fn expect_commit(&mut self, entry: u8, job: JobEntry) {
        self.commits.push_back((entry, job));
    }

    /// Feeds a frame the engine takes from ingress `port` to the model at tick `now`.
    pub fn feed(&mut self, now: u64, port: u8, frame: &[u8]) {
        for o in self.model.handle(now, port, frame).outputs {
            self.expected[o.port as usize].push(o.frame);
        }
    }

    /// Replays the engine's decisions recorded since the last call into the model: each frame
    /// event takes the next frame its port delivered that ingress did not drop (bad or
    /// longer than `max_frame`), each scan event runs the model's scan of that slot, each
    /// commit event applies the next announced commit ([`Scoreboard::expect_commit`]).
    pub fn replay(&mut self, tb: &impl Bench) -> Result<(), SimError> {
        if !tb.has_monitor() {
            return Err(SimError::Check(
                "the core has no dbg_* monitor port; feed frames with Scoreboard::feed".into(),
            ));
        }
        for ev in &tb.events()[self.replayed..] {
            match *ev {
                DbgEvent::Frame { port, tick } => {
                    let p = port as usize;
                    let done = tb.delivered(p).ok_or_else(|| {
                        SimError::Check(format!("event for port {p}, which does not exist"))
                    })?;
                    let i = (self.next[p]..done.len())
                        .find(|&i| !done[i].bad && done[i].data.len() <= self.max_frame)
                        .ok_or_else(|| {
                            SimError::Check(format!(
                                "engine took a frame from port {p}, but none was delivered there"
                            ))
                        })?;
                    self.next[p] = i + 1;
                    for o in self.model.handle(tick as u64, port, &done[i].data).outputs {
                        self.expected[o.port as usize].push(o.frame);
                    }
                }
                DbgEvent::Scan { slot, tick } => {
                    for o in self.model.scan_slot(tick as u64, slot) {
                        self.expected[o.port as usize].push(o.frame);
                    }
                }
                DbgEvent::Commit { entry } => {
                    let (want, job) = self.commits.pop_front().ok_or_else(|| {
                        SimError::Check(format!(
                            "DUT committed job-table entry {entry}, but no commit was announced"
                        ))
                    })?;
                    if want != entry {
                        return Err(SimError::Check(format!(
                            "DUT committed job-table entry {entry}, expected entry {want}"
                        )));
                    }
                    let e = entry as usize;
                    if self.entries.len() <= e {
                        self.entries.resize(e + 1, None);
                    }
                    if let Some(old) = self.entries[e].filter(|&old| old != job.job) {
                        self.model.remove_job(old);
                    }
                    self.entries[e] = Some(job.job);
                    self.model.set_job(job).map_err(|e| {
                        SimError::Check(format!("model refused the commit of entry {entry}: {e}"))
                    })?;
                }
            }
        }
        self.replayed = tb.events().len();
        Ok(())
    }

    /// Compares every sink's frames with the expected ones, exactly and in order.
    pub fn check_frames(&self, tb: &impl Bench) -> Result<(), SimError> {
        for (p, frames) in tb.emitted().into_iter().enumerate() {
            let got: Vec<&Vec<u8>> = frames.iter().map(|f| &f.data).collect();
            let want: Vec<&Vec<u8>> = self.expected[p].iter().collect();
            if let Some(i) = (0..got.len().max(want.len())).find(|&i| got.get(i) != want.get(i)) {
                return Err(SimError::Check(format!(
                    "port {p}: frame {i} differs (got {} frames, expected {}):\n  got  {}\n  want {}",
                    got.len(),
                    want.len(),
                    got.get(i).map(|f| hex(f)).unwrap_or_else(|| "nothing".into()),
                    want.get(i).map(|f| hex(f)).unwrap_or_else(|| "nothing".into())
                )));
            }
            if let Some(f) = frames.iter().find(|f| f.bad) {
                return Err(SimError::Check(format!(
                    "port {p}: DUT marked an emitted frame bad: {}",
                    hex(&f.data)
                )));
            }
        }
        Ok(())
    }

    /// Reads every global and per-port counter over AXI4-Lite and compares with the model.
    pub fn check_counters(&self, tb: &mut impl Bench) -> Result<(), SimError> {
        let mut diffs = Vec::new();
        for &c in Counter::ALL {
            let got = tb.read64(self.regs.counter_base + 8 * c as u32)?;
            let want = self.model.counters().get(c);
            if got != want {
                diffs.push(format!("{}: rtl {got} model {want}", c.name()));
            }
        }
        for (p, pc) in self.model.counters().ports.iter().enumerate() {
            let base = self.regs.port_base + 32 * p as u32;
            for (i, (name, want)) in [
                ("rx_packets", pc.rx_packets),
                ("rx_bytes", pc.rx_bytes),
                ("tx_packets", pc.tx_packets),
                ("tx_bytes", pc.tx_bytes),
            ]
            .into_iter()
            .enumerate()
            {
                let got = tb.read64(base + 8 * i as u32)?;
                if got != want {
                    diffs.push(format!("port{p}_{name}: rtl {got} model {want}"));
                }
            }
        }
        if diffs.is_empty() {
            Ok(())
        } else {
            Err(SimError::Check(format!(
                "counters differ: {}",
                diffs.join(", ")
            )))
        }
    }
}

/// The reference model's table sizes for a core configuration.
pub fn params(core: &CoreConfig) -> Params {
    core.params()
}

/// Programs the DUT's identity, forwarding table and job table from a switch configuration
/// with the write sequence `fanin hw program` sends a card ([`fanin_regs::switch_writes`]:
/// every table entry, the unused ones removed), before traffic: the commit events it causes
/// are dropped, since a scoreboard's model is built from the same configuration.
pub fn program(tb: &mut impl Bench, regs: &RegMap, cfg: &SwitchConfig) -> Result<(), SimError> {
    let core = RegMap::core_from_info("dut", &regs.info_values()).map_err(SimError::Check)?;
    let writes = fanin_regs::switch_writes(cfg, &core).map_err(SimError::Check)?;
    let start = tb.events().len();
    for (addr, data) in writes {
        tb.write(addr, data)?;
    }
    // The last commit is applied once the engine is idle: within a few cycles, or after the
    // timer scan's visit of a slot (a job with an idle reclaim starts the scan).
    let applied = |events: &[DbgEvent]| {
        events[start..]
            .iter()
            .filter(|e| matches!(e, DbgEvent::Commit { .. }))
            .count()
    };
    for _ in 0..1000 {
        tb.step();
        if !tb.has_monitor() || applied(tb.events()) == core.max_jobs as usize {
            break;
        }
    }
    let mut commits = 0;
    tb.retain_events(start, &mut |e| {
        let commit = matches!(e, DbgEvent::Commit { .. });
        commits += commit as usize;
        !commit
    });
    if tb.has_monitor() && commits != core.max_jobs as usize {
        return Err(SimError::Check(format!(
            "programming {} job-table entries caused {commits} commit events",
            core.max_jobs
        )));
    }
    Ok(())
}

/// Writes job-table entry `entry` while the DUT may be running, and announces the commit to
/// the scoreboard, which applies it to the model at the point the DUT reports it.
pub fn commit_job(
    tb: &mut impl Bench,
    sb: &mut Scoreboard,
    entry: u8,
    job: &JobEntry,
) -> Result<(), SimError> {
    sb.expect_commit(entry, job.clone());
    for (addr, data) in
        fanin_regs::job_writes(entry, job).map_err(|e| SimError::Check(e.to_string()))?
    {
        tb.write(addr, data)?;
    }
    Ok(())
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
