//! `fanin hw`: program and read a fanin FPGA switch through its AXI4-Lite register window,
//! either a PCIe BAR mapped from sysfs (`/sys/bus/pci/devices/BDF/resourceN`) or, for
//! JTAG-to-AXI, a Vivado hw_server Tcl script of the same write sequence. Everything comes
//! from `fanin-regs` (no rust-hdl): the write sequence is [`fanin_regs::switch_writes`], the
//! testbench scoreboard programs the Verilated core with it too, and the core's parameters
//! are read from its information registers ([`RegMap::core_from_info`]). The board window
//! above the core (link status, MAC statistics, RS-FEC: [`fanin_regs::board`]) is read by
//! `status` and written by `rsfec`.

use std::fmt::Write as _;
use std::fs::OpenOptions;
use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use fanin_proto::config::SwitchConfig;
use fanin_regs::board::{self as window, BoardKind};
use fanin_regs::{Access, CoreConfig, RegMap};

use crate::error::input_error;

/// `fanin hw`: an FPGA switch's registers.
#[derive(Debug, Args)]
pub struct HwArgs {
    #[command(subcommand)]
    pub cmd: HwCmd,
}

/// The `fanin hw` subcommands.
#[derive(Debug, Subcommand)]
pub enum HwCmd {
    /// Write a switch configuration (identity, forwarding table, job table) into a card.
    Program(ProgramArgs),
    /// Read a card's identity, parameters, counters and busy copies, and its board window:
    /// link state, RS-FEC and MAC statistics per port.
    Status(StatusArgs),
    /// Turn RS-FEC on or off on one port of an Alveo card (the board window's RS-FEC
    /// register; on after reset).
    Rsfec(RsfecArgs),
    /// Read every table of a card back and compare it with a switch configuration (exit
    /// status 1 and one line per differing field if they differ).
    Verify(VerifyArgs),
}

/// Where the core's registers are.
#[derive(Debug, Clone, Args)]
pub struct Target {
    /// PCI device (domain:bus:device.function, e.g. 0000:3b:00.0) whose BAR holds the core's
    /// registers.
    #[arg(long, value_name = "BDF", conflicts_with = "bar_file")]
    pub device: Option<String>,
    /// BAR of --device that holds the registers.
    #[arg(long, default_value_t = 0, value_name = "N")]
    pub bar: u8,
    /// A file to map instead of a PCI BAR (a sysfs resource file, a UIO map, or a test file).
    #[arg(long, value_name = "FILE")]
    pub bar_file: Option<PathBuf>,
    /// Byte offset of the core's registers in the BAR.
    #[arg(long, default_value = "0", value_parser = parse_u32, value_name = "OFFSET")]
    pub base: u32,
}

/// `fanin hw program`.
#[derive(Debug, Clone, Args)]
pub struct ProgramArgs {
    /// Switch configuration (SwitchConfig JSON, as `fanin place --emit-config` writes).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    #[command(flatten)]
    pub target: Target,
    /// Print the write sequence instead of writing it.
    #[arg(long, conflicts_with_all = ["device", "bar_file", "tcl"])]
    pub dry_run: bool,
    /// With --dry-run: print the sequence as JSON.
    #[arg(long, requires = "dry_run")]
    pub json: bool,
    /// Write the sequence as a Vivado hw_server Tcl script (JTAG-to-AXI) to FILE (- for
    /// standard output).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["device", "bar_file"])]
    pub tcl: Option<PathBuf>,
    /// With --dry-run or --tcl: the core configuration to check against (a name or spec, as
    /// fanin-gen takes; a card's is read from its registers).
    #[arg(long, default_value = "default", value_name = "SPEC")]
    pub core: String,
}

/// `fanin hw status`.
#[derive(Debug, Clone, Args)]
pub struct StatusArgs {
    #[command(flatten)]
    pub target: Target,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
    /// Read the core only, not the board window above it (a core without a board wrapper).
    #[arg(long)]
    pub no_board: bool,
}

/// RS-FEC setting of `fanin hw rsfec`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OnOff {
    /// RS-FEC on (the reset value).
    On,
    /// RS-FEC off.
    Off,
}

/// `fanin hw rsfec`.
#[derive(Debug, Clone, Args)]
pub struct RsfecArgs {
    #[command(flatten)]
    pub target: Target,
    /// The port.
    #[arg(long)]
    pub port: u32,
    /// on or off.
    #[arg(value_enum)]
    pub state: OnOff,
}

/// `fanin hw verify`.
#[derive(Debug, Clone, Args)]
pub struct VerifyArgs {
    /// Switch configuration (SwitchConfig JSON, as `fanin place --emit-config` writes).
    #[arg(long, value_name = "FILE")]
    pub config: PathBuf,
    #[command(flatten)]
    pub target: Target,
}

fn parse_u32(s: &str) -> Result<u32, String> {
    let r = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u32::from_str_radix(h, 16),
        None => s.parse(),
    };
    r.map_err(|_| format!("`{s}` is not a 32-bit number (decimal or 0x hex)"))
}

/// Runs `fanin hw`.
pub fn run(a: &HwArgs) -> Result<()> {
    match &a.cmd {
        HwCmd::Program(p) => program(p),
        HwCmd::Status(s) => status(s),
        HwCmd::Rsfec(r) => rsfec(r),
        HwCmd::Verify(v) => verify(v),
    }
}

/// A register window as the bus of `fanin_regs::verify`.
struct VerifyBus<'a>(&'a mut dyn Registers);

impl fanin_regs::verify::Bus for VerifyBus<'_> {
    fn read(&mut self, addr: u32) -> Result<u32, String> {
        self.0.read(addr).map_err(|e| format!("{e:#}"))
    }
    fn write(&mut self, addr: u32, value: u32) -> Result<(), String> {
        self.0.write(addr, value).map_err(|e| format!("{e:#}"))
    }
}

fn verify(a: &VerifyArgs) -> Result<()> {
    let cfg = load_config(&a.config)?;
    let mut bar = open_target(&a.target)?;
    let name = bar.name.clone();
    let core = read_core(&mut bar, &name)?;
    let diff = fanin_regs::verify::verify(&cfg, &core, &mut VerifyBus(&mut bar))
        .map_err(|e| input_error(format!("{name}: {e}")))?;
    if diff.is_empty() {
        println!(
            "{name}: every table row of {} reads back as the configuration ({} routes, {} jobs)",
            a.config.display(),
            cfg.routes.len(),
            cfg.jobs.len()
        );
        return Ok(());
    }
    for m in &diff {
        println!("{name}: {m}");
    }
    bail!(
        "{name}: {} field(s) differ from {}",
        diff.len(),
        a.config.display()
    )
}

/// A register window: 32-bit reads and writes at byte addresses of the core.
pub trait Registers {
    /// Reads the register at `addr`.
    fn read(&mut self, addr: u32) -> Result<u32>;
    /// Writes `value` to the register at `addr`.
    fn write(&mut self, addr: u32, value: u32) -> Result<()>;
}

/// A BAR (or any register file) mapped into memory.
pub struct MappedBar {
    ptr: *mut u8,
    len: usize,
    base: usize,
    name: String,
}

impl MappedBar {
    /// Maps `path` read-write and shared; the core's registers start at `base`.
    pub fn open(path: &Path, base: u32, name: &str) -> Result<Self> {
        use std::os::unix::io::AsRawFd;
        let f = OpenOptions::new()
            .read(true)
            .write(true)
            .open(path)
            .map_err(|e| input_error(format!("cannot open {}: {e}", path.display())))?;
        let len = f.metadata()?.len() as usize;
        // The core's registers span 4 KiB (docs/registers.md).
        if len < base as usize + 4 * 1024 {
            bail!(input_error(format!(
                "{} is {len} bytes: too small for the core's registers at offset 0x{base:x}",
                path.display()
            )));
        }
        // SAFETY: a fresh shared mapping of an open file; the pointer is only used through
        // bounds-checked volatile accesses below and unmapped on drop.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            bail!(
                "cannot map {}: {}",
                path.display(),
                std::io::Error::last_os_error()
            );
        }
        Ok(Self {
            ptr: ptr.cast(),
            len,
            base: base as usize,
            name: name.into(),
        })
    }

    /// Whether the mapping holds the `len` bytes from register address `addr`.
    pub fn covers(&self, addr: u32, len: u32) -> bool {
        self.base + addr as usize + len as usize <= self.len
    }

    /// Bytes mapped.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether nothing is mapped (never: `open` refuses a file too small for the core).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    fn at(&self, addr: u32) -> Result<*mut u32> {
        let off = self.base + addr as usize;
        if addr % 4 != 0 || off + 4 > self.len {
            bail!(
                "{}: register 0x{addr:x} is outside the {}-byte BAR",
                self.name,
                self.len
            );
        }
        // SAFETY: off + 4 <= len, and off is 4-aligned (the mapping is page-aligned).
        Ok(unsafe { self.ptr.add(off) }.cast())
    }
}

impl Registers for MappedBar {
    fn read(&mut self, addr: u32) -> Result<u32> {
        let p = self.at(addr)?;
        // SAFETY: in bounds and aligned (`at`); MMIO needs a volatile access.
        Ok(unsafe { p.read_volatile() })
    }
    fn write(&mut self, addr: u32, value: u32) -> Result<()> {
        let p = self.at(addr)?;
        // SAFETY: as in `read`.
        unsafe { p.write_volatile(value) };
        Ok(())
    }
}

impl Drop for MappedBar {
    fn drop(&mut self) {
        // SAFETY: ptr/len are the mapping made in `open`.
        unsafe { libc::munmap(self.ptr.cast(), self.len) };
    }
}

/// Opens the target's register window: `--bar-file`, or `--device`'s sysfs resource file.
fn open_target(t: &Target) -> Result<MappedBar> {
    let (path, name) = match (&t.device, &t.bar_file) {
        (_, Some(f)) => (f.clone(), f.display().to_string()),
        (Some(d), None) => {
            let dir = Path::new("/sys/bus/pci/devices").join(d);
            if !dir.exists() {
                bail!(input_error(format!(
                    "no PCI device {d} ({} does not exist; `lspci -D` lists the devices)",
                    dir.display()
                )));
            }
            (dir.join(format!("resource{}", t.bar)), d.clone())
        }
        (None, None) => bail!(input_error(
            "say where the card is: --device BDF (or --bar-file FILE)"
        )),
    };
    MappedBar::open(&path, t.base, &name)
}

/// The core configuration a register window describes.
fn read_core(r: &mut dyn Registers, name: &str) -> Result<CoreConfig> {
    let info = (0..11).map(|i| r.read(4 * i)).collect::<Result<Vec<_>>>()?;
    RegMap::core_from_info(name, &info).map_err(input_error)
}

fn load_config(path: &Path) -> Result<SwitchConfig> {
    let t = std::fs::read_to_string(path)
        .map_err(|e| input_error(format!("cannot read {}: {e}", path.display())))?;
    let cfg: SwitchConfig = serde_json::from_str(&t).map_err(|e| {
        input_error(format!(
            "{} is not a switch configuration: {e}",
            path.display()
        ))
    })?;
    cfg.validate()
        .map_err(|e| input_error(format!("{}: {e}", path.display())))?;
    Ok(cfg)
}

/// Register names by address, for the printed sequences.
fn names(core: &CoreConfig) -> std::collections::HashMap<u32, String> {
    RegMap::new(core)
        .regs
        .into_iter()
        .filter(|r| r.access != Access::RO)
        .map(|r| (r.addr, r.name))
        .collect()
}

/// One write of a printed sequence.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Write {
    /// Byte address in the core's window.
    pub addr: u32,
    /// Value written.
    pub value: u32,
    /// Register name.
    pub name: String,
}

fn program(a: &ProgramArgs) -> Result<()> {
    let cfg = load_config(&a.config)?;
    if a.dry_run || a.tcl.is_some() {
        let core = CoreConfig::by_name(&a.core)
            .and_then(|c| c.validate().map(|_| c))
            .map_err(|e| input_error(format!("--core: {e}")))?;
        let writes = fanin_regs::switch_writes(&cfg, &core).map_err(input_error)?;
        let names = names(&core);
        let seq: Vec<Write> = writes
            .iter()
            .map(|&(addr, value)| Write {
                addr,
                value,
                name: names.get(&addr).cloned().unwrap_or_default(),
            })
            .collect();
        if let Some(path) = &a.tcl {
            let script = tcl(&cfg, &core, &seq);
            if path.as_os_str() == "-" {
                print!("{script}");
            } else {
                std::fs::write(path, script)
                    .with_context(|| format!("writing {}", path.display()))?;
                eprintln!(
                    "wrote {} ({} register writes for switch {} on core {})",
                    path.display(),
                    seq.len(),
                    cfg.name,
                    core.name
                );
            }
        } else if a.json {
            println!("{}", serde_json::to_string_pretty(&seq)?);
        } else {
            let mut out = std::io::stdout().lock();
            for w in &seq {
                writeln!(out, "0x{:04x} 0x{:08x} {}", w.addr, w.value, w.name)?;
            }
        }
        return Ok(());
    }
    let mut bar = open_target(&a.target)?;
    let name = bar.name.clone();
    let core = read_core(&mut bar, &name)?;
    // Everything is checked before the first write: a configuration that does not fit
    // leaves the card as it was.
    let writes = fanin_regs::switch_writes(&cfg, &core).map_err(input_error)?;
    for &(addr, value) in &writes {
        bar.write(addr, value)?;
    }
    for (addr, want) in fanin_regs::identity_writes(cfg.ip, cfg.udp_port, cfg.mac) {
        let got = bar.read(addr)?;
        if got != want {
            bail!("{name}: register 0x{addr:x} reads 0x{got:08x} after writing 0x{want:08x}: the card did not take the configuration");
        }
    }
    println!(
        "programmed switch {} into {name} ({} ports, {} slots, {} lanes): {} job(s), {} route(s), {} register writes; identity read back",
        cfg.name,
        core.ports,
        core.slots,
        core.lanes,
        cfg.jobs.len(),
        cfg.routes.len(),
        writes.len()
    );
    Ok(())
}

/// The write sequence as a Vivado hardware-manager script for the board's JTAG-to-AXI
/// master: it checks register 0 first, so a wrong bitstream or target gets no writes.
pub fn tcl(cfg: &SwitchConfig, core: &CoreConfig, seq: &[Write]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "# fanin hw program --tcl: switch {} on core {}, {} register writes.\n\
         # In Vivado's hardware manager with the fanin bitstream loaded (open_hw_manager;\n\
         # connect_hw_server; open_hw_target), run: source this file.",
        cfg.name,
        core.name,
        seq.len()
    );
    let _ = writeln!(
        s,
        "set fanin_axi [lindex [get_hw_axis] 0]\n\
         if {{$fanin_axi eq \"\"}} {{ error \"no JTAG-to-AXI master: is the fanin bitstream loaded?\" }}\n\
         proc fanin_rd {{addr}} {{\n\
         \x20   set t [create_hw_axi_txn -force fanin_rd $::fanin_axi -type read -address $addr -len 1]\n\
         \x20   run_hw_axi -quiet $t\n\
         \x20   return [get_property DATA $t]\n\
         }}\n\
         proc fanin_wr {{addr data}} {{\n\
         \x20   set t [create_hw_axi_txn -force fanin_wr $::fanin_axi -type write -address $addr -data $data -len 1]\n\
         \x20   run_hw_axi -quiet $t\n\
         }}\n\
         set fanin_id [fanin_rd 00000000]\n\
         if {{[string tolower $fanin_id] ne \"{:08x}\"}} {{ error \"register 0 reads $fanin_id, not {:08x} (FANI): not a fanin core\" }}",
        fanin_regs::ID_VALUE,
        fanin_regs::ID_VALUE
    );
    for w in seq {
        let _ = writeln!(s, "fanin_wr {:08x} {:08x} ;# {}", w.addr, w.value, w.name);
    }
    let _ = writeln!(s, "puts \"fanin: programmed switch {}\"", cfg.name);
    s
}

/// One register read by `fanin hw status`.
#[derive(Debug, Clone, serde::Serialize)]
struct Reading {
    name: String,
    value: u64,
}

fn status(a: &StatusArgs) -> Result<()> {
    let mut bar = open_target(&a.target)?;
    let name = bar.name.clone();
    let core = read_core(&mut bar, &name)?;
    let map = RegMap::new(&core);
    let mut out = Vec::new();
    let mut regs = map
        .regs
        .iter()
        .filter(|r| r.access != Access::WO)
        .peekable();
    while let Some(r) = regs.next() {
        // 64-bit counters are two words.
        if let Some(stem) = r.name.strip_suffix("_lo") {
            let hi_name = format!("{stem}_hi");
            if regs.peek().is_some_and(|h| h.name == hi_name) {
                let h = regs.next().expect("peeked");
                out.push(Reading {
                    name: stem.into(),
                    value: read64(&mut bar, r.addr, h.addr)?,
                });
                continue;
            }
        }
        out.push(Reading {
            name: r.name.clone(),
            value: bar.read(r.addr)? as u64,
        });
    }
    // The board window, when the mapping reaches it.
    let board = if a.no_board {
        None
    } else if bar.covers(window::BASE, window::SIZE) {
        Some(read_board(&mut bar, &name, &mut out)?)
    } else {
        None
    };
    if a.json {
        println!("{}", serde_json::to_string_pretty(&out)?);
        return Ok(());
    }
    println!(
        "{name}: fanin core, {} ports, {} slots",
        core.ports, core.slots
    );
    let mut lines = out.iter().peekable();
    for r in lines.by_ref() {
        if r.name == "board_info" {
            break;
        }
        match r.name.as_str() {
            "me_ip" => println!("{:24} {}", r.name, std::net::Ipv4Addr::from(r.value as u32)),
            "id" => println!("{:24} 0x{:08x}", r.name, r.value),
            _ => println!("{:24} {}", r.name, r.value),
        }
    }
    let Some(kind) = board else {
        if !a.no_board {
            println!(
                "board window: not read (the mapping is {} bytes; the window is at 0x{:x}..0x{:x})",
                bar.len(),
                bar.base + window::BASE as usize,
                bar.base + (window::BASE + window::SIZE) as usize
            );
        }
        return Ok(());
    };
    println!("board {}", kind.name());
    for r in lines {
        let v = r.value as u32;
        if r.name == "board_status" {
            println!(
                "{:24} {}",
                r.name,
                bits_text(&kind.status_bits(), v, "none")
            );
        } else if r.name == "rsfec" {
            continue;
        } else if let Some(p) = r
            .name
            .strip_suffix("_link")
            .and_then(|x| x.strip_prefix("port"))
        {
            let up = kind
                .link_bits()
                .iter()
                .any(|b| b.name == "up" && v >> b.bit & 1 == 1);
            let rest: Vec<&str> = window::set_names(kind.link_bits(), v)
                .into_iter()
                .filter(|n| *n != "up")
                .collect();
            let detail = if rest.is_empty() {
                String::new()
            } else {
                format!(" ({})", rest.join(", "))
            };
            println!("{:24} {}{detail}", r.name, if up { "up" } else { "down" });
            if kind.is_cmac() {
                let fec = out
                    .iter()
                    .find(|x| x.name == "rsfec")
                    .map_or(0, |x| x.value);
                let on = p.parse::<u32>().is_ok_and(|p| fec >> p & 1 == 1);
                println!(
                    "{:24} {}",
                    format!("port{p}_rsfec"),
                    if on { "on" } else { "off" }
                );
            }
        } else {
            println!("{:24} {}", r.name, r.value);
        }
    }
    Ok(())
}

/// Reads a 64-bit counter of two words: high, low, high, again if the high word moved.
fn read64(r: &mut dyn Registers, lo: u32, hi: u32) -> Result<u64> {
    for _ in 0..16 {
        let h = r.read(hi)?;
        let l = r.read(lo)?;
        if r.read(hi)? == h {
            return Ok((h as u64) << 32 | l as u64);
        }
    }
    bail!("the 64-bit counter at 0x{lo:x} kept changing its high word over 16 reads")
}

/// `names` of the bits set in `v`, or `none`.
fn bits_text(bits: &[window::Bit], v: u32, none: &str) -> String {
    let n = window::set_names(bits, v);
    if n.is_empty() {
        none.to_string()
    } else {
        n.join(", ")
    }
}

/// The board window's information word, checked: which board, how many ports.
fn board_info(r: &mut dyn Registers, name: &str) -> Result<(BoardKind, u32)> {
    let info = r.read(window::BASE + window::INFO)?;
    window::decode_info(info).map_err(|e| {
        input_error(format!(
            "{name}: board window at 0x{:x}: {e} (--no-board reads the core alone)",
            window::BASE
        ))
    })
}

/// Reads the board window into `out`: information, status, RS-FEC (CMAC boards), then per
/// port its link word, its MAC counters and its RX FIFO drops.
fn read_board(r: &mut dyn Registers, name: &str, out: &mut Vec<Reading>) -> Result<BoardKind> {
    let (kind, ports) = board_info(r, name)?;
    let word = |r: &mut dyn Registers, n: String, off: u32| -> Result<Reading> {
        Ok(Reading {
            name: n,
            value: r.read(window::BASE + off)? as u64,
        })
    };
    out.push(word(r, "board_info".into(), window::INFO)?);
    out.push(word(r, "board_status".into(), window::STATUS)?);
    if kind.is_cmac() {
        out.push(word(r, "rsfec".into(), window::RSFEC)?);
    }
    for p in 0..ports {
        out.push(word(
            r,
            format!("port{p}_link"),
            window::port_reg(p, window::PORT_LINK),
        )?);
        for (k, (counter, _)) in window::COUNTERS.iter().enumerate() {
            let lo = window::BASE + window::counter_reg(p, k);
            out.push(Reading {
                name: format!("port{p}_{counter}"),
                value: read64(r, lo, lo + 4)?,
            });
        }
        out.push(word(
            r,
            format!("port{p}_rx_drops"),
            window::RX_DROPS + 4 * p,
        )?);
    }
    Ok(kind)
}

fn rsfec(a: &RsfecArgs) -> Result<()> {
    let mut bar = open_target(&a.target)?;
    let name = bar.name.clone();
    // The card must be a fanin core with a board window of a CMAC board.
    read_core(&mut bar, &name)?;
    if !bar.covers(window::BASE, window::SIZE) {
        bail!(input_error(format!(
            "{name}: the mapping ({} bytes) does not reach the board window at 0x{:x}",
            bar.len(),
            window::BASE
        )));
    }
    let (kind, ports) = board_info(&mut bar, &name)?;
    if !kind.is_cmac() {
        bail!(input_error(format!(
            "{name}: board {} has no RS-FEC (10G ports)",
            kind.name()
        )));
    }
    if a.port >= ports {
        bail!(input_error(format!(
            "{name}: --port {}: board {} has ports 0..{}",
            a.port,
            kind.name(),
            ports - 1
        )));
    }
    let addr = window::BASE + window::RSFEC;
    let old = bar.read(addr)?;
    let bit = 1u32 << a.port;
    let new = if a.state == OnOff::On {
        old | bit
    } else {
        old & !bit
    };
    bar.write(addr, new)?;
    let got = bar.read(addr)?;
    if got & bit != new & bit {
        bail!(
            "{name}: RS-FEC register reads 0x{got:08x} after writing 0x{new:08x}: the card did not take it"
        );
    }
    println!(
        "{name}: RS-FEC {} on port {} (register 0x{got:08x}); the peer must match (docs/boards.md)",
        if a.state == OnOff::On { "on" } else { "off" },
        a.port
    );
    Ok(())
}
