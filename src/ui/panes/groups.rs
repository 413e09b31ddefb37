//! The details table grouped by who allocated the blocks: by call stack, source line or host
//! operator (with calls and peak live, as TensorBoard's Memory Statistics had). The groups are
//! of the blocks the table's filters match; clicking a group lists its blocks.

use std::sync::Arc;

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use crate::analysis::stacks::{Group, GroupKey, group_labels, group_rows, rows_with_key};
use crate::analysis::{RankView, SortDir, TableQuery, ViewId, query};
use crate::model::{CallStacks, NO_STACK, bytes_to_mib};
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::i18n::Tr;
use crate::ui::sorts::SortTable;
use crate::ui::state::{RowSubset, SubsetWhy};

/// The grouped table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: SortTable = SortTable("groups");

/// A column of the grouped table, in display order (its headers are `Tr::group_headers`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupColumn {
    /// The group's label (call stack, line, op, role).
    Group,
    /// Blocks in the group.
    Blocks,
    /// Bytes allocated in all.
    Total,
    /// The most live at once.
    PeakLive,
    /// Calls of its op.
    Calls,
}

crate::ui::sorts::sort_columns! {
    GroupColumn { Group, Blocks, Total, PeakLive, Calls }
}

impl GroupColumn {
    /// Every column, in display order.
    pub const ALL: [GroupColumn; 5] = [
        GroupColumn::Group,
        GroupColumn::Blocks,
        GroupColumn::Total,
        GroupColumn::PeakLive,
        GroupColumn::Calls,
    ];
}

/// What the groups were computed for: the view, the query (all pages, no sort), the key.
type GroupInput = (ViewId, TableQuery, GroupKey);

/// Groups, the rows they are of, and their labels (`None`: named by the UI).
#[derive(Clone)]
pub struct Groups {
    /// The rows grouped.
    pub rows: Arc<Vec<u32>>,
    /// The groups, largest total first.
    pub groups: Arc<Vec<Group>>,
    /// Each group's label ([`group_labels`]), computed once with the groups.
    pub labels: Arc<Vec<Option<String>>>,
}

/// Groups and what they were computed for.
struct Grouped {
    input: GroupInput,
    out: Groups,
}

/// The groups of the last query, kept while nothing they depend on changes.
#[derive(Default)]
pub struct GroupCache {
    last: Option<Grouped>,
}

impl GroupCache {
    /// The rows `q` matches (all pages), their groups under `by` and the groups' labels.
    pub fn groups(
        &mut self,
        view: &RankView,
        stacks: &CallStacks,
        q: &TableQuery,
        by: GroupKey,
    ) -> Groups {
        let q = TableQuery {
            page: 0,
            page_size: usize::MAX,
            sort: None,
            ..q.clone()
        };
        let input = (view.id(), q, by);
        if let Some(g) = &self.last
            && g.input == input
        {
            return g.out.clone();
        }
        let rows = Arc::new(query(&view.data, &view.sort_cache, &input.1).rows);
        let groups = group_rows(&view.data, stacks, &rows, by);
        let labels = Arc::new(group_labels(stacks, by, &groups));
        let out = Groups {
            rows,
            groups: Arc::new(groups),
            labels,
        };
        self.last = Some(Grouped {
            input,
            out: out.clone(),
        });
        out
    }
}

/// A group's label in the UI language: its own, or what the UI calls an unknown key.
pub fn label<'a>(t: &'a Tr, by: GroupKey, label: &'a Option<String>) -> &'a str {
    match label {
        Some(l) if by == GroupKey::Role => {
            crate::model::Role::parse(l).map_or(l.as_str(), |r| super::roles::role_name(t, r))
        }
        Some(l) => l,
        None if by == GroupKey::Operator => t.no_host_op,
        None => t.no_stack,
    }
}

/// The order the grouped table shows `groups` in: as grouped (largest total first), or by a
/// header click (ties keep the grouped order).
pub fn order(groups: &[Group], names: &[&str], sort: Option<(GroupColumn, SortDir)>) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..groups.len()).collect();
    if let Some((col, dir)) = sort {
        idx.sort_by(|&a, &b| {
            let (x, y) = (&groups[a], &groups[b]);
            let o = match col {
                GroupColumn::Group => names[a].cmp(names[b]),
                GroupColumn::Blocks => x.blocks.cmp(&y.blocks),
                GroupColumn::Total => x.bytes.cmp(&y.bytes),
                GroupColumn::PeakLive => x.peak_live.cmp(&y.peak_live),
                GroupColumn::Calls => x.calls.cmp(&y.calls),
            };
            if dir == SortDir::Desc { o.reverse() } else { o }
        });
    }
    idx
}

/// The groups as TSV with a header, in the table's order (Copy while the table is grouped).
pub fn groups_tsv(
    t: &Tr,
    by: GroupKey,
    g: &Groups,
    sort: Option<(GroupColumn, SortDir)>,
) -> String {
    let (groups, names) = (&g.groups, names(t, by, g));
    let mut out = t.group_headers.join("\t");
    out.push('\n');
    for i in order(groups, &names, sort) {
        let g = &groups[i];
        let calls = g.calls.map_or(String::new(), |c| c.to_string());
        out.push_str(&format!(
            "{}\t{}\t{}\t{}\t{calls}\n",
            names[i],
            g.blocks,
            crate::model::units::mib(g.bytes),
            crate::model::units::mib(g.peak_live),
        ));
    }
    out
}

/// Every group's label in the UI language.
fn names<'a>(t: &'a Tr, by: GroupKey, g: &'a Groups) -> Vec<&'a str> {
    g.labels.iter().map(|l| label(t, by, l)).collect()
}

/// The grouped table; a click on a group lists its blocks.
pub fn groups_ui(
    ui: &mut egui::Ui,
    cx: &mut PaneCx<'_>,
    cache: &mut GroupCache,
    stacks: &CallStacks,
    q: &TableQuery,
    by: GroupKey,
) {
    let t = cx.t;
    // While the window is dragged or wheeled, the last groups stay (grouping a big rank at
    // every frame would stall the drag); they are computed again once it settles.
    let grouped_rows = match cache.last.as_ref() {
        Some(g) if cx.state.link.moving && g.input.0 == cx.view.id() && g.input.2 == by => {
            ui.ctx().request_repaint();
            g.out.clone()
        }
        _ => cache.groups(cx.view, stacks, q, by),
    };
    let (rows, groups) = (&grouped_rows.rows, &grouped_rows.groups);
    let names = names(t, by, &grouped_rows);
    let shown = order(groups, &names, cx.state.sorts.get(SORT));
    ui.horizontal(|ui| {
        ui.label((t.rows)(&grouped(groups.len() as f64, 0)));
        if ui.button(t.copy).on_hover_text(t.copy_hover).clicked() {
            cx.out.push(Command::Copy);
        }
    });
    let text_h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
    let mut clicked = None;
    // The label column takes what the four number columns leave (they are never cut off, with
    // Live at cursor open too).
    let label_w = (ui.available_width() - 4.0 * 110.0).clamp(160.0, 640.0);
    let sort = cx.state.sorts.get::<GroupColumn>(SORT);
    let out = &mut *cx.out;
    egui::ScrollArea::horizontal()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let mut table = TableBuilder::new(ui)
                .striped(true)
                .resizable(true)
                .auto_shrink([false, false])
                .sense(egui::Sense::click())
                .cell_layout(egui::Layout::left_to_right(egui::Align::Center))
                .column(TableColumn::initial(label_w).at_least(160.0).clip(true));
            for _ in 1..t.group_headers.len() {
                table = table.column(TableColumn::auto().at_least(90.0));
            }
            table
                .header(text_h + 4.0, |mut header| {
                    for (col, h) in GroupColumn::ALL.into_iter().zip(t.group_headers) {
                        header.col(|ui| {
                            let dir = sort.filter(|(c, _)| *c == col).map(|(_, d)| d);
                            if super::details_table::sort_header(ui, t, h, dir, t.group_headers[2])
                            {
                                out.push(Command::sort(SORT, col));
                            }
                        });
                    }
                })
                .body(|body| {
                    body.rows(text_h, shown.len(), |mut row| {
                        let g = &groups[shown[row.index()]];
                        let name = names[shown[row.index()]];
                        row.col(|ui| {
                            let r = ui.add(egui::Label::new(name).selectable(false));
                            if by == GroupKey::Stack && g.key != NO_STACK {
                                r.on_hover_ui(|ui| stack_tooltip(ui, stacks, g.key));
                            }
                        });
                        let calls = g.calls.map_or(String::new(), |c| grouped(c as f64, 0));
                        for text in [
                            grouped(g.blocks as f64, 0),
                            grouped(bytes_to_mib(g.bytes), 2),
                            grouped(bytes_to_mib(g.peak_live), 2),
                            calls,
                        ] {
                            row.col(|ui| {
                                ui.with_layout(
                                    egui::Layout::right_to_left(egui::Align::Center),
                                    |ui| ui.add(egui::Label::new(text).selectable(false)),
                                );
                            });
                        }
                        if row.response().clicked() {
                            clicked = Some((g.key, name));
                        }
                    });
                });
        });
    if let Some((key, name)) = clicked {
        let rows = rows_with_key(&cx.view.data, stacks, rows, by, key);
        cx.out.push(Command::FilterRows(Some(RowSubset {
            why: SubsetWhy::Group(name.to_string()),
            rows: Arc::new(rows),
        })));
    }
}

/// The frames of stack `id`, innermost first, the source line in bold.
pub fn stack_tooltip(ui: &mut egui::Ui, stacks: &CallStacks, id: u32) {
    let line = stacks.source_line(id);
    for &f in stacks.frames_of(id) {
        let text = stacks.frames.get(f);
        if Some(f) == line {
            ui.strong(text);
        } else {
            ui.weak(text);
        }
    }
}

/// A frame without its file's folder, as the tables show one.
pub use crate::analysis::stacks::short_frame;

#[cfg(test)]
mod tests {
    use super::short_frame;

    #[test]
    fn frames_lose_their_folder_only() {
        assert_eq!(
            short_frame("/workspace/llama/model.py(156): mlp_forward"),
            "model.py(156): mlp_forward"
        );
        assert_eq!(
            short_frame(r"C:\训练\模型.py(3): f(x/y)"),
            "模型.py(3): f(x/y)"
        );
        assert_eq!(
            short_frame("<string>(1): <module>"),
            "<string>(1): <module>"
        );
    }
}
