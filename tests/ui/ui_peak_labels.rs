//! Peak labels sit next to their own markers (issue 26 item 1): on a generated profile whose
//! big series peak together in the top right corner while two tiny ones peak on the 0 line,
//! at 1280×720 in English and Chinese; and a peak beyond a zoomed window is labelled on the
//! edge it lies beyond, with an arrow and its time, never as if it were in view.

use crate::common;

use egui_kittest::kittest::{NodeT, Queryable};
use memsight::generate::{GenOptions, generate};
use memsight::model::TimeWindow;
use memsight::ui::Command;
use memsight::ui::i18n::Lang;
use memsight::ui::panes::memory_chart::PeakLabel;

/// A label may sit this far from its marker at most: a gap and three rows of labels.
const NEAR: f32 = 5.0 + 3.0 * 16.0;

fn profile() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let opts = GenOptions {
        allocs: 60_000,
        ..GenOptions::default()
    };
    generate(tmp.path(), &opts).unwrap();
    tmp
}

/// Every label inside the plot, over no other, near its own marker and no nearer another
/// marker (beyond a marker's radius) unless the two markers are at the same place.
fn check_labels(labels: &[PeakLabel], plot: egui::Rect) {
    let markers: Vec<egui::Pos2> = labels.iter().filter_map(|l| l.marker).collect();
    for (i, l) in labels.iter().enumerate() {
        assert!(
            plot.contains_rect(l.rect),
            "{:?} leaves the plot {plot:?}",
            l
        );
        for m in &labels[i + 1..] {
            assert!(
                !l.rect.intersects(m.rect.shrink(0.5)),
                "{l:?} overlaps {m:?}"
            );
        }
        let Some(own) = l.marker else { continue };
        let d = l.rect.distance_to_pos(own);
        assert!(d <= NEAR, "{:?} is {d} px from its marker", l.text);
        for other in markers.iter().filter(|m| m.distance(own) >= 8.0) {
            assert!(
                d <= l.rect.distance_to_pos(*other) + 4.0,
                "{:?} sits beside another series' marker at {other:?}",
                l.text
            );
        }
    }
}

#[test]
fn peak_labels_sit_next_to_their_own_markers() {
    let tmp = profile();
    for (lang, word) in [(Lang::En, "peak "), (Lang::Zh, "峰值 ")] {
        let h = common::app_at_720p(tmp.path(), lang);
        let plot = h.state().chart_plot_rect().expect("the chart was drawn");
        let labels = h.state().chart_peak_labels().to_vec();
        // Six series peak: Operator Allocated/Activated/Reserved, APP Reserved and the two
        // Workspace ones.
        assert!(labels.len() >= 5, "{labels:?}");
        assert!(
            labels
                .iter()
                .all(|l| l.text.starts_with(word) && l.marker.is_some())
        );
        check_labels(&labels, plot);
    }
}

#[test]
fn a_peak_beyond_the_window_is_labelled_on_its_edge() {
    let tmp = profile();
    for (lang, word) in [(Lang::En, "peak "), (Lang::Zh, "峰值 ")] {
        let mut h = common::app_at_720p(tmp.path(), lang);
        let view = h.state().view().unwrap();
        let (start, end) = view.time_extent();
        // The first fifth: the big series peak in the last fifth of this profile.
        h.state_mut().apply(Command::SetWindow {
            window: Some(TimeWindow::new(start, start + (end - start) / 5)),
            moving: false,
        });
        h.run();
        h.run();
        let plot = h.state().chart_plot_rect().unwrap();
        let labels = h.state().chart_peak_labels().to_vec();
        check_labels(&labels, plot);
        let beyond: Vec<&PeakLabel> = labels.iter().filter(|l| l.marker.is_none()).collect();
        assert!(!beyond.is_empty(), "{labels:?}");
        for l in beyond {
            assert!(
                l.text.contains(word) && l.text.ends_with('→') && l.text.contains("ms"),
                "{}",
                l.text
            );
            assert!(
                plot.right() - l.rect.right() < 6.0,
                "{l:?} is not on the right edge {plot:?}"
            );
        }
        // A peak inside the window keeps its marker and plain label.
        for l in labels.iter().filter(|l| l.marker.is_some()) {
            assert!(!l.text.contains('→'), "{}", l.text);
        }
    }
}

/// A zoomed window fits the y axis to the main curves: the tiny Workspace curves no longer pull
/// it to 0 (they are named as below the view), and "y from 0" brings them back (issue 26 item
/// 15). Checked against the raw memory_record (PTA+GE Total Allocated in the window), EN and ZH.
#[test]
fn a_zoomed_window_fits_y_to_the_main_curves() {
    let tmp = profile();
    let rank = common::first_subdir(tmp.path());
    let rec = common::RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let origin = common::raw_origin(&rank.join("ASCEND_PROFILER_OUTPUT"));
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(tmp.path(), lang);
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let (start, end) = view.time_extent();
        let (a, b) = (
            start + (end - start) * 8 / 10,
            start + (end - start) * 9 / 10,
        );
        h.state_mut().apply(Command::SetWindow {
            window: Some(TimeWindow::new(a, b)),
            moving: false,
        });
        h.run();
        h.run();
        // Operator Allocated over the window by hand (the value held into it counts).
        let (c, ts, v) = (
            rec.col("Component"),
            rec.col("Timestamp(us)"),
            rec.col("Total Allocated(MB)"),
        );
        let mut pts: Vec<(i128, f64)> = rec
            .rows
            .iter()
            .filter(|r| r[c] == "PTA+GE")
            .map(|r| {
                (
                    common::us_to_ns(&r[ts]) - origin,
                    r[v].parse::<f64>().unwrap(),
                )
            })
            .collect();
        pts.sort_by_key(|p| p.0);
        let held = pts.iter().rev().find(|p| p.0 <= a as i128).map(|p| p.1);
        let inside = pts
            .iter()
            .filter(|p| p.0 > a as i128 && p.0 <= b as i128)
            .map(|p| p.1);
        let (lo, hi) = held
            .into_iter()
            .chain(inside)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), x| {
                (l.min(x), h.max(x))
            });
        let (y_lo, y_hi) = h.state().chart_y_range().unwrap();
        // The chart's unit: GB at these sizes.
        let (lo, hi) = (lo / 1024.0, hi / 1024.0);
        assert!(y_lo <= lo && y_hi >= hi, "{y_lo}..{y_hi} holds {lo}..{hi}");
        assert!(
            y_lo > lo * 0.5,
            "the axis starts near the main curves ({y_lo} GB), not at the Workspace curves"
        );
        let note = (t.below_view)("Workspace");
        let prefix = note.split("Workspace").next().unwrap();
        assert!(
            h.query_all_by_label_contains(prefix).any(|n| n
                .accesskit_node()
                .label()
                .is_some_and(|l| l.contains("Workspace"))
                || n.accesskit_node()
                    .value()
                    .is_some_and(|l| l.contains("Workspace"))),
            "the minor curves are named"
        );
        h.get_by_label(t.y_from_zero).click();
        h.run();
        let (y_lo, _) = h.state().chart_y_range().unwrap();
        assert_eq!(y_lo, 0.0);
    }
}
