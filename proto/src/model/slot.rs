//! One shadow copy of an aggregation slot and the arithmetic on it.

use crate::wire::header::Lane;
use crate::wire::Flags;

/// Life cycle of a slot copy.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CopyState {
    /// Never used, or reclaimed at the root: holds no block.
    Free,
    /// Summing contributions for its block.
    Aggregating,
    /// Inner switch: aggregate sent upward (complete or flushed), awaiting the result.
    Emitted,
    /// Root: result produced and kept for replays. Inner: the result passed down.
    Done,
    /// Inner switch, timeout mode: reclaimed after a flush; its block is only forwarded now.
    Stale,
}

impl CopyState {
    /// True while the copy counts toward occupancy and quota.
    pub fn busy(self) -> bool {
        matches!(self, CopyState::Aggregating | CopyState::Emitted)
    }
}

/// One of the two shadow copies of a slot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SlotCopy {
    /// Life-cycle state.
    pub state: CopyState,
    /// Job of the block held (valid unless `Free`).
    pub job: u16,
    /// Block held (valid unless `Free`).
    pub block: u32,
    /// Ranks summed so far.
    pub bitmap: u64,
    /// Exponent of the first contribution.
    pub exponent: i8,
    /// Accumulated `OVERFLOW` / `EXP_MISMATCH` flags.
    pub flags: Flags,
    /// Element count of the block.
    pub elements: u16,
    /// Tick of the first contribution (aggregating) or of the emission (emitted).
    pub timer: u64,
    /// Tick of the copy's last progress (start, a new contribution, emission): what the
    /// idle reclaim measures.
    pub touched: u64,
    /// The lanes.
    pub data: Vec<i32>,
}

impl SlotCopy {
    /// A free copy with `lanes` zeroed lanes.
    pub fn new(lanes: usize) -> Self {
        Self {
            state: CopyState::Free,
            job: 0,
            block: 0,
            bitmap: 0,
            exponent: 0,
            flags: Flags(0),
            elements: 0,
            timer: 0,
            touched: 0,
            data: vec![0; lanes],
        }
    }

    /// Starts a new epoch for `(job, block)` with a first contribution.
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        &mut self,
        job: u16,
        block: u32,
        bitmap: u64,
        exponent: i8,
        flags: Flags,
        data: &[impl Lane],
        now: u64,
    ) {
        self.state = CopyState::Aggregating;
        self.job = job;
        self.block = block;
        self.bitmap = bitmap;
        self.exponent = exponent;
        self.flags = Flags(flags.0 & (Flags::OVERFLOW | Flags::EXP_MISMATCH));
        self.elements = data.len() as u16;
        self.timer = now;
        self.touched = now;
        let (head, tail) = self.data.split_at_mut(data.len());
        for (d, v) in head.iter_mut().zip(data) {
            *d = v.value();
        }
        tail.fill(0);
    }

    /// Adds a contribution lane by lane with int32 saturation at tick `now`.
    pub fn merge(&mut self, bitmap: u64, exponent: i8, flags: Flags, data: &[impl Lane], now: u64) {
        self.touched = now;
        let mut f = self.flags.0 | (flags.0 & (Flags::OVERFLOW | Flags::EXP_MISMATCH));
        if exponent != self.exponent {
            f |= Flags::EXP_MISMATCH;
        }
        // Branch-free, so that the loop vectorises: a lane saturated when its saturating
        // and wrapping sums differ.
        let mut saturated = false;
        for (acc, v) in self.data.iter_mut().zip(data) {
            let v = v.value();
            let s = acc.saturating_add(v);
            saturated |= s != acc.wrapping_add(v);
            *acc = s;
        }
        if saturated {
            f |= Flags::OVERFLOW;
        }
        self.flags = Flags(f);
        self.bitmap |= bitmap;
    }

    /// The block's lanes.
    pub fn payload(&self) -> &[i32] {
        &self.data[..self.elements as usize]
    }
}

/// Saturating int32 addition that also reports whether it saturated.
pub fn saturating_add(a: i32, b: i32) -> (i32, bool) {
    match a.checked_add(b) {
        Some(s) => (s, false),
        None => (a.saturating_add(b), true),
    }
}

/// True if block `a` is newer than block `b` (serial-number arithmetic over u32).
pub fn newer(a: u32, b: u32) -> bool {
    (a.wrapping_sub(b) as i32) > 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saturation_sets_overflow_and_clamps() {
        let mut c = SlotCopy::new(3);
        c.start(1, 0, 1, 0, Flags(0), &[i32::MAX - 1, i32::MIN + 1, 5], 0);
        c.merge(2, 0, Flags(0), &[5, -5, -10], 1);
        assert_eq!(c.payload(), &[i32::MAX, i32::MIN, -5]);
        assert!(c.flags.has(Flags::OVERFLOW));
        assert_eq!(c.bitmap, 3);
    }

    #[test]
    fn exponent_mismatch_is_flagged() {
        let mut c = SlotCopy::new(1);
        c.start(1, 0, 1, 3, Flags(0), &[1], 0);
        c.merge(2, 4, Flags(0), &[1], 1);
        assert!(c.flags.has(Flags::EXP_MISMATCH));
        assert!(!c.flags.has(Flags::OVERFLOW));
    }

    #[test]
    fn serial_number_order() {
        assert!(newer(5, 4));
        assert!(!newer(4, 5));
        assert!(newer(0, u32::MAX));
        assert!(!newer(7, 7));
    }
}
