//! What the charts share: step curves drawn as pixel-snapped bars ([`step_line`]), drag-box and
//! wheel zoom of the x axis ([`zoom`]), where a point's label goes ([`labels`]), an axis of
//! ranks ([`rank_axis`]), the memory chart's reduced lines and when to recompute
//! them ([`reduction`]) and axis tick decimals; series colours come from [`crate::ui::palette`].

pub mod labels;
pub mod rank_axis;
pub mod reduction;
pub mod step_line;
pub mod zoom;

pub use crate::ui::palette::{curve_color, series_color};

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
/// passes 60 points). The screen's chart and the saved chart both use it.
pub const TIME_LABEL_POINTS: f64 = 72.0;

/// Points between labelled memory ticks at least, on the screen's chart and the saved one.
pub const MEMORY_LABEL_POINTS: f64 = 40.0;

/// The step between labelled ticks when one point is `per_point` axis units and labels stand
/// at least `gap` points apart: the smallest 1-2-5 step that keeps them so. The one rule of
/// both charts' axes (the screen's grid spacers and the saved chart's ticks).
pub fn label_step(per_point: f64, gap: f64) -> f64 {
    nice_step(per_point * gap)
}

/// The multiples of `step` within `lo..=hi` (none when there would be over 1,000).
pub fn ticks_in(lo: f64, hi: f64, step: f64) -> Vec<f64> {
    if !(lo.is_finite() && hi.is_finite() && hi > lo && step > 0.0) {
        return Vec::new();
    }
    let first = (lo / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    if last.saturating_sub(first) > 1000 {
        return Vec::new();
    }
    (first..=last).map(|k| k as f64 * step).collect()
}

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
    nice_grid(input, TIME_LABEL_POINTS)
}

/// Grid marks for the memory chart's value axis: 1-2-5 steps labelled every
/// [`MEMORY_LABEL_POINTS`], as the saved chart labels it.
pub fn memory_grid(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    nice_grid(input, MEMORY_LABEL_POINTS)
}

/// Whether a value axis's tick label centred on `value` stays inside a frame `frame_height`
/// points tall showing `range`: its upper half (`half_label` points) must not reach above the
/// top edge, where it would lie under whatever is drawn above the plot (the chart's legend).
pub fn under_the_top_edge(
    value: f64,
    range: &std::ops::RangeInclusive<f64>,
    frame_height: f32,
    half_label: f32,
) -> bool {
    let span = range.end() - range.start();
    if !(span > 0.0 && frame_height > 0.0) {
        return true;
    }
    (range.end() - value) / span * f64::from(frame_height) >= f64::from(half_label)
}

/// Grid marks for a value axis of a short plot: 1-2-5 steps labelled every ~30 points (egui_plot's
/// powers of ten left a 130-point plot of 0–4,700 MB one label, "0").
pub fn value_grid(input: egui_plot::GridInput) -> Vec<egui_plot::GridMark> {
    nice_grid(input, 30.0)
}

/// Grid marks on 1-2-5 steps with labelled ticks at least `label_points` apart and unlabelled
/// minor lines between.
fn nice_grid(input: egui_plot::GridInput, label_points: f64) -> Vec<egui_plot::GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite() && hi > lo && input.base_step_size > 0.0) {
        return Vec::new();
    }
    let per_point = input.base_step_size / GRID_MIN_POINTS;
    let major = label_step(per_point, label_points);
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
    fn a_label_whose_upper_half_leaves_the_frame_is_not_under_the_top_edge() {
        // 0..=1000 over 200 points: 5 units a point; a 16-point label's upper half is 8 points
        // = 40 units, so 960 is the highest value whose label stays inside.
        let r = 0.0..=1000.0;
        assert!(under_the_top_edge(960.0, &r, 200.0, 8.0));
        assert!(!under_the_top_edge(961.0, &r, 200.0, 8.0));
        assert!(!under_the_top_edge(1000.0, &r, 200.0, 8.0));
        assert!(under_the_top_edge(0.0, &r, 200.0, 8.0));
        // A degenerate range or frame keeps every label.
        assert!(under_the_top_edge(5.0, &(5.0..=5.0), 200.0, 8.0));
        assert!(under_the_top_edge(5.0, &r, 0.0, 8.0));
    }

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
    fn a_short_value_axis_gets_several_labels() {
        // 0–8,000 MB over 130 points: labels every 30 points at least, 2,000 MB apart.
        let input = egui_plot::GridInput {
            bounds: (0.0, 8000.0),
            base_step_size: 8000.0 / 130.0 * GRID_MIN_POINTS,
        };
        let labelled: Vec<f64> = value_grid(input)
            .iter()
            .filter(|m| m.step_size * 130.0 / 8000.0 > 20.0)
            .map(|m| m.value)
            .collect();
        assert_eq!(labelled, vec![0.0, 2000.0, 4000.0, 6000.0, 8000.0]);
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
