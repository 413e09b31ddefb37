//! A cluster summary's overview (a `.db` written by `memsight summarize`): every rank's peak as a
//! bar (outliers in red) with the spread, each step's peak across the ranks (the worst step), the
//! ranks whose memory grows step after step, the downsampled curve of the rank under the pointer
//! (or pinned), and a sortable table filtered by host whose folder links open the rank. With a
//! second summary it compares the two rank by rank.

use egui_extras::{Column as TableColumn, TableBuilder};
use egui_plot::{Bar, BarChart, FilledArea, Legend, Line, Plot, PlotPoints, Points};

use super::details_table::sort_header;
use super::sort_key::SortKey as Key;
use crate::analysis::SortDir;
use crate::model::cluster::ClusterRank;
use crate::ui::command::{Command, PickKind};
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::palette;
use crate::ui::plot::rank_axis::{rank_axis, rank_grid};
use crate::ui::sorts::SortTable;
use crate::ui::state::SummaryColumn;

/// What the user chose in a cluster summary's overview: the document's own choices
/// ([`crate::ui::choices`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SummaryChoice {
    /// Only ranks whose host contains this text (case-insensitive; empty: all).
    pub host_filter: String,
    /// The filter matches whole host names (case-insensitive) rather than any part of one.
    pub host_exact: bool,
    /// The rank whose curve is pinned (index into the summary's ranks).
    pub selected: Option<usize>,
    /// The rank whose folder was asked for but is not on this machine.
    pub unreachable: Option<usize>,
}

impl crate::ui::choices::Choice for SummaryChoice {
    const ID: &'static str = "summary";
}

/// The summary table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: SortTable = SortTable("summary");

/// The file Compare with summary… asks for: a summary (`.db` of `memsight summarize`), compared
/// with the open one rank by rank.
pub static PICK: crate::ui::command::FilePick = crate::ui::command::FilePick {
    id: "summary_compare",
    title: crate::ui::i18n::Text {
        en: "Compare with summary…",
        zh: "与另一汇总对比…",
    },
    filter: ("memsight summary", &["db"]),
    lists: |p| p.extension().is_some_and(|e| e.eq_ignore_ascii_case("db")),
    then: |path| Command::CompareWith(crate::ui::baseline::BaselineSource { path, rank: 0 }),
};
use crate::ui::summary::{OpenSummary, SummaryView};

/// At most this many ranks are named in a line of text (outliers, leak suspects).
const NAMED: usize = 8;

fn mb(v: Option<f64>) -> String {
    v.map_or("–".into(), |m| grouped(m, 2))
}

/// The baseline's peak for rank `i` of the summary on screen, when compared.
fn before_peak(view: &SummaryView, i: usize) -> Option<f64> {
    let b = view.baseline.as_ref()?;
    let j = (*b.matches.get(i)?)?;
    b.open.as_ref()?.summary.ranks.get(j)?.peak_allocated_mib
}

/// The text of a cell of rank `i`.
pub fn summary_cell(view: &SummaryView, i: usize, col: SummaryColumn) -> String {
    let Some(open) = &view.open else {
        return String::new();
    };
    let Some(r) = open.summary.ranks.get(i) else {
        return String::new();
    };
    let id = &r.identity;
    match col {
        SummaryColumn::Rank => id.rank.clone(),
        SummaryColumn::Host => id.host.clone().unwrap_or_else(|| "–".into()),
        SummaryColumn::Device => id.device.clone().unwrap_or_else(|| "–".into()),
        SummaryColumn::PeakAllocated => mb(r.peak_allocated_mib),
        SummaryColumn::PeakAt => r.peak_allocated_at_ms.map_or("–".into(), |v| grouped(v, 3)),
        SummaryColumn::PeakReserved => mb(r.peak_reserved_mib),
        SummaryColumn::Steps => grouped(r.steps.len() as f64, 0),
        SummaryColumn::Growth => open
            .growth
            .get(i)
            .copied()
            .flatten()
            .map_or("–".into(), |g| {
                let mark = if g.is_leak_suspect() { " ⚠" } else { "" };
                format!("{}{mark}", signed(g.mib))
            }),
        SummaryColumn::TopOperator => r.top_operator.as_ref().map_or("–".into(), |a| {
            format!("{} ({} MB)", a.name, grouped(a.mib, 2))
        }),
        SummaryColumn::Before => mb(before_peak(view, i)),
        SummaryColumn::Delta => match (r.peak_allocated_mib, before_peak(view, i)) {
            (Some(now), Some(before)) => signed(now - before),
            _ => "–".into(),
        },
        SummaryColumn::Folder => match &r.error {
            Some(e) => format!("✖ {e}"),
            None => id.path.clone(),
        },
    }
}

fn signed(v: f64) -> String {
    if v > 0.0 {
        format!("+{}", grouped(v, 2))
    } else {
        grouped(v, 2)
    }
}

fn key(view: &SummaryView, open: &OpenSummary, i: usize, col: SummaryColumn) -> Key {
    let r = &open.summary.ranks[i];
    let (num, text) = (Key::num, Key::text);
    match col {
        SummaryColumn::Rank => Key::rank(&r.identity.rank),
        SummaryColumn::Host => text(r.identity.host.as_ref()),
        SummaryColumn::Device => text(r.identity.device.as_ref()),
        SummaryColumn::PeakAllocated => num(r.peak_allocated_mib),
        SummaryColumn::PeakAt => num(r.peak_allocated_at_ms),
        SummaryColumn::PeakReserved => num(r.peak_reserved_mib),
        SummaryColumn::Steps => Key::Num(r.steps.len() as f64),
        SummaryColumn::Growth => num(open.growth.get(i).copied().flatten().map(|g| g.mib)),
        SummaryColumn::TopOperator => num(r.top_operator.as_ref().map(|a| a.mib)),
        SummaryColumn::Before => num(before_peak(view, i)),
        SummaryColumn::Delta => num(r
            .peak_allocated_mib
            .zip(before_peak(view, i))
            .map(|(a, b)| a - b)),
        SummaryColumn::Folder => {
            Key::Text(r.error.clone().unwrap_or_else(|| r.identity.path.clone()))
        }
    }
}

/// Whether rank `r`'s host passes the filter: any part of the name, or with `exact` the whole
/// name (so "node7" leaves out node70–node79); case-insensitive; an empty filter passes all.
fn host_matches(r: &ClusterRank, filter: &str, exact: bool) -> bool {
    if filter.is_empty() {
        return true;
    }
    let filter = filter.to_lowercase();
    r.identity.host.as_deref().is_some_and(|h| {
        let h = h.to_lowercase();
        if exact {
            h == filter
        } else {
            h.contains(&filter)
        }
    })
}

/// The ranks the table shows (indices into the summary's ranks): those whose host matches the
/// filter, in the chosen order; missing values go last whatever the direction.
pub fn summary_order(
    view: &SummaryView,
    choice: &SummaryChoice,
    sort: Option<(SummaryColumn, SortDir)>,
) -> Vec<usize> {
    let Some(open) = &view.open else {
        return Vec::new();
    };
    let mut rows: Vec<usize> = (0..open.summary.ranks.len())
        .filter(|&i| {
            host_matches(
                &open.summary.ranks[i],
                choice.host_filter.trim(),
                choice.host_exact,
            )
        })
        .collect();
    let Some((col, dir)) = sort else {
        // The file's order is by identity, where rank "10" comes before "9": by host in natural
        // order (node2 before node10), then by rank number.
        let keys: Vec<(Key, Key)> = (0..open.summary.ranks.len())
            .map(|i| {
                let host = key(view, open, i, SummaryColumn::Host);
                (host, key(view, open, i, SummaryColumn::Rank))
            })
            .collect();
        rows.sort_by(|&a, &b| {
            let ((h, r), (g, s)) = (&keys[a], &keys[b]);
            h.cmp_in(g, SortDir::Asc)
                .then_with(|| r.cmp_in(s, SortDir::Asc))
        });
        return rows;
    };
    let keys: Vec<Key> = (0..open.summary.ranks.len())
        .map(|i| key(view, open, i, col))
        .collect();
    rows.sort_by(|&a, &b| keys[a].cmp_in(&keys[b], dir));
    rows
}

/// The table's columns: with the comparison's when a baseline is read.
pub fn summary_columns(view: &SummaryView) -> &'static [SummaryColumn] {
    if view.baseline.as_ref().is_some_and(|b| b.open.is_some()) {
        &SummaryColumn::COMPARED
    } else {
        &SummaryColumn::PLAIN
    }
}

/// A number as a copy writes it: plain and exact (no thousands separators, no sign for
/// positive values, `.` as the decimal point), empty when missing.
fn plain(v: Option<f64>) -> String {
    v.map_or_else(String::new, |v| format!("{v}"))
}

/// The cells of rank `i` as Copy writes them: the table's columns with plain numbers, and the
/// top operator split into its name and its MB.
fn copy_cells(view: &SummaryView, i: usize) -> Vec<String> {
    let Some(open) = &view.open else {
        return Vec::new();
    };
    let Some(r) = open.summary.ranks.get(i) else {
        return Vec::new();
    };
    let mut cells = Vec::new();
    for &col in summary_columns(view) {
        match col {
            SummaryColumn::PeakAllocated => cells.push(plain(r.peak_allocated_mib)),
            SummaryColumn::PeakAt => cells.push(plain(r.peak_allocated_at_ms)),
            SummaryColumn::PeakReserved => cells.push(plain(r.peak_reserved_mib)),
            SummaryColumn::Growth => {
                cells.push(plain(open.growth.get(i).copied().flatten().map(|g| g.mib)));
            }
            SummaryColumn::TopOperator => {
                let top = r.top_operator.as_ref();
                cells.push(top.map_or_else(String::new, |a| a.name.clone()));
                cells.push(plain(top.map(|a| a.mib)));
            }
            SummaryColumn::Before => cells.push(plain(before_peak(view, i))),
            SummaryColumn::Delta => cells.push(plain(
                r.peak_allocated_mib
                    .zip(before_peak(view, i))
                    .map(|(a, b)| a - b),
            )),
            SummaryColumn::Folder => cells.push(match &r.error {
                Some(e) => e.clone(),
                None => r.identity.path.clone(),
            }),
            SummaryColumn::Host | SummaryColumn::Device => {
                let v = if col == SummaryColumn::Host {
                    &r.identity.host
                } else {
                    &r.identity.device
                };
                cells.push(v.clone().unwrap_or_default());
            }
            SummaryColumn::Rank | SummaryColumn::Steps => cells.push(summary_cell(view, i, col)),
        }
    }
    cells
}

/// The shown rows as TSV with a header (what Copy puts on the clipboard, for Excel): plain
/// numbers as the details table copies them, the top operator's name and MB in two columns.
pub fn summary_tsv(t: &Tr, view: &SummaryView, rows: &[usize]) -> String {
    let clean = |s: String| s.replace(['\t', '\n', '\r'], " ");
    let mut header: Vec<&str> = Vec::new();
    for &c in summary_columns(view) {
        header.push((t.summary_header)(c));
        if c == SummaryColumn::TopOperator {
            header.push(t.summary_top_operator_mb);
        }
    }
    let mut out: Vec<String> = vec![header.join("\t")];
    for &i in rows {
        out.push(
            copy_cells(view, i)
                .into_iter()
                .map(clean)
                .collect::<Vec<_>>()
                .join("\t"),
        );
    }
    let mut text = out.join("\n");
    text.push('\n');
    text
}

fn rank_label(open: &OpenSummary, i: usize) -> String {
    open.summary
        .ranks
        .get(i)
        .map_or(String::new(), |r| match &r.identity.host {
            Some(h) => format!("{} ({h})", r.identity.rank),
            None => r.identity.rank.clone(),
        })
}

fn named_list(
    open: &OpenSummary,
    t: &Tr,
    list: &[usize],
    extra: impl Fn(usize) -> String,
) -> String {
    let mut names: Vec<String> = list
        .iter()
        .take(NAMED)
        .map(|&i| format!("{}{}", rank_label(open, i), extra(i)))
        .collect();
    if list.len() > NAMED {
        names.push((t.summary_more)(list.len() - NAMED));
    }
    names.join(", ")
}

/// Draws the summary's overview; pushes what the user asked for to `out`.
pub fn summary_ui(
    ui: &mut egui::Ui,
    t: &'static Tr,
    view: &mut SummaryView,
    choice: &SummaryChoice,
    sort: Option<(SummaryColumn, SortDir)>,
    out: &mut Vec<Command>,
) {
    if view.poll() {
        ui.ctx()
            .request_repaint_after(std::time::Duration::from_millis(30));
    }
    let file = view.path.file_name().map_or_else(
        || view.path.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    if let Some(e) = &view.error {
        ui.heading((t.summary_title)(&file, 0, 0));
        ui.colored_label(ui.visuals().error_fg_color, e.text(t));
        return;
    }
    if view.open.is_none() {
        ui.horizontal(|ui| {
            crate::ui::spinner::spinner(ui);
            ui.label((t.summary_reading)(&file));
        });
        return;
    }
    let rows = summary_order(view, choice, sort);
    header_ui(ui, t, view, choice, &file, &rows, out);
    let Some(open) = &view.open else { return };
    if open.summary.ranks.is_empty() {
        return;
    }
    // Three charts side by side above a table of the whole width (at 1280×720 a table beside
    // a chart had to scroll sideways). The rank under the pointer last frame (a bar or a row)
    // is the one the step plot marks and the curve shows.
    let chart_h = (ui.available_height() * 0.32).clamp(110.0, 320.0);
    let last_hovered = view.hovered;
    let mut hovered: Option<usize> = None;
    ui.columns(3, |cols| {
        if let Some(i) = peaks_plot(&mut cols[0], t, view, &rows, choice, chart_h) {
            hovered = Some(i);
            if cols[0].input(|i| i.pointer.primary_clicked()) {
                out.push(select_rank(Some(i)));
            }
        }
        let shown = hovered.or(last_hovered);
        steps_plot(&mut cols[1], t, view, choice, shown, chart_h);
        curve_ui(&mut cols[2], t, view, choice, shown, chart_h, out);
    });
    ui.separator();
    if let Some(i) = table_ui(ui, t, view, &rows, choice, sort, out) {
        hovered = hovered.or(Some(i));
    }
    if hovered != last_hovered {
        view.hovered = hovered;
        ui.ctx().request_repaint();
    }
}

fn header_ui(
    ui: &mut egui::Ui,
    t: &'static Tr,
    view: &SummaryView,
    choice: &SummaryChoice,
    file: &str,
    rows: &[usize],
    out: &mut Vec<Command>,
) {
    let Some(open) = &view.open else { return };
    let n = open.summary.ranks.len();
    ui.horizontal(|ui| {
        ui.heading((t.summary_title)(file, n, open.hosts));
        if let Some(took) = view.read_after {
            ui.weak((t.summary_read_in)(&grouped(took.as_secs_f64(), 2)));
        }
        ui.separator();
        match &view.baseline {
            None => {
                if ui
                    .button(t.summary_compare)
                    .on_hover_text(t.summary_compare_hover)
                    .clicked()
                {
                    out.push(Command::Pick(PickKind::File(&PICK)));
                }
            }
            Some(_) => {
                if ui.button(t.summary_stop_compare).clicked() {
                    out.push(Command::StopSummaryCompare);
                }
            }
        }
        if ui
            .button(t.copy_all)
            .on_hover_text(t.summary_copy_hover)
            .clicked()
        {
            ui.ctx().copy_text(summary_tsv(t, view, rows));
        }
    });
    if let Some(b) = &view.baseline {
        let name = b.path.file_name().map_or_else(
            || b.path.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        match (&b.open, &b.error) {
            (_, Some(e)) => {
                ui.colored_label(
                    ui.visuals().error_fg_color,
                    (t.summary_baseline_error)(&e.text(t)),
                );
            }
            (Some(before), None) => {
                let matched = b.matches.iter().filter(|m| m.is_some()).count();
                let max = |s: &OpenSummary| s.spread.as_ref().map(|s| s.max.1);
                ui.label((t.summary_compared)(
                    &name,
                    matched,
                    n,
                    &mb(max(before)),
                    &mb(max(open)),
                ));
            }
            (None, None) => {
                ui.horizontal(|ui| {
                    crate::ui::spinner::spinner(ui);
                    ui.label((t.summary_reading)(&name));
                });
            }
        }
    }
    if open.failed > 0 {
        ui.colored_label(ui.visuals().warn_fg_color, (t.summary_failed)(open.failed));
    }
    if let Some(u) = choice.unreachable
        && let Some(r) = open.summary.ranks.get(u)
    {
        // Said above the charts, whatever rank is under the pointer: it names its rank.
        let id = &r.identity;
        ui.add(
            egui::Label::new(
                egui::RichText::new((t.summary_unreachable)(
                    &id.rank,
                    &id.path,
                    id.host.as_deref().unwrap_or("–"),
                    open.summary.summarised_on.as_deref(),
                ))
                .color(ui.visuals().warn_fg_color),
            )
            .wrap(),
        );
    }
    if !open.summary.notes.is_empty() {
        egui::CollapsingHeader::new((t.summary_notes)(open.summary.notes.len()))
            .id_salt("summary_notes")
            .show(ui, |ui| {
                for n in &open.summary.notes {
                    ui.label(n);
                }
            });
    }
    if let Some(s) = &open.spread {
        let mbu = |v: f64| format!("{} MB", grouped(v, 2));
        ui.label((t.overview_spread)(
            &mbu(s.max.1),
            &rank_label(open, s.max.0),
            &mbu(s.min.1),
            &rank_label(open, s.min.0),
            &mbu(s.mean),
            &mbu(s.range),
        ));
        if s.outliers.is_empty() {
            ui.weak(t.overview_no_outliers);
        } else {
            let peak = |i: usize| {
                open.summary.ranks[i]
                    .peak_allocated_mib
                    .map_or(String::new(), |p| format!(": {} MB", grouped(p, 2)))
            };
            let list = &open.outliers_by_peak;
            warning_line(
                ui,
                (t.overview_outliers)(&named_list(open, t, list, peak)),
                None,
            );
        }
    }
    if let Some(worst) = open
        .steps
        .iter()
        .max_by(|a, b| a.max.1.total_cmp(&b.max.1).then(b.step.cmp(&a.step)))
    {
        ui.label((t.summary_worst_step)(
            worst.step,
            &grouped(worst.max.1, 2),
            &rank_label(open, worst.max.0),
            &grouped(worst.median, 2),
            worst.ranks,
        ));
    }
    let leaks = &open.leaks;
    if leaks.is_empty() {
        if !open.steps.is_empty() {
            ui.weak(t.summary_no_leaks);
        }
    } else {
        let g =
            |i: usize| open.growth[i].map_or(String::new(), |g| format!(" {} MB", signed(g.mib)));
        warning_line(
            ui,
            (t.summary_leaks)(leaks.len(), &named_list(open, t, leaks, g)),
            Some(t.summary_leaks_rule),
        );
    }
}

/// A warning in its colour, wrapped at the window's edge (it names at most [`NAMED`] ranks, so
/// it takes two lines at most at 1280 points), with `hover` as its tooltip.
fn warning_line(ui: &mut egui::Ui, text: String, hover: Option<&str>) {
    let rich = egui::RichText::new(text).color(ui.visuals().warn_fg_color);
    let label = ui.add(egui::Label::new(rich).wrap());
    if let Some(h) = hover {
        label.on_hover_text(h);
    }
}

/// The bars of every shown rank's peak, in the table's order (sorted by peak, they are the
/// distribution); returns the rank under the pointer.
fn peaks_plot(
    ui: &mut egui::Ui,
    t: &Tr,
    view: &SummaryView,
    rows: &[usize],
    choice: &SummaryChoice,
    height: f32,
) -> Option<usize> {
    let open = view.open.as_ref()?;
    let outliers = open
        .spread
        .as_ref()
        .map(|s| s.outliers.as_slice())
        .unwrap_or(&[]);
    let bars: Vec<Bar> = rows
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| {
            let p = open.summary.ranks[i].peak_allocated_mib?;
            let color = if choice.selected == Some(i) {
                palette::PICKED_EVENT
            } else if outliers.contains(&i) {
                palette::RANK_OUTLIER
            } else {
                palette::RANK_NORMAL
            };
            Some(
                Bar::new(k as f64, p)
                    .name(format!("rank {}", rank_label(open, i)))
                    .fill(color)
                    .stroke(egui::Stroke::NONE)
                    .width(0.8),
            )
        })
        .collect();
    let before: Vec<Bar> = rows
        .iter()
        .enumerate()
        .filter_map(|(k, &i)| {
            Some(
                Bar::new(k as f64, before_peak(view, i)?)
                    .fill(palette::SUMMARY_BEFORE)
                    .stroke(egui::Stroke::NONE)
                    .width(0.35),
            )
        })
        .collect();
    let labels: Vec<String> = rows
        .iter()
        .map(|&i| open.summary.ranks[i].identity.rank.clone())
        .collect();
    let (axis, label_points) = rank_axis(t.rank_axis_title, labels);
    let plot = Plot::new("summary_peaks")
        .height(height)
        .y_axis_label(t.overview_axis)
        .custom_x_axes(vec![axis])
        .x_grid_spacer(move |input| rank_grid(input, label_points))
        .include_y(0.0)
        .allow_scroll(false)
        .allow_drag(egui::Vec2b::new(true, false))
        .allow_zoom(egui::Vec2b::new(true, false))
        .show(ui, |p| {
            if !before.is_empty() {
                p.bar_chart(BarChart::new(t.summary_before_series, before));
            }
            p.bar_chart(
                BarChart::new(t.overview_axis, bars).element_formatter(Box::new(|b, _| {
                    format!("{}: {} MB", b.name, grouped(b.value, 2))
                })),
            );
        });
    let x = plot
        .response
        .hover_pos()
        .map(|pos| plot.transform.value_from_position(pos).x)?;
    let k = x.round();
    if (x - k).abs() > 0.4 || k < 0.0 {
        return None;
    }
    rows.get(k as usize).copied()
}

/// Each step's highest, median and lowest peak across the ranks, and the shown rank's own.
fn steps_plot(
    ui: &mut egui::Ui,
    t: &Tr,
    view: &SummaryView,
    choice: &SummaryChoice,
    hovered: Option<usize>,
    height: f32,
) {
    let Some(open) = &view.open else { return };
    if open.steps.is_empty() {
        ui.weak(t.summary_no_steps);
        return;
    }
    let line = |f: &dyn Fn(&crate::analysis::cluster::StepAcross) -> f64| -> PlotPoints<'static> {
        open.steps.iter().map(|s| [s.step as f64, f(s)]).collect()
    };
    let shown = hovered.or(choice.selected);
    let own: Option<Vec<[f64; 2]>> = shown.and_then(|i| open.summary.ranks.get(i)).map(|r| {
        r.steps
            .iter()
            .filter_map(|s| Some([s.step as f64, s.peak_allocated_mib?]))
            .collect()
    });
    let names = t.summary_step_lines;
    Plot::new("summary_steps")
        .height(height)
        .x_axis_label(t.summary_step_axis)
        .y_axis_label(t.overview_axis)
        .include_y(0.0)
        .legend(small_legend())
        .allow_scroll(false)
        .show(ui, |p| {
            p.line(Line::new(names[0], line(&|s| s.max.1)).color(palette::RANK_OUTLIER));
            p.line(Line::new(names[1], line(&|s| s.median)).color(palette::RANK_NORMAL));
            p.line(Line::new(names[2], line(&|s| s.min.1)).color(palette::SUMMARY_BEFORE));
            if let (Some(pts), Some(i)) = (own, shown) {
                p.points(
                    Points::new(format!("rank {}", rank_label(open, i)), pts)
                        .radius(3.5)
                        .color(palette::CURSOR),
                );
            }
        });
}

/// A legend in small text at the bottom right: in plots a third of the window wide the curves
/// run high (peaks), and a full-size legend at the top covered them.
fn small_legend() -> Legend {
    Legend::default()
        .position(egui_plot::Corner::RightBottom)
        .text_style(egui::TextStyle::Small)
}

/// The table; returns the rank whose row is under the pointer.
fn table_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    view: &SummaryView,
    rows: &[usize],
    choice: &SummaryChoice,
    sort: Option<(SummaryColumn, SortDir)>,
    out: &mut Vec<Command>,
) -> Option<usize> {
    let open = view.open.as_ref()?;
    ui.horizontal(|ui| {
        let label = ui.label(t.summary_host_filter);
        let mut text = choice.host_filter.clone();
        if ui
            .add(
                egui::TextEdit::singleline(&mut text)
                    .hint_text(t.summary_host_hint)
                    .desired_width(160.0),
            )
            .labelled_by(label.id)
            .changed()
        {
            out.push(Command::choose(move |c: &mut SummaryChoice| {
                c.host_filter.clone_from(&text)
            }));
        }
        let mut exact = choice.host_exact;
        if ui
            .checkbox(&mut exact, t.summary_host_exact)
            .on_hover_text(t.summary_host_exact_hover)
            .changed()
        {
            out.push(Command::choose(move |c: &mut SummaryChoice| {
                c.host_exact = exact
            }));
        }
        ui.weak((t.summary_shown)(rows.len(), open.summary.ranks.len()));
    });
    let cols = summary_columns(view);
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let mut hovered = None;
    egui::ScrollArea::horizontal()
        .id_salt("summary_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let mut table = TableBuilder::new(ui)
                .striped(true)
                .sense(egui::Sense::click())
                .id_salt("summary_table");
            for col in cols {
                table = table.column(match col {
                    SummaryColumn::TopOperator => TableColumn::initial(200.0).clip(true),
                    SummaryColumn::Folder => TableColumn::remainder().at_least(160.0).clip(true),
                    _ => TableColumn::auto().at_least(40.0),
                });
            }
            table
                .header(h, |mut hr| {
                    for &col in cols {
                        hr.col(|ui| {
                            let dir = sort.filter(|(c, _)| *c == col).map(|(_, d)| d);
                            let title = (t.summary_header)(col);
                            if sort_header(
                                ui,
                                t,
                                title,
                                dir,
                                (t.summary_header)(SummaryColumn::Rank),
                            ) {
                                out.push(Command::sort(SORT, col));
                            }
                        });
                    }
                })
                .body(|body| {
                    body.rows(h, rows.len(), |mut row| {
                        let i = rows[row.index()];
                        let r = &open.summary.ranks[i];
                        row.set_selected(choice.selected == Some(i));
                        let mut opened = false;
                        for &col in cols {
                            row.col(|ui| {
                                let text = summary_cell(view, i, col);
                                if col == SummaryColumn::Rank {
                                    ui.style_mut().wrap_mode = Some(egui::TextWrapMode::Extend);
                                    let link = ui.link(text).on_hover_text(t.summary_open_hover);
                                    if link.clicked() {
                                        opened = true;
                                        // Looked at only on a click: the path was written on
                                        // the machine that summarised the rank.
                                        out.push(match rank_folder(&view.path, &r.identity.path) {
                                            Some(path) => Command::Open(path),
                                            None => {
                                                Command::choose(move |c: &mut SummaryChoice| {
                                                    c.unreachable = Some(i)
                                                })
                                            }
                                        });
                                    }
                                } else if col == SummaryColumn::Folder {
                                    // Red only for a rank that could not be summarised.
                                    let mut rich = egui::RichText::new(text);
                                    if r.error.is_some() {
                                        rich = rich.color(ui.visuals().error_fg_color);
                                    }
                                    ui.add(
                                        egui::Label::new(rich)
                                            .wrap_mode(egui::TextWrapMode::Truncate),
                                    )
                                    .on_hover_text(&r.identity.path);
                                } else {
                                    ui.add(
                                        egui::Label::new(text)
                                            .selectable(false)
                                            .wrap_mode(egui::TextWrapMode::Truncate),
                                    );
                                }
                            });
                        }
                        let resp = row.response();
                        if resp.contains_pointer() {
                            hovered = Some(i);
                        }
                        if resp.clicked() && !opened {
                            let pin = if choice.selected == Some(i) {
                                None
                            } else {
                                Some(i)
                            };
                            out.push(select_rank(pin));
                        }
                    });
                });
        });
    hovered
}

/// One downsampled curve as drawn: a step band between each bucket's lowest and highest value.
#[derive(Default)]
struct Band {
    name: String,
    color: egui::Color32,
    xs: Vec<f64>,
    lo: Vec<f64>,
    hi: Vec<f64>,
}

/// The downsampled curves of the rank under the pointer, else the pinned one, else the rank
/// with the highest peak; in a comparison the same rank's curves from the other summary too.
fn curve_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    view: &mut SummaryView,
    choice: &SummaryChoice,
    hovered: Option<usize>,
    height: f32,
    out: &mut Vec<Command>,
) {
    let Some(open) = &view.open else { return };
    let highest = open.spread.as_ref().map(|s| s.max.0);
    let Some(i) = hovered.or(choice.selected).or(highest) else {
        ui.weak(t.summary_curve_hint);
        return;
    };
    let r = &open.summary.ranks[i];
    let (rank, host) = (
        r.identity.rank.clone(),
        r.identity.host.clone().unwrap_or_else(|| "–".into()),
    );
    let title_top = ui.cursor().top();
    ui.horizontal(|ui| {
        ui.add(
            egui::Label::new(egui::RichText::new((t.summary_curve_title)(&rank, &host)).strong())
                .truncate(),
        )
        .on_hover_text(t.summary_curve_hint);
        if choice.selected.is_some() && ui.small_button(t.summary_unpin).clicked() {
            out.push(select_rank(None));
        }
    });
    let height = (height - (ui.cursor().top() - title_top)).max(60.0);
    let mut bands: Vec<Band> = Vec::new();
    let mut add = |curves: &[(String, crate::export::cluster_db::Envelope)], before: bool| {
        for (k, (name, e)) in curves.iter().enumerate() {
            let mut band = Band::default();
            // Each bucket is drawn across its span: the curves are step functions.
            for (b, &(mn, mx)) in e.min_max.iter().enumerate() {
                let (a, z) = e.span(b);
                for x in [a, z] {
                    band.xs.push(x);
                    band.lo.push(f64::from(mn));
                    band.hi.push(f64::from(mx));
                }
            }
            // The baseline's curves share one legend entry (and one colour): a legend of each
            // curve twice, 12 entries in a third of the window, covered the curves.
            let (label, color) = if before {
                (t.summary_before_series.to_string(), palette::SUMMARY_BEFORE)
            } else {
                (name.clone(), palette::curve_color(name, k))
            };
            band.name = label;
            band.color = color;
            bands.push(band);
        }
    };
    add(view.open.as_mut().map_or(&[], |o| o.curves(i)), false);
    if let Some(b) = &mut view.baseline
        && let Some(j) = b.matches.get(i).copied().flatten()
        && let Some(before) = &mut b.open
    {
        add(before.curves(j), true);
    }
    if bands.is_empty() {
        ui.weak(t.summary_no_curve);
        return;
    }
    Plot::new("summary_curve")
        .height(height)
        // Room for "4000" from the first frame: egui_plot sizes the axis from the labels it
        // drew last, and a plot that first drew only "0" kept only "0".
        .y_axis_min_width(36.0)
        .y_grid_spacer(crate::ui::plot::value_grid)
        .x_axis_label(t.summary_time_axis)
        .y_axis_label(t.overview_axis)
        .include_y(0.0)
        .legend(small_legend())
        .show(ui, |p| {
            for (k, b) in bands.into_iter().enumerate() {
                // The band between the lowest and highest value of each bucket, and its top
                // edge (repeated points dropped: a zero-length segment makes a spike).
                let mut top: Vec<[f64; 2]> = Vec::with_capacity(b.xs.len());
                for (&x, &y) in b.xs.iter().zip(&b.hi) {
                    if top.last() != Some(&[x, y]) {
                        top.push([x, y]);
                    }
                }
                p.line(
                    Line::new(b.name.as_str(), PlotPoints::from(top))
                        .color(b.color)
                        .allow_band(false),
                );
                // Unnamed: the legend shows the line's colour, not the faint fill's.
                p.add(
                    FilledArea::new("", &b.xs, &b.lo, &b.hi)
                        .id(("summary_band", k))
                        .fill_color(b.color.gamma_multiply(0.35)),
                );
            }
        });
}

/// A rank's folder as the summary at `summary` recorded it (`recorded`), when it is on this
/// machine: as written (summaries store absolute paths), or, for a relative path (older
/// summaries), beside the summary.
pub fn rank_folder(summary: &std::path::Path, recorded: &str) -> Option<std::path::PathBuf> {
    let path = std::path::PathBuf::from(recorded);
    if path.is_relative() {
        // Relative to where `summarize` ran, which is not known: the summary's folder is the
        // best guess (not this app's own folder, which may hold another run's folder).
        let beside = summary.parent()?.join(&path);
        return beside.exists().then_some(beside);
    }
    path.exists().then_some(path)
}

/// Pins rank `i`'s curve (None: unpins), forgetting a rank whose folder was not found.
fn select_rank(i: Option<usize>) -> Command {
    Command::choose(move |c: &mut SummaryChoice| {
        c.selected = i;
        c.unreachable = None;
    })
}

/// A `.db` written by `memsight summarize` opens as a summary document
/// ([`crate::ui::documents::OPENERS`]).
pub fn open_document(
    path: &std::path::Path,
    jobs: &mut crate::ui::jobs::Jobs,
) -> Option<Box<dyn crate::ui::document::Document>> {
    let is_summary = path.is_file() && crate::export::cluster_db::is_summary(path);
    is_summary.then(|| Box::new(SummaryView::open(jobs, path.to_path_buf())) as _)
}

impl crate::ui::document::Document for SummaryView {
    fn kind(&self) -> &'static str {
        "summary"
    }

    fn path(&self) -> Option<&std::path::Path> {
        Some(&self.path)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut crate::ui::document::DocCx<'_>) {
        let (_, central) = crate::ui::document::panel_frames(ui.style());
        egui::CentralPanel::default().frame(central).show(ui, |ui| {
            let sort = cx.state.sorts.get(SORT);
            let choice = cx.state.choice::<SummaryChoice>();
            summary_ui(ui, cx.t, self, &choice, sort, cx.out);
        });
    }

    fn compared_with(&self) -> Option<PickKind> {
        Some(PickKind::File(&PICK))
    }

    /// Two summaries compare rank by rank.
    fn handle(&mut self, cmd: &Command, cx: &mut crate::ui::document::DocCx<'_>) -> bool {
        match cmd {
            Command::CompareWith(source) => self.compare_with(cx.jobs, source.path.clone()),
            Command::StopSummaryCompare => self.stop_comparing(),
            _ => return false,
        }
        true
    }
}
