//! Wire format: the fanin header ([`header`], version 1), the version-2 header for jobs of
//! more than 64 ranks ([`wide`]), rank sets ([`ranks`]), whole Ethernet/IPv4/UDP frames
//! ([`frame`]) and the ARP request a switch answers ([`arp`]).
//!
//! Layout constants live here and nowhere else: the RTL generator, the host, the
//! Wireshark dissector test and docs/protocol.md all read them.

pub mod arp;
pub mod frame;
pub mod header;
pub mod ranks;
pub mod wide;

pub use frame::{Datagram, FrameError, FrameKind, L4Addr};
pub use header::{Flags, Packet, PacketType, RefuseReason, Repr};
pub use ranks::RankSet;
pub use wide::WideRepr;

/// Default UDP port that fanin traffic is addressed to.
pub const FANIN_UDP_PORT: u16 = 48879;
/// Protocol version of the 22-byte header (every job of at most 64 ranks; the RTL's only one).
pub const VERSION: u8 = 1;
/// Length of the fanin header in bytes.
pub const HEADER_LEN: usize = 22;
/// Protocol version of the [`wide`] header: dynamic jobs with a rank at or above 64.
pub const VERSION_2: u8 = 2;
/// Length of the version-2 header: the smallest that keeps the payload on a [`BEAT_BYTES`]
/// boundary of the frame and holds more than 64 ranks (its bitmap fills one whole beat).
pub const HEADER_LEN_V2: usize = 86;
/// The widest data path of an RTL configuration (512 bits, docs/rtl.md `data_w`): payloads
/// start on a multiple of it in both header versions.
pub const BEAT_BYTES: usize = 64;
/// Most ranks of one job: the version-2 bitmap (512 bits, one beat).
pub const MAX_RANKS: u32 = 512;
/// Bytes of Ethernet (14) + IPv4 without options (20) + UDP (8).
pub const L2L4_LEN: usize = 42;
/// Byte offset of the first payload element inside an Ethernet frame (64: beat-aligned).
pub const PAYLOAD_OFFSET: usize = L2L4_LEN + HEADER_LEN;
/// Byte offset of the first payload element of a version-2 frame (128: two 512-bit beats).
pub const PAYLOAD_OFFSET_V2: usize = L2L4_LEN + HEADER_LEN_V2;
const _: () = assert!(PAYLOAD_OFFSET % BEAT_BYTES == 0 && PAYLOAD_OFFSET_V2 % BEAT_BYTES == 0);
const _: () = assert!(
    HEADER_LEN_V2 == wide::field::BITMAP.end
        && MAX_RANKS as usize == 8 * (wide::field::BITMAP.end - wide::field::BITMAP.start)
);
/// Bytes per payload element (a signed 32-bit integer, big-endian).
pub const ELEMENT_BYTES: usize = 4;
/// Default number of elements per packet (256 B of payload).
pub const DEFAULT_ELEMENTS: u16 = 64;
/// Largest lane count of an RTL configuration (1024 B of payload). The generator and the
/// register driver read it; a software switch may go up to [`MAX_WIRE_ELEMENTS`].
pub const MAX_ELEMENTS: u16 = 256;
/// The jumbo-frame IP MTU a software path fills with one packet.
pub const JUMBO_MTU: usize = 9000;
/// Largest element count the wire format carries: one fanin packet in a [`JUMBO_MTU`] IP
/// packet (IPv4 20 + UDP 8 + header 22 + 4·n ≤ 9000, n = 2237). Each switch refuses
/// packets with more elements than its own `Params::elements`.
pub const MAX_WIRE_ELEMENTS: u16 = ((JUMBO_MTU - 28 - HEADER_LEN) / ELEMENT_BYTES) as u16;
/// Largest element count of a version-2 packet in a [`JUMBO_MTU`] IP packet (n = 2221).
pub const MAX_WIRE_ELEMENTS_V2: u16 = ((JUMBO_MTU - 28 - HEADER_LEN_V2) / ELEMENT_BYTES) as u16;
/// Width of the version-1 contributor bitmap: the most ranks of a static or timeout job, and
/// of any job the RTL runs (a dynamic job may have up to [`MAX_RANKS`], in version 2).
pub const MAX_WORKERS: u32 = 64;
/// Largest Ethernet frame (without FCS) a fanin packet of an RTL configuration can occupy.
pub const MAX_FANIN_FRAME: usize = PAYLOAD_OFFSET + MAX_ELEMENTS as usize * ELEMENT_BYTES;

/// Why a fanin packet was rejected. Every variant is counted by the switch as `malformed`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum WireError {
    /// Fewer bytes than a fanin header.
    #[error("truncated fanin header")]
    Truncated,
    /// The element count disagrees with the datagram length.
    #[error("element count disagrees with the datagram length")]
    BadLength,
    /// The version byte is not [`VERSION`].
    #[error("unsupported protocol version")]
    BadVersion,
    /// The packet type is not one this version defines.
    #[error("unknown packet type")]
    BadType,
    /// A reserved flag bit is set.
    #[error("reserved flag bits set")]
    BadFlags,
    /// More elements than [`MAX_WIRE_ELEMENTS`].
    #[error("too many elements")]
    TooManyElements,
    /// The contribution count is not the number of bits in the contributor bitmap.
    #[error("count disagrees with the contributor bitmap")]
    BadCount,
    /// The contributor bitmap is empty.
    #[error("empty contributor bitmap")]
    EmptyBitmap,
    /// A JOIN, ACCEPT or REFUSE of the wrong shape (rank count, element count, nonce, reason).
    #[error("malformed session packet")]
    BadSessionPacket,
    /// A version-2 header's reserved bytes (13 and 16..22) are not zero.
    #[error("reserved header bytes set (version 2: byte 13 and bytes 16..22 must be zero)")]
    BadReserved,
}
