//! The command line through the real binary, and the Python API over it.
//!
//! One test binary for the group (each file a module): linking one binary instead of one per
//! file is most of what `cargo test` builds.

#[path = "../common/mod.rs"]
mod common;

mod cli_analysis;
mod cli_compare;
mod cli_default_rank;
mod cli_explain;
mod cli_hostile;
mod cli_inspect;
mod cli_mcp;
mod cli_modules;
mod cli_snapshot_compare;
mod cli_snapshot_fields;
mod cli_snapshot_fragmentation;
mod cli_snapshot_join;
mod cli_snapshot_phases;
mod cli_steps;
mod cli_summarize;
mod cli_views;
mod cli_whatif;
mod python_api;
