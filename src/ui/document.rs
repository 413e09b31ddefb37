//! Documents: the whole-window views besides the profile (an allocator snapshot, a folder of
//! OOM bundles, a cluster summary). The app holds at most one, in place of the profile's
//! chart and panes; each is a type implementing [`Document`] in its own file.
//!
//! Adding one: implement [`Document`] (its title, its `ui`, the commands it handles) in the
//! view's own file, and add its opener to [`OPENERS`](super::documents::OPENERS) (opened from a
//! path, such as a `.pickle`) or to [`FROM_DISCOVERY`](super::documents::FROM_DISCOVERY) (what
//! a folder without a profile turned out to hold, such as a job's OOM bundles), in
//! [`super::documents`]. Nothing else in the app names it: tests reach it with
//! [`crate::ui::app::MemsightApp::document`]. rerun's `ViewClass` registry and egui_demo_lib's
//! `Demo` trait are the models.

use std::path::Path;

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
}

/// A whole-window view. `AsAny` (implemented for every type, as for panes) lets
/// [`crate::ui::app::MemsightApp::document`] reach it as its own type.
pub trait Document: AsAny {
    /// Its kind, for logs and tests: `"snapshot"`, `"oom_folder"`, `"summary"`.
    fn kind(&self) -> &'static str;

    /// The file or folder it shows (the window title names it).
    fn path(&self) -> &Path;

    /// Draws it in the window's central area.
    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>);

    /// Handles `cmd` when it is one of its own; false leaves it to the app. By default none.
    fn handle(&mut self, cmd: &Command, jobs: &mut Jobs) -> bool {
        let _ = (cmd, jobs);
        false
    }

    /// What File ▸ Compare with… asks for while it is shown (None: a profile folder, and the
    /// comparison is the app's).
    fn compared_with(&self) -> Option<super::command::PickKind> {
        None
    }

    /// The x range of its time chart in ms, once drawn (the self-timing bench's "first
    /// curves"); `None` by default.
    fn chart_extent(&self) -> Option<(f64, f64)> {
        None
    }

    /// Shows `range` (ms) on its time chart (the bench pans it). By default nothing.
    fn set_chart_range(&mut self, range: (f64, f64)) {
        let _ = range;
    }
}

/// Opens `path` as a document when it is one (by name and content; cheap: the reading is a
/// job the document starts).
pub type Opener = fn(&Path, &mut Jobs) -> Option<Box<dyn Document>>;

/// What a folder without a profile is, as a document, from what discovery found there.
pub type FromDiscovery = fn(&DiscoverError, &mut Jobs) -> Option<Box<dyn Document>>;
