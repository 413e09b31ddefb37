//! The SQLite export (`ascend_pytorch_profiler*.db`, `ascend_mindspore_profiler*.db`), opened
//! read-only: MEMORY_RECORD, OP_MEMORY, NPU_MEM (APP samples), NPU_MODULE_MEM + ENUM_MODULE,
//! STRING_IDS, HOST_INFO, RANK_DEVICE_MAP. Times are ns and sizes bytes already.

use crate::model::{Cause, CauseKind, Message, SkipReason};
use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

use super::time_window::{self, TimeWindow};
use crate::model::report::{FileReport, SkippedRows};
use crate::model::{
    Component, DbSnapshot, DeviceMemory, Interner, MemoryRecords, ModuleMemory, NULL,
    OP_I64_COLUMNS, OperatorMemory, Step,
};

/// What discovery needs from a DB.
#[derive(Debug, Clone, Default)]
pub struct DbMeta {
    /// (rank id, device id) pairs from RANK_DEVICE_MAP, rank -1 dropped when others exist.
    pub rank_devices: Vec<(Option<i64>, Option<i64>)>,
    /// Host name from HOST_INFO.
    pub host: Option<String>,
    /// The first MEMORY_RECORD device, when RANK_DEVICE_MAP is absent.
    pub first_device: Option<i64>,
    /// The private snapshot the DB is read from, when it has a pending WAL or hot journal.
    pub snapshot: Option<DbSnapshot>,
}

/// A DB problem, as one readable line.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct DbError(pub Cause);

impl DbError {
    /// A problem said in memsight's words (a missing table or column).
    fn said(en: impl Into<String>) -> DbError {
        DbError(Cause::said(en))
    }
}

impl From<rusqlite::Error> for DbError {
    fn from(e: rusqlite::Error) -> Self {
        DbError(Cause {
            en: format!("SQLite: {e}"),
            path: None,
            kind: sqlite_kind(&e),
        })
    }
}

impl From<DbError> for Cause {
    fn from(e: DbError) -> Cause {
        e.0
    }
}

impl From<rusqlite::Error> for Cause {
    fn from(e: rusqlite::Error) -> Cause {
        Cause {
            en: e.to_string(),
            path: None,
            kind: sqlite_kind(&e),
        }
    }
}

/// What SQLite's error means, as far as both languages can say it.
pub fn sqlite_kind(e: &rusqlite::Error) -> CauseKind {
    match e.sqlite_error_code() {
        Some(rusqlite::ErrorCode::NotADatabase) => CauseKind::NotADatabase,
        Some(rusqlite::ErrorCode::DatabaseCorrupt) => CauseKind::Corrupt,
        Some(rusqlite::ErrorCode::CannotOpen) => CauseKind::CannotOpen,
        _ => CauseKind::Other,
    }
}

/// A read-only connection to a DB or to its private snapshot.
pub struct ReadOnlyDb {
    conn: Connection,
}

impl std::ops::Deref for ReadOnlyDb {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        &self.conn
    }
}

/// `path` as an SQLite URI with `immutable=1`.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    // Bytes that would end or change the path in a URI, and every non-ASCII byte (a Chinese
    // folder name), are percent-encoded: SQLite decodes them back to the same bytes.
    for b in path.to_string_lossy().bytes() {
        match b {
            b'?' | b'#' | b'%' | b' ' | 0x80.. => uri.push_str(&format!("%{b:02X}")),
            _ => uri.push(char::from(b)),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

/// `path` with `suffix` appended to its file name (`x.db` → `x.db-wal`).
fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut name = path.file_name().unwrap_or_default().to_os_string();
    name.push(suffix);
    path.with_file_name(name)
}

/// A non-empty regular sidecar file: a pending WAL or a hot rollback journal. A FIFO or device
/// under that name is never opened (SQLite would block on it too).
fn pending(path: &Path) -> bool {
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.len() > 0)
}

/// The private snapshot to read instead of `path`, when the DB has a pending WAL or a hot
/// journal beside it (its last commits are only readable by SQLite replaying or rolling back,
/// which writes). `None` when the file alone is the whole DB.
pub fn snapshot_if_needed(path: &Path) -> Result<Option<DbSnapshot>, DbError> {
    super::safe_fs::ensure_regular(path).map_err(|e| DbError(e.into()))?;
    let sidecars: Vec<(&str, PathBuf)> = ["-wal", "-journal"]
        .into_iter()
        .map(|s| (s, sidecar(path, s)))
        .filter(|(_, p)| pending(p))
        .collect();
    if sidecars.is_empty() {
        return Ok(None);
    }
    let copy_err = |e: std::io::Error| {
        DbError(Cause::io(
            format!("cannot make a private copy: {e}"),
            None,
            &e,
        ))
    };
    let dir = tempfile::tempdir().map_err(copy_err)?;
    let db_copy = dir.path().join("snapshot.db");
    super::safe_fs::copy_regular(path, &db_copy).map_err(copy_err)?;
    for (suffix, from) in sidecars {
        super::safe_fs::copy_regular(&from, &sidecar(&db_copy, suffix)).map_err(copy_err)?;
    }
    Ok(Some(DbSnapshot::new(db_copy, dir)))
}

/// Opens a DB without ever writing beside it. The user's file is opened `immutable` (SQLite then
/// creates no `-wal`, `-shm` or `-journal`, whatever the header says); a `snapshot` (see
/// `snapshot_if_needed`) is ours, so it is opened read-write and SQLite may replay its WAL or
/// roll back its journal there.
pub fn open_read_only(path: &Path, snapshot: Option<&DbSnapshot>) -> Result<ReadOnlyDb, DbError> {
    let conn = match snapshot {
        Some(s) => Connection::open_with_flags(
            &s.path,
            OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?,
        None => {
            super::safe_fs::ensure_regular(path).map_err(|e| DbError(e.into()))?;
            Connection::open_with_flags(
                immutable_uri(path),
                OpenFlags::SQLITE_OPEN_READ_ONLY
                    | OpenFlags::SQLITE_OPEN_NO_MUTEX
                    | OpenFlags::SQLITE_OPEN_URI,
            )?
        }
    };
    // Fail early on a file that is not SQLite.
    conn.query_row("SELECT count(*) FROM sqlite_master", [], |r| {
        r.get::<_, i64>(0)
    })
    .map_err(|e| {
        DbError(Cause {
            en: format!("not a readable SQLite database: {e}"),
            path: None,
            kind: sqlite_kind(&e),
        })
    })?;
    Ok(ReadOnlyDb { conn })
}

pub(super) fn has_table(conn: &Connection, name: &str) -> bool {
    conn.query_row(
        "SELECT 1 FROM sqlite_master WHERE type='table' AND name=?1",
        [name],
        |_| Ok(()),
    )
    .is_ok()
}

/// A cell as i64 whatever SQLite stored (NUMERIC columns may hold REAL or TEXT).
pub(super) fn int(v: ValueRef<'_>) -> Result<i64, SkipReason> {
    match v {
        ValueRef::Null => Ok(NULL),
        ValueRef::Integer(i) if i == NULL => Err("value out of range".into()),
        ValueRef::Integer(i) => Ok(i),
        ValueRef::Real(f) if f.is_finite() && f.abs() < 9.2e18 => Ok(f.round() as i64),
        ValueRef::Real(f) => Err(format!("not a finite number: {f}").into()),
        ValueRef::Text(t) => super::value::parse_scaled(t, 1)
            .map(|o| o.map_or(NULL, |s| s.value))
            .map_err(|e| e.to_string().into()),
        ValueRef::Blob(_) => Err("blob where a number belongs".into()),
    }
}

/// A time column: 0 means unset in these exports.
pub(super) fn time(v: ValueRef<'_>) -> Result<i64, SkipReason> {
    int(v).map(|t| if t == 0 { NULL } else { t })
}

pub(super) fn text(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        _ => String::new(),
    }
}

/// The columns of `table`, lowercased (SQLite names are case-insensitive); empty when the
/// table does not exist.
fn columns(conn: &Connection, table: &str) -> HashSet<String> {
    let Ok(mut st) = conn.prepare(&format!("PRAGMA table_info(\"{table}\")")) else {
        return HashSet::new();
    };
    st.query_map([], |r| r.get::<_, String>(1))
        .map(|rows| {
            rows.filter_map(Result::ok)
                .map(|c| c.to_lowercase())
                .collect()
        })
        .unwrap_or_default()
}

/// The columns a table has, for building SELECTs that tolerate missing optional columns.
pub(super) struct TableColumns {
    table: &'static str,
    have: HashSet<String>,
    /// Optional columns asked for but absent (selected as NULL).
    missing: Vec<&'static str>,
}

impl TableColumns {
    pub(super) fn of(conn: &Connection, table: &'static str) -> Self {
        TableColumns {
            table,
            have: columns(conn, table),
            missing: Vec::new(),
        }
    }
    pub(super) fn has(&self, name: &str) -> bool {
        self.have.contains(&name.to_lowercase())
    }
    /// A column the table cannot be read without.
    pub(super) fn require(&self, name: &'static str) -> Result<&'static str, DbError> {
        if self.has(name) {
            Ok(name)
        } else {
            Err(DbError::said(format!(
                "{} has no column {name}",
                self.table
            )))
        }
    }
    /// A column read when present, else NULL (and named in [`Self::note`]).
    pub(super) fn optional(&mut self, name: &'static str) -> &'static str {
        if self.has(name) {
            name
        } else {
            self.missing.push(name);
            "NULL"
        }
    }
    /// The warning for absent optional columns, if any.
    fn note(&self, db: &Path) -> Option<Message> {
        (!self.missing.is_empty()).then(|| Message::MissingColumns {
            path: db.display().to_string(),
            table: self.table.to_string(),
            columns: self.missing.join(", "),
        })
    }
    /// ` WHERE deviceId = d` when filtering by device and the table can.
    fn device_filter(&mut self, device: Option<i64>, keyword: &str) -> String {
        match device {
            Some(d) if self.has("deviceId") => format!(" {keyword} deviceId = {d}"),
            Some(_) => {
                self.missing.push("deviceId");
                String::new()
            }
            None => String::new(),
        }
    }
}

/// Reads rank/device/host facts (small tables only). Makes the DB's private snapshot when it
/// needs one, for the loads that follow to share.
pub fn read_meta(path: &Path) -> Result<DbMeta, DbError> {
    let snapshot = snapshot_if_needed(path)?;
    let conn = open_read_only(path, snapshot.as_ref())?;
    let unified = !has_table(&conn, "MEMORY_RECORD") && has_op_mem_events(&conn);
    if !has_table(&conn, "MEMORY_RECORD") && !unified {
        return Err(DbError(
            "the DB has no MEMORY_RECORD table (export with profile_memory=True)".into(),
        ));
    }
    let mut meta = DbMeta::default();
    let rank_map = TableColumns::of(&conn, "RANK_DEVICE_MAP");
    if rank_map.has("rankId") && rank_map.has("deviceId") {
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
    if TableColumns::of(&conn, "HOST_INFO").has("hostName") {
        meta.host = conn
            .query_row("SELECT hostName FROM HOST_INFO LIMIT 1", [], |r| {
                Ok(text(r.get_ref(0)?))
            })
            .ok()
            .filter(|h| !h.trim().is_empty());
    }
    let events_table = if unified {
        "NPU_OP_MEM"
    } else {
        "MEMORY_RECORD"
    };
    if TableColumns::of(&conn, events_table).has("deviceId") {
        meta.first_device = conn
            .query_row(
                &format!("SELECT deviceId FROM {events_table} LIMIT 1"),
                [],
                |r| Ok(int(r.get_ref(0)?).ok()),
            )
            .ok()
            .flatten()
            .filter(|&d| d != NULL);
    }
    meta.snapshot = snapshot;
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
    /// STEP_TIME rows (absolute ns), when the DB has the table.
    pub steps: Vec<Step>,
    /// NPU_MEM rows of type `device` (hbm + ddr), unsorted.
    pub device: DeviceMemory,
    /// One report per table read.
    pub reports: Vec<FileReport>,
    /// Notes (missing optional tables or columns).
    pub warnings: Vec<Message>,
}

/// The session's bounds from SESSION_TIME_INFO, when the DB has them.
fn session(conn: &Connection) -> Option<(i64, i64)> {
    let c = TableColumns::of(conn, "SESSION_TIME_INFO");
    if !(c.has("startTimeNs") && c.has("endTimeNs")) {
        return None;
    }
    conn.query_row(
        "SELECT startTimeNs, endTimeNs FROM SESSION_TIME_INFO LIMIT 1",
        [],
        |r| Ok((int(r.get_ref(0)?).ok(), int(r.get_ref(1)?).ok())),
    )
    .ok()
    .and_then(|(a, b)| {
        Some((
            a.filter(|&x| x != NULL && x > 0)?,
            b.filter(|&x| x != NULL)?,
        ))
    })
    .filter(|(a, b)| a <= b)
}

/// Timestamps of up to [`time_window::SAMPLES`] rows of `table` spread over it (by rowid: a
/// few index lookups, whatever the table's size).
fn sample_times(conn: &Connection, table: &str, time_col: &str) -> Vec<i64> {
    let Ok(max) = conn.query_row(&format!("SELECT max(rowid) FROM {table}"), [], |r| {
        r.get::<_, Option<i64>>(0)
    }) else {
        return Vec::new();
    };
    let max = max.unwrap_or(0).max(0);
    let Ok(mut st) = conn.prepare(&format!(
        "SELECT {time_col} FROM {table} WHERE rowid >= ?1 ORDER BY rowid LIMIT 1"
    )) else {
        return Vec::new();
    };
    let n = time_window::SAMPLES as i128;
    (0..n)
        .filter_map(|k| {
            let at = (i128::from(max) * k / n) as i64;
            st.query_row([at], |r| Ok(time(r.get_ref(0)?).ok()))
                .ok()
                .flatten()
        })
        .filter(|&t| t != NULL)
        .collect()
}

/// The accepted time range of a table's rows: the session, or the bulk of the table's times.
fn time_window_of(conn: &Connection, table: &str, time_col: &str) -> TimeWindow {
    TimeWindow::from_samples(sample_times(conn, table, time_col), session(conn))
}

/// Loads the memory tables of `path` (or of its `snapshot`), keeping only `device`'s rows when
/// given. MEMORY_RECORD is required; every other table degrades to a warning when it is absent,
/// lacks a column, or cannot be read.
pub fn load(
    path: &Path,
    snapshot: Option<&DbSnapshot>,
    device: Option<i64>,
    strings: &mut Interner,
) -> Result<DbTables, DbError> {
    let conn = open_read_only(path, snapshot)?;
    if !has_table(&conn, "MEMORY_RECORD") {
        if has_op_mem_events(&conn) {
            // The msprof unified DB: allocator events only.
            let mut out = DbTables::default();
            let ids = string_ids(&conn, path, &mut out.warnings);
            load_op_mem_events(&conn, path, device, ids, strings, &mut out)?;
            return Ok(out);
        }
        return Err(DbError("the DB has no MEMORY_RECORD table".into()));
    }
    let mut out = DbTables::default();
    let ids = string_ids(&conn, path, &mut out.warnings);
    load_memory_record(&conn, path, device, ids, strings, &mut out)?;
    let optional: [(&str, OptionalLoader); 4] = [
        ("NPU_MEM", load_npu_mem),
        ("OP_MEMORY", load_op_memory),
        ("NPU_MODULE_MEM", load_module_mem),
        ("STEP_TIME", load_step_time),
    ];
    for (table, loader) in optional {
        let ctx = Ctx {
            conn: &conn,
            path,
            device,
            ids,
        };
        if let Err(e) = loader(&ctx, strings, &mut out) {
            out.warnings.push(Message::DbTableNotLoaded {
                path: path.display().to_string(),
                table: table.to_string(),
                cause: e.into(),
            });
        }
    }
    Ok(out)
}

/// What every table loader needs.
struct Ctx<'a> {
    conn: &'a Connection,
    path: &'a Path,
    device: Option<i64>,
    /// STRING_IDS is usable (ids resolve to names).
    ids: bool,
}

type OptionalLoader = fn(&Ctx<'_>, &mut Interner, &mut DbTables) -> Result<(), DbError>;

/// Whether STRING_IDS can resolve names; a warning when it exists but lacks its columns.
fn string_ids(conn: &Connection, path: &Path, warnings: &mut Vec<Message>) -> bool {
    if !has_table(conn, "STRING_IDS") {
        return false;
    }
    let c = TableColumns::of(conn, "STRING_IDS");
    let ok = c.has("id") && c.has("value");
    if !ok {
        warnings.push(Message::StringIdsUnusable {
            path: path.display().to_string(),
        });
    }
    ok
}

/// `col` resolved through STRING_IDS when usable.
fn name_of(col: &str, ids: bool) -> String {
    if ids && col != "NULL" {
        format!("(SELECT value FROM STRING_IDS WHERE id = {col})")
    } else {
        col.to_string()
    }
}

/// A timestamp cell checked against the window: NULL passes, an outlier is an error.
fn windowed(v: ValueRef<'_>, window: TimeWindow, column: &str) -> Result<i64, SkipReason> {
    let t = time(v)?;
    if t != NULL && !window.contains(t) {
        return Err(window.reject_reason(column, &t.to_string()));
    }
    Ok(t)
}

fn load_memory_record(
    conn: &Connection,
    path: &Path,
    device: Option<i64>,
    ids: bool,
    strings: &mut Interner,
    out: &mut DbTables,
) -> Result<(), DbError> {
    let mut c = TableColumns::of(conn, "MEMORY_RECORD");
    let component = c.require("component")?;
    let timestamp = c.require("timestamp")?;
    if !c.has("totalAllocated") && !c.has("totalReserved") {
        return Err(DbError(
            "MEMORY_RECORD has neither totalAllocated nor totalReserved".into(),
        ));
    }
    let window = time_window_of(conn, "MEMORY_RECORD", timestamp);
    let sql = format!(
        "SELECT {}, {timestamp}, {}, {}, {}, {} FROM MEMORY_RECORD{}",
        name_of(component, ids),
        c.optional("totalAllocated"),
        c.optional("totalReserved"),
        c.optional("totalActive"),
        c.optional("streamPtr"),
        c.device_filter(device, "WHERE"),
    );
    out.warnings.extend(c.note(path));
    let mut skipped = SkippedRows::default();
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut n: u64 = 0;
    while let Some(r) = rows.next()? {
        n += 1;
        let parsed = (|| -> Result<_, SkipReason> {
            let g = |i: usize| r.get_ref(i).map_err(|e| e.to_string());
            let comp = text(g(0)?);
            let t = windowed(g(1)?, window, "timestamp")?;
            if t == NULL {
                return Err(SkipReason::DbMissing {
                    what: "timestamp".into(),
                });
            }
            Ok((comp, t, int(g(2)?)?, int(g(3)?)?, int(g(4)?)?, text(g(5)?)))
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
        path: path.join("MEMORY_RECORD"), // "file.db/TABLE" reads well in reports
        rows: out.memory_record_rows as u64,
        skipped,
    });
    Ok(())
}

/// NPU_MEM app samples: APP Reserved = hbm + ddr.
fn load_npu_mem(ctx: &Ctx<'_>, _strings: &mut Interner, out: &mut DbTables) -> Result<(), DbError> {
    if !has_table(ctx.conn, "NPU_MEM") || !ctx.ids {
        out.warnings.push(Message::NoNpuMemTable {
            path: ctx.path.display().to_string(),
        });
        return Ok(());
    }
    let mut c = TableColumns::of(ctx.conn, "NPU_MEM");
    let kind = c.require("type")?;
    let ts = c.require("timestampNs")?;
    if !c.has("hbm") && !c.has("ddr") {
        return Err(DbError::said("NPU_MEM has neither hbm nor ddr"));
    }
    let window = time_window_of(ctx.conn, "NPU_MEM", ts);
    let sql = format!(
        "SELECT {}, {}, {ts}, {kind} IN (SELECT id FROM STRING_IDS WHERE lower(value) = 'app') FROM NPU_MEM WHERE {kind} IN (SELECT id FROM STRING_IDS WHERE lower(value) IN ('app', 'device')){}",
        c.optional("hbm"),
        c.optional("ddr"),
        c.device_filter(ctx.device, "AND"),
    );
    out.warnings.extend(c.note(ctx.path));
    let mut st = ctx.conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut skipped = SkippedRows::default();
    let mut k = 0u64;
    while let Some(r) = rows.next()? {
        k += 1;
        let hbm = int(r.get_ref(0)?).unwrap_or(NULL);
        let ddr = int(r.get_ref(1)?).unwrap_or(NULL);
        let t = match windowed(r.get_ref(2)?, window, "timestampNs") {
            Ok(t) => t,
            Err(reason) => {
                skipped.add(k, reason, || format!("NPU_MEM row {k}"));
                continue;
            }
        };
        if t == NULL || (hbm == NULL && ddr == NULL) {
            skipped.add(
                k,
                SkipReason::DbMissing {
                    what: "timestamp or hbm/ddr".into(),
                },
                || format!("NPU_MEM row {k}"),
            );
            continue;
        }
        let total = hbm.max(0).saturating_add(ddr.max(0));
        let app = int(r.get_ref(3)?).unwrap_or(0) != 0;
        if app {
            out.records.push(Component::App, t, NULL, total, NULL, 0);
        } else {
            out.device.time_ns.push(t);
            out.device.bytes.push(total);
        }
    }
    out.reports.push(FileReport {
        path: ctx.path.join("NPU_MEM"),
        rows: k - skipped.count,
        skipped,
    });
    Ok(())
}

/// True when the DB has NPU_OP_MEM events whose type names resolve through ENUM_MEMORY (the
/// msprof unified DB) with at least one `allocate`.
fn has_op_mem_events(conn: &Connection) -> bool {
    has_table(conn, "NPU_OP_MEM")
        && has_table(conn, "ENUM_MEMORY")
        && conn
            .query_row(
                "SELECT 1 FROM NPU_OP_MEM WHERE type IN \
                 (SELECT id FROM ENUM_MEMORY WHERE lower(name) = 'allocate') LIMIT 1",
                [],
                |_| Ok(()),
            )
            .is_ok()
}

/// The msprof unified DB's NPU_OP_MEM: each `allocate`/`release` event (ENUM_MEMORY) with the
/// allocator's totals after it. The totals make the Operator curves (as GE, the allocator that
/// writes them); allocate and release events paired on `addr`, in time order, make the details
/// table (a release without an allocate in the capture is a negative-size row, as in
/// operator_memory).
fn load_op_mem_events(
    conn: &Connection,
    path: &Path,
    device: Option<i64>,
    ids: bool,
    strings: &mut Interner,
    out: &mut DbTables,
) -> Result<(), DbError> {
    let mut c = TableColumns::of(conn, "NPU_OP_MEM");
    let kind = c.require("type")?;
    let addr = c.require("addr")?;
    let size = c.require("size")?;
    let ts = c.require("timestampNs")?;
    let window = time_window_of(conn, "NPU_OP_MEM", ts);
    let name = if ids && c.has("operatorName") {
        "(SELECT value FROM STRING_IDS WHERE id = o.operatorName)".to_string()
    } else {
        "NULL".to_string()
    };
    let sql = format!(
        "SELECT {name}, o.{addr}, lower(e.name), o.{size}, o.{ts}, o.{}, o.{} \
         FROM NPU_OP_MEM o JOIN ENUM_MEMORY e ON e.id = o.{kind} \
         WHERE lower(e.name) IN ('allocate', 'release'){} ORDER BY o.{ts}, o.rowid",
        c.optional("totalAllocate"),
        c.optional("totalReserve"),
        c.device_filter(device, "AND"),
    );
    out.warnings.extend(c.note(path));
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut open: std::collections::HashMap<i64, usize> = Default::default();
    let mut skipped = SkippedRows::default();
    let mut k = 0u64;
    let ops = &mut out.operators;
    while let Some(r) = rows.next()? {
        k += 1;
        let t = match windowed(r.get_ref(4)?, window, "timestampNs") {
            Ok(t) if t != NULL => t,
            Ok(_) => {
                skipped.add(
                    k,
                    SkipReason::DbMissing {
                        what: "timestampNs".into(),
                    },
                    || format!("NPU_OP_MEM row {k}"),
                );
                continue;
            }
            Err(reason) => {
                skipped.add(k, reason, || format!("NPU_OP_MEM row {k}"));
                continue;
            }
        };
        let (a, bytes) = (int(r.get_ref(1)?), int(r.get_ref(3)?));
        let (Ok(a), Ok(bytes)) = (a, bytes) else {
            skipped.add(
                k,
                SkipReason::DbNotANumber {
                    what: "addr or size".into(),
                },
                || format!("NPU_OP_MEM row {k}"),
            );
            continue;
        };
        if a == NULL || bytes == NULL || bytes < 0 {
            skipped.add(
                k,
                SkipReason::DbMissing {
                    what: "addr or size".into(),
                },
                || format!("NPU_OP_MEM row {k}"),
            );
            continue;
        }
        let allocated = int(r.get_ref(5)?).unwrap_or(NULL);
        let reserved = int(r.get_ref(6)?).unwrap_or(NULL);
        out.records
            .push(Component::Ge, t, allocated, reserved, NULL, 0);
        let is_alloc = text(r.get_ref(2)?) == "allocate";
        if is_alloc {
            let name_id = strings.intern(&text(r.get_ref(0)?));
            // A second allocate at an address still open: the first one's release is not in
            // the capture; it stays open-ended.
            let row = ops.push_allocation(name_id, bytes, t, allocated, reserved);
            open.insert(a, row);
        } else if let Some(i) = open.remove(&a) {
            ops.close_block(i, t, allocated, reserved);
        } else {
            let name_id = strings.intern(&text(r.get_ref(0)?));
            ops.push_release_only(name_id, bytes, t, allocated, reserved);
        }
    }
    out.memory_record_rows = out.records.len();
    out.reports.push(FileReport {
        path: path.join("NPU_OP_MEM"),
        rows: k - skipped.count,
        skipped,
    });
    Ok(())
}

/// STEP_TIME(id, startNs, endNs): one row a training step. Absent in most exports without a
/// schedule; that is not worth a warning. Rows with a missing or reversed span are skipped.
fn load_step_time(
    ctx: &Ctx<'_>,
    _strings: &mut Interner,
    out: &mut DbTables,
) -> Result<(), DbError> {
    if !has_table(ctx.conn, "STEP_TIME") {
        return Ok(());
    }
    let c = TableColumns::of(ctx.conn, "STEP_TIME");
    let id = c.require("id")?;
    let start = c.require("startNs")?;
    let end = c.require("endNs")?;
    let mut st = ctx
        .conn
        .prepare(&format!("SELECT {id}, {start}, {end} FROM STEP_TIME"))?;
    let mut rows = st.query([])?;
    let mut skipped = SkippedRows::default();
    let mut k = 0u64;
    while let Some(r) = rows.next()? {
        k += 1;
        let cells = (
            int(r.get_ref(0)?).unwrap_or(NULL),
            time(r.get_ref(1)?).unwrap_or(NULL),
            time(r.get_ref(2)?).unwrap_or(NULL),
        );
        match cells {
            (i, s, e) if i != NULL && s != NULL && e != NULL && s <= e => out.steps.push(Step {
                id: i,
                start_ns: s,
                end_ns: e,
            }),
            _ => skipped.add(
                k,
                "id, startNs or endNs missing, or endNs before startNs",
                || format!("STEP_TIME row {k}"),
            ),
        }
    }
    out.reports.push(FileReport {
        path: ctx.path.join("STEP_TIME"),
        rows: k - skipped.count,
        skipped,
    });
    Ok(())
}

fn load_op_memory(
    ctx: &Ctx<'_>,
    strings: &mut Interner,
    out: &mut DbTables,
) -> Result<(), DbError> {
    if !has_table(ctx.conn, "OP_MEMORY") {
        out.warnings.push(Message::NoOpMemoryTable {
            path: ctx.path.display().to_string(),
        });
        return Ok(());
    }
    let mut c = TableColumns::of(ctx.conn, "OP_MEMORY");
    let name = c.require("name")?;
    let size = c.require("size")?;
    const VALUES: [&str; OP_I64_COLUMNS - 1] = [
        "allocationTime",
        "releaseTime",
        "activeReleaseTime",
        "duration",
        "activeDuration",
        "allocationTotalAllocated",
        "allocationTotalReserved",
        "allocationTotalActive",
        "releaseTotalAllocated",
        "releaseTotalReserved",
        "releaseTotalActive",
    ];
    let values: Vec<&str> = VALUES.iter().map(|v| c.optional(v)).collect();
    let window = time_window_of(ctx.conn, "OP_MEMORY", values[0]);
    let sql = format!(
        "SELECT {}, {size}, {}, {} FROM OP_MEMORY{}",
        name_of(name, ctx.ids),
        values.join(", "),
        c.optional("streamPtr"),
        c.device_filter(ctx.device, "WHERE"),
    );
    out.warnings.extend(c.note(ctx.path));
    let mut st = ctx.conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut skipped = SkippedRows::default();
    let mut k = 0u64;
    let mut ops = OperatorMemory::default();
    while let Some(r) = rows.next()? {
        k += 1;
        let parsed = (|| -> Result<_, SkipReason> {
            let g = |i: usize| r.get_ref(i).map_err(|e| e.to_string());
            let name = text(g(0)?);
            let size = int(g(1)?)?;
            if size == NULL {
                return Err(SkipReason::DbMissing {
                    what: "size".into(),
                });
            }
            // The cells in `OperatorMemory::push_row` order: size, then VALUES.
            let mut cells = [NULL; OP_I64_COLUMNS];
            cells[0] = size;
            for (j, slot) in cells[1..].iter_mut().enumerate() {
                let raw = g(2 + j)?;
                *slot = if j < 3 {
                    windowed(raw, window, VALUES[j])?
                } else {
                    int(raw)?
                };
            }
            Ok((name, cells, text(g(13)?)))
        })();
        match parsed {
            Ok((name, cells, sp)) => {
                let stream = if sp.is_empty() {
                    0
                } else {
                    strings.intern(&sp)
                };
                ops.push_row(strings.intern(&name), stream, cells);
            }
            Err(reason) => skipped.add(k, reason, || format!("OP_MEMORY row {k}")),
        }
    }
    // Only a table read to its end is kept: a failure midway loses the table, not the rank.
    out.operators = ops;
    out.reports.push(FileReport {
        path: ctx.path.join("OP_MEMORY"),
        rows: out.operators.len() as u64,
        skipped,
    });
    Ok(())
}

/// NPU_MODULE_MEM with ENUM_MODULE names.
fn load_module_mem(
    ctx: &Ctx<'_>,
    strings: &mut Interner,
    out: &mut DbTables,
) -> Result<(), DbError> {
    if !has_table(ctx.conn, "NPU_MODULE_MEM") {
        return Ok(());
    }
    let mut c = TableColumns::of(ctx.conn, "NPU_MODULE_MEM");
    let module = c.require("moduleId")?;
    let ts = c.require("timestampNs")?;
    let reserved = c.require("totalReserved")?;
    let e = TableColumns::of(ctx.conn, "ENUM_MODULE");
    let name = if e.has("id") && e.has("name") {
        format!("COALESCE((SELECT name FROM ENUM_MODULE WHERE id = {module}), {module})")
    } else {
        module.to_string()
    };
    let window = time_window_of(ctx.conn, "NPU_MODULE_MEM", ts);
    let sql = format!(
        "SELECT {name}, {ts}, {reserved} FROM NPU_MODULE_MEM{}",
        c.device_filter(ctx.device, "WHERE")
    );
    out.warnings.extend(c.note(ctx.path));
    let mut st = ctx.conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut skipped = SkippedRows::default();
    let mut k = 0u64;
    let mut modules = ModuleMemory::default();
    while let Some(r) = rows.next()? {
        k += 1;
        let comp = text(r.get_ref(0)?);
        let t = match windowed(r.get_ref(1)?, window, "timestampNs") {
            Ok(t) => t,
            Err(reason) => {
                skipped.add(k, reason, || format!("NPU_MODULE_MEM row {k}"));
                continue;
            }
        };
        let Ok(resv) = int(r.get_ref(2)?) else {
            skipped.add(
                k,
                SkipReason::DbNotANumber {
                    what: "totalReserved".into(),
                },
                || format!("NPU_MODULE_MEM row {k}"),
            );
            continue;
        };
        if t == NULL || comp.is_empty() {
            skipped.add(
                k,
                SkipReason::DbMissing {
                    what: "timestamp or module".into(),
                },
                || format!("NPU_MODULE_MEM row {k}"),
            );
            continue;
        }
        modules.component.push(strings.intern(&comp));
        modules.time_ns.push(t);
        modules.reserved.push(resv);
    }
    out.modules = modules;
    out.reports.push(FileReport {
        path: ctx.path.join("NPU_MODULE_MEM"),
        rows: out.modules.len() as u64,
        skipped,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::immutable_uri;
    use std::path::Path;

    #[test]
    fn uris_keep_every_path_byte() {
        assert_eq!(
            immutable_uri(Path::new("/数据/a b#1?.db")),
            "file:/%E6%95%B0%E6%8D%AE/a%20b%231%3F.db?immutable=1"
        );
        // Windows paths (drive letter, UNC) keep their backslashes: SQLite's Windows VFS reads
        // both separators.
        assert_eq!(
            immutable_uri(Path::new(r"C:\性能\x.db")),
            "file:C:\\%E6%80%A7%E8%83%BD\\x.db?immutable=1"
        );
        assert_eq!(
            immutable_uri(Path::new(r"\\server\share\x.db")),
            "file:\\\\server\\share\\x.db?immutable=1"
        );
    }
}
