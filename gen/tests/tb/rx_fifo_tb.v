// Icarus testbench for fanin_rx_fifo (gen/tests/boards.rs): a MAC-like writer that never
// waits (no tready) pushes FRAMES random frames, some longer than the FIFO and some marked
// bad; the reader stalls in long bursts (STALL) or never (STALL = 0). It prints
//   TX hex u     every frame pushed (bytes in order; u: tuser on tlast)
//   RX hex u     every frame that came out
//   DROPS n      the FIFO's drop counter once everything has drained
//   MID n        frames dropped after some of their beats were written (rolled back)
// and ERR lines for malformed output beats (a tkeep hole, tkeep on a non-last beat).
`timescale 1ns / 1ps
module tb;
parameter DATA_W = 64;
parameter ADDR_W = 5;
parameter SEED = 1;
parameter FRAMES = 200;
parameter STALL = 1;
// Longest frame in bytes: a little more than the FIFO holds, so that some always drop.
parameter MAX_LEN = (1 << ADDR_W) * (DATA_W / 8) + 3 * (DATA_W / 8);
parameter real S_HALF = 3.2;
parameter real M_HALF = 2.5;
localparam KEEP_W = DATA_W / 8;

reg s_clk = 1'b0, m_clk = 1'b0;
always #(S_HALF) s_clk = ~s_clk;
always #(M_HALF) m_clk = ~m_clk;
reg s_rst = 1'b1, m_rst = 1'b1;

reg [DATA_W-1:0] s_tdata = 0;
reg [KEEP_W-1:0] s_tkeep = 0;
reg s_tvalid = 1'b0, s_tlast = 1'b0, s_tuser = 1'b0;
wire [DATA_W-1:0] m_tdata;
wire [KEEP_W-1:0] m_tkeep;
wire m_tvalid, m_tlast, m_tuser;
reg m_tready = 1'b0;
wire [31:0] drops;

fanin_rx_fifo #(
    .DATA_W(DATA_W),
    .ADDR_W(ADDR_W)
) dut (
    .s_clk(s_clk),
    .s_rst(s_rst),
    .s_axis_tdata(s_tdata),
    .s_axis_tkeep(s_tkeep),
    .s_axis_tvalid(s_tvalid),
    .s_axis_tlast(s_tlast),
    .s_axis_tuser(s_tuser),
    .m_clk(m_clk),
    .m_rst(m_rst),
    .m_axis_tdata(m_tdata),
    .m_axis_tkeep(m_tkeep),
    .m_axis_tvalid(m_tvalid),
    .m_axis_tready(m_tready),
    .m_axis_tlast(m_tlast),
    .m_axis_tuser(m_tuser),
    .m_drop_count(drops)
);

integer seed = SEED;
integer f, len, i, k, r;
reg [7:0] frame [0:MAX_LEN-1];
reg writing = 1'b1;

// ---- Writer (s_clk): back-to-back beats, random idle cycles between and inside frames.
initial begin
    repeat (5) @(posedge s_clk);
    s_rst <= 1'b0;
    repeat (20) @(posedge s_clk);
    for (f = 0; f < FRAMES; f = f + 1) begin
        r = $random(seed);
        len = 1 + ({r} % MAX_LEN);
        if (({r} >> 20) % 2 == 0) len = 1 + ({r} % (4 * KEEP_W)); // many short frames
        for (i = 0; i < len; i = i + 1) frame[i] = $random(seed);
        r = $random(seed);
        s_tuser <= 1'b0;
        $write("TX ");
        for (i = 0; i < len; i = i + 1) $write("%02x", frame[i]);
        $write(" %0d\n", ({r} % 8) == 0);
        for (i = 0; i < len; i = i + KEEP_W) begin
            while (({$random(seed)} % 16) == 0) begin
                s_tvalid <= 1'b0;
                @(posedge s_clk);
            end
            for (k = 0; k < KEEP_W; k = k + 1) begin
                s_tdata[8*k +: 8] <= i + k < len ? frame[i + k] : 8'hxx;
                s_tkeep[k] <= i + k < len;
            end
            s_tvalid <= 1'b1;
            s_tlast <= i + KEEP_W >= len;
            s_tuser <= i + KEEP_W >= len ? ({r} % 8) == 0 : 1'b0;
            @(posedge s_clk);
        end
        s_tvalid <= 1'b0;
        s_tlast <= 1'b0;
        repeat ({$random(seed)} % 4) @(posedge s_clk);
    end
    s_tvalid <= 1'b0;
    writing = 1'b0;
end

// ---- Reader (m_clk): long stalls (with STALL) so that the FIFO overflows.
integer stall_left = 0;
integer run_left = 0;
always @(posedge m_clk) begin
    if (!STALL || !writing) begin
        m_tready <= 1'b1;
    end else if (stall_left > 0) begin
        stall_left = stall_left - 1;
        m_tready <= 1'b0;
    end else if (run_left > 0) begin
        run_left = run_left - 1;
        m_tready <= ({$random(seed)} % 4) != 0;
    end else begin
        stall_left = {$random(seed)} % (8 << ADDR_W);
        run_left = {$random(seed)} % (8 << ADDR_W);
        m_tready <= 1'b0;
    end
end

integer n = 0, b;
reg [7:0] rxf [0:MAX_LEN-1];
always @(posedge m_clk) if (m_tvalid && m_tready) begin
    for (b = 0; b < KEEP_W; b = b + 1) begin
        if (m_tkeep[b]) begin
            if (b > 0 && !m_tkeep[b - 1]) $display("ERR tkeep hole");
            if (n < MAX_LEN) rxf[n] = m_tdata[8*b +: 8];
            n = n + 1;
        end
    end
    if (!m_tlast && m_tkeep != {KEEP_W{1'b1}}) $display("ERR partial beat before tlast");
    if (m_tlast) begin
        if (n > MAX_LEN) $display("ERR frame of %0d bytes, longer than any pushed", n);
        $write("RX ");
        for (b = 0; b < n && b < MAX_LEN; b = b + 1) $write("%02x", rxf[b]);
        $write(" %0d\n", m_tuser);
        n = 0;
    end
end

// Frames the FIFO started to store and then had to roll back (full in mid-frame).
integer mid = 0;
always @(posedge s_clk)
    if (s_tvalid && !dut.dropping && dut.full && dut.wr_ptr != dut.wr_commit) mid = mid + 1;

initial begin
    repeat (3) @(posedge m_clk);
    m_rst <= 1'b0;
    wait (!writing);
    repeat (20 << ADDR_W) @(posedge m_clk);
    $display("DROPS %0d", drops);
    $display("MID %0d", mid);
    $finish;
end
endmodule
