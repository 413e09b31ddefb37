//! The memory-by-module pane: the `nn.Module` tree of the rank (from its call stacks:
//! [`crate::model::ModuleTree`]) with what each module holds at the cursor, else at the peak
//! of Operator Allocated, on its own and with the modules under it, and what it allocated in
//! forward and in backward (by role, in the cell's tooltip). A click on a module filters the
//! details table to its blocks (the Module column), which the chart then marks; a module with
//! children folds.
//!
//! Its texts are written here, both languages side by side ([`Text`]); it is registered by one
//! line in [`super::bottom_panes`].

use std::collections::BTreeSet;
use std::sync::Arc;

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::details_table::DetailsFilter;
use crate::analysis::modules::{ModulesHeld, Pass, RoleBytes, allocated_by_phase, held};
use crate::analysis::{RankView, ViewId};
use crate::model::{ModuleTree, Role, TagKind, ns_to_ms};
use crate::ui::command::{Command, TabId};
use crate::ui::format::{MemUnit, bytes, bytes_in, grouped};
use crate::ui::i18n::{Text, Tr};

/// The tab's id.
pub const TAB: TabId = TabId("modules");

/// The tab's title.
pub const TITLE: Text = Text {
    en: "Memory by module",
    zh: "按模块的内存",
};
/// The heading at the cursor (`{ms}`).
pub const AT_CURSOR: Text = Text {
    en: "Held at the cursor ({ms} ms)",
    zh: "光标处占用（{ms} ms）",
};
/// The heading at the peak (`{ms}`).
pub const AT_PEAK: Text = Text {
    en: "Held at the peak of Operator Allocated ({ms} ms)",
    zh: "Operator Allocated 峰值处占用（{ms} ms）",
};
/// What is live and what no module holds (`{live}`, `{outside}`).
pub const LIVE: Text = Text {
    en: "{live} live in blocks; {outside} of it allocated outside every module",
    zh: "存活内存块共 {live}，其中 {outside} 在所有模块之外分配",
};
/// The columns' headers.
pub const HEADERS: [Text; 6] = [
    Text {
        en: "Module",
        zh: "模块",
    },
    Text {
        en: "Held",
        zh: "占用",
    },
    Text {
        en: "Self",
        zh: "自身",
    },
    Text {
        en: "Blocks",
        zh: "内存块",
    },
    Text {
        en: "Forward",
        zh: "前向",
    },
    Text {
        en: "Backward",
        zh: "反向",
    },
];
/// The columns' tooltips.
pub const HEADER_HOVER: [Text; 6] = [
    Text {
        en: "The module as the trace names it; a click shows its blocks in the details table",
        zh: "模块名（与 trace 一致）；单击在详情表中查看其内存块",
    },
    Text {
        en: "Bytes alive then that were allocated in its forward or in a module under it \
             (backward blocks count for the module of their forward op)",
        zh: "此时存活、在其前向或其子模块中分配的字节（反向内存块计入其前向算子的模块）",
    },
    Text {
        en: "The part of Held allocated in this module and in none under it",
        zh: "占用中只在本模块（不在子模块）分配的部分",
    },
    Text {
        en: "Blocks counted in Held",
        zh: "占用所计的内存块数",
    },
    Text {
        en: "All it allocated in the forward pass over the profile (hover: by role)",
        zh: "整个采集期间前向中分配的总量（悬停：按角色）",
    },
    Text {
        en: "All it allocated in the backward pass over the profile (hover: by role)",
        zh: "整个采集期间反向中分配的总量（悬停：按角色）",
    },
];
/// Said when no pass tells forward from backward.
pub const NO_PHASES: Text = Text {
    en: "No forward or backward pass found: what each module allocated per pass is left out.",
    zh: "未找到前向或反向阶段：不显示各模块按阶段的分配量。",
};

/// Which modules are folded (by path): the pane's choice.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModuleFolds {
    /// Folded module paths.
    pub folded: BTreeSet<String>,
}

impl crate::ui::choices::Choice for ModuleFolds {
    const ID: &'static str = "modules";
}

/// The modules tab.
#[derive(Default)]
pub struct ModulesPane {
    /// What each module allocated per pass, for the view it was worked out for.
    allocated: Option<(ViewId, Arc<Vec<[RoleBytes; 2]>>)>,
    /// What the modules hold at a time (ns from the origin), for a view.
    held: Option<(ViewId, i64, Arc<ModulesHeld>)>,
}

/// True when the rank's call stacks name modules.
pub fn has_modules(view: &RankView) -> bool {
    view.data.module_tree.is_some()
}

impl ModulesPane {
    /// What each module allocated per pass (worked out once per view).
    fn allocated(&mut self, view: &RankView, tree: &ModuleTree) -> Arc<Vec<[RoleBytes; 2]>> {
        match &self.allocated {
            Some((id, a)) if *id == view.id() => Arc::clone(a),
            _ => {
                let a = match view.data.stacks.as_ref() {
                    Some(stacks) => Arc::new(allocated_by_phase(&view.data, stacks, tree)),
                    None => Arc::default(),
                };
                self.allocated = Some((view.id(), Arc::clone(&a)));
                a
            }
        }
    }

    /// What the modules hold at `at` (ns from the origin; worked out when it changes).
    fn held(&mut self, view: &RankView, tree: &ModuleTree, at: i64) -> Arc<ModulesHeld> {
        match &self.held {
            Some((id, t, h)) if *id == view.id() && *t == at => Arc::clone(h),
            _ => {
                let rows = view
                    .live_index()
                    .alive_at(view.data.time_origin_ns.saturating_add(at));
                let h = match view.data.stacks.as_ref() {
                    Some(stacks) => Arc::new(held(&view.data, stacks, tree, &rows)),
                    None => Arc::default(),
                };
                self.held = Some((view.id(), at, Arc::clone(&h)));
                h
            }
        }
    }
}

/// The time the pane shows: the cursor, else the peak of Operator Allocated (first reached).
fn shown_time(cx: &PaneCx<'_>) -> Option<(i64, bool)> {
    if let Some(c) = cx.state.link.cursor {
        return Some((c, true));
    }
    crate::analysis::peak(cx.view.operator_allocated()?).map(|p| (p.time, false))
}

impl super::tab::BottomPane for ModulesPane {
    fn id(&self) -> TabId {
        TAB
    }

    fn title(&self, t: &'static Tr, _cx: &PaneCx<'_>) -> String {
        TITLE.get(t).to_string()
    }

    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        has_modules(cx.view)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let view = Arc::clone(cx.view);
        let Some(tree) = view.data.module_tree.as_ref() else {
            return;
        };
        let t = cx.t;
        let allocated = self.allocated(&view, tree);
        let Some((at, at_cursor)) = shown_time(cx) else {
            return;
        };
        let held = self.held(&view, tree, at);
        let ms = format!("{:.3}", ns_to_ms(at));
        let title = if at_cursor { AT_CURSOR } else { AT_PEAK };
        ui.horizontal(|ui| {
            ui.strong(title.get(t).replace("{ms}", &ms));
            ui.label(
                LIVE.get(t)
                    .replace("{live}", &bytes(held.total))
                    .replace("{outside}", &bytes(held.unattributed)),
            );
        });
        if allocated.is_empty() {
            ui.weak(NO_PHASES.get(t));
        }
        let folds = cx.state.choice::<ModuleFolds>();
        tree_table(
            ui,
            cx,
            tree,
            &held,
            &allocated,
            &folds,
            cx.state.choice::<DetailsFilter>(),
        );
    }
}

/// The rows shown: depth first, without the modules under a folded one.
fn shown_rows(tree: &ModuleTree, folds: &ModuleFolds) -> Vec<u32> {
    let mut out = Vec::new();
    let mut hidden_under: Option<u32> = None;
    for n in tree.depth_first() {
        let m = &tree.nodes[n as usize];
        if let Some(depth) = hidden_under {
            if m.depth > depth {
                continue;
            }
            hidden_under = None;
        }
        if folds.folded.contains(&m.path) {
            hidden_under = Some(m.depth);
        }
        out.push(n);
    }
    out
}

/// The tree as a table: module (indented, a fold toggle when it has children), held, self,
/// blocks, forward, backward.
fn tree_table(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    tree: &ModuleTree,
    held: &ModulesHeld,
    allocated: &[[RoleBytes; 2]],
    folds: &ModuleFolds,
    filter: DetailsFilter,
) {
    let t = cx.t;
    let rows = shown_rows(tree, folds);
    let has_children: Vec<bool> = {
        let mut v = vec![false; tree.nodes.len()];
        for m in &tree.nodes {
            if let Some(p) = v.get_mut(m.parent as usize) {
                *p = true;
            }
        }
        v
    };
    let unit = MemUnit::for_list(held.modules.iter().map(|h| h.bytes));
    let pass_total = |n: u32, pass: Pass| -> i64 {
        allocated
            .get(n as usize)
            .map_or(0, |p| p[pass as usize].iter().sum())
    };
    // The Forward and Backward columns: one unit each column, from its largest value (as the
    // README's rule says; "11.70 GB" above "1,945.69 MB" read as the smaller one).
    let pass_units: Vec<MemUnit> = Pass::ALL
        .iter()
        .map(|&pass| MemUnit::for_list((0..allocated.len() as u32).map(|n| pass_total(n, pass))))
        .collect();
    let filtered = filter.tags.get(&TagKind::Module).cloned();
    let h = egui::TextStyle::Body.resolve(ui.style()).size + 6.0;
    let columns = if allocated.is_empty() { 4 } else { 6 };
    let mut table = TableBuilder::new(ui)
        .striped(true)
        .id_salt("modules_table")
        .cell_layout(egui::Layout::right_to_left(egui::Align::Center))
        .column(TableColumn::remainder().at_least(220.0).clip(true));
    // Held is wide enough for its share bar to read.
    table = table.column(TableColumn::auto().at_least(150.0));
    for _ in 2..columns {
        table = table.column(TableColumn::auto().at_least(80.0));
    }
    table
        .header(h, |mut hr| {
            for k in 0..columns {
                hr.col(|ui| {
                    // The module column reads left to right, the numbers right-aligned.
                    let layout = if k == 0 {
                        egui::Layout::left_to_right(egui::Align::Center)
                    } else {
                        egui::Layout::right_to_left(egui::Align::Center)
                    };
                    ui.with_layout(layout, |ui| {
                        ui.strong(HEADERS[k].get(t))
                            .on_hover_text(HEADER_HOVER[k].get(t));
                    });
                });
            }
        })
        .body(|body| {
            body.rows(h, rows.len(), |mut row| {
                let n = rows[row.index()];
                let m = &tree.nodes[n as usize];
                let hd = held.modules.get(n as usize).copied().unwrap_or_default();
                row.col(|ui| {
                    ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
                        ui.add_space(14.0 * m.depth as f32);
                        let toggle = egui::vec2(TOGGLE_WIDTH, h - 6.0);
                        if has_children[n as usize] {
                            let folded = folds.folded.contains(&m.path);
                            let arrow = if folded { "▸" } else { "⏷" };
                            if ui
                                .add_sized(toggle, egui::Button::new(arrow).small().frame(false))
                                .clicked()
                            {
                                let path = m.path.clone();
                                cx.out.push(Command::choose(move |f: &mut ModuleFolds| {
                                    if !f.folded.remove(&path) {
                                        f.folded.insert(path.clone());
                                    }
                                }));
                            }
                        } else {
                            ui.allocate_exact_size(toggle, egui::Sense::hover());
                        }
                        // The filter reads innermost first, as the Module column does.
                        let shown = crate::model::tags::module_innermost_first(&m.path);
                        let selected = filtered.as_deref() == Some(shown.as_str());
                        if ui
                            .selectable_label(selected, &m.name)
                            .on_hover_text(&m.path)
                            .clicked()
                        {
                            let path = (!selected).then(|| shown.clone());
                            cx.out.push(Command::choose(move |f: &mut DetailsFilter| {
                                match &path {
                                    Some(p) => f.tags.insert(TagKind::Module, p.clone()),
                                    None => f.tags.remove(&TagKind::Module),
                                };
                            }));
                            if !selected {
                                cx.out.push(Command::ShowTab(TabId::DETAILS));
                            }
                        }
                    });
                });
                row.col(|ui| {
                    share_bar(ui, hd.bytes, held.total);
                    ui.label(bytes_in(hd.bytes, unit));
                });
                row.col(|ui| {
                    ui.label(bytes_in(hd.self_bytes, unit));
                });
                row.col(|ui| {
                    ui.label(grouped(hd.blocks as f64, 0));
                });
                for pass in Pass::ALL {
                    if allocated.is_empty() {
                        break;
                    }
                    row.col(|ui| {
                        let r = ui.label(bytes_in(pass_total(n, pass), pass_units[pass as usize]));
                        if let Some(p) = allocated.get(n as usize) {
                            r.on_hover_ui(|ui| by_role_ui(ui, t, &p[pass as usize]));
                        }
                    });
                }
            });
        });
}

/// Width of a module's fold toggle (and of the space in its place for a leaf).
const TOGGLE_WIDTH: f32 = 16.0;

/// A bar behind a Held cell: its share of the live blocks.
fn share_bar(ui: &egui::Ui, bytes: i64, total: i64) {
    if bytes <= 0 || total <= 0 {
        return;
    }
    let cell = ui.max_rect();
    let share = (bytes as f64 / total as f64).clamp(0.0, 1.0) as f32;
    let bar = egui::Rect::from_min_max(
        egui::pos2(cell.right() - cell.width() * share, cell.top() + 2.0),
        egui::pos2(cell.right(), cell.bottom() - 2.0),
    );
    let fill = ui.visuals().selection.bg_fill.gamma_multiply(0.35);
    ui.painter().rect_filled(bar, 2.0, fill);
}

/// A pass's bytes by role, for a tooltip.
fn by_role_ui(ui: &mut egui::Ui, t: &Tr, by_role: &RoleBytes) {
    egui::Grid::new("module_roles")
        .num_columns(2)
        .show(ui, |ui| {
            for role in Role::ALL {
                let b = by_role[role.index()];
                if b == 0 {
                    continue;
                }
                ui.label(super::roles::role_name(t, role));
                ui.label(bytes(b));
                ui.end_row();
            }
        });
}
