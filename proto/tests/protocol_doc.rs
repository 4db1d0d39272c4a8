//! docs/protocol.md must match fanin-proto: header offsets and sizes, flag values, the UDP
//! port, the payload offset and every counter name.

use fanin_proto::model::Counter;
use fanin_proto::wire::header::field;
use fanin_proto::wire::{Flags, FANIN_UDP_PORT, HEADER_LEN, PAYLOAD_OFFSET};

fn doc() -> String {
    let p = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/protocol.md");
    std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// Rows `| offset | size | name | ... |` of the header table.
fn header_rows(doc: &str) -> Vec<(usize, usize, String)> {
    let start = doc.find("## Header").expect("a Header section");
    doc[start..]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            if cells.len() < 5 {
                return None;
            }
            let off = cells[1].parse().ok()?;
            let size = cells[2]
                .parse()
                .ok()
                .or_else(|| (cells[2] == "4·n").then_some(0))?;
            Some((off, size, cells[3].to_string()))
        })
        .take_while(|(_, size, _)| *size != 0)
        .collect()
}

#[test]
fn header_table_matches_the_field_module() {
    let d = doc();
    let rows = header_rows(&d);
    let want: Vec<(usize, usize, &str)> = vec![
        (field::VERSION, 1, "version"),
        (field::TYPE, 1, "type"),
        (field::FLAGS, 1, "flags"),
        (field::EXPONENT, 1, "exponent"),
        (field::JOB.start, field::JOB.len(), "job"),
        (field::ELEMENTS.start, field::ELEMENTS.len(), "elements"),
        (field::BLOCK.start, field::BLOCK.len(), "block"),
        (field::CHILD, 1, "child"),
        (field::COUNT, 1, "count"),
        (field::BITMAP.start, field::BITMAP.len(), "bitmap"),
    ];
    let got: Vec<(usize, usize, &str)> =
        rows.iter().map(|(o, s, n)| (*o, *s, n.as_str())).collect();
    assert_eq!(got, want);
    assert!(d.contains(&format!("| {HEADER_LEN} | 4·n | elements |")));
}

#[test]
fn constants_and_flags_are_documented() {
    let d = doc();
    assert!(d.contains(&format!("**{FANIN_UDP_PORT}**")), "UDP port");
    assert!(
        d.contains(&format!("byte **{PAYLOAD_OFFSET}**")),
        "payload offset"
    );
    for (v, name) in [
        (Flags::BYPASS, "BYPASS"),
        (Flags::MULTICAST, "MULTICAST"),
        (Flags::PARTIAL, "PARTIAL"),
        (Flags::OVERFLOW, "OVERFLOW"),
        (Flags::EXP_MISMATCH, "EXP_MISMATCH"),
    ] {
        assert!(
            d.contains(&format!("| 0x{v:02x} | {name} |")),
            "flag {name}"
        );
    }
    assert!(
        d.contains(&format!("| 0x{:02x} | — |", !Flags::DEFINED)),
        "reserved bits"
    );
}

#[test]
fn every_counter_is_documented() {
    let d = doc();
    for c in Counter::ALL {
        assert!(
            d.contains(c.name()),
            "counter {} missing from docs/protocol.md",
            c.name()
        );
    }
}

/// The element limits in the header table are the wire module's.
#[test]
fn element_limits_are_documented() {
    use fanin_proto::wire::{MAX_ELEMENTS, MAX_WIRE_ELEMENTS};
    let d = doc();
    assert!(d.contains(&format!(
        "element count `n` (1…{MAX_WIRE_ELEMENTS}, `MAX_WIRE_ELEMENTS`"
    )));
    assert!(d.contains(&format!("at most {MAX_ELEMENTS} in an RTL configuration")));
    assert!(d.contains(&format!("`n > {MAX_WIRE_ELEMENTS}`")));
}

/// The version-2 header table, payload offset and limits are `wire::wide`'s.
#[test]
fn header_version_2_matches_the_wide_module() {
    use fanin_proto::wire::wide::field as f2;
    use fanin_proto::wire::{HEADER_LEN_V2, MAX_RANKS, MAX_WIRE_ELEMENTS_V2, PAYLOAD_OFFSET_V2};
    let d = doc();
    let start = d
        .find("### Header version 2")
        .expect("a Header version 2 section");
    let rows: Vec<(usize, usize, String)> = d[start..]
        .lines()
        .filter_map(|l| {
            let cells: Vec<&str> = l.split('|').map(str::trim).collect();
            if cells.len() < 5 {
                return None;
            }
            let off = cells[1].parse().ok()?;
            let size = cells[2]
                .parse()
                .ok()
                .or_else(|| (cells[2] == "4·n").then_some(0))?;
            Some((off, size, cells[3].to_string()))
        })
        .take_while(|(_, size, _)| *size != 0)
        .collect();
    let want: Vec<(usize, usize, &str)> = vec![
        (f2::VERSION, 1, "version"),
        (f2::TYPE, f2::CHILD + 1 - f2::TYPE, "type … child"),
        (f2::RESERVED0, 1, "reserved"),
        (f2::COUNT.start, f2::COUNT.len(), "count"),
        (f2::RESERVED1.start, f2::RESERVED1.len(), "reserved"),
        (f2::BITMAP.start, f2::BITMAP.len(), "bitmap"),
    ];
    let got: Vec<(usize, usize, &str)> =
        rows.iter().map(|(o, s, n)| (*o, *s, n.as_str())).collect();
    assert_eq!(got, want);
    assert!(d.contains(&format!("| {HEADER_LEN_V2} | 4·n | elements |")));
    assert!(d.contains(&format!("byte **{PAYLOAD_OFFSET_V2}**")));
    assert!(d.contains(&format!("`n ≤ {MAX_WIRE_ELEMENTS_V2}`")));
    assert!(d.contains(&format!("up to {MAX_RANKS}, in header version 2")));
    assert!(d.contains(&format!("{}-bit bitmap", 8 * f2::BITMAP.len())));
}
