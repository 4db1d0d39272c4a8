//! The control and status registers: the AXI4-Lite slave, the registers it writes
//! (identity, timer, the staging registers of the job, child and port-below tables, the
//! route table), the table read-back window, and the read data path, which takes the
//! counters' word from the `counters.rs` block beside it.
//!
//! The engine and this block meet only at flip-flops: every output is a register (or a
//! RAM's registered read), and no input reaches an output in the same cycle, so the
//! engine's single `always` block never sees a combinational loop through it (issue #24:
//! cut only where a stage's outputs are registered).
//!
//! Writes take two cycles: the cycle `awvalid` and `wvalid` are both seen (and the block is
//! idle) latches address and data; the next cycle raises `awready`/`wready` (the handshake)
//! and decodes the latched write. A table commit reaches the engine as a one-cycle
//! registered pulse the cycle after that (`job_commit`, `child_we`, `pb_we`). Reads take
//! two cycles as well: the selects, then the OR of the selected values.

use crate::config::CoreConfig;
use crate::layout::{at, Mac48, RegValue, RoutePort, RowWord, CHILD_W, JOB_W};
use crate::ram::{FaninRam, ADDR_W};
use crate::regs;

use super::{k16, n};
use fanin_regs::layout::{child, job};
use rust_hdl::prelude::*;

/// The control and status registers (see the module documentation).
#[derive(LogicBlock)]
pub struct Csr {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// AXI4-Lite write address.
    pub awaddr: Signal<In, Bits<16>>,
    /// AXI4-Lite write address valid.
    pub awvalid: Signal<In, bool>,
    /// AXI4-Lite write address ready (registered).
    pub awready: Signal<Out, bool>,
    /// AXI4-Lite write data.
    pub wdata: Signal<In, Bits<32>>,
    /// AXI4-Lite write data valid.
    pub wvalid: Signal<In, bool>,
    /// AXI4-Lite write data ready (registered).
    pub wready: Signal<Out, bool>,
    /// AXI4-Lite write response (always OKAY).
    pub bresp: Signal<Out, Bits<2>>,
    /// AXI4-Lite write response valid.
    pub bvalid: Signal<Out, bool>,
    /// AXI4-Lite write response ready.
    pub bready: Signal<In, bool>,
    /// AXI4-Lite read address.
    pub araddr: Signal<In, Bits<16>>,
    /// AXI4-Lite read address valid.
    pub arvalid: Signal<In, bool>,
    /// AXI4-Lite read address ready (registered).
    pub arready: Signal<Out, bool>,
    /// AXI4-Lite read data.
    pub rdata: Signal<Out, Bits<32>>,
    /// AXI4-Lite read response (always OKAY).
    pub rresp: Signal<Out, Bits<2>>,
    /// AXI4-Lite read data valid.
    pub rvalid: Signal<Out, bool>,
    /// AXI4-Lite read data ready.
    pub rready: Signal<In, bool>,
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
    // Write side: accepted (the handshake cycle), and the latched address and data.
    aw_ack: DFF<bool>,
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
    tbl_sel: DFF<Bits<32>>,
    st_jid: DFF<Bits<16>>,
    st_jctrl: DFF<Bits<32>>,
    st_jranks: DFF<Bits<64>>,
    st_jexp: DFF<Bits<64>>,
    st_jsbase: DFF<Bits<32>>,
    st_jscount: DFF<Bits<32>>,
    st_jquota: DFF<Bits<32>>,
    st_jflush: DFF<Bits<32>>,
    st_jreclaim: DFF<Bits<32>>,
    st_jidle: DFF<Bits<32>>,
    st_jfirst: DFF<Bits<32>>,
    st_pmac: DFF<Bits<48>>,
    st_pip: DFF<Bits<32>>,
    st_pudp: DFF<Bits<16>>,
    st_pport: DFF<Bits<8>>,
    st_cmac: DFF<Bits<48>>,
    st_cip: DFF<Bits<32>>,
    st_cudp: DFF<Bits<16>>,
    st_cport: DFF<Bits<8>>,
    st_cranks: DFF<Bits<64>>,
    st_pbelow: DFF<Bits<64>>,
    st_route_ip: DFF<Bits<32>>,
    st_route_port: DFF<Bits<8>>,
    route_ip_r: Vec<DFF<Bits<32>>>,
    route_valid_r: Vec<DFF<bool>>,
    route_pm_r: Vec<DFF<Bits<8>>>,
    // Commit pulses and what they write.
    jcw: DFF<bool>,
    jcw_i: DFF<Bits<8>>,
    jword: DFF<Bits<JOB_W>>,
    chw: DFF<bool>,
    chw_a: DFF<Bits<ADDR_W>>,
    cword: DFF<Bits<CHILD_W>>,
    pbw: DFF<bool>,
    pbw_a: DFF<Bits<ADDR_W>>,
    // Table read-back: copies of the job, child and port-below tables (written with the
    // engine's), the selected row registered in `tbl_q`, the route entry's fields (`rt_*`).
    jram_rb: FaninRam<JOB_W>,
    chram_rb: FaninRam<CHILD_W>,
    pbram_rb: FaninRam<64>,
    tbl_row: Signal<Local, Bits<16>>,
    tbl_q: DFF<Bits<JOB_W>>,
    tbl_sh: Signal<Local, Bits<JOB_W>>,
    rt_ip: Signal<Local, Bits<32>>,
    rt_pm: Signal<Local, Bits<8>>,
    rt_v: Signal<Local, bool>,
    // Read side: a read in its second cycle, its registered selects, the read data.
    rs: DFF<bool>,
    s_info: Vec<DFF<bool>>,
    s_misc: DFF<Bits<8>>,
    s_busy: Vec<DFF<bool>>,
    s_tbl: DFF<bool>,
    s_tsel: DFF<bool>,
    tbl_w: DFF<Bits<16>>,
    rvalid_r: DFF<bool>,
    rdata_r: DFF<Bits<32>>,
    rd: Signal<Local, Bits<32>>,
    // Constants: indices, the identity registers' values, the register map's addresses and
    // the packed words' field offsets.
    c_idx16: Vec<Constant<Bits<16>>>,
    c_info: Vec<Constant<Bits<32>>>,
    c_mclog: Constant<Bits<16>>,
    c_mcmask: Constant<Bits<ADDR_W>>,
    c_tbl_end: Constant<Bits<16>>,
    tb_job: Constant<Bits<4>>,
    tb_child: Constant<Bits<4>>,
    tb_pb: Constant<Bits<4>>,
    tb_route: Constant<Bits<4>>,
    at_route_valid: Constant<Bits<16>>,
    at_route_ports: Constant<Bits<16>>,
    a_me_ip: Constant<Bits<16>>,
    a_me_port: Constant<Bits<16>>,
    a_me_mac_lo: Constant<Bits<16>>,
    a_me_mac_hi: Constant<Bits<16>>,
    a_tick_div: Constant<Bits<16>>,
    a_tick: Constant<Bits<16>>,
    a_scan_ticks: Constant<Bits<16>>,
    a_tbl_sel: Constant<Bits<16>>,
    a_tbl_data: Constant<Bits<16>>,
    a_busy: Constant<Bits<16>>,
    a_route_ip: Constant<Bits<16>>,
    a_route_port: Constant<Bits<16>>,
    a_route_commit: Constant<Bits<16>>,
    a_job_id: Constant<Bits<16>>,
    a_job_ctrl: Constant<Bits<16>>,
    a_job_ranks_lo: Constant<Bits<16>>,
    a_job_ranks_hi: Constant<Bits<16>>,
    a_job_expected_lo: Constant<Bits<16>>,
    a_job_expected_hi: Constant<Bits<16>>,
    a_job_slot_base: Constant<Bits<16>>,
    a_job_slot_count: Constant<Bits<16>>,
    a_job_quota: Constant<Bits<16>>,
    a_job_flush_after: Constant<Bits<16>>,
    a_job_reclaim_after: Constant<Bits<16>>,
    a_job_reclaim_idle: Constant<Bits<16>>,
    a_job_first_block: Constant<Bits<16>>,
    a_port_below_lo: Constant<Bits<16>>,
    a_port_below_hi: Constant<Bits<16>>,
    a_port_below_commit: Constant<Bits<16>>,
    a_job_parent_mac_lo: Constant<Bits<16>>,
    a_job_parent_mac_hi: Constant<Bits<16>>,
    a_job_parent_ip: Constant<Bits<16>>,
    a_job_parent_udp: Constant<Bits<16>>,
    a_job_parent_port: Constant<Bits<16>>,
    a_job_commit: Constant<Bits<16>>,
    a_child_mac_lo: Constant<Bits<16>>,
    a_child_mac_hi: Constant<Bits<16>>,
    a_child_ip: Constant<Bits<16>>,
    a_child_udp: Constant<Bits<16>>,
    a_child_port: Constant<Bits<16>>,
    a_child_ranks_lo: Constant<Bits<16>>,
    a_child_ranks_hi: Constant<Bits<16>>,
    a_child_commit: Constant<Bits<16>>,
    at_job_job: Constant<Bits<16>>,
    at_job_ranks: Constant<Bits<16>>,
    at_job_expected: Constant<Bits<16>>,
    at_job_slot_base: Constant<Bits<16>>,
    at_job_slot_count: Constant<Bits<16>>,
    at_job_quota: Constant<Bits<16>>,
    at_job_flush_after: Constant<Bits<16>>,
    at_job_reclaim_after: Constant<Bits<16>>,
    at_job_reclaim_idle: Constant<Bits<16>>,
    at_job_first_block: Constant<Bits<16>>,
    at_job_parent_ip: Constant<Bits<16>>,
    at_job_parent_mac: Constant<Bits<16>>,
    at_job_parent_udp: Constant<Bits<16>>,
    at_job_parent_port: Constant<Bits<16>>,
    at_child_mac: Constant<Bits<16>>,
    at_child_ip: Constant<Bits<16>>,
    at_child_udp: Constant<Bits<16>>,
    at_child_port: Constant<Bits<16>>,
}

impl Csr {
    /// The registers of a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let nr = cfg.max_routes as usize;
        let nj = cfg.max_jobs as usize;
        let map = regs::RegMap::new(cfg);
        let mclog = (cfg.max_children as usize)
            .next_power_of_two()
            .trailing_zeros() as usize;
        let a = |name: &str| k16(map.addr(name) as u64);
        Self {
            clock: Default::default(),
            rst: Default::default(),
            awaddr: Default::default(),
            awvalid: Default::default(),
            awready: Default::default(),
            wdata: Default::default(),
            wvalid: Default::default(),
            wready: Default::default(),
            bresp: Default::default(),
            bvalid: Default::default(),
            bready: Default::default(),
            araddr: Default::default(),
            arvalid: Default::default(),
            arready: Default::default(),
            rdata: Default::default(),
            rresp: Default::default(),
            rvalid: Default::default(),
            rready: Default::default(),
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
            wa: Default::default(),
            wd: Default::default(),
            wr: Default::default(),
            bvalid_r: Default::default(),
            me_ip_r: Default::default(),
            me_port_r: Default::default(),
            me_mac_r: Default::default(),
            tick_div_r: Default::default(),
            scan_ticks_r: Default::default(),
            tbl_sel: Default::default(),
            st_jid: Default::default(),
            st_jctrl: Default::default(),
            st_jranks: Default::default(),
            st_jexp: Default::default(),
            st_jsbase: Default::default(),
            st_jscount: Default::default(),
            st_jquota: Default::default(),
            st_jflush: Default::default(),
            st_jreclaim: Default::default(),
            st_jidle: Default::default(),
            st_jfirst: Default::default(),
            st_pmac: Default::default(),
            st_pip: Default::default(),
            st_pudp: Default::default(),
            st_pport: Default::default(),
            st_cmac: Default::default(),
            st_cip: Default::default(),
            st_cudp: Default::default(),
            st_cport: Default::default(),
            st_cranks: Default::default(),
            st_pbelow: Default::default(),
            st_route_ip: Default::default(),
            st_route_port: Default::default(),
            route_ip_r: n(nr),
            route_valid_r: n(nr),
            route_pm_r: n(nr),
            jcw: Default::default(),
            jcw_i: Default::default(),
            jword: Default::default(),
            chw: Default::default(),
            chw_a: Default::default(),
            cword: Default::default(),
            pbw: Default::default(),
            pbw_a: Default::default(),
            jram_rb: FaninRam::new(nj.max(2), 1),
            chram_rb: FaninRam::new(nj << mclog, 1),
            pbram_rb: FaninRam::new(nj.max(2) << 3, 1),
            tbl_row: Default::default(),
            tbl_q: Default::default(),
            tbl_sh: Default::default(),
            rt_ip: Default::default(),
            rt_pm: Default::default(),
            rt_v: Default::default(),
            rs: Default::default(),
            s_info: n(map.info_values().len()),
            s_misc: Default::default(),
            s_busy: n(nj),
            s_tbl: Default::default(),
            s_tsel: Default::default(),
            tbl_w: Default::default(),
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
            c_mcmask: Constant::new(((1u64 << mclog) - 1).into()),
            c_tbl_end: k16((regs::TBL_DATA_BASE + 4 * regs::TBL_WORDS) as u64),
            tb_job: Constant::new((regs::Table::Job as u64).into()),
            tb_child: Constant::new((regs::Table::Child as u64).into()),
            tb_pb: Constant::new((regs::Table::PortBelow as u64).into()),
            tb_route: Constant::new((regs::Table::Route as u64).into()),
            at_route_valid: at(fanin_regs::layout::route::VALID),
            at_route_ports: at(fanin_regs::layout::route::PORTS),
            a_me_ip: a("me_ip"),
            a_me_port: a("me_udp_port"),
            a_me_mac_lo: a("me_mac_lo"),
            a_me_mac_hi: a("me_mac_hi"),
            a_tick_div: a("tick_div"),
            a_tick: a("tick"),
            a_scan_ticks: a("scan_ticks"),
            a_tbl_sel: a("tbl_sel"),
            a_tbl_data: a("tbl_data0"),
            a_busy: k16(regs::JOB_BUSY_BASE as u64),
            a_route_ip: a("route_ip"),
            a_route_port: a("route_port"),
            a_route_commit: a("route_commit"),
            a_job_id: a("job_id"),
            a_job_ctrl: a("job_ctrl"),
            a_job_ranks_lo: a("job_ranks_lo"),
            a_job_ranks_hi: a("job_ranks_hi"),
            a_job_expected_lo: a("job_expected_lo"),
            a_job_expected_hi: a("job_expected_hi"),
            a_job_slot_base: a("job_slot_base"),
            a_job_slot_count: a("job_slot_count"),
            a_job_quota: a("job_quota"),
            a_job_flush_after: a("job_flush_after"),
            a_job_reclaim_after: a("job_reclaim_after"),
            a_job_reclaim_idle: a("job_reclaim_idle"),
            a_job_first_block: a("job_first_block"),
            a_port_below_lo: a("port_below_lo"),
            a_port_below_hi: a("port_below_hi"),
            a_port_below_commit: a("port_below_commit"),
            a_job_parent_mac_lo: a("job_parent_mac_lo"),
            a_job_parent_mac_hi: a("job_parent_mac_hi"),
            a_job_parent_ip: a("job_parent_ip"),
            a_job_parent_udp: a("job_parent_udp"),
            a_job_parent_port: a("job_parent_port"),
            a_job_commit: a("job_commit"),
            a_child_mac_lo: a("child_mac_lo"),
            a_child_mac_hi: a("child_mac_hi"),
            a_child_ip: a("child_ip"),
            a_child_udp: a("child_udp"),
            a_child_port: a("child_port"),
            a_child_ranks_lo: a("child_ranks_lo"),
            a_child_ranks_hi: a("child_ranks_hi"),
            a_child_commit: a("child_commit"),
            at_job_job: at(job::JOB),
            at_job_ranks: at(job::RANKS),
            at_job_expected: at(job::EXPECTED),
            at_job_slot_base: at(job::SLOT_BASE),
            at_job_slot_count: at(job::SLOT_COUNT),
            at_job_quota: at(job::QUOTA),
            at_job_flush_after: at(job::FLUSH_AFTER),
            at_job_reclaim_after: at(job::RECLAIM_AFTER),
            at_job_reclaim_idle: at(job::RECLAIM_IDLE),
            at_job_first_block: at(job::FIRST_BLOCK),
            at_job_parent_ip: at(job::PARENT_IP),
            at_job_parent_mac: at(job::PARENT_MAC),
            at_job_parent_udp: at(job::PARENT_UDP),
            at_job_parent_port: at(job::PARENT_PORT),
            at_child_mac: at(child::MAC),
            at_child_ip: at(child::IP),
            at_child_udp: at(child::UDP),
            at_child_port: at(child::PORT),
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
            wa,
            wd,
            bvalid_r,
            me_ip_r,
            me_port_r,
            me_mac_r,
            tick_div_r,
            scan_ticks_r,
            tbl_sel,
            st_jid,
            st_jctrl,
            st_jranks,
            st_jexp,
            st_jsbase,
            st_jscount,
            st_jquota,
            st_jflush,
            st_jreclaim,
            st_jidle,
            st_jfirst,
            st_pmac,
            st_pip,
            st_pudp,
            st_pport,
            st_cmac,
            st_cip,
            st_cudp,
            st_cport,
            st_cranks,
            st_pbelow,
            st_route_ip,
            st_route_port,
            jcw,
            jcw_i,
            jword,
            chw,
            chw_a,
            cword,
            pbw,
            pbw_a,
            tbl_q,
            rs,
            s_misc,
            s_tbl,
            s_tsel,
            tbl_w,
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
        self.jram_rb.clock.next = self.clock.val();
        self.chram_rb.clock.next = self.clock.val();
        self.pbram_rb.clock.next = self.clock.val();
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
        self.job_word.next = self.jword.q.val();
        self.child_we.next = bit_cast::<32, 1>(self.chw.q.val().into());
        self.child_waddr.next = self.chw_a.q.val();
        self.child_wdata.next = self.cword.q.val();
        self.pb_we.next = bit_cast::<32, 1>(self.pbw.q.val().into());
        self.pb_waddr.next = self.pbw_a.q.val();
        self.pb_wdata.next = self.st_pbelow.q.val();
        // Write: accept address and data together, when no write is in its handshake or
        // response, no commit pulse is out and the engine is not applying a job commit.
        self.wr.next = self.awvalid.val()
            & self.wvalid.val()
            & !self.aw_ack.q.val()
            & !self.bvalid_r.q.val()
            & !self.jcw.q.val()
            & !self.hold.val();
        self.aw_ack.d.next = self.wr.val();
        if self.wr.val() {
            self.wa.d.next = self.awaddr.val();
            self.wd.d.next = self.wdata.val();
        }
        self.awready.next = self.aw_ack.q.val();
        self.wready.next = self.aw_ack.q.val();
        self.bvalid.next = self.bvalid_r.q.val();
        self.bresp.next = 0.into();
        if self.aw_ack.q.val() {
            self.bvalid_r.d.next = true;
        } else if self.bready.val() {
            self.bvalid_r.d.next = false;
        }
        // The staged entries, packed (registered: a commit reads them at least two cycles
        // after the last staging write).
        self.jword.d.next = bit_cast::<JOB_W, 32>(self.st_jctrl.q.val())
            | (bit_cast::<JOB_W, 16>(self.st_jid.q.val()) << self.at_job_job.val())
            | (bit_cast::<JOB_W, 64>(self.st_jranks.q.val()) << self.at_job_ranks.val())
            | (bit_cast::<JOB_W, 64>(self.st_jexp.q.val()) << self.at_job_expected.val())
            | (bit_cast::<JOB_W, 32>(self.st_jsbase.q.val()) << self.at_job_slot_base.val())
            | (bit_cast::<JOB_W, 32>(self.st_jscount.q.val()) << self.at_job_slot_count.val())
            | (bit_cast::<JOB_W, 32>(self.st_jquota.q.val()) << self.at_job_quota.val())
            | (bit_cast::<JOB_W, 32>(self.st_jflush.q.val()) << self.at_job_flush_after.val())
            | (bit_cast::<JOB_W, 32>(self.st_jreclaim.q.val()) << self.at_job_reclaim_after.val())
            | (bit_cast::<JOB_W, 32>(self.st_pip.q.val()) << self.at_job_parent_ip.val())
            | (bit_cast::<JOB_W, 48>(self.st_pmac.q.val()) << self.at_job_parent_mac.val())
            | (bit_cast::<JOB_W, 16>(self.st_pudp.q.val()) << self.at_job_parent_udp.val())
            | (bit_cast::<JOB_W, 8>(self.st_pport.q.val()) << self.at_job_parent_port.val())
            | (bit_cast::<JOB_W, 32>(self.st_jidle.q.val()) << self.at_job_reclaim_idle.val())
            | (bit_cast::<JOB_W, 32>(self.st_jfirst.q.val()) << self.at_job_first_block.val());
        self.cword.d.next = bit_cast::<CHILD_W, 64>(self.st_cranks.q.val())
            | (bit_cast::<CHILD_W, 48>(self.st_cmac.q.val()) << self.at_child_mac.val())
            | (bit_cast::<CHILD_W, 32>(self.st_cip.q.val()) << self.at_child_ip.val())
            | (bit_cast::<CHILD_W, 16>(self.st_cudp.q.val()) << self.at_child_udp.val())
            | (bit_cast::<CHILD_W, 8>(self.st_cport.q.val()) << self.at_child_port.val());
        // The write, decoded in its handshake cycle from the latched address and data.
        self.jcw.d.next = false;
        self.chw.d.next = false;
        self.pbw.d.next = false;
        if self.aw_ack.q.val() {
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
            if self.wa.q.val() == self.a_job_id.val() {
                self.st_jid.d.next = self.wd.q.val().get_value_low16();
            }
            if self.wa.q.val() == self.a_job_ctrl.val() {
                self.st_jctrl.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_ranks_lo.val() {
                self.st_jranks.d.next = (self.st_jranks.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_job_ranks_hi.val() {
                self.st_jranks.d.next = (self.st_jranks.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.q.val()) << 32);
            }
            if self.wa.q.val() == self.a_job_expected_lo.val() {
                self.st_jexp.d.next = (self.st_jexp.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_job_expected_hi.val() {
                self.st_jexp.d.next = (self.st_jexp.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.q.val()) << 32);
            }
            if self.wa.q.val() == self.a_job_slot_base.val() {
                self.st_jsbase.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_slot_count.val() {
                self.st_jscount.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_quota.val() {
                self.st_jquota.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_flush_after.val() {
                self.st_jflush.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_reclaim_after.val() {
                self.st_jreclaim.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_first_block.val() {
                self.st_jfirst.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_reclaim_idle.val() {
                self.st_jidle.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_port_below_lo.val() {
                self.st_pbelow.d.next = (self.st_pbelow.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_port_below_hi.val() {
                self.st_pbelow.d.next = (self.st_pbelow.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.q.val()) << 32);
            }
            if self.wa.q.val() == self.a_port_below_commit.val() {
                self.pbw.d.next = true;
                self.pbw_a.d.next =
                    (bit_cast::<ADDR_W, 8>(self.wd.q.val().get_value_commit_entry()) << 3)
                        | bit_cast::<ADDR_W, 3>(self.wd.q.val().get_value_commit_port());
            }
            if self.wa.q.val() == self.a_tbl_sel.val() {
                self.tbl_sel.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_parent_mac_lo.val() {
                self.st_pmac.d.next = (self.st_pmac.q.val() & 0xffff_0000_0000u64)
                    | bit_cast::<48, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_job_parent_mac_hi.val() {
                self.st_pmac.d.next = (self.st_pmac.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<48, 16>(self.wd.q.val().get_value_low16()) << 32);
            }
            if self.wa.q.val() == self.a_job_parent_ip.val() {
                self.st_pip.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_job_parent_udp.val() {
                self.st_pudp.d.next = self.wd.q.val().get_value_low16();
            }
            if self.wa.q.val() == self.a_job_parent_port.val() {
                self.st_pport.d.next = self.wd.q.val().get_value_low8();
            }
            if self.wa.q.val() == self.a_job_commit.val() {
                // The engine applies it when its front end is idle, in decision order.
                self.jcw.d.next = true;
                self.jcw_i.d.next = self.wd.q.val().get_value_low8();
            }
            if self.wa.q.val() == self.a_child_mac_lo.val() {
                self.st_cmac.d.next = (self.st_cmac.q.val() & 0xffff_0000_0000u64)
                    | bit_cast::<48, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_child_mac_hi.val() {
                self.st_cmac.d.next = (self.st_cmac.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<48, 16>(self.wd.q.val().get_value_low16()) << 32);
            }
            if self.wa.q.val() == self.a_child_ip.val() {
                self.st_cip.d.next = self.wd.q.val();
            }
            if self.wa.q.val() == self.a_child_udp.val() {
                self.st_cudp.d.next = self.wd.q.val().get_value_low16();
            }
            if self.wa.q.val() == self.a_child_port.val() {
                self.st_cport.d.next = self.wd.q.val().get_value_low8();
            }
            if self.wa.q.val() == self.a_child_ranks_lo.val() {
                self.st_cranks.d.next = (self.st_cranks.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.q.val());
            }
            if self.wa.q.val() == self.a_child_ranks_hi.val() {
                self.st_cranks.d.next = (self.st_cranks.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.q.val()) << 32);
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
        // Table read-back: the copies are written with the engine's tables (the child and
        // port-below tables from this block's own pulses).
        self.jram_rb.waddr.next = self.jt_waddr.val();
        self.jram_rb.wdata.next = self.jt_wdata.val();
        self.jram_rb.we.next = self.jt_we.val();
        self.chram_rb.waddr.next = self.chw_a.q.val();
        self.chram_rb.wdata.next = self.cword.q.val();
        self.chram_rb.we.next = bit_cast::<32, 1>(self.chw.q.val().into());
        self.pbram_rb.waddr.next = self.pbw_a.q.val();
        self.pbram_rb.wdata.next = self.st_pbelow.q.val();
        self.pbram_rb.we.next = bit_cast::<32, 1>(self.pbw.q.val().into());
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
        for r in 0..self.route_ip_r.len() {
            if self.tbl_row.val() == self.c_idx16[r].val() {
                self.rt_ip.next = self.rt_ip.val() | self.route_ip_r[r].q.val();
                self.rt_pm.next = self.rt_pm.val() | self.route_pm_r[r].q.val();
                self.rt_v.next = self.rt_v.val() | self.route_valid_r[r].q.val();
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
        // Read: two cycles. The cycle a read is accepted registers one select per readable
        // register (the address compared with each register's address); the next cycle ORs
        // the selected values (every address is distinct, so at most one select is set).
        self.arready.next = !self.rvalid_r.q.val() & !self.rs.q.val();
        self.rvalid.next = self.rvalid_r.q.val();
        self.rdata.next = self.rdata_r.q.val();
        self.rresp.next = 0.into();
        for i in 0..self.s_info.len() {
            self.s_info[i].d.next = self.araddr.val() == (self.c_idx16[i].val() << 2);
        }
        self.s_misc.d.next = bit_cast::<8, 1>((self.araddr.val() == self.a_me_ip.val()).into())
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_me_port.val()).into()) << 1)
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_me_mac_lo.val()).into()) << 2)
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_me_mac_hi.val()).into()) << 3)
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_tick_div.val()).into()) << 4)
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_tick.val()).into()) << 5)
            | (bit_cast::<8, 1>((self.araddr.val() == self.a_scan_ticks.val()).into()) << 6);
        self.s_tsel.d.next = self.araddr.val() == self.a_tbl_sel.val();
        self.s_tbl.d.next = (self.araddr.val() >= self.a_tbl_data.val())
            & (self.araddr.val() < self.c_tbl_end.val());
        self.tbl_w.d.next = (self.araddr.val() - self.a_tbl_data.val()) >> 2;
        for j in 0..self.s_busy.len() {
            self.s_busy[j].d.next =
                self.araddr.val() == self.a_busy.val() + (self.c_idx16[j].val() << 2);
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
        if self.s_tsel.q.val() {
            self.rd.next = self.rd.val() | self.tbl_sel.q.val();
        }
        // Word `tbl_w` of the selected row (shifted down to bits 31:0).
        self.tbl_sh.next = self.tbl_q.q.val() >> (self.tbl_w.q.val() << 5);
        if self.s_tbl.q.val() {
            self.rd.next = self.rd.val() | self.tbl_sh.val().get_value_low32();
        }
        for j in 0..self.s_busy.len() {
            if self.s_busy[j].q.val() {
                self.rd.next = self.rd.val() | self.jbusy[j].val();
            }
        }
        self.rd.next = self.rd.val() | self.cnt_rd.val();
        self.rs.d.next = self.arvalid.val() & !self.rvalid_r.q.val() & !self.rs.q.val();
        if self.rs.q.val() {
            self.rvalid_r.d.next = true;
            self.rdata_r.d.next = self.rd.val();
        } else if self.rready.val() {
            self.rvalid_r.d.next = false;
        }
        if self.rst.val() {
            self.aw_ack.d.next = false;
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
