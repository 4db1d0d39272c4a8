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
    // Header version 2 (proto/src/wire/wide.rs).
    use fanin_proto::wire::{wide::field as f2, HEADER_LEN_V2, MAX_WIRE_ELEMENTS_V2, VERSION_2};
    assert!(lua.contains(&format!("local VERSION_2 = {VERSION_2}\n")));
    assert!(lua.contains(&format!("local HEADER_LEN_V2 = {HEADER_LEN_V2}\n")));
    assert!(lua.contains(&format!("local MAX_ELEMENTS_V2 = {MAX_WIRE_ELEMENTS_V2}\n")));
    assert!(lua.contains(&format!("local BITMAP_V2 = {}\n", f2::BITMAP.start)));
    assert!(lua.contains(&format!(
        "local BITMAP_WORDS_V2 = {}\n",
        f2::BITMAP.len() / 8
    )));
    for (range, what) in [(f2::COUNT, "count"), (f2::RESERVED1, "reserved")] {
        assert!(
            lua.contains(&format!("tvb({}, {})", range.start, range.len())),
            "the dissector reads the version-2 {what} at {range:?}"
        );
    }
    assert!(lua.contains(&format!("tvb({}, 1)", f2::RESERVED0)));
}

/// Version-2 headers (jobs of more than 64 ranks) decode field by field, on the fanin port
/// and by the heuristic on another; a malformed one is flagged, and version 1 still decodes.
#[test]
fn tshark_decodes_version_2_headers() {
    use fanin_proto::wire::{
        Datagram, Flags, L4Addr, PacketType, RankSet, Repr, WideRepr, VERSION_2,
    };
    use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
    let dir = tmpdir("wireshark-v2");
    let pcap = dir.join("v2.pcap");
    let mut ranks = RankSet::first(3);
    ranks.insert(64);
    ranks.insert(300);
    ranks.insert(511);
    let v2 = |ptype, block, bitmap, n: usize| WideRepr {
        version: VERSION_2,
        ptype,
        flags: Flags(Flags::PARTIAL),
        exponent: -2,
        job: 9,
        elements: n as u16,
        block,
        child: 0,
        bitmap,
    };
    let mut payloads = vec![
        v2(PacketType::Contribution, 70, ranks, 3).to_bytes(&[1, -2, 3]),
        v2(PacketType::Result, 71, RankSet::first(256), 1).to_bytes(&[-7]),
        Repr {
            ptype: PacketType::Contribution,
            flags: Flags(0),
            exponent: 0,
            job: 8,
            elements: 1,
            block: 5,
            child: 1,
            bitmap: 0b110,
        }
        .to_bytes(&[4]),
    ];
    // Malformed: a reserved byte set, and a count that disagrees with the bitmap.
    let mut bad = payloads[0].clone();
    bad[17] = 1;
    payloads.push(bad);
    let mut bad = payloads[0].clone();
    bad[15] = 7;
    payloads.push(bad);
    let mut w = PcapWriter::with_header(
        std::fs::File::create(&pcap).unwrap(),
        PcapHeader {
            datalink: pcap_file::DataLink::ETHERNET,
            ..PcapHeader::default()
        },
    )
    .unwrap();
    for (i, p) in payloads.iter().enumerate() {
        let port = if i == 1 { 40000 } else { FANIN_UDP_PORT };
        let a = |x: u8, port| L4Addr {
            mac: [2, 0, 0, 0, 0, x],
            ip: [10, 0, 0, x].into(),
            port,
        };
        // Source port 40001: 5000 is Trapeze's (TAPA), which UDP would try first.
        let frame = Datagram {
            src: a(2, 40001),
            dst: a(1, port),
            payload: p,
        }
        .to_frame(true);
        let ts = std::time::Duration::from_secs(1 + i as u64);
        w.write_packet(&PcapPacket::new(ts, frame.len() as u32, &frame[..]).unwrap())
            .unwrap();
    }
    drop(w);
    let lua = format!("lua_script:{LUA}");
    let mut c = Command::new("tshark");
    c.args(["-X", &lua, "-r", pcap.to_str().unwrap(), "-T", "fields"]);
    for f in [
        "version", "type", "flags", "exponent", "job", "elements", "block", "child", "count",
    ] {
        c.args(["-e", &format!("fanin.{f}")]);
    }
    c.args([
        "-e",
        "fanin.bitmap_v2.word",
        "-e",
        "fanin.element",
        "-e",
        "_ws.expert",
    ]);
    let o = run(&mut c, 60);
    let (out, err) = text(&o);
    assert!(o.status.success(), "tshark failed: {err}");
    let got: Vec<&str> = out.lines().collect();
    assert_eq!(got.len(), 5, "{out}");
    let words = |s: &RankSet| {
        s.0.iter()
            .map(|w| format!("0x{w:016x}"))
            .collect::<Vec<_>>()
            .join(",")
    };
    assert_eq!(
        got[0],
        format!(
            "2\t1\t0x04\t-2\t9\t3\t70\t0\t6\t{}\t1,-2,3\t",
            words(&ranks)
        )
    );
    // On another port, by the heuristic.
    assert_eq!(
        got[1],
        format!(
            "2\t2\t0x04\t-2\t9\t1\t71\t0\t256\t{}\t-7\t",
            words(&RankSet::first(256))
        )
    );
    assert_eq!(got[2], "1\t1\t0x00\t0\t8\t1\t5\t1\t2\t\t4\t");
    assert!(
        got[3].ends_with("Reserved header bytes set"),
        "reserved byte: {}",
        got[3]
    );
    assert!(
        got[4].contains("\t7\t") && got[4].ends_with("Count disagrees with the contributor bitmap"),
        "count: {}",
        got[4]
    );
    let _ = std::fs::remove_dir_all(&dir);
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
