//! Call stacks in the GUI, driven through egui_kittest in English and Chinese: the details
//! table's call stack column, its grouping by source line (Copy, click a group), the call
//! stacks tab's flame graph at the cursor and over the view (click a frame), and the DB/CSV
//! switch. Expected values come from the demo's raw files: operator_memory.csv split by hand
//! and trace_view.json parsed whole, each block matched to the op running when it was
//! allocated by a brute-force search.

use crate::common;

use std::collections::BTreeMap;
use std::path::PathBuf;

use common::{RawCsv, copied, fixtures, raw_origin, running_at, trace_ops, us_to_ns};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use memsight::ui::format::grouped;
use memsight::ui::i18n::{EN, Lang, Tr, ZH};
use memsight::ui::{Command, MemsightApp};

fn rank_dir() -> PathBuf {
    common::first_subdir(&fixtures().join("demo"))
}

fn app(lang: Lang) -> Harness<'static, MemsightApp> {
    let mut app = MemsightApp::new(Some(rank_dir()), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    assert!(app.view().is_some(), "{:?}", app.error());
    common::harness(app)
}

/// One raw block: size KiB, allocation and release (ns from origin), its stack (innermost
/// first, empty when none).
struct Block {
    kib: f64,
    alloc: Option<i128>,
    release: Option<i128>,
    frames: Vec<String>,
}

fn raw_blocks() -> Vec<Block> {
    let out = rank_dir().join("ASCEND_PROFILER_OUTPUT");
    let origin = raw_origin(&out);
    let ops = trace_ops(&out.join("trace_view.json"));
    let csv = RawCsv::read(&out.join("operator_memory.csv"));
    let (size, a, r) = (
        csv.col("Size(KB)"),
        csv.col("Allocation Time(us)"),
        csv.col("Release Time(us)"),
    );
    csv.rows
        .iter()
        .map(|row| {
            let alloc = (!row[a].is_empty()).then(|| us_to_ns(&row[a]));
            // In the demo every op with a stack has it of its own; ops without one
            // (ProfilerStep#N) enclose nothing with one.
            let frames = alloc
                .and_then(|t| running_at(&ops, t))
                .map(|op| op.frames.clone())
                .unwrap_or_default();
            Block {
                kib: row[size].parse().unwrap(),
                alloc: alloc.map(|t| t - origin),
                release: (!row[r].is_empty()).then(|| us_to_ns(&row[r]) - origin),
                frames,
            }
        })
        .collect()
}

/// The innermost frame outside site-packages, else the innermost.
fn source_line(frames: &[String]) -> Option<&str> {
    frames
        .iter()
        .find(|f| !f.contains("site-packages"))
        .or(frames.first())
        .map(String::as_str)
}

fn short(frame: &str) -> &str {
    let path = frame.split('(').next().unwrap();
    &frame[path.rfind('/').map_or(0, |i| i + 1)..]
}

/// Picks grouping `k` in the details table's Rows: box and returns what Copy puts on the
/// clipboard.
fn grouped_tsv(h: &mut Harness<'static, MemsightApp>, t: &Tr, k: usize) -> String {
    h.get_by_label(t.rows_label).click();
    h.run();
    h.get_by_label(t.row_groupings[k]).click();
    h.run();
    h.state_mut().apply(Command::Copy);
    h.run();
    h.state().details().last_copy().unwrap().to_string()
}

/// A size as the views write it: MB with two decimals, GB from 10 GB on (one unit a value).
fn size_text(kib: f64) -> String {
    let mb = kib / 1024.0;
    if mb >= 10.0 * 1024.0 {
        format!("{} GB", grouped(mb / 1024.0, 2))
    } else {
        format!("{} MB", grouped(mb, 2))
    }
}

fn tr(lang: Lang) -> &'static Tr {
    if lang == Lang::Zh { &ZH } else { &EN }
}

#[test]
fn the_details_table_names_the_python_line_of_each_block() {
    let blocks = raw_blocks();
    for lang in Lang::ALL {
        let mut h = app(lang);
        h.get_by_label(memsight::export::CALL_STACK_HEADER);
        // The first page shows the first ten blocks in file order, each with its line.
        for b in blocks.iter().take(10) {
            if let Some(line) = source_line(&b.frames) {
                assert!(
                    !h.query_all_by_label(short(line))
                        .collect::<Vec<_>>()
                        .is_empty(),
                    "{lang:?}: {line}"
                );
            }
        }
        h.run();
    }
}

#[test]
fn grouping_by_source_line_adds_up_the_raw_blocks_and_a_click_lists_them() {
    let blocks = raw_blocks();
    // Independent totals: KiB and blocks per source line, heaviest first.
    let mut by_line: BTreeMap<String, (f64, usize)> = BTreeMap::new();
    for b in &blocks {
        let key = source_line(&b.frames).unwrap_or("").to_string();
        let e = by_line.entry(key).or_default();
        // A release-only row (negative size: allocated before the capture) adds no memory.
        e.0 += b.kib.max(0.0);
        e.1 += 1;
    }
    let mut expect: Vec<(String, f64, usize)> = by_line
        .into_iter()
        .map(|(k, (kib, n))| (k, kib, n))
        .collect();
    expect.sort_by(|a, b| b.1.total_cmp(&a.1));
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = app(lang);
        let tsv = grouped_tsv(&mut h, t, 2);
        let lines: Vec<&str> = tsv.lines().collect();
        assert_eq!(lines[0], t.group_headers.join("\t"));
        assert_eq!(lines.len() - 1, expect.len(), "{tsv}");
        for (line, (label, kib, n)) in lines[1..].iter().zip(&expect) {
            let cells: Vec<&str> = line.split('\t').collect();
            let label = if label.is_empty() { t.no_stack } else { label };
            assert_eq!(cells[0], label);
            assert_eq!(cells[1], n.to_string());
            let mb: f64 = cells[2].parse().unwrap();
            assert!(
                (mb - kib / 1024.0).abs() < 0.006,
                "{label}: {mb} vs {}",
                kib / 1024.0
            );
        }
        // A click on the heaviest line lists its blocks.
        let (top, _, n) = &expect[0];
        h.get_by_label(top).click();
        h.run();
        h.get_by_label(&(t.blocks_of)(top, *n));
        h.state_mut().apply(Command::CopyAll);
        h.run();
        let rows = copied(&h).unwrap();
        assert_eq!(rows.lines().count(), n + 1, "header + the group's blocks");
    }
}

#[test]
fn the_flame_graph_at_the_cursor_lists_the_blocks_under_a_frame() {
    let blocks = raw_blocks();
    let frame = "/workspace/llama/kv_cache.py(42): append";
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = app(lang);
        h.get_by_label(t.stacks_tab).click();
        h.run();
        h.get_by_label(t.flame_needs_cursor);
        // A cursor near the end, where the leaked blocks are all alive.
        let at: i128 = blocks.iter().filter_map(|b| b.alloc).max().unwrap() - 1000;
        h.state_mut().apply(Command::SetCursor(Some(at as i64)));
        h.run();
        let alive: Vec<&Block> = blocks
            .iter()
            .filter(|b| b.alloc.is_none_or(|a| a <= at) && b.release.is_none_or(|r| r > at))
            .collect();
        let kib: f64 = alive.iter().map(|b| b.kib).sum();
        h.get_by_label(&(t.flame_summary)(
            &grouped(alive.len() as f64, 0),
            &size_text(kib),
        ));
        h.get_by_label(t.all_blocks);
        let under = alive
            .iter()
            .filter(|b| b.frames.iter().any(|f| f == frame))
            .count();
        assert!(under >= 8, "the demo's leak keeps a block a step");
        // The panel is short in a 900-pixel window: scroll the frame into view, then click it.
        h.get_by_label(short(frame)).scroll_to_me();
        h.run();
        h.get_by_label(short(frame)).click();
        h.run();
        // The graph zooms in and offers its blocks; the table lists them.
        h.get_by_label(&(t.flame_list_blocks)(&under.to_string()))
            .click();
        h.run();
        h.get_by_label(&(t.blocks_under)(short(frame), under));
        // Over the whole view: every block with an allocation time.
        h.get_by_label(t.stacks_tab).click();
        h.run();
        h.get_by_label(t.flame_modes[1]).click();
        h.run();
        let all: Vec<&Block> = blocks.iter().filter(|b| b.alloc.is_some()).collect();
        let kib: f64 = all.iter().map(|b| b.kib).sum();
        h.get_by_label(&(t.flame_summary)(
            &grouped(all.len() as f64, 0),
            &size_text(kib),
        ));
    }
}

#[test]
fn a_rank_with_a_db_and_csv_files_switches_between_them() {
    let dir = common::db_fixtures().join("db");
    let mut app = MemsightApp::new(Some(dir), Vec::new(), None);
    app.wait_for_load();
    assert_eq!(app.view().unwrap().data.info.source.kind(), "db");
    let mut h = common::harness(app);
    h.get_by_label(EN.source_label);
    h.get_by_label("CSV").click();
    h.run_steps(2);
    h.state_mut().wait_for_load();
    h.run();
    let view = h.state().view().unwrap();
    assert_eq!(view.data.info.source.kind(), "csv");
    // Both carry the same call stacks for the framework's blocks.
    assert!(
        view.data
            .stacks
            .as_ref()
            .is_some_and(|s| !s.stacks.is_empty())
    );
    h.get_by_label("DB").click();
    h.run_steps(2);
    h.state_mut().wait_for_load();
    h.run();
    assert_eq!(h.state().view().unwrap().data.info.source.kind(), "db");
}

#[test]
fn grouping_by_host_operator_counts_its_calls() {
    let out = rank_dir().join("ASCEND_PROFILER_OUTPUT");
    let ops = trace_ops(&out.join("trace_view.json"));
    let leak = memsight::generate::LEAK_OP;
    let calls = ops.iter().filter(|o| o.name == leak).count();
    let blocks = raw_blocks();
    let leaked: Vec<&Block> = blocks
        .iter()
        .filter(|b| b.frames.iter().any(|f| f.contains("kv_cache.py")))
        .collect();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = app(lang);
        let tsv = grouped_tsv(&mut h, t, 3);
        let row: Vec<&str> = tsv
            .lines()
            .find(|l| l.starts_with(&format!("{leak}\t")))
            .unwrap()
            .split('\t')
            .collect();
        assert_eq!(row[1], leaked.len().to_string(), "blocks");
        assert_eq!(row[4], calls.to_string(), "calls");
        // The leak's blocks are never freed: at the end all are alive at once.
        let kib: f64 = leaked.iter().map(|b| b.kib).sum();
        let peak: f64 = row[3].parse().unwrap();
        assert!((peak - kib / 1024.0).abs() < 0.006, "{peak}");
    }
}

/// The real exports (text with trace_view.json, and the DB) in the GUI: the call stack column
/// is there, and grouping by source line accounts for every block and every byte of the raw
/// operator_memory (CSV summed by hand, the DB's OP_MEMORY by SQL), the script's own lines
/// heaviest.
#[test]
fn the_real_exports_show_and_group_their_stacks() {
    let Some(root) = common::samples() else {
        return;
    };
    let base = root.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch");
    let text = base.join("text/level1/rank0_ascend_pt");
    let db = base.join("db/level1/rank0_ascend_pt");
    let csv = RawCsv::read(&text.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    let size = csv.col("Size(KB)");
    let text_kib: f64 = csv
        .rows
        .iter()
        .map(|r| r[size].parse::<f64>().unwrap().max(0.0))
        .sum();
    let conn = rusqlite::Connection::open_with_flags(
        format!(
            "file:{}?immutable=1",
            db.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
                .display()
        ),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap();
    let (db_rows, db_bytes): (i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(max(size, 0)) FROM OP_MEMORY",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    for (dir, rows, kib) in [
        (text, csv.rows.len(), text_kib),
        (db, db_rows as usize, db_bytes as f64 / 1024.0),
    ] {
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut app = MemsightApp::new(Some(dir.clone()), Vec::new(), None);
            app.set_language(lang);
            app.wait_for_load();
            let mut h = common::harness(app);
            h.get_by_label(memsight::export::CALL_STACK_HEADER);
            let tsv = grouped_tsv(&mut h, t, 2);
            let groups: Vec<Vec<&str>> = tsv
                .lines()
                .skip(1)
                .map(|l| l.split('\t').collect())
                .collect();
            let blocks: usize = groups.iter().map(|g| g[1].parse::<usize>().unwrap()).sum();
            let mb: f64 = groups.iter().map(|g| g[2].parse::<f64>().unwrap()).sum();
            assert_eq!(blocks, rows, "{}", dir.display());
            assert!(
                (mb - kib / 1024.0).abs() < 0.01 * groups.len() as f64,
                "{mb}"
            );
            assert!(
                groups[0][0].contains("imagenet_script/main.py("),
                "{lang:?}: {}",
                groups[0][0]
            );
        }
    }
}

/// Copy, Copy all and Export CSV… carry the call stack column the table shows, right after the
/// name: each block's source line as the raw trace names it (issue 26 item 6).
#[test]
fn copy_copy_all_and_export_carry_the_call_stack_column() {
    let blocks = raw_blocks();
    let tmp = tempfile::tempdir().unwrap();
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut h = app(lang);
        let check = |text: &str, n: usize, what: &str| {
            let mut rows = text.lines();
            let header: Vec<&str> = rows.next().unwrap().split('\t').collect();
            assert_eq!(&header[..2], ["Name", "Call Stack"], "{what}");
            let rows: Vec<&str> = rows.collect();
            assert_eq!(rows.len(), n, "{what}");
            for (row, b) in rows.iter().zip(&blocks) {
                let cells: Vec<&str> = row.split('\t').collect();
                assert_eq!(
                    cells[1],
                    source_line(&b.frames).unwrap_or(""),
                    "{what}: {row}"
                );
                assert_eq!(cells[2].parse::<f64>().unwrap(), b.kib, "{what}: {row}");
            }
        };
        h.get_by_label(t.copy).click();
        h.run();
        check(h.state().details().last_copy().unwrap(), 10, "Copy");
        h.get_by_label(t.copy_all).click();
        h.run();
        check(
            h.state().details().last_copy().unwrap(),
            blocks.len(),
            "Copy all",
        );
        let out = tmp.path().join(format!("stacks_{lang:?}.csv"));
        common::export_to(&mut h, &out, t.export_csv);
        let bytes = std::fs::read(&out).unwrap();
        let mut rd = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(&bytes[3..]);
        let tsv: String = rd
            .records()
            .map(|r| format!("{}\n", r.unwrap().iter().collect::<Vec<_>>().join("\t")))
            .collect();
        check(&tsv, blocks.len(), "Export CSV");
    }
}

/// Stream mode on the real DB export (issue 26 item 9): each stream has a name ("Stream 1 …",
/// its pointer on hover) and a hue of its own, and the blocks without a stream, which Stream
/// mode does not list, are counted above the table (SQL over OP_MEMORY), EN and ZH.
#[test]
fn stream_mode_names_its_streams_and_counts_the_blocks_it_leaves_out() {
    let Some(samples) = common::samples() else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let rank = samples
        .join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/db/level1/rank0_ascend_pt");
    let db = rank.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let conn =
        rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let (all, without): (i64, i64) = conn
        .query_row(
            "SELECT count(*), sum(streamPtr IS NULL OR streamPtr = 0) FROM OP_MEMORY",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let streams: i64 = conn
        .query_row(
            "SELECT count(DISTINCT streamPtr) FROM MEMORY_RECORD JOIN STRING_IDS s ON s.id = component
             WHERE s.value = 'PTA+GE' AND streamPtr IS NOT NULL AND streamPtr != 0",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(without > 0 && streams >= 2);
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut app = MemsightApp::new(Some(rank.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.apply(Command::SetGroupBy(memsight::analysis::GroupBy::Stream));
        let mut h = common::harness(app);
        h.run();
        for k in 1..=streams as usize {
            let label = (t.stream_series)(k, "Allocated");
            assert!(h.query_all_by_label(&label).count() > 0, "{label}");
        }
        let extra = (t.stream_series)(streams as usize + 1, "Allocated");
        assert_eq!(h.query_all_by_label(&extra).count(), 0, "{extra}");
        h.get_by_label(&(t.rows)(&grouped((all - without) as f64, 0)));
        h.get_by_label(&(t.rows_without_stream)(&grouped(without as f64, 0)));
    }
    // Each stream its own hue: stream 1's three curves and stream 2's differ.
    use memsight::ui::palette::curve_color;
    let one: Vec<_> = ["Allocated", "Activated", "Reserved"]
        .iter()
        .map(|q| curve_color(&format!("{q} of 0x1"), 0))
        .collect();
    for q in ["Allocated", "Activated", "Reserved"] {
        assert!(
            !one.contains(&curve_color(&format!("{q} of 0x2"), 1)),
            "{q}"
        );
    }
}

/// The flame graph zooms into a clicked frame (it spans the width, its ancestors on top, a
/// breadcrumb back), and at 1280×720 shows more than three rows of frames (issue 26 item 7).
#[test]
fn a_click_zooms_the_flame_graph_and_the_breadcrumb_leads_back() {
    use egui_kittest::kittest::NodeT;
    let blocks = raw_blocks();
    let frame = "/workspace/llama/kv_cache.py(42): append";
    for lang in Lang::ALL {
        let t = tr(lang);
        let mut app = MemsightApp::new(Some(rank_dir()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        let at: i128 = blocks.iter().filter_map(|b| b.alloc).max().unwrap() - 1000;
        app.apply(Command::SetCursor(Some(at as i64)));
        let mut h = common::harness_sized(app, [1280.0, 720.0]);
        h.get_by_label(t.stacks_tab).click();
        h.run();
        let root = h.get_by_label(t.all_blocks).rect();
        let rows: std::collections::BTreeSet<i32> = h
            .get_all_by_role(egui::accesskit::Role::Button)
            .map(|n| n.rect())
            .filter(|r| r.min.y >= root.min.y && r.max.y <= 720.0 && r.min.x >= root.min.x - 1.0)
            .map(|r| r.min.y.round() as i32)
            .collect();
        assert!(
            rows.len() > 3,
            "{lang:?}: {} rows of frames in view",
            rows.len()
        );
        // Zoom into the frame: it spans the graph's width.
        let before = h
            .get_by_role_and_label(egui::accesskit::Role::Button, short(frame))
            .rect()
            .width();
        assert!(before < root.width() - 1.0);
        h.get_by_role_and_label(egui::accesskit::Role::Button, short(frame))
            .click();
        h.run();
        assert!(!h.state().flame_focus().is_empty());
        let after = h
            .get_by_role_and_label(egui::accesskit::Role::Button, short(frame))
            .rect();
        assert!(
            (after.width() - root.width()).abs() < 1.5,
            "{after:?} vs {root:?}"
        );
        h.get_by_label(t.flame_zoomed);
        // The breadcrumb's root leads back.
        h.get_all_by_role(egui::accesskit::Role::Link)
            .find(|n| n.accesskit_node().label().as_deref() == Some(t.all_blocks))
            .expect("the breadcrumb's root")
            .click();
        h.run();
        assert!(h.state().flame_focus().is_empty());
        assert!(
            (h.get_by_role_and_label(egui::accesskit::Role::Button, short(frame))
                .rect()
                .width()
                - before)
                .abs()
                < 1.5
        );
        assert!(h.query_by_label(t.flame_zoomed).is_none());
    }
}

/// Rows by call stack (issue 26 item 13): every group's label is its own, the headers sort,
/// the grouped view has its own Copy (in the table's order), and with Live at cursor open at
/// 1280×720 the number columns stay in view. English and Chinese, on the demo and the real
/// text export.
#[test]
fn grouped_rows_have_distinct_labels_sortable_headers_and_copy() {
    let mut ranks = vec![rank_dir()];
    if let Some(s) = common::samples() {
        ranks.push(common::first_subdir(&s.join(
            "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/text/level1",
        )));
    }
    for rank in ranks {
        for lang in Lang::ALL {
            let t = tr(lang);
            let mut app = MemsightApp::new(Some(rank.clone()), Vec::new(), None);
            app.set_language(lang);
            app.wait_for_load();
            app.apply(Command::SetTableGroup(Some(
                memsight::analysis::stacks::GroupKey::Stack,
            )));
            let at = app.view().unwrap().time_extent().1 / 2;
            app.apply(Command::SetCursor(Some(at)));
            let mut h = Harness::builder()
                .with_size([1280.0, 720.0])
                .with_max_steps(16)
                .build_ui_state(|ui, app: &mut MemsightApp| app.ui_root(ui), app);
            h.run();
            h.run();
            let copy_of = |h: &mut Harness<'static, MemsightApp>| {
                h.get_all_by_label(t.copy)
                    .min_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
                    .unwrap()
                    .click();
                h.run();
                h.state().details().last_copy().unwrap().to_string()
            };
            let tsv = copy_of(&mut h);
            let labels: Vec<&str> = tsv
                .lines()
                .skip(1)
                .map(|l| l.split('\t').next().unwrap())
                .collect();
            let unique: std::collections::BTreeSet<&&str> = labels.iter().collect();
            assert_eq!(unique.len(), labels.len(), "{}: {labels:?}", rank.display());
            // The number columns are in view beside Live at cursor.
            let button = egui::accesskit::Role::Button;
            let calls = h.get_by_role_and_label(button, t.group_headers[4]).rect();
            assert!(calls.max.x <= 1280.0, "{calls:?}");
            // Blocks ascending.
            h.get_by_role_and_label(button, t.group_headers[1]).click();
            h.run();
            let tsv = copy_of(&mut h);
            let blocks: Vec<u64> = tsv
                .lines()
                .skip(1)
                .map(|l| l.split('\t').nth(1).unwrap().parse().unwrap())
                .collect();
            assert!(blocks.windows(2).all(|w| w[0] <= w[1]), "{blocks:?}");
        }
    }
}
