//! `fanin hw`: the write sequence of `fanin place` configurations (dry run, JSON, a Tcl
//! script run by tclsh against stand-ins of Vivado's AXI commands), and programming and
//! reading a register window mapped from a file that stands in for a card's BAR.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use fanin_regs::{CoreConfig, RegMap};

use super::{fanin, tmpdir};

/// A SOAR placement on a binary tree of seven switches, emitted for the RTL (no trust
/// features); returns its directory.
fn placement(d: &Path) -> PathBuf {
    let dir = d.join("place");
    let o = fanin()
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
            "--no-sessions",
            "--emit-config",
        ])
        .arg(&dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    dir
}

fn switch_files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.file_name().unwrap() != "workers.json")
        .collect();
    v.sort();
    assert!(v.len() >= 2, "{v:?}");
    v
}

fn writes_of(cfg: &Path, core: &CoreConfig) -> Vec<(u32, u32)> {
    let c: fanin_proto::config::SwitchConfig =
        serde_json::from_str(&std::fs::read_to_string(cfg).unwrap()).unwrap();
    fanin_regs::switch_writes(&c, core).unwrap()
}

#[derive(serde::Deserialize)]
struct Write {
    addr: u32,
    value: u32,
    name: String,
}

#[test]
fn dry_run_json_is_the_driver_sequence_for_every_placed_switch() {
    let d = tmpdir("hw-dry");
    let core = CoreConfig::by_name("default").unwrap();
    for f in switch_files(&placement(&d)) {
        let o = fanin()
            .args(["hw", "program", "--dry-run", "--json", "--config"])
            .arg(&f)
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        let got: Vec<Write> = serde_json::from_slice(&o.stdout).unwrap();
        let want = writes_of(&f, &core);
        assert_eq!(
            got.iter().map(|w| (w.addr, w.value)).collect::<Vec<_>>(),
            want,
            "{}",
            f.display()
        );
        assert_eq!(got[0].name, "me_ip");
        assert!(got.iter().all(|w| !w.name.is_empty()));
    }
}

/// Stand-ins of Vivado's hardware-manager commands: a register file in a Tcl array, each
/// write printed as `W addr data`.
const VIVADO_STUB: &str = r#"
array set regs {}
set regs(00000000) 46414e49
proc get_hw_axis {} { return axi0 }
proc create_hw_axi_txn {args} {
    set o [dict create]
    for {set i 0} {$i < [llength $args]} {incr i} {
        set a [lindex $args $i]
        if {$a in {-type -address -data -len}} { incr i; dict set o $a [lindex $args $i] }
    }
    return $o
}
proc run_hw_axi {args} {
    set t [lindex $args end]
    if {[dict get $t -type] eq "write"} {
        set ::regs([dict get $t -address]) [dict get $t -data]
        puts "W [dict get $t -address] [dict get $t -data]"
    }
    set ::last $t
}
proc get_property {p t} { return $::regs([dict get $t -address]) }
"#;

#[test]
fn tcl_script_makes_the_same_writes_under_tclsh_and_checks_the_id_first() {
    let d = tmpdir("hw-tcl");
    let core = CoreConfig::by_name("default").unwrap();
    let f = &switch_files(&placement(&d))[0];
    let script = d.join("program.tcl");
    let o = fanin()
        .args(["hw", "program", "--config"])
        .arg(f)
        .arg("--tcl")
        .arg(&script)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let run = |stub: &str| {
        let main = d.join("main.tcl");
        std::fs::write(&main, format!("{stub}\nsource {{{}}}\n", script.display())).unwrap();
        std::process::Command::new("tclsh")
            .arg(&main)
            .output()
            .expect("tclsh (Debian package tcl) must be installed")
    };
    let o = run(VIVADO_STUB);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got: Vec<(u32, u32)> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter_map(|l| l.strip_prefix("W "))
        .map(|l| {
            let (a, v) = l.split_once(' ').unwrap();
            (
                u32::from_str_radix(a, 16).unwrap(),
                u32::from_str_radix(v, 16).unwrap(),
            )
        })
        .collect();
    assert_eq!(got, writes_of(f, &core));
    // A target whose register 0 is not "FANI" gets no write at all.
    let o = run(&VIVADO_STUB.replace("46414e49", "00000000"));
    assert!(!o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(!out.contains("W "), "{out}");
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("not a fanin core"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// A 4 KiB file laid out as core `core`'s register window: the information registers set.
fn fake_bar(path: &Path, core: &CoreConfig) {
    let mut b = vec![0u8; 4096];
    for (i, v) in RegMap::new(core).info_values().iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&v.to_ne_bytes());
    }
    std::fs::write(path, b).unwrap();
}

fn word(b: &[u8], addr: u32) -> u32 {
    let a = addr as usize;
    u32::from_ne_bytes(b[a..a + 4].try_into().unwrap())
}

#[test]
fn program_writes_through_a_mapped_window_and_status_reads_it() {
    let d = tmpdir("hw-bar");
    let core = CoreConfig::by_name("default").unwrap();
    let bar = d.join("resource0");
    fake_bar(&bar, &core);
    let f = &switch_files(&placement(&d))[0];
    let o = fanin()
        .args(["hw", "program", "--config"])
        .arg(f)
        .arg("--bar-file")
        .arg(&bar)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stdout).contains("identity read back"),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // A file keeps the last value written to each address: exactly that of the sequence.
    let b = std::fs::read(&bar).unwrap();
    let mut last = BTreeMap::new();
    for (a, v) in writes_of(f, &core) {
        last.insert(a, v);
    }
    for (&a, &v) in &last {
        assert_eq!(word(&b, a), v, "register 0x{a:x}");
    }
    let o = fanin()
        .args(["hw", "status", "--json", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let get = |n: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("no {n}"))["value"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(get("id"), 0x4641_4e49);
    assert_eq!(get("ports"), core.ports as u64);
    assert_eq!(get("me_ip"), last[&fanin_regs::addr::ME_IP] as u64);
    assert_eq!(get("completions"), 0);
}

#[test]
fn bad_targets_and_configurations_are_refused_without_writing() {
    let d = tmpdir("hw-bad");
    let core = CoreConfig::by_name("default").unwrap();
    let place = placement(&d);
    let f = &switch_files(&place)[0];
    let fails = |args: &[&str], bar: Option<&Path>, want: &str| {
        let mut c = fanin();
        c.args(["hw"]).args(args);
        if let Some(b) = bar {
            c.arg("--bar-file").arg(b);
        }
        let o = c.output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(want), "{args:?}: {err}");
    };
    let cfg = f.to_str().unwrap();
    // Not a fanin core: nothing is written.
    let bar = d.join("zeros");
    std::fs::write(&bar, vec![0u8; 4096]).unwrap();
    fails(
        &["program", "--config", cfg],
        Some(&bar),
        "register 0 reads 0x00000000, not 0x46414e49",
    );
    assert!(std::fs::read(&bar).unwrap().iter().all(|&x| x == 0));
    // A configuration in dynamic mode, which the RTL does not have yet: refused before the
    // first write.
    let bar = d.join("resource0");
    fake_bar(&bar, &core);
    let before = std::fs::read(&bar).unwrap();
    let mut c: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
    c["jobs"][0]["mode"] =
        serde_json::json!({"kind": "dynamic", "flush_after": 10, "reclaim_after": 100});
    c["jobs"][0]["trust"] =
        serde_json::json!({"sessions": false, "source_check": "off", "reclaim_idle": 0});
    let dynamic = d.join("dynamic.json");
    std::fs::write(&dynamic, c.to_string()).unwrap();
    fails(
        &["program", "--config", dynamic.to_str().unwrap()],
        Some(&bar),
        "the RTL does not implement dynamic mode",
    );
    assert_eq!(std::fs::read(&bar).unwrap(), before);
    // A core too small for it (two ports).
    fails(
        &[
            "program",
            "--dry-run",
            "--core",
            "alveo",
            "--config",
            place.join("d.json").to_str().unwrap(),
        ],
        None,
        "does not fit core configuration alveo",
    );
    fails(
        &["program", "--dry-run", "--core", "nosuch", "--config", cfg],
        None,
        "no such configuration",
    );
    fails(
        &["program", "--config", "/nonexistent.json", "--dry-run"],
        None,
        "cannot read /nonexistent.json",
    );
    fails(
        &["program", "--config", cfg, "--device", "9999:99:99.9"],
        None,
        "no PCI device 9999:99:99.9",
    );
    let small = d.join("small");
    std::fs::write(&small, [0u8; 64]).unwrap();
    fails(
        &["status"],
        Some(&small),
        "too small for the core's registers",
    );
}

#[test]
fn verify_reads_the_tables_back_and_fails_naming_each_field_that_differs() {
    // A mapped file answers like a core whose tables read all zero (its read-back window is
    // plain memory): every configured row differs, every unused one matches, and the exit
    // status says so. (Reading a programmed core back is sim/tests/rtl/readback.rs.)
    let d = tmpdir("hw-verify");
    let core = CoreConfig::by_name("default").unwrap();
    let bar = d.join("resource0");
    fake_bar(&bar, &core);
    let f = &switch_files(&placement(&d))[0];
    let cfg: fanin_proto::config::SwitchConfig =
        serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap();
    let o = fanin()
        .args(["hw", "verify", "--config"])
        .arg(f)
        .arg("--bar-file")
        .arg(&bar)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{out}{err}");
    let job = cfg.jobs[0].job;
    assert!(
        out.contains(&format!(
            "job-table entry 0 (job {job}): valid is 0x0 on the card, 0x1 in the configuration"
        )),
        "{out}"
    );
    // Each configured route differs in its address, valid bit and port; unused ones match.
    assert_eq!(
        out.matches("forwarding-table entry").count(),
        3 * cfg.routes.len(),
        "{out}"
    );
    assert!(
        !out.contains("(unused)"),
        "unused entries read invalid: {out}"
    );
    assert!(err.contains("field(s) differ from"), "{err}");
    // Not a fanin core: refused before any access to the window.
    let zeros = d.join("zeros");
    std::fs::write(&zeros, vec![0u8; 4096]).unwrap();
    let o = fanin()
        .args(["hw", "verify", "--config"])
        .arg(f)
        .arg("--bar-file")
        .arg(&zeros)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("not 0x46414e49"));
}

/// A file laid out as core `core`'s registers plus a board window (`fanin_regs::board`)
/// holding `words` (window offset, value).
fn board_bar(path: &Path, core: &CoreConfig, words: &[(u32, u32)]) {
    use fanin_regs::board as w;
    let mut b = vec![0u8; (w::BASE + w::SIZE) as usize];
    for (i, v) in RegMap::new(core).info_values().iter().enumerate() {
        b[4 * i..4 * i + 4].copy_from_slice(&v.to_ne_bytes());
    }
    for &(off, v) in words {
        let a = (w::BASE + off) as usize;
        b[a..a + 4].copy_from_slice(&v.to_ne_bytes());
    }
    std::fs::write(path, b).unwrap();
}

/// The window of a two-port Alveo card: port 0 up with RS-FEC, port 1 down (remote fault)
/// with RS-FEC off, counters past 2^32, drops.
fn alveo_window() -> Vec<(u32, u32)> {
    use fanin_regs::board::{self as w, BoardKind};
    let mut v = vec![
        (w::INFO, BoardKind::Au250.info(2)),
        (w::STATUS, 1),
        (w::RSFEC, 0b01),
        (w::port_reg(0, w::PORT_LINK), 0b10_0011),
        (w::port_reg(1, w::PORT_LINK), 0b00_1000),
        (w::RX_DROPS, 7),
        (w::RX_DROPS + 4, 9),
    ];
    // Port p's counter k: (k + 1) << 32 | 1000 p + k.
    for p in 0..2 {
        for k in 0..3 {
            let lo = w::counter_reg(p, k);
            v.push((lo, 1000 * p + k as u32));
            v.push((lo + 4, k as u32 + 1));
        }
    }
    v
}

#[test]
fn status_prints_the_board_window_by_name() {
    let d = tmpdir("hw-board");
    let core = CoreConfig::by_name("alveo").unwrap();
    let bar = d.join("resource0");
    board_bar(&bar, &core, &alveo_window());
    let o = fanin()
        .args(["hw", "status", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let board: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("board "))
        .collect();
    let want = [
        "board au250",
        "board_status             refclk_ready",
        "port0_link               up (aligned, rsfec_aligned)",
        "port0_rsfec              on",
        "port0_rx_frames          4294967296",
        "port0_tx_frames          8589934593",
        "port0_rx_bad_fcs         12884901890",
        "port0_rx_drops           7",
        "port1_link               down (remote_fault)",
        "port1_rsfec              off",
        "port1_rx_frames          4294968296",
        "port1_tx_frames          8589935593",
        "port1_rx_bad_fcs         12884902890",
        "port1_rx_drops           9",
    ];
    assert_eq!(board, want, "{out}");
    // JSON: the raw words and the counters, by name.
    let o = fanin()
        .args(["hw", "status", "--json", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let get = |n: &str| {
        v.as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == n)
            .unwrap_or_else(|| panic!("no {n}"))["value"]
            .as_u64()
            .unwrap()
    };
    assert_eq!(get("board_info"), 0xfb0a_0202);
    assert_eq!(get("rsfec"), 1);
    assert_eq!(get("port1_link"), 0b00_1000);
    assert_eq!(get("port1_rx_bad_fcs"), 3 << 32 | 1002);
    assert_eq!(get("ports"), 2);
}

#[test]
fn status_on_sume_names_sfp_and_si5324_bits_and_no_rsfec() {
    use fanin_regs::board::{self as w, BoardKind};
    let d = tmpdir("hw-board-sume");
    let core = CoreConfig::by_name("sume").unwrap();
    let bar = d.join("resource0");
    board_bar(
        &bar,
        &core,
        &[
            (w::INFO, BoardKind::Sume.info(4)),
            // Bit 4 (pcie_up on Alveo) is no SUME bit: not named.
            (w::STATUS, 0b111_1101),
            (w::port_reg(0, w::PORT_LINK), 1),
            (w::port_reg(3, w::PORT_LINK), 0b11 << 8),
        ],
    );
    let o = fanin()
        .args(["hw", "status", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains("board sume\n"), "{out}");
    assert!(
        out.contains(
            "board_status             refclk_ready, qpll_lock, si5324_alarm, si5324_lol, si5324_stat_valid\n"
        ),
        "{out}"
    );
    assert!(out.contains("port0_link               up\n"), "{out}");
    assert!(out.contains("port1_link               down\n"), "{out}");
    assert!(
        out.contains("port3_link               down (sfp_los, sfp_tx_fault)\n"),
        "{out}"
    );
    assert!(!out.contains("rsfec"), "{out}");
    // RS-FEC cannot be set on 10G ports.
    let o = fanin()
        .args(["hw", "rsfec", "--port", "0", "off", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("board sume has no RS-FEC"));
}

#[test]
fn status_refuses_a_window_that_is_not_one_and_skips_one_not_mapped() {
    let d = tmpdir("hw-board-bad");
    let core = CoreConfig::by_name("alveo").unwrap();
    // Mapped, but its information word is not a fanin board's: refused, unless --no-board.
    let bar = d.join("resource0");
    board_bar(&bar, &core, &[]);
    let o = fanin()
        .args(["hw", "status", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("board window at 0x10000: board information word reads 0x00000000"),
        "{err}"
    );
    let o = fanin()
        .args(["hw", "status", "--no-board", "--bar-file"])
        .arg(&bar)
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        !out.contains("board_") && !out.contains("board window"),
        "{out}"
    );
    // A mapping of the core alone: the core is read, the window is said to be unread.
    let small = d.join("core-only");
    fake_bar(&small, &core);
    let o = fanin()
        .args(["hw", "status", "--bar-file"])
        .arg(&small)
        .output()
        .unwrap();
    assert!(o.status.success());
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains(
            "board window: not read (the mapping is 4096 bytes; the window is at 0x10000..0x10500)"
        ),
        "{out}"
    );
}

#[test]
fn rsfec_sets_one_port_and_checks_the_port() {
    use fanin_regs::board as w;
    let d = tmpdir("hw-rsfec");
    let core = CoreConfig::by_name("alveo").unwrap();
    let bar = d.join("resource0");
    board_bar(&bar, &core, &alveo_window());
    let reg = |b: &Path| word(&std::fs::read(b).unwrap(), w::BASE + w::RSFEC);
    let run = |args: &[&str]| {
        fanin()
            .args(["hw", "rsfec"])
            .args(args)
            .arg("--bar-file")
            .arg(&bar)
            .output()
            .unwrap()
    };
    let o = run(&["--port", "1", "on"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stdout).contains("RS-FEC on on port 1"));
    assert_eq!(reg(&bar), 0b11);
    let o = run(&["--port", "0", "off"]);
    assert!(o.status.success());
    assert_eq!(reg(&bar), 0b10);
    let o = run(&["--port", "2", "off"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--port 2: board au250 has ports 0..1"));
    assert_eq!(reg(&bar), 0b10, "a refused port changes nothing");
}
