//! The static-graph panes: Size over node index with the Total Size line (box zoom selects node
//! indices), and the graph's ops within the selection.

use egui::PointerButton;
use egui_extras::{Column as TableColumn, TableBuilder};
use egui_plot::{HLine, Plot, PlotBounds};

use super::PaneCx;
use crate::analysis::{END_OF_GRAPH, ViewId, static_ops_in_range};
use crate::model::MIB;
use crate::ui::command::Command;
use crate::ui::format::{bytes, grouped};
use crate::ui::plot::series_color;
use crate::ui::plot::step_line::StepLine;
use crate::ui::plot::zoom::{box_zoom, take_wheel, wheel_zoom};

/// A range of node indices.
type NodeRange = (f64, f64);

/// The static chart's own state between frames.
#[derive(Default)]
pub struct StaticChart {
    /// The (view, graph) and range the plot was last in step with.
    synced: Option<(ViewId, usize, Option<NodeRange>)>,
    /// A drag-box zoom in progress (start, reached), in node indices.
    drag: Option<(f64, f64)>,
}

impl StaticChart {
    /// Draws the chart of the state's graph and pushes the selection the user makes.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let (view, state) = (cx.view, cx.state);
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
        // A range set elsewhere (a graph switch, a reset, a test) is applied to the plot.
        let apply = self.synced != Some((view.id(), state.graph, state.static_range));
        let total = g.total;
        let full = (0.0, g.end_index as f64 + 1.0);
        let ymax = g.size.iter().copied().chain(total).max().unwrap_or(1) as f64 / MIB as f64 * 1.1;
        let press_origin = ui.input(|i| i.pointer.press_origin());
        let mut drag = self.drag;
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
                let double =
                    plot_ui.response().double_clicked() || plot_ui.response().triple_clicked();
                (
                    b.min()[0],
                    b.max()[0],
                    plot_ui.pointer_coordinate(),
                    zoom_to,
                    double,
                )
            });
        let (a, b, pointer, zoom_to, double) = resp.inner;
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

/// The state's graph's ops, filtered by the selected node-index range.
pub fn static_table_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
    let (view, state) = (cx.view, cx.state);
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
                let Some(i) = rows.get(row.index()).map(|&i| i as usize) else {
                    return;
                };
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
