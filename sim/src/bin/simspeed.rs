//! `simspeed --config NAME`: simulated cycles per wall-clock second of the Verilator model
//! under full-rate traffic on every port, single-threaded. The traffic is checked against
//! the reference model at the end, so the figure is for a run that was also verified.
//!
//! Method: every port offers back-to-back 256-byte UDP frames to the host behind the next
//! port (forwarding, so every egress port is fully loaded too); the sources are topped up
//! every 64 cycles so that none runs dry. The timed loop is the whole testbench: frame
//! generation, the reference model fed each frame, the AXI-Stream sources and sinks, the
//! AXI4-Lite master, the monitor port, and two model evaluations per cycle (settle, edge).
//!
//! Icarus Verilog (if `iverilog` and `vvp` are on PATH; `--icarus-cycles 0` skips it): the
//! same stimulus is run again through the Verilator model for the first `--icarus-cycles`
//! cycles with every input recorded at every clock edge; a generated Verilog testbench
//! replays them (`$readmemh`) into the same generated Verilog under `vvp`, and counts the
//! output beats per port, which must equal the Verilator model's. Its rate is the replay's
//! wall time minus that of a zero-cycle run (start-up and loading the vectors); the ratio
//! compares it with the Verilator figure above, which includes the whole Rust testbench.

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

use anyhow::{bail, Context};
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
    /// Cycles of the same stimulus to replay under Icarus Verilog (0: no Icarus run).
    #[arg(long, default_value_t = 5_000)]
    icarus_cycles: u64,
    /// Wall-clock seconds the Icarus replay may take before it is stopped (the ratio is
    /// then a lower bound).
    #[arg(long, default_value_t = 30.0)]
    icarus_timeout: f64,
}

fn addr(i: u8) -> L4Addr {
    L4Addr {
        mac: [2, 0xfa, 0, 0, 0, i],
        ip: core::net::Ipv4Addr::new(10, 1, 0, i),
        port: 5000,
    }
}

/// The traffic: a programmed testbench and its scoreboard, topped up every 64 cycles.
struct Traffic {
    tb: Tb,
    sb: Scoreboard,
    ports: u8,
    queued: usize,
    frames: u64,
}

impl Traffic {
    /// `record`: record the inputs from the first cycle after reset (programming included).
    fn new(config: &str, core: &CoreConfig, record: bool) -> anyhow::Result<Self> {
        let mut cfg = SwitchConfig::new("dut", addr(1).mac, addr(1).ip);
        cfg.params = params(core);
        cfg.routes = (0..core.ports)
            .map(|p| Route {
                ip: addr(p + 2).ip,
                port: p,
            })
            .collect();
        let mut tb = Tb::new(config, Pacing::FULL, 1)?;
        if record {
            tb.m.record_inputs();
        }
        let sb = Scoreboard::new(core, &cfg)?;
        program(&mut tb, &sb.regs, &cfg)?;
        // Frames queued per port: enough beats for the 64 cycles between top-ups, plus slack.
        let beats_per_frame = (256 + 42u32).div_ceil(core.data_w / 8) as usize;
        Ok(Self {
            tb,
            sb,
            ports: core.ports,
            queued: 64usize.div_ceil(beats_per_frame) + 2,
            frames: 0,
        })
    }

    /// Runs at least `cycles` cycles.
    fn run(&mut self, cycles: u64) {
        let start = self.tb.m.cycle();
        while self.tb.m.cycle() - start < cycles {
            for p in 0..self.ports {
                while self.tb.src[p as usize].pending() < self.queued {
                    let payload = vec![self.frames as u8; 256];
                    let f = Datagram {
                        src: addr(p + 2),
                        dst: addr((p + 1) % self.ports + 2),
                        payload: &payload,
                    }
                    .to_frame(false);
                    self.sb.feed(0, p, &f);
                    self.tb.src[p as usize].push(f, false);
                    self.frames += 1;
                }
            }
            for _ in 0..64 {
                self.tb.step();
            }
        }
    }
}

fn main() -> anyhow::Result<()> {
    let a = Args::parse();
    let core = CoreConfig::by_name(&a.config)?;
    let mut t = Traffic::new(&a.config, &core, false)?;
    let start_cycle = t.tb.m.cycle();
    let wall = Instant::now();
    t.run(a.cycles);
    let cycles = t.tb.m.cycle() - start_cycle;
    let secs = wall.elapsed().as_secs_f64();
    t.tb.drain(200, 10_000_000)?;
    t.sb.check_frames(&t.tb)?;
    let beats: u64 = t.tb.src.iter().map(|s| s.beats).sum();
    println!(
        "config {}: {} ports x {} bits; {} frames, {beats} input beats in {cycles} cycles ({:.3} beats/cycle/port)",
        a.config,
        core.ports,
        core.data_w,
        t.frames,
        beats as f64 / cycles as f64 / core.ports as f64
    );
    println!("verified: every output frame matches the reference model");
    println!(
        "method: Verilator, one thread, C++ -O3; clock edge evaluates only the clocked logic: {}",
        if t.tb.m.edge_skips_input_logic() {
            "yes"
        } else {
            "no (FANIN_SIM_FULL_EVAL=1 or Verilator layout not recognised)"
        }
    );
    let rate = cycles as f64 / secs;
    println!("simspeed: {rate:.0} cycles/s ({secs:.2} s wall, testbench included, one core)");
    if a.icarus_cycles > 0 {
        icarus(&a.config, &core, a.icarus_cycles, a.icarus_timeout, rate)?;
    }
    Ok(())
}

/// Replays the first `cycles` cycles of the stimulus under Icarus Verilog.
fn icarus(
    config: &str,
    core: &CoreConfig,
    cycles: u64,
    timeout: f64,
    verilator_rate: f64,
) -> anyhow::Result<()> {
    let have = |tool: &str, arg: &str| {
        Command::new(tool)
            .arg(arg)
            .output()
            .is_ok_and(|o| o.status.success() || !o.stdout.is_empty() || !o.stderr.is_empty())
    };
    if !(have("iverilog", "-V") && have("vvp", "-V")) {
        println!("icarus: iverilog/vvp not found (apt-get install iverilog): no comparison");
        return Ok(());
    }
    let mut t = Traffic::new(config, core, true)?;
    t.run(cycles);
    let want: Vec<u64> = t.tb.sink.iter().map(|s| s.beats).collect();
    let dir = std::env::temp_dir().join(format!("fanin-simspeed-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    let r = replay(&dir, core, &t.tb, timeout);
    let _ = std::fs::remove_dir_all(&dir);
    let (edges, got, secs) = r?;
    let Some(got) = got else {
        let bound = edges as f64 / secs;
        println!(
            "icarus: below {bound:.1} cycles/s ({edges} cycles of the same stimulus not replayed within {secs:.0} s; stopped)"
        );
        println!(
            "ratio verilator/icarus: above {:.0}x",
            verilator_rate / bound
        );
        return Ok(());
    };
    if got != want {
        bail!(
            "icarus: output beats per port {got:?} differ from the Verilator model's {want:?} over the same {edges} cycles"
        );
    }
    let rate = edges as f64 / secs;
    println!(
        "icarus: {rate:.0} cycles/s ({edges} cycles of the same stimulus replayed in {secs:.2} s; output beats per port {got:?} equal the Verilator model's)"
    );
    println!("ratio verilator/icarus: {:.0}x", verilator_rate / rate);
    Ok(())
}

/// Writes the Verilog, the vectors and a testbench into `dir`, runs them; returns the clock
/// edges replayed (after reset), the output beats per port (None if the replay was stopped
/// after `timeout` seconds) and the replay's wall time.
fn replay(
    dir: &Path,
    core: &CoreConfig,
    tb: &Tb,
    timeout: f64,
) -> anyhow::Result<(u64, Option<Vec<u64>>, f64)> {
    let (inputs, words) = tb.m.recorded_inputs();
    let per_edge: usize = inputs.iter().map(|p| p.width.div_ceil(32) as usize).sum();
    let edges = words.len() / per_edge;
    // One line per edge: the inputs in port order, each as ceil(width/4) hex digits.
    let digits: Vec<usize> = inputs
        .iter()
        .map(|p| p.width.div_ceil(4) as usize)
        .collect();
    let total_bits: usize = digits.iter().sum::<usize>() * 4;
    let mut hex = String::with_capacity(edges * (total_bits / 4 + 1));
    for e in words.chunks(per_edge) {
        let mut at = 0;
        for (p, &d) in inputs.iter().zip(&digits) {
            let n = p.width.div_ceil(32) as usize;
            let w = &e[at..at + n];
            for j in (0..d).rev() {
                let nib = (w[j / 8] >> (4 * (j % 8))) & 0xf;
                hex.push(char::from_digit(nib, 16).unwrap());
            }
            at += n;
        }
        hex.push('\n');
    }
    std::fs::write(dir.join("stim.hex"), hex)?;
    std::fs::write(dir.join("fanin_core.v"), fanin_hdl::verilog(core)?)?;
    let mut v = String::new();
    let _ = writeln!(
        v,
        "`timescale 1ns/1ns\nmodule simspeed_tb;\n  reg [{}:0] stim [0:{}];\n  reg clk = 0;",
        total_bits - 1,
        edges.max(1) - 1
    );
    for p in tb.m.ports().iter().filter(|p| p.name != "clk") {
        let kind = if p.output { "wire" } else { "reg" };
        let _ = writeln!(v, "  {kind} [{}:0] {};", p.width - 1, p.name);
    }
    let conns: Vec<String> =
        tb.m.ports()
            .iter()
            .map(|p| format!(".{0}({0})", p.name))
            .collect();
    let _ = writeln!(v, "  fanin_core dut({});", conns.join(", "));
    let _ = writeln!(v, "  integer i, n;");
    for p in 0..tb.sink.len() {
        let _ = writeln!(v, "  integer beats_{p} = 0;");
    }
    let _ = writeln!(v, "  initial begin");
    let _ = writeln!(
        v,
        "    if (!$value$plusargs(\"cycles=%d\", n)) n = {edges};\n    $readmemh(\"{}\", stim);",
        dir.join("stim.hex").display()
    );
    // Reset as Dut::reset: 8 edges with rst high and every other input low.
    for p in &inputs {
        let _ = writeln!(v, "    {} = 0;", p.name);
    }
    let _ = writeln!(
        v,
        "    rst = 1;\n    repeat (8) begin #5 clk = 1; #5 clk = 0; end\n    for (i = 0; i < n; i = i + 1) begin"
    );
    let mut off = total_bits;
    for (p, &d) in inputs.iter().zip(&digits) {
        off -= d * 4;
        let _ = writeln!(v, "      {} = stim[i][{off} +: {}];", p.name, p.width);
    }
    let _ = writeln!(v, "      #5;");
    for p in 0..tb.sink.len() {
        let _ = writeln!(
            v,
            "      if (m_axis_{p}_tvalid && m_axis_{p}_tready) beats_{p} = beats_{p} + 1;"
        );
    }
    let _ = writeln!(v, "      clk = 1; #5 clk = 0;\n    end");
    let fmt = vec!["%0d"; tb.sink.len()].join(" ");
    let args: Vec<String> = (0..tb.sink.len()).map(|p| format!("beats_{p}")).collect();
    let _ = writeln!(
        v,
        "    $display(\"beats {fmt}\", {});\n    $finish;\n  end\nendmodule",
        args.join(", ")
    );
    std::fs::write(dir.join("tb.v"), v)?;
    let out = Command::new("iverilog")
        .args(["-g2012", "-o"])
        .arg(dir.join("sim.vvp"))
        .args(["-s", "simspeed_tb"])
        .arg(dir.join("tb.v"))
        .arg(dir.join("fanin_core.v"))
        .output()
        .context("running iverilog")?;
    if !out.status.success() {
        bail!("iverilog failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Runs `n` edges; None if stopped after `timeout` seconds.
    let vvp = |n: usize| -> anyhow::Result<(f64, Option<String>)> {
        let t = Instant::now();
        let mut child = Command::new("vvp")
            .arg("-n")
            .arg(dir.join("sim.vvp"))
            .arg(format!("+cycles={n}"))
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .context("running vvp")?;
        while child.try_wait()?.is_none() {
            if t.elapsed().as_secs_f64() > timeout {
                child.kill()?;
                child.wait()?;
                return Ok((t.elapsed().as_secs_f64(), None));
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let o = child.wait_with_output()?;
        let secs = t.elapsed().as_secs_f64();
        if !o.status.success() {
            bail!("vvp failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        Ok((secs, Some(String::from_utf8_lossy(&o.stdout).into_owned())))
    };
    let (idle, _) = vvp(0)?;
    let (busy, stdout) = vvp(edges)?;
    let Some(stdout) = stdout else {
        return Ok((edges as u64, None, busy));
    };
    let beats: Vec<u64> = stdout
        .lines()
        .find_map(|l| l.strip_prefix("beats "))
        .context("vvp printed no beat counts")?
        .split_whitespace()
        .map(|x| x.parse())
        .collect::<Result<_, _>>()?;
    Ok((edges as u64, Some(beats), (busy - idle).max(1e-9)))
}
