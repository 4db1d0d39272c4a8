//! Emitted configurations validate and load into the reference model.

use fanin_placement::aggtree::AggTree;
use fanin_placement::emit::{emit, EmitOptions};
use fanin_placement::metrics::Scale;
use fanin_placement::paring::{atp, paring, ParingConfig};
use fanin_placement::rational::int;
use fanin_placement::topology::fat_tree;
use fanin_placement::{place, TreeAlgo};
use fanin_proto::config::Role;
use fanin_proto::model::Switch;

use crate::common::seven;

fn check(e: &fanin_placement::emit::Emitted) {
    for cfg in &e.switches {
        cfg.validate().unwrap();
        Switch::new(cfg).unwrap_or_else(|err| panic!("{}: {err}", cfg.name));
    }
}

#[test]
fn soar_tree_configs_follow_the_blue_tree() {
    let t = seven(["r", "a", "b", "l1", "l2", "l3", "l4"], [2, 6, 5, 4]);
    let s = Scale::new(&t).unwrap();
    let p = place(TreeAlgo::Soar, &t, &s, &t.loads(), &[true; 7], 2, 0).unwrap();
    let e = emit(
        &[(0, AggTree::from_tree(&t, &t.loads(), &p.blue))],
        &EmitOptions::default(),
    )
    .unwrap();
    check(&e);
    let names: Vec<&str> = e.switches.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["d", "b", "l2"]);
    let root = &e.switches[0].jobs[0];
    assert_eq!(root.role, Role::Root);
    assert_eq!(root.ranks, (1 << 17) - 1);
    // d's children: l1's two workers, l2 (blue), b (blue).
    assert_eq!(root.children.len(), 4);
    let b = &e.switches[1].jobs[0];
    assert_eq!(b.children.len(), 9);
    assert_eq!(b.degree_limit, 9);
    match b.role {
        Role::Inner {
            parent,
            index_at_parent,
        } => {
            assert_eq!(parent.ip, e.switches[0].ip);
            assert_eq!(index_at_parent, 3);
            assert_eq!(root.children[3].ranks, b.ranks);
        }
        Role::Root => panic!("b is inner"),
    }
    assert_eq!(e.workers.len(), 17);
    let w = &e.workers[2];
    assert_eq!((w.rank, w.workers, w.parent.ip), (2, 17, e.switches[2].ip));
}

#[test]
fn base_port_gives_distinct_local_ports_and_multi_jobs_share_switches() {
    let t = seven(["r", "a", "b", "l1", "l2", "l3", "l4"], [2, 6, 5, 4]);
    let jobs = vec![
        (0, AggTree::from_tree(&t, &t.loads(), &[1, 2])),
        (1, AggTree::from_tree(&t, &t.loads(), &[2, 4])),
    ];
    let e = emit(
        &jobs,
        &EmitOptions {
            slots: 32,
            base_port: Some(40000),
            packet_elements: 1024,
            ..EmitOptions::default()
        },
    )
    .unwrap();
    check(&e);
    // The packet size travels into every switch's lanes and every worker's assignment.
    assert!(e.switches.iter().all(|c| c.params.elements == 1024));
    assert!(e.workers.iter().all(|w| w.elements == 1024));
    let mut ports: Vec<u16> = e
        .switches
        .iter()
        .map(|c| c.udp_port)
        .chain(e.workers.iter().map(|w| w.me.udp_port))
        .collect();
    let total = ports.len();
    ports.sort_unstable();
    ports.dedup();
    assert_eq!(
        ports.len(),
        total - 17,
        "workers of two jobs share their servers' ports"
    );
    let b = e.switches.iter().find(|c| c.name == "b").unwrap();
    assert_eq!(b.jobs.len(), 2);
    assert_eq!((b.jobs[0].slot_base, b.jobs[1].slot_base), (0, 32));
    assert!(e
        .switches
        .iter()
        .all(|c| c.ip == std::net::Ipv4Addr::LOCALHOST));
}

#[test]
fn too_many_workers_is_one_clear_error() {
    let t = fanin_placement::topology::binary_tree(16).unwrap();
    let loads = vec![9; 15];
    let e = emit(
        &[(0, AggTree::from_tree(&t, &loads, &[]))],
        &EmitOptions::default(),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("135 workers") && e.contains("at most 64"), "{e}");
}

#[test]
fn paring_and_atp_configs_load_with_degree_limits() {
    let mut g = fat_tree(4).unwrap();
    let order = fanin_placement::topology::programmable_order(&g, 4);
    g.set_programmable(&order[..6]);
    let cfg = ParingConfig {
        workers: 9,
        capacity: int(2),
        rate_limit: int(1),
        gradient: int(1),
    };
    for p in [paring(&g, &cfg).unwrap(), atp(&g, &cfg).unwrap()] {
        let e = emit(&[(0, AggTree::from_graph(&g, &p))], &EmitOptions::default()).unwrap();
        check(&e);
        assert_eq!(e.workers.len(), 9);
        assert_eq!(
            e.switches
                .iter()
                .find(|c| c.jobs[0].role == Role::Root)
                .unwrap()
                .name,
            g.vertices[p.ps].id
        );
        for a in &p.nodes[1..] {
            let c = e
                .switches
                .iter()
                .find(|c| c.name == g.vertices[a.vertex].id)
                .unwrap();
            assert_eq!(c.jobs[0].degree_limit as usize, a.limit);
        }
    }
}

#[test]
fn emitted_modes_reach_every_job_entry_and_load() {
    use fanin_proto::config::{Mode, Trust};
    let t = seven(["r", "a", "b", "l1", "l2", "l3", "l4"], [2, 6, 5, 4]);
    let jobs = vec![(3, AggTree::from_tree(&t, &t.loads(), &[1, 2]))];
    for mode in [
        Mode::Timeout {
            flush_after: 50,
            reclaim_after: 500,
        },
        Mode::Dynamic {
            flush_after: 50,
            reclaim_after: 500,
        },
    ] {
        let e = emit(
            &jobs,
            &EmitOptions {
                mode,
                ..EmitOptions::default()
            },
        )
        .unwrap();
        check(&e);
        for s in &e.switches {
            for j in &s.jobs {
                assert_eq!(j.mode, mode, "{}", s.name);
                if let Mode::Dynamic { .. } = mode {
                    assert_eq!(j.trust, Trust::OFF, "dynamic mode has no sessions yet");
                }
            }
            let sw = Switch::new(s).unwrap();
            assert!(sw.job(3).is_some() || sw.dynamic().has(3), "{}", s.name);
        }
    }
}

const DYNAMIC: fanin_proto::config::Mode = fanin_proto::config::Mode::Dynamic {
    flush_after: 50,
    reclaim_after: 500,
};

/// Dynamic mode: every switch's routes, followed hop by hop through the emitted links, lead
/// from every switch to every worker and every other switch, over one port per tree edge;
/// the links agree at both ends and the tunnel addresses are the base port's.
#[test]
fn dynamic_routes_reach_every_node_over_one_port_per_edge() {
    let t = seven(["r", "a", "b", "l1", "l2", "l3", "l4"], [2, 6, 5, 4]);
    // Two jobs on the same tree share its switches and ports.
    let tree = AggTree::from_tree(&t, &t.loads(), &[1, 2, 4]);
    let e = emit(
        &[(3, tree.clone()), (4, tree)],
        &EmitOptions {
            mode: DYNAMIC,
            base_port: Some(40000),
            ..EmitOptions::default()
        },
    )
    .unwrap();
    check(&e);
    let w = e.wiring.as_ref().expect("dynamic mode writes the wiring");
    assert_eq!(w.switches.len(), e.switches.len());
    assert_eq!(w.workers.len(), 2 * 17);
    let by_ip = |ip| e.switches.iter().position(|c| c.ip == ip);
    let mut targets: Vec<std::net::Ipv4Addr> = w.workers.iter().map(|x| x.ip).collect();
    targets.extend(e.switches.iter().map(|c| c.ip));
    for (s, cfg) in e.switches.iter().enumerate() {
        let sw = &w.switches[s];
        assert_eq!(sw.name, cfg.name);
        assert_eq!(cfg.jobs.len(), 2);
        assert!(cfg.params.ports as usize >= sw.links.len());
        // The job entries name their children and parent on the same ports as the links.
        for j in &cfg.jobs {
            for c in &j.children {
                assert_eq!(sw.links[c.endpoint.port as usize].ip, c.endpoint.ip);
            }
            if let fanin_proto::config::Role::Inner { parent, .. } = j.role {
                assert_eq!(sw.links[parent.port as usize].ip, parent.ip);
            }
        }
        for (i, l) in sw.links.iter().enumerate() {
            assert_eq!(l.port as usize, i, "{}: ports are dense", cfg.name);
            // The neighbour's end of a switch link names this switch.
            if let Some(n) = by_ip(l.ip) {
                assert!(w.switches[n].links.iter().any(|b| b.ip == cfg.ip));
            }
            let t = l.tunnel.expect("base port gives tunnels");
            assert!(sw.switchd_args.contains(&format!("{}={t}", l.port)));
        }
        for &dst in &targets {
            if dst == cfg.ip {
                continue;
            }
            let (mut at, mut hops) = (s, 0);
            loop {
                let c = &e.switches[at];
                let r = c.routes.iter().find(|r| r.ip == dst);
                let r = r.unwrap_or_else(|| panic!("{} has no route to {dst}", c.name));
                let next = w.switches[at].links[r.port as usize].ip;
                if next == dst {
                    break;
                }
                at = by_ip(next).unwrap_or_else(|| panic!("{}: {dst} leads to a worker", c.name));
                hops += 1;
                assert!(hops < 8, "a routing loop toward {dst}");
            }
        }
    }
    for x in &w.workers {
        let sw = w.switches.iter().find(|s| s.name == x.switch).unwrap();
        let l = sw.links.iter().find(|l| l.ip == x.ip).unwrap();
        assert_eq!((x.bind, x.switch_tunnel), (l.tunnel, sw.listen));
        assert!(x
            .send_args
            .windows(2)
            .any(|a| a[0] == "--rank" && a[1] == x.rank.to_string()));
    }
}

/// Dynamic jobs whose trees hang a node below different parents cannot share one forwarding
/// table: one clear error naming the node, both parents and both jobs.
#[test]
fn dynamic_jobs_with_other_parents_are_refused_by_name() {
    let t = seven(["r", "a", "b", "l1", "l2", "l3", "l4"], [2, 6, 5, 4]);
    let jobs = vec![
        (0, AggTree::from_tree(&t, &t.loads(), &[1, 2])),
        (1, AggTree::from_tree(&t, &t.loads(), &[2, 4])),
    ];
    let opts = EmitOptions {
        mode: DYNAMIC,
        ..EmitOptions::default()
    };
    let err = emit(&jobs, &opts).unwrap_err().to_string();
    assert_eq!(
        err,
        "node \"l1/w0\" hangs below \"a\" in job 0 and below \"d\" in job 1; the dynamic jobs' switches need one forwarding table, so their trees must agree on every node's parent: emit these jobs separately"
    );
    // Static jobs of the same trees need no routes and emit.
    emit(&jobs, &EmitOptions::default()).unwrap();
}
