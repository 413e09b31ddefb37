//! The view state as plain data: what the user has chosen. Only [`ViewState::apply`] changes it,
//! one [`Command`] at a time; panes read it and say what they want changed.

use std::collections::BTreeSet;

use super::command::Command;
use crate::analysis::stacks::GroupKey;
use crate::analysis::{Column, ComponentColumn, GroupBy, SortDir, StaticColumn};
use crate::model::SourceChoice;
use crate::model::TimeWindow;

/// Page sizes offered by the table.
pub const PAGE_SIZES: [usize; 5] = [10, 20, 30, 50, 100];

/// What panes that show the same time axis share: the visible window and the cursor. Every
/// pane of a link group follows a change made in any of them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LinkGroup {
    /// The visible window (None = the whole rank).
    pub window: Option<TimeWindow>,
    /// True while the window is being dragged or wheeled: panes that query on a window change
    /// (the details table) wait until it settles.
    pub moving: bool,
    /// The cursor, ns from origin (set by clicking a chart; opens Live at cursor).
    pub cursor: Option<i64>,
}

/// Why the details table shows a fixed set of rows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubsetWhy {
    /// The survivors of a step (its id).
    Survivors(i64),
    /// The blocks under a frame of the flame graph (its text).
    Frame(String),
    /// The blocks of a group of the grouped table (its label).
    Group(String),
}

/// A fixed set of details-table rows shown instead of the filtered ones: the survivors of a
/// step, the blocks under a flame graph frame, the blocks of a group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RowSubset {
    /// Why these rows.
    pub why: SubsetWhy,
    /// operator_memory rows, ascending.
    pub rows: std::sync::Arc<Vec<u32>>,
}

/// A column of the steps table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepColumn {
    /// Step id.
    Step,
    /// Start time.
    Start,
    /// End time.
    End,
    /// Duration.
    Duration,
    /// Peak Operator Allocated.
    PeakAllocated,
    /// When that peak was.
    PeakAt,
    /// Peak Operator Reserved.
    PeakReserved,
    /// Peak APP Reserved.
    PeakApp,
    /// Operator Allocated at the end.
    EndAllocated,
    /// Change of the end value versus the previous step.
    Change,
    /// Survivor count.
    Survivors,
    /// Survivor bytes.
    SurvivorBytes,
}

impl StepColumn {
    /// Every column, in table order.
    pub const ALL: [StepColumn; 12] = [
        StepColumn::Step,
        StepColumn::Start,
        StepColumn::End,
        StepColumn::Duration,
        StepColumn::PeakAllocated,
        StepColumn::PeakAt,
        StepColumn::PeakReserved,
        StepColumn::PeakApp,
        StepColumn::EndAllocated,
        StepColumn::Change,
        StepColumn::Survivors,
        StepColumn::SurvivorBytes,
    ];
}

/// A column of the compare diff table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffColumn {
    /// Operator name.
    Name,
    /// KB allocated in the baseline (A).
    AKib,
    /// KB allocated in the rank on screen (B).
    BKib,
    /// B − A.
    Delta,
    /// Allocations in A.
    ABlocks,
    /// Allocations in B.
    BBlocks,
    /// MB alive at A's Operator Allocated peak.
    APeakLive,
    /// MB alive at B's Operator Allocated peak.
    BPeakLive,
}

impl DiffColumn {
    /// Every column, in table order.
    pub const ALL: [DiffColumn; 8] = [
        DiffColumn::Name,
        DiffColumn::AKib,
        DiffColumn::BKib,
        DiffColumn::Delta,
        DiffColumn::ABlocks,
        DiffColumn::BBlocks,
        DiffColumn::APeakLive,
        DiffColumn::BPeakLive,
    ];
}

/// A column of the cluster overview's table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OverviewColumn {
    /// Rank id.
    Rank,
    /// Device id.
    Device,
    /// Host.
    Host,
    /// Peak Operator Allocated.
    PeakAllocated,
    /// When it was reached.
    PeakAllocatedAt,
    /// Peak Operator Reserved.
    PeakReserved,
    /// Peak APP Reserved.
    PeakApp,
    /// Largest allocation.
    Largest,
    /// Skipped rows.
    Skipped,
    /// Warnings.
    Warnings,
}

impl OverviewColumn {
    /// Every column, in table order.
    pub const ALL: [OverviewColumn; 10] = [
        OverviewColumn::Rank,
        OverviewColumn::Device,
        OverviewColumn::Host,
        OverviewColumn::PeakAllocated,
        OverviewColumn::PeakAllocatedAt,
        OverviewColumn::PeakReserved,
        OverviewColumn::PeakApp,
        OverviewColumn::Largest,
        OverviewColumn::Skipped,
        OverviewColumn::Warnings,
    ];
}

/// Everything the user has chosen for the current profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewState {
    /// Index into the profile's ranks.
    pub rank: usize,
    /// Host filter for the rank list (None = all hosts).
    pub host: Option<String>,
    /// Curves grouping.
    pub group_by: GroupBy,
    /// The time axis shared by the chart, the table and Live at cursor.
    pub link: LinkGroup,
    /// Details table: only blocks allocated or released within the visible range.
    pub within: bool,
    /// Name filter text.
    pub name_filter: String,
    /// Min Size(KB) filter text (as typed).
    pub min_size_text: String,
    /// Max Size(KB) filter text.
    pub max_size_text: String,
    /// Sort column and direction (None = file order).
    pub sort: Option<(Column, SortDir)>,
    /// Rows per page.
    pub page_size: usize,
    /// Page, 0-based.
    pub page: usize,
    /// Selected operator_memory rows (Ctrl+C / Copy copies these when any).
    pub selected: BTreeSet<u32>,
    /// The row under the pointer (marked on the chart).
    pub hovered_row: Option<u32>,
    /// A block picked elsewhere (Live at cursor): selected, its lifetime marked on the chart.
    pub marked_row: Option<u32>,
    /// Curves hidden from the chart (by legend name), kept across ranks.
    pub hidden_series: BTreeSet<String>,
    /// Show the static-graph view instead of the dynamic one.
    pub static_view: bool,
    /// Index into the rank's static graphs.
    pub graph: usize,
    /// The static chart's node-index selection.
    pub static_range: Option<(f64, f64)>,
    /// The static op table's name filter.
    pub static_filter: String,
    /// The static op table's sort (`None`: file order).
    pub static_sort: Option<(StaticColumn, SortDir)>,
    /// The warnings window is open.
    pub show_warnings: bool,
    /// The component peak table's sort (`None`: largest peak first).
    pub component_sort: Option<(ComponentColumn, SortDir)>,
    /// The steps table is shown below the chart instead of the details table.
    pub show_steps: bool,
    /// The steps table's sort (`None`: time order).
    pub step_sort: Option<(StepColumn, SortDir)>,
    /// The details table shows exactly these rows (a step's survivors).
    pub only_rows: Option<RowSubset>,
    /// The cluster overview fills the window instead of one rank's chart and tables.
    pub show_overview: bool,
    /// The overview table's sort (`None`: discovery order).
    pub overview_sort: Option<(OverviewColumn, SortDir)>,
    /// Compare: align the baseline at the start of this step (None: at the origins).
    pub align_step: Option<i64>,
    /// Compare: the diff table is shown below the chart.
    pub show_diff: bool,
    /// The diff table's sort (`None`: largest |delta| first).
    pub diff_sort: Option<(DiffColumn, SortDir)>,
    /// The diff table's name filter.
    pub diff_filter: String,
    /// The details table shows the baseline's blocks.
    pub table_baseline: bool,
    /// The call stacks tab (flame graph) is shown below the chart.
    pub show_stacks: bool,
    /// Which blocks the flame graph shows.
    pub flame_mode: FlameMode,
    /// The details table groups its rows (None: one row per block).
    pub table_group: Option<GroupKey>,
    /// Which files to read for ranks that have both a DB and CSV files.
    pub source: SourceChoice,
}

/// Which blocks the flame graph shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FlameMode {
    /// The blocks alive at the cursor.
    #[default]
    AliveAtCursor,
    /// The blocks allocated in the visible window.
    AllocatedInView,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            rank: 0,
            host: None,
            group_by: GroupBy::Overall,
            link: LinkGroup::default(),
            within: false,
            name_filter: String::new(),
            min_size_text: String::new(),
            max_size_text: String::new(),
            sort: None,
            page_size: PAGE_SIZES[0],
            page: 0,
            selected: BTreeSet::new(),
            hovered_row: None,
            hidden_series: BTreeSet::new(),
            marked_row: None,
            static_view: false,
            graph: 0,
            static_range: None,
            static_filter: String::new(),
            static_sort: None,
            show_warnings: false,
            component_sort: None,
            show_steps: false,
            step_sort: None,
            only_rows: None,
            show_overview: false,
            overview_sort: None,
            align_step: None,
            show_diff: false,
            diff_sort: None,
            diff_filter: String::new(),
            table_baseline: false,
            show_stacks: false,
            flame_mode: FlameMode::default(),
            table_group: None,
            source: SourceChoice::default(),
        }
    }
}

/// The sort after a click on `col`'s header: ascending → descending → none; another column
/// starts ascending.
fn next_sort<C: PartialEq + Copy>(sort: Option<(C, SortDir)>, col: C) -> Option<(C, SortDir)> {
    match sort {
        Some((c, SortDir::Asc)) if c == col => Some((col, SortDir::Desc)),
        Some((c, SortDir::Desc)) if c == col => None,
        _ => Some((col, SortDir::Asc)),
    }
}

impl ViewState {
    /// The visible window in ms (None = everything), for display.
    pub fn window_ms(&self) -> Option<(f64, f64)> {
        self.link.window.map(TimeWindow::ms)
    }

    /// The cursor in ms, for display.
    pub fn cursor_ms(&self) -> Option<f64> {
        self.link.cursor.map(crate::model::ns_to_ms)
    }

    /// Applies one command; returns true when it was a view-state command (the app handles the
    /// others: opening, loading, copying). This is the only place the state changes.
    pub fn apply(&mut self, cmd: &Command) -> bool {
        match cmd {
            Command::SetHost(h) => self.host.clone_from(h),
            Command::SetGroupBy(g) => {
                if *g != self.group_by {
                    self.group_by = *g;
                    self.page = 0;
                    self.static_view = false;
                }
            }
            Command::SetWindow { window, moving } => {
                if *window != self.link.window {
                    self.page = 0;
                }
                self.link.window = *window;
                self.link.moving = *moving;
            }
            Command::Settle => self.link.moving = false,
            Command::ResetZoom => {
                if self.link.window.is_some() {
                    self.page = 0;
                }
                self.link.window = None;
                self.link.moving = false;
                self.static_range = None;
            }
            Command::ResetView => {
                self.apply(&Command::ResetZoom);
                self.link.cursor = None;
            }
            Command::SetCursor(c) => self.link.cursor = *c,
            Command::SetPage(p) => self.page = *p,
            Command::NextPage => self.page = self.page.saturating_add(1),
            Command::PreviousPage => self.page = self.page.saturating_sub(1),
            Command::SetPageSize(n) => {
                self.page_size = (*n).max(1);
                self.page = 0;
            }
            Command::CycleSort(col) => {
                self.sort = next_sort(self.sort, *col);
                self.page = 0;
            }
            Command::CycleComponentSort(col) => {
                self.component_sort = next_sort(self.component_sort, *col);
                self.page = 0;
            }
            Command::SetNameFilter(t) => {
                self.name_filter = t.clone();
                self.page = 0;
            }
            Command::SetMinSize(t) => {
                self.min_size_text = t.clone();
                self.page = 0;
            }
            Command::SetMaxSize(t) => {
                self.max_size_text = t.clone();
                self.page = 0;
            }
            Command::SetWithin(w) => {
                self.within = *w;
                self.page = 0;
            }
            Command::ToggleSelected(r) => {
                if !self.selected.remove(r) {
                    self.selected.insert(*r);
                }
            }
            Command::ClearSelection => self.selected.clear(),
            Command::SelectRows(rows) => self.selected = rows.iter().copied().collect(),
            Command::Hover(r) => self.hovered_row = *r,
            Command::MarkRow(r) => {
                self.marked_row = *r;
                if let Some(r) = r {
                    self.selected = [*r].into_iter().collect();
                }
            }
            Command::ToggleSeries(name) => {
                if !self.hidden_series.remove(name) {
                    self.hidden_series.insert(name.clone());
                }
            }
            Command::SetStaticView(on) => self.static_view = *on,
            Command::SetGraph(g) => {
                self.graph = *g;
                self.static_range = None;
                self.page = 0;
            }
            Command::SetStaticRange(r) => {
                if *r != self.static_range {
                    self.static_range = *r;
                    self.page = 0;
                }
            }
            Command::SetStaticFilter(t) => {
                self.static_filter.clone_from(t);
                self.page = 0;
            }
            Command::CycleStaticSort(col) => {
                self.static_sort = next_sort(self.static_sort, *col);
                self.page = 0;
            }
            Command::ShowWarnings(on) => self.show_warnings = *on,
            Command::ShowSteps(on) => {
                self.show_steps = *on;
                if *on {
                    self.show_diff = false;
                    self.show_stacks = false;
                }
            }
            Command::ShowStacks(on) => {
                self.show_stacks = *on;
                if *on {
                    self.show_diff = false;
                    self.show_steps = false;
                }
            }
            Command::SetFlameMode(m) => self.flame_mode = *m,
            Command::SetTableGroup(g) => {
                self.table_group = *g;
                self.page = 0;
            }
            Command::ShowOverview(on) => self.show_overview = *on,
            Command::SetAlignStep(s) => self.align_step = *s,
            Command::ShowDiff(on) => {
                self.show_diff = *on;
                if *on {
                    self.show_steps = false;
                    self.show_stacks = false;
                }
            }
            Command::CycleDiffSort(col) => self.diff_sort = next_sort(self.diff_sort, *col),
            Command::SetDiffFilter(f) => self.diff_filter.clone_from(f),
            Command::SetTableBaseline(on) => {
                self.table_baseline = *on;
                self.selected.clear();
                self.page = 0;
            }
            Command::CycleOverviewSort(col) => {
                self.overview_sort = next_sort(self.overview_sort, *col);
            }
            Command::CycleStepSort(col) => self.step_sort = next_sort(self.step_sort, *col),
            Command::FilterRows(rows) => {
                self.only_rows.clone_from(rows);
                self.page = 0;
                if rows.is_some() {
                    self.show_steps = false;
                    self.show_stacks = false;
                    self.table_group = None;
                }
            }
            Command::Open(_)
            | Command::Pick(_)
            | Command::SelectRank(_)
            | Command::CancelLoad
            | Command::CancelOverview
            | Command::SetSource(_)
            | Command::CompareWith(_)
            | Command::CompareRank(_)
            | Command::StopCompare
            | Command::CopyDiff
            | Command::Copy
            | Command::CopyAll
            | Command::SaveChart
            | Command::SetLanguage(_)
            | Command::SetTheme(_)
            | Command::ShowHelp(_)
            | Command::DismissFailures => return false,
        }
        true
    }

    /// State for a newly chosen rank: zoom, cursor, selection and page are per rank.
    pub(crate) fn on_rank_change(&mut self, rank: usize) {
        self.rank = rank;
        self.link = LinkGroup::default();
        self.selected.clear();
        self.hovered_row = None;
        self.marked_row = None;
        self.page = 0;
        self.static_view = false;
        self.graph = 0;
        self.static_range = None;
        self.only_rows = None;
        self.show_overview = false;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_clicks_cycle_asc_desc_none() {
        let mut s = ViewState {
            page: 3,
            ..Default::default()
        };
        s.apply(&Command::CycleSort(Column::Size));
        assert_eq!(s.sort, Some((Column::Size, SortDir::Asc)));
        assert_eq!(s.page, 0);
        s.apply(&Command::CycleSort(Column::Size));
        assert_eq!(s.sort, Some((Column::Size, SortDir::Desc)));
        s.apply(&Command::CycleSort(Column::Size));
        assert_eq!(s.sort, None);
        s.apply(&Command::CycleSort(Column::Size));
        s.apply(&Command::CycleSort(Column::Name));
        assert_eq!(s.sort, Some((Column::Name, SortDir::Asc)));
    }

    #[test]
    fn a_new_window_goes_to_the_first_page_and_the_same_one_keeps_it() {
        let w = TimeWindow::new(10, 20);
        let mut s = ViewState {
            page: 4,
            ..Default::default()
        };
        s.apply(&Command::SetWindow {
            window: Some(w),
            moving: true,
        });
        assert_eq!((s.page, s.link.moving), (0, true));
        s.apply(&Command::SetPage(2));
        s.apply(&Command::SetWindow {
            window: Some(w),
            moving: false,
        });
        assert_eq!((s.page, s.link.moving), (2, false));
        s.apply(&Command::SetCursor(Some(15)));
        s.apply(&Command::ResetView);
        assert_eq!((s.link, s.page), (LinkGroup::default(), 0));
    }
}
