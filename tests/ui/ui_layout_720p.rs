//! Layout at 1280×720 (issue 26 item 10, issue 43 item 9): unfolding "In view" must not squash
//! the chart (it left one y tick): the statistics go beside the plot, and start folded again on
//! the next start; a status line does not move the window.

use crate::common;

use egui_kittest::kittest::Queryable;
use memsight::ui::i18n::Lang;

#[test]
fn in_view_unfolded_leaves_the_chart_most_of_its_height() {
    let demo = common::first_subdir(&common::fixtures().join("demo"));
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&demo, lang);
        let folded = h.state().chart_plot_rect().expect("a plot").height();
        let t = h.state().tr();
        h.get_by_label(t.in_view).click();
        h.run();
        h.run();
        let unfolded = h.state().chart_plot_rect().expect("a plot").height();
        // The statistics go beside the plot, which keeps its height (issue 43 item 9: below
        // it, they left a 1M-row profile's plot about 150 px and one y tick).
        assert!(
            unfolded >= folded - 1.0,
            "{lang:?}: the plot fell from {folded} to {unfolded} px"
        );
        // And they are there, beside the plot: the first curve's row.
        let plot = h.state().chart_plot_rect().unwrap();
        let row = h
            .query_all_by_label(t.go_to_peak)
            .next()
            .unwrap_or_else(|| panic!("{lang:?}: no statistics"))
            .rect();
        assert!(
            row.min.x > plot.max.x && row.min.y < plot.max.y,
            "{lang:?}: {row:?}"
        );
        // A second start, with what egui remembers of this one (eframe saves it), starts
        // folded again: the statistics are not remembered open across starts.
        let memory = h.ctx.memory(|m| m.clone());
        let mut again = common::app_at_720p(&demo, lang);
        again.ctx.memory_mut(|m| *m = memory);
        again.run();
        again.run();
        assert!(
            again.query_all_by_label(t.go_to_peak).next().is_none(),
            "{lang:?}: In view was remembered open"
        );
        let height = again.state().chart_plot_rect().unwrap().height();
        assert!(height >= folded - 1.0, "{lang:?}: {height} after {folded}");
    }
}

/// Opening Live at cursor (a click on the chart) keeps the plot's height: the narrower chart's
/// legend must not wrap to a second line and push the plot down.
#[test]
fn live_at_cursor_keeps_the_plot_height() {
    let demo = common::first_subdir(&common::fixtures().join("demo"));
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&demo, lang);
        let before = h.state().chart_plot_rect().expect("a plot");
        h.state_mut()
            .apply(memsight::ui::Command::SetCursor(Some(1_000_000)));
        h.run();
        h.run();
        assert!(
            h.state().view_state().link.cursor.is_some(),
            "{lang:?}: Live is open"
        );
        let after = h.state().chart_plot_rect().expect("a plot");
        assert!(
            (after.height() - before.height()).abs() <= 1.0,
            "{lang:?}: the plot went from {before:?} to {after:?}"
        );
    }
}

/// A rank with operator_memory alone (verl's real export) is a table of the whole window: it
/// shows the rows that fit there, not 10 rows over half an empty window (issue 43 item 9),
/// until the user picks a page size, which then stays.
#[test]
fn a_table_only_rank_fills_the_window_with_rows() {
    let Some(samples) = common::samples() else {
        return;
    };
    let rank =
        samples.join("verl-project_rl-insight/data/recipe/memory_data/20260526_085155_ascend_pt");
    // Its rows, from the raw file: more than fit in the window.
    let raw =
        std::fs::read_to_string(rank.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv")).unwrap();
    let rows = raw.lines().skip(1).filter(|l| !l.trim().is_empty()).count();
    assert!(rows > 40, "{rows}");
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&rank, lang);
        h.run();
        let t = h.state().tr();
        let size = h.state().view_state().page_size;
        // 720 points hold 20 to 30 rows of 22 points under the bars and the table's header.
        assert!((20..=30).contains(&size), "{lang:?}: {size} rows per page");
        assert_eq!(
            h.get_by_label(t.rows_per_page).value().as_deref(),
            Some(size.to_string().as_str())
        );
        // The pager counts pages of that size.
        let pages = rows.div_ceil(size);
        h.get_by_label(&(t.page_of)("1", &pages.to_string()));
        // A page size the user picks stays.
        h.state_mut().apply(memsight::ui::Command::SetPageSize(10));
        h.run();
        assert_eq!(h.state().view_state().page_size, 10, "{lang:?}");
    }
}

/// Issue 87 item 14: the legend above a rank's chart covered the top tick's label (egui_plot
/// centres a value label on its tick, so a tick on the plot's top edge reaches half a line up
/// into the legend row). Every value label painted left of the plot lies below the legend,
/// read from the frame's painted text. Real traces (a CUDA one and the demo), 720p, English
/// and Chinese.
#[test]
fn the_legend_leaves_every_value_label_clear() {
    let trace = common::fixtures().join("pytorch/whatif_cuda/gpu.pt.trace.json.gz");
    let demo = common::first_subdir(&common::fixtures().join("demo"));
    for (path, entry) in [
        (&trace, "Operator Allocated"),
        (&demo, "Operator Allocated"),
    ] {
        for lang in [Lang::En, Lang::Zh] {
            let mut h = common::app_at_720p(path, lang);
            common::settle(&mut h);
            let plot = h.state().chart_plot_rect().expect("the chart was drawn");
            let legend = h
                .query_all_by_label(entry)
                .map(|n| n.rect())
                .filter(|r| r.max.y <= plot.top() + 1.0 && r.min.y > plot.top() - 80.0)
                .map(|r| r.max.y)
                .fold(f32::NEG_INFINITY, f32::max);
            assert!(
                legend.is_finite(),
                "{lang:?}: no legend entry above the plot"
            );
            let labels = value_labels_left_of(h.output(), plot);
            assert!(
                labels.len() >= 2,
                "{lang:?} {path:?}: value labels {labels:?} plot {plot:?}"
            );
            for (text, rect) in &labels {
                assert!(
                    rect.min.y >= legend - 0.5,
                    "{lang:?} {path:?}: value label {text:?} at {rect:?} reaches into the \
                     legend (bottom {legend})"
                );
            }
        }
    }
}

/// The numeric texts painted left of `plot` and within its height ± a line: the value axis's
/// tick labels.
fn value_labels_left_of(out: &egui::FullOutput, plot: egui::Rect) -> Vec<(String, egui::Rect)> {
    fn walk(shape: &egui::Shape, plot: egui::Rect, found: &mut Vec<(String, egui::Rect)>) {
        match shape {
            egui::Shape::Vec(v) => v.iter().for_each(|s| walk(s, plot, found)),
            egui::Shape::Text(t) => {
                let text = t.galley.text().to_owned();
                let rect = t.visual_bounding_rect();
                let numeric = !text.is_empty()
                    && text
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == ',' || c == '.');
                if numeric
                    && rect.max.x <= plot.left() + 1.0
                    && rect.max.y > plot.top() - 30.0
                    && rect.min.y < plot.bottom()
                {
                    found.push((text, rect));
                }
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    for s in &out.shapes {
        walk(&s.shape, plot, &mut found);
    }
    found
}
