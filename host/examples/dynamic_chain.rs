//! The demo's Canary switchd step: a dynamic job on a chain of frame switches (three leaf
//! switchds of two workers each around a middle switchd that loses, duplicates and reorders
//! 2% of its datagrams), two allreduces on the live switches, every sum compared with the
//! exact one. Exits non-zero if a sum differs or the middle aggregated nothing.
//!
//! `cargo run --release -p fanin --example dynamic_chain [-- --elements N] [--leaves L
//! --per-leaf W]`: `L` leaves (at most 63) of `W` workers (at most 62) each; a job of more
//! than 64 workers runs in header version 2.

use std::net::{Ipv4Addr, SocketAddrV4};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use anyhow::{bail, Context};
use fanin::allreduce::bind_consecutive;
use fanin::leader::{self, star_chain, DynConfig};
use fanin::link::{FaultSpec, Faults, Faulty, Link, UdpLink};
use fanin::switchd::{self, Control, Request, SoftSwitch};
use fanin_proto::config::{JobEntry, Mode, Params, Role, Trust};
use fanin_proto::wire::{RankSet, FANIN_UDP_PORT, MAX_RANKS};
use rand::{Rng, SeedableRng};

const ELEMENTS: u16 = 64;
const SLOTS: u32 = 64;

/// The value of `--flag N`, or `default`.
fn flag(name: &str, default: usize) -> anyhow::Result<usize> {
    std::env::args()
        .skip_while(|a| a != name)
        .nth(1)
        .map(|s| {
            s.parse()
                .with_context(|| format!("{name} takes a count, not {s:?}"))
        })
        .transpose()
        .map(|v| v.unwrap_or(default))
}

fn main() -> anyhow::Result<()> {
    let len = flag("--elements", 50_000)?;
    let (leaves, per_leaf) = (flag("--leaves", 3)?, flag("--per-leaf", 2)?);
    let n = leaves * per_leaf;
    if !(1..=63).contains(&leaves)
        || !(1..=62).contains(&per_leaf)
        || !(2..=MAX_RANKS as usize).contains(&n)
    {
        bail!("--leaves must be 1..=63 and --per-leaf 1..=62 (a dynamic switch has at most 64 ports), with 2..={MAX_RANKS} workers in all ({n} asked)");
    }
    let all = RankSet::first(n as u32);
    let (base, socks) = bind_consecutive(leaves + 1 + n)?;
    let job = JobEntry {
        job: 9,
        role: Role::Root,
        mode: Mode::Dynamic {
            flush_after: 2_000,
            reclaim_after: 200_000,
        },
        degree_limit: 1,
        children: vec![],
        ranks: all.0[0],
        ranks_hi: all.0[1..n.div_ceil(64)].to_vec(),
        slot_base: 0,
        slot_count: SLOTS,
        quota: 0,
        trust: Trust::OFF,
    };
    let params = Params {
        slots: SLOTS,
        elements: ELEMENTS,
        ..Params::default()
    };
    let (switches, workers) = star_chain(leaves, per_leaf, job, params, |i| {
        SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + i as u16)
    });
    let mut socks: Vec<_> = socks.into_iter().map(Some).collect();
    let stop = Arc::new(AtomicBool::new(false));
    let mut stats = Vec::new();
    let mut threads = Vec::new();
    for (i, c) in switches.iter().enumerate() {
        let mut sw = SoftSwitch::with_links(&c.config, &c.links)?;
        let sock = socks[i].take().expect("one socket per switch");
        let (tx, rx) = mpsc::channel::<Request>();
        stats.push(tx);
        let ctl = Control::new(stop.clone(), rx);
        let name = c.config.name.clone();
        let middle = i == leaves;
        threads.push(thread::spawn(move || -> std::io::Result<()> {
            let mut link: Box<dyn Link> = Box::new(UdpLink::from_socket(sock)?);
            if middle {
                link = Box::new(Faulty::new(
                    link,
                    Faults::new(
                        FaultSpec {
                            loss: 0.02,
                            dup: 0.02,
                            reorder: 0.02,
                            hold: 1,
                        },
                        27,
                    )
                    .expect("valid faults"),
                ));
            }
            switchd::run(&name, &mut sw, &mut link, &ctl);
            Ok(())
        }));
    }
    let mut links: Vec<Option<UdpLink>> = (0..n)
        .map(|w| {
            socks[leaves + 1 + w]
                .take()
                .map(UdpLink::from_socket)
                .transpose()
        })
        .collect::<std::io::Result<_>>()?;
    let peers: Vec<Ipv4Addr> = workers.iter().map(|w| w.ip).collect();
    let blocks = len.div_ceil(ELEMENTS as usize) as u32;
    let mut result = Ok(());
    for (run, seed) in [(0u32, 1u64), (1, 2)] {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let data: Vec<Vec<i32>> = (0..n)
            .map(|_| {
                (0..len)
                    .map(|_| rng.gen_range(-(1 << 20)..1 << 20))
                    .collect()
            })
            .collect();
        let exact: Vec<i32> = (0..len)
            .map(|i| data.iter().map(|d| d[i] as i64).sum::<i64>() as i32)
            .collect();
        let handles: Vec<_> = (0..n)
            .map(|w| {
                let cfg = DynConfig {
                    job: 9,
                    rank: w,
                    peers: peers.clone(),
                    udp_port: FANIN_UDP_PORT,
                    switch: workers[w].switch,
                    elements: ELEMENTS,
                    window: 32,
                    first_block: run * blocks,
                    retransmit: Duration::from_millis(80),
                    timeout: Duration::from_secs(10),
                    linger: Duration::from_millis(300),
                };
                let mut link = links[w].take().expect("link back from the last run");
                let d = data[w].clone();
                thread::spawn(move || {
                    let r = leader::run(&cfg, &mut link, &d);
                    (link, r)
                })
            })
            .collect();
        let mut wrong = 0;
        let mut retx = 0;
        for (w, h) in handles.into_iter().enumerate() {
            let (link, r) = h.join().expect("worker thread");
            links[w] = Some(link);
            match r {
                Ok((sums, rep)) => {
                    retx += rep.retransmits;
                    wrong += usize::from(sums != exact);
                }
                Err(e) => {
                    result = Err(anyhow::anyhow!("worker {w}: {e}"));
                    wrong += 1;
                }
            }
        }
        println!(
            "allreduce {}: {n} workers x {len} int32 elements ({blocks} blocks, first block {}): {} of {n} workers hold the exact sum; {retx} BYPASS retransmissions",
            run + 1,
            run * blocks,
            n - wrong
        );
        if wrong > 0 {
            result = result.and(Err(anyhow::anyhow!(
                "{wrong} workers without the exact sum"
            )));
        }
    }
    let (tx, rx) = mpsc::channel();
    stats[leaves]
        .send(Request::Stats(tx))
        .context("middle switch stopped")?;
    let mid = rx.recv_timeout(Duration::from_secs(5))?;
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("switch thread")?;
    }
    let f = mid.host.faults;
    println!(
        "middle switchd: aggregated {}, flushed on its timer {}, completed {}, stragglers forwarded {}, results sent down {}; faults injected: {} lost, {} duplicated, {} reordered",
        mid.get("aggregated"),
        mid.get("timeouts"),
        mid.get("completions"),
        mid.get("bypass_straggler"),
        mid.get("results_sent"),
        f.lost,
        f.duplicated,
        f.reordered
    );
    result?;
    if mid.get("aggregated") < blocks as u64 {
        bail!("the middle switchd aggregated too little to show interception");
    }
    Ok(())
}
