//! The core's constructor: every port, register, local and constant of [`Core`] at its
//! reset value, the constants from the layout tables and the configuration. (rust-hdl's
//! `Constant` has no `Default`, so `Core` cannot derive one; `mod.rs` documents the
//! fields.)

use super::states::packet_type;
use super::util::{idx4, k16, n};
use super::*;
use crate::config::CoreConfig;
use fanin_proto::wire::PacketType;

impl<const DW: usize, const KW: usize, const WB: usize> Core<DW, KW, WB> {
    /// Builds the core for a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let p = cfg.ports as usize;
        let wbb = WB / 8;
        let nj = cfg.max_jobs as usize;
        let mclog = cfg.child_bits();
        Self {
            clock: Default::default(),
            rst: Default::default(),
            csr: Csr::new(cfg),
            counters: Counters::new(cfg),
            sess: SessionUnit::new(cfg),
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
            rx: (0..p)
                .map(|_| Rx::new(cfg.rx_rows(), cfg.max_frame as usize))
                .collect(),
            tx: (0..p)
                .map(|_| Tx::new(cfg.tx_rows(), cfg.max_frame as usize))
                .collect(),
            axil: Default::default(),
            dbg_valid: Default::default(),
            dbg_kind: Default::default(),
            dbg_arg: Default::default(),
            dbg_tick: Default::default(),
            parser: Default::default(),
            arp_lay: Default::default(),
            meta: MetaPort::new(cfg),
            chram: FaninRam::new(nj << mclog, 1),
            jram: FaninRam::new(nj.max(2), 1),
            lookup: Lookup::new(cfg),
            pick: Pick::new(cfg),
            dsel: Default::default(),
            bq_inc: Default::default(),
            bq_dec: Default::default(),
            bq_hwc: Default::default(),
            bq_j: Default::default(),
            pbram: FaninRam::new(nj.max(2) << 3, 1),
            back: BackEnd::new(cfg),
            chram2: FaninRam::new(nj << mclog, 1),
            ev_b: Default::default(),
            timer: Timer::new(cfg),
            hwc: Default::default(),
            bz_inc: Default::default(),
            bz_dec: Default::default(),
            bz_j: Default::default(),
            xstate: Default::default(),
            x_mg: Default::default(),
            xp_f: Default::default(),
            x_je: Default::default(),
            x_jep: Default::default(),
            x_ji: Default::default(),
            x_cadr: Default::default(),
            x_c: Default::default(),
            xo_v: Default::default(),
            q_qf_p: Default::default(),
            q_qf_m: Default::default(),
            q_bi: Default::default(),
            q_bd: Default::default(),
            dx_f: Default::default(),
            dx_ji: Default::default(),
            dx_cadr: Default::default(),
            dx_c: Default::default(),
            qf: Default::default(),
            dec_v: Default::default(),
            item: ItemStage::new(cfg),
            loads: Default::default(),
            look: Look::new(cfg),
            commit: Commit::new(cfg),
            front: FrontEnd::new(cfg),
            hand: Hand::new(p),
            pred: Default::default(),
            q_c: Default::default(),
            q_qfull: Default::default(),
            ev: Default::default(),
            rx_ev: n(p),
            c_idx4: idx4(8),
            c_lanes: k16(cfg.lanes as u64),
            c_rowlog: k16(wbb.trailing_zeros() as u64),
            c_rowmask: k16((wbb - 1) as u64),
            ev_results_sent: event(Counter::ResultsSent),
            pt_join: packet_type(PacketType::Join),
            x_join: Default::default(),
            hu_v: Default::default(),
            hu_j: Default::default(),
            hu_b: Default::default(),
            ev_sessions: event(Counter::Sessions),
        }
    }
}
