//! Sessions and source validation (docs/protocol.md, "Trust").
//!
//! A session is one allreduce of a job. Every worker opens it with a JOIN carrying a nonce of
//! its own; when every rank of the job has joined, the root frees the job's slot copies, picks
//! a first block id beyond every block the job has used, and answers each worker with an
//! ACCEPT. Contributions from before the session are refused, so a later allreduce can never
//! be answered with an earlier one's sum.

use super::{MalformedReason, Output, Switch, Verdict};
use crate::config::{Endpoint, JobEntry, SourceCheck};
use crate::model::slot::{newer, CopyState};
use crate::model::Counter;
use crate::wire::{Datagram, Flags, L4Addr, Packet, PacketType, RefuseReason, Repr};

/// One rank's latest JOIN at the root.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Member {
    /// The nonce the worker joined with.
    pub nonce: u32,
    /// Where its ACCEPT goes.
    pub reply: Endpoint,
}

/// A job's session state at its root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Session {
    /// Sessions opened since the job entry was written (the first starts at the entry's
    /// `first_block`, every later one beyond the job's newest block, also after a reset).
    pub opened: u64,
    /// First block id of the open session; `None` until the first session opens.
    pub base: Option<u32>,
    /// The newest block id the job has used (the next session starts beyond it).
    pub high: u32,
    /// Ranks that have joined the next session.
    pub pending: u64,
    /// Each rank's latest JOIN, by rank.
    pub members: Vec<Option<Member>>,
}

impl Session {
    /// A job with no session yet; the first one starts at `first_block`.
    pub fn new(first_block: u32) -> Self {
        Self {
            opened: 0,
            base: None,
            high: first_block.wrapping_sub(1),
            pending: 0,
            members: vec![None; crate::wire::MAX_WORKERS as usize],
        }
    }
}

/// First block of the session after one whose newest block is `high`: at least two slot
/// ranges beyond it, so no copy anywhere in the tree can still hold one of the new blocks
/// (by the window rule, a session's blocks stay below its root's newest + `slot_count`),
/// and aligned to two slot ranges so every session starts at shadow copy 0 of its first slot.
pub fn next_base(high: u32, slot_count: u32) -> u32 {
    let span = slot_count.wrapping_mul(2);
    let at_least = high.wrapping_add(1).wrapping_add(span);
    at_least.wrapping_add(span - 1) & !(span - 1)
}

/// True if `src` is the configured endpoint `e` under `check`.
pub fn source_matches(check: SourceCheck, src: &L4Addr, e: &Endpoint) -> bool {
    match check {
        SourceCheck::Off => true,
        SourceCheck::Ip => src.ip == e.ip,
        SourceCheck::IpPort => src.ip == e.ip && src.port == e.udp_port,
    }
}

/// Every rank below the children of `entry` reached through `port`: the ranks a
/// bypass-flagged packet (or JOIN) may carry when it arrives on that port.
pub fn port_below(entry: &JobEntry, port: u8) -> u64 {
    entry
        .children
        .iter()
        .filter(|c| c.endpoint.port == port)
        .fold(0, |m, c| m | c.below())
}

/// True if a bypass-flagged packet (or JOIN) with `bitmap` may arrive on `port`: the
/// children reached through `port` have all its ranks below them ([`port_below`]). The
/// packet keeps its worker's source address and may come from any rank below those children
/// (also ranks beyond a degree limit), so only the link it came in on can be checked; and a
/// link carries whatever its children send, so the check is per link, not per child.
/// `fanin switchd` gives every configured peer a port of its own, which makes this an exact
/// source check there.
pub fn bypass_source_ok(entry: &JobEntry, port: u8, bitmap: u64) -> bool {
    entry.trust.source_check == SourceCheck::Off || bitmap & !port_below(entry, port) == 0
}

/// True if a packet that must come from above (a result, ACCEPT or REFUSE at an inner
/// switch) arrived on the port facing the parent. Not the parent's address: the root answers
/// a bypassed packet of a lower switch directly, through the parent. `fanin switchd` gives the
/// parent's address a port of its own, which makes this an exact source check there.
pub fn from_above(entry: &JobEntry, port: u8, parent: &Endpoint) -> bool {
    entry.trust.source_check == SourceCheck::Off || port == parent.port
}

impl Switch {
    /// A JOIN: passed to the parent by an inner switch, taken by the root.
    pub(super) fn join(
        &mut self,
        port: u8,
        d: &Datagram,
        r: &Repr,
        out: &mut Vec<Output>,
    ) -> Verdict {
        let entry = &self.jobs[&r.job].entry;
        if !entry.trust.sessions {
            return Verdict::Malformed(MalformedReason::NoSessions);
        }
        if r.bitmap & !entry.ranks != 0 {
            return Verdict::Malformed(MalformedReason::RanksNotOfJob);
        }
        if let Err(v) = self.check_child_source(port, d, r) {
            return v;
        }
        self.counters.inc(Counter::Joins);
        let entry = &self.jobs[&r.job].entry;
        if let crate::config::Role::Inner { parent, .. } = entry.role {
            let mut payload = d.payload.to_vec();
            Packet::new_unchecked(&mut payload[..]).set_flags(r.flags.with(Flags::BYPASS));
            let src = L4Addr {
                mac: self.me.mac,
                ..d.src
            };
            out.push(self.send(src, parent, &payload));
            return Verdict::JoinForwarded;
        }
        let rank = r.bitmap.trailing_zeros() as usize;
        let bit = r.bitmap;
        let nonce = r.block;
        let reply = super::reply_to(d, port);
        let js = self.jobs.get_mut(&r.job).expect("job checked");
        let s = &mut js.session;
        let repeat = s.pending & bit == 0 && s.members[rank].map(|m| m.nonce) == Some(nonce);
        if let (true, Some(base)) = (repeat, s.base) {
            // A retransmitted JOIN of the open session: its ACCEPT was lost.
            out.push(self.accept_frame(r.job, rank, base, nonce, reply));
            return Verdict::JoinAnswered;
        }
        s.members[rank] = Some(Member { nonce, reply });
        s.pending |= bit;
        if s.pending != js.entry.ranks {
            return Verdict::Joined;
        }
        self.open_session(r.job, out);
        Verdict::SessionOpened
    }

    /// Every rank has joined: free the job's copies, start the next block range, answer all.
    fn open_session(&mut self, job: u16, out: &mut Vec<Output>) {
        let js = self.jobs.get_mut(&job).expect("job exists");
        let slot_count = js.entry.slot_count;
        let base = if js.session.opened == 0 {
            js.session.high.wrapping_add(1)
        } else {
            next_base(js.session.high, slot_count)
        };
        js.session.base = Some(base);
        js.session.high = base.wrapping_sub(1);
        js.session.pending = 0;
        js.session.opened += 1;
        let first = js.entry.slot_base;
        for slot in first..first + slot_count {
            for ci in 0..2 {
                self.set_state(slot as usize, ci, CopyState::Free);
            }
        }
        self.counters.inc(Counter::Sessions);
        let members: Vec<(usize, Member)> = self.jobs[&job]
            .session
            .members
            .iter()
            .enumerate()
            .filter(|(r, _)| self.jobs[&job].entry.ranks >> r & 1 == 1)
            .filter_map(|(r, m)| m.map(|m| (r, m)))
            .collect();
        for (rank, m) in members {
            out.push(self.accept_frame(job, rank, base, m.nonce, m.reply));
        }
    }

    fn accept_frame(&self, job: u16, rank: usize, base: u32, nonce: u32, to: Endpoint) -> Output {
        let repr = Repr {
            ptype: PacketType::Accept,
            flags: Flags(0),
            exponent: 0,
            job,
            elements: 1,
            block: base,
            child: 0,
            bitmap: 1 << rank,
        };
        self.send(self.me, to, &repr.to_bytes(&[nonce as i32]))
    }

    /// At a root with sessions: `None` if `block` belongs to the open session (and notes it
    /// as the job's newest), else the reason to refuse it.
    pub(super) fn session_floor(&mut self, job: u16, block: u32) -> Option<RefuseReason> {
        let js = self.jobs.get_mut(&job).expect("job exists");
        if !js.entry.trust.sessions {
            return None;
        }
        let Some(base) = js.session.base else {
            return Some(RefuseReason::NoSession);
        };
        if block != base && !newer(block, base) {
            return Some(RefuseReason::StaleBlock);
        }
        if newer(block, js.session.high) {
            js.session.high = block;
        }
        None
    }

    /// Tells the sender its contribution was refused (out of the ingress port).
    pub(super) fn refuse_frame(
        &self,
        port: u8,
        d: &Datagram,
        r: &Repr,
        why: RefuseReason,
    ) -> Output {
        let repr = Repr {
            ptype: PacketType::Refuse,
            flags: Flags(0),
            exponent: 0,
            job: r.job,
            elements: 0,
            block: r.block,
            child: why as u8,
            bitmap: r.bitmap,
        };
        let to = super::reply_to(d, port);
        self.send(self.me, to, &repr.to_bytes(&[]))
    }

    /// An ACCEPT or REFUSE from the parent, at an inner switch: passed down unchanged to
    /// every child delivering one of its ranks (from this switch's address). The packet
    /// keeps its `child` field: a REFUSE's reason travels there.
    pub(super) fn relay_down(
        &mut self,
        port: u8,
        d: &Datagram,
        r: &Repr,
        out: &mut Vec<Output>,
    ) -> Verdict {
        let entry = &self.jobs[&r.job].entry;
        let crate::config::Role::Inner { parent, .. } = entry.role else {
            return Verdict::Malformed(MalformedReason::ResultAtRoot);
        };
        if !entry.trust.sessions {
            return Verdict::Malformed(MalformedReason::NoSessions);
        }
        if !from_above(entry, port, &parent) {
            return Verdict::BadSource;
        }
        if r.bitmap & !entry.ranks != 0 {
            return Verdict::Malformed(MalformedReason::RanksNotOfJob);
        }
        let targets: Vec<Endpoint> = entry
            .children
            .iter()
            .filter(|c| c.ranks & r.bitmap != 0)
            .map(|c| c.endpoint)
            .collect();
        for to in targets {
            out.push(self.send(self.me, to, d.payload));
        }
        Verdict::Relayed
    }

    /// Source check of a packet that names its child index (non-bypass) or carries BYPASS.
    /// Structural problems are malformed; a wrong source is `BadSource`.
    pub(super) fn check_child_source(
        &self,
        port: u8,
        d: &Datagram,
        r: &Repr,
    ) -> Result<(), Verdict> {
        let entry = &self.jobs[&r.job].entry;
        if r.flags.has(Flags::BYPASS) {
            return if bypass_source_ok(entry, port, r.bitmap) {
                Ok(())
            } else {
                Err(Verdict::BadSource)
            };
        }
        let Some(child) = entry.children.get(r.child as usize) else {
            return Err(Verdict::Malformed(MalformedReason::ChildOutOfRange));
        };
        if r.bitmap & !child.ranks != 0 {
            return Err(Verdict::Malformed(MalformedReason::RanksNotOfChild));
        }
        if !source_matches(entry.trust.source_check, &d.src, &child.endpoint) {
            return Err(Verdict::BadSource);
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_base_clears_two_slot_ranges_and_aligns() {
        assert_eq!(next_base(0, 4), 16);
        assert_eq!(next_base(7, 4), 16);
        assert_eq!(next_base(8, 4), 24);
        assert_eq!(next_base(u32::MAX - 2, 4), 8);
        for high in [0u32, 5, 1000, u32::MAX - 100, u32::MAX] {
            for sc in [1u32, 2, 64, 1 << 20] {
                let b = next_base(high, sc);
                assert_eq!(b % (2 * sc), 0, "high {high} sc {sc}");
                let gap = b.wrapping_sub(high);
                assert!(
                    gap > 2 * sc && gap <= 4 * sc,
                    "high {high} sc {sc} base {b}"
                );
            }
        }
    }
}
