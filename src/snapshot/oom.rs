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

use super::fragmentation::fragmentation_of;
use super::model::{Action, AllocatorSnapshot, StackId};
use super::segments::allocator_state_at;
use crate::model::Lang;

/// What an out-of-memory was.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OomVerdict {
    /// Enough memory was free in all, but in pieces each smaller than the request.
    Fragmentation,
    /// Even all the free memory was less than the request.
    Exhaustion,
    /// The device had the request free, but the allocator could not get it: a limit on the
    /// process (`set_per_process_memory_fraction`, another process's reservation), not the
    /// device running out.
    ProcessLimit,
    /// The event names no request (a size of 0 or less): nothing can be said of why.
    NoRequest,
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
    /// What to do about it: follows the verdict (a fragmentation fix only for fragmentation).
    pub advice: OomAdvice,
    /// [`OomAdvice::english`] for the snapshot's allocator (what the CLI and `explain` print).
    pub advice_text: String,
    /// Where the failed request came from.
    #[serde(skip)]
    pub stack: StackId,
}

/// What to do about an out-of-memory: one per verdict, so that no fix contradicts it (a cap or an
/// exhausted device is not fragmentation: `expandable_segments` does not help there, as the
/// re-runs of the real H100 OOMs with it show).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum OomAdvice {
    /// Fragmentation: `fix` closes the largest cause, returning about `frees_bytes` to requests.
    Defragment {
        /// The fix of the largest cause at the event.
        fix: super::fragmentation::Fix,
        /// What the largest cause held then, bytes.
        frees_bytes: i64,
    },
    /// A limit on the process: raise it, or hold less, by at least `short_bytes` (the request
    /// less what was free inside the allocator's segments).
    RaiseLimitOrHoldLess {
        /// What the process lacked at least, bytes.
        short_bytes: i64,
    },
    /// The device ran out: hold at least `short_bytes` less (the request less all that was free,
    /// in the segments and on the device).
    HoldLess {
        /// What the device lacked at least, bytes.
        short_bytes: i64,
    },
    /// No request, no advice.
    Nothing,
}

/// The ways to hold less that a what-if replays, in `lang`; `tool` names where the replay is
/// made (`memsight whatif`, or the app's What if tab).
pub fn levers(lang: Lang, tool: &str) -> String {
    match lang {
        Lang::En => format!(
            "checkpointing, a smaller micro-batch or ZeRO; {tool} on a profile of the run says \
             which gets under"
        ),
        Lang::Zh => format!(
            "重计算（checkpointing）、减小微批大小或 ZeRO；在本次运行的性能数据上用 {tool} 可看出\
             哪一项能降到以下"
        ),
    }
}

/// Where the CLI replays a what-if, for [`levers`].
pub const WHATIF_COMMAND: &str = "memsight whatif";

/// A size the way the CLI prints it: MiB with two decimals, `MB`.
pub fn cli_mb(bytes: i64) -> String {
    format!("{:.2} MB", crate::model::bytes_to_mib(bytes))
}

impl OomAdvice {
    /// The advice for an OOM with `verdict`, from the figures at its event and the fix of the
    /// largest fragmentation cause then (`None` when nothing was free).
    pub fn of(
        verdict: OomVerdict,
        asked: i64,
        free_in_segments: i64,
        device_free: Option<i64>,
        largest_cause: Option<(super::fragmentation::Fix, i64)>,
    ) -> OomAdvice {
        let short = |free: i64| asked.saturating_sub(free).max(0);
        match verdict {
            OomVerdict::Fragmentation => match largest_cause {
                Some((fix, frees_bytes)) => OomAdvice::Defragment { fix, frees_bytes },
                None => OomAdvice::Nothing,
            },
            OomVerdict::ProcessLimit => OomAdvice::RaiseLimitOrHoldLess {
                short_bytes: short(free_in_segments),
            },
            OomVerdict::Exhaustion => OomAdvice::HoldLess {
                short_bytes: short(free_in_segments.saturating_add(device_free.unwrap_or(0))),
            },
            OomVerdict::NoRequest => OomAdvice::Nothing,
        }
    }

    /// Whether the advice is to hold less ([`levers`] says how).
    pub fn holds_less(self) -> bool {
        matches!(
            self,
            OomAdvice::RaiseLimitOrHoldLess { .. } | OomAdvice::HoldLess { .. }
        )
    }

    /// The advice in `lang`, for the allocator settings variable `conf`
    /// (`PYTORCH_CUDA_ALLOC_CONF` or `PYTORCH_NPU_ALLOC_CONF`), sizes written by `size`;
    /// empty for [`OomAdvice::Nothing`].
    pub fn render(self, lang: Lang, conf: &str, size: &dyn Fn(i64) -> String) -> String {
        match (self, lang) {
            (OomAdvice::Defragment { fix, frees_bytes }, Lang::En) => format!(
                "{} (returns about {} held in pieces to requests)",
                fix.render(lang, conf),
                size(frees_bytes)
            ),
            (OomAdvice::Defragment { fix, frees_bytes }, Lang::Zh) => format!(
                "{}（约可把 {} 碎片内存重新用于申请）",
                fix.render(lang, conf),
                size(frees_bytes)
            ),
            (OomAdvice::RaiseLimitOrHoldLess { short_bytes }, Lang::En) => format!(
                "raise the process's limit or lower the peak by at least {} \
                 (expandable_segments will not help)",
                size(short_bytes)
            ),
            (OomAdvice::RaiseLimitOrHoldLess { short_bytes }, Lang::Zh) => format!(
                "提高进程的内存上限，或把峰值至少降低 {}（expandable_segments 无济于事）",
                size(short_bytes)
            ),
            (OomAdvice::HoldLess { short_bytes }, Lang::En) => format!(
                "lower the peak by at least {} (expandable_segments will not help)",
                size(short_bytes)
            ),
            (OomAdvice::HoldLess { short_bytes }, Lang::Zh) => format!(
                "把峰值至少降低 {}（expandable_segments 无济于事）",
                size(short_bytes)
            ),
            (OomAdvice::Nothing, _) => String::new(),
        }
    }

    /// The advice in English with the CLI's sizes: what the JSON holds (`advice_text`).
    pub fn english(self, conf: &str) -> String {
        self.render(Lang::En, conf, &cli_mb)
    }

    /// The advice as a line of its own: a fragmentation fix is introduced as the fix
    /// (`the fix: …`); empty for [`OomAdvice::Nothing`].
    pub fn line(self, lang: Lang, conf: &str, size: &dyn Fn(i64) -> String) -> String {
        let text = self.render(lang, conf, size);
        match (self, lang) {
            (OomAdvice::Defragment { .. }, Lang::En) => format!("the fix: {text}"),
            (OomAdvice::Defragment { .. }, Lang::Zh) => format!("修复：{text}"),
            _ => text,
        }
    }
}

impl OomVerdict {
    /// What the verdict means, in `lang`.
    pub fn render(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (OomVerdict::Fragmentation, Lang::En) => {
                "fragmentation (enough was free, in pieces too small)"
            }
            (OomVerdict::Fragmentation, Lang::Zh) => "碎片化（内存足够，但被切成了过小的块）",
            (OomVerdict::Exhaustion, Lang::En) => "exhaustion (not enough was free)",
            (OomVerdict::Exhaustion, Lang::Zh) => "耗尽（空闲内存不够）",
            (OomVerdict::ProcessLimit, Lang::En) => {
                "a limit on the process (the device had it free; a per-process memory fraction \
                 or another process's reservation)"
            }
            (OomVerdict::ProcessLimit, Lang::Zh) => {
                "进程上限（设备上有足够的空闲内存，但本进程拿不到：进程内存比例上限，或被其他进程占用）"
            }
            (OomVerdict::NoRequest, Lang::En) => {
                "no verdict (the event asked for no bytes: a size of 0 or less, which no \
                 allocator writes)"
            }
            (OomVerdict::NoRequest, Lang::Zh) => {
                "无结论（该事件申请的字节数为 0 或负数，分配器从不写出这样的事件）"
            }
        }
    }
}

impl OomReport {
    /// Where and why it ran out, in `lang`, sizes written by `size`: the request, what was free
    /// in the allocator's segments and on the device, and the verdict.
    pub fn headline(&self, lang: Lang, size: &dyn Fn(i64) -> String) -> String {
        let (d, k) = (self.device, self.event);
        let (asked, free) = (
            size(self.requested_bytes),
            size(self.free_in_segments_bytes),
        );
        let largest = size(self.largest_free_block_bytes);
        let verdict = self.verdict.render(lang);
        match lang {
            Lang::En => {
                let device = self.device_free_bytes.map_or("unknown".to_string(), size);
                format!(
                    "OUT OF MEMORY on device {d} at event {k}: asked for {asked}; free inside \
                     the allocator's segments {free} (largest piece {largest}), free on the \
                     device {device}: {verdict}"
                )
            }
            Lang::Zh => {
                let device = self.device_free_bytes.map_or("未知".to_string(), size);
                format!(
                    "设备 {d} 在事件 {k} 内存不足：申请 {asked}；分配器内存段中空闲 {free}\
                     （最大空闲块 {largest}），设备空闲 {device}：{verdict}"
                )
            }
        }
    }
}

/// Why a request of `asked` bytes failed: the allocator's own free pieces held enough
/// (fragmentation); else the device reported enough free (a limit on the process); else the
/// cache and the device together held enough (fragmentation: freeing the cache would have let
/// it fit); else nothing was left (exhaustion).
fn verdict(asked: i64, free_in_segments: i64, device_free: Option<i64>, both: i64) -> OomVerdict {
    if asked <= 0 {
        OomVerdict::NoRequest
    } else if free_in_segments >= asked {
        OomVerdict::Fragmentation
    } else if device_free.is_some_and(|d| d >= asked) {
        OomVerdict::ProcessLimit
    } else if both >= asked {
        OomVerdict::Fragmentation
    } else {
        OomVerdict::Exhaustion
    }
}

/// How many `oom` events of one device are explained at each end of its trace: the first
/// (where it first ran out) and the last (the one that ended the run). Each costs a replay of
/// the trace after it, so a trace of 40,000 of them is not replayed 40,000 times.
pub const OOMS_EXPLAINED_AT_EACH_END: usize = 8;

/// How many `oom` events the snapshot has in all, on every device.
pub fn oom_event_count(s: &AllocatorSnapshot) -> usize {
    s.traces
        .iter()
        .map(|t| t.iter().filter(|e| e.action == Action::Oom).count())
        .sum()
}

/// The `oom` events of every device, in trace order: per device, the first and the last
/// [`OOMS_EXPLAINED_AT_EACH_END`] ([`oom_event_count`] says how many there are in all).
pub fn oom_reports(s: &AllocatorSnapshot) -> Vec<OomReport> {
    let mut out = Vec::new();
    for (d, trace) in s.traces.iter().enumerate() {
        let device = d as i64;
        let ooms: Vec<usize> = (0..trace.len())
            .filter(|&k| trace[k].action == Action::Oom)
            .collect();
        let n = OOMS_EXPLAINED_AT_EACH_END;
        let kept = ooms
            .iter()
            .enumerate()
            .filter(|&(i, _)| i < n || i + n >= ooms.len())
            .map(|(_, &k)| k);
        for k in kept {
            let e = &trace[k];
            let state = allocator_state_at(s, device, k);
            let device_free = e
                .device_free
                .or_else(|| i64::try_from(e.addr).ok())
                .filter(|&f| f >= 0);
            let could_hold = state.free.saturating_add(device_free.unwrap_or(0));
            let verdict = verdict(e.size, state.free, device_free, could_hold);
            let largest_cause = (verdict == OomVerdict::Fragmentation)
                .then(|| {
                    let f = fragmentation_of(s, &state, device, k, e.stream);
                    f.remedy.zip(f.largest().map(|c| c.1))
                })
                .flatten();
            let advice = OomAdvice::of(verdict, e.size, state.free, device_free, largest_cause);
            out.push(OomReport {
                device,
                event: k,
                requested_bytes: e.size,
                device_free_bytes: device_free,
                reserved_bytes: state.reserved,
                allocated_bytes: state.allocated,
                free_in_segments_bytes: state.free,
                largest_free_block_bytes: state.largest_free,
                verdict,
                advice,
                advice_text: advice.english(s.backend.alloc_conf()),
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

/// The time in a bundle file's name: its last run of 8 or more digits
/// (`oom_snapshot_4242_20261125101600.pickle`, `device_0_memUsageInfo_20261125101600.csv`).
fn name_time(name: &str) -> Option<u64> {
    name.split(|c: char| !c.is_ascii_digit())
        .rfind(|d| d.len() >= 8)
        .and_then(|d| d.parse().ok())
}

/// The memUsageInfo files in `dir` (the snapshot's folder), one per device: (device, path).
/// With `near` (the snapshot's own time, from its name), each device's file whose time is
/// closest to it, so that two OOM bundles in one folder do not mix; else the newest.
pub fn usage_files(dir: &Path, near: Option<u64>) -> Vec<(i64, PathBuf)> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut files: Vec<(i64, String, PathBuf)> = rd
        .filter_map(Result::ok)
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let device = usage_file_device(&name)?;
            // A link out of the MCP server's roots is not part of the bundle.
            let path = e.path();
            crate::ingest::safe_fs::readable(&path).then_some((device, name, path))
        })
        .collect();
    files.sort();
    let distance = |name: &str| match (near, name_time(name)) {
        (Some(n), Some(t)) => n.abs_diff(t),
        (Some(_), None) => u64::MAX,
        // No time to match: the last name (names end in the time) is the newest.
        (None, _) => 0,
    };
    let mut out: Vec<(i64, PathBuf, u64)> = Vec::new();
    for (d, name, p) in files {
        let dist = distance(&name);
        match out.last_mut() {
            Some(last) if last.0 == d => {
                if dist <= last.2 {
                    *last = (d, p, dist);
                }
            }
            _ => out.push((d, p, dist)),
        }
    }
    out.into_iter().map(|(d, p, _)| (d, p)).collect()
}

/// The most of a memUsageInfo file read: a few dozen rows; past a MiB it is no such file.
const USAGE_MAX_BYTES: u64 = 1 << 20;

/// The modules of a memUsageInfo file, largest current size first, and what was not read.
/// Columns are found by header name (`moduleName`, `curMemSize(MB)`, `memPeakSize(MB)`), so
/// their order does not matter; a file without a header is read by position and says so. Rows
/// whose sizes are not numbers are skipped and counted; a file past a MiB is cut and says so.
pub fn read_usage(
    device: i64,
    path: &Path,
) -> Result<(Vec<ModuleUsage>, Vec<crate::model::Message>), crate::model::Cause> {
    use crate::model::{Cause, Message};
    let shown = path.display().to_string();
    let failed = |e: std::io::Error| Cause::io(format!("{shown}: {e}"), Some(shown.clone()), &e);
    let file = crate::ingest::safe_fs::open_regular(path).map_err(failed)?;
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, USAGE_MAX_BYTES + 1),
        &mut bytes,
    )
    .map_err(failed)?;
    let mut notes = Vec::new();
    if bytes.len() as u64 > USAGE_MAX_BYTES {
        bytes.truncate(USAGE_MAX_BYTES as usize);
        notes.push(Message::UsageFileCut {
            path: shown.clone(),
            mib: USAGE_MAX_BYTES >> 20,
        });
    }
    let mut rd = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes.as_slice());
    let mut records = rd.records();
    let first = match records.next() {
        Some(Ok(r)) => r,
        Some(Err(e)) => return Err(Cause::said(format!("{shown}: {e}"))),
        None => return Ok((Vec::new(), notes)),
    };
    let find = |rec: &csv::StringRecord, name: &str| {
        rec.iter().position(|c| {
            let c = c.trim().trim_start_matches('\u{feff}');
            c.eq_ignore_ascii_case(name)
                || c.to_ascii_lowercase()
                    .starts_with(&format!("{}(", name.to_ascii_lowercase()))
        })
    };
    let (columns, header) = match find(&first, "moduleName") {
        Some(name) => {
            let need =
                |col: &str| find(&first, col).ok_or_else(|| format!("{shown}: no {col} column"));
            ((name, need("curMemSize")?, need("memPeakSize")?), true)
        }
        None => {
            notes.push(Message::UsageFileWithoutHeader {
                path: shown.clone(),
            });
            ((0, 1, 2), false)
        }
    };
    let mut out = Vec::new();
    let mut skipped = 0u64;
    let rows = (!header).then_some(Ok(first)).into_iter().chain(records);
    for rec in rows {
        let Ok(rec) = rec else {
            skipped += 1;
            continue;
        };
        let num = |i: usize| rec.get(i).and_then(|v| v.trim().parse::<f64>().ok());
        match (rec.get(columns.0), num(columns.1), num(columns.2)) {
            (Some(name), Some(cur), Some(peak)) if !name.trim().is_empty() => {
                out.push(ModuleUsage {
                    device,
                    module: name.trim().to_string(),
                    current_mb: cur,
                    peak_mb: peak,
                });
            }
            _ if rec.iter().all(|c| c.trim().is_empty()) => {}
            _ => skipped += 1,
        }
    }
    if skipped > 0 {
        notes.push(Message::UsageRowsSkipped {
            path: shown,
            count: skipped,
        });
    }
    out.sort_by(|a, b| b.current_mb.total_cmp(&a.current_mb));
    Ok((out, notes))
}

/// The memUsageInfo rows of the bundle of the snapshot at `pickle`, and what was not read.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageBeside {
    /// Every module row, by device.
    pub modules: Vec<ModuleUsage>,
    /// Files cut, without a header, rows skipped, files that could not be read.
    pub notes: Vec<crate::model::Message>,
}

/// The memUsageInfo rows beside the snapshot at `pickle`: each device's file of the same time
/// as the snapshot (by their names), else the newest.
pub fn usage_beside(pickle: &Path) -> UsageBeside {
    let dir = pickle.parent().unwrap_or(Path::new("."));
    let near = pickle
        .file_name()
        .and_then(|n| name_time(&n.to_string_lossy()));
    let mut out = UsageBeside::default();
    for (d, p) in usage_files(dir, near) {
        match read_usage(d, &p) {
            Ok((rows, notes)) => {
                out.modules.extend(rows);
                out.notes.extend(notes);
            }
            Err(cause) => out
                .notes
                .push(crate::model::Message::UsageFileUnreadable { cause }),
        }
    }
    out
}

/// The `OOM_DETAIL` rows of the msMemScope dumps beside an OOM snapshot: (the dump, relative to
/// the folder, and its rows) for each dump that has any. Only where a bundle's dumps belong are
/// looked at: `memscope_dump_*.csv` or `.db` in the snapshot's folder, or in msMemScope's own
/// layout below it (`msmemscope_*/device_*/dump/`); an unrelated dump elsewhere is not read. A
/// dump without `OOM_DETAIL` rows is found so by a byte search, not parsed; one that cannot be
/// read is left out.
pub fn memscope_oom_beside(
    pickle: &Path,
) -> Vec<(String, Vec<crate::ingest::msmemscope::OomDetail>)> {
    let dir = pickle.parent().unwrap_or(Path::new("."));
    let is_dump = |name: &str| {
        let name = name.to_ascii_lowercase();
        name.starts_with("memscope_dump_") && (name.ends_with(".csv") || name.ends_with(".db"))
    };
    let dumps: Vec<PathBuf> = crate::ingest::safe_fs::files_under(dir, 3, &is_dump)
        .into_iter()
        .filter(|p| {
            let rel: Vec<String> = p
                .strip_prefix(dir)
                .unwrap_or(p)
                .iter()
                .map(|c| c.to_string_lossy().to_ascii_lowercase())
                .collect();
            match rel.as_slice() {
                [_file] => true,
                [run, device, dump, _file] => {
                    run.starts_with("msmemscope_")
                        && device.starts_with("device_")
                        && dump == "dump"
                }
                _ => false,
            }
        })
        .collect();
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
                pool_id: (0, 0),
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
        // 50 free in pieces + 30 on the device ≥ 60: freeing the cache would have let it fit.
        let r = oom_reports(&snapshot(vec![oom(60, 30)]));
        assert_eq!(r[0].verdict, OomVerdict::Fragmentation);
        // The device had 80 free for a request of 70 that failed: the process's limit.
        let r = oom_reports(&snapshot(vec![oom(70, 80)]));
        assert_eq!(r[0].verdict, OomVerdict::ProcessLimit);
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
        let read = usage_beside(&tmp.path().join("oom_snapshot_1_20261125101600.pickle"));
        let rows = &read.modules;
        let names: Vec<&str> = rows.iter().map(|r| r.module.as_str()).collect();
        assert_eq!(
            names,
            ["HCCL", "RUNTIME"],
            "the file of its time, largest first"
        );
        assert_eq!((rows[1].current_mb, rows[1].peak_mb), (12.5, 40.0));
        assert_eq!(
            read.notes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>(),
            [format!(
                "{}: 1 row of memUsageInfo could not be read (not a name and two sizes); skipped",
                tmp.path()
                    .join("device_0_memUsageInfo_20261125101600.csv")
                    .display()
            )],
            "the bad row is counted"
        );
        // Issue 41 item 9: the older snapshot of the folder gets the older file's modules.
        let older = usage_beside(&tmp.path().join("oom_snapshot_1_20261125101500.pickle"));
        let names: Vec<&str> = older.modules.iter().map(|r| r.module.as_str()).collect();
        assert_eq!(names, ["OLD"]);
    }

    /// Issue 41 item 12: columns by header name, a headerless file by position with a note,
    /// a file past a MiB cut with a note.
    #[test]
    fn usage_columns_are_read_by_name_and_losses_are_said() {
        let tmp = tempfile::tempdir().unwrap();
        let write = |name: &str, body: &str| {
            let p = tmp.path().join(name);
            std::fs::write(&p, body).unwrap();
            p
        };
        let swapped = write(
            "device_0_memUsageInfo_1.csv",
            "memPeakSize(MB),moduleName,curMemSize(MB)\n900.5,RUNTIME,812.25\n",
        );
        let (rows, notes) = read_usage(0, &swapped).unwrap();
        assert_eq!(
            (rows[0].module.as_str(), rows[0].current_mb, rows[0].peak_mb),
            ("RUNTIME", 812.25, 900.5)
        );
        assert!(notes.is_empty(), "{notes:?}");
        let headless = write(
            "device_1_memUsageInfo_1.csv",
            "HCCL,1536,1536\nGE,64,128.75\n",
        );
        let (rows, notes) = read_usage(1, &headless).unwrap();
        assert_eq!(rows.len(), 2, "the first (largest) module is kept");
        assert_eq!(rows[0].module, "HCCL");
        assert!(matches!(
            notes.as_slice(),
            [crate::model::Message::UsageFileWithoutHeader { .. }]
        ));
        let mut big = String::from("moduleName,curMemSize(MB),memPeakSize(MB)\n");
        while big.len() <= (USAGE_MAX_BYTES as usize) + 10 {
            big.push_str("M,1,1\n");
        }
        let cut = write("device_2_memUsageInfo_1.csv", &big);
        let (_, notes) = read_usage(2, &cut).unwrap();
        assert!(
            notes
                .iter()
                .any(|n| matches!(n, crate::model::Message::UsageFileCut { .. })),
            "{notes:?}"
        );
    }

    /// Issue 41 item 7: only the bundle's own dumps are read (beside the snapshot, or in
    /// msMemScope's `msmemscope_*/device_*/dump/` layout), and a dump without OOM rows is not
    /// parsed: an unrelated dump elsewhere below the folder, even one with OOM rows, is left
    /// alone.
    #[test]
    fn only_the_bundles_dumps_are_read_for_oom_rows() {
        let tmp = tempfile::tempdir().unwrap();
        let header = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";
        let oom = "1,OOM_DETAIL,OOM_TRIGGER,OOM_Trigger,1764753084425691000,7,7,0,N/A,\"{func:halMemAlloc,req_size:1073741824,ret:7}\",,\n";
        let plain = "1,MALLOC,PTA,N/A,1764753084425691000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64}\",,\n";
        let put = |rel: &str, body: &str| {
            let p = tmp.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, format!("{header}{body}")).unwrap();
        };
        put(
            "msmemscope_7_1_ascend/device_0/dump/memscope_dump_1.csv",
            oom,
        );
        put("memscope_dump_2.csv", plain);
        put("other/run/x/memscope_dump_3.csv", oom);
        put("a/b/memscope_dump_4.csv", oom);
        let found = memscope_oom_beside(&tmp.path().join("oom_snapshot.pickle"));
        let files: Vec<String> = found.iter().map(|(f, _)| f.replace('\\', "/")).collect();
        assert_eq!(
            files,
            ["msmemscope_7_1_ascend/device_0/dump/memscope_dump_1.csv"]
        );
        assert_eq!(found[0].1.len(), 1);
    }
}
