//! Export CSV…: asks for a file name (the native save dialog, or the in-app browser when none can
//! be shown) and writes every row matching the table's query, in a job.

use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::{RankView, TableQuery, query};
use crate::export::write_rows_csv;
use crate::ui::file_browser::{PickOutcome, SavePicker, native_outcome};
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// The job that exports the details table.
pub const EXPORT_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("export", "exporting CSV", "导出 CSV");

/// The native save dialog (rfd, through the XDG desktop portal on Linux); blocks.
pub fn native_save_picker() -> PickOutcome {
    native_outcome(|| {
        let dialog = rfd::FileDialog::new();
        let dialog = match crate::ui::file_browser::save_folder() {
            Some(dir) => dialog.set_directory(dir),
            None => dialog,
        };
        dialog
            .set_file_name("memory_details.csv")
            .add_filter("CSV", &["csv"])
            .save_file()
    })
}

/// What an export job reports.
enum Step {
    /// The save dialog's answer.
    Chosen(PickOutcome),
    /// What the write did.
    Wrote(String),
}

/// The exporter: the running export and what the last one did.
pub struct Exporter {
    /// The save dialog ([`native_save_picker`] unless replaced).
    pub(crate) save_picker: SavePicker,
    /// What the last export did (or that one runs).
    pub(crate) status: Option<String>,
    job: Option<Job<Step>>,
    /// The rank and query being exported, until a file is chosen.
    pending: Option<(Arc<RankView>, TableQuery)>,
    /// The native dialog could not be shown: the app opens its browser.
    browser_wanted: bool,
}

impl Default for Exporter {
    fn default() -> Self {
        Exporter {
            save_picker: Arc::new(native_save_picker),
            status: None,
            job: None,
            pending: None,
            browser_wanted: false,
        }
    }
}

impl Exporter {
    /// Starts an export of every row `q` matches in `view` (its page and page size ignored):
    /// first the save dialog, in a job.
    pub fn start(&mut self, jobs: &mut Jobs, view: Arc<RankView>, q: TableQuery, t: &'static Tr) {
        self.status = Some(t.choose_save.into());
        self.pending = Some((view, q));
        let picker = Arc::clone(&self.save_picker);
        let job = jobs.run(JobKey::new(EXPORT_JOB), Place::Thread, move |_| {
            Step::Chosen(picker())
        });
        if job.start_error.is_some() {
            self.browser_wanted = true;
        } else {
            self.job = Some(job);
        }
    }

    /// True once (then false): the native dialog could not be shown, so the app should show its
    /// own browser and call [`Self::write_to`] with the chosen path.
    pub fn wants_browser(&mut self) -> bool {
        std::mem::take(&mut self.browser_wanted)
    }

    /// Writes the export [`Self::start`] began to `path` (nothing when none is pending).
    pub fn write_to(&mut self, jobs: &mut Jobs, path: PathBuf, t: &'static Tr) {
        let Some((view, q)) = self.pending.take() else {
            return;
        };
        self.job = Some(jobs.run(JobKey::new(EXPORT_JOB), Place::Thread, move |_| {
            Step::Wrote(write_csv(&view, q, &path, t))
        }));
    }

    /// Takes the running job's news: a chosen file starts the write, a dialog that could not
    /// be shown asks for the browser, a cancel says so.
    pub fn poll(&mut self, jobs: &mut Jobs, t: &'static Tr) {
        let Some(job) = &self.job else { return };
        match job.poll() {
            Poll::Pending => {}
            Poll::Finished => self.job = None,
            Poll::Failed(why) => {
                self.job = None;
                self.pending = None;
                self.status = Some((t.job_failed)(t.export_csv, &why));
            }
            Poll::Msg(Step::Wrote(status)) => {
                self.status = Some(status);
                self.job = None;
            }
            Poll::Msg(Step::Chosen(outcome)) => {
                self.job = None;
                match outcome {
                    PickOutcome::Picked(path) => self.write_to(jobs, path, t),
                    PickOutcome::Cancelled => {
                        self.pending = None;
                        self.status = Some(t.export_cancelled.into());
                    }
                    PickOutcome::Unavailable => self.browser_wanted = true,
                }
            }
        }
    }
}

/// Writes every row `q` matches to `path`; the status line.
fn write_csv(view: &RankView, q: TableQuery, path: &std::path::Path, t: &Tr) -> String {
    let all = TableQuery {
        page: 0,
        page_size: usize::MAX,
        ..q
    };
    let page = query(&view.data, &view.sort_cache, &all);
    let result = std::fs::File::create(path).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        write_rows_csv(&view.data, &page.rows, &mut w)?;
        std::io::Write::flush(&mut w)
    });
    match result {
        Ok(()) => (t.wrote_rows)(
            &grouped(page.rows.len() as f64, 0),
            &path.display().to_string(),
        ),
        Err(e) => (t.cannot_write)(&path.display().to_string(), &e.into()),
    }
}
