//! ARP over Ethernet for IPv4 (RFC 826): the request a switch answers and the reply it
//! sends, so that hosts find the switch's MAC address without a static neighbour entry.
//!
//! | offset | size | field | request the switch answers | its reply |
//! |---|---|---|---|---|
//! | 0 | 6 | destination MAC | any | the request's sender MAC |
//! | 6 | 6 | source MAC | any | the switch's MAC |
//! | 12 | 2 | EtherType | 0x0806 | 0x0806 |
//! | 14 | 2 | hardware type | 1 (Ethernet) | 1 |
//! | 16 | 2 | protocol type | 0x0800 (IPv4) | 0x0800 |
//! | 18 | 1 | hardware address length | 6 | 6 |
//! | 19 | 1 | protocol address length | 4 | 4 |
//! | 20 | 2 | operation | 1 (request) | 2 (reply) |
//! | 22 | 6 | sender MAC | any | the switch's MAC |
//! | 28 | 4 | sender IPv4 | any | the switch's IPv4 |
//! | 32 | 6 | target MAC | any | the request's sender MAC |
//! | 38 | 4 | target IPv4 | the switch's IPv4 | the request's sender IPv4 |
//! | 42 | 18 | padding | (may be absent; bytes after 42 are ignored) | zero |

use std::net::Ipv4Addr;

/// Byte ranges of the fields the switch reads and writes (the table above).
pub mod field {
    use core::ops::Range;
    /// Ethernet destination MAC.
    pub const DST_MAC: Range<usize> = 0..6;
    /// Ethernet source MAC.
    pub const SRC_MAC: Range<usize> = 6..12;
    /// EtherType, hardware and protocol types, address lengths, operation.
    pub const FIXED: Range<usize> = 12..22;
    /// Operation (1 request, 2 reply).
    pub const OPER: usize = 21;
    /// Sender MAC.
    pub const SHA: Range<usize> = 22..28;
    /// Sender IPv4.
    pub const SPA: Range<usize> = 28..32;
    /// Target MAC.
    pub const THA: Range<usize> = 32..38;
    /// Target IPv4.
    pub const TPA: Range<usize> = 38..42;
}

/// EtherType of ARP.
pub const ETHERTYPE_ARP: u16 = 0x0806;
/// Bytes of an ARP request the switch reads (Ethernet header and the IPv4 ARP body).
pub const ARP_LEN: usize = 42;
/// Length of the reply the switch sends: padded to Ethernet's 60-byte minimum (without FCS).
pub const REPLY_LEN: usize = 60;
/// Bytes 12..22 of a request the switch answers: EtherType, hardware type, protocol type,
/// address lengths and operation 1.
pub const REQUEST_FIXED: [u8; 10] = [0x08, 0x06, 0x00, 0x01, 0x08, 0x00, 6, 4, 0x00, 0x01];

/// The reply to `frame` if it is an ARP request for `ip` (Ethernet, IPv4, at least
/// [`ARP_LEN`] bytes), from a switch with Ethernet address `mac`; `None` for every other
/// frame.
pub fn reply(frame: &[u8], mac: [u8; 6], ip: Ipv4Addr) -> Option<Vec<u8>> {
    if frame.len() < ARP_LEN
        || frame[field::FIXED] != REQUEST_FIXED
        || frame[field::TPA] != ip.octets()
    {
        return None;
    }
    let (sha, spa) = (&frame[field::SHA], &frame[field::SPA]);
    let mut r = vec![0u8; REPLY_LEN];
    r[field::DST_MAC].copy_from_slice(sha);
    r[field::SRC_MAC].copy_from_slice(&mac);
    r[field::FIXED].copy_from_slice(&REQUEST_FIXED);
    r[field::OPER] = 2;
    r[field::SHA].copy_from_slice(&mac);
    r[field::SPA].copy_from_slice(&ip.octets());
    r[field::THA].copy_from_slice(sha);
    r[field::TPA].copy_from_slice(spa);
    Some(r)
}

/// An ARP request from `sha`/`spa` for `tpa`, broadcast and padded to 60 bytes, as a host
/// sends it (tests and the RTL suite).
pub fn request(sha: [u8; 6], spa: Ipv4Addr, tpa: Ipv4Addr) -> Vec<u8> {
    let mut f = vec![0u8; REPLY_LEN];
    f[field::DST_MAC].copy_from_slice(&[0xff; 6]);
    f[field::SRC_MAC].copy_from_slice(&sha);
    f[field::FIXED].copy_from_slice(&REQUEST_FIXED);
    f[field::SHA].copy_from_slice(&sha);
    f[field::SPA].copy_from_slice(&spa.octets());
    f[field::TPA].copy_from_slice(&tpa.octets());
    f
}

#[cfg(test)]
mod tests {
    use super::*;

    const ME_MAC: [u8; 6] = [0x02, 0, 0, 0, 0, 0x10];
    const ME: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 16);
    const HOST: [u8; 6] = [0x02, 0, 0, 0, 0, 0x01];
    const HOST_IP: Ipv4Addr = Ipv4Addr::new(10, 0, 0, 1);

    /// The reply, byte for byte.
    #[test]
    fn reply_to_a_request_for_the_switch() {
        let r = reply(&request(HOST, HOST_IP, ME), ME_MAC, ME).unwrap();
        let want: Vec<u8> = [
            &HOST[..],
            &ME_MAC,
            &[0x08, 0x06, 0, 1, 0x08, 0, 6, 4, 0, 2],
            &ME_MAC,
            &[10, 0, 0, 16],
            &HOST,
            &[10, 0, 0, 1],
            &[0; 18],
        ]
        .concat();
        assert_eq!(r, want);
        // Without the padding, and with trailing bytes: the same reply.
        let req = request(HOST, HOST_IP, ME);
        assert_eq!(reply(&req[..ARP_LEN], ME_MAC, ME), Some(want.clone()));
        let mut long = req.clone();
        long.extend([0xaa; 40]);
        assert_eq!(reply(&long, ME_MAC, ME), Some(want));
    }

    /// Anything but a whole IPv4-over-Ethernet request for the switch's address: no reply.
    #[test]
    fn other_frames_get_no_reply() {
        let req = request(HOST, HOST_IP, ME);
        assert_eq!(reply(&request(HOST, HOST_IP, HOST_IP), ME_MAC, ME), None);
        assert_eq!(reply(&req[..ARP_LEN - 1], ME_MAC, ME), None);
        for i in 12..22 {
            let mut bad = req.clone();
            bad[i] ^= 0x01;
            assert_eq!(reply(&bad, ME_MAC, ME), None, "byte {i} changed");
        }
        let mut answer = req.clone();
        answer[21] = 2;
        assert_eq!(reply(&answer, ME_MAC, ME), None, "a reply is not answered");
    }
}
