//! Link-level flow control of the fabric simulator: finite drop-tail output queues, or
//! lossless credit-based flow control as in SST/merlin-style networks.
//!
//! **Lossless.** Every switch keeps `queue_bytes` of buffer per ingress link. The sender of
//! a link (a switch port or a host's NIC) holds that many bytes of *credit*; it may start
//! serialising its head frame only when it has credit for the whole frame, and it spends the
//! frame's bytes when it starts. A frame without credit stays at the head of its output
//! queue (head-of-line blocking), so queues back up hop by hop toward the sources. The
//! receiving switch holds the frame's bytes against its ingress link until the frame leaves:
//! when every output the model made of it has finished serialising on its egress port (a
//! result sent down several ports frees its buffer when the last copy has left), or at once
//! if the model made no output (an aggregated contribution). Then the credit travels back to
//! the upstream sender, arriving `prop_ns` later. Frames a switch makes itself (timer
//! flushes) take no ingress credit. Hosts always accept what they receive, so a leaf's ports
//! to its hosts never wait. Output queues do not drop: their size is bounded by the credits
//! of the switch's ingress links (plus its own flushes).
//!
//! Faults act on top: a frame the fault model loses never occupies the receiver's buffer,
//! so its credit returns `2 · prop_ns` after it left (the receiver discards it on arrival);
//! only the first delivered copy of a duplicated frame holds credit (the extra copy is the
//! fault's, not the sender's). A failed link loses the frames queued on it, its holds are
//! released, and its two credit counters are reset and stop counting (credits returned to a
//! dead link are forgotten; a dead link never waits, its frames are lost).
//!
//! Up/down routing on a leaf–spine cannot deadlock: a frame that entered a leaf from a spine
//! leaves toward a host (which always accepts), and one that entered a spine leaves toward a
//! leaf, so no cycle of waits exists; aggregation only shortens the chain (consumed frames
//! return their credit at once).

use super::{NodeId, Sim};

/// How a link treats a receiver whose buffer is full.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Flow {
    /// Finite drop-tail output queues of `queue_bytes`: a frame that does not fit is dropped.
    #[default]
    DropTail,
    /// Credit-based link-level flow control: no congestion drop; senders wait for credit.
    Lossless,
}

impl Flow {
    /// The mode's name on the command line and in CSVs (`drop-tail`, `lossless`).
    pub fn name(self) -> &'static str {
        match self {
            Flow::DropTail => "drop-tail",
            Flow::Lossless => "lossless",
        }
    }
}

/// A frame in an output queue, with the ingress buffer it holds at its switch (lossless).
#[derive(Debug)]
pub(super) struct Queued {
    /// The Ethernet frame.
    pub(super) frame: Vec<u8>,
    /// The hold it releases when it leaves (index into [`Holds`]).
    pub(super) hold: Option<u32>,
}

/// Ingress buffer a switch holds for a frame it received, until every output made of it left.
#[derive(Debug, Clone, Copy)]
struct Hold {
    sw: usize,
    port: u8,
    bytes: usize,
    /// Outputs still queued.
    left: u32,
}

/// The holds in use (a slab with a free list).
#[derive(Debug, Default)]
pub(super) struct Holds {
    slots: Vec<Hold>,
    free: Vec<u32>,
    /// `held[sw][port]`: bytes switch `sw` holds for its ingress link `port`.
    pub(super) held: Vec<Vec<usize>>,
    /// The most any ingress link's buffer ever held.
    pub(super) peak: usize,
}

impl Holds {
    /// Holds in use.
    #[cfg(test)]
    pub(super) fn in_use(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

impl Sim {
    fn lossless(&self) -> bool {
        self.run.fabric.flow == Flow::Lossless
    }

    /// The credit a sender starts with: the receiving switch's buffer per ingress link, or
    /// unlimited toward a host and in drop-tail mode.
    pub(super) fn initial_credit(&self, node: NodeId, port: usize) -> usize {
        let f = self.run.fabric;
        match node {
            _ if !self.lossless() => usize::MAX,
            NodeId::Switch(l) if l < f.leaves && port < f.hosts_per_leaf => usize::MAX,
            _ => f.queue_bytes,
        }
    }

    /// Gives every port its initial credit (after the switches and hosts are built).
    pub(super) fn init_credits(&mut self) {
        for s in 0..self.switches.len() {
            for p in 0..self.switches[s].ports.len() {
                self.switches[s].ports[p].credit = self.initial_credit(NodeId::Switch(s), p);
            }
        }
        for h in 0..self.hosts.len() {
            self.hosts[h].nic.credit = self.initial_credit(NodeId::Host(h), 0);
        }
        self.holds.held = self
            .switches
            .iter()
            .map(|s| vec![0; s.ports.len()])
            .collect();
    }

    /// True if `node`'s `port` may start sending a frame of `len` bytes now, spending its
    /// credit if so. A dead link never waits (its frames are lost). A refusal counts one
    /// stall per wait, by place: host NICs, leaf uplinks, spine downlinks.
    pub(super) fn take_credit(&mut self, node: NodeId, port: usize, len: usize) -> bool {
        if !self.lossless() || self.peer(node, port).is_none() {
            return true;
        }
        let f = self.run.fabric;
        let p = self.port_mut(node, port);
        if p.credit == usize::MAX {
            return true;
        }
        if p.credit >= len {
            p.credit -= len;
            p.stalled = false;
            return true;
        }
        if !p.stalled {
            p.stalled = true;
            let at = match node {
                NodeId::Host(_) => 0,
                NodeId::Switch(s) if s < f.leaves => 1,
                NodeId::Switch(_) => 2,
            };
            self.stalls_at[at] += 1;
        }
        false
    }

    /// Switch `s` received `len` bytes on `port` and the model made `outputs` frames of
    /// them: the hold those outputs carry (none in drop-tail mode, for an uncredited copy,
    /// or when nothing came out, in which case the credit goes back at once).
    pub(super) fn hold(
        &mut self,
        s: usize,
        port: u8,
        len: usize,
        credited: bool,
        outputs: usize,
    ) -> Option<u32> {
        if !self.lossless() || !credited {
            return None;
        }
        let held = &mut self.holds.held[s][port as usize];
        *held += len;
        self.holds.peak = self.holds.peak.max(*held);
        let h = Hold {
            sw: s,
            port,
            bytes: len,
            left: outputs as u32,
        };
        if outputs == 0 {
            self.free_hold(h);
            return None;
        }
        Some(match self.holds.free.pop() {
            Some(i) => {
                self.holds.slots[i as usize] = h;
                i
            }
            None => {
                self.holds.slots.push(h);
                self.holds.slots.len() as u32 - 1
            }
        })
    }

    /// One output of a hold left its switch (sent, dropped or lost with a link): the last
    /// one frees the ingress buffer and sends the credit upstream.
    pub(super) fn release(&mut self, hold: Option<u32>) {
        let Some(i) = hold else { return };
        let h = &mut self.holds.slots[i as usize];
        h.left -= 1;
        if h.left == 0 {
            let h = *h;
            self.holds.free.push(i);
            self.free_hold(h);
        }
    }

    fn free_hold(&mut self, h: Hold) {
        self.holds.held[h.sw][h.port as usize] -= h.bytes;
        self.send_credit(h.sw, h.port as usize, h.bytes, self.run.fabric.prop_ns);
    }

    /// Switch `s` frees `bytes` of its ingress link `port`: the credit reaches the sender
    /// `after` ns later, unless the link is down (then it is forgotten).
    pub(super) fn send_credit(&mut self, s: usize, port: usize, bytes: usize, after: u64) {
        if let Some((node, p)) = self.peer(NodeId::Switch(s), port) {
            self.push(self.now + after, super::Ev::Credit(node, p, bytes));
        }
    }

    /// Credit arrives at `node`'s `port`: it may start its waiting head frame.
    pub(super) fn credit(&mut self, node: NodeId, port: u8, bytes: usize) {
        if self.peer(node, port as usize).is_none() {
            return;
        }
        let p = self.port_mut(node, port as usize);
        p.credit += bytes;
        if !p.busy && !p.queue.is_empty() {
            self.start_tx(node, port as usize);
        }
    }

    /// A link failed: the credit counters of both its ends start afresh (and stay unused).
    pub(super) fn reset_credits(&mut self, leaf: usize, spine: usize) {
        let f = self.run.fabric;
        let a = (NodeId::Switch(leaf), f.hosts_per_leaf + spine);
        let b = (NodeId::Switch(f.leaves + spine), leaf);
        for (node, port) in [a, b] {
            let c = self.initial_credit(node, port);
            let p = self.port_mut(node, port);
            p.credit = c;
            p.stalled = false;
        }
    }

    /// Ports of live links whose credit is not back to its initial value, and holds still
    /// in use: empty when a drained lossless network conserved its credits.
    #[cfg(test)]
    pub(super) fn credit_leaks(&self) -> Vec<String> {
        let mut out = Vec::new();
        let nodes = (0..self.switches.len())
            .flat_map(|s| (0..self.switches[s].ports.len()).map(move |p| (NodeId::Switch(s), p)))
            .chain((0..self.hosts.len()).map(|h| (NodeId::Host(h), 0)));
        for (node, port) in nodes {
            if self.peer(node, port).is_none() {
                continue;
            }
            let p = match node {
                NodeId::Switch(s) => &self.switches[s].ports[port],
                NodeId::Host(h) => &self.hosts[h].nic,
            };
            if p.credit != self.initial_credit(node, port) || !p.queue.is_empty() {
                out.push(format!(
                    "{node:?} port {port}: credit {} of {}, {} queued",
                    p.credit,
                    self.initial_credit(node, port),
                    p.queue.len()
                ));
            }
        }
        if self.holds.in_use() > 0 {
            out.push(format!("{} holds in use", self.holds.in_use()));
        }
        for (s, v) in self.holds.held.iter().enumerate() {
            for (p, &b) in v.iter().enumerate() {
                if b != 0 {
                    out.push(format!("switch {s} holds {b} bytes of ingress {p}"));
                }
            }
        }
        out
    }
}
