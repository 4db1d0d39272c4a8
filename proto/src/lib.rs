//! fanin-proto: the fanin wire format and the reference model of the aggregation switch.
//!
//! This crate is the single definition of fanin's behaviour. It does no I/O:
//! - [`wire`] parses and emits the fanin header and whole Ethernet/IPv4/UDP frames;
//! - [`config`] is the control-plane job table that `fanin place` emits and switches load;
//! - [`model`] is the deterministic switch state machine
//!   `(state, input frame, time) -> (output frames, counter changes)`;
//! - [`worker`] is the host side of the protocol (windowing, retransmission);
//! - [`join`] is the worker's side of the session handshake;
//! - [`quant`] is the float <-> int32 quantisation scheme;
//! - [`plan`] turns a physical tree of switches and workers into every node's configuration;
//! - [`kv`] is ASK-style key-value stream aggregation (wire, switch state, hosts);
//! - [`forge`] makes the hostile traffic of the trust campaigns;
//! - [`fabric`] is a packet-level leaf–spine simulator (queues, congestion, failures) for
//!   Canary's dynamic mode and its baselines;
//! - [`netsim`] is an in-memory network of switches and workers used by the property tests;
//! - [`fault`] is the one seeded fault model (loss, duplication, reordering) of every link
//!   that injects faults: the simulators here, the Verilator harness and the sockets.
//!
//! The RTL (fanin-hdl), the software switch (fanin `switchd`) and the testbench scoreboard
//! (fanin-sim) are all checked against [`model::Switch`].
// One audited exception: the float-to-int conversion in `quant::round_clamp32`.
#![deny(unsafe_code)]

pub mod config;
pub mod fabric;
pub mod fault;
pub mod forge;
pub mod join;
pub mod kv;
pub mod model;
pub mod netsim;
pub mod plan;
pub mod quant;
pub mod wire;
pub mod worker;
