//! A device's Operator Allocated and Reserved after each MALLOC or FREE of its pools, kept as
//! running sums: each event changes one pool, so the sums change by that pool's difference.
//! Summing every pool at each event cost a pass over the pools for each of a dump's million
//! events (and a hostile dump of many pools made it quadratic).
//!
//! What a run of events leaves in the pools ([`PoolStates`]) composes: the states after one
//! run, followed by another's, are the states after both. The curves are made on every core
//! from that ([`super::curves`]): each stretch of events starts from the states the stretches
//! before it leave. The sums are exact (`i128`), so any cut gives the same curves.

use rustc_hash::FxHashMap;

/// What one pool says it holds.
#[derive(Default, Clone, Copy, Debug, PartialEq, Eq)]
struct Pool {
    /// `used` of its last event that wrote one.
    used: Option<i64>,
    /// `total` of its last event that wrote one.
    total: Option<i64>,
    /// The sum of its live blocks (its allocated bytes when it writes no `used`); exact, as
    /// any sum of a dump's 2³² sizes below 2⁵⁶ is in an `i128`.
    live: i128,
}

impl Pool {
    /// Its allocated bytes: `used`, else its live blocks.
    fn allocated(&self) -> i128 {
        self.used.map_or(self.live, i128::from)
    }

    /// After an event: `signed` bytes more live, and `used` and `total` when written.
    fn apply(&mut self, signed: i64, used: Option<i64>, total: Option<i64>) {
        self.live += i128::from(signed);
        if used.is_some() {
            self.used = used;
        }
        if total.is_some() {
            self.total = total;
        }
    }
}

/// Each pool's state after a run of events (from no events: every pool empty).
#[derive(Default, Clone, Debug, PartialEq, Eq)]
pub(super) struct PoolStates(FxHashMap<u32, Pool>);

impl PoolStates {
    /// After an event of pool `pool` ([`PoolTotals::apply`]'s arguments).
    pub(super) fn apply(&mut self, pool: u32, signed: i64, used: Option<i64>, total: Option<i64>) {
        self.0.entry(pool).or_default().apply(signed, used, total);
    }

    /// These states followed by the run that left `later` (applied from no events).
    pub(super) fn then(&mut self, later: &PoolStates) {
        for (&pool, l) in &later.0 {
            let p = self.0.entry(pool).or_default();
            p.live += l.live;
            p.used = l.used.or(p.used);
            p.total = l.total.or(p.total);
        }
    }
}

/// The running sums over a device's pools.
#[derive(Default)]
pub(super) struct PoolTotals {
    pools: PoolStates,
    /// Σ allocated over the pools (exact: i128 holds any sum of 2³² of them).
    allocated: i128,
    /// Σ `total` over the pools that wrote one, and how many did.
    reserved: i128,
    with_total: usize,
}

impl PoolTotals {
    /// The sums over `pools`, the states a run of events left, to go on from.
    pub(super) fn after(pools: PoolStates) -> Self {
        let totals = || pools.0.values().filter_map(|p| p.total);
        Self {
            allocated: pools.0.values().map(Pool::allocated).sum(),
            reserved: totals().map(i128::from).sum(),
            with_total: totals().count(),
            pools,
        }
    }

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
        let p = self.pools.0.entry(pool).or_default();
        let (allocated_before, total_before) = (p.allocated(), p.total);
        p.apply(signed, used, total);
        self.allocated += p.allocated() - allocated_before;
        match (total_before, p.total) {
            (None, Some(t)) => {
                self.with_total += 1;
                self.reserved += i128::from(t);
            }
            (Some(b), Some(t)) => self.reserved += i128::from(t) - i128::from(b),
            _ => {}
        }
        (
            clamp(self.allocated),
            (self.with_total > 0).then(|| clamp(self.reserved)),
        )
    }
}

/// `v` clamped to i64.
pub(super) fn clamp(v: i128) -> i64 {
    v.clamp(i128::from(i64::MIN), i128::from(i64::MAX)) as i64
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

    proptest! {
        /// The states a run leaves, followed by another run's, are the states after both; and
        /// the sums over them go on as if the first run had been applied.
        #[test]
        fn states_compose_and_the_sums_go_on_from_them(
            events in proptest::collection::vec(
                (0u32..4, proptest::num::i64::ANY, proptest::option::of(0i64..10_000),
                 proptest::option::of(proptest::num::i64::ANY)),
                0..120,
            ),
            cut in 0usize..120,
        ) {
            let cut = cut.min(events.len());
            let (mut whole, mut first, mut second) =
                (PoolTotals::default(), PoolStates::default(), PoolStates::default());
            let mut expected = Vec::new();
            for (k, &(pool, signed, used, total)) in events.iter().enumerate() {
                let out = whole.apply(pool, signed, used, total);
                if k >= cut {
                    expected.push(out);
                }
                if k < cut { &mut first } else { &mut second }.apply(pool, signed, used, total);
            }
            let mut went_on = PoolTotals::after(first.clone());
            let got: Vec<_> = events[cut..]
                .iter()
                .map(|&(pool, signed, used, total)| went_on.apply(pool, signed, used, total))
                .collect();
            prop_assert_eq!(got, expected);
            first.then(&second);
            prop_assert_eq!(&first, &whole.pools);
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
