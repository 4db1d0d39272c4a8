//! The driver's side of the staging-register protocol: the register writes that program
//! a switch's identity and job table (what a board driver or a testbench sends over
//! AXI4-Lite).

use crate::layout::job;
use crate::map::{addr, child_reg, job_reg, port_below_reg, CHILD_BASE, JOB_BASE, PORT_BELOW_BASE};

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

/// A job entry the RTL cannot run yet: the model has the mode, the hardware does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job {job}: the RTL does not implement {what} yet (docs/rtl.md, \"Not in the RTL yet\"); for an FPGA switch set {fix}")]
pub struct Unsupported {
    /// The job id.
    pub job: u16,
    /// What the entry asks for.
    pub what: &'static str,
    /// The setting that makes the entry loadable.
    pub fix: &'static str,
}

/// Checks that the RTL implements everything `job` asks for.
pub fn check_supported(job: &fanin_proto::config::JobEntry) -> Result<(), Unsupported> {
    let t = &job.trust;
    let no = |what, fix| {
        Err(Unsupported {
            job: job.job,
            what,
            fix,
        })
    };
    if job.rank_set().is_wide() {
        return no(
            "jobs of more than 64 ranks (ranks_hi set, header version 2; the RTL parses header version 1 only, and its job table, children and slot copies hold 64-rank bitmaps)",
            "ranks within 0..64 (fanin_proto::wire::MAX_WORKERS), or run the job on fanin switchd or the fabric simulator",
        );
    }
    if let fanin_proto::config::Mode::Dynamic { .. } = job.mode {
        return no(
            "dynamic mode (Canary: intercepting contributions in transit, recorded ingress ports; see docs/rtl.md)",
            "mode = static or timeout, or run the job on the reference model's fabric simulator",
        );
    }
    if t.reclaim_idle > u32::MAX as u64 {
        return no(
            "an idle reclaim above 2^32 - 1 ticks (the job entry's field is 32 bits)",
            "a smaller trust.reclaim_idle, or a larger tick_div",
        );
    }
    Ok(())
}

/// Refuses a configuration the RTL cannot hold: the core has no key-value (ASK) engine, so
/// any `kv_jobs` entry is an error naming the switch and the job (docs/rtl.md, "Key-value jobs");
/// nor dynamic mode or an idle reclaim beyond 32 bits ([`check_supported`]).
pub fn check_loadable(cfg: &fanin_proto::config::SwitchConfig) -> Result<(), String> {
    match cfg.kv_jobs.first() {
        Some(j) => Err(format!(
            "switch {}: key-value job {} cannot be loaded into the RTL (the core has no key-value engine; see docs/rtl.md, \"Key-value jobs\"); run it on fanin switchd",
            cfg.name, j.job
        )),
        None => {
            for j in &cfg.jobs {
                check_supported(j).map_err(|e| format!("switch {}: {e}", cfg.name))?;
            }
            Ok(())
        }
    }
}

/// Register writes `(address, value)` that program job-table entry `entry` with `job` and
/// its children (the driver's side of the staging-register protocol: children first, then
/// the job commit, which makes the entry live). Derived fields (`expected`,
/// `effective_quota`) are computed here, as the hardware expects. Timeouts above
/// `u32::MAX` ticks are clamped. Refuses an entry the RTL cannot run ([`check_supported`]).
pub fn job_writes(
    entry: u8,
    job: &fanin_proto::config::JobEntry,
) -> Result<Vec<(u32, u32)>, Unsupported> {
    use fanin_proto::config::{Role, SourceCheck};
    check_supported(job)?;
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
    // Bypass source checks: per ingress port, every rank below the job's children on it
    // (all eight rows, so that no row of an earlier job on this entry survives; without
    // source checks the rows are never read and not written).
    let ports = match job.trust.source_check {
        SourceCheck::Off => 0,
        _ => MAX_PORTS,
    };
    for port in 0..ports {
        let below = port_below(job, port);
        let b = PORT_BELOW_BASE;
        w.extend([
            (b + port_below_reg::LO, below as u32),
            (b + port_below_reg::HI, (below >> 32) as u32),
            (
                b + port_below_reg::COMMIT,
                (entry as u32) << 8 | port as u32,
            ),
        ]);
    }
    let fields = job_fields(job)?;
    let v = |f: crate::layout::Field| {
        fields
            .iter()
            .find(|(g, _)| g.name == f.name)
            .map_or(0, |(_, v)| *v)
    };
    let b = JOB_BASE;
    // `job_ctrl` is the entry's bits 31:0 (docs/rtl.md, "Job-table entry").
    let ctrl = job::LAYOUT
        .fields
        .iter()
        .filter(|f| f.offset + f.width <= 32)
        .fold(0, |c, f| c | f.place(v(*f))) as u32;
    let exp = v(job::EXPECTED);
    w.extend([
        (b + job_reg::ID, v(job::JOB) as u32),
        (b + job_reg::CTRL, ctrl),
        (b + job_reg::RANKS_LO, job.ranks as u32),
        (b + job_reg::RANKS_HI, (job.ranks >> 32) as u32),
        (b + job_reg::EXPECTED_LO, exp as u32),
        (b + job_reg::EXPECTED_HI, (exp >> 32) as u32),
        (b + job_reg::SLOT_BASE, v(job::SLOT_BASE) as u32),
        (b + job_reg::SLOT_COUNT, v(job::SLOT_COUNT) as u32),
        (b + job_reg::QUOTA, v(job::QUOTA) as u32),
        (b + job_reg::FLUSH_AFTER, v(job::FLUSH_AFTER) as u32),
        (b + job_reg::RECLAIM_AFTER, v(job::RECLAIM_AFTER) as u32),
        (b + job_reg::RECLAIM_IDLE, v(job::RECLAIM_IDLE) as u32),
        (b + job_reg::FIRST_BLOCK, first_block(job)),
    ]);
    if let Role::Inner { parent, .. } = job.role {
        let (lo, hi) = mac_words(parent.mac);
        w.extend([
            (b + job_reg::PARENT_MAC_LO, lo),
            (b + job_reg::PARENT_MAC_HI, hi),
            (b + job_reg::PARENT_IP, u32::from(parent.ip)),
            (b + job_reg::PARENT_UDP, parent.udp_port as u32),
            (b + job_reg::PARENT_PORT, parent.port as u32),
        ]);
    }
    w.push((b + job_reg::COMMIT, entry as u32));
    Ok(w)
}

/// The first block id written for `job`: `trust.first_block`, or for a root with sessions
/// that leaves it out a random draw (as `fanin switchd` does), so that a reprogrammed card
/// does not reissue the block ids of its previous life; 0 where no session state is kept.
fn first_block(job: &fanin_proto::config::JobEntry) -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let root = job.role == fanin_proto::config::Role::Root;
    match job.trust.first_block {
        Some(b) => b,
        None if root && job.trust.sessions => std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish() as u32,
        None => 0,
    }
}

/// The fields of job-table entry `job` as the core holds them after [`job_writes`], with
/// their values: every field but the epoch (the core's commit counter) and a first block the
/// driver draws ([`job_writes`] picks it at write time), and the parent's fields only for an
/// inner switch (a root's are not written). Timeouts above `u32::MAX` ticks are clamped.
pub fn job_fields(
    job: &fanin_proto::config::JobEntry,
) -> Result<Vec<(crate::layout::Field, u64)>, Unsupported> {
    use fanin_proto::config::{Mode, Role, SourceCheck};
    check_supported(job)?;
    let (timeout, flush, reclaim) = match job.mode {
        Mode::Static => (0, 0, 0),
        Mode::Dynamic { .. } => unreachable!("check_supported refuses dynamic mode"),
        Mode::Timeout {
            flush_after,
            reclaim_after,
        } => (
            1,
            flush_after.min(u32::MAX as u64),
            reclaim_after.min(u32::MAX as u64),
        ),
    };
    let src_check = match job.trust.source_check {
        SourceCheck::Off => job::SRC_CHECK_OFF,
        SourceCheck::Ip => job::SRC_CHECK_IP,
        SourceCheck::IpPort => job::SRC_CHECK_IP_PORT,
    };
    let mut f = vec![
        (job::VALID, 1),
        (job::TIMEOUT, timeout),
        (job::SRC_CHECK, src_check),
        (job::SESSIONS, job.trust.sessions as u64),
        (job::DEGREE_LIMIT, job.degree_limit as u64),
        (job::CHILDREN, job.children.len() as u64),
        (job::JOB, job.job as u64),
        (job::RANKS, job.ranks),
        (job::EXPECTED, job.expected()),
        (job::SLOT_BASE, job.slot_base as u64),
        (job::SLOT_COUNT, job.slot_count as u64),
        (job::QUOTA, job.effective_quota() as u64),
        (job::FLUSH_AFTER, flush),
        (job::RECLAIM_AFTER, reclaim),
        (job::RECLAIM_IDLE, job.trust.reclaim_idle),
    ];
    match job.role {
        Role::Root => f.extend([(job::INNER, 0), (job::INDEX_AT_PARENT, 0)]),
        Role::Inner {
            parent,
            index_at_parent,
        } => f.extend([
            (job::INNER, 1),
            (job::INDEX_AT_PARENT, index_at_parent as u64),
            (job::PARENT_IP, u32::from(parent.ip) as u64),
            (job::PARENT_MAC, mac48(parent.mac)),
            (job::PARENT_UDP, parent.udp_port as u64),
            (job::PARENT_PORT, parent.port as u64),
        ]),
    }
    // A first block the driver draws is not known here: it is not compared.
    let drawn = job.trust.first_block.is_none() && job.role == Role::Root && job.trust.sessions;
    if !drawn {
        f.push((job::FIRST_BLOCK, first_block(job) as u64));
    }
    Ok(f)
}

/// The fields of child `c`'s row in the child table, with their values.
pub fn child_fields(c: &fanin_proto::config::Child) -> Vec<(crate::layout::Field, u64)> {
    use crate::layout::child;
    vec![
        (child::RANKS, c.ranks),
        (child::MAC, mac48(c.endpoint.mac)),
        (child::IP, u32::from(c.endpoint.ip) as u64),
        (child::UDP, c.endpoint.udp_port as u64),
        (child::PORT, c.endpoint.port as u64),
    ]
}

/// A MAC address as the core holds it (byte 0 in bits 47:40).
pub fn mac48(mac: [u8; 6]) -> u64 {
    mac.iter().fold(0, |a, &b| a << 8 | b as u64)
}

/// Rows of the port-below table per job-table entry: the largest port count (`ports` is
/// 2..=8).
pub const MAX_PORTS: u8 = 8;

/// The ranks a bypass-flagged packet of `job` may carry when it arrives on `port`: every
/// rank below the job's children reached through that port
/// (`fanin_proto::model::session::port_below`).
pub fn port_below(job: &fanin_proto::config::JobEntry, port: u8) -> u64 {
    fanin_proto::model::port_below(job, port)
}

/// Register writes that remove job-table entry `entry` (its slot copies become free).
pub fn job_remove_writes(entry: u8) -> Vec<(u32, u32)> {
    vec![
        (JOB_BASE + job_reg::CTRL, 0),
        (JOB_BASE + job_reg::COMMIT, entry as u32),
    ]
}

#[cfg(test)]
mod trust_tests {
    use fanin_proto::config::{Mode, SourceCheck, Trust};
    use fanin_proto::plan::{build, star, Addressing, JobSpec};

    fn cfg(trust: Trust) -> fanin_proto::config::SwitchConfig {
        let spec = JobSpec {
            job: 7,
            slot_count: 4,
            elements: 4,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust,
        };
        build(&star(2), spec).unwrap().switches.remove(0)
    }

    #[test]
    fn a_too_long_idle_reclaim_is_refused_with_the_setting_that_fixes_it() {
        let c = cfg(Trust {
            reclaim_idle: u32::MAX as u64 + 1,
            ..Trust::default()
        });
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(e.starts_with("job 7: the RTL does not implement"), "{e}");
        assert!(e.contains("idle reclaim above"), "{e}");
        let e = super::check_loadable(&c).unwrap_err();
        assert!(e.starts_with("switch root: job 7:"), "{e}");
    }

    #[test]
    fn a_root_with_sessions_gets_its_first_block_given_or_drawn() {
        use crate::layout::job;
        use crate::map::{job_reg, JOB_BASE};
        let first = |c: &fanin_proto::config::SwitchConfig| {
            let w = super::job_writes(0, &c.jobs[0]).unwrap();
            w.iter()
                .find(|(a, _)| *a == JOB_BASE + job_reg::FIRST_BLOCK)
                .unwrap()
                .1
        };
        let given = cfg(Trust {
            first_block: Some(4242),
            ..Trust::default()
        });
        assert_eq!(first(&given), 4242);
        let f = super::job_fields(&given.jobs[0]).unwrap();
        assert!(f.contains(&(job::FIRST_BLOCK, 4242)), "compared by verify");
        // Left out: drawn at every write (two draws differ but for a 2^-32 chance, so
        // four draws are not all equal), and not compared by verify.
        let drawn = cfg(Trust::default());
        let draws: Vec<u32> = (0..4).map(|_| first(&drawn)).collect();
        assert!(draws.iter().any(|d| *d != draws[0]), "{draws:?}");
        let f = super::job_fields(&drawn.jobs[0]).unwrap();
        assert!(f.iter().all(|(g, _)| g.name != "first_block"));
    }

    #[test]
    fn source_checks_and_the_idle_reclaim_are_written() {
        use crate::layout::job;
        use crate::map::{job_reg, port_below_reg, JOB_BASE, PORT_BELOW_BASE};
        for (check, code) in [
            (SourceCheck::Off, job::SRC_CHECK_OFF),
            (SourceCheck::Ip, job::SRC_CHECK_IP),
            (SourceCheck::IpPort, job::SRC_CHECK_IP_PORT),
        ] {
            let c = cfg(Trust {
                sessions: false,
                source_check: check,
                reclaim_idle: 12345,
                first_block: None,
            });
            let w = super::job_writes(3, &c.jobs[0]).unwrap();
            let get = |a: u32| {
                w.iter()
                    .filter(|(x, _)| *x == a)
                    .map(|(_, v)| *v)
                    .collect::<Vec<_>>()
            };
            let ctrl = get(JOB_BASE + job_reg::CTRL)[0] as u64;
            assert_eq!((ctrl >> job::SRC_CHECK.offset) & 3, code);
            assert_eq!(get(JOB_BASE + job_reg::RECLAIM_IDLE), vec![12345]);
            // With checks, eight port rows, each committed to entry 3; the star's two
            // workers sit on ports 1 and 2 (one rank each), every other row is cleared.
            let commits = get(PORT_BELOW_BASE + port_below_reg::COMMIT);
            if check == SourceCheck::Off {
                assert!(commits.is_empty(), "rows are not written without checks");
                continue;
            }
            assert_eq!(commits, (0..8).map(|p| 3 << 8 | p).collect::<Vec<u32>>());
            let lo = get(PORT_BELOW_BASE + port_below_reg::LO);
            let expect: Vec<u32> = (0..8u8)
                .map(|p| fanin_proto::model::port_below(&c.jobs[0], p) as u32)
                .collect();
            assert_eq!(lo, expect);
            assert_eq!(lo.iter().filter(|v| **v != 0).count(), 2, "{lo:?}");
        }
    }

    #[test]
    fn switches_with_sessions_load_and_their_entries_say_so() {
        use crate::layout::job;
        use crate::map::{job_reg, JOB_BASE};
        use fanin_proto::plan::two_level;
        let spec = JobSpec {
            job: 7,
            slot_count: 4,
            elements: 4,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust::default(),
        };
        let p = build(&two_level(None), spec).unwrap();
        let (root, inner) = (&p.switches[0], &p.switches[1]);
        super::check_loadable(root).unwrap();
        super::check_loadable(inner).unwrap();
        for (sessions, bit) in [(true, 1), (false, 0)] {
            let mut e = inner.jobs[0].clone();
            e.trust.sessions = sessions;
            let w = super::job_writes(0, &e).unwrap();
            let ctrl = w
                .iter()
                .find(|(a, _)| *a == JOB_BASE + job_reg::CTRL)
                .unwrap()
                .1;
            assert_eq!((ctrl as u64 >> job::SESSIONS.offset) & 1, bit);
        }
    }
}

#[cfg(test)]
mod kv_tests {
    #[test]
    fn key_value_jobs_are_refused_by_name() {
        use fanin_proto::config::{Endpoint, SwitchConfig};
        let mut cfg = SwitchConfig::new("tor1", [2, 0, 0, 0, 0, 1], [10, 0, 0, 1].into());
        assert_eq!(super::check_loadable(&cfg), Ok(()));
        cfg.kv_jobs.push(fanin_proto::kv::KvJobEntry {
            job: 7,
            arrays: 8,
            size: 1024,
            channels: 4,
            window: 64,
            receiver: Endpoint {
                mac: [2, 0, 0, 0, 0, 2],
                ip: [10, 0, 0, 2].into(),
                udp_port: 9000,
                port: 1,
            },
        });
        let e = super::check_loadable(&cfg).unwrap_err();
        assert!(
            e.contains("switch tor1: key-value job 7 cannot be loaded into the RTL"),
            "{e}"
        );
    }
}

/// Register writes that set forwarding-table entry `entry` to send `ip` out of `port`
/// (`route_port` bit 7 is the valid bit; [`route_remove_writes`] clears it).
pub fn route_writes(entry: u16, ip: core::net::Ipv4Addr, port: u8) -> Vec<(u32, u32)> {
    vec![
        (addr::ROUTE_IP, u32::from(ip)),
        (addr::ROUTE_PORT, (port as u32 & 0xf) | 0x80),
        (addr::ROUTE_COMMIT, entry as u32),
    ]
}

/// Register writes that remove forwarding-table entry `entry`.
pub fn route_remove_writes(entry: u16) -> Vec<(u32, u32)> {
    vec![
        (addr::ROUTE_IP, 0),
        (addr::ROUTE_PORT, 0),
        (addr::ROUTE_COMMIT, entry as u32),
    ]
}

/// Checks that switch configuration `cfg` fits a core of configuration `core` (tables,
/// slots, lanes, ports, as the reference model validates them) and that the RTL runs every
/// job in it ([`check_loadable`]). The error names the switch and what does not fit.
pub fn check_fits(
    cfg: &fanin_proto::config::SwitchConfig,
    core: &crate::CoreConfig,
) -> Result<(), String> {
    check_loadable(cfg)?;
    let mut on_core = cfg.clone();
    on_core.params = core.params();
    on_core.validate().map_err(|e| {
        format!(
            "switch {}: does not fit core configuration {}: {e}",
            cfg.name, core.name
        )
    })
}

/// The whole write sequence that makes a core of configuration `core` run switch `cfg`:
/// identity, then every forwarding-table entry (the unused ones removed), then every
/// job-table entry with its children (the unused ones removed). Replaying it on a core in
/// any earlier state leaves exactly `cfg` live. Refuses what does not fit ([`check_fits`]).
pub fn switch_writes(
    cfg: &fanin_proto::config::SwitchConfig,
    core: &crate::CoreConfig,
) -> Result<Vec<(u32, u32)>, String> {
    check_fits(cfg, core)?;
    let mut w = identity_writes(cfg.ip, cfg.udp_port, cfg.mac);
    for i in 0..core.max_routes.min(256) as u16 {
        match cfg.routes.get(i as usize) {
            Some(r) => w.extend(route_writes(i, r.ip, r.port)),
            None => w.extend(route_remove_writes(i)),
        }
    }
    // Entry indices are 8 bits (max_jobs <= 256, CoreConfig::validate).
    for i in 0..core.max_jobs.min(256) {
        let e = i as u8;
        match cfg.jobs.get(i as usize) {
            Some(j) => w.extend(job_writes(e, j).map_err(|e| e.to_string())?),
            None => w.extend(job_remove_writes(e)),
        }
    }
    Ok(w)
}

#[cfg(test)]
mod switch_tests {
    use super::*;
    use crate::{CoreConfig, RegMap};
    use fanin_proto::config::{Mode, Trust};
    use fanin_proto::plan::{build, star, Addressing, JobSpec};

    fn cfg(workers: usize, elements: u16) -> fanin_proto::config::SwitchConfig {
        let spec = JobSpec {
            job: 7,
            slot_count: 4,
            elements,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust::OFF,
        };
        build(&star(workers), spec).unwrap().switches.remove(0)
    }

    #[test]
    fn core_from_info_reads_back_every_named_configuration() {
        for c in CoreConfig::named() {
            let info = RegMap::new(&c).info_values();
            let got = RegMap::core_from_info("dev", &info).unwrap();
            assert_eq!(got.params(), c.params(), "{}", c.name);
            assert_eq!(
                (got.data_w, got.engine_w, got.max_frame),
                (c.data_w, c.engine_w, c.max_frame)
            );
        }
    }

    #[test]
    fn core_from_info_refuses_a_device_that_is_not_a_fanin_core() {
        let c = CoreConfig::by_name("default").unwrap();
        let mut info = RegMap::new(&c).info_values();
        info[0] = 0xffff_ffff;
        let e = RegMap::core_from_info("0000:3b:00.0", &info).unwrap_err();
        assert!(
            e.starts_with("0000:3b:00.0: register 0 reads 0xffffffff, not 0x46414e49"),
            "{e}"
        );
        let e = RegMap::core_from_info("dev", &info[..3]).unwrap_err();
        assert!(e.contains("3 information registers read, 11 needed"), "{e}");
    }

    #[test]
    fn switch_writes_program_identity_routes_and_jobs_and_clear_the_rest() {
        let core = CoreConfig::by_name("default").unwrap();
        let c = cfg(3, 16);
        let w = switch_writes(&c, &core).unwrap();
        assert_eq!(&w[..4], &identity_writes(c.ip, c.udp_port, c.mac)[..]);
        let routes = &w[4..4 + 3 * core.max_routes as usize];
        for (i, r) in c.routes.iter().enumerate() {
            assert_eq!(
                &routes[3 * i..3 * i + 3],
                &route_writes(i as u16, r.ip, r.port)[..]
            );
        }
        let n = c.routes.len();
        assert_eq!(
            &routes[3 * n..3 * n + 3],
            &route_remove_writes(n as u16)[..]
        );
        let jobs = &w[4 + routes.len()..];
        let first = job_writes(0, &c.jobs[0]).unwrap();
        assert_eq!(&jobs[..first.len()], &first[..]);
        let rest = &jobs[first.len()..];
        assert_eq!(rest.len(), 2 * (core.max_jobs as usize - 1));
        assert_eq!(&rest[rest.len() - 2..], &job_remove_writes(15)[..]);
        // The last write of each entry is its commit, in entry order.
        let commits: Vec<u32> = jobs
            .iter()
            .filter(|(a, _)| *a == JOB_BASE + job_reg::COMMIT)
            .map(|&(_, v)| v)
            .collect();
        assert_eq!(commits, (0..core.max_jobs).collect::<Vec<_>>());
    }

    #[test]
    fn switch_writes_refuse_what_the_core_cannot_hold() {
        let core = CoreConfig::by_name("default").unwrap();
        let e = switch_writes(&cfg(20, 16), &core).unwrap_err();
        assert!(
            e.starts_with("switch root: does not fit core configuration default:"),
            "{e}"
        );
        let mut on = cfg(3, 16);
        on.jobs[0].trust = Trust::default();
        switch_writes(&on, &core).expect("sessions are in the RTL");
    }
}

#[cfg(test)]
mod dynamic_tests {
    use fanin_proto::config::{Mode, Trust};
    use fanin_proto::plan::{build, star, Addressing, JobSpec};

    #[test]
    fn dynamic_mode_jobs_are_refused_with_a_clear_error() {
        let spec = JobSpec {
            job: 9,
            slot_count: 4,
            elements: 4,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: Trust::OFF,
        };
        let mut c = build(&star(2), spec).unwrap().switches.remove(0);
        assert_eq!(super::check_loadable(&c), Ok(()));
        c.jobs[0].mode = Mode::Dynamic {
            flush_after: 10,
            reclaim_after: 100,
        };
        c.validate().expect("a valid dynamic-mode configuration");
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(
            e.starts_with("job 9: the RTL does not implement dynamic mode"),
            "{e}"
        );
        assert!(e.contains("mode = static or timeout"), "{e}");
        let e = super::check_loadable(&c).unwrap_err();
        assert!(
            e.starts_with("switch root: job 9: the RTL does not implement dynamic mode"),
            "{e}"
        );
    }

    /// A job of more than 64 ranks (header version 2) is refused, naming the 64-rank limit.
    #[test]
    fn jobs_of_more_than_64_ranks_are_refused_naming_the_limit() {
        let spec = JobSpec {
            job: 9,
            slot_count: 4,
            elements: 4,
            mode: Mode::Dynamic {
                flush_after: 10,
                reclaim_after: 100,
            },
            addressing: Addressing::Network,
            trust: Trust::OFF,
        };
        let mut c = build(&star(2), spec).unwrap().switches.remove(0);
        c.jobs[0].ranks = u64::MAX;
        c.jobs[0].ranks_hi = vec![u64::MAX; 3];
        c.validate().expect("a valid 256-rank dynamic job");
        assert_eq!(c.jobs[0].rank_set().count(), 256);
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(
            e.starts_with("job 9: the RTL does not implement jobs of more than 64 ranks"),
            "{e}"
        );
        assert!(e.contains("ranks within 0..64"), "{e}");
        let e = super::check_loadable(&c).unwrap_err();
        assert!(
            e.starts_with(
                "switch root: job 9: the RTL does not implement jobs of more than 64 ranks"
            ),
            "{e}"
        );
        // Even a static entry that names a rank above 63 (refused by validation, too).
        c.jobs[0].mode = Mode::Static;
        assert!(super::check_supported(&c.jobs[0])
            .unwrap_err()
            .to_string()
            .contains("more than 64 ranks"));
    }
}
