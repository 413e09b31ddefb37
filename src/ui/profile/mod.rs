//! The profile as a document: a folder or `.db` of Ascend or PyTorch profiling output, its
//! loaded ranks (the [`Session`], kept across the profiles opened one after another), the load
//! in progress, the cluster overview, the comparison's baseline, and the panes (memory chart,
//! bottom tabs, static graph). Before anything is open it is the start page.
//!
//! Split by job: what a load's messages do (`load_events.rs`), the commands it handles
//! (`commands.rs`), one frame's layout (`layout.rs`), the Save chart as PNG report
//! (`report.rs`). The app knows it only as a [`Document`]; tests reach it through
//! [`crate::ui::app::MemsightApp`]'s test-support methods.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::baseline::BaselineSlot;
use super::command::Command;
use super::document::{DocCx, DocEvent, Document};
use super::i18n::Tr;
use super::loading::Loading;
use super::overview::Overview;
use super::panes::details_table::DetailsPane;
use super::panes::memory_chart::MemoryChart;
use super::panes::static_view::{StaticChart, StaticTable};
use super::panes::tab::BottomPanes;
use super::session::{RankKey, Session};
use super::state::ViewState;
use crate::analysis::RankView;
use crate::model::{SourceChoice, TimeWindow};

mod commands;
mod layout;
mod load_events;
mod report;

/// The profile on screen, or the start page.
#[derive(Default)]
pub struct ProfileDocument {
    /// The opened profile and its loaded ranks.
    pub(crate) session: Session,
    /// Why nothing could be shown (the start page says it).
    pub(crate) error: Option<String>,
    /// The path being opened, added to the recent list once it proves to be a profile.
    opening: Option<PathBuf>,
    /// The rank load in progress.
    loading: Option<Loading>,
    /// Set by `wait_for_first_look`: the load's later messages wait in its channel until
    /// `release_load`, so a test can look at the first look.
    hold_load: bool,
    /// The other side of a comparison, when comparing.
    pub(crate) baseline: BaselineSlot,
    /// The cluster overview (profiles with more than one rank).
    overview: Option<Overview>,
    /// Where the cluster overview drew each rank's bar last frame (tests click them).
    overview_bars: Vec<(usize, egui::Rect)>,
    /// The rank opened on its own (no user's choice yet) while the overview reads every rank:
    /// once it has, the view moves to the device rank with the highest peak unless the user
    /// chose one meanwhile.
    auto_rank: Option<usize>,
    /// How many rank loads were started (a rank shown again from the session starts none).
    pub(crate) loads_started: usize,
    /// The open path is the generated demo (its banner shows).
    showing_demo: bool,
    /// The files the rank on screen was asked from, as last handled (a Data switch to the
    /// same files loads nothing).
    source: SourceChoice,
    /// The memory chart pane.
    pub(crate) chart: MemoryChart,
    /// The views of the bottom pane (details, steps, call stacks, diff, …).
    pub(crate) panes: BottomPanes,
    /// The static graph's chart pane.
    pub(crate) static_chart: StaticChart,
    /// The static graph's op table pane.
    pub(crate) static_table: StaticTable,
}

impl ProfileDocument {
    /// Opens `path` as a profile in place of what it showed, keeping the session's loaded
    /// ranks (the bound evicts them) and the panes.
    pub(crate) fn open(&mut self, path: PathBuf, cx: &mut DocCx<'_>) {
        self.loading = None;
        self.overview = None; // dropping it cancels its job
        self.auto_rank = None;
        self.error = None;
        // Looked up once here, not in every frame (it reads the disk).
        self.showing_demo = crate::cli::is_demo(&path);
        self.opening = Some(path.clone());
        self.source = cx.state.source;
        self.session.open(path);
        self.show_rank(cx);
    }

    /// The key of the rank on screen: the state's rank and source in the open profile, once
    /// the session has it (its first look included). Derived, never stored.
    pub fn current(&self, state: &ViewState) -> Option<RankKey> {
        let key = self.session.key(state.rank, state.source);
        self.session.peek(key).map(|_| key)
    }

    /// The rank on screen.
    pub fn view(&self, state: &ViewState) -> Option<Arc<RankView>> {
        self.current(state)
            .and_then(|k| self.session.peek(k))
            .map(Arc::clone)
    }

    /// The opened path.
    pub fn path(&self) -> Option<&Path> {
        self.session.path.as_deref()
    }

    /// The details tab.
    pub(crate) fn details(&self) -> Option<&DetailsPane> {
        self.panes.get::<DetailsPane>()
    }

    /// The cluster overview, when the profile has more than one rank.
    pub(crate) fn overview(&self) -> Option<&Overview> {
        self.overview.as_ref()
    }

    /// The same, mutable.
    pub(crate) fn overview_mut(&mut self) -> Option<&mut Overview> {
        self.overview.as_mut()
    }

    /// Where the cluster overview drew each rank's bar last frame.
    pub(crate) fn overview_bars(&self) -> &[(usize, egui::Rect)] {
        &self.overview_bars
    }

    /// True while a rank loads.
    pub fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Puts the state's rank (from the state's files) on screen: at once when the session has
    /// it, else by a load job started for exactly that key (a load of another key is
    /// cancelled). Before discovery has finished, discovery starts again with the new choice.
    pub(crate) fn show_rank(&mut self, cx: &mut DocCx<'_>) {
        let Some(path) = self.session.path.clone() else {
            return;
        };
        self.error = None;
        let key = self.session.key(cx.state.rank, cx.state.source);
        if self.session.get(key).is_some() {
            self.loading = None; // dropping the handle cancels a load of another rank
            return;
        }
        if self.loading.as_ref().is_some_and(|l| l.key == key) {
            return; // already on its way
        }
        self.loads_started += 1;
        let profile = self.session.profile.clone();
        self.loading = Some(super::loading::start_load(cx.jobs, path, profile, key));
    }

    /// Once the overview has read every rank, a rank the app opened on its own gives way to the
    /// one a user means ([`crate::analysis::rank_meant::rank_meant`]: the device rank with the
    /// highest peak), the overview staying on screen; a rank the user chose stays.
    fn follow_the_peak(&mut self, cx: &mut DocCx<'_>) {
        let (Some(auto), Some(overview), Some(profile)) =
            (self.auto_rank, &self.overview, &self.session.profile)
        else {
            return;
        };
        if overview.is_running() {
            return;
        }
        self.auto_rank = None;
        if cx.state.rank != auto || !cx.state.show_overview {
            return;
        }
        let seen: Vec<crate::analysis::rank_meant::Seen> = profile
            .ranks
            .iter()
            .zip(&overview.rows)
            .map(|(info, row)| {
                let peak = row.as_ref().and_then(|r| r.peaks.operator_allocated);
                crate::analysis::rank_meant::Seen::of(info.device.as_deref(), peak.map(|p| p.mib))
            })
            .collect();
        if let Some(best) = crate::analysis::rank_meant::rank_meant(&seen)
            && best != auto
        {
            cx.out.push(Command::SelectRank(best));
            cx.out.push(Command::ShowOverview(true));
        }
    }

    /// A baseline a job loaded from the open profile goes into the session under its key: it
    /// counts in the memory bound, and showing that rank later needs no load.
    pub(crate) fn cache_baseline(&mut self) {
        if let Some(b) = &self.baseline.loaded
            && let Some(key) = b.key
            && key.profile == self.session.profile_id()
            && self.session.peek(key).is_none()
        {
            self.session.insert(key, Arc::clone(&b.view));
        }
    }
}

impl Document for ProfileDocument {
    fn kind(&self) -> &'static str {
        "profile"
    }

    fn path(&self) -> Option<&Path> {
        ProfileDocument::path(self)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>) {
        self.frame_ui(ui, cx);
    }

    /// The demo's banner and the parameter bar.
    fn top_ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>) {
        if self.showing_demo {
            super::top_bar::demo_banner(ui, cx.t, cx.out);
        }
        let view = self.view(cx.state);
        super::top_bar::parameters_ui(
            ui,
            cx.t,
            &self.session,
            view.as_ref(),
            cx.state,
            &self.baseline,
            cx.out,
        );
    }

    /// The load's messages, the overview's summaries, the baseline.
    fn poll(&mut self, cx: &mut DocCx<'_>) -> bool {
        self.poll_load(cx);
        let mut changed = self.overview.as_mut().is_some_and(Overview::poll);
        if changed {
            self.follow_the_peak(cx);
        }
        if self.baseline.poll() {
            self.cache_baseline();
            changed = true;
        }
        changed
    }

    /// A rank the profile does not have is no change at all.
    fn refuses(&self, cmd: &Command) -> bool {
        match cmd {
            Command::SelectRank(rank) => self
                .session
                .profile
                .as_ref()
                .is_none_or(|p| *rank >= p.ranks.len()),
            _ => false,
        }
    }

    fn handle(&mut self, cmd: &Command, cx: &mut DocCx<'_>) -> bool {
        self.handle_command(cmd, cx)
    }

    fn progress(&self) -> Option<&Loading> {
        self.loading
            .as_ref()
            .filter(|_| self.session.profile.is_some())
    }

    fn chart_report(
        &self,
        t: &'static Tr,
        state: &ViewState,
        pixels_per_point: f32,
    ) -> Option<super::chart_image::ChartReport> {
        report::chart_report(self, t, state, pixels_per_point)
    }

    /// The details table's export, to the file the in-app browser gave.
    fn save_to(&mut self, path: PathBuf, cx: &mut DocCx<'_>) {
        if let Some(d) = self.panes.get_mut::<DetailsPane>() {
            d.exporting_table().exporter.write_to(cx.jobs, path, cx.t);
        }
    }

    fn chart_extent(&self, state: &ViewState) -> Option<(f64, f64)> {
        self.view(state).map(|v| {
            let (a, b) = v.time_extent();
            TimeWindow::new(a, b).ms()
        })
    }

    fn set_chart_range(&mut self, (a, b): (f64, f64), out: &mut Vec<Command>) {
        out.push(Command::SetWindow {
            window: TimeWindow::from_ms(a, b),
            moving: true,
        });
    }
}

/// Asks the app for a file name when the details table's export wants the in-app browser.
fn ask_save_path(panes: &mut BottomPanes, events: &mut Vec<DocEvent>) {
    if panes
        .get_mut::<DetailsPane>()
        .is_some_and(DetailsPane::wants_browser)
    {
        events.push(DocEvent::AskSavePath);
    }
}
