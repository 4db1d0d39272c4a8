//! The worker's side of a session handshake (docs/protocol.md, "Sessions").
//!
//! [`Joiner`] is pure, like [`crate::worker::Worker`]: it is given time and datagrams and
//! says when to send a JOIN. It ends with the session's first block id from the root's ACCEPT.

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

/// One worker's JOIN, retransmitted until the root's ACCEPT arrives.
#[derive(Debug, Clone)]
pub struct Joiner {
    a: Assignment,
    nonce: u32,
    retransmit_after: u64,
    sent_at: Option<u64>,
    base: Option<u32>,
    sent: u64,
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
        }
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
        if r.ptype != PacketType::Accept
            || r.job != self.a.job
            || r.bitmap != 1u64 << self.a.rank
            || p.element(0) as u32 != self.nonce
        {
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
