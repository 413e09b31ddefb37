//! The snapshot's phases (the user's `record_function` annotations, [`crate::snapshot::phases`])
//! in the snapshot view: as spans along the top of the active-memory chart, named under the
//! pointer, and as the **By phase** view — each phase with its events and allocated memory
//! before, at its most and after (a click goes to its peak), and the live blocks at the picked
//! event by the phase that allocated them.

use egui_plot::{PlotPoint, PlotPoints, PlotUi, Polygon};

use crate::model::bytes_to_mib;
use crate::snapshot::phases::{AllocatedIn, Phase, PhaseHolding};
use crate::ui::format::grouped;
use crate::ui::i18n::{Text, Tr};

use super::snapshot_bands::Bands;

/// The holders view's name.
pub const VIEW: Text = Text {
    en: "By phase",
    zh: "按阶段",
};
/// The phases table's header.
pub const HEADERS: [Text; 5] = [
    Text {
        en: "Phase",
        zh: "阶段",
    },
    Text {
        en: "Events",
        zh: "事件",
    },
    Text {
        en: "Before (MB)",
        zh: "开始前 (MB)",
    },
    Text {
        en: "Peak (MB)",
        zh: "峰值 (MB)",
    },
    Text {
        en: "After (MB)",
        zh: "结束后 (MB)",
    },
];
/// What a click on a phase does.
pub const HINT: Text = Text {
    en: "The user's record_function ranges (external_annotations). Click a phase to go to its peak.",
    zh: "用户的 record_function 区间（external_annotations）。点击阶段跳到其峰值。",
};
/// The live blocks' heading (`{when}`).
pub const LIVE: Text = Text {
    en: "Live blocks {when}, by the phase that allocated them",
    zh: "{when}的存活块，按分配它们的阶段",
};
/// Blocks allocated outside every phase.
pub const OUTSIDE: Text = Text {
    en: "(outside every phase)",
    zh: "（不在任何阶段内）",
};
/// Blocks held before the trace.
pub const BEFORE: Text = Text {
    en: "(before the trace)",
    zh: "（记录开始之前）",
};
/// The phase under the pointer, in the chart's tooltip (`{name}`).
pub const IN_PHASE: Text = Text {
    en: "phase: {name}",
    zh: "阶段：{name}",
};

/// The torch.compile region a band was allocated in, in the chart's tooltip (`{name}`).
pub const COMPILED: Text = Text {
    en: "allocated in torch.compile region: {name}",
    zh: "分配于 torch.compile 区域：{name}",
};

/// The phases table's narrowest column, points.
const COLUMN_WIDTH: f32 = 90.0;

/// The most phase strips drawn in a frame.
const MAX_STRIPS: usize = 4000;

/// How tall a phase strip is, points.
pub const STRIP_POINTS: f64 = 16.0;

/// The nesting levels drawn as strips (deeper phases are not drawn on the chart).
pub const STRIP_LEVELS: usize = 3;

/// How many strips the chart needs above the memory: one per nesting level, at most
/// [`STRIP_LEVELS`], none without a phase that spans events.
pub fn strip_levels(phases: &[Phase]) -> usize {
    phases
        .iter()
        .filter(|p| p.events.is_some())
        .map(|p| p.depth + 1)
        .max()
        .unwrap_or(0)
        .min(STRIP_LEVELS)
}

/// Draws each phase that spans events as a strip along the top of the chart, one strip per
/// nesting level, named where its strip is wide enough.
pub fn draw_spans(plot_ui: &mut PlotUi<'_>, phases: &[Phase], bands: &Bands) {
    let (bounds, frame) = {
        let tr = plot_ui.transform();
        (*tr.bounds(), *tr.frame())
    };
    let y_per_point = bounds.height() / f64::from(frame.height().max(1.0));
    let points_per_x = f64::from(frame.width()) / bounds.width().max(f64::MIN_POSITIVE);
    let strip = STRIP_POINTS * y_per_point;
    let y_top = bounds.max()[1];
    let (x_min, x_max) = (bounds.min()[0], bounds.max()[0]);
    let mut drawn = 0;
    for p in phases.iter().filter(|p| p.depth < STRIP_LEVELS) {
        let Some((first, last)) = p.events else {
            continue;
        };
        let (x0, x1) = (bands.x_of(first as i64), bands.x_of(last as i64 + 1));
        // Only what is on screen and at least a point wide, and a bounded number per frame (a
        // trace may annotate every op).
        if x1 < x_min || x0 > x_max || (x1 - x0) * points_per_x < 1.0 {
            continue;
        }
        drawn += 1;
        if drawn > MAX_STRIPS {
            break;
        }
        let top = y_top - strip * p.depth as f64;
        let bottom = top - strip * 0.9;
        plot_ui.polygon(
            Polygon::new(
                p.name.to_string(),
                PlotPoints::from(vec![[x0, bottom], [x1, bottom], [x1, top], [x0, top]]),
            )
            .fill_color(crate::ui::palette::phase_fill(&p.name))
            .stroke(egui::Stroke::NONE)
            .allow_hover(false),
        );
        // About 6.5 points a character at the small size.
        let fits = (x1 - x0) * points_per_x > p.name.chars().count() as f64 * 6.5 + 6.0;
        if fits {
            plot_ui.text(
                egui_plot::Text::new(
                    p.name.to_string(),
                    PlotPoint::new((x0 + x1) / 2.0, (top + bottom) / 2.0),
                    egui::RichText::new(&*p.name)
                        .small()
                        .color(crate::ui::palette::FLAME_TEXT),
                )
                .allow_hover(false),
            );
        }
    }
}

/// The innermost phase of event `k`, for the chart's tooltip.
pub fn phase_at<'a>(phases: &'a [Phase], phase_of: &[Option<usize>], k: i64) -> Option<&'a str> {
    let i = (*phase_of.get(usize::try_from(k).ok()?)?)?;
    phases.get(i).map(|p| &*p.name)
}

/// The By phase holders view ([`super::snapshot_holders::HoldersTab`]): offered when the
/// snapshot has phases (the user's annotations).
pub struct PhasesTab;

impl super::snapshot_holders::HoldersTab for PhasesTab {
    fn id(&self) -> super::snapshot_holders::HoldersId {
        "phases"
    }

    fn title(&self, t: &Tr) -> &'static str {
        VIEW.get(t)
    }

    fn offered(&self, cx: &super::snapshot_holders::HoldersCx<'_>) -> bool {
        !cx.shown.parts.phases.is_empty()
    }

    fn ui(
        &mut self,
        ui: &mut egui::Ui,
        cx: &mut super::snapshot_holders::HoldersCx<'_>,
    ) -> Option<usize> {
        let shown = cx.shown;
        phases_ui(ui, cx.t, &shown.parts.phases, &shown.by_phase, cx.when)
    }
}

/// The By phase view; the event to go to when a phase is clicked.
pub fn phases_ui(
    ui: &mut egui::Ui,
    t: &Tr,
    phases: &[Phase],
    by_phase: &[PhaseHolding],
    when: &str,
) -> Option<usize> {
    ui.columns(2, |cols| {
        let picked = phase_table(&mut cols[0], t, phases);
        live_by_phase_table(&mut cols[1], t, by_phase, when);
        picked
    })
}

/// MB with two decimals, grouped.
fn mb(b: i64) -> String {
    grouped(bytes_to_mib(b), 2)
}

/// The phases, nested by indent; the event to go to when one is clicked (its peak).
fn phase_table(ui: &mut egui::Ui, t: &Tr, phases: &[Phase]) -> Option<usize> {
    let mut picked = None;
    ui.weak(HINT.get(t));
    // Only the rows in view are laid out (a trace may annotate every op): row 0 is the
    // header, row i the phase i − 1; the columns keep a minimum width so that they move little
    // as rows scroll by.
    let row_height = ui.text_style_height(&egui::TextStyle::Body) + ui.spacing().item_spacing.y;
    egui::ScrollArea::vertical()
        .id_salt("snapshot_phases")
        .auto_shrink([false, false])
        .show_rows(ui, row_height, phases.len() + 1, |ui, rows| {
            egui::Grid::new("snapshot_phases_grid")
                .striped(true)
                .min_col_width(COLUMN_WIDTH)
                .show(ui, |ui| {
                    for r in rows {
                        let Some(p) = r.checked_sub(1).and_then(|i| phases.get(i)) else {
                            for h in HEADERS {
                                ui.strong(h.get(t));
                            }
                            ui.end_row();
                            continue;
                        };
                        let name = format!("{}{}", "    ".repeat(p.depth), p.name);
                        let go = p.peak_event.or(p.events.map(|e| e.0));
                        if ui
                            .add_enabled(go.is_some(), egui::Button::new(name).frame(false))
                            .clicked()
                        {
                            picked = go;
                        }
                        ui.label(p.events.map_or_else(
                            || "–".to_string(),
                            |(f, l)| format!("{}–{}", grouped(f as f64, 0), grouped(l as f64, 0)),
                        ));
                        ui.label(mb(p.allocated_before));
                        ui.label(mb(p.peak_allocated));
                        ui.label(mb(p.allocated_after));
                        ui.end_row();
                    }
                });
        });
    picked
}

/// The live blocks by the phase that allocated them, heaviest first.
fn live_by_phase_table(ui: &mut egui::Ui, t: &Tr, by_phase: &[PhaseHolding], when: &str) {
    ui.strong(LIVE.get(t).replace("{when}", when));
    egui::Grid::new("snapshot_live_by_phase")
        .striped(true)
        .show(ui, |ui| {
            for h in by_phase {
                ui.label(format!("{} MB", mb(h.bytes)));
                ui.label(h.blocks.to_string());
                ui.label(match &h.allocated_in {
                    AllocatedIn::Phase(n) => n.to_string(),
                    AllocatedIn::NoPhase => OUTSIDE.get(t).to_string(),
                    AllocatedIn::BeforeTrace => BEFORE.get(t).to_string(),
                });
                ui.end_row();
            }
        });
}
