//! The UDP socket behind [`Link`]: batched system calls, UDP GSO and GRO, and replies from
//! the address each peer wrote to.

use std::collections::HashMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use super::{Dgram, Link, BATCH, MAX_DATAGRAM};

/// A UDP socket driven with `recvmmsg`/`sendmmsg` (one system call per batch); runs of
/// equal-sized datagrams to one peer go out as one segmented send (UDP GSO, `UDP_SEGMENT`)
/// unless the kernel refuses it or `FANIN_NO_GSO=1`, and come in coalesced (UDP GRO,
/// `UDP_GRO`: one buffer per run, split here into the datagrams it holds) unless the
/// kernel refuses it or `FANIN_NO_GRO=1`.
///
/// Bound to the unspecified address (`0.0.0.0`), it answers each peer from the address that
/// peer last wrote to (`IP_PKTINFO`), not from whichever address the kernel's route picks:
/// on a host with several addresses a worker would otherwise drop switchd's replies as
/// coming from a stranger.
pub struct UdpLink {
    sock: UdpSocket,
    local: SocketAddrV4,
    /// One receive buffer per message of a batch: [`MAX_DATAGRAM`] bytes, or
    /// [`GRO_BUFFER`] with GRO.
    rx: Vec<Vec<u8>>,
    /// Send runs of equal datagrams to one peer as one segmented (`UDP_SEGMENT`) message;
    /// cleared when the kernel refuses it.
    gso: bool,
    /// The socket has `UDP_GRO` on: a message may hold several datagrams.
    gro: bool,
    /// Messages received, and datagrams they held (more than messages with GRO).
    rx_counts: (u64, u64),
    /// The socket has `IP_PKTINFO` on (bound to `0.0.0.0`): receives say which local
    /// address each datagram was sent to, and sends to a known peer go out from it.
    pktinfo: bool,
    /// The local address each peer last wrote to (with `pktinfo`; at most
    /// [`MAX_REPLY_PEERS`] peers, forgotten all at once when full).
    reply_from: HashMap<SocketAddrV4, Ipv4Addr>,
}

/// Most peers whose local address a [`UdpLink`] remembers.
const MAX_REPLY_PEERS: usize = 4096;

impl UdpLink {
    /// Binds a socket at `addr` (port 0 picks a free port).
    pub fn bind(addr: SocketAddrV4) -> io::Result<Self> {
        Self::from_socket(UdpSocket::bind(addr)?)
    }

    /// Wraps an already bound IPv4 socket.
    pub fn from_socket(sock: UdpSocket) -> io::Result<Self> {
        let local = match sock.local_addr()? {
            SocketAddr::V4(a) => a,
            SocketAddr::V6(_) => {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "fanin links are IPv4",
                ))
            }
        };
        let off = |var: &str| std::env::var(var).is_ok_and(|v| v == "1");
        Self::with_offloads(sock, local, !off("FANIN_NO_GSO"), !off("FANIN_NO_GRO"))
    }

    /// The socket with segmentation and coalescing as asked (each only if the kernel
    /// allows it).
    fn with_offloads(
        sock: UdpSocket,
        local: SocketAddrV4,
        gso: bool,
        gro: bool,
    ) -> io::Result<Self> {
        sock.set_nonblocking(true)?;
        grow_buffers(&sock, 8 << 20);
        let gro = gro && enable_gro(&sock);
        let pktinfo = local.ip().is_unspecified() && enable_pktinfo(&sock);
        let size = if gro { GRO_BUFFER } else { MAX_DATAGRAM };
        Ok(Self {
            sock,
            local,
            rx: vec![vec![0u8; size]; BATCH],
            gso,
            gro,
            rx_counts: (0, 0),
            pktinfo,
            reply_from: HashMap::new(),
        })
    }

    /// Messages received and the datagrams they held: with GRO coalescing, fewer messages.
    pub fn rx_counts(&self) -> (u64, u64) {
        self.rx_counts
    }
}

/// `UDP_GRO` (linux/udp.h): receive runs of datagrams coalesced, with their segment size.
const UDP_GRO: libc::c_int = 104;
/// Receive buffer of one message with GRO: the most one coalesced message holds.
pub const GRO_BUFFER: usize = 65536;

/// Turns `UDP_GRO` on; false if the kernel refuses it.
fn enable_gro(sock: &UdpSocket) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: the fd is a live socket and `on` a c_int of the stated length.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::SOL_UDP,
            UDP_GRO,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// Turns `IP_PKTINFO` on; false if the kernel refuses it.
fn enable_pktinfo(sock: &UdpSocket) -> bool {
    let on: libc::c_int = 1;
    // SAFETY: the fd is a live socket and `on` a c_int of the stated length.
    unsafe {
        libc::setsockopt(
            sock.as_raw_fd(),
            libc::IPPROTO_IP,
            libc::IP_PKTINFO,
            &on as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// Control-message room for one `UDP_SEGMENT` or `UDP_GRO` value and one `in_pktinfo`.
fn control_space() -> usize {
    // SAFETY: CMSG_SPACE only computes a size.
    unsafe {
        (libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32)
            + libc::CMSG_SPACE(std::mem::size_of::<libc::in_pktinfo>() as u32)) as usize
    }
}

/// Asks for large socket buffers (forcing past `rmem_max` where permitted); best effort.
fn grow_buffers(sock: &UdpSocket, bytes: libc::c_int) {
    let fd = sock.as_raw_fd();
    for (force, plain) in [
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF),
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF),
    ] {
        let len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        let v = &bytes as *const libc::c_int as *const libc::c_void;
        // SAFETY: fd is a live socket and v points at a c_int of length len.
        unsafe {
            if libc::setsockopt(fd, libc::SOL_SOCKET, force, v, len) != 0 {
                libc::setsockopt(fd, libc::SOL_SOCKET, plain, v, len);
            }
        }
    }
}

fn to_sockaddr(a: SocketAddrV4) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: a.port().to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(*a.ip()).to_be(),
        },
        sin_zero: [0; 8],
    }
}

fn from_sockaddr(s: &libc::sockaddr_in) -> SocketAddrV4 {
    SocketAddrV4::new(
        Ipv4Addr::from(u32::from_be(s.sin_addr.s_addr)),
        u16::from_be(s.sin_port),
    )
}

/// Waits until `fd` is readable or `wait` passes; true if readable.
fn wait_readable(fd: i32, wait: Duration) -> io::Result<bool> {
    let mut pfd = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let ts = libc::timespec {
        tv_sec: wait.as_secs() as libc::time_t,
        tv_nsec: wait.subsec_nanos() as libc::c_long,
    };
    // SAFETY: pfd and ts are valid for the duration of the call.
    let r = unsafe { libc::ppoll(&mut pfd, 1, &ts, std::ptr::null()) };
    if r < 0 {
        let e = io::Error::last_os_error();
        return if e.kind() == io::ErrorKind::Interrupted {
            Ok(false)
        } else {
            Err(e)
        };
    }
    Ok(r > 0)
}

/// `UDP_SEGMENT` (linux/udp.h): the segment size of a GSO send.
const UDP_SEGMENT: libc::c_int = 103;
/// Most datagrams one segmented send carries (the kernel's `UDP_MAX_SEGMENTS`).
const GSO_MAX_SEGMENTS: usize = 64;
/// Most payload bytes of one segmented send (an IPv4 UDP datagram's).
const GSO_MAX_BYTES: usize = 65507;

/// Runs of `batch` that one segmented send carries: consecutive datagrams to the same peer,
/// all of the first one's size except perhaps a shorter last one. Each run is a range.
fn gso_runs(batch: &[Dgram], gso: bool) -> Vec<std::ops::Range<usize>> {
    let mut runs = Vec::new();
    let mut i = 0;
    while i < batch.len() {
        let (peer, seg) = (batch[i].peer, batch[i].payload().len());
        let mut j = i + 1;
        let mut bytes = seg;
        while gso
            && seg > 0
            && j < batch.len()
            && j - i < GSO_MAX_SEGMENTS
            && batch[j].peer == peer
            && batch[j].payload().len() <= seg
            && bytes + batch[j].payload().len() <= GSO_MAX_BYTES
        {
            bytes += batch[j].payload().len();
            j += 1;
            if batch[j - 1].payload().len() < seg {
                break;
            }
        }
        runs.push(i..j);
        i = j;
    }
    runs
}

impl UdpLink {
    /// Sends one batch: one message per run of [`gso_runs`] (with `UDP_SEGMENT` when it holds
    /// more than one datagram). `Err(at)` if segmentation was refused at datagram `at`; the
    /// datagrams before it were sent.
    fn send_batch(
        &mut self,
        chunk: &[Dgram],
        first_err: &mut Option<io::Error>,
    ) -> Result<(), usize> {
        let fd = self.sock.as_raw_fd();
        let runs = gso_runs(chunk, self.gso);
        let addrs: Vec<libc::sockaddr_in> = runs
            .iter()
            .map(|r| to_sockaddr(chunk[r.start].peer))
            .collect();
        let mut iovs: Vec<libc::iovec> = chunk
            .iter()
            .map(|d| libc::iovec {
                iov_base: d.payload().as_ptr() as *mut libc::c_void,
                iov_len: d.payload().len(),
            })
            .collect();
        let space = control_space();
        let mut control = vec![0u8; space * runs.len()];
        let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(runs.len());
        for (k, r) in runs.iter().enumerate() {
            // SAFETY: mmsghdr is plain data; all-zero is a valid value.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &addrs[k] as *const _ as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
            h.msg_hdr.msg_iov = iovs[r.start..].as_mut_ptr();
            h.msg_hdr.msg_iovlen = r.len();
            let from = self.reply_from.get(&chunk[r.start].peer).copied();
            if r.len() > 1 || from.is_some() {
                let buf = &mut control[k * space..(k + 1) * space];
                h.msg_hdr.msg_control = buf.as_mut_ptr() as *mut libc::c_void;
                h.msg_hdr.msg_controllen = space;
                let mut used = 0;
                // SAFETY: the control buffer is `space` bytes, room for one u16 (within a
                // c_int's space) and one in_pktinfo message; CMSG_NXTHDR stays within it.
                unsafe {
                    let mut c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                    if r.len() > 1 {
                        (*c).cmsg_level = libc::SOL_UDP;
                        (*c).cmsg_type = UDP_SEGMENT;
                        (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as usize;
                        let seg = chunk[r.start].payload().len() as u16;
                        std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg);
                        used += libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) as usize;
                        c = libc::CMSG_NXTHDR(&h.msg_hdr, c);
                    }
                    if let Some(ip) = from {
                        let len = std::mem::size_of::<libc::in_pktinfo>() as u32;
                        (*c).cmsg_level = libc::IPPROTO_IP;
                        (*c).cmsg_type = libc::IP_PKTINFO;
                        (*c).cmsg_len = libc::CMSG_LEN(len) as usize;
                        let info = libc::in_pktinfo {
                            ipi_ifindex: 0,
                            ipi_spec_dst: libc::in_addr {
                                s_addr: u32::from(ip).to_be(),
                            },
                            ipi_addr: libc::in_addr { s_addr: 0 },
                        };
                        std::ptr::write_unaligned(
                            libc::CMSG_DATA(c) as *mut libc::in_pktinfo,
                            info,
                        );
                        used += libc::CMSG_SPACE(len) as usize;
                    }
                }
                h.msg_hdr.msg_controllen = used;
            }
            hdrs.push(h);
        }
        let mut done = 0;
        while done < hdrs.len() {
            // SAFETY: the headers point into addrs/iovs/control/chunk, which outlive the call.
            let n = unsafe {
                libc::sendmmsg(fd, hdrs[done..].as_mut_ptr(), (hdrs.len() - done) as u32, 0)
            };
            if n >= 0 {
                done += n as usize;
                continue;
            }
            let e = io::Error::last_os_error();
            let segmented = runs[done].len() > 1;
            match e.raw_os_error() {
                Some(libc::EIO | libc::EINVAL | libc::EOPNOTSUPP | libc::ENOPROTOOPT)
                    if segmented =>
                {
                    return Err(runs[done].start)
                }
                _ => {}
            }
            match e.kind() {
                io::ErrorKind::Interrupted => {}
                io::ErrorKind::WouldBlock => {
                    // Socket buffer full: wait for room rather than dropping.
                    let mut pfd = libc::pollfd {
                        fd,
                        events: libc::POLLOUT,
                        revents: 0,
                    };
                    // SAFETY: pfd is valid for the call.
                    unsafe { libc::poll(&mut pfd, 1, 10) };
                }
                // A stale ICMP error from an earlier datagram; this one was not sent.
                io::ErrorKind::ConnectionRefused => {}
                _ => {
                    first_err.get_or_insert(io::Error::new(
                        e.kind(),
                        format!("cannot send to {}: {e}", chunk[runs[done].start].peer),
                    ));
                    done += 1;
                }
            }
        }
        Ok(())
    }
}

impl UdpLink {
    /// Remembers that `peer` wrote to local address `to`, so replies go out from it (a
    /// broadcast or multicast destination is not an address to answer from).
    fn note_local(&mut self, peer: SocketAddrV4, to: Ipv4Addr) {
        if to.is_broadcast() || to.is_multicast() || to.is_unspecified() {
            return;
        }
        if self.reply_from.len() >= MAX_REPLY_PEERS && !self.reply_from.contains_key(&peer) {
            self.reply_from.clear();
        }
        self.reply_from.insert(peer, to);
    }
}

impl Link for UdpLink {
    fn local_addr(&self) -> SocketAddrV4 {
        self.local
    }

    fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()> {
        let mut first_err = None;
        let mut start = 0;
        while start < out.len() {
            let end = (start + BATCH).min(out.len());
            match self.send_batch(&out[start..end], &mut first_err) {
                Ok(()) => start = end,
                // The kernel or the device refuses segmentation: plain sends from here on.
                Err(at) => {
                    self.gso = false;
                    start += at;
                }
            }
        }
        out.clear();
        first_err.map_or(Ok(()), Err)
    }

    fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> io::Result<()> {
        self.recv_each(wait, &mut |peer, p| into.push(Dgram::new(peer, p.to_vec())))
    }

    fn recv_each(
        &mut self,
        wait: Duration,
        f: &mut dyn FnMut(SocketAddrV4, &[u8]),
    ) -> io::Result<()> {
        let fd = self.sock.as_raw_fd();
        if !wait_readable(fd, wait)? {
            return Ok(());
        }
        // SAFETY: sockaddr_in is plain data.
        let mut addrs: Vec<libc::sockaddr_in> = vec![unsafe { std::mem::zeroed() }; BATCH];
        let mut iovs: Vec<libc::iovec> = self
            .rx
            .iter_mut()
            .map(|b| libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            })
            .collect();
        let space = control_space();
        let wants_control = self.gro || self.pktinfo;
        let mut control = vec![0u8; if wants_control { space * BATCH } else { 0 }];
        let mut hdrs: Vec<libc::mmsghdr> = (0..BATCH)
            .map(|i| {
                // SAFETY: mmsghdr is plain data; all-zero is a valid value.
                let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
                h.msg_hdr.msg_name = &mut addrs[i] as *mut _ as *mut libc::c_void;
                h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
                h.msg_hdr.msg_iov = &mut iovs[i];
                h.msg_hdr.msg_iovlen = 1;
                if !control.is_empty() {
                    h.msg_hdr.msg_control = control[i * space..].as_mut_ptr() as *mut libc::c_void;
                    h.msg_hdr.msg_controllen = space;
                }
                h
            })
            .collect();
        // SAFETY: every header points at a live buffer and address of the stated sizes.
        let n = unsafe {
            libc::recvmmsg(
                fd,
                hdrs.as_mut_ptr(),
                BATCH as u32,
                libc::MSG_DONTWAIT,
                std::ptr::null_mut(),
            )
        };
        if n < 0 {
            let e = io::Error::last_os_error();
            return match e.kind() {
                io::ErrorKind::WouldBlock
                | io::ErrorKind::Interrupted
                | io::ErrorKind::ConnectionRefused => Ok(()),
                _ => Err(e),
            };
        }
        for i in 0..n as usize {
            let len = (hdrs[i].msg_len as usize).min(self.rx[i].len());
            let peer = from_sockaddr(&addrs[i]);
            // A coalesced message holds datagrams of `seg` bytes, the last perhaps shorter.
            let (seg, to) = read_control(&hdrs[i].msg_hdr);
            let seg = seg.unwrap_or(len).max(1);
            if let Some(to) = to {
                self.note_local(peer, to);
            }
            let mut datagrams = 0;
            for c in self.rx[i][..len].chunks(seg) {
                f(peer, c);
                datagrams += 1;
            }
            if len == 0 {
                f(peer, &[]);
                datagrams += 1;
            }
            self.rx_counts.0 += 1;
            self.rx_counts.1 += datagrams;
        }
        Ok(())
    }
}

/// What a received message's control messages say: the segment size of a message the
/// kernel coalesced (`UDP_GRO`), and the local address it was sent to (`IP_PKTINFO`).
fn read_control(h: &libc::msghdr) -> (Option<usize>, Option<Ipv4Addr>) {
    let (mut seg, mut to) = (None, None);
    if h.msg_control.is_null() {
        return (seg, to);
    }
    // SAFETY: the kernel filled `msg_controllen` bytes of the control buffer the header
    // points at; the CMSG macros walk only within them.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            match ((*c).cmsg_level, (*c).cmsg_type) {
                (libc::SOL_UDP, UDP_GRO) => {
                    let v = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
                    seg = (v > 0).then_some(v as usize);
                }
                (libc::IPPROTO_IP, libc::IP_PKTINFO) => {
                    let info =
                        std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::in_pktinfo);
                    to = Some(Ipv4Addr::from(u32::from_be(info.ipi_addr.s_addr)));
                }
                _ => {}
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    (seg, to)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs: same peer, the first one's size, at most a shorter last one, within the limits.
    #[test]
    fn gso_runs_group_equal_datagrams_to_one_peer() {
        let to = |port, len| Dgram::new(SocketAddrV4::new(Ipv4Addr::LOCALHOST, port), vec![0; len]);
        let b = vec![
            to(1, 100),
            to(1, 100),
            to(1, 60),
            to(1, 100),
            to(2, 100),
            to(2, 200),
            to(2, 0),
            to(2, 0),
        ];
        assert_eq!(gso_runs(&b, true), vec![0..3, 3..4, 4..5, 5..7, 7..8]);
        assert_eq!(gso_runs(&b, false).len(), b.len());
        let many: Vec<Dgram> = (0..100).map(|_| to(1, 8214)).collect();
        let runs = gso_runs(&many, true);
        assert_eq!(runs[0], 0..7, "7 x 8214 bytes fit in 65507");
        assert_eq!(runs.iter().map(|r| r.len()).sum::<usize>(), 100);
        let small: Vec<Dgram> = (0..100).map(|_| to(1, 10)).collect();
        assert_eq!(gso_runs(&small, true)[0], 0..GSO_MAX_SEGMENTS);
    }

    /// Segmented sends arrive as the separate datagrams they were, in order, with and
    /// without segmentation.
    #[test]
    fn segmented_sends_arrive_as_separate_datagrams() {
        let link = |gso, gro| {
            let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
            let local = match s.local_addr().unwrap() {
                SocketAddr::V4(a) => a,
                SocketAddr::V6(_) => unreachable!(),
            };
            UdpLink::with_offloads(s, local, gso, gro).unwrap()
        };
        for (gso, gro) in [(true, true), (true, false), (false, true), (false, false)] {
            let mut a = link(gso, gro);
            let mut b = link(gso, gro);
            let mut c = link(gso, gro);
            assert_eq!(b.gro, gro, "the kernel refused UDP_GRO");
            let len = |i: usize| if i % 10 == 9 { 500 } else { 8214 };
            let mut out: Vec<Dgram> = (0..150)
                .map(|i| {
                    let peer = if i % 50 < 40 {
                        b.local_addr()
                    } else {
                        c.local_addr()
                    };
                    // Every third datagram sits behind a head that must not be sent.
                    let head = if i % 3 == 0 { 42 } else { 0 };
                    let mut buf = vec![0xee; head];
                    buf.extend(vec![i as u8; len(i)]);
                    Dgram::with_head(peer, buf, head)
                })
                .collect();
            a.send(&mut out).unwrap();
            assert_eq!(a.gso, gso, "the kernel refused UDP_SEGMENT on loopback");
            let mut got_b = Vec::new();
            let mut got_c = Vec::new();
            let t = std::time::Instant::now();
            while got_b.len() + got_c.len() < 150 && t.elapsed() < Duration::from_secs(5) {
                b.recv(&mut got_b, Duration::from_millis(10)).unwrap();
                c.recv(&mut got_c, Duration::from_millis(10)).unwrap();
            }
            let want = |to_b: bool| -> Vec<Vec<u8>> {
                (0..150)
                    .filter(|i| (i % 50 < 40) == to_b)
                    .map(|i| vec![i as u8; len(i)])
                    .collect()
            };
            let data = |g: &[Dgram]| g.iter().map(|d| d.payload().to_vec()).collect::<Vec<_>>();
            assert_eq!(data(&got_b), want(true), "gso {gso} gro {gro}");
            assert_eq!(data(&got_c), want(false), "gso {gso} gro {gro}");
            assert!(got_b.iter().chain(&got_c).all(|d| d.peer == a.local_addr()));
            // Segmented sends reach a coalescing socket as fewer, larger messages.
            let (messages, datagrams) = b.rx_counts();
            assert_eq!(datagrams, 120, "gso {gso} gro {gro}");
            if gso && gro {
                assert!(
                    messages < 60,
                    "gso and gro: {messages} messages for 120 datagrams"
                );
            } else {
                assert_eq!(messages, 120, "gso {gso} gro {gro}");
            }
        }
    }

    #[test]
    fn udp_link_round_trip_batches() {
        let mut a = UdpLink::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut b = UdpLink::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
        let mut out: Vec<Dgram> = (0..100u8)
            .map(|i| Dgram::new(b.local_addr(), vec![i; 1 + i as usize]))
            .collect();
        a.send(&mut out).unwrap();
        assert!(out.is_empty());
        let mut got = Vec::new();
        let t = std::time::Instant::now();
        while got.len() < 100 && t.elapsed() < Duration::from_secs(5) {
            b.recv(&mut got, Duration::from_millis(100)).unwrap();
        }
        assert_eq!(got.len(), 100);
        for (i, d) in got.iter().enumerate() {
            assert_eq!(d.peer, a.local_addr());
            assert_eq!(d.payload(), vec![i as u8; 1 + i]);
        }
    }

    /// Bound to 0.0.0.0, the link answers each peer from the address it wrote to (here
    /// 127.0.0.2 and 127.0.0.3, where the kernel's route would pick 127.0.0.1), segmented
    /// runs and single datagrams alike; a peer it has not heard from gets the kernel's
    /// choice.
    #[test]
    fn replies_leave_from_the_address_the_peer_wrote_to() {
        for (gso, gro) in [(true, true), (false, false)] {
            let s = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::UNSPECIFIED, 0)).unwrap();
            let local = match s.local_addr().unwrap() {
                SocketAddr::V4(a) => a,
                SocketAddr::V6(_) => unreachable!(),
            };
            let mut link = UdpLink::with_offloads(s, local, gso, gro).unwrap();
            assert!(link.pktinfo, "the kernel refused IP_PKTINFO");
            let port = local.port();
            for (k, dst) in [Ipv4Addr::new(127, 0, 0, 2), Ipv4Addr::new(127, 0, 0, 3)]
                .into_iter()
                .enumerate()
            {
                let peer = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
                peer.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
                peer.send_to(&[k as u8], SocketAddrV4::new(dst, port))
                    .unwrap();
                let mut got = Vec::new();
                let t = std::time::Instant::now();
                while got.is_empty() && t.elapsed() < Duration::from_secs(5) {
                    link.recv(&mut got, Duration::from_millis(100)).unwrap();
                }
                assert_eq!(got.len(), 1, "gso {gso} gro {gro}");
                let back = got[0].peer;
                // Three equal datagrams (one segmented send with GSO) and a shorter one.
                let mut out: Vec<Dgram> = (0..4)
                    .map(|i| Dgram::new(back, vec![i as u8; if i < 3 { 100 } else { 7 }]))
                    .collect();
                link.send(&mut out).unwrap();
                let mut buf = [0u8; 256];
                for i in 0..4u8 {
                    let (n, from) = peer.recv_from(&mut buf).unwrap();
                    assert_eq!(from, SocketAddr::V4(SocketAddrV4::new(dst, port)));
                    assert_eq!(&buf[..n], &vec![i; if i < 3 { 100 } else { 7 }][..]);
                }
            }
            // A stranger: the kernel's route picks the source (127.0.0.1 on loopback).
            let other = UdpSocket::bind(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 0)).unwrap();
            other
                .set_read_timeout(Some(Duration::from_secs(5)))
                .unwrap();
            let to = match other.local_addr().unwrap() {
                SocketAddr::V4(a) => a,
                SocketAddr::V6(_) => unreachable!(),
            };
            link.send(&mut vec![Dgram::new(to, vec![9])]).unwrap();
            let (_, from) = other.recv_from(&mut [0u8; 8]).unwrap();
            assert_eq!(from.ip(), std::net::IpAddr::V4(Ipv4Addr::LOCALHOST));
        }
    }
}
