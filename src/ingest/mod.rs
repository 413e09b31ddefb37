//! Reading profiling folders: discovery, the CSV and SQLite readers, value parsing, load reports.
//!
//! [`discover()`] walks a path and returns a [`Profile`] (ranks with their files, no rows);
//! [`load_rank`] parses one rank into [`crate::model::RankData`]. Every file is opened through
//! [`safe_fs`] (regular files only, bounded reads); nothing is ever written beside them.
//! Loading runs in stages (the tables, then steps, then call stacks); [`layout`] says where a
//! rank's other files are and holds its `trace_view.json` extract, read once and handed to every
//! stage; [`error`] is the error they all return. Sources besides the Ascend exports come
//! through [`importer`] (listed in [`importers`]): [`pytorch`] (PyTorch profiler traces) and
//! [`msmemscope`]. A Chrome trace is cut into its event objects by [`chrome_trace`] and read
//! for its meaning by [`trace_view`]; a plain one is read in parts on every core
//! ([`trace_parts`]), a gzipped one inflated ahead of the parse ([`read_ahead`]); a big CSV
//! (an msMemScope dump) is read in parts on every core by `csv_parts`, and its events kept in
//! time order as runs of those parts (`msmemscope::time_order`; its blocks paired through
//! `msmemscope::open_blocks`; its curves made on every core by `msmemscope::curves`, from
//! the pools' states each stretch of events leaves, `msmemscope::pool_totals`). A file of
//! several ranks is read once for all of them ([`shared_read`]); what discovery read is kept
//! for the loads within one budget ([`prefetch_budget`]). The big lists a dump's load fills are
//! marked for 2 MiB pages on Linux (`huge_pages`).

pub mod chrome_trace;
mod chunks;
mod csv_parts;
mod csv_tables;
mod db;
mod db_stacks;
mod discover;
pub mod error;
pub mod gzip;
mod huge_pages;
pub mod importer;
pub mod importers;
pub mod layout;
pub mod line_split;
mod load;
pub mod module_spans;
pub mod modules;
pub mod msmemscope;
mod part_pool;
mod phases;
pub mod prefetch_budget;
pub mod pytorch;
pub mod read_ahead;
pub mod roles;
pub mod safe_fs;
pub mod shared_read;
pub mod stacks;
mod steps;
mod time_window;
pub mod trace_parts;
pub mod trace_view;
pub mod value;

pub use crate::model::report::{
    FileReport, LoadReport, MAX_SKIPPED_SAMPLES, SkippedRow, SkippedRows,
};
pub use chunks::{BLOCK_BYTES, LoadControl};
pub use csv_tables::FileError;
pub use db::{DbError, ReadOnlyDb, open_read_only, sqlite_kind};
pub use discover::{
    DiscoverError, MAX_DEPTH, Profile, discover, discover_controlled, discover_with,
    host_from_folder, is_snapshot_name, is_snapshot_path,
};
pub use load::{
    LoadError, NoDataReason, load_rank, load_rank_using, load_rank_with, rank_loads, time_origin,
};
