//! The cluster summary file (`memsight summarize … --out FILE.db`): one small SQLite file per
//! machine or per job, holding for every rank what the overview needs, computed next to the data.
//! Summaries merge (`--merge`) into one file; writing the same ranks always gives the same bytes,
//! whatever order they came in, so a merge is idempotent and engines can be compared byte for
//! byte.
//!
//! Schema version [`SCHEMA_VERSION`] (`PRAGMA user_version`); every table and column is listed in
//! the README ("Cluster summaries"). Times are ms from the rank's own time origin, sizes MiB.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};

pub use crate::model::cluster::{
    Amount, ClusterRank, ClusterSummary, Envelope, RankIdentity, StepRow,
};

/// `PRAGMA user_version` of the files this build writes; a file with another version is refused
/// with a message saying which.
pub const SCHEMA_VERSION: i64 = 1;

/// At most this many buckets per downsampled curve.
pub const CURVE_BUCKETS: usize = 4096;

/// A curve's envelope BLOB when it is the size its bucket count says (8 bytes a bucket, at most
/// [`CURVE_BUCKETS`]), else NULL: SQLite's `length` of a BLOB reads no content, so a damaged
/// file's 50 MB BLOB is never loaded (it took the app to 3.6 GB).
const VALID_ENVELOPE: &str =
    "CASE WHEN buckets BETWEEN 1 AND 4096 AND length(envelope) = 8 * buckets THEN envelope END";

/// The tables, in creation order (the README documents each column).
const SCHEMA: &str = "
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE ranks(
  id INTEGER PRIMARY KEY,
  host TEXT, rank TEXT NOT NULL, device TEXT, path TEXT NOT NULL,
  source TEXT NOT NULL, format TEXT NOT NULL,
  files INTEGER NOT NULL, files_bytes INTEGER NOT NULL, files_mtime_ns INTEGER NOT NULL,
  error TEXT,
  time_origin_ns INTEGER,
  peak_allocated_mib REAL, peak_allocated_at_ms REAL,
  peak_reserved_mib REAL, peak_app_reserved_mib REAL,
  unreleased INTEGER, steps INTEGER,
  inspect_json TEXT NOT NULL, steps_json TEXT, roles_json TEXT
);
CREATE TABLE steps(
  rank_id INTEGER NOT NULL REFERENCES ranks(id), step INTEGER NOT NULL,
  start_ms REAL NOT NULL, end_ms REAL NOT NULL,
  peak_allocated_mib REAL, peak_at_ms REAL, end_allocated_mib REAL, change_mib REAL,
  survivors INTEGER NOT NULL, survivors_kib REAL NOT NULL,
  PRIMARY KEY(rank_id, step)
);
CREATE TABLE roles_at_peak(
  rank_id INTEGER NOT NULL REFERENCES ranks(id), role TEXT NOT NULL,
  mib REAL NOT NULL, blocks INTEGER NOT NULL,
  PRIMARY KEY(rank_id, role)
);
CREATE TABLE top_at_peak(
  rank_id INTEGER NOT NULL REFERENCES ranks(id), kind TEXT NOT NULL, position INTEGER NOT NULL,
  name TEXT NOT NULL, mib REAL NOT NULL, blocks INTEGER NOT NULL,
  PRIMARY KEY(rank_id, kind, position)
);
CREATE TABLE curves(
  rank_id INTEGER NOT NULL REFERENCES ranks(id), series TEXT NOT NULL,
  start_ms REAL NOT NULL, end_ms REAL NOT NULL, buckets INTEGER NOT NULL, envelope BLOB NOT NULL,
  PRIMARY KEY(rank_id, series)
);
CREATE TABLE notes(position INTEGER PRIMARY KEY, text TEXT NOT NULL);
";

/// Everything a summary holds about one rank.
#[derive(Debug, Clone, PartialEq)]
pub struct RankRecord {
    /// Who it is.
    pub identity: RankIdentity,
    /// Why it could not be summarised (the rank is still recorded).
    pub error: Option<String>,
    /// The rank's object of `memsight inspect --json`.
    pub inspect_json: String,
    /// `memsight steps --json`, when the rank has steps.
    pub steps_json: Option<String>,
    /// `memsight roles --json`, when it loaded.
    pub roles_json: Option<String>,
    /// Each step.
    pub steps: Vec<StepRow>,
    /// Each role's share of the Operator Allocated peak.
    pub roles_at_peak: Vec<Amount>,
    /// The operators holding the most at the peak, largest first.
    pub top_operators: Vec<Amount>,
    /// The source lines holding the most at the peak (profiles with call stacks).
    pub top_lines: Vec<Amount>,
    /// Downsampled Overall curves, by series name.
    pub curves: Vec<(String, Envelope)>,
}

/// A summary file's content.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Summary {
    /// The ranks, in identity order once written.
    pub ranks: Vec<RankRecord>,
    /// What a merge decided (duplicates dropped, and which was kept).
    pub notes: Vec<String>,
    /// The machine that summarised the ranks (its host name; `None` when unknown, or when a
    /// merge combined summaries made on several machines).
    pub summarised_on: Option<String>,
}

/// This machine's host name, when the OS says it: Linux's `/proc/sys/kernel/hostname`, else
/// `COMPUTERNAME` (Windows) or `HOSTNAME`, else what the `hostname` command prints (macOS).
pub fn this_machine() -> Option<String> {
    let clean = |s: String| {
        let s = s.trim().to_string();
        (!s.is_empty()).then_some(s)
    };
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .and_then(clean)
        .or_else(|| std::env::var("COMPUTERNAME").ok().and_then(clean))
        .or_else(|| std::env::var("HOSTNAME").ok().and_then(clean))
        .or_else(|| {
            let out = std::process::Command::new("hostname").output().ok()?;
            out.status
                .success()
                .then(|| String::from_utf8_lossy(&out.stdout).into_owned())
                .and_then(clean)
        })
}

/// Why a summary file could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum SummaryError {
    /// SQLite refused.
    #[error("{path}: {source}")]
    Sqlite {
        /// The file.
        path: String,
        /// SQLite's message.
        source: rusqlite::Error,
    },
    /// Not a summary, or another schema version.
    #[error("{path}: {why}")]
    NotASummary {
        /// The file.
        path: String,
        /// What is wrong.
        why: NotSummaryWhy,
    },
    /// The file system refused.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The error.
        source: std::io::Error,
    },
}

/// Why a file is not a summary this memsight reads (typed, so the app says it in its language).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NotSummaryWhy {
    /// A folder was given.
    #[error("a folder, not a summary file (a .db written by `memsight summarize`)")]
    Folder,
    /// SQLite could not open it (or it is not there: then `cause` says so).
    #[error("{}", if *.exists { format!("not a memsight summary: {cause}") } else { cause.to_string() })]
    Unopenable {
        /// The opener's words.
        cause: crate::model::Cause,
        /// The path exists.
        exists: bool,
    },
    /// A database memsight did not write.
    #[error("not a memsight summary (make one with `memsight summarize PATH --out FILE.db`)")]
    NotMemsight,
    /// A summary of another schema version.
    #[error("summary schema version {found}; this memsight reads version {reads}")]
    Schema {
        /// The file's version.
        found: i64,
        /// The version this build reads.
        reads: i64,
    },
}

fn f64_of(v: Option<&serde_json::Value>) -> Option<f64> {
    v.and_then(serde_json::Value::as_f64)
}

impl RankRecord {
    /// A rank that could not be summarised: who it is, why, and its `inspect` object (`null`
    /// when it is not even a profile).
    pub fn failed(identity: RankIdentity, error: String, inspect_json: String) -> RankRecord {
        RankRecord {
            identity,
            error: Some(error),
            inspect_json,
            steps_json: None,
            roles_json: None,
            steps: Vec::new(),
            roles_at_peak: Vec::new(),
            top_operators: Vec::new(),
            top_lines: Vec::new(),
            curves: Vec::new(),
        }
    }

    /// Columns of `ranks` read from the inspect JSON (the peaks, unreleased, steps).
    fn inspect_columns(&self) -> (Option<i64>, [Option<f64>; 4], Option<i64>, Option<i64>) {
        let v: serde_json::Value = serde_json::from_str(&self.inspect_json).unwrap_or_default();
        let peak = |k: &str, f: &str| f64_of(v.get("peaks").and_then(|p| p.get(k)?.get(f)));
        (
            v.get("time_origin_ns").and_then(serde_json::Value::as_i64),
            [
                peak("operator_allocated", "mib"),
                peak("operator_allocated", "at_ms"),
                peak("operator_reserved", "mib"),
                peak("app_reserved", "mib"),
            ],
            v.get("unreleased").and_then(serde_json::Value::as_i64),
            v.get("steps")
                .and_then(|s| s.get("count"))
                .and_then(serde_json::Value::as_i64),
        )
    }
}

/// Orders ranks by identity and keeps one per (host, rank, device, path): the one whose files are
/// newest (then the larger, then the later text, so the choice never depends on input order),
/// with a note for each dropped duplicate.
pub fn dedupe(mut summary: Summary) -> Summary {
    let order = |a: &RankRecord, b: &RankRecord| {
        a.identity
            .key()
            .cmp(&b.identity.key())
            // Newest first within a key, so the kept one comes first.
            .then(b.identity.files_mtime_ns.cmp(&a.identity.files_mtime_ns))
            .then(b.identity.files_bytes.cmp(&a.identity.files_bytes))
            .then(b.inspect_json.cmp(&a.inspect_json))
            .then(b.error.cmp(&a.error))
    };
    summary.ranks.sort_by(order);
    let mut kept: Vec<RankRecord> = Vec::with_capacity(summary.ranks.len());
    for r in summary.ranks {
        match kept.last() {
            Some(k) if k.identity.key() == r.identity.key() => {
                if k != &r {
                    summary.notes.push(format!(
                        "rank {} ({}{}) was summarised more than once; kept the summary of its newest files",
                        r.identity.rank,
                        r.identity
                            .host
                            .as_deref()
                            .map_or(String::new(), |h| format!("host {h}, ")),
                        r.identity.path
                    ));
                }
            }
            _ => kept.push(r),
        }
    }
    summary.ranks = kept;
    summary.notes.sort();
    summary.notes.dedup();
    summary
}

/// Writes `summary` (deduplicated and ordered by [`dedupe`]) to `out`: into a new file beside it
/// that then replaces `out`, so a failed write leaves `out` as it was. The same summary always
/// gives the same bytes. Returns what was written.
pub fn write_summary(out: &Path, summary: Summary) -> Result<Summary, SummaryError> {
    let summary = dedupe(summary);
    let dir = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => std::path::PathBuf::from("."),
    };
    let io = |source: std::io::Error| SummaryError::Io {
        path: out.display().to_string(),
        source,
    };
    let mut builder = tempfile::Builder::new();
    builder.prefix(".memsight-summary-").suffix(".db");
    // Readable by the team like any file the user writes (a temp file would be owner-only).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        builder.permissions(std::fs::Permissions::from_mode(0o644));
    }
    let tmp = builder.tempfile_in(&dir).map_err(io)?;
    let _pending = super::pending_files::Pending::new(tmp.path().to_path_buf());
    hold_for_tests(tmp.path());
    let sql = |source: rusqlite::Error| SummaryError::Sqlite {
        path: out.display().to_string(),
        source,
    };
    {
        let mut db = Connection::open(tmp.path()).map_err(sql)?;
        // No journal: the file is new and private until it is renamed into place.
        db.execute_batch("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF;")
            .map_err(sql)?;
        let tx = db.transaction().map_err(sql)?;
        tx.execute_batch(SCHEMA).map_err(sql)?;
        tx.execute_batch(&format!("PRAGMA user_version={SCHEMA_VERSION};"))
            .map_err(sql)?;
        tx.execute(
            "INSERT INTO meta VALUES('schema_version', ?1), ('writer', 'memsight')",
            params![SCHEMA_VERSION.to_string()],
        )
        .map_err(sql)?;
        if let Some(machine) = &summary.summarised_on {
            tx.execute(
                "INSERT INTO meta VALUES('summarised_on', ?1)",
                params![machine],
            )
            .map_err(sql)?;
        }
        insert_all(&tx, &summary).map_err(sql)?;
        tx.commit().map_err(sql)?;
    }
    tmp.persist(out).map_err(|e| io(e.error))?;
    Ok(summary)
}

/// With `MEMSIGHT_HOLD_SUMMARY_WRITE` set (tests only), says which temporary file is being
/// written and waits there until the process is stopped: a test can then terminate a
/// `summarize` that is certainly in the middle of writing, on any machine.
fn hold_for_tests(tmp: &Path) {
    if std::env::var_os("MEMSIGHT_HOLD_SUMMARY_WRITE").is_some() {
        eprintln!("memsight: holding {}", tmp.display());
        loop {
            std::thread::park();
        }
    }
}

fn insert_all(tx: &rusqlite::Transaction<'_>, summary: &Summary) -> rusqlite::Result<()> {
    let mut rank = tx.prepare(
        "INSERT INTO ranks VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15,?16,?17,?18,?19,?20,?21)",
    )?;
    let mut step = tx.prepare("INSERT INTO steps VALUES(?1,?2,?3,?4,?5,?6,?7,?8,?9,?10)")?;
    let mut role = tx.prepare("INSERT INTO roles_at_peak VALUES(?1,?2,?3,?4)")?;
    let mut top = tx.prepare("INSERT INTO top_at_peak VALUES(?1,?2,?3,?4,?5,?6)")?;
    let mut curve = tx.prepare("INSERT INTO curves VALUES(?1,?2,?3,?4,?5,?6)")?;
    for (i, r) in summary.ranks.iter().enumerate() {
        let id = i64::try_from(i).unwrap_or(i64::MAX).saturating_add(1);
        let (origin, peaks, unreleased, steps) = r.inspect_columns();
        let d = &r.identity;
        rank.execute(params![
            id,
            d.host,
            d.rank,
            d.device,
            d.path,
            d.source,
            d.format,
            d.files,
            d.files_bytes,
            d.files_mtime_ns,
            r.error,
            origin,
            peaks[0],
            peaks[1],
            peaks[2],
            peaks[3],
            unreleased,
            steps,
            r.inspect_json,
            r.steps_json,
            r.roles_json,
        ])?;
        for s in &r.steps {
            step.execute(params![
                id,
                s.step,
                s.start_ms,
                s.end_ms,
                s.peak_allocated_mib,
                s.peak_at_ms,
                s.end_allocated_mib,
                s.change_mib,
                s.survivors,
                s.survivors_kib
            ])?;
        }
        for a in &r.roles_at_peak {
            role.execute(params![id, a.name, a.mib, a.blocks])?;
        }
        for (kind, list) in [("operator", &r.top_operators), ("line", &r.top_lines)] {
            for (pos, a) in list.iter().enumerate() {
                top.execute(params![id, kind, pos as i64, a.name, a.mib, a.blocks])?;
            }
        }
        for (series, e) in &r.curves {
            curve.execute(params![
                id,
                series,
                e.start_ms,
                e.end_ms,
                e.min_max.len() as i64,
                e.to_blob()
            ])?;
        }
    }
    let mut note = tx.prepare("INSERT INTO notes VALUES(?1, ?2)")?;
    for (i, n) in summary.notes.iter().enumerate() {
        note.execute(params![i as i64, n])?;
    }
    Ok(())
}

/// Reads a summary file (read-only: nothing is written beside it).
pub fn read_summary(path: &Path) -> Result<Summary, SummaryError> {
    let file = SummaryFile::open(path)?;
    read_all(&file.db).map_err(|e| file.sql(e))
}

/// True when `path` is a regular file written by `memsight summarize` (whatever its schema
/// version): the app then opens it as a cluster summary instead of a profile. Cheap: the
/// file's first 16 bytes, then one query.
pub fn is_summary(path: &Path) -> bool {
    let mut head = [0u8; 16];
    let is_sqlite = crate::ingest::safe_fs::open_regular(path)
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok()
        && &head == b"SQLite format 3\0";
    is_sqlite && crate::ingest::open_read_only(path, None).is_ok_and(|db| writer_of(&db).is_some())
}

fn writer_of(db: &Connection) -> Option<String> {
    db.query_row("SELECT value FROM meta WHERE key='writer'", [], |r| {
        r.get::<_, String>(0)
    })
    .optional()
    .ok()
    .flatten()
    .filter(|w| w == "memsight")
}

/// An open summary file (read-only, `immutable`: nothing is written beside it): the overview's
/// rows at once, a rank's curves when asked.
pub struct SummaryFile {
    path: String,
    db: crate::ingest::ReadOnlyDb,
}

impl SummaryFile {
    /// Opens `path` and checks that it is a summary of this schema version.
    pub fn open(path: &Path) -> Result<SummaryFile, SummaryError> {
        let name = path.display().to_string();
        if path.is_dir() {
            return Err(SummaryError::NotASummary {
                path: name,
                why: NotSummaryWhy::Folder,
            });
        }
        // The ingest layer's opener: regular files only (no FIFO hang), `immutable` so that
        // SQLite writes nothing beside the file whatever its header says.
        let db =
            crate::ingest::open_read_only(path, None).map_err(|e| SummaryError::NotASummary {
                path: name.clone(),
                why: NotSummaryWhy::Unopenable {
                    cause: e.0,
                    exists: path.exists(),
                },
            })?;
        if writer_of(&db).is_none() {
            return Err(SummaryError::NotASummary {
                path: name,
                why: NotSummaryWhy::NotMemsight,
            });
        }
        let file = SummaryFile { path: name, db };
        let version: i64 = file
            .db
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(|e| file.sql(e))?;
        if version != SCHEMA_VERSION {
            return Err(SummaryError::NotASummary {
                path: file.path,
                why: NotSummaryWhy::Schema {
                    found: version,
                    reads: SCHEMA_VERSION,
                },
            });
        }
        Ok(file)
    }

    fn sql(&self, source: rusqlite::Error) -> SummaryError {
        SummaryError::Sqlite {
            path: self.path.clone(),
            source,
        }
    }

    /// Every rank's row, steps and top operator, and the notes: what the overview shows.
    pub fn overview(&self) -> Result<ClusterSummary, SummaryError> {
        read_overview(&self.db).map_err(|e| self.sql(e))
    }

    /// The downsampled curves of the rank whose `ranks.id` is `id`, in the order written.
    pub fn curves(&self, id: i64) -> Result<Vec<(String, Envelope)>, SummaryError> {
        let read = || -> rusqlite::Result<Vec<(String, Envelope)>> {
            let mut q = self.db.prepare_cached(&format!(
                "SELECT series, start_ms, end_ms, {VALID_ENVELOPE} FROM curves WHERE rank_id=?1 \
                 ORDER BY rowid"
            ))?;
            let rows = q.query_map([id], |r| {
                let blob: Option<Vec<u8>> = r.get(3)?;
                Ok(match blob {
                    Some(b) => Some((r.get(0)?, Envelope::from_blob(r.get(1)?, r.get(2)?, &b))),
                    None => None,
                })
            })?;
            // A damaged curve (its BLOB not its bucket count's size) is left out.
            rows.filter_map(Result::transpose).collect()
        };
        read().map_err(|e| self.sql(e))
    }
}

fn read_overview(db: &Connection) -> rusqlite::Result<ClusterSummary> {
    let mut ranks: Vec<ClusterRank> = Vec::new();
    let mut q = db.prepare(
        "SELECT id, host, rank, device, path, source, format, files, files_bytes, files_mtime_ns, \
         error, peak_allocated_mib, peak_allocated_at_ms, peak_reserved_mib, \
         peak_app_reserved_mib, unreleased FROM ranks ORDER BY id",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        ranks.push(ClusterRank {
            id: r.get(0)?,
            identity: identity_of(r)?,
            error: r.get(10)?,
            peak_allocated_mib: r.get(11)?,
            peak_allocated_at_ms: r.get(12)?,
            peak_reserved_mib: r.get(13)?,
            peak_app_reserved_mib: r.get(14)?,
            unreleased: r.get(15)?,
            steps: Vec::new(),
            top_operator: None,
        });
    }
    let index: std::collections::HashMap<i64, usize> =
        ranks.iter().enumerate().map(|(i, r)| (r.id, i)).collect();
    let mut q = db.prepare("SELECT * FROM steps ORDER BY rank_id, step")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(&i) = index.get(&r.get(0)?) {
            ranks[i].steps.push(step_row(r)?);
        }
    }
    let mut q = db.prepare(
        "SELECT rank_id, name, mib, blocks FROM top_at_peak WHERE kind='operator' AND position=0",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(&i) = index.get(&r.get(0)?) {
            ranks[i].top_operator = Some(Amount {
                name: r.get(1)?,
                mib: r.get(2)?,
                blocks: r.get(3)?,
            });
        }
    }
    Ok(ClusterSummary {
        ranks,
        notes: read_notes(db)?,
        summarised_on: summarised_on(db),
    })
}

/// A rank's identity from a `ranks` query whose columns 1–9 are `host` … `files_mtime_ns`.
fn identity_of(r: &rusqlite::Row<'_>) -> rusqlite::Result<RankIdentity> {
    Ok(RankIdentity {
        host: r.get(1)?,
        rank: r.get(2)?,
        device: r.get(3)?,
        path: r.get(4)?,
        source: r.get(5)?,
        format: r.get(6)?,
        files: r.get(7)?,
        files_bytes: r.get(8)?,
        files_mtime_ns: r.get(9)?,
    })
}

fn step_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StepRow> {
    Ok(StepRow {
        step: r.get(1)?,
        start_ms: r.get(2)?,
        end_ms: r.get(3)?,
        peak_allocated_mib: r.get(4)?,
        peak_at_ms: r.get(5)?,
        end_allocated_mib: r.get(6)?,
        change_mib: r.get(7)?,
        survivors: r.get(8)?,
        survivors_kib: r.get(9)?,
    })
}

/// The machine that wrote the summary (`meta.summarised_on`; older files lack it).
fn summarised_on(db: &Connection) -> Option<String> {
    db.query_row(
        "SELECT value FROM meta WHERE key='summarised_on'",
        [],
        |r| r.get::<_, String>(0),
    )
    .optional()
    .ok()
    .flatten()
}

fn read_notes(db: &Connection) -> rusqlite::Result<Vec<String>> {
    let mut q = db.prepare("SELECT text FROM notes ORDER BY position")?;
    let rows = q.query_map([], |r| r.get(0))?;
    rows.collect()
}

fn read_all(db: &Connection) -> rusqlite::Result<Summary> {
    let mut ranks: Vec<(i64, RankRecord)> = Vec::new();
    let mut q = db.prepare(
        "SELECT id, host, rank, device, path, source, format, files, files_bytes, files_mtime_ns, \
         error, inspect_json, steps_json, roles_json FROM ranks ORDER BY id",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        ranks.push((
            r.get(0)?,
            RankRecord {
                identity: identity_of(r)?,
                error: r.get(10)?,
                inspect_json: r.get(11)?,
                steps_json: r.get(12)?,
                roles_json: r.get(13)?,
                steps: Vec::new(),
                roles_at_peak: Vec::new(),
                top_operators: Vec::new(),
                top_lines: Vec::new(),
                curves: Vec::new(),
            },
        ));
    }
    // An id is a rank's key: a damaged file that repeats one keeps its first row (before, the
    // later rows took its steps and curves, and merging kept none of them).
    let mut seen = std::collections::HashSet::new();
    let before = ranks.len();
    ranks.retain(|(id, _)| seen.insert(*id));
    let repeated = before - ranks.len();
    let index: std::collections::HashMap<i64, usize> = ranks
        .iter()
        .enumerate()
        .map(|(i, (id, _))| (*id, i))
        .collect();
    let at = |id: i64| index.get(&id).copied();
    let mut q = db.prepare("SELECT * FROM steps ORDER BY rank_id, step")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(i) = at(r.get(0)?) {
            ranks[i].1.steps.push(step_row(r)?);
        }
    }
    // Roles in the order they were written (rowid), which is the report's order.
    let mut q =
        db.prepare("SELECT rank_id, role, mib, blocks FROM roles_at_peak ORDER BY rowid")?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(i) = at(r.get(0)?) {
            ranks[i].1.roles_at_peak.push(Amount {
                name: r.get(1)?,
                mib: r.get(2)?,
                blocks: r.get(3)?,
            });
        }
    }
    let mut q = db.prepare(
        "SELECT rank_id, kind, name, mib, blocks FROM top_at_peak ORDER BY rank_id, kind, position",
    )?;
    let mut rows = q.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(i) = at(r.get(0)?) {
            let kind: String = r.get(1)?;
            let a = Amount {
                name: r.get(2)?,
                mib: r.get(3)?,
                blocks: r.get(4)?,
            };
            match kind.as_str() {
                "operator" => ranks[i].1.top_operators.push(a),
                _ => ranks[i].1.top_lines.push(a),
            }
        }
    }
    let mut q = db.prepare(&format!(
        "SELECT rank_id, series, start_ms, end_ms, {VALID_ENVELOPE} FROM curves ORDER BY rowid"
    ))?;
    let mut rows = q.query([])?;
    let mut damaged = 0u64;
    while let Some(r) = rows.next()? {
        if let Some(i) = at(r.get(0)?) {
            let Some(blob) = r.get::<_, Option<Vec<u8>>>(4)? else {
                damaged += 1;
                continue;
            };
            let e = Envelope::from_blob(r.get(2)?, r.get(3)?, &blob);
            ranks[i].1.curves.push((r.get(1)?, e));
        }
    }
    let mut notes = read_notes(db)?;
    if repeated > 0 {
        let rows = if repeated == 1 { "row" } else { "rows" };
        notes.push(format!(
            "{repeated} {rows} of the ranks table repeat an id (a damaged file): only the first \
             row of each id was kept, with its steps and curves"
        ));
    }
    if damaged > 0 {
        let what = if damaged == 1 {
            "curve is damaged (its data is not the size its bucket count says)"
        } else {
            "curves are damaged (their data is not the size their bucket count says)"
        };
        notes.push(format!("{damaged} {what}: left out"));
    }
    for (_, r) in &ranks {
        if r.error.is_none() && serde_json::from_str::<serde_json::Value>(&r.inspect_json).is_err()
        {
            notes.push(format!(
                "rank {} ({}): its inspect summary is not valid JSON; its peaks are unknown",
                r.identity.rank, r.identity.path
            ));
        }
    }
    Ok(Summary {
        ranks: ranks.into_iter().map(|(_, r)| r).collect(),
        notes,
        summarised_on: summarised_on(db),
    })
}

/// The min/max envelope of a step curve (`times` ns from the origin, non-decreasing; `values`
/// bytes, each held until the next sample) in at most `buckets` equal spans of its extent. A
/// bucket's range holds the value held when it starts (unless a sample lands right there) and
/// every sample inside it. `None` for an empty curve.
pub fn envelope(times: &[i64], values: &[i64], buckets: usize) -> Option<Envelope> {
    let n = times.len().min(values.len());
    if n == 0 || buckets == 0 {
        return None;
    }
    let (t0, t1) = (times[0], times[n - 1]);
    let span = i128::from(t1) - i128::from(t0);
    let count = if span == 0 { 1 } else { buckets.min(n) };
    let edge = |k: usize| -> i64 {
        // t0 + span * k / count, exactly (i128: span * count cannot overflow).
        let v = i128::from(t0) + span * k as i128 / count as i128;
        i64::try_from(v).unwrap_or(t1)
    };
    let to_mib = |b: i64| crate::model::bytes_to_mib(b) as f32;
    let mut min_max = Vec::with_capacity(count);
    let mut i = 0usize;
    let mut held = values[0];
    for k in 0..count {
        let (start, end) = (edge(k), edge(k + 1));
        let last = k + 1 == count;
        // The value carried in counts unless a sample replaces it right at the start.
        let carried = !(i < n && times[i] <= start);
        let (mut lo, mut hi) = if carried {
            (held, held)
        } else {
            (i64::MAX, i64::MIN)
        };
        // Samples in [start, end), and the last bucket also takes its end.
        while i < n && (times[i] < end || (last && times[i] <= end)) {
            lo = lo.min(values[i]);
            hi = hi.max(values[i]);
            held = values[i];
            i += 1;
        }
        min_max.push((to_mib(lo), to_mib(hi)));
    }
    Some(Envelope {
        start_ms: crate::model::ns_to_ms(t0),
        end_ms: crate::model::ns_to_ms(t1),
        min_max,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_envelope_holds_every_sample_and_the_value_carried_in() {
        let mib = 1 << 20;
        // 0 MiB until 10, 5 until 20, 1 until 30, then 7.
        let t = [0, 10, 20, 30];
        let v = [0, 5 * mib, mib, 7 * mib];
        let e = envelope(&t, &v, 3).unwrap();
        // [0,10): 0; [10,20): 5; [20,30]: 1 then 7.
        assert_eq!(e.min_max, vec![(0.0, 0.0), (5.0, 5.0), (1.0, 7.0)]);
        assert_eq!(e.span(1), (10.0 / 1e6, 20.0 / 1e6));
        // A bucket with no sample holds the value carried into it.
        let e = envelope(&[0, 100], &[2 * mib, 3 * mib], 2).unwrap();
        assert_eq!(e.min_max, vec![(2.0, 2.0), (2.0, 3.0)]);
        assert!(envelope(&[], &[], 10).is_none());
        assert_eq!(envelope(&[5, 5], &[1, 2], 10).unwrap().min_max.len(), 1);
        // The BLOB round-trips.
        let back = Envelope::from_blob(e.start_ms, e.end_ms, &e.to_blob());
        assert_eq!(back, e);
    }

    #[test]
    fn never_more_buckets_than_asked_or_than_samples() {
        let t: Vec<i64> = (0..10_000).collect();
        let v: Vec<i64> = (0..10_000).map(|x| x % 97).collect();
        let len = |n: usize| {
            envelope(&t[..n], &v[..n], CURVE_BUCKETS)
                .unwrap()
                .min_max
                .len()
        };
        assert_eq!(len(10_000), CURVE_BUCKETS);
        assert_eq!(len(10), 10);
        // Extreme times do not overflow.
        let e = envelope(&[i64::MIN / 2, i64::MAX / 2], &[1, 2], 4).unwrap();
        assert_eq!(e.min_max.len(), 2);
    }
}
