//! The in-app open and save browser (egui_file), used whenever no native dialog can be shown:
//! on a Linux desktop without xdg-desktop-portal, or when the dialog fails at once.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use egui_file::FileDialog;

use super::command::PickKind;
use super::i18n::Tr;

/// What a native dialog did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickOutcome {
    /// The user chose this path.
    Picked(PathBuf),
    /// The user closed the dialog without choosing.
    Cancelled,
    /// No dialog could be shown (no portal, no display); use the in-app browser.
    Unavailable,
}

impl From<Option<PathBuf>> for PickOutcome {
    fn from(p: Option<PathBuf>) -> PickOutcome {
        p.map_or(PickOutcome::Cancelled, PickOutcome::Picked)
    }
}

/// A save dialog: the native one in the app, a stand-in answering a path in tests (a closure,
/// so that tests running side by side each save where they asked, not through a shared static).
/// It blocks, so the app runs it as a job.
pub type SavePicker = std::sync::Arc<dyn Fn() -> PickOutcome + Send + Sync>;

/// A native dialog that "returns nothing" faster than this never showed (nobody cancels a
/// dialog in a quarter of a second): rfd reports a missing portal as a cancel.
pub const INSTANT_RETURN: std::time::Duration = std::time::Duration::from_millis(250);

/// Runs a native dialog function, telling a real cancel from a dialog that could not be shown.
/// On Linux without a D-Bus session (so without a portal) the dialog is not tried at all.
pub fn native_outcome(show: impl FnOnce() -> Option<PathBuf>) -> PickOutcome {
    if cfg!(target_os = "linux") && std::env::var_os("DBUS_SESSION_BUS_ADDRESS").is_none() {
        return PickOutcome::Unavailable;
    }
    let started = std::time::Instant::now();
    match show() {
        Some(p) => PickOutcome::Picked(p),
        None if started.elapsed() < INSTANT_RETURN => PickOutcome::Unavailable,
        None => PickOutcome::Cancelled,
    }
}

/// Where saves (Export CSV, Save chart as PNG) are offered: the user's Documents folder, else
/// the home folder; never the profile's folder, which is often read-only and is the user's
/// data (memsight writes nothing there).
pub fn save_folder() -> Option<PathBuf> {
    dirs::document_dir()
        .filter(|d| d.is_dir())
        .or_else(dirs::home_dir)
}

/// A file the Open file browser lists: a DB, a PyTorch trace, an msMemScope dump or an
/// allocator snapshot, by extension (not a DB's `-wal`/`-shm` companions, nor anything else).
pub fn openable_file(path: &Path) -> bool {
    path.extension().and_then(|e| e.to_str()).is_some_and(|e| {
        OPENABLE_EXTENSIONS
            .iter()
            .any(|x| e.eq_ignore_ascii_case(x))
    })
}

/// The extensions of the files memsight opens one by one: profiler DBs and msMemScope's, PyTorch
/// traces (`.json`, `.json.gz`), msMemScope dumps (`.csv`), allocator snapshots.
pub const OPENABLE_EXTENSIONS: [&str; 6] = ["db", "json", "gz", "csv", "pickle", "pkl"];

/// What the browser is open for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// Opening a folder or a DB.
    Open(PickKind),
    /// Choosing where Export CSV writes.
    Save,
    /// Choosing where Save chart as PNG writes.
    SaveChart,
}

/// The browser: at most one open at a time.
#[derive(Default)]
pub struct FileBrowser {
    open: Option<(Purpose, FileDialog)>,
}

impl FileBrowser {
    /// Shows the browser for `purpose`, starting in `start` (or the current folder).
    pub fn show_for(&mut self, purpose: Purpose, start: Option<&Path>, t: &Tr) {
        let start = start
            .map(Path::to_path_buf)
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let dialog = match purpose {
            Purpose::Open(PickKind::Folder | PickKind::Baseline) => {
                FileDialog::select_folder().title(t.dialog_folder)
            }
            Purpose::Open(PickKind::File(pick)) => FileDialog::open_file()
                .title(pick.title.get(t))
                .show_files_filter(Box::new(pick.lists)),
            Purpose::Open(PickKind::Database) => FileDialog::open_file()
                .title(t.dialog_db)
                .show_files_filter(Box::new(|p: &Path| openable_file(p))),
            Purpose::Save => FileDialog::save_file()
                .title(t.dialog_save)
                .default_filename("memory_details.csv"),
            Purpose::SaveChart => FileDialog::save_file()
                .title(t.save_chart)
                .default_filename("memsight_chart.png"),
        };
        let mut dialog = dialog
            .initial_path(start)
            .open_button_text(Cow::Borrowed(t.open))
            .save_button_text(Cow::Borrowed(t.dialog_save_button))
            .cancel_button_text(Cow::Borrowed(t.cancel))
            .file_label_text(Cow::Borrowed(t.browser_file))
            .show_hidden_checkbox_text(Cow::Borrowed(t.browser_hidden))
            .parent_folder_button_hover_text(Cow::Borrowed(t.browser_parent))
            .refresh_button_hover_text(Cow::Borrowed(t.browser_refresh))
            .show_new_folder(false)
            .show_rename(false)
            .default_size([640.0, 420.0]);
        dialog.open();
        self.open = Some((purpose, dialog));
    }

    /// True while the browser is on screen.
    pub fn is_open(&self) -> bool {
        self.open.as_ref().is_some_and(|(_, d)| d.visible())
    }

    /// The folder it shows.
    pub fn directory(&self) -> Option<&Path> {
        self.open.as_ref().map(|(_, d)| d.directory())
    }

    /// What it is open for.
    pub fn purpose(&self) -> Option<Purpose> {
        self.open.as_ref().map(|(p, _)| *p)
    }

    /// Draws it; returns the chosen path once the user confirms (and closes it then, or when
    /// cancelled).
    pub fn ui(&mut self, ctx: &egui::Context) -> Option<(Purpose, PathBuf)> {
        let (purpose, dialog) = self.open.as_mut()?;
        let purpose = *purpose;
        dialog.show(ctx);
        if dialog.selected() {
            let path = dialog.path().map(Path::to_path_buf);
            self.open = None;
            return path.map(|p| (purpose, p));
        }
        if !dialog.visible() {
            self.open = None;
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The Open file browser lists DBs and snapshots, not a DB's -wal/-shm files.
    #[test]
    fn open_file_lists_what_memsight_opens_only() {
        for (name, shown) in [
            ("ascend_pytorch_profiler_0.db", true),
            ("ascend_pytorch_profiler_0.db-wal", false),
            ("ascend_pytorch_profiler_0.db-shm", false),
            ("snapshot.pickle", true),
            ("SNAP.PKL", true),
            ("memscope_dump_1.csv", true),
            ("worker0.1.pt.trace.json.gz", true),
            ("trace.JSON", true),
            ("notes.txt", false),
            ("db", false),
        ] {
            assert_eq!(openable_file(Path::new(name)), shown, "{name}");
        }
    }
}
