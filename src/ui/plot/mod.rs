//! What the charts share: step curves drawn as pixel-snapped bars ([`step_line`]), drag-box and
//! wheel zoom of the x axis ([`zoom`]), the memory chart's reduced lines and when to recompute
//! them ([`reduction`]), series colours and axis tick decimals.

pub mod reduction;
pub mod step_line;
pub mod zoom;

use egui::Color32;

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

/// The colour of series `i` of a chart whose curves have no meaning-bound colour.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}

/// A colour mixed `amount` (0–1) of the way to white (positive) or black (negative).
fn shade(c: Color32, amount: f32) -> Color32 {
    let to = if amount >= 0.0 { 255.0 } else { 0.0 };
    let a = amount.abs().min(1.0);
    let mix = |v: u8| (f32::from(v) + (to - f32::from(v)) * a).round() as u8;
    Color32::from_rgb(mix(c.r()), mix(c.g()), mix(c.b()))
}

/// The colour of a memory curve by what it means, the same in every Group By and for every
/// profiler: Allocated blue, Activated orange, Reserved green, APP Reserved red, Workspace
/// purple (allocated) and brown (reserved); GE's own curves a lighter shade of their quantity;
/// the streams of Stream mode darker shades, one per stream (`nth` of its quantity).
pub fn curve_color(name: &str, nth: usize) -> Color32 {
    let [blue, orange, green, red, purple, brown] = [
        PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4], PALETTE[5],
    ];
    if name == "APP Reserved" {
        return red;
    }
    if let Some(rest) = name
        .strip_prefix("Workspace ")
        .or(name.strip_prefix("WORKSPACE "))
    {
        return if rest.starts_with("Reserved") {
            brown
        } else {
            purple
        };
    }
    let base = if name.contains("Allocated") {
        blue
    } else if name.contains("Activated") {
        orange
    } else if name.contains("Reserved") {
        green
    } else {
        return series_color(nth);
    };
    if name.starts_with("GE ") {
        return shade(base, 0.45);
    }
    if name.contains(" of ") {
        // Stream mode: one shade per stream, alternating darker and lighter.
        let step = (nth % 6) as f32 * 0.12;
        return if nth.is_multiple_of(2) {
            shade(base, -step)
        } else {
            shade(base, step)
        };
    }
    base
}

/// Decimals for axis ticks `step` apart.
pub fn decimals_for(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    }
}
