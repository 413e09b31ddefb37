//! The static-graph view (Graph ID selector, its op table filtered by the zoomed node range) and
//! the load warnings one click away, through egui_kittest.

use crate::common;

use common::{RawCsv, fixtures};
use egui_kittest::kittest::Queryable;

/// (graph id, node start, node end) of each static op of the MindSpore fixture's first rank
/// (the TOTAL rows are the graphs' Total Size line, not ops).
fn raw_static() -> Vec<(String, i64, i64)> {
    let dir = common::first_subdir(&fixtures().join("mindspore"));
    let ops = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/static_op_mem.csv"));
    let (g, s, e) = (
        ops.col("Graph ID"),
        ops.col("Node Index Start"),
        ops.col("Node Index End"),
    );
    let name = ops.col("Op Name");
    ops.rows
        .iter()
        .filter(|r| r[name] != "TOTAL")
        .map(|r| (r[g].clone(), r[s].parse().unwrap(), r[e].parse().unwrap()))
        .collect()
}

#[test]
fn static_view_switches_graphs_and_filters_ops_by_node_range() {
    let mut h = common::open_app(common::first_subdir(&fixtures().join("mindspore")));
    let raw = raw_static();
    let count = |graph: &str| raw.iter().filter(|r| r.0 == graph).count();
    h.get_by_label("Static graph").click();
    h.run();
    h.get_by_label("Graph 0 ops");
    h.get_by_label(&format!("{} rows", count("0")));

    common::pick_graph(&mut h, "1");
    h.get_by_label("Graph 1 ops");
    h.get_by_label(&format!("{} rows", count("1")));

    // A zoom to node indices 5..=12 keeps ops starting or ending inside it.
    h.state_mut()
        .apply(memsight::ui::Command::SetStaticRange(Some((5.0, 12.0))));
    h.run();
    let inside = raw
        .iter()
        .filter(|r| r.0 == "1" && ((5..=12).contains(&r.1) || (5..=12).contains(&r.2)))
        .count();
    assert!(inside < count("1"), "the range must exclude something");
    h.get_by_label(&format!("{inside} rows"));

    // A drag-box on the chart picks the range the same way.
    h.key_press(egui::Key::Escape);
    h.run();
    assert_eq!(h.state().view_state().static_range, None);
    let (x0, x1) = (300.0, 700.0);
    h.hover_at(egui::pos2(x0, 200.0));
    h.run();
    h.drag_at(egui::pos2(x0, 200.0));
    for x in [400.0, 600.0, x1] {
        h.hover_at(egui::pos2(x, 220.0));
        h.step();
    }
    h.step();
    h.drop_at(egui::pos2(x1, 220.0));
    h.run();
    let (a, b) = h.state().view_state().static_range.expect("a box zoom");
    assert!(a > 0.0 && b > a, "{a}..{b}");
    let (lo, hi) = (a.ceil() as i64, b.floor() as i64);
    let inside = raw
        .iter()
        .filter(|r| r.0 == "1" && ((lo..=hi).contains(&r.1) || (lo..=hi).contains(&r.2)))
        .count();
    h.get_by_label(&format!("{inside} rows"));
}

/// The static op table's Min/Max Size(KB) filter (Insight's, compared against the KB column,
/// both bounds inclusive), in English and Chinese, against the raw file.
#[test]
fn static_ops_filter_by_size_in_both_languages() {
    let rank = common::first_subdir(&fixtures().join("mindspore"));
    let ops = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/static_op_mem.csv"));
    let (g, n, k) = (ops.col("Graph ID"), ops.col("Op Name"), ops.col("Size(KB)"));
    let sizes: Vec<f64> = ops
        .rows
        .iter()
        .filter(|r| r[g] == "0" && r[n] != "TOTAL")
        .map(|r| r[k].parse().unwrap())
        .collect();
    let mut sorted = sizes.clone();
    sorted.sort_by(f64::total_cmp);
    let (lo, hi) = (sorted[sorted.len() / 4], sorted[sorted.len() * 3 / 4]);
    let want = sizes.iter().filter(|&&x| x >= lo && x <= hi).count();
    assert!(want < sizes.len());
    for lang in memsight::ui::i18n::Lang::ALL {
        let mut app = memsight::ui::MemsightApp::new(Some(rank.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let mut h = common::harness(app);
        let t = h.state().tr();
        h.state_mut()
            .apply(memsight::ui::Command::SetStaticView(true));
        h.run();
        common::type_into(&mut h, t.min_size, &lo.to_string());
        common::type_into(&mut h, t.max_size, &hi.to_string());
        h.get_by_label(&(t.rows)(&want.to_string()));
    }
}

#[test]
fn load_warnings_are_one_click_away() {
    let mut h = common::open_app(fixtures().join("malformed/bad_rows_ascend_pt"));
    let view = h.state().view().unwrap();
    let n = view.data.report.warning_count();
    assert!(n > 0);
    h.get_by_label(&format!("⚠ {n} warnings")).click();
    h.run();
    // The skipped rows of each file, with the first bad line and why.
    h.get_by_label_contains("line 4: 3 fields, the header has 7");
    h.get_by_label_contains("line 3: Size(KB): missing");
    // (The chart's banner says "scientific notation" too; this is the window's line.)
    h.get_by_label_contains("lossy timestamps:");
}

#[cfg(unix)]
#[test]
fn files_skipped_by_discovery_are_listed_with_the_warnings() {
    let tmp = tempfile::tempdir().unwrap();
    let src = fixtures().join("malformed/bad_rows_ascend_pt");
    let dst = tmp.path().join("bad_rows_ascend_pt");
    std::fs::create_dir_all(dst.join("ASCEND_PROFILER_OUTPUT")).unwrap();
    for f in ["memory_record.csv", "operator_memory.csv"] {
        let from = src.join("ASCEND_PROFILER_OUTPUT").join(f);
        std::fs::copy(from, dst.join("ASCEND_PROFILER_OUTPUT").join(f)).unwrap();
    }
    let fifo = dst.join("ASCEND_PROFILER_OUTPUT/npu_module_mem.csv");
    assert!(
        std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap()
            .success()
    );
    let mut h = common::open_app(tmp.path().to_path_buf());
    let view = h.state().view().unwrap();
    let n = view.data.report.warning_count() + 1;
    h.get_by_label(&format!("⚠ {n} warnings")).click();
    h.run();
    h.get_by_label_contains("npu_module_mem.csv: not a regular file (it is a FIFO); skipped");
}

/// The notes users meet most read in the UI's language; the file names in them stay as they are.
#[test]
fn load_notes_are_translated_in_chinese() {
    use memsight::ui::i18n::Lang;
    let dir = fixtures().join("malformed/bad_rows_ascend_pt");
    for (lang, lossy, warnings) in [
        (Lang::En, "lossy timestamps: ", "warnings"),
        (Lang::Zh, "时间戳有损：", "条警告"),
    ] {
        let mut app = memsight::ui::MemsightApp::new(Some(dir.clone()), Vec::new(), None);
        app.wait_for_load();
        app.apply(memsight::ui::Command::ShowOverview(false));
        app.set_language(lang);
        let mut h = common::harness(app);
        let view = h.state().view().unwrap();
        let n = view.data.report.warning_count();
        let notes = view.data.report.all_notes();
        let lossy_file = view.data.report.lossy_time_files[0].display().to_string();
        h.get_by_label_contains(warnings).click();
        h.run();
        h.get_by_label_contains(&format!("{lossy}{lossy_file}"));
        if lang == Lang::Zh {
            // No typed note is left in English (free text has no translation to show).
            for w in &notes {
                if !matches!(w, memsight::model::Message::Text(_)) {
                    let english = w.text();
                    assert!(
                        h.query_by_label_contains(&english).is_none(),
                        "{english} untranslated"
                    );
                }
            }
            assert!(n > 0);
        }
    }
}

/// Skipped rows read in the UI's language: each typed reason of the malformed fixture shows in
/// Chinese (the raw lines, column names and cells as the file writes them), none in English.
#[test]
fn skipped_row_reasons_are_translated_in_chinese() {
    use memsight::model::SkipReason;
    use memsight::ui::i18n::Lang;
    let dir = fixtures().join("malformed/bad_rows_ascend_pt");
    let mut app = memsight::ui::MemsightApp::new(Some(dir), Vec::new(), None);
    app.wait_for_load();
    app.apply(memsight::ui::Command::ShowOverview(false));
    app.set_language(Lang::Zh);
    let mut h = common::harness(app);
    let view = h.state().view().unwrap();
    let samples: Vec<(u64, SkipReason)> = view
        .data
        .report
        .files
        .iter()
        .flat_map(|f| f.skipped.samples.iter().map(|s| (s.line, s.reason.clone())))
        .collect();
    assert!(
        samples
            .iter()
            .any(|(_, r)| matches!(r, SkipReason::FewerFields { .. }))
            && samples
                .iter()
                .any(|(_, r)| matches!(r, SkipReason::Missing { .. })),
        "{samples:?}"
    );
    h.get_by_label_contains("条警告").click();
    h.run();
    for (line, reason) in &samples {
        if matches!(reason, SkipReason::Text(_)) {
            continue;
        }
        let english = reason.to_string();
        assert!(
            h.query_by_label_contains(&english).is_none(),
            "{english} untranslated"
        );
        assert!(
            h.query_all_by_label_contains(&format!("第 {line} 行："))
                .count()
                > 0
        );
    }
    // Written out by hand: the reasons of lines 4 and 3 (see load_warnings_are_one_click_away).
    h.get_by_label_contains("第 4 行：只有 3 个字段，表头有 7 个");
    h.get_by_label_contains("Size(KB)：缺失");
}

/// A rank read from its DB beside CSV files says so as a note (ℹ), not as a ⚠ warning: nothing
/// is wrong (issue 26 item 18). English and Chinese.
#[test]
fn reading_the_db_beside_csv_files_is_a_note_not_a_warning() {
    use memsight::ui::i18n::Lang;
    let rank = common::first_subdir(&common::db_fixtures().join("db"));
    for lang in Lang::ALL {
        let mut app = memsight::ui::MemsightApp::new(Some(rank.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let view = app.view().expect("a rank");
        assert!(view.data.report.warnings.iter().any(|m| m.is_note()));
        assert_eq!(view.data.report.warning_count(), 1, "the note only");
        let mut h = common::harness(app);
        let t = h.state().tr();
        assert!(
            h.query_by_label(&(t.warnings)(1)).is_none(),
            "{lang:?}: no ⚠"
        );
        h.get_by_label(&(t.notes)(1)).click();
        h.run();
        // The window lists it with ℹ (the button says ℹ too).
        assert!(h.query_all_by_label_contains("ℹ ").count() >= 2);
    }
}
