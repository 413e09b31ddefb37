//! Finding a rank's training steps and the device's memory total where the profiler left them:
//! the DB's `STEP_TIME` and `NPU_MEM` (read with the DB), else `trace_view.json` beside the
//! memory files, else the `Step Id` of `kernel_details.csv`.

use std::collections::BTreeMap;

use super::chunks::LoadControl;
use super::csv_tables::{FileError, read_kernel_steps};
use super::error::LoadError;
use super::layout::{RankTrace, find, output_dirs};
use super::time_window::session_from_profiler_info;
use crate::model::{DataSource, RankData, Step, StepSource, Steps};

/// Fills `data.steps` (and `data.device_memory` when still empty) from the files beside the
/// rank's memory files: the rank's `trace_view.json` extract (read once per rank, see
/// [`RankTrace`]), else `kernel_details.csv`. A file that cannot be read is a warning, never an
/// error.
pub fn attach_steps(
    data: &mut RankData,
    trace: &mut RankTrace,
    control: &LoadControl,
) -> Result<(), LoadError> {
    let dirs = output_dirs(data);
    let need_device = data.device_memory.is_empty();
    let unreadable = |cause| crate::model::Message::TraceUnreadable { cause };
    if (data.steps.is_none() || need_device)
        && let Some(t) = trace.extract(data, control, unreadable)?
    {
        let bad_events = t.unreadable;
        if data.steps.is_none() && !t.steps.is_empty() {
            data.steps = Some(Steps::new(
                StepSource::TraceView,
                std::mem::take(&mut t.steps),
            ));
        }
        if need_device {
            data.device_memory = std::sync::Arc::new(std::mem::take(&mut t.device));
        }
        if bad_events > 0 {
            let path = trace.path().map(|p| p.display().to_string());
            data.report
                .warn(crate::model::Message::StepEventsUnreadable {
                    path: path.unwrap_or_default(),
                    count: bad_events,
                });
        }
    }

    if data.steps.is_none()
        && let Some(kernels) = find(&dirs, "kernel_details.csv")
    {
        let session = session_from_profiler_info(&data.info.dir);
        let only_device = match &data.info.source {
            DataSource::Csv { device, .. } => device.clone(),
            DataSource::Db { .. } | DataSource::Imported { .. } => None,
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
            Err(e) => data
                .report
                .warn(crate::model::Message::KernelUnreadable { cause: (&e).into() }),
        }
    }
    Ok(())
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
