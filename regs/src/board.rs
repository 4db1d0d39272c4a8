//! The board register window of fanin's board builds (`fanin-gen --board`): RX FIFO drops,
//! board status, RS-FEC control, link status and MAC statistics per port. It sits on the
//! same AXI4-Lite bus as the core's registers, from [`BASE`] (the core answers below it).
//! One table for the generator (the wrapper's `fanin_board_regs` parameters) and for
//! `fanin hw status` (docs/boards.md, "Board register window").

/// Bus address of the window; the core's registers are below it.
pub const BASE: u32 = 0x1_0000;
/// Bytes of the window (16 ports at most).
pub const SIZE: u32 = PORTS_BASE + MAX_PORTS * PORT_STRIDE;
/// Most ports the window describes.
pub const MAX_PORTS: u32 = 16;

/// Offset of port `p`'s RX drop counter (`+ 4·p`): frames its RX FIFO dropped whole because
/// it was full (32 bits, wraps).
pub const RX_DROPS: u32 = 0x000;
/// Offset of the board status word ([`BoardKind::status_bits`]).
pub const STATUS: u32 = 0x040;
/// Offset of the RS-FEC control register (read-write on Alveo): bit `p` enables RS-FEC
/// (clause 91) on port `p`'s CMAC, in both directions; reset value all ports on.
pub const RSFEC: u32 = 0x044;
/// Offset of the board information word: bits 31:16 [`INFO_MAGIC`], 15:8 ports, 7:0 the
/// [`BoardKind`] code.
pub const INFO: u32 = 0x048;
/// Bits 31:16 of [`INFO`].
pub const INFO_MAGIC: u32 = 0xfb0a;

/// Offset of port 0's block; port `p`'s is at `PORTS_BASE + PORT_STRIDE·p`.
pub const PORTS_BASE: u32 = 0x100;
/// Bytes per port block.
pub const PORT_STRIDE: u32 = 0x40;
/// Port block: link status ([`BoardKind::link_bits`]).
pub const PORT_LINK: u32 = 0x00;
/// Port block: the 64-bit counters, each a low word then a high word ([`COUNTERS`]).
pub const PORT_COUNTERS: u32 = 0x08;

/// The per-port MAC statistics, 64 bits each, in this order from [`PORT_COUNTERS`]:
/// `(name, what)`.
pub const COUNTERS: [(&str, &str); 3] = [
    ("rx_frames", "frames received by the MAC (good and bad)"),
    ("tx_frames", "frames transmitted by the MAC"),
    (
        "rx_bad_fcs",
        "frames received with a bad FCS (SUME: every frame the MAC marked bad)",
    ),
];

// The layout does not overlap: the drop counters end before the status word, the port
// blocks hold the link word and the counters, the window fits in the 64 KiB above the core.
const _: () = assert!(RX_DROPS + 4 * MAX_PORTS <= STATUS);
const _: () = assert!(STATUS < RSFEC && RSFEC < INFO && INFO < PORTS_BASE);
const _: () = assert!(PORT_LINK < PORT_COUNTERS);
const _: () = assert!(PORT_COUNTERS + 8 * COUNTERS.len() as u32 <= PORT_STRIDE);
const _: () = assert!(SIZE <= 0x1_0000);

/// Offset of a port register: port `p`, offset `off` in its block.
pub fn port_reg(p: u32, off: u32) -> u32 {
    PORTS_BASE + PORT_STRIDE * p + off
}

/// Offset of the low word of counter `k` ([`COUNTERS`]) of port `p` (the high word follows).
pub fn counter_reg(p: u32, k: usize) -> u32 {
    port_reg(p, PORT_COUNTERS + 8 * k as u32)
}

/// One named bit of a status word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bit {
    /// Bit number.
    pub bit: u32,
    /// snake_case name.
    pub name: &'static str,
    /// One line: what a 1 means.
    pub doc: &'static str,
}

const fn bit(bit: u32, name: &'static str, doc: &'static str) -> Bit {
    Bit { bit, name, doc }
}

/// Board status bits common to every board.
const STATUS_ALL: &[Bit] = &[bit(
    0,
    "refclk_ready",
    "transceiver reference clock set up (SUME: Si5324 programmed and its lock wait over; always 1 on Alveo)",
)];
const STATUS_SUME: &[Bit] = &[
    bit(
        1,
        "si5324_nack",
        "the Si5324 never acknowledged its programming (every retry NACKed)",
    ),
    bit(
        2,
        "qpll_lock",
        "the 10G transceivers' QPLL is locked to the Si5324's 156.25 MHz",
    ),
    bit(
        3,
        "si5324_alarm",
        "the Si5324's alarm pin (SFP_CLK_ALARM_B, AM29) is asserted (low)",
    ),
    bit(
        5,
        "si5324_lol",
        "the last status poll read the Si5324's LOL_INT (reg 130 bit 0) as 1: loss of lock (0 unless si5324_stat_valid)",
    ),
    bit(
        6,
        "si5324_stat_valid",
        "the last status poll of the Si5324 (every 100 ms after refclk_ready) was acknowledged; 0 before the first and after a NACKed one",
    ),
];
const STATUS_ALVEO: &[Bit] = &[bit(
    4,
    "pcie_up",
    "the PCIe link is up (XDMA user_lnk_up; the BAR reaches the registers)",
)];
const LINK_CMAC: &[Bit] = &[
    bit(0, "up", "stat_rx_status: the receive link is up"),
    bit(1, "aligned", "stat_rx_aligned: all PCS lanes aligned"),
    bit(2, "local_fault", "stat_rx_local_fault"),
    bit(
        3,
        "remote_fault",
        "stat_rx_remote_fault: the peer sees no link",
    ),
    bit(4, "hi_ber", "stat_rx_hi_ber: bit error rate above 10^-4"),
    bit(
        5,
        "rsfec_aligned",
        "stat_rx_rsfec_lane_alignment_status: RS-FEC lanes aligned",
    ),
];
const LINK_SUME: &[Bit] = &[
    bit(
        0,
        "up",
        "the 10GBASE-R PCS has block lock (pcspma_status[0])",
    ),
    bit(8, "sfp_los", "the SFP+ module reports loss of signal"),
    bit(
        9,
        "sfp_tx_fault",
        "the SFP+ module reports a transmitter fault",
    ),
];

/// A board, as the window's [`INFO`] word names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoardKind {
    /// NetFPGA SUME (4 × 10G Ethernet subsystem).
    Sume = 1,
    /// Alveo U250 (2 × CMAC).
    Au250 = 2,
    /// Alveo U280 (2 × CMAC).
    Au280 = 3,
}

impl BoardKind {
    /// Every board.
    pub const ALL: [BoardKind; 3] = [BoardKind::Sume, BoardKind::Au250, BoardKind::Au280];

    /// The board of an [`INFO`] code (bits 7:0).
    pub fn from_code(code: u32) -> Option<BoardKind> {
        BoardKind::ALL.into_iter().find(|b| *b as u32 == code)
    }

    /// The board name (`fanin-gen --board`).
    pub fn name(self) -> &'static str {
        match self {
            BoardKind::Sume => "sume",
            BoardKind::Au250 => "au250",
            BoardKind::Au280 => "au280",
        }
    }

    /// Whether the ports are CMACs (RS-FEC, [`RSFEC`] writable).
    pub fn is_cmac(self) -> bool {
        self != BoardKind::Sume
    }

    /// The [`INFO`] word of this board with `ports` ports.
    pub fn info(self, ports: u32) -> u32 {
        INFO_MAGIC << 16 | (ports & 0xff) << 8 | self as u32
    }

    /// The meaningful bits of [`STATUS`] (the others read 0).
    pub fn status_bits(self) -> Vec<Bit> {
        let mut v = STATUS_ALL.to_vec();
        if self == BoardKind::Sume {
            v.extend_from_slice(STATUS_SUME);
        } else {
            v.extend_from_slice(STATUS_ALVEO);
        }
        v
    }

    /// The meaningful bits of a port's [`PORT_LINK`] word (the others read 0).
    pub fn link_bits(self) -> &'static [Bit] {
        if self.is_cmac() {
            LINK_CMAC
        } else {
            LINK_SUME
        }
    }

    /// Width of the link word the wrapper drives (highest bit + 1).
    pub fn link_width(self) -> u32 {
        self.link_bits()
            .iter()
            .map(|b| b.bit + 1)
            .max()
            .unwrap_or(1)
    }

    /// Width of the status word the wrapper drives (highest bit + 1).
    pub fn status_width(self) -> u32 {
        self.status_bits()
            .iter()
            .map(|b| b.bit + 1)
            .max()
            .unwrap_or(1)
    }
}

/// Decodes an [`INFO`] word: the board and its port count, or why it is not one.
pub fn decode_info(word: u32) -> Result<(BoardKind, u32), String> {
    if word >> 16 != INFO_MAGIC {
        return Err(format!(
            "board information word reads 0x{word:08x}, not 0x{INFO_MAGIC:04x}....: no fanin board window"
        ));
    }
    let ports = word >> 8 & 0xff;
    let kind = BoardKind::from_code(word & 0xff)
        .ok_or_else(|| format!("board information word 0x{word:08x}: unknown board code"))?;
    if ports == 0 || ports > MAX_PORTS {
        return Err(format!(
            "board information word 0x{word:08x}: {ports} ports (1..={MAX_PORTS} expected)"
        ));
    }
    Ok((kind, ports))
}

/// The names of the bits set in `word`, among `bits`.
pub fn set_names(bits: &[Bit], word: u32) -> Vec<&'static str> {
    bits.iter()
        .filter(|b| word >> b.bit & 1 == 1)
        .map(|b| b.name)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_offsets() {
        assert_eq!(SIZE, 0x500);
        assert_eq!(counter_reg(1, 2), 0x100 + 0x40 + 0x08 + 0x10);
    }

    #[test]
    fn info_round_trips_and_refuses_others() {
        for b in BoardKind::ALL {
            let ports = if b.is_cmac() { 2 } else { 4 };
            assert_eq!(decode_info(b.info(ports)), Ok((b, ports)));
        }
        assert!(decode_info(0)
            .unwrap_err()
            .contains("no fanin board window"));
        assert!(decode_info(0xfb0a_0209)
            .unwrap_err()
            .contains("unknown board"));
        assert!(decode_info(0xfb0a_0002).unwrap_err().contains("0 ports"));
    }

    #[test]
    fn bits_are_distinct_and_named() {
        for b in BoardKind::ALL {
            for bits in [b.status_bits(), b.link_bits().to_vec()] {
                let mut seen = std::collections::BTreeSet::new();
                for x in &bits {
                    assert!(x.bit < 32 && seen.insert(x.bit), "{b:?}: bit {}", x.bit);
                }
            }
        }
        assert_eq!(BoardKind::Au250.link_width(), 6);
        assert_eq!(BoardKind::Sume.link_width(), 10);
        assert_eq!(BoardKind::Sume.status_width(), 7);
        assert_eq!(BoardKind::Au280.status_width(), 5);
        assert_eq!(set_names(LINK_CMAC, 0b11), ["up", "aligned"]);
    }
}
