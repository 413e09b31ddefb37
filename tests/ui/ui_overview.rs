//! The cluster overview through egui_kittest, in English and Chinese: rows filled in the
//! background, the spread and the outlier, sorting, opening a rank, cancelling. Peaks are
//! checked against the raw memory_record files.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, copy_dir, raw_peak};
use egui::accesskit::Role;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::generate::{GenOptions, generate};
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::Lang;

/// Five similar ranks and a sixth that leaks 512 MiB a step (rank id `0_2`: its folder says 0).
fn cluster() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let base = GenOptions {
        allocs: 800,
        ..Default::default()
    };
    generate(
        tmp.path(),
        &GenOptions {
            ranks: 5,
            ..base.clone()
        },
    )
    .unwrap();
    let other = tempfile::tempdir().unwrap();
    let leaky = generate(
        other.path(),
        &GenOptions {
            steps: 6,
            leak_per_step: 512 << 20,
            ..base
        },
    )
    .unwrap()
    .remove(0);
    copy_dir(
        &leaky,
        &tmp.path().join("node1_4999_20261121000000009_ascend_pt"),
    );
    tmp
}

/// The app opened on `root`'s overview in `lang` (its rows filled), as a harness.
fn overview_in(root: &Path, lang: Lang) -> egui_kittest::Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(root.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    app.wait_for_overview();
    common::harness(app)
}

/// Two generated ranks of 200 allocations in `root`: their folders.
fn two_small_ranks(root: &Path) -> Vec<PathBuf> {
    let opts = GenOptions {
        ranks: 2,
        allocs: 200,
        ..Default::default()
    };
    generate(root, &opts).unwrap()
}

fn rank_dirs(root: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    v.sort();
    v
}

fn raw_allocated_peak(rank: &Path) -> f64 {
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0)
        .unwrap()
        .0
}

#[test]
fn the_overview_lists_every_rank_marks_the_outlier_sorts_and_opens_a_rank() {
    let tmp = cluster();
    let dirs = rank_dirs(tmp.path());
    assert_eq!(dirs.len(), 6);
    for (lang, title, outliers) in [
        (
            Lang::En,
            "Cluster overview: 6 of 6 ranks summarised",
            "Outliers: rank 0_2",
        ),
        (Lang::Zh, "集群总览：已汇总 6/6 个 rank", "离群：rank 0_2"),
    ] {
        let mut h = overview_in(tmp.path(), lang);
        assert!(h.state().view_state().show_overview);
        h.get_by_label(title);
        h.get_by_label_contains(outliers);
        // Every rank's peak, as the raw file has it, on that rank's row.
        let profile = h.state().profile().unwrap().clone();
        for (i, info) in profile.ranks.iter().enumerate() {
            let want = grouped(raw_allocated_peak(&info.dir), 2);
            let link = h
                .get_all_by_role_and_label(Role::Link, &info.rank)
                .next()
                .unwrap_or_else(|| panic!("rank {} listed", info.rank));
            let y = link.rect().center().y;
            assert!(
                h.query_all_by_label(&want)
                    .any(|n| (n.rect().center().y - y).abs() < 3.0),
                "rank {} (index {i}): {want}",
                info.rank
            );
        }
        // Sorted by peak, largest first: the leaking rank leads.
        let header = h.state().tr().overview_headers[3];
        h.get_by_label(header).click();
        h.run();
        h.get_by_label(&format!("{header} ⬆")).click();
        h.run();
        let top = h
            .get_all_by_role(Role::Link)
            .filter(|n| n.rect().min.y > 300.0)
            .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
            .unwrap();
        assert_eq!(top.accesskit_node().label().as_deref(), Some("0_2"));
        // A click opens that rank.
        top.click();
        h.step(); // starts the load (a spinner shows while it runs)
        h.state_mut().wait_for_load();
        h.run();
        let idx = profile.ranks.iter().position(|r| r.rank == "0_2").unwrap();
        let vs = h.state().view_state();
        assert!(!vs.show_overview);
        assert_eq!(vs.rank, idx);
        // The toggle in the parameter bar brings the overview back.
        let button = h.state().tr().overview_button;
        h.get_by_label(button).click();
        h.run();
        assert!(h.state().view_state().show_overview);
    }
}

#[test]
fn rows_arrive_in_discovery_order_and_cancel_stops_the_job() {
    use memsight::ui::jobs::{JobKey, Jobs};
    use memsight::ui::overview::Overview;
    let tmp = cluster();
    let profile = std::sync::Arc::new(memsight::ingest::discover(tmp.path()).unwrap());
    let n = profile.ranks.len();
    // Rows fill one rank after another: what has arrived is always the first k ranks, and k
    // only grows, to every rank.
    let mut jobs = Jobs::default();
    let mut o = Overview::start(
        &mut jobs,
        std::sync::Arc::clone(&profile),
        memsight::model::SourceChoice::Auto,
    );
    let mut seen = Vec::new();
    while o.is_running() {
        o.poll();
        let k = o.done();
        assert!(
            o.rows[..k].iter().all(Option::is_some),
            "not a prefix at {k}"
        );
        if seen.last() != Some(&k) {
            seen.push(k);
        }
        std::thread::yield_now();
    }
    assert_eq!(o.done(), n);
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    // Each row against its rank's raw files: row counts, the Operator Allocated peak.
    for (row, info) in o.rows.iter().zip(&profile.ranks) {
        let row = row.as_ref().expect("summarised");
        let out = rank_dirs(tmp.path())
            .into_iter()
            .map(|d| d.join("ASCEND_PROFILER_OUTPUT"))
            .find(|d| info.dir.starts_with(d) || d.starts_with(&info.dir))
            .expect("the rank's folder");
        let rec = RawCsv::read(&out.join("memory_record.csv"));
        let ops = RawCsv::read(&out.join("operator_memory.csv"));
        assert_eq!(row.counts.memory_record, rec.rows.len() as u64);
        assert_eq!(row.counts.operator_memory, ops.rows.len() as u64);
        let want = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0)
            .unwrap()
            .0;
        let got = row.peaks.operator_allocated.as_ref().expect("a peak").mib;
        assert!((got - want).abs() < 1e-6, "{got} vs {want}");
    }
    // Cancel: the worker stops (its thread returns) and nothing more arrives.
    let mut o = Overview::start(
        &mut jobs,
        std::sync::Arc::clone(&profile),
        memsight::model::SourceChoice::Auto,
    );
    o.cancel();
    let mut spins = 0u32;
    while jobs.is_running(&JobKey::new(memsight::ui::overview::OVERVIEW_JOB)) {
        spins += 1;
        assert!(spins < 1_000_000, "the cancelled job never stopped");
        std::thread::yield_now();
    }
    let stopped_at = o.done();
    o.poll();
    assert_eq!(o.done(), stopped_at);
    assert!(!o.is_running());
}

/// A rank's notes show on hover over its Warnings cell, in the UI's language.
#[test]
fn a_ranks_warnings_show_translated_on_hover() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = two_small_ranks(tmp.path());
    let module = ranks[1].join("ASCEND_PROFILER_OUTPUT/npu_module_mem.csv");
    std::fs::remove_file(&module).unwrap();
    for (lang, note) in [
        (
            Lang::En,
            "no npu_module_mem*.csv: the component peak table is empty",
        ),
        (Lang::Zh, "没有 npu_module_mem*.csv：组件峰值表为空"),
    ] {
        let mut h = overview_in(tmp.path(), lang);
        assert!(
            h.query_by_label_contains(note).is_none(),
            "shown before hover"
        );
        // The Warnings column is the last; the second rank's row has the one note.
        let rank = h.state().profile().unwrap().ranks[1].rank.clone();
        let y = h
            .get_all_by_role_and_label(Role::Link, &rank)
            .next()
            .unwrap()
            .rect()
            .center()
            .y;
        let cell = h
            .get_all_by_label("1")
            .filter(|n| (n.rect().center().y - y).abs() < 3.0)
            .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
            .expect("the warnings count on the rank's row");
        cell.hover();
        // A tooltip waits for the pointer to rest (egui's tooltip delay, half a second).
        for _ in 0..60 {
            h.step();
        }
        h.get_by_label_contains(note);
    }
}

/// The top bar's warnings button opens the load warnings over the overview too (it opened
/// nothing there: the window was drawn only over a rank), in English and Chinese.
#[test]
fn the_warnings_button_opens_the_warnings_over_the_overview() {
    let tmp = tempfile::tempdir().unwrap();
    let ranks = two_small_ranks(tmp.path());
    // A row of two cells in each rank's memory_record: skipped, and said.
    for r in &ranks {
        let path = r.join("ASCEND_PROFILER_OUTPUT/memory_record.csv");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("APP,12\n");
        std::fs::write(&path, text).unwrap();
    }
    for lang in [Lang::En, Lang::Zh] {
        let mut h = overview_in(tmp.path(), lang);
        assert!(h.state().view_state().show_overview, "{lang:?}");
        let t = h.state().tr();
        let n = h.state().view().unwrap().data.report.warning_count();
        assert!(n > 0, "{lang:?}");
        assert!(
            h.query_by_label_contains(t.load_warnings).is_none(),
            "{lang:?}: open before the click"
        );
        h.get_by_label(&(t.warnings)(n)).click();
        h.run();
        assert!(
            h.state().view_state().show_overview,
            "{lang:?}: still the overview"
        );
        // Over the overview, the title says whose warnings they are: the rank the top bar
        // picked (the first of the two generated: rank 0, on NPU 0 of host node0), as the
        // rank picker names it.
        h.get_by_label(&format!("{} — rank 0 · NPU:0 · node0", t.load_warnings));
        // The skipped row, verbatim.
        h.get_by_label_contains("APP,12");
    }
}

/// A bar opens its rank, like the rank numbers (issue 26 item 12).
#[test]
fn a_bar_opens_its_rank() {
    let tmp = cluster();
    let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
    app.wait_for_load();
    app.wait_for_overview();
    let mut h = common::harness(app);
    let bars = h.state().overview_bar_rects().to_vec();
    assert_eq!(bars.len(), 6, "{bars:?}");
    let (i, rect) = bars[3];
    h.hover_at(rect.center());
    h.run();
    assert_eq!(
        h.output().platform_output.cursor_icon,
        egui::CursorIcon::PointingHand,
        "a bar says it can be clicked"
    );
    h.event(egui::Event::PointerButton {
        pos: rect.center(),
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.event(egui::Event::PointerButton {
        pos: rect.center(),
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.step();
    h.state_mut().wait_for_load();
    h.run();
    let vs = h.state().view_state();
    assert!(!vs.show_overview);
    assert_eq!(vs.rank, i);
}

/// Rank folders without memory data are named, not dropped without a word: Insight's level2
/// sample has four rank folders and two of them hold only analysis.db (issue 26 item 12).
#[test]
fn rank_folders_without_memory_data_are_named() {
    let Some(samples) = common::samples() else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let root = samples.join("xiaobingling93-pixel_Ascend-msinsight/test/st/level2");
    // Independently: the rank folders whose output has no memory_record/operator_memory CSV
    // and no profiler DB.
    let mut empty: Vec<String> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .filter(|p| {
            !std::fs::read_dir(p.join("ASCEND_PROFILER_OUTPUT"))
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .any(|n| {
                    n.starts_with("memory_record")
                        || n.starts_with("operator_memory")
                        || n.starts_with("ascend_pytorch_profiler")
                })
        })
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    empty.sort();
    assert_eq!(empty.len(), 2);
    // The CLI's notes.
    let (code, out, _) = common::memsight(&["inspect", root.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let notes: Vec<&str> = v["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    for name in &empty {
        assert!(
            notes
                .iter()
                .any(|n| n.contains(name.as_str()) && n.contains("no memory data")),
            "{name}: {notes:?}"
        );
    }
    // The overview, in both languages.
    for lang in Lang::ALL {
        let h = overview_in(&root, lang);
        let t = h.state().tr();
        h.get_by_label(&(t.overview_without_data)(2, &empty.join(", ")));
    }
}

/// Cancel leaves a Retry that summarises every rank again (issue 26 item 18), in both languages.
#[test]
fn a_cancelled_overview_offers_retry_and_retry_completes_it() {
    // The overview waits at a gate until the test opens it: certainly unfinished when it is
    // cancelled, and still running after Retry, however fast the machine is.
    let tmp = tempfile::tempdir().unwrap();
    generate(
        tmp.path(),
        &GenOptions {
            ranks: 8,
            allocs: 2_000,
            ..Default::default()
        },
    )
    .unwrap();
    for lang in Lang::ALL {
        let mut app = MemsightApp::new(None, Vec::new(), None);
        let gate = app.gate_jobs(memsight::ui::jobs::JobKey::new(
            memsight::ui::overview::OVERVIEW_JOB,
        ));
        app.set_language(lang);
        app.apply(memsight::ui::Command::Open(tmp.path().to_path_buf()));
        let t = app.tr();
        app.wait_for_load();
        app.apply(memsight::ui::Command::CancelOverview);
        let n = app.overview().expect("an overview").rows.len();
        assert_eq!(n, 8);
        assert_eq!(app.overview().unwrap().done(), 0, "cancelled at the gate");
        let mut h = common::harness(app);
        h.get_by_label(t.retry).click();
        h.step();
        assert!(h.state().overview().unwrap().is_running(), "{lang:?}");
        gate.open();
        h.state_mut().wait_for_overview();
        h.run();
        assert_eq!(h.state().overview().unwrap().done(), n);
        assert!(
            h.query_by_label(t.retry).is_none(),
            "no Retry once complete"
        );
    }
}
