//! AXI-Stream frame sources and sinks, with seeded idle and backpressure inserters.
//!
//! Byte `i` of a beat is `tdata[8i+7:8i]` with `tkeep[i]`; `tuser[0]` on the `tlast` beat
//! marks a bad frame. Each cycle: `drive` before [`Dut::settle`], `sample` after it and
//! before [`Dut::posedge`].

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use crate::dut::{Dut, PortId, SimError};

struct Ports {
    tdata: PortId,
    tkeep: PortId,
    tvalid: PortId,
    tready: PortId,
    tlast: PortId,
    tuser: PortId,
    bytes: usize,
}

impl Ports {
    fn new(m: &Dut, prefix: &str) -> Result<Self, SimError> {
        let p = |s: &str| m.port(&format!("{prefix}_{s}"));
        let tdata = p("tdata")?;
        Ok(Self {
            tdata,
            tkeep: p("tkeep")?,
            tvalid: p("tvalid")?,
            tready: p("tready")?,
            tlast: p("tlast")?,
            tuser: p("tuser")?,
            bytes: m.width(tdata) as usize / 8,
        })
    }
}

/// A frame on the stream and whether it carries the bad-frame mark.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame {
    /// Bytes.
    pub data: Vec<u8>,
    /// `tuser[0]` on the last beat.
    pub bad: bool,
}

/// Drives frames into an `s_axis_*` port.
pub struct AxisSource {
    p: Ports,
    queue: VecDeque<Frame>,
    pos: usize,
    idle: f64,
    rng: ChaCha8Rng,
    valid: bool,
    words: Vec<u32>,
    /// Frames fully transferred.
    pub sent: u64,
    /// Beats transferred.
    pub beats: u64,
    /// Every fully transferred frame, in order (the scoreboard replays them).
    pub completed: Vec<Frame>,
}

impl AxisSource {
    /// A source on port `prefix` (e.g. `s_axis_0`), idle with probability `idle` between beats.
    pub fn new(m: &Dut, prefix: &str, idle: f64, seed: u64) -> Result<Self, SimError> {
        let p = Ports::new(m, prefix)?;
        let words = vec![0; p.bytes.div_ceil(4)];
        Ok(Self {
            p,
            queue: VecDeque::new(),
            pos: 0,
            idle,
            rng: ChaCha8Rng::seed_from_u64(seed),
            valid: false,
            words,
            sent: 0,
            beats: 0,
            completed: Vec::new(),
        })
    }

    /// Queues a frame.
    pub fn push(&mut self, data: Vec<u8>, bad: bool) {
        self.queue.push_back(Frame { data, bad });
    }

    /// Frames not yet fully sent.
    pub fn pending(&self) -> usize {
        self.queue.len()
    }

    /// Drives this cycle's beat (or idle).
    pub fn drive(&mut self, m: &mut Dut) {
        if !self.valid {
            self.valid =
                !(self.queue.is_empty() || self.idle > 0.0 && self.rng.gen_bool(self.idle));
        }
        if !self.valid {
            m.set(self.p.tvalid, 0);
            return;
        }
        let f = &self.queue[0];
        let n = (f.data.len() - self.pos).min(self.p.bytes);
        let beat = &f.data[self.pos..self.pos + n];
        let last = self.pos + n == f.data.len();
        if self.p.bytes > 8 {
            self.words.fill(0);
            for (w, c) in self.words.iter_mut().zip(beat.chunks(4)) {
                let mut b = [0; 4];
                b[..c.len()].copy_from_slice(c);
                *w = u32::from_le_bytes(b);
            }
            m.set_wide(self.p.tdata, &self.words);
        } else {
            let mut b = [0; 8];
            b[..n].copy_from_slice(beat);
            m.set(self.p.tdata, u64::from_le_bytes(b));
        }
        let keep = if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
        m.set(self.p.tkeep, keep);
        m.set(self.p.tvalid, 1);
        m.set(self.p.tlast, last as u64);
        m.set(self.p.tuser, (last && f.bad) as u64);
    }

    /// Records whether this cycle's beat was accepted.
    pub fn sample(&mut self, m: &Dut) {
        if !self.valid || m.get(self.p.tready) == 0 {
            return;
        }
        self.beats += 1;
        let len = self.queue[0].data.len();
        self.pos += self.p.bytes;
        if self.pos >= len {
            let f = self.queue.pop_front().expect("frame in flight");
            self.completed.push(f);
            self.pos = 0;
            self.sent += 1;
        }
        self.valid = false;
    }
}

/// Collects frames from an `m_axis_*` port.
pub struct AxisSink {
    p: Ports,
    backpressure: f64,
    rng: ChaCha8Rng,
    ready: bool,
    cur: Vec<u8>,
    words: Vec<u32>,
    /// Frames received, in order.
    pub frames: Vec<Frame>,
    /// Beats received.
    pub beats: u64,
    /// Cycle of the first beat of each received frame.
    pub first_beat: Vec<u64>,
}

impl AxisSink {
    /// A sink on port `prefix` (e.g. `m_axis_0`), not ready with probability `backpressure`.
    pub fn new(m: &Dut, prefix: &str, backpressure: f64, seed: u64) -> Result<Self, SimError> {
        let p = Ports::new(m, prefix)?;
        let words = vec![0; p.bytes.div_ceil(4)];
        Ok(Self {
            p,
            backpressure,
            rng: ChaCha8Rng::seed_from_u64(seed),
            ready: true,
            cur: Vec::new(),
            words,
            frames: Vec::new(),
            beats: 0,
            first_beat: Vec::new(),
        })
    }

    /// Drives `tready` for this cycle.
    pub fn drive(&mut self, m: &mut Dut) {
        self.ready = !(self.backpressure > 0.0 && self.rng.gen_bool(self.backpressure));
        m.set(self.p.tready, self.ready as u64);
    }

    /// Takes this cycle's beat, if any.
    pub fn sample(&mut self, m: &Dut) {
        if !self.ready || m.get(self.p.tvalid) == 0 {
            return;
        }
        self.beats += 1;
        if self.cur.is_empty() {
            self.first_beat.push(m.cycle());
        }
        let keep = m.get(self.p.tkeep);
        if self.p.bytes > 8 {
            m.get_wide(self.p.tdata, &mut self.words);
        } else {
            let v = m.get(self.p.tdata);
            self.words[0] = v as u32;
            if self.words.len() > 1 {
                self.words[1] = (v >> 32) as u32;
            }
        }
        let all = if self.p.bytes >= 64 {
            u64::MAX
        } else {
            (1u64 << self.p.bytes) - 1
        };
        if keep & all == all {
            let mut left = self.p.bytes;
            for w in &self.words {
                let k = left.min(4);
                self.cur.extend_from_slice(&w.to_le_bytes()[..k]);
                left -= k;
            }
        } else {
            for i in 0..self.p.bytes {
                if keep >> i & 1 == 1 {
                    self.cur.push((self.words[i / 4] >> (8 * (i % 4))) as u8);
                }
            }
        }
        if m.get(self.p.tlast) == 1 {
            let bad = m.get(self.p.tuser) & 1 == 1;
            let cap = self.cur.len();
            self.frames.push(Frame {
                data: std::mem::replace(&mut self.cur, Vec::with_capacity(cap)),
                bad,
            });
        }
    }
}
