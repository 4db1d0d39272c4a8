//! The datagram fast path: the switch takes a UDP payload and its source, and returns each
//! output as a payload with its addresses, so a software switch never wraps its input in an
//! Ethernet frame nor parses its own output frames again.
//!
//! It is the frame path minus the frame: [`Switch::handle_datagram`] is
//! [`Switch::handle`] of the frame `Datagram { src, dst: switch, payload }.to_frame(false)`
//! (the checks a received UDP datagram addressed to the switch always passes are skipped),
//! and each [`DatagramOutput`] is the output frame's UDP datagram. The property test below
//! checks both paths equal, outputs, verdicts and counters; the frame path stays for the RTL
//! scoreboard.

use crate::wire::{Datagram, L4Addr, L2L4_LEN};

use super::{Output, Switch, Verdict};

/// A datagram the switch sends: what [`Output`] carries, without the frame around it.
///
/// The payload stays where the model wrote it, inside the output frame's buffer, so taking
/// it out copies nothing ([`DatagramOutput::into_buffer`]). Two outputs are equal when their
/// port, addresses and payload bytes are.
#[derive(Debug, Clone)]
pub struct DatagramOutput {
    /// Egress port.
    pub port: u8,
    /// Source (the switch, or for a bypassed packet its original sender's address).
    pub src: L4Addr,
    /// Destination.
    pub dst: L4Addr,
    /// The buffer holding the UDP payload at `off..`.
    buf: Vec<u8>,
    off: usize,
}

impl PartialEq for DatagramOutput {
    fn eq(&self, o: &Self) -> bool {
        (self.port, self.src, self.dst) == (o.port, o.src, o.dst) && self.payload() == o.payload()
    }
}

impl Eq for DatagramOutput {}

/// Outputs and verdict of one datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatagramReaction {
    /// Datagrams sent, in order.
    pub outputs: Vec<DatagramOutput>,
    /// What happened.
    pub verdict: Verdict,
}

fn mac(b: &[u8]) -> [u8; 6] {
    b.try_into().expect("six bytes")
}

fn ip(b: &[u8]) -> core::net::Ipv4Addr {
    core::net::Ipv4Addr::new(b[0], b[1], b[2], b[3])
}

fn port16(b: &[u8]) -> u16 {
    u16::from_be_bytes([b[0], b[1]])
}

impl DatagramOutput {
    /// An output carrying `payload`.
    pub fn new(port: u8, src: L4Addr, dst: L4Addr, payload: Vec<u8>) -> Self {
        Self {
            port,
            src,
            dst,
            buf: payload,
            off: 0,
        }
    }

    /// The UDP payload.
    pub fn payload(&self) -> &[u8] {
        &self.buf[self.off..]
    }

    /// The buffer and the offset of the payload in it (the model's output frame and
    /// `L2L4_LEN`, or the payload itself and 0): a sender passes `&buf[off..]` on, no copy.
    pub fn into_buffer(self) -> (Vec<u8>, usize) {
        (self.buf, self.off)
    }

    /// The datagram of a frame the model built with `Datagram::to_frame` or `udp_frame`
    /// (Ethernet, IPv4 without options, UDP): fixed offsets, the frame's buffer kept.
    fn from_model_frame(o: Output) -> Self {
        let f = &o.frame;
        let src = L4Addr {
            mac: mac(&f[6..12]),
            ip: ip(&f[26..30]),
            port: port16(&f[34..36]),
        };
        let dst = L4Addr {
            mac: mac(&f[0..6]),
            ip: ip(&f[30..34]),
            port: port16(&f[36..38]),
        };
        Self {
            port: o.port,
            src,
            dst,
            buf: o.frame,
            off: L2L4_LEN,
        }
    }
}

impl Switch {
    /// Handles one UDP datagram addressed to the switch (its IP address and UDP port), from
    /// `src`, received at tick `now` on ingress `port`. Equal to [`Switch::handle`] of the
    /// frame carrying it (with no UDP checksum, as a kernel that verified it hands it over).
    pub fn handle_datagram(
        &mut self,
        now: u64,
        port: u8,
        src: L4Addr,
        payload: &[u8],
    ) -> DatagramReaction {
        if let Some(pc) = self.counters.ports.get_mut(port as usize) {
            pc.rx_packets += 1;
            pc.rx_bytes += (L2L4_LEN + payload.len()) as u64;
        }
        let d = Datagram {
            src,
            dst: self.me,
            payload,
        };
        let mut out = Vec::new();
        let verdict = self.dispatch_udp(now, port, &d, &mut out);
        self.count(verdict);
        for o in &out {
            if let Some(pc) = self.counters.ports.get_mut(o.port as usize) {
                pc.tx_packets += 1;
                pc.tx_bytes += o.frame.len() as u64;
            }
        }
        DatagramReaction {
            outputs: out
                .into_iter()
                .map(DatagramOutput::from_model_frame)
                .collect(),
            verdict,
        }
    }

    /// [`Switch::tick`], with datagram outputs.
    pub fn tick_datagrams(&mut self, now: u64) -> Vec<DatagramOutput> {
        self.tick(now)
            .into_iter()
            .map(DatagramOutput::from_model_frame)
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Mode, Trust};
    use crate::forge::{forged_payload, junk, Target};
    use crate::plan::{build, star, Addressing, JobSpec};
    use crate::wire::frame::classify;
    use crate::wire::{FrameKind, PacketType, Repr, MAX_WIRE_ELEMENTS};
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// The frame output as a datagram, through the full frame parser.
    fn parsed(o: &Output) -> DatagramOutput {
        match classify(&o.frame) {
            FrameKind::Ipv4 {
                udp: Some(Ok(d)), ..
            } => DatagramOutput::new(o.port, d.src, d.dst, d.payload.to_vec()),
            k => panic!("the model sent a frame that is not a UDP datagram: {k:?}"),
        }
    }

    fn switch(workers: usize, elements: u16, mode: Mode, trust: Trust) -> (Switch, Vec<L4Addr>) {
        let plan = build(
            &star(workers),
            JobSpec {
                job: 7,
                slot_count: 8,
                elements,
                mode,
                addressing: Addressing::Loopback { base: 41000 },
                trust,
            },
        )
        .unwrap();
        let sw = Switch::new(&plan.switches[0]).unwrap();
        let peers = plan
            .workers
            .iter()
            .map(|w| L4Addr {
                mac: w.me.mac,
                ip: w.me.ip,
                port: w.me.udp_port,
            })
            .collect();
        (sw, peers)
    }

    /// Both paths give the same outputs, verdicts and counters, over real allreduce traffic,
    /// forgeries, junk and timer scans, for several seeds, trust settings and packet sizes.
    #[test]
    fn datagram_path_equals_frame_path() {
        let (mut completed, mut outputs) = (0, 0);
        for seed in 0..8u64 {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            let workers = rng.gen_range(1..=5);
            let elements = [1, 16, 64, 256, MAX_WIRE_ELEMENTS][seed as usize % 5];
            let mode = if seed % 2 == 0 {
                Mode::Static
            } else {
                Mode::Timeout {
                    flush_after: 50,
                    reclaim_after: 200,
                }
            };
            let trust = if seed % 3 == 0 {
                Trust::OFF
            } else {
                Trust::default()
            };
            let (mut a, peers) = switch(workers, elements, mode, trust);
            let mut b = a.clone();
            let target = Target {
                job: 7,
                ranks: workers as u8,
                elements: elements.min(300),
                first_block: 0,
                other_jobs: 0.1,
                session_types: true,
            };
            for now in 0..2000u64 {
                let port = rng.gen_range(0..=workers as u8 + 1);
                let src = if (port as usize) >= 1 && (port as usize) <= workers {
                    peers[port as usize - 1]
                } else {
                    L4Addr {
                        mac: [2, 0, 10, 0, 0, 9],
                        ip: core::net::Ipv4Addr::new(10, 0, 0, 9),
                        port: 5555,
                    }
                };
                let payload = match rng.gen_range(0..10) {
                    0 => junk(&mut rng, 64),
                    1..=3 => forged_payload(&mut rng, &target),
                    _ => {
                        // A well-formed contribution of a plausible block.
                        let r = Repr {
                            ptype: PacketType::Contribution,
                            flags: Default::default(),
                            exponent: 0,
                            job: 7,
                            elements: rng.gen_range(1..=elements),
                            block: rng.gen_range(0..12),
                            child: port.saturating_sub(1),
                            bitmap: 1 << port.saturating_sub(1).min(63),
                        };
                        let data: Vec<i32> = (0..r.elements).map(|_| rng.gen()).collect();
                        r.to_bytes(&data)
                    }
                };
                let frame = Datagram {
                    src,
                    dst: a.address(),
                    payload: &payload,
                }
                .to_frame(false);
                let ra = a.handle(now, port, &frame);
                let rb = b.handle_datagram(now, port, src, &payload);
                assert_eq!(ra.verdict, rb.verdict, "seed {seed} tick {now}");
                completed += usize::from(ra.verdict == Verdict::Completed);
                outputs += ra.outputs.len();
                let pa: Vec<_> = ra.outputs.iter().map(parsed).collect();
                assert_eq!(pa, rb.outputs, "seed {seed} tick {now}");
                if now % 97 == 0 {
                    let ta: Vec<_> = a.tick(now).iter().map(parsed).collect();
                    assert_eq!(ta, b.tick_datagrams(now), "seed {seed} tick {now}");
                }
            }
            assert_eq!(a.counters(), b.counters(), "seed {seed}");
        }
        assert!(
            completed > 20 && outputs > 100,
            "{completed} completions, {outputs} outputs"
        );
    }

    /// Each switch keeps its own element limit: one with 64 lanes (an RTL configuration's)
    /// refuses 65 elements as malformed, one with MAX_WIRE_ELEMENTS lanes sums a full jumbo
    /// packet exactly.
    #[test]
    fn each_switch_keeps_its_own_element_limit() {
        for lanes in [64u16, MAX_WIRE_ELEMENTS] {
            let (mut sw, peers) = switch(2, lanes, Mode::Static, Trust::OFF);
            for n in [lanes, lanes + 1] {
                if n > MAX_WIRE_ELEMENTS {
                    continue;
                }
                let mut outs = Vec::new();
                let mut verdict = None;
                for (rank, &p) in peers.iter().enumerate() {
                    let r = Repr {
                        ptype: PacketType::Contribution,
                        flags: Default::default(),
                        exponent: 0,
                        job: 7,
                        elements: n,
                        block: n as u32,
                        child: rank as u8,
                        bitmap: 1 << rank,
                    };
                    let data: Vec<i32> = (0..n as i32).map(|i| i * (rank as i32 + 1)).collect();
                    let rx = sw.handle_datagram(0, rank as u8 + 1, p, &r.to_bytes(&data));
                    verdict = Some(rx.verdict);
                    outs.extend(rx.outputs);
                }
                if n > lanes {
                    assert_eq!(
                        verdict,
                        Some(Verdict::Malformed(
                            super::super::MalformedReason::TooManyElements
                        ))
                    );
                    assert!(outs.is_empty());
                } else {
                    assert_eq!(verdict, Some(Verdict::Completed), "{lanes} lanes");
                    assert_eq!(outs.len(), 2);
                    for o in &outs {
                        let p = crate::wire::Packet::new_checked(o.payload()).unwrap();
                        let want: Vec<i32> = (0..n as i32).map(|i| i * 3).collect();
                        assert_eq!(p.elements(), want);
                    }
                }
            }
        }
    }
}
