//! Load notes as values, end to end: ingest records a [`Message`] with what varies in it,
//! the CLI and JSON print its English [`Message::text`], and the UI shows it in the user's
//! language. No code decides anything by comparing note text; a note nobody typed yet is
//! [`Message::Text`], shown as written.

use std::fmt;

impl Message {
    /// True for a note that reports a choice or a fact, not a problem: which of two sources was
    /// read, slices used, the newest of several files, an encoding decoded. The UI counts these
    /// apart from the ⚠ warnings.
    pub fn is_note(&self) -> bool {
        matches!(
            self,
            Message::UsingDb
                | Message::UsingCsv
                | Message::UsingSlices
                | Message::NewestOfKind { .. }
                | Message::DecodedFrom { .. }
        )
    }
}

/// A note about a load or a discovery, with what varies in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    /// memory_record without operator_memory.
    NoOperatorMemory,
    /// No npu_module_mem file.
    NoModuleMem,
    /// No memory_record file.
    NoMemoryRecord,
    /// A DB and CSV files: the DB is read.
    UsingDb,
    /// A DB and CSV files: the CSV files are read, as the user asked.
    UsingCsv,
    /// Both sliced and unsliced files: the slices are read.
    UsingSlices,
    /// Files whose timestamps use scientific notation (joined by `, `).
    LossyTimestamps {
        /// The files, as written.
        files: String,
    },
    /// A file whose names are not UTF-8 and were decoded as GB18030.
    NamesNotUtf8 {
        /// The file.
        path: String,
    },
    /// A file decoded from another encoding (UTF-16).
    DecodedFrom {
        /// The file.
        path: String,
        /// The encoding's name.
        encoding: String,
    },
    /// A profiler file that is not a regular file (a FIFO, a socket, a device): never opened.
    SpecialFile {
        /// The file.
        path: String,
        /// What it is.
        what: String,
    },
    /// A folder that could not be listed.
    FolderUnreadable {
        /// The folder.
        path: String,
    },
    /// A folder with npu_module_mem/static_op_mem but no memory_record or operator_memory.
    OnlyComponentFiles {
        /// The folder.
        path: String,
    },
    /// A profiler output folder (`ASCEND_PROFILER_OUTPUT`) without any memory data: that rank
    /// was profiled without `profile_memory=True` (or its export did not finish).
    RankWithoutMemoryData {
        /// The rank's folder (the output folder's parent).
        path: String,
        /// The files the output folder does hold, a few by name.
        holds: String,
    },
    /// An allocator snapshot found where a profile was looked for.
    SnapshotNotProfile {
        /// The file.
        path: String,
    },
    /// Allocator snapshots in a folder without a profile (a job's OOM bundles, say).
    SnapshotsInFolder {
        /// The folder.
        path: String,
        /// How many.
        count: u64,
    },
    /// Several files of one kind: the newest is read.
    NewestOfKind {
        /// How many.
        count: u64,
        /// The one read.
        name: String,
    },
    /// A DB that cannot be read at discovery, beside CSV files that are read instead.
    DbUnreadableUsingCsv {
        /// The DB.
        path: String,
        /// Why (the library's or the OS's words).
        cause: String,
    },
    /// A DB that cannot be read at discovery, with nothing beside it.
    DbUnusable {
        /// The DB.
        path: String,
        /// Why.
        cause: String,
    },
    /// A DB that failed while loading, beside CSV files that are read instead.
    DbFailedUsingCsv {
        /// The DB.
        path: String,
        /// Why.
        cause: String,
    },
    /// An optional table of a DB that could not be read.
    DbTableNotLoaded {
        /// The DB.
        path: String,
        /// The table.
        table: String,
        /// Why.
        cause: String,
    },
    /// A DB whose STRING_IDS lacks its columns: names are shown as numbers.
    StringIdsUnusable {
        /// The DB.
        path: String,
    },
    /// A DB without NPU_MEM: no APP Reserved curve.
    NoNpuMemTable {
        /// The DB.
        path: String,
    },
    /// A DB without OP_MEMORY: the details table is empty.
    NoOpMemoryTable {
        /// The DB.
        path: String,
    },
    /// PYTORCH_API rows without a start or an end, skipped.
    ApiRowsWithoutTimes {
        /// The DB.
        path: String,
        /// How many.
        count: u64,
    },
    /// PYTORCH_API could not be read.
    ApiUnreadable {
        /// The DB.
        path: String,
        /// Why.
        cause: String,
    },
    /// The host ops' file could not be read: no call stacks from it.
    StacksUnreadable {
        /// Why (names the file).
        cause: String,
    },
    /// Step or NPU MEM events of trace_view.json that could not be read.
    StepEventsUnreadable {
        /// The file.
        path: String,
        /// How many.
        count: u64,
    },
    /// trace_view.json could not be read: no steps or device memory from it.
    TraceUnreadable {
        /// Why (names the file).
        cause: String,
    },
    /// Rows of kernel_details skipped while reading steps.
    KernelRowsSkipped {
        /// The file.
        path: String,
        /// How many.
        count: u64,
    },
    /// kernel_details could not be read: no steps from it.
    KernelUnreadable {
        /// Why (names the file).
        cause: String,
    },
    /// A Chrome trace (a PyTorch profiler trace) without `[memory]` events.
    TraceWithoutMemory {
        /// The file.
        path: String,
    },
    /// A PyTorch profiler trace that could not be read.
    PyTorchTraceUnreadable {
        /// Why (names the file).
        cause: String,
    },
    /// An msMemScope dump that could not be read.
    MemScopeUnreadable {
        /// Why (names the file).
        cause: DumpProblem,
    },
    /// An msMemScope dump without MALLOC or FREE events.
    MemScopeWithoutMemory {
        /// The file.
        path: String,
    },
    /// `[memory]`, op or step events of a PyTorch trace that could not be read.
    TraceEventsUnreadable {
        /// The file.
        path: String,
        /// How many.
        count: u64,
    },
    /// The process ran out of device memory (an msMemScope dump's `OOM_DETAIL` rows): the
    /// request that failed; the blocks msMemScope listed as held are tagged in the OOM column.
    MemScopeOom {
        /// When, after the rank's first memory event.
        after_ns: i64,
        /// The call that failed (`func`).
        func: String,
        /// The bytes it asked for (`req_size`).
        request: Option<i64>,
        /// The driver's return code (`ret`).
        ret: Option<i64>,
        /// Records (largest and latest blocks held) tagged in the OOM column.
        held: u64,
        /// Records naming no block of the rank (another pool, or one freed before).
        unmatched: u64,
    },
    /// Frees of blocks allocated before profiling began: rows with a negative size.
    FreesWithoutAllocation {
        /// How many.
        count: u64,
    },
    /// msMemScope `FREE` rows of this process with no `MALLOC` and no device (`Device Id`
    /// `N/A`): no rank can hold them, so none shows them.
    FreesWithoutDevice {
        /// How many.
        count: u64,
    },
    /// A gzip stream that ends without its trailer or with stray bytes after its data: what was
    /// there was read.
    GzipEndedEarly {
        /// The file.
        path: String,
    },
    /// Events whose time lies far outside the bulk of the file's: left out.
    EventsOutOfWindow {
        /// The file.
        path: String,
        /// How many.
        count: u64,
    },
    /// A memUsageInfo file larger than any real one: only its start was read.
    UsageFileCut {
        /// The file.
        path: String,
        /// How much was read, MiB.
        mib: u64,
    },
    /// A memUsageInfo file without its header: read by position.
    UsageFileWithoutHeader {
        /// The file.
        path: String,
    },
    /// memUsageInfo rows that are not a name and two sizes.
    UsageRowsSkipped {
        /// The file.
        path: String,
        /// How many.
        count: u64,
    },
    /// A memUsageInfo file that could not be read.
    UsageFileUnreadable {
        /// Why (the file named in it).
        cause: String,
    },
    /// msMemScope allocations whose `Device Id` is N/A in a process of no single device (and
    /// whose free names none): no rank can hold them.
    AllocationsWithoutDevice {
        /// How many.
        count: u64,
    },
    /// Allocations at an address still held: the earlier block's free was not recorded, so it
    /// is shown as never freed.
    AllocationsOverHeldAddress {
        /// How many.
        count: u64,
    },
    /// A rank of the overview that could not be loaded.
    NotLoaded {
        /// Why.
        cause: String,
    },
    /// Optional columns a DB table lacks: read as empty.
    MissingColumns {
        /// The DB.
        path: String,
        /// The table.
        table: String,
        /// The columns, joined by `, `.
        columns: String,
    },
    /// Rows of a file that were skipped, with the first one's line and reason.
    SkippedRows {
        /// The file.
        path: String,
        /// How many.
        count: u64,
        /// The first skipped row: its line and why.
        first: Option<(u64, SkipReason)>,
    },
    /// Any other note, as written (English).
    Text(String),
}

// The two source notes are the rank's own constants.
use super::{USING_CSV_NOTE as USING_CSV, USING_DB_NOTE as USING_DB};

impl Message {
    /// The English text, as the CLI and JSON print it.
    pub fn text(&self) -> String {
        self.to_string()
    }
}

/// Why an msMemScope dump could not be read: typed, so the app says it in its language (the
/// words of the OS, SQLite and the CSV reader stay as they are).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DumpProblem {
    /// The file, SQLite or the CSV reader refused.
    Unreadable {
        /// The file.
        path: String,
        /// Their words.
        cause: String,
    },
    /// A CSV whose header lacks msMemScope's columns.
    NotADump {
        /// The file.
        path: String,
    },
    /// A database without the dump's table.
    NoTable {
        /// The file.
        path: String,
        /// The table looked for.
        table: &'static str,
    },
    /// A database whose dump table lacks msMemScope's columns.
    TableLacksColumns {
        /// The file.
        path: String,
        /// The table.
        table: &'static str,
    },
    /// The reading was cancelled.
    Cancelled,
    /// A rank that is not an msMemScope rank (`PID/DEVICE`), with its part when it has one.
    NotARank {
        /// The rank's part.
        part: Option<String>,
    },
}

impl DumpProblem {
    /// The file or reader refused `path` with `cause`.
    pub fn unreadable(path: impl fmt::Display, cause: impl fmt::Display) -> DumpProblem {
        DumpProblem::Unreadable {
            path: path.to_string(),
            cause: cause.to_string(),
        }
    }
}

impl fmt::Display for DumpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DumpProblem::Unreadable { path, cause } => write!(f, "{path}: {cause}"),
            DumpProblem::NotADump { path } => {
                write!(
                    f,
                    "{path}: not an msMemScope dump (its header lacks columns)"
                )
            }
            DumpProblem::NoTable { path, table } => write!(f, "{path}: no {table} table"),
            DumpProblem::TableLacksColumns { path, table } => {
                write!(f, "{path}: {table} lacks msMemScope's columns")
            }
            DumpProblem::Cancelled => write!(f, "cancelled"),
            DumpProblem::NotARank { part: None } => write!(f, "not an msMemScope rank"),
            DumpProblem::NotARank { part: Some(p) } => write!(f, "not an msMemScope rank: {p}"),
        }
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Message::NoOperatorMemory => f.write_str(
                "no operator_memory*.csv beside memory_record: the details table is empty",
            ),
            Message::NoModuleMem => {
                f.write_str("no npu_module_mem*.csv: the component peak table is empty")
            }
            Message::NoMemoryRecord => f.write_str(
                "no memory_record*.csv: no curves, only the details table (MindStudio Insight \
                 shows nothing here)",
            ),
            Message::UsingDb => f.write_str(USING_DB),
            Message::UsingCsv => f.write_str(USING_CSV),
            Message::UsingSlices => {
                f.write_str("both sliced and unsliced files present; using the slices")
            }
            Message::LossyTimestamps { files } => write!(
                f,
                "lossy timestamps: {files} use scientific notation (saved by Excel?); times \
                 there are approximate"
            ),
            Message::NamesNotUtf8 { path } => write!(
                f,
                "{path}: some names are not UTF-8 (GBK, as Chinese Excel saves CSV?); they were \
                 decoded as GB18030"
            ),
            Message::DecodedFrom { path, encoding } => write!(f, "{path}: decoded from {encoding}"),
            Message::SpecialFile { path, what } => {
                write!(f, "{path}: not a regular file (it is {what}); skipped")
            }
            Message::FolderUnreadable { path } => write!(f, "cannot read folder {path}"),
            Message::OnlyComponentFiles { path } => write!(
                f,
                "{path}: npu_module_mem/static_op_mem without memory_record or operator_memory \
                 skipped"
            ),
            Message::RankWithoutMemoryData { path, holds } => write!(
                f,
                "{path}: no memory data (its output holds {holds}; profile with \
                 profile_memory=True); not shown"
            ),
            Message::SnapshotsInFolder { path, count } => write!(
                f,
                "{count} allocator snapshots (.pickle) under {path}: `memsight snapshot {path}` \
                 lists which ranks ran out of memory and how close the others were; open one \
                 with File > Open file"
            ),
            Message::SnapshotNotProfile { path } => write!(
                f,
                "{path} is an allocator snapshot, not a profile: the app opens it in its \
                 snapshot view (`memsight {path}`); `memsight snapshot` summarises it on the \
                 command line"
            ),
            Message::NewestOfKind { count, name } => {
                write!(f, "{count} files of one kind; using the newest, {name}")
            }
            Message::DbUnreadableUsingCsv { path, cause } => {
                write!(f, "{path}: {cause}; using the CSV files")
            }
            Message::DbUnusable { path, cause } => write!(f, "{path}: {cause}"),
            Message::DbFailedUsingCsv { path, cause } => {
                write!(f, "{path}: {cause}; using the CSV files instead")
            }
            Message::DbTableNotLoaded { path, table, cause } => {
                write!(f, "{path}: {table}: {cause}; not loaded")
            }
            Message::StringIdsUnusable { path } => write!(
                f,
                "{path}: STRING_IDS has no id/value columns; names are shown as numbers"
            ),
            Message::NoNpuMemTable { path } => {
                write!(f, "{path}: no NPU_MEM table: no APP Reserved curve")
            }
            Message::NoOpMemoryTable { path } => {
                write!(f, "{path}: no OP_MEMORY table: the details table is empty")
            }
            Message::ApiRowsWithoutTimes { path, count } => write!(
                f,
                "{path}: PYTORCH_API: {} without a start or an end; skipped",
                super::plural::count(*count, "row", "rows")
            ),
            Message::ApiUnreadable { path, cause } => write!(
                f,
                "{path}: PYTORCH_API: {cause}; call stacks not read from it"
            ),
            Message::StacksUnreadable { cause } => {
                write!(f, "{cause}; call stacks not read from it")
            }
            Message::StepEventsUnreadable { path, count } => write!(
                f,
                "{path}: {} could not be read; skipped",
                super::plural::count(*count, "step or NPU MEM event", "step or NPU MEM events")
            ),
            Message::TraceUnreadable { cause } => {
                write!(f, "{cause}; steps and device memory not read from it")
            }
            Message::KernelRowsSkipped { path, count } => {
                let rows = if *count == 1 { "row" } else { "rows" };
                write!(f, "{path}: {count} {rows} skipped while reading steps")
            }
            Message::KernelUnreadable { cause } => write!(f, "{cause}; steps not read from it"),
            Message::TraceWithoutMemory { path } => write!(
                f,
                "{path}: a profiler trace without [memory] events (profile with \
                 profile_memory=True); no memory data in it"
            ),
            Message::PyTorchTraceUnreadable { cause } => {
                write!(f, "{cause}; the PyTorch trace was not read")
            }
            Message::MemScopeUnreadable { cause } => {
                write!(f, "{cause}; the msMemScope dump was not read")
            }
            Message::MemScopeWithoutMemory { path } => write!(
                f,
                "{path}: an msMemScope dump without MALLOC or FREE events; no memory data in it"
            ),
            Message::TraceEventsUnreadable { path, count } => {
                let events = if *count == 1 { "event" } else { "events" };
                write!(f, "{path}: {count} {events} could not be read; skipped")
            }
            Message::MemScopeOom {
                after_ns,
                func,
                request,
                ret,
                held,
                unmatched,
            } => {
                let asked = request.map_or_else(
                    || "memory".to_string(),
                    |r| format!("{} MB", super::units::mib(r)),
                );
                let code = ret.map_or_else(String::new, |r| format!(", ret {r}"));
                write!(
                    f,
                    "Out of memory at {:.3} s: {func} asked for {asked}{code}; {} \
                     held then {} marked in the OOM column",
                    *after_ns as f64 / 1e9,
                    super::plural::count(*held, "block", "blocks"),
                    super::plural::noun(*held, "is", "are")
                )?;
                if *unmatched > 0 {
                    write!(
                        f,
                        " ({} not in this rank's table)",
                        super::plural::count(*unmatched, "listed block is", "listed blocks are")
                    )?;
                }
                Ok(())
            }
            Message::FreesWithoutDevice { count } => {
                let frees = if *count == 1 { "free" } else { "frees" };
                write!(
                    f,
                    "{count} {frees} of this process name no device (Device Id N/A) and no \
                     allocation: they belong to no rank and are not shown"
                )
            }
            Message::GzipEndedEarly { path } => write!(
                f,
                "{path}: the gzip stream ends without its trailer or with stray bytes after its \
                 data (a copy cut short?); what was there was read"
            ),
            Message::EventsOutOfWindow { path, count } => {
                let events = if *count == 1 {
                    "event's time lies"
                } else {
                    "events' times lie"
                };
                write!(
                    f,
                    "{path}: {count} {events} more than a week from the rest of the file \
                     (a corrupt or µs-scale cell?); left out"
                )
            }
            Message::UsageFileCut { path, mib } => write!(
                f,
                "{path}: larger than any memUsageInfo file; only its first {mib} MB were read"
            ),
            Message::UsageFileWithoutHeader { path } => write!(
                f,
                "{path}: no header (moduleName, curMemSize(MB), memPeakSize(MB)); read by position"
            ),
            Message::UsageRowsSkipped { path, count } => {
                let rows = if *count == 1 { "row" } else { "rows" };
                write!(
                    f,
                    "{path}: {count} {rows} of memUsageInfo could not be read (not a name and \
                     two sizes); skipped"
                )
            }
            Message::UsageFileUnreadable { cause } => {
                write!(f, "{cause}; the memUsageInfo file was not read")
            }
            Message::AllocationsWithoutDevice { count } => {
                let what = if *count == 1 {
                    "allocation names"
                } else {
                    "allocations name"
                };
                write!(
                    f,
                    "{count} {what} no device (Device Id N/A) in a process of several devices or \
                     none: they belong to no rank and are not shown"
                )
            }
            Message::FreesWithoutAllocation { count } => {
                let frees = if *count == 1 { "free" } else { "frees" };
                write!(
                    f,
                    "{count} {frees} of blocks allocated before profiling began (rows with a \
                     negative size)"
                )
            }
            Message::AllocationsOverHeldAddress { count } => {
                let allocations = if *count == 1 {
                    "allocation"
                } else {
                    "allocations"
                };
                write!(
                    f,
                    "{count} {allocations} at an address still held: the earlier block's free \
                     was not recorded, it is shown as never freed"
                )
            }
            Message::NotLoaded { cause } => write!(f, "not loaded: {cause}"),
            Message::MissingColumns {
                path,
                table,
                columns,
            } => write!(f, "{path}: {table} has no column {columns}; read as empty"),
            Message::SkippedRows { path, count, first } => {
                let rows = if *count == 1 { "row" } else { "rows" };
                write!(f, "{path}: skipped {count} {rows}")?;
                match first {
                    Some((line, reason)) => write!(f, " (first: line {line}: {reason})"),
                    None => Ok(()),
                }
            }
            Message::Text(t) => f.write_str(t),
        }
    }
}

/// Why a row was skipped, with what varies in it: the CLI prints the English text, the UI its
/// own language.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkipReason {
    /// Fewer cells than the header names.
    FewerFields {
        /// Cells in the row.
        got: usize,
        /// Columns the header needs.
        header: usize,
    },
    /// More non-empty cells than the header names.
    ExtraFields {
        /// Cells in the row.
        got: usize,
        /// Columns in the header.
        header: usize,
    },
    /// A file holding several devices, and this row names none.
    NoDevice,
    /// A required cell is empty.
    Empty {
        /// The column.
        column: String,
    },
    /// A required cell is missing.
    Missing {
        /// The column.
        column: String,
    },
    /// A cell that is not a number.
    NotANumber {
        /// The column.
        column: String,
        /// The cell, as written.
        cell: String,
    },
    /// A number too large for the value it must become.
    OutOfRange {
        /// The column.
        column: String,
        /// The cell, as written.
        cell: String,
    },
    /// A time far outside the profile's time range.
    OutOfWindow {
        /// The column.
        column: String,
        /// The cell, as written.
        cell: String,
    },
    /// A DB row without what it needs (`timestamp`, `addr or size`, …).
    DbMissing {
        /// What is missing, as the DB's columns say it.
        what: String,
    },
    /// A DB cell that is not a number.
    DbNotANumber {
        /// The column(s).
        what: String,
    },
    /// A line longer than the reader holds.
    LineTooLong {
        /// The reader's limit, MiB.
        mib: u64,
    },
    /// Any other reason, as written (English).
    Text(String),
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SkipReason::FewerFields { got, header } => {
                write!(f, "{got} fields, the header has {header}")
            }
            SkipReason::ExtraFields { got, header } => write!(
                f,
                "{got} fields, the header has {header} (a value with an unquoted comma?)"
            ),
            SkipReason::NoDevice => f.write_str("no device in a file that holds several devices"),
            SkipReason::Empty { column } => write!(f, "{column}: empty"),
            SkipReason::Missing { column } => write!(f, "{column}: missing"),
            SkipReason::NotANumber { column, cell } => {
                write!(f, "{column}: not a number: {cell:?}")
            }
            SkipReason::OutOfRange { column, cell } => {
                write!(f, "{column}: number out of range: {cell:?}")
            }
            SkipReason::OutOfWindow { column, cell } => write!(
                f,
                "{column}: {cell} is far outside the profile's time range (a corrupt value?)"
            ),
            SkipReason::DbMissing { what } => write!(f, "{what} missing"),
            SkipReason::DbNotANumber { what } => write!(f, "{what} not a number"),
            SkipReason::LineTooLong { mib } => write!(f, "line longer than {mib} MB; skipped"),
            SkipReason::Text(t) => f.write_str(t),
        }
    }
}

impl From<String> for SkipReason {
    fn from(t: String) -> SkipReason {
        SkipReason::Text(t)
    }
}

impl From<&str> for SkipReason {
    fn from(t: &str) -> SkipReason {
        SkipReason::Text(t.to_string())
    }
}

impl serde::Serialize for Message {
    /// As its English text (what `inspect --json` has always printed).
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl From<String> for Message {
    fn from(t: String) -> Message {
        Message::Text(t)
    }
}

impl From<&str> for Message {
    fn from(t: &str) -> Message {
        Message::Text(t.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The texts the CLI printed before notes were typed, written out by hand: typing them must
    /// not change a byte of `inspect`'s output.
    #[test]
    fn english_texts_are_the_ones_the_cli_always_printed() {
        let cases = [
            (
                Message::NoOperatorMemory,
                "no operator_memory*.csv beside memory_record: the details table is empty",
            ),
            (
                Message::NoMemoryRecord,
                "no memory_record*.csv: no curves, only the details table (MindStudio Insight shows nothing here)",
            ),
            (
                Message::LossyTimestamps {
                    files: "/a.csv, /b.csv".into(),
                },
                "lossy timestamps: /a.csv, /b.csv use scientific notation (saved by Excel?); times there are approximate",
            ),
            (
                Message::DbTableNotLoaded {
                    path: "/x.db".into(),
                    table: "OP_MEMORY".into(),
                    cause: "no such column".into(),
                },
                "/x.db: OP_MEMORY: no such column; not loaded",
            ),
            (
                Message::SkippedRows {
                    path: "/m.csv".into(),
                    count: 3,
                    first: Some((7, "bad number".into())),
                },
                "/m.csv: skipped 3 rows (first: line 7: bad number)",
            ),
            (
                Message::NewestOfKind {
                    count: 2,
                    name: "memory_record_2.csv".into(),
                },
                "2 files of one kind; using the newest, memory_record_2.csv",
            ),
            (Message::Text("anything".into()), "anything"),
        ];
        for (m, text) in cases {
            assert_eq!(m.text(), text);
        }
    }
}
