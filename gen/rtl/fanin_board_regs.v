// fanin_board_regs: splits an AXI4-Lite bus between the core and the board register window
// (addresses with any of bits 31:16 set; offsets from regs/src/board.rs, passed in by the
// generated wrapper).
//
// * core: addresses 0x0000..0xffff, passed on with the low 16 address bits; AW and W are
//   presented to the core together (the core needs awvalid and wvalid together).
// * window (read-only except RSFEC):
//   RX_DROPS + 4p (p < PORTS): frames RX FIFO p dropped whole (wraps);
//   STATUS: board status bits; RSFEC: bit p = RS-FEC on port p (writable where RSFEC_MASK
//   has the bit, reset RSFEC_RESET); INFO: INFO_VALUE (board and port count);
//   PORTS_BASE + PORT_STRIDE p + PORT_LINK: port p's link status bits;
//   PORTS_BASE + PORT_STRIDE p + PORT_COUNTERS + 8k (+4): port p's 64-bit counter k, low word
//   then high word (stats, already crossed into clk by fanin_mac_stats).
//   Other window addresses read 0. Writes to the window other than RSFEC are refused with
//   SLVERR and never reach the core.
// One read and one write transaction at a time (the masters issue one at a time).
module fanin_board_regs #(
    parameter PORTS = 4,
    parameter [15:0] RX_DROPS = 16'h0000,
    parameter [15:0] STATUS = 16'h0040,
    parameter [15:0] RSFEC = 16'h0044,
    parameter [15:0] INFO = 16'h0048,
    parameter [31:0] INFO_VALUE = 32'h0,
    parameter [15:0] PORTS_BASE = 16'h0100,
    parameter [15:0] PORT_STRIDE = 16'h0040,
    parameter [15:0] PORT_LINK = 16'h0000,
    parameter [15:0] PORT_COUNTERS = 16'h0008,
    parameter COUNTERS = 3,
    parameter STATUS_W = 2,
    parameter LINK_W = 1,
    parameter [PORTS-1:0] RSFEC_MASK = {PORTS{1'b0}},
    parameter [PORTS-1:0] RSFEC_RESET = {PORTS{1'b0}}
) (
    input  wire                clk,
    input  wire                rst,

    // From the master (32-bit byte addresses).
    input  wire [31:0]         s_axil_awaddr,
    input  wire                s_axil_awvalid,
    output wire                s_axil_awready,
    input  wire [31:0]         s_axil_wdata,
    input  wire [3:0]          s_axil_wstrb,
    input  wire                s_axil_wvalid,
    output wire                s_axil_wready,
    output wire [1:0]          s_axil_bresp,
    output wire                s_axil_bvalid,
    input  wire                s_axil_bready,
    input  wire [31:0]         s_axil_araddr,
    input  wire                s_axil_arvalid,
    output wire                s_axil_arready,
    output wire [31:0]         s_axil_rdata,
    output wire [1:0]          s_axil_rresp,
    output wire                s_axil_rvalid,
    input  wire                s_axil_rready,

    // To the core (16-bit byte addresses).
    output wire [15:0]         m_axil_awaddr,
    output wire                m_axil_awvalid,
    input  wire                m_axil_awready,
    output wire [31:0]         m_axil_wdata,
    output wire [3:0]          m_axil_wstrb,
    output wire                m_axil_wvalid,
    input  wire                m_axil_wready,
    input  wire [1:0]          m_axil_bresp,
    input  wire                m_axil_bvalid,
    output wire                m_axil_bready,
    output wire [15:0]         m_axil_araddr,
    output wire                m_axil_arvalid,
    input  wire                m_axil_arready,
    input  wire [31:0]         m_axil_rdata,
    input  wire [1:0]          m_axil_rresp,
    input  wire                m_axil_rvalid,
    output wire                m_axil_rready,

    // Window contents: per-port drop counters and MAC statistics (clk domain); status and
    // link bits (any domain: synchronised here; each bit is a slow level).
    input  wire [32*PORTS-1:0] rx_drops,
    input  wire [64*COUNTERS*PORTS-1:0] stats,
    input  wire [STATUS_W-1:0] status_async,
    input  wire [LINK_W*PORTS-1:0] link_async,
    // RS-FEC enables (clk domain; the wrapper synchronises them into each MAC's clock).
    output reg  [PORTS-1:0]    rsfec = RSFEC_RESET
);

localparam [1:0] IDLE = 2'd0, CORE = 2'd1, LOCAL = 2'd2;

(* ASYNC_REG = "TRUE" *) reg [STATUS_W-1:0] status_cdc1 = 0;
(* ASYNC_REG = "TRUE" *) reg [STATUS_W-1:0] status_cdc2 = 0;
(* ASYNC_REG = "TRUE" *) reg [LINK_W*PORTS-1:0] link_cdc1 = 0;
(* ASYNC_REG = "TRUE" *) reg [LINK_W*PORTS-1:0] link_cdc2 = 0;
always @(posedge clk) begin
    status_cdc1 <= status_async;
    status_cdc2 <= status_cdc1;
    link_cdc1 <= link_async;
    link_cdc2 <= link_cdc1;
end

function [31:0] window(input [15:0] a);
    integer p, k;
    reg [15:0] blk;
    begin
        window = 32'd0;
        for (p = 0; p < PORTS; p = p + 1) begin
            if (a == RX_DROPS + 16'd4 * p[15:0]) window = rx_drops[32*p +: 32];
            blk = PORTS_BASE + PORT_STRIDE * p[15:0];
            if (a == blk + PORT_LINK) window[LINK_W-1:0] = link_cdc2[LINK_W*p +: LINK_W];
            for (k = 0; k < COUNTERS; k = k + 1) begin
                if (a == blk + PORT_COUNTERS + 16'd8 * k[15:0])
                    window = stats[64*(COUNTERS*p + k) +: 32];
                if (a == blk + PORT_COUNTERS + 16'd8 * k[15:0] + 16'd4)
                    window = stats[64*(COUNTERS*p + k) + 32 +: 32];
            end
        end
        if (a == STATUS) window[STATUS_W-1:0] = status_cdc2;
        if (a == RSFEC) window[PORTS-1:0] = rsfec;
        if (a == INFO) window = INFO_VALUE;
    end
endfunction

// RS-FEC after a write of d with byte strobes s: the bits of RSFEC_MASK whose byte is
// strobed take d's value, the others keep theirs.
function [PORTS-1:0] rsfec_next(input [31:0] d, input [3:0] s);
    integer i;
    begin
        rsfec_next = rsfec;
        for (i = 0; i < PORTS; i = i + 1)
            if (RSFEC_MASK[i] && s[i / 8]) rsfec_next[i] = d[i];
    end
endfunction

// ---- Writes: capture AW and W, then send both to the core, or refuse a window write.
reg [1:0] wstate = IDLE;
reg aw_full = 1'b0, w_full = 1'b0, aw_sent = 1'b0, w_sent = 1'b0, w_ok = 1'b0;
reg [31:0] aw_addr = 0, w_data = 0;
reg [3:0] w_strb = 0;
assign s_axil_awready = wstate == IDLE && !aw_full;
assign s_axil_wready = wstate == IDLE && !w_full;
assign m_axil_awaddr = aw_addr[15:0];
assign m_axil_awvalid = wstate == CORE && !aw_sent;
assign m_axil_wdata = w_data;
assign m_axil_wstrb = w_strb;
assign m_axil_wvalid = wstate == CORE && !w_sent;
assign m_axil_bready = wstate == CORE && aw_sent && w_sent && s_axil_bready;
assign s_axil_bvalid = wstate == LOCAL || (wstate == CORE && aw_sent && w_sent && m_axil_bvalid);
assign s_axil_bresp = wstate == LOCAL ? (w_ok ? 2'b00 : 2'b10) : m_axil_bresp;

always @(posedge clk) begin
    if (rst) begin
        wstate <= IDLE;
        aw_full <= 1'b0;
        w_full <= 1'b0;
        aw_sent <= 1'b0;
        w_sent <= 1'b0;
        w_ok <= 1'b0;
        rsfec <= RSFEC_RESET;
    end else begin
        case (wstate)
            IDLE: begin
                if (s_axil_awvalid && s_axil_awready) begin
                    aw_full <= 1'b1;
                    aw_addr <= s_axil_awaddr;
                end
                if (s_axil_wvalid && s_axil_wready) begin
                    w_full <= 1'b1;
                    w_data <= s_axil_wdata;
                    w_strb <= s_axil_wstrb;
                end
                if (aw_full && w_full) begin
                    wstate <= aw_addr[31:16] != 16'd0 ? LOCAL : CORE;
                    aw_sent <= 1'b0;
                    w_sent <= 1'b0;
                    // The one writable window register; the write takes effect here.
                    w_ok <= 1'b0;
                    if (aw_addr[31:16] != 16'd0 && aw_addr[15:0] == RSFEC && RSFEC_MASK != 0) begin
                        w_ok <= 1'b1;
                        rsfec <= rsfec_next(w_data, w_strb);
                    end
                end
            end
            CORE: begin
                if (m_axil_awvalid && m_axil_awready) aw_sent <= 1'b1;
                if (m_axil_wvalid && m_axil_wready) w_sent <= 1'b1;
                if (s_axil_bvalid && s_axil_bready) begin
                    wstate <= IDLE;
                    aw_full <= 1'b0;
                    w_full <= 1'b0;
                end
            end
            default: begin
                if (s_axil_bready) begin
                    wstate <= IDLE;
                    aw_full <= 1'b0;
                    w_full <= 1'b0;
                end
            end
        endcase
    end
end

// ---- Reads: capture AR, then ask the core or answer from the window.
reg [1:0] rstate = IDLE;
reg ar_sent = 1'b0;
reg [15:0] ar_addr = 0;
reg [31:0] r_data = 0;
assign s_axil_arready = rstate == IDLE;
assign m_axil_araddr = ar_addr;
assign m_axil_arvalid = rstate == CORE && !ar_sent;
assign m_axil_rready = rstate == CORE && ar_sent && s_axil_rready;
assign s_axil_rvalid = rstate == LOCAL || (rstate == CORE && ar_sent && m_axil_rvalid);
assign s_axil_rdata = rstate == LOCAL ? r_data : m_axil_rdata;
assign s_axil_rresp = rstate == LOCAL ? 2'b00 : m_axil_rresp;

always @(posedge clk) begin
    if (rst) begin
        rstate <= IDLE;
        ar_sent <= 1'b0;
    end else begin
        case (rstate)
            IDLE: begin
                if (s_axil_arvalid) begin
                    ar_addr <= s_axil_araddr[15:0];
                    ar_sent <= 1'b0;
                    r_data <= window(s_axil_araddr[15:0]);
                    rstate <= s_axil_araddr[31:16] != 16'd0 ? LOCAL : CORE;
                end
            end
            CORE: begin
                if (m_axil_arvalid && m_axil_arready) ar_sent <= 1'b1;
                if (s_axil_rvalid && s_axil_rready) rstate <= IDLE;
            end
            default: begin
                if (s_axil_rready) rstate <= IDLE;
            end
        endcase
    end
end

endmodule // fanin_board_regs
