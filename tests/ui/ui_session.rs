//! The app's architecture as a user meets it: a box zoom reaches the table in the next frame,
//! ranks seen before come back from the session without a reload, several ranks (and profiles)
//! stay loaded together, and a freed rank's caches never answer for another.

use crate::common;

use std::path::PathBuf;
use std::sync::Arc;

use common::{fixtures, raw_ops};
use egui::{Event, Modifiers, PointerButton, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::{Command, MemsightApp};

fn cluster() -> PathBuf {
    fixtures().join("torch_cluster")
}

/// The cluster's k-th rank folder (name order).
fn rank_dir(k: usize) -> PathBuf {
    let mut subs: Vec<PathBuf> = std::fs::read_dir(cluster())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.remove(k)
}

/// Rows of a raw operator_memory overlapping `[a, b]` ns from the rank's origin, counted from
/// the file.
fn overlapping(dir: &std::path::Path, (a, b): (i64, i64)) -> usize {
    let (rows, origin) = raw_ops(dir);
    let (t0, t1) = (origin + i128::from(a), origin + i128::from(b));
    rows.iter()
        .filter(|r| r.3.is_none_or(|z| z >= t0) && r.2.is_none_or(|x| x <= t1))
        .count()
}

#[test]
fn a_box_zoom_reaches_the_table_in_the_next_frame() {
    let dir = rank_dir(0);
    let mut h = common::open_app(dir.clone());
    let all = raw_ops(&dir).0.len();
    h.get_by_label(&format!("{all} rows"));
    let (x0, x1) = (500.0, 700.0);
    h.hover_at(pos2(x0, 150.0));
    h.run();
    h.drag_at(pos2(x0, 150.0));
    h.step();
    for x in [550.0, 650.0, x1] {
        h.hover_at(pos2(x, 250.0));
        h.step();
    }
    h.step();
    h.event(Event::PointerButton {
        pos: pos2(x1, 250.0),
        button: PointerButton::Primary,
        pressed: false,
        modifiers: Modifiers::NONE,
    });
    h.step(); // the frame that sees the button go up: the chart asks for the zoom
    let w = h.state().view_state().link.window.expect("the box zoomed");
    assert!(
        !h.state().view_state().link.moving,
        "a box zoom is one step"
    );
    h.step(); // the next frame
    let want = overlapping(&dir, w.ns());
    assert!(want < all, "the box selects part of the rank");
    h.get_by_label(&format!("{want} rows"));
}

#[test]
fn a_rank_seen_before_comes_back_without_a_reload() {
    let mut h = common::open_app(cluster());
    let first = h.state().view().expect("rank 0");
    assert_eq!(h.state().loads_started(), 1);
    h.get_by_label("Rank ID").click();
    h.run();
    h.get_by_label("rank 1 · NPU:1 · node0").click();
    h.step();
    h.state_mut().wait_for_load();
    h.run();
    assert_eq!(h.state().loads_started(), 2);
    let rows1 = raw_ops(&rank_dir(1)).0.len();
    h.get_by_label(&format!("{rows1} rows"));

    // Back to rank 0: on screen in the same frame, nothing loads.
    h.get_by_label("Rank ID").click();
    h.run();
    h.get_by_label("rank 0 · NPU:0 · node0").click();
    h.step();
    assert!(!h.state().is_loading());
    assert_eq!(h.state().loads_started(), 2, "no second load of rank 0");
    let again = h.state().view().expect("rank 0 again");
    assert!(Arc::ptr_eq(&first, &again), "the very same loaded rank");
    assert_eq!(again.id(), first.id());
    h.run();
    h.get_by_label(&format!("{} rows", raw_ops(&rank_dir(0)).0.len()));
    assert_eq!(
        h.get_by_label("Rank ID").value().as_deref(),
        Some("rank 0 · NPU:0 · node0")
    );
}

#[test]
fn two_ranks_and_two_profiles_stay_loaded_together() {
    let mut app = MemsightApp::new(Some(cluster()), Vec::new(), None);
    app.wait_for_load();
    app.select_rank(1);
    app.wait_for_load();
    let keys = app.session().loaded_keys();
    assert_eq!(keys.len(), 2, "{keys:?}");
    let ranks: Vec<String> = keys
        .iter()
        .map(|k| app.session().peek(*k).unwrap().data.info.rank.clone())
        .collect();
    assert_eq!(ranks, ["1", "0"], "most recently used first");
    // A second profile: the first one's ranks stay until the bound evicts them.
    app.open(rank_dir(1));
    app.wait_for_load();
    let keys = app.session().loaded_keys();
    assert_eq!(keys.len(), 3);
    assert_ne!(keys[0].profile, keys[1].profile);
    assert_eq!(app.view().unwrap().data.info.dir, rank_dir(1));
    // The same folder opened as a profile of its own is a rank of its own in the session.
    assert!(!Arc::ptr_eq(
        &app.view().unwrap(),
        app.session().peek(keys[1]).unwrap()
    ));
}

#[test]
fn a_freed_ranks_caches_never_serve_another() {
    let mut app = MemsightApp::new(Some(cluster()), Vec::new(), None);
    app.session_mut().budget_bytes = 0; // keep only the rank on screen
    app.wait_for_load();
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.run();
    // Page 2 of rank 0 with a sort: the table and the chart have caches of rank 0.
    h.state_mut().apply(Command::sort(
        memsight::ui::panes::details_table::SORT,
        memsight::analysis::Column::Size,
    ));
    h.state_mut().apply(Command::SetPage(
        memsight::ui::panes::details_table::DETAILS,
        1,
    ));
    h.run();
    let weak = Arc::downgrade(&h.state().view().unwrap());
    let id0 = h.state().view().unwrap().id();

    h.state_mut().select_rank(1);
    h.state_mut().wait_for_load();
    h.run();
    assert!(weak.upgrade().is_none(), "rank 0 was evicted and freed");
    let view = h.state().view().unwrap();
    assert_ne!(view.id(), id0);
    assert_eq!(h.state().session().loaded_keys().len(), 1);
    // What the table shows is rank 1's, computed anew: its row count and its first page.
    let (rows, _) = raw_ops(&rank_dir(1));
    h.get_by_label(&format!("{} rows", rows.len()));
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        0
    );
    h.state_mut().apply(Command::Copy);
    let tsv = h.state().last_copy().unwrap().to_string();
    let names: Vec<&str> = tsv
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let mut want: Vec<(f64, &str)> = rows
        .iter()
        .map(|r| (r.1.parse::<f64>().unwrap(), r.0.as_str()))
        .collect();
    // Size ascending, file order on ties (a stable sort), the first page of 10.
    want.sort_by(|a, b| a.0.total_cmp(&b.0));
    let want: Vec<&str> = want.iter().take(10).map(|w| w.1).collect();
    assert_eq!(names, want);

    // Back to rank 0: it was freed, so it loads again.
    let loads = h.state().loads_started();
    h.state_mut().select_rank(0);
    assert!(h.state().is_loading());
    h.state_mut().wait_for_load();
    assert_eq!(h.state().loads_started(), loads + 1);
}
