//! The details table pane: filters, sortable headers, pages, selection, Copy (TSV) and Export
//! (CSV), all linked to the chart's visible window. It queries `analysis::query` when what the
//! query depends on changes, and keeps its last page while the window is still moving.

use std::sync::Arc;

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::export_csv::Exporter;
use super::pager::Pager;
use crate::analysis::table::Unit;
use crate::analysis::{
    Column, RangeFilter, RankView, SortDir, TablePage, TableQuery, ViewId, WindowMode, query,
};
use crate::export::rows_tsv;
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::jobs::{Job, JobKey, Place};
use crate::ui::state::ViewState;

/// The details table's own state between frames.
pub struct DetailsTable {
    /// The last query and its page: queries run only when something they depend on changes.
    last: Option<(ViewId, TableQuery, TablePage)>,
    /// The text most recently put on the clipboard (also sent to the system clipboard).
    pub last_copy: Option<String>,
    /// Export CSV….
    pub exporter: Exporter,
    /// Ranks with at least this many allocations sort a column in a job (the first sort of a
    /// column of 2.6M rows takes ~0.1 s) while the table shows "sorting…".
    pub background_min_rows: usize,
    /// The (view, column, direction) a job is sorting.
    sorting: Option<((ViewId, Column, SortDir), Job<()>)>,
    pager: Pager,
}

impl Default for DetailsTable {
    fn default() -> Self {
        DetailsTable {
            last: None,
            last_copy: None,
            exporter: Exporter::default(),
            background_min_rows: 1_000_000,
            sorting: None,
            pager: Pager::default(),
        }
    }
}

fn parse_bound(text: &str) -> Result<Option<f64>, ()> {
    let t = text.trim().replace(',', "");
    if t.is_empty() {
        return Ok(None);
    }
    t.parse::<f64>().map(Some).map_err(|_| ())
}

/// The query the state asks for (window in ns from origin, page and size as chosen).
pub fn query_for(state: &ViewState) -> TableQuery {
    TableQuery {
        window: state.link.window.map(|w| w.ns()),
        mode: if state.within {
            WindowMode::Within
        } else {
            WindowMode::Overlap
        },
        name: state.name_filter.trim().to_string(),
        ranges: match (
            parse_bound(&state.min_size_text),
            parse_bound(&state.max_size_text),
        ) {
            (Ok(None), Ok(None)) | (Err(()), _) | (_, Err(())) => Vec::new(),
            (Ok(min), Ok(max)) => vec![RangeFilter {
                column: Column::Size,
                min,
                max,
            }],
        },
        sort: state.sort,
        page_size: state.page_size,
        page: state.page,
        require_stream: state.group_by.table_requires_stream(),
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
    /// moves or a big rank's column is sorted in a job. A page beyond the last is clamped (and
    /// a command fixes the state's page).
    fn page(&mut self, cx: &mut PaneCx<'_>) -> PageOut {
        let view = cx.view;
        let state = cx.state;
        let id = view.id();
        let q = query_for(state);
        let last = self.last.as_ref().filter(|(vid, _, _)| *vid == id);
        if let Some((col, dir)) = q.sort
            && !view.sort_cache.is_cached(col, dir)
            && view.data.operators.len() >= self.background_min_rows
            && let Some((_, _, page)) = last
        {
            let key = (id, col, dir);
            if self.sorting.as_ref().map(|(k, _)| *k) != Some(key) {
                let job_view = Arc::clone(view);
                let job = cx
                    .jobs
                    .run(JobKey::Sort(id, col, dir), Place::Thread, move |_| {
                        job_view.sort_cache.order(&job_view.data, col, dir);
                    });
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
        let mut q = q;
        if q.page >= pages {
            q.page = pages - 1;
            cx.out.push(Command::SetPage(q.page));
            page = query(&view.data, &view.sort_cache, &q);
        }
        self.last = Some((id, q, page.clone()));
        PageOut { page, stale: false }
    }

    /// True while the sort the state asks for is computed in a job.
    fn is_sorting(&self, view: &RankView, state: &ViewState) -> bool {
        state.sort.is_some_and(|(col, dir)| {
            self.sorting.as_ref().map(|(k, _)| *k) == Some((view.id(), col, dir))
                && !view.sort_cache.is_cached(col, dir)
        })
    }

    /// Copies the selected rows (or, with none selected, the current page) as TSV.
    pub fn copy(&mut self, ctx: Option<&egui::Context>, view: &RankView, state: &ViewState) {
        let rows: Vec<u32> = if state.selected.is_empty() {
            self.last
                .as_ref()
                .filter(|(vid, _, _)| *vid == view.id())
                .map(|(_, _, p)| p.rows.clone())
                .unwrap_or_default()
        } else {
            state.selected.iter().copied().collect()
        };
        let tsv = rows_tsv(&view.data, &rows);
        if let Some(ctx) = ctx {
            ctx.copy_text(tsv.clone());
        }
        self.last_copy = Some(tsv);
    }

    /// The filter bar, the table and its pager.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let state = cx.state;
        ui.horizontal_wrapped(|ui| {
            ui.strong("Memory Allocation/Release Details");
            ui.separator();
            let label = ui.label("Name");
            let mut name = state.name_filter.clone();
            let edit = egui::TextEdit::singleline(&mut name)
                .desired_width(140.0)
                .hint_text("search");
            if ui.add(edit).labelled_by(label.id).changed() {
                cx.out.push(Command::SetNameFilter(name));
            }
            for (label, text, make) in [
                (
                    "Min Size(KB)",
                    &state.min_size_text,
                    Command::SetMinSize as fn(String) -> Command,
                ),
                ("Max Size(KB)", &state.max_size_text, Command::SetMaxSize),
            ] {
                let label = ui.label(label);
                let mut text = text.clone();
                let bad = parse_bound(&text).is_err();
                let mut edit = egui::TextEdit::singleline(&mut text).desired_width(80.0);
                if bad {
                    edit = edit.text_color(ui.visuals().error_fg_color);
                }
                if ui.add(edit).labelled_by(label.id).changed() {
                    cx.out.push(make(text));
                }
            }
            let mut within = state.within;
            if ui
                .checkbox(
                    &mut within,
                    "Only allocated or released within the selection",
                )
                .changed()
            {
                cx.out.push(Command::SetWithin(within));
            }
        });
        let PageOut { page, stale } = self.page(cx);
        let sorting = self.is_sorting(cx.view, state);
        if stale {
            ui.ctx().request_repaint(); // query once the view settles
        }
        self.exporter.poll();
        ui.horizontal_wrapped(|ui| {
            ui.label(format!("{} rows", grouped(page.total as f64, 0)));
            if sorting {
                ui.spinner();
                ui.weak("sorting…");
            }
            if state.link.window.is_some() {
                ui.weak("(in the zoomed range)");
            }
            if ui
                .button("Copy")
                .on_hover_text("Selected rows, or this page, as TSV for Excel (Ctrl+C)")
                .clicked()
            {
                cx.out.push(Command::Copy);
            }
            if ui
                .button("Export CSV…")
                .on_hover_text("Every matching row, to a file")
                .clicked()
            {
                self.exporter
                    .start(cx.jobs, Arc::clone(cx.view), query_for(state));
            }
            if !state.selected.is_empty()
                && ui
                    .button(format!("Clear selection ({})", state.selected.len()))
                    .clicked()
            {
                cx.out.push(Command::ClearSelection);
            }
            if let Some(s) = &self.exporter.status {
                ui.weak(s.as_str());
            }
        });
        self.pager.ui(ui, state, page.total, cx.out);
        let text_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        let mut hovered = None;
        egui::ScrollArea::horizontal().show(ui, |ui| {
            table_ui(ui, cx, &page, text_h, &mut hovered);
        });
        if hovered != state.hovered_row {
            cx.out.push(Command::Hover(hovered));
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
) {
    let (view, state) = (cx.view, cx.state);
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center));
    table = table.column(TableColumn::initial(220.0).at_least(80.0).clip(true));
    for _ in 1..Column::ALL.len() {
        table = table.column(TableColumn::auto().at_least(70.0));
    }
    let out = &mut *cx.out;
    table
        .header(text_h + 4.0, |mut header| {
            for col in Column::ALL {
                header.col(|ui| {
                    let dir = state.sort.filter(|(c, _)| *c == col).map(|(_, d)| d);
                    if sort_header(ui, col.header(), dir, "file order") {
                        out.push(Command::CycleSort(col));
                    }
                });
            }
        })
        .body(|body| {
            body.rows(text_h, page.rows.len(), |mut row| {
                let r = page.rows[row.index()];
                row.set_selected(state.selected.contains(&r));
                for col in Column::ALL {
                    row.col(|ui| {
                        let text = display_cell(view, r as usize, col);
                        if col.unit() != Unit::Text {
                            ui.with_layout(
                                egui::Layout::right_to_left(egui::Align::Center),
                                |ui| ui.add(egui::Label::new(text).selectable(false)),
                            );
                        } else {
                            ui.add(egui::Label::new(text).selectable(false));
                        }
                    });
                }
                let resp = row.response();
                if resp.hovered() {
                    *hovered = Some(r);
                }
                if resp.clicked() {
                    out.push(Command::ToggleSelected(r));
                }
            });
        });
}

/// A sortable column's header button, marked ⬆/⬇ when sorted by it (`dir`); true when clicked.
/// `default` names the order a third click returns to.
pub fn sort_header(ui: &mut egui::Ui, title: &str, dir: Option<SortDir>, default: &str) -> bool {
    let mark = match dir {
        Some(SortDir::Asc) => " ⬆",
        Some(SortDir::Desc) => " ⬇",
        None => "",
    };
    ui.add(egui::Button::new(format!("{title}{mark}")).wrap_mode(egui::TextWrapMode::Extend))
        .on_hover_text(format!("Sort: ascending → descending → {default}"))
        .clicked()
}
