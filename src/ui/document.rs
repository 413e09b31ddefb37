//! Documents: the whole-window views. The app holds exactly one: the profile
//! ([`super::profile::ProfileDocument`], with its overview and static sub-views; also the start
//! page, before anything is open), an allocator snapshot, a folder of OOM bundles or a cluster
//! summary. Each is a type implementing [`Document`] in its own file.
//!
//! Adding one: implement [`Document`] (its title, its `ui`, the commands it handles, what it
//! offers to the menus) in the view's own file, and add its opener to
//! [`OPENERS`](super::documents::OPENERS) (opened from a path, such as a `.pickle`) or to
//! [`FROM_DISCOVERY`](super::documents::FROM_DISCOVERY) (what a folder without a profile turned
//! out to hold, such as a job's OOM bundles), in [`super::documents`]. A path no opener takes
//! opens as a profile. Nothing else in the app names it: tests reach it with
//! [`crate::ui::app::MemsightApp::document`]. rerun's `ViewClass` registry and egui_demo_lib's
//! `Demo` trait are the models.

use std::path::{Path, PathBuf};

use super::command::Command;
use super::i18n::Tr;
use super::jobs::Jobs;
use super::panes::tab::AsAny;
use super::state::ViewState;
use crate::ingest::DiscoverError;

/// What a document draws with and pushes its requests to.
pub struct DocCx<'a> {
    /// The language's texts.
    pub t: &'static Tr,
    /// The job runner, for work in the background.
    pub jobs: &'a mut Jobs,
    /// The view state (read-only: a document asks for changes through `out`).
    pub state: &'a ViewState,
    /// What the user asked for, applied after the frame.
    pub out: &'a mut Vec<Command>,
    /// The text of the path field, for a document that offers one (a file it cannot read is not
    /// a dead end).
    pub path_text: &'a mut String,
    /// The window's context, once there is one (the clipboard, the pixel scale).
    pub ctx: Option<&'a egui::Context>,
    /// What the document tells the app, applied after it returns.
    pub events: &'a mut Vec<DocEvent>,
}

/// What a document asks of the app beyond commands: things only the app owns.
pub enum DocEvent {
    /// `path` proved to be what it was opened as: it goes into the recent list.
    Opened(PathBuf),
    /// Show this document in place of the one that sent it (a folder that held a job's OOM
    /// bundles instead of a profile).
    Replace(Box<dyn Document>),
    /// Ask for a file name to save to ([`Document::save_to`] gets it).
    AskSavePath,
}

/// A whole-window view. `AsAny` (implemented for every type, as for panes) lets
/// [`crate::ui::app::MemsightApp::document`] reach it as its own type.
pub trait Document: AsAny {
    /// Its kind, for logs and tests: `"profile"`, `"snapshot"`, `"oom_folder"`, `"summary"`.
    fn kind(&self) -> &'static str;

    /// The file or folder it shows (the window title names it); `None` on the start page.
    fn path(&self) -> Option<&Path>;

    /// Draws it in the window's central area (and the side and bottom panels it wants).
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>);

    /// Draws its rows of the top bar under the menus (the profile's parameter bar). By
    /// default none: a document has its choices in its view.
    fn top_ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>) {
        let _ = (ui, cx);
    }

    /// Takes in what its background work brought since the last frame; true when something
    /// changed on screen. By default nothing (a document that polls in its `ui`).
    fn poll(&mut self, cx: &mut DocCx<'_>) -> bool {
        let _ = cx;
        false
    }

    /// True when `cmd` means nothing here and must change nothing, not even the view state
    /// (a rank the profile does not have). By default none is refused.
    fn refuses(&self, cmd: &Command) -> bool {
        let _ = cmd;
        false
    }

    /// Handles `cmd` when it is one of its own (after the view state took it); false leaves
    /// it to the app. Commands it pushes to `cx.out` apply right after. By default none.
    fn handle(&mut self, cmd: &Command, cx: &mut DocCx<'_>) -> bool {
        let _ = (cmd, cx);
        false
    }

    /// A load in progress that the menu bar shows with its progress and Cancel. By default
    /// none.
    fn progress(&self) -> Option<&super::loading::Loading> {
        None
    }

    /// The report Save chart as PNG draws now, when it has a chart that was drawn. By
    /// default none.
    fn chart_report(
        &self,
        t: &'static Tr,
        state: &ViewState,
        pixels_per_point: f32,
    ) -> Option<super::chart_image::ChartReport> {
        let _ = (t, state, pixels_per_point);
        None
    }

    /// Writes what it asked a file name for ([`DocEvent::AskSavePath`]) to `path`. By default
    /// nothing.
    fn save_to(&mut self, path: PathBuf, cx: &mut DocCx<'_>) {
        let _ = (path, cx);
    }

    /// What File ▸ Compare with… asks for while it is shown (None: a profile folder, and the
    /// comparison is the app's).
    fn compared_with(&self) -> Option<super::command::PickKind> {
        None
    }

    /// The x range of its time chart in ms, once drawn (the self-timing bench's "first
    /// curves"); `None` by default.
    fn chart_extent(&self, state: &ViewState) -> Option<(f64, f64)> {
        let _ = state;
        None
    }

    /// Shows `range` (ms) on its time chart (the bench pans it), itself or by a command in
    /// `out`. By default nothing.
    fn set_chart_range(&mut self, range: (f64, f64), out: &mut Vec<Command>) {
        let _ = (range, out);
    }
}

/// Opens `path` as a document when it is one (by name and content; cheap: the reading is a
/// job the document starts).
pub type Opener = fn(&Path, &mut Jobs) -> Option<Box<dyn Document>>;

/// What a folder without a profile is, as a document, from what discovery found there.
pub type FromDiscovery = fn(&DiscoverError, &mut Jobs) -> Option<Box<dyn Document>>;

/// The side and central panels' frames, unfilled: the window's clear colour is the panel
/// colour (see the app's `clear_color`), which saves a full-window fill per frame, the dominant
/// cost under software rendering. The app's panels and a document's own use them.
pub fn panel_frames(style: &egui::Style) -> (egui::Frame, egui::Frame) {
    (
        egui::Frame::side_top_panel(style).fill(egui::Color32::TRANSPARENT),
        egui::Frame::central_panel(style).fill(egui::Color32::TRANSPARENT),
    )
}
