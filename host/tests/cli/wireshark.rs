//! The Wireshark dissector decodes a capture made by `fanin send --pcap`.

use std::collections::BTreeMap;

use fanin_proto::wire::{Packet, FANIN_UDP_PORT, HEADER_LEN};
use pcap_file::pcap::PcapReader;

use super::*;

const LUA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../tools/wireshark/fanin.lua");

/// The dissector's constants are fanin-proto's.
#[test]
fn dissector_constants_match_proto() {
    let lua = std::fs::read_to_string(LUA).unwrap();
    assert!(lua.contains(&format!("local FANIN_UDP_PORT = {FANIN_UDP_PORT}\n")));
    assert!(lua.contains(&format!("local HEADER_LEN = {HEADER_LEN}\n")));
    assert!(lua.contains(&format!(
        "local MAX_ELEMENTS = {}\n",
        fanin_proto::wire::MAX_WIRE_ELEMENTS
    )));
}

#[test]
fn tshark_decodes_send_capture() {
    let dir = tmpdir("wireshark");
    let p = free_ports(2);
    let sw = Switchd::start(&[
        "--listen",
        "127.0.0.1:0",
        "--job",
        "3",
        "--elements",
        "16",
        "--worker",
        &lo(p[0]).to_string(),
        "--worker",
        &lo(p[1]).to_string(),
    ]);
    let pcap = dir.join("w0.pcap");
    let kids: Vec<_> = (0..2)
        .map(|r| {
            let mut c = fanin();
            c.args([
                "send",
                "--json",
                "--timeout",
                "10",
                "--job",
                "3",
                "--workers",
                "2",
            ])
            .args(["--rank", &r.to_string(), "--packet-elements", "16"])
            .args([
                "--switch",
                &sw.addr.to_string(),
                "--bind",
                &lo(p[r]).to_string(),
            ])
            .args(["--synthetic", "100", "--seed", &r.to_string()]);
            if r == 0 {
                c.args(["--pcap", pcap.to_str().unwrap()]);
            }
            c.stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for k in kids {
        send_report(&wait_output(k, 30, "send"));
    }
    // What was sent and received, decoded by fanin-proto from the capture itself.
    let mut want = Vec::new();
    let mut rd = PcapReader::new(std::fs::File::open(&pcap).unwrap()).unwrap();
    while let Some(pkt) = rd.next_packet() {
        let pkt = pkt.unwrap();
        let f = pkt.data();
        assert!(fanin_proto::wire::frame::udp_checksum_ok(f));
        let h = Packet::new_checked(&f[42..]).unwrap();
        want.push(format!(
            "{}\t{}\t{}\t{}\t{}\t{}\t{}",
            h.packet_type(),
            h.job(),
            h.block(),
            h.count(),
            h.element_count(),
            h.exponent(),
            h.child()
        ));
    }
    // A JOIN and its ACCEPT, then 2 preamble blocks + 7 tensor blocks of 16 elements, each
    // sent and answered.
    assert!(want.len() >= 20, "{want:?}");
    let lua = format!("lua_script:{LUA}");
    let base = |c: &mut Command| {
        c.args(["-X", &lua, "-o", "udp.try_heuristic_first:TRUE"])
            .args([
                "-o",
                "ip.check_checksum:TRUE",
                "-o",
                "udp.check_checksum:TRUE",
            ])
            .args(["-r", pcap.to_str().unwrap()]);
    };
    let mut c = Command::new("tshark");
    base(&mut c);
    c.args(["-T", "fields"]);
    for f in [
        "type", "job", "block", "count", "elements", "exponent", "child",
    ] {
        c.args(["-e", &format!("fanin.{f}")]);
    }
    c.args(["-e", "ip.checksum.status", "-e", "udp.checksum.status"]);
    let o = run(&mut c, 60);
    let (out, err) = text(&o);
    assert!(
        o.status.success(),
        "tshark failed (is it installed? see README setup): {err}"
    );
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), want.len(), "{out}");
    for (g, w) in got.iter().zip(&want) {
        // Fields as sent, and both checksums verified good (status 1).
        assert_eq!(*g, format!("{w}\t1\t1"));
    }
    let jobs: BTreeMap<&str, usize> = got.iter().fold(BTreeMap::new(), |mut m, l| {
        *m.entry(l.split('\t').nth(1).unwrap()).or_default() += 1;
        m
    });
    assert_eq!(jobs.keys().collect::<Vec<_>>(), vec![&"3"]);
    // The session: a JOIN (one rank, no elements), then the ACCEPT naming the first block.
    assert!(got[0].starts_with("3\t3\t"), "a JOIN first: {out}");
    let accept = got
        .iter()
        .find(|l| l.starts_with("4\t3\t"))
        .expect("an ACCEPT");
    let first = accept.split('\t').nth(2).unwrap();
    assert!(
        got.iter()
            .any(|l| l.starts_with(&format!("1\t3\t{first}\t1\t"))),
        "contribution of block {first}"
    );
    assert!(
        got.iter()
            .any(|l| l.starts_with(&format!("2\t3\t{first}\t2\t"))),
        "result of block {first}"
    );
    // Full decode: the fanin tree is there and nothing is malformed.
    let mut c = Command::new("tshark");
    base(&mut c);
    c.arg("-V");
    let o = run(&mut c, 60);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("fanin in-network aggregation"), "{out}");
    assert!(out.contains("Job: 3") && out.contains(&format!("Block: {first}")));
    assert!(out.contains("Type: Contribution (1)") && out.contains("Type: Result (2)"));
    assert!(out.contains("Type: Join (3)") && out.contains("Type: Accept (4)"));
    assert!(out.contains("Contribution count: 2"));
    assert!(!out.contains("Malformed"), "malformed packets reported");
    assert!(
        !out.contains("Expert Info (Error"),
        "expert errors reported"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
