//! An allreduce of 8 workers over a two-level tree of reference switches (one forwarding-only,
//! one with a degree limit), through lossy, duplicating, reordering links. Verifies every
//! worker's exact sum and prints the figures.

use fanin_proto::config::Mode;
use fanin_proto::fault::FaultSpec;
use fanin_proto::model::Counter;
use fanin_proto::netsim::{JobRun, Links, Net};
use fanin_proto::plan::{self, Addressing, JobSpec, NodeKind, NodeSpec};
use fanin_proto::quant;
use fanin_proto::worker::Sending;

fn main() {
    let sw = |name: &str, parent, aggregate, degree_limit| NodeSpec {
        name: name.into(),
        parent,
        kind: NodeKind::Switch {
            aggregate,
            degree_limit,
        },
    };
    let mut nodes = vec![
        sw("root", None, true, None),
        sw("tor-a", Some(0), true, Some(2)),
        sw("tor-b", Some(0), false, None),
    ];
    for i in 0..8 {
        nodes.push(NodeSpec {
            name: format!("w{i}"),
            parent: Some(if i < 4 { 1 } else { 2 }),
            kind: NodeKind::Worker,
        });
    }
    let spec = JobSpec {
        job: 1,
        slot_count: 16,
        elements: 64,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: fanin_proto::config::Trust::default(),
    };
    let plan = plan::build(&nodes, spec).expect("valid tree");
    // Float gradients, quantised at one agreed exponent.
    let len = 4096;
    let grads: Vec<Vec<f32>> = (0..8)
        .map(|r| {
            (0..len)
                .map(|i| ((i * 7 + r * 13) % 101) as f32 / 50.0 - 1.0)
                .collect()
        })
        .collect();
    let e = grads
        .iter()
        .map(|g| quant::exponent_for(g.iter().fold(0f32, |m, v| m.max(v.abs())), 8))
        .min()
        .unwrap();
    let data: Vec<Vec<i32>> = grads.iter().map(|g| quant::quantize(g, e)).collect();
    let sending = Sending {
        window: 16,
        retransmit_after: 200,
        first_block: 0,
        exponent: e,
    };
    let runs = [JobRun {
        plan: plan.clone(),
        sending,
        data: data.clone(),
        start: vec![],
    }];
    let faults = Links {
        delay: 5,
        faults: FaultSpec {
            loss: 0.05,
            dup: 0.05,
            ..FaultSpec::NONE
        }
        .jitter(20),
    };
    let mut net = Net::new(&nodes, &runs, faults, 42).expect("network");
    let out = net.run(10_000_000);
    assert!(out.finished, "allreduce did not finish");
    let exact: Vec<i32> = (0..len).map(|i| data.iter().map(|d| d[i]).sum()).collect();
    let float: Vec<f64> = (0..len)
        .map(|i| grads.iter().map(|g| g[i] as f64).sum())
        .collect();
    let bound = quant::error_bound(8, e);
    let mut worst = 0f64;
    for a in &plan.workers {
        let w = net.worker(1, a.rank).unwrap();
        let (sum, _) = w.result().unwrap();
        assert_eq!(sum, exact, "rank {} int32 sum differs", a.rank);
        for (q, f) in sum.iter().zip(&float) {
            worst = worst.max((*q as f64 * 2f64.powi(-(e as i32)) - f).abs());
        }
    }
    assert!(
        worst <= bound,
        "quantisation error {worst} above bound {bound}"
    );
    let retx: u64 = net.workers().map(|w| w.stats().retransmissions).sum();
    println!(
        "workers 8, elements {len}, blocks {} per worker, exponent {e}",
        len / 64
    );
    println!(
        "link faults: 5% loss, 5% duplication, jitter 20 ticks -> {} frames lost of {} delivered",
        out.lost, out.delivered
    );
    println!("finished at tick {}; {retx} retransmissions", out.time);
    for (i, &n) in plan.switch_nodes.iter().enumerate() {
        let c = net.switch(n).counters();
        let name = &plan.switches[i].name;
        println!(
            "  {name:6} aggregated {:5}  completions {:4}  duplicates {:4}  bypass(degree) {:4}  forwarded {:5}",
            c.get(Counter::Aggregated),
            c.get(Counter::Completions),
            c.get(Counter::Duplicates),
            c.get(Counter::BypassDegree),
            c.get(Counter::Forwarded)
        );
    }
    println!("verified: every worker holds the exact int32 sum; float error {worst:.2e} <= bound {bound:.2e}");
}
