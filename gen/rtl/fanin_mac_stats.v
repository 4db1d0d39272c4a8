// fanin_mac_stats: N 64-bit event counters kept in a MAC's clock domain (s_clk) from the
// MAC's statistics increments, copied into the core's clock domain (m_clk) by a req/ack
// handshake, so a read on the core side sees every counter as it was at one instant of
// the MAC side, never a half-updated value.
//
// * s side: count[i] += s_inc[i] every cycle (INC_W-bit increments; a MAC may end several
//   frames in one cycle). The counters start at 0 at configuration and are never reset
//   (they count since the bitstream was loaded and wrap at 2^64).
// * Crossing: the m side toggles req; the s side, seeing req (two flops) differ from ack,
//   copies the counters into hold and sets ack = req; the m side, seeing ack (two flops)
//   equal to req, copies hold into m_count and toggles req again. hold changes only between
//   a req toggle and the ack that answers it, so it is stable while the m side samples it.
//   No reset: the loop starts from its configuration values and runs whatever either side's
//   reset does. An update reaches m_count every few cycles of the slower clock; if the MAC
//   clock stops, m_count keeps the last copy.
module fanin_mac_stats #(
    parameter N = 3,
    parameter INC_W = 3
) (
    input  wire               s_clk,
    input  wire [N*INC_W-1:0] s_inc,
    input  wire               m_clk,
    output reg  [64*N-1:0]    m_count = 0
);

reg req = 1'b0;

// ---- s side (MAC clock).
reg [64*N-1:0] count = 0;
reg [64*N-1:0] hold = 0;
reg ack = 1'b0;
(* ASYNC_REG = "TRUE" *) reg req_cdc1 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg req_cdc2 = 1'b0;
integer i;
always @(posedge s_clk) begin
    for (i = 0; i < N; i = i + 1)
        count[64*i +: 64] <= count[64*i +: 64] + {{(64-INC_W){1'b0}}, s_inc[INC_W*i +: INC_W]};
    req_cdc1 <= req;
    req_cdc2 <= req_cdc1;
    if (req_cdc2 != ack) begin
        hold <= count;
        ack <= req_cdc2;
    end
end

// ---- m side (core clock).
(* ASYNC_REG = "TRUE" *) reg ack_cdc1 = 1'b0;
(* ASYNC_REG = "TRUE" *) reg ack_cdc2 = 1'b0;
always @(posedge m_clk) begin
    ack_cdc1 <= ack;
    ack_cdc2 <= ack_cdc1;
    if (ack_cdc2 == req) begin
        m_count <= hold;
        req <= ~req;
    end
end

endmodule // fanin_mac_stats
