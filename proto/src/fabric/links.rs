//! The links of the fabric simulator: output queues, serialisation, the wire (through the
//! fault model) and link failures. Flow control (drop-tail or credits) is in `flow`.

use super::flow::{Flow, Queued};
use super::{Ev, NodeId, Port, Sim};

impl Sim {
    /// A leaf–spine link fails: the frames queued on it are lost (their ingress buffers
    /// freed) and its credits start afresh.
    pub(super) fn link_down(&mut self, l: usize, s: usize) {
        let f = self.run.fabric;
        self.up[l][s] = false;
        for (node, port) in [
            (NodeId::Switch(l), f.hosts_per_leaf + s),
            (NodeId::Switch(f.leaves + s), l),
        ] {
            let p = self.port_mut(node, port);
            let gone: Vec<Queued> = p.queue.drain(..).collect();
            p.bytes = 0;
            self.lost += gone.len() as u64;
            for q in gone {
                self.release(q.hold);
            }
        }
        self.reset_credits(l, s);
    }

    pub(super) fn port_mut(&mut self, node: NodeId, port: usize) -> &mut Port {
        match node {
            NodeId::Switch(s) => &mut self.switches[s].ports[port],
            NodeId::Host(h) => &mut self.hosts[h].nic,
        }
    }

    /// Queues a frame at a port; drop-tail drops it if the queue is full (lossless never
    /// drops: the credits bound the queue).
    pub(super) fn enqueue(&mut self, node: NodeId, port: usize, q: Queued) {
        let f = self.run.fabric;
        let at = match node {
            NodeId::Switch(s) if s >= f.leaves => Some(1),
            NodeId::Switch(_) if port >= f.hosts_per_leaf => Some(0),
            NodeId::Switch(_) => Some(2),
            NodeId::Host(_) => None,
        };
        let len = q.frame.len();
        let p = self.port_mut(node, port);
        if let Some(at) = at {
            if f.flow == Flow::DropTail && p.bytes + len > f.queue_bytes {
                self.queue_drops += 1;
                self.drops_at[at] += 1;
                self.release(q.hold);
                return;
            }
        }
        p.bytes += len;
        p.queue.push_back(q);
        let (bytes, busy) = (p.bytes, p.busy);
        if let Some(at) = at {
            self.peak_queue[at] = self.peak_queue[at].max(bytes);
        }
        if !busy {
            self.start_tx(node, port);
        }
    }

    /// Starts serialising the head frame of a port, if it has one and (lossless) credit.
    pub(super) fn start_tx(&mut self, node: NodeId, port: usize) {
        let f = self.run.fabric;
        let p = self.port_mut(node, port);
        let Some(len) = p.queue.front().map(|q| q.frame.len()) else {
            p.busy = false;
            return;
        };
        if !self.take_credit(node, port, len) {
            // Head-of-line blocked until credit comes back.
            self.port_mut(node, port).busy = false;
            return;
        }
        self.port_mut(node, port).busy = true;
        let t = self.now + f.ser_ns(len + 24);
        self.push(t, Ev::TxDone(node, port as u8));
    }

    pub(super) fn tx_done(&mut self, node: NodeId, port: u8) {
        let f = self.run.fabric;
        let p = self.port_mut(node, port as usize);
        let Some(Queued { frame, hold }) = p.queue.pop_front() else {
            // The link failed while the frame was in flight: its queue was dropped.
            p.busy = false;
            return;
        };
        p.bytes -= frame.len();
        p.busy = false;
        let more = !p.queue.is_empty();
        self.release(hold);
        if more {
            self.start_tx(node, port as usize);
        }
        let peer = self.peer(node, port as usize);
        match peer {
            Some((to, to_port)) => {
                if let (NodeId::Switch(a), NodeId::Switch(_)) = (node, to) {
                    if a < f.leaves {
                        self.uplink_bytes.0 += frame.len() as u64;
                    } else {
                        self.uplink_bytes.1 += frame.len() as u64;
                    }
                }
                self.deliver(to, to_port, frame);
            }
            None => self.lost += 1,
        }
        if let NodeId::Host(h) = node {
            self.host_pump(h);
        }
    }

    /// The other end of a port, or `None` if the link is down.
    pub(super) fn peer(&self, node: NodeId, port: usize) -> Option<(NodeId, u8)> {
        let f = self.run.fabric;
        match node {
            NodeId::Host(h) => Some((
                NodeId::Switch(h / f.hosts_per_leaf),
                (h % f.hosts_per_leaf) as u8,
            )),
            NodeId::Switch(l) if l < f.leaves => {
                if port < f.hosts_per_leaf {
                    Some((NodeId::Host(l * f.hosts_per_leaf + port), 0))
                } else {
                    let s = port - f.hosts_per_leaf;
                    self.up[l][s].then_some((NodeId::Switch(f.leaves + s), l as u8))
                }
            }
            NodeId::Switch(sw) => {
                let s = sw - f.leaves;
                (port < f.leaves && self.up[port][s])
                    .then_some((NodeId::Switch(port), (f.hosts_per_leaf + s) as u8))
            }
        }
    }

    /// Puts a frame on the wire toward `to`'s `port`, through the fault model. Lossless:
    /// the first copy holds the sender's credit; a lost frame's credit comes back as if the
    /// receiver had discarded it on arrival.
    fn deliver(&mut self, to: NodeId, port: u8, frame: Vec<u8>) {
        let fate = self.faults.fate();
        let prop = self.run.fabric.prop_ns;
        if fate.lost() {
            self.lost += 1;
            if let (Flow::Lossless, NodeId::Switch(s)) = (self.run.fabric.flow, to) {
                self.send_credit(s, port as usize, frame.len(), 2 * prop);
            }
        }
        for (i, &hold) in fate.holds().iter().enumerate() {
            let t = self.now + prop + hold;
            self.push(t, Ev::Arrive(to, port, frame.clone(), i == 0));
        }
    }
}
