//! The static-graph panes: Size over node index with the Total Size line (box zoom selects node
//! indices), and the graph's ops within the selection.

use egui::PointerButton;
use egui_extras::{Column as TableColumn, TableBuilder};
use egui_plot::{HLine, Plot, PlotBounds};

use super::PaneCx;
use super::details_table::sort_header;
use super::details_table::{parse_bound, size_bounds_ui};
use super::pager::Pager;
use crate::analysis::{
    END_OF_GRAPH, StaticColumn, StaticQuery, ViewId, static_rows, static_rows_tsv,
};
use crate::model::MIB;
use crate::ui::command::Command;
use crate::ui::format::{bytes, grouped};
use crate::ui::plot::series_color;
use crate::ui::plot::step_line::StepLine;
use crate::ui::plot::zoom::{box_zoom, take_wheel, wheel_zoom};
use crate::ui::state::{PagedTable, TableId};

/// The static op table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("static_ops");

/// The static graph's op table, as a paged table: its rows depend on the graph, the chart's
/// range, the filter and the sort.
pub const TABLE: TableId = TableId(&PAGED);
static PAGED: PagedTable = PagedTable {
    name: "static_ops",
    query: |s| {
        format!(
            "{:?} {} {:?} {:?} {:?}",
            (s.rank, s.source, s.page_size),
            s.graph,
            s.static_range.map(|(a, b)| (a.to_bits(), b.to_bits())),
            s.choice::<StaticFilter>(),
            s.sorts.key(SORT),
        )
    },
};

/// The static op table's filters: its own choices ([`crate::ui::choices`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StaticFilter {
    /// Op name text (case-insensitive, any part).
    pub name: String,
    /// Min Size(KB), as typed.
    pub min_text: String,
    /// Max Size(KB), as typed.
    pub max_text: String,
}

impl crate::ui::choices::Choice for StaticFilter {
    const ID: &'static str = "static_ops";
}

/// A range of node indices.
type NodeRange = (f64, f64);

/// The static chart's own state between frames.
#[derive(Default)]
pub struct StaticChart {
    /// The (view, graph) and range the plot was last in step with.
    synced: Option<(ViewId, usize, Option<NodeRange>)>,
    /// A drag-box zoom in progress (start, reached), in node indices.
    drag: Option<(f64, f64)>,
    /// The plot's bounds last frame: (x range, y range).
    shown: Option<((f64, f64), (f64, f64))>,
}

impl StaticChart {
    /// The plot's bounds last frame: ((x min, x max), (y min, y max)).
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        self.shown
    }

    /// Draws the chart of the state's graph and pushes the selection the user makes.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let (view, state, t) = (cx.view, cx.state, cx.t);
        let graphs = view.static_graphs();
        let Some(g) = graphs.get(state.graph) else {
            ui.label(t.no_static_graph);
            return;
        };
        let pts: Vec<[f64; 2]> = g
            .node_index
            .iter()
            .zip(&g.size)
            .map(|(&x, &v)| [x as f64, v as f64 / MIB as f64])
            .collect();
        // A range set elsewhere (a graph switch, a reset, a test) is applied to the plot.
        let apply = self.synced != Some((view.id(), state.graph, state.static_range));
        let total = g.total;
        let full = (0.0, g.end_index as f64 + 1.0);
        let ymax = g.size.iter().copied().chain(total).max().unwrap_or(1) as f64 / MIB as f64 * 1.1;
        let press_origin = ui.input(|i| i.pointer.press_origin());
        let mut drag = self.drag;
        let resp = Plot::new("memsight_static")
            .legend(egui_plot::Legend::default())
            .x_axis_label(t.node_index)
            .y_axis_label(t.memory_usage_mb)
            .allow_zoom([true, false])
            .allow_drag([true, false])
            .allow_scroll([true, false])
            .allow_boxed_zoom(false)
            .allow_double_click_reset(false)
            .pan_pointer_button(PointerButton::Secondary)
            .show_background(false)
            .show(ui, |plot_ui| {
                if apply {
                    let (a, b) = state.static_range.unwrap_or(full);
                    plot_ui.set_plot_bounds(PlotBounds::from_min_max([a, 0.0], [b, ymax.max(1.0)]));
                }
                plot_ui.add(StepLine::new("Size", &pts, series_color(0)));
                if let Some(t) = total {
                    plot_ui.hline(HLine::new("Total Size", t as f64 / MIB as f64));
                }
                let zoom_to = box_zoom(plot_ui, press_origin, &mut drag);
                let b = plot_ui.plot_bounds();
                let y = (b.min()[1], b.max()[1]);
                let double =
                    plot_ui.response().double_clicked() || plot_ui.response().triple_clicked();
                (
                    b.min()[0],
                    b.max()[0],
                    plot_ui.pointer_coordinate(),
                    zoom_to,
                    double,
                    y,
                )
            });
        let (a, b, pointer, zoom_to, double, y) = resp.inner;
        self.shown = Some(((a, b), y));
        if let Some(p) = pointer {
            // The Size in effect at the node index under the pointer.
            let i = g.node_index.partition_point(|&x| (x as f64) <= p.x);
            let size = i.checked_sub(1).map(|k| g.size[k]);
            resp.response.clone().on_hover_ui_at_pointer(|ui| {
                crate::ui::tooltip::unwrapped(ui);
                ui.label(format!("{} {}", t.node_index, p.x.max(0.0).floor()));
                if let Some(v) = size {
                    ui.label(format!("{} {}", t.size, bytes(v)));
                }
                if let Some(total) = g.total {
                    ui.label((t.total_size)(&bytes(total)));
                }
            });
        }
        self.drag = if ui.input(|i| i.pointer.any_down()) {
            drag
        } else {
            None
        };
        let near = |x: f64, y: f64| (x - y).abs() < 1e-9;
        let shown = if near(a, full.0) && near(b, full.1) {
            None
        } else {
            Some((a, b))
        };
        let mut requested = None;
        if !apply && shown != state.static_range {
            requested = Some(shown); // the plot panned or zoomed itself
        }
        self.synced = Some((
            view.id(),
            state.graph,
            if apply { state.static_range } else { shown },
        ));
        let dy = if resp.response.contains_pointer() {
            take_wheel(ui)
        } else {
            0.0
        };
        if double {
            requested = Some(None);
        } else if let Some(r) = zoom_to.filter(|(a, b)| b - a > 0.5) {
            requested = Some(Some(r));
        } else if let Some(p) = pointer.filter(|_| dy != 0.0) {
            requested = Some(wheel_zoom((a, b), p.x, f64::from(dy), full));
        }
        if let Some(r) = requested
            && r != state.static_range
        {
            cx.out.push(Command::SetStaticRange(r));
        }
    }
}

/// What the static op table's rows depend on: the rank, the graph and the query (its size
/// bounds as bits, so the key compares exactly).
type RowsKey = (ViewId, usize, String);

/// The static op table's own state: its pager, its rows (recomputed only when what they depend
/// on changes), what Copy put on the clipboard.
#[derive(Default)]
pub struct StaticTable {
    pager: Pager,
    rows: Option<(RowsKey, Vec<u32>)>,
    /// The text most recently copied.
    pub last_copy: Option<String>,
    copy_status: Option<String>,
}

impl StaticTable {
    /// The state's graph's ops within the selected node-index range, filtered by name, sorted
    /// by a header click (ascending → descending → file order), paged, with Copy (this page)
    /// and Copy all as TSV.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let (view, state, t) = (cx.view, cx.state, cx.t);
        let graphs = view.static_graphs();
        let Some(g) = graphs.get(state.graph) else {
            return;
        };
        let data = &view.data;
        let range = state
            .static_range
            .map(|(a, b)| (a.ceil() as i64, b.floor() as i64));
        let filter = state.choice::<StaticFilter>();
        let q = StaticQuery {
            range,
            name: filter.name.clone(),
            min_kib: parse_bound(&filter.min_text).unwrap_or(None),
            max_kib: parse_bound(&filter.max_text).unwrap_or(None),
            sort: state.sorts.get(SORT),
        };
        let key: RowsKey = (view.id(), state.graph, format!("{q:?}"));
        if self.rows.as_ref().is_none_or(|(k, _)| *k != key) {
            let rows = static_rows(data, g, &q);
            self.rows = Some((key, rows));
        }
        // A copy: the pane's other state is written below (a graph has hundreds of ops).
        let rows: Vec<u32> = self
            .rows
            .as_ref()
            .map(|(_, r)| r.clone())
            .unwrap_or_default();
        let pages = rows.len().div_ceil(state.page_size.max(1)).max(1);
        let page = state.page(TABLE).min(pages - 1);
        let shown: Vec<u32> = rows
            .iter()
            .copied()
            .skip(page.saturating_mul(state.page_size))
            .take(state.page_size)
            .collect();
        ui.horizontal_wrapped(|ui| {
            ui.strong((t.graph_ops)(&g.graph_id));
            if let Some(total) = g.total {
                ui.label((t.total_size)(&bytes(total)));
            }
            ui.separator();
            let label = ui.label(t.name);
            let mut name = filter.name.clone();
            let edit = egui::TextEdit::singleline(&mut name)
                .desired_width(140.0)
                .hint_text(t.search_hint);
            if ui.add(edit).labelled_by(label.id).changed() {
                cx.out.push(Command::choose(move |f: &mut StaticFilter| {
                    f.name.clone_from(&name)
                }));
            }
            size_bounds_ui(
                ui,
                t,
                (&filter.min_text, &|text| {
                    Command::choose(move |f: &mut StaticFilter| f.min_text.clone_from(&text))
                }),
                (&filter.max_text, &|text| {
                    Command::choose(move |f: &mut StaticFilter| f.max_text.clone_from(&text))
                }),
                cx.out,
            );
            ui.label((t.rows)(&grouped(rows.len() as f64, 0)));
            let mut copy = None;
            if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
                copy = Some(&shown);
            }
            if ui
                .button(t.copy_all)
                .on_hover_text(t.copy_all_hover)
                .clicked()
            {
                copy = Some(&rows);
            }
            if let Some(rows) = copy {
                let tsv = static_rows_tsv(data, rows);
                ui.ctx().copy_text(tsv.clone());
                self.copy_status = Some((t.copied)(&grouped(rows.len() as f64, 0)));
                self.last_copy = Some(tsv);
            }
            if let Some(s) = &self.copy_status {
                ui.weak(s.as_str());
            }
        });
        self.pager.ui(ui, t, state, TABLE, rows.len(), cx.out);
        let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        let out = &mut *cx.out;
        TableBuilder::new(ui)
            .striped(true)
            .auto_shrink([false, false])
            .column(TableColumn::auto())
            .column(TableColumn::initial(360.0).clip(true))
            .column(TableColumn::auto())
            .column(TableColumn::auto())
            .column(TableColumn::auto())
            .header(h + 4.0, |mut hr| {
                for col in StaticColumn::ALL {
                    hr.col(|ui| {
                        let dir = state.sorts.dir_of(SORT, col);
                        if sort_header(ui, t, col.header(), dir, t.file_order) {
                            out.push(Command::sort(SORT, col));
                        }
                    });
                }
            })
            .body(|body| {
                body.rows(h, shown.len(), |mut row| {
                    let Some(i) = shown.get(row.index()).map(|&i| i as usize) else {
                        return;
                    };
                    for col in StaticColumn::ALL {
                        row.col(|ui| {
                            let text = match col {
                                StaticColumn::Size => {
                                    grouped(data.static_ops.size[i] as f64 / MIB as f64, 2)
                                }
                                StaticColumn::NodeEnd
                                    if data.static_ops.node_end[i] == END_OF_GRAPH =>
                                {
                                    t.end_of_graph.to_string()
                                }
                                _ => col.cell(data, i),
                            };
                            ui.add(egui::Label::new(text).selectable(false));
                        });
                    }
                });
            });
    }
}
