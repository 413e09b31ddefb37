//! Finding every rank under a path, reading only names, headers, first rows and profiler_info.
//!
//! Accepts a cluster parent folder, a `*_ascend_pt` / `*_ascend_ms` folder, its
//! `ASCEND_PROFILER_OUTPUT`, a `PROF_*` folder or its `mindstudio_profiler_output`, or one `.db`.
//! The walk goes at most [`MAX_DEPTH`] levels, follows symlinks but never visits a folder twice, and
//! like MindStudio Insight descends only into `ASCEND_PROFILER_OUTPUT` / `mindstudio_profiler_output`
//! where a folder has one.

use super::importer::{Importer, ranks_of_file};
use super::importers::IMPORTERS;
use crate::model::Message;
use crate::model::{Cause, CauseKind};
use std::collections::HashSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::chunks::{CsvFile, LoadControl, column_index};
use super::db;
use super::safe_fs;
use super::value::device_id;
use crate::model::{DataSource, Format, RankInfo};

/// The largest `profiler_info*.json` read (real ones are about 2 KiB).
const PROFILER_INFO_MAX: u64 = 1 << 20;

/// How deep the walk goes below the given path.
pub const MAX_DEPTH: usize = 8;

/// The result of discovery: ranks in display order, no data rows.
#[derive(Debug, Clone)]
pub struct Profile {
    /// The path the user gave.
    pub root: PathBuf,
    /// Ranks, sorted by rank id.
    pub ranks: Vec<RankInfo>,
    /// Things found but not usable (e.g. an msprof unified DB), for the user to see.
    pub notes: Vec<Message>,
}

impl Profile {
    /// The hosts of its ranks, sorted, each once (empty when no rank names a host).
    pub fn hosts(&self) -> Vec<String> {
        let mut hosts: Vec<String> = self.ranks.iter().filter_map(|r| r.host.clone()).collect();
        hosts.sort();
        hosts.dedup();
        hosts
    }

    /// Indices of the ranks on `host` (every rank for `None`), in rank order.
    pub fn ranks_on(&self, host: Option<&str>) -> Vec<usize> {
        (0..self.ranks.len())
            .filter(|&i| host.is_none_or(|h| self.ranks[i].host.as_deref() == Some(h)))
            .collect()
    }
}

/// Why discovery found nothing to show.
#[derive(Debug, thiserror::Error)]
pub enum DiscoverError {
    /// The path does not exist or cannot be read.
    #[error("cannot open {path}: {reason}")]
    Unreadable {
        /// The path.
        path: String,
        /// The cause, in both languages.
        reason: Cause,
    },
    /// No memory data anywhere under the path.
    #[error(
        "no memory data found under {path}: looked for memory_record*.csv (torch_npu, MindSpore, \
         msprof), ascend_pytorch_profiler*.db / ascend_mindspore_profiler*.db{}, up to \
         {MAX_DEPTH} folders deep{}",
        also_suffix(.also),
        notes_suffix(.notes)
    )]
    NoMemoryData {
        /// The path.
        path: String,
        /// Notes on what was found instead.
        notes: Vec<Message>,
        /// What the importers it asked look for besides the Ascend exports
        /// ([`super::importer::Importer::looks_for`]).
        also: Vec<&'static str>,
    },
}

/// The memory file kinds, by name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    MemoryRecord,
    OperatorMemory,
    NpuModuleMem,
    StaticOpMem,
}

const KINDS: [(Kind, &str); 4] = [
    (Kind::MemoryRecord, "memory_record"),
    (Kind::OperatorMemory, "operator_memory"),
    (Kind::NpuModuleMem, "npu_module_mem"),
    (Kind::StaticOpMem, "static_op_mem"),
];

/// A memory CSV's name, parsed: `memory_record[_slice_N][_TIMESTAMP].csv`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct CsvName {
    kind: Kind,
    slice: Option<u32>,
    timestamp: Option<u64>,
}

fn parse_csv_name(name: &str) -> Option<CsvName> {
    let stem = name.strip_suffix(".csv")?;
    for (kind, prefix) in KINDS {
        let Some(rest) = stem.strip_prefix(prefix) else {
            continue;
        };
        if rest.is_empty() {
            return Some(CsvName {
                kind,
                slice: None,
                timestamp: None,
            });
        }
        let rest = rest.strip_prefix('_')?;
        let (slice, ts) = match rest.strip_prefix("slice_") {
            Some(r) => {
                let (n, ts) = r.split_once('_')?;
                (Some(n), ts)
            }
            None => (None, rest),
        };
        let all_digits =
            |s: &str| !s.is_empty() && s.len() <= 14 && s.bytes().all(|b| b.is_ascii_digit());
        if !all_digits(ts) || slice.is_some_and(|n| !all_digits(n) || n.len() > 2) {
            return None;
        }
        return Some(CsvName {
            kind,
            slice: slice.and_then(|n| n.parse().ok()),
            timestamp: ts.parse().ok(),
        });
    }
    None
}

/// `name` without its `.db` extension, whatever its case (`EXPORT.DB` as Windows tools write it).
fn db_stem(name: &str) -> Option<&str> {
    let cut = name.len().checked_sub(3)?;
    let ext = name.get(cut..)?;
    ext.eq_ignore_ascii_case(".db").then(|| &name[..cut])
}

/// `ascend_pytorch_profiler[_N].db` or `ascend_mindspore_profiler[_N].db`.
fn profiler_db_format(name: &str) -> Option<Format> {
    let stem = db_stem(name)?;
    for (prefix, fmt) in [
        ("ascend_pytorch_profiler", Format::TorchNpu),
        ("ascend_mindspore_profiler", Format::MindSpore),
    ] {
        if let Some(rest) = stem.strip_prefix(prefix) {
            let ok = rest.is_empty()
                || rest.strip_prefix('_').is_some_and(|n| {
                    !n.is_empty() && n.len() <= 16 && n.bytes().all(|b| b.is_ascii_digit())
                });
            if ok {
                return Some(fmt);
            }
        }
    }
    None
}

fn is_msprof_db(name: &str) -> bool {
    name.strip_prefix("msprof_")
        .and_then(db_stem)
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// True for an allocator snapshot's file name (a `_dump_snapshot` pickle: `.pickle`, `.pkl`).
pub fn is_snapshot_name(name: &str) -> bool {
    let lower = name.to_ascii_lowercase();
    lower.ends_with(".pickle") || lower.ends_with(".pkl")
}

/// True when `path`'s file name is an allocator snapshot's ([`is_snapshot_name`]); the disk is
/// not asked.
pub fn is_snapshot_path(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| is_snapshot_name(&n.to_string_lossy()))
}

fn is_output_dir(name: &str) -> bool {
    name.eq_ignore_ascii_case("ASCEND_PROFILER_OUTPUT")
        || name.eq_ignore_ascii_case("mindstudio_profiler_output")
}

/// What a folder entry is, after following symlinks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entry {
    Dir,
    File,
    /// A FIFO, socket or device: never opened.
    Special(&'static str),
    /// A dangling symlink or an entry that vanished.
    Broken,
}

/// A folder holding memory files.
#[derive(Debug, Default)]
struct Candidate {
    dir: PathBuf,
    csvs: Vec<(CsvName, PathBuf)>,
    dbs: Vec<(Format, PathBuf)>,
}

struct Walker<'a> {
    visited: HashSet<PathBuf>,
    found: Vec<Candidate>,
    notes: Vec<Message>,
    /// The importers asked about files the Ascend exports do not claim.
    importers: &'a [&'a dyn Importer],
    /// The ranks they found.
    imported: Vec<RankInfo>,
    /// Allocator snapshots met in the folders walked (an OOM bundle's).
    snapshots: u64,
    /// Told how far an importer's long read has come; cancelled, the walk stops.
    control: &'a LoadControl,
}

impl Walker<'_> {
    /// Asks the importers about a file the Ascend exports do not claim.
    fn ask_importers(&mut self, path: &Path, name: &str) {
        if !self.importers.is_empty()
            && !self.control.is_cancelled()
            && let Some(ranks) =
                ranks_of_file(self.importers, path, name, &mut self.notes, self.control)
        {
            self.imported.extend(ranks);
        }
    }

    fn walk(&mut self, dir: &Path, depth: usize) {
        if self.control.is_cancelled() {
            return;
        }
        let Ok(canon) = fs::canonicalize(dir) else {
            return;
        };
        // A folder whose real path is outside the granted roots (a link out of an MCP root).
        if !safe_fs::readable(dir) {
            return;
        }
        if !self.visited.insert(canon) {
            return; // a symlink loop or a folder reached twice
        }
        let Ok(rd) = fs::read_dir(dir) else {
            self.notes.push(Message::FolderUnreadable {
                path: dir.display().to_string(),
            });
            return;
        };
        let mut entries: Vec<(String, PathBuf, Entry)> = rd
            .filter_map(Result::ok)
            .map(|e| {
                let p = e.path();
                // The symlink's target decides: only folders and regular files are used.
                let kind = match fs::metadata(&p) {
                    _ if !safe_fs::readable(&p) => Entry::Broken,
                    Ok(m) if m.is_dir() => Entry::Dir,
                    Ok(m) if m.is_file() => Entry::File,
                    Ok(m) => Entry::Special(safe_fs::file_kind(&m)),
                    Err(_) => Entry::Broken,
                };
                (e.file_name().to_string_lossy().into_owned(), p, kind)
            })
            .collect();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut cand = Candidate {
            dir: dir.to_path_buf(),
            ..Default::default()
        };
        for (name, path, kind) in &entries {
            let is_data_name = parse_csv_name(name).is_some()
                || profiler_db_format(name).is_some()
                || name == "profiler_info.json"
                || name.starts_with("profiler_info_");
            match kind {
                Entry::File => {}
                Entry::Dir | Entry::Broken => continue,
                Entry::Special(what) => {
                    if is_data_name {
                        self.notes.push(Message::SpecialFile {
                            path: path.display().to_string(),
                            what: what.to_string(),
                        });
                    }
                    continue;
                }
            }
            if let Some(n) = parse_csv_name(name) {
                cand.csvs.push((n, path.clone()));
            } else if let Some(fmt) = profiler_db_format(name) {
                cand.dbs.push((fmt, path.clone()));
            } else if is_msprof_db(name) {
                cand.dbs.push((Format::Msprof, path.clone()));
            } else if is_snapshot_name(name) {
                self.snapshots += 1;
            } else {
                self.ask_importers(path, name);
            }
        }
        let has_rows_source = cand
            .csvs
            .iter()
            .any(|(n, _)| matches!(n.kind, Kind::MemoryRecord | Kind::OperatorMemory));
        if has_rows_source || !cand.dbs.is_empty() {
            self.found.push(cand);
        } else if !cand.csvs.is_empty() {
            self.notes.push(Message::OnlyComponentFiles {
                path: dir.display().to_string(),
            });
        } else if dir
            .file_name()
            .is_some_and(|n| is_output_dir(&n.to_string_lossy()))
        {
            // A rank's output folder without memory files: a rank folder the overview would
            // otherwise leave out without a word.
            let files: Vec<&str> = entries
                .iter()
                .filter(|e| e.2 == Entry::File)
                .map(|e| e.0.as_str())
                .collect();
            let mut holds = files.iter().take(3).copied().collect::<Vec<_>>().join(", ");
            if files.len() > 3 {
                holds.push_str(&format!(" and {} more", files.len() - 3));
            }
            if holds.is_empty() {
                holds = "nothing".into();
            }
            self.notes.push(Message::RankWithoutMemoryData {
                path: dir.parent().unwrap_or(dir).display().to_string(),
                holds,
            });
        }
        if depth >= MAX_DEPTH {
            return;
        }
        let subdirs: Vec<&(String, PathBuf, Entry)> =
            entries.iter().filter(|e| e.2 == Entry::Dir).collect();
        let outputs: Vec<&&(String, PathBuf, Entry)> =
            subdirs.iter().filter(|e| is_output_dir(&e.0)).collect();
        if outputs.is_empty() {
            for (_, p, _) in subdirs {
                self.walk(p, depth + 1);
            }
        } else {
            for (_, p, _) in outputs {
                self.walk(p, depth + 1);
            }
        }
    }
}

/// `also`, each after a comma.
fn also_suffix(also: &[&str]) -> String {
    also.iter().map(|a| format!(", {a}")).collect()
}

/// `; note; note` in English, or nothing.
fn notes_suffix(notes: &[Message]) -> String {
    notes.iter().map(|n| format!("; {n}")).collect()
}

/// Discovers every rank under `path` (a folder or one `.db` file): the Ascend exports and what
/// the [`IMPORTERS`] recognise.
pub fn discover(path: &Path) -> Result<Profile, DiscoverError> {
    discover_with(path, IMPORTERS)
}

/// [`discover`], telling `control` how far the reads of files that must be read whole to find
/// their ranks (an msMemScope dump) have come, and stopping early once it is cancelled (the
/// caller then ignores what it returns): the app's load, whose Cancel and progress bar work
/// while a 1 GB dump is read.
pub fn discover_controlled(path: &Path, control: &LoadControl) -> Result<Profile, DiscoverError> {
    discover_in(path, IMPORTERS, control)
}

/// [`discover`] asking `importers` (tests prove the seam with importers of their own).
pub fn discover_with(path: &Path, importers: &[&dyn Importer]) -> Result<Profile, DiscoverError> {
    discover_in(path, importers, &LoadControl::default())
}

/// [`discover_with`], telling `control` ([`discover_controlled`]).
fn discover_in(
    path: &Path,
    importers: &[&dyn Importer],
    control: &LoadControl,
) -> Result<Profile, DiscoverError> {
    let meta = fs::metadata(path).map_err(|e| DiscoverError::Unreadable {
        path: path.display().to_string(),
        reason: Cause::io(e.to_string(), None, &e),
    })?;
    let mut walker = Walker {
        visited: HashSet::new(),
        found: Vec::new(),
        notes: Vec::new(),
        importers,
        imported: Vec::new(),
        snapshots: 0,
        control,
    };
    if !meta.is_file() && !meta.is_dir() {
        let what = safe_fs::file_kind(&meta);
        return Err(DiscoverError::Unreadable {
            path: path.display().to_string(),
            reason: Cause {
                en: format!("not a regular file or folder (it is {what})"),
                path: None,
                kind: CauseKind::NotRegular(what),
            },
        });
    }
    if meta.is_file() {
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        // An Ascend export's DB by its name; another `.db` is an importer's when one recognises
        // it (an msMemScope dump's), else read as torch_npu's.
        let by_name =
            profiler_db_format(&name).or_else(|| is_msprof_db(&name).then_some(Format::Msprof));
        let imported = by_name.is_none()
            && db_stem(&name).is_some()
            && walker
                .importers
                .iter()
                .any(|i| i.wants(&name) && i.recognises(path, &super::importer::head(path)));
        if imported {
            walker.ask_importers(path, &name);
        } else if let Some(fmt) =
            by_name.or_else(|| db_stem(&name).is_some().then_some(Format::TorchNpu))
        {
            walker.found.push(Candidate {
                dir,
                csvs: Vec::new(),
                dbs: vec![(fmt, path.to_path_buf())],
            });
        } else if parse_csv_name(&name).is_some() {
            walker.walk(&dir, MAX_DEPTH);
        } else if is_snapshot_name(&name) {
            walker.notes.push(Message::SnapshotNotProfile {
                path: path.display().to_string(),
            });
        } else {
            walker.ask_importers(path, &name);
        }
    } else {
        walker.walk(path, 0);
    }
    let mut ranks = std::mem::take(&mut walker.imported);
    let mut notes = walker.notes;
    for cand in merge_db_with_its_csvs(walker.found) {
        ranks.extend(ranks_of(cand, &mut notes));
    }
    if ranks.is_empty() {
        if walker.snapshots > 0 {
            notes.push(Message::SnapshotsInFolder {
                path: path.display().to_string(),
                count: walker.snapshots,
            });
        }
        return Err(DiscoverError::NoMemoryData {
            path: path.display().to_string(),
            notes,
            also: walker.importers.iter().map(|i| i.looks_for()).collect(),
        });
    }
    ranks.sort_by(|a, b| {
        rank_order_key(&a.rank)
            .cmp(&rank_order_key(&b.rank))
            .then_with(|| a.dir.cmp(&b.dir))
    });
    make_unique(&mut ranks);
    Ok(Profile {
        root: path.to_path_buf(),
        ranks,
        notes,
    })
}

/// msprof writes its unified DB in the `PROF_*` folder and its CSV files in
/// `mindstudio_profiler_output` below it: two candidates of one rank. They become one, which reads
/// the DB and keeps the CSV files as the other source (as a torch_npu folder holding both does).
fn merge_db_with_its_csvs(found: Vec<Candidate>) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::with_capacity(found.len());
    let mut csv_only: Vec<Candidate> = Vec::new();
    for c in found {
        if c.dbs.is_empty() {
            csv_only.push(c);
        } else {
            out.push(c);
        }
    }
    for c in csv_only {
        let root = rank_root(&c.dir);
        match out
            .iter_mut()
            .find(|d| d.csvs.is_empty() && d.dir != c.dir && rank_root(&d.dir) == root)
        {
            Some(db) => db.csvs = c.csvs,
            None => out.push(c),
        }
    }
    out
}

/// Numeric ids first, in numeric order, then the rest by name.
fn rank_order_key(rank: &str) -> (u8, u64, String) {
    match rank.parse::<u64>() {
        Ok(n) => (0, n, String::new()),
        Err(_) => (1, 0, rank.to_string()),
    }
}

/// Duplicate rank ids get `_2`, `_3`, … in discovery order (as Insight does).
fn make_unique(ranks: &mut [RankInfo]) {
    let mut seen: HashSet<String> = HashSet::new();
    for r in ranks.iter_mut() {
        if seen.insert(r.rank.clone()) {
            continue;
        }
        let mut k = 2;
        while seen.contains(&format!("{}_{k}", r.rank)) {
            k += 1;
        }
        r.rank = format!("{}_{k}", r.rank);
        seen.insert(r.rank.clone());
    }
}

/// Picks the files of one kind: all slices in slice order, else the newest unsliced file.
fn pick(csvs: &[(CsvName, PathBuf)], kind: Kind, notes: &mut Vec<Message>) -> Vec<PathBuf> {
    let mut of_kind: Vec<&(CsvName, PathBuf)> =
        csvs.iter().filter(|(n, _)| n.kind == kind).collect();
    let mut slices: Vec<&&(CsvName, PathBuf)> =
        of_kind.iter().filter(|(n, _)| n.slice.is_some()).collect();
    if !slices.is_empty() {
        slices.sort_by_key(|(n, p)| (n.slice, n.timestamp, p.clone()));
        if of_kind.iter().any(|(n, _)| n.slice.is_none()) {
            notes.push(Message::UsingSlices);
        }
        return slices.into_iter().map(|(_, p)| p.clone()).collect();
    }
    // Newest first, as Insight sorts names descending and keeps the first.
    of_kind.sort_by(|a, b| b.1.cmp(&a.1));
    if of_kind.len() > 1 {
        notes.push(Message::NewestOfKind {
            count: of_kind.len() as u64,
            name: of_kind[0]
                .1
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default(),
        });
    }
    of_kind
        .first()
        .map(|(_, p)| vec![p.clone()])
        .unwrap_or_default()
}

fn csv_source(cand: &Candidate, notes: &mut Vec<Message>) -> Option<DataSource> {
    let memory_record = pick(&cand.csvs, Kind::MemoryRecord, notes);
    let operator_memory = pick(&cand.csvs, Kind::OperatorMemory, notes);
    if memory_record.is_empty() && operator_memory.is_empty() {
        return None;
    }
    if memory_record.is_empty() {
        notes.push(Message::NoMemoryRecord);
    }
    Some(DataSource::Csv {
        memory_record,
        operator_memory,
        npu_module_mem: pick(&cand.csvs, Kind::NpuModuleMem, notes),
        static_op_mem: pick(&cand.csvs, Kind::StaticOpMem, notes),
        device: None,
    })
}

/// The rank folder: the parent of `ASCEND_PROFILER_OUTPUT` / `mindstudio_profiler_output`.
fn rank_root(dir: &Path) -> PathBuf {
    match dir.file_name() {
        Some(n) if is_output_dir(&n.to_string_lossy()) => dir
            .parent()
            .map_or_else(|| dir.to_path_buf(), Path::to_path_buf),
        _ => dir.to_path_buf(),
    }
}

/// Rank id from `profiler_info_<N>.json` (the number in the name), else `profiler_info.json`'s
/// `rank_id` (an integer or a string; -1 means unknown).
fn rank_from_profiler_info(root: &Path) -> Option<String> {
    let rd = fs::read_dir(root).ok()?;
    let mut names: Vec<String> = rd
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    for n in &names {
        if let Some(id) = n
            .strip_prefix("profiler_info_")
            .and_then(|s| s.strip_suffix(".json"))
            && !id.is_empty()
            && id.len() <= 5
            && id.bytes().all(|b| b.is_ascii_digit())
        {
            return Some(id.to_string());
        }
    }
    if names.iter().any(|n| n == "profiler_info.json") {
        let bytes =
            safe_fs::read_small(&root.join("profiler_info.json"), PROFILER_INFO_MAX).ok()?;
        let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
        let id = match v.get("rank_id")? {
            serde_json::Value::Number(n) => n.as_i64()?.to_string(),
            serde_json::Value::String(s) => s.trim().to_string(),
            _ => return None,
        };
        if !id.is_empty() && id != "-1" {
            return Some(id);
        }
    }
    None
}

/// Rank id when nothing better exists: `device_<n>` → n, else the folder name.
fn rank_from_folder(root: &Path) -> String {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| root.display().to_string());
    name.strip_prefix("device_")
        .filter(|n| n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty())
        .map_or(name.clone(), str::to_string)
}

/// Host from a `{host}_{pid}_{timestamp}_ascend_pt|ms` folder name.
pub fn host_from_folder(name: &str) -> Option<String> {
    let stem = name
        .strip_suffix("_ascend_pt")
        .or_else(|| name.strip_suffix("_ascend_ms"))?;
    let (rest, ts) = stem.rsplit_once('_')?;
    let (host, pid) = rest.rsplit_once('_')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (digits(ts) && digits(pid) && !host.is_empty()).then(|| host.to_string())
}

fn folder_format(root: &Path, dir: &Path) -> Option<Format> {
    if dir
        .file_name()
        .is_some_and(|n| n.eq_ignore_ascii_case("mindstudio_profiler_output"))
    {
        return Some(Format::Msprof);
    }
    for anc in root.ancestors().take(3) {
        let n = anc
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if n.ends_with("_ascend_ms") {
            return Some(Format::MindSpore);
        }
        if n.ends_with("_ascend_pt") {
            return Some(Format::TorchNpu);
        }
        if n.starts_with("PROF_") {
            return Some(Format::Msprof);
        }
    }
    None
}

/// Format from a memory_record header: variant C (Total Active, no Stream Ptr) is MindSpore,
/// variant D (KB units) is msprof.
fn header_format(header: &[String]) -> Option<Format> {
    if header.iter().any(|h| h.contains("(KB)")) {
        return Some(Format::Msprof);
    }
    let active = column_index(header, "Total Active(MB)").is_some();
    let stream = column_index(header, "Stream Ptr").is_some();
    (active && !stream).then_some(Format::MindSpore)
}

/// Device id from the first data row of an opened CSV's device column.
fn first_row_device(csv: &CsvFile) -> Option<String> {
    let idx = ["Device Type", "Device", "Device_id"]
        .iter()
        .find_map(|n| csv.column(n))?;
    let rec = csv.first_record()?;
    rec.get(idx).and_then(|c| device_id(c))
}

fn ranks_of(cand: Candidate, notes: &mut Vec<Message>) -> Vec<RankInfo> {
    let root = rank_root(&cand.dir);
    let folder_name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut rank_notes = Vec::new();
    let csv = csv_source(&cand, &mut rank_notes);
    let info_rank = rank_from_profiler_info(&root);
    let mut out = Vec::new();
    if !cand.dbs.is_empty() {
        for (fmt, db_path) in &cand.dbs {
            let meta = match db::read_meta(db_path) {
                Ok(m) => m,
                Err(e) => {
                    if let Some(src) = &csv {
                        let mut notes = rank_notes.clone();
                        notes.push(Message::DbUnreadableUsingCsv {
                            path: db_path.display().to_string(),
                            cause: e.0.clone(),
                        });
                        out.push(csv_rank(
                            &cand,
                            &root,
                            src.clone(),
                            info_rank.clone(),
                            notes,
                        ));
                    } else {
                        notes.push(Message::DbUnusable {
                            path: db_path.display().to_string(),
                            cause: e.0.clone(),
                        });
                    }
                    continue;
                }
            };
            let mut rank_notes = rank_notes.clone();
            if csv.is_some() {
                rank_notes.push(Message::UsingDb);
            }
            let host = meta.host.clone().or_else(|| host_from_folder(&folder_name));
            let pairs = if meta.rank_devices.is_empty() {
                vec![(None, meta.first_device)]
            } else {
                meta.rank_devices.clone()
            };
            let multi = pairs.len() > 1;
            for (db_rank, device) in pairs {
                let rank = info_rank
                    .clone()
                    .filter(|_| !multi)
                    .or_else(|| db_rank.map(|r| r.to_string()))
                    .unwrap_or_else(|| rank_from_folder(&root));
                out.push(RankInfo {
                    rank,
                    device: device.map(|d| d.to_string()),
                    host: host.clone(),
                    format: *fmt,
                    dir: root.clone(),
                    source: DataSource::Db {
                        path: db_path.clone(),
                        snapshot: meta.snapshot.clone(),
                        device: if multi { device } else { None },
                        csv_fallback: csv.clone().map(Box::new),
                    },
                    notes: rank_notes.clone(),
                });
            }
        }
    } else if let Some(src) = csv {
        out.extend(split_by_device(csv_rank(
            &cand, &root, src, info_rank, rank_notes,
        )));
    }
    out
}

/// The devices a rank's CSV files hold, from the device column of rows sampled across
/// memory_record (else operator_memory): a few seeks, whatever the size. Sorted, distinct.
fn sampled_devices(src: &DataSource) -> Vec<String> {
    let DataSource::Csv {
        memory_record,
        operator_memory,
        ..
    } = src
    else {
        return Vec::new();
    };
    let Some(path) = memory_record.first().or(operator_memory.first()) else {
        return Vec::new();
    };
    let Ok(csv) = CsvFile::open(path) else {
        return Vec::new();
    };
    let Some(col) = ["Device Type", "Device", "Device_id"]
        .iter()
        .find_map(|n| csv.column(n))
    else {
        return Vec::new();
    };
    let sampled = super::time_window::sample_csv_cells(path, col, csv.delimiter(), device_id);
    // A device counts when it holds a fair share of the rows: one damaged row (a value with an
    // unquoted comma shifts the device column) must not make a rank of its own.
    let mut counts: std::collections::BTreeMap<(usize, String), usize> = Default::default();
    for d in &sampled {
        *counts.entry((d.len(), d.clone())).or_default() += 1; // "2" before "10"
    }
    let floor = (sampled.len() / 100).max(2);
    counts
        .into_iter()
        .filter(|(_, n)| *n >= floor)
        .map(|((_, d), _)| d)
        .collect()
}

/// One rank per device when the rank's files hold several (torch_npu's multi-device
/// profiling writes them into one memory_record / operator_memory); the rank itself otherwise.
fn split_by_device(info: RankInfo) -> Vec<RankInfo> {
    let devices = sampled_devices(&info.source);
    if devices.len() < 2 {
        return vec![info];
    }
    devices
        .into_iter()
        .map(|d| {
            let mut r = info.clone();
            r.rank = format!("{}/{d}", info.rank);
            r.device = Some(d.clone());
            if let DataSource::Csv { device, .. } = &mut r.source {
                *device = Some(d.clone());
            }
            r
        })
        .collect()
}

fn csv_rank(
    cand: &Candidate,
    root: &Path,
    src: DataSource,
    info_rank: Option<String>,
    notes: Vec<Message>,
) -> RankInfo {
    let (memory_record, operator_memory): (&[PathBuf], &[PathBuf]) = match &src {
        DataSource::Csv {
            memory_record,
            operator_memory,
            ..
        } => (memory_record, operator_memory),
        DataSource::Db { .. } | DataSource::Imported { .. } => (&[], &[]),
    };
    // One open of memory_record gives both its header and its first row's device.
    let record = memory_record.first().and_then(|p| CsvFile::open(p).ok());
    let header = record
        .as_ref()
        .map(|c| c.header().to_vec())
        .unwrap_or_default();
    let any_timestamped = cand.csvs.iter().any(|(n, _)| n.timestamp.is_some());
    let format = folder_format(root, &cand.dir)
        .or_else(|| header_format(&header))
        .or_else(|| any_timestamped.then_some(Format::Msprof))
        .unwrap_or(Format::TorchNpu);
    let device = record.as_ref().and_then(first_row_device).or_else(|| {
        operator_memory
            .first()
            .and_then(|p| first_row_device(&CsvFile::open(p).ok()?))
    });
    let folder_name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    RankInfo {
        rank: info_rank.unwrap_or_else(|| rank_from_folder(root)),
        device,
        host: host_from_folder(&folder_name),
        format,
        dir: root.to_path_buf(),
        source: src,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_names_follow_insight_patterns() {
        let n = parse_csv_name("memory_record.csv").unwrap();
        assert_eq!(
            (n.kind, n.slice, n.timestamp),
            (Kind::MemoryRecord, None, None)
        );
        let n = parse_csv_name("operator_memory_slice_1_20230919172305.csv").unwrap();
        assert_eq!(
            (n.kind, n.slice, n.timestamp),
            (Kind::OperatorMemory, Some(1), Some(20230919172305))
        );
        let n = parse_csv_name("npu_module_mem_20230919172305.csv").unwrap();
        assert_eq!(n.timestamp, Some(20230919172305));
        assert!(parse_csv_name("memory_record_abc.csv").is_none());
        assert!(parse_csv_name("memory_record.txt").is_none());
        assert!(parse_csv_name("kernel_details.csv").is_none());
    }

    #[test]
    fn db_names() {
        assert_eq!(
            profiler_db_format("ascend_pytorch_profiler_3.db"),
            Some(Format::TorchNpu)
        );
        assert_eq!(
            profiler_db_format("ascend_pytorch_profiler.db"),
            Some(Format::TorchNpu)
        );
        assert_eq!(
            profiler_db_format("ascend_mindspore_profiler_0.db"),
            Some(Format::MindSpore)
        );
        assert_eq!(profiler_db_format("analysis.db"), None);
        assert!(is_msprof_db("msprof_0.db"));
        // Extensions in any case, as Windows tools write them.
        assert_eq!(
            profiler_db_format("ascend_pytorch_profiler_3.DB"),
            Some(Format::TorchNpu)
        );
        assert!(is_msprof_db("msprof_0.Db"));
        assert_eq!(db_stem("EXPORT.DB"), Some("EXPORT"));
        assert_eq!(db_stem("数据.db"), Some("数据"));
        assert_eq!(db_stem("db"), None);
        assert_eq!(db_stem("a.dbx"), None);
        assert!(is_snapshot_name("OOM.PICKLE"));
    }

    #[test]
    fn hosts_from_folder_names() {
        assert_eq!(
            host_from_folder("localhost.localdomain_1408367_20240101123456789_ascend_pt")
                .as_deref(),
            Some("localhost.localdomain")
        );
        assert_eq!(
            host_from_folder("node_1_12_20240101_ascend_ms").as_deref(),
            Some("node_1")
        );
        assert_eq!(host_from_folder("rank0_1700000000000_ascend_pt"), None);
        assert_eq!(host_from_folder("rank_0_ascend_pt"), None);
    }

    #[test]
    fn duplicate_ranks_get_suffixes() {
        let mk = |r: &str| RankInfo::without_files(r, Format::TorchNpu, PathBuf::new());
        let mut v = vec![mk("0"), mk("0"), mk("0"), mk("0_2")];
        make_unique(&mut v);
        let ids: Vec<&str> = v.iter().map(|r| r.rank.as_str()).collect();
        assert_eq!(ids, vec!["0", "0_2", "0_3", "0_2_2"]);
    }
}
