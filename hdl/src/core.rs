//! The switch core: P ingress ports, the engine, P egress ports and the AXI4-Lite
//! register interface. Ports are rust-hdl `Vec`s; `verilog.rs` wraps the generated top in
//! `fanin_core` with flat per-port names.

use crate::config::CoreConfig;
use crate::parse::{Parser, PARSE_W};
use crate::regs;
use crate::rx::Rx;
use crate::tx::Tx;
use rust_hdl::prelude::*;

fn n<T: Default>(k: usize) -> Vec<T> {
    (0..k).map(|_| T::default()).collect()
}

fn k16(v: u64) -> Constant<Bits<16>> {
    Constant::new(v.into())
}

// Engine states (literals in the HDL: rust-hdl prints named constants as identifiers):
// 0 idle, 1 decide (descriptor latched, parser and lookups), 2 copy payload rows to an
// egress port, 3 release the ingress rows.
// Parser classes: see `crate::parse::CLASS_*`.

/// The fanin switch core for bus width `DW` (`KW` = DW/8) and internal bus width `WB`.
#[derive(LogicBlock)]
pub struct Core<const DW: usize, const KW: usize, const WB: usize> {
    /// Clock (all logic is in one clock domain).
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// Ingress AXI-Stream data, per port.
    pub s_tdata: Vec<Signal<In, Bits<DW>>>,
    /// Ingress byte enables.
    pub s_tkeep: Vec<Signal<In, Bits<KW>>>,
    /// Ingress valid.
    pub s_tvalid: Vec<Signal<In, bool>>,
    /// Ingress ready.
    pub s_tready: Vec<Signal<Out, bool>>,
    /// Ingress last.
    pub s_tlast: Vec<Signal<In, bool>>,
    /// Ingress bad-frame flag.
    pub s_tuser: Vec<Signal<In, bool>>,
    /// Egress data.
    pub m_tdata: Vec<Signal<Out, Bits<DW>>>,
    /// Egress byte enables.
    pub m_tkeep: Vec<Signal<Out, Bits<KW>>>,
    /// Egress valid.
    pub m_tvalid: Vec<Signal<Out, bool>>,
    /// Egress ready.
    pub m_tready: Vec<Signal<In, bool>>,
    /// Egress last.
    pub m_tlast: Vec<Signal<Out, bool>>,
    /// Egress user.
    pub m_tuser: Vec<Signal<Out, bool>>,
    /// AXI4-Lite write address.
    pub awaddr: Signal<In, Bits<16>>,
    /// AXI4-Lite write address valid.
    pub awvalid: Signal<In, bool>,
    /// AXI4-Lite write address ready.
    pub awready: Signal<Out, bool>,
    /// AXI4-Lite write data.
    pub wdata: Signal<In, Bits<32>>,
    /// AXI4-Lite write strobes (registers are written whole; must be all ones).
    pub wstrb: Signal<In, Bits<4>>,
    /// AXI4-Lite write data valid.
    pub wvalid: Signal<In, bool>,
    /// AXI4-Lite write data ready.
    pub wready: Signal<Out, bool>,
    /// AXI4-Lite write response.
    pub bresp: Signal<Out, Bits<2>>,
    /// AXI4-Lite write response valid.
    pub bvalid: Signal<Out, bool>,
    /// AXI4-Lite write response ready.
    pub bready: Signal<In, bool>,
    /// AXI4-Lite read address.
    pub araddr: Signal<In, Bits<16>>,
    /// AXI4-Lite read address valid.
    pub arvalid: Signal<In, bool>,
    /// AXI4-Lite read address ready.
    pub arready: Signal<Out, bool>,
    /// AXI4-Lite read data.
    pub rdata: Signal<Out, Bits<32>>,
    /// AXI4-Lite read response.
    pub rresp: Signal<Out, Bits<2>>,
    /// AXI4-Lite read data valid.
    pub rvalid: Signal<Out, bool>,
    /// AXI4-Lite read data ready.
    pub rready: Signal<In, bool>,
    rx: Vec<Rx<DW, KW, WB>>,
    tx: Vec<Tx<DW, KW, WB>>,
    parser: Parser,
    // Engine.
    state: DFF<Bits<3>>,
    sel: DFF<Bits<4>>,
    last: DFF<Bits<4>>,
    hdr: DFF<Bits<PARSE_W>>,
    len: DFF<Bits<16>>,
    row0: DFF<Bits<16>>,
    nrows: DFF<Bits<16>>,
    ri: DFF<Bits<16>>,
    v1: DFF<bool>,
    oport: DFF<Bits<4>>,
    vb: Vec<Signal<Local, Bits<8>>>,
    hb: Vec<Signal<Local, Bits<8>>>,
    pick: Signal<Local, Bits<8>>,
    onehot: Signal<Local, Bits<8>>,
    any: Signal<Local, bool>,
    pidx: Signal<Local, Bits<4>>,
    cur_len: Signal<Local, Bits<16>>,
    cur_rows: Signal<Local, Bits<16>>,
    rx_row_data: Signal<Local, Bits<WB>>,
    tx_ready_sel: Signal<Local, bool>,
    rhit: Signal<Local, bool>,
    rport: Signal<Local, Bits<4>>,
    ev: Signal<Local, Bits<32>>,
    rx_ev: Vec<Signal<Local, bool>>,
    // Routes.
    route_ip: Vec<DFF<Bits<32>>>,
    route_port: Vec<DFF<Bits<4>>>,
    route_valid: Vec<DFF<bool>>,
    // Registers.
    me_ip: DFF<Bits<32>>,
    me_port: DFF<Bits<16>>,
    st_route_ip: DFF<Bits<32>>,
    st_route_port: DFF<Bits<8>>,
    cnt: Vec<DFF<Bits<64>>>,
    rxp: Vec<DFF<Bits<64>>>,
    rxb: Vec<DFF<Bits<64>>>,
    txp: Vec<DFF<Bits<64>>>,
    txb: Vec<DFF<Bits<64>>>,
    rxbad: Vec<DFF<Bits<32>>>,
    bvalid_r: DFF<bool>,
    rvalid_r: DFF<bool>,
    rdata_r: DFF<Bits<32>>,
    rd: Signal<Local, Bits<32>>,
    wr: Signal<Local, bool>,
    // Constants (from the configuration and the register table).
    c_onehot: Vec<Constant<Bits<8>>>,
    c_idx4: Vec<Constant<Bits<4>>>,
    c_idx16: Vec<Constant<Bits<16>>>,
    c_rowlog: Constant<Bits<16>>,
    c_rowmask: Constant<Bits<16>>,
    c_info: Vec<Constant<Bits<32>>>,
    a_me_ip: Constant<Bits<16>>,
    a_me_port: Constant<Bits<16>>,
    a_route_ip: Constant<Bits<16>>,
    a_route_port: Constant<Bits<16>>,
    a_route_commit: Constant<Bits<16>>,
    a_cnt: Constant<Bits<16>>,
    a_port: Constant<Bits<16>>,
    a_rxbad: Constant<Bits<16>>,
}

impl<const DW: usize, const KW: usize, const WB: usize> Core<DW, KW, WB> {
    /// Builds the core for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        let nr = cfg.max_routes as usize;
        let wbb = WB / 8;
        let map = regs::RegMap::new(cfg);
        let a = |name: &str| k16(map.addr(name) as u64);
        Self {
            clock: Default::default(),
            rst: Default::default(),
            s_tdata: n(p),
            s_tkeep: n(p),
            s_tvalid: n(p),
            s_tready: n(p),
            s_tlast: n(p),
            s_tuser: n(p),
            m_tdata: n(p),
            m_tkeep: n(p),
            m_tvalid: n(p),
            m_tready: n(p),
            m_tlast: n(p),
            m_tuser: n(p),
            awaddr: Default::default(),
            awvalid: Default::default(),
            awready: Default::default(),
            wdata: Default::default(),
            wstrb: Default::default(),
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
            rx: (0..p)
                .map(|_| Rx::new(cfg.rx_rows(), cfg.max_frame as usize))
                .collect(),
            tx: (0..p)
                .map(|_| Tx::new(cfg.tx_rows(), cfg.max_frame as usize))
                .collect(),
            parser: Default::default(),
            state: Default::default(),
            sel: Default::default(),
            last: Default::default(),
            hdr: Default::default(),
            len: Default::default(),
            row0: Default::default(),
            nrows: Default::default(),
            ri: Default::default(),
            v1: Default::default(),
            oport: Default::default(),
            vb: n(9),
            hb: n(9),
            pick: Default::default(),
            onehot: Default::default(),
            any: Default::default(),
            pidx: Default::default(),
            cur_len: Default::default(),
            cur_rows: Default::default(),
            rx_row_data: Default::default(),
            tx_ready_sel: Default::default(),
            rhit: Default::default(),
            rport: Default::default(),
            ev: Default::default(),
            rx_ev: n(p),
            route_ip: n(nr),
            route_port: n(nr),
            route_valid: n(nr),
            me_ip: Default::default(),
            me_port: Default::default(),
            st_route_ip: Default::default(),
            st_route_port: Default::default(),
            cnt: n(fanin_proto::model::Counter::COUNT),
            rxp: n(p),
            rxb: n(p),
            txp: n(p),
            txb: n(p),
            rxbad: n(p),
            bvalid_r: Default::default(),
            rvalid_r: Default::default(),
            rdata_r: Default::default(),
            rd: Default::default(),
            wr: Default::default(),
            c_onehot: (0..8).map(|i| Constant::new((1u64 << i).into())).collect(),
            c_idx4: (0..8).map(|i| Constant::new((i as u64).into())).collect(),
            c_idx16: (0..nr.max(fanin_proto::model::Counter::COUNT).max(8))
                .map(|i| k16(i as u64))
                .collect(),
            c_rowlog: k16(wbb.trailing_zeros() as u64),
            c_rowmask: k16((wbb - 1) as u64),
            c_info: map
                .info_values()
                .into_iter()
                .map(|v| Constant::new((v as u64).into()))
                .collect(),
            a_me_ip: a("me_ip"),
            a_me_port: a("me_udp_port"),
            a_route_ip: a("route_ip"),
            a_route_port: a("route_port"),
            a_route_commit: a("route_commit"),
            a_cnt: k16(map.counter_base as u64),
            a_port: k16(map.port_base as u64),
            a_rxbad: k16(map.rx_bad_base as u64),
        }
    }
}

impl<const DW: usize, const KW: usize, const WB: usize> Logic for Core<DW, KW, WB> {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
            state,
            sel,
            last,
            hdr,
            len,
            row0,
            nrows,
            ri,
            v1,
            oport,
            me_ip,
            me_port,
            st_route_ip,
            st_route_port,
            bvalid_r,
            rvalid_r,
            rdata_r
        );
        for r in 0..self.route_ip.len() {
            self.route_ip[r].clock.next = self.clock.val();
            self.route_ip[r].d.next = self.route_ip[r].q.val();
            self.route_port[r].clock.next = self.clock.val();
            self.route_port[r].d.next = self.route_port[r].q.val();
            self.route_valid[r].clock.next = self.clock.val();
            self.route_valid[r].d.next = self.route_valid[r].q.val();
        }
        for k in 0..self.cnt.len() {
            self.cnt[k].clock.next = self.clock.val();
            self.cnt[k].d.next = self.cnt[k].q.val();
        }
        // Payload row of the selected ingress port; room at the chosen egress port.
        self.rx_row_data.next = self.rx[0].r_data.val();
        self.tx_ready_sel.next = false;
        for p in 0..self.rx.len() {
            if self.sel.q.val() == self.c_idx4[p].val() {
                self.rx_row_data.next = self.rx[p].r_data.val();
            }
            if self.oport.q.val() == self.c_idx4[p].val() {
                self.tx_ready_sel.next = self.tx[p].ready.val();
            }
        }
        // Ports: wire the AXI-Stream interfaces to the ingress/egress blocks.
        for p in 0..self.rx.len() {
            self.rx[p].clock.next = self.clock.val();
            self.rx[p].rst.next = self.rst.val();
            self.rx[p].tdata.next = self.s_tdata[p].val();
            self.rx[p].tkeep.next = self.s_tkeep[p].val();
            self.rx[p].tvalid.next = self.s_tvalid[p].val();
            self.rx[p].tlast.next = self.s_tlast[p].val();
            self.rx[p].tuser.next = self.s_tuser[p].val();
            self.s_tready[p].next = self.rx[p].tready.val();
            self.rx[p].r_addr.next = self.row0.q.val() + self.ri.q.val();
            self.rx[p].rel_row.next = self.row0.q.val() + self.nrows.q.val();
            self.rx[p].d_pop.next = false;
            self.rx[p].rel.next = false;
            self.tx[p].clock.next = self.clock.val();
            self.tx[p].rst.next = self.rst.val();
            self.m_tdata[p].next = self.tx[p].tdata.val();
            self.m_tkeep[p].next = self.tx[p].tkeep.val();
            self.m_tvalid[p].next = self.tx[p].tvalid.val();
            self.m_tlast[p].next = self.tx[p].tlast.val();
            self.m_tuser[p].next = self.tx[p].tuser.val();
            self.tx[p].tready.next = self.m_tready[p].val();
            self.tx[p].w_we.next = false;
            self.tx[p].push.next = false;
            self.tx[p].w_row.next = self.rx_row_data.val();
            self.tx[p].p_hdr.next = self.hdr.q.val().get_bits::<512>(0);
            self.tx[p].p_len.next = self.len.q.val();
            self.rxp[p].clock.next = self.clock.val();
            self.rxp[p].d.next = self.rxp[p].q.val();
            self.rxb[p].clock.next = self.clock.val();
            self.rxb[p].d.next = self.rxb[p].q.val();
            self.txp[p].clock.next = self.clock.val();
            self.txp[p].d.next = self.txp[p].q.val();
            self.txb[p].clock.next = self.clock.val();
            self.txb[p].d.next = self.txb[p].q.val();
            self.rxbad[p].clock.next = self.clock.val();
            self.rxbad[p].d.next = self.rxbad[p].q.val();
            self.rx_ev[p].next = false;
        }
        // Round-robin arbiter: lowest ready port above the last served, else lowest ready.
        self.vb[0].next = 0.into();
        self.hb[0].next = 0.into();
        for p in 0..self.rx.len() {
            if self.rx[p].d_valid.val() {
                self.vb[p + 1].next = self.vb[p].val() | self.c_onehot[p].val();
                if self.c_idx4[p].val() > self.last.q.val() {
                    self.hb[p + 1].next = self.hb[p].val() | self.c_onehot[p].val();
                } else {
                    self.hb[p + 1].next = self.hb[p].val();
                }
            } else {
                self.vb[p + 1].next = self.vb[p].val();
                self.hb[p + 1].next = self.hb[p].val();
            }
        }
        for p in self.rx.len()..8 {
            self.vb[p + 1].next = self.vb[p].val();
            self.hb[p + 1].next = self.hb[p].val();
        }
        if self.hb[8].val() != 0 {
            self.pick.next = self.hb[8].val();
        } else {
            self.pick.next = self.vb[8].val();
        }
        self.onehot.next = self.pick.val() & (!self.pick.val() + 1);
        self.any.next = self.pick.val() != 0;
        self.pidx.next = 0.into();
        for p in 0..self.rx.len() {
            if self.onehot.val().get_bit(p) {
                self.pidx.next = self.c_idx4[p].val();
            }
        }
        // Per-port muxes for the selected ingress port and the chosen egress port.
        self.cur_len.next = self.rx[0].d_len.val();
        for p in 0..self.rx.len() {
            if self.pidx.val() == self.c_idx4[p].val() {
                self.cur_len.next = self.rx[p].d_len.val();
            }
        }
        if self.cur_len.val() > 64 {
            self.cur_rows.next =
                (self.cur_len.val() - 64 + self.c_rowmask.val()) >> self.c_rowlog.val();
        } else {
            self.cur_rows.next = 0.into();
        }
        // Parser on the latched frame.
        self.parser.hdr.next = self.hdr.q.val();
        self.parser.len.next = self.len.q.val();
        self.parser.me_ip.next = self.me_ip.q.val();
        self.parser.me_port.next = self.me_port.q.val();
        // Forwarding table (exact match on the destination IPv4 address).
        self.rhit.next = false;
        self.rport.next = 0.into();
        for r in 0..self.route_ip.len() {
            if self.route_valid[r].q.val() & (self.route_ip[r].q.val() == self.parser.dst_ip.val())
            {
                self.rhit.next = true;
                self.rport.next = self.route_port[r].q.val();
            }
        }
        self.ev.next = 0.into();
        self.v1.d.next = false;
        match self.state.q.val().index() {
            0 => {
                // S_IDLE
                if self.any.val() {
                    self.sel.d.next = self.pidx.val();
                    self.last.d.next = self.pidx.val();
                    self.len.d.next = self.cur_len.val();
                    self.nrows.d.next = self.cur_rows.val();
                    self.ri.d.next = 0.into();
                    for p in 0..self.rx.len() {
                        if self.pidx.val() == self.c_idx4[p].val() {
                            self.rx[p].d_pop.next = true;
                            self.rx_ev[p].next = true;
                            self.hdr.d.next = self.rx[p].d_hdr.val();
                            self.row0.d.next = self.rx[p].d_row.val();
                        }
                    }
                    self.state.d.next = bits::<3>(1);
                }
            }
            1 => {
                // S_DECIDE
                // Counter indices are `Counter as usize` (checked by a unit test).
                match self.parser.kind.val().index() {
                    0 => {
                        // CLASS_NON_IP
                        self.ev.next = bits::<32>(1) << 20;
                        self.state.d.next = bits::<3>(3);
                    }
                    1 => {
                        // CLASS_MALFORMED
                        self.ev.next = bits::<32>(1) << 15;
                        self.state.d.next = bits::<3>(3);
                    }
                    2 => {
                        // CLASS_ROUTE
                        if self.rhit.val() {
                            self.oport.d.next = self.rport.val();
                            self.state.d.next = bits::<3>(2);
                        } else {
                            self.ev.next = bits::<32>(1) << 19;
                            self.state.d.next = bits::<3>(3);
                        }
                    }
                    3 => {
                        // CLASS_FANIN
                        // No job table yet: every fanin packet is for an unknown job.
                        self.ev.next = bits::<32>(1) << 14;
                        self.state.d.next = bits::<3>(3);
                    }
                    _ => {}
                }
            }
            2 => {
                // S_COPY
                // Wait for egress room, then stream the payload rows (one per cycle).
                if self.tx_ready_sel.val() | (self.ri.q.val() != 0) {
                    if self.ri.q.val() != self.nrows.q.val() {
                        self.ri.d.next = self.ri.q.val() + 1;
                        self.v1.d.next = true;
                    } else if !self.v1.q.val() {
                        for p in 0..self.rx.len() {
                            if self.oport.q.val() == self.c_idx4[p].val() {
                                self.tx[p].push.next = true;
                            }
                        }
                        self.ev.next = bits::<32>(1) << 18;
                        self.state.d.next = bits::<3>(3);
                    }
                }
                if self.v1.q.val() {
                    for p in 0..self.rx.len() {
                        if self.oport.q.val() == self.c_idx4[p].val() {
                            self.tx[p].w_we.next = true;
                        }
                    }
                }
            }
            3 => {
                // S_DONE
                for p in 0..self.rx.len() {
                    if self.sel.q.val() == self.c_idx4[p].val() {
                        self.rx[p].rel.next = true;
                    }
                }
                self.state.d.next = bits::<3>(0);
            }
            _ => {
                self.state.d.next = bits::<3>(0);
            }
        }
        // Counters.
        for k in 0..self.cnt.len() {
            if self.ev.val().get_bit(k) {
                self.cnt[k].d.next = self.cnt[k].q.val() + 1;
            }
        }
        for p in 0..self.rx.len() {
            if self.rx_ev[p].val() {
                self.rxp[p].d.next = self.rxp[p].q.val() + 1;
                self.rxb[p].d.next = self.rxb[p].q.val() + bit_cast::<64, 16>(self.cur_len.val());
            }
            if self.tx[p].sent.val() {
                self.txp[p].d.next = self.txp[p].q.val() + 1;
                self.txb[p].d.next = self.txb[p].q.val() + self.tx[p].sent_len.val();
            }
            if self.rx[p].bad.val() {
                self.rxbad[p].d.next = self.rxbad[p].q.val() + 1;
            }
        }
        // AXI4-Lite: a write needs address and data together; one outstanding read.
        self.wr.next = self.awvalid.val() & self.wvalid.val() & !self.bvalid_r.q.val();
        self.awready.next = self.wr.val();
        self.wready.next = self.wr.val();
        self.bvalid.next = self.bvalid_r.q.val();
        self.bresp.next = 0.into();
        if self.wr.val() {
            self.bvalid_r.d.next = true;
        } else if self.bready.val() {
            self.bvalid_r.d.next = false;
        }
        if self.wr.val() {
            if self.awaddr.val() == self.a_me_ip.val() {
                self.me_ip.d.next = self.wdata.val();
            }
            if self.awaddr.val() == self.a_me_port.val() {
                self.me_port.d.next = self.wdata.val().get_bits::<16>(0);
            }
            if self.awaddr.val() == self.a_route_ip.val() {
                self.st_route_ip.d.next = self.wdata.val();
            }
            if self.awaddr.val() == self.a_route_port.val() {
                self.st_route_port.d.next = self.wdata.val().get_bits::<8>(0);
            }
            if self.awaddr.val() == self.a_route_commit.val() {
                for r in 0..self.route_ip.len() {
                    if self.wdata.val().get_bits::<16>(0) == self.c_idx16[r].val() {
                        self.route_ip[r].d.next = self.st_route_ip.q.val();
                        self.route_port[r].d.next = self.st_route_port.q.val().get_bits::<4>(0);
                        self.route_valid[r].d.next = self.st_route_port.q.val().get_bit(7);
                    }
                }
            }
        }
        self.arready.next = !self.rvalid_r.q.val();
        self.rvalid.next = self.rvalid_r.q.val();
        self.rdata.next = self.rdata_r.q.val();
        self.rresp.next = 0.into();
        self.rd.next = 0.into();
        for i in 0..self.c_info.len() {
            if self.araddr.val() == (self.c_idx16[i].val() << 2) {
                self.rd.next = self.c_info[i].val();
            }
        }
        if self.araddr.val() == self.a_me_ip.val() {
            self.rd.next = self.me_ip.q.val();
        }
        if self.araddr.val() == self.a_me_port.val() {
            self.rd.next = bit_cast::<32, 16>(self.me_port.q.val());
        }
        for k in 0..self.cnt.len() {
            if self.araddr.val() == self.a_cnt.val() + (self.c_idx16[k].val() << 3) {
                self.rd.next = self.cnt[k].q.val().get_bits::<32>(0);
            }
            if self.araddr.val() == self.a_cnt.val() + (self.c_idx16[k].val() << 3) + 4 {
                self.rd.next = self.cnt[k].q.val().get_bits::<32>(32);
            }
        }
        for p in 0..self.rx.len() {
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) {
                self.rd.next = self.rxp[p].q.val().get_bits::<32>(0);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 4 {
                self.rd.next = self.rxp[p].q.val().get_bits::<32>(32);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 8 {
                self.rd.next = self.rxb[p].q.val().get_bits::<32>(0);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 12 {
                self.rd.next = self.rxb[p].q.val().get_bits::<32>(32);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 16 {
                self.rd.next = self.txp[p].q.val().get_bits::<32>(0);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 20 {
                self.rd.next = self.txp[p].q.val().get_bits::<32>(32);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 24 {
                self.rd.next = self.txb[p].q.val().get_bits::<32>(0);
            }
            if self.araddr.val() == self.a_port.val() + (self.c_idx16[p].val() << 5) + 28 {
                self.rd.next = self.txb[p].q.val().get_bits::<32>(32);
            }
            if self.araddr.val() == self.a_rxbad.val() + (self.c_idx16[p].val() << 2) {
                self.rd.next = self.rxbad[p].q.val();
            }
        }
        if self.arvalid.val() & !self.rvalid_r.q.val() {
            self.rvalid_r.d.next = true;
            self.rdata_r.d.next = self.rd.val();
        } else if self.rready.val() {
            self.rvalid_r.d.next = false;
        }
        if self.rst.val() {
            self.state.d.next = bits::<3>(0);
            self.bvalid_r.d.next = false;
            self.rvalid_r.d.next = false;
            for r in 0..self.route_valid.len() {
                self.route_valid[r].d.next = false;
            }
            for k in 0..self.cnt.len() {
                self.cnt[k].d.next = 0.into();
            }
            for p in 0..self.rx.len() {
                self.rxp[p].d.next = 0.into();
                self.rxb[p].d.next = 0.into();
                self.txp[p].d.next = 0.into();
                self.txb[p].d.next = 0.into();
                self.rxbad[p].d.next = 0.into();
            }
        }
    }
}
