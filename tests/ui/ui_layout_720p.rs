//! Layout at 1280×720 (issue 26 item 10): unfolding "In view" must not squash the chart (it
//! left one y tick: the plot fell to its 160 px floor); the statistics scroll in what is left.

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
        // The statistics take at most a third of what the plot had.
        assert!(
            unfolded >= folded * 2.0 / 3.0,
            "{lang:?}: the plot fell from {folded} to {unfolded} px"
        );
        // And they are there: the first curve's row.
        assert!(
            h.query_all_by_label(t.go_to_peak).next().is_some(),
            "{lang:?}"
        );
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
