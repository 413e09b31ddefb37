//! The steps pane: one row per training step (peaks, end value, change, survivors), sortable and
//! copyable; a click on a step zooms the chart to it, a click on its survivors lists exactly
//! those blocks in the details table. Above it, whether memory grows step over step and which
//! operators hold the growth.

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::details_table::sort_header;
use crate::analysis::{SortDir, StepReport, StepStats};
use crate::model::{MIB, TimeWindow, ns_to_ms};
use crate::ui::command::Command;
use crate::ui::format::{MemUnit, bytes, bytes_in, grouped};
use crate::ui::i18n::Tr;
use crate::ui::state::{RowSubset, SubsetWhy};

/// A column of the steps table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepColumn {
    /// Step id.
    Step,
    /// Start time.
    Start,
    /// End time.
    End,
    /// Duration.
    Duration,
    /// Peak Operator Allocated.
    PeakAllocated,
    /// When that peak was.
    PeakAt,
    /// Peak Operator Reserved.
    PeakReserved,
    /// Peak APP Reserved.
    PeakApp,
    /// Operator Allocated at the end.
    EndAllocated,
    /// Change of the end value versus the previous step.
    Change,
    /// Survivor count.
    Survivors,
    /// Survivor bytes.
    SurvivorBytes,
}

impl StepColumn {
    /// Every column, in table order.
    pub const ALL: [StepColumn; 12] = [
        StepColumn::Step,
        StepColumn::Start,
        StepColumn::End,
        StepColumn::Duration,
        StepColumn::PeakAllocated,
        StepColumn::PeakAt,
        StepColumn::PeakReserved,
        StepColumn::PeakApp,
        StepColumn::EndAllocated,
        StepColumn::Change,
        StepColumn::Survivors,
        StepColumn::SurvivorBytes,
    ];
}

crate::ui::sorts::sort_columns! {
    StepColumn {
        Step, Start, End, Duration, PeakAllocated, PeakAt, PeakReserved, PeakApp, EndAllocated,
        Change, Survivors, SurvivorBytes,
    }
}

/// The steps table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("steps");

/// The number a column shows for a step (MB, ms or a count), `None` when the data has none.
pub fn step_value(s: &StepStats, col: StepColumn) -> Option<f64> {
    let mb = |b: i64| b as f64 / MIB as f64;
    match col {
        StepColumn::Step => Some(s.step.id as f64),
        StepColumn::Start => Some(ns_to_ms(s.start)),
        StepColumn::End => Some(ns_to_ms(s.end)),
        StepColumn::Duration => Some(ns_to_ms(s.end.saturating_sub(s.start))),
        StepColumn::PeakAllocated => s.peak_allocated.map(|p| mb(p.0)),
        StepColumn::PeakAt => s.peak_allocated.map(|p| ns_to_ms(p.1)),
        StepColumn::PeakReserved => s.peak_reserved.map(|p| mb(p.0)),
        StepColumn::PeakApp => s.peak_app.map(|p| mb(p.0)),
        StepColumn::EndAllocated => s.end_allocated.map(mb),
        StepColumn::Change => s.change.map(mb),
        StepColumn::Survivors => Some(s.survivors.len() as f64),
        StepColumn::SurvivorBytes => Some(mb(s.survivor_bytes)),
    }
}

/// A cell's text: ms with 3 decimals, MB with 2, counts whole, the change signed.
pub fn step_text(s: &StepStats, col: StepColumn) -> String {
    let Some(v) = step_value(s, col) else {
        return "–".into();
    };
    match col {
        StepColumn::Step => format!("#{}", s.step.id),
        StepColumn::Survivors => grouped(v, 0),
        StepColumn::Start | StepColumn::End | StepColumn::Duration | StepColumn::PeakAt => {
            grouped(v, 3)
        }
        StepColumn::Change if v > 0.0 => format!("+{}", grouped(v, 2)),
        _ => grouped(v, 2),
    }
}

/// The display order of the steps for a sort (missing values last; ties keep time order).
pub fn step_order(steps: &[StepStats], sort: Option<(StepColumn, SortDir)>) -> Vec<usize> {
    let mut order: Vec<usize> = (0..steps.len()).collect();
    if let Some((col, dir)) = sort {
        order.sort_by(|&a, &b| {
            let (x, y) = (step_value(&steps[a], col), step_value(&steps[b], col));
            match (x, y) {
                (Some(x), Some(y)) => {
                    let o = x.total_cmp(&y);
                    if dir == SortDir::Desc { o.reverse() } else { o }
                }
                (Some(_), None) => std::cmp::Ordering::Less,
                (None, Some(_)) => std::cmp::Ordering::Greater,
                (None, None) => std::cmp::Ordering::Equal,
            }
        });
    }
    order
}

/// The table as TSV (headers, then the rows in `order`), what Copy puts on the clipboard.
pub fn steps_tsv(headers: &[&str; 12], steps: &[StepStats], order: &[usize]) -> String {
    let mut s = headers.join("\t");
    s.push('\n');
    for &i in order {
        let cells: Vec<String> = StepColumn::ALL
            .iter()
            .map(|&c| match (c, step_value(&steps[i], c)) {
                (StepColumn::Step, _) => steps[i].step.id.to_string(),
                (_, Some(v)) => format!("{v}"),
                (_, None) => String::new(),
            })
            .collect();
        s.push_str(&cells.join("\t"));
        s.push('\n');
    }
    s
}

/// Draws the growth verdict and the steps table.
pub fn steps_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
    let (view, state, t) = (cx.view, cx.state, cx.t);
    let report: &StepReport = view.steps();
    let steps = &report.steps;
    let order = step_order(steps, state.sorts.get(SORT));
    ui.horizontal(|ui| {
        ui.strong(t.steps_title);
        if let Some(src) = &view.data.steps {
            ui.weak((t.steps_source)(src.source.as_str()));
        }
        if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
            ui.ctx()
                .copy_text(steps_tsv(&t.step_headers, steps, &order));
        }
    });
    growth_ui(ui, cx, report);
    let state = cx.state;
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let out = &mut *cx.out;
    egui::ScrollArea::horizontal()
        .id_salt("steps_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| table_ui(ui, t, state, steps, &order, h, out));
}

/// The table itself (inside a horizontal scroll area: twelve columns do not fit a laptop).
fn table_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    state: &crate::ui::state::ViewState,
    steps: &[StepStats],
    order: &[usize],
    h: f32,
    out: &mut Vec<Command>,
) {
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .id_salt("steps_table")
        .cell_layout(egui::Layout::right_to_left(egui::Align::Center));
    for _ in StepColumn::ALL {
        table = table.column(TableColumn::auto().at_least(60.0));
    }
    table
        .header(h, |mut hr| {
            for (k, col) in StepColumn::ALL.into_iter().enumerate() {
                hr.col(|ui| {
                    let dir = state.sorts.dir_of(SORT, col);
                    if sort_header(ui, t, t.step_headers[k], dir, t.step_headers[1]) {
                        out.push(Command::sort(SORT, col));
                    }
                });
            }
        })
        .body(|body| {
            body.rows(h, order.len(), |mut row| {
                let s = &steps[order[row.index()]];
                for col in StepColumn::ALL {
                    row.col(|ui| {
                        let text = step_text(s, col);
                        match col {
                            StepColumn::Step => {
                                if ui.link(text).on_hover_text(t.step_zoom_hover).clicked() {
                                    out.push(Command::SetWindow {
                                        window: Some(TimeWindow::new(
                                            s.start,
                                            s.end.max(s.start + 1),
                                        )),
                                        moving: false,
                                    });
                                }
                            }
                            StepColumn::Survivors | StepColumn::SurvivorBytes
                                if !s.survivors.is_empty() =>
                            {
                                if ui.link(text).on_hover_text(t.survivors_hover).clicked() {
                                    out.push(Command::FilterRows(Some(RowSubset {
                                        why: SubsetWhy::Survivors(s.step.id),
                                        rows: std::sync::Arc::new(s.survivors.clone()),
                                    })));
                                }
                            }
                            _ => {
                                ui.label(text);
                            }
                        }
                    });
                }
            });
        });
}

/// The growth verdict: each run of rising end values with the operators behind it.
fn growth_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>, report: &StepReport) {
    let (t, data) = (cx.t, &cx.view.data);
    if report.steps.len() <= crate::analysis::GROWTH_RISES {
        return;
    }
    if report.growth.is_empty() {
        ui.weak(t.no_growth);
        return;
    }
    for g in &report.growth {
        let sign = if g.bytes >= 0 { "+" } else { "" };
        ui.colored_label(
            ui.visuals().warn_fg_color,
            (t.growth)(
                g.rises(),
                report.steps[g.from].step.id,
                report.steps[g.to].step.id,
                &format!("{sign}{}", bytes(g.bytes)),
            ),
        );
        ui.horizontal_wrapped(|ui| {
            ui.label(t.growth_operators);
            for &(name, b, n) in g.operators.iter().take(5) {
                ui.strong(data.display_name(name));
                ui.label(format!("{} ({n})", bytes(b)));
            }
        });
    }
}

/// The steps tab's id.
pub const TAB: crate::ui::state::TabId = crate::ui::state::TabId("steps");

/// The steps tab: memory per training step, the growth verdict, survivors, and (when the rank
/// has training phases) each step's peak split by role.
#[derive(Default)]
pub struct StepsPane {
    /// The role report, computed off the UI thread when the rank has roles.
    roles: super::roles::RolesJob,
}

impl super::tab::BottomPane for StepsPane {
    fn id(&self) -> crate::ui::state::TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, cx: &PaneCx<'_>) -> String {
        (t.steps_tab)(cx.view.steps().steps.len())
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        cx.view.data.steps.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        if super::roles::has_roles(cx.view) {
            match self.roles.get(cx) {
                super::roles::RolesState::Ready(report) => {
                    step_roles_ui(ui, cx.t, report);
                }
                super::roles::RolesState::Pending => {
                    ui.horizontal(|ui| {
                        crate::ui::spinner::spinner(ui);
                        ui.label(cx.t.roles_computing);
                    });
                }
                super::roles::RolesState::Failed(_) => {}
            }
        }
        steps_ui(ui, cx);
    }
}

/// Each step's peak split by role: a collapsible grid, a column per role present (MB).
fn step_roles_ui(ui: &mut egui::Ui, t: &Tr, report: &crate::analysis::RoleReport) {
    if report.per_step.is_empty() {
        return;
    }
    let roles: Vec<crate::model::Role> = crate::model::Role::ALL
        .into_iter()
        .filter(|&r| report.per_step.iter().any(|s| s.at_peak.bytes(r) != 0))
        .collect();
    egui::CollapsingHeader::new(t.steps_by_role)
        .id_salt("steps_by_role")
        .default_open(true)
        .show(ui, |ui| {
            egui::ScrollArea::both()
                .id_salt("steps_by_role_scroll")
                .max_height(160.0)
                .show(ui, |ui| {
                    egui::Grid::new("steps_by_role_grid")
                        .striped(true)
                        .show(ui, |ui| {
                            ui.strong(t.step_headers[0]);
                            ui.strong(t.roles_total);
                            for &r in &roles {
                                ui.strong(super::roles::role_name(t, r));
                            }
                            ui.end_row();
                            // One unit for the whole table, from its largest value.
                            let unit =
                                MemUnit::for_list(report.per_step.iter().map(|s| s.at_peak.total));
                            for s in &report.per_step {
                                ui.label(format!("#{}", s.step));
                                ui.label(bytes_in(s.at_peak.total, unit));
                                for &r in &roles {
                                    ui.label(bytes_in(s.at_peak.bytes(r), unit));
                                }
                                ui.end_row();
                            }
                        });
                });
        });
}
