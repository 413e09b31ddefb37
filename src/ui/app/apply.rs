//! Applying commands: the view state takes each first (its only writer), then the document on
//! screen takes its own (the profile: show a rank, compare, copy), then the app does what is
//! beyond both: open, dialogs, preferences.

use std::path::{Path, PathBuf};

use super::MemsightApp;
use crate::ui::command::{Command, PickKind};
use crate::ui::file_browser::{PickOutcome, Purpose};
use crate::ui::jobs::{JobKey, Place, Poll};
use crate::ui::profile::ProfileDocument;

/// The job that shows a native open dialog (it blocks).
pub const DIALOG_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("dialog", "a file dialog", "文件对话框");

/// How many documents Back keeps.
const BACK_KEPT: usize = 8;

impl MemsightApp {
    /// Applies one command: the view state takes it first ([`ViewState::apply`](crate::ui::state::ViewState::apply), its only
    /// writer), then the app does what it asks beyond the state (open, load, compare, copy).
    pub fn apply(&mut self, cmd: Command) {
        // A command that means nothing to the document on screen changes nothing at all.
        if self.document.refuses(&cmd) {
            return;
        }
        // Open resets the choices: Back restores the ones made in the document it replaces.
        let before_open = matches!(cmd, Command::Open(_)).then(|| self.state.clone());
        self.state.apply(&cmd);
        // The document on screen handles its own commands.
        if self.with_document(|doc, cx| doc.handle(&cmd, cx)) {
            return;
        }
        match cmd {
            Command::Open(path) => {
                self.open_now(path, before_open.unwrap_or_else(|| self.state.clone()));
            }
            Command::Back => {
                if let Some((doc, state)) = self.back.pop() {
                    self.notice = None;
                    self.document = doc;
                    self.state = state;
                }
            }
            Command::Pick(kind) => self.pick(kind),
            Command::SetLanguage(lang) => self.prefs.lang = lang,
            Command::SetReopenLast(on) => self.prefs.reopen_last = on,
            Command::SetTheme(theme) => {
                self.prefs.theme = theme;
                if let Some(ctx) = &self.ctx {
                    ctx.set_theme(theme.egui());
                }
            }
            Command::ShowHelp(open) => self.help_open = open,
            Command::ShowPathDialog(open) => {
                self.path_dialog_focus = open && !self.path_dialog_open;
                self.path_dialog_open = open;
            }
            Command::DismissFailures => self.failures.clear(),
            Command::SaveChart => self.request_chart_shot(),
            _ => {}
        }
    }

    /// Opens `path` as the document a registered opener says it is, else as a profile (in
    /// the profile on screen, so its loaded ranks stay, or in a new one).
    pub(super) fn open_now(&mut self, path: PathBuf, before: crate::ui::state::ViewState) {
        self.notice = None; // about what was on screen before
        self.path_dialog_open = false;
        // A snapshot or a cluster summary opens as a document of its own.
        if let Some(doc) = crate::ui::documents::open(&path, &mut self.jobs) {
            self.replace_document(doc, before);
            self.prefs.remember(&path);
            return;
        }
        if self.profile_doc().is_none() {
            self.replace_document(Box::new(ProfileDocument::default()), before);
        }
        self.with_profile(|p, cx| p.open(path, cx));
    }

    /// Shows `doc` in place of the document on screen, which Back returns to with `before`
    /// (the choices made in it) unless it is a profile (at most [`BACK_KEPT`] are kept).
    fn replace_document(
        &mut self,
        doc: Box<dyn crate::ui::document::Document>,
        before: crate::ui::state::ViewState,
    ) {
        let old = std::mem::replace(&mut self.document, doc);
        if old.kind() != "profile" {
            if self.back.len() == BACK_KEPT {
                self.back.remove(0);
            }
            self.back.push((old, before));
        }
    }

    /// The name of the document Back returns to (its file name), when there is one.
    pub(super) fn back_name(&self) -> Option<String> {
        let (doc, _) = self.back.last()?;
        let path = doc.path()?;
        Some(path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        ))
    }

    pub(super) fn pick(&mut self, kind: PickKind) {
        // File ▸ Compare with… on a document compares with what that document compares with
        // (a snapshot with a snapshot file, a summary with a summary file).
        let kind = match kind {
            PickKind::Baseline => self.document.compared_with().unwrap_or(kind),
            PickKind::File(p) if *p == crate::ui::baseline::PICK_FILE => {
                self.document.compared_with().unwrap_or(kind)
            }
            _ => kind,
        };
        let picker = std::sync::Arc::clone(&self.picker);
        let job = self
            .jobs
            .run(JobKey::new(DIALOG_JOB), Place::Thread, move |_| {
                picker(kind)
            });
        match &job.start_error {
            Some(_) => self.show_browser(Purpose::Open(kind)),
            None => self.dialog = Some((kind, job)),
        }
    }

    /// Shows the in-app browser, starting beside what is open (to open) or in the user's
    /// Documents (to save).
    pub(super) fn show_browser(&mut self, purpose: Purpose) {
        let start = match purpose {
            Purpose::Open(_) => self
                .path()
                .and_then(|p| if p.is_dir() { Some(p) } else { p.parent() })
                .map(Path::to_path_buf),
            Purpose::Save | Purpose::SaveChart => crate::ui::file_browser::save_folder(),
        };
        let t = self.tr();
        self.browser.show_for(purpose, start.as_deref(), t);
    }

    /// The native dialog's answer: a path to open, or the in-app browser when it could not be
    /// shown.
    pub(super) fn poll_dialog(&mut self) -> Option<(PickKind, PathBuf)> {
        let (kind, job) = self.dialog.as_ref()?;
        let kind = *kind;
        match job.poll() {
            Poll::Pending => None,
            Poll::Finished | Poll::Failed(_) => {
                self.dialog = None;
                None
            }
            Poll::Msg(outcome) => {
                self.dialog = None;
                match outcome {
                    PickOutcome::Picked(p) => Some((kind, p)),
                    PickOutcome::Cancelled => None,
                    PickOutcome::Unavailable => {
                        self.show_browser(Purpose::Open(kind));
                        None
                    }
                }
            }
        }
    }
}
