// Icarus testbench for fanin_board_regs (gen/tests/boards.rs): an AXI4-Lite master issues
// reads and writes on both sides of the window; a core model answers after random delays
// (and prints what reaches it, checking that AW and W arrive together). Output lines:
//   R addr data resp      a read as the master saw it
//   W addr resp           a write's response as the master saw it
//   CW addr data          a write that reached the core
//   CR addr               a read that reached the core
//   F bits                the RS-FEC enables after a write
// The window's parameters and contents are those of a two-port Alveo wrapper.
`timescale 1ns / 1ps
module tb;
localparam PORTS = 2;
reg clk = 1'b0;
always #5 clk = ~clk;
reg rst = 1'b1;
integer seed = 7;

reg [31:0] awaddr = 0, wdata = 0, araddr = 0;
reg [3:0] wstrb = 4'hf;
wire [PORTS-1:0] rsfec;
// Port p's counter k reads {16'hb0b0, p, k} (high word), {16'h5a5a, p, k} (low word).
reg [64*3*PORTS-1:0] stats;
integer sp, sk;
initial
    for (sp = 0; sp < PORTS; sp = sp + 1)
        for (sk = 0; sk < 3; sk = sk + 1)
            stats[64*(3*sp + sk) +: 64] = {16'hb0b0, sp[7:0], sk[7:0], 16'h5a5a, sp[7:0], sk[7:0]};
reg awvalid = 1'b0, wvalid = 1'b0, bready = 1'b0, arvalid = 1'b0, rready = 1'b0;
wire awready, wready, bvalid, arready, rvalid;
wire [1:0] bresp, rresp;
wire [31:0] rdata;

wire [15:0] c_awaddr, c_araddr;
wire [31:0] c_wdata;
wire [3:0] c_wstrb;
wire c_awvalid, c_wvalid, c_bready, c_arvalid, c_rready;
reg c_awready = 1'b0, c_wready = 1'b0, c_bvalid = 1'b0, c_arready = 1'b0, c_rvalid = 1'b0;
reg [31:0] c_rdata = 0;

fanin_board_regs #(
    .PORTS(PORTS),
    .RX_DROPS(16'h0000),
    .STATUS(16'h0040),
    .RSFEC(16'h0044),
    .INFO(16'h0048),
    .INFO_VALUE(32'hfb0a0202),
    .PORTS_BASE(16'h0100),
    .PORT_STRIDE(16'h0040),
    .PORT_LINK(16'h0000),
    .PORT_COUNTERS(16'h0008),
    .COUNTERS(3),
    .STATUS_W(1),
    .LINK_W(6),
    .RSFEC_MASK(2'h3),
    .RSFEC_RESET(2'h3)
) dut (
    .clk(clk), .rst(rst),
    .s_axil_awaddr(awaddr), .s_axil_awvalid(awvalid), .s_axil_awready(awready),
    .s_axil_wdata(wdata), .s_axil_wstrb(wstrb), .s_axil_wvalid(wvalid), .s_axil_wready(wready),
    .s_axil_bresp(bresp), .s_axil_bvalid(bvalid), .s_axil_bready(bready),
    .s_axil_araddr(araddr), .s_axil_arvalid(arvalid), .s_axil_arready(arready),
    .s_axil_rdata(rdata), .s_axil_rresp(rresp), .s_axil_rvalid(rvalid), .s_axil_rready(rready),
    .m_axil_awaddr(c_awaddr), .m_axil_awvalid(c_awvalid), .m_axil_awready(c_awready),
    .m_axil_wdata(c_wdata), .m_axil_wstrb(c_wstrb), .m_axil_wvalid(c_wvalid), .m_axil_wready(c_wready),
    .m_axil_bresp(2'b00), .m_axil_bvalid(c_bvalid), .m_axil_bready(c_bready),
    .m_axil_araddr(c_araddr), .m_axil_arvalid(c_arvalid), .m_axil_arready(c_arready),
    .m_axil_rdata(c_rdata), .m_axil_rresp(2'b00), .m_axil_rvalid(c_rvalid), .m_axil_rready(c_rready),
    .rx_drops({32'h0000_0022, 32'h0000_0011}),
    .stats(stats),
    .status_async(1'b1),
    .link_async({6'b100001, 6'b000011}),
    .rsfec(rsfec)
);

// ---- Core model: accepts AW and W in the same cycle after a random wait, answers reads
// with a pattern of the address.
always @(posedge clk) begin
    c_awready <= 1'b0;
    c_wready <= 1'b0;
    c_arready <= 1'b0;
    if (c_bvalid && c_bready) c_bvalid <= 1'b0;
    if (c_rvalid && c_rready) c_rvalid <= 1'b0;
    if (c_awvalid != c_wvalid) $display("ERR AW and W not presented together");
    if (c_awvalid && c_wvalid && !c_awready && !c_bvalid && ({$random(seed)} % 3) == 0) begin
        c_awready <= 1'b1;
        c_wready <= 1'b1;
        c_bvalid <= 1'b1;
        $display("CW %04x %08x", c_awaddr, c_wdata);
    end
    if (c_arvalid && !c_arready && !c_rvalid && ({$random(seed)} % 3) == 0) begin
        c_arready <= 1'b1;
        c_rvalid <= 1'b1;
        c_rdata <= {16'hc0de, c_araddr};
        $display("CR %04x", c_araddr);
    end
end

task read(input [31:0] a);
    begin
        araddr <= a;
        arvalid <= 1'b1;
        @(posedge clk);
        while (!arready) @(posedge clk);
        arvalid <= 1'b0;
        rready <= 1'b1;
        @(posedge clk);
        while (!rvalid) @(posedge clk);
        $display("R %08x %08x %0d", a, rdata, rresp);
        rready <= 1'b0;
        @(posedge clk);
    end
endtask

// AW first, W a few cycles later (allowed by AXI): the split must still hand both to the
// core together.
task write(input [31:0] a, input [31:0] d);
    begin
        awaddr <= a;
        awvalid <= 1'b1;
        @(posedge clk);
        while (!awready) @(posedge clk);
        awvalid <= 1'b0;
        repeat (3) @(posedge clk);
        wdata <= d;
        wvalid <= 1'b1;
        @(posedge clk);
        while (!wready) @(posedge clk);
        wvalid <= 1'b0;
        bready <= 1'b1;
        @(posedge clk);
        while (!bvalid) @(posedge clk);
        $display("W %08x %0d", a, bresp);
        if (a[31:16] != 16'd0) $display("F %b", rsfec);
        bready <= 1'b0;
        @(posedge clk);
    end
endtask

initial begin
    repeat (3) @(posedge clk);
    rst <= 1'b0;
    repeat (5) @(posedge clk);
    read(32'h0000_0040);
    read(32'h0001_0000);
    read(32'h0001_0004);
    read(32'h0001_0008);
    read(32'h0001_0040);
    read(32'h0001_0044);
    read(32'h0001_0048);
    read(32'h0001_0100);
    read(32'h0001_0140);
    read(32'h0001_0108);
    read(32'h0001_010c);
    read(32'h0001_0110);
    read(32'h0001_0118);
    read(32'h0001_0158);
    read(32'h0001_015c);
    write(32'h0000_0044, 32'h1234_5678);
    write(32'h0001_0000, 32'hdead_beef);
    write(32'h0001_0048, 32'h0000_0000);
    write(32'h0001_0044, 32'h0000_0002);
    read(32'h0001_0044);
    wstrb <= 4'h0;
    write(32'h0001_0044, 32'hffff_ffff);
    wstrb <= 4'hf;
    write(32'h0001_0044, 32'hffff_fffd);
    read(32'h0001_0200);
    read(32'h0000_0a00);
    $display("END");
    $finish;
end

initial begin
    #100000;
    $display("TIMEOUT");
    $finish;
end
endmodule
