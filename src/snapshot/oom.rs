//! Why it ran out: the `oom` events of a snapshot (torch_npu's `OOM_SNAPSHOT_ENABLE` bundle ends
//! its trace with one) against the allocator's segments at that moment, and the per-module
//! memory torch_npu writes beside it (`device_{N}_memUsageInfo_{ts}.csv`).
//!
//! An `oom` event carries the failed request (`size`) and what the device had free
//! (`device_free`; older writers put it in `addr`). The allocator's free memory at the event is
//! what lies free inside its segments ([`super::segments::allocator_state_at`]). The verdict:
//! - **fragmentation** when the segments' free memory plus the device's could have held the
//!   request but no single free piece was large enough (the memory was there, in pieces:
//!   `expandable_segments:True` or freeing the cache helps);
//! - **exhaustion** when even all of it was less than the request (the working set is too big:
//!   hold less — recompute, smaller batches, sharding).

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::model::{Action, AllocatorSnapshot, StackId};
use super::segments::allocator_state_at;

/// What an out-of-memory was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OomVerdict {
    /// Enough memory was free in all, but in pieces each smaller than the request.
    Fragmentation,
    /// Even all the free memory was less than the request.
    Exhaustion,
}

/// One `oom` event and the allocator's state at it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct OomReport {
    /// The device.
    pub device: i64,
    /// The event's index in the device's trace.
    pub event: usize,
    /// The failed request, bytes.
    pub requested_bytes: i64,
    /// What the device had free, bytes (when the event says).
    pub device_free_bytes: Option<i64>,
    /// The allocator's segments then, bytes.
    pub reserved_bytes: i64,
    /// Handed out then, bytes.
    pub allocated_bytes: i64,
    /// Free inside the segments then, bytes.
    pub free_in_segments_bytes: i64,
    /// The largest free piece of any segment then, bytes.
    pub largest_free_block_bytes: i64,
    /// What it was.
    pub verdict: OomVerdict,
    /// Where the failed request came from.
    #[serde(skip)]
    pub stack: StackId,
}

/// The `oom` events of every device, in trace order.
pub fn oom_reports(s: &AllocatorSnapshot) -> Vec<OomReport> {
    let mut out = Vec::new();
    for (d, trace) in s.traces.iter().enumerate() {
        let device = d as i64;
        for (k, e) in trace.iter().enumerate() {
            if e.action != Action::Oom {
                continue;
            }
            let state = allocator_state_at(s, device, k);
            let device_free = e
                .device_free
                .or_else(|| i64::try_from(e.addr).ok())
                .filter(|&f| f >= 0);
            let could_hold = state.free.saturating_add(device_free.unwrap_or(0));
            out.push(OomReport {
                device,
                event: k,
                requested_bytes: e.size,
                device_free_bytes: device_free,
                reserved_bytes: state.reserved,
                allocated_bytes: state.allocated,
                free_in_segments_bytes: state.free,
                largest_free_block_bytes: state.largest_free,
                verdict: if could_hold >= e.size {
                    OomVerdict::Fragmentation
                } else {
                    OomVerdict::Exhaustion
                },
                stack: e.stack,
            });
        }
    }
    out
}

/// One row of `device_{N}_memUsageInfo_{ts}.csv`: a CANN module's memory at the OOM.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ModuleUsage {
    /// The device (`N` of the file name).
    pub device: i64,
    /// `moduleName`.
    pub module: String,
    /// `curMemSize(MB)`.
    pub current_mb: f64,
    /// `memPeakSize(MB)`.
    pub peak_mb: f64,
}

/// The device of a `device_{N}_memUsageInfo_{ts}.csv` name.
fn usage_file_device(name: &str) -> Option<i64> {
    let rest = name.strip_prefix("device_")?;
    let (n, tail) = rest.split_once('_')?;
    (tail.starts_with("memUsageInfo") && tail.to_ascii_lowercase().ends_with(".csv"))
        .then(|| n.parse().ok())?
}

/// The memUsageInfo files in `dir` (the snapshot's folder), newest per device: (device, path).
pub fn usage_files(dir: &Path) -> Vec<(i64, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(i64, String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            Some((usage_file_device(&name)?, name, e.path()))
        })
        .collect();
    // Names end in the time: the last per device is the newest.
    files.sort();
    let mut out: Vec<(i64, PathBuf)> = Vec::new();
    for (d, _, p) in files {
        match out.last_mut() {
            Some(last) if last.0 == d => last.1 = p,
            _ => out.push((d, p)),
        }
    }
    out
}

/// The rows of a memUsageInfo file, largest current size first; rows that are not
/// `name,number,number` are skipped. Read as every CSV is: a regular file, bounded.
pub fn read_usage(device: i64, path: &Path) -> Result<Vec<ModuleUsage>, String> {
    let file = crate::ingest::safe_fs::open_regular(path)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    // A memUsageInfo file is a few dozen rows; more than a MiB is not one.
    let mut rd = csv::ReaderBuilder::new()
        .flexible(true)
        .from_reader(std::io::Read::take(file, 1 << 20));
    let mut out = Vec::new();
    for rec in rd.records() {
        let Ok(rec) = rec else { continue };
        let num = |i: usize| rec.get(i).and_then(|v| v.trim().parse::<f64>().ok());
        let (Some(name), Some(cur), Some(peak)) = (rec.get(0), num(1), num(2)) else {
            continue;
        };
        out.push(ModuleUsage {
            device,
            module: name.trim().to_string(),
            current_mb: cur,
            peak_mb: peak,
        });
    }
    out.sort_by(|a, b| b.current_mb.total_cmp(&a.current_mb));
    Ok(out)
}

/// Every memUsageInfo row beside the snapshot at `pickle`.
pub fn usage_beside(pickle: &Path) -> Vec<ModuleUsage> {
    let dir = pickle.parent().unwrap_or(Path::new("."));
    usage_files(dir)
        .into_iter()
        .flat_map(|(d, p)| read_usage(d, &p).unwrap_or_default())
        .collect()
}

/// The `OOM_DETAIL` rows of the msMemScope dumps beside an OOM snapshot (`memscope_dump_*.csv`
/// or `.db` in its folder or up to three folders below, as msMemScope's
/// `msmemscope_*/device_*/dump/` layout puts them): (the dump, relative to the folder, and its
/// rows) for each dump that has any. A dump that cannot be read is left out.
pub fn memscope_oom_beside(
    pickle: &Path,
) -> Vec<(String, Vec<crate::ingest::msmemscope::OomDetail>)> {
    let dir = pickle.parent().unwrap_or(Path::new("."));
    let dumps = crate::ingest::safe_fs::files_under(dir, 3, &|name| {
        let name = name.to_ascii_lowercase();
        name.starts_with("memscope_dump_") && (name.ends_with(".csv") || name.ends_with(".db"))
    });
    let control = crate::ingest::LoadControl::new();
    dumps
        .into_iter()
        .filter_map(|p| {
            let rows = crate::ingest::msmemscope::oom_details(&p, &control).ok()?;
            let shown = p.strip_prefix(dir).unwrap_or(&p).display().to_string();
            (!rows.is_empty()).then_some((shown, rows))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::snapshot::model::{Block, Event, Segment};

    fn oom(requested: i64, device_free: i64) -> Event {
        let mut e = Event::bare(Action::Oom, device_free as u64, requested);
        e.device_free = Some(device_free);
        e
    }

    /// One 100-byte segment: blocks held at 0 (30) and 60 (20); free 30..60 and 80..100.
    fn snapshot(trace: Vec<Event>) -> AllocatorSnapshot {
        let block = |address, size, state: &str| Block {
            address,
            size,
            requested_size: size,
            state: state.into(),
            stack: 0,
        };
        AllocatorSnapshot {
            segments: vec![Segment {
                device: 0,
                address: 0,
                total_size: 100,
                allocated_size: 50,
                active_size: 50,
                stream: 0,
                segment_type: "large".into(),
                is_expandable: false,
                blocks: vec![
                    block(0, 30, "active_allocated"),
                    block(30, 30, "inactive"),
                    block(60, 20, "active_allocated"),
                    block(80, 20, "inactive"),
                ],
            }],
            traces: vec![trace],
            stacks: vec![Vec::new()],
            ..Default::default()
        }
    }

    #[test]
    fn pieces_too_small_are_fragmentation_and_too_little_is_exhaustion() {
        // 50 free in pieces of 30 and 20: a request of 40 fits in all but in no piece.
        let r = oom_reports(&snapshot(vec![oom(40, 0)]));
        assert_eq!(r.len(), 1);
        assert_eq!(
            (r[0].free_in_segments_bytes, r[0].largest_free_block_bytes),
            (50, 30)
        );
        assert_eq!(r[0].verdict, OomVerdict::Fragmentation);
        // 50 free + 10 on the device < 70.
        let r = oom_reports(&snapshot(vec![oom(70, 10)]));
        assert_eq!(r[0].verdict, OomVerdict::Exhaustion);
        assert_eq!(r[0].device_free_bytes, Some(10));
        // No oom event: nothing to say.
        assert!(oom_reports(&snapshot(vec![Event::bare(Action::Alloc, 200, 8)])).is_empty());
    }

    #[test]
    fn usage_files_are_found_by_name_newest_per_device() {
        assert_eq!(
            usage_file_device("device_3_memUsageInfo_20261125101500.csv"),
            Some(3)
        );
        assert_eq!(usage_file_device("device_x_memUsageInfo_1.csv"), None);
        assert_eq!(usage_file_device("memory_record.csv"), None);
        let tmp = tempfile::tempdir().unwrap();
        for (name, body) in [
            (
                "device_0_memUsageInfo_20261125101500.csv",
                "moduleName,curMemSize(MB),memPeakSize(MB)\nOLD,1,1\n",
            ),
            (
                "device_0_memUsageInfo_20261125101600.csv",
                "moduleName,curMemSize(MB),memPeakSize(MB)\nRUNTIME,12.5,40\nHCCL,300,301\nbad,row\n",
            ),
        ] {
            std::fs::write(tmp.path().join(name), body).unwrap();
        }
        let rows = usage_beside(&tmp.path().join("oom_snapshot_1_20261125101600.pickle"));
        let names: Vec<&str> = rows.iter().map(|r| r.module.as_str()).collect();
        assert_eq!(names, ["HCCL", "RUNTIME"], "the newest file, largest first");
        assert_eq!((rows[1].current_mb, rows[1].peak_mb), (12.5, 40.0));
    }
}
