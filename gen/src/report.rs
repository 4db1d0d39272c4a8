//! Resource report without Vivado: yosys `synth_xilinx` on the core, then cell counts and
//! the critical path's logic depth in LUT levels, measured on the mapped netlist.
//!
//! Depth method: the flattened, mapped netlist is read back (yosys `write_blif`) and every
//! combinational path from a timing start point (top-level input, FF `Q`, block-RAM / URAM /
//! DSP / SRL output) to an end point (FF or RAM input, top-level output) is weighted by the
//! LUTs on it: `LUT1..LUT6`, `INV` and distributed-RAM read ports count one level each;
//! `MUXF7/8/9` and `CARRY4/8` count zero (they sit in the same slice as the LUT that feeds
//! them and add tens of picoseconds, not a LUT-plus-route delay). The longest such path is
//! the reported `depth`; the carry cells and wide muxes on it are listed separately.

use anyhow::{bail, Context, Result};
use fanin_hdl::{CoreConfig, RamStyle};
use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// The FPGA family handed to yosys `synth_xilinx -family`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Family {
    /// 7-series (NetFPGA SUME's Virtex-7).
    Xc7,
    /// UltraScale+ (Alveo U250/U280).
    Xcup,
}

impl Family {
    /// The yosys `-family` argument.
    pub fn yosys_name(self) -> &'static str {
        match self {
            Family::Xc7 => "xc7",
            Family::Xcup => "xcup",
        }
    }

    /// The family a configuration targets: `sume` (also with overrides, `sume+...`) is a
    /// Virtex-7, the rest (and any configuration with UltraRAM) UltraScale+.
    pub fn for_config(cfg: &CoreConfig) -> Family {
        let base = cfg.name.split('+').next().unwrap_or_default();
        if base == "sume" && cfg.slot_ram != RamStyle::Ultra {
            Family::Xc7
        } else {
            Family::Xcup
        }
    }

    /// Whether the family has UltraRAM (URAM288).
    pub fn has_uram(self) -> bool {
        self == Family::Xcup
    }

    /// Refuses a configuration that asks for a memory this family lacks.
    pub fn check(self, cfg: &CoreConfig) -> Result<()> {
        if cfg.slot_ram == RamStyle::Ultra && !self.has_uram() {
            bail!(
                "configuration {} puts the slot memory in UltraRAM (slot_ram = ultra), which \
                 family {} does not have; use --family xcup, or a configuration with slot_ram = block",
                cfg.name,
                self.yosys_name()
            );
        }
        Ok(())
    }

    /// Parses `xc7` / `xcup`.
    pub fn parse(s: &str) -> Result<Family> {
        match s {
            "xc7" => Ok(Family::Xc7),
            "xcup" => Ok(Family::Xcup),
            _ => bail!("unknown family '{s}': use xc7 (SUME) or xcup (Alveo)"),
        }
    }
}

/// Resource figures of one synthesised configuration.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Resources {
    /// Cell count per mapped cell type.
    pub cells: BTreeMap<String, u64>,
    /// LUTs (`LUT1..LUT6`; distributed RAM and SRLs are counted separately in `lutram`).
    pub lut: u64,
    /// LUTs used as memory (distributed RAM, SRL), in LUT equivalents.
    pub lutram: u64,
    /// Flip-flops.
    pub ff: u64,
    /// RAMB36 primitives.
    pub ramb36: u64,
    /// RAMB18 primitives.
    pub ramb18: u64,
    /// URAM288 primitives.
    pub uram: u64,
    /// DSP48 slices.
    pub dsp: u64,
    /// LUT levels on the critical path.
    pub depth: u32,
    /// Cell types along the critical path, start to end.
    pub path: Vec<String>,
    /// Net names at the critical path's start (a register/RAM output or input port) and end.
    pub path_nets: (String, String),
    /// Every net that ends a path of the critical depth (the critical path's end among
    /// them), sorted: what must change for the depth to drop.
    pub critical_ends: Vec<String>,
    /// The registers and ports (nets without their bit index) that start a path of the
    /// critical depth, with how many of their bits do, most bits first. ABC relaxes every
    /// path up to the critical depth to save area, so the ends are many; the starts name
    /// the blocks they are in.
    pub critical_starts: Vec<(String, usize)>,
    /// The second figure: paths from a RAM read and the widest fan-outs.
    pub second: SecondFigure,
}

/// What LUT depth alone does not show: how far block-RAM / URAM reads travel before a
/// register, and the nets with the most loads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SecondFigure {
    /// LUT levels of the deepest path from a block RAM / URAM data output (a read without
    /// an output register in front of the logic) to a register or output.
    pub ram_depth: u32,
    /// Cell types along that path, the RAM first.
    pub ram_path: Vec<String>,
    /// The RAM output net that starts it and the net that ends it.
    pub ram_nets: (String, String),
    /// RAM data-output bits read by combinational logic before any register.
    pub ram_bits_to_logic: u64,
    /// RAM data-output bits read only by registers (a registered read).
    pub ram_bits_to_reg: u64,
    /// The widest fan-outs: `(net, loads, driver cell type)`, most loads first; clock and
    /// constant nets excluded.
    pub fanouts: Vec<(String, u64, String)>,
}

/// How many of the widest fan-outs the report lists.
pub const FANOUTS_SHOWN: usize = 10;

impl Resources {
    /// Block RAM in 36 Kb equivalents: RAMB36 + RAMB18 / 2, rounded up.
    pub fn bram36(&self) -> u64 {
        self.ramb36 + self.ramb18.div_ceil(2)
    }

    /// The report's last line: `resources: LUT=.. FF=.. BRAM36=.. depth=..`.
    pub fn summary_line(&self) -> String {
        format!(
            "resources: LUT={} FF={} BRAM36={} depth={}",
            self.lut,
            self.ff,
            self.bram36(),
            self.depth
        )
    }

    /// The full human-readable report; its last line is [`Resources::summary_line`].
    pub fn render(&self, config: &str, family: Family) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "fanin-gen report: config {config}, yosys synth_xilinx -family {}",
            family.yosys_name()
        );
        let _ = writeln!(s, "  LUT      {:>8}", self.lut);
        let _ = writeln!(s, "  LUTRAM   {:>8}  (distributed RAM / SRL)", self.lutram);
        let _ = writeln!(s, "  FF       {:>8}", self.ff);
        let _ = writeln!(s, "  RAMB36   {:>8}", self.ramb36);
        let _ = writeln!(s, "  RAMB18   {:>8}", self.ramb18);
        let _ = writeln!(s, "  BRAM36   {:>8}  (RAMB36 + RAMB18/2)", self.bram36());
        if family == Family::Xcup {
            let _ = writeln!(s, "  URAM     {:>8}", self.uram);
        }
        let _ = writeln!(s, "  DSP      {:>8}", self.dsp);
        let carries = self.path.iter().filter(|t| t.starts_with("CARRY")).count();
        let muxes = self.path.iter().filter(|t| t.starts_with("MUXF")).count();
        let _ = writeln!(
            s,
            "  depth    {:>8}  LUT levels on the critical path ({carries} carry cells, {muxes} MUXF on it)",
            self.depth
        );
        let _ = writeln!(s, "  path: {}", self.path.join(" -> "));
        let _ = writeln!(s, "  from {} to {}", self.path_nets.0, self.path_nets.1);
        const SHOWN: usize = 12;
        let _ = writeln!(
            s,
            "  {} end points at depth {}{}",
            self.critical_ends.len(),
            self.depth,
            if self.critical_ends.len() > SHOWN {
                format!(" (first {SHOWN})")
            } else {
                String::new()
            }
        );
        for n in self.critical_ends.iter().take(SHOWN) {
            let _ = writeln!(s, "    {n}");
        }
        let _ = writeln!(
            s,
            "  {} registers and ports start them{}",
            self.critical_starts.len(),
            if self.critical_starts.len() > SHOWN {
                format!(" (the {SHOWN} with the most bits)")
            } else {
                String::new()
            }
        );
        for (n, k) in self.critical_starts.iter().take(SHOWN) {
            let _ = writeln!(s, "    {n} ({k} bit{})", if *k == 1 { "" } else { "s" });
        }
        let f = &self.second;
        let _ = writeln!(
            s,
            "  RAM read -> register: {} LUT levels at most ({} carry cells on it); {} RAM output bits feed logic before a register, {} go straight into one",
            f.ram_depth,
            f.ram_path.iter().filter(|t| t.starts_with("CARRY")).count(),
            f.ram_bits_to_logic,
            f.ram_bits_to_reg
        );
        if !f.ram_path.is_empty() {
            let _ = writeln!(s, "    path: {}", f.ram_path.join(" -> "));
            let _ = writeln!(s, "    from {} to {}", f.ram_nets.0, f.ram_nets.1);
        }
        let _ = writeln!(
            s,
            "  widest fan-outs (loads, driver; clocks and constants excluded):"
        );
        for (n, loads, ty) in &f.fanouts {
            let _ = writeln!(s, "    {loads:>6}  {n} ({ty})");
        }
        s.push_str(&self.summary_line());
        s.push('\n');
        s
    }
}

/// The yosys script: flattened, no I/O buffers (the core is not a chip top level).
pub fn yosys_script(family: Family, top: &str) -> String {
    let uram = if family == Family::Xcup { " -uram" } else { "" };
    format!(
        "read_verilog fanin_core.v; \
         synth_xilinx -top {top} -family {} -flatten -noiopad -noclkbuf{uram}; \
         tee -q -o stat.txt stat; write_blif -buf BUF I O mapped.blif",
        family.yosys_name()
    )
}

/// Writes the core of `cfg` into `dir`, synthesises it with yosys (killed after `timeout`)
/// and measures the mapped netlist.
pub fn run(cfg: &CoreConfig, family: Family, dir: &Path, timeout: Duration) -> Result<Resources> {
    run_with(cfg, family, dir, timeout, None)
}

/// Block-RAM memories of at least this many bits are what-if candidates for URAM (4 Mbit:
/// well past the point where a 288 Kb URAM beats eight 36 Kb block RAMs). Memories the
/// configuration already puts in URAM (`slot_ram = ultra`) are counted as they are.
pub const URAM_WHAT_IF_BITS: u64 = 4 << 20;

/// What-if: rewrites `(* ram_style = "block" *)` to `"ultra"` on memories of at least
/// `min_bits` bits in generated Verilog; returns the new text and how many were changed.
pub fn promote_to_uram(v: &str, min_bits: u64) -> (String, usize) {
    const ATTR: &str = "(* ram_style = \"block\" *) reg [";
    let mut n = 0;
    let mut out = String::with_capacity(v.len());
    for line in v.split_inclusive('\n') {
        let size = line.trim_start().strip_prefix(ATTR).and_then(|r| {
            let (hi, rest) = r.split_once(":0] mem [0:")?;
            let (last, _) = rest.split_once(']')?;
            Some((hi.trim().parse::<u64>().ok()? + 1) * (last.trim().parse::<u64>().ok()? + 1))
        });
        if size.is_some_and(|b| b >= min_bits) {
            n += 1;
            out.push_str(&line.replacen("\"block\"", "\"ultra\"", 1));
        } else {
            out.push_str(line);
        }
    }
    (out, n)
}

/// [`run`], optionally with memories of at least `uram_min_bits` bits moved to URAM.
pub fn run_with(
    cfg: &CoreConfig,
    family: Family,
    dir: &Path,
    timeout: Duration,
    uram_min_bits: Option<u64>,
) -> Result<Resources> {
    family.check(cfg)?;
    crate::write(cfg, dir)?;
    if let Some(min) = uram_min_bits {
        let p = dir.join("fanin_core.v");
        let (v, n) = promote_to_uram(&std::fs::read_to_string(&p)?, min);
        if n == 0 {
            bail!(
                "--uram-what-if: no block-RAM memory of {min} bits or more in {}",
                cfg.name
            );
        }
        std::fs::write(&p, v)?;
    }
    let stderr = std::fs::File::create(dir.join("yosys.stderr"))?;
    let mut child = Command::new("yosys")
        .args([
            "-q",
            "-l",
            "yosys.log",
            "-p",
            &yosys_script(family, "fanin_core"),
        ])
        .current_dir(dir)
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .context("running yosys (install it: cargo xtask setup, or apt-get install yosys)")?;
    let start = Instant::now();
    let status = loop {
        if let Some(st) = child.try_wait()? {
            break st;
        }
        if start.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!(
                "yosys did not finish within {} s on {}; raise --timeout",
                timeout.as_secs(),
                cfg.name
            );
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    if !status.success() {
        bail!(
            "yosys failed on {} ({status}); see {} and yosys.stderr (keep them with --out DIR)",
            cfg.name,
            dir.join("yosys.log").display()
        );
    }
    let blif = std::fs::read_to_string(dir.join("mapped.blif")).context("reading mapped.blif")?;
    analyse(&Netlist::from_blif(&blif, "fanin_core")?)
}

/// One mapped cell: type and `(port bit, net)` connections.
#[derive(Debug, Clone)]
struct Cell {
    ty: String,
    conns: Vec<(String, String)>,
}

/// The mapped netlist of one module, read from yosys `write_blif -buf BUF I O`.
#[derive(Debug, Clone, Default)]
pub struct Netlist {
    cells: Vec<Cell>,
}

impl Netlist {
    /// Parses the `.model top` section of a BLIF file written by yosys.
    pub fn from_blif(text: &str, top: &str) -> Result<Netlist> {
        let mut nl = Netlist::default();
        let mut in_top = false;
        let mut found = false;
        let mut pending = String::new();
        for raw in text.lines() {
            if let Some(cont) = raw.strip_suffix('\\') {
                pending.push_str(cont);
                pending.push(' ');
                continue;
            }
            pending.push_str(raw);
            let line = std::mem::take(&mut pending);
            let mut it = line.split_whitespace();
            match it.next() {
                Some(".model") => {
                    in_top = it.next() == Some(top);
                    found |= in_top;
                }
                Some(".subckt") if in_top => {
                    let ty = it
                        .next()
                        .context("BLIF .subckt without a type")?
                        .to_string();
                    let conns = it
                        .filter_map(|a| a.split_once('='))
                        .map(|(p, n)| (p.to_string(), n.to_string()))
                        .collect();
                    nl.cells.push(Cell { ty, conns });
                }
                _ => {}
            }
        }
        if !found {
            bail!("module {top} not in the netlist");
        }
        Ok(nl)
    }
}

/// Whether a port (bit) of a combinational cell is an output: `O`, `CO`, `DO*`, `SPO`, `DPO`.
fn is_output(port: &str) -> bool {
    let base = port.split('[').next().unwrap_or(port);
    base == "O" || base == "CO" || base.starts_with("DO") || base == "SPO" || base == "DPO"
}

/// How a cell type behaves for timing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// Combinational, with this many LUT levels.
    Comb(u32),
    /// Sequential: outputs start paths, inputs end them.
    Seq,
}

fn kind(ty: &str) -> Kind {
    if ty.starts_with("LUT") || ty == "INV" {
        Kind::Comb(1)
    } else if ty.starts_with("MUXF") || ty.starts_with("CARRY") || ty == "BUF" {
        Kind::Comb(0)
    } else if ty.starts_with("RAM32")
        || ty.starts_with("RAM64")
        || ty.starts_with("RAM128")
        || ty.starts_with("RAM256")
        || ty.starts_with("RAM16")
    {
        // Distributed RAM: the read port is a LUT read by address.
        Kind::Comb(1)
    } else {
        // FD*, RAMB*, URAM288, DSP48*, SRL*, I/O and clock buffers.
        Kind::Seq
    }
}

fn is_ff(ty: &str) -> bool {
    ty.starts_with("FD")
}

fn lutram_luts(ty: &str) -> u64 {
    match ty {
        "RAM32M" | "RAM64M" => 4,
        "RAM32M16" | "RAM64M8" => 8,
        "RAM32X1D" | "RAM64X1D" => 2,
        "RAM128X1D" => 4,
        "RAM256X1D" => 8,
        t if t.starts_with("RAM") && !t.starts_with("RAMB") => 1,
        t if t.starts_with("SRL") => 1,
        _ => 0,
    }
}

/// Counts cells and finds the deepest combinational path of a mapped netlist.
pub fn analyse(m: &Netlist) -> Result<Resources> {
    let mut r = Resources::default();
    for c in &m.cells {
        *r.cells.entry(c.ty.clone()).or_default() += 1;
        let t = c.ty.as_str();
        match t {
            _ if t.starts_with("LUT") => r.lut += 1,
            _ if is_ff(t) => r.ff += 1,
            _ if t.starts_with("RAMB36") => r.ramb36 += 1,
            _ if t.starts_with("RAMB18") => r.ramb18 += 1,
            _ if t.starts_with("URAM") => r.uram += 1,
            _ if t.starts_with("DSP") => r.dsp += 1,
            _ => r.lutram += lutram_luts(t),
        }
    }
    let (depth, path, nets, ends, starts) = critical_path(m)?;
    r.depth = depth;
    r.path = path;
    r.path_nets = nets;
    r.critical_ends = ends;
    r.critical_starts = starts;
    r.second = second_figure(m)?;
    Ok(r)
}

/// A block RAM or UltraRAM primitive (its data outputs start RAM-read paths).
fn is_block_ram(ty: &str) -> bool {
    ty.starts_with("RAMB") || ty.starts_with("URAM")
}

/// Whether a port (bit) is a clock input: `C`, `CLK*`, `CLKARDCLK`, ... .
fn is_clock_port(port: &str) -> bool {
    let base = port.split('[').next().unwrap_or(port);
    base == "C" || base.starts_with("CLK") || base.ends_with("CLK")
}

/// The RAM-read paths and the widest fan-outs of a mapped netlist.
fn second_figure(m: &Netlist) -> Result<SecondFigure> {
    let cells = &m.cells;
    let mut f = SecondFigure::default();
    // RAM data outputs: net -> RAM cell.
    let mut ram_out: HashMap<&str, usize> = HashMap::new();
    for (i, c) in cells.iter().enumerate() {
        if is_block_ram(&c.ty) {
            for (p, n) in &c.conns {
                if is_output(p) && !n.starts_with('$') {
                    ram_out.insert(n.as_str(), i);
                }
            }
        }
    }
    // Every net's readers (cell indices, one per input pin) and driver.
    let mut readers: HashMap<&str, Vec<usize>> = HashMap::new();
    let mut driver: HashMap<&str, usize> = HashMap::new();
    let mut clocks: std::collections::HashSet<&str> = Default::default();
    for (i, c) in cells.iter().enumerate() {
        for (p, n) in &c.conns {
            let out = match kind(&c.ty) {
                Kind::Comb(_) => is_output(p),
                Kind::Seq => is_output(p) || p.starts_with('Q') || p.starts_with("DOUT"),
            };
            if out {
                driver.insert(n.as_str(), i);
            } else {
                readers.entry(n.as_str()).or_default().push(i);
                if is_clock_port(p) {
                    clocks.insert(n.as_str());
                }
            }
        }
    }
    // (Through `BUF` cells: `write_blif -buf` writes one for every net alias, and a RAM
    // output often has one beside its register, to a name nothing reads.)
    for n in ram_out.keys() {
        let (mut logic, mut reg) = (false, false);
        let mut todo = vec![*n];
        let mut seen: std::collections::HashSet<&str> = Default::default();
        while let Some(net) = todo.pop() {
            if !seen.insert(net) {
                continue;
            }
            for &j in readers.get(net).map(Vec::as_slice).unwrap_or(&[]) {
                match kind(&cells[j].ty) {
                    _ if cells[j].ty == "BUF" => todo.extend(
                        cells[j]
                            .conns
                            .iter()
                            .filter(|(p, _)| is_output(p))
                            .map(|(_, o)| o.as_str()),
                    ),
                    Kind::Comb(_) => logic = true,
                    Kind::Seq => reg = true,
                }
            }
        }
        if logic {
            f.ram_bits_to_logic += 1;
        } else if reg {
            f.ram_bits_to_reg += 1;
        }
    }
    // Longest LUT-weighted path from a RAM output through combinational cells: a
    // breadth-first relaxation in topological order of the combinational cells reached.
    let comb = |i: usize| matches!(kind(&cells[i].ty), Kind::Comb(_));
    let mut level: HashMap<usize, (u32, Option<usize>, usize)> = HashMap::new();
    // Kahn's order over the combinational cells reachable from RAM outputs.
    let mut reach: std::collections::HashSet<usize> = Default::default();
    let mut stack: Vec<usize> = ram_out
        .keys()
        .flat_map(|n| readers.get(n).into_iter().flatten().copied())
        .filter(|&j| comb(j))
        .collect();
    while let Some(i) = stack.pop() {
        if reach.insert(i) {
            for (p, n) in &cells[i].conns {
                if is_output(p) {
                    stack.extend(
                        readers
                            .get(n.as_str())
                            .into_iter()
                            .flatten()
                            .copied()
                            .filter(|&j| comb(j)),
                    );
                }
            }
        }
    }
    let mut indeg: HashMap<usize, usize> = reach.iter().map(|&i| (i, 0)).collect();
    for &i in &reach {
        for (p, n) in &cells[i].conns {
            if !is_output(p) {
                if let Some(&d) = driver.get(n.as_str()) {
                    if reach.contains(&d) {
                        *indeg.get_mut(&i).unwrap() += 1;
                    }
                }
            }
        }
    }
    let mut ready: Vec<usize> = indeg
        .iter()
        .filter(|(_, &d)| d == 0)
        .map(|(&i, _)| i)
        .collect();
    ready.sort_unstable();
    let mut done = 0;
    while let Some(i) = ready.pop() {
        done += 1;
        // Arrival at i's inputs: 0 from a RAM output, the driver's level from a reached cell.
        let mut best: Option<(u32, Option<usize>, usize)> = None;
        for (p, n) in &cells[i].conns {
            if is_output(p) {
                continue;
            }
            let cand = if let Some(&r) = ram_out.get(n.as_str()) {
                Some((0, None, r))
            } else if let Some(&(l, _, r)) = driver.get(n.as_str()).and_then(|d| level.get(d)) {
                Some((l, driver.get(n.as_str()).copied(), r))
            } else {
                None
            };
            if let Some(c) = cand {
                if best.is_none_or(|b| c.0 > b.0) {
                    best = Some(c);
                }
            }
        }
        let Kind::Comb(w) = kind(&cells[i].ty) else {
            unreachable!()
        };
        if let Some((l, pred, ram)) = best {
            level.insert(i, (l + w, pred, ram));
        }
        for (p, n) in &cells[i].conns {
            if is_output(p) {
                for &j in readers.get(n.as_str()).into_iter().flatten() {
                    if let Some(d) = indeg.get_mut(&j) {
                        *d -= 1;
                        if *d == 0 {
                            ready.push(j);
                        }
                    }
                }
            }
        }
    }
    if done != reach.len() {
        bail!("combinational loop after a RAM read in the mapped netlist");
    }
    if let Some((&end, &(depth, _, ram))) = level
        .iter()
        .max_by_key(|(&i, &(l, _, _))| (l, std::cmp::Reverse(i)))
    {
        f.ram_depth = depth;
        let mut path = Vec::new();
        let mut cur = Some(end);
        let mut first = end;
        while let Some(i) = cur {
            path.push(cells[i].ty.clone());
            first = i;
            cur = level[&i].1;
        }
        path.push(cells[ram].ty.clone());
        path.reverse();
        f.ram_path = path;
        let start = cells[first]
            .conns
            .iter()
            .find(|(p, n)| !is_output(p) && ram_out.get(n.as_str()) == Some(&ram))
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        let stop = cells[end]
            .conns
            .iter()
            .find(|(p, _)| is_output(p))
            .map(|(_, n)| n.clone())
            .unwrap_or_default();
        f.ram_nets = (start, stop);
    }
    // Fan-out: input pins per net, clocks and constants excluded.
    let mut fo: Vec<(String, u64, String)> = readers
        .iter()
        .filter(|(n, _)| !n.starts_with('$') && !clocks.contains(*n))
        .map(|(n, r)| {
            let ty = driver
                .get(n)
                .map(|&d| cells[d].ty.clone())
                .unwrap_or_else(|| "input".into());
            (n.to_string(), r.len() as u64, ty)
        })
        .collect();
    fo.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    fo.truncate(FANOUTS_SHOWN);
    f.fanouts = fo;
    Ok(f)
}

/// Depth, the critical path's cell types, its start and end nets, every end at that depth,
/// and the start nets of the paths at that depth grouped by net (bit counts).
type CriticalPath = (
    u32,
    Vec<String>,
    (String, String),
    Vec<String>,
    Vec<(String, usize)>,
);

fn critical_path(m: &Netlist) -> Result<CriticalPath> {
    let cells: Vec<&Cell> = m.cells.iter().collect();
    // Driver of every net: the combinational cell driving it, if any.
    let mut driver: HashMap<&str, usize> = HashMap::new();
    for (i, c) in cells.iter().enumerate() {
        if let Kind::Comb(_) = kind(&c.ty) {
            for (p, n) in &c.conns {
                if is_output(p) {
                    driver.insert(n.as_str(), i);
                }
            }
        }
    }
    // Longest LUT-weighted arrival at the output of each combinational cell, iteratively.
    const UNSEEN: u32 = u32::MAX;
    const ACTIVE: u32 = u32::MAX - 1;
    let mut level = vec![UNSEEN; cells.len()];
    let mut pred: Vec<Option<usize>> = vec![None; cells.len()];
    let inputs = |i: usize| -> Vec<usize> {
        let c = cells[i];
        let mut v = Vec::new();
        for (p, n) in &c.conns {
            if !is_output(p) {
                v.extend(driver.get(n.as_str()).copied());
            }
        }
        v.sort_unstable();
        v.dedup();
        v
    };
    for root in 0..cells.len() {
        if level[root] != UNSEEN || !matches!(kind(&cells[root].ty), Kind::Comb(_)) {
            continue;
        }
        let mut stack = vec![(root, inputs(root), 0usize)];
        level[root] = ACTIVE;
        while let Some((i, ins, k)) = stack.last_mut() {
            if *k < ins.len() {
                let j = ins[*k];
                *k += 1;
                if level[j] == ACTIVE {
                    bail!(
                        "combinational loop through a {} cell in the mapped netlist",
                        cells[j].ty
                    );
                }
                if level[j] == UNSEEN {
                    level[j] = ACTIVE;
                    let ij = inputs(j);
                    stack.push((j, ij, 0));
                }
                continue;
            }
            let i = *i;
            let (best, arg) = ins
                .iter()
                .map(|&j| (level[j], Some(j)))
                .max_by_key(|x| x.0)
                .unwrap_or((0, None));
            let Kind::Comb(w) = kind(&cells[i].ty) else {
                unreachable!()
            };
            level[i] = best + w;
            pred[i] = arg;
            stack.pop();
        }
    }
    let Some((end, &depth)) = level
        .iter()
        .enumerate()
        .filter(|(i, _)| matches!(kind(&cells[*i].ty), Kind::Comb(_)))
        .max_by_key(|x| *x.1)
    else {
        return Ok((0, Vec::new(), Default::default(), Vec::new(), Vec::new()));
    };
    let mut path = Vec::new();
    let mut cur = Some(end);
    let mut first = end;
    while let Some(i) = cur {
        path.push(cells[i].ty.clone());
        first = i;
        cur = pred[i];
    }
    path.reverse();
    let end_net = cells[end]
        .conns
        .iter()
        .find(|(p, _)| is_output(p))
        .map(|(_, n)| n.clone())
        .unwrap_or_default();
    let start_net = cells[first]
        .conns
        .iter()
        .find(|(p, n)| !is_output(p) && !driver.contains_key(n.as_str()) && !n.starts_with('$'))
        .map(|(_, n)| n.clone())
        .unwrap_or_default();
    // The ends at the critical depth: outputs of combinational cells at that depth that no
    // combinational cell at that depth reads (a zero-weight cell after one is at it too).
    let at_depth = |i: usize| level[i] == depth && matches!(kind(&cells[i].ty), Kind::Comb(_));
    let read_at_depth: std::collections::HashSet<&str> = (0..cells.len())
        .filter(|&i| at_depth(i))
        .flat_map(|i| cells[i].conns.iter())
        .filter(|(p, _)| !is_output(p))
        .map(|(_, n)| n.as_str())
        .collect();
    let mut ends: Vec<String> = (0..cells.len())
        .filter(|&i| at_depth(i))
        .flat_map(|i| cells[i].conns.iter())
        .filter(|(p, n)| is_output(p) && !read_at_depth.contains(n.as_str()))
        .map(|(_, n)| n.clone())
        .collect();
    ends.sort();
    ends.dedup();
    // The starts: walk back from every cell at the critical depth through the inputs that
    // arrive at its level less its own weight; an input no combinational cell drives is a
    // start when the cell's whole level is its own weight.
    let weight = |i: usize| match kind(&cells[i].ty) {
        Kind::Comb(w) => w,
        _ => 0,
    };
    let mut seen = vec![false; cells.len()];
    let mut stack: Vec<usize> = (0..cells.len()).filter(|&i| at_depth(i)).collect();
    for &i in &stack {
        seen[i] = true;
    }
    let mut start_bits: std::collections::BTreeSet<&str> = Default::default();
    while let Some(i) = stack.pop() {
        let before = level[i] - weight(i);
        for (p, n) in &cells[i].conns {
            if is_output(p) {
                continue;
            }
            match driver.get(n.as_str()) {
                Some(&j) => {
                    if level[j] == before && !seen[j] {
                        seen[j] = true;
                        stack.push(j);
                    }
                }
                None => {
                    if before == 0 && !n.starts_with('$') {
                        start_bits.insert(n.as_str());
                    }
                }
            }
        }
    }
    let mut by_net: HashMap<&str, usize> = HashMap::new();
    for b in start_bits {
        let base = b.rsplit_once('[').map_or(b, |(h, _)| h);
        *by_net.entry(base).or_default() += 1;
    }
    let mut starts: Vec<(String, usize)> = by_net
        .into_iter()
        .map(|(n, k)| (n.to_string(), k))
        .collect();
    starts.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    Ok((depth, path, (start_net, end_net), ends, starts))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// FF -> LUT2 -> MUXF7 -> LUT3 -> FF beside a 1-LUT side path, a buffer, and a RAMB36.
    const BLIF: &str = "\
.model other
.subckt LUT1 I0=a O=b
.end
.model top
.inputs a
.outputs q
.subckt FDRE C=clk CE=$true D=a Q=n3 R=$false
.subckt LUT2 I0=n3 I1=a O=n4
.subckt LUT1 I0=n3 O=n5
.subckt MUXF7 I0=n4 I1=n3 S=a O=n6
.subckt BUF I=n6 O=n6b
.subckt LUT3 I0=n6b I1=$false \\
 I2=a O=n7
.subckt FDRE C=clk CE=$true D=n7 Q=n8 R=$false
.subckt CARRY4 CI=$false CO[0]=c0 CO[1]=c1 CO[2]=c2 CO[3]=c3 CYINIT=$false DI[0]=n8 O[0]=q S[0]=n8
.subckt RAMB36E2 DINADIN[0]=n8 DOUTADOUT[0]=n9
.end
";

    #[test]
    fn depth_counts_luts_not_muxes_or_carries() {
        let nl = Netlist::from_blif(BLIF, "top").unwrap();
        let r = analyse(&nl).unwrap();
        assert_eq!(r.depth, 2);
        assert_eq!(r.lut, 3);
        assert_eq!(r.ff, 2);
        assert_eq!(r.ramb36, 1);
        assert_eq!(r.bram36(), 1);
        assert_eq!(
            r.path,
            ["LUT2", "MUXF7", "BUF", "LUT3"].map(String::from).to_vec()
        );
        assert_eq!(r.summary_line(), "resources: LUT=3 FF=2 BRAM36=1 depth=2");
        assert_eq!(r.path_nets, ("n3".to_string(), "n7".to_string()));
        assert_eq!(r.critical_ends, vec!["n7".to_string()]);
        assert!(r
            .render("x", Family::Xcup)
            .ends_with("resources: LUT=3 FF=2 BRAM36=1 depth=2\n"));
    }

    #[test]
    fn every_end_at_the_critical_depth_is_listed() {
        // Two 2-LUT paths (one through a MUXF7, which adds no level) and a 1-LUT path.
        let b = ".model top\n\
                 .subckt FDRE C=clk D=z Q=r R=$false\n\
                 .subckt LUT1 I0=r O=a1\n.subckt LUT1 I0=a1 O=a2\n\
                 .subckt LUT1 I0=r O=b1\n.subckt LUT2 I0=b1 I1=r O=b2\n\
                 .subckt MUXF7 I0=b2 I1=r S=r O=b3\n\
                 .subckt LUT1 I0=r O=c1\n\
                 .subckt FDRE C=clk D=a2 Q=x R=$false\n\
                 .subckt FDRE C=clk D=b3 Q=y R=$false\n\
                 .subckt FDRE C=clk D=c1 Q=z R=$false\n.end\n";
        let r = analyse(&Netlist::from_blif(b, "top").unwrap()).unwrap();
        assert_eq!(r.depth, 2);
        assert_eq!(r.critical_ends, vec!["a2".to_string(), "b3".to_string()]);
        assert!(r
            .render("t", Family::Xcup)
            .contains("2 end points at depth 2\n    a2\n    b3\n"));
        // Both start at `r` (the 1-LUT path from it is not critical).
        assert_eq!(r.critical_starts, vec![("r".to_string(), 1)]);
        assert!(r
            .render("t", Family::Xcup)
            .contains("1 registers and ports start them\n    r (1 bit)\n"));
    }

    #[test]
    fn the_starts_of_the_critical_paths_are_grouped_by_net() {
        // `s[0]`, `s[1]` and `t[0]` start 2-LUT paths; `u` joins one at its second LUT
        // (a 1-LUT path of its own, not critical).
        let b = ".model top\n\
                 .subckt FDRE C=clk D=z Q=s[0] R=$false\n\
                 .subckt FDRE C=clk D=z Q=s[1] R=$false\n\
                 .subckt FDRE C=clk D=z Q=t[0] R=$false\n\
                 .subckt FDRE C=clk D=z Q=u R=$false\n\
                 .subckt LUT1 I0=s[0] O=a1\n.subckt LUT2 I0=a1 I1=u O=a2\n\
                 .subckt LUT1 I0=s[1] O=b1\n.subckt LUT1 I0=b1 O=b2\n\
                 .subckt LUT1 I0=t[0] O=c1\n.subckt LUT1 I0=c1 O=c2\n\
                 .subckt FDRE C=clk D=a2 Q=x R=$false\n\
                 .subckt FDRE C=clk D=b2 Q=y R=$false\n\
                 .subckt FDRE C=clk D=c2 Q=z R=$false\n.end\n";
        let r = analyse(&Netlist::from_blif(b, "top").unwrap()).unwrap();
        assert_eq!(r.depth, 2);
        assert_eq!(
            r.critical_starts,
            vec![("s".to_string(), 2), ("t".to_string(), 1)]
        );
        assert!(r
            .render("t", Family::Xcup)
            .contains("2 registers and ports start them\n    s (2 bits)\n    t (1 bit)\n"));
    }

    #[test]
    fn second_figure_ram_paths_and_fanouts() {
        // A RAMB36's bit 0 feeds LUT1 -> CARRY4 -> LUT2 -> FF (2 LUT levels), bit 1 a FF
        // directly (and a BUF to an alias nothing reads), bit 2 nothing; the FF q fans out to 4 LUTs; the clock (7 loads) and the
        // constants are not fan-outs.
        let b = ".model top\n\
                 .subckt RAMB36E2 CLKARDCLK=clk DOUTADOUT[0]=r0 DOUTADOUT[1]=r1 DOUTADOUT[2]=r2 ADDRARDADDR[0]=q\n\
                 .subckt LUT1 I0=r0 O=a1\n\
                 .subckt CARRY4 CI=$false S[0]=a1 DI[0]=q CO[3]=a2 CYINIT=$false\n\
                 .subckt LUT2 I0=a2 I1=q O=a3\n\
                 .subckt FDRE C=clk D=a3 Q=q R=$false CE=$true\n\
                 .subckt FDRE C=clk D=r1 Q=x R=$false CE=$true\n\
                 .subckt BUF I=r1 O=r1alias\n\
                 .subckt LUT1 I0=q O=b1\n\
                 .subckt FDRE C=clk D=b1 Q=y R=$false CE=$true\n\
                 .subckt FDRE C=clk D=x Q=z R=$false CE=$true\n\
                 .subckt FDRE C=clk D=y Q=w R=$false CE=$true\n\
                 .subckt FDRE C=clk D=z Q=v R=$false CE=$true\n.end\n";
        let r = analyse(&Netlist::from_blif(b, "top").unwrap()).unwrap();
        let f = &r.second;
        assert_eq!(f.ram_depth, 2);
        assert_eq!(
            f.ram_path,
            ["RAMB36E2", "LUT1", "CARRY4", "LUT2"]
                .map(String::from)
                .to_vec()
        );
        assert_eq!(f.ram_nets, ("r0".to_string(), "a3".to_string()));
        assert_eq!((f.ram_bits_to_logic, f.ram_bits_to_reg), (1, 1));
        assert_eq!(f.fanouts[0], ("q".to_string(), 4, "FDRE".to_string()));
        assert!(f
            .fanouts
            .iter()
            .all(|(n, _, _)| n != "clk" && !n.starts_with('$')));
        let text = r.render("t", Family::Xcup);
        assert!(
            text.contains("RAM read -> register: 2 LUT levels at most (1 carry cells on it); 1 RAM output bits feed logic before a register, 1 go straight into one\n    path: RAMB36E2 -> LUT1 -> CARRY4 -> LUT2\n    from r0 to a3\n"),
            "{text}"
        );
        assert!(text.contains("\n         4  q (FDRE)\n"), "{text}");
        // Without RAM: depth 0, no path.
        let r = analyse(
            &Netlist::from_blif(
                BLIF.replace(".subckt RAMB36E2 DINADIN[0]=n8 DOUTADOUT[0]=n9\n", "")
                    .as_str(),
                "top",
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!((r.second.ram_depth, r.second.ram_path.len()), (0, 0));
    }

    #[test]
    fn combinational_loop_is_an_error() {
        let b = ".model top\n.subckt LUT1 I0=y O=x\n.subckt LUT1 I0=x O=y\n.end\n";
        let nl = Netlist::from_blif(b, "top").unwrap();
        assert!(analyse(&nl).unwrap_err().to_string().contains("loop"));
    }

    #[test]
    fn uram_what_if_rewrites_only_large_memories() {
        let v = "x\n    (* ram_style = \"block\" *) reg [1023:0] mem [0:65535];\n\
                 (* ram_style = \"block\" *) reg [63:0] mem [0:31];\n";
        let (out, n) = promote_to_uram(v, URAM_WHAT_IF_BITS);
        assert_eq!(n, 1);
        assert!(out.contains("(* ram_style = \"ultra\" *) reg [1023:0] mem [0:65535];"));
        assert!(out.contains("(* ram_style = \"block\" *) reg [63:0] mem [0:31];"));
        assert_eq!(out.len(), v.len());
    }

    #[test]
    fn missing_top_is_an_error() {
        assert!(Netlist::from_blif(BLIF, "nope").is_err());
    }

    #[test]
    fn bram36_rounds_ramb18_pairs_up() {
        let r = Resources {
            ramb36: 4,
            ramb18: 3,
            ..Default::default()
        };
        assert_eq!(r.bram36(), 6);
    }
}
