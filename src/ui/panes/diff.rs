//! The comparison's panes: the peak deltas line (each Overall curve's peak in the baseline A and
//! the rank on screen B, the change in MB and %), and the per-operator diff table (allocations and
//! blocks on each side, the delta, and what each operator held at each side's peak), sortable,
//! filterable and copyable.

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::details_table::sort_header;
use crate::analysis::compare::{delta_headers, not_counted_text};
use crate::analysis::{GroupBy, OperatorDelta, OverallCurve, RankView, SortDir};
use crate::model::MIB;
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::state::ViewState;

/// A column of the compare diff table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DiffColumn {
    /// Operator name.
    Name,
    /// KB allocated in the baseline (A).
    AKib,
    /// KB allocated in the rank on screen (B).
    BKib,
    /// B − A.
    Delta,
    /// Allocations in A.
    ABlocks,
    /// Allocations in B.
    BBlocks,
    /// MB alive at A's Operator Allocated peak.
    APeakLive,
    /// MB alive at B's Operator Allocated peak.
    BPeakLive,
    /// B at peak − A at peak (MB).
    DeltaAtPeak,
}

impl DiffColumn {
    /// Every column, in table order.
    pub const ALL: [DiffColumn; 9] = [
        DiffColumn::Name,
        DiffColumn::AKib,
        DiffColumn::BKib,
        DiffColumn::Delta,
        DiffColumn::ABlocks,
        DiffColumn::BBlocks,
        DiffColumn::APeakLive,
        DiffColumn::BPeakLive,
        DiffColumn::DeltaAtPeak,
    ];
}

crate::ui::sorts::sort_columns! {
    DiffColumn {
        Name, AKib, BKib, Delta, ABlocks, BBlocks, APeakLive, BPeakLive, DeltaAtPeak,
    }
}

/// The compare diff table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("diff");

/// The diff table's filter: its own choice ([`crate::ui::choices`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct DiffFilter {
    /// Operator name text (case-insensitive, any part).
    pub name: String,
}

impl crate::ui::choices::Choice for DiffFilter {
    const ID: &'static str = "diff";
}

/// A column's value for sorting (numbers; the name sorts apart).
fn value(d: &OperatorDelta, col: DiffColumn) -> f64 {
    let kib = |b: i64| b as f64 / 1024.0;
    let mib = |b: i64| b as f64 / MIB as f64;
    match col {
        DiffColumn::Name => 0.0,
        DiffColumn::AKib => kib(d.a_bytes),
        DiffColumn::BKib => kib(d.b_bytes),
        DiffColumn::Delta => kib(d.delta()),
        DiffColumn::ABlocks => d.a_blocks as f64,
        DiffColumn::BBlocks => d.b_blocks as f64,
        DiffColumn::APeakLive => mib(d.a_peak_live),
        DiffColumn::BPeakLive => mib(d.b_peak_live),
        DiffColumn::DeltaAtPeak => mib(d.delta_at_peak()),
    }
}

/// A cell's text (KB with 1 decimal, MB with 2, counts whole, the delta signed).
fn text(d: &OperatorDelta, col: DiffColumn) -> String {
    let v = value(d, col);
    match col {
        DiffColumn::Name => d.name.clone(),
        DiffColumn::ABlocks | DiffColumn::BBlocks => grouped(v, 0),
        DiffColumn::Delta if v > 0.0 => format!("+{}", grouped(v, 1)),
        DiffColumn::DeltaAtPeak if v > 0.0 => format!("+{}", grouped(v, 2)),
        DiffColumn::AKib | DiffColumn::BKib | DiffColumn::Delta => grouped(v, 1),
        DiffColumn::APeakLive | DiffColumn::BPeakLive | DiffColumn::DeltaAtPeak => grouped(v, 2),
    }
}

/// The rows shown (indices into `diff`): names containing the filter (case-insensitive), in the
/// state's sort (default: the diff's own order, largest |Δ at peak| first).
pub fn diff_rows(diff: &[OperatorDelta], state: &ViewState) -> Vec<usize> {
    let needle = state.choice::<DiffFilter>().name.trim().to_lowercase();
    let mut rows: Vec<usize> = (0..diff.len())
        .filter(|&i| needle.is_empty() || diff[i].name.to_lowercase().contains(&needle))
        .collect();
    if let Some((col, dir)) = state.sorts.get::<DiffColumn>(SORT) {
        rows.sort_by(|&a, &b| {
            let ord = if col == DiffColumn::Name {
                diff[a].name.cmp(&diff[b].name)
            } else {
                value(&diff[a], col).total_cmp(&value(&diff[b], col))
            };
            if dir == SortDir::Desc {
                ord.reverse()
            } else {
                ord
            }
        });
    }
    rows
}

/// The rows as TSV with the headers (plain numbers: KiB, MiB, counts), what Copy puts on the
/// clipboard.
pub fn diff_tsv(t: &Tr, diff: &[OperatorDelta], rows: &[usize]) -> String {
    let mut s = delta_headers(t.lang).join("\t");
    s.push('\n');
    for &i in rows {
        let d = &diff[i];
        let cells: Vec<String> = DiffColumn::ALL
            .iter()
            .map(|&c| match c {
                DiffColumn::Name => d.name.clone(),
                _ => format!("{}", value(d, c)),
            })
            .collect();
        s.push_str(&cells.join("\t"));
        s.push('\n');
    }
    s
}

/// Each Overall curve's peak in A and B and the change: `(curve, a, b)` in bytes.
pub fn peak_deltas(a: &RankView, b: &RankView) -> Vec<(OverallCurve, Option<i64>, Option<i64>)> {
    let peak = |v: &RankView, c: OverallCurve| {
        v.series(GroupBy::Overall)
            .iter()
            .find(|s| s.series.name == c.label())
            .and_then(|s| s.peak())
            .map(|p| p.value)
    };
    [
        OverallCurve::OperatorAllocated,
        OverallCurve::OperatorReserved,
        OverallCurve::AppReserved,
    ]
    .into_iter()
    .map(|c| (c, peak(a, c), peak(b, c)))
    .filter(|(_, x, y)| x.is_some() || y.is_some())
    .collect()
}

/// The peak deltas as one line: `Operator Allocated 3,336.47 → 3,303.06 MB (−33.41 MB, −1.0%)`.
pub fn peak_deltas_ui(ui: &mut egui::Ui, t: &Tr, a: &RankView, b: &RankView) {
    ui.horizontal_wrapped(|ui| {
        ui.strong(t.peak_deltas);
        for (c, x, y) in peak_deltas(a, b) {
            let mb = |v: Option<i64>| v.map_or("–".into(), |v| grouped(v as f64 / MIB as f64, 2));
            let change = match (x, y) {
                (Some(x), Some(y)) => {
                    let d = (y - x) as f64 / MIB as f64;
                    let pct = if x != 0 {
                        format!(", {:+.1}%", (y - x) as f64 / x as f64 * 100.0)
                    } else {
                        String::new()
                    };
                    format!(
                        " ({}{} MB{pct})",
                        if d > 0.0 { "+" } else { "" },
                        grouped(d, 2)
                    )
                }
                _ => String::new(),
            };
            ui.label(format!("{} {} → {} MB{change}", c.label(), mb(x), mb(y)));
        }
    });
}

/// The diff tab: the peak deltas, the filter and Copy, and the table.
pub fn diff_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
    let t = cx.t;
    let Some(cmp) = cx.compare.clone() else {
        return;
    };
    peak_deltas_ui(ui, t, &cmp.baseline.view, cx.view);
    let Some(diff) = cmp.diff else {
        ui.horizontal(|ui| {
            crate::ui::spinner::spinner(ui);
            ui.label(t.diff_computing);
        });
        return;
    };
    let rows = diff_rows(&diff, cx.state);
    ui.horizontal(|ui| {
        ui.strong((t.diff_title)(&cmp.baseline.label));
        let label = ui.label(t.name);
        let mut filter = cx.state.choice::<DiffFilter>().name;
        let edit = egui::TextEdit::singleline(&mut filter)
            .desired_width(140.0)
            .hint_text(t.search_hint);
        if ui.add(edit).labelled_by(label.id).changed() {
            cx.out.push(Command::choose(move |f: &mut DiffFilter| {
                f.name.clone_from(&filter)
            }));
        }
        ui.label((t.rows)(&grouped(rows.len() as f64, 0)));
        if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
            cx.out.push(Command::CopyDiff);
        }
    });
    // So that a sum over the raw rows adds up to the table's (a free of memory allocated
    // before profiling counted −4,096 KB in the CSV's unnamed rows, and nothing here).
    let (a, b) = (cmp.baseline.view.not_counted(), cx.view.not_counted());
    let kb = |b: i64| grouped(crate::model::bytes_to_kib(b), 1);
    if let Some(line) = not_counted_text(a, b, t.lang, &kb) {
        ui.weak(line);
    }
    let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let state = cx.state;
    let out = &mut *cx.out;
    egui::ScrollArea::horizontal()
        .id_salt("diff_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let mut table = TableBuilder::new(ui)
                .striped(true)
                .id_salt("diff_table")
                .cell_layout(egui::Layout::right_to_left(egui::Align::Center));
            for col in DiffColumn::ALL {
                table = table.column(match col {
                    DiffColumn::Name => TableColumn::initial(240.0).clip(true),
                    _ => TableColumn::auto().at_least(70.0),
                });
            }
            table
                .header(h, |mut hr| {
                    for (k, col) in DiffColumn::ALL.into_iter().enumerate() {
                        hr.col(|ui| {
                            let dir = state.sorts.dir_of(SORT, col);
                            if sort_header(
                                ui,
                                t,
                                delta_headers(t.lang)[k],
                                dir,
                                delta_headers(t.lang)[3],
                            ) {
                                out.push(Command::sort(SORT, col));
                            }
                        });
                    }
                })
                .body(|body| {
                    body.rows(h, rows.len(), |mut row| {
                        let d = &diff[rows[row.index()]];
                        for col in DiffColumn::ALL {
                            row.col(|ui| {
                                if col == DiffColumn::Name {
                                    ui.with_layout(
                                        egui::Layout::left_to_right(egui::Align::Center),
                                        |ui| {
                                            ui.add(
                                                egui::Label::new(text(d, col))
                                                    .wrap_mode(egui::TextWrapMode::Truncate),
                                            )
                                        },
                                    );
                                } else {
                                    ui.label(text(d, col));
                                }
                            });
                        }
                    });
                });
        });
}

/// The diff tab's id.
pub const TAB: crate::ui::state::TabId = crate::ui::state::TabId::DIFF;

/// The diff tab: the per-operator difference of a comparison.
#[derive(Default)]
pub struct DiffPane;

impl super::tab::BottomPane for DiffPane {
    fn id(&self) -> crate::ui::state::TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, cx: &PaneCx<'_>) -> String {
        let _ = cx;
        t.diff_tab.to_string()
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        cx.compare.is_some()
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        diff_ui(ui, cx);
    }
}
