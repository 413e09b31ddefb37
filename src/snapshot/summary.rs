//! What `memsight snapshot` reports: per device the segments, reserved and allocated bytes,
//! block states, event counts and the allocated peak over the trace; and who holds the memory
//! (live blocks grouped by stack), at the end or at a chosen event.

use std::cmp::Reverse;
use std::collections::BTreeMap;

use rustc_hash::FxHashMap;
use serde::Serialize;

use super::holder::{Backend, holder_frame};
use super::model::{Action, AllocatorSnapshot, Event, Frame, StackId};

/// One device's numbers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DeviceSummary {
    /// Device index.
    pub device: i64,
    /// The device as its framework names it: `CUDA:0`, `NPU:0`.
    pub label: String,
    /// Segments on it.
    pub segments: usize,
    /// Σ total_size of its segments.
    pub reserved_bytes: i64,
    /// Σ size of its `active_allocated` blocks.
    pub allocated_bytes: i64,
    /// Blocks per state.
    pub blocks: BTreeMap<String, u64>,
    /// Events per action.
    pub events: BTreeMap<String, u64>,
    /// The largest allocated total over the trace (see [`allocated_over_trace`]).
    pub peak_allocated_bytes: i64,
    /// The 0-based index of the event that first reaches the peak; None when the allocated
    /// total before the first event is the peak.
    pub peak_event: Option<usize>,
    /// Σ size of its free (`inactive`) blocks: reserved inside segments but not handed out.
    pub free_in_segments_bytes: i64,
    /// Its largest free block: the biggest request that fits without a new segment.
    pub largest_free_block_bytes: i64,
}

/// Live bytes and blocks of one stack.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StackTotal {
    /// The stack, innermost frame first (as the snapshot lists it).
    pub frames: Vec<Frame>,
    /// The frame that names it: the innermost frame of the user's own code
    /// ([`holder_frame`]); None for an empty stack.
    pub frame: Option<Frame>,
    /// When another listed stack is named by the same `frame` (two `zeros_like` lines inside
    /// one `opt.step()`): the innermost (Python, when one differs) frame where this stack
    /// differs from one of them, so that the rows can be told apart. None when its `frame`
    /// names it alone.
    pub via: Option<Frame>,
    /// Σ size of its live blocks.
    pub bytes: i64,
    /// How many live blocks.
    pub blocks: u64,
}

/// The state at one event of one device's trace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct AtEvent {
    /// Device index.
    pub device: i64,
    /// Event index (0-based), the state just after it.
    pub event: usize,
    /// Allocated bytes after it (the trace's running total).
    pub allocated_bytes: i64,
    /// Live blocks after it.
    pub blocks: u64,
    /// Segments (reserved address ranges) after it.
    pub segments: usize,
    /// Bytes reserved after it.
    pub reserved_bytes: i64,
    /// Bytes freed by the caller but not yet by the allocator (`free_requested` seen,
    /// `free_completed` not yet).
    pub pending_free_bytes: i64,
    /// Reserved bytes not held by any block after it.
    pub free_in_segments_bytes: i64,
    /// The largest free stretch of one segment after it.
    pub largest_free_block_bytes: i64,
}

/// The whole report (`memsight snapshot --json`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SnapshotSummary {
    /// The accelerator the snapshot was taken on.
    pub backend: Backend,
    /// Every device with a segment or an event, ascending.
    pub devices: Vec<DeviceSummary>,
    /// Live blocks by stack, heaviest first: at the end over every device, or at `at_event`.
    pub top_stacks: Vec<StackTotal>,
    /// Present when the report is for one event.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at_event: Option<AtEvent>,
}

/// Why a summary cannot be made.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SummaryError {
    /// No such device.
    #[error("no device {0} in the snapshot")]
    NoDevice(i64),
    /// The event index is past the trace.
    #[error(
        "event {event} is past the last event of device {device} ({})",
        crate::model::plural::count(*.len as u64, "event", "events")
    )]
    NoEvent {
        /// Device index.
        device: i64,
        /// Asked for.
        event: usize,
        /// Events of that device.
        len: usize,
    },
}

/// The allocated total before the first event, reconstructed from the final state
/// (final allocated − Σ alloc sizes + Σ free_completed sizes), and after every event.
pub fn allocated_over_trace(final_allocated: i64, trace: &[Event]) -> (i64, Vec<i64>) {
    let mut start = final_allocated;
    for e in trace {
        match e.action {
            Action::Alloc => start = start.saturating_sub(e.size),
            Action::FreeCompleted => start = start.saturating_add(e.size),
            _ => {}
        }
    }
    let mut cur = start;
    let after = trace
        .iter()
        .map(|e| {
            match e.action {
                Action::Alloc => cur = cur.saturating_add(e.size),
                Action::FreeCompleted => cur = cur.saturating_sub(e.size),
                _ => {}
            }
            cur
        })
        .collect();
    (start, after)
}

/// Live blocks of `device` at the end: address → (size, stack). A block without a stack of its
/// own takes the stack of the last `alloc` event at its address.
fn live_at_end(s: &AllocatorSnapshot, device: i64) -> FxHashMap<u64, (i64, StackId)> {
    let trace = trace_of(s, device);
    let mut alloc_stack: FxHashMap<u64, StackId> = FxHashMap::default();
    for e in trace {
        if e.action == Action::Alloc {
            alloc_stack.insert(e.addr, e.stack);
        }
    }
    let mut live = FxHashMap::default();
    for seg in s.segments.iter().filter(|g| g.device == device) {
        for b in seg.blocks.iter().filter(|b| b.state == "active_allocated") {
            let stack = if s.frames(b.stack).is_empty() {
                alloc_stack.get(&b.address).copied().unwrap_or(0)
            } else {
                b.stack
            };
            live.insert(b.address, (b.size, stack));
        }
    }
    live
}

fn trace_of(s: &AllocatorSnapshot, device: i64) -> &[Event] {
    s.trace(device)
}

/// Live blocks of `device` just after event `k`: the end state with the later events undone (an
/// alloc after `k` was not alive yet; a block freed after `k` was, with its alloc's stack).
fn live_at_event(s: &AllocatorSnapshot, device: i64, k: usize) -> FxHashMap<u64, (i64, StackId)> {
    let trace = trace_of(s, device);
    let mut live = live_at_end(s, device);
    // The stack of each free: that of the last alloc at its address before it.
    let mut last_alloc: FxHashMap<u64, StackId> = FxHashMap::default();
    let mut free_stack = vec![0; trace.len()];
    for (j, e) in trace.iter().enumerate() {
        match e.action {
            Action::Alloc => {
                last_alloc.insert(e.addr, e.stack);
            }
            Action::FreeCompleted => {
                free_stack[j] = last_alloc.get(&e.addr).copied().unwrap_or(e.stack);
            }
            _ => {}
        }
    }
    for j in (k + 1..trace.len()).rev() {
        let e = &trace[j];
        match e.action {
            Action::Alloc => {
                live.remove(&e.addr);
            }
            Action::FreeCompleted => {
                live.insert(e.addr, (e.size, free_stack[j]));
            }
            _ => {}
        }
    }
    live
}

/// The live blocks of `device` just after event `at` (None: at the end), as (address, size,
/// stack) in address order.
pub fn live_blocks(
    s: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
) -> Vec<(u64, i64, StackId)> {
    let live = match at {
        Some(k) => live_at_event(s, device, k),
        None => live_at_end(s, device),
    };
    let mut v: Vec<(u64, i64, StackId)> = live
        .into_iter()
        .map(|(addr, (size, stack))| (addr, size, stack))
        .collect();
    v.sort_unstable_by_key(|b| b.0);
    v
}

/// The live blocks of `device` just after event `at` (None: at the end), as (address, size,
/// the event that allocated it: the last `alloc` at its address up to then; None when it was
/// held before the trace), in address order.
pub fn live_blocks_with_alloc(
    s: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
) -> Vec<(u64, i64, Option<usize>)> {
    let trace = trace_of(s, device);
    let upto = at.map_or(trace.len(), |k| k.saturating_add(1).min(trace.len()));
    let mut alloc_at: FxHashMap<u64, usize> = FxHashMap::default();
    for (k, e) in trace[..upto].iter().enumerate() {
        if e.action == Action::Alloc {
            alloc_at.insert(e.addr, k);
        }
    }
    live_blocks(s, device, at)
        .into_iter()
        .map(|(addr, size, _)| (addr, size, alloc_at.get(&addr).copied()))
        .collect()
}

/// Groups live blocks by stack, heaviest first (ties: more blocks, then the stack's frames in
/// order), the first `top`.
pub(crate) fn top_stacks<'a>(
    s: &AllocatorSnapshot,
    live: impl IntoIterator<Item = &'a (i64, StackId)>,
    top: usize,
) -> Vec<StackTotal> {
    let mut by_stack: FxHashMap<StackId, (i64, u64)> = FxHashMap::default();
    for &(size, stack) in live {
        let e = by_stack.entry(stack).or_default();
        e.0 = e.0.saturating_add(size);
        e.1 += 1;
    }
    let mut v: Vec<StackTotal> = by_stack
        .into_iter()
        .map(|(id, (bytes, blocks))| StackTotal {
            frames: s.frames(id).to_vec(),
            frame: holder_frame(s.frames(id)).cloned(),
            via: None,
            bytes,
            blocks,
        })
        .collect();
    v.sort_by(|a, b| {
        b.bytes
            .cmp(&a.bytes)
            .then(b.blocks.cmp(&a.blocks))
            .then_with(|| a.frames.cmp(&b.frames))
    });
    v.truncate(top);
    tell_apart(&mut v);
    v
}

/// Sets [`StackTotal::via`] on the rows whose naming frame another row shares: the frame of the
/// row's stack that most of theirs lack (ties: a Python frame, then the innermost; None when
/// none is lacked or it is the naming frame itself).
fn tell_apart(rows: &mut [StackTotal]) {
    let vias: Vec<Option<Frame>> = rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let same: Vec<&StackTotal> = rows
                .iter()
                .enumerate()
                .filter(|&(j, o)| j != i && r.frame.is_some() && o.frame == r.frame)
                .map(|(_, o)| o)
                .collect();
            if same.is_empty() {
                return None;
            }
            // The frame of this stack that most of theirs lack (frames compared as sets: stacks
            // of C++ frames differ in depth); on ties a Python frame (it reads better), then
            // the innermost.
            let lacking = |f: &Frame| same.iter().filter(|o| !o.frames.contains(f)).count();
            let (_, f) = r
                .frames
                .iter()
                .enumerate()
                .map(|(k, f)| ((lacking(f), super::holder::is_python(f), Reverse(k)), f))
                .filter(|((n, _, _), _)| *n > 0)
                .max_by_key(|(key, _)| *key)?;
            (Some(f) != r.frame.as_ref()).then(|| f.clone())
        })
        .collect();
    for (r, via) in rows.iter_mut().zip(vias) {
        r.via = via;
    }
}

/// The report: every device, the top `top` stacks of live blocks at the end, or with
/// `at = Some((device, k))` the state just after event `k` of that device.
pub fn summarize_snapshot(
    s: &AllocatorSnapshot,
    at: Option<(i64, usize)>,
    top: usize,
) -> Result<SnapshotSummary, SummaryError> {
    let mut devices = Vec::new();
    for device in s.devices() {
        let segs: Vec<_> = s.segments.iter().filter(|g| g.device == device).collect();
        let mut blocks = BTreeMap::new();
        let mut allocated = 0i64;
        for b in segs.iter().flat_map(|g| &g.blocks) {
            *blocks.entry(b.state.clone()).or_insert(0) += 1;
            if b.state == "active_allocated" {
                allocated = allocated.saturating_add(b.size);
            }
        }
        let trace = trace_of(s, device);
        let mut by_action: FxHashMap<Action, u64> = FxHashMap::default();
        for e in trace {
            *by_action.entry(e.action).or_insert(0) += 1;
        }
        let events: BTreeMap<String, u64> = by_action
            .into_iter()
            .map(|(a, n)| (s.action_name(a).to_string(), n))
            .collect();
        let (start, after) = allocated_over_trace(allocated, trace);
        let (mut peak, mut peak_event) = (start, None);
        for (i, &v) in after.iter().enumerate() {
            if v > peak {
                (peak, peak_event) = (v, Some(i));
            }
        }
        let state = super::segments::allocator_state(s, device);
        devices.push(DeviceSummary {
            device,
            label: s.backend.device_label(device),
            free_in_segments_bytes: state.free,
            largest_free_block_bytes: state.largest_free,
            segments: segs.len(),
            reserved_bytes: segs
                .iter()
                .fold(0i64, |a, g| a.saturating_add(g.total_size)),
            allocated_bytes: allocated,
            blocks,
            events,
            peak_allocated_bytes: peak,
            peak_event,
        });
    }
    let Some((device, k)) = at else {
        let live: Vec<(i64, StackId)> = s
            .devices()
            .into_iter()
            .flat_map(|d| live_at_end(s, d).into_values())
            .collect();
        return Ok(SnapshotSummary {
            backend: s.backend,
            top_stacks: top_stacks(s, &live, top),
            devices,
            at_event: None,
        });
    };
    let summary = devices
        .iter()
        .find(|d| d.device == device)
        .ok_or(SummaryError::NoDevice(device))?;
    let trace = trace_of(s, device);
    if k >= trace.len() {
        return Err(SummaryError::NoEvent {
            device,
            event: k,
            len: trace.len(),
        });
    }
    let (_, after) = allocated_over_trace(summary.allocated_bytes, trace);
    let live = live_at_event(s, device, k);
    let state = super::segments::allocator_state_at(s, device, k);
    Ok(SnapshotSummary {
        backend: s.backend,
        top_stacks: top_stacks(s, live.values(), top),
        at_event: Some(AtEvent {
            device,
            event: k,
            allocated_bytes: after[k],
            blocks: live.len() as u64,
            segments: state.segments.len(),
            reserved_bytes: state.reserved,
            pending_free_bytes: state.pending_free,
            free_in_segments_bytes: state.free,
            largest_free_block_bytes: state.largest_free,
        }),
        devices,
    })
}

/// Leak suspects of `device`: blocks allocated during the trace and never freed in it (an
/// `alloc` with no later `free_completed` at its address), grouped by the allocating stack,
/// heaviest first, the first `top`; and how many such blocks there are in all.
pub fn never_freed(s: &AllocatorSnapshot, device: i64, top: usize) -> (Vec<StackTotal>, u64) {
    let trace = trace_of(s, device);
    let open = never_freed_events(s, device);
    let live: Vec<(i64, StackId)> = open
        .iter()
        .filter_map(|&k| trace.get(k).map(|e| (e.size, e.stack)))
        .collect();
    (top_stacks(s, &live, top), open.len() as u64)
}

/// The events of `device`'s trace that allocated a block the trace never frees, in trace order
/// (where each leak suspect was allocated).
pub fn never_freed_events(s: &AllocatorSnapshot, device: i64) -> Vec<usize> {
    let mut open: FxHashMap<u64, usize> = FxHashMap::default();
    for (k, e) in trace_of(s, device).iter().enumerate() {
        match e.action {
            Action::Alloc => {
                open.insert(e.addr, k);
            }
            Action::FreeCompleted => {
                open.remove(&e.addr);
            }
            _ => {}
        }
    }
    let mut events: Vec<usize> = open.into_values().collect();
    events.sort_unstable();
    events
}

/// The allocated bytes of `device` before its first event and after each one (for the
/// allocated-over-events curve).
pub fn allocated_curve(s: &AllocatorSnapshot, device: i64) -> (i64, Vec<i64>) {
    let allocated = s
        .segments
        .iter()
        .filter(|g| g.device == device)
        .flat_map(|g| &g.blocks)
        .filter(|b| b.state == "active_allocated")
        .fold(0i64, |a, b| a.saturating_add(b.size));
    allocated_over_trace(allocated, trace_of(s, device))
}
