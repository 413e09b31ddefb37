//! The details table's controls through egui_kittest: rows per page, jump to page, the size
//! range filter, Export CSV… (with the save dialog answered at once), and the Host Name filter
//! narrowing the rank list.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, fixtures};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::MemsightApp;

fn rank_dir() -> PathBuf {
    common::first_subdir(&fixtures().join("torch_cluster"))
}

/// (name, size KB) of every operator_memory row, in file order.
fn raw_sizes() -> Vec<(String, f64)> {
    let ops = RawCsv::read(&rank_dir().join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    ops.rows
        .iter()
        .map(|r| (r[0].clone(), r[1].parse().unwrap()))
        .collect()
}

#[test]
fn rows_per_page_and_jump_to_page() {
    let mut h = common::open_app(rank_dir());
    let n = raw_sizes().len();
    h.get_by_label(&format!("Page 1 of {}", n.div_ceil(10)));
    h.get_by_label("rows per page").click();
    h.run();
    h.query_all_by_label("50")
        .last()
        .expect("the 50 option")
        .click();
    h.run();
    assert_eq!(h.state().view_state().page_size, 50);
    let pages = n.div_ceil(50);
    h.get_by_label(&format!("Page 1 of {pages}"));
    common::type_into(&mut h, "Go to page", "3");
    h.get_by_label("Go").click();
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        2
    );
    h.get_by_label(&format!("Page 3 of {pages}"));
    // Past the end goes to the last page.
    common::type_into(&mut h, "Go to page", "100000");
    h.get_by_label("Go").click();
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        pages - 1
    );
    h.get_by_label("First").click();
    h.run();
    assert_eq!(
        h.state()
            .view_state()
            .page(memsight::ui::panes::details_table::DETAILS),
        0
    );
}

/// Chinese operator names and a name with a comma and quotes survive Export CSV as Excel reads
/// it (a UTF-8 BOM, RFC 4180 quoting), and Copy puts the same names on the clipboard.
#[test]
fn export_csv_keeps_chinese_names_for_excel() {
    let tmp = tempfile::tempdir().unwrap();
    let rank = tmp.path().join("p/rank0_ascend_pt");
    common::copy_dir(&rank_dir(), &rank);
    let ops = rank.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let text = std::fs::read_to_string(&ops).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    // (Quotes at a name's ends are stripped on reading, as stray quotes: keep them inside.)
    let names = ["矩阵乘_融合", "自定义,算子 \"v2\" 版"];
    for (k, name) in names.iter().enumerate() {
        let line = &mut lines[1 + k];
        let rest = line.split_once(',').unwrap().1.to_string();
        *line = format!("\"{}\",{rest}", name.replace('"', "\"\""));
    }
    std::fs::write(&ops, format!("{}\n", lines.join("\n"))).unwrap();
    for lang in [memsight::ui::i18n::Lang::En, memsight::ui::i18n::Lang::Zh] {
        let mut app = MemsightApp::new(Some(rank.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let mut h = common::harness(app);
        let t = h.state().tr();
        let out = tmp.path().join(format!("导出_{lang:?}.csv"));
        common::export_to(&mut h, &out, t.export_csv);
        let bytes = std::fs::read(&out).unwrap();
        assert_eq!(&bytes[..3], b"\xEF\xBB\xBF", "Excel's UTF-8 mark");
        let mut rd = csv::Reader::from_reader(&bytes[3..]);
        let got: Vec<String> = rd
            .records()
            .take(2)
            .map(|r| r.unwrap()[0].to_string())
            .collect();
        assert_eq!(got, names);
        h.state_mut().apply(memsight::ui::Command::Copy);
        h.run();
        let copy = h.state().details().last_copy().unwrap().to_string();
        let first: Vec<&str> = copy
            .lines()
            .skip(1)
            .take(2)
            .map(|l| l.split('\t').next().unwrap())
            .collect();
        assert_eq!(first, names);
    }
    assert!(
        std::fs::read_dir(&rank).unwrap().count() == std::fs::read_dir(rank_dir()).unwrap().count(),
        "nothing written into the profile"
    );
}

fn export_path() -> PathBuf {
    std::env::temp_dir().join(format!("memsight-ui-export-{}.csv", std::process::id()))
}

#[test]
fn size_filter_and_export_csv_of_every_matching_row() {
    let mut h = common::open_app(rank_dir());
    h.state_mut()
        .details_mut()
        .set_save_picker(|| memsight::ui::file_browser::PickOutcome::Picked(export_path()));
    common::type_into(&mut h, "Min Size(KB)", "100");
    common::type_into(&mut h, "Max Size(KB)", "20,000");
    let want: Vec<usize> = raw_sizes()
        .iter()
        .enumerate()
        .filter(|(_, (_, kb))| (100.0..=20_000.0).contains(kb))
        .map(|(i, _)| i)
        .collect();
    assert!(want.len() > 10, "more than a page matches");
    h.get_by_label(&format!("{} rows", want.len()));

    h.get_by_label("Export CSV…").click();
    common::step_until(&mut h, "the export", |h| {
        h.state()
            .details()
            .export_status()
            .is_some_and(|s| s.starts_with("wrote"))
    });
    let status = h
        .state()
        .details()
        .export_status()
        .map(str::to_string)
        .unwrap_or_default();
    assert_eq!(
        status,
        format!("wrote {} rows to {}", want.len(), export_path().display())
    );
    let written = std::fs::read_to_string(export_path()).unwrap();
    std::fs::remove_file(export_path()).ok();
    // Excel's mark for UTF-8, then every matching row, not just the page, in file order, with
    // names and sizes as in the file.
    let body = written.strip_prefix('\u{feff}').expect("a UTF-8 BOM first");
    let raw = raw_sizes();
    let lines: Vec<&str> = body.lines().collect();
    assert_eq!(lines.len(), want.len() + 1);
    assert!(lines[0].starts_with("Name,Size(KB),Allocation Time(ms)"));
    for (line, &i) in lines[1..].iter().zip(&want) {
        let cells: Vec<&str> = line.split(',').collect();
        assert_eq!(cells[0], raw[i].0);
        assert_eq!(cells[1].parse::<f64>().unwrap(), raw[i].1);
    }
    let view = h.state().view().unwrap();
    let rows: Vec<u32> = want.iter().map(|&i| i as u32).collect();
    let mut expected = Vec::new();
    memsight::export::write_rows_csv(&view.data, &rows, &mut expected).unwrap();
    assert_eq!(written.as_bytes(), expected.as_slice());
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        if e.path().is_dir() {
            copy_dir(&e.path(), &to.join(e.file_name()));
        } else {
            std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
        }
    }
}

#[test]
fn host_name_narrows_the_rank_list() {
    // Two hosts: the cluster fixture's ranks, once as node0 and once as node1.
    let tmp = tempfile::tempdir().unwrap();
    for e in std::fs::read_dir(fixtures().join("torch_cluster")).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        copy_dir(
            &fixtures().join("torch_cluster").join(&name),
            &tmp.path().join(&name),
        );
        let other = name.replacen("node0_", "node1_", 1).replacen("_4", "_5", 1);
        copy_dir(
            &fixtures().join("torch_cluster").join(&name),
            &tmp.path().join(other),
        );
    }
    let mut h = common::open_app(tmp.path().to_path_buf());
    let ranks = |h: &Harness<'_, MemsightApp>| {
        h.query_all_by_label_contains(" · NPU:")
            .filter(|n| n.rect().min.y > 40.0)
            .count()
    };
    h.get_by_label("Rank ID").click();
    h.run();
    assert_eq!(ranks(&h), 4, "all ranks of both hosts");
    h.key_press(egui::Key::Escape);
    h.run();
    h.get_by_label("Host Name").click();
    h.run();
    h.query_all_by_label("node1")
        .last()
        .expect("the node1 option")
        .click();
    h.step(); // choosing a host shows a rank of that host: it loads
    h.state_mut().wait_for_load();
    h.run();
    assert_eq!(h.state().view_state().host.as_deref(), Some("node1"));
    let shown = h.state().view().unwrap();
    assert_eq!(
        shown.data.info.host.as_deref(),
        Some("node1"),
        "the rank on screen is one of node1's, not node0's under a node1 filter"
    );
    let folder = shown.data.info.dir.strip_prefix(tmp.path()).unwrap();
    assert!(folder.to_string_lossy().starts_with("node1_"), "{folder:?}");
    h.get_by_label("Rank ID").click();
    h.run();
    let listed: Vec<String> = h
        .query_all_by_label_contains(" · NPU:")
        .filter(|n| n.rect().min.y > 40.0)
        .filter_map(|n| n.accesskit_node().label())
        .collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    assert!(listed.iter().all(|l| l.ends_with("node1")), "{listed:?}");
}

/// Components reaching 100 MB in the raw npu_module_mem.csv: (name, peak MB).
fn raw_component_peaks() -> Vec<(String, f64)> {
    let raw = RawCsv::read(&rank_dir().join("ASCEND_PROFILER_OUTPUT/npu_module_mem.csv"));
    let mut peaks: Vec<(String, f64)> = Vec::new();
    for r in &raw.rows {
        let mb: f64 = r[2].parse().unwrap();
        match peaks.iter_mut().find(|p| p.0 == r[0]) {
            Some(p) => p.1 = p.1.max(mb),
            None => peaks.push((r[0].clone(), mb)),
        }
    }
    peaks.retain(|p| p.1 >= 100.0);
    peaks
}

/// Component names in the order the table shows them (top to bottom).
fn shown_components(h: &Harness<'_, MemsightApp>, names: &[String]) -> Vec<String> {
    let mut at: Vec<(f32, String)> = names
        .iter()
        .filter_map(|n| {
            h.query_all_by_label(n)
                .filter(|x| x.rect().min.y > 400.0)
                .map(|x| (x.rect().min.y, n.clone()))
                .next()
        })
        .collect();
    at.sort_by(|a, b| a.0.total_cmp(&b.0));
    at.into_iter().map(|x| x.1).collect()
}

#[test]
fn component_table_sorts_by_any_column_and_pages() {
    let mut h = common::open_app(rank_dir());
    h.state_mut().apply(memsight::ui::Command::SetGroupBy(
        memsight::analysis::GroupBy::Component,
    ));
    h.run();
    let mut peaks = raw_component_peaks();
    assert!(peaks.len() >= 3, "{peaks:?}");
    let names: Vec<String> = peaks.iter().map(|p| p.0.clone()).collect();
    h.get_by_label(&format!("{} rows", peaks.len()));
    // Default: largest peak first.
    peaks.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    let by_peak_desc: Vec<String> = peaks.iter().map(|p| p.0.clone()).collect();
    assert_eq!(shown_components(&h, &names), by_peak_desc);
    // By name, ascending then descending.
    h.get_by_label("Component").click();
    h.run();
    let mut by_name = names.clone();
    by_name.sort();
    assert_eq!(shown_components(&h, &names), by_name);
    h.get_by_label("Component ⬆").click();
    h.run();
    by_name.reverse();
    assert_eq!(shown_components(&h, &names), by_name);
    // By peak ascending.
    h.get_by_label("Peak Memory Reserved(MB)").click();
    h.run();
    let mut asc = by_peak_desc.clone();
    asc.reverse();
    assert_eq!(shown_components(&h, &names), asc);
    // Pages of 10 like the details table; a rows-per-page smaller than the list pages it.
    h.state_mut().apply(memsight::ui::Command::SetPageSize(2));
    h.run();
    h.get_by_label(&format!("Page 1 of {}", peaks.len().div_ceil(2)));
    assert_eq!(shown_components(&h, &names), asc[..2].to_vec());
    // The panel settles into the shorter table over a few frames without asking for a repaint
    // (run() stops early), so let it before clicking where the button is drawn.
    h.run_steps(4);
    h.get_by_label("Next").click();
    h.run();
    assert_eq!(
        shown_components(&h, &names),
        asc[2..4.min(asc.len())].to_vec()
    );
}

#[test]
fn a_big_ranks_first_sort_of_a_column_runs_in_the_background() {
    let mut h = common::open_app(rank_dir());
    h.state_mut().details_mut().set_background_min_rows(0); // every rank counts as big
    h.get_by_label("Duration(ms)").click();
    h.step(); // the click frame (the sort changes after the table asked for its page)
    h.step(); // starts the sort
    // Until the order is ready the table shows the last page and says it is sorting.
    let view = h.state().view().unwrap();
    let col = memsight::analysis::Column::Duration;
    let asc = memsight::analysis::SortDir::Asc;
    if !view.sort_cache.is_cached(col, asc) {
        h.get_by_label("sorting…");
    }
    common::step_until(&mut h, "the sort", |_| view.sort_cache.is_cached(col, asc));
    h.run();
    assert!(h.query_by_label("sorting…").is_none());
    // The first row is now the shortest-lived block (missing durations sort last).
    let ops = RawCsv::read(&rank_dir().join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    let d = ops.col("Duration(us)");
    let shortest = ops
        .rows
        .iter()
        .enumerate()
        .filter(|(_, r)| !r[d].is_empty())
        .min_by(|a, b| {
            let (x, y): (f64, f64) = (a.1[d].parse().unwrap(), b.1[d].parse().unwrap());
            x.total_cmp(&y).then(a.0.cmp(&b.0))
        })
        .map(|(i, _)| i as u32)
        .unwrap();
    h.get_by_label("Copy").click();
    h.step();
    let tsv = h.state().last_copy().unwrap().to_string();
    let first = tsv.lines().nth(1).unwrap();
    assert_eq!(
        first,
        memsight::export::rows_tsv(&view.data, &[shortest])
            .lines()
            .nth(1)
            .unwrap()
    );
}

/// The name cells of the page's rows, top to bottom (the first column, below the header).
fn name_cells(h: &Harness<'static, MemsightApp>) -> Vec<egui::Pos2> {
    let header = h
        .get_all_by_label("Name")
        .map(|n| n.rect())
        .max_by(|a, b| a.min.y.total_cmp(&b.min.y))
        .unwrap();
    let mut cells: Vec<egui::Pos2> = h
        .get_all_by_role(egui::accesskit::Role::Label)
        .map(|n| n.rect())
        .filter(|r| {
            r.min.y > header.max.y + 2.0 && r.min.x < header.max.x && r.max.x > header.min.x
        })
        .map(|r| r.center())
        .collect();
    cells.sort_by(|a, b| a.y.total_cmp(&b.y));
    cells.dedup_by(|a, b| (a.y - b.y).abs() < 2.0);
    cells
}

fn click_at(h: &mut Harness<'static, MemsightApp>, pos: egui::Pos2, modifiers: egui::Modifiers) {
    h.hover_at(pos);
    h.run();
    h.event(egui::Event::ModifiersChanged(modifiers));
    for pressed in [true, false] {
        h.event(egui::Event::PointerButton {
            pos,
            button: egui::PointerButton::Primary,
            pressed,
            modifiers,
        });
    }
    h.event(egui::Event::ModifiersChanged(egui::Modifiers::NONE));
    h.run();
}

fn selected(h: &Harness<'static, MemsightApp>) -> Vec<u32> {
    h.state().view_state().selected.iter().copied().collect()
}

/// Row selection as in a spreadsheet (issue 26 item 11): a click selects that row only,
/// Ctrl+click adds or removes one, Shift+click selects a range from the last click; another page
/// or a filter leaves the selection, so Copy copies what is on screen.
#[test]
fn rows_select_like_a_spreadsheet() {
    use egui::Modifiers;
    let mut h = common::open_app(rank_dir());
    let cells = name_cells(&h);
    assert_eq!(cells.len(), 10, "{cells:?}");
    click_at(&mut h, cells[1], Modifiers::NONE);
    assert_eq!(selected(&h), [1]);
    click_at(&mut h, cells[2], Modifiers::NONE);
    assert_eq!(selected(&h), [2], "a plain click replaces the selection");
    click_at(&mut h, cells[4], Modifiers::COMMAND);
    assert_eq!(selected(&h), [2, 4]);
    click_at(&mut h, cells[2], Modifiers::COMMAND);
    assert_eq!(selected(&h), [4], "Ctrl+click removes");
    click_at(&mut h, cells[7], Modifiers::SHIFT);
    assert_eq!(
        selected(&h),
        [2, 3, 4, 5, 6, 7],
        "Shift+click: from the last click"
    );
    h.get_by_label("Copy").click();
    h.run();
    let copy = h.state().last_copy().unwrap().to_string();
    let raw = raw_sizes();
    let names: Vec<&str> = copy
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let want: Vec<&str> = (2..=7).map(|i| raw[i].0.as_str()).collect();
    assert_eq!(names, want);
    // Another page: the selection goes; Copy takes that page.
    h.get_by_label("Next").click();
    h.run();
    assert!(selected(&h).is_empty(), "{:?}", selected(&h));
    h.get_by_label("Copy").click();
    h.run();
    let copy = h.state().last_copy().unwrap().to_string();
    let names: Vec<&str> = copy
        .lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap())
        .collect();
    let want: Vec<&str> = (10..20).map(|i| raw[i].0.as_str()).collect();
    assert_eq!(names, want);
    // A filter too.
    let cells = name_cells(&h);
    click_at(&mut h, cells[0], Modifiers::NONE);
    assert_eq!(selected(&h), [10]);
    common::type_into(&mut h, "Min Size(KB)", "1");
    assert!(selected(&h).is_empty());
}
