//! The Live at cursor pane: the curves at the cursor and how Operator Allocated splits into the
//! live blocks and what operator_memory does not hold; the totals per operator and the largest
//! blocks (a click selects the block in the table and marks its lifetime on the chart); Copy of
//! both lists as TSV.

use super::PaneCx;
use crate::analysis::{
    Breakdown, GroupBy, Part, block_lifetime, breakdown_at, live_at, reconcile, value_at,
};
use crate::model::NO_STACK;
use crate::model::ns_to_ms;
use crate::ui::command::Command;
use crate::ui::format::{MemUnit, bytes_in, grouped, ms};

/// How many blocks and operators the pane lists.
const LIVE_TOP: usize = 25;

/// Draws the pane for the state's cursor (nothing without one).
pub fn live_ui(ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
    let Some(at) = cx.state.link.cursor else {
        return;
    };
    let (view, t) = (cx.view, cx.t);
    let data = &view.data;
    let live = live_at(data, view.live_index(), at);
    let overall = view.series(GroupBy::Overall);
    let rec = reconcile(overall, at, live.total);
    let name = |id: u32| data.display_name(id);
    let allocated_at = |r: usize| match block_lifetime(data, r).and_then(|l| l.allocated) {
        Some(a) => ms(ns_to_ms(a)),
        None => t.before_capture.to_string(),
    };
    ui.horizontal(|ui| {
        ui.heading(t.live_title);
        if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
            // Plain numbers (MB, ms) with the unit in the header: Excel sums them.
            let mib = |b: i64| b as f64 / crate::model::MIB as f64;
            let mut tsv = format!("{}\t{}(MB)\t{}\n", t.operator, t.total, t.blocks);
            for &(id, b, n) in &live.by_name {
                tsv.push_str(&format!("{}\t{}\t{n}\n", name(id), mib(b)));
            }
            tsv.push_str(&format!(
                "\n{}\t{}(MB)\t{}(ms)\n",
                t.operator, t.size, t.allocated_at
            ));
            for &r in &live.rows {
                let r = r as usize;
                let at = block_lifetime(data, r)
                    .and_then(|l| l.allocated)
                    .map_or(String::new(), |a| ns_to_ms(a).to_string());
                tsv.push_str(&format!(
                    "{}\t{}\t{at}\n",
                    name(data.operators.name[r]),
                    mib(data.operators.size[r]),
                ));
            }
            ui.ctx().copy_text(tsv);
        }
        if ui.button(t.close).clicked() {
            cx.out.push(Command::SetCursor(None));
        }
    });
    // One unit for the header and the curves under it, from the largest of them.
    let unit = MemUnit::for_list(
        overall
            .iter()
            .filter_map(|s| value_at(s, at))
            .chain([rec.live_blocks, live.total])
            .chain(rec.not_in_operator_memory),
    );
    ui.label((t.live_summary)(
        &ms(ns_to_ms(at)),
        &grouped(live.rows.len() as f64, 0),
        &bytes_in(live.total, unit),
    ));
    ui.separator();
    egui::ScrollArea::both().show(ui, |ui| {
        ui.strong(t.curves_at_cursor);
        egui::Grid::new("live_curves")
            .striped(true)
            .min_col_width(80.0)
            .show(ui, |ui| {
                for s in overall {
                    ui.label(s.series.name.as_str());
                    ui.label(value_at(s, at).map_or("–".into(), |v| bytes_in(v, unit)));
                    ui.end_row();
                }
                ui.strong(t.live_blocks_sum);
                ui.strong(bytes_in(rec.live_blocks, unit));
                ui.end_row();
                if let Some(rest) = rec.not_in_operator_memory {
                    ui.strong(t.not_in_operator_memory)
                        .on_hover_text(t.not_in_operator_memory_hover);
                    ui.strong(bytes_in(rest, unit));
                    ui.end_row();
                }
            });
        ui.add_space(8.0);
        breakdown_ui(ui, t, &breakdown_at(data, overall, at, live.total));
        if super::roles::has_roles(view) {
            ui.add_space(8.0);
            super::roles::live_roles_ui(ui, t, data, &live.rows);
        }
        ui.add_space(8.0);
        ui.strong(t.by_operator);
        egui::Grid::new("live_by_name")
            .striped(true)
            .min_col_width(60.0)
            .show(ui, |ui| {
                ui.label(t.operator);
                ui.label(t.total);
                ui.label(t.blocks);
                ui.end_row();
                let unit = MemUnit::for_list(live.by_name.iter().take(LIVE_TOP).map(|x| x.1));
                for &(id, b, n) in live.by_name.iter().take(LIVE_TOP) {
                    ui.label(name(id));
                    ui.label(bytes_in(b, unit));
                    ui.label(grouped(n as f64, 0));
                    ui.end_row();
                }
            });
        ui.add_space(8.0);
        ui.strong(t.largest_blocks);
        egui::Grid::new("live_largest")
            .striped(true)
            .min_col_width(60.0)
            .show(ui, |ui| {
                ui.label(t.operator);
                ui.label(t.size);
                ui.label(t.allocated_at);
                ui.end_row();
                let unit = MemUnit::for_list(
                    live.rows
                        .iter()
                        .take(LIVE_TOP)
                        .map(|&r| data.operators.size[r as usize]),
                );
                for &r in live.rows.iter().take(LIVE_TOP) {
                    let row = r as usize;
                    let selected = cx.state.marked_row == Some(r);
                    let mut label = ui.selectable_label(selected, name(data.operators.name[row]));
                    // Who allocated it, when the profile recorded call stacks.
                    if let Some(s) = data.stacks.as_ref()
                        && let Some(id) = s.row_stack.get(row).copied().filter(|&id| id != NO_STACK)
                    {
                        label = label.on_hover_ui(|ui| super::groups::stack_tooltip(ui, s, id));
                    }
                    if label.clicked() {
                        cx.out.push(Command::MarkRow(Some(r)));
                    }
                    ui.label(bytes_in(data.operators.size[row], unit));
                    ui.label(allocated_at(row));
                    ui.end_row();
                }
            });
    });
}

/// A colour per breakdown part (innermost darkest).
fn part_color(p: Part) -> egui::Color32 {
    match p {
        Part::LiveBlocks => crate::ui::palette::BREAKDOWN[0],
        Part::Unattributed => crate::ui::palette::BREAKDOWN[1],
        Part::PoolCached => crate::ui::palette::BREAKDOWN[2],
        Part::Workspace => crate::ui::palette::BREAKDOWN[3],
        Part::Runtime => crate::ui::palette::BREAKDOWN[4],
        Part::OtherProcesses => crate::ui::palette::BREAKDOWN[5],
    }
}

/// Where the memory is at the cursor: a stacked bar of the parts and their sizes, adding up to
/// the outermost curve (Device, APP Reserved or Operator Reserved).
fn breakdown_ui(ui: &mut egui::Ui, t: &crate::ui::i18n::Tr, b: &Breakdown) {
    ui.strong(t.breakdown_title);
    let positive: i64 = b.parts.iter().map(|p| p.1.max(0)).sum();
    if positive > 0 {
        let width = ui.available_width().clamp(120.0, 420.0);
        let (rect, _) = ui.allocate_exact_size(egui::vec2(width, 14.0), egui::Sense::hover());
        let painter = ui.painter_at(rect);
        let mut x = rect.left();
        for &(part, v) in &b.parts {
            if v <= 0 {
                continue;
            }
            let w = rect.width() * (v as f32 / positive as f32);
            painter.rect_filled(
                egui::Rect::from_min_size(egui::pos2(x, rect.top()), egui::vec2(w, rect.height())),
                0.0,
                part_color(part),
            );
            x += w;
        }
    }
    let unit = MemUnit::for_list(
        b.parts
            .iter()
            .map(|p| p.1)
            .chain(b.total)
            .chain(b.components.iter().take(4).map(|c| c.1)),
    );
    egui::Grid::new("live_breakdown")
        .striped(true)
        .min_col_width(60.0)
        .show(ui, |ui| {
            for &(part, v) in &b.parts {
                let k = Part::ALL.iter().position(|&p| p == part).unwrap_or(0);
                ui.horizontal(|ui| {
                    ui.colored_label(part_color(part), "■");
                    ui.label(t.breakdown_parts[k])
                        .on_hover_text(t.breakdown_hovers[k]);
                });
                ui.label(bytes_in(v, unit));
                ui.end_row();
            }
            if let Some(total) = b.total {
                ui.strong(t.breakdown_total);
                ui.strong(bytes_in(total, unit));
                ui.end_row();
            }
        });
    if !b.components.is_empty() {
        ui.horizontal_wrapped(|ui| {
            ui.weak(t.breakdown_components);
            for (name, v) in b.components.iter().take(4) {
                // One piece each: a name and its size never break apart.
                ui.add(
                    egui::Label::new(format!("{name} {}", bytes_in(*v, unit)))
                        .wrap_mode(egui::TextWrapMode::Extend),
                );
            }
        });
    }
}
