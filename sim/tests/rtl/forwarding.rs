//! Non-fanin frames are switched by the forwarding table (destination IPv4 → port).

use fanin_sim::tb::Pacing;

use crate::common::*;

/// Every port sends to the host behind the next port, plus frames with no route and a
/// non-IPv4 frame: all four ports at once, each egress fed by one ingress.
#[test]
fn forwarding_table_switches_non_fanin_frames() {
    for pacing in Pacing::CORNERS {
        let s = seed();
        let (mut tb, mut sb) = setup(pacing, s);
        let ports = tb.ports() as u8;
        for round in 0..6u8 {
            for p in 0..ports {
                let to = host((p + 1) % ports + 1);
                let f = udp(host(p + 1), to, 18 + 97 * round as usize, round);
                tb.src[p as usize].push(f, false);
            }
        }
        // No route, and not IPv4.
        let mut stranger = host(1);
        stranger.ip = "10.9.9.9".parse().unwrap();
        let f = udp(host(1), stranger, 40, 7);
        tb.src[0].push(f.clone(), false);
        let mut arp = f;
        arp[12..14].copy_from_slice(&[0x08, 0x06]);
        tb.src[1].push(arp, false);
        finish(&mut tb, &mut sb, "forwarding", pacing, s);
    }
}
