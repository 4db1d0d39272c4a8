//! The reference model of a fanin switch: a deterministic state machine
//! `(state, input frame, time) -> (output frames, counter changes)`.
//!
//! docs/protocol.md ("Switch semantics") describes the same rules in prose; the RTL,
//! the software switch and the testbench scoreboard are all checked against this code.

mod counters;
mod datagram;
pub mod dynamic;
mod session;
mod slot;

pub use counters::{Counter, Counters, PortCounters};
pub use datagram::{DatagramOutput, DatagramReaction};
pub use session::{
    bypass_source_ok, from_above, next_base, port_below, source_matches, Member, Session,
};
pub use slot::{newer, saturating_add, CopyState, SlotCopy};

use core::net::Ipv4Addr;
use std::collections::BTreeMap;

use crate::config::{
    check_disjoint_ranges, ConfigError, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig,
};
use crate::wire::frame::{classify, udp_checksum_ok, udp_frame, FrameError};
use crate::wire::{
    Datagram, Flags, FrameKind, L4Addr, Packet, PacketType, RefuseReason, Repr, WireError,
};

/// A frame the switch sends.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// Egress port.
    pub port: u8,
    /// Ethernet frame without FCS.
    pub frame: Vec<u8>,
}

/// Why a contribution was forwarded unaggregated (or, at the root, dropped).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BypassReason {
    /// The slot copy is busy with another block.
    Collision,
    /// The job holds its quota of busy copies.
    Quota,
    /// The child is beyond the degree limit.
    Degree,
    /// The block was already sent up, flushed or reclaimed here.
    Straggler,
    /// The packet already carried the bypass flag.
    Transit,
}

/// Why a frame addressed to the switch was dropped as malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum MalformedReason {
    /// Ethernet/IPv4/UDP problem.
    #[error("{0}")]
    Frame(FrameError),
    /// fanin header problem.
    #[error("{0}")]
    Wire(WireError),
    /// Child index beyond the job's children.
    #[error("child index out of range")]
    ChildOutOfRange,
    /// Contributor bitmap has ranks the sending child does not deliver.
    #[error("contributors not delivered by this child")]
    RanksNotOfChild,
    /// Contributor bitmap has ranks outside the job entry.
    #[error("contributors outside the job")]
    RanksNotOfJob,
    /// More elements than the slot has lanes.
    #[error("more elements than slot lanes")]
    TooManyElements,
    /// Element count differs from the block's first contribution.
    #[error("element count differs from the block's")]
    ElementMismatch,
    /// A result, ACCEPT or REFUSE addressed to the job's root.
    #[error("result sent to the root")]
    ResultAtRoot,
    /// A JOIN, ACCEPT or REFUSE for a job whose entry has sessions off.
    #[error("session packet for a job without sessions")]
    NoSessions,
}

/// What the switch did with one input.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Verdict {
    /// Added into a slot; the block is not complete yet.
    Aggregated,
    /// Added, and the block completed (aggregate sent up, or result multicast).
    Completed,
    /// Already held: suppressed.
    Duplicate,
    /// Already held; the stored aggregate was re-sent upward.
    Reemitted,
    /// Already complete at the root: the result was replayed to the sender.
    Replayed,
    /// Overlapped the slot's contributors in part: dropped.
    Overlap,
    /// Forwarded toward the parent with the bypass flag.
    Bypassed(BypassReason),
    /// Root could not aggregate it (collision or quota): dropped, sender retransmits.
    RootDrop(BypassReason),
    /// A result from the parent, multicast to the children.
    ResultForwarded,
    /// Unknown job: dropped.
    UnknownJob,
    /// Malformed: dropped.
    Malformed(MalformedReason),
    /// Not for the switch: switched by the forwarding table.
    Forwarded,
    /// Not for the switch and no route: dropped.
    NoRoute,
    /// Not IPv4: dropped.
    NonIp,
    /// An ARP request for the switch's address: answered on its ingress port.
    ArpReplied,
    /// From a source the job entry does not name for it: dropped.
    BadSource,
    /// A JOIN taken at the root; the session opens once every rank has joined.
    Joined,
    /// A JOIN that completed the ranks: the session opened and every rank was accepted.
    SessionOpened,
    /// A repeated JOIN of the open session: its ACCEPT was sent again.
    JoinAnswered,
    /// A JOIN passed toward the root by an inner switch.
    JoinForwarded,
    /// An ACCEPT or REFUSE from the parent, passed down to the children it names.
    Relayed,
    /// A contribution the root refused (no session, or an earlier session's block); the
    /// sender was told with a REFUSE.
    Refused(RefuseReason),
    /// A key-value packet, handled by [`crate::kv::switch::KvTable`].
    Kv(crate::kv::switch::KvVerdict),
}

/// Outputs and verdict of one input.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reaction {
    /// Frames sent, in order.
    pub outputs: Vec<Output>,
    /// What happened.
    pub verdict: Verdict,
}

#[derive(Debug, Clone)]
struct JobState {
    entry: JobEntry,
    busy: u32,
    session: Session,
}

/// The reference switch.
#[derive(Debug, Clone)]
pub struct Switch {
    me: L4Addr,
    params: Params,
    routes: BTreeMap<Ipv4Addr, u8>,
    jobs: BTreeMap<u16, JobState>,
    owner: Vec<Option<u16>>,
    slots: Vec<[SlotCopy; 2]>,
    counters: Counters,
    kv: crate::kv::switch::KvTable,
    dynamic: dynamic::DynTable,
}

impl Switch {
    /// Builds a switch from a validated configuration.
    pub fn new(cfg: &SwitchConfig) -> Result<Self, ConfigError> {
        cfg.validate()?;
        let p = cfg.params;
        let lanes = p.elements as usize;
        let mut s = Self {
            me: L4Addr {
                mac: cfg.mac,
                ip: cfg.ip,
                port: cfg.udp_port,
            },
            params: p,
            routes: BTreeMap::new(),
            jobs: BTreeMap::new(),
            owner: vec![None; p.slots as usize],
            slots: (0..p.slots)
                .map(|_| [SlotCopy::new(lanes), SlotCopy::new(lanes)])
                .collect(),
            counters: Counters::new(p.ports as usize),
            kv: crate::kv::switch::KvTable::new(&cfg.kv_jobs)?,
            dynamic: dynamic::DynTable::default(),
        };
        for r in &cfg.routes {
            s.set_route(r.ip, r.port)?;
        }
        for j in &cfg.jobs {
            s.set_job(j.clone())?;
        }
        Ok(s)
    }

    /// Table sizes.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The switch's own address.
    pub fn address(&self) -> L4Addr {
        self.me
    }

    /// Counters.
    pub fn counters(&self) -> &Counters {
        &self.counters
    }

    /// The key-value job table and its state.
    pub fn kv(&self) -> &crate::kv::switch::KvTable {
        &self.kv
    }

    /// The key-value job table, for adding and removing key-value jobs.
    pub fn kv_mut(&mut self) -> &mut crate::kv::switch::KvTable {
        &mut self.kv
    }

    /// The dynamic-mode (Canary) jobs and their copies.
    pub fn dynamic(&self) -> &dynamic::DynTable {
        &self.dynamic
    }

    /// Busy copies of `job`, if the job exists.
    pub fn job_busy(&self, job: u16) -> Option<u32> {
        self.jobs.get(&job).map(|j| j.busy)
    }

    /// The job entry of `job`.
    pub fn job(&self, job: u16) -> Option<&JobEntry> {
        self.jobs.get(&job).map(|j| &j.entry)
    }

    /// The session state of `job` (meaningful at its root, with sessions on).
    pub fn session(&self, job: u16) -> Option<&Session> {
        self.jobs.get(&job).map(|j| &j.session)
    }

    /// A slot copy, for inspection.
    pub fn copy(&self, slot: u32, copy: usize) -> &SlotCopy {
        &self.slots[slot as usize][copy]
    }

    /// Adds or replaces a forwarding-table entry.
    pub fn set_route(&mut self, ip: Ipv4Addr, port: u8) -> Result<(), ConfigError> {
        if port >= self.params.ports {
            return Err(ConfigError::BadParam {
                name: "route port",
                value: port as u64,
                why: "below the port count",
            });
        }
        if !self.routes.contains_key(&ip) && self.routes.len() >= self.params.max_routes as usize {
            return Err(ConfigError::TooManyRoutes(
                self.routes.len() + 1,
                self.params.max_routes,
            ));
        }
        self.routes.insert(ip, port);
        Ok(())
    }

    /// Adds or replaces a job entry. A replaced job's slots are freed. On error nothing changes.
    pub fn set_job(&mut self, entry: JobEntry) -> Result<(), ConfigError> {
        entry.validate(&self.params)?;
        for other in self.jobs.values().filter(|o| o.entry.job != entry.job) {
            check_disjoint_ranges(&other.entry, &entry)?;
        }
        let held = self.jobs.contains_key(&entry.job) || self.dynamic.has(entry.job);
        if !held && self.jobs.len() + self.dynamic.len() >= self.params.max_jobs as usize {
            return Err(ConfigError::TooManyJobs(
                self.jobs.len() + 1,
                self.params.max_jobs,
            ));
        }
        self.remove_job(entry.job);
        if let Mode::Dynamic { .. } = entry.mode {
            self.dynamic
                .set_job(entry, &self.params, &mut self.counters);
            return Ok(());
        }
        for s in entry.slot_base..entry.slot_base + entry.slot_count {
            self.owner[s as usize] = Some(entry.job);
        }
        let session = Session::new(entry.trust.first_block.unwrap_or(0));
        self.jobs.insert(
            entry.job,
            JobState {
                entry,
                busy: 0,
                session,
            },
        );
        Ok(())
    }

    /// Removes a job and frees its slots. Returns whether it existed.
    pub fn remove_job(&mut self, job: u16) -> bool {
        if self.dynamic.remove_job(job, &mut self.counters) {
            return true;
        }
        let Some(js) = self.jobs.remove(&job) else {
            return false;
        };
        for s in js.entry.slot_base..js.entry.slot_base + js.entry.slot_count {
            self.owner[s as usize] = None;
            for c in &mut self.slots[s as usize] {
                c.state = CopyState::Free;
            }
        }
        let used = self.counters.get(Counter::SlotsInUse) - js.busy as u64;
        self.counters.set(Counter::SlotsInUse, used);
        true
    }

    /// Resets a job from the control plane: frees its slot copies and closes its session
    /// (workers must join again; the next session still starts beyond every block the job
    /// used). Returns whether the job exists.
    pub fn reset_job(&mut self, job: u16) -> bool {
        let Some(js) = self.jobs.get_mut(&job) else {
            return false;
        };
        js.session.base = None;
        js.session.pending = 0;
        js.session.members.iter_mut().for_each(|m| *m = None);
        let (first, count) = (js.entry.slot_base, js.entry.slot_count);
        for slot in first..first + count {
            for ci in 0..2 {
                self.set_state(slot as usize, ci, CopyState::Free);
            }
        }
        true
    }

    /// Handles one received frame at tick `now` on ingress `port`.
    pub fn handle(&mut self, now: u64, port: u8, frame: &[u8]) -> Reaction {
        if let Some(pc) = self.counters.ports.get_mut(port as usize) {
            pc.rx_packets += 1;
            pc.rx_bytes += frame.len() as u64;
        }
        let mut out = Vec::new();
        let verdict = self.dispatch(now, port, frame, &mut out);
        self.count(verdict);
        for o in &out {
            if let Some(pc) = self.counters.ports.get_mut(o.port as usize) {
                pc.tx_packets += 1;
                pc.tx_bytes += o.frame.len() as u64;
            }
        }
        Reaction {
            outputs: out,
            verdict,
        }
    }

    fn count(&mut self, v: Verdict) {
        let c = &mut self.counters;
        match v {
            Verdict::Aggregated | Verdict::Completed => c.inc(Counter::Aggregated),
            Verdict::Duplicate => c.inc(Counter::Duplicates),
            Verdict::Reemitted => {
                c.inc(Counter::Duplicates);
                c.inc(Counter::Reemits);
            }
            Verdict::Replayed => {
                c.inc(Counter::Duplicates);
                c.inc(Counter::ResultsSent);
            }
            Verdict::Overlap => c.inc(Counter::Overlaps),
            Verdict::Bypassed(r) => c.inc(match r {
                BypassReason::Collision => Counter::BypassCollision,
                BypassReason::Quota => Counter::BypassQuota,
                BypassReason::Degree => Counter::BypassDegree,
                BypassReason::Straggler => Counter::BypassStraggler,
                BypassReason::Transit => Counter::BypassTransit,
            }),
            Verdict::RootDrop(_) => c.inc(Counter::RootDrops),
            Verdict::ResultForwarded
            | Verdict::Joined
            | Verdict::SessionOpened
            | Verdict::JoinAnswered
            | Verdict::JoinForwarded
            | Verdict::Relayed => {}
            Verdict::BadSource => c.inc(Counter::BadSource),
            Verdict::Refused(_) => c.inc(Counter::Refused),
            Verdict::UnknownJob => c.inc(Counter::UnknownJob),
            Verdict::Malformed(_) => c.inc(Counter::Malformed),
            Verdict::Forwarded => c.inc(Counter::Forwarded),
            Verdict::NoRoute => c.inc(Counter::NoRoute),
            Verdict::NonIp => c.inc(Counter::NonIp),
            Verdict::ArpReplied => c.inc(Counter::ArpReplies),
            Verdict::Kv(crate::kv::switch::KvVerdict::Malformed(_)) => c.inc(Counter::Malformed),
            Verdict::Kv(crate::kv::switch::KvVerdict::UnknownJob) => c.inc(Counter::UnknownJob),
            Verdict::Kv(_) => {}
        }
    }

    fn dispatch(&mut self, now: u64, port: u8, frame: &[u8], out: &mut Vec<Output>) -> Verdict {
        if !self.dynamic.is_empty() {
            let cx = dynamic::Ctx {
                me: self.me,
                params: &self.params,
                routes: &self.routes,
            };
            let c = &mut self.counters;
            if let Some(v) = self.dynamic.intercept(&cx, c, now, port, frame, out) {
                return v;
            }
        }
        let (dst, udp) = match classify(frame) {
            FrameKind::NonIp => {
                // An ARP request for the switch's address is answered where it came from.
                return match crate::wire::arp::reply(frame, self.me.mac, self.me.ip) {
                    Some(frame) => {
                        out.push(Output { port, frame });
                        Verdict::ArpReplied
                    }
                    None => Verdict::NonIp,
                };
            }
            FrameKind::BadIpv4(e) => return Verdict::Malformed(MalformedReason::Frame(e)),
            FrameKind::Ipv4 { dst, udp } => (dst, udp),
        };
        if dst != self.me.ip {
            return match self.routes.get(&dst) {
                Some(&p) => {
                    out.push(Output {
                        port: p,
                        frame: frame.to_vec(),
                    });
                    Verdict::Forwarded
                }
                None => Verdict::NoRoute,
            };
        }
        let d = match udp {
            Some(Ok(_)) if !udp_checksum_ok(frame) => {
                return Verdict::Malformed(MalformedReason::Frame(FrameError::BadUdpChecksum))
            }
            Some(Ok(d)) if d.dst.port == self.me.port => d,
            Some(Err(e)) => return Verdict::Malformed(MalformedReason::Frame(e)),
            _ => return Verdict::Malformed(MalformedReason::Frame(FrameError::NotFanin)),
        };
        self.dispatch_udp(now, port, &d, out)
    }

    /// The part of [`Switch::dispatch`] after the frame checks: a UDP datagram to the switch.
    fn dispatch_udp(&mut self, now: u64, port: u8, d: &Datagram, out: &mut Vec<Output>) -> Verdict {
        // Without key-value jobs, types 8.. are unknown types (malformed), as in the RTL.
        if !self.kv.is_empty() && crate::kv::wire::is_kv(d.payload) {
            return Verdict::Kv(self.kv.handle(self.me, port, d, out));
        }
        let pkt = match Packet::new_checked(d.payload) {
            Ok(p) => p,
            Err(e) => return Verdict::Malformed(MalformedReason::Wire(e)),
        };
        let repr = match Repr::parse(&pkt) {
            Ok(r) => r,
            Err(e) => return Verdict::Malformed(MalformedReason::Wire(e)),
        };
        if !self.jobs.contains_key(&repr.job) {
            return Verdict::UnknownJob;
        }
        match repr.ptype {
            PacketType::Contribution => self.contribution(now, port, d, &repr, pkt.lanes(), out),
            PacketType::Result => self.result(port, d, &repr, out),
            PacketType::Join => self.join(port, d, &repr, out),
            PacketType::Accept | PacketType::Refuse => self.relay_down(port, d, &repr, out),
        }
    }

    fn result(&mut self, port: u8, d: &Datagram, repr: &Repr, out: &mut Vec<Output>) -> Verdict {
        let js = &self.jobs[&repr.job];
        let Role::Inner { parent, .. } = js.entry.role else {
            return Verdict::Malformed(MalformedReason::ResultAtRoot);
        };
        if !from_above(&js.entry, port, &parent) {
            return Verdict::BadSource;
        }
        let (slot, ci) = index(&js.entry, repr.block);
        for (i, c) in js.entry.children.iter().enumerate() {
            let mut payload = d.payload.to_vec();
            let mut p = Packet::new_unchecked(&mut payload[..]);
            p.set_child(i as u8);
            p.set_flags(repr.flags.with(Flags::MULTICAST));
            out.push(self.send(self.me, c.endpoint, &payload));
        }
        self.counters
            .add(Counter::ResultsSent, js.entry.children.len() as u64);
        let copy = &self.slots[slot][ci];
        if copy.state != CopyState::Free && copy.job == repr.job && copy.block == repr.block {
            self.set_state(slot, ci, CopyState::Done);
        }
        Verdict::ResultForwarded
    }

    fn contribution(
        &mut self,
        now: u64,
        port: u8,
        d: &Datagram,
        r: &Repr,
        data: &[[u8; 4]],
        out: &mut Vec<Output>,
    ) -> Verdict {
        let entry = &self.jobs[&r.job].entry;
        let root = matches!(entry.role, Role::Root);
        if r.bitmap & !entry.ranks != 0 {
            return Verdict::Malformed(MalformedReason::RanksNotOfJob);
        }
        if r.elements > self.params.elements {
            return Verdict::Malformed(MalformedReason::TooManyElements);
        }
        if let Err(v) = self.check_child_source(port, d, r) {
            return v;
        }
        let entry = &self.jobs[&r.job].entry;
        if !r.flags.has(Flags::BYPASS) {
            if r.child >= entry.degree_limit {
                return self.bypass(d, r, BypassReason::Degree, out);
            }
        } else if !root {
            return self.bypass(d, r, BypassReason::Transit, out);
        }
        if root {
            if let Some(why) = self.session_floor(r.job, r.block) {
                out.push(self.refuse_frame(port, d, r, why));
                return Verdict::Refused(why);
            }
        }
        let entry = &self.jobs[&r.job].entry;
        let (slot, ci) = index(entry, r.block);
        let copy = &self.slots[slot][ci];
        let same = copy.state != CopyState::Free && copy.job == r.job;
        if same && copy.block == r.block {
            return self.same_block(now, port, d, r, data, slot, ci, out);
        }
        if same && newer(copy.block, r.block) {
            // An older block than the copy holds: by the window rule its result was delivered.
            return if root {
                Verdict::Duplicate
            } else {
                self.bypass(d, r, BypassReason::Straggler, out)
            };
        }
        // The window rule makes a newer block safe to start over an emitted older one. At the
        // root, an aggregating older block is reclaimed only once it is stale (its workers
        // are gone): reclaiming on a timer would discard sums live workers cannot resend
        // faster than the timer.
        let stale_root = root
            && same
            && copy.state == CopyState::Aggregating
            && newer(r.block, copy.block)
            && self.stale(copy, now);
        let overwritable =
            !copy.state.busy() || (same && copy.state == CopyState::Emitted) || stale_root;
        if !overwritable {
            return self.refuse(d, r, BypassReason::Collision, root, out);
        }
        if stale_root {
            self.counters.inc(Counter::Reclaims);
        }
        let js = &self.jobs[&r.job];
        let freed = u32::from(copy.state.busy());
        if js.busy - freed >= js.entry.effective_quota() {
            return self.refuse(d, r, BypassReason::Quota, root, out);
        }
        self.set_state(slot, ci, CopyState::Free);
        self.slots[slot][ci].start(r.job, r.block, r.bitmap, r.exponent, r.flags, data, now);
        self.set_state_busy_from_free(slot, ci);
        self.try_complete(now, slot, ci, out)
    }

    #[allow(clippy::too_many_arguments)]
    fn same_block(
        &mut self,
        now: u64,
        port: u8,
        d: &Datagram,
        r: &Repr,
        data: &[[u8; 4]],
        slot: usize,
        ci: usize,
        out: &mut Vec<Output>,
    ) -> Verdict {
        let copy = &self.slots[slot][ci];
        let held = copy.bitmap;
        let subset = r.bitmap & !held == 0;
        let disjoint = r.bitmap & held == 0;
        match copy.state {
            CopyState::Aggregating => {
                if subset {
                    Verdict::Duplicate
                } else if !disjoint {
                    Verdict::Overlap
                } else if r.elements != copy.elements {
                    Verdict::Malformed(MalformedReason::ElementMismatch)
                } else {
                    self.slots[slot][ci].merge(r.bitmap, r.exponent, r.flags, data, now);
                    self.try_complete(now, slot, ci, out)
                }
            }
            CopyState::Emitted if subset => {
                out.push(self.aggregate_frame(slot, ci));
                Verdict::Reemitted
            }
            CopyState::Done if matches!(self.jobs[&r.job].entry.role, Role::Root) => {
                if subset {
                    out.push(self.replay(port, d, r, slot, ci));
                    Verdict::Replayed
                } else {
                    Verdict::Overlap
                }
            }
            _ if !disjoint && !subset => Verdict::Overlap,
            // Emitted/Done/Stale at an inner switch: the block already left this switch.
            _ => self.bypass(d, r, BypassReason::Straggler, out),
        }
    }

    fn try_complete(&mut self, now: u64, slot: usize, ci: usize, out: &mut Vec<Output>) -> Verdict {
        let copy = &self.slots[slot][ci];
        let entry = &self.jobs[&copy.job].entry;
        if copy.bitmap != entry.expected() {
            return Verdict::Aggregated;
        }
        self.counters.inc(Counter::Completions);
        match entry.role {
            Role::Root => {
                let n = entry.children.len();
                for i in 0..n {
                    let f = self.result_frame(slot, ci, i);
                    out.push(f);
                }
                self.counters.add(Counter::ResultsSent, n as u64);
                self.set_state(slot, ci, CopyState::Done);
            }
            Role::Inner { .. } => {
                self.set_state(slot, ci, CopyState::Emitted);
                self.slots[slot][ci].timer = now;
                self.slots[slot][ci].touched = now;
                out.push(self.aggregate_frame(slot, ci));
            }
        }
        Verdict::Completed
    }

    /// Forwards a contribution to the parent with the bypass flag, or drops it at the root.
    fn refuse(
        &mut self,
        d: &Datagram,
        r: &Repr,
        why: BypassReason,
        root: bool,
        out: &mut Vec<Output>,
    ) -> Verdict {
        if root {
            Verdict::RootDrop(why)
        } else {
            self.bypass(d, r, why, out)
        }
    }

    fn bypass(
        &mut self,
        d: &Datagram,
        r: &Repr,
        why: BypassReason,
        out: &mut Vec<Output>,
    ) -> Verdict {
        let Role::Inner { parent, .. } = self.jobs[&r.job].entry.role else {
            unreachable!("bypass is only chosen at inner switches")
        };
        let mut payload = d.payload.to_vec();
        Packet::new_unchecked(&mut payload[..]).set_flags(r.flags.with(Flags::BYPASS));
        let src = L4Addr {
            mac: self.me.mac,
            ..d.src
        };
        out.push(self.send(src, parent, &payload));
        Verdict::Bypassed(why)
    }

    fn replay(&self, port: u8, d: &Datagram, r: &Repr, slot: usize, ci: usize) -> Output {
        let copy = &self.slots[slot][ci];
        let repr = header(copy, PacketType::Result, copy.flags, r.child);
        let to = reply_to(d, port);
        self.send_repr(self.me, to, &repr, copy.payload())
    }

    fn result_frame(&self, slot: usize, ci: usize, child: usize) -> Output {
        let copy = &self.slots[slot][ci];
        let entry = &self.jobs[&copy.job].entry;
        let repr = header(
            copy,
            PacketType::Result,
            copy.flags.with(Flags::MULTICAST),
            child as u8,
        );
        self.send_repr(
            self.me,
            entry.children[child].endpoint,
            &repr,
            copy.payload(),
        )
    }

    fn aggregate_frame(&self, slot: usize, ci: usize) -> Output {
        let copy = &self.slots[slot][ci];
        let entry = &self.jobs[&copy.job].entry;
        let Role::Inner {
            parent,
            index_at_parent,
        } = entry.role
        else {
            unreachable!("only inner switches send aggregates up")
        };
        let partial = copy.bitmap != entry.expected();
        let flags = if partial {
            copy.flags.with(Flags::PARTIAL)
        } else {
            copy.flags
        };
        let repr = header(copy, PacketType::Contribution, flags, index_at_parent);
        self.send_repr(self.me, parent, &repr, copy.payload())
    }

    fn send(&self, src: L4Addr, to: Endpoint, payload: &[u8]) -> Output {
        Output {
            port: to.port,
            frame: Datagram {
                src,
                dst: to.l4(),
                payload,
            }
            .to_frame(false),
        }
    }

    /// [`Self::send`] of `repr.to_bytes(data)`, the header and elements written straight
    /// into the frame (the hot path: results, aggregates and replays).
    fn send_repr(&self, src: L4Addr, to: Endpoint, repr: &Repr, data: &[i32]) -> Output {
        Output {
            port: to.port,
            frame: udp_frame(src, to.l4(), repr.buffer_len(), |b| {
                repr.write_into(b, data)
            }),
        }
    }

    /// Moves a copy to `state`, keeping the busy counts right.
    fn set_state(&mut self, slot: usize, ci: usize, state: CopyState) {
        let copy = &mut self.slots[slot][ci];
        let was = copy.state.busy();
        copy.state = state;
        let now_busy = state.busy();
        if was != now_busy {
            let job = copy.job;
            self.adjust_busy(job, now_busy);
        }
    }

    fn set_state_busy_from_free(&mut self, slot: usize, ci: usize) {
        let job = self.slots[slot][ci].job;
        self.adjust_busy(job, true);
    }

    fn adjust_busy(&mut self, job: u16, up: bool) {
        let js = self
            .jobs
            .get_mut(&job)
            .expect("slot owned by a configured job");
        let used = self.counters.get(Counter::SlotsInUse);
        if up {
            js.busy += 1;
            self.counters.set(Counter::SlotsInUse, used + 1);
            if used + 1 > self.counters.get(Counter::SlotsHighWater) {
                self.counters.set(Counter::SlotsHighWater, used + 1);
            }
        } else {
            js.busy -= 1;
            self.counters.set(Counter::SlotsInUse, used - 1);
        }
    }

    /// True if an aggregating copy at the root is older than its job's flush plus reclaim time.
    fn stale(&self, copy: &SlotCopy, now: u64) -> bool {
        match self.jobs[&copy.job].entry.mode {
            Mode::Timeout {
                flush_after,
                reclaim_after,
            } => now.saturating_sub(copy.timer) >= flush_after.saturating_add(reclaim_after),
            Mode::Static | Mode::Dynamic { .. } => false,
        }
    }

    /// Runs the timer scan over every slot at tick `now`.
    pub fn tick(&mut self, now: u64) -> Vec<Output> {
        let mut out = Vec::new();
        for s in 0..self.slots.len() as u32 {
            out.extend(self.scan_slot(now, s));
        }
        if !self.dynamic.is_empty() {
            let cx = dynamic::Ctx {
                me: self.me,
                params: &self.params,
                routes: &self.routes,
            };
            let mut dyn_out = Vec::new();
            self.dynamic
                .tick(&cx, &mut self.counters, now, &mut dyn_out);
            for o in &dyn_out {
                if let Some(pc) = self.counters.ports.get_mut(o.port as usize) {
                    pc.tx_packets += 1;
                    pc.tx_bytes += o.frame.len() as u64;
                }
            }
            out.extend(dyn_out);
        }
        out
    }

    /// Runs the timer scan over one slot (both copies), as the hardware scanner does.
    pub fn scan_slot(&mut self, now: u64, slot: u32) -> Vec<Output> {
        let mut out = Vec::new();
        let s = slot as usize;
        let Some(job) = self.owner.get(s).copied().flatten() else {
            return out;
        };
        let entry = &self.jobs[&job].entry;
        let root = matches!(entry.role, Role::Root);
        let idle = entry.trust.reclaim_idle;
        let mode = entry.mode;
        for ci in 0..2 {
            if let Mode::Timeout {
                flush_after,
                reclaim_after,
            } = mode
            {
                let copy = &self.slots[s][ci];
                let age = now.saturating_sub(copy.timer);
                match copy.state {
                    CopyState::Aggregating if !root && age >= flush_after => {
                        self.counters.inc(Counter::Timeouts);
                        self.set_state(s, ci, CopyState::Emitted);
                        self.slots[s][ci].timer = now;
                        self.slots[s][ci].touched = now;
                        out.push(self.aggregate_frame(s, ci));
                    }
                    CopyState::Emitted if age >= reclaim_after => {
                        self.counters.inc(Counter::Reclaims);
                        self.set_state(s, ci, CopyState::Stale);
                    }
                    _ => {}
                }
            }
            // Slot hygiene, every mode: a busy copy that made no progress for `reclaim_idle`
            // is given up. Its workers' retransmissions start it again (an aggregating copy is
            // freed); an emitted one becomes stale, so its stragglers go to the root.
            let copy = &self.slots[s][ci];
            if idle > 0 && copy.state.busy() && now.saturating_sub(copy.touched) >= idle {
                self.counters.inc(Counter::IdleReclaims);
                let to = if copy.state == CopyState::Emitted {
                    CopyState::Stale
                } else {
                    CopyState::Free
                };
                self.set_state(s, ci, to);
            }
        }
        for o in &out {
            if let Some(pc) = self.counters.ports.get_mut(o.port as usize) {
                pc.tx_packets += 1;
                pc.tx_bytes += o.frame.len() as u64;
            }
        }
        out
    }
}

/// The header of a packet carrying a slot copy's block.
fn header(copy: &SlotCopy, ptype: PacketType, flags: Flags, child: u8) -> Repr {
    Repr {
        ptype,
        flags,
        exponent: copy.exponent,
        job: copy.job,
        elements: copy.elements,
        block: copy.block,
        child,
        bitmap: copy.bitmap,
    }
}

/// Where an answer to datagram `d`, received on `port`, goes: back to its sender.
fn reply_to(d: &Datagram, port: u8) -> Endpoint {
    Endpoint {
        mac: d.src.mac,
        ip: d.src.ip,
        udp_port: d.src.port,
        port,
    }
}

/// Slot index and shadow copy of `block` in a job's range.
pub fn index(entry: &JobEntry, block: u32) -> (usize, usize) {
    let n = entry.slot_count;
    (
        (entry.slot_base + block % n) as usize,
        ((block / n) % 2) as usize,
    )
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod trust_tests;
