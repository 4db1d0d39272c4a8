//! A worker of a dynamic (Canary) job: the leader of its blocks (`b mod N` = its rank) and an
//! ordinary contributor of the others, speaking Ethernet frames to its switchd over a UDP
//! tunnel (switchd's frame-switch mode, docs/host.md "Dynamic jobs").
//!
//! The leader's rules are the model's [`LeaderBlock`]; the contributor sends each block once
//! toward the block's leader, and after its retransmission timeout again with BYPASS
//! straight to the leader, which answers BYPASS senders by unicast (docs/protocol.md,
//! "Dynamic mode").
//!
//! A job of up to [`MAX_RANKS`] ranks: the worker speaks the header version the model gives
//! the job's rank set ([`wide::version_for`]): version 1, bit for bit, while every rank is
//! below 64, version 2 (512-bit contributor sets) once one is not.

use std::collections::BTreeMap;
use std::net::{Ipv4Addr, SocketAddrV4};
use std::time::{Duration, Instant};

use fanin_proto::config::{JobEntry, Params, Route, SwitchConfig};
use fanin_proto::model::dynamic::{
    leader_rank, LeaderBlock, LeaderEvent, BROADCAST, BROADCAST_MAC,
};
use fanin_proto::wire::frame::classify;
use fanin_proto::wire::{
    wide, Datagram, Flags, FrameKind, L4Addr, PacketType, RankSet, WideRepr, MAX_RANKS,
    MAX_WIRE_ELEMENTS, MAX_WIRE_ELEMENTS_V2, VERSION_2,
};

use crate::link::{mac_for, Dgram, Link};

/// One worker of a dynamic job.
#[derive(Debug, Clone)]
pub struct DynConfig {
    /// Job id.
    pub job: u16,
    /// This worker's rank.
    pub rank: usize,
    /// Network (in-frame) address of every rank, in rank order.
    pub peers: Vec<Ipv4Addr>,
    /// The fanin UDP port inside the frames (the switches' `udp_port`).
    pub udp_port: u16,
    /// The switchd this worker's link leads to (real UDP address).
    pub switch: SocketAddrV4,
    /// Elements per packet.
    pub elements: u16,
    /// Blocks in flight.
    pub window: u32,
    /// Block id of the first block (fresh for every allreduce of the job on live switches).
    pub first_block: u32,
    /// Retransmission timeout (doubled per try, up to 8x).
    pub retransmit: Duration,
    /// Give up after this long without a new result.
    pub timeout: Duration,
    /// After the last result, keep answering retransmissions until quiet this long (at
    /// least 16 retransmission timeouts: twice the longest backoff).
    pub linger: Duration,
}

/// What a dynamic worker did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DynReport {
    /// Blocks of the tensor.
    pub blocks: usize,
    /// Blocks this worker led.
    pub led: usize,
    /// BYPASS retransmissions sent.
    pub retransmits: u64,
    /// Contributions taken as the leader (partials from switches and single ranks).
    pub leader_merges: u64,
    /// Contributions the leader counted already.
    pub leader_duplicates: u64,
    /// Partly overlapping contributions the leader refused.
    pub leader_overlaps: u64,
    /// Unicast results sent to BYPASS senders.
    pub unicasts: u64,
    /// Time to the last result.
    pub elapsed: Duration,
}

impl DynReport {
    /// One line for the terminal.
    pub fn summary(&self) -> String {
        format!(
            "dynamic: {} blocks ({} led here) in {:.3} s; leader: {} merged, {} duplicates, {} overlaps refused, {} unicast results; {} retransmissions",
            self.blocks,
            self.led,
            self.elapsed.as_secs_f64(),
            self.leader_merges,
            self.leader_duplicates,
            self.leader_overlaps,
            self.unicasts,
            self.retransmits
        )
    }
}

#[derive(Debug, Clone, Copy, Default)]
struct Blk {
    done: bool,
    sent_at: Option<Instant>,
    tries: u32,
}

struct Worker<'a> {
    cfg: &'a DynConfig,
    data: &'a [i32],
    ranks: RankSet,
    /// The header version of every packet of the job ([`wide::version_for`]).
    version: u8,
    me: L4Addr,
    blocks: Vec<Blk>,
    leading: BTreeMap<usize, LeaderBlock>,
    sums: Vec<i32>,
    report: DynReport,
    out: Vec<Dgram>,
    /// A block whose sum saturated int32 (at the leader or in a switch).
    overflow: Option<u32>,
}

impl<'a> Worker<'a> {
    /// Checks `cfg` and prepares the worker's blocks of `data`.
    fn new(cfg: &'a DynConfig, data: &'a [i32]) -> Result<Self, String> {
        let n = cfg.peers.len();
        if !(2..=MAX_RANKS as usize).contains(&n) || cfg.rank >= n {
            return Err(format!(
                "a dynamic job has 2..={MAX_RANKS} ranks and rank {} must be below them ({n})",
                cfg.rank
            ));
        }
        let ranks = RankSet::first(n as u32);
        let version = wide::version_for(&ranks);
        let most = max_elements(n);
        if cfg.elements == 0 || cfg.elements > most || cfg.window == 0 {
            return Err(format!(
                "packet elements must be 1..={most} (header version {version}) and the window positive"
            ));
        }
        let ip = cfg.peers[cfg.rank];
        let nb = data.len().div_ceil(cfg.elements as usize);
        let mut w = Worker {
            cfg,
            data,
            ranks,
            version,
            me: L4Addr {
                mac: mac_for(ip),
                ip,
                port: cfg.udp_port,
            },
            blocks: vec![Blk::default(); nb],
            leading: BTreeMap::new(),
            sums: vec![0; data.len()],
            report: DynReport {
                blocks: nb,
                ..DynReport::default()
            },
            out: Vec::new(),
            overflow: None,
        };
        w.report.led = (0..nb).filter(|&i| w.leader(i) == cfg.rank).count();
        Ok(w)
    }

    fn range(&self, i: usize) -> std::ops::Range<usize> {
        let pe = self.cfg.elements as usize;
        i * pe..((i + 1) * pe).min(self.data.len())
    }

    fn block_id(&self, i: usize) -> u32 {
        self.cfg.first_block.wrapping_add(i as u32)
    }

    fn leader(&self, i: usize) -> usize {
        leader_rank(self.ranks, self.block_id(i)) as usize
    }

    fn addr(&self, rank: usize) -> L4Addr {
        let ip = self.cfg.peers[rank];
        L4Addr {
            mac: mac_for(ip),
            ip,
            port: self.cfg.udp_port,
        }
    }

    fn send(&mut self, dst: L4Addr, r: &WideRepr, data: &[i32]) {
        let payload = r.to_bytes(data);
        let frame = Datagram {
            src: self.me,
            dst,
            payload: &payload,
        }
        .to_frame(false);
        self.out.push(Dgram::new(self.cfg.switch, frame));
    }

    fn repr(&self, ptype: PacketType, flags: u8, i: usize, bitmap: RankSet) -> WideRepr {
        WideRepr {
            version: self.version,
            ptype,
            flags: Flags(flags),
            exponent: 0,
            job: self.cfg.job,
            elements: self.range(i).len() as u16,
            block: self.block_id(i),
            child: 0,
            bitmap,
        }
    }

    /// First transmission (or, with `retx`, a BYPASS retransmission) of block `i`.
    fn contribute(&mut self, i: usize, retx: bool) {
        let flags = if retx { Flags::BYPASS } else { 0 };
        let r = self.repr(
            PacketType::Contribution,
            flags,
            i,
            RankSet::one(self.cfg.rank as u32),
        );
        let dst = self.addr(self.leader(i));
        let data = &self.data[self.range(i)];
        self.send(dst, &r, data);
    }

    fn finish(&mut self, i: usize, sum: &[i32]) {
        let rg = self.range(i);
        self.sums[rg].copy_from_slice(sum);
        self.blocks[i].done = true;
    }

    /// Takes one received frame.
    fn receive(&mut self, frame: &[u8]) -> Result<bool, String> {
        let FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } = classify(frame)
        else {
            return Ok(false);
        };
        if d.dst.port != self.cfg.udp_port {
            return Ok(false);
        }
        let Ok(r) = WideRepr::parse(d.payload) else {
            return Ok(false);
        };
        // A job has one header version (docs/protocol.md, "Header version 2").
        if r.job != self.cfg.job || r.version != self.version {
            return Ok(false);
        }
        let i = r.block.wrapping_sub(self.cfg.first_block) as usize;
        if i >= self.blocks.len() || r.elements as usize != self.range(i).len() {
            return Ok(false);
        }
        let mine = self.leader(i) == self.cfg.rank;
        match r.ptype {
            PacketType::Result if !mine && !self.blocks[i].done => {
                if r.flags.has(Flags::OVERFLOW) {
                    return Err(format!(
                        "block {} overflowed int32 in the switches: choose a smaller --scale",
                        r.block
                    ));
                }
                self.finish(i, &wide::elements(d.payload));
                Ok(true)
            }
            PacketType::Contribution if mine => {
                Ok(self.lead(i, d.src, &r, &wide::elements(d.payload)))
            }
            _ => Ok(false),
        }
    }

    /// The leader of block `i` takes a contribution; true if the block completed.
    fn lead(&mut self, i: usize, src: L4Addr, r: &WideRepr, data: &[i32]) -> bool {
        let own = &self.data[self.range(i)];
        let (ranks, id) = (self.ranks, self.block_id(i));
        let lb = self
            .leading
            .entry(i)
            .or_insert_with(|| LeaderBlock::new(ranks, id, own));
        let before = lb.unicast.len();
        let held = lb.sum.clone();
        let ev = lb.take(src, *r, data);
        // LeaderBlock saturates like the switches; a saturated lane is no sum, so it is
        // detected here (and flagged by the switches on partials) and fails the run.
        if matches!(ev, LeaderEvent::Merged | LeaderEvent::Completed)
            && (r.flags.has(Flags::OVERFLOW)
                || held
                    .iter()
                    .zip(data)
                    .any(|(&a, &v)| (a as i64 + v as i64) != (a.saturating_add(v)) as i64))
        {
            self.overflow.get_or_insert(r.block);
        }
        let bypass = r.flags.has(Flags::BYPASS);
        let result = lb.result.clone();
        let unicast = lb.unicast.clone();
        let flags = if self.overflow.is_some() {
            Flags::MULTICAST | Flags::OVERFLOW
        } else {
            Flags::MULTICAST
        };
        let res_repr = self.repr(PacketType::Result, flags, i, ranks);
        match ev {
            LeaderEvent::Completed => {
                self.report.leader_merges += 1;
                let res = result.expect("completed");
                let bcast = L4Addr {
                    mac: BROADCAST_MAC,
                    ip: BROADCAST,
                    port: self.cfg.udp_port,
                };
                self.send(bcast, &res_repr, &res);
                for u in unicast {
                    self.send(u, &res_repr, &res);
                    self.report.unicasts += 1;
                }
                self.finish(i, &res);
                true
            }
            LeaderEvent::Duplicate => {
                self.report.leader_duplicates += 1;
                if let (Some(res), true) = (result, bypass || unicast.len() > before) {
                    self.send(src, &res_repr, &res);
                    self.report.unicasts += 1;
                }
                false
            }
            LeaderEvent::Merged => {
                self.report.leader_merges += 1;
                false
            }
            LeaderEvent::Overlap => {
                self.report.leader_overlaps += 1;
                false
            }
        }
    }
}

/// Largest packet (elements) of a dynamic job of `ranks` ranks: [`MAX_WIRE_ELEMENTS`] in
/// header version 1, [`MAX_WIRE_ELEMENTS_V2`] in version 2 (a job of more than 64 ranks).
pub fn max_elements(ranks: usize) -> u16 {
    let set = RankSet::first(ranks.min(MAX_RANKS as usize) as u32);
    if wide::version_for(&set) == VERSION_2 {
        MAX_WIRE_ELEMENTS_V2
    } else {
        MAX_WIRE_ELEMENTS
    }
}

/// Runs one allreduce of `data` (already quantized) as worker `cfg.rank`; returns the sums.
pub fn run<L: Link + ?Sized>(
    cfg: &DynConfig,
    link: &mut L,
    data: &[i32],
) -> Result<(Vec<i32>, DynReport), String> {
    let mut w = Worker::new(cfg, data)?;
    let nb = w.blocks.len();
    let start = Instant::now();
    let mut last_progress = start;
    let mut last_rx = start;
    let (mut lo, mut next) = (0usize, 0usize);
    let mut inbox = Vec::new();
    let mut finished: Option<Instant> = None;
    loop {
        let now = Instant::now();
        while next < nb && next < lo + cfg.window as usize {
            if w.leader(next) != cfg.rank {
                w.contribute(next, false);
            }
            w.blocks[next].sent_at = Some(now);
            next += 1;
        }
        // Sleep in recv until the next retransmission is due (a datagram ends it early), at
        // most MAX_WAIT: hundreds of workers on one machine must not spin.
        let mut wait = MAX_WAIT;
        for i in lo..next {
            let b = w.blocks[i];
            if b.done || w.leader(i) == cfg.rank {
                continue;
            }
            let rto = cfg.retransmit * (1u32 << b.tries.min(3));
            if b.sent_at.is_some_and(|t| now >= t + rto) {
                w.contribute(i, true);
                w.report.retransmits += 1;
                w.blocks[i].sent_at = Some(now);
                w.blocks[i].tries += 1;
                wait = wait.min(cfg.retransmit * (1u32 << w.blocks[i].tries.min(3)));
            } else if let Some(t) = b.sent_at {
                wait = wait.min((t + rto).saturating_duration_since(now));
            }
        }
        if !w.out.is_empty() {
            link.send(&mut w.out)
                .map_err(|e| format!("cannot send to switch {}: {e}", cfg.switch))?;
        }
        inbox.clear();
        link.recv(&mut inbox, wait)
            .map_err(|e| format!("receive failed: {e}"))?;
        let now = Instant::now();
        for d in inbox.drain(..) {
            if d.peer != cfg.switch {
                continue;
            }
            last_rx = now;
            if w.receive(d.payload())? {
                last_progress = now;
            }
        }
        if let Some(b) = w.overflow {
            if !w.out.is_empty() {
                let _ = link.send(&mut w.out);
            }
            return Err(format!(
                "block {b} overflowed int32 at this leader: choose a smaller --scale"
            ));
        }
        while lo < nb && w.blocks[lo].done {
            lo += 1;
        }
        if lo == nb {
            let t = *finished.get_or_insert_with(|| {
                w.report.elapsed = start.elapsed();
                now
            });
            // A leader keeps answering BYPASS retransmissions of ranks whose result was lost.
            // At least twice the longest backed-off retransmission timeout of the others.
            let linger = cfg.linger.max(cfg.retransmit * 16);
            if w.report.led == 0 || now.duration_since(t.max(last_rx)) >= linger {
                if !w.out.is_empty() {
                    link.send(&mut w.out)
                        .map_err(|e| format!("send failed: {e}"))?;
                }
                let _ = link.flush();
                return Ok((w.sums, w.report));
            }
        } else if now.duration_since(last_progress) > cfg.timeout {
            let missing: Vec<u32> = (lo..nb)
                .filter(|&i| !w.blocks[i].done)
                .take(8)
                .map(|i| w.block_id(i))
                .collect();
            return Err(format!(
                "no new result for {:.1} s: blocks {missing:?} (of {nb}, from {}) incomplete; is switch {} running the job?",
                cfg.timeout.as_secs_f64(),
                cfg.first_block,
                cfg.switch
            ));
        }
    }
}

/// Longest sleep of a worker waiting for datagrams (bounds the reaction to its timeouts).
const MAX_WAIT: Duration = Duration::from_millis(10);

/// One switch of a [`star_chain`]: its configuration, its links and where it listens.
#[derive(Debug, Clone)]
pub struct ChainSwitch {
    /// The configuration (`--config`).
    pub config: SwitchConfig,
    /// Model port → UDP peer (`--link PORT=ADDR`).
    pub links: Vec<(u8, SocketAddrV4)>,
    /// Its UDP address (`--listen`).
    pub listen: SocketAddrV4,
}

/// One worker of a [`star_chain`].
#[derive(Debug, Clone, Copy)]
pub struct ChainWorker {
    /// In-frame address (`--peer`).
    pub ip: Ipv4Addr,
    /// Its UDP address (`--bind`).
    pub bind: SocketAddrV4,
    /// Its leaf switch's UDP address (`--switch`).
    pub switch: SocketAddrV4,
}

/// Hosts per /24 in [`chain_worker_ip`] (last octets 1..=250).
const PER_NET: usize = 250;

/// In-frame address of worker `w` of a [`star_chain`]: `10.0.(1 + w / 250).(1 + w % 250)`
/// (`10.0.1.(w+1)` below 250 workers; distinct for every `w` below 250 · 254).
pub fn chain_worker_ip(w: usize) -> Ipv4Addr {
    assert!(w < PER_NET * 254, "worker {w} has no chain address");
    Ipv4Addr::new(10, 0, (1 + w / PER_NET) as u8, (1 + w % PER_NET) as u8)
}

/// In-frame address of switch `s` of a [`star_chain`]: `10.0.0.(s+1)` (`s` below 250).
pub fn chain_switch_ip(s: usize) -> Ipv4Addr {
    assert!(
        s < PER_NET,
        "switch {s} has no chain address (at most {PER_NET} switches)"
    );
    Ipv4Addr::new(10, 0, 0, (s + 1) as u8)
}

/// A dynamic job on `leaves` leaf switches of `per_leaf` workers each, every leaf linked to
/// one middle switch (the last of `switches`). In-frame addresses: switch `s` is
/// [`chain_switch_ip`], worker `w` is [`chain_worker_ip`]; `udp(i)` gives the UDP address of
/// switch `i` (`0..=leaves`, the middle last) and of worker `w` (`leaves + 1 + w`). Used by
/// the CLI tests and the demo. A dynamic switch records ingress ports in a 64-bit set, so a
/// loadable chain has at most 62 workers per leaf and 63 leaves (up to [`MAX_RANKS`]
/// workers in all); the switches' configurations refuse more with a clear error.
pub fn star_chain(
    leaves: usize,
    per_leaf: usize,
    job: JobEntry,
    params: Params,
    udp: impl Fn(usize) -> SocketAddrV4,
) -> (Vec<ChainSwitch>, Vec<ChainWorker>) {
    let n = leaves * per_leaf;
    assert!(
        per_leaf < 254,
        "{per_leaf} workers per leaf leave no port for the uplink"
    );
    let (worker_ip, switch_ip) = (chain_worker_ip, chain_switch_ip);
    let middle = leaves;
    // Every worker and every other switch has a route.
    let routes = (n + leaves).min(u16::MAX as usize) as u16;
    let mut switches = Vec::new();
    for l in 0..leaves {
        let up = per_leaf + 1;
        let mut c = SwitchConfig::new(&format!("leaf{l}"), mac_for(switch_ip(l)), switch_ip(l));
        c.params = Params {
            ports: up as u8 + 1,
            max_routes: params.max_routes.max(routes),
            ..params
        };
        let mut links = vec![(up as u8, udp(middle))];
        for w in 0..n {
            let port = if w / per_leaf == l {
                links.push((1 + (w % per_leaf) as u8, udp(leaves + 1 + w)));
                1 + w % per_leaf
            } else {
                up
            };
            c.routes.push(Route {
                ip: worker_ip(w),
                port: port as u8,
            });
        }
        for s in (0..=leaves).filter(|&s| s != l) {
            c.routes.push(Route {
                ip: switch_ip(s),
                port: up as u8,
            });
        }
        c.jobs.push(job.clone());
        switches.push(ChainSwitch {
            config: c,
            links,
            listen: udp(l),
        });
    }
    let mut c = SwitchConfig::new("middle", mac_for(switch_ip(middle)), switch_ip(middle));
    c.params = Params {
        ports: leaves as u8 + 1,
        max_routes: params.max_routes.max(routes),
        ..params
    };
    for w in 0..n {
        c.routes.push(Route {
            ip: worker_ip(w),
            port: (w / per_leaf + 1) as u8,
        });
    }
    for l in 0..leaves {
        c.routes.push(Route {
            ip: switch_ip(l),
            port: (l + 1) as u8,
        });
    }
    c.jobs.push(job);
    switches.push(ChainSwitch {
        config: c,
        links: (0..leaves).map(|l| ((l + 1) as u8, udp(l))).collect(),
        listen: udp(middle),
    });
    let workers = (0..n)
        .map(|w| ChainWorker {
            ip: worker_ip(w),
            bind: udp(leaves + 1 + w),
            switch: udp(w / per_leaf),
        })
        .collect();
    (switches, workers)
}

#[cfg(test)]
mod tests {
    use super::*;
    use fanin_proto::wire::{Repr, HEADER_LEN, HEADER_LEN_V2, VERSION};

    fn cfg(ranks: usize, rank: usize) -> DynConfig {
        DynConfig {
            job: 3,
            rank,
            peers: (0..ranks).map(chain_worker_ip).collect(),
            udp_port: fanin_proto::wire::FANIN_UDP_PORT,
            switch: SocketAddrV4::new(Ipv4Addr::LOCALHOST, 9),
            elements: 2,
            window: 4,
            first_block: 10,
            retransmit: Duration::from_millis(10),
            timeout: Duration::from_secs(1),
            linger: Duration::from_millis(10),
        }
    }

    /// The datagram payload of the frame the worker queued last.
    fn last_payload(w: &Worker) -> Vec<u8> {
        let FrameKind::Ipv4 {
            udp: Some(Ok(d)), ..
        } = classify(w.out.last().unwrap().payload())
        else {
            panic!("not a UDP frame");
        };
        d.payload.to_vec()
    }

    /// Up to 64 ranks the worker's packets are the version-1 bytes it always sent (rank
    /// 63's bit is the bitmap's top one); from 65 ranks on they are version 2, with the
    /// same fields, and the leader's result names every rank.
    #[test]
    fn version_1_up_to_64_ranks_bit_for_bit_version_2_above() {
        let data = [5, -6, 7];
        for (n, rank) in [(2, 1), (64, 63), (64, 0)] {
            let c = cfg(n, rank);
            let mut w = Worker::new(&c, &data).unwrap();
            w.contribute(1, true);
            let want = Repr {
                ptype: PacketType::Contribution,
                flags: Flags(Flags::BYPASS),
                exponent: 0,
                job: 3,
                elements: 1,
                block: 11,
                child: 0,
                bitmap: 1u64 << rank,
            }
            .to_bytes(&[7]);
            assert_eq!(last_payload(&w), want, "{n} ranks, rank {rank}");
            assert_eq!(want.len(), HEADER_LEN + 4);
        }
        for (n, rank) in [(65, 64), (512, 511), (300, 3)] {
            let c = cfg(n, rank);
            let mut w = Worker::new(&c, &data).unwrap();
            w.contribute(0, false);
            let got = last_payload(&w);
            assert_eq!(got.len(), HEADER_LEN_V2 + 8);
            let r = WideRepr::parse(&got).unwrap();
            assert_eq!(
                (r.version, r.block, r.elements, r.bitmap),
                (VERSION_2, 10, 2, RankSet::one(rank as u32))
            );
            assert_eq!(wide::elements(&got), [5, -6]);
            assert_eq!(w.version, VERSION_2);
            // The 64-rank job stays in version 1.
            assert_eq!(Worker::new(&cfg(64, 0), &data).unwrap().version, VERSION);
        }
    }

    /// A leader of a 300-rank job completes its block once the other 299 ranks arrive (two
    /// partial sets and single ranks, a duplicate among them) and broadcasts the result in
    /// version 2; a version-1 packet of the job is ignored.
    #[test]
    fn a_300_rank_leader_completes_in_version_2() {
        let c = cfg(300, 10);
        let data = vec![1i32; 2 * 300];
        let mut w = Worker::new(&c, &data).unwrap();
        // Block id 10 is led by rank 10 (its index 0 in this tensor).
        assert_eq!(w.leader(0), 10);
        let me = w.me;
        let from = |rank: usize, set: RankSet, version: u8, sum: i32| {
            let payload = WideRepr {
                version,
                ptype: PacketType::Contribution,
                flags: Flags(0),
                exponent: 0,
                job: 3,
                elements: 2,
                block: 10,
                child: 0,
                bitmap: set,
            }
            .to_bytes(&[sum, -sum]);
            let src = L4Addr {
                mac: mac_for(chain_worker_ip(rank)),
                ip: chain_worker_ip(rank),
                port: c.udp_port,
            };
            Datagram {
                src,
                dst: me,
                payload: &payload,
            }
            .to_frame(false)
        };
        let mut low = RankSet::first(200);
        low.remove(10);
        assert!(!w.receive(&from(0, low, VERSION_2, 199)).unwrap());
        // A version-1 packet naming ranks the leader still waits for: not this job's.
        let v1 = from(200, RankSet::one(200 % 64), VERSION, 1);
        assert!(!w.receive(&v1).unwrap());
        assert_eq!(w.report.leader_merges, 1);
        assert!(!w.receive(&from(3, RankSet::one(3), VERSION_2, 1)).unwrap());
        assert_eq!(w.report.leader_duplicates, 1);
        let high = RankSet::first(299).minus(&RankSet::first(200));
        assert!(!w.receive(&from(250, high, VERSION_2, 99)).unwrap());
        assert!(w
            .receive(&from(299, RankSet::one(299), VERSION_2, 1))
            .unwrap());
        assert_eq!(&w.sums[..2], &[300, 300 - 2 * 299]);
        let r = WideRepr::parse(&last_payload(&w)).unwrap();
        assert_eq!(
            (r.version, r.ptype, r.bitmap),
            (VERSION_2, PacketType::Result, RankSet::first(300))
        );
    }

    /// Bad configurations: one peer, 513 peers, a rank outside them, a packet too long for
    /// version 2.
    #[test]
    fn bad_configurations_are_refused() {
        let e = |c: DynConfig| Worker::new(&c, &[1]).err().unwrap();
        assert!(e(cfg(1, 0)).contains("2..=512 ranks"));
        assert!(e(cfg(513, 0)).contains("2..=512 ranks"));
        assert!(e(cfg(100, 100)).contains("rank 100 must be below them (100)"));
        let long = DynConfig {
            elements: 2222,
            ..cfg(65, 0)
        };
        assert!(e(long).contains("1..=2221 (header version 2)"));
        let ok = DynConfig {
            elements: 2237,
            ..cfg(64, 0)
        };
        assert!(Worker::new(&ok, &[1]).is_ok());
    }

    /// Star-chain addresses stay distinct up to 512 workers and keep 10.0.1.(w+1) below 250.
    #[test]
    fn chain_addresses_are_distinct_up_to_512_workers() {
        let mut ips: Vec<Ipv4Addr> = (0..512).map(chain_worker_ip).collect();
        assert_eq!(ips[0], Ipv4Addr::new(10, 0, 1, 1));
        assert_eq!(ips[249], Ipv4Addr::new(10, 0, 1, 250));
        assert_eq!(ips[511], Ipv4Addr::new(10, 0, 3, 12));
        ips.extend((0..64).map(chain_switch_ip));
        let n = ips.len();
        ips.sort_unstable();
        ips.dedup();
        assert_eq!(ips.len(), n);
    }
}
