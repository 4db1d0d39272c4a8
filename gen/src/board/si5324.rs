//! SUME's Si5324 jitter attenuator: the I²C write sequence that sets it to 156.25 MHz, the
//! ROM of the processor-less I²C master `fanin_si5324_init` that sends it, and the status
//! register it then polls for loss of lock.

use anyhow::{bail, Result};
use std::fmt::Write as _;

/// One I²C write of the Si5324 set-up: 7-bit device address and the bytes after the
/// address byte (for the Si5324 the first is the register, auto-incremented after each).
#[derive(Debug, Clone, Copy)]
pub struct I2cWrite {
    /// 7-bit device address.
    pub addr: u8,
    /// Bytes after the address byte.
    pub bytes: &'static [u8],
    /// What the write sets (the ROM comment).
    pub what: &'static str,
}

/// PCA9548 I²C mux on SUME's FPGA I²C bus.
pub const PCA9548_ADDR: u8 = 0x74;
/// The Si5324 jitter attenuator, behind mux channel 4.
pub const SI5324_ADDR: u8 = 0x68;

/// The Si5324 register `fanin_si5324_init` polls after programming (a write of the register
/// address, a repeated START and a one-byte read). Register 130 holds LOL_INT (bit 0,
/// [`SI5324_LOL_BIT`]) and FOS1_INT/FOS2_INT (bits 1, 2); the LOS flags are in register
/// 129. Layout as in stfc-aeg/odin-devices `src/odin_devices/si5324.py` (its `_Field`
/// table, after the Si5324 data sheet); the data sheet itself was not at hand
/// (docs/boards.md, "Not verified").
pub const SI5324_STATUS_REG: u8 = 130;
/// Bit of LOL_INT (loss of lock, live, not sticky) in [`SI5324_STATUS_REG`].
pub const SI5324_LOL_BIT: u8 = 0;

/// The Si5324 programming for a 156.25 MHz SFP+ reference clock on SUME, in bus order.
/// Values: the NetFPGA SUME reference designs' `config_SI5324()`
/// (NetFPGA-SUME-live, projects/acceptance_test/sw/embedded/src/nf_sume_10g_loopback/iic_si5324.c;
/// mux address and channel from iic_config.h there), identical to corundum's
/// fpga/mqnic/NetFPGA_SUME/fpga/rtl/si5324_i2c_init.v; field layout from the Si5324
/// data sheet / Any-Frequency Precision Clocks family reference manual (divider fields hold
/// N − 1, N1_HS and N2_HS hold N − 4). With the 114.285 MHz crystal on XA/XB (free run,
/// CKIN2): f3 = 114.285 MHz / 30476 = 3.75 kHz, fOSC = f3 · 10 · 150000 = 5.625 GHz,
/// CKOUT1 = fOSC / (9 · 4) = 156.25 MHz (`si5324_output_is_156_25_mhz` checks the fields).
pub const SI5324_INIT: &[I2cWrite] = &[
    I2cWrite {
        addr: PCA9548_ADDR,
        bytes: &[0x10],
        what: "PCA9548: enable channel 4 (Si5324) only",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[0, 0x54, 0xE4, 0x12, 0x15, 0x92],
        what: "regs 0-4: free run, no bypass; CKIN1 > CKIN2; BWSEL_REG = 1; CKIN1, \
               outputs off in ICAL; auto revertive",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[10, 0x08, 0x40],
        what: "regs 10-11: CKOUT2 disabled, CKOUT1 enabled; CKIN1 and CKIN2 powered",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[25, 0xA0],
        what: "reg 25: N1_HS = 9",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[31, 0x00, 0x00, 0x03],
        what: "regs 31-33: NC1_LS = 4",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[40, 0xC2, 0x49, 0xEF],
        what: "regs 40-42: N2_HS = 10, N2_LS = 150000",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[43, 0x00, 0x77, 0x0B],
        what: "regs 43-45: N31 = 30476",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[46, 0x00, 0x77, 0x0B],
        what: "regs 46-48: N32 = 30476",
    },
    I2cWrite {
        addr: SI5324_ADDR,
        bytes: &[136, 0x40],
        what: "reg 136: ICAL = 1 (self-calibration, then lock)",
    },
];

/// The I²C master's ROM for `writes`: `(entry, comment)` with entry = `{start, stop, byte}`.
pub fn i2c_rom(writes: &[I2cWrite]) -> Vec<(u16, String)> {
    let mut rom = Vec::new();
    for w in writes {
        rom.push((
            0x200 | u16::from(w.addr) << 1,
            format!("START, 0x{:02x} write: {}", w.addr, w.what),
        ));
        for (k, b) in w.bytes.iter().enumerate() {
            let stop = if k + 1 == w.bytes.len() { 0x100 } else { 0 };
            let note = if stop != 0 { ", STOP" } else { "" };
            rom.push((stop | u16::from(*b), format!("0x{b:02x}{note}")));
        }
    }
    rom
}

/// `fanin_si5324_init` with the ROM of `writes` filled in.
pub fn si5324_init_rtl(writes: &[I2cWrite]) -> Result<String> {
    let rom = i2c_rom(writes);
    if writes.iter().any(|w| w.addr > 0x7f || w.bytes.is_empty()) {
        bail!("I2C ROM: every write needs a 7-bit address and at least one byte");
    }
    // The index must also hold ROM_LEN (the end).
    let idx_w = (usize::BITS - rom.len().leading_zeros()) as usize;
    let mut cases = String::new();
    for (i, (e, note)) in rom.iter().enumerate() {
        let _ = writeln!(cases, "        {idx_w}'d{i}: rom = 10'h{e:03x}; // {note}");
    }
    let t = include_str!("../../rtl/fanin_si5324_init.v")
        .replace("@IDX_W@", &idx_w.to_string())
        .replace("@ROM_LEN@", &format!("{idx_w}'d{}", rom.len()))
        .replace("@ROM@\n", &cases)
        .replace("@STAT_ADDR@", &format!("7'h{SI5324_ADDR:02x}"))
        .replace("@STAT_REG@", &format!("8'd{SI5324_STATUS_REG}"))
        .replace("@LOL_BIT@", &format!("3'd{SI5324_LOL_BIT}"));
    Ok(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The value of Si5324 register `reg` after [`SI5324_INIT`] (auto-increment writes).
    fn si5324_reg(reg: u8) -> u8 {
        let mut v = None;
        for w in SI5324_INIT.iter().filter(|w| w.addr == SI5324_ADDR) {
            let start = w.bytes[0];
            for (k, b) in w.bytes[1..].iter().enumerate() {
                if start as usize + k == reg as usize {
                    v = Some(*b);
                }
            }
        }
        v.unwrap_or_else(|| panic!("register {reg} is not written"))
    }

    /// The register fields (Si5324 data sheet layout) give 156.25 MHz on CKOUT1 from the
    /// 114.285 MHz crystal, with the DSPLL inside its 4.85-5.67 GHz range.
    #[test]
    fn si5324_output_is_156_25_mhz() {
        let r = |n| u32::from(si5324_reg(n));
        let n1_hs = (r(25) >> 5) + 4;
        let nc1_ls = ((r(31) & 0xf) << 16 | r(32) << 8 | r(33)) + 1;
        let n2_hs = (r(40) >> 5) + 4;
        let n2_ls = ((r(40) & 0xf) << 16 | r(41) << 8 | r(42)) + 1;
        let n31 = ((r(43) & 0x7) << 16 | r(44) << 8 | r(45)) + 1;
        let n32 = ((r(46) & 0x7) << 16 | r(47) << 8 | r(48)) + 1;
        assert_eq!(
            (n1_hs, nc1_ls, n2_hs, n2_ls, n31),
            (9, 4, 10, 150_000, 30_476)
        );
        assert_eq!(n32, n31);
        let f3 = 114.285e6 / f64::from(n31);
        assert!((2e3..=2e6).contains(&f3), "f3 = {f3}");
        let fosc = f3 * f64::from(n2_hs) * f64::from(n2_ls);
        assert!((4.85e9..=5.67e9).contains(&fosc), "fOSC = {fosc}");
        let fout = fosc / f64::from(n1_hs * nc1_ls);
        assert!((fout - 156.25e6).abs() < 1.0, "CKOUT1 = {fout}");
        // Free run on, ICAL last.
        assert_eq!(si5324_reg(0) & 0x40, 0x40);
        let last = SI5324_INIT.last().unwrap();
        assert_eq!((last.addr, last.bytes), (SI5324_ADDR, &[136u8, 0x40][..]));
        // The mux is switched to channel 4 before anything else.
        assert_eq!(
            (SI5324_INIT[0].addr, SI5324_INIT[0].bytes),
            (PCA9548_ADDR, &[0x10u8][..])
        );
    }

    /// Each write becomes START + address byte, its bytes, STOP on the last byte.
    #[test]
    fn i2c_rom_frames_every_write() {
        let rom = i2c_rom(SI5324_INIT);
        let n: usize = SI5324_INIT.iter().map(|w| w.bytes.len() + 1).sum();
        assert_eq!(rom.len(), n);
        let mut i = 0;
        for w in SI5324_INIT {
            assert_eq!(rom[i].0, 0x200 | u16::from(w.addr) << 1);
            for (k, b) in w.bytes.iter().enumerate() {
                let stop = if k + 1 == w.bytes.len() { 0x100 } else { 0 };
                assert_eq!(rom[i + 1 + k].0, stop | u16::from(*b));
            }
            i += w.bytes.len() + 1;
        }
        let v = si5324_init_rtl(SI5324_INIT).unwrap();
        assert!(v.contains("localparam [IDX_W-1:0] ROM_LEN = 6'd39;"), "{v}");
        for p in ["@ROM", "@IDX_W@", "@STAT_", "@LOL_BIT@"] {
            assert!(!v.contains(p), "{p}: {v}");
        }
        assert!(v.contains("localparam [6:0] STAT_ADDR = 7'h68;"), "{v}");
        assert!(v.contains("localparam [7:0] STAT_REG = 8'd130;"), "{v}");
        assert!(v.contains("localparam [2:0] LOL_BIT = 3'd0;"), "{v}");
    }
}
