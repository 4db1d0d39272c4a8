// Icarus testbench for fanin_mac_stats (gen/tests/boards.rs): three counters in a MAC clock
// domain with random increments, read in a core clock domain of another frequency.
// The crossing's one timing rule is checked directly: the MAC side's hold register must not
// have changed for at least one core clock period when the core side copies it (on
// hardware a copy taken closer to a change could mix old and new bits). Counter 1 always
// gets twice counter 0's increment, so every copy must have c1 = 2·c0, and be >= the
// previous one. The counters start just below 2^32 (forced) so the carry into the high word
// is crossed too. Output lines:
//   ERR ...               a broken invariant
//   U n                   copies the core side took while the MAC side was counting
//   S c0 c1 c2            the MAC side's totals (what the testbench added)
//   M c0 c1 c2            the core side's copy once the increments stopped
`timescale 1ns / 1ps
module tb;
parameter SEED = 1;
parameter S_HALF = 1.55;
parameter M_HALF = 2.0;
parameter CYCLES = 3000;
parameter [63:0] START = 64'h0000_0000_ffff_f000;

reg s_clk = 1'b0, m_clk = 1'b0;
always #(S_HALF) s_clk = ~s_clk;
always #(M_HALF) m_clk = ~m_clk;
integer seed = SEED;

reg [8:0] inc = 9'd0;
wire [191:0] m_count;
fanin_mac_stats #(
    .N(3),
    .INC_W(3)
) dut (
    .s_clk(s_clk),
    .s_inc(inc),
    .m_clk(m_clk),
    .m_count(m_count)
);

reg [63:0] t0, t1, t2;
reg counting = 1'b1;
integer i, updates = 0;
reg [2:0] a, b;
initial begin
    #1;
    dut.count = {64'd0, START << 1, START};
    t0 = START;
    t1 = START << 1;
    t2 = 64'd0;
    for (i = 0; i < CYCLES; i = i + 1) begin
        @(negedge s_clk);
        a = {$random(seed)} % 4;
        b = {$random(seed)} % 8;
        inc = {b, a << 1, a};
        t0 = t0 + {61'd0, inc[2:0]};
        t1 = t1 + {61'd0, inc[5:3]};
        t2 = t2 + {61'd0, inc[8:6]};
    end
    @(negedge s_clk);
    inc = 9'd0;
    counting = 1'b0;
    repeat (40) @(posedge m_clk);
    $display("U %0d", updates);
    $display("S %0d %0d %0d", t0, t1, t2);
    $display("M %0d %0d %0d", m_count[63:0], m_count[127:64], m_count[191:128]);
    $finish;
end

realtime hold_changed = -100.0;
// (Time 0 is the registers' configuration values, not a change.)
always @(dut.hold) if ($realtime > 0.0) hold_changed = $realtime;
always @(posedge m_clk)
    if (dut.ack_cdc2 == dut.req && $realtime - hold_changed < 2.0 * M_HALF - 0.01)
        $display("ERR hold changed %0.2f ns before the core side copied it", $realtime - hold_changed);

reg [191:0] prev = 192'd0;
always @(posedge m_clk) begin
    if (m_count != prev) begin
        if (counting) updates = updates + 1;
        if (m_count[127:64] != m_count[63:0] << 1)
            $display("ERR torn copy: c0 %0d c1 %0d", m_count[63:0], m_count[127:64]);
        if (m_count[63:0] < prev[63:0] || m_count[127:64] < prev[127:64] || m_count[191:128] < prev[191:128])
            $display("ERR a counter went backwards");
        prev <= m_count;
    end
end
endmodule
