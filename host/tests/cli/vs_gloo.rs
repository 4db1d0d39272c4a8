//! The fanin-vs-gloo bench at tiny sizes: every sum checked, the table well formed, the plot
//! written. The fast test measures fanin alone; the slow tier adds gloo (torch's start-up
//! in three processes takes about 20 s), which needs the workspace's venv.

use super::*;

#[test]
fn vs_gloo_bench_runs_at_a_tiny_size() {
    bench_at_tiny_sizes(false);
}

#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn vs_gloo_bench_runs_gloo_at_a_tiny_size() {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/venv/bin/python");
    assert!(
        venv.exists(),
        "{} is missing: `cargo xtask python` builds it",
        venv.display()
    );
    bench_at_tiny_sizes(true);
}

fn bench_at_tiny_sizes(gloo: bool) {
    let dir = tmpdir(if gloo { "vs-gloo-g" } else { "vs-gloo" });
    let svg = dir.join("vs-gloo.svg");
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_fanin-vs-gloo"));
    cmd.args(["--workers", "2", "--sizes", "4096,8192", "--reps", "1"])
        .args(["--packet-elements", "256", "--svg"])
        .arg(&svg)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if !gloo {
        cmd.arg("--no-gloo");
    }
    let out = wait_output(cmd.spawn().unwrap(), 120, "fanin-vs-gloo");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: Vec<Vec<&str>> = text
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("workers"))
        .skip(1)
        .take_while(|l| !l.starts_with("plot:"))
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows.len(), 4, "two dtypes x two sizes:\n{text}");
    for (r, (dtype, kib)) in rows.iter().zip([
        ("float32", "4"),
        ("float32", "8"),
        ("int32", "4"),
        ("int32", "8"),
    ]) {
        assert_eq!(r.len(), 7, "{r:?}");
        assert_eq!((r[0], r[1], r[2]), ("2", dtype, kib), "{r:?}");
        let fanin_ms: f64 = r[4].parse().unwrap();
        assert!(fanin_ms > 0.0, "{r:?}");
        if gloo {
            let (g, ratio): (f64, f64) = (r[3].parse().unwrap(), r[6].parse().unwrap());
            assert!(
                g > 0.0 && (ratio - g / fanin_ms).abs() <= 0.01 + ratio * 0.01,
                "{r:?}"
            );
        } else {
            assert_eq!((r[3], r[6]), ("-", "-"), "{r:?}");
        }
    }
    let plot = std::fs::read_to_string(&svg).unwrap();
    assert!(
        plot.starts_with("<svg") && plot.contains("fanin 2w int32"),
        "{plot:.200}"
    );
}
