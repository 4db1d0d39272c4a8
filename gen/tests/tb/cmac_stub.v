// Stand-in for one cmac_usplus instance (module @NAME@), the ports the Alveo wrapper
// connects with the widths of Xilinx's instantiation template (GT lanes as a bus, AXI-Stream
// user interface, RS-FEC). Used by gen/tests/tb/ip_stubs.v; see there.
module @NAME@ (
    input  wire [3:0]   gt_rxp_in,
    input  wire [3:0]   gt_rxn_in,
    output wire [3:0]   gt_txp_out,
    output wire [3:0]   gt_txn_out,
    output wire         gt_txusrclk2,
    input  wire [11:0]  gt_loopback_in,
    output wire [3:0]   gt_rxrecclkout,
    output wire [3:0]   gt_powergoodout,
    output wire         gt_ref_clk_out,
    input  wire         gtwiz_reset_tx_datapath,
    input  wire         gtwiz_reset_rx_datapath,
    input  wire         sys_reset,
    input  wire         gt_ref_clk_p,
    input  wire         gt_ref_clk_n,
    input  wire         init_clk,
    input  wire         rx_clk,
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
    input  wire         ctl_rx_force_resync,
    input  wire         ctl_rx_test_pattern,
    input  wire         ctl_rsfec_ieee_error_indication_mode,
    input  wire         ctl_rx_rsfec_enable,
    input  wire         ctl_rx_rsfec_enable_correction,
    input  wire         ctl_rx_rsfec_enable_indication,
    input  wire         ctl_tx_rsfec_enable,
    input  wire         ctl_tx_enable,
    input  wire         ctl_tx_send_idle,
    input  wire         ctl_tx_send_rfi,
    input  wire         ctl_tx_send_lfi,
    input  wire         ctl_tx_test_pattern,
    input  wire         core_rx_reset,
    input  wire         core_tx_reset,
    output wire         tx_axis_tready,
    input  wire         tx_axis_tvalid,
    input  wire [511:0] tx_axis_tdata,
    input  wire         tx_axis_tlast,
    input  wire [63:0]  tx_axis_tkeep,
    input  wire         tx_axis_tuser,
    output wire         tx_ovfout,
    output wire         tx_unfout,
    input  wire [55:0]  tx_preamblein,
    output wire         usr_tx_reset,
    input  wire         core_drp_reset,
    input  wire         drp_clk,
    input  wire [9:0]   drp_addr,
    input  wire [15:0]  drp_di,
    input  wire         drp_en,
    output wire [15:0]  drp_do,
    output wire         drp_rdy,
    input  wire         drp_we
);
assign gt_txp_out = 4'd0;
assign gt_txn_out = 4'hf;
assign gt_txusrclk2 = gt_ref_clk_p | ~gt_ref_clk_n;
assign gt_rxrecclkout = 4'd0;
assign gt_powergoodout = 4'hf;
assign gt_ref_clk_out = gt_ref_clk_p;
assign rx_axis_tvalid = 1'b0;
assign rx_axis_tdata = 512'd0;
assign rx_axis_tlast = 1'b0;
assign rx_axis_tkeep = 64'd0;
assign rx_axis_tuser = 1'b0;
assign rx_preambleout = 56'd0;
assign usr_rx_reset = sys_reset | core_rx_reset;
// Aligned with RS-FEC on: a peer with RS-FEC on, and the link up once aligned.
assign stat_rx_aligned = ctl_rx_enable & ctl_rx_rsfec_enable;
assign stat_rx_status = stat_rx_aligned;
assign stat_rx_local_fault = ~stat_rx_aligned;
assign stat_rx_remote_fault = 1'b0;
assign stat_rx_hi_ber = 1'b0;
assign stat_rx_rsfec_lane_alignment_status = ctl_rx_rsfec_enable;
assign stat_rx_total_packets = 3'd0;
assign stat_rx_bad_fcs = 3'd0;
assign stat_tx_total_packets = tx_axis_tvalid & tx_axis_tready & tx_axis_tlast;
assign tx_axis_tready = ctl_tx_enable;
assign tx_ovfout = 1'b0;
assign tx_unfout = 1'b0;
assign usr_tx_reset = sys_reset | core_tx_reset;
assign drp_do = 16'd0;
assign drp_rdy = 1'b0;
endmodule
