//! `fanin experiment canary-*`: Canary's figures in the fabric simulator.

use super::{fanin, run, text, tmpdir};

/// (experiment, files it writes, CSV rows at --quick without the header, checks it prints)
const EXPERIMENTS: [(&str, &str, usize, &[&str]); 4] = [
    (
        "canary-congestion",
        "canary_congestion",
        2 * 4,
        &["under congestion, Canary", "without congestion, Canary"],
    ),
    (
        "canary-size",
        "canary_size",
        2 * 3 * 3,
        &["at 1 KiB without congestion, Canary"],
    ),
    (
        "canary-timeout",
        "canary_timeout",
        2 * 3 + 1,
        &["goodput is not monotonic in the timeout"],
    ),
    (
        "canary-tenants",
        "canary_tenants",
        3 * 3,
        &["concurrent allreduces Canary"],
    ),
];

fn experiment(name: &str, quick: bool, secs: u64) -> (String, std::path::PathBuf) {
    experiment_with(name, quick, &[], secs)
}

fn experiment_with(
    name: &str,
    quick: bool,
    extra: &[&str],
    secs: u64,
) -> (String, std::path::PathBuf) {
    let dir = tmpdir(&format!("{name}{}", extra.join("")));
    let mut c = fanin();
    c.args(["experiment", name, "--out", dir.to_str().unwrap()]);
    if quick {
        c.arg("--quick");
    }
    c.args(extra);
    let o = run(&mut c, secs);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{name}: {out}\n{err}");
    (out, dir)
}

/// All four at `--quick` size: every run ends with exact sums (else the command fails), the
/// files are written, every check is printed, and the two claims the quick fabric reproduces
/// (the timeout's cost at 1 KiB; goodput not monotonic in the timeout) stay reproduced.
#[test]
fn canary_experiments_run_quick_and_print_their_checks() {
    for (name, stem, rows, checks) in EXPERIMENTS {
        let (out, dir) = experiment(name, true, 120);
        assert!(
            out.contains("every run ended with the exact int32 sums"),
            "{out}"
        );
        for c in checks {
            let line = out
                .lines()
                .find(|l| l.contains(c))
                .unwrap_or_else(|| panic!("{name}: check {c:?} not printed:\n{out}"));
            assert!(
                line.contains("[reproduced]") || line.contains("[NOT reproduced]"),
                "{line}"
            );
        }
        for ext in ["csv", "svg"] {
            let p = dir.join(format!("{stem}.{ext}"));
            let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            assert!(len > 100, "{} missing or empty", p.display());
        }
        let csv = std::fs::read_to_string(dir.join(format!("{stem}.csv"))).unwrap();
        assert_eq!(csv.lines().count(), 1 + rows, "{name}:\n{csv}");
        // The default flow control is lossless, and every row says so.
        assert!(csv.starts_with("flow,"), "{name}:\n{csv}");
        assert!(
            csv.lines().skip(1).all(|l| l.starts_with("lossless,")),
            "{name}:\n{csv}"
        );
        assert!(out.contains("lossless links (credit-based"), "{out}");
        let checks_file = std::fs::read_to_string(dir.join(format!("{stem}_checks.txt"))).unwrap();
        assert!(
            out.contains(checks_file.trim()),
            "{name}: checks file differs from stdout"
        );
        doc_has_figures(name, &out);
        if name == "canary-size" || name == "canary-timeout" {
            assert!(!out.contains("NOT reproduced"), "{out}");
        }
    }
}

/// `--flow drop-tail` keeps the drop-tail fabric selectable: its CSV rows say so, and its
/// quick tenants figure (one static tree losing frames and waiting out retransmission
/// timeouts) is the one docs/protocol.md quotes.
#[test]
fn canary_experiments_take_the_drop_tail_flow() {
    let (out, dir) = experiment_with("canary-tenants", true, &["--flow", "drop-tail"], 120);
    assert!(out.contains("drop-tail output queues"), "{out}");
    let csv = std::fs::read_to_string(dir.join("canary_tenants.csv")).unwrap();
    assert!(
        csv.lines().skip(1).all(|l| l.starts_with("drop-tail,")),
        "{csv}"
    );
    assert!(
        csv.lines()
            .skip(1)
            .any(|l| l.starts_with("drop-tail,static-1-tree,") && l.split(',').nth(5) != Some("0")),
        "one static tree per job drops frames under drop-tail:\n{csv}"
    );
    doc_has_figures("canary-tenants --flow drop-tail", &out);
}

/// `--flow` is refused by name outside the Canary experiments, and a bad value by clap.
#[test]
fn the_flow_flag_is_refused_where_it_means_nothing() {
    let dir = tmpdir("flow-refused");
    let o = run(
        fanin().args([
            "experiment",
            "ask-goodput",
            "--quick",
            "--flow",
            "lossless",
            "--out",
            dir.to_str().unwrap(),
        ]),
        60,
    );
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "a bad flag is an input error");
    assert!(
        err.contains("--flow applies to the canary-* experiments only, not ask-goodput"),
        "{err}"
    );
    let o = run(
        fanin().args([
            "experiment",
            "canary-size",
            "--flow",
            "credit",
            "--out",
            dir.to_str().unwrap(),
        ]),
        60,
    );
    let (_, err) = text(&o);
    assert!(!o.status.success());
    assert!(err.contains("invalid value 'credit' for '--flow"), "{err}");
    assert!(!dir.join("canary_size.csv").exists());
}

/// docs/protocol.md ("Canary experiments") quotes the `--quick` figures: every decimal in
/// a check line must be in that section.
fn doc_has_figures(name: &str, out: &str) {
    let doc = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md"),
    )
    .unwrap();
    let section = doc
        .split("### Canary experiments")
        .nth(1)
        .expect("docs/protocol.md has a Canary experiments section");
    for line in out.lines().filter(|l| l.contains("reproduced]")) {
        for tok in line.split(|c: char| !(c.is_ascii_digit() || c == '.')) {
            let tok = tok.trim_matches('.');
            if tok.contains('.') {
                assert!(
                    section.contains(tok),
                    "{name}: figure {tok} of {line:?} is not in docs/protocol.md (Canary experiments)"
                );
            }
        }
    }
}

/// canary-congestion at full size (16 leaves x 8 hosts, 8 spines, 64 hosts in the allreduce,
/// 2 MiB per host, line-rate background, 3 seeds, lossless links; 9.1 min in a release build
/// on the shared 2-core machine, 4.8 min of CPU, so roughly an hour in a debug build): the figures
/// docs/protocol.md quotes, and Canary within 10% of the static tree without congestion.
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn canary_congestion_full_size_matches_the_doc() {
    let (out, _) = experiment("canary-congestion", false, 3 * 3600);
    assert!(out.contains("[reproduced] without congestion"), "{out}");
    doc_has_figures("canary-congestion", &out);
}
