//! `simspeed --config NAME`: simulated cycles per wall-clock second of the Verilator model
//! under full-rate traffic on every port, single-threaded. The traffic is checked against
//! the reference model at the end, so the figure is for a run that was also verified.
//!
//! Method: every port offers back-to-back 256-byte UDP frames to the host behind the next
//! port (forwarding, so every egress port is fully loaded too); the sources are topped up
//! every 64 cycles so that none runs dry. The timed loop is the whole testbench: frame
//! generation, the reference model fed each frame, the AXI-Stream sources and sinks, the
//! AXI4-Lite master, the monitor port, and two model evaluations per cycle (settle, edge).

use std::time::Instant;

use clap::Parser;
use fanin_hdl::CoreConfig;
use fanin_proto::config::{Route, SwitchConfig};
use fanin_proto::wire::{Datagram, L4Addr};
use fanin_sim::scoreboard::{params, program, Scoreboard};
use fanin_sim::tb::{Pacing, Tb};

#[derive(Parser)]
struct Args {
    /// Configuration (must be built in: FANIN_SIM_CONFIGS).
    #[arg(long, default_value = "default")]
    config: String,
    /// Simulated cycles to run (at least).
    #[arg(long, default_value_t = 2_000_000)]
    cycles: u64,
}

fn addr(i: u8) -> L4Addr {
    L4Addr {
        mac: [2, 0xfa, 0, 0, 0, i],
        ip: core::net::Ipv4Addr::new(10, 1, 0, i),
        port: 5000,
    }
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let core = CoreConfig::by_name(&a.config)?;
    let mut cfg = SwitchConfig::new("dut", addr(1).mac, addr(1).ip);
    cfg.params = params(&core);
    cfg.routes = (0..core.ports)
        .map(|p| Route {
            ip: addr(p + 2).ip,
            port: p,
        })
        .collect();
    let mut tb = Tb::new(&a.config, Pacing::FULL, 1)?;
    let mut sb = Scoreboard::new(&core, &cfg)?;
    program(&mut tb, &sb.regs, &cfg)?;
    let ports = core.ports;
    // Frames queued per port: enough beats for the 64 cycles between top-ups, plus slack.
    let beats_per_frame = (256 + 42u32).div_ceil(core.data_w / 8) as usize;
    let queued = 64usize.div_ceil(beats_per_frame) + 2;
    let start_cycle = tb.m.cycle();
    let t = Instant::now();
    let mut frames = 0u64;
    while tb.m.cycle() - start_cycle < a.cycles {
        for p in 0..ports {
            while tb.src[p as usize].pending() < queued {
                let payload = vec![frames as u8; 256];
                let f = Datagram {
                    src: addr(p + 2),
                    dst: addr((p + 1) % ports + 2),
                    payload: &payload,
                }
                .to_frame(false);
                sb.feed(0, p, &f);
                tb.src[p as usize].push(f, false);
                frames += 1;
            }
        }
        for _ in 0..64 {
            tb.step();
        }
    }
    let cycles = tb.m.cycle() - start_cycle;
    let secs = t.elapsed().as_secs_f64();
    tb.drain(200, 10_000_000)?;
    sb.check_frames(&tb)?;
    let beats: u64 = tb.src.iter().map(|s| s.beats).sum();
    println!(
        "config {}: {} ports x {} bits; {frames} frames, {beats} input beats in {cycles} cycles",
        a.config, ports, core.data_w
    );
    println!("verified: every output frame matches the reference model");
    println!(
        "method: Verilator, one thread, C++ -O3; clock edge evaluates only the clocked logic: {}",
        if tb.m.edge_skips_input_logic() {
            "yes"
        } else {
            "no (FANIN_SIM_FULL_EVAL=1 or Verilator layout not recognised)"
        }
    );
    println!(
        "simspeed: {:.0} cycles/s ({:.2} s wall, testbench included, one core)",
        cycles as f64 / secs,
        secs
    );
    Ok(())
}
