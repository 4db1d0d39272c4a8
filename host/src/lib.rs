//! fanin host tools: the software switch (`fanin switchd`), the gradient sender
//! (`fanin send`), counters (`fanin stats`) and a local allreduce (`fanin allreduce`).
//!
//! Behaviour lives in `fanin-proto`; this crate only moves datagrams:
//! - [`link`]: the I/O trait with a UDP socket, a pcap tap and a fault injector;
//! - [`switchd`]: the reference model behind a socket, and its stats service;
//! - [`sender`] and [`scheme`]: one worker's allreduce and its quantisation scheme;
//! - [`leader`]: a worker of a dynamic (Canary) job, leader of its blocks;
//! - [`tensor`]: tensor files; [`allreduce`]: the local end-to-end run;
//! - [`canary_experiment`]: `fanin experiment canary-*` (Canary's figures in the fabric simulator);
//! - [`kv`] and [`kv_experiment`]: `fanin kv` (ASK key-value jobs) and its experiments;
//! - [`hw`]: `fanin hw`, an FPGA switch's registers through a PCIe BAR or a JTAG Tcl script;
//! - [`cli`]: argument parsing and validation; [`error`]: exit statuses.

pub mod allreduce;
pub mod canary_experiment;
pub mod cli;
pub mod error;
pub mod hw;
pub mod kv;
pub mod kv_experiment;
pub mod leader;
pub mod link;
pub mod scheme;
pub mod sender;
pub mod switchd;
pub mod tensor;
