//! Plain data, no I/O and no egui: what a loaded rank looks like in memory.
//!
//! Everything is integers: time in i64 nanoseconds (absolute, as in the files), sizes in i64 bytes.
//! Missing values are stored as [`NULL`] so a column stays one flat `Vec<i64>` (8 bytes a cell
//! rather than 16 for `Option<i64>`); a column most sources leave empty (Total Active, the
//! stream) is a [`LazyColumn`], which takes no memory until a cell differs from its fill.

pub mod budget;
mod cause;
pub mod cluster;
mod component;
mod interner;
mod lang;
mod lazy_column;
mod library_frames;
mod message;
mod module_tree;
pub mod plural;
mod rank;
pub mod report;
mod roles;
pub mod shell;
mod stacks;
mod steps;
mod tables;
pub mod tags;
pub mod units;
mod window;

pub use budget::{Budget, Built, OverBudget};
pub use cause::{Cause, CauseKind, NotRegularFile, zh_file_type};
pub use component::Component;
pub use interner::{Interner, NameId, Recent};
pub use lang::Lang;
pub use lazy_column::{Fill, LazyColumn};
pub use library_frames::is_library_frame;
pub use message::{DumpProblem, Message, SkipReason};
pub use module_tree::{
    MODULE_FRAME_PREFIX, ModuleNode, ModuleTree, NO_MODULE, PATH_SEPARATOR, path_part,
};
pub use rank::{
    CUDA_ALLOC_CONF, DataSource, DbSnapshot, Format, NPU_ALLOC_CONF, Prefetch, RankData, RankInfo,
    SourceChoice, USING_CSV_NOTE, USING_DB_NOTE, alloc_conf_var, device_label,
};
pub use report::LoadReport;
pub use roles::{
    BlockRoles, Phase, PhaseKind, Phases, Role, Rule, WhyUnknown, is_phase_annotation,
};
pub use stacks::{CallStacks, Flow, HostOps, NONE as NO_STACK, StackSource, is_schema_op};
pub use steps::{DeviceMemory, Step, StepSource, Steps};
pub use tables::{MemoryRecords, ModuleMemory, OP_I64_COLUMNS, OperatorMemory, StaticOpMemory};
pub use tags::{BlockTags, TagKind};
pub use window::{TimeWindow, ms_to_ns, ns_to_ms};

/// The sentinel for a missing integer cell (an empty CSV cell, `N/A`, SQL NULL).
pub const NULL: i64 = i64::MIN;

/// Bytes in one MiB (the "MB" of torch_npu's files is MiB).
pub const MIB: i64 = 1024 * 1024;

/// Bytes as MiB, for display and JSON.
pub fn bytes_to_mib(bytes: i64) -> f64 {
    bytes as f64 / MIB as f64
}

/// The change from `base_mb` to `now_mb` in percent, or `None` when the base prints as zero
/// (under 0.005 MB, shown as "0.00"): a percentage of nothing is no answer, and "+100.0 %"
/// over "0.00 MB" reads as a real change.
pub fn percent_change(base_mb: f64, now_mb: f64) -> Option<f64> {
    (base_mb.is_finite() && now_mb.is_finite() && base_mb.abs() >= 0.005)
        .then(|| (now_mb - base_mb) / base_mb * 100.0)
}

/// Bytes as KiB, for display and JSON.
pub fn bytes_to_kib(bytes: i64) -> f64 {
    bytes as f64 / 1024.0
}
