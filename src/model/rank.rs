//! What a rank is: where its data lives ([`RankInfo`]) and, once loaded, its tables ([`RankData`]).

use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::LoadReport;
use super::{Interner, MemoryRecords, ModuleMemory, OperatorMemory, StaticOpMemory};

/// Which profiler wrote the data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// torch_npu (Ascend PyTorch Profiler), `*_ascend_pt`.
    TorchNpu,
    /// MindSpore, `*_ascend_ms`.
    MindSpore,
    /// CANN msprof, `PROF_*/mindstudio_profiler_output`.
    Msprof,
    /// A source read by an importer (`ingest::importer`): its name.
    Imported(&'static str),
}

impl Format {
    /// The name used in `inspect --json`.
    pub fn as_str(self) -> &'static str {
        match self {
            Format::TorchNpu => "torch_npu",
            Format::MindSpore => "mindspore",
            Format::Msprof => "msprof",
            Format::Imported(name) => name,
        }
    }
}

/// The environment variable that configures the caching allocator of a rank on `device`:
/// `PYTORCH_CUDA_ALLOC_CONF` for a PyTorch trace's `cuda:N`, else torch_npu's
/// `PYTORCH_NPU_ALLOC_CONF`.
pub fn alloc_conf_var(device: Option<&str>) -> &'static str {
    if device.is_some_and(|d| d.to_ascii_lowercase().starts_with("cuda")) {
        CUDA_ALLOC_CONF
    } else {
        NPU_ALLOC_CONF
    }
}

/// PyTorch's caching-allocator settings variable on CUDA.
pub const CUDA_ALLOC_CONF: &str = "PYTORCH_CUDA_ALLOC_CONF";

/// torch_npu's caching-allocator settings variable.
pub const NPU_ALLOC_CONF: &str = "PYTORCH_NPU_ALLOC_CONF";

/// A device as people read it: an Ascend export's device number as `NPU:4` (and PyTorch's
/// `npu:4` the same way), an importer's own device name (`cpu`, `cuda:0`) as it is.
pub fn device_label(device: &str) -> String {
    if !device.is_empty() && device.bytes().all(|b| b.is_ascii_digit()) {
        format!("NPU:{device}")
    } else if let Some(n) = device.strip_prefix("npu:") {
        format!("NPU:{n}")
    } else {
        device.to_string()
    }
}

/// Where a rank's rows come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DataSource {
    /// CSV files of one rank; slices of one kind are listed in slice order.
    Csv {
        /// memory_record files (at least one).
        memory_record: Vec<PathBuf>,
        /// operator_memory files.
        operator_memory: Vec<PathBuf>,
        /// npu_module_mem files.
        npu_module_mem: Vec<PathBuf>,
        /// static_op_mem files.
        static_op_mem: Vec<PathBuf>,
        /// Keep only this device's rows (`"1"` for `NPU:1`): set when one set of files holds
        /// several devices, each of which is then a rank of its own.
        device: Option<String>,
    },
    /// A SQLite export; `device` filters its rows when the DB holds several devices.
    Db {
        /// The `.db` file.
        path: PathBuf,
        /// The private copy read instead of `path` when the DB has a pending WAL or a hot
        /// journal (made once, at discovery, and shared by every rank of the DB).
        snapshot: Option<DbSnapshot>,
        /// Device id to keep, when known.
        device: Option<i64>,
        /// CSV files beside the DB, used if the DB turns out to have no memory tables.
        csv_fallback: Option<Box<DataSource>>,
    },
    /// A file read by an importer (`ingest::importer::Importer`).
    Imported {
        /// The importer's name.
        importer: &'static str,
        /// The file.
        path: PathBuf,
        /// Which of the file's ranks (the importer's own words, e.g. a device).
        part: String,
        /// What discovery already read of this rank, for its load to take instead of reading
        /// it again.
        prefetch: Prefetch,
    },
}

/// What discovery already read of a rank, for its load to take once instead of reading the
/// file again (a PyTorch trace's memory events: discovery finds them all to know the devices).
/// Clones of the rank share it; the first load takes it, and a later load (a reload) reads the
/// file. Opaque to all but the importer that made it, and dropped with the last clone of the
/// rank. Two are always equal: it is what was read, not which rank.
#[derive(Clone, Default)]
pub struct Prefetch(Option<Arc<Mutex<Option<Held>>>>);

/// What a [`Prefetch`] holds: the importer's own type.
type Held = Box<dyn Any + Send>;

impl Prefetch {
    /// A prefetch holding `value`.
    pub fn new(value: impl Any + Send) -> Self {
        Self(Some(Arc::new(Mutex::new(Some(Box::new(value))))))
    }

    /// The value, when it is still there and a `T`; nothing is left behind for the next taker.
    pub fn take<T: Any>(&self) -> Option<T> {
        let mut slot = self.0.as_ref()?.lock().ok()?;
        match slot.take()?.downcast::<T>() {
            Ok(value) => Some(*value),
            Err(other) => {
                *slot = Some(other);
                None
            }
        }
    }
}

impl std::fmt::Debug for Prefetch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let held = self
            .0
            .as_ref()
            .is_some_and(|s| s.lock().is_ok_and(|v| v.is_some()));
        f.write_str(if held { "Prefetch(held)" } else { "Prefetch" })
    }
}

impl PartialEq for Prefetch {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Eq for Prefetch {}

/// A private copy of a DB and its pending `-wal` or `-journal`, in a temporary folder that is
/// deleted when the last clone is dropped. Reading the copy lets SQLite replay the WAL or roll
/// back the journal without writing anything beside the user's file.
#[derive(Debug, Clone)]
pub struct DbSnapshot {
    /// The copied `.db` (its sidecar files sit beside it).
    pub path: PathBuf,
    /// Keeps the temporary folder alive.
    _dir: Arc<tempfile::TempDir>,
}

impl DbSnapshot {
    /// A snapshot whose files are `path` inside the temporary folder `dir`.
    pub fn new(path: PathBuf, dir: tempfile::TempDir) -> Self {
        DbSnapshot {
            path,
            _dir: Arc::new(dir),
        }
    }
}

impl PartialEq for DbSnapshot {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for DbSnapshot {}

impl DataSource {
    /// The data files it names (a DB's CSV fallback included), for a rank's identity.
    pub fn files(&self) -> Vec<PathBuf> {
        match self {
            DataSource::Csv {
                memory_record,
                operator_memory,
                npu_module_mem,
                static_op_mem,
                ..
            } => [
                memory_record,
                operator_memory,
                npu_module_mem,
                static_op_mem,
            ]
            .into_iter()
            .flatten()
            .cloned()
            .collect(),
            DataSource::Db {
                path, csv_fallback, ..
            } => {
                let mut v = vec![path.clone()];
                if let Some(f) = csv_fallback {
                    v.extend(f.files());
                }
                v
            }
            DataSource::Imported { path, .. } => vec![path.clone()],
        }
    }

    /// `"csv"` or `"db"`.
    pub fn kind(&self) -> &'static str {
        match self {
            DataSource::Csv { .. } => "csv",
            DataSource::Db { .. } => "db",
            DataSource::Imported { importer, .. } => importer,
        }
    }
}

/// The note of a rank whose folder holds both a DB and CSV files.
pub const USING_DB_NOTE: &str =
    "both a DB and CSV files present; using the DB (as MindStudio Insight does)";

/// The note of a rank read from its CSV files at the user's request although it has a DB.
pub const USING_CSV_NOTE: &str = "both a DB and CSV files present; using the CSV files (as asked)";

/// Which files to read for a rank that has both a DB and CSV files (CANN 8.1 and later write
/// both).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum SourceChoice {
    /// The DB when there is one (the default, as MindStudio Insight does).
    #[default]
    Auto,
    /// The CSV files.
    Csv,
    /// The DB.
    Db,
}

/// A discovered rank: identity and file locations, no data rows.
#[derive(Debug, Clone)]
pub struct RankInfo {
    /// Rank id as shown (made unique within a profile with `_2`, `_3`, …).
    pub rank: String,
    /// Device id (`NPU:4` → `"4"`), when known.
    pub device: Option<String>,
    /// Host name, when known.
    pub host: Option<String>,
    /// Which profiler wrote it.
    pub format: Format,
    /// The rank's folder (the `*_ascend_pt` folder, or the folder holding the files).
    pub dir: PathBuf,
    /// Where the rows are.
    pub source: DataSource,
    /// Notes from discovery (e.g. "DB and CSV both present; using the DB").
    pub notes: Vec<super::Message>,
}

impl RankInfo {
    /// A rank with an id and a folder but no files yet (discovery fills `source`; tests and
    /// benchmarks build ranks in memory from it).
    pub fn without_files(rank: impl Into<String>, format: Format, dir: PathBuf) -> RankInfo {
        RankInfo {
            rank: rank.into(),
            device: None,
            host: None,
            format,
            dir,
            source: DataSource::Csv {
                memory_record: Vec::new(),
                operator_memory: Vec::new(),
                npu_module_mem: Vec::new(),
                static_op_mem: Vec::new(),
                device: None,
            },
            notes: Vec::new(),
        }
    }

    /// True when the rank has a DB and CSV files beside it (it can be read from either).
    pub fn has_both_sources(&self) -> bool {
        matches!(
            &self.source,
            DataSource::Db {
                csv_fallback: Some(_),
                ..
            }
        )
    }

    /// The rank read from the files `choice` names: `None` when it has no such files.
    pub fn with_source(&self, choice: SourceChoice) -> Option<RankInfo> {
        match (choice, &self.source) {
            (SourceChoice::Auto, _)
            | (SourceChoice::Db, DataSource::Db { .. })
            | (SourceChoice::Csv, DataSource::Csv { .. }) => Some(self.clone()),
            (
                SourceChoice::Csv,
                DataSource::Db {
                    csv_fallback: Some(csv),
                    ..
                },
            ) => {
                let mut info = self.clone();
                info.source = (**csv).clone();
                for n in &mut info.notes {
                    if *n == super::Message::UsingDb {
                        *n = super::Message::UsingCsv;
                    }
                }
                Some(info)
            }
            _ => None,
        }
    }

    /// Where its rows are read from, for a picker's hover: the file, for a rank read from
    /// one (a DB, an msMemScope dump, a trace: two ranks `0 pid 7` and `0 pid 7_2` are told
    /// apart by it), else the rank's folder.
    pub fn read_from(&self) -> &std::path::Path {
        match &self.source {
            DataSource::Db { path, .. } | DataSource::Imported { path, .. } => path,
            DataSource::Csv { .. } => &self.dir,
        }
    }

    /// A label for pickers: `rank 2 · NPU:4 · node1`.
    pub fn label(&self) -> String {
        let mut s = format!("rank {}", self.rank);
        if let Some(d) = &self.device {
            s.push_str(&format!(" · {}", device_label(d)));
        }
        if let Some(h) = &self.host {
            s.push_str(&format!(" · {h}"));
        }
        s
    }
}

/// A loaded rank: all its tables plus what went wrong while reading them.
#[derive(Debug, Clone)]
pub struct RankData {
    /// Identity and source.
    pub info: RankInfo,
    /// The earliest timestamp over memory_record (and DB APP samples), operator_memory
    /// allocation/release times and npu_module_mem; 0 when there is none.
    pub time_origin_ns: i64,
    /// memory_record, time-sorted. Shared: the app shows the curves of a rank whose other files
    /// are still loading from the same rows (see [`RankData::partial`]).
    pub records: Arc<MemoryRecords>,
    /// operator_memory, file order.
    pub operators: OperatorMemory,
    /// npu_module_mem, time-sorted.
    pub modules: ModuleMemory,
    /// static_op_mem, file order.
    pub static_ops: StaticOpMemory,
    /// The rank's string table (names, streams, components of npu_module_mem, static ids).
    pub strings: Interner,
    /// Training steps, when the profile records them.
    pub steps: Option<super::Steps>,
    /// The device's total memory in use (all processes), when recorded (shared, as the
    /// records are, with the first look a load hands over early).
    pub device_memory: Arc<super::DeviceMemory>,
    /// The Python call stack behind each operator_memory row, when the profile recorded them
    /// (`with_stack=True`).
    pub stacks: Option<super::CallStacks>,
    /// Text columns the source gives each operator_memory row (msMemScope's owner and
    /// inefficient), in display order; empty for the Ascend exports.
    pub tags: Vec<super::BlockTags>,
    /// Each operator_memory row's role in training (`ingest::roles`), once the rank is loaded.
    pub roles: Option<super::BlockRoles>,
    /// The `nn.Module`s its call stacks name (`ingest::modules`), once the rank is loaded;
    /// `None` when they name none.
    pub module_tree: Option<super::ModuleTree>,
    /// Rows counted per source file: how many came from memory_record in a DB counts only
    /// MEMORY_RECORD, not NPU_MEM APP samples (those are in `records` too).
    pub memory_record_rows: usize,
    /// Warnings and skipped rows.
    pub report: LoadReport,
    /// True for the first look at a rank still loading: memory_record is in (curves can be drawn),
    /// the other files are not. Never true for what [`crate::ingest::load_rank`] returns.
    pub partial: bool,
}

impl RankData {
    /// A rank with no rows yet.
    pub fn empty(info: RankInfo) -> RankData {
        RankData {
            info,
            time_origin_ns: 0,
            records: Default::default(),
            operators: Default::default(),
            modules: Default::default(),
            static_ops: Default::default(),
            strings: Interner::new(),
            steps: None,
            device_memory: Default::default(),
            stacks: None,
            tags: Vec::new(),
            roles: None,
            module_tree: None,
            memory_record_rows: 0,
            report: LoadReport::default(),
            partial: false,
        }
    }

    /// An interned name for display: `Unknown` for the empty name (as Insight shows it).
    pub fn display_name(&self, id: super::NameId) -> &str {
        let n = self.strings.get(id);
        if n.is_empty() { "Unknown" } else { n }
    }

    /// Bytes held by the rank's tables and strings (what a loaded rank costs in memory, before
    /// anything is derived from it).
    pub fn heap_bytes(&self) -> usize {
        let (m, s) = (self.modules.len(), self.static_ops.len());
        let id = size_of::<super::NameId>();
        self.records.heap_bytes()
            + self.operators.heap_bytes()
            + m * (2 * 8 + id)
            + s * (3 * 8 + 4 * id)
            + self.strings.heap_bytes()
            + self
                .stacks
                .as_ref()
                .map_or(0, super::CallStacks::heap_bytes)
            + self.tags.iter().map(|t| t.values.len() * id).sum::<usize>()
            + self.roles.as_ref().map_or(0, |r| r.role.len() * 2)
    }

    /// The `kind` tag of `row` (empty when the rank has no such column).
    pub fn tag(&self, kind: super::TagKind, row: usize) -> &str {
        self.tags
            .iter()
            .find(|t| t.kind == kind)
            .and_then(|t| t.values.get(row))
            .map_or("", |&id| self.strings.get(id))
    }

    /// An absolute time as ns from the rank origin.
    pub fn rel_ns(&self, abs_ns: i64) -> i64 {
        abs_ns.saturating_sub(self.time_origin_ns)
    }
}

#[cfg(test)]
mod tests {
    use super::Prefetch;

    #[test]
    fn a_prefetch_is_taken_once_by_the_type_it_holds() {
        let p = Prefetch::new(vec![1u32, 2]);
        let clone = p.clone();
        assert_eq!(p.take::<String>(), None, "another type leaves it");
        assert_eq!(
            clone.take::<Vec<u32>>(),
            Some(vec![1, 2]),
            "shared by clones"
        );
        assert_eq!(p.take::<Vec<u32>>(), None, "taken once");
        assert_eq!(Prefetch::default().take::<Vec<u32>>(), None);
        assert_eq!(p, Prefetch::default());
    }
}
