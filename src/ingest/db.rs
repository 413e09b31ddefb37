//! The SQLite export (`ascend_pytorch_profiler*.db`, `ascend_mindspore_profiler*.db`), opened
//! read-only: MEMORY_RECORD, OP_MEMORY, NPU_MEM (APP samples), NPU_MODULE_MEM + ENUM_MODULE,
//! STRING_IDS, HOST_INFO, RANK_DEVICE_MAP. Times are ns and sizes bytes already.

use std::path::Path;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::report::{FileReport, SkippedRows};
use crate::model::{Component, Interner, MemoryRecords, ModuleMemory, NULL, OperatorMemory};

/// What discovery needs from a DB.
#[derive(Debug, Clone, Default)]
pub struct DbMeta {
    /// (rank id, device id) pairs from RANK_DEVICE_MAP, rank -1 dropped when others exist.
    pub rank_devices: Vec<(Option<i64>, Option<i64>)>,
    /// Host name from HOST_INFO.
    pub host: Option<String>,
    /// The first MEMORY_RECORD device, when RANK_DEVICE_MAP is absent.
    pub first_device: Option<i64>,
}

/// A DB problem, as one readable line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DbError(pub String);

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError(format!("SQLite: {e}"))
    }
}

/// A read-only connection, with the private copy it reads from when one was needed.
pub struct ReadOnlyDb {
    conn: Connection,
    _copy: Option<tempfile::TempDir>,
}

impl std::ops::Deref for ReadOnlyDb {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

/// True when the file's header says WAL journal mode (bytes 18 and 19 are 2).
fn is_wal_mode(path: &Path) -> bool {
    use std::io::Read as _;
    let mut head = [0u8; 20];
    std::fs::File::open(path)
        .and_then(|mut f| f.read_exact(&mut head))
        .is_ok()
        && head[18] == 2
        && head[19] == 2
}

/// `path` as an SQLite URI with `immutable=1`.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | b' ' => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(b)),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// Opens a DB strictly read-only: the profiling folder is never written to. SQLite creates
/// `-shm`/`-wal` files beside a WAL-mode DB even when opened read-only, so such a DB is opened
/// `immutable` when it has no pending WAL, and otherwise read from a private temporary copy.
pub fn open_read_only(path: &Path) -> Result<ReadOnlyDb, DbError> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
    let mut copy = None;
    let conn = if is_wal_mode(path) {
        let wal = path.with_file_name(format!(
            "{}-wal",
            path.file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default()
        ));
        let pending = std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0);
        if pending {
            let dir = tempfile::tempdir()
                .map_err(|e| DbError(format!("cannot make a temporary copy: {e}")))?;
            let db_copy = dir.path().join("copy.db");
            std::fs::copy(path, &db_copy)
                .and_then(|_| std::fs::copy(&wal, dir.path().join("copy.db-wal")))
                .map_err(|e| DbError(format!("cannot make a temporary copy: {e}")))?;
            let c = Connection::open_with_flags(&db_copy, flags)?;
            copy = Some(dir);
            c
        } else {
            Connection::open_with_flags(immutable_uri(path), flags | OpenFlags::SQLITE_OPEN_URI)?
        }
    } else {
        Connection::open_with_flags(path, flags)?
    };
    // Fail early on a file that is not SQLite.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| DbError(format!("not a readable SQLite database: {e}")))?;
    Ok(ReadOnlyDb { conn, _copy: copy })
}

fn has_table(conn: &Connection, name: &str) -> bool {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
        [name],
        |_| Ok(()),
    )
    .is_ok()
}

/// A cell as i64 whatever SQLite stored (NUMERIC columns may hold REAL or TEXT).
fn int(v: ValueRef<'_>) -> Result<i64, String> {
    match v {
        ValueRef::Null => Ok(NULL),
        ValueRef::Integer(i) if i == NULL => Err("value out of range".into()),
        ValueRef::Integer(i) => Ok(i),
        ValueRef::Real(f) if f.is_finite() && f.abs() < 9.2e18 => Ok(f.round() as i64),
        ValueRef::Real(f) => Err(format!("not a finite number: {f}")),
        ValueRef::Text(t) => super::value::parse_scaled(t, 1)
            .map(|o| o.map_or(NULL, |s| s.value))
            .map_err(|e| e.to_string()),
        ValueRef::Blob(_) => Err("blob where a number belongs".into()),
    }
}

/// A time column: 0 means unset in these exports.
fn time(v: ValueRef<'_>) -> Result<i64, String> {
    int(v).map(|t| if t == 0 { NULL } else { t })
}

fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

/// Reads rank/device/host facts (small tables only).
pub fn read_meta(path: &Path) -> Result<DbMeta, DbError> {
    let conn = open_read_only(path)?;
    if !has_table(&conn, "MEMORY_RECORD") {
        return Err(DbError(
            "the DB has no MEMORY_RECORD table (export with profile_memory=True)".into(),
        ));
    }
    let mut meta = DbMeta::default();
    if has_table(&conn, "RANK_DEVICE_MAP") {
        let mut st = conn.prepare("SELECT rankId, deviceId FROM RANK_DEVICE_MAP")?;
        let rows = st.query_map([], |r| {
            Ok((int(r.get_ref(0)?).ok(), int(r.get_ref(1)?).ok()))
        })?;
        let mut pairs: Vec<(Option<i64>, Option<i64>)> = rows
            .filter_map(Result::ok)
            .map(|(r, d)| (r.filter(|&x| x != NULL), d.filter(|&x| x != NULL)))
            .collect();
        pairs.dedup();
        if pairs.iter().any(|p| p.0.is_some_and(|r| r >= 0)) {
            pairs.retain(|p| p.0.is_some_and(|r| r >= 0));
        }
        for p in &mut pairs {
            if p.0 == Some(-1) {
                p.0 = None;
            }
        }
        meta.rank_devices = pairs;
    }
    if has_table(&conn, "HOST_INFO") {
        meta.host = conn
            .query_row("SELECT hostName FROM HOST_INFO LIMIT 1", [], |r| {
                Ok(text(r.get_ref(0)?))
            })
            .ok()
            .filter(|h| !h.trim().is_empty());
    }
    meta.first_device = conn
        .query_row("SELECT deviceId FROM MEMORY_RECORD LIMIT 1", [], |r| {
            Ok(int(r.get_ref(0)?).ok())
        })
        .ok()
        .flatten()
        .filter(|&d| d != NULL);
    Ok(meta)
}

/// Everything loaded from one DB.
#[derive(Debug, Default)]
pub struct DbTables {
    /// MEMORY_RECORD rows plus NPU_MEM APP samples (unsorted).
    pub records: MemoryRecords,
    /// Rows that came from MEMORY_RECORD itself.
    pub memory_record_rows: usize,
    /// OP_MEMORY.
    pub operators: OperatorMemory,
    /// NPU_MODULE_MEM with module names.
    pub modules: ModuleMemory,
    /// One report per table read.
    pub reports: Vec<FileReport>,
    /// Notes (missing optional tables).
    pub warnings: Vec<String>,
}

fn device_clause(device: Option<i64>, col: &str) -> String {
    device.map_or(String::new(), |d| format!(" WHERE {col} = {d}"))
}

/// Loads the memory tables of `path`, keeping only `device`'s rows when given.
pub fn load(path: &Path, device: Option<i64>, strings: &mut Interner) -> Result<DbTables, DbError> {
    let conn = open_read_only(path)?;
    if !has_table(&conn, "MEMORY_RECORD") {
        return Err(DbError("the DB has no MEMORY_RECORD table".into()));
    }
    let ids = has_table(&conn, "STRING_IDS");
    let name_join = |col: &str| {
        if ids {
            format!("(SELECT value FROM STRING_IDS WHERE id = {col})")
        } else {
            col.to_string()
        }
    };
    let mut out = DbTables::default();
    let label = |table: &str| path.join(table); // "file.db/TABLE" reads well in reports

    // MEMORY_RECORD
    let sql = format!(
        "SELECT {}, timestamp, totalAllocated, totalReserved, totalActive, streamPtr FROM MEMORY_RECORD{}",
        name_join("component"),
        device_clause(device, "deviceId")
    );
    let mut skipped = SkippedRows::default();
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut n: u64 = 0;
    while let Some(r) = rows.next()? {
        n += 1;
        let parsed = (|| -> Result<_, String> {
            let comp = text(r.get_ref(0).map_err(|e| e.to_string())?);
            let t = time(r.get_ref(1).map_err(|e| e.to_string())?)?;
            if t == NULL {
                return Err("timestamp missing".into());
            }
            let a = int(r.get_ref(2).map_err(|e| e.to_string())?)?;
            let rs = int(r.get_ref(3).map_err(|e| e.to_string())?)?;
            let ac = int(r.get_ref(4).map_err(|e| e.to_string())?)?;
            let sp = text(r.get_ref(5).map_err(|e| e.to_string())?);
            Ok((comp, t, a, rs, ac, sp))
        })();
        match parsed {
            Ok((comp, t, a, rs, ac, sp)) => {
                let stream = if sp.is_empty() {
                    0
                } else {
                    strings.intern(&sp)
                };
                let c = Component::parse(comp.as_bytes());
                // GE rows store 0 where the CSV export leaves Total Active empty.
                let ac = if c == Component::Ge && ac == 0 {
                    NULL
                } else {
                    ac
                };
                out.records.push(c, t, a, rs, ac, stream);
            }
            Err(reason) => skipped.add(n, reason, || format!("MEMORY_RECORD row {n}")),
        }
    }
    out.memory_record_rows = out.records.len();
    out.reports.push(FileReport {
        path: label("MEMORY_RECORD"),
        rows: out.memory_record_rows as u64,
        skipped,
    });

    // NPU_MEM app samples: APP Reserved = hbm + ddr.
    if has_table(&conn, "NPU_MEM") && ids {
        let sql = format!(
            "SELECT hbm, ddr, timestampNs FROM NPU_MEM WHERE type IN (SELECT id FROM STRING_IDS WHERE lower(value) = 'app'){}",
            device.map_or(String::new(), |d| format!(" AND deviceId = {d}"))
        );
        let mut st = conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        let mut skipped = SkippedRows::default();
        let mut k = 0u64;
        while let Some(r) = rows.next()? {
            k += 1;
            let hbm = int(r.get_ref(0)?).unwrap_or(NULL);
            let ddr = int(r.get_ref(1)?).unwrap_or(NULL);
            let t = time(r.get_ref(2)?).unwrap_or(NULL);
            if t == NULL || (hbm == NULL && ddr == NULL) {
                skipped.add(k, "timestamp or hbm/ddr missing", || {
                    format!("NPU_MEM row {k}")
                });
                continue;
            }
            let total = hbm.max(0).saturating_add(ddr.max(0));
            out.records.push(Component::App, t, NULL, total, NULL, 0);
        }
        out.reports.push(FileReport {
            path: label("NPU_MEM"),
            rows: k - skipped.count,
            skipped,
        });
    } else {
        out.warnings.push(format!(
            "{}: no NPU_MEM table: no APP Reserved curve",
            path.display()
        ));
    }

    // OP_MEMORY
    if has_table(&conn, "OP_MEMORY") {
        let sql = format!(
            "SELECT {}, size, allocationTime, releaseTime, activeReleaseTime, duration, activeDuration, \
             allocationTotalAllocated, allocationTotalReserved, allocationTotalActive, \
             releaseTotalAllocated, releaseTotalReserved, releaseTotalActive, streamPtr FROM OP_MEMORY{}",
            name_join("name"),
            device_clause(device, "deviceId")
        );
        let mut st = conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        let mut skipped = SkippedRows::default();
        let mut k = 0u64;
        while let Some(r) = rows.next()? {
            k += 1;
            let parsed = (|| -> Result<_, String> {
                let g = |i: usize| r.get_ref(i).map_err(|e| e.to_string());
                let name = text(g(0)?);
                let size = int(g(1)?)?;
                if size == NULL {
                    return Err("size missing".into());
                }
                let mut v = [NULL; 11];
                for (j, slot) in v.iter_mut().enumerate() {
                    let raw = g(2 + j)?;
                    *slot = if j < 3 { time(raw)? } else { int(raw)? };
                }
                Ok((name, size, v, text(g(13)?)))
            })();
            match parsed {
                Ok((name, size, v, sp)) => {
                    let o = &mut out.operators;
                    o.name.push(strings.intern(&name));
                    o.size.push(size);
                    o.alloc_time.push(v[0]);
                    o.release_time.push(v[1]);
                    o.active_release_time.push(v[2]);
                    o.duration.push(v[3]);
                    o.active_duration.push(v[4]);
                    o.alloc_total_allocated.push(v[5]);
                    o.alloc_total_reserved.push(v[6]);
                    o.alloc_total_active.push(v[7]);
                    o.release_total_allocated.push(v[8]);
                    o.release_total_reserved.push(v[9]);
                    o.release_total_active.push(v[10]);
                    o.stream.push(if sp.is_empty() {
                        0
                    } else {
                        strings.intern(&sp)
                    });
                }
                Err(reason) => skipped.add(k, reason, || format!("OP_MEMORY row {k}")),
            }
        }
        out.reports.push(FileReport {
            path: label("OP_MEMORY"),
            rows: out.operators.len() as u64,
            skipped,
        });
    } else {
        out.warnings.push(format!(
            "{}: no OP_MEMORY table: the details table is empty",
            path.display()
        ));
    }

    // NPU_MODULE_MEM + ENUM_MODULE
    if has_table(&conn, "NPU_MODULE_MEM") {
        let name = if has_table(&conn, "ENUM_MODULE") {
            "COALESCE((SELECT name FROM ENUM_MODULE WHERE id = moduleId), moduleId)"
        } else {
            "moduleId"
        };
        let sql = format!(
            "SELECT {name}, timestampNs, totalReserved FROM NPU_MODULE_MEM{}",
            device_clause(device, "deviceId")
        );
        let mut st = conn.prepare(&sql)?;
        let mut rows = st.query([])?;
        let mut skipped = SkippedRows::default();
        let mut k = 0u64;
        while let Some(r) = rows.next()? {
            k += 1;
            let comp = text(r.get_ref(0)?);
            let t = time(r.get_ref(1)?).unwrap_or(NULL);
            let Ok(resv) = int(r.get_ref(2)?) else {
                skipped.add(k, "totalReserved not a number", || {
                    format!("NPU_MODULE_MEM row {k}")
                });
                continue;
            };
            if t == NULL || comp.is_empty() {
                skipped.add(k, "timestamp or module missing", || {
                    format!("NPU_MODULE_MEM row {k}")
                });
                continue;
            }
            out.modules.component.push(strings.intern(&comp));
            out.modules.time_ns.push(t);
            out.modules.reserved.push(resv);
        }
        out.reports.push(FileReport {
            path: label("NPU_MODULE_MEM"),
            rows: out.modules.len() as u64,
            skipped,
        });
    }
    Ok(out)
}
