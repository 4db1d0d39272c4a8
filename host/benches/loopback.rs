//! Loopback benchmarks, all figures from one run on the same machine:
//! - software-switch throughput (aggregated packets/s) vs a plain UDP echo with the same
//!   datagram size, window and batching;
//! - `fanin send` goodput vs `iperf3 -u` at the same datagram size (if iperf3 is installed);
//! - per-core figures: packets/s and Gbit/s per CPU-second of the switchd thread and of each
//!   sender thread (thread CPU time from `getrusage(RUSAGE_THREAD)`, so a shared machine's
//!   other load does not count against them).
//!
//! `cargo bench -p fanin --bench loopback`; env `FANIN_BENCH_ELEMENTS` (tensor elements per
//! worker, default 4194304), `FANIN_BENCH_PACKET` (elements per packet, default 2048) and
//! `FANIN_BENCH_FRAME_PATH=1` (switchd takes the model's frame path); `-- --model-only` runs
//! only switchd without sockets (`SoftSwitch::handle` of prepared datagrams).
//! Without `--bench` (as under `cargo test --all-targets`) it only prints how to run it.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use fanin::allreduce::bind_consecutive;
use fanin::link::{Dgram, Link, UdpLink};
use fanin::scheme::QuantMode;
use fanin::sender::{self, SendConfig};
use fanin::switchd::{self, Control, SoftSwitch};
use fanin_proto::config::Mode;
use fanin_proto::model::Verdict;
use fanin_proto::plan::{build, star, Addressing, JobSpec, Plan};
use fanin_proto::wire::header::field;
use fanin_proto::wire::{PacketType, Repr, ELEMENT_BYTES, HEADER_LEN};

const WINDOW: u32 = 64;

/// Elements per packet.
fn packet() -> u16 {
    std::env::var("FANIN_BENCH_PACKET")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2048)
}

/// Datagram bytes at the packet size.
fn datagram() -> usize {
    HEADER_LEN + packet() as usize * ELEMENT_BYTES
}

/// CPU seconds the calling thread has used.
fn thread_cpu() -> f64 {
    // SAFETY: rusage is plain data, filled by the call.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: u is a valid rusage to write.
    unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut u) };
    let t = |v: libc::timeval| v.tv_sec as f64 + v.tv_usec as f64 * 1e-6;
    t(u.ru_utime) + t(u.ru_stime)
}

fn lo0() -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)
}

/// Echo server + windowed client: (round trips per second, echo server CPU seconds).
fn udp_echo(packets: u64) -> (f64, f64) {
    let mut server = UdpLink::bind(lo0()).unwrap();
    let at = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let h = thread::spawn(move || {
        let c0 = thread_cpu();
        let mut buf = Vec::new();
        while !s2.load(Ordering::Relaxed) {
            server.recv(&mut buf, Duration::from_millis(1)).unwrap();
            server.send(&mut buf).unwrap();
        }
        thread_cpu() - c0
    });
    let mut c = UdpLink::bind(lo0()).unwrap();
    let (mut sent, mut got, mut inflight) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    let mut inbox = Vec::new();
    let t = Instant::now();
    let mut last = Instant::now();
    while got < packets {
        while inflight < WINDOW as u64 && sent < packets + WINDOW as u64 {
            out.push(Dgram::new(at, vec![0u8; datagram()]));
            inflight += 1;
            sent += 1;
        }
        c.send(&mut out).unwrap();
        c.recv(&mut inbox, Duration::from_millis(10)).unwrap();
        let n = inbox.len() as u64;
        inbox.clear();
        if n > 0 {
            last = Instant::now();
        } else if last.elapsed() > Duration::from_millis(50) {
            inflight = 0; // lost echoes: refill the window
        }
        got += n;
        inflight = inflight.saturating_sub(n);
    }
    let pps = got as f64 / t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    (pps, h.join().unwrap())
}

/// One switch run's figures.
struct SwitchRun {
    /// Aggregated packets per wall second.
    agg_pps: f64,
    /// Mean sender goodput (Gbit/s of tensor data).
    goodput: f64,
    /// Datagrams switchd received and sent per CPU-second of its thread.
    sw_pps_per_core: f64,
    /// Contribution packets sent per CPU-second of a sender thread (mean over senders).
    tx_pps_per_core: f64,
}

/// The bench's job: a star of `workers` on loopback ports from `base`, 256 slots.
fn plan(workers: usize, base: u16, trust: fanin_proto::config::Trust) -> Plan {
    build(
        &star(workers),
        JobSpec {
            job: 1,
            slot_count: 256,
            elements: packet(),
            mode: Mode::Static,
            addressing: Addressing::Loopback { base },
            trust,
        },
    )
    .unwrap()
}

/// A software switch with `workers` workers, each sending `elements`.
fn switch(workers: usize, elements: usize) -> SwitchRun {
    let (base, mut socks) = bind_consecutive(workers + 1).unwrap();
    let plan = plan(workers, base, fanin_proto::config::Trust::default());
    let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
    sw.frame_path = std::env::var("FANIN_BENCH_FRAME_PATH").is_ok_and(|v| v == "1");
    let stop = Arc::new(AtomicBool::new(false));
    let (_tx, rx) = mpsc::channel();
    let ctl = Control::new(stop.clone(), rx);
    let s0 = socks.remove(0);
    let h = thread::spawn(move || {
        let c0 = thread_cpu();
        let mut l = UdpLink::from_socket(s0).unwrap();
        let snap = switchd::run("bench", &mut sw, &mut l, &ctl);
        (snap, thread_cpu() - c0)
    });
    let t = Instant::now();
    let hs: Vec<_> = socks
        .into_iter()
        .enumerate()
        .map(|(r, s)| {
            let cfg = SendConfig {
                assignment: plan.workers[r].clone(),
                window: WINDOW,
                retransmit: Duration::from_millis(50),
                first_block: 0,
                quant: QuantMode::Auto,
                timeout: Duration::from_secs(20),
                progress: false,
                joins: None,
            };
            let data = fanin::tensor::synthetic(elements, r as u64);
            thread::spawn(move || {
                let c0 = thread_cpu();
                let mut l = UdpLink::from_socket(s).unwrap();
                let r = sender::run(&cfg, &data, &mut l, None).unwrap();
                (r, thread_cpu() - c0)
            })
        })
        .collect();
    let reps: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let (snap, sw_cpu) = h.join().unwrap();
    let goodput = reps.iter().map(|(r, _)| r.goodput_gbps()).sum::<f64>() / workers as f64;
    let moved: u64 = snap.ports.iter().map(|p| p.rx_packets + p.tx_packets).sum();
    let tx_pps_per_core = reps
        .iter()
        .map(|(r, cpu)| (r.packets + r.retransmissions) as f64 / cpu.max(1e-9))
        .sum::<f64>()
        / workers as f64;
    SwitchRun {
        agg_pps: snap.get("aggregated") as f64 / secs,
        goodput,
        sw_pps_per_core: moved as f64 / sw_cpu.max(1e-9),
        tx_pps_per_core,
    }
}

/// switchd's own cost, without sockets: [`SoftSwitch::handle`] of `workers` workers'
/// contributions to `blocks` blocks, block by block, outputs dropped (the payloads are
/// built beforehand for 256 blocks and renumbered in place for each next 256).
/// Datagrams in and out per CPU-second of this thread.
fn switch_no_socket(workers: usize, blocks: u32) -> f64 {
    let plan = plan(workers, 40000, fanin_proto::config::Trust::OFF);
    let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
    let peers: Vec<SocketAddrV4> = plan
        .workers
        .iter()
        .map(|w| SocketAddrV4::new(w.me.ip, w.me.udp_port))
        .collect();
    let data: Vec<i32> = (0..packet() as i32).collect();
    let mut payloads: Vec<Vec<u8>> = (0..256)
        .flat_map(|block| (0..workers).map(move |r| (block, r)))
        .map(|(block, r)| {
            Repr {
                ptype: PacketType::Contribution,
                flags: Default::default(),
                exponent: 0,
                job: 1,
                elements: packet(),
                block,
                child: r as u8,
                bitmap: 1 << r,
            }
            .to_bytes(&data)
        })
        .collect();
    let mut out = Vec::new();
    let mut moved = 0u64;
    let mut cpu = 0.0;
    for round in 0..blocks.div_ceil(256) {
        for (i, p) in payloads.iter_mut().enumerate() {
            let block = round * 256 + (i / workers) as u32;
            p[field::BLOCK].copy_from_slice(&block.to_be_bytes());
        }
        let c0 = thread_cpu();
        for (i, p) in payloads.iter().enumerate() {
            let v = sw.handle(i as u64, peers[i % workers], p, &mut out);
            assert!(
                matches!(v, Verdict::Aggregated | Verdict::Completed),
                "round {round} datagram {i}: {v:?}"
            );
            moved += 1 + out.len() as u64;
            out.clear();
        }
        cpu += thread_cpu() - c0;
    }
    moved as f64 / cpu.max(1e-9)
}

/// `iperf3 -u` on loopback at the fanin datagram size: receiver Gbps, if iperf3 runs.
fn iperf3() -> Option<f64> {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .ok()?
        .local_addr()
        .ok()?
        .port()
        .to_string();
    let mut server = Command::new("iperf3")
        .args(["-s", "-1", "-B", "127.0.0.1", "-p", &port])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    thread::sleep(Duration::from_millis(300));
    let out = Command::new("timeout")
        .args([
            "20",
            "iperf3",
            "-c",
            "127.0.0.1",
            "-p",
            &port,
            "-u",
            "-b",
            "0",
        ])
        .args(["-l", &datagram().to_string(), "-t", "2", "-J"])
        .output()
        .ok();
    let _ = server.kill();
    let _ = server.wait();
    let v: serde_json::Value = serde_json::from_slice(&out?.stdout).ok()?;
    let end = &v["end"];
    end["sum_received"]["bits_per_second"]
        .as_f64()
        .or_else(|| end["sum"]["bits_per_second"].as_f64())
        .map(|b| b / 1e9)
}

fn main() {
    if !std::env::args().any(|a| a == "--bench") {
        // `cargo test --all-targets` runs bench binaries without --bench: stay quick.
        println!("loopback bench: run with `cargo bench -p fanin --bench loopback`");
        return;
    }
    let elements: usize = std::env::var("FANIN_BENCH_ELEMENTS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(4 << 20);
    let packets = (elements / packet() as usize) as u64;
    let dg = datagram();
    let gbit = |pps: f64| pps * dg as f64 * 8.0 / 1e9;
    let path = if std::env::var("FANIN_BENCH_FRAME_PATH").is_ok_and(|v| v == "1") {
        "frame"
    } else {
        "datagram"
    };
    if std::env::args().any(|a| a == "--model-only") {
        // switchd's user-space cost alone (for `perf stat`, or comparing two builds).
        for w in [1usize, 2, 4] {
            let alone = switch_no_socket(w, 16384);
            println!(
                "switchd without sockets, {w} worker(s): {alone:.0} datagrams/s per core ({:.2} Gbit/s)",
                gbit(alone)
            );
        }
        return;
    }
    println!("loopback bench: {dg}-byte datagrams ({} elements), window {WINDOW}, {elements} elements per worker, switchd {path} path", packet());
    let (echo, echo_cpu) = udp_echo(packets);
    println!(
        "  udp echo (same window, recvmmsg/sendmmsg):   {echo:>12.0} round trips/s; server {:.0} datagrams/s per core ({:.2} Gbit/s)",
        2.0 * packets as f64 / echo_cpu.max(1e-9),
        gbit(2.0 * packets as f64 / echo_cpu.max(1e-9))
    );
    let echo_core = 2.0 * packets as f64 / echo_cpu.max(1e-9);
    for w in [1usize, 2, 4] {
        let r = switch(w, elements);
        println!(
            "  switchd, {w} worker(s): {:>10.0} aggregated packets/s = {:.2} x udp echo; goodput {:.3} Gbit/s per worker",
            r.agg_pps,
            r.agg_pps / echo,
            r.goodput
        );
        println!(
            "      per core: switchd {:.0} datagrams/s ({:.2} Gbit/s) = {:.2} x the echo server's; sender {:.0} packets/s ({:.2} Gbit/s)",
            r.sw_pps_per_core,
            gbit(r.sw_pps_per_core),
            r.sw_pps_per_core / echo_core,
            r.tx_pps_per_core,
            gbit(r.tx_pps_per_core)
        );
        let alone = switch_no_socket(w, 16384);
        println!(
            "      switchd without sockets (SoftSwitch::handle alone): {alone:.0} datagrams/s per core ({:.2} Gbit/s); the sockets take {:.0}% of switchd's CPU",
            gbit(alone),
            100.0 * (1.0 - r.sw_pps_per_core / alone).max(0.0)
        );
        if w == 1 {
            match iperf3() {
                Some(ip) => println!(
                    "  iperf3 -u -l {dg} -b 0: {ip:.3} Gbit/s received; fanin send (1 worker) {:.3} Gbit/s of tensor data = {:.2} x iperf3",
                    r.goodput,
                    r.goodput / ip
                ),
                None => println!("  iperf3 not available: sender-vs-iperf3 comparison skipped"),
            }
        }
    }
}
