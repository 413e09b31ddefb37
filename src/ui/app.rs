//! The window: menus, the parameter bar, loading and its progress, shortcuts, and the panels.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, channel};

use egui::{Key, Modifiers};

use super::chart::{ChartCache, chart_ui};
use super::loader::{LoadJob, LoadMsg, Poll};
use super::panels;
use super::state::ViewState;
use super::table::{TableCache, details_ui};
use crate::analysis::{GroupBy, RankView};
use crate::ingest::Profile;

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

/// What an open dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// A profiling folder (File, Open folder…, Ctrl+O).
    Folder,
    /// A profiler database (File, Open file (.db)…).
    Database,
}

/// Shows an open dialog and returns the chosen path; it blocks, so the app calls it on a thread
/// of its own. [`native_picker`] in the app; tests put in a picker of their own.
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
    /// The opened folder or file.
    pub path: Option<PathBuf>,
    /// Its ranks.
    pub profile: Option<Arc<Profile>>,
    /// The rank on screen.
    pub view: Option<Arc<RankView>>,
    /// What the user chose.
    pub state: ViewState,
    /// The last error (nothing could be loaded).
    pub error: Option<String>,
    /// Recently opened paths, newest first.
    pub recent: Vec<String>,
    job: Option<LoadJob>,
    dialog: Option<Receiver<Option<PathBuf>>>,
    ctx: Option<egui::Context>,
    /// The chart's state between frames.
    pub chart: ChartCache,
    /// The details table's state between frames.
    pub table: TableCache,
    static_chart: panels::StaticChart,
    title: String,
    /// Self-timing (`MEMSIGHT_BENCH`), when asked for.
    pub bench: Option<super::bench::Bench>,
    /// The open dialog ([`native_picker`] unless replaced).
    pub picker: Picker,
}

impl MemsightApp {
    /// An app that starts loading `path` (if any). `ctx` lets the loader wake the UI.
    pub fn new(
        path: Option<PathBuf>,
        recent: Vec<String>,
        ctx: Option<egui::Context>,
    ) -> MemsightApp {
        let mut app = MemsightApp {
            path: None,
            profile: None,
            view: None,
            state: ViewState::default(),
            error: None,
            recent,
            job: None,
            dialog: None,
            ctx,
            chart: ChartCache::default(),
            table: TableCache::default(),
            static_chart: panels::StaticChart::default(),
            title: String::new(),
            bench: None,
            picker: native_picker,
        };
        if let Some(p) = path {
            app.open(p);
        }
        app
    }

    /// Opens a folder or `.db`, replacing what is shown.
    pub fn open(&mut self, path: PathBuf) {
        if let Some(job) = &self.job {
            job.control.cancel();
        }
        let shown = path.display().to_string();
        self.recent.retain(|r| *r != shown);
        self.recent.insert(0, shown);
        self.recent.truncate(MAX_RECENT);
        self.path = Some(path.clone());
        self.profile = None;
        self.view = None;
        self.error = None;
        self.state = ViewState::default();
        let ctx = self.ctx.clone();
        self.job = Some(LoadJob::start(path, None, 0, move || {
            if let Some(c) = &ctx {
                c.request_repaint();
            }
        }));
    }

    /// Shows rank `rank` of the open profile (loading it off the UI thread).
    pub fn select_rank(&mut self, rank: usize) {
        let (Some(path), Some(profile)) = (self.path.clone(), self.profile.clone()) else {
            return;
        };
        if let Some(job) = &self.job {
            job.control.cancel();
        }
        self.state.on_rank_change(rank);
        self.view = None;
        self.error = None;
        let ctx = self.ctx.clone();
        self.job = Some(LoadJob::start(path, Some(profile), rank, move || {
            if let Some(c) = &ctx {
                c.request_repaint();
            }
        }));
    }

    /// The text the last Copy put on the clipboard.
    pub fn last_copy(&self) -> Option<&str> {
        self.table.last_copy.as_deref()
    }

    /// True while a load runs.
    pub fn is_loading(&self) -> bool {
        self.job.is_some()
    }

    /// Blocks until the running load finishes (tests, headless runs).
    pub fn wait_for_load(&mut self) {
        while let Some(job) = self.job.take() {
            let msg = job.wait();
            self.job = Some(job);
            match msg {
                Some(m) => self.handle(m),
                None => self.job = None,
            }
        }
    }

    fn poll_job(&mut self) {
        while let Some(job) = &self.job {
            match job.poll() {
                Poll::Msg(m) => self.handle(m),
                Poll::Pending => break,
                Poll::Finished => self.job = None,
            }
        }
    }

    fn handle(&mut self, msg: LoadMsg) {
        match msg {
            LoadMsg::Discovered(p) => self.profile = Some(p),
            LoadMsg::Loaded { rank, view } => {
                self.state.rank = rank;
                self.view = Some(view);
                self.job = None;
            }
            LoadMsg::Failed(e) => {
                self.error = Some(e);
                self.job = None;
            }
            LoadMsg::Cancelled => {
                self.job = None;
                if self.view.is_none() {
                    self.error = Some("Loading was cancelled.".into());
                }
            }
        }
    }

    fn pick(&mut self, kind: PickKind) {
        let (tx, rx) = channel();
        let ctx = self.ctx.clone();
        let picker = self.picker;
        let spawned = std::thread::Builder::new()
            .name("memsight-dialog".into())
            .spawn(move || {
                let _ = tx.send(picker(kind));
                if let Some(c) = ctx {
                    c.request_repaint();
                }
            });
        match spawned {
            Ok(_) => self.dialog = Some(rx),
            Err(e) => self.error = Some(format!("cannot open a dialog: {e}")),
        }
    }

    /// The whole window, drawn into `ui` (eframe's root, or a test harness).
    pub fn ui_root(&mut self, ui: &mut egui::Ui) {
        let frame_started = std::time::Instant::now();
        if let Some(bench) = &mut self.bench {
            let extent = self.view.as_ref().map(|v| {
                let (a, b) = v.time_extent();
                (crate::model::ns_to_ms(a), crate::model::ns_to_ms(b))
            });
            if bench.before_frame(&mut self.state, extent) {
                eprintln!("{}", bench.report());
                ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
            }
            ui.ctx().request_repaint();
        }
        self.ui_frame(ui);
        if let Some(bench) = &mut self.bench {
            bench.after_frame(frame_started);
        }
    }

    fn ui_frame(&mut self, ui: &mut egui::Ui) {
        if self.ctx.is_none() {
            self.ctx = Some(ui.ctx().clone());
        }
        self.poll_job();
        if let Some(rx) = &self.dialog
            && let Ok(picked) = rx.try_recv()
        {
            self.dialog = None;
            if let Some(p) = picked {
                self.open(p);
            }
        }
        let dropped: Vec<PathBuf> = ui.ctx().input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .filter(|p| !p.as_os_str().is_empty())
                .collect()
        });
        if let Some(p) = dropped.into_iter().next() {
            self.open(p);
        }
        self.shortcuts(ui);
        self.update_title(ui);

        // Panels are unfilled: the window's clear colour is the panel colour (see `clear_color`),
        // which saves a full-window fill per frame, the dominant cost under software rendering.
        let side = egui::Frame::side_top_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        let central = egui::Frame::central_panel(ui.style()).fill(egui::Color32::TRANSPARENT);
        egui::Panel::top("memsight_top").frame(side).show(ui, |ui| {
            self.menu_ui(ui);
            self.parameters_ui(ui);
        });
        if let Some(view) = self.view.clone() {
            if self.state.cursor_ms.is_some() && !self.state.static_view {
                egui::Panel::right("memsight_live")
                    .frame(side)
                    .resizable(true)
                    .default_size(360.0)
                    .show(ui, |ui| {
                        panels::live_ui(ui, &view, &mut self.state);
                    });
            }
            egui::Panel::bottom("memsight_table")
                .frame(side)
                .resizable(true)
                .default_size(330.0)
                .show(ui, |ui| {
                    if self.state.static_view {
                        panels::static_table_ui(ui, &view, &mut self.state);
                    } else if self.state.group_by == GroupBy::Component {
                        panels::component_table_ui(ui, &view, &mut self.state);
                    } else {
                        details_ui(ui, &view, &mut self.state, &mut self.table);
                    }
                });
            egui::CentralPanel::default().frame(central).show(ui, |ui| {
                if self.state.static_view {
                    panels::static_chart_ui(ui, &view, &mut self.state, &mut self.static_chart);
                } else {
                    chart_ui(ui, &view, &mut self.state, &mut self.chart);
                }
            });
            if self.state.show_warnings {
                let notes = self.profile.as_ref().map_or(&[][..], |p| &p.notes[..]);
                panels::warnings_window(ui.ctx(), &view, notes, &mut self.state);
            }
        } else {
            egui::CentralPanel::default()
                .frame(central)
                .show(ui, |ui| self.placeholder_ui(ui));
        }
    }

    fn update_title(&mut self, ui: &egui::Ui) {
        let title = match &self.path {
            Some(p) => format!("memsight — {}", p.display()),
            None => "memsight".to_string(),
        };
        if title != self.title {
            ui.ctx()
                .send_viewport_cmd(egui::ViewportCommand::Title(title.clone()));
            self.title = title;
        }
    }

    fn shortcuts(&mut self, ui: &egui::Ui) {
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
            self.pick(PickKind::Folder);
        }
        if esc {
            self.state.view_ms = None;
            self.state.reset_zoom = true;
            self.state.cursor_ms = None;
        }
        if left {
            self.state.page = self.state.page.saturating_sub(1);
        }
        if right {
            self.state.page += 1; // clamped by the table
        }
        if copy && let Some(view) = &self.view {
            self.table.copy(ui.ctx(), view, &self.state);
        }
    }

    fn menu_ui(&mut self, ui: &mut egui::Ui) {
        egui::MenuBar::new().ui(ui, |ui| {
            ui.menu_button("File", |ui| {
                if ui.button("Open folder…  (Ctrl+O)").clicked() {
                    self.pick(PickKind::Folder);
                    ui.close();
                }
                if ui.button("Open file (.db)…").clicked() {
                    self.pick(PickKind::Database);
                    ui.close();
                }
                ui.menu_button("Recent folders", |ui| {
                    if self.recent.is_empty() {
                        ui.label("(none yet)");
                    }
                    let mut chosen = None;
                    for r in &self.recent {
                        if ui.button(r.as_str()).clicked() {
                            chosen = Some(PathBuf::from(r));
                        }
                    }
                    if let Some(p) = chosen {
                        self.open(p);
                        ui.close();
                    }
                });
                ui.separator();
                if ui.button("Quit").clicked() {
                    ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
                }
            });
        });
    }

    fn parameters_ui(&mut self, ui: &mut egui::Ui) {
        ui.horizontal_wrapped(|ui| {
            let Some(profile) = self.profile.clone() else {
                ui.label("No profile open: use File, Open folder… or drop a folder here.");
                return;
            };
            let mut hosts: Vec<String> = profile
                .ranks
                .iter()
                .filter_map(|r| r.host.clone())
                .collect();
            hosts.sort();
            hosts.dedup();
            if !hosts.is_empty() {
                let label = ui.label("Host Name");
                egui::ComboBox::from_id_salt("host")
                    .selected_text(
                        self.state
                            .host
                            .clone()
                            .unwrap_or_else(|| "All hosts".into()),
                    )
                    .show_ui(ui, |ui| {
                        ui.selectable_value(&mut self.state.host, None, "All hosts");
                        for h in &hosts {
                            ui.selectable_value(&mut self.state.host, Some(h.clone()), h.as_str());
                        }
                    })
                    .response
                    .labelled_by(label.id);
            }
            let current = profile
                .ranks
                .get(self.state.rank)
                .map(|r| r.label())
                .unwrap_or_default();
            let mut chosen = None;
            let label = ui.label("Rank ID");
            egui::ComboBox::from_id_salt("rank")
                .selected_text(current)
                .width(260.0)
                .show_ui(ui, |ui| {
                    for (i, r) in profile.ranks.iter().enumerate() {
                        if self
                            .state
                            .host
                            .as_ref()
                            .is_some_and(|h| r.host.as_ref() != Some(h))
                        {
                            continue;
                        }
                        if ui
                            .selectable_label(i == self.state.rank, r.label())
                            .clicked()
                        {
                            chosen = Some(i);
                        }
                    }
                })
                .response
                .labelled_by(label.id);
            if let Some(i) = chosen
                && (i != self.state.rank || self.view.is_none())
            {
                self.select_rank(i);
            }
            let before = self.state.group_by;
            let label = ui.label("Group By");
            egui::ComboBox::from_id_salt("group_by")
                .selected_text(self.state.group_by.label())
                .show_ui(ui, |ui| {
                    for g in GroupBy::ALL {
                        ui.selectable_value(&mut self.state.group_by, g, g.label());
                    }
                })
                .response
                .labelled_by(label.id);
            if before != self.state.group_by {
                self.state.page = 0;
                self.state.static_view = false;
            }
            if let Some(view) = self.view.clone() {
                let graphs = view.static_graphs();
                if !graphs.is_empty() {
                    ui.separator();
                    ui.checkbox(&mut self.state.static_view, "Static graph");
                    if self.state.static_view {
                        let current = graphs
                            .get(self.state.graph)
                            .map(|g| g.graph_id.clone())
                            .unwrap_or_default();
                        let label = ui.label("Graph ID");
                        egui::ComboBox::from_id_salt("graph_id")
                            .selected_text(current)
                            .show_ui(ui, |ui| {
                                for (i, g) in graphs.iter().enumerate() {
                                    if ui
                                        .selectable_label(
                                            i == self.state.graph,
                                            g.graph_id.as_str(),
                                        )
                                        .clicked()
                                    {
                                        self.state.graph = i;
                                        self.state.static_range = None;
                                        self.state.page = 0;
                                    }
                                }
                            })
                            .response
                            .labelled_by(label.id);
                    }
                }
                let n = view.data.report.warning_count() + profile.notes.len();
                if n > 0 {
                    ui.separator();
                    if ui.button(format!("⚠ {n} warnings")).clicked() {
                        self.state.show_warnings = true;
                    }
                }
            }
            if self.job.is_some() {
                ui.separator();
                self.progress_ui(ui);
            }
        });
    }

    /// The running load's progress (files and bytes read) and its Cancel button.
    fn progress_ui(&self, ui: &mut egui::Ui) {
        let Some(job) = &self.job else { return };
        let (done, total) = (job.control.bytes_done(), job.control.bytes_total());
        let frac = if total > 0 {
            done as f32 / total as f32
        } else {
            0.0
        };
        let text = format!(
            "loading {}: {} files, {} of {} MB",
            job.what,
            job.control.files_done(),
            done / (1 << 20),
            total / (1 << 20)
        );
        ui.add(
            egui::ProgressBar::new(frac)
                .desired_width(220.0)
                .text(text.clone()),
        )
        .on_hover_text(text);
        if ui.button("Cancel").clicked() {
            job.control.cancel();
        }
    }

    fn placeholder_ui(&mut self, ui: &mut egui::Ui) {
        ui.vertical_centered(|ui| {
            ui.add_space(80.0);
            if let Some(e) = &self.error {
                ui.heading("Nothing to show");
                ui.colored_label(ui.visuals().error_fg_color, e.as_str());
            } else if self.job.is_some() {
                ui.heading("Loading…");
                ui.horizontal(|ui| {
                    ui.spinner();
                    // Once the ranks are known the parameter bar shows it.
                    if self.profile.is_none() {
                        self.progress_ui(ui);
                    }
                });
            } else {
                ui.heading("memsight");
                ui.label("Open a profiling folder (*_ascend_pt, *_ascend_ms, PROF_*, a cluster folder) or an ascend_pytorch_profiler*.db.");
            }
            ui.add_space(12.0);
            if ui.button("Open folder…").clicked() {
                self.pick(PickKind::Folder);
            }
        });
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
