//! Integration tests of fanin-placement: one binary, topic modules.

mod cli;
mod coarse;
mod common;
mod emit;
mod examples;
mod invariants;
mod oracle;
mod paring;
mod topology;
