//! The allocator's state as the snapshot records it: each segment with its blocks laid out in
//! address order, and the fragmentation figures — bytes free inside segments (reserved but not
//! handed out) and the largest free block (the biggest request that fits without a new segment).
//! [`allocator_state_at`] gives the same just after any event, by undoing the later events on the
//! final state.

use std::collections::BTreeMap;

use super::model::{Action, AllocatorSnapshot, Segment};

/// What a block is, for drawing and counting.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BlockKind {
    /// `active_allocated`: handed out.
    Allocated,
    /// `active_pending_free`: freed by the caller, waiting for its stream.
    PendingFree,
    /// `inactive` (or any other state): free inside the segment.
    Free,
}

impl BlockKind {
    /// The kind of a block state as the snapshot names it.
    pub fn of(state: &str) -> BlockKind {
        match state {
            "active_allocated" => BlockKind::Allocated,
            "active_pending_free" => BlockKind::PendingFree,
            _ => BlockKind::Free,
        }
    }
}

/// One segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentState {
    /// Device address.
    pub address: u64,
    /// Bytes reserved (`total_size`).
    pub total: i64,
    /// Σ size of allocated blocks.
    pub allocated: i64,
    /// Σ size of pending-free blocks.
    pub pending_free: i64,
    /// Σ size of free blocks.
    pub free: i64,
    /// The largest free block.
    pub largest_free: i64,
    /// `large` / `small`.
    pub segment_type: String,
    /// An expandable segment.
    pub is_expandable: bool,
    /// Its blocks in address order: (size, kind).
    pub layout: Vec<(i64, BlockKind)>,
}

/// One device's segments and their totals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllocatorState {
    /// Segments in address order.
    pub segments: Vec<SegmentState>,
    /// Σ total_size.
    pub reserved: i64,
    /// Σ allocated.
    pub allocated: i64,
    /// Σ pending free.
    pub pending_free: i64,
    /// Σ free inside segments.
    pub free: i64,
    /// The largest free block of any segment.
    pub largest_free: i64,
}

impl AllocatorState {
    /// Adds a segment and its figures to the totals.
    fn add(&mut self, seg: SegmentState) {
        self.reserved = self.reserved.saturating_add(seg.total);
        self.allocated = self.allocated.saturating_add(seg.allocated);
        self.pending_free = self.pending_free.saturating_add(seg.pending_free);
        self.free = self.free.saturating_add(seg.free);
        self.largest_free = self.largest_free.max(seg.largest_free);
        self.segments.push(seg);
    }

    /// Free bytes inside segments as a share of reserved bytes (0 when nothing is reserved).
    pub fn free_share(&self) -> f64 {
        if self.reserved > 0 {
            self.free as f64 / self.reserved as f64
        } else {
            0.0
        }
    }
}

/// The segments of one device as the snapshot ends, sorted by address, to find the one that
/// holds an address by binary search (a snapshot may hold thousands, and every segment or block
/// of an earlier state is looked up): its stream and its pool are known only there.
pub struct SegmentsAtEnd<'a> {
    by_address: Vec<&'a Segment>,
}

impl<'a> SegmentsAtEnd<'a> {
    /// The segments of `device` in `s`.
    pub fn of(s: &'a AllocatorSnapshot, device: i64) -> SegmentsAtEnd<'a> {
        let mut by_address: Vec<&Segment> =
            s.segments.iter().filter(|g| g.device == device).collect();
        by_address.sort_by_key(|g| g.address);
        SegmentsAtEnd { by_address }
    }

    /// The segment whose range holds `addr`, if one does.
    pub fn containing(&self, addr: u64) -> Option<&'a Segment> {
        let i = self
            .by_address
            .partition_point(|g| g.address <= addr)
            .checked_sub(1)?;
        let g = self.by_address[i];
        let end = g
            .address
            .saturating_add(u64::try_from(g.total_size).unwrap_or(0));
        (addr < end).then_some(g)
    }
}

/// The segments of `device` at the time of the snapshot.
pub fn allocator_state(s: &AllocatorSnapshot, device: i64) -> AllocatorState {
    let mut out = AllocatorState::default();
    for g in s.segments.iter().filter(|g| g.device == device) {
        let mut seg = SegmentState {
            address: g.address,
            total: g.total_size,
            allocated: 0,
            pending_free: 0,
            free: 0,
            largest_free: 0,
            segment_type: g.segment_type.clone(),
            is_expandable: g.is_expandable,
            layout: Vec::with_capacity(g.blocks.len()),
        };
        let mut blocks: Vec<_> = g.blocks.iter().collect();
        blocks.sort_by_key(|b| b.address);
        for b in blocks {
            let kind = BlockKind::of(&b.state);
            let slot = match kind {
                BlockKind::Allocated => &mut seg.allocated,
                BlockKind::PendingFree => &mut seg.pending_free,
                BlockKind::Free => {
                    seg.largest_free = seg.largest_free.max(b.size);
                    &mut seg.free
                }
            };
            *slot = slot.saturating_add(b.size);
            seg.layout.push((b.size, kind));
        }
        out.add(seg);
    }
    out.segments.sort_by_key(|g| g.address);
    out
}

/// The size of a small-pool segment (`kSmallBuffer`); large-pool segments never have it.
const SMALL_SEGMENT: i64 = 2 << 20;

/// A reserved address range while the state is rewound.
#[derive(Debug, Clone)]
struct Range {
    end: u64,
    segment_type: String,
    is_expandable: bool,
}

/// Removes `[at, at + size)` from the reserved ranges (a segment that had not been allocated or
/// mapped yet), splitting a range it cuts through.
fn unreserve(ranges: &mut BTreeMap<u64, Range>, at: u64, size: i64) {
    let end = at.saturating_add(u64::try_from(size).unwrap_or(0));
    let hit: Vec<u64> = ranges
        .range(..end)
        .filter(|(start, r)| **start < end && r.end > at)
        .map(|(start, _)| *start)
        .collect();
    for start in hit {
        let Some(r) = ranges.remove(&start) else {
            continue;
        };
        if start < at {
            ranges.insert(
                start,
                Range {
                    end: at,
                    ..r.clone()
                },
            );
        }
        if r.end > end {
            ranges.insert(end, r);
        }
    }
}

/// Adds `[at, at + size)` back (a segment freed or unmapped later), merging an unmapped range
/// into the expandable ranges it touches.
fn reserve(ranges: &mut BTreeMap<u64, Range>, at: u64, size: i64, expandable: bool) {
    let mut start = at;
    let mut r = Range {
        end: at.saturating_add(u64::try_from(size).unwrap_or(0)),
        segment_type: if size == SMALL_SEGMENT {
            "small".into()
        } else {
            "large".into()
        },
        is_expandable: expandable,
    };
    if expandable {
        if let Some((&s0, before)) = ranges.range(..at).next_back()
            && before.is_expandable
            && before.end == at
        {
            r.segment_type = before.segment_type.clone();
            start = s0;
        }
        if let Some(after) = ranges.get(&r.end).filter(|a| a.is_expandable).cloned() {
            ranges.remove(&r.end);
            r.end = after.end;
            r.segment_type = after.segment_type;
        }
    }
    ranges.insert(start, r);
}

/// The segments of `device` just after its event `k` (0-based): the snapshot's final state with
/// every later event undone. An `alloc` after `k` had not happened, so its block is free space;
/// a block freed after `k` was still held (pending free between its `free_requested` and its
/// `free_completed`); a segment allocated or mapped after `k` was not reserved, one freed or
/// unmapped after `k` was. Free space is what lies between the held blocks of a segment (the
/// allocator's own split of it into free blocks is not in the trace). `k` past the trace gives
/// the final state laid out the same way.
pub fn allocator_state_at(s: &AllocatorSnapshot, device: i64, k: usize) -> AllocatorState {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    let mut ranges: BTreeMap<u64, Range> = BTreeMap::new();
    let mut held: BTreeMap<u64, (i64, BlockKind)> = BTreeMap::new();
    for g in s.segments.iter().filter(|g| g.device == device) {
        ranges.insert(
            g.address,
            Range {
                end: g
                    .address
                    .saturating_add(u64::try_from(g.total_size).unwrap_or(0)),
                segment_type: g.segment_type.clone(),
                is_expandable: g.is_expandable,
            },
        );
        for b in &g.blocks {
            let kind = BlockKind::of(&b.state);
            if kind != BlockKind::Free {
                held.insert(b.address, (b.size, kind));
            }
        }
    }
    for e in trace.iter().skip(k.saturating_add(1)).rev() {
        match e.action {
            Action::Alloc => {
                held.remove(&e.addr);
            }
            Action::FreeRequested => {
                if let Some(b) = held.get_mut(&e.addr) {
                    b.1 = BlockKind::Allocated;
                }
            }
            Action::FreeCompleted => {
                held.insert(e.addr, (e.size, BlockKind::PendingFree));
            }
            Action::SegmentAlloc | Action::SegmentMap => unreserve(&mut ranges, e.addr, e.size),
            Action::SegmentFree => reserve(&mut ranges, e.addr, e.size, false),
            Action::SegmentUnmap => reserve(&mut ranges, e.addr, e.size, true),
            _ => {}
        }
    }
    let mut out = AllocatorState::default();
    for (&start, r) in &ranges {
        let mut seg = SegmentState {
            address: start,
            total: i64::try_from(r.end - start).unwrap_or(i64::MAX),
            allocated: 0,
            pending_free: 0,
            free: 0,
            largest_free: 0,
            segment_type: r.segment_type.clone(),
            is_expandable: r.is_expandable,
            layout: Vec::new(),
        };
        let mut at = start;
        let gap = |seg: &mut SegmentState, from: u64, to: u64| {
            if to > from {
                let size = i64::try_from(to - from).unwrap_or(i64::MAX);
                seg.free = seg.free.saturating_add(size);
                seg.largest_free = seg.largest_free.max(size);
                seg.layout.push((size, BlockKind::Free));
            }
        };
        for (&addr, &(size, kind)) in held.range(start..r.end) {
            if addr < at {
                continue; // overlaps the block before it: the trace disagrees with itself
            }
            gap(&mut seg, at, addr);
            let size = size.clamp(0, i64::try_from(r.end - addr).unwrap_or(i64::MAX));
            let slot = if kind == BlockKind::PendingFree {
                &mut seg.pending_free
            } else {
                &mut seg.allocated
            };
            *slot = slot.saturating_add(size);
            seg.layout.push((size, kind));
            at = addr.saturating_add(size as u64);
        }
        gap(&mut seg, at, r.end);
        out.add(seg);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Block, Event, Segment};

    fn event(action: Action, addr: u64, size: i64) -> Event {
        Event::bare(action, addr, size)
    }

    /// One 100-byte segment allocated in the trace; blocks at 0 (30, held at the end) and 40
    /// (20, freed at event 4).
    fn small() -> AllocatorSnapshot {
        let block = |address, size, state: &str| Block {
            address,
            size,
            requested_size: size,
            state: state.into(),
            stack: 0,
        };
        AllocatorSnapshot {
            segments: vec![Segment {
                device: 0,
                address: 0,
                total_size: 100,
                allocated_size: 30,
                active_size: 30,
                stream: 0,
                segment_type: "large".into(),
                is_expandable: false,
                pool_id: (0, 0),
                blocks: vec![block(0, 30, "active_allocated"), block(30, 70, "inactive")],
            }],
            traces: vec![vec![
                event(Action::SegmentAlloc, 0, 100),
                event(Action::Alloc, 0, 30),
                event(Action::Alloc, 40, 20),
                event(Action::FreeRequested, 40, 20),
                event(Action::FreeCompleted, 40, 20),
            ]],
            stacks: vec![Vec::new()],
            ..Default::default()
        }
    }

    #[test]
    fn rewinding_undoes_later_allocs_frees_and_segments() {
        let s = small();
        let at = |k| allocator_state_at(&s, 0, k);
        assert!(at(0).segments.len() == 1 && at(0).allocated == 0 && at(0).free == 100);
        let two = at(2);
        assert_eq!(two.allocated, 50);
        assert_eq!(
            two.segments[0].layout,
            vec![
                (30, BlockKind::Allocated),
                (10, BlockKind::Free),
                (20, BlockKind::Allocated),
                (40, BlockKind::Free),
            ]
        );
        assert_eq!((two.free, two.largest_free), (50, 40));
        let three = at(3);
        assert_eq!((three.allocated, three.pending_free), (30, 20));
        let end = at(4);
        assert_eq!((end.allocated, end.free, end.largest_free), (30, 70, 70));
        // Before the segment was allocated there is nothing: rewind past event 0 by hand.
        let mut before = s.clone();
        before.traces[0].insert(0, event(Action::Snapshot, 0, 0));
        assert_eq!(allocator_state_at(&before, 0, 0).reserved, 0);
    }

    #[test]
    fn unmapped_ranges_come_back_merged_into_their_expandable_segment() {
        let mut ranges = BTreeMap::new();
        ranges.insert(
            0,
            Range {
                end: 100,
                segment_type: "large".into(),
                is_expandable: true,
            },
        );
        ranges.insert(
            200,
            Range {
                end: 300,
                segment_type: "large".into(),
                is_expandable: true,
            },
        );
        reserve(&mut ranges, 100, 100, true);
        assert_eq!(ranges.len(), 1);
        assert_eq!(ranges[&0].end, 300);
        unreserve(&mut ranges, 120, 30);
        let spans: Vec<(u64, u64)> = ranges.iter().map(|(a, r)| (*a, r.end)).collect();
        assert_eq!(spans, vec![(0, 120), (150, 300)]);
    }
}
