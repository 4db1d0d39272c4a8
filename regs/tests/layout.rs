//! docs/rtl.md's tables of the packed words equal the layout tables.

use fanin_regs::layout::{child, job, member, meta, Layout};

/// The table that follows the heading starting with `heading` in docs/rtl.md.
fn doc_table(doc: &str, heading: &str) -> String {
    let at = doc
        .find(&format!("\n{heading}"))
        .unwrap_or_else(|| panic!("docs/rtl.md has no heading {heading:?}"));
    doc[at + 1..]
        .lines()
        .skip(1)
        .skip_while(|l| !l.starts_with('|'))
        .take_while(|l| l.starts_with('|'))
        .map(|l| format!("{l}\n"))
        .collect()
}

#[test]
fn rtl_doc_tables_equal_the_layouts() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rtl.md");
    let doc = std::fs::read_to_string(path).unwrap();
    let cases: [(&str, Layout); 4] = [
        ("### Job-table entry", job::LAYOUT),
        ("### Child-table entry", child::LAYOUT),
        ("### Slot metadata", meta::LAYOUT),
        ("### Session member row", member::LAYOUT),
    ];
    for (heading, layout) in cases {
        let want = layout.markdown();
        assert_eq!(
            doc_table(&doc, heading),
            want,
            "docs/rtl.md {heading:?} differs from regs/src/layout.rs; the table should read:\n{want}"
        );
        assert!(
            doc.contains(&format!("{heading} ({} bits", layout.width)),
            "docs/rtl.md {heading:?} does not give the width {}",
            layout.width
        );
    }
}
