//! Core configuration: the generator's parameters, named configurations and validation.

use serde::Serialize;

/// Why a configuration cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("configuration {config}: {what}")]
pub struct ConfigError {
    /// Configuration name.
    pub config: String,
    /// What is wrong and how to fix it.
    pub what: String,
}

/// Parameters of one generated core.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoreConfig {
    /// Configuration name.
    pub name: String,
    /// Number of ports P (2..=8).
    pub ports: u8,
    /// AXI-Stream data width DATA_W per port (64, 256 or 512).
    pub data_w: u32,
    /// Internal bus width ENGINE_W in bits (a power of two, at least P × DATA_W).
    pub engine_w: u32,
    /// Aggregation slots S (each with two shadow copies).
    pub slots: u32,
    /// int32 lanes per slot E.
    pub lanes: u32,
    /// Job-table entries.
    pub max_jobs: u32,
    /// Children per job.
    pub max_children: u32,
    /// Forwarding-table entries.
    pub max_routes: u32,
    /// Largest frame (bytes, without FCS) the ingress buffers accept.
    pub max_frame: u32,
    /// Maximum frames' worth of buffering per ingress port.
    pub rx_frames: u32,
    /// Target clock in MHz (documentation and the manifest; not used by the logic).
    pub clock_mhz: u32,
    /// Memory for the accumulator's slot rows (`2·S·E·32` bits): block RAM on every
    /// family, UltraRAM on UltraScale+ only (the generator refuses it for 7-series).
    pub slot_ram: RamStyle,
}

/// The memory a large RAM asks synthesis for: the `ram_style` attribute of its Verilog.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RamStyle {
    /// Block RAM (RAMB36/RAMB18): every family; read-old-data on a same-cycle read and write.
    #[default]
    Block,
    /// UltraRAM (URAM288, 4K × 72 bit): UltraScale+ only. What a read returns when it hits
    /// the row written in the same cycle is not read-old-data; the memory's user must not
    /// depend on it (the accumulator forwards that case, see `acc.rs`).
    Ultra,
}

impl RamStyle {
    /// The Verilog `ram_style` attribute value (`block`, `ultra`).
    pub fn attr(self) -> &'static str {
        match self {
            RamStyle::Block => "block",
            RamStyle::Ultra => "ultra",
        }
    }
}

impl CoreConfig {
    /// The reference model's table sizes for a switch on this core (what a switch
    /// configuration must fit to be programmed into it).
    pub fn params(&self) -> fanin_proto::config::Params {
        fanin_proto::config::Params {
            slots: self.slots,
            elements: self.lanes as u16,
            max_jobs: self.max_jobs as u16,
            max_children: self.max_children as u8,
            max_routes: self.max_routes as u16,
            ports: self.ports,
        }
    }

    /// The named configurations `fanin-gen --list` prints.
    pub fn named() -> Vec<CoreConfig> {
        let base = CoreConfig {
            name: "default".into(),
            ports: 4,
            data_w: 64,
            engine_w: 512,
            slots: 256,
            lanes: 64,
            max_jobs: 16,
            max_children: 16,
            max_routes: 16,
            max_frame: 1518,
            rx_frames: 2,
            clock_mhz: 156,
            slot_ram: RamStyle::Block,
        };
        vec![
            base.clone(),
            CoreConfig {
                name: "sume".into(),
                slots: 4096,
                max_routes: 64,
                clock_mhz: 200,
                ..base.clone()
            },
            CoreConfig {
                name: "alveo".into(),
                ports: 2,
                data_w: 512,
                engine_w: 2048,
                slots: 16384,
                lanes: 64,
                max_jobs: 64,
                max_routes: 64,
                // 250 MHz keeps 2 × 100G (linerate --wire-gbps 100 at this cycle budget:
                // docs/rtl.md, "Throughput"); 322 MHz, the CMAC's own clock, is the option
                // `alveo+clock_mhz=322` (docs/boards.md).
                clock_mhz: 250,
                // 64 Mbit of slot rows: ≈ 1,820 RAMB36 would not fit a U280 (2,016) beside
                // the rest; as URAM it is 240 of the U280's 960 (docs/boards.md).
                slot_ram: RamStyle::Ultra,
                ..base
            },
        ]
    }

    /// Names of the parameters a configuration spec can override (`NAME+KEY=VALUE`).
    pub const PARAMS: &'static [&'static str] = &[
        "ports",
        "data_w",
        "engine_w",
        "slots",
        "lanes",
        "max_jobs",
        "max_children",
        "max_routes",
        "max_frame",
        "rx_frames",
        "clock_mhz",
        "slot_ram",
    ];

    /// Looks up a configuration by spec: a named configuration, optionally with parameters
    /// overridden, `NAME[+KEY=VALUE]...` (e.g. `default+ports=8+engine_w=1024`; KEY one of
    /// [`Self::PARAMS`], `slot_ram` = `block` or `ultra`). The result is named after the
    /// whole spec; it is not validated here ([`Self::validate`] is, by the generator).
    pub fn by_name(spec: &str) -> Result<CoreConfig, ConfigError> {
        let mut parts = spec.split('+');
        let name = parts.next().unwrap_or_default();
        let mut c = Self::named()
            .into_iter()
            .find(|c| c.name == name)
            .ok_or_else(|| ConfigError {
                config: spec.into(),
                what: format!(
                    "no such configuration {name:?}; known: {}",
                    Self::named()
                        .iter()
                        .map(|c| c.name.clone())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        let err = |what: String| ConfigError {
            config: spec.into(),
            what,
        };
        for kv in parts {
            let (k, v) = kv
                .split_once('=')
                .ok_or_else(|| err(format!("override {kv:?} is not KEY=VALUE")))?;
            if k == "slot_ram" {
                c.slot_ram = match v {
                    "block" => RamStyle::Block,
                    "ultra" => RamStyle::Ultra,
                    _ => return Err(err(format!("slot_ram = {v:?} is not block or ultra"))),
                };
                continue;
            }
            let n: u32 = v
                .parse()
                .map_err(|_| err(format!("{k} = {v:?} is not a number")))?;
            match k {
                "ports" => {
                    c.ports = u8::try_from(n)
                        .map_err(|_| err(format!("ports = {n} is out of range (2..=8)")))?
                }
                "data_w" => c.data_w = n,
                "engine_w" => c.engine_w = n,
                "slots" => c.slots = n,
                "lanes" => c.lanes = n,
                "max_jobs" => c.max_jobs = n,
                "max_children" => c.max_children = n,
                "max_routes" => c.max_routes = n,
                "max_frame" => c.max_frame = n,
                "rx_frames" => c.rx_frames = n,
                "clock_mhz" => c.clock_mhz = n,
                _ => {
                    return Err(err(format!(
                        "unknown parameter {k:?}; known: {}",
                        Self::PARAMS.join(", ")
                    )))
                }
            }
        }
        c.name = spec.into();
        Ok(c)
    }

    /// Checks every parameter and their combinations.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |what: String| {
            Err(ConfigError {
                config: self.name.clone(),
                what,
            })
        };
        if !(2..=8).contains(&self.ports) {
            return bad(format!("ports = {} is out of range (2..=8)", self.ports));
        }
        if ![64, 256, 512].contains(&self.data_w) {
            return bad(format!(
                "data_w = {} is not one of 64, 256, 512",
                self.data_w
            ));
        }
        if ![128, 256, 512, 1024, 2048].contains(&self.engine_w) {
            return bad(format!(
                "engine_w = {} must be a power of two in 128..=2048",
                self.engine_w
            ));
        }
        if self.engine_w < self.ports as u32 * self.data_w {
            return bad(format!(
                "engine_w = {} is narrower than ports × data_w = {}: the engine could not absorb every port at line rate; \
                 raise engine_w or lower ports/data_w",
                self.engine_w,
                self.ports as u32 * self.data_w
            ));
        }
        if self.slots == 0 || !self.slots.is_power_of_two() || self.slots > 1 << 20 {
            return bad(format!(
                "slots = {} must be a power of two in 1..=1048576",
                self.slots
            ));
        }
        let lane_row = self.engine_w / 32;
        if self.lanes == 0
            || self.lanes > fanin_proto::wire::MAX_ELEMENTS as u32
            || self.lanes % lane_row != 0
            || !(self.lanes / lane_row).is_power_of_two()
        {
            return bad(format!(
                "lanes = {} must be at most {} and a power-of-two multiple of engine_w/32 = {}",
                self.lanes,
                fanin_proto::wire::MAX_ELEMENTS,
                lane_row
            ));
        }
        if self.max_jobs == 0 || self.max_jobs > 256 {
            return bad(format!(
                "max_jobs = {} is out of range (1..=256)",
                self.max_jobs
            ));
        }
        if self.max_children == 0 || self.max_children > fanin_proto::wire::MAX_WORKERS {
            return bad(format!(
                "max_children = {} is out of range (1..=64)",
                self.max_children
            ));
        }
        if self.max_routes == 0 || self.max_routes > 256 {
            return bad(format!(
                "max_routes = {} is out of range (1..=256)",
                self.max_routes
            ));
        }
        if self.max_frame < fanin_proto::wire::MAX_FANIN_FRAME as u32 || self.max_frame > 9600 {
            return bad(format!(
                "max_frame = {} must hold the largest fanin frame ({} bytes) and be at most 9600",
                self.max_frame,
                fanin_proto::wire::MAX_FANIN_FRAME
            ));
        }
        if self.rx_frames < 2 {
            return bad(
                "rx_frames must be at least 2 (one frame arriving while one is processed)".into(),
            );
        }
        if self.rx_frames > 1024 || self.rx_rows() > 1 << 14 {
            return bad(format!(
                "rx_frames = {} needs more than 16384 ingress rows per port ({} rows of {} \
                 bytes per maximum frame); lower rx_frames or max_frame, or raise engine_w",
                self.rx_frames,
                self.frame_rows(),
                self.engine_w / 8
            ));
        }
        Ok(())
    }

    /// Payload rows of one maximum frame.
    pub fn frame_rows(&self) -> usize {
        (self.max_frame as usize - 64).div_ceil(self.engine_w as usize / 8) + 1
    }

    /// Ingress payload rows per port (a power of two).
    pub fn rx_rows(&self) -> usize {
        (self.frame_rows() * self.rx_frames as usize).next_power_of_two()
    }

    /// Egress payload rows per port (a power of two).
    pub fn tx_rows(&self) -> usize {
        (self.frame_rows() * 2).next_power_of_two()
    }

    /// Bits of a child's index in a child-table row address (`ceil(log2 max_children)`):
    /// entry `e`'s child `c` is row `e << child_bits | c`.
    pub fn child_bits(&self) -> usize {
        (self.max_children as usize)
            .next_power_of_two()
            .trailing_zeros() as usize
    }
}
