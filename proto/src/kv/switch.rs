//! The switch side of key-value jobs: the state a [`crate::model::Switch`] keeps for its
//! `kv_jobs` and the rules it applies to key-value packets (docs/protocol.md, "Key-value
//! jobs", is the prose form).

use std::collections::BTreeMap;

use serde::Serialize;

use super::wire::{KvRepr, KvType, KvWireError, RANGE};
use super::{slot_of, KvJobEntry};
use crate::config::{ConfigError, Endpoint};
use crate::model::Output;
use crate::wire::{Datagram, L4Addr};

/// What became of one tuple offered to an aggregator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Offer {
    /// The aggregator held the key: the value was added.
    Added,
    /// The aggregator was empty: the key claimed it.
    Claimed,
    /// The aggregator holds another key: the tuple stays in the packet.
    Collision,
}

/// One job's aggregator arrays: `arrays` × 2 copies × `size` aggregators of (key, value, valid).
#[derive(Debug, Clone)]
pub struct KvMemory {
    arrays: usize,
    size: u32,
    keys: Vec<u32>,
    vals: Vec<i32>,
    valid: Vec<bool>,
}

impl KvMemory {
    /// Empty arrays (`size` a power of two).
    pub fn new(arrays: usize, size: u32) -> Self {
        let n = arrays * 2 * size as usize;
        Self {
            arrays,
            size,
            keys: vec![0; n],
            vals: vec![0; n],
            valid: vec![false; n],
        }
    }

    /// Aggregators per array and copy.
    pub fn size(&self) -> u32 {
        self.size
    }

    fn at(&self, array: usize, copy: usize, idx: u32) -> usize {
        (array * 2 + copy) * self.size as usize + idx as usize
    }

    /// ASK's `Write(key, val)`: add into the key's aggregator of `array`'s copy `copy`.
    pub fn offer(&mut self, array: usize, copy: usize, key: u32, val: i32) -> Offer {
        let i = self.at(array, copy, slot_of(key, self.size));
        if !self.valid[i] {
            self.valid[i] = true;
            self.keys[i] = key;
            self.vals[i] = val;
            Offer::Claimed
        } else if self.keys[i] == key {
            self.vals[i] = self.vals[i].wrapping_add(val);
            Offer::Added
        } else {
            Offer::Collision
        }
    }

    /// The (key, value) held by one aggregator, if any.
    pub fn get(&self, array: usize, copy: usize, idx: u32) -> Option<(u32, i32)> {
        let i = self.at(array, copy, idx);
        self.valid[i].then(|| (self.keys[i], self.vals[i]))
    }

    /// Empties aggregators `start..end` of one array's copy.
    pub fn clear(&mut self, array: usize, copy: usize, start: u32, end: u32) {
        let (a, b) = (self.at(array, copy, start), self.at(array, copy, end));
        self.valid[a..b].fill(false);
        self.vals[a..b].fill(0);
        self.keys[a..b].fill(0);
    }

    /// Every (key, value) held in one copy, over all arrays.
    pub fn drain_copy(&mut self, copy: usize) -> Vec<(u32, i32)> {
        let mut v = Vec::new();
        for a in 0..self.arrays {
            for i in 0..self.size {
                v.extend(self.get(a, copy, i));
            }
            self.clear(a, copy, 0, self.size);
        }
        v
    }
}

/// What ASK's compact `seen` window says about a sequence number.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Seen {
    /// First appearance.
    First,
    /// Seen before (a retransmission or a duplicate).
    Again,
    /// At or below `max_seq - W`: earlier than the window, dropped.
    Stale,
    /// Beyond `max_seq + W`: a sender breaking its window, dropped.
    Ahead,
}

/// Per data channel: the compact W-bit `seen`, `PktState` and `max_seq` of ASK §3.3.
#[derive(Debug, Clone)]
pub struct SeenWindow {
    window: u32,
    seen: Vec<bool>,
    pkt_state: Vec<u64>,
    max_seq: u32,
}

impl SeenWindow {
    /// A window of `window` (a power of two) packets, nothing seen.
    pub fn new(window: u32) -> Self {
        Self {
            window,
            seen: vec![false; window as usize],
            pkt_state: vec![0; window as usize],
            // "-1": sequence numbers start at 0.
            max_seq: u32::MAX,
        }
    }

    /// Records `seq`: set_bit in an even segment, clr_bitc in an odd one (ASK Eq. 8).
    pub fn observe(&mut self, seq: u32) -> Seen {
        let w = self.window;
        let behind = self.max_seq.wrapping_sub(seq) as i32;
        if behind >= w as i32 {
            return Seen::Stale;
        }
        if -(behind as i64) > w as i64 {
            return Seen::Ahead;
        }
        if behind < 0 {
            self.max_seq = seq;
        }
        let r = (seq % w) as usize;
        let even = (seq / w) % 2 == 0;
        let old = self.seen[r];
        self.seen[r] = even;
        if (even && old) || (!even && !old) {
            Seen::Again
        } else {
            Seen::First
        }
    }

    /// `PktState[seq % W]`: the bitmap left after the first appearance of `seq`.
    pub fn state(&self, seq: u32) -> u64 {
        self.pkt_state[(seq % self.window) as usize]
    }

    /// Records the bitmap left after the first appearance of `seq`.
    pub fn set_state(&mut self, seq: u32, bitmap: u64) {
        self.pkt_state[(seq % self.window) as usize] = bitmap;
    }
}

#[derive(Debug, Clone)]
struct Channel {
    seen: SeenWindow,
    peer: Option<(L4Addr, u8)>,
}

#[derive(Debug, Clone)]
struct KvJob {
    entry: KvJobEntry,
    mem: KvMemory,
    epoch: u32,
    channels: Vec<Channel>,
}

impl KvJob {
    fn new(entry: KvJobEntry) -> Self {
        Self {
            mem: KvMemory::new(entry.arrays as usize, entry.size),
            epoch: 0,
            channels: (0..entry.channels)
                .map(|_| Channel {
                    seen: SeenWindow::new(entry.window),
                    peer: None,
                })
                .collect(),
            entry,
        }
    }
    fn active(&self) -> usize {
        (self.epoch & 1) as usize
    }
}

/// Why a key-value packet addressed to the switch was dropped as malformed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum KvMalformed {
    /// Header or length problem.
    #[error("{0}")]
    Wire(KvWireError),
    /// A data packet whose tuple count is not the job's array count.
    #[error("tuple count differs from the job's arrays")]
    TupleCount,
    /// Channel beyond the job's channels.
    #[error("data channel out of range")]
    ChannelOutOfRange,
    /// Fetch/clear of an array or aggregator the job does not have, or not range-aligned.
    #[error("fetch/clear range outside the job")]
    BadRange,
    /// An ack, fin reply, swap, fetch or clear not sent by the job's receiver.
    #[error("control packet not from the job's receiver")]
    NotReceiver,
    /// A reply type sent to the switch.
    #[error("unexpected packet type at the switch")]
    UnexpectedType,
}

/// What the switch did with one key-value packet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KvVerdict {
    /// Every tuple absorbed (aggregator held the key or was claimed): acknowledged.
    Absorbed,
    /// Some tuples collided: forwarded to the receiver with the rest cleared from the bitmap.
    Forwarded,
    /// Seen before and fully absorbed the first time: acknowledged again.
    DuplicateAcked,
    /// Seen before, partially absorbed: forwarded with the first time's leftover bitmap.
    DuplicateForwarded,
    /// Older than the channel's window: dropped.
    Stale,
    /// Further ahead than the window allows: dropped.
    Ahead,
    /// An ack or fin reply from the receiver relayed to the channel's sender.
    Relayed,
    /// An ack or fin reply for a channel the switch has not heard from: dropped.
    NoPeer,
    /// A sender's FIN forwarded to the receiver.
    FinForwarded,
    /// A swap request answered (applied if its epoch was newer).
    Swapped,
    /// A fetch answered.
    Fetched,
    /// A clear applied and answered.
    Cleared,
    /// A fetch or clear of an older epoch: dropped.
    StaleEpoch,
    /// No key-value job with this id.
    UnknownJob,
    /// Malformed: dropped.
    Malformed(KvMalformed),
}

/// Key-value counters of a switch.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct KvCounters {
    /// Data packets received (first appearances and duplicates).
    pub data: u64,
    /// Tuples added into an aggregator that held their key.
    pub added: u64,
    /// Tuples that claimed an empty aggregator.
    pub claimed: u64,
    /// Tuples that collided and went on to the receiver.
    pub collisions: u64,
    /// Data packets acknowledged by the switch.
    pub acked: u64,
    /// Data packets forwarded to the receiver.
    pub forwarded: u64,
    /// Data packets seen before.
    pub duplicates: u64,
    /// Data packets dropped as stale or ahead of the window.
    pub out_of_window: u64,
    /// Acks and fins relayed.
    pub relayed: u64,
    /// Relays without a known sender.
    pub no_peer: u64,
    /// Swap requests that changed the active copy.
    pub swaps: u64,
    /// Fetch requests answered.
    pub fetches: u64,
    /// Clear requests applied.
    pub clears: u64,
    /// Fetches or clears of an older epoch.
    pub stale_epoch: u64,
    /// Key-value packets for an unknown job.
    pub unknown_job: u64,
    /// Malformed key-value packets.
    pub malformed: u64,
}

impl KvCounters {
    /// Every counter as (`kv_` + field name, value), in declaration order.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        vec![
            ("kv_data", self.data),
            ("kv_added", self.added),
            ("kv_claimed", self.claimed),
            ("kv_collisions", self.collisions),
            ("kv_acked", self.acked),
            ("kv_forwarded", self.forwarded),
            ("kv_duplicates", self.duplicates),
            ("kv_out_of_window", self.out_of_window),
            ("kv_relayed", self.relayed),
            ("kv_no_peer", self.no_peer),
            ("kv_swaps", self.swaps),
            ("kv_fetches", self.fetches),
            ("kv_clears", self.clears),
            ("kv_stale_epoch", self.stale_epoch),
            ("kv_unknown_job", self.unknown_job),
            ("kv_malformed", self.malformed),
        ]
    }
}

/// The key-value job table and its state.
#[derive(Debug, Clone, Default)]
pub struct KvTable {
    jobs: BTreeMap<u16, KvJob>,
    counters: KvCounters,
}

impl KvTable {
    /// Builds the table from validated entries.
    pub fn new(entries: &[KvJobEntry]) -> Result<Self, ConfigError> {
        super::validate_jobs(entries)?;
        Ok(Self {
            jobs: entries
                .iter()
                .map(|e| (e.job, KvJob::new(e.clone())))
                .collect(),
            counters: KvCounters::default(),
        })
    }

    /// Adds or replaces a job (its memory and windows start empty). On error nothing changes.
    pub fn set_job(&mut self, entry: KvJobEntry) -> Result<(), ConfigError> {
        entry.validate()?;
        self.jobs.insert(entry.job, KvJob::new(entry));
        Ok(())
    }

    /// True if the table holds no key-value job.
    pub fn is_empty(&self) -> bool {
        self.jobs.is_empty()
    }

    /// Removes a job. Returns whether it existed.
    pub fn remove_job(&mut self, job: u16) -> bool {
        self.jobs.remove(&job).is_some()
    }

    /// Key-value counters.
    pub fn counters(&self) -> &KvCounters {
        &self.counters
    }

    /// The entry of a job.
    pub fn job(&self, job: u16) -> Option<&KvJobEntry> {
        self.jobs.get(&job).map(|j| &j.entry)
    }

    /// A job's aggregator memory, for inspection.
    pub fn memory(&self, job: u16) -> Option<&KvMemory> {
        self.jobs.get(&job).map(|j| &j.mem)
    }

    /// A job's current swap epoch (its active copy is `epoch & 1`).
    pub fn epoch(&self, job: u16) -> Option<u32> {
        self.jobs.get(&job).map(|j| j.epoch)
    }

    /// Handles a key-value datagram addressed to the switch `me`, received on `port`.
    pub fn handle(
        &mut self,
        me: L4Addr,
        port: u8,
        d: &Datagram,
        out: &mut Vec<Output>,
    ) -> KvVerdict {
        let v = self.dispatch(me, port, d, out);
        let c = &mut self.counters;
        match v {
            KvVerdict::Absorbed | KvVerdict::DuplicateAcked => c.acked += 1,
            KvVerdict::Forwarded | KvVerdict::DuplicateForwarded => c.forwarded += 1,
            KvVerdict::Stale | KvVerdict::Ahead => c.out_of_window += 1,
            KvVerdict::Relayed | KvVerdict::FinForwarded => c.relayed += 1,
            KvVerdict::NoPeer => c.no_peer += 1,
            KvVerdict::Fetched => c.fetches += 1,
            KvVerdict::Cleared => c.clears += 1,
            KvVerdict::StaleEpoch => c.stale_epoch += 1,
            KvVerdict::UnknownJob => c.unknown_job += 1,
            KvVerdict::Malformed(_) => c.malformed += 1,
            KvVerdict::Swapped => {}
        }
        if matches!(v, KvVerdict::DuplicateAcked | KvVerdict::DuplicateForwarded) {
            c.duplicates += 1;
        }
        v
    }

    fn dispatch(&mut self, me: L4Addr, port: u8, d: &Datagram, out: &mut Vec<Output>) -> KvVerdict {
        let r = match KvRepr::parse(d.payload) {
            Ok(r) => r,
            Err(e) => return KvVerdict::Malformed(KvMalformed::Wire(e)),
        };
        let Some(job) = self.jobs.get_mut(&r.job) else {
            return KvVerdict::UnknownJob;
        };
        let rx = job.entry.receiver;
        let from_receiver = d.src.ip == rx.ip && d.src.port == rx.udp_port;
        let reply_to = Endpoint {
            mac: d.src.mac,
            ip: d.src.ip,
            udp_port: d.src.port,
            port,
        };
        match (r.ktype, r.reply) {
            (KvType::Data, _) | (KvType::Fin, false) => {
                if r.lane as u16 >= job.entry.channels {
                    return KvVerdict::Malformed(KvMalformed::ChannelOutOfRange);
                }
                if r.ktype == KvType::Data && r.tuples.len() != job.entry.arrays as usize {
                    return KvVerdict::Malformed(KvMalformed::TupleCount);
                }
                job.channels[r.lane as usize].peer = Some((d.src, port));
                let src = L4Addr {
                    mac: me.mac,
                    ..d.src
                };
                if r.ktype == KvType::Fin {
                    out.push(send(src, rx, &r));
                    return KvVerdict::FinForwarded;
                }
                self.counters.data += 1;
                self.data(me, src, reply_to, r, out)
            }
            (KvType::Ack, false) | (KvType::Fin, true) => {
                if !from_receiver {
                    return KvVerdict::Malformed(KvMalformed::NotReceiver);
                }
                let Some(ch) = job.channels.get(r.lane as usize) else {
                    return KvVerdict::Malformed(KvMalformed::ChannelOutOfRange);
                };
                let Some((peer, pport)) = ch.peer else {
                    return KvVerdict::NoPeer;
                };
                let to = Endpoint {
                    mac: peer.mac,
                    ip: peer.ip,
                    udp_port: peer.port,
                    port: pport,
                };
                out.push(send(me, to, &r));
                KvVerdict::Relayed
            }
            (KvType::Swap, false) if from_receiver => {
                if (r.seq.wrapping_sub(job.epoch) as i32) > 0 {
                    job.epoch = r.seq;
                    self.counters.swaps += 1;
                }
                let mut rep = KvRepr::control(KvType::Swap, r.job, 0, job.epoch);
                rep.reply = true;
                out.push(send(me, reply_to, &rep));
                KvVerdict::Swapped
            }
            (KvType::Fetch | KvType::Clear, false) if from_receiver => {
                let size = job.entry.size as u64;
                if r.lane >= job.entry.arrays || r.aux >= size || r.aux % RANGE as u64 != 0 {
                    return KvVerdict::Malformed(KvMalformed::BadRange);
                }
                if r.seq != job.epoch {
                    return KvVerdict::StaleEpoch;
                }
                let (start, end) = (r.aux as u32, (r.aux + RANGE as u64).min(size) as u32);
                let (a, c) = (r.lane as usize, r.copy as usize);
                let mut rep = KvRepr {
                    reply: true,
                    tuples: Vec::new(),
                    ..r.clone()
                };
                let v = if r.ktype == KvType::Fetch {
                    rep.tuples = (start..end).filter_map(|i| job.mem.get(a, c, i)).collect();
                    KvVerdict::Fetched
                } else {
                    job.mem.clear(a, c, start, end);
                    KvVerdict::Cleared
                };
                out.push(send(me, reply_to, &rep));
                v
            }
            (KvType::Swap | KvType::Fetch | KvType::Clear, false) => {
                KvVerdict::Malformed(KvMalformed::NotReceiver)
            }
            _ => KvVerdict::Malformed(KvMalformed::UnexpectedType),
        }
    }

    fn data(
        &mut self,
        me: L4Addr,
        src: L4Addr,
        reply_to: Endpoint,
        mut r: KvRepr,
        out: &mut Vec<Output>,
    ) -> KvVerdict {
        let job = self.jobs.get_mut(&r.job).expect("checked by dispatch");
        let rx = job.entry.receiver;
        let active = job.active();
        let ch = &mut job.channels[r.lane as usize];
        let (left, dup) = match ch.seen.observe(r.seq) {
            Seen::Stale => return KvVerdict::Stale,
            Seen::Ahead => return KvVerdict::Ahead,
            Seen::Again => (ch.seen.state(r.seq), true),
            Seen::First => {
                let mut left = r.aux;
                for (i, &(k, v)) in r.tuples.iter().enumerate() {
                    if r.aux >> i & 1 == 0 {
                        continue;
                    }
                    match job.mem.offer(i, active, k, v) {
                        Offer::Added => self.counters.added += 1,
                        Offer::Claimed => self.counters.claimed += 1,
                        Offer::Collision => {
                            self.counters.collisions += 1;
                            continue;
                        }
                    }
                    left &= !(1u64 << i);
                }
                job.channels[r.lane as usize].seen.set_state(r.seq, left);
                (left, false)
            }
        };
        if left == 0 {
            let ack = KvRepr::control(KvType::Ack, r.job, r.lane, r.seq);
            out.push(send(me, reply_to, &ack));
            return if dup {
                KvVerdict::DuplicateAcked
            } else {
                KvVerdict::Absorbed
            };
        }
        r.aux = left;
        out.push(send(src, rx, &r));
        if dup {
            KvVerdict::DuplicateForwarded
        } else {
            KvVerdict::Forwarded
        }
    }
}

fn send(src: L4Addr, to: Endpoint, r: &KvRepr) -> Output {
    let dst = L4Addr {
        mac: to.mac,
        ip: to.ip,
        port: to.udp_port,
    };
    Output {
        port: to.port,
        frame: Datagram {
            src,
            dst,
            payload: &r.to_bytes(),
        }
        .to_frame(false),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_seen_matches_an_explicit_window() {
        // Every order a window-respecting sender can produce: compare with a set.
        use rand::{Rng, SeedableRng};
        for seed in 0..200u64 {
            let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
            let w = 1u32 << rng.gen_range(0..4);
            let mut win = SeenWindow::new(w);
            let mut seen = std::collections::BTreeSet::new();
            let mut base = 0u32; // lowest unacknowledged
            let mut max = None::<u32>;
            for _ in 0..300 {
                // A packet in [base, base + W) or a stale retransmission.
                let s = if rng.gen_bool(0.1) && base > 0 {
                    rng.gen_range(0..base)
                } else {
                    base + rng.gen_range(0..w)
                };
                if let Some(m) = max {
                    if s + w <= m {
                        assert_eq!(win.observe(s), Seen::Stale, "seed {seed} seq {s}");
                        continue;
                    }
                }
                // A sender only sends s once everything below s - W + 1 is acknowledged, and
                // an ack means the switch observed the packet.
                if (0..s.saturating_sub(w - 1)).any(|x| !seen.contains(&x)) {
                    continue;
                }
                let want = if seen.insert(s) {
                    Seen::First
                } else {
                    Seen::Again
                };
                assert_eq!(win.observe(s), want, "seed {seed} seq {s} W {w}");
                max = Some(max.map_or(s, |m: u32| m.max(s)));
                while seen.contains(&base) && rng.gen_bool(0.7) {
                    base += 1;
                }
            }
        }
    }

    #[test]
    fn memory_claims_adds_and_collides() {
        let mut m = KvMemory::new(1, 1);
        assert_eq!(m.offer(0, 0, 5, 2), Offer::Claimed);
        assert_eq!(m.offer(0, 0, 5, 3), Offer::Added);
        assert_eq!(m.offer(0, 0, 6, 1), Offer::Collision);
        assert_eq!(m.offer(0, 1, 6, 1), Offer::Claimed);
        assert_eq!(m.get(0, 0, 0), Some((5, 5)));
        assert_eq!(m.drain_copy(0), vec![(5, 5)]);
        assert_eq!(m.get(0, 0, 0), None);
        assert_eq!(m.get(0, 1, 0), Some((6, 1)));
    }

    #[test]
    fn ahead_of_the_window_is_refused() {
        let mut w = SeenWindow::new(4);
        assert_eq!(w.observe(4), Seen::Ahead);
        assert_eq!(w.observe(3), Seen::First);
        assert_eq!(w.observe(7), Seen::First);
        assert_eq!(w.observe(3), Seen::Stale);
        assert_eq!(w.observe(12), Seen::Ahead);
    }
}
