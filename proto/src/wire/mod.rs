//! Wire format: the fanin header ([`header`]), whole Ethernet/IPv4/UDP frames ([`frame`])
//! and the ARP request a switch answers ([`arp`]).
//!
//! Layout constants live here and nowhere else: the RTL generator, the host, the
//! Wireshark dissector test and docs/protocol.md all read them.

pub mod arp;
pub mod frame;
pub mod header;

pub use frame::{Datagram, FrameError, FrameKind, L4Addr};
pub use header::{Flags, Packet, PacketType, RefuseReason, Repr};

/// Default UDP port that fanin traffic is addressed to.
pub const FANIN_UDP_PORT: u16 = 48879;
/// Protocol version carried in every header.
pub const VERSION: u8 = 1;
/// Length of the fanin header in bytes.
pub const HEADER_LEN: usize = 22;
/// Bytes of Ethernet (14) + IPv4 without options (20) + UDP (8).
pub const L2L4_LEN: usize = 42;
/// Byte offset of the first payload element inside an Ethernet frame (64: beat-aligned).
pub const PAYLOAD_OFFSET: usize = L2L4_LEN + HEADER_LEN;
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
/// Width of the contributor bitmap: the largest number of workers in one job.
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
}
