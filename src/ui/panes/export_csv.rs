//! Export CSV…: asks for a file name and writes every row matching the table's query, in a job.

use std::path::PathBuf;
use std::sync::Arc;

use crate::analysis::{RankView, TableQuery, query};
use crate::export::write_rows_csv;
use crate::ui::format::grouped;
use crate::ui::jobs::{Job, JobKey, Jobs, Place, Poll};

/// The native save dialog (rfd, through the XDG desktop portal on Linux); blocks.
pub fn native_save_picker() -> Option<PathBuf> {
    rfd::FileDialog::new()
        .set_file_name("memory_details.csv")
        .add_filter("CSV", &["csv"])
        .save_file()
}

/// The exporter: the running export and what the last one did.
pub struct Exporter {
    /// The save dialog ([`native_save_picker`] unless replaced).
    pub save_picker: fn() -> Option<PathBuf>,
    /// What the last export did (or that one runs).
    pub status: Option<String>,
    job: Option<Job<String>>,
}

impl Default for Exporter {
    fn default() -> Self {
        Exporter {
            save_picker: native_save_picker,
            status: None,
            job: None,
        }
    }
}

impl Exporter {
    /// Starts an export of every row `q` matches in `view` (its page and page size ignored).
    pub fn start(&mut self, jobs: &mut Jobs, view: Arc<RankView>, q: TableQuery) {
        self.status = Some("choose where to save the CSV…".into());
        let picker = self.save_picker;
        let job = jobs.run(JobKey::Export, Place::Thread, move |_| {
            let Some(path) = picker() else {
                return "export cancelled".to_string();
            };
            let all = TableQuery {
                page: 0,
                page_size: usize::MAX,
                ..q
            };
            let page = query(&view.data, &view.sort_cache, &all);
            let result = std::fs::File::create(&path).and_then(|f| {
                let mut w = std::io::BufWriter::new(f);
                write_rows_csv(&view.data, &page.rows, &mut w)?;
                std::io::Write::flush(&mut w)
            });
            match result {
                Ok(()) => format!(
                    "wrote {} rows to {}",
                    grouped(page.rows.len() as f64, 0),
                    path.display()
                ),
                Err(e) => format!("cannot write {}: {e}", path.display()),
            }
        });
        if let Some(e) = &job.start_error {
            self.status = Some(format!("cannot start the export: {e}"));
        } else {
            self.job = Some(job);
        }
    }

    /// Takes the running export's report, if it has one.
    pub fn poll(&mut self) {
        if let Some(job) = &self.job {
            match job.poll() {
                Poll::Msg(status) => {
                    self.status = Some(status);
                    self.job = None;
                }
                Poll::Finished => self.job = None,
                Poll::Pending => {}
            }
        }
    }
}
