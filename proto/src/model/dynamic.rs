//! Dynamic job mode (Canary): aggregation trees that form on whatever paths the packets take.
//!
//! Contributions of a dynamic job are addressed to the block's *leader host*
//! ([`leader_rank`]: rank `block mod n` of the job's ranks, round robin). Every switch on the
//! way intercepts them, whether or not they are addressed to it, and sums what arrives for a
//! block within `flush_after` ticks into a slot copy that also records the ingress ports.
//! It flushes the copy toward the leader on its timer, or at once when the copy holds every
//! rank but the leader's. A contribution arriving after the flush (a straggler) is forwarded
//! unchanged, without BYPASS, so a later switch can still add it; its port is recorded. The
//! leader adds its own data and sends the result back to its switch addressed to
//! [`BROADCAST`]; each switch passes it down the recorded ports and marks the copy done.
//!
//! Exactly-once: a copy and the leader ([`LeaderBlock`]) only ever merge a contributor set
//! disjoint from the one they hold. Retransmissions carry BYPASS: switches pass them to the
//! leader untouched, and the leader answers each BYPASS sender with a unicast result, which
//! also reaches the subtrees cut off by a collision, a lost result or a failed switch.
//! A job of more than 64 ranks sends every packet in header version 2 (512-bit contributor
//! sets, [`crate::wire::wide`]); copies and leaders hold [`RankSet`]s either way.
//!
//! docs/protocol.md ("Dynamic mode", "Header version 2") gives the rules and the reasons.

use core::net::Ipv4Addr;
use std::collections::BTreeMap;

use super::{index, newer, saturating_add, BypassReason, MalformedReason, Output, Verdict};
use super::{Counter, Counters};
use crate::config::{JobEntry, Mode, Params};
use crate::model::CopyState;
use crate::wire::frame::udp_checksum_ok;
use crate::wire::{wide, Datagram, Flags, L4Addr, PacketType, RankSet, WideRepr, WireError};

/// Destination of a result sent down a recorded port: whoever is on the other end.
pub const BROADCAST: Ipv4Addr = Ipv4Addr::BROADCAST;

/// Ethernet broadcast address, used with [`BROADCAST`].
pub const BROADCAST_MAC: [u8; 6] = [0xff; 6];

/// The leader rank of `block` in a job with rank set `ranks`: the `(block mod n)`-th rank
/// (an empty set gives 0).
pub fn leader_rank(ranks: impl Into<RankSet>, block: u32) -> u32 {
    let ranks = ranks.into();
    let n = ranks.count();
    ranks.nth(block % n.max(1)).unwrap_or(0)
}

/// Ranks a dynamic job's switches and leader wait for in `block`: all but the leader's.
pub fn expected(ranks: impl Into<RankSet>, block: u32) -> RankSet {
    let mut s = ranks.into();
    s.remove(leader_rank(s, block));
    s
}

/// Checks a dynamic-mode job entry (called by [`JobEntry::validate`]).
pub fn validate_entry(e: &JobEntry, p: &Params) -> Result<(), String> {
    let Mode::Dynamic {
        flush_after,
        reclaim_after,
    } = e.mode
    else {
        return Err("not a dynamic-mode entry".into());
    };
    if flush_after == 0 || reclaim_after == 0 {
        return Err("timeouts must be at least 1 tick".into());
    }
    if e.rank_set().count() < 2 {
        return Err("a dynamic job needs at least 2 ranks (one is the leader)".into());
    }
    if p.ports > 64 {
        return Err(format!(
            "dynamic mode records ingress ports in a 64-bit set; this switch has {} ports",
            p.ports
        ));
    }
    if !e.slot_count.is_power_of_two() {
        return Err(format!(
            "slot_count {} must be a power of two",
            e.slot_count
        ));
    }
    if e.slot_base as u64 + e.slot_count as u64 > p.slots as u64 {
        return Err(format!(
            "slots {}..{} exceed the {} slots",
            e.slot_base,
            e.slot_base as u64 + e.slot_count as u64,
            p.slots
        ));
    }
    if e.trust.any() {
        return Err("dynamic mode has no sessions, source checks or idle reclaim yet: set trust to {sessions: false, source_check: \"off\", reclaim_idle: 0} (its copies are reclaimed by reclaim_after)".into());
    }
    Ok(())
}

/// One shadow copy of a dynamic job's slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynCopy {
    /// Life cycle: aggregating, emitted (flushed), done (result passed down), stale (reclaimed).
    pub state: CopyState,
    /// Block held (valid unless `Free`).
    pub block: u32,
    /// Ranks summed into the copy.
    pub bitmap: RankSet,
    /// Ingress ports of the block's contributions (stragglers included): where the result goes.
    pub ports: u64,
    /// The leader host the contributions were addressed to.
    pub root: L4Addr,
    /// Exponent of the first contribution.
    pub exponent: i8,
    /// Accumulated `OVERFLOW` / `EXP_MISMATCH` flags.
    pub flags: Flags,
    /// Element count.
    pub elements: u16,
    /// Tick of the first contribution (aggregating) or of the flush (emitted).
    pub timer: u64,
    /// The lanes.
    pub data: Vec<i32>,
}

impl DynCopy {
    fn new(lanes: usize) -> Self {
        Self {
            state: CopyState::Free,
            block: 0,
            bitmap: RankSet::EMPTY,
            ports: 0,
            root: L4Addr {
                mac: [0; 6],
                ip: Ipv4Addr::UNSPECIFIED,
                port: 0,
            },
            exponent: 0,
            flags: Flags(0),
            elements: 0,
            timer: 0,
            data: vec![0; lanes],
        }
    }

    fn merge(&mut self, r: &WideRepr, data: &[i32]) {
        let mut f = self.flags.0 | (r.flags.0 & (Flags::OVERFLOW | Flags::EXP_MISMATCH));
        if r.exponent != self.exponent {
            f |= Flags::EXP_MISMATCH;
        }
        for (acc, &v) in self.data.iter_mut().zip(data) {
            let (s, o) = saturating_add(*acc, v);
            *acc = s;
            if o {
                f |= Flags::OVERFLOW;
            }
        }
        self.flags = Flags(f);
        self.bitmap = self.bitmap.union(&r.bitmap);
    }
}

#[derive(Debug, Clone)]
struct DynJob {
    entry: JobEntry,
    /// Every rank of the job (`entry.rank_set()`).
    ranks: RankSet,
    /// The header version of the job's packets (`entry.header_version()`).
    version: u8,
    flush_after: u64,
    reclaim_after: u64,
    copies: Vec<[DynCopy; 2]>,
    busy: u32,
}

/// The dynamic-mode jobs of one switch and their slot copies.
#[derive(Debug, Clone, Default)]
pub struct DynTable {
    jobs: BTreeMap<u16, DynJob>,
}

/// The switch state the dynamic path reads: its address, table sizes and forwarding table.
pub struct Ctx<'a> {
    /// The switch's own address (source of flushes and results).
    pub me: L4Addr,
    /// Table sizes.
    pub params: &'a Params,
    /// Forwarding table: the default up-port toward a leader.
    pub routes: &'a BTreeMap<Ipv4Addr, u8>,
}

impl DynTable {
    /// True if the switch has no dynamic job.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Number of dynamic jobs.
    pub fn len(&self) -> usize {
        self.jobs.len()
    }

    /// True if `job` is a dynamic job here.
    pub fn has(&self, job: u16) -> bool {
        self.jobs.contains_key(&job)
    }

    /// Adds or replaces a dynamic job (entry already validated); a replaced job's copies are freed.
    pub fn set_job(&mut self, entry: JobEntry, p: &Params, c: &mut Counters) {
        self.remove_job(entry.job, c);
        let Mode::Dynamic {
            flush_after,
            reclaim_after,
        } = entry.mode
        else {
            unreachable!("only dynamic entries reach the dynamic table")
        };
        let lanes = p.elements as usize;
        let copies = (0..entry.slot_count)
            .map(|_| [DynCopy::new(lanes), DynCopy::new(lanes)])
            .collect();
        self.jobs.insert(
            entry.job,
            DynJob {
                ranks: entry.rank_set(),
                version: entry.header_version(),
                entry,
                flush_after,
                reclaim_after,
                copies,
                busy: 0,
            },
        );
    }

    /// Removes a dynamic job. Returns whether it existed.
    pub fn remove_job(&mut self, job: u16, c: &mut Counters) -> bool {
        match self.jobs.remove(&job) {
            Some(j) => {
                let used = c.get(Counter::SlotsInUse) - j.busy as u64;
                c.set(Counter::SlotsInUse, used);
                true
            }
            None => false,
        }
    }

    /// The entry of dynamic job `job`.
    pub fn job(&self, job: u16) -> Option<&JobEntry> {
        self.jobs.get(&job).map(|j| &j.entry)
    }

    /// Busy (aggregating or emitted) copies of `job`.
    pub fn busy(&self, job: u16) -> Option<u32> {
        self.jobs.get(&job).map(|j| j.busy)
    }

    /// The copy `block` maps to, for inspection.
    pub fn copy(&self, job: u16, block: u32) -> Option<&DynCopy> {
        let j = self.jobs.get(&job)?;
        let (s, ci) = local_index(&j.entry, block);
        Some(&j.copies[s][ci])
    }

    /// Handles a frame if it is a fanin packet of a dynamic job that this switch takes: any
    /// contribution, and results addressed to [`BROADCAST`] or to the switch. `None`: not
    /// ours, the caller switches it as usual. A packet in the other header version than its
    /// job's is not ours if it is version 2 (as before version 2 existed: the frame is
    /// switched, or malformed if addressed to the switch), and malformed if it is version 1
    /// naming a job of more than 64 ranks.
    pub fn intercept(
        &mut self,
        cx: &Ctx,
        c: &mut Counters,
        now: u64,
        port: u8,
        frame: &[u8],
        out: &mut Vec<Output>,
    ) -> Option<Verdict> {
        let crate::wire::FrameKind::Ipv4 {
            dst,
            udp: Some(Ok(d)),
        } = crate::wire::frame::classify(frame)
        else {
            return None;
        };
        if d.dst.port != cx.me.port {
            return None;
        }
        let r = WideRepr::parse(d.payload).ok()?;
        let version = self.jobs.get(&r.job)?.version;
        if r.version != version && r.version == crate::wire::VERSION_2 {
            return None;
        }
        let for_me = dst == cx.me.ip || dst == BROADCAST;
        if r.ptype == PacketType::Result && !for_me {
            return None;
        }
        if r.version != version {
            return Some(Verdict::Malformed(MalformedReason::Wire(
                WireError::BadVersion,
            )));
        }
        if !udp_checksum_ok(frame) {
            return Some(Verdict::Malformed(MalformedReason::Frame(
                crate::wire::FrameError::BadUdpChecksum,
            )));
        }
        Some(match r.ptype {
            PacketType::Contribution => self.contribution(
                cx,
                c,
                now,
                port,
                frame,
                &d,
                &r,
                &wide::elements(d.payload),
                out,
            ),
            PacketType::Result => self.result(cx, c, port, &d, &r, out),
            _ => Verdict::Malformed(MalformedReason::NoSessions),
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn contribution(
        &mut self,
        cx: &Ctx,
        c: &mut Counters,
        now: u64,
        port: u8,
        frame: &[u8],
        d: &Datagram,
        r: &WideRepr,
        data: &[i32],
        out: &mut Vec<Output>,
    ) -> Verdict {
        let j = self.jobs.get_mut(&r.job).expect("checked by intercept");
        let want = expected(j.ranks, r.block);
        if !r.bitmap.is_subset(&want) {
            return Verdict::Malformed(MalformedReason::RanksNotOfJob);
        }
        if r.elements > cx.params.elements {
            return Verdict::Malformed(MalformedReason::TooManyElements);
        }
        let Some(&up) = cx.routes.get(&d.dst.ip) else {
            return Verdict::NoRoute;
        };
        if r.flags.has(Flags::BYPASS) {
            out.push(Output {
                port: up,
                frame: frame.to_vec(),
            });
            return Verdict::Bypassed(BypassReason::Transit);
        }
        let (s, ci) = local_index(&j.entry, r.block);
        let copy = &mut j.copies[s][ci];
        let held = copy.state != CopyState::Free;
        if held && copy.block == r.block {
            let subset = r.bitmap.is_subset(&copy.bitmap);
            let disjoint = !r.bitmap.intersects(&copy.bitmap);
            return match copy.state {
                CopyState::Aggregating if subset => Verdict::Duplicate,
                CopyState::Aggregating if disjoint => {
                    if r.elements != copy.elements {
                        return Verdict::Malformed(MalformedReason::ElementMismatch);
                    }
                    copy.merge(r, data);
                    copy.ports |= 1 << port;
                    if copy.bitmap == want {
                        c.inc(Counter::Completions);
                        flush(j, cx, s, ci, now, out);
                        Verdict::Completed
                    } else {
                        Verdict::Aggregated
                    }
                }
                // A flushed block's result has not passed yet: a new contributor set is a
                // straggler, sent on unchanged (a later switch may still add it); its port is
                // recorded so the result comes back down to it. An overlapping set goes on
                // unchanged too; only the leader decides what it counts.
                CopyState::Aggregating | CopyState::Emitted | CopyState::Stale if !subset => {
                    copy.ports |= 1 << port;
                    out.push(Output {
                        port: up,
                        frame: frame.to_vec(),
                    });
                    Verdict::Bypassed(BypassReason::Straggler)
                }
                // Already held here, or the result already passed down: every rank of the
                // block was summed, so this is a copy of something counted.
                _ => Verdict::Duplicate,
            };
        }
        if held && newer(copy.block, r.block) {
            // An older block than the copy holds: a host started the newer block only after
            // it had this one's result, so every rank of this block was counted.
            return Verdict::Duplicate;
        }
        let why = if copy.state.busy() {
            Some(BypassReason::Collision)
        } else if j.busy >= j.entry.effective_quota() {
            Some(BypassReason::Quota)
        } else {
            None
        };
        if let Some(why) = why {
            // The leader answers a BYPASS sender with a unicast result: that restores the
            // subtree this switch cannot record (docs/protocol.md, "Collisions").
            let mut payload = d.payload.to_vec();
            wide::set_flags(&mut payload, r.flags.with(Flags::BYPASS));
            out.push(Output {
                port: up,
                frame: Datagram {
                    src: d.src,
                    dst: d.dst,
                    payload: &payload,
                }
                .to_frame(false),
            });
            return Verdict::Bypassed(why);
        }
        *copy = DynCopy {
            state: CopyState::Aggregating,
            block: r.block,
            bitmap: r.bitmap,
            ports: 1 << port,
            root: d.dst,
            exponent: r.exponent,
            flags: Flags(r.flags.0 & (Flags::OVERFLOW | Flags::EXP_MISMATCH)),
            elements: r.elements,
            timer: now,
            data: std::mem::take(&mut copy.data),
        };
        copy.data.iter_mut().for_each(|v| *v = 0);
        copy.data[..data.len()].copy_from_slice(data);
        j.busy += 1;
        busy_changed(c, true);
        if r.bitmap == want {
            c.inc(Counter::Completions);
            flush(j, cx, s, ci, now, out);
            Verdict::Completed
        } else {
            Verdict::Aggregated
        }
    }

    fn result(
        &mut self,
        cx: &Ctx,
        c: &mut Counters,
        port: u8,
        d: &Datagram,
        r: &WideRepr,
        out: &mut Vec<Output>,
    ) -> Verdict {
        let j = self.jobs.get_mut(&r.job).expect("checked by intercept");
        let (s, ci) = local_index(&j.entry, r.block);
        let copy = &mut j.copies[s][ci];
        let live = matches!(
            copy.state,
            CopyState::Aggregating | CopyState::Emitted | CopyState::Stale
        );
        if !live || copy.block != r.block {
            return Verdict::Duplicate;
        }
        let ports = copy.ports & !(1u64 << port);
        let was_busy = copy.state.busy();
        copy.state = CopyState::Done;
        if was_busy {
            j.busy -= 1;
            busy_changed(c, false);
        }
        let mut payload = d.payload.to_vec();
        wide::set_flags(
            &mut payload,
            r.flags.with(Flags::MULTICAST).without(Flags::BYPASS),
        );
        let frame = Datagram {
            src: cx.me,
            dst: L4Addr {
                mac: BROADCAST_MAC,
                ip: BROADCAST,
                port: d.dst.port,
            },
            payload: &payload,
        }
        .to_frame(false);
        let mut n = 0;
        for p in (0..64u8).filter(|p| ports >> p & 1 == 1) {
            out.push(Output {
                port: p,
                frame: frame.clone(),
            });
            n += 1;
        }
        c.add(Counter::ResultsSent, n);
        Verdict::ResultForwarded
    }

    /// Timer scan at tick `now`: flushes aggregating copies older than `flush_after`, and
    /// reclaims flushed copies whose result did not come within `reclaim_after`.
    pub fn tick(&mut self, cx: &Ctx, c: &mut Counters, now: u64, out: &mut Vec<Output>) {
        for j in self.jobs.values_mut() {
            for s in 0..j.copies.len() {
                for ci in 0..2 {
                    let copy = &j.copies[s][ci];
                    let age = now.saturating_sub(copy.timer);
                    match copy.state {
                        CopyState::Aggregating if age >= j.flush_after => {
                            c.inc(Counter::Timeouts);
                            flush(j, cx, s, ci, now, out);
                        }
                        CopyState::Emitted if age >= j.reclaim_after => {
                            c.inc(Counter::Reclaims);
                            j.copies[s][ci].state = CopyState::Stale;
                            j.busy -= 1;
                            busy_changed(c, false);
                        }
                        _ => {}
                    }
                }
            }
        }
    }
}

/// Sends copy `(s, ci)` toward its leader and marks it emitted.
fn flush(j: &mut DynJob, cx: &Ctx, s: usize, ci: usize, now: u64, out: &mut Vec<Output>) {
    let copy = &mut j.copies[s][ci];
    copy.state = CopyState::Emitted;
    copy.timer = now;
    let want = expected(j.ranks, copy.block);
    let flags = if copy.bitmap == want {
        copy.flags
    } else {
        copy.flags.with(Flags::PARTIAL)
    };
    let repr = WideRepr {
        version: j.version,
        ptype: PacketType::Contribution,
        flags,
        exponent: copy.exponent,
        job: j.entry.job,
        elements: copy.elements,
        block: copy.block,
        child: 0,
        bitmap: copy.bitmap,
    };
    let payload = repr.to_bytes(&copy.data[..copy.elements as usize]);
    let port = cx.routes.get(&copy.root.ip).copied().unwrap_or(0);
    out.push(Output {
        port,
        frame: Datagram {
            src: cx.me,
            dst: copy.root,
            payload: &payload,
        }
        .to_frame(false),
    });
}

fn busy_changed(c: &mut Counters, up: bool) {
    let used = c.get(Counter::SlotsInUse);
    if up {
        c.set(Counter::SlotsInUse, used + 1);
        if used + 1 > c.get(Counter::SlotsHighWater) {
            c.set(Counter::SlotsHighWater, used + 1);
        }
    } else {
        c.set(Counter::SlotsInUse, used - 1);
    }
}

/// Slot (within the job's own copies) and shadow copy of `block`.
fn local_index(e: &JobEntry, block: u32) -> (usize, usize) {
    let (s, ci) = index(e, block);
    (s - e.slot_base as usize, ci)
}

/// What a leader host does with a packet of its block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeaderEvent {
    /// Merged; the block is not complete yet.
    Merged,
    /// Merged, and the block completed: [`LeaderBlock::result`] is set.
    Completed,
    /// Every rank of the set was already counted (or the result was already produced).
    Duplicate,
    /// Overlapped the counted ranks in part: not counted; its ranks' hosts retransmit.
    Overlap,
}

/// A leader host's state for one block: the exactly-once sum and whom to answer by unicast.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeaderBlock {
    /// Ranks to collect (all but the leader's).
    pub want: RankSet,
    /// Ranks counted.
    pub held: RankSet,
    /// Sum of the counted contributions.
    pub sum: Vec<i32>,
    /// Senders of BYPASS packets (retransmissions, collisions): answered by unicast.
    pub unicast: Vec<L4Addr>,
    /// The result (own data added) once complete.
    pub result: Option<Vec<i32>>,
}

impl LeaderBlock {
    /// A leader's block of a job with ranks `ranks`, holding its own data `own`.
    pub fn new(ranks: impl Into<RankSet>, block: u32, own: &[i32]) -> Self {
        Self {
            want: expected(ranks, block),
            held: RankSet::EMPTY,
            sum: own.to_vec(),
            unicast: Vec::new(),
            result: None,
        }
    }

    /// Takes contribution `r` (with `data`) from `src`; `r` is a header of either version.
    pub fn take(&mut self, src: L4Addr, r: impl Into<WideRepr>, data: &[i32]) -> LeaderEvent {
        let r: WideRepr = r.into();
        if r.flags.has(Flags::BYPASS) && !self.unicast.contains(&src) {
            self.unicast.push(src);
        }
        if self.result.is_some() || r.bitmap.is_subset(&self.held) {
            return LeaderEvent::Duplicate;
        }
        if r.bitmap.intersects(&self.held)
            || !r.bitmap.is_subset(&self.want)
            || data.len() != self.sum.len()
        {
            return LeaderEvent::Overlap;
        }
        for (a, &v) in self.sum.iter_mut().zip(data) {
            *a = saturating_add(*a, v).0;
        }
        self.held = self.held.union(&r.bitmap);
        if self.held == self.want {
            self.result = Some(self.sum.clone());
            LeaderEvent::Completed
        } else {
            LeaderEvent::Merged
        }
    }
}

#[cfg(test)]
mod tests;
