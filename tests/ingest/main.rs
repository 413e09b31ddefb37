//! The readers and the analysis against independent readings of the raw files (fixtures, the
//! public samples, generated profiles), hostile inputs, properties and the fuzz regressions.
//!
//! One test binary for the group (each file a module): linking one binary instead of one per
//! file is most of what `cargo test` builds.

#[path = "../common/mod.rs"]
mod common;

mod allocator_snapshot;
mod analysis;
mod fuzz_regressions;
mod importer_seam;
mod ingest_fixtures;
mod ingest_hostile;
mod ingest_props;
mod ingest_samples;
mod msmemscope;
mod msprof_db;
mod oom_bundle;
mod pytorch_memory_scan;
mod pytorch_trace;
mod roles;
mod roles_props;
mod stacks;
mod trace_parts;
