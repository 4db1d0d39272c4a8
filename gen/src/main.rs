//! `fanin-gen --config NAME --out DIR`: emits the core's Verilog, manifest and register header.
//! `fanin-gen --board sume|au250|au280 --out DIR`: a complete Vivado build directory.
//! `fanin-gen --config NAME --report`: yosys resource and logic-depth report.

use anyhow::{bail, Result};
use clap::Parser;
use fanin_gen::board::Board;
use fanin_gen::report::{self, Family};
use fanin_hdl::CoreConfig;
use std::path::PathBuf;
use std::time::Duration;

/// Command line.
#[derive(Parser)]
#[command(about = "Generate the fanin switch core (Verilog + manifest.json + fanin_regs.h)")]
struct Args {
    /// Configuration: a name from --list, optionally with parameters overridden,
    /// NAME[+KEY=VALUE]..., e.g. default+ports=8+engine_w=1024 (KEY: ports, data_w,
    /// engine_w, slots, lanes, max_jobs, max_children, max_routes, max_frame, rx_frames,
    /// clock_mhz, slot_ram).
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
    /// Write a Vivado build directory for this board (sume, au250, au280) into --out.
    #[arg(long)]
    board: Option<String>,
    /// Synthesise the core with yosys and print resources and logic depth.
    #[arg(long)]
    report: bool,
    /// yosys family for --report: xc7 or xcup (default: xc7 for sume, xcup otherwise).
    #[arg(long)]
    family: Option<String>,
    /// With --report: what-if, the block-RAM memories of 4 Mbit or more synthesised as URAM
    /// (UltraScale+; memories the configuration already puts in URAM stay there).
    #[arg(long)]
    uram_what_if: bool,
    /// With --board: add ILAs (Vivado's logic analyser, over JTAG) on the core's dbg_*
    /// monitor port and the engine's state registers. Off by default.
    #[arg(long)]
    ila: bool,
    /// Seconds after which --report gives up on yosys.
    #[arg(long, default_value_t = 3600)]
    timeout: u64,
}

fn main() -> Result<()> {
    let a = Args::parse();
    if a.list {
        for c in CoreConfig::named() {
            println!(
                "{:8} ports={} data_w={} engine_w={} slots={} lanes={} jobs={} routes={} clock={}MHz slot_ram={}",
                c.name, c.ports, c.data_w, c.engine_w, c.slots, c.lanes, c.max_jobs, c.max_routes, c.clock_mhz,
                c.slot_ram.attr()
            );
        }
        return Ok(());
    }
    if let Some(p) = &a.registers {
        std::fs::write(p, fanin_gen::registers_md()?)?;
        if a.config.is_none() && a.board.is_none() {
            return Ok(());
        }
    }
    if let Some(b) = &a.board {
        let board = Board::parse(b)?;
        let name = a.config.as_deref().unwrap_or(board.config_name());
        let cfg = CoreConfig::by_name(name)?;
        let Some(out) = a.out else {
            bail!("give --out DIR for the {} build directory", board.name());
        };
        let opts = fanin_gen::board::Options { ila: a.ila };
        fanin_gen::board::write_with(board, &cfg, &out, &opts)?;
        eprintln!(
            "fanin-gen: wrote the {} build directory ({}) into {}; run: cd {} && vivado -mode batch -source build.tcl",
            board.name(),
            cfg.name,
            out.display(),
            out.display()
        );
        return Ok(());
    }
    if a.ila {
        bail!("--ila adds logic analysers to a board build: use it with --board NAME --out DIR");
    }
    if a.report {
        let Some(name) = a.config else {
            bail!("give --config NAME with --report; names: {}", names());
        };
        let cfg = CoreConfig::by_name(&name)?;
        let family = match &a.family {
            Some(f) => Family::parse(f)?,
            None => Family::for_config(&cfg),
        };
        let keep = a.out.is_some();
        let dir = a.out.unwrap_or_else(|| {
            std::env::temp_dir().join(format!("fanin-report-{}-{}", name, std::process::id()))
        });
        if a.uram_what_if && family != Family::Xcup {
            bail!(
                "--uram-what-if needs an UltraScale+ family (--family xcup): 7-series has no URAM"
            );
        }
        let uram = a.uram_what_if.then_some(report::URAM_WHAT_IF_BITS);
        let r = report::run_with(&cfg, family, &dir, Duration::from_secs(a.timeout), uram);
        if !keep {
            let _ = std::fs::remove_dir_all(&dir);
        }
        let label = if a.uram_what_if {
            format!(
                "{} (what-if: block-RAM memories >= 4 Mbit as URAM)",
                cfg.name
            )
        } else {
            cfg.name.clone()
        };
        print!("{}", r?.render(&label, family));
        return Ok(());
    }
    let (Some(name), Some(out)) = (a.config, a.out) else {
        bail!(
            "give --config NAME --out DIR, --board NAME --out DIR, --config NAME --report, or --list; configs: {}",
            names()
        );
    };
    let cfg = CoreConfig::by_name(&name)?;
    fanin_gen::write(&cfg, &out)?;
    eprintln!("fanin-gen: wrote {} into {}", name, out.display());
    Ok(())
}

/// The named configurations, comma-separated.
fn names() -> String {
    CoreConfig::named()
        .iter()
        .map(|c| c.name.clone())
        .collect::<Vec<_>>()
        .join(", ")
}
