//! The views of who holds the snapshot's memory at the moment shown, each behind one small
//! contract ([`HoldersTab`], as the bottom panes are behind `BottomPane`): its id, its title,
//! whether the snapshot offers it, and its `ui`. Table and Flame graph live here; By phase in
//! [`super::snapshot_phases`], By operator in [`super::snapshot_join`]. A new view is a type in
//! its own file and one line in [`HOLDERS_TABS`].

use std::sync::Arc;

use super::flame::draw_icicle;
use super::snapshot::{Shown, block_list, flame_look, last_allocation_of, stack_table};
use super::snapshot_join::ProfileJoining;
use super::tab::AsAny;
use crate::snapshot::AllocatorSnapshot;
use crate::ui::i18n::Tr;
use crate::ui::jobs::Jobs;

/// Which holders view is shown: a registered [`HoldersTab`]'s id.
pub type HoldersId = &'static str;

/// What a holders view draws with.
pub struct HoldersCx<'a> {
    /// The language's texts.
    pub t: &'a Tr,
    /// The job runner.
    pub jobs: &'a mut Jobs,
    /// The snapshot.
    pub snap: &'a Arc<AllocatorSnapshot>,
    /// What the view shows for the device and moment on screen.
    pub(super) shown: &'a Shown,
    /// The moment, in words ("after event #k", "at the end").
    pub when: &'a str,
    /// The profile of the run joined with the snapshot, when there is one.
    pub profile: Option<&'a mut ProfileJoining>,
}

/// One view of the live blocks at the moment shown.
pub trait HoldersTab: AsAny {
    /// Its id (what the snapshot view holds as its shown holders view).
    fn id(&self) -> HoldersId;

    /// Its tab's title in `t`'s language.
    fn title(&self, t: &Tr) -> &'static str;

    /// Whether the snapshot on screen offers it (phases need annotations, operators a joined
    /// profile). By default always.
    fn offered(&self, cx: &HoldersCx<'_>) -> bool {
        let _ = cx;
        true
    }

    /// Draws it; the event the user picked in it, if any.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut HoldersCx<'_>) -> Option<usize>;

    /// The device or the moment changed: what it picked inside itself no longer holds. By
    /// default nothing.
    fn moment_changed(&mut self) {}
}

/// The holders views, in tab order: one line each.
pub static HOLDERS_TABS: &[fn() -> Box<dyn HoldersTab>] = &[
    || Box::new(TableTab),
    || Box::new(FlameTab::default()),
    || Box::new(super::snapshot_phases::PhasesTab),
    || Box::new(super::snapshot_join::OperatorsTab),
];

/// The Table view's id (the default).
pub const TABLE: HoldersId = "table";

/// The holders by stack, beside the leak suspects (or what was held at an OOM).
pub struct TableTab;

impl HoldersTab for TableTab {
    fn id(&self) -> HoldersId {
        TABLE
    }

    fn title(&self, t: &Tr) -> &'static str {
        t.snapshot_views[0]
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut HoldersCx<'_>) -> Option<usize> {
        let (t, shown) = (cx.t, cx.shown);
        let leaks_title = if shown.parts.at_oom {
            (t.snapshot_held_at_oom)(shown.parts.leak_blocks)
        } else {
            (t.snapshot_leaks)(shown.parts.leak_blocks)
        };
        let (holders, leaks) = (&shown.summary.top_stacks, &shown.parts.leaks);
        let clicked = ui.columns(2, |cols| {
            stack_table(&mut cols[0], t, "snapshot_holders", holders, None);
            cols[1].strong(leaks_title);
            cols[1].weak(t.snapshot_leaks_hint);
            stack_table(
                &mut cols[1],
                t,
                "snapshot_leaks",
                leaks,
                Some(t.snapshot_leak_go),
            )
        });
        // A leak suspect goes to where its last never-freed block was allocated.
        let row = clicked.and_then(|i| leaks.get(i))?;
        last_allocation_of(cx.snap, &shown.parts, row)
    }
}

/// The Flame graph view's id.
pub const FLAME: HoldersId = "flame";

/// A flame graph of the live blocks, and the blocks under the frame clicked.
#[derive(Default)]
pub struct FlameTab {
    /// The frame clicked (its text) and the live blocks under it.
    pub pick: Option<(String, Vec<u32>)>,
}

impl HoldersTab for FlameTab {
    fn id(&self) -> HoldersId {
        FLAME
    }

    fn title(&self, t: &Tr) -> &'static str {
        t.snapshot_views[1]
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut HoldersCx<'_>) -> Option<usize> {
        let (t, shown) = (cx.t, cx.shown);
        ui.weak(t.snapshot_flame_hint);
        if let Some((label, rows)) = &self.pick {
            ui.strong((t.blocks_under)(label, rows.len()));
            block_list(ui, cx.snap, &shown.live, rows);
        }
        let frames = &shown.flame_frames;
        let flame = &shown.flame;
        let look = |n: usize| flame_look(t, frames, flame.nodes[n].frame);
        if let Some(node) = draw_icicle(ui, t, flame, 0, &look) {
            let label = look(node).text;
            self.pick = Some((label, flame.rows_under(node)));
        }
        None
    }

    fn moment_changed(&mut self) {
        self.pick = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each view is told apart by its id, and the table comes first: the default, and what is
    /// shown when the chosen view is no longer offered.
    #[test]
    fn the_views_have_distinct_ids_and_the_table_first() {
        let ids: Vec<HoldersId> = HOLDERS_TABS.iter().map(|make| make().id()).collect();
        assert_eq!(ids.first(), Some(&TABLE));
        let mut unique = ids.clone();
        unique.sort_unstable();
        unique.dedup();
        assert_eq!(unique.len(), ids.len(), "{ids:?}");
        assert!(ids.contains(&FLAME) && ids.contains(&super::super::snapshot_join::OPERATORS));
    }
}
