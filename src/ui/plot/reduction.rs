//! The chart's reduced lines and when to recompute them.
//!
//! A reduction covers a time range at a scale (ns per column). While the visible window stays
//! inside it at (nearly) the same scale it is reused, so panning costs nothing; it is made 3×
//! wider than the window at a steady scale for that reason, and exactly as wide while the scale
//! changes (a zoom in progress cannot reuse it anyway).
//!
//! Small ranks are reduced on the UI thread, so every frame shows the exact window. For big ones
//! (`background_min_points`) a frame never waits: the reduction runs on the thread pool while the
//! chart keeps drawing the previous lines (egui_plot places them at the new scale), and the
//! result replaces them a frame or two later. This keeps zoom frames of a 10M-point rank as cheap
//! as pan frames.

use std::sync::Arc;

use super::super::jobs::{Job, JobKey, Jobs, Place, Poll};
use crate::analysis::{DEFAULT_THRESHOLD, GroupBy, LodSeries, RankView, ViewId};
use crate::model::{TimeWindow, ns_to_ms};

/// The job that reduces a comparison's baseline lines (beside the rank's own, not cancelling them).
pub const REDUCE_BASELINE_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("reduce_baseline", "drawing the baseline", "绘制基线");

/// The job that reduces the memory chart's lines (only the newest window matters).
pub const REDUCE_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("reduce", "drawing the chart", "绘制图表");

/// How much wider than the visible range a reduction is made on each side, so panning reuses it.
const OVERSCAN: i64 = 1;

/// Points (all series together) from which reductions run off the UI thread.
pub const BACKGROUND_MIN_POINTS: usize = 2_000_000;

/// What a reduction is of: a rank's view, a Group By and the chart width in columns.
#[derive(Debug, Clone, PartialEq)]
struct Source {
    view: ViewId,
    group: GroupBy,
    width: usize,
}

/// What to reduce: the source, the covered range (ns) and its number of columns.
#[derive(Debug, Clone)]
struct Target {
    source: Source,
    covered: (i64, i64),
    columns: usize,
}

impl Target {
    fn ns_per_column(&self) -> f64 {
        (self.covered.1 - self.covered.0).max(1) as f64 / self.columns as f64
    }

    /// True when this target serves window `[t0, t1]` of `source` at `ns_per_column`: it covers
    /// the window, at the same scale and on the same column grid (shifted by whole columns, as
    /// a drag by whole pixels does), so its columns are the window's pixel columns. Sampled
    /// lines promise less and are reused within 10 % of the scale, on any grid.
    fn serves(
        &self,
        source: &Source,
        (t0, t1): (i64, i64),
        ns_per_column: f64,
        sampled: bool,
    ) -> bool {
        let own = self.ns_per_column();
        let same_scale = if sampled {
            (ns_per_column / own - 1.0).abs() < 0.1
        } else {
            // The window's ends are whole ns, so its span may differ by a nanosecond or two.
            ((ns_per_column - own) * self.source.width as f64).abs() <= 2.0
        };
        let offset = (t0 - self.covered.0) as f64 / own;
        let on_grid = sampled || (offset - offset.round()).abs() < 0.02;
        self.source == *source
            && t0 >= self.covered.0
            && t1 <= self.covered.1
            && same_scale
            && on_grid
    }
}

/// Reduced, step-shaped lines of every series of a Group By.
pub struct Lines {
    target: Target,
    /// Samples per series, (ms, bytes): each value holds until the next (the step is drawn by
    /// `StepLine`).
    pub lines: Vec<Vec<[f64; 2]>>,
    /// True when LTTB sampling was used (too many points in view for exact mode).
    pub sampled: bool,
}

fn reduce(series: &[LodSeries], target: Target, exact_max: usize) -> Lines {
    use rayon::prelude::*;
    let (c0, c1) = target.covered;
    let columns = target.columns;
    let threshold = exact_max.saturating_mul(columns / target.source.width.max(1));
    let reduced: Vec<crate::analysis::Reduced> = series
        .par_iter()
        .map(|s| s.reduce(c0, c1, columns, threshold))
        .collect();
    let sampled = reduced.iter().any(|r| r.sampled);
    let lines = reduced
        .iter()
        .map(|r| {
            r.times
                .iter()
                .zip(&r.values)
                .map(|(&t, &v)| [ns_to_ms(t), v as f64])
                .collect()
        })
        .collect();
    Lines {
        target,
        lines,
        sampled,
    }
}

/// The current lines, and the reduction running in the background, if any.
pub struct ReductionCache {
    current: Option<Lines>,
    /// The background reduction (under [`REDUCE_JOB`]: a newer one cancels it).
    pending: Option<(Target, Job<Lines>)>,
    /// Series with at least this many points in all are reduced off the UI thread.
    pub background_min_points: usize,
    /// Points in view up to which a series is drawn exactly; above, it is sampled.
    pub exact_max_points: usize,
    /// The window asked for last frame (to tell a view in motion from one held still).
    last_window: Option<(i64, i64)>,
    /// The key its background reductions run under.
    key: JobKey,
}

impl Default for ReductionCache {
    fn default() -> Self {
        ReductionCache {
            current: None,
            pending: None,
            background_min_points: BACKGROUND_MIN_POINTS,
            exact_max_points: DEFAULT_THRESHOLD,
            last_window: None,
            key: JobKey::new(REDUCE_JOB),
        }
    }
}

impl ReductionCache {
    /// A cache whose background reductions run under `key` (a second chart's lines do not
    /// cancel the first's).
    pub fn with_key(key: JobKey) -> ReductionCache {
        ReductionCache {
            key,
            ..ReductionCache::default()
        }
    }

    /// Lines for `window` of `group` in `view`, `width` columns wide: the exact window's, or for
    /// a big rank possibly the previous window's while the new one is computed by a job of
    /// `jobs` (which wakes the UI when done); `repaint` asks for one more frame. `None` only when
    /// there are no series.
    pub fn lines(
        &mut self,
        view: &Arc<RankView>,
        group: GroupBy,
        window: TimeWindow,
        width: usize,
        jobs: &mut Jobs,
        repaint: impl Fn(),
    ) -> Option<&Lines> {
        let (t0, t1) = window.ns();
        let source = Source {
            view: view.id(),
            group,
            width,
        };
        if let Some((_, job)) = &self.pending {
            match job.poll() {
                Poll::Msg(done) => {
                    self.pending = None;
                    if done.target.source == source {
                        self.current = Some(done);
                    }
                }
                Poll::Finished | Poll::Failed(_) => self.pending = None,
                Poll::Pending => {}
            }
        }
        let scale = (t1 - t0).max(1) as f64 / width.max(1) as f64;
        let current_serves = self
            .current
            .as_ref()
            .is_some_and(|c| c.target.serves(&source, (t0, t1), scale, c.sampled));
        if current_serves {
            return self.current.as_ref();
        }
        let same_source = self
            .current
            .as_ref()
            .is_some_and(|c| c.target.source == source);
        let zooming = self.current.as_ref().is_some_and(|c| {
            c.target.source == source && (scale / c.target.ns_per_column() - 1.0).abs() >= 0.1
        });
        let overscan = if zooming { 0 } else { OVERSCAN };
        let span = (t1 - t0).max(1);
        let target = Target {
            source: source.clone(),
            covered: (
                t0.saturating_sub(span * overscan),
                t1.saturating_add(span * overscan),
            ),
            columns: width.max(1) * (1 + 2 * overscan as usize),
        };
        let series = view.series(group);
        let points: usize = series.iter().map(|s| s.series.len()).sum();
        let big = points >= self.background_min_points;
        let held_still = self.last_window.replace((t0, t1)) == Some((t0, t1));
        // A big rank's pan in progress keeps drawing lines that cover the window at this scale
        // on a grid up to a pixel off, and makes them exact once the view holds still: a job a
        // frame would only compete with drawing for the cores.
        let nearly = self
            .current
            .as_ref()
            .is_some_and(|c| c.target.serves(&source, (t0, t1), scale, true));
        if big && nearly && !held_still {
            repaint(); // one more frame, to see whether the view holds still
            return self.current.as_ref();
        }
        if !big || !same_source {
            // Small, or nothing to show meanwhile: reduce now.
            self.pending = None; // dropping the handle cancels it
            self.current = Some(reduce(series, target, self.exact_max_points));
            return self.current.as_ref();
        }
        let pending_serves = self
            .pending
            .as_ref()
            .is_some_and(|(p, _)| p.serves(&source, (t0, t1), scale, false));
        if !pending_serves {
            let view = Arc::clone(view);
            let job = target.clone();
            let exact_max = self.exact_max_points;
            // A job superseded before it started (a newer window is queued) never runs.
            let handle = jobs.run(self.key.clone(), Place::Pool, move |_| {
                reduce(view.series(group), job, exact_max)
            });
            self.pending = Some((target, handle));
        }
        self.current.as_ref()
    }

    /// True while a background reduction runs.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }
}

impl Lines {
    /// The time range (ns) these lines cover.
    pub fn covered(&self) -> (i64, i64) {
        self.target.covered
    }
}
