//! The panes of the window. Each has its own state between frames (a struct with a `ui` method)
//! or none (a function), reads the [`ViewState`] and the rank's [`RankView`], and says what the
//! user wants changed by pushing [`Command`]s; none writes the view state itself.
//!
//! - [`memory_chart`]: the memory curves, linked to the table through the time window;
//! - [`details_table`]: the details table, its filters, pages, Copy; [`export_csv`]: Export
//!   CSV…; [`pager`]: the pager both tables use;
//! - [`component_table`]: the component peak table (Group By Component); [`overview`]: the
//!   cluster overview (every rank's peaks);
//! - [`static_view`]: the static graph and its ops; [`live`]: Live at cursor;
//!   [`warnings`]: the load warnings window; [`steps`]: memory per training step; [`diff`]: the
//!   per-operator diff of a comparison; [`flame`]: the call stacks tab (flame graph);
//!   [`groups`]: the details table grouped by call stack, source line or host operator;
//!   [`snapshot`]: an allocator snapshot (`.pickle`); [`snapshot_bands`] its active-memory chart;
//!   [`oom_cluster`]: a job's folder of OOM bundles (which ranks ran out); [`roles`]: memory
//!   by training role and what would lower the peak; [`modules`]: memory by `nn.Module`; [`whatif`]: the peak with other levers,
//!   replayed;
//! - [`tab`]: the bottom pane's contract ([`tab::BottomPane`]); [`bottom_panes`] lists them.

pub mod component_table;
pub mod details_table;
pub mod diff;
pub mod export_csv;
pub mod flame;
pub mod groups;
pub mod live;
pub mod memory_chart;
pub mod modules;
pub mod oom_cluster;
pub mod overview;
pub mod pager;
pub mod roles;
pub mod snapshot;
pub mod snapshot_bands;
pub mod snapshot_compare;
pub mod snapshot_holders;
pub mod snapshot_join;
pub mod snapshot_phases;
pub mod snapshot_pinned;
pub mod snapshot_pools;
pub mod sort_key;
pub mod static_view;
pub mod steps;
pub mod summary;
pub mod tab;
pub mod warnings;
pub mod whatif;

use std::sync::Arc;

use super::command::Command;
use super::i18n::Tr;
use super::jobs::Jobs;
use super::state::ViewState;
use crate::analysis::RankView;

/// The views of the bottom pane, in tab order: the one registration line of each.
pub fn bottom_panes() -> Vec<Box<dyn tab::BottomPane>> {
    vec![
        Box::new(details_table::DetailsPane::default()),
        Box::new(steps::StepsPane::default()),
        Box::new(roles::RolesPane::default()),
        Box::new(modules::ModulesPane::default()),
        Box::new(whatif::WhatifPane::default()),
        Box::new(flame::FlamePane::default()),
        Box::new(diff::DiffPane),
    ]
}

/// What a pane gets for a frame: the rank shown, the state to read, the queue its commands go
/// to, and the job runner for work off the UI thread.
pub struct PaneCx<'a> {
    /// The rank on screen.
    pub view: &'a Arc<RankView>,
    /// What the user has chosen (read-only: changes go through `out`).
    pub state: &'a ViewState,
    /// This frame's commands, applied by the app after the panes are drawn.
    pub out: &'a mut Vec<Command>,
    /// The job runner.
    pub jobs: &'a mut Jobs,
    /// The UI's strings.
    pub t: &'static Tr,
    /// The comparison, when there is a baseline.
    pub compare: Option<Compare<'a>>,
    /// The profile on screen (its ranks, its path), once discovered: what a pane needs of it,
    /// it reads here, instead of a field added for one pane.
    pub profile: Option<&'a Arc<crate::ingest::Profile>>,
    /// The rows shown are the chart's (false for the baseline's table in a comparison: its
    /// rows mark nothing on the chart).
    pub marks_chart: bool,
}

impl PaneCx<'_> {
    /// Ranks the profile on screen spans for ZeRO: its device ranks, or all when all are the
    /// host's (1 before discovery ends).
    pub fn ranks(&self) -> usize {
        self.profile.map_or(1, |p| {
            let devices: Vec<Option<&str>> = p.ranks.iter().map(|r| r.device.as_deref()).collect();
            crate::analysis::rank_meant::parallel_ranks(&devices).max(1)
        })
    }
}

/// A comparison as panes see it.
#[derive(Clone)]
pub struct Compare<'a> {
    /// The baseline (A); the rank on screen is B.
    pub baseline: &'a crate::ui::baseline::Baseline,
    /// ns added to the baseline's times to place them on the rank's axis (alignment).
    pub offset: i64,
    /// The per-operator diff, once computed.
    pub diff: Option<Arc<Vec<crate::analysis::OperatorDelta>>>,
}

/// The shift that puts the baseline's step `step` (or its origin) where the rank's is: 0 at the
/// origins, or the difference of the two steps' starts (ns from each origin) when both have it.
pub fn align_offset(current: &RankView, baseline: &RankView, step: Option<i64>) -> i64 {
    let start = |v: &RankView, id: i64| {
        v.data
            .steps
            .as_ref()?
            .steps
            .iter()
            .find(|s| s.id == id)
            .map(|s| v.data.rel_ns(s.start_ns))
    };
    step.and_then(|id| Some(start(current, id)?.saturating_sub(start(baseline, id)?)))
        .unwrap_or(0)
}
