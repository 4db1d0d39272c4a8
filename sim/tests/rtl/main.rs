//! Verilator testbenches of `fanin_core`, checked frame by frame and counter by counter
//! against the reference model. Every directed test runs under the four idle × backpressure
//! corners. Randomised tests take `FANIN_SEED` and print it on failure.

mod aggregation;
mod common;
mod forwarding;
mod ingress;
mod malformed;
mod random;
mod tree;
