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

use std::io::Read;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::chunks::LoadControl;
use super::csv_parts;
use super::error::{LoadError, NoDataReason};
use super::importer::Importer;
use super::prefetch_budget::Reservation;
use super::shared_read::SharedRead;
use super::value::parse_address as address;
use curves::{CurveEvent, rank_curves};
use open_blocks::{BlockKey, OpenBlocks};
use time_order::{Events, Timed, in_time_order, sort_by_time};

mod curves;
mod open_blocks;
mod pool_totals;
mod time_order;
use crate::model::{
    BlockTags, CallStacks, DataSource, DeviceMemory, DumpProblem, Format, HostOps, Interner,
    LazyColumn, MemoryRecords, Message, NO_STACK, NULL, NameId, OperatorMemory, Prefetch, RankData,
    RankInfo, Recent, StackSource, Step, StepSource, Steps, TagKind,
};

/// The importer's name (the `source` of its ranks).
pub const NAME: &str = "msmemscope";

/// The columns a dump starts with.
const HEADER_START: &[u8] = b"ID,Event,Event Type,Name,Timestamp";

/// Timestamps below this are µs, not ns (10¹⁷ ns is 1973; 10¹⁷ µs is beyond year 5000).
const US_BELOW: i64 = 100_000_000_000_000_000;

/// A block beyond 2⁵⁶ bytes (64 PiB) is no block: a hostile or broken number.
const MAX_SIZE: i64 = 1 << 56;

/// msMemScope dumps.
pub struct MemScopeDumps;

/// The one instance, listed in [`super::importers::IMPORTERS`].
pub static MEMSCOPE_DUMPS: MemScopeDumps = MemScopeDumps;

/// What an event is (the `Event` column), as far as memsight reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Malloc,
    Free,
    OpStart,
    OpEnd,
    /// `OOM_DETAIL` `OOM_TRIGGER`: the request that failed (`--analysis=oom`).
    OomTrigger,
    /// `OOM_DETAIL` `OOM_TOP_ALLOC`: one of the largest blocks held at the OOM.
    OomTop,
    /// `OOM_DETAIL` `OOM_RECENT_ALLOC`: one of the latest blocks held at the OOM.
    OomRecent,
    /// `MSTX` `Range_start` (its name in `what`).
    RangeStart,
    /// `MSTX` `Range_end`.
    RangeEnd,
}

/// An OOM record or an MSTX range, with what memsight reads of its row (a dump holds a few;
/// its MALLOCs and FREEs are [`MemEvent`]s, its ops [`OpEvent`]s). Texts are ids into
/// `Dump::texts` (0 when absent).
#[derive(Debug, Clone)]
struct Event {
    kind: Kind,
    /// The `Event Type` of an OOM record, the range's name of an MSTX one.
    what: u32,
    /// File order.
    order: u32,
    /// `Call Stack(Python)` (0 when empty).
    python: u32,
    /// `Device Id`: a number, `host`, or `None` for `N/A`.
    device: Option<u32>,
    /// Time as written (scaled to ns once the whole file is read).
    ts: i64,
    pid: i64,
    tid: i64,
    /// `size` (negative on a free in older dumps), [`NULL`] when absent.
    size: i64,
    /// An OOM record's keys, its `ptr` else the `Ptr` column (`None` for other events).
    oom: Option<Box<OomAttr>>,
}

/// An optional number of an event, [`NULL`] when absent.
fn or_null(v: Option<i64>) -> i64 {
    v.unwrap_or(NULL)
}

/// A number of an event, `None` when [`NULL`].
fn present(v: i64) -> Option<i64> {
    (v != NULL).then_some(v)
}

/// The keys of `Attr` memsight reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attr {
    /// `allocation_id`: the same id is the same block.
    pub allocation_id: Option<i64>,
    /// `addr`.
    pub addr: Option<u64>,
    /// `size` (negative on a free in older dumps).
    pub size: Option<i64>,
    /// `owner`: msMemScope's classification, `A@B@C`.
    pub owner: Option<String>,
    /// `total`: the pool's reserved bytes after the event.
    pub total: Option<i64>,
    /// `used`: the pool's allocated bytes after the event.
    pub used: Option<i64>,
    /// `process_used`: the process's device memory (npu-smi's figure).
    pub process_used: Option<i64>,
    /// `device_used`: the whole card's memory in use.
    pub device_used: Option<i64>,
    /// `inefficient`: `early_allocation`, `late_deallocation`, `temporary_idleness`.
    pub inefficient: Option<String>,
    /// What only an OOM record says (boxed: a dump holds an `Attr` for each of its millions
    /// of events, and a few dozen are OOM records).
    pub oom: Option<Box<OomAttr>>,
}

/// The keys of an OOM record's `Attr`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OomAttr {
    /// `func` (an OOM trigger): the call that failed.
    pub func: Option<String>,
    /// `req_size` (an OOM trigger): the bytes it asked for.
    pub req_size: Option<i64>,
    /// `ret` (an OOM trigger): the driver's return code.
    pub ret: Option<i64>,
    /// `ptr` (an OOM record): the block held at the OOM.
    pub ptr: Option<u64>,
    /// `pool` (an OOM record): `PTA`, `HAL`…
    pub pool: Option<String>,
}

/// An `Attr` without OOM keys.
static NO_OOM: OomAttr = OomAttr {
    func: None,
    req_size: None,
    ret: None,
    ptr: None,
    pool: None,
};

/// `attr`'s OOM keys, made when the first is read.
fn oom(attr: &mut Attr) -> &mut OomAttr {
    attr.oom.get_or_insert_with(Box::default)
}

impl Attr {
    /// Its OOM keys (none for an event that is no OOM record).
    pub fn oom(&self) -> &OomAttr {
        self.oom.as_deref().unwrap_or(&NO_OOM)
    }
}

impl Event {
    /// Its OOM keys (none for an event that is no OOM record).
    fn oom(&self) -> &OomAttr {
        self.oom.as_deref().unwrap_or(&NO_OOM)
    }
}

impl Timed for Event {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

/// A device index that names none (`Device Id` `N/A`) in a compact event.
const NO_DEVICE: u32 = u32::MAX;

/// A device index as a compact event keeps it.
fn device_slot(device: Option<u32>) -> u32 {
    device.unwrap_or(NO_DEVICE)
}

/// A MALLOC or FREE: what memsight reads of its row, in 96 bytes (a dump holds millions; as
/// an [`Event`] each was 128, the ops' too, and half of a 1 GB dump's peak memory). Numbers
/// are [`NULL`] when absent, texts ids into `Dump::texts` (0 when absent).
#[derive(Debug, Clone)]
struct MemEvent {
    /// Time as written (scaled to ns once the whole file is read).
    ts: i64,
    /// `addr`, else the `Ptr` column (when `has_addr`).
    addr: u64,
    /// `allocation_id`.
    allocation_id: i64,
    /// `size` (negative on a free in older dumps).
    size: i64,
    /// `total`, `used`, `process_used`, `device_used` ([`Attr`]).
    total: i64,
    used: i64,
    process_used: i64,
    device_used: i64,
    /// The pool (`Event Type`).
    what: u32,
    /// File order.
    order: u32,
    /// `Call Stack(Python)`, `owner`, `inefficient`.
    python: u32,
    owner: u32,
    inefficient: u32,
    /// (Process, thread): an index into `Dump::threads`.
    thread: u32,
    /// `Device Id`: an index into `Dump::devices`, [`NO_DEVICE`] for `N/A`.
    device: u32,
    /// A MALLOC (else a FREE).
    malloc: bool,
    /// Whether `addr` was written.
    has_addr: bool,
}

impl MemEvent {
    /// Its address, if written.
    fn addr(&self) -> Option<u64> {
        self.has_addr.then_some(self.addr)
    }
}

impl Timed for MemEvent {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

/// An op's start or end (`OP_LAUNCH`), in 32 bytes.
#[derive(Debug, Clone)]
struct OpEvent {
    /// Time as written (scaled to ns once the whole file is read).
    ts: i64,
    /// File order.
    order: u32,
    /// The op's name.
    what: u32,
    /// (Process, thread): an index into `Dump::threads`.
    thread: u32,
    /// `Device Id`: an index into `Dump::devices`, [`NO_DEVICE`] for `N/A`.
    device: u32,
    /// A start (else an end).
    start: bool,
}

impl Timed for OpEvent {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

/// `s.trim()`, with no search when it starts and ends with a byte that is no white space
/// (nearly every cell: a general trim was a tenth of reading a dump).
fn trim(s: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !(b as char).is_whitespace());
    if plain(s.as_bytes().first()) && plain(s.as_bytes().last()) {
        s
    } else {
        s.trim()
    }
}

/// `s.trim_matches('"')`, with no search when it neither starts nor ends with a quote.
fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') && b.last() != Some(&b'"') {
        s
    } else {
        s.trim_matches('"')
    }
}

/// A number as msMemScope writes it: decimal (maybe negative) or `0x` hex, maybe quoted.
fn number(text: &str) -> Option<i64> {
    // Nearly every one is plain digits: read eight at a time, with no trim or search.
    if let Some(v) = super::value::plain_i64(text.as_bytes()) {
        return Some(v);
    }
    let t = trim(unquote(trim(text)));
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i64::try_from(v).ok()),
        None => t.parse::<i64>().ok(),
    }
}

/// Parses an `Attr` cell of either dialect; what cannot be read is left out (a cell with
/// unbalanced braces or quotes gives what it can, never an error).
pub fn parse_attr(cell: &str) -> Attr {
    let mut attr = Attr::default();
    let owned = |text: &str| (!text.is_empty()).then(|| text.to_string());
    each_attr(cell, |key, text| match key {
        "allocation_id" => attr.allocation_id = number(text),
        "addr" => attr.addr = address(text),
        "size" => attr.size = size(text),
        "owner" => attr.owner = owned(text),
        "total" => attr.total = number(text),
        "used" => attr.used = number(text),
        "process_used" => attr.process_used = number(text),
        "device_used" => attr.device_used = number(text),
        "inefficient" => attr.inefficient = owned(text),
        "func" => oom(&mut attr).func = owned(text),
        "req_size" => oom(&mut attr).req_size = size(text),
        "ret" => oom(&mut attr).ret = number(text),
        "ptr" => oom(&mut attr).ptr = address(text),
        "pool" => oom(&mut attr).pool = owned(text),
        _ => {}
    });
    attr
}

/// A size as a key gives it: beyond [`MAX_SIZE`] (either sign) it is no size.
fn size(text: &str) -> Option<i64> {
    as_size(number(text))
}

/// A number read for a size: beyond [`MAX_SIZE`] (either sign) it is no size.
fn as_size(v: Option<i64>) -> Option<i64> {
    v.filter(|s| s.unsigned_abs() < MAX_SIZE as u64)
}

/// The keys of a MALLOC's or FREE's `Attr` ([`parse_attr`]'s, without the OOM keys), texts
/// borrowed from the cell: a dump has millions, and an `owner` copied for each was an
/// allocation per event.
#[derive(Debug, Default, PartialEq, Eq)]
struct MemAttr<'a> {
    allocation_id: Option<i64>,
    addr: Option<u64>,
    size: Option<i64>,
    /// `owner`, empty when absent.
    owner: &'a str,
    total: Option<i64>,
    used: Option<i64>,
    process_used: Option<i64>,
    device_used: Option<i64>,
    /// `inefficient`, empty when absent.
    inefficient: &'a str,
}

/// The keys of a MALLOC's or FREE's `Attr` that are read, in the order msMemScope writes them.
const MEM_KEYS: [&str; 9] = [
    "allocation_id",
    "addr",
    "size",
    "owner",
    "total",
    "used",
    "process_used",
    "device_used",
    "inefficient",
];

impl<'a> MemAttr<'a> {
    /// The value `text` (trimmed and unquoted) of key `MEM_KEYS[key]`.
    fn set(&mut self, key: usize, text: &'a str) {
        match key {
            1 => self.addr = address(text),
            3 => self.owner = text,
            8 => self.inefficient = text,
            _ => self.set_number(key, number(text)),
        }
    }

    /// The number `v` of key `MEM_KEYS[key]` (one of the numeric keys).
    fn set_number(&mut self, key: usize, v: Option<i64>) {
        match key {
            0 => self.allocation_id = v,
            2 => self.size = as_size(v),
            4 => self.total = v,
            5 => self.used = v,
            6 => self.process_used = v,
            7 => self.device_used = v,
            _ => {}
        }
    }
}

/// Whether `MEM_KEYS[key]` holds a number (not an address or a text).
fn is_numeric_key(key: usize) -> bool {
    matches!(key, 0 | 2 | 4..=7)
}

/// The number that starts at `from` in an `Attr` cell's body when it is written plainly
/// (`-`? and digits, as [`super::value::plain_i64`] takes them) and a comma or the body's
/// end follows it: its value and where it ends. Read in place, with no search for the comma
/// first; `None` leaves the part to [`MemAttr::set`].
fn plain_number_part(bytes: &[u8], from: usize) -> Option<(i64, usize)> {
    let rest = bytes.get(from..)?;
    let neg = rest.first() == Some(&b'-');
    let (v, n) = super::value::plain_number_at(&rest[usize::from(neg)..], 19)?;
    let to = from + usize::from(neg) + n;
    if bytes.get(to).is_some_and(|&b| b != b',') {
        return None;
    }
    // At most i64::MAX: its negation is never i64::MIN, the NULL.
    let v = i64::try_from(v).ok()?;
    Some((if neg { -v } else { v }, to))
}

/// [`parse_attr`] of a MALLOC's or FREE's cell, with no copies.
fn parse_mem_attr(cell: &str) -> MemAttr<'_> {
    plain_mem_attr(cell).unwrap_or_else(|| {
        let mut attr = MemAttr::default();
        each_attr(cell, |key, text| {
            if let Some(k) = MEM_KEYS.iter().position(|&k| k == key) {
                attr.set(k, text);
            }
        });
        attr
    })
}

/// [`parse_mem_attr`] of a cell written as msMemScope writes it: `{key:value,…}` with no quote
/// anywhere and each part starting with one of [`MEM_KEYS`] and a colon; `None` for any other
/// cell (the general cut, [`each_attr`], reads those). A part's end is found by the comma
/// after it alone, and its key by comparing the key msMemScope writes next, not by finding
/// every comma, colon and quote of the cell (that walk and its calls were a tenth of the
/// first look's CPU in `perf`). It reads
/// what the general cut reads: with no quotes, that cut is at every comma, and a part's key
/// ends at its first colon, the one after the key.
fn plain_mem_attr(cell: &str) -> Option<MemAttr<'_>> {
    let body = cell.strip_prefix('{')?.strip_suffix('}')?;
    let bytes = body.as_bytes();
    if bytes.is_empty() || memchr::memchr(b'"', bytes).is_some() {
        return None;
    }
    let mut attr = MemAttr::default();
    let (mut at, mut next) = (0, 0);
    loop {
        let rest = &bytes[at..];
        let is_key = |k: &str| rest.starts_with(k.as_bytes()) && rest.get(k.len()) == Some(&b':');
        let key = match MEM_KEYS.get(next) {
            Some(k) if is_key(k) => next,
            _ => MEM_KEYS.iter().position(|k| is_key(k))?,
        };
        // (`from` and `to` lie on ASCII bytes: char boundaries.)
        let from = at + MEM_KEYS[key].len() + 1;
        let to = match plain_number_part(bytes, from).filter(|_| is_numeric_key(key)) {
            Some((v, to)) => {
                attr.set_number(key, Some(v));
                to
            }
            None => {
                let to = memchr::memchr(b',', &bytes[from..]).map_or(bytes.len(), |i| from + i);
                attr.set(key, unquote(trim(&body[from..to])));
                to
            }
        };
        if to == bytes.len() {
            return Some(attr);
        }
        (at, next) = (to + 1, key + 1);
    }
}

/// Each `key:value` of an `Attr` cell (either dialect: `{k:v,…}` or `{"k":"v",…}`), both
/// trimmed and unquoted, in the cell's order: the cell is cut at each comma outside quotes,
/// and each part at its first colon (a part with none is skipped).
fn each_attr<'a>(cell: &'a str, mut read: impl FnMut(&'a str, &'a str)) {
    let body = trim(cell);
    let body = body.strip_prefix('{').unwrap_or(body);
    let body = body.strip_suffix('}').unwrap_or(body);
    let mut part = |start: usize, colon: Option<usize>, end: usize| {
        if let Some(colon) = colon {
            // (`start..colon` and `colon + 1..end` lie on ASCII bytes: char boundaries.)
            let (key, value) = (&body[start..colon], &body[colon + 1..end]);
            read(unquote(trim(key)), unquote(trim(value)));
        }
    };
    let (mut start, mut colon, mut quoted) = (0, None, false);
    each_structural(body.as_bytes(), |i, b| match b {
        b'"' => quoted = !quoted,
        b',' if !quoted => {
            part(start, colon, i);
            (start, colon) = (i + 1, None);
        }
        b':' if colon.is_none() => colon = Some(i),
        _ => {}
    });
    part(start, colon, body.len());
}

/// Calls `f` with the offset and byte of each `,`, `:` and `"` in `bytes`, in order. Eight
/// bytes are looked at a time (an `Attr` cell is ~150 bytes with ~25 such bytes: a `memchr` per
/// part cost more to start than to search, and was most of a dump's time in its cells).
fn each_structural(bytes: &[u8], mut f: impl FnMut(usize, u8)) {
    const LOW: u64 = u64::from_ne_bytes([0x7f; 8]);
    /// The high bit of each byte of `word` that equals the byte `splat` repeats (exactly:
    /// no borrow crosses a byte).
    fn equal(word: u64, splat: u64) -> u64 {
        let x = word ^ splat;
        !(((x & LOW).wrapping_add(LOW)) | x | LOW)
    }
    let splat = |b: u8| u64::from_ne_bytes([b; 8]);
    let (comma, colon, quote) = (splat(b','), splat(b':'), splat(b'"'));
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let word = chunk.try_into().map_or(0, u64::from_le_bytes);
        let mut hits = equal(word, comma) | equal(word, colon) | equal(word, quote);
        while hits != 0 {
            let i = (hits.trailing_zeros() / 8) as usize;
            f(base + i, chunk[i]);
            hits &= hits - 1;
        }
        base += 8;
    }
    for (i, &b) in chunks.remainder().iter().enumerate() {
        if matches!(b, b',' | b':' | b'"') {
            f(base + i, b);
        }
    }
}

/// A dump read whole.
#[derive(Debug, Default, Clone)]
struct Dump {
    /// Its MALLOCs and FREEs, in time order.
    mem: Events<MemEvent>,
    /// Its ops' starts and ends, in time order.
    ops: Events<OpEvent>,
    /// Its OOM records and MSTX ranges, in time order.
    rare: Vec<Event>,
    /// Pools, op names and stack texts.
    texts: Interner,
    /// Devices: index → `Device Id` text (`0`, `host`).
    devices: Vec<String>,
    /// (Process, thread) pairs: what the events' `thread` index.
    threads: Vec<(i64, i64)>,
    /// Rows that could not be read.
    unreadable: u64,
    /// Whether the file stops in the middle of its last row (left out).
    cut_short: bool,
    /// Rows whose time lies far outside the bulk of the dump's (a corrupt or µs-scale cell
    /// among ns ones): left out, so that one row cannot move the time origin by decades.
    out_of_window: u64,
}

impl Dump {
    /// The process of thread index `t`.
    fn pid(&self, t: u32) -> i64 {
        self.thread(t).0
    }

    /// The (process, thread) of thread index `t` ((0, 0) for none: an index is only made by
    /// a read of the dump).
    fn thread(&self, t: u32) -> (i64, i64) {
        self.threads.get(t as usize).copied().unwrap_or((0, 0))
    }
}

/// The column indices of a dump's header.
#[derive(Debug, Clone, Copy)]
struct Columns {
    event: usize,
    event_type: usize,
    name: usize,
    ts: usize,
    pid: usize,
    tid: usize,
    device: usize,
    ptr: usize,
    attr: usize,
    python: Option<usize>,
}

impl Columns {
    /// The columns of a header (a CSV's first line, a table's column names); `None` when one
    /// memsight needs is missing.
    fn of<'a>(header: impl Iterator<Item = &'a str> + Clone) -> Option<Columns> {
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
enum Rows {
    /// Every event memsight reads.
    All,
    /// The `OOM_DETAIL` rows alone, at most [`MAX_OOM_ROWS`] (an OOM bundle's look at a dump:
    /// its memory is the OOM rows', not the dump's).
    Oom,
}

/// How many `OOM_DETAIL` rows are read (msMemScope writes a trigger and a few dozen records
/// for each out-of-memory error).
const MAX_OOM_ROWS: usize = 10_000;

/// Builds a [`Dump`] row by row, whatever the rows come from.
struct DumpBuilder {
    cols: Columns,
    dump: Dump,
    /// The rows read, in file order: MALLOCs and FREEs, ops, the rest.
    mem: Vec<MemEvent>,
    ops: Vec<OpEvent>,
    rare: Vec<Event>,
    device_ids: FxHashMap<String, u32>,
    /// The device of the last row that named one.
    last_device: Option<u32>,
    thread_ids: FxHashMap<(i64, i64), u32>,
    /// The (process, thread) of the last row, and its index.
    last_thread: Option<((i64, i64), u32)>,
    order: u32,
    rows: Rows,
    /// The last texts interned in each column: most rows repeat them.
    recent: RecentTexts,
}

/// The last pool (`Event Type`), owner and op name a part's rows named. (Not the Python
/// stack: the generated 1 GB dump repeats the one before in a quarter of its MALLOCs, and
/// the comparisons that failed cost what the hashes saved, A/B 1.01.)
#[derive(Default)]
struct RecentTexts {
    pool: Recent,
    owner: Recent,
    op: Recent,
}

impl DumpBuilder {
    fn new(cols: Columns, rows: Rows) -> DumpBuilder {
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
    fn is_full(&self) -> bool {
        self.rows == Rows::Oom && self.rare.len() >= MAX_OOM_ROWS
    }

    /// The index of (process, thread) `key`, added when new (most rows name the thread the
    /// row before named).
    fn thread_index(&mut self, key: (i64, i64)) -> u32 {
        if let Some((k, id)) = self.last_thread
            && k == key
        {
            return id;
        }
        let id = thread_index(&mut self.thread_ids, &mut self.dump.threads, key);
        self.last_thread = Some((key, id));
        id
    }

    /// One row, its cells by column index; false once the load is cancelled.
    fn row<'a>(&mut self, cell: impl Fn(usize) -> &'a str, control: &LoadControl) -> bool {
        self.order = self.order.wrapping_add(1);
        if self.order.is_multiple_of(65_536) && control.is_cancelled() {
            return false;
        }
        let cols = self.cols;
        let cell = |i: usize| trim(cell(i));
        let kind = match (cell(cols.event), cell(cols.event_type)) {
            ("MALLOC", _) => Kind::Malloc,
            ("FREE", _) => Kind::Free,
            ("OP_LAUNCH", t) if t.ends_with("_START") => Kind::OpStart,
            ("OP_LAUNCH", t) if t.ends_with("_END") => Kind::OpEnd,
            ("OOM_DETAIL", "OOM_TRIGGER") => Kind::OomTrigger,
            ("OOM_DETAIL", "OOM_TOP_ALLOC") => Kind::OomTop,
            ("OOM_DETAIL", "OOM_RECENT_ALLOC") => Kind::OomRecent,
            ("MSTX", t) if t.eq_ignore_ascii_case("Range_start") => Kind::RangeStart,
            ("MSTX", t) if t.eq_ignore_ascii_case("Range_end") => Kind::RangeEnd,
            _ => return true,
        };
        let is_oom = matches!(kind, Kind::OomTrigger | Kind::OomTop | Kind::OomRecent);
        if self.rows == Rows::Oom && !is_oom {
            return true;
        }
        let (Some(ts), Some(pid), Some(tid)) = (
            number(cell(cols.ts)),
            number(cell(cols.pid)),
            number(cell(cols.tid)),
        ) else {
            self.dump.unreadable += 1;
            return true;
        };
        let device = match cell(cols.device) {
            "" | "N/A" => None,
            // Most rows name the device the row before named.
            d if self
                .last_device
                .is_some_and(|id| self.dump.devices[id as usize] == d) =>
            {
                self.last_device
            }
            d => {
                let id = device_index(&mut self.device_ids, &mut self.dump.devices, d);
                self.last_device = Some(id);
                Some(id)
            }
        };
        let order = self.order;
        match kind {
            Kind::Malloc | Kind::Free => {
                let attr = parse_mem_attr(cell(cols.attr));
                let Some(size) = attr.size else {
                    self.dump.unreadable += 1;
                    return true;
                };
                let thread = self.thread_index((pid, tid));
                let texts = &mut self.dump.texts;
                let recent = &mut self.recent;
                let what = recent.pool.intern(texts, cell(cols.event_type));
                let python = cols.python.map_or(0, |c| non_empty(texts, cell(c)));
                let owner = match attr.owner {
                    "" => 0,
                    t => recent.owner.intern(texts, t),
                };
                let inefficient = non_empty(texts, attr.inefficient);
                let addr = attr.addr.or_else(|| address(cell(cols.ptr)));
                self.mem.push(MemEvent {
                    ts,
                    addr: addr.unwrap_or(0),
                    allocation_id: or_null(attr.allocation_id),
                    size,
                    total: or_null(attr.total),
                    used: or_null(attr.used),
                    process_used: or_null(attr.process_used),
                    device_used: or_null(attr.device_used),
                    what,
                    order,
                    python,
                    owner,
                    inefficient,
                    thread,
                    device: device_slot(device),
                    malloc: kind == Kind::Malloc,
                    has_addr: addr.is_some(),
                });
            }
            Kind::OpStart | Kind::OpEnd => {
                let thread = self.thread_index((pid, tid));
                let name = cell(cols.name).trim_matches('"');
                let what = self.recent.op.intern(&mut self.dump.texts, name);
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
                let texts = &mut self.dump.texts;
                let (what, attr) = if is_oom {
                    (
                        texts.intern(cell(cols.event_type)),
                        parse_attr(cell(cols.attr)),
                    )
                } else {
                    (
                        texts.intern(cell(cols.name).trim_matches('"')),
                        Attr::default(),
                    )
                };
                let python = cols.python.map_or(0, |c| texts.intern(cell(c)));
                let ptr = address(cell(cols.ptr));
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
        true
    }

    /// The dump: timestamps in ns (µs-scale ones of older dumps scaled), events in time order.
    fn finish(self) -> Dump {
        self.finish_with(Vec::new())
    }

    /// The dump of this builder's rows and of `later`'s, the builders of the parts of the
    /// file after this one's, in file order: what one builder reading every part would
    /// finish with (texts, devices and threads numbered in order of first appearance, file
    /// order across the parts). Each part is sorted on its own, on every core, and the
    /// parts are kept as runs of the time order ([`in_time_order`]): joining them first held
    /// every event twice.
    fn finish_with(mut self, later: Vec<DumpBuilder>) -> Dump {
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
            self.dump.unreadable += dump.unreadable;
            self.dump.cut_short |= dump.cut_short;
            renumber.push(Renumber {
                texts,
                devices,
                threads,
                base: self.order,
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
        let window = median.map_or(super::time_window::TimeWindow::ANY, |m| {
            super::time_window::TimeWindow::around(if micros { m.saturating_mul(1000) } else { m })
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
const MEDIAN_ROWS: u32 = 1 << 12;

/// The times of the rows whose file order is a multiple of a stride, taken as the events go
/// by: one comparison an event while each list's orders rise (in file order). It is folded
/// into the walk that renumbers each part (searched for afterwards, part by part, it was a
/// cache miss at each step of each search: 2 % of a 1 GB dump's first look).
struct EveryNthRow {
    stride: u64,
    /// A multiple of the stride, and no other lies in `(next - stride, next)`: the first one
    /// past the last order seen.
    next: u64,
    times: Vec<i64>,
}

impl EveryNthRow {
    /// A sample of every `stride`th row (every row for a stride of 0).
    fn new(stride: u32) -> Self {
        EveryNthRow {
            stride: u64::from(stride.max(1)),
            next: 0,
            times: Vec::new(),
        }
    }

    /// Takes `e`'s time when its order is a multiple of the stride.
    #[inline]
    fn see<T: Timed>(&mut self, e: &T) {
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
    fn all<T: Timed>(&mut self, events: &[T]) {
        events.iter().for_each(|e| self.see(e));
    }
}

/// The events of one part of a dump, as read (in file order).
struct Part {
    mem: Vec<MemEvent>,
    ops: Vec<OpEvent>,
    rare: Vec<Event>,
}

impl Part {
    /// How many events.
    fn len(&self) -> usize {
        self.mem.len() + self.ops.len() + self.rare.len()
    }
}

/// A later part's ids as the first part's builder numbers them.
struct Renumber {
    /// Its texts', devices' and threads' ids there.
    texts: Vec<NameId>,
    devices: Vec<u32>,
    threads: Vec<u32>,
    /// The file order of the row before its first.
    base: u32,
}

impl Renumber {
    /// The part's events with their ids renumbered, each then shown to `sample`.
    fn apply(&self, part: &mut Part, sample: &mut EveryNthRow) {
        let text = |id: u32| self.texts.get(id as usize).copied().unwrap_or(0);
        let slot = |d: u32| self.devices.get(d as usize).copied().unwrap_or(NO_DEVICE);
        let thread = |t: u32| self.threads.get(t as usize).copied().unwrap_or(0);
        for e in &mut part.mem {
            e.what = text(e.what);
            e.python = text(e.python);
            e.owner = text(e.owner);
            e.inefficient = text(e.inefficient);
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

/// `t`'s id, 0 for an empty text (with no lookup: a FREE's empty stack).
fn non_empty(texts: &mut Interner, t: &str) -> NameId {
    if t.is_empty() { 0 } else { texts.intern(t) }
}

/// The index of (process, thread) `key` in `threads`, added when new.
fn thread_index(
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
fn device_index(ids: &mut FxHashMap<String, u32>, devices: &mut Vec<String>, d: &str) -> u32 {
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
struct PartBuilder<'a> {
    builder: DumpBuilder,
    control: &'a LoadControl,
    /// The header's cells: a last row with fewer and no line break after it was cut short.
    cells: usize,
}

impl csv_parts::RecordSink for PartBuilder<'_> {
    fn record(&mut self, record: &simd_csv::StringRecord) -> bool {
        self.builder
            .row(|i| record.get(i).unwrap_or(""), self.control)
    }

    /// A last row cut short (inside a quoted cell, or short of cells with no line break
    /// after it) is left out: its cut cell (a call stack's first frames, part of an `Attr`)
    /// would read as a stack or a size the dump never held.
    fn unfinished(&mut self, record: &simd_csv::StringRecord, how: csv_parts::Unfinished) -> bool {
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
const PART: u64 = 64 << 20;

/// Bytes of a part for which its lists reserve room for one row of each kind, up front: in
/// the generated 1 GB dump a MALLOC or FREE row is 480 bytes on average (a MALLOC's with its
/// Python stack) and an op's 85, one of each about every 565 bytes, so a part fills about
/// nine tenths of what is reserved; a longer list grows as any does. Room never written is
/// never touched: only address space.
const BYTES_A_RESERVED_ROW: u64 = 512;

/// Whether a line may be a row's start, for cutting a dump in parts: msMemScope's rows start
/// with their `ID` (digits and a comma); a call stack's lines in a quoted cell start with a
/// path or a frame. A wrong guess is found and read again ([`csv_parts`]).
fn starts_with_an_id(line: &[u8]) -> bool {
    let n = line.iter().take_while(|b| b.is_ascii_digit()).count();
    n > 0 && line.get(n) == Some(&b',')
}

/// Reads a dump (CSV) at `path`: every row, on every core ([`csv_parts`]) in parts of
/// [`PART`], when its first column is the `ID`; else on one.
fn read_dump_file(path: &Path, control: &LoadControl) -> Result<Dump, DumpProblem> {
    read_dump_file_in_parts(path, control, PART)
}

/// [`read_dump_file`] in parts of `part` bytes (tests cut small dumps into many).
fn read_dump_file_in_parts(
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
fn csv_cause(e: simd_csv::Error) -> crate::model::Cause {
    let en = e.to_string();
    match e.into_kind() {
        simd_csv::ErrorKind::Io(io) => crate::model::Cause::io(en, None, &io),
        _ => crate::model::Cause::said(en),
    }
}

/// A dump's header cells (a byte that is no UTF-8 read as U+FFFD: the columns memsight needs
/// are ASCII); `name` is for messages.
fn header_of<R: Read>(
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
fn read_dump(
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
    let mut record = simd_csv::StringRecord::new();
    while !builder.is_full() {
        match reader.read_record(&mut record) {
            Ok(false) => break,
            Ok(true) => {}
            Err(e) if e.is_io_error() => return Err(DumpProblem::unreadable(name, csv_cause(e))),
            Err(_) => {
                builder.dump.unreadable += 1;
                continue;
            }
        }
        if !builder.row(|i| record.get(i).unwrap_or(""), control) {
            return Err(DumpProblem::Cancelled);
        }
    }
    Ok(builder.finish())
}

/// Reads a dump's SQLite form (`memscope_dump_*.db`, table `memscope_dump` with the CSV's
/// column names; the tables Insight adds are not read), opened as every DB is: never written.
fn read_dump_db(path: &Path, control: &LoadControl, rows: Rows) -> Result<Dump, DumpProblem> {
    let shown = path.display();
    // A pending WAL or journal beside it is read from a private copy, as for every DB.
    let snapshot =
        super::db::snapshot_if_needed(path).map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let db = super::db::open_read_only(path, snapshot.as_ref())
        .map_err(|e| DumpProblem::unreadable(&shown, e))?;
    let conn: &rusqlite::Connection = &db;
    if !super::db::has_table(conn, DB_TABLE) {
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
                Ok(v) => super::db::text(v),
                Err(_) => String::new(),
            };
        }
        if !builder.row(|i| cells.get(i).map_or("", String::as_str), control) {
            return Err(DumpProblem::Cancelled);
        }
    }
    Ok(builder.finish())
}

/// The table of a dump's SQLite form.
const DB_TABLE: &str = "memscope_dump";

/// Whether `path` names a dump's SQLite form.
fn is_db(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("db"))
}

/// Reads the dump at `path`, CSV or SQLite.
fn read_path(path: &Path, control: &LoadControl) -> Result<Dump, DumpProblem> {
    read_rows(path, control, Rows::All)
}

/// Reads the `rows` asked for of the dump at `path`, CSV or SQLite.
fn read_rows(path: &Path, control: &LoadControl, rows: Rows) -> Result<Dump, DumpProblem> {
    if is_db(path) {
        read_dump_db(path, control, rows)
    } else if rows == Rows::All {
        read_dump_file(path, control)
    } else {
        open(path).and_then(|f| read_dump(f, control, &path.display().to_string(), rows))
    }
}

/// No event, in a [`Block`].
const NO_EVENT: u32 = u32::MAX;

/// A block: its MALLOC (or only its FREE) and its FREE, as indices into `Dump::mem`, in 20
/// bytes (a dump holds a million; as `Option<usize>`s a block was 40).
#[derive(Debug, Clone, Copy)]
struct Block {
    /// [`NO_EVENT`] when none.
    malloc: u32,
    free: u32,
    /// The device (the MALLOC's, else the FREE's), [`NO_DEVICE`] for none.
    device: u32,
    /// Its first event's pool (`what`) and thread: kept here, as a look-up of the event for
    /// each block missed the cache (a sixth of the time from the read to the first curves).
    pool: u32,
    thread: u32,
}

impl Block {
    /// Its MALLOC's index.
    fn malloc(&self) -> Option<usize> {
        (self.malloc != NO_EVENT).then_some(self.malloc as usize)
    }

    /// Its FREE's index.
    fn free(&self) -> Option<usize> {
        (self.free != NO_EVENT).then_some(self.free as usize)
    }

    /// Its MALLOC's index, else its FREE's.
    fn first(&self) -> Option<usize> {
        self.malloc().or_else(|| self.free())
    }

    /// Its device's index.
    fn device(&self) -> Option<u32> {
        (self.device != NO_DEVICE).then_some(self.device)
    }
}

/// Pairs the dump's MALLOC and FREE events into blocks, in time order; returns the blocks,
/// how many MALLOCs landed on a key still held (the earlier block stays never freed), and
/// whether every FREE names its block's pool.
fn pair(dump: &Dump) -> (Vec<Block>, u64, bool) {
    let mut open = OpenBlocks::new(dump.mem.len());
    // At most one block an event; the room is reserved, not touched (grown by doubling, the
    // blocks of a 1 GB dump were copied and their pages faulted in again at each step).
    let mut blocks: Vec<Block> = Vec::with_capacity(dump.mem.len());
    let mut over_held = 0;
    let mut pools_agree = true;
    for (i, e) in dump.mem.iter().enumerate() {
        // (A dump's events are counted in u32, as their file order is: no dump that fits in
        // memory has more.)
        let Ok(i) = u32::try_from(i) else { break };
        if i == NO_EVENT {
            break;
        }
        let pid = dump.pid(e.thread);
        let key = match (present(e.allocation_id), e.addr()) {
            (Some(id), _) => BlockKey::Id(pid, id),
            (None, Some(addr)) => BlockKey::Addr(pid, e.what, addr),
            (None, None) => continue,
        };
        if e.malloc {
            // (As many blocks as events before this one: fewer than `NO_EVENT`.)
            if open.open(key, blocks.len() as u32) {
                over_held += 1;
            }
            blocks.push(Block {
                malloc: i,
                free: NO_EVENT,
                device: e.device,
                pool: e.what,
                thread: e.thread,
            });
        } else {
            match open.close(key) {
                Some(b) => {
                    let b = b as usize;
                    blocks[b].free = i;
                    pools_agree &= blocks[b].pool == e.what;
                    // A MALLOC written with Device Id N/A takes its FREE's device.
                    if blocks[b].device == NO_DEVICE {
                        blocks[b].device = e.device;
                    }
                }
                None => blocks.push(Block {
                    malloc: NO_EVENT,
                    free: i,
                    device: e.device,
                    pool: e.what,
                    thread: e.thread,
                }),
            }
        }
    }
    (blocks, over_held, pools_agree)
}

/// A dump with its blocks paired and placed: what every rank of the dump is built from (made
/// once, shared by the dump's ranks).
struct Paired {
    dump: Dump,
    blocks: Vec<Block>,
    /// MALLOCs on a key still held ([`pair`]).
    over_held: u64,
    /// Each block's (process, device name's index in `device_names`) ([`block_parts`]).
    parts: Vec<Option<(i64, u32)>>,
    /// The device names blocks belong to (`npu:0`, `cpu`).
    device_names: Vec<String>,
    /// Every process's op spans (the dump's ops are dropped once these are made).
    spans: AllSpans,
    /// What discovery counts for it while its ranks have not taken it.
    counted: Option<Reservation>,
    /// The one place of every block, when the events say so without pairing: the pairing
    /// is then left to the rank's load, after its curves ([`Paired::pair`]).
    deferred: Option<OnePlace>,
    /// Whether every FREE names its block's pool (false until paired).
    pools_agree: bool,
}

/// The one (process, device) of every block of a dump, known from its MALLOCs and FREEs
/// without pairing them: every one that makes a block names the same process and the same
/// device, and no host pool. (A block's place is then that one, whichever events pair.)
#[derive(Debug, Clone)]
struct OnePlace {
    pid: i64,
    /// Its device's name (`npu:0`).
    device: String,
    /// The pools (`what` ids) of the events that make blocks, and whether each is a
    /// framework pool.
    pools: Vec<(u32, bool)>,
}

impl OnePlace {
    /// The one place of `dump`'s blocks, if the events say so (see [`OnePlace`]); a walk
    /// of its MALLOCs and FREEs on every core.
    fn of(dump: &Dump) -> Option<OnePlace> {
        use rayon::prelude::*;
        if u32::try_from(dump.mem.len()).is_err() {
            return None;
        }
        let chunk = 1 << 16;
        let seen = (0..dump.mem.len().div_ceil(chunk))
            .into_par_iter()
            .map(|k| {
                let mut seen = Places::default();
                let mut last = None;
                for e in dump.mem.range(k * chunk..(k + 1) * chunk) {
                    // (Most events repeat the one before's thread, device and pool.)
                    let place = (e.thread, e.device, e.what);
                    if !makes_a_block(e) || last == Some(place) {
                        continue;
                    }
                    last = Some(place);
                    seen.see(dump, e)?;
                }
                Some(seen)
            })
            .try_reduce(Places::default, |a, b| a.join(b))?;
        let (pid, device) = seen.place?;
        Some(OnePlace {
            pid,
            device: device_name(dump, Some(device), "")?,
            pools: (seen.pools.into_iter())
                .map(|p| (p, is_framework_pool(dump.texts.get(p))))
                .collect(),
        })
    }
}

/// The places and pools of some MALLOCs and FREEs that make blocks ([`OnePlace::of`]).
#[derive(Default)]
struct Places {
    /// Their one (process, device) (`None` before the first).
    place: Option<(i64, u32)>,
    pools: Vec<u32>,
}

impl Places {
    /// `e` seen; `None` once the events have no one place (another place, a host pool, or
    /// too many pools).
    fn see(&mut self, dump: &Dump, e: &MemEvent) -> Option<()> {
        // (An event of no device is at another place than one of a device; when every one
        // names none, the place has no device name.)
        let place = (dump.pid(e.thread), e.device);
        if *self.place.get_or_insert(place) != place {
            return None;
        }
        if !self.pools.contains(&e.what) {
            if is_host_pool(dump.texts.get(e.what)) || self.pools.len() >= MAX_ONE_PLACE_POOLS {
                return None;
            }
            self.pools.push(e.what);
        }
        Some(())
    }

    /// Both's places and pools; `None` when they have no one place or too many pools.
    fn join(mut self, other: Places) -> Option<Places> {
        match (self.place, other.place) {
            (Some(a), Some(b)) if a != b => return None,
            (None, b) => self.place = b,
            _ => {}
        }
        for p in other.pools {
            if !self.pools.contains(&p) {
                self.pools.push(p);
            }
        }
        (self.pools.len() <= MAX_ONE_PLACE_POOLS).then_some(self)
    }
}

/// More pools than this and a dump is paired at once (a dump has a handful).
const MAX_ONE_PLACE_POOLS: usize = 64;

/// Whether a MALLOC or FREE makes or closes a block: it names an allocation id or an
/// address ([`pair`]'s keys).
fn makes_a_block(e: &MemEvent) -> bool {
    e.allocation_id != NULL || e.has_addr
}

impl Paired {
    /// About how many bytes it holds (its events and blocks; texts left out).
    fn bytes(&self) -> usize {
        let dump = &self.dump;
        let events = dump
            .mem
            .len()
            .saturating_mul(size_of::<MemEvent>())
            .saturating_add(dump.ops.len().saturating_mul(size_of::<OpEvent>()))
            .saturating_add(dump.rare.len().saturating_mul(size_of::<Event>()));
        let blocks = self
            .blocks
            .len()
            .saturating_mul(size_of::<Block>() + size_of::<Option<(i64, u32)>>());
        let spans = (self.spans.spans.len()).saturating_mul(size_of::<OpSpan>());
        events.saturating_add(blocks).saturating_add(spans)
    }

    /// `dump` paired, or its pairing deferred when its blocks have one place
    /// ([`OnePlace`]): the rank's load makes its curves first and then pairs it.
    fn of(dump: Dump) -> Self {
        let deferred = OnePlace::of(&dump);
        let mut paired = Self::unpaired(dump);
        match deferred {
            Some(place) => paired.deferred = Some(place),
            None => paired.pair(),
        }
        paired
    }

    /// A paired copy of `other`'s events.
    fn paired_copy(other: &Paired) -> Self {
        let mut paired = Self::unpaired(other.dump.clone());
        paired.pair();
        paired
    }

    /// `dump` with nothing paired yet ([`Paired::pair`] pairs it).
    fn unpaired(dump: Dump) -> Self {
        Self {
            dump,
            blocks: Vec::new(),
            over_held: 0,
            parts: Vec::new(),
            device_names: Vec::new(),
            spans: AllSpans::default(),
            counted: None,
            deferred: None,
            pools_agree: false,
        }
    }

    /// Pairs its events into blocks and places them, and makes every process's op spans
    /// (see [`Paired::of`]).
    fn pair(&mut self) {
        self.deferred = None;
        let dump = &mut self.dump;
        // Passes over every event, on every core: the blocks, and each process's device and
        // op spans.
        let ((blocks, over_held, pools_agree), (only, spans)) = rayon::join(
            || pair(dump),
            || (device_of_processes(dump), all_op_spans(dump)),
        );
        // The ops are their spans from here (a third of their memory).
        dump.ops = Events::default();
        let (parts, device_names) = block_parts(dump, &blocks, &only);
        self.blocks = blocks;
        self.over_held = over_held;
        self.pools_agree = pools_agree;
        self.parts = parts;
        self.device_names = device_names;
        self.spans = spans;
    }
}

/// The framework's pools: their blocks are a device's blocks.
fn is_framework_pool(pool: &str) -> bool {
    matches!(pool, "PTA" | "MindSpore" | "ATB" | "PTA_WORKSPACE")
}

/// A host pool (`HOST`, `HOST_PINNED`): host memory whatever `Device Id` says.
fn is_host_pool(pool: &str) -> bool {
    pool.starts_with("HOST")
}

/// The device name of a rank: `npu:0` for a number, `cpu` for host memory.
fn device_name(dump: &Dump, device: Option<u32>, pool: &str) -> Option<String> {
    if is_host_pool(pool) {
        return Some("cpu".into());
    }
    let d = dump.devices.get(device? as usize)?;
    Some(if d.eq_ignore_ascii_case("host") {
        "cpu".into()
    } else if d.bytes().all(|b| b.is_ascii_digit()) {
        format!("npu:{d}")
    } else {
        d.clone()
    })
}

/// The (process, device name) of every block, the name as an index into the names it returns
/// (a `String` for each of a dump's million blocks was a tenth of its discovery). An
/// allocation whose events all say `Device Id` N/A belongs to its process's device when the
/// process has only one; else to no rank (counted by [`allocations_without_device`]).
fn block_parts(
    dump: &Dump,
    blocks: &[Block],
    only: &FxHashMap<i64, Option<u32>>,
) -> (Vec<Option<(i64, u32)>>, Vec<String>) {
    use rayon::prelude::*;
    // Each block's (process, device, pool), on every core (serial, this was a tenth of the
    // time to a big dump's first curves).
    let keys: Vec<Option<(i64, Option<u32>, u32)>> = blocks
        .par_iter()
        .map(|b| {
            b.first()?;
            let pid = dump.pid(b.thread);
            // (Free-only blocks keep no device: they are counted as such.)
            let device = b
                .device()
                .or_else(|| b.malloc().and_then(|_| only.get(&pid).copied().flatten()));
            Some((pid, device, b.pool))
        })
        .collect();
    /// A block's (device, pool).
    type Place = (Option<u32>, u32);
    let mut names: Vec<String> = Vec::new();
    // Each (device, pool) named once; most blocks have the one before's.
    let mut ids: FxHashMap<Place, Option<u32>> = FxHashMap::default();
    let mut last: Option<(Place, Option<u32>)> = None;
    let parts = keys
        .into_iter()
        .map(|key| {
            let (pid, device, what) = key?;
            let id = match last {
                Some((k, id)) if k == (device, what) => id,
                _ => {
                    let id = *ids.entry((device, what)).or_insert_with(|| {
                        let name = device_name(dump, device, dump.texts.get(what))?;
                        Some(match names.iter().position(|n| *n == name) {
                            Some(k) => k as u32,
                            None => {
                                names.push(name);
                                (names.len() - 1) as u32
                            }
                        })
                    });
                    last = Some(((device, what), id));
                    id
                }
            };
            Some((pid, id?))
        })
        .collect();
    (parts, names)
}

/// Each process's device when its events name only one (`None` when they name several).
fn device_of_processes(dump: &Dump) -> FxHashMap<i64, Option<u32>> {
    let mut only: FxHashMap<i64, Option<u32>> = FxHashMap::default();
    // The (thread, device) last seen: seen again, it changes nothing (most events repeat it).
    let mut last = None;
    let compact = (dump.mem.iter().map(|e| (e.thread, e.device)))
        .chain(dump.ops.iter().map(|e| (e.thread, e.device)));
    let events = compact
        .filter(|&(_, d)| d != NO_DEVICE)
        .filter(|&seen| {
            let new = last != Some(seen);
            last = Some(seen);
            new
        })
        .map(|(t, d)| (dump.pid(t), d))
        .chain(
            dump.rare
                .iter()
                .filter_map(|e| e.device.map(|d| (e.pid, d))),
        );
    for (pid, d) in events {
        only.entry(pid)
            .and_modify(|o| {
                if *o != Some(d) {
                    *o = None;
                }
            })
            .or_insert(Some(d));
    }
    only
}

/// Allocations (of process `pid`, or of every process) that no rank can hold: their device
/// is N/A and their process has none or several.
fn allocations_without_device(
    dump: &Dump,
    blocks: &[Block],
    parts: &[Option<(i64, u32)>],
    pid: Option<i64>,
) -> u64 {
    use rayon::prelude::*;
    blocks
        .par_iter()
        .zip(parts)
        .filter(|(b, p)| {
            p.is_none() && b.malloc().is_some() && pid.is_none_or(|pid| dump.pid(b.thread) == pid)
        })
        .count() as u64
}

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
                for &part in paired.parts.iter().flatten() {
                    if named.last() != Some(&part) {
                        named.push(part);
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
        None => std::borrow::Cow::Borrowed(&paired.spans),
    };
    let OpSpans { spans, rare } = op_spans(&paired.dump, all, pid);
    let mine = blocks_of_rank(&mut paired, pid, dev);
    // The last rank left holding the dump frees what only the ranks needed (its blocks and
    // their places are gone already when it held the dump alone from the start).
    if let Some(p) = Arc::get_mut(&mut paired) {
        p.spans = AllSpans::default();
        p.blocks = Vec::new();
        p.parts = Vec::new();
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
    let (rows_made, nested) = rayon::join(
        || {
            block_rows(
                &paired.dump,
                &mine,
                &shown_blocks,
                keep_addr,
                unnamed,
                &mut data.strings,
            )
        },
        || {
            let host = host_ops(&paired.dump, spans);
            (!host.is_empty()).then(|| super::stacks::NestedOps::of(host))
        },
    );
    drop(mine);
    // The events are freed beside what follows (a 1 GB dump's are ~360 MB: 20 ms).
    if let Some(p) = Arc::get_mut(&mut paired) {
        let mem = std::mem::take(&mut p.dump.mem);
        rayon::spawn(move || drop(mem));
    }
    let dump = &paired.dump;
    let BlockRows {
        table,
        orphans,
        row_thread,
        row_python,
        owners,
        findings,
        row_addr,
    } = rows_made;
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
    let stacks = nested.map(|nested| {
        let stacks = nested.attribute(
            &data.operators.alloc_time,
            &row_thread,
            StackSource::Imported(NAME),
        );
        // Each op name interned once, not at each of a million rows.
        let mut names: Vec<Option<NameId>> = vec![None; stacks.op_names.len()];
        for (r, &op) in stacks.row_op.iter().enumerate() {
            if op != NO_STACK {
                data.operators.name[r] = cached(&mut names, op, || {
                    data.strings.intern(stacks.op_names.get(op))
                });
            }
        }
        stacks
    });
    data.stacks = with_python_stacks(stacks, dump, &row_python, data.operators.len());
    data
}

/// The host ops of `spans` (a process's), their threads numbered as `Dump::threads`.
fn host_ops(dump: &Dump, spans: Vec<OpSpan>) -> HostOps {
    let mut host = HostOps::default();
    // Each op's name interned once (by its text's id), not at each of its spans.
    let mut op_names: Vec<Option<NameId>> = vec![None; dump.texts.len()];
    for span in spans {
        let name = cached(&mut op_names, span.what, || {
            host.names.intern(dump.texts.get(span.what))
        });
        host.push(
            span.start,
            span.end,
            u64::from(span.thread),
            name,
            NO_STACK,
            -1,
        );
    }
    host
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
    let deviceless = {
        use rayon::prelude::*;
        blocks
            .par_iter()
            .zip(parts)
            .filter(|(b, p)| {
                p.is_none()
                    && b.malloc().is_none()
                    && b.free().is_some()
                    && dump.pid(b.thread) == pid
            })
            .count() as u64
    };
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

/// The spans of process `pid`'s ops, and its OOM records and MSTX ranges.
struct OpSpans {
    /// In the order they end.
    spans: Vec<OpSpan>,
    /// In time order.
    rare: Vec<Event>,
}

/// An op's span, in 24 bytes (a dump holds a million).
#[derive(Debug, Clone, Copy)]
struct OpSpan {
    start: i64,
    end: i64,
    /// (Process, thread): an index into `Dump::threads`.
    thread: u32,
    /// Its name (an id into `Dump::texts`).
    what: u32,
}

/// Every process's op spans: what a dump's ops are once read (made with its blocks, in
/// discovery, and shared by its ranks).
#[derive(Debug, Default, Clone)]
struct AllSpans {
    /// In the order they end.
    spans: Vec<OpSpan>,
}

/// The op spans of every process, per thread, start and end matched last-in first-out by
/// name. The open starts are kept per thread and name: an end finds its start at once (a
/// search of the thread's open starts for each end was quadratic on a dump whose ends match
/// none of them). A thread is one process's, so a process's spans are those of a walk of its
/// ops alone, in the same order.
fn all_op_spans(dump: &Dump) -> AllSpans {
    // (thread index, name) → the times of its open starts.
    let mut open_ops: FxHashMap<(u32, u32), Vec<i64>> = FxHashMap::default();
    let mut spans = Vec::new();
    for e in dump.ops.iter() {
        if e.start {
            open_ops.entry((e.thread, e.what)).or_default().push(e.ts);
        } else if let Some(start) = open_ops.get_mut(&(e.thread, e.what)).and_then(Vec::pop) {
            spans.push(OpSpan {
                start,
                end: e.ts.max(start),
                thread: e.thread,
                what: e.what,
            });
        }
    }
    AllSpans { spans }
}

/// Process `pid`'s op spans (of `all`, the dump's: kept in place when owned), and its OOM
/// records and MSTX ranges.
fn op_spans(dump: &Dump, all: std::borrow::Cow<'_, AllSpans>, pid: i64) -> OpSpans {
    let of_pid = |t: u32| dump.pid(t) == pid;
    let spans = match all {
        std::borrow::Cow::Owned(all) => {
            let mut spans = all.spans;
            spans.retain(|s| of_pid(s.thread));
            spans
        }
        std::borrow::Cow::Borrowed(all) => (all.spans.iter())
            .filter(|s| of_pid(s.thread))
            .copied()
            .collect(),
    };
    let rare = dump.rare.iter().filter(|e| e.pid == pid).cloned().collect();
    OpSpans { spans, rare }
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
        let parts = std::mem::take(&mut p.parts);
        // (`retain` visits each block once, in order: each meets its own part.)
        let mut part = parts.iter();
        blocks.retain(|_| part.next().is_some_and(mine));
        return blocks;
    }
    // (On every core: a dump's million blocks are copied.)
    paired
        .blocks
        .par_iter()
        .zip(&paired.parts)
        .filter(|(_, p)| mine(p))
        .map(|(b, _)| *b)
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

/// What the curves take of a MALLOC or FREE, `shown` or not.
fn curve_event(ev: &MemEvent, shown: bool) -> CurveEvent {
    let size = present(ev.size).unwrap_or(0).abs();
    CurveEvent {
        ts: ev.ts,
        signed: if ev.malloc { size } else { -size },
        pool: ev.what,
        used: present(ev.used),
        total: present(ev.total),
        process_used: present(ev.process_used),
        device_used: present(ev.device_used),
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
            Some(curve_event(ev, shown(ev.what)))
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

/// What [`block_rows`] made: the blocks' table and what each row needs besides.
struct BlockRows {
    /// The blocks' table.
    table: OperatorMemory,
    /// Frees without their allocation.
    orphans: u64,
    /// Each row's thread (its index into `Dump::threads`, as the host ops'), Python stack and
    /// msMemScope tags.
    row_thread: Vec<u64>,
    row_python: Vec<u32>,
    owners: Vec<NameId>,
    findings: Vec<NameId>,
    /// Each row's address (for the OOM records; empty when not asked for).
    row_addr: Vec<Option<u64>>,
}

/// The rank's blocks (`mine`, those `shown`) as the rows of a blocks' table, named by their
/// owner or pool (interned in `strings`), in allocation order (a free-only block at its
/// free); their addresses when `keep_addr`.
fn block_rows(
    dump: &Dump,
    mine: &[Block],
    shown: &[bool],
    keep_addr: bool,
    unnamed: NameId,
    strings: &mut Interner,
) -> BlockRows {
    use rayon::prelude::*;
    // In allocation order (a free-only block at its free).
    let mut rows: Vec<&Block> = mine
        .iter()
        .zip(shown)
        .filter_map(|(b, &s)| s.then_some(b))
        .collect();
    rows.sort_by_key(|b| b.first());
    let mut table = OperatorMemory::default();
    let mut texts = RowTexts::new(dump, rows.len(), keep_addr, unnamed);
    // The numbers' columns in the order of [`block_numbers`].
    let mut numbers = [
        &mut table.size,
        &mut table.alloc_time,
        &mut table.release_time,
        &mut table.duration,
        &mut table.alloc_total_allocated,
        &mut table.alloc_total_reserved,
        &mut table.release_total_allocated,
        &mut table.release_total_reserved,
    ];
    let name = &mut table.name;
    numbers.iter_mut().for_each(|c| c.reserve(rows.len()));
    name.reserve(rows.len());
    // Each block's events, a batch at a time, on every core. (A block's MALLOC and FREE lie
    // anywhere among the dump's hundreds of MB of events: looked up in the loop that made
    // each row, each look-up missed the cache and held the row up, 70 % of the table's
    // time. Gathered in a loop of their own, many are fetched at once.) Then the batch's
    // numbers and its names, threads and tags side by side.
    let mut events: Vec<(Option<MemEvent>, Option<MemEvent>)> = Vec::new();
    for batch in rows.chunks(GATHER_BATCH) {
        batch
            .par_iter()
            .map(|b| {
                let event = |i: Option<usize>| i.map(|i| dump.mem[i].clone());
                (event(b.malloc()), event(b.free()))
            })
            .collect_into_vec(&mut events);
        let events = &events;
        rayon::join(
            || {
                for (malloc, free) in events {
                    if let Some(cells) = block_numbers(malloc.as_ref(), free.as_ref()) {
                        for (column, cell) in numbers.iter_mut().zip(cells) {
                            column.push(cell);
                        }
                    }
                }
            },
            || {
                for (malloc, free) in events {
                    if let Some(n) = texts.row(malloc.as_ref(), free.as_ref(), strings) {
                        name.push(n);
                    }
                }
            },
        );
    }
    let n = table.size.len();
    table.active_release_time = LazyColumn::filled(n);
    table.active_duration = LazyColumn::filled(n);
    table.alloc_total_active = LazyColumn::filled(n);
    table.release_total_active = LazyColumn::filled(n);
    table.stream = LazyColumn::filled(n);
    BlockRows {
        table,
        ..texts.made
    }
}

/// How many blocks' events [`block_rows`] gathers at a time (about 3 MB of them: they are
/// read again at once, from the cache).
const GATHER_BATCH: usize = 1 << 14;

/// A block's numbers in the blocks' table, from its MALLOC and FREE (either may be
/// missing, not both): size, allocation and release time, duration, and the pool's totals
/// (allocated, reserved) after each; a block freed without its MALLOC in the dump has a
/// negative size, as the msprof DB writes it.
fn block_numbers(malloc: Option<&MemEvent>, free: Option<&MemEvent>) -> Option<[i64; 8]> {
    let size_of = |e: &MemEvent| present(e.size).unwrap_or(0).abs();
    let release = |f: Option<&MemEvent>| f.map_or((NULL, NULL, NULL), |f| (f.ts, f.used, f.total));
    Some(match malloc {
        Some(m) => {
            let (released, allocated, reserved) = release(free);
            let duration = if released != NULL && m.ts != NULL {
                released.saturating_sub(m.ts)
            } else {
                NULL
            };
            [
                size_of(m),
                m.ts,
                released,
                duration,
                m.used,
                m.total,
                allocated,
                reserved,
            ]
        }
        None => {
            let f = free?;
            [-size_of(f), NULL, f.ts, NULL, NULL, NULL, f.used, f.total]
        }
    })
}

/// What [`block_rows`] makes of each block besides its numbers: its name, thread, stack and
/// tags.
struct RowTexts<'d> {
    dump: &'d Dump,
    keep_addr: bool,
    unnamed: NameId,
    /// What is made (its table left empty: the numbers are made beside it).
    made: BlockRows,
    /// The dump's texts (owners, findings) and pools' block names as the rank's strings,
    /// each interned once: not at each of a million blocks.
    as_string: Vec<Option<NameId>>,
    block_names: Vec<Option<NameId>>,
}

impl<'d> RowTexts<'d> {
    /// Room for `n` rows.
    fn new(dump: &'d Dump, n: usize, keep_addr: bool, unnamed: NameId) -> Self {
        RowTexts {
            dump,
            keep_addr,
            unnamed,
            made: BlockRows {
                table: OperatorMemory::default(),
                orphans: 0,
                row_thread: Vec::with_capacity(n),
                row_python: Vec::with_capacity(n),
                owners: Vec::with_capacity(n),
                findings: Vec::with_capacity(n),
                row_addr: Vec::with_capacity(if keep_addr { n } else { 0 }),
            },
            as_string: vec![None; dump.texts.len()],
            block_names: vec![None; dump.texts.len()],
        }
    }

    /// A block's row, from its MALLOC and FREE: its name (`None` for no row: a block with
    /// neither).
    fn row(
        &mut self,
        malloc: Option<&MemEvent>,
        free: Option<&MemEvent>,
        strings: &mut Interner,
    ) -> Option<NameId> {
        let dump = self.dump;
        let Some(m) = malloc else {
            let f = free?;
            self.made.orphans += 1;
            self.made.row_thread.push(u64::from(f.thread));
            self.made.row_python.push(0);
            self.made.owners.push(0);
            self.made.findings.push(0);
            if self.keep_addr {
                self.made.row_addr.push(None);
            }
            return Some(self.unnamed);
        };
        self.made.row_thread.push(u64::from(m.thread));
        self.made.row_python.push(m.python);
        let as_string = &mut self.as_string;
        let mut string = |id: u32| cached(as_string, id, || strings.intern(dump.texts.get(id)));
        let owner = string(m.owner);
        let finding = string(m.inefficient);
        self.made.owners.push(owner);
        self.made.findings.push(finding);
        if self.keep_addr {
            self.made.row_addr.push(m.addr());
        }
        // Until an op span names it: the dump's owner (`PTA@model@weight`), else its pool
        // (`PTA block`, `HAL block`), not "Unknown".
        Some(if owner != self.unnamed {
            owner
        } else {
            match dump.texts.get(m.what) {
                "" | "N/A" => self.unnamed,
                pool => cached(&mut self.block_names, m.what, || {
                    strings.intern(&format!("{pool} block"))
                }),
            }
        })
    }
}

/// `cache[id]`, made by `make` the first time (and every time for an id past its end).
fn cached(cache: &mut [Option<NameId>], id: u32, make: impl FnOnce() -> NameId) -> NameId {
    match cache.get_mut(id as usize) {
        Some(Some(n)) => *n,
        Some(slot) => *slot.insert(make()),
        None => make(),
    }
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

/// The blocks `OOM_DETAIL` rows name (`--analysis=oom`), as the OOM column's values (`top 3`,
/// `recent 1`: their places in msMemScope's lists; `#2 top 3` when the process ran out more
/// than once), and a note per OOM with the request that failed. A record names the block of
/// this rank at its `ptr` held at the OOM's time; records naming none are counted in the note.
/// `rare`: the process's OOM records and MSTX ranges, in time order.
fn oom_tags(
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
fn mentions(path: &Path, needle: &[u8]) -> Result<bool, DumpProblem> {
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

    /// Every event of a dump as text, its ids resolved (ids differ with the order texts
    /// were met in).
    fn described(dump: &Dump) -> Vec<String> {
        let text = |id: u32| dump.texts.get(id).to_string();
        let device = |d: u32| dump.devices.get(d as usize).cloned();
        let mem = dump.mem.iter().map(|e| {
            format!(
                "mem {} {} {} {} {} {} {:?} {:?} {:?} {} {} {} {} {} {} {}",
                e.malloc,
                text(e.what),
                e.order,
                text(e.python),
                text(e.owner),
                text(e.inefficient),
                device(e.device),
                dump.thread(e.thread),
                e.addr(),
                e.ts,
                e.allocation_id,
                e.size,
                e.total,
                e.used,
                e.process_used,
                e.device_used,
            )
        });
        let ops = dump.ops.iter().map(|e| {
            format!(
                "op {} {} {} {:?} {:?} {}",
                e.start,
                text(e.what),
                e.order,
                device(e.device),
                dump.thread(e.thread),
                e.ts,
            )
        });
        let rare = dump.rare.iter().map(|e| {
            format!(
                "{:?} {} {} {} {:?} {} {} {} {} {:?}",
                e.kind,
                text(e.what),
                e.order,
                text(e.python),
                e.device.map(|d| dump.devices[d as usize].clone()),
                e.ts,
                e.pid,
                e.tid,
                e.size,
                e.oom
            )
        });
        mem.chain(ops).chain(rare).collect()
    }

    /// The header of a dump, as msMemScope writes it.
    const DUMP_HEADER: &str = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

    /// Generated dumps with Python stacks, one a rank, of `allocs` allocations each.
    fn generated_dumps(dir: &Path, ranks: usize, allocs: usize) -> Vec<PathBuf> {
        let opts = crate::generate::GenOptions {
            ranks,
            allocs,
            format: Format::Imported(NAME),
            stacks: true,
            ..crate::generate::demo_options()
        };
        crate::generate::generate(dir, &opts).unwrap()
    }

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
            let deferred = Paired::of(dump.clone());
            assert!(deferred.deferred.is_some(), "{}", path.display());
            let mut at_once = Paired::of(dump);
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
        let mut at_once = Paired::of(dump.clone());
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

    use proptest::prelude::*;

    proptest! {
        /// A number read the quick way (plain digits) is what the standard library reads.
        #[test]
        fn numbers_read_as_the_standard_library_reads_them(
            t in "[ \"]?-?(0x)?[0-9a-f]{0,20}[ \"]?",
        ) {
            let s = t.trim().trim_matches('"').trim();
            let expected = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok().and_then(|v| i64::try_from(v).ok()),
                None => s.parse::<i64>().ok(),
            };
            prop_assert_eq!(number(&t), expected);
        }

        /// The quick trims are the standard ones, on any text.
        #[test]
        fn the_quick_trims_are_the_standard_ones(
            t in "[ \t\u{b}\u{a0}\u{3000}\"a0,]{0,6}",
        ) {
            prop_assert_eq!(trim(&t), t.trim());
            prop_assert_eq!(unquote(&t), t.trim_matches('"'));
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

    /// A dump holds millions of events: a MALLOC or FREE stays at 96 bytes, an op at 32 (an
    /// `Attr` in each made them 232, and the 1 GB dump's peak memory 1.4 GiB; one event
    /// type of 128 bytes for both, 1.0 GiB), a block at 20 (12, and 8 for its pool and
    /// thread, which were looked up in its event, a cache miss for each).
    #[test]
    fn events_are_small() {
        assert!(size_of::<MemEvent>() <= 96, "{}", size_of::<MemEvent>());
        assert!(size_of::<OpEvent>() <= 32, "{}", size_of::<OpEvent>());
        assert!(size_of::<Block>() <= 20, "{}", size_of::<Block>());
    }
    /// An event at `ts`, the `i`th of its file (its pid too, to tell them apart).
    pub(super) fn event(ts: i64, i: usize) -> Event {
        Event {
            kind: Kind::RangeStart,
            what: 0,
            order: i as u32,
            python: 0,
            device: None,
            ts,
            pid: i as i64,
            tid: 0,
            size: NULL,
            oom: None,
        }
    }

    proptest! {
        /// Op spans found per thread and name are those of a search of the thread's open
        /// starts for the last of the same name (the walk they replaced), in the same order.
        #[test]
        fn op_spans_match_the_last_open_start_of_their_name(
            ops in proptest::collection::vec((0u32..3, 0u32..3, any::<bool>()), 0..120),
        ) {
            // Threads 0 and 1 are process 1's, thread 2 process 2's.
            let events: Vec<OpEvent> = ops
                .iter()
                .enumerate()
                .map(|(i, &(thread, what, start))| OpEvent {
                    ts: i as i64,
                    order: i as u32,
                    what,
                    thread,
                    device: NO_DEVICE,
                    start,
                })
                .collect();
            let dump = Dump {
                ops: Events::from_list(events.clone()),
                threads: vec![(1, 10), (1, 11), (2, 20)],
                ..Dump::default()
            };
            let all = all_op_spans(&dump);
            let got = op_spans(&dump, std::borrow::Cow::Borrowed(&all), 1);
            let owned = op_spans(&dump, std::borrow::Cow::Owned(all_op_spans(&dump)), 1);
            prop_assert_eq!(format!("{:?}", owned.spans), format!("{:?}", got.spans));
            // The walk it replaced: each thread's open starts in one list, searched from its end.
            let mut open: FxHashMap<u32, Vec<(u32, i64)>> = FxHashMap::default();
            let mut spans = Vec::new();
            for e in events.iter().filter(|e| e.thread < 2) {
                let stack = open.entry(e.thread).or_default();
                if e.start {
                    stack.push((e.what, e.ts));
                } else if let Some(k) = stack.iter().rposition(|&(w, _)| w == e.what) {
                    let (what, start) = stack.remove(k);
                    spans.push((start, e.ts, dump.threads[e.thread as usize], what));
                }
            }
            let got_spans: Vec<_> = got.spans.iter().map(|s| (s.start, s.end, dump.thread(s.thread), s.what)).collect();
            prop_assert_eq!(got_spans, spans);
        }
    }

    #[test]
    fn a_comma_inside_quotes_does_not_end_a_key() {
        let a = parse_attr(r#"{"owner":"PTA@a,b","size":"5",func:"x",pool:HAL}"#);
        assert_eq!(a.owner.as_deref(), Some("PTA@a,b"));
        assert_eq!(a.size, Some(5));
        assert_eq!(a.oom().func.as_deref(), Some("x"));
        assert_eq!(a.oom().pool.as_deref(), Some("HAL"));
        // Unbalanced quotes: what can be read is, nothing panics.
        let b = parse_attr(r#"{size:7,owner:"open,total:9}"#);
        assert_eq!((b.size, b.total), (Some(7), None));
        assert_eq!(parse_attr(""), Attr::default());
    }

    #[test]
    fn both_attr_dialects_parse() {
        let a = parse_attr(
            "{allocation_id:4,addr:0x000012c041400000,size:16778240,total:20971520,used:16780288}",
        );
        assert_eq!(a.allocation_id, Some(4));
        assert_eq!(a.addr, Some(0x12c041400000));
        assert_eq!(a.size, Some(16778240));
        assert_eq!(a.total, Some(20971520));
        assert_eq!(a.used, Some(16780288));
        let j = parse_attr(
            r#"{"allocation_id":"4","addr":"0x12c0","size":"6356992","owner":"PTA@model@weight","inefficient":"early_allocation"}"#,
        );
        assert_eq!(j.allocation_id, Some(4));
        assert_eq!(j.addr, Some(0x12c0));
        assert_eq!(j.size, Some(6356992));
        assert_eq!(j.owner.as_deref(), Some("PTA@model@weight"));
        assert_eq!(j.inefficient.as_deref(), Some("early_allocation"));
        // Older dumps: decimal addresses, negative sizes on frees, an empty owner.
        let o = parse_attr("{addr:20616935636992,size:-512,owner:,total:2097152,used:3537408}");
        assert_eq!(o.addr, Some(20616935636992));
        assert_eq!(o.size, Some(-512));
        assert_eq!(o.owner, None);
    }

    /// How `each_attr` cut a cell before it looked at eight bytes at a time: a `memchr` for
    /// each comma or quote, then for each part's colon (the reference it must agree with).
    fn each_attr_by_memchr(cell: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let body = trim(cell);
        let body = body.strip_prefix('{').unwrap_or(body);
        let body = body.strip_suffix('}').unwrap_or(body);
        let mut read = |part: &str| {
            if let Some(colon) = memchr::memchr(b':', part.as_bytes()) {
                let (key, value) = (&part[..colon], &part[colon + 1..]);
                out.push((unquote(trim(key)).into(), unquote(trim(value)).into()));
            }
        };
        let (mut start, mut quoted) = (0, false);
        for i in memchr::memchr2_iter(b',', b'"', body.as_bytes()) {
            if body.as_bytes()[i] == b'"' {
                quoted = !quoted;
            } else if !quoted {
                read(&body[start..i]);
                start = i + 1;
            }
        }
        read(&body[start..]);
        out
    }

    proptest! {
        /// The eight-bytes-at-a-time cut of an `Attr` cell gives the parts, keys and values the
        /// `memchr` one gave, on cells of every shape (quotes, colons and commas anywhere,
        /// white space, multi-byte text with the bytes `, : "` with the high bit set, any length around
        /// the eight-byte words); and the
        /// copy-free MALLOC/FREE reading (its plain cut included) reads what `parse_attr` reads.
        #[test]
        fn attr_cells_cut_as_the_memchr_reference_does(
            cell in r#"[{}:,"a-z_0-9 \t中é¬º¢]{0,90}"#,
            keys in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("allocation_id"), Just("addr"), Just("size"), Just("owner"),
                        Just("total"), Just("used"), Just("process_used"),
                        Just("device_used"), Just("inefficient"), Just("ptr"), Just("x"),
                        // Keys that start with one that is read.
                        Just("owner_id"), Just("sizes"),
                    ],
                    prop_oneof![
                        4 => r#"-?[0-9]{1,21}|0x[0-9a-fA-F]{1,17}|[a-zA-Z@_ 0-9"]{0,12}"#,
                        // The ends of an i64 (its least is the NULL), and signs and zeros.
                        1 => proptest::sample::select(vec![
                            "-9223372036854775808", "9223372036854775807",
                            "9223372036854775808", "-9223372036854775807", "-0", "0", "00",
                            "-", "--1", "+1", "1-", "1 ", " 1", "1e3",
                            // A number run into another part (no comma after it).
                            "1xsize:5", "7 used:3", "2owner:a",
                        ]).prop_map(String::from),
                    ],
                    any::<bool>(),
                ),
                0..12,
            ),
        ) {
            let pairs = |c: &str| {
                let mut v: Vec<(String, String)> = Vec::new();
                each_attr(c, |k, t| v.push((k.into(), t.into())));
                v
            };
            prop_assert_eq!(pairs(&cell), each_attr_by_memchr(&cell));
            let built: Vec<String> = keys
                .iter()
                .map(|(k, v, q)| if *q { format!("\"{k}\":\"{v}\"") } else { format!("{k}:{v}") })
                .collect();
            let built = format!("{{{}}}", built.join(","));
            // As msMemScope writes them (the plain cut, `plain_mem_attr`, reads these).
            let plain: Vec<String> = keys.iter().map(|(k, v, _)| format!("{k}:{v}")).collect();
            let plain = format!("{{{}}}", plain.join(","));
            for c in [&cell, &built, &plain] {
                prop_assert_eq!(pairs(c), each_attr_by_memchr(c));
                let (full, mem) = (parse_attr(c), parse_mem_attr(c));
                let text = |t: &str| (!t.is_empty()).then(|| t.to_string());
                prop_assert_eq!(
                    (full.allocation_id, full.addr, full.size, full.total, full.used),
                    (mem.allocation_id, mem.addr, mem.size, mem.total, mem.used)
                );
                prop_assert_eq!(
                    (full.process_used, full.device_used, full.owner, full.inefficient),
                    (mem.process_used, mem.device_used, text(mem.owner), text(mem.inefficient))
                );
            }
        }
    }

    #[test]
    fn broken_attrs_give_what_they_can() {
        assert_eq!(parse_attr(""), Attr::default());
        assert_eq!(parse_attr("{size:12").size, Some(12));
        assert_eq!(parse_attr("size:1}}}").size, None);
        assert_eq!(parse_attr("{\"size\":\"7,addr:1}").size, None);
        assert_eq!(parse_attr("{size:-9223372036854775808}").size, None);
        let many: String = (0..100_000).map(|i| format!("k{i}:{i},")).collect();
        assert_eq!(parse_attr(&format!("{{{many}size:5}}")).size, Some(5));
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
