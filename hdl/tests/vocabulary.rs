//! Issue #24's vocabulary rule, checked on the source: outside the layout tables
//! (`hdl/src/layout.rs`), no `get_bits` takes a literal offset, except the arithmetic
//! slices listed in `ALLOWED` (halves and nibbles of sums, not fields of a packed word).
//! States and actions need no such check: they are `LogicState` enums, and comparing one
//! with a number does not compile.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Files that may slice at literal offsets, how many times, and why.
const ALLOWED: &[(&str, usize, &str)] = &[
    (
        "hdrgen.rs",
        6,
        "the IPv4 checksum: the addresses' 16-bit halves, the folded sum's low 16 bits, \
         the population count's low byte",
    ),
    (
        "parse.rs",
        8,
        "the bitmap's population count: the per-byte counts' low nibbles",
    ),
    (
        "core/counters.rs",
        10,
        "a 64-bit counter's low and high register words, inside loops over counters and \
         ports, where hdl_gen cannot evaluate a field accessor",
    ),
];

/// Every `.rs` file under `dir`, recursively.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            sources(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The `get_bits` calls of `line` whose offset argument is an integer literal.
fn literal_slices(line: &str) -> usize {
    let code = line.split("//").next().unwrap();
    let mut n = 0;
    let mut rest = code;
    while let Some(i) = rest.find("get_bits::<") {
        rest = &rest[i + "get_bits::<".len()..];
        let Some(j) = rest.find(">(") else { break };
        let arg = &rest[j + 2..];
        let end = arg.find(')').unwrap_or(arg.len());
        let a = arg[..end].trim();
        if !a.is_empty() && a.chars().all(|c| c.is_ascii_digit() || c == '_') {
            n += 1;
        }
        rest = arg;
    }
    n
}

#[test]
fn literal_slices_only_where_allowed() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    sources(&root, &mut files);
    let mut found: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in &files {
        let rel = f
            .strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        if rel == "layout.rs" {
            continue;
        }
        for (k, line) in fs::read_to_string(f).unwrap().lines().enumerate() {
            for _ in 0..literal_slices(line) {
                found.entry(rel.clone()).or_default().push(format!(
                    "{rel}:{}: {}",
                    k + 1,
                    line.trim()
                ));
            }
        }
    }
    for (file, lines) in &found {
        let allowed = ALLOWED.iter().find(|a| a.0 == file).map_or(0, |a| a.1);
        assert_eq!(
            lines.len(),
            allowed,
            "{file}: {} get_bits with a literal offset, {allowed} allowed; name the field in \
             hdl/src/layout.rs instead (or, for arithmetic, update ALLOWED with the reason):\n{}",
            lines.len(),
            lines.join("\n")
        );
    }
    for (file, n, _) in ALLOWED {
        assert!(
            found.contains_key(*file),
            "{file}: {n} literal slices allowed, none found: remove it from ALLOWED"
        );
    }
}

#[test]
fn the_scanner_sees_literals_and_only_literals() {
    assert_eq!(literal_slices("x.get_bits::<16>(320)"), 1);
    assert_eq!(
        literal_slices("a.get_bits::<8>(0) | b.get_bits::<8>( 8 )"),
        2
    );
    assert_eq!(literal_slices("x.get_bits::<16>(f.offset)"), 0);
    assert_eq!(literal_slices("x.get_bits::<8>(8 * j)"), 0);
    assert_eq!(literal_slices("x.get_bits::<PARSE_W>(0)"), 1);
    assert_eq!(literal_slices("// x.get_bits::<16>(320)"), 0);
}
