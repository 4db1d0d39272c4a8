// SIMULATION ONLY: behavioural stand-ins for the Alveo PCIe control path (the GT reference
// clock buffer IBUFDS_GTE4, xdma from ip/xdma_pcie.tcl; its clock converter is in
// axil_cdc.v), for the board-top Verilator simulation. Port lists: Xilinx's instantiation
// templates (xdma 4.1 with its AXI-Lite master and AXI-Stream DMA), as the Alveo wrapper
// connects them.

// UltraScale+ GT reference clock buffer: O and ODIV2 are the input (ODIV2's divider is an
// attribute the wrapper leaves at its default; the XDMA model runs from it directly).
module IBUFDS_GTE4 (
    input  wire I,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire IB,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire CEB,
    output wire O,
    output wire ODIV2
);
assign O = I & ~CEB;
assign ODIV2 = O;
endmodule

// XDMA: the PCIe BAR stub. axi_aclk is sys_clk (the testbench drives the PCIe reference
// pin at the 250 MHz AXI clock); axi_aresetn and user_lnk_up follow sys_rst_n (PERST#)
// through two flops. The AXI-Lite master's outputs are the testbench's (`tb_*`, driven by
// the simulation top through the hierarchy): each access the testbench makes is what a
// host's BAR0 read or write makes the real XDMA issue. Not modelled: PCIe itself, the DMA
// channels (unused by the design), interrupts.
module xdma_pcie (
    input  wire        sys_clk,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        sys_clk_gt,
    /* verilator lint_on UNUSEDSIGNAL */
    input  wire        sys_rst_n,
    output wire        user_lnk_up,
    output wire [15:0] pci_exp_txp,
    output wire [15:0] pci_exp_txn,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [15:0] pci_exp_rxp,
    input  wire [15:0] pci_exp_rxn,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire        axi_aclk,
    output wire        axi_aresetn,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire [0:0]  usr_irq_req,
    /* verilator lint_on UNUSEDSIGNAL */
    output wire [0:0]  usr_irq_ack,
    output wire        msi_enable,
    output wire [2:0]  msi_vector_width,
    /* verilator lint_off UNUSEDSIGNAL */
    input  wire        s_axis_c2h_tvalid_0,
    input  wire        m_axis_h2c_tready_0,
    /* verilator lint_on UNUSEDSIGNAL */
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
wire [31:0] tb_awaddr, tb_wdata, tb_araddr;
wire [3:0] tb_wstrb;
wire tb_awvalid, tb_wvalid, tb_bready, tb_arvalid, tb_rready;
reg [1:0] rst_sync = 2'b00;
always @(posedge sys_clk) rst_sync <= {rst_sync[0], sys_rst_n};
assign axi_aclk = sys_clk;
assign axi_aresetn = rst_sync[1];
assign user_lnk_up = rst_sync[1];
assign pci_exp_txp = 16'd0;
assign pci_exp_txn = 16'hffff;
assign usr_irq_ack = 1'b0;
assign msi_enable = 1'b0;
assign msi_vector_width = 3'd0;
assign m_axil_awaddr = tb_awaddr;
assign m_axil_awprot = 3'd0;
assign m_axil_awvalid = tb_awvalid & axi_aresetn;
assign m_axil_wdata = tb_wdata;
assign m_axil_wstrb = tb_wstrb;
assign m_axil_wvalid = tb_wvalid & axi_aresetn;
assign m_axil_bready = tb_bready;
assign m_axil_araddr = tb_araddr;
assign m_axil_arprot = 3'd0;
assign m_axil_arvalid = tb_arvalid & axi_aresetn;
assign m_axil_rready = tb_rready;
endmodule
