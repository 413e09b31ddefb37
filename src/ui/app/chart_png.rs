//! Save chart as PNG: a screenshot of the window, the chart's part of it cropped
//! ([`crate::ui::chart_image`]), then a file name from the native dialog or the in-app browser.

use std::path::Path;

use super::MemsightApp;
use crate::ui::file_browser::{PickOutcome, Purpose};
use crate::ui::jobs::{JobKey, Place, Poll};

impl MemsightApp {
    /// Asks the window for a screenshot; the chart's part of it is saved once it arrives.
    pub(super) fn request_chart_shot(&mut self) {
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
        self.chart_png = Some(crate::ui::chart_image::crop(image, rect, ppp));
        let picker = self.png_picker;
        let job = self.jobs.run(
            JobKey::Named("chart png".into()),
            Place::Thread,
            move |_| picker(),
        );
        if job.start_error.is_some() {
            let t = self.tr();
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
        if let Some(image) = self.chart_png.take() {
            self.notice = Some(match crate::ui::chart_image::save_png(&image, path) {
                Ok(()) => (t.saved_chart)(&path.display().to_string()),
                Err(e) => (t.cannot_save_chart)(&e),
            });
        }
    }

    /// Save chart as PNG's progress: the screenshot, then the file name.
    pub(super) fn poll_chart_png(&mut self) {
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
}
