//! Where a rank's files are: the folders beside its memory files that hold `trace_view.json`
//! and `kernel_details.csv`, and the rank's `trace_view.json` extract, read at most once per
//! load and handed to every stage that needs it (steps, device memory, host ops).

use std::path::{Path, PathBuf};

use super::chunks::LoadControl;
use super::error::LoadError;
use super::trace_view::{TraceError, TraceExtract, read_trace_view};
use crate::model::{DataSource, Message, RankData};

/// The rank's `trace_view.json` and what reading it gave: read once, on first demand (or handed
/// in, when it was read on a thread while the CSV files were parsed); a failure is one warning.
#[derive(Default)]
pub struct RankTrace {
    /// The file, once looked for.
    path: Option<Option<PathBuf>>,
    /// What reading it gave, once read.
    read: Option<Option<TraceExtract>>,
    /// Read ahead (path, result), waiting to be taken.
    early: Option<(PathBuf, Result<TraceExtract, TraceError>)>,
}

impl RankTrace {
    /// A trace read ahead: used when it is the rank's file.
    pub fn with_early(early: Option<(PathBuf, Result<TraceExtract, TraceError>)>) -> RankTrace {
        RankTrace {
            early,
            ..RankTrace::default()
        }
    }

    /// The rank's extract, reading the file the first time (`None`: no file, or it could not be
    /// read, which was said once in `data`'s report, as `unreadable` words it for the stage that
    /// asked first).
    pub fn extract(
        &mut self,
        data: &mut RankData,
        control: &LoadControl,
        unreadable: fn(crate::model::Cause) -> Message,
    ) -> Result<Option<&mut TraceExtract>, LoadError> {
        if self.read.is_none() {
            let path = self
                .path
                .get_or_insert_with(|| find(&output_dirs(data), "trace_view.json"))
                .clone();
            let got = match path {
                None => None,
                Some(path) => {
                    let result = match self.early.take() {
                        Some((p, r)) if p == path => r,
                        _ => read_trace_view(&path, control),
                    };
                    match result {
                        Ok(t) => {
                            if t.cut_short {
                                data.report.warn(Message::TraceCutShort {
                                    path: path.display().to_string(),
                                });
                            }
                            Some(t)
                        }
                        Err(TraceError::Cancelled) => return Err(LoadError::Cancelled),
                        Err(e) => {
                            data.report.warn(unreadable((&e).into()));
                            None
                        }
                    }
                }
            };
            self.read = Some(got);
        }
        Ok(self.read.as_mut().and_then(Option::as_mut))
    }

    /// The file the extract was read from, once looked for.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_ref().and_then(Option::as_deref)
    }
}

/// The rank's `trace_view.json`, if there is one beside its memory files.
pub fn trace_view_of(data: &RankData) -> Option<PathBuf> {
    find(&output_dirs(data), "trace_view.json")
}

/// Folders that may hold the rank's trace_view.json / kernel_details.csv: the folder of its
/// memory files (or DB), then `<rank>/ASCEND_PROFILER_OUTPUT`.
pub(super) fn output_dirs(data: &RankData) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = Vec::new();
    let mut add = |p: Option<&Path>| {
        if let Some(p) = p
            && !dirs.iter().any(|d| d == p)
        {
            dirs.push(p.to_path_buf());
        }
    };
    match &data.info.source {
        DataSource::Csv { memory_record, .. } => {
            add(memory_record.first().and_then(|p| p.parent()));
        }
        DataSource::Db {
            path, csv_fallback, ..
        } => {
            add(path.parent());
            if let Some(fb) = csv_fallback.as_deref()
                && let DataSource::Csv { memory_record, .. } = fb
            {
                add(memory_record.first().and_then(|p| p.parent()));
            }
        }
        DataSource::Imported { path, .. } => add(path.parent()),
    }
    add(Some(&data.info.dir.join("ASCEND_PROFILER_OUTPUT")));
    dirs
}

pub(super) fn find(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}
