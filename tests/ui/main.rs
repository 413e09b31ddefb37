//! The app through its real widgets (egui_kittest): every interaction, in English and Chinese.
//!
//! One test binary for the group (each file a module): linking one binary instead of one per
//! file is most of what `cargo test` builds.
#![cfg(feature = "gui")]

#[path = "../common/mod.rs"]
mod common;

mod ui_basics;
mod ui_chart;
mod ui_compare;
mod ui_document;
mod ui_errors;
mod ui_first_use;
mod ui_jobs;
mod ui_layout_720p;
mod ui_loader;
mod ui_modules;
mod ui_new_sources;
mod ui_open;
mod ui_overview;
mod ui_peak_labels;
mod ui_progressive;
mod ui_rank_meant;
mod ui_reduction;
mod ui_roles;
mod ui_session;
mod ui_snapshot;
mod ui_snapshot_compare;
mod ui_snapshot_fields;
mod ui_stacks;
mod ui_static_warnings;
mod ui_steps;
mod ui_summary;
mod ui_table;
mod ui_whatif;
