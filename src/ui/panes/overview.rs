//! The cluster overview pane: every rank's peaks as bars (outliers in red) with their spread,
//! and a sortable table of the per-rank summaries; a click on a rank opens it. Rows appear as the
//! background job summarises the ranks.

use egui_extras::{Column as TableColumn, TableBuilder};
use egui_plot::{Bar, BarChart, Plot};

use super::details_table::sort_header;
use super::sort_key::SortKey as Key;
use crate::analysis::{SortDir, device_spread, is_host_device};
use crate::export::summary::RankSummary;
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::overview::Overview;
use crate::ui::plot::rank_axis::{rank_axis, rank_grid};
use crate::ui::state::ViewState;

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

crate::ui::sorts::sort_columns! {
    OverviewColumn {
        Rank, Device, Host, PeakAllocated, PeakAllocatedAt, PeakReserved, PeakApp, Largest,
        Skipped, Warnings,
    }
}

/// The cluster overview table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("overview");

fn key(s: &RankSummary, col: OverviewColumn) -> Key {
    let num = Key::num;
    match col {
        OverviewColumn::Rank => Key::rank(&s.rank),
        OverviewColumn::Device => Key::text(s.device.as_ref()),
        OverviewColumn::Host => Key::text(s.host.as_ref()),
        OverviewColumn::PeakAllocated => num(s.peaks.operator_allocated.map(|p| p.mib)),
        OverviewColumn::PeakAllocatedAt => num(s.peaks.operator_allocated.map(|p| p.at_ms)),
        OverviewColumn::PeakReserved => num(s.peaks.operator_reserved.map(|p| p.mib)),
        OverviewColumn::PeakApp => num(s.peaks.app_reserved.map(|p| p.mib)),
        OverviewColumn::Largest => num(s.largest_allocation.as_ref().map(|l| l.size_kib)),
        OverviewColumn::Skipped => Key::Num(s.counts.skipped_rows as f64),
        OverviewColumn::Warnings => Key::Num(s.warnings.len() as f64),
    }
}

/// The text of a cell.
pub fn cell(s: &RankSummary, col: OverviewColumn) -> String {
    let mb = |v: Option<f64>| v.map_or("–".into(), |m| grouped(m, 2));
    match col {
        OverviewColumn::Rank => s.rank.clone(),
        OverviewColumn::Device => s.device.clone().unwrap_or_else(|| "–".into()),
        OverviewColumn::Host => s.host.clone().unwrap_or_else(|| "–".into()),
        OverviewColumn::PeakAllocated => mb(s.peaks.operator_allocated.map(|p| p.mib)),
        OverviewColumn::PeakAllocatedAt => s
            .peaks
            .operator_allocated
            .map_or("–".into(), |p| grouped(p.at_ms, 3)),
        OverviewColumn::PeakReserved => mb(s.peaks.operator_reserved.map(|p| p.mib)),
        OverviewColumn::PeakApp => mb(s.peaks.app_reserved.map(|p| p.mib)),
        OverviewColumn::Largest => s.largest_allocation.as_ref().map_or("–".into(), |l| {
            format!("{} ({} KB)", display(&l.name), grouped(l.size_kib, 1))
        }),
        OverviewColumn::Skipped => grouped(s.counts.skipped_rows as f64, 0),
        OverviewColumn::Warnings => grouped(s.warnings.len() as f64, 0),
    }
}

fn display(name: &str) -> &str {
    if name.is_empty() { "Unknown" } else { name }
}

/// Rows summarised so far (indices into the profile's ranks), in the state's order; rows with a
/// missing value go last.
pub fn overview_order(o: &Overview, sort: Option<(OverviewColumn, SortDir)>) -> Vec<usize> {
    let mut rows: Vec<usize> = (0..o.rows.len()).filter(|&i| o.rows[i].is_some()).collect();
    if let Some((col, dir)) = sort {
        rows.sort_by(|&a, &b| {
            let (Some(x), Some(y)) = (&o.rows[a], &o.rows[b]) else {
                return std::cmp::Ordering::Equal;
            };
            key(x, col).cmp_in(&key(y, col), dir)
        });
    }
    rows
}

/// The rank folders discovery found without memory data (the overview's rows leave them out).
pub fn ranks_without_data(notes: &[crate::model::Message]) -> Vec<&str> {
    notes
        .iter()
        .filter_map(|m| match m {
            crate::model::Message::RankWithoutMemoryData { path, .. } => Some(
                std::path::Path::new(path)
                    .file_name()
                    .and_then(|n| n.to_str())
                    .unwrap_or(path),
            ),
            _ => None,
        })
        .collect()
}

/// Draws the overview of `profile`'s ranks (its discovery notes name the rank folders without
/// memory data above the chart; a rank's link, hovered, names where it is read from). Returns
/// where each rank's bar was drawn (screen space).
pub fn overview_ui(
    ui: &mut egui::Ui,
    t: &'static Tr,
    o: &Overview,
    profile: &crate::ingest::Profile,
    state: &ViewState,
    out: &mut Vec<Command>,
) -> Vec<(usize, egui::Rect)> {
    let n = o.rows.len();
    ui.horizontal(|ui| {
        ui.heading((t.overview_title)(o.done(), n));
        if o.is_running() {
            ui.add(
                egui::ProgressBar::new(o.done() as f32 / n.max(1) as f32)
                    .desired_width(160.0)
                    .show_percentage(),
            );
            if ui.button(t.cancel).clicked() {
                out.push(Command::CancelOverview);
            }
        } else if o.done() < n
            && ui
                .button(t.retry)
                .on_hover_text(t.retry_overview_hover)
                .clicked()
        {
            out.push(Command::RetryOverview);
        }
    });
    let missing = ranks_without_data(&profile.notes);
    if !missing.is_empty() {
        ui.colored_label(
            ui.visuals().warn_fg_color,
            (t.overview_without_data)(missing.len(), &missing.join(", ")),
        );
    }
    let peaks: Vec<(usize, f64)> = (0..n)
        .filter_map(|i| {
            o.rows[i]
                .as_ref()?
                .peaks
                .operator_allocated
                .map(|p| (i, p.mib))
        })
        .collect();
    let rank_of = |i: usize| o.rows[i].as_ref().map_or(String::new(), |s| s.rank.clone());
    // Host-memory ranks (msMemScope's `cpu`) are drawn but are no peers of the NPU ranks.
    let host = |i: usize| {
        o.rows[i]
            .as_ref()
            .is_some_and(|s| is_host_device(s.device.as_deref()))
    };
    let stats = device_spread(&peaks, host);
    if let Some(s) = &stats {
        let mb = |v: f64| format!("{} MB", grouped(v, 2));
        ui.label((t.overview_spread)(
            &mb(s.max.1),
            &rank_of(s.max.0),
            &mb(s.min.1),
            &rank_of(s.min.0),
            &mb(s.mean),
            &mb(s.range),
        ));
        if s.outliers.is_empty() {
            ui.weak(t.overview_no_outliers);
        } else {
            let list: Vec<String> = s
                .outliers
                .iter()
                .map(|&i| format!("rank {}", rank_of(i)))
                .collect();
            ui.colored_label(
                ui.visuals().warn_fg_color,
                (t.overview_outliers)(&list.join(", ")),
            );
        }
    }
    let outliers = stats.map(|s| s.outliers).unwrap_or_default();
    let bars: Vec<Bar> = peaks
        .iter()
        .map(|&(i, mib)| {
            let color = if outliers.contains(&i) {
                crate::ui::palette::RANK_OUTLIER
            } else if host(i) {
                // Host memory: apart from the NPU ranks' spread.
                crate::ui::palette::SUMMARY_BEFORE
            } else {
                crate::ui::palette::RANK_NORMAL
            };
            Bar::new(i as f64, mib)
                .name(format!("rank {}", rank_of(i)))
                .fill(color)
                .width(0.7)
        })
        .collect();
    let chart_h = (ui.available_height() * 0.35).clamp(120.0, 320.0);
    let labels: Vec<String> = (0..n).map(rank_of).collect();
    let shown: Vec<usize> = peaks.iter().map(|p| p.0).collect();
    let (axis, label_points) = rank_axis(t.rank_axis_title, labels);
    let plot = Plot::new("overview_bars")
        .custom_x_axes(vec![axis])
        .x_grid_spacer(move |input| rank_grid(input, label_points))
        .height(chart_h)
        .y_axis_label(t.overview_axis)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .include_y(0.0)
        .show(ui, |p| {
            p.bar_chart(
                BarChart::new("peaks", bars).element_formatter(Box::new(|b, _| {
                    format!("{}: {} MB", b.name, grouped(b.value, 2))
                })),
            );
        });
    // A bar opens its rank, like the rank numbers in the table.
    let under = plot
        .response
        .hover_pos()
        .map(|pos| plot.transform.value_from_position(pos))
        .and_then(|v| bar_at(&shown, v.x));
    if let Some(i) = under {
        ui.ctx().set_cursor_icon(egui::CursorIcon::PointingHand);
        if plot.response.clicked() {
            out.push(Command::SelectRank(i));
            out.push(Command::ShowOverview(false));
        }
    }
    let bar_rects = peaks
        .iter()
        .map(|&(i, mib)| {
            let a = plot
                .transform
                .position_from_point(&egui_plot::PlotPoint::new(i as f64 - 0.35, 0.0));
            let b = plot
                .transform
                .position_from_point(&egui_plot::PlotPoint::new(i as f64 + 0.35, mib));
            (i, egui::Rect::from_two_pos(a, b))
        })
        .collect();
    ui.separator();
    table_ui(ui, t, o, &profile.ranks, state, out);
    bar_rects
}

/// The rank whose bar (0.7 wide, centred on its index) is at `x`, among the ranks drawn.
fn bar_at(shown: &[usize], x: f64) -> Option<usize> {
    let i = x.round();
    ((x - i).abs() <= 0.35 && i >= 0.0)
        .then_some(i as usize)
        .filter(|i| shown.contains(i))
}

fn table_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    o: &Overview,
    ranks: &[crate::model::RankInfo],
    state: &ViewState,
    out: &mut Vec<Command>,
) {
    let order = overview_order(o, state.sorts.get(SORT));
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    egui::ScrollArea::horizontal()
        .id_salt("overview_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let mut table = TableBuilder::new(ui)
                .striped(true)
                .id_salt("overview_table");
            for col in OverviewColumn::ALL {
                table = table.column(match col {
                    OverviewColumn::Largest => TableColumn::initial(260.0).clip(true),
                    _ => TableColumn::auto().at_least(50.0),
                });
            }
            table
                .header(h, |mut hr| {
                    for (k, col) in OverviewColumn::ALL.into_iter().enumerate() {
                        hr.col(|ui| {
                            let dir = state.sorts.dir_of(SORT, col);
                            if sort_header(ui, t, t.overview_headers[k], dir, t.overview_headers[0])
                            {
                                out.push(Command::sort(SORT, col));
                            }
                        });
                    }
                })
                .body(|body| {
                    body.rows(h, order.len(), |mut row| {
                        let i = order[row.index()];
                        let Some(s) = &o.rows[i] else {
                            return;
                        };
                        for col in OverviewColumn::ALL {
                            row.col(|ui| {
                                let text = cell(s, col);
                                if col == OverviewColumn::Rank {
                                    // One line: an msMemScope rank ("0 pid 2523738") widens
                                    // its column instead of wrapping over three lines.
                                    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                                    // Where it is read from, under "Open this rank"
                                    // (written only while hovered).
                                    let link = ui.link(text).on_hover_ui(|ui| {
                                        ui.label(match ranks.get(i) {
                                            Some(r) => format!(
                                                "{}\n{}",
                                                t.open_rank_hover,
                                                r.read_from().display()
                                            ),
                                            None => t.open_rank_hover.to_string(),
                                        });
                                    });
                                    if link.clicked() {
                                        out.push(Command::SelectRank(i));
                                        out.push(Command::ShowOverview(false));
                                    }
                                } else {
                                    // One line a row: a long host or operator name widens its
                                    // column (or is cut, for Largest) instead of wrapping out of
                                    // the row.
                                    let wrap = if col == OverviewColumn::Largest {
                                        egui::TextWrapMode::Truncate
                                    } else {
                                        egui::TextWrapMode::Extend
                                    };
                                    let label = ui.add(egui::Label::new(text).wrap_mode(wrap));
                                    if col == OverviewColumn::Warnings && !s.warnings.is_empty() {
                                        // Translated only while hovered.
                                        label.on_hover_ui(|ui| {
                                            for w in &s.warnings {
                                                ui.label(w.render(t.lang));
                                            }
                                        });
                                    }
                                }
                            });
                        }
                    });
                });
        });
}
