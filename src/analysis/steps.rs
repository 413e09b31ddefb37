//! Memory per training step: each step's peaks and end value, the blocks that outlive it
//! (survivors), and runs of steps whose end value keeps rising (a possible leak) with the
//! operators that account for the growth.
//!
//! Semantics (the `steps` CLI and the GUI's steps table share them):
//! - a curve's peak over a step is its maximum over `[start, end]` **including the value held
//!   at `start`**; on ties the earliest time wins;
//! - the end value is the value held at `end`;
//! - survivors are operator_memory rows with size > 0, allocated in `[start, end)`, and not
//!   released by `end` (no release time, or a release after `end`).

use super::{GroupBy, OverallCurve, Series, build_series, held_at};
use crate::model::{NULL, NameId, RankData, Step};

/// One step's figures. Times are ns from the rank origin; values bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepStats {
    /// The step as recorded (absolute times).
    pub step: Step,
    /// Start, ns from origin.
    pub start: i64,
    /// End, ns from origin.
    pub end: i64,
    /// Peak of Operator Allocated: (bytes, time).
    pub peak_allocated: Option<(i64, i64)>,
    /// Peak of Operator Reserved: (bytes, time).
    pub peak_reserved: Option<(i64, i64)>,
    /// Peak of APP Reserved: (bytes, time).
    pub peak_app: Option<(i64, i64)>,
    /// Operator Allocated held at the end.
    pub end_allocated: Option<i64>,
    /// `end_allocated` minus the previous step's (None for the first step or a missing value).
    pub change: Option<i64>,
    /// Survivor rows (operator_memory indices, file order).
    pub survivors: Vec<u32>,
    /// Sum of the survivors' sizes.
    pub survivor_bytes: i64,
}

/// A run of steps whose end value rose every time: a possible leak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Growth {
    /// Index (into the steps) of the step before the first rise.
    pub from: usize,
    /// Index of the last step of the run.
    pub to: usize,
    /// `end_allocated[to] - end_allocated[from]`.
    pub bytes: i64,
    /// Operators of the blocks allocated in steps `from + 1 ..= to` and still alive at the end of
    /// step `to`: (name, bytes, blocks), largest first.
    pub operators: Vec<(NameId, i64, usize)>,
}

impl Growth {
    /// Number of consecutive rises.
    pub fn rises(&self) -> usize {
        self.to - self.from
    }
}

/// Consecutive rises of the end value that count as growth.
pub const GROWTH_RISES: usize = 3;

/// Everything per step for a rank.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct StepReport {
    /// One entry per step, in time order.
    pub steps: Vec<StepStats>,
    /// Runs of [`GROWTH_RISES`] or more rises, longest growth first.
    pub growth: Vec<Growth>,
}

/// Computes the step report of `data` (empty when the rank has no steps).
pub fn step_report(data: &RankData) -> StepReport {
    if data.steps.is_none() {
        return StepReport::default();
    }
    let overall = build_series(data, GroupBy::Overall);
    step_report_on(data, &overall.iter().collect::<Vec<_>>())
}

/// [`step_report`] on the rank's Overall series already built (a view keeps them).
pub fn step_report_on(data: &RankData, overall: &[&Series]) -> StepReport {
    let Some(steps) = &data.steps else {
        return StepReport::default();
    };
    let curve = |c: OverallCurve| overall.iter().copied().find(|s| s.name == c.label());
    let allocated = curve(OverallCurve::OperatorAllocated);
    let reserved = curve(OverallCurve::OperatorReserved);
    let app = curve(OverallCurve::AppReserved);
    let by_alloc = AllocOrder::new(data);
    let mut out = Vec::with_capacity(steps.steps.len());
    let mut prev_end: Option<i64> = None;
    for (k, s) in steps.steps.iter().enumerate() {
        let start = data.rel_ns(s.start_ns);
        let end = data.rel_ns(s.end_ns);
        let end_allocated = allocated.and_then(|c| held_at(c, end));
        let survivors = by_alloc.survivors(data, s.start_ns, s.end_ns);
        let survivor_bytes = survivors.iter().fold(0i64, |a, &r| {
            a.saturating_add(data.operators.size[r as usize])
        });
        out.push(StepStats {
            step: *s,
            start,
            end,
            peak_allocated: allocated.and_then(|c| peak_over(c, start, end)),
            peak_reserved: reserved.and_then(|c| peak_over(c, start, end)),
            peak_app: app.and_then(|c| peak_over(c, start, end)),
            end_allocated,
            change: if k == 0 {
                None
            } else {
                prev_end
                    .zip(end_allocated)
                    .map(|(p, e)| e.saturating_sub(p))
            },
            survivors,
            survivor_bytes,
        });
        prev_end = end_allocated;
    }
    let growth = growth_runs(data, &out, &by_alloc);
    StepReport { steps: out, growth }
}

/// The maximum of a step series over `[a, b]` (ns from origin), counting the value held at `a`
/// as a sample at `a`; the earliest time on ties.
pub fn peak_over(s: &Series, a: i64, b: i64) -> Option<(i64, i64)> {
    let mut best = held_at(s, a).map(|v| (v, a));
    let i0 = s.times.partition_point(|&t| t < a);
    let i1 = s.times.partition_point(|&t| t <= b);
    for i in i0..i1 {
        let v = s.values[i];
        if best.is_none_or(|(bv, _)| v > bv) {
            best = Some((v, s.times[i]));
        }
    }
    best
}

/// operator_memory rows with a size > 0 and an allocation time, sorted by allocation time.
struct AllocOrder {
    /// (allocation time, row).
    rows: Vec<(i64, u32)>,
}

impl AllocOrder {
    fn new(data: &RankData) -> AllocOrder {
        let o = &data.operators;
        let mut rows: Vec<(i64, u32)> = (0..o.len())
            .filter(|&r| o.size[r] > 0 && o.alloc_time[r] != NULL)
            .map(|r| (o.alloc_time[r], r as u32))
            .collect();
        rows.sort_unstable();
        AllocOrder { rows }
    }

    /// Rows allocated in `[a, b)` and not released by `alive_at` (absolute ns), file order.
    fn alive_from(&self, data: &RankData, a: i64, b: i64, alive_at: i64) -> Vec<u32> {
        let i0 = self.rows.partition_point(|p| p.0 < a);
        let i1 = self.rows.partition_point(|p| p.0 < b);
        let rel = &data.operators.release_time;
        let mut out: Vec<u32> = self.rows[i0..i1]
            .iter()
            .map(|p| p.1)
            .filter(|&r| {
                let t = rel[r as usize];
                t == NULL || t > alive_at
            })
            .collect();
        out.sort_unstable();
        out
    }

    /// Survivors of the step `[a, b]` (absolute ns).
    fn survivors(&self, data: &RankData, a: i64, b: i64) -> Vec<u32> {
        self.alive_from(data, a, b, b)
    }
}

/// Runs of at least [`GROWTH_RISES`] consecutive rises of the end value whose growth the
/// rest of the profile keeps (see [`kept_to_the_end`]).
fn growth_runs(data: &RankData, steps: &[StepStats], by_alloc: &AllocOrder) -> Vec<Growth> {
    let mut runs = Vec::new();
    let mut from = 0usize;
    for k in 1..=steps.len() {
        let rose = k < steps.len()
            && matches!(
                (steps[k - 1].end_allocated, steps[k].end_allocated),
                (Some(p), Some(e)) if e > p
            );
        if rose {
            continue;
        }
        let to = k - 1;
        if to >= from + GROWTH_RISES && kept_to_the_end(steps, from, to) {
            runs.push((from, to));
        }
        from = k;
    }
    let mut out: Vec<Growth> = runs
        .into_iter()
        .map(|(from, to)| {
            let first = steps[from + 1].step.start_ns;
            let last = steps[to].step.end_ns;
            let rows = by_alloc.alive_from(data, first, last, last);
            Growth {
                from,
                to,
                bytes: steps[to]
                    .end_allocated
                    .unwrap_or(0)
                    .saturating_sub(steps[from].end_allocated.unwrap_or(0)),
                operators: by_operator(data, &rows),
            }
        })
        .collect();
    out.sort_by_key(|g| std::cmp::Reverse(g.bytes));
    out
}

/// Does the profile keep the growth of the run `from..=to`? A leak's memory stays: every later
/// step still ends at least half the run's rise above where the run began. Three rises that
/// a later step gives back (a warm-up, a cache filling then trimmed) are not a leak.
fn kept_to_the_end(steps: &[StepStats], from: usize, to: usize) -> bool {
    let (Some(base), Some(top)) = (steps[from].end_allocated, steps[to].end_allocated) else {
        return false;
    };
    let rise = top.saturating_sub(base);
    steps[to..]
        .iter()
        .filter_map(|s| s.end_allocated)
        .all(|e| e.saturating_sub(base).saturating_mul(2) >= rise)
}

/// Rows summed per operator name: (name, bytes, blocks), largest first, then by name.
pub fn by_operator(data: &RankData, rows: &[u32]) -> Vec<(NameId, i64, usize)> {
    let mut per: std::collections::HashMap<NameId, (i64, usize)> = Default::default();
    for &r in rows {
        let r = r as usize;
        let e = per.entry(data.operators.name[r]).or_default();
        e.0 = e.0.saturating_add(data.operators.size[r]);
        e.1 += 1;
    }
    let mut v: Vec<(NameId, i64, usize)> = per.into_iter().map(|(k, (b, n))| (k, b, n)).collect();
    v.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| data.strings.get(a.0).cmp(data.strings.get(b.0)))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Component, Format, NULL, RankData, RankInfo, Step, StepSource, Steps};

    fn series(points: &[(i64, i64)]) -> Series {
        Series {
            name: "x".into(),
            times: points.iter().map(|p| p.0).collect(),
            values: points.iter().map(|p| p.1).collect(),
        }
    }

    #[test]
    fn the_peak_counts_the_value_held_at_the_start_and_ties_go_to_the_earliest() {
        let s = series(&[(0, 5), (10, 9), (20, 3), (30, 9)]);
        // Only falling inside [15, 40]: the 9 held since 10 is the peak, at 15.
        assert_eq!(peak_over(&s, 15, 25), Some((9, 15)));
        // A tie with a later sample keeps the earlier time.
        assert_eq!(peak_over(&s, 15, 40), Some((9, 15)));
        assert_eq!(peak_over(&s, 0, 40), Some((9, 10)));
        // Before the first sample there is nothing held.
        assert_eq!(peak_over(&series(&[(10, 4)]), 0, 5), None);
        assert_eq!(peak_over(&series(&[(10, 4)]), 0, 10), Some((4, 10)));
    }

    /// One PTA+GE sample per (t, allocated) and blocks (size, alloc, release) at origin 0.
    fn rank(
        curve: &[(i64, i64)],
        blocks: &[(i64, i64, i64)],
        steps: &[(i64, i64, i64)],
    ) -> RankData {
        let mut d = RankData::empty(RankInfo::without_files("0", Format::TorchNpu, ".".into()));
        for &(t, v) in curve {
            std::sync::Arc::make_mut(&mut d.records).push(Component::PtaGe, t, v, v, v, 0);
        }
        let name = d.strings.intern("op");
        for &(size, a, r) in blocks {
            let mut cells = [NULL; crate::model::OP_I64_COLUMNS];
            cells[0] = size;
            cells[1] = a;
            cells[2] = r;
            d.operators.push_row(name, 0, cells);
        }
        d.steps = Some(Steps::new(
            StepSource::Db,
            steps
                .iter()
                .map(|&(id, s, e)| Step {
                    id,
                    start_ns: s,
                    end_ns: e,
                })
                .collect(),
        ));
        d
    }

    #[test]
    fn survivors_are_allocated_in_start_to_end_and_not_released_by_the_end() {
        let blocks = [
            (100, 0, NULL),  // allocated before the step: not its survivor
            (1, 10, NULL),   // at the start, never released: survivor
            (2, 15, 20),     // released exactly at the end: gone
            (4, 15, 21),     // released after the end: survivor
            (8, 20, NULL),   // allocated at the end: the next step's
            (0, 12, NULL),   // size 0: not a block
            (-16, 12, NULL), // a release of an earlier block: not a block
        ];
        let d = rank(&[(0, 100)], &blocks, &[(1, 10, 20)]);
        let r = step_report(&d);
        let rows: Vec<i64> = r.steps[0]
            .survivors
            .iter()
            .map(|&i| d.operators.size[i as usize])
            .collect();
        assert_eq!(rows, vec![1, 4]);
        assert_eq!(r.steps[0].survivor_bytes, 5);
    }

    #[test]
    fn growth_needs_three_rises_in_a_row() {
        let steps = [
            (1, 0, 9),
            (2, 10, 19),
            (3, 20, 29),
            (4, 30, 39),
            (5, 40, 49),
        ];
        // End values 10, 20, 30, 25, 35: two rises, a fall, one rise: no growth.
        let d = rank(
            &[(0, 10), (15, 20), (25, 30), (35, 25), (45, 35)],
            &[],
            &steps,
        );
        assert!(step_report(&d).growth.is_empty());
        // 10, 20, 30, 40, 40: three rises (steps 1→4), then flat.
        let blocks = [(7, 12, NULL), (3, 22, NULL), (5, 33, 34)];
        let d = rank(&[(0, 10), (15, 20), (25, 30), (35, 40)], &blocks, &steps);
        let g = step_report(&d).growth;
        assert_eq!(g.len(), 1);
        assert_eq!(
            (g[0].from, g[0].to, g[0].rises(), g[0].bytes),
            (0, 3, 3, 30)
        );
        // Blocks of steps 2..=4 alive at the end of step 4: the 7 and the 3.
        assert_eq!(g[0].operators.len(), 1);
        assert_eq!((g[0].operators[0].1, g[0].operators[0].2), (10, 2));
    }

    /// Issue 43 item 13: three rises that a later step gives back are not a leak; three rises
    /// the rest of the profile keeps (with a small dip) are.
    #[test]
    fn growth_that_a_later_step_gives_back_is_not_a_leak() {
        let steps = [
            (1, 0, 9),
            (2, 10, 19),
            (3, 20, 29),
            (4, 30, 39),
            (5, 40, 49),
            (6, 50, 59),
        ];
        // 10, 20, 30, 40, then 15, 20: +30 over three steps, then −25: no leak.
        let d = rank(
            &[(0, 10), (15, 20), (25, 30), (35, 40), (45, 15), (55, 20)],
            &[],
            &steps,
        );
        assert!(step_report(&d).growth.is_empty());
        // 10, 20, 30, 40, then 36, 38: the rise stays (a dip of 4): a leak of +30.
        let d = rank(
            &[(0, 10), (15, 20), (25, 30), (35, 40), (45, 36), (55, 38)],
            &[],
            &steps,
        );
        let g = step_report(&d).growth;
        assert_eq!(g.len(), 1);
        assert_eq!((g[0].from, g[0].to, g[0].bytes), (0, 3, 30));
    }
}
