//! Key-value packets: the 22-byte fanin header with its fields reinterpreted, followed by
//! `n` tuples of (u32 key, i32 value), both big-endian.
//!
//! | offset | size | field | key-value meaning |
//! |---|---|---|---|
//! | 0 | 1 | version | `1` |
//! | 1 | 1 | type | 8 data, 9 ack, 10 swap, 11 fetch, 12 clear, 13 fin |
//! | 2 | 1 | flags | 0x01 REPLY; the rest reserved |
//! | 3 | 1 | lane | data/ack/fin: the sender's data channel; fetch/clear: the aggregator array |
//! | 4 | 2 | job | key-value job id |
//! | 6 | 2 | tuples | `n`, tuples in the payload (0..=64) |
//! | 8 | 4 | seq | data/ack: sequence number; fin: packets sent; swap/fetch/clear: epoch |
//! | 12 | 1 | copy | fetch/clear: the shadow copy (0 or 1); otherwise 0 |
//! | 13 | 1 | count | data: popcount(aux); otherwise 0 |
//! | 14 | 8 | aux | data: bitmap of tuples still to aggregate; fetch/clear: first aggregator |
//! | 22 | 8·n | tuples | key u32, value i32 |

use crate::wire::{HEADER_LEN, VERSION};

/// Bytes per tuple: a u32 key and an i32 value.
pub const TUPLE_BYTES: usize = 8;
/// Most tuples a packet carries (the width of the data bitmap).
pub const MAX_TUPLES: usize = 64;
/// Aggregators one fetch or clear covers (the last range of an array may be shorter).
pub const RANGE: u32 = 64;
/// Largest key-value datagram.
pub const MAX_KV_DATAGRAM: usize = HEADER_LEN + MAX_TUPLES * TUPLE_BYTES;

/// Byte positions of the key-value reading of the header.
pub mod field {
    use core::ops::Range;
    /// Protocol version (shared with the dense header).
    pub const VERSION: usize = 0;
    /// Packet type (shared with the dense header).
    pub const TYPE: usize = 1;
    /// Flag bits.
    pub const FLAGS: usize = 2;
    /// Data channel or aggregator array.
    pub const LANE: usize = 3;
    /// Job id (same place as the dense header's).
    pub const JOB: Range<usize> = 4..6;
    /// Tuple count (where the dense header has its element count).
    pub const TUPLES: Range<usize> = 6..8;
    /// Sequence number or epoch (where the dense header has its block id).
    pub const SEQ: Range<usize> = 8..12;
    /// Shadow copy.
    pub const COPY: usize = 12;
    /// Popcount of the data bitmap.
    pub const COUNT: usize = 13;
    /// Data bitmap or first aggregator of a range.
    pub const AUX: Range<usize> = 14..22;
}

/// Key-value packet types (type byte 8 and above; 3..=7 belong to other extensions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum KvType {
    /// Tuples from a sender; the switch forwards what it could not absorb to the receiver.
    Data = 8,
    /// Acknowledges a data packet (from the switch, or from the receiver relayed by it).
    Ack = 9,
    /// Receiver asks the switch to make copy `epoch & 1` active; the reply echoes the epoch.
    Swap = 10,
    /// Receiver reads a range of one copy; the reply carries its occupied aggregators.
    Fetch = 11,
    /// Receiver empties a range of one copy.
    Clear = 12,
    /// A sender's last packet: all its data is acknowledged (relayed to the receiver).
    Fin = 13,
}

impl KvType {
    /// Decodes a type byte.
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            8 => Self::Data,
            9 => Self::Ack,
            10 => Self::Swap,
            11 => Self::Fetch,
            12 => Self::Clear,
            13 => Self::Fin,
            _ => return None,
        })
    }
}

/// Flag: the packet answers a request of the same type.
pub const REPLY: u8 = 0x01;

/// Why a key-value packet was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum KvWireError {
    /// Fewer bytes than the header.
    #[error("truncated key-value header")]
    Truncated,
    /// The tuple count disagrees with the datagram length.
    #[error("tuple count disagrees with the datagram length")]
    BadLength,
    /// Version byte not 1.
    #[error("unsupported protocol version")]
    BadVersion,
    /// Type byte is not a key-value type.
    #[error("not a key-value packet type")]
    BadType,
    /// Reserved flag bits set, or REPLY on a data packet.
    #[error("reserved or misplaced flag bits")]
    BadFlags,
    /// More than [`MAX_TUPLES`] tuples.
    #[error("more than 64 tuples")]
    TooManyTuples,
    /// Data: count is not popcount(bitmap), or the bitmap names tuples beyond `n`.
    #[error("data bitmap disagrees with the count or the tuple count")]
    BadBitmap,
    /// Data packet with no tuple left to aggregate.
    #[error("data packet with an empty bitmap")]
    EmptyBitmap,
    /// Tuples on a type that carries none, or a non-zero count.
    #[error("tuples or count on a packet type that carries none")]
    UnexpectedTuples,
    /// Copy byte not 0 or 1.
    #[error("shadow copy is not 0 or 1")]
    BadCopy,
}

/// True if a datagram claims to be a key-value packet (version 1, type byte 8 or above).
pub fn is_kv(payload: &[u8]) -> bool {
    payload.len() >= 2 && payload[field::VERSION] == VERSION && payload[field::TYPE] >= 8
}

/// A parsed key-value packet.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KvRepr {
    /// Packet type.
    pub ktype: KvType,
    /// REPLY flag.
    pub reply: bool,
    /// Data channel (data, ack, fin) or aggregator array (fetch, clear).
    pub lane: u8,
    /// Job id.
    pub job: u16,
    /// Sequence number (data, ack), packets sent (fin) or epoch (swap, fetch, clear).
    pub seq: u32,
    /// Shadow copy (fetch, clear).
    pub copy: u8,
    /// Data: bitmap of tuples to aggregate; fetch/clear: first aggregator of the range.
    pub aux: u64,
    /// Tuples (key, value); in data packets the slots whose bitmap bit is clear are ignored.
    pub tuples: Vec<(u32, i32)>,
}

impl KvRepr {
    /// A request or reply carrying no tuples.
    pub fn control(ktype: KvType, job: u16, lane: u8, seq: u32) -> Self {
        Self {
            ktype,
            reply: false,
            lane,
            job,
            seq,
            copy: 0,
            aux: 0,
            tuples: Vec::new(),
        }
    }

    /// Parses and validates a datagram payload.
    pub fn parse(b: &[u8]) -> Result<Self, KvWireError> {
        if b.len() < HEADER_LEN {
            return Err(KvWireError::Truncated);
        }
        if b[field::VERSION] != VERSION {
            return Err(KvWireError::BadVersion);
        }
        let ktype = KvType::from_u8(b[field::TYPE]).ok_or(KvWireError::BadType)?;
        let n = u16::from_be_bytes([b[6], b[7]]) as usize;
        if n > MAX_TUPLES {
            return Err(KvWireError::TooManyTuples);
        }
        if b.len() != HEADER_LEN + n * TUPLE_BYTES {
            return Err(KvWireError::BadLength);
        }
        let flags = b[field::FLAGS];
        if flags & !REPLY != 0 || (ktype == KvType::Data && flags & REPLY != 0) {
            return Err(KvWireError::BadFlags);
        }
        let reply = flags & REPLY != 0;
        let copy = b[field::COPY];
        if copy > 1 {
            return Err(KvWireError::BadCopy);
        }
        let mut a = [0u8; 8];
        a.copy_from_slice(&b[field::AUX]);
        let aux = u64::from_be_bytes(a);
        let count = b[field::COUNT];
        match ktype {
            KvType::Data => {
                if count as u32 != aux.count_ones() || (n < 64 && aux >> n != 0) {
                    return Err(KvWireError::BadBitmap);
                }
                if aux == 0 {
                    return Err(KvWireError::EmptyBitmap);
                }
            }
            KvType::Fetch if reply => {
                if count != 0 {
                    return Err(KvWireError::UnexpectedTuples);
                }
            }
            _ => {
                if n != 0 || count != 0 {
                    return Err(KvWireError::UnexpectedTuples);
                }
            }
        }
        let tuples = (0..n)
            .map(|i| {
                let o = HEADER_LEN + i * TUPLE_BYTES;
                (
                    u32::from_be_bytes([b[o], b[o + 1], b[o + 2], b[o + 3]]),
                    i32::from_be_bytes([b[o + 4], b[o + 5], b[o + 6], b[o + 7]]),
                )
            })
            .collect();
        Ok(Self {
            ktype,
            reply,
            lane: b[field::LANE],
            job: u16::from_be_bytes([b[4], b[5]]),
            seq: u32::from_be_bytes([b[8], b[9], b[10], b[11]]),
            copy,
            aux,
            tuples,
        })
    }

    /// Emits the packet. Tuples beyond [`MAX_TUPLES`] are a caller bug and panic.
    pub fn to_bytes(&self) -> Vec<u8> {
        assert!(self.tuples.len() <= MAX_TUPLES, "at most 64 tuples");
        let mut b = vec![0u8; HEADER_LEN + self.tuples.len() * TUPLE_BYTES];
        b[field::VERSION] = VERSION;
        b[field::TYPE] = self.ktype as u8;
        b[field::FLAGS] = if self.reply { REPLY } else { 0 };
        b[field::LANE] = self.lane;
        b[field::JOB].copy_from_slice(&self.job.to_be_bytes());
        b[field::TUPLES].copy_from_slice(&(self.tuples.len() as u16).to_be_bytes());
        b[field::SEQ].copy_from_slice(&self.seq.to_be_bytes());
        b[field::COPY] = self.copy;
        b[field::COUNT] = if self.ktype == KvType::Data {
            self.aux.count_ones() as u8
        } else {
            0
        };
        b[field::AUX].copy_from_slice(&self.aux.to_be_bytes());
        for (i, (k, v)) in self.tuples.iter().enumerate() {
            let o = HEADER_LEN + i * TUPLE_BYTES;
            b[o..o + 4].copy_from_slice(&k.to_be_bytes());
            b[o + 4..o + 8].copy_from_slice(&v.to_be_bytes());
        }
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data() -> KvRepr {
        KvRepr {
            ktype: KvType::Data,
            reply: false,
            lane: 3,
            job: 0x0102,
            seq: 0x0a0b0c0d,
            copy: 0,
            aux: 0b01,
            tuples: vec![(7, -2), (0, 0)],
        }
    }

    #[test]
    fn emit_exact_bytes() {
        let want: [u8; 38] = [
            1, 8, 0, 3, 1, 2, 0, 2, 0x0a, 0x0b, 0x0c, 0x0d, 0, 1, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0,
            7, 0xff, 0xff, 0xff, 0xfe, 0, 0, 0, 0, 0, 0, 0, 0,
        ];
        assert_eq!(data().to_bytes(), want);
        assert_eq!(KvRepr::parse(&want).unwrap(), data());
    }

    #[test]
    fn round_trips_every_type() {
        for t in 8..=13 {
            let kt = KvType::from_u8(t).unwrap();
            let mut r = KvRepr::control(kt, 9, 1, 77);
            if kt == KvType::Data {
                r = data();
            } else if kt == KvType::Fetch {
                r.reply = true;
                r.copy = 1;
                r.aux = 128;
                r.tuples = vec![(1, 2), (3, 4)];
            }
            assert_eq!(KvRepr::parse(&r.to_bytes()).unwrap(), r, "type {t}");
        }
    }

    #[test]
    fn rejects_each_malformation() {
        let good = data().to_bytes();
        let bad = |f: &dyn Fn(&mut Vec<u8>)| {
            let mut b = good.clone();
            f(&mut b);
            KvRepr::parse(&b).unwrap_err()
        };
        assert_eq!(bad(&|b| b.truncate(10)), KvWireError::Truncated);
        assert_eq!(bad(&|b| b.truncate(37)), KvWireError::BadLength);
        assert_eq!(bad(&|b| b[0] = 2), KvWireError::BadVersion);
        assert_eq!(bad(&|b| b[1] = 14), KvWireError::BadType);
        assert_eq!(bad(&|b| b[2] = 1), KvWireError::BadFlags);
        assert_eq!(bad(&|b| b[2] = 0x40), KvWireError::BadFlags);
        assert_eq!(bad(&|b| b[7] = 65), KvWireError::TooManyTuples);
        assert_eq!(bad(&|b| b[13] = 2), KvWireError::BadBitmap);
        assert_eq!(
            bad(&|b| {
                b[21] = 0b101;
                b[13] = 2
            }),
            KvWireError::BadBitmap
        );
        assert_eq!(
            bad(&|b| {
                b[21] = 0;
                b[13] = 0
            }),
            KvWireError::EmptyBitmap
        );
        assert_eq!(bad(&|b| b[12] = 2), KvWireError::BadCopy);
        let mut ack = KvRepr::control(KvType::Ack, 1, 0, 5).to_bytes();
        ack[13] = 1;
        assert_eq!(KvRepr::parse(&ack), Err(KvWireError::UnexpectedTuples));
        assert!(is_kv(&good) && !is_kv(&[1, 2]) && !is_kv(&[1]));
    }
}
