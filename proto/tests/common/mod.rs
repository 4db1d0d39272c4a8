//! Shared by proto's property-test binaries.

use proptest::test_runner::{Config, RngSeed};

/// A seeded proptest config: `PROPTEST_RNG_SEED` (default `seed`) fixes the run and
/// `PROPTEST_CASES` overrides `cases` for soak runs.
#[allow(dead_code)] // not every test binary is a proptest
pub fn config(seed: u64, cases: u32) -> Config {
    let seed = std::env::var("PROPTEST_RNG_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(seed);
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(cases);
    Config {
        cases,
        rng_seed: RngSeed::Fixed(seed),
        failure_persistence: None,
        max_shrink_iters: std::env::var("PROPTEST_MAX_SHRINK_ITERS")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or(Config::default().max_shrink_iters),
        ..Config::default()
    }
}

/// The counters that count each input exactly once: their sum is the number of inputs a
/// switch was given (a JOIN is counted in `joins` whatever became of it).
#[allow(dead_code)] // not every test binary counts inputs
pub fn accounted(s: &fanin_proto::model::Switch) -> u64 {
    use fanin_proto::model::Counter::*;
    [
        Aggregated,
        Duplicates,
        Overlaps,
        BypassCollision,
        BypassQuota,
        BypassDegree,
        BypassStraggler,
        BypassTransit,
        RootDrops,
        UnknownJob,
        Malformed,
        Forwarded,
        NoRoute,
        NonIp,
        BadSource,
        Refused,
        Joins,
    ]
    .iter()
    .map(|&c| s.counters().get(c))
    .sum()
}
