//! Whole Ethernet/IPv4/UDP frames: classification of received frames and emission of
//! frames carrying a fanin datagram. Ethernet/IPv4/UDP parsing is smoltcp's.

use core::net::Ipv4Addr;
use smoltcp::wire::{
    EthernetAddress, EthernetFrame, EthernetProtocol, IpAddress, IpProtocol, Ipv4Packet, UdpPacket,
};

use super::L2L4_LEN;

/// A MAC address, IPv4 address and UDP port: one end of a fanin datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct L4Addr {
    /// Ethernet address.
    pub mac: [u8; 6],
    /// IPv4 address.
    pub ip: Ipv4Addr,
    /// UDP port.
    pub port: u16,
}

/// A UDP datagram lifted out of a frame, or to be put into one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Datagram<'a> {
    /// Sender.
    pub src: L4Addr,
    /// Receiver.
    pub dst: L4Addr,
    /// UDP payload (the fanin header and elements).
    pub payload: &'a [u8],
}

/// Why a frame that claims to be IPv4 (or UDP to a switch) was rejected.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, thiserror::Error)]
pub enum FrameError {
    /// IPv4 header truncated, wrong version, or header length below 5 words.
    #[error("bad IPv4 header")]
    BadIpv4,
    /// IPv4 header checksum mismatch.
    #[error("bad IPv4 header checksum")]
    BadIpChecksum,
    /// IPv4 total length larger than the frame, or smaller than the header.
    #[error("IPv4 total length disagrees with the frame")]
    BadIpLength,
    /// Addressed to the switch, but fragmented, with IP options, or not UDP to its port.
    #[error("not a fanin datagram")]
    NotFanin,
    /// UDP header truncated or its length disagrees with the IPv4 length.
    #[error("UDP length disagrees with the IPv4 length")]
    BadUdpLength,
    /// Non-zero UDP checksum that does not match.
    #[error("bad UDP checksum")]
    BadUdpChecksum,
}

/// What a received frame is, as far as the switch's data path cares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameKind<'a> {
    /// Not IPv4 (or shorter than an Ethernet header): dropped and counted.
    NonIp,
    /// An IPv4 frame with a valid header.
    Ipv4 {
        /// Destination address, the key of the forwarding table.
        dst: Ipv4Addr,
        /// The UDP datagram, if the frame is unfragmented UDP without IP options.
        udp: Option<Result<Datagram<'a>, FrameError>>,
    },
    /// IPv4 ethertype, but the IPv4 header is invalid: cannot be forwarded.
    BadIpv4(FrameError),
}

/// Classifies an Ethernet frame (without FCS; trailing Ethernet padding allowed).
pub fn classify(frame: &[u8]) -> FrameKind<'_> {
    let Ok(eth) = EthernetFrame::new_checked(frame) else {
        return FrameKind::NonIp;
    };
    if eth.ethertype() != EthernetProtocol::Ipv4 {
        return FrameKind::NonIp;
    }
    let ip_bytes = &frame[14..];
    let ip = Ipv4Packet::new_unchecked(ip_bytes);
    if ip_bytes.len() < 20
        || ip.version() != 4
        || ip.header_len() < 20
        || ip_bytes.len() < ip.header_len() as usize
    {
        return FrameKind::BadIpv4(FrameError::BadIpv4);
    }
    let total = ip.total_len() as usize;
    if total < ip.header_len() as usize || total > ip_bytes.len() {
        return FrameKind::BadIpv4(FrameError::BadIpLength);
    }
    if !ip.verify_checksum() {
        return FrameKind::BadIpv4(FrameError::BadIpChecksum);
    }
    let dst = ip.dst_addr();
    let fragmented = ip.more_frags() || ip.frag_offset() != 0;
    if ip.next_header() != IpProtocol::Udp || ip.header_len() != 20 || fragmented {
        return FrameKind::Ipv4 { dst, udp: None };
    }
    let udp_bytes = &ip_bytes[20..total];
    let udp = UdpPacket::new_unchecked(udp_bytes);
    if udp_bytes.len() < 8 || udp.len() as usize != udp_bytes.len() {
        return FrameKind::Ipv4 {
            dst,
            udp: Some(Err(FrameError::BadUdpLength)),
        };
    }
    let mac = |a: EthernetAddress| a.0;
    let d = Datagram {
        src: L4Addr {
            mac: mac(eth.src_addr()),
            ip: ip.src_addr(),
            port: udp.src_port(),
        },
        dst: L4Addr {
            mac: mac(eth.dst_addr()),
            ip: dst,
            port: udp.dst_port(),
        },
        payload: &udp_bytes[8..],
    };
    FrameKind::Ipv4 {
        dst,
        udp: Some(Ok(d)),
    }
}

impl Datagram<'_> {
    /// Emits the datagram as an Ethernet/IPv4/UDP frame.
    ///
    /// The IPv4 header has no options, identification 0, DF set and TTL 64, and a valid
    /// checksum. The UDP checksum is computed when `udp_checksum` is true and is 0 otherwise
    /// (switches emit 0, which IPv4 allows, because hardware sends the header first).
    pub fn to_frame(&self, udp_checksum: bool) -> Vec<u8> {
        let mut buf = udp_frame(self.src, self.dst, self.payload.len(), |p| {
            p.copy_from_slice(self.payload)
        });
        if udp_checksum {
            UdpPacket::new_unchecked(&mut buf[34..])
                .fill_checksum(&IpAddress::Ipv4(self.src.ip), &IpAddress::Ipv4(self.dst.ip));
        }
        buf
    }
}

/// The Ethernet/IPv4/UDP frame from `src` to `dst` whose `len`-byte UDP payload `fill`
/// writes in place (at `L2L4_LEN`, so no payload buffer exists besides the frame's): equal
/// to `Datagram { src, dst, payload }.to_frame(false)` of the payload `fill` wrote, the UDP
/// checksum 0.
pub fn udp_frame(src: L4Addr, dst: L4Addr, len: usize, fill: impl FnOnce(&mut [u8])) -> Vec<u8> {
    let mut buf = vec![0u8; L2L4_LEN + len];
    let mut eth = EthernetFrame::new_unchecked(&mut buf[..]);
    eth.set_src_addr(EthernetAddress(src.mac));
    eth.set_dst_addr(EthernetAddress(dst.mac));
    eth.set_ethertype(EthernetProtocol::Ipv4);
    let udp_len = 8 + len;
    {
        let mut ip = Ipv4Packet::new_unchecked(&mut buf[14..]);
        ip.set_version(4);
        ip.set_header_len(20);
        ip.set_dscp(0);
        ip.set_ecn(0);
        ip.set_total_len((20 + udp_len) as u16);
        ip.set_ident(0);
        ip.clear_flags();
        ip.set_dont_frag(true);
        ip.set_frag_offset(0);
        ip.set_hop_limit(64);
        ip.set_next_header(IpProtocol::Udp);
        ip.set_src_addr(src.ip);
        ip.set_dst_addr(dst.ip);
        ip.fill_checksum();
    }
    let mut udp = UdpPacket::new_unchecked(&mut buf[34..]);
    udp.set_src_port(src.port);
    udp.set_dst_port(dst.port);
    udp.set_len(udp_len as u16);
    udp.set_checksum(0);
    fill(&mut buf[L2L4_LEN..]);
    buf
}

/// Verifies a frame's UDP checksum (true when it is 0, i.e. absent). The frame must classify as UDP.
pub fn udp_checksum_ok(frame: &[u8]) -> bool {
    if let FrameKind::Ipv4 {
        udp: Some(Ok(d)), ..
    } = classify(frame)
    {
        let total = 34 + 8 + d.payload.len();
        let udp = UdpPacket::new_unchecked(&frame[34..total]);
        udp.checksum() == 0
            || udp.verify_checksum(&IpAddress::Ipv4(d.src.ip), &IpAddress::Ipv4(d.dst.ip))
    } else {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn addr(last: u8, port: u16) -> L4Addr {
        L4Addr {
            mac: [2, 0, 0, 0, 0, last],
            ip: Ipv4Addr::new(10, 0, 0, last),
            port,
        }
    }

    #[test]
    fn frame_exact_bytes_and_round_trip() {
        let d = Datagram {
            src: addr(1, 1000),
            dst: addr(2, 48879),
            payload: &[0xaa, 0xbb],
        };
        let f = d.to_frame(false);
        assert_eq!(f.len(), 44);
        assert_eq!(&f[0..14], &[2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x08, 0x00]);
        // version/IHL, DSCP, total length 30, ident 0, DF, TTL 64, UDP
        assert_eq!(&f[14..24], &[0x45, 0, 0, 30, 0, 0, 0x40, 0, 64, 17]);
        assert_eq!(&f[26..34], &[10, 0, 0, 1, 10, 0, 0, 2]);
        assert_eq!(
            &f[34..44],
            &[0x03, 0xe8, 0xbe, 0xef, 0, 10, 0, 0, 0xaa, 0xbb]
        );
        match classify(&f) {
            FrameKind::Ipv4 {
                dst,
                udp: Some(Ok(got)),
            } => {
                assert_eq!(dst, Ipv4Addr::new(10, 0, 0, 2));
                assert_eq!(got, d);
            }
            other => panic!("unexpected {other:?}"),
        }
        assert!(udp_checksum_ok(&f));
        let fc = d.to_frame(true);
        assert_ne!(&fc[40..42], &[0, 0]);
        assert!(udp_checksum_ok(&fc));
    }

    #[test]
    fn classify_rejects_broken_ipv4() {
        let d = Datagram {
            src: addr(1, 1),
            dst: addr(2, 2),
            payload: &[1, 2, 3],
        };
        let f = d.to_frame(true);
        let mut bad = f.clone();
        bad[24] ^= 0xff; // checksum byte
        assert_eq!(
            classify(&bad),
            FrameKind::BadIpv4(FrameError::BadIpChecksum)
        );
        assert_eq!(classify(&f[..20]), FrameKind::BadIpv4(FrameError::BadIpv4));
        let mut arp = f.clone();
        arp[12] = 0x08;
        arp[13] = 0x06;
        assert_eq!(classify(&arp), FrameKind::NonIp);
        assert_eq!(classify(&f[..10]), FrameKind::NonIp);
        let mut bad_udp = f.clone();
        bad_udp[39] = 99; // UDP length
        assert!(matches!(
            classify(&bad_udp),
            FrameKind::Ipv4 {
                udp: Some(Err(FrameError::BadUdpLength)),
                ..
            }
        ));
        let mut ck = f.clone();
        ck[44] ^= 1; // payload byte: UDP checksum no longer matches
        assert!(!udp_checksum_ok(&ck));
    }
}
