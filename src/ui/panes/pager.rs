//! The pager under a table: rows per page, first / previous / next / last and go to page.

use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::state::{PAGE_SIZES, TableId, ViewState};

/// A pager's own state: the text of its "go to page" box, and whether it held no valid page.
#[derive(Default)]
pub struct Pager {
    jump_text: String,
    bad_jump: bool,
}

impl Pager {
    /// The pager for `total` rows of `table` at its page and the page size; pushes page
    /// commands. It also takes ← and → (when no text field has the focus): the pager drawn is
    /// the table on screen's, and it knows where the last page is.
    pub fn ui(
        &mut self,
        ui: &mut egui::Ui,
        t: &Tr,
        state: &ViewState,
        table: TableId,
        total: usize,
        out: &mut Vec<Command>,
    ) {
        let pages = total.div_ceil(state.page_size.max(1)).max(1);
        let page = state.page(table).min(pages - 1);
        let typing = ui.ctx().memory(|m| m.focused().is_some());
        let (left, right) = ui.input_mut(|i| {
            (
                !typing && i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowLeft),
                !typing && i.consume_key(egui::Modifiers::NONE, egui::Key::ArrowRight),
            )
        });
        if left && page > 0 {
            out.push(Command::SetPage(table, page - 1));
        }
        if right && page + 1 < pages {
            out.push(Command::SetPage(table, page + 1));
        }
        ui.horizontal(|ui| {
            egui::ComboBox::from_label(t.rows_per_page)
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
                .add_enabled(page > 0, egui::Button::new(t.first))
                .clicked()
            {
                out.push(Command::SetPage(table, 0));
            }
            if ui
                .add_enabled(page > 0, egui::Button::new(t.previous))
                .clicked()
            {
                out.push(Command::SetPage(table, page - 1));
            }
            // A fixed width, so that Next and Last stay where they are as the count changes.
            let text = (t.page_of)(&grouped((page + 1) as f64, 0), &grouped(pages as f64, 0));
            let h = ui.spacing().interact_size.y;
            ui.add_sized([150.0, h], egui::Label::new(text));
            if ui
                .add_enabled(page + 1 < pages, egui::Button::new(t.next))
                .clicked()
            {
                out.push(Command::SetPage(table, page + 1));
            }
            if ui
                .add_enabled(page + 1 < pages, egui::Button::new(t.last))
                .clicked()
            {
                out.push(Command::SetPage(table, pages - 1));
            }
            let label = ui.label(t.go_to_page);
            let mut edit = egui::TextEdit::singleline(&mut self.jump_text).desired_width(50.0);
            if self.bad_jump {
                edit = edit.text_color(ui.visuals().error_fg_color);
            }
            let r = ui.add(edit).labelled_by(label.id);
            if r.changed() {
                self.bad_jump = false;
            }
            if (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)))
                || ui.button(t.go).clicked()
            {
                // A number past either end goes to the first or last page; text that is not a
                // page number stays in the box, in red, with a hint.
                match self.jump_text.trim().replace(',', "").parse::<usize>() {
                    Ok(n) => {
                        out.push(Command::SetPage(table, n.clamp(1, pages) - 1));
                        self.jump_text.clear();
                        self.bad_jump = false;
                    }
                    Err(_) => self.bad_jump = true,
                }
            }
            if self.bad_jump {
                ui.colored_label(ui.visuals().error_fg_color, (t.bad_page)(pages));
            }
        });
    }
}
