//! The version-2 header (86 bytes, up to [`MAX_RANKS`] ranks) and [`WideRepr`], a header of
//! either version whose contributor set is a [`RankSet`].
//!
//! Bytes 0–12 are version 1's (with `version` = 2); the count grows to 16 bits and the bitmap
//! to 512 bits, which fills the frame's second 512-bit beat, so the payload starts at frame
//! byte 128 (docs/protocol.md, "Header version 2"):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 1 | version (2) |
//! | 1 | 1 | type |
//! | 2 | 1 | flags |
//! | 3 | 1 | exponent (i8) |
//! | 4 | 2 | job id |
//! | 6 | 2 | element count |
//! | 8 | 4 | block id |
//! | 12 | 1 | child index |
//! | 13 | 1 | reserved, zero |
//! | 14 | 2 | contribution count |
//! | 16 | 6 | reserved, zero |
//! | 22 | 64 | contributor bitmap: word `w` (ranks `64w..64w+63`) at `22 + 8w`, big-endian |
//! | 86 | 4·n | elements (i32, big-endian) |
//!
//! A job uses one version for all its packets: version 2 if its rank set has a rank at or
//! above 64 ([`version_for`]), version 1 otherwise.

use super::header::{check_session, emit_shared, write_elements, Packet};
use super::ranks::{RankSet, RANK_WORDS};
use super::{
    Flags, PacketType, Repr, WireError, ELEMENT_BYTES, HEADER_LEN, HEADER_LEN_V2, MAX_RANKS,
    MAX_WIRE_ELEMENTS_V2, VERSION, VERSION_2,
};

/// Byte ranges of the version-2 header fields.
pub mod field {
    pub use crate::wire::header::field::{
        BLOCK, CHILD, ELEMENTS, EXPONENT, FLAGS, JOB, TYPE, VERSION,
    };
    use core::ops::{Range, RangeFrom};
    /// Reserved (version 1's count byte), zero.
    pub const RESERVED0: usize = 13;
    /// Number of contributions summed into the packet (u16).
    pub const COUNT: Range<usize> = 14..16;
    /// Reserved, zero.
    pub const RESERVED1: Range<usize> = 16..22;
    /// Contributor bitmap: eight big-endian 64-bit words, word `w` holding ranks `64w..`.
    pub const BITMAP: Range<usize> = 22..86;
    /// The elements.
    pub const PAYLOAD: RangeFrom<usize> = 86..;
}

/// The header version a job with rank set `ranks` uses: 2 if it has a rank at or above 64.
pub fn version_for(ranks: &RankSet) -> u8 {
    if ranks.is_wide() {
        VERSION_2
    } else {
        VERSION
    }
}

/// Header length of `version` (1 or 2).
pub fn header_len(version: u8) -> usize {
    if version == VERSION_2 {
        HEADER_LEN_V2
    } else {
        HEADER_LEN
    }
}

/// A fanin header of either version, with the contributor set as a [`RankSet`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct WideRepr {
    /// [`VERSION`] or [`VERSION_2`].
    pub version: u8,
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
    /// Contributor set; the count field is its size.
    pub bitmap: RankSet,
}

impl From<Repr> for WideRepr {
    fn from(r: Repr) -> Self {
        Self {
            version: VERSION,
            ptype: r.ptype,
            flags: r.flags,
            exponent: r.exponent,
            job: r.job,
            elements: r.elements,
            block: r.block,
            child: r.child,
            bitmap: RankSet::from_u64(r.bitmap),
        }
    }
}

impl From<&Repr> for WideRepr {
    fn from(r: &Repr) -> Self {
        (*r).into()
    }
}

impl From<&WideRepr> for WideRepr {
    fn from(r: &WideRepr) -> Self {
        *r
    }
}

fn be16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

impl WideRepr {
    /// Parses and validates a header of either version plus its payload length (`buf` is
    /// the whole datagram payload). Version 1 follows [`Repr::parse`] exactly.
    pub fn parse(buf: &[u8]) -> Result<Self, WireError> {
        match buf.first() {
            Some(&VERSION_2) => Self::parse_v2(buf),
            _ => Ok(Repr::parse(&Packet::new_checked(buf)?)?.into()),
        }
    }

    fn parse_v2(b: &[u8]) -> Result<Self, WireError> {
        if b.len() < HEADER_LEN_V2 {
            return Err(WireError::Truncated);
        }
        let n = be16(&b[field::ELEMENTS]);
        if b.len() != HEADER_LEN_V2 + n as usize * ELEMENT_BYTES {
            return Err(WireError::BadLength);
        }
        if b[field::VERSION] != VERSION_2 {
            return Err(WireError::BadVersion);
        }
        let ptype = PacketType::from_u8(b[field::TYPE]).ok_or(WireError::BadType)?;
        let flags = Flags(b[field::FLAGS]);
        if flags.0 & !Flags::DEFINED != 0 {
            return Err(WireError::BadFlags);
        }
        if n > MAX_WIRE_ELEMENTS_V2 {
            return Err(WireError::TooManyElements);
        }
        if b[field::RESERVED0] != 0 || b[field::RESERVED1].iter().any(|&x| x != 0) {
            return Err(WireError::BadReserved);
        }
        let mut bitmap = RankSet::EMPTY;
        for (w, c) in bitmap.0.iter_mut().zip(b[field::BITMAP].chunks_exact(8)) {
            *w = u64::from_be_bytes(c.try_into().expect("8-byte chunk"));
        }
        if bitmap.is_empty() {
            return Err(WireError::EmptyBitmap);
        }
        if be16(&b[field::COUNT]) as u32 != bitmap.count() {
            return Err(WireError::BadCount);
        }
        let block = u32::from_be_bytes(b[field::BLOCK].try_into().expect("4 bytes"));
        let child = b[field::CHILD];
        check_session(ptype, bitmap.count(), n, block, child)?;
        Ok(Self {
            version: VERSION_2,
            ptype,
            flags,
            exponent: b[field::EXPONENT] as i8,
            job: be16(&b[field::JOB]),
            elements: n,
            block,
            child,
            bitmap,
        })
    }

    /// Header length of this packet's version.
    pub fn header_len(&self) -> usize {
        header_len(self.version)
    }

    /// Number of bytes the header plus payload occupy.
    pub fn buffer_len(&self) -> usize {
        self.header_len() + self.elements as usize * ELEMENT_BYTES
    }

    /// The version-1 header, if this is one.
    pub fn narrow(&self) -> Option<Repr> {
        (self.version == VERSION).then(|| Repr {
            ptype: self.ptype,
            flags: self.flags,
            exponent: self.exponent,
            job: self.job,
            elements: self.elements,
            block: self.block,
            child: self.child,
            bitmap: self
                .bitmap
                .to_u64()
                .expect("a version-1 header holds ranks below 64"),
        })
    }

    /// Builds a complete header + payload buffer. `data.len()` must equal `elements`, and a
    /// version-1 header's set must hold only ranks below 64.
    pub fn to_bytes(&self, data: &[i32]) -> Vec<u8> {
        if let Some(r) = self.narrow() {
            return r.to_bytes(data);
        }
        assert_eq!(self.version, VERSION_2, "fanin header versions are 1 and 2");
        assert_eq!(
            data.len(),
            self.elements as usize,
            "payload length must match the element count"
        );
        let mut b = vec![0u8; self.buffer_len()];
        emit_shared(&mut b, self);
        b[field::COUNT].copy_from_slice(&(self.bitmap.count() as u16).to_be_bytes());
        for (c, w) in b[field::BITMAP].chunks_exact_mut(8).zip(&self.bitmap.0) {
            c.copy_from_slice(&w.to_be_bytes());
        }
        write_elements(&mut b[HEADER_LEN_V2..], data);
        b
    }
}

/// The elements of a datagram payload whose header [`WideRepr::parse`] accepted.
pub fn elements(buf: &[u8]) -> Vec<i32> {
    let h = header_len(buf[0]);
    buf[h..]
        .chunks_exact(ELEMENT_BYTES)
        .map(|c| i32::from_be_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Sets the flags byte of a payload of either version (byte 2 in both).
pub fn set_flags(buf: &mut [u8], f: Flags) {
    buf[field::FLAGS] = f.0;
}

const _: () = assert!(RANK_WORDS * 64 == MAX_RANKS as usize);

#[cfg(test)]
mod tests {
    use super::*;

    /// The session packets' shape rules hold in both versions, each one on its own: the
    /// valid shape of each type parses, and changing one field of it is refused.
    #[test]
    fn session_shapes_in_both_versions() {
        use crate::wire::RefuseReason;
        let one = |r: u32| {
            let mut s = RankSet::EMPTY;
            s.insert(r);
            s
        };
        let two = RankSet::from_u64(0b11);
        let refuse = RefuseReason::NoSession as u8;
        // (type, ranks, elements, block, child, accepted)
        let cases = [
            (PacketType::Join, one(1), 0, 7, 0, true),
            (PacketType::Join, two, 0, 7, 0, false),
            (PacketType::Join, one(1), 1, 7, 0, false),
            (PacketType::Join, one(1), 0, 0, 0, false),
            (PacketType::Accept, one(1), 1, 0, 0, true),
            (PacketType::Accept, two, 1, 0, 0, false),
            (PacketType::Accept, one(1), 0, 0, 0, false),
            (PacketType::Accept, one(1), 2, 0, 0, false),
            (PacketType::Refuse, one(1), 0, 0, refuse, true),
            (PacketType::Refuse, two, 0, 0, refuse, true),
            (PacketType::Refuse, one(1), 1, 0, refuse, false),
            (PacketType::Refuse, one(1), 0, 0, 0xee, false),
            (PacketType::Contribution, two, 0, 0, 0, true),
            (PacketType::Result, two, 3, 0, 9, true),
        ];
        for version in [VERSION, VERSION_2] {
            for (i, &(ptype, bitmap, elements, block, child, ok)) in cases.iter().enumerate() {
                let h = WideRepr {
                    version,
                    ptype,
                    elements,
                    block,
                    child,
                    bitmap,
                    ..sample()
                };
                let data = vec![0x0102_0304; elements as usize];
                let want = if ok {
                    Ok(h)
                } else {
                    Err(WireError::BadSessionPacket)
                };
                assert_eq!(
                    WideRepr::parse(&h.to_bytes(&data)),
                    want,
                    "case {i}, version {version}"
                );
            }
        }
    }

    fn sample() -> WideRepr {
        let mut bitmap = RankSet::from_u64(0b1011);
        bitmap.insert(64);
        bitmap.insert(255);
        bitmap.insert(511);
        WideRepr {
            version: VERSION_2,
            ptype: PacketType::Contribution,
            flags: Flags(Flags::PARTIAL),
            exponent: -3,
            job: 0x0102,
            elements: 2,
            block: 0x0a0b0c0d,
            child: 5,
            bitmap,
        }
    }

    /// The golden bytes of a version-2 header (docs/protocol.md, "Header version 2").
    #[test]
    fn emit_exact_bytes() {
        let bytes = sample().to_bytes(&[1, -2]);
        let mut want = vec![
            2, 1, 0x04, 0xfd, 0x01, 0x02, 0x00, 0x02, 0x0a, 0x0b, 0x0c, 0x0d, 5, 0, 0, 6, 0, 0, 0,
            0, 0, 0,
        ];
        // Word 0: ranks 0, 1, 3; word 1: rank 64; word 3: rank 255; word 7: rank 511.
        let mut words = [[0u8; 8]; 8];
        words[0][7] = 0x0b;
        words[1][7] = 0x01;
        words[3][0] = 0x80;
        words[7][0] = 0x80;
        want.extend(words.iter().flatten());
        want.extend([0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe]);
        assert_eq!(want.len(), HEADER_LEN_V2 + 8);
        assert_eq!(bytes, want);
        // The payload starts on a 512-bit beat of the frame.
        assert_eq!((crate::wire::L2L4_LEN + HEADER_LEN_V2) % 64, 0);
    }

    #[test]
    fn parse_round_trip_both_versions() {
        let bytes = sample().to_bytes(&[1, -2]);
        assert_eq!(WideRepr::parse(&bytes), Ok(sample()));
        assert_eq!(elements(&bytes), vec![1, -2]);
        let v1 = WideRepr {
            version: VERSION,
            bitmap: RankSet::from_u64(0b1011),
            ..sample()
        };
        let b1 = v1.to_bytes(&[7, 8]);
        assert_eq!(b1.len(), HEADER_LEN + 8);
        assert_eq!(WideRepr::parse(&b1), Ok(v1));
        assert_eq!(
            Repr::parse(&Packet::new_checked(&b1[..]).unwrap()).map(WideRepr::from),
            Ok(v1)
        );
        assert_eq!(elements(&b1), vec![7, 8]);
        let mut b = bytes.clone();
        set_flags(&mut b, Flags(Flags::BYPASS));
        assert_eq!(WideRepr::parse(&b).unwrap().flags, Flags(Flags::BYPASS));
        // A version-2 packet is never a version-1 one: the version-1 parser refuses it.
        assert!(Packet::new_checked(&bytes[..])
            .and_then(|p| Repr::parse(&p))
            .is_err());
    }

    #[test]
    fn rejects_each_malformation_naming_the_field() {
        let good = sample().to_bytes(&[1, -2]);
        let bad = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            WideRepr::parse(&b).unwrap_err()
        };
        assert_eq!(bad(&|b| b.truncate(85)), WireError::Truncated);
        assert_eq!(bad(&|b| b.truncate(93)), WireError::BadLength);
        assert_eq!(bad(&|b| b[7] = 3), WireError::BadLength);
        // Any version but 2 is parsed as version 1, exactly as `Repr::parse` does (its
        // length check first).
        assert_eq!(bad(&|b| b[0] = 3), WireError::BadLength);
        let mut v3 = WideRepr {
            version: VERSION,
            bitmap: RankSet::from_u64(1),
            ..sample()
        }
        .to_bytes(&[1, 2]);
        v3[0] = 3;
        assert_eq!(WideRepr::parse(&v3), Err(WireError::BadVersion));
        assert_eq!(bad(&|b| b[1] = 7), WireError::BadType);
        assert_eq!(bad(&|b| b[2] = 0x20), WireError::BadFlags);
        assert_eq!(bad(&|b| b[13] = 6), WireError::BadReserved);
        for i in 16..22 {
            assert_eq!(bad(&|b| b[i] = 1), WireError::BadReserved, "byte {i}");
        }
        assert_eq!(bad(&|b| b[15] = 5), WireError::BadCount);
        assert_eq!(bad(&|b| b[14] = 1), WireError::BadCount);
        assert_eq!(bad(&|b| b[85] |= 2), WireError::BadCount);
        assert_eq!(
            bad(&|b| {
                b[22..86].fill(0);
                b[14..16].fill(0);
            }),
            WireError::EmptyBitmap
        );
        let join = WideRepr {
            ptype: PacketType::Join,
            elements: 0,
            ..sample()
        };
        assert_eq!(
            WideRepr::parse(&join.to_bytes(&[])),
            Err(WireError::BadSessionPacket)
        );
        let most = MAX_WIRE_ELEMENTS_V2;
        assert_eq!(HEADER_LEN_V2 + most as usize * ELEMENT_BYTES + 28, 8998);
        let full = WideRepr {
            elements: most,
            ..sample()
        };
        assert_eq!(
            WideRepr::parse(&full.to_bytes(&vec![0; most as usize])),
            Ok(full)
        );
        let big = WideRepr {
            elements: most + 1,
            ..sample()
        };
        assert_eq!(
            WideRepr::parse(&big.to_bytes(&vec![0; most as usize + 1])),
            Err(WireError::TooManyElements)
        );
        // Every error names what was wrong.
        assert!(WireError::BadReserved.to_string().contains("bytes 16..22"));
    }
}
