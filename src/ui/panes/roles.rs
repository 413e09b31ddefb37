//! The memory-by-role pane: the live bytes of each role stacked over time (one bar a pixel
//! column, sampled at its end; step bands; the chart's time window, and a box-zoom here sets
//! it), Operator Allocated on top, the roles at the cursor (else at the peak) with their
//! sizes, and what would lower the peak. Roles come from `analysis::roles`, computed off the
//! UI thread the first time the tab is shown.

use egui_plot::{Bar, BarChart, Line, Plot, PlotPoints, VLine};

use super::PaneCx;
use crate::analysis::{OverallCurve, RankView, RoleReport, RolesAt};
use crate::model::{Role, TimeWindow, ns_to_ms};
use crate::ui::command::Command;
use crate::ui::format::{MemUnit, bytes_in};
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Place, Poll};
use crate::ui::palette;

/// The job that computes memory by role for a view (one per view).
pub const ROLES_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("roles", "memory by role", "按角色统计内存");

/// The tab's id.
pub const TAB: crate::ui::state::TabId = crate::ui::state::TabId("roles");

/// Columns the stacked area is sampled at (at most; fewer on a narrow pane).
const MAX_COLUMNS: usize = 600;

/// The roles tab.
#[derive(Default)]
pub struct RolesPane {
    /// The report, worked out off the UI thread.
    report: RolesJob,
    /// A box-zoom in progress (plot x at press, reached).
    drag: Option<(f64, f64)>,
}

/// The role report of the rank on screen, computed in a job the first time a pane asks.
#[derive(Default)]
pub struct RolesJob {
    /// The job and the view it is for.
    job: Option<(crate::analysis::ViewId, Job<()>)>,
}

/// Where the report is.
pub enum RolesState<'v> {
    /// Ready.
    Ready(&'v RoleReport),
    /// Still being computed.
    Pending,
    /// The job failed (its message).
    Failed(String),
}

impl RolesJob {
    /// The report of `cx.view`, starting its job when it is not computed yet.
    pub fn get<'v>(&mut self, cx: &mut PaneCx<'v>) -> RolesState<'v> {
        let view: &'v std::sync::Arc<RankView> = cx.view;
        if view.roles_ready() {
            self.job = None;
            return RolesState::Ready(view.roles());
        }
        let id = view.id();
        if self.job.as_ref().is_none_or(|(v, _)| *v != id) {
            let v = std::sync::Arc::clone(view);
            let ranks = cx.ranks().max(1);
            let job = cx
                .jobs
                .run(JobKey::scoped(ROLES_JOB, &id), Place::Thread, move |_| {
                    let _ = v.roles();
                    // The advice's levers replayed, for the profile's ranks.
                    let _ = v.advice(ranks);
                });
            self.job = Some((id, job));
        }
        match &self.job {
            Some((_, job)) => match job.poll() {
                Poll::Failed(m) => RolesState::Failed(m),
                _ => RolesState::Pending,
            },
            None => RolesState::Pending,
        }
    }
}

/// True when the rank has roles worth a tab (training phases were found).
pub fn has_roles(view: &RankView) -> bool {
    view.data
        .roles
        .as_ref()
        .is_some_and(|r| !r.phases.is_empty())
}

/// A role's name in the UI's language.
pub fn role_name(t: &Tr, role: Role) -> &'static str {
    role.name(t.lang)
}

impl super::tab::BottomPane for RolesPane {
    fn id(&self) -> crate::ui::state::TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, _cx: &PaneCx<'_>) -> String {
        t.roles_tab.to_string()
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        has_roles(cx.view)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        match self.report.get(cx) {
            RolesState::Ready(report) => roles_ui(ui, cx, report, &mut self.drag),
            RolesState::Failed(m) => {
                ui.colored_label(ui.visuals().error_fg_color, m);
            }
            RolesState::Pending => {
                ui.horizontal(|ui| {
                    crate::ui::spinner::spinner(ui);
                    ui.label(cx.t.roles_computing);
                });
            }
        }
    }
}

/// The pane once the report is ready.
fn roles_ui(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    report: &RoleReport,
    drag: &mut Option<(f64, f64)>,
) {
    let view = cx.view;
    // At the cursor: each role's curve read at that time (a binary search a role, every
    // frame), not a pass over the blocks; the split shows bytes, not block counts.
    let shown = cx
        .state
        .link
        .cursor
        .map(|c| crate::analysis::roles::roles_at_quick(&report.series, allocated_series(view), c))
        .or_else(|| report.at_peak.clone());
    let side = 330.0_f32.min(ui.available_width() * 0.4);
    ui.horizontal_top(|ui| {
        let plot_w = (ui.available_width() - side - 12.0).max(120.0);
        ui.allocate_ui(egui::vec2(plot_w, ui.available_height()), |ui| {
            stacked_plot(ui, cx, report, drag);
        });
        ui.separator();
        egui::ScrollArea::vertical()
            .id_salt("roles_side")
            .auto_shrink([false, false])
            .show(ui, |ui| {
                ui.vertical(|ui| side_ui(ui, cx, report, shown.as_ref(), side));
            });
    });
}

/// The side column: the roles at the cursor (else the peak), why roles are unknown, the advice.
fn side_ui(
    ui: &mut egui::Ui,
    cx: &PaneCx<'_>,
    report: &RoleReport,
    shown: Option<&RolesAt>,
    side: f32,
) {
    let t = cx.t;
    ui.set_width(side);
    if let Some(at) = shown {
        let title = if cx.state.link.cursor.is_some() {
            (t.roles_at_cursor)(&format!("{:.3}", ns_to_ms(at.at_ns)))
        } else {
            (t.roles_at_peak)(&format!("{:.3}", ns_to_ms(at.at_ns)))
        };
        ui.strong(title);
        split_grid(ui, t, at);
    }
    if let Some(why) = report.why_unknown {
        ui.weak(why.render(t.lang));
    }
    let ranks = cx.ranks().max(1);
    // The replayed advice once its job is done (the roles job replays it), else the lines alone.
    let advice = match cx.view.advice_ready(ranks) {
        Some(a) => a.as_ref().clone(),
        None => report.advice_for(ranks),
    };
    if !advice.is_empty() {
        ui.add_space(6.0);
        ui.strong(t.roles_advice_title);
        for line in advice_lines(t, &advice) {
            // Wrapped in the side column: a long line was clipped at the window's right edge.
            ui.add(egui::Label::new(line).wrap());
        }
    }
}

/// The roles at a time as a grid: swatch, name, size, share of the total.
fn split_grid(ui: &mut egui::Ui, t: &Tr, at: &RolesAt) {
    // One unit for the column, from its largest value (the total).
    let unit = MemUnit::for_list(at.roles.iter().map(|r| r.bytes).chain([at.total]));
    egui::Grid::new("roles_split")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            for r in at.roles.iter().filter(|r| r.bytes != 0 || r.blocks != 0) {
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter()
                    .rect_filled(rect, 2.0, palette::role_color(r.role));
                ui.label(role_name(t, r.role));
                ui.label(bytes_in(r.bytes, unit));
                let share = if at.total > 0 {
                    r.bytes as f64 / at.total as f64 * 100.0
                } else {
                    0.0
                };
                ui.label(format!("{share:.1} %"));
                ui.end_row();
            }
            ui.label("");
            ui.strong(t.roles_total);
            ui.strong(bytes_in(at.total, unit));
            ui.end_row();
        });
}

/// The live blocks at the cursor split by role (for "Where the memory is"): each role's bytes
/// and blocks among `rows`.
pub fn live_roles_ui(ui: &mut egui::Ui, t: &Tr, data: &crate::model::RankData, rows: &[u32]) {
    let Some(roles) = data.roles.as_ref() else {
        return;
    };
    let mut by = [(0i64, 0usize); 8];
    for &r in rows {
        let r = r as usize;
        if let (Some(role), Some(&size)) = (roles.role.get(r), data.operators.size.get(r)) {
            let e = &mut by[role.index()];
            e.0 = e.0.saturating_add(size);
            e.1 += 1;
        }
    }
    ui.strong(t.live_by_role);
    let unit = MemUnit::for_list(by.iter().map(|b| b.0));
    egui::Grid::new("live_by_role")
        .num_columns(4)
        .striped(true)
        .show(ui, |ui| {
            for role in Role::ALL {
                let (b, n) = by[role.index()];
                if n == 0 {
                    continue;
                }
                let (rect, _) =
                    ui.allocate_exact_size(egui::vec2(10.0, 10.0), egui::Sense::hover());
                ui.painter()
                    .rect_filled(rect, 2.0, palette::role_color(role));
                ui.label(role_name(t, role));
                ui.label(bytes_in(b, unit));
                ui.label(crate::ui::format::grouped(n as f64, 0));
                ui.end_row();
            }
        });
}

/// The advice panel's lines, every figure in one unit (the largest figure's): "12.30 GB"
/// beside "845.00 MB" read as a mistake.
pub fn advice_lines(t: &Tr, advice: &[crate::analysis::Advice]) -> Vec<String> {
    let unit = MemUnit::for_list(advice.iter().flat_map(advice_figures));
    advice.iter().map(|a| advice_text_in(t, a, unit)).collect()
}

/// Every figure an advice line prints, bytes.
fn advice_figures(a: &crate::analysis::Advice) -> Vec<i64> {
    let mut v = vec![a.bytes, a.saves().unwrap_or(0)];
    v.extend(a.holders.iter().map(|(_, b)| *b));
    v.extend(a.replayed.iter().flat_map(|r| [r.from, r.to]));
    v
}

/// One line of advice in the UI's language, with its numbers in one unit (its largest
/// figure's).
pub fn advice_text(t: &Tr, a: &crate::analysis::Advice) -> String {
    advice_text_in(t, a, MemUnit::for_list(advice_figures(a)))
}

/// [`advice_text`] with its figures in `unit` (the panel's, shared by its lines).
pub fn advice_text_in(t: &Tr, a: &crate::analysis::Advice, unit: MemUnit) -> String {
    a.render(t.lang, &|b| bytes_in(b, unit))
}

/// The rank's Operator Allocated curve, when it has one.
fn allocated_series(view: &RankView) -> Option<&crate::analysis::Series> {
    view.operator_allocated()
}

/// The stacked bars of the roles over the window and Operator Allocated on top.
fn stacked_plot(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    report: &RoleReport,
    drag: &mut Option<(f64, f64)>,
) {
    let view = cx.view;
    let (full0, full1) = view.time_extent();
    let (t0, t1) = cx
        .state
        .link
        .window
        .map_or((full0, full1), |w| (w.start, w.end));
    let t1 = t1.max(t0 + 1);
    let columns = ((ui.available_width() / 2.0) as usize).clamp(10, MAX_COLUMNS);
    let step = ((t1 - t0) as f64 / columns as f64).max(1.0);
    let allocated_curve = allocated_series(view);
    // The chart's unit: GB once the largest value reaches 10 GB.
    // The report's peak is the largest value drawn (Operator Allocated's, else the blocks').
    let largest = report.at_peak.as_ref().map_or(0, |p| p.total);
    let unit = MemUnit::for_max(largest as f64);
    let mib = unit.bytes();
    let unit_label = unit.label();
    let at = |k: usize| t0 + ((k as f64 + 1.0) * step) as i64;
    // Nothing is drawn past the data's last sample (values are held, not known, there).
    let data_end = allocated_curve
        .and_then(|a| a.times.last().copied())
        .into_iter()
        .chain(
            report
                .series
                .iter()
                .filter_map(|s| s.series.times.last().copied()),
        )
        .max()
        .unwrap_or(t1)
        .saturating_add(step as i64);
    // Each column's bytes per role, `before_profiling` (the curve less the live blocks) first.
    let mut layers: Vec<(Role, Vec<f64>)> = report
        .series
        .iter()
        .map(|s| {
            let v = (0..columns)
                .map(|k| crate::analysis::held_at(&s.series, at(k)).unwrap_or(0) as f64 / mib)
                .collect();
            (s.role, v)
        })
        .collect();
    if let Some(a) = allocated_curve {
        let before: Vec<f64> = (0..columns)
            .map(|k| {
                let live: f64 = layers.iter().map(|(_, v)| v[k]).sum();
                crate::analysis::held_at(a, at(k)).map_or(0.0, |c| (c as f64 / mib - live).max(0.0))
            })
            .collect();
        layers.insert(0, (Role::BeforeProfiling, before));
    }
    let mut charts: Vec<BarChart> = Vec::new();
    let mut base = vec![0.0f64; columns];
    for (role, values) in layers {
        let color = palette::role_color(role);
        let bars: Vec<Bar> = values
            .iter()
            .zip(base.iter_mut())
            .enumerate()
            .filter_map(|(k, (&v, b))| {
                if v <= 0.0 || at(k) > data_end {
                    return None;
                }
                let x = ns_to_ms(t0) + ns_to_ms((k as f64 * step + step / 2.0) as i64);
                let bar = Bar::new(x, v)
                    .width(ns_to_ms(step as i64))
                    .base_offset(*b)
                    .fill(color)
                    .stroke(egui::Stroke::NONE);
                *b += v;
                Some(bar)
            })
            .collect();
        let name = role_name(cx.t, role);
        charts.push(
            BarChart::new(name, bars)
                .color(color)
                .element_formatter(Box::new(move |bar, _| {
                    format!(
                        "{name}\n{:.3} ms\n{:.2} {unit_label}",
                        bar.argument, bar.value
                    )
                })),
        );
    }
    let allocated: Option<Vec<[f64; 2]>> = allocated_curve.map(|s| {
        let lo = s.times.partition_point(|&t| t < t0).saturating_sub(1);
        let hi = s.times.partition_point(|&t| t <= t1);
        let n = hi.saturating_sub(lo);
        let stride = (n / (columns * 4)).max(1);
        s.times[lo..hi]
            .iter()
            .zip(&s.values[lo..hi])
            .step_by(stride)
            .map(|(&t, &v)| [ns_to_ms(t), v as f64 / mib])
            .collect()
    });
    let steps: Vec<(f64, f64)> = view
        .data
        .steps
        .as_ref()
        .map(|s| {
            s.steps
                .iter()
                .map(|st| {
                    (
                        ns_to_ms(view.data.rel_ns(st.start_ns)),
                        ns_to_ms(view.data.rel_ns(st.end_ns)),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let press = ui.input(|i| i.pointer.press_origin());
    let cursor = cx.state.link.cursor;
    let light = !ui.visuals().dark_mode;
    let t = cx.t;
    // No legend over the bars: the split beside the plot names each colour.
    let response = Plot::new("roles_plot")
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .include_y(0.0)
        .x_axis_label(t.time_axis)
        .y_axis_label((t.memory_axis)(unit_label))
        .x_grid_spacer(crate::ui::plot::time_grid)
        .show(ui, |plot_ui| {
            plot_ui.set_plot_bounds_x(ns_to_ms(t0)..=ns_to_ms(t1));
            for (k, (a, b)) in steps.iter().enumerate() {
                if k % 2 == 0 {
                    plot_ui.span(
                        egui_plot::Span::new("", *a..=*b)
                            .fill(if light {
                                palette::STEP_BAND_LIGHT
                            } else {
                                palette::STEP_BAND_DARK
                            })
                            .border(egui::Stroke::NONE),
                    );
                }
            }
            for c in charts {
                plot_ui.bar_chart(c);
            }
            if let Some(points) = allocated {
                plot_ui.line(
                    Line::new(
                        OverallCurve::OperatorAllocated.label(),
                        PlotPoints::from(points),
                    )
                    .color(palette::role_total(light))
                    .width(1.5),
                );
            }
            if let Some(c) = cursor {
                plot_ui.vline(VLine::new("", ns_to_ms(c)).color(palette::CURSOR));
            }
            box_zoom_or_click(plot_ui, press, drag)
        });
    match response.inner {
        Some(Gesture::Zoom(a, b)) if b > a => cx.out.push(Command::SetWindow {
            window: Some(TimeWindow::new(
                crate::model::ms_to_ns(a),
                crate::model::ms_to_ns(b).max(crate::model::ms_to_ns(a) + 1),
            )),
            moving: false,
        }),
        Some(Gesture::Click(x)) => cx
            .out
            .push(Command::SetCursor(Some(crate::model::ms_to_ns(x)))),
        _ => {}
    }
    if response.response.double_clicked() {
        cx.out.push(Command::SetWindow {
            window: None,
            moving: false,
        });
    }
}

/// What the pointer did in the plot this frame.
enum Gesture {
    /// A box dragged over [a, b] ms.
    Zoom(f64, f64),
    /// A click at x ms: the cursor.
    Click(f64),
}

fn box_zoom_or_click(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    press: Option<egui::Pos2>,
    drag: &mut Option<(f64, f64)>,
) -> Option<Gesture> {
    if let Some((a, b)) = crate::ui::plot::zoom::box_zoom(plot_ui, press, drag) {
        return Some(Gesture::Zoom(a, b));
    }
    if plot_ui.response().clicked() {
        return plot_ui.pointer_coordinate().map(|p| Gesture::Click(p.x));
    }
    None
}
