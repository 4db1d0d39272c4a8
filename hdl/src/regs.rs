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
            "Write an entry index: copies the staged route into that entry.",
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
