//! The table read-back window: the `tbl_sel` register, read-only copies of the job, child
//! and port-below tables (written with the engine's), the row `tbl_sel` selects (a copy's
//! read, or a route entry's registers), and the word an AXI4-Lite read of `tbl_sel` or
//! `tbl_data0..` takes.
//!
//! A block inside the control and status registers (`csr.rs`), which OR its read word into
//! theirs. That one output is a function of its own registers only (`tbl_sel`, the row
//! registered in `tbl_q`, and the read's registered selects and word index), so no input
//! reaches it in the same cycle (issue #24: cut only where a stage's outputs are
//! registered).

use crate::config::CoreConfig;
use crate::layout::{at, RegValue, RowWord, CHILD_W, JOB_W};
use crate::ram::{FaninRam, ADDR_W};
use crate::regs;
use rust_hdl::prelude::*;

use super::util::{k16, n};

/// The table read-back window of a core (see the module documentation).
#[derive(LogicBlock)]
pub struct Readback {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// `Csr`'s write handshake cycle (`aw_ack`): the latched write `wa`, `wd` is decoded.
    pub w_ack: Signal<In, bool>,
    /// The latched write address.
    pub wa: Signal<In, Bits<16>>,
    /// The latched write data.
    pub wd: Signal<In, Bits<32>>,
    /// AXI4-Lite read address: selects the word read in the next cycle.
    pub araddr: Signal<In, Bits<16>>,
    /// Engine: the job table's write port (commits and a session's epoch move).
    pub jt_waddr: Signal<In, Bits<ADDR_W>>,
    /// Engine: the job table's write data.
    pub jt_wdata: Signal<In, Bits<JOB_W>>,
    /// Engine: the job table's write enable.
    pub jt_we: Signal<In, Bits<32>>,
    /// The child table's write row (`Csr::child_waddr`).
    pub ch_waddr: Signal<In, Bits<ADDR_W>>,
    /// The child table's write data (`Csr::child_wdata`).
    pub ch_wdata: Signal<In, Bits<CHILD_W>>,
    /// The child table's write enable (`Csr::child_we`).
    pub ch_we: Signal<In, Bits<32>>,
    /// The port-below table's write row (`Csr::pb_waddr`).
    pub pb_waddr: Signal<In, Bits<ADDR_W>>,
    /// The port-below table's write data (`Csr::pb_wdata`).
    pub pb_wdata: Signal<In, Bits<64>>,
    /// The port-below table's write enable (`Csr::pb_we`).
    pub pb_we: Signal<In, Bits<32>>,
    /// Route table: destination address, per entry (read in place).
    pub route_ip: Vec<Signal<In, Bits<32>>>,
    /// Route table: entry valid.
    pub route_valid: Vec<Signal<In, bool>>,
    /// Route table: egress port, one-hot.
    pub route_pm: Vec<Signal<In, Bits<8>>>,
    /// The word the previous cycle's `araddr` selected (`tbl_sel` or the window; 0 if
    /// none).
    pub rd: Signal<Out, Bits<32>>,
    // The table (`tbl_table`) and row of the window.
    tbl_sel: DFF<Bits<32>>,
    // The copies, the selected row registered in `tbl_q`, the route entry's fields (`rt_*`).
    jram_rb: FaninRam<JOB_W>,
    chram_rb: FaninRam<CHILD_W>,
    pbram_rb: FaninRam<64>,
    tbl_row: Signal<Local, Bits<16>>,
    tbl_q: DFF<Bits<JOB_W>>,
    tbl_sh: Signal<Local, Bits<JOB_W>>,
    rt_ip: Signal<Local, Bits<32>>,
    rt_pm: Signal<Local, Bits<8>>,
    rt_v: Signal<Local, bool>,
    // The read's registered selects (`tbl_sel`, the window) and word index.
    s_tsel: DFF<bool>,
    s_tbl: DFF<bool>,
    tbl_w: DFF<Bits<16>>,
    // Constants: indices, the child row's shift and mask, the tables, the window's
    // addresses and the forwarding row's field offsets.
    c_idx16: Vec<Constant<Bits<16>>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
    c_tbl_end: Constant<Bits<16>>,
    tb_job: Constant<Bits<4>>,
    tb_child: Constant<Bits<4>>,
    tb_pb: Constant<Bits<4>>,
    tb_route: Constant<Bits<4>>,
    at_route_valid: Constant<Bits<16>>,
    at_route_ports: Constant<Bits<16>>,
    a_tbl_sel: Constant<Bits<16>>,
    a_tbl_data: Constant<Bits<16>>,
}

impl Readback {
    /// The read-back window of a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let nr = cfg.max_routes as usize;
        let nj = cfg.max_jobs as usize;
        let map = regs::RegMap::new(cfg);
        let mclog = cfg.child_bits();
        Self {
            clock: Default::default(),
            w_ack: Default::default(),
            wa: Default::default(),
            wd: Default::default(),
            araddr: Default::default(),
            jt_waddr: Default::default(),
            jt_wdata: Default::default(),
            jt_we: Default::default(),
            ch_waddr: Default::default(),
            ch_wdata: Default::default(),
            ch_we: Default::default(),
            pb_waddr: Default::default(),
            pb_wdata: Default::default(),
            pb_we: Default::default(),
            route_ip: n(nr),
            route_valid: n(nr),
            route_pm: n(nr),
            rd: Default::default(),
            tbl_sel: Default::default(),
            jram_rb: FaninRam::new(nj.max(2), 1),
            chram_rb: FaninRam::new(nj << mclog, 1),
            pbram_rb: FaninRam::new(nj.max(2) << 3, 1),
            tbl_row: Default::default(),
            tbl_q: Default::default(),
            tbl_sh: Default::default(),
            rt_ip: Default::default(),
            rt_pm: Default::default(),
            rt_v: Default::default(),
            s_tsel: Default::default(),
            s_tbl: Default::default(),
            tbl_w: Default::default(),
            c_idx16: (0..nr).map(|i| k16(i as u64)).collect(),
            c_mclog: k16(mclog as u64),
            c_mcmask: super::util::mc_mask(mclog as u64),
            c_tbl_end: k16((regs::TBL_DATA_BASE + 4 * regs::TBL_WORDS) as u64),
            tb_job: Constant::new((regs::Table::Job as u64).into()),
            tb_child: Constant::new((regs::Table::Child as u64).into()),
            tb_pb: Constant::new((regs::Table::PortBelow as u64).into()),
            tb_route: Constant::new((regs::Table::Route as u64).into()),
            at_route_valid: at(fanin_regs::layout::route::VALID),
            at_route_ports: at(fanin_regs::layout::route::PORTS),
            a_tbl_sel: k16(map.addr("tbl_sel") as u64),
            a_tbl_data: k16(map.addr("tbl_data0") as u64),
        }
    }
}

impl Logic for Readback {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tbl_sel, tbl_q, s_tsel, s_tbl, tbl_w);
        self.jram_rb.clock.next = self.clock.val();
        self.chram_rb.clock.next = self.clock.val();
        self.pbram_rb.clock.next = self.clock.val();
        // The copies are written with the engine's tables (the child and port-below tables
        // from `Csr`'s commit pulses).
        self.jram_rb.waddr.next = self.jt_waddr.val();
        self.jram_rb.wdata.next = self.jt_wdata.val();
        self.jram_rb.we.next = self.jt_we.val();
        self.chram_rb.waddr.next = self.ch_waddr.val();
        self.chram_rb.wdata.next = self.ch_wdata.val();
        self.chram_rb.we.next = self.ch_we.val();
        self.pbram_rb.waddr.next = self.pb_waddr.val();
        self.pbram_rb.wdata.next = self.pb_wdata.val();
        self.pbram_rb.we.next = self.pb_we.val();
        if self.w_ack.val() & (self.wa.val() == self.a_tbl_sel.val()) {
            self.tbl_sel.d.next = self.wd.val();
        }
        // The selected row: each copy read at its row of `tbl_sel`, the route entry's
        // registers, and the table's row registered in `tbl_q`.
        self.tbl_row.next = self.tbl_sel.q.val().get_value_low16();
        self.jram_rb.raddr.next = bit_cast::<ADDR_W, 16>(self.tbl_row.val());
        self.chram_rb.raddr.next =
            (bit_cast::<ADDR_W, 8>(self.tbl_sel.q.val().get_value_commit_entry())
                << self.c_mclog.val())
                | (bit_cast::<ADDR_W, 8>(self.tbl_sel.q.val().get_value_commit_child())
                    & self.c_mcmask.val());
        self.pbram_rb.raddr.next =
            (bit_cast::<ADDR_W, 8>(self.tbl_sel.q.val().get_value_commit_entry()) << 3)
                | bit_cast::<ADDR_W, 3>(self.tbl_sel.q.val().get_value_commit_port());
        self.rt_ip.next = 0.into();
        self.rt_pm.next = 0.into();
        self.rt_v.next = false;
        for r in 0..self.route_ip.len() {
            if self.tbl_row.val() == self.c_idx16[r].val() {
                self.rt_ip.next = self.rt_ip.val() | self.route_ip[r].val();
                self.rt_pm.next = self.rt_pm.val() | self.route_pm[r].val();
                self.rt_v.next = self.rt_v.val() | self.route_valid[r].val();
            }
        }
        self.tbl_q.d.next = 0.into();
        if self.tbl_sel.q.val().get_value_tbl_table() == self.tb_job.val() {
            self.tbl_q.d.next = self.jram_rb.rdata.val();
        }
        if self.tbl_sel.q.val().get_value_tbl_table() == self.tb_child.val() {
            self.tbl_q.d.next = bit_cast::<JOB_W, CHILD_W>(self.chram_rb.rdata.val());
        }
        if self.tbl_sel.q.val().get_value_tbl_table() == self.tb_pb.val() {
            self.tbl_q.d.next = bit_cast::<JOB_W, 64>(self.pbram_rb.rdata.val());
        }
        if self.tbl_sel.q.val().get_value_tbl_table() == self.tb_route.val() {
            self.tbl_q.d.next = bit_cast::<JOB_W, 32>(self.rt_ip.val())
                | (bit_cast::<JOB_W, 1>(self.rt_v.val().into()) << self.at_route_valid.val())
                | (bit_cast::<JOB_W, 8>(self.rt_pm.val()) << self.at_route_ports.val());
        }
        // The read: its selects and word index registered from the address, then
        // `tbl_sel` or word `tbl_w` of the row (shifted down to bits 31:0).
        self.s_tsel.d.next = self.araddr.val() == self.a_tbl_sel.val();
        self.s_tbl.d.next = (self.araddr.val() >= self.a_tbl_data.val())
            & (self.araddr.val() < self.c_tbl_end.val());
        self.tbl_w.d.next = (self.araddr.val() - self.a_tbl_data.val()) >> 2;
        self.tbl_sh.next = self.tbl_q.q.val() >> (self.tbl_w.q.val() << 5);
        self.rd.next = 0.into();
        if self.s_tsel.q.val() {
            self.rd.next = self.tbl_sel.q.val();
        }
        if self.s_tbl.q.val() {
            self.rd.next = self.rd.val() | self.tbl_sh.val().get_value_low32();
        }
    }
}
