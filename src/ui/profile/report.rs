//! The report Save chart as PNG draws for the profile: the figure the chart drew last frame,
//! captioned with the profile, the rank, the window and the grouping.

use super::ProfileDocument;
use crate::ui::chart_image::{ChartReport, REPORT_SCALE};
use crate::ui::format::ms;
use crate::ui::i18n::Tr;
use crate::ui::state::ViewState;

/// The report of `doc`'s chart now; `None` before the chart was drawn.
pub(super) fn chart_report(
    doc: &ProfileDocument,
    t: &'static Tr,
    state: &ViewState,
    pixels_per_point: f32,
) -> Option<ChartReport> {
    let figure = doc.chart.last_figure.clone()?;
    let profile = doc.path().map_or_else(String::new, |p| {
        p.file_name().map_or_else(
            || p.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        )
    });
    let info = doc
        .session
        .profile
        .as_ref()
        .and_then(|p| p.ranks.get(state.rank).cloned());
    let (rank, host) = info.map_or_else(Default::default, |r| {
        (r.rank.clone(), r.host.clone().unwrap_or_default())
    });
    let window = match state.link.window {
        Some(w) => {
            let (a, b) = w.ms();
            (t.report_window)(&ms(a), &ms(b))
        }
        None => t.report_whole.to_string(),
    };
    let mut parts = vec![
        window,
        format!(
            "{}: {}",
            t.group_by,
            crate::ui::top_bar::group_name(t, state.group_by)
        ),
    ];
    if let Some(view) = doc.view(state) {
        parts.push(format!(
            "{} {}",
            view.data.info.format.as_str(),
            view.data.info.source.kind()
        ));
    }
    Some(ChartReport {
        title: (t.report_title)(&profile, &rank, &host),
        subtitle: parts.join(" · "),
        figure,
        scale: REPORT_SCALE.max(pixels_per_point),
    })
}
