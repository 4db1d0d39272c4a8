//! The quantisation scheme of `fanin send` on top of [`fanin_proto::quant`].
//!
//! Before its tensor, every worker of a job aggregates one *preamble*
//! ([`PREAMBLE_LANES`] int32 lanes, split into packets like any block):
//!
//! | lanes | content |
//! |---|---|
//! | 0..64 | one-hot vote for an exponent in -32..=31 ([`quant::vote`]) |
//! | 64..72 | for each byte `b` of the tensor length (u32, little end first): `b`, `b²` |
//! | 72 | 1 if the worker uses a fixed `--scale`, else 0 |
//!
//! From the summed preamble each worker learns, with no extra round trip:
//! - the exponent: in auto mode the smallest one voted for ([`quant::agreed`]), i.e. the
//!   largest at which nobody's sum can overflow int32; in `--scale` mode every vote must
//!   name the same exponent;
//! - whether all workers have the same length: `Σb = n·b` and `Σb² = n·b²` for every byte
//!   hold only if every worker's byte equals this worker's (zero variance);
//! - whether all workers agree on the mode.
//!
//! Every contribution then carries the agreed exponent `e` in its header and elements
//! `q = round(x·2^e)`. The dequantized result `r` of `n` workers satisfies
//! `|r − Σx| ≤ n·2^-(e+1) + 2^-24·|r|` ([`result_bound`]): each rounding is off by at most
//! half a quantum, and the int32 sum converts back to f32 with one rounding.

use fanin_proto::quant::{self, EXP_MAX, EXP_MIN, VOTE_LANES};

/// How floats become int32 elements.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum QuantMode {
    /// Workers vote for the largest exponent at which the sum cannot overflow.
    Auto,
    /// Fixed-point: every worker uses this exponent (`q = round(x·2^e)`).
    Scale(i8),
}

/// Lanes of the preamble block.
pub const PREAMBLE_LANES: usize = VOTE_LANES + 9;
const LEN_LANES: usize = VOTE_LANES;
const MODE_LANE: usize = VOTE_LANES + 8;

/// Why the workers of a job cannot go on with their tensors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum AgreeError {
    /// Workers have tensors of different lengths.
    #[error("workers disagree on the tensor length: this worker has {mine} elements, the job's workers average {mean:.1}; give every worker a tensor of the same length")]
    Length {
        /// This worker's length.
        mine: usize,
        /// Mean length over the job.
        mean: f64,
    },
    /// Some workers use `--scale` and some do not.
    #[error("workers disagree on quantisation: {scaled} of {workers} use --scale; use it on all workers or none")]
    Mode {
        /// Workers in fixed-point mode.
        scaled: i32,
        /// Workers in the job.
        workers: u32,
    },
    /// Workers use different `--scale` exponents.
    #[error("workers use different --scale exponents: {votes:?}; use the same one everywhere")]
    Scale {
        /// The exponents voted for.
        votes: Vec<i8>,
    },
    /// The preamble sum is not a sum of `workers` preambles.
    #[error("the preamble result is inconsistent (no exponent voted for)")]
    Corrupt,
}

/// Largest |x| of a tensor (0 for an empty one).
pub fn max_abs(data: &[f32]) -> f32 {
    data.iter().fold(0.0f32, |m, x| m.max(x.abs()))
}

/// This worker's preamble.
pub fn preamble(mode: QuantMode, data: &[f32], workers: u32) -> Vec<i32> {
    let m = if mode == QuantMode::Auto {
        max_abs(data)
    } else {
        0.0
    };
    preamble_for_len(mode, m, data.len(), workers)
}

/// The preamble of a tensor of `len` elements whose largest |x| is `max_abs`.
pub fn preamble_for_len(mode: QuantMode, max_abs: f32, len: usize, workers: u32) -> Vec<i32> {
    let e = match mode {
        QuantMode::Auto => quant::exponent_for(max_abs, workers),
        QuantMode::Scale(e) => e,
    };
    let mut v = quant::vote(e);
    v.resize(PREAMBLE_LANES, 0);
    let n = len as u32;
    for k in 0..4 {
        let b = ((n >> (8 * k)) & 0xff) as i32;
        v[LEN_LANES + 2 * k] = b;
        v[LEN_LANES + 2 * k + 1] = b * b;
    }
    v[MODE_LANE] = i32::from(matches!(mode, QuantMode::Scale(_)));
    v
}

/// The exponent every worker uses, from the summed preamble, or why they cannot agree.
pub fn agree(mode: QuantMode, sums: &[i32], len: usize, workers: u32) -> Result<i8, AgreeError> {
    if sums.len() != PREAMBLE_LANES {
        return Err(AgreeError::Corrupt);
    }
    let n = workers as i64;
    let scaled = sums[MODE_LANE];
    let mine_scaled = matches!(mode, QuantMode::Scale(_));
    if scaled as i64 != if mine_scaled { n } else { 0 } {
        return Err(AgreeError::Mode { scaled, workers });
    }
    let mut mean = 0.0;
    let mut same = true;
    for k in 0..4 {
        let b = ((len as u32 >> (8 * k)) & 0xff) as i64;
        let (s, s2) = (
            sums[LEN_LANES + 2 * k] as i64,
            sums[LEN_LANES + 2 * k + 1] as i64,
        );
        same &= s == n * b && s2 == n * b * b;
        mean += s as f64 * 256f64.powi(k as i32) / n as f64;
    }
    if !same {
        return Err(AgreeError::Length { mine: len, mean });
    }
    let votes = &sums[..VOTE_LANES];
    match mode {
        QuantMode::Auto => quant::agreed(votes).ok_or(AgreeError::Corrupt),
        QuantMode::Scale(e) => {
            let lane = (e.clamp(EXP_MIN, EXP_MAX) as i32 - EXP_MIN as i32) as usize;
            if votes[lane] as i64 == n {
                Ok(e)
            } else {
                let votes = votes
                    .iter()
                    .enumerate()
                    .filter(|(_, &c)| c > 0)
                    .map(|(i, _)| (i as i32 + EXP_MIN as i32) as i8)
                    .collect();
                Err(AgreeError::Scale { votes })
            }
        }
    }
}

/// Largest error of a dequantized result `r` of `workers` contributions at exponent `e`
/// against the exact sum: `workers·2^-(e+1) + 2^-24·|r|` (plus the smallest subnormal).
pub fn result_bound(workers: u32, e: i8, r: f32) -> f64 {
    quant::error_bound(workers, e)
        + (r.abs() as f64) * 2f64.powi(-24)
        + f64::from(f32::from_bits(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sum(parts: &[Vec<i32>]) -> Vec<i32> {
        let mut s = vec![0; PREAMBLE_LANES];
        for p in parts {
            for (a, b) in s.iter_mut().zip(p) {
                *a += b;
            }
        }
        s
    }

    #[test]
    fn auto_mode_agrees_on_the_smallest_exponent() {
        let a = vec![0.5f32; 300];
        let b = vec![100.0f32; 300];
        let s = sum(&[
            preamble(QuantMode::Auto, &a, 2),
            preamble(QuantMode::Auto, &b, 2),
        ]);
        let e = agree(QuantMode::Auto, &s, 300, 2).unwrap();
        assert_eq!(e, quant::exponent_for(100.0, 2));
    }

    #[test]
    fn length_mismatch_is_seen_by_every_worker() {
        // 256 + 1 vs 1 + 256 bytes: equal byte sums, different lengths.
        let (x, y) = (vec![0.0f32; 257], vec![0.0f32; 1]);
        for (mine, other) in [(&x, &y), (&y, &x)] {
            let s = sum(&[
                preamble(QuantMode::Auto, mine, 2),
                preamble(QuantMode::Auto, other, 2),
            ]);
            let e = agree(QuantMode::Auto, &s, mine.len(), 2).unwrap_err();
            assert!(
                matches!(e, AgreeError::Length { mean, .. } if mean == 129.0),
                "{e}"
            );
        }
    }

    #[test]
    fn scale_mismatch_and_mode_mismatch() {
        let d = vec![1.0f32; 4];
        let s = sum(&[
            preamble(QuantMode::Scale(3), &d, 2),
            preamble(QuantMode::Scale(4), &d, 2),
        ]);
        assert_eq!(
            agree(QuantMode::Scale(3), &s, 4, 2),
            Err(AgreeError::Scale { votes: vec![3, 4] })
        );
        let s = sum(&[
            preamble(QuantMode::Scale(3), &d, 2),
            preamble(QuantMode::Auto, &d, 2),
        ]);
        assert!(matches!(
            agree(QuantMode::Auto, &s, 4, 2),
            Err(AgreeError::Mode { .. })
        ));
    }

    #[test]
    fn bound_holds_for_random_sums() {
        let n = 5u32;
        let xs: Vec<Vec<f32>> = (0..n as u64)
            .map(|s| crate::tensor::synthetic(1000, s))
            .collect();
        let e = quant::exponent_for(1.0, n);
        let mut acc = vec![0i32; 1000];
        for x in &xs {
            for (a, q) in acc.iter_mut().zip(quant::quantize(x, e)) {
                *a += q;
            }
        }
        let r = quant::dequantize(&acc, e);
        for i in 0..1000 {
            let exact: f64 = xs.iter().map(|x| x[i] as f64).sum();
            assert!((r[i] as f64 - exact).abs() <= result_bound(n, e, r[i]));
        }
    }
}
