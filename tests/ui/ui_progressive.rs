//! Progressive display, as a user meets it: the curves of a rank are on screen as soon as its
//! memory_record is read, the table says it is still loading (in English and Chinese), and when
//! the rest arrives the table fills in, the curves are not built again, and a window chosen in
//! between stays where it was even when operator_memory moves the time origin.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, fixtures, us_to_ns};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::analysis::GroupBy;
use memsight::model::TimeWindow;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, ZH};
use memsight::ui::{Command, MemsightApp};

fn demo_rank() -> PathBuf {
    fixtures()
        .join("demo")
        .join("node0_4000_20261121000000000_ascend_pt")
}

/// An app that has shown the first look of `path` and holds the rest of the load.
fn first_look(path: PathBuf, lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(path), Vec::new(), None);
    app.set_language(lang);
    assert!(app.wait_for_first_look(), "{:?}", app.error());
    app.apply(Command::ShowOverview(false));
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    // The loading line's spinner asks for frames while it turns: a few frames, not "until
    // settled".
    h.run_steps(4);
    h
}

/// The largest `Total Allocated(MB)` of the PTA+GE rows, in bytes, read from the file.
fn raw_peak_allocated(rank: &Path) -> i64 {
    let csv = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (c, a) = (csv.col("Component"), csv.col("Total Allocated(MB)"));
    csv.rows
        .iter()
        .filter(|r| r[c] == "PTA+GE" && !r[a].is_empty())
        .map(|r| (r[a].parse::<f64>().unwrap() * 1048576.0).round() as i64)
        .max()
        .unwrap()
}

/// A dump's first look names what is still loading without a file it does not have.
#[test]
fn a_dumps_curves_come_first_and_the_table_says_its_blocks_are_loading() {
    let (tmp, _) = common::generated_dump(2000);
    for (lang, t) in [(Lang::En, &EN), (Lang::Zh, &ZH)] {
        let mut h = first_look(tmp.path().to_path_buf(), lang);
        let view = h.state().view().unwrap();
        assert!(
            view.data.partial && view.data.operators.is_empty(),
            "{lang:?}"
        );
        assert!(!view.data.records.is_empty());
        h.get_by_label(t.rest_loading_imported);
        assert!(h.query_by_label(t.rest_loading).is_none(), "{lang:?}");
        h.state_mut().release_load();
        h.state_mut().wait_for_load();
        h.run();
        assert!(h.state().view().unwrap().data.operators.len() >= 2000);
        assert!(h.query_by_label(t.rest_loading_imported).is_none());
    }
}

#[test]
fn the_curves_come_first_and_the_table_says_it_is_loading() {
    let rank = demo_rank();
    let records = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"))
        .rows
        .len();
    let ops = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"))
        .rows
        .len();
    for (lang, t) in [(Lang::En, &EN), (Lang::Zh, &ZH)] {
        let mut h = first_look(rank.clone(), lang);
        let view = h.state().view().unwrap();
        assert!(view.data.partial, "{lang:?}");
        assert!(h.state().is_loading());
        // Every memory_record row is there, none of operator_memory yet.
        assert_eq!(view.data.records.len(), records);
        assert_eq!(view.data.operators.len(), 0);
        h.get_by_label(t.rest_loading);
        let rows_label = (t.rows)(&grouped(ops as f64, 0));
        assert!(h.query_by_label(&rows_label).is_none());
        // The curves on screen are the file's: the Operator Allocated peak.
        let first_series = view.series(GroupBy::Overall);
        let allocated = first_series
            .iter()
            .find(|s| s.series.name == "Operator Allocated")
            .unwrap();
        assert_eq!(
            allocated.series.values.iter().max().copied(),
            Some(raw_peak_allocated(&rank))
        );
        let first_ptr = first_series.as_ptr();

        h.state_mut().release_load();
        h.state_mut().wait_for_load();
        h.run();
        let done = h.state().view().unwrap();
        assert!(!done.data.partial);
        assert_eq!(done.data.operators.len(), ops);
        assert!(h.query_by_label(t.rest_loading).is_none());
        h.get_by_label(&rows_label);
        // The same curves, not built a second time.
        assert_eq!(done.series(GroupBy::Overall).as_ptr(), first_ptr);
    }
}

/// A rank whose first allocation (operator_memory) is 2 ms before its first memory_record row.
fn rank_with_earlier_operator(root: &Path) -> PathBuf {
    let dir = root.join("rank_ascend_pt");
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    let mut mr = String::from(
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n",
    );
    for k in 0..100u64 {
        let t = 1_700_000_000_010_000 + k * 100;
        mr.push_str(&format!(
            "PTA+GE,{t}.000\t,{}.0,64.0,{}.0,1,NPU:0\n",
            k % 7,
            k % 7
        ));
    }
    std::fs::write(out.join("memory_record.csv"), mr).unwrap();
    std::fs::write(
        out.join("operator_memory.csv"),
        "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type\n\
         aten::empty,1024.0,1700000000008000.000\t,1700000000011000.000\t,3000.0,1.0,64.0,0.0,64.0,NPU:0\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_window_chosen_before_the_rest_arrives_stays_put_when_the_origin_moves() {
    let tmp = tempfile::tempdir().unwrap();
    let rank = rank_with_earlier_operator(tmp.path());
    let mut h = first_look(rank.clone(), Lang::En);
    let first = h.state().view().unwrap();
    let records = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let first_record = us_to_ns(&records.rows[0][1]) as i64;
    assert_eq!(first.data.time_origin_ns, first_record);
    // 1 ms to 5 ms after the first memory_record row.
    let chosen = TimeWindow::new(1_000_000, 5_000_000);
    h.state_mut().apply(Command::SetWindow {
        window: Some(chosen),
        moving: false,
    });
    h.run_steps(4);
    h.state_mut().release_load();
    h.state_mut().wait_for_load();
    h.run();
    let done = h.state().view().unwrap();
    // operator_memory's allocation, 2 ms earlier, is the origin now.
    assert_eq!(done.data.time_origin_ns, first_record - 2_000_000);
    let w = h.state().view_state().link.window.unwrap();
    assert_eq!(
        (w.start, w.end),
        (chosen.start + 2_000_000, chosen.end + 2_000_000)
    );
}

#[test]
fn a_rank_left_during_its_load_is_read_again_when_it_comes_back() {
    let cluster = fixtures().join("torch_cluster");
    let mut h = first_look(cluster, Lang::En);
    assert!(h.state().view().unwrap().data.partial);
    // Another rank, while rank 0's operator_memory is still to come: its load is dropped.
    h.state_mut().apply(Command::SelectRank(1));
    h.state_mut().wait_for_load();
    assert!(!h.state().view().unwrap().data.partial);
    // Back to rank 0: its first look is not a loaded rank; it loads again, completely.
    h.state_mut().apply(Command::SelectRank(0));
    assert!(h.state().is_loading());
    h.state_mut().wait_for_load();
    let view = h.state().view().unwrap();
    assert!(!view.data.partial);
    assert!(!view.data.operators.is_empty());
}

#[test]
fn a_load_cancelled_after_its_first_look_leaves_no_view_that_says_loading() {
    // Big enough (200k allocations) that the cancel reaches operator_memory's parse.
    let tmp = tempfile::tempdir().unwrap();
    memsight::generate::generate(
        tmp.path(),
        &memsight::generate::GenOptions {
            allocs: 200_000,
            ..Default::default()
        },
    )
    .unwrap();
    let mut h = first_look(tmp.path().to_path_buf(), Lang::En);
    h.state_mut().apply(Command::CancelLoad);
    h.state_mut().wait_for_load();
    h.run();
    assert!(!h.state().is_loading());
    // Either the rank finished before the cancel was seen, or it is gone with the reason said;
    // never a first look with nothing loading behind it.
    match h.state().view() {
        Some(v) => assert!(!v.data.partial),
        None => assert_eq!(h.state().error(), Some(EN.load_cancelled)),
    }
    assert!(h.query_by_label(EN.rest_loading).is_none());
}
