//! The curves of each Group By (DESIGN.md "Semantics"), as step series: a memory counter holds
//! its value until the next sample.

use super::Peak;
use crate::model::{Component, NULL, RankData};

/// How the chart groups memory_record rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum GroupBy {
    /// Operator Allocated / Reserved / Activated, APP Reserved, Workspace Allocated / Reserved.
    #[default]
    Overall,
    /// Allocated / Activated / Reserved of each stream (from the `PTA+GE` rows).
    Stream,
    /// PTA (or MindSpore) and GE Allocated / Activated / Reserved, APP Reserved.
    Component,
}

impl GroupBy {
    /// All modes, in menu order.
    pub const ALL: [GroupBy; 3] = [GroupBy::Overall, GroupBy::Stream, GroupBy::Component];

    /// The name shown in menus and accepted by the CLI (lower-cased).
    pub fn label(self) -> &'static str {
        match self {
            GroupBy::Overall => "Overall",
            GroupBy::Stream => "Stream",
            GroupBy::Component => "Component",
        }
    }

    /// True when the details table shows only blocks with a stream in this mode (Stream mode
    /// lists per-stream curves, so blocks without a stream belong to none of them).
    pub fn table_requires_stream(self) -> bool {
        self == GroupBy::Stream
    }

    /// Parses `overall` / `stream` / `component` (any case).
    pub fn parse(s: &str) -> Option<GroupBy> {
        GroupBy::ALL
            .into_iter()
            .find(|g| g.label().eq_ignore_ascii_case(s))
    }
}

/// The Overall curves that have a fixed name: the legend shows it, and the `inspect` summary
/// reports each one's peak under it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OverallCurve {
    /// The operator allocator's Total Allocated.
    OperatorAllocated,
    /// The operator allocator's Total Reserved.
    OperatorReserved,
    /// The operator allocator's Total Active.
    OperatorActivated,
    /// The whole process's reserved device memory (APP rows).
    AppReserved,
}

impl OverallCurve {
    /// Every one, in the order the summary lists them.
    pub const ALL: [OverallCurve; 4] = [
        OverallCurve::OperatorAllocated,
        OverallCurve::OperatorReserved,
        OverallCurve::OperatorActivated,
        OverallCurve::AppReserved,
    ];

    /// The series' (legend) name.
    pub fn label(self) -> &'static str {
        match self {
            OverallCurve::OperatorAllocated => "Operator Allocated",
            OverallCurve::OperatorReserved => "Operator Reserved",
            OverallCurve::OperatorActivated => "Operator Activated",
            OverallCurve::AppReserved => "APP Reserved",
        }
    }

    /// This curve among `series` (the Overall series of a rank), if the rank has it.
    pub fn find(self, series: &[Series]) -> Option<&Series> {
        series.iter().find(|s| s.name == self.label())
    }
}

/// The Overall curve of the whole device's memory in use, every process's
/// ([`crate::model::DeviceMemory`]: trace_view's `NPU MEM` counters, the DB's `NPU_MEM` device
/// rows, msMemScope's `device_used`).
pub const DEVICE_CURVE: &str = "Device";

/// The [`DEVICE_CURVE`] series of `data` (ns from its origin), when it has samples.
fn device_series(data: &RankData) -> Option<Series> {
    let d = &data.device_memory;
    if d.is_empty() {
        return None;
    }
    let origin = data.time_origin_ns;
    Some(Series {
        name: DEVICE_CURVE.to_string(),
        times: d.time_ns.iter().map(|t| t.saturating_sub(origin)).collect(),
        values: d.bytes.clone(),
    })
}

/// Which quantity of a memory_record row a series plots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantity {
    /// Total Allocated.
    Allocated,
    /// Total Reserved.
    Reserved,
    /// Total Active.
    Active,
}

/// One curve: times in ns from the rank origin (ascending), values in bytes. A memory counter is
/// a step function: `values[i]` holds from `times[i]` until `times[i + 1]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Series {
    /// Legend name, e.g. `Operator Allocated`.
    pub name: String,
    /// Sample times, ns from the rank origin, non-decreasing.
    pub times: Vec<i64>,
    /// Values, bytes.
    pub values: Vec<i64>,
}

impl Series {
    /// An empty step series named `name`.
    pub fn new(name: impl Into<String>) -> Series {
        Series {
            name: name.into(),
            times: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Number of points.
    pub fn len(&self) -> usize {
        self.times.len()
    }
    /// True when there are no points.
    pub fn is_empty(&self) -> bool {
        self.times.is_empty()
    }
}

/// The component whose rows make the Overall "Operator" curves: `PTA+GE`, else `MindSpore+GE`,
/// else `GE` when the data has no PTA/MindSpore allocator rows (GE-only data).
pub fn operator_component(data: &RankData) -> Option<Component> {
    let mut present = [false; 8];
    for &c in &data.records.component {
        present[c as usize & 7] = true;
    }
    let has = |c: Component| present[c as usize];
    if has(Component::PtaGe) {
        Some(Component::PtaGe)
    } else if has(Component::MindSporeGe) {
        Some(Component::MindSporeGe)
    } else if has(Component::Ge) && !has(Component::Pta) && !has(Component::MindSpore) {
        Some(Component::Ge)
    } else {
        None
    }
}

/// A series spec: rows of `component` (and of `stream`, when given) plotting `quantity`.
struct Spec {
    name: String,
    component: Component,
    stream: Option<u32>,
    quantity: Quantity,
}

/// Builds the series of `group` for a rank. A series the data does not have is absent, never a flat zero.
///
/// Each series scans the rows on its own, the series in parallel, into room reserved once for
/// every row of its component.
pub fn build_series(data: &RankData, group: GroupBy) -> Vec<Series> {
    use rayon::prelude::*;
    let specs = specs(data, group);
    let mut per_component = [0usize; 8];
    for &c in &data.records.component {
        per_component[usize::from(c & 7)] += 1;
    }
    let origin = data.time_origin_ns;
    let mut out: Vec<Series> = specs
        .par_iter()
        .map(|sp| {
            let mut series = Series::new(sp.name.clone());
            let n = per_component[sp.component as usize];
            series.times.reserve_exact(n);
            series.values.reserve_exact(n);
            visit_one(data, sp, |t, v| {
                series.times.push(t.saturating_sub(origin));
                series.values.push(v);
            });
            series
        })
        .collect();
    out.retain(|s| !s.is_empty());
    if group == GroupBy::Overall {
        out.extend(device_series(data));
    }
    out
}

/// The peak of every series [`build_series`] would return, by name, without building them: the
/// same values (earliest time on ties) for a fraction of the time and none of the memory.
pub fn series_peaks(data: &RankData, group: GroupBy) -> Vec<(String, Peak)> {
    let specs = specs(data, group);
    let mut best: Vec<Option<Peak>> = vec![None; specs.len()];
    let origin = data.time_origin_ns;
    visit(data, &specs, |k, t, v| {
        if best[k].is_none_or(|b| v > b.value) {
            best[k] = Some(Peak {
                value: v,
                time: t.saturating_sub(origin),
            });
        }
    });
    let mut peaks: Vec<(String, Peak)> = specs
        .into_iter()
        .zip(best)
        .filter_map(|(s, p)| p.map(|p| (s.name, p)))
        .collect();
    if group == GroupBy::Overall
        && let Some(d) = device_series(data)
    {
        let mut best: Option<Peak> = None;
        for (&time, &value) in d.times.iter().zip(&d.values) {
            if best.is_none_or(|b| value > b.value) {
                best = Some(Peak { value, time });
            }
        }
        peaks.extend(best.map(|p| (d.name, p)));
    }
    peaks
}

fn specs(data: &RankData, group: GroupBy) -> Vec<Spec> {
    let mut specs = Vec::new();
    let spec = |name: &str, component, quantity| Spec {
        name: name.to_string(),
        component,
        stream: None,
        quantity,
    };
    match group {
        GroupBy::Overall => {
            if let Some(op) = operator_component(data) {
                specs.push(spec(
                    OverallCurve::OperatorAllocated.label(),
                    op,
                    Quantity::Allocated,
                ));
                if has_stream(data, op) {
                    specs.push(spec(
                        OverallCurve::OperatorActivated.label(),
                        op,
                        Quantity::Active,
                    ));
                }
                specs.push(spec(
                    OverallCurve::OperatorReserved.label(),
                    op,
                    Quantity::Reserved,
                ));
            }
            specs.push(spec(
                OverallCurve::AppReserved.label(),
                Component::App,
                Quantity::Reserved,
            ));
            specs.push(spec(
                "Workspace Allocated",
                Component::Workspace,
                Quantity::Allocated,
            ));
            specs.push(spec(
                "Workspace Reserved",
                Component::Workspace,
                Quantity::Reserved,
            ));
        }
        GroupBy::Stream => {
            for s in streams_in_order(data, Component::PtaGe) {
                let ptr = data.strings.get(s).to_string();
                for (label, q) in [
                    ("Allocated", Quantity::Allocated),
                    ("Activated", Quantity::Active),
                    ("Reserved", Quantity::Reserved),
                ] {
                    specs.push(Spec {
                        name: format!("{label} of {ptr}"),
                        component: Component::PtaGe,
                        stream: Some(s),
                        quantity: q,
                    });
                }
            }
        }
        GroupBy::Component => {
            let fw = if data
                .records
                .component
                .contains(&(Component::MindSpore as u8))
            {
                Component::MindSpore
            } else {
                Component::Pta
            };
            for c in [fw, Component::Ge] {
                for (label, q) in [
                    ("Allocated", Quantity::Allocated),
                    ("Activated", Quantity::Active),
                    ("Reserved", Quantity::Reserved),
                ] {
                    specs.push(spec(&format!("{} {label}", c.name()), c, q));
                }
            }
            specs.push(spec(
                OverallCurve::AppReserved.label(),
                Component::App,
                Quantity::Reserved,
            ));
        }
    }
    specs
}

/// True when some row of `component` carries a stream pointer (Insight shows Activated only then).
fn has_stream(data: &RankData, component: Component) -> bool {
    let r = &data.records;
    (0..r.len()).any(|i| r.component[i] == component as u8 && r.stream[i] != 0)
}

/// Stream ids of `component` rows, in order of first appearance.
fn streams_in_order(data: &RankData, component: Component) -> Vec<u32> {
    let r = &data.records;
    let mut out: Vec<u32> = Vec::new();
    for i in 0..r.len() {
        let s = r.stream[i];
        if r.component[i] == component as u8 && s != 0 && !out.contains(&s) {
            out.push(s);
        }
    }
    out
}

/// The samples of one spec, in row order: `f(absolute time, value)`.
fn visit_one(data: &RankData, sp: &Spec, mut f: impl FnMut(i64, i64)) {
    let r = &data.records;
    /// The rows' points of component `code` (and stream `want`, when given), `values` the
    /// quantity's column.
    fn points(
        r: &crate::model::MemoryRecords,
        code: u8,
        want: Option<u32>,
        values: impl Iterator<Item = i64>,
        f: &mut impl FnMut(i64, i64),
    ) {
        let rows = r.component.iter().zip(r.stream.iter()).zip(&r.time_ns);
        for (((&c, stream), &t), v) in rows.zip(values) {
            if c & 7 == code && want.is_none_or(|s| s == stream) && v != NULL {
                f(t, v);
            }
        }
    }
    let (code, want) = (sp.component as u8, sp.stream);
    match sp.quantity {
        Quantity::Allocated => points(r, code, want, r.allocated.iter().copied(), &mut f),
        Quantity::Reserved => points(r, code, want, r.reserved.iter().copied(), &mut f),
        Quantity::Active => points(r, code, want, r.active.iter(), &mut f),
    }
}

/// One pass over the records calling `f(spec index, absolute time, value)` for every point.
fn visit(data: &RankData, specs: &[Spec], mut f: impl FnMut(usize, i64, i64)) {
    let r = &data.records;
    // Specs per component code, so each row visits only the specs it can feed.
    let mut by_component: [Vec<usize>; 8] = Default::default();
    for (k, sp) in specs.iter().enumerate() {
        by_component[sp.component as usize].push(k);
    }
    for i in 0..r.len() {
        for &k in &by_component[usize::from(r.component[i] & 7)] {
            let sp = &specs[k];
            if sp.stream.is_some_and(|s| s != r.stream[i]) {
                continue;
            }
            let v = match sp.quantity {
                Quantity::Allocated => r.allocated[i],
                Quantity::Reserved => r.reserved[i],
                Quantity::Active => r.active[i],
            };
            if v != NULL {
                f(k, r.time_ns[i], v);
            }
        }
    }
}
