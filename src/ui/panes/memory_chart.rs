//! The memory chart pane: every series of the Group By on a real time axis (ms), drawn as steps
//! from the level-of-detail reduction of the visible window, with peaks, a hover readout of every
//! visible series, the hovered table row's lifetime, the cursor, and window statistics. What to
//! draw comes from `analysis::chart`; this module lays it out and turns gestures into commands.

use crate::ui::palette;
use std::sync::Arc;

use egui::{Color32, Id, PointerButton};
use egui_plot::{Plot, PlotBounds, PlotPoint, Points, Polygon, Span, Text, VLine};

use super::PaneCx;
use crate::analysis::{
    GroupBy, LodSeries, MINOR_SHARE, RankView, TablesApart, ViewId, WindowStats, block_lifetime,
    largest_visible_peak, padded, peak_marks, peak_near, sampled_counts, value_at, window_stats,
    y_fit,
};
use crate::model::{TimeWindow, ms_to_ns, ns_to_ms};
use crate::ui::chart_image::{ChartFigure, FigureCurve};
use crate::ui::command::Command;
use crate::ui::format::{MemUnit, bytes_in, grouped, ms};
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Place};
use crate::ui::plot::reduction::ReductionCache;
use crate::ui::plot::step_line::StepLine;
use crate::ui::plot::zoom::{box_zoom, take_wheel, wheel_zoom};
use crate::ui::plot::{curve_color, decimals_for, labels};

/// The job that builds a view's curves for a Group By (one per view and grouping).
pub const SERIES_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("series", "building curves", "生成曲线");

/// The plot's id (its memory holds the legend's hidden series).
pub const PLOT_ID: &str = "memsight_chart";

/// memory_record rows from which a Group By's series are built off the UI thread (Stream takes
/// 1.7 s for 10.6M rows).
pub const BACKGROUND_MIN_ROWS: usize = 2_000_000;

/// A zoom asked for from the keyboard.
#[derive(Debug, Clone, Copy, PartialEq)]
enum KeyZoom {
    /// A wheel step of this many points (positive: in).
    By(f64),
    /// Back to the whole rank.
    Reset,
}

/// `+` (or `=`) zooms in twice, `−` out twice, `0` resets; None without such a key or while
/// a text field is focused (it gets the key).
fn keyboard_zoom(ui: &egui::Ui) -> Option<KeyZoom> {
    if ui.ctx().memory(|m| m.focused().is_some()) {
        return None;
    }
    let step = 200.0 * std::f64::consts::LN_2;
    ui.ctx().input_mut(|i| {
        let none = egui::Modifiers::NONE;
        let zoom_in = i.consume_key(none, egui::Key::Plus) | i.consume_key(none, egui::Key::Equals);
        let zoom_out = i.consume_key(none, egui::Key::Minus);
        let reset = i.consume_key(none, egui::Key::Num0);
        if reset {
            Some(KeyZoom::Reset)
        } else if zoom_in {
            Some(KeyZoom::By(step))
        } else if zoom_out {
            Some(KeyZoom::By(-step))
        } else {
            None
        }
    })
}

/// The memory chart's own state between frames.
pub struct MemoryChart {
    /// The reduced lines.
    pub(crate) reduction: ReductionCache,
    /// The baseline's reduced lines, in a comparison (cached like the rank's).
    pub(crate) baseline_reduction: ReductionCache,
    /// Ranks with at least this many memory_record rows build a Group By's series in a job
    /// (a second or two for 10M rows) while the chart shows a spinner.
    pub(crate) background_min_rows: usize,
    /// The (view, Group By) whose series a job is building.
    building: Option<((ViewId, GroupBy), Job<()>)>,
    /// The same for the baseline of a comparison.
    baseline_building: Option<((ViewId, GroupBy), Job<()>)>,
    /// A drag-box zoom in progress: the times (ms) where it started and has reached.
    drag: Option<(f64, f64)>,
    /// The plot's width in physical pixels, last frame.
    plot_px: Option<usize>,
    /// Where the chart (its header, legend and plot) was drawn last frame: what Save chart as
    /// PNG keeps of the window.
    pub(crate) last_rect: Option<egui::Rect>,
    /// The plot's frame (inside its axes) last frame.
    pub(crate) last_plot_rect: Option<egui::Rect>,
    /// The y axis's range last frame, in the chart's unit.
    pub(crate) last_y_range: Option<(f64, f64)>,
    /// The peak labels drawn last frame.
    pub(crate) last_peak_labels: Vec<PeakLabel>,
    /// What the plot drew last frame, for Save chart as PNG's report.
    pub(crate) last_figure: Option<ChartFigure>,
    /// The In-view statistics were unfolded last frame (`None` before the first).
    stats_open: Option<bool>,
    /// The view and window the plot was last in step with (`None`: the whole rank): another
    /// rank, or a window set elsewhere, is applied to the plot.
    synced: Option<(ViewId, Option<TimeWindow>)>,
}

/// What tests read of the chart's last frame and set as a user's machine would: its fields
/// are its own.
impl MemoryChart {
    /// Where the chart (its header, legend and plot) was drawn last frame.
    pub fn last_rect(&self) -> Option<egui::Rect> {
        self.last_rect
    }

    /// The plot's frame (inside its axes) last frame.
    pub fn last_plot_rect(&self) -> Option<egui::Rect> {
        self.last_plot_rect
    }

    /// What the plot drew last frame.
    pub fn last_figure(&self) -> Option<&ChartFigure> {
        self.last_figure.as_ref()
    }

    /// Ranks with at least `rows` memory_record rows build a Group By's series in a job.
    pub fn set_background_min_rows(&mut self, rows: usize) {
        self.background_min_rows = rows;
    }

    /// Lines of more than `points` points are drawn sampled first, then exactly in a job.
    pub fn set_exact_max_points(&mut self, points: usize) {
        self.reduction.exact_max_points = points;
    }
}

impl Default for MemoryChart {
    fn default() -> Self {
        MemoryChart {
            reduction: ReductionCache::default(),
            baseline_reduction: ReductionCache::with_key(JobKey::new(
                crate::ui::plot::reduction::REDUCE_BASELINE_JOB,
            )),
            background_min_rows: BACKGROUND_MIN_ROWS,
            building: None,
            baseline_building: None,
            drag: None,
            plot_px: None,
            last_rect: None,
            last_plot_rect: None,
            last_peak_labels: Vec::new(),
            last_figure: None,
            last_y_range: None,
            stats_open: None,
            synced: None,
        }
    }
}

/// What the plot closure reports back.
struct PlotOut {
    bounds: (f64, f64),
    pointer: Option<PlotPoint>,
    clicked: bool,
    double: bool,
    zoom_to: Option<(f64, f64)>,
    /// The peak marker under the pointer (a click there snaps the cursor to the peak).
    near_peak: Option<i64>,
    /// The step whose label strip is under the pointer (a click there zooms to the step).
    step_under: Option<TimeWindow>,
}

/// Height of the strip at the top of the plot where step labels sit (a click there zooms to
/// the step).
const STEP_STRIP_PX: f32 = 18.0;

/// The curves the chart draws, as Save chart as PNG's figure draws them too, each with the name
/// the plot knows it by: every visible curve's part of the (wider) cached reduction in the
/// window, plus one point each side, in the figure's unit, with its legend (its name and peak in
/// the window); then the baseline's curves, dashed.
fn figure_curves(
    t: &Tr,
    (series, lines): (&[LodSeries], &[Vec<[f64; 2]>]),
    (visible, colors, names): (&[bool], &[Color32], &[String]),
    stats: &[Option<WindowStats>],
    unit: MemUnit,
    (v0, v1): (f64, f64),
    baseline: Vec<(String, Color32, Vec<[f64; 2]>)>,
) -> Vec<(String, FigureCurve)> {
    let u = unit.bytes();
    let mut curves = Vec::new();
    for (i, (s, line)) in series.iter().zip(lines).enumerate() {
        if !visible[i] {
            continue;
        }
        let a = line.partition_point(|p| p[0] < v0).saturating_sub(1);
        let b = (line.partition_point(|p| p[0] <= v1) + 1).min(line.len());
        let points: Vec<[f64; 2]> = line[a..b].iter().map(|p| [p[0], p[1] / u]).collect();
        let peak = stats[i].map(|st| (st.max, st.max_time));
        let legend = peak.map_or_else(
            || names[i].clone(),
            |(v, at)| (t.report_peak)(&names[i], &bytes_in(v, unit), &ms(ns_to_ms(at))),
        );
        curves.push((
            s.series.name.clone(),
            FigureCurve {
                legend,
                color: colors[i],
                points,
                peak: peak.map(|(v, at)| [ns_to_ms(at), v as f64 / u]),
                dashed: false,
            },
        ));
    }
    for (name, color, points) in baseline {
        curves.push((
            name.clone(),
            FigureCurve {
                legend: name,
                color,
                points,
                peak: None,
                dashed: true,
            },
        ));
    }
    curves
}

/// What the chart draws over the curves: the step bands, the peak labels, the lifetime of the
/// block hovered or marked in the table, and the cursor. The step whose label strip is under
/// the pointer, and where the peak labels went.
fn overlays(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    (t, state): (&Tr, &crate::ui::state::ViewState),
    data: &crate::model::RankData,
    (marks, colors, unit): (&[(usize, crate::analysis::Peak)], &[Color32], MemUnit),
    (v0, v1, y_hi): (f64, f64, f64),
    extent: TimeWindow,
) -> (Option<TimeWindow>, Vec<PeakLabel>) {
    let step_under = step_bands(plot_ui, data, (v0, v1), y_hi);
    let labels = peak_labels(plot_ui, t, marks, colors, unit, (v0, v1));
    if let Some(life) = state
        .hovered_row
        .or(state.marked_row)
        .and_then(|r| block_lifetime(data, r as usize))
    {
        let (a, z) = life.span(extent).ms();
        plot_ui.span(Span::new("", a..=z).fill(palette::LIFETIME_SPAN));
        if life.allocated.is_some() {
            plot_ui.vline(
                VLine::new("", a)
                    .color(palette::LIFETIME_ALLOCATED)
                    .width(1.5),
            );
        }
        if life.released.is_some() {
            plot_ui.vline(
                VLine::new("", z)
                    .color(palette::LIFETIME_RELEASED)
                    .width(1.5),
            );
        }
    }
    if let Some(c) = state.cursor_ms() {
        plot_ui.vline(VLine::new("", c).color(palette::CURSOR).width(1.0));
    }
    (step_under, labels)
}

/// Step bands: every other step shaded, each labelled `#N` at the top when it is wide enough.
/// Returns the step whose label strip is under the pointer.
fn step_bands(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    data: &crate::model::RankData,
    (v0, v1): (f64, f64),
    y_top: f64,
) -> Option<TimeWindow> {
    let steps = data.steps.as_ref()?;
    let frame = *plot_ui.transform().frame();
    let px_per_ms = f64::from(frame.width()) / (v1 - v0).max(f64::MIN_POSITIVE);
    let shade = if plot_ui.ctx().global_style().visuals.dark_mode {
        palette::STEP_BAND_DARK
    } else {
        palette::STEP_BAND_LIGHT
    };
    // Step labels read like links: the text colour, the link colour under the pointer (a click
    // zooms to the step). They were the weak grey and looked like decoration.
    let (text_color, link_color) = {
        let v = &plot_ui.ctx().global_style().visuals;
        (v.text_color(), v.hyperlink_color)
    };
    let pointer = plot_ui.response().hover_pos();
    let mut under = None;
    for (k, s) in steps.steps.iter().enumerate() {
        let (a, b) = (
            ns_to_ms(data.rel_ns(s.start_ns)),
            ns_to_ms(data.rel_ns(s.end_ns)),
        );
        if b < v0 || a > v1 {
            continue;
        }
        if k % 2 == 0 {
            plot_ui.span(Span::new("", a..=b).fill(shade));
        }
        let hovered = pointer.is_some_and(|p| {
            let x = plot_ui.plot_from_screen(p).x;
            p.y <= frame.top() + STEP_STRIP_PX && x >= a && x <= b
        });
        if (b - a) * px_per_ms >= 28.0 {
            let mid = (a.max(v0) + b.min(v1)) / 2.0;
            let color = if hovered { link_color } else { text_color };
            plot_ui.text(
                Text::new("", PlotPoint::new(mid, y_top), format!("#{}", s.id))
                    .color(color)
                    .anchor(egui::Align2::CENTER_TOP),
            );
        }
        if hovered {
            under = Some(TimeWindow::new(
                data.rel_ns(s.start_ns),
                data.rel_ns(s.end_ns).max(data.rel_ns(s.start_ns) + 1),
            ));
        }
    }
    under
}

/// Screen pixels within which a click snaps to a peak marker.
const SNAP_PX: f32 = 8.0;

/// The stream of a Stream-mode series (`Allocated of <pointer>`): its quantity and pointer.
fn stream_parts(name: &str) -> Option<(&str, &str)> {
    name.split_once(" of ")
}

/// The stream index (0-based, in order of first appearance) of each series in Stream mode.
fn stream_indices(series: &[LodSeries]) -> Vec<Option<usize>> {
    let mut pointers: Vec<&str> = Vec::new();
    series
        .iter()
        .map(|s| {
            let (_, ptr) = stream_parts(&s.series.name)?;
            Some(pointers.iter().position(|p| *p == ptr).unwrap_or_else(|| {
                pointers.push(ptr);
                pointers.len() - 1
            }))
        })
        .collect()
}

/// Each series' colour, by what it means (see [`curve_color`]; in Stream mode each stream has
/// a hue family of its own), and what the legend and the readouts call it: its name, or in
/// Stream mode "Stream k Allocated" (streams numbered from 1 in order of first appearance; the
/// pointer on hover).
fn looks(t: &Tr, series: &[LodSeries]) -> (Vec<Color32>, Vec<String>) {
    series
        .iter()
        .zip(stream_indices(series))
        .map(|(s, k)| {
            let name = &s.series.name;
            let label = match (stream_parts(name), k) {
                (Some((quantity, _)), Some(k)) => (t.stream_series)(k + 1, quantity),
                _ => name.clone(),
            };
            (curve_color(name, k.unwrap_or(0)), label)
        })
        .unzip()
}

/// The legend, above the plot so that it never covers a curve or a peak: one toggle per series
/// with its colour; hovering explains the curve.
fn legend_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    series: &[LodSeries],
    (colors, shown): (&[Color32], &[String]),
    visible: &[bool],
    out: &mut Vec<Command>,
) {
    ui.horizontal_wrapped(|ui| {
        for (((s, &c), &on), label) in series.iter().zip(colors).zip(visible).zip(shown) {
            let name = s.series.name.as_str();
            let dot = if on { "●" } else { "○" };
            let mut job = egui::text::LayoutJob::default();
            egui::RichText::new(format!("{dot} ")).color(c).append_to(
                &mut job,
                ui.style(),
                egui::FontSelection::Default,
                egui::Align::Center,
            );
            let label_color = if on {
                ui.visuals().text_color()
            } else {
                ui.visuals().weak_text_color()
            };
            egui::RichText::new(label.as_str())
                .color(label_color)
                .append_to(
                    &mut job,
                    ui.style(),
                    egui::FontSelection::Default,
                    egui::Align::Center,
                );
            let mut r = ui.add(egui::Button::new(job).frame(false));
            // The entry is found by what it says (screen readers, tests).
            r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, label));
            if let Some((quantity, ptr)) = stream_parts(name) {
                let help = (t.curve_help)(&format!("Operator {quantity}")).unwrap_or_default();
                r = r.on_hover_text(format!("{}\n{help}", (t.stream_pointer)(ptr)));
            } else if let Some(help) = (t.curve_help)(name) {
                r = r.on_hover_text(help);
            }
            if r.clicked() {
                out.push(Command::ToggleSeries(name.to_string()));
            }
        }
    });
}

/// Decimals that show a value to about a thousandth of the visible y span (`span` in the unit),
/// at least 2.
fn hover_decimals(span: f64) -> usize {
    if span > 0.0 && span.is_finite() {
        (-(span / 1000.0).log10()).ceil().clamp(2.0, 6.0) as usize
    } else {
        2
    }
}

impl MemoryChart {
    /// The series of `group`, built in a job for a big rank; `None` (and a spinner on screen)
    /// while that runs.
    fn ready_series<'v>(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut PaneCx<'_>,
        view: &'v Arc<RankView>,
        group: GroupBy,
    ) -> Option<&'v [LodSeries]> {
        if let Some(s) = view.series_built(group) {
            self.building = None;
            return Some(s);
        }
        if view.data.records.len() < self.background_min_rows {
            return Some(view.series(group));
        }
        let key = (view.id(), group);
        if self.building.as_ref().map(|(k, _)| *k) != Some(key) {
            let job_view = Arc::clone(view);
            let job = cx.jobs.run(
                JobKey::scoped(SERIES_JOB, &(key.0, group)),
                Place::Thread,
                move |_| {
                    job_view.series(group);
                },
            );
            if job.start_error.is_some() {
                return Some(view.series(group));
            }
            self.building = Some((key, job));
        }
        ui.horizontal(|ui| {
            crate::ui::spinner::spinner(ui);
            ui.label((cx.t.building_curves)(crate::ui::top_bar::group_name(
                cx.t, group,
            )));
        });
        None
    }

    /// Draws the chart and pushes what the user did (zoom, pan, cursor, reset) as commands.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let view = Arc::clone(cx.view);
        let group = cx.state.group_by;
        let Some(series) = self.ready_series(ui, cx, &view, group) else {
            return;
        };
        if series.is_empty() {
            ui.centered_and_justified(|ui| {
                ui.label((cx.t.no_curves)(crate::ui::top_bar::group_name(
                    cx.t, group,
                )));
            });
            return;
        }
        let (state, t) = (cx.state, cx.t);
        notices_ui(ui, t, &view, cx.out);
        let (e0, e1) = view.time_extent();
        let extent = TimeWindow::new(e0, e1);
        let window = state.link.window.unwrap_or(extent);
        let (v0, v1) = window.ms();
        // One reduction column per physical pixel column of the plot (its frame as drawn last
        // frame), so exact mode draws what every point would.
        let ppp = ui.ctx().pixels_per_point();
        let width = self
            .plot_px
            .unwrap_or((ui.available_width() * ppp) as usize)
            .max(100);
        // The baseline's first: its cache is apart from the rank's, whose lines are borrowed
        // below.
        let baseline_bytes = self.baseline_lines(ui, cx, group, window, width);
        let ctx = ui.ctx().clone();
        let Some(reduced) = self
            .reduction
            .lines(&view, group, window, width, cx.jobs, || {
                ctx.request_repaint()
            })
        else {
            return;
        };
        let (lines, sampled) = (&reduced.lines, reduced.sampled);
        let visible: Vec<bool> = series
            .iter()
            .map(|s| !state.hidden_series.contains(&s.series.name))
            .collect();
        let (colors, names) = looks(t, series);

        // Unit from the largest visible peak; y fitted to what is visible in the window.
        let unit = MemUnit::for_max(largest_visible_peak(series, &visible) as f64);
        let u = unit.bytes();
        // Zoomed, tiny curves do not pull the axis down; the whole rank shows every curve.
        let minor_share = if state.link.window.is_some() {
            MINOR_SHARE
        } else {
            0.0
        };
        let fit = y_fit(lines, &visible, (v0, v1), u, state.y_from_zero, minor_share);
        let (y_lo, y_hi) = (fit.lo / u, fit.hi / u);
        let decimals = hover_decimals(y_hi - y_lo);

        let below: Vec<&str> = fit.below.iter().map(|&i| names[i].as_str()).collect();
        toolbar_ui(ui, t, state, (v0, v1), &below, cx.out);
        if sampled {
            let (drawn, total) = sampled_counts(series, lines, &visible, window);
            ui.colored_label(
                ui.visuals().warn_fg_color,
                (t.sampled)(&grouped(drawn as f64, 0), &grouped(total as f64, 0)),
            );
        }
        legend_ui(ui, t, series, (&colors, &names), &visible, cx.out);
        compare_notes_ui(ui, cx, &view);
        let baseline_lines: Vec<(String, Color32, Vec<[f64; 2]>)> = baseline_bytes
            .into_iter()
            .map(|(name, color, pts)| (name, color, pts.iter().map(|p| [p[0], p[1] / u]).collect()))
            .collect();
        // The y axis holds the baseline too.
        let (y_lo, y_hi) = baseline_lines
            .iter()
            .flat_map(|(_, _, pts)| pts.iter().map(|p| p[1]))
            .fold((y_lo, y_hi), |(lo, hi), y| (lo.min(y), hi.max(y)));
        let layout = chart_layout(ui, self.stats_open, visible.iter().filter(|v| **v).count());
        let (plot_height, unfold_by_default) = (layout.plot_height, layout.unfold_by_default);
        let plot_top = ui.cursor().top();
        // With steps, room at the top for their labels (and the strip a click zooms from), so a
        // peak label there does not cover them.
        let y_hi = if view.data.steps.is_some() {
            let f = f64::from((STEP_STRIP_PX + 16.0) / plot_height).min(0.3);
            y_hi + (y_hi - y_lo) * f / (1.0 - f)
        } else {
            y_hi
        };
        let apply = self.synced != Some((view.id(), state.link.window));
        let press_origin = ui.input(|i| i.pointer.press_origin());
        let mut drag = self.drag;
        let marks = peak_marks(series, &visible);
        let mut peak_label_rects = Vec::new();
        let stats = window_stats(series, window);
        // The chart's model, shared with Save chart as PNG's figure: each visible curve's part in
        // the window, with its legend and peak, then the baseline's, dashed.
        let curves = figure_curves(
            t,
            (series, lines),
            (&visible, &colors, &names),
            &stats,
            unit,
            (v0, v1),
            baseline_lines,
        );
        // The plot's frame (last frame's, or the plot less its time axis before one was drawn)
        // and half a tick label's height: a label whose upper half would leave the frame is
        // not drawn (the legend sits right above it).
        let line = ui.text_style_height(&egui::TextStyle::Body);
        let frame_height = self
            .last_plot_rect
            .map_or(plot_height - 2.0 * line, |r| r.height());
        let half_label = line * 0.5;
        let response = Plot::new(PLOT_ID)
            .id(Id::unique(PLOT_ID))
            .height(plot_height)
            // Room on the right for half of the last time label, which egui_plot centres on its
            // tick at the plot's edge (it was cut off there).
            .width((ui.available_width() - 16.0 - layout.side_width.unwrap_or(0.0)).max(160.0))
            .x_axis_label(t.time_axis)
            .x_grid_spacer(crate::ui::plot::time_grid)
            .y_grid_spacer(crate::ui::plot::memory_grid)
            .y_axis_label((t.memory_axis)(unit.label()))
            .x_axis_formatter(|m, _| grouped(m.value, decimals_for(m.step_size)))
            .y_axis_formatter(move |m, range| {
                if crate::ui::plot::under_the_top_edge(m.value, range, frame_height, half_label) {
                    grouped(m.value, decimals_for(m.step_size))
                } else {
                    // Centred on its tick, this label would reach into the legend above.
                    String::new()
                }
            })
            .allow_zoom([true, false])
            .allow_drag([true, false])
            .allow_scroll([true, false])
            .allow_double_click_reset(false)
            // Box zoom is our own (below): egui_plot's starts where the drag is recognised, a
            // few pixels after the press, and zooms y as well.
            .allow_boxed_zoom(false)
            .pan_pointer_button(PointerButton::Secondary)
            .label_formatter(|_| None)
            // No filled plot background: under software rendering a large fill costs more than
            // all the curves together, and the grid marks the plot area well enough.
            .show_background(false)
            .show(ui, |plot_ui| {
                if apply {
                    plot_ui.set_plot_bounds(PlotBounds::from_min_max([v0, y_lo], [v1, y_hi]));
                } else {
                    plot_ui.set_plot_bounds_y(y_lo..=y_hi);
                }
                for (name, c) in &curves {
                    if c.dashed {
                        plot_ui.line(
                            egui_plot::Line::new(name.as_str(), c.points.clone())
                                .color(c.color)
                                .width(1.2)
                                .style(egui_plot::LineStyle::dashed_dense()),
                        );
                    } else {
                        plot_ui.add(StepLine::new(name.as_str(), &c.points, c.color));
                    }
                }
                let step_under;
                (step_under, peak_label_rects) = overlays(
                    plot_ui,
                    (t, state),
                    &view.data,
                    (&marks, &colors, unit),
                    (v0, v1, y_hi),
                    extent,
                );
                let zoom_to = box_zoom(plot_ui, press_origin, &mut drag);
                let b = plot_ui.plot_bounds();
                // A click just before (on the chart or elsewhere) makes egui count a
                // double-click as a triple one; both reset.
                let r = plot_ui.response();
                let near_peak = r.hover_pos().and_then(|at| {
                    peak_near(&marks, (at.x, at.y), SNAP_PX, |time, value| {
                        let p = plot_ui
                            .screen_from_plot(PlotPoint::new(ns_to_ms(time), value as f64 / u));
                        (p.x, p.y)
                    })
                    .map(|(_, p)| p.time)
                });
                PlotOut {
                    bounds: (b.min()[0], b.max()[0]),
                    pointer: plot_ui.pointer_coordinate(),
                    clicked: r.clicked(),
                    double: r.double_clicked() || r.triple_clicked(),
                    zoom_to,
                    near_peak,
                    step_under,
                }
            });
        let out = response.inner;
        self.last_rect = Some(ui.min_rect());
        self.last_plot_rect = Some(*response.transform.frame());
        self.last_y_range = Some((y_lo, y_hi));
        self.last_peak_labels = peak_label_rects;
        self.last_figure = Some(ChartFigure {
            x_range: (v0, v1),
            y_range: (y_lo, y_hi),
            x_title: t.time_axis.to_string(),
            y_title: (t.memory_axis)(unit.label()),
            curves: curves.into_iter().map(|(_, c)| c).collect(),
            size_pt: ui.min_rect().size().into(),
        });
        response.response.context_menu(|ui| {
            if ui.button(t.save_chart).clicked() {
                cx.out.push(Command::SaveChart);
                ui.close();
            }
        });
        let plot_px = (response.transform.frame().width() * ppp).round() as usize;
        if self.plot_px != Some(plot_px) {
            self.plot_px = Some(plot_px);
            ui.ctx().request_repaint(); // reduce again for the plot's real width
        }
        self.drag = if ui.input(|i| i.pointer.any_down()) {
            drag
        } else {
            None
        };
        self.gestures_to_commands(ui, cx, &response.response, &out, extent, width, apply);
        if let Some(p) = out.pointer {
            let look = (&colors[..], &names[..], &visible[..]);
            hover_values_ui(&response.response, p, series, look, unit, decimals);
        }
        let look = (&colors[..], &names[..], &visible[..]);
        // Beside the plot and as tall as it, when the window is too short for them below.
        let side = layout.side_width.map(|w| {
            let right = ui.max_rect().right();
            egui::Rect::from_min_max(
                egui::pos2(right - w, plot_top),
                egui::pos2(right, plot_top + plot_height),
            )
        });
        let shown = (unfold_by_default, side);
        self.stats_section(ui, t, look, &stats, unit, shown, cx.out);
    }

    /// The In-view statistics, folded or not as the user left them (else unfolded when
    /// `unfold_by_default`): their header below the plot, their rows under it or, with a
    /// `side` rectangle, there.
    #[allow(clippy::too_many_arguments)] // each is one thing the section draws from
    fn stats_section(
        &mut self,
        ui: &mut egui::Ui,
        t: &Tr,
        (colors, names, visible): (&[Color32], &[String], &[bool]),
        stats: &[Option<WindowStats>],
        unit: MemUnit,
        (unfold_by_default, side): (bool, Option<egui::Rect>),
        out: &mut Vec<Command>,
    ) {
        let mut rows = |ui: &mut egui::Ui| {
            egui::ScrollArea::vertical()
                .id_salt("window_stats_scroll")
                .auto_shrink([false, true])
                .show(ui, |ui| {
                    stats_ui(ui, t, names, colors, visible, stats, unit, out);
                });
        };
        // Open as the user left it in this run, else by the window's height: egui's own memory
        // of the header is saved across starts, and an In view opened once at 720p squeezed
        // the chart on every start after.
        let open = self.stats_open.unwrap_or(unfold_by_default);
        let header = egui::CollapsingHeader::new(t.in_view)
            .id_salt("window_stats_header")
            .open(Some(open))
            .show(ui, |ui| {
                if side.is_none() {
                    rows(ui);
                }
            });
        if let Some(rect) = side.filter(|_| open) {
            ui.scope_builder(egui::UiBuilder::new().max_rect(rect), rows);
        }
        if header.header_response.clicked() {
            self.stats_open = Some(!open);
        }
    }

    /// The baseline's curves of this Group By (bytes), reduced to the window on its own axis
    /// and shifted onto the rank's. Its series are built off
    /// the UI thread (Overall with the baseline's load, another Group By in a job) and reduced
    /// through a cache of their own, like the rank's.
    fn baseline_lines(
        &mut self,
        ui: &egui::Ui,
        cx: &mut PaneCx<'_>,
        group: GroupBy,
        window: TimeWindow,
        width: usize,
    ) -> Vec<(String, Color32, Vec<[f64; 2]>)> {
        let state = cx.state;
        match &cx.compare {
            Some(cmp) => {
                let off = cmp.offset;
                let (a, b) = window.ns();
                let bview = Arc::clone(&cmp.baseline.view);
                let ready = bview.series_built(group).is_some()
                    || bview.data.records.len() < self.background_min_rows;
                let key = (bview.id(), group);
                if ready {
                    self.baseline_building = None;
                } else if self.baseline_building.as_ref().map(|(k, _)| *k) != Some(key) {
                    // The series land in the view's own cache; the handle keeps the job alive.
                    let job_view = Arc::clone(&bview);
                    let job = cx.jobs.run(
                        JobKey::scoped(SERIES_JOB, &(key.0, group)),
                        Place::Thread,
                        move |_| {
                            job_view.series(group);
                        },
                    );
                    self.baseline_building = Some((key, job));
                }
                let shifted = TimeWindow::new(a.saturating_sub(off), b.saturating_sub(off));
                let ctx = ui.ctx().clone();
                let reduced = ready
                    .then(|| {
                        self.baseline_reduction.lines(
                            &bview,
                            group,
                            shifted,
                            width,
                            cx.jobs,
                            || ctx.request_repaint(),
                        )
                    })
                    .flatten();
                match reduced {
                    Some(r) => {
                        let off_ms = ns_to_ms(off);
                        bview
                            .series(group)
                            .iter()
                            .zip(&r.lines)
                            .enumerate()
                            .filter(|(_, (s, _))| !state.hidden_series.contains(&s.series.name))
                            .map(|(k, (s, line))| {
                                // Steps drawn as a polyline: each value holds until the next.
                                let mut pts = Vec::with_capacity(line.len() * 2);
                                for (i, p) in line.iter().enumerate() {
                                    let x = p[0] + off_ms;
                                    if i > 0 {
                                        pts.push([x, line[i - 1][1]]);
                                    }
                                    pts.push([x, p[1]]);
                                }
                                (
                                    format!("{} (baseline)", s.series.name),
                                    curve_color(&s.series.name, k),
                                    pts,
                                )
                            })
                            .collect()
                    }
                    None => {
                        ui.ctx().request_repaint();
                        Vec::new()
                    }
                }
            }
            None => Vec::new(),
        }
    }

    /// Turns this frame's plot interaction into commands: a pan or zoom done by the plot itself,
    /// the drag box, the wheel, a click (cursor) and a double-click (reset).
    #[allow(clippy::too_many_arguments)]
    fn gestures_to_commands(
        &mut self,
        ui: &egui::Ui,
        cx: &mut PaneCx<'_>,
        response: &egui::Response,
        out: &PlotOut,
        extent: TimeWindow,
        width: usize,
        applied: bool,
    ) {
        let state_window = cx.state.link.window;
        let id = cx.view.id();
        if out.double {
            cx.out.push(Command::ResetView);
            self.synced = Some((id, state_window));
            return;
        }
        let (b0, b1) = out.bounds;
        let full = extent.ms();
        let shown = TimeWindow::from_ms(b0, b1).filter(|w| *w != extent);
        let mut moved = false;
        if applied {
            self.synced = Some((id, state_window));
        } else if shown != state_window {
            // The plot panned or zoomed itself (right-drag, Shift+wheel, Ctrl+wheel).
            cx.out.push(Command::SetWindow {
                window: shown,
                moving: true,
            });
            self.synced = Some((id, shown));
            moved = true;
        }
        // A box narrower than a pixel or two is a slip of the hand, not a zoom.
        if let Some((a, b)) = out.zoom_to
            && (b - a) * f64::from(width as u32) > 2.0 * (b1 - b0)
        {
            cx.out.push(Command::SetWindow {
                window: TimeWindow::from_ms(a, b),
                moving: false,
            });
            moved = false;
        }
        let dy = if response.contains_pointer() {
            take_wheel(ui)
        } else {
            0.0
        };
        if let Some(p) = out.pointer
            && dy != 0.0
        {
            let range = wheel_zoom((b0, b1), p.x, f64::from(dy), full);
            let window = range.and_then(|(a, b)| TimeWindow::from_ms(a, b));
            if window != state_window {
                cx.out.push(Command::SetWindow {
                    window,
                    moving: true,
                });
                moved = true;
            }
        }
        // + and − zoom the time axis around the pointer (else the middle of what is shown);
        // 0 shows the whole rank again. Not while a text field has the keys.
        match keyboard_zoom(ui) {
            Some(KeyZoom::Reset) if state_window.is_some() => {
                cx.out.push(Command::SetWindow {
                    window: None,
                    moving: false,
                });
            }
            Some(KeyZoom::By(dy)) => {
                let at = out
                    .pointer
                    .filter(|_| response.contains_pointer())
                    .map_or(0.5 * (b0 + b1), |p| p.x);
                let range = wheel_zoom((b0, b1), at, dy, full);
                let window = range.and_then(|(a, b)| TimeWindow::from_ms(a, b));
                if window != state_window {
                    cx.out.push(Command::SetWindow {
                        window,
                        moving: false,
                    });
                }
            }
            _ => {}
        }
        if cx.state.link.moving && !moved {
            cx.out.push(Command::Settle);
        }
        if out.step_under.is_some() {
            // The step strip zooms on a click: say so with the pointer.
            ui.ctx().set_cursor_icon(egui::CursorIcon::PointingHand);
        }
        if out.clicked
            && let Some(step) = out.step_under
        {
            cx.out.push(Command::SetWindow {
                window: Some(step),
                moving: false,
            });
        } else if out.clicked
            && let Some(p) = out.pointer
        {
            let at = out.near_peak.unwrap_or_else(|| ms_to_ns(p.x));
            cx.out.push(Command::SetCursor(Some(at)));
        }
    }
}

/// A peak's label as drawn last frame (screen space): tests check that it sits by its marker.
#[derive(Clone, Debug)]
pub struct PeakLabel {
    /// The series' index among the chart's series.
    pub series: usize,
    /// The label's text.
    pub text: String,
    /// Where the text was drawn.
    pub rect: egui::Rect,
    /// The peak's marker, or `None` when the peak lies beyond the window and the label sits on
    /// the edge it lies beyond.
    pub marker: Option<egui::Pos2>,
}

/// Peak markers and their labels. A label goes next to its own marker, inside the plot, over
/// no other label and nearer its own marker than any other ([`labels::place_labels`]), or is
/// left out. A peak beyond the window gets no marker: its label sits on the edge it lies
/// beyond and says so with an arrow and its time.
fn peak_labels(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    t: &Tr,
    marks: &[(usize, crate::analysis::Peak)],
    colors: &[Color32],
    unit: MemUnit,
    (v0, v1): (f64, f64),
) -> Vec<PeakLabel> {
    let u = unit.bytes();
    let font = egui::TextStyle::Small.resolve(&plot_ui.ctx().global_style());
    let frame = *plot_ui.transform().frame();
    let mut spots = Vec::with_capacity(marks.len());
    let mut texts = Vec::with_capacity(marks.len());
    let mut markers = Vec::with_capacity(marks.len());
    for &(i, p) in marks {
        let at = PlotPoint::new(ns_to_ms(p.time), p.value as f64 / u);
        let value = format!("{} {}", grouped(at.y, 2), unit.label());
        let point = plot_ui.screen_from_plot(at);
        if point.y > frame.bottom() + 0.5 {
            // A curve below the view (a minor one, named in the header): no marker, no label.
            continue;
        }
        let beyond = (at.x < v0 || at.x > v1).then_some(at.x > v1);
        let text = match beyond {
            None => (t.peak)(&value),
            Some(right) => (t.peak_beyond)(&value, &grouped(at.x, 3), right),
        };
        let size = plot_ui.ctx().fonts_mut(|f| {
            f.layout_no_wrap(text.clone(), font.clone(), Color32::WHITE)
                .size()
        });
        spots.push(match beyond {
            None => {
                // Unnamed items stay out of the legend.
                plot_ui.points(
                    Points::new("", vec![[at.x, at.y]])
                        .color(colors[i])
                        .radius(4.0)
                        .allow_hover(false),
                );
                labels::LabelSpot {
                    point,
                    size,
                    prefer_left: at.x > (v0 + v1) / 2.0,
                }
            }
            Some(right) => labels::edge_spot(frame, right, point.y, size),
        });
        markers.push(beyond.is_none().then_some(point));
        texts.push((i, text));
    }
    let placed = labels::place_labels(&spots, frame);
    // A backing of the plot's own colour, so a curve running through a label does not strike
    // it out.
    let backing = plot_ui
        .ctx()
        .global_style()
        .visuals
        .extreme_bg_color
        .gamma_multiply(0.85);
    let mut drawn = Vec::with_capacity(marks.len());
    for (((i, text), r), marker) in texts.into_iter().zip(placed).zip(markers) {
        let Some(r) = r else { continue };
        let corners: Vec<[f64; 2]> = {
            let r = r.expand(1.0);
            [
                r.left_top(),
                r.right_top(),
                r.right_bottom(),
                r.left_bottom(),
            ]
            .into_iter()
            .map(|c| {
                let p = plot_ui.plot_from_screen(c);
                [p.x, p.y]
            })
            .collect()
        };
        plot_ui.polygon(
            Polygon::new("", corners)
                .fill_color(backing)
                .stroke(egui::Stroke::NONE)
                .allow_hover(false),
        );
        plot_ui.text(
            Text::new("", plot_ui.plot_from_screen(r.left_bottom()), text.clone())
                .anchor(egui::Align2::LEFT_BOTTOM)
                .color(colors[i]),
        );
        drawn.push(PeakLabel {
            series: i,
            text,
            rect: r,
            marker,
        });
    }
    drawn
}

/// The notes above the chart about the rank's data: times written with too few digits, tables
/// whose times lie apart.
fn notices_ui(ui: &mut egui::Ui, t: &Tr, view: &RankView, out: &mut Vec<Command>) {
    let lossy = view.data.report.lossy_time_files.len();
    if lossy > 0 {
        ui.colored_label(ui.visuals().warn_fg_color, (t.lossy_times)(lossy));
    }
    if let Some(apart) = view.tables_apart() {
        tables_apart_ui(ui, t, apart, out);
    }
}

/// In a comparison: which run the dashed curves are, and each curve's peak against it.
fn compare_notes_ui(ui: &mut egui::Ui, cx: &PaneCx<'_>, view: &RankView) {
    if let Some(cmp) = &cx.compare {
        ui.horizontal_wrapped(|ui| {
            ui.weak((cx.t.baseline_note)(&cmp.baseline.label));
        });
        super::diff::peak_deltas_ui(ui, cx.t, &cmp.baseline.view, view);
    }
}

/// The line that says memory_record and operator_memory lie far apart in time, with a button
/// to zoom to each (issue 26 item 18: Insight's test_rank_1 drew its curves as one dot).
fn tables_apart_ui(ui: &mut egui::Ui, t: &Tr, apart: TablesApart, out: &mut Vec<Command>) {
    ui.horizontal_wrapped(|ui| {
        let gap = crate::ui::format::long_duration(apart.gap, t.duration_units);
        ui.colored_label(ui.visuals().warn_fg_color, (t.tables_apart)(&gap));
        for (label, span) in [
            (t.fit_records, apart.records),
            (t.fit_operators, apart.operators),
        ] {
            if ui.button(label).clicked() {
                out.push(Command::SetWindow {
                    window: Some(padded(span)),
                    moving: false,
                });
            }
        }
    });
}

/// Min, max and change of each visible series over the window, with "Go to peak" (the cursor
/// to where the window's maximum is first reached).
#[allow(clippy::too_many_arguments)]
fn stats_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    names: &[String],
    colors: &[Color32],
    visible: &[bool],
    stats: &[Option<WindowStats>],
    unit: MemUnit,
    out: &mut Vec<Command>,
) {
    let u = unit.bytes();
    let fmt = |v: i64| format!("{} {}", grouped(v as f64 / u, 2), unit.label());
    egui::Grid::new("window_stats")
        .striped(true)
        .min_col_width(90.0)
        .show(ui, |ui| {
            ui.strong("");
            ui.strong(t.min);
            ui.strong(t.max);
            ui.strong(t.change);
            ui.end_row();
            for (i, _) in names.iter().enumerate().filter(|(i, _)| visible[*i]) {
                ui.colored_label(colors[i], names[i].as_str());
                match stats.get(i).copied().flatten() {
                    Some(st) => {
                        ui.label(fmt(st.min));
                        ui.label(fmt(st.max));
                        ui.label(fmt(st.change));
                        if ui.small_button(t.go_to_peak).clicked() {
                            out.push(Command::SetCursor(Some(st.max_time)));
                        }
                    }
                    None => {
                        ui.label("–");
                        ui.label("–");
                        ui.label("–");
                    }
                }
                ui.end_row();
            }
        });
}

/// The row above the plot: Reset zoom, the window's span, Y from 0 and the hint (or which curves
/// lie below the view, `below`). One line whatever the width (a narrower chart, with Live open,
/// wrapped the hint onto a second line and shrank the plot): the note is cut to fit, whole on
/// hover.
fn toolbar_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    state: &crate::ui::state::ViewState,
    (v0, v1): (f64, f64),
    below: &[&str],
    out: &mut Vec<Command>,
) {
    ui.horizontal(|ui| {
        if ui
            .add_enabled(state.link.window.is_some(), egui::Button::new(t.reset_zoom))
            .on_hover_text(t.reset_zoom_hover)
            .clicked()
        {
            out.push(Command::ResetZoom);
        }
        ui.weak(format!("{} – {}", ms(v0), ms(v1)));
        let mut from_zero = state.y_from_zero;
        if ui
            .checkbox(&mut from_zero, t.y_from_zero)
            .on_hover_text(t.y_from_zero_hover)
            .changed()
        {
            out.push(Command::SetYFromZero(from_zero));
        }
        let note = if below.is_empty() {
            t.chart_hint.to_string()
        } else {
            (t.below_view)(&below.join(", "))
        };
        ui.add(
            egui::Label::new(egui::RichText::new(note.as_str()).weak())
                .truncate()
                .show_tooltip_when_elided(true),
        );
    });
}

/// The values of every visible curve at the pointer `p`, in a tooltip beside it (`look`: each
/// curve's colour, name and visibility).
fn hover_values_ui(
    response: &egui::Response,
    p: PlotPoint,
    series: &[LodSeries],
    (colors, names, visible): (&[Color32], &[String], &[bool]),
    unit: MemUnit,
    decimals: usize,
) {
    let at = ms_to_ns(p.x);
    let u = unit.bytes();
    response.clone().on_hover_ui_at_pointer(|ui| {
        crate::ui::tooltip::unwrapped(ui);
        ui.label(ms(p.x));
        egui::Grid::new("hover_values").show(ui, |ui| {
            for (i, s) in series.iter().enumerate().filter(|(i, _)| visible[*i]) {
                ui.colored_label(colors[i], names[i].as_str());
                ui.label(value_at(s, at).map_or("–".into(), |v| {
                    format!("{} {}", grouped(v as f64 / u, decimals), unit.label())
                }));
                ui.end_row();
            }
        });
    });
}

/// Where the chart's parts go this frame.
struct ChartLayout {
    /// The plot's height.
    plot_height: f32,
    /// Whether the In-view statistics are unfolded when the user has not said.
    unfold_by_default: bool,
    /// The statistics' width beside the plot, when they are unfolded in a window too short to
    /// hold them below it (else they go below).
    side_width: Option<f32>,
}

/// Below this plot height the unfolded statistics go beside the plot (at 1280×720 they left
/// it about 150 px, one y tick).
const SHORT_PLOT: f32 = 300.0;

/// The statistics' width beside the plot: name, min, max, Δ and Go to peak.
const SIDE_STATS_WIDTH: f32 = 540.0;

/// The chart's layout given `visible` curves (one statistics row each) and the user's choice
/// of the statistics (`stats_open`, none yet: by the window's height).
fn chart_layout(ui: &egui::Ui, stats_open: Option<bool>, visible: usize) -> ChartLayout {
    let (plot_height, unfold_by_default) = plot_height(ui, stats_open, visible);
    let open = stats_open.unwrap_or(unfold_by_default);
    let room = ui.available_height();
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
    let wide = ui.available_width() >= 2.0 * SIDE_STATS_WIDTH;
    if open && wide && plot_height < SHORT_PLOT {
        return ChartLayout {
            // What the plot has with the statistics folded.
            plot_height: (room - row_h - 8.0).max(160.0),
            unfold_by_default,
            side_width: Some(SIDE_STATS_WIDTH),
        };
    }
    ChartLayout {
        plot_height,
        unfold_by_default,
        side_width: None,
    }
}

/// The plot's height with the statistics below it, and whether they are unfolded by default
/// (given `visible` curves, one statistics row each, and the user's choice).
fn plot_height(ui: &egui::Ui, stats_open: Option<bool>, visible: usize) -> (f32, bool) {
    // The statistics are unfolded by default on a window of 800 points or more (1400×900
    // and up), folded below (1280×720, or 2560×1440 at 2×), so the plot keeps its height.
    let unfold_by_default = ui.ctx().content_rect().height() >= 800.0;
    let row_h = ui.text_style_height(&egui::TextStyle::Body) + 6.0;
    let stats_height = if stats_open.unwrap_or(unfold_by_default) {
        row_h * (visible as f32 + 2.0) + 8.0
    } else {
        row_h + 8.0
    };
    // The plot keeps at least 70 % of the room below the legend; the statistics scroll in
    // what is left. (This was "45 % of the window minus what is above", but what is above
    // read as the whole panel's rect, so at 1280×720 unfolding them left the plot its
    // 160 px floor and one y tick.)
    let room = ui.available_height();
    let plot_height = (room - stats_height)
        .max(room * 0.7)
        .min(room - row_h - 8.0)
        .max(160.0);
    (plot_height, unfold_by_default)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hover_values_keep_digits_at_deep_zoom() {
        // 6,000 MB in view: 2 decimals; 0.05 MB in view: 5 (a thousandth of the span).
        assert_eq!(hover_decimals(6000.0), 2);
        assert_eq!(hover_decimals(0.05), 5);
        assert_eq!(hover_decimals(0.0), 2);
        assert_eq!(hover_decimals(1e-12), 6);
    }
}
