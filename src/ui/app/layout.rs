//! One frame: poll the jobs, turn input into commands and apply them, lay out the panes
//! (top bar, Live at cursor, the bottom pane with its tabs, the chart) and apply what they asked.

use std::path::PathBuf;

use egui::{Key, Modifiers};

use super::MemsightApp;
use crate::model::TimeWindow;
use crate::ui::command::{Command, PickKind};
use crate::ui::file_browser::Purpose;
use crate::ui::i18n::Tr;
use crate::ui::panes::details_table::DetailsPane;
use crate::ui::panes::live::live_ui;
use crate::ui::panes::tab::BottomPanes;
use crate::ui::panes::warnings::warnings_window;
use crate::ui::panes::{Compare, PaneCx, align_offset};
use crate::ui::state::{PAGE_SIZES, TabId};

impl MemsightApp {
    /// The whole window, drawn into `ui` (eframe's root, or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let frame_started = std::time::Instant::now();
        let extent = self
            .view()
            .map(|v| {
                let (a, b) = v.time_extent();
                TimeWindow::new(a, b).ms()
            })
            .or_else(|| self.document.as_ref().and_then(|d| d.chart_extent()));
        if let Some(bench) = &mut self.bench {
            let (done, window) = bench.before_frame(extent);
            if done {
                eprintln!("{}", bench.report());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            ui.ctx().request_repaint();
            if let Some((a, b)) = window {
                match &mut self.document {
                    Some(d) => d.set_chart_range((a, b)),
                    None => self.apply(Command::SetWindow {
                        window: TimeWindow::from_ms(a, b),
                        moving: true,
                    }),
                }
            }
        }
        self.ui_frame(ui);
        if let Some(bench) = &mut self.bench {
            bench.after_frame(frame_started);
        }
    }

    pub(super) fn ui_frame(&mut self, ui: &mut egui::Ui) {
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
            self.jobs.set_context(ui.ctx());
            ui.ctx().set_theme(self.prefs.theme.egui());
        }
        if self.cjk_font.is_none() {
            self.cjk_font = Some(crate::ui::fonts::install_fonts(ui.ctx()));
        }
        let t = self.tr();
        self.poll_background(ui);
        let mut out: Vec<Command> = Vec::new();
        self.input_commands(ui, t, &mut out);
        self.update_title(ui);

        let (side, central) = panel_frames(ui.style());
        egui::Panel::top("memsight_top").frame(side).show(ui, |ui| {
            crate::ui::top_bar::menu_ui(
                ui,
                t,
                &self.prefs,
                self.cjk_font.as_ref().is_some_and(Option::is_none),
                crate::ui::top_bar::Status {
                    notice: self.notice.as_deref(),
                    loading: self.loading.as_ref(),
                    discovered: self.session.profile.is_some(),
                },
                &mut out,
            );
            if self.showing_demo {
                crate::ui::top_bar::demo_banner(ui, t, &mut out);
            }
            failures_ui(ui, t, &self.failures, &mut out);
            // A document has its own choices in its view: no profile parameters.
            if self.document.is_none() {
                crate::ui::top_bar::parameters_ui(
                    ui,
                    t,
                    &self.session,
                    self.view().as_ref(),
                    &self.state,
                    &self.baseline,
                    &mut out,
                );
            }
        });
        // What the menus, the parameter bar and the shortcuts asked for shows in this frame's
        // panes already; the panes' own commands apply after them.
        let asked = !out.is_empty();
        for cmd in out.drain(..) {
            self.apply(cmd);
        }
        if asked {
            ui.ctx().request_repaint();
        }
        let overview = self.overview.as_ref().filter(|_| self.state.show_overview);
        if let Some(doc) = &mut self.document {
            let mut cx = crate::ui::document::DocCx {
                t,
                jobs: &mut self.jobs,
                state: &self.state,
                out: &mut out,
                path_text: &mut self.path_text,
            };
            egui::CentralPanel::default()
                .frame(central)
                .show(ui, |ui| doc.ui(ui, &mut cx));
        } else if let Some(o) = overview {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                let notes = self.session.notes();
                self.overview_bars =
                    crate::ui::panes::overview::overview_ui(ui, t, o, notes, &self.state, &mut out);
            });
        } else if let Some(view) = self.view() {
            self.profile_ui(ui, view, t, &mut out);
        } else {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                crate::ui::top_bar::placeholder_ui(
                    ui,
                    t,
                    &mut self.path_text,
                    self.error.as_deref(),
                    self.loading.as_ref(),
                    (self.session.profile.is_some(), self.session.path.is_some()),
                    &mut out,
                )
            });
        }
        if self.help_open {
            crate::ui::top_bar::help_window(ui.ctx(), t, &mut out);
        }
        if self.path_dialog_open {
            let focus = std::mem::take(&mut self.path_dialog_focus);
            crate::ui::top_bar::path_dialog(ui.ctx(), t, &mut self.path_text, focus, &mut out);
        }
        if self.details_mut().wants_browser() {
            self.show_browser(Purpose::Save);
        }
        if !out.is_empty() {
            for cmd in out {
                self.apply(cmd);
            }
            ui.ctx().request_repaint();
        }
    }

    /// What the background brought since the last frame: a load's messages, the overview's
    /// summaries, the baseline, the chart PNG, failed jobs.
    fn poll_background(&mut self, ui: &egui::Ui) {
        self.poll_load();
        if let Some(o) = &mut self.overview
            && o.poll()
        {
            ui.ctx().request_repaint();
        }
        if self.baseline.poll() {
            self.cache_baseline();
            ui.ctx().request_repaint();
        }
        self.poll_chart_png();
        self.failures.extend(self.jobs.take_failures());
    }

    /// The commands of this frame's input outside the panes: a dialog's answer, a dropped
    /// file, the shortcuts, the in-app browser's choice.
    fn input_commands(&mut self, ui: &egui::Ui, t: &'static Tr, out: &mut Vec<Command>) {
        if let Some((kind, p)) = self.poll_dialog() {
            out.push(opened(kind, p));
        }
        let dropped: Option<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|p| !p.as_os_str().is_empty())
        });
        if let Some(p) = dropped {
            // Shift while dropping: compare with it instead of opening it.
            let kind = if ui.ctx().input(|i| i.modifiers.shift) {
                PickKind::Baseline
            } else {
                PickKind::Folder
            };
            out.push(opened(kind, p));
        }
        shortcuts(ui, out);
        if let Some((purpose, path)) = self.browser.ui(ui.ctx()) {
            match purpose {
                Purpose::Open(kind) => out.push(opened(kind, path)),
                Purpose::SaveChart => self.write_chart_png(&path),
                Purpose::Save => {
                    let d = self.panes.get_mut::<DetailsPane>();
                    if let Some(table) = d.map(|d| d.exporting_table()) {
                        table.exporter.write_to(&mut self.jobs, path, t);
                    }
                }
            }
        }
    }

    /// The profile's rank on screen: Live at cursor, the bottom pane with its tabs (or the
    /// whole window for a table-only rank), the chart (or the static graph's), warnings.
    fn profile_ui(
        &mut self,
        ui: &mut egui::Ui,
        view: std::sync::Arc<crate::analysis::RankView>,
        t: &'static Tr,
        out: &mut Vec<Command>,
    ) {
        let (side, central) = panel_frames(ui.style());
        let notes = self.session.notes();
        let diff = self.baseline.diff(&mut self.jobs, &view);
        let compare = self.baseline.loaded.as_ref().map(|b| Compare {
            baseline: b,
            offset: align_offset(&view, &b.view, self.state.align_step),
            diff,
        });
        let mut cx = PaneCx {
            view: &view,
            state: &self.state,
            out,
            jobs: &mut self.jobs,
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
                        ui.horizontal(|ui| {
                            ui.spinner();
                            ui.weak(t.rest_loading);
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
        if cx.state.show_warnings {
            warnings_window(ui.ctx(), &mut cx, notes);
        }
    }

    pub(super) fn update_title(&mut self, ui: &egui::Ui) {
        let shown = self.document.as_ref().map(|d| d.path());
        let title = match shown.or(self.path()) {
            Some(p) => format!("memsight — {}", p.display()),
            None => "memsight".to_string(),
        };
        if title != self.title {
            ui.ctx()
                .send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }
}

/// The side and central panels' frames, unfilled: the window's clear colour is the panel
/// colour (see `clear_color`), which saves a full-window fill per frame, the dominant cost
/// under software rendering.
fn panel_frames(style: &egui::Style) -> (egui::Frame, egui::Frame) {
    (
        egui::Frame::side_top_panel(style).fill(egui::Color32::TRANSPARENT),
        egui::Frame::central_panel(style).fill(egui::Color32::TRANSPARENT),
    )
}

/// The background tasks that panicked, one line each, with Dismiss.
fn failures_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    failures: &[crate::ui::jobs::JobFailure],
    out: &mut Vec<Command>,
) {
    if failures.is_empty() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.vertical(|ui| {
            for f in failures {
                let what = f.key.task_name(t);
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    (t.job_failed)(what, &f.message),
                );
            }
        });
        if ui.button(t.dismiss).clicked() {
            out.push(Command::DismissFailures);
        }
    });
}
/// Keyboard shortcuts as commands: Ctrl+O, Esc, Ctrl+C (copy), F1 (help). ←/→ turn the pages of
/// the table on screen: its pager takes them, since it knows where the last page is.
fn shortcuts(ui: &egui::Ui, out: &mut Vec<Command>) {
    let typing = ui.ctx().memory(|m| m.focused().is_some());
    let (open, esc, copy, help, path) = ui.ctx().input_mut(|i| {
        (
            i.consume_key(Modifiers::COMMAND, Key::O),
            i.key_pressed(Key::Escape),
            !typing && i.events.iter().any(|e| matches!(e, egui::Event::Copy)),
            i.consume_key(Modifiers::NONE, Key::F1),
            i.consume_key(Modifiers::COMMAND, Key::L),
        )
    });
    if help {
        out.push(Command::ShowHelp(true));
    }
    if path {
        out.push(Command::ShowPathDialog(true));
    }
    if open {
        out.push(Command::Pick(PickKind::Folder));
    }
    if esc {
        out.push(Command::ResetView);
    }
    if copy {
        out.push(Command::Copy);
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
/// What a picked path means: a profile to open, or a baseline to compare with.
fn opened(kind: PickKind, path: PathBuf) -> Command {
    match kind {
        PickKind::Baseline | PickKind::Summary | PickKind::Snapshot => {
            Command::CompareWith(crate::ui::baseline::BaselineSource { path, rank: 0 })
        }
        PickKind::Folder | PickKind::Database => Command::Open(path),
    }
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
