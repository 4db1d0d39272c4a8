//! The MAC/PCS part of the board wrapper: SUME's Si5324 set-up and four 10G Ethernet
//! subsystems, Alveo's two CMACs, with each port's clock-crossing FIFOs, link status,
//! statistics and (Alveo) RS-FEC control.

use super::{rx_fifo_depth, window, Board};
use fanin_hdl::CoreConfig;
use fanin_regs::board::BoardKind;
use std::fmt::Write as _;

/// The clock-crossing FIFOs of port `p` between the MAC (`mac_clk`) and the core: RX
/// through `fanin_rx_fifo` (drops whole frames when full: a MAC receiver cannot wait), TX
/// through the packet-mode `axis_cdc_fifo` IP (a frame leaves only once complete, so the
/// MAC never underruns).
fn cdc_fifos(p: u8, cfg: &CoreConfig, mac_clk: &str, mac_rst: &str) -> String {
    let dw = cfg.data_w;
    let kw = dw / 8;
    format!(
        r#"// Port {p}: MAC -> core through fanin_rx_fifo (fanin_board.v; whole frames, drops counted),
// core -> MAC through a packet-mode async FIFO (ip/axis_cdc_fifo.tcl).
wire [{dm}:0] mac{p}_rx_tdata;
wire [{km}:0] mac{p}_rx_tkeep;
wire mac{p}_rx_tvalid, mac{p}_rx_tlast, mac{p}_rx_bad;
wire [{dm}:0] mac{p}_tx_tdata;
wire [{km}:0] mac{p}_tx_tkeep;
wire mac{p}_tx_tvalid, mac{p}_tx_tready, mac{p}_tx_tlast, mac{p}_tx_tuser;
fanin_rx_fifo #(
    .DATA_W({dw}),
    .ADDR_W({aw})
) rx_fifo_{p} (
    .s_clk({mac_clk}),
    .s_rst({mac_rst}),
    .s_axis_tdata(mac{p}_rx_tdata),
    .s_axis_tkeep(mac{p}_rx_tkeep),
    .s_axis_tvalid(mac{p}_rx_tvalid),
    .s_axis_tlast(mac{p}_rx_tlast),
    .s_axis_tuser(mac{p}_rx_bad),
    .m_clk(core_clk),
    .m_rst(core_rst),
    .m_axis_tdata(core_s_axis_{p}_tdata),
    .m_axis_tkeep(core_s_axis_{p}_tkeep),
    .m_axis_tvalid(core_s_axis_{p}_tvalid),
    .m_axis_tready(core_s_axis_{p}_tready),
    .m_axis_tlast(core_s_axis_{p}_tlast),
    .m_axis_tuser(core_s_axis_{p}_tuser),
    .m_drop_count(rx_drops[{lo} +: 32])
);
axis_cdc_fifo tx_fifo_{p} (
    .s_axis_aresetn(~core_rst),
    .s_axis_aclk(core_clk),
    .s_axis_tvalid(core_m_axis_{p}_tvalid),
    .s_axis_tready(core_m_axis_{p}_tready),
    .s_axis_tdata(core_m_axis_{p}_tdata),
    .s_axis_tkeep(core_m_axis_{p}_tkeep),
    .s_axis_tlast(core_m_axis_{p}_tlast),
    .s_axis_tuser(core_m_axis_{p}_tuser),
    .m_axis_aclk({mac_clk}),
    .m_axis_tvalid(mac{p}_tx_tvalid),
    .m_axis_tready(mac{p}_tx_tready),
    .m_axis_tdata(mac{p}_tx_tdata),
    .m_axis_tkeep(mac{p}_tx_tkeep),
    .m_axis_tlast(mac{p}_tx_tlast),
    .m_axis_tuser(mac{p}_tx_tuser)
);

"#,
        dm = dw - 1,
        km = kw - 1,
        aw = rx_fifo_depth(cfg).trailing_zeros(),
        lo = 32 * p as u32,
    )
}

/// SUME: the Si5324 that makes the SFP+ reference clock, programmed over I²C after reset;
/// the 10G subsystems are held in reset (`eth_rst`) until it is done.
pub(super) fn sume_refclk() -> String {
    r#"// ---- SFP+ reference clock: the Si5324 jitter attenuator (behind the PCA9548 I2C mux,
// channel 4) is programmed for 156.25 MHz after reset by fanin_si5324_init (fanin_board.v;
// ROM from gen/src/board/si5324.rs SI5324_INIT). The 10G subsystems stay in reset until it is done
// (eth_rst). Afterwards it polls the Si5324's loss of lock (register 130, LOL_INT) every
// 100 ms: si5324_stat_valid (the last poll was acknowledged) and si5324_lol (its LOL_INT),
// init_clk levels into the board status word. The mux and Si5324 reset pins are active
// high on SUME and follow init_rst.
wire si5324_scl_low, si5324_sda_low, si5324_done, si5324_error;
wire si5324_stat_valid, si5324_lol;
fanin_si5324_init #(
    .CLK_HZ(SI5324_CLK_HZ),
    .I2C_HZ(SI5324_I2C_HZ)
) si5324_init_inst (
    .clk(init_clk),
    .rst(init_rst),
    .sda_i(i2c_sda),
    .scl_low(si5324_scl_low),
    .sda_low(si5324_sda_low),
    .done(si5324_done),
    .error(si5324_error),
    .stat_valid(si5324_stat_valid),
    .lol(si5324_lol)
);
assign i2c_scl = si5324_scl_low ? 1'b0 : 1'bz;
assign i2c_sda = si5324_sda_low ? 1'b0 : 1'bz;
assign i2c_mux_reset = init_rst;
assign si5324_rst = init_rst;
wire eth_rst = init_rst | ~si5324_done;

"#
    .to_string()
}

/// SUME: four Xilinx 10G Ethernet Subsystems (MAC + 10GBASE-R PCS/PMA); port 0 holds the
/// shared logic (QPLL, coreclk), ports 1..3 use it.
pub(super) fn sume_macs(cfg: &CoreConfig) -> String {
    let mut s = String::from(
        r#"// ---- MAC/PCS: Xilinx 10G Ethernet Subsystem (axi_10g_ethernet), 64-bit AXIS at
// coreclk = 156.25 MHz. Port 0 (ip/eth10g_shared.tcl) includes the shared logic; ports 1..3
// (ip/eth10g_nonshared.tcl) use its QPLL and clocks.
wire mac_clk, mac_rst, qplllock, qplloutclk, qplloutrefclk, txusrclk, txusrclk2;
wire txuserrdy, gttxreset, gtrxreset, reset_counter_done;
// Bit 0 of each port's byte (PCS block lock) is used.
/* verilator lint_off UNUSEDSIGNAL */
wire [31:0] pcspma_status;
/* verilator lint_on UNUSEDSIGNAL */
assign led = {qplllock, mmcm_locked};
// Board status (regs/src/board.rs): refclk_ready, si5324_nack, qpll_lock, si5324_alarm (the
// Si5324's alarm pin is active low), bit 4 unused (pcie_up on Alveo), si5324_lol,
// si5324_stat_valid.
assign board_status = {si5324_stat_valid, si5324_lol, 1'b0, ~si5324_alarm_b, qplllock, si5324_error, si5324_done};

"#,
    );
    for p in 0..cfg.ports {
        s.push_str(&cdc_fifos(p, cfg, "mac_clk", "mac_rst"));
        let shared = p == 0;
        let module = if shared {
            "eth10g_shared"
        } else {
            "eth10g_nonshared"
        };
        let _ = writeln!(s, "{module} eth10g_{p} (");
        let mut c: Vec<String> = vec![
            ".tx_axis_aresetn(~mac_rst)".into(),
            ".rx_axis_aresetn(~mac_rst)".into(),
            ".tx_ifg_delay(8'd0)".into(),
            ".dclk(init_clk)".into(),
            format!(".txp(sfp_tx_p[{p}])"),
            format!(".txn(sfp_tx_n[{p}])"),
            format!(".rxp(sfp_rx_p[{p}])"),
            format!(".rxn(sfp_rx_n[{p}])"),
            "// SFP+ LOS (high: no light) and TX_FAULT from the cage pins.".into(),
            format!(".signal_detect(~sfp_los[{p}])"),
            format!(".tx_fault(sfp_tx_fault[{p}])"),
            format!(".tx_disable(sfp_tx_disable[{p}])"),
            format!(".pcspma_status(pcspma_status[{}+:8])", 8 * p),
            ".sim_speedup_control(1'b0)".into(),
            ".rxrecclk_out()".into(),
            "// MAC enabled, FCS added on TX and stripped on RX (frames without FCS, as the core expects).".into(),
            ".mac_tx_configuration_vector(80'h2)".into(),
            ".mac_rx_configuration_vector(80'h2)".into(),
            ".mac_status_vector()".into(),
            ".pcs_pma_configuration_vector(536'd0)".into(),
            ".pcs_pma_status_vector()".into(),
        ];
        if shared {
            c.extend(
                [
                    ".reset(eth_rst)",
                    ".refclk_p(sfp_refclk_p)",
                    ".refclk_n(sfp_refclk_n)",
                    ".areset_datapathclk_out(mac_rst)",
                    ".txusrclk_out(txusrclk)",
                    ".txusrclk2_out(txusrclk2)",
                    ".gttxreset_out(gttxreset)",
                    ".gtrxreset_out(gtrxreset)",
                    ".txuserrdy_out(txuserrdy)",
                    ".coreclk_out(mac_clk)",
                    ".resetdone_out()",
                    ".reset_counter_done_out(reset_counter_done)",
                    ".qplllock_out(qplllock)",
                    ".qplloutclk_out(qplloutclk)",
                    ".qplloutrefclk_out(qplloutrefclk)",
                ]
                .map(String::from),
            );
        } else {
            c.extend(
                [
                    ".areset(eth_rst)",
                    ".areset_coreclk(mac_rst)",
                    ".coreclk(mac_clk)",
                    ".txusrclk(txusrclk)",
                    ".txusrclk2(txusrclk2)",
                    ".txoutclk()",
                    ".txuserrdy(txuserrdy)",
                    ".tx_resetdone()",
                    ".rx_resetdone()",
                    ".gttxreset(gttxreset)",
                    ".gtrxreset(gtrxreset)",
                    ".qplllock(qplllock)",
                    ".qplloutclk(qplloutclk)",
                    ".qplloutrefclk(qplloutrefclk)",
                    ".reset_counter_done(reset_counter_done)",
                ]
                .map(String::from),
            );
        }
        c.extend([
            format!(".s_axis_tx_tdata(mac{p}_tx_tdata)"),
            format!(".s_axis_tx_tkeep(mac{p}_tx_tkeep)"),
            format!(".s_axis_tx_tlast(mac{p}_tx_tlast)"),
            format!(".s_axis_tx_tready(mac{p}_tx_tready)"),
            format!(".s_axis_tx_tuser(mac{p}_tx_tuser)"),
            format!(".s_axis_tx_tvalid(mac{p}_tx_tvalid)"),
            ".s_axis_pause_tdata(16'd0)".into(),
            ".s_axis_pause_tvalid(1'b0)".into(),
            format!(".m_axis_rx_tdata(mac{p}_rx_tdata)"),
            format!(".m_axis_rx_tkeep(mac{p}_rx_tkeep)"),
            format!(".m_axis_rx_tlast(mac{p}_rx_tlast)"),
            format!(".m_axis_rx_tuser(mac{p}_rx_good)"),
            format!(".m_axis_rx_tvalid(mac{p}_rx_tvalid)"),
            ".tx_statistics_valid()".into(),
            ".tx_statistics_vector()".into(),
            ".rx_statistics_valid()".into(),
            ".rx_statistics_vector()".into(),
        ]);
        let mut body = String::new();
        let n = c.iter().filter(|l| !l.starts_with("//")).count();
        let mut k = 0;
        for l in &c {
            if l.starts_with("//") {
                let _ = writeln!(body, "    {l}");
            } else {
                k += 1;
                let _ = writeln!(body, "    {l}{}", if k < n { "," } else { "" });
            }
        }
        let decl = format!(
            "// The 10G MAC's rx tuser is 1 for a good frame; the core's tuser is 1 for a bad one.\nwire mac{p}_rx_good;\nassign mac{p}_rx_bad = mac{p}_rx_tlast & ~mac{p}_rx_good;\nassign sfp_led[{p}] = pcspma_status[{b}];\n",
            b = 8 * p
        );
        // Declarations go before the instance that drives them.
        let at = s.rfind(&format!("{module} eth10g_{p} (")).unwrap();
        s.insert_str(at, &decl);
        s.push_str(&body);
        s.push_str(");\n");
        let _ = write!(
            s,
            r#"// Port {p} link (regs/src/board.rs): up = PCS block lock, sfp_los, sfp_tx_fault.
assign link_status[{l}*{p} +: {l}] = {{sfp_tx_fault[{p}], sfp_los[{p}], 7'd0, pcspma_status[{b}]}};
// Port {p} statistics, counted at the MAC's AXI-Stream in its clock: frames received (tlast),
// frames transmitted (tlast accepted), frames the MAC marked bad (FCS or other error).
fanin_mac_stats #(
    .N({n}),
    .INC_W(1)
) mac_stats_{p} (
    .s_clk(mac_clk),
    .s_inc({{mac{p}_rx_bad & mac{p}_rx_tvalid, mac{p}_tx_tvalid & mac{p}_tx_tready & mac{p}_tx_tlast, mac{p}_rx_tvalid & mac{p}_rx_tlast}}),
    .m_clk(core_clk),
    .m_count(mac_stats[{w}*{p} +: {w}])
);

"#,
            l = BoardKind::Sume.link_width(),
            b = 8 * p,
            n = window::COUNTERS.len(),
            w = 64 * window::COUNTERS.len(),
        );
    }
    s.push('\n');
    s
}

/// Alveo: two CMACs (100G, RS-FEC, 512-bit AXIS at the GT's txusrclk2 = 322.27 MHz).
pub(super) fn cmac_macs(board: Board, cfg: &CoreConfig) -> String {
    let mut s = String::from(
        "// ---- MAC/PCS: Xilinx UltraScale+ 100G Ethernet (cmac_usplus), one per QSFP28 cage\n\
         // (ip/cmac_qsfp<N>.tcl); 512-bit AXIS in each CMAC's gt_txusrclk2 domain.\n",
    );
    match board {
        Board::Au250 => s.push_str(
            "// QSFP modules selected, out of reset, high power; Si5335 FS = 0b10 (161.1328125 MHz).\n\
             assign qsfp0_modsell = 1'b0;\nassign qsfp0_resetl = 1'b1;\nassign qsfp0_lpmode = 1'b0;\n\
             assign qsfp0_refclk_reset = 1'b0;\nassign qsfp0_fs = 2'b10;\n\
             assign qsfp1_modsell = 1'b0;\nassign qsfp1_resetl = 1'b1;\nassign qsfp1_lpmode = 1'b0;\n\
             assign qsfp1_refclk_reset = 1'b0;\nassign qsfp1_fs = 2'b10;\n\
             wire [1:0] cmac_aligned;\nassign led = {cmac_aligned, mmcm_locked};\n\n",
        ),
        Board::Au280 => s.push_str(
            "// SI546 reference clocks enabled at 161.1328125 MHz; HBM CATTRIP held low.\n\
             assign qsfp0_refclk_oe_b = 1'b0;\nassign qsfp0_refclk_fs = 1'b1;\n\
             assign qsfp1_refclk_oe_b = 1'b0;\nassign qsfp1_refclk_fs = 1'b1;\n\
             assign hbm_cattrip = 1'b0;\nwire [1:0] cmac_aligned;\n\n",
        ),
        Board::Sume => unreachable!(),
    }
    for p in 0..cfg.ports {
        let _ = writeln!(s, "wire mac{p}_clk, mac{p}_rx_rst;");
        s.push_str(&cdc_fifos(
            p,
            cfg,
            &format!("mac{p}_clk"),
            &format!("mac{p}_rx_rst"),
        ));
        let _ = writeln!(
            s,
            "// The CMAC's rx tuser is 1 for a bad frame on the tlast beat, as the core expects.\n\
             wire mac{p}_rx_tuser;\nassign mac{p}_rx_bad = mac{p}_rx_tlast & mac{p}_rx_tuser;"
        );
        let _ = write!(
            s,
            r#"// Port {p} RS-FEC: the window's register bit, synchronised into the CMAC's clock; a change
// resets the CMAC's RX and TX cores for 32 cycles so that both restart in the new mode.
(* ASYNC_REG = "TRUE" *) reg mac{p}_rsfec_cdc1 = 1'b1;
(* ASYNC_REG = "TRUE" *) reg mac{p}_rsfec_cdc2 = 1'b1;
reg mac{p}_rsfec = 1'b1;
reg [5:0] mac{p}_fec_rst = 6'd0;
always @(posedge mac{p}_clk) begin
    mac{p}_rsfec_cdc1 <= rsfec[{p}];
    mac{p}_rsfec_cdc2 <= mac{p}_rsfec_cdc1;
    if (mac{p}_rsfec_cdc2 != mac{p}_rsfec) begin
        mac{p}_rsfec <= mac{p}_rsfec_cdc2;
        mac{p}_fec_rst <= 6'd32;
    end else if (mac{p}_fec_rst != 6'd0) begin
        mac{p}_fec_rst <= mac{p}_fec_rst - 6'd1;
    end
end
wire mac{p}_core_rst = mac{p}_fec_rst != 6'd0;
// Port {p} link status and statistics (regs/src/board.rs), from the CMAC's stat_* outputs in
// its clock: rx_frames += stat_rx_total_packets, tx_frames += stat_tx_total_packets,
// rx_bad_fcs += stat_rx_bad_fcs.
wire mac{p}_stat_rx_status, mac{p}_stat_rx_local_fault, mac{p}_stat_rx_remote_fault;
wire mac{p}_stat_rx_hi_ber, mac{p}_stat_rx_rsfec_aligned, mac{p}_stat_tx_total_packets;
wire [2:0] mac{p}_stat_rx_total_packets, mac{p}_stat_rx_bad_fcs;
assign link_status[{l}*{p} +: {l}] = {{mac{p}_stat_rx_rsfec_aligned, mac{p}_stat_rx_hi_ber,
    mac{p}_stat_rx_remote_fault, mac{p}_stat_rx_local_fault, cmac_aligned[{p}], mac{p}_stat_rx_status}};
fanin_mac_stats #(
    .N({n}),
    .INC_W(3)
) mac_stats_{p} (
    .s_clk(mac{p}_clk),
    .s_inc({{mac{p}_stat_rx_bad_fcs, 2'd0, mac{p}_stat_tx_total_packets, mac{p}_stat_rx_total_packets}}),
    .m_clk(core_clk),
    .m_count(mac_stats[{w}*{p} +: {w}])
);
"#,
            l = BoardKind::Au250.link_width(),
            n = window::COUNTERS.len(),
            w = 64 * window::COUNTERS.len(),
        );
        let _ = write!(
            s,
            r#"cmac_qsfp{p} cmac_{p} (
    .gt_rxp_in(qsfp{p}_rx_p),
    .gt_rxn_in(qsfp{p}_rx_n),
    .gt_txp_out(qsfp{p}_tx_p),
    .gt_txn_out(qsfp{p}_tx_n),
    .gt_txusrclk2(mac{p}_clk),
    .gt_loopback_in(12'd0),
    .gt_rxrecclkout(),
    .gt_powergoodout(),
    .gt_ref_clk_out(),
    .gtwiz_reset_tx_datapath(1'b0),
    .gtwiz_reset_rx_datapath(1'b0),
    .sys_reset(init_rst),
    .gt_ref_clk_p(qsfp{p}_refclk_p),
    .gt_ref_clk_n(qsfp{p}_refclk_n),
    .init_clk(init_clk),
    .rx_clk(mac{p}_clk),
    .rx_axis_tvalid(mac{p}_rx_tvalid),
    .rx_axis_tdata(mac{p}_rx_tdata),
    .rx_axis_tlast(mac{p}_rx_tlast),
    .rx_axis_tkeep(mac{p}_rx_tkeep),
    .rx_axis_tuser(mac{p}_rx_tuser),
    .rx_preambleout(),
    .usr_rx_reset(mac{p}_rx_rst),
    .stat_rx_aligned(cmac_aligned[{p}]),
    .stat_rx_status(mac{p}_stat_rx_status),
    .stat_rx_local_fault(mac{p}_stat_rx_local_fault),
    .stat_rx_remote_fault(mac{p}_stat_rx_remote_fault),
    .stat_rx_hi_ber(mac{p}_stat_rx_hi_ber),
    .stat_rx_rsfec_lane_alignment_status(mac{p}_stat_rx_rsfec_aligned),
    .stat_rx_total_packets(mac{p}_stat_rx_total_packets),
    .stat_rx_bad_fcs(mac{p}_stat_rx_bad_fcs),
    .stat_tx_total_packets(mac{p}_stat_tx_total_packets),
    .ctl_rx_enable(1'b1),
    .ctl_rx_force_resync(1'b0),
    .ctl_rx_test_pattern(1'b0),
    // RS-FEC (clause 91) from the window's RSFEC register (reset: on).
    .ctl_rsfec_ieee_error_indication_mode(1'b0),
    .ctl_rx_rsfec_enable(mac{p}_rsfec),
    .ctl_rx_rsfec_enable_correction(mac{p}_rsfec),
    .ctl_rx_rsfec_enable_indication(mac{p}_rsfec),
    .ctl_tx_rsfec_enable(mac{p}_rsfec),
    // Transmit only once the receiver is aligned; until then send remote-fault indication.
    .ctl_tx_enable(cmac_aligned[{p}]),
    .ctl_tx_send_idle(1'b0),
    .ctl_tx_send_rfi(~cmac_aligned[{p}]),
    .ctl_tx_send_lfi(1'b0),
    .ctl_tx_test_pattern(1'b0),
    .core_rx_reset(mac{p}_core_rst),
    .core_tx_reset(mac{p}_core_rst),
    .tx_axis_tready(mac{p}_tx_tready),
    .tx_axis_tvalid(mac{p}_tx_tvalid),
    .tx_axis_tdata(mac{p}_tx_tdata),
    .tx_axis_tlast(mac{p}_tx_tlast),
    .tx_axis_tkeep(mac{p}_tx_tkeep),
    .tx_axis_tuser(mac{p}_tx_tuser),
    .tx_ovfout(),
    .tx_unfout(),
    .tx_preamblein(56'd0),
    .usr_tx_reset(),
    .core_drp_reset(1'b0),
    .drp_clk(1'b0),
    .drp_addr(10'd0),
    .drp_di(16'd0),
    .drp_en(1'b0),
    .drp_do(),
    .drp_rdy(),
    .drp_we(1'b0)
);

"#
        );
    }
    s
}
