//! The `fanin` command.

use clap::{Parser, Subcommand};
use fanin::cli;
use fanin::switchd::ControlRequest;

/// fanin: in-network aggregation host tools.
#[derive(Debug, Parser)]
#[command(name = "fanin", version, about)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Debug, Subcommand)]
enum Cmd {
    /// Run the software switch (the reference model behind a UDP socket).
    Switchd(cli::SwitchdArgs),
    /// Run one worker: send a tensor, receive the sum.
    Send(cli::SendArgs),
    /// Print a running switchd's counters.
    Stats(cli::StatsArgs),
    /// Reset a job on a running switchd (free its slot copies, close its session).
    Reset(cli::ResetArgs),
    /// Make a running switchd read its configuration file again.
    Reload(cli::ReloadArgs),
    /// Run a local switch and N workers for one allreduce.
    Allreduce(cli::AllreduceArgs),
    /// Place aggregation on a topology and emit per-switch configurations.
    Place(fanin_placement::cli::PlaceArgs),
    /// Reproduce a placement evaluation.
    Experiment(fanin_placement::cli::ExperimentArgs),
    /// Key-value stream aggregation (ASK): send, receive, local allreduce.
    Kv(fanin::kv::KvArgs),
    /// An FPGA switch's registers: program a configuration, read its status.
    Hw(fanin::hw::HwArgs),
}

fn main() {
    // Output piped into `head` ends the command quietly, as for other Unix tools, instead of
    // a panic in `println!` (sockets are not affected: std sends with MSG_NOSIGNAL).
    // SAFETY: setting a signal's disposition to the default before any thread starts.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let args = Cli::parse();
    let r = match &args.cmd {
        Cmd::Switchd(a) => cli::run_switchd(a),
        Cmd::Send(a) => cli::run_send(a),
        Cmd::Stats(a) => cli::run_stats(a),
        Cmd::Reset(a) => cli::run_control(a.addr, &ControlRequest::Reset { job: a.job }),
        Cmd::Reload(a) => cli::run_control(a.addr, &ControlRequest::Reload),
        Cmd::Allreduce(a) => cli::run_allreduce(a),
        Cmd::Place(a) => fanin_placement::cli::run_place(a),
        Cmd::Experiment(a) if a.flow.is_some() && !a.name.is_canary() => {
            Err(fanin::error::input_error(format!(
                "--flow applies to the canary-* experiments only, not {}",
                clap::ValueEnum::to_possible_value(&a.name)
                    .map_or(String::new(), |v| v.get_name().to_string())
            )))
        }
        Cmd::Experiment(a) if a.name.is_ask() => fanin::kv_experiment::run(a),
        Cmd::Experiment(a) if a.name.is_canary() => fanin::canary_experiment::run_experiment(a),
        Cmd::Experiment(a) => fanin_placement::cli::run_experiment(a),
        Cmd::Kv(a) => fanin::kv::run(a),
        Cmd::Hw(a) => fanin::hw::run(a),
    };
    if let Err(e) = r {
        eprintln!("error: {}", format!("{e:#}").replace('\n', " "));
        std::process::exit(fanin::error::exit_code(&e));
    }
}
