//! The details table pane: filters, sortable headers, pages, selection, Copy (TSV) and Export
//! (CSV), all linked to the chart's visible window. It queries `analysis::query` when what the
//! query depends on changes, and keeps its last page while the window is still moving.

use std::sync::Arc;

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::export_csv::Exporter;
use super::groups::{GroupCache, groups_tsv, groups_ui, short_frame, stack_tooltip};
use super::pager::Pager;
use crate::analysis::stacks::GroupKey;
use crate::analysis::table::Unit;
use crate::analysis::{
    Column, RangeFilter, RankView, SortDir, TablePage, TableQuery, ViewId, WindowMode, query,
};
use crate::export::{ExportColumn, export_columns, rows_tsv};
use crate::model::{TagKind, TimeWindow};
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::jobs::{Job, JobKey, Place};
use crate::ui::state::{PagedTable, SubsetWhy, TabId, TableId, ViewState};

/// The job that sorts a big rank's column (one per view, column and direction).
pub const SORT_JOB: crate::ui::jobs::JobKind =
    crate::ui::jobs::JobKind::new("sort", "sorting a column", "排序列");

/// The details table (the baseline's too, in a comparison)'s sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("details");

/// The details table of the rank on screen, as a paged table.
pub const DETAILS: TableId = TableId(&DETAILS_TABLE);
static DETAILS_TABLE: PagedTable = PagedTable {
    name: "details",
    query: |s| rows_key(s, false),
};

/// The details table of a comparison's baseline, as a paged table.
pub const BASELINE: TableId = TableId(&BASELINE_TABLE);
static BASELINE_TABLE: PagedTable = PagedTable {
    name: "baseline",
    query: |s| rows_key(s, true),
};

/// What a details table's rows depend on (the baseline's also on the step it is aligned to);
/// a subset of rows counts by why and how many, not by every row.
fn rows_key(s: &ViewState, baseline: bool) -> String {
    let subset = s.only_rows.as_ref().map(|r| (&r.why, r.rows.len()));
    let align = baseline.then_some(s.align_step);
    format!(
        "{:?} {:?} {:?} {:?} {:?} {subset:?} {:?} {align:?}",
        (s.rank, s.source, s.page_size),
        s.link.window,
        s.choice::<DetailsFilter>(),
        s.sorts.key(SORT),
        s.group_by,
        s.table_group,
    )
}

/// The details table's filters: its own choices ([`crate::ui::choices`]), which the baseline's
/// table of a comparison shares.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DetailsFilter {
    /// Operator name text (case-insensitive, any part).
    pub name: String,
    /// Tag column filter texts (msMemScope's Owner, Inefficient), by column.
    pub tags: std::collections::BTreeMap<TagKind, String>,
    /// Min Size(KB), as typed.
    pub min_text: String,
    /// Max Size(KB), as typed.
    pub max_text: String,
    /// Only blocks allocated or released within the visible range.
    pub within: bool,
}

impl crate::ui::choices::Choice for DetailsFilter {
    const ID: &'static str = "details";
}

/// The details table's own state between frames.
pub struct DetailsTable {
    /// Which table it is (its page in the view state).
    table: TableId,
    /// The last query and its page: queries run only when something they depend on changes.
    last: Option<(ViewId, TableQuery, TablePage)>,
    /// The text most recently put on the clipboard (also sent to the system clipboard).
    pub(crate) last_copy: Option<String>,
    /// "Copied N rows", shown after a copy.
    pub(crate) copy_status: Option<String>,
    /// The row a plain click selected last: a Shift+click selects from it.
    anchor: Option<u32>,
    /// The marked row whose page the table last turned to.
    turned_to: Option<u32>,
    /// Export CSV….
    pub(crate) exporter: Exporter,
    /// Ranks with at least this many allocations sort a column in a job (the first sort of a
    /// column of 2.6M rows takes ~0.1 s) while the table shows "sorting…".
    pub(crate) background_min_rows: usize,
    /// The (view, column, direction) a job is sorting.
    sorting: Option<((ViewId, Column, SortDir), Job<()>)>,
    pager: Pager,
    /// The grouped table's groups.
    groups: GroupCache,
    /// How many of a view's blocks have no stream (Stream mode does not list them).
    without_stream: Option<(ViewId, usize)>,
}

impl Default for DetailsTable {
    fn default() -> Self {
        DetailsTable::for_table(DETAILS)
    }
}

impl DetailsTable {
    /// The details table that keeps its page as `table`.
    pub fn for_table(table: TableId) -> DetailsTable {
        DetailsTable {
            table,
            last: None,
            last_copy: None,
            copy_status: None,
            anchor: None,
            turned_to: None,
            exporter: Exporter::default(),
            background_min_rows: 1_000_000,
            sorting: None,
            pager: Pager::default(),
            groups: GroupCache::default(),
            without_stream: None,
        }
    }

    /// How many blocks of `view` have no stream (counted once per view).
    fn blocks_without_stream(&mut self, view: &RankView) -> usize {
        match self.without_stream {
            Some((id, n)) if id == view.id() => n,
            _ => {
                let n = view
                    .data
                    .operators
                    .stream
                    .iter()
                    .filter(|&s| s == 0)
                    .count();
                self.without_stream = Some((view.id(), n));
                n
            }
        }
    }
}

/// A size bound as typed: `None` when empty or not a number (then the bound is ignored, and the
/// field shows it in red).
pub(crate) fn parse_bound(text: &str) -> Result<Option<f64>, ()> {
    let t = text.trim().replace(',', "");
    if t.is_empty() {
        return Ok(None);
    }
    t.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite())
        .map(Some)
        .ok_or(())
}

/// A size bound field's text and the command that sets it.
pub(crate) type BoundField<'a> = (&'a str, &'a dyn Fn(String) -> Command);

/// The Min Size(KB) and Max Size(KB) fields: a bound that is not a number is shown in red (with
/// a hover saying so) and ignored.
pub(crate) fn size_bounds_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    min: BoundField<'_>,
    max: BoundField<'_>,
    out: &mut Vec<Command>,
) {
    for (label, (text, make)) in [(t.min_size, min), (t.max_size, max)] {
        let label = ui.label(label);
        let mut text = text.to_string();
        let bad = parse_bound(&text).is_err();
        let mut edit = egui::TextEdit::singleline(&mut text).desired_width(80.0);
        if bad {
            edit = edit.text_color(ui.visuals().error_fg_color);
        }
        let mut r = ui.add(edit).labelled_by(label.id);
        if bad {
            r = r.on_hover_text(t.bad_number);
        }
        if r.changed() {
            out.push(make(text));
        }
    }
}

/// The query the state asks of `table` (window in ns from origin, page and size as chosen).
pub fn query_for(state: &ViewState, table: TableId) -> TableQuery {
    let filter = state.choice::<DetailsFilter>();
    TableQuery {
        window: state.link.window.map(|w| w.ns()),
        mode: if filter.within {
            WindowMode::Within
        } else {
            WindowMode::Overlap
        },
        name: filter.name.trim().to_string(),
        // A bound that is not a number is ignored on its own: the other one still applies.
        ranges: match (
            parse_bound(&filter.min_text).unwrap_or(None),
            parse_bound(&filter.max_text).unwrap_or(None),
        ) {
            (None, None) => Vec::new(),
            (min, max) => vec![RangeFilter {
                column: Column::Size,
                min,
                max,
            }],
        },
        sort: state.sorts.get(SORT),
        page_size: state.page_size,
        page: state.page(table),
        require_stream: state.group_by.table_requires_stream(),
        tags: filter
            .tags
            .iter()
            .map(|(k, v)| (*k, v.trim().to_string()))
            .collect(),
        only_rows: state.only_rows.as_ref().map(|s| s.rows.clone()),
    }
}

/// What [`DetailsTable::page`] found.
struct PageOut {
    page: TablePage,
    /// The page is from before the current (still moving) window.
    stale: bool,
}

impl DetailsTable {
    /// The page for the state: queried when the query changed, the last page while the window
    /// moves or a big rank's column is sorted in a job. A page beyond the last shows the last.
    fn page(&mut self, cx: &mut PaneCx<'_>) -> PageOut {
        let view = cx.view;
        let state = cx.state;
        let id = view.id();
        let q = query_for(state, self.table);
        let last = self.last.as_ref().filter(|(vid, _, _)| *vid == id);
        if let Some((col, dir)) = q.sort
            && !view.sort_cache.is_cached(col, dir)
            && view.data.operators.len() >= self.background_min_rows
            && let Some((_, _, page)) = last
        {
            let key = (id, col, dir);
            if self.sorting.as_ref().map(|(k, _)| *k) != Some(key) {
                let job_view = Arc::clone(view);
                let job = cx.jobs.run(
                    JobKey::scoped(SORT_JOB, &(id, col, dir)),
                    Place::Thread,
                    move |_| {
                        job_view.sort_cache.order(&job_view.data, col, dir);
                    },
                );
                self.sorting = (job.start_error.is_none()).then_some((key, job));
            }
            if self.sorting.is_some() {
                return PageOut {
                    page: page.clone(),
                    stale: false,
                };
            }
        }
        if let Some((_, lq, page)) = last {
            if *lq == q {
                return PageOut {
                    page: page.clone(),
                    stale: false,
                };
            }
            let only_window_moved = (TableQuery {
                window: lq.window,
                ..q.clone()
            }) == *lq;
            if state.link.moving && only_window_moved {
                return PageOut {
                    page: page.clone(),
                    stale: true,
                };
            }
        }
        let mut page = query(&view.data, &view.sort_cache, &q);
        let pages = page.pages(q.page_size);
        if q.page >= pages {
            let last = TableQuery {
                page: pages - 1,
                ..q.clone()
            };
            page = query(&view.data, &view.sort_cache, &last);
        }
        self.last = Some((id, q, page.clone()));
        PageOut { page, stale: false }
    }

    /// True while the sort the state asks for is computed in a job.
    fn is_sorting(&self, view: &RankView, state: &ViewState) -> bool {
        state.sorts.get(SORT).is_some_and(|(col, dir)| {
            self.sorting.as_ref().map(|(k, _)| *k) == Some((view.id(), col, dir))
                && !view.sort_cache.is_cached(col, dir)
        })
    }

    /// Copies as TSV, in the order the table shows: with `all`, every row the filters match;
    /// else the selected rows (those the filters hide after them), or the page when none is
    /// selected. Says "Copied N rows".
    pub fn copy(
        &mut self,
        ctx: Option<&egui::Context>,
        view: &RankView,
        state: &ViewState,
        all: bool,
        t: &Tr,
    ) {
        if let Some(by) = state.table_group
            && let Some(stacks) = &view.data.stacks
        {
            let groups = self
                .groups
                .groups(view, stacks, &query_for(state, self.table), by);
            let tsv = groups_tsv(t, by, &groups, state.sorts.get(super::groups::SORT));
            if let Some(ctx) = ctx {
                ctx.copy_text(tsv.clone());
            }
            self.copy_status = Some((t.copied)(&grouped(groups.groups.len() as f64, 0)));
            self.last_copy = Some(tsv);
            return;
        }
        let every_match = || {
            let q = TableQuery {
                page: 0,
                page_size: usize::MAX,
                ..query_for(state, self.table)
            };
            query(&view.data, &view.sort_cache, &q).rows
        };
        let rows: Vec<u32> = if all {
            every_match()
        } else if state.selected.is_empty() {
            self.last
                .as_ref()
                .filter(|(vid, _, _)| *vid == view.id())
                .map(|(_, _, p)| p.rows.clone())
                .unwrap_or_default()
        } else {
            let mut shown: Vec<u32> = every_match()
                .into_iter()
                .filter(|r| state.selected.contains(r))
                .collect();
            let seen: std::collections::BTreeSet<u32> = shown.iter().copied().collect();
            shown.extend(state.selected.iter().filter(|r| !seen.contains(r)));
            shown
        };
        let tsv = rows_tsv(&view.data, &rows);
        if let Some(ctx) = ctx {
            ctx.copy_text(tsv.clone());
        }
        self.copy_status = Some((t.copied)(&grouped(rows.len() as f64, 0)));
        self.last_copy = Some(tsv);
    }

    /// The filter bar, the table and its pager.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let (state, t) = (cx.state, cx.t);
        if let Some(subset) = &state.only_rows {
            ui.horizontal(|ui| {
                ui.colored_label(
                    ui.visuals().warn_fg_color,
                    match &subset.why {
                        SubsetWhy::Survivors(step) => (t.survivors_of)(*step, subset.rows.len()),
                        SubsetWhy::Frame(label) => (t.blocks_under)(label, subset.rows.len()),
                        SubsetWhy::Group(label) => (t.blocks_of)(label, subset.rows.len()),
                    },
                );
                if ui.button(t.show_all_rows).clicked() {
                    cx.out.push(Command::FilterRows(None));
                }
            });
        }
        ui.horizontal_wrapped(|ui| {
            ui.strong(t.details_title);
            ui.separator();
            let label = ui.label(t.name);
            let filter = state.choice::<DetailsFilter>();
            let mut name = filter.name.clone();
            let edit = egui::TextEdit::singleline(&mut name)
                .desired_width(140.0)
                .hint_text(t.search_hint);
            if ui.add(edit).labelled_by(label.id).changed() {
                cx.out.push(Command::choose(move |f: &mut DetailsFilter| {
                    f.name.clone_from(&name)
                }));
            }
            // The source's own columns (msMemScope's Owner, Inefficient) filter the same way.
            for tags in &cx.view.data.tags {
                let label = ui.label(tag_header(t, tags.kind));
                let mut text = filter.tags.get(&tags.kind).cloned().unwrap_or_default();
                let edit = egui::TextEdit::singleline(&mut text)
                    .desired_width(90.0)
                    .hint_text(t.search_hint);
                if ui.add(edit).labelled_by(label.id).changed() {
                    let (kind, text) = (tags.kind, tag_filter_value(t, tags.kind, text));
                    cx.out.push(Command::choose(move |f: &mut DetailsFilter| {
                        if text.is_empty() {
                            f.tags.remove(&kind);
                        } else {
                            f.tags.insert(kind, text.clone());
                        }
                    }));
                }
            }
            size_bounds_ui(
                ui,
                t,
                (&filter.min_text, &|text| {
                    Command::choose(move |f: &mut DetailsFilter| f.min_text.clone_from(&text))
                }),
                (&filter.max_text, &|text| {
                    Command::choose(move |f: &mut DetailsFilter| f.max_text.clone_from(&text))
                }),
                cx.out,
            );
            let mut within = filter.within;
            if ui.checkbox(&mut within, t.within).changed() {
                cx.out.push(Command::choose(move |f: &mut DetailsFilter| {
                    f.within = within
                }));
            }
            if let Some(stacks) = &cx.view.data.stacks {
                let has_roles = super::roles::has_roles(cx.view);
                grouping_ui(
                    ui,
                    t,
                    state.table_group,
                    (!stacks.stacks.is_empty(), has_roles),
                    cx.out,
                );
            }
        });
        if let Some(by) = state.table_group
            && let Some(stacks) = &cx.view.data.stacks
        {
            let q = query_for(state, self.table);
            groups_ui(ui, cx, &mut self.groups, stacks, &q, by);
            return;
        }
        if state.marked_row != self.turned_to {
            self.turned_to = state.marked_row;
            if let Some(r) = state.marked_row {
                let all = TableQuery {
                    page: 0,
                    page_size: usize::MAX,
                    ..query_for(state, self.table)
                };
                let rows = query(&cx.view.data, &cx.view.sort_cache, &all).rows;
                if let Some(pos) = rows.iter().position(|&x| x == r) {
                    cx.out
                        .push(Command::SetPage(self.table, pos / state.page_size.max(1)));
                }
            }
        }
        let PageOut { page, stale } = self.page(cx);
        let sorting = self.is_sorting(cx.view, state);
        if stale {
            ui.ctx().request_repaint(); // query once the view settles
        }
        self.exporter.poll(cx.jobs, cx.t);
        // One line that never wraps (a long status wrapped it and moved the table down): the
        // count and the buttons first, where they stay; what comes and goes (the zoom note,
        // the sort spinner, what Copy or Export did) after them, cut to fit, whole on hover.
        ui.horizontal(|ui| {
            ui.label((t.rows)(&grouped(page.total as f64, 0)));
            if state.group_by.table_requires_stream() {
                let hidden = self.blocks_without_stream(cx.view);
                if hidden > 0 {
                    ui.colored_label(
                        ui.visuals().warn_fg_color,
                        (t.rows_without_stream)(&grouped(hidden as f64, 0)),
                    );
                }
            }
            if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
                cx.out.push(Command::Copy);
            }
            if ui
                .button(t.copy_all)
                .on_hover_text(t.copy_all_hover)
                .clicked()
            {
                cx.out.push(Command::CopyAll);
            }
            if ui
                .button(t.export_csv)
                .on_hover_text(t.export_hover)
                .clicked()
            {
                self.exporter.start(
                    cx.jobs,
                    Arc::clone(cx.view),
                    query_for(state, self.table),
                    t,
                );
            }
            if !state.selected.is_empty()
                && ui
                    .button((t.clear_selection)(state.selected.len()))
                    .clicked()
            {
                cx.out.push(Command::ClearSelection);
            }
            if sorting {
                crate::ui::spinner::spinner(ui);
            }
            let mut notes: Vec<&str> = Vec::new();
            if sorting {
                notes.push(t.sorting);
            }
            if state.link.window.is_some() {
                notes.push(t.in_zoomed_range);
            }
            notes.extend(self.copy_status.as_deref());
            notes.extend(self.exporter.status.as_deref());
            if !notes.is_empty() {
                ui.add(
                    egui::Label::new(egui::RichText::new(notes.join(" · ")).weak())
                        .truncate()
                        .show_tooltip_when_elided(true),
                );
            }
        });
        self.pager.ui(ui, t, state, self.table, page.total, cx.out);
        let select_page = ui.input_mut(|i| i.consume_key(egui::Modifiers::COMMAND, egui::Key::A))
            && !ui.ctx().memory(|m| m.focused().is_some());
        if select_page {
            cx.out
                .push(Command::SelectRows(self.table, page.rows.clone()));
        }
        let text_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        let mut hovered = None;
        let mut clicked = None;
        // The table fills the panel whatever the number of rows, so the pager above it and the
        // filters never move; the horizontal scroll bar sits below the last row.
        egui::ScrollArea::horizontal()
            .auto_shrink([false, false])
            .show(ui, |ui| {
                table_ui(ui, cx, &page, text_h, &mut hovered, &mut clicked);
            });
        // The baseline's rows are not the chart's: they mark nothing on it.
        if cx.marks_chart && hovered != state.hovered_row {
            cx.out.push(Command::Hover(hovered));
        }
        if let Some((row, mods)) = clicked {
            self.click_row(cx, &page, row, mods);
        }
    }

    /// A click on a row, as in a spreadsheet: selects that row only; Ctrl (⌘) + click adds or
    /// removes it; Shift + click selects from the last clicked row to it (in the page's order),
    /// adding to the selection with Ctrl as well.
    fn click_row(
        &mut self,
        cx: &mut PaneCx<'_>,
        page: &TablePage,
        row: u32,
        mods: egui::Modifiers,
    ) {
        let at = |r: u32| page.rows.iter().position(|&x| x == r);
        if mods.shift
            && let Some(a) = self.anchor.and_then(at)
            && let Some(b) = at(row)
        {
            let (lo, hi) = (a.min(b), a.max(b));
            let mut rows: Vec<u32> = if mods.command {
                cx.state.selected.iter().copied().collect()
            } else {
                Vec::new()
            };
            rows.extend(&page.rows[lo..=hi]);
            cx.out.push(Command::SelectRows(self.table, rows));
        } else if mods.command {
            self.anchor = Some(row);
            cx.out.push(Command::ToggleSelected(self.table, row));
        } else {
            self.anchor = Some(row);
            cx.out.push(Command::SelectRows(self.table, vec![row]));
        }
    }
}

/// A cell for reading: grouped digits, `Unknown` for an empty name, empty for a missing value
/// or a row the rank does not have.
fn display_cell(view: &RankView, row: usize, col: Column) -> String {
    let d = &view.data;
    if row >= d.operators.len() {
        return String::new();
    }
    match col {
        Column::Name => d.display_name(d.operators.name[row]).to_string(),
        Column::Stream => d.strings.get(d.operators.stream[row]).to_string(),
        _ => match col.display_value(d, row) {
            None => String::new(),
            Some(v) => grouped(v, if col.unit() == Unit::Ms { 3 } else { 2 }),
        },
    }
}

fn table_ui(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    page: &TablePage,
    text_h: f32,
    hovered: &mut Option<u32>,
    clicked: &mut Option<(u32, egui::Modifiers)>,
) {
    let (view, state, t) = (cx.view, cx.state, cx.t);
    let mods = ui.input(|i| i.modifiers);
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .resizable(true)
        .auto_shrink([false, false])
        // The rows take what the panel leaves them, however little: by default a table claims
        // 200 px, and when the filter bar wrapped (Live at cursor open at 1280×720) the bottom
        // panel grew by a line and the chart lost 23 px.
        .min_scrolled_height(0.0)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center));
    // What Copy and Export write: the table's columns, who allocated each block right after
    // its name when the profile recorded call stacks, then the source's own columns.
    let stacks = view.data.stacks.as_ref().filter(|s| !s.stacks.is_empty());
    let cells = export_columns(&view.data);
    for cell in &cells {
        table = match cell {
            ExportColumn::Table(Column::Name) => {
                table.column(TableColumn::initial(220.0).at_least(80.0).clip(true))
            }
            ExportColumn::CallStack => {
                table.column(TableColumn::initial(240.0).at_least(120.0).clip(true))
            }
            ExportColumn::Tag(_) => {
                table.column(TableColumn::initial(140.0).at_least(60.0).clip(true))
            }
            ExportColumn::Table(_) => table.column(TableColumn::auto().at_least(70.0)),
        };
    }
    let out = &mut *cx.out;
    table
        .header(text_h + 4.0, |mut header| {
            for cell in &cells {
                header.col(|ui| match *cell {
                    ExportColumn::Table(col) => {
                        let dir = state.sorts.dir_of(SORT, col);
                        if sort_header(ui, t, col.header(), dir, t.file_order) {
                            out.push(Command::sort(SORT, col));
                        }
                    }
                    // A file's column names stay as the file (and Copy) writes them, in both
                    // languages: this column is Copy's "Call Stack" too.
                    ExportColumn::Tag(kind) => {
                        ui.strong(tag_header(t, kind));
                    }
                    other => {
                        ui.strong(other.header());
                    }
                });
            }
        })
        .body(|body| {
            body.rows(text_h, page.rows.len(), |mut row| {
                let r = page.rows[row.index()];
                row.set_selected(state.selected.contains(&r));
                for cell in &cells {
                    row.col(|ui| match (*cell, stacks) {
                        (ExportColumn::Table(col), _) => {
                            let text = display_cell(view, r as usize, col);
                            if col.unit() != Unit::Text {
                                ui.with_layout(
                                    egui::Layout::right_to_left(egui::Align::Center),
                                    |ui| ui.add(egui::Label::new(text).selectable(false)),
                                );
                            } else {
                                ui.add(egui::Label::new(text).selectable(false));
                            }
                        }
                        (ExportColumn::CallStack, Some(s)) => {
                            call_stack_cell(ui, t, s, r as usize);
                        }
                        (ExportColumn::CallStack, None) => {}
                        (ExportColumn::Tag(kind), _) => {
                            let text = tag_value(t, kind, view.data.tag(kind, r as usize));
                            // A finding (an inefficient block) stands out.
                            let shown = if kind.is_finding() && !text.is_empty() {
                                egui::RichText::new(text.as_ref()).color(ui.visuals().warn_fg_color)
                            } else {
                                egui::RichText::new(text.as_ref())
                            };
                            ui.add(egui::Label::new(shown).selectable(false))
                                .on_hover_text(text);
                        }
                    });
                }
                let resp = row.response();
                if resp.hovered() {
                    *hovered = Some(r);
                }
                if resp.clicked() {
                    *clicked = Some((r, mods));
                }
            });
        });
}

/// A sortable column's header button, marked ⬆/⬇ when sorted by it (`dir`); true when clicked.
/// `default` names the order a third click returns to.
pub fn sort_header(
    ui: &mut egui::Ui,
    t: &Tr,
    title: &str,
    dir: Option<SortDir>,
    default: &str,
) -> bool {
    let mark = match dir {
        Some(SortDir::Asc) => " ⬆",
        Some(SortDir::Desc) => " ⬇",
        None => "",
    };
    ui.add(egui::Button::new(format!("{title}{mark}")).wrap_mode(egui::TextWrapMode::Extend))
        .on_hover_text((t.sort_hover)(default))
        .clicked()
}

/// The "Rows:" choice: each block, or grouped by call stack, source line or host operator
/// (only the last without stacks).
fn grouping_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    current: Option<GroupKey>,
    (has_stacks, has_roles): (bool, bool),
    out: &mut Vec<Command>,
) {
    ui.separator();
    // The label and its dropdown stay on one line: in the wrapping row, "行：" was left at a
    // row's end with its dropdown on the next. Not enough room for both: a new row first.
    if ui.available_size_before_wrap().x < GROUPING_WIDTH {
        ui.end_row();
    }
    grouping_choice(ui, t, current, (has_stacks, has_roles), out);
}

/// The width the Rows: label and its dropdown take, points.
const GROUPING_WIDTH: f32 = 240.0;

/// The label and the dropdown of [`grouping_ui`].
fn grouping_choice(
    ui: &mut egui::Ui,
    t: &Tr,
    current: Option<GroupKey>,
    (has_stacks, has_roles): (bool, bool),
    out: &mut Vec<Command>,
) {
    let label = ui.label(t.rows_label);
    let choices: [(Option<GroupKey>, &str); 5] = [
        (None, t.row_groupings[0]),
        (Some(GroupKey::Stack), t.row_groupings[1]),
        (Some(GroupKey::SourceLine), t.row_groupings[2]),
        (Some(GroupKey::Operator), t.row_groupings[3]),
        (Some(GroupKey::Role), t.row_groupings[4]),
    ];
    let selected = choices
        .iter()
        .find(|(k, _)| *k == current)
        .map_or(t.row_groupings[0], |(_, l)| l);
    egui::ComboBox::from_id_salt("table_group")
        .selected_text(selected)
        .show_ui(ui, |ui| {
            for (key, text) in choices {
                let usable = match key {
                    Some(GroupKey::Role) => has_roles,
                    None | Some(GroupKey::Operator) => true,
                    _ => has_stacks,
                };
                if usable && ui.selectable_label(key == current, text).clicked() {
                    out.push(Command::SetTableGroup(key));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(t.rows_hover);
}

/// A block's call stack cell: its source line; the whole stack on hover.
fn call_stack_cell(ui: &mut egui::Ui, t: &Tr, stacks: &crate::model::CallStacks, row: usize) {
    let id = stacks
        .row_stack
        .get(row)
        .copied()
        .unwrap_or(crate::model::NO_STACK);
    let text = stacks.row_source_line(row).map_or("", short_frame);
    let r = ui.add(egui::Label::new(text).selectable(false));
    let op = stacks.row_op_name(row).map(str::to_string);
    r.on_hover_ui(|ui| {
        match &op {
            Some(op) => ui.label((t.allocated_by)(op)),
            None => ui.label(t.no_op_running),
        };
        stack_tooltip(ui, stacks, id);
    });
}

/// The details tab: the rank's blocks, the component table under Group By Component, or, in a
/// comparison, the baseline's blocks: a read-only mode whose rows mark nothing on the chart,
/// in the window mapped onto the baseline's own axis, with a page of its own.
pub struct DetailsPane {
    /// The rank on screen's table.
    pub(crate) current: DetailsTable,
    /// The baseline's table.
    pub(crate) baseline: DetailsTable,
    components: super::component_table::ComponentTable,
    /// Which table's export waits for the in-app browser.
    exporting: TableId,
}

/// What tests read of the details pane and set in it as a user's machine would: its tables'
/// fields are the pane's own.
impl DetailsPane {
    /// The text the rank's table last put on the clipboard.
    pub fn last_copy(&self) -> Option<&str> {
        self.current.last_copy.as_deref()
    }

    /// What the rank's table's last export did (or that one runs).
    pub fn export_status(&self) -> Option<&str> {
        self.current.exporter.status.as_deref()
    }

    /// The save dialog the rank's table's Export CSV… shows.
    pub fn set_save_picker(
        &mut self,
        picker: impl Fn() -> crate::ui::file_browser::PickOutcome + Send + Sync + 'static,
    ) {
        self.current.exporter.save_picker = Arc::new(picker);
    }

    /// Ranks with at least `rows` allocations sort in a job.
    pub fn set_background_min_rows(&mut self, rows: usize) {
        self.current.background_min_rows = rows;
    }
}

impl Default for DetailsPane {
    fn default() -> Self {
        DetailsPane {
            current: DetailsTable::for_table(DETAILS),
            baseline: DetailsTable::for_table(BASELINE),
            components: Default::default(),
            exporting: DETAILS,
        }
    }
}

/// A copy of `state` for drawing the baseline's table, its window and cursor moved by
/// `-offset`: the same span of the rank's axis on the baseline's own axis (the baseline is
/// drawn `offset` ns later). A copy to read, never applied back.
pub fn shifted_state(state: &ViewState, offset: i64) -> ViewState {
    let mut s = state.clone();
    s.link.window = state.link.window.map(|w| {
        let (a, b) = w.ns();
        TimeWindow::new(a.saturating_sub(offset), b.saturating_sub(offset))
    });
    s.link.cursor = state.link.cursor.map(|c| c.saturating_sub(offset));
    s
}

impl DetailsPane {
    /// Both tables.
    pub fn tables(&self) -> impl Iterator<Item = &DetailsTable> {
        [&self.current, &self.baseline].into_iter()
    }

    /// True once (then false) when a table's export could not show the native save dialog:
    /// the app shows its own browser and hands the path to [`Self::exporting_table`].
    pub fn wants_browser(&mut self) -> bool {
        if self.baseline.exporter.wants_browser() {
            self.exporting = BASELINE;
            true
        } else if self.current.exporter.wants_browser() {
            self.exporting = DETAILS;
            true
        } else {
            false
        }
    }

    /// The table whose export asked for the in-app browser last.
    pub fn exporting_table(&mut self) -> &mut DetailsTable {
        if self.exporting == BASELINE {
            &mut self.baseline
        } else {
            &mut self.current
        }
    }

    /// Copies the table on screen (the baseline's in its mode) as TSV: see [`DetailsTable::copy`].
    pub fn copy(
        &mut self,
        ctx: Option<&egui::Context>,
        view: &Arc<RankView>,
        state: &ViewState,
        compare: Option<(&Arc<RankView>, i64)>,
        all: bool,
        t: &Tr,
    ) {
        match compare.filter(|_| state.table_baseline) {
            Some((base, offset)) => {
                let shifted = shifted_state(state, offset);
                self.baseline.copy(ctx, base, &shifted, all, t);
            }
            None => self.current.copy(ctx, view, state, all, t),
        }
    }

    /// The table the rank's data calls for, without the tab strip (a rank without
    /// memory_record shows only this).
    pub fn table_ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        if let Some(cmp) = cx.compare.clone().filter(|_| cx.state.table_baseline) {
            let shifted = shifted_state(cx.state, cmp.offset);
            let mut bcx = PaneCx {
                view: &cmp.baseline.view,
                state: &shifted,
                out: &mut *cx.out,
                jobs: &mut *cx.jobs,
                t: cx.t,
                compare: None,
                profile: cx.profile,
                marks_chart: false,
            };
            self.baseline.ui(ui, &mut bcx);
        } else if cx.state.group_by == crate::analysis::GroupBy::Component {
            self.components.ui(ui, cx);
        } else {
            self.current.ui(ui, cx);
        }
    }
}

impl super::tab::BottomPane for DetailsPane {
    fn id(&self) -> TabId {
        TabId::DETAILS
    }

    fn title(&self, t: &'static Tr, cx: &PaneCx<'_>) -> String {
        if cx.state.group_by == crate::analysis::GroupBy::Component {
            t.component_title.to_string()
        } else {
            t.details_title.to_string()
        }
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        self.table_ui(ui, cx);
    }
}

/// A tag column's header on screen: memsight's own Role and Module columns in the UI's language; a file's
/// columns (msMemScope's Owner, Inefficient, OOM) as the file names them.
fn tag_header(t: &Tr, kind: TagKind) -> &'static str {
    match kind {
        TagKind::Role => t.role_header,
        TagKind::Module => t.module_header,
        other => other.header(),
    }
}

/// A tag cell on screen: a role in the UI's language (Copy and Export keep the role's English
/// name, as `table --role` and the JSON do), a module innermost first (Copy and Export keep its
/// path), any other tag as it is.
fn tag_value<'a>(t: &Tr, kind: TagKind, text: &'a str) -> std::borrow::Cow<'a, str> {
    match (kind, crate::model::Role::parse(text)) {
        (TagKind::Role, Some(role)) => role.name(t.lang).into(),
        (TagKind::Module, _) => crate::model::tags::module_innermost_first(text).into(),
        _ => text.into(),
    }
}

/// What a Role filter typed in the UI's language matches: a role's name in that language (or
/// part of it) stands for its English name, which the blocks carry; anything else as typed.
fn tag_filter_value(t: &Tr, kind: TagKind, typed: String) -> String {
    if kind != TagKind::Role || typed.trim().is_empty() {
        return typed;
    }
    let want = typed.trim();
    crate::model::Role::ALL
        .iter()
        .find(|r| r.name(t.lang) == want)
        .or_else(|| {
            crate::model::Role::ALL
                .iter()
                .find(|r| r.name(t.lang).contains(want))
        })
        .filter(|r| !r.as_str().contains(want))
        .map_or(typed.clone(), |r| r.as_str().to_string())
}
