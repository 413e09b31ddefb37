//! The details table: filters, sortable headers, pages, selection, Copy (TSV) and Export (CSV),
//! all linked to the chart's visible range.

use std::sync::Arc;

use egui_extras::{Column as TableColumn, TableBuilder};

use super::format::grouped;
use super::state::{PAGE_SIZES, ViewState};
use crate::analysis::{
    Column, GroupBy, RangeFilter, RankView, SortDir, TablePage, TableQuery, ViewId, WindowMode,
    query,
};
use crate::export::{rows_tsv, write_rows_csv};

/// The last query and its page: queries run only when something they depend on changes.
pub struct TableCache {
    last: Option<(ViewId, TableQuery, TablePage)>,
    /// The window asked for last frame: while it changes every frame (a pan or zoom in
    /// progress) the table keeps its last page and queries once the view holds still.
    seen_window: Option<Option<(i64, i64)>>,
    /// The text most recently put on the clipboard (also sent to the system clipboard).
    pub last_copy: Option<String>,
    /// What the last Export did.
    pub export_status: Option<String>,
    /// The running export's report.
    export_done: Option<std::sync::mpsc::Receiver<String>>,
    /// The save dialog of Export CSV… ([`native_save_picker`] unless replaced).
    pub save_picker: fn() -> Option<std::path::PathBuf>,
    /// Ranks with at least this many allocations sort a column on a thread of their own (the
    /// first sort of a column of 2.6M rows takes ~0.1 s) while the table shows "sorting…".
    pub background_min_rows: usize,
    /// The (view, column, direction) being sorted in the background.
    sorting: Option<(ViewId, Column, SortDir)>,
}

impl Default for TableCache {
    fn default() -> Self {
        TableCache {
            last: None,
            seen_window: None,
            last_copy: None,
            export_status: None,
            export_done: None,
            save_picker: native_save_picker,
            background_min_rows: 1_000_000,
            sorting: None,
        }
    }
}

/// The native save dialog (rfd, through the XDG desktop portal on Linux); blocks.
pub fn native_save_picker() -> Option<std::path::PathBuf> {
    rfd::FileDialog::new()
        .set_file_name("memory_details.csv")
        .add_filter("CSV", &["csv"])
        .save_file()
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
        window: state
            .view_ms
            .map(|(a, b)| ((a * 1e6).floor() as i64, (b * 1e6).ceil() as i64)),
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
        require_stream: state.group_by == GroupBy::Stream,
    }
}

impl TableCache {
    /// The page for `state`, clamping the page number to the last page. `moving` is set when
    /// the returned page is from before the current (still changing) window. While a big
    /// rank's column is sorted in the background the last page is returned, and `wake` is
    /// called when the order is ready.
    pub fn page(
        &mut self,
        view: &Arc<RankView>,
        state: &mut ViewState,
        moving: &mut bool,
        wake: impl Fn() + Send + 'static,
    ) -> TablePage {
        let id = view.id();
        let q = query_for(state);
        // A big rank's first sort of a column runs on a thread of its own; until it is done the
        // table keeps showing the last page.
        if let Some((col, dir)) = q.sort
            && !view.sort_cache.is_cached(col, dir)
            && view.data.operators.len() >= self.background_min_rows
            && let Some((vid, _, page)) = &self.last
            && *vid == id
        {
            if self.sorting != Some((id, col, dir)) {
                self.sorting = Some((id, col, dir));
                let job = Arc::clone(view);
                let spawned = std::thread::Builder::new()
                    .name("memsight-sort".into())
                    .spawn(move || {
                        job.sort_cache.order(&job.data, col, dir);
                        wake();
                    });
                if spawned.is_err() {
                    self.sorting = None;
                }
            }
            if self.sorting.is_some() {
                return page.clone(); // `wake` repaints when the order is ready
            }
        }
        let window_moved = self
            .seen_window
            .replace(q.window)
            .is_some_and(|w| w != q.window);
        if let Some((vid, lq, page)) = &self.last
            && *vid == id
        {
            if *lq == q {
                return page.clone();
            }
            if window_moved
                && (TableQuery {
                    window: lq.window,
                    ..q.clone()
                }) == *lq
            {
                *moving = true;
                return page.clone();
            }
        }
        let mut page = query(&view.data, &view.sort_cache, &q);
        let pages = page.pages(q.page_size);
        let mut q = q;
        if q.page >= pages {
            state.page = pages - 1;
            q.page = state.page;
            page = query(&view.data, &view.sort_cache, &q);
        }
        self.last = Some((id, q, page.clone()));
        page
    }

    /// True while the sort `state` asks for is computed in the background.
    pub fn is_sorting(&self, view: &Arc<RankView>, state: &ViewState) -> bool {
        state.sort.is_some_and(|(col, dir)| {
            self.sorting == Some((view.id(), col, dir)) && !view.sort_cache.is_cached(col, dir)
        })
    }

    /// Copies the selected rows (or, with none selected, the current page) as TSV.
    pub fn copy(&mut self, ctx: &egui::Context, view: &RankView, state: &ViewState) {
        let rows: Vec<u32> = if state.selected.is_empty() {
            self.last
                .as_ref()
                .map(|(_, _, p)| p.rows.clone())
                .unwrap_or_default()
        } else {
            state.selected.iter().copied().collect()
        };
        let tsv = rows_tsv(&view.data, &rows);
        ctx.copy_text(tsv.clone());
        self.last_copy = Some(tsv);
    }
}

/// A cell for reading: grouped digits, `Unknown` for an empty name.
fn display_cell(view: &RankView, row: usize, col: Column) -> String {
    let d = &view.data;
    match col {
        Column::Name => d.display_name(d.operators.name[row]).to_string(),
        Column::Stream => d.strings.get(d.operators.stream[row]).to_string(),
        _ => match col.display_value(d, row) {
            None => String::new(),
            Some(v) => grouped(
                v,
                if col.unit() == crate::analysis::table::Unit::Ms {
                    3
                } else {
                    2
                },
            ),
        },
    }
}

/// The filter bar, the table and its pager.
pub fn details_ui(
    ui: &mut egui::Ui,
    view: &Arc<RankView>,
    state: &mut ViewState,
    cache: &mut TableCache,
) {
    ui.horizontal_wrapped(|ui| {
        ui.strong("Memory Allocation/Release Details");
        ui.separator();
        let label = ui.label("Name");
        let edit = egui::TextEdit::singleline(&mut state.name_filter)
            .desired_width(140.0)
            .hint_text("search");
        if ui.add(edit).labelled_by(label.id).changed() {
            state.page = 0;
        }
        for (label, text) in [
            ("Min Size(KB)", &mut state.min_size_text),
            ("Max Size(KB)", &mut state.max_size_text),
        ] {
            let label = ui.label(label);
            let bad = parse_bound(text).is_err();
            let mut edit = egui::TextEdit::singleline(text).desired_width(80.0);
            if bad {
                edit = edit.text_color(ui.visuals().error_fg_color);
            }
            if ui.add(edit).labelled_by(label.id).changed() {
                state.page = 0;
            }
        }
        if ui
            .checkbox(
                &mut state.within,
                "Only allocated or released within the selection",
            )
            .changed()
        {
            state.page = 0;
        }
    });
    let mut moving = false;
    let ctx = ui.ctx().clone();
    let page = cache.page(view, state, &mut moving, move || ctx.request_repaint());
    let sorting = cache.is_sorting(view, state);
    if moving {
        ui.ctx().request_repaint(); // query once the view holds still
    }
    ui.horizontal_wrapped(|ui| {
        ui.label(format!("{} rows", grouped(page.total as f64, 0)));
        if sorting {
            ui.spinner();
            ui.weak("sorting…");
        }
        if state.view_ms.is_some() {
            ui.weak("(in the zoomed range)");
        }
        if ui
            .button("Copy")
            .on_hover_text("Selected rows, or this page, as TSV for Excel (Ctrl+C)")
            .clicked()
        {
            cache.copy(ui.ctx(), view, state);
        }
        if ui
            .button("Export CSV…")
            .on_hover_text("Every matching row, to a file")
            .clicked()
        {
            export_csv(view.clone(), query_for(state), cache, ui.ctx().clone());
        }
        if !state.selected.is_empty()
            && ui
                .button(format!("Clear selection ({})", state.selected.len()))
                .clicked()
        {
            state.selected.clear();
        }
        if let Some(rx) = &cache.export_done
            && let Ok(status) = rx.try_recv()
        {
            cache.export_status = Some(status);
            cache.export_done = None;
        }
        if let Some(s) = &cache.export_status {
            ui.weak(s.as_str());
        }
    });
    pager_ui(ui, state, page.total);
    state.hovered_row = None;
    let text_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::horizontal().show(ui, |ui| table_ui(ui, view, state, &page, text_h));
}

fn table_ui(
    ui: &mut egui::Ui,
    view: &RankView,
    state: &mut ViewState,
    page: &TablePage,
    text_h: f32,
) {
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .resizable(true)
        .sense(egui::Sense::click())
        .cell_layout(egui::Layout::left_to_right(egui::Align::Center));
    table = table.column(TableColumn::initial(220.0).at_least(80.0).clip(true));
    for _ in 1..Column::ALL.len() {
        table = table.column(TableColumn::auto().at_least(70.0));
    }
    table
        .header(text_h + 4.0, |mut header| {
            for col in Column::ALL {
                header.col(|ui| {
                    let dir = state.sort.filter(|(c, _)| *c == col).map(|(_, d)| d);
                    if sort_header(ui, col.header(), dir, "file order") {
                        state.cycle_sort(col);
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
                        if col.unit() != crate::analysis::table::Unit::Text {
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
                    state.hovered_row = Some(r);
                }
                if resp.clicked() && !state.selected.remove(&r) {
                    state.selected.insert(r);
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

/// Rows per page, first / previous / next / last and jump to page, for `total` rows.
pub fn pager_ui(ui: &mut egui::Ui, state: &mut ViewState, total: usize) {
    let pages = total.div_ceil(state.page_size.max(1)).max(1);
    ui.horizontal(|ui| {
        egui::ComboBox::from_label("rows per page")
            .selected_text(state.page_size.to_string())
            .show_ui(ui, |ui| {
                for n in PAGE_SIZES {
                    if ui
                        .selectable_value(&mut state.page_size, n, n.to_string())
                        .clicked()
                    {
                        state.page = 0;
                    }
                }
            });
        if ui
            .add_enabled(state.page > 0, egui::Button::new("First"))
            .clicked()
        {
            state.page = 0;
        }
        if ui
            .add_enabled(state.page > 0, egui::Button::new("Previous"))
            .clicked()
        {
            state.page -= 1;
        }
        ui.label(format!(
            "Page {} of {}",
            grouped((state.page + 1) as f64, 0),
            grouped(pages as f64, 0)
        ));
        if ui
            .add_enabled(state.page + 1 < pages, egui::Button::new("Next"))
            .clicked()
        {
            state.page += 1;
        }
        if ui
            .add_enabled(state.page + 1 < pages, egui::Button::new("Last"))
            .clicked()
        {
            state.page = pages - 1;
        }
        let label = ui.label("Go to page");
        let r = ui
            .add(egui::TextEdit::singleline(&mut state.jump_text).desired_width(50.0))
            .labelled_by(label.id);
        if (r.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter)))
            || ui.button("Go").clicked()
        {
            if let Ok(n) = state.jump_text.trim().parse::<usize>() {
                state.page = n.clamp(1, pages) - 1;
            }
            state.jump_text.clear();
        }
    });
}

/// Asks for a file name (off the UI thread) and writes every matching row as CSV.
fn export_csv(view: Arc<RankView>, q: TableQuery, cache: &mut TableCache, ctx: egui::Context) {
    cache.export_status = Some("choose where to save the CSV…".into());
    let (tx, rx) = std::sync::mpsc::channel();
    let picker = cache.save_picker;
    let spawned = std::thread::Builder::new()
        .name("memsight-export".into())
        .spawn(move || {
            let picked = picker();
            let status = match picked {
                None => "export cancelled".to_string(),
                Some(path) => {
                    let all = TableQuery {
                        page: 0,
                        page_size: usize::MAX,
                        ..q
                    };
                    let page = query(&view.data, &view.sort_cache, &all);
                    let result = std::fs::File::create(&path).and_then(|f| {
                        let mut w = std::io::BufWriter::new(f);
                        write_rows_csv(&view.data, &page.rows, &mut w)?;
                        std::io::Write::flush(&mut w)
                    });
                    match result {
                        Ok(()) => format!(
                            "wrote {} rows to {}",
                            grouped(page.rows.len() as f64, 0),
                            path.display()
                        ),
                        Err(e) => format!("cannot write {}: {e}", path.display()),
                    }
                }
            };
            let _ = tx.send(status);
            ctx.request_repaint();
        });
    match spawned {
        Ok(_) => cache.export_done = Some(rx),
        Err(e) => cache.export_status = Some(format!("cannot start the export: {e}")),
    }
}
