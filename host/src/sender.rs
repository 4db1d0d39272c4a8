//! One worker's allreduce over a [`Link`]: preamble (exponent and length agreement), then
//! the quantised tensor, windowed with retransmission, driven by [`fanin_proto::worker::Worker`].

use std::net::SocketAddrV4;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fanin_proto::join::{JoinHistory, JoinReply, Joiner};
use fanin_proto::quant;
use fanin_proto::wire::{Flags, Packet, PacketType, RefuseReason, WireError};
use fanin_proto::worker::{Assignment, Received, Sending, Worker, WorkerError};
use indicatif::{ProgressBar, ProgressStyle};

use crate::link::{Dgram, Link};
use crate::scheme::{self, AgreeError, QuantMode};

/// Everything one worker needs, validated.
#[derive(Debug, Clone)]
pub struct SendConfig {
    /// Where the worker sits in the job's tree.
    pub assignment: Assignment,
    /// Blocks in flight.
    pub window: u32,
    /// Time after which an unanswered block is sent again.
    pub retransmit: Duration,
    /// Block id of the preamble when the job has no sessions; the tensor's blocks follow it.
    /// With sessions the root's ACCEPT gives it.
    pub first_block: u32,
    /// Quantisation.
    pub quant: QuantMode,
    /// Give up after this long without a new result.
    pub timeout: Duration,
    /// Draw a progress bar (on a terminal).
    pub progress: bool,
    /// With sessions: what this worker remembers of its earlier joins of the job, shared by
    /// its successive allreduces (a worker that runs one allreduce needs none; see
    /// `JoinHistory`).
    pub joins: Option<Arc<Mutex<JoinHistory>>>,
}

/// What a finished worker reports.
#[derive(Debug, Clone)]
pub struct SendReport {
    /// Dequantized sums.
    pub values: Vec<f32>,
    /// The int32 sums before dequantization.
    pub sums: Vec<i32>,
    /// The agreed exponent.
    pub exponent: i8,
    /// OR of the results' flags.
    pub flags: Flags,
    /// Wall time of the tensor phase (after the preamble).
    pub elapsed: Duration,
    /// Wall time of the whole run.
    pub total: Duration,
    /// Contribution packets sent (first transmissions).
    pub packets: u64,
    /// Contributions sent again after a timeout.
    pub retransmissions: u64,
    /// Result packets received (including duplicates).
    pub received: u64,
    /// Datagrams dropped because they did not come from the parent's address (forged or
    /// stray results, ACCEPTs and REFUSEs never reach the worker's state machine).
    pub foreign: u64,
}

impl SendReport {
    /// Tensor payload bits per second of the tensor phase, in Gbit/s.
    pub fn goodput_gbps(&self) -> f64 {
        self.values.len() as f64 * 32.0 / self.elapsed.as_secs_f64().max(1e-9) / 1e9
    }
    /// Elements per second of the tensor phase.
    pub fn elements_per_sec(&self) -> f64 {
        self.values.len() as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// Contribution packets (with retransmissions) per second of the tensor phase.
    pub fn packets_per_sec(&self) -> f64 {
        (self.packets + self.retransmissions) as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
    /// One human-readable summary line.
    pub fn summary(&self) -> String {
        format!(
            "{} elements in {:.3}s: goodput {:.3} Gbps, {:.0} elements/s, {:.0} packets/s; {} packets, {} retransmissions, {} results received, exponent {}",
            self.values.len(),
            self.elapsed.as_secs_f64(),
            self.goodput_gbps(),
            self.elements_per_sec(),
            self.packets_per_sec(),
            self.packets,
            self.retransmissions,
            self.received,
            self.exponent
        )
    }
}

/// Why a worker failed.
#[derive(Debug, thiserror::Error)]
pub enum SendError {
    /// The assignment or sending parameters are unusable.
    #[error("{0}")]
    Setup(#[from] WorkerError),
    /// The workers cannot agree (length, mode, scale).
    #[error("{0}")]
    Agree(#[from] AgreeError),
    /// Nothing ever came back.
    #[error("no reply from the switch at {switch} within {secs:.1}s: is `fanin switchd` running there, with this worker (job {job}, rank {rank}) in its job table?")]
    Unreachable {
        /// The parent address.
        switch: SocketAddrV4,
        /// Seconds waited.
        secs: f64,
        /// Job.
        job: u16,
        /// Rank.
        rank: u16,
    },
    /// Results stopped arriving.
    #[error("timed out after {secs:.1}s without progress, waiting for block {block} ({done} of {blocks} blocks of the {phase} done); last saw {last}")]
    Stalled {
        /// Seconds without progress.
        secs: f64,
        /// Lowest unanswered block id.
        block: u32,
        /// Blocks answered.
        done: usize,
        /// Blocks in the phase.
        blocks: usize,
        /// "preamble" or "tensor".
        phase: &'static str,
        /// Description of the last datagram received.
        last: String,
    },
    /// The root never opened the session.
    #[error("no session: no ACCEPT from the switch at {switch} for job {job} rank {rank} within {secs:.1}s. A session opens only once all {workers} workers of the job have joined: are they all running, and is `fanin switchd` running there with this worker in its job table? (last saw {last})")]
    NoSession {
        /// The parent address.
        switch: SocketAddrV4,
        /// Seconds waited.
        secs: f64,
        /// Job.
        job: u16,
        /// Rank.
        rank: u16,
        /// Workers in the job.
        workers: u16,
        /// Description of the last datagram received.
        last: String,
    },
    /// The root refused a block.
    #[error("the switch refused block {block} of job {job}: {}; run the allreduce again", reason.describe())]
    Refused {
        /// Job.
        job: u16,
        /// The block refused.
        block: u32,
        /// Why.
        reason: RefuseReason,
    },
    /// The link failed.
    #[error("{0}")]
    Io(#[from] std::io::Error),
    /// Stopped by a signal.
    #[error("interrupted")]
    Interrupted,
}

/// What the worker last received, for timeout messages. Noting a datagram records a few
/// header fields only (it runs for every datagram); the text is built when a message needs it.
#[derive(Default)]
struct LastSeen {
    at: Option<Seen>,
    any: bool,
}

/// The facts [`LastSeen`] keeps of one datagram.
struct Seen {
    when: Instant,
    peer: SocketAddrV4,
    /// Type byte, job, block and contribution count, or why the packet is malformed.
    what: Result<(u8, u16, u32, u8), WireError>,
    /// Dropped because only this parent answers the worker.
    foreign_to: Option<SocketAddrV4>,
}

impl LastSeen {
    fn note(&mut self, peer: SocketAddrV4, payload: &[u8]) {
        self.any = true;
        let what =
            Packet::new_checked(payload).map(|p| (p.packet_type(), p.job(), p.block(), p.count()));
        self.at = Some(Seen {
            when: Instant::now(),
            peer,
            what,
            foreign_to: None,
        });
    }

    /// Notes a datagram dropped for its source.
    fn note_foreign(&mut self, peer: SocketAddrV4, payload: &[u8], parent: SocketAddrV4) {
        self.note(peer, payload);
        if let Some(s) = &mut self.at {
            s.foreign_to = Some(parent);
        }
    }

    fn describe(&self) -> String {
        let Some(s) = &self.at else {
            return "nothing at all".into();
        };
        let what = match s.what {
            Ok((ptype, job, block, count)) => {
                let kind = match PacketType::from_u8(ptype) {
                    Some(PacketType::Result) => "result",
                    Some(PacketType::Contribution) => "contribution",
                    Some(PacketType::Join) => "JOIN",
                    Some(PacketType::Accept) => "ACCEPT",
                    Some(PacketType::Refuse) => "REFUSE",
                    None => "packet of unknown type",
                };
                format!("a {kind} for job {job} block {block} with {count} of the contributions")
            }
            Err(e) => format!("a malformed datagram ({e})"),
        };
        let dropped = s.foreign_to.map_or(String::new(), |parent| {
            format!(" (dropped: only the parent {parent} answers this worker)")
        });
        format!(
            "{what} from {}{dropped}, {:.1}s ago",
            s.peer,
            s.when.elapsed().as_secs_f64()
        )
    }
}

struct Driver<'a> {
    link: &'a mut dyn Link,
    cfg: &'a SendConfig,
    start: Instant,
    stop: Option<&'a AtomicBool>,
    seen: LastSeen,
    received: u64,
    foreign: u64,
    out: Vec<Dgram>,
    inbox: Vec<Dgram>,
}

impl Driver<'_> {
    fn now(&self) -> u64 {
        self.start.elapsed().as_micros() as u64
    }

    fn run(
        &mut self,
        w: &mut Worker,
        phase: &'static str,
        bar: Option<&ProgressBar>,
    ) -> Result<(), SendError> {
        let parent = self.cfg.assignment.parent;
        let to = SocketAddrV4::new(parent.ip, parent.udp_port);
        let mut last_progress = Instant::now();
        let mut done = 0usize;
        while !w.done() {
            if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Err(SendError::Interrupted);
            }
            let now = self.now();
            for i in w.poll(now) {
                self.out.push(Dgram::new(to, w.payload(i)));
            }
            if !self.out.is_empty() {
                self.link.send(&mut self.out)?;
            }
            let wait = w
                .deadline()
                .map_or(1000, |d| d.saturating_sub(self.now()))
                .clamp(0, 10_000);
            let mut got = 0;
            let mut refused = None;
            let (foreign, received, seen) = (&mut self.foreign, &mut self.received, &mut self.seen);
            // Each datagram is handled where the link received it (no copy).
            self.link
                .recv_each(Duration::from_micros(wait), &mut |peer, p| {
                    // Only the parent answers a worker: anything else is forged or stray.
                    if peer != to {
                        *foreign += 1;
                        seen.note_foreign(peer, p, to);
                        return;
                    }
                    *received += 1;
                    // After a refusal the worker takes nothing more: the run ends with it.
                    if refused.is_some() {
                        return;
                    }
                    match w.receive_payload(p) {
                        Received::Result { .. } => got += 1,
                        Received::Refused { block, reason } => refused = Some((block, reason)),
                        _ => {}
                    }
                    seen.note(peer, p);
                })?;
            if let Some((block, reason)) = refused {
                return Err(SendError::Refused {
                    job: self.cfg.assignment.job,
                    block,
                    reason,
                });
            }
            if got > 0 {
                done += got;
                last_progress = Instant::now();
                if let Some(b) = bar {
                    b.inc(got as u64 * self.cfg.assignment.elements as u64);
                }
            } else if last_progress.elapsed() >= self.cfg.timeout {
                let secs = last_progress.elapsed().as_secs_f64();
                return Err(if self.seen.any {
                    SendError::Stalled {
                        secs,
                        block: w.waiting_for().unwrap_or(0),
                        done,
                        blocks: w.blocks(),
                        phase,
                        last: self.seen.describe(),
                    }
                } else {
                    SendError::Unreachable {
                        switch: to,
                        secs,
                        job: self.cfg.assignment.job,
                        rank: self.cfg.assignment.rank,
                    }
                });
            }
        }
        Ok(())
    }

    /// Opens the allreduce's session: JOINs until the root's ACCEPT; returns its first block.
    fn join(&mut self, nonce: u32) -> Result<u32, SendError> {
        let a = &self.cfg.assignment;
        let retransmit = self.cfg.retransmit.as_micros().max(1) as u64;
        let history = self.cfg.joins.as_ref();
        let mut j = Joiner::new(a.clone(), nonce, retransmit);
        if let Some(h) = history {
            j = j.with_history(&h.lock().expect("join history"));
        }
        let got = self.join_with(&mut j);
        if let Some(h) = history {
            h.lock()
                .expect("join history")
                .record(nonce, got.as_ref().ok().copied());
        }
        got
    }

    /// Sends `j`'s JOINs until the root's ACCEPT; returns the session's first block.
    fn join_with(&mut self, j: &mut Joiner) -> Result<u32, SendError> {
        let a = &self.cfg.assignment;
        let to = SocketAddrV4::new(a.parent.ip, a.parent.udp_port);
        let started = Instant::now();
        loop {
            if self.stop.is_some_and(|s| s.load(Ordering::Relaxed)) {
                return Err(SendError::Interrupted);
            }
            if j.poll(self.now()) {
                self.out.push(Dgram::new(to, j.payload()));
                self.link.send(&mut self.out)?;
            }
            let wait = j
                .deadline()
                .map_or(1000, |d| d.saturating_sub(self.now()))
                .clamp(0, 10_000);
            self.link
                .recv(&mut self.inbox, Duration::from_micros(wait))?;
            for d in self.inbox.drain(..) {
                if d.peer != to {
                    self.foreign += 1;
                    self.seen.note_foreign(d.peer, d.payload(), to);
                    continue;
                }
                self.received += 1;
                self.seen.note(d.peer, d.payload());
                if let JoinReply::Accepted(base) = j.receive_payload(d.payload()) {
                    return Ok(base);
                }
            }
            if started.elapsed() >= self.cfg.timeout {
                // The root answers no JOIN until every rank has joined: silence does not tell
                // a missing switch from missing workers.
                return Err(SendError::NoSession {
                    switch: to,
                    secs: started.elapsed().as_secs_f64(),
                    job: a.job,
                    rank: a.rank,
                    workers: a.workers,
                    last: self.seen.describe(),
                });
            }
        }
    }
}

/// A fresh JOIN nonce: never 0, different for every allreduce of every process.
fn fresh_nonce() -> u32 {
    loop {
        let n: u32 = rand::random();
        if n != 0 {
            return n;
        }
    }
}

/// Runs one worker's allreduce of `data` over `link`. `stop` interrupts it.
pub fn run(
    cfg: &SendConfig,
    data: &[f32],
    link: &mut dyn Link,
    stop: Option<&AtomicBool>,
) -> Result<SendReport, SendError> {
    let pre = scheme::preamble(cfg.quant, data, cfg.assignment.workers as u32);
    run_with(
        cfg,
        data.len(),
        pre,
        &|e| quant::quantize(data, e),
        link,
        stop,
    )
}

/// Runs one worker's allreduce of int32 `data` over `link`, unquantised (`--scale 0`
/// whatever `cfg.quant` says): the sums are exact unless flagged `OVERFLOW`.
pub fn run_i32(
    cfg: &SendConfig,
    data: &[i32],
    link: &mut dyn Link,
    stop: Option<&AtomicBool>,
) -> Result<SendReport, SendError> {
    let cfg = SendConfig {
        quant: QuantMode::Scale(0),
        ..cfg.clone()
    };
    let workers = cfg.assignment.workers as u32;
    let pre = scheme::preamble_for_len(QuantMode::Scale(0), 0.0, data.len(), workers);
    run_with(&cfg, data.len(), pre, &|_| data.to_vec(), link, stop)
}

/// The session, preamble and tensor of one allreduce of `len` elements, given this
/// worker's preamble and its quantised tensor at the agreed exponent.
fn run_with(
    cfg: &SendConfig,
    len: usize,
    pre: Vec<i32>,
    quantize: &dyn Fn(i8) -> Vec<i32>,
    link: &mut dyn Link,
    stop: Option<&AtomicBool>,
) -> Result<SendReport, SendError> {
    let a = &cfg.assignment;
    // Before the JOIN, which carries the rank's bit.
    a.check()?;
    let workers = a.workers as u32;
    let mk = |first_block: u32, exponent: i8, v: Vec<i32>| {
        Worker::from_vec(
            a.clone(),
            Sending {
                window: cfg.window,
                retransmit_after: cfg.retransmit.as_micros().max(1) as u64,
                first_block,
                exponent,
            },
            v,
        )
    };
    let t0 = Instant::now();
    let mut d = Driver {
        link,
        cfg,
        start: t0,
        stop,
        seen: LastSeen::default(),
        received: 0,
        foreign: 0,
        out: Vec::with_capacity(cfg.window as usize),
        inbox: Vec::with_capacity(crate::link::BATCH),
    };
    let first_block = if a.session {
        d.join(fresh_nonce())?
    } else {
        cfg.first_block
    };
    let mut w = mk(first_block, 0, pre)?;
    d.run(&mut w, "preamble", None)?;
    let (sums, _) = w.result().expect("done");
    let e = scheme::agree(cfg.quant, &sums, len, workers)?;
    let pre_blocks = w.blocks() as u32;
    let pre_stats = w.stats();

    let q = quantize(e);
    // The worker takes the quantised tensor and hands back its sums without copies.
    let mut w = mk(first_block.wrapping_add(pre_blocks), e, q)?;
    let bar = (cfg.progress && std::io::IsTerminal::is_terminal(&std::io::stderr())).then(|| {
        let b = ProgressBar::new(len as u64);
        b.set_style(
            ProgressStyle::with_template(
                "{spinner} [{elapsed_precise}] {wide_bar} {pos}/{len} elements ({per_sec}, eta {eta})",
            )
            .expect("static template"),
        );
        b
    });
    let t1 = Instant::now();
    let r = d.run(&mut w, "tensor", bar.as_ref());
    if let Some(b) = &bar {
        b.finish_and_clear();
    }
    r?;
    let elapsed = t1.elapsed();
    d.link.flush()?;
    let s = w.stats();
    let (sums, flags) = w.into_result().map_err(|_| ()).expect("done");
    Ok(SendReport {
        values: quant::dequantize(&sums, e),
        sums,
        exponent: e,
        flags,
        elapsed,
        total: t0.elapsed(),
        packets: s.sent + pre_stats.sent,
        retransmissions: s.retransmissions + pre_stats.retransmissions,
        received: d.received,
        foreign: d.foreign,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, UdpSocket};
    use std::sync::{mpsc, Arc};

    use fanin_proto::config::{Mode, Trust};
    use fanin_proto::plan::{build, star, Addressing, JobSpec};
    use fanin_proto::wire::Repr;

    use crate::allreduce::bind_consecutive;
    use crate::link::UdpLink;
    use crate::switchd::{self, Control, SoftSwitch};

    /// A timeout's message names the last datagram: its type, job, block and count, its
    /// sender, and why it was dropped; or that it was malformed.
    #[test]
    fn last_seen_describes_the_last_datagram() {
        let mut seen = LastSeen::default();
        assert_eq!(seen.describe(), "nothing at all");
        let from = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 9), 4000);
        let parent = SocketAddrV4::new(Ipv4Addr::new(10, 0, 0, 1), 4791);
        let r = Repr {
            ptype: PacketType::Result,
            flags: Default::default(),
            exponent: 0,
            job: 7,
            elements: 2,
            block: 3,
            child: 0,
            bitmap: 0b101,
        };
        seen.note_foreign(from, &r.to_bytes(&[1, 2]), parent);
        let d = seen.describe();
        assert!(
            d.starts_with(
                "a result for job 7 block 3 with 2 of the contributions from 10.0.0.9:4000 \
                 (dropped: only the parent 10.0.0.1:4791 answers this worker), "
            ),
            "{d}"
        );
        seen.note(parent, &[1, 2, 3]);
        let d = seen.describe();
        assert!(
            d.starts_with("a malformed datagram (") && d.contains(") from 10.0.0.1:4791, "),
            "{d}"
        );
    }

    /// Before each JOIN or contribution leaves, sends a forged ACCEPT (a wrong first block) or
    /// RESULT (wrong sums, every rank's bit set) for it straight to the worker's own UDP port
    /// from another socket, so the forgery is queued before the switch can answer.
    struct Forger<L> {
        inner: L,
        sock: UdpSocket,
        all: u64,
        forged: u64,
    }

    impl<L: Link> Link for Forger<L> {
        fn local_addr(&self) -> SocketAddrV4 {
            self.inner.local_addr()
        }
        fn send(&mut self, out: &mut Vec<Dgram>) -> std::io::Result<()> {
            for d in out.iter() {
                let r = Repr::parse(&Packet::new_checked(d.payload()).unwrap()).unwrap();
                let forged = match r.ptype {
                    PacketType::Join => Repr {
                        ptype: PacketType::Accept,
                        elements: 1,
                        block: r.block.wrapping_add(12345),
                        ..r
                    }
                    .to_bytes(&[r.block as i32]),
                    PacketType::Contribution => Repr {
                        ptype: PacketType::Result,
                        flags: Flags::default().with(Flags::MULTICAST),
                        bitmap: self.all,
                        ..r
                    }
                    .to_bytes(&vec![7777; r.elements as usize]),
                    _ => continue,
                };
                self.sock.send_to(&forged, self.inner.local_addr())?;
                self.forged += 1;
            }
            self.inner.send(out)
        }
        fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> std::io::Result<()> {
            self.inner.recv(into, wait)
        }
    }

    /// A switchd thread at the root of job 5 (two workers, sessions and every protection
    /// on, 16 slots of 16 elements), the plan, and the workers' two bound sockets.
    struct Star {
        plan: fanin_proto::plan::Plan,
        socks: Vec<UdpSocket>,
        at: std::net::SocketAddr,
        stop: Arc<AtomicBool>,
        thread: std::thread::JoinHandle<crate::switchd::Snapshot>,
    }

    impl Star {
        fn start() -> Self {
            let (base, mut socks) = bind_consecutive(3).unwrap();
            let plan = build(
                &star(2),
                JobSpec {
                    job: 5,
                    slot_count: 16,
                    elements: 16,
                    mode: Mode::Static,
                    addressing: Addressing::Loopback { base },
                    trust: Trust::default(),
                },
            )
            .unwrap();
            let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
            let stop = Arc::new(AtomicBool::new(false));
            let (_tx, rx) = mpsc::channel();
            let ctl = Control::new(stop.clone(), rx);
            let sw_sock = socks.remove(0);
            let at = sw_sock.local_addr().unwrap();
            let thread = std::thread::spawn(move || {
                let mut link = UdpLink::from_socket(sw_sock).unwrap();
                switchd::run("t", &mut sw, &mut link, &ctl)
            });
            Self {
                plan,
                socks,
                at,
                stop,
                thread,
            }
        }

        /// Stops the switch; its final counters.
        fn stop(self) -> crate::switchd::Snapshot {
            self.stop.store(true, Ordering::Relaxed);
            self.thread.join().unwrap()
        }
    }

    /// Regression: a worker took RESULT (and ACCEPT) packets from any source, so a forged
    /// RESULT sent straight to its UDP port mid-allreduce gave it a wrong sum. Every block here
    /// gets a forgery that arrives before the switch's answer; the sums must still be exact.
    #[test]
    fn forged_results_sent_to_a_worker_are_dropped() {
        let star = Star::start();
        let plan = &star.plan;
        assert!(plan.workers[0].session);
        let n = 1000;
        let data: Vec<Vec<i32>> = (0..2)
            .map(|r| (0..n).map(|i| i * 3 - 1500 + r * 7).collect())
            .collect();
        let workers: Vec<_> = star
            .socks
            .iter()
            .map(|s| s.try_clone().unwrap())
            .enumerate()
            .map(|(r, sock)| {
                let cfg = SendConfig {
                    assignment: plan.workers[r].clone(),
                    window: 8,
                    retransmit: Duration::from_millis(20),
                    first_block: 0,
                    quant: QuantMode::Scale(0),
                    timeout: Duration::from_secs(10),
                    progress: false,
                    joins: None,
                };
                let d = data[r].clone();
                std::thread::spawn(move || {
                    let mut link = Forger {
                        inner: UdpLink::from_socket(sock).unwrap(),
                        sock: UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap(),
                        all: 0b11,
                        forged: 0,
                    };
                    let rep = run_i32(&cfg, &d, &mut link, None);
                    (rep, link.forged)
                })
            })
            .collect();
        let want: Vec<i32> = (0..n as usize).map(|i| data[0][i] + data[1][i]).collect();
        for (r, h) in workers.into_iter().enumerate() {
            let (rep, forged) = h.join().unwrap();
            let rep = rep.unwrap_or_else(|e| panic!("worker {r}: {e}"));
            assert_eq!(rep.sums, want, "worker {r}: a forged result got through");
            assert!(
                forged > n as u64 / 16,
                "worker {r}: only {forged} forgeries"
            );
            assert_eq!(
                rep.foreign, forged,
                "worker {r}: every forgery dropped and counted"
            );
        }
        let snap = star.stop();
        assert_eq!(snap.get("malformed"), 0);
    }

    /// A JOIN of allreduce 1 that reaches the root during allreduce 2, after the worker's
    /// new JOIN, replaces its nonce there: the session opens with an ACCEPT naming the old
    /// nonce. With its join history the worker takes it and both allreduces end exact;
    /// without (`joins: None`) rank 0 waits for an ACCEPT that never comes and fails.
    #[test]
    fn a_join_delayed_past_an_allreduce_does_not_stall_the_next() {
        for remember in [true, false] {
            let star = Star::start();
            let (plan, sw_addr) = (&star.plan, star.at);
            // Rank 0's socket, a second handle for the stale JOIN (its source must match).
            let stale_from = star.socks[0].try_clone().unwrap();
            let mut links: Vec<UdpLink> = star
                .socks
                .iter()
                .map(|s| UdpLink::from_socket(s.try_clone().unwrap()).unwrap())
                .collect();
            let joins: Vec<_> = (0..2)
                .map(|_| remember.then(|| Arc::new(Mutex::new(JoinHistory::default()))))
                .collect();
            // Rank 0 retransmits its JOIN only after a second: the stale JOIN and rank 1's
            // land in between.
            let cfg = |r: usize| SendConfig {
                assignment: plan.workers[r].clone(),
                window: 8,
                retransmit: Duration::from_millis(if r == 0 { 1000 } else { 20 }),
                first_block: 0,
                quant: QuantMode::Scale(0),
                timeout: Duration::from_secs(3),
                progress: false,
                joins: joins[r].clone(),
            };
            let data = |k: i32, r: i32| -> Vec<i32> { (0..100).map(|i| i * k + r).collect() };
            // Allreduce 1, both ranks at once.
            let mut l1 = links.pop().unwrap();
            let mut l0 = links.pop().unwrap();
            let (c0, c1) = (cfg(0), cfg(1));
            let t1 = std::thread::spawn(move || {
                let rep = run_i32(&c1, &data(1, 1), &mut l1, None);
                (rep, l1)
            });
            let rep0 = run_i32(&c0, &data(1, 0), &mut l0, None).unwrap();
            let (rep1, mut l1) = t1.join().unwrap();
            assert_eq!(rep0.sums, rep1.unwrap().sums);
            // The JOIN rank 0 opened allreduce 1 with (its nonce, from the history; without
            // one, any nonce of rank 0 other than allreduce 2's behaves the same).
            let old = joins[0]
                .as_ref()
                .map_or(0x5eed, |h| h.lock().unwrap().nonces()[0]);
            let stale = Joiner::new(plan.workers[0].clone(), old, 1).payload();
            // Allreduce 2: rank 0 joins; then its stale JOIN arrives; then rank 1 joins.
            let c0 = cfg(0);
            let t0 = std::thread::spawn(move || run_i32(&c0, &data(2, 0), &mut l0, None));
            std::thread::sleep(Duration::from_millis(200));
            stale_from.send_to(&stale, sw_addr).unwrap();
            std::thread::sleep(Duration::from_millis(50));
            let c1 = cfg(1);
            let rep1 = run_i32(&c1, &data(2, 1), &mut l1, None);
            let rep0 = t0.join().unwrap();
            let want: Vec<i32> = (0..100).map(|i| 4 * i + 1).collect();
            if remember {
                assert_eq!(rep0.unwrap().sums, want);
                assert_eq!(rep1.unwrap().sums, want);
                let h = joins[0].as_ref().unwrap().lock().unwrap();
                assert_eq!(h.nonces().len(), 2);
            } else {
                let e = rep0.expect_err("rank 0 cannot take the session without its history");
                assert!(matches!(e, SendError::NoSession { .. }), "{e}");
            }
            star.stop();
        }
    }
}
