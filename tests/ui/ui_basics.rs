//! The app driven through its real widgets with egui_kittest (no window, no GPU): open a
//! profile, switch rank and Group By, zoom, sort, page, filter, Copy, and Live at cursor.

use crate::common;

use std::path::PathBuf;

use common::{copied, fixtures, raw_ops};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::analysis::GroupBy;
use memsight::ui::MemsightApp;

fn rank_dir(k: usize) -> PathBuf {
    let mut subs: Vec<PathBuf> = std::fs::read_dir(fixtures().join("torch_cluster"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    subs.sort();
    subs.remove(k)
}

fn open(path: PathBuf) -> Harness<'static, MemsightApp> {
    common::open_app(path)
}

#[test]
fn opens_a_profile_and_shows_rank_curves_and_table() {
    // A profile of several ranks opens on the cluster overview; a click on a rank shows it.
    let mut app = MemsightApp::new(Some(fixtures().join("torch_cluster")), Vec::new(), None);
    app.wait_for_load();
    app.wait_for_overview();
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.run();
    assert!(h.state().view_state().show_overview);
    h.get_by_label("Cluster overview: 2 of 2 ranks summarised");
    h.get_all_by_role_and_label(egui::accesskit::Role::Link, "0")
        .next()
        .expect("rank 0 in the overview")
        .click();
    h.run();
    assert!(!h.state().view_state().show_overview);
    assert_eq!(
        h.get_by_label("Rank ID").value().as_deref(),
        Some("rank 0 · NPU:0 · node0")
    );
    assert!(
        h.query_all_by_label("Operator Allocated").count() >= 2,
        "legend and window stats"
    );
    let (rows, _) = raw_ops(&rank_dir(0));
    h.get_by_label(&format!("{} rows", rows.len()));
}

/// The open combo-box option named `label` (the table has a "Stream" header too).
fn option<'a>(h: &'a Harness<'_, MemsightApp>, label: &'a str) -> egui_kittest::Node<'a> {
    h.query_all_by_label(label)
        .find(|n| n.rect().min.y < 200.0)
        .unwrap_or_else(|| panic!("no option {label}"))
}

#[test]
fn switching_rank_and_group_by() {
    let mut h = open(fixtures().join("torch_cluster"));
    h.get_by_label("Rank ID").click();
    h.run();
    h.get_by_label("rank 1 · NPU:1 · node0").click();
    h.step(); // starts the load (a spinner shows while it runs)
    h.state_mut().wait_for_load();
    h.run();
    assert_eq!(h.state().view_state().rank, 1);
    assert_eq!(
        h.get_by_label("Rank ID").value().as_deref(),
        Some("rank 1 · NPU:1 · node0")
    );
    let (rows, _) = raw_ops(&rank_dir(1));
    h.get_by_label(&format!("{} rows", rows.len()));

    h.get_by_label("Group By").click();
    h.run();
    option(&h, "Stream").click();
    h.run();
    assert_eq!(h.state().view_state().group_by, GroupBy::Stream);
    assert!(h.query_all_by_label_contains("Stream 1 Allocated").count() > 0);
    h.get_by_label("Group By").click();
    h.run();
    option(&h, "Component").click();
    h.run();
    h.get_by_label_contains("Component peak memory");
    h.get_by_label("HCCL"); // 1200 MB peak
}

#[test]
fn zoom_range_filters_the_table_by_overlap_and_within() {
    let mut h = open(rank_dir(0));
    h.state_mut().apply(memsight::ui::Command::SetWindow {
        window: memsight::model::TimeWindow::from_ms(0.5, 0.8),
        moving: false,
    });
    h.run();
    assert_eq!(
        h.state().view_state().window_ms(),
        Some((0.5, 0.8)),
        "the chart keeps a zoom set from outside"
    );
    let (rows, origin) = raw_ops(&rank_dir(0));
    let (t0, t1) = (origin + 500_000, origin + 800_000);
    let overlap = rows
        .iter()
        .filter(|r| r.3.is_none_or(|z| z >= t0) && r.2.is_none_or(|a| a <= t1))
        .count();
    h.get_by_label(&format!("{overlap} rows"));
    h.get_by_label("Only allocated or released within the selection")
        .click();
    h.run();
    let within = rows
        .iter()
        .filter(|r| {
            r.2.is_some_and(|a| (t0..=t1).contains(&a))
                || r.3.is_some_and(|z| (t0..=t1).contains(&z))
        })
        .count();
    assert!(within < overlap);
    h.get_by_label(&format!("{within} rows"));
    // Esc resets the zoom.
    h.key_press(egui::Key::Escape);
    h.run();
    assert_eq!(h.state().view_state().window_ms(), None);
    h.get_by_label(&format!("{} rows", rows.len()));
}

#[test]
fn sort_page_filter_and_copy_exact_tsv() {
    let mut h = open(rank_dir(0));
    let (rows, _) = raw_ops(&rank_dir(0));
    // Size header: ascending, then descending.
    h.get_by_label("Size(KB)").click();
    h.run();
    h.get_by_label("Size(KB) ⬆").click();
    h.run();
    h.get_by_label("Size(KB) ⬇");
    // Page 2.
    h.get_by_label("Next").click();
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        1
    );
    let pages = rows.len().div_ceil(10);
    h.get_by_label(&format!("Page 2 of {pages}"));
    // Copy puts exactly that page on the clipboard: rows 11-20 by size descending (ties in file
    // order), every column, plain numbers.
    h.get_by_label("Copy").click();
    h.step();
    let tsv = copied(&h)
        .or_else(|| h.state().last_copy().map(str::to_string))
        .expect("copied");
    let mut order: Vec<usize> = (0..rows.len()).collect();
    order.sort_by(|&a, &b| {
        rows[b]
            .1
            .parse::<f64>()
            .unwrap()
            .total_cmp(&rows[a].1.parse::<f64>().unwrap())
    });
    let lines: Vec<&str> = tsv.lines().collect();
    assert_eq!(lines.len(), 11);
    assert_eq!(
        lines[0],
        "Name\tSize(KB)\tAllocation Time(ms)\tRelease Time(ms)\tActive Release Time(ms)\tDuration(ms)\tActive Duration(ms)\tAllocation Total Allocated(MB)\tAllocation Total Reserved(MB)\tAllocation Total Active(MB)\tRelease Total Allocated(MB)\tRelease Total Reserved(MB)\tRelease Total Active(MB)\tStream"
    );
    for (k, line) in lines[1..].iter().enumerate() {
        let raw = &rows[order[10 + k]];
        let cells: Vec<&str> = line.split('\t').collect();
        assert_eq!(cells.len(), 14);
        assert_eq!(
            (cells[0], cells[1]),
            (raw.0.as_str(), raw.1.as_str()),
            "row {k}"
        );
    }
    let data = h.state().view().unwrap();
    let want_rows: Vec<u32> = order[10..20].iter().map(|&i| i as u32).collect();
    assert_eq!(tsv, memsight::export::rows_tsv(&data.data, &want_rows));

    // Name filter (case-insensitive), typed into the box.
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Name")
        .click();
    h.run();
    h.get_by_role_and_label(egui::accesskit::Role::TextInput, "Name")
        .type_text("ATEN::MM");
    h.run();
    let n = rows
        .iter()
        .filter(|r| r.0.to_lowercase().contains("aten::mm"))
        .count();
    h.get_by_label(&format!("{n} rows"));
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        0
    );
}

#[test]
fn clicking_the_chart_opens_live_at_cursor() {
    let mut h = open(rank_dir(0));
    let pos = egui::pos2(700.0, 200.0);
    h.hover_at(pos);
    h.run();
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed: true,
        modifiers: egui::Modifiers::NONE,
    });
    h.event(egui::Event::PointerButton {
        pos,
        button: egui::PointerButton::Primary,
        pressed: false,
        modifiers: egui::Modifiers::NONE,
    });
    h.run();
    let t = h
        .state()
        .view_state()
        .cursor_ms()
        .expect("a click sets the cursor");
    h.get_by_label("Live at cursor");
    let (rows, origin) = raw_ops(&rank_dir(0));
    let at = origin + (t * 1e6) as i128;
    let alive = rows
        .iter()
        .filter(|r| r.2.is_none_or(|a| a <= at) && r.3.is_none_or(|z| z > at))
        .count();
    h.get_by_label_contains(&format!(": {alive} blocks"));
    h.get_by_label("Close").click();
    h.run();
    assert_eq!(h.state().view_state().cursor_ms(), None);
}

#[test]
fn a_folder_without_data_says_why() {
    let tmp = tempfile::tempdir().unwrap();
    let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
    app.wait_for_load();
    let mut h = Harness::builder()
        .with_size([1000.0, 700.0])
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.run();
    h.get_by_label("Nothing to show");
    h.get_by_label_contains("no memory data found");
}

#[test]
fn keyboard_pages_and_copies_and_hover_marks_a_row() {
    let mut h = open(rank_dir(0));
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        1
    );
    h.key_press(egui::Key::ArrowLeft);
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        0
    );
    // Ctrl+C arrives as a Copy event from the window system.
    h.event(egui::Event::Copy);
    h.step();
    let tsv = copied(&h).expect("Ctrl+C copies the page");
    assert_eq!(tsv.lines().count(), 11);
    // Hovering a row of the table marks it (the chart shades its lifetime).
    let (rows, _) = raw_ops(&rank_dir(0));
    let first = rows[0].0.clone();
    let node = h
        .query_all_by_label(&first)
        .find(|n| n.rect().min.y > 500.0)
        .expect("first row's name cell");
    node.hover();
    h.run();
    assert_eq!(h.state().view_state().hovered_row, Some(0));
    // Clicking rows selects them; Copy then copies just those.
    h.query_all_by_label(&first)
        .find(|n| n.rect().min.y > 500.0)
        .unwrap()
        .click();
    h.run();
    assert!(h.state().view_state().selected.contains(&0));
    h.get_by_label("Copy").click();
    h.step();
    let tsv = copied(&h).expect("copied");
    assert_eq!(tsv.lines().count(), 2);
    assert!(
        tsv.lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("{first}\t"))
    );
}

#[test]
fn a_big_ranks_group_by_builds_behind_a_spinner() {
    let mut app = MemsightApp::new(Some(rank_dir(0)), Vec::new(), None);
    app.wait_for_load();
    app.chart_mut().set_background_min_rows(0); // every rank counts as big
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.run();
    h.get_by_label("Group By").click();
    h.run();
    option(&h, "Stream").click();
    h.step();
    h.get_by_label("Building the Stream curves…");
    common::step_until(&mut h, "the Stream curves", |h| {
        h.state()
            .view()
            .is_some_and(|v| v.series_built(GroupBy::Stream).is_some())
    });
    h.run();
    assert!(h.query_by_label("Building the Stream curves…").is_none());
    assert!(h.query_all_by_label_contains("Stream 1 Allocated").count() > 0);
}
