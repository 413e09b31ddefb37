//! A step line for egui_plot drawn as pixel-snapped axis-aligned rectangles.
//!
//! egui_plot's `Line` anti-aliases every segment with feathered edges (four vertices per point,
//! blended edge strips) and, in band mode, joins distant buckets into trapezoids that misdraw
//! sparse steps. A memory curve is made of horizontal holds and vertical jumps only, so each
//! segment is a rectangle: crisp without anti-aliasing, and runs of segments that fall into the
//! same pixel column merge into one bar (the M4 reduction gives up to four points a column).
//! This roughly halves the vertices of a dense chart and removes the blended edge strips that
//! dominate software rasterisation (Xvfb/llvmpipe).

use std::ops::RangeInclusive;

use egui::epaint::{Mesh, Shape};
use egui::{Color32, Pos2, Rect, Ui};
use egui_plot::{PlotBounds, PlotGeometry, PlotItem, PlotItemBase, PlotPoint, PlotTransform};

/// A named step series, as (x, y) plot points already in step shape (holds and jumps).
pub struct StepLine {
    base: PlotItemBase,
    points: Vec<PlotPoint>,
    color: Color32,
    /// Thickness in physical pixels.
    thickness: f32,
}

impl StepLine {
    /// A line named `name` (its legend entry and id) through `points`.
    pub fn new(name: &str, points: &[[f64; 2]], color: Color32) -> StepLine {
        StepLine {
            base: PlotItemBase::new(name.to_owned()),
            points: points.iter().map(|p| PlotPoint::new(p[0], p[1])).collect(),
            color,
            thickness: 2.0,
        }
    }
}

/// Accumulates rectangles, merging each into the previous one when they share a pixel column
/// (a vertical bar growing) or a pixel row (a horizontal hold continuing).
struct Bars {
    mesh: Mesh,
    current: Option<Rect>,
    color: Color32,
}

impl Bars {
    fn push(&mut self, r: Rect) {
        if let Some(c) = &mut self.current {
            let same = |a: f32, b: f32| (a - b).abs() < 1e-3;
            let same_column = same(c.min.x, r.min.x) && same(c.max.x, r.max.x);
            let same_row = same(c.min.y, r.min.y) && same(c.max.y, r.max.y);
            let touching = r.min.x <= c.max.x && c.min.x <= r.max.x;
            let overlapping = r.min.y <= c.max.y && c.min.y <= r.max.y;
            if (same_column && overlapping) || (same_row && touching) {
                *c = c.union(r);
                return;
            }
            self.mesh.add_colored_rect(*c, self.color);
        }
        self.current = Some(r);
    }

    fn finish(mut self) -> Mesh {
        if let Some(c) = self.current.take() {
            self.mesh.add_colored_rect(c, self.color);
        }
        self.mesh
    }
}

/// Builds the bars of a step line through `points` (screen positions snapped to physical
/// pixels): from each point, a hold to the next point's x, then a jump to its y. A hold no
/// longer than the bar thickness is skipped when a jump follows: the two jumps' bars cover it.
fn step_bars(points: &[Pos2], half: f32, color: Color32) -> Mesh {
    let mut bars = Bars {
        mesh: Mesh::default(),
        current: None,
        color,
    };
    bars.mesh.reserve_vertices(points.len() * 2);
    let bar = |x0: f32, x1: f32, y0: f32, y1: f32| {
        Rect::from_min_max(
            Pos2::new(x0.min(x1) - half, y0.min(y1) - half),
            Pos2::new(x0.max(x1) + half, y0.max(y1) + half),
        )
    };
    if let [only] = points {
        bars.push(bar(only.x, only.x, only.y, only.y));
    }
    for w in points.windows(2) {
        let (a, b) = (w[0], w[1]);
        let jumps = a.y != b.y;
        if b.x > a.x && !(jumps && b.x - a.x <= 2.0 * half) {
            bars.push(bar(a.x, b.x, a.y, a.y));
        }
        if jumps {
            bars.push(bar(b.x, b.x, a.y, b.y));
        }
    }
    bars.finish()
}

/// A screen position on the physical pixel grid of the plot `frame`: x to the left edge of
/// its pixel column (counted from the frame's left, so that the columns are the ones the chart's
/// M4 reduction is made for: every sample of a column lands on the same x, and a column's
/// first/min/max/last draw exactly what all its samples would), y to the nearest pixel edge.
/// Positions far outside the frame are clamped: their bars are clipped anyway.
pub fn snap_to_pixel(p: Pos2, frame: Rect, ppp: f32) -> Pos2 {
    let bound = frame.expand(16.0);
    let x = p.x.clamp(bound.min.x, bound.max.x);
    let y = p.y.clamp(bound.min.y, bound.max.y);
    Pos2::new(
        frame.min.x + ((x - frame.min.x) * ppp).floor() / ppp,
        (y * ppp).round() / ppp,
    )
}

impl PlotItem for StepLine {
    fn shapes(&self, ui: &Ui, transform: &PlotTransform, shapes: &mut Vec<Shape>) {
        let ppp = ui.ctx().pixels_per_point();
        let thickness = if self.highlighted() {
            2.0 * self.thickness
        } else {
            self.thickness
        };
        let frame = *transform.frame();
        let screen: Vec<Pos2> = self
            .points
            .iter()
            .map(|p| snap_to_pixel(transform.position_from_point(p), frame, ppp))
            .collect();
        let mesh = step_bars(&screen, thickness / 2.0 / ppp, self.color);
        if !mesh.is_empty() {
            shapes.push(Shape::mesh(mesh));
        }
    }

    fn initialize(&mut self, _x_range: RangeInclusive<f64>) {}

    fn color(&self) -> Color32 {
        self.color
    }

    fn geometry(&self) -> PlotGeometry<'_> {
        PlotGeometry::Points(&self.points)
    }

    fn bounds(&self) -> PlotBounds {
        let mut b = PlotBounds::NOTHING;
        for p in &self.points {
            b.extend_with(p);
        }
        b
    }

    fn base(&self) -> &PlotItemBase {
        &self.base
    }

    fn base_mut(&mut self) -> &mut PlotItemBase {
        &mut self.base
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(x: f32, y: f32) -> Pos2 {
        Pos2::new(x, y)
    }

    fn rects(points: &[Pos2]) -> Vec<Rect> {
        let mesh = step_bars(points, 1.0, Color32::WHITE);
        mesh.vertices
            .chunks(4)
            .map(|v| Rect::from_two_pos(v[0].pos, v[3].pos))
            .collect()
    }

    #[test]
    fn a_step_is_a_hold_then_a_jump() {
        let r = rects(&[p(10.0, 50.0), p(40.0, 20.0), p(70.0, 20.0)]);
        assert_eq!(
            r,
            vec![
                Rect::from_min_max(p(9.0, 49.0), p(41.0, 51.0)),
                Rect::from_min_max(p(39.0, 19.0), p(41.0, 51.0)),
                Rect::from_min_max(p(39.0, 19.0), p(71.0, 21.0)),
            ]
        );
    }

    #[test]
    fn a_pixel_column_of_samples_is_one_bar() {
        // M4 points of one column (first, min, max, last), then the next column's first.
        let r = rects(&[
            p(100.0, 60.0),
            p(100.0, 10.0),
            p(100.0, 90.0),
            p(100.0, 40.0),
            p(101.0, 45.0),
        ]);
        assert_eq!(
            r,
            vec![
                Rect::from_min_max(p(99.0, 9.0), p(101.0, 91.0)),
                Rect::from_min_max(p(100.0, 39.0), p(102.0, 46.0)),
            ]
        );
    }

    #[test]
    fn a_flat_run_is_one_bar() {
        let r = rects(&[p(0.0, 5.0), p(10.0, 5.0), p(30.0, 5.0), p(31.0, 5.0)]);
        assert_eq!(r, vec![Rect::from_min_max(p(-1.0, 4.0), p(32.0, 6.0))]);
    }

    /// Pixels covered by the bars (pixel centres inside a rectangle), on a `w`×`h` grid.
    fn coverage(mesh: &Mesh, w: usize, h: usize) -> Vec<bool> {
        let mut px = vec![false; w * h];
        for v in mesh.vertices.chunks(4) {
            let r = Rect::from_two_pos(v[0].pos, v[3].pos);
            for y in 0..h {
                for x in 0..w {
                    if r.contains(Pos2::new(x as f32 + 0.5, y as f32 + 0.5)) {
                        px[y * w + x] = true;
                    }
                }
            }
        }
        px
    }

    #[test]
    fn an_exact_reduction_draws_the_same_pixels_as_every_point() {
        use crate::analysis::{LodSeries, Series};
        // A bursty random walk: many samples in some pixel columns, none in others.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let mut s = Series::new("walk");
        let (mut t, mut v) = (0i64, 500i64);
        for _ in 0..20_000 {
            let r = next();
            t += if r % 7 == 0 {
                (r % 40_000) as i64
            } else {
                (r % 50) as i64
            };
            v = (v + (r >> 8) as i64 % 41 - 20).clamp(0, 1000);
            s.times.push(t);
            s.values.push(v);
        }
        let lod = LodSeries::new(s.clone());
        let (w, h) = (300usize, 120usize);
        let frame = Rect::from_min_size(Pos2::ZERO, egui::vec2(w as f32, h as f32));
        // A window in the middle, 1,000 ns per pixel column.
        let t0 = s.times[s.times.len() / 3];
        let t1 = t0 + 1000 * w as i64;
        let to_screen = |t: i64, v: i64| {
            Pos2::new(
                ((t - t0) as f64 / 1000.0) as f32,
                (h as f64 - 1.0 - v as f64 * (h as f64 - 2.0) / 1000.0) as f32,
            )
        };
        let snapped = |pts: Vec<Pos2>| -> Vec<Pos2> {
            pts.into_iter()
                .map(|p| snap_to_pixel(p, frame, 1.0))
                .collect()
        };
        let every: Vec<Pos2> = s
            .times
            .iter()
            .zip(&s.values)
            .map(|(&t, &v)| to_screen(t, v))
            .collect();
        let r = lod.reduce(t0, t1, w, usize::MAX);
        assert!(!r.sampled && r.times.len() < every.len() / 10);
        let reduced: Vec<Pos2> = r
            .times
            .iter()
            .zip(&r.values)
            .map(|(&t, &v)| to_screen(t, v))
            .collect();
        let all = coverage(&step_bars(&snapped(every), 1.0, Color32::WHITE), w, h);
        let few = coverage(&step_bars(&snapped(reduced), 1.0, Color32::WHITE), w, h);
        let differ = all.iter().zip(&few).filter(|(a, b)| a != b).count();
        assert_eq!(differ, 0, "pixels that differ");
        assert!(all.iter().filter(|&&p| p).count() > w, "the curve is drawn");
    }
}
