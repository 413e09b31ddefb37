//! One loader policy, one writer: the rank on screen, a comparison's baseline and the cluster
//! overview all read the files the Data switch names, a load lands under the key it was started
//! for, and a rank the session has is never loaded twice. Checked on ranks that have a DB and
//! CSV files side by side (written by the generator), by which files each view was read from.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use memsight::model::{DataSource, SourceChoice};
use memsight::ui::baseline::BaselineSource;
use memsight::ui::{Command, MemsightApp};

/// A profile of `ranks` ranks, each with a DB and the CSV files beside it.
fn both(ranks: usize) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("both");
    memsight::generate::generate(
        &root,
        &memsight::generate::GenOptions {
            ranks,
            allocs: 300,
            db: memsight::generate::DbMode::Both,
            ..Default::default()
        },
    )
    .unwrap();
    (dir, root)
}

/// "csv" or "db": which files a view's rows came from.
fn files_of(source: &DataSource) -> &'static str {
    source.kind()
}

/// The CSV files and the DB are told apart by the rank's own source, so the choice must matter
/// for this profile: by default (Auto) it is read from the DB.
fn open(path: &Path) -> MemsightApp {
    let mut app = MemsightApp::new(Some(path.to_path_buf()), Vec::new(), None);
    app.wait_for_load();
    let view = app.view().expect("rank 0 on screen");
    assert_eq!(files_of(&view.data.info.source), "db", "Auto reads the DB");
    app
}

#[test]
fn a_load_lands_under_the_key_it_was_started_for() {
    let (_tmp, root) = both(1);
    // The Data switch flips while the profile is still being discovered: the load started for
    // (rank 0, Auto) must not land as (rank 0, CSV).
    let mut app = MemsightApp::new(Some(root.clone()), Vec::new(), None);
    app.apply(Command::SetSource(SourceChoice::Csv));
    app.wait_for_load();
    let key = app.current().expect("a rank on screen");
    assert_eq!(key.source, SourceChoice::Csv);
    let view = app.view().unwrap();
    assert_eq!(
        files_of(&view.data.info.source),
        "csv",
        "read from the CSVs"
    );
    let auto = app.session().key(0, SourceChoice::Auto);
    assert!(
        app.session().peek(auto).is_none(),
        "nothing cached as Auto: that load was superseded"
    );

    // Back to Auto: the DB, loaded now; then CSV again comes from the session.
    app.apply(Command::SetSource(SourceChoice::Auto));
    app.wait_for_load();
    assert_eq!(files_of(&app.view().unwrap().data.info.source), "db");
    let loads = app.loads_started();
    app.apply(Command::SetSource(SourceChoice::Csv));
    assert!(!app.is_loading(), "the session has it");
    assert_eq!(app.loads_started(), loads);
    assert!(Arc::ptr_eq(&app.view().unwrap(), &view), "the same view");
}

#[test]
fn the_baseline_reads_the_files_the_data_switch_names() {
    let (tmp, root) = both(1);
    let mut app = open(&root);
    app.apply(Command::SetSource(SourceChoice::Csv));
    app.wait_for_load();
    let on_screen = app.view().unwrap();
    assert_eq!(files_of(&on_screen.data.info.source), "csv");

    // A rank of the open profile that the session has: taken from it, no load.
    let loads = app.loads_started();
    app.apply(Command::CompareRank(0));
    assert!(!app.baseline().is_loading(), "no job: the session had it");
    let b = app.baseline().loaded.as_ref().expect("loaded at once");
    assert!(Arc::ptr_eq(&b.view, &on_screen));
    assert_eq!(app.loads_started(), loads);

    // Another profile (the same folder through a link: another path): loaded by a job, from
    // the CSVs as the switch says.
    let link = tmp.path().join("link");
    #[cfg(unix)]
    std::os::unix::fs::symlink(&root, &link).unwrap();
    #[cfg(not(unix))]
    common::copy_dir(&root, &link);
    app.apply(Command::CompareWith(BaselineSource {
        path: link.clone(),
        rank: 0,
    }));
    app.wait_for_baseline();
    let b = app.baseline().loaded.as_ref().expect("the baseline");
    assert_eq!(files_of(&b.view.data.info.source), "csv");
    assert!(b.label.contains("link"), "{}", b.label);

    // The switch moves the baseline with the rank on screen.
    app.apply(Command::SetSource(SourceChoice::Db));
    app.wait_for_load();
    app.wait_for_baseline();
    assert_eq!(files_of(&app.view().unwrap().data.info.source), "db");
    let b = app.baseline().loaded.as_ref().expect("the baseline again");
    assert_eq!(files_of(&b.view.data.info.source), "db");
    assert_eq!(b.source.path, link);
}

#[test]
fn a_baseline_loaded_by_a_job_goes_into_the_session() {
    let (_tmp, root) = both(2);
    let mut app = MemsightApp::new(Some(root), Vec::new(), None);
    app.wait_for_load();
    app.apply(Command::ShowOverview(false));
    let key1 = app.session().key(1, SourceChoice::Auto);
    assert!(app.session().peek(key1).is_none(), "rank 1 not loaded yet");
    app.apply(Command::CompareRank(1));
    assert!(app.baseline().is_loading(), "a job loads it");
    app.wait_for_baseline();
    let b = Arc::clone(&app.baseline().loaded.as_ref().expect("rank 1").view);
    let cached = app.session().peek(key1).expect("in the session").clone();
    assert!(Arc::ptr_eq(&cached, &b));
    // Showing rank 1 now needs no load.
    let loads = app.loads_started();
    app.apply(Command::SelectRank(1));
    assert!(!app.is_loading());
    assert_eq!(app.loads_started(), loads);
    assert!(Arc::ptr_eq(&app.view().expect("rank 1 on screen"), &b));
}

#[test]
fn the_overview_reads_the_files_the_data_switch_names() {
    let (_tmp, root) = both(2);
    let mut app = MemsightApp::new(Some(root), Vec::new(), None);
    app.wait_for_load();
    app.wait_for_overview();
    let sources = |app: &MemsightApp| -> Vec<String> {
        app.overview()
            .expect("an overview of two ranks")
            .rows
            .iter()
            .map(|r| r.as_ref().expect("summarised").source.clone())
            .collect()
    };
    assert_eq!(sources(&app), ["db", "db"]);
    app.apply(Command::SetSource(SourceChoice::Csv));
    app.wait_for_load();
    app.wait_for_overview();
    assert_eq!(sources(&app), ["csv", "csv"]);
}
