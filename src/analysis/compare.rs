//! Two ranks side by side: what each operator allocated on either side and the difference, and
//! which operators held the memory at each side's Operator Allocated peak.
//!
//! Names are matched across the two export formats: the text export writes a CANN operator as
//! `cann::Conv2D1` where the DB writes `Conv2D1` ([`match_key`]).

use std::collections::HashMap;

use super::{GroupBy, LiveIndex, OverallCurve, RankView, build_series, live_at, peak};
use crate::model::{Lang, RankData};

/// The columns of an operator comparison, as the CLI's table and the app's diff table (in
/// English) head them: the fields of [`OperatorDelta`] in order, sizes in KB, peaks in MB.
pub const DELTA_HEADERS: [&str; 9] = [
    "Name",
    "A(KB)",
    "B(KB)",
    "Delta(KB)",
    "A blocks",
    "B blocks",
    "A at peak(MB)",
    "B at peak(MB)",
    "Delta at peak(MB)",
];

/// [`DELTA_HEADERS`] in `lang`.
pub fn delta_headers(lang: Lang) -> [&'static str; 9] {
    match lang {
        Lang::En => DELTA_HEADERS,
        Lang::Zh => [
            "名称",
            "A(KB)",
            "B(KB)",
            "差值(KB)",
            "A 块数",
            "B 块数",
            "A 峰值时(MB)",
            "B 峰值时(MB)",
            "峰值时差值(MB)",
        ],
    }
}

/// The line that says which rows an operator comparison leaves out, when either side has some:
/// rows with a negative size (releases of memory allocated before profiling), A's then B's,
/// their sizes written by `kb` (KB).
pub fn not_counted_text(
    a: NotCounted,
    b: NotCounted,
    lang: Lang,
    kb: &dyn Fn(i64) -> String,
) -> Option<String> {
    if a.rows == 0 && b.rows == 0 {
        return None;
    }
    Some(match lang {
        Lang::En => {
            let side = |n: NotCounted| {
                format!(
                    "{} ({} KB)",
                    crate::model::plural::count(n.rows as u64, "row", "rows"),
                    kb(n.bytes)
                )
            };
            format!(
                "Not counted: rows with a negative size, releases of memory allocated before profiling: A {}, B {}.",
                side(a),
                side(b)
            )
        }
        Lang::Zh => format!(
            "未计入：大小为负的行，即采集开始前申请的内存的释放：A {} 行（{} KB），B {} 行（{} KB）。",
            a.rows,
            kb(a.bytes),
            b.rows,
            kb(b.bytes)
        ),
    })
}

/// One operator name on both sides. Bytes are the sums of the sizes of its operator_memory
/// rows with size > 0.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperatorDelta {
    /// Operator name (`Unknown` for the empty name, as the table shows it).
    pub name: String,
    /// Bytes allocated in A.
    pub a_bytes: i64,
    /// Bytes allocated in B.
    pub b_bytes: i64,
    /// Allocations in A.
    pub a_blocks: usize,
    /// Allocations in B.
    pub b_blocks: usize,
    /// Bytes of its blocks alive at A's Operator Allocated peak.
    pub a_peak_live: i64,
    /// Bytes of its blocks alive at B's Operator Allocated peak.
    pub b_peak_live: i64,
}

impl OperatorDelta {
    /// `b_bytes - a_bytes`.
    pub fn delta(&self) -> i64 {
        self.b_bytes.saturating_sub(self.a_bytes)
    }

    /// `b_peak_live - a_peak_live`: how much more this operator holds at B's peak than at A's.
    pub fn delta_at_peak(&self) -> i64 {
        self.b_peak_live.saturating_sub(self.a_peak_live)
    }
}

/// The operator_memory rows a comparison leaves out: those with a negative size, the releases
/// of memory allocated before profiling started (torch_npu writes them with `-size` and no
/// allocation). Their count and their (negative) bytes, so a sum over the raw rows can be
/// reconciled with the comparison's.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct NotCounted {
    /// Rows with a negative size.
    pub rows: usize,
    /// Their sizes summed (negative), bytes.
    pub bytes: i64,
}

/// [`NotCounted`] of `data`.
pub fn not_counted(data: &RankData) -> NotCounted {
    data.operators
        .size
        .iter()
        .filter(|&&s| s < 0)
        .fold(NotCounted::default(), |n, &s| NotCounted {
            rows: n.rows + 1,
            bytes: n.bytes.saturating_add(s),
        })
}

/// The prefix the text export puts before CANN operators' names (`cann::trans_TransData_0`)
/// and the DB export leaves out (`trans_TransData_0`).
const CANN_PREFIX: &str = "cann::";

/// The key two sides' operator names are matched by: the name without the text export's
/// `cann::` prefix.
pub fn match_key(name: &str) -> &str {
    name.strip_prefix(CANN_PREFIX).unwrap_or(name)
}

/// Per operator name (matched by [`match_key`], shown as A spells it when A has it): allocations
/// on each side and what it held at each side's peak, sorted by |Δ at peak| descending, then
/// |Δ| descending, then by name: the operators that explain the peak's change come first.
/// Every name with at least one allocation (size > 0) on either side is listed.
pub fn operator_deltas(a: &RankData, b: &RankData) -> Vec<OperatorDelta> {
    let peak_live = |d: &RankData| {
        let series = build_series(d, GroupBy::Overall);
        let t = OverallCurve::OperatorAllocated
            .find(&series)
            .and_then(peak)
            .map(|p| p.time);
        live_by_name(d, &LiveIndex::new(d), t)
    };
    deltas(a, b, peak_live(a), peak_live(b))
}

/// [`operator_deltas`] of two views, with the curves and live indexes they have already built.
pub fn view_operator_deltas(a: &RankView, b: &RankView) -> Vec<OperatorDelta> {
    let peak_live = |v: &RankView| {
        let t = v
            .series(GroupBy::Overall)
            .iter()
            .find(|s| s.series.name == OverallCurve::OperatorAllocated.label())
            .and_then(|s| s.peak())
            .map(|p| p.time);
        live_by_name(&v.data, v.live_index(), t)
    };
    deltas(&a.data, &b.data, peak_live(a), peak_live(b))
}

/// The per-name rows from both sides' operator_memory and what each side held at its peak.
fn deltas(
    a: &RankData,
    b: &RankData,
    a_live: Vec<(String, i64)>,
    b_live: Vec<(String, i64)>,
) -> Vec<OperatorDelta> {
    let mut map: HashMap<String, OperatorDelta> = HashMap::new();
    for (side, data, live) in [(Side::A, a, a_live), (Side::B, b, b_live)] {
        let o = &data.operators;
        for r in 0..o.len() {
            if o.size[r] <= 0 {
                continue;
            }
            let name = data.display_name(o.name[r]);
            let e = map
                .entry(match_key(name).to_string())
                .or_insert_with(|| empty(name));
            match side {
                Side::A => {
                    e.a_bytes = e.a_bytes.saturating_add(o.size[r]);
                    e.a_blocks += 1;
                }
                Side::B => {
                    e.b_bytes = e.b_bytes.saturating_add(o.size[r]);
                    e.b_blocks += 1;
                }
            }
        }
        for (name, bytes) in live {
            let e = map
                .entry(match_key(&name).to_string())
                .or_insert_with(|| empty(&name));
            match side {
                Side::A => e.a_peak_live = e.a_peak_live.saturating_add(bytes),
                Side::B => e.b_peak_live = e.b_peak_live.saturating_add(bytes),
            }
        }
    }
    let mut v: Vec<OperatorDelta> = map
        .into_values()
        .filter(|d| d.a_blocks + d.b_blocks > 0)
        .collect();
    v.sort_by(|x, y| {
        y.delta_at_peak()
            .unsigned_abs()
            .cmp(&x.delta_at_peak().unsigned_abs())
            .then_with(|| y.delta().unsigned_abs().cmp(&x.delta().unsigned_abs()))
            .then_with(|| x.name.cmp(&y.name))
    });
    v
}

#[derive(Clone, Copy)]
enum Side {
    A,
    B,
}

fn empty(name: &str) -> OperatorDelta {
    OperatorDelta {
        name: name.to_string(),
        a_bytes: 0,
        b_bytes: 0,
        a_blocks: 0,
        b_blocks: 0,
        a_peak_live: 0,
        b_peak_live: 0,
    }
}

/// Bytes alive per operator name at `t` (the Operator Allocated peak; none without the curve).
fn live_by_name(data: &RankData, index: &LiveIndex, t: Option<i64>) -> Vec<(String, i64)> {
    let Some(t) = t else {
        return Vec::new();
    };
    let live = live_at(data, index, t);
    live.by_name
        .into_iter()
        .map(|(id, b, _)| (data.display_name(id).to_string(), b))
        .collect()
}
