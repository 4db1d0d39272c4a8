// fanin_axil_arb: two AXI4-Lite masters (s0: PCIe BAR, s1: JTAG-to-AXI) onto one slave
// (fanin_board_regs), one transaction at a time per direction, in one clock.
//
// * Writes: when idle, the master showing awvalid or wvalid is granted (both: the one not
//   served last); its AW, W and B channels are connected to the slave until its B handshake,
//   and each of AW and W is taken once per grant (a second AW waits for the next grant).
// * Reads: the same for AR and R, independently of the writes.
// The other master sees no ready and no response until it is granted. Addresses, data and
// responses pass through unchanged.
module fanin_axil_arb #(
    parameter AW = 32
) (
    input  wire          clk,
    input  wire          rst,

    input  wire [AW-1:0] s0_awaddr,
    input  wire          s0_awvalid,
    output wire          s0_awready,
    input  wire [31:0]   s0_wdata,
    input  wire [3:0]    s0_wstrb,
    input  wire          s0_wvalid,
    output wire          s0_wready,
    output wire [1:0]    s0_bresp,
    output wire          s0_bvalid,
    input  wire          s0_bready,
    input  wire [AW-1:0] s0_araddr,
    input  wire          s0_arvalid,
    output wire          s0_arready,
    output wire [31:0]   s0_rdata,
    output wire [1:0]    s0_rresp,
    output wire          s0_rvalid,
    input  wire          s0_rready,

    input  wire [AW-1:0] s1_awaddr,
    input  wire          s1_awvalid,
    output wire          s1_awready,
    input  wire [31:0]   s1_wdata,
    input  wire [3:0]    s1_wstrb,
    input  wire          s1_wvalid,
    output wire          s1_wready,
    output wire [1:0]    s1_bresp,
    output wire          s1_bvalid,
    input  wire          s1_bready,
    input  wire [AW-1:0] s1_araddr,
    input  wire          s1_arvalid,
    output wire          s1_arready,
    output wire [31:0]   s1_rdata,
    output wire [1:0]    s1_rresp,
    output wire          s1_rvalid,
    input  wire          s1_rready,

    output wire [AW-1:0] m_awaddr,
    output wire          m_awvalid,
    input  wire          m_awready,
    output wire [31:0]   m_wdata,
    output wire [3:0]    m_wstrb,
    output wire          m_wvalid,
    input  wire          m_wready,
    input  wire [1:0]    m_bresp,
    input  wire          m_bvalid,
    output wire          m_bready,
    output wire [AW-1:0] m_araddr,
    output wire          m_arvalid,
    input  wire          m_arready,
    input  wire [31:0]   m_rdata,
    input  wire [1:0]    m_rresp,
    input  wire          m_rvalid,
    output wire          m_rready
);

// ---- Writes.
reg w_busy = 1'b0, w_sel = 1'b0, w_last = 1'b1, aw_done = 1'b0, w_done = 1'b0;
wire w_req0 = s0_awvalid | s0_wvalid;
wire w_req1 = s1_awvalid | s1_wvalid;
assign m_awaddr = w_sel ? s1_awaddr : s0_awaddr;
assign m_awvalid = w_busy && !aw_done && (w_sel ? s1_awvalid : s0_awvalid);
assign m_wdata = w_sel ? s1_wdata : s0_wdata;
assign m_wstrb = w_sel ? s1_wstrb : s0_wstrb;
assign m_wvalid = w_busy && !w_done && (w_sel ? s1_wvalid : s0_wvalid);
assign m_bready = w_busy && (w_sel ? s1_bready : s0_bready);
assign s0_awready = w_busy && !w_sel && !aw_done && m_awready;
assign s1_awready = w_busy && w_sel && !aw_done && m_awready;
assign s0_wready = w_busy && !w_sel && !w_done && m_wready;
assign s1_wready = w_busy && w_sel && !w_done && m_wready;
assign s0_bvalid = w_busy && !w_sel && m_bvalid;
assign s1_bvalid = w_busy && w_sel && m_bvalid;
assign s0_bresp = m_bresp;
assign s1_bresp = m_bresp;

always @(posedge clk) begin
    if (rst) begin
        w_busy <= 1'b0;
        w_last <= 1'b1;
        aw_done <= 1'b0;
        w_done <= 1'b0;
    end else if (!w_busy) begin
        if (w_req0 || w_req1) begin
            w_busy <= 1'b1;
            // Both asking: the one not served last.
            w_sel <= w_req0 && w_req1 ? ~w_last : w_req1;
            aw_done <= 1'b0;
            w_done <= 1'b0;
        end
    end else begin
        if (m_awvalid && m_awready) aw_done <= 1'b1;
        if (m_wvalid && m_wready) w_done <= 1'b1;
        if (m_bvalid && m_bready) begin
            w_busy <= 1'b0;
            w_last <= w_sel;
        end
    end
end

// ---- Reads.
reg r_busy = 1'b0, r_sel = 1'b0, r_last = 1'b1, ar_done = 1'b0;
assign m_araddr = r_sel ? s1_araddr : s0_araddr;
assign m_arvalid = r_busy && !ar_done && (r_sel ? s1_arvalid : s0_arvalid);
assign m_rready = r_busy && (r_sel ? s1_rready : s0_rready);
assign s0_arready = r_busy && !r_sel && !ar_done && m_arready;
assign s1_arready = r_busy && r_sel && !ar_done && m_arready;
assign s0_rvalid = r_busy && !r_sel && m_rvalid;
assign s1_rvalid = r_busy && r_sel && m_rvalid;
assign s0_rdata = m_rdata;
assign s1_rdata = m_rdata;
assign s0_rresp = m_rresp;
assign s1_rresp = m_rresp;

always @(posedge clk) begin
    if (rst) begin
        r_busy <= 1'b0;
        r_last <= 1'b1;
        ar_done <= 1'b0;
    end else if (!r_busy) begin
        if (s0_arvalid || s1_arvalid) begin
            r_busy <= 1'b1;
            r_sel <= s0_arvalid && s1_arvalid ? ~r_last : s1_arvalid;
            ar_done <= 1'b0;
        end
    end else begin
        if (m_arvalid && m_arready) ar_done <= 1'b1;
        if (m_rvalid && m_rready) begin
            r_busy <= 1'b0;
            r_last <= r_sel;
        end
    end
end

endmodule // fanin_axil_arb
