//! `cargo xtask setup|demo|test|python`: one command each for a fresh Debian machine.
//!
//! `setup` installs the system packages fanin needs (apt-get, as root) when they are
//! missing; `demo` and `test` run `setup` first. Every step is a subprocess whose failure
//! stops the run with a non-zero exit.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{bail, Context, Result};

/// A system tool and the Debian package that provides it.
struct Need {
    /// What to probe for.
    probe: Probe,
    /// Debian package.
    package: &'static str,
    /// Why fanin needs it.
    why: &'static str,
}

enum Probe {
    /// A program on PATH.
    Program(&'static str),
    /// A file matching one of these glob-free paths or directory prefixes.
    AnyFile(&'static [&'static str]),
    /// An installed Debian package (for libraries found through it, like libclang for bindgen).
    Package(&'static str),
    /// A shell command that succeeds.
    Shell(&'static str),
}

const NEEDS: &[Need] = &[
    Need {
        probe: Probe::Program("verilator"),
        package: "verilator",
        why: "cycle-accurate simulation and lint of the RTL",
    },
    Need {
        probe: Probe::Program("yosys"),
        package: "yosys",
        why: "synthesis checks and resource reports",
    },
    Need {
        probe: Probe::Program("iverilog"),
        package: "iverilog",
        why: "second simulator for speed comparison",
    },
    Need {
        probe: Probe::AnyFile(&["/usr/include/pcap.h", "/usr/include/pcap/pcap.h"]),
        package: "libpcap-dev",
        why: "pcap capture",
    },
    Need {
        probe: Probe::Program("tshark"),
        package: "tshark",
        why: "Wireshark dissector test",
    },
    Need {
        probe: Probe::Package("libclang-dev"),
        package: "libclang-dev",
        why: "bindgen for the Verilator shim",
    },
    Need {
        probe: Probe::Program("tclsh"),
        package: "tcl",
        why: "syntax check of the Vivado build scripts",
    },
    Need {
        probe: Probe::Program("iperf3"),
        package: "iperf3",
        why: "baseline of the sender goodput bench",
    },
    Need {
        probe: Probe::Program("g++"),
        package: "g++",
        why: "compiles the Verilator model",
    },
    Need {
        probe: Probe::Program("make"),
        package: "make",
        why: "Verilator's build",
    },
    Need {
        probe: Probe::Shell("python3 -c 'import venv, ensurepip'"),
        package: "python3-venv",
        why: "the virtual environment of the Python package's tests (target/venv)",
    },
    Need {
        probe: Probe::Shell("python3 -c \"import sysconfig as s, os, sys; sys.exit(not os.path.exists(os.path.join(s.get_config_var('LIBDIR'), s.get_config_var('LDLIBRARY'))))\""),
        package: "python3-dev",
        why: "libpython, which cargo links the Python extension (host/python) against",
    },
    Need {
        probe: Probe::Shell("command -v ip && command -v tc"),
        package: "iproute2",
        why: "ip netns, veth and tc for the emulated-fabric benchmark (host/python/bench/fabric.py) and its test",
    },
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let r = match args.first().map(String::as_str) {
        Some("setup") => setup(),
        Some("demo") => setup().and_then(|_| demo()),
        Some("test") => setup().and_then(|_| test(&args[1..])),
        Some("python") => setup().and_then(|_| test_python()),
        _ => {
            eprintln!("usage: cargo xtask setup | demo | test [--slow] | python");
            return ExitCode::from(2);
        }
    };
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

fn present(p: &Probe) -> bool {
    match p {
        Probe::Program(name) => Command::new("sh")
            .args(["-c", &format!("command -v {name}")])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false),
        Probe::AnyFile(paths) => paths.iter().any(|p| Path::new(p).exists()),
        Probe::Shell(cmd) => Command::new("sh")
            .args(["-c", cmd])
            .output()
            .map(|o| o.status.success())
            .unwrap_or(false),
        Probe::Package(name) => Command::new("dpkg-query")
            .args(["-W", "-f=${Status}", name])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
            .unwrap_or(false),
    }
}

/// Installs whatever system packages are missing.
fn setup() -> Result<()> {
    let missing: Vec<&Need> = NEEDS.iter().filter(|n| !present(&n.probe)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    let pkgs: Vec<&str> = missing.iter().map(|n| n.package).collect();
    for n in &missing {
        eprintln!("xtask: missing {} ({})", n.package, n.why);
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .map(|o| o.stdout.starts_with(b"0"))
        .unwrap_or(false);
    if !root {
        bail!(
            "run as root, or install them yourself: sudo apt-get install -y {}",
            pkgs.join(" ")
        );
    }
    eprintln!("xtask: apt-get install {}", pkgs.join(" "));
    run(Command::new("apt-get")
        .args(["update", "-qq"])
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    run(Command::new("apt-get")
        .args(["install", "-y", "-qq", "--no-install-recommends"])
        .args(&pkgs)
        .env("DEBIAN_FRONTEND", "noninteractive"))?;
    let still: Vec<&str> = NEEDS
        .iter()
        .filter(|n| !present(&n.probe))
        .map(|n| n.package)
        .collect();
    if !still.is_empty() {
        bail!(
            "apt-get finished but these are still missing: {}",
            still.join(" ")
        );
    }
    Ok(())
}

fn root_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn cargo() -> Command {
    let mut c = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    c.current_dir(root_dir());
    c
}

fn run(c: &mut Command) -> Result<()> {
    let shown = format!("{c:?}");
    let st = c
        .status()
        .with_context(|| format!("could not start {shown}"))?;
    if !st.success() {
        bail!("{shown} failed ({st})");
    }
    Ok(())
}

fn banner(s: &str) {
    println!("\n==== {s} ====");
}

/// The storefront: every capability that has landed, with verified results.
fn demo() -> Result<()> {
    let out = root_dir().join("target/demo");
    std::fs::create_dir_all(&out)?;
    banner("building (release)");
    run(cargo().args([
        "build",
        "--quiet",
        "--release",
        "-p",
        "fanin",
        "-p",
        "fanin-gen",
        "-p",
        "fanin-sim",
        "-p",
        "fanin-proto",
        "--examples",
        "--bins",
    ]))?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root_dir().join("target"));
    let bin = |name: &str| target.join("release").join(name);

    banner(
        "1. reference model: allreduce over a two-level tree with loss, duplication and reordering",
    );
    run(cargo().args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "fanin-proto",
        "--example",
        "netsim_allreduce",
    ]))?;

    banner(
        "2. software switch: 4 workers x 1M float elements over UDP, checked against the float sum",
    );
    run(Command::new(bin("fanin")).args([
        "allreduce",
        "--workers",
        "4",
        "--elements",
        "1000000",
        "--verify",
    ]))?;
    banner("2b. software switch: 8 workers, exact int32 sums through 1% loss, duplication and reordering");
    run(Command::new(bin("fanin")).args([
        "allreduce",
        "--workers",
        "8",
        "--elements",
        "200000",
        "--int",
        "--loss",
        "0.01",
        "--dup",
        "0.01",
        "--reorder",
        "0.01",
    ]))?;

    banner("2c. trust: successive allreduces on one live switch, then a burst of 200,000 stray datagrams");
    run(cargo().args([
        "run",
        "--quiet",
        "--release",
        "-p",
        "fanin",
        "--example",
        "trust_demo",
    ]))?;

    banner("2d. host data path: fanin allreduce against torch.distributed gloo on loopback (4 MiB, every sum checked)");
    // The Python package built as `pip install` builds it (release).
    let py = python_package(true)?;
    run(Command::new(bin("fanin-vs-gloo"))
        .args(["--sizes", "4194304", "--reps", "3", "--python"])
        .arg(&py)
        .arg("--svg")
        .arg(out.join("vs-gloo.svg")))?;

    banner("3. placement on bt:256 with power-law loads, k = 16");
    placement(&bin("fanin"))?;
    banner("3b. PARING vs DeepSys on fat-tree k=4 (the PARING paper's Sec. II setting)");
    for algo in ["deepsys", "paring"] {
        run(Command::new(bin("fanin")).args([
            "place",
            "--topology",
            "fat-tree:4",
            "--algo",
            algo,
            "--workers",
            "7",
            "--capacity-gbps",
            "2",
            "--rate-limit-gbps",
            "1",
            "--gradient-gb",
            "1",
        ]))?;
    }

    banner(
        "4. RTL: Verilog and manifest for the default configuration (linted and elaborated by yosys in CI; synthesised in the slow tier)",
    );
    let rtl = out.join("rtl");
    run(Command::new(bin("fanin-gen"))
        .args(["--config", "default", "--out"])
        .arg(&rtl))?;
    let v = std::fs::read_to_string(rtl.join("fanin_core.v"))?;
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rtl.join("manifest.json"))?)?;
    let modules = v.lines().filter(|l| l.starts_with("module ")).count();
    println!(
        "{}: {} lines, {modules} modules, top fanin_core with {} ports",
        rtl.join("fanin_core.v").display(),
        v.lines().count(),
        m["ports"].as_array().map_or(0, |p| p.len())
    );

    banner("4b. RTL: a configuration spec (eight 64-bit ports), and an impossible one refused");
    let spec = "default+ports=8+engine_w=1024";
    let rtl8 = out.join("rtl8");
    run(Command::new(bin("fanin-gen"))
        .args(["--config", spec, "--out"])
        .arg(&rtl8))?;
    let m: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(rtl8.join("manifest.json"))?)?;
    let ports = m["config"]["ports"].as_u64().unwrap_or(0);
    if ports != 8 {
        bail!("{spec}: the manifest says {ports} ports, not 8");
    }
    println!("{spec}: {} ports in the manifest", ports);
    let bad = Command::new(bin("fanin-gen"))
        .args(["--config", "default+data_w=512", "--out"])
        .arg(out.join("rtl-bad"))
        .output()?;
    let msg = String::from_utf8_lossy(&bad.stderr);
    if bad.status.success() || !msg.contains("engine_w = 512 is narrower") {
        bail!("fanin-gen accepted default+data_w=512 or said something else: {msg}");
    }
    println!(
        "refused as expected: {}",
        msg.lines().next().unwrap_or_default().trim()
    );

    banner("4c. fanin hw: a SOAR placement (every trust protection on) emitted for the RTL, each switch's register writes (dry run and a JTAG Tcl script)");
    let place = out.join("place-rtl");
    let _ = std::fs::remove_dir_all(&place);
    run(Command::new(bin("fanin"))
        .args([
            "place",
            "--topology",
            "bt:7",
            "--algo",
            "soar",
            "--k",
            "2",
            "--loads",
            "uniform:1:2",
            "--seed",
            "1",
            "--emit-config",
        ])
        .arg(&place))?;
    for f in ["d", "s2", "s5"] {
        let cfg = place.join(format!("{f}.json"));
        let o = Command::new(bin("fanin"))
            .args(["hw", "program", "--dry-run", "--config"])
            .arg(&cfg)
            .output()?;
        if !o.status.success() {
            bail!(
                "fanin hw program --dry-run {f}: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let n = String::from_utf8_lossy(&o.stdout).lines().count();
        println!("switch {f}: {n} register writes for core default");
        run(Command::new(bin("fanin"))
            .args(["hw", "program", "--config"])
            .arg(&cfg)
            .arg("--tcl")
            .arg(out.join(format!("{f}.tcl"))))?;
    }

    banner("5. Verilator model: the workers resolve the switch by ARP, then two allreduces of 3 workers through the RTL with 2% loss, duplication, reordering; each opens a session (every trust protection on) and gets its own exact sum");
    run(Command::new(bin("rtl_allreduce")).args(["--config", "default"]))?;
    banner("5b. Verilator model: line rate with every port at 100% load on the same slots");
    run(Command::new(bin("linerate")).args(["--config", "default", "--blocks", "500"]))?;
    banner("5c. Verilator model: simulation speed under full-rate forwarding traffic");
    run(Command::new(bin("simspeed")).args(["--config", "default", "--cycles", "1000000"]))?;
    banner("5d. Board top (Alveo U250) in Verilator: the generated wrapper with models of the CMACs, the CDC FIFOs and the PCIe BAR at their own clocks; a job programmed through the BAR, every frame at the MACs equal to the model's, exact sums, counters and MAC statistics");
    run(cargo().args([
        "test",
        "--quiet",
        "--release",
        "-p",
        "fanin-sim",
        "--test",
        "board",
        "--",
        "--nocapture",
    ]))?;

    banner(
        "6. key-value aggregation (ASK): 4 senders, Zipf keys, 5% loss, every key's sum checked",
    );
    run(Command::new(bin("fanin")).args([
        "kv",
        "allreduce",
        "--senders",
        "4",
        "--keys",
        "4096",
        "--dist",
        "zipf",
        "--tuples",
        "50000",
        "--loss",
        "0.05",
        "--verify",
    ]))?;
    banner("6b. ASK Figs. 9 and 8 (quick sizes): hot-key prioritisation and goodput, with checks");
    for name in ["ask-prioritisation", "ask-goodput"] {
        run(Command::new(bin("fanin"))
            .args(["experiment", name, "--quick", "--out"])
            .arg(out.join("ask")))?;
    }

    banner("6c. Canary: dynamic trees against static trees under congestion in the fabric simulator (quick size, exact sums)");
    run(Command::new(bin("fanin"))
        .args(["experiment", "canary-congestion", "--quick", "--out"])
        .arg(out.join("canary")))?;
    let chains: [(&str, &[&str]); 2] = [
        (
            "6d. Canary on switchd: a dynamic job on a chain of frame switchds (3 leaves around a middle with 2% loss, duplication, reordering), two allreduces, every sum exact",
            &[],
        ),
        (
            "6e. Canary beyond 64 ranks: 256 workers on 8 leaf switchds of 32 around the lossy middle, header version 2, two allreduces, every sum exact",
            &["--leaves", "8", "--per-leaf", "32", "--elements", "4096"],
        ),
    ];
    for (title, size) in chains {
        banner(title);
        run(cargo()
            .args(["run", "--quiet", "--release", "-p", "fanin"])
            .args(["--example", "dynamic_chain", "--"])
            .args(size))?;
    }

    banner("6f. From `fanin place` to running switches: SOAR places a dynamic job on BT(8), `--emit-config --mode dynamic` writes configurations, routes and links.json, and the emitted network runs two allreduces as it is, every sum exact");
    let emitted = out.join("canary-emitted");
    let base = free_udp_range(16)?;
    run(Command::new(bin("fanin"))
        .args(["place", "--topology", "bt:8", "--algo", "soar", "--k", "2"])
        .args(["--loads", "uniform:2:2", "--mode", "dynamic"])
        .args(["--base-port", &base.to_string(), "--emit-config"])
        .arg(&emitted))?;
    run(cargo()
        .args(["run", "--quiet", "--release", "-p", "fanin"])
        .args(["--example", "dynamic_chain", "--", "--emitted"])
        .arg(&emitted))?;

    banner("7. PyTorch: DDP of a small MLP through fanin (switch embedded in rank 0) next to gloo");
    run(Command::new(&py)
        .arg(root_dir().join("host/python/examples/ddp_demo.py"))
        .arg(out.join("ddp_loss.svg")))?;

    banner("7b. PyTorch over an emulated fabric: 4 hosts in network namespaces behind 50 Mbit/s links, one 4 MiB all_reduce, fanin against gloo's ring (goal: 1.35x)");
    if present(&Probe::Shell(
        "test \"$(id -u)\" = 0 && command -v ip && command -v tc",
    )) {
        run(Command::new(&py)
            .arg(root_dir().join("host/python/bench/fabric.py"))
            .arg("--fanin")
            .arg(bin("fanin"))
            .args(["--hosts", "4", "--sizes", "4", "--reps", "3", "--out"])
            .arg(out.join("fabric")))?;
    } else {
        println!("skipped: needs root and iproute2 (ip netns, tc)");
    }

    println!("\ndemo: all steps verified");
    Ok(())
}

/// A base port with `n` consecutive free UDP ports on 127.0.0.1 (for an emitted network).
fn free_udp_range(n: u16) -> Result<u16> {
    (0..40)
        .map(|i| 41_000 + i * 500)
        .find(|&b| (b..b + n).all(|p| std::net::UdpSocket::bind(("127.0.0.1", p)).is_ok()))
        .ok_or_else(|| anyhow::anyhow!("no {n} consecutive free UDP ports from 41000 on"))
}

/// Runs SOAR, SMC and the baselines on one instance and checks who wins which metric.
fn placement(fanin: &Path) -> Result<()> {
    let mut rows = Vec::new();
    for algo in [
        "soar", "smc", "top", "max", "level", "random", "all-red", "all-blue",
    ] {
        let o = Command::new(fanin)
            .args([
                "place",
                "--topology",
                "bt:256",
                "--algo",
                algo,
                "--k",
                "16",
                "--loads",
                "power-law",
                "--seed",
                "1",
                "--json",
            ])
            .output()
            .with_context(|| format!("running fanin place --algo {algo}"))?;
        if !o.status.success() {
            bail!(
                "fanin place --algo {algo} failed: {}",
                String::from_utf8_lossy(&o.stderr)
            );
        }
        let v: serde_json::Value = serde_json::from_slice(&o.stdout)?;
        let num = |k: &str| {
            v[k].as_f64()
                .with_context(|| format!("{algo}: no {k} in output"))
        };
        rows.push((
            algo,
            num("utilization")?,
            num("congestion")?,
            num("seconds")?,
        ));
    }
    println!(
        "{:10} {:>12} {:>11} {:>10}",
        "algorithm", "utilization", "congestion", "seconds"
    );
    for (a, u, c, s) in &rows {
        println!("{a:10} {u:>12.1} {c:>11.1} {s:>10.4}");
    }
    let k_limited: Vec<_> = rows.iter().filter(|r| r.0 != "all-blue").collect();
    let soar = rows[0];
    let smc = rows[1];
    if k_limited.iter().any(|r| r.1 < soar.1) {
        bail!("SOAR is not the lowest utilisation among k-limited placements");
    }
    if k_limited.iter().any(|r| r.2 < smc.2) {
        bail!("SMC is not the lowest congestion among k-limited placements");
    }
    println!("verified: SOAR has the least utilisation and SMC the least congestion of all k = 16 placements");
    Ok(())
}

/// The configurations the slow tier builds into fanin-sim: `default` and those
/// sim/tests/rtl/configs.rs runs the RTL suite against (listed in slow_tier.txt beside it).
fn slow_sim_configs() -> String {
    std::iter::once("default")
        .chain(
            include_str!("../../sim/tests/rtl/slow_tier.txt")
                .lines()
                .map(str::trim)
                .filter(|l| !l.is_empty() && !l.starts_with('#')),
        )
        .collect::<Vec<_>>()
        .join(",")
}

/// The whole test suite. `--slow` (or FANIN_SLOW=1) adds the long tier.
fn test(args: &[String]) -> Result<()> {
    let slow =
        args.iter().any(|a| a == "--slow") || std::env::var("FANIN_SLOW").is_ok_and(|v| v == "1");
    // The slow tier also runs the RTL suite against the configurations of
    // sim/tests/rtl/configs.rs, so both steps build them into fanin-sim (unless
    // FANIN_SIM_CONFIGS says otherwise).
    let sim_configs = |c: &mut Command| {
        if slow && std::env::var_os("FANIN_SIM_CONFIGS").is_none() {
            c.env("FANIN_SIM_CONFIGS", slow_sim_configs());
        }
        // (The board-top simulations of both families, sim/tests/board.rs, are built in by
        // default: fanin-sim's build.rs.)
    };
    banner("build");
    let mut b = cargo();
    b.args(["build", "--workspace", "--all-targets"]);
    sim_configs(&mut b);
    run(&mut b)?;
    banner("tests");
    let mut c = cargo();
    c.args(["test", "--workspace"]);
    sim_configs(&mut c);
    if slow {
        // The slow tier: tests marked #[ignore = "slow tier ..."], and longer soak counts.
        c.env("FANIN_SLOW", "1").args(["--", "--include-ignored"]);
    }
    run(&mut c)?;
    test_python()
}

/// The Python package's pytest suite (also alone: `cargo xtask python`).
fn test_python() -> Result<()> {
    banner("python: the fanin package (host/python) against torch, from target/venv");
    // The external-switchd test runs the `fanin` binary.
    run(cargo().args(["build", "--quiet", "-p", "fanin", "--bin", "fanin"]))?;
    let py = python_package(false)?;
    pytest(&py, &["host/python/tests", "-q"])
}

/// The Python packages the `fanin` Python package is built and tested with (PyPI names).
/// Changing the list reinstalls them.
const PY_DEPS: &[&str] = &["torch", "numpy", "maturin", "pytest"];

fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root_dir().join("target"))
}

/// Free space the venv install needs: torch and its CUDA wheels unpack to about 5.5 GiB,
/// and pip holds the downloaded wheels (about 2.5 GiB) beside them until it finishes.
const VENV_FREE_GIB: u64 = 9;

/// Fails with a clear message, before a long download, when the file system holding `dir`
/// has less than `gib` GiB free (`df -Pk`; skipped if `df` cannot answer).
fn check_free_space(dir: &Path, gib: u64) -> Result<()> {
    let probe = dir
        .ancestors()
        .find(|d| d.exists())
        .unwrap_or(Path::new("/"));
    let Ok(out) = Command::new("df").arg("-Pk").arg(probe).output() else {
        return Ok(());
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let avail_kib = text
        .lines()
        .nth(1)
        .and_then(|l| l.split_whitespace().nth(3))
        .and_then(|v| v.parse::<u64>().ok());
    match avail_kib {
        Some(kib) if kib < gib << 20 => bail!(
            "{} needs about {gib} GiB free for torch, numpy, maturin and pytest; \
             the file system of {} has {:.1} GiB free",
            dir.display(),
            probe.display(),
            kib as f64 / f64::from(1 << 20)
        ),
        _ => Ok(()),
    }
}

/// The virtual environment `target/venv` with [`PY_DEPS`]: created and filled once per
/// machine (torch is several GB), reused while its marker names the same packages. Never
/// touches the system Python's packages.
fn venv() -> Result<PathBuf> {
    let dir = target_dir().join("venv");
    let py = dir.join("bin/python");
    let marker = dir.join(".fanin-deps");
    let want = PY_DEPS.join(" ");
    if py.exists() && std::fs::read_to_string(&marker).is_ok_and(|m| m == want) {
        return Ok(dir);
    }
    if !py.exists() {
        println!("creating {} (once per machine)", dir.display());
        run(Command::new("python3").arg("-m").arg("venv").arg(&dir))?;
    }
    check_free_space(&dir, VENV_FREE_GIB)?;
    println!(
        "installing {want} into {} (torch is large: minutes, once per machine)",
        dir.display()
    );
    // No pip cache: it would keep a second copy of the multi-GB wheels.
    run(Command::new(&py)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--upgrade",
            "--no-cache-dir",
        ])
        .args(PY_DEPS))?;
    std::fs::write(&marker, want)?;
    Ok(dir)
}

/// Builds the Python package into the venv (`maturin develop`, `--release` if `release`)
/// and returns the venv's python.
fn python_package(release: bool) -> Result<PathBuf> {
    let dir = venv()?;
    let bin = dir.join("bin");
    let path = std::env::var_os("PATH").unwrap_or_default();
    let mut paths = vec![bin.clone()];
    paths.extend(std::env::split_paths(&path));
    run(Command::new(bin.join("maturin"))
        .args(["develop", "--quiet"])
        .args(release.then_some("--release"))
        .current_dir(root_dir().join("host/python"))
        .env("VIRTUAL_ENV", &dir)
        .env("PATH", std::env::join_paths(paths)?))?;
    Ok(bin.join("python"))
}

/// Runs pytest; its exit status 5 ("no tests collected") is a failure too.
fn pytest(py: &Path, args: &[&str]) -> Result<()> {
    let st = Command::new(py)
        .args(["-m", "pytest", "-p", "no:cacheprovider"])
        .args(args)
        .current_dir(root_dir())
        .env("FANIN_BIN", target_dir().join("debug/fanin"))
        .status()
        .context("could not start pytest")?;
    match st.code() {
        Some(0) => Ok(()),
        Some(5) => bail!("pytest collected no tests from {args:?}"),
        _ => bail!("pytest {args:?} failed ({st})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn free_space_check_names_the_shortfall() {
        let dir = target_dir().join("no-such-venv");
        check_free_space(&dir, 0).unwrap();
        let err = check_free_space(&dir, 1 << 40).unwrap_err().to_string();
        assert!(
            err.contains("GiB free") && err.contains("no-such-venv"),
            "{err}"
        );
    }
}
