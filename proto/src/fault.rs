//! The one seeded fault model: loss, duplication and reordering of frames on a link.
//!
//! Every embodiment that injects faults takes its decisions here: the model's network
//! simulators ([`netsim`](crate::netsim), [`kv::sim`](crate::kv::sim), [`fabric`](crate::fabric)),
//! the Verilator harness (`fanin_sim::allreduce`) and the sockets (`fanin::link::Faulty`).
//! Each keeps its own notion of time (ticks, nanoseconds, harness steps, socket batches);
//! a [`FaultSpec`] means the same thing in all of them, counted in that unit.
//!
//! The draws, per frame, in this order (a probability of 0 draws nothing, so a zero spec
//! consumes no randomness and passes every frame untouched):
//! 1. lost with probability `loss` (then nothing else is drawn);
//! 2. duplicated (two copies) with probability `dup`;
//! 3. for each copy: held back with probability `reorder`, and then by `1..=hold` units,
//!    uniformly; otherwise held back by 0.
//!
//! The generator is ChaCha8 seeded with the seed given to [`Faults::new`], on its own
//! stream ([`FAULT_STREAM`]), so a simulator that seeds its other choices with the same seed
//! draws independently of its faults.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde::{Deserialize, Serialize};

/// The ChaCha stream of fault draws (other ChaCha8 generators of a run use stream 0).
pub const FAULT_STREAM: u64 = 0xfa17;

/// Which faults a link injects into every frame crossing it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FaultSpec {
    /// Probability a frame is lost.
    pub loss: f64,
    /// Probability a frame that is not lost is delivered twice.
    pub dup: f64,
    /// Probability each delivered copy is held back (later frames overtake it).
    pub reorder: f64,
    /// A held-back copy is held for `1..=hold` units of the embodiment's time, uniformly.
    pub hold: u64,
}

impl Default for FaultSpec {
    /// No faults (a held copy would be held 1 unit).
    fn default() -> Self {
        Self::NONE
    }
}

/// A spec that a model cannot use, naming the field.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum FaultError {
    /// A probability is NaN or outside `[0, 1]`.
    #[error("fault spec: {field} = {value} is not a probability between 0 and 1")]
    Probability {
        /// The field (`loss`, `dup` or `reorder`).
        field: &'static str,
        /// Its value.
        value: f64,
    },
    /// Reordering is on but a held copy would be held for no time.
    #[error("fault spec: reorder = {reorder} needs hold >= 1 (how long a copy is held back)")]
    NoHold {
        /// The reorder probability.
        reorder: f64,
    },
}

impl FaultSpec {
    /// No faults at all.
    pub const NONE: FaultSpec = FaultSpec {
        loss: 0.0,
        dup: 0.0,
        reorder: 0.0,
        hold: 1,
    };

    /// This spec with every copy delayed by `0..=max` units, uniformly (jitter): held back
    /// with probability `max / (max + 1)`, by `1..=max`.
    pub fn jitter(self, max: u64) -> Self {
        Self {
            reorder: max as f64 / (max as f64 + 1.0),
            hold: max.max(1),
            ..self
        }
    }

    /// True if no fault can happen.
    pub fn is_none(&self) -> bool {
        self.loss == 0.0 && self.dup == 0.0 && self.reorder == 0.0
    }

    /// Checks every probability is in `[0, 1]` and a reordering spec holds for some time.
    pub fn validate(&self) -> Result<(), FaultError> {
        for (field, value) in [
            ("loss", self.loss),
            ("dup", self.dup),
            ("reorder", self.reorder),
        ] {
            if !(0.0..=1.0).contains(&value) {
                return Err(FaultError::Probability { field, value });
            }
        }
        if self.reorder > 0.0 && self.hold == 0 {
            return Err(FaultError::NoHold {
                reorder: self.reorder,
            });
        }
        Ok(())
    }
}

/// What happens to one frame: no copies (lost), or one or two, each held back some units.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fate {
    copies: u8,
    hold: [u64; 2],
}

impl Fate {
    /// Delivered once, at once.
    pub const PASS: Fate = Fate {
        copies: 1,
        hold: [0, 0],
    };

    /// True if the frame is lost.
    pub fn lost(&self) -> bool {
        self.copies == 0
    }

    /// How long each copy is held back (in the embodiment's units); empty if lost.
    pub fn holds(&self) -> &[u64] {
        &self.hold[..self.copies as usize]
    }
}

/// Faults injected so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultCounts {
    /// Frames lost.
    pub lost: u64,
    /// Extra copies delivered.
    pub duplicated: u64,
    /// Copies held back behind later frames.
    pub reordered: u64,
}

impl std::ops::Add for FaultCounts {
    type Output = Self;
    fn add(self, o: Self) -> Self {
        Self {
            lost: self.lost + o.lost,
            duplicated: self.duplicated + o.duplicated,
            reordered: self.reordered + o.reordered,
        }
    }
}

/// A seeded fault process: decides each frame's [`Fate`] and counts what it injected.
#[derive(Debug, Clone)]
pub struct Faults {
    spec: FaultSpec,
    seed: u64,
    rng: ChaCha8Rng,
    counts: FaultCounts,
}

impl Default for Faults {
    /// No faults.
    fn default() -> Self {
        Self::new(FaultSpec::NONE, 0).expect("the zero spec is valid")
    }
}

impl Faults {
    /// A fault process of `spec` whose draws follow from `seed` alone.
    pub fn new(spec: FaultSpec, seed: u64) -> Result<Self, FaultError> {
        spec.validate()?;
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        rng.set_stream(FAULT_STREAM);
        Ok(Self {
            spec,
            seed,
            rng,
            counts: FaultCounts::default(),
        })
    }

    /// The spec.
    pub fn spec(&self) -> FaultSpec {
        self.spec
    }

    /// The seed.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// True if no fault can happen.
    pub fn is_none(&self) -> bool {
        self.spec.is_none()
    }

    /// Faults injected so far.
    pub fn counts(&self) -> FaultCounts {
        self.counts
    }

    /// Decides the fate of the next frame (the draws of the module documentation).
    pub fn fate(&mut self) -> Fate {
        let s = self.spec;
        if s.loss > 0.0 && self.rng.gen_bool(s.loss) {
            self.counts.lost += 1;
            return Fate {
                copies: 0,
                hold: [0, 0],
            };
        }
        let mut fate = Fate::PASS;
        if s.dup > 0.0 && self.rng.gen_bool(s.dup) {
            self.counts.duplicated += 1;
            fate.copies = 2;
        }
        if s.reorder > 0.0 {
            for h in &mut fate.hold[..fate.copies as usize] {
                if self.rng.gen_bool(s.reorder) {
                    self.counts.reordered += 1;
                    *h = self.rng.gen_range(1..=s.hold);
                }
            }
        }
        fate
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(loss: f64, dup: f64, reorder: f64, hold: u64) -> FaultSpec {
        FaultSpec {
            loss,
            dup,
            reorder,
            hold,
        }
    }

    fn fates(f: &mut Faults, n: usize) -> Vec<Fate> {
        (0..n).map(|_| f.fate()).collect()
    }

    #[test]
    fn same_seed_same_fates() {
        let s = spec(0.2, 0.2, 0.3, 5);
        for seed in [0, 1, 42, u64::MAX] {
            let a = fates(&mut Faults::new(s, seed).unwrap(), 500);
            let b = fates(&mut Faults::new(s, seed).unwrap(), 500);
            assert_eq!(a, b, "seed {seed}");
        }
        let a = fates(&mut Faults::new(s, 1).unwrap(), 500);
        let b = fates(&mut Faults::new(s, 2).unwrap(), 500);
        assert_ne!(a, b, "different seeds give different fates");
    }

    /// The fault draws do not repeat another ChaCha8 generator seeded with the same seed.
    #[test]
    fn fault_stream_is_separate() {
        let mut f = Faults::new(spec(0.5, 0.0, 0.0, 1), 9).unwrap();
        let mut other = ChaCha8Rng::seed_from_u64(9);
        let a: Vec<bool> = (0..256).map(|_| f.fate().lost()).collect();
        let b: Vec<bool> = (0..256).map(|_| other.gen_bool(0.5)).collect();
        assert_ne!(a, b);
    }

    /// Over 200,000 frames (fixed seeds, so this cannot flake) every rate is within 1.5% of
    /// the spec (about 7 standard deviations for these counts) and the counters agree with
    /// the fates.
    #[test]
    fn rates_follow_the_spec() {
        const N: u64 = 200_000;
        let s = spec(0.1, 0.25, 0.3, 4);
        for seed in [3, 77] {
            let mut f = Faults::new(s, seed).unwrap();
            let (mut lost, mut dup, mut held, mut copies) = (0u64, 0u64, 0u64, 0u64);
            let mut by_hold = [0u64; 5];
            for _ in 0..N {
                let fate = f.fate();
                if fate.lost() {
                    lost += 1;
                    continue;
                }
                dup += (fate.holds().len() == 2) as u64;
                for &h in fate.holds() {
                    copies += 1;
                    assert!(h <= 4, "seed {seed}: held {h} > hold");
                    by_hold[h as usize] += 1;
                    held += (h > 0) as u64;
                }
            }
            let c = f.counts();
            assert_eq!((c.lost, c.duplicated, c.reordered), (lost, dup, held));
            let near = |what: &str, got: u64, of: u64, p: f64| {
                let r = got as f64 / of as f64;
                assert!(
                    (r - p).abs() < 0.015,
                    "seed {seed}: {what} rate {r} is not near {p}"
                );
            };
            near("loss", lost, N, 0.1);
            near("dup", dup, N - lost, 0.25);
            near("reorder", held, copies, 0.3);
            for (k, &n) in by_hold.iter().enumerate().skip(1) {
                near(&format!("hold {k}"), n, held, 0.25);
            }
        }
    }

    /// `jitter(max)` delays every copy by 0..=max uniformly.
    #[test]
    fn jitter_is_uniform() {
        let s = FaultSpec::NONE.jitter(3);
        let mut f = Faults::new(s, 5).unwrap();
        let mut by = [0u64; 4];
        for _ in 0..100_000 {
            let fate = f.fate();
            assert_eq!(
                fate.holds().len(),
                1,
                "jitter alone neither loses nor duplicates"
            );
            by[fate.holds()[0] as usize] += 1;
        }
        for (k, n) in by.iter().enumerate() {
            let r = *n as f64 / 100_000.0;
            assert!((r - 0.25).abs() < 0.015, "seed 5: delay {k} rate {r}");
        }
        assert_eq!(FaultSpec::NONE.jitter(0), FaultSpec::NONE);
    }

    #[test]
    fn zero_spec_never_touches_a_frame() {
        for seed in [0, 1, 12345] {
            let mut f = Faults::new(FaultSpec::NONE, seed).unwrap();
            assert!(f.is_none());
            for _ in 0..10_000 {
                assert_eq!(f.fate(), Fate::PASS, "seed {seed}");
            }
            assert_eq!(f.counts(), FaultCounts::default());
        }
        assert_eq!(Faults::default().fate(), Fate::PASS);
    }

    #[test]
    fn certain_faults() {
        let mut f = Faults::new(spec(1.0, 0.0, 0.0, 1), 1).unwrap();
        assert!((0..100).all(|_| f.fate().lost()));
        let mut f = Faults::new(spec(0.0, 1.0, 1.0, 1), 1).unwrap();
        assert!((0..100).all(|_| f.fate().holds() == [1, 1]));
        assert_eq!(
            f.counts(),
            FaultCounts {
                lost: 0,
                duplicated: 100,
                reordered: 200
            }
        );
    }

    #[test]
    fn bad_specs_name_the_field() {
        let cases = [
            (spec(1.5, 0.0, 0.0, 1), "loss = 1.5"),
            (spec(0.0, -0.1, 0.0, 1), "dup = -0.1"),
            (spec(0.0, 0.0, f64::NAN, 1), "reorder = NaN"),
            (spec(f64::INFINITY, 0.0, 0.0, 1), "loss = inf"),
            (spec(0.0, 0.0, 0.5, 0), "reorder = 0.5 needs hold >= 1"),
        ];
        for (s, want) in cases {
            let e = Faults::new(s, 1).unwrap_err().to_string();
            assert!(e.contains(want), "{s:?}: {e}");
        }
        assert!(
            spec(0.0, 0.0, 0.0, 0).validate().is_ok(),
            "no reordering, no hold"
        );
        assert!(spec(1.0, 1.0, 1.0, 1).validate().is_ok());
    }

    #[test]
    fn counts_add() {
        let a = FaultCounts {
            lost: 1,
            duplicated: 2,
            reordered: 3,
        };
        assert_eq!(
            a + a,
            FaultCounts {
                lost: 2,
                duplicated: 4,
                reordered: 6
            }
        );
    }
}
