//! The driver's encoders and the register table agree.

use fanin_proto::config::{Child, Endpoint, JobEntry, Mode, Role};
use fanin_regs::{
    addr, identity_writes, job_remove_writes, job_writes, Access, CoreConfig, RegMap,
};

fn endpoint(k: u8) -> Endpoint {
    Endpoint {
        mac: [2, 0, 0, 0, 0, k],
        ip: core::net::Ipv4Addr::new(10, 0, 0, k),
        udp_port: 4000 + k as u16,
        port: k % 4,
    }
}

/// Every address an encoder writes is a writable register of the table.
#[test]
fn encoders_write_only_writable_registers() {
    let cfg = CoreConfig::by_name("default").unwrap();
    let map = RegMap::new(&cfg);
    let job = JobEntry {
        job: 7,
        ranks: 0b1111,
        ranks_hi: vec![],
        children: (0..2)
            .map(|k| Child {
                endpoint: endpoint(k + 1),
                ranks: 0b11 << (2 * k),
                below: 0,
            })
            .collect(),
        degree_limit: 2,
        role: Role::Inner {
            parent: endpoint(9),
            index_at_parent: 3,
        },
        mode: Mode::Timeout {
            flush_after: 100,
            reclaim_after: u64::MAX,
        },
        slot_base: 0,
        slot_count: 16,
        quota: 4,
        trust: fanin_proto::config::Trust::OFF,
    };
    let writes = identity_writes(core::net::Ipv4Addr::new(10, 0, 0, 1), 4791, [2; 6])
        .into_iter()
        .chain(job_writes(3, &job).expect("an entry the RTL runs"))
        .chain(job_remove_writes(3));
    for (a, _) in writes {
        let r = map
            .regs
            .iter()
            .find(|r| r.addr == a)
            .unwrap_or_else(|| panic!("0x{a:03x} is not in the register table"));
        assert_ne!(r.access, Access::RO, "{} is read only", r.name);
    }
}

/// The named addresses are the table's.
#[test]
fn named_addresses_match_the_table() {
    let map = RegMap::new(&CoreConfig::by_name("default").unwrap());
    for (name, a) in [
        ("me_ip", addr::ME_IP),
        ("me_udp_port", addr::ME_UDP_PORT),
        ("me_mac_lo", addr::ME_MAC_LO),
        ("me_mac_hi", addr::ME_MAC_HI),
        ("tick_div", addr::TICK_DIV),
        ("tick", addr::TICK),
        ("scan_ticks", addr::SCAN_TICKS),
        ("route_ip", addr::ROUTE_IP),
        ("route_port", addr::ROUTE_PORT),
        ("route_commit", addr::ROUTE_COMMIT),
    ] {
        assert_eq!(map.addr(name), a, "{name}");
    }
}

/// `job_ctrl` packs the entry's control bits as the RTL reads them (bit 0 valid, 1 inner,
/// 2 timeout, 15:8 degree_limit, 23:16 children, 31:24 index_at_parent).
#[test]
fn job_ctrl_packs_the_control_bits() {
    let job = JobEntry {
        job: 7,
        ranks: 0b111,
        ranks_hi: vec![],
        children: (0..3)
            .map(|k| Child {
                endpoint: endpoint(k + 1),
                ranks: 1 << k,
                below: 0,
            })
            .collect(),
        degree_limit: 2,
        role: Role::Inner {
            parent: endpoint(9),
            index_at_parent: 5,
        },
        mode: Mode::Timeout {
            flush_after: 1,
            reclaim_after: 2,
        },
        slot_base: 0,
        slot_count: 4,
        quota: 0,
        trust: fanin_proto::config::Trust::OFF,
    };
    let ctrl_addr = fanin_regs::JOB_BASE + fanin_regs::job_reg::CTRL;
    let ctrl = |j: &JobEntry| {
        job_writes(0, j)
            .expect("an entry the RTL runs")
            .into_iter()
            .find(|w| w.0 == ctrl_addr)
            .unwrap()
            .1
    };
    assert_eq!(ctrl(&job), 1 | 1 << 1 | 1 << 2 | 2 << 8 | 3 << 16 | 5 << 24);
    let root = JobEntry {
        role: Role::Root,
        mode: Mode::Static,
        ..job
    };
    assert_eq!(ctrl(&root), 1 | 2 << 8 | 3 << 16);
}
