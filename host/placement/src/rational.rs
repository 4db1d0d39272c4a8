//! Exact rationals: parsing decimal text without rounding, and display helpers.

use num_bigint::BigInt;
use num_rational::BigRational;
use num_traits::{One, Signed, ToPrimitive, Zero};

/// An exact rational number (rates, capacities, gradient sizes).
pub type Rat = BigRational;

/// Parses `"3"`, `"0.1"`, `"2.5e-3"`, `"1627/1024"` exactly (no float is ever involved).
pub fn parse_rat(text: &str) -> Result<Rat, String> {
    let t = text.trim();
    if let Some((n, d)) = t.split_once('/') {
        let n = parse_rat(n)?;
        let d = parse_rat(d)?;
        if d.is_zero() {
            return Err(format!("{t:?} divides by zero"));
        }
        return Ok(n / d);
    }
    let (mant, exp) = match t.find(['e', 'E']) {
        Some(p) => (
            &t[..p],
            t[p + 1..]
                .parse::<i32>()
                .map_err(|_| format!("{t:?} is not a number"))?,
        ),
        None => (t, 0),
    };
    let (neg, mant) = match mant.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, mant.strip_prefix('+').unwrap_or(mant)),
    };
    let (int, frac) = mant.split_once('.').unwrap_or((mant, ""));
    let digits_ok = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_ok(int) || !digits_ok(frac) {
        return Err(format!("{t:?} is not a number"));
    }
    let all: BigInt = format!("{int}{frac}")
        .parse()
        .map_err(|_| format!("{t:?} is not a number"))?;
    let scale = exp - frac.len() as i32;
    let ten = BigInt::from(10);
    let mut r = Rat::from_integer(all);
    if scale >= 0 {
        r *= Rat::from_integer(num_traits::pow(ten, scale as usize));
    } else {
        r /= Rat::from_integer(num_traits::pow(ten, (-scale) as usize));
    }
    Ok(if neg { -r } else { r })
}

/// Parses a strictly positive rational, naming `what` in the error.
pub fn parse_positive(text: &str, what: &str) -> Result<Rat, String> {
    let r = parse_rat(text).map_err(|e| format!("{what}: {e}"))?;
    if !r.is_positive() {
        return Err(format!("{what} must be positive, got {text}"));
    }
    Ok(r)
}

/// A rational as the nearest f64 (for display and JSON only).
pub fn to_f64(r: &Rat) -> f64 {
    r.to_f64().unwrap_or(f64::NAN)
}

/// A rational as `"p"` or `"p/q"`.
pub fn exact(r: &Rat) -> String {
    if r.denom().is_one() {
        r.numer().to_string()
    } else {
        format!("{}/{}", r.numer(), r.denom())
    }
}

/// `⌊a / b⌋` for positive rationals.
pub fn floor_div(a: &Rat, b: &Rat) -> u64 {
    (a / b).floor().to_integer().to_u64().unwrap_or(u64::MAX)
}

/// A rational from an integer.
pub fn int(v: i64) -> Rat {
    Rat::from_integer(BigInt::from(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_parse_exactly() {
        assert_eq!(parse_rat("0.1").unwrap(), int(1) / int(10));
        assert_eq!(parse_rat("2.5e-3").unwrap(), int(1) / int(400));
        assert_eq!(parse_rat("1627/1024").unwrap(), int(1627) / int(1024));
        assert_eq!(parse_rat("12").unwrap(), int(12));
        assert_eq!(parse_rat("-1.5").unwrap(), int(-3) / int(2));
        assert_eq!(parse_rat("1E2").unwrap(), int(100));
        assert!(parse_rat("1.2.3").is_err());
        assert!(parse_rat("").is_err());
        assert!(parse_rat("x").is_err());
        assert!(parse_positive("0", "rate").is_err());
    }
}
