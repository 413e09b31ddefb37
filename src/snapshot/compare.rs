//! Snapshot against snapshot: two allocator snapshots (or two moments of one), each read at its
//! allocated peak, its end or a chosen event, and what changed between them — reserved,
//! allocated and the memory not handed out (by cause), and which stacks (by the user's frame),
//! block sizes and memory pools grew or shrank.
//!
//! - The **state** of a side is [`allocator_state_at`]'s: its reserved bytes, its allocated
//!   bytes (held blocks, not those freed and waiting for a stream) and its fragmentation
//!   ([`fragmentation_of`]).
//! - Its **stacks and sizes** count the live blocks then ([`live_blocks`]: a block is live from
//!   its `alloc` to its `free_completed`), by [`holder_frame`] and by size in bytes.
//! - Its **pools** sum the segments then by the pool the snapshot gives them at its end
//!   (`segment_pool_id`; a segment gone by then counts in the allocator's own pool, (0, 0)).

use std::collections::BTreeMap;

use super::fragmentation::{Cause, Fragmentation, fragmentation_of};
use super::holder::holder_frame;
use super::model::{Action, AllocatorSnapshot, Frame};
use super::segments::{SegmentsAtEnd, allocator_state_at};
use super::summary::{SummaryError, allocated_curve, live_blocks};

/// Where a side is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Moment {
    /// The first event that reaches the device's allocated peak.
    #[default]
    Peak,
    /// The snapshot's own state (after its last event).
    End,
    /// Just after this event (0-based index into the device's trace).
    Event(usize),
}

impl std::str::FromStr for Moment {
    type Err = String;

    /// `peak`, `end` or an event index.
    fn from_str(s: &str) -> Result<Moment, String> {
        match s.trim() {
            "peak" => Ok(Moment::Peak),
            "end" => Ok(Moment::End),
            n => n.parse().map(Moment::Event).map_err(|_| {
                format!("'{s}' is not a moment of a snapshot: peak, end, or an event index")
            }),
        }
    }
}

/// One side of a comparison: a device of a snapshot at one moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Side {
    /// The device.
    pub device: i64,
    /// What was asked for.
    pub moment: Moment,
    /// The event it resolved to (None: the snapshot's end state).
    pub event: Option<usize>,
    /// Reserved, allocated and why the difference is not handed out, then.
    pub fragmentation: Fragmentation,
    /// Σ size of the live blocks then (allocated plus those freed but waiting for a stream).
    pub live_bytes: i64,
    /// How many live blocks.
    pub live_blocks: u64,
}

impl Side {
    /// Reserved − allocated: the memory not handed out.
    pub fn not_handed_out(&self) -> i64 {
        self.fragmentation
            .reserved_bytes
            .saturating_sub(self.fragmentation.allocated_bytes)
    }

    /// The bytes of one cause.
    pub fn cause_bytes(&self, cause: Cause) -> i64 {
        self.fragmentation
            .causes
            .iter()
            .find(|c| c.0 == cause)
            .map_or(0, |c| c.1)
    }
}

/// Bytes and blocks of one group (a stack, a size) on either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Change<K> {
    /// What is grouped.
    pub key: K,
    /// Σ size on side A.
    pub a_bytes: i64,
    /// Σ size on side B.
    pub b_bytes: i64,
    /// Blocks on side A.
    pub a_blocks: u64,
    /// Blocks on side B.
    pub b_blocks: u64,
}

impl<K> Change<K> {
    /// B − A, bytes.
    pub fn delta(&self) -> i64 {
        self.b_bytes.saturating_sub(self.a_bytes)
    }
}

/// One memory pool on either side.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolChange {
    /// `segment_pool_id`: (0, 0) for the allocator's own pools.
    pub pool: (i64, i64),
    /// Reserved in it on side A.
    pub a_reserved: i64,
    /// Reserved in it on side B.
    pub b_reserved: i64,
    /// Allocated in it on side A.
    pub a_allocated: i64,
    /// Allocated in it on side B.
    pub b_allocated: i64,
}

impl PoolChange {
    /// B − A of the reserved bytes.
    pub fn delta_reserved(&self) -> i64 {
        self.b_reserved.saturating_sub(self.a_reserved)
    }

    /// B − A of the allocated bytes.
    pub fn delta_allocated(&self) -> i64 {
        self.b_allocated.saturating_sub(self.a_allocated)
    }
}

/// What changed from A to B.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SnapshotComparison {
    /// The baseline.
    pub a: Side,
    /// The side compared with it.
    pub b: Side,
    /// Live blocks by the user's frame (None: no stack), those that changed, the largest
    /// change first.
    pub stacks: Vec<Change<Option<Frame>>>,
    /// Live blocks by size in bytes, those that changed, the largest change first.
    pub sizes: Vec<Change<i64>>,
    /// Every pool on either side, the largest change of reserved first.
    pub pools: Vec<PoolChange>,
    /// Each side's device as its framework names it (`CUDA:0`, `NPU:3`).
    pub devices: [String; 2],
}

impl SnapshotComparison {
    /// True when the sides are different devices or accelerators (`CUDA:0` against `NPU:3`):
    /// their allocators, block sizes and limits differ, so a Δ says less than it seems.
    pub fn different_devices(&self) -> bool {
        self.devices[0] != self.devices[1]
    }

    /// The note a reader needs when [`Self::different_devices`], in English.
    pub fn devices_note(&self) -> Option<String> {
        self.different_devices().then(|| {
            format!(
                "A is {} and B is {}: different devices{}; their allocators, limits and free \
                 memory differ, so compare what each holds, not why",
                self.devices[0],
                self.devices[1],
                match self.devices[0].split(':').next() == self.devices[1].split(':').next() {
                    true => "",
                    false => " and accelerators",
                }
            )
        })
    }

    /// B − A of the reserved bytes.
    pub fn delta_reserved(&self) -> i64 {
        let r = |s: &Side| s.fragmentation.reserved_bytes;
        r(&self.b).saturating_sub(r(&self.a))
    }

    /// B − A of the allocated bytes.
    pub fn delta_allocated(&self) -> i64 {
        let r = |s: &Side| s.fragmentation.allocated_bytes;
        r(&self.b).saturating_sub(r(&self.a))
    }

    /// B − A of the memory not handed out.
    pub fn delta_not_handed_out(&self) -> i64 {
        self.b
            .not_handed_out()
            .saturating_sub(self.a.not_handed_out())
    }

    /// B − A of each cause, in [`Cause::ALL`]'s order.
    pub fn cause_deltas(&self) -> Vec<(Cause, i64)> {
        Cause::ALL
            .iter()
            .map(|&c| {
                (
                    c,
                    self.b.cause_bytes(c).saturating_sub(self.a.cause_bytes(c)),
                )
            })
            .collect()
    }

    /// The `memsight compare A.pickle B.pickle --json` document (its field names are a
    /// contract, documented in docs/cli.md); `a_path` and `b_path` name the files.
    pub fn to_json(&self, a_path: &str, b_path: &str) -> serde_json::Value {
        let side = |s: &Side, path: &str| {
            serde_json::json!({
                "path": path,
                "device": s.device,
                "moment": moment_name(s.moment),
                "event": s.event,
                "reserved_bytes": s.fragmentation.reserved_bytes,
                "allocated_bytes": s.fragmentation.allocated_bytes,
                "not_handed_out_bytes": s.not_handed_out(),
                "live_bytes": s.live_bytes,
                "live_blocks": s.live_blocks,
                "fragmentation": s.fragmentation.to_json(),
            })
        };
        let change = |a_bytes: i64, b_bytes: i64, a_blocks: u64, b_blocks: u64| {
            serde_json::json!({
                "a_bytes": a_bytes,
                "b_bytes": b_bytes,
                "delta_bytes": b_bytes.saturating_sub(a_bytes),
                "a_blocks": a_blocks,
                "b_blocks": b_blocks,
            })
        };
        let keyed = |name: &str, key: serde_json::Value, c: serde_json::Value| {
            let mut c = c;
            if let Some(o) = c.as_object_mut() {
                o.insert(name.to_string(), key);
            }
            c
        };
        let mut a = side(&self.a, a_path);
        let mut b = side(&self.b, b_path);
        for (v, label) in [(&mut a, &self.devices[0]), (&mut b, &self.devices[1])] {
            if let Some(o) = v.as_object_mut() {
                o.insert("device_label".into(), label.as_str().into());
            }
        }
        serde_json::json!({
            "a": a,
            "b": b,
            "different_devices": self.different_devices(),
            "delta": {
                "reserved_bytes": self.delta_reserved(),
                "allocated_bytes": self.delta_allocated(),
                "not_handed_out_bytes": self.delta_not_handed_out(),
                "causes": self
                    .cause_deltas()
                    .iter()
                    .map(|(c, b)| serde_json::json!({"kind": c.as_str(), "bytes": b}))
                    .collect::<Vec<_>>(),
            },
            "stacks": self
                .stacks
                .iter()
                .map(|c| keyed(
                    "frame",
                    serde_json::to_value(&c.key).unwrap_or_default(),
                    change(c.a_bytes, c.b_bytes, c.a_blocks, c.b_blocks),
                ))
                .collect::<Vec<_>>(),
            "sizes": self
                .sizes
                .iter()
                .map(|c| keyed(
                    "size_bytes",
                    c.key.into(),
                    change(c.a_bytes, c.b_bytes, c.a_blocks, c.b_blocks),
                ))
                .collect::<Vec<_>>(),
            "pools": self
                .pools
                .iter()
                .map(|p| serde_json::json!({
                    "pool": [p.pool.0, p.pool.1],
                    "a_reserved_bytes": p.a_reserved,
                    "b_reserved_bytes": p.b_reserved,
                    "delta_reserved_bytes": p.delta_reserved(),
                    "a_allocated_bytes": p.a_allocated,
                    "b_allocated_bytes": p.b_allocated,
                    "delta_allocated_bytes": p.delta_allocated(),
                }))
                .collect::<Vec<_>>(),
        })
    }
}

/// The name of a moment in JSON: `peak`, `end`, `event`.
pub fn moment_name(m: Moment) -> &'static str {
    match m {
        Moment::Peak => "peak",
        Moment::End => "end",
        Moment::Event(_) => "event",
    }
}

/// The device a snapshot is compared on when none is named: the device of its first `oom`
/// event, else its first device with events, else its first segment's (0 for an empty one).
pub fn default_device(s: &AllocatorSnapshot) -> i64 {
    let oom = s
        .traces
        .iter()
        .position(|t| t.iter().any(|e| e.action == Action::Oom));
    oom.or_else(|| s.traces.iter().position(|t| !t.is_empty()))
        .map(|d| d as i64)
        .or_else(|| s.segments.first().map(|g| g.device))
        .unwrap_or(0)
}

/// The event `moment` is on `device` (None: the end state). The peak is the first event that
/// reaches the most allocated; when the trace never rises above where it starts, its first
/// event.
fn resolve(
    s: &AllocatorSnapshot,
    device: i64,
    moment: Moment,
) -> Result<Option<usize>, SummaryError> {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    if !s.devices().contains(&device) {
        return Err(SummaryError::NoDevice(device));
    }
    match moment {
        Moment::End => Ok(None),
        Moment::Event(k) if k < trace.len() => Ok(Some(k)),
        Moment::Event(k) => Err(SummaryError::NoEvent {
            device,
            event: k,
            len: trace.len(),
        }),
        Moment::Peak if trace.is_empty() => Ok(None),
        Moment::Peak => {
            let (start, after) = allocated_curve(s, device);
            let (mut peak, mut at) = (start, 0);
            for (i, &v) in after.iter().enumerate() {
                if v > peak {
                    (peak, at) = (v, i);
                }
            }
            Ok(Some(at))
        }
    }
}

/// What one side holds: its figures, and its live blocks by frame, by size and its pools.
struct Read {
    side: Side,
    stacks: BTreeMap<Option<Frame>, (i64, u64)>,
    sizes: BTreeMap<i64, (i64, u64)>,
    pools: BTreeMap<(i64, i64), (i64, i64)>,
}

fn read(s: &AllocatorSnapshot, device: i64, moment: Moment) -> Result<Read, SummaryError> {
    let event = resolve(s, device, moment)?;
    let trace_len = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(0, Vec::len);
    // The end state is the state after every event (`allocator_state_at` past the trace).
    let k = event.unwrap_or(trace_len);
    let stream = event
        .and_then(|k| s.traces.get(usize::try_from(device).ok()?)?.get(k))
        .filter(|e| e.action == Action::Oom)
        .map_or(0, |e| e.stream);
    let state = allocator_state_at(s, device, k);
    let fragmentation = fragmentation_of(s, &state, device, k, stream);
    let at_end = SegmentsAtEnd::of(s, device);
    let mut pools: BTreeMap<(i64, i64), (i64, i64)> = BTreeMap::new();
    for seg in &state.segments {
        let pool = at_end.containing(seg.address).map_or((0, 0), |g| g.pool_id);
        let p = pools.entry(pool).or_default();
        p.0 = p.0.saturating_add(seg.total);
        p.1 = p.1.saturating_add(seg.allocated);
    }
    let mut stacks: BTreeMap<Option<Frame>, (i64, u64)> = BTreeMap::new();
    let mut sizes: BTreeMap<i64, (i64, u64)> = BTreeMap::new();
    let (mut live_bytes, mut live_count) = (0i64, 0u64);
    for (_, size, stack) in live_blocks(s, device, event) {
        let frame = holder_frame(s.frames(stack)).cloned();
        for slot in [
            stacks.entry(frame).or_default(),
            sizes.entry(size).or_default(),
        ] {
            slot.0 = slot.0.saturating_add(size);
            slot.1 += 1;
        }
        live_bytes = live_bytes.saturating_add(size);
        live_count += 1;
    }
    Ok(Read {
        side: Side {
            device,
            moment,
            event,
            fragmentation,
            live_bytes,
            live_blocks: live_count,
        },
        stacks,
        sizes,
        pools,
    })
}

/// The groups of either side that changed, the largest change first (ties: by key).
fn changes<K: Ord + Clone>(
    a: &BTreeMap<K, (i64, u64)>,
    b: &BTreeMap<K, (i64, u64)>,
) -> Vec<Change<K>> {
    let mut keys: Vec<&K> = a.keys().chain(b.keys()).collect();
    keys.sort();
    keys.dedup();
    let mut v: Vec<Change<K>> = keys
        .into_iter()
        .map(|k| {
            let (ab, an) = a.get(k).copied().unwrap_or_default();
            let (bb, bn) = b.get(k).copied().unwrap_or_default();
            Change {
                key: k.clone(),
                a_bytes: ab,
                b_bytes: bb,
                a_blocks: an,
                b_blocks: bn,
            }
        })
        .filter(|c| c.a_bytes != c.b_bytes || c.a_blocks != c.b_blocks)
        .collect();
    v.sort_by(|x, y| {
        y.delta()
            .unsigned_abs()
            .cmp(&x.delta().unsigned_abs())
            .then_with(|| x.key.cmp(&y.key))
    });
    v
}

/// One side to compare: a snapshot, its device (None: its [`default_device`]) and the moment.
pub type SideSpec<'a> = (&'a AllocatorSnapshot, Option<i64>, Moment);

/// Compares side `a` with side `b`; they may be the same snapshot (two moments of one run).
pub fn compare_snapshots(
    (a, device_a, at_a): SideSpec<'_>,
    (b, device_b, at_b): SideSpec<'_>,
) -> Result<SnapshotComparison, SummaryError> {
    let ra = read(a, device_a.unwrap_or_else(|| default_device(a)), at_a)?;
    let rb = read(b, device_b.unwrap_or_else(|| default_device(b)), at_b)?;
    let mut keys: Vec<(i64, i64)> = ra.pools.keys().chain(rb.pools.keys()).copied().collect();
    keys.sort_unstable();
    keys.dedup();
    let mut pools: Vec<PoolChange> = keys
        .into_iter()
        .map(|pool| {
            let (ar, aa) = ra.pools.get(&pool).copied().unwrap_or_default();
            let (br, ba) = rb.pools.get(&pool).copied().unwrap_or_default();
            PoolChange {
                pool,
                a_reserved: ar,
                b_reserved: br,
                a_allocated: aa,
                b_allocated: ba,
            }
        })
        .collect();
    pools.sort_by(|x, y| {
        y.delta_reserved()
            .unsigned_abs()
            .cmp(&x.delta_reserved().unsigned_abs())
            .then(x.pool.cmp(&y.pool))
    });
    Ok(SnapshotComparison {
        stacks: changes(&ra.stacks, &rb.stacks),
        sizes: changes(&ra.sizes, &rb.sizes),
        pools,
        devices: [
            a.backend.device_label(ra.side.device),
            b.backend.device_label(rb.side.device),
        ],
        a: ra.side,
        b: rb.side,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Block, Event, Segment};

    /// One device, one 100-byte segment; `blocks` held at the end, `trace` its events.
    fn snap(blocks: &[(u64, i64)], trace: Vec<Event>, pool: (i64, i64)) -> AllocatorSnapshot {
        AllocatorSnapshot {
            segments: vec![Segment {
                device: 0,
                address: 0,
                total_size: 100,
                allocated_size: 0,
                active_size: 0,
                stream: 0,
                segment_type: "large".into(),
                is_expandable: false,
                pool_id: pool,
                blocks: blocks
                    .iter()
                    .map(|&(address, size)| Block {
                        address,
                        size,
                        requested_size: size,
                        state: "active_allocated".into(),
                        stack: 0,
                    })
                    .collect(),
            }],
            traces: vec![trace],
            ..AllocatorSnapshot::default()
        }
    }

    #[test]
    fn peaks_align_and_every_group_is_counted_once() {
        // A: 30 at 0 stays; 50 at 40 is allocated then freed (peak 80 after event 1).
        let a = snap(
            &[(0, 30)],
            vec![
                Event::bare(Action::Alloc, 0, 30),
                Event::bare(Action::Alloc, 40, 50),
                Event::bare(Action::FreeRequested, 40, 50),
                Event::bare(Action::FreeCompleted, 40, 50),
            ],
            (0, 0),
        );
        // B: 30 at 0 and 20 at 50 stay (peak 50 at its end, event 1), in a private pool.
        let b = snap(
            &[(0, 30), (50, 20)],
            vec![
                Event::bare(Action::Alloc, 0, 30),
                Event::bare(Action::Alloc, 50, 20),
            ],
            (1, 2),
        );
        let c = compare_snapshots((&a, None, Moment::Peak), (&b, None, Moment::Peak)).unwrap();
        assert_eq!((c.a.event, c.b.event), (Some(1), Some(1)));
        assert_eq!(c.a.fragmentation.allocated_bytes, 80);
        assert_eq!(c.b.fragmentation.allocated_bytes, 50);
        assert_eq!(c.delta_allocated(), -30);
        assert_eq!(c.delta_reserved(), 0);
        assert_eq!(c.delta_not_handed_out(), 30);
        // Sizes: 50 went (−50), 20 came (+20); 30 is unchanged and not listed.
        let sizes: Vec<(i64, i64)> = c.sizes.iter().map(|s| (s.key, s.delta())).collect();
        assert_eq!(sizes, vec![(50, -50), (20, 20)]);
        // Both sides' blocks have no stack: one group, 80 → 50.
        assert_eq!(c.stacks.len(), 1);
        assert_eq!((c.stacks[0].a_bytes, c.stacks[0].b_bytes), (80, 50));
        // The pool moved from the allocator's own to (1, 2).
        let pools: Vec<((i64, i64), i64)> = c
            .pools
            .iter()
            .map(|p| (p.pool, p.delta_reserved()))
            .collect();
        assert_eq!(pools, vec![((0, 0), -100), ((1, 2), 100)]);
        // The same snapshot at its end against its peak.
        let c = compare_snapshots((&a, None, Moment::Peak), (&a, None, Moment::End)).unwrap();
        assert_eq!(c.b.event, None);
        assert_eq!(c.delta_allocated(), -50);
    }

    #[test]
    fn a_missing_device_or_event_is_an_error() {
        let a = snap(&[], vec![Event::bare(Action::Alloc, 0, 30)], (0, 0));
        assert_eq!(
            compare_snapshots((&a, None, Moment::Event(5)), (&a, None, Moment::Peak)),
            Err(SummaryError::NoEvent {
                device: 0,
                event: 5,
                len: 1
            })
        );
        assert_eq!(
            compare_snapshots((&a, Some(3), Moment::Peak), (&a, Some(3), Moment::Peak)),
            Err(SummaryError::NoDevice(3))
        );
        assert!("x".parse::<Moment>().is_err());
        assert_eq!("12".parse::<Moment>(), Ok(Moment::Event(12)));
    }
}
