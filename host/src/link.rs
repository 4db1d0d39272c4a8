//! Datagram I/O behind one small trait, so a UDP socket, a pcap tap and a fault injector
//! stack like smoltcp's `phy` wrappers: `Faulty<PcapTap<UdpLink>>` is a lossy, captured socket.

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, UdpSocket};
use std::os::fd::AsRawFd;
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fanin_proto::wire::{Datagram, L4Addr};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

/// Largest datagram a link receives (a fanin packet fills at most a jumbo-frame MTU).
pub const MAX_DATAGRAM: usize = fanin_proto::wire::JUMBO_MTU;
/// Datagrams moved per `recvmmsg`/`sendmmsg` call.
pub const BATCH: usize = 64;

/// One UDP datagram and the peer it came from or goes to.
///
/// The payload may sit after a head the datagram does not carry (a frame's headers, when
/// switchd passes on the frame the reference model built): sending it copies nothing.
#[derive(Debug, Clone)]
pub struct Dgram {
    /// Sender (received) or receiver (to send).
    pub peer: SocketAddrV4,
    /// The buffer: `head` bytes not sent, then the UDP payload.
    buf: Vec<u8>,
    head: usize,
}

impl Dgram {
    /// A datagram carrying `data`.
    pub fn new(peer: SocketAddrV4, data: Vec<u8>) -> Self {
        Self::with_head(peer, data, 0)
    }

    /// A datagram carrying `buf[head..]` (panics if `head` is past the buffer's end).
    pub fn with_head(peer: SocketAddrV4, buf: Vec<u8>, head: usize) -> Self {
        assert!(
            head <= buf.len(),
            "head {head} past a {}-byte buffer",
            buf.len()
        );
        Self { peer, buf, head }
    }

    /// The UDP payload.
    pub fn payload(&self) -> &[u8] {
        &self.buf[self.head..]
    }
}

/// Equal peers and payload bytes (the head is not part of the datagram).
impl PartialEq for Dgram {
    fn eq(&self, o: &Self) -> bool {
        self.peer == o.peer && self.payload() == o.payload()
    }
}

impl Eq for Dgram {}

/// A datagram link: the one I/O interface the switch and the sender are written against.
pub trait Link: Send {
    /// The address this link sends from and receives on.
    fn local_addr(&self) -> SocketAddrV4;
    /// Sends and drains every datagram of `out`. An error names the first failure after all
    /// datagrams were attempted.
    fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()>;
    /// Appends received datagrams to `into`, waiting at most `wait` for the first one.
    fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> io::Result<()>;
    /// Receives as [`Link::recv`] does, handing each datagram's sender and payload to `f`
    /// in order instead of appending it: a link that owns its receive buffers
    /// ([`UdpLink`]) passes slices of them, with no copy and no allocation.
    fn recv_each(
        &mut self,
        wait: Duration,
        f: &mut dyn FnMut(SocketAddrV4, &[u8]),
    ) -> io::Result<()> {
        let mut got = Vec::new();
        self.recv(&mut got, wait)?;
        for d in &got {
            f(d.peer, d.payload());
        }
        Ok(())
    }
    /// Flushes anything buffered (capture files).
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
    /// Faults injected by this link or any it wraps.
    fn fault_counts(&self) -> FaultCounts {
        FaultCounts::default()
    }
}

impl<L: Link + ?Sized> Link for Box<L> {
    fn local_addr(&self) -> SocketAddrV4 {
        (**self).local_addr()
    }
    fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()> {
        (**self).send(out)
    }
    fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> io::Result<()> {
        (**self).recv(into, wait)
    }
    fn recv_each(
        &mut self,
        wait: Duration,
        f: &mut dyn FnMut(SocketAddrV4, &[u8]),
    ) -> io::Result<()> {
        (**self).recv_each(wait, f)
    }
    fn flush(&mut self) -> io::Result<()> {
        (**self).flush()
    }
    fn fault_counts(&self) -> FaultCounts {
        (**self).fault_counts()
    }
}

/// A UDP socket driven with `recvmmsg`/`sendmmsg` (one system call per batch); runs of
/// equal-sized datagrams to one peer go out as one segmented send (UDP GSO, `UDP_SEGMENT`)
/// unless the kernel refuses it or `FANIN_NO_GSO=1`, and come in coalesced (UDP GRO,
/// `UDP_GRO`: one buffer per run, split here into the datagrams it holds) unless the
/// kernel refuses it or `FANIN_NO_GRO=1`.
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
}

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
        let size = if gro { GRO_BUFFER } else { MAX_DATAGRAM };
        Ok(Self {
            sock,
            local,
            rx: vec![vec![0u8; size]; BATCH],
            gso,
            gro,
            rx_counts: (0, 0),
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
        // SAFETY: CMSG_SPACE only computes a size.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<u16>() as u32) } as usize;
        let mut control = vec![0u8; space * runs.len()];
        let mut hdrs: Vec<libc::mmsghdr> = Vec::with_capacity(runs.len());
        for (k, r) in runs.iter().enumerate() {
            // SAFETY: mmsghdr is plain data; all-zero is a valid value.
            let mut h: libc::mmsghdr = unsafe { std::mem::zeroed() };
            h.msg_hdr.msg_name = &addrs[k] as *const _ as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as u32;
            h.msg_hdr.msg_iov = iovs[r.start..].as_mut_ptr();
            h.msg_hdr.msg_iovlen = r.len();
            if r.len() > 1 {
                let buf = &mut control[k * space..(k + 1) * space];
                h.msg_hdr.msg_control = buf.as_mut_ptr() as *mut libc::c_void;
                h.msg_hdr.msg_controllen = space;
                // SAFETY: the control buffer is `space` bytes, room for one u16 message.
                unsafe {
                    let c = libc::CMSG_FIRSTHDR(&h.msg_hdr);
                    (*c).cmsg_level = libc::SOL_UDP;
                    (*c).cmsg_type = UDP_SEGMENT;
                    (*c).cmsg_len = libc::CMSG_LEN(std::mem::size_of::<u16>() as u32) as usize;
                    let seg = chunk[r.start].payload().len() as u16;
                    std::ptr::write_unaligned(libc::CMSG_DATA(c) as *mut u16, seg);
                }
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
        // SAFETY: CMSG_SPACE only computes a size.
        let space = unsafe { libc::CMSG_SPACE(std::mem::size_of::<libc::c_int>() as u32) } as usize;
        let mut control = vec![0u8; if self.gro { space * BATCH } else { 0 }];
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
            let seg = gro_segment(&hdrs[i].msg_hdr).unwrap_or(len).max(1);
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

/// The segment size of a message the kernel coalesced (its `UDP_GRO` control message).
fn gro_segment(h: &libc::msghdr) -> Option<usize> {
    if h.msg_control.is_null() {
        return None;
    }
    // SAFETY: the kernel filled `msg_controllen` bytes of the control buffer the header
    // points at; the CMSG macros walk only within them.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(h);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_UDP && (*c).cmsg_type == UDP_GRO {
                let v = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::c_int);
                return (v > 0).then_some(v as usize);
            }
            c = libc::CMSG_NXTHDR(h, c);
        }
    }
    None
}

/// The Ethernet address the capture gives an IPv4 host: `02:00` followed by its address.
pub fn mac_for(ip: Ipv4Addr) -> [u8; 6] {
    let o = ip.octets();
    [0x02, 0x00, o[0], o[1], o[2], o[3]]
}

/// An [`L4Addr`] for a socket address, with the MAC from [`mac_for`].
pub fn l4(a: SocketAddrV4) -> L4Addr {
    L4Addr {
        mac: mac_for(*a.ip()),
        ip: *a.ip(),
        port: a.port(),
    }
}

/// Records every datagram the inner link sends or receives as an Ethernet/IPv4/UDP frame
/// (valid IPv4 and UDP checksums) in a pcap file.
pub struct PcapTap<L> {
    inner: L,
    me: SocketAddrV4,
    writer: PcapWriter<BufWriter<File>>,
}

impl<L: Link> PcapTap<L> {
    /// Captures `inner` into a new file at `path`. `me` is the local address written into
    /// frames (a socket bound to 0.0.0.0 has no address of its own to show).
    pub fn create(inner: L, me: SocketAddrV4, path: &Path) -> io::Result<Self> {
        let f = File::create(path)?;
        let header = PcapHeader {
            datalink: DataLink::ETHERNET,
            ..PcapHeader::default()
        };
        let writer =
            PcapWriter::with_header(BufWriter::new(f), header).map_err(io::Error::other)?;
        Ok(Self { inner, me, writer })
    }

    fn record(&mut self, src: SocketAddrV4, dst: SocketAddrV4, payload: &[u8]) -> io::Result<()> {
        let frame = Datagram {
            src: l4(src),
            dst: l4(dst),
            payload,
        }
        .to_frame(true);
        let ts = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        let pkt = PcapPacket::new(ts, frame.len() as u32, &frame[..]).map_err(io::Error::other)?;
        self.writer.write_packet(&pkt).map_err(io::Error::other)?;
        Ok(())
    }
}

impl<L: Link> Link for PcapTap<L> {
    fn local_addr(&self) -> SocketAddrV4 {
        self.inner.local_addr()
    }
    fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()> {
        for d in out.iter() {
            self.record(self.me, d.peer, d.payload())?;
        }
        self.inner.send(out)
    }
    fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> io::Result<()> {
        let from = into.len();
        self.inner.recv(into, wait)?;
        for d in &into[from..] {
            self.record(d.peer, self.me, d.payload())?;
        }
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.writer.flush().map_err(io::Error::other)?;
        self.inner.flush()
    }
    fn fault_counts(&self) -> FaultCounts {
        self.inner.fault_counts()
    }
}

pub use fanin_proto::fault::{FaultCounts, FaultSpec, Faults};

/// Loses, duplicates and reorders datagrams crossing the inner link, in both directions, as
/// the shared seeded fault model ([`fanin_proto::fault`]) decides.
///
/// A datagram held back by `k` goes out after the rest of the batch `k` batches later in the
/// same direction (so later datagrams overtake it); a receive also releases every held send,
/// since a sender may send nothing more until it hears back.
pub struct Faulty<L> {
    inner: L,
    faults: Faults,
    held_tx: Vec<(u64, Dgram)>,
    held_rx: Vec<(u64, Dgram)>,
}

impl<L: Link> Faulty<L> {
    /// Wraps `inner` with the fault process `faults`.
    pub fn new(inner: L, faults: Faults) -> Self {
        Self {
            inner,
            faults,
            held_tx: vec![],
            held_rx: vec![],
        }
    }

    /// Faults injected so far.
    pub fn counts(&self) -> FaultCounts {
        self.faults.counts()
    }

    /// Applies faults to `batch`; returns what passes now, with held datagrams now due last.
    fn apply(&mut self, batch: Vec<Dgram>, tx: bool) -> Vec<Dgram> {
        let mut pass = Vec::with_capacity(batch.len() + 1);
        let mut hold = Vec::new();
        for d in batch {
            let fate = self.faults.fate();
            let mut d = Some(d);
            let n = fate.holds().len();
            for (i, &k) in fate.holds().iter().enumerate() {
                let copy = if i + 1 == n { d.take() } else { d.clone() }.expect("a copy");
                if k == 0 {
                    pass.push(copy);
                } else {
                    hold.push((k, copy));
                }
            }
        }
        let held = if tx {
            &mut self.held_tx
        } else {
            &mut self.held_rx
        };
        let mut still = Vec::with_capacity(held.len() + hold.len());
        for (k, d) in held.drain(..) {
            if k <= 1 {
                pass.push(d);
            } else {
                still.push((k - 1, d));
            }
        }
        still.append(&mut hold);
        *held = still;
        pass
    }
}

impl<L: Link> Link for Faulty<L> {
    fn local_addr(&self) -> SocketAddrV4 {
        self.inner.local_addr()
    }
    fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()> {
        let batch = std::mem::take(out);
        let mut pass = self.apply(batch, true);
        self.inner.send(&mut pass)
    }
    fn recv(&mut self, into: &mut Vec<Dgram>, wait: Duration) -> io::Result<()> {
        if !self.held_tx.is_empty() {
            let mut late: Vec<Dgram> = self.held_tx.drain(..).map(|(_, d)| d).collect();
            self.inner.send(&mut late)?;
        }
        let wait = if self.held_rx.is_empty() {
            wait
        } else {
            Duration::ZERO
        };
        let mut got = Vec::new();
        self.inner.recv(&mut got, wait)?;
        let pass = self.apply(got, false);
        into.extend(pass);
        Ok(())
    }
    fn flush(&mut self) -> io::Result<()> {
        self.inner.flush()
    }
    fn fault_counts(&self) -> FaultCounts {
        self.faults.counts() + self.inner.fault_counts()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An in-memory link: sends are recorded, receives come from a queue.
    #[derive(Default)]
    struct Mem {
        sent: Vec<Dgram>,
        inbox: Vec<Dgram>,
    }

    impl Link for Mem {
        fn local_addr(&self) -> SocketAddrV4 {
            SocketAddrV4::new(Ipv4Addr::LOCALHOST, 1)
        }
        fn send(&mut self, out: &mut Vec<Dgram>) -> io::Result<()> {
            self.sent.append(out);
            Ok(())
        }
        fn recv(&mut self, into: &mut Vec<Dgram>, _: Duration) -> io::Result<()> {
            into.append(&mut self.inbox);
            Ok(())
        }
    }

    fn dg(i: u8) -> Dgram {
        Dgram::new(SocketAddrV4::new(Ipv4Addr::LOCALHOST, 2), vec![i])
    }

    #[test]
    fn faults_are_seeded_and_conserve_datagrams() {
        let spec = FaultSpec {
            loss: 0.2,
            dup: 0.2,
            reorder: 0.2,
            hold: 1,
        };
        let run = || {
            let mut f = Faulty::new(Mem::default(), Faults::new(spec, 7).unwrap());
            for i in 0..50 {
                f.send(&mut vec![dg(i)]).unwrap();
            }
            f.recv(&mut vec![], Duration::ZERO).unwrap();
            (f.inner.sent.clone(), f.counts())
        };
        let (a, ca) = run();
        let (b, cb) = run();
        assert_eq!(a, b, "same seed, same faults");
        assert_eq!(ca, cb);
        assert_eq!(a.len() as u64, 50 - ca.lost + ca.duplicated);
        assert!(ca.lost > 0 && ca.duplicated > 0 && ca.reordered > 0);
        let order: Vec<u8> = a.iter().map(|d| d.payload()[0]).collect();
        assert!(
            order.windows(2).any(|w| w[0] > w[1]),
            "something was reordered"
        );
    }

    /// A datagram held back by `k` goes out with the `k`-th later batch, in both directions;
    /// a receive releases every held send.
    #[test]
    fn held_datagrams_wait_their_batches() {
        let spec = FaultSpec {
            reorder: 1.0,
            hold: 3,
            ..FaultSpec::NONE
        };
        let seed = 11;
        let mut f = Faulty::new(Mem::default(), Faults::new(spec, seed).unwrap());
        let mut when = [None; 20];
        for i in 0..20u8 {
            f.send(&mut vec![dg(i)]).unwrap();
            for d in f.inner.sent.drain(..) {
                when[d.payload()[0] as usize] = Some(i);
            }
        }
        let delays: Vec<u8> = (0..17u8).map(|i| when[i as usize].unwrap() - i).collect();
        assert!(
            delays.iter().all(|&k| (1..=3).contains(&k)),
            "seed {seed}: {delays:?}"
        );
        assert!(
            (1..=3).all(|k| delays.contains(&k)),
            "seed {seed}: {delays:?}"
        );
        f.recv(&mut vec![], Duration::ZERO).unwrap();
        let sent = f.inner.sent.len() as u64;
        assert_eq!(
            sent + when.iter().flatten().count() as u64,
            20,
            "receive releases all"
        );
        assert_eq!(f.counts().reordered, 20);
        // Receives: datagrams arriving one per call come out 1..=3 calls later.
        f.inner.inbox = vec![dg(0)];
        let mut got = Vec::new();
        let mut calls = 0;
        while got.is_empty() {
            f.recv(&mut got, Duration::ZERO).unwrap();
            calls += 1;
        }
        assert!(
            (2..=4).contains(&calls),
            "seed {seed}: out after {calls} receives"
        );
        assert_eq!(got, vec![dg(0)]);
    }

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
}
