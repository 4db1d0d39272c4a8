//! The demo's trust step: successive allreduces of one job on a live software switch each get
//! their own exact sum, and a burst of stray datagrams neither wedges the switch nor reaches a
//! sum. Exits non-zero if anything is wrong.
//!
//! `cargo run --release -p fanin --example trust_demo [-- --stray N]`

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use fanin::allreduce::bind_consecutive;
use fanin::link::UdpLink;
use fanin::scheme::QuantMode;
use fanin::sender::{self, SendConfig};
use fanin::switchd::{self, Control, Request, SingleJob, SoftSwitch};
use fanin_proto::worker::Assignment;
use rand::{Rng, SeedableRng};

const WORKERS: usize = 4;
const ELEMENTS: usize = 100_000;

fn main() -> anyhow::Result<()> {
    let stray: u64 = std::env::args()
        .skip_while(|a| a != "--stray")
        .nth(1)
        .map(|s| s.parse().context("--stray takes a count"))
        .transpose()?
        .unwrap_or(200_000);
    let (base, mut socks) = bind_consecutive(WORKERS + 1)?;
    let me = SocketAddrV4::new(Ipv4Addr::LOCALHOST, base);
    let workers: Vec<SocketAddrV4> = (1..=WORKERS)
        .map(|i| SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + i as u16))
        .collect();
    let cfg = switchd::single_job_config(
        me,
        &SingleJob {
            job: 7,
            workers: workers.clone(),
            elements: 64,
            slots: 256,
        },
    );
    let mut sw = SoftSwitch::new(&cfg)?;
    let stop = Arc::new(AtomicBool::new(false));
    let (req_tx, req_rx) = mpsc::channel::<Request>();
    let ctl = Control::new(stop.clone(), req_rx);
    let sw_sock = socks.remove(0);
    let switch = thread::spawn(move || -> std::io::Result<switchd::Snapshot> {
        let mut link = UdpLink::from_socket(sw_sock)?;
        Ok(switchd::run("demo", &mut sw, &mut link, &ctl))
    });
    let socks: Vec<_> = socks.into_iter().map(Some).collect();
    let socks = std::sync::Mutex::new(socks);
    let assignment = |r: usize| Assignment {
        job: 7,
        rank: r as u16,
        workers: WORKERS as u16,
        child: r as u8,
        me: cfg.jobs[0].children[r].endpoint,
        parent: fanin_proto::config::Endpoint {
            mac: cfg.mac,
            ip: cfg.ip,
            udp_port: cfg.udp_port,
            port: 0,
        },
        window_limit: 256,
        elements: 64,
        session: true,
    };
    let stats = || -> anyhow::Result<switchd::Snapshot> {
        let (tx, rx) = mpsc::channel();
        req_tx.send(Request::Stats(tx))?;
        Ok(rx.recv_timeout(Duration::from_secs(5))?)
    };
    let round = |seed: u64| -> anyhow::Result<Vec<i64>> {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let data: Vec<Vec<f32>> = (0..WORKERS)
            .map(|_| {
                (0..ELEMENTS)
                    .map(|_| rng.gen_range(-1000..1000) as f32)
                    .collect()
            })
            .collect();
        let want: Vec<i64> = (0..ELEMENTS)
            .map(|i| data.iter().map(|d| d[i] as i64).sum())
            .collect();
        let handles: Vec<_> = (0..WORKERS)
            .map(|r| {
                let sock = socks.lock().expect("not poisoned")[r]
                    .as_ref()
                    .expect("socket")
                    .try_clone()
                    .expect("clone");
                let c = SendConfig {
                    assignment: assignment(r),
                    window: 64,
                    retransmit: Duration::from_millis(20),
                    first_block: 0,
                    quant: QuantMode::Scale(0),
                    timeout: Duration::from_secs(10),
                    progress: false,
                    joins: None,
                };
                let d = data[r].clone();
                thread::spawn(move || -> anyhow::Result<Vec<i32>> {
                    let mut link = UdpLink::from_socket(sock)?;
                    Ok(sender::run(&c, &d, &mut link, None)?.sums)
                })
            })
            .collect();
        for (r, h) in handles.into_iter().enumerate() {
            let got = h.join().expect("worker thread")?;
            let got: Vec<i64> = got.iter().map(|&x| x as i64).collect();
            if got != want {
                bail!("worker {r} of the allreduce with seed {seed} got a wrong sum");
            }
        }
        Ok(want)
    };

    let t = Instant::now();
    let first = round(1)?;
    let second = round(2)?;
    if first == second {
        bail!("the two allreduces had the same sum: the test data is degenerate");
    }
    println!(
        "two allreduces of job 7 ({WORKERS} workers x {ELEMENTS} int32) on one live switch: each got its own exact sum ({:.2}s)",
        t.elapsed().as_secs_f64()
    );

    let s = UdpSocket::bind("127.0.0.1:0")?;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
    let t = Instant::now();
    for i in 0..stray {
        // Half junk, half well-formed forgeries for job 7 from the wrong address.
        let d = if i % 2 == 0 {
            fanin_proto::forge::junk(&mut rng, 300)
        } else {
            let first_block = rng.gen();
            fanin_proto::forge::forged_payload(
                &mut rng,
                &fanin_proto::forge::Target {
                    job: 7,
                    ranks: WORKERS as u8,
                    elements: 64,
                    first_block,
                    other_jobs: 0.0,
                    session_types: true,
                },
            )
        };
        let _ = s.send_to(&d, me);
        if i % 256 == 0 {
            thread::sleep(Duration::from_micros(200));
        }
    }
    let after = stats()?;
    println!(
        "{stray} stray datagrams from an unconfigured address in {:.2}s: malformed {}, bad_source {}, unknown_job {}, aggregated by them 0, slots_in_use {}",
        t.elapsed().as_secs_f64(),
        after.get("malformed"),
        after.get("bad_source"),
        after.get("unknown_job"),
        after.get("slots_in_use"),
    );
    if after.get("slots_in_use") != 0 {
        bail!("stray traffic holds slot copies");
    }
    round(3)?;
    let end = stats()?;
    println!(
        "a third allreduce after the burst: exact; sessions opened {}, refused {}, idle reclaims {}",
        end.get("sessions"),
        end.get("refused"),
        end.get("idle_reclaims")
    );
    if end.get("sessions") != 3 {
        bail!(
            "expected 3 sessions, the switch counted {}",
            end.get("sessions")
        );
    }
    stop.store(true, Ordering::Relaxed);
    switch.join().expect("switch thread")?;
    println!("verified: every allreduce exact, no stale result, no wedge");
    Ok(())
}
