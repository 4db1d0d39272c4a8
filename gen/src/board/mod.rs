//! Board build directories: `fanin-gen --board sume|au250|au280 --out DIR`.
//!
//! A build directory holds the generated core, a generated board wrapper `fpga_<board>.v`
//! (clocks, resets and MAC/PCS IP only, after corundum's `fpga_core` / `fpga_<board>` split),
//! the hand-written board RTL `fanin_board.v` (from `gen/rtl/`: the RX frame-drop FIFOs, the
//! board register window and, on SUME, the Si5324 initialiser), the board's XDC files from
//! `constraints/<board>/` plus the generated `constraints/fanin_board.xdc`, vendor IP as Tcl
//! (`ip/*.tcl`, never `.xci`), a non-project Vivado script `build.tcl` and a README.

use crate::report::Family;
use anyhow::{bail, Context, Result};
use fanin_hdl::{CoreConfig, RamStyle};
pub use fanin_regs::board as window;
use fanin_regs::board::BoardKind;
use std::fmt::Write as _;
use std::path::Path;

mod macs;
mod si5324;
pub mod sim;
mod tcl;
mod wrapper;

pub use si5324::{
    i2c_rom, si5324_init_rtl, I2cWrite, PCA9548_ADDR, SI5324_ADDR, SI5324_INIT, SI5324_LOL_BIT,
    SI5324_STATUS_REG,
};
pub use tcl::{
    build_tcl, build_tcl_with, ip_tcl, ip_tcl_with, pinned_version, CHECK_TIMING_GATED, ILA_DEPTH,
    PINNED_IP, VIVADO_VERSION,
};
pub use wrapper::{dbg_ports, wrapper, wrapper_with};

/// A supported FPGA board.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Board {
    /// NetFPGA SUME: Virtex-7 690T, 4 × SFP+ (10GBASE-R).
    Sume,
    /// Alveo U250: Virtex UltraScale+ VU13P, 2 × QSFP28 (100G CMAC).
    Au250,
    /// Alveo U280: Virtex UltraScale+ VU37P (HBM), 2 × QSFP28 (100G CMAC).
    Au280,
}

/// The board's XDC files: `(file name, contents)`, embedded from `constraints/<board>/`.
type Files = &'static [(&'static str, &'static str)];

const SUME_XDC: Files = &[
    (
        "clocks.xdc",
        include_str!("../../../constraints/sume/clocks.xdc"),
    ),
    ("sfp.xdc", include_str!("../../../constraints/sume/sfp.xdc")),
    ("i2c.xdc", include_str!("../../../constraints/sume/i2c.xdc")),
    (
        "leds.xdc",
        include_str!("../../../constraints/sume/leds.xdc"),
    ),
    (
        "config.xdc",
        include_str!("../../../constraints/sume/config.xdc"),
    ),
];
const AU250_XDC: Files = &[
    (
        "clocks.xdc",
        include_str!("../../../constraints/au250/clocks.xdc"),
    ),
    (
        "qsfp.xdc",
        include_str!("../../../constraints/au250/qsfp.xdc"),
    ),
    (
        "gpio.xdc",
        include_str!("../../../constraints/au250/gpio.xdc"),
    ),
    (
        "pcie.xdc",
        include_str!("../../../constraints/au250/pcie.xdc"),
    ),
    (
        "config.xdc",
        include_str!("../../../constraints/au250/config.xdc"),
    ),
];
const AU280_XDC: Files = &[
    (
        "clocks.xdc",
        include_str!("../../../constraints/au280/clocks.xdc"),
    ),
    (
        "qsfp.xdc",
        include_str!("../../../constraints/au280/qsfp.xdc"),
    ),
    (
        "gpio.xdc",
        include_str!("../../../constraints/au280/gpio.xdc"),
    ),
    (
        "pcie.xdc",
        include_str!("../../../constraints/au280/pcie.xdc"),
    ),
    (
        "config.xdc",
        include_str!("../../../constraints/au280/config.xdc"),
    ),
];

impl Board {
    /// Every supported board.
    pub const ALL: [Board; 3] = [Board::Sume, Board::Au250, Board::Au280];

    /// Looks a board up by its command-line name.
    pub fn parse(s: &str) -> Result<Board> {
        Board::ALL
            .into_iter()
            .find(|b| b.name() == s)
            .with_context(|| format!("unknown board '{s}'; known: sume, au250, au280"))
    }

    /// Command-line and directory name.
    pub fn name(self) -> &'static str {
        match self {
            Board::Sume => "sume",
            Board::Au250 => "au250",
            Board::Au280 => "au280",
        }
    }

    /// The Vivado part.
    pub fn part(self) -> &'static str {
        match self {
            Board::Sume => "xc7vx690tffg1761-3",
            Board::Au250 => "xcu250-figd2104-2L-e",
            Board::Au280 => "xcu280-fsvh2892-2L-e",
        }
    }

    /// The named core configuration built for this board by default.
    pub fn config_name(self) -> &'static str {
        match self {
            Board::Sume => "sume",
            Board::Au250 | Board::Au280 => "alveo",
        }
    }

    /// The board as the register window's information word names it.
    pub fn kind(self) -> BoardKind {
        match self {
            Board::Sume => BoardKind::Sume,
            Board::Au250 => BoardKind::Au250,
            Board::Au280 => BoardKind::Au280,
        }
    }

    /// Top module of the board wrapper.
    pub fn top(self) -> String {
        format!("fpga_{}", self.name())
    }

    /// Number of Ethernet ports (MACs) and their AXI-Stream width.
    pub fn macs(self) -> (u8, u32) {
        match self {
            Board::Sume => (4, 64),
            Board::Au250 | Board::Au280 => (2, 512),
        }
    }

    /// Frequency of the board oscillator that feeds the core MMCM, MHz.
    fn sysclk_mhz(self) -> f64 {
        match self {
            Board::Sume => 200.0,
            Board::Au250 => 300.0,
            Board::Au280 => 100.0,
        }
    }

    /// The board's XDC files.
    pub fn constraints(self) -> Files {
        match self {
            Board::Sume => SUME_XDC,
            Board::Au250 => AU250_XDC,
            Board::Au280 => AU280_XDC,
        }
    }

    /// The board's configuration flash, for `write_cfgmem`.
    pub fn flash(self) -> Flash {
        match self {
            // Two BPI x16 parallel NOR flashes on the board; the image goes at 0 of the
            // first (32 MB), as corundum's NetFPGA SUME flash target writes it.
            Board::Sume => Flash {
                interface: "BPIx16",
                size_mb: 32,
                address: 0,
            },
            // One 1 Gbit SPI flash (MT25QU01G) read x4; the card's factory (golden) image
            // sits at 0 and boots the user image at 0x01002000, where corundum writes its own.
            Board::Au250 | Board::Au280 => Flash {
                interface: "SPIx4",
                size_mb: 128,
                address: 0x0100_2000,
            },
        }
    }

    /// The FPGA family of the board's part.
    pub fn family(self) -> Family {
        match self {
            Board::Sume => Family::Xc7,
            Board::Au250 | Board::Au280 => Family::Xcup,
        }
    }

    /// Refuses a configuration whose ports do not match the board's MACs, or that asks for
    /// a memory the board's FPGA lacks (UltraRAM on the Virtex-7 of SUME).
    pub fn check(self, cfg: &CoreConfig) -> Result<()> {
        if cfg.slot_ram == RamStyle::Ultra && !self.family().has_uram() {
            bail!(
                "configuration {} puts the slot memory in UltraRAM (slot_ram = ultra), but board {} \
                 ({}) is 7-series and has none; use --config {}",
                cfg.name,
                self.name(),
                self.part(),
                self.config_name()
            );
        }
        let (n, w) = self.macs();
        if cfg.ports != n || cfg.data_w != w {
            bail!(
                "configuration {} has {} ports × {} bit, but board {} has {n} MACs × {w} bit; use --config {}",
                cfg.name,
                cfg.ports,
                cfg.data_w,
                self.name(),
                self.config_name()
            );
        }
        Ok(())
    }

    /// Every file of the build directory: `(relative path, contents)`.
    pub fn files(self, cfg: &CoreConfig) -> Result<Vec<(String, String)>> {
        self.files_with(cfg, &Options::default())
    }

    /// Every file of the build directory with build options: `(relative path, contents)`.
    pub fn files_with(self, cfg: &CoreConfig, opts: &Options) -> Result<Vec<(String, String)>> {
        self.check(cfg)?;
        let mut v = crate::outputs(cfg)?;
        v.push((format!("{}.v", self.top()), wrapper_with(self, cfg, opts)));
        v.push((BOARD_RTL.into(), board_rtl(self, cfg)?));
        for (n, t) in self.constraints() {
            v.push((format!("constraints/{n}"), t.to_string()));
        }
        v.push(("constraints/fanin_board.xdc".into(), board_xdc(self, cfg)));
        v.push(("constraints/fanin_debug.xdc".into(), debug_xdc(self)));
        if let Some(x) = floorplan_xdc(self, cfg) {
            v.push(("constraints/fanin_floorplan.xdc".into(), x));
        }
        for (n, t) in ip_tcl_with(self, cfg, opts) {
            v.push((format!("ip/{n}"), t));
        }
        v.push(("build.tcl".into(), build_tcl_with(self, cfg, opts)));
        v.push(("README.md".into(), readme(self, cfg, opts)));
        Ok(v)
    }
}

/// Build options of a board directory beyond the configuration (`fanin-gen` flags).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// `--ila`: an ILA on the core's `dbg_*` monitor port (in the wrapper) and one on the
    /// engine's state registers (inserted into the netlist by build.tcl). Off by default.
    pub ila: bool,
}

/// The engine's state registers the `--ila` build probes: instance paths below
/// `fanin_core_impl` (instance `core` of `fanin_core`) whose output `q` is the register:
/// the front end's state (`core/front.rs`), the decision stages' (`xstate`, in the engine,
/// `core/mod.rs`), the back end's (`core/back.rs`) and DSEL's action (`core/dsel.rs`).
pub const ILA_STATE_REGS: &[&str] = &["front/state", "xstate", "back/bstate", "dsel/act"];

/// A board's configuration flash as `write_cfgmem` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flash {
    /// `write_cfgmem -interface`.
    pub interface: &'static str,
    /// `write_cfgmem -size`, in MB.
    pub size_mb: u32,
    /// Byte address of the bitstream in the flash (`-loadbit "up ADDRESS ..."`).
    pub address: u32,
}

/// Writes the build directory of `board` with configuration `cfg` into `dir`.
pub fn write(board: Board, cfg: &CoreConfig, dir: &Path) -> Result<()> {
    write_with(board, cfg, dir, &Options::default())
}

/// Writes the build directory of `board` with configuration `cfg` and options into `dir`.
pub fn write_with(board: Board, cfg: &CoreConfig, dir: &Path, opts: &Options) -> Result<()> {
    for (name, text) in board.files_with(cfg, opts)? {
        let p = dir.join(name);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent)
                .with_context(|| format!("creating {}", parent.display()))?;
        }
        std::fs::write(&p, text).with_context(|| format!("writing {}", p.display()))?;
    }
    Ok(())
}

/// Core clock period in ns for a configuration.
pub fn core_period_ns(cfg: &CoreConfig) -> f64 {
    1000.0 / cfg.clock_mhz as f64
}

/// The MAC's AXI-Stream clock period in ns: the 10G subsystem's 156.25 MHz `coreclk`, the
/// CMAC's 322.265625 MHz `gt_txusrclk2`.
pub fn mac_period_ns(board: Board) -> f64 {
    match board {
        Board::Sume => 1000.0 / 156.25,
        Board::Au250 | Board::Au280 => 1000.0 / 322.265625,
    }
}

/// The frequency of `init_clk` (the MMCM's second output), MHz: the MAC/PCS IP's free-running
/// clock, the JTAG-to-AXI master's and the debug hub's (a hub clock must be free running and
/// at most 100 MHz: UG908, "Debug Core Clocks").
pub const INIT_CLK_MHZ: u32 = 100;

/// `constraints/fanin_debug.xdc`: the debug hub (`dbg_hub`, which Vivado inserts for the
/// JTAG-to-AXI master and the ILA) on `init_clk`. build.tcl reads it for implementation only
/// (the hub exists from `opt_design` on).
pub fn debug_xdc(board: Board) -> String {
    format!(
        "# fanin: debug hub clock (generated). Part: {part}.\n\
         # Source: Vivado UG908, \"Debug Core Clocks\": the hub's clock must be free running,\n\
         # stable and at most 100 MHz. init_clk is the MMCM's {mhz} MHz output (ip/clk_core.tcl),\n\
         # the JTAG-to-AXI master's clock; core_clk (the ILA's) is faster. Implementation only.\n\
         set_property C_CLK_INPUT_FREQ_HZ {hz} [get_debug_cores dbg_hub]\n\
         set_property C_ENABLE_CLK_DIVIDER false [get_debug_cores dbg_hub]\n\
         set_property C_USER_SCAN_CHAIN 1 [get_debug_cores dbg_hub]\n\
         connect_debug_port dbg_hub/clk [get_nets init_clk]\n",
        part = board.part(),
        mhz = INIT_CLK_MHZ,
        hz = u64::from(INIT_CLK_MHZ) * 1_000_000,
    )
}

/// File name of the hand-written board RTL in a build directory.
pub const BOARD_RTL: &str = "fanin_board.v";

/// Depth (beats) of port RX FIFOs: at least 512, and two maximum frames.
pub fn rx_fifo_depth(cfg: &CoreConfig) -> u32 {
    let beats = cfg.max_frame.div_ceil(cfg.data_w / 8);
    (2 * beats).next_power_of_two().max(512)
}

/// The hand-written board RTL (`fanin_board.v`): the RX frame-drop FIFO and the register
/// window for every board, the Si5324 initialiser (with its ROM) for SUME.
pub fn board_rtl(board: Board, cfg: &CoreConfig) -> Result<String> {
    let mut s = header(board, cfg, "//");
    s.push_str(
        "// Hand-written board RTL from gen/rtl/ (Verilog-2001).\n\
         /* verilator lint_off DECLFILENAME */\n`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n",
    );
    s.push_str(include_str!("../../rtl/fanin_rx_fifo.v"));
    s.push('\n');
    s.push_str(include_str!("../../rtl/fanin_board_regs.v"));
    s.push('\n');
    s.push_str(include_str!("../../rtl/fanin_mac_stats.v"));
    if board.kind().is_cmac() {
        s.push('\n');
        s.push_str(include_str!("../../rtl/fanin_axil_arb.v"));
    }
    if board == Board::Sume {
        s.push('\n');
        s.push_str(&si5324_init_rtl(SI5324_INIT)?);
    }
    s.push_str("\n`resetall\n");
    Ok(s)
}

/// `constraints/fanin_board.xdc`: timing exceptions for the clock-domain crossings of
/// `fanin_board.v` (generated: the delays follow the board's clocks).
pub fn board_xdc(board: Board, cfg: &CoreConfig) -> String {
    let maxd = core_period_ns(cfg).min(mac_period_ns(board));
    let cells = |pat: &str| format!("[get_cells -hierarchical -filter {{NAME =~ {pat}}}]");
    let mut t = format!(
        "# fanin: clock-domain crossings of fanin_board.v (generated). Part: {part}.\n\
         # Source: fanin-gen, from the CDC structure of gen/rtl/*.v (no pins). Delays: the\n\
         # shorter of core_clk ({core:.3} ns) and the MAC clock ({mac:.3} ns).\n\n\
         # RX FIFOs: Gray read pointer into the write domain; req/ack toggles; the committed\n\
         # pointer and drop count held stable by the handshake while the read side samples them.\n",
        part = board.part(),
        core = core_period_ns(cfg),
        mac = mac_period_ns(board),
    );
    for (from, to) in [
        ("*rx_fifo_*/rd_gray_reg*", "*rx_fifo_*/rd_gray_cdc1_reg*"),
        ("*rx_fifo_*/wr_req_reg*", "*rx_fifo_*/rd_req_cdc1_reg*"),
        ("*rx_fifo_*/rd_ack_reg*", "*rx_fifo_*/wr_ack_cdc1_reg*"),
        ("*rx_fifo_*/wr_hold_ptr_reg*", "*rx_fifo_*/rd_commit_reg*"),
        ("*rx_fifo_*/wr_hold_drops_reg*", "*rx_fifo_*/rd_drops_reg*"),
    ] {
        let _ = writeln!(
            t,
            "set_max_delay -datapath_only -from {} -to {} {maxd:.3}",
            cells(from),
            cells(to)
        );
    }
    let _ = writeln!(
        t,
        "# Reset synchronisers: asserted asynchronously from either domain.\n\
         set_false_path -to [get_pins -of_objects {} -filter {{IS_PRESET || IS_RESET}}]\n\
         # Board status bits: slow levels into a two-flop synchroniser.\n\
         set_false_path -to {}\n\
         set_false_path -to {}",
        cells("*rx_fifo_*/*_rst_sync_reg*"),
        cells("*board_regs_inst/status_cdc1_reg*"),
        cells("*board_regs_inst/link_cdc1_reg*")
    );
    let _ = writeln!(
        t,
        "# MAC statistics (fanin_mac_stats): req/ack toggles into two-flop synchronisers; the\n\
         # held counters are stable while the core side copies them.\n\
         set_max_delay -datapath_only -from {} -to {} {maxd:.3}\n\
         set_max_delay -datapath_only -from {} -to {} {maxd:.3}\n\
         set_max_delay -datapath_only -from {} -to {} {maxd:.3}",
        cells("*mac_stats_*/req_reg*"),
        cells("*mac_stats_*/req_cdc1_reg*"),
        cells("*mac_stats_*/ack_reg*"),
        cells("*mac_stats_*/ack_cdc1_reg*"),
        cells("*mac_stats_*/hold_reg*"),
        cells("*mac_stats_*/m_count_reg*"),
    );
    if board.kind().is_cmac() {
        let _ = writeln!(
            t,
            "# RS-FEC enables: a register bit into a two-flop synchroniser per CMAC clock.\n\
             set_false_path -to {}",
            cells("*_rsfec_cdc1_reg*")
        );
    }
    t
}

/// The SLR that holds the board's QSFP CMACs (and their GT quads), if the part has SLRs
/// fanin floorplans: SLR2 on both Alveo cards (U250: CMACE4_X0Y7/X0Y8, GTY X1Y40-47; U280:
/// CMACE4_X0Y6/X0Y7, GTY X0Y40-47; clock-region rows 8-11).
pub fn mac_slr(board: Board) -> Option<&'static str> {
    match board {
        Board::Sume => None,
        Board::Au250 | Board::Au280 => Some("SLR2"),
    }
}

/// The wrapper's instances (top-level cells) that the floorplan puts in the CMACs' SLR: the
/// core, each port's RX FIFO, TX FIFO and MAC statistics crossing (the CMACs' user side),
/// the register split and the control arbiter (both on `core_clk`, next to the core).
pub fn floorplan_cells(board: Board, cfg: &CoreConfig) -> Vec<String> {
    if mac_slr(board).is_none() {
        return Vec::new();
    }
    let mut v = vec!["core_inst".to_string()];
    for p in 0..cfg.ports {
        v.extend([
            format!("rx_fifo_{p}"),
            format!("tx_fifo_{p}"),
            format!("mac_stats_{p}"),
        ]);
    }
    v.extend(["board_regs_inst".into(), "ctl_arb_inst".into()]);
    v
}

/// `constraints/fanin_floorplan.xdc` (Alveo): a pblock that keeps the core and the CMACs'
/// user-side logic in the SLR of the CMACs, so that no 512-bit stream crosses an SLR.
pub fn floorplan_xdc(board: Board, cfg: &CoreConfig) -> Option<String> {
    let slr = mac_slr(board)?;
    let cells = floorplan_cells(board, cfg);
    let mut t = format!(
        "# fanin: SLR floorplan (generated). Part: {part}.\n\
         # Source: fanin-gen; the CMAC sites and GT quads of ip/cmac_qsfp*.tcl (from the board's\n\
         # QSFP28 placement, cross-checked with corundum's fpga/mqnic/{corundum}) lie in {slr}.\n\
         # The core and everything on its streams to the CMACs (RX/TX clock-crossing FIFOs, MAC\n\
         # statistics crossings) and its control slave (register split, arbiter) go in {slr}: no\n\
         # 512-bit bus crosses an SLR boundary at {mhz} MHz. The PCIe block (XDMA) and its\n\
         # clock converter stay where Vivado places them.\n\
         create_pblock pblock_fanin_core\n",
        part = board.part(),
        corundum = if board == Board::Au250 {
            "AU250"
        } else {
            "AU280"
        },
        mhz = cfg.clock_mhz,
    );
    let _ = writeln!(
        t,
        "add_cells_to_pblock [get_pblocks pblock_fanin_core] [get_cells [list {}]]",
        cells.join(" ")
    );
    let _ = writeln!(
        t,
        "resize_pblock [get_pblocks pblock_fanin_core] -add {{{slr}}}"
    );
    Some(t)
}

fn header(board: Board, cfg: &CoreConfig, comment: &str) -> String {
    format!(
        "{comment} Generated by fanin-gen for board {} ({}), configuration '{}'. Do not edit.\n\
         {comment} Regenerate: cargo run -p fanin-gen -- --board {} --out DIR\n",
        board.name(),
        board.part(),
        cfg.name,
        board.name()
    )
}

/// The build directory's README.
pub fn readme(board: Board, cfg: &CoreConfig, opts: &Options) -> String {
    let mut ip: Vec<String> = ip_tcl_with(board, cfg, opts)
        .into_iter()
        .map(|(n, _)| n)
        .collect();
    ip.sort();
    let refclk = if board == Board::Sume {
        "\n## SFP+ reference clock\n\n\
         The Si5324 that makes the 156.25 MHz SFP+ reference clock is programmed over I2C \
         after every reset by `fanin_si5324_init` (in `fanin_board.v`; register values from \
         the NetFPGA SUME reference designs, see docs/boards.md); the 10G subsystems stay \
         in reset until it is done (about 1 s). Board status bit 0 (address 0x10040) shows \
         it done, bit 1 that the Si5324 never acknowledged, bit 2 the QPLL lock (also LED 1), \
         bit 3 the Si5324's alarm pin. Afterwards it reads the Si5324's loss of lock \
         (register 130, LOL_INT) every 100 ms: bit 6 says the last read was acknowledged, \
         bit 5 is its LOL_INT (1: not locked).\n"
    } else {
        ""
    };
    let leds = match board {
        Board::Sume => "LEDs: `sfp_led[p]` port p's PCS block lock; `led[0]` MMCM locked, `led[1]` QPLL locked.",
        Board::Au250 => "LEDs: `led[0]` MMCM locked, `led[1]`/`led[2]` QSFP0/QSFP1 CMAC aligned.",
        Board::Au280 => "The U280 has no user LEDs: link state is only in the board window (`fanin hw status`).",
    };
    let mut regs = String::new();
    for p in 0..cfg.ports {
        let _ = write!(
            regs,
            "`0x{:05x}` port {p}, ",
            window::BASE + window::RX_DROPS + 4 * p as u32
        );
    }
    let fl = board.flash();
    let flash = format!(
        "{}, {} MB, at {:#010x}",
        fl.interface, fl.size_mb, fl.address
    );
    format!(
        "# fanin for {name} ({part}), configuration `{cfg}`\n\n\
         Generated by `cargo run -p fanin-gen -- --board {name} --out DIR`. Do not edit; regenerate.\n\n\
         ## Build\n\n\
         ```\nvivado -mode batch -source build.tcl\n```\n\n\
         Needs Vivado with the {ipnote} IP licence. Writes `out/timing_summary.rpt`, \
         `out/utilization*.rpt`, `out/check_timing.rpt`, `out/cdc.rpt`, `out/methodology.rpt`, \
         checkpoints, and, only when timing is met and the design checks pass, `out/{top}.bit` \
         and its flash image `out/{top}.mcs` ({flash}); exits 1 on a timing failure, 3 on a \
         failed design check (check_timing, a Critical CDC, a Critical Warning methodology rule).\n\n\
         ## Files\n\n\
         * `fanin_core.v`: the switch core (generated from `hdl/`), `manifest.json`, `fanin_regs.h`.\n\
         * `{top}.v`: board wrapper: clocks, resets, MAC/PCS IP, clock-crossing FIFOs, {ctl}.\n\
         * `fanin_board.v`: hand-written board RTL: the RX FIFOs that drop whole frames when \
         full, the register split{si}.\n\
         * `constraints/*.xdc`: pins and clocks (core_clk target {mhz} MHz); \
         `constraints/fanin_board.xdc`: the clock-domain crossings of `fanin_board.v`.\n\
         * `ip/*.tcl`: vendor IP, created at build time: {ips}.\n\
         * `build.tcl`: the non-project Vivado flow.\n\n\
         ## Control\n\n\
         {ctlnote}The AXI-Lite register port (`fanin_regs.h`) is also driven by a JTAG-to-AXI master: after \
         programming, in the Vivado hardware manager, e.g. \
         `create_hw_axi_txn rd [get_hw_axis hw_axi_1] -type read -address 0x0 -len 1; run_hw_axi rd`.\n\n\
         Addresses from `0x{base:05x}` are the board window (`fanin hw status` prints it by \
         name): frames an RX FIFO dropped whole because the core fell behind (32 bits, \
         wrapping): {regs}the status word at `0x{status:05x}`, the RS-FEC register at \
         `0x{fec:05x}` ({fecnote}), the board information word at `0x{info:05x}`, and per port \
         `p` from `0x{ports:05x} + 0x{stride:x}·p` the link status and the MAC's 64-bit \
         rx_frames, tx_frames and rx_bad_fcs counters (docs/boards.md, \"Board register window\").\n\n\
         {leds}\n{refclk}{ila}\n\
         See docs/boards.md in the fanin repository for the design choices and known limits.\n",
        ila = if opts.ila {
            "\n## Debug (--ila)\n\n\
             `ila_core_inst` samples the core's `dbg_*` monitor port and `u_ila_state` (inserted \
             by build.tcl) the engine's state registers, both at core_clk; open them in the \
             hardware manager with `out/debug_probes.ltx`. The debug hub runs on the 100 MHz \
             init_clk. This directory was generated with `--ila`: regenerate with it too.\n"
        } else {
            ""
        },
        name = board.name(),
        part = board.part(),
        flash = flash,
        cfg = cfg.name,
        top = board.top(),
        mhz = cfg.clock_mhz,
        ips = ip.join(", "),
        base = window::BASE,
        status = window::BASE + window::STATUS,
        fec = window::BASE + window::RSFEC,
        info = window::BASE + window::INFO,
        ports = window::BASE + window::PORTS_BASE,
        stride = window::PORT_STRIDE,
        fecnote = if board.kind().is_cmac() {
            "bit p: RS-FEC on port p, writable, on after reset"
        } else {
            "reads 0: no RS-FEC at 10G"
        },
        leds = leds,
        ctl = if board.kind().is_cmac() {
            "XDMA (PCIe BAR0) and JTAG-to-AXI"
        } else {
            "JTAG-to-AXI"
        },
        ctlnote = if board.kind().is_cmac() {
            "PCIe: XDMA's AXI-Lite master is BAR0 (1 MiB: the core at 0, the board window at \
             0x10000); `fanin hw program|status|verify --device BDF` use it. "
        } else {
            ""
        },
        si = if board == Board::Sume {
            ", the Si5324 I2C initialiser"
        } else {
            ""
        },
        ipnote = if board == Board::Sume {
            "10G Ethernet Subsystem (axi_10g_ethernet)"
        } else {
            "UltraScale+ 100G Ethernet (cmac_usplus, no-charge)"
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rx_fifo_holds_two_maximum_frames() {
        let mut cfg = CoreConfig::by_name("sume").unwrap();
        assert_eq!(rx_fifo_depth(&cfg), 512);
        cfg.max_frame = 9600;
        assert_eq!(rx_fifo_depth(&cfg), 4096);
        assert_eq!(rx_fifo_depth(&CoreConfig::by_name("alveo").unwrap()), 512);
    }
}
