//! Float <-> int32 quantisation, SwitchML style: `q = round(x · 2^e)`, `x ≈ q · 2^-e`.
//!
//! All workers of a block must use the same exponent `e` (the switch flags
//! `EXP_MISMATCH` otherwise). Workers agree on `e` per tensor with one extra aggregation:
//! each contributes a one-hot [`vote`] for the exponent its own data allows, and everyone
//! takes [`agreed`], the smallest exponent anybody voted for. [`exponent_for`] chooses an
//! exponent at which the sum of `workers` values of magnitude ≤ `max_abs` cannot overflow.
//!
//! Error bound: each quantised value is off by at most `2^-(e+1)`, so a sum of `n`
//! contributions is off by at most `n · 2^-(e+1)` ([`error_bound`]), before the final
//! rounding of the result to f32.

/// Smallest exponent a vote can carry.
pub const EXP_MIN: i8 = -32;
/// Largest exponent a vote can carry.
pub const EXP_MAX: i8 = 31;
/// Lanes of a vote block: one per exponent in `EXP_MIN..=EXP_MAX`.
pub const VOTE_LANES: usize = (EXP_MAX as i32 - EXP_MIN as i32 + 1) as usize;

/// Largest exponent in `EXP_MIN..=EXP_MAX` at which `workers` values with magnitude at
/// most `max_abs` sum without exceeding the int32 range.
pub fn exponent_for(max_abs: f32, workers: u32) -> i8 {
    let max_abs = if max_abs.is_finite() {
        max_abs.abs() as f64
    } else {
        f64::MAX
    };
    let limit = i32::MAX as f64 / workers.max(1) as f64;
    let mut e = EXP_MAX;
    while e > EXP_MIN && (max_abs * 2f64.powi(e as i32)).round() > limit {
        e -= 1;
    }
    e
}

/// Quantises `x` at exponent `e` (round half away from zero, saturating).
pub fn quantize(x: &[f32], e: i8) -> Vec<i32> {
    let s = 2f64.powi(e as i32);
    x.iter()
        .map(|&v| {
            (v as f64 * s)
                .round()
                .clamp(i32::MIN as f64, i32::MAX as f64) as i32
        })
        .collect()
}

/// Turns int32 sums at exponent `e` back into floats.
pub fn dequantize(q: &[i32], e: i8) -> Vec<f32> {
    let s = 2f64.powi(-(e as i32));
    q.iter().map(|&v| (v as f64 * s) as f32).collect()
}

/// Largest absolute error of a sum of `workers` quantised values at exponent `e`,
/// before rounding to f32.
pub fn error_bound(workers: u32, e: i8) -> f64 {
    workers as f64 * 2f64.powi(-(e as i32) - 1)
}

/// A one-hot vote for exponent `e` (clamped to the vote range).
pub fn vote(e: i8) -> Vec<i32> {
    let mut v = vec![0; VOTE_LANES];
    v[(e.clamp(EXP_MIN, EXP_MAX) as i32 - EXP_MIN as i32) as usize] = 1;
    v
}

/// The exponent everybody can use: the smallest one voted for. `None` if nobody voted.
pub fn agreed(votes: &[i32]) -> Option<i8> {
    votes
        .iter()
        .position(|&c| c > 0)
        .map(|i| (i as i32 + EXP_MIN as i32) as i8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exponent_prevents_overflow_of_the_sum() {
        for &(m, n) in &[(1.0f32, 8u32), (1000.0, 64), (1e-6, 2), (3.5, 1)] {
            let e = exponent_for(m, n);
            let q = quantize(&[m], e)[0] as i64;
            assert!(q * n as i64 <= i32::MAX as i64, "m={m} n={n} e={e}");
            if e < EXP_MAX {
                let q2 = (m as f64 * 2f64.powi(e as i32 + 1)).round();
                assert!(
                    q2 * n as f64 > i32::MAX as f64,
                    "e={e} is not the largest for m={m} n={n}"
                );
            }
        }
        assert_eq!(exponent_for(0.0, 4), EXP_MAX);
    }

    #[test]
    fn round_trip_within_bound() {
        let x = [0.1f32, -0.75, 3.25, 0.0];
        let e = exponent_for(3.2, 4);
        let back = dequantize(&quantize(&x, e), e);
        for (a, b) in x.iter().zip(&back) {
            assert!(
                ((a - b).abs() as f64) <= error_bound(1, e) + 1e-7,
                "{a} vs {b}"
            );
        }
    }

    #[test]
    fn votes_agree_on_the_smallest() {
        let mut sum = vec![0; VOTE_LANES];
        for e in [5i8, -3, 12] {
            for (s, v) in sum.iter_mut().zip(vote(e)) {
                *s += v;
            }
        }
        assert_eq!(agreed(&sum), Some(-3));
        assert_eq!(agreed(&vec![0; VOTE_LANES]), None);
    }
}
