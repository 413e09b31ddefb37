//! The window: owns the session, the view state, the job runner, the preferences and the panes;
//! lays the panes out each frame and applies the commands they push, in one place.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{Key, Modifiers};

use super::command::{Command, PickKind};
use super::file_browser::{FileBrowser, PickOutcome, Purpose, native_outcome};
use super::i18n::{Lang, Tr};
use super::jobs::{Job, JobKey, Jobs, Place, Poll};
use super::loading::{LoadMsg, Loading, start_load};
use super::panes::details_table::DetailsPane;
use super::panes::live::live_ui;
use super::panes::memory_chart::MemoryChart;
use super::panes::static_view::{StaticChart, StaticTable};
use super::panes::tab::BottomPanes;
use super::panes::warnings::warnings_window;
use super::panes::{Compare, PaneCx, align_offset};
use super::prefs::Prefs;
use super::session::{RankKey, Session};
use super::state::{TabId, ViewState};
use crate::analysis::RankView;
use crate::ingest::Profile;
use crate::model::TimeWindow;

/// Shows an open dialog and says what the user chose; it blocks, so the app runs it as a job.
/// [`native_picker`] in the app; tests put in a picker of their own.
pub type Picker = fn(PickKind) -> PickOutcome;

/// The native dialog (rfd, through the XDG desktop portal on Linux); `Unavailable` when it could
/// not be shown (the app then shows its own browser).
pub fn native_picker(kind: PickKind) -> PickOutcome {
    native_outcome(|| {
        let dialog = rfd::FileDialog::new();
        match kind {
            PickKind::Folder | PickKind::Baseline => dialog.set_title("memsight").pick_folder(),
            PickKind::Database => dialog
                .set_title("memsight")
                .add_filter(
                    "Profiler DB, allocator snapshot",
                    &["db", "DB", "pickle", "pkl", "PICKLE", "PKL"],
                )
                .pick_file(),
        }
    })
}

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
    pub path_text: String,
    /// The keyboard help window is open.
    pub help_open: bool,
    /// A screenshot asked for by Save chart as PNG, and the chart's place in it.
    shot: Option<(
        std::sync::mpsc::Receiver<Arc<egui::ColorImage>>,
        egui::Rect,
        f32,
    )>,
    /// The chart's pixels, waiting for a file name.
    chart_png: Option<egui::ColorImage>,
    /// The native save dialog of Save chart as PNG.
    png_dialog: Option<Job<PickOutcome>>,
    /// The save dialog for Save chart as PNG ([`super::chart_image::native_png_picker`] unless
    /// replaced).
    pub png_picker: fn() -> PickOutcome,
    /// A one-line message in the parameter bar (what Save chart did).
    pub notice: Option<String>,
    /// Background tasks that panicked, shown until dismissed.
    pub failures: Vec<super::jobs::JobFailure>,
    /// The CJK font in use (`Some(None)`: none found), once looked for.
    pub cjk_font: Option<Option<PathBuf>>,
    ctx: Option<egui::Context>,
    /// The memory chart pane.
    pub chart: MemoryChart,
    /// The views of the bottom pane (details, steps, call stacks, diff).
    pub panes: BottomPanes,
    /// The allocator snapshot on screen, when a `.pickle` was opened.
    pub snapshot: Option<super::panes::snapshot::SnapshotView>,
    /// The static graph's chart pane.
    pub static_chart: StaticChart,
    /// The static graph's op table pane.
    pub static_table: StaticTable,
    title: String,
    /// Self-timing (`MEMSIGHT_BENCH`), when asked for.
    pub bench: Option<super::bench::Bench>,
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
            shot: None,
            chart_png: None,
            png_dialog: None,
            png_picker: super::chart_image::native_png_picker,
            notice: None,
            failures: Vec::new(),
            cjk_font: None,
            ctx,
            chart: MemoryChart::default(),
            panes: BottomPanes::default(),
            snapshot: None,
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
        if self.snapshot.is_some() {
            return None;
        }
        let key = self.session.key(self.state.rank, self.state.source);
        self.session.peek(key).map(|_| key)
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

    /// Applies one command: the view state takes it first ([`ViewState::apply`], its only
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
                    self.overview = Some(super::overview::Overview::start(
                        &mut self.jobs,
                        p,
                        self.state.source,
                    ));
                }
                if let Some(source) = self.baseline.source() {
                    self.load_baseline(source);
                }
            }
            Command::CompareWith(source) => self.load_baseline(source),
            Command::CompareRank(rank) => {
                if let Some(path) = self.session.path.clone() {
                    self.apply(Command::CompareWith(super::baseline::BaselineSource {
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
                    let rows = super::panes::diff::diff_rows(&diff, &self.state);
                    ctx.copy_text(super::panes::diff::diff_tsv(t, &diff, &rows));
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
            Command::SetTheme(theme) => {
                self.prefs.theme = theme;
                if let Some(ctx) = &self.ctx {
                    ctx.set_theme(theme.egui());
                }
            }
            Command::ShowHelp(open) => self.help_open = open,
            Command::DismissFailures => self.failures.clear(),
            Command::SaveChart => self.request_chart_shot(),
            _ => {}
        }
    }

    /// Starts loading the baseline `source` with the Data switch's files, from the session
    /// when it is a rank of the open profile that is loaded already.
    fn load_baseline(&mut self, source: super::baseline::BaselineSource) {
        let same = self.session.path.as_ref() == Some(&source.path);
        let profile = self.session.profile.clone().filter(|_| same);
        let key = profile
            .as_ref()
            .map(|_| self.session.key(source.rank, self.state.source));
        let cached = key.and_then(|k| self.session.get(k));
        self.baseline.load(
            &mut self.jobs,
            super::baseline::BaselineRequest {
                source,
                profile,
                files: self.state.source,
                key,
                cached,
            },
        );
    }

    fn open_now(&mut self, path: PathBuf) {
        // An allocator snapshot opens in its own view.
        let snapshot = path.is_file()
            && path
                .file_name()
                .is_some_and(|n| crate::ingest::is_snapshot_name(&n.to_string_lossy()));
        self.loading = None;
        self.overview = None; // dropping it cancels its job
        self.error = None;
        if snapshot {
            self.snapshot = Some(super::panes::snapshot::SnapshotView::open(
                &mut self.jobs,
                path.clone(),
            ));
            self.prefs.remember(&path);
            return;
        }
        self.snapshot = None;
        self.opening = Some(path.clone());
        self.session.open(path);
        self.show_rank();
    }

    /// Puts the state's rank (from the state's files) on screen: at once when the session has
    /// it, else by a load job started for exactly that key (a load of another key is
    /// cancelled). Before discovery has finished, discovery starts again with the new choice.
    fn show_rank(&mut self) {
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

    /// Asks the window for a screenshot; the chart's part of it is saved once it arrives.
    fn request_chart_shot(&mut self) {
        let (Some(ctx), Some(rect)) = (self.ctx.clone(), self.chart.last_rect) else {
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let wake = ctx.clone();
        ctx.request_screenshot(move |image| {
            let _ = tx.send(image);
            wake.request_repaint();
        });
        self.shot = Some((rx, rect, ctx.pixels_per_point()));
    }

    /// Hands a screenshot to Save chart as PNG, as the window does when it has one (tests call
    /// it with an image of their own, since a test harness has no renderer).
    pub fn deliver_screenshot(&mut self, image: &egui::ColorImage) {
        let rect = self.shot.take().map(|(_, r, ppp)| (r, ppp)).or_else(|| {
            self.chart.last_rect.map(|r| {
                (
                    r,
                    self.ctx
                        .as_ref()
                        .map_or(1.0, egui::Context::pixels_per_point),
                )
            })
        });
        let Some((rect, ppp)) = rect else { return };
        self.chart_png = Some(super::chart_image::crop(image, rect, ppp));
        let picker = self.png_picker;
        let job = self.jobs.run(
            JobKey::Named("chart png".into()),
            Place::Thread,
            move |_| picker(),
        );
        if job.start_error.is_some() {
            let t = self.tr();
            self.browser.show_for(Purpose::SaveChart, None, t);
        } else {
            self.png_dialog = Some(job);
        }
    }

    /// Writes the waiting chart image to `path` and says so.
    fn write_chart_png(&mut self, path: &Path) {
        let t = self.tr();
        if let Some(image) = self.chart_png.take() {
            self.notice = Some(match super::chart_image::save_png(&image, path) {
                Ok(()) => (t.saved_chart)(&path.display().to_string()),
                Err(e) => (t.cannot_save_chart)(&e),
            });
        }
    }

    /// Save chart as PNG's progress: the screenshot, then the file name.
    fn poll_chart_png(&mut self) {
        if let Some((rx, _, _)) = &self.shot
            && let Ok(image) = rx.try_recv()
        {
            self.deliver_screenshot(&image);
        }
        if let Some(job) = &self.png_dialog {
            match job.poll() {
                Poll::Pending => {}
                Poll::Finished | Poll::Failed(_) => {
                    self.png_dialog = None;
                    self.chart_png = None;
                }
                Poll::Msg(outcome) => {
                    self.png_dialog = None;
                    match outcome {
                        PickOutcome::Picked(path) => self.write_chart_png(&path),
                        PickOutcome::Cancelled => self.chart_png = None,
                        PickOutcome::Unavailable => self.show_browser(Purpose::SaveChart),
                    }
                }
            }
        }
    }

    /// Where the memory chart's plot area was drawn in the last frame (tests aim clicks at it).
    pub fn chart_plot_rect(&self) -> Option<egui::Rect> {
        self.chart.last_plot_rect
    }

    /// Waits for the baseline to load and its diff against the rank on screen (tests).
    pub fn wait_for_baseline(&mut self) {
        let view = self.view();
        self.baseline.wait(&mut self.jobs, view.as_ref());
    }

    /// The shift applied to the baseline's times (ns), when comparing.
    pub fn compare_offset(&self) -> Option<i64> {
        let (b, cur) = (self.baseline.loaded.as_ref()?, self.view()?);
        Some(align_offset(&cur, &b.view, self.state.align_step))
    }

    /// The cluster overview, when the profile has more than one rank.
    pub fn overview(&self) -> Option<&super::overview::Overview> {
        self.overview.as_ref()
    }

    /// Waits until the overview has summarised every rank (tests and headless runs).
    pub fn wait_for_overview(&mut self) {
        if let Some(o) = &mut self.overview {
            o.wait();
        }
    }

    /// The text the last Copy put on the clipboard.
    pub fn last_copy(&self) -> Option<&str> {
        let d = self.details();
        if self.state.table_baseline {
            d.baseline.last_copy.as_deref()
        } else {
            d.current.last_copy.as_deref()
        }
    }

    /// True while a load runs.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Blocks until the running load finishes (tests, headless runs).
    pub fn wait_for_load(&mut self) {
        self.hold_load = false;
        while let Some(l) = &self.loading {
            match l.job.wait() {
                Some(m) => self.handle(m),
                None => self.load_ended(),
            }
        }
    }

    /// Blocks until the running load shows its first look (the curves, before the rest of the
    /// rank is read) or ends; then holds its later messages until [`Self::release_load`]. True
    /// when a first look is on screen. For tests: the state in between is otherwise too short
    /// to look at.
    pub fn wait_for_first_look(&mut self) -> bool {
        while let Some(l) = &self.loading {
            match l.job.wait() {
                Some(m) => {
                    let first = matches!(m, LoadMsg::FirstLook { .. });
                    self.handle(m);
                    if first {
                        self.hold_load = true;
                        return true;
                    }
                }
                None => self.load_ended(),
            }
        }
        false
    }

    /// Lets the load held by [`Self::wait_for_first_look`] go on.
    pub fn release_load(&mut self) {
        self.hold_load = false;
    }

    fn poll_load(&mut self) {
        if self.hold_load {
            return;
        }
        while let Some(l) = &self.loading {
            match l.job.poll() {
                Poll::Msg(m) => self.handle(m),
                Poll::Pending => break,
                Poll::Finished | Poll::Failed(_) => self.load_ended(),
            }
        }
    }

    /// A load that stopped after its first look leaves no view behind: curves over a table that
    /// says "loading" while nothing loads would lie.
    fn drop_first_look(&mut self) {
        if let Some(key) = self.loading.as_ref().map(|l| l.key)
            && self.session.peek(key).is_some_and(|v| v.data.partial)
        {
            self.session.remove(key);
        }
    }

    /// The load's job ended without saying it loaded a rank.
    fn load_ended(&mut self) {
        self.drop_first_look();
        if let Some(l) = self.loading.take()
            && self.current().is_none()
            && self.error.is_none()
        {
            // Cancelled before its thread ran: it never got to say so itself.
            let t = self.tr();
            self.error = Some(match (&l.job.start_error, l.job.failure()) {
                (Some(e), _) => e.clone(),
                (None, Some(why)) => (t.job_failed)(&l.what, why),
                _ if l.job.control().is_cancelled() => t.load_cancelled.into(),
                _ => t.load_stopped.into(),
            });
        }
    }

    fn handle(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Discovered(p) => {
                // Several ranks: summarise them all in the background and show the overview.
                if p.ranks.len() > 1 {
                    self.overview = Some(super::overview::Overview::start(
                        &mut self.jobs,
                        Arc::clone(&p),
                        self.state.source,
                    ));
                    self.apply(Command::ShowOverview(true));
                }
                // A path that proved to be a profile goes into the recent list; one that did not
                // stays out of it.
                if let Some(path) = self.opening.take() {
                    self.prefs.remember(&path);
                }
                self.session.profile = Some(p);
            }
            LoadMsg::FirstLook { key, view } => {
                // The curves now; the load goes on (the table says so meanwhile). Cached under
                // the key the load was started for, whatever the state says now.
                self.session.insert(key, view);
            }
            LoadMsg::Loaded { key, view } => {
                // Completing a first look on screen: operator_memory may start earlier than
                // memory_record and so move the time origin; the window the user chose moves
                // with it, so it shows the same instants.
                let shift = self
                    .session
                    .peek(key)
                    .filter(|first| first.data.partial)
                    .map_or(0, |first| {
                        first.data.time_origin_ns - view.data.time_origin_ns
                    });
                let on_screen = self.current() == Some(key);
                self.session.insert(key, view);
                if shift != 0 && on_screen {
                    self.apply(Command::OriginMoved { by_ns: shift });
                }
                self.loading = None;
            }
            LoadMsg::Failed(e) => {
                self.drop_first_look();
                self.error = Some(e.message(self.tr()));
                self.loading = None;
            }
            LoadMsg::Cancelled => {
                self.drop_first_look();
                self.loading = None;
                if self.current().is_none() {
                    self.error = Some(self.tr().load_cancelled.into());
                }
            }
        }
    }

    fn pick(&mut self, kind: PickKind) {
        let picker = self.picker;
        let job = self
            .jobs
            .run(JobKey::Dialog, Place::Thread, move |_| picker(kind));
        match &job.start_error {
            Some(_) => self.show_browser(Purpose::Open(kind)),
            None => self.dialog = Some((kind, job)),
        }
    }

    /// Shows the in-app browser, starting beside what is open.
    fn show_browser(&mut self, purpose: Purpose) {
        let start = self
            .path()
            .and_then(|p| if p.is_dir() { Some(p) } else { p.parent() })
            .map(Path::to_path_buf);
        let t = self.tr();
        self.browser.show_for(purpose, start.as_deref(), t);
    }

    /// The native dialog's answer: a path to open, or the in-app browser when it could not be
    /// shown.
    fn poll_dialog(&mut self) -> Option<(PickKind, PathBuf)> {
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

    /// The whole window, drawn into `ui` (eframe's root, or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let frame_started = std::time::Instant::now();
        let extent = self
            .view()
            .map(|v| {
                let (a, b) = v.time_extent();
                TimeWindow::new(a, b).ms()
            })
            .or_else(|| self.snapshot.as_ref().and_then(|s| s.chart_extent()));
        if let Some(bench) = &mut self.bench {
            let (done, window) = bench.before_frame(extent);
            if done {
                eprintln!("{}", bench.report());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            ui.ctx().request_repaint();
            if let Some((a, b)) = window {
                match &mut self.snapshot {
                    Some(s) => s.chart.range = Some((a, b)),
                    None => self.apply(Command::SetWindow {
                        window: TimeWindow::from_ms(a, b),
                        moving: true,
                    }),
                }
            }
        }
        self.ui_frame(ui);
        if let Some(bench) = &mut self.bench {
            bench.after_frame(frame_started);
        }
    }

    fn ui_frame(&mut self, ui: &mut egui::Ui) {
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
            self.jobs.set_context(ui.ctx());
            ui.ctx().set_theme(self.prefs.theme.egui());
        }
        if self.cjk_font.is_none() {
            self.cjk_font = Some(super::fonts::install_cjk_font(ui.ctx()));
        }
        let t = self.tr();
        self.poll_load();
        if let Some(o) = &mut self.overview
            && o.poll()
        {
            ui.ctx().request_repaint();
        }
        if self.baseline.poll() {
            ui.ctx().request_repaint();
        }
        self.poll_chart_png();
        self.failures.extend(self.jobs.take_failures());
        let mut out: Vec<Command> = Vec::new();
        if let Some((kind, p)) = self.poll_dialog() {
            out.push(opened(kind, p));
        }
        let dropped: Option<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|p| !p.as_os_str().is_empty())
        });
        if let Some(p) = dropped {
            // Shift while dropping: compare with it instead of opening it.
            let kind = if ui.ctx().input(|i| i.modifiers.shift) {
                PickKind::Baseline
            } else {
                PickKind::Folder
            };
            out.push(opened(kind, p));
        }
        shortcuts(ui, &mut out);
        if let Some((purpose, path)) = self.browser.ui(ui.ctx()) {
            match purpose {
                Purpose::Open(kind) => out.push(opened(kind, path)),
                Purpose::SaveChart => self.write_chart_png(&path),
                Purpose::Save => {
                    let d = self.panes.get_mut::<DetailsPane>();
                    if let Some(table) = d.map(|d| d.exporting_table()) {
                        table.exporter.write_to(&mut self.jobs, path, t);
                    }
                }
            }
        }
        self.update_title(ui);

        // Panels are unfilled: the window's clear colour is the panel colour (see `clear_color`),
        // which saves a full-window fill per frame, the dominant cost under software rendering.
        let side = egui::Frame::side_top_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        let central = egui::Frame::central_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        egui::Panel::top("memsight_top").frame(side).show(ui, |ui| {
            super::top_bar::menu_ui(
                ui,
                t,
                &self.prefs,
                self.cjk_font.as_ref().is_some_and(Option::is_none),
                &mut self.path_text,
                &mut out,
            );
            if let Some(n) = &self.notice {
                ui.weak(n.as_str());
            }
            failures_ui(ui, t, &self.failures, &mut out);
            // A snapshot has its own device picker in its view: no profile parameters.
            if self.snapshot.is_none() {
                super::top_bar::parameters_ui(
                    ui,
                    t,
                    &self.session,
                    self.view().as_ref(),
                    &self.state,
                    self.loading.as_ref(),
                    &self.baseline,
                    &mut out,
                );
            }
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
        let overview = self.overview.as_ref().filter(|_| self.state.show_overview);
        if let Some(s) = &mut self.snapshot {
            let jobs = &mut self.jobs;
            egui::CentralPanel::default()
                .frame(central)
                .show(ui, |ui| s.ui(ui, t, jobs));
        } else if let Some(o) = overview {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                super::panes::overview::overview_ui(ui, t, o, &self.state, &mut out);
            });
        } else if let Some(view) = self.view() {
            let notes = self
                .session
                .profile
                .as_ref()
                .map_or(&[][..], |p| &p.notes[..]);
            let diff = self.baseline.diff(&mut self.jobs, &view);
            let compare = self.baseline.loaded.as_ref().map(|b| Compare {
                baseline: b,
                offset: align_offset(&view, &b.view, self.state.align_step),
                diff,
            });
            let mut cx = PaneCx {
                view: &view,
                state: &self.state,
                out: &mut out,
                jobs: &mut self.jobs,
                t,
                compare,
                marks_chart: true,
            };
            let static_view = cx.state.static_view;
            if cx.state.link.cursor.is_some() && !static_view && !view.data.partial {
                egui::Panel::right("memsight_live")
                    .frame(side)
                    .resizable(true)
                    .default_size(360.0)
                    .show(ui, |ui| live_ui(ui, &mut cx));
            }
            let (panes, chart, static_chart, static_table) = (
                &mut self.panes,
                &mut self.chart,
                &mut self.static_chart,
                &mut self.static_table,
            );
            // A rank without memory_record has no curves: its table takes the whole window.
            let table_only = view.data.records.is_empty() && !static_view;
            if table_only {
                egui::CentralPanel::default().frame(central).show(ui, |ui| {
                    ui.weak(t.table_only);
                    if let Some(d) = panes.get_mut::<DetailsPane>() {
                        d.table_ui(ui, &mut cx);
                    }
                });
            } else {
                // The table's share by default: a third of the window, so that the chart keeps
                // about half of it on a 720-pixel screen as on a large one.
                let table_h = (ui.available_height() * 0.34).clamp(200.0, 420.0);
                egui::Panel::bottom("memsight_table")
                    .frame(side)
                    .resizable(true)
                    .default_size(table_h)
                    .show(ui, |ui| {
                        if static_view {
                            static_table.ui(ui, &mut cx);
                        } else if cx.view.data.partial {
                            // Progressive display: the curves are up, the rows are not yet.
                            ui.horizontal(|ui| {
                                ui.spinner();
                                ui.weak(t.rest_loading);
                            });
                        } else {
                            if panes.has_choice(&cx) {
                                tab_strip(ui, panes, &mut cx);
                            }
                            panes.ui(ui, &mut cx);
                        }
                    });
                egui::CentralPanel::default().frame(central).show(ui, |ui| {
                    if static_view {
                        static_chart.ui(ui, &mut cx);
                    } else {
                        chart.ui(ui, &mut cx);
                    }
                });
            }
            if cx.state.show_warnings {
                warnings_window(ui.ctx(), &mut cx, notes);
            }
        } else {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                super::top_bar::placeholder_ui(
                    ui,
                    t,
                    &mut self.path_text,
                    self.error.as_deref(),
                    self.loading.as_ref(),
                    self.session.profile.is_some(),
                    &mut out,
                )
            });
        }
        if self.help_open {
            super::top_bar::help_window(ui.ctx(), t, &mut out);
        }
        if self.details_mut().wants_browser() {
            self.show_browser(Purpose::Save);
        }
        if !out.is_empty() {
            for cmd in out {
                self.apply(cmd);
            }
            ui.ctx().request_repaint();
        }
    }

    fn update_title(&mut self, ui: &egui::Ui) {
        let shown = self.snapshot.as_ref().map(|s| s.path.as_path());
        let title = match shown.or(self.path()) {
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
    failures: &[super::jobs::JobFailure],
    out: &mut Vec<Command>,
) {
    if failures.is_empty() {
        return;
    }
    ui.horizontal_wrapped(|ui| {
        ui.vertical(|ui| {
            for f in failures {
                let what = t.task_names.get(f.key.kind_index()).copied().unwrap_or("");
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

/// Keyboard shortcuts as commands: Ctrl+O, Esc, Ctrl+C (copy), F1 (help). ←/→ turn the pages of
/// the table on screen: its pager takes them, since it knows where the last page is.
fn shortcuts(ui: &egui::Ui, out: &mut Vec<Command>) {
    let typing = ui.ctx().memory(|m| m.focused().is_some());
    let (open, esc, copy, help) = ui.ctx().input_mut(|i| {
        (
            i.consume_key(Modifiers::COMMAND, Key::O),
            i.key_pressed(Key::Escape),
            !typing && i.events.iter().any(|e| matches!(e, egui::Event::Copy)),
            i.consume_key(Modifiers::NONE, Key::F1),
        )
    });
    if help {
        out.push(Command::ShowHelp(true));
    }
    if open {
        out.push(Command::Pick(PickKind::Folder));
    }
    if esc {
        out.push(Command::ResetView);
    }
    if copy {
        out.push(Command::Copy);
    }
}

impl eframe::App for MemsightApp {
    fn ui(&mut self, ui: &mut egui::Ui, frame: &mut eframe::Frame) {
        if let Some(bench) = &mut self.bench {
            bench.record_cpu(frame.info().cpu_usage);
        }
        self.ui_root(ui);
    }

    /// The panel colour: the panels themselves are unfilled, so the clear is their background.
    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        visuals.panel_fill.to_normalized_gamma_f32()
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        self.prefs.save(storage);
    }
}

/// The tab strip above the bottom pane: the registered panes offered for this rank, and in a
/// comparison which rank's blocks the details table shows.
fn tab_strip(ui: &mut egui::Ui, panes: &BottomPanes, cx: &mut PaneCx<'_>) {
    let t = cx.t;
    ui.horizontal(|ui| {
        panes.strip_ui(ui, cx);
        if cx.compare.is_some() {
            ui.separator();
            let on_details = panes.shown(cx) == TabId::DETAILS;
            for (on, label) in [(false, t.table_current), (true, t.table_baseline)] {
                if ui
                    .selectable_label(on_details && cx.state.table_baseline == on, label)
                    .clicked()
                {
                    cx.out.push(Command::SetTableBaseline(on));
                }
            }
        }
    });
    ui.separator();
}

/// What a picked path means: a profile to open, or a baseline to compare with.
fn opened(kind: PickKind, path: PathBuf) -> Command {
    match kind {
        PickKind::Baseline => {
            Command::CompareWith(super::baseline::BaselineSource { path, rank: 0 })
        }
        PickKind::Folder | PickKind::Database => Command::Open(path),
    }
}
