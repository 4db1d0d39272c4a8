//! Topology parsing and generators: one clear error line naming the node and the reason.

use fanin_placement::topology::{
    binary_tree, fat_tree, programmable_order, scale_free, Kind, Topology, Tree,
};

fn err(text: &str) -> String {
    Tree::from_json(text).unwrap_err().to_string()
}

#[test]
fn malformed_trees_name_the_node_and_reason() {
    let cases = [
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"b","rate":1},{"id":"b","parent":"a","rate":1}]}"#,
            "node \"a\"",
            "cycle",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"zz","rate":1}]}"#,
            "node \"a\"",
            "unknown parent \"zz\"",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d","rate":1},{"id":"a","parent":"d","rate":1}]}"#,
            "node \"a\"",
            "duplicate id",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d","rate":0}]}"#,
            "node \"a\"",
            "rate must be positive",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d","rate":-2.5}]}"#,
            "node \"a\"",
            "rate must be positive",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d"}]}"#,
            "node \"a\"",
            "missing rate",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d","rate":1,"load":1.5}]}"#,
            "node \"a\"",
            "load",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","parent":"d","rate":1,"lod":1}]}"#,
            "node \"a\"",
            "unknown field",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"a","rate":1}]}"#,
            "node \"a\"",
            "missing parent",
        ),
        (
            r#"{"destination":"d","nodes":[{"id":"d","parent":null}]}"#,
            "node \"d\"",
            "destination",
        ),
    ];
    for (text, who, why) in cases {
        let e = err(text);
        assert!(
            e.contains(who) && e.contains(why),
            "{e:?} should name {who} and {why}"
        );
        assert!(!e.contains('\n'), "one line: {e:?}");
    }
}

#[test]
fn the_required_format_parses_with_defaults() {
    let t = Tree::from_json(
        r#"{"destination": "d", "nodes": [
          {"id": "r",  "parent": "d", "rate": 1},
          {"id": "a",  "parent": "r", "rate": 2.5},
          {"id": "l1", "parent": "a", "rate": 1, "load": 2, "aggregate": false, "capacity": 3},
          {"id": "x",  "parent": null}]}"#,
    )
    .unwrap();
    assert_eq!(t.len(), 4);
    let l1 = &t.nodes[t.find("l1").unwrap()];
    assert_eq!((l1.load, l1.available, l1.capacity), (2, false, Some(3)));
    let a = &t.nodes[t.find("a").unwrap()];
    assert_eq!((a.load, a.available), (0, true));
    assert_eq!(a.rate, Some(crate::common::rat("5/2")));
    assert_eq!(t.nodes[t.find("x").unwrap()].rate, None);
    assert_eq!(t.roots().len(), 2);
    // Round trip.
    assert_eq!(Tree::from_json(&t.to_json()).unwrap(), t);
}

#[test]
fn generators_follow_the_documented_naming() {
    let t = binary_tree(256).unwrap();
    assert_eq!(t.len(), 255);
    assert_eq!(t.leaves().len(), 128);
    assert_eq!(t.height(), 8);
    assert_eq!(t.nodes[t.find("s5").unwrap()].parent, t.find("s2"));
    let sf = scale_free(128, 3).unwrap();
    assert_eq!(sf.len(), 127);
    assert_eq!(sf, scale_free(128, 3).unwrap());
    assert!(sf.nodes.iter().all(|v| v.load == 1));
    let g = fat_tree(6).unwrap();
    let sw = g
        .vertices
        .iter()
        .filter(|v| matches!(v.kind, Kind::Switch { .. }))
        .count();
    assert_eq!((sw, g.len() - sw), (45, 54));
    let order = programmable_order(&g, 6);
    let first: Vec<&str> = order[..8]
        .iter()
        .map(|&v| g.vertices[v].id.as_str())
        .collect();
    assert_eq!(
        first,
        ["p0e0", "p1e0", "p2e0", "p3e0", "p4e0", "p5e0", "p0a0", "p1a0"]
    );
    assert_eq!(
        g.hops_from(g.find("p0e0h0").unwrap())[g.find("p3e2h1").unwrap()],
        Some(6)
    );
    assert!(Topology::load("bt:1").is_err());
    assert!(Topology::load("fat-tree:5").is_err());
    assert!(Topology::load("/nonexistent.json")
        .unwrap_err()
        .to_string()
        .contains("/nonexistent.json"));
}

#[test]
fn graph_json_round_trips_and_rejects_unknown_nodes() {
    let g = fat_tree(4).unwrap();
    match Topology::parse(&g.to_json()).unwrap() {
        Topology::Graph { graph, .. } => assert_eq!(graph, g),
        _ => panic!("graph expected"),
    }
    let e = Topology::parse(r#"{"nodes":[{"id":"s","kind":"switch"}],"links":[["s","h"]]}"#)
        .unwrap_err()
        .to_string();
    assert!(e.contains("unknown node \"h\""), "{e}");
}
