//! The host side of key-value jobs: a sender per data channel and a receiver per job.
//!
//! Both are pure state machines over datagram payloads addressed to (or received from) the
//! switch: `poll(now)` returns what to send, `receive(payload, now)` what to answer at once.
//! The in-memory network ([`super::sim`]) and the socket drivers (`fanin kv`) run them.

use std::collections::{BTreeMap, BTreeSet};

use super::wire::{KvRepr, KvType, RANGE};
use super::{array_of, MAX_WINDOW};

/// A bad host-side parameter, naming it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KvHostError {
    /// A parameter is out of range.
    #[error("{name} = {value} is out of range ({why})")]
    BadParam {
        /// Parameter name.
        name: &'static str,
        /// Its value.
        value: u64,
        /// The allowed range.
        why: &'static str,
    },
}

fn check(name: &'static str, value: u64, ok: bool, why: &'static str) -> Result<(), KvHostError> {
    if ok {
        Ok(())
    } else {
        Err(KvHostError::BadParam { name, value, why })
    }
}

/// One packet's slots: the bitmap of filled slots and one tuple per array (blank = (0, 0)).
pub type Slots = (u64, Vec<(u32, i32)>);

/// ASK's ordered key-space partition: tuple slot `i` of every packet carries only keys of
/// array `i`; each array's tuples go out in input order, blank slots where an array runs dry.
pub fn packetize(tuples: &[(u32, i32)], arrays: u8) -> Vec<Slots> {
    let n = arrays as usize;
    let mut queues = vec![Vec::new(); n];
    for &(k, v) in tuples {
        queues[array_of(k, arrays)].push((k, v));
    }
    let packets = queues.iter().map(Vec::len).max().unwrap_or(0);
    (0..packets)
        .map(|p| {
            let mut bitmap = 0u64;
            let slots = (0..n)
                .map(|i| match queues[i].get(p) {
                    Some(&t) => {
                        bitmap |= 1 << i;
                        t
                    }
                    None => (0, 0),
                })
                .collect();
            (bitmap, slots)
        })
        .collect()
}

/// How one data channel sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SenderConfig {
    /// Key-value job id.
    pub job: u16,
    /// This sender's data channel.
    pub channel: u8,
    /// Tuples per packet (the job's arrays).
    pub arrays: u8,
    /// Packets in flight, a power of two no larger than the job's window.
    pub window: u32,
    /// Ticks before an unacknowledged packet (or the FIN) is sent again; doubled after
    /// each retransmission of the same packet, up to 64 times.
    pub retransmit_after: u64,
}

/// Sender counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SenderStats {
    /// Data packets sent the first time.
    pub sent: u64,
    /// Data packets and FINs sent again.
    pub retransmits: u64,
    /// Acks that acknowledged a packet for the first time.
    pub acks: u64,
}

/// The sender of one data channel: window W, retransmission on timeout, FIN at the end.
#[derive(Debug, Clone)]
pub struct KvSender {
    cfg: SenderConfig,
    packets: Vec<Slots>,
    tuples: u64,
    acked: Vec<bool>,
    sent_at: Vec<Option<u64>>,
    tries: Vec<u8>,
    srtt: Option<(u64, u64)>,
    base: usize,
    next: usize,
    fin_sent_at: Option<u64>,
    fin_acked: bool,
    stats: SenderStats,
}

impl KvSender {
    /// A sender of `tuples` (packetised by [`packetize`]).
    pub fn new(cfg: SenderConfig, tuples: &[(u32, i32)]) -> Result<Self, KvHostError> {
        check(
            "arrays",
            cfg.arrays as u64,
            (1..=64).contains(&cfg.arrays),
            "1..=64",
        )?;
        check(
            "window",
            cfg.window as u64,
            cfg.window.is_power_of_two() && cfg.window <= MAX_WINDOW,
            "a power of two up to 1024",
        )?;
        check(
            "retransmit_after",
            cfg.retransmit_after,
            cfg.retransmit_after > 0,
            "at least 1",
        )?;
        let packets = packetize(tuples, cfg.arrays);
        let n = packets.len();
        check("packets", n as u64, n < 1 << 31, "below 2^31")?;
        Ok(Self {
            cfg,
            packets,
            tuples: tuples.len() as u64,
            acked: vec![false; n],
            sent_at: vec![None; n],
            tries: vec![0; n],
            srtt: None,
            base: 0,
            next: 0,
            fin_sent_at: None,
            fin_acked: false,
            stats: SenderStats::default(),
        })
    }

    /// Data packets this channel sends (without retransmissions).
    pub fn packets(&self) -> usize {
        self.packets.len()
    }

    /// Tuples this channel sends.
    pub fn tuples(&self) -> u64 {
        self.tuples
    }

    /// Counters.
    pub fn stats(&self) -> SenderStats {
        self.stats
    }

    /// True once every packet is acknowledged and the receiver has answered the FIN.
    pub fn done(&self) -> bool {
        self.fin_acked
    }

    fn data(&self, i: usize) -> Vec<u8> {
        let (bitmap, tuples) = &self.packets[i];
        KvRepr {
            ktype: KvType::Data,
            reply: false,
            lane: self.cfg.channel,
            job: self.cfg.job,
            seq: i as u32,
            copy: 0,
            aux: *bitmap,
            tuples: tuples.clone(),
        }
        .to_bytes()
    }

    /// Payloads due at tick `now`: new packets inside the window, timed-out ones, the FIN.
    pub fn poll(&mut self, now: u64) -> Vec<Vec<u8>> {
        let mut out = Vec::new();
        let rto = self.rto();
        for i in self.base..self.next {
            // Exponential backoff per packet: a slow switch is not flooded with copies.
            let wait = rto << self.tries[i].min(6);
            if !self.acked[i] && self.sent_at[i].is_some_and(|t| now >= t + wait) {
                self.sent_at[i] = Some(now);
                self.tries[i] = self.tries[i].saturating_add(1);
                self.stats.retransmits += 1;
                out.push(self.data(i));
            }
        }
        while self.next < self.packets.len() && self.next < self.base + self.cfg.window as usize {
            self.sent_at[self.next] = Some(now);
            self.stats.sent += 1;
            out.push(self.data(self.next));
            self.next += 1;
        }
        if self.base == self.packets.len() && !self.fin_acked {
            let due = self.fin_sent_at.is_none_or(|t| now >= t + rto);
            if due {
                if self.fin_sent_at.is_some() {
                    self.stats.retransmits += 1;
                }
                self.fin_sent_at = Some(now);
                let fin = KvRepr::control(
                    KvType::Fin,
                    self.cfg.job,
                    self.cfg.channel,
                    self.packets.len() as u32,
                );
                out.push(fin.to_bytes());
            }
        }
        out
    }

    /// The retransmission timeout: the configured one, or more if the measured round trip
    /// (Jacobson's estimate over first transmissions only, as Karn advises) needs it.
    pub fn rto(&self) -> u64 {
        let est = self.srtt.map_or(0, |(s, v)| s + 4 * v);
        self.cfg.retransmit_after.max(est)
    }

    /// Takes an ack or a FIN reply at tick `now`. Returns false if the payload was not for
    /// this channel.
    pub fn receive(&mut self, payload: &[u8], now: u64) -> bool {
        let Ok(r) = KvRepr::parse(payload) else {
            return false;
        };
        if r.job != self.cfg.job || r.lane != self.cfg.channel {
            return false;
        }
        match (r.ktype, r.reply) {
            (KvType::Ack, false) => {
                let i = r.seq as usize;
                if i < self.next && !self.acked[i] {
                    self.acked[i] = true;
                    self.stats.acks += 1;
                    if let (0, Some(t)) = (self.tries[i], self.sent_at[i]) {
                        let m = now.saturating_sub(t);
                        self.srtt = Some(match self.srtt {
                            None => (m, m / 2),
                            Some((s, v)) => ((7 * s + m) / 8, (3 * v + s.abs_diff(m)) / 4),
                        });
                    }
                    while self.base < self.next && self.acked[self.base] {
                        self.base += 1;
                    }
                }
                true
            }
            (KvType::Fin, true) if r.seq as usize == self.packets.len() => {
                if self.base == self.packets.len() {
                    self.fin_acked = true;
                }
                true
            }
            _ => false,
        }
    }
}

/// The receiver's duplicate window for one channel: seq numbers within `2W` of the highest
/// seen, each remembered in full; anything `W` or more below the highest was processed.
#[derive(Debug, Clone)]
struct RecvWindow {
    window: u32,
    slots: Vec<Option<u32>>,
    max: u32,
}

impl RecvWindow {
    fn new(window: u32) -> Self {
        Self {
            window,
            slots: vec![None; 2 * window as usize],
            max: u32::MAX,
        }
    }
    /// True on a sequence number's first appearance.
    fn accept(&mut self, seq: u32) -> bool {
        let behind = self.max.wrapping_sub(seq) as i32;
        if behind >= self.window as i32 {
            return false;
        }
        let i = (seq % (2 * self.window)) as usize;
        if self.slots[i] == Some(seq) {
            return false;
        }
        self.slots[i] = Some(seq);
        if behind < 0 {
            self.max = seq;
        }
        true
    }
}

/// How a receiver works.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverConfig {
    /// Key-value job id.
    pub job: u16,
    /// The job's arrays.
    pub arrays: u8,
    /// The job's aggregators per array and copy.
    pub size: u32,
    /// The job's window W.
    pub window: u32,
    /// Every data channel that will send (the receiver finishes after a FIN from each).
    pub channels: Vec<u8>,
    /// Swap copies after this many forwarded data packets (None: never swap mid-stream).
    pub swap_after: Option<u64>,
    /// Ticks before a swap, fetch or clear request is sent again.
    pub retransmit_after: u64,
    /// Fetch and merge the switch's copies at the end (false when no switch aggregates:
    /// senders addressing the receiver directly).
    pub drain: bool,
}

/// Receiver counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReceiverStats {
    /// Forwarded data packets taken (first appearances).
    pub data_packets: u64,
    /// Forwarded data packets seen before (acknowledged again, not aggregated).
    pub duplicates: u64,
    /// Tuples aggregated by the receiver from forwarded packets.
    pub local_tuples: u64,
    /// (key, value) entries fetched from the switch and merged.
    pub fetched: u64,
    /// Swaps completed.
    pub swaps: u64,
    /// Swap, fetch and clear requests sent (with retransmissions).
    pub requests: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Fetch,
    Clear,
}

#[derive(Debug, Clone)]
enum Phase {
    Idle,
    Swapping {
        target: u32,
        sent_at: Option<u64>,
    },
    Draining {
        copy: u8,
        ranges: BTreeMap<(u8, u32), (Stage, Option<u64>)>,
        then: Vec<u8>,
    },
}

/// Most fetch/clear requests outstanding at once.
const MAX_OUTSTANDING: usize = 64;

/// The receiver of one job: aggregates forwarded tuples, swaps copies, fetches and merges.
#[derive(Debug, Clone)]
pub struct KvReceiver {
    cfg: ReceiverConfig,
    sums: BTreeMap<u32, i32>,
    windows: BTreeMap<u8, RecvWindow>,
    fins: BTreeSet<u8>,
    epoch: u32,
    dirty: [bool; 2],
    since_swap: u64,
    phase: Phase,
    done: bool,
    stats: ReceiverStats,
}

impl KvReceiver {
    /// A receiver expecting FINs from `cfg.channels`.
    pub fn new(cfg: ReceiverConfig) -> Result<Self, KvHostError> {
        check(
            "swap_after",
            0,
            cfg.drain || cfg.swap_after.is_none(),
            "swapping needs a switch to drain",
        )?;
        check(
            "arrays",
            cfg.arrays as u64,
            (1..=64).contains(&cfg.arrays),
            "1..=64",
        )?;
        check(
            "size",
            cfg.size as u64,
            cfg.size.is_power_of_two() && cfg.size <= super::MAX_SIZE,
            "a power of two up to 2^20",
        )?;
        check(
            "window",
            cfg.window as u64,
            cfg.window.is_power_of_two() && cfg.window <= MAX_WINDOW,
            "a power of two up to 1024",
        )?;
        check(
            "swap_after",
            cfg.swap_after.unwrap_or(1),
            cfg.swap_after != Some(0),
            "at least 1",
        )?;
        check(
            "retransmit_after",
            cfg.retransmit_after,
            cfg.retransmit_after > 0,
            "at least 1",
        )?;
        let windows = cfg
            .channels
            .iter()
            .map(|&c| (c, RecvWindow::new(cfg.window)))
            .collect();
        let drain = cfg.drain;
        Ok(Self {
            cfg,
            sums: BTreeMap::new(),
            windows,
            fins: BTreeSet::new(),
            epoch: 0,
            dirty: [drain, false],
            since_swap: 0,
            phase: Phase::Idle,
            done: false,
            stats: ReceiverStats::default(),
        })
    }

    /// True once every channel sent its FIN and both switch copies are merged and cleared.
    pub fn done(&self) -> bool {
        self.done
    }

    /// The sums so far (final once [`Self::done`]).
    pub fn sums(&self) -> &BTreeMap<u32, i32> {
        &self.sums
    }

    /// Counters.
    pub fn stats(&self) -> ReceiverStats {
        self.stats
    }

    fn add(&mut self, k: u32, v: i32) {
        let s = self.sums.entry(k).or_insert(0);
        *s = s.wrapping_add(v);
    }

    fn drain(&self, copy: u8, then: Vec<u8>) -> Phase {
        let mut ranges = BTreeMap::new();
        for a in 0..self.cfg.arrays {
            for start in (0..self.cfg.size).step_by(RANGE as usize) {
                ranges.insert((a, start), (Stage::Fetch, None));
            }
        }
        Phase::Draining { copy, ranges, then }
    }

    /// Takes a payload from the switch; returns the payloads to answer with at once.
    pub fn receive(&mut self, payload: &[u8]) -> Vec<Vec<u8>> {
        let Ok(r) = KvRepr::parse(payload) else {
            return vec![];
        };
        if r.job != self.cfg.job {
            return vec![];
        }
        match (r.ktype, r.reply) {
            (KvType::Data, false) => {
                let Some(w) = self.windows.get_mut(&r.lane) else {
                    return vec![];
                };
                if w.accept(r.seq) {
                    self.stats.data_packets += 1;
                    self.since_swap += 1;
                    for (i, &(k, v)) in r.tuples.iter().enumerate() {
                        if r.aux >> i & 1 == 1 {
                            self.stats.local_tuples += 1;
                            self.add(k, v);
                        }
                    }
                } else {
                    self.stats.duplicates += 1;
                }
                vec![KvRepr::control(KvType::Ack, r.job, r.lane, r.seq).to_bytes()]
            }
            (KvType::Fin, false) => {
                if !self.windows.contains_key(&r.lane) {
                    return vec![];
                }
                self.fins.insert(r.lane);
                let mut rep = KvRepr::control(KvType::Fin, r.job, r.lane, r.seq);
                rep.reply = true;
                vec![rep.to_bytes()]
            }
            (KvType::Swap, true) => {
                if let Phase::Swapping { target, .. } = self.phase {
                    if r.seq == target {
                        self.epoch = target;
                        let active = (target & 1) as usize;
                        self.dirty[active] = true;
                        self.stats.swaps += 1;
                        self.phase = self.drain(1 - active as u8, vec![]);
                    }
                }
                vec![]
            }
            (KvType::Fetch | KvType::Clear, true) => {
                let Phase::Draining { copy, ranges, .. } = &mut self.phase else {
                    return vec![];
                };
                if r.seq != self.epoch || r.copy != *copy || r.aux > u32::MAX as u64 {
                    return vec![];
                }
                let key = (r.lane, r.aux as u32);
                match (ranges.get(&key), r.ktype) {
                    (Some((Stage::Fetch, _)), KvType::Fetch) => {
                        ranges.insert(key, (Stage::Clear, None));
                        for &(k, v) in &r.tuples {
                            self.stats.fetched += 1;
                            self.add(k, v);
                        }
                    }
                    (Some((Stage::Clear, _)), KvType::Clear) => {
                        ranges.remove(&key);
                    }
                    _ => {}
                }
                vec![]
            }
            _ => vec![],
        }
    }

    /// Payloads due at tick `now`: swap, fetch and clear requests (and their retransmissions).
    pub fn poll(&mut self, now: u64) -> Vec<Vec<u8>> {
        let rto = self.cfg.retransmit_after;
        let due = |t: Option<u64>| t.is_none_or(|t| now >= t + rto);
        let mut out = Vec::new();
        loop {
            match &mut self.phase {
                Phase::Idle => {
                    if self.done {
                        return out;
                    }
                    if self.fins.len() == self.cfg.channels.len() {
                        let active = (self.epoch & 1) as u8;
                        let todo: Vec<u8> = [1 - active, active]
                            .into_iter()
                            .filter(|&c| self.dirty[c as usize])
                            .collect();
                        match todo.split_first() {
                            None => {
                                self.done = true;
                                return out;
                            }
                            Some((&c, rest)) => self.phase = self.drain(c, rest.to_vec()),
                        }
                    } else if self.cfg.swap_after.is_some_and(|t| self.since_swap >= t) {
                        self.since_swap = 0;
                        self.phase = Phase::Swapping {
                            target: self.epoch.wrapping_add(1),
                            sent_at: None,
                        };
                    } else {
                        return out;
                    }
                }
                Phase::Swapping { target, sent_at } => {
                    if due(*sent_at) {
                        *sent_at = Some(now);
                        self.stats.requests += 1;
                        out.push(
                            KvRepr::control(KvType::Swap, self.cfg.job, 0, *target).to_bytes(),
                        );
                    }
                    return out;
                }
                Phase::Draining { copy, ranges, then } => {
                    if ranges.is_empty() {
                        let (done, next) = (*copy, std::mem::take(then));
                        self.dirty[done as usize] = false;
                        self.phase = match next.split_first() {
                            Some((&c, rest)) => self.drain(c, rest.to_vec()),
                            None => Phase::Idle,
                        };
                        continue;
                    }
                    let mut outstanding = ranges
                        .values()
                        .filter(|(_, t)| t.is_some_and(|t| now < t + rto))
                        .count();
                    for (&(a, start), (stage, t)) in ranges.iter_mut() {
                        if outstanding >= MAX_OUTSTANDING {
                            break;
                        }
                        if due(*t) {
                            *t = Some(now);
                            outstanding += 1;
                            self.stats.requests += 1;
                            let kt = match stage {
                                Stage::Fetch => KvType::Fetch,
                                Stage::Clear => KvType::Clear,
                            };
                            let mut q = KvRepr::control(kt, self.cfg.job, a, self.epoch);
                            q.copy = *copy;
                            q.aux = start as u64;
                            out.push(q.to_bytes());
                        }
                    }
                    return out;
                }
            }
        }
    }
}
