//! fanin's allreduce against torch.distributed's gloo `all_reduce`, measured in one run on one
//! machine: same worker counts, tensor sizes and dtypes, loopback, CPU.
//!
//! ```text
//! cargo build --release -p fanin --bin fanin-vs-gloo
//! target/release/fanin-vs-gloo --svg target/bench/vs-gloo.svg
//! ```
//!
//! For every (workers, dtype, size) it prints gloo's and fanin's median time and their ratio
//! (gloo time / fanin time: above 1 means fanin is faster), and checks every sum of both
//! (fanin: int32 exact, float32 within the quantisation bound; gloo: exact on integer-valued
//! tensors). gloo runs from `--python` (default: the workspace's `target/venv`) with the
//! script `host/benches/gloo_allreduce.py`; `--no-gloo` measures fanin alone. Exits non-zero
//! if any sum is wrong.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{bail, Context};
use clap::Parser;
use fanin::allreduce::{self, AllreduceConfig};
use fanin::link::Faults;
use fanin_placement::plot::{line_chart, Series};

/// Flags.
#[derive(Parser, Debug)]
#[command(about = "fanin allreduce vs gloo all_reduce on loopback")]
struct Args {
    /// Worker counts.
    #[arg(long, value_delimiter = ',', default_value = "2,4")]
    workers: Vec<u8>,
    /// Tensor sizes per worker in bytes.
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "262144,1048576,4194304,16777216,67108864"
    )]
    sizes: Vec<usize>,
    /// Dtypes: float32 (fanin quantises) and int32 (exact).
    #[arg(long, value_delimiter = ',', default_value = "float32,int32")]
    dtypes: Vec<String>,
    /// Timed repetitions per point (the median is reported).
    #[arg(long, default_value_t = 5)]
    reps: usize,
    /// fanin elements per packet.
    #[arg(long, default_value_t = 2048)]
    packet_elements: u16,
    /// fanin blocks in flight per worker.
    #[arg(long, default_value_t = 64)]
    window: u32,
    /// fanin retransmission timeout in milliseconds (a loaded machine delays answers: too
    /// short a timeout resends blocks the switch still has queued).
    #[arg(long, default_value_t = 100)]
    retransmit_ms: u64,
    /// fanin slots of the job.
    #[arg(long, default_value_t = 256)]
    slots: u32,
    /// Python with torch [default: the workspace's target/venv/bin/python].
    #[arg(long)]
    python: Option<PathBuf>,
    /// Measure fanin only.
    #[arg(long)]
    no_gloo: bool,
    /// The switch takes the model's frame path (to measure the datagram fast path).
    #[arg(long)]
    frame_path: bool,
    /// Write the plot (time against size) here.
    #[arg(long)]
    svg: Option<PathBuf>,
}

/// One measured point.
#[derive(Debug, Clone)]
struct Point {
    workers: u8,
    dtype: String,
    bytes: usize,
    gloo: Option<f64>,
    fanin: f64,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// gloo's median seconds per (dtype, bytes), from the script.
fn gloo(py: &Path, workers: u8, reps: usize, jobs: &[(String, usize)]) -> anyhow::Result<Vec<f64>> {
    let script = workspace().join("host/benches/gloo_allreduce.py");
    let mut cmd = Command::new(py);
    cmd.arg(&script)
        .arg(workers.to_string())
        .arg(reps.to_string())
        .args(jobs.iter().map(|(d, b)| format!("{d}:{b}")))
        .stdout(Stdio::piped());
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {} (pass --python or --no-gloo)", py.display()))?;
    let mut out = Vec::new();
    for line in BufReader::new(child.stdout.take().expect("piped")).lines() {
        let v: serde_json::Value = serde_json::from_str(&line?)?;
        if v["ok"] != serde_json::Value::Bool(true) {
            bail!("gloo gave a wrong sum: {v}");
        }
        out.push(
            v["median"]
                .as_f64()
                .context("gloo output without a median")?,
        );
    }
    let st = child.wait()?;
    if !st.success() || out.len() != jobs.len() {
        bail!(
            "the gloo script failed ({st}) after {} of {} sizes",
            out.len(),
            jobs.len()
        );
    }
    Ok(out)
}

/// fanin's median seconds (wall time from the workers' start to the last one's finish).
fn fanin(a: &Args, workers: u8, dtype: &str, bytes: usize) -> anyhow::Result<f64> {
    let cfg = AllreduceConfig {
        workers,
        elements: bytes / 4,
        packet_elements: a.packet_elements,
        slots: a.slots,
        window: a.window,
        retransmit: Duration::from_millis(a.retransmit_ms),
        faults: Faults::default(),
        seed: 1,
        verify: false,
        int: dtype == "int32",
        timeout: Duration::from_secs(30),
        frame_path: a.frame_path,
    };
    let data = allreduce::tensors(&cfg);
    let stop = Arc::new(AtomicBool::new(false));
    let mut secs = Vec::new();
    for rep in 0..=a.reps {
        // The first (untimed) run checks every sum.
        let c = AllreduceConfig {
            verify: rep == 0,
            ..cfg.clone()
        };
        let r = allreduce::run_on(&c, &data, stop.clone())?;
        if rep == 0 {
            let (bad, n) = &r.mismatches;
            if *n > 0 || r.checked != cfg.elements * workers as usize {
                bail!("fanin gave {n} wrong sums ({workers} workers, {dtype}, {bytes} B): {bad:?}");
            }
        } else {
            secs.push(r.elapsed.as_secs_f64());
        }
    }
    Ok(median(secs))
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    for d in &a.dtypes {
        if d != "float32" && d != "int32" {
            bail!("--dtypes {d}: must be float32 or int32");
        }
    }
    if a.reps == 0 || a.sizes.iter().any(|&s| s < 4 || s % 4 != 0) {
        bail!("--reps must be at least 1 and every size a positive multiple of 4 bytes");
    }
    let py = a
        .python
        .clone()
        .unwrap_or_else(|| workspace().join("target/venv/bin/python"));
    let jobs: Vec<(String, usize)> = a
        .dtypes
        .iter()
        .flat_map(|d| a.sizes.iter().map(move |&s| (d.clone(), s)))
        .collect();
    let mut points = Vec::new();
    for &w in &a.workers {
        let g = if a.no_gloo {
            vec![None; jobs.len()]
        } else {
            gloo(&py, w, a.reps, &jobs)?.into_iter().map(Some).collect()
        };
        for ((d, b), g) in jobs.iter().zip(g) {
            let f = fanin(&a, w, d, *b)?;
            points.push(Point {
                workers: w,
                dtype: d.clone(),
                bytes: *b,
                gloo: g,
                fanin: f,
            });
        }
    }
    println!(
        "fanin allreduce vs gloo all_reduce, loopback, {} packet elements, window {}, retransmit {} ms, {} path, median of {} runs",
        a.packet_elements,
        a.window,
        a.retransmit_ms,
        if a.frame_path { "frame" } else { "datagram" },
        a.reps
    );
    println!(
        "{:>7} {:>7} {:>10} {:>10} {:>10} {:>11} {:>11}",
        "workers", "dtype", "KiB", "gloo_ms", "fanin_ms", "fanin_Gbps", "gloo/fanin"
    );
    for p in &points {
        let gbps = p.bytes as f64 * 8.0 / p.fanin / 1e9;
        println!(
            "{:>7} {:>7} {:>10} {:>10} {:>10.3} {:>11.3} {:>11}",
            p.workers,
            p.dtype,
            p.bytes / 1024,
            p.gloo.map_or("-".into(), |g| format!("{:.3}", g * 1e3)),
            p.fanin * 1e3,
            gbps,
            p.gloo.map_or("-".into(), |g| format!("{:.2}", g / p.fanin)),
        );
    }
    if let Some(svg) = &a.svg {
        if let Some(dir) = svg.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut series = Vec::new();
        for &w in &a.workers {
            for d in &a.dtypes {
                let sel = || {
                    points
                        .iter()
                        .filter(move |p| p.workers == w && &p.dtype == d)
                };
                series.push(Series {
                    label: format!("fanin {w}w {d}"),
                    points: sel()
                        .map(|p| (p.bytes as f64 / 1024.0, p.fanin * 1e3))
                        .collect(),
                });
                if !a.no_gloo {
                    series.push(Series {
                        label: format!("gloo {w}w {d}"),
                        points: sel()
                            .filter_map(|p| Some((p.bytes as f64 / 1024.0, p.gloo? * 1e3)))
                            .collect(),
                    });
                }
            }
        }
        line_chart(
            svg,
            "allreduce time on loopback: fanin vs gloo",
            "tensor size per worker (KiB, log)",
            "time (ms)",
            &series,
            true,
        )?;
        println!("plot: {}", svg.display());
    }
    Ok(())
}
