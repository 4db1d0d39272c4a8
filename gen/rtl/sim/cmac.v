// SIMULATION ONLY: behavioural stand-in for one cmac_usplus instance (module @NAME@, from
// ip/cmac_qsfp<N>.tcl; the generator makes one per CMAC), for the board-top Verilator
// simulation. Port list: Xilinx's instantiation template (GT lanes as a bus, AXI-Stream user
// interface, RS-FEC), as the Alveo wrapper connects it.
//
// What it models: the user side only. gt_txusrclk2 is the reference clock pin (the
// testbench drives qsfp<N>_refclk_p at the MAC clock); frames the testbench hands it
// (`tb_rx_*`, driven by the simulation top through the hierarchy, `tb_rx_bad` = bad FCS)
// come out of rx_axis_* as they are (tuser = bad on the tlast beat); tx_axis_tready is the
// testbench's `tb_tx_tready` once TX is enabled. The link is aligned once out of reset with
// RS-FEC on (a peer with RS-FEC on). Statistics pulses count RX frames, RX bad-FCS frames
// and TX frames. `tb_tx_underrun` is set for good if tx_axis_tvalid ever drops inside a
// frame: the real CMAC then aborts the frame (tx_unfout), which the packet-mode TX FIFO must
// prevent. Not modelled: the line (no serialisation, no FCS, no preamble), RS-FEC itself,
// DRP, pause frames, and the CMAC's RX gaps at 100G line rate.
module @NAME@ (
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [3:0]   gt_rxp_in,
    input  wire [3:0]   gt_rxn_in,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [3:0]   gt_txp_out,
    output wire [3:0]   gt_txn_out,
    output wire         gt_txusrclk2,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [11:0]  gt_loopback_in,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [3:0]   gt_rxrecclkout,
    output wire [3:0]   gt_powergoodout,
    output wire         gt_ref_clk_out,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         gtwiz_reset_tx_datapath,
    input  wire         gtwiz_reset_rx_datapath,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         sys_reset,
    input  wire         gt_ref_clk_p,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         gt_ref_clk_n,
    input  wire         init_clk,
    input  wire         rx_clk,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire         rx_axis_tvalid,
    output wire [511:0] rx_axis_tdata,
    output wire         rx_axis_tlast,
    output wire [63:0]  rx_axis_tkeep,
    output wire         rx_axis_tuser,
    output wire [55:0]  rx_preambleout,
    output wire         usr_rx_reset,
    output wire         stat_rx_aligned,
    output wire         stat_rx_status,
    output wire         stat_rx_local_fault,
    output wire         stat_rx_remote_fault,
    output wire         stat_rx_hi_ber,
    output wire         stat_rx_rsfec_lane_alignment_status,
    output wire [2:0]   stat_rx_total_packets,
    output wire [2:0]   stat_rx_bad_fcs,
    output wire         stat_tx_total_packets,
    input  wire         ctl_rx_enable,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         ctl_rx_force_resync,
    input  wire         ctl_rx_test_pattern,
    input  wire         ctl_rsfec_ieee_error_indication_mode,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         ctl_rx_rsfec_enable,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         ctl_rx_rsfec_enable_correction,
    input  wire         ctl_rx_rsfec_enable_indication,
    input  wire         ctl_tx_rsfec_enable,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         ctl_tx_enable,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         ctl_tx_send_idle,
    input  wire         ctl_tx_send_rfi,
    input  wire         ctl_tx_send_lfi,
    input  wire         ctl_tx_test_pattern,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         core_rx_reset,
    input  wire         core_tx_reset,
    output wire         tx_axis_tready,
    input  wire         tx_axis_tvalid,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [511:0] tx_axis_tdata,
    input  wire [63:0]  tx_axis_tkeep,
    input  wire         tx_axis_tuser,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire         tx_axis_tlast,
    output wire         tx_ovfout,
    output wire         tx_unfout,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [55:0]  tx_preamblein,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire         usr_tx_reset,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         core_drp_reset,
    input  wire         drp_clk,
    input  wire [9:0]   drp_addr,
    input  wire [15:0]  drp_di,
    input  wire         drp_en,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [15:0]  drp_do,
    output wire         drp_rdy,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire         drp_we
    /* verilator lint_on UNUSEDSIGNAL */
);
// The testbench's side, driven by the simulation top through the hierarchy.
wire tb_rx_tvalid, tb_rx_tlast, tb_rx_bad, tb_tx_tready;
wire [511:0] tb_rx_tdata;
wire [63:0] tb_rx_tkeep;

wire clk = gt_ref_clk_p;
assign gt_txusrclk2 = clk;
assign gt_txp_out = 4'd0;
assign gt_txn_out = 4'hf;
assign gt_rxrecclkout = {4{clk}};
assign gt_powergoodout = 4'hf;
assign gt_ref_clk_out = clk;
assign rx_preambleout = 56'd0;
assign drp_do = 16'd0;
assign drp_rdy = 1'b0;

// Resets: sys_reset (init_clk domain) and the core resets, two flops into the MAC clock.
reg [1:0] rx_rst_sync = 2'b11, tx_rst_sync = 2'b11;
always @(posedge clk) begin
    rx_rst_sync <= {rx_rst_sync[0], sys_reset | core_rx_reset};
    tx_rst_sync <= {tx_rst_sync[0], sys_reset | core_tx_reset};
end
assign usr_rx_reset = rx_rst_sync[1];
assign usr_tx_reset = tx_rst_sync[1];

// Alignment 8 cycles after the RX leaves reset, with RX and RS-FEC enabled.
reg [3:0] align_cnt = 4'd0;
always @(posedge clk)
    if (usr_rx_reset || !ctl_rx_enable || !ctl_rx_rsfec_enable) align_cnt <= 4'd0;
    else if (!align_cnt[3]) align_cnt <= align_cnt + 4'd1;
assign stat_rx_aligned = align_cnt[3];
assign stat_rx_status = stat_rx_aligned;
assign stat_rx_local_fault = ~stat_rx_aligned;
assign stat_rx_remote_fault = 1'b0;
assign stat_rx_hi_ber = 1'b0;
assign stat_rx_rsfec_lane_alignment_status = stat_rx_aligned;

// RX: the testbench's frames while aligned.
wire rx_on = stat_rx_aligned & ~usr_rx_reset;
assign rx_axis_tvalid = tb_rx_tvalid & rx_on;
assign rx_axis_tdata = tb_rx_tdata;
assign rx_axis_tkeep = tb_rx_tkeep;
assign rx_axis_tlast = tb_rx_tlast;
assign rx_axis_tuser = tb_rx_tlast & tb_rx_bad;

// TX: ready when enabled and the testbench takes the beat.
assign tx_axis_tready = tb_tx_tready & ctl_tx_enable & ~usr_tx_reset;
reg in_frame = 1'b0, underrun = 1'b0, unf = 1'b0;
always @(posedge clk) begin
    unf <= 1'b0;
    if (usr_tx_reset) begin
        in_frame <= 1'b0;
    end else begin
        if (in_frame && !tx_axis_tvalid) begin
            underrun <= 1'b1;
            unf <= 1'b1;
        end
        if (tx_axis_tvalid && tx_axis_tready) in_frame <= !tx_axis_tlast;
    end
end
wire tb_tx_underrun = underrun;
assign tx_unfout = unf;
assign tx_ovfout = 1'b0;

// Statistics pulses, one cycle after the beat.
reg rx_pkt = 1'b0, rx_bad = 1'b0, tx_pkt = 1'b0;
always @(posedge clk) begin
    rx_pkt <= rx_axis_tvalid & tb_rx_tlast;
    rx_bad <= rx_axis_tvalid & tb_rx_tlast & tb_rx_bad;
    tx_pkt <= tx_axis_tvalid & tx_axis_tready & tx_axis_tlast;
end
assign stat_rx_total_packets = {2'd0, rx_pkt};
assign stat_rx_bad_fcs = {2'd0, rx_bad};
assign stat_tx_total_packets = tx_pkt;
endmodule
