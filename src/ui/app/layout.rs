//! One frame: poll the document's background work, turn input into commands and apply them,
//! lay out the top bar and the document on screen, and apply what they asked.

use std::path::PathBuf;

use egui::{Key, Modifiers};

use super::MemsightApp;
use crate::ui::command::{Command, PickKind};
use crate::ui::document::panel_frames;
use crate::ui::file_browser::Purpose;
use crate::ui::i18n::Tr;

impl MemsightApp {
    /// The whole window, drawn into `ui` (eframe's root, or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let frame_started = std::time::Instant::now();
        let extent = self.document.chart_extent(&self.state);
        if let Some(bench) = &mut self.bench {
            let (done, window) = bench.before_frame(extent);
            if done {
                eprintln!("{}", bench.report());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            // Every frame once the curves are up (the motion); before, the load's messages wake
            // the window, as they do without the bench (a frame drawn meanwhile took a core
            // from the load under software rendering).
            if extent.is_some() {
                ui.ctx().request_repaint();
            }
            if let Some(range) = window {
                let mut out = Vec::new();
                self.document.set_chart_range(range, &mut out);
                for cmd in out {
                    self.apply(cmd);
                }
            }
        }
        self.ui_frame(ui);
        if let Some(bench) = &mut self.bench {
            bench.after_frame(frame_started);
        }
    }

    pub(super) fn ui_frame(&mut self, ui: &mut egui::Ui) {
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
            self.jobs.set_context(ui.ctx());
            ui.ctx().set_theme(self.prefs.theme.egui());
        }
        if self.cjk_font.is_none() {
            self.cjk_font = Some(crate::ui::fonts::install_fonts(ui.ctx()));
        }
        let t = self.tr();
        self.poll_background(ui);
        let mut out: Vec<Command> = Vec::new();
        self.input_commands(ui, &mut out);
        self.update_title(ui);

        let (side, _) = panel_frames(ui.style());
        let back = self.back_name();
        egui::Panel::top("memsight_top").frame(side).show(ui, |ui| {
            crate::ui::top_bar::menu_ui(
                ui,
                t,
                &self.prefs,
                self.cjk_font.as_ref().is_some_and(Option::is_none),
                crate::ui::top_bar::Status {
                    notice: self.notice.as_deref(),
                    progress: self.document.progress(),
                    back: back.as_deref(),
                },
                &mut out,
            );
            failures_ui(ui, t, &self.failures, &mut out);
            // The document's own rows: the profile's demo banner and parameter bar.
            self.with_document(|doc, cx| doc.top_ui(ui, cx));
        });
        // What the menus, the parameter bar and the shortcuts asked for shows in this frame's
        // panes already; the panes' own commands apply after them.
        let asked = !out.is_empty();
        for cmd in out.drain(..) {
            self.apply(cmd);
        }
        if asked {
            ui.ctx().request_repaint();
        }
        // The document draws its panels itself (the profile has side and bottom ones).
        self.with_document(|doc, cx| doc.ui(ui, cx));
        if self.help_open {
            crate::ui::top_bar::help_window(ui.ctx(), t, &mut out);
        }
        if self.path_dialog_open {
            let focus = std::mem::take(&mut self.path_dialog_focus);
            crate::ui::top_bar::path_dialog(ui.ctx(), t, &mut self.path_text, focus, &mut out);
        }
        if !out.is_empty() {
            for cmd in out {
                self.apply(cmd);
            }
            ui.ctx().request_repaint();
        }
    }

    /// What the background brought since the last frame: the document's (a load's messages,
    /// the overview's summaries, the baseline), the chart PNG, failed jobs.
    fn poll_background(&mut self, ui: &egui::Ui) {
        if self.with_document(|doc, cx| doc.poll(cx)) {
            ui.ctx().request_repaint();
        }
        self.poll_chart_png();
        self.failures.extend(self.jobs.take_failures());
    }

    /// The commands of this frame's input outside the panes: a dialog's answer, a dropped
    /// file, the shortcuts, the in-app browser's choice.
    fn input_commands(&mut self, ui: &egui::Ui, out: &mut Vec<Command>) {
        if let Some((kind, p)) = self.poll_dialog() {
            out.push(opened(kind, p));
        }
        let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        // A snapshot and a profile of its run dropped together open joined.
        if let Some(together) = crate::ui::panes::snapshot_join::opened_together(&dropped) {
            out.extend(together);
        } else if let Some(p) = dropped.into_iter().next() {
            // Shift while dropping: compare with it instead of opening it.
            let kind = if ui.ctx().input(|i| i.modifiers.shift) {
                PickKind::Baseline
            } else {
                PickKind::Folder
            };
            out.push(opened(kind, p));
        }
        shortcuts(ui, self.help_open, out);
        if let Some((purpose, path)) = self.browser.ui(ui.ctx()) {
            match purpose {
                Purpose::Open(kind) => out.push(opened(kind, path)),
                Purpose::SaveChart => self.write_chart_png(&path),
                Purpose::Save => self.with_document(|doc, cx| doc.save_to(path, cx)),
            }
        }
    }

    pub(super) fn update_title(&mut self, ui: &egui::Ui) {
        let title = match self.path() {
            Some(p) => format!("memsight — {}", p.display()),
            None => "memsight".to_string(),
        };
        if title != self.title {
            ui.ctx()
                .send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }
}

/// The background tasks that panicked, one line each, with Dismiss.
fn failures_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    failures: &[crate::ui::jobs::JobFailure],
    out: &mut Vec<Command>,
) {
    if failures.is_empty() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.vertical(|ui| {
            for f in failures {
                let what = f.key.task_name(t);
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    (t.job_failed)(what, &f.message),
                );
            }
        });
        if ui.button(t.dismiss).clicked() {
            out.push(Command::DismissFailures);
        }
    });
}
/// Keyboard shortcuts as commands: Ctrl+O, Esc (closes the help when it is open), Ctrl+C (copy),
/// F1 (help), Ctrl+L (a path), Alt+← (back). ←/→ turn the pages of
/// the table on screen: its pager takes them, since it knows where the last page is.
fn shortcuts(ui: &egui::Ui, help_open: bool, out: &mut Vec<Command>) {
    let typing = ui.ctx().memory(|m| m.focused().is_some());
    let (open, esc, copy, help, path, back) = ui.ctx().input_mut(|i| {
        (
            i.consume_key(Modifiers::COMMAND, Key::O),
            i.key_pressed(Key::Escape),
            !typing && i.events.iter().any(|e| matches!(e, egui::Event::Copy)),
            i.consume_key(Modifiers::NONE, Key::F1),
            i.consume_key(Modifiers::COMMAND, Key::L),
            !typing && i.consume_key(Modifiers::ALT, Key::ArrowLeft),
        )
    });
    if back {
        out.push(Command::Back);
    }
    if help {
        out.push(Command::ShowHelp(true));
    }
    if path {
        out.push(Command::ShowPathDialog(true));
    }
    if open {
        out.push(Command::Pick(PickKind::Folder));
    }
    if esc {
        // Esc closes the shortcut help (as it closes any window), else resets the view.
        out.push(if help_open {
            Command::ShowHelp(false)
        } else {
            Command::ResetView
        });
    }
    if copy {
        out.push(Command::Copy);
    }
}
/// What a picked path means: a profile to open, or a baseline to compare with.
fn opened(kind: PickKind, path: PathBuf) -> Command {
    match kind {
        PickKind::Baseline => {
            Command::CompareWith(crate::ui::baseline::BaselineSource { path, rank: 0 })
        }
        PickKind::File(pick) => (pick.then)(path),
        PickKind::Folder | PickKind::Database => Command::Open(path),
    }
}
