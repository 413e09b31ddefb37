//! The dump's OOM records: the tags they put on a rank's blocks, and the records themselves
//! for an OOM bundle ([`oom_details`]).

use std::io::Read;
use std::path::Path;

use super::dump::{Dump, Rows, is_db, read_rows};
use super::events::{Event, Kind, present};
use super::open;
use super::pairing::device_name;
use crate::ingest::chunks::LoadControl;
use crate::model::{DumpProblem, Message, NULL, NameId, RankData};

/// The blocks `OOM_DETAIL` rows name (`--analysis=oom`), as the OOM column's values (`top 3`,
/// `recent 1`: their places in msMemScope's lists; `#2 top 3` when the process ran out more
/// than once), and a note per OOM with the request that failed. A record names the block of
/// this rank at its `ptr` held at the OOM's time; records naming none are counted in the note.
/// `rare`: the process's OOM records and MSTX ranges, in time order.
pub(super) fn oom_tags(
    dump: &Dump,
    rare: &[&Event],
    dev: &str,
    row_addr: &[Option<u64>],
    data: &mut RankData,
) -> Vec<NameId> {
    let rows = data.operators.len();
    let mut oom: Vec<&Event> = rare
        .iter()
        .filter(|e| matches!(e.kind, Kind::OomTrigger | Kind::OomTop | Kind::OomRecent))
        .copied()
        .collect();
    if oom.is_empty() {
        return vec![0; rows];
    }
    // msMemScope writes a trigger, then its records: file order groups them.
    oom.sort_by_key(|e| e.order);
    let mine =
        |e: &Event| e.device.is_none() || device_name(dump, e.device, "").as_deref() == Some(dev);
    let triggers = oom.iter().filter(|e| e.kind == Kind::OomTrigger).count();
    let mut labels: Vec<Vec<String>> = vec![Vec::new(); rows];
    let ops = &data.operators;
    let origin = data.records.time_ns.first().copied().unwrap_or(0);
    // The trigger being read: (trigger, its number, top and recent records, records unmatched).
    let mut current: Option<(&Event, usize, u64, u64, u64)> = None;
    let mut notes = Vec::new();
    let flush = |c: Option<(&Event, usize, u64, u64, u64)>, notes: &mut Vec<Message>| {
        if let Some((t, _, top, recent, unmatched)) = c {
            notes.push(Message::MemScopeOom {
                after_ns: t.ts.saturating_sub(origin),
                func: t.oom().func.clone().unwrap_or_default(),
                request: t.oom().req_size,
                ret: t.oom().ret,
                held: (top + recent).saturating_sub(unmatched),
                unmatched,
            });
        }
    };
    let mut nth = 0;
    for e in oom {
        if e.kind == Kind::OomTrigger {
            flush(current.take(), &mut notes);
            nth += 1;
            current = mine(e).then_some((e, nth, 0, 0, 0));
            continue;
        }
        let Some((t, n, top, recent, unmatched)) = &mut current else {
            continue;
        };
        let at = t.ts;
        let ptr = e.oom().ptr;
        // The block at `ptr` held at the OOM: allocated by then, not freed before.
        let row = (0..rows).rev().find(|&r| {
            row_addr.get(r).copied().flatten().is_some()
                && row_addr.get(r).copied().flatten() == ptr
                && ops.alloc_time[r] != NULL
                && ops.alloc_time[r] <= at
                && (ops.release_time[r] == NULL || ops.release_time[r] > at)
        });
        let (kind, count) = if e.kind == Kind::OomTop {
            ("top", top)
        } else {
            ("recent", recent)
        };
        *count += 1;
        match row {
            Some(r) => {
                let prefix = if triggers > 1 {
                    format!("#{n} ")
                } else {
                    String::new()
                };
                labels[r].push(format!("{prefix}{kind} {count}"));
            }
            None => *unmatched += 1,
        }
    }
    flush(current, &mut notes);
    for n in notes {
        data.report.warn(n);
    }
    labels
        .iter()
        .map(|l| data.strings.intern(&l.join(" · ")))
        .collect()
}

/// What an `OOM_DETAIL` row is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum OomDetailKind {
    /// `OOM_TRIGGER`: the request that failed.
    Trigger,
    /// `OOM_TOP_ALLOC`: one of the largest blocks held.
    Top,
    /// `OOM_RECENT_ALLOC`: one of the latest blocks held.
    Recent,
}

/// One `OOM_DETAIL` row of a dump (`--analysis=oom`), as written.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct OomDetail {
    /// Which list.
    pub kind: OomDetailKind,
    /// `Process Id`.
    pub pid: i64,
    /// `Device Id` as written (`0`, `N/A`).
    pub device: String,
    /// The call that failed (a trigger's `func`).
    pub func: Option<String>,
    /// The bytes it asked for (a trigger's `req_size`).
    pub request_bytes: Option<i64>,
    /// The driver's return code (a trigger's `ret`).
    pub ret: Option<i64>,
    /// A record's pool.
    pub pool: Option<String>,
    /// A record's block address.
    pub ptr: Option<u64>,
    /// A record's size, bytes.
    pub size_bytes: Option<i64>,
    /// `Call Stack(Python)`, its frames innermost first.
    pub python_stack: Vec<String>,
}

/// The `OOM_DETAIL` rows of the dump at `path` (CSV or SQLite), in file order: each trigger
/// followed by the records msMemScope listed for it. Only those rows are kept, the first
/// 10,000 of them: memory is bounded by them, not by the dump.
pub fn oom_details(path: &Path, control: &LoadControl) -> Result<Vec<OomDetail>, DumpProblem> {
    // Most dumps have no OOM rows: a byte search (no parsing, one block in memory) says so
    // before the dump is read whole. A DB is queried as it is.
    if !is_db(path) && !mentions(path, b"OOM_DETAIL")? {
        return Ok(Vec::new());
    }
    let dump = read_rows(path, control, Rows::Oom)?;
    let mut rows: Vec<&Event> = dump
        .rare
        .iter()
        .filter(|e| matches!(e.kind, Kind::OomTrigger | Kind::OomTop | Kind::OomRecent))
        .collect();
    rows.sort_by_key(|e| e.order);
    Ok(rows
        .into_iter()
        .map(|e| OomDetail {
            kind: match e.kind {
                Kind::OomTrigger => OomDetailKind::Trigger,
                Kind::OomTop => OomDetailKind::Top,
                _ => OomDetailKind::Recent,
            },
            pid: e.pid,
            device: e
                .device
                .and_then(|d| dump.devices.get(d as usize).cloned())
                .unwrap_or_else(|| "N/A".into()),
            func: e.oom().func.clone(),
            request_bytes: e.oom().req_size,
            ret: e.oom().ret,
            pool: e.oom().pool.clone(),
            ptr: e.oom().ptr,
            size_bytes: present(e.size),
            python_stack: dump
                .texts
                .get(e.python)
                .split(['\n', ';'])
                .map(str::trim)
                .filter(|f| !f.is_empty())
                .map(str::to_string)
                .collect(),
        })
        .collect())
}

/// Whether the file at `path` holds `needle`, read in blocks (a regular file only).
pub(super) fn mentions(path: &Path, needle: &[u8]) -> Result<bool, DumpProblem> {
    let mut file = open(path)?;
    let finder = memchr::memmem::Finder::new(needle);
    let mut buf = vec![0u8; 1 << 20];
    let keep = needle.len().saturating_sub(1);
    let mut filled = 0;
    loop {
        let n = file
            .read(&mut buf[filled..])
            .map_err(|e| DumpProblem::unreadable(path.display(), e))?;
        if n == 0 {
            return Ok(false);
        }
        filled += n;
        if finder.find(&buf[..filled]).is_some() {
            return Ok(true);
        }
        // Keep the tail a needle could straddle.
        let tail = filled.saturating_sub(keep);
        buf.copy_within(tail..filled, 0);
        filled -= tail;
    }
}
