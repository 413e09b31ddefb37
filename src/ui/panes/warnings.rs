//! The load warnings window: what discovery noted about the whole profile (files skipped as
//! special files, unusable DBs), the rank's warnings, and every file's skipped rows, verbatim.

use super::PaneCx;
use crate::ui::command::Command;

/// Draws the window while the state has it open.
pub fn warnings_window(
    ctx: &egui::Context,
    cx: &mut PaneCx<'_>,
    profile_notes: &[crate::model::Message],
) {
    let report = &cx.view.data.report;
    let mut open = cx.state.show_warnings;
    let t = cx.t;
    egui::Window::new(t.load_warnings)
        .open(&mut open)
        .default_size([700.0, 400.0])
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                // Problems first, then the notes (marked ℹ).
                let all: Vec<&crate::model::Message> =
                    profile_notes.iter().chain(&report.warnings).collect();
                for w in all.iter().filter(|m| !m.is_note()) {
                    ui.label(format!("• {}", w.render(t.lang)));
                }
                for w in all.iter().filter(|m| m.is_note()) {
                    ui.label(format!("ℹ {}", w.render(t.lang)));
                }
                for f in report.files.iter().filter(|f| f.skipped.count > 0) {
                    ui.separator();
                    ui.strong((t.rows_skipped)(
                        &f.path.display().to_string(),
                        f.skipped.count,
                    ));
                    for s in &f.skipped.samples {
                        ui.monospace((t.skipped_line)(s.line, &s.reason.render(t.lang), &s.text));
                    }
                }
            });
        });
    if open != cx.state.show_warnings {
        cx.out.push(Command::ShowWarnings(open));
    }
}
