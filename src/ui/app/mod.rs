//! The window: owns the document on screen ([`super::document`]: the profile, a snapshot, …),
//! the view state, the job runner and the preferences. Split by job:
//! [`apply`](MemsightApp::apply) and what it starts (`apply.rs`), one frame's layout
//! (`layout.rs`), Save chart as PNG (`chart_png.rs`), and the test-support methods tests and
//! headless runs reach the app through (`hooks.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::command::{Command, PickKind};
use super::document::{DocCx, DocEvent, Document};
use super::file_browser::{FileBrowser, PickOutcome, SavePicker, native_outcome};
use super::i18n::{Lang, Tr};
use super::jobs::{Job, Jobs};
use super::prefs::Prefs;
use super::profile::ProfileDocument;
use super::session::RankKey;
use super::state::ViewState;
use crate::analysis::RankView;
use crate::ingest::Profile;

/// Shows an open dialog and says what the user chose; it blocks, so the app runs it as a job.
/// [`native_picker`] in the app; tests put in a picker of their own (a closure, so that tests
/// running side by side each answer with their own file rather than through a shared static).
pub type Picker = Arc<dyn Fn(PickKind) -> PickOutcome + Send + Sync>;

/// The native dialog (rfd, through the XDG desktop portal on Linux); `Unavailable` when it could
/// not be shown (the app then shows its own browser).
pub fn native_picker(kind: PickKind) -> PickOutcome {
    native_outcome(|| {
        let dialog = rfd::FileDialog::new();
        // GTK's filters are case-sensitive: list each extension in both cases.
        let extensions: Vec<String> = crate::ui::file_browser::OPENABLE_EXTENSIONS
            .iter()
            .flat_map(|e| [e.to_string(), e.to_uppercase()])
            .collect();
        match kind {
            PickKind::Folder | PickKind::Baseline => dialog.set_title("memsight").pick_folder(),
            PickKind::File(pick) => {
                let (name, extensions) = pick.filter;
                let both: Vec<String> = extensions
                    .iter()
                    .flat_map(|e| [e.to_string(), e.to_uppercase()])
                    .collect();
                dialog
                    .set_title("memsight")
                    .add_filter(name, &both)
                    .pick_file()
            }
            PickKind::Database => dialog
                .set_title("memsight")
                .add_filter(
                    "Profiler DB, PyTorch trace, msMemScope dump, allocator snapshot",
                    &extensions,
                )
                .pick_file(),
        }
    })
}

mod apply;
mod chart_png;
pub use chart_png::NO_CHART;
mod hooks;
mod layout;

/// The app.
pub struct MemsightApp {
    /// What the user chose (the rank on screen is its rank and source); changed only by
    /// [`ViewState::apply`], called from [`Self::apply`].
    state: ViewState,
    /// Language, theme, recent paths.
    pub(crate) prefs: Prefs,
    jobs: Jobs,
    dialog: Option<(PickKind, Job<PickOutcome>)>,
    /// The in-app browser, for when no native dialog can be shown.
    pub(crate) browser: FileBrowser,
    /// The text of the path fields (start page, File menu).
    pub(crate) path_text: String,
    /// The keyboard help window is open.
    pub(crate) help_open: bool,
    /// The Open path… dialog is on screen.
    pub(crate) path_dialog_open: bool,
    /// The preferences as last written to storage (`None`: never written or loaded).
    saved_prefs: Option<Prefs>,
    /// The Open path… dialog's field takes the keyboard focus in the next frame.
    path_dialog_focus: bool,
    /// The chart's report as PNG bytes, waiting for a file name.
    chart_png: Option<Vec<u8>>,
    /// The native save dialog of Save chart as PNG.
    png_dialog: Option<Job<PickOutcome>>,
    /// The save dialog for Save chart as PNG ([`super::chart_image::native_png_picker`] unless
    /// replaced).
    pub(crate) png_picker: SavePicker,
    /// A one-line message in the parameter bar (what Save chart did).
    pub(crate) notice: Option<String>,
    /// Background tasks that panicked, shown until dismissed.
    pub(crate) failures: Vec<super::jobs::JobFailure>,
    /// The CJK font in use (`Some(None)`: none found), once looked for.
    pub(crate) cjk_font: Option<Option<PathBuf>>,
    ctx: Option<egui::Context>,
    /// The whole-window view on screen ([`super::document`]): the profile (the start page
    /// before anything is open), a snapshot, a folder of OOM bundles, a cluster summary.
    document: Box<dyn Document>,
    /// The documents shown before with the choices made in them, newest last, that Back
    /// returns to as they were (a summary,
    /// a snapshot, an OOM folder; a profile is not kept: it may hold gigabytes of ranks).
    back: Vec<(Box<dyn Document>, ViewState)>,
    title: String,
    /// Self-timing (`MEMSIGHT_BENCH`), when asked for.
    pub(crate) bench: Option<super::bench::Bench>,
    /// The open dialog ([`native_picker`] unless replaced).
    pub(crate) picker: Picker,
}

impl MemsightApp {
    /// An app in English that starts loading `path` (if any), with a recent list. `ctx` lets
    /// jobs wake the UI.
    pub fn new(
        path: Option<PathBuf>,
        recent: Vec<String>,
        ctx: Option<egui::Context>,
    ) -> MemsightApp {
        let prefs = Prefs {
            recent,
            ..Prefs::default()
        };
        MemsightApp::with_prefs(path, prefs, ctx)
    }

    /// An app with remembered preferences that starts loading `path` (if any).
    pub fn with_prefs(
        path: Option<PathBuf>,
        prefs: Prefs,
        ctx: Option<egui::Context>,
    ) -> MemsightApp {
        let jobs = Jobs::default();
        if let Some(c) = &ctx {
            jobs.set_context(c);
        }
        let mut app = MemsightApp {
            state: ViewState::default(),
            prefs,
            jobs,
            dialog: None,
            browser: FileBrowser::default(),
            path_text: String::new(),
            help_open: false,
            path_dialog_open: false,
            saved_prefs: None,
            path_dialog_focus: false,
            chart_png: None,
            png_dialog: None,
            png_picker: Arc::new(super::chart_image::native_png_picker),
            notice: None,
            failures: Vec::new(),
            cjk_font: None,
            ctx,
            document: Box::new(ProfileDocument::default()),
            back: Vec::new(),
            title: String::new(),
            bench: None,
            picker: Arc::new(native_picker),
        };
        if let Some(p) = path {
            app.apply(Command::Open(p));
        }
        app
    }

    /// Takes the preferences the last session stored, for an app made before its window (with
    /// the defaults, so that a path given on the command line loads while the window is made):
    /// what it remembered meanwhile (a document it opened) stays first in the recent list.
    pub fn adopt_stored_prefs(&mut self, stored: Prefs) {
        let opened = std::mem::replace(&mut self.prefs, stored).recent;
        for path in opened.iter().rev() {
            self.prefs.remember(Path::new(path));
        }
    }

    /// The UI's strings, in the chosen language.
    pub fn tr(&self) -> &'static Tr {
        self.prefs.lang.tr()
    }

    /// Recently opened paths, newest first.
    pub fn recent(&self) -> &[String] {
        &self.prefs.recent
    }

    /// Switches the UI language.
    pub fn set_language(&mut self, lang: Lang) {
        self.apply(Command::SetLanguage(lang));
    }

    /// What the user has chosen.
    pub fn view_state(&self) -> &ViewState {
        &self.state
    }

    /// The rank on screen.
    pub fn view(&self) -> Option<Arc<RankView>> {
        self.profile_doc()?.view(&self.state)
    }

    /// The key of the rank on screen: the state's rank and source in the open profile, once
    /// the session has it (its first look included). Derived, never stored.
    pub fn current(&self) -> Option<RankKey> {
        self.profile_doc()?.current(&self.state)
    }

    /// The document on screen as a `T` ([`super::document`]: the profile, a snapshot, a folder
    /// of OOM bundles, a summary), when it is one.
    pub fn document<T: Document + 'static>(&self) -> Option<&T> {
        (*self.document).as_any().downcast_ref()
    }

    /// The same, mutable.
    pub fn document_mut<T: Document + 'static>(&mut self) -> Option<&mut T> {
        (*self.document).as_any_mut().downcast_mut()
    }

    /// The kind of the document on screen (`"profile"`, `"snapshot"`, …).
    pub fn document_kind(&self) -> &'static str {
        self.document.kind()
    }

    /// The profile on screen (or the start page), when the document is one.
    pub(crate) fn profile_doc(&self) -> Option<&ProfileDocument> {
        self.document::<ProfileDocument>()
    }

    /// The opened path: the document's.
    pub fn path(&self) -> Option<&Path> {
        self.document.path()
    }

    /// The opened profile, once discovered.
    pub fn profile(&self) -> Option<&Arc<Profile>> {
        self.profile_doc()?.session.profile.as_ref()
    }

    /// The job runner (tests look at what runs).
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// The job runner, to start work on (tests inject jobs through it).
    pub fn jobs_mut(&mut self) -> &mut Jobs {
        &mut self.jobs
    }

    /// Runs `f` on the document on screen with what it draws and asks through, then does what
    /// it asked: its events, then its commands (and draws again, so that what was drawn before
    /// them, such as the top bar, shows them).
    pub(crate) fn with_document<R>(
        &mut self,
        f: impl FnOnce(&mut dyn Document, &mut DocCx<'_>) -> R,
    ) -> R {
        let (mut out, mut events) = (Vec::new(), Vec::new());
        let result = {
            let mut cx = DocCx {
                t: self.prefs.lang.tr(),
                jobs: &mut self.jobs,
                state: &self.state,
                out: &mut out,
                path_text: &mut self.path_text,
                ctx: self.ctx.as_ref(),
                events: &mut events,
            };
            f(&mut *self.document, &mut cx)
        };
        self.take_events(events);
        if !out.is_empty()
            && let Some(ctx) = &self.ctx
        {
            ctx.request_repaint();
        }
        for cmd in out {
            self.apply(cmd);
        }
        result
    }

    /// The same on the profile, when it is the document on screen.
    pub(crate) fn with_profile<R>(
        &mut self,
        f: impl FnOnce(&mut ProfileDocument, &mut DocCx<'_>) -> R,
    ) -> Option<R> {
        self.with_document(|doc, cx| {
            let profile = doc.as_any_mut().downcast_mut::<ProfileDocument>()?;
            Some(f(profile, cx))
        })
    }

    /// Does what a document asked of the app.
    pub(crate) fn take_events(&mut self, events: Vec<DocEvent>) {
        for event in events {
            match event {
                DocEvent::Opened(path) => self.prefs.remember(&path),
                DocEvent::Replace(doc) => self.document = doc,
                DocEvent::AskSavePath => self.show_browser(super::file_browser::Purpose::Save),
            }
        }
    }

    /// Opens a folder or `.db`, replacing what is shown.
    pub fn open(&mut self, path: PathBuf) {
        self.apply(Command::Open(path));
    }

    /// Shows rank `rank` of the open profile.
    pub fn select_rank(&mut self, rank: usize) {
        self.apply(Command::SelectRank(rank));
    }

    /// Writes the preferences (language, theme, recent folders, reopen) to `storage` as soon
    /// as they change, not only at exit: a crash then loses nothing the user set. True when it
    /// wrote.
    pub fn save_prefs_if_changed(&mut self, storage: &mut dyn eframe::Storage) -> bool {
        if self.saved_prefs.as_ref() == Some(&self.prefs) {
            return false;
        }
        self.prefs.save(storage);
        storage.flush();
        self.saved_prefs = Some(self.prefs.clone());
        true
    }
}

impl eframe::App for MemsightApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if let Some(bench) = &mut self.bench {
            bench.record_cpu(frame.info().cpu_usage);
        }
        self.ui_root(ui);
        if let Some(storage) = frame.storage_mut() {
            self.save_prefs_if_changed(storage);
        }
    }

    /// The panel colour: the panels themselves are unfilled, so the clear is their background.
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.prefs.save(storage);
    }
}
