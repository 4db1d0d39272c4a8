//! The slow tier runs this whole test binary again against each larger configuration
//! (`FANIN_SIM_CONFIG=NAME`, see `common::config`). They must be built in:
//! `cargo xtask test --slow` builds them all in (`FANIN_SIM_CONFIGS`). The list is
//! `slow_tier.txt` beside this file, which xtask reads too.

use std::process::Command;

use fanin_sim::dut::BUILT;

use crate::common::config;

/// The configurations the slow tier runs the suite against, besides `default`
/// (`slow_tier.txt`: one per line, `#` starts a comment line).
fn slow_tier() -> impl Iterator<Item = &'static str> {
    include_str!("slow_tier.txt")
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
}

#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn whole_suite_on_the_large_configurations() {
    if config() != "default" {
        return; // already a re-run against another configuration
    }
    for name in slow_tier() {
        assert!(
            BUILT.contains(&name),
            "configuration {name} is not built in (built: {BUILT:?}): \
             build with FANIN_SIM_CONFIGS=default,{name} (cargo xtask test --slow does)"
        );
        // Every test that is not ignored, in a fresh process of this binary.
        let st = Command::new(std::env::current_exe().unwrap())
            .env("FANIN_SIM_CONFIG", name)
            .status()
            .unwrap();
        assert!(st.success(), "the RTL suite failed on configuration {name}");
    }
}
