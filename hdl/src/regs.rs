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
/// Base of the per-entry busy-copy counters (4 bytes per job-table entry).
pub const JOB_BUSY_BASE: u32 = 0xa00;

/// Job staging registers: (offset from `JOB_BASE`, name, doc). Committed by `job_commit`.
pub const JOB_REGS: &[(u32, &str, &str)] = &[
    (0x00, "job_id", "Staging: job id (bits 15:0)."),
    (0x04, "job_ctrl", "Staging: bit 0 valid (0 removes the entry), bit 1 inner (0 root), bit 2 timeout mode (0 static), bits 15:8 degree_limit, bits 23:16 number of children, bits 31:24 index_at_parent."),
    (0x08, "job_ranks_lo", "Staging: ranks bits 31:0."),
    (0x0c, "job_ranks_hi", "Staging: ranks bits 63:32."),
    (0x10, "job_expected_lo", "Staging: expected contributors (JobEntry::expected(), written by the driver) bits 31:0."),
    (0x14, "job_expected_hi", "Staging: expected contributors bits 63:32."),
    (0x18, "job_slot_base", "Staging: first slot of the job's range."),
    (0x1c, "job_slot_count", "Staging: slots in the range (a power of two)."),
    (0x20, "job_quota", "Staging: effective quota in copies (JobEntry::effective_quota(), written by the driver)."),
    (0x24, "job_flush_after", "Staging: timeout mode flush_after in ticks (32 bits; the driver clamps)."),
    (0x28, "job_reclaim_after", "Staging: timeout mode reclaim_after in ticks (32 bits; the driver clamps)."),
    (0x2c, "job_parent_mac_lo", "Staging: parent MAC bytes 2..5 (byte 2 in bits 31:24)."),
    (0x30, "job_parent_mac_hi", "Staging: parent MAC bytes 0..1 (byte 0 in bits 15:8)."),
    (0x34, "job_parent_ip", "Staging: parent IPv4 address."),
    (0x38, "job_parent_udp", "Staging: parent UDP port (bits 15:0)."),
    (0x3c, "job_parent_port", "Staging: egress port toward the parent."),
    (0x40, "job_commit", "Write an entry index: copies the staged job into that entry, frees its slot copies (busy count to 0, slots_in_use reduced), between two decisions of the engine (writes stall until then). Two valid entries with one job id: the lower-numbered one is used."),
];

/// Child staging registers: (offset from `CHILD_BASE`, name, doc). Committed by `child_commit`.
pub const CHILD_REGS: &[(u32, &str, &str)] = &[
    (
        0x00,
        "child_mac_lo",
        "Staging: child MAC bytes 2..5 (byte 2 in bits 31:24).",
    ),
    (
        0x04,
        "child_mac_hi",
        "Staging: child MAC bytes 0..1 (byte 0 in bits 15:8).",
    ),
    (0x08, "child_ip", "Staging: child IPv4 address."),
    (0x0c, "child_udp", "Staging: child UDP port (bits 15:0)."),
    (0x10, "child_port", "Staging: egress port toward the child."),
    (
        0x14,
        "child_ranks_lo",
        "Staging: ranks the child delivers, bits 31:0.",
    ),
    (0x18, "child_ranks_hi", "Staging: ranks bits 63:32."),
    (
        0x1c,
        "child_commit",
        "Write (entry << 8) | child index: copies the staged child into the child table.",
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
            0x40,
            "me_ip",
            Access::RW,
            "The switch's IPv4 address (fanin packets to it are handled, others routed).",
        );
        r(
            0x44,
            "me_udp_port",
            Access::RW,
            "The fanin UDP port (low 16 bits).",
        );
        r(
            0x48,
            "me_mac_lo",
            Access::RW,
            "The switch's MAC address bytes 2..5 (byte 2 in bits 31:24).",
        );
        r(
            0x4c,
            "me_mac_hi",
            Access::RW,
            "The switch's MAC address bytes 0..1 (byte 0 in bits 15:8).",
        );
        r(
            0x50,
            "tick_div",
            Access::RW,
            "Tick prescaler: clock cycles per timer tick (reset 1; 0 acts as 1).",
        );
        r(
            0x54,
            "tick",
            Access::RO,
            "The current tick (32 bits, wraps): the model's `now`.",
        );
        r(
            0x58,
            "scan_ticks",
            Access::RW,
            "Timer scan: ticks between the starts of two sweeps over all slots while a timeout-mode job is configured (reset 1: sweep continuously; 0 stops the scan).",
        );
        for (o, name, doc) in JOB_REGS {
            r(JOB_BASE + o, name, Access::WO, doc);
        }
        for (o, name, doc) in CHILD_REGS {
            r(CHILD_BASE + o, name, Access::WO, doc);
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
            0x80,
            "route_ip",
            Access::WO,
            "Staging: destination IPv4 address of a forwarding entry.",
        );
        r(
            0x84,
            "route_port",
            Access::WO,
            "Staging: bits 3:0 egress port, bit 7 valid (0 removes the entry).",
        );
        r(
            0x88,
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
        let _ = writeln!(s, "Generated by `cargo run -p fanin-gen -- --registers docs/registers.md` from `hdl/src/regs.rs`; do not edit. A test fails when this page is stale.\n");
        let _ = writeln!(s, "AXI4-Lite, 32-bit data, byte addresses. A write needs `awvalid` and `wvalid` together; registers are written whole. 64-bit counters are two words (low, high) read independently: read high, low, high and retry if high changed.\n");
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

fn mac_words(mac: [u8; 6]) -> (u32, u32) {
    (
        u32::from_be_bytes([mac[2], mac[3], mac[4], mac[5]]),
        u32::from(u16::from_be_bytes([mac[0], mac[1]])),
    )
}

/// Register writes `(address, value)` that set the switch's identity: IPv4, UDP port, MAC.
pub fn identity_writes(ip: core::net::Ipv4Addr, udp_port: u16, mac: [u8; 6]) -> Vec<(u32, u32)> {
    let (lo, hi) = mac_words(mac);
    vec![
        (0x40, u32::from(ip)),
        (0x44, udp_port as u32),
        (0x48, lo),
        (0x4c, hi),
    ]
}

/// A job entry the RTL cannot run yet: the model has the mode, the hardware does not.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("job {job}: the RTL does not implement {what} yet (docs/rtl.md, \"Not in the RTL yet\"); for an FPGA switch set {fix}")]
pub struct Unsupported {
    /// The job id.
    pub job: u16,
    /// What the entry asks for.
    pub what: &'static str,
    /// The setting that makes the entry loadable.
    pub fix: &'static str,
}

/// Checks that the RTL implements everything `job` asks for.
pub fn check_supported(job: &fanin_proto::config::JobEntry) -> Result<(), Unsupported> {
    use fanin_proto::config::SourceCheck;
    let t = &job.trust;
    let no = |what, fix| {
        Err(Unsupported {
            job: job.job,
            what,
            fix,
        })
    };
    if t.sessions {
        return no(
            "sessions (JOIN/ACCEPT, refusing earlier blocks)",
            "trust.sessions = false",
        );
    }
    if t.source_check != SourceCheck::Off {
        return no("source validation", "trust.source_check = \"off\"");
    }
    if t.reclaim_idle != 0 {
        return no(
            "the idle reclaim of busy slot copies",
            "trust.reclaim_idle = 0",
        );
    }
    Ok(())
}

/// Refuses a configuration the RTL cannot hold: the core has no key-value (ASK) engine, so
/// any `kv_jobs` entry is an error naming the switch and the job (docs/rtl.md, "Key-value jobs");
/// nor sessions, source checks or the idle reclaim ([`check_supported`]).
pub fn check_loadable(cfg: &fanin_proto::config::SwitchConfig) -> Result<(), String> {
    match cfg.kv_jobs.first() {
        Some(j) => Err(format!(
            "switch {}: key-value job {} cannot be loaded into the RTL (the core has no key-value engine; see docs/rtl.md, \"Key-value jobs\"); run it on fanin switchd",
            cfg.name, j.job
        )),
        None => {
            for j in &cfg.jobs {
                check_supported(j).map_err(|e| format!("switch {}: {e}", cfg.name))?;
            }
            Ok(())
        }
    }
}

/// Register writes `(address, value)` that program job-table entry `entry` with `job` and
/// its children (the driver's side of the staging-register protocol: children first, then
/// the job commit, which makes the entry live). Derived fields (`expected`,
/// `effective_quota`) are computed here, as the hardware expects. Timeouts above
/// `u32::MAX` ticks are clamped. Refuses an entry the RTL cannot run ([`check_supported`]).
pub fn job_writes(
    entry: u8,
    job: &fanin_proto::config::JobEntry,
) -> Result<Vec<(u32, u32)>, Unsupported> {
    use fanin_proto::config::{Mode, Role};
    check_supported(job)?;
    let mut w = Vec::new();
    for (i, c) in job.children.iter().enumerate() {
        let (lo, hi) = mac_words(c.endpoint.mac);
        let b = CHILD_BASE;
        w.extend([
            (b, lo),
            (b + 0x04, hi),
            (b + 0x08, u32::from(c.endpoint.ip)),
            (b + 0x0c, c.endpoint.udp_port as u32),
            (b + 0x10, c.endpoint.port as u32),
            (b + 0x14, c.ranks as u32),
            (b + 0x18, (c.ranks >> 32) as u32),
            (b + 0x1c, (entry as u32) << 8 | i as u32),
        ]);
    }
    let (inner, iap, parent) = match job.role {
        Role::Root => (0, 0, None),
        Role::Inner {
            parent,
            index_at_parent,
        } => (1, index_at_parent, Some(parent)),
    };
    let (timeout, flush, reclaim) = match job.mode {
        Mode::Static => (0, 0, 0),
        Mode::Timeout {
            flush_after,
            reclaim_after,
        } => (
            1,
            flush_after.min(u32::MAX as u64) as u32,
            reclaim_after.min(u32::MAX as u64) as u32,
        ),
    };
    let b = JOB_BASE;
    let ctrl = 1
        | inner << 1
        | timeout << 2
        | (job.degree_limit as u32) << 8
        | (job.children.len() as u32) << 16
        | (iap as u32) << 24;
    let exp = job.expected();
    w.extend([
        (b, job.job as u32),
        (b + 0x04, ctrl),
        (b + 0x08, job.ranks as u32),
        (b + 0x0c, (job.ranks >> 32) as u32),
        (b + 0x10, exp as u32),
        (b + 0x14, (exp >> 32) as u32),
        (b + 0x18, job.slot_base),
        (b + 0x1c, job.slot_count),
        (b + 0x20, job.effective_quota()),
        (b + 0x24, flush),
        (b + 0x28, reclaim),
    ]);
    if let Some(p) = parent {
        let (lo, hi) = mac_words(p.mac);
        w.extend([
            (b + 0x2c, lo),
            (b + 0x30, hi),
            (b + 0x34, u32::from(p.ip)),
            (b + 0x38, p.udp_port as u32),
            (b + 0x3c, p.port as u32),
        ]);
    }
    w.push((b + 0x40, entry as u32));
    Ok(w)
}

/// Register writes that remove job-table entry `entry` (its slot copies become free).
pub fn job_remove_writes(entry: u8) -> Vec<(u32, u32)> {
    vec![(JOB_BASE + 0x04, 0), (JOB_BASE + 0x40, entry as u32)]
}

#[cfg(test)]
mod trust_tests {
    use fanin_proto::config::{Mode, SourceCheck, Trust};
    use fanin_proto::plan::{build, star, Addressing, JobSpec};

    fn cfg(trust: Trust) -> fanin_proto::config::SwitchConfig {
        let spec = JobSpec {
            job: 7,
            slot_count: 4,
            elements: 4,
            mode: Mode::Static,
            addressing: Addressing::Network,
            trust,
        };
        build(&star(2), spec).unwrap().switches.remove(0)
    }

    #[test]
    fn trust_modes_are_refused_with_the_setting_that_fixes_them() {
        let c = cfg(Trust::default());
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(
            e.starts_with("job 7: the RTL does not implement sessions"),
            "{e}"
        );
        assert!(e.contains("trust.sessions = false"), "{e}");
        let e = super::check_loadable(&c).unwrap_err();
        assert!(e.starts_with("switch root: job 7:"), "{e}");
        let c = cfg(Trust {
            sessions: false,
            ..Trust::OFF
        });
        assert!(super::job_writes(0, &c.jobs[0]).is_ok());
        let c = cfg(Trust {
            source_check: SourceCheck::Ip,
            ..Trust::OFF
        });
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(
            e.contains("source validation") && e.contains("source_check = \"off\""),
            "{e}"
        );
        let c = cfg(Trust {
            reclaim_idle: 5,
            ..Trust::OFF
        });
        let e = super::job_writes(0, &c.jobs[0]).unwrap_err().to_string();
        assert!(
            e.contains("idle reclaim") && e.contains("reclaim_idle = 0"),
            "{e}"
        );
        assert!(super::check_loadable(&c).is_err());
    }
}

#[cfg(test)]
mod kv_tests {
    #[test]
    fn key_value_jobs_are_refused_by_name() {
        use fanin_proto::config::{Endpoint, SwitchConfig};
        let mut cfg = SwitchConfig::new("tor1", [2, 0, 0, 0, 0, 1], [10, 0, 0, 1].into());
        assert_eq!(super::check_loadable(&cfg), Ok(()));
        cfg.kv_jobs.push(fanin_proto::kv::KvJobEntry {
            job: 7,
            arrays: 8,
            size: 1024,
            channels: 4,
            window: 64,
            receiver: Endpoint {
                mac: [2, 0, 0, 0, 0, 2],
                ip: [10, 0, 0, 2].into(),
                udp_port: 9000,
                port: 1,
            },
        });
        let e = super::check_loadable(&cfg).unwrap_err();
        assert!(
            e.contains("switch tor1: key-value job 7 cannot be loaded into the RTL"),
            "{e}"
        );
    }
}
