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

/// egui_plot's smallest grid spacing, in points (its default): `GridInput::base_step_size` is
/// this many points in plot units.
const GRID_MIN_POINTS: f64 = 8.0;

/// Points between labelled time ticks at least (egui_plot labels an x tick once its spacing
/// passes 60 points).
const LABEL_POINTS: f64 = 72.0;

/// The smallest 1-2-5 step (…, 0.1, 0.2, 0.5, 1, 2, 5, 10, …) of at least `min`.
pub fn nice_step(min: f64) -> f64 {
    if !(min.is_finite() && min > 0.0) {
        return 1.0;
    }
    let p = 10f64.powf(min.log10().floor());
    [1.0, 2.0, 5.0, 10.0]
        .into_iter()
        .map(|m| m * p)
        .find(|s| *s >= min * (1.0 - 1e-12))
        .unwrap_or(10.0 * p)
}

/// Grid marks for a time axis on 1-2-5 steps, so that a narrow plot still labels a tick every
/// ~72 points (egui_plot's powers of ten can leave two labels on a 1280-pixel screen), with
/// unlabelled minor lines between.
pub fn time_grid(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite() && hi > lo && input.base_step_size > 0.0) {
        return Vec::new();
    }
    let per_point = input.base_step_size / GRID_MIN_POINTS;
    let major = nice_step(per_point * LABEL_POINTS);
    let minor = major / 5.0;
    let first = (lo / minor).floor() as i64;
    let last = (hi / minor).ceil() as i64;
    if last.saturating_sub(first) > 10_000 {
        return Vec::new();
    }
    (first..=last)
        .map(|k| {
            let value = k as f64 * minor;
            let on_major = (value / major - (value / major).round()).abs() < 1e-6;
            egui_plot::GridMark {
                value,
                step_size: if on_major { major } else { minor },
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_are_one_two_five() {
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.2), 2.0);
        assert_eq!(nice_step(3.0), 5.0);
        assert_eq!(nice_step(6.0), 10.0);
        assert_eq!(nice_step(0.013), 0.02);
        assert_eq!(nice_step(2000.0), 2000.0);
    }

    #[test]
    fn a_narrow_plot_still_gets_four_labelled_ticks() {
        // 20 ms over 600 points: 1 ms is 30 points, so labels go every 5 ms… at least 4 of them.
        let input = egui_plot::GridInput {
            bounds: (0.0, 20.0),
            base_step_size: 20.0 / 600.0 * GRID_MIN_POINTS,
        };
        let marks = time_grid(input);
        let labelled: Vec<f64> = marks
            .iter()
            .filter(|m| m.step_size * 600.0 / 20.0 > 60.0)
            .map(|m| m.value)
            .collect();
        assert!(labelled.len() >= 4, "{labelled:?}");
        assert_eq!(labelled, vec![0.0, 5.0, 10.0, 15.0, 20.0]);
    }
}
