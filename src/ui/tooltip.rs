//! What every tooltip with changing content starts with: a sensible width.
//!
//! egui sizes a tooltip once, when it opens, and keeps that width while it stays open. When the
//! pointer moves from a spot whose tooltip is one short word (a band plot's "#5000") to one with
//! a sentence and a call stack, the sentence wraps one word per line in a 40 px column. A
//! tooltip whose content changes under a resting pointer sets its width with [`wide`] (text
//! that may wrap) or keeps its lines whole with [`unwrapped`] (short readouts).

/// The width (points) a tooltip with changing content is at least, when the screen has room.
pub const MIN_WIDTH: f32 = 360.0;

/// Makes the tooltip being drawn in `ui` at least [`MIN_WIDTH`] wide (less on a narrow
/// screen), so its text wraps at a readable width whatever it showed before.
pub fn wide(ui: &mut egui::Ui) {
    let screen = ui.ctx().content_rect().width();
    ui.set_min_width(MIN_WIDTH.min(screen - 32.0).max(0.0));
}

/// Keeps every line of the tooltip being drawn in `ui` on one line: for tooltips of short
/// lines (a value readout) whose width must follow the content, never an earlier, narrower one.
pub fn unwrapped(ui: &mut egui::Ui) {
    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
}
