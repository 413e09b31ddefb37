//! The four CSV kinds (memory_record, operator_memory, npu_module_mem, static_op_mem), every
//! variant of formats.md §2, mapped by header name and never by position.

use crate::model::SkipReason;
use std::path::Path;

use super::chunks::{
    ChunkError, CsvFile, CsvOpenError, Fields, LoadControl, RowSink, column_index, record_text,
};
use super::time_window::{self, TimeWindow};
use super::value::{device_id, parse_scaled, trim_cell};
use crate::model::report::{FileReport, SkippedRows};
use crate::model::{
    Component, Interner, MIB, MemoryRecords, ModuleMemory, NULL, NameId, OperatorMemory,
    StaticOpMemory,
};

/// Why a whole file could not be used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// A required column is absent from the header.
    #[error("{path}: missing column {column:?} (header: {header})")]
    MissingColumn {
        /// The file.
        path: String,
        /// The column looked for.
        column: String,
        /// The header found.
        header: String,
    },
    /// The file is empty (0 bytes).
    #[error("{path}: the file is empty")]
    Empty {
        /// The file.
        path: String,
    },
    /// The file is not a table memsight can read; the reason says why and what to do.
    #[error("{path}: {reason}")]
    Unusable {
        /// The file.
        path: String,
        /// What is wrong.
        reason: String,
    },
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl From<&FileError> for crate::model::Cause {
    fn from(e: &FileError) -> crate::model::Cause {
        use crate::model::{Cause, CauseKind};
        match e {
            FileError::Io { path, source } => Cause::io(e.to_string(), Some(path.clone()), source),
            FileError::Empty { path } => Cause {
                en: e.to_string(),
                path: Some(path.clone()),
                kind: CauseKind::Empty,
            },
            _ => Cause::said(e.to_string()),
        }
    }
}

/// What reading one file gives besides its rows.
#[derive(Debug)]
pub struct FileOutcome {
    /// Rows and skipped rows.
    pub report: FileReport,
    /// True when some timestamp used scientific notation.
    pub lossy_timestamps: bool,
    /// The device id of the first row that names one.
    pub device: Option<String>,
    /// Things the user should know about how the file was read (decoded encodings).
    pub notes: Vec<crate::model::Message>,
}

/// Size units a column header can declare.
fn unit_factor(header_name: &str, mb_factor: i64) -> i64 {
    if header_name.contains("(KB)") {
        1024
    } else if header_name.contains("(B)") {
        1
    } else {
        mb_factor
    }
}

/// Finds the first of `names` present, returning its index and header text.
fn find_any<'h>(header: &'h [String], names: &[&str]) -> Option<(usize, &'h str)> {
    names
        .iter()
        .find_map(|n| column_index(header, n).map(|i| (i, header[i].as_str())))
}

/// Finds a size column in either unit: `base(MB)` or `base(KB)`.
fn find_sized(header: &[String], base: &str, mb_factor: i64) -> (Option<usize>, i64) {
    match find_any(
        header,
        &[
            &format!("{base}(MB)"),
            &format!("{base}(KB)"),
            &format!("{base}(B)"),
        ],
    ) {
        Some((i, h)) => (Some(i), unit_factor(h, mb_factor)),
        None => (None, mb_factor),
    }
}

fn required(header: &[String], names: &[&str], path: &Path) -> Result<usize, FileError> {
    find_any(header, names)
        .map(|(i, _)| i)
        .ok_or_else(|| FileError::MissingColumn {
            path: path.display().to_string(),
            column: names.join(" or "),
            header: header.join(","),
        })
}

#[inline]
fn cell<'a>(rec: &Fields<'a>, idx: Option<usize>) -> &'a [u8] {
    idx.and_then(|i| rec.get(i).copied()).unwrap_or(b"")
}

/// A numeric cell times `factor`; NULL when missing; an error naming the column when malformed.
#[inline]
fn num(
    rec: &Fields<'_>,
    idx: Option<usize>,
    factor: i64,
    lossy: &mut bool,
    col: &str,
) -> Result<i64, SkipReason> {
    match parse_scaled(cell(rec, idx), factor) {
        Ok(Some(s)) => {
            *lossy |= s.lossy;
            Ok(s.value)
        }
        Ok(None) => Ok(NULL),
        Err(e) => Err(e.reason(col)),
    }
}

/// A timestamp cell (µs) as ns, NULL when missing; outside `window` it is an error: one
/// corrupt time must not move the rank's origin.
#[inline]
fn time_num(
    rec: &Fields<'_>,
    idx: Option<usize>,
    window: TimeWindow,
    lossy: &mut bool,
    col: &str,
) -> Result<i64, SkipReason> {
    let t = num(rec, idx, 1000, lossy, col)?;
    if t != NULL && !window.contains(t) {
        let text = String::from_utf8_lossy(trim_cell(cell(rec, idx))).into_owned();
        return Err(window.reject_reason(col, &text));
    }
    Ok(t)
}

/// What parsing rows noticed besides their values.
#[derive(Debug, Default, Clone, Copy)]
struct RowFlags {
    /// Some timestamp used scientific notation.
    lossy_time: bool,
    /// Some name was not UTF-8 (decoded as GB18030).
    not_utf8: bool,
}

/// Interns a name cell. A cell that is not UTF-8 is decoded as GB18030 (what Chinese Windows
/// tools and Excel write) and flagged, so the file gets one warning instead of silent mojibake.
fn intern_name(names: &mut Interner, cell: &[u8], flags: &mut RowFlags) -> NameId {
    names.intern_bytes_with(cell, |b| match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => {
            flags.not_utf8 = true;
            encoding_rs::GB18030
                .decode_without_bom_handling(b)
                .0
                .into_owned()
                .into()
        }
    })
}

/// Parses one record into local columns, or says why not (then nothing is pushed).
trait RowParser: Send {
    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason>;
    /// Forgets piece-local state (ids of local interners); columns are already drained.
    fn reset(&mut self);
}

struct Sink<P> {
    parser: P,
    skipped: SkippedRows,
    rows: u64,
    flags: RowFlags,
    /// Header cells without trailing empty names: fewer cells is a short row.
    min_fields: usize,
    /// Header cells: more cells (unless empty) is a row with an unquoted delimiter in a value.
    max_fields: usize,
    device_col: Option<usize>,
    device: Option<String>,
    /// Keep only rows of this device (a profile of several devices, split into one rank each).
    only_device: Option<String>,
}

impl<P: RowParser> RowSink for Sink<P> {
    fn reset(&mut self) {
        self.parser.reset();
        self.skipped = SkippedRows::default();
        self.rows = 0;
        self.flags = RowFlags::default();
        self.device = None;
    }

    fn bad_line(&mut self, at: u64, reason: SkipReason, line: &[u8]) {
        self.skipped
            .add(at, reason, || String::from_utf8_lossy(line).into_owned());
    }

    fn offsets_to_lines(&mut self, line_of: &mut dyn FnMut(u64) -> u64) {
        for s in &mut self.skipped.samples {
            s.line = line_of(s.line);
        }
    }

    /// `line` here is the byte offset within the piece until `offsets_to_lines`.
    fn row(&mut self, rec: &Fields<'_>, line: u64) {
        if rec.len() <= 1 && trim_cell(rec.first().copied().unwrap_or(b"")).is_empty() {
            return; // blank line
        }
        if rec.len() < self.min_fields {
            let msg = SkipReason::FewerFields {
                got: rec.len(),
                header: self.min_fields,
            };
            self.skipped.add(line, msg, || record_text(rec));
            return;
        }
        if rec.len() > self.max_fields
            && rec[self.max_fields..]
                .iter()
                .any(|c| !trim_cell(c).is_empty())
        {
            let msg = SkipReason::ExtraFields {
                got: rec.len(),
                header: self.max_fields,
            };
            self.skipped.add(line, msg, || record_text(rec));
            return;
        }
        if let (Some(want), Some(col)) = (&self.only_device, self.device_col) {
            match rec.get(col).copied().and_then(device_id) {
                Some(d) if d == *want => {}
                Some(_) => return, // another device's row: its own rank reads it
                None => {
                    // Not silently lost: no rank of a multi-device file can claim it.
                    self.skipped
                        .add(line, SkipReason::NoDevice, || record_text(rec));
                    return;
                }
            }
        }
        match self.parser.parse(rec, &mut self.flags) {
            Ok(()) => {
                self.rows += 1;
                if self.device.is_none() {
                    self.device = self
                        .device_col
                        .and_then(|i| rec.get(i).copied())
                        .and_then(device_id);
                }
            }
            Err(reason) => self.skipped.add(line, reason, || record_text(rec)),
        }
    }
}

/// Header length without trailing empty names (MindSpore writes a trailing comma).
fn significant_len(header: &[String]) -> usize {
    header
        .iter()
        .rposition(|h| !h.is_empty())
        .map_or(0, |i| i + 1)
}

fn open(path: &Path) -> Result<CsvFile, FileError> {
    let shown = || path.display().to_string();
    let csv = CsvFile::open(path).map_err(|e| match e {
        CsvOpenError::Io(source) => FileError::Io {
            path: shown(),
            source,
        },
        other => FileError::Unusable {
            path: shown(),
            reason: other.to_string(),
        },
    })?;
    if csv.header().is_empty() {
        let empty = std::fs::metadata(path).is_ok_and(|m| m.len() == 0);
        return Err(if empty {
            FileError::Empty { path: shown() }
        } else {
            FileError::Unusable {
                path: shown(),
                reason: "the first line (the header) is empty".into(),
            }
        });
    }
    if csv.header().iter().all(String::is_empty) {
        return Err(FileError::Unusable {
            path: shown(),
            reason: "the header line has no column names".into(),
        });
    }
    Ok(csv)
}

fn chunk_err(path: &Path, e: ChunkError) -> FileError {
    match e {
        ChunkError::Cancelled => FileError::Cancelled,
        ChunkError::Io(source) => FileError::Io {
            path: path.display().to_string(),
            source,
        },
    }
}

/// Runs the parallel read and folds the per-piece sinks into one outcome.
///
/// `make` gets a piece's length in bytes (to reserve rows); `merge` gets each piece's parser in
/// file order with the number of rows still to merge, this one included (to reserve once).
fn run<P: RowParser, F: Fn(usize) -> P + Sync>(
    path: &Path,
    csv: CsvFile,
    device_col: Option<usize>,
    only_device: Option<&str>,
    control: &LoadControl,
    make: F,
    mut merge: impl FnMut(&mut P) + Send,
) -> Result<FileOutcome, FileError> {
    let min_fields = significant_len(csv.header());
    let max_fields = csv.header().len();
    let mut notes = Vec::new();
    if let Some(enc) = csv.decoded_from() {
        notes.push(crate::model::Message::DecodedFrom {
            path: path.display().to_string(),
            encoding: enc.to_string(),
        });
    }
    let mut report = FileReport {
        path: path.to_path_buf(),
        rows: 0,
        skipped: SkippedRows::default(),
    };
    let mut flags = RowFlags::default();
    let mut device = None;
    csv.read_rows(
        control,
        |bytes| Sink {
            parser: make(bytes),
            skipped: SkippedRows::default(),
            rows: 0,
            flags: RowFlags::default(),
            min_fields,
            max_fields,
            device_col,
            device: None,
            only_device: only_device.map(str::to_string),
        },
        |s| {
            report.rows += s.rows;
            report.skipped.merge(std::mem::take(&mut s.skipped));
            flags.lossy_time |= s.flags.lossy_time;
            flags.not_utf8 |= s.flags.not_utf8;
            if device.is_none() {
                device = s.device.take();
            }
            merge(&mut s.parser);
        },
    )
    .map_err(|e| chunk_err(path, e))?;
    control.file_done();
    if flags.not_utf8 {
        notes.push(crate::model::Message::NamesNotUtf8 {
            path: path.display().to_string(),
        });
    }
    Ok(FileOutcome {
        report,
        lossy_timestamps: flags.lossy_time,
        device,
        notes,
    })
}

/// Rows a file of this size may hold at most, for reserving columns once: rows are never
/// shorter than `min_row_bytes`. Reserved but untouched memory costs no resident memory.
fn max_rows(path: &Path, min_row_bytes: u64) -> usize {
    std::fs::metadata(path).map_or(0, |m| (m.len() / min_row_bytes) as usize)
}

const DEVICE_COLUMNS: &[&str] = &["Device Type", "Device", "Device_id"];

// ---------------------------------------------------------------------------------------------
// memory_record

#[derive(Clone, Copy)]
struct RecordCols {
    component: usize,
    time: usize,
    allocated: (Option<usize>, i64),
    reserved: (Option<usize>, i64),
    active: (Option<usize>, i64),
    stream: Option<usize>,
}

struct RecordParser {
    cols: RecordCols,
    window: TimeWindow,
    out: MemoryRecords,
    streams: Interner,
    /// The last stream cell and its id: consecutive rows mostly share a stream.
    last_stream: (Vec<u8>, NameId),
}

/// Interns a stream cell, reusing the previous row's id when the cell is the same.
#[inline]
fn stream_id(cell: &[u8], last: &mut (Vec<u8>, NameId), streams: &mut Interner) -> NameId {
    if cell.is_empty() {
        return 0;
    }
    if last.0 != cell {
        last.0.clear();
        last.0.extend_from_slice(cell);
        last.1 = streams.intern_bytes(cell);
    }
    last.1
}

impl RowParser for RecordParser {
    fn reset(&mut self) {
        self.streams = Interner::new();
        self.last_stream = (Vec::new(), 0);
    }

    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason> {
        let c = self.cols;
        let comp = trim_cell(cell(rec, Some(c.component)));
        if comp.is_empty() {
            return Err(SkipReason::Empty {
                column: "Component".into(),
            });
        }
        let mut ts_lossy = false;
        let t = time_num(
            rec,
            Some(c.time),
            self.window,
            &mut ts_lossy,
            "Timestamp(us)",
        )?;
        if t == NULL {
            return Err(SkipReason::Missing {
                column: "Timestamp(us)".into(),
            });
        }
        let mut unused = false;
        let alloc = num(
            rec,
            c.allocated.0,
            c.allocated.1,
            &mut unused,
            "Total Allocated",
        )?;
        let resv = num(
            rec,
            c.reserved.0,
            c.reserved.1,
            &mut unused,
            "Total Reserved",
        )?;
        let act = num(rec, c.active.0, c.active.1, &mut unused, "Total Active")?;
        let stream = stream_id(
            trim_cell(cell(rec, c.stream)),
            &mut self.last_stream,
            &mut self.streams,
        );
        flags.lossy_time |= ts_lossy;
        self.out
            .push(Component::parse(comp), t, alloc, resv, act, stream);
        Ok(())
    }
}

/// Reads a memory_record file. `mindspore_mb` applies MindSpore's "MB" = KiB/1000 quirk.
pub fn read_memory_record(
    path: &Path,
    mindspore_mb: bool,
    session: Session,
    only_device: Option<&str>,
    control: &LoadControl,
    strings: &mut Interner,
    out: &mut MemoryRecords,
) -> Result<FileOutcome, FileError> {
    let csv = open(path)?;
    let h = csv.header().to_vec();
    let mb = if mindspore_mb { 1000 * 1024 } else { MIB };
    let cols = RecordCols {
        component: required(&h, &["Component"], path)?,
        time: required(&h, &["Timestamp(us)"], path)?,
        allocated: find_sized(&h, "Total Allocated", mb),
        reserved: find_sized(&h, "Total Reserved", mb),
        active: find_sized(&h, "Total Active", mb),
        stream: column_index(&h, "Stream Ptr"),
    };
    if cols.allocated.0.is_none() && cols.reserved.0.is_none() {
        return Err(FileError::MissingColumn {
            path: path.display().to_string(),
            column: "Total Allocated(MB|KB) or Total Reserved(MB|KB)".into(),
            header: h.join(","),
        });
    }
    let device_col = find_any(&h, DEVICE_COLUMNS).map(|x| x.0);
    let window = file_time_window(path, &csv, cols.time, session);
    out.reserve(max_rows(path, 24));
    run(
        path,
        csv,
        device_col,
        only_device,
        control,
        |bytes| RecordParser {
            cols,
            window,
            out: MemoryRecords::with_capacity(bytes / 64),
            streams: Interner::new(),
            last_stream: (Vec::new(), 0),
        },
        |p| {
            let remap = strings.merge(&p.streams);
            out.append(&mut p.out, &remap);
        },
    )
}

// ---------------------------------------------------------------------------------------------
// operator_memory

#[derive(Clone, Copy)]
struct OperatorCols {
    name: usize,
    size: (usize, i64),
    alloc: Option<usize>,
    release: Option<usize>,
    active_release: Option<usize>,
    duration: Option<usize>,
    active_duration: Option<usize>,
    totals: [(Option<usize>, i64); 6],
    stream: Option<usize>,
}

struct OperatorParser {
    cols: OperatorCols,
    window: TimeWindow,
    out: OperatorMemory,
    names: Interner,
    streams: Interner,
    last_stream: (Vec<u8>, NameId),
}

const TOTAL_NAMES: [&str; 6] = [
    "Allocation Total Allocated",
    "Allocation Total Reserved",
    "Allocation Total Active",
    "Release Total Allocated",
    "Release Total Reserved",
    "Release Total Active",
];

impl RowParser for OperatorParser {
    fn reset(&mut self) {
        self.names = Interner::new();
        self.streams = Interner::new();
        self.last_stream = (Vec::new(), 0);
    }

    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason> {
        let c = self.cols;
        let size = num(rec, Some(c.size.0), c.size.1, &mut false, "Size(KB)")?;
        if size == NULL {
            return Err(SkipReason::Missing {
                column: "Size(KB)".into(),
            });
        }
        let mut ts_lossy = false;
        let w = self.window;
        let alloc = time_num(rec, c.alloc, w, &mut ts_lossy, "Allocation Time(us)")?;
        let mut release = time_num(rec, c.release, w, &mut ts_lossy, "Release Time(us)")?;
        let active_release = time_num(
            rec,
            c.active_release,
            w,
            &mut ts_lossy,
            "Active Release Time(us)",
        )?;
        let duration = num(rec, c.duration, 1000, &mut ts_lossy, "Duration(us)")?;
        let active_duration = num(
            rec,
            c.active_duration,
            1000,
            &mut ts_lossy,
            "Active Duration(us)",
        )?;
        if c.release.is_none() && alloc != NULL && duration != NULL {
            // Variants C and D have no Release Time: it is Allocation + Duration.
            release = alloc.saturating_add(duration);
            if !w.contains(release) {
                let text = String::from_utf8_lossy(trim_cell(cell(rec, c.duration))).into_owned();
                return Err(w.reject_reason("Duration(us)", &text));
            }
        }
        let mut totals = [NULL; 6];
        for (k, (idx, f)) in c.totals.iter().enumerate() {
            totals[k] = num(rec, *idx, *f, &mut false, TOTAL_NAMES[k])?;
        }
        let name = intern_name(&mut self.names, trim_cell(cell(rec, Some(c.name))), flags);
        let stream = stream_id(
            trim_cell(cell(rec, c.stream)),
            &mut self.last_stream,
            &mut self.streams,
        );
        flags.lossy_time |= ts_lossy;
        let [t0, t1, t2, t3, t4, t5] = totals;
        let cells = [
            size,
            alloc,
            release,
            active_release,
            duration,
            active_duration,
            t0,
            t1,
            t2,
            t3,
            t4,
            t5,
        ];
        self.out.push_row(name, stream, cells);
        Ok(())
    }
}

/// Reads an operator_memory file (variants A–D).
pub fn read_operator_memory(
    path: &Path,
    session: Session,
    only_device: Option<&str>,
    control: &LoadControl,
    strings: &mut Interner,
    out: &mut OperatorMemory,
) -> Result<FileOutcome, FileError> {
    let csv = open(path)?;
    let h = csv.header().to_vec();
    let size_idx = required(&h, &["Size(KB)", "Size(MB)", "Size(B)"], path)?;
    let size_factor = unit_factor(&h[size_idx], MIB);
    let mut totals = [(None, MIB); 6];
    for (k, base) in TOTAL_NAMES.iter().enumerate() {
        totals[k] = find_sized(&h, base, MIB);
    }
    let cols = OperatorCols {
        name: required(&h, &["Name"], path)?,
        size: (size_idx, size_factor),
        alloc: column_index(&h, "Allocation Time(us)"),
        release: column_index(&h, "Release Time(us)"),
        active_release: column_index(&h, "Active Release Time(us)"),
        duration: column_index(&h, "Duration(us)"),
        active_duration: column_index(&h, "Active Duration(us)"),
        totals,
        stream: column_index(&h, "Stream Ptr"),
    };
    let device_col = find_any(&h, DEVICE_COLUMNS).map(|x| x.0);
    let window = match cols.alloc {
        Some(c) => file_time_window(path, &csv, c, session),
        None => TimeWindow::ANY,
    };
    out.reserve(max_rows(path, 24));
    run(
        path,
        csv,
        device_col,
        only_device,
        control,
        |bytes| OperatorParser {
            cols,
            window,
            out: OperatorMemory::with_capacity(bytes / 128),
            names: Interner::new(),
            streams: Interner::new(),
            last_stream: (Vec::new(), 0),
        },
        |p| {
            let names = strings.merge(&p.names);
            let streams = strings.merge(&p.streams);
            out.append(&mut p.out, &names, &streams);
        },
    )
}

// ---------------------------------------------------------------------------------------------
// npu_module_mem

struct ModuleParser {
    cols: (usize, usize, (usize, i64)),
    window: TimeWindow,
    out: ModuleMemory,
    names: Interner,
}

impl RowParser for ModuleParser {
    fn reset(&mut self) {
        self.names = Interner::new();
    }

    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason> {
        let (comp_i, time_i, (resv_i, f)) = self.cols;
        let comp = trim_cell(cell(rec, Some(comp_i)));
        if comp.is_empty() {
            return Err(SkipReason::Empty {
                column: "Component".into(),
            });
        }
        let t = time_num(
            rec,
            Some(time_i),
            self.window,
            &mut flags.lossy_time,
            "Timestamp(us)",
        )?;
        if t == NULL {
            return Err(SkipReason::Missing {
                column: "Timestamp(us)".into(),
            });
        }
        let resv = num(rec, Some(resv_i), f, &mut false, "Total Reserved")?;
        let id: NameId = intern_name(&mut self.names, comp, flags);
        self.out.component.push(id);
        self.out.time_ns.push(t);
        self.out.reserved.push(resv);
        Ok(())
    }
}

/// Reads an npu_module_mem file (variants A–C).
pub fn read_npu_module_mem(
    path: &Path,
    session: Session,
    only_device: Option<&str>,
    control: &LoadControl,
    strings: &mut Interner,
    out: &mut ModuleMemory,
) -> Result<FileOutcome, FileError> {
    let csv = open(path)?;
    let h = csv.header().to_vec();
    let comp = required(&h, &["Component"], path)?;
    let time = required(&h, &["Timestamp(us)"], path)?;
    let resv = required(&h, &["Total Reserved(MB)", "Total Reserved(KB)"], path)?;
    let f = unit_factor(&h[resv], MIB);
    let device_col = find_any(&h, &["Device", "Device_id"]).map(|x| x.0);
    let window = file_time_window(path, &csv, time, session);
    run(
        path,
        csv,
        device_col,
        only_device,
        control,
        |_| ModuleParser {
            cols: (comp, time, (resv, f)),
            window,
            out: ModuleMemory::default(),
            names: Interner::new(),
        },
        |p| {
            let remap = strings.merge(&p.names);
            out.append(&mut p.out, &remap);
        },
    )
}

// ---------------------------------------------------------------------------------------------
// static_op_mem

#[derive(Clone, Copy)]
struct StaticCols {
    device: Option<usize>,
    op: usize,
    model: Option<usize>,
    graph: usize,
    start: usize,
    end: usize,
    size: (usize, i64),
}

struct StaticParser {
    cols: StaticCols,
    out: StaticOpMemory,
    names: Interner,
}

impl RowParser for StaticParser {
    fn reset(&mut self) {
        self.names = Interner::new();
    }

    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason> {
        let c = self.cols;
        let op = trim_cell(cell(rec, Some(c.op)));
        if op.is_empty() {
            return Err(SkipReason::Empty {
                column: "Op Name".into(),
            });
        }
        let graph = trim_cell(cell(rec, Some(c.graph)));
        if graph.is_empty() {
            return Err(SkipReason::Empty {
                column: "Graph ID".into(),
            });
        }
        let start = num(rec, Some(c.start), 1, &mut false, "Node Index Start")?;
        let end = num(rec, Some(c.end), 1, &mut false, "Node Index End")?;
        let size = num(rec, Some(c.size.0), c.size.1, &mut false, "Size(KB)")?;
        if start == NULL || end == NULL || size == NULL {
            return Err("Node Index Start, Node Index End and Size(KB) are required".into());
        }
        let o = &mut self.out;
        let names = &mut self.names;
        o.device
            .push(intern_name(names, trim_cell(cell(rec, c.device)), flags));
        o.op_name.push(intern_name(names, op, flags));
        o.model_name
            .push(intern_name(names, trim_cell(cell(rec, c.model)), flags));
        o.graph_id.push(intern_name(names, graph, flags));
        o.node_start.push(start);
        o.node_end.push(end);
        o.size.push(size);
        Ok(())
    }
}

/// Reads a static_op_mem file.
pub fn read_static_op_mem(
    path: &Path,
    control: &LoadControl,
    strings: &mut Interner,
    out: &mut StaticOpMemory,
) -> Result<FileOutcome, FileError> {
    let csv = open(path)?;
    let h = csv.header().to_vec();
    let size = required(&h, &["Size(KB)", "Size(MB)"], path)?;
    let cols = StaticCols {
        device: column_index(&h, "Device_id"),
        op: required(&h, &["Op Name"], path)?,
        model: column_index(&h, "Model Name"),
        graph: required(&h, &["Graph ID"], path)?,
        start: required(&h, &["Node Index Start"], path)?,
        end: required(&h, &["Node Index End"], path)?,
        size: (size, unit_factor(&h[size], MIB)),
    };
    run(
        path,
        csv,
        None,
        None,
        control,
        |_| StaticParser {
            cols,
            out: StaticOpMemory::default(),
            names: Interner::new(),
        },
        |p| {
            let remap = strings.merge(&p.names);
            out.append(&mut p.out, &remap);
        },
    )
}

// ---------------------------------------------------------------------------------------------
// kernel_details (only Step Id and the kernels' times: where each step ran on the device)

#[derive(Clone, Copy)]
struct KernelCols {
    step: usize,
    start: usize,
    duration: usize,
    window: TimeWindow,
}

struct KernelParser {
    cols: KernelCols,
    /// (step id, start ns, end ns) per kernel.
    out: Vec<(i64, i64, i64)>,
}

impl RowParser for KernelParser {
    fn reset(&mut self) {}

    fn parse(&mut self, rec: &Fields<'_>, flags: &mut RowFlags) -> Result<(), SkipReason> {
        let c = self.cols;
        let step = num(rec, Some(c.step), 1, &mut false, "Step Id")?;
        if step == NULL {
            return Ok(()); // kernels outside any step (warmup) carry no id
        }
        let start = time_num(
            rec,
            Some(c.start),
            c.window,
            &mut flags.lossy_time,
            "Start Time(us)",
        )?;
        let dur = num(
            rec,
            Some(c.duration),
            1000,
            &mut flags.lossy_time,
            "Duration(us)",
        )?;
        if start == NULL {
            return Err(SkipReason::Empty {
                column: "Start Time(us)".into(),
            });
        }
        let end = start
            .checked_add(if dur == NULL { 0 } else { dur.max(0) })
            .ok_or("Duration(us): out of range")?;
        self.out.push((step, start, end));
        Ok(())
    }
}

/// Reads the step of every kernel of a kernel_details file: `(step id, start ns, end ns)`.
pub fn read_kernel_steps(
    path: &Path,
    session: Session,
    only_device: Option<&str>,
    control: &LoadControl,
    out: &mut Vec<(i64, i64, i64)>,
) -> Result<FileOutcome, FileError> {
    let csv = open(path)?;
    let h = csv.header().to_vec();
    let start = required(&h, &["Start Time(us)"], path)?;
    let cols = KernelCols {
        step: required(&h, &["Step Id", "Step ID"], path)?,
        start,
        duration: required(&h, &["Duration(us)"], path)?,
        window: file_time_window(path, &csv, start, session),
    };
    // Newer exports start with Device_id: a rank of a multi-device profile keeps its own kernels.
    let device_col = find_any(&h, &["Device_id", "Device"]).map(|x| x.0);
    run(
        path,
        csv,
        device_col,
        only_device,
        control,
        |_| KernelParser {
            cols,
            out: Vec::new(),
        },
        |p| out.append(&mut p.out),
    )
}

/// The accepted time range of one file: the profiler session, or the bulk of the times sampled
/// across the whole file from its `column` (each file judged by itself: a file whose times
/// are consistent is never dropped whole, one corrupt row never moves the origin).
fn file_time_window(path: &Path, csv: &CsvFile, column: usize, session: Session) -> TimeWindow {
    let samples = time_window::sample_csv_times(path, column, csv.delimiter());
    TimeWindow::from_samples(samples, session)
}

/// The profiler's session (start, end) in ns, when known.
pub type Session = Option<(i64, i64)>;
