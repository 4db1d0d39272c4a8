//! The board-top testbench: a board's generated wrapper (`fpga_<board>.v`, with the core and
//! `fanin_board.v`) under Verilator, its vendor IP replaced by the behavioural models of
//! `fanin_gen::board::sim` (built in as `board:<name>`, see `FANIN_SIM_BOARDS`).
//!
//! Every clock runs at its own frequency, with its own phase: the core clock, each MAC's
//! user-side clock and (Alveo) the PCIe AXI clock. Frames go in at a MAC model's receiver
//! ([`BoardTb::src`], in that MAC's clock), cross the RX FIFO into the core, and come out
//! through the TX FIFO at a MAC model's transmitter ([`BoardTb::sink`]); registers are
//! reached through the control path the board really uses (Alveo: the PCIe BAR model's
//! AXI-Lite master, across the AXI clock converter and the control arbiter; SUME: the
//! JTAG-to-AXI model in the core clock), both through the board register split.

use fanin_gen::board::sim::{sim_clocks, sim_control_clock, sim_mac_clock};
use fanin_gen::board::Board;
use fanin_hdl::CoreConfig;
use fanin_regs::board as window;

use crate::axil::{AxilMaster, Done, Op};
use crate::axis::{AxisSink, AxisSource, Frame};
use crate::dut::{Dut, PortId, SimError, BUILT_BOARDS};
use crate::scoreboard::Bench;
use crate::tb::{drain_with, DbgEvent, Pacing, Traffic};

/// One clock input of the simulation top.
#[derive(Debug, Clone)]
struct Clock {
    /// Port name (`clk` is the core clock: [`Dut::posedge`] drives it).
    name: String,
    port: PortId,
    /// Period in femtoseconds.
    period: u64,
    /// Time of the next rising edge, femtoseconds.
    next: u64,
    /// Rising edges so far.
    edges: u64,
}

/// The board top, its MAC-side sources and sinks, the control master, and the core's
/// decisions from its monitor port.
pub struct BoardTb {
    /// The board.
    pub board: Board,
    /// The core configuration the board is built with.
    pub core: CoreConfig,
    /// The Verilated simulation top.
    pub m: Dut,
    /// Frames into each MAC model's receiver (`tuser`: the MAC saw a bad FCS).
    pub src: Vec<AxisSource>,
    /// Frames out of each MAC model's transmitter.
    pub sink: Vec<AxisSink>,
    /// The control master (Alveo: PCIe BAR0; SUME: JTAG-to-AXI).
    pub axil: AxilMaster,
    /// Engine decisions seen on the core's monitor port, in order.
    pub events: Vec<DbgEvent>,
    clocks: Vec<Clock>,
    /// Per port: index of its MAC clock in `clocks`.
    mac_clock: Vec<usize>,
    /// Index of the control master's clock.
    ctl_clock: usize,
    dbg: [PortId; 4],
    underrun: PortId,
    rst: PortId,
    /// Simulated time, femtoseconds.
    now: u64,
}

/// Period in femtoseconds of a clock of `mhz` MHz.
fn period_fs(mhz: f64) -> u64 {
    (1e9 / mhz).round() as u64
}

impl BoardTb {
    /// Builds the board top of `board`, with `pacing` on the MAC streams, seeded by `seed`;
    /// holds it in reset, releases it and runs until every MAC model's link is up and the
    /// control path answers. The second and later MACs run 50 ppm apart (separate reference
    /// clocks), every clock with its own phase.
    pub fn new(board: Board, pacing: Pacing, seed: u64) -> Result<Self, SimError> {
        Self::with_core_clock(board, pacing, seed, None)
    }

    /// [`BoardTb::new`] with the core clock at `core_mhz` instead of the configuration's
    /// `clock_mhz` (a core built for a lower clock: the TX FIFOs must still never let a
    /// MAC underrun, the RX FIFOs must hold what the MACs deliver).
    pub fn with_core_clock(
        board: Board,
        pacing: Pacing,
        seed: u64,
        core_mhz: Option<f64>,
    ) -> Result<Self, SimError> {
        let name = format!("board:{}", board.name());
        if !BUILT_BOARDS.contains(&name.as_str()) {
            return Err(SimError::Check(format!(
                "board top {} is not built in (built: {BUILT_BOARDS:?}); rebuild with FANIN_SIM_BOARDS={}",
                board.name(),
                board.name()
            )));
        }
        let core =
            CoreConfig::by_name(board.config_name()).map_err(|e| SimError::Check(e.to_string()))?;
        let m = Dut::new(&name)?;
        let mut specs = vec![(
            "clk".to_string(),
            core_mhz.unwrap_or(f64::from(core.clock_mhz)),
        )];
        specs.extend(sim_clocks(board, &core));
        let n = specs.len() as u64;
        let mut clocks = Vec::new();
        for (i, (c, mhz)) in specs.into_iter().enumerate() {
            let mac = c.starts_with("mac_clk_");
            let skew = if mac && !c.ends_with("_0") {
                1.0 - 50e-6
            } else {
                1.0
            };
            let period = period_fs(mhz * skew);
            clocks.push(Clock {
                port: m.port(&c)?,
                name: c,
                period,
                // Phases spread over the first period.
                next: period * (i as u64 + 1) / (n + 1),
                edges: 0,
            });
        }
        let idx = |c: &str| clocks.iter().position(|k| k.name == c).expect("clock");
        let mac_clock = (0..core.ports)
            .map(|p| idx(&sim_mac_clock(board, p)))
            .collect();
        let ctl_clock = idx(sim_control_clock(board));
        let src = (0..core.ports)
            .map(|p| {
                AxisSource::new(
                    &m,
                    &format!("s_axis_{p}"),
                    pacing.idle,
                    seed ^ (p as u64 * 0x9e37),
                )
            })
            .collect::<Result<Vec<_>, _>>()?;
        let sink = (0..core.ports)
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
        let dbg = [
            m.port("dbg_valid")?,
            m.port("dbg_kind")?,
            m.port("dbg_arg")?,
            m.port("dbg_tick")?,
        ];
        let underrun = m.port("tx_underrun")?;
        let rst = m.port("rst")?;
        let mut tb = Self {
            board,
            core,
            m,
            src,
            sink,
            axil,
            events: Vec::new(),
            clocks,
            mac_clock,
            ctl_clock,
            dbg,
            underrun,
            rst,
            now: 0,
        };
        // Power-on: the clock model unlocked (and PERST# on Alveo) for 20 core cycles.
        tb.m.set(tb.rst, 1);
        tb.cycles(20);
        tb.m.set(tb.rst, 0);
        // Links up: every MAC model's receiver takes frames (SUME: after the Si5324
        // initialiser's run, some 2,000 core cycles).
        let ready: Vec<PortId> = (0..tb.core.ports)
            .map(|p| tb.m.port(&format!("s_axis_{p}_tready")))
            .collect::<Result<_, _>>()?;
        tb.run_until(50_000, "every MAC link up", |t| {
            ready.iter().all(|&r| t.m.get(r) == 1)
        })?;
        // SUME: the Si5324 initialiser's first status poll (a few hundred cycles after its
        // programming), so that the status word no longer changes.
        if board == Board::Sume {
            let valid = 1 << board_bit(board, "si5324_stat_valid");
            let start = tb.m.cycle();
            while tb.read(window::BASE + window::STATUS)? & valid == 0 {
                if tb.m.cycle() - start >= 50_000 {
                    return Err(SimError::Check(
                        "sume: timed out after 50000 core cycles waiting for the Si5324's first status poll"
                            .into(),
                    ));
                }
                tb.cycles(100);
            }
        }
        Ok(tb)
    }

    /// Number of Ethernet ports.
    pub fn ports(&self) -> usize {
        self.src.len()
    }

    /// Simulated time since construction, nanoseconds.
    pub fn time_ns(&self) -> f64 {
        self.now as f64 / 1e6
    }

    /// Rising edges so far of clock input `name` (`clk`, `mac_clk_0`, …).
    pub fn edges(&self, name: &str) -> Option<u64> {
        self.clocks.iter().find(|c| c.name == name).map(|c| c.edges)
    }

    /// Per port, whether its MAC model saw TX `tvalid` drop inside a frame.
    pub fn tx_underruns(&self) -> u64 {
        self.m.get(self.underrun)
    }

    /// Advances to the next rising edge of any clock: the drivers of the domains that edge
    /// present their next beat, the outputs are sampled with every clock low, then those
    /// clocks rise. Returns whether the core clock rose.
    pub fn event(&mut self) -> bool {
        let t = self.clocks.iter().map(|c| c.next).min().expect("clocks");
        self.now = t;
        let fires: Vec<bool> = self.clocks.iter().map(|c| c.next == t).collect();
        for (p, s) in self.src.iter_mut().enumerate() {
            if fires[self.mac_clock[p]] {
                s.drive(&mut self.m);
            }
        }
        for (p, s) in self.sink.iter_mut().enumerate() {
            if fires[self.mac_clock[p]] {
                s.drive(&mut self.m);
            }
        }
        if fires[self.ctl_clock] {
            self.axil.drive(&mut self.m);
        }
        for c in &self.clocks[1..] {
            self.m.set(c.port, 0);
        }
        self.m.settle();
        for (p, s) in self.src.iter_mut().enumerate() {
            if fires[self.mac_clock[p]] {
                s.sample(&self.m);
            }
        }
        for (p, s) in self.sink.iter_mut().enumerate() {
            if fires[self.mac_clock[p]] {
                s.sample(&self.m);
            }
        }
        if fires[self.ctl_clock] {
            self.axil.sample(&self.m);
        }
        let core = fires[0];
        if core {
            if let Some(e) = DbgEvent::sample(&self.m, self.dbg) {
                self.events.push(e);
            }
        }
        for (i, c) in self.clocks.iter_mut().enumerate() {
            if fires[i] {
                c.next += c.period;
                c.edges += 1;
                if i > 0 {
                    self.m.set(c.port, 1);
                }
            }
        }
        if core {
            self.m.posedge();
        } else {
            // Evaluates with `clk` low (it is): the other clocks' edges.
            self.m.settle();
        }
        core
    }

    /// Runs until the core clock has risen `n` times.
    pub fn cycles(&mut self, n: u64) {
        for _ in 0..n {
            while !self.event() {}
        }
    }

    /// Runs core cycles until `done(self)` holds, failing after `max` of them.
    pub fn run_until(
        &mut self,
        max: u64,
        what: &str,
        mut done: impl FnMut(&BoardTb) -> bool,
    ) -> Result<(), SimError> {
        let start = self.m.cycle();
        while !done(self) {
            if self.m.cycle() - start >= max {
                return Err(SimError::Check(format!(
                    "{}: timed out after {max} core cycles waiting for {what}",
                    self.board.name()
                )));
            }
            self.cycles(1);
        }
        Ok(())
    }

    /// Runs until every source has sent everything, the control master is idle and no beat
    /// has moved at a MAC for `quiet` core cycles.
    pub fn drain(&mut self, quiet: u64, max: u64) -> Result<(), SimError> {
        drain_with(
            self,
            quiet,
            max,
            |t| t.m.cycle(),
            |t| Traffic::of(&t.src, &t.sink, &t.axil),
            |t| t.cycles(1),
        )
        .map_err(|()| {
            SimError::Check(format!(
                "{}: did not drain within {max} core cycles",
                self.board.name()
            ))
        })
    }

    /// Performs one register access through the board's control path, to completion.
    pub fn access(&mut self, op: Op) -> Result<Done, SimError> {
        self.axil.push(op);
        self.run_until(2000, "an AXI4-Lite response", |t| !t.axil.done.is_empty())?;
        let d = self.axil.done.pop_front().expect("done");
        if d.resp != 0 {
            return Err(SimError::Check(format!(
                "{}: {op:?} answered with response {}",
                self.board.name(),
                d.resp
            )));
        }
        Ok(d)
    }

    /// Reads a register (core below the board window, the window from `0x10000`).
    pub fn read(&mut self, addr: u32) -> Result<u32, SimError> {
        self.access(Op::Read { addr }).map(|d| d.data)
    }
}

impl Bench for BoardTb {
    fn events(&self) -> &[DbgEvent] {
        &self.events
    }
    fn retain_events(&mut self, from: usize, keep: &mut dyn FnMut(&DbgEvent) -> bool) {
        let mut i = 0;
        self.events.retain(|e| {
            i += 1;
            i <= from || keep(e)
        });
    }
    fn has_monitor(&self) -> bool {
        true
    }
    fn delivered(&self, port: usize) -> Option<&[Frame]> {
        self.src.get(port).map(|s| s.completed.as_slice())
    }
    fn emitted(&self) -> Vec<&[Frame]> {
        self.sink.iter().map(|s| s.frames.as_slice()).collect()
    }
    fn write(&mut self, addr: u32, data: u32) -> Result<(), SimError> {
        self.access(Op::Write {
            addr,
            data,
            strb: 0xf,
        })
        .map(|_| ())
    }
    fn read64(&mut self, addr: u32) -> Result<u64, SimError> {
        let lo = self.read(addr)? as u64;
        let hi = self.read(addr + 4)? as u64;
        Ok(hi << 32 | lo)
    }
    fn step(&mut self) {
        self.cycles(1);
    }
}

/// Bit number of the status bit `name` of `board` (regs/src/board.rs).
fn board_bit(board: Board, name: &str) -> u32 {
    board
        .kind()
        .status_bits()
        .iter()
        .find(|b| b.name == name)
        .unwrap_or_else(|| panic!("{}: no status bit {name}", board.name()))
        .bit
}
