//! Why memory is fragmented at an event: reserved − allocated split into its causes, the
//! largest request that would succeed without a new segment, and the allocator setting that
//! closes the largest cause.
//!
//! The segments at the event are [`super::segments::allocator_state_at`]'s. In each segment the
//! free space is taken as runs (neighbouring free blocks merged, as the allocator merges them):
//! - a run between two held blocks is a **hole** (`holes_between_live_blocks`);
//! - a run at the edge of a segment that holds something is free space **split across
//!   segments**, which no request larger than it can use because segments never merge
//!   (`split_across_segments`: what `expandable_segments:True` fixes, by growing one segment
//!   instead of reserving many);
//! - a segment holding nothing is **cached** (`empty_segments`: `empty_cache()` at a phase
//!   boundary, or `garbage_collection_threshold`, returns it);
//! - blocks freed but still waiting for a stream are **pending** (`pending_stream_sync`);
//! - any free space of a segment made for another stream than the request's is
//!   `other_stream` (a block is only reused on its own stream: `record_stream` changes).
//!
//! - any free space of a segment in a private pool (`segment_pool_id` ≠ (0, 0): a CUDA graph's,
//!   a `MemPool`) is `private_pool`: only that pool's allocations may use it.
//!
//! A segment's stream and pool are the ones the snapshot gives it at the end (a segment freed
//! before then counts as the request's stream and the allocator's own pool).

use super::model::{Action, AllocatorSnapshot};
use super::segments::{AllocatorState, BlockKind, SegmentsAtEnd, allocator_state_at};
use crate::model::Lang;

/// One cause of reserved − allocated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// Free runs between live blocks inside a segment.
    HolesBetweenLiveBlocks,
    /// Free runs at the edges of segments that hold something: segments cannot merge.
    SplitAcrossSegments,
    /// Segments that hold nothing (cached).
    EmptySegments,
    /// Free space in segments of another stream than the request's.
    OtherStream,
    /// Blocks freed but waiting for a stream to sync.
    PendingStreamSync,
    /// Free space of a private pool (a CUDA graph's, a `MemPool`): only its own allocations
    /// may use it.
    PrivatePool,
}

impl Cause {
    /// Every cause, in the JSON's order.
    pub const ALL: [Cause; 6] = [
        Cause::SplitAcrossSegments,
        Cause::HolesBetweenLiveBlocks,
        Cause::EmptySegments,
        Cause::OtherStream,
        Cause::PendingStreamSync,
        Cause::PrivatePool,
    ];

    /// The name in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Cause::HolesBetweenLiveBlocks => "holes_between_live_blocks",
            Cause::SplitAcrossSegments => "split_across_segments",
            Cause::EmptySegments => "empty_segments",
            Cause::OtherStream => "other_stream",
            Cause::PendingStreamSync => "pending_stream_sync",
            Cause::PrivatePool => "private_pool",
        }
    }

    /// The cause's name in `lang`, as the app lists it.
    pub fn name(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (Cause::SplitAcrossSegments, Lang::En) => {
                "split across segments (segments never merge)"
            }
            (Cause::SplitAcrossSegments, Lang::Zh) => "分散在多个内存段中（内存段之间不能合并）",
            (Cause::HolesBetweenLiveBlocks, Lang::En) => "holes between live blocks",
            (Cause::HolesBetweenLiveBlocks, Lang::Zh) => "存活块之间的空洞",
            (Cause::EmptySegments, Lang::En) => "empty cached segments",
            (Cause::EmptySegments, Lang::Zh) => "缓存中的空内存段",
            (Cause::OtherStream, Lang::En) => "segments of another stream",
            (Cause::OtherStream, Lang::Zh) => "属于其他 stream 的内存段",
            (Cause::PendingStreamSync, Lang::En) => "freed, waiting for a stream to sync",
            (Cause::PendingStreamSync, Lang::Zh) => "已释放、等待 stream 同步",
            (Cause::PrivatePool, Lang::En) => "private pools (CUDA graphs, MemPool)",
            (Cause::PrivatePool, Lang::Zh) => "私有内存池（CUDA graph、MemPool）",
        }
    }

    /// What closes this cause; `expandable_on`: the segments are already expandable.
    pub fn fix(self, expandable_on: bool) -> Fix {
        match self {
            Cause::SplitAcrossSegments if expandable_on => Fix::AlreadyExpandable,
            Cause::SplitAcrossSegments => Fix::ExpandableSegments,
            Cause::HolesBetweenLiveBlocks => Fix::MaxSplitSize,
            Cause::EmptySegments => Fix::EmptyCache,
            Cause::PrivatePool => Fix::ReleasePrivatePool,
            Cause::OtherStream | Cause::PendingStreamSync => Fix::RecordStream,
        }
    }
}

/// The setting or change that closes a cause.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fix {
    /// `expandable_segments:True`: one segment grows instead of many being reserved.
    ExpandableSegments,
    /// Expandable segments are already on: the free ends of its segments are what the next
    /// larger request grows into, not pieces lost between segments.
    AlreadyExpandable,
    /// `max_split_size_mb`: large cached blocks are no longer split.
    MaxSplitSize,
    /// One `empty_cache()` at a phase boundary, or `garbage_collection_threshold`.
    EmptyCache,
    /// Release the private pool, or share one between graphs.
    ReleasePrivatePool,
    /// `record_stream` changes.
    RecordStream,
}

impl Fix {
    /// The fix in `lang`, for the allocator settings variable `conf` (`PYTORCH_CUDA_ALLOC_CONF`
    /// or `PYTORCH_NPU_ALLOC_CONF`): what the CLI prints and the app shows.
    pub fn render(self, lang: Lang, conf: &str) -> String {
        let dev = if conf.contains("NPU") { "npu" } else { "cuda" };
        match (self, lang) {
            (Fix::ExpandableSegments, _) => format!("{conf}=expandable_segments:True"),
            (Fix::AlreadyExpandable, Lang::En) => format!(
                "nothing to set: {conf} already has expandable_segments:True, and the free \
                 ends of its segments are what the next larger request grows into; \
                 torch.{dev}.empty_cache() returns them"
            ),
            (Fix::AlreadyExpandable, Lang::Zh) => format!(
                "无需设置：{conf} 已开启 expandable_segments:True，内存段末尾的空闲部分会被下一个\
                 更大的申请扩展使用；torch.{dev}.empty_cache() 可归还它们"
            ),
            (Fix::MaxSplitSize, Lang::En) => format!(
                "{conf}=max_split_size_mb:<MB> (large cached blocks are no longer split into \
                 pieces that live blocks pin)"
            ),
            (Fix::MaxSplitSize, Lang::Zh) => {
                format!("{conf}=max_split_size_mb:<MB>（不再把大的缓存块切成被存活块占住的碎片）")
            }
            (Fix::EmptyCache, Lang::En) => format!(
                "one torch.{dev}.empty_cache() at a phase boundary, or \
                 {conf}=garbage_collection_threshold:0.8"
            ),
            (Fix::EmptyCache, Lang::Zh) => format!(
                "在阶段边界调用一次 torch.{dev}.empty_cache()，或设置 \
                 {conf}=garbage_collection_threshold:0.8"
            ),
            (Fix::ReleasePrivatePool, Lang::En) => "release the private pool when its graph or \
                 MemPool is done with (drop the graph, then empty_cache()), or let graphs share \
                 one pool (graph_pool_handle())"
                .into(),
            (Fix::ReleasePrivatePool, Lang::Zh) => "图或 MemPool 用完后释放其私有内存池（先删除 \
                 graph，再 empty_cache()），或让多个 graph 共享一个内存池（graph_pool_handle()）"
                .into(),
            (Fix::RecordStream, Lang::En) => "record_stream changes: free cross-stream tensors \
                 after their stream has synchronized, or allocate them on the stream that uses \
                 them"
                .into(),
            (Fix::RecordStream, Lang::Zh) => "调整 record_stream：跨 stream 的张量在其 stream \
                 同步后再释放，或在使用它的 stream 上分配"
                .into(),
        }
    }

    /// [`Fix::render`] in English: what the JSON holds.
    pub fn english(self, conf: &str) -> String {
        self.render(Lang::En, conf)
    }
}

/// The fragmentation figures at one event of one device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Fragmentation {
    /// The device.
    pub device: i64,
    /// The event (index into the device's trace).
    pub at_event: usize,
    /// Reserved then, bytes.
    pub reserved_bytes: i64,
    /// Allocated then, bytes.
    pub allocated_bytes: i64,
    /// Reserved − allocated by cause (each cause once, largest first; they add up to it).
    pub causes: Vec<(Cause, i64)>,
    /// The largest request that would succeed without reserving a new segment: the largest
    /// free run of a segment of the request's stream outside private pools, bytes.
    pub largest_possible_bytes: i64,
    /// The fix of the largest cause (None when nothing is free).
    pub remedy: Option<Fix>,
    /// The allocator settings variable the fix names (`PYTORCH_CUDA_ALLOC_CONF`,
    /// `PYTORCH_NPU_ALLOC_CONF`).
    pub conf: &'static str,
}

impl Fragmentation {
    /// The largest cause, if anything is free.
    pub fn largest(&self) -> Option<(Cause, i64)> {
        self.causes.first().copied().filter(|c| c.1 > 0)
    }

    /// The fix of the largest cause in `lang` ([`Fix::render`]); empty when nothing is free.
    pub fn fix(&self, lang: Lang) -> String {
        self.remedy
            .map_or_else(String::new, |f| f.render(lang, self.conf))
    }

    /// The JSON object of `memsight snapshot --json`'s `fragmentation`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::json!({
            "device": self.device,
            "at_event": self.at_event,
            "reserved_bytes": self.reserved_bytes,
            "allocated_bytes": self.allocated_bytes,
            "causes": self
                .causes
                .iter()
                .map(|(c, b)| serde_json::json!({"kind": c.as_str(), "bytes": b}))
                .collect::<Vec<_>>(),
            "largest_possible_bytes": self.largest_possible_bytes,
            "fix": self.fix(Lang::En),
        })
    }
}

/// The figures of `device` just after its event `k`, for a request on `stream`.
pub fn fragmentation_at(
    s: &AllocatorSnapshot,
    device: i64,
    k: usize,
    stream: i64,
) -> Fragmentation {
    fragmentation_of(s, &allocator_state_at(s, device, k), device, k, stream)
}

/// The figures of `state`, the segments of `device` just after its event `k`
/// ([`allocator_state_at`]), for a request on `stream`.
pub fn fragmentation_of(
    s: &AllocatorSnapshot,
    state: &AllocatorState,
    device: i64,
    k: usize,
    stream: i64,
) -> Fragmentation {
    let segments_at_end = SegmentsAtEnd::of(s, device);
    let mut by = [0i64; Cause::ALL.len()];
    let mut add = |c: Cause, b: i64| {
        if let Some(i) = Cause::ALL.iter().position(|&x| x == c) {
            by[i] = by[i].saturating_add(b);
        }
    };
    let mut largest_possible = 0i64;
    for seg in &state.segments {
        let at_end = segments_at_end.containing(seg.address);
        let own_stream = at_end.map_or(stream, |g| g.stream) == stream;
        let private = at_end.is_some_and(|g| g.in_private_pool());
        // Free runs with whether a held block lies before and after each.
        let mut runs: Vec<(i64, bool, bool)> = Vec::new();
        let mut run = 0i64;
        let mut held_before = false;
        for &(size, kind) in &seg.layout {
            match kind {
                BlockKind::Free => run = run.saturating_add(size),
                BlockKind::Allocated | BlockKind::PendingFree => {
                    if kind == BlockKind::PendingFree {
                        add(Cause::PendingStreamSync, size);
                    }
                    if run > 0 {
                        runs.push((run, held_before, true));
                    }
                    run = 0;
                    held_before = true;
                }
            }
        }
        if run > 0 {
            runs.push((run, held_before, false));
        }
        let holds = seg.allocated > 0 || seg.pending_free > 0;
        for (size, before, after) in runs {
            let cause = if private {
                Cause::PrivatePool
            } else if !own_stream {
                Cause::OtherStream
            } else if !holds {
                Cause::EmptySegments
            } else if before && after {
                Cause::HolesBetweenLiveBlocks
            } else {
                Cause::SplitAcrossSegments
            };
            add(cause, size);
            if own_stream && !private {
                largest_possible = largest_possible.max(size);
            }
        }
    }
    let mut causes: Vec<(Cause, i64)> = Cause::ALL.iter().copied().zip(by).collect();
    causes.sort_by_key(|&(c, b)| {
        (
            std::cmp::Reverse(b),
            Cause::ALL.iter().position(|&x| x == c),
        )
    });
    // Expandable segments already on: any segment then is one.
    let expandable_on = state.segments.iter().any(|g| g.is_expandable);
    let remedy = causes
        .first()
        .filter(|c| c.1 > 0)
        .map(|c| c.0.fix(expandable_on));
    Fragmentation {
        device,
        at_event: k,
        reserved_bytes: state.reserved,
        allocated_bytes: state.allocated,
        causes,
        largest_possible_bytes: largest_possible,
        remedy,
        conf: s.backend.alloc_conf(),
    }
}

/// The event a snapshot's diagnosis is for on `device`: its first `oom` (and that request's
/// stream), else its last event (the snapshot's own state, stream 0).
pub fn diagnosis_event(s: &AllocatorSnapshot, device: i64) -> (usize, i64) {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    match trace.iter().position(|e| e.action == Action::Oom) {
        Some(k) => (k, trace[k].stream),
        None => (trace.len().saturating_sub(1), 0),
    }
}

/// The diagnosis of `device` at [`diagnosis_event`].
pub fn diagnose(s: &AllocatorSnapshot, device: i64) -> Fragmentation {
    let (k, stream) = diagnosis_event(s, device);
    fragmentation_at(s, device, k, stream)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Block, Segment};

    fn segment(address: u64, stream: i64, blocks: &[(i64, &str)]) -> Segment {
        let mut at = address;
        let blocks = blocks
            .iter()
            .map(|&(size, state)| {
                let b = Block {
                    address: at,
                    size,
                    requested_size: size,
                    state: state.into(),
                    stack: 0,
                };
                at += size as u64;
                b
            })
            .collect::<Vec<_>>();
        Segment {
            device: 0,
            address,
            total_size: blocks.iter().map(|b| b.size).sum(),
            allocated_size: 0,
            active_size: 0,
            stream,
            segment_type: "large".into(),
            is_expandable: false,
            pool_id: (0, 0),
            blocks,
        }
    }

    #[test]
    fn each_free_run_goes_to_one_cause() {
        let s = AllocatorSnapshot {
            segments: vec![
                // Stream 0: a hole of 10 between live blocks, an edge of 5 and 7, pending 4.
                segment(
                    0,
                    0,
                    &[
                        (7, "inactive"),
                        (20, "active_allocated"),
                        (6, "inactive"),
                        (4, "inactive"),
                        (30, "active_allocated"),
                        (4, "active_pending_free"),
                        (5, "inactive"),
                    ],
                ),
                // Stream 0, nothing held: cached.
                segment(1000, 0, &[(50, "inactive")]),
                // Another stream: all its free space.
                segment(2000, 1, &[(8, "active_allocated"), (40, "inactive")]),
                // A CUDA graph's private pool: all its free space.
                Segment {
                    pool_id: (1, 0),
                    ..segment(3000, 0, &[(16, "active_allocated"), (60, "inactive")])
                },
            ],
            traces: vec![Vec::new()],
            stacks: vec![Vec::new()],
            ..Default::default()
        };
        let f = fragmentation_at(&s, 0, 0, 0);
        let by = |c: Cause| f.causes.iter().find(|x| x.0 == c).map_or(0, |x| x.1);
        assert_eq!(by(Cause::HolesBetweenLiveBlocks), 10);
        assert_eq!(by(Cause::SplitAcrossSegments), 12);
        assert_eq!(by(Cause::EmptySegments), 50);
        assert_eq!(by(Cause::OtherStream), 40);
        assert_eq!(by(Cause::PendingStreamSync), 4);
        assert_eq!(by(Cause::PrivatePool), 60);
        assert_eq!(
            f.reserved_bytes - f.allocated_bytes,
            10 + 12 + 50 + 40 + 4 + 60
        );
        // Largest first: the pool's 60.
        assert_eq!(f.causes[0], (Cause::PrivatePool, 60));
        // The largest run of the request's stream outside private pools: the cached segment.
        assert_eq!(f.largest_possible_bytes, 50);
        let fix = f.fix(Lang::En);
        assert!(fix.contains("graph_pool_handle"), "{fix}");
        assert!(
            Cause::SplitAcrossSegments
                .fix(false)
                .english("PYTORCH_NPU_ALLOC_CONF")
                .contains("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True")
        );
    }

    #[test]
    fn expandable_segments_are_not_advised_when_already_on() {
        // One expandable segment: a live block, then a free end of 30.
        let mut g = segment(0, 0, &[(20, "active_allocated"), (30, "inactive")]);
        g.is_expandable = true;
        let s = AllocatorSnapshot {
            segments: vec![g],
            ..AllocatorSnapshot::default()
        };
        let f = fragmentation_at(&s, 0, 0, 0);
        assert_eq!(f.causes[0], (Cause::SplitAcrossSegments, 30));
        assert_eq!(f.remedy, Some(Fix::AlreadyExpandable));
        let fix = f.fix(Lang::En);
        assert!(fix.starts_with("nothing to set"), "{fix}");
    }
}
