//! Finding a rank's training steps and the device's memory total where the profiler left them:
//! the DB's `STEP_TIME` and `NPU_MEM` (read with the DB), else `trace_view.json` beside the
//! memory files, else the `Step Id` of `kernel_details.csv`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::chunks::LoadControl;
use super::csv_tables::{FileError, read_kernel_steps};
use super::load::LoadError;
use super::time_window::session_from_profiler_info;
use super::trace_view::{TraceError, TraceExtract, read_trace_view};
use crate::model::{DataSource, HostOps, RankData, Step, StepSource, Steps};

/// Fills `data.steps` (and `data.device_memory` when still empty) from the files beside the
/// rank's memory files. A file that cannot be read is a warning, never an error. Returns the
/// host ops of `trace_view.json` when it was read (for [`super::stacks::attach_stacks`]).
/// `early` is the trace already read (while the CSV files were parsed), if it was.
pub fn attach_steps(
    data: &mut RankData,
    control: &LoadControl,
    early: Option<EarlyTrace>,
) -> Result<Option<HostOps>, LoadError> {
    let dirs = output_dirs(data);
    let need_device = data.device_memory.is_empty();
    let mut host = None;
    if (data.steps.is_none() || need_device)
        && let Some(trace) = find(&dirs, "trace_view.json")
    {
        let read = match early {
            Some((path, result)) if path == trace => result,
            _ => read_trace_view(&trace, control),
        };
        match read {
            Ok(t) => {
                host = Some(t.host);
                if data.steps.is_none() && !t.steps.is_empty() {
                    data.steps = Some(Steps::new(StepSource::TraceView, t.steps));
                }
                if need_device {
                    data.device_memory = t.device;
                }
                if t.unreadable > 0 {
                    data.report
                        .warn(crate::model::Message::StepEventsUnreadable {
                            path: trace.display().to_string(),
                            count: t.unreadable,
                        });
                }
            }
            Err(TraceError::Cancelled) => return Err(LoadError::Cancelled),
            Err(e) => data.report.warn(crate::model::Message::TraceUnreadable {
                cause: e.to_string(),
            }),
        }
    }

    if data.steps.is_none()
        && let Some(kernels) = find(&dirs, "kernel_details.csv")
    {
        let session = session_from_profiler_info(&data.info.dir);
        let only_device = match &data.info.source {
            DataSource::Csv { device, .. } => device.clone(),
            DataSource::Db { .. } => None,
        };
        let mut rows = Vec::new();
        match read_kernel_steps(
            &kernels,
            session,
            only_device.as_deref(),
            control,
            &mut rows,
        ) {
            Ok(o) => {
                if o.report.skipped.count > 0 {
                    data.report.warn(crate::model::Message::KernelRowsSkipped {
                        path: kernels.display().to_string(),
                        count: o.report.skipped.count,
                    });
                }
                let steps = kernel_extents(&rows);
                if !steps.is_empty() {
                    data.steps = Some(Steps::new(StepSource::KernelDetails, steps));
                }
            }
            Err(FileError::Cancelled) => return Err(LoadError::Cancelled),
            // No Step Id column is the normal case without a schedule: no warning.
            Err(FileError::MissingColumn { .. }) => {}
            Err(e) => data.report.warn(crate::model::Message::KernelUnreadable {
                cause: e.to_string(),
            }),
        }
    }
    Ok(host)
}

/// A `trace_view.json` and what reading it gave.
pub type EarlyTrace = (PathBuf, Result<TraceExtract, TraceError>);

/// The rank's `trace_view.json`, if there is one beside its memory files.
pub fn trace_view_of(data: &RankData) -> Option<PathBuf> {
    find(&output_dirs(data), "trace_view.json")
}

/// Each step's extent over its kernels: the earliest start to the latest end.
fn kernel_extents(rows: &[(i64, i64, i64)]) -> Vec<Step> {
    let mut by_id: BTreeMap<i64, (i64, i64)> = BTreeMap::new();
    for &(id, s, e) in rows {
        let v = by_id.entry(id).or_insert((s, e));
        v.0 = v.0.min(s);
        v.1 = v.1.max(e);
    }
    by_id
        .into_iter()
        .map(|(id, (s, e))| Step {
            id,
            start_ns: s,
            end_ns: e,
        })
        .collect()
}

/// Folders that may hold the rank's trace_view.json / kernel_details.csv: the folder of its
/// memory files (or DB), then `<rank>/ASCEND_PROFILER_OUTPUT`.
fn output_dirs(data: &RankData) -> Vec<PathBuf> {
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
    }
    add(Some(&data.info.dir.join("ASCEND_PROFILER_OUTPUT")));
    dirs
}

fn find(dirs: &[PathBuf], name: &str) -> Option<PathBuf> {
    dirs.iter().map(|d| d.join(name)).find(|p| p.is_file())
}
