//! The register map: one table from which the RTL decoder constants, the C header, the
//! manifest and docs/registers.md are all generated.

use crate::config::CoreConfig;
use fanin_proto::model::Counter;
use serde::Serialize;
use std::fmt::Write;

/// Register access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub enum Access {
    /// Read only.
    RO,
    /// Read and write.
    RW,
    /// Write only (reads return 0).
    WO,
}

/// One 32-bit register.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reg {
    /// Byte address.
    pub addr: u32,
    /// snake_case name.
    pub name: String,
    /// Access.
    pub access: Access,
    /// One-line description.
    pub doc: String,
}

/// Base of the global counters (`Counter::ALL`, 8 bytes each: low word then high word).
pub const COUNTER_BASE: u32 = 0x100;
/// Base of the per-port counters (32 bytes per port).
pub const PORT_BASE: u32 = 0x400;
/// Base of the per-port bad-frame counters (4 bytes per port).
pub const RX_BAD_BASE: u32 = 0x600;

/// Base of the job-table staging registers.
pub const JOB_BASE: u32 = 0x800;
/// Base of the child-table staging registers.
pub const CHILD_BASE: u32 = 0x880;
/// Base of the port-below staging registers (bypass source checks, docs/protocol.md
/// "Source validation").
pub const PORT_BELOW_BASE: u32 = 0x8c0;
/// The table read-back select register (`tbl_sel`).
pub const TBL_SEL: u32 = 0x8e0;
/// Base of the table read-back window (`tbl_data0..`, 4 bytes per 32-bit word of a row).
pub const TBL_DATA_BASE: u32 = 0x900;
/// Words in the read-back window: the widest row (a job-table entry).
pub const TBL_WORDS: u32 = crate::layout::job::LAYOUT.width.div_ceil(32) as u32;

/// The tables `tbl_sel` selects (bits 31:28).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Table {
    /// The job table (row: entry).
    Job = 1,
    /// The child table (row: entry << 8 | child).
    Child = 2,
    /// The port-below table (row: entry << 8 | port).
    PortBelow = 3,
    /// The forwarding table (row: entry).
    Route = 4,
}

impl Table {
    /// The `tbl_sel` value that selects `row` of this table.
    pub fn select(self, row: u32) -> u32 {
        (self as u32) << 28 | (row & 0xffff)
    }
}

/// Base of the per-entry busy-copy counters (4 bytes per job-table entry).
pub const JOB_BUSY_BASE: u32 = 0xa00;

/// Addresses of the switch's identity and timer registers, and of the forwarding-table
/// staging registers.
pub mod addr {
    /// `me_ip`.
    pub const ME_IP: u32 = 0x40;
    /// `me_udp_port`.
    pub const ME_UDP_PORT: u32 = 0x44;
    /// `me_mac_lo`.
    pub const ME_MAC_LO: u32 = 0x48;
    /// `me_mac_hi`.
    pub const ME_MAC_HI: u32 = 0x4c;
    /// `tick_div`.
    pub const TICK_DIV: u32 = 0x50;
    /// `tick`.
    pub const TICK: u32 = 0x54;
    /// `scan_ticks`.
    pub const SCAN_TICKS: u32 = 0x58;
    /// `route_ip`.
    pub const ROUTE_IP: u32 = 0x80;
    /// `route_port`.
    pub const ROUTE_PORT: u32 = 0x84;
    /// `route_commit`.
    pub const ROUTE_COMMIT: u32 = 0x88;
}

/// Offsets of the job staging registers from [`JOB_BASE`] (names and docs in [`JOB_REGS`]).
pub mod job_reg {
    /// `job_id`.
    pub const ID: u32 = 0x00;
    /// `job_ctrl`.
    pub const CTRL: u32 = 0x04;
    /// `job_ranks_lo`.
    pub const RANKS_LO: u32 = 0x08;
    /// `job_ranks_hi`.
    pub const RANKS_HI: u32 = 0x0c;
    /// `job_expected_lo`.
    pub const EXPECTED_LO: u32 = 0x10;
    /// `job_expected_hi`.
    pub const EXPECTED_HI: u32 = 0x14;
    /// `job_slot_base`.
    pub const SLOT_BASE: u32 = 0x18;
    /// `job_slot_count`.
    pub const SLOT_COUNT: u32 = 0x1c;
    /// `job_quota`.
    pub const QUOTA: u32 = 0x20;
    /// `job_flush_after`.
    pub const FLUSH_AFTER: u32 = 0x24;
    /// `job_reclaim_after`.
    pub const RECLAIM_AFTER: u32 = 0x28;
    /// `job_parent_mac_lo`.
    pub const PARENT_MAC_LO: u32 = 0x2c;
    /// `job_parent_mac_hi`.
    pub const PARENT_MAC_HI: u32 = 0x30;
    /// `job_parent_ip`.
    pub const PARENT_IP: u32 = 0x34;
    /// `job_parent_udp`.
    pub const PARENT_UDP: u32 = 0x38;
    /// `job_parent_port`.
    pub const PARENT_PORT: u32 = 0x3c;
    /// `job_commit`.
    pub const COMMIT: u32 = 0x40;
    /// `job_reclaim_idle`.
    pub const RECLAIM_IDLE: u32 = 0x44;
    /// `job_first_block`.
    pub const FIRST_BLOCK: u32 = 0x48;
}

/// Offsets of the port-below staging registers from [`PORT_BELOW_BASE`].
pub mod port_below_reg {
    /// `port_below_lo`.
    pub const LO: u32 = 0x00;
    /// `port_below_hi`.
    pub const HI: u32 = 0x04;
    /// `port_below_commit`.
    pub const COMMIT: u32 = 0x08;
}

/// Offsets of the child staging registers from [`CHILD_BASE`] (names and docs in
/// [`CHILD_REGS`]).
pub mod child_reg {
    /// `child_mac_lo`.
    pub const MAC_LO: u32 = 0x00;
    /// `child_mac_hi`.
    pub const MAC_HI: u32 = 0x04;
    /// `child_ip`.
    pub const IP: u32 = 0x08;
    /// `child_udp`.
    pub const UDP: u32 = 0x0c;
    /// `child_port`.
    pub const PORT: u32 = 0x10;
    /// `child_ranks_lo`.
    pub const RANKS_LO: u32 = 0x14;
    /// `child_ranks_hi`.
    pub const RANKS_HI: u32 = 0x18;
    /// `child_commit`.
    pub const COMMIT: u32 = 0x1c;
}

/// Job staging registers: (offset from `JOB_BASE`, name, doc). Committed by `job_commit`.
pub const JOB_REGS: &[(u32, &str, &str)] = &[
    (job_reg::ID, "job_id", "Staging: job id (bits 15:0)."),
    (job_reg::CTRL, "job_ctrl", "Staging: bit 0 valid (0 removes the entry), bit 1 inner (0 root), bit 2 timeout mode (0 static), bits 4:3 source validation (0 off, 1 IPv4 source, 2 IPv4 source and UDP source port), bit 5 sessions (JOIN/ACCEPT/REFUSE; at the root the session state), bits 15:8 degree_limit, bits 23:16 number of children, bits 31:24 index_at_parent."),
    (job_reg::RANKS_LO, "job_ranks_lo", "Staging: ranks bits 31:0."),
    (job_reg::RANKS_HI, "job_ranks_hi", "Staging: ranks bits 63:32."),
    (job_reg::EXPECTED_LO, "job_expected_lo", "Staging: expected contributors (JobEntry::expected(), written by the driver) bits 31:0."),
    (job_reg::EXPECTED_HI, "job_expected_hi", "Staging: expected contributors bits 63:32."),
    (job_reg::SLOT_BASE, "job_slot_base", "Staging: first slot of the job's range."),
    (job_reg::SLOT_COUNT, "job_slot_count", "Staging: slots in the range (a power of two)."),
    (job_reg::QUOTA, "job_quota", "Staging: effective quota in copies (JobEntry::effective_quota(), written by the driver)."),
    (job_reg::FLUSH_AFTER, "job_flush_after", "Staging: timeout mode flush_after in ticks (32 bits; the driver clamps)."),
    (job_reg::RECLAIM_AFTER, "job_reclaim_after", "Staging: timeout mode reclaim_after in ticks (32 bits; the driver clamps)."),
    (job_reg::PARENT_MAC_LO, "job_parent_mac_lo", "Staging: parent MAC bytes 2..5 (byte 2 in bits 31:24)."),
    (job_reg::PARENT_MAC_HI, "job_parent_mac_hi", "Staging: parent MAC bytes 0..1 (byte 0 in bits 15:8)."),
    (job_reg::PARENT_IP, "job_parent_ip", "Staging: parent IPv4 address."),
    (job_reg::PARENT_UDP, "job_parent_udp", "Staging: parent UDP port (bits 15:0)."),
    (job_reg::PARENT_PORT, "job_parent_port", "Staging: egress port toward the parent."),
    (job_reg::RECLAIM_IDLE, "job_reclaim_idle", "Staging: idle reclaim, ticks without progress after which a busy slot copy is reclaimed (0: never; 32 bits)."),
    (job_reg::FIRST_BLOCK, "job_first_block", "Staging: sessions, the first session's first block id (the driver draws one at random when the configuration leaves it out)."),
    (job_reg::COMMIT, "job_commit", "Write an entry index: copies the staged job into that entry, frees its slot copies (busy count to 0, slots_in_use reduced), between two decisions of the engine (writes stall until then). Two valid entries with one job id: the lower-numbered one is used."),
];

/// Child staging registers: (offset from `CHILD_BASE`, name, doc). Committed by `child_commit`.
pub const CHILD_REGS: &[(u32, &str, &str)] = &[
    (
        child_reg::MAC_LO,
        "child_mac_lo",
        "Staging: child MAC bytes 2..5 (byte 2 in bits 31:24).",
    ),
    (
        child_reg::MAC_HI,
        "child_mac_hi",
        "Staging: child MAC bytes 0..1 (byte 0 in bits 15:8).",
    ),
    (child_reg::IP, "child_ip", "Staging: child IPv4 address."),
    (
        child_reg::UDP,
        "child_udp",
        "Staging: child UDP port (bits 15:0).",
    ),
    (
        child_reg::PORT,
        "child_port",
        "Staging: egress port toward the child.",
    ),
    (
        child_reg::RANKS_LO,
        "child_ranks_lo",
        "Staging: ranks the child delivers, bits 31:0.",
    ),
    (
        child_reg::RANKS_HI,
        "child_ranks_hi",
        "Staging: ranks bits 63:32.",
    ),
    (
        child_reg::COMMIT,
        "child_commit",
        "Write (entry << 8) | child index: copies the staged child into the child table.",
    ),
];

/// Port-below staging registers: (offset from `PORT_BELOW_BASE`, name, doc). Committed by
/// `port_below_commit`.
pub const PORT_BELOW_REGS: &[(u32, &str, &str)] = &[
    (
        port_below_reg::LO,
        "port_below_lo",
        "Staging: ranks a bypass-flagged packet may carry on a port (every rank below the job's children on it), bits 31:0.",
    ),
    (port_below_reg::HI, "port_below_hi", "Staging: bits 63:32 of the above."),
    (
        port_below_reg::COMMIT,
        "port_below_commit",
        "Write (entry << 8) | port: copies the staged ranks into that job-table entry's row for that ingress port.",
    ),
];

/// Identification value of register 0 ("FANI").
pub const ID_VALUE: u32 = 0x4641_4e49;

/// The register map of one configuration.
#[derive(Debug, Clone, Serialize)]
pub struct RegMap {
    /// Every register, by address.
    pub regs: Vec<Reg>,
    /// Base of the global counters.
    pub counter_base: u32,
    /// Base of the per-port counters.
    pub port_base: u32,
    /// Base of the per-port bad-frame counters.
    pub rx_bad_base: u32,
    #[serde(skip)]
    info: Vec<u32>,
}

impl RegMap {
    /// Builds the map for `cfg`.
    pub fn new(cfg: &CoreConfig) -> Self {
        let mut regs = Vec::new();
        let mut r = |addr: u32, name: &str, access, doc: &str| {
            regs.push(Reg {
                addr,
                name: name.into(),
                access,
                doc: doc.into(),
            })
        };
        let info: Vec<(&str, u32, &str)> = vec![
            ("id", ID_VALUE, "Identification: 0x46414e49 (\"FANI\")."),
            (
                "version",
                fanin_proto::wire::VERSION as u32,
                "fanin protocol version.",
            ),
            ("ports", cfg.ports as u32, "Number of ports P."),
            (
                "data_w",
                cfg.data_w,
                "AXI-Stream data width per port (bits).",
            ),
            ("engine_w", cfg.engine_w, "Internal bus width (bits)."),
            ("slots", cfg.slots, "Aggregation slots S."),
            ("lanes", cfg.lanes, "int32 lanes per slot E."),
            ("max_jobs", cfg.max_jobs, "Job-table entries."),
            ("max_children", cfg.max_children, "Children per job."),
            ("max_routes", cfg.max_routes, "Forwarding-table entries."),
            (
                "max_frame",
                cfg.max_frame,
                "Largest frame accepted (bytes).",
            ),
        ];
        for (i, (name, _, doc)) in info.iter().enumerate() {
            r(4 * i as u32, name, Access::RO, doc);
        }
        r(
            addr::ME_IP,
            "me_ip",
            Access::RW,
            "The switch's IPv4 address (fanin packets to it are handled, others routed).",
        );
        r(
            addr::ME_UDP_PORT,
            "me_udp_port",
            Access::RW,
            "The fanin UDP port (low 16 bits).",
        );
        r(
            addr::ME_MAC_LO,
            "me_mac_lo",
            Access::RW,
            "The switch's MAC address bytes 2..5 (byte 2 in bits 31:24).",
        );
        r(
            addr::ME_MAC_HI,
            "me_mac_hi",
            Access::RW,
            "The switch's MAC address bytes 0..1 (byte 0 in bits 15:8).",
        );
        r(
            addr::TICK_DIV,
            "tick_div",
            Access::RW,
            "Tick prescaler: clock cycles per timer tick (reset 1; 0 acts as 1).",
        );
        r(
            addr::TICK,
            "tick",
            Access::RO,
            "The current tick (32 bits, wraps): the model's `now`.",
        );
        r(
            addr::SCAN_TICKS,
            "scan_ticks",
            Access::RW,
            "Timer scan: ticks between the starts of two sweeps over all slots while a timeout-mode job or a job with an idle reclaim is configured (reset 1: sweep continuously; 0 stops the scan).",
        );
        for (o, name, doc) in JOB_REGS {
            r(JOB_BASE + o, name, Access::WO, doc);
        }
        for (o, name, doc) in CHILD_REGS {
            r(CHILD_BASE + o, name, Access::WO, doc);
        }
        for (o, name, doc) in PORT_BELOW_REGS {
            r(PORT_BELOW_BASE + o, name, Access::WO, doc);
        }
        r(
            TBL_SEL,
            "tbl_sel",
            Access::RW,
            "Table read-back: bits 31:28 the table (1 job, 2 child, 3 port-below, 4 route), bits 15:0 the row (job, route: the entry; child, port-below: entry << 8 | child or port). The row shows in tbl_data* two cycles after the write.",
        );
        for k in 0..TBL_WORDS {
            r(
                TBL_DATA_BASE + 4 * k,
                &format!("tbl_data{k}"),
                Access::RO,
                &format!(
                    "Table read-back: bits {}:{} of the selected row (layouts in docs/rtl.md; 0 past the row's width).",
                    32 * k + 31,
                    32 * k
                ),
            );
        }
        for j in 0..cfg.max_jobs {
            r(
                JOB_BUSY_BASE + 4 * j,
                &format!("job{j}_busy"),
                Access::RO,
                &format!("Job-table entry {j}: busy copies (Switch::job_busy)."),
            );
        }
        r(
            addr::ROUTE_IP,
            "route_ip",
            Access::WO,
            "Staging: destination IPv4 address of a forwarding entry.",
        );
        r(
            addr::ROUTE_PORT,
            "route_port",
            Access::WO,
            "Staging: bits 3:0 egress port, bit 7 valid (0 removes the entry).",
        );
        r(
            addr::ROUTE_COMMIT,
            "route_commit",
            Access::WO,
            "Write an entry index: copies the staged route into that entry. Two valid entries with one address: the lower-numbered one is used.",
        );
        for (k, c) in Counter::ALL.iter().enumerate() {
            let a = COUNTER_BASE + 8 * k as u32;
            r(a, &format!("{}_lo", c.name()), Access::RO, c.doc());
            r(
                a + 4,
                &format!("{}_hi", c.name()),
                Access::RO,
                "High word of the counter above.",
            );
        }
        for p in 0..cfg.ports as u32 {
            let a = PORT_BASE + 32 * p;
            for (i, n) in ["rx_packets", "rx_bytes", "tx_packets", "tx_bytes"]
                .iter()
                .enumerate()
            {
                r(
                    a + 8 * i as u32,
                    &format!("port{p}_{n}_lo"),
                    Access::RO,
                    &format!("Port {p}: {} (PortCounters::{n}).", n.replace('_', " ")),
                );
                r(
                    a + 8 * i as u32 + 4,
                    &format!("port{p}_{n}_hi"),
                    Access::RO,
                    "High word of the counter above.",
                );
            }
        }
        for p in 0..cfg.ports as u32 {
            r(RX_BAD_BASE + 4 * p, &format!("port{p}_rx_bad"), Access::RO, &format!("Port {p}: frames discarded at ingress (tuser bad frame or longer than max_frame); hardware only, the model never sees them."));
        }
        regs.sort_by_key(|r| r.addr);
        RegMap {
            regs,
            counter_base: COUNTER_BASE,
            port_base: PORT_BASE,
            rx_bad_base: RX_BAD_BASE,
            info: info.iter().map(|x| x.1).collect(),
        }
    }

    /// Address of a named register (panics on an unknown name: a bug in this crate).
    pub fn addr(&self, name: &str) -> u32 {
        self.regs
            .iter()
            .find(|r| r.name == name)
            .unwrap_or_else(|| panic!("no register {name}"))
            .addr
    }

    /// Values of the read-only information registers at addresses 0, 4, 8, ...
    pub fn info_values(&self) -> Vec<u32> {
        self.info.clone()
    }

    /// The core configuration a device describes in its information registers (`info`:
    /// the words read at addresses 0, 4, 8, ..., as [`Self::info_values`] lists them):
    /// register 0 must read [`ID_VALUE`] and the protocol version must be this crate's.
    /// Parameters the registers do not carry (`rx_frames`, `clock_mhz`, `slot_ram`) are
    /// `default`'s. The configuration is named `name`.
    pub fn core_from_info(name: &str, info: &[u32]) -> Result<CoreConfig, String> {
        const WORDS: usize = 11;
        if info.len() < WORDS {
            return Err(format!(
                "{name}: {} information registers read, {WORDS} needed",
                info.len()
            ));
        }
        if info[0] != ID_VALUE {
            return Err(format!(
                "{name}: register 0 reads 0x{:08x}, not 0x{ID_VALUE:08x} (\"FANI\"): not a fanin core, or the wrong BAR or base address",
                info[0]
            ));
        }
        let version = fanin_proto::wire::VERSION as u32;
        if info[1] != version {
            return Err(format!(
                "{name}: the core speaks fanin protocol version {}, this tool version {version}",
                info[1]
            ));
        }
        let base = CoreConfig::by_name("default").expect("default exists");
        let c = CoreConfig {
            name: name.into(),
            ports: u8::try_from(info[2])
                .map_err(|_| format!("{name}: ports register reads {}", info[2]))?,
            data_w: info[3],
            engine_w: info[4],
            slots: info[5],
            lanes: info[6],
            max_jobs: info[7],
            max_children: info[8],
            max_routes: info[9],
            max_frame: info[10],
            ..base
        };
        c.validate().map_err(|e| {
            format!("{name}: the information registers describe no valid core: {e}")
        })?;
        Ok(c)
    }

    /// A C header with every address, for host and simulation code.
    pub fn c_header(&self, cfg: &CoreConfig) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "/* Generated by fanin-gen for configuration '{}'. Do not edit. */",
            cfg.name
        );
        let _ = writeln!(s, "#ifndef FANIN_REGS_H\n#define FANIN_REGS_H\n");
        let _ = writeln!(s, "#define FANIN_COUNTER_BASE 0x{:03x}u\n#define FANIN_PORT_BASE 0x{:03x}u\n#define FANIN_RX_BAD_BASE 0x{:03x}u", self.counter_base, self.port_base, self.rx_bad_base);
        for r in &self.regs {
            let _ = writeln!(
                s,
                "#define FANIN_REG_{} 0x{:03x}u",
                r.name.to_uppercase(),
                r.addr
            );
        }
        let _ = writeln!(s, "\n#endif");
        s
    }

    /// The Markdown page docs/registers.md.
    pub fn markdown(&self, cfg: &CoreConfig) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# Register map\n");
        let _ = writeln!(s, "Generated by `cargo run -p fanin-gen -- --registers docs/registers.md` from `regs/src/map.rs`; do not edit. A test fails when this page is stale.\n");
        let _ = writeln!(s, "AXI4-Lite, 32-bit data, byte addresses. A write needs `awvalid` and `wvalid` together; registers are written whole: a write without all four strobes (`wstrb` other than 0xf) changes nothing and is answered SLVERR; a write to an address without a writable register (RW or WO below) changes nothing and is answered DECERR. A read of an address without a register returns 0 (OKAY). 64-bit counters are two words (low, high) read independently: read high, low, high and retry if high changed.\n");
        let _ = writeln!(s, "Global counters: `0x{:03x} + 8·k` for `k` the index in `fanin_proto::model::Counter::ALL`. Port counters: `0x{:03x} + 32·p`. The table shows configuration `{}` ({} ports).\n", self.counter_base, self.port_base, cfg.name, cfg.ports);
        let _ = writeln!(
            s,
            "| address | name | access | description |\n|---|---|---|---|"
        );
        for r in &self.regs {
            let _ = writeln!(
                s,
                "| 0x{:03x} | `{}` | {:?} | {} |",
                r.addr, r.name, r.access, r.doc
            );
        }
        s
    }
}
