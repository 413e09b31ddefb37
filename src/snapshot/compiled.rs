//! What `torch.compile`d code allocated: the events a snapshot recorded inside a compiled region
//! (`compile_context`, e.g. `Torch-Compiled Region: 0/0`, recorded with
//! `_record_memory_history(compile_context=True)`), per region — how many allocations and bytes,
//! and how much of it is live at an event.

use std::collections::BTreeMap;

use super::model::{Action, AllocatorSnapshot};
use super::summary::live_blocks_with_alloc;

/// One compiled region's allocations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionAllocs {
    /// The region, as the snapshot names it.
    pub context: String,
    /// `alloc` events in it.
    pub allocs: u64,
    /// Σ size of those.
    pub alloc_bytes: i64,
    /// Σ size of the blocks it allocated that are live at the event asked for.
    pub live_bytes: i64,
    /// How many such blocks.
    pub live_blocks: u64,
}

/// The compiled regions of `device`'s trace with their allocations, and what of it is live just
/// after event `at` (None: at the end); the most allocated first. Empty when no event names one.
pub fn by_compile_context(
    s: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
) -> Vec<RegionAllocs> {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    if trace.iter().all(|e| e.compile_context == 0) {
        return Vec::new();
    }
    // By context id: allocs, bytes, live bytes, live blocks.
    let mut by: BTreeMap<u32, (u64, i64, i64, u64)> = BTreeMap::new();
    for e in trace
        .iter()
        .filter(|e| e.action == Action::Alloc && e.compile_context != 0)
    {
        let r = by.entry(e.compile_context).or_default();
        r.0 += 1;
        r.1 = r.1.saturating_add(e.size);
    }
    for (_, size, alloc) in live_blocks_with_alloc(s, device, at) {
        if let Some(c) = alloc.and_then(|k| trace.get(k)).map(|e| e.compile_context)
            && c != 0
        {
            let r = by.entry(c).or_default();
            r.2 = r.2.saturating_add(size);
            r.3 += 1;
        }
    }
    let mut v: Vec<RegionAllocs> = by
        .into_iter()
        .map(
            |(c, (allocs, alloc_bytes, live_bytes, live_blocks))| RegionAllocs {
                context: s
                    .compile_contexts
                    .get(c as usize)
                    .cloned()
                    .unwrap_or_default(),
                allocs,
                alloc_bytes,
                live_bytes,
                live_blocks,
            },
        )
        .collect();
    v.sort_by(|a, b| {
        b.alloc_bytes
            .cmp(&a.alloc_bytes)
            .then_with(|| a.context.cmp(&b.context))
    });
    v
}

/// `snapshot --json`'s `compile_contexts`.
pub fn compiled_json(s: &AllocatorSnapshot, device: i64, at: Option<usize>) -> serde_json::Value {
    by_compile_context(s, device, at)
        .into_iter()
        .map(|r| {
            serde_json::json!({
                "context": r.context,
                "allocs": r.allocs,
                "alloc_bytes": r.alloc_bytes,
                "live_bytes": r.live_bytes,
                "live_blocks": r.live_blocks,
            })
        })
        .collect()
}
