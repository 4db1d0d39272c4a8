//! `fanin kv`: the local allreduce checks every key's sum under loss; send and recv through
//! a `fanin switchd` loaded with a key-value job; bad tuple files and flags.

use std::collections::BTreeMap;

use super::*;

fn assert_one_error(o: &Output, needles: &[&str]) {
    let (out, err) = text(o);
    assert_eq!(o.status.code(), Some(2), "stdout: {out}\nstderr: {err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "exactly one line: {err}");
    assert!(lines[0].starts_with("error: "), "{err}");
    for n in needles {
        assert!(lines[0].contains(n), "{n:?} not in {err}");
    }
}

#[test]
fn allreduce_is_exact_for_every_distribution_at_5_percent_loss() {
    for dist in ["uniform", "zipf", "zipf-reverse"] {
        let o = run(
            fanin().args([
                "kv",
                "allreduce",
                "--senders",
                "3",
                "--keys",
                "1500",
                "--dist",
                dist,
                "--tuples",
                "6000",
                "--size",
                "128",
                "--swap-after",
                "8",
                "--loss",
                "0.05",
                "--verify",
            ]),
            120,
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "{dist}: {out}\n{err}");
        assert!(
            out.contains("verified: every key's sum is exact"),
            "{dist}: {out}"
        );
        assert!(!out.contains(" 0 swaps"), "{dist}: swaps expected: {out}");
    }
}

#[test]
fn send_and_recv_through_switchd() {
    let dir = tmpdir("kv-send-recv");
    let p = free_ports(2);
    let rx = lo(p[0]);
    let cfg = serde_json::json!({
        "name": "kv",
        "mac": [2, 0, 0, 0, 0, 1],
        "ip": "127.0.0.1",
        "udp_port": p[1],
        "kv_jobs": [{
            "job": 5, "arrays": 4, "size": 16, "channels": 3, "window": 8,
            "receiver": {"mac": [2, 0, 0, 0, 0, 2], "ip": "127.0.0.1", "udp_port": p[0]}
        }]
    });
    let cfg_path = dir.join("switch.json");
    std::fs::write(&cfg_path, cfg.to_string()).unwrap();
    let sw = Switchd::start(&["--config", cfg_path.to_str().unwrap()]);
    // Two inputs: 200 keys (more than the 64 aggregators per copy: collisions and swaps).
    let mut want: BTreeMap<u32, i64> = BTreeMap::new();
    let mut files = Vec::new();
    for s in 0..2u32 {
        let mut text = String::from("# key value\n\n");
        for i in 0..1500u32 {
            let k = 3_000_000_000 + (i * 7 + s) % 200 * 1000;
            let v = (i as i32 % 13) - 6;
            text += &format!("{k} {v}\n");
            *want.entry(k).or_default() += v as i64;
        }
        let f = dir.join(format!("in{s}.txt"));
        std::fs::write(&f, text).unwrap();
        files.push(f);
    }
    let out = dir.join("out.txt");
    let recv = fanin()
        .args([
            "kv",
            "recv",
            "--switch",
            &sw.addr.to_string(),
            "--bind",
            &rx.to_string(),
            "--job",
            "5",
            "--arrays",
            "4",
            "--size",
            "16",
            "--window",
            "8",
            "--channels",
            "3",
            "--swap-after",
            "4",
            "--out",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(200));
    let sends: Vec<_> = [("0", "2", &files[0]), ("2", "1", &files[1])]
        .into_iter()
        .map(|(first, n, f)| {
            fanin()
                .args([
                    "kv",
                    "send",
                    "--switch",
                    &sw.addr.to_string(),
                    "--input",
                    f.to_str().unwrap(),
                    "--job",
                    "5",
                    "--arrays",
                    "4",
                    "--window",
                    "8",
                    "--first-channel",
                    first,
                    "--channels",
                    n,
                ])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for s in sends {
        let o = wait_output(s, 60, "kv send");
        assert!(o.status.success(), "{:?}", text(&o));
    }
    let o = wait_output(recv, 60, "kv recv");
    assert!(o.status.success(), "{:?}", text(&o));
    let got = std::fs::read_to_string(&out).unwrap();
    let want_text: String = want.iter().map(|(k, v)| format!("{k} {v}\n")).collect();
    assert_eq!(got, want_text);
    let (stdout, _) = text(&o);
    assert!(stdout.contains("200 keys written"), "{stdout}");
    // The switch's key-value counters are in `fanin stats`.
    let st = sw.stats();
    let counters = st["counters"].as_array().unwrap();
    let get = |name: &str| {
        counters
            .iter()
            .find(|c| c[0] == name)
            .and_then(|c| c[1].as_u64())
            .unwrap_or_else(|| panic!("{name} missing from {st}"))
    };
    assert!(
        get("kv_acked") > 0 && get("kv_forwarded") > 0 && get("kv_swaps") > 0,
        "{st}"
    );
    assert_eq!(get("kv_malformed"), 0, "{st}");
}

#[test]
fn bad_tuple_files_and_flags_get_one_line() {
    let dir = tmpdir("kv-bad");
    let sw = lo(free_ports(1)[0]).to_string();
    let send = |content: &str| {
        let f = dir.join("in.txt");
        std::fs::write(&f, content).unwrap();
        run(
            fanin().args([
                "kv",
                "send",
                "--switch",
                &sw,
                "--input",
                f.to_str().unwrap(),
            ]),
            20,
        )
    };
    assert_one_error(
        &send("1 2\n5000000000 1\n"),
        &["in.txt:2", "does not fit in 32 bits"],
    );
    assert_one_error(&send("1 2\n3 x\n"), &["in.txt:2", "value `x`"]);
    assert_one_error(&send("1 2 3\n"), &["in.txt:1", "expected `key value`"]);
    assert_one_error(&send("-1 2\n"), &["in.txt:1", "key `-1`"]);
    assert_one_error(&send("1 2147483648\n"), &["value `2147483648`"]);
    let o = run(
        fanin().args([
            "kv",
            "send",
            "--switch",
            &sw,
            "--input",
            "/nonexistent/x.txt",
        ]),
        20,
    );
    assert_one_error(&o, &["cannot read /nonexistent/x.txt"]);
    let o = run(fanin().args(["kv", "allreduce", "--size", "1000"]), 20);
    assert_one_error(&o, &["--size 1000", "power of two"]);
    let o = run(
        fanin().args([
            "kv",
            "allreduce",
            "--senders",
            "64",
            "--channels-per-sender",
            "8",
        ]),
        20,
    );
    assert_one_error(&o, &["exceed the 256 data channels"]);
}

/// The Wireshark dissector decodes every key-value packet type (on the fanin port and, by
/// its heuristic, on another port).
#[test]
fn tshark_decodes_key_value_packets() {
    use fanin_proto::kv::wire::{KvRepr, KvType};
    use fanin_proto::wire::{Datagram, L4Addr};
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let dir = tmpdir("kv-wireshark");
    let pcap = dir.join("kv.pcap");
    let mut packets = Vec::new();
    for t in 8..=13u8 {
        let kt = KvType::from_u8(t).unwrap();
        let mut r = KvRepr::control(kt, 7, 2, 1000 + t as u32);
        match kt {
            KvType::Data => {
                r.aux = 0b101;
                r.tuples = vec![(3_000_000_000, -5), (0, 0), (42, 9)];
            }
            KvType::Fetch => {
                r.reply = true;
                r.copy = 1;
                r.aux = 64;
                r.tuples = vec![(11, 22)];
            }
            _ => {}
        }
        packets.push(r);
    }
    let mut w = PcapWriter::with_header(
        std::fs::File::create(&pcap).unwrap(),
        PcapHeader {
            datalink: pcap_file::DataLink::ETHERNET,
            ..PcapHeader::default()
        },
    )
    .unwrap();
    for (i, r) in packets.iter().enumerate() {
        let port = if i % 2 == 0 {
            fanin_proto::wire::FANIN_UDP_PORT
        } else {
            40000
        };
        let a = |ip: [u8; 4], port| L4Addr {
            mac: [2, 0, 0, 0, 0, ip[3]],
            ip: ip.into(),
            port,
        };
        let frame = Datagram {
            src: a([10, 0, 0, 2], 5000),
            dst: a([10, 0, 0, 1], port),
            payload: &r.to_bytes(),
        }
        .to_frame(true);
        let ts = Duration::from_secs(1 + i as u64);
        w.write_packet(&PcapPacket::new(ts, frame.len() as u32, &frame[..]).unwrap())
            .unwrap();
    }
    drop(w);
    let lua = format!(
        "lua_script:{}",
        concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/wireshark/fanin.lua")
    );
    let mut c = Command::new("tshark");
    c.args(["-X", &lua, "-r", pcap.to_str().unwrap(), "-T", "fields"]);
    for f in [
        "type", "reply", "lane", "tuples", "seq", "copy", "count", "aux", "key", "value",
    ] {
        c.args(["-e", &format!("fanin.kv.{f}")]);
    }
    c.args(["-e", "fanin.job", "-e", "_ws.expert"]);
    let o = run(&mut c, 60);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "tshark failed (is it installed?): {err}"
    );
    let got: Vec<&str> = out.lines().collect();
    let want = [
        "8\t0\t2\t3\t1008\t0\t2\t0x0000000000000005\t3000000000,0,42\t-5,0,9\t7\t",
        "9\t0\t2\t0\t1009\t0\t0\t0x0000000000000000\t\t\t7\t",
        "10\t0\t2\t0\t1010\t0\t0\t0x0000000000000000\t\t\t7\t",
        "11\t1\t2\t1\t1011\t1\t0\t0x0000000000000040\t11\t22\t7\t",
        "12\t0\t2\t0\t1012\t0\t0\t0x0000000000000000\t\t\t7\t",
        "13\t0\t2\t0\t1013\t0\t0\t0x0000000000000000\t\t\t7\t",
    ];
    assert_eq!(got.len(), want.len(), "{out}");
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g.to_lowercase(), w.to_lowercase());
    }
}

/// Both ASK experiments at `--quick` size: their checks pass and they write CSV, SVG and
/// the checks file.
#[test]
fn ask_experiments_run_quick_and_pass_their_checks() {
    let dir = tmpdir("kv-experiments");
    for (name, files) in [
        (
            "ask-prioritisation",
            &[
                "ask_prioritisation.csv",
                "ask_prioritisation_noswap.svg",
                "ask_prioritisation_swap.svg",
                "ask_prioritisation_checks.txt",
            ][..],
        ),
        (
            "ask-goodput",
            &[
                "ask_goodput_ideal.csv",
                "ask_goodput_e2e.csv",
                "ask_goodput_ideal.svg",
                "ask_goodput_e2e.svg",
                "ask_goodput_checks.txt",
            ][..],
        ),
    ] {
        let o = run(
            fanin().args([
                "experiment",
                name,
                "--quick",
                "--out",
                dir.to_str().unwrap(),
            ]),
            120,
        );
        let (out, err) = text(&o);
        assert!(o.status.success(), "{name}: {out}\n{err}");
        assert!(out.contains("[ok]") && !out.contains("FAILED"), "{out}");
        for f in files {
            let p = dir.join(f);
            let len = std::fs::metadata(&p).map(|m| m.len()).unwrap_or(0);
            assert!(len > 100, "{} missing or empty", p.display());
        }
    }
    let csv = std::fs::read_to_string(dir.join("ask_prioritisation.csv")).unwrap();
    // 3 distributions x 2 (swap or not) x 13 aggregator counts, plus the header.
    assert_eq!(csv.lines().count(), 1 + 3 * 2 * 13);
}
