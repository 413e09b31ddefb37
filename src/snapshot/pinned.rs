//! Pinned host memory (`record_pinned_host_memory=True`, PyTorch 2.15): what the host caching
//! allocator holds, its peak over its own trace, and who holds the live blocks. The snapshot
//! keeps it apart from the devices (`host_segments` / `host_traces`), and so does memsight:
//! pinned memory is host RAM, not HBM, and never counts toward a device's figures.

use rustc_hash::FxHashMap;

use super::model::{Action, AllocatorSnapshot, StackId};
use super::summary::{StackTotal, allocated_over_trace, top_stacks};

/// What `memsight snapshot` says of the pinned host memory.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PinnedSummary {
    /// Host segments the allocator holds at the end.
    pub segments: usize,
    /// Their bytes (`total_size`).
    pub reserved_bytes: i64,
    /// Bytes of the blocks handed out at the end (`active_allocated`).
    pub allocated_bytes: i64,
    /// Bytes of the blocks freed but waiting for the streams that used them
    /// (`active_pending_free`): pinned memory is reused only once its copies are done.
    pub pending_free_bytes: i64,
    /// Events in `host_traces`.
    pub events: usize,
    /// The most allocated at once over the trace (the end's figure without a trace).
    pub peak_allocated_bytes: i64,
    /// The event that first reached it (None: before the trace, or no trace).
    pub peak_event: Option<usize>,
    /// Who holds the blocks handed out at the end, by stack, heaviest first.
    pub top_stacks: Vec<StackTotal>,
}

/// The pinned host memory of `s`, or None when the snapshot did not record it.
pub fn pinned_summary(s: &AllocatorSnapshot, top: usize) -> Option<PinnedSummary> {
    let host = &s.host;
    if !host.recorded {
        return None;
    }
    let blocks = || host.segments.iter().flat_map(|g| &g.blocks);
    let sum_of = |state: &str| {
        blocks()
            .filter(|b| b.state == state)
            .fold(0i64, |a, b| a.saturating_add(b.size))
    };
    let allocated = sum_of("active_allocated");
    let pending = sum_of("active_pending_free");
    // A block waiting for its streams is freed (free_completed) only later: the trace's running
    // total counts it until then, so the replay starts from both.
    let (start, after) = allocated_over_trace(allocated.saturating_add(pending), &host.trace);
    let (mut peak, mut peak_event) = (start, None);
    for (i, &v) in after.iter().enumerate() {
        if v > peak {
            (peak, peak_event) = (v, Some(i));
        }
    }
    // A live block without a stack of its own takes the stack of the last alloc at its address.
    let mut alloc_stack: FxHashMap<u64, StackId> = FxHashMap::default();
    for e in &host.trace {
        if e.action == Action::Alloc {
            alloc_stack.insert(e.addr, e.stack);
        }
    }
    let live: Vec<(i64, StackId)> = blocks()
        .filter(|b| b.state == "active_allocated")
        .map(|b| {
            let stack = if s.frames(b.stack).is_empty() {
                alloc_stack.get(&b.address).copied().unwrap_or(0)
            } else {
                b.stack
            };
            (b.size, stack)
        })
        .collect();
    Some(PinnedSummary {
        segments: host.segments.len(),
        reserved_bytes: host
            .segments
            .iter()
            .fold(0i64, |a, g| a.saturating_add(g.total_size)),
        allocated_bytes: allocated,
        pending_free_bytes: pending,
        events: host.trace.len(),
        peak_allocated_bytes: peak,
        peak_event,
        top_stacks: top_stacks(s, &live, top),
    })
}
