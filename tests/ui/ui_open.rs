//! Opening data in the app, driven through its widgets with egui_kittest: Ctrl+O and the File
//! menu (with the open dialog replaced by a picker that answers at once), a folder dropped on
//! the window, and the recent-folders list carried across a restart through eframe's storage.

use crate::common;

use std::path::{Path, PathBuf};

use common::{db_fixtures, fixtures};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::PickKind;
use memsight::ui::file_browser::PickOutcome;
use memsight::ui::prefs::{RECENT_KEY, parse_recent};

fn harness(app: MemsightApp) -> Harness<'static, MemsightApp> {
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.state_mut().wait_for_load();
    // A cluster's overview fills in a job: wait, or a frame may still be asking to repaint.
    h.state_mut().wait_for_overview();
    h.run();
    h
}

/// Runs frames until the app starts loading `path` (the dialog answers on a thread of its
/// own), then waits for the load.
fn wait_until_opened(h: &mut Harness<'_, MemsightApp>, path: &Path) {
    let what = format!("{} to open", path.display());
    common::step_until(h, &what, |h| h.state().path() == Some(path));
    h.state_mut().wait_for_load();
    // A cluster's overview fills in a job: wait, or frames keep asking to repaint.
    h.state_mut().wait_for_overview();
    common::settle(h);
    assert!(h.state().view().is_some(), "{:?}", h.state().error());
}

/// The mindspore fixture's rank, which the test pickers "choose".
fn picked_folder() -> PathBuf {
    common::first_subdir(&fixtures().join("mindspore"))
}

/// The first `.db` of the DB-only fixture.
fn picked_db() -> PathBuf {
    fn find(dir: &Path) -> Option<PathBuf> {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .ok()?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .collect();
        entries.sort();
        entries.iter().find_map(|p| {
            if p.is_dir() {
                find(p)
            } else {
                (p.extension().is_some_and(|e| e == "db")).then(|| p.clone())
            }
        })
    }
    find(&db_fixtures().join("db_only")).expect("a .db in the DB-only fixture")
}

#[test]
fn ctrl_o_opens_the_folder_the_dialog_returns() {
    let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
    app.set_picker(|kind| (kind == PickKind::Folder).then(picked_folder).into());
    let mut h = harness(app);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    wait_until_opened(&mut h, &picked_folder());
    assert_eq!(h.state().recent()[0], picked_folder().display().to_string());
}

/// File ▸ Open file… (the menu's entry: the start page has the same button, lower down).
fn click_open_file(h: &mut Harness<'_, MemsightApp>) {
    h.get_by_label("File").click();
    h.run();
    h.get_all_by_label("Open file (.db, .json, .csv, .pickle)…")
        .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap()
        .click();
}

#[test]
fn file_open_db_loads_the_database_the_dialog_returns() {
    let mut app = MemsightApp::new(None, Vec::new(), None);
    app.set_picker(|kind| (kind == PickKind::Database).then(picked_db).into());
    let mut h = harness(app);
    click_open_file(&mut h);
    wait_until_opened(&mut h, &picked_db());
    let view = h.state().view().expect("a rank on screen");
    assert!(
        matches!(&view.data.info.source, memsight::model::DataSource::Db { path, .. } if *path == picked_db()),
        "the rank comes from the database: {:?}",
        view.data.info.source
    );
    assert!(!view.data.records.is_empty());
}

#[test]
fn a_cancelled_dialog_keeps_what_is_open() {
    // The picker says it was asked, so the test cannot pass without a dialog having run.
    static ASKED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
    let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
    app.set_picker(|_| {
        ASKED.store(true, std::sync::atomic::Ordering::SeqCst);
        PickOutcome::Cancelled
    });
    let mut h = harness(app);
    let before = h.state().view().map(|v| v.id());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
    h.step();
    // Until the dialog has answered (before, a fixed 20 frames: on a slow machine the answer
    // could come after them, and the test passed without having seen it).
    common::step_until(&mut h, "the dialog's answer", |h| {
        ASKED.load(std::sync::atomic::Ordering::SeqCst) && !h.state().dialog_open()
    });
    h.run();
    assert_eq!(h.state().path(), Some(&*fixtures().join("demo")));
    assert_eq!(h.state().view().map(|v| v.id()), before);
}

#[test]
fn dropping_a_folder_on_the_window_opens_it() {
    let mut h = harness(MemsightApp::new(None, Vec::new(), None));
    h.get_by_label_contains("drop a folder here");
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(common::DroppedPath(picked_folder())));
    h.step();
    wait_until_opened(&mut h, &picked_folder());
    h.get_by_label("Rank ID");
}

/// A path given on the command line loads while the window is made: `ui::run` makes the app
/// first, with the default preferences, and hands it the stored ones when the window is up.
/// The stored language, theme, reopen choice and recent paths are taken, and what was opened
/// meanwhile goes first in the list: a snapshot's path (remembered as it opens) as a
/// profile's (remembered once its load proves it one).
#[test]
fn an_app_made_before_its_window_takes_the_stored_prefs_and_keeps_what_it_opened() {
    use memsight::ui::i18n::Lang;
    use memsight::ui::prefs::{Prefs, ThemePref};
    let older = fixtures().join("demo").display().to_string();
    let stored = Prefs {
        lang: Lang::Zh,
        theme: ThemePref::Dark,
        recent: vec![older.clone()],
        reopen_last: false,
    };
    let snapshot = fixtures().join("snapshots/fx_pinned/fx_pinned.pickle");
    for (path, kind) in [(picked_folder(), "profile"), (snapshot, "snapshot")] {
        let mut app = MemsightApp::with_prefs(Some(path.clone()), Prefs::default(), None);
        app.adopt_stored_prefs(stored.clone());
        let h = harness(app);
        assert_eq!(h.state().document_kind(), kind);
        if kind == "profile" {
            assert!(h.state().view().is_some(), "{:?}", h.state().error());
        }
        let prefs = h.state().prefs();
        assert_eq!(prefs.lang, Lang::Zh, "{kind}");
        assert_eq!(prefs.theme, ThemePref::Dark, "{kind}");
        assert!(!prefs.reopen_last, "{kind}");
        assert_eq!(
            prefs.recent,
            vec![path.display().to_string(), older.clone()],
            "{kind}"
        );
    }
}

#[test]
fn recent_folders_survive_a_restart_and_reopen() {
    let first = picked_folder();
    let second = fixtures().join("demo");
    let mut app = MemsightApp::new(Some(first.clone()), Vec::new(), None);
    app.wait_for_load();
    app.open(second.clone());
    app.wait_for_load();
    let mut storage = common::MemoryStorage::default();
    eframe::App::save(&mut app, &mut storage);
    drop(app);

    // A new run reads the list back, newest first, the way `ui::run` does.
    let recent = parse_recent(&eframe::Storage::get_string(&storage, RECENT_KEY).unwrap());
    assert_eq!(
        recent,
        vec![second.display().to_string(), first.display().to_string()]
    );
    let mut h = harness(MemsightApp::new(None, recent, None));
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Recent folders").click();
    h.run();
    h.get_by_label(&first.display().to_string()).click();
    wait_until_opened(&mut h, &first);
    // Reopening moves it to the front, without a duplicate.
    assert_eq!(
        h.state().recent(),
        vec![first.display().to_string(), second.display().to_string()]
    );
}

#[test]
fn loading_shows_progress_redrawn_15_times_a_second_and_cancel_stops_it_and_retry_loads_again() {
    // The load waits at a gate until the test opens it, so it is certainly still running when
    // Cancel is clicked, on any machine (it once finished first while a build shared the cores).
    for lang in memsight::ui::i18n::Lang::ALL {
        let mut app = MemsightApp::new(None, Vec::new(), None);
        let gate = app.gate_jobs(memsight::ui::jobs::JobKey::new(
            memsight::ui::loading::LOAD_JOB,
        ));
        app.set_language(lang);
        app.apply(memsight::ui::Command::Open(fixtures().join("demo")));
        let t = app.tr();
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        h.step();
        h.step();
        assert!(h.state().is_loading(), "held at the gate");
        // The page is redrawn a few times a second, not every frame it can: egui's spinner
        // asked for the next frame at once, and under software rendering that took a core
        // from the load (a 1 GB dump's curves came 0.9 s later).
        assert!(
            !h.ctx.requested_repaint_last_pass(),
            "{lang:?}: the loading page asked for the next frame at once"
        );
        assert!(h.ctx.has_requested_repaint(), "{lang:?}: the spinner turns");
        h.get_by_label(t.cancel).click();
        h.step();
        h.state_mut().wait_for_load();
        h.step();
        assert!(h.state().view().is_none(), "a cancelled load shows nothing");
        assert!(!h.state().is_loading());
        h.get_by_label(t.load_cancelled);
        // Retry loads the same folder again (issue 26 item 18: Cancel was a dead end).
        let started = h.state().loads_started();
        h.get_by_label(t.retry).click();
        h.step();
        assert_eq!(h.state().loads_started(), started + 1, "{lang:?}");
        assert!(h.state().is_loading(), "held at the gate again");
        gate.open();
        h.state_mut().wait_for_load();
        h.step();
        assert!(h.state().view().is_some(), "{:?}", h.state().error());
        assert_eq!(h.state().path(), Some(&*fixtures().join("demo")));
    }
}

#[test]
fn a_load_cancelled_before_its_thread_starts_says_cancelled() {
    let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
    // At once, as a click on Cancel in the first frame would, whether or not the thread ran.
    // (The load cannot have discovered and read the profile between the two statements.)
    app.apply(memsight::ui::Command::CancelLoad);
    app.wait_for_load();
    assert!(app.view().is_none());
    assert_eq!(app.error(), Some("Loading was cancelled."));
}

#[test]
fn shift_dropping_a_folder_compares_with_it() {
    let mut app = MemsightApp::new(Some(picked_folder()), Vec::new(), None);
    app.wait_for_load();
    let mut h = harness(app);
    let before = h.state().path().map(Path::to_path_buf);
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::SHIFT));
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(common::DroppedPath(
            fixtures().join("demo"),
        )));
    h.step();
    h.state_mut().wait_for_baseline();
    h.step();
    // The profile on screen stays; the dropped one is the baseline.
    assert_eq!(h.state().path().map(Path::to_path_buf), before);
    let b = h.state().baseline().loaded.as_ref().expect("a baseline");
    assert_eq!(b.source.path, fixtures().join("demo"));
}

/// [`harness`] around `app` once its load and its cluster overview are done (nothing left to
/// repaint for).
fn settled(mut app: MemsightApp) -> Harness<'static, MemsightApp> {
    app.wait_for_load();
    app.wait_for_overview();
    harness(app)
}

/// File ▸ Open path… (and Ctrl+L) opens a dialog whose field takes the keyboard at once: a typed
/// path opens with Enter, in English and Chinese, with a profile already on screen. Before, the
/// path field sat inside the File menu and a click into it closed the menu (issue 26 item 5).
#[test]
fn open_path_dialog_takes_a_typed_path() {
    use memsight::ui::i18n::Lang;
    let target = fixtures().join("torch_cluster");
    for (lang, via_menu) in [(Lang::En, true), (Lang::Zh, true), (Lang::En, false)] {
        let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
        app.set_language(lang);
        let mut h = settled(app);
        let t = h.state().tr();
        if via_menu {
            h.get_by_label(t.file).click();
            h.run();
            h.get_by_label(t.open_path_menu).click();
        } else {
            h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::L);
        }
        h.run();
        assert!(h.state().path_dialog_open(), "{lang:?}");
        h.get_by_label(t.open_path_title);
        // The field has the keyboard: typing goes straight into it.
        h.get_by_role_and_label(egui::accesskit::Role::TextInput, t.path)
            .type_text(target.to_str().unwrap());
        h.run();
        h.key_press(egui::Key::Enter);
        h.step();
        wait_until_opened(&mut h, &target);
        assert!(!h.state().path_dialog_open(), "the dialog closes on open");
        assert!(h.query_by_label(t.open_path_title).is_none());
    }
}

/// Issue 87 item 11: Ctrl+L a second time selects the path typed before, so a pasted path
/// replaces it (it was appended: `old/new` failed to open), in English and Chinese.
#[test]
fn ctrl_l_then_paste_replaces_the_previous_path() {
    use memsight::ui::i18n::Lang;
    let first = fixtures().join("torch_cluster");
    let second = picked_folder();
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
        app.set_language(lang);
        let mut h = settled(app);
        let t = h.state().tr();
        for (path, typed) in [(&first, true), (&second, false)] {
            h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::L);
            h.run();
            assert!(h.state().path_dialog_open(), "{lang:?}");
            if typed {
                h.get_by_role_and_label(egui::accesskit::Role::TextInput, t.path)
                    .type_text(path.to_str().unwrap());
            } else {
                h.event(egui::Event::Paste(path.display().to_string()));
            }
            h.run();
            let field = h.get_by_role_and_label(egui::accesskit::Role::TextInput, t.path);
            use egui_kittest::kittest::NodeT;
            assert_eq!(
                field.accesskit_node().value().unwrap_or_default(),
                path.display().to_string(),
                "{lang:?}: the field holds the new path alone"
            );
            h.key_press(egui::Key::Enter);
            h.step();
            wait_until_opened(&mut h, path);
        }
    }
}

/// Esc and Cancel close the dialog and keep what is open.
#[test]
fn the_open_path_dialog_cancels() {
    let mut h = settled(MemsightApp::new(
        Some(fixtures().join("demo")),
        Vec::new(),
        None,
    ));
    let before = h.state().path().map(Path::to_path_buf);
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::L);
    h.run();
    assert!(h.state().path_dialog_open());
    h.get_by_label("Cancel").click();
    h.run();
    assert!(!h.state().path_dialog_open());
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::L);
    h.run();
    h.key_press(egui::Key::Escape);
    h.run();
    assert!(!h.state().path_dialog_open());
    assert_eq!(h.state().path().map(Path::to_path_buf), before);
}

/// The new sources open the way files do (issue 27): a PyTorch trace through File ▸ Open
/// file, an msMemScope dump dropped on the window; each shows its first rank.
#[test]
fn a_pytorch_trace_opens_from_the_menu_and_a_memscope_dump_by_drop() {
    fn trace() -> PathBuf {
        fixtures().join("pytorch/cnn_adam.pt.trace.json.gz")
    }
    let mut app = MemsightApp::new(None, Vec::new(), None);
    app.set_picker(|kind| (kind == PickKind::Database).then(trace).into());
    let mut h = harness(app);
    click_open_file(&mut h);
    wait_until_opened(&mut h, &trace());
    let view = h.state().view().expect("a rank on screen");
    assert_eq!(view.data.info.format.as_str(), "pytorch_trace");

    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        allocs: 300,
        format: memsight::model::Format::Imported(memsight::ingest::msmemscope::NAME),
        ..Default::default()
    };
    let dump = memsight::generate::generate(tmp.path(), &opts).unwrap()[0].clone();
    h.input_mut()
        .dropped_files
        .push(std::sync::Arc::new(common::DroppedPath(dump.clone())));
    h.step();
    wait_until_opened(&mut h, &dump);
    let view = h.state().view().expect("a rank on screen");
    assert_eq!(view.data.info.format.as_str(), "msmemscope");
    assert_eq!(view.data.operators.len(), 300);
}
