//! The generated board wrapper `fpga_<board>.v`: clocks, resets, MAC/PCS IP, the
//! clock-crossing FIFOs, the control master and register split, the core instance.

use super::{header, window, Board, Options};
use fanin_hdl::CoreConfig;
use std::fmt::Write as _;

use super::macs::{cmac_macs, sume_macs, sume_refclk};

/// The core's monitor outputs (`dbg_*`) as `(name, width)`, in port order: the ILA's probes.
pub fn dbg_ports(cfg: &CoreConfig) -> Vec<(String, u32)> {
    fanin_hdl::verilog::top_ports(cfg)
        .into_iter()
        .filter(|(n, dir, _)| n.starts_with("dbg_") && *dir == "output")
        .map(|(n, _, w)| (n.to_string(), w))
        .collect()
}

/// Connections of `fanin_core`'s ports to wrapper nets named `core_<port>`; ports the
/// wrapper does not know stay unconnected (inputs tied to 0), and so do the `dbg_*`
/// monitors unless `ila` (then they get `core_dbg_*` nets for the ILA).
fn core_instance(cfg: &CoreConfig, ila: bool) -> (String, String) {
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
            || (ila && name.starts_with("dbg_") && dir == "output")
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

/// The signals of one AXI-Lite bus as the wrapper declares them: `(name, width)`.
const AXIL_SIGS: [(&str, u32); 17] = [
    ("awaddr", 32),
    ("awvalid", 1),
    ("awready", 1),
    ("wdata", 32),
    ("wstrb", 4),
    ("wvalid", 1),
    ("wready", 1),
    ("bresp", 2),
    ("bvalid", 1),
    ("bready", 1),
    ("araddr", 32),
    ("arvalid", 1),
    ("arready", 1),
    ("rdata", 32),
    ("rresp", 2),
    ("rvalid", 1),
    ("rready", 1),
];

/// Wire declarations of the AXI-Lite bus `bus` (`<bus>_awaddr`, ...).
fn axil_wires(bus: &str) -> String {
    let mut s = String::new();
    for (n, w) in AXIL_SIGS {
        let range = if w > 1 {
            format!("[{}:0] ", w - 1)
        } else {
            String::new()
        };
        let _ = writeln!(s, "wire {range}{bus}_{n};");
    }
    s
}

/// Port connections `.<prefix><sig>(<bus>_<sig>),` of every AXI-Lite signal, one a line.
fn axil_conns(prefix: &str, bus: &str) -> String {
    AXIL_SIGS
        .iter()
        .map(|(n, _)| format!("    .{prefix}{n}({bus}_{n}),\n"))
        .collect()
}

/// The JTAG-to-AXI master on the slow `init_clk` with its clock converter into `core_clk`,
/// and the register split: the core below [`window::BASE`], the board window (drop counters,
/// status, RS-FEC, link status, MAC statistics) from it, at the offsets of
/// `fanin_regs::board`.
fn control(board: Board, cfg: &CoreConfig) -> String {
    let mut s = String::from(
        r#"// ---- Control: JTAG-to-AXI master (ip/jtag_axil.tcl, AXI4-Lite) on init_clk (100 MHz, the
// debug hub's clock too: constraints/fanin_debug.xdc), crossed into core_clk by an AXI-Lite
// clock converter (ip/axil_cdc.tcl), then split by fanin_board_regs (fanin_board.v): the
// core's registers below 0x10000, the board window (RX drop counters, status, RS-FEC,
// board information, per-port link status and MAC statistics; offsets from
// regs/src/board.rs) from 0x10000.
"#,
    );
    s.push_str(&axil_wires("jtag_slow"));
    s.push_str(&axil_wires("jtag"));
    let _ = write!(
        s,
        r#"jtag_axil jtag_axil_inst (
    .aclk(init_clk),
    .aresetn(~init_rst),
{jtag}    .m_axi_awprot(),
    .m_axi_arprot()
);
axil_cdc jtag_cdc_inst (
    .s_axi_aclk(init_clk),
    .s_axi_aresetn(~init_rst),
{cdc_s}    .s_axi_awprot(3'd0),
    .s_axi_arprot(3'd0),
    .m_axi_aclk(core_clk),
    .m_axi_aresetn(~core_rst),
{cdc_m}    .m_axi_awprot(),
    .m_axi_arprot()
);
"#,
        jtag = axil_conns("m_axi_", "jtag_slow"),
        cdc_s = axil_conns("s_axi_", "jtag_slow"),
        cdc_m = axil_conns("m_axi_", "jtag"),
    );
    // The bus fanin_board_regs serves: the JTAG master itself on SUME; on Alveo the arbiter
    // between the PCIe BAR (XDMA's AXI-Lite master, crossed into core_clk) and JTAG.
    let bus = if board.kind().is_cmac() {
        s.push_str(&pcie_control());
        "ctl"
    } else {
        "jtag"
    };
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
    .s_axil_awaddr({bus}_awaddr),
    .s_axil_awvalid({bus}_awvalid),
    .s_axil_awready({bus}_awready),
    .s_axil_wdata({bus}_wdata),
    .s_axil_wstrb({bus}_wstrb),
    .s_axil_wvalid({bus}_wvalid),
    .s_axil_wready({bus}_wready),
    .s_axil_bresp({bus}_bresp),
    .s_axil_bvalid({bus}_bvalid),
    .s_axil_bready({bus}_bready),
    .s_axil_araddr({bus}_araddr),
    .s_axil_arvalid({bus}_arvalid),
    .s_axil_arready({bus}_arready),
    .s_axil_rdata({bus}_rdata),
    .s_axil_rresp({bus}_rresp),
    .s_axil_rvalid({bus}_rvalid),
    .s_axil_rready({bus}_rready),
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
        bus = bus,
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

/// Alveo: the PCIe control path. XDMA (`ip/xdma_pcie.tcl`, Gen3 x16, its AXI-Lite master on
/// BAR0, DMA unused) at its `axi_aclk`, an AXI-Lite clock converter (`ip/axil_cdc.tcl`) into
/// `core_clk`, and `fanin_axil_arb` between it (s0) and the JTAG-to-AXI master (s1); the
/// arbiter's output `ctl_*` feeds the register split.
fn pcie_control() -> String {
    let mut s = String::from(
        r#"// ---- PCIe: XDMA's AXI-Lite master (BAR0, 1 MiB: the core at 0, the board window at
// 0x10000), crossed into core_clk, shares the register split with JTAG-to-AXI through
// fanin_axil_arb (fanin_board.v). The DMA channels are not used.
wire pcie_sys_clk, pcie_sys_clk_gt, pcie_axi_clk, pcie_axi_rstn, pcie_link_up;
IBUFDS_GTE4 pcie_refclk_ibuf (
    .I(pcie_refclk_p),
    .IB(pcie_refclk_n),
    .CEB(1'b0),
    .O(pcie_sys_clk_gt),
    .ODIV2(pcie_sys_clk)
);
// Board status (regs/src/board.rs): refclk_ready (the CMAC reference clocks need no set-up)
// and pcie_up.
assign board_status = {pcie_link_up, 3'd0, 1'b1};
"#,
    );
    for bus in ["pcie", "bar", "ctl"] {
        s.push_str(&axil_wires(bus));
    }
    let conns = axil_conns;
    let _ = write!(
        s,
        r#"xdma_pcie xdma_inst (
    .sys_clk(pcie_sys_clk),
    .sys_clk_gt(pcie_sys_clk_gt),
    .sys_rst_n(pcie_perst_n),
    .user_lnk_up(pcie_link_up),
    .pci_exp_txp(pcie_tx_p),
    .pci_exp_txn(pcie_tx_n),
    .pci_exp_rxp(pcie_rx_p),
    .pci_exp_rxn(pcie_rx_n),
    .axi_aclk(pcie_axi_clk),
    .axi_aresetn(pcie_axi_rstn),
    .usr_irq_req(1'b0),
    .usr_irq_ack(),
    .msi_enable(),
    .msi_vector_width(),
    .s_axis_c2h_tvalid_0(1'b0),
    .m_axis_h2c_tready_0(1'b1),
{xdma}    .m_axil_awprot(),
    .m_axil_arprot()
);
axil_cdc pcie_cdc_inst (
    .s_axi_aclk(pcie_axi_clk),
    .s_axi_aresetn(pcie_axi_rstn),
{cdc_s}    .s_axi_awprot(3'd0),
    .s_axi_arprot(3'd0),
    .m_axi_aclk(core_clk),
    .m_axi_aresetn(~core_rst),
{cdc_m}    .m_axi_awprot(),
    .m_axi_arprot()
);
fanin_axil_arb #(
    .AW(32)
) ctl_arb_inst (
    .clk(core_clk),
    .rst(core_rst),
{arb}
);

"#,
        xdma = conns("m_axil_", "pcie"),
        cdc_s = conns("s_axi_", "pcie"),
        cdc_m = conns("m_axi_", "bar"),
        arb = (conns("s0_", "bar") + &conns("s1_", "jtag") + &conns("m_", "ctl"))
            .trim_end_matches(",\n"),
    );
    s
}

/// The wrapper's pins (its module ports), as declared: `"input  wire [3:0] name"`.
pub(super) fn pins(board: Board) -> Vec<&'static str> {
    match board {
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
            "input  wire       pcie_refclk_p",
            "input  wire       pcie_refclk_n",
            "input  wire       pcie_perst_n",
            "input  wire [15:0] pcie_rx_p",
            "input  wire [15:0] pcie_rx_n",
            "output wire [15:0] pcie_tx_p",
            "output wire [15:0] pcie_tx_n",
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
            "input  wire       pcie_refclk_p",
            "input  wire       pcie_refclk_n",
            "input  wire       pcie_perst_n",
            "input  wire [15:0] pcie_rx_p",
            "input  wire [15:0] pcie_rx_n",
            "output wire [15:0] pcie_tx_p",
            "output wire [15:0] pcie_tx_n",
        ],
    }
}

/// `--ila`: an ILA (`ip/ila_core.tcl`) on `core_clk` whose probes are the core's monitor
/// port, one probe per `dbg_*` output in port order.
fn ila(cfg: &CoreConfig) -> String {
    let probes: Vec<String> = dbg_ports(cfg)
        .iter()
        .enumerate()
        .map(|(i, (n, _))| format!("    .probe{i}(core_{n})"))
        .collect();
    format!(
        "// ---- ILA (fanin-gen --ila): the core's monitor port at core_clk (ip/ila_core.tcl). The\n\
         // engine's state registers are probed by a second ILA that build.tcl inserts into the\n\
         // synthesised netlist (u_ila_state). Both are read with the hardware manager over JTAG.\n\
         ila_core ila_core_inst (\n    .clk(core_clk),\n{}\n);\n\n",
        probes.join(",\n")
    )
}

/// The generated board wrapper `fpga_<board>.v`.
pub fn wrapper(board: Board, cfg: &CoreConfig) -> String {
    wrapper_with(board, cfg, &Options::default())
}

/// The generated board wrapper `fpga_<board>.v`, with the build options (`--ila`).
pub fn wrapper_with(board: Board, cfg: &CoreConfig, opts: &Options) -> String {
    let mut s = header(board, cfg, "//");
    s.push_str(
        "// Board wrapper: clocks, resets and MAC/PCS IP only; all switch logic is in fanin_core.\n\
         `resetall\n`timescale 1ns / 1ps\n`default_nettype none\n\n",
    );
    let ports = pins(board);
    // SUME's parameters: init_clk's frequency and the I2C rate as fanin_si5324_init sees
    // them. A build uses these defaults; only the board-top simulation (board::sim) sets
    // them, to shorten the Si5324 power-up from about 1 s to a few hundred cycles.
    let params = if board == Board::Sume {
        "#(\n    parameter SI5324_CLK_HZ = 100000000,\n    parameter SI5324_I2C_HZ = 100000\n) "
    } else {
        ""
    };
    let _ = writeln!(
        s,
        "module {} {params}(\n    {}\n);\n",
        board.top(),
        ports.join(",\n    ")
    );
    let (decls, inst) = core_instance(cfg, opts.ila);
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
            s.push_str(&cmac_macs(board, cfg));
        }
    }
    s.push_str(&control(board, cfg));
    if opts.ila {
        s.push_str(&ila(cfg));
    }
    s.push_str("// ---- The switch core (generated from hdl/).\n");
    s.push_str(&inst);
    let _ = writeln!(s, "\nendmodule // {}\n\n`resetall", board.top());
    s
}
