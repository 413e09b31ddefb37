//! The committed fixtures (made by `memsight generate --fixtures`): every layout, variant and
//! quirk, plus the malformed set, checked against the raw files.

use crate::common;

use std::path::{Path, PathBuf};

use common::{
    RawCsv, copy_dir, db_fixtures, first_subdir, fixtures, raw_origin, raw_peak, us_to_ns,
};
use memsight::export::summarize;
use memsight::ingest::{LoadControl, LoadError, discover, load_rank};
use memsight::model::{Component, DataSource, Format, NULL};

#[test]
fn fixtures_are_what_the_generator_writes() {
    // The committed fixtures must be reproducible byte for byte from the generator.
    let tmp = tempfile::tempdir().unwrap();
    memsight::generate::write_fixtures(tmp.path()).unwrap();
    let mut mismatches = Vec::new();
    for entry in walk(tmp.path()) {
        let rel = entry.strip_prefix(tmp.path()).unwrap();
        if rel.starts_with("db")
            || rel.starts_with("db_only")
            || rel.starts_with("malformed/corrupt_db_ascend_pt")
        {
            continue; // generated per test run, not committed (see common::db_fixtures)
        }
        let committed = fixtures().join(rel);
        let same = std::fs::read(&committed).ok() == std::fs::read(&entry).ok();
        // DB files embed nothing random but SQLite page layout could differ across versions.
        if !same && entry.extension().is_none_or(|e| e != "db") {
            mismatches.push(rel.display().to_string());
        }
    }
    assert!(
        mismatches.is_empty(),
        "regenerate with `cargo run --release -- generate --fixtures fixtures`: {mismatches:?}"
    );
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            out.extend(walk(&p))
        } else {
            out.push(p)
        }
    }
    out
}

#[test]
fn torch_cluster_matches_raw_files() {
    let root = fixtures().join("torch_cluster");
    let p = discover(&root).unwrap();
    assert_eq!(p.ranks.len(), 2);
    for (i, info) in p.ranks.iter().enumerate() {
        assert_eq!(info.rank, i.to_string());
        assert_eq!(info.device.as_deref(), Some(i.to_string().as_str()));
        assert_eq!(info.host.as_deref(), Some("node0"));
        assert_eq!(info.format, Format::TorchNpu);
        let data = load_rank(info, &LoadControl::new()).unwrap();
        let out = info.dir.join("ASCEND_PROFILER_OUTPUT");
        let rec = RawCsv::read(&out.join("memory_record.csv"));
        assert_eq!(data.records.len(), rec.rows.len());
        assert!(
            data.records.time_ns.windows(2).all(|w| w[0] <= w[1]),
            "records sorted by time"
        );
        assert_eq!(i128::from(data.time_origin_ns), raw_origin(&out));
        let s = summarize(&data);
        let (mib, ns) = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
        assert_eq!(s.peaks.operator_allocated.unwrap().mib, mib);
        assert_eq!(
            s.peaks.operator_allocated.unwrap().at_ms,
            (ns - raw_origin(&out)) as f64 / 1e6
        );
        // Generator writes WORKSPACE rows; they never feed the operator curves.
        assert!(
            data.records
                .component
                .contains(&(Component::Workspace as u8))
        );
        // The negative-size release-only row is kept as it is.
        let neg = data.operators.size.iter().position(|&s| s < 0).unwrap();
        assert_eq!(data.operators.size[neg], -(4 << 20));
        assert_eq!(data.operators.alloc_time[neg], NULL);
    }
}

#[test]
fn crlf_fixture_loads_like_lf() {
    let root = fixtures().join("torch_crlf");
    let rank = first_subdir(&root);
    let bytes = std::fs::read(rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv")).unwrap();
    assert!(bytes.windows(2).any(|w| w == b"\r\n"));
    let data = load_rank(&discover(&root).unwrap().ranks[0], &LoadControl::new()).unwrap();
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    assert_eq!(data.records.len(), rec.rows.len());
    assert_eq!(data.report.skipped_rows(), 0);
}

#[test]
fn mindspore_units_static_ops_and_legacy_trailing_comma() {
    let root = fixtures().join("mindspore");
    let p = discover(&root).unwrap();
    assert_eq!(p.ranks.len(), 2);
    for info in &p.ranks {
        assert_eq!(info.format, Format::MindSpore);
        let data = load_rank(info, &LoadControl::new()).unwrap();
        let out = info.dir.join("ASCEND_PROFILER_OUTPUT");
        let rec = RawCsv::read(&out.join("memory_record.csv"));
        // MindSpore's "MB" is KiB/1000: bytes = value * 1000 * 1024.
        let (bytes, _) =
            raw_peak(&rec, "MindSpore+GE", "Total Allocated(MB)", 1000.0 * 1024.0).unwrap();
        let s = summarize(&data);
        assert_eq!(s.peaks.operator_allocated.unwrap().mib, bytes / 1048576.0);
        assert!(
            s.peaks.operator_activated.is_none(),
            "no Stream Ptr in MindSpore data"
        );
        let ops = RawCsv::read(&out.join("operator_memory.csv"));
        assert_eq!(data.operators.len(), ops.rows.len());
        assert_eq!(
            data.report.skipped_rows(),
            0,
            "{:?}",
            data.report.all_warnings()
        );
        let st = RawCsv::read(&out.join("static_op_mem.csv"));
        assert_eq!(data.static_ops.len(), st.rows.len());
        if ops.header.last().is_some_and(String::is_empty) {
            // Legacy variant: no Release Time column; release = allocation + duration.
            let (a, d) = (ops.col("Allocation Time(us)"), ops.col("Duration(us)"));
            for (i, r) in ops.rows.iter().enumerate() {
                let want = if r[d].is_empty() {
                    NULL
                } else {
                    (us_to_ns(&r[a]) + us_to_ns(&r[d])) as i64
                };
                assert_eq!(data.operators.release_time[i], want);
            }
        } else {
            // N/A cells are missing values.
            assert!(ops.rows.iter().any(|r| r.contains(&"N/A".to_string())));
            assert!(data.operators.release_time.contains(&NULL));
        }
    }
}

#[test]
fn msprof_slices_merge_into_one_rank() {
    let root = fixtures().join("msprof");
    let p = discover(&root).unwrap();
    assert_eq!(p.ranks.len(), 1);
    let info = &p.ranks[0];
    assert_eq!(info.format, Format::Msprof);
    assert_eq!(info.rank, "PROF_000001_20261121000000000_RANK0");
    let DataSource::Csv { memory_record, .. } = &info.source else {
        panic!()
    };
    assert_eq!(memory_record.len(), 2);
    let data = load_rank(info, &LoadControl::new()).unwrap();
    let rows: usize = memory_record
        .iter()
        .map(|f| RawCsv::read(f).rows.len())
        .sum();
    assert_eq!(data.records.len(), rows);
    // GE-only data: the Operator curves come from GE rows, in KB.
    let mut ge = RawCsv::read(&memory_record[0]);
    ge.rows.extend(RawCsv::read(&memory_record[1]).rows);
    let (bytes, _) = raw_peak(&ge, "GE", "Total Allocated(KB)", 1024.0).unwrap();
    assert_eq!(
        summarize(&data).peaks.operator_allocated.unwrap().mib,
        bytes / 1048576.0
    );
    // Variant D operator_memory has no Release Time: derived from Duration.
    assert!(data.operators.release_time.iter().any(|&t| t != NULL));
}

#[test]
fn db_is_preferred_over_csv_and_says_so() {
    let root = db_fixtures().join("db");
    let p = discover(&root).unwrap();
    assert_eq!(p.ranks.len(), 1);
    let data = load_rank(&p.ranks[0], &LoadControl::new()).unwrap();
    assert!(matches!(data.info.source, DataSource::Db { .. }));
    assert!(
        summarize(&data)
            .warnings
            .iter()
            .any(|w| w.text().contains("using the DB"))
    );
    assert_eq!(data.info.host.as_deref(), Some("node0"));
    // The DB and the CSV beside it describe the same run: same peaks and counts.
    let rank_dir = first_subdir(&root);
    let rec = RawCsv::read(&rank_dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let csv_rows = rec.rows.iter().filter(|r| r[0] != "APP").count();
    assert_eq!(data.memory_record_rows, csv_rows);
    let (mib, _) = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    assert_eq!(summarize(&data).peaks.operator_allocated.unwrap().mib, mib);
}

#[test]
fn every_entry_point_finds_the_same_rank() {
    let torch = first_subdir(&fixtures().join("torch_crlf"));
    let prof = first_subdir(&fixtures().join("msprof_plain"));
    let db_rank = first_subdir(&db_fixtures().join("db_only"));
    let db_file = db_rank.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    for (path, rank) in [
        (fixtures().join("torch_crlf"), "0"),
        (torch.clone(), "0"),
        (torch.join("ASCEND_PROFILER_OUTPUT"), "0"),
        (prof.clone(), "PROF_000001_20261121000000000_RANK0"),
        (
            prof.join("mindstudio_profiler_output"),
            "PROF_000001_20261121000000000_RANK0",
        ),
        (db_file.clone(), "0"),
    ] {
        let p = discover(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(p.ranks.len(), 1, "{}", path.display());
        assert_eq!(p.ranks[0].rank, rank, "{}", path.display());
    }
}

#[test]
fn malformed_rows_are_skipped_counted_and_kept_verbatim() {
    // The generated copy: it has the corrupt DB, which is not committed.
    let root = db_fixtures().join("malformed");
    let p = discover(&root).unwrap();
    let ids: Vec<&str> = p.ranks.iter().map(|r| r.rank.as_str()).collect();
    assert_eq!(
        ids,
        vec![
            "7",
            "empty_ascend_pt",
            "no_record_ascend_pt",
            "no_timestamp_ascend_pt"
        ]
    );
    assert!(
        p.notes
            .iter()
            .any(|n| n.text().contains("ascend_pytorch_profiler_9.db")
                && n.text().contains("not a readable SQLite"))
    );
    let data = load_rank(&p.ranks[0], &LoadControl::new()).unwrap();
    assert_eq!(data.info.device.as_deref(), Some("3"));
    assert_eq!(data.records.len(), 5);
    assert_eq!(data.operators.len(), 3);
    let files = &data.report.files;
    let rec = files
        .iter()
        .find(|f| f.path.ends_with("memory_record.csv"))
        .unwrap();
    assert_eq!(rec.skipped.count, 5);
    let lines: Vec<u64> = rec.skipped.samples.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![4, 5, 6, 7, 8]);
    assert!(
        rec.skipped.samples[0]
            .reason
            .to_string()
            .contains("3 fields")
    );
    assert!(
        rec.skipped.samples[1]
            .reason
            .to_string()
            .contains("Timestamp")
    );
    assert!(
        rec.skipped.samples[3]
            .reason
            .to_string()
            .contains("Total Allocated")
    );
    assert!(rec.skipped.samples[3].text.contains("12.5MB"));
    let ops = files
        .iter()
        .find(|f| f.path.ends_with("operator_memory.csv"))
        .unwrap();
    let lines: Vec<u64> = ops.skipped.samples.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![3, 5]);
    // The quoted name with a comma survived; the BOM did not leak into the header.
    assert!(
        (0..data.operators.len())
            .any(|i| data.strings.get(data.operators.name[i]) == "aten::cat, fused")
    );
    let w = data.report.all_warnings().join("\n");
    assert!(w.contains("lossy timestamps"), "{w}");
    assert!(w.contains("npu_module_mem.csv: missing column"), "{w}");
    // The Excel-style timestamp 1.0000000000004E+15 µs.
    assert!(data.records.time_ns.contains(&1_000_000_000_000_400_000));
    // The empty and header-less ranks fail with reasons; nothing else is lost.
    match load_rank(&p.ranks[1], &LoadControl::new()) {
        Err(LoadError::NoData { reason, .. }) => {
            assert!(reason.to_string().contains("empty"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
    // operator_memory without memory_record: a table-only rank (Insight shows nothing).
    let lone = load_rank(&p.ranks[2], &LoadControl::new()).unwrap();
    assert!(lone.records.is_empty());
    assert_eq!(lone.operators.len(), 3);
    match load_rank(&p.ranks[3], &LoadControl::new()) {
        Err(LoadError::NoData { reason, .. }) => {
            assert!(reason.to_string().contains("Timestamp(us)"), "{reason}")
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn folder_without_memory_data_is_a_clear_error() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("kernel_details.csv"), "a,b\n1,2\n").unwrap();
    let e = discover(tmp.path()).unwrap_err().to_string();
    assert!(
        e.contains("no memory data found") && e.contains("memory_record"),
        "{e}"
    );
    assert!(
        discover(&tmp.path().join("nope"))
            .unwrap_err()
            .to_string()
            .contains("cannot open")
    );
}

#[cfg(unix)]
#[test]
fn symlink_loops_depth_limit_and_duplicate_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let torch = first_subdir(&fixtures().join("torch_crlf"));
    copy_dir(&torch, &tmp.path().join("a/x_ascend_pt"));
    copy_dir(&torch, &tmp.path().join("b/y_ascend_pt"));
    std::os::unix::fs::symlink(tmp.path(), tmp.path().join("a/loop")).unwrap();
    let p = discover(tmp.path()).unwrap();
    let ids: Vec<&str> = p.ranks.iter().map(|r| r.rank.as_str()).collect();
    assert_eq!(
        ids,
        vec!["0", "0_2"],
        "each folder once despite the loop; duplicates suffixed"
    );

    // Memory files 8 folders below the path are found; 9 folders below are not.
    let deep = tempfile::tempdir().unwrap();
    let mut d8 = deep.path().to_path_buf();
    for k in 0..6 {
        d8.push(format!("d{k}"));
    }
    copy_dir(&torch, &d8.join("r_ascend_pt"));
    assert_eq!(discover(deep.path()).unwrap().ranks.len(), 1);
    let deeper = tempfile::tempdir().unwrap();
    let mut d9 = deeper.path().to_path_buf();
    for k in 0..7 {
        d9.push(format!("d{k}"));
    }
    copy_dir(&torch, &d9.join("r_ascend_pt"));
    assert!(discover(deeper.path()).is_err());
}

#[test]
fn loading_never_writes_into_the_profile() {
    let tmp = tempfile::tempdir().unwrap();
    copy_dir(&db_fixtures().join("db"), tmp.path());
    copy_dir(&fixtures().join("torch_cluster"), &tmp.path().join("c"));
    let listing = |d: &Path| -> Vec<(PathBuf, u64, std::time::SystemTime)> {
        let mut v: Vec<_> = walk(d)
            .into_iter()
            .map(|p| {
                let m = std::fs::metadata(&p).unwrap();
                (p, m.len(), m.modified().unwrap())
            })
            .collect();
        v.sort();
        v
    };
    let before = listing(tmp.path());
    let p = discover(tmp.path()).unwrap();
    for r in &p.ranks {
        load_rank(r, &LoadControl::new()).unwrap();
    }
    assert_eq!(before, listing(tmp.path()));
}

#[test]
fn cancel_stops_a_load() {
    let p = discover(&fixtures().join("demo")).unwrap();
    let c = LoadControl::new();
    c.cancel();
    assert!(matches!(
        load_rank(&p.ranks[0], &c),
        Err(LoadError::Cancelled)
    ));
}

/// torch_npu's multi-device profiling writes the rows of several devices into one
/// memory_record / operator_memory / npu_module_mem. Made here from the two ranks of the
/// cluster fixture (devices 0 and 1) merged into one folder: the merged profile opens as one rank
/// per device, and each equals the rank its rows came from.
#[test]
fn one_set_of_files_with_two_devices_opens_as_two_ranks() {
    let src = fixtures().join("torch_cluster");
    let mut ranks: Vec<PathBuf> = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    ranks.sort();
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp
        .path()
        .join("node0_4000_1_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    for file in [
        "memory_record.csv",
        "operator_memory.csv",
        "npu_module_mem.csv",
    ] {
        let mut merged = String::new();
        for (k, r) in ranks.iter().enumerate() {
            let text =
                std::fs::read_to_string(r.join("ASCEND_PROFILER_OUTPUT").join(file)).unwrap();
            let mut lines = text.lines();
            let header = lines.next().unwrap();
            if k == 0 {
                merged.push_str(header);
                merged.push('\n');
            }
            for l in lines {
                merged.push_str(l);
                merged.push('\n');
            }
        }
        if file == "memory_record.csv" {
            // A row without a device: no rank can claim it, so each reports it skipped.
            merged.push_str("PTA+GE,1700000000000100.000\t,1.0,2.0,1.0,5,\n");
        }
        std::fs::write(out.join(file), merged).unwrap();
    }
    // kernel_details of both devices (newer exports start with Device_id): step 3 spans
    // 10–20 µs on device 0 and 30–45 µs on device 1 after t0.
    let t0 = 1_700_000_000_000_000u64;
    let kernels = format!(
        "Device_id,Step Id,Name,Start Time(us),Duration(us)\n\
         0,3,MatMul,{}.000,4\n0,3,Add,{}.000,2\n1,3,MatMul,{}.000,5\n1,3,Add,{}.000,10\n",
        t0 + 10,
        t0 + 18,
        t0 + 30,
        t0 + 35
    );
    std::fs::write(out.join("kernel_details.csv"), kernels).unwrap();
    let p = discover(tmp.path()).unwrap();
    let devices: Vec<Option<&str>> = p.ranks.iter().map(|r| r.device.as_deref()).collect();
    assert_eq!(devices, vec![Some("0"), Some("1")], "{:?}", p.ranks);
    for (info, original) in p.ranks.iter().zip(&ranks) {
        let split = summarize(&load_rank(info, &LoadControl::new()).unwrap());
        let alone = summarize(&common::load_first(original));
        let mut counts = alone.counts.clone();
        counts.skipped_rows += 1;
        assert_eq!(split.counts, counts, "{}", info.rank);
        assert_eq!(split.peaks, alone.peaks, "{}", info.rank);
        assert_eq!(split.unreleased, alone.unreleased);
        let data = load_rank(info, &LoadControl::new()).unwrap();
        let steps = data.steps.expect("steps from kernel_details");
        let t = t0 as i64 * 1000;
        let want = if info.device.as_deref() == Some("0") {
            (t + 10_000, t + 20_000)
        } else {
            (t + 30_000, t + 45_000)
        };
        assert_eq!(
            steps
                .steps
                .iter()
                .map(|s| (s.id, s.start_ns, s.end_ns))
                .collect::<Vec<_>>(),
            vec![(3, want.0, want.1)],
            "{}",
            info.rank
        );
    }
}

/// A DB under a Chinese folder name (with a space and a `#`, which a SQLite URI would otherwise
/// cut) opens, read-only, with nothing written beside it.
#[test]
fn a_db_under_a_chinese_path_opens() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("性能数据 #3").join("训练任务");
    copy_dir(&db_fixtures().join("db_only"), &dir);
    let before = common::list_files(&dir);
    let p = discover(&dir).unwrap();
    assert_eq!(p.ranks.len(), 2, "{:?}", p.notes);
    for info in &p.ranks {
        assert_eq!(info.source.kind(), "db");
        let data = load_rank(info, &LoadControl::new()).unwrap();
        assert!(!data.operators.is_empty());
    }
    assert_eq!(
        common::list_files(&dir),
        before,
        "nothing written beside the DB"
    );
}

/// Every file under `dir`, relative path → bytes.
fn tree_bytes(dir: &Path) -> std::collections::BTreeMap<PathBuf, Vec<u8>> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_path_buf();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

/// The generator is a pure function of its options and seed: the whole fixture set (CSV, the
/// torch_npu DB) and an msprof DB (whose STRING_IDS once followed a hash map's order) written
/// twice are byte-identical.
#[test]
fn the_generator_writes_the_same_bytes_for_the_same_seed() {
    let (a, b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let msprof_db = memsight::generate::GenOptions {
        format: Format::Msprof,
        db: memsight::generate::DbMode::Only,
        allocs: 2000,
        ..Default::default()
    };
    for dir in [a.path(), b.path()] {
        memsight::generate::write_fixtures(dir).unwrap();
        memsight::generate::generate(&dir.join("msprof_db"), &msprof_db).unwrap();
    }
    let (ta, tb) = (tree_bytes(a.path()), tree_bytes(b.path()));
    assert!(
        ta.keys().any(|p| p.extension().is_some_and(|e| e == "db")),
        "the set has DBs"
    );
    assert_eq!(ta.keys().collect::<Vec<_>>(), tb.keys().collect::<Vec<_>>());
    for (p, bytes) in &ta {
        assert!(bytes == &tb[p], "{} differs between two runs", p.display());
    }
}
