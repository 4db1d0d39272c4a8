//! The engine's vocabulary: the states of its three machines and the decision's actions,
//! and the named constants for counter events, slot-copy states, packet types and flags.
//! rust-hdl's `LogicState` numbers the variants in order and names them in the Verilog
//! (`localparam FrontState$Idle = 0;` ...), so the match arms and the generated code say
//! which state they mean.

use crate::layout::META_W;
use crate::ram::ADDR_W;
use fanin_proto::model::{CopyState, Counter};
use fanin_proto::wire::PacketType;
use rust_hdl::prelude::*;

/// Front end (`state`): the take, the lookup and the timer scan's visit of one slot copy.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum FrontState {
    /// Take the picked frame (`front.rs`' `take`: the look-ahead has parsed it; also while the
    /// decision stages work on the frame before), apply a job commit or start a timer-scan
    /// visit (those two only when the decision stages are empty).
    Idle,
    /// Job index, slot address; job/child/metadata reads; hand-over of non-job frames
    /// (once the decision stages are empty). The frame then waits in LOOK (`look.rs`, a stage
    /// of its own) until PRED takes it.
    Parse,
    /// Parser checks and population-count check registered (from the look-ahead's
    /// registered terms); first table hits (one-hot) registered.
    Prep2,
    /// Timer scan: metadata read of (`scan_ptr`, `scan_c`).
    Scan,
    /// Timer scan: metadata registered.
    SWait,
    /// Timer scan: job-entry read by the copy's entry index; age registered.
    SLat,
    /// Timer scan: the scan decision's conditions registered.
    SPred,
    /// Timer scan decision (flush: hand-over / reclaim).
    SDec,
    /// Timer scan: next copy / slot.
    SNext,
}

/// Decision stages (`xstate`), one frame at a time, overlapping the next frame's take,
/// PREP2, PARSE and LOOK.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum DecState {
    /// No frame in the decision stages.
    Idle,
    /// The decision's conditions registered; the decision's context copied (`x*`).
    Pred,
    /// The decision's branch registered.
    DSel,
    /// Its effects; hand-over of the item.
    Decide,
}

/// Back end (`bstate`, and the state an item hands over with, `h_st`, `loads.rs`' `st`, `sq.st`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum BackState {
    /// No item.
    Idle,
    /// Read-modify-write of the slot rows through the accumulator.
    Rmw,
    /// Child scan of a multicast round after the first (the item stage scans the first).
    ChildScan,
    /// Copy the payload rows (slot rows or ingress rows) to all destination ports.
    CopyRows,
    /// First destination header: waits until the copy's overflow bit is readable.
    FirstHeader,
    /// Select / build (two stages) / push, one destination port per cycle.
    Select,
    /// Release only (the frame was dropped or only counted).
    Release,
}

/// The action DECIDE chose for a fanin frame of a known job (`dsel.q.act`, `Loads`' `br.act`).
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum Action {
    /// Dropped (counted only).
    Drop,
    /// Forwarded toward the parent with the bypass flag.
    Bypass,
    /// Aggregated into the slot copy (RMW).
    Aggregate,
    /// The stored aggregate re-emitted to the parent.
    ReEmit,
    /// The stored result replayed to the sender.
    Replay,
    /// An ACCEPT or REFUSE from the parent passed down to the children delivering one of
    /// its ranks (`Switch::relay_down`): a multicast with a ranks filter.
    Relay,
    /// Refused at a root with sessions (`Switch::session_floor`): a REFUSE to the sender.
    Refuse,
    /// A JOIN at a root with sessions: handed to the session unit (`SessState`).
    Join,
}

/// The root's session unit (`su_st`, `Switch::join` / `open_session`): one JOIN at a time,
/// while the decision stages wait.
#[derive(Copy, Clone, PartialEq, Eq, Debug, LogicState)]
pub enum SessState {
    /// No JOIN.
    Idle,
    /// The JOIN's rank (its one bit, encoded) and the entry's session state registered.
    Load,
    /// The rank's member row read.
    Read,
    /// The member row registered.
    Wait,
    /// A repeat of the open session's JOIN (answered again), or a new member (row written,
    /// `pending` grows; every rank joined: open).
    Decide,
    /// Opening: the session's first block (`next_base`).
    Open,
    /// Opening: the session state set, the entry's epoch moved on (the job's copies freed).
    Apply,
    /// The next rank to answer (the lowest left), or done.
    Next,
    /// Its index encoded.
    Enc,
    /// Its member row read.
    ARead,
    /// Its member row registered.
    AWait,
    /// The ACCEPT's fields from the row.
    ASet,
    /// The ACCEPT staged for the back end when the item stage is free.
    AStage,
}

/// The engine's counter-event words (`ev`, `ev_b`, `dsel.q.ev`): bit k counts `Counter::ALL[k]`
/// (the register order), so an event is named by its counter. The core holds one
/// constant per counter it raises (`ev_<counter>`), made here.
pub fn event(c: Counter) -> Constant<Bits<32>> {
    let k = Counter::ALL.iter().position(|x| *x == c).unwrap();
    Constant::new((1u64 << k).into())
}

const _: () = assert!(Counter::COUNT <= 32, "counter events are a 32-bit word");

/// A slot copy's state as the metadata word holds it (`CopyState` order, the `state`
/// field of `fanin_regs::layout::meta`): the core's `cs_<state>` constants.
pub fn copy_state(s: CopyState) -> Constant<Bits<3>> {
    Constant::new((s as u64).into())
}

/// A packet type byte (`PacketType`): the core's `pt_<type>` constants.
pub fn packet_type(t: PacketType) -> Constant<Bits<8>> {
    Constant::new((t as u64).into())
}

/// Header flag bits (`Flags::*`): the core's `fl_<flag>` constants.
pub fn flag(bits: u8) -> Constant<Bits<8>> {
    Constant::new((bits as u64).into())
}

/// The front end's frame, and its item if any, for the back end (`FrontEnd::fi`,
/// `BackEnd::fi`; loaded whenever the back end is free, taken at `front.h_go`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct FrontItem {
    /// The frame's header region, or the ARP reply's (first: word-aligned).
    pub hdr: Bits<512>,
    /// The frame's ingress port.
    pub sel: Bits<4>,
    /// Its first buffer row.
    pub row0: Bits<16>,
    /// Its buffer rows.
    pub nrows: Bits<16>,
    /// Its buffer is released at the end (not a scan visit).
    pub rel: bool,
    /// Its length, or the ARP reply's.
    pub len: Bits<16>,
    /// The hand-over carries an item that sends a frame (not only a release).
    pub item: bool,
    /// The item's rows.
    pub enr: Bits<16>,
    /// It has rows (`enr != 0`).
    pub more: bool,
    /// It has exactly one (`enr == 1`).
    pub last: bool,
    /// Its destination ports.
    pub pmask: Bits<8>,
    /// It pushes the frame's original header (a routed frame, an ARP reply).
    pub orig: bool,
    /// It is the timer scan's flush of slot copy `cadr` (the back end's `f_o`).
    pub slot: bool,
    /// The slot copy PARSE or the scan visit addressed.
    pub cadr: Bits<ADDR_W>,
}

/// What PRED computes for DECIDE besides the conditions (`Pred::mg`, registered as `x_mg`,
/// read by `Loads`): the slot copy's metadata as read, the copy after a merge, the rows.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Merged {
    /// The copy's metadata word (`layout::META`).
    pub m: Bits<META_W>,
    /// The copy's bitmap after a merge.
    pub newbm: Bits<64>,
    /// The copy's flags after a merge.
    pub mflags: Bits<8>,
    /// The packet's kept flags (a new copy's).
    pub sflags: Bits<8>,
    /// The copy's payload rows.
    pub rows_m: Bits<16>,
    /// The packet's payload rows.
    pub rows: Bits<16>,
    /// The packet has at most one row.
    pub rle1: bool,
    /// The copy's bitmap is not the job's expected one (a re-emission is PARTIAL).
    pub partial: bool,
}

/// DSEL's branch for the frame in DECIDE (`DSel::q`, read by `Loads`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Branch {
    /// The counter events (`event` bits).
    pub ev: Bits<32>,
    /// The action.
    pub act: Action,
    /// The Acc operation of an aggregation (1: start, 2: merge).
    pub aop: Bits<2>,
    /// The copy completes with this contribution.
    pub cpl: bool,
    /// The contribution merges into the copy's block.
    pub merge: bool,
    /// A result takes effect (it came from the parent's port).
    pub rok: bool,
    /// A REFUSE's reason.
    pub why: Bits<8>,
    /// The contribution moves the root's session floor (`high`) on.
    pub hup: bool,
}

/// An ACCEPT the root's session unit offers, one per rank (`SessionUnit::ac`, staged by
/// `Loads`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Accept {
    /// The nonce (its one element).
    pub nonce: Bits<32>,
    /// Destination MAC address.
    pub mac: Bits<48>,
    /// Destination IPv4 address.
    pub ip: Bits<32>,
    /// Destination UDP port.
    pub udp: Bits<16>,
    /// Egress port.
    pub port: Bits<4>,
    /// The rank, one bit.
    pub bm: Bits<64>,
    /// Job id.
    pub job: Bits<16>,
    /// Block: the session's first.
    pub block: Bits<32>,
}

/// The fanin header fields of a frame, as a stage carries them (`front.f`: PREP, `look.f_r`:
/// LOOK, `xp_f`: PRED, `dx_f`: DSEL/DECIDE, `hx_f`: the header generator's item): one register per
/// stage instead of eleven (`proto::wire::Header`; `exponent` is the header's `exp`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Fields {
    /// Packet type.
    pub ptype: Bits<8>,
    /// Header flags.
    pub flags: Bits<8>,
    /// Block exponent.
    pub exponent: Bits<8>,
    /// Job id.
    pub job: Bits<16>,
    /// Elements in the payload.
    pub elements: Bits<16>,
    /// Block number.
    pub block: Bits<32>,
    /// Child index (REFUSE: the reason).
    pub child: Bits<8>,
    /// Contributor bitmap.
    pub bitmap: Bits<64>,
    /// Source IPv4 address.
    pub src_ip: Bits<32>,
    /// Source UDP port.
    pub src_port: Bits<16>,
    /// Source MAC address.
    pub src_mac: Bits<48>,
}

/// An outgoing item's header fields and destination (`sq_o`: the item stage, `o_f`: the
/// back end). It repeats [`Fields`] rather than holding one: `hdl_gen` reads only one level
/// of a `LogicStruct` (`x.val().a.b` is not translated).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct OutFields {
    /// Packet type.
    pub ptype: Bits<8>,
    /// Header flags.
    pub flags: Bits<8>,
    /// Block exponent.
    pub exponent: Bits<8>,
    /// Job id.
    pub job: Bits<16>,
    /// Elements in the payload.
    pub elements: Bits<16>,
    /// Block number.
    pub block: Bits<32>,
    /// Child index (REFUSE: the reason).
    pub child: Bits<8>,
    /// Contributor bitmap.
    pub bitmap: Bits<64>,
    /// Source IPv4 address.
    pub src_ip: Bits<32>,
    /// Source UDP port.
    pub src_port: Bits<16>,
    /// Source MAC address.
    pub src_mac: Bits<48>,
    /// Destination IPv4 address.
    pub dst_ip: Bits<32>,
    /// Destination UDP port.
    pub dst_port: Bits<16>,
    /// Destination MAC address.
    pub dst_mac: Bits<48>,
}

/// The item the item stage holds (`item.rs`' `sq`, loaded from DECIDE's or the session
/// unit's `ld`) and hands to the back end (`back.rs`' `l_item`), but for its header fields
/// (`sq_o`) and per-port children (`sq_pp_*`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Staged {
    /// The ingress frame's header region.
    pub hdr: Bits<512>,
    /// The back end's state for the item at hand-over.
    pub st: BackState,
    /// Its RMW's first cycle is its last.
    pub rl: bool,
    /// An ACCEPT of the session unit: no ingress frame to release.
    pub accept: bool,
    /// The ACCEPT's nonce, its one row.
    pub nonce: Bits<32>,
    /// The RMW's Acc operation.
    pub aop: Bits<2>,
    /// The slot copy.
    pub cadr: Bits<ADDR_W>,
    /// A frame is sent after the RMW.
    pub emit: bool,
    /// Rows to send.
    pub enr: Bits<16>,
    /// The header carries the copy's overflow bit.
    pub eovf: bool,
    /// The job-table entry.
    pub ji: Bits<8>,
    /// The ingress frame's length.
    pub len: Bits<16>,
    /// The entry's children.
    pub nch: Bits<8>,
    /// The ingress frame's buffer rows.
    pub nrows: Bits<16>,
    /// Its first buffer row.
    pub row0: Bits<16>,
    /// Its ingress port.
    pub sel: Bits<4>,
    /// One row to send.
    pub last: bool,
    /// A multicast.
    pub mc: bool,
    /// A relayed ACCEPT or REFUSE: its scans skip children without one of its ranks, and
    /// its pushes are not `results_sent`.
    pub rly: bool,
    /// Rows to send.
    pub more_rows: bool,
    /// The rows sent are slot rows.
    pub slot: bool,
    /// RMW rows.
    pub nr: Bits<16>,
    /// The first round's destination ports.
    pub pmask: Bits<8>,
    /// The child the next round starts at.
    pub ei: Bits<8>,
    /// Another round follows.
    pub more: bool,
}

/// PRED's registered conditions on the copy, the frame and the job entry (`q_c`), from which
/// DSEL chooses the branch (`dsel.rs`).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Conds {
    /// The copy's state (`CopyState`).
    pub st: Bits<3>,
    /// The copy is busy (Aggregating or Emitted).
    pub busy_st: bool,
    /// The copy holds a block (not Free).
    pub same: bool,
    /// It holds the frame's block.
    pub samebl: bool,
    /// The frame's ranks are a subset of the copy's.
    pub subset: bool,
    /// They are disjoint from the copy's.
    pub disjoint: bool,
    /// The copy's block is newer than the frame's (serial order).
    pub newer_cb: bool,
    /// The frame's block is newer than the copy's.
    pub newer_bc: bool,
    /// The copy is past its timeouts (flush plus reclaim).
    pub stale: bool,
    /// The frame has ranks the job does not.
    pub badrank: bool,
    /// The frame has more elements than a slot's lanes.
    pub toolong: bool,
    /// Its child index is past the job's children.
    pub badchild: bool,
    /// It has ranks its child does not deliver.
    pub chrank: bool,
    /// Its child index is past the degree limit.
    pub degree: bool,
    /// A contribution or JOIN from the wrong source.
    pub badsrc: bool,
    /// A result, ACCEPT or REFUSE not from the parent's port.
    pub rbadsrc: bool,
    /// At a root with sessions: no session open.
    pub ses_nos: bool,
    /// At a root with sessions: a block before the session's first.
    pub ses_old: bool,
    /// The frame alone completes the copy.
    pub cpl0: bool,
    /// The frame merged into the copy completes it.
    pub cpl1: bool,
    /// The frame's element count differs from the copy's.
    pub elne: bool,
}

/// The timer scan's registered conditions on the copy it visits and the job entry the
/// copy was written under (`q_s`, SPRED), from which SDEC acts (`Switch::scan_slot`), and
/// the copy's rows for a flush (registered: on `sume` the rows computed from the metadata
/// read in SDEC reached the back end's `e_more`/`e_last` at 6 LUT levels).
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct ScanConds {
    /// Flush the partial aggregate upward (an inner switch's timeout-mode copy,
    /// Aggregating past `flush_after`).
    pub flush: bool,
    /// Reclaim the emitted copy (timeout mode, past `reclaim_after`): Stale.
    pub recl: bool,
    /// The copy's bitmap is not the expected one (a flush is PARTIAL).
    pub partial: bool,
    /// Idle reclaim (every mode): a busy copy without progress for `reclaim_idle`.
    pub idle: bool,
    /// The copy is Emitted.
    pub emit: bool,
    /// The copy's payload rows (a flush sends them).
    pub rows: Bits<16>,
    /// It has rows.
    pub more: bool,
    /// It has exactly one.
    pub last: bool,
}

/// A frame's context beside its header fields, as the decision stages carry it (`look.c_r`:
/// LOOK, `x_c`: PRED and DSEL, `dx_c`: DECIDE), one register per stage.
#[derive(Copy, Clone, Debug, PartialEq, Default, LogicStruct)]
pub struct Ctx {
    /// The frame's header region (first: a word-aligned field copies without shifts in the
    /// Verilated model).
    pub hdr: Bits<512>,
    /// The tick the frame was taken at (a scan visit's: the visit's).
    pub now: Bits<32>,
    /// Its ingress port.
    pub sel: Bits<4>,
    /// Its length.
    pub len: Bits<16>,
    /// Its first buffer row.
    pub row0: Bits<16>,
    /// Its buffer rows.
    pub nrows: Bits<16>,
}
