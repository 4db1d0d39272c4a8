//! Reading a core's tables back and comparing them with a switch configuration (`fanin hw
//! verify`): the read-back window (`tbl_sel`, `tbl_data*`; docs/registers.md) shows one row
//! of the job, child, port-below or forwarding table at a time, in the layouts of
//! [`crate::layout`].

use crate::driver::{child_fields, job_fields, port_below, MAX_PORTS};
use crate::layout::{child, job, port_below as pb, route, Field};
use crate::map::{Table, TBL_DATA_BASE, TBL_SEL};
use crate::CoreConfig;
use fanin_proto::config::{SourceCheck, SwitchConfig};

/// Register access to a core (a mapped BAR, a testbench's AXI4-Lite master).
pub trait Bus {
    /// Reads the 32-bit register at byte address `addr`.
    fn read(&mut self, addr: u32) -> Result<u32, String>;
    /// Writes the 32-bit register at byte address `addr`.
    fn write(&mut self, addr: u32, value: u32) -> Result<(), String>;
}

/// One field of one table row that differs from the configuration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// The row, e.g. `job-table entry 0 (job 7)`.
    pub row: String,
    /// The field's name (the layout tables' names).
    pub field: &'static str,
    /// What the core holds.
    pub card: u64,
    /// What the configuration asks for.
    pub file: u64,
}

impl core::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(
            f,
            "{}: {} is {:#x} on the card, {:#x} in the configuration",
            self.row, self.field, self.card, self.file
        )
    }
}

/// Reads row `row` of `table` through the read-back window: the words holding its
/// `width` bits, lowest first. Reading `tbl_sel` back after writing it orders the
/// accesses (a PCIe read does not pass a posted write) and gives the core the two cycles
/// it needs; a core without the window is named as such.
pub fn read_row(
    bus: &mut dyn Bus,
    table: Table,
    row: u32,
    width: usize,
) -> Result<Vec<u32>, String> {
    let sel = table.select(row);
    bus.write(TBL_SEL, sel)?;
    let back = bus.read(TBL_SEL)?;
    if back != sel {
        return Err(format!(
            "tbl_sel reads {back:#010x} after writing {sel:#010x}: this core has no table read-back (a bitstream older than the register map?)"
        ));
    }
    (0..width.div_ceil(32) as u32)
        .map(|k| bus.read(TBL_DATA_BASE + 4 * k))
        .collect()
}

/// The bits of field `f` in a row read as 32-bit words, lowest first.
pub fn field(words: &[u32], f: Field) -> u64 {
    (0..f.width).fold(0u64, |v, i| {
        let b = f.offset + i;
        let bit = words.get(b / 32).map_or(0, |w| (w >> (b % 32)) & 1) as u64;
        v | bit << i
    })
}

/// Reads every table row the configuration `cfg` determines back from the core behind
/// `bus` and returns the fields that differ: every forwarding-table entry (unused ones must
/// be invalid), every job-table entry (unused ones must be invalid; the epoch, which the
/// core writes, is not compared), the children of every configured job, and the
/// port-below rows of every job with source checks. Errors (a configuration that does not
/// fit the core, a bus error, no read-back window) stop the comparison.
pub fn verify(
    cfg: &SwitchConfig,
    core: &CoreConfig,
    bus: &mut dyn Bus,
) -> Result<Vec<Mismatch>, String> {
    crate::check_fits(cfg, core)?;
    let mut out = Vec::new();
    let mut cmp = |row: String, words: &[u32], want: &[(Field, u64)]| {
        for &(f, file) in want {
            let card = field(words, f);
            if card != file {
                out.push(Mismatch {
                    row: row.clone(),
                    field: f.name,
                    card,
                    file,
                });
            }
        }
    };
    for i in 0..core.max_routes.min(256) {
        let w = read_row(bus, Table::Route, i, route::LAYOUT.width)?;
        let want = match cfg.routes.get(i as usize) {
            Some(r) => vec![
                (route::IP, u32::from(r.ip) as u64),
                (route::VALID, 1),
                (route::PORTS, 1 << r.port),
            ],
            None => vec![(route::VALID, 0)],
        };
        cmp(format!("forwarding-table entry {i}"), &w, &want);
    }
    for e in 0..core.max_jobs.min(256) {
        let w = read_row(bus, Table::Job, e, job::LAYOUT.width)?;
        let Some(j) = cfg.jobs.get(e as usize) else {
            cmp(
                format!("job-table entry {e} (unused)"),
                &w,
                &[(job::VALID, 0)],
            );
            continue;
        };
        let fields = job_fields(j).map_err(|e| e.to_string())?;
        cmp(format!("job-table entry {e} (job {})", j.job), &w, &fields);
        for (i, c) in j.children.iter().enumerate() {
            let w = read_row(bus, Table::Child, e << 8 | i as u32, child::LAYOUT.width)?;
            let row = format!("child {i} of job-table entry {e} (job {})", j.job);
            cmp(row, &w, &child_fields(c));
        }
        if j.trust.source_check != SourceCheck::Off {
            for p in 0..MAX_PORTS {
                let w = read_row(bus, Table::PortBelow, e << 8 | p as u32, pb::LAYOUT.width)?;
                let row = format!("port-below row {p} of job-table entry {e} (job {})", j.job);
                cmp(row, &w, &[(pb::RANKS, port_below(j, p))]);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_across_word_boundaries() {
        let words = [0x8000_0000u32, 0x0000_0003, 0xffff_ffff];
        let f = Field {
            name: "x",
            offset: 31,
            width: 3,
            doc: "",
        };
        assert_eq!(field(&words, f), 0b111);
        let g = Field {
            name: "y",
            offset: 64,
            width: 64,
            doc: "",
        };
        assert_eq!(field(&words, g), 0xffff_ffff, "past the words: zero");
    }

    /// A bus without the window: `tbl_sel` reads 0.
    struct Old;
    impl Bus for Old {
        fn read(&mut self, _: u32) -> Result<u32, String> {
            Ok(0)
        }
        fn write(&mut self, _: u32, _: u32) -> Result<(), String> {
            Ok(())
        }
    }

    #[test]
    fn a_core_without_the_window_is_named() {
        let e = read_row(&mut Old, Table::Job, 0, 64).unwrap_err();
        assert!(e.contains("no table read-back"), "{e}");
    }
}
