//! `fanin allreduce`: a local software switch and N worker threads on loopback, one allreduce,
//! optionally checked against a locally computed sum.

use std::net::{Ipv4Addr, SocketAddrV4, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, Context};
use fanin_proto::config::Mode;
use fanin_proto::plan::{build, star, Addressing, JobSpec, Plan};
use rand::Rng;

use crate::link::{Faults, Faulty, Link, UdpLink};
use crate::scheme::{result_bound, QuantMode};
use crate::sender::{self, SendConfig, SendReport};
use crate::switchd::{self, Control, Snapshot, SoftSwitch};
use crate::tensor;

/// A validated `fanin allreduce`.
#[derive(Debug, Clone)]
pub struct AllreduceConfig {
    /// Number of workers.
    pub workers: u8,
    /// Elements per worker tensor.
    pub elements: usize,
    /// Elements per packet.
    pub packet_elements: u16,
    /// Slots of the job at the switch (the window limit).
    pub slots: u32,
    /// Window of every worker.
    pub window: u32,
    /// Retransmission timeout.
    pub retransmit: Duration,
    /// Faults at the switch.
    pub faults: Faults,
    /// Seed of the synthetic tensors (rank `r` uses `seed + r`).
    pub seed: u64,
    /// Check results against a local float sum within the bound.
    pub verify: bool,
    /// Integer tensors at `--scale 0`; check the sums are exact.
    pub int: bool,
    /// Give up after this long without progress.
    pub timeout: Duration,
    /// The switch takes the model's frame path (to measure the datagram fast path).
    pub frame_path: bool,
}

/// The outcome of a local allreduce.
#[derive(Debug)]
pub struct AllreduceReport {
    /// Each worker's report, by rank.
    pub workers: Vec<SendReport>,
    /// Final switch counters.
    pub switch: Snapshot,
    /// Wall time from start to the last worker's finish.
    pub elapsed: Duration,
    /// Elements checked (0 without `--verify`/`--int`).
    pub checked: usize,
    /// Descriptions of mismatching elements (at most 10) and their total count.
    pub mismatches: (Vec<String>, usize),
    /// Largest error seen relative to its bound (float verify only).
    pub worst_ratio: f64,
}

/// Binds `n` consecutive loopback UDP ports; returns the base and the sockets.
pub fn bind_consecutive(n: usize) -> anyhow::Result<(u16, Vec<UdpSocket>)> {
    let mut rng = rand::thread_rng();
    for _ in 0..200 {
        let base: u16 = rng.gen_range(20000..(60000 - n as u16));
        let socks: Result<Vec<_>, _> = (0..n)
            .map(|i| UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, base + i as u16)))
            .collect();
        if let Ok(s) = socks {
            return Ok((base, s));
        }
    }
    Err(anyhow!(
        "cannot find {n} consecutive free UDP ports on 127.0.0.1"
    ))
}

/// The plan of a local star: switch at `base`, worker rank `r` at `base + 1 + r`.
pub fn local_plan(cfg: &AllreduceConfig, base: u16) -> anyhow::Result<Plan> {
    build(
        &star(cfg.workers as usize),
        JobSpec {
            job: 1,
            slot_count: cfg.slots,
            elements: cfg.packet_elements,
            mode: Mode::Static,
            addressing: Addressing::Loopback { base },
            trust: fanin_proto::config::Trust::default(),
        },
    )
    .context("cannot plan the local tree")
}

/// The synthetic tensors of `cfg`, by rank.
pub fn tensors(cfg: &AllreduceConfig) -> Vec<Arc<Vec<f32>>> {
    (0..cfg.workers as usize)
        .map(|r| {
            let seed = cfg.seed.wrapping_add(r as u64);
            Arc::new(if cfg.int {
                tensor::synthetic_int(cfg.elements, seed, int_range(cfg.workers))
            } else {
                tensor::synthetic(cfg.elements, seed)
            })
        })
        .collect()
}

/// Runs one allreduce; `stop` interrupts it.
pub fn run(cfg: &AllreduceConfig, stop: Arc<AtomicBool>) -> anyhow::Result<AllreduceReport> {
    run_on(cfg, &tensors(cfg), stop)
}

/// Runs one allreduce of `data` (one tensor of `cfg.elements` per worker, made by
/// [`tensors`] when `cfg.int` is set); `stop` interrupts it.
pub fn run_on(
    cfg: &AllreduceConfig,
    data: &[Arc<Vec<f32>>],
    stop: Arc<AtomicBool>,
) -> anyhow::Result<AllreduceReport> {
    let n = cfg.workers as usize;
    anyhow::ensure!(
        data.len() == n && data.iter().all(|d| d.len() == cfg.elements),
        "need {n} tensors of {} elements",
        cfg.elements
    );
    let (base, mut socks) = bind_consecutive(n + 1)?;
    let plan = local_plan(cfg, base)?;
    let mut sw = SoftSwitch::new(&plan.switches[0]).context("bad switch configuration")?;
    sw.frame_path = cfg.frame_path;
    let sw_sock = socks.remove(0);
    let sw_stop = Arc::new(AtomicBool::new(false));
    let (_stats_tx, stats_rx) = mpsc::channel();
    let ctl = Control::new(sw_stop.clone(), stats_rx);
    let faults = cfg.faults.clone();
    let sw_thread = thread::Builder::new().name("switchd".into()).spawn(
        move || -> std::io::Result<Snapshot> {
            let udp = UdpLink::from_socket(sw_sock)?;
            let mut link: Box<dyn Link> = if faults.is_none() {
                Box::new(udp)
            } else {
                Box::new(Faulty::new(udp, faults))
            };
            Ok(switchd::run("local", &mut sw, &mut link, &ctl))
        },
    )?;

    let t0 = Instant::now();
    let mut handles = Vec::new();
    for (r, sock) in socks.into_iter().enumerate() {
        let a = plan.workers[r].clone();
        let scfg = SendConfig {
            assignment: a,
            window: cfg.window,
            retransmit: cfg.retransmit,
            first_block: 0,
            quant: if cfg.int {
                QuantMode::Scale(0)
            } else {
                QuantMode::Auto
            },
            timeout: cfg.timeout,
            progress: false,
            joins: None,
        };
        let d = Arc::clone(&data[r]);
        let stop = stop.clone();
        handles.push(thread::Builder::new().name(format!("worker{r}")).spawn(
            move || -> anyhow::Result<SendReport> {
                let mut link = UdpLink::from_socket(sock)?;
                Ok(sender::run(&scfg, &d, &mut link, Some(&stop))?)
            },
        )?);
    }
    let mut reports = Vec::new();
    let mut first_err = None;
    for (r, h) in handles.into_iter().enumerate() {
        match h.join().expect("worker thread panicked") {
            Ok(rep) => reports.push(rep),
            Err(e) => {
                stop.store(true, Ordering::Relaxed);
                first_err.get_or_insert(e.context(format!("worker {r}")));
            }
        }
    }
    let elapsed = t0.elapsed();
    sw_stop.store(true, Ordering::Relaxed);
    let snap = sw_thread.join().expect("switch thread panicked")?;
    if let Some(e) = first_err {
        return Err(e);
    }
    let (checked, mismatches, worst_ratio) = if cfg.verify || cfg.int {
        check(cfg, data, &reports)
    } else {
        (0, (vec![], 0), 0.0)
    };
    Ok(AllreduceReport {
        workers: reports,
        switch: snap,
        elapsed,
        checked,
        mismatches,
        worst_ratio,
    })
}

/// Range of synthetic integers so that no sum of `workers` of them can overflow int32 and
/// every sum is exact in f32.
fn int_range(workers: u8) -> i32 {
    ((1 << 24) / workers.max(1) as i32).min(1000)
}

fn check(
    cfg: &AllreduceConfig,
    data: &[Arc<Vec<f32>>],
    reports: &[SendReport],
) -> (usize, (Vec<String>, usize), f64) {
    let n = cfg.workers as u32;
    let mut bad = Vec::new();
    let mut count = 0;
    let mut worst = 0.0f64;
    for i in 0..cfg.elements {
        let exact: f64 = data.iter().map(|d| d[i] as f64).sum();
        for (r, rep) in reports.iter().enumerate() {
            let got = rep.values[i];
            let ok = if cfg.int {
                rep.sums[i] as f64 == exact && got as f64 == exact
            } else {
                // Plus the reference's own f64 summation error, far below the bound.
                let bound = result_bound(n, rep.exponent, got) + n as f64 * 2f64.powi(-50);
                worst = worst.max((got as f64 - exact).abs() / bound);
                (got as f64 - exact).abs() <= bound
            };
            if !ok {
                count += 1;
                if bad.len() < 10 {
                    bad.push(format!(
                        "worker {r} element {i}: got {got} (int {}), expected {exact}",
                        rep.sums[i]
                    ));
                }
            }
        }
    }
    (cfg.elements * reports.len(), (bad, count), worst)
}
