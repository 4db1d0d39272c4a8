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
        include_str!("../../constraints/sume/clocks.xdc"),
    ),
    ("sfp.xdc", include_str!("../../constraints/sume/sfp.xdc")),
    ("i2c.xdc", include_str!("../../constraints/sume/i2c.xdc")),
    ("leds.xdc", include_str!("../../constraints/sume/leds.xdc")),
    (
        "config.xdc",
        include_str!("../../constraints/sume/config.xdc"),
    ),
];
const AU250_XDC: Files = &[
    (
        "clocks.xdc",
        include_str!("../../constraints/au250/clocks.xdc"),
    ),
    ("qsfp.xdc", include_str!("../../constraints/au250/qsfp.xdc")),
    ("gpio.xdc", include_str!("../../constraints/au250/gpio.xdc")),
    (
        "config.xdc",
        include_str!("../../constraints/au250/config.xdc"),
    ),
];
const AU280_XDC: Files = &[
    (
        "clocks.xdc",
        include_str!("../../constraints/au280/clocks.xdc"),
    ),
    ("qsfp.xdc", include_str!("../../constraints/au280/qsfp.xdc")),
    ("gpio.xdc", include_str!("../../constraints/au280/gpio.xdc")),
    (
        "config.xdc",
        include_str!("../../constraints/au280/config.xdc"),
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
        self.check(cfg)?;
        let mut v = crate::outputs(cfg)?;
        v.push((format!("{}.v", self.top()), wrapper(self, cfg)));
        v.push((BOARD_RTL.into(), board_rtl(self, cfg)?));
        for (n, t) in self.constraints() {
            v.push((format!("constraints/{n}"), t.to_string()));
        }
        v.push(("constraints/fanin_board.xdc".into(), board_xdc(self, cfg)));
        for (n, t) in ip_tcl(self, cfg) {
            v.push((format!("ip/{n}"), t));
        }
        v.push(("build.tcl".into(), build_tcl(self, cfg)));
        v.push(("README.md".into(), readme(self, cfg)));
        Ok(v)
    }
}

/// Writes the build directory of `board` with configuration `cfg` into `dir`.
pub fn write(board: Board, cfg: &CoreConfig, dir: &Path) -> Result<()> {
    for (name, text) in board.files(cfg)? {
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

/// File name of the hand-written board RTL in a build directory.
pub const BOARD_RTL: &str = "fanin_board.v";

/// Depth (beats) of port RX FIFOs: at least 512, and two maximum frames.
pub fn rx_fifo_depth(cfg: &CoreConfig) -> u32 {
    let beats = cfg.max_frame.div_ceil(cfg.data_w / 8);
    (2 * beats).next_power_of_two().max(512)
}

/// One I²C write of the Si5324 set-up: 7-bit device address and the bytes after the
/// address byte (for the Si5324 the first is the register, auto-incremented after each).
#[derive(Debug, Clone, Copy)]
pub struct I2cWrite {
    /// 7-bit device address.
    pub addr: u8,
    /// Bytes after the address byte.
    pub bytes: &'static [u8],
    /// What the write sets (the ROM comment).
    pub what: &'static str,
}

/// PCA9548 I²C mux on SUME's FPGA I²C bus.
pub const PCA9548_ADDR: u8 = 0x74;
/// The Si5324 jitter attenuator, behind mux channel 4.
pub const SI5324_ADDR: u8 = 0x68;

/// The Si5324 programming for a 156.25 MHz SFP+ reference clock on SUME, in bus order.
/// Values: the NetFPGA SUME reference designs' `config_SI5324()`
/// (NetFPGA-SUME-live, projects/acceptance_test/sw/embedded/src/nf_sume_10g_loopback/iic_si5324.c;
/// mux address and channel from iic_config.h there), identical to corundum's
/// fpga/mqnic/NetFPGA_SUME/fpga/rtl/si5324_i2c_init.v; field layout from the Si5324
/// data sheet / Any-Frequency Precision Clocks family reference manual (divider fields hold
/// N − 1, N1_HS and N2_HS hold N − 4). With the 114.285 MHz crystal on XA/XB (free run,
/// CKIN2): f3 = 114.285 MHz / 30476 = 3.75 kHz, fOSC = f3 · 10 · 150000 = 5.625 GHz,
/// CKOUT1 = fOSC / (9 · 4) = 156.25 MHz (`si5324_output_is_156_25_mhz` checks the fields).
pub const SI5324_INIT: &[I2cWrite] = &[
    I2cWrite {
        addr: PCA9548_ADDR,
        bytes: &[0x10],
        what: "PCA9548: enable channel 4 (Si5324) only",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[0, 0x54, 0xE4, 0x12, 0x15, 0x92],
        what: "regs 0-4: free run, no bypass; CKIN1 > CKIN2; BWSEL_REG = 1; CKIN1, \
               outputs off in ICAL; auto revertive",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[10, 0x08, 0x40],
        what: "regs 10-11: CKOUT2 disabled, CKOUT1 enabled; CKIN1 and CKIN2 powered",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[25, 0xA0],
        what: "reg 25: N1_HS = 9",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[31, 0x00, 0x00, 0x03],
        what: "regs 31-33: NC1_LS = 4",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[40, 0xC2, 0x49, 0xEF],
        what: "regs 40-42: N2_HS = 10, N2_LS = 150000",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[43, 0x00, 0x77, 0x0B],
        what: "regs 43-45: N31 = 30476",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[46, 0x00, 0x77, 0x0B],
        what: "regs 46-48: N32 = 30476",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[136, 0x40],
        what: "reg 136: ICAL = 1 (self-calibration, then lock)",
    },
];

/// The I²C master's ROM for `writes`: `(entry, comment)` with entry = `{start, stop, byte}`.
pub fn i2c_rom(writes: &[I2cWrite]) -> Vec<(u16, String)> {
    let mut rom = Vec::new();
    for w in writes {
        rom.push((
            0x200 | u16::from(w.addr) << 1,
            format!("START, 0x{:02x} write: {}", w.addr, w.what),
        ));
        for (k, b) in w.bytes.iter().enumerate() {
            let stop = if k + 1 == w.bytes.len() { 0x100 } else { 0 };
            let note = if stop != 0 { ", STOP" } else { "" };
            rom.push((stop | u16::from(*b), format!("0x{b:02x}{note}")));
        }
    }
    rom
}

/// The hand-written board RTL (`fanin_board.v`): the RX frame-drop FIFO and the register
/// window for every board, the Si5324 initialiser (with its ROM) for SUME.
pub fn board_rtl(board: Board, cfg: &CoreConfig) -> Result<String> {
    let mut s = header(board, cfg, "//");
    s.push_str(
        "// Hand-written board RTL from gen/rtl/ (Verilog-2001).\n\
         /* verilator lint_off DECLFILENAME */\n`resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n",
    );
    s.push_str(include_str!("../rtl/fanin_rx_fifo.v"));
    s.push('\n');
    s.push_str(include_str!("../rtl/fanin_board_regs.v"));
    s.push('\n');
    s.push_str(include_str!("../rtl/fanin_mac_stats.v"));
    if board == Board::Sume {
        s.push('\n');
        s.push_str(&si5324_init_rtl(SI5324_INIT)?);
    }
    s.push_str("\n`resetall\n");
    Ok(s)
}

/// `fanin_si5324_init` with the ROM of `writes` filled in.
pub fn si5324_init_rtl(writes: &[I2cWrite]) -> Result<String> {
    let rom = i2c_rom(writes);
    if writes.iter().any(|w| w.addr > 0x7f || w.bytes.is_empty()) {
        bail!("I2C ROM: every write needs a 7-bit address and at least one byte");
    }
    // The index must also hold ROM_LEN (the end).
    let idx_w = (usize::BITS - rom.len().leading_zeros()) as usize;
    let mut cases = String::new();
    for (i, (e, note)) in rom.iter().enumerate() {
        let _ = writeln!(cases, "        {idx_w}'d{i}: rom = 10'h{e:03x}; // {note}");
    }
    let t = include_str!("../rtl/fanin_si5324_init.v")
        .replace("@IDX_W@", &idx_w.to_string())
        .replace("@ROM_LEN@", &format!("{idx_w}'d{}", rom.len()))
        .replace("@ROM@\n", &cases);
    Ok(t)
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

/// Connections of `fanin_core`'s ports to wrapper nets named `core_<port>`; ports the
/// wrapper does not know (e.g. `dbg_*` monitors) stay unconnected (inputs tied to 0).
fn core_instance(cfg: &CoreConfig) -> (String, String) {
    let mut decls = String::new();
    let mut conns = Vec::new();
    for (name, dir, width) in fanin_hdl::verilog::top_ports(cfg) {
        let range = if width > 1 {
            format!("[{}:0] ", width - 1)
        } else {
            String::new()
        };
        if name == "clk" {
            conns.push(".clk(core_clk)".to_string());
        } else if name == "rst" {
            conns.push(".rst(core_rst)".to_string());
        } else if name.starts_with("s_axis_")
            || name.starts_with("m_axis_")
            || name.starts_with("s_axil_")
        {
            let _ = writeln!(decls, "wire {range}core_{name};");
            conns.push(format!(".{name}(core_{name})"));
        } else if dir == "input" {
            conns.push(format!(".{name}({width}'d0)"));
        } else {
            conns.push(format!(".{name}()"));
        }
    }
    let inst = format!(
        "fanin_core core_inst (\n    {}\n);\n",
        conns.join(",\n    ")
    );
    (decls, inst)
}

/// Clock (MMCM from `ip/clk_core.tcl`) and reset synchronisers.
fn clocks_and_resets() -> String {
    r#"// ---- Clocks: one MMCM (ip/clk_core.tcl): core_clk at the configuration's target
// frequency, init_clk at 100 MHz for the MAC/PCS IP's free-running clock.
wire core_clk, init_clk, mmcm_locked;
clk_core clk_core_inst (
    .clk_in1_p(sysclk_p),
    .clk_in1_n(sysclk_n),
    .clk_out1(core_clk),
    .clk_out2(init_clk),
    .locked(mmcm_locked)
);

// ---- Resets: asserted while the MMCM is unlocked, released synchronously.
(* ASYNC_REG = "TRUE" *) reg [3:0] core_rst_sync = 4'hf;
always @(posedge core_clk or negedge mmcm_locked)
    if (!mmcm_locked) core_rst_sync <= 4'hf;
    else core_rst_sync <= {core_rst_sync[2:0], 1'b0};
wire core_rst = core_rst_sync[3];

(* ASYNC_REG = "TRUE" *) reg [3:0] init_rst_sync = 4'hf;
always @(posedge init_clk or negedge mmcm_locked)
    if (!mmcm_locked) init_rst_sync <= 4'hf;
    else init_rst_sync <= {init_rst_sync[2:0], 1'b0};
wire init_rst = init_rst_sync[3];

"#
    .to_string()
}

/// The JTAG-to-AXI master and the register split: the core below [`window::BASE`], the
/// board window (drop counters, status, RS-FEC, link status, MAC statistics) from it, at the
/// offsets of `fanin_regs::board`.
fn control(board: Board, cfg: &CoreConfig) -> String {
    let mut s = String::from(
        r#"// ---- Control: JTAG-to-AXI master (ip/jtag_axil.tcl, AXI4-Lite) on core_clk, split by
// fanin_board_regs (fanin_board.v): the core's registers below 0x10000, the board window
// (RX drop counters, status, RS-FEC, board information, per-port link status and MAC
// statistics; offsets from regs/src/board.rs) from 0x10000.
wire [31:0] jtag_awaddr, jtag_wdata, jtag_araddr, jtag_rdata;
wire [3:0] jtag_wstrb;
wire [1:0] jtag_bresp, jtag_rresp;
wire jtag_awvalid, jtag_awready, jtag_wvalid, jtag_wready, jtag_bvalid, jtag_bready;
wire jtag_arvalid, jtag_arready, jtag_rvalid, jtag_rready;
jtag_axil jtag_axil_inst (
    .aclk(core_clk),
    .aresetn(~core_rst),
    .m_axi_awaddr(jtag_awaddr),
    .m_axi_awprot(),
    .m_axi_awvalid(jtag_awvalid),
    .m_axi_awready(jtag_awready),
    .m_axi_wdata(jtag_wdata),
    .m_axi_wstrb(jtag_wstrb),
    .m_axi_wvalid(jtag_wvalid),
    .m_axi_wready(jtag_wready),
    .m_axi_bresp(jtag_bresp),
    .m_axi_bvalid(jtag_bvalid),
    .m_axi_bready(jtag_bready),
    .m_axi_araddr(jtag_araddr),
    .m_axi_arprot(),
    .m_axi_arvalid(jtag_arvalid),
    .m_axi_arready(jtag_arready),
    .m_axi_rdata(jtag_rdata),
    .m_axi_rresp(jtag_rresp),
    .m_axi_rvalid(jtag_rvalid),
    .m_axi_rready(jtag_rready)
);
"#,
    );
    let _ = write!(
        s,
        r#"fanin_board_regs #(
    .PORTS({ports}),
    .RX_DROPS(16'h{drops:04x}),
    .STATUS(16'h{status:04x}),
    .RSFEC(16'h{rsfec:04x}),
    .INFO(16'h{info:04x}),
    .INFO_VALUE(32'h{info_value:08x}),
    .PORTS_BASE(16'h{ports_base:04x}),
    .PORT_STRIDE(16'h{stride:04x}),
    .PORT_LINK(16'h{link:04x}),
    .PORT_COUNTERS(16'h{counters:04x}),
    .COUNTERS({ncounters}),
    .STATUS_W({status_w}),
    .LINK_W({link_w}),
    .RSFEC_MASK({ports}'h{fec_mask:x}),
    .RSFEC_RESET({ports}'h{fec_mask:x})
) board_regs_inst (
    .clk(core_clk),
    .rst(core_rst),
    .s_axil_awaddr(jtag_awaddr),
    .s_axil_awvalid(jtag_awvalid),
    .s_axil_awready(jtag_awready),
    .s_axil_wdata(jtag_wdata),
    .s_axil_wstrb(jtag_wstrb),
    .s_axil_wvalid(jtag_wvalid),
    .s_axil_wready(jtag_wready),
    .s_axil_bresp(jtag_bresp),
    .s_axil_bvalid(jtag_bvalid),
    .s_axil_bready(jtag_bready),
    .s_axil_araddr(jtag_araddr),
    .s_axil_arvalid(jtag_arvalid),
    .s_axil_arready(jtag_arready),
    .s_axil_rdata(jtag_rdata),
    .s_axil_rresp(jtag_rresp),
    .s_axil_rvalid(jtag_rvalid),
    .s_axil_rready(jtag_rready),
    .m_axil_awaddr(core_s_axil_awaddr),
    .m_axil_awvalid(core_s_axil_awvalid),
    .m_axil_awready(core_s_axil_awready),
    .m_axil_wdata(core_s_axil_wdata),
    .m_axil_wstrb(core_s_axil_wstrb),
    .m_axil_wvalid(core_s_axil_wvalid),
    .m_axil_wready(core_s_axil_wready),
    .m_axil_bresp(core_s_axil_bresp),
    .m_axil_bvalid(core_s_axil_bvalid),
    .m_axil_bready(core_s_axil_bready),
    .m_axil_araddr(core_s_axil_araddr),
    .m_axil_arvalid(core_s_axil_arvalid),
    .m_axil_arready(core_s_axil_arready),
    .m_axil_rdata(core_s_axil_rdata),
    .m_axil_rresp(core_s_axil_rresp),
    .m_axil_rvalid(core_s_axil_rvalid),
    .m_axil_rready(core_s_axil_rready),
    .rx_drops(rx_drops),
    .stats(mac_stats),
    .status_async(board_status),
    .link_async(link_status),
    .rsfec(rsfec)
);

"#,
        ports = cfg.ports,
        drops = window::RX_DROPS,
        status = window::STATUS,
        rsfec = window::RSFEC,
        info = window::INFO,
        info_value = board.kind().info(u32::from(cfg.ports)),
        ports_base = window::PORTS_BASE,
        stride = window::PORT_STRIDE,
        link = window::PORT_LINK,
        counters = window::PORT_COUNTERS,
        ncounters = window::COUNTERS.len(),
        status_w = board.kind().status_width(),
        link_w = board.kind().link_width(),
        fec_mask = if board.kind().is_cmac() {
            (1u32 << cfg.ports) - 1
        } else {
            0
        },
    );
    s
}

/// The clock-crossing FIFOs of port `p` between the MAC (`mac_clk`) and the core: RX
/// through `fanin_rx_fifo` (drops whole frames when full: a MAC receiver cannot wait), TX
/// through the packet-mode `axis_cdc_fifo` IP (a frame leaves only once complete, so the
/// MAC never underruns).
fn cdc_fifos(p: u8, cfg: &CoreConfig, mac_clk: &str, mac_rst: &str) -> String {
    let dw = cfg.data_w;
    let kw = dw / 8;
    format!(
        r#"// Port {p}: MAC -> core through fanin_rx_fifo (fanin_board.v; whole frames, drops counted),
// core -> MAC through a packet-mode async FIFO (ip/axis_cdc_fifo.tcl).
wire [{dm}:0] mac{p}_rx_tdata;
wire [{km}:0] mac{p}_rx_tkeep;
wire mac{p}_rx_tvalid, mac{p}_rx_tlast, mac{p}_rx_bad;
wire [{dm}:0] mac{p}_tx_tdata;
wire [{km}:0] mac{p}_tx_tkeep;
wire mac{p}_tx_tvalid, mac{p}_tx_tready, mac{p}_tx_tlast, mac{p}_tx_tuser;
fanin_rx_fifo #(
    .DATA_W({dw}),
    .ADDR_W({aw})
) rx_fifo_{p} (
    .s_clk({mac_clk}),
    .s_rst({mac_rst}),
    .s_axis_tdata(mac{p}_rx_tdata),
    .s_axis_tkeep(mac{p}_rx_tkeep),
    .s_axis_tvalid(mac{p}_rx_tvalid),
    .s_axis_tlast(mac{p}_rx_tlast),
    .s_axis_tuser(mac{p}_rx_bad),
    .m_clk(core_clk),
    .m_rst(core_rst),
    .m_axis_tdata(core_s_axis_{p}_tdata),
    .m_axis_tkeep(core_s_axis_{p}_tkeep),
    .m_axis_tvalid(core_s_axis_{p}_tvalid),
    .m_axis_tready(core_s_axis_{p}_tready),
    .m_axis_tlast(core_s_axis_{p}_tlast),
    .m_axis_tuser(core_s_axis_{p}_tuser),
    .m_drop_count(rx_drops[{lo} +: 32])
);
axis_cdc_fifo tx_fifo_{p} (
    .s_axis_aresetn(~core_rst),
    .s_axis_aclk(core_clk),
    .s_axis_tvalid(core_m_axis_{p}_tvalid),
    .s_axis_tready(core_m_axis_{p}_tready),
    .s_axis_tdata(core_m_axis_{p}_tdata),
    .s_axis_tkeep(core_m_axis_{p}_tkeep),
    .s_axis_tlast(core_m_axis_{p}_tlast),
    .s_axis_tuser(core_m_axis_{p}_tuser),
    .m_axis_aclk({mac_clk}),
    .m_axis_tvalid(mac{p}_tx_tvalid),
    .m_axis_tready(mac{p}_tx_tready),
    .m_axis_tdata(mac{p}_tx_tdata),
    .m_axis_tkeep(mac{p}_tx_tkeep),
    .m_axis_tlast(mac{p}_tx_tlast),
    .m_axis_tuser(mac{p}_tx_tuser)
);

"#,
        dm = dw - 1,
        km = kw - 1,
        aw = rx_fifo_depth(cfg).trailing_zeros(),
        lo = 32 * p as u32,
    )
}

/// The generated board wrapper `fpga_<board>.v`.
pub fn wrapper(board: Board, cfg: &CoreConfig) -> String {
    let mut s = header(board, cfg, "//");
    s.push_str(
        "// Board wrapper: clocks, resets and MAC/PCS IP only; all switch logic is in fanin_core.\n\
         `resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n",
    );
    let ports: Vec<&str> = match board {
        Board::Sume => vec![
            "input  wire       sysclk_p",
            "input  wire       sysclk_n",
            "input  wire       sfp_refclk_p",
            "input  wire       sfp_refclk_n",
            "input  wire [3:0] sfp_rx_p",
            "input  wire [3:0] sfp_rx_n",
            "output wire [3:0] sfp_tx_p",
            "output wire [3:0] sfp_tx_n",
            "output wire [3:0] sfp_tx_disable",
            "input  wire [3:0] sfp_los",
            "input  wire [3:0] sfp_tx_fault",
            "output wire [3:0] sfp_led",
            "output wire [1:0] led",
            "inout  wire       i2c_scl",
            "inout  wire       i2c_sda",
            "output wire       i2c_mux_reset",
            "output wire       si5324_rst",
            "input  wire       si5324_alarm_b",
        ],
        Board::Au250 => vec![
            "input  wire       sysclk_p",
            "input  wire       sysclk_n",
            "input  wire       qsfp0_refclk_p",
            "input  wire       qsfp0_refclk_n",
            "input  wire [3:0] qsfp0_rx_p",
            "input  wire [3:0] qsfp0_rx_n",
            "output wire [3:0] qsfp0_tx_p",
            "output wire [3:0] qsfp0_tx_n",
            "output wire       qsfp0_modsell",
            "output wire       qsfp0_resetl",
            "output wire       qsfp0_lpmode",
            "output wire       qsfp0_refclk_reset",
            "output wire [1:0] qsfp0_fs",
            "input  wire       qsfp1_refclk_p",
            "input  wire       qsfp1_refclk_n",
            "input  wire [3:0] qsfp1_rx_p",
            "input  wire [3:0] qsfp1_rx_n",
            "output wire [3:0] qsfp1_tx_p",
            "output wire [3:0] qsfp1_tx_n",
            "output wire       qsfp1_modsell",
            "output wire       qsfp1_resetl",
            "output wire       qsfp1_lpmode",
            "output wire       qsfp1_refclk_reset",
            "output wire [1:0] qsfp1_fs",
            "output wire [2:0] led",
        ],
        Board::Au280 => vec![
            "input  wire       sysclk_p",
            "input  wire       sysclk_n",
            "input  wire       qsfp0_refclk_p",
            "input  wire       qsfp0_refclk_n",
            "input  wire [3:0] qsfp0_rx_p",
            "input  wire [3:0] qsfp0_rx_n",
            "output wire [3:0] qsfp0_tx_p",
            "output wire [3:0] qsfp0_tx_n",
            "output wire       qsfp0_refclk_oe_b",
            "output wire       qsfp0_refclk_fs",
            "input  wire       qsfp1_refclk_p",
            "input  wire       qsfp1_refclk_n",
            "input  wire [3:0] qsfp1_rx_p",
            "input  wire [3:0] qsfp1_rx_n",
            "output wire [3:0] qsfp1_tx_p",
            "output wire [3:0] qsfp1_tx_n",
            "output wire       qsfp1_refclk_oe_b",
            "output wire       qsfp1_refclk_fs",
            "output wire       hbm_cattrip",
        ],
    };
    let _ = writeln!(
        s,
        "module {} (\n    {}\n);\n",
        board.top(),
        ports.join(",\n    ")
    );
    let (decls, inst) = core_instance(cfg);
    s.push_str("// ---- Core nets.\n");
    s.push_str(&decls);
    s.push('\n');
    s.push_str(&clocks_and_resets());
    let k = board.kind();
    let _ = writeln!(
        s,
        "// ---- Board window contents (fanin_board_regs): RX drop counters, MAC statistics\n\
         // (fanin_mac_stats: rx_frames, tx_frames, rx_bad_fcs per port), status and link bits,\n\
         // RS-FEC enables.\n\
         wire [{}:0] rx_drops;\nwire [{}:0] mac_stats;\nwire [{}:0] board_status;\n\
         wire [{}:0] link_status;\n{}",
        32 * cfg.ports as u32 - 1,
        64 * window::COUNTERS.len() as u32 * cfg.ports as u32 - 1,
        k.status_width() - 1,
        k.link_width() * cfg.ports as u32 - 1,
        if k.is_cmac() {
            format!("wire [{}:0] rsfec;\n", cfg.ports - 1)
        } else {
            format!(
                "/* verilator lint_off UNUSEDSIGNAL */\n\
                 wire [{}:0] rsfec; // reads 0 on SUME: no RS-FEC at 10G\n\
                 /* verilator lint_on UNUSEDSIGNAL */\n",
                cfg.ports - 1
            )
        }
    );
    match board {
        Board::Sume => {
            s.push_str(&sume_refclk());
            s.push_str(&sume_macs(cfg));
        }
        Board::Au250 | Board::Au280 => {
            s.push_str("// The CMAC reference clocks need no set-up: status bit 0 always set.\n");
            s.push_str("assign board_status = 1'b1;\n\n");
            s.push_str(&cmac_macs(board, cfg));
        }
    }
    s.push_str(&control(board, cfg));
    s.push_str("// ---- The switch core (generated from hdl/).\n");
    s.push_str(&inst);
    let _ = writeln!(s, "\nendmodule // {}\n\n`resetall", board.top());
    s
}

/// SUME: the Si5324 that makes the SFP+ reference clock, programmed over I²C after reset;
/// the 10G subsystems are held in reset (`eth_rst`) until it is done.
fn sume_refclk() -> String {
    r#"// ---- SFP+ reference clock: the Si5324 jitter attenuator (behind the PCA9548 I2C mux,
// channel 4) is programmed for 156.25 MHz after reset by fanin_si5324_init (fanin_board.v;
// ROM from gen/src/board.rs SI5324_INIT). The 10G subsystems stay in reset until it is done
// (eth_rst). The mux and Si5324 reset pins are active high on SUME and follow init_rst.
wire si5324_scl_low, si5324_sda_low, si5324_done, si5324_error;
fanin_si5324_init #(
    .CLK_HZ(100000000),
    .I2C_HZ(100000)
) si5324_init_inst (
    .clk(init_clk),
    .rst(init_rst),
    .sda_i(i2c_sda),
    .scl_low(si5324_scl_low),
    .sda_low(si5324_sda_low),
    .done(si5324_done),
    .error(si5324_error)
);
assign i2c_scl = si5324_scl_low ? 1'b0 : 1'bz;
assign i2c_sda = si5324_sda_low ? 1'b0 : 1'bz;
assign i2c_mux_reset = init_rst;
assign si5324_rst = init_rst;
wire eth_rst = init_rst | ~si5324_done;

"#
    .to_string()
}

/// SUME: four Xilinx 10G Ethernet Subsystems (MAC + 10GBASE-R PCS/PMA); port 0 holds the
/// shared logic (QPLL, coreclk), ports 1..3 use it.
fn sume_macs(cfg: &CoreConfig) -> String {
    let mut s = String::from(
        r#"// ---- MAC/PCS: Xilinx 10G Ethernet Subsystem (axi_10g_ethernet), 64-bit AXIS at
// coreclk = 156.25 MHz. Port 0 (ip/eth10g_shared.tcl) includes the shared logic; ports 1..3
// (ip/eth10g_nonshared.tcl) use its QPLL and clocks.
wire mac_clk, mac_rst, qplllock, qplloutclk, qplloutrefclk, txusrclk, txusrclk2;
wire txuserrdy, gttxreset, gtrxreset, reset_counter_done;
// Bit 0 of each port's byte (PCS block lock) is used.
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] pcspma_status;
/* verilator lint_on UNUSEDSIGNAL */
assign led = {qplllock, mmcm_locked};
// Board status (regs/src/board.rs): refclk_ready, si5324_nack, qpll_lock, si5324_alarm (the
// Si5324's alarm pin is active low).
assign board_status = {~si5324_alarm_b, qplllock, si5324_error, si5324_done};

"#,
    );
    for p in 0..cfg.ports {
        s.push_str(&cdc_fifos(p, cfg, "mac_clk", "mac_rst"));
        let shared = p == 0;
        let module = if shared {
            "eth10g_shared"
        } else {
            "eth10g_nonshared"
        };
        let _ = writeln!(s, "{module} eth10g_{p} (");
        let mut c: Vec<String> = vec![
            ".tx_axis_aresetn(~mac_rst)".into(),
            ".rx_axis_aresetn(~mac_rst)".into(),
            ".tx_ifg_delay(8'd0)".into(),
            ".dclk(init_clk)".into(),
            format!(".txp(sfp_tx_p[{p}])"),
            format!(".txn(sfp_tx_n[{p}])"),
            format!(".rxp(sfp_rx_p[{p}])"),
            format!(".rxn(sfp_rx_n[{p}])"),
            "// SFP+ LOS (high: no light) and TX_FAULT from the cage pins.".into(),
            format!(".signal_detect(~sfp_los[{p}])"),
            format!(".tx_fault(sfp_tx_fault[{p}])"),
            format!(".tx_disable(sfp_tx_disable[{p}])"),
            format!(".pcspma_status(pcspma_status[{}+:8])", 8 * p),
            ".sim_speedup_control(1'b0)".into(),
            ".rxrecclk_out()".into(),
            "// MAC enabled, FCS added on TX and stripped on RX (frames without FCS, as the core expects).".into(),
            ".mac_tx_configuration_vector(80'h2)".into(),
            ".mac_rx_configuration_vector(80'h2)".into(),
            ".mac_status_vector()".into(),
            ".pcs_pma_configuration_vector(536'd0)".into(),
            ".pcs_pma_status_vector()".into(),
        ];
        if shared {
            c.extend(
                [
                    ".reset(eth_rst)",
                    ".refclk_p(sfp_refclk_p)",
                    ".refclk_n(sfp_refclk_n)",
                    ".areset_datapathclk_out(mac_rst)",
                    ".txusrclk_out(txusrclk)",
                    ".txusrclk2_out(txusrclk2)",
                    ".gttxreset_out(gttxreset)",
                    ".gtrxreset_out(gtrxreset)",
                    ".txuserrdy_out(txuserrdy)",
                    ".coreclk_out(mac_clk)",
                    ".resetdone_out()",
                    ".reset_counter_done_out(reset_counter_done)",
                    ".qplllock_out(qplllock)",
                    ".qplloutclk_out(qplloutclk)",
                    ".qplloutrefclk_out(qplloutrefclk)",
                ]
                .map(String::from),
            );
        } else {
            c.extend(
                [
                    ".areset(eth_rst)",
                    ".areset_coreclk(mac_rst)",
                    ".coreclk(mac_clk)",
                    ".txusrclk(txusrclk)",
                    ".txusrclk2(txusrclk2)",
                    ".txoutclk()",
                    ".txuserrdy(txuserrdy)",
                    ".tx_resetdone()",
                    ".rx_resetdone()",
                    ".gttxreset(gttxreset)",
                    ".gtrxreset(gtrxreset)",
                    ".qplllock(qplllock)",
                    ".qplloutclk(qplloutclk)",
                    ".qplloutrefclk(qplloutrefclk)",
                    ".reset_counter_done(reset_counter_done)",
                ]
                .map(String::from),
            );
        }
        c.extend([
            format!(".s_axis_tx_tdata(mac{p}_tx_tdata)"),
            format!(".s_axis_tx_tkeep(mac{p}_tx_tkeep)"),
            format!(".s_axis_tx_tlast(mac{p}_tx_tlast)"),
            format!(".s_axis_tx_tready(mac{p}_tx_tready)"),
            format!(".s_axis_tx_tuser(mac{p}_tx_tuser)"),
            format!(".s_axis_tx_tvalid(mac{p}_tx_tvalid)"),
            ".s_axis_pause_tdata(16'd0)".into(),
            ".s_axis_pause_tvalid(1'b0)".into(),
            format!(".m_axis_rx_tdata(mac{p}_rx_tdata)"),
            format!(".m_axis_rx_tkeep(mac{p}_rx_tkeep)"),
            format!(".m_axis_rx_tlast(mac{p}_rx_tlast)"),
            format!(".m_axis_rx_tuser(mac{p}_rx_good)"),
            format!(".m_axis_rx_tvalid(mac{p}_rx_tvalid)"),
            ".tx_statistics_valid()".into(),
            ".tx_statistics_vector()".into(),
            ".rx_statistics_valid()".into(),
            ".rx_statistics_vector()".into(),
        ]);
        let mut body = String::new();
        let n = c.iter().filter(|l| !l.starts_with("//")).count();
        let mut k = 0;
        for l in &c {
            if l.starts_with("//") {
                let _ = writeln!(body, "    {l}");
            } else {
                k += 1;
                let _ = writeln!(body, "    {l}{}", if k < n { "," } else { "" });
            }
        }
        let decl = format!(
            "// The 10G MAC's rx tuser is 1 for a good frame; the core's tuser is 1 for a bad one.\nwire mac{p}_rx_good;\nassign mac{p}_rx_bad = mac{p}_rx_tlast & ~mac{p}_rx_good;\nassign sfp_led[{p}] = pcspma_status[{b}];\n",
            b = 8 * p
        );
        // Declarations go before the instance that drives them.
        let at = s.rfind(&format!("{module} eth10g_{p} (")).unwrap();
        s.insert_str(at, &decl);
        s.push_str(&body);
        s.push_str(");\n");
        let _ = write!(
            s,
            r#"// Port {p} link (regs/src/board.rs): up = PCS block lock, sfp_los, sfp_tx_fault.
assign link_status[{l}*{p} +: {l}] = {{sfp_tx_fault[{p}], sfp_los[{p}], 7'd0, pcspma_status[{b}]}};
// Port {p} statistics, counted at the MAC's AXI-Stream in its clock: frames received (tlast),
// frames transmitted (tlast accepted), frames the MAC marked bad (FCS or other error).
fanin_mac_stats #(
    .N({n}),
    .INC_W(1)
) mac_stats_{p} (
    .s_clk(mac_clk),
    .s_inc({{mac{p}_rx_bad & mac{p}_rx_tvalid, mac{p}_tx_tvalid & mac{p}_tx_tready & mac{p}_tx_tlast, mac{p}_rx_tvalid & mac{p}_rx_tlast}}),
    .m_clk(core_clk),
    .m_count(mac_stats[{w}*{p} +: {w}])
);

"#,
            l = BoardKind::Sume.link_width(),
            b = 8 * p,
            n = window::COUNTERS.len(),
            w = 64 * window::COUNTERS.len(),
        );
    }
    s.push('\n');
    s
}

/// Alveo: two CMACs (100G, RS-FEC, 512-bit AXIS at the GT's txusrclk2 = 322.27 MHz).
fn cmac_macs(board: Board, cfg: &CoreConfig) -> String {
    let mut s = String::from(
        "// ---- MAC/PCS: Xilinx UltraScale+ 100G Ethernet (cmac_usplus), one per QSFP28 cage\n\
         // (ip/cmac_qsfp<N>.tcl); 512-bit AXIS in each CMAC's gt_txusrclk2 domain.\n",
    );
    match board {
        Board::Au250 => s.push_str(
            "// QSFP modules selected, out of reset, high power; Si5335 FS = 0b10 (161.1328125 MHz).\n\
             assign qsfp0_modsell = 1'b0;\nassign qsfp0_resetl = 1'b1;\nassign qsfp0_lpmode = 1'b0;\n\
             assign qsfp0_refclk_reset = 1'b0;\nassign qsfp0_fs = 2'b10;\n\
             assign qsfp1_modsell = 1'b0;\nassign qsfp1_resetl = 1'b1;\nassign qsfp1_lpmode = 1'b0;\n\
             assign qsfp1_refclk_reset = 1'b0;\nassign qsfp1_fs = 2'b10;\n\
             wire [1:0] cmac_aligned;\nassign led = {cmac_aligned, mmcm_locked};\n\n",
        ),
        Board::Au280 => s.push_str(
            "// SI546 reference clocks enabled at 161.1328125 MHz; HBM CATTRIP held low.\n\
             assign qsfp0_refclk_oe_b = 1'b0;\nassign qsfp0_refclk_fs = 1'b1;\n\
             assign qsfp1_refclk_oe_b = 1'b0;\nassign qsfp1_refclk_fs = 1'b1;\n\
             assign hbm_cattrip = 1'b0;\nwire [1:0] cmac_aligned;\n\n",
        ),
        Board::Sume => unreachable!(),
    }
    for p in 0..cfg.ports {
        let _ = writeln!(s, "wire mac{p}_clk, mac{p}_rx_rst;");
        s.push_str(&cdc_fifos(
            p,
            cfg,
            &format!("mac{p}_clk"),
            &format!("mac{p}_rx_rst"),
        ));
        let _ = writeln!(
            s,
            "// The CMAC's rx tuser is 1 for a bad frame on the tlast beat, as the core expects.\n\
             wire mac{p}_rx_tuser;\nassign mac{p}_rx_bad = mac{p}_rx_tlast & mac{p}_rx_tuser;"
        );
        let _ = write!(
            s,
            r#"// Port {p} RS-FEC: the window's register bit, synchronised into the CMAC's clock; a change
// resets the CMAC's RX and TX cores for 32 cycles so that both restart in the new mode.
(* ASYNC_REG = "TRUE" *) reg mac{p}_rsfec_cdc1 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg mac{p}_rsfec_cdc2 = 1'b1;
reg mac{p}_rsfec = 1'b1;
reg [5:0] mac{p}_fec_rst = 6'd0;
always @(posedge mac{p}_clk) begin
    mac{p}_rsfec_cdc1 <= rsfec[{p}];
    mac{p}_rsfec_cdc2 <= mac{p}_rsfec_cdc1;
    if (mac{p}_rsfec_cdc2 != mac{p}_rsfec) begin
        mac{p}_rsfec <= mac{p}_rsfec_cdc2;
        mac{p}_fec_rst <= 6'd32;
    end else if (mac{p}_fec_rst != 6'd0) begin
        mac{p}_fec_rst <= mac{p}_fec_rst - 6'd1;
    end
end
wire mac{p}_core_rst = mac{p}_fec_rst != 6'd0;
// Port {p} link status and statistics (regs/src/board.rs), from the CMAC's stat_* outputs in
// its clock: rx_frames += stat_rx_total_packets, tx_frames += stat_tx_total_packets,
// rx_bad_fcs += stat_rx_bad_fcs.
wire mac{p}_stat_rx_status, mac{p}_stat_rx_local_fault, mac{p}_stat_rx_remote_fault;
wire mac{p}_stat_rx_hi_ber, mac{p}_stat_rx_rsfec_aligned, mac{p}_stat_tx_total_packets;
wire [2:0] mac{p}_stat_rx_total_packets, mac{p}_stat_rx_bad_fcs;
assign link_status[{l}*{p} +: {l}] = {{mac{p}_stat_rx_rsfec_aligned, mac{p}_stat_rx_hi_ber,
    mac{p}_stat_rx_remote_fault, mac{p}_stat_rx_local_fault, cmac_aligned[{p}], mac{p}_stat_rx_status}};
fanin_mac_stats #(
    .N({n}),
    .INC_W(3)
) mac_stats_{p} (
    .s_clk(mac{p}_clk),
    .s_inc({{mac{p}_stat_rx_bad_fcs, 2'd0, mac{p}_stat_tx_total_packets, mac{p}_stat_rx_total_packets}}),
    .m_clk(core_clk),
    .m_count(mac_stats[{w}*{p} +: {w}])
);
"#,
            l = BoardKind::Au250.link_width(),
            n = window::COUNTERS.len(),
            w = 64 * window::COUNTERS.len(),
        );
        let _ = write!(
            s,
            r#"cmac_qsfp{p} cmac_{p} (
    .gt_rxp_in(qsfp{p}_rx_p),
    .gt_rxn_in(qsfp{p}_rx_n),
    .gt_txp_out(qsfp{p}_tx_p),
    .gt_txn_out(qsfp{p}_tx_n),
    .gt_txusrclk2(mac{p}_clk),
    .gt_loopback_in(12'd0),
    .gt_rxrecclkout(),
    .gt_powergoodout(),
    .gt_ref_clk_out(),
    .gtwiz_reset_tx_datapath(1'b0),
    .gtwiz_reset_rx_datapath(1'b0),
    .sys_reset(init_rst),
    .gt_ref_clk_p(qsfp{p}_refclk_p),
    .gt_ref_clk_n(qsfp{p}_refclk_n),
    .init_clk(init_clk),
    .rx_clk(mac{p}_clk),
    .rx_axis_tvalid(mac{p}_rx_tvalid),
    .rx_axis_tdata(mac{p}_rx_tdata),
    .rx_axis_tlast(mac{p}_rx_tlast),
    .rx_axis_tkeep(mac{p}_rx_tkeep),
    .rx_axis_tuser(mac{p}_rx_tuser),
    .rx_preambleout(),
    .usr_rx_reset(mac{p}_rx_rst),
    .stat_rx_aligned(cmac_aligned[{p}]),
    .stat_rx_status(mac{p}_stat_rx_status),
    .stat_rx_local_fault(mac{p}_stat_rx_local_fault),
    .stat_rx_remote_fault(mac{p}_stat_rx_remote_fault),
    .stat_rx_hi_ber(mac{p}_stat_rx_hi_ber),
    .stat_rx_rsfec_lane_alignment_status(mac{p}_stat_rx_rsfec_aligned),
    .stat_rx_total_packets(mac{p}_stat_rx_total_packets),
    .stat_rx_bad_fcs(mac{p}_stat_rx_bad_fcs),
    .stat_tx_total_packets(mac{p}_stat_tx_total_packets),
    .ctl_rx_enable(1'b1),
    .ctl_rx_force_resync(1'b0),
    .ctl_rx_test_pattern(1'b0),
    // RS-FEC (clause 91) from the window's RSFEC register (reset: on).
    .ctl_rsfec_ieee_error_indication_mode(1'b0),
    .ctl_rx_rsfec_enable(mac{p}_rsfec),
    .ctl_rx_rsfec_enable_correction(mac{p}_rsfec),
    .ctl_rx_rsfec_enable_indication(mac{p}_rsfec),
    .ctl_tx_rsfec_enable(mac{p}_rsfec),
    // Transmit only once the receiver is aligned; until then send remote-fault indication.
    .ctl_tx_enable(cmac_aligned[{p}]),
    .ctl_tx_send_idle(1'b0),
    .ctl_tx_send_rfi(~cmac_aligned[{p}]),
    .ctl_tx_send_lfi(1'b0),
    .ctl_tx_test_pattern(1'b0),
    .core_rx_reset(mac{p}_core_rst),
    .core_tx_reset(mac{p}_core_rst),
    .tx_axis_tready(mac{p}_tx_tready),
    .tx_axis_tvalid(mac{p}_tx_tvalid),
    .tx_axis_tdata(mac{p}_tx_tdata),
    .tx_axis_tlast(mac{p}_tx_tlast),
    .tx_axis_tkeep(mac{p}_tx_tkeep),
    .tx_axis_tuser(mac{p}_tx_tuser),
    .tx_ovfout(),
    .tx_unfout(),
    .tx_preamblein(56'd0),
    .usr_tx_reset(),
    .core_drp_reset(1'b0),
    .drp_clk(1'b0),
    .drp_addr(10'd0),
    .drp_di(16'd0),
    .drp_en(1'b0),
    .drp_do(),
    .drp_rdy(),
    .drp_we(1'b0)
);

"#
        );
    }
    s
}

/// Vendor IP as Tcl: `(file name, script)`. Each script creates one IP into `$fanin_ip_dir`.
pub fn ip_tcl(board: Board, cfg: &CoreConfig) -> Vec<(String, String)> {
    let h = header(board, cfg, "#");
    let ip = |name: &str, module: &str, props: &[(&str, String)]| -> (String, String) {
        let mut t = h.clone();
        let _ = writeln!(
            t,
            "create_ip -name {name} -vendor xilinx.com -library ip -module_name {module} -dir $fanin_ip_dir"
        );
        let _ = writeln!(t, "set_property -dict [list \\");
        for (k, v) in props {
            let _ = writeln!(t, "    CONFIG.{k} {{{v}}} \\");
        }
        let _ = writeln!(t, "] [get_ips {module}]");
        (format!("{module}.tcl"), t)
    };
    let mut v = vec![
        ip(
            "clk_wiz",
            "clk_core",
            &[
                ("PRIM_SOURCE", "Differential_clock_capable_pin".into()),
                ("PRIM_IN_FREQ", format!("{:.3}", board.sysclk_mhz())),
                ("CLKOUT2_USED", "true".into()),
                (
                    "CLKOUT1_REQUESTED_OUT_FREQ",
                    format!("{:.3}", cfg.clock_mhz as f64),
                ),
                ("CLKOUT2_REQUESTED_OUT_FREQ", "100.000".into()),
                ("USE_RESET", "false".into()),
                ("USE_LOCKED", "true".into()),
            ],
        ),
        ip(
            "jtag_axi",
            "jtag_axil",
            &[
                // 2 = AXI4-Lite.
                ("PROTOCOL", "2".into()),
                ("M_AXI_ADDR_WIDTH", "32".into()),
                ("M_AXI_DATA_WIDTH", "32".into()),
            ],
        ),
        ip(
            "axis_data_fifo",
            "axis_cdc_fifo",
            &[
                ("TDATA_NUM_BYTES", (cfg.data_w / 8).to_string()),
                ("TUSER_WIDTH", "1".into()),
                ("HAS_TKEEP", "1".into()),
                ("HAS_TLAST", "1".into()),
                ("IS_ACLK_ASYNC", "1".into()),
                // 2 = packet mode: a frame leaves only once complete, so a MAC never underruns.
                ("FIFO_MODE", "2".into()),
                ("FIFO_DEPTH", "512".into()),
            ],
        ),
    ];
    match board {
        Board::Sume => {
            for (module, level) in [("eth10g_shared", "1"), ("eth10g_nonshared", "0")] {
                v.push(ip(
                    "axi_10g_ethernet",
                    module,
                    &[
                        ("Management_Interface", "false".into()),
                        ("base_kr", "BASE-R".into()),
                        // 1 = shared logic (QPLL, clocking) in the core.
                        ("SupportLevel", level.into()),
                        ("autonegotiation", "false".into()),
                        ("Statistics_Gathering", "false".into()),
                        ("DClkRate", "100".into()),
                    ],
                ));
            }
        }
        Board::Au250 | Board::Au280 => {
            // (CMAC site, first GT channel) per QSFP cage, from the boards' GT quad placement.
            let sites = if board == Board::Au250 {
                [("CMACE4_X0Y8", "X1Y44"), ("CMACE4_X0Y7", "X1Y40")]
            } else {
                [("CMACE4_X0Y6", "X0Y40"), ("CMACE4_X0Y7", "X0Y44")]
            };
            for (p, (cmac, gt0)) in sites.iter().enumerate() {
                let (col, y) = gt0.split_once('Y').unwrap();
                let y: u32 = y.parse().unwrap();
                let mut props: Vec<(&str, String)> = vec![
                    ("CMAC_CAUI4_MODE", "1".into()),
                    ("NUM_LANES", "4x25".into()),
                    ("GT_REF_CLK_FREQ", "161.1328125".into()),
                    ("USER_INTERFACE", "AXIS".into()),
                    ("GT_DRP_CLK", "100".into()),
                    ("TX_FLOW_CONTROL", "0".into()),
                    ("RX_FLOW_CONTROL", "0".into()),
                    ("INCLUDE_RS_FEC", "1".into()),
                    ("CMAC_CORE_SELECT", cmac.to_string()),
                    ("GT_GROUP_SELECT", format!("{gt0}~{col}Y{}", y + 3)),
                ];
                let lanes: Vec<(String, String)> = (0..4)
                    .map(|l| (format!("LANE{}_GT_LOC", l + 1), format!("{col}Y{}", y + l)))
                    .collect();
                let lane_refs: Vec<(&str, String)> =
                    lanes.iter().map(|(k, v)| (k.as_str(), v.clone())).collect();
                props.extend(lane_refs);
                props.push(("ENABLE_PIPELINE_REG", "1".into()));
                v.push(ip("cmac_usplus", &format!("cmac_qsfp{p}"), &props));
            }
        }
    }
    v
}

/// The non-project Vivado script.
pub fn build_tcl(board: Board, cfg: &CoreConfig) -> String {
    let mut t = header(board, cfg, "#");
    let _ = write!(
        t,
        r#"# Non-project flow: vivado -mode batch -source build.tcl
# Creates the IP from ip/*.tcl, reads fanin_core.v, fanin_board.v, {top}.v and constraints/*.xdc, runs
# synthesis, place and route, writes reports into out/, and the bitstream out/{top}.bit only
# when timing is met. Exits 1 on a timing failure, 2 on a clock set-up error.

set part {part}
set top {top}
# core_clk target: {mhz} MHz (configuration '{cfg}').
set core_period {period:.3}

set here [file dirname [file normalize [info script]]]
cd $here
file mkdir out
set fanin_ip_dir [file join $here out ip]
file mkdir $fanin_ip_dir

create_project -in_memory -part $part
set_property target_language Verilog [current_project]
foreach f [lsort [glob -directory [file join $here ip] *.tcl]] {{
    source $f
}}
generate_target all [get_ips]
synth_ip [get_ips]

read_verilog [list [file join $here fanin_core.v] [file join $here fanin_board.v] [file join $here $top.v]]
foreach f [lsort [glob -directory [file join $here constraints] *.xdc]] {{
    read_xdc $f
}}

synth_design -top $top -part $part
set clk [get_clocks core_clk]
if {{[llength $clk] != 1}} {{
    puts "ERROR: fanin: no clock named core_clk after synthesis (see constraints/clocks.xdc)"
    exit 2
}}
set period [get_property PERIOD $clk]
if {{abs($period - $core_period) > 0.01 * $core_period}} {{
    puts "ERROR: fanin: core_clk period $period ns, the configuration needs $core_period ns (ip/clk_core.tcl)"
    exit 2
}}
write_checkpoint -force out/post_synth.dcp
report_utilization -file out/utilization_synth.rpt

opt_design
place_design
phys_opt_design
route_design
write_checkpoint -force out/post_route.dcp
report_timing_summary -max_paths 20 -report_unconstrained -file out/timing_summary.rpt
report_utilization -file out/utilization.rpt
report_utilization -hierarchical -file out/utilization_hier.rpt

set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
if {{$wns eq "" || $whs eq "" || $wns < 0 || $whs < 0}} {{
    puts "ERROR: fanin: timing not met: WNS=$wns ns WHS=$whs ns (out/timing_summary.rpt)"
    exit 1
}}
write_bitstream -force out/$top.bit
puts "fanin: timing met (WNS=$wns ns, WHS=$whs ns); wrote out/$top.bit"
exit 0
"#,
        part = board.part(),
        top = board.top(),
        mhz = cfg.clock_mhz,
        cfg = cfg.name,
        period = core_period_ns(cfg),
    );
    t
}

/// The build directory's README.
pub fn readme(board: Board, cfg: &CoreConfig) -> String {
    let mut ip: Vec<String> = ip_tcl(board, cfg).into_iter().map(|(n, _)| n).collect();
    ip.sort();
    let refclk = if board == Board::Sume {
        "\n## SFP+ reference clock\n\n\
         The Si5324 that makes the 156.25 MHz SFP+ reference clock is programmed over I2C \
         after every reset by `fanin_si5324_init` (in `fanin_board.v`; register values from \
         the NetFPGA SUME reference designs, see docs/boards.md); the 10G subsystems stay \
         in reset until it is done (about 1 s). Board status bit 0 (address 0x10040) shows \
         it done, bit 1 that the Si5324 never acknowledged, bit 2 the QPLL lock (also LED 1), \
         bit 3 the Si5324's alarm pin.\n"
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
    format!(
        "# fanin for {name} ({part}), configuration `{cfg}`\n\n\
         Generated by `cargo run -p fanin-gen -- --board {name} --out DIR`. Do not edit; regenerate.\n\n\
         ## Build\n\n\
         ```\nvivado -mode batch -source build.tcl\n```\n\n\
         Needs Vivado with the {ipnote} IP licence. Writes `out/timing_summary.rpt`, \
         `out/utilization*.rpt`, checkpoints, and `out/{top}.bit` when timing is met; \
         exits 1 on a timing failure.\n\n\
         ## Files\n\n\
         * `fanin_core.v`: the switch core (generated from `hdl/`), `manifest.json`, `fanin_regs.h`.\n\
         * `{top}.v`: board wrapper: clocks, resets, MAC/PCS IP, clock-crossing FIFOs, JTAG-to-AXI.\n\
         * `fanin_board.v`: hand-written board RTL: the RX FIFOs that drop whole frames when \
         full, the register split{si}.\n\
         * `constraints/*.xdc`: pins and clocks (core_clk target {mhz} MHz); \
         `constraints/fanin_board.xdc`: the clock-domain crossings of `fanin_board.v`.\n\
         * `ip/*.tcl`: vendor IP, created at build time: {ips}.\n\
         * `build.tcl`: the non-project Vivado flow.\n\n\
         ## Control\n\n\
         The AXI-Lite register port (`fanin_regs.h`) is driven by a JTAG-to-AXI master: after \
         programming, in the Vivado hardware manager, e.g. \
         `create_hw_axi_txn rd [get_hw_axis hw_axi_1] -type read -address 0x0 -len 1; run_hw_axi rd`.\n\n\
         Addresses from `0x{base:05x}` are the board window (`fanin hw status` prints it by \
         name): frames an RX FIFO dropped whole because the core fell behind (32 bits, \
         wrapping): {regs}the status word at `0x{status:05x}`, the RS-FEC register at \
         `0x{fec:05x}` ({fecnote}), the board information word at `0x{info:05x}`, and per port \
         `p` from `0x{ports:05x} + 0x{stride:x}·p` the link status and the MAC's 64-bit \
         rx_frames, tx_frames and rx_bad_fcs counters (docs/boards.md, \"Board register window\").\n\n\
         {leds}\n{refclk}\n\
         See docs/boards.md in the fanin repository for the design choices and known limits.\n",
        name = board.name(),
        part = board.part(),
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

    /// The value of Si5324 register `reg` after [`SI5324_INIT`] (auto-increment writes).
    fn si5324_reg(reg: u8) -> u8 {
        let mut v = None;
        for w in SI5324_INIT.iter().filter(|w| w.addr == SI5324_ADDR) {
            let start = w.bytes[0];
            for (k, b) in w.bytes[1..].iter().enumerate() {
                if start as usize + k == reg as usize {
                    v = Some(*b);
                }
            }
        }
        v.unwrap_or_else(|| panic!("register {reg} is not written"))
    }

    /// The register fields (Si5324 data sheet layout) give 156.25 MHz on CKOUT1 from the
    /// 114.285 MHz crystal, with the DSPLL inside its 4.85-5.67 GHz range.
    #[test]
    fn si5324_output_is_156_25_mhz() {
        let r = |n| u32::from(si5324_reg(n));
        let n1_hs = (r(25) >> 5) + 4;
        let nc1_ls = ((r(31) & 0xf) << 16 | r(32) << 8 | r(33)) + 1;
        let n2_hs = (r(40) >> 5) + 4;
        let n2_ls = ((r(40) & 0xf) << 16 | r(41) << 8 | r(42)) + 1;
        let n31 = ((r(43) & 0x7) << 16 | r(44) << 8 | r(45)) + 1;
        let n32 = ((r(46) & 0x7) << 16 | r(47) << 8 | r(48)) + 1;
        assert_eq!(
            (n1_hs, nc1_ls, n2_hs, n2_ls, n31),
            (9, 4, 10, 150_000, 30_476)
        );
        assert_eq!(n32, n31);
        let f3 = 114.285e6 / f64::from(n31);
        assert!((2e3..=2e6).contains(&f3), "f3 = {f3}");
        let fosc = f3 * f64::from(n2_hs) * f64::from(n2_ls);
        assert!((4.85e9..=5.67e9).contains(&fosc), "fOSC = {fosc}");
        let fout = fosc / f64::from(n1_hs * nc1_ls);
        assert!((fout - 156.25e6).abs() < 1.0, "CKOUT1 = {fout}");
        // Free run on, ICAL last.
        assert_eq!(si5324_reg(0) & 0x40, 0x40);
        let last = SI5324_INIT.last().unwrap();
        assert_eq!((last.addr, last.bytes), (SI5324_ADDR, &[136u8, 0x40][..]));
        // The mux is switched to channel 4 before anything else.
        assert_eq!(
            (SI5324_INIT[0].addr, SI5324_INIT[0].bytes),
            (PCA9548_ADDR, &[0x10u8][..])
        );
    }

    /// Each write becomes START + address byte, its bytes, STOP on the last byte.
    #[test]
    fn i2c_rom_frames_every_write() {
        let rom = i2c_rom(SI5324_INIT);
        let n: usize = SI5324_INIT.iter().map(|w| w.bytes.len() + 1).sum();
        assert_eq!(rom.len(), n);
        let mut i = 0;
        for w in SI5324_INIT {
            assert_eq!(rom[i].0, 0x200 | u16::from(w.addr) << 1);
            for (k, b) in w.bytes.iter().enumerate() {
                let stop = if k + 1 == w.bytes.len() { 0x100 } else { 0 };
                assert_eq!(rom[i + 1 + k].0, stop | u16::from(*b));
            }
            i += w.bytes.len() + 1;
        }
        let v = si5324_init_rtl(SI5324_INIT).unwrap();
        assert!(v.contains("localparam [IDX_W-1:0] ROM_LEN = 6'd39;"), "{v}");
        assert!(!v.contains("@ROM") && !v.contains("@IDX_W@"));
    }

    #[test]
    fn rx_fifo_holds_two_maximum_frames() {
        let mut cfg = CoreConfig::by_name("sume").unwrap();
        assert_eq!(rx_fifo_depth(&cfg), 512);
        cfg.max_frame = 9600;
        assert_eq!(rx_fifo_depth(&cfg), 4096);
        assert_eq!(rx_fifo_depth(&CoreConfig::by_name("alveo").unwrap()), 512);
    }
}
