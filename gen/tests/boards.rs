//! Board build directories without Vivado: every XDC and Tcl file runs under `tclsh` with
//! stub Vivado commands, every `get_ports` name is a port of the wrapper (and every wrapper
//! pin is placed), build.tcl's timing and clock checks fail the build as they should, and
//! yosys elaborates the wrapper against the generated core.
//! The hand-written board RTL (`fanin_board.v`) lints clean under `verilator -Wall` and is
//! simulated with Icarus: the Si5324 I²C bus sequence against its ROM, the RX FIFO's
//! whole-frame drops, the register split.
//! `tclsh`, `yosys`, `verilator` and `iverilog` must be installed: these tests fail, not
//! skip, without them.
//! The resource reports (`default` and the large ones) are the slow tier
//! (`cargo xtask test --slow`).

use fanin_gen::board::{self, window, Board};
use fanin_gen::report::{self, Family};
use fanin_hdl::{CoreConfig, RamStyle};
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
           create_pblock add_cells_to_pblock resize_pblock get_pblocks get_debug_cores
           get_files get_debug_ports
           set_false_path set_clock_groups set_max_delay set_input_delay set_output_delay
           current_design create_project current_project create_ip get_ips generate_target
           synth_ip read_verilog read_xdc synth_design opt_design place_design phys_opt_design
           route_design write_checkpoint report_timing_summary report_utilization} {
    proc $c {args} { return {} }
}
# Every call of these is recorded in ::stub_calls; the three reports write ::stub_report(NAME)
# to their -file.
set ::stub_calls {}
array set ::stub_report {check_timing {} report_cdc {} report_methodology {}}
proc stub_file {args} {
    set i [lsearch -exact $args -file]
    if {$i < 0} { return {} }
    return [lindex $args [expr {$i + 1}]]
}
foreach c {check_timing report_cdc report_methodology} {
    proc $c {args} [format {
        lappend ::stub_calls [list %s {*}$args]
        set f [open [stub_file {*}$args] w]
        puts -nonewline $f $::stub_report(%s)
        close $f
    } $c $c]
}
set ::stub_version 2023.2
proc version {args} { return $::stub_version }
proc write_bitstream {args} { lappend ::stub_calls [list write_bitstream {*}$args] }
foreach c {create_debug_core create_debug_port connect_debug_port write_debug_probes} {
    proc $c {args} [format { lappend ::stub_calls [list %s {*}$args] } $c]
}
proc write_cfgmem {args} { lappend ::stub_calls [list write_cfgmem {*}$args] }
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
/// Sources `dir`'s build.tcl under the stubs with the clean reports, after `edit`; the
/// output ends with the stub calls (`CALLS ...`), also when the build fails.
fn run_build_tcl(dir: &Path, b: Board, edit: &str) -> (bool, String, String) {
    let cfg = CoreConfig::by_name(b.config_name()).unwrap();
    let period = board::core_period_ns(&cfg);
    tclsh(
        dir,
        &format!(
            "set ::stub_period {period}\n{CLEAN_REPORTS}\n{edit}\n\
             if {{[catch {{source build.tcl}} e]}} {{ puts \"CALLS $::stub_calls\"; error $e }}\n\
             puts \"CALLS $::stub_calls\""
        ),
    )
}

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
    let mut start = v.find(&format!("module {top} ")).expect("wrapper module");
    // Past the parameter list, if any (SUME's).
    if v[start..].starts_with(&format!("module {top} #(")) {
        start += v[start..].find(") (").expect("port list") + 2;
    }
    let end = start + v[start..].find(");").unwrap();
    let mut m = BTreeMap::new();
    for line in v[start..end].lines().skip(1) {
        let l = line.trim().trim_end_matches(',');
        let Some(rest) = l
            .strip_prefix("input")
            .or_else(|| l.strip_prefix("output"))
            .or_else(|| l.strip_prefix("inout"))
        else {
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
        let (ok, out, err) = run(&format!("set ::stub_period {period}\n{CLEAN_REPORTS}"));
        assert!(ok && out.contains("timing met"), "{}: {out}{err}", b.name());
        let (ok, _, err) = run(&format!(
            "set ::stub_period {period}; set ::stub_slack -0.2\n{CLEAN_REPORTS}"
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

/// Reports as a routed design with no problem writes them (format of Vivado's own: the
/// check_timing table of contents, report_cdc's details, report_methodology's summary).
const CLEAN_REPORTS: &str = r#"
set ::stub_report(check_timing) "check_timing report

Table of Contents
-----------------
1. checking no_clock (0)
2. checking constant_clock (0)
3. checking pulse_width_clock (0)
4. checking unconstrained_internal_endpoints (0)
5. checking no_input_delay (35)
6. checking no_output_delay (34)
7. checking multiple_clock (0)
8. checking generated_clocks (0)
9. checking loops (0)
10. checking partial_input_delay (0)
11. checking partial_output_delay (0)
12. checking latch_loops (0)
"
set ::stub_report(report_cdc) "CDC Report
Severity  ID      Count  Description
--------  ------  -----  -----------
Warning   CDC-15  4      Clock enable controlled CDC structure detected
Info      CDC-3   12     1-bit synchronized with ASYNC_REG property
"
set ::stub_report(report_methodology) "1. REPORT SUMMARY
+-----------+----------+-------------------------------+------------+
| Rule      | Severity | Description                   | Violations |
+-----------+----------+-------------------------------+------------+
| TIMING-18 | Warning  | Missing input or output delay | 10         |
+-----------+----------+-------------------------------+------------+
"
"#;

/// build.tcl runs check_timing, report_cdc and report_methodology on the routed design and
/// fails (exit 3, one line per problem, no bitstream, no flash image) on a non-zero gated
/// check_timing count, a Critical CDC or a Critical Warning methodology rule, and on a
/// check_timing report it cannot read; warnings, advisories and the ungated counts pass. A
/// clean build writes the bitstream and then the flash image for the board's flash.
#[test]
fn build_tcl_gates_on_design_checks_and_writes_flash() {
    for b in Board::ALL {
        let d = build_dir(b, "build_tcl_gates_on_design_checks_and_writes_flash");
        let run = |edit: &str| run_build_tcl(&d, b, edit);
        let calls = |out: &str| -> String {
            out.lines()
                .find_map(|l| l.strip_prefix("CALLS "))
                .unwrap_or_default()
                .to_string()
        };
        // Clean: all three reports, then the bitstream, then the flash image.
        let (ok, out, err) = run("");
        assert!(ok, "{}: clean run failed: {out}{err}", b.name());
        let c = calls(&out);
        for r in [
            "check_timing -file out/check_timing.rpt",
            "report_cdc -details -file out/cdc.rpt",
            "report_methodology -file out/methodology.rpt",
        ] {
            assert!(c.contains(r), "{}: no `{r}` in {c}", b.name());
        }
        let f = b.flash();
        let top = b.top();
        let want = format!(
            "write_cfgmem -force -format mcs -interface {} -size {} -loadbit {{up {:#010x} out/{top}.bit}} -checksum -file out/{top}.mcs",
            f.interface, f.size_mb, f.address
        );
        let (wb, wc) = (
            c.find("write_bitstream").expect("no write_bitstream"),
            c.find(&want)
                .unwrap_or_else(|| panic!("{}: no `{want}` in {c}", b.name())),
        );
        assert!(
            wb < wc,
            "{}: flash image before the bitstream: {c}",
            b.name()
        );
        // Each gated failure exits 3, names the check and writes neither file.
        let gated_ct: Vec<String> = board::CHECK_TIMING_GATED
            .iter()
            .map(|chk| {
                format!(
                    "regsub {{checking {chk} \\(0\\)}} $::stub_report(check_timing) {{checking {chk} (7)}} ::stub_report(check_timing)"
                )
            })
            .collect();
        let mut bad: Vec<(String, String)> = board::CHECK_TIMING_GATED
            .iter()
            .zip(&gated_ct)
            .map(|(chk, e)| (e.clone(), format!("check_timing: {chk} (7)")))
            .collect();
        bad.extend([
            (
                "set ::stub_report(check_timing) {timing report in another format}".into(),
                "check_timing: no 'checking no_clock (N)' line".into(),
            ),
            (
                "append ::stub_report(report_cdc) \"Critical  CDC-1   2      1-bit unknown CDC circuitry\\n\"".into(),
                "report_cdc: CDC-1 Critical".into(),
            ),
            (
                "append ::stub_report(report_methodology) \"| TIMING-6  | Critical Warning | No common primary clock between related clocks | 2 |\\n\"".into(),
                "report_methodology: TIMING-6 Critical Warning, No common primary clock between related clocks (2)".into(),
            ),
        ]);
        for (edit, msg) in &bad {
            let (ok, out, err) = run(edit);
            assert!(
                !ok && err.contains("exited with 3"),
                "{}: `{edit}` did not fail the build with 3: {out}{err}",
                b.name()
            );
            assert!(
                out.contains(&format!("ERROR: fanin: {msg}")),
                "{}: `{edit}`: no message `{msg}` in {out}",
                b.name()
            );
            let c = calls(&out);
            assert!(
                !c.contains("write_bitstream") && !c.contains("write_cfgmem"),
                "{}: `{edit}`: wrote files anyway: {c}",
                b.name()
            );
        }
        // Ungated counts, CDC warnings and methodology warnings pass.
        let (ok, out, err) = run(
            "regsub {no_input_delay \\(35\\)} $::stub_report(check_timing) {no_input_delay (99)} ::stub_report(check_timing)\n\
             append ::stub_report(report_cdc) \"Warning   CDC-13  1      1-bit CDC path on a non-FD primitive\\n\"\n\
             append ::stub_report(report_methodology) \"| SYNTH-9   | Warning  | Small multiplier | 3 |\\n\"",
        );
        assert!(
            ok && out.contains("design checks passed"),
            "{}: {out}{err}",
            b.name()
        );
        // A timing failure still exits 1 (checked first) and writes neither file.
        let (ok, out, err) = run("set ::stub_slack -0.1");
        assert!(
            !ok && err.contains("exited with 1"),
            "{}: {out}{err}",
            b.name()
        );
        let c = calls(&out);
        assert!(
            !c.contains("write_bitstream") && !c.contains("write_cfgmem"),
            "{c}"
        );
    }
    // The flash of each board: SUME's BPI x16, the Alveo cards' SPI x4 behind the golden image.
    assert_eq!(
        (Board::Sume.flash().interface, Board::Sume.flash().size_mb),
        ("BPIx16", 32)
    );
    for b in [Board::Au250, Board::Au280] {
        assert_eq!(
            (b.flash().interface, b.flash().size_mb, b.flash().address),
            ("SPIx4", 128, 0x0100_2000)
        );
    }
}

/// build.tcl checks `version -short` against the pinned release first: the release itself
/// and its updates (2023.2.1) pass, another release exits 4 with a message naming both and
/// the override before anything is built, and `FANIN_VIVADO_ANY_VERSION=1` proceeds with a
/// warning. Every `create_ip` of every board pins its IP's version, at the release's.
#[test]
fn one_pinned_vivado_release_and_ip_versions() {
    for b in Board::ALL {
        let d = build_dir(b, "one_pinned_vivado_release_and_ip_versions");
        let run = |edit: &str| run_build_tcl(&d, b, edit);
        let bt = std::fs::read_to_string(d.join("build.tcl")).unwrap();
        assert!(bt.contains(&format!("set fanin_vivado {}", board::VIVADO_VERSION)));
        for v in [
            board::VIVADO_VERSION.to_string(),
            format!("{}.1", board::VIVADO_VERSION),
        ] {
            let (ok, out, err) = run(&format!("set ::stub_version {v}"));
            assert!(
                ok && out.contains("wrote out/"),
                "{}: {v}: {out}{err}",
                b.name()
            );
        }
        for v in ["2022.2", "2023.1", "2024.2", "2023.20"] {
            let (ok, out, err) = run(&format!("set ::stub_version {v}"));
            assert!(
                !ok && err.contains("exited with 4"),
                "{}: {v}: {out}{err}",
                b.name()
            );
            assert!(
                out.contains(&format!(
                    "ERROR: fanin: this build is pinned to Vivado {}",
                    board::VIVADO_VERSION
                )) && out.contains(&format!("this is Vivado {v}"))
                    && out.contains("FANIN_VIVADO_ANY_VERSION=1"),
                "{}: {out}",
                b.name()
            );
            assert!(
                out.contains("CALLS \n") || out.trim_end().ends_with("CALLS"),
                "{}: built anyway: {out}",
                b.name()
            );
            let (ok, out, err) = run(&format!(
                "set ::stub_version {v}; set ::env(FANIN_VIVADO_ANY_VERSION) 1"
            ));
            assert!(
                ok && out.contains(&format!("WARNING: fanin: Vivado {v}"))
                    && out.contains("wrote out/"),
                "{}: {v} with the override: {out}{err}",
                b.name()
            );
        }
        // Every create_ip carries its pinned version.
        let mut n = 0;
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        for (file, text) in board::ip_tcl(b, &cfg) {
            for l in text.lines().filter(|l| l.starts_with("create_ip ")) {
                n += 1;
                let name = l.split_whitespace().nth(2).unwrap();
                let want = format!("-version {} ", board::pinned_version(name));
                assert!(l.contains(&want), "{}: {file}: {l} lacks {want}", b.name());
            }
        }
        assert!(n >= 4, "{}: only {n} create_ip", b.name());
    }
    // docs/boards.md names the release and every pinned version.
    let doc =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/boards.md")).unwrap();
    assert!(doc.contains(&format!("## One Vivado release: {}", board::VIVADO_VERSION)));
    for (ip, v) in board::PINNED_IP {
        assert!(
            doc.contains(&format!("| `{ip}` | {v} |")),
            "docs/boards.md: no `| `{ip}` | {v} |` row"
        );
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

/// yosys elaborates each wrapper with the generated core and board RTL: every `fanin_core`
/// and `fanin_board.v` port the wrapper connects exists with the right width, and every net
/// is declared.
#[test]
fn wrapper_elaborates_against_the_core() {
    for b in Board::ALL {
        let d = build_dir(b, "wrapper_elaborates_against_the_core");
        let out = Command::new("yosys")
            .args([
                "-q",
                "-p",
                &format!(
                    "read_verilog fanin_core.v {rtl} {top}.v; hierarchy -top {top}; \
                     tee -q -o cells.txt select -list {top}/t:*",
                    rtl = board::BOARD_RTL,
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
        // The floorplan's pblock names cells of the elaborated top.
        let cells: Vec<String> = std::fs::read_to_string(d.join("cells.txt"))
            .unwrap()
            .lines()
            .filter_map(|l| l.strip_prefix(&format!("{}/", b.top())))
            .map(String::from)
            .collect();
        assert!(cells.iter().any(|c| c == "core_inst"), "{cells:?}");
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let fp = d.join("constraints/fanin_floorplan.xdc");
        match board::mac_slr(b) {
            None => assert!(!fp.exists(), "{}: a floorplan without SLRs", b.name()),
            Some(slr) => {
                let x = std::fs::read_to_string(&fp).unwrap();
                let l = x
                    .lines()
                    .find(|l| l.starts_with("add_cells_to_pblock"))
                    .expect("add_cells_to_pblock");
                let names = l
                    .split_once("[list ")
                    .unwrap()
                    .1
                    .trim_end_matches("]]")
                    .split_whitespace()
                    .collect::<Vec<_>>();
                assert_eq!(names, board::floorplan_cells(b, &cfg));
                for n in &names {
                    assert!(
                        cells.iter().any(|c| c == n),
                        "{}: pblock cell {n} is not a cell of {}",
                        b.name(),
                        b.top()
                    );
                }
                for p in 0..cfg.ports {
                    for n in [format!("rx_fifo_{p}"), format!("tx_fifo_{p}")] {
                        assert!(
                            names.contains(&n.as_str()),
                            "{}: {n} not in the pblock",
                            b.name()
                        );
                    }
                }
                assert!(
                    x.contains(&format!(
                        "resize_pblock [get_pblocks pblock_fanin_core] -add {{{slr}}}"
                    )),
                    "{x}"
                );
            }
        }
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
    // The second figure: block-RAM reads are found, and the fan-out list is full.
    let f = &r.second;
    assert!(f.ram_bits_to_logic + f.ram_bits_to_reg > 0, "{f:?}");
    assert!(f.ram_depth <= r.depth, "{f:?}");
    assert_eq!(f.fanouts.len(), report::FANOUTS_SHOWN, "{f:?}");
    assert!(f.fanouts.windows(2).all(|w| w[0].1 >= w[1].1), "{f:?}");
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

/// A configuration that puts the slot memory in UltraRAM is refused for the Virtex-7 of
/// SUME, by the board build and by a 7-series resource report, before any work is done.
#[test]
fn ultra_slot_memory_is_refused_on_7_series() {
    let cfg = CoreConfig {
        slot_ram: RamStyle::Ultra,
        ..CoreConfig::by_name("sume").unwrap()
    };
    let e = board::write(Board::Sume, &cfg, &out_dir("ultra-sume"))
        .unwrap_err()
        .to_string();
    assert!(e.contains("UltraRAM") && e.contains("--config sume"), "{e}");
    assert_eq!(Family::for_config(&cfg), Family::Xcup);
    let e = report::run(
        &cfg,
        Family::Xc7,
        &out_dir("ultra-xc7"),
        Duration::from_secs(1),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("UltraRAM") && e.contains("xc7"), "{e}");
    // The Alveo boards take it.
    let alveo = CoreConfig::by_name("alveo").unwrap();
    assert_eq!(alveo.slot_ram, RamStyle::Ultra);
    Board::Au280.check(&alveo).unwrap();
}

/// `--report` counts URAM: a small configuration (64 slots) with `slot_ram = ultra`,
/// synthesised whole (slow tier), maps its 512 x 512-bit slot memory to 8 URAM288.
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn report_counts_uram() {
    let cfg = CoreConfig {
        name: "small_ultra".into(),
        slots: 64,
        slot_ram: RamStyle::Ultra,
        ..CoreConfig::by_name("default").unwrap()
    };
    let d = out_dir("report-small-ultra");
    let r = report::run(&cfg, Family::Xcup, &d, Duration::from_secs(3600)).unwrap();
    assert!(r.uram >= 8, "{r:?}");
    assert_eq!(r.cells.get("URAM288").copied().unwrap_or(0), r.uram);
    let text = r.render(&cfg.name, Family::Xcup);
    assert!(text.contains(&format!("URAM     {:>8}", r.uram)), "{text}");
    let _ = std::fs::remove_dir_all(d);
}

/// The hand-written board RTL of every board into a fresh directory; returns the directory.
fn board_rtl_dir(b: Board, test: &str) -> PathBuf {
    let d = out_dir(&format!("{test}-{}", b.name()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    let cfg = CoreConfig::by_name(b.config_name()).unwrap();
    std::fs::write(d.join(board::BOARD_RTL), board::board_rtl(b, &cfg).unwrap()).unwrap();
    d
}

/// `fanin_board.v` (every module, every board) passes `verilator --lint-only -Wall`. The
/// file carries one waiver, DECLFILENAME (several modules in one file), as the core does.
#[test]
fn board_rtl_lints_clean() {
    for b in Board::ALL {
        let d = board_rtl_dir(b, "board_rtl_lints_clean");
        let mut tops = vec!["fanin_rx_fifo", "fanin_board_regs", "fanin_mac_stats"];
        if b == Board::Sume {
            tops.push("fanin_si5324_init");
        } else {
            tops.push("fanin_axil_arb");
        }
        for top in tops {
            let out = Command::new("verilator")
                .args([
                    "--lint-only",
                    "-Wall",
                    "--top-module",
                    top,
                    board::BOARD_RTL,
                ])
                .current_dir(&d)
                .output()
                .expect("verilator must be installed (see README setup)");
            assert!(
                out.status.success(),
                "{} {top}: {}",
                b.name(),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Compiles `tb` (gen/tests/tb/) with `fanin_board.v` of `board` under Icarus with the
/// given `-P` parameters, runs it and returns its output lines.
fn icarus(b: Board, test: &str, tb: &str, params: &[String]) -> Vec<String> {
    let d = board_rtl_dir(b, test);
    let tb_path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/tb")
        .join(tb);
    let mut cmd = Command::new("iverilog");
    cmd.args(["-g2005", "-o", "sim.vvp"]);
    for p in params {
        cmd.arg(format!("-Ptb.{p}"));
    }
    let out = cmd
        .arg(board::BOARD_RTL)
        .arg(&tb_path)
        .current_dir(&d)
        .output()
        .expect("iverilog must be installed (apt-get install iverilog)");
    assert!(
        out.status.success(),
        "iverilog {tb} {params:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = Command::new("vvp")
        .args(["-n", "sim.vvp"])
        .current_dir(&d)
        .output()
        .expect("vvp (Icarus) must be installed");
    assert!(out.status.success(), "vvp {tb} {params:?}");
    let _ = std::fs::remove_dir_all(&d);
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(String::from)
        .collect()
}

/// The bus lines the slave model prints for one attempt over `writes`, with the slave
/// NACKing the address byte of the write at index `nack_at`, if any (the attempt stops there).
fn i2c_lines(writes: &[board::I2cWrite], nack_at: Option<usize>) -> Vec<String> {
    let mut v = Vec::new();
    for (i, w) in writes.iter().enumerate() {
        v.push("S".to_string());
        if nack_at == Some(i) {
            v.push(format!("B {:02x} N", w.addr << 1));
            v.push("P".into());
            return v;
        }
        v.push(format!("B {:02x} A", w.addr << 1));
        v.extend(w.bytes.iter().map(|b| format!("B {b:02x} A")));
        v.push("P".into());
    }
    v
}

/// Shortest bus timings printed by the testbench (`T lo=.. hi=..`), ns.
fn i2c_timing(lines: &[String]) -> BTreeMap<String, f64> {
    let t = lines
        .iter()
        .find(|l| l.starts_with("T "))
        .expect("timing line");
    t[2..]
        .split_whitespace()
        .map(|kv| {
            let (k, v) = kv.split_once('=').unwrap();
            (k.to_string(), v.parse().unwrap())
        })
        .collect()
}

/// The byte the testbench's slave returns on read number `k` (`rd_byte` in si5324_tb.v):
/// LOL_INT set among other bits, clear with every other bit set, set alone, clear.
fn si5324_tb_read(k: usize) -> u8 {
    [0xa5, 0xfe, 0x01, 0x06][k % 4]
}

/// The lines of one status poll (write of the status register, repeated START, one-byte
/// read answered with NACK, STOP) and the `Q` line of the master's outputs after it: read
/// number `k`, its address byte refused by the slave if `nack`.
fn si5324_poll_lines(k: usize, nack: bool) -> Vec<String> {
    let a = board::SI5324_ADDR << 1;
    let mut v = vec![
        "S".to_string(),
        format!("B {a:02x} A"),
        format!("B {:02x} A", board::SI5324_STATUS_REG),
        "Sr".into(),
    ];
    if nack {
        v.push(format!("B {:02x} N", a | 1));
        v.push("P".into());
        v.push("Q valid=0 lol=0".into());
    } else {
        let b = si5324_tb_read(k);
        v.push(format!("B {:02x} A", a | 1));
        v.push(format!("R {b:02x} N"));
        v.push("P".into());
        v.push(format!("Q valid=1 lol={}", b >> board::SI5324_LOL_BIT & 1));
    }
    v
}

/// The Si5324 initialiser drives, bit for bit, the bus sequence of its ROM (START,
/// address and write bit, register, values, STOP for each write, in `SI5324_INIT` order)
/// with standard-mode timing, raises `done` only after the lock wait, retries the whole ROM
/// after a NACK, and gives up with `error` when the device never answers. After `done` it
/// polls the status register (register address, repeated START, a one-byte read it NACKs,
/// STOP): `stat_valid`/`lol` are 0/0 before the first poll, follow LOL_INT of each byte
/// read, and are 0/0 after a poll whose read address is refused, and polling goes on.
#[test]
fn si5324_i2c_sequence_matches_rom() {
    let rom = board::SI5324_INIT;
    let bus = |l: &[String]| -> Vec<String> {
        l.iter()
            .filter(|x| {
                ["S", "Sr", "P"].contains(&x.as_str())
                    || x.starts_with("B ")
                    || x.starts_with("R ")
                    || x.starts_with("Q ")
            })
            .cloned()
            .collect()
    };
    // After done: no status yet, then four polls (the testbench's READS).
    let polls = |nack_read: Option<usize>| -> Vec<String> {
        let mut v = vec!["Q valid=0 lol=0".to_string()];
        for k in 0..4 {
            v.extend(si5324_poll_lines(k, nack_read == Some(k)));
        }
        v
    };
    // Every write acknowledged.
    let out = icarus(Board::Sume, "si5324-ok", "si5324_tb.v", &[]);
    assert!(!out.iter().any(|l| l == "TIMEOUT"), "{out:?}");
    let mut want = i2c_lines(rom, None);
    want.extend(polls(None));
    assert_eq!(bus(&out), want, "{out:?}");
    // The bytes read set LOL_INT, clear it, set it, clear it (the Q lines check each).
    assert_eq!(
        (0..4).map(|k| si5324_tb_read(k) & 1).collect::<Vec<_>>(),
        [1, 0, 1, 0]
    );
    let t = i2c_timing(&out);
    // Standard mode: SCL low >= 4.7 us, high >= 4.0 us, START (and repeated START) hold
    // >= 4.0 us, repeated START set-up >= 4.7 us, STOP set-up >= 4.0 us, bus free >= 4.7 us.
    for (k, min) in [
        ("lo", 4700.0),
        ("hi", 4000.0),
        ("hdsta", 4000.0),
        ("susta", 4700.0),
        ("susto", 4000.0),
        ("buf", 4700.0),
    ] {
        assert!(t[k] >= min, "{k} = {} ns < {min} ns: {t:?}", t[k]);
    }
    let d = out.iter().find(|l| l.starts_with("D ")).unwrap();
    assert!(d.starts_with("D done=1 error=0"), "{d}");
    // LOCK_DELAY = 400 cycles of 250 ns between the last STOP and done.
    let wait: f64 = d.rsplit('=').next().unwrap().parse().unwrap();
    assert!(wait >= 400.0 * 250.0, "{d}");

    // The Si5324 refuses its read address on the second poll: that poll ends with STOP,
    // the status reads 0/0 (after 1/1), and the next polls go on as before.
    let out = icarus(
        Board::Sume,
        "si5324-read-nack",
        "si5324_tb.v",
        &["NACK_READ=1".into()],
    );
    let mut want = i2c_lines(rom, None);
    want.extend(polls(Some(1)));
    assert_eq!(bus(&out), want, "{out:?}");
    assert!(
        out.iter().any(|l| l.starts_with("D done=1 error=0")),
        "{out:?}"
    );

    // The Si5324 refuses its address twice: each attempt stops there and the whole ROM
    // (mux selection first) is sent again.
    let out = icarus(
        Board::Sume,
        "si5324-retry",
        "si5324_tb.v",
        &["NACK_D0=2".into()],
    );
    let mut want = Vec::new();
    for _ in 0..2 {
        want.extend(i2c_lines(rom, Some(1)));
    }
    want.extend(i2c_lines(rom, None));
    want.extend(polls(None));
    assert_eq!(bus(&out), want, "{out:?}");
    assert!(
        out.iter().any(|l| l.starts_with("D done=1 error=0")),
        "{out:?}"
    );

    // Nobody answers: MAX_TRIES attempts, then error, never done, and no status poll.
    let out = icarus(
        Board::Sume,
        "si5324-dead",
        "si5324_tb.v",
        &["NEVER_ACK=1".into(), "MAX_TRIES=3".into()],
    );
    let mut want = Vec::new();
    for _ in 0..3 {
        want.extend(i2c_lines(rom, Some(0)));
    }
    assert_eq!(bus(&out), want, "{out:?}");
    assert!(
        out.iter().any(|l| l.starts_with("D done=0 error=1")),
        "{out:?}"
    );
}

/// One frame as the RX FIFO testbench prints it: bytes (hex) and tuser.
type Frame = (String, String);

/// Parses the RX FIFO testbench: (pushed, delivered, drop counter, mid-frame drops).
fn rx_fifo_run(params: &[String]) -> (Vec<Frame>, Vec<Frame>, u64, u64) {
    let out = icarus(Board::Sume, "rx-fifo", "rx_fifo_tb.v", params);
    let errs: Vec<&String> = out.iter().filter(|l| l.starts_with("ERR")).collect();
    assert!(errs.is_empty(), "{params:?}: {errs:?}");
    let frames = |tag: &str| -> Vec<Frame> {
        out.iter()
            .filter_map(|l| l.strip_prefix(tag))
            .map(|r| {
                let (hex, u) = r.split_once(' ').unwrap();
                (hex.to_string(), u.to_string())
            })
            .collect()
    };
    let num = |tag: &str| -> u64 {
        out.iter()
            .find_map(|l| l.strip_prefix(tag))
            .unwrap_or_else(|| panic!("{params:?}: no {tag}line"))
            .trim()
            .parse()
            .unwrap()
    };
    (frames("TX "), frames("RX "), num("DROPS "), num("MID "))
}

/// The MAC-side RX FIFO never delivers a truncated frame: with the reader stalling in long
/// bursts, every frame out is byte-identical (and tuser-identical) to one pushed, in order;
/// the others were dropped whole and counted exactly; some drops happened in mid-frame (the
/// roll-back path); frames larger than the FIFO always drop; a reader that keeps up loses
/// nothing. Seeds are printed in the failure message.
#[test]
fn rx_fifo_drops_whole_frames() {
    // (data width, address bits, write half-period, read half-period): SUME's 156.25 MHz
    // MAC into a 200 MHz core, the CMAC's 322 MHz into a 322 MHz core.
    for (dw, aw, s_half, m_half) in [(64u32, 5u32, 3.2, 2.5), (512, 4, 1.55, 1.553)] {
        let cap_bytes = (1u64 << aw) * u64::from(dw / 8);
        for seed in [1u32, 2, 3] {
            let ps = |extra: &[String]| -> Vec<String> {
                let mut v = vec![
                    format!("DATA_W={dw}"),
                    format!("ADDR_W={aw}"),
                    format!("SEED={seed}"),
                    format!("S_HALF={s_half}"),
                    format!("M_HALF={m_half}"),
                ];
                v.extend_from_slice(extra);
                v
            };
            let params = ps(&["STALL=1".into()]);
            let (tx, rx, drops, mid) = rx_fifo_run(&params);
            assert_eq!(tx.len(), 200, "{params:?}");
            let mut j = 0;
            for f in &rx {
                while j < tx.len() && tx[j] != *f {
                    j += 1;
                }
                assert!(
                    j < tx.len(),
                    "{params:?}: a frame out was never pushed (truncated or corrupted): {f:?}"
                );
                j += 1;
            }
            assert_eq!(
                drops as usize,
                tx.len() - rx.len(),
                "{params:?}: the drop counter must count every frame not delivered"
            );
            assert!(drops > 0 && !rx.is_empty(), "{params:?}: drops {drops}");
            assert!(mid > 0, "{params:?}: no frame was dropped in mid-frame");
            assert!(
                rx.iter().all(|(h, _)| h.len() as u64 / 2 <= cap_bytes),
                "{params:?}: a frame larger than the FIFO came out"
            );
            assert!(
                rx.iter().any(|(_, u)| u == "1"),
                "{params:?}: bad-frame tuser must pass through"
            );
            // A reader that keeps up, frames up to half the FIFO: nothing is lost.
            let params = ps(&["STALL=0".into(), format!("MAX_LEN={}", cap_bytes / 2)]);
            let (tx, rx, drops, _) = rx_fifo_run(&params);
            assert_eq!(drops, 0, "{params:?}");
            assert_eq!(tx, rx, "{params:?}");
        }
    }
}

/// The register split: core addresses reach the core (AW and W together, even when the
/// master sends W later); the board window answers drop counters, status, RS-FEC, the
/// board information word, link bits and both words of every MAC counter at the offsets of
/// `fanin_regs::board`; the RS-FEC register takes writes (only the strobed bytes, only the
/// mask's bits); any other window write is refused (SLVERR) and reaches nothing.
#[test]
fn board_regs_split_core_and_window() {
    let out = icarus(Board::Au250, "board-regs", "board_regs_tb.v", &[]);
    let want = [
        "CR 0040",
        "R 00000040 c0de0040 0",
        "R 00010000 00000011 0",
        "R 00010004 00000022 0",
        "R 00010008 00000000 0",
        "R 00010040 00000001 0",
        "R 00010044 00000003 0",
        "R 00010048 fb0a0202 0",
        "R 00010100 00000003 0",
        "R 00010140 00000021 0",
        "R 00010108 5a5a0000 0",
        "R 0001010c b0b00000 0",
        "R 00010110 5a5a0001 0",
        "R 00010118 5a5a0002 0",
        "R 00010158 5a5a0102 0",
        "R 0001015c b0b00102 0",
        "CW 0044 12345678",
        "W 00000044 0",
        "W 00010000 2",
        "F 11",
        "W 00010048 2",
        "F 11",
        "W 00010044 0",
        "F 10",
        "R 00010044 00000002 0",
        "W 00010044 0",
        "F 10",
        "W 00010044 0",
        "F 01",
        "R 00010200 00000000 0",
        "CR 0a00",
        "R 00000a00 c0de0a00 0",
        "END",
    ];
    assert_eq!(out, want);
    // The testbench's addresses are the shared window's.
    assert_eq!(window::BASE, 0x1_0000);
    assert_eq!(
        (window::STATUS, window::RSFEC, window::INFO),
        (0x40, 0x44, 0x48)
    );
    assert_eq!(window::port_reg(1, window::PORT_LINK), 0x140);
    assert_eq!(window::counter_reg(0, 0), 0x108);
    assert_eq!(window::counter_reg(0, 1), 0x110);
    assert_eq!(window::counter_reg(1, 2), 0x158);
    assert_eq!(fanin_regs::board::BoardKind::Au250.info(2), 0xfb0a_0202);
}

/// The MAC statistics crossing: with random increments in a MAC clock and reads in a core
/// clock (faster and slower, three seeds each), every copy on the core side is one instant
/// of the MAC side (two counters that always move together never disagree), never goes
/// backwards, carries into the high word, updates while counting, and ends equal to the
/// testbench's own totals.
#[test]
fn mac_stats_cross_whole_snapshots() {
    // (MAC half-period, core half-period): CMAC 322 MHz into a 250 MHz core, 156.25 MHz
    // into 200 MHz (SUME), and a core slower than the MAC by 3x.
    for (s_half, m_half) in [(1.55, 2.0), (3.2, 2.5), (1.55, 4.7)] {
        for seed in [1u32, 2, 3] {
            let params = vec![
                format!("SEED={seed}"),
                format!("S_HALF={s_half}"),
                format!("M_HALF={m_half}"),
            ];
            let out = icarus(Board::Au250, "mac-stats", "mac_stats_tb.v", &params);
            let errs: Vec<&String> = out.iter().filter(|l| l.starts_with("ERR")).collect();
            assert!(errs.is_empty(), "{params:?}: {errs:?}");
            let line = |tag: &str| -> Vec<u64> {
                out.iter()
                    .find_map(|l| l.strip_prefix(tag))
                    .unwrap_or_else(|| panic!("{params:?}: no {tag}line in {out:?}"))
                    .split_whitespace()
                    .map(|x| x.parse().unwrap())
                    .collect()
            };
            let (s, m, u) = (line("S "), line("M "), line("U "));
            assert_eq!(m, s, "{params:?}: the core side's final copy");
            assert!(
                s[0] > 1 << 32,
                "{params:?}: the carry into bit 32 was not crossed"
            );
            assert!(
                u[0] > 100,
                "{params:?}: only {} copies while counting",
                u[0]
            );
        }
    }
}

/// Every wrapper, with the generated core and board RTL and the behavioural models of the
/// vendor IP (gen/rtl/sim/: the ports the wrapper connects, with the widths of Xilinx's
/// instantiation templates), under the board-top simulation's top (`board::sim`), passes
/// `verilator --lint-only -Wall`: every IP port the wrapper names exists on the model,
/// widths agree, nothing in the wrapper, the models or the top is undriven or unused.
/// Waivers: the generated core's own warnings (linted with its own rules elsewhere),
/// `.port()` (PINCONNECTEMPTY, the wrapper's style for unused IP outputs) and the models'
/// file name (DECLFILENAME: several modules in one file).
#[test]
fn wrapper_lints_with_ip_models() {
    for b in Board::ALL {
        let d = build_dir(b, "wrapper_lints_with_ip_models");
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        std::fs::write(d.join("models.v"), board::sim::sim_models(b, &cfg)).unwrap();
        let top_file = format!("{}.v", board::sim::SIM_TOP);
        std::fs::write(d.join(&top_file), board::sim::sim_top(b, &cfg)).unwrap();
        std::fs::write(
            d.join("waive.vlt"),
            "`verilator_config\nlint_off -file \"*fanin_core.v\"\nlint_off -rule PINCONNECTEMPTY\n\
             lint_off -rule DECLFILENAME -file \"*models.v\"\n",
        )
        .unwrap();
        let top = b.top();
        let out = Command::new("verilator")
            .args([
                "--lint-only",
                "-Wall",
                "--timescale",
                "1ns/1ps",
                "-Wno-TIMESCALEMOD",
                "--top-module",
                board::sim::SIM_TOP,
                "waive.vlt",
                "fanin_core.v",
                board::BOARD_RTL,
                "models.v",
                &format!("{top}.v"),
                &top_file,
            ])
            .current_dir(&d)
            .output()
            .expect("verilator must be installed (see README setup)");
        assert!(
            out.status.success(),
            "{}: {}",
            b.name(),
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}

/// The wrapper hands `fanin_board_regs` the window layout of `fanin_regs::board`, at these
/// exact offsets (the documented register map: docs/boards.md, "Board register window";
/// `fanin hw status` reads the same constants), the board's information word, and RS-FEC
/// writable and on after reset exactly on the CMAC boards; the CMACs take their RS-FEC
/// enables from it and report the status and statistics outputs.
#[test]
fn wrapper_window_offsets_are_the_documented_ones() {
    for b in Board::ALL {
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let v = board::wrapper(b, &cfg);
        let (info, link_w, status_w, fec) = match b {
            Board::Sume => ("32'hfb0a0401", 10, 7, "4'h0"),
            Board::Au250 => ("32'hfb0a0202", 6, 5, "2'h3"),
            Board::Au280 => ("32'hfb0a0203", 6, 5, "2'h3"),
        };
        for want in [
            ".RX_DROPS(16'h0000)".to_string(),
            ".STATUS(16'h0040)".into(),
            ".RSFEC(16'h0044)".into(),
            ".INFO(16'h0048)".into(),
            format!(".INFO_VALUE({info})"),
            ".PORTS_BASE(16'h0100)".into(),
            ".PORT_STRIDE(16'h0040)".into(),
            ".PORT_LINK(16'h0000)".into(),
            ".PORT_COUNTERS(16'h0008)".into(),
            ".COUNTERS(3)".into(),
            format!(".STATUS_W({status_w})"),
            format!(".LINK_W({link_w})"),
            format!(".RSFEC_MASK({fec})"),
            format!(".RSFEC_RESET({fec})"),
        ] {
            assert!(v.contains(&want), "{}: no {want}", b.name());
        }
        assert_eq!(b.kind().link_width(), link_w);
        assert_eq!(b.kind().status_width(), status_w);
        for p in 0..cfg.ports {
            assert!(v.contains("fanin_mac_stats #("), "{}", b.name());
            assert!(
                v.contains(&format!(") mac_stats_{p} (")),
                "{} port {p}",
                b.name()
            );
            if b == Board::Sume {
                assert!(v.contains(&format!(".signal_detect(~sfp_los[{p}])")));
                assert!(v.contains(&format!(".tx_fault(sfp_tx_fault[{p}])")));
            } else {
                for port in [
                    format!(".ctl_rx_rsfec_enable(mac{p}_rsfec)"),
                    format!(".ctl_tx_rsfec_enable(mac{p}_rsfec)"),
                    format!(".stat_rx_status(mac{p}_stat_rx_status)"),
                    format!(".stat_rx_total_packets(mac{p}_stat_rx_total_packets)"),
                    format!(".stat_rx_bad_fcs(mac{p}_stat_rx_bad_fcs)"),
                    format!(".stat_tx_total_packets(mac{p}_stat_tx_total_packets)"),
                ] {
                    assert!(v.contains(&port), "{}: no {port}", b.name());
                }
            }
        }
        if b == Board::Sume {
            assert!(v.contains(
                "assign board_status = {si5324_stat_valid, si5324_lol, 1'b0, ~si5324_alarm_b, qplllock, si5324_error, si5324_done};"
            ));
        }
    }
}

/// docs/boards.md's "Board register window" table and bit lists are the code's
/// (`fanin_regs::board`): every row's offset and name, in order, and every status and link
/// bit's number and name.
#[test]
fn docs_window_table_is_the_code() {
    use fanin_regs::board::BoardKind;
    let doc = include_str!("../../docs/boards.md");
    let sec = doc
        .split("## Board register window")
        .nth(1)
        .expect("docs/boards.md has a 'Board register window' section");
    let sec = &sec[..sec.find("\n## ").unwrap_or(sec.len())];
    let rows: Vec<(String, String)> = sec
        .lines()
        .filter(|l| l.starts_with("| `0x"))
        .map(|l| {
            let c: Vec<&str> = l.split('|').map(str::trim).collect();
            (
                c[1].trim_matches('`').to_string(),
                c[2].trim_matches('`').to_string(),
            )
        })
        .collect();
    let per_port = |off: u32| format!("0x{off:03x} + 0x{:x}·p", window::PORT_STRIDE);
    let mut want = vec![
        (
            format!("0x{:03x} + 4·p", window::RX_DROPS),
            "rx_drops".to_string(),
        ),
        (format!("0x{:03x}", window::STATUS), "status".into()),
        (format!("0x{:03x}", window::RSFEC), "rsfec".into()),
        (format!("0x{:03x}", window::INFO), "info".into()),
        (
            per_port(window::PORTS_BASE + window::PORT_LINK),
            "link".into(),
        ),
    ];
    for (k, (name, _)) in window::COUNTERS.iter().enumerate() {
        want.push((per_port(window::counter_reg(0, k)), name.to_string()));
    }
    assert_eq!(rows, want);
    // Prose may wrap anywhere.
    let sec = sec.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(sec.contains(&format!("bits 31:16 `0x{:04x}`", window::INFO_MAGIC)));
    let codes: Vec<String> = BoardKind::ALL
        .iter()
        .map(|b| format!("{} {}", *b as u32, b.name()))
        .collect();
    assert!(sec.contains(&codes.join(", ")), "board codes {codes:?}");
    for b in BoardKind::ALL {
        for bit in b.status_bits().iter().chain(b.link_bits()) {
            let t = format!("{} `{}`", bit.bit, bit.name);
            assert!(sec.contains(&t), "{}: docs lack '{t}'", b.name());
        }
    }
}

/// The control arbiter: two AXI4-Lite masters (PCIe and JTAG stand-ins, AW and W in random
/// order and skew) hammer one register file at once (three seeds, 300 transactions each);
/// every read returns what its own master last wrote there, every response is OKAY, no
/// second AW or AR reaches the slave before the first is answered, and the grants really
/// alternate.
#[test]
fn axil_arb_serves_both_masters() {
    for seed in [1u32, 2, 3] {
        let params = vec![format!("SEED={seed}")];
        let out = icarus(Board::Au250, "axil-arb", "axil_arb_tb.v", &params);
        let bad: Vec<&String> = out
            .iter()
            .filter(|l| l.starts_with("ERR") || *l == "TIMEOUT")
            .collect();
        assert!(bad.is_empty(), "seed {seed}: {bad:?}");
        for m in 0..2 {
            let done = out
                .iter()
                .find_map(|l| l.strip_prefix(&format!("DONE {m} ")))
                .unwrap_or_else(|| panic!("seed {seed}: master {m} did not finish: {out:?}"));
            let n: Vec<u32> = done.split(' ').map(|x| x.parse().unwrap()).collect();
            assert_eq!(n[0] + n[1], 300, "seed {seed}: master {m}");
            assert!(n[0] > 100 && n[1] > 100, "seed {seed}: master {m}: {n:?}");
        }
        let sw: u32 = out
            .iter()
            .find_map(|l| l.strip_prefix("SWITCH "))
            .unwrap()
            .parse()
            .unwrap();
        assert!(sw > 100, "seed {seed}: only {sw} grant changes");
    }
}

/// The Alveo control path: XDMA (pinned version) with its AXI-Lite master on BAR0, crossed
/// into core_clk, arbitrated with JTAG-to-AXI in front of the register split; SUME keeps
/// JTAG alone. The PCIe pins are in pcie.xdc (the port check above places every one).
#[test]
fn alveo_has_a_pcie_bar_and_jtag_fallback() {
    for b in Board::ALL {
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let v = board::wrapper(b, &cfg);
        let tcl: BTreeMap<String, String> = board::ip_tcl(b, &cfg).into_iter().collect();
        let xdc: Vec<&str> = b.constraints().iter().map(|(n, _)| *n).collect();
        if b == Board::Sume {
            assert!(!v.contains("xdma_pcie") && !v.contains("fanin_axil_arb"));
            assert!(v.contains(".s_axil_awaddr(jtag_awaddr)"));
            assert!(!tcl.contains_key("xdma_pcie.tcl") && !xdc.contains(&"pcie.xdc"));
            continue;
        }
        for want in [
            "xdma_pcie xdma_inst (",
            ".m_axil_awaddr(pcie_awaddr)",
            "axil_cdc pcie_cdc_inst (",
            ".s_axi_aclk(pcie_axi_clk)",
            ".m_axi_aclk(core_clk)",
            ".m_axi_awaddr(bar_awaddr)",
            ".s0_awaddr(bar_awaddr)",
            ".s1_awaddr(jtag_awaddr)",
            ".m_awaddr(ctl_awaddr)",
            ".s_axil_awaddr(ctl_awaddr)",
            ".sys_rst_n(pcie_perst_n)",
            "assign board_status = {pcie_link_up, 3'd0, 1'b1};",
        ] {
            assert!(v.contains(want), "{}: no {want}", b.name());
        }
        let x = &tcl["xdma_pcie.tcl"];
        assert!(
            x.contains("create_ip -name xdma -vendor xilinx.com -library ip -version 4.1 "),
            "{x}"
        );
        assert!(x.contains("CONFIG.axilite_master_en {true}"), "{x}");
        let c = &tcl["axil_cdc.tcl"];
        assert!(
            c.contains("-version 2.1 ") && c.contains("CONFIG.PROTOCOL {AXI4LITE}"),
            "{c}"
        );
        assert!(xdc.contains(&"pcie.xdc"));
        assert!(board::board_rtl(b, &cfg)
            .unwrap()
            .contains("module fanin_axil_arb"));
    }
}

/// The JTAG-to-AXI master and the debug hub run on the slow init_clk (the MMCM's 100 MHz
/// output), and an AXI-Lite clock converter carries JTAG's bus into core_clk on every board:
/// the master drives `jtag_slow_*` only, the converter takes `jtag_slow_*` at init_clk and
/// gives `jtag_*` at core_clk, and `jtag_*` is what the register split (SUME) or the
/// arbiter's second master (Alveo) gets. The debug hub's XDC puts `dbg_hub` on init_clk at
/// the MMCM's frequency, and build.tcl reads it for implementation only.
#[test]
fn jtag_and_debug_hub_on_a_slow_clock() {
    let inst = |v: &str, head: &str| -> String {
        let i = v.find(head).unwrap_or_else(|| panic!("no {head}"));
        v[i..i + v[i..].find(");").unwrap()].to_string()
    };
    for b in Board::ALL {
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let v = board::wrapper(b, &cfg);
        let jtag = inst(&v, "jtag_axil jtag_axil_inst (");
        assert!(
            jtag.contains(".aclk(init_clk)") && jtag.contains(".aresetn(~init_rst)"),
            "{jtag}"
        );
        let cdc = inst(&v, "axil_cdc jtag_cdc_inst (");
        for w in [
            ".s_axi_aclk(init_clk)",
            ".s_axi_aresetn(~init_rst)",
            ".m_axi_aclk(core_clk)",
            ".m_axi_aresetn(~core_rst)",
        ] {
            assert!(cdc.contains(w), "{}: jtag_cdc_inst lacks {w}", b.name());
        }
        for n in [
            "awaddr", "awvalid", "awready", "wdata", "wstrb", "wvalid", "wready", "bresp",
            "bvalid", "bready", "araddr", "arvalid", "arready", "rdata", "rresp", "rvalid",
            "rready",
        ] {
            assert!(
                jtag.contains(&format!(".m_axi_{n}(jtag_slow_{n})")),
                "{}: JTAG master {n}",
                b.name()
            );
            assert!(
                cdc.contains(&format!(".s_axi_{n}(jtag_slow_{n})")),
                "{}: converter slave {n}",
                b.name()
            );
            assert!(
                cdc.contains(&format!(".m_axi_{n}(jtag_{n})")),
                "{}: converter master {n}",
                b.name()
            );
            // jtag_slow_* is used by the master and the converter only.
            assert_eq!(
                v.matches(&format!("(jtag_slow_{n})")).count(),
                2,
                "{}: jtag_slow_{n}",
                b.name()
            );
        }
        let user = if b == Board::Sume {
            inst(&v, ") board_regs_inst (")
        } else {
            inst(&v, ") ctl_arb_inst (")
        };
        let port = if b == Board::Sume {
            ".s_axil_awaddr(jtag_awaddr)"
        } else {
            ".s1_awaddr(jtag_awaddr)"
        };
        assert!(user.contains(port), "{}: {port}", b.name());
        let tcl: BTreeMap<String, String> = board::ip_tcl(b, &cfg).into_iter().collect();
        assert!(
            tcl["axil_cdc.tcl"].contains("CONFIG.ACLK_ASYNC {1}"),
            "{}",
            b.name()
        );
        assert!(tcl["clk_core.tcl"].contains(&format!(
            "CONFIG.CLKOUT2_REQUESTED_OUT_FREQ {{{:.3}}}",
            board::INIT_CLK_MHZ as f64
        )));
        let files: BTreeMap<String, String> = b.files(&cfg).unwrap().into_iter().collect();
        let x = &files["constraints/fanin_debug.xdc"];
        const { assert!(board::INIT_CLK_MHZ <= 100) };
        for want in [
            format!(
                "set_property C_CLK_INPUT_FREQ_HZ {} [get_debug_cores dbg_hub]",
                board::INIT_CLK_MHZ * 1_000_000
            ),
            "set_property C_ENABLE_CLK_DIVIDER false [get_debug_cores dbg_hub]".into(),
            "connect_debug_port dbg_hub/clk [get_nets init_clk]".into(),
        ] {
            assert!(
                x.contains(&want),
                "{}: fanin_debug.xdc lacks {want}",
                b.name()
            );
        }
        assert!(
            v.contains(".clk_out2(init_clk)"),
            "{}: init_clk is not the MMCM's second output",
            b.name()
        );
        assert!(files["build.tcl"].contains(
            "set_property USED_IN_SYNTHESIS false [get_files [file join $here constraints fanin_debug.xdc]]"
        ));
    }
}

/// `--ila` is opt-in. Off (the default): no ILA IP, the core's `dbg_*` outputs unconnected,
/// no netlist insertion in build.tcl. On: an `ila_core` IP (pinned version, one probe per
/// `dbg_*` output with its width) wired to `core_dbg_*` at core_clk, which yosys elaborates
/// against the IP's port list; build.tcl inserts `u_ila_state` on the q output of each
/// state register, which are instances of the generated core, and exits 5 when synthesis
/// lost one. `fanin-gen --ila` without `--board` is refused.
#[test]
fn ila_is_opt_in() {
    for b in Board::ALL {
        let cfg = CoreConfig::by_name(b.config_name()).unwrap();
        let dbg = board::dbg_ports(&cfg);
        assert_eq!(
            dbg,
            [
                ("dbg_valid", 1),
                ("dbg_kind", 2),
                ("dbg_arg", 32),
                ("dbg_tick", 32)
            ]
            .map(|(n, w)| (n.to_string(), w))
        );
        // Off.
        let off: BTreeMap<String, String> = b.files(&cfg).unwrap().into_iter().collect();
        let v = &off[&format!("{}.v", b.top())];
        assert!(
            !v.contains("ila_core") && !v.contains("core_dbg_"),
            "{}",
            b.name()
        );
        for (n, _) in &dbg {
            assert!(
                v.contains(&format!(".{n}()")),
                "{}: {n} connected without --ila",
                b.name()
            );
        }
        assert!(!off.contains_key("ip/ila_core.tcl"));
        assert!(
            !off["build.tcl"].contains("u_ila_state")
                && !off["build.tcl"].contains("write_debug_probes")
        );
        assert_eq!(
            off,
            b.files_with(&cfg, &board::Options::default())
                .unwrap()
                .into_iter()
                .collect()
        );
        // On.
        let opts = board::Options { ila: true };
        let d = out_dir(&format!("ila_is_opt_in-{}", b.name()));
        let _ = std::fs::remove_dir_all(&d);
        board::write_with(b, &cfg, &d, &opts).unwrap();
        let on: BTreeMap<String, String> = b.files_with(&cfg, &opts).unwrap().into_iter().collect();
        let v = &on[&format!("{}.v", b.top())];
        let i = v.find("ila_core ila_core_inst (").expect("no ILA instance");
        let inst = &v[i..i + v[i..].find(");").unwrap()];
        assert!(inst.contains(".clk(core_clk)"), "{inst}");
        let ip = &on["ip/ila_core.tcl"];
        assert!(ip.contains(&format!(
            "create_ip -name ila -vendor xilinx.com -library ip -version {} -module_name ila_core ",
            board::pinned_version("ila")
        )));
        assert!(
            ip.contains(&format!("CONFIG.C_NUM_OF_PROBES {{{}}}", dbg.len())),
            "{ip}"
        );
        let mut stub = String::from("module ila_core (input wire clk");
        for (k, (n, w)) in dbg.iter().enumerate() {
            assert!(
                inst.contains(&format!(".probe{k}(core_{n})")),
                "{}: probe{k}",
                b.name()
            );
            assert!(
                v.contains(&format!(".{n}(core_{n})")),
                "{}: {n} not to the ILA",
                b.name()
            );
            assert!(
                ip.contains(&format!("CONFIG.C_PROBE{k}_WIDTH {{{w}}}")),
                "{ip}"
            );
            stub.push_str(&format!(", input wire [{}:0] probe{k}", w - 1));
        }
        stub.push_str(");\nendmodule\n");
        std::fs::write(d.join("ila_stub.v"), stub).unwrap();
        let out = Command::new("yosys")
            .args([
                "-q",
                "-p",
                &format!(
                    "read_verilog fanin_core.v {} ila_stub.v {top}.v; hierarchy -top {top}",
                    board::BOARD_RTL,
                    top = b.top()
                ),
            ])
            .current_dir(&d)
            .output()
            .expect("yosys");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() && !err.contains("Resizing cell port"),
            "{}: {err}",
            b.name()
        );
        // The state registers are instance paths (`a/b`: instance `b`, module `fanin_a_b`, of
        // instance `a`, module `fanin_a`, ...; the last with output reg q) below the core's
        // `fanin_core_impl`, which `fanin_core` instantiates as `core`.
        let core = &on["fanin_core.v"];
        assert!(core.contains("fanin_core_impl core ("), "no core instance");
        let module = |name: &str| {
            let m = &core[core
                .find(&format!("module {name}("))
                .unwrap_or_else(|| panic!("no module {name}"))..];
            &m[..m.find("endmodule").unwrap()]
        };
        for r in board::ILA_STATE_REGS {
            let (mut parent, mut prefix) = ("fanin_core_impl".to_string(), "fanin".to_string());
            for seg in r.split('/') {
                prefix = format!("{prefix}_{seg}");
                assert!(
                    module(&parent).contains(&format!("{prefix} {seg}(")),
                    "no state register instance {r} ({seg} in {parent})"
                );
                parent = prefix.clone();
            }
            assert!(
                module(&parent).contains("output reg "),
                "{r}: q is not a register"
            );
        }
        let bt = &on["build.tcl"];
        assert!(bt.contains(&format!(
            "foreach r {{{}}}",
            board::ILA_STATE_REGS.join(" ")
        )));
        // Under the stubs: nets found -> the ILA is inserted with one probe per register and
        // its probes file written; none found -> exit 5 naming the first register.
        let cfg_period = board::core_period_ns(&cfg);
        let run = |nets: &str| {
            tclsh(
                &d,
                &format!(
                    "set ::stub_period {cfg_period}\n{CLEAN_REPORTS}\n\
                     proc get_nets {{args}} {{ return {{{nets}}} }}\n\
                     if {{[catch {{source build.tcl}} e]}} {{ puts \"CALLS $::stub_calls\"; error $e }}\n\
                     puts \"CALLS $::stub_calls\""
                ),
            )
        };
        let (ok, out, err) = run("n0 n1");
        assert!(ok, "{}: {out}{err}", b.name());
        assert!(out.contains("{create_debug_core u_ila_state ila}"), "{out}");
        assert!(
            out.contains("{connect_debug_port u_ila_state/clk {n0 n1}}"),
            "{out}"
        );
        for k in 0..board::ILA_STATE_REGS.len() {
            assert!(
                out.contains(&format!(
                    "{{connect_debug_port u_ila_state/probe{k} {{n0 n1}}}}"
                )),
                "{out}"
            );
        }
        assert_eq!(
            out.matches("{create_debug_port u_ila_state probe}").count(),
            board::ILA_STATE_REGS.len() - 1
        );
        assert!(
            out.contains("{write_debug_probes -force out/debug_probes.ltx}"),
            "{out}"
        );
        let (ok, out, err) = run("");
        assert!(
            !ok && err.contains("exited with 5"),
            "{}: {out}{err}",
            b.name()
        );
        assert!(
            out.contains(&format!(
                "ERROR: fanin: --ila: no state register core_inst/core/{}/q",
                board::ILA_STATE_REGS[0]
            )),
            "{out}"
        );
    }
    let out = Command::new(env!("CARGO_BIN_EXE_fanin-gen"))
        .args(["--config", "default", "--report", "--ila"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("use it with --board NAME --out DIR"),
        "{err}"
    );
}

/// docs/boards.md's board table and clock figures are the configurations': the Alveo
/// boards' core clock is `alveo`'s `clock_mhz` (250 MHz, 322 MHz the option), SUME's is
/// `sume`'s, the periods build.tcl checks are `1000 / clock_mhz`, and the offered load of a
/// 100 GbE port at `alveo`'s clock (5-beat frames every 344 wire bytes) is the figure given.
#[test]
fn docs_board_clocks_are_the_configurations() {
    let doc = include_str!("../../docs/boards.md");
    let alveo = CoreConfig::by_name("alveo").unwrap();
    let sume = CoreConfig::by_name("sume").unwrap();
    assert_eq!(alveo.clock_mhz, 250, "alveo's default core clock");
    for b in [Board::Au250, Board::Au280] {
        let row = doc
            .lines()
            .find(|l| l.starts_with(&format!("| `{}` ", b.name())))
            .unwrap();
        assert!(
            row.contains(&format!("| {} MHz (322 MHz option) |", alveo.clock_mhz)),
            "{row}"
        );
    }
    let row = doc.lines().find(|l| l.starts_with("| `sume` ")).unwrap();
    assert!(
        row.contains(&format!("| {} MHz |", sume.clock_mhz)),
        "{row}"
    );
    assert!(doc.contains(&format!(
        "(5.000 ns on SUME,\n{:.3} ns on Alveo, {:.3} ns with `alveo+clock_mhz=322`)",
        board::core_period_ns(&alveo),
        1000.0 / 322.0
    )));
    // 320-byte frames (5 beats of 64 bytes) every 344 wire bytes at 100 Gb/s.
    let cycles = 344.0 * 8.0 / 100.0 * f64::from(alveo.clock_mhz) / 1000.0;
    assert!(
        doc.contains(&format!(
            "that is {cycles:.2} cycles of\n{} MHz",
            alveo.clock_mhz
        )),
        "{cycles}"
    );
    assert!(doc.contains(&format!("frame: {:.3} of the beats", 5.0 / cycles)));
    let c322 = 344.0 * 8.0 / 100.0 * 322.0 / 1000.0;
    assert!(doc.contains(&format!(
        "the same run offers {:.3} of the beats",
        5.0 / c322
    )));
}

/// `n` with thousands separators (the docs' style).
fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// docs/boards.md's figures for `alveo`'s slot and metadata memories are the generated
/// core's: the `ram_style = "ultra"` memory's rows and width, its size in Mbit, URAM288
/// count (4,096 × 72 each) and cascade depth and share of each card's URAM, and the slot
/// metadata memory's width (`fanin_regs::layout::meta`), size and RAMB36 lower bound. The
/// core is generated from `hdl/` as it is now: a core change that moves these fails here
/// until the doc follows.
#[test]
fn alveo_memory_figures_are_the_generated_core() {
    let cfg = CoreConfig::by_name("alveo").unwrap();
    let v = fanin_gen::outputs(&cfg)
        .unwrap()
        .into_iter()
        .find(|(n, _)| n == "fanin_core.v")
        .expect("fanin_core.v")
        .1;
    // `reg [W-1:0] mem [0:D-1];` of every memory: (style, width, depth).
    let mems: Vec<(bool, u64, u64)> = v
        .lines()
        .filter(|l| l.contains("reg [") && l.contains("] mem [0:"))
        .map(|l| {
            let w: u64 = l
                .split("reg [")
                .nth(1)
                .unwrap()
                .split(':')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            let d: u64 = l
                .split("mem [0:")
                .nth(1)
                .unwrap()
                .split(']')
                .next()
                .unwrap()
                .parse()
                .unwrap();
            (l.contains("\"ultra\""), w + 1, d + 1)
        })
        .collect();
    let ultra: Vec<_> = mems.iter().filter(|m| m.0).collect();
    assert_eq!(ultra.len(), 1, "{mems:?}");
    let (_, w, d) = *ultra[0];
    assert_eq!(w * d, 2 * u64::from(cfg.slots) * u64::from(cfg.lanes) * 32);
    let meta_w = fanin_regs::layout::meta::LAYOUT.width as u64;
    let meta_d = 2 * u64::from(cfg.slots);
    assert!(
        mems.contains(&(false, meta_w, meta_d)),
        "no {meta_d} x {meta_w} metadata memory: {mems:?}"
    );
    let uram = w.div_ceil(72) * d.div_ceil(4096);
    let pct = |of: u64| (uram * 100 + of / 2) / of;
    let meta_bits = meta_w * meta_d;
    let mbit = |b: u64| {
        let m = b as f64 / f64::from(1u32 << 20);
        if m.fract() == 0.0 {
            format!("{m:.0}")
        } else {
            format!("{m:.1}")
        }
    };
    let doc = include_str!("../../docs/boards.md");
    let doc = doc.split_whitespace().collect::<Vec<_>>().join(" ");
    for want in [
        format!(
            "| `alveo` | `ultra` | {} slots: {} Mbit ({} × {})",
            thousands(cfg.slots.into()),
            mbit(w * d),
            thousands(d),
            thousands(w)
        ),
        format!(
            "as URAM ≈ {uram} URAM288 ({} % of a U280's 960, {} % of a U250's 1,280)",
            pct(960),
            pct(1280)
        ),
        format!(
            "`2S × {meta_w}` bits: {} Mbit, at least {} RAMB36",
            mbit(meta_bits),
            meta_bits.div_ceil(36 * 1024)
        ),
        format!("only the {} Mbit slot metadata", mbit(meta_bits)),
        format!("must show ≈ {uram} URAM"),
        format!(
            "{} rows are an {}-deep URAM cascade",
            thousands(d),
            d.div_ceil(4096)
        ),
    ] {
        assert!(doc.contains(&want), "docs/boards.md lacks: {want}");
    }
    // docs/rtl.md lists the same memories' row widths (the layouts the Verilog is built from).
    let rtl = include_str!("../../docs/rtl.md");
    let rtl = rtl.split_whitespace().collect::<Vec<_>>().join(" ");
    let job_w = fanin_regs::layout::job::LAYOUT.width;
    let child_w = fanin_regs::layout::child::LAYOUT.width;
    for want in [
        format!("slot metadata (`2·S × {meta_w}`)"),
        format!("log2 max_children) × {child_w}`)"),
        format!("job table (`max_jobs × {job_w}`)"),
        format!("the packed {job_w}-bit entries"),
    ] {
        assert!(rtl.contains(&want), "docs/rtl.md lacks: {want}");
    }
    assert!(
        mems.contains(&(false, job_w as u64, u64::from(cfg.max_jobs))),
        "{mems:?}"
    );
}
