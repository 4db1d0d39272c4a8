//! The control and status registers: the AXI4-Lite slave, the registers it writes
//! (identity, timer, the route table, the table commits), and the read data path. Two
//! sub-blocks inside it hold the rest: `staging.rs` the staging registers of the job,
//! child and port-below tables (with the packed words the commits write), `readback.rs`
//! the table read-back window (`tbl_sel`, `tbl_data*`, with its own read selects); the
//! read data path ORs in the window's word and the word of the `counters.rs` block beside
//! it.
//!
//! The engine and this block meet only at flip-flops: every output is a register (or a
//! RAM's registered read), and no input reaches an output in the same cycle, so the
//! engine's single `always` block never sees a combinational loop through it (issue #24:
//! cut only where a stage's outputs are registered).
//!
//! Writes take two cycles: the cycle `awvalid` and `wvalid` are both seen (and the block is
//! idle) latches address and data; the next cycle raises `awready`/`wready` (the handshake)
//! and decodes the latched write; a write without all four strobes changes nothing and is
//! answered SLVERR (registers are written whole), one to an address without a writable
//! register changes nothing and is answered DECERR. A table commit reaches the engine as a one-cycle
//! registered pulse the cycle after that (`job_commit`, `child_we`, `pb_we`). Reads take
//! two cycles as well: the selects, then the OR of the selected values.

use crate::config::CoreConfig;
use crate::layout::{Mac48, RegValue, RoutePort, CHILD_W, JOB_W};
use crate::ram::ADDR_W;
use crate::regs;

use super::axil::AxiLite;
use super::readback::Readback;
use super::staging::Staging;
use super::util::{k16, n};
use rust_hdl::prelude::*;

/// The control and status registers (see the module documentation).
#[derive(LogicBlock)]
pub struct Csr {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// The AXI4-Lite slave (`axil.rs`): registers are written whole, so a write without
    /// all four strobes changes nothing and is answered SLVERR; a write to an address
    /// without a writable register changes nothing and is answered DECERR; every other
    /// response is OKAY; the readies are registered.
    pub axil: AxiLite,
    /// Engine: a job commit is pending or being applied (writes wait: the commit reads the
    /// staged entry, `job_word`, when it applies).
    pub hold: Signal<In, bool>,
    /// Engine: the tick (`now`), read as register `tick`.
    pub now: Signal<In, Bits<32>>,
    /// Engine: busy slot copies per job-table entry, read as `job_busy`.
    pub jbusy: Vec<Signal<In, Bits<32>>>,
    /// Engine: the job table's write port (commits and a session's epoch move), mirrored
    /// into the read-back copy.
    pub jt_waddr: Signal<In, Bits<ADDR_W>>,
    /// Engine: the job table's write data.
    pub jt_wdata: Signal<In, Bits<JOB_W>>,
    /// Engine: the job table's write enable.
    pub jt_we: Signal<In, Bits<32>>,
    /// The counters' read word (`Counters::rd`: what the previous cycle's address selected).
    pub cnt_rd: Signal<In, Bits<32>>,
    /// The switch's IPv4 address (`me_ip`).
    pub me_ip: Signal<Out, Bits<32>>,
    /// The switch's UDP port (`me_udp_port`).
    pub me_port: Signal<Out, Bits<16>>,
    /// The switch's MAC address (`me_mac_lo`/`me_mac_hi`).
    pub me_mac: Signal<Out, Bits<48>>,
    /// Cycles per tick (`tick_div`).
    pub tick_div: Signal<Out, Bits<32>>,
    /// Ticks between timer sweeps (`scan_ticks`; 0: none).
    pub scan_ticks: Signal<Out, Bits<32>>,
    /// Route table: destination address, per entry.
    pub route_ip: Vec<Signal<Out, Bits<32>>>,
    /// Route table: entry valid.
    pub route_valid: Vec<Signal<Out, bool>>,
    /// Route table: egress port, one-hot.
    pub route_pm: Vec<Signal<Out, Bits<8>>>,
    /// A `job_commit` was written (one cycle), to entry `job_commit_entry`.
    pub job_commit: Signal<Out, bool>,
    /// The job-table entry of `job_commit`.
    pub job_commit_entry: Signal<Out, Bits<8>>,
    /// The staged job entry, packed (`layout::job`, epoch 0).
    pub job_word: Signal<Out, Bits<JOB_W>>,
    /// Child-table write enable (one cycle per `child_commit`).
    pub child_we: Signal<Out, Bits<32>>,
    /// Child-table write row (`entry << log2(max_children) | child`).
    pub child_waddr: Signal<Out, Bits<ADDR_W>>,
    /// Child-table write data (the staged child, `layout::child`).
    pub child_wdata: Signal<Out, Bits<CHILD_W>>,
    /// Port-below table write enable (one cycle per `port_below_commit`).
    pub pb_we: Signal<Out, Bits<32>>,
    /// Port-below table write row (`entry << 3 | port`).
    pub pb_waddr: Signal<Out, Bits<ADDR_W>>,
    /// Port-below table write data (the staged rank set).
    pub pb_wdata: Signal<Out, Bits<64>>,
    // Write side: accepted (the handshake cycle), and the latched address and data;
    // `w_go`: the accepted write is applied (all four strobes, to a writable register,
    // `w_hit`: one of `c_wr`); `b_code`: its response (OKAY, SLVERR for a partial write,
    // DECERR where no register takes a write).
    aw_ack: DFF<bool>,
    w_go: DFF<bool>,
    w_hit: Signal<Local, bool>,
    b_code: DFF<Bits<2>>,
    c_wr: Vec<Constant<Bits<16>>>,
    wa: DFF<Bits<16>>,
    wd: DFF<Bits<32>>,
    wr: Signal<Local, bool>,
    bvalid_r: DFF<bool>,
    // Registers written.
    me_ip_r: DFF<Bits<32>>,
    me_port_r: DFF<Bits<16>>,
    me_mac_r: DFF<Bits<48>>,
    tick_div_r: DFF<Bits<32>>,
    scan_ticks_r: DFF<Bits<32>>,
    st_route_ip: DFF<Bits<32>>,
    st_route_port: DFF<Bits<8>>,
    route_ip_r: Vec<DFF<Bits<32>>>,
    route_valid_r: Vec<DFF<bool>>,
    route_pm_r: Vec<DFF<Bits<8>>>,
    // Commit pulses and their entries or rows (the data: `staging`).
    jcw: DFF<bool>,
    jcw_i: DFF<Bits<8>>,
    chw: DFF<bool>,
    chw_a: DFF<Bits<ADDR_W>>,
    pbw: DFF<bool>,
    pbw_a: DFF<Bits<ADDR_W>>,
    // The staging registers of the job, child and port-below tables, with their packed
    // words; the table read-back window, with its own read selects.
    staging: Staging,
    readback: Readback,
    // Read side: a read in its second cycle, its registered selects, the read data.
    rs: DFF<bool>,
    s_info: Vec<DFF<bool>>,
    s_misc: DFF<Bits<8>>,
    s_busy: Vec<DFF<bool>>,
    rvalid_r: DFF<bool>,
    rdata_r: DFF<Bits<32>>,
    rd: Signal<Local, Bits<32>>,
    // Constants: indices, the identity registers' values, the child row's shift and mask,
    // the register map's addresses.
    c_idx16: Vec<Constant<Bits<16>>>,
    c_info: Vec<Constant<Bits<32>>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
    a_me_ip: Constant<Bits<16>>,
    a_me_port: Constant<Bits<16>>,
    a_me_mac_lo: Constant<Bits<16>>,
    a_me_mac_hi: Constant<Bits<16>>,
    a_tick_div: Constant<Bits<16>>,
    a_tick: Constant<Bits<16>>,
    a_scan_ticks: Constant<Bits<16>>,
    a_busy: Constant<Bits<16>>,
    a_route_ip: Constant<Bits<16>>,
    a_route_port: Constant<Bits<16>>,
    a_route_commit: Constant<Bits<16>>,
    a_port_below_commit: Constant<Bits<16>>,
    a_job_commit: Constant<Bits<16>>,
    a_child_commit: Constant<Bits<16>>,
}

impl Csr {
    /// The registers of a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let nr = cfg.max_routes as usize;
        let nj = cfg.max_jobs as usize;
        let map = regs::RegMap::new(cfg);
        let mclog = cfg.child_bits();
        let a = |name: &str| k16(map.addr(name) as u64);
        Self {
            clock: Default::default(),
            rst: Default::default(),
            axil: Default::default(),
            hold: Default::default(),
            now: Default::default(),
            jbusy: n(nj),
            jt_waddr: Default::default(),
            jt_wdata: Default::default(),
            jt_we: Default::default(),
            cnt_rd: Default::default(),
            me_ip: Default::default(),
            me_port: Default::default(),
            me_mac: Default::default(),
            tick_div: Default::default(),
            scan_ticks: Default::default(),
            route_ip: n(nr),
            route_valid: n(nr),
            route_pm: n(nr),
            job_commit: Default::default(),
            job_commit_entry: Default::default(),
            job_word: Default::default(),
            child_we: Default::default(),
            child_waddr: Default::default(),
            child_wdata: Default::default(),
            pb_we: Default::default(),
            pb_waddr: Default::default(),
            pb_wdata: Default::default(),
            aw_ack: Default::default(),
            w_go: Default::default(),
            w_hit: Default::default(),
            b_code: Default::default(),
            c_wr: map
                .regs
                .iter()
                .filter(|r| r.access != regs::map::Access::RO)
                .map(|r| k16(r.addr as u64))
                .collect(),
            wa: Default::default(),
            wd: Default::default(),
            wr: Default::default(),
            bvalid_r: Default::default(),
            me_ip_r: Default::default(),
            me_port_r: Default::default(),
            me_mac_r: Default::default(),
            tick_div_r: Default::default(),
            scan_ticks_r: Default::default(),
            st_route_ip: Default::default(),
            st_route_port: Default::default(),
            route_ip_r: n(nr),
            route_valid_r: n(nr),
            route_pm_r: n(nr),
            jcw: Default::default(),
            jcw_i: Default::default(),
            chw: Default::default(),
            chw_a: Default::default(),
            pbw: Default::default(),
            pbw_a: Default::default(),
            staging: Staging::new(cfg),
            readback: Readback::new(cfg),
            rs: Default::default(),
            s_info: n(map.info_values().len()),
            s_misc: Default::default(),
            s_busy: n(nj),
            rvalid_r: Default::default(),
            rdata_r: Default::default(),
            rd: Default::default(),
            c_idx16: (0..nr.max(nj).max(map.info_values().len()).max(8))
                .map(|i| k16(i as u64))
                .collect(),
            c_info: map
                .info_values()
                .into_iter()
                .map(|v| Constant::new((v as u64).into()))
                .collect(),
            c_mclog: k16(mclog as u64),
            c_mcmask: super::util::mc_mask(mclog as u64),
            a_me_ip: a("me_ip"),
            a_me_port: a("me_udp_port"),
            a_me_mac_lo: a("me_mac_lo"),
            a_me_mac_hi: a("me_mac_hi"),
            a_tick_div: a("tick_div"),
            a_tick: a("tick"),
            a_scan_ticks: a("scan_ticks"),
            a_busy: k16(regs::JOB_BUSY_BASE as u64),
            a_route_ip: a("route_ip"),
            a_route_port: a("route_port"),
            a_route_commit: a("route_commit"),
            a_port_below_commit: a("port_below_commit"),
            a_job_commit: a("job_commit"),
            a_child_commit: a("child_commit"),
        }
    }
}

impl Logic for Csr {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            aw_ack,
            w_go,
            b_code,
            wa,
            wd,
            bvalid_r,
            me_ip_r,
            me_port_r,
            me_mac_r,
            tick_div_r,
            scan_ticks_r,
            st_route_ip,
            st_route_port,
            jcw,
            jcw_i,
            chw,
            chw_a,
            pbw,
            pbw_a,
            rs,
            s_misc,
            rvalid_r,
            rdata_r
        );
        for r in 0..self.route_ip_r.len() {
            self.route_ip_r[r].clock.next = self.clock.val();
            self.route_ip_r[r].d.next = self.route_ip_r[r].q.val();
            self.route_valid_r[r].clock.next = self.clock.val();
            self.route_valid_r[r].d.next = self.route_valid_r[r].q.val();
            self.route_pm_r[r].clock.next = self.clock.val();
            self.route_pm_r[r].d.next = self.route_pm_r[r].q.val();
        }
        for i in 0..self.s_info.len() {
            self.s_info[i].clock.next = self.clock.val();
            self.s_info[i].d.next = self.s_info[i].q.val();
        }
        for j in 0..self.s_busy.len() {
            self.s_busy[j].clock.next = self.clock.val();
            self.s_busy[j].d.next = self.s_busy[j].q.val();
        }
        // Outputs: registers.
        self.me_ip.next = self.me_ip_r.q.val();
        self.me_port.next = self.me_port_r.q.val();
        self.me_mac.next = self.me_mac_r.q.val();
        self.tick_div.next = self.tick_div_r.q.val();
        self.scan_ticks.next = self.scan_ticks_r.q.val();
        for r in 0..self.route_ip_r.len() {
            self.route_ip[r].next = self.route_ip_r[r].q.val();
            self.route_valid[r].next = self.route_valid_r[r].q.val();
            self.route_pm[r].next = self.route_pm_r[r].q.val();
        }
        self.job_commit.next = self.jcw.q.val();
        self.job_commit_entry.next = self.jcw_i.q.val();
        self.job_word.next = self.staging.job_word.val();
        self.child_we.next = bit_cast::<32, 1>(self.chw.q.val().into());
        self.child_waddr.next = self.chw_a.q.val();
        self.child_wdata.next = self.staging.child_word.val();
        self.pb_we.next = bit_cast::<32, 1>(self.pbw.q.val().into());
        self.pb_waddr.next = self.pbw_a.q.val();
        self.pb_wdata.next = self.staging.pbelow.val();
        // Write: accept address and data together, when no write is in its handshake or
        // response, no commit pulse is out and the engine is not applying a job commit.
        self.wr.next = self.axil.awvalid.val()
            & self.axil.wvalid.val()
            & !self.aw_ack.q.val()
            & !self.bvalid_r.q.val()
            & !self.jcw.q.val()
            & !self.hold.val();
        self.aw_ack.d.next = self.wr.val();
        // Registers are written whole: a write without all four strobes changes nothing
        // and is answered SLVERR; one to an address without a writable register (none, or
        // a read-only one) changes nothing and is answered DECERR.
        // (Compared only while `awvalid` is up: the Verilated model skips the compares in
        // the cycles without a write, nearly all of them.)
        self.w_hit.next = false;
        if self.axil.awvalid.val() {
            for i in 0..self.c_wr.len() {
                if self.axil.awaddr.val() == self.c_wr[i].val() {
                    self.w_hit.next = true;
                }
            }
        }
        self.w_go.d.next = self.wr.val() & self.axil.wstrb.val().all() & self.w_hit.val();
        if self.wr.val() {
            self.wa.d.next = self.axil.awaddr.val();
            self.wd.d.next = self.axil.wdata.val();
            self.b_code.d.next = 0.into();
            if !self.axil.wstrb.val().all() {
                self.b_code.d.next = 2.into();
            }
            if !self.w_hit.val() {
                self.b_code.d.next = 3.into();
            }
        }
        self.axil.awready.next = self.aw_ack.q.val();
        self.axil.wready.next = self.aw_ack.q.val();
        self.axil.bvalid.next = self.bvalid_r.q.val();
        self.axil.bresp.next = self.b_code.q.val();
        if self.aw_ack.q.val() {
            self.bvalid_r.d.next = true;
        } else if self.axil.bready.val() {
            self.bvalid_r.d.next = false;
        }
        // The write, decoded in its handshake cycle from the latched address and data.
        self.jcw.d.next = false;
        self.chw.d.next = false;
        self.pbw.d.next = false;
        if self.w_go.q.val() {
            if self.wa.q.val() == self.a_me_ip.val() {
                self.me_ip_r.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_me_port.val() {
                self.me_port_r.d.next = self.wd.q.val().get_value_low16();
            }
            if self.wa.q.val() == self.a_me_mac_lo.val() {
                self.me_mac_r.d.next = (self.me_mac_r.q.val() & 0xffff_0000_0000u64)
                    | bit_cast::<48, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_me_mac_hi.val() {
                self.me_mac_r.d.next = (self.me_mac_r.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<48, 16>(self.wd.q.val().get_value_low16()) << 32);
            }
            if self.wa.q.val() == self.a_tick_div.val() {
                self.tick_div_r.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_scan_ticks.val() {
                self.scan_ticks_r.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_port_below_commit.val() {
                self.pbw.d.next = true;
                self.pbw_a.d.next =
                    (bit_cast::<ADDR_W, 8>(self.wd.q.val().get_value_commit_entry()) << 3)
                        | bit_cast::<ADDR_W, 3>(self.wd.q.val().get_value_commit_port());
            }
            if self.wa.q.val() == self.a_job_commit.val() {
                // The engine applies it when its front end is idle, in decision order.
                self.jcw.d.next = true;
                self.jcw_i.d.next = self.wd.q.val().get_value_low8();
            }
            if self.wa.q.val() == self.a_child_commit.val() {
                self.chw.d.next = true;
                self.chw_a.d.next =
                    (bit_cast::<ADDR_W, 8>(self.wd.q.val().get_value_commit_entry())
                        << self.c_mclog.val())
                        | (bit_cast::<ADDR_W, 8>(self.wd.q.val().get_value_commit_child())
                            & self.c_mcmask.val());
            }
            if self.wa.q.val() == self.a_route_ip.val() {
                self.st_route_ip.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_route_port.val() {
                self.st_route_port.d.next = self.wd.q.val().get_value_low8();
            }
            if self.wa.q.val() == self.a_route_commit.val() {
                for r in 0..self.route_ip_r.len() {
                    if self.wd.q.val().get_value_low16() == self.c_idx16[r].val() {
                        self.route_ip_r[r].d.next = self.st_route_ip.q.val();
                        self.route_valid_r[r].d.next = self.st_route_port.q.val().get_value_valid();
                        self.route_pm_r[r].d.next = bits::<8>(1)
                            << bit_cast::<8, 4>(self.st_route_port.q.val().get_value_egress());
                    }
                }
            }
        }
        // The staging registers: the latched write.
        self.staging.clock.next = self.clock.val();
        self.staging.w_ack.next = self.w_go.q.val();
        self.staging.wa.next = self.wa.q.val();
        self.staging.wd.next = self.wd.q.val();
        // The table read-back window (`tbl_sel`, `tbl_data*`): the latched write, the read
        // address, the engine's job-table writes, this block's child and port-below
        // commits, and the route table.
        self.readback.clock.next = self.clock.val();
        self.readback.w_ack.next = self.w_go.q.val();
        self.readback.wa.next = self.wa.q.val();
        self.readback.wd.next = self.wd.q.val();
        self.readback.araddr.next = self.axil.araddr.val();
        self.readback.jt_waddr.next = self.jt_waddr.val();
        self.readback.jt_wdata.next = self.jt_wdata.val();
        self.readback.jt_we.next = self.jt_we.val();
        self.readback.ch_waddr.next = self.chw_a.q.val();
        self.readback.ch_wdata.next = self.staging.child_word.val();
        self.readback.ch_we.next = bit_cast::<32, 1>(self.chw.q.val().into());
        self.readback.pb_waddr.next = self.pbw_a.q.val();
        self.readback.pb_wdata.next = self.staging.pbelow.val();
        self.readback.pb_we.next = bit_cast::<32, 1>(self.pbw.q.val().into());
        for r in 0..self.route_ip_r.len() {
            self.readback.route_ip[r].next = self.route_ip_r[r].q.val();
            self.readback.route_valid[r].next = self.route_valid_r[r].q.val();
            self.readback.route_pm[r].next = self.route_pm_r[r].q.val();
        }
        // Read: two cycles. The cycle a read is accepted registers one select per readable
        // register (the address compared with each register's address); the next cycle ORs
        // the selected values (every address is distinct, so at most one select is set).
        self.axil.arready.next = !self.rvalid_r.q.val() & !self.rs.q.val();
        self.axil.rvalid.next = self.rvalid_r.q.val();
        self.axil.rdata.next = self.rdata_r.q.val();
        self.axil.rresp.next = 0.into();
        for i in 0..self.s_info.len() {
            self.s_info[i].d.next = self.axil.araddr.val() == (self.c_idx16[i].val() << 2);
        }
        self.s_misc.d.next =
            bit_cast::<8, 1>((self.axil.araddr.val() == self.a_me_ip.val()).into())
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_me_port.val()).into()) << 1)
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_me_mac_lo.val()).into())
                    << 2)
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_me_mac_hi.val()).into())
                    << 3)
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_tick_div.val()).into()) << 4)
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_tick.val()).into()) << 5)
                | (bit_cast::<8, 1>((self.axil.araddr.val() == self.a_scan_ticks.val()).into())
                    << 6);
        for j in 0..self.s_busy.len() {
            self.s_busy[j].d.next =
                self.axil.araddr.val() == self.a_busy.val() + (self.c_idx16[j].val() << 2);
        }
        self.rd.next = 0.into();
        for i in 0..self.s_info.len() {
            if self.s_info[i].q.val() {
                self.rd.next = self.rd.val() | self.c_info[i].val();
            }
        }
        if self.s_misc.q.val().get_bit(0) {
            self.rd.next = self.rd.val() | self.me_ip_r.q.val();
        }
        if self.s_misc.q.val().get_bit(1) {
            self.rd.next = self.rd.val() | bit_cast::<32, 16>(self.me_port_r.q.val());
        }
        if self.s_misc.q.val().get_bit(2) {
            self.rd.next = self.rd.val() | self.me_mac_r.q.val().get_value_mac_lo();
        }
        if self.s_misc.q.val().get_bit(3) {
            self.rd.next =
                self.rd.val() | bit_cast::<32, 16>(self.me_mac_r.q.val().get_value_mac_hi());
        }
        if self.s_misc.q.val().get_bit(4) {
            self.rd.next = self.rd.val() | self.tick_div_r.q.val();
        }
        if self.s_misc.q.val().get_bit(5) {
            self.rd.next = self.rd.val() | self.now.val();
        }
        if self.s_misc.q.val().get_bit(6) {
            self.rd.next = self.rd.val() | self.scan_ticks_r.q.val();
        }
        self.rd.next = self.rd.val() | self.readback.rd.val();
        for j in 0..self.s_busy.len() {
            if self.s_busy[j].q.val() {
                self.rd.next = self.rd.val() | self.jbusy[j].val();
            }
        }
        self.rd.next = self.rd.val() | self.cnt_rd.val();
        self.rs.d.next = self.axil.arvalid.val() & !self.rvalid_r.q.val() & !self.rs.q.val();
        if self.rs.q.val() {
            self.rvalid_r.d.next = true;
            self.rdata_r.d.next = self.rd.val();
        } else if self.axil.rready.val() {
            self.rvalid_r.d.next = false;
        }
        if self.rst.val() {
            self.aw_ack.d.next = false;
            self.w_go.d.next = false;
            self.b_code.d.next = 0.into();
            self.bvalid_r.d.next = false;
            self.rvalid_r.d.next = false;
            self.rs.d.next = false;
            self.jcw.d.next = false;
            self.chw.d.next = false;
            self.pbw.d.next = false;
            self.tick_div_r.d.next = 1.into();
            self.scan_ticks_r.d.next = 1.into();
            for r in 0..self.route_valid_r.len() {
                self.route_valid_r[r].d.next = false;
            }
        }
    }
}
