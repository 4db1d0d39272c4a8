//! The AXI4-Lite slave interface of the core and of the register block (`csr.rs`) behind
//! it: one bundle, linked through in one line, instead of seventeen ports declared and
//! copied twice. `verilog.rs` gives its signals the flat `s_axil_*` names at the top.

use rust_hdl::prelude::*;

/// An AXI4-Lite slave port: 16-bit addresses, 32-bit data.
#[derive(LogicInterface, Clone, Debug, Default)]
pub struct AxiLite {
    /// Write address.
    pub awaddr: Signal<In, Bits<16>>,
    /// Write address valid.
    pub awvalid: Signal<In, bool>,
    /// Write address ready.
    pub awready: Signal<Out, bool>,
    /// Write data.
    pub wdata: Signal<In, Bits<32>>,
    /// Write strobes: registers are written whole, a write without all four is refused
    /// (SLVERR, nothing changes).
    pub wstrb: Signal<In, Bits<4>>,
    /// Write data valid.
    pub wvalid: Signal<In, bool>,
    /// Write data ready.
    pub wready: Signal<Out, bool>,
    /// Write response.
    pub bresp: Signal<Out, Bits<2>>,
    /// Write response valid.
    pub bvalid: Signal<Out, bool>,
    /// Write response ready.
    pub bready: Signal<In, bool>,
    /// Read address.
    pub araddr: Signal<In, Bits<16>>,
    /// Read address valid.
    pub arvalid: Signal<In, bool>,
    /// Read address ready.
    pub arready: Signal<Out, bool>,
    /// Read data.
    pub rdata: Signal<Out, Bits<32>>,
    /// Read response.
    pub rresp: Signal<Out, Bits<2>>,
    /// Read data valid.
    pub rvalid: Signal<Out, bool>,
    /// Read data ready.
    pub rready: Signal<In, bool>,
}
