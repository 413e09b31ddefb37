//! The load warnings window: what discovery noted about the whole profile (files skipped as
//! special files, unusable DBs), the rank's warnings, and every file's skipped rows, verbatim.

use crate::ui::command::Command;
use crate::ui::i18n::Tr;

/// Draws the open window of the rank's `report` (and the profile's notes); closing it goes to
/// `out`. Drawn over the rank and over the cluster overview: the top bar's button opens it
/// from either, so its title names the rank (`rank`, as the rank picker shows it): over the
/// overview the warnings would otherwise read as the whole cluster's.
pub fn warnings_window(
    ctx: &egui::Context,
    t: &Tr,
    rank: &str,
    report: &crate::model::LoadReport,
    profile_notes: &[crate::model::Message],
    out: &mut Vec<Command>,
) {
    let mut open = true;
    egui::Window::new(format!("{} — {rank}", t.load_warnings))
        // One window whichever rank it lists: where it was moved to stays.
        .id(egui::Id::unique("load_warnings"))
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
    if !open {
        out.push(Command::ShowWarnings(false));
    }
}
