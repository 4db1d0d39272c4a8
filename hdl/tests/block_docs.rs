//! The engine's block list in the docs, checked against the source: docs/rtl.md's block
//! table has one row per file of `hdl/src/core/` and none for a file that is gone,
//! docs/architecture.md names every one of them, and the table's "about N lines" for the
//! engine (`mod.rs`) is within 5 % of its length, so that the docs follow each cut.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap()
}

/// The files of `hdl/src/core/`, as `core/<name>.rs`.
fn core_files() -> BTreeSet<String> {
    fs::read_dir(repo().join("hdl/src/core"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".rs"))
        .map(|n| format!("core/{n}"))
        .collect()
}

/// The `hdl/src/core/` files docs/rtl.md's block table has rows for.
fn table_rows(rtl: &str) -> BTreeSet<String> {
    rtl.lines()
        .filter_map(|l| l.strip_prefix("| `hdl/src/core/"))
        .map(|l| format!("core/{}", &l[..l.find('`').unwrap()]))
        .collect()
}

#[test]
fn rtl_block_table_lists_every_core_file() {
    let rtl = fs::read_to_string(repo().join("docs/rtl.md")).unwrap();
    assert_eq!(
        table_rows(&rtl),
        core_files(),
        "docs/rtl.md's block table must have one row per hdl/src/core/ file"
    );
}

#[test]
fn architecture_names_every_core_file() {
    let arch = fs::read_to_string(repo().join("docs/architecture.md")).unwrap();
    // The paragraph wraps lines: compare without line breaks and indentation.
    let flat: String = arch.split_whitespace().collect::<Vec<_>>().join(" ");
    for f in core_files() {
        let name = if f == "core/mod.rs" {
            "hdl/src/core/mod.rs".to_string()
        } else {
            f.clone()
        };
        assert!(
            flat.contains(&format!("`{name}`")),
            "docs/architecture.md does not name `{name}`"
        );
    }
}

#[test]
fn engine_length_in_the_table_is_current() {
    let rtl = fs::read_to_string(repo().join("docs/rtl.md")).unwrap();
    let row = rtl
        .lines()
        .find(|l| l.starts_with("| `hdl/src/core/mod.rs`"))
        .expect("a row for mod.rs");
    let at = row
        .find("about ")
        .expect("\"about N lines\" in mod.rs's row")
        + "about ".len();
    let said: usize = row[at..]
        .split_whitespace()
        .next()
        .unwrap()
        .replace(',', "")
        .parse()
        .expect("a number after \"about\"");
    let actual = fs::read_to_string(repo().join("hdl/src/core/mod.rs"))
        .unwrap()
        .lines()
        .count();
    assert!(
        said.abs_diff(actual) * 20 <= actual,
        "docs/rtl.md says mod.rs is about {said} lines; it is {actual}"
    );
}
