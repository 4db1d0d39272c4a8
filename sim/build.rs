//! Build pipeline: fanin-hdl → Verilog → `verilator --cc` → a flat `extern "C"` shim
//! generated from Verilator's header → `cc` → bindgen → a vtable per configuration.
//!
//! `FANIN_SIM_CONFIGS` (comma-separated, default `default`) picks the configurations built
//! into the crate. Everything lives in this package's OUT_DIR, which cargo keys by package
//! and profile, so parallel test binaries share one finished build and never race on it.
//!
//! Each configuration (and the Verilator runtime) is built into its own directory named
//! after a hash of everything its C++ depends on: the Verilog, this file, the Verilator
//! version and the flags. A directory that holds a finished build is reused, so changing
//! `FANIN_SIM_CONFIGS` or an edit to fanin-hdl that leaves a configuration's Verilog alone
//! rebuilds nothing but the Rust; the three most recently used directories of each
//! configuration are kept. Configurations are built in parallel (up to cargo's job count).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Verilator's options for every model (besides `--cc`, `--prefix`, `--top-module`,
/// `--Mdir`; `--trace` with `FANIN_SIM_TRACE=1`). `--output-split-cfuncs 1000` splits the
/// evaluation into functions of at most about 1000 statements instead of one function of
/// some 15,000 lines per region, which GCC compiles into much faster code (+20% on
/// `default`, measured against 250…20000 and no split; see sim/README.md).
const VERILATOR_ARGS: &[&str] = &[
    "-O3",
    "--x-assign",
    "fast",
    "--x-initial",
    "fast",
    "--output-split-cfuncs",
    "1000",
    "-Wno-fatal",
    "-Wno-lint",
    "-Wno-style",
];

/// C++ options for the model and the runtime, after the `cc` crate's `-O3`.
const CXX_FLAGS: &[&str] = &[];

struct Port {
    name: String,
    output: bool,
    width: u32,
}

/// What build.rs compiles: the runtime, or one configuration's model.
enum Job {
    Runtime {
        dir: PathBuf,
    },
    Model {
        name: String,
        id: String,
        verilog: String,
        /// Top module: `fanin_core`, or a board's simulation top.
        top: String,
        /// Verilator options of this model only.
        args: Vec<String>,
        dir: PathBuf,
    },
}

/// Flags and settings shared by every job.
struct Settings {
    inc: PathBuf,
    trace: bool,
    verilator_args: Vec<String>,
    cxx_flags: Vec<String>,
}

fn main() {
    for v in [
        "FANIN_SIM_CONFIGS",
        "FANIN_SIM_BOARDS",
        "FANIN_SIM_TRACE",
        "FANIN_SIM_VERILATOR_ARGS",
        "FANIN_SIM_CXXFLAGS",
        "CXX",
        "CXXFLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={v}");
    }
    println!("cargo:rerun-if-changed=build.rs");
    let trace = std::env::var("FANIN_SIM_TRACE").is_ok_and(|v| v == "1");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let configs: Vec<String> = std::env::var("FANIN_SIM_CONFIGS")
        .unwrap_or_else(|_| "default".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let words = |var: &str| -> Vec<String> {
        std::env::var(var)
            .unwrap_or_default()
            .split_whitespace()
            .map(String::from)
            .collect()
    };
    let root = verilator_root();
    let st = Settings {
        inc: root.join("include"),
        trace,
        verilator_args: VERILATOR_ARGS
            .iter()
            .map(|s| s.to_string())
            .chain(words("FANIN_SIM_VERILATOR_ARGS"))
            .chain(trace.then(|| "--trace".to_string()))
            .collect(),
        cxx_flags: CXX_FLAGS
            .iter()
            .map(|s| s.to_string())
            .chain(words("FANIN_SIM_CXXFLAGS"))
            .collect(),
    };
    // Everything the C++ of a job depends on besides its own Verilog.
    let common = [
        include_str!("build.rs").to_string(),
        tool_version("verilator"),
        tool_version(&std::env::var("CXX").unwrap_or_else(|_| "c++".into())),
        format!("{:?} {:?} {trace}", st.verilator_args, st.cxx_flags),
        ["CXX", "CXXFLAGS", "TARGET", "OPT_LEVEL"]
            .map(|v| std::env::var(v).unwrap_or_default())
            .join("\n"),
    ]
    .join("\n\0");
    let mut jobs = vec![Job::Runtime {
        dir: out.join(format!("runtime-{:016x}", fnv(&common))),
    }];
    for name in &configs {
        let cfg = fanin_hdl::CoreConfig::by_name(name)
            .unwrap_or_else(|e| panic!("FANIN_SIM_CONFIGS: {e}"));
        let verilog = fanin_hdl::verilog(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let id: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let key = fnv(&format!("{common}\n\0{name}\n\0{verilog}"));
        jobs.push(Job::Model {
            name: name.clone(),
            dir: out.join(format!("{id}-{key:016x}")),
            id,
            verilog,
            top: "fanin_core".into(),
            args: Vec::new(),
        });
    }
    // Board-top simulations (`FANIN_SIM_BOARDS`, default `au250,sume`: one board of each
    // family, so that CI runs both): the generated wrapper with
    // behavioural models of its vendor IP (fanin_gen::board::sim), as model `board:<name>`.
    let boards: Vec<String> = std::env::var("FANIN_SIM_BOARDS")
        .unwrap_or_else(|_| "au250,sume".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    for b in &boards {
        let board =
            fanin_gen::board::Board::parse(b).unwrap_or_else(|e| panic!("FANIN_SIM_BOARDS: {e}"));
        let cfg =
            fanin_hdl::CoreConfig::by_name(board.config_name()).unwrap_or_else(|e| panic!("{e}"));
        let verilog = fanin_gen::board::sim::sim_verilog(board, &cfg)
            .unwrap_or_else(|e| panic!("board {b}: {e}"));
        let args: Vec<String> = ["--timescale", "1ns/1ps", "-Wno-TIMESCALEMOD"]
            .map(String::from)
            .to_vec();
        let id = format!("board_{}", board.name());
        let key = fnv(&format!("{common}\n\0{b}\n\0{args:?}\n\0{verilog}"));
        jobs.push(Job::Model {
            name: format!("board:{}", board.name()),
            dir: out.join(format!("{id}-{key:016x}")),
            id,
            verilog,
            top: fanin_gen::board::sim::SIM_TOP.into(),
            args,
        });
    }
    // Unfinished jobs, on up to NUM_JOBS threads.
    let todo: Vec<&Job> = jobs.iter().filter(|j| !finished(j)).collect();
    let threads = std::env::var("NUM_JOBS")
        .ok()
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        .clamp(1, todo.len().max(1));
    let next = AtomicUsize::new(0);
    let errors = Mutex::new(Vec::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                while let Some(job) = todo.get(next.fetch_add(1, Ordering::Relaxed)) {
                    if let Err(e) = run(job, &st) {
                        errors.lock().unwrap().push(e);
                    }
                }
            });
        }
    });
    let errors = errors.into_inner().unwrap();
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    prune(&out, &jobs);
    // Link lines: the models before the runtime they call, then the C++ library.
    let mut reg = String::new();
    let mut names = Vec::new();
    for job in jobs.iter().rev() {
        let (dir, lib) = match job {
            Job::Runtime { dir } => (dir, "fanin_verilated".to_string()),
            Job::Model { id, dir, .. } => (dir, format!("fanin_model_{id}")),
        };
        println!("cargo:rustc-link-search=native={}", dir.display());
        println!("cargo:rustc-link-lib=static={lib}");
    }
    let cxx_lib = match std::env::var("CARGO_CFG_TARGET_OS").as_deref() {
        Ok("macos") | Ok("ios") | Ok("freebsd") | Ok("openbsd") => "c++",
        _ => "stdc++",
    };
    println!("cargo:rustc-link-lib={cxx_lib}");
    for job in &jobs {
        let Job::Model { name, id, dir, .. } = job else {
            continue;
        };
        let sub = dir.file_name().unwrap().to_string_lossy();
        let _ = writeln!(reg, "/// Bindings of configuration `{name}`.\npub mod {id} {{\n    #![allow(non_camel_case_types, dead_code, missing_docs)]\n    include!(concat!(env!(\"OUT_DIR\"), \"/{sub}/bindings.rs\"));\n}}");
        let f = |s: &str| format!("{id}::fanin_{id}_{s}");
        let _ = writeln!(
            reg,
            "static VT_{uid}: VTable = VTable {{ name: {name:?}, new: {}, free: {}, eval: {}, eval_edge: {}, edge_skips_ico: {}, port_count: {}, port_name: {}, port_width: {}, port_is_output: {}, set: {}, get: {}, set_u64: {}, get_u64: {}, trace_open: {}, trace_dump: {}, trace_close: {} }};",
            f("new"), f("free"), f("eval"), f("eval_edge"), f("edge_skips_ico"), f("port_count"), f("port_name"), f("port_width"), f("port_is_output"), f("set"), f("get"), f("set_u64"), f("get_u64"), f("trace_open"), f("trace_dump"), f("trace_close"),
            uid = id.to_uppercase()
        );
        names.push((name.clone(), id.clone()));
    }
    let list = |boards: bool| {
        names
            .iter()
            .filter(|(n, _)| n.starts_with("board:") == boards)
            .map(|(n, _)| format!("{n:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(reg, "/// Configurations built into this crate (`FANIN_SIM_CONFIGS`).\npub const BUILT: &[&str] = &[{}];", list(false));
    let _ = writeln!(reg, "/// Board-top simulations built into this crate (`FANIN_SIM_BOARDS`), as `board:<name>`.\npub const BUILT_BOARDS: &[&str] = &[{}];", list(true));
    let _ = writeln!(reg, "/// The vtable of a built configuration.\npub fn vtable(name: &str) -> Option<&'static VTable> {{\n    match name {{");
    for (n, id) in &names {
        let _ = writeln!(reg, "        {n:?} => Some(&VT_{}),", id.to_uppercase());
    }
    let _ = writeln!(reg, "        _ => None,\n    }}\n}}");
    write_if_changed(&out.join("models.rs"), &reg);
}

/// Keeps the build directories of the last few uses of each configuration (and of the
/// runtime): switching back stays cheap, and a series of fanin-hdl edits does not fill the
/// disk. A directory's use is the modification time of its stamp, which this run touches.
fn prune(out: &Path, jobs: &[Job]) {
    const KEEP: usize = 3;
    let now = std::time::SystemTime::now();
    for j in jobs {
        let stamp = job_dir(j).join("stamp");
        let _ = std::fs::File::options()
            .write(true)
            .open(stamp)
            .and_then(|f| f.set_modified(now));
    }
    let current: Vec<&Path> = jobs.iter().map(job_dir).collect();
    let mut groups: std::collections::BTreeMap<String, Vec<(std::time::SystemTime, PathBuf)>> =
        Default::default();
    let Ok(entries) = std::fs::read_dir(out) else {
        return;
    };
    for e in entries.flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Some((prefix, key)) = name.rsplit_once('-') else {
            continue;
        };
        if key.len() != 16 || !key.chars().all(|c| c.is_ascii_hexdigit()) || !path.is_dir() {
            continue;
        }
        let used = std::fs::metadata(path.join("stamp"))
            .and_then(|m| m.modified())
            .unwrap_or(std::time::UNIX_EPOCH);
        groups
            .entry(prefix.to_string())
            .or_default()
            .push((used, path));
    }
    for mut dirs in groups.into_values() {
        dirs.sort_by_key(|d| std::cmp::Reverse(d.0));
        for (_, p) in dirs.into_iter().skip(KEEP) {
            if !current.contains(&p.as_path()) {
                let _ = std::fs::remove_dir_all(p);
            }
        }
    }
}

/// 64-bit FNV-1a: stable across Rust versions, unlike `DefaultHasher`.
fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ b as u64).wrapping_mul(0x100_0000_01b3)
    })
}

fn tool_version(tool: &str) -> String {
    Command::new(tool)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default()
}

fn job_dir(job: &Job) -> &Path {
    match job {
        Job::Runtime { dir } | Job::Model { dir, .. } => dir,
    }
}

/// A job's directory holds a finished build (its stamp is written last).
fn finished(job: &Job) -> bool {
    job_dir(job).join("stamp").exists()
}

fn run(job: &Job, st: &Settings) -> Result<(), String> {
    let dir = job_dir(job);
    // A directory without a stamp is a build that was interrupted: start over.
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    match job {
        Job::Runtime { dir } => runtime(dir, st)?,
        Job::Model {
            name,
            id,
            verilog,
            top,
            args,
            dir,
        } => model(name, id, verilog, top, args, dir, st)?,
    }
    std::fs::write(dir.join("stamp"), "").map_err(|e| e.to_string())
}

/// One configuration: Verilator, the shim, the C++ library and its bindings.
fn model(
    name: &str,
    id: &str,
    verilog: &str,
    top: &str,
    args: &[String],
    dir: &Path,
    st: &Settings,
) -> Result<(), String> {
    let err = |what: &str| format!("configuration {name}: {what}");
    let file = dir.join(format!("{top}.v"));
    std::fs::write(&file, verilog).map_err(|e| err(&e.to_string()))?;
    let obj = dir.join("obj");
    let prefix = format!("V{id}");
    let status = Command::new("verilator")
        .args(["--cc", "--prefix", &prefix, "--top-module", top])
        .args(&st.verilator_args)
        .args(args)
        .arg("--Mdir")
        .arg(&obj)
        .arg(&file)
        .status()
        .map_err(|e| {
            err(&format!(
                "verilator not found ({e}): run `cargo xtask setup` (apt-get install verilator)"
            ))
        })?;
    if !status.success() {
        return Err(err("verilator failed"));
    }
    let ports = parse_ports(&obj.join(format!("{prefix}.h")));
    let skip = patch_edge_eval(&obj, &prefix, id).map_err(|e| err(&e))?;
    if !skip {
        println!("cargo:warning=fanin-sim: configuration {name}: Verilator's eval() layout not recognised; every clock edge re-evaluates the input logic (exact, slower)");
    }
    let (cpp, h) = shim(id, &prefix, &ports, st.trace, skip);
    std::fs::write(dir.join("shim.cpp"), cpp).map_err(|e| err(&e.to_string()))?;
    std::fs::write(dir.join("shim.h"), h).map_err(|e| err(&e.to_string()))?;
    let mut unity = String::new();
    let mut cpps: Vec<_> = std::fs::read_dir(&obj)
        .map_err(|e| err(&e.to_string()))?
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
        .collect();
    cpps.sort();
    for p in cpps {
        let _ = writeln!(unity, "#include \"{}\"", p.display());
    }
    std::fs::write(dir.join("unity.cpp"), unity).map_err(|e| err(&e.to_string()))?;
    cc_build(st)
        .out_dir(dir)
        .include(&obj)
        .file(dir.join("shim.cpp"))
        .file(dir.join("unity.cpp"))
        .try_compile(&format!("fanin_model_{id}"))
        .map_err(|e| err(&format!("C++ build failed: {e}")))?;
    bindgen::Builder::default()
        .header(dir.join("shim.h").to_string_lossy())
        .allowlist_function(format!("fanin_{id}_.*"))
        .generate()
        .map_err(|e| {
            err(&format!(
                "bindgen failed (is libclang-dev installed? run `cargo xtask setup`): {e}"
            ))
        })?
        .write_to_file(dir.join("bindings.rs"))
        .map_err(|e| err(&e.to_string()))
}

/// Lets the evaluation at a rising clock edge skip Verilator's input-combinational (`ico`)
/// pass. Verilator 5's `eval()` always runs it first, although at the edge only `clk` has
/// changed since the settle that ran it; the logic it computes does not read `clk` (checked
/// here), so it is still up to date and the pass is redundant. `eval()` is patched to skip
/// it while the thread-local `fanin_<id>_skip_ico` is set, which only the shim's
/// `eval_edge` does ([`Dut::posedge`] calls it when no input changed since the settle).
/// Returns false, leaving the files alone, if the generated code is not laid out as
/// expected (another Verilator version) or the `ico` logic reads `clk`.
fn patch_edge_eval(obj: &Path, prefix: &str, id: &str) -> Result<bool, String> {
    let mut files = Vec::new();
    for e in std::fs::read_dir(obj).map_err(|e| e.to_string())? {
        let p = e.map_err(|e| e.to_string())?.path();
        if p.extension().is_some_and(|e| e == "cpp") {
            let text = std::fs::read_to_string(&p).map_err(|e| e.to_string())?;
            files.push((p, text));
        }
    }
    // Every function of the ico region must leave `clk` alone.
    for (_, text) in &files {
        let mut in_ico = false;
        for line in text.lines() {
            if !line.starts_with(' ') && line.contains("___ico") && line.ends_with('{') {
                in_ico = true;
            } else if line == "}" {
                in_ico = false;
            } else if in_ico && reads_clk(line) {
                return Ok(false);
            }
        }
    }
    let head = format!("void {prefix}___024root___eval({prefix}___024root* vlSelf) {{");
    let from = "    vlSelf->__VicoIterCount = 0U;\n    __VicoContinue = 1U;\n";
    let flag = format!("fanin_{id}_skip_ico");
    let to = format!("    vlSelf->__VicoIterCount = 0U;\n    __VicoContinue = !{flag};\n");
    for (p, text) in &files {
        let Some(start) = text.find(&head) else {
            continue;
        };
        let body_end = text[start..]
            .find("\n}\n")
            .map_or(text.len(), |e| start + e);
        let Some(at) = text[start..body_end].find(from).map(|i| start + i) else {
            return Ok(false);
        };
        let patched = format!(
            "{}extern thread_local bool {flag};\n{}{to}{}",
            &text[..start],
            &text[start..at],
            &text[at + from.len()..]
        );
        std::fs::write(p, patched).map_err(|e| e.to_string())?;
        return Ok(true);
    }
    Ok(false)
}

/// A generated C++ line that reads the top-level `clk`.
fn reads_clk(line: &str) -> bool {
    line.match_indices("->clk").any(|(i, m)| {
        !line[i + m.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn verilator_root() -> PathBuf {
    let o = Command::new("verilator")
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
        .expect("verilator not found: run `cargo xtask setup`");
    PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
}

fn cc_build(st: &Settings) -> cc::Build {
    let mut b = cc::Build::new();
    b.define("VM_TRACE", if st.trace { "1" } else { "0" });
    b.cpp(true)
        .std("c++17")
        .opt_level(3)
        .debug(false)
        .cargo_metadata(false)
        .include(&st.inc)
        .include(st.inc.join("vltstd"))
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-variable")
        .flag_if_supported("-Wno-sign-compare")
        .flag_if_supported("-Wno-shadow")
        .warnings(false);
    for f in &st.cxx_flags {
        b.flag(f);
    }
    b
}

/// The Verilator runtime, compiled once for every configuration.
fn runtime(dir: &Path, st: &Settings) -> Result<(), String> {
    let mut b = cc_build(st);
    b.out_dir(dir)
        .file(st.inc.join("verilated.cpp"))
        .file(st.inc.join("verilated_threads.cpp"));
    if st.trace {
        b.file(st.inc.join("verilated_vcd_c.cpp"));
    }
    b.try_compile("fanin_verilated")
        .map_err(|e| format!("Verilator runtime: C++ build failed: {e}"))
}

fn write_if_changed(p: &Path, s: &str) {
    if std::fs::read_to_string(p).ok().as_deref() != Some(s) {
        std::fs::write(p, s).unwrap();
    }
}

/// Reads `VL_IN8(&name,msb,lsb);`-style declarations from the Verilated model's header.
fn parse_ports(header: &Path) -> Vec<Port> {
    let text = std::fs::read_to_string(header).unwrap();
    let mut v = Vec::new();
    for line in text.lines() {
        let l = line.trim();
        let Some(rest) = l.strip_prefix("VL_") else {
            continue;
        };
        let output = rest.starts_with("OUT");
        if !(output || rest.starts_with("IN")) {
            continue;
        }
        let Some(args) = rest.split_once('(').map(|(_, a)| a.trim_end_matches(");")) else {
            continue;
        };
        let parts: Vec<&str> = args.split(',').collect();
        if parts.len() < 3 {
            continue;
        }
        let name = parts[0].trim_start_matches('&').to_string();
        let msb: u32 = parts[1].parse().unwrap();
        let lsb: u32 = parts[2].parse().unwrap();
        v.push(Port {
            name,
            output,
            width: msb - lsb + 1,
        });
    }
    assert!(!v.is_empty(), "no ports found in {}", header.display());
    v
}

/// The C shim: ports addressed by index, wide ports passed as 32-bit words by pointer.
fn shim(id: &str, prefix: &str, ports: &[Port], trace: bool, skip: bool) -> (String, String) {
    let f = |s: &str| format!("fanin_{id}_{s}");
    let mut h = String::new();
    let _ = writeln!(h, "/* Generated by fanin-sim's build.rs. */\n#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\" {{\n#endif");
    for decl in [
        format!("void* {}(void)", f("new")),
        format!("void {}(void* m)", f("free")),
        format!("void {}(void* m)", f("eval")),
        format!("void {}(void* m)", f("eval_edge")),
        format!("int {}(void)", f("edge_skips_ico")),
        format!("int {}(void)", f("port_count")),
        format!("const char* {}(int i)", f("port_name")),
        format!("int {}(int i)", f("port_width")),
        format!("int {}(int i)", f("port_is_output")),
        format!("void {}(void* m, int i, const uint32_t* words)", f("set")),
        format!("void {}(const void* m, int i, uint32_t* words)", f("get")),
        format!("void {}(void* m, int i, uint64_t v)", f("set_u64")),
        format!("uint64_t {}(const void* m, int i)", f("get_u64")),
        format!("int {}(void* m, const char* path)", f("trace_open")),
        format!("void {}(void* m, uint64_t time)", f("trace_dump")),
        format!("void {}(void* m)", f("trace_close")),
    ] {
        let _ = writeln!(h, "{decl};");
    }
    let _ = writeln!(h, "#ifdef __cplusplus\n}}\n#endif");

    let mut c = String::new();
    let _ = writeln!(c, "/* Generated by fanin-sim's build.rs. */\n#include \"{prefix}.h\"\n#include \"verilated.h\"\n#include \"shim.h\"");
    if trace {
        let _ = writeln!(
            c,
            "#include \"verilated_vcd_c.h\"\ntypedef VerilatedVcdC Tfp;"
        );
    } else {
        let _ = writeln!(
            c,
            "struct Tfp {{ void close() {{}} void dump(uint64_t) {{}} }};"
        );
    }
    let _ = writeln!(
        c,
        "struct H {{ VerilatedContext* ctx; {prefix}* m; Tfp* tfp; }};"
    );
    let _ = writeln!(
        c,
        "static const char* NAMES[] = {{{}}};",
        ports
            .iter()
            .map(|p| format!("\"{}\"", p.name))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        c,
        "static const int WIDTHS[] = {{{}}};",
        ports
            .iter()
            .map(|p| p.width.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(
        c,
        "static const int OUTS[] = {{{}}};",
        ports
            .iter()
            .map(|p| (p.output as u8).to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    let n = ports.len();
    let _ = writeln!(c, "extern \"C\" {{");
    let _ = writeln!(c, "void* {}(void) {{ H* h = new H; h->ctx = new VerilatedContext; h->ctx->traceEverOn(true); h->m = new {prefix}(h->ctx, \"TOP\"); h->tfp = nullptr; return h; }}", f("new"));
    let _ = writeln!(c, "void {}(void* p) {{ H* h = (H*)p; if (h->tfp) {{ h->tfp->close(); delete h->tfp; }} h->m->final(); delete h->m; delete h->ctx; delete h; }}", f("free"));
    let _ = writeln!(c, "void {}(void* p) {{ ((H*)p)->m->eval(); }}", f("eval"));
    // See `patch_edge_eval`: the flag is read by the patched eval() of this thread's model.
    let _ = writeln!(c, "thread_local bool {} = false;", f("skip_ico"));
    let _ = writeln!(
        c,
        "void {}(void* p) {{ {skip} = true; ((H*)p)->m->eval(); {skip} = false; }}",
        f("eval_edge"),
        skip = f("skip_ico")
    );
    let _ = writeln!(
        c,
        "int {}(void) {{ return {}; }}",
        f("edge_skips_ico"),
        skip as u8
    );
    let _ = writeln!(c, "int {}(void) {{ return {n}; }}", f("port_count"));
    let _ = writeln!(
        c,
        "const char* {}(int i) {{ return (i >= 0 && i < {n}) ? NAMES[i] : nullptr; }}",
        f("port_name")
    );
    let _ = writeln!(
        c,
        "int {}(int i) {{ return (i >= 0 && i < {n}) ? WIDTHS[i] : 0; }}",
        f("port_width")
    );
    let _ = writeln!(
        c,
        "int {}(int i) {{ return (i >= 0 && i < {n}) ? OUTS[i] : 0; }}",
        f("port_is_output")
    );
    // set / get by words
    let _ = writeln!(
        c,
        "void {}(void* p, int i, const uint32_t* w) {{ {prefix}* m = ((H*)p)->m; switch (i) {{",
        f("set")
    );
    for (i, p) in ports.iter().enumerate().filter(|(_, p)| !p.output) {
        if p.width > 64 {
            let words = p.width.div_ceil(32);
            let _ = writeln!(
                c,
                "  case {i}: for (int k = 0; k < {words}; k++) m->{}[k] = w[k]; break;",
                p.name
            );
        } else if p.width > 32 {
            let _ = writeln!(
                c,
                "  case {i}: m->{} = ((uint64_t)w[1] << 32) | w[0]; break;",
                p.name
            );
        } else {
            let _ = writeln!(c, "  case {i}: m->{} = w[0]; break;", p.name);
        }
    }
    let _ = writeln!(c, "  default: break; }} }}");
    let _ = writeln!(c, "void {}(const void* p, int i, uint32_t* w) {{ const {prefix}* m = ((const H*)p)->m; switch (i) {{", f("get"));
    for (i, p) in ports.iter().enumerate() {
        if p.width > 64 {
            let words = p.width.div_ceil(32);
            let _ = writeln!(
                c,
                "  case {i}: for (int k = 0; k < {words}; k++) w[k] = m->{}[k]; break;",
                p.name
            );
        } else if p.width > 32 {
            let _ = writeln!(
                c,
                "  case {i}: w[0] = (uint32_t)m->{0}; w[1] = (uint32_t)(m->{0} >> 32); break;",
                p.name
            );
        } else {
            let _ = writeln!(c, "  case {i}: w[0] = m->{}; break;", p.name);
        }
    }
    let _ = writeln!(c, "  default: break; }} }}");
    let _ = writeln!(
        c,
        "void {}(void* p, int i, uint64_t v) {{ {prefix}* m = ((H*)p)->m; switch (i) {{",
        f("set_u64")
    );
    for (i, p) in ports
        .iter()
        .enumerate()
        .filter(|(_, p)| !p.output && p.width <= 64)
    {
        let _ = writeln!(c, "  case {i}: m->{} = v; break;", p.name);
    }
    let _ = writeln!(c, "  default: break; }} }}");
    let _ = writeln!(
        c,
        "uint64_t {}(const void* p, int i) {{ const {prefix}* m = ((const H*)p)->m; switch (i) {{",
        f("get_u64")
    );
    for (i, p) in ports.iter().enumerate() {
        if p.width <= 64 {
            let _ = writeln!(c, "  case {i}: return m->{};", p.name);
        } else {
            let _ = writeln!(
                c,
                "  case {i}: return ((uint64_t)m->{0}[1] << 32) | m->{0}[0];",
                p.name
            );
        }
    }
    let _ = writeln!(c, "  default: return 0; }} }}");
    if trace {
        let _ = writeln!(c, "int {}(void* p, const char* path) {{ H* h = (H*)p; if (h->tfp) return 0; h->tfp = new VerilatedVcdC; h->m->trace(h->tfp, 99); h->tfp->open(path); return h->tfp->isOpen() ? 1 : 0; }}", f("trace_open"));
    } else {
        let _ = writeln!(
            c,
            "int {}(void* p, const char* path) {{ (void)p; (void)path; return -1; }}",
            f("trace_open")
        );
    }
    let _ = writeln!(
        c,
        "void {}(void* p, uint64_t t) {{ H* h = (H*)p; if (h->tfp) h->tfp->dump(t); }}",
        f("trace_dump")
    );
    let _ = writeln!(c, "void {}(void* p) {{ H* h = (H*)p; if (h->tfp) {{ h->tfp->close(); delete h->tfp; h->tfp = nullptr; }} }}", f("trace_close"));
    let _ = writeln!(c, "}}");
    (c, h)
}
