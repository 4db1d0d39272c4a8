//! Build pipeline: fanin-hdl → Verilog → `verilator --cc` → a flat `extern "C"` shim
//! generated from Verilator's header → `cc` → bindgen → a vtable per configuration.
//!
//! `FANIN_SIM_CONFIGS` (comma-separated, default `default`) picks the configurations built
//! into the crate. Everything lives in this package's OUT_DIR, which cargo keys by package
//! and profile, so parallel test binaries share one finished build and never race on it.
//! A configuration change (or any change to fanin-hdl) rebuilds.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

struct Port {
    name: String,
    output: bool,
    width: u32,
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=FANIN_SIM_CONFIGS");
    println!("cargo:rerun-if-env-changed=FANIN_SIM_TRACE");
    let trace = std::env::var("FANIN_SIM_TRACE").is_ok_and(|v| v == "1");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let configs: Vec<String> = std::env::var("FANIN_SIM_CONFIGS")
        .unwrap_or_else(|_| "default".into())
        .split(',')
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    let root = verilator_root();
    let inc = root.join("include");
    runtime(&inc, trace);
    let mut reg = String::new();
    let mut names = Vec::new();
    for name in &configs {
        let cfg = fanin_hdl::CoreConfig::by_name(name)
            .unwrap_or_else(|e| panic!("FANIN_SIM_CONFIGS: {e}"));
        let v = fanin_hdl::verilog(&cfg).unwrap_or_else(|e| panic!("{e}"));
        let id: String = name
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        let dir = out.join(&id);
        std::fs::create_dir_all(&dir).unwrap();
        write_if_changed(&dir.join("fanin_core.v"), &v);
        let obj = dir.join("obj");
        let prefix = format!("V{id}");
        // Files of an earlier run with other options would be compiled into the unity file.
        let _ = std::fs::remove_dir_all(&obj);
        let st = Command::new("verilator")
            .args([
                "--cc",
                "--prefix",
                &prefix,
                "--top-module",
                "fanin_core",
                "-O3",
                "--x-assign",
                "fast",
                "--x-initial",
                "fast",
                "-Wno-fatal",
                "-Wno-lint",
                "-Wno-style",
            ])
            .args(if trace { &["--trace"][..] } else { &[][..] })
            .arg("--Mdir")
            .arg(&obj)
            .arg(dir.join("fanin_core.v"))
            .status()
            .expect("verilator not found: run `cargo xtask setup` (apt-get install verilator)");
        assert!(st.success(), "verilator failed for configuration {name}");
        let ports = parse_ports(&obj.join(format!("{prefix}.h")));
        let (cpp, h) = shim(&id, &prefix, &ports, trace);
        write_if_changed(&dir.join("shim.cpp"), &cpp);
        write_if_changed(&dir.join("shim.h"), &h);
        let mut unity = String::new();
        let mut cpps: Vec<_> = std::fs::read_dir(&obj)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "cpp"))
            .collect();
        cpps.sort();
        for p in cpps {
            let _ = writeln!(unity, "#include \"{}\"", p.display());
        }
        write_if_changed(&dir.join("unity.cpp"), &unity);
        cc_build(&inc, trace)
            .include(&obj)
            .file(dir.join("shim.cpp"))
            .file(dir.join("unity.cpp"))
            .compile(&format!("fanin_model_{id}"));
        bindgen::Builder::default()
            .header(dir.join("shim.h").to_string_lossy())
            .allowlist_function(format!("fanin_{id}_.*"))
            .generate()
            .expect("bindgen failed (is libclang-dev installed? run `cargo xtask setup`)")
            .write_to_file(dir.join("bindings.rs"))
            .unwrap();
        let _ = writeln!(reg, "/// Bindings of configuration `{name}`.\npub mod {id} {{\n    #![allow(non_camel_case_types, dead_code, missing_docs)]\n    include!(concat!(env!(\"OUT_DIR\"), \"/{id}/bindings.rs\"));\n}}");
        let f = |s: &str| format!("{id}::fanin_{id}_{s}");
        let _ = writeln!(
            reg,
            "static VT_{uid}: VTable = VTable {{ name: {name:?}, new: {}, free: {}, eval: {}, port_count: {}, port_name: {}, port_width: {}, port_is_output: {}, set: {}, get: {}, set_u64: {}, get_u64: {}, trace_open: {}, trace_dump: {}, trace_close: {} }};",
            f("new"), f("free"), f("eval"), f("port_count"), f("port_name"), f("port_width"), f("port_is_output"), f("set"), f("get"), f("set_u64"), f("get_u64"), f("trace_open"), f("trace_dump"), f("trace_close"),
            uid = id.to_uppercase()
        );
        names.push((name.clone(), id));
    }
    let _ = writeln!(reg, "/// Configurations built into this crate (`FANIN_SIM_CONFIGS`).\npub const BUILT: &[&str] = &[{}];", names.iter().map(|(n, _)| format!("{n:?}")).collect::<Vec<_>>().join(", "));
    let _ = writeln!(reg, "/// The vtable of a built configuration.\npub fn vtable(name: &str) -> Option<&'static VTable> {{\n    match name {{");
    for (n, id) in &names {
        let _ = writeln!(reg, "        {n:?} => Some(&VT_{}),", id.to_uppercase());
    }
    let _ = writeln!(reg, "        _ => None,\n    }}\n}}");
    write_if_changed(&out.join("models.rs"), &reg);
}

fn verilator_root() -> PathBuf {
    let o = Command::new("verilator")
        .arg("--getenv")
        .arg("VERILATOR_ROOT")
        .output()
        .expect("verilator not found: run `cargo xtask setup`");
    PathBuf::from(String::from_utf8(o.stdout).unwrap().trim())
}

fn cc_build(inc: &Path, trace: bool) -> cc::Build {
    let mut b = cc::Build::new();
    b.define("VM_TRACE", if trace { "1" } else { "0" });
    b.cpp(true)
        .std("c++17")
        .opt_level(3)
        .debug(false)
        .include(inc)
        .include(inc.join("vltstd"))
        .flag_if_supported("-Wno-unused-parameter")
        .flag_if_supported("-Wno-unused-variable")
        .flag_if_supported("-Wno-sign-compare")
        .flag_if_supported("-Wno-shadow")
        .warnings(false);
    b
}

/// The Verilator runtime, compiled once for every configuration.
fn runtime(inc: &Path, trace: bool) {
    let mut b = cc_build(inc, trace);
    b.file(inc.join("verilated.cpp"))
        .file(inc.join("verilated_threads.cpp"));
    if trace {
        b.file(inc.join("verilated_vcd_c.cpp"));
    }
    b.compile("fanin_verilated");
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
fn shim(id: &str, prefix: &str, ports: &[Port], trace: bool) -> (String, String) {
    let f = |s: &str| format!("fanin_{id}_{s}");
    let mut h = String::new();
    let _ = writeln!(h, "/* Generated by fanin-sim's build.rs. */\n#include <stdint.h>\n#ifdef __cplusplus\nextern \"C\" {{\n#endif");
    for decl in [
        format!("void* {}(void)", f("new")),
        format!("void {}(void* m)", f("free")),
        format!("void {}(void* m)", f("eval")),
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
