//! Key-value stream aggregation (ASK, ASPLOS '23): a second job kind beside the dense one.
//!
//! - [`wire`]: the key-value packets (types 8..=13) over the fanin header;
//! - [`switch`]: the switch side — aggregator arrays with shadow copies, per-channel `seen`
//!   windows in ASK's compact W-bit form with `PktState`, swap/fetch/clear;
//! - [`host`]: the sender (packetiser, window, retransmission, FIN) and the receiver
//!   (duplicate window, local aggregation, swap policy, fetch and merge);
//! - [`sim`]: an in-memory network of one reference switch and key-value hosts with faults.
//!
//! Keys are fixed-width u32 (a 64-bit aggregator: 32-bit key, 32-bit value, plus a valid
//! bit). Values are i32 summed with wrapping (two's-complement) addition, which is associative,
//! so the switch/host split never changes a sum. docs/protocol.md ("Key-value jobs") is the
//! prose form of this module.

pub mod host;
pub mod sim;
pub mod switch;
pub mod wire;

use serde::{Deserialize, Serialize};

use crate::config::{ConfigError, Endpoint};

/// Largest number of aggregators per array and copy.
pub const MAX_SIZE: u32 = 1 << 20;
/// Largest sender window (packets in flight per data channel).
pub const MAX_WINDOW: u32 = 1024;

/// A key-value job-table entry (`SwitchConfig::kv_jobs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct KvJobEntry {
    /// Job id (a namespace of its own: key-value packets never reach dense jobs).
    pub job: u16,
    /// Aggregator arrays, = tuples per packet (1..=64).
    pub arrays: u8,
    /// Aggregators per array and shadow copy, a power of two (1..=2^20).
    pub size: u32,
    /// Data channels `0..channels` (each with its own `seen` window; 1..=256).
    pub channels: u16,
    /// Sender window W in packets, a power of two (1..=1024).
    pub window: u32,
    /// The receiver host: forwarded tuples and FINs go there; only it may swap/fetch/clear.
    pub receiver: Endpoint,
}

impl KvJobEntry {
    /// Checks the entry's ranges.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |why: String| {
            Err(ConfigError::BadJob {
                job: self.job,
                why: format!("key-value job: {why}"),
            })
        };
        if self.arrays == 0 || self.arrays as usize > wire::MAX_TUPLES {
            return bad(format!("arrays = {} is not in 1..=64", self.arrays));
        }
        if !self.size.is_power_of_two() || self.size > MAX_SIZE {
            return bad(format!(
                "size = {} is not a power of two up to 2^20",
                self.size
            ));
        }
        if self.channels == 0 || self.channels > 256 {
            return bad(format!("channels = {} is not in 1..=256", self.channels));
        }
        if !self.window.is_power_of_two() || self.window > MAX_WINDOW {
            return bad(format!(
                "window = {} is not a power of two up to 1024",
                self.window
            ));
        }
        Ok(())
    }
}

/// Checks a key-value job table: every entry valid, job ids distinct.
pub fn validate_jobs(jobs: &[KvJobEntry]) -> Result<(), ConfigError> {
    for (i, j) in jobs.iter().enumerate() {
        j.validate()?;
        if jobs[..i].iter().any(|o| o.job == j.job) {
            return Err(ConfigError::DuplicateJob(j.job));
        }
    }
    Ok(())
}

/// MurmurHash3's 64-bit finaliser: the hash behind every key placement.
pub fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

const SEED_ARRAY: u64 = 0x9e37_79b9_7f4a_7c15;
const SEED_SLOT: u64 = 0x2545_f491_4f6c_dd1d;
const SEED_CHANNEL: u64 = 0x6a09_e667_f3bc_c909;

/// The aggregator array (= packet tuple slot) a key belongs to: ASK's key-space partition.
pub fn array_of(key: u32, arrays: u8) -> usize {
    (mix(key as u64 ^ SEED_ARRAY) % arrays as u64) as usize
}

/// The aggregator of a key inside its array (`size` a power of two).
pub fn slot_of(key: u32, size: u32) -> u32 {
    (mix(key as u64 ^ SEED_SLOT) & (size as u64 - 1)) as u32
}

/// Which of a sender's `n` data channels carries a key.
pub fn channel_of(key: u32, n: usize) -> usize {
    (mix(key as u64 ^ SEED_CHANNEL) % n as u64) as usize
}
