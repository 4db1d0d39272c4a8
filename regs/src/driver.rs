//! The driver's side of the staging-register protocol: the register writes that program
//! a switch's identity and job table (what a board driver or a testbench sends over
//! AXI4-Lite).

use crate::layout::job;
use crate::map::{addr, child_reg, job_reg, CHILD_BASE, JOB_BASE};

fn mac_words(mac: [u8; 6]) -> (u32, u32) {
    (
        u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
        u32::from(u16::from_be_bytes([mac[0], mac[1]])),
    )
}

/// Register writes `(address, value)` that set the switch's identity: IPv4, UDP port, MAC.
pub fn identity_writes(ip: core::net::Ipv4Addr, udp_port: u16, mac: [u8; 6]) -> Vec<(u32, u32)> {
    let (lo, hi) = mac_words(mac);
    vec![
        (addr::ME_IP, u32::from(ip)),
        (addr::ME_UDP_PORT, udp_port as u32),
        (addr::ME_MAC_LO, lo),
        (addr::ME_MAC_HI, hi),
    ]
}

/// Register writes `(address, value)` that program job-table entry `entry` with `job` and
/// its children (the driver's side of the staging-register protocol: children first, then
/// the job commit, which makes the entry live). Derived fields (`expected`,
/// `effective_quota`) are computed here, as the hardware expects. Timeouts above
/// `u32::MAX` ticks are clamped.
pub fn job_writes(entry: u8, job: &fanin_proto::config::JobEntry) -> Vec<(u32, u32)> {
    use fanin_proto::config::{Mode, Role};
    let mut w = Vec::new();
    for (i, c) in job.children.iter().enumerate() {
        let (lo, hi) = mac_words(c.endpoint.mac);
        let b = CHILD_BASE;
        w.extend([
            (b + child_reg::MAC_LO, lo),
            (b + child_reg::MAC_HI, hi),
            (b + child_reg::IP, u32::from(c.endpoint.ip)),
            (b + child_reg::UDP, c.endpoint.udp_port as u32),
            (b + child_reg::PORT, c.endpoint.port as u32),
            (b + child_reg::RANKS_LO, c.ranks as u32),
            (b + child_reg::RANKS_HI, (c.ranks >> 32) as u32),
            (b + child_reg::COMMIT, (entry as u32) << 8 | i as u32),
        ]);
    }
    let (inner, iap, parent) = match job.role {
        Role::Root => (0, 0, None),
        Role::Inner {
            parent,
            index_at_parent,
        } => (1, index_at_parent, Some(parent)),
    };
    let (timeout, flush, reclaim) = match job.mode {
        Mode::Static => (0, 0, 0),
        Mode::Timeout {
            flush_after,
            reclaim_after,
        } => (
            1,
            flush_after.min(u32::MAX as u64) as u32,
            reclaim_after.min(u32::MAX as u64) as u32,
        ),
    };
    let b = JOB_BASE;
    // `job_ctrl` is the entry's bits 31:0 (docs/rtl.md, "Job-table entry").
    let ctrl = (job::VALID.place(1)
        | job::INNER.place(inner)
        | job::TIMEOUT.place(timeout)
        | job::DEGREE_LIMIT.place(job.degree_limit as u64)
        | job::CHILDREN.place(job.children.len() as u64)
        | job::INDEX_AT_PARENT.place(iap as u64)) as u32;
    let exp = job.expected();
    w.extend([
        (b + job_reg::ID, job.job as u32),
        (b + job_reg::CTRL, ctrl),
        (b + job_reg::RANKS_LO, job.ranks as u32),
        (b + job_reg::RANKS_HI, (job.ranks >> 32) as u32),
        (b + job_reg::EXPECTED_LO, exp as u32),
        (b + job_reg::EXPECTED_HI, (exp >> 32) as u32),
        (b + job_reg::SLOT_BASE, job.slot_base),
        (b + job_reg::SLOT_COUNT, job.slot_count),
        (b + job_reg::QUOTA, job.effective_quota()),
        (b + job_reg::FLUSH_AFTER, flush),
        (b + job_reg::RECLAIM_AFTER, reclaim),
    ]);
    if let Some(p) = parent {
        let (lo, hi) = mac_words(p.mac);
        w.extend([
            (b + job_reg::PARENT_MAC_LO, lo),
            (b + job_reg::PARENT_MAC_HI, hi),
            (b + job_reg::PARENT_IP, u32::from(p.ip)),
            (b + job_reg::PARENT_UDP, p.udp_port as u32),
            (b + job_reg::PARENT_PORT, p.port as u32),
        ]);
    }
    w.push((b + job_reg::COMMIT, entry as u32));
    w
}

/// Register writes that remove job-table entry `entry` (its slot copies become free).
pub fn job_remove_writes(entry: u8) -> Vec<(u32, u32)> {
    vec![
        (JOB_BASE + job_reg::CTRL, 0),
        (JOB_BASE + job_reg::COMMIT, entry as u32),
    ]
}
