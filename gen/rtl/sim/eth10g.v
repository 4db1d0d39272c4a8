// SIMULATION ONLY: behavioural stand-ins for the Xilinx 10G Ethernet Subsystem
// (axi_10g_ethernet, ip/eth10g_shared.tcl with the shared logic, ip/eth10g_nonshared.tcl
// without), for the board-top Verilator simulation. Port lists: Xilinx's instantiation
// templates, as the SUME wrapper connects them.
//
// What they model: the user side (fanin_sim_eth10g_user) and the shared clocking. coreclk
// is the reference clock pin (the testbench drives sfp_refclk_p at 156.25 MHz); the shared
// instance's datapath reset and QPLL lock follow its `reset` through two flops of coreclk.
// Frames the testbench hands a port (`user.tb_rx_*`, driven by the simulation top through
// the hierarchy; `tb_rx_bad` = bad FCS) come out of m_axis_rx_* with tuser = 1 for a GOOD
// frame on the tlast beat, as the MAC marks them; s_axis_tx_tready is the testbench's
// `tb_tx_tready` out of reset. PCS block lock = signal_detect out of reset. `tb_tx_underrun`
// is set for good if s_axis_tx_tvalid drops inside a frame (the MAC would abort it). Not
// modelled: the line (no 10GBASE-R, no FCS), statistics vectors, pause frames, the
// configuration vectors (the wrapper's values are checked by gen/tests/boards.rs).

module fanin_sim_eth10g_user (
    input  wire        clk,
    input  wire        rst,
    input  wire        signal_detect,
    output wire [7:0]  pcspma_status,
    input  wire [63:0] s_axis_tx_tdata,
    input  wire [7:0]  s_axis_tx_tkeep,
    input  wire        s_axis_tx_tlast,
    output wire        s_axis_tx_tready,
    input  wire [0:0]  s_axis_tx_tuser,
    input  wire        s_axis_tx_tvalid,
    output wire [63:0] m_axis_rx_tdata,
    output wire [7:0]  m_axis_rx_tkeep,
    output wire        m_axis_rx_tlast,
    output wire        m_axis_rx_tuser,
    output wire        m_axis_rx_tvalid
);
// The testbench's side, driven by the simulation top through the hierarchy.
wire tb_rx_tvalid, tb_rx_tlast, tb_rx_bad, tb_tx_tready;
wire [63:0] tb_rx_tdata;
wire [7:0] tb_rx_tkeep;
/* verilator lint_off UNUSEDSIGNAL */
wire [72:0] unused_tx = {s_axis_tx_tdata, s_axis_tx_tkeep, s_axis_tx_tuser};
/* verilator lint_on UNUSEDSIGNAL */
reg lock = 1'b0;
always @(posedge clk) lock <= signal_detect & ~rst;
assign pcspma_status = {7'd0, lock};
assign m_axis_rx_tvalid = tb_rx_tvalid & lock;
assign m_axis_rx_tdata = tb_rx_tdata;
assign m_axis_rx_tkeep = tb_rx_tkeep;
assign m_axis_rx_tlast = tb_rx_tlast;
assign m_axis_rx_tuser = tb_rx_tlast & ~tb_rx_bad;
assign s_axis_tx_tready = tb_tx_tready & lock;
reg in_frame = 1'b0, underrun = 1'b0;
always @(posedge clk)
    if (rst) begin
        in_frame <= 1'b0;
    end else begin
        if (in_frame && !s_axis_tx_tvalid) underrun <= 1'b1;
        if (s_axis_tx_tvalid && s_axis_tx_tready) in_frame <= !s_axis_tx_tlast;
    end
wire tb_tx_underrun = underrun;
endmodule

// Ports common to both variants.
`define FANIN_SIM_ETH10G_PORTS \
    input  wire          tx_axis_aresetn, \
    input  wire          rx_axis_aresetn, \
    input  wire [7:0]    tx_ifg_delay, \
    input  wire          dclk, \
    output wire          txp, \
    output wire          txn, \
    input  wire          rxp, \
    input  wire          rxn, \
    input  wire          signal_detect, \
    input  wire          tx_fault, \
    output wire          tx_disable, \
    output wire [7:0]    pcspma_status, \
    input  wire          sim_speedup_control, \
    output wire          rxrecclk_out, \
    input  wire [79:0]   mac_tx_configuration_vector, \
    input  wire [79:0]   mac_rx_configuration_vector, \
    output wire [2:0]    mac_status_vector, \
    input  wire [535:0]  pcs_pma_configuration_vector, \
    output wire [447:0]  pcs_pma_status_vector, \
    input  wire [63:0]   s_axis_tx_tdata, \
    input  wire [7:0]    s_axis_tx_tkeep, \
    input  wire          s_axis_tx_tlast, \
    output wire          s_axis_tx_tready, \
    input  wire [0:0]    s_axis_tx_tuser, \
    input  wire          s_axis_tx_tvalid, \
    input  wire [15:0]   s_axis_pause_tdata, \
    input  wire          s_axis_pause_tvalid, \
    output wire [63:0]   m_axis_rx_tdata, \
    output wire [7:0]    m_axis_rx_tkeep, \
    output wire          m_axis_rx_tlast, \
    output wire          m_axis_rx_tuser, \
    output wire          m_axis_rx_tvalid, \
    output wire          tx_statistics_valid, \
    output wire [25:0]   tx_statistics_vector, \
    output wire          rx_statistics_valid, \
    output wire [29:0]   rx_statistics_vector

// The user side in clock CLOCK, out of reset while both AXI-Stream resets are released.
`define FANIN_SIM_ETH10G_BODY(CLOCK) \
    /* verilator lint_off UNUSEDSIGNAL */ \
    wire [724:0] unused_in = {tx_ifg_delay, dclk, rxp, rxn, sim_speedup_control, \
        mac_tx_configuration_vector, mac_rx_configuration_vector, \
        pcs_pma_configuration_vector, s_axis_pause_tdata, s_axis_pause_tvalid}; \
    /* verilator lint_on UNUSEDSIGNAL */ \
    assign txp = 1'b0; \
    assign txn = 1'b1; \
    assign tx_disable = tx_fault; \
    assign rxrecclk_out = CLOCK; \
    assign mac_status_vector = 3'd0; \
    assign pcs_pma_status_vector = 448'd0; \
    assign tx_statistics_valid = 1'b0; \
    assign tx_statistics_vector = 26'd0; \
    assign rx_statistics_valid = 1'b0; \
    assign rx_statistics_vector = 30'd0; \
    fanin_sim_eth10g_user user ( \
        .clk(CLOCK), \
        .rst(~tx_axis_aresetn | ~rx_axis_aresetn), \
        .signal_detect(signal_detect), \
        .pcspma_status(pcspma_status), \
        .s_axis_tx_tdata(s_axis_tx_tdata), \
        .s_axis_tx_tkeep(s_axis_tx_tkeep), \
        .s_axis_tx_tlast(s_axis_tx_tlast), \
        .s_axis_tx_tready(s_axis_tx_tready), \
        .s_axis_tx_tuser(s_axis_tx_tuser), \
        .s_axis_tx_tvalid(s_axis_tx_tvalid), \
        .m_axis_rx_tdata(m_axis_rx_tdata), \
        .m_axis_rx_tkeep(m_axis_rx_tkeep), \
        .m_axis_rx_tlast(m_axis_rx_tlast), \
        .m_axis_rx_tuser(m_axis_rx_tuser), \
        .m_axis_rx_tvalid(m_axis_rx_tvalid) \
    );

module eth10g_shared (
    `FANIN_SIM_ETH10G_PORTS,
    input  wire reset,
    input  wire refclk_p,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire refclk_n,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire areset_datapathclk_out,
    output wire txusrclk_out,
    output wire txusrclk2_out,
    output wire gttxreset_out,
    output wire gtrxreset_out,
    output wire txuserrdy_out,
    output wire coreclk_out,
    output wire resetdone_out,
    output wire reset_counter_done_out,
    output wire qplllock_out,
    output wire qplloutclk_out,
    output wire qplloutrefclk_out
);
wire coreclk = refclk_p;
// `reset` (asynchronous) through two flops of coreclk: the datapath reset, QPLL lock.
reg [1:0] rst_sync = 2'b11;
always @(posedge coreclk) rst_sync <= {rst_sync[0], reset};
assign coreclk_out = coreclk;
assign areset_datapathclk_out = rst_sync[1];
assign txusrclk_out = coreclk;
assign txusrclk2_out = coreclk;
assign gttxreset_out = rst_sync[1];
assign gtrxreset_out = rst_sync[1];
assign txuserrdy_out = ~rst_sync[1];
assign resetdone_out = ~rst_sync[1];
assign reset_counter_done_out = ~rst_sync[1];
assign qplllock_out = ~rst_sync[1];
assign qplloutclk_out = coreclk;
assign qplloutrefclk_out = coreclk;
`FANIN_SIM_ETH10G_BODY(coreclk)
endmodule

module eth10g_nonshared (
    `FANIN_SIM_ETH10G_PORTS,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire areset,
    input  wire areset_coreclk,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire coreclk,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire txusrclk,
    input  wire txusrclk2,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire txoutclk,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire txuserrdy,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire tx_resetdone,
    output wire rx_resetdone,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire gttxreset,
    input  wire gtrxreset,
    input  wire qplllock,
    input  wire qplloutclk,
    input  wire qplloutrefclk,
    input  wire reset_counter_done
    /* verilator lint_on UNUSEDSIGNAL */
);
assign txoutclk = coreclk;
assign tx_resetdone = ~areset_coreclk;
assign rx_resetdone = ~areset_coreclk;
`FANIN_SIM_ETH10G_BODY(coreclk)
endmodule

`undef FANIN_SIM_ETH10G_PORTS
`undef FANIN_SIM_ETH10G_BODY
