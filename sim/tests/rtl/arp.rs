//! ARP: the core answers a request for its own address on the port it came in on, byte
//! for byte as `fanin_proto::wire::arp::reply`; every other ARP frame is a non-IPv4 drop.

use fanin_proto::wire::arp;
use fanin_sim::tb::Pacing;

use crate::common::*;

/// Every port asks for the switch's address (padded, unpadded and with trailing bytes)
/// between routed frames, and sends requests it must not answer: for another address, a
/// reply, a truncated request, a wrong protocol length. The scoreboard checks every frame
/// and counter against the model; the test checks the replies' bytes itself too.
#[test]
fn arp_requests_for_the_switch_are_answered_on_their_port() {
    for pacing in Pacing::CORNERS {
        let s = seed();
        let (mut tb, mut sb) = setup(pacing, s);
        let ports = tb.ports() as u8;
        let mut want: Vec<Vec<Vec<u8>>> = vec![vec![]; ports as usize];
        for p in 0..ports {
            let h = host(p + 1);
            let req = arp::request(h.mac, h.ip, me().ip);
            let src = &mut tb.src[p as usize];
            let short = req[..arp::ARP_LEN].to_vec();
            let mut long = req.clone();
            long.extend((0..70u8).map(|i| i ^ p));
            let other = arp::request(h.mac, h.ip, host(ports).ip);
            let mut answer = req.clone();
            answer[21] = 2;
            let mut plen = req.clone();
            plen[19] = 16;
            let truncated = req[..arp::ARP_LEN - 1].to_vec();
            for f in [&req, &short, &long] {
                want[p as usize].push(arp::reply(f, me().mac, me().ip).unwrap());
            }
            src.push(req, false);
            src.push(udp(h, host((p + 1) % ports + 1), 30, p), false);
            src.push(other, false);
            src.push(short, false);
            src.push(answer, false);
            src.push(long, false);
            src.push(plen, false);
            src.push(truncated, false);
        }
        finish(&mut tb, &mut sb, "arp", pacing, s);
        for (p, want) in want.iter().enumerate() {
            let got: Vec<Vec<u8>> = tb.sink[p]
                .frames
                .iter()
                .filter(|f| f.data.len() >= 14 && f.data[12..14] == [0x08, 0x06])
                .map(|f| f.data.clone())
                .collect();
            assert_eq!(&got, want, "{pacing:?} seed {s}: ARP replies on port {p}");
        }
    }
}
