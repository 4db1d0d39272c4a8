//! Switch counters. [`Counter`] is the one table the RTL register map, the software
//! switch's `stats` output and the docs are generated from.

use serde::{Deserialize, Serialize};

macro_rules! counters {
    ($($(#[doc = $doc:literal])* $name:ident => $key:literal,)*) => {
        /// A global switch counter (per-port counters are in [`PortCounters`]).
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Counter { $($(#[doc = $doc])* $name,)* }

        impl Counter {
            /// Every counter, in register order.
            pub const ALL: &'static [Counter] = &[$(Counter::$name,)*];
            /// Number of counters.
            pub const COUNT: usize = Self::ALL.len();
            /// snake_case name used in JSON, registers and docs.
            pub fn name(self) -> &'static str {
                match self { $(Counter::$name => $key,)* }
            }
            /// One-line description.
            pub fn doc(self) -> &'static str {
                match self { $(Counter::$name => concat!($($doc),*).trim_ascii(),)* }
            }
        }
    };
}

counters! {
    /// Shadow copies currently busy (aggregating, or emitted and awaiting the result).
    SlotsInUse => "slots_in_use",
    /// Highest value `slots_in_use` has reached.
    SlotsHighWater => "slots_high_water",
    /// Contributions added into a slot.
    Aggregated => "aggregated",
    /// Aggregates sent upward or results multicast at the root.
    Completions => "completions",
    /// Result copies sent to children (multicast) or replayed to a duplicate.
    ResultsSent => "results_sent",
    /// Contributions already held in a slot: suppressed, never added twice.
    Duplicates => "duplicates",
    /// Contributions overlapping a slot's contributors only in part: dropped.
    Overlaps => "overlaps",
    /// Stored aggregates re-sent upward because a duplicate showed the parent may lack them.
    Reemits => "reemits",
    /// Bypassed: the job's slot copy is busy with another block.
    BypassCollision => "bypass_collision",
    /// Bypassed: the job already holds its quota of busy copies.
    BypassQuota => "bypass_quota",
    /// Bypassed: the child is beyond the job's degree limit.
    BypassDegree => "bypass_degree",
    /// Bypassed: the block was already sent upward, flushed or reclaimed here.
    BypassStraggler => "bypass_straggler",
    /// Bypass-flagged packets passed on toward the root.
    BypassTransit => "bypass_transit",
    /// Collision or quota at the root, which has no parent: dropped, the sender retransmits.
    RootDrops => "root_drops",
    /// fanin packets for a job not in the job table: dropped.
    UnknownJob => "unknown_job",
    /// Malformed frames or fanin packets addressed to the switch: dropped.
    Malformed => "malformed",
    /// Partial aggregates flushed by a timeout.
    Timeouts => "timeouts",
    /// Stale slot copies reclaimed.
    Reclaims => "reclaims",
    /// Frames switched by the forwarding table.
    Forwarded => "forwarded",
    /// Frames with no forwarding-table entry: dropped.
    NoRoute => "no_route",
    /// Non-IPv4 frames: dropped.
    NonIp => "non_ip",
    /// Packets from a source the job entry does not name for them: dropped.
    BadSource => "bad_source",
    /// Busy slot copies reclaimed after making no progress for the job's `reclaim_idle`.
    IdleReclaims => "idle_reclaims",
    /// JOIN packets taken (at the root) or passed toward the root (at an inner switch).
    Joins => "joins",
    /// Sessions opened at the root (every rank joined; the job's copies were freed).
    Sessions => "sessions",
    /// Contributions refused at the root (no session, or a block of an earlier session).
    Refused => "refused",
    /// ARP requests for the switch's IPv4 address, answered on their ingress port.
    ArpReplies => "arp_replies",
}

/// Per-port packet and byte counters.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PortCounters {
    /// Frames received.
    pub rx_packets: u64,
    /// Bytes received.
    pub rx_bytes: u64,
    /// Frames sent.
    pub tx_packets: u64,
    /// Bytes sent.
    pub tx_bytes: u64,
}

/// All counters of one switch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Counters {
    values: [u64; Counter::COUNT],
    /// Per-port counters, indexed by port.
    pub ports: Vec<PortCounters>,
}

impl Counters {
    /// Zeroed counters for `ports` ports.
    pub fn new(ports: usize) -> Self {
        Self {
            values: [0; Counter::COUNT],
            ports: vec![PortCounters::default(); ports],
        }
    }
    /// Reads a counter.
    pub fn get(&self, c: Counter) -> u64 {
        self.values[c as usize]
    }
    pub(crate) fn add(&mut self, c: Counter, n: u64) {
        self.values[c as usize] += n;
    }
    pub(crate) fn inc(&mut self, c: Counter) {
        self.add(c, 1);
    }
    pub(crate) fn set(&mut self, c: Counter, v: u64) {
        self.values[c as usize] = v;
    }
    /// `(name, value)` pairs in register order.
    pub fn named(&self) -> Vec<(&'static str, u64)> {
        Counter::ALL
            .iter()
            .map(|&c| (c.name(), self.get(c)))
            .collect()
    }
}
