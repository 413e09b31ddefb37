//! The document seam (issue 42): a whole-window view of the test's own, shown through the same
//! contract as the snapshot, the OOM folder and the summary, draws in the window, handles its
//! own commands, names the window and hides the profile's parameter bar; the built-in ones are
//! chosen from what was opened.

use crate::common;

use std::path::{Path, PathBuf};

use egui_kittest::kittest::Queryable;
use memsight::ui::command::Command;
use memsight::ui::document::{DocCx, Document};
use memsight::ui::i18n::Lang;
use memsight::ui::{MemsightApp, jobs::Jobs};

/// A document that shows one line and counts the Stop-compare commands it was handed.
struct Note {
    path: PathBuf,
    handled: usize,
}

impl Document for Note {
    fn kind(&self) -> &'static str {
        "note"
    }

    fn path(&self) -> Option<&Path> {
        Some(&self.path)
    }

    fn ui(&mut self, ui: &mut egui::Ui, cx: &mut DocCx<'_>) {
        ui.label(format!("note {} 笔记", self.handled));
        if ui.button("again").clicked() {
            cx.out.push(Command::StopSummaryCompare);
        }
    }

    fn handle(&mut self, cmd: &Command, _cx: &mut DocCx<'_>) -> bool {
        let mine = matches!(cmd, Command::StopSummaryCompare);
        self.handled += usize::from(mine);
        mine
    }
}

#[test]
fn a_document_of_its_own_draws_handles_its_commands_and_replaces_the_profile() {
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(common::fixtures().join("msprof")), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        assert!(app.current().is_some(), "the profile is on screen");
        app.show_document(Box::new(Note {
            path: PathBuf::from("/data/notes.txt"),
            handled: 0,
        }));
        let mut h = common::harness(app);
        assert_eq!(h.state().document_kind(), "note");
        assert!(h.state().current().is_none(), "no rank on screen behind it");
        h.get_by_label("note 0 笔记");
        h.get_by_label("again").click();
        h.run();
        h.get_by_label("note 1 笔记");
        assert_eq!(h.state().document::<Note>().map(|n| n.handled), Some(1));
        // Opening a profile replaces it.
        h.state_mut().open(common::fixtures().join("msprof"));
        h.state_mut().wait_for_load();
        h.run();
        assert_eq!(h.state().document_kind(), "profile");
        assert!(h.query_by_label("note 1 笔记").is_none());
    }
}

#[test]
fn what_is_opened_picks_its_document() {
    let tmp = tempfile::tempdir().unwrap();
    let summary = tmp.path().join("all.db");
    let (code, _, err) = common::memsight(&[
        "summarize",
        common::fixtures().join("msprof").to_str().unwrap(),
        "--out",
        summary.to_str().unwrap(),
    ]);
    assert_eq!(code, 0, "{err}");
    let mut jobs = Jobs::default();
    let kind = |p: &Path, jobs: &mut Jobs| memsight::ui::documents::open(p, jobs).map(|d| d.kind());
    assert_eq!(kind(&summary, &mut jobs), Some("summary"));
    assert_eq!(
        kind(&common::fixtures().join("msprof"), &mut jobs),
        None,
        "a profile"
    );
    let pickle = tmp.path().join("snap.pickle");
    std::fs::write(&pickle, b"not read until the job runs").unwrap();
    assert_eq!(kind(&pickle, &mut jobs), Some("snapshot"));
}

/// File ▸ Save chart as PNG on a document without a memory chart (a snapshot) writes nothing
/// and says why in the menu bar, in the UI's language: before the profile was a document, it
/// saved the chart of the profile shown earlier, hidden behind the snapshot.
#[test]
fn save_chart_on_a_view_without_a_memory_chart_says_so() {
    use memsight::ui::app::NO_CHART;
    use memsight::ui::i18n::{EN, ZH};
    let snapshot = common::fixtures().join("snapshots/fx_pinned/fx_pinned.pickle");
    for (lang, t, file) in [(Lang::En, &EN, "File"), (Lang::Zh, &ZH, "文件")] {
        // A profile first: its chart is drawn, then the snapshot replaces it.
        let mut app = MemsightApp::new(Some(common::fixtures().join("msprof")), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.set_png_picker(|| panic!("no file name is asked for"));
        let mut h = common::harness(app);
        assert!(
            h.state().chart().last_figure().is_some(),
            "the profile's chart was drawn"
        );
        h.state_mut().open(snapshot.clone());
        assert_eq!(h.state().document_kind(), "snapshot");
        // Read before the frames (a busy machine reads it in more than `run`'s steps).
        h.state_mut()
            .document_mut::<memsight::ui::panes::snapshot::SnapshotView>()
            .unwrap()
            .wait();
        h.run();
        h.get_by_label(file).click();
        h.run();
        h.get_by_label(t.save_chart).click();
        h.run();
        h.get_by_label(&(t.cannot_save_chart)(NO_CHART.get(t)));
    }
}
