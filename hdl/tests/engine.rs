//! rust-hdl native simulations of the aggregation engine at narrow widths, checked against
//! fanin-proto: the hazard-forwarding accumulator, the header builder, and the whole core
//! (job table, bitmap logic, completion/replay/re-emit, timer scan) in a tiny configuration.

use core::net::Ipv4Addr;
use fanin_hdl::acc::{Acc, OP_MERGE, OP_NONE, OP_READ, OP_START};
use fanin_hdl::core::Core;
use fanin_hdl::hdrgen::HdrGen;
use fanin_hdl::sim::{settle, tick};
use fanin_proto::config::{Child, Endpoint, JobEntry, Mode, Params, Role, SwitchConfig};
use fanin_proto::model::{saturating_add, Counter, Switch};
use fanin_proto::wire::{Datagram, Flags, L4Addr, PacketType, Repr, FANIN_UDP_PORT};
use rand::{Rng, SeedableRng};
use rust_hdl::prelude::*;
use std::collections::VecDeque;

mod common;
use common::tiny;

fn seed() -> u64 {
    std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(11)
}

/// Two big-endian lanes in wire byte order (byte 0 in bits 7:0).
fn row(v: [i32; 2]) -> Bits<64> {
    let mut bytes = Vec::new();
    for x in v {
        bytes.extend_from_slice(&x.to_be_bytes());
    }
    Bits::<64>::from(u64::from_le_bytes(bytes.try_into().unwrap()))
}

fn unrow(b: Bits<64>) -> [i32; 2] {
    let x = b.to_u64().to_le_bytes();
    [
        i32::from_be_bytes(x[0..4].try_into().unwrap()),
        i32::from_be_bytes(x[4..8].try_into().unwrap()),
    ]
}

/// One op per cycle, never stalling, with long runs of merges into the same row
/// back-to-back (the distance-1, -2 and -3 hazards): every stage-3 `rd` must equal the
/// row after all earlier ops, `bd` the op's `b`, and every stage-4 overflow must match int32
/// saturation in the valid lanes only.
#[test]
fn hazard_forwarding_accumulator() {
    let seed = seed();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uut = Acc::<64>::new(4);
    uut.connect_all();
    let mut model = [[0i32; 2]; 4];
    // (op, addr, lim, b) of the ops in stages 1, 2 and 3.
    type Op = Option<(u64, usize, usize, [i32; 2])>;
    let (mut s1, mut s2, mut s3): (Op, Op, Op) = (None, None, None);
    let mut s4_ovf: Option<bool> = None;
    let (mut hazards1, mut hazards2, mut hazards3, mut ovfs) = (0, 0, 0, 0);
    // Writes of the last three cycles' stage-3 ops (newest first).
    let mut writes: [Option<usize>; 3] = [None, None, None];
    for cyc in 0..4000 {
        let op = match rng.gen_range(0..10) {
            0 => OP_NONE,
            1 => OP_START,
            2 | 3 => OP_READ,
            _ => OP_MERGE,
        };
        let addr = if rng.gen_bool(0.7) {
            1
        } else {
            rng.gen_range(0..4)
        };
        let lim = rng.gen_range(0..3usize);
        let big = |r: &mut rand_chacha::ChaCha8Rng| match r.gen_range(0..3) {
            0 => i32::MAX - r.gen_range(0..100),
            1 => i32::MIN + r.gen_range(0..100),
            _ => r.gen_range(-1000..1000),
        };
        let b = [big(&mut rng), big(&mut rng)];
        uut.op.next = op.into();
        uut.addr.next = (addr as u64).into();
        uut.lim.next = (lim as u64).into();
        uut.b.next = row(s1.map(|x| x.3).unwrap_or([0, 0]));
        settle(&mut uut);
        if let Some(o) = s4_ovf {
            assert_eq!(uut.ovf.val(), o, "seed {seed} cycle {cyc}: overflow flag");
        }
        s4_ovf = None;
        let mut wrote = None;
        if let Some((op2, a2, lim2, b2)) = s3 {
            let cur = model[a2];
            assert_eq!(
                unrow(uut.rd.val()),
                cur,
                "seed {seed} cycle {cyc}: row {a2} as read"
            );
            assert_eq!(unrow(uut.bd.val()), b2, "seed {seed} cycle {cyc}: bd");
            if writes[0] == Some(a2) {
                hazards1 += 1;
            } else if writes[1] == Some(a2) {
                hazards2 += 1;
            } else if writes[2] == Some(a2) {
                hazards3 += 1;
            }
            let mut ovf = false;
            match op2 {
                OP_START => {
                    model[a2] = b2;
                    wrote = Some(a2);
                }
                OP_MERGE => {
                    for l in 0..2 {
                        let (s, o) = saturating_add(cur[l], b2[l]);
                        model[a2][l] = s;
                        ovf |= o && l < lim2;
                    }
                    ovfs += ovf as usize;
                    wrote = Some(a2);
                }
                _ => {}
            }
            s4_ovf = Some(ovf);
        }
        writes = [wrote, writes[0], writes[1]];
        s3 = s2;
        s2 = s1;
        s1 = if op == OP_NONE {
            None
        } else {
            Some((op, addr, lim, b))
        };
        tick(&mut uut, |u| &mut u.clock);
    }
    assert!(
        hazards1 > 400 && hazards2 > 100 && hazards3 > 50 && ovfs > 50,
        "hazards {hazards1}/{hazards2}/{hazards3}, overflows {ovfs}"
    );
}

/// The header builder writes exactly `Datagram::to_frame(false)`'s first 64 bytes, a cycle
/// after its fields were registered.
#[test]
fn header_builder_matches_to_frame() {
    let seed = seed();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut uut = HdrGen::default();
    uut.connect_all();
    for i in 0..200 {
        let n = rng.gen_range(0..257u16);
        let repr = Repr {
            ptype: if rng.gen_bool(0.5) {
                PacketType::Contribution
            } else {
                PacketType::Result
            },
            flags: Flags(rng.gen_range(0..32)),
            exponent: rng.gen(),
            job: rng.gen(),
            elements: n,
            block: rng.gen(),
            child: rng.gen(),
            bitmap: rng.gen::<u64>() >> rng.gen_range(0..64),
        };
        let payload = repr.to_bytes(&vec![0; n as usize]);
        let (src, dst) = (
            L4Addr {
                mac: rng.gen(),
                ip: Ipv4Addr::from(rng.gen::<u32>()),
                port: rng.gen(),
            },
            L4Addr {
                mac: rng.gen(),
                ip: Ipv4Addr::from(rng.gen::<u32>()),
                port: rng.gen(),
            },
        );
        let f = Datagram {
            src,
            dst,
            payload: &payload,
        }
        .to_frame(false);
        let mac = |m: [u8; 6]| {
            let mut x = [0u8; 8];
            x[2..].copy_from_slice(&m);
            Bits::<48>::from(u64::from_be_bytes(x))
        };
        uut.dst_mac.next = mac(dst.mac);
        uut.src_mac.next = mac(src.mac);
        uut.src_ip.next = (u32::from(src.ip) as u64).into();
        uut.dst_ip.next = (u32::from(dst.ip) as u64).into();
        uut.src_port.next = (src.port as u64).into();
        uut.dst_port.next = (dst.port as u64).into();
        uut.ptype.next = (repr.ptype as u64).into();
        uut.flags.next = (repr.flags.0 as u64).into();
        uut.exponent.next = (repr.exponent as u8 as u64).into();
        uut.job.next = (repr.job as u64).into();
        uut.elements.next = (n as u64).into();
        uut.block.next = (repr.block as u64).into();
        uut.child.next = (repr.child as u64).into();
        uut.bitmap.next = (!repr.bitmap).into();
        uut.pc_bitmap.next = repr.bitmap.into();
        tick(&mut uut, |u| &mut u.clock);
        // `bitmap` is read at `ld1`, `pc_bitmap` a cycle before.
        uut.bitmap.next = repr.bitmap.into();
        uut.pc_bitmap.next = (!repr.bitmap).into();
        uut.ld1.next = true;
        tick(&mut uut, |u| &mut u.clock);
        // Stage 1 registered the fields; a changed input no longer matters.
        uut.ld1.next = false;
        uut.bitmap.next = (!repr.bitmap).into();
        uut.pc_bitmap.next = 0.into();
        settle(&mut uut);
        let h = uut.hdr.val();
        let got: Vec<u8> = (0..64)
            .map(|b| h.get_bits::<8>(8 * b).index() as u8)
            .collect();
        assert_eq!(&got[..], &f[..64], "seed {seed} header {i}");
        assert_eq!(uut.len.val().index(), f.len(), "seed {seed} length {i}");
    }
}

// ---------------------------------------------------------------------------------------
// The whole core, natively, in a tiny configuration.

const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);
const MEMAC: [u8; 6] = [2, 0, 0, 0, 0, 1];

type Tiny = Core<64, 8, 128>;

struct Bench {
    c: Box<Tiny>,
    src: Vec<VecDeque<Vec<u8>>>,
    beat: Vec<usize>,
    got: Vec<Vec<Vec<u8>>>,
    cur: Vec<Vec<u8>>,
    sent: Vec<VecDeque<Vec<u8>>>,
    sw: Switch,
    want: Vec<Vec<Vec<u8>>>,
    scans: usize,
    /// Every scan visit: (slot, tick).
    scan_log: Vec<(u32, u64)>,
}

impl Bench {
    fn new(jobs: &[(u8, JobEntry)], scan_ticks: u32) -> Self {
        let cfg = tiny();
        let mut c = Box::new(Tiny::new(&cfg));
        c.connect_all();
        let mut sc = SwitchConfig::new("tiny", MEMAC, ME);
        sc.params = Params {
            slots: 4,
            elements: 4,
            max_jobs: 2,
            max_children: 4,
            max_routes: 1,
            ports: 2,
        };
        sc.jobs = jobs.iter().map(|j| j.1.clone()).collect();
        let mut b = Bench {
            c,
            src: vec![VecDeque::new(); 2],
            beat: vec![0; 2],
            got: vec![vec![]; 2],
            cur: vec![vec![]; 2],
            sent: vec![VecDeque::new(); 2],
            sw: Switch::new(&sc).unwrap(),
            want: vec![vec![]; 2],
            scans: 0,
            scan_log: Vec::new(),
        };
        b.c.rst.next = true;
        for _ in 0..3 {
            b.cycle();
        }
        b.c.rst.next = false;
        let mut w = fanin_regs::identity_writes(ME, FANIN_UDP_PORT, MEMAC);
        for (e, j) in jobs {
            w.extend(fanin_regs::job_writes(*e, j).expect("an entry the RTL runs"));
        }
        if scan_ticks != 1 {
            w.push((0x58, scan_ticks));
        }
        for (a, v) in w {
            b.write(a, v);
        }
        b
    }

    fn write(&mut self, a: u32, v: u32) {
        self.c.axil.awaddr.next = (a as u64).into();
        self.c.axil.wdata.next = (v as u64).into();
        self.c.axil.wstrb.next = 0xf.into();
        self.c.axil.awvalid.next = true;
        self.c.axil.wvalid.next = true;
        self.c.axil.bready.next = true;
        // (The core holds writes off while a job commit is applied: wait for `awready`.)
        settle(&mut *self.c);
        let mut waited = 0;
        while !self.c.axil.awready.val() {
            self.cycle();
            settle(&mut *self.c);
            waited += 1;
            assert!(waited < 100, "write to {a:#x} not accepted");
        }
        self.cycle();
        self.c.axil.awvalid.next = false;
        self.c.axil.wvalid.next = false;
        self.cycle();
    }

    fn read(&mut self, a: u32) -> u32 {
        self.c.axil.araddr.next = (a as u64).into();
        self.c.axil.arvalid.next = true;
        self.c.axil.rready.next = false;
        self.cycle();
        self.c.axil.arvalid.next = false;
        settle(&mut *self.c);
        for _ in 0..4 {
            if self.c.axil.rvalid.val() {
                break;
            }
            self.cycle();
            settle(&mut *self.c);
        }
        assert!(self.c.axil.rvalid.val(), "no read response from {a:#x}");
        let v = self.c.axil.rdata.val().index() as u32;
        self.c.axil.rready.next = true;
        self.cycle();
        self.c.axil.rready.next = false;
        v
    }

    fn push(&mut self, port: usize, f: Vec<u8>) {
        self.src[port].push_back(f.clone());
        self.sent[port].push_back(f);
    }

    /// One clock cycle: drive the streams, replay engine decisions into the model.
    fn cycle(&mut self) {
        for p in 0..2 {
            self.c.m_tready[p].next = true;
            match self.src[p].front() {
                Some(f) => {
                    let o = self.beat[p] * 8;
                    let n = (f.len() - o).min(8);
                    let mut w = [0u8; 8];
                    w[..n].copy_from_slice(&f[o..o + n]);
                    self.c.s_tdata[p].next = u64::from_le_bytes(w).into();
                    self.c.s_tkeep[p].next = ((1u64 << n) - 1).into();
                    self.c.s_tlast[p].next = o + n == f.len();
                    self.c.s_tvalid[p].next = true;
                    self.c.s_tuser[p].next = false;
                }
                None => self.c.s_tvalid[p].next = false,
            }
        }
        settle(&mut *self.c);
        if self.c.dbg_valid.val() {
            let arg = self.c.dbg_arg.val().index() as u32;
            let now = self.c.dbg_tick.val().index() as u64;
            let outs = match self.c.dbg_kind.val().index() {
                1 => {
                    self.scans += 1;
                    self.scan_log.push((arg, now));
                    self.sw.scan_slot(now, arg)
                }
                0 => {
                    let f = self.sent[arg as usize].pop_front().expect("frame taken");
                    self.sw.handle(now, arg as u8, &f).outputs
                }
                // A job commit: these tests program their jobs before any traffic, and
                // the model is built with them.
                2 => Vec::new(),
                k => panic!("unexpected dbg event kind {k}"),
            };
            for o in outs {
                self.want[o.port as usize].push(o.frame);
            }
        }
        for p in 0..2 {
            if self.c.s_tvalid[p].val() && self.c.s_tready[p].val() {
                self.beat[p] += 1;
                if self.c.s_tlast[p].val() {
                    self.src[p].pop_front();
                    self.beat[p] = 0;
                }
            }
            if self.c.m_tvalid[p].val() {
                let d = self.c.m_tdata[p].val().to_u64().to_le_bytes();
                let k = self.c.m_tkeep[p].val().index().count_ones() as usize;
                self.cur[p].extend_from_slice(&d[..k]);
                if self.c.m_tlast[p].val() {
                    let f = std::mem::take(&mut self.cur[p]);
                    self.got[p].push(f);
                }
            }
        }
        tick(&mut *self.c, |c| &mut c.clock);
    }

    fn run(&mut self, cycles: usize) {
        for _ in 0..cycles {
            self.cycle();
        }
    }

    fn check(&mut self, what: &str) {
        for p in 0..2 {
            assert_eq!(
                self.got[p].len(),
                self.want[p].len(),
                "{what}: frames on port {p}"
            );
            for (i, (g, w)) in self.got[p].iter().zip(&self.want[p]).enumerate() {
                assert_eq!(g, w, "{what}: port {p} frame {i}");
            }
        }
        for (k, c) in Counter::ALL.iter().enumerate() {
            let lo = self.read(0x100 + 8 * k as u32) as u64;
            assert_eq!(
                lo,
                self.sw.counters().get(*c),
                "{what}: counter {}",
                c.name()
            );
        }
    }
}

fn ep(i: u8, port: u8) -> Endpoint {
    Endpoint {
        mac: [2, 0, 0, 0, 1, i],
        ip: Ipv4Addr::new(10, 0, 1, i),
        udp_port: FANIN_UDP_PORT,
        port,
    }
}

fn contribution(
    from: Endpoint,
    job: u16,
    block: u32,
    child: u8,
    bitmap: u64,
    flags: u8,
    data: &[i32],
) -> Vec<u8> {
    contribution_ck(from, job, block, child, bitmap, flags, data, false)
}

/// A contribution with a real UDP checksum (`ck`).
#[allow(clippy::too_many_arguments)]
fn contribution_ck(
    from: Endpoint,
    job: u16,
    block: u32,
    child: u8,
    bitmap: u64,
    flags: u8,
    data: &[i32],
    ck: bool,
) -> Vec<u8> {
    let r = Repr {
        ptype: PacketType::Contribution,
        flags: Flags(flags),
        exponent: 0,
        job,
        elements: data.len() as u16,
        block,
        child,
        bitmap,
    };
    let payload = r.to_bytes(data);
    Datagram {
        src: L4Addr {
            mac: from.mac,
            ip: from.ip,
            port: from.udp_port,
        },
        dst: L4Addr {
            mac: MEMAC,
            ip: ME,
            port: FANIN_UDP_PORT,
        },
        payload: &payload,
    }
    .to_frame(ck)
}

/// Bitmap logic at the root: aggregate, duplicate (subset), partial overlap, saturation,
/// completion with multicast, replay of a Done block, collision (root drop) — frames and
/// counters identical to the model.
#[test]
fn core_bitmap_logic_matches_model() {
    let root = JobEntry {
        job: 7,
        role: Role::Root,
        mode: Mode::Static,
        degree_limit: 3,
        children: (0..3)
            .map(|i| Child {
                endpoint: ep(i, i % 2),
                ranks: 1 << i,
                below: 0,
            })
            .collect(),
        ranks: 7,
        ranks_hi: vec![],
        slot_base: 0,
        slot_count: 2,
        quota: 0,
        trust: fanin_proto::config::Trust::OFF,
    };
    let mut b = Bench::new(&[(1, root)], 1);
    let d = [i32::MAX - 1, -5, 3, 1000];
    let w = |i: u8| ep(i, i % 2);
    let mut bad_ck = contribution_ck(w(2), 7, 1, 2, 4, 0, &d, true);
    bad_ck[70] ^= 0x40;
    // All on port 0, so the engine sees them in this order.
    let seq: Vec<(usize, Vec<u8>)> = vec![
        (0, contribution(w(0), 7, 0, 0, 1, 0, &d)),
        (0, contribution(w(0), 7, 0, 0, 1, 0, &d)), // duplicate
        (0, contribution(w(1), 7, 0, 0, 3, Flags::BYPASS, &d)), // partial overlap
        (0, contribution(w(1), 7, 0, 1, 2, 0, &d)), // saturates lane 0
        (0, contribution(w(2), 7, 0, 2, 4, 0, &d)), // completes: multicast
        (0, contribution(w(1), 7, 0, 1, 2, 0, &d)), // Done at the root: replay
        (0, contribution(w(0), 7, 1, 0, 1, 0, &d)),
        (0, contribution(w(1), 7, 5, 1, 2, 0, &d)), // block 5 collides with block 1: drop
        (0, contribution(w(0), 7, 9, 0, 8, 0, &d)), // ranks outside the job: malformed
        (0, contribution_ck(w(1), 7, 1, 1, 2, 0, &d, true)), // correct UDP checksum
        (0, bad_ck.clone()),                        // wrong UDP checksum: malformed
    ];
    for (p, f) in seq {
        b.push(p, f);
    }
    b.run(900);
    assert!(b.src.iter().all(|q| q.is_empty()));
    b.check("bitmap logic");
    assert_eq!(b.scans, 0, "no timeout-mode job: no scan");
    assert_eq!(b.sw.counters().get(Counter::Overlaps), 1);
    assert_eq!(b.sw.counters().get(Counter::Completions), 1);
    assert_eq!(b.sw.counters().get(Counter::RootDrops), 1);
    assert_eq!(b.sw.counters().get(Counter::ResultsSent), 4);
    assert_eq!(b.sw.counters().get(Counter::Duplicates), 2);
    assert_eq!(b.sw.counters().get(Counter::Malformed), 2);
}

/// Job 9 in timeout mode (flush after 40 ticks, reclaim 60 later) at an inner switch, two
/// children, slots 2 and 3.
fn timeout_job() -> JobEntry {
    JobEntry {
        job: 9,
        role: Role::Inner {
            parent: ep(100, 0),
            index_at_parent: 3,
        },
        mode: Mode::Timeout {
            flush_after: 40,
            reclaim_after: 60,
        },
        degree_limit: 2,
        children: (0..2)
            .map(|i| Child {
                endpoint: ep(i, 1),
                ranks: 1 << i,
                below: 0,
            })
            .collect(),
        ranks: 3,
        ranks_hi: vec![],
        slot_base: 2,
        slot_count: 2,
        quota: 0,
        trust: fanin_proto::config::Trust::OFF,
    }
}

/// Timer scan at an inner switch in timeout mode: a partial aggregate is flushed upward
/// with PARTIAL after `flush_after` ticks, its copy reclaimed `reclaim_after` ticks later,
/// and a late contribution is then bypassed as a straggler.
#[test]
fn core_timer_scan_matches_model() {
    let inner = timeout_job();
    let mut b = Bench::new(&[(0, inner)], 8);
    b.push(1, contribution(ep(0, 1), 9, 4, 0, 1, 0, &[1, 2, 3, 4]));
    b.run(400);
    b.push(1, contribution(ep(1, 1), 9, 4, 1, 2, 0, &[1, 2, 3, 4]));
    b.run(300);
    assert!(b.scans > 10);
    b.check("timer scan");
    assert_eq!(b.sw.counters().get(Counter::Timeouts), 1);
    assert_eq!(b.sw.counters().get(Counter::Reclaims), 1);
    assert_eq!(b.sw.counters().get(Counter::BypassStraggler), 1);
}

/// The timer scan starts a sweep every `scan_ticks` ticks exactly (the sweep over the tiny
/// core's slots is shorter than that): every visit of a slot of the timeout-mode job is
/// `scan_ticks` ticks after the previous one, with a tick every cycle and every third.
#[test]
fn timer_sweeps_start_every_scan_ticks() {
    let job = timeout_job();
    for tick_div in [1u32, 3] {
        let mut b = Bench::new(&[(0, job.clone())], 50);
        if tick_div != 1 {
            b.write(0x50, tick_div);
        }
        // (The first sweep after the prescaler write may start at another tick phase.)
        b.run(200 * tick_div as usize);
        b.scan_log.clear();
        b.run(600 * tick_div as usize);
        for slot in 0..4u32 {
            let ticks: Vec<u64> = b
                .scan_log
                .iter()
                .filter(|&&(s, _)| s == slot)
                .map(|&(_, t)| t)
                .collect();
            if !(2..4).contains(&slot) {
                assert!(ticks.is_empty(), "slot {slot} is not the job's: {ticks:?}");
                continue;
            }
            assert!(
                ticks.len() >= 10,
                "tick_div {tick_div}: slot {slot} visits {ticks:?}"
            );
            for w in ticks.windows(2) {
                assert_eq!(
                    w[1] - w[0],
                    50,
                    "tick_div {tick_div}: slot {slot} visits {ticks:?}"
                );
            }
        }
    }
}

fn result(from: Endpoint, job: u16, block: u32, child: u8, bitmap: u64, data: &[i32]) -> Vec<u8> {
    let mut f = contribution(from, job, block, child, bitmap, 0, data);
    f[43] = PacketType::Result as u8; // UDP checksum 0, IPv4 header unchanged
    f
}

/// Inner role, static mode: completion sends the aggregate up, a duplicate re-emits it,
/// the degree limit and the bypass flag forward with BYPASS, a result from the parent is
/// multicast down and marks the copy Done, a later contribution is a straggler.
#[test]
fn core_inner_role_matches_model() {
    let inner = JobEntry {
        job: 5,
        role: Role::Inner {
            parent: ep(100, 0),
            index_at_parent: 2,
        },
        mode: Mode::Static,
        degree_limit: 1,
        children: (0..2)
            .map(|i| Child {
                endpoint: ep(i, 1),
                ranks: 1 << i,
                below: 0,
            })
            .collect(),
        ranks: 3,
        ranks_hi: vec![],
        slot_base: 1,
        slot_count: 1,
        quota: 0,
        trust: fanin_proto::config::Trust::OFF,
    };
    let mut b = Bench::new(&[(1, inner)], 1);
    let d = [7, -7, i32::MIN, 1];
    let seq = [
        contribution(ep(0, 1), 5, 0, 0, 1, 0, &d), // completes: aggregate up
        contribution(ep(0, 1), 5, 0, 0, 1, 0, &d), // Emitted + subset: re-emit
        contribution(ep(1, 1), 5, 0, 1, 2, 0, &d), // degree limit: bypass
        contribution(ep(1, 1), 5, 0, 1, 2, Flags::BYPASS, &d), // transit
        result(ep(100, 0), 5, 0, 2, 3, &d),        // multicast down, Done
        contribution(ep(0, 1), 5, 0, 0, 1, 0, &d), // straggler
        contribution(ep(0, 1), 5, 1, 0, 1, 0, &d), // new block over the copy
    ];
    for f in seq {
        b.push(1, f);
    }
    b.run(700);
    assert!(b.src.iter().all(|q| q.is_empty()));
    b.check("inner role");
    assert_eq!(b.scans, 0, "no timeout-mode job: no scan");
    let c = b.sw.counters();
    assert_eq!(c.get(Counter::Reemits), 1);
    assert_eq!(c.get(Counter::BypassDegree), 1);
    assert_eq!(c.get(Counter::BypassTransit), 1);
    assert_eq!(c.get(Counter::BypassStraggler), 1);
    assert_eq!(c.get(Counter::ResultsSent), 2);
    assert_eq!(c.get(Counter::Completions), 2);
}
