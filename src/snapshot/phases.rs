//! The user's annotations (`external_annotations`: `record_function` ranges such as
//! `ProfilerStep#3`, `forward`, `backward`, `optimizer`) as phases of a device's trace: which
//! events each spans, how deep it is nested, the allocated memory before, at its most during and
//! after it; and the live blocks at an event by the phase that allocated them — the snapshot's
//! answer to "what kind of memory is this" (blocks from `forward` alive at the peak are
//! activations, from `optimizer` optimizer state).
//!
//! An event is in a phase when its `time_us` lies in [start, end] (an annotation without an
//! `END` runs to the trace's end); its phase is the innermost (the deepest; on a tie, the one
//! that started last). NPU snapshots' events have no time: their phases span no event.

use std::collections::BTreeMap;

use super::model::{AllocatorSnapshot, Annotation};
use super::summary::{allocated_curve, live_blocks_with_alloc};

/// One annotation on one device's trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Phase {
    /// Its name (shared with its annotation).
    pub name: std::sync::Arc<str>,
    /// When it started, µs.
    pub start_us: i64,
    /// When it ended, µs (None: no `END`, it runs to the trace's end).
    pub end_us: Option<i64>,
    /// How many other annotations of the device contain it (0: outermost).
    pub depth: usize,
    /// The first and last event in it (None: no event).
    pub events: Option<(usize, usize)>,
    /// Allocated just before its first event (or at its start, with no event), bytes.
    pub allocated_before: i64,
    /// The most allocated during it, counting the value held as it starts, bytes.
    pub peak_allocated: i64,
    /// The first of its events after which that most is allocated (None: the value held as
    /// it starts is the most, or it has no event).
    pub peak_event: Option<usize>,
    /// Allocated just after its last event, bytes.
    pub allocated_after: i64,
}

/// Where a live block was allocated.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AllocatedIn {
    /// In this phase (its innermost).
    Phase(std::sync::Arc<str>),
    /// In the trace, outside every phase.
    NoPhase,
    /// Before the trace (no `alloc` event for it).
    BeforeTrace,
}

/// The live bytes and blocks allocated in one place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PhaseHolding {
    /// Where they were allocated.
    pub allocated_in: AllocatedIn,
    /// Σ size.
    pub bytes: i64,
    /// How many.
    pub blocks: u64,
}

/// The annotations of `device` (in the order they started), with their nesting depth.
fn annotations(s: &AllocatorSnapshot, device: i64) -> Vec<&Annotation> {
    s.annotations
        .iter()
        .filter(|a| a.device == device)
        .collect()
}

/// The phases of `device`, in the order they started.
pub fn phases(s: &AllocatorSnapshot, device: i64) -> Vec<Phase> {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    let (start, after) = allocated_curve(s, device);
    let before = |k: usize| if k == 0 { start } else { after[k - 1] };
    let ann = annotations(s, device);
    let span = |a: &Annotation| (a.start_us, a.end_us.unwrap_or(i64::MAX));
    // The events' times, for a binary search (the trace's clock only rises; an event without
    // a time is treated as earlier than any).
    let times: Vec<i64> = trace
        .iter()
        .map(|e| e.time_us.unwrap_or(i64::MIN))
        .collect();
    let timed = trace.iter().all(|e| e.time_us.is_some()) && !trace.is_empty();
    let depths = nesting_depths(&ann.iter().map(|a| span(a)).collect::<Vec<_>>());
    // The most allocated in a phase's events, by a range query: a scan per phase was
    // quadratic (50,000 nested annotations over 100,000 events).
    let most = RangeMax::new(&after);
    ann.iter()
        .enumerate()
        .map(|(i, a)| {
            let (lo, hi) = span(a);
            let depth = depths[i];
            let first = times.partition_point(|&t| t < lo);
            let end = times.partition_point(|&t| t <= hi);
            let events = (timed && end > first).then(|| (first, end - 1));
            let (allocated_before, peak_allocated, peak_event, allocated_after) = match events {
                Some((f, l)) => {
                    let held = before(f);
                    let (peak, at) = match most.first_max(f, l) {
                        Some((v, k)) if v > held => (v, Some(k)),
                        _ => (held, None),
                    };
                    (held, peak, at, after[l])
                }
                None => {
                    let held = if timed { before(first) } else { start };
                    (held, held, None, held)
                }
            };
            Phase {
                name: a.name.clone(),
                start_us: a.start_us,
                end_us: a.end_us,
                depth,
                events,
                allocated_before,
                peak_allocated,
                peak_event,
                allocated_after,
            }
        })
        .collect()
}

/// The largest value of a range of a list and the first index holding it, in O(log n) a query
/// (a segment tree over the values, built once).
struct RangeMax {
    /// Leaves at `n..2n`, each inner node the best of its two children.
    tree: Vec<(i64, std::cmp::Reverse<usize>)>,
    n: usize,
}

impl RangeMax {
    fn new(values: &[i64]) -> RangeMax {
        let n = values.len();
        let mut tree = vec![(i64::MIN, std::cmp::Reverse(usize::MAX)); 2 * n];
        for (i, &v) in values.iter().enumerate() {
            tree[n + i] = (v, std::cmp::Reverse(i));
        }
        for i in (1..n).rev() {
            tree[i] = tree[2 * i].max(tree[2 * i + 1]);
        }
        RangeMax { tree, n }
    }

    /// The largest value in `lo..=hi` and the first index holding it; None for an empty range.
    fn first_max(&self, lo: usize, hi: usize) -> Option<(i64, usize)> {
        if lo > hi || hi >= self.n {
            return None;
        }
        let (mut l, mut r) = (lo + self.n, hi + self.n + 1);
        let mut best = (i64::MIN, std::cmp::Reverse(usize::MAX));
        while l < r {
            if l & 1 == 1 {
                best = best.max(self.tree[l]);
                l += 1;
            }
            if r & 1 == 1 {
                r -= 1;
                best = best.max(self.tree[r]);
            }
            l /= 2;
            r /= 2;
        }
        Some((best.0, best.1.0))
    }
}

/// How many spans enclose each span (a span identical to an earlier one counts it), by one
/// sweep over the spans sorted by start (a stack of the enclosing ends): linear after the sort,
/// where comparing every pair was quadratic in the annotations (a trace annotating every op has
/// hundreds of thousands). Exact for nested spans, as `record_function` makes them on a thread;
/// for spans that cross, a span that ends inside a later one is not counted for the spans after
/// that one.
pub fn nesting_depths(spans: &[(i64, i64)]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..spans.len()).collect();
    order.sort_by_key(|&i| (spans[i].0, std::cmp::Reverse(spans[i].1), i));
    let mut depths = vec![0; spans.len()];
    let mut open: Vec<i64> = Vec::new();
    for i in order {
        let (_, end) = spans[i];
        while open.last().is_some_and(|&e| e < end) {
            open.pop();
        }
        depths[i] = open.len();
        open.push(end);
    }
    depths
}

/// The innermost phase of each event of `device` (an index into `phases`), None outside all.
pub fn phase_of_events(s: &AllocatorSnapshot, device: i64, phases: &[Phase]) -> Vec<Option<usize>> {
    let len = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(0, Vec::len);
    let mut of: Vec<Option<usize>> = vec![None; len];
    // The deepest (then the latest) phase holding an event wins: phases in that order, each
    // taking only the events no phase before it took. `next[k]` leads past taken events
    // (path-halved), so each event is taken once: linear, where painting every phase's whole
    // range over the shallower ones was quadratic in deeply nested phases.
    let mut order: Vec<usize> = (0..phases.len()).collect();
    order.sort_by_key(|&i| std::cmp::Reverse((phases[i].depth, phases[i].start_us, i)));
    let mut next: Vec<usize> = (0..=len).collect();
    fn untaken(next: &mut [usize], mut k: usize) -> usize {
        while next[k] != k {
            next[k] = next[next[k]];
            k = next[k];
        }
        k
    }
    for i in order {
        let Some((f, l)) = phases[i].events else {
            continue;
        };
        if f >= len {
            continue;
        }
        let l = l.min(len - 1);
        let mut k = untaken(&mut next, f);
        while k <= l {
            of[k] = Some(i);
            next[k] = k + 1;
            k = untaken(&mut next, k + 1);
        }
    }
    of
}

/// The live blocks of `device` just after event `at` (None: at the end), by where they were
/// allocated, heaviest first.
pub fn live_by_phase(s: &AllocatorSnapshot, device: i64, at: Option<usize>) -> Vec<PhaseHolding> {
    let phases = phases(s, device);
    let of = phase_of_events(s, device, &phases);
    live_by_phase_of(s, device, at, (&phases, &of))
}

/// [`live_by_phase`] with the device's [`phases`] and [`phase_of_events`] already computed (the
/// view keeps them per device, and asks again at every event picked).
pub fn live_by_phase_of(
    s: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
    (phases, of): (&[Phase], &[Option<usize>]),
) -> Vec<PhaseHolding> {
    // By phase index first (a name is copied once per phase, not once per block), then by
    // name: phases of one name are one place.
    let mut by_index: BTreeMap<Option<Option<usize>>, (i64, u64)> = BTreeMap::new();
    for (_, size, alloc) in live_blocks_with_alloc(s, device, at) {
        let key = alloc.map(|k| of.get(k).copied().flatten());
        let slot = by_index.entry(key).or_default();
        slot.0 = slot.0.saturating_add(size);
        slot.1 += 1;
    }
    let mut by: BTreeMap<AllocatedIn, (i64, u64)> = BTreeMap::new();
    for (key, (bytes, blocks)) in by_index {
        let place = match key {
            None => AllocatedIn::BeforeTrace,
            Some(None) => AllocatedIn::NoPhase,
            Some(Some(i)) => AllocatedIn::Phase(phases[i].name.clone()),
        };
        let slot = by.entry(place).or_default();
        slot.0 = slot.0.saturating_add(bytes);
        slot.1 += blocks;
    }
    let mut v: Vec<PhaseHolding> = by
        .into_iter()
        .map(|(allocated_in, (bytes, blocks))| PhaseHolding {
            allocated_in,
            bytes,
            blocks,
        })
        .collect();
    v.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(a.allocated_in.cmp(&b.allocated_in))
    });
    v
}

/// `snapshot --json`'s `phases` of every device and `live_by_phase` of `device` at `at`.
pub fn phases_json(s: &AllocatorSnapshot, device: i64, at: Option<usize>) -> serde_json::Value {
    let phases: Vec<serde_json::Value> = s
        .devices()
        .into_iter()
        .flat_map(|d| {
            phases(s, d).into_iter().map(move |p| {
                serde_json::json!({
                    "device": d,
                    "name": &*p.name,
                    "start_us": p.start_us,
                    "end_us": p.end_us,
                    "depth": p.depth,
                    "first_event": p.events.map(|e| e.0),
                    "last_event": p.events.map(|e| e.1),
                    "allocated_before_bytes": p.allocated_before,
                    "peak_allocated_bytes": p.peak_allocated,
                    "peak_event": p.peak_event,
                    "allocated_after_bytes": p.allocated_after,
                })
            })
        })
        .collect();
    let holding: Vec<serde_json::Value> = live_by_phase(s, device, at)
        .into_iter()
        .map(|h| {
            let (phase, before) = match h.allocated_in {
                AllocatedIn::Phase(n) => (Some(n.to_string()), false),
                AllocatedIn::NoPhase => (None, false),
                AllocatedIn::BeforeTrace => (None, true),
            };
            serde_json::json!({
                "phase": phase,
                "before_trace": before,
                "bytes": h.bytes,
                "blocks": h.blocks,
            })
        })
        .collect();
    serde_json::json!({
        "phases": phases,
        "live_by_phase": {"device": device, "at_event": at, "groups": holding},
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Action, Event};

    fn at(action: Action, addr: u64, size: i64, t: i64) -> Event {
        Event {
            time_us: Some(t),
            ..Event::bare(action, addr, size)
        }
    }

    fn ann(name: &str, start: i64, end: Option<i64>) -> Annotation {
        Annotation {
            name: name.into(),
            device: 0,
            start_us: start,
            end_us: end,
        }
    }

    #[test]
    fn events_take_their_innermost_phase_and_live_blocks_their_allocating_phase() {
        // step [0, 100] holds forward [10, 40] and backward [50, 90].
        let s = AllocatorSnapshot {
            traces: vec![vec![
                at(Action::Alloc, 0, 10, 5),    // 0: step
                at(Action::Alloc, 100, 30, 20), // 1: forward
                at(Action::Alloc, 200, 20, 30), // 2: forward, freed in backward
                at(Action::FreeRequested, 200, 20, 60),
                at(Action::FreeCompleted, 200, 20, 61), // 4: backward
                at(Action::Alloc, 300, 5, 70),          // 5: backward
                at(Action::Alloc, 400, 7, 200),         // 6: outside
            ]],
            annotations: vec![
                ann("step", 0, Some(100)),
                ann("forward", 10, Some(40)),
                ann("backward", 50, Some(90)),
            ],
            ..AllocatorSnapshot::default()
        };
        let p = phases(&s, 0);
        assert_eq!(
            p.iter().map(|p| (p.depth, p.events)).collect::<Vec<_>>(),
            vec![(0, Some((0, 5))), (1, Some((1, 2))), (1, Some((3, 5)))]
        );
        // Nothing is held at the end (no segments): the trace starts at −(10+30+5+7) + ... the
        // running total is relative; forward adds 50 on top of what the step began with.
        assert_eq!(p[1].peak_allocated - p[1].allocated_before, 50);
        assert_eq!(p[2].allocated_after - p[2].allocated_before, -15);
        let of = phase_of_events(&s, 0, &p);
        assert_eq!(
            of,
            vec![Some(0), Some(1), Some(1), Some(2), Some(2), Some(2), None]
        );
    }

    #[test]
    fn the_sweep_counts_enclosing_spans_as_comparing_every_pair_does() {
        // Nested spans (steps holding phases holding ops), repeats and identical spans.
        let mut spans = Vec::new();
        for step in 0..20i64 {
            let s0 = step * 1000;
            spans.push((s0, s0 + 900));
            for phase in 0..3 {
                let p0 = s0 + 10 + phase * 300;
                spans.push((p0, p0 + 250));
                spans.push((p0, p0 + 250));
                for op in 0..10 {
                    spans.push((p0 + op * 20, p0 + op * 20 + 15));
                }
            }
        }
        spans.push((-5, i64::MAX));
        let brute: Vec<usize> = (0..spans.len())
            .map(|i| {
                let (lo, hi) = spans[i];
                (0..spans.len())
                    .filter(|&j| {
                        let (blo, bhi) = spans[j];
                        j != i && blo <= lo && bhi >= hi && ((blo, bhi) != (lo, hi) || j < i)
                    })
                    .count()
            })
            .collect();
        assert_eq!(nesting_depths(&spans), brute);
    }
}
