//! The bottom pane's contract: each view below the chart (details, steps, call stacks, diff, …)
//! is one type implementing [`BottomPane`], listed once in [`super::bottom_panes`]. The app
//! draws the tab strip from that list (a tab is offered when the pane says so:
//! [`BottomPane::offered`]) and the chosen pane ([`ViewState::tab`](crate::ui::state::ViewState)); it knows
//! no pane by name.
//!
//! Adding a pane: a file in `ui/panes/` with a type implementing [`BottomPane`] and a
//! `pub const TAB: TabId`, one line in [`super::bottom_panes`], its strings in `ui/i18n.rs`.

use std::any::Any;

use super::PaneCx;
use crate::analysis::RankView;
use crate::ui::i18n::Tr;
use crate::ui::state::TabId;

/// True when the rank recorded Python call stacks.
pub fn has_call_stacks(view: &RankView) -> bool {
    view.data
        .stacks
        .as_ref()
        .is_some_and(|s| !s.stacks.is_empty())
}

/// Any pane as `Any`, so the app and tests can reach a pane's own fields (the details table's
/// copy) by its type; implemented for every type.
pub trait AsAny {
    /// The pane, as `Any`.
    fn as_any(&self) -> &dyn Any;
    /// The same, mutable.
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: Any> AsAny for T {
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// One view of the bottom pane.
pub trait BottomPane: AsAny {
    /// Its id: what [`ViewState::tab`](crate::ui::state::ViewState) holds when it is shown.
    fn id(&self) -> TabId;

    /// The tab's title in the UI's language (it may count what the rank has).
    fn title(&self, t: &'static Tr, cx: &PaneCx<'_>) -> String;

    /// Whether its tab is offered for the rank (and comparison) in `cx`: a pane asks of the
    /// rank what it needs itself. By default always.
    fn offered(&self, cx: &PaneCx<'_>) -> bool {
        let _ = cx;
        true
    }

    /// Draws the pane: reads the state and the rank through `cx`, says what should change by
    /// pushing commands to `cx.out`, keeps its own table state in `self`.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>);
}

/// The registered panes, in tab order, and which one is shown.
pub struct BottomPanes {
    panes: Vec<Box<dyn BottomPane>>,
}

impl Default for BottomPanes {
    fn default() -> Self {
        BottomPanes {
            panes: super::bottom_panes(),
        }
    }
}

impl BottomPanes {
    /// The pane of type `P`, if registered.
    pub fn get<P: BottomPane + 'static>(&self) -> Option<&P> {
        // `(**p)`: the pane inside the box (the box itself is `Any` too).
        self.panes
            .iter()
            .find_map(|p| (**p).as_any().downcast_ref())
    }

    /// The same, mutable.
    pub fn get_mut<P: BottomPane + 'static>(&mut self) -> Option<&mut P> {
        self.panes
            .iter_mut()
            .find_map(|p| (**p).as_any_mut().downcast_mut())
    }

    /// The tab to show: the chosen one when it is offered, else the first (the details).
    pub fn shown(&self, cx: &PaneCx<'_>) -> TabId {
        let offered = |id: TabId| self.panes.iter().any(|p| p.id() == id && p.offered(cx));
        if offered(cx.state.tab) {
            cx.state.tab
        } else {
            TabId::DETAILS
        }
    }

    /// True when more than the first tab is offered (then the strip is drawn).
    pub fn has_choice(&self, cx: &PaneCx<'_>) -> bool {
        self.panes.iter().filter(|p| p.offered(cx)).count() > 1
    }

    /// The strip of tabs offered, the shown one selected; a click pushes [`ShowTab`].
    ///
    /// [`ShowTab`]: crate::ui::command::Command::ShowTab
    pub fn strip_ui(&self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let shown = self.shown(cx);
        for p in &self.panes {
            if !p.offered(cx) {
                continue;
            }
            let title = p.title(cx.t, cx);
            if ui.selectable_label(shown == p.id(), title).clicked() {
                cx.out.push(crate::ui::command::Command::ShowTab(p.id()));
            }
        }
    }

    /// Draws the shown pane.
    pub fn ui(&mut self, ui: &mut egui::Ui, cx: &mut PaneCx<'_>) {
        let shown = self.shown(cx);
        if let Some(p) = self.panes.iter_mut().find(|p| p.id() == shown) {
            p.ui(ui, cx);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A pane is found by its type (not the box it is kept in, which is `Any` too).
    #[test]
    fn a_registered_pane_is_found_by_its_type() {
        let mut panes = BottomPanes::default();
        assert!(
            panes
                .get::<super::super::details_table::DetailsPane>()
                .is_some()
        );
        assert!(panes.get_mut::<super::super::steps::StepsPane>().is_some());
    }
}
