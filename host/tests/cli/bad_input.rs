//! Bad input: one clear `error:` line and a non-zero exit, never a hang.

use fanin_proto::wire::{Flags, PacketType, Repr};

use super::*;

/// Asserts exit status `code` and a single `error:` line containing every one of `needles`.
fn assert_error(o: &Output, code: i32, needles: &[&str]) {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(code), "stdout: {out}\nstderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} not in {err}");
    }
}

fn send_to(sw: SocketAddrV4, extra: &[&str]) -> Output {
    let bind = lo(free_ports(1)[0]).to_string();
    run(
        fanin()
            .args([
                "send",
                "--json",
                "--workers",
                "1",
                "--switch",
                &sw.to_string(),
            ])
            .args(["--bind", &bind])
            .args(extra),
        30,
    )
}

#[test]
fn missing_tensor_file() {
    let o = send_to(lo(9), &["--input", "/nonexistent/g.f32"]);
    assert_error(&o, 2, &["/nonexistent/g.f32", "No such file"]);
}

#[test]
fn short_raw_tensor_file() {
    let d = tmpdir("short");
    let f = d.join("g.f32");
    std::fs::write(&f, [0u8; 10]).unwrap();
    let o = send_to(lo(9), &["--input", f.to_str().unwrap()]);
    assert_error(&o, 2, &["10 bytes", "not a whole number"]);
    std::fs::write(&f, [0u8; 16]).unwrap();
    let o = send_to(lo(9), &["--input", f.to_str().unwrap(), "--elements", "8"]);
    assert_error(&o, 2, &["has 4 elements", "--elements says 8"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn truncated_npy_file() {
    let d = tmpdir("npy");
    let f = d.join("g.npy");
    fanin::tensor::write(&f, &[1.0; 100]).unwrap();
    let bytes = std::fs::read(&f).unwrap();
    std::fs::write(&f, &bytes[..bytes.len() - 10]).unwrap();
    let o = send_to(lo(9), &["--input", f.to_str().unwrap()]);
    assert_error(&o, 2, &["g.npy", "truncated"]);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn unreachable_switch() {
    // A port nobody listens on: nothing ever answers.
    let dead = lo(free_ports(1)[0]);
    let t = Instant::now();
    let o = send_to(dead, &["--synthetic", "100", "--timeout", "1"]);
    assert_error(
        &o,
        1,
        &[
            "no ACCEPT from the switch",
            &dead.to_string(),
            "all 1 workers of the job have joined",
            "last saw nothing at all",
        ],
    );
    assert!(t.elapsed() < Duration::from_secs(10));
}

#[test]
fn mismatched_element_counts_between_workers() {
    let p = free_ports(2);
    let sw = Switchd::start(&[
        "--listen",
        "127.0.0.1:0",
        "--worker",
        &lo(p[0]).to_string(),
        "--worker",
        &lo(p[1]).to_string(),
    ]);
    let kids: Vec<_> = [(0, "1000"), (1, "1500")]
        .iter()
        .map(|(r, n)| {
            fanin()
                .args([
                    "send",
                    "--timeout",
                    "10",
                    "--workers",
                    "2",
                    "--rank",
                    &r.to_string(),
                ])
                .args([
                    "--switch",
                    &sw.addr.to_string(),
                    "--bind",
                    &lo(p[*r]).to_string(),
                ])
                .args(["--synthetic", n])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for (k, mine) in kids.into_iter().zip(["1000", "1500"]) {
        let o = wait_output(k, 30, "send");
        assert_error(
            &o,
            2,
            &[
                "disagree on the tensor length",
                &format!("has {mine} elements"),
                "1250.0",
            ],
        );
    }
}

/// A worker whose switch stops answering times out and says what it last saw.
#[test]
fn stalled_worker_says_what_it_last_saw() {
    let fake = UdpSocket::bind("127.0.0.1:0").unwrap();
    fake.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let addr = fake.local_addr().unwrap().to_string();
    let bind = lo(free_ports(1)[0]).to_string();
    let child = fanin()
        .args(["send", "--workers", "1", "--switch", &addr, "--bind", &bind])
        .args([
            "--synthetic",
            "100",
            "--timeout",
            "1",
            "--retransmit-ms",
            "200",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Accept the JOIN (session at block 0), answer the first preamble block only (a result
    // of all 1 workers), then go quiet.
    let mut buf = [0u8; 2048];
    let (n, from) = fake.recv_from(&mut buf).unwrap();
    let p = fanin_proto::wire::Packet::new_checked(&buf[..n]).unwrap();
    let join = Repr::parse(&p).unwrap();
    assert_eq!(join.ptype, PacketType::Join);
    let accept = Repr {
        ptype: PacketType::Accept,
        elements: 1,
        block: 0,
        ..join
    };
    fake.send_to(&accept.to_bytes(&[join.block as i32]), from)
        .unwrap();
    let (n, from) = loop {
        let (n, from) = fake.recv_from(&mut buf).unwrap();
        let p = fanin_proto::wire::Packet::new_checked(&buf[..n]).unwrap();
        if Repr::parse(&p).unwrap().ptype == PacketType::Contribution {
            break (n, from);
        }
    };
    let p = fanin_proto::wire::Packet::new_checked(&buf[..n]).unwrap();
    let r = Repr {
        ptype: PacketType::Result,
        flags: Flags(Flags::MULTICAST),
        ..Repr::parse(&p).unwrap()
    };
    assert_eq!(r.block, 0);
    fake.send_to(&r.to_bytes(&p.elements()), from).unwrap();
    let o = wait_output(child, 20, "send");
    assert_error(
        &o,
        1,
        &[
            "timed out",
            "waiting for block 1",
            "1 of 2 blocks of the preamble",
            "last saw a result for job 1 block 0",
        ],
    );
}

#[test]
fn usage_errors_exit_2() {
    let o = send_to(lo(9), &["--synthetic", "10", "--window", "0"]);
    assert_error(&o, 2, &["--window 0"]);
    let o = run(
        fanin().args(["allreduce", "--workers", "0", "--elements", "5"]),
        10,
    );
    assert_error(&o, 2, &["--workers"]);
    let o = run(
        fanin().args([
            "allreduce",
            "--workers",
            "2",
            "--elements",
            "5",
            "--loss",
            "2",
        ]),
        10,
    );
    assert_eq!(o.status.code(), Some(2));
    let (_, err) = text(&o);
    assert!(
        err.contains("--loss") && err.contains("2 is not a probability"),
        "{err}"
    );
    for (flag, v) in [
        ("--dup", "NaN"),
        ("--reorder", "-0.5"),
        ("--loss", "x"),
        ("--reorder-hold", "0"),
    ] {
        let o = run(
            fanin().args([
                "switchd",
                "--job",
                "1",
                "--worker",
                "127.0.0.1:9",
                &format!("{flag}={v}"),
            ]),
            10,
        );
        assert_eq!(o.status.code(), Some(2), "{flag} {v}");
        let (_, err) = text(&o);
        assert!(err.contains(flag) && err.contains(v), "{flag} {v}: {err}");
        assert!(
            err.contains("not a") || err.contains("not in 1.."),
            "{flag} {v}: {err}"
        );
    }
    let d = tmpdir("badcfg");
    let f = d.join("sw.json");
    std::fs::write(&f, "{\"name\": 3}").unwrap();
    let o = run(
        fanin().args(["switchd", "--config", f.to_str().unwrap()]),
        10,
    );
    assert_error(&o, 2, &["switch configuration", "sw.json", "not valid"]);
    let o = run(fanin().args(["switchd", "--listen", "127.0.0.1:0"]), 10);
    assert_error(&o, 2, &["--config FILE", "--worker ADDR"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Static jobs stop at 64 ranks (header version 1's bitmap): every tool that runs one says
/// so and names dynamic mode, the way to 512.
#[test]
fn static_jobs_beyond_64_ranks_are_refused_naming_dynamic_mode() {
    let cap = "static jobs hold at most 64 ranks (header version 1's bitmap)";
    let send = |workers: &str, rank: &str| {
        run(
            fanin().args([
                "send",
                "--synthetic",
                "10",
                "--workers",
                workers,
                "--rank",
                rank,
                "--switch",
                "127.0.0.1:9",
                "--bind",
                "127.0.0.1:0",
            ]),
            10,
        )
    };
    assert_error(
        &send("65", "0"),
        2,
        &["--workers 65", cap, "fanin send --dynamic", "512"],
    );
    assert_error(&send("300", "299"), 2, &["--workers 300", cap]);
    // The same from an assignment file (it once reached the JOIN and overflowed its bitmap).
    let d = tmpdir("wide-assignment");
    let f = d.join("a.json");
    let ep = |port: u16| serde_json::json!({"mac": [2, 0, 127, 0, 0, 1], "ip": "127.0.0.1", "udp_port": port});
    let a = serde_json::json!({
        "job": 1, "rank": 70, "workers": 100, "child": 0, "me": ep(9), "parent": ep(10),
        "window_limit": 8, "elements": 16, "session": true
    });
    std::fs::write(&f, a.to_string()).unwrap();
    let o = run(
        fanin()
            .args(["send", "--synthetic", "10", "--window", "8", "--assignment"])
            .arg(&f),
        10,
    );
    assert_error(&o, 2, &["bad assignment", cap, "fanin send --dynamic"]);
    let _ = std::fs::remove_dir_all(&d);
    let o = run(
        fanin().args(["allreduce", "--workers", "65", "--elements", "5"]),
        10,
    );
    assert_error(&o, 2, &["--workers 65", "fanin allreduce's local job", cap]);
    let mut args = vec!["switchd".to_string(), "--job".into(), "1".into()];
    for p in 0..65 {
        args.push("--worker".into());
        args.push(format!("127.0.0.1:{}", 20000 + p));
    }
    let o = run(fanin().args(&args), 10);
    assert_error(&o, 2, &["65 --worker addresses", cap, "--mode dynamic"]);
}
