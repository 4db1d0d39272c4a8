//! A deterministic in-memory network for key-value jobs: one reference [`Switch`] and hosts
//! (senders and receivers), each on its own switch port, over links that lose, duplicate
//! and delay (reorder) frames as the shared seeded fault model ([`crate::fault`]) decides.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap};

use core::net::Ipv4Addr;

use super::host::{KvReceiver, KvSender};
use crate::config::{ConfigError, SwitchConfig};
use crate::fault::{FaultError, Faults};
use crate::model::Switch;
use crate::netsim::Links;
use crate::wire::{frame::classify, Datagram, FrameKind, L4Addr};

/// A host state machine on the network.
#[derive(Debug, Clone)]
pub enum Host {
    /// One data channel's sender.
    Sender(KvSender),
    /// A job's receiver.
    Receiver(KvReceiver),
}

/// The address of the host on switch port `port` (hosts are 10.2.x.y, UDP port 7000 + port).
pub fn host_addr(port: u8) -> L4Addr {
    L4Addr {
        mac: [2, 0xfb, 0, 0, 0, port],
        ip: Ipv4Addr::new(10, 2, 0, port.wrapping_add(2)),
        port: 7000 + port as u16,
    }
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunOutcome {
    /// Tick the run stopped at.
    pub time: u64,
    /// True if every host finished.
    pub finished: bool,
    /// Frames lost on links.
    pub lost: u64,
    /// Frames delivered.
    pub delivered: u64,
}

/// Why a [`KvNet`] cannot be built.
#[derive(Debug, thiserror::Error)]
pub enum KvNetError {
    /// The switch configuration.
    #[error(transparent)]
    Config(#[from] ConfigError),
    /// The link faults.
    #[error(transparent)]
    Faults(#[from] FaultError),
}

type InFlight = Reverse<(u64, u64, Option<u8>, Vec<u8>)>;

/// The network: the switch and `hosts[i]` on port `i`.
pub struct KvNet {
    switch: Switch,
    hosts: Vec<Host>,
    queue: BinaryHeap<InFlight>,
    seq: u64,
    delay: u64,
    faults: Faults,
    delivered: u64,
    now: u64,
}

impl KvNet {
    /// Builds the network. `cfg` must have at least `hosts.len()` ports; `seed` seeds the
    /// link faults.
    pub fn new(
        cfg: &SwitchConfig,
        hosts: Vec<Host>,
        links: Links,
        seed: u64,
    ) -> Result<Self, KvNetError> {
        Ok(Self {
            switch: Switch::new(cfg)?,
            hosts,
            queue: BinaryHeap::new(),
            seq: 0,
            delay: links.delay.max(1),
            faults: Faults::new(links.faults, seed)?,
            delivered: 0,
            now: 0,
        })
    }

    /// The switch.
    pub fn switch(&self) -> &Switch {
        &self.switch
    }

    /// The hosts, by port.
    pub fn hosts(&self) -> &[Host] {
        &self.hosts
    }

    /// True when every sender and receiver is done.
    pub fn finished(&self) -> bool {
        self.hosts.iter().all(|h| match h {
            Host::Sender(s) => s.done(),
            Host::Receiver(r) => r.done(),
        })
    }

    /// Puts a frame on a link: toward the switch (`to = None`) or host port `to`.
    fn transmit(&mut self, to: Option<u8>, frame: Vec<u8>) {
        for &hold in self.faults.fate().holds() {
            self.seq += 1;
            self.queue.push(Reverse((
                self.now + self.delay + hold,
                self.seq,
                to,
                frame.clone(),
            )));
        }
    }

    fn host_send(&mut self, port: u8, payload: &[u8]) {
        let frame = Datagram {
            src: host_addr(port),
            dst: self.switch.address(),
            payload,
        }
        .to_frame(true);
        self.transmit(None, frame);
    }

    /// Runs until every host is done or `limit` ticks pass.
    pub fn run(&mut self, limit: u64) -> RunOutcome {
        while self.now < limit && !self.finished() {
            while let Some(Reverse((t, _, _, _))) = self.queue.peek() {
                if *t > self.now {
                    break;
                }
                let Reverse((_, _, to, frame)) = self.queue.pop().expect("peeked");
                self.delivered += 1;
                match to {
                    None => {
                        let port = match classify(&frame) {
                            FrameKind::Ipv4 {
                                udp: Some(Ok(d)), ..
                            } => (0..self.hosts.len() as u8)
                                .find(|&p| host_addr(p).ip == d.src.ip)
                                .unwrap_or(0),
                            _ => 0,
                        };
                        let r = self.switch.handle(self.now, port, &frame);
                        for o in r.outputs {
                            self.transmit(Some(o.port), o.frame);
                        }
                    }
                    Some(p) => {
                        let payload = match classify(&frame) {
                            FrameKind::Ipv4 {
                                udp: Some(Ok(d)), ..
                            } => d.payload.to_vec(),
                            _ => continue,
                        };
                        let replies = match self.hosts.get_mut(p as usize) {
                            Some(Host::Sender(s)) => {
                                s.receive(&payload, self.now);
                                vec![]
                            }
                            Some(Host::Receiver(r)) => r.receive(&payload),
                            None => vec![],
                        };
                        for rep in replies {
                            self.host_send(p, &rep);
                        }
                    }
                }
            }
            for p in 0..self.hosts.len() {
                let now = self.now;
                let out = match &mut self.hosts[p] {
                    Host::Sender(s) => s.poll(now),
                    Host::Receiver(r) => r.poll(now),
                };
                for o in out {
                    self.host_send(p as u8, &o);
                }
            }
            self.now += 1;
        }
        RunOutcome {
            time: self.now,
            finished: self.finished(),
            lost: self.faults.counts().lost,
            delivered: self.delivered,
        }
    }

    /// Each receiver's sums, by the port it sits on.
    pub fn results(&self) -> BTreeMap<u8, &BTreeMap<u32, i32>> {
        self.hosts
            .iter()
            .enumerate()
            .filter_map(|(p, h)| match h {
                Host::Receiver(r) => Some((p as u8, r.sums())),
                Host::Sender(_) => None,
            })
            .collect()
    }
}
