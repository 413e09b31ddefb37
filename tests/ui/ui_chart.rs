//! The chart's own interactions through egui_kittest: legend toggling, the hover readout,
//! drag-box zoom, wheel zoom, and the three ways back to the whole rank.

use crate::common;

use common::fixtures;
use egui::{Event, Modifiers, PointerButton, Pos2, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::MemsightApp;

fn rank_dir() -> std::path::PathBuf {
    common::first_subdir(&fixtures().join("torch_cluster"))
}

fn button(h: &Harness<'_, MemsightApp>, pos: Pos2, pressed: bool) {
    h.event(Event::PointerButton {
        pos,
        button: PointerButton::Primary,
        pressed,
        modifiers: Modifiers::NONE,
    });
}

/// The time (ms) under `x` on the chart, read the way a user would: click there, read the
/// cursor, close Live at cursor again (it narrows the chart).
fn time_at(h: &mut Harness<'_, MemsightApp>, x: f32) -> f64 {
    let pos = pos2(x, 200.0);
    h.hover_at(pos);
    h.run();
    button(h, pos, true);
    button(h, pos, false);
    h.run();
    let t = h
        .state()
        .view_state()
        .cursor_ms()
        .expect("a click sets the cursor");
    h.get_by_label("Close").click();
    h.run();
    t
}

/// Entries named `name` inside the chart area (the legend), as opposed to the stats grid.
fn in_chart(h: &Harness<'_, MemsightApp>, name: &str) -> usize {
    h.query_all_by_label(name)
        .filter(|n| n.rect().min.y < 380.0)
        .count()
}

#[test]
fn legend_entries_hide_and_show_series() {
    let mut h = common::open_app(rank_dir());
    let stats_rows = |h: &Harness<'_, MemsightApp>| h.query_all_by_label("APP Reserved").count();
    let before = stats_rows(&h);
    assert_eq!(in_chart(&h, "APP Reserved"), 1, "one legend entry");
    h.query_all_by_label("APP Reserved")
        .find(|n| n.rect().min.y < 380.0)
        .unwrap()
        .click();
    h.run();
    assert_eq!(
        stats_rows(&h),
        before - 1,
        "a hidden series leaves the window statistics"
    );
    h.query_all_by_label("APP Reserved")
        .find(|n| n.rect().min.y < 380.0)
        .unwrap()
        .click();
    h.run();
    assert_eq!(stats_rows(&h), before);
}

#[test]
fn hovering_the_chart_reads_every_visible_series() {
    let mut h = common::open_app(rank_dir());
    let t = time_at(&mut h, 700.0);
    h.hover_at(pos2(700.0, 200.0));
    h.run_steps(60); // tooltips wait until the pointer rests
    // The readout: the time, then one row per visible series with its value.
    h.get_by_label(&format!("{t:.3} ms"));
    let view = h.state().view().unwrap();
    let series = view.series(memsight::analysis::GroupBy::Overall);
    let at = (t * 1e6) as i64;
    for s in series {
        let v = memsight::analysis::value_at(s, at).expect("a value at the hovered time");
        // Independently: the last sample at or before the time, from the series' own points.
        let i = s.series.times.iter().rposition(|&x| x <= at).unwrap();
        assert_eq!(v, s.series.values[i]);
        let shown = format!(
            "{} MB",
            memsight::ui::format::grouped(v as f64 / (1u64 << 20) as f64, 2)
        );
        // The readout's row of this series (the legend's entries above the plot are buttons, the
        // statistics below the chart): its value cell is on the same line.
        let name = h
            .query_all_by_label(&s.series.name)
            .filter(|n| n.accesskit_node().role() != egui::accesskit::Role::Button)
            .find(|n| n.rect().min.x > 600.0 && n.rect().min.y < 400.0)
            .unwrap_or_else(|| panic!("{} in the readout", s.series.name));
        let y = name.rect().center().y;
        let cell = h
            .query_all_by_label_contains(" MB")
            .find(|n| (n.rect().center().y - y).abs() < 3.0 && n.rect().min.x > name.rect().min.x)
            .and_then(|n| n.value());
        assert_eq!(cell.as_deref(), Some(shown.as_str()), "{}", s.series.name);
    }
}

#[test]
fn dragging_a_box_zooms_to_its_time_range() {
    let mut h = common::open_app(rank_dir());
    let (x0, x1) = (400.0, 900.0);
    let (t0, t1) = (time_at(&mut h, x0), time_at(&mut h, x1));
    h.hover_at(pos2(x0, 150.0));
    h.run();
    h.drag_at(pos2(x0, 150.0));
    h.step();
    for x in [500.0, 700.0, x1] {
        h.hover_at(pos2(x, 250.0));
        h.step();
    }
    h.step(); // the hand stops before it lets go
    h.drop_at(pos2(x1, 250.0));
    h.run();
    let (a, b) = h.state().view_state().window_ms().expect("zoomed");
    let px = (t1 - t0) / f64::from(x1 - x0);
    assert!(
        (a - t0).abs() <= 1.5 * px && (b - t1).abs() <= 1.5 * px,
        "zoomed to {a}..{b}, the box was {t0}..{t1}"
    );
    assert_eq!(
        h.state().view_state().cursor_ms(),
        None,
        "a drag is not a click"
    );
}

#[test]
fn the_wheel_zooms_around_the_pointer_and_reset_returns() {
    let mut h = common::open_app(rank_dir());
    let x = 500.0;
    let t = time_at(&mut h, x);
    h.hover_at(pos2(x, 200.0));
    h.run();
    h.event(Event::MouseWheel {
        unit: egui::MouseWheelUnit::Point,
        delta: egui::vec2(0.0, 120.0),
        phase: egui::TouchPhase::Move,
        source: egui::MouseWheelSource::Wheel,
        modifiers: Modifiers::NONE,
    });
    h.run_steps(30); // the wheel is smoothed over several frames
    let (a, b) = h
        .state()
        .view_state()
        .window_ms()
        .expect("the wheel zooms in");
    assert!(a < t && t < b, "{a}..{b} keeps {t} in view");
    let view = h.state().view().unwrap();
    let (e0, e1) = view.time_extent();
    let full = (e1 - e0) as f64 / 1e6;
    // One wheel step of 120 points narrows the range by e^(120/200), exactly once.
    let ratio = (b - a) / full;
    assert!((ratio - (-0.6f64).exp()).abs() < 0.01, "{ratio}");
    // The time under the pointer stays under the pointer.
    let again = time_at(&mut h, x);
    let px = (b - a) / 1000.0;
    assert!((again - t).abs() < 2.0 * px, "{again} vs {t}");

    h.get_by_label("Reset zoom").click();
    h.run();
    assert_eq!(h.state().view_state().window_ms(), None);

    // A double-click resets too (Esc is tested with the table), and closes Live at cursor. The
    // panel is opened first: in kittest a first click that opens it (narrowing the chart) kept
    // the second from counting; the real app under Xvfb with xdotool resets either way.
    h.state_mut().apply(memsight::ui::Command::SetWindow {
        window: memsight::model::TimeWindow::from_ms(a, b),
        moving: false,
    });
    h.state_mut().apply(memsight::ui::Command::SetCursor(Some(
        memsight::model::ms_to_ns(a),
    )));
    h.run();
    let pos = pos2(600.0, 200.0);
    h.hover_at(pos);
    h.run();
    for pressed in [true, false, true, false] {
        button(&h, pos, pressed);
        h.step();
    }
    h.run();
    assert_eq!(h.state().view_state().window_ms(), None);
    assert_eq!(h.state().view_state().cursor_ms(), None);
}

#[test]
fn window_statistics_match_the_raw_records() {
    let h = common::open_app(rank_dir());
    // APP Reserved over the whole rank, from the APP rows of memory_record.csv.
    let raw = common::RawCsv::read(&rank_dir().join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let reserved = raw.col("Total Reserved(MB)");
    let app: Vec<f64> = raw
        .rows
        .iter()
        .filter(|r| r[0] == "APP")
        .map(|r| r[reserved].parse().unwrap())
        .collect();
    let fmt = |mb: f64| format!("{} MB", memsight::ui::format::grouped(mb, 2));
    let min = app.iter().copied().fold(f64::INFINITY, f64::min);
    let max = app.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let delta = app[app.len() - 1] - app[0];
    // The stats row of APP Reserved: its name, then min, max and change, left to right.
    let name = h
        .query_all_by_label("APP Reserved")
        .max_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap();
    let y = name.rect().center().y;
    let mut row: Vec<(f32, String)> = h
        .query_all_by_label_contains(" MB")
        .filter(|n| (n.rect().center().y - y).abs() < 3.0)
        .map(|n| (n.rect().min.x, n.value().unwrap_or_default()))
        .collect();
    row.sort_by(|a, b| a.0.total_cmp(&b.0));
    let cells: Vec<String> = row.into_iter().map(|c| c.1).collect();
    assert_eq!(cells, vec![fmt(min), fmt(max), fmt(delta)]);
}

#[test]
fn right_drag_pans_the_time_axis() {
    let mut h = common::open_app(rank_dir());
    let (t0, t1) = (time_at(&mut h, 400.0), time_at(&mut h, 900.0));
    h.state_mut().apply(memsight::ui::Command::SetWindow {
        window: memsight::model::TimeWindow::from_ms(t0, t1),
        moving: false,
    });
    h.run();
    // Time per pixel at this zoom, read off the chart the same way.
    let per_px = (time_at(&mut h, 900.0) - time_at(&mut h, 400.0)) / 500.0;
    let press = |h: &Harness<'_, MemsightApp>, pos: Pos2, pressed: bool| {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    };
    h.hover_at(pos2(700.0, 200.0));
    h.run();
    press(&h, pos2(700.0, 200.0), true);
    h.step();
    for k in 1..=10 {
        h.hover_at(pos2(700.0 - 10.0 * k as f32, 200.0));
        h.step();
    }
    h.step();
    press(&h, pos2(600.0, 200.0), false);
    h.run();
    // The content follows the pointer left (the first few pixels go to telling a drag from a
    // click): the window moved right by up to 100 px of time.
    let (a, b) = h.state().view_state().window_ms().expect("still zoomed");
    let moved = (a - t0) / per_px;
    assert!((80.0..=100.5).contains(&moved), "moved {moved} px");
    assert!(((b - a) - (t1 - t0)).abs() < 1e-9, "a pan keeps the span");
}

#[test]
fn a_sampled_window_says_so_and_zooming_in_makes_it_exact() {
    let mut app = MemsightApp::new(Some(rank_dir()), Vec::new(), None);
    app.wait_for_load();
    app.chart_mut().set_exact_max_points(100); // the fixture's thousands of points are "many"
    let mut h = Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(16)
        .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
    h.run();
    let view = h.state().view().unwrap();
    let series = view.series(memsight::analysis::GroupBy::Overall);
    let total: usize = series.iter().map(|s| s.series.len()).sum();
    let notice = h.get_by_label_contains("sampled (LTTB): showing ");
    let text = notice.value().unwrap_or_default();
    assert!(
        text.ends_with(&format!(
            " of {} points — zoom in for full detail",
            memsight::ui::format::grouped(total as f64, 0)
        )),
        "{text}"
    );
    // A window with at most 100 points in every series is drawn exactly, without the notice.
    let (e0, _) = view.time_extent();
    let t = series
        .iter()
        .filter(|s| s.series.len() > 30)
        .map(|s| s.series.times[30])
        .min()
        .unwrap();
    h.state_mut().apply(memsight::ui::Command::SetWindow {
        window: memsight::model::TimeWindow::from_ms(e0 as f64 / 1e6, t as f64 / 1e6),
        moving: false,
    });
    h.run();
    assert!(h.query_by_label_contains("sampled (LTTB)").is_none());
}

/// Insight's test_rank_1: memory_record (times rounded by Excel to 1.69512E+15 µs) and
/// operator_memory lie 134 days apart, so the whole rank drew the curves as one dot. The chart
/// says how far apart they are and zooms to either (issue 26 item 18), in English and Chinese;
/// the gap and the spans are computed from the raw files.
#[test]
fn tables_far_apart_are_named_and_each_can_be_fitted() {
    let Some(samples) = common::samples() else {
        return; // it said so (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let rank =
        samples.join("xiaobingling93-pixel_Ascend-msinsight/server/src/test/test_data/test_rank_1");
    let out = rank.join("ASCEND_PROFILER_OUTPUT");
    let rec = common::RawCsv::read(&out.join("memory_record.csv"));
    let ops = common::RawCsv::read(&out.join("operator_memory.csv"));
    let us = |s: &str| s.trim().parse::<f64>().unwrap();
    let t = rec.col("Timestamp(us)");
    let rec_us: Vec<f64> = rec.rows.iter().map(|r| us(&r[t])).collect();
    let (a, z) = (ops.col("Allocation Time(us)"), ops.col("Release Time(us)"));
    let op_us: Vec<f64> = ops
        .rows
        .iter()
        .flat_map(|r| [&r[a], &r[z]])
        .filter(|c| !c.trim().is_empty())
        .map(|c| us(c))
        .collect();
    let min = |v: &[f64]| v.iter().copied().fold(f64::INFINITY, f64::min);
    let max = |v: &[f64]| v.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let origin = min(&rec_us).min(min(&op_us));
    let gap_days = (min(&op_us) - max(&rec_us)) / 86_400e6;
    for (lang, days) in [
        (memsight::ui::i18n::Lang::En, "days"),
        (memsight::ui::i18n::Lang::Zh, "天"),
    ] {
        let mut app = MemsightApp::new(Some(rank.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let t = app.tr();
        let mut h = common::harness(app);
        h.get_by_label_contains(&format!("{gap_days:.1} {days}"));
        // Fit to memory_record: a window around its one instant.
        h.get_by_label(t.fit_records).click();
        h.run();
        let w = h.state().view_state().link.window.expect("a window");
        let at_ms = (max(&rec_us) - origin) / 1e3;
        assert!(w.start_ms() <= at_ms && at_ms <= w.end_ms(), "{w:?}");
        assert!(w.end_ms() - w.start_ms() <= 1.0 + 1e-9, "{w:?}");
        // Fit to operator_memory: every allocation and release in view, little else.
        h.get_by_label(t.fit_operators).click();
        h.run();
        let w = h.state().view_state().link.window.expect("a window");
        let (lo, hi) = ((min(&op_us) - origin) / 1e3, (max(&op_us) - origin) / 1e3);
        assert!(
            w.start_ms() <= lo + 1e-3 && hi - 1e-3 <= w.end_ms(),
            "{w:?} vs {lo}..{hi}"
        );
        assert!(w.end_ms() - w.start_ms() < 1.2 * (hi - lo) + 1.0, "{w:?}");
    }
}

/// Issue 43 item 15: + and − zoom the chart in and out twice around the middle of what is
/// shown (the pointer is off the chart), 0 shows the whole rank; a key typed into a filter
/// stays there. English and Chinese.
#[test]
fn plus_minus_and_zero_zoom_the_chart_from_the_keyboard() {
    for lang in memsight::ui::i18n::Lang::ALL {
        let mut h = common::app_at_720p(&rank_dir(), lang);
        h.run();
        let view = h.state().view().unwrap();
        let (e0, e1) = view.time_extent();
        let (f0, f1) = (e0 as f64 / 1e6, e1 as f64 / 1e6);
        h.hover_at(pos2(5.0, 715.0));
        h.run();
        h.key_press(egui::Key::Plus);
        h.run();
        let (a, b) = h.state().view_state().window_ms().expect("+ zooms in");
        let mid = 0.5 * (f0 + f1);
        let tol = (f1 - f0) * 1e-3;
        assert!(
            ((b - a) - 0.5 * (f1 - f0)).abs() < tol,
            "{a}..{b} of {f0}..{f1}"
        );
        assert!((0.5 * (a + b) - mid).abs() < tol, "{a}..{b} around {mid}");
        h.key_press(egui::Key::Minus);
        h.run();
        assert_eq!(h.state().view_state().window_ms(), None, "− zooms back out");
        h.key_press(egui::Key::Plus);
        h.run();
        h.key_press(egui::Key::Plus);
        h.run();
        let (a, b) = h.state().view_state().window_ms().expect("twice in");
        assert!(((b - a) - 0.25 * (f1 - f0)).abs() < tol, "{a}..{b}");
        h.key_press(egui::Key::Num0);
        h.run();
        assert_eq!(h.state().view_state().window_ms(), None, "0 resets");
        // Typed into a filter, + is text.
        h.query_all_by_role(egui::accesskit::Role::TextInput)
            .next()
            .expect("a filter field")
            .click();
        h.run();
        h.key_press(egui::Key::Plus);
        h.run();
        assert_eq!(h.state().view_state().window_ms(), None, "{lang:?}");
    }
}
