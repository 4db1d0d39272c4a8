//! Frame sizes from the Ethernet minimum to the configured maximum pass; longer frames and
//! frames marked bad (`tuser`) are dropped at ingress and counted in `portN_rx_bad`.

use fanin_sim::tb::Pacing;

use crate::common::*;

#[test]
fn frame_sizes_minimum_to_maximum() {
    let core = core();
    for pacing in [Pacing::FULL, Pacing::CORNERS[3]] {
        let s = seed();
        let (mut tb, mut sb) = setup(pacing, s);
        // UDP payload from 18 bytes (60-byte frame) to the largest frame the core accepts.
        let max_payload = core.max_frame as usize - 42;
        let mut sizes: Vec<usize> = (18..18 + 2 * 64).collect();
        sizes.extend([255, 256, 257, 511, 1000, max_payload - 1, max_payload]);
        for (i, &n) in sizes.iter().enumerate() {
            let f = udp(host(1), host(2), n, i as u8);
            tb.src[0].push(f, false);
        }
        finish(&mut tb, &mut sb, "frame sizes", pacing, s);
    }
}

#[test]
fn oversize_and_bad_frames_are_dropped_at_ingress() {
    let core = core();
    for pacing in Pacing::CORNERS {
        let s = seed();
        let (mut tb, mut sb) = setup(pacing, s);
        // To the host behind port 2 (port 1 on a two-port core).
        let to = host(core.ports.min(3));
        let good = udp(host(1), to, 100, 1);
        let oversize = udp(host(1), to, core.max_frame as usize - 42 + 1, 2);
        let jumbo = udp(host(1), to, 9000 - 42, 3);
        tb.src[0].push(oversize, false);
        tb.src[0].push(good.clone(), true);
        tb.src[0].push(jumbo, false);
        tb.src[0].push(good.clone(), false);
        finish(&mut tb, &mut sb, "ingress drops", pacing, s);
        let bad = tb.read(sb.regs.addr("port0_rx_bad")).unwrap();
        assert_eq!(
            bad, 3,
            "{pacing:?}: oversize, tuser-bad and jumbo frames counted on port 0"
        );
    }
}
