//! Board build directories without Vivado: every XDC and Tcl file runs under `tclsh` with
//! stub Vivado commands, every `get_ports` name is a port of the wrapper (and every wrapper
//! pin is placed), build.tcl's timing and clock checks fail the build as they should, and
//! yosys elaborates the wrapper against the generated core.
//! `tclsh` and `yosys` must be installed: these tests fail, not skip, without them.
//! The resource reports (`default` and the large ones) are the slow tier
//! (`cargo xtask test --slow`).

use fanin_gen::board::{self, Board};
use fanin_gen::report::{self, Family};
use fanin_hdl::CoreConfig;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

fn out_dir(tag: &str) -> PathBuf {
    std::env::temp_dir().join(format!("fanin-boards-test-{}-{tag}", std::process::id()))
}

/// A fresh build directory for board `b`, private to test `test` (tests run in parallel).
fn build_dir(b: Board, test: &str) -> PathBuf {
    let d = out_dir(&format!("{test}-{}", b.name()));
    let _ = std::fs::remove_dir_all(&d);
    let cfg = CoreConfig::by_name(b.config_name()).unwrap();
    board::write(b, &cfg, &d).unwrap();
    d
}

/// Stub Vivado commands: enough to `source` XDC files, ip/*.tcl and build.tcl in tclsh.
/// `get_ports` records every name it is given; `exit N` with N ≠ 0 raises an error.
const STUBS: &str = r#"
set ::fanin_ports {}
set ::stub_period 0
set ::stub_slack 0.1
set ::stub_clocks core_clk
proc get_ports {args} {
    foreach a $args {
        if {[string index $a 0] eq "-"} continue
        foreach n $a { lappend ::fanin_ports $n }
    }
    return [list port {*}$args]
}
foreach c {set_property create_clock create_generated_clock get_pins get_cells get_nets
           set_false_path set_clock_groups set_max_delay set_input_delay set_output_delay
           current_design create_project current_project create_ip get_ips generate_target
           synth_ip read_verilog read_xdc synth_design opt_design place_design phys_opt_design
           route_design write_checkpoint report_timing_summary report_utilization
           write_bitstream} {
    proc $c {args} { return {} }
}
proc get_clocks {args} { return $::stub_clocks }
proc get_timing_paths {args} { return path }
proc get_property {prop obj} {
    switch -- $prop {
        PERIOD { return $::stub_period }
        SLACK { return $::stub_slack }
        default { return {} }
    }
}
rename exit tcl_exit
proc exit {{code 0}} {
    if {$code != 0} { error "build exited with $code" }
    return -code return
}
"#;

/// Runs `tclsh` on the stubs plus `body`; returns (success, stdout, stderr).
fn tclsh(dir: &Path, body: &str) -> (bool, String, String) {
    let script = dir.join("stub_run.tcl");
    std::fs::write(&script, format!("{STUBS}\n{body}\n")).unwrap();
    let out = Command::new("tclsh")
        .arg(&script)
        .current_dir(dir)
        .output()
        .expect("tclsh must be installed (cargo xtask setup installs the Debian package tcl)");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Ports of the wrapper's module header: name → width.
fn wrapper_ports(v: &str, top: &str) -> BTreeMap<String, u32> {
    let start = v.find(&format!("module {top} (")).expect("wrapper module");
    let end = start + v[start..].find(");").unwrap();
    let mut m = BTreeMap::new();
    for line in v[start..end].lines().skip(1) {
        let l = line.trim().trim_end_matches(',');
        let Some(rest) = l.strip_prefix("input").or_else(|| l.strip_prefix("output")) else {
            continue;
        };
        let rest = rest.trim().strip_prefix("wire").unwrap().trim();
        let (w, name) = match rest.strip_prefix('[') {
            Some(r) => {
                let (hi, n) = r.split_once(":0]").unwrap();
                (hi.parse::<u32>().unwrap() + 1, n.trim())
            }
            None => (1, rest),
        };
        m.insert(name.to_string(), w);
    }
    m
}

/// Checks one `get_ports` name (`a`, `a[3]`, `a[*]`) against the wrapper's ports.
fn port_exists(ports: &BTreeMap<String, u32>, name: &str) -> Result<String, String> {
    let (base, idx) = match name.split_once('[') {
        Some((b, i)) => (b, Some(i.trim_end_matches(']'))),
        None => (name, None),
    };
    let w = *ports
        .get(base)
        .ok_or_else(|| format!("{name}: no port {base}"))?;
    match idx {
        None if w == 1 => Ok(base.into()),
        None => Err(format!("{name}: {base} is a {w}-bit bus; name a bit")),
        Some("*") => Ok(base.into()),
        Some(i) => match i.parse::<u32>() {
            Ok(i) if i < w => Ok(format!("{base}[{i}]")),
            _ => Err(format!("{name}: index out of range for {w}-bit {base}")),
        },
    }
}

/// Every XDC and ip/*.tcl file of every board is valid Tcl that calls only known Vivado
/// commands; every port it names is a port of the wrapper; every wrapper pin (except the
/// N side of differential pairs, which Vivado places) is constrained.
#[test]
fn board_xdc_and_tcl_parse_and_name_wrapper_ports() {
    for b in Board::ALL {
        let d = build_dir(b, "board_xdc_and_tcl_parse_and_name_wrapper_ports");
        let v = std::fs::read_to_string(d.join(format!("{}.v", b.top()))).unwrap();
        let ports = wrapper_ports(&v, &b.top());
        assert!(!ports.is_empty(), "{}: no wrapper ports parsed", b.name());
        let mut files: Vec<PathBuf> = Vec::new();
        for sub in ["constraints", "ip"] {
            let mut fs: Vec<PathBuf> = std::fs::read_dir(d.join(sub))
                .unwrap()
                .map(|e| e.unwrap().path())
                .collect();
            fs.sort();
            files.extend(fs);
        }
        assert!(files.iter().any(|f| f.extension().unwrap() == "xdc"));
        let mut body = String::from("set fanin_ip_dir [pwd]\n");
        for f in &files {
            if f.extension().unwrap() == "xdc" {
                // The opening comment block names the part and the source of the pin data.
                let text = std::fs::read_to_string(f).unwrap();
                let head: Vec<&str> = text.lines().take_while(|l| l.starts_with('#')).collect();
                assert!(
                    head.first().is_some_and(|l| l.starts_with("# fanin:")),
                    "{}: must start with a '# fanin:' comment",
                    f.display()
                );
                assert!(
                    head.iter()
                        .any(|l| l.contains(&format!("Part: {}", b.part()))),
                    "{}: opening comment must name the part {}",
                    f.display(),
                    b.part()
                );
                assert!(
                    head.iter()
                        .any(|l| l.contains("Pin data:") || l.contains("Source:")),
                    "{}: opening comment must cite the source of the pin data",
                    f.display()
                );
            }
            body.push_str(&format!("source {{{}}}\n", f.display()));
        }
        body.push_str("puts [join $::fanin_ports \\n]\n");
        let (ok, out, err) = tclsh(&d, &body);
        assert!(ok, "{}: tclsh failed: {err}", b.name());
        let mut placed = std::collections::BTreeSet::new();
        for name in out.lines().filter(|l| !l.is_empty()) {
            match port_exists(&ports, name) {
                Ok(p) => {
                    placed.insert(p);
                }
                Err(e) => panic!("{}: XDC names a port the wrapper lacks: {e}", b.name()),
            }
        }
        for (p, w) in &ports {
            if p.ends_with("_n") {
                continue;
            }
            let all = placed.contains(p) || (0..*w).all(|i| placed.contains(&format!("{p}[{i}]")));
            assert!(
                all,
                "{}: wrapper port {p} is not constrained in any XDC",
                b.name()
            );
        }
    }
}

/// build.tcl runs through with a met timing and the configuration's core_clk period, and
/// exits non-zero on a timing failure, a wrong core_clk period, or a missing core_clk.
#[test]
fn build_tcl_fails_on_timing_and_clock_errors() {
    for b in Board::ALL {
        let d = build_dir(b, "build_tcl_fails_on_timing_and_clock_errors");
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let period = board::core_period_ns(&cfg);
        let run = |setup: &str| {
            tclsh(
                &d,
                &format!("{setup}\nsource build.tcl\nputs FANIN_BUILD_DONE"),
            )
        };
        let (ok, out, err) = run(&format!("set ::stub_period {period}"));
        assert!(ok && out.contains("timing met"), "{}: {out}{err}", b.name());
        let (ok, _, err) = run(&format!(
            "set ::stub_period {period}; set ::stub_slack -0.2"
        ));
        assert!(!ok && err.contains("exited with 1"), "{}: {err}", b.name());
        let (ok, _, err) = run(&format!("set ::stub_period {}", period * 1.5));
        assert!(!ok && err.contains("exited with 2"), "{}: {err}", b.name());
        let (ok, _, err) = run(&format!(
            "set ::stub_period {period}; set ::stub_clocks {{}}"
        ));
        assert!(!ok && err.contains("exited with 2"), "{}: {err}", b.name());
        let bt = std::fs::read_to_string(d.join("build.tcl")).unwrap();
        assert!(bt.contains(&format!("set part {}", b.part())));
        assert!(bt.contains(&format!("set core_period {period:.3}")));
        let readme = std::fs::read_to_string(d.join("README.md")).unwrap();
        assert!(readme.contains("vivado -mode batch -source build.tcl"));
    }
}

/// The MMCM's requested core clock is the configuration's target, and every IP is Tcl.
#[test]
fn ip_is_tcl_and_core_clock_is_the_configuration_target() {
    for b in Board::ALL {
        let d = build_dir(b, "ip_is_tcl_and_core_clock_is_the_configuration_target");
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let clk = std::fs::read_to_string(d.join("ip/clk_core.tcl")).unwrap();
        assert!(
            clk.contains(&format!(
                "CONFIG.CLKOUT1_REQUESTED_OUT_FREQ {{{:.3}}}",
                cfg.clock_mhz as f64
            )),
            "{clk}"
        );
        let names: Vec<String> = std::fs::read_dir(&d)
            .unwrap()
            .chain(std::fs::read_dir(d.join("ip")).unwrap())
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert!(!names.iter().any(|n| n.ends_with(".xci")), "{names:?}");
        let v = std::fs::read_to_string(d.join(format!("{}.v", b.top()))).unwrap();
        let mac = if b == Board::Sume {
            "eth10g_"
        } else {
            "cmac_qsfp"
        };
        for p in 0..cfg.ports {
            let inst = if b == Board::Sume {
                format!("eth10g_{p} (")
            } else {
                format!("cmac_{p} (")
            };
            assert!(v.contains(&inst), "{}: no MAC instance {inst}", b.name());
        }
        assert!(v.contains(mac) && v.contains("fanin_core core_inst ("));
    }
}

/// A configuration whose ports do not match the board's MACs is refused with a hint.
#[test]
fn mismatched_configuration_is_refused() {
    let cfg = CoreConfig::by_name("alveo").unwrap();
    let e = board::write(Board::Sume, &cfg, &out_dir("bad")).unwrap_err();
    assert!(e.to_string().contains("--config sume"), "{e}");
    assert!(Board::parse("vc709")
        .unwrap_err()
        .to_string()
        .contains("sume, au250, au280"));
}

/// yosys elaborates each wrapper with the generated core: every `fanin_core` port the
/// wrapper connects exists with the right width, and every net is declared.
#[test]
fn wrapper_elaborates_against_the_core() {
    for b in Board::ALL {
        let d = build_dir(b, "wrapper_elaborates_against_the_core");
        let out = Command::new("yosys")
            .args([
                "-q",
                "-p",
                &format!(
                    "read_verilog fanin_core.v {top}.v; hierarchy -top {top}",
                    top = b.top()
                ),
            ])
            .current_dir(&d)
            .output()
            .expect("yosys must be installed (see README setup)");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{}: {err}", b.name());
        assert!(
            !err.contains("Resizing cell port"),
            "{}: width mismatch: {err}",
            b.name()
        );
    }
}

/// `--report` on `default`: yosys synthesis, real counts, and the exact last line. Slow tier:
/// CI already synthesises `default` once (checks.rs), and report.rs unit-tests the parsing.
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn report_default() {
    let cfg = CoreConfig::by_name("default").unwrap();
    let d = out_dir("report-default");
    let r = report::run(&cfg, Family::Xcup, &d, Duration::from_secs(1800)).unwrap();
    assert!(r.lut > 0 && r.ff > 0, "{r:?}");
    assert!(r.bram36() > 0, "no block RAM inferred: {r:?}");
    assert!(r.depth > 0 && r.depth < 64, "{r:?}");
    assert!(r.path.iter().filter(|t| t.starts_with("LUT")).count() as u32 <= r.depth);
    let text = r.render("default", Family::Xcup);
    let last = text.lines().last().unwrap();
    assert_eq!(
        last,
        format!(
            "resources: LUT={} FF={} BRAM36={} depth={}",
            r.lut,
            r.ff,
            r.bram36(),
            r.depth
        )
    );
    let _ = std::fs::remove_dir_all(d);
}

/// The large configurations' reports (slow tier): SUME on xc7, alveo on xcup.
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn report_large() {
    for (n, f) in [("sume", Family::Xc7), ("alveo", Family::Xcup)] {
        let cfg = CoreConfig::by_name(n).unwrap();
        let d = out_dir(&format!("report-{n}"));
        let r = report::run(&cfg, f, &d, Duration::from_secs(3 * 3600)).unwrap();
        assert!(r.bram36() + r.uram > 0, "{n}: no block RAM/URAM: {r:?}");
        println!("{}", r.render(n, f));
        let _ = std::fs::remove_dir_all(d);
    }
}
