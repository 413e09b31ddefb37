//! Pure functions over the model: curves per Group By, peaks, level of detail, the static graph,
//! what is alive at a time, the details-table query engine, and the memory chart as data
//! ([`chart`]: y fit, window statistics, peak marks).

pub mod breakdown;
pub mod chart;
pub mod cluster;
pub mod compare;
pub mod fit;
pub mod live;
pub mod lod;
pub mod modules;
pub mod peaks;
pub mod rank_meant;
pub mod roles;
pub mod series;
pub mod spread;
pub mod stacks;
pub mod static_graph;
pub mod steps;
pub mod table;
pub mod view;
pub mod whatif;

pub use breakdown::{Breakdown, Part, breakdown_at};
pub use chart::{
    APART_FACTOR, BlockLifetime, MINOR_SHARE, Reconciled, TablesApart, WindowStats, YFit,
    block_lifetime, held_at, largest_visible_peak, padded, peak_marks, peak_near, reconcile,
    sampled_counts, tables_apart, value_at, window_stats, y_fit,
};
pub use compare::{NotCounted, OperatorDelta, not_counted, operator_deltas, view_operator_deltas};
pub use live::{LiveAt, LiveIndex, live_at};
pub use lod::{DEFAULT_THRESHOLD, LodSeries, Reduced};
pub use peaks::{
    ComponentColumn, ComponentPeak, Peak, component_order, component_peaks, peak, peak_in_window,
};
pub use roles::{
    Advice, AdviceKind, EXAMPLE_RANKS, Lever, Replayed, RoleBytes, RoleReport, RoleSeries, RolesAt,
    StepRoles, advice_replayed, role_report,
};
pub use series::{
    GroupBy, OverallCurve, Quantity, Series, build_series, operator_component, series_peaks,
};
pub use spread::{Spread, device_spread, is_host_device, spread};
pub use static_graph::{
    END_OF_GRAPH, StaticColumn, StaticGraph, StaticQuery, static_graphs, static_ops_in_range,
    static_rows, static_rows_tsv,
};
pub use steps::{
    GROWTH_RISES, Growth, StepReport, StepStats, peak_over, step_report, step_report_on,
};
pub use table::{
    Column, RangeFilter, SortCache, SortDir, TablePage, TableQuery, WindowMode, query,
};
pub use view::{RankView, ViewId};
