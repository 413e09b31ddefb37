//! The msprof unified DB (`msprof_*.db`: NPU_OP_MEM events, no MEMORY_RECORD) against plain SQL
//! over the sample: the curve's peak from the totals, the details rows from allocate/release
//! events paired on their address in time order.

use crate::common;

use std::collections::HashMap;
use std::path::PathBuf;

use common::memsight;

fn sample() -> Option<PathBuf> {
    let p = common::samples()?.join(
        "xiaobingling93-pixel_Ascend-msinsight/server/src/test/test_data/full_db/msprof_0.db",
    );
    p.is_file().then_some(p)
}

/// One details row: (name, size bytes, alloc ns or None, release ns or None).
type Row = (String, i64, Option<i64>, Option<i64>);

/// The rows the way the table lists them (allocations in time order, a release without an
/// allocation as its own row), and the peak of totalAllocate with its time.
fn raw_rows(db: &std::path::Path) -> (Vec<Row>, (i64, i64)) {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let mut st = conn
        .prepare(
            "SELECT s.value, o.addr, e.name, o.size, o.timestampNs, o.totalAllocate \
             FROM NPU_OP_MEM o JOIN ENUM_MEMORY e ON e.id = o.type \
             LEFT JOIN STRING_IDS s ON s.id = o.operatorName \
             WHERE e.name IN ('allocate', 'release') ORDER BY o.timestampNs, o.rowid",
        )
        .unwrap();
    let mut rows: Vec<Row> = Vec::new();
    let mut open: HashMap<i64, usize> = HashMap::new();
    let mut peak = (i64::MIN, 0i64);
    let it = st
        .query_map([], |r| {
            Ok((
                r.get::<_, Option<String>>(0)?.unwrap_or_default(),
                r.get::<_, i64>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
                r.get::<_, i64>(4)?,
                r.get::<_, f64>(5)? as i64,
            ))
        })
        .unwrap();
    for x in it {
        let (name, addr, kind, size, t, total) = x.unwrap();
        if total > peak.0 {
            peak = (total, t);
        }
        if kind == "allocate" {
            open.insert(addr, rows.len());
            rows.push((name, size, Some(t), None));
        } else if let Some(i) = open.remove(&addr) {
            rows[i].3 = Some(t);
        } else {
            rows.push((name, -size, None, Some(t)));
        }
    }
    (rows, peak)
}

#[test]
fn the_msprof_unified_db_opens_as_a_file_and_as_its_folder() {
    let Some(db) = sample() else { return };
    check_against_sql(&db);
}

/// A generated msprof profile with the unified DB (block addresses reused once freed) and the
/// CSV files beside it: the DB against SQL, and the two sources against each other.
#[test]
fn a_generated_msprof_db_reads_like_sql_and_like_its_csv_files() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        format: memsight::model::Format::Msprof,
        db: memsight::generate::DbMode::Both,
        allocs: 600,
        seed: 11,
        ..Default::default()
    };
    let dirs = memsight::generate::generate(tmp.path(), &opts).unwrap();
    let db = dirs[0].join("msprof_0.db");
    check_against_sql(&db);
    // Addresses are reused: pairing on the address alone, without time order, would fail.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let reused: i64 = conn
        .query_row(
            "SELECT count(*) FROM (SELECT addr FROM NPU_OP_MEM WHERE type = 5 \
             GROUP BY addr HAVING count(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert!(reused > 10, "{reused}");
    // The folder holds both: the DB by default, the CSV files on request, the same blocks.
    let folder = tmp.path().to_str().unwrap();
    let read = |source: &str| {
        let (code, out, err) = memsight(&["table", folder, "--all", "--source", source]);
        assert_eq!(code, 0, "{err}");
        let mut rows: Vec<String> = out
            .lines()
            .skip(1)
            .map(|l| l.split('\t').take(2).collect::<Vec<_>>().join("\t"))
            .collect();
        rows.sort();
        rows
    };
    assert_eq!(read("db"), read("csv"));
    let (_, out, _) = memsight(&["inspect", folder, "--json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ranks"].as_array().unwrap().len(), 1, "one rank, not two");
    assert_eq!(v["ranks"][0]["source"], "db");
}

fn check_against_sql(db: &std::path::Path) {
    let db = db.to_path_buf();
    let (rows, (peak, _)) = raw_rows(&db);
    for path in [db.clone(), db.parent().unwrap().to_path_buf()] {
        let (code, out, err) = memsight(&["inspect", path.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let r = &v["ranks"][0];
        assert_eq!(r["format"], "msprof");
        assert_eq!(r["source"], "db");
        assert_eq!(r["counts"]["operator_memory"], rows.len());
        let unreleased = rows
            .iter()
            .filter(|r| r.2.is_some() && r.3.is_none())
            .count();
        assert_eq!(r["unreleased"], unreleased);
        let mib = r["peaks"]["operator_allocated"]["mib"].as_f64().unwrap();
        assert!((mib - peak as f64 / 1048576.0).abs() < 1e-9, "{mib}");
    }
    // The details table: every row, its name and size, in file (time) order.
    let (code, out, err) = memsight(&["table", db.to_str().unwrap(), "--all"]);
    assert_eq!(code, 0, "{err}");
    let got: Vec<(String, f64)> = out
        .lines()
        .skip(1)
        .map(|l| {
            let c: Vec<&str> = l.split('\t').collect();
            (c[0].to_string(), c[1].parse().unwrap())
        })
        .collect();
    let want: Vec<(String, f64)> = rows
        .iter()
        .map(|r| {
            let name = if r.0.is_empty() {
                "Unknown".to_string()
            } else {
                r.0.clone()
            };
            (name, r.1 as f64 / 1024.0)
        })
        .collect();
    assert_eq!(got, want);
}
