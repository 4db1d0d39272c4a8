//! Hostile traffic for the trust campaigns: well-formed fanin packets of every type with
//! random fields, the kind a stray or forging source sends. The model, switchd and the
//! Verilated core are all fed from here, so every campaign means the same thing by "forged".

use rand::Rng;

use crate::wire::{Flags, PacketType, RefuseReason, Repr};

/// What forged packets may claim.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Target {
    /// The job most packets name (the rest name a random job).
    pub job: u16,
    /// Ranks `0..ranks` are claimed.
    pub ranks: u8,
    /// Most elements a contribution or result carries.
    pub elements: u16,
    /// Block ids are drawn from `first_block..first_block + 64` most of the time.
    pub first_block: u32,
    /// Share of packets that name another, random job.
    pub other_jobs: f64,
    /// Session types (JOIN, ACCEPT, REFUSE) are sent.
    pub session_types: bool,
}

/// A well-formed fanin datagram payload of a random type, with random flags, exponent,
/// block, child index and ranks, and the shape its type requires (so it passes the header
/// checks and reaches the job and source checks).
pub fn forged_payload<R: Rng>(rng: &mut R, t: &Target) -> Vec<u8> {
    let kinds: &[PacketType] = if t.session_types {
        &[
            PacketType::Contribution,
            PacketType::Result,
            PacketType::Join,
            PacketType::Accept,
            PacketType::Refuse,
        ]
    } else {
        &[PacketType::Contribution, PacketType::Result]
    };
    let ptype = kinds[rng.gen_range(0..kinds.len())];
    let ranks = t.ranks.clamp(1, 64);
    let any_ranks = |rng: &mut R| {
        let all = if ranks == 64 {
            u64::MAX
        } else {
            (1u64 << ranks) - 1
        };
        (rng.gen::<u64>() & all).max(1)
    };
    let (elements, bitmap) = match ptype {
        PacketType::Join => (0, 1u64 << rng.gen_range(0..ranks)),
        PacketType::Accept => (1, 1u64 << rng.gen_range(0..ranks)),
        PacketType::Refuse => (0, any_ranks(rng)),
        _ => (rng.gen_range(1..=t.elements.max(1)), any_ranks(rng)),
    };
    let child = match ptype {
        PacketType::Refuse => {
            [RefuseReason::NoSession, RefuseReason::StaleBlock][rng.gen_range(0..2)] as u8
        }
        _ => rng.gen_range(0..ranks.saturating_add(1)),
    };
    let r = Repr {
        ptype,
        flags: Flags(rng.gen::<u8>() & Flags::DEFINED),
        exponent: rng.gen_range(-2..3),
        job: if rng.gen_bool(t.other_jobs) {
            rng.gen()
        } else {
            t.job
        },
        elements,
        block: if rng.gen_bool(0.7) {
            t.first_block.wrapping_add(rng.gen_range(0..64))
        } else {
            rng.gen()
        },
        child,
        bitmap,
    };
    let data: Vec<i32> = (0..elements).map(|_| rng.gen()).collect();
    r.to_bytes(&data)
}

/// Random bytes of up to `max` bytes: what a broken or unrelated sender puts on the wire.
pub fn junk<R: Rng>(rng: &mut R, max: usize) -> Vec<u8> {
    (0..rng.gen_range(0..max)).map(|_| rng.gen()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::Packet;
    use rand::SeedableRng;

    #[test]
    fn forged_packets_are_well_formed_and_cover_every_type() {
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(1);
        let t = Target {
            job: 7,
            ranks: 4,
            elements: 8,
            first_block: 100,
            other_jobs: 0.1,
            session_types: true,
        };
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let p = forged_payload(&mut rng, &t);
            let r = Repr::parse(&Packet::new_checked(&p[..]).unwrap()).unwrap();
            assert!(r.bitmap < 16);
            seen.insert(r.ptype as u8);
        }
        assert_eq!(seen.into_iter().collect::<Vec<_>>(), vec![1, 2, 3, 4, 5]);
    }
}
