//! The smaller panels: Live at cursor, the component peak table, the static-graph view and the
//! load warnings.

use egui::PointerButton;
use egui_extras::{Column as TableColumn, TableBuilder};
use egui_plot::{HLine, Plot, PlotBounds};

use super::chart::series_color;
use super::format::{bytes, grouped, ms};
use super::state::ViewState;
use super::step_line::StepLine;
use super::zoom::{box_zoom, take_wheel, wheel_zoom};
use crate::analysis::{
    ComponentColumn, END_OF_GRAPH, RankView, component_order, live_at, static_ops_in_range,
};
use crate::model::{MIB, NULL, ns_to_ms};

/// How many blocks and operators the Live panel lists.
const LIVE_TOP: usize = 25;

/// "What is alive at the cursor": the largest blocks and the totals per operator.
pub fn live_ui(ui: &mut egui::Ui, view: &RankView, state: &mut ViewState) {
    let Some(t_ms) = state.cursor_ms else { return };
    let data = &view.data;
    let live = live_at(data, view.live_index(), (t_ms * 1e6) as i64);
    ui.horizontal(|ui| {
        ui.heading("Live at cursor");
        if ui.button("Close").clicked() {
            state.cursor_ms = None;
        }
    });
    ui.label(format!(
        "{}: {} blocks, {}",
        ms(t_ms),
        grouped(live.rows.len() as f64, 0),
        bytes(live.total)
    ));
    ui.separator();
    let name = |id: u32| data.display_name(id);
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.strong("By operator");
        egui::Grid::new("live_by_name")
            .striped(true)
            .show(ui, |ui| {
                ui.label("Operator");
                ui.label("Total");
                ui.label("Blocks");
                ui.end_row();
                for &(id, b, n) in live.by_name.iter().take(LIVE_TOP) {
                    ui.label(name(id));
                    ui.label(bytes(b));
                    ui.label(grouped(n as f64, 0));
                    ui.end_row();
                }
            });
        ui.add_space(8.0);
        ui.strong("Largest blocks");
        egui::Grid::new("live_largest")
            .striped(true)
            .show(ui, |ui| {
                ui.label("Operator");
                ui.label("Size");
                ui.label("Allocated at");
                ui.end_row();
                for &r in live.rows.iter().take(LIVE_TOP) {
                    let r = r as usize;
                    ui.label(name(data.operators.name[r]));
                    ui.label(bytes(data.operators.size[r]));
                    let a = data.operators.alloc_time[r];
                    ui.label(if a == NULL {
                        "before capture".into()
                    } else {
                        ms(ns_to_ms(data.rel_ns(a)))
                    });
                    ui.end_row();
                }
            });
    });
}

/// Component mode: components whose peak reserved is ≥ 100 MB, with the first peak time;
/// sortable by any column and paginated like the details table (as in Insight).
pub fn component_table_ui(ui: &mut egui::Ui, view: &RankView, state: &mut ViewState) {
    let rows = view.component_peaks();
    ui.horizontal(|ui| {
        ui.strong("Component peak memory (npu_module_mem, components ≥ 100 MB)");
        ui.label(format!("{} rows", grouped(rows.len() as f64, 0)));
    });
    if rows.is_empty() {
        ui.label("No component reaches 100 MB (or the rank has no npu_module_mem).");
        return;
    }
    let order = component_order(rows, state.component_sort);
    let pages = rows.len().div_ceil(state.page_size.max(1)).max(1);
    state.page = state.page.min(pages - 1);
    super::table::pager_ui(ui, state, rows.len());
    let shown: Vec<usize> = order
        .into_iter()
        .skip(state.page * state.page_size)
        .take(state.page_size)
        .collect();
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    TableBuilder::new(ui)
        .striped(true)
        .column(TableColumn::initial(200.0))
        .column(TableColumn::auto())
        .column(TableColumn::auto())
        .header(h, |mut hr| {
            for col in ComponentColumn::ALL {
                hr.col(|ui| {
                    let dir = state
                        .component_sort
                        .filter(|(c, _)| *c == col)
                        .map(|(_, d)| d);
                    if super::table::sort_header(ui, col.header(), dir, "largest peak first") {
                        state.cycle_component_sort(col);
                    }
                });
            }
        })
        .body(|body| {
            body.rows(h, shown.len(), |mut row| {
                let p = &rows[shown[row.index()]];
                row.col(|ui| {
                    ui.label(p.component.as_str());
                });
                row.col(|ui| {
                    ui.label(grouped(p.peak as f64 / MIB as f64, 2));
                });
                row.col(|ui| {
                    ui.label(grouped(ns_to_ms(p.time), 3));
                });
            });
        });
}

/// The static graph: Size over node index and the Total Size line; box-zoom selects node indices.
pub fn static_chart_ui(
    ui: &mut egui::Ui,
    view: &RankView,
    state: &mut ViewState,
    chart: &mut StaticChart,
) {
    let graphs = view.static_graphs();
    let Some(g) = graphs.get(state.graph) else {
        ui.label("This rank has no static graph.");
        return;
    };
    let pts: Vec<[f64; 2]> = g
        .node_index
        .iter()
        .zip(&g.size)
        .map(|(&x, &v)| [x as f64, v as f64 / MIB as f64])
        .collect();
    let reset = std::mem::take(&mut state.reset_zoom);
    if reset {
        state.static_range = None;
    }
    // A range set from outside (a graph switch, a reset, a test) is applied to the plot.
    let apply = chart.shown != Some(state.static_range);
    let total = g.total;
    let full = (0.0, g.end_index as f64 + 1.0);
    let ymax = g.size.iter().copied().chain(total).max().unwrap_or(1) as f64 / MIB as f64 * 1.1;
    let press_origin = ui.input(|i| i.pointer.press_origin());
    let mut drag = chart.drag;
    let resp = Plot::new("memsight_static")
        .legend(egui_plot::Legend::default())
        .x_axis_label("Node Index")
        .y_axis_label("Memory Usage (MB)")
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
            let double = plot_ui.response().double_clicked() || plot_ui.response().triple_clicked();
            (
                b.min()[0],
                b.max()[0],
                plot_ui.pointer_coordinate(),
                zoom_to,
                double,
            )
        });
    let (a, b, pointer, zoom_to, double) = resp.inner;
    chart.drag = if ui.input(|i| i.pointer.any_down()) {
        drag
    } else {
        None
    };
    let near = |x: f64, y: f64| (x - y).abs() < 1e-9;
    let new = if near(a, full.0) && near(b, full.1) {
        None
    } else {
        Some((a, b))
    };
    if !apply && new != state.static_range {
        state.static_range = new;
        state.page = 0;
    }
    chart.shown = Some(state.static_range);
    let dy = if resp.response.contains_pointer() {
        take_wheel(ui)
    } else {
        0.0
    };
    let requested = if double {
        Some(None)
    } else if let Some(r) = zoom_to.filter(|(a, b)| b - a > 0.5) {
        Some(Some(r))
    } else {
        pointer
            .filter(|_| dy != 0.0)
            .map(|p| wheel_zoom((a, b), p.x, f64::from(dy), full))
    };
    if let Some(r) = requested
        && r != state.static_range
    {
        state.static_range = r;
        state.page = 0;
    }
}

/// The static chart's state between frames.
#[derive(Default)]
pub struct StaticChart {
    /// The range applied to the plot last frame.
    shown: Option<Option<(f64, f64)>>,
    /// A drag-box zoom in progress (start, reached), in node indices.
    drag: Option<(f64, f64)>,
}

/// The static graph's ops, filtered by the zoomed node-index range.
pub fn static_table_ui(ui: &mut egui::Ui, view: &RankView, state: &mut ViewState) {
    let graphs = view.static_graphs();
    let Some(g) = graphs.get(state.graph) else {
        return;
    };
    let data = &view.data;
    let rows = match state.static_range {
        Some((a, b)) => static_ops_in_range(data, g, a.ceil() as i64, b.floor() as i64),
        None => g.ops.clone(),
    };
    ui.horizontal(|ui| {
        ui.strong(format!("Graph {} ops", g.graph_id));
        ui.label(format!("{} rows", grouped(rows.len() as f64, 0)));
        if let Some(t) = g.total {
            ui.label(format!("Total Size {}", bytes(t)));
        }
    });
    let st = &data.static_ops;
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    TableBuilder::new(ui)
        .striped(true)
        .column(TableColumn::auto())
        .column(TableColumn::initial(360.0).clip(true))
        .column(TableColumn::auto())
        .column(TableColumn::auto())
        .column(TableColumn::auto())
        .header(h, |mut hr| {
            for t in [
                "Device ID",
                "Name",
                "Node Index Start",
                "Node Index End",
                "Size(MB)",
            ] {
                hr.col(|ui| {
                    ui.strong(t);
                });
            }
        })
        .body(|body| {
            body.rows(h, rows.len(), |mut row| {
                let i = rows[row.index()] as usize;
                let end = st.node_end[i];
                let cells = [
                    data.strings.get(st.device[i]).to_string(),
                    data.strings.get(st.op_name[i]).to_string(),
                    st.node_start[i].to_string(),
                    if end == END_OF_GRAPH {
                        "end of graph".into()
                    } else {
                        end.to_string()
                    },
                    grouped(st.size[i] as f64 / MIB as f64, 2),
                ];
                for c in cells {
                    row.col(|ui| {
                        ui.label(c);
                    });
                }
            });
        });
}

/// Load warnings and the skipped rows of every file, verbatim, after what discovery noted about
/// the whole profile (files skipped as special files, unusable DBs).
pub fn warnings_window(
    ctx: &egui::Context,
    view: &RankView,
    profile_notes: &[String],
    state: &mut ViewState,
) {
    let mut open = state.show_warnings;
    egui::Window::new("Load warnings")
        .open(&mut open)
        .default_size([700.0, 400.0])
        .show(ctx, |ui| {
            egui::ScrollArea::vertical().show(ui, |ui| {
                for w in profile_notes.iter().chain(&view.data.report.warnings) {
                    ui.label(format!("• {w}"));
                }
                for f in view
                    .data
                    .report
                    .files
                    .iter()
                    .filter(|f| f.skipped.count > 0)
                {
                    ui.separator();
                    ui.strong(format!(
                        "{}: {} rows skipped",
                        f.path.display(),
                        f.skipped.count
                    ));
                    for s in &f.skipped.samples {
                        ui.monospace(format!("line {}: {} — {}", s.line, s.reason, s.text));
                    }
                }
            });
        });
    state.show_warnings = open;
}
