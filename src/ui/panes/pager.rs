//! The pager under a table: rows per page, first / previous / next / last and go to page.

use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::state::{PAGE_SIZES, ViewState};

/// A pager's own state: the text of its "go to page" box.
#[derive(Default)]
pub struct Pager {
    jump_text: String,
}

impl Pager {
    /// The pager for `total` rows at the state's page and page size; pushes page commands.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        state: &ViewState,
        total: usize,
        out: &mut Vec<Command>,
    ) {
        let pages = total.div_ceil(state.page_size.max(1)).max(1);
        let page = state.page.min(pages - 1);
        ui.horizontal(|ui| {
            egui::ComboBox::from_label("rows per page")
                .selected_text(state.page_size.to_string())
                .show_ui(ui, |ui| {
                    for n in PAGE_SIZES {
                        if ui
                            .selectable_label(state.page_size == n, n.to_string())
                            .clicked()
                        {
                            out.push(Command::SetPageSize(n));
                        }
                    }
                });
            if ui
                .add_enabled(page > 0, egui::Button::new("First"))
                .clicked()
            {
                out.push(Command::SetPage(0));
            }
            if ui
                .add_enabled(page > 0, egui::Button::new("Previous"))
                .clicked()
            {
                out.push(Command::SetPage(page - 1));
            }
            ui.label(format!(
                "Page {} of {}",
                grouped((page + 1) as f64, 0),
                grouped(pages as f64, 0)
            ));
            if ui
                .add_enabled(page + 1 < pages, egui::Button::new("Next"))
                .clicked()
            {
                out.push(Command::SetPage(page + 1));
            }
            if ui
                .add_enabled(page + 1 < pages, egui::Button::new("Last"))
                .clicked()
            {
                out.push(Command::SetPage(pages - 1));
            }
            let label = ui.label("Go to page");
            let r = ui
                .add(egui::TextEdit::singleline(&mut self.jump_text).desired_width(50.0))
                .labelled_by(label.id);
            if (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)))
                || ui.button("Go").clicked()
            {
                if let Ok(n) = self.jump_text.trim().parse::<usize>() {
                    out.push(Command::SetPage(n.clamp(1, pages) - 1));
                }
                self.jump_text.clear();
            }
        });
    }
}
