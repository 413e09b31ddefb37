//! Private memory pools (`segment_pool_id` ≠ (0, 0): a CUDA graph's pool, a `MemPool`) over a
//! device's trace: what each reserved and held after every event, the envelope the app draws
//! over the active-memory chart. Memory in a private pool serves only that graph or pool, so
//! it is the first thing to look at when reserved memory is far above what the model holds.
//!
//! Events carry no pool in PyTorch ≤ 2.11: an event belongs to a pool when its address lies
//! in one of that pool's segments at the snapshot's end (a segment freed earlier cannot be
//! placed, and counts in no private pool).

use std::collections::BTreeMap;

use super::model::{Action, AllocatorSnapshot};
use super::segments::SegmentsAtEnd;

/// One private pool of a device, over its trace.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PoolTrack {
    /// `segment_pool_id`.
    pub pool: (i64, i64),
    /// Its segments at the end.
    pub segments: usize,
    /// Their bytes at the end.
    pub reserved_bytes: i64,
    /// Bytes of its `active_allocated` blocks at the end.
    pub allocated_bytes: i64,
    /// The most it reserved at once over the trace.
    pub peak_reserved_bytes: i64,
    /// The most it held at once over the trace.
    pub peak_allocated_bytes: i64,
    /// The first event that reached [`PoolTrack::peak_allocated_bytes`] (None: before the
    /// trace).
    pub peak_event: Option<usize>,
    /// Reserved and held before the first event.
    #[serde(skip)]
    pub start: (i64, i64),
    /// (event, reserved, held) after each event of the pool, in trace order: the steps of the
    /// envelope (the values hold until the next step).
    #[serde(skip)]
    pub steps: Vec<(usize, i64, i64)>,
}

/// The private pools of `device`, by pool id.
pub fn private_pools(s: &AllocatorSnapshot, device: i64) -> Vec<PoolTrack> {
    let at_end = SegmentsAtEnd::of(s, device);
    let mut pools: BTreeMap<(i64, i64), PoolTrack> = BTreeMap::new();
    for g in s
        .segments
        .iter()
        .filter(|g| g.device == device && g.pool_id != (0, 0))
    {
        let p = pools.entry(g.pool_id).or_insert_with(|| PoolTrack {
            pool: g.pool_id,
            segments: 0,
            reserved_bytes: 0,
            allocated_bytes: 0,
            peak_reserved_bytes: 0,
            peak_allocated_bytes: 0,
            peak_event: None,
            start: (0, 0),
            steps: Vec::new(),
        });
        p.segments += 1;
        p.reserved_bytes = p.reserved_bytes.saturating_add(g.total_size);
        let held = g
            .blocks
            .iter()
            .filter(|b| b.state == "active_allocated")
            .fold(0i64, |a, b| a.saturating_add(b.size));
        p.allocated_bytes = p.allocated_bytes.saturating_add(held);
    }
    if pools.is_empty() {
        return Vec::new();
    }
    let trace = s.trace(device);
    // Each event's pool and its (reserved, held) change.
    let changes: Vec<(usize, (i64, i64), i64, i64)> = trace
        .iter()
        .enumerate()
        .filter_map(|(k, e)| {
            let pool = at_end.containing(e.addr)?.pool_id;
            if pool == (0, 0) {
                return None;
            }
            let (dr, dh) = match e.action {
                Action::SegmentAlloc | Action::SegmentMap => (e.size, 0),
                Action::SegmentFree | Action::SegmentUnmap => (e.size.saturating_neg(), 0),
                Action::Alloc => (0, e.size),
                Action::FreeCompleted => (0, e.size.saturating_neg()),
                _ => return None,
            };
            Some((k, pool, dr, dh))
        })
        .collect();
    for p in pools.values_mut() {
        let mine = || changes.iter().filter(|c| c.1 == p.pool);
        let (mut r, mut h) = mine().fold((p.reserved_bytes, p.allocated_bytes), |(r, h), c| {
            (r.saturating_sub(c.2), h.saturating_sub(c.3))
        });
        p.start = (r, h);
        (p.peak_reserved_bytes, p.peak_allocated_bytes) = (r, h);
        for &(k, _, dr, dh) in mine() {
            r = r.saturating_add(dr);
            h = h.saturating_add(dh);
            p.steps.push((k, r, h));
            p.peak_reserved_bytes = p.peak_reserved_bytes.max(r);
            if h > p.peak_allocated_bytes {
                p.peak_allocated_bytes = h;
                p.peak_event = Some(k);
            }
        }
    }
    pools.into_values().collect()
}
