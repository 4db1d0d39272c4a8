//! The host side of the protocol: a worker's assignment and its send/receive state machine.
//!
//! [`Worker`] is pure: it is given time and frames and returns frames. `fanin send` drives
//! it over a UDP socket; the property tests drive it through [`crate::netsim`].

use serde::{Deserialize, Serialize};

use crate::config::Endpoint;

/// Where one worker of a job sits in the job's tree, as `fanin place` emits it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Assignment {
    /// Job id.
    pub job: u16,
    /// The worker's rank: its bit in the contributor bitmap.
    pub rank: u8,
    /// Number of workers in the job.
    pub workers: u8,
    /// The worker's child index at its parent.
    pub child: u8,
    /// The worker's own address (where results arrive).
    pub me: Endpoint,
    /// The parent aggregation node (first aggregating switch, or the root).
    pub parent: Endpoint,
    /// Largest window allowed: the smallest `slot_count` of the job along the tree.
    pub window_limit: u32,
    /// Elements per packet.
    pub elements: u16,
}
