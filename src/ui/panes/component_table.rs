//! The component peak table pane (Group By Component): components whose peak reserved is
//! ≥ 100 MB with the first peak time, sortable and paginated like the details table (as in
//! Insight).

use egui_extras::{Column as TableColumn, TableBuilder};

use super::PaneCx;
use super::details_table::sort_header;
use super::pager::Pager;
use crate::analysis::{ComponentColumn, component_order};
use crate::model::{MIB, ns_to_ms};
use crate::ui::command::Command;
use crate::ui::format::grouped;
use crate::ui::state::{PagedTable, TableId};

/// The component peak table's sort, in [`crate::ui::state::ViewState::sorts`].
pub const SORT: crate::ui::sorts::SortTable = crate::ui::sorts::SortTable("components");

/// The component peak table, as a paged table: its rows depend on the rank and its sort.
pub const TABLE: TableId = TableId(&PAGED);
static PAGED: PagedTable = PagedTable {
    name: "components",
    query: |s| {
        format!(
            "{:?} {:?}",
            (s.rank, s.source, s.page_size),
            s.sorts.key(SORT)
        )
    },
};

/// The component table's own state: its pager.
#[derive(Default)]
pub struct ComponentTable {
    pager: Pager,
}

impl ComponentTable {
    /// Draws the table.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let (view, state, t) = (cx.view, cx.state, cx.t);
        let rows = view.component_peaks();
        ui.horizontal(|ui| {
            ui.strong(t.component_title);
            ui.label((t.rows)(&grouped(rows.len() as f64, 0)));
        });
        if rows.is_empty() {
            ui.label(t.component_none);
            return;
        }
        let order = component_order(rows, state.sorts.get(SORT));
        let pages = rows.len().div_ceil(state.page_size.max(1)).max(1);
        let page = state.page(TABLE).min(pages - 1);
        self.pager.ui(ui, t, state, TABLE, rows.len(), cx.out);
        let shown: Vec<usize> = order
            .into_iter()
            .skip(page * state.page_size)
            .take(state.page_size)
            .collect();
        let h = ui.text_style_height(&egui::TextStyle::Body) + 4.0;
        let out = &mut *cx.out;
        TableBuilder::new(ui)
            .striped(true)
            .column(TableColumn::initial(200.0))
            .column(TableColumn::auto())
            .column(TableColumn::auto())
            .header(h, |mut hr| {
                for col in ComponentColumn::ALL {
                    hr.col(|ui| {
                        let dir = state.sorts.dir_of(SORT, col);
                        if sort_header(ui, t, col.header(), dir, t.largest_first) {
                            out.push(Command::sort(SORT, col));
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
}
