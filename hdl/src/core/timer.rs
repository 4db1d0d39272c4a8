//! The timer and the timer scan's pointer: `tick_div` cycles per tick (`tick_cnt`), the
//! tick count (`now`), the ticks since the last sweep start (`sweep_el`), whether a sweep
//! is under way (`sweep_on`) and the slot and copy it visits (`scan_ptr`, `scan_c`).
//!
//! The engine drives the scan with strobes: `adv` (the next slot; past the last one the
//! pointer wraps to 0 and the sweep ends), `start` (a sweep starts), `c_set`/`c_clr` (the
//! copy to visit); a start overrides an advance in the same cycle, and reset overrides
//! both, as the engine's order of writes had it. The engine decides when a sweep starts
//! (`scan_ticks`, whether a job is swept) and keeps the front end's turn (`scan_turn`).
//!
//! Every output is a register: no input reaches an output in the same cycle (issue #24:
//! cut only where a stage's outputs are registered). Whether `now` advances this cycle
//! (`tick_now`) compares `tick_cnt` with the input `tick_div`, so it stays inside.

use crate::config::CoreConfig;
use crate::ram::ADDR_W;
use rust_hdl::prelude::*;

/// The timer and the timer scan's pointer (see the module documentation).
#[derive(LogicBlock)]
pub struct Timer {
    /// Clock.
    pub clock: Signal<In, Clock>,
    /// Synchronous active-high reset.
    pub rst: Signal<In, bool>,
    /// Cycles per tick (the register's).
    pub tick_div: Signal<In, Bits<32>>,
    /// Advance the scan pointer (wrap to 0 past the last slot, which ends the sweep).
    pub adv: Signal<In, bool>,
    /// Start a sweep: the pointer to 0, the ticks since the start counted from this cycle's.
    pub start: Signal<In, bool>,
    /// Visit the slot's copy 1 next (`scan_c` set).
    pub c_set: Signal<In, bool>,
    /// Visit the slot's copy 0 next (`scan_c` clear).
    pub c_clr: Signal<In, bool>,
    /// The tick count (the model's `now`).
    pub now_q: Signal<Out, Bits<32>>,
    /// A sweep is under way.
    pub sweep_on_q: Signal<Out, bool>,
    /// Ticks since the last sweep start.
    pub sweep_el_q: Signal<Out, Bits<32>>,
    /// The timer scan's pointer (a slot).
    pub scan_ptr_q: Signal<Out, Bits<ADDR_W>>,
    /// The slot's copy the scan visits.
    pub scan_c_q: Signal<Out, bool>,
    tick_cnt: DFF<Bits<32>>,
    now: DFF<Bits<32>>,
    sweep_on: DFF<bool>,
    /// Ticks since the last sweep start (`now` minus the start's `now`, wrapping).
    sweep_el: DFF<Bits<32>>,
    /// `now` advances this cycle.
    tick_now: Signal<Local, bool>,
    scan_ptr: DFF<Bits<ADDR_W>>,
    scan_c: DFF<bool>,
    c_slast: Constant<Bits<ADDR_W>>,
}

impl Timer {
    /// The timer for a validated configuration (its slot count).
    pub fn new(cfg: &CoreConfig) -> Self {
        Self {
            clock: Default::default(),
            rst: Default::default(),
            tick_div: Default::default(),
            adv: Default::default(),
            start: Default::default(),
            c_set: Default::default(),
            c_clr: Default::default(),
            now_q: Default::default(),
            sweep_on_q: Default::default(),
            sweep_el_q: Default::default(),
            scan_ptr_q: Default::default(),
            scan_c_q: Default::default(),
            tick_cnt: Default::default(),
            now: Default::default(),
            sweep_on: Default::default(),
            sweep_el: Default::default(),
            tick_now: Default::default(),
            scan_ptr: Default::default(),
            scan_c: Default::default(),
            c_slast: Constant::new(((cfg.slots - 1) as u64).into()),
        }
    }
}

impl Logic for Timer {
    #[hdl_gen]
    fn update(&mut self) {
        dff_setup!(self, clock, tick_cnt, now, sweep_on, sweep_el, scan_ptr, scan_c);
        // Outputs: registers.
        self.now_q.next = self.now.q.val();
        self.sweep_on_q.next = self.sweep_on.q.val();
        self.sweep_el_q.next = self.sweep_el.q.val();
        self.scan_ptr_q.next = self.scan_ptr.q.val();
        self.scan_c_q.next = self.scan_c.q.val();
        // Timer: `tick_div` cycles per tick.
        self.tick_now.next = self.tick_cnt.q.val() + 1 >= self.tick_div.val();
        if self.tick_now.val() {
            self.tick_cnt.d.next = 0.into();
            self.now.d.next = self.now.q.val() + 1;
            self.sweep_el.d.next = self.sweep_el.q.val() + 1;
        } else {
            self.tick_cnt.d.next = self.tick_cnt.q.val() + 1;
        }
        // The front end's scan visits: the copy, then the next slot (the last one's next
        // is slot 0, and the sweep ends).
        if self.c_clr.val() {
            self.scan_c.d.next = false;
        }
        if self.c_set.val() {
            self.scan_c.d.next = true;
        }
        if self.adv.val() {
            if self.scan_ptr.q.val() == self.c_slast.val() {
                self.scan_ptr.d.next = 0.into();
                self.sweep_on.d.next = false;
            } else {
                self.scan_ptr.d.next = self.scan_ptr.q.val() + 1;
            }
        }
        // Sweep start (the engine's condition: every `scan_ticks` ticks while a job is swept).
        if self.start.val() {
            self.sweep_on.d.next = true;
            // (The start's `now` is this cycle's: one tick since it if `now` advances.)
            self.sweep_el.d.next = bit_cast::<32, 1>(self.tick_now.val().into());
            self.scan_ptr.d.next = 0.into();
        }
        if self.rst.val() {
            self.tick_cnt.d.next = 0.into();
            self.now.d.next = 0.into();
            self.sweep_on.d.next = false;
            self.sweep_el.d.next = 0.into();
            self.scan_ptr.d.next = 0.into();
            self.scan_c.d.next = false;
        }
    }
}
