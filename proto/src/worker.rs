//! The host side of the protocol: a worker's assignment and its send/receive state machine.
//!
//! [`Worker`] is pure: it is given time and frames and returns frames. `fanin send` drives
//! it over a UDP socket; the property tests drive it through [`crate::netsim`].

use serde::{Deserialize, Serialize};

use crate::config::Endpoint;

/// Where one worker of a job sits in the job's tree, as `fanin place` emits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// Job id.
    pub job: u16,
    /// The worker's rank: its bit in the contributor bitmap (below 64 in a static job, below
    /// 512 in a dynamic one).
    pub rank: u16,
    /// Number of workers in the job (at most 64 in a static job, 512 in a dynamic one).
    pub workers: u16,
    /// The worker's child index at its parent.
    pub child: u8,
    /// The worker's own address (where results arrive).
    pub me: Endpoint,
    /// The parent aggregation node (first aggregating switch, or the root).
    pub parent: Endpoint,
    /// Largest window allowed: the smallest `slot_count` of the job along the tree.
    pub window_limit: u32,
    /// Elements per packet.
    pub elements: u16,
    /// The job has sessions: each allreduce starts with a JOIN to the root, whose ACCEPT
    /// gives its first block id (docs/protocol.md, "Sessions").
    #[serde(default = "session_default")]
    pub session: bool,
}

fn session_default() -> bool {
    true
}

impl Assignment {
    /// Checks what a static or timeout job's worker needs: 1..=2237 elements
    /// (`MAX_WIRE_ELEMENTS`), at most 64 workers (header version 1's bitmap; a dynamic job's
    /// worker is `fanin::leader`), and the rank below them.
    pub fn check(&self) -> Result<(), WorkerError> {
        if self.elements == 0 || self.elements > crate::wire::MAX_WIRE_ELEMENTS {
            return Err(WorkerError::BadAssignment(
                "elements must be 1..=2237 (MAX_WIRE_ELEMENTS)",
            ));
        }
        if self.workers == 0
            || self.workers as u32 > crate::wire::MAX_WORKERS
            || self.rank >= self.workers
        {
            return Err(WorkerError::BadAssignment(
                "the rank must be below the workers, and static jobs hold at most 64 ranks \
                 (header version 1's bitmap); a dynamic job holds up to 512 (fanin send --dynamic)",
            ));
        }
        Ok(())
    }

    /// This worker's contribution datagram payload for `block` at `exponent`.
    pub fn contribution_payload(&self, block: u32, exponent: i8, data: &[i32]) -> Vec<u8> {
        let repr = Repr {
            ptype: PacketType::Contribution,
            flags: Flags(0),
            exponent,
            job: self.job,
            elements: data.len() as u16,
            block,
            child: self.child,
            bitmap: 1u64 << self.rank,
        };
        repr.to_bytes(data)
    }

    /// The same as an Ethernet frame to the parent (with a UDP checksum).
    pub fn contribution_frame(&self, block: u32, exponent: i8, data: &[i32]) -> Vec<u8> {
        let payload = self.contribution_payload(block, exponent, data);
        let src = L4Addr {
            mac: self.me.mac,
            ip: self.me.ip,
            port: self.me.udp_port,
        };
        let dst = L4Addr {
            mac: self.parent.mac,
            ip: self.parent.ip,
            port: self.parent.udp_port,
        };
        Datagram {
            src,
            dst,
            payload: &payload,
        }
        .to_frame(true)
    }
}

use crate::wire::{Datagram, Flags, FrameKind, L4Addr, Packet, PacketType, Repr};

/// Sending parameters a worker chooses (within its [`Assignment`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Sending {
    /// Blocks in flight: block `b` is sent only once every block below `b - window + 1` has its result.
    pub window: u32,
    /// Ticks after which an unanswered contribution is sent again.
    pub retransmit_after: u64,
    /// Block id of the first block (successive allreduces of a job use fresh block ids).
    pub first_block: u32,
    /// Exponent written into every packet.
    pub exponent: i8,
}

/// A worker refuses to start.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WorkerError {
    /// Window of 0, or above the job's slot count.
    #[error("window {window} must be between 1 and the job's slot count {limit}")]
    BadWindow {
        /// Requested window.
        window: u32,
        /// Largest allowed.
        limit: u32,
    },
    /// The assignment is inconsistent.
    #[error("bad assignment: {0}")]
    BadAssignment(&'static str),
    /// The retransmission timeout is zero.
    #[error("retransmit_after must be at least 1 tick")]
    BadTimeout,
}

/// What a received frame meant to the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// A new result for a block.
    Result {
        /// Block index within this worker's tensor.
        index: usize,
    },
    /// A result for a block already answered.
    Duplicate,
    /// The root refused one of this worker's unanswered blocks: the allreduce cannot finish.
    Refused {
        /// Block id refused.
        block: u32,
        /// Why.
        reason: crate::wire::RefuseReason,
    },
    /// Not a result for this worker's job and blocks, or not a complete sum.
    Ignored,
}

/// Counters of one worker.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerStats {
    /// Contributions sent, first transmissions only.
    pub sent: u64,
    /// Contributions sent again after a timeout.
    pub retransmissions: u64,
    /// Results accepted.
    pub results: u64,
    /// Results for blocks already answered.
    pub duplicate_results: u64,
    /// Frames ignored.
    pub ignored: u64,
    /// Refusals of this worker's blocks.
    pub refused: u64,
}

/// One worker's allreduce of one tensor of int32 elements.
#[derive(Debug, Clone)]
pub struct Worker {
    a: Assignment,
    s: Sending,
    /// The tensor, flat: block `i` is `data[i * elements..]`, at most `elements` long. When
    /// a block's result arrives, its sums overwrite its part (nothing resends a block that
    /// has its result), so the finished tensor is the sums with no second tensor-sized
    /// buffer.
    data: Vec<i32>,
    /// Each block's result flags, once it has its result.
    results: Vec<Option<Flags>>,
    sent_at: Vec<Option<u64>>,
    next: usize,
    low: usize,
    stats: WorkerStats,
}

impl Worker {
    /// Splits `data` into blocks of `assignment.elements` and prepares to send them.
    pub fn new(a: Assignment, s: Sending, data: &[i32]) -> Result<Self, WorkerError> {
        Self::from_vec(a, s, data.to_vec())
    }

    /// The same as [`Worker::new`], taking the tensor without copying it.
    pub fn from_vec(a: Assignment, s: Sending, data: Vec<i32>) -> Result<Self, WorkerError> {
        if s.window == 0 || s.window > a.window_limit {
            return Err(WorkerError::BadWindow {
                window: s.window,
                limit: a.window_limit,
            });
        }
        if s.retransmit_after == 0 {
            return Err(WorkerError::BadTimeout);
        }
        a.check()?;
        let n = data.len().div_ceil(a.elements as usize);
        Ok(Self {
            a,
            s,
            data,
            results: vec![None; n],
            sent_at: vec![None; n],
            next: 0,
            low: 0,
            stats: WorkerStats::default(),
        })
    }

    /// Moves the tensor to start at block id `first_block` (a session's first block).
    /// Only before anything was sent; returns false (and changes nothing) after.
    pub fn set_first_block(&mut self, first_block: u32) -> bool {
        if self.next > 0 {
            return false;
        }
        self.s.first_block = first_block;
        true
    }

    /// The sending parameters.
    pub fn sending(&self) -> &Sending {
        &self.s
    }

    /// The assignment.
    pub fn assignment(&self) -> &Assignment {
        &self.a
    }

    /// Number of blocks.
    pub fn blocks(&self) -> usize {
        self.results.len()
    }

    /// Elements of the tensor (and of the result).
    pub fn len(&self) -> usize {
        self.data.len()
    }

    /// True for an empty tensor (no blocks: done from the start).
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The elements of block `i` (`i < blocks()`): its contribution, or its sums once its
    /// result has arrived.
    pub fn block(&self, i: usize) -> &[i32] {
        let e = self.a.elements as usize;
        &self.data[i * e..((i + 1) * e).min(self.data.len())]
    }

    /// Blocks with a result.
    pub fn completed(&self) -> usize {
        self.results.iter().filter(|r| r.is_some()).count()
    }

    /// True when every block has its result.
    pub fn done(&self) -> bool {
        self.low == self.results.len()
    }

    /// Counters.
    pub fn stats(&self) -> WorkerStats {
        self.stats
    }

    /// Index of the lowest block without a result (what a stuck worker is waiting for).
    pub fn waiting_for(&self) -> Option<u32> {
        (!self.done()).then(|| self.s.first_block.wrapping_add(self.low as u32))
    }

    /// The concatenated sums and the OR of the results' flags, once done.
    pub fn result(&self) -> Option<(Vec<i32>, Flags)> {
        if !self.done() {
            return None;
        }
        Some((self.data.clone(), self.flags()))
    }

    /// [`Worker::result`] without copying the sums: consumes the worker; `Err(self)` if it
    /// is not done.
    pub fn into_result(self) -> Result<(Vec<i32>, Flags), Box<Self>> {
        if !self.done() {
            return Err(Box::new(self));
        }
        let f = self.flags();
        Ok((self.data, f))
    }

    fn flags(&self) -> Flags {
        Flags(self.results.iter().flatten().fold(0, |f, fl| f | fl.0))
    }

    /// Earliest tick at which [`Worker::poll`] has something to send.
    pub fn deadline(&self) -> Option<u64> {
        if self.done() {
            return None;
        }
        if self.next < self.results.len() && self.next < self.low + self.s.window as usize {
            return Some(0);
        }
        (self.low..self.next)
            .filter(|&i| self.results[i].is_none())
            .filter_map(|i| self.sent_at[i])
            .map(|t| t + self.s.retransmit_after)
            .min()
    }

    /// Block indices to send at tick `now`: expired retransmissions, then new blocks the
    /// window allows. Build each with [`Worker::frame`] or [`Worker::payload`].
    pub fn poll(&mut self, now: u64) -> Vec<usize> {
        let mut out = Vec::new();
        for i in self.low..self.next {
            if self.results[i].is_none()
                && self.sent_at[i].is_some_and(|t| now >= t + self.s.retransmit_after)
            {
                out.push(i);
                self.sent_at[i] = Some(now);
                self.stats.retransmissions += 1;
            }
        }
        while self.next < self.results.len() && self.next < self.low + self.s.window as usize {
            out.push(self.next);
            self.sent_at[self.next] = Some(now);
            self.stats.sent += 1;
            self.next += 1;
        }
        out
    }

    /// Takes a received Ethernet frame.
    pub fn receive(&mut self, frame: &[u8]) -> Received {
        let r = self.accept(frame);
        match r {
            Received::Result { .. } => self.stats.results += 1,
            Received::Duplicate => self.stats.duplicate_results += 1,
            Received::Refused { .. } => self.stats.refused += 1,
            Received::Ignored => self.stats.ignored += 1,
        }
        r
    }

    /// Takes a received fanin datagram payload (what a UDP socket delivers).
    pub fn receive_payload(&mut self, payload: &[u8]) -> Received {
        let r = self.accept_payload(payload);
        match r {
            Received::Result { .. } => self.stats.results += 1,
            Received::Duplicate => self.stats.duplicate_results += 1,
            Received::Refused { .. } => self.stats.refused += 1,
            Received::Ignored => self.stats.ignored += 1,
        }
        r
    }

    fn accept(&mut self, frame: &[u8]) -> Received {
        match crate::wire::frame::classify(frame) {
            FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } => self.accept_payload(d.payload),
            _ => Received::Ignored,
        }
    }

    fn accept_payload(&mut self, payload: &[u8]) -> Received {
        let Ok(p) = Packet::new_checked(payload) else {
            return Received::Ignored;
        };
        let Ok(r) = Repr::parse(&p) else {
            return Received::Ignored;
        };
        if let Some((block, reason)) = crate::join::refusal(payload, self.a.job, self.a.rank as u8)
        {
            let index = block.wrapping_sub(self.s.first_block) as usize;
            let outstanding = index < self.next && self.results[index].is_none();
            return if outstanding {
                Received::Refused { block, reason }
            } else {
                Received::Ignored
            };
        }
        let all = if self.a.workers as u32 == 64 {
            u64::MAX
        } else {
            (1u64 << self.a.workers) - 1
        };
        if r.ptype != PacketType::Result || r.job != self.a.job || r.bitmap != all {
            return Received::Ignored;
        }
        let index = r.block.wrapping_sub(self.s.first_block) as usize;
        if index >= self.results.len() || r.elements as usize != self.block(index).len() {
            return Received::Ignored;
        }
        if self.results[index].is_some() {
            return Received::Duplicate;
        }
        // Decoded straight over the block's contribution (`Repr::parse` checked the length).
        let e = self.a.elements as usize;
        let n = r.elements as usize;
        let bytes = &payload
            [crate::wire::HEADER_LEN..crate::wire::HEADER_LEN + n * crate::wire::ELEMENT_BYTES];
        for (o, c) in self.data[index * e..index * e + n]
            .iter_mut()
            .zip(bytes.chunks_exact(crate::wire::ELEMENT_BYTES))
        {
            *o = i32::from_be_bytes([c[0], c[1], c[2], c[3]]);
        }
        self.results[index] = Some(r.flags);
        while self.low < self.results.len() && self.results[self.low].is_some() {
            self.low += 1;
        }
        Received::Result { index }
    }

    /// The contribution datagram payload of block `i` (before its result: see [`Worker::block`]).
    pub fn payload(&self, i: usize) -> Vec<u8> {
        self.a.contribution_payload(
            self.s.first_block.wrapping_add(i as u32),
            self.s.exponent,
            self.block(i),
        )
    }

    /// The contribution of block `i` as an Ethernet frame (with a UDP checksum).
    pub fn frame(&self, i: usize) -> Vec<u8> {
        self.a.contribution_frame(
            self.s.first_block.wrapping_add(i as u32),
            self.s.exponent,
            self.block(i),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    fn assignment(rank: u8, workers: u8, elements: u16) -> Assignment {
        let ep = Endpoint {
            mac: [2, 0, 0, 0, 0, rank],
            ip: std::net::Ipv4Addr::new(10, 0, 0, rank + 1),
            udp_port: 4791,
            port: 0,
        };
        Assignment {
            job: 7,
            rank: rank as u16,
            workers: workers as u16,
            child: rank,
            me: ep,
            parent: ep,
            window_limit: 8,
            elements,
            session: false,
        }
    }

    fn result_payload(workers: u8, block: u32, flags: u8, data: &[i32]) -> Vec<u8> {
        Repr {
            ptype: PacketType::Result,
            flags: Flags(flags),
            exponent: 3,
            job: 7,
            elements: data.len() as u16,
            block,
            child: 0,
            bitmap: (1u64 << workers) - 1,
        }
        .to_bytes(data)
    }

    /// Results decoded into the flat sums, fed out of order with duplicates, give exactly
    /// the element-wise sum for tensors whose length is not a multiple of the packet's
    /// elements; `result` and `into_result` agree, and `new` and `from_vec` send the same bytes.
    #[test]
    fn flat_sums_equal_the_elementwise_sum() {
        let seed = rand::random::<u64>();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        for _ in 0..50 {
            let workers = rng.gen_range(1..=4u8);
            let elements = rng.gen_range(1..=40u16);
            let len = rng.gen_range(0..300usize);
            let tensors: Vec<Vec<i32>> = (0..workers)
                .map(|_| (0..len).map(|_| rng.gen_range(-1000..1000)).collect())
                .collect();
            let want: Vec<i32> = (0..len)
                .map(|i| tensors.iter().map(|t| t[i]).sum())
                .collect();
            let s = Sending {
                window: 8,
                retransmit_after: 5,
                first_block: rng.gen(),
                exponent: 3,
            };
            let a = assignment(0, workers, elements);
            let mut w = Worker::from_vec(a.clone(), s, tensors[0].clone()).unwrap();
            let copy = Worker::new(a, s, &tensors[0]).unwrap();
            assert_eq!(w.blocks(), len.div_ceil(elements as usize), "seed {seed}");
            for i in 0..w.blocks() {
                assert_eq!(w.payload(i), copy.payload(i), "seed {seed}");
            }
            let mut now = 0;
            while !w.done() {
                let mut sent = w.poll(now);
                now += 1;
                // Answer in reverse order, some twice, with a flag on block 0.
                sent.reverse();
                for i in sent {
                    let e = elements as usize;
                    let part = &want[i * e..((i + 1) * e).min(len)];
                    let block = s.first_block.wrapping_add(i as u32);
                    let flags = if i == 0 { Flags::OVERFLOW } else { 0 };
                    let p = result_payload(workers, block, flags, part);
                    assert_eq!(w.receive_payload(&p), Received::Result { index: i });
                    if rng.gen_bool(0.3) {
                        assert_eq!(w.receive_payload(&p), Received::Duplicate);
                    }
                }
            }
            let (got, f) = w.result().expect("done");
            assert_eq!(got, want, "seed {seed}");
            let want_flags = if len > 0 { Flags::OVERFLOW } else { 0 };
            assert_eq!(f, Flags(want_flags), "seed {seed}");
            assert_eq!(
                w.into_result().unwrap(),
                (want, Flags(want_flags)),
                "seed {seed}"
            );
        }
    }

    /// `into_result` hands an unfinished worker back unchanged.
    #[test]
    fn into_result_before_done_returns_the_worker() {
        let s = Sending {
            window: 2,
            retransmit_after: 5,
            first_block: 0,
            exponent: 0,
        };
        let w = Worker::new(assignment(0, 2, 4), s, &[1, 2, 3, 4, 5]).unwrap();
        let w = w.into_result().unwrap_err();
        assert_eq!(w.blocks(), 2);
        assert_eq!(w.result(), None);
    }
}
