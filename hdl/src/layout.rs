//! Named fields of the core's packed words, from the tables in `fanin_regs::layout`.
//!
//! Each word type gets a trait of `get_value_<field>` accessors: rust-hdl's `hdl_gen`
//! translates `x.val().get_value_f()` into the slice `x[offset +: width]`, asking the
//! receiver's `get_my_offset_f()` and `get_my_width_f()` for the numbers, so the logic
//! names fields and only the tables hold offsets. An accessor may read fewer bits than the
//! field holds (the egress ports: 4 of 8); a const check keeps every accessor inside its
//! field.

use fanin_regs::layout::{child, job, meta, Field};
use rust_hdl::prelude::*;

/// Width of a packed job-table entry.
pub const JOB_W: usize = job::LAYOUT.width;
/// Width of a child-table entry.
pub const CHILD_W: usize = child::LAYOUT.width;
/// Width of a slot-copy metadata word.
pub const META_W: usize = meta::LAYOUT.width;
const fn inside(f: Field, width: usize, word: usize) -> bool {
    width <= f.width && f.offset + f.width <= word
}

macro_rules! word {
    (
        $(#[$doc:meta])* $tr:ident for $w:expr;
        bits { $( $f:ident : $n:literal = $field:expr ),* $(,)? }
        flags { $( $g:ident = $gfield:expr ),* $(,)? }
    ) => {
        paste::paste! {
            $(#[$doc])*
            pub trait $tr {
                $(
                    #[doc = concat!("Field `", stringify!($f), "`.")]
                    fn [<get_value_ $f>](&self) -> Bits<$n>;
                    #[doc(hidden)]
                    fn [<get_my_width_ $f>](&self) -> usize;
                    #[doc(hidden)]
                    fn [<get_my_offset_ $f>](&self) -> u32;
                )*
                $(
                    #[doc = concat!("Flag `", stringify!($g), "`.")]
                    fn [<get_value_ $g>](&self) -> bool;
                    #[doc(hidden)]
                    fn [<get_my_width_ $g>](&self) -> usize;
                    #[doc(hidden)]
                    fn [<get_my_offset_ $g>](&self) -> u32;
                )*
            }
            impl $tr for Bits<{ $w }> {
                $(
                    fn [<get_value_ $f>](&self) -> Bits<$n> {
                        self.get_bits::<$n>($field.offset)
                    }
                    fn [<get_my_width_ $f>](&self) -> usize {
                        $n
                    }
                    fn [<get_my_offset_ $f>](&self) -> u32 {
                        $field.offset as u32
                    }
                )*
                $(
                    fn [<get_value_ $g>](&self) -> bool {
                        self.get_bit($gfield.offset)
                    }
                    fn [<get_my_width_ $g>](&self) -> usize {
                        1
                    }
                    fn [<get_my_offset_ $g>](&self) -> u32 {
                        $gfield.offset as u32
                    }
                )*
            }
            const _: () = {
                $( assert!(inside($field, $n, $w)); )*
                $( assert!(inside($gfield, 1, $w)); )*
            };
        }
    };
}

word! {
    /// Fields of a job-table entry (`je`, `x_je`, `sj`, `q_sj`, the job RAM's read data).
    JobWord for JOB_W;
    bits {
        degree_limit: 8 = job::DEGREE_LIMIT,
        children: 8 = job::CHILDREN,
        index_at_parent: 8 = job::INDEX_AT_PARENT,
        job: 16 = job::JOB,
        ranks: 64 = job::RANKS,
        expected: 64 = job::EXPECTED,
        quota: 32 = job::QUOTA,
        flush_after: 32 = job::FLUSH_AFTER,
        reclaim_after: 32 = job::RECLAIM_AFTER,
        parent_ip: 32 = job::PARENT_IP,
        parent_mac: 48 = job::PARENT_MAC,
        parent_udp: 16 = job::PARENT_UDP,
        parent_port: 4 = job::PARENT_PORT,
        epoch: 32 = job::EPOCH,
        slot_base: 32 = job::SLOT_BASE,
        slot_count: 32 = job::SLOT_COUNT,
    }
    flags {
        valid = job::VALID,
        inner = job::INNER,
        timeout = job::TIMEOUT,
    }
}

word! {
    /// Fields of a child-table entry (the child RAMs' read data, `chr`).
    ChildWord for CHILD_W;
    bits {
        ranks: 64 = child::RANKS,
        mac: 48 = child::MAC,
        ip: 32 = child::IP,
        udp: 16 = child::UDP,
        port: 4 = child::PORT,
    }
    flags {}
}

word! {
    /// Fields of a slot-copy metadata word (`m`, `xm`, `cmw`).
    MetaWord for META_W;
    bits {
        state: 3 = meta::STATE,
        entry: 8 = meta::ENTRY,
        epoch_lo: 16 = meta::EPOCH_LO,
        block: 32 = meta::BLOCK,
        bitmap: 64 = meta::BITMAP,
        exponent: 8 = meta::EXPONENT,
        flags: 8 = meta::FLAGS,
        elements: 16 = meta::ELEMENTS,
        timer: 32 = meta::TIMER,
        epoch_hi: 16 = meta::EPOCH_HI,
    }
    flags {}
}
