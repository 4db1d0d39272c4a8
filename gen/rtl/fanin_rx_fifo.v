// fanin_rx_fifo: MAC receive path -> core clock domain, dropping whole frames on overflow.
//
// A MAC receiver cannot be back-pressured, so s_axis has no tready. Every beat of a frame
// is written uncommitted; the frame becomes visible to the read side only when its tlast
// beat is written (the write pointer is then committed). If the FIFO is full at any beat
// of a frame, the beats already written are discarded (the write pointer rolls back to the
// last commit), the rest of the frame is ignored up to its tlast, and the frame is counted
// in m_drop_count. The read side therefore only ever sees whole frames, byte-identical to
// what the MAC delivered; a frame longer than the FIFO is always dropped, never truncated.
// Frames the MAC marks bad (tuser on tlast) pass through: the core counts and drops them.
//
// Clock-domain crossings (constraints: the generated constraints/fanin_board.xdc):
// * read pointer -> write side: Gray code (one bit changes per read), two flops;
// * committed write pointer and drop count -> read side: a req/ack handshake that holds
//   the value stable (wr_hold_*) while the read side samples it, so a frame's worth of
//   pointer advance crosses as one stable word;
// * either side's reset resets both sides: asserted at once, released synchronously.
// The memory is a simple dual-port RAM with independent clocks (block RAM).
module fanin_rx_fifo #(
    parameter DATA_W = 64,
    parameter KEEP_W = DATA_W / 8,
    // Depth: 2**ADDR_W beats.
    parameter ADDR_W = 9
) (
    input  wire              s_clk,
    input  wire              s_rst,
    input  wire [DATA_W-1:0] s_axis_tdata,
    input  wire [KEEP_W-1:0] s_axis_tkeep,
    input  wire              s_axis_tvalid,
    input  wire              s_axis_tlast,
    input  wire              s_axis_tuser,

    input  wire              m_clk,
    input  wire              m_rst,
    output wire [DATA_W-1:0] m_axis_tdata,
    output wire [KEEP_W-1:0] m_axis_tkeep,
    output wire              m_axis_tvalid,
    input  wire              m_axis_tready,
    output wire              m_axis_tlast,
    output wire              m_axis_tuser,
    // Frames dropped whole since reset (wraps), in the m_clk domain.
    output wire [31:0]       m_drop_count
);

localparam W = DATA_W + KEEP_W + 2;
localparam [ADDR_W:0] PTR_ONE = 1;

function [ADDR_W:0] bin2gray(input [ADDR_W:0] b);
    bin2gray = b ^ (b >> 1);
endfunction

function [ADDR_W:0] gray2bin(input [ADDR_W:0] g);
    integer i;
    begin
        gray2bin[ADDR_W] = g[ADDR_W];
        for (i = ADDR_W - 1; i >= 0; i = i - 1)
            gray2bin[i] = gray2bin[i + 1] ^ g[i];
    end
endfunction

// ---- Resets.
wire arst = s_rst | m_rst;
(* ASYNC_REG = "TRUE" *) reg [1:0] s_rst_sync = 2'b11;
(* ASYNC_REG = "TRUE" *) reg [1:0] m_rst_sync = 2'b11;
always @(posedge s_clk or posedge arst)
    if (arst) s_rst_sync <= 2'b11;
    else s_rst_sync <= {s_rst_sync[0], 1'b0};
always @(posedge m_clk or posedge arst)
    if (arst) m_rst_sync <= 2'b11;
    else m_rst_sync <= {m_rst_sync[0], 1'b0};
wire s_reset = s_rst_sync[1];
wire m_reset = m_rst_sync[1];

(* ram_style = "block" *) reg [W-1:0] mem [0:(1 << ADDR_W) - 1];

// Write-side state (s_clk).
reg [ADDR_W:0] wr_ptr = 0;      // next beat to write (the current frame is uncommitted)
reg [ADDR_W:0] wr_commit = 0;   // first beat after the last whole frame
reg dropping = 1'b0;            // the current frame is being discarded
reg [31:0] drops = 0;
reg [ADDR_W:0] wr_hold_ptr = 0;
reg [31:0] wr_hold_drops = 0;
reg wr_req = 1'b0;
(* ASYNC_REG = "TRUE" *) reg wr_ack_cdc1 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg wr_ack_cdc2 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg [ADDR_W:0] rd_gray_cdc1 = 0;
(* ASYNC_REG = "TRUE" *) reg [ADDR_W:0] rd_gray_cdc2 = 0;

// Read-side state (m_clk).
reg [ADDR_W:0] rd_ptr = 0;
reg [ADDR_W:0] rd_gray = 0;
reg [ADDR_W:0] rd_commit = 0;   // the write side's committed pointer, as last handed over
reg [31:0] rd_drops = 0;
reg rd_ack = 1'b0;
(* ASYNC_REG = "TRUE" *) reg rd_req_cdc1 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg rd_req_cdc2 = 1'b0;
reg out_valid = 1'b0;
reg [W-1:0] out_data = 0;

// ---- Write side (s_clk).
wire [ADDR_W:0] rd_sync = gray2bin(rd_gray_cdc2);
wire full = wr_ptr == {~rd_sync[ADDR_W], rd_sync[ADDR_W-1:0]};
wire wr_en = s_axis_tvalid & ~dropping & ~full & ~s_reset;

always @(posedge s_clk)
    if (wr_en) mem[wr_ptr[ADDR_W-1:0]] <= {s_axis_tuser, s_axis_tlast, s_axis_tkeep, s_axis_tdata};

always @(posedge s_clk) begin
    rd_gray_cdc1 <= rd_gray;
    rd_gray_cdc2 <= rd_gray_cdc1;
    if (s_reset) begin
        wr_ptr <= 0;
        wr_commit <= 0;
        dropping <= 1'b0;
        drops <= 0;
        rd_gray_cdc1 <= 0;
        rd_gray_cdc2 <= 0;
    end else if (s_axis_tvalid) begin
        if (dropping | full) begin
            // Discard the frame: forget its beats, ignore the rest up to tlast, count it.
            wr_ptr <= wr_commit;
            dropping <= ~s_axis_tlast;
            if (s_axis_tlast) drops <= drops + 32'd1;
        end else begin
            wr_ptr <= wr_ptr + PTR_ONE;
            if (s_axis_tlast) wr_commit <= wr_ptr + PTR_ONE;
        end
    end
end

// Handshake: wr_hold_* stays stable from a req toggle until its ack returns.
always @(posedge s_clk) begin
    wr_ack_cdc1 <= rd_ack;
    wr_ack_cdc2 <= wr_ack_cdc1;
    if (s_reset) begin
        wr_hold_ptr <= 0;
        wr_hold_drops <= 0;
        wr_req <= 1'b0;
        wr_ack_cdc1 <= 1'b0;
        wr_ack_cdc2 <= 1'b0;
    end else if (wr_req == wr_ack_cdc2 && (wr_hold_ptr != wr_commit || wr_hold_drops != drops)) begin
        wr_hold_ptr <= wr_commit;
        wr_hold_drops <= drops;
        wr_req <= ~wr_req;
    end
end

// ---- Read side (m_clk).
wire empty = rd_ptr == rd_commit;
wire rd_en = ~empty & (~out_valid | m_axis_tready) & ~m_reset;

always @(posedge m_clk)
    if (rd_en) out_data <= mem[rd_ptr[ADDR_W-1:0]];

always @(posedge m_clk) begin
    rd_req_cdc1 <= wr_req;
    rd_req_cdc2 <= rd_req_cdc1;
    if (m_reset) begin
        rd_ptr <= 0;
        rd_gray <= 0;
        rd_commit <= 0;
        rd_drops <= 0;
        rd_ack <= 1'b0;
        rd_req_cdc1 <= 1'b0;
        rd_req_cdc2 <= 1'b0;
        out_valid <= 1'b0;
    end else begin
        if (rd_req_cdc2 != rd_ack) begin
            rd_commit <= wr_hold_ptr;
            rd_drops <= wr_hold_drops;
            rd_ack <= rd_req_cdc2;
        end
        if (rd_en) begin
            rd_ptr <= rd_ptr + PTR_ONE;
            rd_gray <= bin2gray(rd_ptr + PTR_ONE);
            out_valid <= 1'b1;
        end else if (m_axis_tready) begin
            out_valid <= 1'b0;
        end
    end
end

assign m_axis_tvalid = out_valid;
assign {m_axis_tuser, m_axis_tlast, m_axis_tkeep, m_axis_tdata} = out_data;
assign m_drop_count = rd_drops;

endmodule // fanin_rx_fifo
