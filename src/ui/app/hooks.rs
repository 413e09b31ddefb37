//! What tests and headless runs look at or wait for: kept apart from the app's own work.

use super::MemsightApp;
use crate::ui::panes::align_offset;

impl MemsightApp {
    /// Where the memory chart's plot area was drawn in the last frame (tests aim clicks at it).
    pub fn chart_plot_rect(&self) -> Option<egui::Rect> {
        self.chart.last_plot_rect
    }

    /// Where the cluster overview drew each rank's bar last frame: (rank index, screen rect).
    pub fn overview_bar_rects(&self) -> &[(usize, egui::Rect)] {
        &self.overview_bars
    }

    /// The memory chart's y axis range last frame, in its unit (MB or GB).
    pub fn chart_y_range(&self) -> Option<(f64, f64)> {
        self.chart.last_y_range
    }

    /// The call stacks tab's zoom: the path of the frame zoomed into (empty: the whole graph).
    pub fn flame_focus(&self) -> Vec<crate::analysis::stacks::FlameFrame> {
        self.panes
            .get::<crate::ui::panes::flame::FlamePane>()
            .map(|f| f.focus.clone())
            .unwrap_or_default()
    }

    /// The peak labels the memory chart drew in the last frame.
    pub fn chart_peak_labels(&self) -> &[crate::ui::panes::memory_chart::PeakLabel] {
        &self.chart.last_peak_labels
    }

    /// Waits for the baseline to load and its diff against the rank on screen (tests).
    pub fn wait_for_baseline(&mut self) {
        let view = self.view();
        self.baseline.wait(&mut self.jobs, view.as_ref());
        self.cache_baseline();
    }

    /// The shift applied to the baseline's times (ns), when comparing.
    pub fn compare_offset(&self) -> Option<i64> {
        let (b, cur) = (self.baseline.loaded.as_ref()?, self.view()?);
        Some(align_offset(&cur, &b.view, self.state.align_step))
    }

    /// The cluster overview, when the profile has more than one rank.
    pub fn overview(&self) -> Option<&crate::ui::overview::Overview> {
        self.overview.as_ref()
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
}

impl MemsightApp {
    /// Shows `doc` as if it had been opened (tests prove the [`crate::ui::document`] seam with a
    /// document of their own; the app opens its own through the registry).
    pub fn show_document(&mut self, doc: Box<dyn crate::ui::document::Document>) {
        self.loading = None;
        self.overview = None;
        self.error = None;
        self.showing_demo = false;
        self.document = Some(doc);
    }
}
