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

/// The colour of series `i`.
pub fn series_color(i: usize) -> Color32 {
    PALETTE[i % PALETTE.len()]
}

/// Decimals for axis ticks `step` apart.
pub fn decimals_for(step: f64) -> usize {
    if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil().clamp(0.0, 6.0) as usize
    }
}
