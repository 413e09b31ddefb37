//! A snapshot beside a profile of the same run, joined by time (issue 45, part 4): each of the
//! snapshot's allocations is matched to the profile's allocation of the same size at the same
//! moment, and so gets the profile's operator name and step.
//!
//! The clocks: a CUDA snapshot's `time_us` is Unix time in µs; a PyTorch profiler trace's `ts`
//! counts from `baseTimeNanoseconds` (its header), so profile ns + base = Unix ns. torch_npu
//! snapshots record no times: they cannot be joined by time, and say so.
//!
//! The match: the snapshot's `alloc` events of the device, in trace order, each take the
//! profile allocation of the same size (the profile's rounded up to 512 bytes, see
//! `same_size`) nearest in time within [`TOLERANCE_NS`] that no earlier
//! event took (ties: the earlier allocation), once the clocks' offset is taken out: the most
//! common difference, in 2 µs bins, between an allocation event and a profile allocation of its
//! size within the tolerance (so that two clocks a little apart do not pair an allocation with
//! its neighbour of the same size).

use std::collections::BTreeMap;

use super::model::{Action, AllocatorSnapshot};
use super::summary::live_blocks_with_alloc;
use crate::model::{NULL, RankData};

/// How far apart in time one allocation may be in the two records: both clocks read the same
/// moment within microseconds; a millisecond leaves room and no doubt.
pub const TOLERANCE_NS: i64 = 1_000_000;

/// The CUDA caching allocator's smallest block: it rounds every request up to a multiple of
/// this many bytes (`kMinBlockSize`).
const MIN_BLOCK_BYTES: i64 = 512;

/// Whether a profile allocation of `profile_bytes` can be the snapshot's allocation of `size`.
/// The two record sizes differently: the profiler reports the block the allocator handed out,
/// rounded up to [`MIN_BLOCK_BYTES`], while the snapshot's history keeps the size asked for (a
/// 4-byte scalar is 512 bytes in the profile: seen on an H100 with torch 2.11).
fn same_size(profile_bytes: i64, size: i64) -> bool {
    profile_bytes == size
        || (size > 0
            && size
                .checked_add(MIN_BLOCK_BYTES - 1)
                .is_some_and(|s| s / MIN_BLOCK_BYTES * MIN_BLOCK_BYTES == profile_bytes))
}

/// Why a snapshot and a profile cannot be joined.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JoinError {
    /// The snapshot's events have no times (torch_npu writes none).
    #[error(
        "the snapshot's events have no times (time_us), so it cannot be joined to a profile by \
         time; torch_npu snapshots record none"
    )]
    NoTimes,
    /// The profile's clock is not known in Unix time.
    #[error(
        "the profile does not say when its clock started (a PyTorch trace's baseTimeNanoseconds), \
         so its times cannot be set beside the snapshot's"
    )]
    NoClock,
    /// The two records do not overlap in time.
    #[error(
        "the snapshot and the profile do not overlap in time ({}): they are not of the same \
         run, or not of the same part of it",
        gap_text(*.gap_ns)
    )]
    NoOverlap {
        /// How far apart they are (ns): positive when the snapshot comes after the profile's
        /// last allocation, negative when it ends before its first; 0 when the profile has no
        /// allocation.
        gap_ns: i64,
    },
}

/// A live block of the snapshot with what the profile says of it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JoinedBlock {
    /// Its address.
    pub addr: u64,
    /// Its size.
    pub size: i64,
    /// The snapshot event that allocated it.
    pub event: usize,
    /// The matched profile allocation's time, on the profile's clock (ns); None: unmatched.
    pub profile_ns: Option<i64>,
    /// The profile's operator that allocated it ("" when the profile names none).
    pub op: Option<String>,
    /// The profile's step it was allocated in.
    pub step: Option<i64>,
}

/// Live bytes of one (operator, step).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct JoinedGroup {
    /// The operator (None: not matched to the profile).
    pub op: Option<String>,
    /// The step (None: outside every step, or not matched).
    pub step: Option<i64>,
    /// Bytes.
    pub bytes: i64,
    /// Blocks.
    pub blocks: u64,
}

/// The join at one moment of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ProfileJoin {
    /// The device of the snapshot.
    pub device: i64,
    /// The event whose live blocks are named (the allocated peak by default).
    pub at_event: Option<usize>,
    /// The profile's `baseTimeNanoseconds`.
    pub base_time_ns: i64,
    /// How far the profile's clock read ahead of the snapshot's for the same allocation (ns):
    /// the most common difference between allocations of one size (see the module doc).
    pub clock_offset_ns: i64,
    /// The snapshot's `alloc` events of the device.
    pub alloc_events: usize,
    /// Of those, within the profile's span.
    pub in_profile: usize,
    /// Of those, matched to a profile allocation.
    pub matched: usize,
    /// The live blocks at `at_event` by operator and step, heaviest first.
    pub live: Vec<JoinedGroup>,
    /// Every live block at `at_event` allocated in the trace, in address order.
    pub blocks: Vec<JoinedBlock>,
    /// What the profile says of each event of the device's trace, by index: for a matched
    /// `alloc`, its operator ("" when the profile names none) and step. Not in the JSON (the
    /// app's band tooltips name a band's operator with it).
    #[serde(skip)]
    pub event_ops: Vec<EventOp>,
}

/// What the profile says of one event: `Some((operator, step))` for a matched allocation.
pub type EventOp = Option<(std::sync::Arc<str>, Option<i64>)>;

/// Whether every event of `device` has a time (what a join needs; CUDA writes them, torch_npu
/// does not).
pub fn has_times(snap: &AllocatorSnapshot, device: i64) -> bool {
    let trace = snap.trace(device);
    !trace.is_empty() && trace.iter().all(|e| e.time_us.is_some())
}

/// Joins `device` of `snap` to `profile` (its clock starting at Unix ns `base_time_ns`), naming
/// the live blocks just after event `at` (None: the end).
pub fn join_profile(
    snap: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
    profile: &RankData,
    base_time_ns: Option<i64>,
) -> Result<ProfileJoin, JoinError> {
    if !has_times(snap, device) {
        return Err(JoinError::NoTimes);
    }
    let trace = snap.trace(device);
    let base = base_time_ns.ok_or(JoinError::NoClock)?;
    // Each event's time on the profile's clock.
    let ns_of = |us: i64| us.saturating_mul(1000).saturating_sub(base);
    let ops = &profile.operators;
    // The profile's allocations of the device in time order (ties: file order).
    let mut rows: Vec<usize> = (0..ops.len())
        .filter(|&r| ops.size[r] > 0 && ops.alloc_time[r] != NULL)
        .collect();
    rows.sort_by_key(|&r| ops.alloc_time[r]);
    let (Some(&first), Some(&last)) = (rows.first(), rows.last()) else {
        return Err(JoinError::NoOverlap { gap_ns: 0 });
    };
    let (p0, p1) = (ops.alloc_time[first], ops.alloc_time[last]);
    let times: Vec<i64> = trace
        .iter()
        .map(|e| ns_of(e.time_us.unwrap_or(0)))
        .collect();
    let (s0, s1) = (
        times.iter().copied().min().unwrap_or(0),
        times.iter().copied().max().unwrap_or(0),
    );
    let in_span =
        |t: i64| t >= p0.saturating_sub(TOLERANCE_NS) && t <= p1.saturating_add(TOLERANCE_NS);
    if !times.iter().any(|&t| in_span(t)) {
        let gap_ns = if s1 < p0 { s1 - p0 } else { s0 - p1 };
        return Err(JoinError::NoOverlap { gap_ns });
    }
    // The clocks' offset: the most common difference (in 2 µs bins) between an allocation
    // event and a profile allocation of its size within the tolerance. The true offset pairs
    // every allocation with its own; a wrong pairing falls anywhere.
    let offset = clock_offset(trace, &times, &rows, ops, &in_span);
    let (matched_row, (alloc_events, in_profile, matched)) =
        match_allocations(trace, &times, &rows, ops, offset, &in_span);
    let steps = profile
        .steps
        .as_ref()
        .map(|s| s.steps.as_slice())
        .unwrap_or(&[]);
    let step_at = |t: i64| {
        steps
            .iter()
            .find(|s| s.start_ns <= t && t < s.end_ns)
            .map(|s| s.id)
    };
    let blocks: Vec<JoinedBlock> = live_blocks_with_alloc(snap, device, at)
        .into_iter()
        .filter_map(|(addr, size, k)| {
            let k = k?;
            let row = matched_row[k];
            Some(JoinedBlock {
                addr,
                size,
                event: k,
                profile_ns: row.map(|r| ops.alloc_time[r]),
                op: row.map(|r| profile.strings.get(ops.name[r]).to_string()),
                step: row.and_then(|r| step_at(ops.alloc_time[r])),
            })
        })
        .collect();
    let mut groups: BTreeMap<(Option<String>, Option<i64>), (i64, u64)> = BTreeMap::new();
    for b in &blocks {
        let g = groups.entry((b.op.clone(), b.step)).or_default();
        g.0 = g.0.saturating_add(b.size);
        g.1 += 1;
    }
    let mut live: Vec<JoinedGroup> = groups
        .into_iter()
        .map(|((op, step), (bytes, blocks))| JoinedGroup {
            op,
            step,
            bytes,
            blocks,
        })
        .collect();
    live.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(b.blocks.cmp(&a.blocks)));
    // Each operator's name once, shared by its events.
    let mut names: rustc_hash::FxHashMap<u32, std::sync::Arc<str>> = Default::default();
    let event_ops = matched_row
        .iter()
        .map(|row| {
            let r = (*row)?;
            let name = names
                .entry(ops.name[r])
                .or_insert_with(|| profile.strings.get(ops.name[r]).into());
            Some((std::sync::Arc::clone(name), step_at(ops.alloc_time[r])))
        })
        .collect();
    Ok(ProfileJoin {
        device,
        at_event: at,
        base_time_ns: base,
        clock_offset_ns: offset,
        alloc_events,
        in_profile,
        matched,
        live,
        blocks,
        event_ops,
    })
}

/// The width of the bins the clocks' offset is counted in (ns).
const OFFSET_BIN_NS: i64 = 2_000;

/// The most common (allocation time − event time) over every `alloc` event within the span and
/// every profile allocation of its size within [`TOLERANCE_NS`] of it, counted in
/// [`OFFSET_BIN_NS`] bins; the middle of the fullest bin (ties: the bin nearest 0, then the
/// lower). 0 without any pair.
fn clock_offset(
    trace: &[super::model::Event],
    times: &[i64],
    rows: &[usize],
    ops: &crate::model::OperatorMemory,
    in_span: &dyn Fn(i64) -> bool,
) -> i64 {
    let mut bins: rustc_hash::FxHashMap<i64, u64> = rustc_hash::FxHashMap::default();
    for (k, e) in trace.iter().enumerate() {
        let t = times[k];
        if e.action != Action::Alloc || !in_span(t) {
            continue;
        }
        let lo = rows.partition_point(|&r| ops.alloc_time[r] < t.saturating_sub(TOLERANCE_NS));
        let hi = rows.partition_point(|&r| ops.alloc_time[r] <= t.saturating_add(TOLERANCE_NS));
        for &r in &rows[lo..hi] {
            if same_size(ops.size[r], e.size) {
                let d = ops.alloc_time[r].saturating_sub(t);
                *bins.entry(d.div_euclid(OFFSET_BIN_NS)).or_default() += 1;
            }
        }
    }
    bins.into_iter()
        .max_by_key(|&(bin, n)| (n, std::cmp::Reverse((bin.unsigned_abs(), bin))))
        .map_or(0, |(bin, _)| {
            bin.saturating_mul(OFFSET_BIN_NS) + OFFSET_BIN_NS / 2
        })
}

/// Each event's matched profile allocation (a row of `ops`), and (alloc events, within the
/// span, matched): the `alloc` events in trace order, each at `times[k] + offset`, take the
/// allocation of equal size nearest in time within [`TOLERANCE_NS`] not taken before (ties:
/// the earlier). `rows`: the allocations in time order.
fn match_allocations(
    trace: &[super::model::Event],
    times: &[i64],
    rows: &[usize],
    ops: &crate::model::OperatorMemory,
    offset: i64,
    in_span: &dyn Fn(i64) -> bool,
) -> (Vec<Option<usize>>, (usize, usize, usize)) {
    let mut used = vec![false; rows.len()];
    let mut matched_row: Vec<Option<usize>> = vec![None; trace.len()];
    let (mut alloc_events, mut in_profile, mut matched) = (0, 0, 0);
    for (k, e) in trace.iter().enumerate() {
        if e.action != Action::Alloc {
            continue;
        }
        alloc_events += 1;
        if !in_span(times[k]) {
            continue;
        }
        in_profile += 1;
        let t = times[k].saturating_add(offset);
        let lo = rows.partition_point(|&r| ops.alloc_time[r] < t.saturating_sub(TOLERANCE_NS));
        let hi = rows.partition_point(|&r| ops.alloc_time[r] <= t.saturating_add(TOLERANCE_NS));
        let best = (lo..hi)
            .filter(|&i| !used[i] && same_size(ops.size[rows[i]], e.size))
            .min_by_key(|&i| (ops.alloc_time[rows[i]].abs_diff(t), i));
        if let Some(i) = best {
            used[i] = true;
            matched_row[k] = Some(rows[i]);
            matched += 1;
        }
    }
    (matched_row, (alloc_events, in_profile, matched))
}

/// A [`JoinError::NoOverlap`] gap for reading: `the snapshot's last event is 8.21 s before the
/// profile's first allocation`.
pub fn gap_text(gap_ns: i64) -> String {
    let secs = |ns: i64| format!("{:.2} s", ns.unsigned_abs() as f64 / 1e9);
    match gap_ns.cmp(&0) {
        std::cmp::Ordering::Less => format!(
            "the snapshot's last event is {} before the profile's first allocation",
            secs(gap_ns)
        ),
        std::cmp::Ordering::Greater => format!(
            "the snapshot's first event is {} after the profile's last allocation",
            secs(gap_ns)
        ),
        std::cmp::Ordering::Equal => "the profile has no allocations".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_matches_its_rounded_block() {
        // The profiler reports the 512-byte block, the snapshot the 4 bytes asked for.
        assert!(same_size(512, 4));
        assert!(same_size(512, 512));
        assert!(same_size(1024, 513));
        assert!(same_size(16_777_216, 16_777_216));
        assert!(!same_size(1024, 512));
        assert!(!same_size(512, 0));
        assert!(!same_size(512, 513));
        assert!(!same_size(i64::MAX, i64::MAX - 3));
    }

    #[test]
    fn the_gap_says_which_side_and_how_far() {
        let g = gap_text(-8_210_000_000);
        assert_eq!(
            g,
            "the snapshot's last event is 8.21 s before the profile's first allocation"
        );
        let g = gap_text(2_500_000_000);
        assert!(
            g.ends_with("2.50 s after the profile's last allocation"),
            "{g}"
        );
        assert_eq!(gap_text(0), "the profile has no allocations");
    }
}
