//! The value of an `intervallum<numerus>`: a range of integers, its length, equality
//! and display form. No imports, so `Value` can hold one without an import circle;
//! its methods as the language calls them are src/eval/interval.rs.

#[derive(Clone, Copy, Debug)]
pub struct Interval {
    pub start: i64,
    pub end: i64,
    pub inclusive: bool,
}

/// Two ranges are equal when they hold the same integers (`0‥6 ≡ 0…5`; every empty
/// range equals every other).
impl PartialEq for Interval {
    fn eq(&self, other: &Interval) -> bool {
        (self.is_empty() && other.is_empty()) || self.half_open() == other.half_open()
    }
}

impl Interval {
    /// The half-open bounds `[lo, hi)` (wide enough for `… i64::MAX`).
    pub(super) fn half_open(&self) -> (i128, i128) {
        (
            self.start as i128,
            self.end as i128 + i128::from(self.inclusive),
        )
    }

    /// Whether the range holds no integer.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// How many integers the range holds.
    pub fn len(&self) -> u64 {
        let (lo, hi) = self.half_open();
        (hi - lo).clamp(0, u64::MAX as i128) as u64
    }

    /// The range `[lo, hi)` written the way `like` is (`…` when `like` is inclusive).
    pub(super) fn from_half_open(lo: i128, hi: i128, like: bool) -> Interval {
        if like || hi > i64::MAX as i128 {
            Interval {
                start: lo as i64,
                end: (hi - 1) as i64,
                inclusive: true,
            }
        } else {
            Interval {
                start: lo as i64,
                end: hi as i64,
                inclusive: false,
            }
        }
    }
}

impl std::fmt::Display for Interval {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let op = if self.inclusive { "…" } else { "‥" };
        write!(f, "{}{op}{}", self.start, self.end)
    }
}
