//! The first five minutes, through egui_kittest, in English and in Chinese: opening without a
//! desktop portal, Chinese text and the Chinese UI, the legend off the data, Live at cursor that
//! adds up, copying like a spreadsheet, controls that stay put, small screens, and the small
//! things (filters, go to page, recent list, table-only ranks, Excel-damaged timestamps, Save
//! chart as PNG, theme, F1).

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, fixtures, raw_ops};
use egui::accesskit::Role;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use memsight::ui::file_browser::{PickOutcome, Purpose};
use memsight::ui::i18n::Lang;
use memsight::ui::{Command, MemsightApp};

fn rank_dir() -> PathBuf {
    common::first_subdir(&fixtures().join("torch_cluster"))
}

/// An app on `path` (loaded, in `lang`) in a `w`×`h` harness.
fn app_in(path: Option<PathBuf>, lang: Lang, size: [f32; 2]) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(path.clone(), Vec::new(), None);
    app.set_language(lang);
    if path.is_some() {
        app.wait_for_load();
    }
    // Two frames run: the CJK font is added in the first and used from the next.
    common::harness_sized(app, size)
}

/// A copy of a torch_cluster rank under Chinese folder names, with a Chinese operator name.
fn chinese_profile(tmp: &Path) -> PathBuf {
    let root = tmp.join("性能数据").join("训练任务_张三");
    let rank = root.join("训练节点甲_4000_20261121000000000_ascend_pt");
    common::copy_dir(&rank_dir(), &rank);
    let ops = rank.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv");
    let text = std::fs::read_to_string(&ops).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    let first = lines[1].split_once(',').unwrap().1.to_string();
    lines[1] = format!("自定义算子::融合注意力,{first}");
    let mut text = lines.join("\n");
    text.push('\n');
    std::fs::write(&ops, text).unwrap();
    root
}

/// Every character of every label on screen has a glyph in the fonts in use.
fn assert_no_missing_glyphs(h: &Harness<'_, MemsightApp>) {
    let mut texts = Vec::new();
    fn walk(n: egui_kittest::Node<'_>, out: &mut Vec<String>) {
        if let Some(l) = n.accesskit_node().label() {
            out.push(l);
        }
        if let Some(v) = n.accesskit_node().value() {
            out.push(v);
        }
        for c in n.children() {
            walk(c, out);
        }
    }
    walk(h.root(), &mut texts);
    assert!(!texts.is_empty());
    let font = egui::FontId::proportional(14.0);
    let missing: Vec<String> = h.ctx.fonts_mut(|f| {
        texts
            .iter()
            .filter(|t| t.chars().any(|c| !c.is_control() && !f.has_glyph(&font, c)))
            .cloned()
            .collect()
    });
    assert!(missing.is_empty(), "no glyph for: {missing:?}");
}

#[test]
fn without_a_desktop_portal_the_in_app_browser_opens() {
    for (lang, title) in [
        (Lang::En, "Open profiling folder"),
        (Lang::Zh, "打开性能数据文件夹"),
    ] {
        let mut app = MemsightApp::new(None, Vec::new(), None);
        app.set_language(lang);
        app.set_picker(|_| PickOutcome::Unavailable);
        // egui_file's path and file-name fields have no accessible names (its widgets, not
        // ours), which the harness's accessibility check refuses.
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .with_accessibility_check(false)
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        h.run();
        h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::O);
        common::step_until(&mut h, "the in-app browser", |h| {
            h.state().browser().is_open()
        });
        assert_eq!(
            h.state().browser().purpose(),
            Some(Purpose::Open(memsight::ui::PickKind::Folder))
        );
        h.run();
        // The browser's window, titled in the UI's language (egui_file puts a folder icon first).
        assert!(
            h.query_all_by_label_contains(title).any(|n| n
                .accesskit_node()
                .label()
                .is_some_and(|l| l.starts_with('📁'))),
            "the browser titled {title}"
        );
        assert!(h.state().error().is_none(), "nothing was cancelled");
    }
}

#[test]
fn export_without_a_save_dialog_offers_the_browser_not_a_cancel() {
    let mut h = app_in(Some(rank_dir()), Lang::En, [1400.0, 900.0]);
    h.state_mut()
        .details_mut()
        .set_save_picker(|| PickOutcome::Unavailable);
    h.get_by_label("Export CSV…").click();
    common::step_until(&mut h, "the in-app browser", |h| {
        h.state().browser().is_open()
    });
    assert_eq!(h.state().browser().purpose(), Some(Purpose::Save));
    // It offers the user's Documents (else home), not the profile's folder (often read-only,
    // and the user's data).
    let dir = h.state().browser().directory().unwrap().to_path_buf();
    assert_eq!(Some(dir.clone()), memsight::ui::file_browser::save_folder());
    assert!(!dir.starts_with(rank_dir()), "{}", dir.display());
    let status = h
        .state()
        .details()
        .export_status()
        .map(str::to_string)
        .unwrap_or_default();
    assert!(!status.contains("cancelled"), "{status}");
}

#[test]
fn a_typed_path_opens_in_both_languages() {
    for (lang, label) in [(Lang::En, "Path"), (Lang::Zh, "路径")] {
        let mut h = app_in(None, lang, [1400.0, 900.0]);
        let path = rank_dir().display().to_string();
        common::type_into(&mut h, label, &path);
        h.key_press(egui::Key::Enter);
        h.step();
        h.state_mut().wait_for_load();
        h.run();
        assert!(h.state().view().is_some(), "{:?}", h.state().error());
        assert_eq!(h.state().path(), Some(rank_dir().as_path()));
    }
}

#[test]
fn a_path_that_fails_to_open_stays_out_of_recent() {
    let mut app = MemsightApp::new(None, Vec::new(), None);
    app.open(PathBuf::from("/no/such/profile"));
    app.wait_for_load();
    assert!(app.error().is_some());
    assert!(app.recent().is_empty());
    app.open(rank_dir());
    app.wait_for_load();
    assert_eq!(app.recent(), [rank_dir().display().to_string()]);
}

#[test]
fn chinese_paths_and_names_render_in_both_languages() {
    let tmp = tempfile::tempdir().unwrap();
    let root = chinese_profile(tmp.path());
    for lang in Lang::ALL {
        let mut app = MemsightApp::new(Some(root.clone()), vec![root.display().to_string()], None);
        app.set_language(lang);
        app.wait_for_load();
        assert!(app.view().is_some(), "{:?}", app.error());
        let mut h = Harness::builder()
            .with_size([1400.0, 900.0])
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        h.run();
        h.run();
        // With the system's CJK font when there is one, else with the bundled common
        // characters: either way every label has its glyphs (checked below).
        let rank_id = if lang == Lang::En {
            "Rank ID"
        } else {
            "Rank 编号"
        };
        let rank = h.get_by_label(rank_id).value().unwrap_or_default();
        assert!(rank.contains("训练节点甲"), "the rank picker shows {rank}");
        h.get_by_label("自定义算子::融合注意力"); // the table
        // The recent list, with its Chinese path.
        h.get_by_label(if lang == Lang::En { "File" } else { "文件" })
            .click();
        h.run();
        h.get_by_label(if lang == Lang::En {
            "Recent folders"
        } else {
            "最近打开"
        })
        .click();
        h.run();
        h.get_by_label(&root.display().to_string());
        assert_no_missing_glyphs(&h);
    }
}

#[test]
fn the_view_menu_switches_to_chinese_and_remembers_it() {
    let mut h = app_in(Some(rank_dir()), Lang::En, [1400.0, 900.0]);
    h.get_by_label("Memory Allocation/Release Details");
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("简体中文").click();
    h.run();
    for zh in [
        "文件",
        "主机名",
        "分组方式",
        "内存申请/释放详情",
        "复制",
        "导出 CSV…",
        "视图内",
    ] {
        h.get_by_label(zh);
    }
    assert!(
        h.query_by_label("Memory Allocation/Release Details")
            .is_none()
    );
    assert_no_missing_glyphs(&h);
    // Remembered for the next run.
    let mut storage = common::MemoryStorage::default();
    eframe::App::save(h.state_mut(), &mut storage);
    assert_eq!(
        storage
            .0
            .get(memsight::ui::prefs::LANG_KEY)
            .map(String::as_str),
        Some("zh")
    );
    let prefs = memsight::ui::prefs::Prefs::load(Some(&storage));
    assert_eq!(prefs.lang, Lang::Zh);
    // And back.
    h.get_by_label("视图").click();
    h.run();
    h.get_by_label("English").click();
    h.run();
    h.get_by_label("Memory Allocation/Release Details");
}

#[test]
fn the_legend_sits_above_the_plot_and_explains_each_curve() {
    for (lang, help) in [
        (Lang::En, "All device memory of the process"),
        (Lang::Zh, "进程占用的全部设备内存"),
    ] {
        let mut h = app_in(Some(rank_dir()), lang, [1280.0, 720.0]);
        let plot = h.state().chart().last_plot_rect().expect("a plot");
        let view = h.state().view().unwrap();
        for s in view.series(memsight::analysis::GroupBy::Overall) {
            let entry = h
                .query_all_by_label(&s.series.name)
                .find(|n| n.accesskit_node().role() == Role::Button)
                .unwrap_or_else(|| panic!("a legend entry for {}", s.series.name));
            assert!(
                entry.rect().max.y <= plot.min.y,
                "{} at {:?} covers the plot {:?}",
                s.series.name,
                entry.rect(),
                plot
            );
        }
        h.query_all_by_label("APP Reserved")
            .find(|n| n.accesskit_node().role() == Role::Button)
            .unwrap()
            .hover();
        h.run_steps(60);
        h.get_by_label_contains(help);
    }
}

#[test]
fn curve_colours_mean_the_same_in_every_view() {
    use memsight::ui::plot::curve_color;
    // Reserved is one colour for torch_npu, MindSpore and the Overall view alike.
    let reserved = curve_color("Operator Reserved", 0);
    assert_eq!(curve_color("PTA Reserved", 0), reserved);
    assert_eq!(curve_color("MindSpore Reserved", 0), reserved);
    assert_eq!(
        curve_color("Operator Activated", 0),
        curve_color("MindSpore Activated", 0)
    );
    // APP Reserved is red in Overall; nothing else is.
    let app = curve_color("APP Reserved", 0);
    for other in [
        "GE Allocated",
        "PTA Allocated",
        "GE Reserved",
        "Workspace Allocated",
    ] {
        assert_ne!(curve_color(other, 0), app, "{other}");
    }
    assert_ne!(
        curve_color("Allocated of 0x1", 0),
        curve_color("Allocated of 0x2", 1)
    );
}

#[test]
fn live_at_the_peak_adds_up_and_a_block_goes_to_the_table() {
    for (lang, go, not_in) in [
        (Lang::En, "Go to peak", "Not in operator_memory"),
        (Lang::Zh, "转到峰值", "不在 operator_memory 中"),
    ] {
        let dir = rank_dir();
        let mut h = app_in(Some(dir.clone()), lang, [1400.0, 900.0]);
        // Unfold the statistics if they are folded, then Go to peak of Operator Allocated.
        if h.query_all_by_label(go).next().is_none() {
            h.get_by_label(if lang == Lang::En {
                "In view"
            } else {
                "视图内"
            })
            .click();
            h.run();
        }
        h.query_all_by_label(go).next().unwrap().click();
        h.run();
        let t = h
            .state()
            .view_state()
            .link
            .cursor
            .expect("the cursor at the peak");
        let view = h.state().view().unwrap();
        let peak = view.series(memsight::analysis::GroupBy::Overall)[0]
            .peak()
            .unwrap();
        assert_eq!(t, peak.time, "the first series' peak in view is its peak");
        // Independently, from the files: Operator Allocated there, and the live blocks.
        let (ops, origin) = raw_ops(&dir);
        let at = i128::from(t);
        let live: i128 = ops
            .iter()
            .filter(|r| r.2.is_none_or(|a| a - origin <= at) && r.3.is_none_or(|z| z - origin > at))
            .map(|r| (r.1.parse::<f64>().unwrap() * 1024.0).round() as i128)
            .sum();
        let allocated =
            common::raw_operator_curve(&dir, "Total Allocated(MB)", origin, at).unwrap();
        let fmt = |b: i128| memsight::ui::format::bytes(i64::try_from(b).unwrap());
        let row = h.get_by_label(not_in);
        let y = row.rect().center().y;
        let want = fmt(allocated - live);
        let value = h
            .query_all_by_label(&want)
            .find(|n| (n.rect().center().y - y).abs() < 3.0);
        assert!(
            value.is_some(),
            "{not_in}: {} (= {} − {})",
            fmt(allocated - live),
            fmt(allocated),
            fmt(live)
        );
        // The live blocks' sum, on its own row (the breakdown below repeats it).
        let y = h
            .get_by_label(h.state().tr().live_blocks_sum)
            .rect()
            .center()
            .y;
        assert!(
            h.query_all_by_label(&fmt(live))
                .any(|n| (n.rect().center().y - y).abs() < 3.0),
            "live blocks {}",
            fmt(live)
        );
        // A block of the panel: selected in the table, marked on the chart, its page shown.
        let data = &view.data;
        let live_rows = memsight::analysis::live_at(data, view.live_index(), t).rows;
        let biggest = live_rows[0];
        let name = data
            .display_name(data.operators.name[biggest as usize])
            .to_string();
        let largest = if lang == Lang::En {
            "Largest blocks"
        } else {
            "最大的块"
        };
        h.get_by_label(largest).scroll_to_me();
        h.run();
        // The first row under "Largest blocks" is the biggest live block.
        let below = h.get_by_label(largest).rect().max.y;
        h.query_all_by_label(&name)
            .filter(|n| n.rect().min.x > 1000.0 && n.rect().min.y > below)
            .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
            .unwrap()
            .click();
        h.run();
        let s = h.state().view_state();
        assert_eq!(s.marked_row, Some(biggest));
        assert!(s.selected.contains(&biggest) && s.selected.len() == 1);
        // The whole rank in file order (no window, sort or filter): the block's page is its
        // row in the raw file over the page size, and its size is on screen in the table.
        assert_eq!(s.link.window, None);
        assert_eq!(s.sorts, Default::default());
        assert_eq!(
            s.page(memsight::ui::panes::details_table::DETAILS),
            biggest as usize / s.page_size,
            "the table turned to its page"
        );
        let raw_size: f64 = ops[biggest as usize].1.parse().unwrap();
        let size_text = memsight::ui::format::grouped(raw_size, 2);
        assert!(
            h.query_all_by_label(&size_text)
                .any(|n| n.rect().min.x < 1000.0 && n.rect().min.y > 500.0),
            "{size_text} in the table"
        );
    }
}

/// The TSV's first column (names) after the header.
fn names(tsv: &str) -> Vec<String> {
    tsv.lines()
        .skip(1)
        .map(|l| l.split('\t').next().unwrap().to_string())
        .collect()
}

#[test]
fn copy_follows_the_screen_order_with_ranges_select_all_and_copy_all() {
    let dir = rank_dir();
    let mut h = app_in(Some(dir.clone()), Lang::En, [1400.0, 900.0]);
    h.get_by_label("Size(KB)").click();
    h.run();
    h.get_by_label("Size(KB) ⬆").click(); // descending
    h.run();
    let view = h.state().view().unwrap();
    let q = memsight::ui::panes::details_table::query_for(
        h.state().view_state(),
        memsight::ui::panes::details_table::DETAILS,
    );
    let shown = memsight::analysis::query(&view.data, &view.sort_cache, &q).rows;
    // The raw sizes, largest first: the page is that order.
    let (ops, _) = raw_ops(&dir);
    let mut sizes: Vec<f64> = ops.iter().map(|r| r.1.parse().unwrap()).collect();
    sizes.sort_by(|a, b| b.total_cmp(a));
    let page_sizes: Vec<f64> = shown
        .iter()
        .map(|&r| view.data.operators.size[r as usize] as f64 / 1024.0)
        .collect();
    assert_eq!(page_sizes, sizes[..10].to_vec());
    // Select the 4th, then the 2nd row (file order differs from screen order).
    let name_of = |r: u32| {
        view.data
            .display_name(view.data.operators.name[r as usize])
            .to_string()
    };
    h.state_mut().apply(Command::ToggleSelected(
        memsight::ui::panes::details_table::DETAILS,
        shown[3],
    ));
    h.state_mut().apply(Command::ToggleSelected(
        memsight::ui::panes::details_table::DETAILS,
        shown[1],
    ));
    h.get_by_label("Copy").click();
    h.run();
    let tsv = h.state().last_copy().unwrap().to_string();
    assert_eq!(names(&tsv), vec![name_of(shown[1]), name_of(shown[3])]);
    h.get_by_label("Copied 2 rows");
    // Shift+click: a range from the last clicked row.
    h.state_mut().apply(Command::ClearSelection);
    h.run();
    let size_of = |i: usize| memsight::ui::format::grouped(page_sizes[i], 2);
    let s2 = size_of(2);
    h.query_all_by_label(&s2)
        .find(|n| n.rect().min.y > 500.0)
        .unwrap()
        .click();
    h.run();
    let s6 = size_of(6);
    h.query_all_by_label(&s6)
        .find(|n| n.rect().min.y > 500.0)
        .unwrap()
        .click_modifiers(egui::Modifiers::SHIFT);
    h.run();
    let sel: Vec<u32> = h.state().view_state().selected.iter().copied().collect();
    let mut want: Vec<u32> = shown[2..=6].to_vec();
    want.sort();
    assert_eq!(sel, want, "Shift+click selects rows 3 to 7");
    // Ctrl+A: the page.
    h.key_press_modifiers(egui::Modifiers::COMMAND, egui::Key::A);
    h.run();
    assert_eq!(h.state().view_state().selected.len(), 10);
    // Copy all: every matching row, in the table's order.
    h.get_by_label("Copy all").click();
    h.run();
    let tsv = h.state().last_copy().unwrap().to_string();
    assert_eq!(tsv.lines().count(), ops.len() + 1);
    h.get_by_label(&format!("Copied {} rows", ops.len()));
}

#[test]
fn controls_stay_put_when_the_table_has_few_rows() {
    let mut h = app_in(Some(rank_dir()), Lang::En, [1400.0, 900.0]);
    let next = h.get_by_label("Next").rect();
    let search = h.get_by_role_and_label(Role::TextInput, "Name").rect();
    common::type_into(&mut h, "Name", "no operator is called this");
    h.run_steps(4);
    h.get_by_label("0 rows");
    assert_eq!(h.get_by_label("Next").rect(), next);
    assert_eq!(
        h.get_by_role_and_label(Role::TextInput, "Name").rect(),
        search
    );
}

#[test]
fn a_small_screen_keeps_the_chart_tall_enough() {
    for lang in Lang::ALL {
        let h = app_in(Some(rank_dir()), lang, [1280.0, 720.0]);
        let chart = h.state().chart().last_rect().unwrap();
        assert!(
            chart.height() >= 0.45 * 720.0,
            "the chart has {} of 720 px",
            chart.height()
        );
        let plot = h.state().chart().last_plot_rect().unwrap();
        assert!(plot.height() >= 200.0, "{plot:?}");
    }
}

#[test]
fn an_invalid_min_size_keeps_the_max_and_a_bad_page_says_so() {
    let dir = rank_dir();
    let mut h = app_in(Some(dir.clone()), Lang::En, [1400.0, 900.0]);
    common::type_into(&mut h, "Min Size(KB)", "abc");
    common::type_into(&mut h, "Max Size(KB)", "10");
    let (ops, _) = raw_ops(&dir);
    let small = ops
        .iter()
        .filter(|r| r.1.parse::<f64>().unwrap() <= 10.0)
        .count();
    h.get_by_label(&format!("{small} rows"));
    common::type_into(&mut h, "Go to page", "x");
    h.get_by_label("Go").click();
    h.run();
    let pages = small.div_ceil(10);
    h.get_by_label(&format!("enter a page from 1 to {pages}"));
}

#[test]
fn a_rank_without_memory_record_gives_the_table_the_room() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    std::fs::copy(
        rank_dir().join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"),
        out.join("operator_memory.csv"),
    )
    .unwrap();
    let h = app_in(Some(tmp.path().to_path_buf()), Lang::En, [1400.0, 900.0]);
    h.get_by_label_contains("This rank has no memory_record");
    assert!(h.query_by_label_contains("curves in this rank").is_none());
    let table = h.get_by_label("Memory Allocation/Release Details").rect();
    assert!(
        table.min.y < 200.0,
        "the table starts near the top: {table:?}"
    );
}

#[test]
fn excel_damaged_timestamps_are_explained() {
    let tmp = tempfile::tempdir().unwrap();
    let rank = tmp.path().join("r_ascend_pt");
    common::copy_dir(&rank_dir(), &rank);
    let f = rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv");
    let text = std::fs::read_to_string(&f).unwrap();
    let mut out = String::new();
    for (i, line) in text.lines().enumerate() {
        let mut cells: Vec<String> = line.split(',').map(str::to_string).collect();
        if i > 0 {
            let v: f64 = cells[1].trim().parse().unwrap();
            cells[1] = format!("{v:.5E}"); // what Excel writes: 1.70000E+15
        }
        out.push_str(&cells.join(","));
        out.push('\n');
    }
    std::fs::write(&f, out).unwrap();
    for (lang, text) in [(Lang::En, "scientific notation"), (Lang::Zh, "科学计数法")] {
        let h = app_in(Some(tmp.path().to_path_buf()), lang, [1400.0, 900.0]);
        h.get_by_label_contains(text);
    }
}

/// The iTXt chunks of a PNG: keyword → text.
fn png_texts(png: &[u8]) -> std::collections::BTreeMap<String, String> {
    let reader = png::Decoder::new(std::io::Cursor::new(png.to_vec()))
        .read_info()
        .unwrap();
    reader
        .info()
        .utf8_text
        .iter()
        .map(|c| (c.keyword.clone(), c.get_text().unwrap()))
        .collect()
}

#[test]
fn save_chart_as_png_is_a_report_figure_with_a_caption_at_twice_the_size() {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("chart.png");
    let rec = RawCsv::read(&rank_dir().join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (peak_mib, _) = common::raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    for (lang, file, whole, axis, peak_word) in [
        (Lang::En, "File", "the whole rank", "Memory (MB)", "peak"),
        (Lang::Zh, "文件", "整个 rank", "内存 (MB)", "峰值"),
    ] {
        let _ = std::fs::remove_file(&out);
        let mut h = app_in(Some(rank_dir()), lang, [1280.0, 720.0]);
        h.state_mut().set_png_picker({
            let out = out.clone();
            move || PickOutcome::Picked(out.clone())
        });
        let chart = h.state().chart().last_rect().unwrap();
        h.get_by_label(file).click();
        h.run();
        h.get_by_label(h.state().tr().save_chart).click();
        common::step_until(&mut h, "the chart's PNG", |_| out.exists());
        h.run();
        // The menu bar says where it went, and saying so moves nothing (issue 43 item 9: a
        // notice line of its own above the chart pushed the whole window down).
        let said = (h.state().tr().saved_chart)(&out.display().to_string());
        let notice = h.get_by_label(&said).rect();
        let after = h.state().chart().last_rect().unwrap();
        assert_eq!(after.min.y, chart.min.y, "{lang:?}: the chart moved");
        let menu = h.get_by_label(file).rect();
        assert!(
            (notice.center().y - menu.center().y).abs() < 4.0,
            "{lang:?}: {notice:?} is not in the menu bar's row {menu:?}"
        );
        let png = std::fs::read(&out).expect("the PNG is written");
        let reader = png::Decoder::new(std::io::Cursor::new(png.clone()))
            .read_info()
            .unwrap();
        let (w, hgt) = (reader.info().width, reader.info().height);
        // Twice the chart's size on screen, at least 800 points wide and half as high as wide.
        let report_w = chart.width().max(800.0);
        assert_eq!(w, (2.0 * report_w).round() as u32, "{lang:?}");
        let report_h = chart.height().max(report_w / 2.0);
        assert_eq!(hgt, (2.0 * report_h).round() as u32, "{lang:?}");
        // The caption names the profile, the rank and the window.
        let texts = png_texts(&png);
        let profile = rank_dir()
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(texts["Title"].contains(&profile), "{texts:?}");
        assert!(texts["Title"].contains("rank 0"), "{texts:?}");
        assert!(texts["Description"].contains(whole), "{texts:?}");
        // The legend gives each curve's peak, the Operator Allocated one as the raw file has it.
        let figure = h.state().chart().last_figure().cloned().unwrap();
        assert_eq!(figure.y_title, axis);
        let allocated = figure
            .curves
            .iter()
            .find(|c| c.legend.starts_with("Operator Allocated"))
            .expect("the Operator Allocated curve");
        let want = format!(
            "{peak_word} {} MB",
            memsight::ui::format::grouped(peak_mib, 2)
        );
        assert!(
            allocated.legend.contains(&want),
            "{} lacks {want}",
            allocated.legend
        );
        // A white page (no dark UI around it), with every curve's colour on it.
        let mut reader = reader;
        let mut buf = vec![0; reader.output_buffer_size().unwrap()];
        let frame = reader.next_frame(&mut buf).unwrap();
        let px = &buf[..frame.buffer_size()];
        assert_eq!(&px[..3], &[255, 255, 255]);
        for c in &figure.curves {
            let [r, g, b, _] = c.color.to_array();
            let n = px
                .chunks_exact(3)
                .filter(|p| {
                    (i32::from(p[0]) - i32::from(r)).abs() < 8
                        && (i32::from(p[1]) - i32::from(g)).abs() < 8
                        && (i32::from(p[2]) - i32::from(b)).abs() < 8
                })
                .count();
            assert!(n > 100, "{} drawn: {n} pixels of its colour", c.legend);
        }
        h.get_by_label_contains(if lang == Lang::En {
            "saved the chart to"
        } else {
            "图表已保存到"
        });
    }
}

#[test]
fn theme_and_keyboard_help_from_the_menus() {
    for (lang, view, dark, help_title, help_line) in [
        (
            Lang::En,
            "View",
            "Dark",
            "Keyboard and mouse",
            "Zoom to the box",
        ),
        (Lang::Zh, "视图", "深色", "键盘与鼠标", "框选放大"),
    ] {
        let mut h = app_in(Some(rank_dir()), lang, [1400.0, 900.0]);
        h.get_by_label(view).click();
        h.run();
        h.get_by_label(dark).click();
        h.run();
        assert_eq!(
            h.state().prefs().theme,
            memsight::ui::prefs::ThemePref::Dark
        );
        assert!(h.ctx.global_style().visuals.dark_mode);
        h.key_press(egui::Key::Escape);
        h.run();
        h.key_press(egui::Key::F1);
        h.run();
        h.get_by_label(help_title);
        h.get_by_label(help_line);
        assert_no_missing_glyphs(&h);
    }
}

#[test]
fn every_main_view_renders_in_both_languages_without_missing_glyphs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = chinese_profile(tmp.path());
    let mindspore = common::first_subdir(&fixtures().join("mindspore"));
    for lang in Lang::ALL {
        // Overall with Live at cursor and the warnings window, then Component, on the Chinese
        // profile; the static graph on the MindSpore one.
        let mut h = app_in(Some(root.clone()), lang, [1280.0, 720.0]);
        let view = h.state().view().unwrap();
        let peak = view.series(memsight::analysis::GroupBy::Overall)[0]
            .peak()
            .unwrap();
        h.state_mut().apply(Command::SetCursor(Some(peak.time)));
        h.state_mut().apply(Command::ShowWarnings(true));
        h.state_mut().apply(Command::ShowHelp(true));
        h.run();
        assert_no_missing_glyphs(&h);
        h.state_mut()
            .apply(Command::SetGroupBy(memsight::analysis::GroupBy::Component));
        h.run();
        assert_no_missing_glyphs(&h);
        let mut h = app_in(Some(mindspore.clone()), lang, [1280.0, 720.0]);
        h.state_mut().apply(Command::SetStaticView(true));
        h.run();
        assert_no_missing_glyphs(&h);
    }
}

#[test]
fn the_static_op_table_searches_sorts_pages_and_copies() {
    let dir = common::first_subdir(&fixtures().join("mindspore"));
    let raw = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/static_op_mem.csv"));
    let (g, name, size) = (raw.col("Graph ID"), raw.col("Op Name"), raw.col("Size(KB)"));
    let graph0: Vec<&Vec<String>> = raw
        .rows
        .iter()
        .filter(|r| r[g] == "0" && r[name] != "TOTAL")
        .collect();
    let mut h = app_in(Some(dir), Lang::En, [1400.0, 900.0]);
    h.state_mut().apply(Command::SetStaticView(true));
    h.run();
    h.get_by_label(&format!("{} rows", graph0.len()));
    // Search by name.
    common::type_into(&mut h, "Name", "cast");
    let casts = graph0
        .iter()
        .filter(|r| r[name].to_lowercase().contains("cast"))
        .count();
    assert!(casts > 0 && casts < graph0.len());
    h.get_by_label(&format!("{casts} rows"));
    h.state_mut().apply(Command::choose(
        |f: &mut memsight::ui::panes::static_view::StaticFilter| f.name.clear(),
    ));
    h.run();
    // Sort by size: ascending, then descending; Copy all pastes that order.
    h.get_by_label("Size(MB)").click();
    h.run();
    h.get_by_label("Size(MB) ⬆").click();
    h.run();
    h.get_by_label("Copy all").click();
    h.run();
    let tsv = h.state().static_table().last_copy.clone().unwrap();
    let copied: Vec<String> = names(&tsv)
        .into_iter()
        .zip(tsv.lines().skip(1))
        .map(|(_, l)| l.split('\t').nth(1).unwrap().to_string())
        .collect();
    let mut want: Vec<(f64, String)> = graph0
        .iter()
        .map(|r| (r[size].parse::<f64>().unwrap(), r[name].clone()))
        .collect();
    want.sort_by(|a, b| b.0.total_cmp(&a.0));
    let want: Vec<String> = want.into_iter().map(|w| w.1).collect();
    assert_eq!(copied, want, "largest first, every op");
    // Pages of 10.
    let pages = graph0.len().div_ceil(10);
    h.get_by_label(&format!("Page 1 of {pages}"));
    // Switching graph fits the axes to it: its Total Size line is inside the plot.
    common::pick_graph(&mut h, "1");
    let view = h.state().view().unwrap();
    let g1 = &view.static_graphs()[1];
    let total = g1.total.expect("graph 1 has a Total Size") as f64 / (1u64 << 20) as f64;
    let bounds = h
        .state()
        .static_chart()
        .bounds()
        .expect("the static plot's bounds");
    assert!(
        total > bounds.1.0 && total < bounds.1.1,
        "Total Size {total} MB inside {bounds:?}"
    );
}

#[test]
fn a_folder_without_a_profile_says_so_in_the_ui_language() {
    let tmp = tempfile::tempdir().unwrap();
    for (lang, text) in [
        (Lang::En, "no memory data found under"),
        (Lang::Zh, "下没有找到内存数据"),
    ] {
        let mut app = MemsightApp::new(None, Vec::new(), None);
        app.set_language(lang);
        app.open(tmp.path().to_path_buf());
        app.wait_for_load();
        let e = app.error().map(str::to_owned).unwrap_or_default();
        assert!(e.contains(text), "{e}");
        // Every source it reads is named, msMemScope's and PyTorch's too.
        for kind in [
            "(PyTorch profiler traces)",
            "(msMemScope dumps)",
            "memory_record*.csv",
        ] {
            assert!(e.contains(kind), "{kind}: {e}");
        }
        let mut h = Harness::builder()
            .with_size([1280.0, 720.0])
            .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
        h.run();
        h.run();
        h.get_by_label_contains(text);
        h.get_by_label_contains("*.csv / memscope_dump_*.db (msMemScope dumps)");
        assert_no_missing_glyphs(&h);
    }
}

/// The demo says it is one and how to open your own data (its Open path… button opens the
/// dialog); a real profile shows no such line. English and Chinese (issue 26 item 8).
#[test]
fn the_demo_says_it_is_a_demo() {
    let demo = memsight::cli::demo_profile_path().unwrap();
    for lang in Lang::ALL {
        let mut app = MemsightApp::new(Some(demo.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.wait_for_overview();
        let mut h = common::harness(app);
        let t = h.state().tr();
        h.get_by_label(t.demo_banner);
        h.get_by_label(t.open_path_menu).click();
        h.run();
        assert!(h.state().path_dialog_open());
        let h = app_in(Some(rank_dir()), lang, [1400.0, 900.0]);
        assert!(h.query_by_label(t.demo_banner).is_none(), "{lang:?}");
    }
}

/// View ▸ Reopen the last profile at start: on by default, a click turns it off, and every
/// preference reaches the storage when it changes (a crash loses nothing), not only at exit.
#[test]
fn preferences_are_saved_when_they_change() {
    use memsight::ui::prefs::{LANG_KEY, RECENT_KEY, REOPEN_KEY};
    let mut h = app_in(Some(rank_dir()), Lang::En, [1400.0, 900.0]);
    let mut storage = common::MemoryStorage::default();
    assert!(h.state().prefs().reopen_last);
    h.state_mut().save_prefs_if_changed(&mut storage);
    assert_eq!(storage.0.get(REOPEN_KEY).map(String::as_str), Some("true"));
    assert_eq!(
        storage.0.get(RECENT_KEY).map(String::as_str),
        Some(rank_dir().display().to_string().as_str()),
        "the opened folder is remembered at once"
    );
    assert!(
        !h.state_mut().save_prefs_if_changed(&mut storage),
        "nothing changed"
    );
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Reopen the last profile at start").click();
    h.run();
    assert!(!h.state().prefs().reopen_last);
    h.state_mut().apply(Command::SetLanguage(Lang::Zh));
    assert!(h.state_mut().save_prefs_if_changed(&mut storage));
    assert_eq!(storage.0.get(REOPEN_KEY).map(String::as_str), Some("false"));
    assert_eq!(storage.0.get(LANG_KEY).map(String::as_str), Some("zh"));
    // Loaded again, the app starts as left.
    let back = memsight::ui::prefs::Prefs::load(Some(&storage));
    assert!(!back.reopen_last);
    assert_eq!(back.lang, Lang::Zh);
    assert_eq!(
        memsight::ui::prefs::startup(&back, Path::exists),
        memsight::ui::prefs::Startup::Demo
    );
    let on = memsight::ui::prefs::Prefs {
        reopen_last: true,
        ..back
    };
    assert_eq!(
        memsight::ui::prefs::startup(&on, Path::exists),
        memsight::ui::prefs::Startup::Path(rank_dir())
    );
}

/// One unit per list in Live at cursor, and its Copy writes plain numbers with the unit in the
/// header (issue 26 item 14): on a generated rank whose totals pass 10 GB while its parts do not
/// (before, the breakdown said "12.50 GB" next to "3,047.21 MB"). Values checked against the raw
/// operator_memory file.
#[test]
fn live_lists_keep_one_unit_and_copy_plain_numbers() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        allocs: 60_000,
        ..Default::default()
    };
    let dir = memsight::generate::generate(tmp.path(), &opts)
        .unwrap()
        .remove(0);
    for lang in Lang::ALL {
        let mut h = app_in(Some(dir.clone()), lang, [1400.0, 900.0]);
        let t = h.state().tr();
        let view = h.state().view().unwrap();
        let at = view.series(memsight::analysis::GroupBy::Overall)[0]
            .peak()
            .unwrap()
            .time;
        h.state_mut().apply(Command::SetCursor(Some(at)));
        h.run();
        // Each breakdown row's value has the unit of the breakdown's total.
        let unit_of = |s: &str| s.rsplit(' ').next().unwrap_or("").to_string();
        // (The by-operator list below has a "Total" header too: the breakdown's is above it.)
        let total_y = h
            .get_all_by_label(t.breakdown_total)
            .map(|n| n.rect().center().y)
            .fold(f32::INFINITY, f32::min);
        let text = |n: &egui_kittest::Node<'_>| {
            let a = n.accesskit_node();
            a.label().or_else(|| a.value()).map(|s| s.to_string())
        };
        let is_size = |l: &String| l.ends_with(" GB") || l.ends_with(" MB");
        let total = h
            .get_all_by_role(Role::Label)
            .filter(|n| (n.rect().center().y - total_y).abs() < 3.0)
            .filter_map(|n| text(&n))
            .find(is_size)
            .expect("the total's value");
        assert!(total.ends_with(" GB"), "a total over 10 GB: {total}");
        for part in t.breakdown_parts {
            let Some(row) = h.query_by_label(part) else {
                continue;
            };
            let y = row.rect().center().y;
            let value = h
                .get_all_by_role(Role::Label)
                .filter(|n| (n.rect().center().y - y).abs() < 3.0)
                .filter_map(|n| text(&n))
                .find(is_size);
            if let Some(v) = value {
                assert_eq!(unit_of(&v), unit_of(&total), "{part}: {v} beside {total}");
            }
        }
        // Copy: plain numbers, the unit in the header.
        let live_copy = h
            .get_all_by_label(t.copy)
            .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
            .unwrap();
        live_copy.click();
        h.step();
        let tsv = common::copied(&h).expect("copied");
        let mut blocks = tsv.split("\n\n");
        let by_op = blocks.next().unwrap();
        let largest = blocks.next().unwrap();
        assert_eq!(
            by_op.lines().next().unwrap(),
            format!("{}\t{}(MB)\t{}", t.operator, t.total, t.blocks)
        );
        assert_eq!(
            largest.lines().next().unwrap(),
            format!("{}\t{}(MB)\t{}(ms)", t.operator, t.size, t.allocated_at)
        );
        // The largest blocks, from the raw file: sizes in MB and allocation times in ms.
        let (ops, origin) = raw_ops(&dir);
        let at = i128::from(at);
        let mut alive: Vec<(f64, Option<i128>)> = ops
            .iter()
            .filter(|r| r.2.is_none_or(|a| a - origin <= at) && r.3.is_none_or(|z| z - origin > at))
            .map(|r| {
                (
                    r.1.parse::<f64>().unwrap() / 1024.0,
                    r.2.map(|a| a - origin),
                )
            })
            .collect();
        alive.sort_by(|a, b| b.0.total_cmp(&a.0));
        let rows: Vec<Vec<&str>> = largest
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        assert_eq!(rows.len(), alive.len());
        for (row, want) in rows.iter().zip(&alive).take(50) {
            let mb: f64 = row[1].parse().expect("a plain number");
            assert!((mb - want.0).abs() < 1e-9, "{row:?} vs {want:?}");
            match want.1 {
                Some(ns) => {
                    let ms: f64 = row[2].parse().expect("plain ms");
                    assert!((ms - ns as f64 / 1e6).abs() < 1e-9, "{row:?}");
                }
                None => assert_eq!(row[2], ""),
            }
        }
    }
}

/// What Copy and Export CSV say never moves the table (issue 26 item 10): a long status (an
/// export under a deep folder) is cut to the toolbar's one line, whole on hover, at 1280×720 in
/// English and Chinese.
#[test]
fn a_long_status_line_does_not_push_the_table_down() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp
        .path()
        .join("a_rather_long_folder_name_for_exports")
        .join("another_level_of_folders_users_really_have")
        .join("性能数据_导出结果_第二轮");
    std::fs::create_dir_all(&deep).unwrap();
    for (lang, rows_per_page) in [(Lang::En, "rows per page"), (Lang::Zh, "每页行数")] {
        let mut h = app_in(Some(rank_dir()), lang, [1280.0, 720.0]);
        let t = h.state().tr();
        // Where the toolbar's buttons, the pager and the table's header are.
        let y = |h: &Harness<'static, MemsightApp>| {
            [
                h.get_by_label(t.copy).rect().min.y,
                h.get_by_label(rows_per_page).rect().min.y,
                h.get_by_label("Size(KB)").rect().min.y,
            ]
        };
        let before = y(&h);
        let file = deep.join(format!("memsight_table_with_a_long_name_{lang:?}.csv"));
        let status = common::export_to(&mut h, &file, t.export_csv);
        h.run();
        assert!(status.contains(&file.display().to_string()));
        h.get_by_label(t.copy).click();
        h.run();
        assert_eq!(
            y(&h),
            before,
            "{lang:?}: the toolbar, the pager or the table moved"
        );
    }
}
