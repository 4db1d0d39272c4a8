//! Control-plane configuration: a switch's identity, forwarding table and job table.
//!
//! This is the per-switch file that `fanin place` emits and that `fanin switchd`, the RTL
//! register driver and the testbenches load (JSON via serde). [`SwitchConfig::validate`]
//! rejects anything the data path could misbehave on, with an error naming the job and field.

use core::net::Ipv4Addr;
use serde::{Deserialize, Serialize};

use crate::wire::ranks::RANK_WORDS;
use crate::wire::{RankSet, FANIN_UDP_PORT, MAX_RANKS, MAX_WIRE_ELEMENTS, MAX_WORKERS};

/// One end of a job's tree edge: where to send frames, and out of which port.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Endpoint {
    /// Ethernet address of the next hop.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// UDP port.
    #[serde(default = "default_port")]
    pub udp_port: u16,
    /// Egress port of this switch (ignored by the software switch, which uses sockets).
    #[serde(default)]
    pub port: u8,
}

fn default_port() -> u16 {
    FANIN_UDP_PORT
}

impl Endpoint {
    /// The endpoint as a datagram address (MAC, IPv4 address, UDP port).
    pub fn l4(&self) -> crate::wire::L4Addr {
        crate::wire::L4Addr {
            mac: self.mac,
            ip: self.ip,
            port: self.udp_port,
        }
    }
}

/// A child of this switch in a job's tree: a worker or a lower switch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Child {
    /// Where results for this child are sent.
    pub endpoint: Endpoint,
    /// Worker ranks this child delivers in its non-bypass packets (a worker: one bit).
    pub ranks: u64,
    /// Every rank below this child, also those a degree limit makes it bypass (0: `ranks`).
    /// Bypass-flagged packets and JOINs naming a rank arrive on this child's link only.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub below: u64,
}

fn is_zero(v: &u64) -> bool {
    *v == 0
}

impl Child {
    /// Every rank below this child.
    pub fn below(&self) -> u64 {
        self.below | self.ranks
    }
}

/// Where a switch sits in a job's tree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Role {
    /// The top of the tree: completes the sum and multicasts the result down.
    Root,
    /// Below another aggregation node: sends its aggregate (and bypassed packets) up.
    Inner {
        /// The parent aggregation node.
        parent: Endpoint,
        /// This switch's child index at the parent.
        index_at_parent: u8,
    },
}

/// How a job's slots complete.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Mode {
    /// Complete when every expected contribution has arrived.
    Static,
    /// Canary style: also flush a partial aggregate `flush_after` ticks after its first
    /// contribution, and reclaim a flushed slot `reclaim_after` ticks after the flush.
    Timeout {
        /// Ticks from a slot's first contribution to its flush.
        flush_after: u64,
        /// Ticks from a flush to the slot's reclaim.
        reclaim_after: u64,
    },
    /// Canary's dynamic trees (docs/protocol.md, "Dynamic mode"): every switch on the way to
    /// the block's leader host intercepts the job's contributions, sums what arrives within
    /// `flush_after`, and sends the result down the ports the contributions came in on. The
    /// entry's `role`, `children` and `degree_limit` are unused (children may be empty).
    Dynamic {
        /// Ticks from a copy's first contribution to its flush toward the leader.
        flush_after: u64,
        /// Ticks from a flush to the copy's reclaim if no result came down.
        reclaim_after: u64,
    },
}

/// A job-table entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobEntry {
    /// Job id.
    pub job: u16,
    /// Root or inner node.
    pub role: Role,
    /// Completion mode.
    #[serde(default = "default_mode")]
    pub mode: Mode,
    /// Children `0..degree_limit` are aggregated here; the rest are forwarded unaggregated.
    pub degree_limit: u8,
    /// Children, by child index.
    pub children: Vec<Child>,
    /// All worker ranks below this switch (at the root: every rank of the job): ranks 0..64.
    pub ranks: u64,
    /// Ranks 64 and above, as 64-bit words: word `i` holds ranks `64(i+1)..64(i+2)` (at most
    /// 7 words, [`MAX_RANKS`]). Only dynamic jobs have them; they use header version 2.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ranks_hi: Vec<u64>,
    /// First slot of the job's range.
    pub slot_base: u32,
    /// Number of slots in the job's range, a power of two (each slot has two shadow copies).
    pub slot_count: u32,
    /// Most copies the job may hold busy at once (0 means `2 * slot_count`).
    #[serde(default)]
    pub quota: u32,
    /// Sessions, source validation and slot hygiene (docs/protocol.md, "Trust").
    #[serde(default)]
    pub trust: Trust,
}

fn default_mode() -> Mode {
    Mode::Static
}

/// Which sources a switch accepts a job's packets from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SourceCheck {
    /// Accept any source (the protocol before source checks; tests of other features).
    Off,
    /// The IPv4 source must be the configured endpoint's.
    Ip,
    /// The IPv4 source and the UDP source port must be the configured endpoint's.
    #[default]
    IpPort,
}

/// Default [`Trust::reclaim_idle`]: 1 s in `fanin switchd`'s microsecond ticks.
pub const DEFAULT_RECLAIM_IDLE: u64 = 1_000_000;

/// How a job is protected against stale results, foreign traffic and leaked slot copies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Trust {
    /// Workers open each allreduce with a session handshake (JOIN/ACCEPT) at the root, which
    /// hands out block ids never used before in the job's life and refuses older blocks.
    #[serde(default = "yes")]
    pub sessions: bool,
    /// Where contributions and results are accepted from.
    #[serde(default)]
    pub source_check: SourceCheck,
    /// Ticks without progress after which a busy slot copy is reclaimed (0: never).
    #[serde(default = "default_reclaim_idle")]
    pub reclaim_idle: u64,
    /// First block id of the job's first session; `None` lets the switch choose (switchd
    /// picks one at random, so a restarted root never reissues its predecessor's block ids).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub first_block: Option<u32>,
}

fn yes() -> bool {
    true
}

fn default_reclaim_idle() -> u64 {
    DEFAULT_RECLAIM_IDLE
}

impl Default for Trust {
    fn default() -> Self {
        Self {
            sessions: true,
            source_check: SourceCheck::IpPort,
            reclaim_idle: DEFAULT_RECLAIM_IDLE,
            first_block: None,
        }
    }
}

impl Trust {
    /// Every protection off: the protocol before the trust features (the RTL implements all
    /// but sessions: an FPGA job runs with `sessions: false`).
    pub const OFF: Trust = Trust {
        sessions: false,
        source_check: SourceCheck::Off,
        reclaim_idle: 0,
        first_block: None,
    };

    /// True if any protection is on.
    pub fn any(&self) -> bool {
        self.sessions || self.source_check != SourceCheck::Off || self.reclaim_idle != 0
    }
}

impl JobEntry {
    /// Every rank of the entry: `ranks` and `ranks_hi` (words past [`MAX_RANKS`] are left
    /// out; [`JobEntry::validate`] refuses them).
    pub fn rank_set(&self) -> RankSet {
        let mut s = RankSet::from_u64(self.ranks);
        for (w, &v) in s.0[1..].iter_mut().zip(&self.ranks_hi) {
            *w = v;
        }
        s
    }

    /// The header version of the job's packets: 2 if it has a rank at or above 64.
    pub fn header_version(&self) -> u8 {
        crate::wire::wide::version_for(&self.rank_set())
    }

    /// Ranks this switch must hold before it completes a block.
    pub fn expected(&self) -> u64 {
        match self.role {
            Role::Root => self.ranks,
            Role::Inner { .. } => self
                .children
                .iter()
                .take(self.degree_limit as usize)
                .fold(0, |m, c| m | c.ranks),
        }
    }

    /// Effective quota (copies).
    pub fn effective_quota(&self) -> u32 {
        if self.quota == 0 {
            self.slot_count.saturating_mul(2)
        } else {
            self.quota
        }
    }

    /// Expected fan-in: the number of children.
    pub fn fan_in(&self) -> usize {
        self.children.len()
    }
}

/// Sizes of a switch's tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Params {
    /// Number of aggregation slots (each with two shadow copies).
    pub slots: u32,
    /// int32 lanes per slot: the largest element count a packet may carry.
    pub elements: u16,
    /// Job-table entries.
    pub max_jobs: u16,
    /// Children per job entry.
    pub max_children: u8,
    /// Forwarding-table entries.
    pub max_routes: u16,
    /// Number of switch ports.
    pub ports: u8,
}

impl Default for Params {
    fn default() -> Self {
        Self {
            slots: 256,
            elements: 64,
            max_jobs: 16,
            max_children: 16,
            max_routes: 64,
            ports: 4,
        }
    }
}

/// A forwarding-table entry: frames to `ip` leave through `port`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Route {
    /// Destination address (exact match).
    pub ip: Ipv4Addr,
    /// Egress port.
    pub port: u8,
}

/// Everything one switch loads: identity, table sizes, forwarding table and job table.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchConfig {
    /// Human-readable name (e.g. the topology node id).
    pub name: String,
    /// The switch's own Ethernet address.
    pub mac: [u8; 6],
    /// The switch's own IPv4 address: fanin packets to it are aggregated.
    pub ip: Ipv4Addr,
    /// The UDP port fanin packets are addressed to.
    #[serde(default = "default_port")]
    pub udp_port: u16,
    /// Table sizes.
    #[serde(default)]
    pub params: Params,
    /// Forwarding table for frames not addressed to the switch.
    #[serde(default)]
    pub routes: Vec<Route>,
    /// Job table.
    #[serde(default)]
    pub jobs: Vec<JobEntry>,
    /// Key-value (ASK) job table, see [`crate::kv`].
    #[serde(default)]
    pub kv_jobs: Vec<crate::kv::KvJobEntry>,
}

/// A configuration the switch refuses, naming what was wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// A table-size parameter is out of range.
    #[error("parameter {name} = {value} is out of range ({why})")]
    BadParam {
        /// Parameter name.
        name: &'static str,
        /// Its value.
        value: u64,
        /// The allowed range.
        why: &'static str,
    },
    /// Two job entries share a job id.
    #[error("job {0}: duplicate job id")]
    DuplicateJob(u16),
    /// More jobs than the job table holds.
    #[error("{0} jobs exceed the job table ({1} entries)")]
    TooManyJobs(usize, u16),
    /// More routes than the forwarding table holds.
    #[error("{0} routes exceed the forwarding table ({1} entries)")]
    TooManyRoutes(usize, u16),
    /// A job entry is inconsistent.
    #[error("job {job}: {why}")]
    BadJob {
        /// The job id.
        job: u16,
        /// What is wrong.
        why: String,
    },
}

impl SwitchConfig {
    /// A switch with default table sizes, no routes and no jobs.
    pub fn new(name: &str, mac: [u8; 6], ip: Ipv4Addr) -> Self {
        Self {
            name: name.into(),
            mac,
            ip,
            udp_port: FANIN_UDP_PORT,
            params: Params::default(),
            routes: vec![],
            jobs: vec![],
            kv_jobs: vec![],
        }
    }

    /// Checks the whole configuration.
    pub fn validate(&self) -> Result<(), ConfigError> {
        self.params.validate()?;
        crate::kv::validate_jobs(&self.kv_jobs)?;
        if self.routes.len() > self.params.max_routes as usize {
            return Err(ConfigError::TooManyRoutes(
                self.routes.len(),
                self.params.max_routes,
            ));
        }
        if self.jobs.len() > self.params.max_jobs as usize {
            return Err(ConfigError::TooManyJobs(
                self.jobs.len(),
                self.params.max_jobs,
            ));
        }
        for (i, j) in self.jobs.iter().enumerate() {
            j.validate(&self.params)?;
            for other in &self.jobs[..i] {
                if other.job == j.job {
                    return Err(ConfigError::DuplicateJob(j.job));
                }
                check_disjoint_ranges(other, j)?;
            }
        }
        Ok(())
    }
}

/// Two jobs' slot ranges must not overlap: a slot belongs to one job.
pub fn check_disjoint_ranges(a: &JobEntry, b: &JobEntry) -> Result<(), ConfigError> {
    let (a0, a1) = (a.slot_base as u64, a.slot_base as u64 + a.slot_count as u64);
    let (b0, b1) = (b.slot_base as u64, b.slot_base as u64 + b.slot_count as u64);
    if a0 < b1 && b0 < a1 {
        return Err(ConfigError::BadJob {
            job: b.job,
            why: format!("slots {b0}..{b1} overlap job {}'s slots {a0}..{a1}", a.job),
        });
    }
    Ok(())
}

impl Params {
    /// Checks the table sizes.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |name, value: u64, why| Err(ConfigError::BadParam { name, value, why });
        if self.slots == 0 || self.slots > 1 << 20 {
            return bad("slots", self.slots as u64, "1..=1048576");
        }
        if self.elements == 0 || self.elements > MAX_WIRE_ELEMENTS {
            return bad(
                "elements",
                self.elements as u64,
                "1..=2237 (MAX_WIRE_ELEMENTS)",
            );
        }
        if self.max_jobs == 0 {
            return bad("max_jobs", 0, "at least 1");
        }
        if self.max_children == 0 || self.max_children as u32 > MAX_WORKERS {
            return bad("max_children", self.max_children as u64, "1..=64");
        }
        if self.ports < 1 {
            return bad("ports", 0, "at least 1");
        }
        Ok(())
    }
}

impl JobEntry {
    /// Checks one entry against the table sizes.
    pub fn validate(&self, p: &Params) -> Result<(), ConfigError> {
        let bad = |why: String| Err(ConfigError::BadJob { job: self.job, why });
        if self.ranks_hi.len() > RANK_WORDS - 1 {
            return bad(format!(
                "ranks_hi has {} words: a job has at most {MAX_RANKS} ranks (MAX_RANKS, the version-2 header's bitmap), so at most {} words above ranks",
                self.ranks_hi.len(),
                RANK_WORDS - 1
            ));
        }
        if let Mode::Dynamic { .. } = self.mode {
            return crate::model::dynamic::validate_entry(self, p).or_else(bad);
        }
        if self.rank_set().is_wide() {
            return bad(format!(
                "ranks at or above {MAX_WORKERS} (ranks_hi) need mode dynamic: static and timeout jobs use the {MAX_WORKERS}-rank bitmap of header version 1"
            ));
        }
        if self.children.is_empty() {
            return bad("no children".into());
        }
        if self.children.len() > p.max_children as usize {
            return bad(format!(
                "{} children exceed the limit of {}",
                self.children.len(),
                p.max_children
            ));
        }
        if self.degree_limit == 0 {
            return bad("degree_limit must be at least 1".into());
        }
        if matches!(self.role, Role::Root) && (self.degree_limit as usize) < self.children.len() {
            return bad(format!(
                "the root must aggregate all {} children (degree_limit {}): it has no parent to forward to",
                self.children.len(),
                self.degree_limit
            ));
        }
        if self.ranks == 0 {
            return bad("ranks is empty".into());
        }
        let mut seen = 0u64;
        for (i, c) in self.children.iter().enumerate() {
            if c.ranks == 0 {
                return bad(format!("child {i} delivers no ranks"));
            }
            if c.ranks & seen != 0 {
                return bad(format!("child {i} shares ranks with an earlier child"));
            }
            if c.ranks & !self.ranks != 0 {
                return bad(format!(
                    "child {i} delivers ranks outside the job entry's ranks"
                ));
            }
            if c.below() & !self.ranks != 0 {
                return bad(format!(
                    "child {i} has ranks below it outside the job entry's ranks"
                ));
            }
            if c.endpoint.port >= p.ports {
                return bad(format!(
                    "child {i} port {} does not exist ({} ports)",
                    c.endpoint.port, p.ports
                ));
            }
            seen |= c.ranks;
        }
        if let Role::Inner { parent, .. } = self.role {
            if parent.port >= p.ports {
                return bad(format!(
                    "parent port {} does not exist ({} ports)",
                    parent.port, p.ports
                ));
            }
        }
        if !self.slot_count.is_power_of_two() {
            return bad(format!("slot_count {} must be a power of two (hardware indexes slots by the block's low bits)", self.slot_count));
        }
        if self.slot_base as u64 + self.slot_count as u64 > p.slots as u64 {
            return bad(format!(
                "slots {}..{} exceed the {} slots",
                self.slot_base,
                self.slot_base as u64 + self.slot_count as u64,
                p.slots
            ));
        }
        if let Mode::Timeout {
            flush_after,
            reclaim_after,
        } = self.mode
        {
            if flush_after == 0 || reclaim_after == 0 {
                return bad("timeouts must be at least 1 tick".into());
            }
        }
        if self.trust.sessions && self.trust.source_check == SourceCheck::Off {
            return bad("sessions need source_check ip or ip_port: a forged JOIN could otherwise open or hold a session".into());
        }
        Ok(())
    }
}
