// Stand-ins for the vendor IP of the board wrappers, for `verilator --lint-only -Wall` of a
// whole wrapper (gen/tests/boards.rs, wrapper_lints_with_ip_stubs). Each declares the ports
// the wrapper connects, with the widths of Xilinx's instantiation templates (clk_wiz,
// jtag_axi, axis_data_fifo, axi_10g_ethernet with shared logic in the core or not,
// cmac_usplus with the GT lanes as a bus); the outputs are simple behaviour (clocks passed
// through, everything else idle). The test replaces @DW@/@KW@ (AXI-Stream data and keep
// widths) and the last line (one cmac_stub.v module per CMAC instance name).
/* verilator lint_off UNUSEDSIGNAL */
/* verilator lint_off DECLFILENAME */
/* verilator lint_off MULTITOP */
`timescale 1ns / 1ps
`default_nettype none

module clk_core (
    input  wire clk_in1_p,
    input  wire clk_in1_n,
    output wire clk_out1,
    output wire clk_out2,
    output wire locked
);
assign clk_out1 = clk_in1_p;
assign clk_out2 = clk_in1_p;
assign locked = clk_in1_p | ~clk_in1_n;
endmodule

module jtag_axil (
    input  wire        aclk,
    input  wire        aresetn,
    output wire [31:0] m_axi_awaddr,
    output wire [2:0]  m_axi_awprot,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready,
    output wire [31:0] m_axi_araddr,
    output wire [2:0]  m_axi_arprot,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready
);
assign m_axi_awaddr = 32'd0;
assign m_axi_awprot = 3'd0;
assign m_axi_awvalid = 1'b0;
assign m_axi_wdata = 32'd0;
assign m_axi_wstrb = 4'd0;
assign m_axi_wvalid = 1'b0;
assign m_axi_bready = 1'b1;
assign m_axi_araddr = 32'd0;
assign m_axi_arprot = 3'd0;
assign m_axi_arvalid = 1'b0;
assign m_axi_rready = 1'b1;
endmodule

module axis_cdc_fifo (
    input  wire          s_axis_aresetn,
    input  wire          s_axis_aclk,
    input  wire          s_axis_tvalid,
    output wire          s_axis_tready,
    input  wire [@DW@-1:0] s_axis_tdata,
    input  wire [@KW@-1:0] s_axis_tkeep,
    input  wire          s_axis_tlast,
    input  wire [0:0]    s_axis_tuser,
    input  wire          m_axis_aclk,
    output wire          m_axis_tvalid,
    input  wire          m_axis_tready,
    output wire [@DW@-1:0] m_axis_tdata,
    output wire [@KW@-1:0] m_axis_tkeep,
    output wire          m_axis_tlast,
    output wire [0:0]    m_axis_tuser
);
assign s_axis_tready = m_axis_tready;
assign m_axis_tvalid = s_axis_tvalid;
assign m_axis_tdata = s_axis_tdata;
assign m_axis_tkeep = s_axis_tkeep;
assign m_axis_tlast = s_axis_tlast;
assign m_axis_tuser = s_axis_tuser;
endmodule

// 10G Ethernet subsystem, ports common to both variants.
`define ETH10G_PORTS \
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

`define ETH10G_IDLE \
    assign txp = 1'b0; \
    assign txn = 1'b1; \
    assign tx_disable = tx_fault; \
    assign pcspma_status = {7'd0, signal_detect}; \
    assign rxrecclk_out = 1'b0; \
    assign mac_status_vector = 3'd0; \
    assign pcs_pma_status_vector = 448'd0; \
    assign s_axis_tx_tready = 1'b1; \
    assign m_axis_rx_tdata = 64'd0; \
    assign m_axis_rx_tkeep = 8'd0; \
    assign m_axis_rx_tlast = 1'b0; \
    assign m_axis_rx_tuser = 1'b0; \
    assign m_axis_rx_tvalid = 1'b0; \
    assign tx_statistics_valid = 1'b0; \
    assign tx_statistics_vector = 26'd0; \
    assign rx_statistics_valid = 1'b0; \
    assign rx_statistics_vector = 30'd0;

module eth10g_shared (
    `ETH10G_PORTS,
    input  wire reset,
    input  wire refclk_p,
    input  wire refclk_n,
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
`ETH10G_IDLE
assign areset_datapathclk_out = reset;
assign txusrclk_out = refclk_p;
assign txusrclk2_out = refclk_p;
assign gttxreset_out = reset;
assign gtrxreset_out = reset;
assign txuserrdy_out = ~reset;
assign coreclk_out = refclk_p | ~refclk_n;
assign resetdone_out = ~reset;
assign reset_counter_done_out = ~reset;
assign qplllock_out = ~reset;
assign qplloutclk_out = refclk_p;
assign qplloutrefclk_out = refclk_p;
endmodule

module eth10g_nonshared (
    `ETH10G_PORTS,
    input  wire areset,
    input  wire areset_coreclk,
    input  wire coreclk,
    input  wire txusrclk,
    input  wire txusrclk2,
    output wire txoutclk,
    input  wire txuserrdy,
    output wire tx_resetdone,
    output wire rx_resetdone,
    input  wire gttxreset,
    input  wire gtrxreset,
    input  wire qplllock,
    input  wire qplloutclk,
    input  wire qplloutrefclk,
    input  wire reset_counter_done
);
`ETH10G_IDLE
assign txoutclk = txusrclk;
assign tx_resetdone = ~areset;
assign rx_resetdone = ~areset;
endmodule

// The Alveo PCIe path: IBUFDS_GTE4 (UltraScale+ GT reference-clock buffer), XDMA with its
// AXI-Lite master (xdma 4.1 template, AXI-Stream DMA, the ports the wrapper connects) and
// the AXI-Lite clock converter (axi_clock_converter 2.1).
module IBUFDS_GTE4 (
    input  wire I,
    input  wire IB,
    input  wire CEB,
    output wire O,
    output wire ODIV2
);
assign O = I & ~IB & ~CEB;
assign ODIV2 = O;
endmodule

module xdma_pcie (
    input  wire        sys_clk,
    input  wire        sys_clk_gt,
    input  wire        sys_rst_n,
    output wire        user_lnk_up,
    output wire [15:0] pci_exp_txp,
    output wire [15:0] pci_exp_txn,
    input  wire [15:0] pci_exp_rxp,
    input  wire [15:0] pci_exp_rxn,
    output wire        axi_aclk,
    output wire        axi_aresetn,
    input  wire [0:0]  usr_irq_req,
    output wire [0:0]  usr_irq_ack,
    output wire        msi_enable,
    output wire [2:0]  msi_vector_width,
    input  wire        s_axis_c2h_tvalid_0,
    input  wire        m_axis_h2c_tready_0,
    output wire [31:0] m_axil_awaddr,
    output wire [2:0]  m_axil_awprot,
    output wire        m_axil_awvalid,
    input  wire        m_axil_awready,
    output wire [31:0] m_axil_wdata,
    output wire [3:0]  m_axil_wstrb,
    output wire        m_axil_wvalid,
    input  wire        m_axil_wready,
    input  wire [1:0]  m_axil_bresp,
    input  wire        m_axil_bvalid,
    output wire        m_axil_bready,
    output wire [31:0] m_axil_araddr,
    output wire [2:0]  m_axil_arprot,
    output wire        m_axil_arvalid,
    input  wire        m_axil_arready,
    input  wire [31:0] m_axil_rdata,
    input  wire [1:0]  m_axil_rresp,
    input  wire        m_axil_rvalid,
    output wire        m_axil_rready
);
assign user_lnk_up = sys_rst_n;
assign pci_exp_txp = pci_exp_rxp;
assign pci_exp_txn = pci_exp_rxn;
assign axi_aclk = sys_clk | sys_clk_gt;
assign axi_aresetn = sys_rst_n;
assign usr_irq_ack = 1'b0;
assign msi_enable = 1'b0;
assign msi_vector_width = 3'd0;
assign m_axil_awaddr = 32'd0;
assign m_axil_awprot = 3'd0;
assign m_axil_awvalid = 1'b0;
assign m_axil_wdata = 32'd0;
assign m_axil_wstrb = 4'd0;
assign m_axil_wvalid = 1'b0;
assign m_axil_bready = 1'b1;
assign m_axil_araddr = 32'd0;
assign m_axil_arprot = 3'd0;
assign m_axil_arvalid = 1'b0;
assign m_axil_rready = 1'b1;
endmodule

module axil_cdc (
    input  wire        s_axi_aclk,
    input  wire        s_axi_aresetn,
    input  wire [31:0] s_axi_awaddr,
    input  wire [2:0]  s_axi_awprot,
    input  wire        s_axi_awvalid,
    output wire        s_axi_awready,
    input  wire [31:0] s_axi_wdata,
    input  wire [3:0]  s_axi_wstrb,
    input  wire        s_axi_wvalid,
    output wire        s_axi_wready,
    output wire [1:0]  s_axi_bresp,
    output wire        s_axi_bvalid,
    input  wire        s_axi_bready,
    input  wire [31:0] s_axi_araddr,
    input  wire [2:0]  s_axi_arprot,
    input  wire        s_axi_arvalid,
    output wire        s_axi_arready,
    output wire [31:0] s_axi_rdata,
    output wire [1:0]  s_axi_rresp,
    output wire        s_axi_rvalid,
    input  wire        s_axi_rready,
    input  wire        m_axi_aclk,
    input  wire        m_axi_aresetn,
    output wire [31:0] m_axi_awaddr,
    output wire [2:0]  m_axi_awprot,
    output wire        m_axi_awvalid,
    input  wire        m_axi_awready,
    output wire [31:0] m_axi_wdata,
    output wire [3:0]  m_axi_wstrb,
    output wire        m_axi_wvalid,
    input  wire        m_axi_wready,
    input  wire [1:0]  m_axi_bresp,
    input  wire        m_axi_bvalid,
    output wire        m_axi_bready,
    output wire [31:0] m_axi_araddr,
    output wire [2:0]  m_axi_arprot,
    output wire        m_axi_arvalid,
    input  wire        m_axi_arready,
    input  wire [31:0] m_axi_rdata,
    input  wire [1:0]  m_axi_rresp,
    input  wire        m_axi_rvalid,
    output wire        m_axi_rready
);
// Pass-through (a stand-in for lint: the real IP crosses clocks).
assign m_axi_awaddr = s_axi_awaddr;
assign m_axi_awprot = s_axi_awprot;
assign m_axi_awvalid = s_axi_awvalid & s_axi_aresetn;
assign s_axi_awready = m_axi_awready & m_axi_aresetn;
assign m_axi_wdata = s_axi_wdata;
assign m_axi_wstrb = s_axi_wstrb;
assign m_axi_wvalid = s_axi_wvalid;
assign s_axi_wready = m_axi_wready;
assign s_axi_bresp = m_axi_bresp;
assign s_axi_bvalid = m_axi_bvalid;
assign m_axi_bready = s_axi_bready;
assign m_axi_araddr = s_axi_araddr;
assign m_axi_arprot = s_axi_arprot;
assign m_axi_arvalid = s_axi_arvalid;
assign s_axi_arready = m_axi_arready;
assign s_axi_rdata = m_axi_rdata;
assign s_axi_rresp = m_axi_rresp;
assign s_axi_rvalid = m_axi_rvalid;
assign m_axi_rready = s_axi_rready;
endmodule

@CMAC_MODULES@
