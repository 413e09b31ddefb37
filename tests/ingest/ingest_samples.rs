//! Every real export in ../shared/samples loads, with counts, ids and peaks checked against
//! values computed here from the raw files (or by SQL on the DBs).

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, raw_origin, raw_peak, samples, us_to_ns};
use memsight::export::summarize;
use memsight::ingest::{LoadControl, discover, load_rank};
use memsight::model::{DataSource, MIB};

const MSI: &str = "xiaobingling93-pixel_Ascend-msinsight";

fn load_dir(dir: &Path) -> memsight::model::RankData {
    let p = discover(dir).unwrap();
    assert_eq!(p.ranks.len(), 1, "{}", dir.display());
    load_rank(&p.ranks[0], &LoadControl::new()).unwrap()
}

/// Checks a torch_npu CSV rank against its raw files.
fn check_csv_rank(dir: &Path, rank: &str, device: &str) {
    let data = load_dir(dir);
    let s = summarize(&data);
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let rec = RawCsv::read(&out.join("memory_record.csv"));
    let ops = RawCsv::read(&out.join("operator_memory.csv"));
    assert_eq!(s.rank, rank);
    assert_eq!(s.device.as_deref(), Some(device));
    assert_eq!(s.counts.memory_record as usize, rec.rows.len());
    assert_eq!(s.counts.operator_memory as usize, ops.rows.len());
    if out.join("npu_module_mem.csv").exists() {
        assert_eq!(
            s.counts.npu_module_mem as usize,
            RawCsv::read(&out.join("npu_module_mem.csv")).rows.len()
        );
    }
    assert_eq!(s.counts.skipped_rows, 0, "{:?}", s.warnings);
    let origin = raw_origin(&out);
    assert_eq!(i128::from(s.time_origin_ns), origin);
    for (key, comp, col) in [
        (s.peaks.operator_allocated, "PTA+GE", "Total Allocated(MB)"),
        (s.peaks.operator_reserved, "PTA+GE", "Total Reserved(MB)"),
        (s.peaks.app_reserved, "APP", "Total Reserved(MB)"),
    ] {
        let (mib, ns) = raw_peak(&rec, comp, col, 1.0).unwrap();
        let got = key.unwrap_or_else(|| panic!("{comp} {col} missing"));
        assert!(
            (got.mib - mib).abs() < 1e-9,
            "{comp} {col}: {} vs {mib}",
            got.mib
        );
        let want_ms = (ns - origin) as f64 / 1e6;
        assert!(
            (got.at_ms - want_ms).abs() < 1e-9,
            "{comp} {col} at {} vs {want_ms}",
            got.at_ms
        );
    }
    // Activated exists exactly when the PTA+GE rows carry stream pointers.
    let stream = rec.col("Stream Ptr");
    let comp = rec.col("Component");
    let has_stream = rec
        .rows
        .iter()
        .any(|r| r[comp] == "PTA+GE" && !r[stream].is_empty());
    assert_eq!(s.peaks.operator_activated.is_some(), has_stream);
    // Unreleased and the largest allocation.
    let rel = ops.col("Release Time(us)");
    assert_eq!(
        s.unreleased as usize,
        ops.rows.iter().filter(|r| r[rel].is_empty()).count()
    );
    let size = ops.col("Size(KB)");
    let max = ops
        .rows
        .iter()
        .map(|r| r[size].parse::<f64>().unwrap())
        .fold(f64::MIN, f64::max);
    assert_eq!(s.largest_allocation.unwrap().size_kib, max);
}

#[test]
fn torch_npu_text_samples_match_their_raw_files() {
    let Some(root) = samples() else { return };
    let text = root.join(MSI).join("test/data/pytorch/text");
    for level in ["level0", "level1", "level2"] {
        for r in ["0", "1"] {
            check_csv_rank(&text.join(level).join(format!("rank{r}_ascend_pt")), r, r);
        }
    }
    let st = root.join(MSI).join("test/st/level2");
    check_csv_rank(&st.join("rank_0_ascend_pt"), "0", "0");
    check_csv_rank(&st.join("rank_2_ascend_pt"), "2", "4"); // rank 2 lives on NPU:4
}

#[test]
fn rank_2_matches_the_reference_values_of_the_issue() {
    let Some(root) = samples() else { return };
    let data = load_dir(&root.join(MSI).join("test/st/level2/rank_2_ascend_pt"));
    let s = summarize(&data);
    assert_eq!(s.time_origin_ns, 1_764_246_877_074_815_290);
    assert_eq!(
        (
            s.counts.memory_record,
            s.counts.operator_memory,
            s.counts.npu_module_mem
        ),
        (19396, 3226, 3465)
    );
    let a = s.peaks.operator_allocated.unwrap();
    assert_eq!(a.mib, 10818.06298828125);
    assert!((a.at_ms - 387.43676).abs() < 1e-9);
    assert_eq!(s.unreleased, 5);
    let l = s.largest_allocation.unwrap();
    assert_eq!(
        (l.name.as_str(), l.size_kib),
        ("npu::_npu_dtype_cast", 2430976.5)
    );
}

#[test]
fn st_level2_cluster_lists_only_ranks_with_memory_data() {
    let Some(root) = samples() else { return };
    let p = discover(&root.join(MSI).join("test/st/level2")).unwrap();
    let ids: Vec<(&str, Option<&str>)> = p
        .ranks
        .iter()
        .map(|r| (r.rank.as_str(), r.device.as_deref()))
        .collect();
    // rank_1 and rank_3 hold only analysis.db (no memory tables), as in Insight.
    assert_eq!(ids, vec![("0", Some("0")), ("2", Some("4"))]);
}

#[test]
fn old_variant_a_and_excel_damaged_samples_load() {
    let Some(root) = samples() else { return };
    let base = root.join(MSI).join("server/src/test/test_data");
    // Variant A: no Active / Stream columns; GE rows and no PTA+GE → no operator curves expected
    // unless the data is GE-only.
    let d0 = load_dir(&base.join("test_rank_0"));
    let rec = RawCsv::read(&base.join("test_rank_0/ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    assert_eq!(d0.records.len(), rec.rows.len());
    let s0 = summarize(&d0);
    assert!(s0.peaks.operator_activated.is_none());
    let (app, _) = raw_peak(&rec, "APP", "Total Reserved(MB)", 1.0).unwrap();
    assert_eq!(s0.peaks.app_reserved.unwrap().mib, app);
    // test_rank_1: 1.69512E+15 timestamps → loaded with a lossy warning; static_op_mem present.
    let d1 = load_dir(&base.join("test_rank_1"));
    let rec1 = RawCsv::read(&base.join("test_rank_1/ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    assert_eq!(d1.records.len(), rec1.rows.len());
    assert!(
        d1.report
            .warnings
            .iter()
            .any(|w| w.text().contains("lossy timestamps")),
        "{:?}",
        d1.report.warnings
    );
    let st = RawCsv::read(&base.join("test_rank_1/ASCEND_PROFILER_OUTPUT/static_op_mem.csv"));
    assert_eq!(d1.static_ops.len(), st.rows.len());
    assert_eq!(d1.report.skipped_rows(), 0);
}

#[test]
fn quoted_tab_suffixed_timestamps_of_rl_insight_load_exactly() {
    let Some(root) = samples() else { return };
    let dir =
        root.join("verl-project_rl-insight/data/recipe/memory_data/20260526_085155_ascend_pt");
    let data = load_dir(&dir);
    let ops = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    assert_eq!(data.operators.len(), ops.rows.len());
    let at = ops.col("Allocation Time(us)");
    for (i, r) in ops.rows.iter().enumerate() {
        assert_eq!(
            i128::from(data.operators.alloc_time[i]),
            us_to_ns(&r[at]),
            "row {i}"
        );
    }
    assert!(data.records.is_empty());
    assert!(
        data.report
            .warnings
            .iter()
            .any(|w| w.text().contains("no memory_record"))
    );
}

#[test]
fn db_samples_match_sql_on_the_same_files() {
    let Some(root) = samples() else { return };
    for level in ["level0", "level1", "level2"] {
        for r in ["0", "1"] {
            let dir = root
                .join(MSI)
                .join(format!("test/data/pytorch/db/{level}/rank{r}_ascend_pt"));
            let db = dir.join(format!(
                "ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db"
            ));
            let data = load_dir(&dir);
            assert!(matches!(data.info.source, DataSource::Db { .. }));
            assert_eq!(data.info.rank, r);
            assert_eq!(data.info.device.as_deref(), Some(r));
            assert_eq!(data.info.host.as_deref(), Some("ubuntu"));
            let conn = rusqlite::Connection::open_with_flags(
                &db,
                rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
            )
            .unwrap();
            let count =
                |sql: &str| conn.query_row(sql, [], |row| row.get::<_, i64>(0)).unwrap() as u64;
            let s = summarize(&data);
            assert_eq!(
                s.counts.memory_record,
                count("SELECT count(*) FROM MEMORY_RECORD")
            );
            assert_eq!(
                s.counts.operator_memory,
                count("SELECT count(*) FROM OP_MEMORY")
            );
            assert_eq!(
                s.counts.npu_module_mem,
                count("SELECT count(*) FROM NPU_MODULE_MEM")
            );
            let peak_sql = "SELECT m.totalAllocated, m.timestamp FROM MEMORY_RECORD m JOIN STRING_IDS s ON s.id = m.component \
                            WHERE s.value = 'PTA+GE' ORDER BY m.totalAllocated DESC, m.timestamp ASC LIMIT 1";
            let (bytes, ts): (i64, i64) = conn
                .query_row(peak_sql, [], |row| Ok((row.get(0)?, row.get(1)?)))
                .unwrap();
            let p = s.peaks.operator_allocated.unwrap();
            assert_eq!(p.mib, bytes as f64 / MIB as f64);
            assert!((p.at_ms - (ts - s.time_origin_ns) as f64 / 1e6).abs() < 1e-9);
            let app_sql = "SELECT max(hbm + ddr) FROM NPU_MEM n JOIN STRING_IDS s ON s.id = n.type WHERE s.value = 'app'";
            let app = conn
                .query_row(app_sql, [], |row| row.get::<_, f64>(0))
                .unwrap();
            assert_eq!(s.peaks.app_reserved.unwrap().mib, app / MIB as f64);
            assert_eq!(
                s.unreleased,
                count(
                    "SELECT count(*) FROM OP_MEMORY WHERE releaseTime IS NULL OR releaseTime = 0"
                )
            );
        }
    }
}

#[test]
fn whole_samples_tree_loads_every_rank_with_data() {
    let Some(root) = samples() else { return };
    let p = discover(&root).unwrap();
    let mut loaded = 0;
    let mut failed = Vec::new();
    for r in &p.ranks {
        match load_rank(r, &LoadControl::new()) {
            Ok(_) => loaded += 1,
            Err(e) => failed.push(e.to_string()),
        }
    }
    // 8 torch_npu text ranks, 6 DB ranks, 2 old-format ranks, rl-insight, the msprof unified
    // DB: 18; and a rank per (process, device) of every msMemScope dump's MALLOCs (counted here
    // from the raw rows). The two msprof folders hold 0-byte placeholders and fail with a clear
    // "empty" message.
    let memscope: usize = walk_files(&root.join("tanxiangyuu_msmemscope"))
        .iter()
        .map(|f| {
            let mut rd = csv::ReaderBuilder::new()
                .flexible(true)
                .from_path(f)
                .unwrap();
            let parts: std::collections::BTreeSet<(String, String)> = rd
                .records()
                .map(Result::unwrap)
                .filter(|r| &r[1] == "MALLOC")
                .map(|r| (r[5].to_string(), r[7].to_string()))
                .collect();
            parts.len()
        })
        .sum();
    assert!(memscope >= 4, "{memscope}");
    // And a rank per device of every PyTorch profiler trace (the real H100 runs): the distinct
    // (Device Type, Device Id) of its `[memory]` events, CPU counted once, read with serde_json.
    let traces: usize = walk_files(&root)
        .iter()
        .filter(|f| {
            let n = f.to_string_lossy();
            n.ends_with(".pt.trace.json") || n.ends_with(".pt.trace.json.gz")
        })
        .map(|f| trace_devices(f))
        .sum();
    assert_eq!(loaded, 18 + memscope + traces, "{failed:?}");
    assert_eq!(failed.len(), 2);
    assert!(
        failed.iter().all(|f| f.contains("the file is empty")),
        "{failed:?}"
    );
    assert!(
        p.ranks.iter().any(|r| matches!(&r.source,
            DataSource::Db { path, .. } if path.ends_with("msprof_0.db"))),
        "{:?}",
        p.notes
    );
}

#[test]
fn wal_mode_db_is_read_without_writing_beside_it() {
    let Some(root) = samples() else { return };
    let src = root.join(MSI).join("test/data/pytorch/db/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("ascend_pytorch_profiler_0.db");
    std::fs::copy(&src, &dst).unwrap();
    let before: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let data = load_dir(tmp.path());
    assert_eq!(data.memory_record_rows, 990);
    let after: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "loading created files beside the DB");
}

/// Every file under `dir`, recursively.
fn walk_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk_files(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// The devices a PyTorch trace's `[memory]` events name: (Device Type, Device Id) pairs, with
/// every CPU id (PyTorch writes -1 or 0) counted as one device.
fn trace_devices(path: &Path) -> usize {
    use std::io::Read;
    let mut text = String::new();
    let file = std::fs::File::open(path).unwrap();
    if path.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(file)
            .read_to_string(&mut text)
            .unwrap();
    } else {
        std::io::BufReader::new(file)
            .read_to_string(&mut text)
            .unwrap();
    }
    let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let devices: std::collections::BTreeSet<(i64, i64)> = doc["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .map(|e| {
            let kind = e["args"]["Device Type"].as_i64().unwrap();
            let id = e["args"]["Device Id"].as_i64().unwrap();
            (kind, if kind == 0 { 0 } else { id })
        })
        .collect();
    devices.len()
}
