//! A device's Operator Allocated and Reserved after each MALLOC or FREE of its pools, kept as
//! running sums: each event changes one pool, so the sums change by that pool's difference.
//! Summing every pool at each event cost a pass over the pools for each of a dump's million
//! events (and a hostile dump of many pools made it quadratic).

use rustc_hash::FxHashMap;

/// What one pool says it holds.
#[derive(Default, Clone, Copy)]
struct Pool {
    /// `used` of its last event that wrote one.
    used: Option<i64>,
    /// `total` of its last event that wrote one.
    total: Option<i64>,
    /// The sum of its live blocks (its allocated bytes when it writes no `used`).
    live: i64,
}

impl Pool {
    /// Its allocated bytes: `used`, else its live blocks.
    fn allocated(&self) -> i128 {
        i128::from(self.used.unwrap_or(self.live))
    }
}

/// The running sums over a device's pools.
#[derive(Default)]
pub(super) struct PoolTotals {
    pools: FxHashMap<u32, Pool>,
    /// Σ allocated over the pools (exact: i128 holds any sum of 2³² i64s).
    allocated: i128,
    /// Σ `total` over the pools that wrote one, and how many did.
    reserved: i128,
    with_total: usize,
}

impl PoolTotals {
    /// After an event of pool `pool`: `signed` bytes more live (negative for a FREE), and the
    /// pool's `used` and `total` when written. Returns (allocated, reserved) over every pool,
    /// reserved `None` while no pool wrote a `total`; each clamped to i64.
    pub(super) fn apply(
        &mut self,
        pool: u32,
        signed: i64,
        used: Option<i64>,
        total: Option<i64>,
    ) -> (i64, Option<i64>) {
        let p = self.pools.entry(pool).or_default();
        let (allocated_before, total_before) = (p.allocated(), p.total);
        p.live = p.live.saturating_add(signed);
        if used.is_some() {
            p.used = used;
        }
        if total.is_some() {
            p.total = total;
        }
        self.allocated += p.allocated() - allocated_before;
        match (total_before, p.total) {
            (None, Some(t)) => {
                self.with_total += 1;
                self.reserved += i128::from(t);
            }
            (Some(b), Some(t)) => self.reserved += i128::from(t) - i128::from(b),
            _ => {}
        }
        let clamp = |v: i128| v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64;
        (
            clamp(self.allocated),
            (self.with_total > 0).then(|| clamp(self.reserved)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The running sums are the sums over every pool's state, recomputed at each event.
        #[test]
        fn running_sums_are_the_sums_over_the_pools(
            events in proptest::collection::vec(
                (0u32..4, -1000i64..1000, proptest::option::of(0i64..10_000),
                 proptest::option::of(0i64..10_000)),
                0..200,
            ),
        ) {
            let mut totals = PoolTotals::default();
            // (used, total, live) per pool, kept the plain way.
            let mut state: Vec<(Option<i64>, Option<i64>, i64)> = vec![(None, None, 0); 4];
            for (pool, signed, used, total) in events {
                let s = &mut state[pool as usize];
                s.2 += signed;
                s.0 = used.or(s.0);
                s.1 = total.or(s.1);
                let allocated: i64 = state.iter().map(|s| s.0.unwrap_or(s.2)).sum();
                let totals_written: Vec<i64> = state.iter().filter_map(|s| s.1).collect();
                let reserved = (!totals_written.is_empty()).then(|| totals_written.iter().sum());
                prop_assert_eq!(totals.apply(pool, signed, used, total), (allocated, reserved));
            }
        }
    }

    /// Sums beyond i64 are clamped, not wrapped or panicking.
    #[test]
    fn sums_beyond_i64_are_clamped() {
        let mut totals = PoolTotals::default();
        totals.apply(0, 0, Some(i64::MAX), Some(i64::MAX));
        assert_eq!(
            totals.apply(1, 0, Some(i64::MAX), Some(5)),
            (i64::MAX, Some(i64::MAX))
        );
        assert_eq!(
            totals.apply(1, 0, Some(-5), None),
            (i64::MAX - 5, Some(i64::MAX))
        );
    }
}
