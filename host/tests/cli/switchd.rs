//! `fanin switchd`: stats, clean shutdown, chained trees, malformed input.

use std::net::UdpSocket;

use fanin_proto::config::Mode;
use fanin_proto::plan::{build, Addressing, JobSpec, NodeKind, NodeSpec};
use rand::{Rng, SeedableRng};

use super::*;

fn sender(sw: SocketAddrV4, bind: u16, rank: u8, workers: u8, input: &[&str]) -> Command {
    let mut c = fanin();
    c.args(["send", "--json", "--timeout", "10", "--switch"])
        .arg(sw.to_string())
        .args([
            "--workers",
            &workers.to_string(),
            "--rank",
            &rank.to_string(),
        ])
        .args(["--bind", &lo(bind).to_string()])
        .args(input);
    c
}

/// Runs the `send` commands side by side; their JSON reports, in order.
fn reports_of(cmds: impl IntoIterator<Item = Command>, secs: u64) -> Vec<serde_json::Value> {
    let kids: Vec<_> = cmds
        .into_iter()
        .map(|mut c| {
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    kids.into_iter()
        .map(|k| send_report(&wait_output(k, secs, "send")))
        .collect()
}

#[test]
fn stats_served_and_final_counters_on_sigint() {
    let p = free_ports(2);
    let sw = Switchd::start(&[
        "--listen",
        "127.0.0.1:0",
        "--worker",
        &lo(p[0]).to_string(),
        "--worker",
        &lo(p[1]).to_string(),
    ]);
    let reps = reports_of(
        (0..2).map(|r| sender(sw.addr, p[r], r as u8, 2, &["--synthetic", "5000"])),
        20,
    );
    let packets: u64 = reps.iter().map(|r| r["packets"].as_u64().unwrap()).sum();
    let s = sw.stats();
    assert_eq!(counter(&s, "aggregated"), packets);
    assert_eq!(counter(&s, "completions"), packets / 2);
    assert_eq!(counter(&s, "malformed"), 0);
    let (status, rest) = sw.interrupt();
    assert!(status.success(), "{status:?}");
    assert!(rest.contains("final counters"), "{rest}");
    assert!(
        rest.contains(&format!("aggregated         {packets}")),
        "{rest}"
    );
}

/// A switchd listening on every address (0.0.0.0) answers each worker from the address the
/// worker wrote to: here 127.0.0.2, where the kernel's route would answer from 127.0.0.1 and
/// the workers would drop the results as a stranger's.
#[test]
fn switchd_on_every_address_answers_from_the_one_written_to() {
    let p = free_ports(2);
    let sw = Switchd::start(&[
        "--listen",
        "0.0.0.0:0",
        "--worker",
        &lo(p[0]).to_string(),
        "--worker",
        &lo(p[1]).to_string(),
    ]);
    let at = SocketAddrV4::new(std::net::Ipv4Addr::new(127, 0, 0, 2), sw.addr.port());
    let dir = tmpdir("any-address");
    let data: Vec<Vec<f32>> = (0..2)
        .map(|r| fanin::tensor::synthetic(3000, 20 + r))
        .collect();
    let reps = reports_of(
        (0..2).map(|r| {
            let inp = dir.join(format!("in{r}.f32"));
            write_raw(&inp, &data[r]);
            let out = dir.join(format!("out{r}.npy"));
            let mut c = sender(at, p[r], r as u8, 2, &[]);
            c.args(["--input", inp.to_str().unwrap()])
                .args(["--out", out.to_str().unwrap()]);
            c
        }),
        20,
    );
    let e = reps[0]["exponent"].as_i64().unwrap() as i8;
    for r in 0..2 {
        let got = fanin::tensor::read(&dir.join(format!("out{r}.npy"))).unwrap();
        assert_sum(&data, &got, e);
    }
    assert_eq!(
        counter(&sw.stats(), "completions"),
        reps[0]["packets"].as_u64().unwrap()
    );
    let (status, _) = sw.interrupt();
    assert!(status.success(), "{status:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Two switchd processes chained into a tree (root with a worker and an inner switch with
/// two workers), configured from the files `plan::build` produces.
#[test]
fn chained_two_switchd_tree() {
    let sw = |name: &str, parent| NodeSpec {
        name: name.into(),
        parent,
        kind: NodeKind::Switch {
            aggregate: true,
            degree_limit: None,
        },
    };
    let wk = |name: &str, parent| NodeSpec {
        name: name.into(),
        parent: Some(parent),
        kind: NodeKind::Worker,
    };
    let nodes = vec![
        sw("root", None),
        sw("leaf", Some(0)),
        wk("w0", 1),
        wk("w1", 1),
        wk("w2", 0),
    ];
    let (base, socks) = fanin::allreduce::bind_consecutive(nodes.len()).unwrap();
    drop(socks);
    let plan = build(
        &nodes,
        JobSpec {
            job: 7,
            slot_count: 32,
            elements: 32,
            mode: Mode::Static,
            addressing: Addressing::Loopback { base },
            trust: fanin_proto::config::Trust::default(),
        },
    )
    .unwrap();
    let dir = tmpdir("tree");
    let mut switches = Vec::new();
    for cfg in &plan.switches {
        let f = dir.join(format!("{}.json", cfg.name));
        std::fs::write(&f, serde_json::to_string_pretty(cfg).unwrap()).unwrap();
        switches.push(Switchd::start(&["--config", f.to_str().unwrap()]));
    }
    let n = 3000;
    let data: Vec<Vec<f32>> = (0..3)
        .map(|r| fanin::tensor::synthetic(n, 10 + r))
        .collect();
    // The list format `fanin place` writes, picked by --rank.
    let f = dir.join("workers.json");
    std::fs::write(&f, serde_json::to_string_pretty(&plan.workers).unwrap()).unwrap();
    let reps = reports_of(
        plan.workers.iter().map(|a| {
            let inp = dir.join(format!("in{}.f32", a.rank));
            write_raw(&inp, &data[a.rank as usize]);
            let mut c = fanin();
            c.args(["send", "--json", "--timeout", "10", "--window", "16"])
                .args([
                    "--assignment",
                    f.to_str().unwrap(),
                    "--rank",
                    &a.rank.to_string(),
                ])
                .args(["--input", inp.to_str().unwrap()])
                .args([
                    "--out",
                    dir.join(format!("out{}.npy", a.rank)).to_str().unwrap(),
                ]);
            c
        }),
        30,
    );
    let e = reps[0]["exponent"].as_i64().unwrap() as i8;
    let first = fanin::tensor::read(&dir.join("out0.npy")).unwrap();
    assert_sum(&data, &first, e);
    for r in 1..3 {
        assert_eq!(
            fanin::tensor::read(&dir.join(format!("out{r}.npy"))).unwrap(),
            first
        );
    }
    // The leaf aggregated its two workers and sent one aggregate up per block.
    let blocks = reps[0]["packets"].as_u64().unwrap();
    let leaf = switches[1].stats();
    assert_eq!(leaf["name"], "leaf");
    assert_eq!(counter(&leaf, "completions"), blocks);
    let root = switches[0].stats();
    assert_eq!(counter(&root, "completions"), blocks);
    assert_eq!(counter(&root, "aggregated"), 2 * blocks);
    let _ = std::fs::remove_dir_all(&dir);
}

/// Random datagrams (seeded) are counted as malformed or unknown-job, never crash the
/// switch, and a real allreduce still works afterwards.
#[test]
fn random_bytes_are_counted_and_never_crash() {
    let p = free_ports(2);
    let sw = Switchd::start(&[
        "--listen",
        "127.0.0.1:0",
        "--worker",
        &lo(p[0]).to_string(),
        "--worker",
        &lo(p[1]).to_string(),
    ]);
    let seed = 0x5eed;
    let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    let n = 3000u64;
    for i in 0..n {
        let len = rng.gen_range(0..1100);
        let mut b: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        if i % 3 == 0 && len >= 22 {
            b[0] = 1; // right version: the deeper checks run
            b[1] = rng.gen_range(1..=2);
        }
        s.send_to(&b, sw.addr).unwrap();
        if i % 256 == 0 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    // Wait until the switch has seen them all.
    let t = Instant::now();
    let stats = loop {
        let st = sw.stats();
        let rx: u64 = st["ports"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["rx_packets"].as_u64().unwrap())
            .sum();
        if rx >= n || t.elapsed() > Duration::from_secs(10) {
            assert_eq!(rx, n, "seed {seed:#x}: all datagrams reached the model");
            break st;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(
        counter(&stats, "malformed") + counter(&stats, "unknown_job"),
        n,
        "seed {seed:#x}"
    );
    assert_eq!(counter(&stats, "aggregated"), 0, "seed {seed:#x}");
    let kids: Vec<_> = (0..2)
        .map(|r| {
            sender(sw.addr, p[r], r as u8, 2, &["--synthetic", "1000"])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        send_report(&wait_output(k, 20, "send"));
    }
    let (status, _) = sw.interrupt();
    assert!(status.success());
}
