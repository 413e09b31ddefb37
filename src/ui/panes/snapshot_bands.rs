//! The snapshot's active-memory chart: every allocation a band stacked over the allocator's
//! events ([`crate::snapshot::timeline`]), the smaller ones summed in grey on top, the total as
//! an outline. Drawn level-of-detail: the summed band per pixel column from min/max pyramids,
//! each band's pieces merged where they share a pixel column, so a trace of millions of events
//! draws as fast as a short one. Drag to box-zoom, the wheel zooms, double-click shows all,
//! a click picks the event under the pointer; hover names the allocation and its stack.

use std::ops::RangeInclusive;
use std::sync::Arc;

use egui::epaint::{Mesh, Shape};
use egui::{Color32, Pos2, Rect, Ui};
use egui_plot::{
    Plot, PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform, VLine,
};

use crate::analysis::{LodSeries, Series};
use crate::model::bytes_to_mib;
use crate::snapshot::holder::holder_frame;
use crate::snapshot::phases::Phase;
use crate::snapshot::timeline::Timeline;
use crate::snapshot::{AllocatorSnapshot, Frame};
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::plot::step_line::StepLine;
use crate::ui::plot::zoom::{box_zoom, take_wheel, wheel_zoom};

/// The most allocations with a band of their own (memory_viz's default is 15,000; beyond a few
/// thousand the bands are thinner than a pixel at any useful zoom).
pub const MAX_BANDS: usize = 3_000;

/// The most pieces the bands may have (each free moves every band above it).
pub const MAX_PIECES: usize = 2_000_000;

/// The summed band's fill: a neutral grey darker than any band, so it reads as "the rest".
const SUMMED: Color32 = crate::ui::palette::SNAPSHOT_SUMMED;

/// One device's bands, ready to draw.
pub struct Bands {
    /// The bands.
    pub timeline: Timeline,
    /// All held bytes per x, with its min/max pyramid.
    total: LodSeries,
    /// The top of the banded allocations per x, with its pyramid.
    banded: LodSeries,
    /// Each allocation's colour.
    colors: Vec<Color32>,
    /// The axis value of each x from -1 to the trace's end (event index, or µs from the first
    /// event when every event has a time), and plot units per axis unit.
    axis: Vec<i64>,
    scale: f64,
    /// True when the x axis is time (CUDA snapshots have `time_us`; NPU ones do not).
    pub timed: bool,
    /// The device whose trace they are.
    pub device: i64,
}

/// The axis of a trace: each event's time (µs from the first) when every event has one and they
/// never go back, else its index; one step before the first event and one after the last.
fn axis_of(events: &[crate::snapshot::Event]) -> (Vec<i64>, bool) {
    let times: Option<Vec<i64>> = events.iter().map(|e| e.time_us).collect();
    let timed = times
        .as_ref()
        .is_some_and(|t| !t.is_empty() && t.windows(2).all(|w| w[0] <= w[1]));
    let n = events.len() as i64;
    if let (true, Some(t)) = (timed, times) {
        let t0 = t[0];
        let rel: Vec<i64> = t.iter().map(|&v| v.saturating_sub(t0)).collect();
        let span = rel.last().copied().unwrap_or(0);
        let step = (span / n.max(1)).max(1);
        let mut axis = Vec::with_capacity(rel.len() + 2);
        axis.push(-step);
        axis.extend_from_slice(&rel);
        axis.push(span.saturating_add(step));
        (axis, true)
    } else {
        ((-1..=n).collect(), false)
    }
}

/// The fill of an allocation: a hue from the frame that names it (the user's own line, see
/// [`holder_frame`]), so allocations from one line of code share a colour; the lightness
/// alternates so neighbouring bands stay apart.
fn band_color(frames: &[Frame], nth: usize) -> Color32 {
    let h = holder_frame(frames).map_or(0u32, |f| {
        f.filename
            .bytes()
            .chain(f.name.bytes())
            .chain(f.line.to_le_bytes())
            .fold(2_166_136_261u32, |a, b| {
                (a ^ u32::from(b)).wrapping_mul(16_777_619)
            })
    });
    let hue = (!frames.is_empty()).then(|| (h % 360) as f32 / 360.0);
    crate::ui::palette::band_fill(hue, !nth.is_multiple_of(2))
}

impl Bands {
    /// The bands of `device`.
    pub fn new(snap: &AllocatorSnapshot, device: i64) -> Bands {
        let timeline = crate::snapshot::timeline::timeline(snap, device, MAX_BANDS, MAX_PIECES);
        let events = usize::try_from(device)
            .ok()
            .and_then(|d| snap.traces.get(d))
            .map_or(&[][..], Vec::as_slice);
        let (axis, timed) = axis_of(events);
        let series = |name: &str, values: &[i64]| {
            let mut s = Series::new(name);
            s.times = axis[..values.len().min(axis.len())].to_vec();
            s.values = values[..s.times.len()].to_vec();
            LodSeries::new(s)
        };
        let colors = timeline
            .allocations
            .iter()
            .enumerate()
            .map(|(i, a)| band_color(snap.frames(a.stack), i))
            .collect();
        Bands {
            device,
            total: series("total", &timeline.total),
            banded: series("banded", &timeline.banded_top),
            colors,
            timeline,
            scale: if timed { 1e-3 } else { 1.0 },
            axis,
            timed,
        }
    }

    /// The plot x of event x `k` (-1: before the first event; the trace's length: its end).
    pub fn x_of(&self, k: i64) -> f64 {
        // Never clamp(0, len - 1): an empty axis would make that panic.
        let last = self.axis.len().saturating_sub(1);
        let i = usize::try_from(k.saturating_add(1)).unwrap_or(0).min(last);
        self.axis.get(i).map_or(0.0, |&v| v as f64 * self.scale)
    }

    /// The event whose state holds at plot x `x`: the last event at or before it (-1 before the
    /// first).
    pub fn event_at(&self, x: f64) -> i64 {
        let u = x / self.scale;
        let events = self
            .axis
            .get(1..self.axis.len().saturating_sub(1))
            .unwrap_or(&[]);
        events.partition_point(|&t| t as f64 <= u) as i64 - 1
    }

    /// The x range of the whole trace.
    pub fn full(&self) -> (f64, f64) {
        (self.x_of(-1), self.x_of(self.timeline.end().max(0)))
    }

    /// The x range shown first: the whole trace, but when a single pause between two events
    /// takes over half of it (a 4 s model load before the first step), from just before the
    /// events after that pause: they were squeezed into the right 5 % of the axis. A
    /// double-click shows the whole trace.
    pub fn first_view(&self) -> (f64, f64) {
        let full = self.full();
        let span = full.1 - full.0;
        if !self.timed || span <= 0.0 {
            return full;
        }
        let gap = self
            .axis
            .windows(2)
            .map(|w| (w[1] - w[0], w[1]))
            .max_by_key(|&(d, _)| d);
        match gap {
            Some((d, after)) if d as f64 * self.scale > 0.5 * span => {
                let start = after as f64 * self.scale;
                let margin = 0.02 * (full.1 - start);
                ((start - margin).max(full.0), full.1)
            }
            _ => full,
        }
    }

    /// The largest total, MB.
    pub fn peak_mb(&self) -> f64 {
        self.total
            .peak()
            .map_or(0.0, |p| bytes_to_mib(p.value.max(0)))
    }
}

/// Under the banded allocations: what shows where a band is thinner than half a pixel (those
/// are not drawn one by one).
const BANDED_FLOOR: Color32 = crate::ui::palette::SNAPSHOT_FLOOR;

/// A run of equal bars in neighbouring pixel columns, painted as one rectangle.
struct Run {
    color: Color32,
    current: Option<Rect>,
}

impl Run {
    fn new(color: Color32) -> Run {
        Run {
            color,
            current: None,
        }
    }

    /// A bar `width` wide from `left`, between screen heights `top` and `bottom`.
    fn push(&mut self, mesh: &mut Mesh, left: f32, width: f32, top: f32, bottom: f32) {
        let r = Rect::from_min_max(
            Pos2::new(left, top.min(bottom)),
            Pos2::new(left + width, top.max(bottom)),
        );
        if let Some(c) = &mut self.current
            && (c.min.y - r.min.y).abs() < 0.01
            && (c.max.y - r.max.y).abs() < 0.01
            && (r.min.x - c.max.x).abs() < 0.01
        {
            c.max.x = r.max.x;
            return;
        }
        self.finish(mesh);
        self.current = Some(r);
    }

    fn finish(&mut self, mesh: &mut Mesh) {
        if let Some(c) = self.current.take() {
            mesh.add_colored_rect(c, self.color);
        }
    }
}

/// The plot item that paints the bands.
struct BandsItem {
    base: PlotItemBase,
    bands: Arc<Bands>,
}

impl BandsItem {
    /// Per pixel column: the floor under the banded allocations (up to their highest top), then
    /// the summed band (from the lowest banded top to the highest total among the x that fall
    /// in the column).
    fn summed(&self, transform: &PlotTransform, ppp: f32, mesh: &mut Mesh) {
        let b = &self.bands;
        let frame = *transform.frame();
        let bounds = transform.bounds();
        let (x0, x1) = (bounds.min()[0], bounds.max()[0]);
        let columns = (frame.width() * ppp).ceil().max(1.0) as usize;
        let (full0, full1) = b.full();
        let y = |v: i64| {
            transform
                .position_from_point(&PlotPoint::new(0.0, bytes_to_mib(v)))
                .y
        };
        let floor = y(0);
        // Neighbouring columns with the same bar make one rectangle.
        let mut under = Run::new(BANDED_FLOOR);
        let mut summed = Run::new(SUMMED);
        for c in 0..columns {
            let xa = x0 + (x1 - x0) * c as f64 / columns as f64;
            let xb = x0 + (x1 - x0) * (c + 1) as f64 / columns as f64;
            if xb <= full0 || xa >= full1 {
                continue;
            }
            let first = b.timeline.slot(b.event_at(xa));
            let last = b.timeline.slot(b.event_at(xb)).max(first);
            let (Some((_, hi)), Some((lo, banded_hi))) = (
                b.total.range_min_max(first, last + 1),
                b.banded.range_min_max(first, last + 1),
            ) else {
                continue;
            };
            let left = frame.left() + c as f32 / ppp;
            let (top, bottom) = (b.total.series.values[hi], b.banded.series.values[lo]);
            under.push(
                mesh,
                left,
                1.0 / ppp,
                y(b.banded.series.values[banded_hi]),
                floor,
            );
            if top > bottom {
                summed.push(mesh, left, 1.0 / ppp, y(top), y(bottom));
            }
        }
        under.finish(mesh);
        summed.finish(mesh);
    }

    /// The banded allocations: each piece a rectangle; pieces of one allocation that share a
    /// pixel column are merged into one.
    fn bands(&self, transform: &PlotTransform, ppp: f32, mesh: &mut Mesh) {
        let b = &self.bands;
        let bounds = transform.bounds();
        let (x0, x1) = (bounds.min()[0], bounds.max()[0]);
        let frame = transform.frame().expand(2.0);
        let mut current: Option<(u32, Rect)> = None;
        let flush = |mesh: &mut Mesh, c: Option<(u32, Rect)>| {
            if let Some((a, r)) = c {
                mesh.add_colored_rect(r, b.colors[a as usize]);
            }
        };
        for p in &b.timeline.pieces {
            let (from, to) = (b.x_of(p.from), b.x_of(p.to));
            if to < x0 || from > x1 {
                continue;
            }
            let size = b.timeline.allocations[p.allocation as usize].size;
            let lo = transform.position_from_point(&PlotPoint::new(
                from.max(x0 - (x1 - x0)),
                bytes_to_mib(p.offset),
            ));
            let hi = transform.position_from_point(&PlotPoint::new(
                to.min(x1 + (x1 - x0)),
                bytes_to_mib(p.offset.saturating_add(size)),
            ));
            let r = Rect::from_two_pos(lo, hi).intersect(frame);
            if r.height() < 0.5 / ppp {
                continue; // thinner than half a pixel: the floor under the bands shows instead
            }
            match &mut current {
                Some((a, c))
                    if *a == p.allocation
                        && r.min.x - c.max.x < 1.0 / ppp
                        && (c.width() < 1.0 / ppp || r.width() < 1.0 / ppp) =>
                {
                    *c = c.union(r);
                }
                _ => {
                    flush(mesh, current.take());
                    current = Some((p.allocation, r));
                }
            }
        }
        flush(mesh, current);
    }
}

impl PlotItem for BandsItem {
    fn shapes(&self, ui: &Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let ppp = ui.ctx().pixels_per_point();
        let mut mesh = Mesh::default();
        self.summed(transform, ppp, &mut mesh);
        self.bands(transform, ppp, &mut mesh);
        if !mesh.is_empty() {
            shapes.push(Shape::mesh(mesh));
        }
    }

    fn initialize(&mut self, _x_range: RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        SUMMED
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::None
    }

    fn bounds(&self) -> PlotBounds {
        let (a, z) = self.bands.full();
        PlotBounds::from_min_max([a, 0.0], [z, self.bands.peak_mb()])
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}

/// The chart's state between frames.
#[derive(Debug, Default, Clone)]
pub struct BandsChart {
    /// The x range shown (None: the whole trace).
    pub(crate) range: Option<(f64, f64)>,
    drag: Option<(f64, f64)>,
    /// Where the plot was drawn last frame and the x range it showed (tests and tools map
    /// events to screen positions with it).
    last_frame: Option<(Rect, f64, f64)>,
}

impl BandsChart {
    /// The x range the user chose (None: the first view, [`Bands::first_view`]).
    pub fn range(&self) -> Option<(f64, f64)> {
        self.range
    }

    /// Where the plot was drawn last frame and the x range it showed.
    pub fn last_frame(&self) -> Option<(Rect, f64, f64)> {
        self.last_frame
    }

    /// The screen x of plot x `x` in the last frame drawn.
    pub fn screen_x(&self, x: f64) -> Option<f32> {
        let (r, a, b) = self.last_frame?;
        Some(r.left() + ((x - a) / (b - a)) as f32 * r.width())
    }
}

/// Bytes for reading: exact below a MB (`512 B`, `37,888 B`), MB above.
pub fn size_text(b: i64) -> String {
    if b.abs() < 1 << 20 {
        format!("{} B", grouped(b as f64, 0))
    } else {
        format!("{} MB", grouped(bytes_to_mib(b), 2))
    }
}

/// The phases drawn on the chart, and the innermost phase of each event (for the tooltip).
pub type PhaseMarks<'a> = (&'a [Phase], &'a [Option<usize>]);

/// What the user did on the chart this frame.
pub struct ChartOut {
    /// The event clicked.
    pub picked: Option<usize>,
}

impl BandsChart {
    /// Draws the chart, `height` points tall, with a marker at `marker`.
    pub fn ui(
        &mut self,
        ui: &mut Ui,
        t: &Tr,
        snap: &AllocatorSnapshot,
        bands: &Arc<Bands>,
        (marker, (phases, phase_of), pools, ops): (
            Option<usize>,
            PhaseMarks<'_>,
            &[crate::snapshot::pools::PoolTrack],
            &[crate::snapshot::join::EventOp],
        ),
        height: f32,
    ) -> ChartOut {
        let full = bands.full();
        let (v0, v1) = self.range.unwrap_or_else(|| bands.first_view());
        // Room above the memory for the phase strips.
        let strips = super::snapshot_phases::strip_levels(phases) as f64
            * super::snapshot_phases::STRIP_POINTS;
        let y_hi = bands
            .peak_mb()
            .max(super::snapshot_pools::peak_mb(pools))
            .max(1e-6)
            * 1.05
            / (1.0 - strips / f64::from(height).max(strips * 2.0)).max(0.5);
        let press_origin = ui.input(|i| i.pointer.press_origin());
        let mut drag = self.drag;
        let ppp = ui.ctx().pixels_per_point();
        let outline_color = ui.visuals().strong_text_color();
        let response = Plot::new("snapshot_bands")
            .height(height)
            .x_axis_label(if bands.timed {
                t.snapshot_time_axis
            } else {
                t.snapshot_event_axis
            })
            .y_axis_label("MB")
            .x_axis_formatter(|m, _| grouped(m.value, crate::ui::plot::decimals_for(m.step_size)))
            .y_axis_formatter(|m, _| grouped(m.value, crate::ui::plot::decimals_for(m.step_size)))
            .allow_zoom(false)
            .allow_drag(false)
            .allow_scroll(false)
            .allow_boxed_zoom(false)
            .allow_double_click_reset(false)
            .label_formatter(|_| None)
            .show(ui, |plot_ui| {
                plot_ui.set_plot_bounds(PlotBounds::from_min_max([v0, 0.0], [v1, y_hi]));
                plot_ui.add(BandsItem {
                    base: PlotItemBase::new(t.snapshot_allocated.to_owned()),
                    bands: Arc::clone(bands),
                });
                let width = (plot_ui.transform().frame().width() * ppp).max(1.0) as usize;
                let r = bands.total.reduce(
                    (v0 / bands.scale).floor() as i64,
                    (v1 / bands.scale).ceil() as i64,
                    width,
                    crate::analysis::DEFAULT_THRESHOLD,
                );
                let outline: Vec<[f64; 2]> = r
                    .times
                    .iter()
                    .zip(&r.values)
                    .map(|(&x, &v)| [x as f64 * bands.scale, bytes_to_mib(v)])
                    .collect();
                plot_ui.add(StepLine::new(t.snapshot_allocated, &outline, outline_color));
                super::snapshot_phases::draw_spans(plot_ui, phases, bands);
                super::snapshot_pools::draw(plot_ui, t, pools, bands);
                if let Some(k) = marker {
                    plot_ui.vline(
                        VLine::new(
                            t.snapshot_picked,
                            (bands.x_of(k as i64) + bands.x_of(k as i64 + 1)) / 2.0,
                        )
                        .color(crate::ui::palette::PICKED_EVENT)
                        .width(1.5),
                    );
                }
                let zoom_to = box_zoom(plot_ui, press_origin, &mut drag);
                (plot_ui.pointer_coordinate(), zoom_to)
            });
        let (pointer, zoom_to) = response.inner;
        self.last_frame = Some((*response.transform.frame(), v0, v1));
        let r = &response.response;
        self.drag = if ui.input(|i| i.pointer.any_down()) {
            drag
        } else {
            None
        };
        let width_px = f64::from(response.transform.frame().width().max(1.0));
        if r.double_clicked() || r.triple_clicked() {
            // The whole trace (the first view may start after a long pause).
            self.range = (bands.first_view() != full).then_some(full);
        } else if let Some((a, b)) = zoom_to
            && (b - a) / (v1 - v0) * width_px > 2.0
        {
            self.range = Some((a.max(full.0), b.min(full.1)));
        }
        let dy = if r.contains_pointer() {
            take_wheel(ui)
        } else {
            0.0
        };
        if let Some(p) = pointer
            && dy != 0.0
        {
            self.range = wheel_zoom((v0, v1), p.x, f64::from(dy), full);
        }
        let mut out = ChartOut { picked: None };
        // A device with segments but no events has nothing to pick.
        if r.clicked()
            && bands.timeline.end() > 0
            && let Some(p) = pointer
        {
            let last = bands.timeline.end().saturating_sub(1).max(0);
            out.picked = Some(bands.event_at(p.x).clamp(0, last) as usize);
        }
        if let Some(p) = pointer {
            r.clone().on_hover_ui_at_pointer(|ui| {
                hover(ui, t, snap, bands, p, ((phases, phase_of), ops));
            });
        }
        out
    }
}

/// What is under the pointer: a banded allocation (size, life, stack) or the summed band.
/// A band's first tooltip line: its size, when it was allocated and when freed (or held
/// before the trace, held at the end).
pub fn band_text(t: &Tr, a: &crate::snapshot::timeline::Allocation) -> String {
    let from = a.allocated_at.map_or_else(
        || t.snapshot_held_before.to_string(),
        t.snapshot_allocated_at,
    );
    let to = a
        .freed_at
        .map_or_else(|| t.snapshot_held_at_end.to_string(), t.snapshot_freed_at);
    (t.snapshot_band)(&size_text(a.size), &from, &to)
}

fn hover(
    ui: &mut Ui,
    t: &Tr,
    snap: &AllocatorSnapshot,
    bands: &Bands,
    p: PlotPoint,
    ((phases, phase_of), ops): (PhaseMarks<'_>, &[crate::snapshot::join::EventOp]),
) {
    crate::ui::tooltip::wide(ui);
    let tl = &bands.timeline;
    let x = bands.event_at(p.x);
    let bytes = (p.y * 1024.0 * 1024.0) as i64;
    ui.weak(format!("#{}", grouped(x.max(-1) as f64, 0)));
    if let Some(name) = super::snapshot_phases::phase_at(phases, phase_of, x) {
        ui.weak(
            super::snapshot_phases::IN_PHASE
                .get(t)
                .replace("{name}", name),
        );
    }
    if let Some(i) = tl.allocation_at(x, bytes) {
        let a = &tl.allocations[i];
        ui.strong(band_text(t, a));
        // Joined with a profile of the run: the operator that allocated it there.
        if let Some(line) = super::snapshot_join::band_op_text(t, ops, a.allocated_at) {
            ui.label(line);
        }
        // Allocated inside a torch.compile region: which.
        let region = a
            .allocated_at
            .and_then(|k| snap.traces.get(usize::try_from(bands.device).ok()?)?.get(k))
            .map(|e| e.compile_context as usize)
            .filter(|&c| c != 0)
            .and_then(|c| snap.compile_contexts.get(c));
        if let Some(name) = region {
            ui.weak(
                super::snapshot_phases::COMPILED
                    .get(t)
                    .replace("{name}", name),
            );
        }
        let frames = snap.frames(a.stack);
        if frames.is_empty() {
            ui.weak(t.no_stack);
        }
        stack_lines(ui, frames);
        return;
    }
    let slot = tl.slot(x);
    let (top, bottom) = (tl.total[slot], tl.banded_top[slot]);
    if bytes >= bottom && bytes < top {
        ui.label((t.snapshot_summed)(
            tl.summed_count[slot],
            &grouped(bytes_to_mib(top - bottom), 2),
        ));
    }
}

/// A stack in a tooltip, innermost frame first: the frame that names it strong, the others weak.
/// Frames the unwinder could not place (`??`, no file) are counted, not listed, and at most
/// 24 lines are drawn so the tooltip fits a 720-pixel window.
pub fn stack_lines(ui: &mut Ui, frames: &[Frame]) {
    let holder = crate::snapshot::holder::holder_index(frames);
    let mut unplaced = 0usize;
    let mut shown = 0usize;
    for (i, f) in frames.iter().enumerate() {
        if Some(i) == holder {
            ui.strong(f.text());
            shown += 1;
        } else if f.filename.is_empty() || f.filename == "??" {
            unplaced += 1;
        } else if shown < TOOLTIP_FRAMES {
            ui.weak(f.text());
            shown += 1;
        } else {
            unplaced += 1;
        }
    }
    if unplaced > 0 {
        ui.weak(format!("… +{unplaced}"));
    }
}

/// The most frames a stack's tooltip lists.
const TOOLTIP_FRAMES: usize = 24;
