//! The memory chart pane: every series of the Group By on a real time axis (ms), drawn as steps
//! from the level-of-detail reduction of the visible window, with peaks, a hover readout of every
//! visible series, the hovered table row's lifetime, the cursor, and window statistics. What to
//! draw comes from `analysis::chart`; this module lays it out and turns gestures into commands.

use std::sync::Arc;

use egui::{Color32, Id, PointerButton};
use egui_plot::{
    ItemId, Legend, Plot, PlotBounds, PlotMemory, PlotPoint, Points, Span, Text, VLine,
};

use super::PaneCx;
use crate::analysis::{
    GroupBy, LodSeries, RankView, ViewId, WindowStats, block_lifetime, largest_visible_peak,
    peak_marks, sampled_counts, value_at, window_stats, y_fit,
};
use crate::model::{TimeWindow, ms_to_ns, ns_to_ms};
use crate::ui::command::Command;
use crate::ui::format::{MemUnit, grouped, ms};
use crate::ui::jobs::{Job, JobKey, Place};
use crate::ui::plot::reduction::ReductionCache;
use crate::ui::plot::step_line::StepLine;
use crate::ui::plot::zoom::{box_zoom, take_wheel, wheel_zoom};
use crate::ui::plot::{decimals_for, series_color};

/// The plot's id (its memory holds the legend's hidden series).
pub const PLOT_ID: &str = "memsight_chart";

/// memory_record rows from which a Group By's series are built off the UI thread (Stream takes
/// 1.7 s for 10.6M rows).
pub const BACKGROUND_MIN_ROWS: usize = 2_000_000;

/// The memory chart's own state between frames.
pub struct MemoryChart {
    /// The reduced lines.
    pub reduction: ReductionCache,
    /// Ranks with at least this many memory_record rows build a Group By's series in a job
    /// (a second or two for 10M rows) while the chart shows a spinner.
    pub background_min_rows: usize,
    /// The (view, Group By) whose series a job is building.
    building: Option<((ViewId, GroupBy), Job<()>)>,
    /// A drag-box zoom in progress: the times (ms) where it started and has reached.
    drag: Option<(f64, f64)>,
    /// The plot's width in physical pixels, last frame.
    plot_px: Option<usize>,
    /// The view and window the plot was last in step with (`None`: the whole rank): another
    /// rank, or a window set elsewhere, is applied to the plot.
    synced: Option<(ViewId, Option<TimeWindow>)>,
}

impl Default for MemoryChart {
    fn default() -> Self {
        MemoryChart {
            reduction: ReductionCache::default(),
            background_min_rows: BACKGROUND_MIN_ROWS,
            building: None,
            drag: None,
            plot_px: None,
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
            let job = cx
                .jobs
                .run(JobKey::Series(key.0, group), Place::Thread, move |_| {
                    job_view.series(group);
                });
            if job.start_error.is_some() {
                return Some(view.series(group));
            }
            self.building = Some((key, job));
        }
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label(format!("Building the {} curves…", group.label()));
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
                ui.label(format!(
                    "No {} curves in this rank's memory_record.",
                    group.label()
                ));
            });
            return;
        }
        let state = cx.state;
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
        let hidden = PlotMemory::load(ui.ctx(), Id::unique(PLOT_ID))
            .map(|m| m.hidden_items)
            .unwrap_or_default();
        let visible: Vec<bool> = series
            .iter()
            .map(|s| !hidden.contains(&ItemId::new(s.series.name.as_str())))
            .collect();

        // Unit from the largest visible peak; y fitted to what is visible in the window.
        let unit = MemUnit::for_max(largest_visible_peak(series, &visible) as f64);
        let u = unit.bytes();
        let (y_lo, y_hi) = y_fit(lines, &visible, (v0, v1), u);
        let (y_lo, y_hi) = (y_lo / u, y_hi / u);

        ui.horizontal(|ui| {
            if ui
                .add_enabled(
                    state.link.window.is_some(),
                    egui::Button::new("Reset zoom"),
                )
                .on_hover_text("Show the whole rank (Esc, or double-click the chart)")
                .clicked()
            {
                cx.out.push(Command::ResetZoom);
            }
            ui.weak(format!("{} – {}", ms(v0), ms(v1)));
            ui.weak(
                "drag: box zoom · wheel: zoom · right-drag or Shift+wheel: pan · click: live at cursor",
            );
        });
        if sampled {
            let (drawn, total) = sampled_counts(series, lines, &visible, window);
            ui.colored_label(
                ui.visuals().warn_fg_color,
                format!(
                    "sampled (LTTB): showing {} of {} points — zoom in for full detail",
                    grouped(drawn as f64, 0),
                    grouped(total as f64, 0)
                ),
            );
        }
        let stats_height = 22.0 * (visible.iter().filter(|v| **v).count() as f32 + 1.0) + 30.0;
        let plot_height = (ui.available_height() - stats_height).max(160.0);
        let apply = self.synced != Some((view.id(), state.link.window));
        let press_origin = ui.input(|i| i.pointer.press_origin());
        let mut drag = self.drag;
        let response = Plot::new(PLOT_ID)
            .id(Id::unique(PLOT_ID))
            .height(plot_height)
            .legend(
                Legend::default()
                    .follow_insertion_order(true)
                    .position(egui_plot::Corner::LeftTop)
                    .background_alpha(0.6),
            )
            .x_axis_label("Time (ms)")
            .y_axis_label(format!("Memory ({})", unit.label()))
            .x_axis_formatter(|m, _| grouped(m.value, decimals_for(m.step_size)))
            .y_axis_formatter(|m, _| grouped(m.value, decimals_for(m.step_size)))
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
                for (i, (s, line)) in series.iter().zip(lines).enumerate() {
                    // Only the visible part of the (wider) cached reduction, plus one point
                    // each side.
                    let a = line.partition_point(|p| p[0] < v0).saturating_sub(1);
                    let b = (line.partition_point(|p| p[0] <= v1) + 1).min(line.len());
                    let pts: Vec<[f64; 2]> = line[a..b].iter().map(|p| [p[0], p[1] / u]).collect();
                    plot_ui.add(StepLine::new(s.series.name.as_str(), &pts, series_color(i)));
                }
                peak_labels(plot_ui, series, &visible, unit, (v0, v1));
                if let Some(life) = state
                    .hovered_row
                    .and_then(|r| block_lifetime(&view.data, r as usize))
                {
                    let (a, z) = life.span(extent).ms();
                    plot_ui.span(
                        Span::new("", a..=z).fill(Color32::from_rgba_unmultiplied(255, 200, 0, 40)),
                    );
                    if life.allocated.is_some() {
                        plot_ui.vline(
                            VLine::new("", a)
                                .color(Color32::from_rgb(0, 160, 0))
                                .width(1.5),
                        );
                    }
                    if life.released.is_some() {
                        plot_ui.vline(
                            VLine::new("", z)
                                .color(Color32::from_rgb(200, 0, 0))
                                .width(1.5),
                        );
                    }
                }
                if let Some(c) = state.cursor_ms() {
                    plot_ui.vline(
                        VLine::new("", c)
                            .color(Color32::from_rgb(120, 120, 255))
                            .width(1.0),
                    );
                }
                let zoom_to = box_zoom(plot_ui, press_origin, &mut drag);
                let b = plot_ui.plot_bounds();
                // A click just before (on the chart or elsewhere) makes egui count a
                // double-click as a triple one; both reset.
                let r = plot_ui.response();
                PlotOut {
                    bounds: (b.min()[0], b.max()[0]),
                    pointer: plot_ui.pointer_coordinate(),
                    clicked: r.clicked(),
                    double: r.double_clicked() || r.triple_clicked(),
                    zoom_to,
                }
            });
        let out = response.inner;
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
            let t = ms_to_ns(p.x);
            response.response.on_hover_ui_at_pointer(|ui| {
                ui.label(ms(p.x));
                egui::Grid::new("hover_values").show(ui, |ui| {
                    for (i, s) in series.iter().enumerate().filter(|(i, _)| visible[*i]) {
                        ui.colored_label(series_color(i), s.series.name.as_str());
                        ui.label(value_at(s, t).map_or("–".into(), |v| {
                            format!("{} {}", grouped(v as f64 / u, 2), unit.label())
                        }));
                        ui.end_row();
                    }
                });
            });
        }
        stats_ui(ui, series, &visible, &window_stats(series, window), unit);
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
        if cx.state.link.moving && !moved {
            cx.out.push(Command::Settle);
        }
        if out.clicked
            && let Some(p) = out.pointer
        {
            cx.out.push(Command::SetCursor(Some(ms_to_ns(p.x))));
        }
    }
}

/// Peak markers, with labels stacked so that peaks at the same place stay readable.
fn peak_labels(
    plot_ui: &mut egui_plot::PlotUi<'_>,
    series: &[LodSeries],
    visible: &[bool],
    unit: MemUnit,
    (v0, v1): (f64, f64),
) {
    let u = unit.bytes();
    let font = egui::TextStyle::Small.resolve(&plot_ui.ctx().global_style());
    let mut labels = Vec::new();
    for (i, p) in peak_marks(series, visible) {
        let at = PlotPoint::new(ns_to_ms(p.time), p.value as f64 / u);
        // Unnamed items stay out of the legend.
        plot_ui.points(
            Points::new("", vec![[at.x, at.y]])
                .color(series_color(i))
                .radius(4.0)
                .allow_hover(false),
        );
        let text = format!("peak {} {}", grouped(at.y, 2), unit.label());
        let size = plot_ui.ctx().fonts_mut(|f| {
            f.layout_no_wrap(text.clone(), font.clone(), Color32::WHITE)
                .size()
        });
        let right = at.x > (v0 + v1) / 2.0;
        let point = plot_ui.screen_from_plot(at);
        let x0 = if right {
            point.x - 6.0 - size.x
        } else {
            point.x + 6.0
        };
        labels.push((
            i,
            text,
            right,
            egui::Rect::from_min_size(egui::pos2(x0, point.y - 4.0 - size.y), size),
        ));
    }
    let mut rects: Vec<egui::Rect> = labels.iter().map(|l| l.3).collect();
    stack_labels(&mut rects);
    for ((i, text, right, _), r) in labels.into_iter().zip(rects) {
        let (corner, anchor) = if right {
            (r.right_bottom(), egui::Align2::RIGHT_BOTTOM)
        } else {
            (r.left_bottom(), egui::Align2::LEFT_BOTTOM)
        };
        plot_ui.text(
            Text::new("", plot_ui.plot_from_screen(corner), text)
                .anchor(anchor)
                .color(series_color(i)),
        );
    }
}

/// Moves label rectangles (screen space) up until none overlaps another, lowest first, so each
/// label stays as close above its point as the others allow.
fn stack_labels(rects: &mut [egui::Rect]) {
    let mut order: Vec<usize> = (0..rects.len()).collect();
    order.sort_by(|&a, &b| rects[b].max.y.total_cmp(&rects[a].max.y));
    let mut placed: Vec<egui::Rect> = Vec::with_capacity(rects.len());
    for i in order {
        let mut r = rects[i];
        while let Some(hit) = placed.iter().find(|p| p.intersects(r.shrink(0.5))) {
            r = r.translate(egui::vec2(0.0, hit.min.y - 1.0 - r.max.y));
        }
        placed.push(r);
        rects[i] = r;
    }
}

/// Min, max and change of each visible series over the window.
fn stats_ui(
    ui: &mut egui::Ui,
    series: &[LodSeries],
    visible: &[bool],
    stats: &[Option<WindowStats>],
    unit: MemUnit,
) {
    let u = unit.bytes();
    let fmt = |v: i64| format!("{} {}", grouped(v as f64 / u, 2), unit.label());
    egui::Grid::new("window_stats")
        .striped(true)
        .min_col_width(90.0)
        .show(ui, |ui| {
            ui.strong("In view");
            ui.strong("Min");
            ui.strong("Max");
            ui.strong("Δ (end − start)");
            ui.end_row();
            for (i, s) in series.iter().enumerate().filter(|(i, _)| visible[*i]) {
                ui.colored_label(series_color(i), s.series.name.as_str());
                match stats.get(i).copied().flatten() {
                    Some(st) => {
                        ui.label(fmt(st.min));
                        ui.label(fmt(st.max));
                        ui.label(fmt(st.change));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_at_the_same_peak_are_stacked_without_overlap() {
        let r =
            |x: f32, y: f32| egui::Rect::from_min_size(egui::pos2(x, y), egui::vec2(100.0, 12.0));
        // Three labels at one point and one far away.
        let mut rects = vec![r(10.0, 50.0), r(12.0, 50.0), r(10.0, 52.0), r(400.0, 50.0)];
        stack_labels(&mut rects);
        for (i, a) in rects.iter().enumerate() {
            for b in &rects[i + 1..] {
                assert!(!a.intersects(b.shrink(0.5)), "{a:?} overlaps {b:?}");
            }
        }
        // The lowest keeps its place; the far one is untouched; the others sit just above.
        assert_eq!(rects[2], r(10.0, 52.0));
        assert_eq!(rects[3], r(400.0, 50.0));
        let mut tops: Vec<f32> = rects[..3].iter().map(|x| x.min.y).collect();
        tops.sort_by(f32::total_cmp);
        assert_eq!(tops, vec![52.0 - 26.0, 52.0 - 13.0, 52.0]);
    }
}
