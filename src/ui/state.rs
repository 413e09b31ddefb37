//! The view state as plain data: what the user has chosen. The UI renders it and analysis
//! answers queries on it; tests set and read it directly.

use std::collections::BTreeSet;

use crate::analysis::{Column, ComponentColumn, GroupBy, SortDir};

/// Page sizes offered by the table.
pub const PAGE_SIZES: [usize; 5] = [10, 20, 30, 50, 100];

/// Everything the user has chosen for the current profile.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewState {
    /// Index into the profile's ranks.
    pub rank: usize,
    /// Host filter for the rank list (None = all hosts).
    pub host: Option<String>,
    /// Curves grouping.
    pub group_by: GroupBy,
    /// The chart's visible time range, ms from origin (None = everything, after a reset).
    pub view_ms: Option<(f64, f64)>,
    /// Set to ask the chart to show the whole rank again.
    pub reset_zoom: bool,
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
    /// Text of the "go to page" box.
    pub jump_text: String,
    /// Selected operator_memory rows (Ctrl+C / Copy copies these when any).
    pub selected: BTreeSet<u32>,
    /// The row under the pointer (marked on the chart).
    pub hovered_row: Option<u32>,
    /// Cursor time, ms from origin (set by clicking the chart; opens Live at cursor).
    pub cursor_ms: Option<f64>,
    /// Show the static-graph view instead of the dynamic one.
    pub static_view: bool,
    /// Index into the rank's static graphs.
    pub graph: usize,
    /// The static chart's node-index selection.
    pub static_range: Option<(f64, f64)>,
    /// The warnings window is open.
    pub show_warnings: bool,
    /// The component peak table's sort (`None`: largest peak first).
    pub component_sort: Option<(ComponentColumn, SortDir)>,
}

impl Default for ViewState {
    fn default() -> Self {
        ViewState {
            rank: 0,
            host: None,
            group_by: GroupBy::Overall,
            view_ms: None,
            reset_zoom: false,
            within: false,
            name_filter: String::new(),
            min_size_text: String::new(),
            max_size_text: String::new(),
            sort: None,
            page_size: PAGE_SIZES[0],
            page: 0,
            jump_text: String::new(),
            selected: BTreeSet::new(),
            hovered_row: None,
            cursor_ms: None,
            static_view: false,
            graph: 0,
            static_range: None,
            show_warnings: false,
            component_sort: None,
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
    /// A header click: ascending → descending → file order; another column starts ascending.
    pub fn cycle_sort(&mut self, col: Column) {
        self.sort = next_sort(self.sort, col);
        self.page = 0;
    }

    /// A header click on the component table, cycling like [`Self::cycle_sort`].
    pub fn cycle_component_sort(&mut self, col: ComponentColumn) {
        self.component_sort = next_sort(self.component_sort, col);
        self.page = 0;
    }

    /// State for a newly chosen rank: zoom, cursor, selection and page are per rank.
    pub fn on_rank_change(&mut self, rank: usize) {
        self.rank = rank;
        self.view_ms = None;
        self.reset_zoom = true;
        self.cursor_ms = None;
        self.selected.clear();
        self.hovered_row = None;
        self.page = 0;
        self.static_view = false;
        self.graph = 0;
        self.static_range = None;
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
        s.cycle_sort(Column::Size);
        assert_eq!(s.sort, Some((Column::Size, SortDir::Asc)));
        assert_eq!(s.page, 0);
        s.cycle_sort(Column::Size);
        assert_eq!(s.sort, Some((Column::Size, SortDir::Desc)));
        s.cycle_sort(Column::Size);
        assert_eq!(s.sort, None);
        s.cycle_sort(Column::Size);
        s.cycle_sort(Column::Name);
        assert_eq!(s.sort, Some((Column::Name, SortDir::Asc)));
    }
}
