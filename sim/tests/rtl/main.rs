//! Verilator testbenches of `fanin_core`, checked frame by frame and counter by counter
//! against the reference model. Every directed test runs under the four idle × backpressure
//! corners. Randomised tests take `FANIN_SEED` and print it on failure. `FANIN_SIM_CONFIG`
//! selects the configuration (default `default`; it must be built in).

mod aggregation;
mod arp;
mod common;
mod configs;
mod forwarding;
mod ingress;
mod jobtable;
mod malformed;
mod placed;
mod random;
mod readback;
mod sessions;
mod stray;
mod tree;
