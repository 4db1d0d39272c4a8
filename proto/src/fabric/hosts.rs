//! The hosts of the fabric simulator: Canary workers and leaders, static-tree workers, ring
//! members and background senders.
//!
//! A host's data are derived from (job, rank, element) by a hash, so the exact sum of any
//! block is known without storing every host's tensor; every result a host receives is
//! compared with it.

use std::collections::{BTreeMap, VecDeque};

use rand_chacha::ChaCha8Rng;

use super::{host_ip, host_mac, Fabric, Port, Run, Scheme, Sim};
use crate::model::dynamic::{leader_rank, LeaderBlock, LeaderEvent, BROADCAST, BROADCAST_MAC};
use crate::wire::wide::{self, version_for};
use crate::wire::{
    frame::classify, Datagram, Flags, FrameKind, L4Addr, PacketType, RankSet, Repr, WideRepr,
    FANIN_UDP_PORT,
};

/// UDP port of the ring baseline's data and acknowledgements.
const RING_PORT: u16 = 7001;

/// Host-side figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct HostStats {
    /// Retransmissions sent.
    pub retransmits: u64,
    /// Packets delayed by host noise.
    pub noisy: u64,
    /// Results received that differed from the exact sum.
    pub wrong: u64,
    /// Partial aggregates a leader received (more than one per block means stragglers).
    pub leader_partials: u64,
    /// Overlapping contributor sets a leader refused.
    pub overlaps: u64,
}

impl HostStats {
    pub(super) fn add(&mut self, o: &HostStats) {
        self.retransmits += o.retransmits;
        self.noisy += o.noisy;
        self.wrong += o.wrong;
        self.leader_partials += o.leader_partials;
        self.overlaps += o.overlaps;
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Block {
    done: bool,
    sent_at: u64,
    tries: u8,
}

pub(super) struct Host {
    pub(super) job: Option<usize>,
    rank: usize,
    pub(super) background: bool,
    pub(super) nic: Port,
    pub(super) urgent: VecDeque<Vec<u8>>,
    pub(super) sleeping: bool,
    pub(super) stats: HostStats,
    pub(super) done_at: Option<u64>,
    pub(super) bg_peer: usize,
    pub(super) bg_left: u32,
    /// Index among the background hosts (its place in each round's derangement).
    pub(super) bg_index: usize,
    /// Background messages started (the round of the next one).
    pub(super) bg_round: u32,
    blocks: Vec<Block>,
    /// Lowest block without a result.
    lo: usize,
    /// Next block to send for the first time.
    next: usize,
    /// Ring: lowest packet not yet acknowledged by the successor.
    ack_lo: usize,
    remaining: usize,
    leading: BTreeMap<u32, LeaderBlock>,
    retx_armed: bool,
    checked_all: bool,
    /// Ring: what this host holds for packet `b` once received (its partial sum in the
    /// reduce-scatter, the full sum in the allgather), forwarded as packet `b + chunk`.
    ring_held: Vec<Option<Vec<i32>>>,
}

impl Host {
    pub(super) fn participant(&self) -> bool {
        self.job.is_some()
    }

    pub(super) fn finished(&self) -> bool {
        self.done_at.is_some()
    }

    pub(super) fn exact(&self, _run: &Run) -> bool {
        self.done_at.is_some() && self.stats.wrong == 0 && self.checked_all
    }
}

/// The int32 element `i` of rank `rank` in job `job`: small, so sums never saturate.
pub fn value(job: u16, rank: usize, i: usize) -> i32 {
    let mut x = (job as u64) << 48 ^ (rank as u64) << 32 ^ i as u64;
    x = x.wrapping_mul(0x9e37_79b9_7f4a_7c15);
    x ^= x >> 29;
    x = x.wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x ^= x >> 32;
    (x % 2001) as i32 - 1000
}

fn blocks_of(run: &Run, j: usize) -> usize {
    run.jobs[j].elements.div_ceil(run.packet_elements as usize)
}

fn block_data(run: &Run, j: usize, rank: usize, b: usize) -> Vec<i32> {
    let pe = run.packet_elements as usize;
    let job = &run.jobs[j];
    let end = ((b + 1) * pe).min(job.elements);
    (b * pe..end).map(|i| value(job.job, rank, i)).collect()
}

fn oracle(run: &Run, j: usize, b: usize) -> Vec<i32> {
    let mut s = vec![0i32; block_data(run, j, 0, b).len()];
    for r in 0..run.jobs[j].hosts.len() {
        for (a, v) in s.iter_mut().zip(block_data(run, j, r, b)) {
            *a += v;
        }
    }
    s
}

pub(super) fn build(run: &Run, _rng: &mut ChaCha8Rng) -> Vec<Host> {
    let f = run.fabric;
    let mut hosts: Vec<Host> = (0..f.hosts())
        .map(|_| Host {
            job: None,
            rank: 0,
            background: true,
            nic: Port::default(),
            urgent: VecDeque::new(),
            sleeping: false,
            stats: HostStats::default(),
            done_at: None,
            bg_peer: 0,
            bg_left: 0,
            bg_index: 0,
            bg_round: 0,
            blocks: Vec::new(),
            lo: 0,
            next: 0,
            ack_lo: 0,
            remaining: 0,
            leading: BTreeMap::new(),
            retx_armed: false,
            checked_all: false,
            ring_held: Vec::new(),
        })
        .collect();
    for (j, job) in run.jobs.iter().enumerate() {
        let n = match run.scheme {
            Scheme::Ring => ring_chunk(run, j) * 2 * (job.hosts.len() - 1),
            _ => blocks_of(run, j),
        };
        for (rank, &h) in job.hosts.iter().enumerate() {
            let host = &mut hosts[h];
            host.job = Some(j);
            host.rank = rank;
            host.background = false;
            host.blocks = vec![Block::default(); n];
            host.remaining = n;
            if run.scheme == Scheme::Ring {
                host.ring_held = vec![None; n];
            }
        }
    }
    hosts
}

fn me(f: &Fabric, h: usize) -> L4Addr {
    L4Addr {
        mac: host_mac(h),
        ip: host_ip(f, h),
        port: FANIN_UDP_PORT,
    }
}

fn frame(src: L4Addr, dst: L4Addr, payload: &[u8]) -> Vec<u8> {
    Datagram { src, dst, payload }.to_frame(false)
}

/// Bytes before a ring packet's data (step, index; the size of a fanin header).
const RING_HEADER: usize = 22;

/// Rank `rank`'s data of packet `idx` of ring chunk `chunk` (tensor block `chunk·c + idx`;
/// empty past the tensor's end).
fn ring_block(run: &Run, j: usize, rank: usize, chunk: usize, idx: usize) -> Vec<i32> {
    let b = chunk * ring_chunk(run, j) + idx;
    if b < blocks_of(run, j) {
        block_data(run, j, rank, b)
    } else {
        vec![]
    }
}

/// Packets of one ring step's chunk (each carries `packet_elements`).
fn ring_chunk(run: &Run, j: usize) -> usize {
    blocks_of(run, j).div_ceil(run.jobs[j].hosts.len())
}

/// The first transmission of host `h`'s next block, if its window allows one.
pub(super) fn next_block(sim: &mut Sim, h: usize) -> Option<Vec<u8>> {
    let run = &sim.run;
    let host = &sim.hosts[h];
    let j = host.job?;
    let w = run.window as usize;
    let ring = run.scheme == Scheme::Ring;
    loop {
        let host = &mut sim.hosts[h];
        let b = host.next;
        let base = if ring { host.ack_lo } else { host.lo };
        if b >= host.blocks.len() || b >= base + w {
            return None;
        }
        host.next += 1;
        let now = sim.now;
        host.blocks[b].sent_at = now;
        let f = build_packet(sim, h, j, b, false);
        arm_retx(sim, h);
        if let Some(f) = f {
            return Some(f);
        }
    }
}

/// Builds host `h`'s packet for block `b` (`None`: nothing to send, e.g. it leads `b`).
fn build_packet(sim: &Sim, h: usize, j: usize, b: usize, retx: bool) -> Option<Vec<u8>> {
    let run = &sim.run;
    let f = run.fabric;
    let host = &sim.hosts[h];
    let job = &run.jobs[j];
    let n = job.hosts.len();
    let ranks = RankSet::first(n as u32);
    match run.scheme {
        Scheme::Canary { .. } => {
            let leader = leader_rank(ranks, b as u32) as usize;
            if leader == host.rank {
                return None;
            }
            let data = block_data(run, j, host.rank, b);
            let flags = if retx { Flags::BYPASS } else { 0 };
            let r = WideRepr {
                version: version_for(&ranks),
                bitmap: RankSet::one(host.rank as u32),
                ..contribution(job.job, b as u32, 0, 0, flags, data.len()).into()
            };
            let lh = job.hosts[leader];
            Some(frame(me(&f, h), me(&f, lh), &r.to_bytes(&data)))
        }
        Scheme::Static { trees } => {
            let trees = trees.clamp(1, f.spines);
            let leaf = h / f.hosts_per_leaf;
            let child = job
                .hosts
                .iter()
                .filter(|&&o| o / f.hosts_per_leaf == leaf)
                .position(|&o| o == h)
                .expect("a participant is a child of its leaf");
            let data = block_data(run, j, host.rank, b);
            let id = job.job + (b % trees) as u16;
            let r = contribution(id, b as u32, child as u8, 1 << host.rank, 0, data.len());
            let dst = L4Addr {
                mac: super::switch_mac(leaf),
                ip: super::switch_ip(leaf),
                port: FANIN_UDP_PORT,
            };
            Some(frame(me(&f, h), dst, &r.to_bytes(&data)))
        }
        Scheme::Ring => {
            // Packet `b` of the ring: step `b / chunk`, index `b % chunk`. Step 0 can go at
            // once; step s needs the predecessor's packet of step s-1 with the same index.
            let c = ring_chunk(run, j);
            let (step, idx) = (b / c, b % c);
            if step > 0
                && !host
                    .blocks
                    .get(b - c)
                    .is_some_and(|_| ring_got(host, b - c))
            {
                return None;
            }
            let succ = job.hosts[(host.rank + 1) % n];
            // Step 0 sends this host's own data of chunk `rank`; later steps forward what it
            // holds for the previous step's packet of the same index.
            let data = if step == 0 {
                ring_block(run, j, host.rank, host.rank, idx)
            } else {
                host.ring_held[b - c].clone().expect("held: checked above")
            };
            let mut payload = vec![0u8; run.packet_elements as usize * 4 + RING_HEADER];
            payload[0] = 1;
            payload[1..5].copy_from_slice(&(step as u32).to_be_bytes());
            payload[5..9].copy_from_slice(&(idx as u32).to_be_bytes());
            for (k, v) in data.iter().enumerate() {
                payload[RING_HEADER + 4 * k..RING_HEADER + 4 * k + 4]
                    .copy_from_slice(&v.to_be_bytes());
            }
            let mut src = me(&f, h);
            src.port = RING_PORT;
            let mut dst = me(&f, succ);
            dst.port = RING_PORT;
            Some(frame(src, dst, &payload))
        }
    }
}

fn contribution(job: u16, block: u32, child: u8, bitmap: u64, flags: u8, n: usize) -> Repr {
    Repr {
        ptype: PacketType::Contribution,
        flags: Flags(flags),
        exponent: 0,
        job,
        elements: n as u16,
        block,
        child,
        bitmap,
    }
}

fn arm_retx(sim: &mut Sim, h: usize) {
    if !sim.hosts[h].retx_armed {
        sim.hosts[h].retx_armed = true;
        let t = sim.now + sim.run.rto_ns / 2;
        sim.push(t, super::Ev::Retx(h));
    }
}

/// In the ring, `blocks[b].done` of the *received* packets is kept in `tries` bit 7.
fn ring_got(host: &Host, b: usize) -> bool {
    host.blocks[b].tries & 0x80 != 0
}

/// Retransmission scan of host `h`: blocks sent more than the (backed-off) RTO ago.
pub(super) fn retransmit(sim: &mut Sim, h: usize) -> Vec<Vec<u8>> {
    sim.hosts[h].retx_armed = false;
    let Some(j) = sim.hosts[h].job else {
        return vec![];
    };
    let rto = sim.run.rto_ns;
    let now = sim.now;
    let ring = sim.run.scheme == Scheme::Ring;
    let lo = if ring {
        sim.hosts[h].ack_lo
    } else {
        sim.hosts[h].lo
    };
    let next = sim.hosts[h].next;
    let mut out = Vec::new();
    for b in lo..next {
        let blk = sim.hosts[h].blocks[b];
        let acked = match sim.run.scheme {
            Scheme::Ring => blk.tries & 0x40 != 0,
            _ => blk.done,
        };
        let tries = (blk.tries & 0x3f).min(3);
        if acked || now < blk.sent_at + (rto << tries) {
            continue;
        }
        if let Some(f) = build_packet(sim, h, j, b, true) {
            out.push(f);
            sim.hosts[h].stats.retransmits += 1;
        }
        let blk = &mut sim.hosts[h].blocks[b];
        blk.sent_at = now;
        blk.tries = (blk.tries & 0xc0) | ((blk.tries & 0x3f) + 1).min(0x3f);
    }
    let host = &sim.hosts[h];
    let pending = if ring {
        host.ack_lo < host.blocks.len()
    } else {
        host.done_at.is_none() && host.lo < host.blocks.len()
    };
    if pending {
        arm_retx(sim, h);
    }
    out
}

/// Host `h` receives a frame; returns the frames it sends in answer.
pub(super) fn receive(sim: &mut Sim, h: usize, fr: &[u8]) -> Vec<Vec<u8>> {
    let Some(j) = sim.hosts[h].job else {
        return vec![];
    };
    let FrameKind::Ipv4 {
        udp: Some(Ok(d)), ..
    } = classify(fr)
    else {
        return vec![];
    };
    if d.dst.port == RING_PORT {
        return ring_receive(sim, h, j, &d);
    }
    let Ok(r) = WideRepr::parse(d.payload) else {
        return vec![];
    };
    let elements = wide::elements(d.payload);
    let job = &sim.run.jobs[j];
    let trees = match sim.run.scheme {
        Scheme::Static { trees } => trees.clamp(1, sim.run.fabric.spines) as u16,
        _ => 1,
    };
    if r.job < job.job || r.job >= job.job + trees {
        return vec![];
    }
    let b = r.block as usize;
    if b >= sim.hosts[h].blocks.len() {
        return vec![];
    }
    match r.ptype {
        PacketType::Result => {
            accept_result(sim, h, j, b, &elements);
            vec![]
        }
        PacketType::Contribution => lead(sim, h, j, b, d.src, &r, &elements),
        _ => vec![],
    }
}

fn accept_result(sim: &mut Sim, h: usize, j: usize, b: usize, data: &[i32]) {
    if sim.hosts[h].blocks[b].done {
        return;
    }
    if data != oracle(&sim.run, j, b).as_slice() {
        sim.hosts[h].stats.wrong += 1;
    }
    finish_block(sim, h, b);
}

fn finish_block(sim: &mut Sim, h: usize, b: usize) {
    let now = sim.now;
    let host = &mut sim.hosts[h];
    if host.blocks[b].done {
        return;
    }
    host.blocks[b].done = true;
    host.remaining -= 1;
    while host.lo < host.blocks.len() && host.blocks[host.lo].done {
        host.lo += 1;
    }
    if host.remaining == 0 {
        host.done_at = Some(now);
        host.checked_all = true;
    }
    sim.host_pump(h);
}

/// Host `h` as the leader of block `b` takes a contribution.
fn lead(
    sim: &mut Sim,
    h: usize,
    j: usize,
    b: usize,
    src: L4Addr,
    r: &WideRepr,
    data: &[i32],
) -> Vec<Vec<u8>> {
    let Scheme::Canary { .. } = sim.run.scheme else {
        return vec![];
    };
    let n = sim.run.jobs[j].hosts.len();
    let ranks = RankSet::first(n as u32);
    let rank = sim.hosts[h].rank;
    if leader_rank(ranks, b as u32) as usize != rank {
        return vec![];
    }
    let own = block_data(&sim.run, j, rank, b);
    let run_job = sim.run.jobs[j].job;
    let f = sim.run.fabric;
    let lb = sim.hosts[h]
        .leading
        .entry(b as u32)
        .or_insert_with(|| LeaderBlock::new(ranks, b as u32, &own));
    let before = lb.unicast.len();
    let ev = lb.take(src, r, data);
    let result_repr = |bitmap| WideRepr {
        version: version_for(&ranks),
        ptype: PacketType::Result,
        flags: Flags(Flags::MULTICAST),
        exponent: 0,
        job: run_job,
        elements: own.len() as u16,
        block: b as u32,
        child: 0,
        bitmap,
    };
    let mut out = Vec::new();
    match ev {
        LeaderEvent::Completed => {
            let res = lb.result.clone().expect("completed");
            let payload = result_repr(ranks).to_bytes(&res);
            let bcast = L4Addr {
                mac: BROADCAST_MAC,
                ip: BROADCAST,
                port: FANIN_UDP_PORT,
            };
            out.push(frame(me(&f, h), bcast, &payload));
            for u in lb.unicast.clone() {
                out.push(frame(me(&f, h), u, &payload));
            }
            sim.hosts[h].stats.leader_partials += 1;
            let ok = res == oracle(&sim.run, j, b);
            if !ok {
                sim.hosts[h].stats.wrong += 1;
            }
            finish_block(sim, h, b);
        }
        LeaderEvent::Duplicate => {
            if let (Some(res), true) = (
                lb.result.clone(),
                lb.unicast.len() > before || r.flags.has(Flags::BYPASS),
            ) {
                out.push(frame(me(&f, h), src, &result_repr(ranks).to_bytes(&res)));
            }
        }
        LeaderEvent::Merged => sim.hosts[h].stats.leader_partials += 1,
        LeaderEvent::Overlap => sim.hosts[h].stats.overlaps += 1,
    }
    out
}

fn ring_receive(sim: &mut Sim, h: usize, j: usize, d: &Datagram) -> Vec<Vec<u8>> {
    let p = d.payload;
    if p.len() < 9 {
        return vec![];
    }
    let step = u32::from_be_bytes(p[1..5].try_into().expect("4 bytes")) as usize;
    let idx = u32::from_be_bytes(p[5..9].try_into().expect("4 bytes")) as usize;
    let c = ring_chunk(&sim.run, j);
    let b = step * c + idx;
    if b >= sim.hosts[h].blocks.len() {
        return vec![];
    }
    let f = sim.run.fabric;
    if p[0] == 2 {
        // An acknowledgement of our packet b.
        let host = &mut sim.hosts[h];
        host.blocks[b].tries |= 0x40;
        while host.ack_lo < host.blocks.len() && host.blocks[host.ack_lo].tries & 0x40 != 0 {
            host.ack_lo += 1;
        }
        sim.host_pump(h);
        return vec![];
    }
    let mut src = me(&f, h);
    src.port = RING_PORT;
    let ack = {
        let mut a = vec![0u8; 9];
        a.copy_from_slice(&p[..9]);
        a[0] = 2;
        frame(src, d.src, &a)
    };
    let host = &mut sim.hosts[h];
    if host.blocks[b].tries & 0x80 == 0 {
        host.blocks[b].tries |= 0x80;
        // Reduce-scatter (steps 0..n-2): the predecessor's partial sum of chunk
        // (rank - step - 1) plus this host's own data; at step n-2 that is the chunk's full
        // sum. Allgather (steps n-1..): the full sum of chunk (rank - t), t = step - (n-1).
        let run = &sim.run;
        let n = run.jobs[j].hosts.len();
        let rank = sim.hosts[h].rank;
        let (chunk, reduce) = if step + 1 < n {
            ((rank + 2 * n - step - 1) % n, true)
        } else {
            ((rank + 2 * n - (step + 1 - n)) % n, false)
        };
        let mut v = ring_block(run, j, rank, chunk, idx);
        let got: Vec<i32> = (0..v.len())
            .map(|k| {
                let at = RING_HEADER + 4 * k;
                p.get(at..at + 4)
                    .map_or(0, |x| i32::from_be_bytes(x.try_into().expect("4 bytes")))
            })
            .collect();
        if reduce {
            v.iter_mut().zip(&got).for_each(|(a, g)| *a += g);
        } else {
            v = got;
        }
        if step + 2 >= n {
            // A full sum: compare with the exact one.
            let tb = chunk * c + idx;
            let want = if tb < blocks_of(run, j) {
                oracle(run, j, tb)
            } else {
                vec![]
            };
            if v != want {
                sim.hosts[h].stats.wrong += 1;
            }
        }
        let host = &mut sim.hosts[h];
        host.ring_held[b] = Some(v);
        // Receiving (step, idx) finishes this host's work for it; it may now send step+1.
        finish_block(sim, h, b);
        let nb = b + c;
        if nb < sim.hosts[h].blocks.len() && sim.hosts[h].next > nb {
            // The window already passed nb (it was skipped as not yet sendable): send it now.
            if let Some(fr) = build_packet(sim, h, j, nb, false) {
                sim.hosts[h].blocks[nb].sent_at = sim.now;
                return vec![ack, fr];
            }
        }
    }
    vec![ack]
}
