//! A dump's events in time order (file order on ties), made from the parts the file was read
//! in without moving the events again.
//!
//! Each part is sorted on its own ([`sort_by_time`]), on every core. A dump's rows are about
//! in time order, so the parts overlap little: the merge finds the *runs* of the merged order
//! on the keys alone (each from the part whose head is first, up to the next head of any
//! other part) and [`Events`] keeps the parts and their runs. Joined into one list, the events
//! of a 1 GB dump were all moved once more (0.3 s). A dump whose parts interleave at many
//! places (more than [`MAX_RUNS`] runs) is joined after all: looking an event up is a search
//! through the runs.

use std::ops::{Index, Range};

/// What a list in time order holds: its key is (time, file order), unique in a dump.
pub(super) trait Timed {
    /// (time, file order).
    fn key(&self) -> (i64, u32);
}

/// More runs than this and the parts are joined into one list.
const MAX_RUNS: usize = 4096;

/// Events in time order, as runs of the parts they were read in.
#[derive(Debug, Clone)]
pub(super) struct Events<T> {
    parts: Vec<Vec<T>>,
    /// The runs in order: (part, its events).
    runs: Vec<(usize, Range<usize>)>,
    /// Where each run ends in the whole order.
    ends: Vec<usize>,
    /// For each page of [`PAGE`] events of the order, the run that holds its first: a look-up
    /// starts there.
    pages: Vec<u32>,
}

/// How many events of the order [`Events::pages`] gives one starting run (a few in tests, so
/// that their orders of tens of events span many pages).
const PAGE: usize = if cfg!(test) { 4 } else { 1 << 12 };

impl<T> Default for Events<T> {
    fn default() -> Self {
        Events {
            parts: Vec::new(),
            runs: Vec::new(),
            ends: Vec::new(),
            pages: Vec::new(),
        }
    }
}

impl<T> Events<T> {
    /// Events already in order.
    pub(super) fn from_list(events: Vec<T>) -> Self {
        let n = events.len();
        Self::from_runs(vec![events], vec![(0, 0..n)])
    }

    /// `parts` in the order of `runs` (each a part and a range of its events).
    fn from_runs(parts: Vec<Vec<T>>, mut runs: Vec<(usize, Range<usize>)>) -> Self {
        runs.retain(|(_, r)| !r.is_empty());
        let ends = runs
            .iter()
            .scan(0, |end, (_, r)| {
                *end += r.len();
                Some(*end)
            })
            .collect::<Vec<usize>>();
        let len = ends.last().copied().unwrap_or(0);
        let mut run = 0;
        let pages = (0..len)
            .step_by(PAGE)
            .map(|first| {
                while ends.get(run).is_some_and(|&end| end <= first) {
                    run += 1;
                }
                run as u32
            })
            .collect();
        Events {
            parts,
            runs,
            ends,
            pages,
        }
    }

    /// How many events.
    pub(super) fn len(&self) -> usize {
        self.ends.last().copied().unwrap_or(0)
    }

    /// The events in order.
    pub(super) fn iter(&self) -> impl Iterator<Item = &T> + Clone {
        self.runs
            .iter()
            .flat_map(|(p, r)| self.parts[*p][r.clone()].iter())
    }

    /// The events `r` of the order (those there are).
    pub(super) fn range(&self, r: Range<usize>) -> impl Iterator<Item = &T> {
        // The run that holds the first, and where that run starts in the order.
        let run = self.ends.partition_point(|&end| end <= r.start);
        let before = run.checked_sub(1).map_or(0, |k| self.ends[k]);
        let skip = r.start.saturating_sub(before);
        self.runs
            .get(run..)
            .unwrap_or_default()
            .iter()
            .enumerate()
            .flat_map(move |(k, (p, run))| {
                let from = if k == 0 { run.start + skip } else { run.start };
                self.parts[*p].get(from..run.end).unwrap_or_default().iter()
            })
            .take(r.len())
    }

    /// The `i`th event, if there are that many.
    pub(super) fn get(&self, i: usize) -> Option<&T> {
        let mut run = *self.pages.get(i / PAGE)? as usize;
        while *self.ends.get(run)? <= i {
            run += 1;
        }
        let (p, r) = self.runs.get(run)?;
        let before = run.checked_sub(1).map_or(0, |k| self.ends[k]);
        self.parts[*p].get(r.start + (i - before))
    }
}

impl<T> Index<usize> for Events<T> {
    type Output = T;

    fn index(&self, i: usize) -> &T {
        match self.get(i) {
            Some(e) => e,
            None => panic!("event {i} of {}", self.len()),
        }
    }
}

/// Parts, each in time order, as one order: the runs found on their keys.
pub(super) fn in_time_order<T: Timed>(mut parts: Vec<Vec<T>>) -> Events<T> {
    parts.retain(|p| !p.is_empty());
    let runs = runs_of(&parts);
    if runs.len() <= MAX_RUNS.max(parts.len()) {
        Events::from_runs(parts, runs)
    } else {
        // Interleaved at many places.
        joined(parts, runs)
    }
}

/// `parts` joined into one list in the order of `runs` (all of their events, each part's in
/// order), each part freed once its last run is taken.
fn joined<T>(parts: Vec<Vec<T>>, runs: Vec<(usize, Range<usize>)>) -> Events<T> {
    let mut left: Vec<usize> = parts.iter().map(Vec::len).collect();
    let mut parts: Vec<std::vec::IntoIter<T>> = parts.into_iter().map(Vec::into_iter).collect();
    let mut list = Vec::with_capacity(left.iter().sum());
    for (p, r) in runs {
        list.extend(parts[p].by_ref().take(r.len()));
        left[p] -= r.len();
        if left[p] == 0 {
            parts[p] = Vec::new().into_iter();
        }
    }
    Events::from_list(list)
}

/// The runs of the merged order of `parts` (each in order): from the part whose head is first
/// (its head, whatever the others', so that equal keys cannot stall the merge), up to the
/// first head of any other part.
fn runs_of<T: Timed>(parts: &[Vec<T>]) -> Vec<(usize, Range<usize>)> {
    let mut next = vec![0usize; parts.len()];
    let mut runs = Vec::new();
    loop {
        let mut first: Option<(usize, (i64, u32))> = None;
        let mut bound: Option<(i64, u32)> = None;
        for (k, part) in parts.iter().enumerate() {
            let Some(head) = part.get(next[k]).map(T::key) else {
                continue;
            };
            match first {
                Some((_, f)) if f <= head => bound = Some(bound.map_or(head, |b| b.min(head))),
                _ => {
                    if let Some((_, f)) = first {
                        bound = Some(bound.map_or(f, |b| b.min(f)));
                    }
                    first = Some((k, head));
                }
            }
        }
        let Some((k, _)) = first else {
            return runs;
        };
        let (part, from) = (&parts[k], next[k]);
        let to = match bound {
            Some(bound) => from + 1 + part[from + 1..].partition_point(|e| e.key() < bound),
            None => part.len(),
        };
        runs.push((k, from..to));
        next[k] = to;
    }
}

/// Sorts `events` by time, file order on ties. An event is up to 80 bytes, and a sort moves
/// each many times: the keys are sorted instead, and each event is then moved once, along
/// the cycles of the order found. A dump's rows are about in time order (msMemScope writes
/// a few out of place): the keys are sorted by insertion while that moves at most
/// [`MOVES_PER_KEY`] keys a key on average, and by a sort on every core past that.
pub(super) fn sort_by_time<T: Timed>(events: &mut [T]) {
    if events.is_sorted_by_key(T::key) {
        return;
    }
    if u32::try_from(events.len()).is_err() {
        // (No part of a dump that fits in memory has this many.)
        events.sort_by_key(T::key);
        return;
    }
    // (time, file order and index): the index in the low half, which never decides, as
    // (time, file order) is unique.
    let mut keys: Vec<(i64, u64)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let (ts, order) = e.key();
            (ts, (u64::from(order) << 32) | i as u64)
        })
        .collect();
    let budget = keys.len().saturating_mul(MOVES_PER_KEY);
    if !insertion_sort_within(&mut keys, budget) {
        // (time, file order) is unique: an unstable sort gives the stable order.
        rayon::slice::ParallelSliceMut::par_sort_unstable(&mut keys[..]);
    }
    // Position k takes the event at `from(k)`.
    let from = |k: usize| (keys[k].1 & u64::from(u32::MAX)) as usize;
    let mut placed = vec![false; events.len()];
    for start in 0..events.len() {
        if placed[start] {
            continue;
        }
        // Along the cycle: each swap brings a position its event and carries the cycle's
        // first event on, which the cycle's last position takes.
        let mut at = start;
        loop {
            placed[at] = true;
            let next = from(at);
            if next == start {
                break;
            }
            events.swap(at, next);
            at = next;
        }
    }
}

/// How many places a key may move, on average, in [`sort_by_time`]'s insertion sort (a
/// generated dump written sixteen rows at a time reversed moves them 7.5).
const MOVES_PER_KEY: usize = 16;

/// Sorts `keys` by insertion, unless that moves more than `budget` keys in all: then it stops
/// (false), leaving `keys` in some order of the same keys.
fn insertion_sort_within<K: Ord + Copy>(keys: &mut [K], budget: usize) -> bool {
    let mut moved = 0usize;
    for i in 1..keys.len() {
        let key = keys[i];
        let mut to = i;
        while to > 0 && keys[to - 1] > key {
            to -= 1;
        }
        if to < i {
            moved = moved.saturating_add(i - to);
            if moved > budget {
                return false;
            }
            keys.copy_within(to..i, to + 1);
            keys[to] = key;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::super::Event;
    use super::super::test_support::event;
    use super::*;
    use proptest::prelude::*;

    /// The parts of `events` cut at `cuts`, each sorted on its own.
    fn sorted_parts(events: &[Event], cuts: Vec<usize>) -> Vec<Vec<Event>> {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(events.len())).collect();
        cuts.sort_unstable();
        let mut parts = Vec::new();
        let mut from = 0;
        for c in cuts.into_iter().chain([events.len()]) {
            let mut part = events[from..c].to_vec();
            sort_by_time(&mut part);
            parts.push(part);
            from = c;
        }
        parts
    }

    proptest! {
        /// Events sorted along the cycles of their keys' order come out as a stable sort by
        /// time leaves them.
        #[test]
        fn sorting_by_the_keys_gives_the_stable_sort_by_time(
            times in proptest::collection::vec(0i64..20, 0..80),
            about_in_order in any::<bool>(),
        ) {
            let mut times = times;
            if about_in_order {
                // As a dump's rows are (sorted by insertion, not by the sort on every core).
                times.sort_unstable();
                times.chunks_mut(6).for_each(<[i64]>::reverse);
            }
            let events: Vec<Event> = times
                .iter()
                .enumerate()
                .map(|(i, &ts)| event(ts, i))
                .collect();
            let mut expected = events.clone();
            expected.sort_by_key(|e| e.ts);
            let mut got = events;
            sort_by_time(&mut got);
            let ids = |v: &[Event]| v.iter().map(|e| e.pid).collect::<Vec<_>>();
            prop_assert_eq!(ids(&got), ids(&expected));
        }

        /// Parts sorted on their own, in time order, are the events sorted whole, whatever
        /// the cuts and however the parts overlap in time: walked in order and looked up one
        /// by one, and in ranges (also when there are too many runs to keep, with `joined`).
        #[test]
        fn parts_in_time_order_are_the_events_sorted(
            times in proptest::collection::vec(0i64..30, 0..120),
            cuts in proptest::collection::vec(0usize..120, 0..6),
            shuffled in any::<bool>(),
        ) {
            let mut times = times;
            if !shuffled {
                // About in order, as a dump's rows are.
                times.sort_unstable();
                times.chunks_mut(4).for_each(<[i64]>::reverse);
            }
            let events: Vec<Event> = times.iter().enumerate().map(|(i, &ts)| event(ts, i)).collect();
            let parts = sorted_parts(&events, cuts);
            let mut expected = events;
            expected.sort_by_key(|e| (e.ts, e.order));
            let expected: Vec<i64> = expected.iter().map(|e| e.pid).collect();
            let ordered = in_time_order(parts.clone());
            prop_assert_eq!(ordered.len(), expected.len());
            prop_assert_eq!(ordered.iter().map(|e| e.pid).collect::<Vec<_>>(), expected.clone());
            let looked_up: Vec<i64> = (0..ordered.len()).map(|i| ordered[i].pid).collect();
            prop_assert_eq!(&looked_up, &expected);
            prop_assert!(ordered.get(ordered.len()).is_none());
            // Joined, as too many runs are.
            let runs = runs_of(&parts);
            let list = joined(parts, runs);
            prop_assert_eq!(list.runs.len(), usize::from(list.len() > 0));
            let walked: Vec<i64> = list.iter().map(|e| e.pid).collect();
            prop_assert_eq!(&walked, &expected);
            let looked_up: Vec<i64> = (0..list.len()).map(|i| list[i].pid).collect();
            prop_assert_eq!(&looked_up, &expected);
            // Any range of the order, also one past its end, kept as runs or joined.
            for events in [&ordered, &list] {
                for (a, b) in [(0, 0), (3, 40), (17, 18), (50, 200), (0, 1000), (130, 140)] {
                    let a = a.min(expected.len());
                    let b = b.max(a);
                    let got: Vec<i64> = events.range(a..b).map(|e| e.pid).collect();
                    prop_assert_eq!(&got[..], &expected[a..b.min(expected.len())]);
                }
            }
        }
    }

    proptest! {
        /// The insertion sort sorts the keys when its budget allows, and else leaves the same
        /// keys (in some order): never a key lost or made.
        #[test]
        fn the_insertion_sort_sorts_within_its_budget_and_loses_nothing(
            keys in proptest::collection::vec(0u8..40, 0..100),
            about_in_order in any::<bool>(),
            budget in 0usize..2000,
        ) {
            let mut keys = keys;
            if about_in_order {
                keys.sort_unstable();
                keys.chunks_mut(5).for_each(<[u8]>::reverse);
            }
            let mut sorted = keys.clone();
            sorted.sort_unstable();
            // The moves a full insertion sort makes: the pairs out of order.
            let inversions: usize = (0..keys.len())
                .map(|i| keys[..i].iter().filter(|&&k| k > keys[i]).count())
                .sum();
            // A budget of any size, and the two at the edge: just enough, one short.
            for budget in [budget, inversions, inversions.saturating_sub(1)] {
                let mut got = keys.clone();
                let done = insertion_sort_within(&mut got, budget);
                prop_assert_eq!(done, inversions <= budget);
                if done {
                    prop_assert_eq!(&got, &sorted);
                }
                got.sort_unstable();
                prop_assert_eq!(&got, &sorted);
            }
        }
    }

    /// Parts that interleave at every event are joined into one list, in order.
    #[test]
    fn parts_interleaved_everywhere_are_joined() {
        let n = 2 * MAX_RUNS + 10;
        let events: Vec<Event> = (0..n).map(|i| event(i as i64, i)).collect();
        let (even, odd): (Vec<Event>, Vec<Event>) = events.into_iter().partition(|e| e.ts % 2 == 0);
        let ordered = in_time_order(vec![even, odd]);
        assert_eq!(ordered.runs.len(), 1);
        let times: Vec<i64> = ordered.iter().map(|e| e.ts).collect();
        assert_eq!(times, (0..n as i64).collect::<Vec<_>>());
        assert_eq!(ordered[n - 1].ts, n as i64 - 1);
    }
}
