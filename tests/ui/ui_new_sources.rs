//! The new sources in the app (issue 27): a PyTorch profiler trace and an msMemScope dump open
//! like an export, in English and Chinese at 1280×720: the rank's device in the rank list, the
//! Operator Allocated peak labelled, and the details table's Copy all holds every block, named
//! as the raw events say.

use crate::common;

use std::path::Path;

use egui_kittest::kittest::Queryable;
use memsight::ui::MemsightApp;
use memsight::ui::format::grouped;
use memsight::ui::i18n::Lang;

/// The rows of Copy all (header first) as cells.
fn copy_all(h: &mut egui_kittest::Harness<'static, MemsightApp>) -> Vec<Vec<String>> {
    let label = h.state().tr().copy_all;
    h.get_by_label(label).click();
    h.run();
    let text = h
        .state()
        .details()
        .last_copy()
        .map(str::to_string)
        .expect("Copy all copied");
    text.lines()
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Checks the app on `path` in both languages: `device` in the rank's label, a peak label,
/// and Copy all's Name column equal (as a multiset) to `names` (an unnamed block, `Unknown` on
/// screen, copies as an empty cell, as for the Ascend exports).
fn check(path: &Path, device: &str, names: &[String]) {
    for (lang, peak) in [(Lang::En, "peak "), (Lang::Zh, "峰值 ")] {
        let mut h = common::app_at_720p(path, lang);
        let rank = h.get_by_label(h.state().tr().rank_id).value();
        assert!(
            rank.as_deref()
                .is_some_and(|r| r.split(" · ").any(|part| part == device)),
            "{lang:?}: {rank:?} names {device}"
        );
        let labels = h.state().chart_peak_labels().to_vec();
        assert!(
            labels.iter().any(|l| l.text.starts_with(peak)),
            "{lang:?}: {labels:?}"
        );
        let rows = copy_all(&mut h);
        let name_col = rows[0]
            .iter()
            .position(|c| c == "Name")
            .expect("a Name column (file tables keep English headers)");
        let mut got: Vec<String> = rows[1..].iter().map(|r| r[name_col].clone()).collect();
        got.sort_unstable();
        let mut want: Vec<String> = names
            .iter()
            .map(|n| {
                if n == "Unknown" {
                    String::new()
                } else {
                    n.clone()
                }
            })
            .collect();
        want.sort_unstable();
        assert_eq!(got, want, "{lang:?}");
    }
}

#[test]
fn a_pytorch_trace_opens_with_its_blocks_named_by_their_ops() {
    let file = common::fixtures().join("pytorch/cnn_adam.pt.trace.json.gz");
    // The names, by brute force over the events: the innermost cpu_op (or phase annotation:
    // Optimizer.step#…, Optimizer.zero_grad#…, enumerate(DataLoader)…) on the block's thread
    // at its allocation ("Unknown" when none), one per allocation, plus one per free of a
    // block allocated before profiling began.
    let ev = common::trace_events(&file);
    let ns = |v: &serde_json::Value| (v.as_f64().unwrap() * 1000.0).round() as i64;
    let ops: Vec<(i64, i64, i64, i64, &str)> = ev
        .iter()
        .filter(|e| (e["cat"] == "cpu_op" || common::is_phase_annotation(e)) && e["ph"] == "X")
        .map(|e| {
            let s = ns(&e["ts"]);
            (
                e["pid"].as_i64().unwrap(),
                e["tid"].as_i64().unwrap(),
                s,
                s + ns(&e["dur"]),
                e["name"].as_str().unwrap(),
            )
        })
        .collect();
    let mut mem: Vec<(i64, i64, i64, u64, i64)> = ev
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .map(|e| {
            (
                ns(&e["ts"]),
                e["pid"].as_i64().unwrap(),
                e["tid"].as_i64().unwrap(),
                e["args"]["Addr"].as_u64().unwrap(),
                e["args"]["Bytes"].as_i64().unwrap(),
            )
        })
        .collect();
    mem.sort_by_key(|m| m.0);
    let mut held = std::collections::HashSet::new();
    let mut names = Vec::new();
    for &(t, pid, tid, addr, bytes) in &mem {
        if bytes > 0 {
            held.insert(addr);
            let op = ops
                .iter()
                .filter(|o| o.0 == pid && o.1 == tid && o.2 <= t && t <= o.3)
                .max_by_key(|o| (o.2, -o.3))
                .map_or("Unknown", |o| o.4);
            names.push(op.to_string());
        } else if bytes < 0 && !held.remove(&addr) {
            names.push("Unknown".to_string());
        }
    }
    check(&file, "cpu", &names);
}

/// (name, size) of every PTA block of an msMemScope dump, in time order: named by the ATEN op
/// running on its thread, the spans read here from the raw rows, paired by name per thread.
fn memscope_blocks(file: &Path) -> Vec<(String, i64)> {
    let mut rd = csv::Reader::from_path(file).unwrap();
    let rows: Vec<csv::StringRecord> = rd.records().map(Result::unwrap).collect();
    let mut rows: Vec<&csv::StringRecord> = rows.iter().collect();
    rows.sort_by_key(|r| r[4].parse::<i64>().unwrap());
    let mut open: Vec<(String, String, i64)> = Vec::new();
    let mut spans: Vec<(String, i64, i64, String)> = Vec::new();
    for r in &rows {
        let t: i64 = r[4].parse().unwrap();
        match (&r[1], &r[2]) {
            ("OP_LAUNCH", "ATEN_START") => open.push((r[6].to_string(), r[3].to_string(), t)),
            ("OP_LAUNCH", "ATEN_END") => {
                if let Some(k) = open.iter().rposition(|o| o.0 == r[6] && o.1 == r[3]) {
                    let (tid, name, s) = open.remove(k);
                    spans.push((tid, s, t, name));
                }
            }
            _ => {}
        }
    }
    rows.iter()
        .filter(|r| &r[1] == "MALLOC" && &r[2] == "PTA")
        .map(|r| {
            let t: i64 = r[4].parse().unwrap();
            let name = spans
                .iter()
                .filter(|s| s.0 == r[6] && s.1 <= t && t <= s.2)
                .max_by_key(|s| (s.1, -s.2))
                .map_or("Unknown".to_string(), |s| s.3.clone());
            let size = r[9]
                .split(',')
                .find_map(|kv| kv.strip_prefix("size:"))
                .unwrap()
                .parse()
                .unwrap();
            (name, size)
        })
        .collect()
}

#[test]
fn an_msmemscope_dump_opens_with_its_blocks_named_by_their_aten_ops() {
    let Some(samples) = common::samples() else {
        return; // a failure under MEMSIGHT_REQUIRE_ALL
    };
    let file = samples.join("tanxiangyuu_msmemscope/example/compare/leaks.csv");
    let names: Vec<String> = memscope_blocks(&file).into_iter().map(|b| b.0).collect();
    check(&file, "NPU:0", &names);
}

/// msMemScope's own comparison (example/compare: a run and its leaking variant) in the app's
/// Diff: every operator's KB and block count on each side, EN and ZH, against the raw rows.
#[test]
fn two_msmemscope_dumps_compare_in_the_diff() {
    use memsight::ui::Command;
    use memsight::ui::baseline::BaselineSource;
    let Some(samples) = common::samples() else {
        return; // a failure under MEMSIGHT_REQUIRE_ALL
    };
    let dir = samples.join("tanxiangyuu_msmemscope/example/compare");
    let sums = |file: &str| {
        let mut m: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
        for (name, size) in memscope_blocks(&dir.join(file)) {
            let e = m.entry(name).or_default();
            e.0 += size as f64 / 1024.0;
            e.1 += 1;
        }
        m
    };
    let (a, b) = (sums("baseline.csv"), sums("leaks.csv"));
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(dir.join("leaks.csv")), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.apply(Command::CompareWith(BaselineSource {
            path: dir.join("baseline.csv"),
            rank: 0,
        }));
        app.wait_for_baseline();
        let mut h = common::harness(app);
        let t = h.state().tr();
        h.get_by_label(t.copy).click();
        h.step();
        let tsv = common::copied(&h).expect("the diff copied");
        let rows: Vec<Vec<&str>> = tsv
            .lines()
            .skip(1)
            .map(|l| l.split('\t').collect())
            .collect();
        let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
        assert_eq!(rows.len(), names.len(), "{lang:?}");
        for r in &rows {
            let num = |i: usize| r[i].parse::<f64>().unwrap();
            let (ak, an) = a.get(r[0]).copied().unwrap_or_default();
            let (bk, bn) = b.get(r[0]).copied().unwrap_or_default();
            assert!(
                (num(1) - ak).abs() < 1e-6 && (num(2) - bk).abs() < 1e-6,
                "{r:?}"
            );
            assert_eq!((num(4) as usize, num(5) as usize), (an, bn), "{r:?}");
        }
    }
}

/// msMemScope's own columns (Owner, Inefficient) in the details table: shown after the call
/// stack, filtered by typing into their boxes, copied with the rows; EN and ZH, against the
/// raw rows of a generated dump.
#[test]
fn msmemscope_owner_and_inefficient_columns_show_filter_and_copy() {
    let (_tmp, file) = common::generated_dump(1500);
    // The raw Attr of every PTA MALLOC: how many say late_deallocation.
    let mut rd = csv::Reader::from_path(&file).unwrap();
    let late = rd
        .records()
        .map(Result::unwrap)
        .filter(|r| &r[1] == "MALLOC" && &r[2] == "PTA")
        .filter(|r| r[9].contains("inefficient:late_deallocation"))
        .count();
    assert!(late > 0);
    for lang in [Lang::En, Lang::Zh] {
        let mut h = common::app_at_720p(&file, lang);
        let all = copy_all(&mut h);
        assert_eq!(
            &all[0][..4],
            ["Name", "Call Stack", "Owner", "Inefficient"],
            "{lang:?}"
        );
        assert_eq!(all.len() - 1, 1500, "{lang:?}");
        common::type_into(&mut h, "Inefficient", "late");
        let rows = copy_all(&mut h);
        assert_eq!(rows.len() - 1, late, "{lang:?}");
        assert!(
            rows[1..].iter().all(|r| r[3] == "late_deallocation"),
            "{lang:?}"
        );
        assert!(rows[1..].iter().all(|r| r[2].starts_with("PTA@model@")));
    }
}

/// A folder of worker traces (`tensorboard_trace_handler`) is a cluster: the overview
/// summarises both ranks, and a rank's link opens it; EN and ZH.
#[test]
fn a_folder_of_worker_traces_opens_on_the_cluster_overview() {
    let dir = common::fixtures().join("pytorch/ddp");
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(dir.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.wait_for_overview();
        let mut h = common::harness(app);
        let t = h.state().tr();
        assert!(h.state().view_state().show_overview, "{lang:?}");
        h.get_by_label(&(t.overview_title)(2, 2));
        h.get_all_by_role_and_label(egui::accesskit::Role::Link, "1")
            .next()
            .expect("rank 1 in the overview")
            .click();
        h.step();
        h.state_mut().wait_for_load();
        h.run();
        assert!(!h.state().view_state().show_overview);
        let rank = h.get_by_label(t.rank_id).value();
        assert!(
            rank.is_some_and(|r| r.starts_with("rank 1 · cpu")),
            "{lang:?}"
        );
    }
}

/// The smoke dumps of msMemScope (two processes on NPU 0 and 1, and their host memory) open on
/// the cluster overview (issue 43 item 8): each rank's name ("0 pid 2523738") on one line, and
/// the spread and its outliers of the NPU ranks alone, the host ranks (`cpu`) apart.
#[test]
fn msmemscope_ranks_keep_one_line_and_host_ranks_stay_out_of_the_spread() {
    let Some(samples) = common::samples() else {
        return;
    };
    let dir = samples.join("tanxiangyuu_msmemscope/test/smoke/testfile/csvfile");
    for lang in [Lang::En, Lang::Zh] {
        let mut app = MemsightApp::new(Some(dir.clone()), Vec::new(), None);
        app.set_language(lang);
        app.wait_for_load();
        app.wait_for_overview();
        let mut h = common::harness(app);
        let t = h.state().tr();
        let rows: Vec<memsight::export::summary::RankSummary> = h
            .state()
            .overview()
            .unwrap()
            .rows
            .iter()
            .flatten()
            .cloned()
            .collect();
        assert!(rows.iter().any(|r| r.device.as_deref() == Some("cpu")));
        // The NPU ranks' spread by plain arithmetic.
        let npu: Vec<(&str, f64)> = rows
            .iter()
            .filter(|r| r.device.as_deref() != Some("cpu"))
            .filter_map(|r| Some((r.rank.as_str(), r.peaks.operator_allocated?.mib)))
            .collect();
        assert!(npu.len() >= 4, "{npu:?}");
        let max = npu
            .iter()
            .fold(npu[0], |b, p| if p.1 > b.1 { *p } else { b });
        let min = npu
            .iter()
            .fold(npu[0], |b, p| if p.1 < b.1 { *p } else { b });
        let mean = npu.iter().map(|p| p.1).sum::<f64>() / npu.len() as f64;
        let mb = |v: f64| format!("{} MB", grouped(v, 2));
        h.get_by_label(&(t.overview_spread)(
            &mb(max.1),
            max.0,
            &mb(min.1),
            min.0,
            &mb(mean),
            &mb(max.1 - min.1),
        ));
        // Every rank's link is one line high.
        let line = h
            .ctx
            .fonts_mut(|f| f.row_height(&egui::FontId::proportional(14.0)));
        for r in &rows {
            let link = h
                .get_all_by_role_and_label(egui::accesskit::Role::Link, &r.rank)
                .next()
                .unwrap_or_else(|| panic!("{lang:?}: rank {} listed", r.rank));
            assert!(
                link.rect().height() < 1.5 * line.max(16.0),
                "{lang:?}: rank {} wraps: {:?}",
                r.rank,
                link.rect()
            );
        }
        // The folder holds two dumps of the same two processes, a second apart: the second's
        // ranks are "…_2". Hovered, a rank's link names the dump it is read from (the files
        // in name order, as the ranks were found).
        let mut dumps: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|f| f.starts_with("memscope_dump_") && f.ends_with(".csv"))
            .collect();
        dumps.sort();
        assert_eq!(dumps.len(), 2, "{dumps:?}");
        for (rank, dump) in [("0 pid 2523738", &dumps[0]), ("0 pid 2523738_2", &dumps[1])] {
            assert!(rows.iter().any(|r| r.rank == rank), "{lang:?}: {rank}");
            h.get_all_by_role_and_label(egui::accesskit::Role::Link, rank)
                .next()
                .unwrap()
                .hover();
            // A tooltip waits for the pointer to rest (egui's tooltip delay, half a second).
            for _ in 0..60 {
                h.step();
            }
            let shown = dir.join(dump).display().to_string();
            h.get_by_label(&format!("{}\n{shown}", t.open_rank_hover));
        }
        // So does the rank picker's entry, hovered.
        h.get_by_label(t.rank_id).click();
        h.run();
        h.get_by_label("rank 0 pid 2523738_2 · NPU:0").hover();
        for _ in 0..60 {
            h.step();
        }
        h.get_by_label(&dir.join(&dumps[1]).display().to_string());
    }
}
