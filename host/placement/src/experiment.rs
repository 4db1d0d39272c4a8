//! `fanin experiment NAME`: reproductions of the papers' evaluations on their settings.
//! Each writes a CSV and one SVG per figure panel into the output directory and returns a
//! summary table. The experiment ↔ figure mapping is in docs/placement.md.

use std::fmt::Write as _;
use std::path::Path;

use anyhow::{Context, Result};

use crate::metrics::Scale;
use crate::multi::online;
use crate::paring::{self, GraphPlacement, ParingConfig};
use crate::plot::{line_chart, Series};
use crate::rational::{int, parse_rat, to_f64, Rat};
use crate::topology::{binary_tree, fat_tree, programmable_order, Graph, RateScheme, Tree};
use crate::workload::{rng, LoadSpec};
use crate::{place, TreeAlgo};

/// Experiments `fanin experiment` can run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Name {
    /// SOAR Fig. 6: BT(256), three rate schemes × two load laws, k = 1..32.
    Soar,
    /// SOAR Fig. 7: online workloads on BT(256), k = 16, switch capacities.
    SoarMulti,
    /// SMC Figs. 2 and 3: BT(256) congestion, three rate schemes × two load laws.
    Smc,
    /// SMC Figs. 4 and 5: online workloads, k = 16, switch capacities.
    SmcMulti,
    /// PARING Figs. 2–4: fat-tree k = 6, workers sweep.
    ParingWorkers,
    /// PARING Figs. 5–7: fat-tree k = 6, programmable-switch sweep.
    ParingProgrammable,
    /// PARING Figs. 8–10: fat-tree k = 6, rate-limit sweep.
    ParingRate,
    /// PARING Figs. 11–13: group 1 under coarse-grained routing.
    ParingWorkersCoarse,
    /// PARING Figs. 14–16: group 2 under coarse-grained routing.
    ParingProgrammableCoarse,
    /// PARING Figs. 17–19: group 3 under coarse-grained routing.
    ParingRateCoarse,
    /// All of the above (not the ASK experiments).
    All,
    /// ASK Fig. 9: hot-key prioritisation (run by the `fanin` binary).
    AskPrioritisation,
    /// ASK Fig. 8: goodput against tuples per packet (run by the `fanin` binary).
    AskGoodput,
    /// Canary Figs. 7/8: goodput with and without congestion (run by the `fanin` binary).
    CanaryCongestion,
    /// Canary Fig. 9: runtime against allreduce size (run by the `fanin` binary).
    CanarySize,
    /// Canary Fig. 11: goodput against the flush timeout and host noise (`fanin` binary).
    CanaryTimeout,
    /// Canary Fig. 10: concurrent allreduces (run by the `fanin` binary).
    CanaryTenants,
}

impl Name {
    /// True for the ASK experiments, which need the `fanin` binary's software switch.
    pub fn is_ask(self) -> bool {
        matches!(self, Name::AskPrioritisation | Name::AskGoodput)
    }

    /// True for the Canary experiments, which run the fabric simulator in the `fanin` binary.
    pub fn is_canary(self) -> bool {
        matches!(
            self,
            Name::CanaryCongestion | Name::CanarySize | Name::CanaryTimeout | Name::CanaryTenants
        )
    }
}

const KS: [usize; 6] = [1, 2, 4, 8, 16, 32];

/// Runs experiment `name` into `out` with `reps` repetitions per point.
pub fn run(name: Name, out: &Path, reps: usize, seed: u64) -> Result<String> {
    std::fs::create_dir_all(out).with_context(|| format!("creating {}", out.display()))?;
    match name {
        Name::Soar => tree_sweep(out, reps, seed, true),
        Name::Smc => tree_sweep(out, reps, seed, false),
        Name::SoarMulti => multi_sweep(out, reps, seed, true),
        Name::SmcMulti => multi_sweep(out, reps, seed, false),
        Name::ParingWorkers => paring_sweep(out, Sweep::Workers, false),
        Name::ParingProgrammable => paring_sweep(out, Sweep::Programmable, false),
        Name::ParingRate => paring_sweep(out, Sweep::Rate, false),
        Name::ParingWorkersCoarse => paring_sweep(out, Sweep::Workers, true),
        Name::ParingProgrammableCoarse => paring_sweep(out, Sweep::Programmable, true),
        Name::ParingRateCoarse => paring_sweep(out, Sweep::Rate, true),
        Name::AskPrioritisation
        | Name::AskGoodput
        | Name::CanaryCongestion
        | Name::CanarySize
        | Name::CanaryTimeout
        | Name::CanaryTenants => {
            anyhow::bail!("{name:?} runs through the fanin binary: fanin experiment <name>")
        }
        Name::All => {
            let mut s = String::new();
            for n in [
                Name::Soar,
                Name::SoarMulti,
                Name::Smc,
                Name::SmcMulti,
                Name::ParingWorkers,
                Name::ParingProgrammable,
                Name::ParingRate,
                Name::ParingWorkersCoarse,
                Name::ParingProgrammableCoarse,
                Name::ParingRateCoarse,
            ] {
                s += &run(n, out, reps, seed)?;
                s += "\n";
            }
            Ok(s)
        }
    }
}

fn schemes(soar: bool) -> Vec<(&'static str, RateScheme)> {
    let exp = if soar {
        ("exp2", RateScheme::Exponential(int(2)))
    } else {
        ("exp1.5", RateScheme::Exponential(int(3) / int(2)))
    };
    vec![
        ("constant", RateScheme::Constant),
        ("linear", RateScheme::Linear),
        exp,
    ]
}

fn uniform(soar: bool) -> (u64, u64) {
    if soar {
        (4, 6)
    } else {
        (1, 9)
    }
}

fn bt(scheme: &RateScheme) -> Tree {
    let mut t = binary_tree(256).expect("bt:256");
    scheme.apply(&mut t);
    t
}

fn ratio(a: &Rat, b: &Rat) -> f64 {
    if *b == int(0) {
        1.0
    } else {
        to_f64(&(a / b))
    }
}

fn metric(soar: bool, p: &crate::Placement) -> &Rat {
    if soar {
        &p.metrics.utilization
    } else {
        &p.metrics.congestion
    }
}

/// SOAR Fig. 6 (normalised to all-red) or SMC Figs. 2/3 (absolute, and normalised to SMC).
fn tree_sweep(out: &Path, reps: usize, seed: u64, soar: bool) -> Result<String> {
    let (tag, opt) = if soar {
        ("soar", TreeAlgo::Soar)
    } else {
        ("smc", TreeAlgo::Smc)
    };
    let algos = [
        opt,
        TreeAlgo::Top,
        TreeAlgo::Max,
        TreeAlgo::Level,
        TreeAlgo::AllBlue,
        TreeAlgo::AllRed,
    ];
    let mut csv = String::from("rates,loads,k,algorithm,value,normalized\n");
    let mut summary = vec![(
        format!("{tag}: BT(256), {reps} reps"),
        "k=1 / k=8 / k=32, normalised".to_string(),
    )];
    for (si, (sname, scheme)) in schemes(soar).into_iter().enumerate() {
        let tree = bt(&scheme);
        let scale = Scale::new(&tree)?;
        let avail = vec![true; tree.len()];
        let (lo, hi) = uniform(soar);
        for (lname, spec) in [
            ("power-law", LoadSpec::PowerLaw),
            ("uniform", LoadSpec::Uniform(lo, hi)),
        ] {
            // sums[algo][k] = (Σ value, Σ normalised)
            let mut sums = vec![vec![(0f64, 0f64); KS.len()]; algos.len()];
            for rep in 0..reps {
                let loads = spec
                    .generate(&tree, &mut rng(seed.wrapping_add(rep as u64)))
                    .map_err(anyhow::Error::msg)?;
                for (ki, &k) in KS.iter().enumerate() {
                    let best = place(opt, &tree, &scale, &loads, &avail, k, 0)?;
                    let red = place(TreeAlgo::AllRed, &tree, &scale, &loads, &avail, k, 0)?;
                    for (ai, &a) in algos.iter().enumerate() {
                        let p = if a == opt {
                            best.clone()
                        } else {
                            place(a, &tree, &scale, &loads, &avail, k, seed)?
                        };
                        let base = if soar {
                            metric(soar, &red)
                        } else {
                            metric(soar, &best)
                        };
                        sums[ai][ki].0 += to_f64(metric(soar, &p));
                        sums[ai][ki].1 += ratio(metric(soar, &p), base);
                    }
                }
            }
            let mut series = Vec::new();
            for (ai, a) in algos.iter().enumerate() {
                let mut pts = Vec::new();
                for (ki, &k) in KS.iter().enumerate() {
                    let (v, r) = (sums[ai][ki].0 / reps as f64, sums[ai][ki].1 / reps as f64);
                    writeln!(csv, "{sname},{lname},{k},{},{v},{r}", a.name())?;
                    pts.push((k as f64, if soar { r } else { v }));
                }
                let keep = if soar {
                    *a != TreeAlgo::AllRed
                } else {
                    matches!(a, TreeAlgo::Smc | TreeAlgo::AllBlue | TreeAlgo::AllRed)
                };
                if keep {
                    series.push(Series {
                        label: a.name().into(),
                        points: pts,
                    });
                }
                let at = |i: usize| sums[ai][i].1 / reps as f64;
                summary.push((
                    format!("{sname}/{lname} {}", a.name()),
                    format!("{:.3} / {:.3} / {:.3}", at(0), at(3), at(5)),
                ));
            }
            let panel = (b'a' + si as u8) as char;
            if soar {
                let f = out.join(format!("soar-fig6{panel}-{lname}.svg"));
                line_chart(
                    &f,
                    &format!("SOAR Fig. 6{panel}: {sname} rates, {lname} load"),
                    "k",
                    "utilisation / all-red",
                    &series,
                    true,
                )?;
            } else {
                let f = out.join(format!("smc-fig2{panel}-{lname}.svg"));
                line_chart(
                    &f,
                    &format!("SMC Fig. 2{panel}: {sname} rates, {lname} load"),
                    "k",
                    "congestion",
                    &series,
                    true,
                )?;
                let norm: Vec<Series> = algos
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| !matches!(a, TreeAlgo::AllBlue))
                    .map(|(ai, a)| Series {
                        label: a.name().into(),
                        points: KS
                            .iter()
                            .enumerate()
                            .map(|(ki, &k)| (k as f64, sums[ai][ki].1 / reps as f64))
                            .collect(),
                    })
                    .collect();
                let f = out.join(format!("smc-fig3{panel}-{lname}.svg"));
                line_chart(
                    &f,
                    &format!("SMC Fig. 3{panel}: {sname} rates, {lname} load"),
                    "k",
                    "congestion / SMC",
                    &norm,
                    true,
                )?;
            }
        }
    }
    std::fs::write(out.join(format!("{tag}.csv")), csv)?;
    Ok(crate::cli::table(&summary))
}

/// SOAR Fig. 7 / SMC Figs. 4–5: online workloads, k = 16, cumulative metric / all-red.
fn multi_sweep(out: &Path, reps: usize, seed: u64, soar: bool) -> Result<String> {
    let (tag, opt) = if soar {
        ("soar-multi", TreeAlgo::Soar)
    } else {
        ("smc-multi", TreeAlgo::Smc)
    };
    let algos = [opt, TreeAlgo::Top, TreeAlgo::Max, TreeAlgo::Level];
    let k = 16;
    let counts = [1usize, 2, 4, 8, 16, 32];
    let caps: Vec<u32> = if soar {
        vec![1, 2, 4, 8, 16, 32]
    } else {
        vec![4, 8, 16, 32]
    };
    let (lo, hi) = uniform(soar);
    let mut csv = String::from("rates,sweep,x,algorithm,normalized\n");
    let mut summary = vec![(
        format!("{tag}: BT(256), k=16, {reps} reps"),
        "32 workloads at capacity 4, normalised to all-red".to_string(),
    )];
    for (si, (sname, scheme)) in schemes(soar).into_iter().enumerate() {
        let tree = bt(&scheme);
        let scale = Scale::new(&tree)?;
        let panel = (b'a' + si as u8) as char;
        let points: Vec<(&str, usize, u32)> = counts
            .iter()
            .map(|&w| ("workloads", w, 4u32))
            .chain(caps.iter().map(|&c| ("capacity", 32usize, c)))
            .collect();
        let mut sums = vec![vec![0f64; points.len()]; algos.len()];
        for rep in 0..reps {
            let mut r = rng(seed.wrapping_add(rep as u64));
            let spec = LoadSpec::Mixed(lo, hi);
            let all: Vec<Vec<u64>> = (0..32)
                .map(|_| spec.generate(&tree, &mut r))
                .collect::<Result<_, _>>()
                .map_err(anyhow::Error::msg)?;
            for (pi, &(_, w, c)) in points.iter().enumerate() {
                let cap = vec![c; tree.len()];
                let red = online(&tree, &scale, &all[..w], k, &cap, TreeAlgo::AllRed, 0)?;
                for (ai, &a) in algos.iter().enumerate() {
                    let o = online(&tree, &scale, &all[..w], k, &cap, a, seed)?;
                    sums[ai][pi] += if soar {
                        ratio(&o.utilization, &red.utilization)
                    } else {
                        ratio(&o.congestion, &red.congestion)
                    };
                }
            }
        }
        for sweep in ["workloads", "capacity"] {
            let mut series = Vec::new();
            for (ai, a) in algos.iter().enumerate() {
                let mut pts = Vec::new();
                for (pi, &(s, w, c)) in points.iter().enumerate() {
                    if s != sweep {
                        continue;
                    }
                    let x = if sweep == "workloads" {
                        w as f64
                    } else {
                        c as f64
                    };
                    let v = sums[ai][pi] / reps as f64;
                    writeln!(csv, "{sname},{sweep},{x},{},{v}", a.name())?;
                    pts.push((x, v));
                    if sweep == "workloads" && w == 32 {
                        summary.push((format!("{sname} {}", a.name()), format!("{v:.3}")));
                    }
                }
                series.push(Series {
                    label: a.name().into(),
                    points: pts,
                });
            }
            let (fig, title) = match (soar, sweep) {
                (true, "workloads") => (
                    format!("soar-fig7{panel}-workloads"),
                    format!("SOAR Fig. 7{panel} (top): {sname} rates, capacity 4"),
                ),
                (true, _) => (
                    format!("soar-fig7{panel}-capacity"),
                    format!("SOAR Fig. 7{panel} (bottom): {sname} rates, 32 workloads"),
                ),
                (false, "workloads") => (
                    format!("smc-fig4{panel}"),
                    format!("SMC Fig. 4{panel}: {sname} rates, capacity 4"),
                ),
                (false, _) => (
                    format!("smc-fig5{panel}"),
                    format!("SMC Fig. 5{panel}: {sname} rates, 32 workloads"),
                ),
            };
            let y = if soar {
                "cumulative utilisation / all-red"
            } else {
                "cumulative congestion / all-red"
            };
            line_chart(
                &out.join(format!("{fig}.svg")),
                &title,
                sweep,
                y,
                &series,
                true,
            )?;
        }
    }
    std::fs::write(out.join(format!("{tag}.csv")), csv)?;
    Ok(crate::cli::table(&summary))
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sweep {
    Workers,
    Programmable,
    Rate,
}

fn paring_graph(m: usize) -> Graph {
    let mut g = fat_tree(6).expect("fat-tree:6");
    let order = programmable_order(&g, 6);
    g.set_programmable(&order[..m]);
    g
}

/// PARING groups 1–3 (fine-grained routing) or 4–6 (`coarse`: no partial aggregation):
/// fat-tree k = 6, B = 10 Gbps, b = 1627 MB.
fn paring_sweep(out: &Path, sweep: Sweep, coarse: bool) -> Result<String> {
    let gradient = parse_rat("1627/1024").expect("constant");
    let (base, xs, x_label): (&str, Vec<String>, &str) = match sweep {
        Sweep::Workers => (
            "paring-workers",
            [5, 10, 15, 20, 25, 30, 35]
                .iter()
                .map(|x| x.to_string())
                .collect(),
            "workers",
        ),
        Sweep::Programmable => (
            "paring-programmable",
            [2, 4, 6, 8, 10, 12].iter().map(|x| x.to_string()).collect(),
            "programmable switches",
        ),
        Sweep::Rate => (
            "paring-rate",
            ["0.4", "1", "2", "3", "4", "5", "6"]
                .iter()
                .map(|x| x.to_string())
                .collect(),
            "R (Gbps)",
        ),
    };
    let tag = if coarse {
        format!("{base}-coarse")
    } else {
        base.to_string()
    };
    let names = ["paring", "deepsys", "atp"];
    let mut rows: Vec<Vec<GraphPlacement>> = vec![Vec::new(); names.len()];
    let mut csv = String::from("x,algorithm,rate_gbps,traffic_gb,time_s,hops\n");
    for x in &xs {
        let (n, m, r) = match sweep {
            Sweep::Workers => (x.parse().unwrap(), 8, int(5)),
            Sweep::Programmable => (20, x.parse().unwrap(), int(5)),
            Sweep::Rate => (20, 8, parse_rat(x).unwrap()),
        };
        let g = paring_graph(m);
        let cfg = ParingConfig {
            workers: n,
            capacity: int(10),
            rate_limit: r,
            gradient: gradient.clone(),
        };
        let res = if coarse {
            [
                paring::paring_coarse(&g, &cfg)?,
                paring::deepsys(&g, &cfg)?,
                paring::atp_coarse(&g, &cfg)?,
            ]
        } else {
            [
                paring::paring(&g, &cfg)?,
                paring::deepsys(&g, &cfg)?,
                paring::atp(&g, &cfg)?,
            ]
        };
        for (i, p) in res.into_iter().enumerate() {
            writeln!(
                csv,
                "{x},{},{},{},{},{}",
                names[i],
                to_f64(&p.rate),
                to_f64(&p.traffic),
                to_f64(&p.time),
                p.hops
            )?;
            rows[i].push(p);
        }
    }
    std::fs::write(out.join(format!("{tag}.csv")), csv)?;
    let figs = match (sweep, coarse) {
        (Sweep::Workers, false) => [2, 3, 4],
        (Sweep::Programmable, false) => [5, 6, 7],
        (Sweep::Rate, false) => [8, 9, 10],
        (Sweep::Workers, true) => [11, 12, 13],
        (Sweep::Programmable, true) => [14, 15, 16],
        (Sweep::Rate, true) => [17, 18, 19],
    };
    let routing = if coarse { "coarse" } else { "fine" };
    let xv: Vec<f64> = xs.iter().map(|x| to_f64(&parse_rat(x).unwrap())).collect();
    type Metric = (&'static str, &'static str, fn(&GraphPlacement) -> f64);
    let metrics: [Metric; 3] = [
        ("traffic", "traffic (GB)", |p| to_f64(&p.traffic)),
        ("rate", "sending rate (Gbps)", |p| to_f64(&p.rate)),
        ("time", "communication time (s)", |p| to_f64(&p.time)),
    ];
    for ((mname, ylabel, f), fig) in metrics.iter().zip(figs) {
        let series: Vec<Series> = names
            .iter()
            .enumerate()
            .map(|(i, n)| Series {
                label: n.to_string(),
                points: xv.iter().copied().zip(rows[i].iter().map(f)).collect(),
            })
            .collect();
        line_chart(
            &out.join(format!("paring-fig{fig}-{mname}.svg")),
            &format!("PARING Fig. {fig}: {mname} vs {x_label} ({routing}-grained routing)"),
            x_label,
            ylabel,
            &series,
            false,
        )?;
    }
    let mut summary = vec![(
        format!("{tag}: fat-tree k=6, B=10 Gbps, b=1627 MB, {routing}-grained routing"),
        "rate Gbps / traffic GB / time s".to_string(),
    )];
    for (xi, x) in xs.iter().enumerate() {
        for (i, n) in names.iter().enumerate() {
            let p = &rows[i][xi];
            summary.push((
                format!("{x_label}={x} {n}"),
                format!(
                    "{:.3} / {:.1} / {:.2}",
                    to_f64(&p.rate),
                    to_f64(&p.traffic),
                    to_f64(&p.time)
                ),
            ));
        }
    }
    Ok(crate::cli::table(&summary))
}
