//! The Live at cursor pane: what is alive at the cursor, the largest blocks and the totals per
//! operator.

use super::PaneCx;
use crate::analysis::{block_lifetime, live_at};
use crate::model::ns_to_ms;
use crate::ui::command::Command;
use crate::ui::format::{bytes, grouped, ms};

/// How many blocks and operators the pane lists.
const LIVE_TOP: usize = 25;

/// Draws the pane for the state's cursor (nothing without one).
pub fn live_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
    let Some(t) = cx.state.link.cursor else {
        return;
    };
    let view = cx.view;
    let data = &view.data;
    let live = live_at(data, view.live_index(), t);
    ui.horizontal(|ui| {
        ui.heading("Live at cursor");
        if ui.button("Close").clicked() {
            cx.out.push(Command::SetCursor(None));
        }
    });
    ui.label(format!(
        "{}: {} blocks, {}",
        ms(ns_to_ms(t)),
        grouped(live.rows.len() as f64, 0),
        bytes(live.total)
    ));
    ui.separator();
    let name = |id: u32| data.display_name(id);
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.strong("By operator");
        egui::Grid::new("live_by_name")
            .striped(true)
            .show(ui, |ui| {
                ui.label("Operator");
                ui.label("Total");
                ui.label("Blocks");
                ui.end_row();
                for &(id, b, n) in live.by_name.iter().take(LIVE_TOP) {
                    ui.label(name(id));
                    ui.label(bytes(b));
                    ui.label(grouped(n as f64, 0));
                    ui.end_row();
                }
            });
        ui.add_space(8.0);
        ui.strong("Largest blocks");
        egui::Grid::new("live_largest")
            .striped(true)
            .show(ui, |ui| {
                ui.label("Operator");
                ui.label("Size");
                ui.label("Allocated at");
                ui.end_row();
                for &r in live.rows.iter().take(LIVE_TOP) {
                    let r = r as usize;
                    ui.label(name(data.operators.name[r]));
                    ui.label(bytes(data.operators.size[r]));
                    ui.label(match block_lifetime(data, r).and_then(|l| l.allocated) {
                        Some(a) => ms(ns_to_ms(a)),
                        None => "before capture".into(),
                    });
                    ui.end_row();
                }
            });
    });
}
