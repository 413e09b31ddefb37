//! Save chart as PNG: the chart's last drawn figure with a caption (profile, rank, window),
//! drawn as a report image ([`crate::ui::chart_image`]), then a file name from the native dialog
//! or the in-app browser.

use std::path::Path;

use super::MemsightApp;
use crate::ui::chart_image::{ChartReport, report_png};
use crate::ui::file_browser::{PickOutcome, Purpose};
use crate::ui::jobs::{JobKey, Place, Poll};

/// Why Save chart as PNG saved nothing: the view on screen has no memory chart.
pub const NO_CHART: crate::ui::i18n::Text = crate::ui::i18n::Text {
    en: "this view has no memory chart",
    zh: "当前视图没有内存曲线图",
};

impl MemsightApp {
    /// The report Save chart as PNG draws now: the figure the document's chart drew last
    /// frame and its caption; `None` before a chart was drawn.
    pub fn chart_report(&self) -> Option<ChartReport> {
        let ppp = self
            .ctx
            .as_ref()
            .map_or(1.0, egui::Context::pixels_per_point);
        self.document.chart_report(self.tr(), &self.state, ppp)
    }

    /// Draws the chart's report and asks where to save it; says why not when the view on
    /// screen has no memory chart drawn (a snapshot, a summary, the start page).
    pub(super) fn request_chart_shot(&mut self) {
        let t = self.tr();
        let Some(report) = self.chart_report() else {
            self.notice = Some((t.cannot_save_chart)(NO_CHART.get(t)));
            return;
        };
        match report_png(&report) {
            Ok(bytes) => self.chart_png = Some(bytes),
            Err(e) => {
                self.notice = Some((t.cannot_save_chart)(&e));
                return;
            }
        }
        let picker = std::sync::Arc::clone(&self.png_picker);
        let job = self
            .jobs
            .run(JobKey::named("chart png"), Place::Thread, move |_| picker());
        if job.start_error.is_some() {
            let start = crate::ui::file_browser::save_folder();
            self.browser
                .show_for(Purpose::SaveChart, start.as_deref(), t);
        } else {
            self.png_dialog = Some(job);
        }
    }

    /// Writes the waiting chart image to `path` and says so.
    pub(super) fn write_chart_png(&mut self, path: &Path) {
        let t = self.tr();
        if let Some(bytes) = self.chart_png.take() {
            self.notice = Some(match crate::ui::chart_image::save_png(&bytes, path) {
                Ok(()) => (t.saved_chart)(&path.display().to_string()),
                Err(e) => (t.cannot_save_chart)(&e.render(t.lang)),
            });
        }
    }

    /// Save chart as PNG's progress: the file name.
    pub(super) fn poll_chart_png(&mut self) {
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
}
