//! The demo's Canary switchd steps: a dynamic job on a network of frame switches, two
//! allreduces on the live switches, every sum compared with the exact one. Exits non-zero if
//! a sum differs or the watched switch aggregated too little.
//!
//! `cargo run --release -p fanin --example dynamic_chain [-- --elements N] [--leaves L
//! --per-leaf W]`: `L` leaf switchds (at most 63) of `W` workers (at most 62) each around a
//! middle switchd that loses, duplicates and reorders 2% of its datagrams; a job of more
//! than 64 workers runs in header version 2.
//!
//! `... --example dynamic_chain -- --emitted DIR [--elements N]`: the network `fanin place
//! --mode dynamic --emit-config DIR --base-port P` wrote, as it is: its configurations, its
//! `links.json` ports, tunnels and workers (no injected faults); the watched switch is the
//! job's root.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use anyhow::{bail, Context};
use fanin::allreduce::bind_consecutive;
use fanin::leader::{self, star_chain, ChainSwitch, ChainWorker, DynConfig};
use fanin::link::{FaultSpec, Faults, Faulty, Link, UdpLink};
use fanin::switchd::{self, Control, Request, SoftSwitch};
use fanin_placement::wiring::Wiring;
use fanin_proto::config::{JobEntry, Mode, Params, Role, SwitchConfig, Trust};
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

/// A network to run: switches, workers, their bound sockets (switches first), the job.
struct Net {
    switches: Vec<ChainSwitch>,
    workers: Vec<ChainWorker>,
    socks: Vec<UdpSocket>,
    job: u16,
    elements: u16,
    /// The switch whose counters are checked, and whether it injects faults.
    watched: usize,
    faulty: bool,
}

/// `leaves` leaves of `per_leaf` workers around a lossy middle (`leader::star_chain`).
fn chain(leaves: usize, per_leaf: usize) -> anyhow::Result<Net> {
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
    Ok(Net {
        switches,
        workers,
        socks,
        job: 9,
        elements: ELEMENTS,
        watched: leaves,
        faulty: true,
    })
}

/// The network `fanin place --mode dynamic --emit-config DIR --base-port P` wrote.
fn emitted(dir: &Path) -> anyhow::Result<Net> {
    let read = |f: &str| {
        std::fs::read_to_string(dir.join(f))
            .with_context(|| format!("reading {f} in {}", dir.display()))
    };
    let w: Wiring = serde_json::from_str(&read("links.json")?).context("links.json")?;
    let (mut switches, mut socks) = (Vec::new(), Vec::new());
    for s in &w.switches {
        let f = fanin_placement::emit::file_name(&s.name);
        let config: SwitchConfig = serde_json::from_str(&read(&f)?).with_context(|| f.clone())?;
        let listen = s
            .listen
            .with_context(|| format!("{}: no tunnel addresses (emit with --base-port)", s.name))?;
        let links = s
            .links
            .iter()
            .map(|l| Ok((l.port, l.tunnel.context("a link without a tunnel")?)))
            .collect::<anyhow::Result<_>>()?;
        socks.push(UdpSocket::bind(listen).with_context(|| format!("binding {listen}"))?);
        switches.push(ChainSwitch {
            config,
            links,
            listen,
        });
    }
    let jobs: std::collections::BTreeSet<u16> = w.workers.iter().map(|x| x.job).collect();
    if jobs.len() != 1 {
        bail!("links.json holds {} jobs; this runs one", jobs.len());
    }
    let mut workers = Vec::new();
    for x in &w.workers {
        let (bind, switch) = x
            .bind
            .zip(x.switch_tunnel)
            .context("a worker without tunnels (emit with --base-port)")?;
        socks.push(UdpSocket::bind(bind).with_context(|| format!("binding {bind}"))?);
        workers.push(ChainWorker {
            ip: x.ip,
            bind,
            switch,
        });
    }
    let e = switches[0].config.jobs[0].clone();
    Ok(Net {
        elements: switches[0].config.params.elements,
        switches,
        workers,
        socks,
        job: e.job,
        watched: 0,
        faulty: false,
    })
}

fn main() -> anyhow::Result<()> {
    let len = flag("--elements", 50_000)?;
    let from = std::env::args().skip_while(|a| a != "--emitted").nth(1);
    let net = match &from {
        Some(d) => emitted(Path::new(d))?,
        None => chain(flag("--leaves", 3)?, flag("--per-leaf", 2)?)?,
    };
    let Net {
        switches,
        workers,
        socks,
        job,
        elements,
        watched,
        faulty,
    } = net;
    let n = workers.len();
    let n_sw = switches.len();
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
        let lossy = faulty && i == watched;
        threads.push(thread::spawn(move || -> std::io::Result<()> {
            let mut link: Box<dyn Link> = Box::new(UdpLink::from_socket(sock)?);
            if lossy {
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
        .map(|w| socks[n_sw + w].take().map(UdpLink::from_socket).transpose())
        .collect::<std::io::Result<_>>()?;
    let peers: Vec<Ipv4Addr> = workers.iter().map(|w| w.ip).collect();
    let blocks = len.div_ceil(elements as usize) as u32;
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
                    job,
                    rank: w,
                    peers: peers.clone(),
                    udp_port: FANIN_UDP_PORT,
                    switch: workers[w].switch,
                    elements,
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
    stats[watched]
        .send(Request::Stats(tx))
        .context("watched switch stopped")?;
    let mid = rx.recv_timeout(Duration::from_secs(5))?;
    stop.store(true, Ordering::Relaxed);
    for t in threads {
        t.join().expect("switch thread")?;
    }
    let f = mid.host.faults;
    println!(
        "{} switchd: aggregated {}, flushed on its timer {}, completed {}, stragglers forwarded {}, results sent down {}; faults injected: {} lost, {} duplicated, {} reordered",
        switches[watched].config.name,
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
        bail!("the watched switchd aggregated too little to show interception");
    }
    Ok(())
}
