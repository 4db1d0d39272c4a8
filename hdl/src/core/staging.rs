//! The staging registers of the job, child and port-below tables: the fields a driver
//! writes one register at a time before a `job_commit`, `child_commit` or
//! `port_below_commit`, and the staged job and child entries packed into table words.
//!
//! A block inside the control and status registers (`csr.rs`), which decode the commits
//! and send the words to the tables. Its outputs are its own registers (the packed words
//! and the staged rank set), so no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered).

use crate::config::CoreConfig;
use crate::layout::{at, RegValue, CHILD_W, JOB_W};
use crate::regs;
use fanin_regs::layout::{child, job};
use rust_hdl::prelude::*;

use super::util::k16;

/// The staging registers of a core (see the module documentation).
#[derive(LogicBlock)]
pub struct Staging {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// `Csr`'s write handshake cycle (`aw_ack`): the latched write `wa`, `wd` is decoded.
    pub w_ack: Signal<In, bool>,
    /// The latched write address.
    pub wa: Signal<In, Bits<16>>,
    /// The latched write data.
    pub wd: Signal<In, Bits<32>>,
    /// The staged job entry, packed (`layout::job`, epoch 0).
    pub job_word: Signal<Out, Bits<JOB_W>>,
    /// The staged child entry, packed (`layout::child`).
    pub child_word: Signal<Out, Bits<CHILD_W>>,
    /// The staged port-below rank set.
    pub pbelow: Signal<Out, Bits<64>>,
    // The staged fields (job, parent, child, port below) and the packed entries; then the
    // register map's addresses and the packed words' field offsets.
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
    jword: DFF<Bits<JOB_W>>,
    cword: DFF<Bits<CHILD_W>>,
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
    a_job_parent_mac_lo: Constant<Bits<16>>,
    a_job_parent_mac_hi: Constant<Bits<16>>,
    a_job_parent_ip: Constant<Bits<16>>,
    a_job_parent_udp: Constant<Bits<16>>,
    a_job_parent_port: Constant<Bits<16>>,
    a_child_mac_lo: Constant<Bits<16>>,
    a_child_mac_hi: Constant<Bits<16>>,
    a_child_ip: Constant<Bits<16>>,
    a_child_udp: Constant<Bits<16>>,
    a_child_port: Constant<Bits<16>>,
    a_child_ranks_lo: Constant<Bits<16>>,
    a_child_ranks_hi: Constant<Bits<16>>,
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

impl Staging {
    /// The staging registers of a validated configuration.
    pub fn new(cfg: &CoreConfig) -> Self {
        let map = regs::RegMap::new(cfg);
        let a = |name: &str| k16(map.addr(name) as u64);
        Self {
            clock: Default::default(),
            w_ack: Default::default(),
            wa: Default::default(),
            wd: Default::default(),
            job_word: Default::default(),
            child_word: Default::default(),
            pbelow: Default::default(),
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
            jword: Default::default(),
            cword: Default::default(),
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
            a_job_parent_mac_lo: a("job_parent_mac_lo"),
            a_job_parent_mac_hi: a("job_parent_mac_hi"),
            a_job_parent_ip: a("job_parent_ip"),
            a_job_parent_udp: a("job_parent_udp"),
            a_job_parent_port: a("job_parent_port"),
            a_child_mac_lo: a("child_mac_lo"),
            a_child_mac_hi: a("child_mac_hi"),
            a_child_ip: a("child_ip"),
            a_child_udp: a("child_udp"),
            a_child_port: a("child_port"),
            a_child_ranks_lo: a("child_ranks_lo"),
            a_child_ranks_hi: a("child_ranks_hi"),
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

impl Logic for Staging {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(
            self,
            clock,
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
            jword,
            cword
        );
        self.job_word.next = self.jword.q.val();
        self.child_word.next = self.cword.q.val();
        self.pbelow.next = self.st_pbelow.q.val();
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
        if self.w_ack.val() {
            if self.wa.val() == self.a_job_id.val() {
                self.st_jid.d.next = self.wd.val().get_value_low16();
            }
            if self.wa.val() == self.a_job_ctrl.val() {
                self.st_jctrl.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_ranks_lo.val() {
                self.st_jranks.d.next = (self.st_jranks.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_job_ranks_hi.val() {
                self.st_jranks.d.next = (self.st_jranks.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.val()) << 32);
            }
            if self.wa.val() == self.a_job_expected_lo.val() {
                self.st_jexp.d.next = (self.st_jexp.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_job_expected_hi.val() {
                self.st_jexp.d.next = (self.st_jexp.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.val()) << 32);
            }
            if self.wa.val() == self.a_job_slot_base.val() {
                self.st_jsbase.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_slot_count.val() {
                self.st_jscount.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_quota.val() {
                self.st_jquota.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_flush_after.val() {
                self.st_jflush.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_reclaim_after.val() {
                self.st_jreclaim.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_reclaim_idle.val() {
                self.st_jidle.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_first_block.val() {
                self.st_jfirst.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_port_below_lo.val() {
                self.st_pbelow.d.next = (self.st_pbelow.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_port_below_hi.val() {
                self.st_pbelow.d.next = (self.st_pbelow.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.val()) << 32);
            }
            if self.wa.val() == self.a_job_parent_mac_lo.val() {
                self.st_pmac.d.next = (self.st_pmac.q.val() & 0xffff_0000_0000u64)
                    | bit_cast::<48, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_job_parent_mac_hi.val() {
                self.st_pmac.d.next = (self.st_pmac.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<48, 16>(self.wd.val().get_value_low16()) << 32);
            }
            if self.wa.val() == self.a_job_parent_ip.val() {
                self.st_pip.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_job_parent_udp.val() {
                self.st_pudp.d.next = self.wd.val().get_value_low16();
            }
            if self.wa.val() == self.a_job_parent_port.val() {
                self.st_pport.d.next = self.wd.val().get_value_low8();
            }
            if self.wa.val() == self.a_child_mac_lo.val() {
                self.st_cmac.d.next = (self.st_cmac.q.val() & 0xffff_0000_0000u64)
                    | bit_cast::<48, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_child_mac_hi.val() {
                self.st_cmac.d.next = (self.st_cmac.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<48, 16>(self.wd.val().get_value_low16()) << 32);
            }
            if self.wa.val() == self.a_child_ip.val() {
                self.st_cip.d.next = self.wd.val();
            }
            if self.wa.val() == self.a_child_udp.val() {
                self.st_cudp.d.next = self.wd.val().get_value_low16();
            }
            if self.wa.val() == self.a_child_port.val() {
                self.st_cport.d.next = self.wd.val().get_value_low8();
            }
            if self.wa.val() == self.a_child_ranks_lo.val() {
                self.st_cranks.d.next = (self.st_cranks.q.val() & 0xffff_ffff_0000_0000u64)
                    | bit_cast::<64, 32>(self.wd.val());
            }
            if self.wa.val() == self.a_child_ranks_hi.val() {
                self.st_cranks.d.next = (self.st_cranks.q.val() & 0xffff_ffffu64)
                    | (bit_cast::<64, 32>(self.wd.val()) << 32);
            }
        }
    }
}
