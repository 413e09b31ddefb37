//! Reading profiling folders: discovery, the CSV and SQLite readers, value parsing, load reports.
//!
//! [`discover`] walks a path and returns a [`Profile`] (ranks with their files, no rows);
//! [`load_rank`] / [`Profile::load_rank`] parse one rank into [`crate::model::RankData`].

mod chunks;
mod csv_tables;
mod db;
mod discover;
mod line_split;
mod load;
mod report;
pub mod safe_fs;
mod time_window;
pub mod value;

pub use chunks::{BLOCK_BYTES, LoadControl};
pub use csv_tables::FileError;
pub use discover::{DiscoverError, MAX_DEPTH, Profile, discover, host_from_folder};
pub use load::{LoadError, load_rank, time_origin};
pub use report::{FileReport, LoadReport, MAX_SKIPPED_SAMPLES, SkippedRow, SkippedRows};
