//! The memory chart: every series of the Group By on a real time axis (ms), drawn as steps from
//! the level-of-detail reduction of the visible window, with peaks, a hover readout of every
//! visible series, the hovered table row's lifetime, the cursor, and window statistics.

use std::sync::Arc;

use egui::{Color32, Id, PointerButton};
use egui_plot::{
    ItemId, Legend, Plot, PlotBounds, PlotMemory, PlotPoint, Points, Span, Text, VLine,
};

use super::format::{MemUnit, grouped, ms};
use super::reduction::ReductionCache;
use super::state::ViewState;
use super::step_line::StepLine;
use super::zoom::{box_zoom, take_wheel, wheel_zoom};
use crate::analysis::{GroupBy, LodSeries, RankView, ViewId};
use crate::model::{NULL, ns_to_ms};

/// The plot's id (its memory holds the legend's hidden series).
pub const PLOT_ID: &str = "memsight_chart";

/// Series colours, in legend order.
const PALETTE: [Color32; 10] = [
    Color32::from_rgb(31, 119, 180),
    Color32::from_rgb(255, 127, 14),
    Color32::from_rgb(44, 160, 44),
    Color32::from_rgb(214, 39, 40),
    Color32::from_rgb(148, 103, 189),
    Color32::from_rgb(140, 86, 75),
    Color32::from_rgb(227, 119, 194),
    Color32::from_rgb(127, 127, 127),
    Color32::from_rgb(188, 189, 34),
    Color32::from_rgb(23, 190, 207),
];

/// The colour of series `i`.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}

/// memory_record rows from which a Group By's series are built off the UI thread (Stream takes
/// 1.7 s for 10.6M rows).
pub const BACKGROUND_MIN_ROWS: usize = 2_000_000;

/// The chart's state between frames.
pub struct ChartCache {
    /// The reduced lines.
    pub reduction: ReductionCache,
    /// Ranks with at least this many memory_record rows build a Group By's series on a thread of
    /// their own (a second or two for 10M rows) while the chart shows a spinner.
    pub background_min_rows: usize,
    /// The (view, Group By) whose series are being built.
    building: Option<(ViewId, GroupBy)>,
    /// A drag-box zoom in progress: the times (ms) where it started and has reached.
    drag: Option<(f64, f64)>,
    /// The plot's width in physical pixels, last frame.
    plot_px: Option<usize>,
    /// The range read back from the plot last frame: a different `state.view_ms` was set from
    /// outside (reset, a test, a jump) and must be applied to the plot.
    shown: Option<Option<(f64, f64)>>,
}

impl Default for ChartCache {
    fn default() -> Self {
        ChartCache {
            reduction: ReductionCache::default(),
            background_min_rows: BACKGROUND_MIN_ROWS,
            building: None,
            drag: None,
            plot_px: None,
            shown: None,
        }
    }
}

/// The series of `group`, built on a thread of their own for a big rank; `None` (and a spinner
/// on screen) while that runs.
fn ready_series<'v>(
    ui: &mut egui::Ui,
    view: &'v Arc<RankView>,
    group: GroupBy,
    cache: &mut ChartCache,
) -> Option<&'v [LodSeries]> {
    if let Some(s) = view.series_built(group) {
        return Some(s);
    }
    if view.data.records.len() < cache.background_min_rows {
        return Some(view.series(group));
    }
    let key = (view.id(), group);
    if cache.building != Some(key) {
        cache.building = Some(key);
        let (job, ctx) = (Arc::clone(view), ui.ctx().clone());
        let spawned = std::thread::Builder::new()
            .name("memsight-series".into())
            .spawn(move || {
                job.series(group);
                ctx.request_repaint();
            });
        if spawned.is_err() {
            return Some(view.series(group));
        }
    }
    ui.horizontal(|ui| {
        ui.spinner();
        ui.label(format!("Building the {} curves…", group.label()));
    });
    None
}

/// The value of a step series in effect at `t` (ns from origin).
pub fn value_at(s: &LodSeries, t: i64) -> Option<i64> {
    let i = s.series.times.partition_point(|&x| x <= t);
    (i > 0).then(|| s.series.values[i - 1])
}

/// The chart; returns nothing, writes the visible range and the cursor into `state`.
pub fn chart_ui(
    ui: &mut egui::Ui,
    view: &Arc<RankView>,
    state: &mut ViewState,
    cache: &mut ChartCache,
) {
    let Some(series) = ready_series(ui, view, state.group_by, cache) else {
        return;
    };
    if series.is_empty() {
        ui.centered_and_justified(|ui| {
            ui.label(format!(
                "No {} curves in this rank's memory_record.",
                state.group_by.label()
            ));
        });
        return;
    }
    let reset = std::mem::take(&mut state.reset_zoom);
    if reset {
        state.view_ms = None;
    }
    let (e0, e1) = view.time_extent();
    let (full0, full1) = (ns_to_ms(e0), ns_to_ms(e1));
    let (v0, v1) = state.view_ms.unwrap_or((full0, full1));
    let (t0, t1) = ((v0 * 1e6).floor() as i64, (v1 * 1e6).ceil() as i64);
    // One reduction column per physical pixel column of the plot (its frame as drawn last
    // frame), so exact mode draws what every point would.
    let ppp = ui.ctx().pixels_per_point();
    let width = cache
        .plot_px
        .unwrap_or((ui.available_width() * ppp) as usize)
        .max(100);
    let ctx = ui.ctx().clone();
    let Some(reduced) = cache
        .reduction
        .lines(view, state.group_by, (t0, t1), width, move || {
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
    let max_peak = series
        .iter()
        .zip(&visible)
        .filter(|(_, v)| **v)
        .filter_map(|(s, _)| s.peak())
        .map(|p| p.value)
        .max()
        .unwrap_or(1);
    let unit = MemUnit::for_max(max_peak as f64);
    let u = unit.bytes();
    let (mut y_lo, mut y_hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (line, _) in lines.iter().zip(&visible).filter(|(_, v)| **v) {
        // From the sample whose value is held into the window.
        let a = line.partition_point(|p| p[0] <= v0).saturating_sub(1);
        let b = line.partition_point(|p| p[0] <= v1);
        for p in &line[a..b] {
            y_lo = y_lo.min(p[1]);
            y_hi = y_hi.max(p[1]);
        }
    }
    if !y_lo.is_finite() {
        (y_lo, y_hi) = (0.0, 1.0);
    }
    let pad = ((y_hi - y_lo) * 0.08).max(u * 0.5);
    let (y_lo, y_hi) = ((y_lo - pad) / u, (y_hi + pad) / u);

    ui.horizontal(|ui| {
        let zoomed = state.view_ms.is_some();
        if ui
            .add_enabled(zoomed, egui::Button::new("Reset zoom"))
            .on_hover_text("Show the whole rank (Esc, or double-click the chart)")
            .clicked()
        {
            state.view_ms = None;
            state.reset_zoom = true;
        }
        ui.weak(format!("{} – {}", ms(v0), ms(v1)));
        ui.weak(
            "drag: box zoom · wheel: zoom · right-drag or Shift+wheel: pan · click: live at cursor",
        );
    });
    if sampled {
        // Points drawn and points there are, in the window, of the shown series.
        let (mut drawn, mut total) = (0usize, 0usize);
        for ((s, line), _) in series.iter().zip(lines).zip(&visible).filter(|(_, v)| **v) {
            let t = &s.series.times;
            total += t.partition_point(|&x| x <= t1) - t.partition_point(|&x| x < t0);
            drawn += line.partition_point(|p| p[0] <= v1) - line.partition_point(|p| p[0] < v0);
        }
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
    let hovered = state.hovered_row;
    let cursor = state.cursor_ms;
    let data = &view.data;
    let press_origin = ui.input(|i| i.pointer.press_origin());
    let mut drag = cache.drag;
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
        // Box zoom is our own (below): egui_plot's starts where the drag is recognised, a few
        // pixels after the press, and zooms y as well.
        .allow_boxed_zoom(false)
        .pan_pointer_button(PointerButton::Secondary)
        .label_formatter(|_| None)
        // No filled plot background: under software rendering a large fill costs more than
        // all the curves together, and the grid marks the plot area well enough.
        .show_background(false)
        .show(ui, |plot_ui| {
            if reset || cache.shown != Some(state.view_ms) {
                plot_ui.set_plot_bounds(PlotBounds::from_min_max([v0, y_lo], [v1, y_hi]));
            } else {
                plot_ui.set_plot_bounds_y(y_lo..=y_hi);
            }
            for (i, (s, line)) in series.iter().zip(lines).enumerate() {
                let name = s.series.name.as_str();
                // Only the visible part of the (wider) cached reduction, plus one point each side.
                let a = line.partition_point(|p| p[0] < v0).saturating_sub(1);
                let b = (line.partition_point(|p| p[0] <= v1) + 1).min(line.len());
                let pts: Vec<[f64; 2]> = line[a..b].iter().map(|p| [p[0], p[1] / u]).collect();
                plot_ui.add(StepLine::new(name, &pts, series_color(i)));
            }
            // Peak markers, with labels stacked so that peaks at the same place stay readable.
            let font = egui::TextStyle::Small.resolve(&plot_ui.ctx().global_style());
            let mut labels = Vec::new();
            for (i, s) in series.iter().enumerate().filter(|(i, _)| visible[*i]) {
                let Some(p) = s.peak() else { continue };
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
                let corner = if right {
                    r.right_bottom()
                } else {
                    r.left_bottom()
                };
                plot_ui.text(
                    Text::new("", plot_ui.plot_from_screen(corner), text)
                        .anchor(if right {
                            egui::Align2::RIGHT_BOTTOM
                        } else {
                            egui::Align2::LEFT_BOTTOM
                        })
                        .color(series_color(i)),
                );
            }
            if let Some(r) = hovered {
                let o = &data.operators;
                let r = r as usize;
                let a = o.alloc_time.get(r).copied().unwrap_or(NULL);
                let z = o.release_time.get(r).copied().unwrap_or(NULL);
                let a_ms = if a == NULL {
                    full0
                } else {
                    ns_to_ms(data.rel_ns(a))
                };
                let z_ms = if z == NULL {
                    full1
                } else {
                    ns_to_ms(data.rel_ns(z))
                };
                plot_ui.span(
                    Span::new("", a_ms..=z_ms)
                        .fill(Color32::from_rgba_unmultiplied(255, 200, 0, 40)),
                );
                if a != NULL {
                    plot_ui.vline(
                        VLine::new("", a_ms)
                            .color(Color32::from_rgb(0, 160, 0))
                            .width(1.5),
                    );
                }
                if z != NULL {
                    plot_ui.vline(
                        VLine::new("", z_ms)
                            .color(Color32::from_rgb(200, 0, 0))
                            .width(1.5),
                    );
                }
            }
            if let Some(c) = cursor {
                plot_ui.vline(
                    VLine::new("", c)
                        .color(Color32::from_rgb(120, 120, 255))
                        .width(1.0),
                );
            }
            let zoom_to = box_zoom(plot_ui, press_origin, &mut drag);
            let b = plot_ui.plot_bounds();
            let pointer = plot_ui.pointer_coordinate();
            let clicked = plot_ui.response().clicked();
            // A click just before (on the chart or elsewhere) makes egui count a double-click
            // as a triple one; both reset.
            let double = plot_ui.response().double_clicked() || plot_ui.response().triple_clicked();
            (b.min()[0], b.max()[0], pointer, clicked, double, zoom_to)
        });
    let (b0, b1, pointer, clicked, double, zoom_to) = response.inner;
    let plot_px = (response.transform.frame().width() * ppp).round() as usize;
    if cache.plot_px != Some(plot_px) {
        cache.plot_px = Some(plot_px);
        ui.ctx().request_repaint(); // reduce again for the plot's real width
    }
    cache.drag = if ui.input(|i| i.pointer.any_down()) {
        drag
    } else {
        None
    };
    if double {
        state.view_ms = None;
        state.reset_zoom = true;
        state.cursor_ms = None;
        return;
    }
    let new_range = if (b0 - full0).abs() < 1e-9 && (b1 - full1).abs() < 1e-9 {
        None
    } else {
        Some((b0, b1))
    };
    if new_range != state.view_ms && cache.shown == Some(state.view_ms) {
        state.view_ms = new_range;
        state.page = 0;
    }
    cache.shown = Some(state.view_ms);
    // A box narrower than a pixel or two is a slip of the hand, not a zoom.
    if let Some((a, b)) = zoom_to
        && (b - a) * f64::from(width as u32) > 2.0 * (b1 - b0)
    {
        state.view_ms = Some((a, b));
        state.page = 0;
    }
    let over = response.response.contains_pointer();
    let dy = if over { take_wheel(ui) } else { 0.0 };
    if let Some(p) = pointer
        && dy != 0.0
    {
        let range = wheel_zoom((b0, b1), p.x, f64::from(dy), (full0, full1));
        if range != state.view_ms {
            state.view_ms = range;
            state.page = 0;
        }
    }
    if clicked && let Some(p) = pointer {
        state.cursor_ms = Some(p.x);
    }
    if let Some(p) = pointer {
        let t = (p.x * 1e6) as i64;
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
    stats_ui(ui, series, &visible, (t0, t1), unit);
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

fn decimals_for(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    }
}

/// Min, max and change of each visible series over the window.
fn stats_ui(
    ui: &mut egui::Ui,
    series: &[LodSeries],
    visible: &[bool],
    (t0, t1): (i64, i64),
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
                let times = &s.series.times;
                let a = times.partition_point(|&t| t < t0);
                let b = times.partition_point(|&t| t <= t1);
                // The value held into the window counts as its start.
                let (lo, hi) = (a.saturating_sub(usize::from(a > 0)), b);
                ui.colored_label(series_color(i), s.series.name.as_str());
                match s.range_min_max(lo, hi) {
                    Some((mn, mx)) => {
                        let start = value_at(s, t0).unwrap_or(s.series.values[lo]);
                        let end = value_at(s, t1).unwrap_or(start);
                        ui.label(fmt(s.series.values[mn]));
                        ui.label(fmt(s.series.values[mx]));
                        ui.label(fmt(end - start));
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
