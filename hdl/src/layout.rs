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
        src_check: 2 = job::SRC_CHECK,
        reclaim_idle: 32 = job::RECLAIM_IDLE,
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
        touched: 32 = meta::TOUCHED,
    }
    flags {}
}

/// Fields of the smaller words the core splits: register values (`wdata`, the staging
/// registers), the 48-bit MAC read as two registers, an epoch
/// stored as two halves, and the frame's header window.
pub mod small {
    use fanin_proto::wire::{header::field, L2L4_LEN, PAYLOAD_OFFSET};
    use fanin_regs::layout::Field;

    const fn f(name: &'static str, offset: usize, width: usize, doc: &'static str) -> Field {
        Field {
            name,
            offset,
            width,
            doc,
        }
    }

    /// A 16-bit register value (UDP ports, the job id, the MAC's high register).
    pub const LOW16: Field = f("low16", 0, 16, "bits 15:0");
    /// An 8-bit register value (egress ports, `job_commit`'s entry index).
    pub const LOW8: Field = f("low8", 0, 8, "bits 7:0");
    /// `child_commit`: the child index.
    pub const COMMIT_CHILD: Field = f("commit_child", 0, 8, "child index");
    /// `port_below_commit`: the port.
    pub const COMMIT_PORT: Field = f("commit_port", 0, 8, "port");
    /// `child_commit`: the job-table entry.
    pub const COMMIT_ENTRY: Field = f("commit_entry", 8, 8, "job-table entry");
    /// An epoch's low half (the metadata's `epoch_lo`).
    pub const EPOCH_LO: Field = f("epoch_lo", 0, 16, "epoch bits 15:0");
    /// An epoch's high half (the metadata's `epoch_hi`).
    pub const EPOCH_HI: Field = f("epoch_hi", 16, 16, "epoch bits 31:16");
    /// `route_port`: the egress port.
    pub const ROUTE_EGRESS: Field = f("egress", 0, 4, "egress port");
    /// `route_port`: valid (0 removes the entry).
    pub const ROUTE_VALID: Field = f("valid", 7, 1, "valid");
    /// A MAC address's low register (`*_mac_lo`: bytes 2..5).
    pub const MAC_LO: Field = f("mac_lo", 0, 32, "bytes 2..5");
    /// A MAC address's high register (`*_mac_hi`: bytes 0..1).
    pub const MAC_HI: Field = f("mac_hi", 32, 16, "bytes 0..1");
    /// Header window: the Ethernet, IPv4, UDP and fanin headers (the bytes before the
    /// payload), which a frame's item carries.
    pub const HEADERS: Field = f("headers", 0, PAYLOAD_OFFSET * 8, "bytes before the payload");
    /// Header window: the fanin header's contributor bitmap.
    pub const BITMAP: Field = f(
        "bitmap",
        (L2L4_LEN + field::BITMAP.start) * 8,
        (field::BITMAP.end - field::BITMAP.start) * 8,
        "contributor bitmap",
    );
}

word! {
    /// Fields of a 32-bit register value or epoch (`wdata`, `x_jep`).
    RegValue for 32;
    bits {
        low16: 16 = small::LOW16,
        low8: 8 = small::LOW8,
        commit_child: 8 = small::COMMIT_CHILD,
        commit_entry: 8 = small::COMMIT_ENTRY,
        commit_port: 3 = small::COMMIT_PORT,
        epoch_lo: 16 = small::EPOCH_LO,
        epoch_hi: 16 = small::EPOCH_HI,
    }
    flags {}
}

word! {
    /// Fields of the staged `route_port` value (`st_route_port`).
    RoutePort for 8;
    bits {
        egress: 4 = small::ROUTE_EGRESS,
    }
    flags {
        valid = small::ROUTE_VALID,
    }
}

word! {
    /// The two registers of a MAC address (`me_mac`).
    Mac48 for 48;
    bits {
        mac_lo: 32 = small::MAC_LO,
        mac_hi: 16 = small::MAC_HI,
    }
    flags {}
}

word! {
    /// Fields of the frame's header window (`hdr`, a descriptor's `d_hdr`).
    HdrWindow for crate::parse::PARSE_W;
    bits {
        headers: 512 = small::HEADERS,
        bitmap: 64 = small::BITMAP,
    }
    flags {}
}

/// The offset of `f`, as the core's shift constants (`at_<word>_<field>`) hold it.
pub fn at(f: Field) -> Constant<Bits<16>> {
    Constant::new((f.offset as u64).into())
}

/// The bits of `fields` in an `N`-bit word, as the core's mask constants (`mk_*`).
pub fn mask<const N: usize>(fields: &[Field]) -> Constant<Bits<N>> {
    let mut m = Bits::<N>::default();
    for f in fields {
        assert!(f.offset + f.width <= N, "{} outside the word", f.name);
        for i in f.offset..f.offset + f.width {
            m = m.replace_bit(i, true);
        }
    }
    Constant::new(m)
}
