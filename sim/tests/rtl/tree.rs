//! A two-level tree of two Verilated cores: inner switch `a` (workers 0..3, degree limit 2,
//! so worker 2 is bypassed to the root) has its upstream port 0 wired to port 1 of root `r`
//! (worker 3 on port 2). Each core is checked against its own reference model; every worker
//! must end with the exact sum. On a core with fewer ports, devices share ports as
//! [`fold`] puts them (a shared port is a segment: a frame goes to the worker on it it is
//! addressed to, otherwise to the switch on it).

use fanin_proto::config::Mode;
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_proto::wire::{frame::classify, FrameKind};
use fanin_proto::worker::{Sending, Worker};
use fanin_sim::tb::{Pacing, Tb};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::common::*;

#[test]
fn two_level_tree_of_cores() {
    for pacing in Pacing::CORNERS {
        let s = seed();
        let nodes = plan::two_level(Some(2));
        let spec = JobSpec {
            job: 3,
            slot_count: 8,
            elements: 16,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust: fanin_proto::config::Trust::OFF,
        };
        let p = plan::build(&nodes, spec).unwrap();
        let core = core();
        let (rc, ac) = (fold(&p.switches[0], &core), fold(&p.switches[1], &core));
        let (mut r, mut sr) = setup_with(&rc, pacing, s);
        let (mut a, mut sa) = setup_with(&ac, pacing, s + 1);
        let port_to = |cfg: &fanin_proto::config::SwitchConfig, ip| {
            cfg.routes.iter().find(|x| x.ip == ip).unwrap().port as usize
        };
        // r's port toward a, a's port toward r.
        let (r_to_a, a_up) = (port_to(&rc, ac.ip), port_to(&ac, rc.ip));
        let mut rng = ChaCha8Rng::seed_from_u64(s);
        let data: Vec<Vec<i32>> = (0..4)
            .map(|_| (0..400).map(|_| rng.gen_range(-1000..1000)).collect())
            .collect();
        let sending = Sending {
            window: 8,
            retransmit_after: 50_000,
            first_block: 0,
            exponent: 0,
        };
        let mut ws: Vec<Worker> = p
            .workers
            .iter()
            .map(|x| Worker::new(x.clone(), sending, &data[x.rank as usize]).unwrap())
            .collect();
        // (is under a, port) of each worker: workers 0..3 are under a, worker 3 under r.
        let ips: Vec<_> = (0..p.workers.len())
            .map(|rank| {
                p.workers
                    .iter()
                    .find(|w| w.rank as usize == rank)
                    .unwrap()
                    .me
                    .ip
            })
            .collect();
        let at = |rank: usize| {
            if rank < 3 {
                (true, port_to(&ac, ips[rank]))
            } else {
                (false, port_to(&rc, ips[rank]))
            }
        };
        // Workers attached to r directly (they may share r's port toward a).
        let under_r = [ips[3]];
        let dst_of = |f: &[u8]| match classify(f) {
            FrameKind::Ipv4 { dst, .. } => Some(dst),
            _ => None,
        };
        let mut seen_a = vec![0usize; a.ports()];
        let mut seen_r = vec![0usize; r.ports()];
        let deliver = |f: &[u8], ws: &mut Vec<Worker>| {
            if let FrameKind::Ipv4 { dst, .. } = classify(f) {
                for w in ws.iter_mut().filter(|w| w.assignment().me.ip == dst) {
                    w.receive(f);
                }
            }
        };
        let mut cycles = 0u64;
        while ws.iter().any(|w| !w.done()) {
            assert!(
                cycles < 3_000_000,
                "{pacing:?} seed {s}: tree allreduce did not finish"
            );
            for w in ws.iter_mut() {
                let (under_a, port) = at(w.assignment().rank as usize);
                for b in w.poll(cycles) {
                    let tb: &mut Tb = if under_a { &mut a } else { &mut r };
                    tb.src[port].push(w.frame(b), false);
                }
            }
            for _ in 0..8 {
                a.step();
                r.step();
                cycles += 1;
            }
            for (port, seen) in seen_a.iter_mut().enumerate() {
                let new: Vec<Vec<u8>> = a.sink[port].frames[*seen..]
                    .iter()
                    .map(|f| f.data.clone())
                    .collect();
                *seen = a.sink[port].frames.len();
                for f in new {
                    if port == a_up {
                        r.src[r_to_a].push(f, false); // a's uplink is wired to r's port 1
                    } else {
                        deliver(&f, &mut ws);
                    }
                }
            }
            for (port, seen) in seen_r.iter_mut().enumerate() {
                let new: Vec<Vec<u8>> = r.sink[port].frames[*seen..]
                    .iter()
                    .map(|f| f.data.clone())
                    .collect();
                *seen = r.sink[port].frames.len();
                for f in new {
                    if port == r_to_a && !dst_of(&f).is_some_and(|d| under_r.contains(&d)) {
                        a.src[a_up].push(f, false);
                    } else {
                        deliver(&f, &mut ws);
                    }
                }
            }
        }
        let want: Vec<i32> = (0..400).map(|i| data.iter().map(|d| d[i]).sum()).collect();
        for w in &ws {
            assert_eq!(
                w.result().unwrap().0,
                want,
                "{pacing:?} seed {s}: rank {}",
                w.assignment().rank
            );
        }
        finish(&mut a, &mut sa, "tree: inner a", pacing, s);
        finish(&mut r, &mut sr, "tree: root r", pacing, s);
        use fanin_proto::model::Counter;
        assert!(
            sa.model.counters().get(Counter::BypassDegree) > 0,
            "worker 2 is bypassed at a"
        );
        assert!(
            sr.model.counters().get(Counter::Completions) == 25,
            "25 blocks complete at the root"
        );
    }
}
