//! The read of a dump, CSV (in parts on every core) or SQLite, into a [`Dump`]: its events
//! by kind, in time order, with its texts, devices and threads numbered once.

use std::io::Read;
use std::path::Path;

use rustc_hash::FxHashMap;

use super::cells::{Attr, number_bytes, parse_attr, parse_mem_attr, text, trim_bytes, trim_quotes};
use super::events::{Event, Extras, Kind, MemEvent, NO_DEVICE, OpEvent, device_slot, or_null};
use super::open;
use super::time_order::{Events, Timed, in_time_order, sort_by_time};
use crate::ingest::chunks::LoadControl;
use crate::ingest::csv_parts;
use crate::ingest::db;
use crate::ingest::time_window::TimeWindow;
use crate::ingest::value::parse_address as address;
use crate::model::{DumpProblem, Interner, NameId, Recent};

/// Timestamps below this are µs, not ns (10¹⁷ ns is 1973; 10¹⁷ µs is beyond year 5000).
pub(super) const US_BELOW: i64 = 100_000_000_000_000_000;

/// A dump read whole.
#[derive(Debug, Default, Clone)]
pub(super) struct Dump {
    /// Its MALLOCs and FREEs, in time order.
    pub(super) mem: Events<MemEvent>,
    /// Its ops' starts and ends, in time order.
    pub(super) ops: Events<OpEvent>,
    /// Its OOM records and MSTX ranges, in time order.
    pub(super) rare: Vec<Event>,
    /// The [`Extras`] of its MALLOCs and FREEs, one for each run of rows that repeat them
    /// (in file order as read; a `MemEvent`'s `extras` points in).
    pub(super) extras: Vec<Extras>,
    /// Pools, op names and stack texts.
    pub(super) texts: Interner,
    /// Devices: index → `Device Id` text (`0`, `host`).
    pub(super) devices: Vec<String>,
    /// (Process, thread) pairs: what the events' `thread` index.
    pub(super) threads: Vec<(i64, i64)>,
    /// Rows that could not be read.
    pub(super) unreadable: u64,
    /// Whether the file stops in the middle of its last row (left out).
    pub(super) cut_short: bool,
    /// Rows whose time lies far outside the bulk of the dump's (a corrupt or µs-scale cell
    /// among ns ones): left out, so that one row cannot move the time origin by decades.
    pub(super) out_of_window: u64,
}

impl Dump {
    /// The process of thread index `t`.
    pub(super) fn pid(&self, t: u32) -> i64 {
        self.thread(t).0
    }

    /// The [`Extras`] of `e`.
    #[inline]
    pub(super) fn extras(&self, e: &MemEvent) -> &Extras {
        Extras::of(&self.extras, e.extras)
    }

    /// The (process, thread) of thread index `t` ((0, 0) for none: an index is only made by
    /// a read of the dump).
    pub(super) fn thread(&self, t: u32) -> (i64, i64) {
        self.threads.get(t as usize).copied().unwrap_or((0, 0))
    }
}

/// The column indices of a dump's header.
#[derive(Debug, Clone, Copy)]
pub(super) struct Columns {
    pub(super) event: usize,
    pub(super) event_type: usize,
    pub(super) name: usize,
    pub(super) ts: usize,
    pub(super) pid: usize,
    pub(super) tid: usize,
    pub(super) device: usize,
    pub(super) ptr: usize,
    pub(super) attr: usize,
    pub(super) python: Option<usize>,
}

impl Columns {
    /// The columns of a header (a CSV's first line, a table's column names); `None` when one
    /// memsight needs is missing.
    pub(super) fn of<'a>(header: impl Iterator<Item = &'a str> + Clone) -> Option<Columns> {
        let norm = |h: &str| h.trim_start_matches('\u{feff}').trim().to_ascii_lowercase();
        let find = |want: &str| header.clone().position(|h| norm(h) == want);
        let find_prefix = |want: &str| header.clone().position(|h| norm(h).starts_with(want));
        Some(Columns {
            event: find("event")?,
            event_type: find("event type")?,
            name: find("name")?,
            ts: find_prefix("timestamp")?,
            pid: find("process id")?,
            tid: find("thread id")?,
            device: find("device id")?,
            ptr: find("ptr")?,
            attr: find("attr")?,
            python: find("call stack(python)"),
        })
    }
}

/// Which rows of a dump are read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Rows {
    /// Every event memsight reads.
    All,
    /// The `OOM_DETAIL` rows alone, at most [`MAX_OOM_ROWS`] (an OOM bundle's look at a dump:
    /// its memory is the OOM rows', not the dump's).
    Oom,
}

/// How many `OOM_DETAIL` rows are read (msMemScope writes a trigger and a few dozen records
/// for each out-of-memory error).
pub(super) const MAX_OOM_ROWS: usize = 10_000;

/// Builds a [`Dump`] row by row, whatever the rows come from.
pub(super) struct DumpBuilder {
    pub(super) cols: Columns,
    pub(super) dump: Dump,
    /// The rows read, in file order: MALLOCs and FREEs, ops, the rest.
    pub(super) mem: Vec<MemEvent>,
    pub(super) ops: Vec<OpEvent>,
    pub(super) rare: Vec<Event>,
    pub(super) device_ids: FxHashMap<String, u32>,
    /// The device of the last row that named one.
    pub(super) last_device: Option<u32>,
    pub(super) thread_ids: FxHashMap<(i64, i64), u32>,
    /// The (process, thread) of the last row, and its index.
    pub(super) last_thread: Option<((i64, i64), u32)>,
    pub(super) order: u32,
    pub(super) rows: Rows,
    /// The last texts interned in each column: most rows repeat them.
    pub(super) recent: RecentTexts,
}

/// The last pool (`Event Type`), owner and op name a part's rows named. (Not the Python
/// stack: the generated 1 GB dump repeats the one before in a quarter of its MALLOCs, and
/// the comparisons that failed cost what the hashes saved, A/B 1.01.)
#[derive(Default)]
pub(super) struct RecentTexts {
    pub(super) pool: Recent,
    pub(super) owner: Recent,
    pub(super) op: Recent,
}

impl DumpBuilder {
    pub(super) fn new(cols: Columns, rows: Rows) -> DumpBuilder {
        DumpBuilder {
            cols,
            dump: Dump::default(),
            mem: Vec::new(),
            ops: Vec::new(),
            rare: Vec::new(),
            device_ids: FxHashMap::default(),
            last_device: None,
            thread_ids: FxHashMap::default(),
            last_thread: None,
            order: 0,
            rows,
            recent: Default::default(),
        }
    }

    /// True once no more rows are wanted ([`Rows::Oom`] past its cap).
    pub(super) fn is_full(&self) -> bool {
        self.rows == Rows::Oom && self.rare.len() >= MAX_OOM_ROWS
    }

    /// The index of (process, thread) `key`, added when new (most rows name the thread the
    /// row before named).
    pub(super) fn thread_index(&mut self, key: (i64, i64)) -> u32 {
        if let Some((k, id)) = self.last_thread
            && k == key
        {
            return id;
        }
        let id = thread_index(&mut self.thread_ids, &mut self.dump.threads, key);
        self.last_thread = Some((key, id));
        id
    }

    /// One row, its cells' bytes by column index; false once the load is cancelled. A row
    /// one of whose cells read as text or as a number is no UTF-8 is unreadable; the cells it
    /// does not read are not looked at.
    pub(super) fn row<'a>(
        &mut self,
        cell: impl Fn(usize) -> &'a [u8],
        control: &LoadControl,
    ) -> bool {
        self.order = self.order.wrapping_add(1);
        if self.order.is_multiple_of(65_536) && control.is_cancelled() {
            return false;
        }
        let cols = self.cols;
        let cell = |i: usize| trim_bytes(cell(i));
        let (event, event_type) = (cell(cols.event), cell(cols.event_type));
        let kind = match (event, event_type) {
            (b"MALLOC", _) => Kind::Malloc,
            (b"FREE", _) => Kind::Free,
            (b"OP_LAUNCH", t) if t.ends_with(b"_START") => Kind::OpStart,
            (b"OP_LAUNCH", t) if t.ends_with(b"_END") => Kind::OpEnd,
            (b"OOM_DETAIL", b"OOM_TRIGGER") => Kind::OomTrigger,
            (b"OOM_DETAIL", b"OOM_TOP_ALLOC") => Kind::OomTop,
            (b"OOM_DETAIL", b"OOM_RECENT_ALLOC") => Kind::OomRecent,
            (b"MSTX", t) if t.eq_ignore_ascii_case(b"Range_start") => Kind::RangeStart,
            (b"MSTX", t) if t.eq_ignore_ascii_case(b"Range_end") => Kind::RangeEnd,
            _ => {
                // A row of no kind read is left out, unless it cannot be told (no text).
                if text(event).is_none() || text(event_type).is_none() {
                    self.dump.unreadable += 1;
                }
                return true;
            }
        };
        let is_oom = matches!(kind, Kind::OomTrigger | Kind::OomTop | Kind::OomRecent);
        if self.rows == Rows::Oom && !is_oom {
            return true;
        }
        if self.read(kind, is_oom, cell).is_none() {
            self.dump.unreadable += 1;
        }
        true
    }

    /// A row of `kind` ([`DumpBuilder::row`]'s cells, trimmed) into its list; `None` when it
    /// cannot be read.
    #[inline]
    fn read<'a>(
        &mut self,
        kind: Kind,
        is_oom: bool,
        cell: impl Fn(usize) -> &'a [u8],
    ) -> Option<()> {
        let cols = self.cols;
        let ts = number_bytes(cell(cols.ts))?;
        let pid = number_bytes(cell(cols.pid))?;
        let tid = number_bytes(cell(cols.tid))?;
        let device = match cell(cols.device) {
            b"" | b"N/A" => None,
            // Most rows name the device the row before named.
            d if self
                .last_device
                .is_some_and(|id| self.dump.devices[id as usize].as_bytes() == d) =>
            {
                self.last_device
            }
            d => {
                let id = device_index(&mut self.device_ids, &mut self.dump.devices, text(d)?);
                self.last_device = Some(id);
                Some(id)
            }
        };
        let order = self.order;
        match kind {
            Kind::Malloc | Kind::Free => {
                let attr = parse_mem_attr(cell(cols.attr))?;
                let size = attr.size?;
                // The pool of the row before (nearly every row's) needs no UTF-8 check.
                let pool = cell(cols.event_type);
                let pool = id_or_text(self.recent.pool.holds(&self.dump.texts, pool), pool)?;
                let addr = match attr.addr {
                    Some(a) => Some(a),
                    None => address(text(cell(cols.ptr))?),
                };
                // A stack seen before is found by its bytes (most rows repeat one); only a
                // new one is checked as text. Nothing is numbered before the row is read.
                let stack = match cols.python.map(cell) {
                    None | Some(b"") => Ok(0),
                    Some(b) => id_or_text(self.dump.texts.lookup_bytes(b), b)?,
                };
                let thread = self.thread_index((pid, tid));
                let texts = &mut self.dump.texts;
                let recent = &mut self.recent;
                let what = pool.unwrap_or_else(|new| recent.pool.intern(texts, new));
                let python = stack.unwrap_or_else(|new| texts.intern(new));
                let owner = match attr.owner {
                    "" => 0,
                    t => recent.owner.intern(texts, t),
                };
                let extras = Extras {
                    process_used: or_null(attr.process_used),
                    device_used: or_null(attr.device_used),
                    inefficient: non_empty(texts, attr.inefficient),
                };
                let extras = extras_index(&mut self.dump.extras, extras)?;
                self.mem.push(MemEvent {
                    ts,
                    addr: addr.unwrap_or(0),
                    allocation_id: or_null(attr.allocation_id),
                    size,
                    total: or_null(attr.total),
                    used: or_null(attr.used),
                    what,
                    order,
                    python,
                    owner,
                    extras,
                    thread,
                    device: device_slot(device),
                    malloc: kind == Kind::Malloc,
                    has_addr: addr.is_some(),
                });
            }
            Kind::OpStart | Kind::OpEnd => {
                let name = trim_quotes(cell(cols.name));
                let name = id_or_text(self.recent.op.holds(&self.dump.texts, name), name)?;
                let thread = self.thread_index((pid, tid));
                let what =
                    name.unwrap_or_else(|new| self.recent.op.intern(&mut self.dump.texts, new));
                self.ops.push(OpEvent {
                    ts,
                    order,
                    what,
                    thread,
                    device: device_slot(device),
                    start: kind == Kind::OpStart,
                });
            }
            Kind::OomTrigger
            | Kind::OomTop
            | Kind::OomRecent
            | Kind::RangeStart
            | Kind::RangeEnd => {
                // What an OOM record reads (its type, Attr and Ptr) or a range (its name).
                let (what, attr, ptr) = if is_oom {
                    let attr = parse_attr(text(cell(cols.attr))?);
                    let ptr = address(text(cell(cols.ptr))?);
                    (text(cell(cols.event_type))?, attr, ptr)
                } else {
                    let name = text(cell(cols.name))?.trim_matches('"');
                    (name, Attr::default(), None)
                };
                let python = match cols.python {
                    Some(c) => text(cell(c))?,
                    None => "",
                };
                let texts = &mut self.dump.texts;
                let what = texts.intern(what);
                let python = texts.intern(python);
                let oom = is_oom.then(|| {
                    let mut oom = attr.oom.unwrap_or_default();
                    oom.ptr = oom.ptr.or(ptr);
                    oom
                });
                self.rare.push(Event {
                    kind,
                    what,
                    order,
                    python,
                    device,
                    ts,
                    pid,
                    tid,
                    size: or_null(attr.size),
                    oom,
                });
            }
        }
        Some(())
    }

    /// The dump: timestamps in ns (µs-scale ones of older dumps scaled), events in time order.
    pub(super) fn finish(self) -> Dump {
        self.finish_with(Vec::new())
    }

    /// The dump of this builder's rows and of `later`'s, the builders of the parts of the
    /// file after this one's, in file order: what one builder reading every part would
    /// finish with (texts, devices and threads numbered in order of first appearance, file
    /// order across the parts). Each part is sorted on its own, on every core, and the
    /// parts are kept as runs of the time order ([`in_time_order`]): joining them first held
    /// every event twice.
    pub(super) fn finish_with(mut self, later: Vec<DumpBuilder>) -> Dump {
        use rayon::prelude::*;
        let mut parts = Vec::with_capacity(later.len() + 1);
        parts.push(Part {
            mem: std::mem::take(&mut self.mem),
            ops: std::mem::take(&mut self.ops),
            rare: std::mem::take(&mut self.rare),
        });
        // For each later part: its texts', devices' and threads' ids here, and its first
        // row's number.
        let mut renumber = Vec::with_capacity(later.len());
        for part in later {
            let DumpBuilder {
                dump,
                order,
                mem,
                ops,
                rare,
                ..
            } = part;
            let texts = self.dump.texts.merge(&dump.texts);
            let devices: Vec<u32> = dump
                .devices
                .iter()
                .map(|d| device_index(&mut self.device_ids, &mut self.dump.devices, d))
                .collect();
            let threads: Vec<u32> = dump
                .threads
                .iter()
                .map(|&t| thread_index(&mut self.thread_ids, &mut self.dump.threads, t))
                .collect();
            // Its extras after these, their findings renumbered.
            let extras_base = u32::try_from(self.dump.extras.len()).unwrap_or(u32::MAX);
            let text = |id: u32| texts.get(id as usize).copied().unwrap_or(0);
            self.dump.extras.extend(dump.extras.iter().map(|e| Extras {
                inefficient: text(e.inefficient),
                ..*e
            }));
            self.dump.unreadable += dump.unreadable;
            self.dump.cut_short |= dump.cut_short;
            renumber.push(Renumber {
                texts,
                devices,
                threads,
                base: self.order,
                extras_base,
            });
            self.order = self.order.wrapping_add(order);
            parts.push(Part { mem, ops, rare });
        }
        // The unit is the bulk's (the median time's), not any one row's: the median of the
        // rows at even steps of file order (every row in a dump of fewer than twice
        // [`MEDIAN_ROWS`]), which a cut of the file into parts does not change. Their times
        // are taken on every core, from each part while it is in the cache after its
        // renumbering (after all parts, on one core, it was 2 % of the first look).
        let stride = (self.order / MEDIAN_ROWS).max(1);
        let mut times: Vec<i64> = parts
            .par_iter_mut()
            .enumerate()
            .flat_map_iter(|(k, p)| {
                let mut sample = EveryNthRow::new(stride);
                match k.checked_sub(1).and_then(|k| renumber.get(k)) {
                    Some(r) => r.apply(p, &mut sample),
                    None => {
                        sample.all(&p.mem);
                        sample.all(&p.ops);
                        sample.all(&p.rare);
                    }
                }
                sample.times
            })
            .collect();
        let mut dump = self.dump;
        let mid = times.len() / 2;
        let median = if times.is_empty() {
            None
        } else {
            Some(*times.select_nth_unstable(mid).1)
        };
        drop(times);
        let micros = median.is_some_and(|m| m < US_BELOW);
        // The window around the median of the same times in ns (scaling keeps their order:
        // it is the median of the scaled times).
        let window = median.map_or(TimeWindow::ANY, |m| {
            TimeWindow::around(if micros { m.saturating_mul(1000) } else { m })
        });
        let before: usize = parts.iter().map(Part::len).sum();
        parts.par_iter_mut().for_each(|p| {
            let scale = |ts: &mut i64| {
                if micros {
                    *ts = ts.saturating_mul(1000);
                }
            };
            p.mem.iter_mut().for_each(|e| scale(&mut e.ts));
            p.ops.iter_mut().for_each(|e| scale(&mut e.ts));
            p.rare.iter_mut().for_each(|e| scale(&mut e.ts));
            p.mem.retain(|e| window.contains(e.ts));
            p.ops.retain(|e| window.contains(e.ts));
            p.rare.retain(|e| window.contains(e.ts));
            sort_by_time(&mut p.mem);
            sort_by_time(&mut p.ops);
        });
        let after: usize = parts.iter().map(Part::len).sum();
        dump.out_of_window = (before - after) as u64;
        let (mut mem, mut ops) = (Vec::with_capacity(parts.len()), Vec::new());
        for p in parts {
            mem.push(p.mem);
            ops.push(p.ops);
            dump.rare.extend(p.rare);
        }
        sort_by_time(&mut dump.rare);
        dump.mem = in_time_order(mem);
        dump.ops = in_time_order(ops);
        dump
    }
}

/// How many rows' times, at most, choose a dump's unit and window (their median: a sort of
/// every time of a 1 GB dump's 3.8M events was 40 ms, and their copy 30 MB).
pub(super) const MEDIAN_ROWS: u32 = 1 << 12;

/// The times of the rows whose file order is a multiple of a stride, taken as the events go
/// by: one comparison an event while each list's orders rise (in file order). It is folded
/// into the walk that renumbers each part (searched for afterwards, part by part, it was a
/// cache miss at each step of each search: 2 % of a 1 GB dump's first look).
pub(super) struct EveryNthRow {
    pub(super) stride: u64,
    /// A multiple of the stride, and no other lies in `(next - stride, next)`: the first one
    /// past the last order seen.
    pub(super) next: u64,
    pub(super) times: Vec<i64>,
}

impl EveryNthRow {
    /// A sample of every `stride`th row (every row for a stride of 0).
    pub(super) fn new(stride: u32) -> Self {
        EveryNthRow {
            stride: u64::from(stride.max(1)),
            next: 0,
            times: Vec::new(),
        }
    }

    /// Takes `e`'s time when its order is a multiple of the stride.
    #[inline]
    pub(super) fn see<T: Timed>(&mut self, e: &T) {
        let (ts, order) = e.key();
        let order = u64::from(order);
        if order >= self.next || order + self.stride <= self.next {
            self.next = order.div_ceil(self.stride) * self.stride;
            if order == self.next {
                self.times.push(ts);
                self.next += self.stride;
            }
        }
    }

    /// Takes the times of `events`' rows at the multiples.
    pub(super) fn all<T: Timed>(&mut self, events: &[T]) {
        events.iter().for_each(|e| self.see(e));
    }
}

/// The events of one part of a dump, as read (in file order).
pub(super) struct Part {
    pub(super) mem: Vec<MemEvent>,
    pub(super) ops: Vec<OpEvent>,
    pub(super) rare: Vec<Event>,
}

impl Part {
    /// How many events.
    pub(super) fn len(&self) -> usize {
        self.mem.len() + self.ops.len() + self.rare.len()
    }
}

/// A later part's ids as the first part's builder numbers them.
pub(super) struct Renumber {
    /// Its texts', devices' and threads' ids there.
    pub(super) texts: Vec<NameId>,
    pub(super) devices: Vec<u32>,
    pub(super) threads: Vec<u32>,
    /// The file order of the row before its first.
    pub(super) base: u32,
    /// Where its [`Extras`] start among the first part's.
    pub(super) extras_base: u32,
}

impl Renumber {
    /// The part's events with their ids renumbered, each then shown to `sample`.
    pub(super) fn apply(&self, part: &mut Part, sample: &mut EveryNthRow) {
        let text = |id: u32| self.texts.get(id as usize).copied().unwrap_or(0);
        let slot = |d: u32| self.devices.get(d as usize).copied().unwrap_or(NO_DEVICE);
        let thread = |t: u32| self.threads.get(t as usize).copied().unwrap_or(0);
        for e in &mut part.mem {
            e.what = text(e.what);
            e.python = text(e.python);
            e.owner = text(e.owner);
            if e.extras != 0 {
                e.extras = e.extras.saturating_add(self.extras_base);
            }
            e.device = slot(e.device);
            e.thread = thread(e.thread);
            e.order = self.base.wrapping_add(e.order);
            sample.see(e);
        }
        for e in &mut part.ops {
            e.what = text(e.what);
            e.device = slot(e.device);
            e.thread = thread(e.thread);
            e.order = self.base.wrapping_add(e.order);
            sample.see(e);
        }
        for e in &mut part.rare {
            e.what = text(e.what);
            e.python = text(e.python);
            e.device = e.device.and_then(|d| self.devices.get(d as usize).copied());
            e.order = self.base.wrapping_add(e.order);
            sample.see(e);
        }
    }
}

/// The `extras` of a row whose [`Extras`] are `e` (0 for none): the last of `list` when it
/// repeats it, else `e` added; `None` past `u32`'s indices (a dump of billions of rows).
fn extras_index(list: &mut Vec<Extras>, e: Extras) -> Option<u32> {
    if e == Extras::NONE {
        return Some(0);
    }
    if list.last() != Some(&e) {
        list.push(e);
    }
    u32::try_from(list.len()).ok()
}

/// A cell's id when its bytes are known (`Ok`), else its text to number once the row is read
/// (`Err`); `None` when it is new and no UTF-8.
fn id_or_text(known: Option<NameId>, b: &[u8]) -> Option<Result<NameId, &str>> {
    match known {
        Some(id) => Some(Ok(id)),
        None => text(b).map(Err),
    }
}

/// `t`'s id, 0 for an empty text (with no lookup: a FREE's empty stack).
pub(super) fn non_empty(texts: &mut Interner, t: &str) -> NameId {
    if t.is_empty() { 0 } else { texts.intern(t) }
}

/// The index of (process, thread) `key` in `threads`, added when new.
pub(super) fn thread_index(
    ids: &mut FxHashMap<(i64, i64), u32>,
    threads: &mut Vec<(i64, i64)>,
    key: (i64, i64),
) -> u32 {
    *ids.entry(key).or_insert_with(|| {
        threads.push(key);
        (threads.len() - 1) as u32
    })
}

/// The index of device `d` (a `Device Id` cell) in `devices`, added when new. Looked up
/// before a key is made: a `String` for every row was an allocation for each of a dump's
/// millions of events.
pub(super) fn device_index(
    ids: &mut FxHashMap<String, u32>,
    devices: &mut Vec<String>,
    d: &str,
) -> u32 {
    match ids.get(d) {
        Some(&id) => id,
        None => {
            let id = devices.len() as u32;
            devices.push(d.to_string());
            ids.insert(d.to_string(), id);
            id
        }
    }
}

/// A [`DumpBuilder`] fed by [`csv_parts`]: one part's rows.
pub(super) struct PartBuilder<'a> {
    pub(super) builder: DumpBuilder,
    pub(super) control: &'a LoadControl,
    /// The header's cells: a last row with fewer and no line break after it was cut short.
    pub(super) cells: usize,
}

impl csv_parts::RecordSink for PartBuilder<'_> {
    fn record(&mut self, record: &simd_csv::ByteRecord) -> bool {
        self.builder
            .row(|i| record.get(i).unwrap_or_default(), self.control)
    }

    /// A last row cut short (inside a quoted cell, or short of cells with no line break
    /// after it) is left out: its cut cell (a call stack's first frames, part of an `Attr`)
    /// would read as a stack or a size the dump never held.
    fn unfinished(&mut self, record: &simd_csv::ByteRecord, how: csv_parts::Unfinished) -> bool {
        if how == csv_parts::Unfinished::WithoutLineBreak && record.len() >= self.cells {
            return self.record(record);
        }
        self.builder.dump.cut_short = true;
        true
    }

    fn unreadable(&mut self) {
        self.builder.dump.unreadable += 1;
    }

    fn read(&mut self, bytes: u64) {
        self.control.add_done(bytes);
    }
}

/// A dump (CSV) is read in parts of this many bytes, on every core.
pub(super) const PART: u64 = 64 << 20;

/// Bytes of a part for which its lists reserve room for one row of each kind, up front: in
/// the generated 1 GB dump a MALLOC or FREE row is 480 bytes on average (a MALLOC's with its
/// Python stack) and an op's 85, one of each about every 565 bytes, so a part fills about
/// nine tenths of what is reserved; a longer list grows as any does. Room never written is
/// never touched: only address space.
pub(super) const BYTES_A_RESERVED_ROW: u64 = 512;

/// Whether a line may be a row's start, for cutting a dump in parts: msMemScope's rows start
/// with their `ID` (digits and a comma); a call stack's lines in a quoted cell start with a
/// path or a frame. A wrong guess is found and read again ([`csv_parts`]).
pub(super) fn starts_with_an_id(line: &[u8]) -> bool {
    let n = line.iter().take_while(|b| b.is_ascii_digit()).count();
    n > 0 && line.get(n) == Some(&b',')
}

/// Reads a dump (CSV) at `path`: every row, on every core ([`csv_parts`]) in parts of
/// [`PART`], when its first column is the `ID`; else on one.
pub(super) fn read_dump_file(path: &Path, control: &LoadControl) -> Result<Dump, DumpProblem> {
    read_dump_file_in_parts(path, control, PART)
}

/// [`read_dump_file`] in parts of `part` bytes (tests cut small dumps into many).
pub(super) fn read_dump_file_in_parts(
    path: &Path,
    control: &LoadControl,
    part: u64,
) -> Result<Dump, DumpProblem> {
    let name = path.display().to_string();
    let mut reader = simd_csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(open(path)?);
    let header = header_of(&mut reader, &name)?;
    let cols = Columns::of(header.iter().map(String::as_str))
        .ok_or_else(|| DumpProblem::NotADump { path: name.clone() })?;
    let id_first = header.first().is_some_and(|h| {
        h.trim_start_matches('\u{feff}')
            .trim()
            .eq_ignore_ascii_case("id")
    });
    // A dump whose rows do not start with their ID is read in one part, on one core: its
    // rows' starts cannot be told from its call stacks' lines.
    let part = if id_first { part } else { u64::MAX };
    let start = reader.position();
    drop(reader);
    // The bytes after the header, for the progress bar (told as the parts read them).
    let len = open(path)?.metadata().map_or(0, |m| m.len());
    control.add_total(len.saturating_sub(start));
    let parts = csv_parts::read_in_parts(path, start, part, &starts_with_an_id, &|| {
        let mut builder = DumpBuilder::new(cols, Rows::All);
        let rows = usize::try_from(part.min(PART) / BYTES_A_RESERVED_ROW).unwrap_or(0);
        builder.mem.reserve(rows);
        builder.ops.reserve(rows);
        crate::ingest::huge_pages::advise(&builder.mem);
        crate::ingest::huge_pages::advise(&builder.ops);
        PartBuilder {
            builder,
            control,
            cells: header.len(),
        }
    })
    .map_err(|e| match e {
        csv_parts::PartsError::Io(e) => DumpProblem::unreadable(&name, csv_cause(e)),
        csv_parts::PartsError::Stopped => DumpProblem::Cancelled,
    })?;
    control.file_done();
    let mut parts = parts.into_iter().map(|p| p.builder);
    let Some(builder) = parts.next() else {
        return Ok(DumpBuilder::new(cols, Rows::All).finish());
    };
    Ok(builder.finish_with(parts.collect()))
}

/// The CSV reader's error as a cause: an I/O error keeps its kind.
pub(super) fn csv_cause(e: simd_csv::Error) -> crate::model::Cause {
    let en = e.to_string();
    match e.into_kind() {
        simd_csv::ErrorKind::Io(io) => crate::model::Cause::io(en, None, &io),
        _ => crate::model::Cause::said(en),
    }
}

/// A dump's header cells (a byte that is no UTF-8 read as U+FFFD: the columns memsight needs
/// are ASCII); `name` is for messages.
pub(super) fn header_of<R: Read>(
    reader: &mut simd_csv::Reader<R>,
    name: &str,
) -> Result<Vec<String>, DumpProblem> {
    let header = reader
        .byte_headers()
        .map_err(|e| DumpProblem::unreadable(name, csv_cause(e)))?;
    Ok(header
        .iter()
        .map(|h| String::from_utf8_lossy(h).into_owned())
        .collect())
}

/// Reads a dump (CSV), the `rows` asked for; `name` is for messages.
pub(super) fn read_dump(
    file: impl Read,
    control: &LoadControl,
    name: &str,
    rows: Rows,
) -> Result<Dump, DumpProblem> {
    let mut reader = simd_csv::ReaderBuilder::new()
        .flexible(true)
        .has_headers(true)
        .from_reader(file);
    let header = header_of(&mut reader, name)?;
    let cols =
        Columns::of(header.iter().map(String::as_str)).ok_or_else(|| DumpProblem::NotADump {
            path: name.to_string(),
        })?;
    let mut builder = DumpBuilder::new(cols, rows);
    let mut record = simd_csv::ByteRecord::new();
    while !builder.is_full() {
        match reader.read_byte_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) if e.is_io_error() => return Err(DumpProblem::unreadable(name, csv_cause(e))),
            Err(_) => {
                builder.dump.unreadable += 1;
                continue;
            }
        }
        if !builder.row(|i| record.get(i).unwrap_or_default(), control) {
            return Err(DumpProblem::Cancelled);
        }
    }
    Ok(builder.finish())
}

/// Reads a dump's SQLite form (`memscope_dump_*.db`, table `memscope_dump` with the CSV's
/// column names; the tables Insight adds are not read), opened as every DB is: never written.
pub(super) fn read_dump_db(
    path: &Path,
    control: &LoadControl,
    rows: Rows,
) -> Result<Dump, DumpProblem> {
    let shown = path.display();
    // A pending WAL or journal beside it is read from a private copy, as for every DB.
    let snapshot = db::snapshot_if_needed(path).map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let db = db::open_read_only(path, snapshot.as_ref())
        .map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let conn: &rusqlite::Connection = &db;
    if !db::has_table(conn, DB_TABLE) {
        return Err(DumpProblem::NoTable {
            path: shown.to_string(),
            table: DB_TABLE,
        });
    }
    let mut stmt = conn
        .prepare(&format!("SELECT * FROM {DB_TABLE}"))
        .map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
    let cols = Columns::of(names.iter().map(String::as_str)).ok_or_else(|| {
        DumpProblem::TableLacksColumns {
            path: shown.to_string(),
            table: DB_TABLE,
        }
    })?;
    let width = names.len();
    let mut builder = DumpBuilder::new(cols, rows);
    let mut rows = stmt
        .query([])
        .map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let mut cells: Vec<String> = vec![String::new(); width];
    while !builder.is_full() {
        let row = match rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(DumpProblem::unreadable(&shown, e)),
        };
        for (i, c) in cells.iter_mut().enumerate() {
            // A writer that stored the texts as BLOBs (the same bytes, another type) is read
            // like one that stored TEXT (before, every event read as blank).
            *c = match row.get_ref(i) {
                Ok(rusqlite::types::ValueRef::Blob(b)) => String::from_utf8_lossy(b).into_owned(),
                Ok(v) => db::text(v),
                Err(_) => String::new(),
            };
        }
        if !builder.row(|i| cells.get(i).map_or(&b""[..], String::as_bytes), control) {
            return Err(DumpProblem::Cancelled);
        }
    }
    Ok(builder.finish())
}

/// The table of a dump's SQLite form.
pub(super) const DB_TABLE: &str = "memscope_dump";

/// Whether `path` names a dump's SQLite form.
pub(super) fn is_db(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("db"))
}

/// Reads the dump at `path`, CSV or SQLite.
pub(super) fn read_path(path: &Path, control: &LoadControl) -> Result<Dump, DumpProblem> {
    read_rows(path, control, Rows::All)
}

/// Reads the `rows` asked for of the dump at `path`, CSV or SQLite.
pub(super) fn read_rows(
    path: &Path,
    control: &LoadControl,
    rows: Rows,
) -> Result<Dump, DumpProblem> {
    if is_db(path) {
        read_dump_db(path, control, rows)
    } else if rows == Rows::All {
        read_dump_file(path, control)
    } else {
        open(path).and_then(|f| read_dump(f, control, &path.display().to_string(), rows))
    }
}

#[cfg(test)]
mod tests {
    use super::super::events::present;
    use super::super::test_support::{described, event, generated_dumps};
    use super::*;

    /// A dump read in parts (of a few KiB, cut inside quoted call stacks too) holds the
    /// events one reader of the whole file reads, in the same order, with the same texts
    /// and devices; and as many unreadable rows.
    #[test]
    fn a_dump_read_in_parts_is_the_dump_read_whole() {
        let dir = tempfile::tempdir().unwrap();
        let files = generated_dumps(dir.path(), 3, 400);
        assert_eq!(files.len(), 3);
        // One file with three processes' rows and a few broken ones.
        let mut text = String::new();
        for (k, f) in files.iter().enumerate() {
            let t = std::fs::read_to_string(f).unwrap();
            let body = if k == 0 {
                &t[..]
            } else {
                t.split_once('\n').unwrap().1
            };
            text.push_str(body);
            text.push_str("99,MALLOC,PTA,N/A,notatime,1,1,0,0x10,\"{size:5}\",,\n");
            // Decades before the rest: left out of the window.
            text.push_str("98,FREE,PTA,N/A,5,1,1,0,0x10,\"{size:5}\",,\n");
            // An MSTX range and an OOM record, at the time of the file's first row.
            let ts = body.lines().nth(1).unwrap().split(',').nth(4).unwrap();
            text.push_str(&format!(
                "97,MSTX,Range_start,step start,{ts},7,7,{k},N/A,,,\n"
            ));
            text.push_str(&format!(
                "96,OOM_DETAIL,OOM_TRIGGER,N/A,{ts},7,7,{k},0x20,\"{{func:f,req_size:9}}\",,\n"
            ));
        }
        let path = dir.path().join("memscope_dump_1.csv");
        std::fs::write(&path, &text).unwrap();
        let control = LoadControl::new();
        let whole = read_dump(text.as_bytes(), &control, "whole", Rows::All).unwrap();
        assert!(whole.mem.len() > 2000 && whole.ops.len() > 2000 && whole.devices.len() == 3);
        assert_eq!(whole.rare.len(), 6);
        assert_eq!((whole.unreadable, whole.out_of_window), (3, 3));
        for part in [4096, 10_000, 65_536, PART] {
            let parts = read_dump_file_in_parts(&path, &control, part).unwrap();
            assert_eq!(described(&parts), described(&whole), "parts of {part}");
            assert_eq!(parts.unreadable, whole.unreadable);
            assert_eq!(parts.out_of_window, whole.out_of_window);
        }
        // Written on Windows (CR LF, inside the stacks too) and with a byte-order mark.
        let windows = format!("\u{feff}{}", text.replace('\n', "\r\n"));
        std::fs::write(&path, &windows).unwrap();
        let whole = read_dump(windows.as_bytes(), &control, "whole", Rows::All).unwrap();
        assert!(whole.mem.len() > 2000);
        for part in [4096, 65_536] {
            let parts = read_dump_file_in_parts(&path, &control, part).unwrap();
            assert_eq!(
                described(&parts),
                described(&whole),
                "CR LF, parts of {part}"
            );
        }
    }

    /// A row whose cell read as text or number is no UTF-8 is unreadable (a stack, new or
    /// seen again, an `Attr`, a time, a device, an op's name, an event); bytes that are no
    /// UTF-8 in a cell that is not read (the C stack, the ID, a range's `Attr` and `Ptr`, an
    /// OOM record's name) lose nothing; a known stack is
    /// found by its bytes; a row of a kind not read is not counted. Whole and in parts alike.
    #[test]
    fn a_row_is_unreadable_only_when_a_cell_it_reads_is_no_text() {
        let bytes: &[u8] = b"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n\
            1,MALLOC,PTA,N/A,1764753084425691000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64}\",\"a.py(3): f\",\n\
            2\xff,MALLOC,PTA,N/A,1764753084425692000,7,7,0,0x10,\"{allocation_id:2,addr:0x10,size:64}\",,\"lib\xff.so\"\n\
            3,MALLOC,PTA,N/A,1764753084425693000,7,7,0,0x10,\"{allocation_id:3,addr:0x10,size:64}\",\"b.py(4): \xfe\",\n\
            4,MALLOC,PTA,N/A,1764753084425693000,7,7,0,0x10,\"{allocation_id:3,addr:0x10,size:64}\",\"b.py(4): \xfe\",\n\
            5,FREE,PTA,N/A,1764753084425694000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64}\",\"a.py(3): f\",\n\
            6,FREE,PTA,N/A,1764753084425695000,7,7,0,0x10,\"{allocation_id:4,addr:0x10,size:64,owner:P\xff}\",,\n\
            7,MALLOC,PTA,N/A,17647530844256\xff,7,7,0,0x10,\"{allocation_id:4,addr:0x10,size:64}\",,\n\
            8,MALLOC,PTA,N/A,1764753084425696000,7,7,\xff,0x10,\"{allocation_id:4,addr:0x10,size:64}\",,\n\
            9,OP_LAUNCH,ATEN_START,aten::\xff,1764753084425696000,7,7,0,N/A,,,\n\
            10,MAL\xffLOC,PTA,N/A,1764753084425696000,7,7,0,0x10,\"{allocation_id:4,addr:0x10,size:64}\",,\n\
            11,SYSTEM,acl init,N/A,1764753084425696000,7,7,N/A,N/A,,,\n\
            12,MSTX,Range_start,step 1,1764753084425696000,7,7,0,\xff,\"{\xff}\",,\n\
            13,OOM_DETAIL,OOM_TRIGGER,\xff,1764753084425696000,7,7,0,0x20,\"{func:f,req_size:9}\",,\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memscope_dump_1.csv");
        std::fs::write(&path, bytes).unwrap();
        let control = LoadControl::new();
        let whole = read_dump(bytes, &control, "whole", Rows::All).unwrap();
        for dump in [
            &whole,
            &read_dump_file_in_parts(&path, &control, 64).unwrap(),
        ] {
            let read: Vec<(u32, &str)> = dump
                .mem
                .iter()
                .map(|e| (e.allocation_id as u32, dump.texts.get(e.python)))
                .collect();
            assert_eq!(read, [(1, "a.py(3): f"), (2, ""), (1, "a.py(3): f")]);
            assert!(dump.ops.iter().next().is_none());
            // A range reads its name, an OOM record its type, Attr and Ptr, and no other.
            let rare: Vec<(Kind, &str)> = dump
                .rare
                .iter()
                .map(|e| (e.kind, dump.texts.get(e.what)))
                .collect();
            assert_eq!(
                rare,
                [
                    (Kind::RangeStart, "step 1"),
                    (Kind::OomTrigger, "OOM_TRIGGER")
                ]
            );
            // The stack, a repeat of it, the Attr, the time, the device, the op's name and
            // the event.
            assert_eq!(dump.unreadable, 7);
        }
    }

    /// A sample that saw a later part first takes an earlier part's multiple a stride below
    /// where it waits (the edge of its jump back, which random gaps seldom reach).
    #[test]
    fn every_nth_row_takes_a_multiple_one_stride_below_the_next_it_waits_for() {
        let mut sample = EveryNthRow::new(5);
        sample.see(&event(120, 12));
        sample.see(&event(100, 10));
        assert_eq!(sample.times, [100]);
    }

    /// A dump whose rows do not start with their ID (its columns in another order) cannot be
    /// cut at its rows' starts: it is read in one part, to what one reader reads, and a last
    /// row cut inside its stack is left out and said to be cut.
    #[test]
    fn a_dump_whose_rows_do_not_start_with_their_id_is_read_in_one_part() {
        let text = "Event,ID,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python)\n\
            MALLOC,1,PTA,N/A,1764753084425691000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64}\",\"a.py(3): f\n5,MALLOC,a line like a row\"\n\
            FREE,2,PTA,N/A,1764753084425692000,7,7,0,0x10,\"{allocation_id:1,addr:0x10,size:64}\",\n";
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memscope_dump_1.csv");
        let control = LoadControl::new();
        std::fs::write(&path, text).unwrap();
        let whole = read_dump(text.as_bytes(), &control, "whole", Rows::All).unwrap();
        assert_eq!(whole.mem.len(), 2);
        for part in [8, PART] {
            let read = read_dump_file_in_parts(&path, &control, part).unwrap();
            assert_eq!(described(&read), described(&whole), "parts of {part}");
            assert!(!read.cut_short);
        }
        let cut = format!(
            "{text}MALLOC,3,PTA,N/A,1764753084425693000,7,7,0,0x20,\"{{allocation_id:3,addr:0x20,size:32}}\",\"b.py("
        );
        std::fs::write(&path, cut).unwrap();
        let read = read_dump_file_in_parts(&path, &control, 8).unwrap();
        assert_eq!(described(&read), described(&whole));
        assert!(read.cut_short);
    }

    /// Each MALLOC and FREE has the process's and device's bytes and the finding its own row
    /// writes, though a run of rows that repeat them shares one [`Extras`] and a row that
    /// writes none points at none; read whole or in parts (whose extras are joined, their
    /// findings renumbered) alike.
    #[test]
    fn each_event_has_the_extras_of_its_row_and_runs_share_them() {
        // (process_used, device_used, inefficient) of each row, in file order.
        let rows: [(Option<i64>, Option<i64>, &str); 8] = [
            (Some(100), Some(900), ""),
            (Some(100), Some(900), ""),
            (None, None, ""),
            (Some(100), Some(900), ""),
            (Some(200), Some(900), "early_allocation"),
            (Some(200), Some(900), "early_allocation"),
            (Some(200), None, ""),
            (None, None, "late_free"),
        ];
        let mut text = String::from(super::super::test_support::DUMP_HEADER);
        for (i, (process, device, finding)) in rows.iter().enumerate() {
            let mut attr = format!("allocation_id:{i},addr:0x{:x},size:64", 0x100 + i);
            for (key, v) in [("process_used", process), ("device_used", device)] {
                if let Some(v) = v {
                    attr.push_str(&format!(",{key}:{v}"));
                }
            }
            if !finding.is_empty() {
                attr.push_str(&format!(",inefficient:{finding}"));
            }
            let ts = 1_764_753_084_425_691_000i64 + i as i64 * 1000;
            text.push_str(&format!(
                "{i},MALLOC,PTA,N/A,{ts},7,7,0,0x{:x},\"{{{attr}}}\",,\n",
                0x100 + i
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("memscope_dump_1.csv");
        std::fs::write(&path, &text).unwrap();
        let control = LoadControl::new();
        let whole = read_dump(text.as_bytes(), &control, "whole", Rows::All).unwrap();
        // (100, 900) (kept through the row of none), (200, 900, early), (200, none), (none,
        // none, late).
        assert_eq!(whole.extras.len(), 4);
        for dump in [
            whole,
            read_dump_file_in_parts(&path, &control, 8).unwrap(),
            read_dump_file_in_parts(&path, &control, 300).unwrap(),
        ] {
            let got: Vec<_> = dump
                .mem
                .iter()
                .map(|e| {
                    let x = dump.extras(e);
                    (
                        present(x.process_used),
                        present(x.device_used),
                        dump.texts.get(x.inefficient).to_string(),
                    )
                })
                .collect();
            let want: Vec<_> = rows
                .iter()
                .map(|&(p, d, f)| (p, d, f.to_string()))
                .collect();
            assert_eq!(got, want);
            assert_eq!(dump.mem.iter().nth(2).map(|e| e.extras), Some(0));
        }
    }

    proptest::proptest! {
        /// The rows sampled for the median are those whose number is a multiple of the
        /// stride, whatever the gaps between the events' rows (rows of other kinds, skipped
        /// rows), wherever the file was cut (each part sampled on its own) and when a list
        /// of lower rows follows in the same sample.
        #[test]
        fn every_nth_row_takes_the_rows_at_multiples_of_the_stride(
            gaps in proptest::collection::vec(1usize..6, 0..300),
            stride in 1u32..20,
            cut in 0usize..300,
        ) {
            let events: Vec<Event> = gaps
                .iter()
                .scan(0usize, |row, g| {
                    *row += g;
                    Some(*row)
                })
                .map(|row| event(row as i64 * 10, row))
                .collect();
            let expected: Vec<i64> = events
                .iter()
                .filter(|e| e.order % stride == 0)
                .map(|e| e.ts)
                .collect();
            let mut whole = EveryNthRow::new(stride);
            whole.all(&events);
            proptest::prop_assert_eq!(&whole.times, &expected);
            // Each part through a sample of its own.
            let (a, b) = events.split_at(cut.min(events.len()));
            let (mut first, mut second) = (EveryNthRow::new(stride), EveryNthRow::new(stride));
            first.all(a);
            second.all(b);
            first.times.extend(second.times);
            proptest::prop_assert_eq!(&first.times, &expected);
            // One sample through the later part, then the earlier (its orders jump back).
            let mut again = EveryNthRow::new(stride);
            again.all(b);
            again.all(a);
            let mut got = again.times.clone();
            got.sort_unstable();
            let mut want = expected.clone();
            want.sort_unstable();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
