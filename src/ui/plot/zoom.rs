//! Zooming the time (or node-index) axis of a chart, shared by the memory and static charts:
//! a drag-box zoom from exactly where the button went down, and the mouse wheel zooming around
//! the pointer. egui_plot's own box zoom starts where a drag is recognised (a few pixels after
//! the press) and zooms y too; its wheel only zooms with Ctrl held.

use egui::{PointerButton, Pos2};
use egui_plot::{PlotUi, Span};

/// Runs the drag-box zoom inside a plot: `drag` remembers (start, reached) in plot x between
/// frames (the frame a drag ends may have no pointer). Draws the box while dragging; returns the
/// chosen x range when the button is released.
pub fn box_zoom(
    plot_ui: &mut PlotUi<'_>,
    press_origin: Option<Pos2>,
    drag: &mut Option<(f64, f64)>,
) -> Option<(f64, f64)> {
    if plot_ui.response().dragged_by(PointerButton::Primary)
        && let (Some(origin), Some(now)) = (press_origin, plot_ui.pointer_coordinate())
    {
        *drag = Some((plot_ui.plot_from_screen(origin).x, now.x));
    }
    let (from, to) = (*drag)?;
    let (a, b) = (from.min(to), from.max(to));
    if plot_ui.response().drag_stopped() {
        *drag = None;
        return Some((a, b));
    }
    plot_ui.span(
        Span::new("", a..=b)
            .fill(crate::ui::palette::ZOOM_FILL)
            .border(egui::Stroke::new(1.0, crate::ui::palette::ZOOM_BORDER)),
    );
    None
}

/// Takes this frame's vertical wheel movement in points (positive: zoom in) out of the input,
/// so that a second pass of the frame (egui may run two) does not zoom again. Ctrl+wheel
/// (egui_plot zooms with it itself) and Shift+wheel (egui turns it into a horizontal scroll: a
/// pan) are left alone.
pub fn take_wheel(ui: &egui::Ui) -> f32 {
    let is_zoom = |e: &egui::Event| {
        matches!(e, egui::Event::MouseWheel { modifiers, .. }
            if !modifiers.command && !modifiers.shift)
    };
    ui.ctx().input_mut(|i| {
        let dy = i
            .events
            .iter()
            .filter(|e| is_zoom(e))
            .map(|e| match e {
                egui::Event::MouseWheel { unit, delta, .. } => match unit {
                    egui::MouseWheelUnit::Point => delta.y,
                    egui::MouseWheelUnit::Line => delta.y * 50.0,
                    egui::MouseWheelUnit::Page => delta.y * 400.0,
                },
                _ => 0.0,
            })
            .sum::<f32>();
        i.events.retain(|e| !is_zoom(e));
        dy
    })
}

/// The range after a wheel step of `dy` points (positive: zoom in) around `at`, never beyond
/// the `full` extent; `None` once it covers all of it.
pub fn wheel_zoom((a, b): (f64, f64), at: f64, dy: f64, full: (f64, f64)) -> Option<(f64, f64)> {
    let factor = (dy / 200.0).exp();
    let at = at.clamp(a, b);
    let (mut lo, mut hi) = (at - (at - a) / factor, at + (b - at) / factor);
    // Within a millionth of the whole (rounding of an exact zoom back out) is the whole.
    let whole = full.1 - full.0;
    if hi - lo >= whole - whole.abs() * 1e-6 {
        return None;
    }
    // Zooming out near an edge slides the range back inside.
    if lo < full.0 {
        (lo, hi) = (full.0, full.0 + (hi - lo));
    }
    if hi > full.1 {
        (lo, hi) = (full.1 - (hi - lo), full.1);
    }
    Some((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_wheel_zooms_around_the_pointer_and_stops_at_the_rank() {
        let full = (0.0, 100.0);
        let (a, b) = wheel_zoom((0.0, 100.0), 25.0, 200.0 * 2f64.ln(), full).unwrap();
        assert!(
            (a - 12.5).abs() < 1e-9 && (b - 62.5).abs() < 1e-9,
            "{a} {b}"
        );
        // Out again from there: the whole rank.
        assert_eq!(wheel_zoom((a, b), 25.0, -200.0 * 2f64.ln(), full), None);
        // Out near the start slides right instead of leaving the rank.
        let (a, b) = wheel_zoom((0.0, 10.0), 1.0, -200.0 * 2f64.ln(), full).unwrap();
        assert!((a - 0.0).abs() < 1e-9 && (b - 20.0).abs() < 1e-9, "{a} {b}");
    }
}
