//! One frame of the profile: the cluster overview, or the rank on screen (Live at cursor, the
//! bottom pane with its tabs or the whole window for a table-only rank, the chart or the static
//! graph's), or the start page; and the warnings window over either.

use super::{ProfileDocument, ask_save_path};
use crate::ui::command::Command;
use crate::ui::document::{DocCx, panel_frames};
use crate::ui::panes::details_table::DetailsPane;
use crate::ui::panes::live::live_ui;
use crate::ui::panes::tab::BottomPanes;
use crate::ui::panes::warnings::warnings_window;
use crate::ui::panes::{Compare, PaneCx, align_offset};
use crate::ui::state::{PAGE_SIZES, TabId};

impl ProfileDocument {
    /// Draws what the profile shows now.
    pub(super) fn frame_ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>) {
        let (_, central) = panel_frames(ui.style());
        let t = cx.t;
        let overview = (self.overview.as_ref())
            .filter(|_| cx.state.show_overview)
            .zip(self.session.profile.as_ref());
        if let Some((o, profile)) = overview {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                self.overview_bars =
                    crate::ui::panes::overview::overview_ui(ui, t, o, profile, cx.state, cx.out);
            });
        } else if let Some(view) = self.view(cx.state) {
            self.rank_ui(ui, view, cx);
        } else {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                crate::ui::top_bar::placeholder_ui(
                    ui,
                    t,
                    cx.path_text,
                    self.error.as_deref(),
                    self.loading.as_ref(),
                    (self.session.profile.is_some(), self.session.path.is_some()),
                    cx.out,
                )
            });
        }
        // The top bar's warnings button is the picked rank's, over the rank and over the
        // overview alike.
        if cx.state.show_warnings
            && let Some(view) = self.view(cx.state)
        {
            let notes = self.session.notes();
            let rank = view.data.info.label();
            warnings_window(ui.ctx(), t, &rank, &view.data.report, notes, cx.out);
        }
        ask_save_path(&mut self.panes, cx.events);
    }

    /// The profile's rank on screen: Live at cursor, the bottom pane with its tabs (or the
    /// whole window for a table-only rank), the chart (or the static graph's).
    fn rank_ui(
        &mut self,
        ui: &mut egui::Ui,
        view: std::sync::Arc<crate::analysis::RankView>,
        dcx: &mut DocCx<'_>,
    ) {
        let (side, central) = panel_frames(ui.style());
        let t = dcx.t;
        let diff = self.baseline.diff(dcx.jobs, &view);
        let compare = self.baseline.loaded.as_ref().map(|b| Compare {
            baseline: b,
            offset: align_offset(&view, &b.view, dcx.state.align_step),
            diff,
        });
        let mut cx = PaneCx {
            view: &view,
            state: dcx.state,
            out: dcx.out,
            jobs: dcx.jobs,
            t,
            compare,
            profile: self.session.profile.as_ref(),
            marks_chart: true,
        };
        let static_view = cx.state.static_view;
        if cx.state.link.cursor.is_some() && !static_view && !view.data.partial {
            egui::Panel::right("memsight_live")
                .frame(side)
                .resizable(true)
                .default_size(360.0)
                .show(ui, |ui| {
                    // The panel keeps its width whatever the pane draws.
                    ui.set_min_size(ui.available_size());
                    live_ui(ui, &mut cx);
                });
        }
        let (panes, chart, static_chart, static_table) = (
            &mut self.panes,
            &mut self.chart,
            &mut self.static_chart,
            &mut self.static_table,
        );
        // A rank without memory_record has no curves: its table takes the whole window.
        let table_only = view.data.records.is_empty() && !static_view;
        // Unless the user chose a page size, a table of the whole window shows the rows
        // that fit in it (10 left half of a 720-pixel window empty), one in a panel 10.
        let fit_to = |cx: &mut PaneCx<'_>, fit: usize| {
            if !cx.state.page_size_chosen && cx.state.page_size != fit {
                cx.out.push(Command::FitPageSize(fit));
            }
        };
        if !table_only {
            fit_to(&mut cx, PAGE_SIZES[0]);
        }
        if table_only {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                ui.weak(t.table_only);
                fit_to(&mut cx, fit_page_size(ui));
                if let Some(d) = panes.get_mut::<DetailsPane>() {
                    d.table_ui(ui, &mut cx);
                }
            });
        } else {
            // The table's share by default: a third of the window, and at least its tab
            // strip, filters, toolbar, pager and about eight rows (310 px: about what the
            // table used to claim for itself by growing the panel, and now asks for here,
            // so a filter bar that wraps no longer grows the panel and moves the chart;
            // the chart keeps 45 % of a 720-pixel window).
            let table_h = (ui.available_height() * 0.34).clamp(310.0, 420.0);
            egui::Panel::bottom("memsight_table")
                .frame(side)
                .resizable(true)
                .default_size(table_h)
                .show(ui, |ui| {
                    // The panel keeps its height whatever the tab draws: a short tab (the
                    // flame graph without a cursor, the steps) shrank it and moved the
                    // chart by 250 px.
                    ui.set_min_size(ui.available_size());
                    if static_view {
                        static_table.ui(ui, &mut cx);
                    } else if cx.view.data.partial {
                        // Progressive display: the curves are up, the rows are not yet.
                        let rest = match cx.view.data.info.format {
                            crate::model::Format::Imported(_) => t.rest_loading_imported,
                            _ => t.rest_loading,
                        };
                        ui.horizontal(|ui| {
                            crate::ui::spinner::spinner(ui);
                            ui.weak(rest);
                        });
                    } else {
                        if panes.has_choice(&cx) {
                            tab_strip(ui, panes, &mut cx);
                        }
                        panes.ui(ui, &mut cx);
                    }
                });
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                if static_view {
                    static_chart.ui(ui, &mut cx);
                } else {
                    chart.ui(ui, &mut cx);
                }
            });
        }
    }
}

/// The tab strip above the bottom pane: the registered panes offered for this rank, and in a
/// comparison which rank's blocks the details table shows.
fn tab_strip(ui: &mut egui::Ui, panes: &BottomPanes, cx: &mut PaneCx<'_>) {
    let t = cx.t;
    ui.horizontal(|ui| {
        panes.strip_ui(ui, cx);
        if cx.compare.is_some() {
            ui.separator();
            let on_details = panes.shown(cx) == TabId::DETAILS;
            for (on, label) in [(false, t.table_current), (true, t.table_baseline)] {
                if ui
                    .selectable_label(on_details && cx.state.table_baseline == on, label)
                    .clicked()
                {
                    cx.out.push(Command::SetTableBaseline(on));
                }
            }
        }
    });
    ui.separator();
}

/// The rows that fit in a table of the height left in `ui` (under its hint, filters, pager,
/// header and scroll bar; rows as tall as the details table draws them), at least the smallest
/// of [`PAGE_SIZES`].
fn fit_page_size(ui: &egui::Ui) -> usize {
    let body = ui.text_style_height(&egui::TextStyle::Body);
    // As drawn at 1280×720: rows 22 points apart for a 16-point body, and 108 points from the
    // hint to the first row, 30 below the last for the scroll bar and the panel's margin.
    let row = body + 6.0;
    let above = 6.75 * body + 30.0;
    let rows = ((ui.available_height() - above) / row).max(0.0) as usize;
    rows.max(PAGE_SIZES[0])
}
