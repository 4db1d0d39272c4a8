//! The CLI: validation errors are one clear line; JSON output carries the required keys.

use clap::Parser;
use fanin_placement::cli::{PlaceArgs, PlaceJob};

#[derive(Parser)]
struct Cli {
    #[command(flatten)]
    place: PlaceArgs,
}

fn args(line: &str) -> PlaceArgs {
    Cli::try_parse_from(std::iter::once("place").chain(line.split_whitespace()))
        .unwrap()
        .place
}

fn error(line: &str) -> String {
    match args(line).validate() {
        Ok(_) => panic!("{line} should fail"),
        Err(e) => format!("{e:#}"),
    }
}

#[test]
fn bad_flags_give_one_line() {
    for (line, want) in [
        ("--topology bt:16 --algo soar", "--k is required"),
        ("--topology fat-tree:4 --algo soar --k 2", "needs a tree topology"),
        ("--topology bt:16 --algo paring", "needs a graph topology"),
        ("--topology fat-tree:4 --algo paring --workers 3", "--capacity-gbps is required"),
        ("--topology fat-tree:4 --algo atp --workers 3 --capacity-gbps 2 --rate-limit-gbps 0 --gradient-gb 1", "--rate-limit-gbps must be positive"),
        ("--topology fat-tree:4 --algo deepsys --workers 16 --capacity-gbps 2 --rate-limit-gbps 1 --gradient-gb 1", "need 17 idle servers"),
        ("--topology bt:16 --algo soar --k 2 --loads zipf", "--loads zipf"),
        ("--topology bt:16 --algo soar --k 2 --workers 3", "--workers applies to"),
        ("--topology bt:x --algo soar --k 2", "N must be a number"),
        ("--topology bt:16 --algo soar --k 2 --coarse", "--coarse applies to"),
        ("--topology bt:16 --algo soar --k 2 --packet-elements 2238", "--packet-elements 2238: must be 1..=2237"),
        ("--topology bt:16 --algo soar --k 2 --packet-elements 0", "--packet-elements 0"),
    ] {
        let e = error(line);
        assert!(e.contains(want), "{line}: {e:?} lacks {want:?}");
        assert!(!e.contains('\n'), "{line}: {e:?}");
    }
}

#[test]
fn generated_loads_are_seeded() {
    let a = match args("--topology bt:64 --algo soar --k 4 --loads power-law --seed 9")
        .validate()
        .unwrap()
    {
        PlaceJob::Tree(t) => t.workloads,
        PlaceJob::Graph(_) => unreachable!(),
    };
    let b = match args("--topology bt:64 --algo soar --k 4 --loads power-law --seed 9")
        .validate()
        .unwrap()
    {
        PlaceJob::Tree(t) => t.workloads,
        PlaceJob::Graph(_) => unreachable!(),
    };
    assert_eq!(a, b);
}

#[test]
fn emit_config_writes_files_that_load() {
    let dir = std::env::temp_dir().join(format!("fanin-place-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let line = format!("--topology bt:8 --algo soar --k 2 --loads uniform:1:3 --json --emit-config {} --base-port 41000", dir.display());
    fanin_placement::cli::run_place(&args(&line)).unwrap();
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        let text = std::fs::read_to_string(&p).unwrap();
        if p.file_name().unwrap() == "workers.json" {
            let w: Vec<fanin_proto::worker::Assignment> = serde_json::from_str(&text).unwrap();
            assert!(!w.is_empty());
        } else {
            let c: fanin_proto::config::SwitchConfig = serde_json::from_str(&text).unwrap();
            fanin_proto::model::Switch::new(&c).unwrap();
            n += 1;
        }
    }
    assert!(n >= 2, "root plus at least one blue switch");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn coarse_place_emits_full_fan_in_configs() {
    let dir = std::env::temp_dir().join(format!("fanin-coarse-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for algo in ["paring", "atp"] {
        let line = format!("--topology fat-tree:6 --programmable 8 --algo {algo} --workers 20 --capacity-gbps 10 --rate-limit-gbps 5 --gradient-gb 1627/1024 --coarse --json --emit-config {}", dir.display());
        let a = args(&line);
        assert!(a.coarse);
        match a.validate().unwrap() {
            PlaceJob::Graph(g) => assert!(g.coarse),
            PlaceJob::Tree(_) => unreachable!(),
        }
        fanin_placement::cli::run_place(&a).unwrap();
        let mut n = 0;
        for f in std::fs::read_dir(&dir).unwrap() {
            let p = f.unwrap().path();
            if p.file_name().unwrap() == "workers.json" {
                continue;
            }
            let c: fanin_proto::config::SwitchConfig =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            fanin_proto::model::Switch::new(&c).unwrap();
            for j in &c.jobs {
                assert_eq!(
                    j.degree_limit as usize,
                    j.children.len(),
                    "{algo} {}",
                    c.name
                );
            }
            n += 1;
        }
        assert!(n >= 2, "{algo}: the PS and at least one aggregating switch");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

#[test]
fn emit_config_mode_dynamic_writes_dynamic_entries_and_zero_timeouts_are_refused() {
    let dir = std::env::temp_dir().join(format!("fanin-place-dyn-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let base = format!(
        "--topology bt:8 --algo soar --k 2 --loads uniform:1:3 --json --emit-config {}",
        dir.display()
    );
    let e =
        fanin_placement::cli::run_place(&args(&format!("{base} --mode dynamic --flush-after 0")))
            .unwrap_err()
            .to_string();
    assert!(
        e.contains("--flush-after and --reclaim-after must be at least 1 tick"),
        "{e}"
    );
    fanin_placement::cli::run_place(&args(&format!("{base} --mode dynamic --flush-after 7")))
        .unwrap();
    let mut n = 0;
    for f in std::fs::read_dir(&dir).unwrap() {
        let p = f.unwrap().path();
        if p.file_name().unwrap() == "workers.json" {
            continue;
        }
        if p.file_name().unwrap() == "links.json" {
            let w: fanin_placement::wiring::Wiring =
                serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            // No --base-port: links name neighbours, with no tunnels and no commands.
            assert!(w
                .switches
                .iter()
                .all(|s| s.listen.is_none() && s.switchd_args.is_empty() && !s.links.is_empty()));
            continue;
        }
        let c: fanin_proto::config::SwitchConfig =
            serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
        fanin_proto::model::Switch::new(&c).unwrap();
        assert!(!c.routes.is_empty(), "{}: a dynamic switch routes", c.name);
        for j in &c.jobs {
            assert_eq!(
                j.mode,
                fanin_proto::config::Mode::Dynamic {
                    flush_after: 7,
                    reclaim_after: 100_000
                }
            );
        }
        n += 1;
    }
    assert!(n >= 2);
    std::fs::remove_dir_all(&dir).unwrap();
}
