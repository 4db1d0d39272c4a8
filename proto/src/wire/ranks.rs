//! [`RankSet`]: a job's ranks or a packet's contributors, up to [`MAX_RANKS`] of them.
//!
//! A fixed-size set (eight 64-bit words, 64 bytes) so that a slot copy, a header and a job
//! entry hold it without allocation. Word `w` holds ranks `64·w .. 64·w + 63`, bit `r mod 64`;
//! word 0 is the version-1 bitmap.

use super::MAX_RANKS;

/// Words of a [`RankSet`].
pub const RANK_WORDS: usize = MAX_RANKS as usize / 64;

/// A set of worker ranks `0..MAX_RANKS`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, PartialOrd, Ord)]
pub struct RankSet(pub [u64; RANK_WORDS]);

impl RankSet {
    /// The empty set.
    pub const EMPTY: RankSet = RankSet([0; RANK_WORDS]);

    /// Ranks `0..n` (`n ≤ MAX_RANKS`).
    pub fn first(n: u32) -> Self {
        assert!(n <= MAX_RANKS, "{n} ranks exceed MAX_RANKS = {MAX_RANKS}");
        let mut s = Self::EMPTY;
        for (w, word) in s.0.iter_mut().enumerate() {
            let lo = 64 * w as u32;
            *word = match n.saturating_sub(lo) {
                0 => 0,
                k if k >= 64 => u64::MAX,
                k => (1u64 << k) - 1,
            };
        }
        s
    }

    /// The one-rank set `{r}` (`r < MAX_RANKS`).
    pub fn one(r: u32) -> Self {
        let mut s = Self::EMPTY;
        s.insert(r);
        s
    }

    /// A set whose ranks are all below 64: `bits` as word 0.
    pub const fn from_u64(bits: u64) -> Self {
        let mut w = [0; RANK_WORDS];
        w[0] = bits;
        Self(w)
    }

    /// The set as a version-1 bitmap, if every rank is below 64.
    pub fn to_u64(&self) -> Option<u64> {
        self.0[1..].iter().all(|&w| w == 0).then_some(self.0[0])
    }

    /// True if some rank is 64 or above (the set needs a version-2 header).
    pub fn is_wide(&self) -> bool {
        self.to_u64().is_none()
    }

    /// True if the set is empty.
    pub fn is_empty(&self) -> bool {
        self.0.iter().all(|&w| w == 0)
    }

    /// Number of ranks in the set.
    pub fn count(&self) -> u32 {
        self.0.iter().map(|w| w.count_ones()).sum()
    }

    /// True if `r` is in the set.
    pub fn contains(&self, r: u32) -> bool {
        (r as usize) < 64 * RANK_WORDS && self.0[r as usize / 64] >> (r % 64) & 1 == 1
    }

    /// Adds rank `r` (`r < MAX_RANKS`).
    pub fn insert(&mut self, r: u32) {
        assert!(r < MAX_RANKS, "rank {r} is beyond MAX_RANKS = {MAX_RANKS}");
        self.0[r as usize / 64] |= 1 << (r % 64);
    }

    /// Removes rank `r` (no-op if absent or out of range).
    pub fn remove(&mut self, r: u32) {
        if r < MAX_RANKS {
            self.0[r as usize / 64] &= !(1 << (r % 64));
        }
    }

    /// The union.
    pub fn union(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a | b)
    }

    /// The ranks of `self` not in `o`.
    pub fn minus(&self, o: &Self) -> Self {
        self.zip(o, |a, b| a & !b)
    }

    /// True if the sets share a rank.
    pub fn intersects(&self, o: &Self) -> bool {
        self.0.iter().zip(&o.0).any(|(a, b)| a & b != 0)
    }

    /// True if every rank of `self` is in `o`.
    pub fn is_subset(&self, o: &Self) -> bool {
        self.minus(o).is_empty()
    }

    /// The `k`-th smallest rank of the set, if it has more than `k`.
    pub fn nth(&self, k: u32) -> Option<u32> {
        let mut k = k;
        for (w, &word) in self.0.iter().enumerate() {
            let c = word.count_ones();
            if k < c {
                let mut m = word;
                for _ in 0..k {
                    m &= m - 1;
                }
                return Some(64 * w as u32 + m.trailing_zeros());
            }
            k -= c;
        }
        None
    }

    /// The ranks, ascending.
    pub fn iter(&self) -> impl Iterator<Item = u32> + '_ {
        (0..MAX_RANKS).filter(|&r| self.contains(r))
    }

    fn zip(&self, o: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        let mut s = *self;
        for (a, b) in s.0.iter_mut().zip(&o.0) {
            *a = f(*a, *b);
        }
        s
    }
}

impl From<u64> for RankSet {
    fn from(bits: u64) -> Self {
        Self::from_u64(bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_operations() {
        let all = RankSet::first(256);
        assert_eq!(all.count(), 256);
        assert_eq!(all.0[..4], [u64::MAX; 4]);
        assert_eq!(all.0[4..], [0; 4]);
        assert_eq!(RankSet::first(65).0[..2], [u64::MAX, 1]);
        assert_eq!(RankSet::first(MAX_RANKS).count(), MAX_RANKS);
        assert_eq!(RankSet::first(3).to_u64(), Some(7));
        assert!(all.is_wide() && !RankSet::first(64).is_wide());
        let mut s = RankSet::one(200);
        s.insert(3);
        assert_eq!(s.iter().collect::<Vec<_>>(), vec![3, 200]);
        assert!(s.is_subset(&all) && !all.is_subset(&s));
        assert!(s.intersects(&RankSet::one(200)));
        assert!(!s.intersects(&RankSet::one(201)));
        assert_eq!(all.minus(&s).count(), 254);
        assert_eq!(s.union(&RankSet::one(511)).count(), 3);
        assert_eq!(all.nth(0), Some(0));
        assert_eq!(all.nth(200), Some(200));
        assert_eq!(all.nth(256), None);
        assert_eq!(s.nth(1), Some(200));
        s.remove(200);
        assert_eq!(s, RankSet::from_u64(8));
        assert!(!s.contains(600));
    }
}
