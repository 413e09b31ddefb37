//! Loading one rank on demand: every file of its source into a [`RankData`].

use super::chunks::LoadControl;
use super::csv_tables::{
    FileError, FileOutcome, read_memory_record, read_npu_module_mem, read_operator_memory,
    read_static_op_mem,
};
use super::db;
use super::time_window::session_from_profiler_info;
use crate::model::Message;
use crate::model::report::LoadReport;
use crate::model::{
    Cause, DataSource, Format, MemoryRecords, NULL, RankData, RankInfo, StepSource, Steps,
};
use std::path::PathBuf;
use std::sync::Arc;

pub use super::error::{LoadError, NoDataReason};

/// Loads everything of one rank. Bad rows are skipped and counted; a bad optional file is a
/// warning; only a rank without any readable memory_record is an error.
pub fn load_rank(info: &RankInfo, control: &LoadControl) -> Result<RankData, LoadError> {
    load_rank_with(info, control, &mut |_| {})
}

/// [`load_rank`], handing `early` a first look at the rank as soon as its memory_record files
/// are read (CSV sources with rows only): [`RankData::partial`] set, the records (shared, not
/// copied), npu_module_mem (read first: it is small), their strings and warnings so far, the
/// time origin of those two, and no other table. The app draws the curves from it while the
/// rest loads.
pub fn load_rank_with(
    info: &RankInfo,
    control: &LoadControl,
    early: &mut (dyn FnMut(RankData) + Send),
) -> Result<RankData, LoadError> {
    load_rank_using(info, control, early, super::importers::IMPORTERS)
}

/// How many rank loads this process has started (every load goes through
/// [`load_rank_using`]): what a test counts to prove a command reads a rank once.
static RANK_LOADS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many rank loads this process has started so far.
pub fn rank_loads() -> u64 {
    RANK_LOADS.load(std::sync::atomic::Ordering::Relaxed)
}

/// [`load_rank_with`], a rank of an importer found among `importers` (tests prove the seam with
/// importers of their own).
pub fn load_rank_using(
    info: &RankInfo,
    control: &LoadControl,
    early: &mut (dyn FnMut(RankData) + Send),
    importers: &[&dyn super::importer::Importer],
) -> Result<RankData, LoadError> {
    RANK_LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let DataSource::Imported { importer, .. } = &info.source {
        let Some((imp, _)) = super::importer::importer_of(importers, info) else {
            return Err(no_data(
                info,
                NoDataReason::NoImporter {
                    name: importer.to_string(),
                },
            ));
        };
        // Discovery's notes first, as for an Ascend export; the same for the first look.
        let finish = |data: &mut RankData| {
            data.report
                .warnings
                .splice(0..0, info.notes.iter().cloned());
            data.modules.sort_by_time();
            crate::model::DeviceMemory::sort_shared(&mut data.device_memory);
            data.time_origin_ns = time_origin(data);
        };
        let mut first = |mut data: RankData| {
            finish(&mut data);
            data.partial = true;
            early(data);
        };
        let mut data = imp.load_with_first_look(info, control, &mut first)?;
        finish(&mut data);
        super::roles::attach_roles(&mut data);
        super::modules::attach_modules(&mut data);
        return Ok(data);
    }
    let mut data = load_export(info, control, early)?;
    super::roles::attach_roles(&mut data);
    super::modules::attach_modules(&mut data);
    Ok(data)
}

/// An Ascend export (CSV files or a SQLite DB).
fn load_export(
    info: &RankInfo,
    control: &LoadControl,
    early: &mut (dyn FnMut(RankData) + Send),
) -> Result<RankData, LoadError> {
    let mut data = empty(info);
    let mut early_trace = None;
    for note in &info.notes {
        data.report.warn(note.clone());
    }
    match &info.source {
        DataSource::Csv { .. } => {
            // trace_view.json (steps, device total, host ops) is read on a thread of its own
            // while the CSV files are parsed: on a desktop with cores to spare it costs no time.
            let trace = super::layout::trace_view_of(&data);
            let early = std::thread::scope(|s| {
                // No thread to be had: `attach_steps` reads the file itself afterwards.
                let reader = trace.and_then(|path| {
                    std::thread::Builder::new()
                        .name("trace_view".into())
                        .spawn_scoped(s, move || {
                            let r = super::trace_view::read_trace_view(&path, control);
                            (path, r)
                        })
                        .ok()
                });
                let csv = load_csv(&info.source, &mut data, control, early);
                let early = reader.and_then(|h| h.join().ok());
                csv.map(|()| early)
            })?;
            early_trace = early;
        }
        DataSource::Db {
            path,
            snapshot,
            device,
            csv_fallback,
        } => match db::load(path, snapshot.as_ref(), *device, &mut data.strings) {
            Ok(t) => {
                if !t.steps.is_empty() {
                    data.steps = Some(Steps::new(StepSource::Db, t.steps));
                }
                data.device_memory = Arc::new(t.device);
                let mut records = t.records;
                records.sort_by_time();
                data.records = Arc::new(records);
                data.memory_record_rows = t.memory_record_rows;
                data.operators = t.operators;
                data.modules = t.modules;
                data.report.files.extend(t.reports);
                for w in t.warnings {
                    data.report.warn(w);
                }
            }
            Err(e) => match csv_fallback {
                Some(src) => {
                    data.report.warnings.retain(|w| *w != Message::UsingDb);
                    data.report.warn(Message::DbFailedUsingCsv {
                        path: path.display().to_string(),
                        cause: e.into(),
                    });
                    load_csv(src, &mut data, control, &mut |_| {})?;
                }
                None => {
                    return Err(no_data(
                        info,
                        NoDataReason::DbFailed {
                            path: path.display().to_string(),
                            cause: Box::new(e.into()),
                        },
                    ));
                }
            },
        },
        DataSource::Imported { .. } => {
            return Err(no_data(info, "not an Ascend export".into()));
        }
    }
    if data.records.is_empty() && data.operators.is_empty() {
        return Err(no_data(info, NoDataReason::NoRows));
    }
    // trace_view.json is read once (or was, on the thread above) and handed to each stage.
    let mut trace = super::layout::RankTrace::with_early(early_trace);
    super::steps::attach_steps(&mut data, &mut trace, control)?;
    super::stacks::attach_stacks(&mut data, &mut trace, control)?;
    data.modules.sort_by_time();
    crate::model::DeviceMemory::sort_shared(&mut data.device_memory);
    data.time_origin_ns = time_origin(&data);
    Ok(data)
}

fn empty(info: &RankInfo) -> RankData {
    RankData::empty(info.clone())
}

fn no_data(info: &RankInfo, reason: NoDataReason) -> LoadError {
    LoadError::NoData {
        rank: info.rank.clone(),
        reason,
    }
}

fn load_csv(
    src: &DataSource,
    data: &mut RankData,
    control: &LoadControl,
    early: &mut (dyn FnMut(RankData) + Send),
) -> Result<(), LoadError> {
    let DataSource::Csv {
        memory_record,
        operator_memory,
        npu_module_mem,
        static_op_mem,
        device: only_device,
    } = src
    else {
        return Ok(());
    };
    control.add_total(total_bytes(&[
        memory_record,
        operator_memory,
        npu_module_mem,
        static_op_mem,
    ]));
    let mindspore = data.info.format == Format::MindSpore;
    let session = session_from_profiler_info(&data.info.dir);
    let lossy_before = data.report.lossy_time_files.len();
    let mut record_errors = Vec::new();
    let mut device = data.info.device.clone();
    // npu_module_mem first (it is small): its times count in the first look's time origin, so
    // the curves drawn then are not rebuilt when the rest arrives. What it reports joins the
    // report at its usual place, after operator_memory.
    let mut module_report = LoadReport::default();
    let mut module_device = None;
    for p in npu_module_mem {
        absorb(
            read_npu_module_mem(
                p,
                session,
                only_device.as_deref(),
                control,
                &mut data.strings,
                &mut data.modules,
            ),
            &mut module_report,
            &mut module_device,
        )?;
    }
    let mut records = MemoryRecords::default();
    for p in memory_record {
        let r = read_memory_record(
            p,
            mindspore,
            session,
            only_device.as_deref(),
            control,
            &mut data.strings,
            &mut records,
        );
        if let Some(e) = unreadable_records(&r) {
            record_errors.push(e);
        }
        absorb(r, &mut data.report, &mut device)?;
    }
    data.memory_record_rows = records.len();
    // Sorted now, before operator_memory's columns are in memory: the sort's scratch (at most a
    // column and the permutation) then never adds to the load's peak memory.
    records.sort_by_time();
    data.records = Arc::new(records);
    if !data.records.is_empty() {
        early(first_look(data));
    }
    if operator_memory.is_empty() && !data.records.is_empty() {
        data.report.warn(Message::NoOperatorMemory);
    }
    for p in operator_memory {
        absorb(
            read_operator_memory(
                p,
                session,
                only_device.as_deref(),
                control,
                &mut data.strings,
                &mut data.operators,
            ),
            &mut data.report,
            &mut device,
        )?;
    }
    if npu_module_mem.is_empty() {
        data.report.warn(Message::NoModuleMem);
    }
    data.report.warnings.append(&mut module_report.warnings);
    data.report.files.append(&mut module_report.files);
    data.report
        .lossy_time_files
        .append(&mut module_report.lossy_time_files);
    if device.is_none() {
        device = module_device;
    }
    for p in static_op_mem {
        absorb(
            read_static_op_mem(p, control, &mut data.strings, &mut data.static_ops),
            &mut data.report,
            &mut device,
        )?;
    }
    warn_lossy_times(&mut data.report, lossy_before);
    if data.info.device.is_none() {
        data.info.device = device;
    }
    if data.records.is_empty() && data.operators.is_empty() {
        let files = memory_record.iter().chain(operator_memory);
        return Err(LoadError::NoData {
            rank: data.info.rank.clone(),
            reason: no_rows_reason(files, &record_errors),
        });
    }
    Ok(())
}

/// The bytes of the files to read (the load's progress total).
fn total_bytes(lists: &[&Vec<PathBuf>]) -> u64 {
    lists
        .iter()
        .flat_map(|v| v.iter())
        .filter_map(|p| std::fs::metadata(p).ok())
        .map(|m| m.len())
        .sum()
}

/// Takes a file's outcome into the report (its file, notes, lossy times, the device it names
/// when none is known yet): `Ok(false)` for a file that could not be read (a warning), `Err`
/// only when the load was cancelled.
fn absorb(
    r: Result<FileOutcome, FileError>,
    report: &mut LoadReport,
    device: &mut Option<String>,
) -> Result<bool, LoadError> {
    match r {
        Ok(o) => {
            if o.lossy_timestamps {
                report.lossy_time_files.push(o.report.path.clone());
            }
            if device.is_none() {
                *device = o.device;
            }
            for note in o.notes {
                report.warn(note);
            }
            report.files.push(o.report);
            Ok(true)
        }
        Err(FileError::Cancelled) => Err(LoadError::Cancelled),
        Err(e) => {
            report.warn(e.to_string());
            Ok(false)
        }
    }
}

/// Why a memory_record file gave no rows at all, when it is a reason the rank may have no data
/// for (a missing column, the OS, an empty or unusable file); `None` for an outcome that read.
fn unreadable_records(r: &Result<FileOutcome, FileError>) -> Option<Cause> {
    match r {
        Err(
            e @ (FileError::MissingColumn { .. }
            | FileError::Io { .. }
            | FileError::Empty { .. }
            | FileError::Unusable { .. }),
        ) => Some(e.into()),
        _ => None,
    }
}

/// One warning naming the files read since `before` whose times were rounded.
fn warn_lossy_times(report: &mut LoadReport, before: usize) {
    let files: Vec<String> = report.lossy_time_files[before..]
        .iter()
        .map(|p| p.display().to_string())
        .collect();
    if !files.is_empty() {
        report.warn(Message::LossyTimestamps {
            files: files.join(", "),
        });
    }
}

/// Why a CSV rank has no rows: its files hold none, or its memory_record files could not be
/// read (what each said).
fn no_rows_reason<'a>(
    files: impl Iterator<Item = &'a PathBuf>,
    record_errors: &[Cause],
) -> NoDataReason {
    if record_errors.is_empty() {
        let names: Vec<String> = files.map(|p| p.display().to_string()).collect();
        NoDataReason::NoDataRows {
            files: names.join(", "),
        }
    } else {
        NoDataReason::Unreadable {
            errors: record_errors.to_vec(),
        }
    }
}

/// The rank as far as memory_record goes (see [`load_rank_with`]).
fn first_look(data: &RankData) -> RankData {
    let mut first = RankData::empty(data.info.clone());
    first.records = Arc::clone(&data.records);
    first.memory_record_rows = data.memory_record_rows;
    first.strings = data.strings.clone();
    first.report = data.report.clone();
    first.modules = data.modules.clone();
    first.modules.sort_by_time();
    first.time_origin_ns = time_origin(&first);
    first.partial = true;
    first
}

/// The earliest time over memory_record (with APP samples), operator_memory allocation and
/// release times, and npu_module_mem; 0 when there is none.
pub fn time_origin(data: &RankData) -> i64 {
    let ops = &data.operators;
    let candidates = [
        data.records.time_ns.first().copied(),
        data.modules.time_ns.first().copied(),
        ops.alloc_time.iter().copied().filter(|&t| t != NULL).min(),
        ops.release_time
            .iter()
            .copied()
            .filter(|&t| t != NULL)
            .min(),
    ];
    candidates.into_iter().flatten().min().unwrap_or(0)
}
