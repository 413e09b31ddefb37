//! msMemScope dumps (`memscope_dump_{timestamp}.csv`, Ascend's memory-analysis tool, written
//! under `msmemscope_{PID}_{timestamp}_ascend/device_{id}/dump/`): a rank per (process, device).
//!
//! - **Rows** are events (`ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device
//!   Id,Ptr,Attr,Call Stack(Python),Call Stack(C)`), not in time order (frees are written before
//!   later mallocs) and from several processes; they are read whole, in parts on every core,
//!   then sorted by time (file order on ties) and kept as runs of those parts (`time_order`).
//!   MALLOCs and FREEs, ops, and the few OOM and MSTX rows are kept apart, each kind as
//!   small as what is read of it (a 1 GB dump holds millions of each).
//!   Older dumps write µs in the `(ns)` column: a file whose median timestamp (of up to
//!   4,096 rows at even steps of the file) is below 10¹⁷ (1973 in ns) is read as µs. A row
//!   whose time lies more than a week from the median is left out and counted (one corrupt
//!   cell must not move the origin to 1970).
//! - **Blocks**: `MALLOC` and `FREE` paired per process by `allocation_id` (same id, same
//!   block; kept in a list per process, `open_blocks`), else by pool and address in time
//!   order. A `FREE` whose `Device Id` is `N/A` (HAL frees of older dumps) belongs to its
//!   block's device. The framework's pools (`PTA`, `MindSpore`, `ATB`, `PTA_WORKSPACE`) are
//!   the blocks of a device, like operator_memory; the driver's (`HAL`) are the segments
//!   those pools sit in, shown as the **APP** curve (the process's device memory) unless
//!   `process_used` gives it. A device with driver or host events only (`Device Id` `host`,
//!   `HOST`, `HOST_PINNED`: host memory, the `cpu` device) has those as its blocks.
//! - **Curves**: Operator Allocated / Reserved from the pool's `used` / `total` after each
//!   event (summed over pools), else the running sum of its live blocks; APP from
//!   `process_used`; Device from `device_used` (the whole card). Made on every core, in
//!   stretches of the events that each start from the pools' states the ones before leave
//!   (`curves`, `pool_totals`), before anything else of the rank; when every block has one
//!   place (one process and device, no host pool: `OnePlace`), before the events are paired.
//! - **Names and stacks**: a block is named by the innermost `ATEN_START`/`ATEN_END` (or
//!   `ATB_*`) op on its own thread at its allocation ([`super::stacks`]); its Python stack is
//!   its `MALLOC` row's `Call Stack(Python)` (frames on lines or `;`-separated, innermost first).
//! - The same events come as `memscope_dump_*.db` (table `memscope_dump`, the same column
//!   names; Insight adds tables of its own to it, which are not read).
//! - `Attr` comes in two dialects, `{allocation_id:4,addr:0x…,size:16}` and JSON
//!   `{"allocation_id":"4",…}`; `Ptr` and `addr` are decimal or `0x…` hex.
//!
//! The modules, in the order a load goes through them: `dump` reads the rows (their cells by
//! `cells`) into the `events` of a `Dump`, sorted by `time_order`; `pairing` makes its blocks
//! (through `open_blocks`) and `op_spans` its ops' spans; `curves` and `pool_totals` make a
//! rank's curves, `block_rows` its blocks' table, `oom` the tags of its OOM records; this file
//! is the importer and builds each rank from those. Each module's tests sit beside it, with
//! what they share in `test_support`.

mod block_rows;
mod cells;
mod curves;
mod dump;
mod events;
mod oom;
mod op_spans;
mod open_blocks;
mod pairing;
mod pool_totals;
#[cfg(test)]
mod test_support;
mod time_order;

use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::chunks::LoadControl;
use super::error::{LoadError, NoDataReason};
use super::importer::Importer;
use super::prefetch_budget::Reservation;
use super::shared_read::SharedRead;
use crate::model::{
    BlockTags, CallStacks, DataSource, DeviceMemory, DumpProblem, Format, Interner, MemoryRecords,
    Message, NO_STACK, NULL, NameId, Prefetch, RankData, RankInfo, StackSource, Step, StepSource,
    Steps, TagKind,
};
use block_rows::{BlockRows, cached, unnamed_rows};
pub use cells::{Attr, OomAttr, parse_attr};
use curves::{CurveEvent, rank_curves};
use dump::{Columns, Dump, is_db, read_path};
use events::{Event, Kind, MemEvent, present};
use oom::oom_tags;
pub use oom::{OomDetail, OomDetailKind, oom_details};
use op_spans::{OpSpans, host_ops, op_spans};
use pairing::{
    Block, OnePlace, Paired, Parts, allocations_without_device, device_name, frees_without_device,
    is_framework_pool, makes_a_block,
};

/// The importer's name (the `source` of its ranks).
pub const NAME: &str = "msmemscope";

/// The columns a dump starts with.
const HEADER_START: &[u8] = b"ID,Event,Event Type,Name,Timestamp";

/// msMemScope dumps.
pub struct MemScopeDumps;

/// The one instance, listed in [`super::importers::IMPORTERS`].
pub static MEMSCOPE_DUMPS: MemScopeDumps = MemScopeDumps;

fn open(path: &Path) -> Result<std::fs::File, DumpProblem> {
    super::safe_fs::open_regular(path).map_err(|e| DumpProblem::unreadable(path.display(), e))
}

impl Importer for MemScopeDumps {
    fn name(&self) -> &'static str {
        NAME
    }

    fn looks_for(&self) -> &'static str {
        "*.csv / memscope_dump_*.db (msMemScope dumps)"
    }

    fn wants(&self, file_name: &str) -> bool {
        let l = file_name.to_ascii_lowercase();
        l.ends_with(".csv") || (l.starts_with("memscope_dump") && l.ends_with(".db"))
    }

    fn recognises(&self, path: &Path, head: &[u8]) -> bool {
        if is_db(path) {
            return head.starts_with(b"SQLite format 3\0");
        }
        let head = head.strip_prefix(b"\xef\xbb\xbf").unwrap_or(head);
        if head.starts_with(HEADER_START) {
            return true;
        }
        // The same columns in another order: the header names them all.
        let Some(line) = head.split(|&b| b == b'\n').next() else {
            return false;
        };
        let line = String::from_utf8_lossy(line);
        let cells = line.split(',').map(|c| c.trim().trim_matches('"'));
        Columns::of(cells).is_some()
    }

    /// The whole dump is read to find its ranks (a process's blocks may name no device): the
    /// bytes read go to `control`'s progress, and a cancel stops the read.
    fn ranks(&self, path: &Path, notes: &mut Vec<Message>, control: &LoadControl) -> Vec<RankInfo> {
        let shown = path.display().to_string();
        let dump = match read_path(path, control) {
            Ok(d) => d,
            Err(cause) => {
                notes.push(Message::MemScopeUnreadable { cause });
                return Vec::new();
            }
        };
        let mut paired = Paired::of(dump);
        let without_device =
            allocations_without_device(&paired.dump, &paired.blocks, &paired.parts, None);
        let mut parts: Vec<(i64, String)> = match &paired.deferred {
            Some(place) => vec![(place.pid, place.device.clone())],
            None => {
                // (Most blocks have the one before's part: those are left out before the
                // sort.)
                let mut named: Vec<(i64, u32)> = Vec::new();
                match &paired.parts {
                    Parts::All(part) => named.push(*part),
                    Parts::Each(parts) => {
                        for &part in parts.iter().flatten() {
                            if named.last() != Some(&part) {
                                named.push(part);
                            }
                        }
                    }
                }
                named.sort_unstable();
                named.dedup();
                named
                    .into_iter()
                    .map(|(pid, dev)| (pid, paired.device_names[dev as usize].clone()))
                    .collect()
            }
        };
        parts.sort_unstable();
        if parts.is_empty() {
            notes.push(if without_device > 0 {
                Message::AllocationsWithoutDevice {
                    count: without_device,
                }
            } else {
                Message::MemScopeWithoutMemory { path: shown }
            });
            return Vec::new();
        }
        let processes = {
            let mut p: Vec<i64> = parts.iter().map(|p| p.0).collect();
            p.dedup();
            p.len()
        };
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        // What was read is kept for the loads when the budget has room (read again, it took
        // half of a 1 GB dump's load); else a dump of many processes or devices is read
        // once for all its ranks.
        paired.counted = Reservation::take(paired.bytes());
        let shared = if paired.counted.is_some() {
            Some(SharedRead::holding(paired, parts.len()))
        } else {
            (parts.len() > 1).then(|| SharedRead::<Paired>::new(parts.len()))
        };
        parts
            .into_iter()
            .map(|(pid, dev)| {
                let id = dev.strip_prefix("npu:").unwrap_or(&dev).to_string();
                RankInfo {
                    rank: if processes == 1 {
                        id.clone()
                    } else {
                        format!("{id} pid {pid}")
                    },
                    // A card's number, as the Ascend exports give it (shown `NPU:0`), or `cpu`.
                    device: Some(id.clone()),
                    host: None,
                    format: Format::Imported(NAME),
                    dir: dir.clone(),
                    source: DataSource::Imported {
                        importer: NAME,
                        path: path.to_path_buf(),
                        part: format!("{pid}/{dev}"),
                        prefetch: shared
                            .as_ref()
                            .map_or_else(Prefetch::default, |s| Prefetch::new(Arc::clone(s))),
                    },
                    notes: Vec::new(),
                }
            })
            .collect()
    }

    fn load(&self, info: &RankInfo, control: &LoadControl) -> Result<RankData, LoadError> {
        self.load_with_first_look(info, control, &mut |_| {})
    }

    /// The curves are handed over as soon as they are made, before the blocks, their names
    /// and their stacks (about half of a big dump's rank).
    fn load_with_first_look(
        &self,
        info: &RankInfo,
        control: &LoadControl,
        early: &mut (dyn FnMut(RankData) + Send),
    ) -> Result<RankData, LoadError> {
        let no_data = |cause: DumpProblem| LoadError::NoData {
            rank: info.rank.clone(),
            reason: NoDataReason::MemScope(cause),
        };
        let DataSource::Imported {
            path,
            part,
            prefetch,
            ..
        } = &info.source
        else {
            return Err(no_data(DumpProblem::NotARank { part: None }));
        };
        let (pid, dev) = part
            .split_once('/')
            .and_then(|(p, d)| Some((p.parse::<i64>().ok()?, d.to_string())))
            .ok_or_else(|| {
                no_data(DumpProblem::NotARank {
                    part: Some(part.to_string()),
                })
            })?;
        let shown = path.display().to_string();
        let read = || read_path(path, control).map(Paired::of);
        let dump = match prefetch.take::<Arc<SharedRead<Paired>>>() {
            Some(shared) => shared.take_or_read(read),
            None => read().map(Arc::new),
        };
        let dump = match dump {
            Ok(d) => d,
            Err(_) if control.is_cancelled() => return Err(LoadError::Cancelled),
            Err(cause) => return Err(no_data(cause)),
        };
        let data = build_rank(info, dump, pid, &dev, &shown, early);
        if data.records.is_empty() && data.operators.is_empty() {
            return Err(LoadError::NoData {
                rank: info.rank.clone(),
                reason: NoDataReason::NoRows,
            });
        }
        Ok(data)
    }
}

/// The rank of process `pid`, device `dev`.
/// `early` is handed the curves as soon as they are made (when there are any). A dump no
/// other rank holds gives its events up as soon as the rank is done with them: its ops and
/// blocks once the spans and the rank's blocks are found, its MALLOCs and FREEs once the
/// curves and the blocks' table are made (before, the events were held to the end, with all
/// the rank made from them).
fn build_rank(
    info: &RankInfo,
    mut paired: Arc<Paired>,
    pid: i64,
    dev: &str,
    shown: &str,
    early: &mut (dyn FnMut(RankData) + Send),
) -> RankData {
    let mut data = RankData::empty(info.clone());
    // A dump whose blocks have one place: the rank's curves first, from its events, then
    // its pairing (a tenth of the time to the first curves of a 1 GB dump).
    // (Another place than the rank's, the file read again after a change: no curves.)
    let early_curves = (paired.deferred.as_ref())
        .filter(|place| place.pid == pid && place.device == dev)
        .map(|place| {
            let (records, device_memory) = one_place_curves(&paired.dump, place);
            hand_over_curves(info, records, device_memory, early, &mut data);
        });
    if paired.deferred.is_some() {
        match Arc::get_mut(&mut paired) {
            Some(p) => p.pair(),
            // (One place is one rank: no other holds the dump.)
            None => paired = Arc::new(Paired::paired_copy(&paired)),
        }
    }
    let over_held = paired.over_held;
    warn_of_dump(&paired, pid, shown, &mut data);
    // A dump no other rank holds hands its spans over (a copy of a million was a tenth of
    // the time to the curves).
    let all = match Arc::get_mut(&mut paired) {
        Some(p) => std::borrow::Cow::Owned(std::mem::take(&mut p.spans)),
        None => std::borrow::Cow::Borrowed(paired.spans.as_slice()),
    };
    let OpSpans { spans, rare } = op_spans(&paired.dump, all, pid);
    let mine = blocks_of_rank(&mut paired, pid, dev);
    // The last rank left holding the dump frees what only the ranks needed (its blocks and
    // their places are gone already when it held the dump alone from the start).
    if let Some(p) = Arc::get_mut(&mut paired) {
        p.spans = Vec::new();
        p.blocks = Vec::new();
        p.parts = Parts::default();
    }
    // The blocks' addresses are kept for the OOM records alone.
    let keep_addr = rare
        .iter()
        .any(|e| matches!(e.kind, Kind::OomTrigger | Kind::OomTop | Kind::OomRecent));
    let shown_blocks = match early_curves {
        // Made from the events' own pools: their blocks' when every FREE names its block's.
        Some(()) if paired.pools_agree => shown_blocks(&paired.dump, &mine),
        // (Handed over already: made again here, not again to `early`.)
        Some(()) => rank_curves_of(info, &paired.dump, &mine, &mut |_| {}, &mut data),
        None => rank_curves_of(info, &paired.dump, &mine, early, &mut data),
    };
    let unnamed = data.strings.intern("");
    // The blocks' table and the ops' nesting side by side: the ops need none of the blocks
    // (both number threads as the dump does) until their rows are matched to them.
    let ((mut made, to_name), nested) = rayon::join(
        || unnamed_rows(&paired.dump, &mine, &shown_blocks, keep_addr),
        || {
            let host = host_ops(&paired.dump, spans);
            (!host.is_empty()).then(|| super::stacks::NestedOps::of(host))
        },
    );
    // The events are freed beside what follows (a 1 GB dump's are ~360 MB: 20 ms).
    if let Some(p) = Arc::get_mut(&mut paired) {
        let mem = std::mem::take(&mut p.dump.mem);
        rayon::spawn(move || drop(mem));
    }
    // Then the rows named (on one core) beside the rows matched to the ops.
    let dump = &paired.dump;
    let ((names, orphans), stacks) = rayon::join(
        || {
            let texts = [&mut made.owners[..], &mut made.findings[..]];
            to_name.name(dump, texts, unnamed, &mut data.strings)
        },
        || {
            nested.map(|nested| {
                let (alloc_time, row_thread) = (&made.table.alloc_time, &made.row_thread);
                nested.attribute(alloc_time, row_thread, StackSource::Imported(NAME))
            })
        },
    );
    (made.table.name, made.orphans) = (names, orphans);
    drop(mine);
    let BlockRows {
        table,
        orphans,
        row_thread: _,
        row_python,
        owners,
        findings,
        row_addr,
    } = made;
    data.operators = table;
    data.report.warn_unpaired(orphans, over_held);
    let rare: Vec<&Event> = rare.iter().collect();
    let oom = oom_tags(dump, &rare, dev, &row_addr, &mut data);
    drop(row_addr);
    let steps = mstx_steps(dump, &rare, dev);
    if !steps.is_empty() {
        data.steps = Some(Steps::new(StepSource::Imported(NAME), steps));
    }
    // msMemScope's own columns, when any block has a value.
    for (kind, values) in [
        (TagKind::Owner, owners),
        (TagKind::Inefficient, findings),
        (TagKind::Oom, oom),
    ] {
        if values.iter().any(|&v| v != 0) {
            data.tags.push(BlockTags { kind, values });
        }
    }
    // The rows the ops ran are named by their ops (each op name interned once, not at each
    // of a million rows).
    if let Some(stacks) = &stacks {
        let mut names: Vec<Option<NameId>> = vec![None; stacks.op_names.len()];
        for (r, &op) in stacks.row_op.iter().enumerate() {
            if op != NO_STACK {
                data.operators.name[r] = cached(&mut names, op, || {
                    data.strings.intern(stacks.op_names.get(op))
                });
            }
        }
    }
    data.stacks = with_python_stacks(stacks, dump, &row_python, data.operators.len());
    data
}

/// The warnings about the dump as a whole and about process `pid`'s blocks no rank holds.
fn warn_of_dump(paired: &Paired, pid: i64, shown: &str, data: &mut RankData) {
    let Paired {
        dump,
        blocks,
        parts,
        ..
    } = paired;
    if dump.unreadable > 0 {
        data.report.warn(Message::TraceEventsUnreadable {
            path: shown.to_string(),
            count: dump.unreadable,
        });
    }
    if dump.cut_short {
        data.report.warn(Message::DumpCutShort {
            path: shown.to_string(),
        });
    }
    if dump.out_of_window > 0 {
        data.report.warn(Message::EventsOutOfWindow {
            path: shown.to_string(),
            count: dump.out_of_window,
        });
    }
    // Free-only blocks of this process that name no device: no rank can hold them.
    let deviceless = frees_without_device(dump, blocks, parts, pid);
    if deviceless > 0 {
        data.report
            .warn(Message::FreesWithoutDevice { count: deviceless });
    }
    let unplaced = allocations_without_device(dump, blocks, parts, Some(pid));
    if unplaced > 0 {
        data.report
            .warn(Message::AllocationsWithoutDevice { count: unplaced });
    }
}

/// The blocks of process `pid` on device `dev`: taken from `paired` when no other rank holds
/// it (the others' dropped in place: a copy of a dump's million blocks into new memory was 2 %
/// of the first look), else copied.
fn blocks_of_rank(paired: &mut Arc<Paired>, pid: i64, dev: &str) -> Vec<Block> {
    use rayon::prelude::*;
    let dev_id = paired.device_names.iter().position(|d| d == dev);
    let mine =
        |p: &Option<(i64, u32)>| p.is_some_and(|(p, d)| p == pid && Some(d as usize) == dev_id);
    if let Some(p) = Arc::get_mut(paired) {
        let mut blocks = std::mem::take(&mut p.blocks);
        match std::mem::take(&mut p.parts) {
            Parts::All(part) if mine(&Some(part)) => {}
            Parts::All(_) => blocks.clear(),
            Parts::Each(parts) => {
                // (`retain` visits each block once, in order: each meets its own part.)
                let mut part = parts.iter();
                blocks.retain(|_| part.next().is_some_and(mine));
            }
        }
        return blocks;
    }
    // (On every core: a dump's million blocks are copied.)
    (paired.blocks.par_iter().enumerate())
        .filter(|&(i, _)| mine(&paired.parts.get(i)))
        .map(|(_, b)| *b)
        .collect()
}

/// A rank's curves, from the events of its blocks `mine`, into `data` (and handed to `early`
/// as soon as they are made); returns whether each block is shown.
fn rank_curves_of(
    info: &RankInfo,
    dump: &Dump,
    mine: &[Block],
    early: &mut (dyn FnMut(RankData) + Send),
    data: &mut RankData,
) -> Vec<bool> {
    // Each event's block of this rank (`NOT_MINE` for none): the events are then walked in
    // time order, not looked up one by one (a sort of their indices, and a search through
    // the dump's runs for each).
    const NOT_MINE: u32 = u32::MAX;
    let mut block_of = vec![NOT_MINE; dump.mem.len()];
    for (k, b) in mine.iter().enumerate() {
        for e in [b.malloc(), b.free()].into_iter().flatten() {
            // (A dump's events are counted in u32: so are its blocks.)
            if let Some(slot) = block_of.get_mut(e) {
                *slot = u32::try_from(k).unwrap_or(NOT_MINE);
            }
        }
    }
    let shown = shown_blocks(dump, mine);

    // The curves first, on every core, handed over as soon as they are made; then the
    // blocks' rows. (Side by side, one core each, the curves took twice as long; the
    // blocks' rows are not on the way to the first look.)
    let (records, device_memory) = {
        let mem = &dump.mem;
        let events = |r: Range<usize>| {
            mem.range(r.clone())
                .zip(block_of.get(r).unwrap_or_default())
                .map(|(ev, &k)| {
                    if k == NOT_MINE {
                        return None;
                    }
                    Some(curve_event(
                        dump,
                        ev,
                        shown.get(k as usize).copied().unwrap_or(false),
                    ))
                })
        };
        rank_curves(mem.len(), &events)
    };
    hand_over_curves(info, records, device_memory, early, data);
    shown
}

/// What the curves take of a MALLOC or FREE of `dump`, `shown` or not.
fn curve_event(dump: &Dump, ev: &MemEvent, shown: bool) -> CurveEvent {
    let size = present(ev.size).unwrap_or(0).abs();
    let extras = dump.extras(ev);
    CurveEvent {
        ts: ev.ts,
        signed: if ev.malloc { size } else { -size },
        pool: ev.what,
        used: present(ev.used),
        total: present(ev.total),
        process_used: present(extras.process_used),
        device_used: present(extras.device_used),
        shown,
    }
}

/// Whether each block of `mine` (a rank's) is shown: the framework's pools' when the rank
/// has any, else every one. Found once (not at each of its events), on every core.
fn shown_blocks(dump: &Dump, mine: &[Block]) -> Vec<bool> {
    use rayon::prelude::*;
    // (Every block has a first event: `pair` makes each from its MALLOC or its FREE.)
    let pool_of = |b: &Block| dump.texts.get(b.pool);
    let framework = mine.iter().any(|b| is_framework_pool(pool_of(b)));
    mine.par_iter()
        .map(|b| !framework || is_framework_pool(pool_of(b)))
        .collect()
}

/// The curves of a dump whose blocks have one place (`place`, the rank's), from its events
/// without their blocks: every MALLOC and FREE that makes a block is the rank's, and is shown
/// by its own pool (its block's, when [`Paired::pools_agree`]).
fn one_place_curves(dump: &Dump, place: &OnePlace) -> (MemoryRecords, DeviceMemory) {
    let framework = place.pools.iter().any(|&(_, f)| f);
    let shown = |pool: u32| !framework || place.pools.iter().any(|&(p, f)| p == pool && f);
    let events = |r: Range<usize>| {
        dump.mem.range(r).map(move |ev| {
            if !makes_a_block(ev) {
                return None;
            }
            Some(curve_event(dump, ev, shown(ev.what)))
        })
    };
    rank_curves(dump.mem.len(), &events)
}

/// A rank's curves into `data`, and handed to `early` first (when there are any).
fn hand_over_curves(
    info: &RankInfo,
    records: MemoryRecords,
    device_memory: DeviceMemory,
    early: &mut (dyn FnMut(RankData) + Send),
    data: &mut RankData,
) {
    let records = Arc::new(records);
    let device_memory = Arc::new(device_memory);
    if !records.is_empty() {
        let mut first = RankData::empty(info.clone());
        first.records = Arc::clone(&records);
        first.memory_record_rows = records.len();
        first.device_memory = Arc::clone(&device_memory);
        early(first);
    }
    data.records = records;
    data.memory_record_rows = data.records.len();
    data.device_memory = device_memory;
}

/// The steps on `dev` from a process's `MSTX` ranges named `step start` (how msMemScope and
/// `mstx.range_start("step start")` mark a step), among its `rare` events (its OOM records and
/// MSTX ranges, in time order): numbered 1, 2, … in time order, each ending at the first
/// `Range_end` of its thread after it (else where the next one starts; a last step without an
/// end is left out).
fn mstx_steps(dump: &Dump, rare: &[&Event], dev: &str) -> Vec<Step> {
    let mine =
        |e: &&&Event| e.device.is_none() || device_name(dump, e.device, "").as_deref() == Some(dev);
    // The kind first: the device's name is made for the events it keeps.
    let starts: Vec<&Event> = rare
        .iter()
        .filter(|e| e.kind == Kind::RangeStart && dump.texts.get(e.what) == "step start")
        .filter(mine)
        .copied()
        .collect();
    let ends: Vec<&Event> = rare
        .iter()
        .filter(|e| e.kind == Kind::RangeEnd)
        .filter(mine)
        .copied()
        .collect();
    let mut steps = Vec::new();
    for (k, s) in starts.iter().enumerate() {
        let next = starts.get(k + 1).map(|n| n.ts);
        let end = ends
            .iter()
            .find(|e| e.tid == s.tid && e.ts >= s.ts && next.is_none_or(|n| e.ts <= n))
            .map(|e| e.ts)
            .or(next);
        if let Some(end) = end {
            steps.push(Step {
                id: k as i64 + 1,
                start_ns: s.ts,
                end_ns: end,
            });
        }
    }
    steps
}

/// The rows' own Python stacks (their MALLOC's `Call Stack(Python)`), over what the ops gave.
fn with_python_stacks(
    stacks: Option<CallStacks>,
    dump: &Dump,
    row_python: &[u32],
    rows: usize,
) -> Option<CallStacks> {
    if row_python.iter().all(|&t| dump.texts.get(t).is_empty()) {
        return stacks;
    }
    let mut s = stacks.unwrap_or_else(|| CallStacks {
        source: StackSource::Imported(NAME),
        frames: Interner::new(),
        stacks: Vec::new(),
        op_names: Interner::new(),
        op_calls: Vec::new(),
        row_op: vec![NO_STACK; rows],
        row_stack: vec![NO_STACK; rows],
        row_module: Vec::new(),
        unattributed: rows,
        without_stack: 0,
        host_ops: 0,
        phases: Default::default(),
        row_call_end: vec![NULL; rows],
        stacks_cut: 0,
    });
    let mut ids: FxHashMap<u32, u32> = FxHashMap::default();
    for (r, &t) in row_python.iter().enumerate() {
        let text = dump.texts.get(t);
        if text.is_empty() {
            continue;
        }
        let id = match ids.get(&t) {
            Some(&id) => id,
            None => {
                let frames: Box<[u32]> = text
                    .split(['\n', ';'])
                    .map(str::trim)
                    .filter(|f| !f.is_empty())
                    .map(|f| s.frames.intern(f))
                    .collect();
                s.stacks.push(frames);
                let id = (s.stacks.len() - 1) as u32;
                ids.insert(t, id);
                id
            }
        };
        if let Some(slot) = s.row_stack.get_mut(r) {
            *slot = id;
        }
    }
    s.without_stack = s
        .row_op
        .iter()
        .zip(&s.row_stack)
        .filter(|&(&o, &st)| o != NO_STACK && st == NO_STACK)
        .count();
    Some(s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use test_support::{DUMP_HEADER, generated_dumps};

    /// The rank of the dump at `path` built from `paired` (whose ranks are read from the
    /// file), and the curves handed over first.
    fn rank_of(path: &Path, paired: Paired) -> (RankData, Vec<RankData>) {
        let control = LoadControl::default();
        let infos = MemScopeDumps.ranks(path, &mut Vec::new(), &control);
        assert_eq!(infos.len(), 1, "{}", path.display());
        let DataSource::Imported { part, .. } = &infos[0].source else {
            panic!("not a dump's rank")
        };
        let (pid, dev) = part.split_once('/').unwrap();
        let mut early = Vec::new();
        let data = build_rank(
            &infos[0],
            Arc::new(paired),
            pid.parse().unwrap(),
            dev,
            "dump",
            &mut |d| early.push(d),
        );
        (data, early)
    }

    /// A dump whose blocks all have one place has its curves made before its pairing, from
    /// its events: the rank is the one it is paired at once, whether or not a FREE names
    /// another pool than its MALLOC, and its curves are handed over once.
    #[test]
    fn a_dump_of_one_place_makes_the_rank_it_makes_paired_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let generated = generated_dumps(dir.path(), 1, 3000);
        let header = DUMP_HEADER;
        // A FREE in another pool than its MALLOC's (id 1), a block of another pool, a FREE
        // of no block, a MALLOC over a held id, and events that make no block.
        let odd = [
            "1,MALLOC,PTA,N/A,1764753084425691000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64,total:4096,used:64}\",,",
            "2,MALLOC,HAL,N/A,1764753084425691100,7,7,0,0x20,\"{allocation_id:2,addr:0x20,size:512}\",,",
            "3,FREE,HAL,N/A,1764753084425691200,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:-64,total:4096,used:0}\",,",
            "4,FREE,PTA,N/A,1764753084425691300,7,7,0,0x30,\"{allocation_id:3,addr:0x30,size:-32}\",,",
            "5,MALLOC,PTA,N/A,1764753084425691400,7,7,0,N/A,\"{size:16}\",,",
            "6,MALLOC,PTA,N/A,1764753084425691500,7,7,0,0x40,\"{allocation_id:4,addr:0x40,size:8,total:4096,used:8}\",,",
            "7,MALLOC,PTA,N/A,1764753084425691600,7,7,0,0x40,\"{allocation_id:4,addr:0x40,size:8,total:4096,used:16}\",,",
            "8,FREE,PTA,N/A,1764753084425691700,7,7,0,0x40,\"{allocation_id:4,addr:0x40,size:-8,total:4096,used:8}\",,",
        ];
        let mismatched = dir.path().join("memscope_dump_odd.csv");
        std::fs::write(&mismatched, format!("{header}{}\n", odd.join("\n"))).unwrap();
        // The same without the FREE in another pool.
        let agreeing = dir.path().join("memscope_dump_agree.csv");
        let kept: Vec<&str> = odd
            .iter()
            .copied()
            .filter(|r| !r.starts_with("3,"))
            .collect();
        std::fs::write(&agreeing, format!("{header}{}\n", kept.join("\n"))).unwrap();
        for (path, agree) in [
            (&generated[0], true),
            (&mismatched, false),
            (&agreeing, true),
        ] {
            let dump = read_path(path, &LoadControl::default()).unwrap();
            // The one place given to every block is what placing each finds.
            let (blocks, _, _) = pairing::pair(&dump);
            let only = pairing::device_of_processes(&dump, &dump.ops);
            let (each, names) = pairing::block_parts(&dump, &blocks, &only);
            let mut placed = Paired::of(dump.clone());
            placed.pair();
            let one: Vec<_> = (0..blocks.len()).map(|i| placed.parts.get(i)).collect();
            assert!(matches!(placed.parts, Parts::All(_)), "{}", path.display());
            assert_eq!(
                (one, &placed.device_names),
                (each, &names),
                "{}",
                path.display()
            );
            let deferred = Paired::of(dump.clone());
            assert!(deferred.deferred.is_some(), "{}", path.display());
            let mut at_once = Paired::unpaired(dump);
            at_once.pair();
            assert_eq!(at_once.pools_agree, agree, "{}", path.display());
            let (got, early) = rank_of(path, deferred);
            let (want, want_early) = rank_of(path, at_once);
            assert_eq!(
                format!("{got:?}"),
                format!("{want:?}"),
                "{}",
                path.display()
            );
            assert_eq!((early.len(), want_early.len()), (1, 1));
            if agree {
                assert_eq!(early[0].records, want.records, "{}", path.display());
            }
        }
        // Asked for another place than the dump's one (the file changed since its ranks were
        // found): the rank of no blocks, as paired at once, and no curves handed over.
        let path = &generated[0];
        let dump = read_path(path, &LoadControl::default()).unwrap();
        let info = &MemScopeDumps.ranks(path, &mut Vec::new(), &LoadControl::default())[0];
        let elsewhere = |paired: Paired| {
            let mut early = 0;
            let data = build_rank(info, Arc::new(paired), 1, "npu:9", "dump", &mut |_| {
                early += 1
            });
            (format!("{data:?}"), early)
        };
        let mut at_once = Paired::unpaired(dump.clone());
        at_once.pair();
        let (got, want) = (elsewhere(Paired::of(dump.clone())), elsewhere(at_once));
        assert_eq!(got, want);
        assert_eq!(got.1, 0);
        // A dump held by another too (never so for one place, but not to be paired in place
        // then): paired in a copy, the same rank.
        let deferred = Arc::new(Paired::of(dump.clone()));
        let held = Arc::clone(&deferred);
        let DataSource::Imported { part, .. } = &info.source else {
            panic!("not a dump's rank")
        };
        let (pid, dev) = part.split_once('/').unwrap();
        let shared = build_rank(
            info,
            deferred,
            pid.parse().unwrap(),
            dev,
            "dump",
            &mut |_| {},
        );
        assert!(
            held.deferred.is_some(),
            "the other holder's dump is left as it was"
        );
        let (alone, _) = rank_of(path, Paired::of(dump));
        assert_eq!(format!("{shared:?}"), format!("{alone:?}"));
    }

    /// Blocks have one place only when every event that makes one names the same process
    /// and the same device, and no host pool.
    #[test]
    fn one_place_needs_one_process_one_device_and_no_host_pool() {
        let dir = tempfile::tempdir().unwrap();
        let header = DUMP_HEADER;
        let row = |i: u32, pid: u32, tid: u32, dev: &str, pool: &str, attr: &str| {
            format!(
                "{i},MALLOC,{pool},N/A,176475308442569{i}000,{pid},{tid},{dev},0x{i}0,\"{{{attr}size:8}}\",,\n"
            )
        };
        let place = |rows: &[String]| {
            let path = dir.path().join("memscope_dump_1.csv");
            std::fs::write(&path, format!("{header}{}", rows.concat())).unwrap();
            let dump = read_path(&path, &LoadControl::default()).unwrap();
            OnePlace::of(&dump).map(|p| (p.pid, p.device))
        };
        let two_threads = [
            row(1, 7, 7, "0", "PTA", "addr:0x10,"),
            row(2, 7, 8, "0", "HAL", ""),
        ];
        assert_eq!(place(&two_threads), Some((7, "npu:0".to_string())));
        // Without an id or an address an event makes no block: its device is not asked.
        let unkeyed = [
            row(1, 7, 7, "0", "PTA", "addr:0x10,"),
            row(2, 7, 7, "N/A", "PTA", ""),
        ];
        let mut unkeyed = unkeyed.to_vec();
        unkeyed[1] = unkeyed[1].replace(",0x20,", ",N/A,");
        assert_eq!(place(&unkeyed), Some((7, "npu:0".to_string())));
        for other in [
            row(2, 8, 8, "0", "PTA", ""),
            row(2, 7, 7, "1", "PTA", ""),
            row(2, 7, 7, "N/A", "PTA", ""),
            row(2, 7, 7, "0", "HOST_PINNED", ""),
        ] {
            assert_eq!(
                place(&[row(1, 7, 7, "0", "PTA", ""), other.clone()]),
                None,
                "{other}"
            );
        }
    }

    #[test]
    fn wants_dumps_by_name_and_header() {
        let m = MemScopeDumps;
        // Any CSV may be one (discovery offers only those the Ascend exports do not claim);
        // the header decides.
        assert!(m.wants("memscope_dump_20250428113810.csv"));
        assert!(m.wants("baseline.CSV"));
        assert!(!m.wants("trace.json"));
        assert!(m.recognises(
            Path::new("x.csv"),
            b"\xef\xbb\xbfID,Event,Event Type,Name,Timestamp(ns),Process Id"
        ));
        assert!(!m.recognises(Path::new("x.csv"), b"Name,Size(KB)"));
        // Issue 41 item 17: the same columns in another order.
        assert!(m.recognises(
            Path::new("x.csv"),
            b"Event,ID,Name,Event Type,Process Id,Thread Id,Device Id,Timestamp(ns),Ptr,Attr\r\n1,"
        ));
        assert!(!m.recognises(
            Path::new("x.csv"),
            b"Event,ID,Name,Event Type,Process Id,Thread Id,Timestamp(ns),Ptr,Attr\n"
        ));
    }
}
