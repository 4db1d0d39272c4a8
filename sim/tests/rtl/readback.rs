//! Table read-back (`tbl_sel`, `tbl_data*`): what `fanin hw verify` reads. Every table row a
//! configuration determines reads back as written, and a row changed behind the driver's
//! back is reported by table, row and field.

use fanin_hdl::CoreConfig;
use fanin_proto::config::{Mode, SourceCheck, SwitchConfig, Trust};
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_regs::map::{child_reg, CHILD_BASE};
use fanin_regs::verify::{verify, Mismatch};
use fanin_sim::tb::{Pacing, Tb};

use crate::common::*;

/// A core programmed with job 7 (timeout mode, 3 workers, 4 slots) of the given trust:
/// the testbench, the switch's configuration as folded for the core, and the core's.
fn programmed(trust: Trust) -> (Tb, SwitchConfig, CoreConfig) {
    let spec = JobSpec {
        job: 7,
        slot_count: 4,
        elements: 8,
        mode: Mode::Timeout {
            flush_after: 100,
            reclaim_after: 50,
        },
        addressing: Addressing::Network,
        trust,
    };
    let p = plan::build(&plan::star(3), spec).unwrap();
    let core = core();
    let mut cfg = fold(&p.switches[0], &core);
    cfg.params = core.params();
    let (tb, _sb) = setup_with(&cfg, Pacing::CORNERS[0], seed());
    (tb, cfg, core)
}

#[test]
fn every_table_reads_back_as_programmed_and_a_changed_row_is_named() {
    let (mut tb, cfg, core) = programmed(Trust {
        sessions: false,
        source_check: SourceCheck::IpPort,
        reclaim_idle: 777,
        first_block: None,
    });
    let found = verify(&cfg, &core, &mut TbBus(&mut tb)).unwrap();
    assert_eq!(
        found,
        vec![],
        "a freshly programmed core reads back as its file"
    );
    // Child 1's IPv4 address rewritten behind the driver's back (its other fields staged
    // as the driver left them, the last child's): each differing field is reported.
    let last = cfg.jobs[0].children.last().unwrap().clone();
    let c1 = cfg.jobs[0].children[1].clone();
    tb.write(CHILD_BASE + child_reg::IP, u32::from(c1.endpoint.ip) ^ 0xff)
        .unwrap();
    tb.write(CHILD_BASE + child_reg::COMMIT, 1).unwrap();
    let found = verify(&cfg, &core, &mut TbBus(&mut tb)).unwrap();
    let row = "child 1 of job-table entry 0 (job 7)".to_string();
    let mut want = vec![Mismatch {
        row: row.clone(),
        field: "ip",
        card: (u32::from(c1.endpoint.ip) ^ 0xff) as u64,
        file: u32::from(c1.endpoint.ip) as u64,
    }];
    for (name, card, file) in [
        ("ranks", last.ranks, c1.ranks),
        (
            "mac",
            fanin_regs::mac48(last.endpoint.mac),
            fanin_regs::mac48(c1.endpoint.mac),
        ),
        (
            "udp",
            last.endpoint.udp_port as u64,
            c1.endpoint.udp_port as u64,
        ),
        ("port", last.endpoint.port as u64, c1.endpoint.port as u64),
    ] {
        if card != file {
            want.push(Mismatch {
                row: row.clone(),
                field: name,
                card,
                file,
            });
        }
    }
    want.sort_by_key(|m| m.field);
    let mut found = found;
    found.sort_by_key(|m| m.field);
    assert_eq!(found, want);
    // The job entry removed: its valid bit is reported (and nothing of its children,
    // which the file's entry still names but the comparison reads as written).
    for (a, v) in fanin_regs::job_remove_writes(0) {
        tb.write(a, v).unwrap();
    }
    let found = verify(&cfg, &core, &mut TbBus(&mut tb)).unwrap();
    assert!(
        found
            .iter()
            .any(|m| m.row == "job-table entry 0 (job 7)" && m.field == "valid" && m.card == 0),
        "{found:?}"
    );
    // A route pointed at another port.
    let r0 = cfg.routes[0];
    for (a, v) in fanin_regs::route_writes(0, r0.ip, (r0.port + 1) % core.ports) {
        tb.write(a, v).unwrap();
    }
    let found = verify(&cfg, &core, &mut TbBus(&mut tb)).unwrap();
    assert!(
        found
            .iter()
            .any(|m| m.row == "forwarding-table entry 0" && m.field == "ports"),
        "{found:?}"
    );
}

#[test]
fn a_partial_or_unmapped_write_is_refused_and_changes_nothing() {
    use fanin_regs::map::addr;
    use fanin_sim::axil::Op;
    let (mut tb, cfg, core) = programmed(Trust::default());
    let me_ip = tb.read(addr::ME_IP).unwrap();
    let c1 = cfg.jobs[0].children[1].clone();
    let r0 = cfg.routes[0];
    // Each of these, written whole, would change what the card holds: the identity, child
    // 1's address (staged, then committed) and route 0's port.
    let mut writes = vec![
        (addr::ME_IP, !me_ip, 0x1),
        (
            CHILD_BASE + child_reg::IP,
            u32::from(c1.endpoint.ip) ^ 0xff,
            0x7,
        ),
        (CHILD_BASE + child_reg::COMMIT, 1, 0xe),
    ];
    for (a, v) in fanin_regs::route_writes(0, r0.ip, (r0.port + 1) % core.ports) {
        writes.push((a, v, 0x0));
    }
    for (addr, data, strb) in writes {
        let d = tb.access_raw(Op::Write { addr, data, strb }).unwrap();
        assert_eq!(
            d.resp, 2,
            "write of {data:#x} to {addr:#x} with strobes {strb:#x}: SLVERR"
        );
    }
    // Whole writes where no register takes one: a read-only register (`tick`, `id`), a
    // gap in the map, the last word of the 16-bit space; and a partial one there.
    for (addr, strb) in [
        (addr::TICK, 0xf),
        (0, 0xf),
        (0x7fc, 0xf),
        (0xfffc, 0xf),
        (0x7fc, 0x1),
    ] {
        let d = tb
            .access_raw(Op::Write {
                addr,
                data: 0x5a5a_5a5a,
                strb,
            })
            .unwrap();
        assert_eq!(
            d.resp, 3,
            "write to {addr:#x} with strobes {strb:#x}: DECERR"
        );
    }
    let found = verify(&cfg, &core, &mut TbBus(&mut tb)).unwrap();
    assert_eq!(found, vec![], "refused writes changed nothing");
    assert_eq!(tb.read(addr::ME_IP).unwrap(), me_ip, "me_ip unchanged");
    // The next whole write is answered OKAY and applied.
    tb.write(addr::ME_IP, me_ip ^ 1).unwrap();
    assert_eq!(tb.read(addr::ME_IP).unwrap(), me_ip ^ 1);
}
