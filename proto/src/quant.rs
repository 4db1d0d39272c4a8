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
    x.iter().map(|&v| round_clamp(v as f64 * s)).collect()
}

/// `y.round().clamp(i32::MIN, i32::MAX) as i32` (halves away from zero, NaN to 0) without
/// the `round` library call baseline x86-64 makes: clamping first gives the same result (the
/// bounds are integers), and below 2^31 truncation and an exact fraction decide.
#[inline]
fn round_clamp(y: f64) -> i32 {
    let c = y.clamp(i32::MIN as f64, i32::MAX as f64);
    let t = c as i64;
    let f = c - t as f64;
    let r = if f >= 0.5 {
        t + 1
    } else if f <= -0.5 {
        t - 1
    } else {
        t
    };
    r as i32
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

    /// The library-call-free rounding equals `round().clamp() as i32` on every edge and on
    /// a million random values of every magnitude.
    #[test]
    fn round_clamp_equals_round() {
        use rand::{Rng, SeedableRng};
        let reference = |y: f64| y.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32;
        let mut edges = vec![
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            -1.5,
            2.5,
            -2.5,
            0.49999999999999994,
            -0.49999999999999994,
            2147483646.5,
            2147483647.0,
            2147483647.5,
            2147483648.0,
            -2147483648.0,
            -2147483648.5,
            -2147483649.0,
            1e300,
            -1e300,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            4503599627370495.5,
            -4503599627370495.5,
        ];
        let seed = 0x9a17;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        edges.extend((0..1_000_000).map(|_| {
            let m: f64 = rng.gen_range(-1.0..1.0);
            m * 2f64.powi(rng.gen_range(-4..40))
        }));
        for y in edges {
            assert_eq!(round_clamp(y), reference(y), "seed {seed}: y = {y:?}");
        }
    }

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
