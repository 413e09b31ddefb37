//! What the user asks for, as data. Panes and shortcuts push [`Command`]s; the app applies them
//! in one place at the end of the frame ([`super::MemsightApp::apply`]): every command goes to
//! [`ViewState::apply`](super::state::ViewState::apply) (the only writer of the state), then
//! the app does what it asks beyond the state (open, load, copy). Nothing else writes the pages,
//! the window, the cursor, the rank or the selection.

use std::path::PathBuf;

use super::baseline::BaselineSource;
use super::choices::{Choice, ChoiceEdit};
use super::i18n::Lang;
use super::prefs::ThemePref;
use super::sorts::{SortColumn, SortTable};
use crate::analysis::GroupBy;
use crate::analysis::stacks::GroupKey;
use crate::model::SourceChoice;
use crate::model::TimeWindow;

/// Which view the bottom pane shows: the id of a registered
/// [`BottomPane`](crate::ui::panes::tab::BottomPane). Plain data, so the state stays plain.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TabId(pub &'static str);

impl TabId {
    /// The details table (or the component table under Group By Component): the default tab.
    pub const DETAILS: TabId = TabId("details");
    /// The comparison's table: shown when a comparison starts, left when it stops.
    pub const DIFF: TabId = TabId("diff");
}

impl Default for TabId {
    fn default() -> Self {
        TabId::DETAILS
    }
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

/// What an open dialog asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PickKind {
    /// A profiling folder (File, Open folder…, Ctrl+O).
    Folder,
    /// A profiler database (File, Open file (.db)…).
    Database,
    /// A folder or .db to compare with (File, Compare with…).
    Baseline,
    /// A file a document asks for, described where it is used ([`FilePick`]): a summary to
    /// compare a summary with, a snapshot to compare a snapshot with, a profile to join a
    /// snapshot with. A new one is a `static` in the document's own file.
    File(&'static FilePick),
}

/// A file an open dialog asks for on a document's behalf: its title, what it lists, and the
/// command the picked path becomes. Defined as a `static` beside the view that asks for it, so
/// a new kind of pick edits nothing here, in the native dialog or in the in-app browser.
#[derive(Debug)]
pub struct FilePick {
    /// Its name (tests, logs; equal names are the same pick).
    pub id: &'static str,
    /// The dialog's title.
    pub title: super::i18n::Text,
    /// The native dialog's filter: its name and extensions (both cases are offered).
    pub filter: (&'static str, &'static [&'static str]),
    /// Whether the in-app browser lists a file.
    pub lists: fn(&std::path::Path) -> bool,
    /// The command the picked path becomes.
    pub then: fn(PathBuf) -> Command,
}

impl PartialEq for FilePick {
    fn eq(&self, other: &FilePick) -> bool {
        self.id == other.id
    }
}

impl Eq for FilePick {}

/// A user intent.
#[derive(Debug, Clone, PartialEq)]
pub enum Command {
    /// Open a folder or `.db`, replacing what is shown.
    Open(PathBuf),
    /// Show an open dialog.
    Pick(PickKind),
    /// Show another rank of the open profile (from the session when it was loaded before).
    SelectRank(usize),
    /// Stop the running load.
    CancelLoad,
    /// Load the rank on screen again (after a cancelled or failed load).
    Retry,
    /// Copy the selected rows (or the table's page) as TSV.
    Copy,
    /// Copy every row matching the table's filters, in its order, as TSV.
    CopyAll,
    /// Save the chart pane as a PNG (a screenshot of it, then a file name).
    SaveChart,
    /// Choose the UI language.
    SetLanguage(Lang),
    /// Choose the theme.
    SetTheme(ThemePref),
    /// Open or close the keyboard and mouse help.
    ShowHelp(bool),
    /// Go back to the document shown before the one on screen (a cluster summary, snapshot or
    /// OOM folder, kept as it was: a rank opened from a summary's link returns to the summary
    /// without reading it again).
    Back,
    /// Reopen the last profile at start (a remembered preference).
    SetReopenLast(bool),
    /// Open or close the Open path… dialog (type or paste a path).
    ShowPathDialog(bool),
    /// Close the lines that say a background task failed.
    DismissFailures,
    /// Filter the rank list by host.
    SetHost(Option<String>),
    /// Choose the Group By.
    SetGroupBy(GroupBy),
    /// Show `window` (None = everything); `moving` while a drag or wheel is in progress.
    SetWindow {
        /// The new window.
        window: Option<TimeWindow>,
        /// True while the gesture goes on.
        moving: bool,
    },
    /// The window stopped moving.
    Settle,
    /// Show the whole rank (and the whole static graph).
    ResetZoom,
    /// Show the whole rank and drop the cursor (Esc, double-click).
    ResetView,
    /// Place or remove the cursor (ns from origin).
    SetCursor(Option<i64>),
    /// Go to a page of a table (0-based; the table shows at most its last page).
    SetPage(super::state::TableId, usize),
    /// Rows per page, as the user chose them.
    SetPageSize(usize),
    /// Rows per page to fit the space the table has, unless the user chose a page size.
    FitPageSize(usize),
    /// A click on a column's header of a sorted table ([`crate::ui::sorts`]): ascending,
    /// descending, then the table's own order. Made by [`Command::sort`].
    Sort {
        /// The table, named by its pane.
        table: SortTable,
        /// The column's name ([`SortColumn::name`]).
        column: &'static str,
    },
    /// A change to a pane's own filters or modes ([`crate::ui::choices`]): made by
    /// [`Command::choose`].
    Choose(ChoiceEdit),
    /// Select or unselect a row of a table (the selection is left when that table's page or
    /// query changes).
    ToggleSelected(super::state::TableId, u32),
    /// Select exactly these rows of a table (Shift+click ranges, Ctrl+A).
    SelectRows(super::state::TableId, Vec<u32>),
    /// Unselect every row.
    ClearSelection,
    /// Hide or show a curve (a click on its legend entry).
    ToggleSeries(String),
    /// Start the chart's y axis at 0 (or fit it to the visible curves).
    SetYFromZero(bool),
    /// The details-table row under the pointer (marked on the chart).
    Hover(Option<u32>),
    /// Select one block and mark its lifetime on the chart (a block picked in Live at cursor);
    /// the details table turns to its page.
    MarkRow(Option<u32>),
    /// Show the static-graph view.
    SetStaticView(bool),
    /// Choose a static graph.
    SetGraph(usize),
    /// The static chart's node-index selection.
    SetStaticRange(Option<(f64, f64)>),
    /// Open or close the warnings window.
    ShowWarnings(bool),
    /// Show this view in the bottom pane (details, steps, call stacks, diff, …).
    ShowTab(TabId),
    /// Compare the rank on screen with a baseline (a rank of this profile or of another).
    CompareWith(BaselineSource),
    /// A file picked for a document's own use ([`FilePick::then`]): the pick's id and the path.
    /// The document that asked handles it.
    Picked(&'static str, PathBuf),
    /// Compare with rank `i` of the open profile.
    CompareRank(usize),
    /// Stop comparing.
    StopCompare,
    /// Align the baseline's curves at the start of this step (None: at each rank's origin).
    SetAlignStep(Option<i64>),
    /// Copy the diff table (its filtered, sorted rows) as TSV.
    CopyDiff,
    /// The details table shows the baseline's blocks (true) or the rank on screen's.
    SetTableBaseline(bool),
    /// Show the cluster overview (true) or the rank's chart and tables (false).
    ShowOverview(bool),
    /// Stop summarising ranks for the overview.
    CancelOverview,
    /// Stop comparing two cluster summaries.
    StopSummaryCompare,
    /// Summarise the ranks of the cluster overview again (after Cancel).
    RetryOverview,
    /// Show exactly these rows in the details table (a step's survivors); None shows all again.
    FilterRows(Option<RowSubset>),
    /// Group the details table's rows (None: one row per block).
    SetTableGroup(Option<GroupKey>),
    /// Read ranks that have both a DB and CSV files from these (reloads the rank).
    SetSource(SourceChoice),
    /// The rank on screen's time origin moved by this many ns (a completed load found earlier
    /// times than its first look): the window moves with it, so it shows the same instants.
    OriginMoved {
        /// ns added to every time from the origin.
        by_ns: i64,
    },
}

impl Command {
    /// A click on `column`'s header of `table`.
    pub fn sort<C: SortColumn>(table: SortTable, column: C) -> Command {
        Command::Sort {
            table,
            column: column.name(),
        }
    }

    /// A change of pane choices `T` by `f` (applied to the value current when it applies).
    pub fn choose<T: Choice>(f: impl Fn(&mut T) + Send + Sync + 'static) -> Command {
        Command::Choose(ChoiceEdit::new(f))
    }
}
