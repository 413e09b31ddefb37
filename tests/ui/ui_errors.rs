//! What the user reads when a file cannot be shown, in English and in Chinese: a rank whose
//! files hold no rows, and a truncated allocator snapshot. Typed errors rendered by the UI; the
//! OS's and the file's own words (paths) stay as they are.

use crate::common;

use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::i18n::Lang;

const RECORD_HEADER: &str = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type";

#[test]
fn a_rank_without_rows_says_so_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("n0_1_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("memory_record.csv"), format!("{RECORD_HEADER}\n")).unwrap();
    for (lang, want, not) in [
        (Lang::En, "no data rows", "没有数据行"),
        (Lang::Zh, "没有数据行", "no data rows"),
    ] {
        let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        assert!(app.view().is_none());
        let error = app.error().map(str::to_owned).expect("an error");
        assert!(error.contains(want), "{error}");
        assert!(!error.contains(not), "{error}");
        assert!(
            error.contains("memory_record.csv"),
            "the file is named: {error}"
        );
        let mut h = common::harness(app);
        h.run();
        h.get_by_label_contains(want);
    }
}

/// Issue 42 item 4: an msMemScope dump that cannot be read says why in the UI's language (its
/// reasons are typed; the Chinese UI showed "no memscope_dump table" in English before).
#[test]
fn an_msmemscope_dump_without_its_table_says_so_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    let db = tmp.path().join("memscope_dump_20261127.db");
    rusqlite::Connection::open(&db)
        .unwrap()
        .execute_batch("CREATE TABLE other (x INTEGER); INSERT INTO other VALUES (1);")
        .unwrap();
    let path = db.display().to_string();
    for (lang, want) in [
        (
            Lang::En,
            format!("{path}: no memscope_dump table; the msMemScope dump was not read"),
        ),
        (
            Lang::Zh,
            format!("{path}：没有 memscope_dump 表；未读取该 msMemScope 数据文件"),
        ),
    ] {
        let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        assert!(app.view().is_none());
        let error = app.error().map(str::to_owned).expect("an error");
        assert!(error.contains(&want), "{error}");
        let mut h = common::harness(app);
        h.run();
        h.get_by_label_contains(&want);
    }
}

/// The first sample snapshot cut in half, written into `dir` (`None` without samples).
fn truncated_snapshot(dir: &std::path::Path) -> Option<std::path::PathBuf> {
    let full = common::sample_snapshots().into_iter().next()?;
    let bytes = std::fs::read(full).unwrap();
    let cut = dir.join("cut.pickle");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    Some(cut)
}

#[test]
fn a_truncated_snapshot_says_so_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cut) = truncated_snapshot(tmp.path()) else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    for (lang, want) in [
        (Lang::En, "the file ends inside an opcode (truncated?)"),
        (Lang::Zh, "文件在一条指令中途结束（文件被截断？）"),
    ] {
        let mut app = MemsightApp::new(Some(cut.clone()), Vec::new(), None);
        app.set_language(lang);
        if let Some(s) = app.document_mut::<memsight::ui::panes::snapshot::SnapshotView>() {
            s.wait();
        }
        let mut h = common::harness(app);
        h.run();
        h.get_by_label_contains(want);
    }
}

/// A folder with no memory data says what it found instead, each note in the UI's language.
#[cfg(unix)]
#[test]
fn a_folder_without_memory_data_says_what_it_found_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("n0_1_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    // A FIFO where memory_record would be: never opened, listed.
    assert!(
        std::process::Command::new("mkfifo")
            .arg(out.join("memory_record.csv"))
            .status()
            .unwrap()
            .success()
    );
    for (lang, want) in [
        (Lang::En, "not a regular file (it is a FIFO); skipped"),
        (Lang::Zh, "不是普通文件（而是命名管道 FIFO）；已跳过"),
    ] {
        let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let error = app.error().map(str::to_owned).expect("an error");
        assert!(error.contains(want), "{error}");
        if lang == Lang::Zh {
            assert!(!error.contains("a FIFO"), "{error}");
        }
    }
}

/// Issue 43 item 6: an empty memory_record.csv says so in Chinese, not "the file is empty".
#[test]
fn an_empty_file_says_so_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("n0_1_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::write(out.join("memory_record.csv"), "").unwrap();
    for (lang, want, not) in [
        (Lang::En, "the file is empty", "文件为空"),
        (Lang::Zh, "文件为空", "the file is empty"),
    ] {
        let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let error = app.error().map(str::to_owned).expect("an error");
        assert!(error.contains(want), "{lang:?}: {error}");
        assert!(!error.contains(not), "{lang:?}: {error}");
    }
}

/// Issue 43 item 6: the top bar's Rank and Group By read in Chinese (Overall is 总体).
#[test]
fn the_rank_and_group_by_pickers_read_in_the_ui_language() {
    let dir = common::first_subdir(&common::fixtures().join("torch_cluster"));
    for lang in Lang::ALL {
        let mut h = common::app_at_720p(&dir, lang);
        h.run();
        let t = h.state().tr();
        let group = h.get_by_label(t.group_by).value();
        assert_eq!(group.as_deref(), Some(t.group_names[0]), "{lang:?}");
        assert!(h.query_by_label(t.rank_id).is_some(), "{lang:?}");
        if lang == Lang::Zh {
            assert_ne!(t.rank_id, "Rank ID");
            assert!(h.query_by_label("Overall").is_none());
        }
    }
}

/// A snapshot that cannot be read is not a dead end (issue 26 item 18): Open folder, Open file
/// and the path field are there, and a typed path opens.
#[test]
fn an_unreadable_snapshot_offers_a_way_out() {
    let tmp = tempfile::tempdir().unwrap();
    let Some(cut) = truncated_snapshot(tmp.path()) else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(cut.clone()), Vec::new(), None);
        app.set_language(lang);
        app.document_mut::<memsight::ui::panes::snapshot::SnapshotView>()
            .unwrap()
            .wait();
        let mut h = common::harness(app);
        let t = h.state().tr();
        h.get_by_label(t.open_folder);
        h.get_by_label(t.open_db);
        let target = common::fixtures().join("torch_cluster");
        common::type_into(&mut h, t.path, target.to_str().unwrap());
        h.get_by_label(t.open).click();
        h.step();
        h.state_mut().wait_for_load();
        assert_eq!(h.state().path(), Some(target.as_path()));
        assert!(
            h.state()
                .document::<memsight::ui::panes::snapshot::SnapshotView>()
                .is_none()
        );
    }
}
