//! The window: owns the session, the view state, the job runner and the panes; lays the panes
//! out each frame and applies the commands they push, in one place, after they are drawn.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use egui::{Key, Modifiers};

use super::command::{Command, PickKind};
use super::jobs::{Job, JobKey, Jobs, Place, Poll};
use super::loading::{LoadMsg, Loading, start_load};
use super::panes::PaneCx;
use super::panes::component_table::ComponentTable;
use super::panes::details_table::DetailsTable;
use super::panes::live::live_ui;
use super::panes::memory_chart::MemoryChart;
use super::panes::static_view::{StaticChart, static_table_ui};
use super::panes::warnings::warnings_window;
use super::session::{RankKey, Session};
use super::state::ViewState;
use crate::analysis::{GroupBy, RankView};
use crate::ingest::Profile;
use crate::model::TimeWindow;

/// eframe storage key of the recent-folders list.
pub const RECENT_KEY: &str = "memsight.recent";
const MAX_RECENT: usize = 10;

/// The recent list from its stored form (one path per line).
pub fn parse_recent(s: &str) -> Vec<String> {
    s.lines()
        .filter(|l| !l.trim().is_empty())
        .map(str::to_string)
        .take(MAX_RECENT)
        .collect()
}

/// Shows an open dialog and returns the chosen path; it blocks, so the app runs it as a job.
/// [`native_picker`] in the app; tests put in a picker of their own.
pub type Picker = fn(PickKind) -> Option<PathBuf>;

/// The native dialog (rfd, through the XDG desktop portal on Linux).
pub fn native_picker(kind: PickKind) -> Option<PathBuf> {
    let dialog = rfd::FileDialog::new();
    match kind {
        PickKind::Folder => dialog.set_title("Open profiling folder").pick_folder(),
        PickKind::Database => dialog
            .set_title("Open profiler database")
            .add_filter("Profiler DB", &["db"])
            .pick_file(),
    }
}

/// The app.
pub struct MemsightApp {
    /// The opened profile and its loaded ranks.
    pub session: Session,
    /// The rank on screen.
    current: Option<RankKey>,
    /// What the user chose; changed only by [`Self::apply`].
    state: ViewState,
    /// The last error (nothing could be loaded).
    pub error: Option<String>,
    /// Recently opened paths, newest first.
    pub recent: Vec<String>,
    jobs: Jobs,
    loading: Option<Loading>,
    /// How many rank loads were started (a rank shown again from the session starts none).
    pub loads_started: usize,
    dialog: Option<Job<Option<PathBuf>>>,
    ctx: Option<egui::Context>,
    /// The memory chart pane.
    pub chart: MemoryChart,
    /// The details table pane.
    pub table: DetailsTable,
    components: ComponentTable,
    static_chart: StaticChart,
    title: String,
    /// Self-timing (`MEMSIGHT_BENCH`), when asked for.
    pub bench: Option<super::bench::Bench>,
    /// The open dialog ([`native_picker`] unless replaced).
    pub picker: Picker,
}

impl MemsightApp {
    /// An app that starts loading `path` (if any). `ctx` lets jobs wake the UI.
    pub fn new(
        path: Option<PathBuf>,
        recent: Vec<String>,
        ctx: Option<egui::Context>,
    ) -> MemsightApp {
        let jobs = Jobs::default();
        if let Some(c) = &ctx {
            jobs.set_context(c);
        }
        let mut app = MemsightApp {
            session: Session::default(),
            current: None,
            state: ViewState::default(),
            error: None,
            recent,
            jobs,
            loading: None,
            loads_started: 0,
            dialog: None,
            ctx,
            chart: MemoryChart::default(),
            table: DetailsTable::default(),
            components: ComponentTable::default(),
            static_chart: StaticChart::default(),
            title: String::new(),
            bench: None,
            picker: native_picker,
        };
        if let Some(p) = path {
            app.apply(Command::Open(p));
        }
        app
    }

    /// What the user has chosen.
    pub fn view_state(&self) -> &ViewState {
        &self.state
    }

    /// The rank on screen.
    pub fn view(&self) -> Option<Arc<RankView>> {
        self.current
            .and_then(|k| self.session.peek(k))
            .map(Arc::clone)
    }

    /// The key of the rank on screen.
    pub fn current(&self) -> Option<RankKey> {
        self.current
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

    /// Opens a folder or `.db`, replacing what is shown.
    pub fn open(&mut self, path: PathBuf) {
        self.apply(Command::Open(path));
    }

    /// Shows rank `rank` of the open profile.
    pub fn select_rank(&mut self, rank: usize) {
        self.apply(Command::SelectRank(rank));
    }

    /// Applies one command: the only place the view state, the session's current rank and the
    /// loads change.
    pub fn apply(&mut self, cmd: Command) {
        if self.state.apply(&cmd) {
            return;
        }
        match cmd {
            Command::Open(path) => self.open_now(path),
            Command::Pick(kind) => self.pick(kind),
            Command::SelectRank(rank) => self.select_rank_now(rank),
            Command::CancelLoad => {
                if let Some(l) = &self.loading {
                    l.job.control().cancel();
                }
            }
            Command::Copy => {
                if let Some(view) = self.view() {
                    self.table.copy(self.ctx.as_ref(), &view, &self.state);
                }
            }
            _ => {}
        }
    }

    fn open_now(&mut self, path: PathBuf) {
        let shown = path.display().to_string();
        self.recent.retain(|r| *r != shown);
        self.recent.insert(0, shown);
        self.recent.truncate(MAX_RECENT);
        self.session.open(path.clone());
        self.current = None;
        self.error = None;
        self.state = ViewState::default();
        self.loads_started += 1;
        self.loading = Some(start_load(&mut self.jobs, path, None, 0));
    }

    fn select_rank_now(&mut self, rank: usize) {
        let (Some(path), Some(profile)) = (self.session.path.clone(), self.session.profile.clone())
        else {
            return;
        };
        if rank >= profile.ranks.len() {
            return;
        }
        self.state.on_rank_change(rank);
        self.error = None;
        let key = self.session.key(rank);
        if self.session.get(key).is_some() {
            self.loading = None; // dropping the handle cancels a load of another rank
            self.current = Some(key);
            return;
        }
        self.current = None;
        self.loads_started += 1;
        self.loading = Some(start_load(&mut self.jobs, path, Some(profile), rank));
    }

    /// The text the last Copy put on the clipboard.
    pub fn last_copy(&self) -> Option<&str> {
        self.table.last_copy.as_deref()
    }

    /// True while a load runs.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Blocks until the running load finishes (tests, headless runs).
    pub fn wait_for_load(&mut self) {
        while let Some(l) = &self.loading {
            match l.job.wait() {
                Some(m) => self.handle(m),
                None => self.load_ended(),
            }
        }
    }

    fn poll_load(&mut self) {
        while let Some(l) = &self.loading {
            match l.job.poll() {
                Poll::Msg(m) => self.handle(m),
                Poll::Pending => break,
                Poll::Finished => self.load_ended(),
            }
        }
    }

    /// The load's job ended without saying it loaded a rank.
    fn load_ended(&mut self) {
        if let Some(l) = self.loading.take()
            && self.current.is_none()
            && self.error.is_none()
        {
            self.error = Some(
                l.job
                    .start_error
                    .clone()
                    .unwrap_or_else(|| "Loading stopped without a result.".into()),
            );
        }
    }

    fn handle(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Discovered(p) => self.session.profile = Some(p),
            LoadMsg::Loaded { rank, view } => {
                let key = self.session.key(rank);
                self.session.insert(key, view);
                self.state.rank = rank;
                self.current = Some(key);
                self.loading = None;
            }
            LoadMsg::Failed(e) => {
                self.error = Some(e);
                self.loading = None;
            }
            LoadMsg::Cancelled => {
                self.loading = None;
                if self.current.is_none() {
                    self.error = Some("Loading was cancelled.".into());
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
            Some(e) => self.error = Some(format!("cannot open a dialog: {e}")),
            None => self.dialog = Some(job),
        }
    }

    fn poll_dialog(&mut self) -> Option<PathBuf> {
        let job = self.dialog.as_ref()?;
        match job.poll() {
            Poll::Pending => None,
            Poll::Finished => {
                self.dialog = None;
                None
            }
            Poll::Msg(picked) => {
                self.dialog = None;
                picked
            }
        }
    }

    /// The whole window, drawn into `ui` (eframe's root, or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let frame_started = std::time::Instant::now();
        let extent = self.view().map(|v| {
            let (a, b) = v.time_extent();
            TimeWindow::new(a, b).ms()
        });
        if let Some(bench) = &mut self.bench {
            let (done, window) = bench.before_frame(extent);
            if done {
                eprintln!("{}", bench.report());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            ui.ctx().request_repaint();
            if let Some((a, b)) = window {
                self.apply(Command::SetWindow {
                    window: TimeWindow::from_ms(a, b),
                    moving: true,
                });
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
        }
        self.poll_load();
        let mut out: Vec<Command> = Vec::new();
        if let Some(p) = self.poll_dialog() {
            out.push(Command::Open(p));
        }
        let dropped: Option<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .find(|p| !p.as_os_str().is_empty())
        });
        if let Some(p) = dropped {
            out.push(Command::Open(p));
        }
        shortcuts(ui, &mut out);
        self.update_title(ui);

        // Panels are unfilled: the window's clear colour is the panel colour (see `clear_color`),
        // which saves a full-window fill per frame, the dominant cost under software rendering.
        let side = egui::Frame::side_top_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        let central = egui::Frame::central_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        egui::Panel::top("memsight_top").frame(side).show(ui, |ui| {
            super::top_bar::menu_ui(ui, &self.recent, &mut out);
            super::top_bar::parameters_ui(
                ui,
                &self.session,
                self.view().as_ref(),
                &self.state,
                self.loading.as_ref(),
                &mut out,
            );
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
        if let Some(view) = self.view() {
            let notes = self
                .session
                .profile
                .as_ref()
                .map_or(&[][..], |p| &p.notes[..]);
            let mut cx = PaneCx {
                view: &view,
                state: &self.state,
                out: &mut out,
                jobs: &mut self.jobs,
            };
            let static_view = cx.state.static_view;
            if cx.state.link.cursor.is_some() && !static_view {
                egui::Panel::right("memsight_live")
                    .frame(side)
                    .resizable(true)
                    .default_size(360.0)
                    .show(ui, |ui| live_ui(ui, &mut cx));
            }
            let (table, components, chart, static_chart) = (
                &mut self.table,
                &mut self.components,
                &mut self.chart,
                &mut self.static_chart,
            );
            egui::Panel::bottom("memsight_table")
                .frame(side)
                .resizable(true)
                .default_size(330.0)
                .show(ui, |ui| {
                    if static_view {
                        static_table_ui(ui, &mut cx);
                    } else if cx.state.group_by == GroupBy::Component {
                        components.ui(ui, &mut cx);
                    } else {
                        table.ui(ui, &mut cx);
                    }
                });
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                if static_view {
                    static_chart.ui(ui, &mut cx);
                } else {
                    chart.ui(ui, &mut cx);
                }
            });
            if cx.state.show_warnings {
                warnings_window(ui.ctx(), &mut cx, notes);
            }
        } else {
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                super::top_bar::placeholder_ui(
                    ui,
                    self.error.as_deref(),
                    self.loading.as_ref(),
                    self.session.profile.is_some(),
                    &mut out,
                )
            });
        }
        if !out.is_empty() {
            for cmd in out {
                self.apply(cmd);
            }
            ui.ctx().request_repaint();
        }
    }

    fn update_title(&mut self, ui: &egui::Ui) {
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

/// Keyboard shortcuts as commands: Ctrl+O, Esc, ←/→ (pages), Ctrl+C (copy).
fn shortcuts(ui: &egui::Ui, out: &mut Vec<Command>) {
    let typing = ui.ctx().memory(|m| m.focused().is_some());
    let (open, esc, left, right, copy) = ui.ctx().input_mut(|i| {
        (
            i.consume_key(Modifiers::COMMAND, Key::O),
            i.key_pressed(Key::Escape),
            // Consumed, so that a second pass of the frame does not turn the page again.
            !typing && i.consume_key(Modifiers::NONE, Key::ArrowLeft),
            !typing && i.consume_key(Modifiers::NONE, Key::ArrowRight),
            !typing && i.events.iter().any(|e| matches!(e, egui::Event::Copy)),
        )
    });
    if open {
        out.push(Command::Pick(PickKind::Folder));
    }
    if esc {
        out.push(Command::ResetView);
    }
    if left {
        out.push(Command::PreviousPage);
    }
    if right {
        out.push(Command::NextPage); // clamped by the table
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
        storage.set_string(RECENT_KEY, self.recent.join("\n"));
    }
}
