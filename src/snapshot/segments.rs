//! The allocator's state as the snapshot records it: each segment with its blocks laid out in
//! address order, and the fragmentation figures — bytes free inside segments (reserved but not
//! handed out) and the largest free block (the biggest request that fits without a new segment).

use super::model::AllocatorSnapshot;

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
    /// Free bytes inside segments as a share of reserved bytes (0 when nothing is reserved).
    pub fn free_share(&self) -> f64 {
        if self.reserved > 0 {
            self.free as f64 / self.reserved as f64
        } else {
            0.0
        }
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
        out.reserved = out.reserved.saturating_add(seg.total);
        out.allocated = out.allocated.saturating_add(seg.allocated);
        out.pending_free = out.pending_free.saturating_add(seg.pending_free);
        out.free = out.free.saturating_add(seg.free);
        out.largest_free = out.largest_free.max(seg.largest_free);
        out.segments.push(seg);
    }
    out.segments.sort_by_key(|g| g.address);
    out
}
