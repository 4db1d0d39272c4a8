//! `fanin experiment canary-congestion | canary-size | canary-timeout | canary-tenants`:
//! Canary's Figs. 7/8, 9, 11 and 10 in the fabric simulator ([`fanin_proto::fabric`]).
//!
//! Each writes a CSV, an SVG and a checks file into the output directory and prints the
//! checks. Every run must end with the exact int32 sums at every host, or the experiment
//! fails. The paper's claims are checked for direction (which scheme wins where), not
//! absolute numbers, and each is printed as `[reproduced]` or `[NOT reproduced]` with the
//! figures: whether a claim holds is a finding of the simulation, not a defect of the run.
//! docs/protocol.md ("Canary experiments") records what the current model reproduces.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{bail, Context};
use fanin_placement::plot::{line_chart, Series};
use fanin_proto::fabric::{simulate, Fabric, Faults, Flow, Job, Load, Outcome, Run, Scheme};
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// int32 elements per packet (1 KiB of payload).
const PACKET_ELEMENTS: u16 = 256;

/// Sizes of one run: the fabric and the default data per host.
#[derive(Debug, Clone, Copy)]
struct Size {
    fabric: Fabric,
    /// Data per host in KiB.
    kib: usize,
    /// Seeds (host allocations) averaged per point.
    reps: u64,
}

/// Percent of the hosts in the allreduce in Figs. 7 and 11 (512 of 1024 hosts); the others
/// send the background traffic.
const SHARE_FIG7: usize = 50;

/// Percent of the hosts in the allreduce in Fig. 9 (20%, the other 80% send background).
const SHARE_FIG9: usize = 20;

/// The flow control the experiments use unless `--flow` says otherwise (docs/protocol.md,
/// "Canary experiments", gives the figures of both).
pub const DEFAULT_FLOW: Flow = Flow::Lossless;

fn size(quick: bool, flow: Flow) -> Size {
    if quick {
        Size {
            fabric: Fabric {
                leaves: 4,
                hosts_per_leaf: 4,
                spines: 4,
                gbps: 100,
                prop_ns: 500,
                queue_bytes: 128 * 1024,
                flow,
            },
            kib: 128,
            reps: 1,
        }
    } else {
        Size {
            fabric: Fabric {
                leaves: 16,
                hosts_per_leaf: 8,
                spines: 8,
                gbps: 100,
                prop_ns: 500,
                queue_bytes: 256 * 1024,
                flow,
            },
            kib: 2048,
            reps: 3,
        }
    }
}

/// Background load of the congested runs (fraction of each background host's link): the
/// paper's congestion is a random uniform *injection* pattern, hosts injecting at line rate;
/// its intensity is set by the number of background hosts (Fig. 8), not by their rate.
const CONGESTION: f64 = 1.0;

/// Time the background runs before the allreduce starts (four of its 64-packet rounds at
/// line rate): the paper's allreduces run in a network the other application congests
/// already, not one that starts empty.
const WARMUP_NS: u64 = 20_000;

/// Default flush timeout of Canary's copies.
const FLUSH_NS: u64 = 2000;

fn name(s: Scheme) -> String {
    match s {
        Scheme::Canary { .. } => "canary".into(),
        Scheme::Static { trees: 1 } => "static-1-tree".into(),
        Scheme::Static { trees } => format!("static-{trees}-trees"),
        Scheme::Ring => "ring".into(),
    }
}

/// One run: `tenants` jobs of `share`% of the hosts each (at least 2, at most 64), allocated
/// at random by `seed`; each job's static trees are rooted at a random spine (the paper
/// picks the hosts and the static roots at random in every run).
#[allow(clippy::too_many_arguments)]
fn run(
    sz: Size,
    share: usize,
    scheme: Scheme,
    kib: usize,
    bg: f64,
    noise: f64,
    tenants: usize,
    seed: u64,
) -> Run {
    let f = sz.fabric;
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut hosts: Vec<usize> = (0..f.hosts()).collect();
    hosts.shuffle(&mut rng);
    let per = (f.hosts() * share / 100)
        .min(f.hosts() / tenants.max(1))
        .clamp(2, 64);
    let jobs = (0..tenants)
        .map(|t| Job {
            job: 10 + 10 * t as u16,
            hosts: hosts[t * per..(t + 1) * per].to_vec(),
            elements: kib * 256,
            root_spine: rng.gen_range(0..f.spines),
        })
        .collect();
    Run {
        fabric: f,
        jobs,
        scheme,
        packet_elements: PACKET_ELEMENTS,
        window: 1024,
        load: Load {
            background: bg,
            message_packets: 64,
            noise_prob: noise,
            noise_ns: 1000,
            warmup_ns: if bg > 0.0 { WARMUP_NS } else { 0 },
        },
        faults: Faults::default(),
        rto_ns: 100_000,
        limit_ns: 1_000_000_000,
        seed,
    }
}

/// Mean goodput (Gbit/s) and mean completion time (µs) over the seeds and tenants; fails
/// unless every run finished with exact sums.
#[allow(clippy::too_many_arguments)]
fn measure(
    sz: Size,
    share: usize,
    scheme: Scheme,
    kib: usize,
    bg: f64,
    noise: f64,
    tenants: usize,
    seed: u64,
) -> anyhow::Result<(f64, f64, Outcome)> {
    let (mut g, mut t, mut n) = (0.0, 0.0, 0.0);
    let mut last = None;
    for rep in 0..sz.reps {
        let r = run(sz, share, scheme, kib, bg, noise, tenants, seed + rep);
        let o = simulate(r.clone())?;
        if !o.finished || o.exact.iter().any(|e| !e) {
            bail!(
                "{} (seed {}): not every host ended with the exact sum: {o:?}",
                name(scheme),
                seed + rep
            );
        }
        for j in 0..r.jobs.len() {
            g += o.goodput_gbps(&r, j);
            t += o.job_ns[j] as f64 / 1000.0;
            n += 1.0;
        }
        last = Some(o);
    }
    Ok((g / n, t / n, last.expect("at least one rep")))
}

fn report(out: &Path, stem: &str, head: &str, checks: &[(String, bool)]) -> anyhow::Result<String> {
    let mut s = format!("{head}\n");
    for (c, ok) in checks {
        writeln!(
            s,
            "  [{}] {c}",
            if *ok { "reproduced" } else { "NOT reproduced" }
        )?;
    }
    std::fs::write(out.join(format!("{stem}_checks.txt")), &s)?;
    Ok(s)
}

fn head(sz: Size, hosts: &str, what: &str) -> String {
    let f = sz.fabric;
    let buffers = match f.flow {
        Flow::DropTail => "drop-tail output queues",
        Flow::Lossless => "lossless links (credit-based flow control, buffer per ingress link)",
    };
    format!(
        "{what}: leaf-spine {} leaves x {} hosts, {} spines, {} Gb/s links, {} ns propagation, {} KiB {buffers}; {hosts}, random hosts and static roots per seed, 1 KiB packets, window 1024 blocks, {} seed(s) per point; every run ended with the exact int32 sums",
        f.leaves, f.hosts_per_leaf, f.spines, f.gbps, f.prop_ns, f.queue_bytes / 1024, sz.reps
    )
}

/// The CSV columns of an outcome's counters (after `flow`, the scheme's columns and the
/// figures): drops by place, waits for credit by place, peak queues by place, and the
/// host and switch counters.
const COUNTERS: &str = "queue_drops,drops_leaf_up,drops_spine_down,drops_leaf_host,stalls_host_nic,stalls_leaf_up,stalls_spine_down,peak_queue_leaf_up,peak_queue_spine_down,peak_queue_leaf_host,retransmits,leader_partials,stragglers";

/// An outcome's counters in [`COUNTERS`] order.
fn counters(o: &Outcome) -> String {
    format!(
        "{},{},{},{},{},{},{},{},{},{},{},{},{}",
        o.queue_drops,
        o.drops_at[0],
        o.drops_at[1],
        o.drops_at[2],
        o.stalls_at[0],
        o.stalls_at[1],
        o.stalls_at[2],
        o.peak_queue[0],
        o.peak_queue[1],
        o.peak_queue[2],
        o.hosts.retransmits,
        o.hosts.leader_partials,
        o.switch.stragglers
    )
}

/// Figs. 7/8: goodput of each scheme with and without congestion.
pub fn congestion(out: &Path, seed: u64, quick: bool, flow: Flow) -> anyhow::Result<String> {
    let sz = size(quick, flow);
    let schemes = [
        Scheme::Canary { flush_ns: FLUSH_NS },
        Scheme::Static { trees: 4 },
        Scheme::Static { trees: 1 },
        Scheme::Ring,
    ];
    let mut csv = format!("flow,scheme,background,goodput_gbps,runtime_us,{COUNTERS}\n");
    let mut rows = Vec::new();
    for &bg in &[0.0, CONGESTION] {
        for &s in &schemes {
            let (g, t, o) = measure(sz, SHARE_FIG7, s, sz.kib, bg, 0.0, 1, seed)?;
            writeln!(
                csv,
                "{},{},{bg},{g:.3},{t:.3},{}",
                flow.name(),
                name(s),
                counters(&o)
            )?;
            rows.push((s, bg, g));
        }
    }
    std::fs::write(out.join("canary_congestion.csv"), &csv)?;
    let get = |s: Scheme, bg: f64| {
        rows.iter()
            .find(|r| r.0 == s && r.1 == bg)
            .map(|r| r.2)
            .expect("measured")
    };
    let series: Vec<Series> = schemes
        .iter()
        .map(|&s| Series {
            label: name(s),
            points: vec![(0.0, get(s, 0.0)), (CONGESTION, get(s, CONGESTION))],
        })
        .collect();
    line_chart(
        &out.join("canary_congestion.svg"),
        "Canary Figs. 7/8: allreduce goodput without and with congestion",
        "background load (fraction of line rate)",
        "goodput (Gb/s)",
        &series,
        false,
    )?;
    let (c, s4, s1) = (
        get(schemes[0], CONGESTION),
        get(schemes[1], CONGESTION),
        get(schemes[2], CONGESTION),
    );
    let (c0, s0) = (get(schemes[0], 0.0), get(schemes[2], 0.0));
    let checks = vec![
        (
            format!("under congestion, Canary {c:.1} > four static trees {s4:.1} > one static tree {s1:.1} Gb/s"),
            c > s4 && s4 > s1,
        ),
        (
            format!(
                "without congestion, Canary {c0:.1} Gb/s is within 10% of one static tree {s0:.1} Gb/s ({:+.1}%)",
                100.0 * (c0 / s0 - 1.0)
            ),
            c0 >= 0.9 * s0,
        ),
    ];
    report(
        out,
        "canary_congestion",
        &head(sz, &format!("{SHARE_FIG7}% of the hosts in the allreduce"), &format!("canary-congestion: {} KiB per host, background {CONGESTION} of line rate from the other hosts (a random derangement per 64-packet round, {} us of it before the allreduce), Canary flush {FLUSH_NS} ns", sz.kib, WARMUP_NS / 1000)),
        &checks,
    )
}

/// Fig. 9: runtime against the allreduce size, with and without congestion.
pub fn sizes(out: &Path, seed: u64, quick: bool, flow: Flow) -> anyhow::Result<String> {
    let sz = size(quick, flow);
    let kibs: Vec<usize> = if quick {
        vec![1, 16, 128]
    } else {
        vec![1, 16, 256, 1024, 4096]
    };
    let schemes = [
        Scheme::Canary { flush_ns: FLUSH_NS },
        Scheme::Static { trees: 1 },
        Scheme::Ring,
    ];
    let mut csv = format!("flow,scheme,background,kib,runtime_us,goodput_gbps,{COUNTERS}\n");
    let mut rows = Vec::new();
    for &bg in &[0.0, CONGESTION] {
        for &s in &schemes {
            for &k in &kibs {
                let (g, t, o) = measure(sz, SHARE_FIG9, s, k, bg, 0.0, 1, seed)?;
                writeln!(
                    csv,
                    "{},{},{bg},{k},{t:.3},{g:.3},{}",
                    flow.name(),
                    name(s),
                    counters(&o)
                )?;
                rows.push((s, bg, k, t));
            }
        }
    }
    std::fs::write(out.join("canary_size.csv"), &csv)?;
    let series: Vec<Series> = [0.0, CONGESTION]
        .iter()
        .flat_map(|&bg| {
            let rows = &rows;
            schemes.iter().map(move |&s| Series {
                label: format!("{} bg {bg}", name(s)),
                points: rows
                    .iter()
                    .filter(|r| r.0 == s && r.1 == bg)
                    .map(|r| (r.2 as f64, r.3))
                    .collect(),
            })
        })
        .collect();
    line_chart(
        &out.join("canary_size.svg"),
        "Canary Fig. 9: allreduce runtime against size",
        "KiB per host",
        "runtime (us)",
        &series,
        true,
    )?;
    let t = |s: Scheme, k: usize| {
        rows.iter()
            .find(|r| r.0 == s && r.1 == 0.0 && r.2 == k)
            .map(|r| r.3)
            .expect("measured")
    };
    let (c1, s1) = (t(schemes[0], 1), t(schemes[1], 1));
    let checks = vec![(
        format!("at 1 KiB without congestion, Canary {c1:.2} us is slower than the static tree {s1:.2} us (the flush timeout's cost)"),
        c1 > s1,
    )];
    report(
        out,
        "canary_size",
        &head(
            sz,
            &format!("{SHARE_FIG9}% of the hosts in the allreduce"),
            &format!("canary-size: sizes {kibs:?} KiB, background 0 and {CONGESTION}"),
        ),
        &checks,
    )
}

/// Fig. 11: goodput against the flush timeout, at several host-noise probabilities.
pub fn timeouts(out: &Path, seed: u64, quick: bool, flow: Flow) -> anyhow::Result<String> {
    let sz = size(quick, flow);
    let flushes: Vec<u64> = if quick {
        vec![250, 1000, 4000]
    } else {
        vec![250, 500, 1000, 2000, 4000, 8000, 16000]
    };
    let noises: &[f64] = if quick {
        &[0.0001, 0.1]
    } else {
        &[0.0001, 0.01, 0.1]
    };
    let mut csv =
        String::from("flow,noise,flush_ns,goodput_gbps,runtime_us,switch_timeouts,stragglers\n");
    let mut rows = Vec::new();
    for &p in noises {
        for &fl in &flushes {
            let s = Scheme::Canary { flush_ns: fl };
            let (g, t, o) = measure(sz, SHARE_FIG7, s, sz.kib, 0.0, p, 1, seed)?;
            writeln!(
                csv,
                "{},{p},{fl},{g:.3},{t:.3},{},{}",
                flow.name(),
                o.switch.timeouts,
                o.switch.stragglers
            )?;
            rows.push((p, fl, g));
        }
    }
    let (g4, _, _) = measure(
        sz,
        SHARE_FIG7,
        Scheme::Static { trees: 4 },
        sz.kib,
        0.0,
        0.01,
        1,
        seed,
    )?;
    writeln!(csv, "{},0.01,static-4-trees,{g4:.3},,,", flow.name())?;
    std::fs::write(out.join("canary_timeout.csv"), &csv)?;
    let series: Vec<Series> = noises
        .iter()
        .map(|&p| Series {
            label: format!("noise {p}"),
            points: rows
                .iter()
                .filter(|r| r.0 == p)
                .map(|r| (r.1 as f64, r.2))
                .collect(),
        })
        .collect();
    line_chart(
        &out.join("canary_timeout.svg"),
        "Canary Fig. 11: goodput against the flush timeout and host noise",
        "flush timeout (ns)",
        "goodput (Gb/s)",
        &series,
        true,
    )?;
    let curves: Vec<(f64, Vec<f64>)> = noises
        .iter()
        .map(|&p| (p, rows.iter().filter(|r| r.0 == p).map(|r| r.2).collect()))
        .collect();
    let monotonic =
        |v: &[f64]| v.windows(2).all(|w| w[1] >= w[0]) || v.windows(2).all(|w| w[1] <= w[0]);
    let shown: Vec<String> = curves
        .iter()
        .map(|(p, v)| {
            let v: Vec<String> = v.iter().map(|g| format!("{g:.1}")).collect();
            format!("noise {p}: [{}]", v.join(", "))
        })
        .collect();
    let checks = vec![(
        format!(
            "goodput is not monotonic in the timeout for some noise level (Gb/s over {flushes:?} ns: {})",
            shown.join("; ")
        ),
        curves.iter().any(|(_, v)| !monotonic(v)),
    )];
    report(
        out,
        "canary_timeout",
        &head(sz, &format!("{SHARE_FIG7}% of the hosts in the allreduce"), &format!("canary-timeout: {} KiB per host, no background, noisy packets delayed 1 us; four static trees at noise 0.01: {g4:.1} Gb/s", sz.kib)),
        &checks,
    )
}

/// Fig. 10: several concurrent allreduces (tenants) that split the hosts equally.
pub fn tenants(out: &Path, seed: u64, quick: bool, flow: Flow) -> anyhow::Result<String> {
    let sz = size(quick, flow);
    // The paper splits all hosts equally among the allreduces (Fig. 10); a static tree takes
    // at most 64 ranks, so the full fabric's 128 hosts start at two allreduces.
    let counts: Vec<usize> = if quick { vec![1, 2, 4] } else { vec![2, 4, 8] };
    let schemes = [
        Scheme::Canary { flush_ns: FLUSH_NS },
        Scheme::Static { trees: 4 },
        Scheme::Static { trees: 1 },
    ];
    let mut csv = format!("flow,scheme,tenants,goodput_gbps,runtime_us,{COUNTERS}\n");
    let mut rows = Vec::new();
    for &s in &schemes {
        for &n in &counts {
            let (g, t, o) = measure(sz, 100, s, sz.kib, 0.0, 0.0, n, seed)?;
            writeln!(
                csv,
                "{},{},{n},{g:.3},{t:.3},{}",
                flow.name(),
                name(s),
                counters(&o)
            )?;
            rows.push((s, n, g));
        }
    }
    std::fs::write(out.join("canary_tenants.csv"), &csv)?;
    let series: Vec<Series> = schemes
        .iter()
        .map(|&s| Series {
            label: name(s),
            points: rows
                .iter()
                .filter(|r| r.0 == s)
                .map(|r| (r.1 as f64, r.2))
                .collect(),
        })
        .collect();
    line_chart(
        &out.join("canary_tenants.svg"),
        "Canary Fig. 10: goodput per allreduce against concurrent allreduces",
        "concurrent allreduces",
        "goodput per allreduce (Gb/s)",
        &series,
        false,
    )?;
    let most = *counts.last().expect("counts");
    let g = |s: Scheme| {
        rows.iter()
            .find(|r| r.0 == s && r.1 == most)
            .map(|r| r.2)
            .expect("measured")
    };
    let (c, s1) = (g(schemes[0]), g(schemes[2]));
    let checks = vec![(
        format!("with {most} concurrent allreduces Canary {c:.1} Gb/s beats one static tree per job {s1:.1} Gb/s"),
        c > s1,
    )];
    report(
        out,
        "canary_tenants",
        &head(sz, "the hosts split equally among the allreduces", &format!("canary-tenants: {counts:?} concurrent allreduces of {} KiB per host, no background (each tenant is the others' congestion)", sz.kib)),
        &checks,
    )
}

/// Runs `fanin experiment canary-*` and prints the checks.
pub fn run_experiment(args: &fanin_placement::cli::ExperimentArgs) -> anyhow::Result<()> {
    use fanin_placement::cli::FlowArg;
    use fanin_placement::experiment::Name;
    let out = &args.out;
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    let flow = match args.flow {
        None => DEFAULT_FLOW,
        Some(FlowArg::Lossless) => Flow::Lossless,
        Some(FlowArg::DropTail) => Flow::DropTail,
    };
    let s = match args.name {
        Name::CanaryCongestion => congestion(out, args.seed, args.quick, flow)?,
        Name::CanarySize => sizes(out, args.seed, args.quick, flow)?,
        Name::CanaryTimeout => timeouts(out, args.seed, args.quick, flow)?,
        Name::CanaryTenants => tenants(out, args.seed, args.quick, flow)?,
        other => bail!("{other:?} is not a Canary experiment"),
    };
    println!("{s}");
    Ok(())
}
