//! Applying commands: the view state takes each first (its only writer), then the app does
//! what is beyond it: open, load a rank (from the session or a job started for its key),
//! compare, copy, dialogs.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::MemsightApp;
use crate::ui::command::{Command, PickKind};
use crate::ui::file_browser::{PickOutcome, Purpose};
use crate::ui::jobs::{JobKey, Place, Poll};
use crate::ui::loading::start_load;
use crate::ui::panes::align_offset;
use crate::ui::panes::details_table::DetailsPane;

/// The job that shows a native open dialog (it blocks).
pub const DIALOG_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("dialog", "a file dialog", "文件对话框");

impl MemsightApp {
    /// Applies one command: the view state takes it first ([`ViewState::apply`](crate::ui::state::ViewState::apply), its only
    /// writer), then the app does what it asks beyond the state (open, load, compare, copy).
    pub fn apply(&mut self, cmd: Command) {
        // A rank the profile does not have is no change at all.
        if let Command::SelectRank(rank) = cmd
            && self
                .session
                .profile
                .as_ref()
                .is_none_or(|p| rank >= p.ranks.len())
        {
            return;
        }
        let source_before = self.state.source;
        self.state.apply(&cmd);
        // The document on screen handles its own commands.
        if let Some(doc) = &mut self.document
            && doc.handle(&cmd, &mut self.jobs)
        {
            return;
        }
        match cmd {
            Command::Open(path) => self.open_now(path),
            Command::Pick(kind) => self.pick(kind),
            Command::SelectRank(_) => self.show_rank(),
            Command::SetSource(_) if self.state.source != source_before => {
                // The same rank, read from the other files: loaded (or found loaded) again, and
                // what is beside it (overview, baseline) read from them too.
                self.show_rank();
                if let Some(p) = self.session.profile.clone()
                    && self.overview.is_some()
                {
                    self.overview = Some(crate::ui::overview::Overview::start(
                        &mut self.jobs,
                        p,
                        self.state.source,
                    ));
                }
                if let Some(source) = self.baseline.source() {
                    self.load_baseline(source);
                }
            }
            Command::CompareWith(source) => {
                self.load_baseline(source);
                // A comparison is shown on the rank, not behind the cluster overview.
                self.apply(Command::ShowOverview(false));
            }
            Command::CompareRank(rank) => {
                if let Some(path) = self.session.path.clone() {
                    self.apply(Command::CompareWith(crate::ui::baseline::BaselineSource {
                        path,
                        rank,
                    }));
                }
            }
            Command::StopCompare => self.baseline.clear(),
            Command::CopyDiff => {
                if let (Some(view), Some(ctx)) = (self.view(), self.ctx.clone())
                    && let Some(diff) = self.baseline.diff(&mut self.jobs, &view)
                {
                    let t = self.tr();
                    let rows = crate::ui::panes::diff::diff_rows(&diff, &self.state);
                    ctx.copy_text(crate::ui::panes::diff::diff_tsv(t, &diff, &rows));
                }
            }
            Command::RetryOverview => {
                if let Some(p) = self.session.profile.clone()
                    && self.overview.is_some()
                {
                    self.overview = Some(crate::ui::overview::Overview::start(
                        &mut self.jobs,
                        p,
                        self.state.source,
                    ));
                }
            }
            Command::CancelOverview => {
                if let Some(o) = &mut self.overview {
                    o.cancel();
                }
            }
            Command::CancelLoad => {
                if let Some(l) = &self.loading {
                    l.job.control().cancel();
                }
            }
            Command::Retry => self.show_rank(),
            Command::Copy | Command::CopyAll => {
                if let Some(view) = self.view() {
                    let all = cmd == Command::CopyAll;
                    let base = self.baseline.loaded.as_ref().map(|b| {
                        let offset = align_offset(&view, &b.view, self.state.align_step);
                        (Arc::clone(&b.view), offset)
                    });
                    let (t, ctx) = (self.tr(), self.ctx.clone());
                    let compare = base.as_ref().map(|(v, o)| (v, *o));
                    let state = &self.state;
                    if let Some(d) = self.panes.get_mut::<DetailsPane>() {
                        d.copy(ctx.as_ref(), &view, state, compare, all, t);
                    }
                }
            }
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

    /// Starts loading the baseline `source` with the Data switch's files, from the session
    /// when it is a rank of the open profile that is loaded already.
    pub(super) fn load_baseline(&mut self, source: crate::ui::baseline::BaselineSource) {
        let same = self.session.path.as_ref() == Some(&source.path);
        let profile = self.session.profile.clone().filter(|_| same);
        let key = profile
            .as_ref()
            .map(|_| self.session.key(source.rank, self.state.source));
        let cached = key.and_then(|k| self.session.get(k));
        self.baseline.load(
            &mut self.jobs,
            crate::ui::baseline::BaselineRequest {
                source,
                profile,
                files: self.state.source,
                key,
                cached,
            },
        );
    }

    /// A baseline a job loaded from the open profile goes into the session under its key: it
    /// counts in the memory bound, and showing that rank later needs no load.
    pub(super) fn cache_baseline(&mut self) {
        if let Some(b) = &self.baseline.loaded
            && let Some(key) = b.key
            && key.profile == self.session.profile_id()
            && self.session.peek(key).is_none()
        {
            self.session.insert(key, Arc::clone(&b.view));
        }
    }

    pub(super) fn open_now(&mut self, path: PathBuf) {
        self.loading = None;
        self.overview = None; // dropping it cancels its job
        self.error = None;
        self.notice = None; // about what was on screen before
        self.path_dialog_open = false;
        // A snapshot or a cluster summary opens as a document of its own.
        self.document = crate::ui::documents::open(&path, &mut self.jobs);
        // Looked up once here, not in every frame (it reads the disk).
        self.showing_demo = self.document.is_none() && crate::cli::is_demo(&path);
        if self.document.is_some() {
            self.prefs.remember(&path);
            return;
        }
        self.opening = Some(path.clone());
        self.session.open(path);
        self.show_rank();
    }

    /// Puts the state's rank (from the state's files) on screen: at once when the session has
    /// it, else by a load job started for exactly that key (a load of another key is
    /// cancelled). Before discovery has finished, discovery starts again with the new choice.
    pub(super) fn show_rank(&mut self) {
        let Some(path) = self.session.path.clone() else {
            return;
        };
        self.error = None;
        let key = self.session.key(self.state.rank, self.state.source);
        if self.session.get(key).is_some() {
            self.loading = None; // dropping the handle cancels a load of another rank
            return;
        }
        self.loads_started += 1;
        let profile = self.session.profile.clone();
        self.loading = Some(start_load(&mut self.jobs, path, profile, key));
    }

    pub(super) fn pick(&mut self, kind: PickKind) {
        // File ▸ Compare with… on a document compares with what that document compares with
        // (a snapshot with a snapshot file, a summary with a summary file).
        let kind = match (kind, &self.document) {
            (PickKind::Baseline, Some(doc)) => doc.compared_with().unwrap_or(kind),
            _ => kind,
        };
        let picker = self.picker;
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
