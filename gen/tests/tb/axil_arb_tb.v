// Icarus testbench for fanin_axil_arb (gen/tests/boards.rs): two AXI4-Lite masters (PCIe
// and JTAG stand-ins) hammer one slave at the same time. Each master writes random words
// to its own 16 registers (AW and W offered in random order and skew) and reads registers
// back, checking every read against its own shadow copy and every response code; the slave
// is a plain register file with random ready and response delays that takes AW and W
// independently. Output lines:
//   ERR ...            a wrong read, a wrong response code, or a protocol error
//   DONE m writes reads   master m finished
//   SWITCH n           grants that changed master (the masters really interleaved)
`timescale 1ns / 1ps

module axil_master_model #(
    parameter ID = 0,
    parameter [31:0] BASE = 32'h0,
    parameter SEED = 1,
    parameter N = 300
) (
    input  wire        clk,
    output reg  [31:0] awaddr = 0,
    output reg         awvalid = 1'b0,
    input  wire        awready,
    output reg  [31:0] wdata = 0,
    output reg         wvalid = 1'b0,
    input  wire        wready,
    input  wire [1:0]  bresp,
    input  wire        bvalid,
    output reg         bready = 1'b0,
    output reg  [31:0] araddr = 0,
    output reg         arvalid = 1'b0,
    input  wire        arready,
    input  wire [31:0] rdata,
    input  wire [1:0]  rresp,
    input  wire        rvalid,
    output reg         rready = 1'b0
);
integer seed = SEED;
reg [31:0] shadow [0:15];
integer i, k, skew, writes = 0, reads = 0;
reg aw_ok, w_ok;
reg [31:0] d;
initial begin
    for (i = 0; i < 16; i = i + 1) shadow[i] = 32'd0;
    @(posedge clk);
    repeat (20) @(posedge clk);
    for (i = 0; i < N; i = i + 1) begin
        k = {$random(seed)} % 16;
        if ({$random(seed)} % 2 == 0) begin
            // Write: AW and W offered with a random skew, either first.
            d = $random(seed);
            skew = {$random(seed)} % 7 - 3;
            aw_ok = 1'b0;
            w_ok = 1'b0;
            awaddr <= BASE + 4 * k;
            wdata <= d;
            if (skew <= 0) awvalid <= 1'b1;
            if (skew >= 0) wvalid <= 1'b1;
            while (!(aw_ok && w_ok)) begin
                @(posedge clk);
                if (awvalid && awready) begin
                    aw_ok = 1'b1;
                    awvalid <= 1'b0;
                end
                if (wvalid && wready) begin
                    w_ok = 1'b1;
                    wvalid <= 1'b0;
                end
                if (skew > 0 && !aw_ok && !awvalid) begin
                    skew = skew - 1;
                    if (skew == 0) awvalid <= 1'b1;
                end
                if (skew < 0 && !w_ok && !wvalid) begin
                    skew = skew + 1;
                    if (skew == 0) wvalid <= 1'b1;
                end
                if (bvalid) $display("ERR m%0d: B before AW and W", ID);
            end
            bready <= 1'b1;
            @(posedge clk);
            while (!bvalid) @(posedge clk);
            bready <= 1'b0;
            if (bresp != 2'b00) $display("ERR m%0d: write %0d bresp %0d", ID, k, bresp);
            shadow[k] = d;
            writes = writes + 1;
        end else begin
            araddr <= BASE + 4 * k;
            arvalid <= 1'b1;
            @(posedge clk);
            while (!arready) @(posedge clk);
            arvalid <= 1'b0;
            rready <= 1'b1;
            @(posedge clk);
            while (!rvalid) @(posedge clk);
            rready <= 1'b0;
            if (rdata !== shadow[k] || rresp != 2'b00)
                $display("ERR m%0d: read %0d got %08x resp %0d, wrote %08x", ID, k, rdata, rresp, shadow[k]);
            reads = reads + 1;
        end
        repeat ({$random(seed)} % 3) @(posedge clk);
    end
    $display("DONE %0d %0d %0d", ID, writes, reads);
end
endmodule

module tb;
parameter SEED = 1;
reg clk = 1'b0;
always #2 clk = ~clk;
reg rst = 1'b1;
initial begin
    repeat (4) @(posedge clk);
    rst <= 1'b0;
end

wire [31:0] awaddr0, wdata0, araddr0, rdata0, awaddr1, wdata1, araddr1, rdata1;
wire awvalid0, awready0, wvalid0, wready0, bvalid0, bready0, arvalid0, arready0, rvalid0, rready0;
wire awvalid1, awready1, wvalid1, wready1, bvalid1, bready1, arvalid1, arready1, rvalid1, rready1;
wire [1:0] bresp0, rresp0, bresp1, rresp1;

axil_master_model #(.ID(0), .BASE(32'h0000_0100), .SEED(SEED)) m0 (
    .clk(clk), .awaddr(awaddr0), .awvalid(awvalid0), .awready(awready0),
    .wdata(wdata0), .wvalid(wvalid0), .wready(wready0),
    .bresp(bresp0), .bvalid(bvalid0), .bready(bready0),
    .araddr(araddr0), .arvalid(arvalid0), .arready(arready0),
    .rdata(rdata0), .rresp(rresp0), .rvalid(rvalid0), .rready(rready0));
axil_master_model #(.ID(1), .BASE(32'h0000_0200), .SEED(SEED + 100)) m1 (
    .clk(clk), .awaddr(awaddr1), .awvalid(awvalid1), .awready(awready1),
    .wdata(wdata1), .wvalid(wvalid1), .wready(wready1),
    .bresp(bresp1), .bvalid(bvalid1), .bready(bready1),
    .araddr(araddr1), .arvalid(arvalid1), .arready(arready1),
    .rdata(rdata1), .rresp(rresp1), .rvalid(rvalid1), .rready(rready1));

wire [31:0] m_awaddr, m_wdata, m_araddr;
wire [3:0] m_wstrb;
wire m_awvalid, m_wvalid, m_bready, m_arvalid, m_rready;
reg m_awready = 1'b0, m_wready = 1'b0, m_bvalid = 1'b0, m_arready = 1'b0, m_rvalid = 1'b0;
reg [31:0] m_rdata = 0;

fanin_axil_arb #(.AW(32)) dut (
    .clk(clk), .rst(rst),
    .s0_awaddr(awaddr0), .s0_awvalid(awvalid0), .s0_awready(awready0),
    .s0_wdata(wdata0), .s0_wstrb(4'hf), .s0_wvalid(wvalid0), .s0_wready(wready0),
    .s0_bresp(bresp0), .s0_bvalid(bvalid0), .s0_bready(bready0),
    .s0_araddr(araddr0), .s0_arvalid(arvalid0), .s0_arready(arready0),
    .s0_rdata(rdata0), .s0_rresp(rresp0), .s0_rvalid(rvalid0), .s0_rready(rready0),
    .s1_awaddr(awaddr1), .s1_awvalid(awvalid1), .s1_awready(awready1),
    .s1_wdata(wdata1), .s1_wstrb(4'hf), .s1_wvalid(wvalid1), .s1_wready(wready1),
    .s1_bresp(bresp1), .s1_bvalid(bvalid1), .s1_bready(bready1),
    .s1_araddr(araddr1), .s1_arvalid(arvalid1), .s1_arready(arready1),
    .s1_rdata(rdata1), .s1_rresp(rresp1), .s1_rvalid(rvalid1), .s1_rready(rready1),
    .m_awaddr(m_awaddr), .m_awvalid(m_awvalid), .m_awready(m_awready),
    .m_wdata(m_wdata), .m_wstrb(m_wstrb), .m_wvalid(m_wvalid), .m_wready(m_wready),
    .m_bresp(2'b00), .m_bvalid(m_bvalid), .m_bready(m_bready),
    .m_araddr(m_araddr), .m_arvalid(m_arvalid), .m_arready(m_arready),
    .m_rdata(m_rdata), .m_rresp(2'b00), .m_rvalid(m_rvalid), .m_rready(m_rready)
);

// ---- Slave: a register file (addresses 0x100..0x2ff); AW and W taken independently after
// random waits, B once both are in; AR after a random wait, R later.
integer sseed = SEED + 7;
reg [31:0] mem [0:127];
integer j;
initial for (j = 0; j < 128; j = j + 1) mem[j] = 32'd0;
reg have_aw = 1'b0, have_w = 1'b0, have_ar = 1'b0;
reg [31:0] aw_a = 0, w_d = 0, ar_a = 0;
always @(posedge clk) begin
    m_awready <= 1'b0;
    m_wready <= 1'b0;
    m_arready <= 1'b0;
    if (m_awvalid && m_awready) begin
        have_aw <= 1'b1;
        aw_a <= m_awaddr;
    end
    if (m_wvalid && m_wready) begin
        have_w <= 1'b1;
        w_d <= m_wdata;
    end
    if (m_awvalid && !m_awready && !have_aw && ({$random(sseed)} % 3) == 0) m_awready <= 1'b1;
    if (m_wvalid && !m_wready && !have_w && ({$random(sseed)} % 3) == 0) m_wready <= 1'b1;
    if (have_aw && have_w && !m_bvalid && ({$random(sseed)} % 2) == 0) begin
        mem[aw_a[8:2]] <= w_d;
        m_bvalid <= 1'b1;
        have_aw <= 1'b0;
        have_w <= 1'b0;
    end
    if (m_bvalid && m_bready) m_bvalid <= 1'b0;
    if (m_arvalid && m_arready) begin
        have_ar <= 1'b1;
        ar_a <= m_araddr;
    end
    if (m_arvalid && !m_arready && !have_ar && ({$random(sseed)} % 3) == 0) m_arready <= 1'b1;
    if (have_ar && !m_rvalid && ({$random(sseed)} % 2) == 0) begin
        m_rdata <= mem[ar_a[8:2]];
        m_rvalid <= 1'b1;
        have_ar <= 1'b0;
    end
    if (m_rvalid && m_rready) m_rvalid <= 1'b0;
    // A second AW or AR while one is outstanding would be a protocol error of the arbiter.
    if (m_awvalid && have_aw) $display("ERR second AW before B");
    if (m_arvalid && have_ar) $display("ERR second AR before R");
end

// Grants that change master, per direction.
integer switches = 0;
reg prev_w = 1'b0, prev_r = 1'b0;
always @(posedge clk) begin
    if (m_awvalid && m_awready) begin
        if (dut.w_sel != prev_w) switches = switches + 1;
        prev_w <= dut.w_sel;
    end
    if (m_arvalid && m_arready) begin
        if (dut.r_sel != prev_r) switches = switches + 1;
        prev_r <= dut.r_sel;
    end
end

initial begin
    wait (m0.i == 300 && m1.i == 300);
    repeat (10) @(posedge clk);
    $display("SWITCH %0d", switches);
    $finish;
end
initial begin
    #2000000;
    $display("TIMEOUT");
    $finish;
end
endmodule
