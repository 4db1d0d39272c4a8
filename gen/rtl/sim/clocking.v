// SIMULATION ONLY: behavioural stand-ins for the board wrapper's clocking IP, for the
// board-top Verilator simulation (gen/src/board/sim.rs, sim/tests/board.rs). Never built
// by Vivado (build.tcl reads fanin_core.v, fanin_board.v and the wrapper; the IP comes from
// ip/*.tcl). Port lists: Xilinx's instantiation templates, as the wrapper connects them.

// clk_wiz (ip/clk_core.tcl): both outputs are the input clock (the testbench drives the
// board oscillator pin at the core clock's frequency, so init_clk = core_clk here); `locked`
// rises 16 cycles after the testbench releases `tb_hold` (its power-on reset).
module clk_core (
    input  wire clk_in1_p,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire clk_in1_n,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire clk_out1,
    output wire clk_out2,
    output wire locked
);
// Driven by the simulation top through the hierarchy (fanin_board_sim: its `rst`).
wire tb_hold;
reg [4:0] lock_cnt = 5'd0;
always @(posedge clk_in1_p)
    if (tb_hold) lock_cnt <= 5'd0;
    else if (!lock_cnt[4]) lock_cnt <= lock_cnt + 5'd1;
assign clk_out1 = clk_in1_p;
assign clk_out2 = clk_in1_p;
assign locked = lock_cnt[4];
endmodule

// jtag_axi (ip/jtag_axil.tcl), AXI4-Lite: the master's outputs are the testbench's
// (`tb_*`, driven by the simulation top through the hierarchy), gated by reset; the
// testbench reads the slave's answers through the hierarchy too (SUME; idle on Alveo).
module jtag_axil (
    input  wire        aclk,
    input  wire        aresetn,
    output wire [31:0] m_axi_awaddr,
    output wire [2:0]  m_axi_awprot,
    output wire        m_axi_awvalid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        m_axi_awready,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wvalid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        m_axi_wready,
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        m_axi_bready,
    output wire [31:0] m_axi_araddr,
    output wire [2:0]  m_axi_arprot,
    output wire        m_axi_arvalid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        m_axi_arready,
    /* verilator lint_on UNUSEDSIGNAL */
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rvalid,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        m_axi_rready
);
wire [31:0] tb_awaddr, tb_wdata, tb_araddr;
wire [3:0] tb_wstrb;
wire tb_awvalid, tb_wvalid, tb_bready, tb_arvalid, tb_rready;
// The master's clock is the wrapper's core_clk; `aclk` is the testbench's (it steps the
// master on the same clock).
/* verilator lint_off UNUSEDSIGNAL */
wire unused_clk = aclk;
/* verilator lint_on UNUSEDSIGNAL */
assign m_axi_awaddr = tb_awaddr;
assign m_axi_awprot = 3'd0;
assign m_axi_awvalid = tb_awvalid & aresetn;
assign m_axi_wdata = tb_wdata;
assign m_axi_wstrb = tb_wstrb;
assign m_axi_wvalid = tb_wvalid & aresetn;
assign m_axi_bready = tb_bready;
assign m_axi_araddr = tb_araddr;
assign m_axi_arprot = 3'd0;
assign m_axi_arvalid = tb_arvalid & aresetn;
assign m_axi_rready = tb_rready;
endmodule
