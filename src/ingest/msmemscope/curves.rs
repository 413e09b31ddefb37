//! A rank's curves from its MALLOCs and FREEs in time order, made on every core.
//!
//! Each point depends on every event before it (running sums over the pools), so the events
//! are cut into stretches and read twice: first for what each stretch leaves in the pools
//! and how many points it makes (on every core), then, each stretch starting from the states
//! the stretches before it leave, for its points, written straight to their places in the
//! columns (on every core). The sums are exact, so the curves are the same for any cut; made
//! in one pass on one core they were a seventh of a 1 GB dump's time to its first curves.
//!
//! The process's and the device's bytes (`process_used`, `device_used`) are holds: most
//! events repeat the value before them. A point is kept where the value changes and at the
//! series' last value (so the curve ends where its events end): the same step curve, with
//! half the points of a 1 GB dump and 74 MiB less at its peak.

use std::ops::Range;

use rayon::prelude::*;

use super::pool_totals::{PoolStates, PoolTotals, clamp};
use crate::ingest::huge_pages;
use crate::model::{Component, DeviceMemory, LazyColumn, MemoryRecords, NULL};

/// What the curves read of one MALLOC or FREE of the rank.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct CurveEvent {
    /// When, ns.
    pub ts: i64,
    /// Bytes more live: its size, negative for a FREE.
    pub signed: i64,
    /// Its pool (the event's `what`).
    pub pool: u32,
    /// The pool's `used` and `total`, when written.
    pub used: Option<i64>,
    pub total: Option<i64>,
    /// The process's and the device's bytes in use, when written.
    pub process_used: Option<i64>,
    pub device_used: Option<i64>,
    /// Whether its block is shown (a framework pool's, when the device has any): its pool's
    /// sums make the Allocated and Reserved curves; the others' make the driver's curve.
    pub shown: bool,
}

/// Stretches are no shorter than this many events (a shorter one costs more to hand to a
/// core than to read).
const MIN_STRETCH: usize = 1 << 16;

/// The curves of the events `0..n` (`events(r)`: those of `r`, in order, `None` for one
/// that is not the rank's): the Allocated/Reserved points (the App component's when no event
/// writes `process_used`: the driver's), and the device's samples.
pub(super) fn rank_curves<F, I>(n: usize, events: &F) -> (MemoryRecords, DeviceMemory)
where
    F: Fn(Range<usize>) -> I + Sync,
    I: Iterator<Item = Option<CurveEvent>>,
{
    let parts = (n / MIN_STRETCH).clamp(1, 4 * rayon::current_num_threads());
    let stretches: Vec<Range<usize>> = (0..parts)
        .map(|k| k * n / parts..(k + 1) * n / parts)
        .collect();
    curves_in_stretches(&stretches, events)
}

/// What a stretch of events leaves and makes.
#[derive(Default)]
struct Stretch {
    pools: PoolStates,
    /// The driver's bytes more live.
    driver: i128,
    /// How many Allocated/Reserved (or driver) points it makes.
    points: usize,
    /// The process's and the device's bytes through it.
    process: Held,
    device: Held,
}

/// A held series (the process's or the device's bytes, written on some events) through a
/// stretch: what the stretches after it and the one pass that keeps its points need.
#[derive(Default, Clone, Copy)]
struct Held {
    first: Option<i64>,
    last: Option<i64>,
    /// Values after the first that differ from the one before them.
    changes: usize,
    /// How many values.
    count: usize,
    /// Whether the last value repeats the one before it in the stretch.
    last_repeats: bool,
}

impl Held {
    fn see(&mut self, v: i64) {
        match self.last {
            Some(last) => {
                self.changes += usize::from(last != v);
                self.last_repeats = last == v;
            }
            None => self.first = Some(v),
        }
        self.last = Some(v);
        self.count += 1;
    }
}

/// Where a held series stands as a stretch starts, and which of the stretch's values it keeps.
#[derive(Default, Clone, Copy)]
struct Holding {
    /// The value before (none yet).
    prev: Option<i64>,
    /// The stretch's values not yet seen.
    left: usize,
    /// Whether the stretch's last value is the series' last and kept though it repeats.
    keep_last: bool,
}

impl Holding {
    /// Whether the next value makes a point.
    fn keeps(&mut self, v: i64) -> bool {
        self.left = self.left.saturating_sub(1);
        let keep = self.prev != Some(v) || (self.keep_last && self.left == 0);
        self.prev = Some(v);
        keep
    }
}

/// Each stretch's start for one held series, and how many points it keeps.
fn holdings(each: &[Held]) -> Vec<(Holding, usize)> {
    let mut prev = None;
    let mut out: Vec<(Holding, usize)> = each
        .iter()
        .map(|h| {
            let start = Holding {
                prev,
                left: h.count,
                keep_last: false,
            };
            let kept = h.changes + usize::from(h.first.is_some() && h.first != prev);
            prev = h.last.or(prev);
            (start, kept)
        })
        .collect();
    // The series' last value is kept even where it repeats.
    if let Some(k) = each.iter().rposition(|h| h.count > 0) {
        let h = &each[k];
        let repeats = if h.count >= 2 {
            h.last_repeats
        } else {
            h.first == out[k].0.prev
        };
        if repeats {
            out[k].0.keep_last = true;
            out[k].1 += 1;
        }
    }
    out
}

/// [`rank_curves`] of the events cut at `stretches` (in order, covering `0..n`).
fn curves_in_stretches<F, I>(
    stretches: &[Range<usize>],
    events: &F,
) -> (MemoryRecords, DeviceMemory)
where
    F: Fn(Range<usize>) -> I + Sync,
    I: Iterator<Item = Option<CurveEvent>>,
{
    let has_process = stretches
        .par_iter()
        .any(|r| events(r.clone()).any(|e| e.is_some_and(|e| e.process_used.is_some())));
    let each: Vec<Stretch> = stretches
        .par_iter()
        .map(|r| {
            let mut s = Stretch::default();
            for e in events(r.clone()).flatten() {
                if e.shown {
                    s.pools.apply(e.pool, e.signed, e.used, e.total);
                } else {
                    s.driver += i128::from(e.signed);
                }
                s.points += usize::from(e.shown || !has_process);
                if let Some(v) = e.process_used {
                    s.process.see(v);
                }
                if let Some(v) = e.device_used {
                    s.device.see(v);
                }
            }
            s
        })
        .collect();
    let process_held = holdings(&each.iter().map(|s| s.process).collect::<Vec<_>>());
    let device_held = holdings(&each.iter().map(|s| s.device).collect::<Vec<_>>());
    // What each stretch starts from: the pools' states and the driver's bytes before it.
    let mut starts = Vec::with_capacity(each.len());
    let (mut pools, mut driver) = (PoolStates::default(), 0i128);
    for s in &each {
        starts.push((pools.clone(), driver));
        pools.then(&s.pools);
        driver += s.driver;
    }
    // Each stretch's points and device samples.
    let counts: Vec<(usize, usize)> = each
        .iter()
        .zip(&process_held)
        .zip(&device_held)
        .map(|((s, (_, p)), (_, d))| (s.points + p, *d))
        .collect();
    let points = counts.iter().map(|c| c.0).sum();
    let samples = counts.iter().map(|c| c.1).sum();
    // Zeroed columns (fresh pages from the system: no pass to fill them), each stretch's
    // points written to its own slice of them.
    let mut component = vec![0u8; points];
    let mut time_ns = vec![0i64; points];
    let mut allocated = vec![0i64; points];
    let mut reserved = vec![0i64; points];
    let mut device = DeviceMemory {
        time_ns: vec![0; samples],
        bytes: vec![0; samples],
    };
    // (Big zeroed columns are untouched pages until written: marked for 2 MiB ones first.)
    huge_pages::advise(&component);
    huge_pages::advise(&time_ns);
    huge_pages::advise(&allocated);
    huge_pages::advise(&reserved);
    huge_pages::advise(&device.time_ns);
    huge_pages::advise(&device.bytes);
    let mut columns = Vec::with_capacity(each.len());
    {
        let (mut c, mut t, mut a, mut r) = (
            &mut component[..],
            &mut time_ns[..],
            &mut allocated[..],
            &mut reserved[..],
        );
        let (mut dt, mut db) = (&mut device.time_ns[..], &mut device.bytes[..]);
        for &(points, samples) in &counts {
            let (ch, ct) = std::mem::take(&mut c).split_at_mut(points);
            let (th, tt) = std::mem::take(&mut t).split_at_mut(points);
            let (ah, at) = std::mem::take(&mut a).split_at_mut(points);
            let (rh, rt) = std::mem::take(&mut r).split_at_mut(points);
            let (dth, dtt) = std::mem::take(&mut dt).split_at_mut(samples);
            let (dbh, dbt) = std::mem::take(&mut db).split_at_mut(samples);
            columns.push(((ch, th), (ah, rh), (dth, dbh)));
            (c, t, a, r, dt, db) = (ct, tt, at, rt, dtt, dbt);
        }
    }
    let held = process_held
        .iter()
        .zip(&device_held)
        .map(|(p, d)| (p.0, d.0));
    let starts: Vec<_> = starts.into_iter().zip(held).collect();
    stretches.par_iter().zip(starts).zip(columns).for_each(
        |((range, ((pools, driver), (mut process, mut device))), ((c, t), (a, r), (dt, db)))| {
            let mut totals = PoolTotals::after(pools);
            let mut driver = driver;
            let (mut p, mut d) = (0, 0);
            let mut point = |component: Component, ts: i64, alloc: i64, resv: i64| {
                (c[p], t[p], a[p], r[p]) = (component as u8, ts, alloc, resv);
                p += 1;
            };
            for e in events(range.clone()).flatten() {
                if e.shown {
                    let (alloc, resv) = totals.apply(e.pool, e.signed, e.used, e.total);
                    point(Component::PtaGe, e.ts, alloc, resv.unwrap_or(NULL));
                } else {
                    driver += i128::from(e.signed);
                    if !has_process {
                        point(Component::App, e.ts, NULL, clamp(driver));
                    }
                }
                if let Some(used) = e.process_used.filter(|&v| process.keeps(v)) {
                    point(Component::App, e.ts, NULL, used);
                }
                if let Some(bytes) = e.device_used.filter(|&v| device.keeps(v)) {
                    (dt[d], db[d]) = (e.ts, bytes);
                    d += 1;
                }
            }
        },
    );
    let records = MemoryRecords {
        component,
        time_ns,
        allocated,
        reserved,
        active: LazyColumn::filled(points),
        stream: LazyColumn::filled(points),
    };
    (records, device)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The curves made the plain way: one pass, one core.
    fn in_one_pass(events: &[Option<CurveEvent>]) -> (MemoryRecords, DeviceMemory) {
        let mut records = MemoryRecords::default();
        let mut device = DeviceMemory::default();
        let mut pools = PoolTotals::default();
        let mut driver = 0i128;
        let has_process = events.iter().flatten().any(|e| e.process_used.is_some());
        // A held value makes a point where it changes, and at its series' last event.
        let last_of = |f: fn(&CurveEvent) -> Option<i64>| {
            events
                .iter()
                .rposition(|e| e.as_ref().and_then(f).is_some())
        };
        let (last_process, last_device) = (last_of(|e| e.process_used), last_of(|e| e.device_used));
        let (mut process, mut dev) = (None, None);
        for (i, e) in events.iter().enumerate() {
            let Some(e) = e else { continue };
            if e.shown {
                let (alloc, resv) = pools.apply(e.pool, e.signed, e.used, e.total);
                records.push(Component::PtaGe, e.ts, alloc, resv.unwrap_or(NULL), NULL, 0);
            } else {
                driver += i128::from(e.signed);
                if !has_process {
                    records.push(Component::App, e.ts, NULL, clamp(driver), NULL, 0);
                }
            }
            if let Some(used) = e.process_used
                && (process.replace(used) != Some(used) || last_process == Some(i))
            {
                records.push(Component::App, e.ts, NULL, used, NULL, 0);
            }
            if let Some(bytes) = e.device_used
                && (dev.replace(bytes) != Some(bytes) || last_device == Some(i))
            {
                device.time_ns.push(e.ts);
                device.bytes.push(bytes);
            }
        }
        (records, device)
    }

    fn event() -> impl Strategy<Value = Option<CurveEvent>> {
        proptest::option::weighted(
            0.8,
            (
                0i64..1000,
                -(1i64 << 56)..(1 << 56),
                0u32..3,
                proptest::option::of(0i64..10_000),
                proptest::option::of(0i64..10_000),
                // (Few values: held series repeat, as a dump's do.)
                proptest::option::weighted(0.2, 0i64..3),
                proptest::option::of(0i64..3),
                proptest::bool::ANY,
            )
                .prop_map(
                    |(ts, signed, pool, used, total, process_used, device_used, shown)| {
                        CurveEvent {
                            ts,
                            signed,
                            pool,
                            used,
                            total,
                            process_used,
                            device_used,
                            shown,
                        }
                    },
                ),
        )
    }

    proptest! {
        /// Cut anywhere into stretches, the events make the curves one pass makes.
        #[test]
        fn stretches_make_the_curves_of_one_pass(
            events in proptest::collection::vec(event(), 0..300),
            cuts in proptest::collection::vec(0usize..300, 0..8),
        ) {
            let n = events.len();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(n)).collect();
            cuts.extend([0, n]);
            cuts.sort_unstable();
            let stretches: Vec<Range<usize>> = cuts.windows(2).map(|w| w[0]..w[1]).collect();
            let (records, device) = curves_in_stretches(&stretches, &|r: Range<usize>| events[r].iter().copied());
            let (want_records, want_device) = in_one_pass(&events);
            prop_assert_eq!(&records, &want_records);
            prop_assert_eq!(&device, &want_device);
            let (records, device) = rank_curves(n, &|r: Range<usize>| events[r].iter().copied());
            prop_assert_eq!(records, want_records);
            prop_assert_eq!(device, want_device);
        }
    }

    /// Enough events for several stretches of [`MIN_STRETCH`]: the same as one pass.
    #[test]
    fn a_big_rank_cut_by_the_cores_makes_the_curves_of_one_pass() {
        let n = 5 * MIN_STRETCH + 17;
        let events: Vec<Option<CurveEvent>> = (0..n)
            .map(|i| {
                let i64_of = |v: usize| i64::try_from(v).unwrap_or(i64::MAX);
                (i % 7 != 3).then(|| CurveEvent {
                    ts: i64_of(i),
                    signed: if i % 3 == 0 {
                        -i64_of(i % 1000)
                    } else {
                        i64_of(i % 997)
                    },
                    pool: (i % 5) as u32,
                    used: (i % 11 == 0).then(|| i64_of(i)),
                    total: (i % 13 == 0).then(|| i64_of(2 * i)),
                    process_used: None,
                    // Held for ~4,000 events at a time, across the stretches' ends.
                    device_used: (i % 2 == 0).then(|| i64_of(3 * (i / 4000))),
                    shown: i % 4 != 0,
                })
            })
            .collect();
        let (records, device) = rank_curves(n, &|r: Range<usize>| events[r].iter().copied());
        let (want_records, want_device) = in_one_pass(&events);
        assert!(records.len() > n / 2);
        assert_eq!(records, want_records);
        assert_eq!(device, want_device);
        // A change every 4,000 events, and the last value again at the end.
        assert_eq!(device.len(), (n - 1) / 4000 + 2);
    }
}
