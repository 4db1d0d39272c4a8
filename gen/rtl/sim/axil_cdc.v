// SIMULATION ONLY: behavioural stand-in for axi_clock_converter (ip/axil_cdc.tcl, 2.1,
// AXI4-Lite, asynchronous clocks) for the board-top Verilator simulation: every board's
// JTAG-to-AXI crossing (init_clk -> core_clk) and Alveo's PCIe crossing. Port list: Xilinx's
// instantiation template, as the wrapper connects it.

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
