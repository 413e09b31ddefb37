//! The view state as plain data: what the user has chosen. Only [`ViewState::apply`] changes it,
//! one [`Command`] at a time (the app's own events too: a new profile, a rank or source change,
//! the origin moved by a completed load); panes read it and say what they want changed.
//!
//! Each table has a page of its own ([`TableId`], [`Pages`]); a table's page goes back to the
//! first when what that table queries changes, which `apply` derives by comparing the table's
//! [`PagedTable::query`] before and after the command: no command resets a page by hand. The
//! tables are declared by the panes that own them; this file names none of them.

use std::collections::{BTreeMap, BTreeSet};

use super::choices::{Choice, Choices};
use super::command::Command;
pub use super::command::{RowSubset, SubsetWhy, TabId};
use super::sorts::Sorts;
use crate::analysis::GroupBy;
use crate::analysis::stacks::GroupKey;
use crate::model::SourceChoice;
use crate::model::TimeWindow;

/// Page sizes offered by the table.
pub const PAGE_SIZES: [usize; 5] = [10, 20, 30, 50, 100];

/// A table with a page of its own, declared by the pane that owns it as a `static`.
#[derive(Debug)]
pub struct PagedTable {
    /// Its name: the key of its page in the state.
    pub name: &'static str,
    /// What its rows depend on, as text: when it changes, the table starts at its first page.
    pub query: fn(&ViewState) -> String,
}

/// A paged table, by reference; two are the same table when their names are.
#[derive(Clone, Copy)]
pub struct TableId(pub &'static PagedTable);

impl TableId {
    /// Its query now (see [`PagedTable::query`]).
    fn query(self, state: &ViewState) -> String {
        (self.0.query)(state)
    }
}

impl PartialEq for TableId {
    fn eq(&self, other: &TableId) -> bool {
        self.0.name == other.0.name
    }
}

impl Eq for TableId {}

impl std::fmt::Debug for TableId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

/// The pages turned away from the first, each with the query it was turned under (a table
/// not here is on its first page).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pages(BTreeMap<&'static str, (TableId, usize, String)>);

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

pub use crate::model::cluster::SummaryColumn;

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
    /// Rows per page (every table).
    pub page_size: usize,
    /// The user chose the page size (else it fits the table's room: [`Command::FitPageSize`]).
    pub page_size_chosen: bool,
    /// Each table's page: read with [`ViewState::page`].
    pages: Pages,
    /// Selected operator_memory rows (Ctrl+C / Copy copies these when any).
    pub selected: BTreeSet<u32>,
    /// The table whose rows `selected` names: its page or query changing leaves the selection.
    selection_on: Option<TableId>,
    /// The row under the pointer (marked on the chart).
    pub hovered_row: Option<u32>,
    /// A block picked elsewhere (Live at cursor): selected, its lifetime marked on the chart.
    pub marked_row: Option<u32>,
    /// Curves hidden from the chart (by legend name), kept across ranks.
    pub hidden_series: BTreeSet<String>,
    /// The chart's y axis starts at 0 (else it fits the visible curves in the window).
    pub y_from_zero: bool,
    /// Show the static-graph view instead of the dynamic one.
    pub static_view: bool,
    /// Index into the rank's static graphs.
    pub graph: usize,
    /// The static chart's node-index selection.
    pub static_range: Option<(f64, f64)>,
    /// The warnings window is open.
    pub show_warnings: bool,
    /// The view the bottom pane shows (details, steps, call stacks, diff, …).
    pub tab: TabId,
    /// The details table shows exactly these rows (a step's survivors).
    pub only_rows: Option<RowSubset>,
    /// The cluster overview fills the window instead of one rank's chart and tables.
    pub show_overview: bool,
    /// Compare: align the baseline at the start of this step (None: at the origins).
    pub align_step: Option<i64>,
    /// The details table shows the baseline's blocks (its read-only mode in a comparison).
    pub table_baseline: bool,
    /// The details table groups its rows (None: one row per block).
    pub table_group: Option<GroupKey>,
    /// Which files to read for ranks that have both a DB and CSV files.
    pub source: SourceChoice,
    /// Every table's sort, under its pane's [`SortTable`](super::sorts::SortTable) ([`super::sorts`]).
    pub sorts: Sorts,
    /// Every pane's own filters and modes ([`super::choices`]): read with [`ViewState::choice`].
    choices: Choices,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            rank: 0,
            host: None,
            group_by: GroupBy::Overall,
            link: LinkGroup::default(),
            page_size: PAGE_SIZES[0],
            page_size_chosen: false,
            pages: Pages::default(),
            selected: BTreeSet::new(),
            selection_on: None,
            hovered_row: None,
            hidden_series: BTreeSet::new(),
            y_from_zero: false,
            marked_row: None,
            static_view: false,
            graph: 0,
            static_range: None,
            show_warnings: false,
            tab: TabId::DETAILS,
            only_rows: None,
            show_overview: false,
            align_step: None,
            table_baseline: false,
            table_group: None,
            source: SourceChoice::default(),
            sorts: Sorts::default(),
            choices: Choices::default(),
        }
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

    /// A pane's own filters and modes (its default until the user changes them).
    pub fn choice<T: Choice>(&self) -> T {
        self.choices.get()
    }

    /// The page of `table`, 0-based (a pane shows at most its last page).
    pub fn page(&self, table: TableId) -> usize {
        match self.pages.0.get(table.0.name) {
            Some((_, page, key)) if *key == table.query(self) => *page,
            _ => 0,
        }
    }

    /// Applies one command: the only place the state changes. Commands that are not about the
    /// view (open a dialog, copy, …) leave it as it is; the app acts on them.
    pub fn apply(&mut self, cmd: &Command) {
        let watched = self.selection_on.map(|t| (t, self.page(t), t.query(self)));
        self.change(cmd);
        // A page turned under another query goes back to the first.
        let stale: Vec<&'static str> = (self.pages.0.iter())
            .filter(|(_, (table, _, key))| table.query(self) != *key)
            .map(|(name, _)| *name)
            .collect();
        for name in stale {
            self.pages.0.remove(name);
        }
        // The selection belongs to the rows on screen: another page, filter, sort or window
        // leaves it (keeping a block picked in Live at cursor), so Copy never takes rows the
        // user no longer sees.
        if let Some((table, page, key)) = watched
            && (self.page(table) != page || table.query(self) != key)
        {
            let keep = self.marked_row;
            self.selected.retain(|r| Some(*r) == keep);
        }
    }

    fn change(&mut self, cmd: &Command) {
        match cmd {
            Command::Open(_) => *self = ViewState::default(),
            Command::SelectRank(rank) => self.on_rank_change(*rank),
            Command::SetSource(source) => {
                if *source != self.source {
                    self.source = *source;
                    self.on_rank_change(self.rank);
                }
            }
            Command::OriginMoved { by_ns } => {
                if let Some(w) = self.link.window {
                    self.link.window = Some(TimeWindow::new(
                        w.start.saturating_add(*by_ns),
                        w.end.saturating_add(*by_ns),
                    ));
                }
            }
            Command::SetHost(h) => self.host.clone_from(h),
            Command::SetGroupBy(g) => {
                if *g != self.group_by {
                    self.group_by = *g;
                    self.static_view = false;
                }
            }
            Command::SetWindow { window, moving } => {
                self.link.window = *window;
                self.link.moving = *moving;
            }
            Command::Settle => self.link.moving = false,
            Command::ResetZoom => {
                self.link.window = None;
                self.link.moving = false;
                self.static_range = None;
            }
            Command::ResetView => {
                self.change(&Command::ResetZoom);
                self.link.cursor = None;
            }
            Command::SetCursor(c) => self.link.cursor = *c,
            Command::SetPage(table, p) => {
                let key = table.query(self);
                self.pages.0.insert(table.0.name, (*table, *p, key));
            }
            Command::SetPageSize(n) => {
                self.page_size = (*n).max(1);
                self.page_size_chosen = true;
            }
            Command::FitPageSize(n) => {
                if !self.page_size_chosen {
                    self.page_size = (*n).max(1);
                }
            }
            Command::Sort { table, column } => self.sorts.cycle(*table, column),
            Command::Choose(edit) => edit.apply_to(&mut self.choices),
            Command::ToggleSelected(table, r) => {
                self.selection_on = Some(*table);
                if !self.selected.remove(r) {
                    self.selected.insert(*r);
                }
            }
            Command::ClearSelection => self.selected.clear(),
            Command::SelectRows(table, rows) => {
                self.selection_on = Some(*table);
                self.selected = rows.iter().copied().collect();
            }
            Command::Hover(r) => self.hovered_row = *r,
            Command::MarkRow(r) => {
                self.marked_row = *r;
                if let Some(r) = r {
                    self.selected = [*r].into_iter().collect();
                }
            }
            Command::SetYFromZero(on) => self.y_from_zero = *on,
            Command::ToggleSeries(name) => {
                if !self.hidden_series.remove(name) {
                    self.hidden_series.insert(name.clone());
                }
            }
            Command::SetStaticView(on) => self.static_view = *on,
            Command::SetGraph(g) => {
                self.graph = *g;
                self.static_range = None;
            }
            Command::SetStaticRange(r) => self.static_range = *r,
            Command::ShowWarnings(on) => self.show_warnings = *on,
            Command::ShowTab(tab) => self.tab = *tab,
            Command::SetTableGroup(g) => self.table_group = *g,
            Command::ShowOverview(on) => self.show_overview = *on,
            Command::SetAlignStep(s) => self.align_step = *s,
            Command::SetTableBaseline(on) => {
                self.table_baseline = *on;
                self.selected.clear();
                self.tab = TabId::DETAILS;
            }
            Command::FilterRows(rows) => {
                self.only_rows.clone_from(rows);
                if rows.is_some() {
                    self.tab = TabId::DETAILS;
                    self.table_group = None;
                }
            }
            Command::CompareWith(_) | Command::CompareRank(_) => {
                self.tab = TabId::DIFF;
            }
            Command::StopCompare => {
                if self.tab == TabId::DIFF {
                    self.tab = TabId::DETAILS;
                }
                self.table_baseline = false;
                self.align_step = None;
            }
            Command::Pick(_)
            | Command::Picked(..)
            | Command::CancelLoad
            | Command::Retry
            | Command::CancelOverview
            | Command::StopSummaryCompare
            | Command::RetryOverview
            | Command::CopyDiff
            | Command::Copy
            | Command::CopyAll
            | Command::SaveChart
            | Command::SetLanguage(_)
            | Command::SetTheme(_)
            | Command::ShowHelp(_)
            | Command::Back
            | Command::ShowPathDialog(_)
            | Command::SetReopenLast(_)
            | Command::DismissFailures => {}
        }
    }

    /// State for a newly chosen rank: zoom, cursor, selection and page are per rank.
    fn on_rank_change(&mut self, rank: usize) {
        self.rank = rank;
        self.link = LinkGroup::default();
        self.selected.clear();
        self.hovered_row = None;
        self.marked_row = None;
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
    use crate::ui::panes::details_table::{BASELINE, DETAILS};
    use crate::ui::panes::{component_table, static_view};

    /// Every paged table.
    const ALL: [TableId; 4] = [
        DETAILS,
        BASELINE,
        component_table::TABLE,
        static_view::TABLE,
    ];
    use crate::ui::panes::steps::StepColumn;

    #[test]
    fn header_clicks_cycle_asc_desc_none() {
        use crate::analysis::{Column, SortDir};
        use crate::ui::panes::details_table::SORT;
        let mut s = ViewState::default();
        let sort = |s: &ViewState| s.sorts.get::<Column>(SORT);
        s.apply(&Command::SetPage(DETAILS, 3));
        s.apply(&Command::sort(SORT, Column::Size));
        assert_eq!(sort(&s), Some((Column::Size, SortDir::Asc)));
        assert_eq!(s.page(DETAILS), 0);
        s.apply(&Command::sort(SORT, Column::Size));
        assert_eq!(sort(&s), Some((Column::Size, SortDir::Desc)));
        s.apply(&Command::sort(SORT, Column::Size));
        assert_eq!(sort(&s), None);
        s.apply(&Command::sort(SORT, Column::Size));
        s.apply(&Command::sort(SORT, Column::Name));
        assert_eq!(sort(&s), Some((Column::Name, SortDir::Asc)));
        // Another table's sort leaves this one (and its page) as it is.
        s.apply(&Command::SetPage(DETAILS, 2));
        s.apply(&Command::sort(
            crate::ui::panes::steps::SORT,
            StepColumn::Change,
        ));
        assert_eq!(sort(&s), Some((Column::Name, SortDir::Asc)));
        assert_eq!(s.page(DETAILS), 2);
    }

    #[test]
    fn a_new_window_goes_to_the_first_page_and_the_same_one_keeps_it() {
        let w = TimeWindow::new(10, 20);
        let mut s = ViewState::default();
        s.apply(&Command::SetPage(DETAILS, 4));
        s.apply(&Command::SetWindow {
            window: Some(w),
            moving: true,
        });
        assert_eq!((s.page(DETAILS), s.link.moving), (0, true));
        s.apply(&Command::SetPage(DETAILS, 2));
        s.apply(&Command::SetWindow {
            window: Some(w),
            moving: false,
        });
        assert_eq!((s.page(DETAILS), s.link.moving), (2, false));
        s.apply(&Command::SetCursor(Some(15)));
        s.apply(&Command::ResetView);
        assert_eq!((s.link, s.page(DETAILS)), (LinkGroup::default(), 0));
    }

    /// Each table keeps its own page: a change to what one table queries sends that table (and
    /// only it) back to its first page; a change to what every table depends on (the rank, the
    /// page size) sends them all back.
    #[test]
    fn each_table_keeps_its_own_page() {
        use crate::ui::panes::details_table::DetailsFilter;
        use crate::ui::panes::static_view::StaticFilter;
        let mut s = ViewState::default();
        for (k, t) in ALL.into_iter().enumerate() {
            s.apply(&Command::SetPage(t, k + 2));
        }
        let pages = |s: &ViewState| ALL.map(|t| s.page(t));
        assert_eq!(pages(&s), [2, 3, 4, 5]);
        // The details table's name filter: details and the baseline's table (the same query
        // on the other rank) go back; components and static ops keep theirs.
        s.apply(&Command::choose(|f: &mut DetailsFilter| {
            f.name = "conv".into()
        }));
        assert_eq!(pages(&s), [0, 0, 4, 5]);
        s.apply(&Command::SetPage(DETAILS, 7));
        // The static op filter: only the static table.
        s.apply(&Command::choose(|f: &mut StaticFilter| {
            f.name = "add".into()
        }));
        assert_eq!(pages(&s), [7, 0, 4, 0]);
        // The component sort: only the component table.
        s.apply(&Command::sort(
            component_table::SORT,
            crate::analysis::ComponentColumn::ALL[0],
        ));
        assert_eq!(pages(&s), [7, 0, 0, 0]);
        // Showing the baseline's table or the rank's changes neither's rows.
        s.apply(&Command::SetPage(BASELINE, 6));
        s.apply(&Command::SetTableBaseline(true));
        s.apply(&Command::SetTableBaseline(false));
        assert_eq!(pages(&s), [7, 6, 0, 0]);
        // Alignment moves the baseline's window only.
        s.apply(&Command::SetPage(BASELINE, 3));
        s.apply(&Command::SetAlignStep(Some(2)));
        assert_eq!(pages(&s), [7, 0, 0, 0]);
        // Commands that change no query keep every page.
        for (k, t) in ALL.into_iter().enumerate() {
            s.apply(&Command::SetPage(t, k + 1));
        }
        for c in [
            Command::SetCursor(Some(5)),
            Command::ToggleSelected(DETAILS, 3),
            Command::Hover(Some(2)),
            Command::ShowWarnings(true),
            Command::ShowTab(crate::ui::panes::steps::TAB),
        ] {
            s.apply(&c);
        }
        assert_eq!(pages(&s), [1, 2, 3, 4]);
        // Rows per page and the rank: every table.
        s.apply(&Command::SetPageSize(50));
        assert_eq!(pages(&s), [0, 0, 0, 0]);
        for t in ALL {
            s.apply(&Command::SetPage(t, 1));
        }
        s.apply(&Command::SelectRank(1));
        assert_eq!(pages(&s), [0, 0, 0, 0]);
    }

    /// The selection belongs to the table it was made in: that table's page or query moving
    /// leaves it (a block marked from Live at cursor stays), another table's does not.
    #[test]
    fn the_selection_follows_the_table_it_was_made_in() {
        use crate::ui::panes::details_table::DetailsFilter;
        let mut s = ViewState::default();
        s.apply(&Command::SelectRows(DETAILS, vec![1, 2, 3]));
        s.apply(&Command::SetPage(BASELINE, 2));
        s.apply(&Command::SetPage(component_table::TABLE, 1));
        assert_eq!(s.selected.len(), 3);
        s.apply(&Command::MarkRow(Some(7)));
        s.apply(&Command::ToggleSelected(DETAILS, 8));
        s.apply(&Command::choose(|f: &mut DetailsFilter| {
            f.name = "conv".into()
        }));
        assert_eq!(s.selected.iter().copied().collect::<Vec<_>>(), [7]);
        s.apply(&Command::SelectRows(BASELINE, vec![4, 5]));
        s.apply(&Command::SetPage(DETAILS, 3));
        assert_eq!(s.selected.len(), 2);
        s.apply(&Command::SetPage(BASELINE, 1));
        assert!(s.selected.is_empty());
    }
}
