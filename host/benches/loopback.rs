//! Loopback benchmarks, all figures from one run on the same machine:
//! - software-switch throughput (aggregated packets/s) vs a plain UDP echo with the same
//!   datagram size, window and batching;
//! - `fanin send` goodput vs `iperf3 -u` at the same datagram size (if iperf3 is installed).
//!
//! `cargo bench -p fanin --bench loopback` (env `FANIN_BENCH_ELEMENTS`, default 4194304).
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
use fanin_proto::plan::{build, star, Addressing, JobSpec};
use fanin_proto::wire::{ELEMENT_BYTES, HEADER_LEN};

const ELEMENTS: u16 = 64;
const WINDOW: u32 = 64;
const DATAGRAM: usize = HEADER_LEN + ELEMENTS as usize * ELEMENT_BYTES;

fn lo0() -> SocketAddrV4 {
    SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)
}

/// Echo server + windowed client: round trips per second.
fn udp_echo(packets: u64) -> f64 {
    let mut server = UdpLink::bind(lo0()).unwrap();
    let at = server.local_addr();
    let stop = Arc::new(AtomicBool::new(false));
    let s2 = stop.clone();
    let h = thread::spawn(move || {
        let mut buf = Vec::new();
        while !s2.load(Ordering::Relaxed) {
            server.recv(&mut buf, Duration::from_millis(1)).unwrap();
            server.send(&mut buf).unwrap();
        }
    });
    let mut c = UdpLink::bind(lo0()).unwrap();
    let (mut sent, mut got, mut inflight) = (0u64, 0u64, 0u64);
    let mut out = Vec::new();
    let mut inbox = Vec::new();
    let t = Instant::now();
    let mut last = Instant::now();
    while got < packets {
        while inflight < WINDOW as u64 && sent < packets + WINDOW as u64 {
            out.push(Dgram {
                peer: at,
                data: vec![0u8; DATAGRAM],
            });
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
    h.join().unwrap();
    pps
}

/// A software switch with `workers` workers, each sending `elements`: (aggregated
/// packets/s at the switch, mean sender goodput in Gbps).
fn switch(workers: usize, elements: usize) -> (f64, f64) {
    let (base, mut socks) = bind_consecutive(workers + 1).unwrap();
    let plan = build(
        &star(workers),
        JobSpec {
            job: 1,
            slot_count: 256,
            elements: ELEMENTS,
            mode: Mode::Static,
            addressing: Addressing::Loopback { base },
            trust: fanin_proto::config::Trust::default(),
        },
    )
    .unwrap();
    let mut sw = SoftSwitch::new(&plan.switches[0]).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let (_tx, rx) = mpsc::channel();
    let ctl = Control::new(stop.clone(), rx);
    let s0 = socks.remove(0);
    let h = thread::spawn(move || {
        let mut l = UdpLink::from_socket(s0).unwrap();
        switchd::run("bench", &mut sw, &mut l, &ctl)
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
            };
            let data = fanin::tensor::synthetic(elements, r as u64);
            thread::spawn(move || {
                let mut l = UdpLink::from_socket(s).unwrap();
                sender::run(&cfg, &data, &mut l, None).unwrap()
            })
        })
        .collect();
    let reps: Vec<_> = hs.into_iter().map(|h| h.join().unwrap()).collect();
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let snap = h.join().unwrap();
    let goodput = reps.iter().map(|r| r.goodput_gbps()).sum::<f64>() / workers as f64;
    (snap.get("aggregated") as f64 / secs, goodput)
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
        .args(["-l", &DATAGRAM.to_string(), "-t", "2", "-J"])
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
    let packets = (elements / ELEMENTS as usize) as u64;
    println!("loopback bench: {DATAGRAM}-byte datagrams, window {WINDOW}, {elements} elements per worker");
    let echo = udp_echo(packets);
    println!("  udp echo (same window, recvmmsg/sendmmsg):   {echo:>12.0} round trips/s");
    let (agg1, g1) = switch(1, elements);
    println!(
        "  switchd, 1 worker:  {agg1:>12.0} aggregated packets/s  = {:.2} x udp echo; sender goodput {g1:.3} Gbps",
        agg1 / echo
    );
    let (agg2, g2) = switch(2, elements);
    println!(
        "  switchd, 2 workers: {agg2:>12.0} aggregated packets/s  = {:.2} x udp echo; sender goodput {g2:.3} Gbps each",
        agg2 / echo
    );
    match iperf3() {
        Some(ip) => println!(
            "  iperf3 -u -l {DATAGRAM} -b 0: {ip:.3} Gbps received; fanin send (1 worker) {g1:.3} Gbps of tensor data = {:.2} x iperf3",
            g1 / ip
        ),
        None => println!("  iperf3 not available: sender-vs-iperf3 comparison skipped"),
    }
}
