//! The whole board top in simulation (fanin_sim::board): the generated wrapper with
//! behavioural models of its vendor IP, the core clock, every MAC clock and (Alveo) the PCIe
//! clock each at its own frequency. A job is programmed through the board's control path
//! (Alveo: the PCIe BAR model, across the AXI-Lite clock converter and the control arbiter;
//! SUME: the JTAG-to-AXI model) with `fanin hw program`'s writes; worker frames enter at the
//! MAC models, cross the RX FIFOs into the core and the results leave through the TX FIFOs
//! at the MAC models. Every frame out of every MAC must equal the reference model's, and
//! every result carry the exact sum computed here; the core's counters (read through the same
//! control path) the model's; the board window's MAC statistics the frames each MAC saw; no
//! RX FIFO drop and no TX underrun.
//!
//! `au250` runs in the default tier; `sume` (built with `FANIN_SIM_BOARDS=au250,sume`, which
//! `cargo xtask test --slow` sets) in the slow tier. `FANIN_SEED` sets the seed.

use fanin_gen::board::{window, Board};
use fanin_proto::config::{Mode, SwitchConfig, Trust};
use fanin_proto::model::Counter;
use fanin_proto::plan::{self, Addressing, JobSpec, Plan};
use fanin_proto::wire::frame::classify;
use fanin_proto::wire::{Datagram, FrameKind, L4Addr, Packet, PacketType};
use fanin_sim::board::BoardTb;
use fanin_sim::scoreboard::{program, Bench, Scoreboard};
use fanin_sim::tb::Pacing;
use fanin_sim::SimError;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// Seed: `FANIN_SEED` or a fixed default.
fn seed() -> u64 {
    std::env::var("FANIN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(0xb0a7d)
}

const WORKERS: usize = 4;
const BLOCKS: u32 = 6;

/// A star of [`WORKERS`] workers around the board, worker `r` behind port `r % ports`,
/// blocks of `elements` elements.
fn star(ports: u8, elements: u16) -> (SwitchConfig, Plan) {
    let spec = JobSpec {
        job: 7,
        slot_count: 4,
        elements,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: Trust::OFF,
    };
    let p = plan::build(&plan::star(WORKERS), spec).unwrap();
    let mut cfg = p.switches[0].clone();
    let port_of = |ip| {
        let r = p.workers.iter().position(|w| w.me.ip == ip).unwrap();
        (r % ports as usize) as u8
    };
    for r in &mut cfg.routes {
        r.port = port_of(r.ip);
    }
    for j in &mut cfg.jobs {
        for c in &mut j.children {
            c.endpoint.port = port_of(c.endpoint.ip);
        }
    }
    (cfg, p)
}

/// Runs the scenario on `board` under `pacing`; returns the model's counters' check.
fn scenario(
    board: Board,
    pacing: Pacing,
    seed: u64,
    core_mhz: Option<f64>,
) -> Result<(), SimError> {
    let mut tb = BoardTb::with_core_clock(board, pacing, seed, core_mhz)?;
    let ports = tb.ports();
    let kind = board.kind();

    // The board window through the control path: information word, status, links.
    let info = tb.read(window::BASE + window::INFO)?;
    check(
        info == kind.info(ports as u32),
        format!("information word 0x{info:08x}"),
    )?;
    let status = tb.read(window::BASE + window::STATUS)?;
    // SUME: refclk_ready, qpll_lock, si5324_stat_valid (the bus model reads LOL_INT as 0).
    let want: u32 = if kind.is_cmac() { 0b1_0001 } else { 0b100_0101 };
    check(
        status == want,
        format!(
            "status 0x{status:x} ({:?}), expected 0x{want:x}",
            window::set_names(&kind.status_bits(), status)
        ),
    )?;
    for p in 0..ports as u32 {
        let link = tb.read(window::BASE + window::port_reg(p, window::PORT_LINK))?;
        check(
            link & 1 == 1,
            format!("port {p} link word 0x{link:x}: not up"),
        )?;
    }

    // The job, programmed as `fanin hw program` does, through the same path.
    let core = tb.core.clone();
    // Blocks as large as the configuration's slots hold.
    let elements = core.params().elements;
    let (mut cfg, plan) = star(core.ports, elements);
    cfg.params = core.params();
    let mut sb = Scoreboard::new(&core, &cfg)?;
    program(&mut tb, &sb.regs, &cfg)?;

    // Worker frames at the MACs, in random order within each block; the sums kept here.
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let port_of = |r: usize| r % ports;
    let mut sums = vec![vec![0i64; elements as usize]; BLOCKS as usize];
    let mut bad = vec![0u64; ports];
    for b in 0..BLOCKS {
        let mut order: Vec<usize> = (0..WORKERS).collect();
        for i in (1..order.len()).rev() {
            order.swap(i, rng.gen_range(0..=i));
        }
        for r in order {
            let data: Vec<i32> = (0..elements)
                .map(|_| rng.gen_range(-1 << 20..1 << 20))
                .collect();
            for (s, d) in sums[b as usize].iter_mut().zip(&data) {
                *s += *d as i64;
            }
            let f = plan.workers[r].contribution_frame(b, 0, &data);
            tb.src[port_of(r)].push(f.clone(), false);
            if b == 2 && r == 1 {
                // The same contribution again, with a bad FCS: the MAC marks it, the RX FIFO
                // passes it marked, the core drops and counts it (port rx_bad).
                tb.src[port_of(r)].push(f, true);
                bad[port_of(r)] += 1;
            }
        }
    }
    // A malformed fanin frame (protocol version 2) and a plain UDP frame a worker is the
    // destination of (forwarded by the forwarding table, byte for byte).
    let stranger = L4Addr {
        mac: [2, 0, 0, 0, 0, 9],
        ip: [10, 200, 0, 9].into(),
        port: 4000,
    };
    let me = L4Addr {
        mac: cfg.mac,
        ip: cfg.ip,
        port: fanin_proto::wire::FANIN_UDP_PORT,
    };
    let mut junk = plan.workers[0].contribution_frame(9, 0, &[1; 4]);
    junk[fanin_proto::wire::L2L4_LEN] = 2;
    tb.src[0].push(junk, false);
    let w1 = &plan.workers[1 % WORKERS].me;
    // A long one (up to 1,400 payload bytes: 23 beats at 512 bits), so that a TX FIFO that
    // let a frame go before its end would underrun a MAC faster than the core.
    let len = (core.max_frame as usize - 64).min(1400) as u32;
    let payload: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
    let fwd = Datagram {
        src: stranger,
        dst: L4Addr {
            mac: me.mac,
            ip: w1.ip,
            port: 6000,
        },
        payload: &payload,
    }
    .to_frame(true);
    tb.src[ports - 1].push(fwd.clone(), false);

    // Quiet long enough for the longest frame to cross both FIFOs and the core with no beat
    // moving at a MAC (packet mode holds it until complete): 1,442 bytes are 181 beats at 64 bits.
    tb.drain(3000, 400_000)?;
    sb.replay(&tb)?;
    sb.check_frames(&tb)?;
    sb.check_counters(&mut tb)?;

    // Independent of the model: every result carries the exact sums, each worker's port
    // got each block's result once per worker behind it, and the forwarded frame arrived.
    let mut results = vec![0usize; ports];
    for (p, sink) in tb.sink.iter().enumerate() {
        for f in &sink.frames {
            let FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } = classify(&f.data)
            else {
                return Err(SimError::Check(format!("port {p}: a non-UDP frame")));
            };
            if f.data == fwd {
                continue;
            }
            let pk = Packet::new_checked(d.payload)
                .map_err(|e| SimError::Check(format!("port {p}: {e}")))?;
            check(
                pk.packet_type() == PacketType::Result as u8,
                format!("port {p}: packet type {}", pk.packet_type()),
            )?;
            let b = pk.block() as usize;
            let want: Vec<i32> = sums
                .get(b)
                .ok_or_else(|| SimError::Check(format!("port {p}: result for block {b}")))?
                .iter()
                .map(|&s| s as i32)
                .collect();
            check(
                pk.elements() == want,
                format!(
                    "port {p}: block {b} sums {:?}, expected {want:?}",
                    pk.elements()
                ),
            )?;
            results[p] += 1;
        }
    }
    for (p, &n) in results.iter().enumerate() {
        let behind = (0..WORKERS).filter(|&r| port_of(r) == p).count();
        check(
            n == behind * BLOCKS as usize,
            format!(
                "port {p}: {n} results, expected {}",
                behind * BLOCKS as usize
            ),
        )?;
    }
    check(
        tb.sink[1 % ports].frames.iter().any(|f| f.data == fwd),
        "the forwarded frame did not arrive".into(),
    )?;
    let c = sb.model.counters();
    check(
        c.get(Counter::Completions) == BLOCKS as u64
            && c.get(Counter::ResultsSent) == (BLOCKS as usize * WORKERS) as u64
            && c.get(Counter::Malformed) >= 1,
        format!(
            "model counters: {} completions, {} results sent, {} malformed",
            c.get(Counter::Completions),
            c.get(Counter::ResultsSent),
            c.get(Counter::Malformed)
        ),
    )?;

    // The board window: no RX FIFO drop; the MAC statistics count what each MAC saw.
    for (p, &nbad) in bad.iter().enumerate() {
        let drops = tb.read(window::BASE + window::RX_DROPS + 4 * p as u32)?;
        check(drops == 0, format!("port {p}: {drops} RX FIFO drops"))?;
        let stat = |tb: &mut BoardTb, k| tb.read64(window::BASE + window::counter_reg(p as u32, k));
        let (rx, tx, fcs) = (stat(&mut tb, 0)?, stat(&mut tb, 1)?, stat(&mut tb, 2)?);
        let want = (tb.src[p].sent, tb.sink[p].frames.len() as u64, nbad);
        check(
            (rx, tx, fcs) == want,
            format!(
                "port {p}: MAC rx_frames, tx_frames, rx_bad_fcs = {:?}, expected {want:?}",
                (rx, tx, fcs)
            ),
        )?;
        let rx_bad = tb.read(sb.regs.addr(&format!("port{p}_rx_bad")))?;
        check(
            rx_bad as u64 == nbad,
            format!("port {p}: core port rx_bad {rx_bad}, expected {nbad}"),
        )?;
    }
    eprintln!(
        "{} {pacing:?} core {core_mhz:?} MHz: {} core cycles, {:.1} us, edges mac0 {:?} clk {:?}, events {}, sent {:?}, received {:?}",
        board.name(),
        tb.m.cycle(),
        tb.time_ns() / 1000.0,
        tb.edges(&fanin_gen::board::sim::sim_mac_clock(board, 0)),
        tb.edges("clk"),
        tb.events.len(),
        tb.src.iter().map(|s| s.sent).collect::<Vec<_>>(),
        tb.sink.iter().map(|s| s.frames.len()).collect::<Vec<_>>()
    );
    check(
        tb.tx_underruns() == 0,
        format!("TX underrun at a MAC (ports 0b{:b})", tb.tx_underruns()),
    )?;
    Ok(())
}

fn check(ok: bool, what: String) -> Result<(), SimError> {
    if ok {
        Ok(())
    } else {
        Err(SimError::Check(what))
    }
}

/// Runs the scenario at full rate, with 30 % idle and backpressure at the MACs, and at
/// full rate with the core clock at 60 % of the MAC clock (the TX FIFOs fill slower than a
/// MAC drains them: only packet mode keeps a frame from underrunning).
fn run(board: Board) {
    let s = seed();
    let mac_mhz = 1000.0 / fanin_gen::board::mac_period_ns(board);
    let loaded = Pacing {
        idle: 0.3,
        backpressure: 0.3,
    };
    for (pacing, core_mhz) in [
        (Pacing::FULL, None),
        (loaded, None),
        (Pacing::FULL, Some(0.6 * mac_mhz)),
    ] {
        if let Err(e) = scenario(board, pacing, s, core_mhz) {
            panic!(
                "{} {pacing:?} core clock {core_mhz:?} MHz, seed {s} (FANIN_SEED={s}): {e}",
                board.name()
            );
        }
    }
}

#[test]
fn au250_frames_through_the_board_match_the_model() {
    run(Board::Au250);
}

#[test]
fn sume_frames_through_the_board_match_the_model() {
    run(Board::Sume);
}
