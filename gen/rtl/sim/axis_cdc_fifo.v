// SIMULATION ONLY: behavioural stand-in for axis_data_fifo (ip/axis_cdc_fifo.tcl:
// independent clocks, packet mode, FIFO_DEPTH 512, tkeep, tlast, 1-bit tuser), for the
// board-top Verilator simulation. The generator replaces @DW@ and @KW@ (data and keep
// widths: the IP module has no parameters).
//
// Packet mode as the IP documents it: the read side offers a frame only once its tlast
// beat is stored, so a frame leaves back to back (the MAC never underruns). The write
// pointer of the last complete frame crosses into the read clock, and the read pointer
// into the write clock, through two flops each: the IP's latency, not its metastability
// handling (a binary pointer through two flops is exact in simulation).
module axis_cdc_fifo (
    input  wire            s_axis_aresetn,
    input  wire            s_axis_aclk,
    input  wire            s_axis_tvalid,
    output wire            s_axis_tready,
    input  wire [@DW@-1:0] s_axis_tdata,
    input  wire [@KW@-1:0] s_axis_tkeep,
    input  wire            s_axis_tlast,
    input  wire [0:0]      s_axis_tuser,
    input  wire            m_axis_aclk,
    output wire            m_axis_tvalid,
    input  wire            m_axis_tready,
    output wire [@DW@-1:0] m_axis_tdata,
    output wire [@KW@-1:0] m_axis_tkeep,
    output wire            m_axis_tlast,
    output wire [0:0]      m_axis_tuser
);
localparam AW = 9;
localparam W = @DW@ + @KW@ + 2;
reg [W-1:0] mem [0:(1<<AW)-1];
reg [AW:0] wr_ptr = 0, wr_commit = 0, rd_ptr_w1 = 0, rd_ptr_w2 = 0;
reg [AW:0] rd_ptr = 0, commit_r1 = 0, commit_r2 = 0;
// Write side (s_axis_aclk).
wire full = (wr_ptr - rd_ptr_w2) == (1 << AW);
assign s_axis_tready = s_axis_aresetn & ~full;
always @(posedge s_axis_aclk) begin
    rd_ptr_w1 <= rd_ptr;
    rd_ptr_w2 <= rd_ptr_w1;
    if (!s_axis_aresetn) begin
        wr_ptr <= wr_commit;
    end else if (s_axis_tvalid && !full) begin
        mem[wr_ptr[AW-1:0]] <= {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};
        wr_ptr <= wr_ptr + 1'b1;
        if (s_axis_tlast) wr_commit <= wr_ptr + 1'b1;
    end
end
// Read side (m_axis_aclk).
wire [W-1:0] head = mem[rd_ptr[AW-1:0]];
assign m_axis_tvalid = rd_ptr != commit_r2;
assign {m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata} = head;
always @(posedge m_axis_aclk) begin
    commit_r1 <= wr_commit;
    commit_r2 <= commit_r1;
    if (m_axis_tvalid && m_axis_tready) rd_ptr <= rd_ptr + 1'b1;
end
endmodule
