//! The chart's reductions: a big rank's are computed off the UI thread, and what arrives is
//! exactly what the UI thread would have computed itself.

use crate::common;

use std::sync::Arc;
use std::time::Duration;

use common::{fixtures, load_first};
use memsight::analysis::{GroupBy, RankView};
use memsight::model::TimeWindow;
use memsight::ui::jobs::Jobs;
use memsight::ui::plot::reduction::ReductionCache;

/// The window `(a, b)` ns.
fn w((a, b): (i64, i64)) -> TimeWindow {
    TimeWindow::new(a, b)
}

/// A job runner whose jobs report on a channel when they finish.
fn jobs_reporting() -> (Jobs, std::sync::mpsc::Receiver<()>) {
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    let jobs = Jobs::with_wake(move || {
        let _ = tx.lock().map(|t| t.send(()));
    });
    (jobs, rx)
}

fn view() -> Arc<RankView> {
    Arc::new(RankView::new(load_first(&common::first_subdir(
        &fixtures().join("torch_cluster"),
    ))))
}

#[test]
fn a_big_ranks_zoom_shows_the_old_lines_until_the_new_ones_arrive() {
    let view = view();
    let (mut jobs, rx) = jobs_reporting();
    let (e0, e1) = view.time_extent();
    let zoomed = (e0 + (e1 - e0) / 4, e0 + (e1 - e0) / 3);
    let width = 800;

    // Everything counts as big here.
    let mut background = ReductionCache::default();
    background.background_min_points = 0;
    let full = background
        .lines(
            &view,
            GroupBy::Overall,
            w((e0, e1)),
            width,
            &mut jobs,
            || {},
        )
        .expect("series")
        .lines
        .clone();
    assert!(
        !background.is_pending(),
        "the first lines are computed at once"
    );

    // A zoom: the frame gets the previous lines back, unchanged, and a job starts.
    let first = background
        .lines(&view, GroupBy::Overall, w(zoomed), width, &mut jobs, || {})
        .expect("series");
    assert_eq!(first.lines, full);
    assert!(background.is_pending());
    // The bound only turns a hang into a named failure (as common::step_until: ten minutes).
    rx.recv_timeout(Duration::from_secs(600))
        .expect("the background reduction wakes the UI");

    let arrived = background
        .lines(&view, GroupBy::Overall, w(zoomed), width, &mut jobs, || {})
        .expect("series");
    assert_eq!(arrived.covered(), zoomed, "a zoom reduces just the window");
    let arrived = arrived.lines.clone();
    assert_ne!(arrived, full);

    // The same window reduced on the UI thread.
    let mut foreground = ReductionCache::default();
    foreground.background_min_points = usize::MAX;
    foreground.lines(
        &view,
        GroupBy::Overall,
        w((e0, e1)),
        width,
        &mut jobs,
        || {},
    );
    let expected = foreground
        .lines(&view, GroupBy::Overall, w(zoomed), width, &mut jobs, || {})
        .expect("series")
        .lines
        .clone();
    assert!(!foreground.is_pending());
    assert_eq!(arrived, expected);
}

#[test]
fn panning_inside_the_overscan_reuses_the_lines() {
    let view = view();
    let (mut jobs, _rx) = jobs_reporting();
    let (e0, e1) = view.time_extent();
    let span = (e1 - e0) / 10;
    let mut cache = ReductionCache::default();
    let window = (e0 + 3 * span, e0 + 4 * span);
    let covered = cache
        .lines(&view, GroupBy::Overall, w(window), 500, &mut jobs, || {})
        .expect("series")
        .covered();
    assert_eq!(covered, (e0 + 2 * span, e0 + 5 * span));
    let shifted = (window.0 + span / 2, window.1 + span / 2);
    let again = cache
        .lines(&view, GroupBy::Overall, w(shifted), 500, &mut jobs, || {})
        .expect("series")
        .covered();
    assert_eq!(
        again, covered,
        "a pan within the covered range recomputes nothing"
    );
    let out = (window.0 + 2 * span, window.1 + 2 * span);
    let moved = cache
        .lines(&view, GroupBy::Overall, w(out), 500, &mut jobs, || {})
        .expect("series")
        .covered();
    assert_eq!(moved, (out.0 - span, out.1 + span));
}

#[test]
fn exact_lines_are_reused_only_on_the_same_pixel_grid() {
    let view = view();
    let (mut jobs, _rx) = jobs_reporting();
    let (e0, e1) = view.time_extent();
    let width = 400;
    let span = (e1 - e0) / 10 / width as i64 * width as i64; // whole ns per column
    let per_column = span / width as i64;
    assert!(per_column >= 100, "{per_column}");
    let window = (e0 + 3 * span, e0 + 4 * span);
    let mut cache = ReductionCache::default();
    let first = cache
        .lines(&view, GroupBy::Overall, w(window), width, &mut jobs, || {})
        .unwrap();
    assert!(!first.sampled, "exact mode");
    let covered = first.covered();
    // Whole columns (a drag by whole pixels): reused.
    let by_columns = (window.0 + 7 * per_column, window.1 + 7 * per_column);
    let again = cache
        .lines(
            &view,
            GroupBy::Overall,
            w(by_columns),
            width,
            &mut jobs,
            || {},
        )
        .unwrap()
        .covered();
    assert_eq!(again, covered);
    // Half a column: the pixel columns no longer match the reduction's, so it is redone.
    let by_half = (window.0 + per_column / 2, window.1 + per_column / 2);
    let redone = cache
        .lines(&view, GroupBy::Overall, w(by_half), width, &mut jobs, || {})
        .unwrap()
        .covered();
    assert_ne!(redone, covered);
    assert_eq!(redone.0, by_half.0 - span);
}

#[test]
fn a_big_ranks_pan_is_made_exact_once_the_view_holds_still() {
    let view = view();
    let (mut jobs, rx) = jobs_reporting();
    let (e0, e1) = view.time_extent();
    let width = 400;
    let span = (e1 - e0) / 10 / width as i64 * width as i64;
    let per_column = span / width as i64;
    let mut cache = ReductionCache::default();
    cache.background_min_points = 0; // every rank counts as big
    let window = (e0 + 3 * span, e0 + 4 * span);
    let covered = cache
        .lines(&view, GroupBy::Overall, w(window), width, &mut jobs, || {})
        .unwrap()
        .covered();
    // Moving by half a column: the lines a pixel off are drawn, nothing is started.
    let moved = (window.0 + per_column / 2, window.1 + per_column / 2);
    let during = cache
        .lines(&view, GroupBy::Overall, w(moved), width, &mut jobs, || {})
        .unwrap()
        .covered();
    assert_eq!(during, covered);
    assert!(!cache.is_pending());
    // Held still for a frame: the exact reduction for the new grid starts, and arrives.
    cache.lines(&view, GroupBy::Overall, w(moved), width, &mut jobs, || {});
    assert!(cache.is_pending());
    rx.recv_timeout(Duration::from_secs(600)).unwrap();
    let exact = cache
        .lines(&view, GroupBy::Overall, w(moved), width, &mut jobs, || {})
        .unwrap()
        .covered();
    assert_eq!(exact, (moved.0 - span, moved.1 + span));
}
