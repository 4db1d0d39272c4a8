//! `fanin-gen --config NAME --out DIR`: emits the core's Verilog, manifest and register header.

use anyhow::{bail, Result};
use clap::Parser;
use fanin_hdl::CoreConfig;
use std::path::PathBuf;

/// Command line.
#[derive(Parser)]
#[command(about = "Generate the fanin switch core (Verilog + manifest.json + fanin_regs.h)")]
struct Args {
    /// Named configuration (see --list).
    #[arg(long)]
    config: Option<String>,
    /// Output directory.
    #[arg(long)]
    out: Option<PathBuf>,
    /// List the named configurations and exit.
    #[arg(long)]
    list: bool,
    /// Write the register documentation page to this path (docs/registers.md).
    #[arg(long)]
    registers: Option<PathBuf>,
}

fn main() -> Result<()> {
    let a = Args::parse();
    if a.list {
        for c in CoreConfig::named() {
            println!(
                "{:8} ports={} data_w={} engine_w={} slots={} lanes={} jobs={} routes={} clock={}MHz",
                c.name, c.ports, c.data_w, c.engine_w, c.slots, c.lanes, c.max_jobs, c.max_routes, c.clock_mhz
            );
        }
        return Ok(());
    }
    if let Some(p) = &a.registers {
        std::fs::write(p, fanin_gen::registers_md()?)?;
        if a.config.is_none() {
            return Ok(());
        }
    }
    let (Some(name), Some(out)) = (a.config, a.out) else {
        bail!("give --config NAME --out DIR (or --list); names: default, sume, alveo");
    };
    let cfg = CoreConfig::by_name(&name)?;
    fanin_gen::write(&cfg, &out)?;
    eprintln!("fanin-gen: wrote {} into {}", name, out.display());
    Ok(())
}
