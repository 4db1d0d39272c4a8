//! fanin-gen: writes the Verilog, manifest and register header of a core configuration,
//! board build directories ([`board`]) and yosys resource reports ([`report`]).

pub mod board;
pub mod report;

use anyhow::{Context, Result};
use fanin_hdl::CoreConfig;
use fanin_regs::RegMap;
use serde_json::json;
use std::path::Path;

/// Everything generated for one configuration: `(file name, contents)`.
pub fn outputs(cfg: &CoreConfig) -> Result<Vec<(String, String)>> {
    let v = fanin_hdl::verilog(cfg)?;
    let map = RegMap::new(cfg);
    Ok(vec![
        ("fanin_core.v".into(), v),
        (
            "manifest.json".into(),
            serde_json::to_string_pretty(&manifest(cfg, &map))? + "\n",
        ),
        ("fanin_regs.h".into(), map.c_header(cfg)),
    ])
}

/// The manifest: parameters, top-level ports, register map and wire-format constants.
pub fn manifest(cfg: &CoreConfig, map: &RegMap) -> serde_json::Value {
    use fanin_proto::wire as w;
    let ports: Vec<_> = fanin_hdl::verilog::top_ports(cfg)
        .into_iter()
        .map(|(n, d, width)| json!({"name": n, "dir": d, "width": width}))
        .collect();
    json!({
        "top": "fanin_core",
        "config": cfg,
        "ports": ports,
        "registers": map,
        "counters": fanin_proto::model::Counter::ALL.iter().map(|c| c.name()).collect::<Vec<_>>(),
        "wire": {
            "FANIN_UDP_PORT": w::FANIN_UDP_PORT,
            "VERSION": w::VERSION,
            "HEADER_LEN": w::HEADER_LEN,
            "L2L4_LEN": w::L2L4_LEN,
            "PAYLOAD_OFFSET": w::PAYLOAD_OFFSET,
            "ELEMENT_BYTES": w::ELEMENT_BYTES,
            "MAX_ELEMENTS": w::MAX_ELEMENTS,
            "MAX_WORKERS": w::MAX_WORKERS,
            "MAX_FANIN_FRAME": w::MAX_FANIN_FRAME,
        },
    })
}

/// Writes the outputs of `cfg` into `dir`.
pub fn write(cfg: &CoreConfig, dir: &Path) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    for (name, text) in outputs(cfg)? {
        let p = dir.join(name);
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// The docs/registers.md page (for the `default` configuration).
pub fn registers_md() -> Result<String> {
    let cfg = CoreConfig::by_name("default")?;
    Ok(RegMap::new(&cfg).markdown(&cfg))
}

/// SHA-256 of a text, hex.
pub fn sha256_hex(s: &str) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(s.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}
