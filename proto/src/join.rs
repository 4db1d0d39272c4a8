//! The worker's side of a session handshake (docs/protocol.md, "Sessions").
//!
//! [`Joiner`] is pure, like [`crate::worker::Worker`]: it is given time and datagrams and
//! says when to send a JOIN. It ends with the session's first block id from the root's ACCEPT.

use crate::model::newer;
use crate::wire::frame::classify;
use crate::wire::{Datagram, Flags, FrameKind, L4Addr, Packet, PacketType, RefuseReason, Repr};
use crate::worker::Assignment;

/// What a received datagram meant to a joining worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinReply {
    /// The root accepted this worker's JOIN: the session starts at this block id.
    Accepted(u32),
    /// Anything else (another job, rank or nonce, or not an ACCEPT).
    Ignored,
}

/// Earlier nonces a [`JoinHistory`] keeps.
pub const REMEMBERED_NONCES: usize = 8;

/// What a worker that runs several allreduces of a job remembers of its earlier joins:
/// the nonces it sent JOINs with (the last [`REMEMBERED_NONCES`]) and the first block of
/// the last session it ran.
///
/// A JOIN delayed past a whole allreduce can reach the root after the worker's next JOIN
/// and replace its nonce there (the root cannot tell which of two nonces is newer). The
/// session then opens with an ACCEPT naming the old nonce. A [`Joiner`] given the history
/// takes that ACCEPT when its session is newer than the last one the worker ran: it is
/// the session the worker is joining, opened on the strength of its older JOIN. An ACCEPT
/// of a session the worker already ran (a late repeat) is never taken.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JoinHistory {
    nonces: Vec<u32>,
    base: Option<u32>,
}

impl JoinHistory {
    /// Notes a join that ended: the nonce its JOINs carried, and the session's first block
    /// if the root accepted it (`None`: the join failed, its JOINs may still arrive).
    pub fn record(&mut self, nonce: u32, base: Option<u32>) {
        self.nonces.retain(|&n| n != nonce);
        self.nonces.push(nonce);
        if self.nonces.len() > REMEMBERED_NONCES {
            self.nonces.remove(0);
        }
        if base.is_some() {
            self.base = base;
        }
    }

    /// The first block of the last session the worker ran.
    pub fn last_base(&self) -> Option<u32> {
        self.base
    }

    /// The nonces remembered, oldest first.
    pub fn nonces(&self) -> &[u32] {
        &self.nonces
    }

    /// True if an ACCEPT naming `nonce`, for a session starting at `base`, is this
    /// worker's: an earlier nonce of it, and a session newer than the last it ran.
    fn takes(&self, nonce: u32, base: u32) -> bool {
        self.nonces.contains(&nonce) && self.base.is_none_or(|b| newer(base, b))
    }
}

/// One worker's JOIN, retransmitted until the root's ACCEPT arrives.
#[derive(Debug, Clone)]
pub struct Joiner {
    a: Assignment,
    nonce: u32,
    retransmit_after: u64,
    sent_at: Option<u64>,
    base: Option<u32>,
    sent: u64,
    history: JoinHistory,
}

impl Joiner {
    /// A joiner for `a` with `nonce` (non-zero, fresh for every allreduce: pick it at random),
    /// resending its JOIN every `retransmit_after` ticks.
    pub fn new(a: Assignment, nonce: u32, retransmit_after: u64) -> Self {
        Self {
            a,
            nonce: nonce.max(1),
            retransmit_after: retransmit_after.max(1),
            sent_at: None,
            base: None,
            sent: 0,
            history: JoinHistory::default(),
        }
    }

    /// The same joiner, also taking an ACCEPT that names one of the worker's earlier
    /// nonces for a session newer than the last it ran (see [`JoinHistory`]).
    pub fn with_history(mut self, history: &JoinHistory) -> Self {
        self.history = history.clone();
        self
    }

    /// The nonce this worker joins with.
    pub fn nonce(&self) -> u32 {
        self.nonce
    }

    /// The session's first block id, once accepted.
    pub fn base(&self) -> Option<u32> {
        self.base
    }

    /// JOINs sent so far (first transmission and repeats).
    pub fn sent(&self) -> u64 {
        self.sent
    }

    /// True if a JOIN is due at tick `now` (then send [`Joiner::payload`] or [`Joiner::frame`]).
    pub fn poll(&mut self, now: u64) -> bool {
        if self.base.is_some() {
            return false;
        }
        let due = self
            .sent_at
            .is_none_or(|t| now >= t.saturating_add(self.retransmit_after));
        if due {
            self.sent_at = Some(now);
            self.sent += 1;
        }
        due
    }

    /// Earliest tick at which [`Joiner::poll`] sends again.
    pub fn deadline(&self) -> Option<u64> {
        if self.base.is_some() {
            return None;
        }
        Some(
            self.sent_at
                .map_or(0, |t| t.saturating_add(self.retransmit_after)),
        )
    }

    /// The JOIN datagram payload.
    pub fn payload(&self) -> Vec<u8> {
        Repr {
            ptype: PacketType::Join,
            flags: Flags(0),
            exponent: 0,
            job: self.a.job,
            elements: 0,
            block: self.nonce,
            child: self.a.child,
            bitmap: 1u64 << self.a.rank,
        }
        .to_bytes(&[])
    }

    /// The JOIN as an Ethernet frame to the parent (with a UDP checksum).
    pub fn frame(&self) -> Vec<u8> {
        let payload = self.payload();
        let (me, p) = (self.a.me, self.a.parent);
        Datagram {
            src: L4Addr {
                mac: me.mac,
                ip: me.ip,
                port: me.udp_port,
            },
            dst: L4Addr {
                mac: p.mac,
                ip: p.ip,
                port: p.udp_port,
            },
            payload: &payload,
        }
        .to_frame(true)
    }

    /// Takes a received datagram payload.
    pub fn receive_payload(&mut self, payload: &[u8]) -> JoinReply {
        let Ok(p) = Packet::new_checked(payload) else {
            return JoinReply::Ignored;
        };
        let Ok(r) = Repr::parse(&p) else {
            return JoinReply::Ignored;
        };
        if r.ptype != PacketType::Accept || r.job != self.a.job || r.bitmap != 1u64 << self.a.rank {
            return JoinReply::Ignored;
        }
        // An ACCEPT parses only with its one element, the nonce.
        let nonce = p.element(0) as u32;
        if nonce != self.nonce && !self.history.takes(nonce, r.block) {
            return JoinReply::Ignored;
        }
        self.base = Some(r.block);
        JoinReply::Accepted(r.block)
    }

    /// Takes a received Ethernet frame.
    pub fn receive(&mut self, frame: &[u8]) -> JoinReply {
        match classify(frame) {
            FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } => self.receive_payload(d.payload),
            _ => JoinReply::Ignored,
        }
    }
}

/// A REFUSE for one of a worker's blocks: `(block, reason)`, if `payload` is one for `job`
/// naming `rank`.
pub fn refusal(payload: &[u8], job: u16, rank: u8) -> Option<(u32, RefuseReason)> {
    let p = Packet::new_checked(payload).ok()?;
    let r = Repr::parse(&p).ok()?;
    if r.ptype != PacketType::Refuse || r.job != job || r.bitmap >> rank & 1 == 0 {
        return None;
    }
    Some((r.block, RefuseReason::from_u8(r.child)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Mode, Trust};
    use crate::plan::{self, Addressing, JobSpec};

    /// A datagram that is not an ACCEPT is ignored whatever its elements: a JOIN (no
    /// elements) of another rank, a junk payload, an empty one. (Reading the nonce before
    /// checking the type once panicked on the JOIN.)
    #[test]
    fn anything_but_an_accept_is_ignored() {
        let spec = JobSpec {
            job: 3,
            slot_count: 4,
            elements: 4,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust::default(),
        };
        let p = plan::build(&plan::star(2), spec).unwrap();
        let mut j = Joiner::new(p.workers[0].clone(), 7, 1);
        let other = Joiner::new(p.workers[1].clone(), 8, 1).payload();
        assert_eq!(j.receive_payload(&other), JoinReply::Ignored);
        // A JOIN of rank 0 itself (its job, its rank): still not an ACCEPT.
        let own = Joiner::new(p.workers[0].clone(), 9, 1).payload();
        assert_eq!(j.receive_payload(&own), JoinReply::Ignored);
        assert_eq!(j.receive_payload(&[0xff; 3]), JoinReply::Ignored);
        assert_eq!(j.receive_payload(&[]), JoinReply::Ignored);
        assert_eq!(j.base(), None);
    }
}
