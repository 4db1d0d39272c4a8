//! The slow tier runs this whole test binary again against each larger configuration
//! (`FANIN_SIM_CONFIG=NAME`, see `common::config`). They must be built in:
//! `cargo xtask test --slow` builds them all in (`FANIN_SIM_CONFIGS`, xtask's `SLOW_SIM_CONFIGS`).

use std::process::Command;

use fanin_sim::model::BUILT;

use crate::common::config;

/// The configurations the slow tier runs the suite against, besides `default`: the two
/// other named ones, eight 64-bit ports, and two 256-bit ports (docs/rtl.md, "Configurations").
const SLOW_TIER: &[&str] = &[
    "alveo",
    "sume",
    "default+ports=8+engine_w=1024",
    "default+ports=2+data_w=256+engine_w=2048",
];

#[test]
#[ignore = "slow tier: cargo xtask test --slow"]
fn whole_suite_on_the_large_configurations() {
    if config() != "default" {
        return; // already a re-run against another configuration
    }
    for &name in SLOW_TIER {
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
