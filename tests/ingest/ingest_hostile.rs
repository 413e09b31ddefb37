//! Hostile inputs, one test per class of defect: special files, unbounded lines, stray quotes,
//! extra cells, outlier timestamps, odd encodings and separators, DBs in WAL / hot-journal /
//! byte-19 states, DB tables missing columns. Every test also checks that nothing under the
//! opened folder was created or changed.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use common::{RawCsv, copy_dir, db_fixtures, fixtures, us_to_ns};
use memsight::ingest::{LoadControl, LoadError, discover, load_rank};
use memsight::model::{NULL, RankData};

const RECORD_HEADER: &str = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type";
const OPERATOR_HEADER: &str = "Name,Size(KB),Allocation Time(us),Release Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device Type";

/// What loading every rank under `root` gave, with the folder checked unchanged afterwards.
struct Loaded {
    notes: Vec<String>,
    ranks: Vec<Result<RankData, LoadError>>,
}

fn load_untouched(root: &Path) -> Loaded {
    let before = common::list_files(root);
    let loaded = match discover(root) {
        Ok(p) => Loaded {
            notes: p.notes.iter().map(memsight::model::Message::text).collect(),
            ranks: p
                .ranks
                .iter()
                .map(|r| load_rank(r, &LoadControl::new()))
                .collect(),
        },
        Err(e) => Loaded {
            notes: vec![e.to_string()],
            ranks: Vec::new(),
        },
    };
    assert_eq!(
        before,
        common::list_files(root),
        "something under {} changed",
        root.display()
    );
    loaded
}

fn only_rank(root: &Path) -> RankData {
    let mut l = load_untouched(root);
    assert_eq!(l.ranks.len(), 1, "{:?}", l.notes);
    l.ranks.remove(0).unwrap()
}

/// A `name_ascend_pt/ASCEND_PROFILER_OUTPUT` folder under `root` holding `files`.
fn rank_dir(root: &Path, name: &str, files: &[(&str, &[u8])]) -> PathBuf {
    let out = root.join(format!("{name}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
    std::fs::create_dir_all(&out).unwrap();
    for (f, bytes) in files {
        std::fs::write(out.join(f), bytes).unwrap();
    }
    out
}

/// `n` good PTA+GE rows starting at epoch µs `t0` (1 ms apart), allocated = 10 + i MiB.
fn record_rows(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| {
            format!(
                "PTA+GE,{}.250\t,{}.0,4096.0,{}.0,55,NPU:0",
                1_700_000_000_000_000u64 + 1000 * i as u64,
                10 + i,
                10 + i
            )
        })
        .collect()
}

fn csv(header: &str, rows: &[String]) -> Vec<u8> {
    let mut s = String::from(header);
    s.push('\n');
    for r in rows {
        s.push_str(r);
        s.push('\n');
    }
    s.into_bytes()
}

/// A rank whose memory_record holds `rows`, loaded (the folder checked untouched).
fn records_rank(rows: &[String]) -> (tempfile::TempDir, RankData) {
    let tmp = tempfile::tempdir().unwrap();
    rank_dir(
        tmp.path(),
        "r",
        &[("memory_record.csv", &csv(RECORD_HEADER, rows))],
    );
    let d = only_rank(tmp.path());
    (tmp, d)
}

/// Asserts the first file skipped exactly one row, at `line`, for a reason containing `why`.
fn assert_one_skip(d: &RankData, line: u64, why: &str) {
    let s = &d.report.files[0].skipped;
    assert_eq!(s.count, 1, "{:?}", s.samples);
    assert_eq!(s.samples[0].line, line, "{:?}", s.samples[0]);
    assert!(
        s.samples[0].reason.to_string().contains(why),
        "{:?}",
        s.samples[0]
    );
}

fn all_warnings(d: &RankData) -> String {
    d.report.all_warnings().join("\n")
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let ok = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .unwrap()
        .success();
    assert!(ok, "mkfifo {}", path.display());
}

#[cfg(unix)]
#[test]
fn fifos_devices_and_symlinks_to_them_are_skipped_not_opened() {
    let tmp = tempfile::tempdir().unwrap();
    let good = rank_dir(
        tmp.path(),
        "good",
        &[("memory_record.csv", &csv(RECORD_HEADER, &record_rows(5)))],
    );
    // Every data file name, as a FIFO: any open(2) of them would block forever.
    let fifo_rank = rank_dir(tmp.path(), "fifo", &[]);
    mkfifo(&fifo_rank.join("memory_record.csv"));
    let mixed = rank_dir(
        tmp.path(),
        "mixed",
        &[("memory_record.csv", &csv(RECORD_HEADER, &record_rows(3)))],
    );
    mkfifo(&mixed.join("npu_module_mem.csv"));
    mkfifo(&mixed.join("operator_memory.csv"));
    let db_fifo = rank_dir(tmp.path(), "dbfifo", &[]);
    mkfifo(&db_fifo.join("ascend_pytorch_profiler_0.db"));
    let prof = tmp.path().join("PROF_1_2_RANK0/mindstudio_profiler_output");
    std::fs::create_dir_all(&prof).unwrap();
    mkfifo(&prof.join("memory_record_slice_0_20240101000000.csv"));
    let zero = rank_dir(tmp.path(), "zero", &[]);
    std::os::unix::fs::symlink("/dev/zero", zero.join("memory_record.csv")).unwrap();
    std::os::unix::fs::symlink(
        "/dev/zero",
        zero.parent().unwrap().join("profiler_info.json"),
    )
    .unwrap();

    let l = load_untouched(tmp.path());
    let notes = l.notes.join("\n");
    for p in [
        fifo_rank.join("memory_record.csv"),
        mixed.join("npu_module_mem.csv"),
        mixed.join("operator_memory.csv"),
        db_fifo.join("ascend_pytorch_profiler_0.db"),
        prof.join("memory_record_slice_0_20240101000000.csv"),
    ] {
        assert!(
            notes.contains(&format!(
                "{}: not a regular file (it is a FIFO)",
                p.display()
            )),
            "{}: {notes}",
            p.display()
        );
    }
    assert!(notes.contains("it is a character device"), "{notes}");
    let loaded: Vec<&RankData> = l.ranks.iter().filter_map(|r| r.as_ref().ok()).collect();
    assert_eq!(loaded.len(), 2, "{notes}");
    let rows: Vec<usize> = loaded.iter().map(|d| d.records.len()).collect();
    assert!(rows.contains(&5) && rows.contains(&3), "{rows:?}");
    let _ = good;

    // A FIFO or device given as the path itself is refused at once.
    let e = discover(&fifo_rank.join("memory_record.csv")).unwrap_err();
    assert!(e.to_string().contains("FIFO"), "{e}");
    assert!(discover(Path::new("/dev/zero")).is_err());
}

#[test]
fn a_file_without_a_line_break_is_refused_after_a_bounded_read() {
    let tmp = tempfile::tempdir().unwrap();
    rank_dir(
        tmp.path(),
        "r",
        &[("memory_record.csv", &vec![b'x'; 8 << 20])],
    );
    let l = load_untouched(tmp.path());
    let e = l.ranks[0].as_ref().unwrap_err().to_string();
    assert!(e.contains("no header line in the first 1024 KB"), "{e}");
}

#[test]
fn a_line_longer_than_the_reader_holds_costs_only_that_line() {
    let mut rows = record_rows(4);
    rows.insert(2, format!("PTA+GE,{}", "9".repeat(40 << 20)));
    let (_tmp, d) = records_rank(&rows);
    assert_eq!(d.records.len(), 4);
    assert_one_skip(&d, 4, "longer than");
}

#[test]
fn pathological_numbers_parse_in_bounded_time() {
    // `0E2147483647` looped 2^31 times per cell: 2,000 such cells took hours.
    let tmp = tempfile::tempdir().unwrap();
    let mut rows: Vec<String> = (0..2000)
        .map(|i| {
            format!(
                "PTA+GE,{}.0,0E2147483647,0e-2147483648,0E99999999999999,55,NPU:0",
                1_700_000_000_000_000u64 + i
            )
        })
        .collect();
    rows.push("PTA+GE,1700000000003000.0,1E2147483647,1,1,55,NPU:0".into());
    rank_dir(
        tmp.path(),
        "r",
        &[("memory_record.csv", &csv(RECORD_HEADER, &rows))],
    );
    let d = only_rank(tmp.path());
    assert_eq!(d.records.len(), 2000);
    assert!(d.records.allocated.iter().all(|&a| a == 0));
    let s = &d.report.files[0].skipped;
    assert_eq!((s.count, s.samples[0].line), (1, 2002));
    assert!(
        s.samples[0].reason.to_string().contains("out of range"),
        "{:?}",
        s.samples[0]
    );
}

#[test]
fn cr_only_line_breaks_load_every_row() {
    let tmp = tempfile::tempdir().unwrap();
    let rows = record_rows(300);
    let cr: Vec<u8> = csv(RECORD_HEADER, &rows)
        .into_iter()
        .map(|b| if b == b'\n' { b'\r' } else { b })
        .collect();
    rank_dir(tmp.path(), "r", &[("memory_record.csv", &cr)]);
    let d = only_rank(tmp.path());
    assert_eq!(d.records.len(), 300);
    assert_eq!(d.report.skipped_rows(), 0);
    assert_eq!(
        d.records.time_ns[299],
        (1_700_000_000_000_000 + 299_000) * 1000 + 250
    );
}

#[test]
fn a_stray_quote_loses_one_row_and_says_which() {
    let mut rows = record_rows(300);
    rows[3] = rows[3].replacen("PTA+GE", "\"PTA+GE", 1);
    let (_tmp, d) = records_rank(&rows);
    assert_eq!(d.records.len(), 299);
    assert_one_skip(&d, 5, "double quote");
}

#[test]
fn rows_with_more_cells_than_the_header_are_rejected() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = record_rows(3);
    // An unquoted thousands separator: `1,234` shifted every later column (a false 234 MiB).
    rows.push("PTA+GE,1700000000009000.000\t,1,234,4096.0,1.0,55,NPU:0".into());
    // MindSpore-style trailing empty cells stay accepted.
    rows.push("PTA+GE,1700000000010000.000\t,7.0,4096.0,7.0,55,NPU:0,,".into());
    rank_dir(
        tmp.path(),
        "r",
        &[("memory_record.csv", &csv(RECORD_HEADER, &rows))],
    );
    let d = only_rank(tmp.path());
    assert_eq!(d.records.len(), 4);
    let s = &d.report.files[0].skipped;
    assert_eq!((s.count, s.samples[0].line), (1, 5));
    assert!(
        s.samples[0]
            .reason
            .to_string()
            .contains("8 fields, the header has 7"),
        "{:?}",
        s.samples[0]
    );
    assert!(d.records.allocated.iter().all(|&a| a != 234 << 20));
}

#[test]
fn outlier_timestamps_are_skipped_and_never_choose_the_origin() {
    let tmp = tempfile::tempdir().unwrap();
    let mut rows = record_rows(300);
    let bad = ["-5.5", "+5", " 12 ", "1e-300", "0"];
    for (k, t) in bad.iter().enumerate() {
        rows.insert(10 * k + 1, format!("PTA+GE,{t},1.0,2.0,1.0,55,NPU:0"));
    }
    let mut ops = vec![format!(
        "aten::mm,1024.0,1700000000000500.000\t,1700000000001500.000\t,1000.0,1,2,1,2,NPU:0"
    )];
    ops.push("aten::bad,1024.0,5,1700000000001500.000\t,1000.0,1,2,1,2,NPU:0".into());
    rank_dir(
        tmp.path(),
        "r",
        &[
            ("memory_record.csv", &csv(RECORD_HEADER, &rows)),
            ("operator_memory.csv", &csv(OPERATOR_HEADER, &ops)),
        ],
    );
    let d = only_rank(tmp.path());
    assert_eq!(d.records.len(), 300);
    assert_eq!(d.operators.len(), 1);
    // The origin is the earliest good time, computed from the text.
    let first = RawCsv::read(
        &tmp.path()
            .join("r_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv"),
    );
    assert_eq!(i128::from(d.time_origin_ns), us_to_ns(&first.rows[0][1]));
    let rec = &d.report.files[0].skipped;
    assert_eq!(rec.count, bad.len() as u64);
    let lines: Vec<u64> = rec.samples.iter().map(|s| s.line).collect();
    assert_eq!(lines, vec![3, 13, 23, 33, 43]);
    assert!(
        rec.samples[0].reason.to_string().contains("far outside"),
        "{:?}",
        rec.samples[0]
    );
    assert_eq!(d.report.files[1].skipped.count, 1);
}

#[test]
fn utf16_files_with_tabs_are_decoded() {
    let tmp = tempfile::tempdir().unwrap();
    let text = String::from_utf8(csv(RECORD_HEADER, &record_rows(50))).unwrap();
    let tabbed = text
        .replace("\t,", ",")
        .replace(',', "\t")
        .replace('\n', "\r\n");
    let mut utf16 = vec![0xFF, 0xFE];
    utf16.extend(tabbed.encode_utf16().flat_map(u16::to_le_bytes));
    rank_dir(tmp.path(), "r", &[("memory_record.csv", &utf16)]);
    let d = only_rank(tmp.path());
    assert_eq!(d.records.len(), 50);
    assert_eq!(d.records.allocated[49], 59 << 20);
    assert!(
        all_warnings(&d).contains("decoded from UTF-16LE"),
        "{}",
        all_warnings(&d)
    );
}

#[test]
fn semicolons_and_empty_headers_get_messages_that_say_what_is_wrong() {
    let tmp = tempfile::tempdir().unwrap();
    let semi = String::from_utf8(csv(RECORD_HEADER, &record_rows(3)))
        .unwrap()
        .replace(',', ";");
    rank_dir(
        tmp.path(),
        "semi",
        &[("memory_record.csv", semi.as_bytes())],
    );
    rank_dir(
        tmp.path(),
        "blank",
        &[("memory_record.csv", b",,,\n1,2,3,4\n")],
    );
    let l = load_untouched(tmp.path());
    let errors: Vec<String> = l
        .ranks
        .iter()
        .map(|r| {
            r.as_ref()
                .err()
                .map(ToString::to_string)
                .unwrap_or_default()
        })
        .collect();
    assert!(
        errors.iter().any(|e| e.contains("separated by ';'")),
        "{errors:?}"
    );
    assert!(
        errors.iter().any(|e| e.contains("no column names")),
        "{errors:?}"
    );
}

#[test]
fn gbk_names_are_decoded_and_said_once() {
    let tmp = tempfile::tempdir().unwrap();
    // "自定义算子" in GBK (Python's codec), as Chinese Excel writes it.
    let gbk: &[u8] = &[215, 212, 182, 168, 210, 229, 203, 227, 215, 211];
    let mut ops = csv(OPERATOR_HEADER, &[]);
    for k in 0..3 {
        ops.extend_from_slice(gbk);
        ops.extend_from_slice(format!(",1024.0,170000000000{k}500.000,,,1,2,,,NPU:0\n").as_bytes());
    }
    rank_dir(
        tmp.path(),
        "r",
        &[
            ("memory_record.csv", &csv(RECORD_HEADER, &record_rows(3))),
            ("operator_memory.csv", &ops),
        ],
    );
    let d = only_rank(tmp.path());
    assert_eq!(d.operators.len(), 3);
    assert_eq!(d.strings.get(d.operators.name[0]), "自定义算子");
    let w = all_warnings(&d);
    assert_eq!(w.matches("GB18030").count(), 1, "{w}");
}

/// The generated DB of the first DB-only rank.
fn generated_db() -> PathBuf {
    let src = db_fixtures().join("db_only");
    let rank = std::fs::read_dir(&src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    rank.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db")
}

/// A copy of the generated DB-only rank in a fresh folder; returns (folder, db path).
fn db_copy() -> (tempfile::TempDir, PathBuf) {
    db_copy_of(&generated_db())
}

/// A copy of the DB `db` as the only file of a rank folder; returns (folder, db path).
fn db_copy_of(db: &Path) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    let dst = out.join("ascend_pytorch_profiler_0.db");
    std::fs::copy(db, &dst).unwrap();
    (tmp, dst)
}

fn sql_count(db: &Path, table: &str) -> usize {
    // An independent read: a throwaway copy opened normally (SQLite replays a WAL there).
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path().join("x.db");
    std::fs::copy(db, &copy).unwrap();
    for s in ["-wal", "-journal"] {
        let side = PathBuf::from(format!("{}{s}", db.display()));
        if side.exists() {
            std::fs::copy(&side, format!("{}{s}", copy.display())).unwrap();
        }
    }
    let c = rusqlite::Connection::open(&copy).unwrap();
    c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| {
        r.get::<_, i64>(0)
    })
    .unwrap() as usize
}

#[test]
fn a_db_whose_header_says_wal_only_in_byte_19_is_not_written_beside() {
    let (tmp, db) = db_copy();
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("PRAGMA journal_mode=WAL;").unwrap();
    }
    let mut bytes = std::fs::read(&db).unwrap();
    assert_eq!((bytes[18], bytes[19]), (2, 2));
    bytes[18] = 1;
    std::fs::write(&db, &bytes).unwrap();
    let d = only_rank(tmp.path());
    assert_eq!(d.memory_record_rows, sql_count(&db, "MEMORY_RECORD"));
}

/// Opens `db` in `mode`, runs `change` in an open transaction (WAL: committed but not
/// checkpointed), and copies the DB and its sidecar files, as a crashed writer leaves them,
/// into a new folder. Returns (folder, copied db).
fn frozen_mid_write(
    base: &Path,
    mode: &str,
    change: &str,
    commit: bool,
) -> (tempfile::TempDir, PathBuf) {
    let (src_dir, db) = db_copy_of(base);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(&format!(
        "PRAGMA journal_mode={mode}; PRAGMA wal_autocheckpoint=0; PRAGMA cache_size=1;"
    ))
    .unwrap();
    c.execute_batch("BEGIN").unwrap();
    c.execute_batch(change).unwrap();
    if commit {
        c.execute_batch("COMMIT").unwrap();
    }
    let tmp = tempfile::tempdir().unwrap();
    let out = tmp.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    for e in std::fs::read_dir(db.parent().unwrap()).unwrap() {
        let p = e.unwrap().path();
        if !p.to_string_lossy().ends_with("-shm") {
            std::fs::copy(&p, out.join(p.file_name().unwrap())).unwrap();
        }
    }
    drop(c);
    drop(src_dir);
    (tmp, out.join("ascend_pytorch_profiler_0.db"))
}

#[test]
fn a_db_left_mid_write_with_a_hot_journal_reads_as_of_its_last_commit() {
    let before = sql_count(&db_copy().1, "MEMORY_RECORD");
    let (tmp, db) = frozen_mid_write(
        &generated_db(),
        "DELETE",
        "DELETE FROM MEMORY_RECORD; CREATE TABLE filler(x); \
         INSERT INTO filler SELECT randomblob(4000) FROM OP_MEMORY, (SELECT 1 UNION SELECT 2);",
        false,
    );
    assert!(PathBuf::from(format!("{}-journal", db.display())).exists());
    let d = only_rank(tmp.path());
    // The committed state, before the unfinished DELETE.
    assert_eq!(d.memory_record_rows, before);
}

#[test]
fn a_pending_wal_is_read_from_one_private_copy_made_at_discovery() {
    let (tmp, db) = frozen_mid_write(
        &generated_db(),
        "WAL",
        "INSERT INTO MEMORY_RECORD SELECT * FROM MEMORY_RECORD LIMIT 7",
        true,
    );
    let wal = PathBuf::from(format!("{}-wal", db.display()));
    assert!(std::fs::metadata(&wal).unwrap().len() > 0);
    let want = sql_count(&db, "MEMORY_RECORD");
    let before = common::list_files(tmp.path());
    let p = discover(tmp.path()).unwrap();
    // The load reads discovery's copy: removing the WAL now changes nothing it sees.
    std::fs::remove_file(&wal).unwrap();
    let d = load_rank(&p.ranks[0], &LoadControl::new()).unwrap();
    assert_eq!(d.memory_record_rows, want);
    // Everything but the WAL (and its folder's time, changed by the removal) is as it was.
    let dir = wal.parent().unwrap().to_path_buf();
    let keep = |v: Vec<(PathBuf, u64, SystemTime)>| -> Vec<_> {
        v.into_iter().filter(|e| e.0 != wal && e.0 != dir).collect()
    };
    assert_eq!(keep(before), keep(common::list_files(tmp.path())));
}

#[test]
fn a_db_table_missing_a_column_degrades_that_table_only() {
    let (tmp, db) = db_copy();
    let ops = sql_count(&db, "OP_MEMORY");
    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch("ALTER TABLE OP_MEMORY DROP COLUMN activeReleaseTime")
            .unwrap();
    }
    let d = only_rank(tmp.path());
    assert_eq!(d.operators.len(), ops);
    assert!(d.operators.active_release_time.iter().all(|t| t == NULL));
    let w = all_warnings(&d);
    assert!(
        w.contains("OP_MEMORY has no column activeReleaseTime"),
        "{w}"
    );

    {
        let c = rusqlite::Connection::open(&db).unwrap();
        c.execute_batch(
            "ALTER TABLE OP_MEMORY RENAME COLUMN size TO sz; \
             ALTER TABLE NPU_MODULE_MEM RENAME COLUMN totalReserved TO tr; \
             ALTER TABLE STRING_IDS RENAME COLUMN value TO v;",
        )
        .unwrap();
    }
    let d = only_rank(tmp.path());
    assert_eq!(d.memory_record_rows, sql_count(&db, "MEMORY_RECORD"));
    assert!(d.operators.is_empty() && d.modules.is_empty());
    let w = all_warnings(&d);
    for needle in [
        "OP_MEMORY has no column size",
        "NPU_MODULE_MEM has no column totalReserved",
        "STRING_IDS has no id/value columns",
    ] {
        assert!(w.contains(needle), "{needle}: {w}");
    }
}

#[test]
fn a_broken_db_beside_csvs_says_only_that_the_csvs_are_used() {
    let tmp = tempfile::tempdir().unwrap();
    let rank = std::fs::read_dir(fixtures().join("torch_cluster"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .min()
        .unwrap();
    let out = tmp.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    std::fs::create_dir_all(&out).unwrap();
    for f in ["memory_record.csv", "operator_memory.csv"] {
        std::fs::copy(rank.join("ASCEND_PROFILER_OUTPUT").join(f), out.join(f)).unwrap();
    }
    std::fs::write(
        out.join("ascend_pytorch_profiler_0.db"),
        b"not sqlite at all",
    )
    .unwrap();
    let d = only_rank(tmp.path());
    let w = all_warnings(&d);
    assert!(w.contains("using the CSV files"), "{w}");
    assert!(!w.contains("using the DB"), "{w}");
}

#[test]
fn every_fixture_loads_without_touching_its_folder() {
    for set in [
        "demo",
        "malformed",
        "mindspore",
        "msprof",
        "msprof_plain",
        "torch_cluster",
        "torch_crlf",
    ] {
        let tmp = tempfile::tempdir().unwrap();
        copy_dir(&fixtures().join(set), tmp.path());
        let l = load_untouched(tmp.path());
        assert!(l.ranks.iter().any(Result::is_ok), "{set}: {:?}", l.notes);
    }
    for set in ["db", "db_only"] {
        let tmp = tempfile::tempdir().unwrap();
        copy_dir(&db_fixtures().join(set), tmp.path());
        let l = load_untouched(tmp.path());
        assert!(l.ranks.iter().all(Result::is_ok), "{set}: {:?}", l.notes);
    }
}

#[test]
fn times_far_from_the_origin_saturate_instead_of_wrapping() {
    use memsight::analysis::table::Column;
    let tmp = tempfile::tempdir().unwrap();
    let ops = csv(
        OPERATOR_HEADER,
        &["aten::mm,1024.0,1700000000000500.000,,,1,2,,,NPU:0".to_string()],
    );
    rank_dir(
        tmp.path(),
        "r",
        &[
            ("memory_record.csv", &csv(RECORD_HEADER, &record_rows(3))),
            ("operator_memory.csv", &ops),
        ],
    );
    let mut d = only_rank(tmp.path());
    // Values no loader produces any more, as a caller could still build them: the difference
    // does not fit an i64 and used to wrap to a small positive time.
    d.operators.alloc_time[0] = i64::MIN + 1;
    d.time_origin_ns = i64::MAX - 5;
    let text = memsight::export::cell_text(&d, 0, Column::AllocationTime);
    assert_eq!(text, "-9223372036854.775808");
    let shown = Column::AllocationTime.display_value(&d, 0).unwrap();
    assert!(shown < -9.2e12, "{shown}");
}

#[test]
fn the_real_db_exports_in_every_journal_state_load_without_a_write() {
    let Some(root) = common::samples() else {
        return;
    };
    let dbs: Vec<PathBuf> = ["level0", "level1", "level2"]
        .iter()
        .map(|l| {
            root.join(format!(
                "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/db/{l}/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db"
            ))
        })
        .collect();
    for base in &dbs {
        let want = sql_count(base, "MEMORY_RECORD");
        // As exported (level1's header says WAL).
        let (tmp, _) = db_copy_of(base);
        assert_eq!(
            only_rank(tmp.path()).memory_record_rows,
            want,
            "{}",
            base.display()
        );
        // Header byte 19 = 2 alone.
        let (tmp, db) = db_copy_of(base);
        let mut bytes = std::fs::read(&db).unwrap();
        (bytes[18], bytes[19]) = (1, 2);
        std::fs::write(&db, &bytes).unwrap();
        assert_eq!(
            only_rank(tmp.path()).memory_record_rows,
            want,
            "{}",
            base.display()
        );
        // Left mid-write with a hot journal: read as of the last commit.
        let (tmp, _) = frozen_mid_write(
            base,
            "DELETE",
            "DELETE FROM MEMORY_RECORD; CREATE TABLE filler(x); \
             INSERT INTO filler SELECT randomblob(4000) FROM OP_MEMORY;",
            false,
        );
        assert_eq!(
            only_rank(tmp.path()).memory_record_rows,
            want,
            "{}",
            base.display()
        );
        // A committed but not checkpointed WAL: its rows are read.
        let (tmp, db) = frozen_mid_write(
            base,
            "WAL",
            "INSERT INTO MEMORY_RECORD SELECT * FROM MEMORY_RECORD LIMIT 3",
            true,
        );
        assert_eq!(
            only_rank(tmp.path()).memory_record_rows,
            sql_count(&db, "MEMORY_RECORD"),
            "{}",
            base.display()
        );
    }
}

/// A trace_view.json or kernel_details.csv that is broken, hostile or a FIFO costs the rank
/// nothing but its steps: it loads, nothing is invented, nothing is written, nothing blocks.
#[test]
fn a_broken_trace_view_or_kernel_details_leaves_the_rank_without_steps() {
    let rec = csv(RECORD_HEADER, &record_rows(20));
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("trace_view.json", b"not json at all".to_vec()),
        ("trace_view.json", b"[{\"ph\":\"X\",\"name\":\"ProfilerStep#1\",\"ts\":\"1\"".to_vec()),
        (
            "trace_view.json",
            br#"[{"ph":"X","name":"ProfilerStep#1","ts":"abc","dur":5},{"ph":"X","name":"ProfilerStep#2","ts":"1e400","dur":5},{"ph":"X","name":"ProfilerStep#3","ts":"1","dur":-5}]"#.to_vec(),
        ),
        // Deep nesting and a huge string: skipped at scanner speed, no recursion.
        ("trace_view.json", {
            let mut v = b"[".to_vec();
            v.extend(std::iter::repeat_n(b'{', 100_000));
            v.extend(std::iter::repeat_n(b'}', 100_000));
            v.extend(b",\"".iter());
            v.extend(std::iter::repeat_n(b'x', 1 << 20));
            v.extend(b"\"]".iter());
            v
        }),
        ("kernel_details.csv", b"Step Id,Name,Start Time(us),Duration(us)\nx,y,z,w\n,,,\n".to_vec()),
        ("kernel_details.csv", b"\xff\xfe\x00garbage".to_vec()),
    ];
    for (name, bytes) in cases {
        let tmp = tempfile::tempdir().unwrap();
        rank_dir(
            tmp.path(),
            "r",
            &[("memory_record.csv", &rec), (name, &bytes)],
        );
        let data = only_rank(tmp.path());
        assert!(data.steps.is_none(), "{name}: {:?}", data.steps);
        assert_eq!(data.records.len(), 20);
    }
    // A FIFO named trace_view.json is never opened (the load would block forever).
    #[cfg(unix)]
    {
        let tmp = tempfile::tempdir().unwrap();
        let out = rank_dir(tmp.path(), "r", &[("memory_record.csv", &rec)]);
        mkfifo(&out.join("trace_view.json"));
        let data = only_rank(tmp.path());
        assert!(data.steps.is_none());
    }
}

/// A trace_view.json copied while it was written stops inside an event: the steps before the
/// cut are kept, and a note says the trace was cut short, once.
#[test]
fn a_trace_view_cut_short_keeps_the_steps_before_the_cut_and_says_so() {
    let rec = csv(RECORD_HEADER, &record_rows(20));
    let trace =
        br#"[{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":"1700000000000000","dur":5},
{"ph":"X","name":"ProfilerStep#2","pid":1,"tid":1,"ts":"1700000000000010","dur":5},
{"ph":"X","name":"ProfilerStep#3","pid":1,"tid":1,"ts":"17000"#;
    let whole =
        br#"[{"ph":"X","name":"ProfilerStep#1","pid":1,"tid":1,"ts":"1700000000000000","dur":5}]"#;
    for (bytes, cut) in [(&trace[..], true), (&whole[..], false)] {
        let tmp = tempfile::tempdir().unwrap();
        rank_dir(
            tmp.path(),
            "r",
            &[("memory_record.csv", &rec), ("trace_view.json", bytes)],
        );
        let data = only_rank(tmp.path());
        let ids: Vec<i64> = data
            .steps
            .as_ref()
            .map_or(Vec::new(), |s| s.steps.iter().map(|s| s.id).collect());
        assert_eq!(ids, if cut { vec![1, 2] } else { vec![1] });
        let said = data
            .report
            .warnings
            .iter()
            .filter(|w| w.to_string().contains("the trace stops before its end"))
            .count();
        assert_eq!(said, usize::from(cut));
        assert_eq!(data.records.len(), 20);
    }
}

/// kernel_details.csv places steps when nothing else does: each step spans its kernels.
#[test]
fn kernel_details_step_ids_place_the_steps() {
    let rec = csv(RECORD_HEADER, &record_rows(20));
    let t0 = 1_700_000_000_000_000u64;
    // Step 7: kernels at +1000 (5 µs) and +4000 (10.5 µs); step 8: +6000 (1 µs); a warmup kernel
    // without a step id.
    let kernels = format!(
        "Step Id,Device_id,Name,Type,Start Time(us),Duration(us)\n\
         7,0,MatMul,MatMul,\"{}.000\t\",5.0\n\
         7,0,Add,Add,\"{}.000\t\",10.5\n\
         8,0,Add,Add,\"{}.250\t\",1\n\
         ,0,Cast,Cast,\"{}.000\t\",1\n",
        t0 + 1000,
        t0 + 4000,
        t0 + 6000,
        t0 + 9000
    );
    let tmp = tempfile::tempdir().unwrap();
    rank_dir(
        tmp.path(),
        "r",
        &[
            ("memory_record.csv", &rec),
            ("kernel_details.csv", kernels.as_bytes()),
        ],
    );
    let data = only_rank(tmp.path());
    let steps = data.steps.expect("steps from kernel_details");
    assert_eq!(steps.source, memsight::model::StepSource::KernelDetails);
    let t0 = t0 as i64 * 1000;
    let want = [
        (7, t0 + 1_000_000, t0 + 4_000_000 + 10_500),
        (8, t0 + 6_000_250, t0 + 6_000_250 + 1_000),
    ];
    let got: Vec<(i64, i64, i64)> = steps
        .steps
        .iter()
        .map(|s| (s.id, s.start_ns, s.end_ns))
        .collect();
    assert_eq!(got, want);
}

/// A `trace_view.json` that is not a trace is read once per rank and said once: the steps and
/// the call stacks both want it, and once each stage read it on its own (two notes).
#[test]
fn a_broken_trace_view_is_read_and_reported_once() {
    let tmp = tempfile::tempdir().unwrap();
    let ops: Vec<String> = (0..5)
        .map(|i| {
            format!(
                "aten::add,{}.0,{}.000,{}.000,1.0,1,1,1,1,NPU:0",
                4 + i,
                100 + i,
                101 + i
            )
        })
        .collect();
    rank_dir(
        tmp.path(),
        "n0_1",
        &[
            ("memory_record.csv", &csv(RECORD_HEADER, &record_rows(10))),
            ("operator_memory.csv", &csv(OPERATOR_HEADER, &ops)),
            ("trace_view.json", b"this is not a trace"),
        ],
    );
    let d = only_rank(tmp.path());
    assert_eq!(d.operators.len(), 5, "{}", all_warnings(&d));
    let notes = d
        .report
        .all_warnings()
        .into_iter()
        .filter(|w| w.contains("trace_view.json"))
        .collect::<Vec<_>>();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(notes[0].contains("not a Chrome trace"), "{notes:?}");
    assert!(d.steps.is_none() && d.stacks.is_none());
}
