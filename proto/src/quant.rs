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
///
/// The same result as rounding `x · 2^e` in f64: the scaling, done in f32, is exact (an
/// overflow is infinite and saturates either way; an underflow is below 2^-126 and rounds
/// to 0 either way), then [`round_clamp32`]. Collected, not zeroed and then written: a
/// zeroed tensor-sized buffer costs a memset.
pub fn quantize(x: &[f32], e: i8) -> Vec<i32> {
    let s = pow2(e as i32);
    x.iter().map(|&v| round_clamp32(v * s)).collect()
}

/// `2^k` as an f32, exactly (`k` in `-126..=127`; the quantisation exponents are).
#[inline]
fn pow2(k: i32) -> f32 {
    debug_assert!((-126..=127).contains(&k));
    f32::from_bits(((k + 127) as u32) << 23)
}

/// `y.round().clamp(i32::MIN, i32::MAX) as i32` (halves away from zero, NaN to 0) with no
/// branch and no library call: adding the largest f32 below 0.5 with `y`'s sign, then
/// truncating, rounds every f32 half away from zero (an exact half reaches the next
/// integer through the addition's own rounding to even; from 2^23 up, `y` is an integer
/// and the addition leaves it).
///
/// The truncation is an unchecked conversion of a value clamped into i32's range, with NaN
/// replaced by 0 and everything from 2^31 up selected as `i32::MAX`: a loop of it
/// vectorises (packed `cvttps2dq` and selects, about 0.7 ns per element here). Rust's
/// saturating `as` stays one scalar conversion per element on baseline x86-64 (2-4 ns);
/// a vectorised f64 formulation measured about 4 ns.
#[inline]
#[allow(unsafe_code)]
fn round_clamp32(y: f32) -> i32 {
    // The largest f32 below 0.5: 0.5 - 2^-25.
    const BELOW_HALF: f32 = f32::from_bits(0x3eff_ffff);
    // 2^31, and the largest f32 below it.
    const TOP: f32 = 2_147_483_648.0;
    const BELOW_TOP: f32 = 2_147_483_520.0;
    let r = y + BELOW_HALF.copysign(y);
    let c = if r.is_nan() {
        0.0
    } else {
        r.clamp(-TOP, BELOW_TOP)
    };
    // SAFETY: `c` is finite (NaN replaced, infinities clamped) and in -2^31 ..= 2^31 - 128,
    // so its truncation is an i32.
    let t = unsafe { c.to_int_unchecked::<i32>() };
    if r >= TOP {
        i32::MAX
    } else {
        t
    }
}

/// Turns int32 sums at exponent `e` back into floats.
///
/// `(v as f32) · 2^-e` rounds once, like `(v as f64 · 2^-e) as f32`: scaling by a power of
/// two commutes with rounding to f32 when nothing overflows or underflows, and
/// `|v| · 2^-e` stays within 2^-31 .. 2^63 for the exponents of [`EXP_MIN`]..=[`EXP_MAX`].
pub fn dequantize(q: &[i32], e: i8) -> Vec<f32> {
    let s = pow2(-(e as i32));
    q.iter().map(|&v| v as f32 * s).collect()
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

    /// The definition: each value scaled and rounded in f64, halves away from zero,
    /// saturating, NaN to 0; and back, rounded once to f32.
    fn reference_quantize(x: f32, e: i8) -> i32 {
        let y = x as f64 * 2f64.powi(e as i32);
        y.round().clamp(i32::MIN as f64, i32::MAX as f64) as i32
    }
    fn reference_dequantize(v: i32, e: i8) -> f32 {
        (v as f64 * 2f64.powi(-(e as i32))) as f32
    }

    /// The vectorisable f32 quantisation equals the f64 definition at every exponent, on
    /// every rounding and saturation edge and on a million random values of every magnitude.
    #[test]
    fn quantize_equals_the_f64_definition() {
        use rand::{Rng, SeedableRng};
        let pred = |v: f32| f32::from_bits(v.to_bits() - 1);
        let mut xs = vec![
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            pred(0.5),
            -pred(0.5),
            1.5,
            -1.5,
            2.5,
            -2.5,
            pred(2.5),
            8388607.5,
            -8388607.5,
            8388608.0,
            16777215.0,
            2147483520.0,
            2147483648.0,
            -2147483648.0,
            -2147483904.0,
            f32::MAX,
            f32::MIN,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            1e-45,
            f32::INFINITY,
            f32::NEG_INFINITY,
            f32::NAN,
        ];
        let seed = 0x9a17;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        xs.extend((0..1_000_000).map(|_| {
            let m: f32 = rng.gen_range(-1.0..1.0);
            m * 2f32.powi(rng.gen_range(-40..40))
        }));
        // Any bit pattern: every exponent, both signs, NaNs with payloads, subnormals.
        xs.extend((0..200_000).map(|_| f32::from_bits(rng.gen())));
        for e in [EXP_MIN, -24, -8, -1, 0, 1, 7, 23, 24, EXP_MAX] {
            let got = quantize(&xs, e);
            for (&x, &q) in xs.iter().zip(&got) {
                assert_eq!(
                    q,
                    reference_quantize(x, e),
                    "seed {seed}: x = {x:?}, e = {e}"
                );
            }
        }
    }

    /// The f32 dequantisation equals the f64 definition at every exponent.
    #[test]
    fn dequantize_equals_the_f64_definition() {
        use rand::{Rng, SeedableRng};
        let mut vs = vec![
            0,
            1,
            -1,
            16777217,
            -16777217,
            i32::MAX,
            i32::MIN,
            3,
            1 << 30,
        ];
        let seed = 0x9a18;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        vs.extend((0..200_000).map(|_| rng.gen::<i32>() >> rng.gen_range(0..31)));
        for e in EXP_MIN..=EXP_MAX {
            let got = dequantize(&vs, e);
            for (&v, &x) in vs.iter().zip(&got) {
                let want = reference_dequantize(v, e);
                assert_eq!(x.to_bits(), want.to_bits(), "seed {seed}: v = {v}, e = {e}");
            }
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
