//! Frames addressed to the switch that are malformed, or for an unknown job, are dropped and
//! counted exactly as the model counts them.

use fanin_proto::wire::{Datagram, Flags, PacketType, Repr};
use fanin_sim::tb::Pacing;

use crate::common::*;

fn contribution(job: u16, elements: u16) -> Vec<u8> {
    let r = Repr {
        ptype: PacketType::Contribution,
        flags: Flags(0),
        exponent: 0,
        job,
        elements,
        block: 1,
        child: 0,
        bitmap: 1,
    };
    r.to_bytes(&vec![3; elements as usize])
}

fn frame(payload: &[u8]) -> Vec<u8> {
    Datagram {
        src: host(1),
        dst: me(),
        payload,
    }
    .to_frame(true)
}

#[test]
fn malformed_and_unknown_job_are_counted() {
    for pacing in Pacing::CORNERS {
        let s = seed();
        let (mut tb, mut sb) = setup(pacing, s);
        let good = contribution(9, 8);
        let mut cases: Vec<Vec<u8>> = vec![frame(&good)]; // unknown job
        cases.push(frame(&good[..10])); // truncated header
        cases.push(frame(&good[..good.len() - 4])); // element count disagrees with length
        let mut v = good.clone();
        v[0] = 2; // version
        cases.push(frame(&v));
        let mut v = good.clone();
        v[1] = 9; // type
        cases.push(frame(&v));
        let mut v = good.clone();
        v[2] = 0x80; // reserved flag
        cases.push(frame(&v));
        let mut v = good.clone();
        v[13] = 2; // count ≠ popcount
        cases.push(frame(&v));
        let mut f = frame(&good);
        f[24] ^= 0x55; // IPv4 header checksum
        cases.push(f);
        let mut f = frame(&good);
        f[70] ^= 1; // payload bit: UDP checksum now wrong
        cases.push(f);
        // More elements than the switch's lanes but within the wire's limit
        // (`MAX_WIRE_ELEMENTS`): well formed, an unknown job, as in the model (the
        // parser once called 257 malformed). Past the wire's limit the frame is longer
        // than `max_frame`; the parser's own test covers that side (hdl/tests/blocks.rs).
        cases.push(frame(&contribution(9, 256)));
        cases.push(frame(&contribution(9, 257)));
        let mut to_other_port = me();
        to_other_port.port = 1234;
        cases.push(
            Datagram {
                src: host(1),
                dst: to_other_port,
                payload: &good,
            }
            .to_frame(true),
        );
        for (i, f) in cases.iter().enumerate() {
            let port = (i % tb.ports()) as u8;
            tb.src[port as usize].push(f.clone(), false);
        }
        finish(&mut tb, &mut sb, "malformed", pacing, s);
    }
}
