//! [`TimeWindow`]: a span of a rank's time axis in ns from its origin, and the one conversion
//! between the ns the model keeps and the ms people read.

/// A closed span `[start, end]` of the time axis, ns from the rank origin; `start <= end`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TimeWindow {
    /// First instant, ns from origin.
    pub start: i64,
    /// Last instant, ns from origin.
    pub end: i64,
}

impl TimeWindow {
    /// The window between `a` and `b` (ns, either order).
    pub fn new(a: i64, b: i64) -> TimeWindow {
        TimeWindow {
            start: a.min(b),
            end: a.max(b),
        }
    }

    /// The window between two times in ms (either order); `None` when either is not finite.
    pub fn from_ms(a: f64, b: f64) -> Option<TimeWindow> {
        (a.is_finite() && b.is_finite()).then(|| TimeWindow::new(ms_to_ns(a), ms_to_ns(b)))
    }

    /// The start in ms, for display and for the plot's axis.
    pub fn start_ms(self) -> f64 {
        ns_to_ms(self.start)
    }

    /// The end in ms.
    pub fn end_ms(self) -> f64 {
        ns_to_ms(self.end)
    }

    /// `(start, end)` in ns.
    pub fn ns(self) -> (i64, i64) {
        (self.start, self.end)
    }

    /// `(start, end)` in ms.
    pub fn ms(self) -> (f64, f64) {
        (self.start_ms(), self.end_ms())
    }

    /// Its length in ns.
    pub fn span(self) -> i64 {
        self.end.saturating_sub(self.start)
    }
}

/// Nanoseconds as milliseconds.
pub fn ns_to_ms(ns: i64) -> f64 {
    ns as f64 / 1e6
}

/// Milliseconds as ns, rounded to the nearest ns (so `ms_to_ns(ns_to_ms(n)) == n` for any time a
/// profile holds); saturates at the ends of i64, and NaN is 0.
pub fn ms_to_ns(ms: f64) -> i64 {
    (ms * 1e6).round() as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ns_survive_a_round_trip_through_ms() {
        // Times of real profiles: µs since the epoch with 3 decimals, and small offsets.
        for n in [
            0,
            1,
            999,
            1_000_001,
            123_456_789_012,
            1_734_567_890_123_456_789,
        ] {
            let rel = n % 10_000_000_000_000; // offsets from an origin stay far below 2^53
            assert_eq!(ms_to_ns(ns_to_ms(rel)), rel);
            assert_eq!(ms_to_ns(ns_to_ms(-rel)), -rel);
        }
        assert_eq!(ms_to_ns(f64::NAN), 0);
        assert_eq!(ms_to_ns(f64::INFINITY), i64::MAX);
    }

    #[test]
    fn windows_are_ordered_and_refuse_non_finite_ends() {
        let w = TimeWindow::from_ms(2.5, 1.0).unwrap();
        assert_eq!(w.ns(), (1_000_000, 2_500_000));
        assert_eq!(w.span(), 1_500_000);
        assert_eq!(w.ms(), (1.0, 2.5));
        assert_eq!(TimeWindow::from_ms(f64::NAN, 1.0), None);
    }
}
