// SIMULATION ONLY: behavioural stand-ins for the Alveo PCIe control path (the GT reference
// clock buffer IBUFDS_GTE4, xdma from ip/xdma_pcie.tcl, axi_clock_converter from
// ip/axil_cdc.tcl), for the board-top Verilator simulation. Port lists: Xilinx's
// instantiation templates (xdma 4.1 with its AXI-Lite master and AXI-Stream DMA,
// axi_clock_converter 2.1 in AXI4-Lite mode), as the Alveo wrapper connects them.

// UltraScale+ GT reference clock buffer: O and ODIV2 are the input (ODIV2's divider is an
// attribute the wrapper leaves at its default; the XDMA model runs from it directly).
module IBUFDS_GTE4 (
    input  wire I,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire IB,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire CEB,
    output wire O,
    output wire ODIV2
);
assign O = I & ~CEB;
assign ODIV2 = O;
endmodule

// XDMA: the PCIe BAR stub. axi_aclk is sys_clk (the testbench drives the PCIe reference
// pin at the 250 MHz AXI clock); axi_aresetn and user_lnk_up follow sys_rst_n (PERST#)
// through two flops. The AXI-Lite master's outputs are the testbench's (`tb_*`, driven by
// the simulation top through the hierarchy): each access the testbench makes is what a
// host's BAR0 read or write makes the real XDMA issue. Not modelled: PCIe itself, the DMA
// channels (unused by the design), interrupts.
module xdma_pcie (
    input  wire        sys_clk,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        sys_clk_gt,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire        sys_rst_n,
    output wire        user_lnk_up,
    output wire [15:0] pci_exp_txp,
    output wire [15:0] pci_exp_txn,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0] pci_exp_rxp,
    input  wire [15:0] pci_exp_rxn,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        axi_aclk,
    output wire        axi_aresetn,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [0:0]  usr_irq_req,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [0:0]  usr_irq_ack,
    output wire        msi_enable,
    output wire [2:0]  msi_vector_width,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        s_axis_c2h_tvalid_0,
    input  wire        m_axis_h2c_tready_0,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [31:0] m_axil_awaddr,
    output wire [2:0]  m_axil_awprot,
    output wire        m_axil_awvalid,
    input  wire        m_axil_awready,
    output wire [31:0] m_axil_wdata,
    output wire [3:0]  m_axil_wstrb,
    output wire        m_axil_wvalid,
    input  wire        m_axil_wready,
    input  wire [1:0]  m_axil_bresp,
    input  wire        m_axil_bvalid,
    output wire        m_axil_bready,
    output wire [31:0] m_axil_araddr,
    output wire [2:0]  m_axil_arprot,
    output wire        m_axil_arvalid,
    input  wire        m_axil_arready,
    input  wire [31:0] m_axil_rdata,
    input  wire [1:0]  m_axil_rresp,
    input  wire        m_axil_rvalid,
    output wire        m_axil_rready
);
wire [31:0] tb_awaddr, tb_wdata, tb_araddr;
wire [3:0] tb_wstrb;
wire tb_awvalid, tb_wvalid, tb_bready, tb_arvalid, tb_rready;
reg [1:0] rst_sync = 2'b00;
always @(posedge sys_clk) rst_sync <= {rst_sync[0], sys_rst_n};
assign axi_aclk = sys_clk;
assign axi_aresetn = rst_sync[1];
assign user_lnk_up = rst_sync[1];
assign pci_exp_txp = 16'd0;
assign pci_exp_txn = 16'hffff;
assign usr_irq_ack = 1'b0;
assign msi_enable = 1'b0;
assign msi_vector_width = 3'd0;
assign m_axil_awaddr = tb_awaddr;
assign m_axil_awprot = 3'd0;
assign m_axil_awvalid = tb_awvalid & axi_aresetn;
assign m_axil_wdata = tb_wdata;
assign m_axil_wstrb = tb_wstrb;
assign m_axil_wvalid = tb_wvalid & axi_aresetn;
assign m_axil_bready = tb_bready;
assign m_axil_araddr = tb_araddr;
assign m_axil_arprot = 3'd0;
assign m_axil_arvalid = tb_arvalid & axi_aresetn;
assign m_axil_rready = tb_rready;
endmodule

// One AXI channel from clock s to clock m: a toggle handshake with the payload held stable
// while the request crosses (two flops each way), one transfer in flight. Each side's
// valid and ready are gated by its own reset.
module fanin_sim_axi_chan #(
    parameter W = 32
) (
    input  wire         s_clk,
    input  wire         s_rstn,
    input  wire [W-1:0] s_data,
    input  wire         s_valid,
    output wire         s_ready,
    input  wire         m_clk,
    input  wire         m_rstn,
    output wire [W-1:0] m_data,
    output wire         m_valid,
    input  wire         m_ready
);
reg req = 1'b0, ack = 1'b0;
reg [1:0] req_sync = 2'b00, ack_sync = 2'b00;
reg [W-1:0] hold = {W{1'b0}};
assign s_ready = s_rstn & (req == ack_sync[1]);
always @(posedge s_clk) begin
    ack_sync <= {ack_sync[0], ack};
    if (s_valid && s_ready) begin
        hold <= s_data;
        req <= ~req;
    end
end
assign m_valid = m_rstn & (req_sync[1] != ack);
assign m_data = hold;
always @(posedge m_clk) begin
    req_sync <= {req_sync[0], req};
    if (m_valid && m_ready) ack <= ~ack;
end
endmodule

// axi_clock_converter, AXI4-Lite, asynchronous clocks: one fanin_sim_axi_chan per channel
// (AW, W, AR from s to m; B, R from m to s). Protection bits are not carried (the wrapper
// ties them to 0 and leaves the outputs open).
module axil_cdc (
    input  wire        s_axi_aclk,
    input  wire        s_axi_aresetn,
    input  wire [31:0] s_axi_awaddr,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [2:0]  s_axi_awprot,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire        s_axi_awvalid,
    output wire        s_axi_awready,
    input  wire [31:0] s_axi_wdata,
    input  wire [3:0]  s_axi_wstrb,
    input  wire        s_axi_wvalid,
    output wire        s_axi_wready,
    output wire [1:0]  s_axi_bresp,
    output wire        s_axi_bvalid,
    input  wire        s_axi_bready,
    input  wire [31:0] s_axi_araddr,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [2:0]  s_axi_arprot,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire        s_axi_arvalid,
    output wire        s_axi_arready,
    output wire [31:0] s_axi_rdata,
    output wire [1:0]  s_axi_rresp,
    output wire        s_axi_rvalid,
    input  wire        s_axi_rready,
    input  wire        m_axi_aclk,
    input  wire        m_axi_aresetn,
    output wire [31:0] m_axi_awaddr,
    output wire [2:0]  m_axi_awprot,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready,
    output wire [31:0] m_axi_araddr,
    output wire [2:0]  m_axi_arprot,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready
);
assign m_axi_awprot = 3'd0;
assign m_axi_arprot = 3'd0;
fanin_sim_axi_chan #(.W(32)) aw (
    .s_clk(s_axi_aclk), .s_rstn(s_axi_aresetn),
    .s_data(s_axi_awaddr), .s_valid(s_axi_awvalid), .s_ready(s_axi_awready),
    .m_clk(m_axi_aclk), .m_rstn(m_axi_aresetn),
    .m_data(m_axi_awaddr), .m_valid(m_axi_awvalid), .m_ready(m_axi_awready)
);
fanin_sim_axi_chan #(.W(36)) w (
    .s_clk(s_axi_aclk), .s_rstn(s_axi_aresetn),
    .s_data({s_axi_wstrb, s_axi_wdata}), .s_valid(s_axi_wvalid), .s_ready(s_axi_wready),
    .m_clk(m_axi_aclk), .m_rstn(m_axi_aresetn),
    .m_data({m_axi_wstrb, m_axi_wdata}), .m_valid(m_axi_wvalid), .m_ready(m_axi_wready)
);
fanin_sim_axi_chan #(.W(2)) b (
    .s_clk(m_axi_aclk), .s_rstn(m_axi_aresetn),
    .s_data(m_axi_bresp), .s_valid(m_axi_bvalid), .s_ready(m_axi_bready),
    .m_clk(s_axi_aclk), .m_rstn(s_axi_aresetn),
    .m_data(s_axi_bresp), .m_valid(s_axi_bvalid), .m_ready(s_axi_bready)
);
fanin_sim_axi_chan #(.W(32)) ar (
    .s_clk(s_axi_aclk), .s_rstn(s_axi_aresetn),
    .s_data(s_axi_araddr), .s_valid(s_axi_arvalid), .s_ready(s_axi_arready),
    .m_clk(m_axi_aclk), .m_rstn(m_axi_aresetn),
    .m_data(m_axi_araddr), .m_valid(m_axi_arvalid), .m_ready(m_axi_arready)
);
fanin_sim_axi_chan #(.W(34)) r (
    .s_clk(m_axi_aclk), .s_rstn(m_axi_aresetn),
    .s_data({m_axi_rresp, m_axi_rdata}), .s_valid(m_axi_rvalid), .s_ready(m_axi_rready),
    .m_clk(s_axi_aclk), .m_rstn(s_axi_aresetn),
    .m_data({s_axi_rresp, s_axi_rdata}), .m_valid(s_axi_rvalid), .m_ready(s_axi_rready)
);
endmodule
