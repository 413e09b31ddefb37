//! A folder of OOM bundles, one per rank (verl and lmms-engine save `oom_<ts>/` per rank; a
//! job's ranks each write `oom_snapshot_{pid}_{ts}.pickle`): which ranks ran out, and how close
//! the others were. Each snapshot is read and explained ([`super::oom::oom_reports`]); a rank
//! that did not run out is measured by its peak and its reserve at the end against the memory
//! the ranks that ran out could have had (their reserve at the OOM plus what their device had
//! free): the job's ranks share one kind of card and one program, so that is the room each had.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::oom::{OomVerdict, oom_reports};
use super::{AllocatorSnapshot, summarize_snapshot};

/// How deep below the folder bundles are looked for (`oom_<ts>/rank_3/x.pickle` is 2).
const MAX_DEPTH: usize = 4;
/// At most this many snapshots are read (a folder of more is not a job's bundles); the rest
/// are counted in [`BundleCluster::left_out`].
pub const MAX_FILES: usize = 4096;

/// One device of one snapshot in the folder.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BundleRow {
    /// The snapshot, relative to the folder.
    pub file: String,
    /// The device.
    pub device: i64,
    /// Whether, and how, it ran out (its first `oom` event).
    pub verdict: Option<OomVerdict>,
    /// The failed request, bytes.
    pub requested_bytes: Option<i64>,
    /// What the device had free at the OOM, bytes (when the event says).
    pub device_free_bytes: Option<i64>,
    /// The allocator's segments at the OOM, else at the end, bytes.
    pub reserved_bytes: i64,
    /// The peak handed out over the trace, bytes.
    pub peak_allocated_bytes: i64,
    /// The room the ranks that ran out could have had minus this row's reserve, bytes (none
    /// when no rank says what its device had free).
    pub headroom_bytes: Option<i64>,
}

/// The folder's bundles: a row per device with events or segments of every snapshot, and the
/// snapshots that could not be read.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BundleCluster {
    /// The rows, ranks that ran out first, then by file and device.
    pub rows: Vec<BundleRow>,
    /// The room of the ranks that ran out: the largest reserve at an OOM plus the device's
    /// free memory then, bytes.
    pub room_bytes: Option<i64>,
    /// Snapshots that could not be read: (file, why).
    pub unreadable: Vec<(String, String)>,
    /// Snapshots past the first [`MAX_FILES`] (in name order), not read.
    pub left_out: usize,
}

/// The allocator snapshots under `dir` (`.pickle`, `.pkl`, up to four folders down, links not
/// followed), sorted.
pub fn bundle_files(dir: &Path) -> Vec<PathBuf> {
    crate::ingest::safe_fs::files_under(dir, MAX_DEPTH, &crate::ingest::is_snapshot_name)
}

/// Reads and explains every snapshot under `dir`.
pub fn bundle_cluster(dir: &Path) -> BundleCluster {
    let mut cluster = BundleCluster::default();
    let mut files = bundle_files(dir);
    cluster.left_out = files.len().saturating_sub(MAX_FILES);
    files.truncate(MAX_FILES);
    for path in files {
        let file = path
            .strip_prefix(dir)
            .unwrap_or(&path)
            .display()
            .to_string();
        let snap = match AllocatorSnapshot::open(&path) {
            Ok(s) => s,
            Err(e) => {
                cluster.unreadable.push((file, e.to_string()));
                continue;
            }
        };
        let ooms = oom_reports(&snap);
        let Ok(summary) = summarize_snapshot(&snap, None, 0) else {
            cluster
                .unreadable
                .push((file, "no device in the snapshot".into()));
            continue;
        };
        for d in &summary.devices {
            let oom = ooms.iter().find(|o| o.device == d.device);
            cluster.rows.push(BundleRow {
                file: file.clone(),
                device: d.device,
                verdict: oom.map(|o| o.verdict),
                requested_bytes: oom.map(|o| o.requested_bytes),
                device_free_bytes: oom.and_then(|o| o.device_free_bytes),
                reserved_bytes: oom.map_or(d.reserved_bytes, |o| o.reserved_bytes),
                peak_allocated_bytes: d.peak_allocated_bytes,
                headroom_bytes: None,
            });
        }
    }
    cluster.room_bytes = cluster
        .rows
        .iter()
        .filter_map(|r| Some(r.reserved_bytes.saturating_add(r.device_free_bytes?)))
        .max();
    for r in &mut cluster.rows {
        r.headroom_bytes = cluster
            .room_bytes
            .map(|room| room.saturating_sub(r.reserved_bytes));
    }
    cluster.rows.sort_by(|a, b| {
        (a.verdict.is_none(), &a.file, a.device).cmp(&(b.verdict.is_none(), &b.file, b.device))
    });
    cluster
}

/// The table as tab-separated text (`memsight snapshot DIR`, the app's Copy): MiB with two
/// decimals, empty where a figure does not apply, a `#` line per snapshot not read.
pub fn cluster_tsv(c: &BundleCluster) -> String {
    use std::fmt::Write;
    let mib =
        |b: Option<i64>| b.map_or(String::new(), |b| format!("{:.2}", b as f64 / 1_048_576.0));
    let mut out = String::from(
        "File\tDevice\tRan out\tRequested(MB)\tDevice free(MB)\tReserved(MB)\tPeak allocated(MB)\tHeadroom(MB)\n",
    );
    for r in &c.rows {
        let verdict = match r.verdict {
            Some(OomVerdict::Fragmentation) => "fragmentation",
            Some(OomVerdict::Exhaustion) => "exhaustion",
            Some(OomVerdict::ProcessLimit) => "process_limit",
            Some(OomVerdict::NoRequest) => "no_request",
            None => "",
        };
        let _ = writeln!(
            out,
            "{}\t{}\t{verdict}\t{}\t{}\t{}\t{}\t{}",
            r.file,
            r.device,
            mib(r.requested_bytes),
            mib(r.device_free_bytes),
            mib(Some(r.reserved_bytes)),
            mib(Some(r.peak_allocated_bytes)),
            mib(r.headroom_bytes)
        );
    }
    for (file, why) in &c.unreadable {
        let _ = writeln!(out, "# {file}: not read: {why}");
    }
    if c.left_out > 0 {
        let _ = writeln!(
            out,
            "# {} more snapshots not read (at most {MAX_FILES} are)",
            c.left_out
        );
    }
    out
}
