//! A testbench: the model, an AXI-Stream source and sink per port, and an AXI4-Lite master,
//! stepped together one clock cycle at a time (corundum's `Tb` shape).

use crate::axil::{AxilMaster, Done, Op};
use crate::axis::{AxisSink, AxisSource};
use crate::dut::{Dut, PortId, SimError};

/// One decision of the engine, read from the `dbg_*` monitor port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbgEvent {
    /// The engine took the next committed frame of an ingress port at a tick.
    Frame {
        /// Ingress port.
        port: u8,
        /// The model's `now`.
        tick: u32,
    },
    /// The timer scan visited a slot at a tick.
    Scan {
        /// Slot index.
        slot: u32,
        /// The model's `now`.
        tick: u32,
    },
    /// A job-table entry written over AXI4-Lite took effect (between two decisions).
    Commit {
        /// Job-table entry.
        entry: u8,
    },
}

impl DbgEvent {
    /// The decision the monitor port (`dbg_valid`, `dbg_kind`, `dbg_arg`, `dbg_tick`)
    /// shows this cycle, if any.
    pub(crate) fn sample(m: &Dut, [v, k, a, t]: [PortId; 4]) -> Option<Self> {
        if m.get(v) != 1 {
            return None;
        }
        let (arg, tick) = (m.get(a) as u32, m.get(t) as u32);
        Some(match m.get(k) {
            0 => Self::Frame {
                port: arg as u8,
                tick,
            },
            1 => Self::Scan { slot: arg, tick },
            _ => Self::Commit { entry: arg as u8 },
        })
    }
}

/// What a testbench's drain watches: every source has sent everything, the register
/// master is idle, and the beats moved so far at the sources and sinks.
pub(crate) struct Traffic {
    /// Sources done and the register master idle.
    pub settled: bool,
    /// Beats moved at every source and sink so far.
    pub beats: u64,
}

impl Traffic {
    /// The traffic of a testbench's sources, sinks and register master.
    pub(crate) fn of(src: &[AxisSource], sink: &[AxisSink], axil: &AxilMaster) -> Self {
        Self {
            settled: src.iter().all(|s| s.pending() == 0) && axil.idle(),
            beats: sink.iter().map(|s| s.beats).sum::<u64>()
                + src.iter().map(|s| s.beats).sum::<u64>(),
        }
    }
}

/// Steps `b` (one core cycle per `step`) until `traffic` is settled and no beat has moved
/// for `quiet` cycles; `Err(())` after `max` cycles. `cycle` reads the core cycle count.
pub(crate) fn drain_with<B>(
    b: &mut B,
    quiet: u64,
    max: u64,
    cycle: impl Fn(&B) -> u64,
    traffic: impl Fn(&B) -> Traffic,
    mut step: impl FnMut(&mut B),
) -> Result<(), ()> {
    let start = cycle(b);
    let mut last = (u64::MAX, start);
    loop {
        let t = traffic(b);
        if t.beats != last.0 {
            last = (t.beats, cycle(b));
        }
        if t.settled && cycle(b) - last.1 >= quiet {
            return Ok(());
        }
        if cycle(b) - start >= max {
            return Err(());
        }
        step(b);
    }
}

/// Idle and backpressure probabilities for every stream of a testbench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Pacing {
    /// Probability a source inserts an idle cycle before a beat.
    pub idle: f64,
    /// Probability a sink deasserts `tready` in a cycle.
    pub backpressure: f64,
}

impl Pacing {
    /// Full rate both ways.
    pub const FULL: Pacing = Pacing {
        idle: 0.0,
        backpressure: 0.0,
    };
    /// The four corners every directed test runs under.
    pub const CORNERS: [Pacing; 4] = [
        Pacing {
            idle: 0.0,
            backpressure: 0.0,
        },
        Pacing {
            idle: 0.3,
            backpressure: 0.0,
        },
        Pacing {
            idle: 0.0,
            backpressure: 0.3,
        },
        Pacing {
            idle: 0.3,
            backpressure: 0.3,
        },
    ];
}

/// Dut plus drivers and monitors.
pub struct Tb {
    /// The DUT.
    pub m: Dut,
    /// One source per input port.
    pub src: Vec<AxisSource>,
    /// One sink per output port.
    pub sink: Vec<AxisSink>,
    /// Register master.
    pub axil: AxilMaster,
    /// Engine decisions seen on the monitor port, in order.
    pub events: Vec<DbgEvent>,
    dbg: Option<[PortId; 4]>,
}

impl Tb {
    /// Builds and resets a testbench for `config` with `pacing`, seeded by `seed`.
    pub fn new(config: &str, pacing: Pacing, seed: u64) -> Result<Self, SimError> {
        let mut m = Dut::new(config)?;
        let ports = (0..)
            .take_while(|p| m.port(&format!("s_axis_{p}_tdata")).is_ok())
            .count();
        let src = (0..ports)
            .map(|p| {
                AxisSource::new(
                    &m,
                    &format!("s_axis_{p}"),
                    pacing.idle,
                    seed ^ (p as u64 * 0x9e37),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sink = (0..ports)
            .map(|p| {
                AxisSink::new(
                    &m,
                    &format!("m_axis_{p}"),
                    pacing.backpressure,
                    seed ^ (p as u64 * 0x7f4a + 1),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let axil = AxilMaster::new(&m)?;
        let dbg = match (
            m.port("dbg_valid"),
            m.port("dbg_kind"),
            m.port("dbg_arg"),
            m.port("dbg_tick"),
        ) {
            (Ok(v), Ok(k), Ok(a), Ok(t)) => Some([v, k, a, t]),
            _ => None,
        };
        m.reset(8);
        Ok(Self {
            m,
            src,
            sink,
            axil,
            events: Vec::new(),
            dbg,
        })
    }

    /// Number of ports.
    pub fn ports(&self) -> usize {
        self.src.len()
    }

    /// One clock cycle.
    pub fn step(&mut self) {
        for s in &mut self.src {
            s.drive(&mut self.m);
        }
        for s in &mut self.sink {
            s.drive(&mut self.m);
        }
        self.axil.drive(&mut self.m);
        self.m.settle();
        for s in &mut self.src {
            s.sample(&self.m);
        }
        for s in &mut self.sink {
            s.sample(&self.m);
        }
        self.axil.sample(&self.m);
        if let Some(e) = self.dbg.and_then(|d| DbgEvent::sample(&self.m, d)) {
            self.events.push(e);
        }
        self.m.posedge();
    }

    /// True if the core has the `dbg_*` monitor port.
    pub fn has_monitor(&self) -> bool {
        self.dbg.is_some()
    }

    /// Steps until `done(self)` holds, failing after `max` cycles.
    pub fn run_until(
        &mut self,
        max: u64,
        what: &str,
        mut done: impl FnMut(&Tb) -> bool,
    ) -> Result<(), SimError> {
        let start = self.m.cycle();
        while !done(self) {
            if self.m.cycle() - start >= max {
                return Err(SimError::Check(format!(
                    "timed out after {max} cycles waiting for {what}"
                )));
            }
            self.step();
        }
        Ok(())
    }

    /// Steps until every source has sent everything and the outputs have been quiet for `quiet` cycles.
    pub fn drain(&mut self, quiet: u64, max: u64) -> Result<(), SimError> {
        drain_with(
            self,
            quiet,
            max,
            |t| t.m.cycle(),
            |t| Traffic::of(&t.src, &t.sink, &t.axil),
            Tb::step,
        )
        .map_err(|()| SimError::Check(format!("did not drain within {max} cycles")))
    }

    /// Performs one register access to completion; its response, whatever it is.
    pub fn access_raw(&mut self, op: Op) -> Result<Done, SimError> {
        self.axil.push(op);
        self.run_until(1000, "an AXI4-Lite response", |t| !t.axil.done.is_empty())?;
        Ok(self.axil.done.pop_front().expect("done"))
    }

    /// Performs one register access to completion; a response other than OKAY is an error.
    pub fn access(&mut self, op: Op) -> Result<Done, SimError> {
        let d = self.access_raw(op)?;
        if d.resp != 0 {
            return Err(SimError::Check(format!(
                "{op:?} answered with response {}",
                d.resp
            )));
        }
        Ok(d)
    }

    /// Writes a register.
    pub fn write(&mut self, addr: u32, data: u32) -> Result<(), SimError> {
        self.access(Op::Write {
            addr,
            data,
            strb: 0xf,
        })
        .map(|_| ())
    }

    /// Reads a register.
    pub fn read(&mut self, addr: u32) -> Result<u32, SimError> {
        self.access(Op::Read { addr }).map(|d| d.data)
    }

    /// Reads a 64-bit counter stored as low word at `addr`, high word at `addr + 4`.
    pub fn read64(&mut self, addr: u32) -> Result<u64, SimError> {
        let lo = self.read(addr)? as u64;
        let hi = self.read(addr + 4)? as u64;
        Ok(hi << 32 | lo)
    }
}
