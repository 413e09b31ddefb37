//! Where the memory is at one time: the device total split into what each layer holds, so that
//! the parts add up to the outermost curve the data has (Device, else APP Reserved, else
//! Operator Reserved).

use super::{LodSeries, OverallCurve, value_at};
use crate::model::RankData;

/// One layer of the breakdown.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Part {
    /// Blocks alive in operator_memory.
    LiveBlocks,
    /// Operator Allocated that operator_memory does not hold (allocated before profiling).
    Unattributed,
    /// Operator Reserved − Operator Allocated: cached or fragmented in the framework's pool.
    PoolCached,
    /// Workspace Reserved.
    Workspace,
    /// APP Reserved − Operator Reserved − Workspace: CANN runtime and other components.
    Runtime,
    /// Device − APP Reserved: other processes on the device.
    OtherProcesses,
}

impl Part {
    /// Every part, innermost first (the order of the stacked bar).
    pub const ALL: [Part; 6] = [
        Part::LiveBlocks,
        Part::Unattributed,
        Part::PoolCached,
        Part::Workspace,
        Part::Runtime,
        Part::OtherProcesses,
    ];
}

/// The breakdown at a time: each present part in [`Part::ALL`] order, and the total they add to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Breakdown {
    /// (part, bytes); a part the data cannot tell is absent. Bytes can be negative when the
    /// profiler's curves disagree (they are sampled at different times).
    pub parts: Vec<(Part, i64)>,
    /// The outermost curve at that time: what the parts add up to.
    pub total: Option<i64>,
    /// The largest npu_module_mem components at that time (not APP), for naming `Runtime`.
    pub components: Vec<(String, i64)>,
}

/// The breakdown at `t` (ns from origin), from the Overall `series`, the live blocks' total, and
/// the device counter.
pub fn breakdown_at(data: &RankData, series: &[LodSeries], t: i64, live_blocks: i64) -> Breakdown {
    let curve = |name: &str| {
        series
            .iter()
            .find(|s| s.series.name == name)
            .and_then(|s| value_at(s, t))
    };
    let allocated = curve(OverallCurve::OperatorAllocated.label());
    let reserved = curve(OverallCurve::OperatorReserved.label());
    let app = curve(OverallCurve::AppReserved.label());
    let workspace = curve("Workspace Reserved");
    let device = data
        .device_memory
        .held_at(data.time_origin_ns.saturating_add(t));
    let mut parts = vec![(Part::LiveBlocks, live_blocks)];
    if let Some(a) = allocated {
        parts.push((Part::Unattributed, a.saturating_sub(live_blocks)));
    }
    if let (Some(r), Some(a)) = (reserved, allocated) {
        parts.push((Part::PoolCached, r.saturating_sub(a)));
    }
    if let Some(w) = workspace {
        parts.push((Part::Workspace, w));
    }
    // What the parts so far add up to (the operator pool, or its blocks, plus workspace).
    let inner = reserved
        .or(allocated)
        .unwrap_or(live_blocks)
        .saturating_add(workspace.unwrap_or(0));
    if let Some(p) = app {
        parts.push((Part::Runtime, p.saturating_sub(inner)));
    }
    if let (Some(d), Some(p)) = (device, app) {
        parts.push((Part::OtherProcesses, d.saturating_sub(p)));
    }
    let total = match (device, app) {
        (Some(d), Some(_)) => Some(d),
        (_, Some(p)) => Some(p),
        _ => Some(inner),
    };
    Breakdown {
        parts,
        total,
        components: components_at(data, t),
    }
}

/// npu_module_mem rows looked at before the cursor.
const COMPONENT_LOOKBACK: usize = 10_000;

/// npu_module_mem components (not APP) held at `t`, largest first.
fn components_at(data: &RankData, t: i64) -> Vec<(String, i64)> {
    let m = &data.modules;
    let abs = data.time_origin_ns.saturating_add(t);
    let end = m.time_ns.partition_point(|&x| x <= abs);
    // Every component is sampled about every 20 ms: the last few thousand rows hold each one's
    // latest value (looking further back would cost a scan of the whole table a frame).
    let mut last: std::collections::HashMap<u32, i64> = Default::default();
    for i in (end.saturating_sub(COMPONENT_LOOKBACK)..end).rev() {
        last.entry(m.component[i]).or_insert(m.reserved[i]);
    }
    let mut v: Vec<(String, i64)> = last
        .into_iter()
        .map(|(c, b)| (data.strings.get(c).to_string(), b))
        .filter(|(n, b)| *b > 0 && !n.eq_ignore_ascii_case("APP"))
        .collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    v
}
