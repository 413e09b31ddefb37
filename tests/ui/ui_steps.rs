//! Steps in the GUI, driven through egui_kittest in English and Chinese: the steps tab and its
//! table, zooming to a step (from the table and from the chart's step strip), survivors listed
//! in the details table, sort and Copy, the leak verdict, and where the memory is at the cursor.
//! Every expected value comes from the raw files of the demo profile (trace_view.json parsed
//! whole, the CSVs split by hand).

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, copied, fixtures, raw_operator_curve, raw_ops, raw_origin, us_to_ns};
use egui::accesskit::Role;
use egui::{Event, Modifiers, PointerButton, Pos2, pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::generate::LEAK_OP;
use memsight::model::TimeWindow;
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::Lang;

fn rank_dir() -> PathBuf {
    common::first_subdir(&fixtures().join("demo"))
}

fn app(lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(fixtures().join("demo")), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    app.apply(memsight::ui::Command::ShowOverview(false));
    common::harness(app)
}

/// ProfilerStep#N of the raw trace: (id, start, end) in ns from the rank's origin.
fn raw_steps(dir: &Path) -> Vec<(i64, i64, i64)> {
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let origin = raw_origin(&out);
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("trace_view.json")).unwrap())
            .unwrap();
    let mut steps: Vec<(i64, i64, i64)> = v
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| {
            let id = e["name"].as_str()?.strip_prefix("ProfilerStep#")?;
            let s = us_to_ns(e["ts"].as_str().unwrap());
            let d = us_to_ns(&e["dur"].to_string());
            Some((
                id.parse().unwrap(),
                (s - origin) as i64,
                (s + d - origin) as i64,
            ))
        })
        .collect();
    steps.sort_by_key(|s| s.1);
    steps
}

/// The raw survivors of a step: (name, size KB text) of operator_memory rows in file order.
fn raw_survivors(dir: &Path, s: i64, e: i64) -> Vec<(String, String)> {
    let (ops, origin) = raw_ops(dir);
    let (s, e) = (i128::from(s) + origin, i128::from(e) + origin);
    ops.into_iter()
        .filter(|o| o.1.parse::<f64>().unwrap() > 0.0)
        .filter(|o| o.2.is_some_and(|a| a >= s && a < e) && o.3.is_none_or(|r| r > e))
        .map(|o| (o.0, o.1))
        .collect()
}

fn click(h: &mut Harness<'_, MemsightApp>, pos: Pos2) {
    h.hover_at(pos);
    h.run();
    for pressed in [true, false] {
        h.event(Event::PointerButton {
            pos,
            button: PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
    h.run();
}

/// The text of the cell right of `label` on the same line (a grid or table row); the first
/// such label below `below` (a y coordinate) when the label is not unique.
fn cell_right_of(h: &Harness<'_, MemsightApp>, label: &str, below: f32) -> String {
    let n = h
        .query_all_by_label(label)
        .filter(|n| n.rect().min.y > below)
        .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap_or_else(|| panic!("no {label}"));
    let (y, x) = (n.rect().center().y, n.rect().max.x);
    h.query_all_by_label_contains(" MB")
        .filter(|c| (c.rect().center().y - y).abs() < 3.0 && c.rect().min.x >= x)
        .min_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
        .and_then(|c| c.value())
        .unwrap_or_else(|| panic!("no value right of {label}"))
}

#[test]
fn the_steps_table_zooms_lists_survivors_sorts_and_copies_in_both_languages() {
    let dir = rank_dir();
    let steps = raw_steps(&dir);
    assert_eq!(steps.len(), 8);
    for (lang, tab, leak, headers_start) in [
        (Lang::En, "Steps (8)", "Possible leak", "Step\tStart(ms)"),
        (Lang::Zh, "迭代 (8)", "可能存在内存泄漏", "迭代\t开始(ms)"),
    ] {
        let mut h = app(lang);
        h.get_by_label(tab).click();
        h.run();
        assert!(h.state().view_state().tab == memsight::ui::panes::steps::TAB);
        for &(id, ..) in &steps {
            h.get_by_label(&format!("#{id}"));
        }
        // The demo's operator leaks each step: the verdict names it.
        h.get_by_label_contains(leak);
        h.get_by_label(LEAK_OP);

        // A click on a step zooms the chart (and the table) to exactly that step.
        let (id, s, e) = steps[2];
        h.get_by_label(&format!("#{id}")).click();
        h.run();
        assert_eq!(
            h.state().view_state().link.window,
            Some(TimeWindow::new(s, e))
        );

        // Sorted by End Allocated and copied: the ids come in the order of the raw end values.
        let header = h.state().tr().step_headers[8];
        h.get_by_label(header).click();
        h.run();
        let copy = h.state().tr().copy;
        h.get_by_label(copy).click();
        h.step();
        let tsv = copied(&h).expect("copied");
        let lines: Vec<&str> = tsv.lines().collect();
        assert!(lines[0].starts_with(headers_start), "{}", lines[0]);
        let origin = raw_origin(&dir.join("ASCEND_PROFILER_OUTPUT"));
        let mut want: Vec<(i128, i64)> = steps
            .iter()
            .map(|&(id, _, e)| {
                let end = raw_operator_curve(&dir, "Total Allocated(MB)", origin, i128::from(e));
                (end.unwrap(), id)
            })
            .collect();
        want.sort_by_key(|w| w.0);
        let got: Vec<i64> = lines[1..]
            .iter()
            .map(|l| l.split('\t').next().unwrap().parse().unwrap())
            .collect();
        assert_eq!(got, want.iter().map(|w| w.1).collect::<Vec<_>>());
        for (line, w) in lines[1..].iter().zip(&want) {
            let end: f64 = line.split('\t').nth(8).unwrap().parse().unwrap();
            assert!((end - w.0 as f64 / 1048576.0).abs() < 1e-9, "{line}");
        }

        // A click on a step's survivors lists exactly them in the details table.
        let expect = raw_survivors(&dir, s, e);
        assert!(!expect.is_empty());
        let y = h.get_by_label(&format!("#{id}")).rect().center().y;
        h.get_all_by_role_and_label(Role::Link, &expect.len().to_string())
            .find(|n| (n.rect().center().y - y).abs() < 3.0)
            .expect("the survivors cell of the step")
            .click();
        h.run();
        let vs = h.state().view_state();
        assert!(vs.tab != memsight::ui::panes::steps::TAB);
        assert_eq!(
            vs.only_rows.as_ref().map(|r| r.why.clone()),
            Some(memsight::ui::state::SubsetWhy::Survivors(id))
        );
        let banner = (h.state().tr().survivors_of)(id, expect.len());
        h.get_by_label(&banner);
        let copy_all = h.state().tr().copy_all;
        h.get_by_label(copy_all).click();
        h.step();
        let tsv = copied(&h)
            .or_else(|| h.state().last_copy().map(str::to_string))
            .expect("copied");
        let size = tsv
            .lines()
            .next()
            .unwrap()
            .split('\t')
            .position(|h| h == "Size(KB)")
            .expect("a Size column");
        let rows: Vec<(String, String)> = tsv
            .lines()
            .skip(1)
            .map(|l| {
                let c: Vec<&str> = l.split('\t').collect();
                (c[0].to_string(), c[size].to_string())
            })
            .collect();
        assert_eq!(rows, expect);
        // Show all leaves the filter.
        let all = h.state().tr().show_all_rows;
        h.get_by_label(all).click();
        h.run();
        assert!(h.state().view_state().only_rows.is_none());
    }
}

#[test]
fn a_click_on_the_step_strip_of_the_chart_zooms_to_that_step() {
    let steps = raw_steps(&rank_dir());
    let mut h = app(Lang::En);
    let plot = h.state().chart_plot_rect().expect("the chart was drawn");
    let x = plot.left() + plot.width() * 0.4;
    // The time under x, read as a user would: a click in the plot sets the cursor there.
    click(&mut h, pos2(x, plot.center().y));
    let t = h.state().view_state().link.cursor.expect("cursor");
    h.get_by_label("Close").click();
    h.run();
    let plot = h.state().chart_plot_rect().unwrap();
    let x = plot.left() + plot.width() * 0.4;
    click(&mut h, pos2(x, plot.top() + 6.0));
    let &(_, s, e) = steps
        .iter()
        .find(|&&(_, s, e)| s <= t && t <= e)
        .expect("a step under the pointer");
    assert_eq!(
        h.state().view_state().link.window,
        Some(TimeWindow::new(s, e))
    );
}

#[test]
fn where_the_memory_is_adds_up_to_the_device_total() {
    let dir = rank_dir();
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let origin = raw_origin(&out);
    for (lang, other, total) in [
        (Lang::En, "Other processes", "Total"),
        (Lang::Zh, "其他进程", "合计"),
    ] {
        let mut h = app(lang);
        let plot = h.state().chart_plot_rect().unwrap();
        click(
            &mut h,
            pos2(plot.left() + plot.width() * 0.55, plot.center().y),
        );
        let t = i128::from(h.state().view_state().link.cursor.expect("cursor"));
        // Independently: Device/HBM + Device/DDR (KB) of the raw trace and APP Reserved (MB) of
        // the raw memory_record, each the last sample at or before the cursor.
        let v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(out.join("trace_view.json")).unwrap())
                .unwrap();
        let counter = |name: &str| -> f64 {
            v.as_array()
                .unwrap()
                .iter()
                .filter(|e| e["ph"] == "C" && e["name"] == name)
                .map(|e| {
                    (
                        us_to_ns(e["ts"].as_str().unwrap()) - origin,
                        e["args"]["KB"].as_f64().unwrap(),
                    )
                })
                .filter(|p| p.0 <= t)
                .max_by_key(|p| p.0)
                .map_or(0.0, |p| p.1)
        };
        let device_mb = (counter("Device/HBM") + counter("Device/DDR")) / 1024.0;
        let rec = RawCsv::read(&out.join("memory_record.csv"));
        let (c, ts, r) = (
            rec.col("Component"),
            rec.col("Timestamp(us)"),
            rec.col("Total Reserved(MB)"),
        );
        let app_mb: f64 = rec
            .rows
            .iter()
            .filter(|x| x[c] == "APP" && us_to_ns(&x[ts]) - origin <= t)
            .max_by_key(|x| us_to_ns(&x[ts]))
            .map(|x| x[r].parse().unwrap())
            .unwrap();
        let mb = |v: f64| format!("{} MB", grouped(v, 2));
        let y = h.get_by_label(other).rect().min.y;
        assert_eq!(cell_right_of(&h, other, y - 1.0), mb(device_mb - app_mb));
        assert_eq!(cell_right_of(&h, total, y), mb(device_mb));
    }
}

#[test]
fn a_db_export_has_the_same_steps_tab_and_breakdown() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        allocs: 1500,
        steps: 5,
        leak_per_step: 16 << 20,
        unreleased_frac: 0.0,
        db: memsight::generate::DbMode::Only,
        seed: 3,
        ..Default::default()
    };
    let rank = memsight::generate::generate(tmp.path(), &opts)
        .unwrap()
        .remove(0);
    let db = std::fs::read_dir(rank.join("ASCEND_PROFILER_OUTPUT"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "db"))
        .unwrap();
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let ids: Vec<i64> = conn
        .prepare("SELECT id FROM STEP_TIME ORDER BY startNs")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(ids.len(), 5);
    let mut app = MemsightApp::new(Some(tmp.path().to_path_buf()), Vec::new(), None);
    app.wait_for_load();
    let mut h = common::harness(app);
    h.get_by_label("Steps (5)").click();
    h.run();
    h.get_by_label("steps from db");
    for id in ids {
        h.get_by_label(&format!("#{id}"));
    }
    h.get_by_label_contains("Possible leak");
    h.get_by_label(LEAK_OP);
    // The breakdown at a cursor: its parts add up to its total (the DB's device rows).
    let plot = h.state().chart_plot_rect().unwrap();
    click(
        &mut h,
        pos2(plot.left() + plot.width() * 0.5, plot.center().y),
    );
    let parse = |s: String| -> f64 { s.trim_end_matches(" MB").replace(',', "").parse().unwrap() };
    let y = h.get_by_label("Live blocks").rect().min.y - 1.0;
    let parts: f64 = [
        "Live blocks",
        "Allocated, not in operator_memory",
        "Cached in the pool",
        "Workspace",
        "CANN runtime and other components",
        "Other processes",
    ]
    .iter()
    .map(|p| parse(cell_right_of(&h, p, y)))
    .sum();
    let total = parse(cell_right_of(&h, "Total", y));
    assert!((parts - total).abs() < 0.05, "{parts} vs {total}");
}
