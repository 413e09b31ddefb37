//! Save chart as PNG: a report figure drawn on its own, not a crop of the window. The chart
//! pane hands over what it drew ([`ChartFigure`]: the curves in the window, the axes, a legend
//! line per curve with its peak); [`ChartReport`] adds a caption (profile, rank, window); the
//! figure is drawn with vello_cpu at [`REPORT_SCALE`] pixels per point on a white page — plot,
//! legend and axis titles only, no buttons or hints — and written as PNG with the caption in its
//! text chunks.

use std::path::Path;

use egui::Color32;
use vello_cpu::kurbo::{Affine, BezPath, Circle, Rect, Shape, Stroke};
use vello_cpu::peniko::Color;
use vello_cpu::{Pixmap, RenderContext, Resources};

use super::format::grouped;
use super::palette::{
    REPORT_FRAME, REPORT_GRID, REPORT_PAGE, REPORT_TEXT, REPORT_TICK_TEXT, REPORT_WEAK_TEXT,
};
use super::plot::{MEMORY_LABEL_POINTS, TIME_LABEL_POINTS, decimals_for};
use super::report_text::ReportFonts;

/// Pixels per point of the report (at least; a denser screen's own scale when larger).
pub const REPORT_SCALE: f32 = 2.0;

/// The report's size in points, at least and at most (the chart's size on screen, clamped).
pub const REPORT_MIN_PT: [f32; 2] = [800.0, 450.0];
/// See [`REPORT_MIN_PT`].
pub const REPORT_MAX_PT: [f32; 2] = [2000.0, 1200.0];

/// One curve as the chart drew it.
#[derive(Debug, Clone, PartialEq)]
pub struct FigureCurve {
    /// The legend's line: the curve's name and its peak in the window.
    pub legend: String,
    /// Its colour on screen.
    pub color: Color32,
    /// (time ms, value in the figure's unit), in time order; each value holds until the next.
    pub points: Vec<[f64; 2]>,
    /// Its highest point in the window, marked with a dot.
    pub peak: Option<[f64; 2]>,
    /// Drawn dashed (a comparison's baseline).
    pub dashed: bool,
}

/// What the memory chart drew last frame, in plot units.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartFigure {
    /// The time axis's range, ms.
    pub x_range: (f64, f64),
    /// The memory axis's range, in the unit of `y_title`.
    pub y_range: (f64, f64),
    /// The time axis's title.
    pub x_title: String,
    /// The memory axis's title (with its unit).
    pub y_title: String,
    /// The visible curves, in legend order.
    pub curves: Vec<FigureCurve>,
    /// The chart's size on screen, points.
    pub size_pt: [f32; 2],
}

/// A figure with its caption, ready to draw.
#[derive(Debug, Clone, PartialEq)]
pub struct ChartReport {
    /// The first caption line: the profile and the rank.
    pub title: String,
    /// The second: the window, the Group By and where the rows came from.
    pub subtitle: String,
    /// The chart.
    pub figure: ChartFigure,
    /// Pixels per point.
    pub scale: f32,
}

impl ChartReport {
    /// The report's size in points: the chart's on screen, at least half as high as wide (a
    /// 1280×720 window's chart is a strip, too flat for a page), clamped to
    /// [`REPORT_MIN_PT`]..[`REPORT_MAX_PT`].
    pub fn size_pt(&self) -> [f32; 2] {
        let [w, h] = self.figure.size_pt;
        let w = w.clamp(REPORT_MIN_PT[0], REPORT_MAX_PT[0]);
        [w, h.max(w * 0.5).clamp(REPORT_MIN_PT[1], REPORT_MAX_PT[1])]
    }

    /// The image's size in pixels.
    pub fn size_px(&self) -> [u16; 2] {
        let [w, h] = self.size_pt();
        let s = self.scale.clamp(1.0, 4.0);
        [(w * s).round() as u16, (h * s).round() as u16]
    }
}

/// An opaque RGB image.
pub struct RgbImage {
    /// Width, pixels.
    pub width: u32,
    /// Height, pixels.
    pub height: u32,
    /// Rows of RGB bytes, top first.
    pub rgb: Vec<u8>,
}

const MARGIN: f64 = 16.0;
const TITLE_PT: f32 = 16.0;
const SUBTITLE_PT: f32 = 12.0;
const TICK_PT: f32 = 11.0;
const AXIS_PT: f32 = 12.0;
const LEGEND_PT: f32 = 12.0;
const LEGEND_ROW: f64 = 20.0;
const SWATCH: f64 = 22.0;

fn color(c: Color32) -> Color {
    let [r, g, b, a] = c.to_srgba_unmultiplied();
    Color::from_rgba8(r, g, b, a)
}

/// The labelled ticks of an axis showing `lo..hi` over `length` points, labels at least `gap`
/// points apart: the screen's rule ([`crate::ui::plot::label_step`]).
fn ticks(lo: f64, hi: f64, length: f64, gap: f64) -> (Vec<f64>, f64) {
    let step = crate::ui::plot::label_step((hi - lo) / length.max(1.0), gap);
    (crate::ui::plot::ticks_in(lo, hi, step), step)
}

/// The legend's entries laid out in rows across `width`: (row, x) of each.
fn legend_rows(fonts: &ReportFonts, curves: &[FigureCurve], width: f64) -> Vec<(usize, f64)> {
    let mut out = Vec::with_capacity(curves.len());
    let (mut row, mut x) = (0usize, 0.0f64);
    for c in curves {
        let w = SWATCH + 6.0 + f64::from(fonts.width(&c.legend, LEGEND_PT)) + 18.0;
        if x > 0.0 && x + w > width {
            row += 1;
            x = 0.0;
        }
        out.push((row, x));
        x += w;
    }
    out
}

/// Draws `report` on a white page.
pub fn render(report: &ChartReport, fonts: &ReportFonts) -> Result<RgbImage, String> {
    let [wpx, hpx] = report.size_px();
    if wpx == 0 || hpx == 0 {
        return Err("the chart has no size".into());
    }
    let [w, h] = report.size_pt().map(f64::from);
    let scale = f64::from(wpx) / w;
    let page = Affine::scale(scale);
    let fig = &report.figure;
    let mut ctx = RenderContext::new(wpx, hpx);
    let mut res = Resources::new();
    ctx.set_transform(page);
    ctx.set_paint(color(REPORT_PAGE));
    ctx.fill_rect(&Rect::new(0.0, 0.0, w, h));

    let text =
        |ctx: &mut RenderContext, res: &mut Resources, s: &str, pt: f32, x: f64, top: f64| {
            let base = top + f64::from(fonts.ascent(pt));
            fonts.draw(ctx, res, s, pt, page * Affine::translate((x, base)));
        };

    // Caption.
    ctx.set_paint(color(REPORT_TEXT));
    text(&mut ctx, &mut res, &report.title, TITLE_PT, MARGIN, MARGIN);
    let sub_top = MARGIN + f64::from(TITLE_PT) * 1.35;
    ctx.set_paint(color(REPORT_WEAK_TEXT));
    text(
        &mut ctx,
        &mut res,
        &report.subtitle,
        SUBTITLE_PT,
        MARGIN,
        sub_top,
    );
    let plot_top = sub_top + f64::from(SUBTITLE_PT) * 1.35 + 14.0;

    // Legend rows below the x axis title.
    let placed = legend_rows(fonts, &fig.curves, w - 2.0 * MARGIN);
    let rows = placed.iter().map(|(r, _)| r + 1).max().unwrap_or(0) as f64;
    let legend_top = h - MARGIN - rows * LEGEND_ROW;
    let x_title_top = legend_top - 10.0 - f64::from(AXIS_PT) * 1.3;
    let plot_bottom = x_title_top - f64::from(TICK_PT) * 1.3 - 8.0;

    // The y axis: its ticks and the widest label decide where the plot starts.
    let (y0, y1) = fig.y_range;
    let (yt, ystep) = ticks(y0, y1, plot_bottom - plot_top, MEMORY_LABEL_POINTS);
    let ydec = decimals_for(ystep);
    let ylabels: Vec<String> = yt.iter().map(|v| grouped(*v, ydec)).collect();
    let ylabel_w = ylabels
        .iter()
        .map(|s| f64::from(fonts.width(s, TICK_PT)))
        .fold(0.0, f64::max);
    let plot_left = MARGIN + f64::from(AXIS_PT) * 1.3 + 8.0 + ylabel_w + 6.0;
    let plot_right = w - MARGIN - 24.0;
    if plot_right - plot_left < 50.0 || plot_bottom - plot_top < 50.0 {
        return Err("the chart is too small to draw".into());
    }
    let plot = Rect::new(plot_left, plot_top, plot_right, plot_bottom);
    let (x0, x1) = fig.x_range;
    let (xt, xstep) = ticks(x0, x1, plot.width(), TIME_LABEL_POINTS);
    let xdec = decimals_for(xstep);
    let sx = |t: f64| plot.x0 + (t - x0) / (x1 - x0).max(f64::MIN_POSITIVE) * plot.width();
    let sy = |v: f64| plot.y1 - (v - y0) / (y1 - y0).max(f64::MIN_POSITIVE) * plot.height();

    // Grid and tick labels.
    ctx.set_stroke(Stroke::new(0.6));
    for (v, label) in yt.iter().zip(&ylabels) {
        let y = sy(*v);
        ctx.set_paint(color(REPORT_GRID));
        ctx.stroke_path(&line(plot.x0, y, plot.x1, y));
        ctx.set_paint(color(REPORT_TICK_TEXT));
        let lw = f64::from(fonts.width(label, TICK_PT));
        let top = y - f64::from(TICK_PT) * 0.6;
        text(&mut ctx, &mut res, label, TICK_PT, plot.x0 - 6.0 - lw, top);
    }
    for v in &xt {
        let x = sx(*v);
        ctx.set_paint(color(REPORT_GRID));
        ctx.set_stroke(Stroke::new(0.6));
        ctx.stroke_path(&line(x, plot.y0, x, plot.y1));
        let label = grouped(*v, xdec);
        let lw = f64::from(fonts.width(&label, TICK_PT));
        ctx.set_paint(color(REPORT_TICK_TEXT));
        text(
            &mut ctx,
            &mut res,
            &label,
            TICK_PT,
            x - lw / 2.0,
            plot.y1 + 5.0,
        );
    }
    ctx.set_paint(color(REPORT_FRAME));
    ctx.set_stroke(Stroke::new(0.8));
    ctx.stroke_path(&plot.to_path(0.1));

    // Axis titles: x centred below, y turned a quarter to the left of the labels.
    ctx.set_paint(color(REPORT_TEXT));
    let xw = f64::from(fonts.width(&fig.x_title, AXIS_PT));
    text(
        &mut ctx,
        &mut res,
        &fig.x_title,
        AXIS_PT,
        plot.center().x - xw / 2.0,
        x_title_top,
    );
    let yw = f64::from(fonts.width(&fig.y_title, AXIS_PT));
    let ybase = MARGIN + f64::from(fonts.ascent(AXIS_PT));
    fonts.draw(
        &mut ctx,
        &mut res,
        &fig.y_title,
        AXIS_PT,
        page * Affine::translate((ybase, plot.center().y + yw / 2.0))
            * Affine::rotate(-std::f64::consts::FRAC_PI_2),
    );

    // The curves, clipped to the plot.
    ctx.push_clip_layer(&plot.to_path(0.1));
    for c in &fig.curves {
        let mut path = BezPath::new();
        for (i, p) in c.points.iter().enumerate() {
            let (x, y) = (sx(p[0]), sy(p[1]));
            if i == 0 {
                path.move_to((x, y));
            } else {
                path.line_to((x, sy(c.points[i - 1][1])));
                path.line_to((x, y));
            }
        }
        let stroke = if c.dashed {
            Stroke::new(1.2).with_dashes(0.0, [5.0, 3.0])
        } else {
            Stroke::new(1.5)
        };
        ctx.set_stroke(stroke);
        ctx.set_paint(color(c.color));
        ctx.stroke_path(&path);
    }
    for c in fig.curves.iter().filter(|c| !c.dashed) {
        if let Some([t, v]) = c.peak {
            ctx.set_paint(color(c.color));
            ctx.fill_path(&Circle::new((sx(t), sy(v)), 3.5).to_path(0.05));
            ctx.set_paint(color(REPORT_PAGE));
            ctx.set_stroke(Stroke::new(1.0));
            ctx.stroke_path(&Circle::new((sx(t), sy(v)), 3.5).to_path(0.05));
        }
    }
    ctx.pop_layer();

    // The legend.
    for (c, (row, x)) in fig.curves.iter().zip(&placed) {
        let top = legend_top + *row as f64 * LEGEND_ROW;
        let (x, mid) = (MARGIN + x, top + LEGEND_ROW / 2.0 - 2.0);
        ctx.set_paint(color(c.color));
        ctx.set_stroke(if c.dashed {
            Stroke::new(2.0).with_dashes(0.0, [5.0, 3.0])
        } else {
            Stroke::new(2.5)
        });
        ctx.stroke_path(&line(x, mid, x + SWATCH, mid));
        ctx.set_paint(color(REPORT_TEXT));
        let ttop = mid - f64::from(LEGEND_PT) * 0.62;
        text(
            &mut ctx,
            &mut res,
            &c.legend,
            LEGEND_PT,
            x + SWATCH + 6.0,
            ttop,
        );
    }

    let mut pixmap = Pixmap::new(wpx, hpx);
    ctx.flush();
    ctx.render(&mut pixmap, &mut res);
    // The page is opaque white, so premultiplied and straight colours are the same.
    let rgb = pixmap
        .data_as_u8_slice()
        .chunks_exact(4)
        .flat_map(|px| [px[0], px[1], px[2]])
        .collect();
    Ok(RgbImage {
        width: u32::from(wpx),
        height: u32::from(hpx),
        rgb,
    })
}

fn line(x0: f64, y0: f64, x1: f64, y1: f64) -> BezPath {
    let mut p = BezPath::new();
    p.move_to((x0, y0));
    p.line_to((x1, y1));
    p
}

/// `image` as PNG bytes, the caption in its `Title` and `Description` text chunks (UTF-8).
pub fn encode_png(image: &RgbImage, title: &str, description: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    {
        let mut enc = png::Encoder::new(&mut out, image.width, image.height);
        enc.set_color(png::ColorType::Rgb);
        enc.set_depth(png::BitDepth::Eight);
        enc.add_itxt_chunk("Title".into(), title.into())
            .map_err(|e| e.to_string())?;
        enc.add_itxt_chunk("Description".into(), description.into())
            .map_err(|e| e.to_string())?;
        enc.add_text_chunk("Software".into(), "memsight".into())
            .map_err(|e| e.to_string())?;
        let mut writer = enc.write_header().map_err(|e| e.to_string())?;
        writer
            .write_image_data(&image.rgb)
            .map_err(|e| e.to_string())?;
    }
    Ok(out)
}

/// `report` drawn and encoded as PNG bytes.
pub fn report_png(report: &ChartReport) -> Result<Vec<u8>, String> {
    let fonts = ReportFonts::load();
    let image = render(report, &fonts)?;
    encode_png(&image, &report.title, &report.subtitle)
}

/// Writes PNG `bytes` as a file at `path`.
pub fn save_png(bytes: &[u8], path: &Path) -> Result<(), crate::model::Cause> {
    std::fs::write(path, bytes).map_err(|e| {
        let shown = path.display().to_string();
        crate::model::Cause::io(format!("{shown}: {e}"), Some(shown), &e)
    })
}

/// The native save dialog for a PNG (rfd); `Unavailable` when none can be shown.
pub fn native_png_picker() -> super::file_browser::PickOutcome {
    super::file_browser::native_outcome(|| {
        let dialog = rfd::FileDialog::new();
        let dialog = match super::file_browser::save_folder() {
            Some(dir) => dialog.set_directory(dir),
            None => dialog,
        };
        dialog
            .set_file_name("memsight_chart.png")
            .add_filter("PNG", &["png"])
            .save_file()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The saved chart labels the same ticks the screen's grid labels, for the same range over
    /// the same length: one rule for both axes.
    #[test]
    fn the_report_labels_the_ticks_the_screen_labels() {
        for (lo, hi, length) in [
            (0.0, 8000.0, 130.0),
            (-12.5, 3456.7, 900.0),
            (1.0e6, 1.0e6 + 37.0, 1200.0),
            (0.0, 0.004, 300.0),
        ] {
            for (gap, grid) in [
                (
                    TIME_LABEL_POINTS,
                    crate::ui::plot::time_grid as fn(_) -> Vec<_>,
                ),
                (MEMORY_LABEL_POINTS, crate::ui::plot::memory_grid),
            ] {
                let per_point = (hi - lo) / length;
                let marks = grid(egui_plot::GridInput {
                    bounds: (lo, hi),
                    base_step_size: per_point * 8.0,
                });
                let major = marks.iter().map(|m| m.step_size).fold(0.0, f64::max);
                let screen: Vec<f64> = marks
                    .iter()
                    .filter(|m| m.step_size == major && m.value >= lo && m.value <= hi)
                    .map(|m| m.value)
                    .collect();
                let (report, step) = ticks(lo, hi, length, gap);
                assert_eq!(step, major, "{lo}..{hi} over {length}");
                assert_eq!(report.len(), screen.len(), "{lo}..{hi} over {length}");
                for (a, b) in report.iter().zip(&screen) {
                    assert!((a - b).abs() <= step * 1e-9, "{a} vs {b}");
                }
                // Labels stand at least the gap apart, and a step smaller by one 1-2-5 notch
                // would break that.
                assert!(step / per_point >= gap * (1.0 - 1e-9));
            }
        }
    }

    fn report() -> ChartReport {
        ChartReport {
            title: "profile · rank 0 · 训练".into(),
            subtitle: "0 – 100 ms".into(),
            figure: ChartFigure {
                x_range: (0.0, 100.0),
                y_range: (0.0, 50.0),
                x_title: "Time (ms)".into(),
                y_title: "Memory (MB)".into(),
                curves: vec![FigureCurve {
                    legend: "Allocated — peak 40.00 MB".into(),
                    color: crate::ui::palette::PALETTE[3],
                    points: vec![[0.0, 10.0], [50.0, 40.0], [80.0, 20.0]],
                    peak: Some([50.0, 40.0]),
                    dashed: false,
                }],
                size_pt: [900.0, 500.0],
            },
            scale: 2.0,
        }
    }

    #[test]
    fn the_report_is_twice_the_chart_and_draws_its_curve_on_white() {
        let r = report();
        let img = render(&r, &ReportFonts::load()).unwrap();
        assert_eq!((img.width, img.height), (1800, 1000));
        let px = |x: u32, y: u32| {
            let i = ((y * img.width + x) * 3) as usize;
            [img.rgb[i], img.rgb[i + 1], img.rgb[i + 2]]
        };
        assert_eq!(px(0, 0), [255, 255, 255]);
        let red = img
            .rgb
            .chunks_exact(3)
            .filter(|p| p[0] > 180 && p[1] < 80)
            .count();
        assert!(red > 500, "the curve is drawn ({red} red pixels)");
        let png = encode_png(&img, &r.title, &r.subtitle).unwrap();
        let reader = png::Decoder::new(std::io::Cursor::new(png))
            .read_info()
            .unwrap();
        let titles: Vec<&str> = reader
            .info()
            .utf8_text
            .iter()
            .filter_map(|c| c.get_text().ok().map(|_| c.keyword.as_str()))
            .collect();
        assert!(titles.contains(&"Title"), "{titles:?}");
    }

    #[test]
    fn a_too_small_or_empty_range_is_an_error_or_a_page_not_a_panic() {
        let mut r = report();
        r.figure.x_range = (5.0, 5.0);
        r.figure.y_range = (f64::NAN, 1.0);
        assert!(render(&r, &ReportFonts::load()).is_ok());
        r.figure.curves[0].points.clear();
        assert!(render(&r, &ReportFonts::load()).is_ok());
    }
}
