//! An AXI4-Lite master driven cycle by cycle alongside the streams.

use std::collections::VecDeque;

use crate::dut::{Dut, PortId, SimError};

/// One register access.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Write `data` to `addr` with byte strobes `strb` (0xf: the whole word).
    Write {
        /// Byte address.
        addr: u32,
        /// Value.
        data: u32,
        /// `wstrb`: the bytes written (the core refuses anything but 0xf with SLVERR).
        strb: u8,
    },
    /// Read `addr`.
    Read {
        /// Byte address.
        addr: u32,
    },
}

/// A finished access: the op, the read data (0 for writes) and the response code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Done {
    /// What was done.
    pub op: Op,
    /// Read data.
    pub data: u32,
    /// `bresp`/`rresp` (0 = OKAY).
    pub resp: u8,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Idle,
    Write { aw: bool, w: bool },
    Read { ar: bool },
}

/// Issues queued register accesses one at a time.
pub struct AxilMaster {
    aw: [PortId; 3],
    w: [PortId; 4],
    b: [PortId; 3],
    ar: [PortId; 3],
    r: [PortId; 4],
    queue: VecDeque<Op>,
    state: State,
    /// Completed accesses, in order.
    pub done: VecDeque<Done>,
    idle_driven: bool,
}

impl AxilMaster {
    /// Binds to the `s_axil_*` ports.
    pub fn new(m: &Dut) -> Result<Self, SimError> {
        let p = |s: &str| m.port(&format!("s_axil_{s}"));
        Ok(Self {
            aw: [p("awaddr")?, p("awvalid")?, p("awready")?],
            w: [p("wdata")?, p("wstrb")?, p("wvalid")?, p("wready")?],
            b: [p("bresp")?, p("bvalid")?, p("bready")?],
            ar: [p("araddr")?, p("arvalid")?, p("arready")?],
            r: [p("rdata")?, p("rresp")?, p("rvalid")?, p("rready")?],
            queue: VecDeque::new(),
            state: State::Idle,
            done: VecDeque::new(),
            idle_driven: false,
        })
    }

    /// Queues an access.
    pub fn push(&mut self, op: Op) {
        self.queue.push_back(op);
    }

    /// True when nothing is queued or in flight.
    pub fn idle(&self) -> bool {
        self.queue.is_empty() && self.state == State::Idle
    }

    /// Drives this cycle's signals.
    pub fn drive(&mut self, m: &mut Dut) {
        // Idle with nothing queued: the signals are already low; skip the port writes.
        if self.state == State::Idle && self.queue.is_empty() {
            if self.idle_driven {
                return;
            }
            self.idle_driven = true;
        } else {
            self.idle_driven = false;
        }
        if self.state == State::Idle {
            self.state = match self.queue.front() {
                Some(Op::Write { .. }) => State::Write {
                    aw: false,
                    w: false,
                },
                Some(Op::Read { .. }) => State::Read { ar: false },
                None => State::Idle,
            };
        }
        let (awv, wv, arv) = match (self.state, self.queue.front()) {
            (State::Write { aw, w }, Some(&Op::Write { addr, data, strb })) => {
                m.set(self.aw[0], addr as u64);
                m.set(self.w[0], data as u64);
                m.set(self.w[1], strb as u64);
                (!aw, !w, false)
            }
            (State::Read { ar }, Some(&Op::Read { addr })) => {
                m.set(self.ar[0], addr as u64);
                (false, false, !ar)
            }
            _ => (false, false, false),
        };
        m.set(self.aw[1], awv as u64);
        m.set(self.w[2], wv as u64);
        m.set(self.ar[1], arv as u64);
        m.set(self.b[2], matches!(self.state, State::Write { .. }) as u64);
        m.set(self.r[3], matches!(self.state, State::Read { .. }) as u64);
    }

    /// Advances on this cycle's handshakes.
    pub fn sample(&mut self, m: &Dut) {
        match self.state {
            State::Write { mut aw, mut w } => {
                let bv = m.get(self.b[1]) == 1;
                aw |= m.get(self.aw[1]) == 1 && m.get(self.aw[2]) == 1;
                w |= m.get(self.w[2]) == 1 && m.get(self.w[3]) == 1;
                if bv {
                    let op = self.queue.pop_front().expect("op in flight");
                    self.done.push_back(Done {
                        op,
                        data: 0,
                        resp: m.get(self.b[0]) as u8,
                    });
                    self.state = State::Idle;
                } else {
                    self.state = State::Write { aw, w };
                }
            }
            State::Read { mut ar } => {
                ar |= m.get(self.ar[1]) == 1 && m.get(self.ar[2]) == 1;
                if m.get(self.r[2]) == 1 {
                    let op = self.queue.pop_front().expect("op in flight");
                    self.done.push_back(Done {
                        op,
                        data: m.get(self.r[0]) as u32,
                        resp: m.get(self.r[1]) as u8,
                    });
                    self.state = State::Idle;
                } else {
                    self.state = State::Read { ar };
                }
            }
            State::Idle => {}
        }
    }
}
