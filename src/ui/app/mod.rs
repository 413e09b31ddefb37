//! The window: owns the session, the view state, the job runner, the preferences and the panes.
//! Split by job: [`apply`](MemsightApp::apply) and what it starts (`apply.rs`), a load's messages
//! (`load_events.rs`), one frame's layout (`layout.rs`), Save chart as PNG (`chart_png.rs`), and
//! what tests and headless runs wait for (`hooks.rs`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::command::{Command, PickKind};
use super::document::Document;
use super::file_browser::{FileBrowser, PickOutcome, native_outcome};
use super::i18n::{Lang, Tr};
use super::jobs::{Job, Jobs};
use super::loading::Loading;
use super::panes::details_table::DetailsPane;
use super::panes::memory_chart::MemoryChart;
use super::panes::static_view::{StaticChart, StaticTable};
use super::panes::tab::BottomPanes;
use super::prefs::Prefs;
use super::session::{RankKey, Session};
use super::state::ViewState;
use crate::analysis::RankView;
use crate::ingest::Profile;

/// Shows an open dialog and says what the user chose; it blocks, so the app runs it as a job.
/// [`native_picker`] in the app; tests put in a picker of their own.
pub type Picker = fn(PickKind) -> PickOutcome;

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
            PickKind::Summary => dialog
                .set_title("memsight")
                .add_filter("memsight summary", &["db", "DB"])
                .pick_file(),
            PickKind::Snapshot => dialog
                .set_title("memsight")
                .add_filter("allocator snapshot", &["pickle", "pkl", "PICKLE", "PKL"])
                .pick_file(),
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
mod hooks;
mod layout;
mod load_events;

/// The app.
pub struct MemsightApp {
    /// The opened profile and its loaded ranks.
    pub session: Session,
    /// What the user chose (the rank on screen is its rank and source); changed only by
    /// [`ViewState::apply`], called from [`Self::apply`].
    state: ViewState,
    /// The last error (nothing could be loaded).
    pub error: Option<String>,
    /// Language, theme, recent paths.
    pub prefs: Prefs,
    /// The path being opened, added to the recent list once it proves to be a profile.
    opening: Option<PathBuf>,
    jobs: Jobs,
    loading: Option<Loading>,
    /// Set by [`MemsightApp::wait_for_first_look`]: the load's later messages wait in its
    /// channel until [`MemsightApp::release_load`], so a test can look at the first look.
    hold_load: bool,
    /// The other side of a comparison, when comparing.
    pub baseline: super::baseline::BaselineSlot,
    /// The cluster overview of the open profile (profiles with more than one rank).
    overview: Option<super::overview::Overview>,
    /// How many rank loads were started (a rank shown again from the session starts none).
    pub loads_started: usize,
    dialog: Option<(PickKind, Job<PickOutcome>)>,
    /// The in-app browser, for when no native dialog can be shown.
    pub browser: FileBrowser,
    /// The text of the path fields (start page, File menu).
    pub(crate) path_text: String,
    /// The keyboard help window is open.
    pub(crate) help_open: bool,
    /// The Open path… dialog is on screen.
    pub path_dialog_open: bool,
    /// Where the cluster overview drew each rank's bar last frame (tests click them).
    overview_bars: Vec<(usize, egui::Rect)>,
    /// The open path is the generated demo (its banner shows).
    showing_demo: bool,
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
    pub png_picker: fn() -> PickOutcome,
    /// A one-line message in the parameter bar (what Save chart did).
    pub(crate) notice: Option<String>,
    /// Background tasks that panicked, shown until dismissed.
    pub failures: Vec<super::jobs::JobFailure>,
    /// The CJK font in use (`Some(None)`: none found), once looked for.
    pub(crate) cjk_font: Option<Option<PathBuf>>,
    ctx: Option<egui::Context>,
    /// The memory chart pane.
    pub chart: MemoryChart,
    /// The views of the bottom pane (details, steps, call stacks, diff).
    pub(crate) panes: BottomPanes,
    /// The whole-window view on screen in place of the profile (a snapshot, a folder of OOM
    /// bundles, a cluster summary: [`super::document`]), when one was opened.
    document: Option<Box<dyn Document>>,
    /// The static graph's chart pane.
    pub static_chart: StaticChart,
    /// The static graph's op table pane.
    pub static_table: StaticTable,
    title: String,
    /// Self-timing (`MEMSIGHT_BENCH`), when asked for.
    pub(crate) bench: Option<super::bench::Bench>,
    /// The open dialog ([`native_picker`] unless replaced).
    pub picker: Picker,
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
            session: Session::default(),
            state: ViewState::default(),
            error: None,
            prefs,
            opening: None,
            jobs,
            loading: None,
            hold_load: false,
            overview: None,
            baseline: Default::default(),
            loads_started: 0,
            dialog: None,
            browser: FileBrowser::default(),
            path_text: String::new(),
            help_open: false,
            path_dialog_open: false,
            saved_prefs: None,
            showing_demo: false,
            overview_bars: Vec::new(),
            path_dialog_focus: false,
            chart_png: None,
            png_dialog: None,
            png_picker: super::chart_image::native_png_picker,
            notice: None,
            failures: Vec::new(),
            cjk_font: None,
            ctx,
            chart: MemoryChart::default(),
            panes: BottomPanes::default(),
            document: None,
            static_chart: StaticChart::default(),
            static_table: StaticTable::default(),
            title: String::new(),
            bench: None,
            picker: native_picker,
        };
        if let Some(p) = path {
            app.apply(Command::Open(p));
        }
        app
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
        self.current()
            .and_then(|k| self.session.peek(k))
            .map(Arc::clone)
    }

    /// The key of the rank on screen: the state's rank and source in the open profile, once
    /// the session has it (its first look included). Derived, never stored.
    pub fn current(&self) -> Option<RankKey> {
        if self.document.is_some() {
            return None;
        }
        let key = self.session.key(self.state.rank, self.state.source);
        self.session.peek(key).map(|_| key)
    }

    /// The document on screen as a `T` ([`super::document`]: a snapshot, a folder of OOM
    /// bundles, a summary), when it is one.
    pub fn document<T: Document + 'static>(&self) -> Option<&T> {
        (**self.document.as_ref()?).as_any().downcast_ref()
    }

    /// The same, mutable.
    pub fn document_mut<T: Document + 'static>(&mut self) -> Option<&mut T> {
        (**self.document.as_mut()?).as_any_mut().downcast_mut()
    }

    /// The kind of the document on screen (`"snapshot"`, …); `None` while a profile is.
    pub fn document_kind(&self) -> Option<&'static str> {
        self.document.as_ref().map(|d| d.kind())
    }

    /// The details tab (its tables, their copy and export).
    pub fn details(&self) -> &DetailsPane {
        self.panes
            .get::<DetailsPane>()
            .expect("the details pane is always registered")
    }

    /// The same, mutable.
    pub fn details_mut(&mut self) -> &mut DetailsPane {
        self.panes
            .get_mut::<DetailsPane>()
            .expect("the details pane is always registered")
    }

    /// The opened path.
    pub fn path(&self) -> Option<&Path> {
        self.session.path.as_deref()
    }

    /// The opened profile, once discovered.
    pub fn profile(&self) -> Option<&Arc<Profile>> {
        self.session.profile.as_ref()
    }

    /// The job runner (tests look at what runs).
    pub fn jobs(&self) -> &Jobs {
        &self.jobs
    }

    /// The job runner, to start work on (tests inject jobs through it).
    pub fn jobs_mut(&mut self) -> &mut Jobs {
        &mut self.jobs
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
