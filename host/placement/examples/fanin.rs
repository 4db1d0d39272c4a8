//! Stand-alone `fanin place` / `fanin experiment` for trying the placement crate without the
//! workspace binary: `cargo run -p fanin-placement --example fanin -- place --topology bt:16 --algo soar --k 2`.

use clap::{Parser, Subcommand};
use fanin_placement::cli::{run_experiment, run_place, ExperimentArgs, PlaceArgs};

#[derive(Parser)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Place aggregation.
    Place(Box<PlaceArgs>),
    /// Reproduce a paper evaluation.
    Experiment(ExperimentArgs),
}

fn main() {
    let r = match Cli::parse().cmd {
        Cmd::Place(a) => run_place(&a),
        Cmd::Experiment(a) => run_experiment(&a),
    };
    if let Err(e) = r {
        eprintln!("error: {e:#}");
        std::process::exit(2);
    }
}
