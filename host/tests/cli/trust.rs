//! Trust: a later allreduce never gets an earlier one's sum, stray traffic never wedges the
//! switch, and crashes end in exact sums or a clear error (docs/protocol.md, "Trust").

use std::net::UdpSocket;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use fanin_proto::forge;
use rand::{Rng, SeedableRng};

use super::*;

/// Starts `fanin send` for each rank of a `workers`-worker job 7 at switch `sw`.
fn spawn_workers(
    sw: SocketAddrV4,
    p: &[u16],
    inputs: &[Vec<String>],
    extra: &[&str],
) -> Vec<Child> {
    (0..inputs.len())
        .map(|r| {
            fanin()
                .args(["send", "--json", "--job", "7", "--switch"])
                .arg(sw.to_string())
                .args(["--workers", &inputs.len().to_string()])
                .args(["--rank", &r.to_string()])
                .args(["--bind", &lo(p[r]).to_string()])
                .args(&inputs[r])
                .args(extra)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect()
}

fn switch_for(p: &[u16], listen: &str) -> Switchd {
    let mut args = vec![
        "--listen".to_string(),
        listen.into(),
        "--job".into(),
        "7".into(),
    ];
    for port in p {
        args.push("--worker".into());
        args.push(lo(*port).to_string());
    }
    let a: Vec<&str> = args.iter().map(String::as_str).collect();
    Switchd::start(&a)
}

/// Waits until switch `sw` has summed at least `n` contributions (the allreduce is under way).
fn wait_aggregated(sw: &Switchd, n: u64) {
    let t = Instant::now();
    while counter(&sw.stats(), "aggregated") < n {
        assert!(
            t.elapsed() < Duration::from_secs(20),
            "the allreduce never got going"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Synthetic inputs `--synthetic n --seed s` for each seed, with an output file each.
fn synthetic(dir: &Path, n: usize, seeds: &[u64]) -> (Vec<Vec<String>>, Vec<PathBuf>) {
    let outs: Vec<PathBuf> = seeds
        .iter()
        .map(|s| dir.join(format!("out{s}.npy")))
        .collect();
    let args = seeds
        .iter()
        .zip(&outs)
        .map(|(s, o)| {
            vec![
                "--synthetic".into(),
                n.to_string(),
                "--seed".into(),
                s.to_string(),
                "--out".into(),
                o.display().to_string(),
            ]
        })
        .collect();
    (args, outs)
}

/// Integer-valued tensors (exact under --scale 0): files, the exact sum, the output files.
fn int_inputs(dir: &Path, n: usize, workers: usize, seed: u64) -> (Vec<Vec<String>>, Vec<i64>) {
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut sum = vec![0i64; n];
    let args = (0..workers)
        .map(|r| {
            let v: Vec<f32> = (0..n).map(|_| rng.gen_range(-1000..1000) as f32).collect();
            for (s, x) in sum.iter_mut().zip(&v) {
                *s += *x as i64;
            }
            let f = dir.join(format!("in{seed}_{r}.f32"));
            write_raw(&f, &v);
            vec![
                "--input".into(),
                f.display().to_string(),
                "--scale".into(),
                "0".into(),
                "--out".into(),
                dir.join(format!("out{seed}_{r}.f32")).display().to_string(),
            ]
        })
        .collect();
    (args, sum)
}

fn check_int_outputs(dir: &Path, workers: usize, seed: u64, sum: &[i64]) {
    for r in 0..workers {
        let got = fanin::tensor::read(&dir.join(format!("out{seed}_{r}.f32"))).unwrap();
        let got: Vec<i64> = got.iter().map(|x| *x as i64).collect();
        assert_eq!(got, sum, "rank {r}: exact int32 sums");
    }
}

/// The reproduction of the stale-result bug: two allreduces of one job on a live switch with
/// the same command lines but other seeds. Run 2 must return its own sum.
#[test]
fn second_allreduce_on_a_live_switch_gets_its_own_sum() {
    let dir = tmpdir("trust-rerun");
    let p = free_ports(2);
    let sw = switch_for(&p, "127.0.0.1:0");
    let n = 1000;
    let mut sums = Vec::new();
    for seeds in [[10, 11], [70, 71]] {
        let (inputs, outs) = synthetic(&dir, n, &seeds);
        let reps: Vec<_> = spawn_workers(sw.addr, &p, &inputs, &["--timeout", "15"])
            .into_iter()
            .map(|k| send_report(&wait_output(k, 30, "send")))
            .collect();
        let e = reps[0]["exponent"].as_i64().unwrap() as i8;
        let parts: Vec<Vec<f32>> = seeds
            .iter()
            .map(|s| fanin::tensor::synthetic(n, *s))
            .collect();
        let got = fanin::tensor::read(&outs[0]).unwrap();
        assert_sum(&parts, &got, e);
        assert_eq!(got, fanin::tensor::read(&outs[1]).unwrap());
        sums.push(got);
    }
    assert_ne!(sums[0], sums[1], "run 2 got run 1's sum");
    let s = sw.stats();
    assert_eq!(counter(&s, "sessions"), 2);
    assert_eq!(counter(&s, "slots_in_use"), 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Sends `count` hostile datagrams to `sw` from an unconfigured address: random bytes, and
/// well-formed packets of every type for job 7 claiming random ranks and child indices.
fn stray(sw: SocketAddrV4, count: u64, seed: u64, stop: &AtomicBool) -> u64 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let mut sent = 0;
    while sent < count && !stop.load(Ordering::Relaxed) {
        let d = if rng.gen_bool(0.3) {
            forge::junk(&mut rng, 300)
        } else {
            forge::forged_payload(
                &mut rng,
                &forge::Target {
                    job: 7,
                    ranks: 4,
                    elements: 64,
                    first_block: 0,
                    other_jobs: 0.1,
                    session_types: true,
                },
            )
        };
        if s.send_to(&d, sw).is_ok() {
            sent += 1;
        }
        if sent % 256 == 0 {
            // Leave the switch's socket buffer room for the workers' datagrams.
            std::thread::sleep(Duration::from_micros(200));
        }
    }
    sent
}

/// The reproduction of the wedge: a burst of 200,000 stray datagrams, then a legitimate
/// allreduce completes exactly and nothing stays busy.
#[test]
fn stray_burst_does_not_wedge_the_switch() {
    let dir = tmpdir("trust-burst");
    let p = free_ports(2);
    let sw = switch_for(&p, "127.0.0.1:0");
    let never = AtomicBool::new(false);
    let sent = stray(sw.addr, 200_000, 0x5eed, &never);
    assert_eq!(sent, 200_000);
    let s = sw.stats();
    assert_eq!(
        counter(&s, "slots_in_use"),
        0,
        "stray traffic holds no copy"
    );
    assert_eq!(
        counter(&s, "aggregated"),
        0,
        "stray traffic is never summed"
    );
    assert!(counter(&s, "bad_source") > 0 && counter(&s, "malformed") > 0);
    let (inputs, sum) = int_inputs(&dir, 5000, 2, 1);
    for k in spawn_workers(sw.addr, &p, &inputs, &["--timeout", "15"]) {
        send_report(&wait_output(k, 30, "send"));
    }
    check_int_outputs(&dir, 2, 1, &sum);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Campaign (b): a 4-worker int32 allreduce is exact while another process sends at least
/// 100,000 random or forged datagrams at the switch (FANIN_SOAK_DATAGRAMS raises it).
#[test]
fn allreduce_is_exact_under_a_stray_storm() {
    let count: u64 = std::env::var("FANIN_SOAK_DATAGRAMS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(100_000);
    let dir = tmpdir("trust-storm");
    let p = free_ports(4);
    let sw = switch_for(&p, "127.0.0.1:0");
    let stop = Arc::new(AtomicBool::new(false));
    let (addr, st) = (sw.addr, stop.clone());
    let storm = std::thread::spawn(move || stray(addr, count, 0xbad, &st));
    let (inputs, sum) = int_inputs(&dir, 200_000, 4, 2);
    let kids = spawn_workers(sw.addr, &p, &inputs, &["--timeout", "30"]);
    for k in kids {
        send_report(&wait_output(k, 60, "send"));
    }
    // The storm runs to its count (the allreduce may finish first).
    let sent = storm.join().unwrap();
    assert_eq!(sent, count);
    check_int_outputs(&dir, 4, 2, &sum);
    let s = sw.stats();
    assert_eq!(counter(&s, "slots_in_use"), 0);
    assert!(counter(&s, "bad_source") > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A worker killed mid-allreduce: the others fail with a clear error within their timeout,
/// and the next allreduce of the job on the same switch succeeds exactly.
#[test]
fn killed_worker_fails_the_others_clearly_then_the_job_recovers() {
    let dir = tmpdir("trust-kill");
    let p = free_ports(3);
    let sw = switch_for(&p, "127.0.0.1:0");
    let (inputs, _) = int_inputs(&dir, 4_000_000, 3, 3);
    // Window 1: slow enough to be killed mid-way.
    let mut kids = spawn_workers(sw.addr, &p, &inputs, &["--timeout", "2", "--window", "1"]);
    wait_aggregated(&sw, 3000);
    let mut victim = kids.pop().unwrap();
    victim.kill().unwrap();
    let _ = victim.wait();
    let t = Instant::now();
    for k in kids {
        let o = wait_output(k, 20, "send");
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(1), "{err}");
        assert_eq!(err.lines().count(), 1, "one line: {err}");
        assert!(err.starts_with("error: timed out after"), "{err}");
    }
    assert!(
        t.elapsed() < Duration::from_secs(10),
        "failed within the timeout"
    );
    let (inputs, sum) = int_inputs(&dir, 20_000, 3, 4);
    for k in spawn_workers(sw.addr, &p, &inputs, &["--timeout", "15"]) {
        send_report(&wait_output(k, 30, "send"));
    }
    check_int_outputs(&dir, 3, 4, &sum);
    let _ = std::fs::remove_dir_all(&dir);
}

/// switchd killed and restarted mid-allreduce: every worker either completes with the exact
/// sum or fails with a clear error, never with a wrong sum.
#[test]
fn switchd_restart_mid_allreduce_never_gives_a_wrong_sum() {
    let dir = tmpdir("trust-restart");
    let p = free_ports(2);
    let sw = switch_for(&p, "127.0.0.1:0");
    let listen = sw.addr.to_string();
    let (inputs, sum) = int_inputs(&dir, 4_000_000, 2, 5);
    let kids = spawn_workers(sw.addr, &p, &inputs, &["--timeout", "3", "--window", "1"]);
    wait_aggregated(&sw, 2000);
    drop(sw);
    let sw2 = switch_for(&p, &listen);
    let mut failed = 0;
    for (r, k) in kids.into_iter().enumerate() {
        let o = wait_output(k, 30, "send");
        let (_, err) = text(&o);
        if o.status.success() {
            let got = fanin::tensor::read(&dir.join(format!("out5_{r}.f32"))).unwrap();
            let got: Vec<i64> = got.iter().map(|x| *x as i64).collect();
            assert_eq!(got, sum, "rank {r} finished: exact");
        } else {
            failed += 1;
            assert_eq!(err.lines().count(), 1, "one line: {err}");
            assert!(
                err.contains("no open session") || err.contains("timed out"),
                "{err}"
            );
        }
    }
    assert_eq!(
        failed, 2,
        "a restarted root has lost the session: both are told"
    );
    assert!(counter(&sw2.stats(), "refused") > 0);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Control requests: a job reset frees its copies and closes its session, a reload applies a
/// changed file, and a broken file or an unknown job is refused with nothing changed.
#[test]
fn reset_and_reload_through_the_control_port() {
    let dir = tmpdir("trust-ctl");
    let p = free_ports(3);
    let me = lo(p[2]);
    let job = fanin::switchd::SingleJob {
        job: 7,
        workers: vec![lo(p[0]), lo(p[1])],
        elements: 64,
        slots: 16,
    };
    let mut cfg = fanin::switchd::single_job_config(me, &job);
    let file = dir.join("switch.json");
    std::fs::write(&file, serde_json::to_string(&cfg).unwrap()).unwrap();
    let sw = Switchd::start(&["--config", file.to_str().unwrap()]);
    let ctl = |args: &[&str]| run(fanin().args(args).arg(sw.addr.to_string()), 10);

    // Half an allreduce: rank 0 alone joins; its JOIN is pending, then the reset drops it.
    let (inputs, sum) = int_inputs(&dir, 3000, 2, 6);
    for mut c in spawn_workers(sw.addr, &p[..1], &inputs[..1], &["--timeout", "5"]) {
        std::thread::sleep(Duration::from_millis(300));
        c.kill().unwrap();
        let _ = c.wait();
    }
    assert!(counter(&sw.stats(), "joins") >= 1);
    let o = ctl(&["reset", "--job", "7"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("job 7 reset"), "{out}");
    let o = ctl(&["reset", "--job", "99"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.starts_with("error: switchd") && err.contains("no job 99"),
        "{err}"
    );

    // A changed file: the job is loaded afresh.
    cfg.jobs[0].quota = 8;
    std::fs::write(&file, serde_json::to_string(&cfg).unwrap()).unwrap();
    let o = ctl(&["reload"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("job 7 loaded"), "{out}");
    // A broken file: refused, nothing changes.
    std::fs::write(&file, "{ not json").unwrap();
    let o = ctl(&["reload"]);
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("reload refused, nothing changed"), "{err}");
    // A file changing the switch's address: refused.
    let mut moved = cfg.clone();
    moved.udp_port += 1;
    std::fs::write(&file, serde_json::to_string(&moved).unwrap()).unwrap();
    let (_, err) = text(&ctl(&["reload"]));
    assert!(err.contains("restart switchd"), "{err}");

    // The job still works.
    for k in spawn_workers(sw.addr, &p[..2], &inputs, &["--timeout", "15"]) {
        send_report(&wait_output(k, 30, "send"));
    }
    check_int_outputs(&dir, 2, 6, &sum);
    let _ = std::fs::remove_dir_all(&dir);
}
