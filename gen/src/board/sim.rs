//! The board-top simulation (SIMULATION ONLY; nothing here reaches a build directory): the
//! generated wrapper `fpga_<board>.v` with the generated core and `fanin_board.v`, its vendor
//! IP replaced by the behavioural models of `gen/rtl/sim/`, under a top module
//! [`SIM_TOP`] that a Verilator testbench drives (fanin-sim's `board` module).
//!
//! The top's ports: the clocks (`clk` = the core clock on the board oscillator pin, the MAC
//! clocks on the MAC reference-clock pins, on Alveo `pcie_clk` on the PCIe reference pin);
//! `rst` (holds the clock model unlocked: a power-on reset; PERST# on Alveo); per port `p`
//! the MAC model's user side as `s_axis_<p>_*` (frames into the MAC's receiver; `tready` is
//! its link being up) and `m_axis_<p>_*` (frames out of its transmitter; `tready` is the
//! MAC taking the beat); the control master as `s_axil_*` (Alveo: the XDMA model's BAR0
//! AXI-Lite master in the PCIe clock; SUME: the JTAG-to-AXI model's, in the core clock);
//! the core's monitor port `dbg_*`; `tx_underrun` (bit `p`: the MAC model saw its TX
//! `tvalid` drop inside a frame). The models' testbench-side nets are driven, and the
//! wrapper's internal nets read, through hierarchical references from the top, so the
//! wrapper is simulated exactly as generated (on SUME with its Si5324 parameters
//! [`SUME_SIM_PARAMS`]).

use super::{board_rtl, wrapper, Board};
use anyhow::Result;
use fanin_hdl::CoreConfig;
use std::fmt::Write as _;

/// Module name of the simulation top.
pub const SIM_TOP: &str = "fanin_board_sim";

/// The SUME wrapper's parameters in simulation: the Si5324 initialiser sees a 400 Hz clock
/// and a 100 Hz I²C bus, one clock cycle per quarter bit, so its power-up delay, ROM
/// transfer and 1 s lock wait take some 2,000 cycles instead of about 10⁸.
pub const SUME_SIM_PARAMS: &[(&str, u32)] = &[("SI5324_CLK_HZ", 400), ("SI5324_I2C_HZ", 100)];

/// Frequency of the Alveo XDMA model's AXI clock (`axisten_freq` in ip/xdma_pcie.tcl), MHz.
pub const PCIE_AXI_MHZ: f64 = 250.0;

/// The behavioural models of the board's vendor IP (`gen/rtl/sim/`), one Verilog text.
pub fn sim_models(board: Board, cfg: &CoreConfig) -> String {
    let mut s = String::from(
        "// SIMULATION ONLY: behavioural models of the vendor IP, from gen/rtl/sim/.\n\
         `resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n",
    );
    s.push_str(include_str!("../../rtl/sim/clocking.v"));
    s.push('\n');
    s.push_str(
        &include_str!("../../rtl/sim/axis_cdc_fifo.v")
            .replace("@DW@", &cfg.data_w.to_string())
            .replace("@KW@", &(cfg.data_w / 8).to_string()),
    );
    s.push('\n');
    s.push_str(include_str!("../../rtl/sim/axil_cdc.v"));
    s.push('\n');
    match board {
        Board::Sume => s.push_str(include_str!("../../rtl/sim/eth10g.v")),
        Board::Au250 | Board::Au280 => {
            for p in 0..cfg.ports {
                s.push_str(
                    &include_str!("../../rtl/sim/cmac.v")
                        .replace("@NAME@", &format!("cmac_qsfp{p}")),
                );
                s.push('\n');
            }
            s.push_str(include_str!("../../rtl/sim/pcie.v"));
        }
    }
    s.push_str("\n`resetall\n");
    s
}

/// The clock inputs of the simulation top besides `clk` (the core clock): `(port, MHz)`.
/// Alveo: one per CMAC (each on its own reference pin) and the XDMA's AXI clock; SUME: the
/// 10G subsystems' shared `coreclk`.
pub fn sim_clocks(board: Board, cfg: &CoreConfig) -> Vec<(String, f64)> {
    let mac_mhz = 1000.0 / super::mac_period_ns(board);
    match board {
        Board::Sume => vec![("mac_clk".into(), mac_mhz)],
        Board::Au250 | Board::Au280 => (0..cfg.ports)
            .map(|p| (format!("mac_clk_{p}"), mac_mhz))
            .chain([("pcie_clk".into(), PCIE_AXI_MHZ)])
            .collect(),
    }
}

/// The clock input that clocks port `p`'s MAC user side.
pub fn sim_mac_clock(board: Board, p: u8) -> String {
    match board {
        Board::Sume => "mac_clk".into(),
        Board::Au250 | Board::Au280 => format!("mac_clk_{p}"),
    }
}

/// The clock input that clocks the control master `s_axil_*`.
pub fn sim_control_clock(board: Board) -> &'static str {
    match board {
        Board::Sume => "clk",
        Board::Au250 | Board::Au280 => "pcie_clk",
    }
}

/// AXI4-Lite master signals: `(name, width, driven by the master)`.
const AXIL: &[(&str, u32, bool)] = &[
    ("awaddr", 32, true),
    ("awvalid", 1, true),
    ("awready", 1, false),
    ("wdata", 32, true),
    ("wstrb", 4, true),
    ("wvalid", 1, true),
    ("wready", 1, false),
    ("bresp", 2, false),
    ("bvalid", 1, false),
    ("bready", 1, true),
    ("araddr", 32, true),
    ("arvalid", 1, true),
    ("arready", 1, false),
    ("rdata", 32, false),
    ("rresp", 2, false),
    ("rvalid", 1, false),
    ("rready", 1, true),
];

fn range(w: u32) -> String {
    if w > 1 {
        format!("[{}:0] ", w - 1)
    } else {
        String::new()
    }
}

/// The simulation top: the wrapper, its pins tied as on a board with every link up, and the
/// testbench's ports bound to the models and the core's monitor through the hierarchy.
pub fn sim_top(board: Board, cfg: &CoreConfig) -> String {
    let (dw, kw) = (cfg.data_w, cfg.data_w / 8);
    let cmac = board.kind().is_cmac();
    let mut ports: Vec<String> = vec!["input  wire clk".into(), "input  wire rst".into()];
    for (c, _) in sim_clocks(board, cfg) {
        ports.push(format!("input  wire {c}"));
    }
    for p in 0..cfg.ports {
        for (n, w, out) in [
            ("s_axis_{p}_tdata", dw, false),
            ("s_axis_{p}_tkeep", kw, false),
            ("s_axis_{p}_tvalid", 1, false),
            ("s_axis_{p}_tready", 1, true),
            ("s_axis_{p}_tlast", 1, false),
            ("s_axis_{p}_tuser", 1, false),
            ("m_axis_{p}_tdata", dw, true),
            ("m_axis_{p}_tkeep", kw, true),
            ("m_axis_{p}_tvalid", 1, true),
            ("m_axis_{p}_tready", 1, false),
            ("m_axis_{p}_tlast", 1, true),
            ("m_axis_{p}_tuser", 1, true),
        ] {
            let dir = if out { "output" } else { "input " };
            ports.push(format!(
                "{dir} wire {}{}",
                range(w),
                n.replace("{p}", &p.to_string())
            ));
        }
    }
    for (n, w, m) in AXIL {
        let dir = if *m { "input " } else { "output" };
        ports.push(format!("{dir} wire {}s_axil_{n}", range(*w)));
    }
    ports.extend([
        "output wire dbg_valid".into(),
        "output wire [1:0] dbg_kind".into(),
        "output wire [31:0] dbg_arg".into(),
        "output wire [31:0] dbg_tick".into(),
        format!("output wire {}tx_underrun", range(cfg.ports as u32)),
    ]);
    let mut s = format!(
        "// SIMULATION ONLY (gen/src/board/sim.rs): the {board} wrapper under a testbench top.\n\
         `resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n\
         module {SIM_TOP} (\n    {}\n);\n\n",
        ports.join(",\n    "),
        board = board.name(),
    );
    // Pins: clocks on the oscillator and reference pins, serial lanes idle, every cage
    // with light and no fault.
    let mut conns = Vec::new();
    for pin in super::wrapper::pins(board) {
        let mut words = pin.split_whitespace();
        let dir = words.next().unwrap_or_default();
        let name = pin.rsplit(' ').next().unwrap_or_default();
        let width = pin
            .split_once('[')
            .and_then(|(_, r)| r.split_once(':'))
            .and_then(|(hi, _)| hi.parse::<u32>().ok())
            .map_or(1, |hi| hi + 1);
        let clock = |c: &str, neg: bool| {
            if neg {
                format!("~{c}")
            } else {
                c.to_string()
            }
        };
        let v = match (dir, name) {
            ("output", _) => String::new(),
            ("inout", n) => n.to_string(),
            (_, "sysclk_p") => clock("clk", false),
            (_, "sysclk_n") => clock("clk", true),
            (_, "sfp_refclk_p") => clock("mac_clk", false),
            (_, "sfp_refclk_n") => clock("mac_clk", true),
            (_, "pcie_refclk_p") => clock("pcie_clk", false),
            (_, "pcie_refclk_n") => clock("pcie_clk", true),
            (_, "pcie_perst_n") => "~rst".into(),
            (_, "si5324_alarm_b") => "1'b1".into(),
            (_, n) if n.starts_with("qsfp") && n.contains("_refclk_") => {
                let p = &n[4..5];
                clock(&format!("mac_clk_{p}"), n.ends_with("_n"))
            }
            _ => format!("{width}'d0"),
        };
        conns.push(format!(".{name}({v})"));
    }
    let params = if board == Board::Sume {
        let v: Vec<String> = SUME_SIM_PARAMS
            .iter()
            .map(|(k, v)| format!(".{k}({v})"))
            .collect();
        format!("#(\n    {}\n) ", v.join(",\n    "))
    } else {
        String::new()
    };
    if board == Board::Sume {
        s.push_str(
            "// The I2C bus: SCL pulled up; SDA pulled down, so every byte the Si5324\n\
             // initialiser sends is acknowledged and every byte it reads (the status poll)\n\
             // is 0x00, LOL_INT clear (its bus sequence is checked in Icarus by\n\
             // gen/tests/boards.rs).\nwire i2c_scl, i2c_sda;\npullup(i2c_scl);\npulldown(i2c_sda);\n\n",
        );
    }
    let _ = writeln!(
        s,
        "{top} {params}dut (\n    {}\n);\n",
        conns.join(",\n    "),
        top = board.top()
    );
    let _ = writeln!(
        s,
        "// The clock model's power-on reset.\nassign dut.clk_core_inst.tb_hold = rst;\n"
    );
    for p in 0..cfg.ports {
        let (mac, tx) = if cmac {
            (format!("dut.cmac_{p}"), format!("dut.cmac_{p}.tx_axis"))
        } else {
            (
                format!("dut.eth10g_{p}.user"),
                format!("dut.eth10g_{p}.user.s_axis_tx"),
            )
        };
        let on = if cmac { "rx_on" } else { "lock" };
        let _ = write!(
            s,
            "// Port {p}: the MAC model's user side.\n\
             assign {mac}.tb_rx_tdata = s_axis_{p}_tdata;\n\
             assign {mac}.tb_rx_tkeep = s_axis_{p}_tkeep;\n\
             assign {mac}.tb_rx_tvalid = s_axis_{p}_tvalid;\n\
             assign {mac}.tb_rx_tlast = s_axis_{p}_tlast;\n\
             assign {mac}.tb_rx_bad = s_axis_{p}_tuser;\n\
             assign s_axis_{p}_tready = {mac}.{on};\n\
             assign m_axis_{p}_tdata = {tx}_tdata;\n\
             assign m_axis_{p}_tkeep = {tx}_tkeep;\n\
             assign m_axis_{p}_tvalid = {tx}_tvalid;\n\
             assign {mac}.tb_tx_tready = m_axis_{p}_tready;\n\
             assign m_axis_{p}_tlast = {tx}_tlast;\n\
             assign m_axis_{p}_tuser = {tx}_tuser;\n\
             assign tx_underrun[{p}] = {mac}.tb_tx_underrun;\n\n"
        );
    }
    let (master, prefix) = if cmac {
        ("dut.xdma_inst", "m_axil_")
    } else {
        ("dut.jtag_axil_inst", "m_axi_")
    };
    let _ = writeln!(
        s,
        "// The control master: {}.",
        if cmac {
            "the XDMA model's BAR0 AXI-Lite master (the JTAG-to-AXI model idle)"
        } else {
            "the JTAG-to-AXI model"
        }
    );
    for (n, _, m) in AXIL {
        if *m {
            let _ = writeln!(s, "assign {master}.tb_{n} = s_axil_{n};");
        } else {
            let _ = writeln!(s, "assign s_axil_{n} = {master}.{prefix}{n};");
        }
    }
    if cmac {
        for (n, w, m) in AXIL {
            if *m {
                let _ = writeln!(s, "assign dut.jtag_axil_inst.tb_{n} = {w}'d0;");
            }
        }
    }
    s.push_str(
        "\n// The core's monitor port.\n\
         assign dbg_valid = dut.core_inst.dbg_valid;\n\
         assign dbg_kind = dut.core_inst.dbg_kind;\n\
         assign dbg_arg = dut.core_inst.dbg_arg;\n\
         assign dbg_tick = dut.core_inst.dbg_tick;\n",
    );
    let _ = writeln!(s, "\nendmodule // {SIM_TOP}\n\n`resetall");
    s
}

/// Everything Verilator reads for the board-top simulation, as one text: the core, the
/// board RTL, the IP models, the wrapper and the simulation top ([`SIM_TOP`]).
pub fn sim_verilog(board: Board, cfg: &CoreConfig) -> Result<String> {
    board.check(cfg)?;
    let mut s = fanin_hdl::verilog(cfg)?;
    s.push_str("\n`resetall\n");
    s.push_str(&board_rtl(board, cfg)?);
    s.push_str(&sim_models(board, cfg));
    s.push_str(&wrapper(board, cfg));
    s.push('\n');
    s.push_str(&sim_top(board, cfg));
    Ok(s)
}
