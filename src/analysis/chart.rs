//! The memory chart as data: which peaks to mark, how to fit the y axis to what is visible, the
//! statistics of the visible window, the value of a series at a time, and the lifetime of a
//! block to shade. Pure functions over series and reduced lines; `ui::panes::memory_chart` only
//! draws what these return.

use super::{LodSeries, Peak};
use crate::model::{NULL, RankData, TimeWindow};

/// The value of a step series in effect at `t` (ns from origin): the last sample at or before
/// `t`; `None` before the first sample.
pub fn value_at(s: &LodSeries, t: i64) -> Option<i64> {
    held_at(&s.series, t)
}

/// [`value_at`] for a plain [`Series`](super::Series).
pub fn held_at(s: &super::Series, t: i64) -> Option<i64> {
    let i = s.times.partition_point(|&x| x <= t);
    (i > 0).then(|| s.values[i - 1])
}

/// The peak of each visible series, with the series' index (for its colour and legend entry).
pub fn peak_marks(series: &[LodSeries], visible: &[bool]) -> Vec<(usize, Peak)> {
    series
        .iter()
        .enumerate()
        .filter(|(i, _)| visible.get(*i).copied().unwrap_or(false))
        .filter_map(|(i, s)| s.peak().map(|p| (i, p)))
        .collect()
}

/// The largest peak over the visible series, bytes (1 when nothing is visible): it chooses the
/// chart's unit.
pub fn largest_visible_peak(series: &[LodSeries], visible: &[bool]) -> i64 {
    peak_marks(series, visible)
        .into_iter()
        .map(|(_, p)| p.value)
        .max()
        .unwrap_or(1)
}

/// A series whose largest value in the window is below this share of the largest visible value
/// is minor: it does not pull the y axis down (a tiny Workspace curve would flatten the main
/// curves of a zoomed window into a line at the top).
pub const MINOR_SHARE: f64 = 0.05;

/// The y range that fits a window, and the visible series left below it.
#[derive(Debug, Clone, PartialEq)]
pub struct YFit {
    /// Bottom of the axis (bytes).
    pub lo: f64,
    /// Top of the axis (bytes).
    pub hi: f64,
    /// Visible series whose values in the window all lie below `lo` (minor series of a zoomed
    /// window), by index.
    pub below: Vec<usize>,
}

/// The y range (bytes) that fits the visible lines over `[v0, v1]` (ms), counting the sample
/// whose value is held into the window, padded by 8 % of the range and at least half a `unit`
/// (bytes) each side, so a flat line does not sit on the frame. Series whose largest value is
/// under `minor_share` of the largest visible value do not count (the chart passes
/// [`MINOR_SHARE`] for a zoomed window, 0 for the whole rank); with `from_zero` the axis starts
/// at 0 (or below, for negative values) and every series counts. `(0, 1)` plus padding when no
/// visible line has a sample there.
pub fn y_fit(
    lines: &[Vec<[f64; 2]>],
    visible: &[bool],
    (v0, v1): (f64, f64),
    unit: f64,
    from_zero: bool,
    minor_share: f64,
) -> YFit {
    let ranges: Vec<Option<(f64, f64)>> = lines
        .iter()
        .zip(visible)
        .map(|(line, &v)| {
            if !v {
                return None;
            }
            let a = line.partition_point(|p| p[0] <= v0).saturating_sub(1);
            let b = line.partition_point(|p| p[0] <= v1);
            line[a..b.max(a)]
                .iter()
                .fold(None, |r: Option<(f64, f64)>, p| {
                    Some(r.map_or((p[1], p[1]), |(lo, hi)| (lo.min(p[1]), hi.max(p[1]))))
                })
        })
        .collect();
    let top = ranges
        .iter()
        .flatten()
        .map(|r| r.1)
        .fold(f64::NEG_INFINITY, f64::max);
    let minor = |r: &(f64, f64)| !from_zero && top > 0.0 && r.1 >= 0.0 && r.1 < top * minor_share;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for r in ranges.iter().flatten().filter(|r| !minor(r)) {
        lo = lo.min(r.0);
        hi = hi.max(r.1);
    }
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0);
    }
    if from_zero {
        lo = lo.min(0.0);
    }
    let pad = ((hi - lo) * 0.08).max(unit * 0.5);
    let lo = if from_zero && lo == 0.0 {
        0.0
    } else {
        lo - pad
    };
    let below = ranges
        .iter()
        .enumerate()
        .filter_map(|(i, r)| r.filter(|r| r.1 < lo).map(|_| i))
        .collect();
    YFit {
        lo,
        hi: hi + pad,
        below,
    }
}

/// Min, max and change of one series over a window, bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WindowStats {
    /// The smallest value shown in the window.
    pub min: i64,
    /// The largest value shown in the window.
    pub max: i64,
    /// When the largest value is first reached in the window, ns from origin (the window's
    /// start when it is the value held into it).
    pub max_time: i64,
    /// Value at the window's end minus value at its start.
    pub change: i64,
}

/// [`WindowStats`] of each series over `window` (`None` for a series with no value there). The
/// value held into the window from an earlier sample counts as its start.
pub fn window_stats(series: &[LodSeries], window: TimeWindow) -> Vec<Option<WindowStats>> {
    let (t0, t1) = window.ns();
    series
        .iter()
        .map(|s| {
            let times = &s.series.times;
            let a = times.partition_point(|&t| t < t0);
            let b = times.partition_point(|&t| t <= t1);
            let lo = a.saturating_sub(usize::from(a > 0));
            let (mn, mx) = s.range_min_max(lo, b)?;
            let start = value_at(s, t0).unwrap_or(s.series.values[lo]);
            let end = value_at(s, t1).unwrap_or(start);
            Some(WindowStats {
                min: s.series.values[mn],
                max: s.series.values[mx],
                max_time: s.series.times[mx].max(t0),
                change: end.saturating_sub(start),
            })
        })
        .collect()
}

/// Points drawn and points there are in `[v0, v1]` (ms) over the visible series, for the
/// "sampled" notice: `lines` are the reduced lines of `series`.
pub fn sampled_counts(
    series: &[LodSeries],
    lines: &[Vec<[f64; 2]>],
    visible: &[bool],
    window: TimeWindow,
) -> (usize, usize) {
    let (t0, t1) = window.ns();
    let (v0, v1) = window.ms();
    let (mut drawn, mut total) = (0usize, 0usize);
    for ((s, line), _) in series.iter().zip(lines).zip(visible).filter(|(_, v)| **v) {
        let t = &s.series.times;
        total += t.partition_point(|&x| x <= t1) - t.partition_point(|&x| x < t0);
        drawn += line.partition_point(|p| p[0] <= v1) - line.partition_point(|p| p[0] < v0);
    }
    (drawn, total)
}

/// The peak (among `marks`) whose marker is within `radius` of `at` on screen, nearest first:
/// `to_screen` maps (time ns, value bytes) to screen points. A click near a peak snaps to it.
pub fn peak_near(
    marks: &[(usize, Peak)],
    at: (f32, f32),
    radius: f32,
    to_screen: impl Fn(i64, i64) -> (f32, f32),
) -> Option<(usize, Peak)> {
    marks
        .iter()
        .map(|&(i, p)| {
            let (x, y) = to_screen(p.time, p.value);
            ((x - at.0).hypot(y - at.1), (i, p))
        })
        .filter(|(d, _)| *d <= radius)
        .min_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, m)| m)
}

/// How the Operator Allocated curve at a time splits: the live operator_memory blocks, and what
/// they do not explain (allocated before profiling began, or not recorded).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reconciled {
    /// Operator Allocated at the time (None when the rank has no such curve or no sample yet).
    pub operator_allocated: Option<i64>,
    /// The sum of the live blocks' sizes.
    pub live_blocks: i64,
    /// `operator_allocated - live_blocks`.
    pub not_in_operator_memory: Option<i64>,
}

/// Reconciles the Overall `series` at `t` with `live_blocks` (the live blocks' total at `t`).
pub fn reconcile(series: &[LodSeries], t: i64, live_blocks: i64) -> Reconciled {
    let operator_allocated = series
        .iter()
        .find(|s| s.series.name == super::OverallCurve::OperatorAllocated.label())
        .and_then(|s| value_at(s, t));
    Reconciled {
        operator_allocated,
        live_blocks,
        not_in_operator_memory: operator_allocated.map(|a| a.saturating_sub(live_blocks)),
    }
}

/// When a block (an operator_memory row) was alive, ns from origin: `None` for an end the
/// capture does not have (allocated before it, or never released within it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockLifetime {
    /// Allocation time.
    pub allocated: Option<i64>,
    /// Release time.
    pub released: Option<i64>,
}

impl BlockLifetime {
    /// The span to shade on a chart whose whole extent is `extent`: a missing end extends to
    /// the extent's edge.
    pub fn span(self, extent: TimeWindow) -> TimeWindow {
        TimeWindow::new(
            self.allocated.unwrap_or(extent.start),
            self.released.unwrap_or(extent.end),
        )
    }
}

/// The lifetime of operator_memory row `row`; `None` when there is no such row.
pub fn block_lifetime(data: &RankData, row: usize) -> Option<BlockLifetime> {
    let o = &data.operators;
    let at = |t: i64| (t != NULL).then(|| data.rel_ns(t));
    Some(BlockLifetime {
        allocated: at(*o.alloc_time.get(row)?),
        released: at(*o.release_time.get(row)?),
    })
}

/// memory_record and operator_memory of one rank that lie far apart on the time axis (their
/// clocks differ, or Excel rounded one file's times): the whole rank then shows each as a speck.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TablesApart {
    /// memory_record's span, ns from origin.
    pub records: TimeWindow,
    /// operator_memory's span (allocations and releases), ns from origin.
    pub operators: TimeWindow,
    /// The empty stretch between them, ns.
    pub gap: i64,
}

/// How many times its longer span the gap between the two tables must be to count as apart.
pub const APART_FACTOR: i64 = 20;

/// The spans of memory_record and operator_memory when the gap between them is more than
/// [`APART_FACTOR`] times the longer span (1 ms at least); `None` when they overlap, lie close,
/// or either table is empty.
pub fn tables_apart(data: &RankData) -> Option<TablesApart> {
    let o = data.time_origin_ns;
    let rec = &data.records.time_ns;
    let records = TimeWindow::new(
        rec.first()?.saturating_sub(o),
        rec.last()?.saturating_sub(o),
    );
    let mut times = data
        .operators
        .alloc_time
        .iter()
        .chain(&data.operators.release_time)
        .filter(|&&t| t != NULL)
        .map(|&t| t.saturating_sub(o));
    let first = times.next()?;
    let (lo, hi) = times.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let operators = TimeWindow::new(lo, hi);
    let gap = if records.end < operators.start {
        operators.start.saturating_sub(records.end)
    } else if operators.end < records.start {
        records.start.saturating_sub(operators.end)
    } else {
        return None;
    };
    let longer = records.span().max(operators.span()).max(1_000_000);
    (gap / APART_FACTOR > longer).then_some(TablesApart {
        records,
        operators,
        gap,
    })
}

/// `span` widened by 5 % each side, and to 1 ms at least (a table whose rows share one time
/// still gets a window to look at).
pub fn padded(span: TimeWindow) -> TimeWindow {
    let pad = (span.span() / 20).max(500_000);
    TimeWindow::new(span.start.saturating_sub(pad), span.end.saturating_add(pad))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::analysis::Series;

    fn lod(times: &[i64], values: &[i64]) -> LodSeries {
        LodSeries::new(Series {
            name: "s".into(),
            times: times.to_vec(),
            values: values.to_vec(),
        })
    }

    #[test]
    fn stats_count_the_value_held_into_the_window() {
        let s = lod(&[0, 10, 20, 30], &[5, 9, 2, 7]);
        // [12, 25]: the 9 held from t=10, then 2 at t=20; ends at 2.
        let w = TimeWindow::new(12, 25);
        let st = window_stats(std::slice::from_ref(&s), w)[0].unwrap();
        assert_eq!((st.min, st.max, st.change), (2, 9, 2 - 9));
        assert_eq!(
            st.max_time, 12,
            "the 9 held into the window is at its start"
        );
        // Before the first sample there is nothing held.
        assert_eq!(value_at(&s, -1), None);
        assert_eq!(value_at(&s, 30), Some(7));
    }

    #[test]
    fn y_fit_covers_the_visible_lines_only_and_pads() {
        let lines = vec![
            vec![[0.0, 100.0], [1.0, 300.0], [2.0, 200.0]],
            vec![[0.0, 10_000.0]],
        ];
        let f = y_fit(&lines, &[true, false], (1.5, 2.0), 1.0, false, MINOR_SHARE);
        // Held 300 from t=1 and 200 at t=2: range 100, padded by 8.
        assert_eq!((f.lo, f.hi), (192.0, 308.0));
        // Nothing visible: a unit range.
        let f = y_fit(&lines, &[false, false], (0.0, 2.0), 2.0, false, MINOR_SHARE);
        assert_eq!((f.lo, f.hi), (-1.0, 2.0));
        // From zero.
        let f = y_fit(&lines, &[true, false], (1.5, 2.0), 1.0, true, MINOR_SHARE);
        assert_eq!((f.lo, f.hi), (0.0, 324.0));
    }

    #[test]
    fn a_tiny_curve_does_not_flatten_the_main_ones() {
        // Main curves at 60,000–61,000 in the window; a Workspace-like curve at 0–200.
        let lines = vec![
            vec![[0.0, 60_000.0], [1.0, 61_000.0]],
            vec![[0.0, 60_500.0], [1.0, 60_800.0]],
            vec![[0.0, 0.0], [1.0, 200.0]],
        ];
        let f = y_fit(
            &lines,
            &[true, true, true],
            (0.0, 2.0),
            1.0,
            false,
            MINOR_SHARE,
        );
        assert_eq!((f.lo, f.hi), (59_920.0, 61_080.0));
        assert_eq!(f.below, vec![2], "the tiny curve is below the view");
        // Alone, it is fitted like any other.
        let f = y_fit(
            &lines,
            &[false, false, true],
            (0.0, 2.0),
            1.0,
            false,
            MINOR_SHARE,
        );
        assert_eq!((f.lo, f.hi), (-16.0, 216.0));
        assert!(f.below.is_empty());
        // From zero, everything shows.
        let f = y_fit(
            &lines,
            &[true, true, true],
            (0.0, 2.0),
            1.0,
            true,
            MINOR_SHARE,
        );
        assert_eq!(f.lo, 0.0);
        assert!(f.below.is_empty());
        // The whole rank (no minor share): every visible series counts.
        let f = y_fit(&lines, &[true, true, true], (0.0, 2.0), 1.0, false, 0.0);
        assert_eq!(f.lo, -4880.0);
        assert!(f.below.is_empty());
    }

    #[test]
    fn marks_and_unit_come_from_the_visible_series() {
        let s = vec![lod(&[0, 5], &[1, 50]), lod(&[0, 7], &[900, 3])];
        assert_eq!(largest_visible_peak(&s, &[true, false]), 50);
        assert_eq!(largest_visible_peak(&s, &[true, true]), 900);
        let marks = peak_marks(&s, &[false, true]);
        assert_eq!(
            marks,
            vec![(
                1,
                Peak {
                    value: 900,
                    time: 0
                }
            )]
        );
    }

    #[test]
    fn a_click_near_a_peak_snaps_to_it() {
        let marks = vec![
            (
                0,
                Peak {
                    value: 100,
                    time: 10,
                },
            ),
            (
                1,
                Peak {
                    value: 100,
                    time: 14,
                },
            ),
        ];
        // Screen: x = time, y = -value.
        let screen = |t: i64, v: i64| (t as f32, -(v as f32));
        assert_eq!(
            peak_near(&marks, (13.0, -100.0), 3.0, screen),
            Some(marks[1])
        );
        assert_eq!(
            peak_near(&marks, (11.0, -99.0), 3.0, screen),
            Some(marks[0])
        );
        assert_eq!(peak_near(&marks, (30.0, -100.0), 3.0, screen), None);
    }

    #[test]
    fn a_missing_end_of_a_block_extends_to_the_chart_edge() {
        let life = BlockLifetime {
            allocated: None,
            released: Some(40),
        };
        assert_eq!(life.span(TimeWindow::new(0, 100)), TimeWindow::new(0, 40));
    }

    /// Records at `rec` (ns) and blocks (alloc, release) at origin 0.
    fn apart_rank(rec: &[i64], blocks: &[(i64, i64)]) -> RankData {
        use crate::model::{Component, Format, RankInfo};
        let mut d = RankData::empty(RankInfo::without_files("0", Format::TorchNpu, ".".into()));
        for &t in rec {
            std::sync::Arc::make_mut(&mut d.records).push(Component::PtaGe, t, 1, 1, 1, 0);
        }
        for &(a, r) in blocks {
            let mut cells = [NULL; crate::model::OP_I64_COLUMNS];
            cells[0] = 1;
            cells[1] = a;
            cells[2] = r;
            d.operators.push_row(0, 0, cells);
        }
        d
    }

    #[test]
    fn tables_far_apart_are_found_with_their_gap_and_close_ones_are_not() {
        const MS: i64 = 1_000_000;
        // Records over 10 ms, blocks 1 s later over 5 ms: 990 ms > 20 × 10 ms.
        let d = apart_rank(&[0, 10 * MS], &[(1000 * MS, 1003 * MS), (1002 * MS, NULL)]);
        let a = tables_apart(&d).expect("apart");
        assert_eq!(a.records, TimeWindow::new(0, 10 * MS));
        assert_eq!(a.operators, TimeWindow::new(1000 * MS, 1003 * MS));
        assert_eq!(a.gap, 990 * MS);
        // Blocks before the records count too.
        let d = apart_rank(&[1000 * MS], &[(0, MS)]);
        assert_eq!(tables_apart(&d).map(|a| a.gap), Some(999 * MS));
        // Overlapping, or a gap of only 20× the longer span: not apart.
        assert_eq!(
            tables_apart(&apart_rank(&[0, 10 * MS], &[(5 * MS, 50 * MS)])),
            None
        );
        assert_eq!(
            tables_apart(&apart_rank(&[0, 10 * MS], &[(210 * MS, 211 * MS)])),
            None
        );
        // An empty table: nothing to compare.
        assert_eq!(tables_apart(&apart_rank(&[], &[(0, 1)])), None);
        assert_eq!(tables_apart(&apart_rank(&[0], &[(NULL, NULL)])), None);
        // A window around one instant is 1 ms wide.
        assert_eq!(padded(TimeWindow::new(7, 7)).span(), MS);
    }
}
