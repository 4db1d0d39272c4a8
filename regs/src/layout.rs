//! The packed words of the switch core, one table each: the job-table entry, the
//! child-table entry and the slot metadata. The RTL unpacks them by these names
//! (`fanin_hdl::layout`), the driver packs `job_ctrl` with them ([`crate::job_writes`]),
//! and docs/rtl.md's tables are generated from them (a test keeps the page equal).

/// One field of a packed word: bits `offset .. offset + width`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// snake_case name (the RTL's accessor is `get_value_<name>`).
    pub name: &'static str,
    /// Lowest bit.
    pub offset: usize,
    /// Bits.
    pub width: usize,
    /// What it holds, for docs/rtl.md.
    pub doc: &'static str,
}

impl Field {
    /// A field of `width` bits from bit `offset`.
    pub const fn new(name: &'static str, offset: usize, width: usize, doc: &'static str) -> Self {
        Self {
            name,
            offset,
            width,
            doc,
        }
    }

    /// The highest bit.
    pub const fn msb(&self) -> usize {
        self.offset + self.width - 1
    }

    /// `v` placed in this field (bits of `v` above the width are dropped).
    pub const fn place(&self, v: u64) -> u64 {
        let mask = if self.width >= 64 {
            u64::MAX
        } else {
            (1 << self.width) - 1
        };
        (v & mask) << self.offset
    }
}

/// A packed word: its width and its fields, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    /// Width in bits.
    pub width: usize,
    /// The fields, lowest first, not overlapping.
    pub fields: &'static [Field],
}

impl Layout {
    /// The Markdown table docs/rtl.md shows (`| bits | field |`).
    pub fn markdown(&self) -> String {
        let mut s = String::from("| bits | field |\n|---|---|\n");
        for f in self.fields {
            let bits = if f.width == 1 {
                format!("{}", f.offset)
            } else {
                format!("{}:{}", f.msb(), f.offset)
            };
            s.push_str(&format!("| {bits} | {} |\n", f.doc));
        }
        s
    }

    /// A field by name.
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

const fn f(name: &'static str, offset: usize, width: usize, doc: &'static str) -> Field {
    Field::new(name, offset, width, doc)
}

/// The job-table entry (576 bits, from the staging registers at `job_commit`). Bits 31:0
/// are the `job_ctrl` register as written.
pub mod job {
    use super::{f, Field, Layout};

    /// Valid (0: the entry is removed).
    pub const VALID: Field = f("valid", 0, 1, "valid");
    /// Inner switch (0: root).
    pub const INNER: Field = f("inner", 1, 1, "inner (0 = root)");
    /// Timeout mode (0: static).
    pub const TIMEOUT: Field = f("timeout", 2, 1, "timeout mode (0 = static)");
    /// Source validation: 0 off, 1 the IPv4 source, 2 the IPv4 source and the UDP source
    /// port ([`SRC_CHECK_OFF`], [`SRC_CHECK_IP`], [`SRC_CHECK_IP_PORT`]).
    pub const SRC_CHECK: Field = f(
        "src_check",
        3,
        2,
        "source validation: 0 off, 1 IPv4 source, 2 IPv4 source and UDP source port",
    );
    /// Sessions (JOIN/ACCEPT/REFUSE; docs/protocol.md, "Sessions"): at an inner switch, a
    /// JOIN goes up with BYPASS and an ACCEPT or REFUSE from the parent's port goes down to
    /// the children delivering its ranks; at the root, the session state (JOIN, ACCEPT,
    /// refusing blocks before the session).
    pub const SESSIONS: Field = f("sessions", 5, 1, "sessions");
    /// `src_check`: accept any source.
    pub const SRC_CHECK_OFF: u64 = 0;
    /// `src_check`: the IPv4 source must be the child's.
    pub const SRC_CHECK_IP: u64 = 1;
    /// `src_check`: the IPv4 source and the UDP source port must be the child's.
    pub const SRC_CHECK_IP_PORT: u64 = 2;
    /// Children aggregated here.
    pub const DEGREE_LIMIT: Field = f("degree_limit", 8, 8, "degree_limit");
    /// Number of children.
    pub const CHILDREN: Field = f("children", 16, 8, "number of children");
    /// This switch's child index at its parent.
    pub const INDEX_AT_PARENT: Field = f("index_at_parent", 24, 8, "index_at_parent");
    /// Job id.
    pub const JOB: Field = f("job", 32, 16, "job id");
    /// Ranks below this switch.
    pub const RANKS: Field = f("ranks", 64, 64, "ranks");
    /// Ranks this switch must hold to complete a block.
    pub const EXPECTED: Field = f(
        "expected",
        128,
        64,
        "expected (`JobEntry::expected()`, written by the driver)",
    );
    /// First slot of the job's range.
    pub const SLOT_BASE: Field = f("slot_base", 192, 32, "slot_base");
    /// Slots in the range.
    pub const SLOT_COUNT: Field = f("slot_count", 224, 32, "slot_count (a power of two)");
    /// Effective quota in copies.
    pub const QUOTA: Field = f(
        "quota",
        256,
        32,
        "effective quota (`JobEntry::effective_quota()`, written by the driver)",
    );
    /// Timeout mode: flush after (ticks).
    pub const FLUSH_AFTER: Field = f("flush_after", 288, 32, "flush_after (ticks)");
    /// Timeout mode: reclaim after (ticks).
    pub const RECLAIM_AFTER: Field = f("reclaim_after", 320, 32, "reclaim_after (ticks)");
    /// Parent IPv4 address.
    pub const PARENT_IP: Field = f("parent_ip", 352, 32, "parent IPv4");
    /// Parent MAC address.
    pub const PARENT_MAC: Field = f("parent_mac", 384, 48, "parent MAC");
    /// Parent UDP port.
    pub const PARENT_UDP: Field = f("parent_udp", 432, 16, "parent UDP port");
    /// Egress port toward the parent.
    pub const PARENT_PORT: Field = f("parent_port", 448, 8, "parent egress port");
    /// The entry's epoch.
    pub const EPOCH: Field = f(
        "epoch",
        464,
        32,
        "epoch (written at commit from the commit counter `jgen`)",
    );
    /// Idle reclaim: ticks without progress after which a busy copy is reclaimed (0: never).
    pub const RECLAIM_IDLE: Field = f(
        "reclaim_idle",
        512,
        32,
        "reclaim_idle (ticks without progress; 0: never)",
    );
    /// Sessions: the first block id of the entry's first session (`trust.first_block`).
    pub const FIRST_BLOCK: Field = f(
        "first_block",
        544,
        32,
        "first_block (sessions: the first session's first block id)",
    );
    /// The whole entry.
    pub const LAYOUT: Layout = Layout {
        width: 576,
        fields: &[
            VALID,
            INNER,
            TIMEOUT,
            SRC_CHECK,
            SESSIONS,
            DEGREE_LIMIT,
            CHILDREN,
            INDEX_AT_PARENT,
            JOB,
            RANKS,
            EXPECTED,
            SLOT_BASE,
            SLOT_COUNT,
            QUOTA,
            FLUSH_AFTER,
            RECLAIM_AFTER,
            PARENT_IP,
            PARENT_MAC,
            PARENT_UDP,
            PARENT_PORT,
            EPOCH,
            RECLAIM_IDLE,
            FIRST_BLOCK,
        ],
    };
}

/// A member of a session at the root (136 bits, address `entry · 64 + rank`): a rank's
/// latest JOIN, written by the engine (not by the driver).
pub mod member {
    use super::{f, Field, Layout};

    /// The nonce the rank joined with.
    pub const NONCE: Field = f("nonce", 0, 32, "nonce");
    /// Reply MAC address (the JOIN's source).
    pub const MAC: Field = f("mac", 32, 48, "reply MAC");
    /// Reply IPv4 address.
    pub const IP: Field = f("ip", 80, 32, "reply IPv4");
    /// Reply UDP port.
    pub const UDP: Field = f("udp", 112, 16, "reply UDP port");
    /// The port the JOIN came in on (the ACCEPT goes out of it).
    pub const PORT: Field = f("port", 128, 8, "reply egress port");
    /// The whole row.
    pub const LAYOUT: Layout = Layout {
        width: 136,
        fields: &[NONCE, MAC, IP, UDP, PORT],
    };
}

/// The child-table entry (168 bits, address `entry · 2^ceil(log2 max_children) + child`).
pub mod child {
    use super::{f, Field, Layout};

    /// Ranks the child delivers.
    pub const RANKS: Field = f("ranks", 0, 64, "ranks");
    /// Child MAC address.
    pub const MAC: Field = f("mac", 64, 48, "MAC");
    /// Child IPv4 address.
    pub const IP: Field = f("ip", 112, 32, "IPv4");
    /// Child UDP port.
    pub const UDP: Field = f("udp", 144, 16, "UDP port");
    /// Egress port toward the child.
    pub const PORT: Field = f("port", 160, 8, "egress port");
    /// The whole entry.
    pub const LAYOUT: Layout = Layout {
        width: 168,
        fields: &[RANKS, MAC, IP, UDP, PORT],
    };
}

/// Slot metadata (one 240-bit word per shadow copy, address `2·slot + copy`).
pub mod meta {
    use super::{f, Field, Layout};

    /// The copy's state (`SlotState` order).
    pub const STATE: Field = f(
        "state",
        0,
        3,
        "state: 0 Free, 1 Aggregating, 2 Emitted, 3 Done, 4 Stale",
    );
    /// Job-table entry that wrote it.
    pub const ENTRY: Field = f("entry", 8, 8, "job-table entry that wrote it");
    /// Low half of that entry's epoch.
    pub const EPOCH_LO: Field = f(
        "epoch_lo",
        16,
        16,
        "that entry's epoch when written, bits 15:0",
    );
    /// Block.
    pub const BLOCK: Field = f("block", 32, 32, "block");
    /// Contributor bitmap.
    pub const BITMAP: Field = f("bitmap", 64, 64, "contributor bitmap");
    /// Exponent.
    pub const EXPONENT: Field = f("exponent", 128, 8, "exponent");
    /// Header flags.
    pub const FLAGS: Field = f("flags", 136, 8, "flags (OVERFLOW, EXP_MISMATCH)");
    /// Elements.
    pub const ELEMENTS: Field = f("elements", 144, 16, "elements");
    /// Timer.
    pub const TIMER: Field = f(
        "timer",
        160,
        32,
        "timer (tick of the first contribution, or of the emission)",
    );
    /// High half of the epoch.
    pub const EPOCH_HI: Field = f("epoch_hi", 192, 16, "the epoch, bits 31:16");
    /// Tick of the copy's last progress (`SlotCopy::touched`: a contribution, an emission).
    pub const TOUCHED: Field = f(
        "touched",
        208,
        32,
        "touched (tick of the last contribution or emission; idle reclaim)",
    );
    /// The whole word.
    pub const LAYOUT: Layout = Layout {
        width: 240,
        fields: &[
            STATE, ENTRY, EPOCH_LO, BLOCK, BITMAP, EXPONENT, FLAGS, ELEMENTS, TIMER, EPOCH_HI,
            TOUCHED,
        ],
    };
}

/// A forwarding-table row as the read-back window shows it (`tbl_sel` table 4).
pub mod route {
    use super::{f, Field, Layout};

    /// Destination IPv4 address.
    pub const IP: Field = f("ip", 0, 32, "destination IPv4");
    /// Valid.
    pub const VALID: Field = f("valid", 39, 1, "valid");
    /// Egress port as a one-hot mask.
    pub const PORTS: Field = f("ports", 40, 8, "egress port (one-hot mask)");
    /// The whole row.
    pub const LAYOUT: Layout = Layout {
        width: 48,
        fields: &[IP, VALID, PORTS],
    };
}

/// A port-below row (`tbl_sel` table 3): the ranks a bypass-flagged packet may carry on
/// that port.
pub mod port_below {
    use super::{f, Field, Layout};

    /// The ranks.
    pub const RANKS: Field = f("ranks", 0, 64, "ranks below the job's children on the port");
    /// The whole row.
    pub const LAYOUT: Layout = Layout {
        width: 64,
        fields: &[RANKS],
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Fields are in order, inside the word and do not overlap.
    #[test]
    fn fields_are_ordered_and_disjoint() {
        for l in [
            job::LAYOUT,
            child::LAYOUT,
            meta::LAYOUT,
            route::LAYOUT,
            port_below::LAYOUT,
        ] {
            let mut next = 0;
            for f in l.fields {
                assert!(f.offset >= next, "{} overlaps the field before", f.name);
                assert!(f.width > 0);
                next = f.offset + f.width;
            }
            assert!(next <= l.width);
        }
    }
}
