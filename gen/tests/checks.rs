//! Generator checks: golden output, generated docs, Verilator lint, yosys synthesis.
//!
//! Bless new generator output: `FANIN_BLESS=1 cargo test -p fanin-gen --test checks`.
//! Slow checks (synthesising `default`, `sume` and `alveo` with `synth_xilinx`) are `#[ignore]`d: `cargo xtask test --slow`
//! (or `cargo test -- --include-ignored`) runs them.
//! Verilator and yosys must be installed: these tests fail, not skip, without them.

use fanin_hdl::{CoreConfig, RamStyle};
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn bless() -> bool {
    std::env::var_os("FANIN_BLESS").is_some()
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("fanin-gen-test-{}-{name}", std::process::id()));
    let cfg = CoreConfig::by_name(name).unwrap();
    fanin_gen::write(&cfg, &d).unwrap();
    d
}

fn check_golden(path: &Path, now: &str) {
    if bless() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, now).unwrap();
        return;
    }
    let old = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        old == now,
        "{} is stale (generator output changed); review the diff, then bless it with \
         FANIN_BLESS=1 cargo test -p fanin-gen --test checks",
        path.display()
    );
}

/// The committed `default` Verilog and manifest equal the generator's output.
#[test]
fn golden_default() {
    let cfg = CoreConfig::by_name("default").unwrap();
    for (name, text) in fanin_gen::outputs(&cfg).unwrap() {
        check_golden(&root().join("gen/golden/default").join(&name), &text);
    }
}

/// docs/registers.md is generated from the register table.
#[test]
fn registers_doc_up_to_date() {
    check_golden(
        &root().join("docs/registers.md"),
        &fanin_gen::registers_md().unwrap(),
    );
}

/// An impossible configuration is refused with a message naming the parameter.
#[test]
fn impossible_configuration_is_refused() {
    let mut c = CoreConfig::by_name("alveo").unwrap();
    c.ports = 8; // 8 × 512 bits is wider than its engine_w (2048)
    let e = fanin_hdl::verilog(&c).unwrap_err().to_string();
    assert!(
        e.contains("engine_w") && e.contains("ports × data_w"),
        "{e}"
    );
    let mut c = CoreConfig::by_name("default").unwrap();
    c.data_w = 128;
    assert!(fanin_hdl::verilog(&c)
        .unwrap_err()
        .to_string()
        .contains("data_w = 128"));
    let mut c = CoreConfig::by_name("default").unwrap();
    c.rx_frames = 1000;
    assert!(fanin_hdl::verilog(&c)
        .unwrap_err()
        .to_string()
        .contains("rx_frames = 1000"));
    assert!(CoreConfig::by_name("nope")
        .unwrap_err()
        .to_string()
        .contains("default, sume, alveo"));
}

/// A configuration spec overrides a named configuration's parameters; a bad spec is refused
/// with a message naming the spec and what is wrong with it.
/// The keys a spec can override are listed in code (`CoreConfig::PARAMS`), in
/// `fanin-gen --help` and in docs/rtl.md; the last two must name every one.
#[test]
fn every_spec_key_is_in_the_help_and_the_docs() {
    let help = Command::new(env!("CARGO_BIN_EXE_fanin-gen"))
        .arg("--help")
        .output()
        .unwrap();
    let help = String::from_utf8_lossy(&help.stdout)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let docs = std::fs::read_to_string(root().join("docs/rtl.md")).unwrap();
    let section = docs
        .split("## Configurations")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .unwrap();
    for k in CoreConfig::PARAMS {
        assert!(
            help.contains(k),
            "fanin-gen --help does not name the spec key {k}"
        );
        assert!(
            section.contains(&format!("`{k}`")),
            "docs/rtl.md \"Configurations\" does not name the spec key {k}"
        );
    }
    // And every key in PARAMS is one `by_name` takes.
    for k in CoreConfig::PARAMS {
        let v = if *k == "slot_ram" { "block" } else { "64" };
        if let Err(e) = CoreConfig::by_name(&format!("default+{k}={v}")) {
            assert!(!e.to_string().contains("unknown parameter"), "{e}");
        }
    }
}

#[test]
fn configuration_spec_overrides_parameters() {
    let spec = "default+ports=8+engine_w=1024+slot_ram=ultra";
    let c = CoreConfig::by_name(spec).unwrap();
    let d = CoreConfig::by_name("default").unwrap();
    assert_eq!(
        (c.ports, c.engine_w, c.slot_ram, c.data_w, c.slots),
        (8, 1024, RamStyle::Ultra, d.data_w, d.slots)
    );
    assert_eq!(c.name, spec);
    c.validate().unwrap();
    for (spec, want) in [
        ("default+ports=9", "ports = 9 is out of range (2..=8)"),
        ("default+ports=300", "ports = 300 is out of range (2..=8)"),
        (
            "default+data_w=512",
            "engine_w = 512 is narrower than ports × data_w = 2048",
        ),
        (
            "default+colour=3",
            "unknown parameter \"colour\"; known: ports, data_w",
        ),
        ("default+ports=x", "ports = \"x\" is not a number"),
        ("default+ports", "override \"ports\" is not KEY=VALUE"),
        (
            "default+slot_ram=disk",
            "slot_ram = \"disk\" is not block or ultra",
        ),
        ("nope+ports=4", "no such configuration \"nope\""),
    ] {
        let e = match CoreConfig::by_name(spec) {
            Ok(c) => c.validate().unwrap_err(),
            Err(e) => e,
        }
        .to_string();
        assert!(e.contains(want) && e.contains(spec), "{spec}: {e}");
    }
}

/// Waivers for `verilator --lint-only -Wall`:
/// - WIDTH: rust-hdl prints unsized (32-bit) literals and relies on Verilog's
///   context-determined widths; every wrapping quantity is held in a sized signal first
///   (the toolchain notes' `bit_cast` carry trap, and the FIFO fill counters).
/// - UNUSEDSIGNAL: rust-hdl ports are full width (24-bit RAM addresses, 32 write-enable
///   bits, the 80-byte parser capture); instances use only the low part.
/// - UNUSEDPARAM: per-index constant tables are sized for 8 ports; smaller cores leave some unused.
/// - UNSIGNED: the round-robin compare `port index > last` is constant false for port 0.
const WAIVERS: &[&str] = &[
    "-Wno-WIDTH",
    "-Wno-UNUSEDSIGNAL",
    "-Wno-UNUSEDPARAM",
    "-Wno-UNSIGNED",
];

/// Configurations the named ones do not cover (8 ports; 256-bit ports), linted too.
const OVERRIDES: &[&str] = &[
    "default+ports=8+engine_w=1024",
    "default+ports=2+data_w=256+engine_w=2048",
];

/// Every configuration's Verilog passes `verilator --lint-only -Wall` (with the waivers above).
#[test]
fn verilator_lint_every_configuration() {
    let names = CoreConfig::named().into_iter().map(|c| c.name);
    for name in names.chain(OVERRIDES.iter().map(|s| s.to_string())) {
        let c = CoreConfig::by_name(&name).unwrap();
        let d = out_dir(&c.name);
        let out = Command::new("verilator")
            .args(["--lint-only", "-Wall"])
            .args(WAIVERS)
            .args(["--top-module", "fanin_core", "fanin_core.v"])
            .current_dir(&d)
            .output()
            .expect("verilator must be installed (see README setup)");
        assert!(
            out.status.success(),
            "{}: {}",
            c.name,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

fn synth(name: &str) -> String {
    let d = out_dir(name);
    let out = Command::new("yosys")
        .args(["-q", "-p", "read_verilog fanin_core.v; synth_xilinx -top fanin_core -family xcup -uram; tee -o stat.txt stat"])
        .current_dir(&d)
        .output()
        .expect("yosys must be installed (see README setup)");
    assert!(
        out.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(d.join("stat.txt")).unwrap()
}

/// How many `cell`s module `module` has in a yosys `stat` report (0 if none).
fn cells(stat: &str, module: &str, cell: &str) -> u64 {
    let head = format!("=== {module} ===");
    let Some(i) = stat.find(&head) else {
        return 0;
    };
    let rest = &stat[i + head.len()..];
    let sect = &rest[..rest.find("===").unwrap_or(rest.len())];
    sect.lines()
        .filter_map(|l| {
            let mut w = l.split_whitespace();
            (w.next() == Some(cell)).then(|| w.next().unwrap().parse::<u64>().unwrap())
        })
        .sum()
}

/// Block-RAM bits yosys mapped in module `module` of a `stat` report (0 if none).
fn bram_bits(stat: &str, module: &str) -> u64 {
    cells(stat, module, "RAMB36E2") * 36 * 1024 + cells(stat, module, "RAMB18E2") * 18 * 1024
}

/// UltraRAM bits (URAM288: 4K x 72) yosys mapped in module `module` (0 if none).
fn uram_bits(stat: &str, module: &str) -> u64 {
    cells(stat, module, "URAM288") * 288 * 1024
}

fn assert_synth_ok(name: &str, stat: &str) {
    assert!(
        stat.contains("RAMB"),
        "{name}: no block RAM inferred:\n{stat}"
    );
    // The slot memory (S slots x 2 copies x E int32 lanes) is in the configuration's
    // `slot_ram` (block RAM or URAM) and the slot metadata (2S x META_W bits) in block RAM,
    // sized with the slot count.
    let cfg = CoreConfig::by_name(name).unwrap();
    let slot_bits = 2 * cfg.slots as u64 * cfg.lanes as u64 * 32;
    let (got, want) = match cfg.slot_ram {
        RamStyle::Block => (bram_bits(stat, "fanin_back_acc_ram"), "block RAM"),
        RamStyle::Ultra => (uram_bits(stat, "fanin_back_acc_ram"), "URAM"),
    };
    assert!(
        got >= slot_bits,
        "{name}: slot memory not in {want} ({got} bits mapped for {slot_bits} slot bits)"
    );
    let meta_bits = 2 * cfg.slots as u64 * fanin_hdl::core::META_W as u64;
    let got = bram_bits(stat, "fanin_meta_ram");
    assert!(
        got >= meta_bits,
        "{name}: slot metadata not in block RAM ({got} BRAM bits for {meta_bits})"
    );
    for latch in ["LDCE", "LDPE", "$_DLATCH", "$dlatch"] {
        assert!(
            !stat.contains(latch),
            "{name}: latch {latch} inferred:\n{stat}"
        );
    }
}

/// `default` elaborates in yosys with its slot rows and slot metadata inferred as memories
/// (not flip-flops) and no latches: the fast tier's synthesis check. The full
/// `synth_xilinx` mapping (block RAM bits, no latch cells) takes over ten minutes on two
/// cores, so it is in the slow tier ([`yosys_synth_default`]).
#[test]
fn yosys_elaborate_default() {
    let d = out_dir("default");
    let out = Command::new("yosys")
        .args([
            "-q",
            "-p",
            "read_verilog fanin_core.v; hierarchy -check -top fanin_core; proc; opt_clean; \
             memory_collect; tee -o elab.txt stat",
        ])
        .current_dir(&d)
        .output()
        .expect("yosys must be installed (see README setup)");
    assert!(
        out.status.success(),
        "default: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stat = std::fs::read_to_string(d.join("elab.txt")).unwrap();
    for module in ["fanin_back_acc_ram", "fanin_meta_ram"] {
        assert!(
            cells(&stat, module, "$mem_v2") >= 1,
            "default: {module} is not inferred as a memory:\n{stat}"
        );
    }
    assert!(
        !stat.contains("$dlatch"),
        "default: a latch was inferred:\n{stat}"
    );
}

/// `default` synthesises with yosys `synth_xilinx`, infers block RAM and no latches
/// (slow tier: over ten minutes on two cores).
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn yosys_synth_default() {
    let s = synth("default");
    assert_synth_ok("default", &s);
}

/// The large configurations (slow tier).
#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn yosys_synth_large() {
    for n in ["sume", "alveo"] {
        let s = synth(n);
        assert_synth_ok(n, &s);
    }
}

/// The text of module `module` in generated Verilog.
fn module_text<'a>(v: &'a str, module: &str) -> &'a str {
    let start = v
        .find(&format!("module {module}("))
        .or_else(|| v.find(&format!("module {module} (")))
        .unwrap_or_else(|| panic!("no module {module}"));
    let end = start + v[start..].find("endmodule").unwrap();
    &v[start..end]
}

/// The accumulator's slot-row memory carries the configuration's `slot_ram` style:
/// `alveo` asks for URAM, `default` and `sume` (7-series: no URAM) for block RAM; every
/// other memory stays block RAM.
#[test]
fn slot_memory_ram_style_follows_configuration() {
    let want = [
        ("default", RamStyle::Block),
        ("sume", RamStyle::Block),
        ("alveo", RamStyle::Ultra),
    ];
    for (name, style) in want {
        let cfg = CoreConfig::by_name(name).unwrap();
        assert_eq!(cfg.slot_ram, style, "{name}");
        let v = fanin_hdl::verilog(&cfg).unwrap();
        let acc = module_text(&v, "fanin_back_acc_ram");
        assert!(
            acc.contains(&format!("(* ram_style = \"{}\" *)", style.attr())),
            "{name}: the slot memory (fanin_back_acc_ram) is not ram_style {} (hdl/src/core/back.rs \
             must build it with Acc::with_style(.., cfg.slot_ram)):\n{acc}",
            style.attr()
        );
        let ultra = v.matches("ram_style = \"ultra\"").count();
        assert_eq!(
            ultra,
            usize::from(style == RamStyle::Ultra),
            "{name}: only the slot memory may ask for URAM"
        );
    }
}

/// A small configuration (64 slots) with `slot_ram = ultra` for the yosys test below.
fn small_ultra() -> CoreConfig {
    CoreConfig {
        name: "small_ultra".into(),
        slots: 64,
        slot_ram: RamStyle::Ultra,
        ..CoreConfig::by_name("default").unwrap()
    }
}

/// yosys 0.23 maps the generated ultra slot memory to URAM288 and nothing else (the RAM
/// module alone: seconds, not the minutes of the whole core), and the same memory with
/// `slot_ram = block` to block RAM.
#[test]
fn yosys_maps_ultra_slot_memory_to_uram288() {
    for style in [RamStyle::Ultra, RamStyle::Block] {
        let cfg = CoreConfig {
            slot_ram: style,
            ..small_ultra()
        };
        let d = std::env::temp_dir().join(format!(
            "fanin-gen-test-{}-uram-{}",
            std::process::id(),
            style.attr()
        ));
        fanin_gen::write(&cfg, &d).unwrap();
        let v = std::fs::read_to_string(d.join("fanin_core.v")).unwrap();
        assert!(
            module_text(&v, "fanin_back_acc_ram")
                .contains(&format!("(* ram_style = \"{}\" *)", style.attr())),
            "the slot memory does not carry slot_ram = {} (hdl/src/core.rs must build it with \
             Acc::with_style(.., cfg.slot_ram))",
            style.attr()
        );
        let out = Command::new("yosys")
            .args([
                "-q",
                "-p",
                "read_verilog fanin_core.v; synth_xilinx -top fanin_back_acc_ram -family xcup -uram; \
                 tee -o stat.txt stat",
            ])
            .current_dir(&d)
            .output()
            .expect("yosys must be installed (see README setup)");
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let stat = std::fs::read_to_string(d.join("stat.txt")).unwrap();
        // 2 copies x 64 slots x 4 rows of 512 bits: 512 x 512 = ceil(512/72) = 8 URAM288.
        let slot_bits = 2 * cfg.slots as u64 * cfg.lanes as u64 * 32;
        let (uram, bram) = (
            uram_bits(&stat, "fanin_back_acc_ram"),
            bram_bits(&stat, "fanin_back_acc_ram"),
        );
        match style {
            RamStyle::Ultra => {
                assert_eq!(cells(&stat, "fanin_back_acc_ram", "URAM288"), 8, "{stat}");
                assert!(uram >= slot_bits && bram == 0, "{stat}");
            }
            RamStyle::Block => assert!(bram >= slot_bits && uram == 0, "{stat}"),
        }
        let _ = std::fs::remove_dir_all(d);
    }
}
