//! The test-support surface: what tests and headless runs look at, wait for or put in, kept
//! apart from the app's own work. Tests reach the app through these methods (rerun's
//! `viewer_test_utils` is the model), never through its fields: the app's parts are
//! `pub(crate)`. The methods that return a part of the profile (its session, baseline, chart,
//! tables) panic when another document is on screen: the test asked the wrong thing.

use super::MemsightApp;
use crate::ui::baseline::BaselineSlot;
use crate::ui::command::PickKind;
use crate::ui::file_browser::{FileBrowser, PickOutcome};
use crate::ui::panes::align_offset;
use crate::ui::panes::details_table::DetailsPane;
use crate::ui::panes::memory_chart::MemoryChart;
use crate::ui::panes::static_view::StaticTable;
use crate::ui::prefs::Prefs;
use crate::ui::profile::ProfileDocument;
use crate::ui::session::Session;

/// The profile document every app has when a profile (or the start page) is on screen.
const NO_PROFILE: &str = "a profile is on screen";

impl MemsightApp {
    /// The profile on screen; panics when another document is (a test asked the wrong thing).
    fn profile_shown(&self) -> &ProfileDocument {
        self.profile_doc().expect(NO_PROFILE)
    }

    /// The same, mutable.
    fn profile_shown_mut(&mut self) -> &mut ProfileDocument {
        self.document_mut::<ProfileDocument>().expect(NO_PROFILE)
    }

    /// Why nothing could be shown (the start page says it); `None` while a profile shows, or
    /// another document is on screen.
    pub fn error(&self) -> Option<&str> {
        self.profile_doc()?.error.as_deref()
    }

    /// The profile's loaded ranks.
    pub fn session(&self) -> &Session {
        &self.profile_shown().session
    }

    /// The same, mutable (a test sets its memory bound).
    pub fn session_mut(&mut self) -> &mut Session {
        &mut self.profile_shown_mut().session
    }

    /// How many rank loads were started (a rank shown again from the session starts none).
    pub fn loads_started(&self) -> usize {
        self.profile_doc().map_or(0, |p| p.loads_started)
    }

    /// The other side of a comparison.
    pub fn baseline(&self) -> &BaselineSlot {
        &self.profile_shown().baseline
    }

    /// The memory chart pane.
    pub fn chart(&self) -> &MemoryChart {
        &self.profile_shown().chart
    }

    /// The same, mutable (a test sets its thresholds).
    pub fn chart_mut(&mut self) -> &mut MemoryChart {
        &mut self.profile_shown_mut().chart
    }

    /// The static graph's chart pane.
    pub fn static_chart(&self) -> &crate::ui::panes::static_view::StaticChart {
        &self.profile_shown().static_chart
    }

    /// The static graph's op table pane.
    pub fn static_table(&self) -> &StaticTable {
        &self.profile_shown().static_table
    }

    /// The details tab (its tables, their copy and export).
    pub fn details(&self) -> &DetailsPane {
        self.profile_shown()
            .details()
            .expect("the details pane is always registered")
    }

    /// The same, mutable (a test puts in its save dialog).
    pub fn details_mut(&mut self) -> &mut DetailsPane {
        self.profile_shown_mut()
            .panes
            .get_mut::<DetailsPane>()
            .expect("the details pane is always registered")
    }

    /// The language, theme, recent paths and reopen choice.
    pub fn prefs(&self) -> &Prefs {
        &self.prefs
    }

    /// The in-app browser.
    pub fn browser(&self) -> &FileBrowser {
        &self.browser
    }

    /// True while the Open path… dialog is on screen.
    pub fn path_dialog_open(&self) -> bool {
        self.path_dialog_open
    }

    /// The background tasks that failed, until dismissed.
    pub fn failures(&self) -> &[crate::ui::jobs::JobFailure] {
        &self.failures
    }

    /// Puts in the open dialog tests answer with.
    pub fn set_picker(&mut self, picker: impl Fn(PickKind) -> PickOutcome + Send + Sync + 'static) {
        self.picker = std::sync::Arc::new(picker);
    }

    /// Puts in the save dialog of Save chart as PNG.
    pub fn set_png_picker(&mut self, picker: impl Fn() -> PickOutcome + Send + Sync + 'static) {
        self.png_picker = std::sync::Arc::new(picker);
    }

    /// True while a rank loads.
    pub fn is_loading(&self) -> bool {
        self.profile_doc().is_some_and(ProfileDocument::is_loading)
    }

    /// Blocks until the running load finishes (tests, headless runs).
    pub fn wait_for_load(&mut self) {
        self.with_profile(|p, cx| p.wait_for_load(cx));
    }

    /// Blocks until the running load shows its first look (the curves, before the rest of the
    /// rank is read) or ends; then holds its later messages until [`Self::release_load`]. True
    /// when a first look is on screen. For tests: the state in between is otherwise too short
    /// to look at.
    pub fn wait_for_first_look(&mut self) -> bool {
        self.with_profile(|p, cx| p.wait_for_first_look(cx))
            .unwrap_or(false)
    }

    /// Lets the load held by [`Self::wait_for_first_look`] go on.
    pub fn release_load(&mut self) {
        if let Some(p) = self.document_mut::<ProfileDocument>() {
            p.release_load();
        }
    }

    /// Where the memory chart's plot area was drawn in the last frame (tests aim clicks at it).
    pub fn chart_plot_rect(&self) -> Option<egui::Rect> {
        self.profile_doc()?.chart.last_plot_rect
    }

    /// Where the cluster overview drew each rank's bar last frame: (rank index, screen rect).
    pub fn overview_bar_rects(&self) -> &[(usize, egui::Rect)] {
        self.profile_doc()
            .map_or(&[], ProfileDocument::overview_bars)
    }

    /// The memory chart's y axis range last frame, in its unit (MB or GB).
    pub fn chart_y_range(&self) -> Option<(f64, f64)> {
        self.profile_doc()?.chart.last_y_range
    }

    /// The call stacks tab's zoom: the path of the frame zoomed into (empty: the whole graph).
    pub fn flame_focus(&self) -> Vec<crate::analysis::stacks::FlameFrame> {
        self.profile_doc()
            .and_then(|p| p.panes.get::<crate::ui::panes::flame::FlamePane>())
            .map(|f| f.focus.clone())
            .unwrap_or_default()
    }

    /// The peak labels the memory chart drew in the last frame.
    pub fn chart_peak_labels(&self) -> &[crate::ui::panes::memory_chart::PeakLabel] {
        self.profile_doc()
            .map_or(&[], |p| p.chart.last_peak_labels.as_slice())
    }

    /// Waits for the baseline to load and its diff against the rank on screen (tests).
    pub fn wait_for_baseline(&mut self) {
        let view = self.view();
        self.with_profile(|p, cx| {
            p.baseline.wait(cx.jobs, view.as_ref());
            p.cache_baseline();
        });
    }

    /// The shift applied to the baseline's times (ns), when comparing.
    pub fn compare_offset(&self) -> Option<i64> {
        let (b, cur) = (self.profile_doc()?.baseline.loaded.as_ref()?, self.view()?);
        Some(align_offset(&cur, &b.view, self.state.align_step))
    }

    /// The cluster overview, when the profile has more than one rank.
    pub fn overview(&self) -> Option<&crate::ui::overview::Overview> {
        self.profile_doc()?.overview()
    }

    /// True while a file dialog's job has not answered yet.
    pub fn dialog_open(&self) -> bool {
        self.dialog.is_some()
    }

    /// Makes the jobs started under `key` from now on (a load, the overview) wait before they
    /// run until the gate is opened or the job cancelled: a test can then act on a job that
    /// is certainly still running, however fast the machine is.
    pub fn gate_jobs(&mut self, key: crate::ui::jobs::JobKey) -> crate::ui::jobs::JobGate {
        self.jobs.gate(key)
    }

    /// Waits until the overview has summarised every rank (tests and headless runs).
    pub fn wait_for_overview(&mut self) {
        if let Some(o) = self
            .document_mut::<ProfileDocument>()
            .and_then(ProfileDocument::overview_mut)
        {
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

    /// Shows `doc` as if it had been opened (tests prove the [`crate::ui::document`] seam with a
    /// document of their own; the app opens its own through the registry).
    pub fn show_document(&mut self, doc: Box<dyn crate::ui::document::Document>) {
        self.document = doc;
    }
}
