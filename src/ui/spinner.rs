//! The busy spinner, redrawn a few times a second. egui's own asks for the next frame at once,
//! so a window that showed one while a big file loaded was redrawn as fast as it could be:
//! without vsync (software rendering, a remote X display) that took a core from the load
//! (a 1 GB dump's curves came 0.9 s later in the app than in a headless load).

use std::time::Duration;

/// How often a spinner on screen is redrawn (and what waits beside it polled): 15 times a
/// second.
pub const FRAME: Duration = Duration::from_millis(66);

/// A spinner the size of a row (as `ui.spinner()`), redrawn every [`FRAME`].
pub fn spinner(ui: &mut egui::Ui) -> egui::Response {
    let size = ui.style().spacing.interact_size.y;
    let (rect, response) = ui.allocate_exact_size(egui::vec2(size, size), egui::Sense::hover());
    response.widget_info(|| egui::WidgetInfo::new(egui::Role::ProgressIndicator));
    if ui.is_rect_visible(rect) {
        ui.ctx().request_repaint_after(FRAME);
        let color = ui.visuals().strong_text_color();
        let radius = rect.height().min(rect.width()) * 0.5 - 2.0;
        let n = (radius.round() as u32).clamp(8, 128);
        let time = ui.input(|i| i.time);
        let (start, sweep) = arc_at(time);
        let points: Vec<egui::Pos2> = (0..n)
            .map(|i| {
                let angle = start + sweep * f64::from(i) / f64::from(n);
                let (sin, cos) = angle.sin_cos();
                rect.center() + radius * egui::vec2(cos as f32, sin as f32)
            })
            .collect();
        ui.painter()
            .add(egui::Shape::line(points, egui::Stroke::new(3.0, color)));
    }
    response
}

/// The arc drawn at `time` (s): where it starts and how far it sweeps (radians), as egui's
/// spinner draws it: a turn a second, its length swinging with the time's sine.
fn arc_at(time: f64) -> (f64, f64) {
    let start = time * std::f64::consts::TAU;
    (start, 240f64.to_radians() * time.sin())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arc_turns_once_a_second() {
        let (a, _) = arc_at(0.25);
        let (b, _) = arc_at(1.25);
        assert!((b - a - std::f64::consts::TAU).abs() < 1e-9);
        assert_eq!(arc_at(0.0), (0.0, 0.0));
    }
}
