//! Compare through egui_kittest, in English and Chinese: a baseline from another profile and
//! from the same one, the dashed curves' note and the peak deltas, the per-operator diff (sort,
//! filter, Copy) against sums over the raw files, the details table on either side, and the
//! alignment at a step's start against the raw trace_view.json.

use crate::common;

use std::path::{Path, PathBuf};

use common::{copied, fixtures, raw_by_name, raw_ops, raw_origin, us_to_ns};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::baseline::BaselineSource;
use memsight::ui::i18n::Lang;
use memsight::ui::{Command, MemsightApp};

fn demo_rank(k: usize) -> PathBuf {
    let mut v: Vec<PathBuf> = std::fs::read_dir(fixtures().join("demo"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v.remove(k)
}

fn compared(
    current: PathBuf,
    baseline: BaselineSource,
    lang: Lang,
) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(current), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    app.apply(Command::CompareWith(baseline));
    app.wait_for_baseline();
    common::harness(app)
}

#[test]
fn a_baseline_from_another_profile_diff_table_copy_and_both_tables() {
    let cur = demo_rank(0);
    let base_dir = common::first_subdir(&fixtures().join("torch_cluster"));
    let (a, b) = (raw_by_name(&base_dir), raw_by_name(&cur));
    for (lang, tab, name_header) in [
        (Lang::En, "Diff vs baseline", "Name"),
        (Lang::Zh, "与基线的差异", "名称"),
    ] {
        let mut h = compared(
            cur.clone(),
            BaselineSource {
                path: fixtures().join("torch_cluster"),
                rank: 0,
            },
            lang,
        );
        let t = h.state().tr();
        assert!(
            h.state().view_state().tab == memsight::ui::panes::diff::TAB,
            "the diff shows first"
        );
        h.get_by_label(tab);
        h.get_by_label_contains(&(t.baseline_note)(""));
        // Copy: every name of either side, its sums and counts, by |Δ at peak| descending, then
        // |Δ| descending.
        h.get_by_label(t.copy).click();
        h.step();
        let tsv = copied(&h).expect("copied");
        let mut lines = tsv.lines();
        let headers = memsight::analysis::compare::delta_headers(lang);
        assert_eq!(lines.next().unwrap(), headers.join("\t"));
        let rows: Vec<Vec<String>> = lines
            .map(|l| l.split('\t').map(str::to_string).collect())
            .collect();
        let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        let (a_live, b_live) = (live_at_raw_peak(&base_dir), live_at_raw_peak(&cur));
        assert_eq!(rows.len(), names.len());
        let mut last = (f64::INFINITY, f64::INFINITY);
        for r in &rows {
            let (ak, an) = a.get(&r[0]).copied().unwrap_or_default();
            let (bk, bn) = b.get(&r[0]).copied().unwrap_or_default();
            let num = |i: usize| r[i].parse::<f64>().unwrap();
            assert!(
                (num(1) - ak).abs() < 1e-6 && (num(2) - bk).abs() < 1e-6,
                "{r:?}"
            );
            assert!((num(3) - (bk - ak)).abs() < 1e-6, "{r:?}");
            assert_eq!((num(4) as usize, num(5) as usize), (an, bn), "{r:?}");
            let (al, bl) = (
                a_live.get(&r[0]).copied().unwrap_or(0.0),
                b_live.get(&r[0]).copied().unwrap_or(0.0),
            );
            assert!(
                (num(6) - al).abs() < 1e-9 && (num(7) - bl).abs() < 1e-9,
                "{r:?}: at the peaks {al} / {bl} MB"
            );
            assert!((num(8) - (bl - al)).abs() < 1e-9, "{r:?}");
            let here = ((bl - al).abs(), (bk - ak).abs());
            assert!(
                here.0 < last.0 + 1e-9 && (here.0 < last.0 - 1e-9 || here.1 <= last.1 + 1e-9),
                "{r:?} after {last:?}"
            );
            last = here;
        }
        // Sorted by name, then filtered.
        h.get_by_role_and_label(egui::accesskit::Role::Button, name_header)
            .click();
        h.run();
        h.get_by_label(t.copy).click();
        h.step();
        let tsv = copied(&h).unwrap();
        let got: Vec<&str> = tsv
            .lines()
            .skip(1)
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        let mut sorted = got.clone();
        sorted.sort();
        assert_eq!(got, sorted);
        common::type_into(&mut h, t.name, "aten::m");
        let want = names
            .iter()
            .filter(|n| n.to_lowercase().contains("aten::m"))
            .count();
        h.get_by_label(&(t.rows)(&want.to_string()));
        // The details table on either side: the baseline's rows, then this rank's.
        h.get_by_label(t.table_baseline).click();
        h.run();
        let n_base = raw_ops(&base_dir).0.len();
        h.get_by_label(&(t.rows)(&memsight::ui::format::grouped(n_base as f64, 0)));
        h.get_by_label(t.table_current).click();
        h.run();
        let n_cur = raw_ops(&cur).0.len();
        h.get_by_label(&(t.rows)(&memsight::ui::format::grouped(n_cur as f64, 0)));
    }
}

/// Step starts of a rank's raw trace, ns from its origin.
fn raw_step_start(rank: &Path, id: i64) -> i128 {
    let out = rank.join("ASCEND_PROFILER_OUTPUT");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("trace_view.json")).unwrap())
            .unwrap();
    let ts = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["name"] == format!("ProfilerStep#{id}"))
        .and_then(|e| e["ts"].as_str())
        .unwrap();
    us_to_ns(ts) - raw_origin(&out)
}

#[test]
fn two_ranks_of_one_profile_align_at_a_step() {
    let mut h = compared(
        fixtures().join("demo"),
        BaselineSource {
            path: fixtures().join("demo"),
            rank: 1,
        },
        Lang::En,
    );
    h.state_mut().apply(Command::ShowOverview(false));
    h.run();
    assert_eq!(
        h.state().compare_offset(),
        Some(0),
        "aligned at the origins"
    );
    h.get_by_label("Align at").click();
    h.run();
    h.get_by_label("start of step #13").click();
    h.run();
    let want = raw_step_start(&demo_rank(0), 13) - raw_step_start(&demo_rank(1), 13);
    assert_eq!(h.state().compare_offset().map(i128::from), Some(want));
    // Stop comparing: the tabs and the offset go.
    h.state_mut().apply(Command::StopCompare);
    h.run();
    assert_eq!(h.state().compare_offset(), None);
    assert!(h.query_by_label("Diff vs baseline").is_none());
}

#[test]
fn a_baseline_that_cannot_load_says_why_and_keeps_the_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let mut h = compared(
        demo_rank(0),
        BaselineSource {
            path: tmp.path().to_path_buf(),
            rank: 0,
        },
        Lang::En,
    );
    assert!(h.state().baseline().loaded.is_none());
    h.get_by_label_contains("cannot compare:");
    assert!(h.state().view().is_some(), "the rank on screen stays");
    h.run();
}

/// MiB alive per name at the rank's raw Operator Allocated peak (the first PTA+GE sample with the
/// largest Total Allocated): rows allocated at or before it (or before the capture) and released
/// after it (or never).
fn live_at_raw_peak(rank: &Path) -> std::collections::BTreeMap<String, f64> {
    let rec = common::RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (_, t) = common::raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    let mut m = std::collections::BTreeMap::new();
    for (name, kb, a, r) in raw_ops(rank).0 {
        if a.is_none_or(|a| a <= t) && r.is_none_or(|r| r > t) {
            let name = if name.is_empty() {
                "Unknown".into()
            } else {
                name
            };
            *m.entry(name).or_insert(0.0) += kb.parse::<f64>().unwrap() / 1024.0;
        }
    }
    m
}

/// A baseline from the DB export and the rank from the text export of one run: the text
/// export's `cann::Conv2D1` and the DB's `Conv2D1` are one row (before, each operator was two
/// rows of ±its whole size), and the operators that explain the peak's change come first.
#[test]
fn a_db_baseline_against_a_text_rank_lists_each_operator_once() {
    let Some(samples) = common::samples() else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let p = samples.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch");
    let text_rank = common::first_subdir(&p.join("text/level1"));
    for lang in [Lang::En, Lang::Zh] {
        let mut h = compared(
            text_rank.clone(),
            BaselineSource {
                path: p.join("db/level1"),
                rank: 0,
            },
            lang,
        );
        let t = h.state().tr();
        h.get_by_label(t.copy).click();
        h.step();
        let tsv = copied(&h).expect("copied");
        let mut keys = std::collections::BTreeSet::new();
        let mut first_delta_at_peak = None;
        for line in tsv.lines().skip(1) {
            let cells: Vec<&str> = line.split('\t').collect();
            let key = cells[0].strip_prefix("cann::").unwrap_or(cells[0]);
            assert!(keys.insert(key.to_string()), "{key} is listed twice");
            let d: f64 = cells[8].parse().unwrap();
            let first = *first_delta_at_peak.get_or_insert(d.abs());
            assert!(d.abs() <= first + 1e-9, "{line}");
        }
        assert!(keys.contains("Conv2D1"), "{tsv}");
        assert!(first_delta_at_peak.is_some_and(|d| d > 0.0));
        h.get_by_label(memsight::analysis::compare::delta_headers(lang)[8]);
    }
}

/// Each table keeps its own page: the rank's details table and the baseline's, turned by their
/// own pagers, come back where they were left.
#[test]
fn the_rank_and_the_baseline_tables_keep_their_own_pages() {
    use memsight::ui::panes::details_table::{BASELINE, DETAILS};
    let mut h = compared(
        demo_rank(0),
        BaselineSource {
            path: fixtures().join("torch_cluster"),
            rank: 0,
        },
        Lang::En,
    );
    let t = h.state().tr();
    h.get_by_label(t.table_current).click();
    h.run();
    for _ in 0..2 {
        h.get_by_label("Next").click();
        h.run();
    }
    let page = |h: &Harness<'static, MemsightApp>, table| h.state().view_state().page(table);
    assert_eq!(page(&h, DETAILS), 2);
    h.get_by_label(t.table_baseline).click();
    h.run();
    assert_eq!(
        page(&h, BASELINE),
        0,
        "the baseline's table starts at its first"
    );
    h.get_by_label("Next").click();
    h.run();
    assert_eq!((page(&h, DETAILS), page(&h, BASELINE)), (2, 1));
    h.get_by_label_contains("Page 2 of");
    h.get_by_label(t.table_current).click();
    h.run();
    h.get_by_label_contains("Page 3 of");
    assert_eq!(page(&h, BASELINE), 1);
}

/// `memsight --compare A B` on a multi-rank B opens its first rank in compare mode, not the
/// cluster overview that hid the comparison (issue 26 item 12).
#[test]
fn a_comparison_asked_at_start_is_shown_not_the_overview() {
    let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
    // As `memsight::ui::run` does with --compare: asked before the profile is discovered.
    app.apply(Command::CompareWith(BaselineSource {
        path: fixtures().join("torch_cluster"),
        rank: 0,
    }));
    app.wait_for_load();
    app.wait_for_baseline();
    let h = common::harness(app);
    let vs = h.state().view_state();
    assert!(!vs.show_overview, "the overview hid the comparison");
    assert!(
        vs.tab == memsight::ui::panes::diff::TAB,
        "the diff shows first"
    );
    h.get_by_label_contains(&(h.state().tr().baseline_note)(""));
}

/// The diff says which raw rows it leaves out (negative sizes: releases of memory allocated
/// before profiling), with their count and KB from the raw files, in English and Chinese
/// (issue 43 item 16).
#[test]
fn the_diff_says_which_rows_it_leaves_out() {
    let (cur, base) = (demo_rank(0), demo_rank(1));
    let left_out = |rank: &Path| {
        let kb: Vec<f64> = raw_ops(rank)
            .0
            .iter()
            .map(|r| r.1.parse::<f64>().unwrap())
            .filter(|&k| k < 0.0)
            .collect();
        (kb.len(), kb.iter().sum::<f64>())
    };
    let (a, b) = (left_out(&base), left_out(&cur));
    assert!(a.0 + b.0 > 0, "the demo has such rows");
    for lang in [Lang::En, Lang::Zh] {
        let h = compared(
            cur.clone(),
            BaselineSource {
                path: base.clone(),
                rank: 0,
            },
            lang,
        );
        let kb = |v: f64| memsight::ui::format::grouped(v, 1);
        let rows = |n: usize| if n == 1 { "row" } else { "rows" };
        let line = match lang {
            Lang::En => format!(
                "Not counted: rows with a negative size, releases of memory allocated before \
                 profiling: A {} {} ({} KB), B {} {} ({} KB).",
                a.0,
                rows(a.0),
                kb(a.1),
                b.0,
                rows(b.0),
                kb(b.1)
            ),
            Lang::Zh => format!(
                "未计入：大小为负的行，即采集开始前申请的内存的释放：A {} 行（{} KB），B {} 行（{} KB）。",
                a.0,
                kb(a.1),
                b.0,
                kb(b.1)
            ),
        };
        h.get_by_label(&line);
    }
}

/// Issue 87 item 12: File ▸ Compare with file… asks for a file (the folder picker that Compare
/// with folder… shows cannot pick one, and it ignored a file name typed into it). Without a
/// desktop portal the in-app browser opens beside the open trace; the file name typed into it
/// and Enter compare with that trace's CUDA rank (not its CPU pseudo-rank), in English and
/// Chinese.
#[test]
fn compare_with_file_takes_a_typed_file_name() {
    let dir = fixtures().join("pytorch/whatif_cuda");
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(dir.join("gpu.pt.trace.json.gz")), Vec::new(), None);
        app.set_language(lang);
        app.set_picker(|_| memsight::ui::file_browser::PickOutcome::Unavailable);
        app.wait_for_load();
        // egui_file's fields have no accessible names (its widgets, not ours).
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .with_accessibility_check(false)
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        common::settle(&mut h);
        let t = h.state().tr();
        h.get_by_label(t.file).click();
        common::settle(&mut h);
        h.get_by_label(t.compare_with_file_menu).click();
        common::step_until(&mut h, "the in-app browser", |h| {
            h.state().browser().is_open()
        });
        common::settle(&mut h);
        assert_eq!(h.state().browser().directory(), Some(dir.as_path()));
        // The file-name field: the browser's empty text field (the other holds the folder).
        let role = egui::accesskit::Role::TextInput;
        let field = h
            .query_all_by_role(role)
            .find(|n| common::label_of(n).is_empty())
            .expect("the file-name field");
        field.click();
        common::settle(&mut h);
        let field = h
            .query_all_by_role(role)
            .find(|n| common::label_of(n).is_empty())
            .unwrap();
        field.type_text("offload.pt.trace.json.gz");
        common::settle(&mut h);
        h.key_press(egui::Key::Enter);
        common::settle(&mut h);
        h.state_mut().wait_for_baseline();
        common::settle(&mut h);
        let app = h.state();
        assert!(!app.browser().is_open(), "{lang:?}");
        let loaded = app.baseline().loaded.as_ref().expect("the baseline");
        assert_eq!(
            loaded.source.path,
            dir.join("offload.pt.trace.json.gz"),
            "{lang:?}"
        );
        // Its device rank, not the trace's CPU pseudo-rank (index 0).
        assert!(
            loaded.label.contains("cuda:0"),
            "{lang:?}: {}",
            loaded.label
        );
    }
}
