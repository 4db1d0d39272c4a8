//! Datagram I/O behind one small trait, so a UDP socket, a pcap tap and a fault injector
//! stack like smoltcp's `phy` wrappers: `Faulty<PcapTap<UdpLink>>` is a lossy, captured socket.

use std::fs::File;
use std::io::{self, BufWriter};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::path::Path;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use fanin_proto::wire::{Datagram, L4Addr};
use pcap_file::pcap::{PcapHeader, PcapPacket, PcapWriter};
use pcap_file::DataLink;

mod udp;
pub use udp::{UdpLink, GRO_BUFFER};

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
}
