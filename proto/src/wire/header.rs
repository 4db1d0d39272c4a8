//! The 22-byte fanin header, smoltcp style: [`Packet`] over a byte buffer plus [`Repr`].
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | version |
//! | 1 | 1 | type |
//! | 2 | 1 | flags |
//! | 3 | 1 | exponent (i8) |
//! | 4 | 2 | job id |
//! | 6 | 2 | element count |
//! | 8 | 4 | block id |
//! | 12 | 1 | child index |
//! | 13 | 1 | contribution count |
//! | 14 | 8 | contributor bitmap |
//! | 22 | 4·n | elements (i32, big-endian) |

use super::{WideRepr, WireError, ELEMENT_BYTES, HEADER_LEN, MAX_WIRE_ELEMENTS, VERSION};

/// Byte ranges of the header fields.
pub mod field {
    use core::ops::{Range, RangeFrom};
    /// Protocol version.
    pub const VERSION: usize = 0;
    /// Packet type.
    pub const TYPE: usize = 1;
    /// Flag bits.
    pub const FLAGS: usize = 2;
    /// Scale exponent (i8).
    pub const EXPONENT: usize = 3;
    /// Job id.
    pub const JOB: Range<usize> = 4..6;
    /// Element count.
    pub const ELEMENTS: Range<usize> = 6..8;
    /// Block (sequence) id.
    pub const BLOCK: Range<usize> = 8..12;
    /// Sender's child index at the receiving switch.
    pub const CHILD: usize = 12;
    /// Number of contributions summed into the packet.
    pub const COUNT: usize = 13;
    /// Contributor bitmap (one bit per worker rank).
    pub const BITMAP: Range<usize> = 14..22;
    /// The elements.
    pub const PAYLOAD: RangeFrom<usize> = 22..;
}

/// Packet types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum PacketType {
    /// A worker's contribution, or a partial aggregate, travelling up the tree.
    Contribution = 1,
    /// The finished sum, travelling down the tree.
    Result = 2,
    /// A worker asks the job's root to open (or repeat) its session; `block` is its nonce.
    Join = 3,
    /// The root's answer to a JOIN: `block` is the session's first block id, the one
    /// element is the nonce the worker joined with.
    Accept = 4,
    /// A switch refuses a contribution (reason in `child`): no session, or a stale block.
    Refuse = 5,
}

/// Why a contribution was refused (the `child` field of a REFUSE packet).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub enum RefuseReason {
    /// The root has no open session for the job (it restarted, or the job was reset).
    NoSession = 1,
    /// The block is older than the open session's first block: a later session superseded it.
    StaleBlock = 2,
}

impl RefuseReason {
    /// Decodes a reason byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            1 => Some(Self::NoSession),
            2 => Some(Self::StaleBlock),
            _ => None,
        }
    }

    /// What the reason means, for error messages.
    pub fn describe(self) -> &'static str {
        match self {
            Self::NoSession => {
                "the root has no open session for the job (it restarted, or the job was reset)"
            }
            Self::StaleBlock => {
                "the block is from an earlier session (a later allreduce of the job superseded it)"
            }
        }
    }
}

impl PacketType {
    /// Decodes a type byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        match v {
            1 => Some(Self::Contribution),
            2 => Some(Self::Result),
            3 => Some(Self::Join),
            4 => Some(Self::Accept),
            5 => Some(Self::Refuse),
            _ => None,
        }
    }
}

/// Header flag bits.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize, serde::Deserialize,
)]
pub struct Flags(pub u8);

impl Flags {
    /// Do not aggregate: forward toward the root, which aggregates it.
    pub const BYPASS: u8 = 0x01;
    /// A result copy multicast down the tree (clear on a unicast reply to a duplicate).
    pub const MULTICAST: u8 = 0x02;
    /// A partial aggregate flushed by a timeout.
    pub const PARTIAL: u8 = 0x04;
    /// Some lane saturated while summing.
    pub const OVERFLOW: u8 = 0x08;
    /// Contributions with different exponents were summed.
    pub const EXP_MISMATCH: u8 = 0x10;
    /// All defined bits; the rest are reserved and must be zero.
    pub const DEFINED: u8 = 0x1f;

    /// True if every bit of `bit` is set.
    pub fn has(self, bit: u8) -> bool {
        self.0 & bit == bit
    }
    /// Returns a copy with `bit` set.
    pub fn with(self, bit: u8) -> Self {
        Self(self.0 | bit)
    }
    /// Returns a copy with `bit` cleared.
    pub fn without(self, bit: u8) -> Self {
        Self(self.0 & !bit)
    }
}

/// A read/write view of a fanin header and payload.
#[derive(Debug, Clone)]
pub struct Packet<T: AsRef<[u8]>> {
    buffer: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wraps a buffer without checking its length.
    pub fn new_unchecked(buffer: T) -> Self {
        Self { buffer }
    }

    /// Wraps a buffer and checks that every accessor is in bounds.
    pub fn new_checked(buffer: T) -> Result<Self, WireError> {
        let p = Self::new_unchecked(buffer);
        p.check_len()?;
        Ok(p)
    }

    /// Checks that the buffer holds the header and exactly `element_count` elements.
    ///
    /// After this succeeds no accessor can panic.
    pub fn check_len(&self) -> Result<(), WireError> {
        let len = self.buffer.as_ref().len();
        if len < HEADER_LEN {
            return Err(WireError::Truncated);
        }
        if len != HEADER_LEN + self.element_count() as usize * ELEMENT_BYTES {
            return Err(WireError::BadLength);
        }
        Ok(())
    }

    /// Returns the underlying buffer.
    pub fn into_inner(self) -> T {
        self.buffer
    }

    fn b(&self) -> &[u8] {
        self.buffer.as_ref()
    }
    /// Protocol version.
    pub fn version(&self) -> u8 {
        self.b()[field::VERSION]
    }
    /// Raw packet type byte.
    pub fn packet_type(&self) -> u8 {
        self.b()[field::TYPE]
    }
    /// Flag bits.
    pub fn flags(&self) -> Flags {
        Flags(self.b()[field::FLAGS])
    }
    /// Scale exponent: elements are `value · 2^-exponent`.
    pub fn exponent(&self) -> i8 {
        self.b()[field::EXPONENT] as i8
    }
    /// Job id.
    pub fn job(&self) -> u16 {
        be16(&self.b()[field::JOB])
    }
    /// Element count.
    pub fn element_count(&self) -> u16 {
        be16(&self.b()[field::ELEMENTS])
    }
    /// Block id.
    pub fn block(&self) -> u32 {
        let s = &self.b()[field::BLOCK];
        u32::from_be_bytes([s[0], s[1], s[2], s[3]])
    }
    /// Sender's child index at the receiving switch.
    pub fn child(&self) -> u8 {
        self.b()[field::CHILD]
    }
    /// Number of contributions summed into this packet.
    pub fn count(&self) -> u8 {
        self.b()[field::COUNT]
    }
    /// Contributor bitmap.
    pub fn bitmap(&self) -> u64 {
        let s = &self.b()[field::BITMAP];
        let mut a = [0u8; 8];
        a.copy_from_slice(s);
        u64::from_be_bytes(a)
    }
    /// Element `i` of the payload (`i < element_count()`).
    pub fn element(&self, i: usize) -> i32 {
        let o = HEADER_LEN + i * ELEMENT_BYTES;
        let s = &self.b()[o..o + ELEMENT_BYTES];
        i32::from_be_bytes([s[0], s[1], s[2], s[3]])
    }
    /// All elements as they are on the wire (big-endian lanes, see [`Lane`]): a consumer
    /// decodes while it works, with no decoded vector.
    pub fn lanes(&self) -> &[[u8; ELEMENT_BYTES]] {
        let n = self.element_count() as usize;
        bytemuck::cast_slice(&self.b()[HEADER_LEN..HEADER_LEN + n * ELEMENT_BYTES])
    }
    /// All elements, decoded.
    pub fn elements(&self) -> Vec<i32> {
        let n = self.element_count() as usize;
        // Whole 4-byte chunks: the compiler turns this into vector byte swaps.
        self.b()[HEADER_LEN..HEADER_LEN + n * ELEMENT_BYTES]
            .chunks_exact(ELEMENT_BYTES)
            .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }
}

/// One int32 element: decoded (`i32`) or as on the wire (`[u8; 4]`, big-endian), so that
/// slot arithmetic reads a packet's lanes in place ([`Packet::lanes`]).
pub trait Lane: Copy {
    /// The element's value.
    fn value(self) -> i32;
}

impl Lane for i32 {
    fn value(self) -> i32 {
        self
    }
}

impl Lane for [u8; ELEMENT_BYTES] {
    fn value(self) -> i32 {
        i32::from_be_bytes(self)
    }
}

impl<T: AsRef<[u8]> + AsMut<[u8]>> Packet<T> {
    fn bm(&mut self) -> &mut [u8] {
        self.buffer.as_mut()
    }
    /// Sets the flags byte.
    pub fn set_flags(&mut self, f: Flags) {
        self.bm()[field::FLAGS] = f.0;
    }
    /// Sets the child index.
    pub fn set_child(&mut self, c: u8) {
        self.bm()[field::CHILD] = c;
    }
    /// Sets element `i`.
    pub fn set_element(&mut self, i: usize, v: i32) {
        let o = HEADER_LEN + i * ELEMENT_BYTES;
        self.bm()[o..o + ELEMENT_BYTES].copy_from_slice(&v.to_be_bytes());
    }
}

fn be16(s: &[u8]) -> u16 {
    u16::from_be_bytes([s[0], s[1]])
}

/// High-level representation of a fanin header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Repr {
    /// Packet type.
    pub ptype: PacketType,
    /// Flag bits.
    pub flags: Flags,
    /// Scale exponent.
    pub exponent: i8,
    /// Job id.
    pub job: u16,
    /// Number of elements in the payload.
    pub elements: u16,
    /// Block id.
    pub block: u32,
    /// Sender's child index at the receiver.
    pub child: u8,
    /// Contributor bitmap; the count field is its popcount.
    pub bitmap: u64,
}

impl Repr {
    /// Parses and validates a header. The buffer must already pass `check_len`.
    pub fn parse<T: AsRef<[u8]>>(p: &Packet<T>) -> Result<Self, WireError> {
        p.check_len()?;
        if p.version() != VERSION {
            return Err(WireError::BadVersion);
        }
        let ptype = PacketType::from_u8(p.packet_type()).ok_or(WireError::BadType)?;
        if p.flags().0 & !Flags::DEFINED != 0 {
            return Err(WireError::BadFlags);
        }
        if p.element_count() > MAX_WIRE_ELEMENTS {
            return Err(WireError::TooManyElements);
        }
        if p.bitmap() == 0 {
            return Err(WireError::EmptyBitmap);
        }
        if p.count() as u32 != p.bitmap().count_ones() {
            return Err(WireError::BadCount);
        }
        check_session(
            ptype,
            p.bitmap().count_ones(),
            p.element_count(),
            p.block(),
            p.child(),
        )?;
        Ok(Self {
            ptype,
            flags: p.flags(),
            exponent: p.exponent(),
            job: p.job(),
            elements: p.element_count(),
            block: p.block(),
            child: p.child(),
            bitmap: p.bitmap(),
        })
    }

    /// Number of bytes the header plus payload occupy.
    pub fn buffer_len(&self) -> usize {
        HEADER_LEN + self.elements as usize * ELEMENT_BYTES
    }

    /// Number of contributions summed into the packet.
    pub fn count(&self) -> u8 {
        self.bitmap.count_ones() as u8
    }

    /// Writes the header into `p` (whose buffer must be `buffer_len()` long).
    pub fn emit<T: AsRef<[u8]> + AsMut<[u8]>>(&self, p: &mut Packet<T>) {
        let b = p.bm();
        emit_shared(b, &WideRepr::from(self));
        b[field::COUNT] = self.count();
        b[field::BITMAP].copy_from_slice(&self.bitmap.to_be_bytes());
    }

    /// Builds a complete header + payload buffer. `data.len()` must equal `elements`.
    pub fn to_bytes(&self, data: &[i32]) -> Vec<u8> {
        let mut buf = vec![0u8; self.buffer_len()];
        self.write_into(&mut buf, data);
        buf
    }

    /// Writes the header and `data` into `buf`, which must be `buffer_len()` long (for
    /// example a frame's payload region: no intermediate buffer). `data.len()` must equal
    /// `elements`.
    pub fn write_into(&self, buf: &mut [u8], data: &[i32]) {
        assert_eq!(
            data.len(),
            self.elements as usize,
            "payload length must match the element count"
        );
        assert_eq!(
            buf.len(),
            self.buffer_len(),
            "buffer must be buffer_len() long"
        );
        self.emit(&mut Packet::new_unchecked(&mut *buf));
        write_elements(&mut buf[HEADER_LEN..], data);
    }
}

/// The rules of the session packets, the same in both header versions: a JOIN carries one
/// rank, no elements and a nonzero nonce (the block field); an ACCEPT one rank and one
/// element (the nonce); a REFUSE no elements and a defined reason (the child field).
pub(super) fn check_session(
    ptype: PacketType,
    ranks: u32,
    elements: u16,
    block: u32,
    child: u8,
) -> Result<(), WireError> {
    let one_rank = ranks == 1;
    let ok = match ptype {
        PacketType::Contribution | PacketType::Result => true,
        PacketType::Join => one_rank && elements == 0 && block != 0,
        PacketType::Accept => one_rank && elements == 1,
        PacketType::Refuse => elements == 0 && RefuseReason::from_u8(child).is_some(),
    };
    if ok {
        Ok(())
    } else {
        Err(WireError::BadSessionPacket)
    }
}

/// Writes the fields both header versions share, bytes 0 to 12 (version to child index),
/// into `b`, the header's first bytes.
pub(super) fn emit_shared(b: &mut [u8], h: &WideRepr) {
    b[field::VERSION] = h.version;
    b[field::TYPE] = h.ptype as u8;
    b[field::FLAGS] = h.flags.0;
    b[field::EXPONENT] = h.exponent as u8;
    b[field::JOB].copy_from_slice(&h.job.to_be_bytes());
    b[field::ELEMENTS].copy_from_slice(&h.elements.to_be_bytes());
    b[field::BLOCK].copy_from_slice(&h.block.to_be_bytes());
    b[field::CHILD] = h.child;
}

/// Writes `data` as big-endian elements into `buf`, a payload region `data.len()` elements
/// long.
pub(super) fn write_elements(buf: &mut [u8], data: &[i32]) {
    for (c, v) in buf.chunks_exact_mut(ELEMENT_BYTES).zip(data) {
        c.copy_from_slice(&v.to_be_bytes());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Repr {
        Repr {
            ptype: PacketType::Contribution,
            flags: Flags(Flags::PARTIAL),
            exponent: -3,
            job: 0x0102,
            elements: 2,
            block: 0x0a0b0c0d,
            child: 5,
            bitmap: 0b1011,
        }
    }

    #[test]
    fn emit_exact_bytes() {
        let bytes = sample().to_bytes(&[1, -2]);
        let want: [u8; 30] = [
            1, 1, 0x04, 0xfd, 0x01, 0x02, 0x00, 0x02, 0x0a, 0x0b, 0x0c, 0x0d, 5, 3, 0, 0, 0, 0, 0,
            0, 0, 0x0b, 0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe,
        ];
        assert_eq!(bytes, want);
    }

    #[test]
    fn parse_round_trip() {
        let bytes = sample().to_bytes(&[1, -2]);
        let p = Packet::new_checked(&bytes[..]).unwrap();
        assert_eq!(Repr::parse(&p).unwrap(), sample());
        assert_eq!(p.elements(), vec![1, -2]);
    }

    #[test]
    fn rejects_each_malformation() {
        let good = sample().to_bytes(&[1, -2]);
        assert_eq!(
            Packet::new_checked(&good[..10]).unwrap_err(),
            WireError::Truncated
        );
        assert_eq!(
            Packet::new_checked(&good[..29]).unwrap_err(),
            WireError::BadLength
        );
        let mut b = good.clone();
        b[0] = 2;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::BadVersion)
        );
        let mut b = good.clone();
        b[1] = 7;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::BadType)
        );
        let mut b = good.clone();
        b[2] = 0x80;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::BadFlags)
        );
        let mut b = good.clone();
        b[13] = 2;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::BadCount)
        );
        let mut b = good.clone();
        b[14..22].fill(0);
        b[13] = 0;
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&b[..])),
            Err(WireError::EmptyBitmap)
        );
        // The wire carries up to MAX_WIRE_ELEMENTS (a 9000-byte MTU); one more is refused.
        let most = crate::wire::MAX_WIRE_ELEMENTS;
        assert_eq!(HEADER_LEN + most as usize * ELEMENT_BYTES + 28, 8998);
        let full = Repr {
            elements: most,
            ..sample()
        };
        let b = full.to_bytes(&vec![0; most as usize]);
        assert_eq!(Repr::parse(&Packet::new_unchecked(&b[..])), Ok(full));
        let big = Repr {
            elements: most + 1,
            ..sample()
        }
        .to_bytes(&vec![0; most as usize + 1]);
        assert_eq!(
            Repr::parse(&Packet::new_unchecked(&big[..])),
            Err(WireError::TooManyElements)
        );
    }
}
