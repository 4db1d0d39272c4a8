//! Job-table commits and the epochs that free a replaced job's slot copies.

use fanin_proto::config::Mode;
use fanin_proto::model::Counter;
use fanin_proto::plan::{self, Addressing, JobSpec};
use fanin_sim::scoreboard::commit_job;
use fanin_sim::tb::{DbgEvent, Pacing};

use crate::common::*;

/// Commits between an entry's first commit and the one that would reuse its epoch if the
/// commit counter were 16 bits wide (as it was).
const ALIAS: usize = 1 << 16;

#[test]
fn a_recommit_frees_copies_even_after_the_commit_counter_passes_their_epoch() {
    // Job 7 in entry 0 (the first commit after reset), job 9 in entry 1 (the second).
    // Worker 0's contribution leaves a copy of job 7 Aggregating. Entry 1 is committed
    // again and again (the commit register alone: the staging registers still hold job
    // 9), then entry 0 once more, exactly ALIAS commits after its first. That commit frees
    // the copy (`Switch::set_job`), so workers 1 and 2 start the block afresh and it does
    // not complete. A 16-bit epoch would alias there and merge them into worker 0's stale
    // partial aggregate: a result the model never sends.
    let spec = |job| JobSpec {
        job,
        slot_count: 4,
        elements: 8,
        mode: Mode::Static,
        addressing: Addressing::Network,
        trust: fanin_proto::config::Trust::OFF,
    };
    let nodes = plan::star(3);
    let a = plan::build(&nodes, spec(7)).unwrap();
    let b = plan::build(&nodes, spec(9)).unwrap();
    let cfg = fold(&plan::merge(&[a.clone(), b]).unwrap().remove(0), &core());
    assert_eq!(
        cfg.jobs.iter().map(|j| j.job).collect::<Vec<_>>(),
        [7, 9],
        "job 9 must be programmed last, so that its staging stays for the bare commits"
    );
    let port = |r: usize| {
        let ip = a.workers[r].me.ip;
        cfg.routes.iter().find(|x| x.ip == ip).unwrap().port as usize
    };
    let frame = |r: usize| a.workers[r].contribution_frame(0, 0, &[r as i32 + 1; 8]);
    let (commit_addr, _) = *fanin_regs::job_writes(1, &cfg.jobs[1])
        .unwrap()
        .last()
        .unwrap();
    for pacing in Pacing::CORNERS {
        let s = seed();
        let (mut tb, mut sb) = setup_with(&cfg, pacing, s);
        tb.src[port(0)].push(frame(0), false);
        tb.drain(100, 100_000).unwrap();
        // Commits 2 ..= ALIAS - 1 (0 and 1 were the programming), then entry 0's.
        for _ in 2..ALIAS {
            sb.expect_commit(1, cfg.jobs[1].clone());
            tb.write(commit_addr, 1).unwrap();
        }
        commit_job(&mut tb, &mut sb, 0, &cfg.jobs[0]).unwrap();
        for _ in 0..8 {
            tb.step();
        }
        let commits = tb
            .events
            .iter()
            .filter(|e| matches!(e, DbgEvent::Commit { .. }));
        assert_eq!(commits.count(), ALIAS - 1, "{pacing:?}: commits reported");
        for r in 1..3 {
            tb.src[port(r)].push(frame(r), false);
        }
        finish(
            &mut tb,
            &mut sb,
            "recommit at the alias distance",
            pacing,
            s,
        );
        let c = sb.model.counters();
        assert_eq!(c.get(Counter::Completions), 0, "{pacing:?}");
        assert!(c.get(Counter::Aggregated) >= 3, "{pacing:?}: {c:?}");
    }
}
