//! Load notes as values, end to end: ingest records a [`Message`] with what varies in it,
//! the CLI and JSON print its English [`Message::text`], and the UI shows it in the user's
//! language. No code decides anything by comparing note text; a note nobody typed yet is
//! [`Message::Text`], shown as written.

use std::fmt;

use super::{Cause, Lang};

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
        cause: Cause,
    },
    /// A DB that cannot be read at discovery, with nothing beside it.
    DbUnusable {
        /// The DB.
        path: String,
        /// Why.
        cause: Cause,
    },
    /// A DB that failed while loading, beside CSV files that are read instead.
    DbFailedUsingCsv {
        /// The DB.
        path: String,
        /// Why.
        cause: Cause,
    },
    /// An optional table of a DB that could not be read.
    DbTableNotLoaded {
        /// The DB.
        path: String,
        /// The table.
        table: String,
        /// Why.
        cause: Cause,
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
        cause: Cause,
    },
    /// The host ops' file could not be read: no call stacks from it.
    StacksUnreadable {
        /// Why (names the file).
        cause: Cause,
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
        cause: Cause,
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
        cause: Cause,
    },
    /// A Chrome trace (a PyTorch profiler trace) without `[memory]` events.
    TraceWithoutMemory {
        /// The file.
        path: String,
    },
    /// A PyTorch profiler trace that could not be read.
    PyTorchTraceUnreadable {
        /// Why (names the file).
        cause: Cause,
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
    /// A CSV file that stops in the middle of its last row (a copy cut short, a dump still
    /// being written): that row was left out.
    DumpCutShort {
        /// The file.
        path: String,
    },
    /// A trace (JSON) that stops before its end (a copy cut short, a profiler still writing):
    /// the events before the cut were read.
    TraceCutShort {
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
        cause: Cause,
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
        cause: Cause,
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
    /// Call stacks or module nestings deeper than the frames a stack keeps: each keeps its
    /// outermost frames.
    StacksCut {
        /// The ops whose stacks were cut (the most of the passes that build stacks).
        count: u64,
        /// The frames each keeps.
        kept: usize,
    },
    /// The module tree would have grown past its memory budget: it was not built.
    ModulesRefused {
        /// The budget it went past.
        over: super::OverBudget,
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
        cause: Cause,
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
    pub fn unreadable(path: impl fmt::Display, cause: impl Into<Cause>) -> DumpProblem {
        DumpProblem::Unreadable {
            path: path.to_string(),
            cause: cause.into(),
        }
    }
}

impl DumpProblem {
    /// The text in `lang` (file names, table names and the reporter's words stay as written).
    pub fn render(&self, lang: Lang) -> String {
        match self {
            DumpProblem::Unreadable { path, cause } => match lang {
                Lang::En => format!("{path}: {cause}"),
                Lang::Zh => format!("{path}：{}", cause.render(lang)),
            },
            DumpProblem::NotADump { path } => match lang {
                Lang::En => format!("{path}: not an msMemScope dump (its header lacks columns)"),
                Lang::Zh => format!("{path}：不是 msMemScope 数据文件（表头缺少其列）"),
            },
            DumpProblem::NoTable { path, table } => match lang {
                Lang::En => format!("{path}: no {table} table"),
                Lang::Zh => format!("{path}：没有 {table} 表"),
            },
            DumpProblem::TableLacksColumns { path, table } => match lang {
                Lang::En => format!("{path}: {table} lacks msMemScope's columns"),
                Lang::Zh => format!("{path}：{table} 表缺少 msMemScope 的列"),
            },
            DumpProblem::Cancelled => lang.pick("cancelled", "已取消").into(),
            DumpProblem::NotARank { part: None } => lang
                .pick("not an msMemScope rank", "不是 msMemScope 的 rank")
                .into(),
            DumpProblem::NotARank { part: Some(p) } => match lang {
                Lang::En => format!("not an msMemScope rank: {p}"),
                Lang::Zh => format!("不是 msMemScope 的 rank：{p}"),
            },
        }
    }
}

impl fmt::Display for DumpProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
    }
}

impl Message {
    /// The note in `lang`, both languages side by side (file names, table names and the
    /// reporter's words stay as written). The CLI and JSON print [`Lang::En`].
    pub fn render(&self, lang: Lang) -> String {
        match self {

Message::NoOperatorMemory => match lang { Lang::En => String::from(
                "no operator_memory*.csv beside memory_record: the details table is empty",
            ), Lang::Zh => "memory_record 旁没有 operator_memory*.csv：详情表为空".into(), },
Message::NoModuleMem => match lang { Lang::En => {
                String::from("no npu_module_mem*.csv: the component peak table is empty")
            }, Lang::Zh => "没有 npu_module_mem*.csv：组件峰值表为空".into(), },
Message::NoMemoryRecord => match lang { Lang::En => String::from(
                "no memory_record*.csv: no curves, only the details table (MindStudio Insight \
                 shows nothing here)",
            ), Lang::Zh => {
            "没有 memory_record*.csv：没有曲线，只有详情表（MindStudio Insight 在此不显示任何内容）"
                .into()
        }, },
Message::UsingDb => match lang { Lang::En => String::from(USING_DB), Lang::Zh => "同时存在 DB 与 CSV 文件；读取 DB（与 MindStudio Insight 相同）".into(), },
Message::UsingCsv => match lang { Lang::En => String::from(USING_CSV), Lang::Zh => "同时存在 DB 与 CSV 文件；按要求读取 CSV 文件".into(), },
Message::UsingSlices => match lang { Lang::En => {
                String::from("both sliced and unsliced files present; using the slices")
            }, Lang::Zh => "同时存在切片与未切片的文件；读取切片".into(), },
Message::LossyTimestamps { files } => match lang { Lang::En => format!("lossy timestamps: {files} use scientific notation (saved by Excel?); times \
                 there are approximate"
            ), Lang::Zh => format!(
            "时间戳有损：{files} 使用了科学计数法（被 Excel 保存过？）；其中的时间只是近似值"
        ), },
Message::NamesNotUtf8 { path } => match lang { Lang::En => format!("{path}: some names are not UTF-8 (GBK, as Chinese Excel saves CSV?); they were \
                 decoded as GB18030"
            ), Lang::Zh => {
            format!("{path}：部分名称不是 UTF-8（中文 Excel 保存的 GBK CSV？）；已按 GB18030 解码")
        }, },
Message::DecodedFrom { path, encoding } => match lang { Lang::En => format!("{path}: decoded from {encoding}"), Lang::Zh => format!("{path}：已从 {encoding} 解码"), },
Message::SpecialFile { path, what } => match lang { Lang::En => {
                format!("{path}: not a regular file (it is {what}); skipped")
            }, Lang::Zh => {
            format!(
                "{path}：不是普通文件（而是{}）；已跳过",
                super::cause::zh_file_type(what)
            )
        }, },
Message::FolderUnreadable { path } => match lang { Lang::En => format!("cannot read folder {path}"), Lang::Zh => format!("无法读取文件夹 {path}"), },
Message::OnlyComponentFiles { path } => match lang { Lang::En => format!("{path}: npu_module_mem/static_op_mem without memory_record or operator_memory \
                 skipped"
            ), Lang::Zh => format!(
            "{path}：只有 npu_module_mem/static_op_mem，没有 memory_record 或 operator_memory；已跳过"
        ), },
Message::RankWithoutMemoryData { path, holds } => match lang { Lang::En => format!("{path}: no memory data (its output holds {holds}; profile with \
                 profile_memory=True); not shown"
            ), Lang::Zh => format!(
            "{path}：没有内存数据（输出文件夹中只有 {holds}；采集时需设置 profile_memory=True）；未显示"
        ), },
Message::SnapshotsInFolder { path, count } => {
    let command = super::shell::memsight("snapshot", std::path::Path::new(path), &[]);
    match lang { Lang::En => format!("{count} allocator snapshots (.pickle) under {path}: `{command}` \
                 lists which ranks ran out of memory and how close the others were; open one \
                 with File > Open file"
            ), Lang::Zh => format!(
            "{path} 下有 {count} 个内存快照（.pickle）：`{command}` 列出哪些 rank 内存不足（OOM）、其余 rank 离上限多近；用“文件 > 打开文件”打开其中一个"
        ), }
},
Message::SnapshotNotProfile { path } => match lang { Lang::En => format!("{path} is an allocator snapshot, not a profile: the app opens it in its \
                 snapshot view (`memsight {path}`); `memsight snapshot` summarises it on the \
                 command line"
            ), Lang::Zh => format!(
            "{path} 是内存快照，不是性能数据：本应用会在快照视图中打开它（`memsight {path}`）；\
             命令行下用 `memsight snapshot` 查看摘要"
        ), },
Message::NewestOfKind { count, name } => match lang { Lang::En => {
                format!("{count} files of one kind; using the newest, {name}")
            }, Lang::Zh => {
            format!("同类文件有 {count} 个；读取最新的 {name}")
        }, },
Message::DbUnreadableUsingCsv { path, cause } => match lang { Lang::En => {
                format!("{path}: {cause}; using the CSV files")
            }, Lang::Zh => {
            format!("{path}：{}；改为读取 CSV 文件", cause.render(lang))
        }, },
Message::DbUnusable { path, cause } => match lang { Lang::En => format!("{path}: {cause}"), Lang::Zh => {
            format!("{path}：无法使用（{}）", cause.render(lang))
        }, },
Message::DbFailedUsingCsv { path, cause } => match lang { Lang::En => {
                format!("{path}: {cause}; using the CSV files instead")
            }, Lang::Zh => {
            format!("{path}：{}；已改为读取 CSV 文件", cause.render(lang))
        }, },
Message::DbTableNotLoaded { path, table, cause } => match lang { Lang::En => {
                format!("{path}: {table}: {cause}; not loaded")
            }, Lang::Zh => {
            format!("{path}：{table} 表无法读取（{}）；未加载", cause.render(lang))
        }, },
Message::StringIdsUnusable { path } => match lang { Lang::En => format!("{path}: STRING_IDS has no id/value columns; names are shown as numbers"
            ), Lang::Zh => {
            format!("{path}：STRING_IDS 缺少 id/value 列；名称以数字显示")
        }, },
Message::NoNpuMemTable { path } => match lang { Lang::En => {
                format!("{path}: no NPU_MEM table: no APP Reserved curve")
            }, Lang::Zh => {
            format!("{path}：没有 NPU_MEM 表：没有 APP Reserved 曲线")
        }, },
Message::NoOpMemoryTable { path } => match lang { Lang::En => {
                format!("{path}: no OP_MEMORY table: the details table is empty")
            }, Lang::Zh => {
            format!("{path}：没有 OP_MEMORY 表：详情表为空")
        }, },
Message::ApiRowsWithoutTimes { path, count } => match lang { Lang::En => format!("{path}: PYTORCH_API: {} without a start or an end; skipped",
                super::plural::count(*count, "row", "rows")
            ), Lang::Zh => {
            format!("{path}：PYTORCH_API 中有 {count} 行缺少开始或结束时间；已跳过")
        }, },
Message::ApiUnreadable { path, cause } => match lang { Lang::En => format!("{path}: PYTORCH_API: {cause}; call stacks not read from it"
            ), Lang::Zh => {
            format!(
                "{path}：PYTORCH_API 无法读取（{}）；未从中读取调用栈",
                cause.render(lang)
            )
        }, },
Message::StacksUnreadable { cause } => match lang { Lang::En => {
                format!("{cause}; call stacks not read from it")
            }, Lang::Zh => {
            format!("{}；未从中读取调用栈", cause.render(lang))
        }, },
Message::StepEventsUnreadable { path, count } => match lang { Lang::En => format!("{path}: {} could not be read; skipped",
                super::plural::count(*count, "step or NPU MEM event", "step or NPU MEM events")
            ), Lang::Zh => {
            format!("{path}：有 {count} 个迭代或 NPU MEM 事件无法读取；已跳过")
        }, },
Message::TraceUnreadable { cause } => match lang { Lang::En => {
                format!("{cause}; steps and device memory not read from it")
            }, Lang::Zh => {
            format!("{}；未从中读取迭代与设备内存", cause.render(lang))
        }, },
Message::KernelRowsSkipped { path, count } => match lang { Lang::En => {
                let rows = if *count == 1 { "row" } else { "rows" };
                format!("{path}: {count} {rows} skipped while reading steps")
            }, Lang::Zh => {
            format!("{path}：读取迭代时跳过了 {count} 行")
        }, },
Message::KernelUnreadable { cause } => match lang { Lang::En => format!("{cause}; steps not read from it"), Lang::Zh => format!("{}；未从中读取迭代", cause.render(lang)), },
Message::TraceWithoutMemory { path } => match lang { Lang::En => format!("{path}: a profiler trace without [memory] events (profile with \
                 profile_memory=True); no memory data in it"
            ), Lang::Zh => format!(
            "{path}：性能跟踪文件中没有 [memory] 事件（采集时请设置 profile_memory=True）；其中没有内存数据"
        ), },
Message::PyTorchTraceUnreadable { cause } => match lang { Lang::En => {
                format!("{cause}; the PyTorch trace was not read")
            }, Lang::Zh => {
            format!("{}；未读取该 PyTorch 跟踪文件", cause.render(lang))
        }, },
Message::MemScopeUnreadable { cause } => match lang { Lang::En => {
                format!("{cause}; the msMemScope dump was not read")
            }, Lang::Zh => {
            format!("{}；未读取该 msMemScope 数据文件", cause.render(lang))
        }, },
Message::MemScopeWithoutMemory { path } => match lang { Lang::En => format!("{path}: an msMemScope dump without MALLOC or FREE events; no memory data in it"
            ), Lang::Zh => {
            format!("{path}：msMemScope 数据文件中没有 MALLOC 或 FREE 事件；其中没有内存数据")
        }, },
Message::TraceEventsUnreadable { path, count } => match lang { Lang::En => {
                let events = if *count == 1 { "event" } else { "events" };
                format!("{path}: {count} {events} could not be read; skipped")
            }, Lang::Zh => {
            format!("{path}：有 {count} 个事件无法读取；已跳过")
        }, },
Message::MemScopeOom {
                after_ns,
                func,
                request,
                ret,
                held,
                unmatched,
            } => match lang { Lang::En => {
                let asked = request.map_or_else(
                    || "memory".to_string(),
                    |r| format!("{} MB", super::units::mib(r)),
                );
                let code = ret.map_or_else(String::new, |r| format!(", ret {r}"));
                let mut text = format!("Out of memory at {:.3} s: {func} asked for {asked}{code}; {} \
                     held then {} marked in the OOM column",
                    *after_ns as f64 / 1e9,
                    super::plural::count(*held, "block", "blocks"),
                    super::plural::noun(*held, "is", "are")
                );
                if *unmatched > 0 {
                    text.push_str(&format!(" ({} not in this rank's table)",
                        super::plural::count(*unmatched, "listed block is", "listed blocks are")
                    ));
                }
                text
            }, Lang::Zh => {
            let asked = request.map_or_else(
                || "内存".to_string(),
                |r| format!("{} MB", super::units::mib(r)),
            );
            let code = ret.map_or_else(String::new, |r| format!("，返回码 {r}"));
            let mut text = format!(
                "{:.3} s 时内存不足（OOM）：{func} 申请 {asked} 失败{code}；当时占用的 {held} 个内存块已在 OOM 列中标出",
                *after_ns as f64 / 1e9
            );
            if *unmatched > 0 {
                text.push_str(&format!(
                    "（另有 {unmatched} 个列出的内存块不在本 rank 的表中）"
                ));
            }
            text
        }, },
Message::FreesWithoutDevice { count } => match lang { Lang::En => {
                let frees = if *count == 1 { "free" } else { "frees" };
                format!("{count} {frees} of this process name no device (Device Id N/A) and no \
                     allocation: they belong to no rank and are not shown"
                )
            }, Lang::Zh => format!(
            "本进程有 {count} 次释放既无设备（Device Id 为 N/A）也无对应的分配：不属于任何 rank，未显示"
        ), },
Message::GzipEndedEarly { path } => match lang { Lang::En => format!("{path}: the gzip stream ends without its trailer or with stray bytes after its \
                 data (a copy cut short?); what was there was read"
            ), Lang::Zh => format!(
            "{path}：gzip 数据流缺少结尾校验或数据之后有多余字节（文件复制不完整？）；已读取其中的数据"
        ), },
Message::DumpCutShort { path } => match lang { Lang::En => format!("{path}: the file stops in the middle of its last row (a copy cut short, or msMemScope \
                 still writing it?); that row is left out"
            ), Lang::Zh => format!(
            "{path}：文件在最后一行的中间结束（复制不完整，或 msMemScope 仍在写入？）；该行未读取"
        ), },
Message::TraceCutShort { path } => match lang { Lang::En => format!("{path}: the trace stops before its end (a copy cut short, or the profiler still \
                 writing it?); the events before the cut were read"
            ), Lang::Zh => format!(
            "{path}：trace 文件在结尾之前中断（复制不完整，或性能采集仍在写入？）；已读取中断之前的事件"
        ), },
Message::EventsOutOfWindow { path, count } => match lang { Lang::En => {
                let events = if *count == 1 {
                    "event's time lies"
                } else {
                    "events' times lie"
                };
                format!("{path}: {count} {events} more than a week from the rest of the file \
                     (a corrupt or µs-scale cell?); left out"
                )
            }, Lang::Zh => format!(
            "{path}：有 {count} 个事件的时间与文件中其余事件相差一周以上（数值损坏或为微秒？）；已略去"
        ), },
Message::UsageFileCut { path, mib } => match lang { Lang::En => format!("{path}: larger than any memUsageInfo file; only its first {mib} MB were read"
            ), Lang::Zh => {
            format!("{path}：大于任何 memUsageInfo 文件；只读取了前 {mib} MB")
        }, },
Message::UsageFileWithoutHeader { path } => match lang { Lang::En => format!("{path}: no header (moduleName, curMemSize(MB), memPeakSize(MB)); read by position"
            ), Lang::Zh => format!(
            "{path}：没有表头（moduleName、curMemSize(MB)、memPeakSize(MB)）；按列的位置读取"
        ), },
Message::UsageRowsSkipped { path, count } => match lang { Lang::En => {
                let rows = if *count == 1 { "row" } else { "rows" };
                format!("{path}: {count} {rows} of memUsageInfo could not be read (not a name and \
                     two sizes); skipped"
                )
            }, Lang::Zh => {
            format!("{path}：memUsageInfo 中有 {count} 行无法读取（不是名称加两个大小）；已跳过")
        }, },
Message::UsageFileUnreadable { cause } => match lang { Lang::En => {
                format!("{cause}; the memUsageInfo file was not read")
            }, Lang::Zh => {
            format!("{}；未读取该 memUsageInfo 文件", cause.render(lang))
        }, },
Message::AllocationsWithoutDevice { count } => match lang { Lang::En => {
                let what = if *count == 1 {
                    "allocation names"
                } else {
                    "allocations name"
                };
                format!("{count} {what} no device (Device Id N/A) in a process of several devices or \
                     none: they belong to no rank and are not shown"
                )
            }, Lang::Zh => format!(
            "有 {count} 次分配没有设备（Device Id 为 N/A），且所属进程没有唯一的设备：不属于任何 rank，未显示"
        ), },
Message::FreesWithoutAllocation { count } => match lang { Lang::En => {
                let frees = if *count == 1 { "free" } else { "frees" };
                format!("{count} {frees} of blocks allocated before profiling began (rows with a \
                     negative size)"
                )
            }, Lang::Zh => {
            format!("有 {count} 次释放的内存块在采集开始前已分配（这些行的大小为负数）")
        }, },
Message::AllocationsOverHeldAddress { count } => match lang { Lang::En => {
                let allocations = if *count == 1 {
                    "allocation"
                } else {
                    "allocations"
                };
                format!("{count} {allocations} at an address still held: the earlier block's free \
                     was not recorded, it is shown as never freed"
                )
            }, Lang::Zh => format!(
            "有 {count} 次分配发生在仍被占用的地址上：之前内存块的释放未被记录，显示为从未释放"
        ), },
Message::NotLoaded { cause } => match lang { Lang::En => format!("not loaded: {cause}"), Lang::Zh => format!("未加载：{}", cause.render(lang)), },
Message::MissingColumns {
                path,
                table,
                columns,
            } => match lang { Lang::En => format!("{path}: {table} has no column {columns}; read as empty"), Lang::Zh => format!("{path}：{table} 表缺少列 {columns}；按空值读取"), },
Message::SkippedRows { path, count, first } => match lang { Lang::En => {
                let rows = if *count == 1 { "row" } else { "rows" };
                match first {
                    Some((line, reason)) => format!("{path}: skipped {count} {rows} (first: line {line}: {reason})"),
                    None => format!("{path}: skipped {count} {rows}"),
                }
            }, Lang::Zh => match first {
            Some((line, reason)) => {
                let reason = reason.render(lang);
                format!("{path}：跳过 {count} 行（第一行：第 {line} 行：{reason}）")
            }
            None => format!("{path}：跳过 {count} 行"),
        }, },
Message::StacksCut { count, kept } => match lang {
    Lang::En => format!(
        "the stacks of {count} ops were nested deeper than {kept} frames (no real program \
         nests so deep): each keeps its outermost {kept}, the deeper modules counted in their \
         ancestor"
    ),
    Lang::Zh => format!(
        "有 {count} 个算子的调用栈嵌套超过 {kept} 层（真实程序不会这么深）：每个只保留最外层的 {kept} 层，更深的模块计入其第 {kept} 层的祖先"
    ),
},
Message::ModulesRefused { over } => match lang {
    Lang::En => format!("modules not built: {over}"),
    Lang::Zh => format!("未建立模块树：{}", over.render(lang)),
},
Message::Text(t) => t.clone(),

        }
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
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

impl SkipReason {
    /// The reason in `lang` (column names and cells stay as the file writes them).
    pub fn render(&self, lang: Lang) -> String {
        match self {
            SkipReason::FewerFields { got, header } => match lang {
                Lang::En => {
                    format!("{got} fields, the header has {header}")
                }
                Lang::Zh => format!("只有 {got} 个字段，表头有 {header} 个"),
            },
            SkipReason::ExtraFields { got, header } => match lang {
                Lang::En => format!(
                    "{got} fields, the header has {header} (a value with an unquoted comma?)"
                ),
                Lang::Zh => {
                    format!("有 {got} 个字段，表头只有 {header} 个（某个值含未加引号的逗号？）")
                }
            },
            SkipReason::NoDevice => match lang {
                Lang::En => String::from("no device in a file that holds several devices"),
                Lang::Zh => "文件包含多个设备，而此行未注明设备".into(),
            },
            SkipReason::Empty { column } => match lang {
                Lang::En => format!("{column}: empty"),
                Lang::Zh => format!("{column}：为空"),
            },
            SkipReason::Missing { column } => match lang {
                Lang::En => format!("{column}: missing"),
                Lang::Zh => format!("{column}：缺失"),
            },
            SkipReason::NotANumber { column, cell } => match lang {
                Lang::En => {
                    format!("{column}: not a number: {cell:?}")
                }
                Lang::Zh => format!("{column}：不是数字：{cell:?}"),
            },
            SkipReason::OutOfRange { column, cell } => match lang {
                Lang::En => {
                    format!("{column}: number out of range: {cell:?}")
                }
                Lang::Zh => format!("{column}：数值超出范围：{cell:?}"),
            },
            SkipReason::OutOfWindow { column, cell } => match lang {
                Lang::En => format!(
                    "{column}: {cell} is far outside the profile's time range (a corrupt value?)"
                ),
                Lang::Zh => {
                    format!("{column}：{cell} 远在本数据的时间范围之外（数值损坏？）")
                }
            },
            SkipReason::DbMissing { what } => match lang {
                Lang::En => format!("{what} missing"),
                Lang::Zh => format!("缺少 {what}"),
            },
            SkipReason::DbNotANumber { what } => match lang {
                Lang::En => format!("{what} not a number"),
                Lang::Zh => format!("{what} 不是数字"),
            },
            SkipReason::LineTooLong { mib } => match lang {
                Lang::En => format!("line longer than {mib} MB; skipped"),
                Lang::Zh => format!("行长度超过 {mib} MB；已跳过"),
            },
            SkipReason::Text(t) => t.clone(),
        }
    }
}

impl fmt::Display for SkipReason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.render(Lang::En))
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
