//! PyTorch profiler traces (`torch.profiler.profile(profile_memory=True)`, exported with
//! `export_chrome_trace` or written by `tensorboard_trace_handler`: `*.pt.trace.json`, often
//! gzipped): a rank per (file, device) with memory events.
//!
//! - **Curves**: each `[memory]` instant event carries the allocator's `Total Allocated` and
//!   `Total Reserved` after it: they are the Operator Allocated / Reserved curves (Reserved is
//!   left out for a device whose every event says 0: the CPU has no caching allocator).
//! - **Blocks**: allocations (`Bytes` > 0) and frees (< 0) paired on `Addr` in time order (an
//!   address is reused once freed). A free without an allocation is a row with a negative size
//!   (allocated before profiling began, as the msprof DB writes it); an allocation at an address
//!   still held closes nothing (the earlier block stays never freed). Both are counted in notes.
//! - **Names and stacks**: a block is named by the innermost `cpu_op` (or phase annotation:
//!   `Optimizer.step#…`, `Optimizer.zero_grad#…`, `enumerate(DataLoader)…`) running on its own
//!   thread when it was allocated, and takes that op's call stack by the rules of [`crate::ingest::stacks`]
//!   (`fwdbwd` flows included). Steps are the `ProfilerStep#N` spans.
//!
//! The file is streamed by [`crate::ingest::trace_view`]'s reader (gzip decoded as it is read), so
//! memory is bounded by the events kept, not by the file. Discovery finds the devices with the
//! byte search of [`super::memory_scan`], which reads every memory event: it keeps them
//! for the loads ([`crate::model::Prefetch`], within a budget), whose first look is then at
//! once. A trace is read twice in all: discovery's scan, and the whole read for ops, stacks
//! and steps, which the ranks of a trace naming several devices share
//! ([`crate::ingest::shared_read`]). A `[memory]` name written with JSON escapes makes the scan
//! unsure, and the whole read then reads those events.

use std::collections::BTreeSet;
use std::io::{BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use rustc_hash::FxHashMap;

use super::memory_scan::{self, ScanError, in_parts, scan_file_parts};
use crate::ingest::chunks::LoadControl;
use crate::ingest::error::{LoadError, NoDataReason};
use crate::ingest::importer::Importer;
use crate::ingest::prefetch_budget::Reservation;
use crate::ingest::shared_read::SharedRead;
use crate::ingest::trace_view::{
    BLOCK, MemoryEvent, ReadOptions, TraceExtract, read_trace_file, read_trace_with,
};
use crate::model::Cause;
use crate::model::{
    Component, DataSource, Format, LazyColumn, MemoryRecords, Message, NULL, Prefetch, RankData,
    RankInfo, StackSource, StepSource, Steps,
};

/// The importer's name (the `source` of its ranks).
pub const NAME: &str = "pytorch_trace";

/// Bytes of a gzipped trace's start decoded to recognise it and read its header.
const HEAD_DECODED: u64 = 64 << 10;

/// PyTorch profiler traces.
pub struct PyTorchTraces;

/// The one instance, listed in [`crate::ingest::importers::IMPORTERS`].
pub static PYTORCH_TRACES: PyTorchTraces = PyTorchTraces;

fn is_gzip(path: &Path) -> bool {
    path.file_name()
        .is_some_and(|n| n.to_string_lossy().to_ascii_lowercase().ends_with(".gz"))
}

/// The file's bytes, gunzipped as they are read when its name ends in `.gz` (to the end of its
/// data when the stream breaks off after it: `cut` is then set); never blocks on a FIFO
/// ([`crate::ingest::safe_fs::open_regular`]). A whole read inflates on a thread of its own,
/// ahead of the parse ([`crate::ingest::gzip::inflate_ahead`]).
fn open_noting(path: &Path, cut: &Arc<AtomicBool>) -> std::io::Result<Box<dyn Read>> {
    let f = crate::ingest::safe_fs::open_regular(path)?;
    Ok(if is_gzip(path) {
        crate::ingest::gzip::inflate_ahead(f, Arc::clone(cut))
    } else {
        Box::new(f)
    })
}

/// The file's first bytes, gunzipped here (a head is too short to inflate ahead).
fn open_head(path: &Path) -> std::io::Result<Box<dyn Read>> {
    let f = crate::ingest::safe_fs::open_regular(path)?;
    Ok(if is_gzip(path) {
        Box::new(crate::ingest::gzip::Tolerant::new(
            BufReader::new(f),
            Default::default(),
        ))
    } else {
        Box::new(f)
    })
}

/// The first decoded bytes of `path` (the header: schemaVersion, distributedInfo, host_name).
fn decoded_head(path: &Path) -> Vec<u8> {
    let mut buf = Vec::new();
    if let Ok(r) = open_head(path) {
        let _ = r.take(HEAD_DECODED).read_to_end(&mut buf);
    }
    buf
}

/// The JSON value after `"key":` in `head` (an object or a scalar), parsed on its own.
fn header_value(head: &[u8], key: &str) -> Option<serde_json::Value> {
    let at = memchr::memmem::find(head, format!("\"{key}\"").as_bytes())?;
    let rest = &head[at + key.len() + 2..];
    let colon = rest.iter().position(|&b| b == b':')?;
    let mut values = serde_json::Deserializer::from_slice(&rest[colon + 1..]).into_iter();
    values.next()?.ok()
}

/// When the trace's clock started, in Unix ns (`baseTimeNanoseconds` of its header): a `ts` of
/// `t` µs happened at Unix ns `t × 1000 + base`. None when the header does not say.
pub fn base_time_ns(path: &Path) -> Option<i64> {
    header_value(&decoded_head(path), "baseTimeNanoseconds")?.as_i64()
}

/// The capacity of `device` (`cuda:0`: its index) as the trace's header records it
/// (`deviceProperties`: `name`, `totalGlobalMem`): the card's name and its bytes.
pub fn device_capacity(path: &Path, device: &str) -> Option<(String, i64)> {
    let index: i64 = device.rsplit(':').next()?.parse().ok()?;
    let props = header_value(&decoded_head(path), "deviceProperties")?;
    let d = props
        .as_array()?
        .iter()
        .find(|d| d["id"].as_i64() == Some(index))?;
    let total = d["totalGlobalMem"].as_i64().filter(|&t| t > 0)?;
    Some((d["name"].as_str().unwrap_or("").to_string(), total))
}

/// The micro-batch the trace was recorded with, where its shapes say (`record_shapes=True`):
/// the first dimension of the indices given to the first `aten::embedding` (a language model's
/// tokens, `[batch, sequence]`); `None` when no embedding, or no shapes, were recorded. Reads
/// the file up to that op (at most 32 MiB decoded: the first step's embedding comes early, and
/// every whatif asks, so a trace without one must not be read whole).
pub fn profiled_micro_batch(path: &Path) -> Option<u64> {
    const LIMIT: u64 = 32 << 20;
    let mut text = Vec::new();
    open_head(path)
        .ok()?
        .take(LIMIT)
        .read_to_end(&mut text)
        .ok()?;
    // The first embedding given 2-D indices (a positional embedding's are 1-D).
    memchr::memmem::find_iter(&text, b"\"aten::embedding\"").find_map(|at| {
        let event = &text[at..];
        // The event's own args: before the next event's name.
        let end = memchr::memmem::find(&event[1..], b"\"name\"").map_or(event.len(), |e| e + 1);
        let dims = header_value(&event[..end], "Input Dims")?;
        let indices = dims.as_array()?.get(1)?.as_array()?.clone();
        (indices.len() == 2)
            .then(|| indices.first()?.as_u64())
            .flatten()
            .filter(|&b| b > 0)
    })
}

/// What a rank's trace records about the run beyond its memory: the card (name, bytes) and
/// the micro-batch (both `None` for a rank not read from a PyTorch trace, or when not recorded).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recorded {
    /// The device's name and capacity in bytes ([`device_capacity`]).
    pub card: Option<(String, i64)>,
    /// The profiled micro-batch ([`profiled_micro_batch`]).
    pub micro_batch: Option<u64>,
}

/// [`Recorded`] for a loaded rank: reads its trace's header and, for the micro-batch, up to
/// 32 MiB of it.
pub fn recorded(info: &RankInfo) -> Recorded {
    match &info.source {
        DataSource::Imported { path, importer, .. } if *importer == NAME => Recorded {
            card: info
                .device
                .as_deref()
                .and_then(|d| device_capacity(path, d)),
            micro_batch: profiled_micro_batch(path),
        },
        _ => Recorded::default(),
    }
}

/// The one PyTorch trace (`*.pt.trace.json[.gz]`) in the folder of `path` (a snapshot beside
/// the profile of its run), if exactly one.
pub fn trace_beside(path: &Path) -> Option<PathBuf> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let mut found = std::fs::read_dir(dir).ok()?.filter_map(|e| {
        let p = e.ok()?.path();
        let name = p.file_name()?.to_str()?.to_ascii_lowercase();
        // A link out of the MCP server's roots is not beside the snapshot.
        let beside = name.ends_with(".pt.trace.json") || name.ends_with(".pt.trace.json.gz");
        (beside && crate::ingest::safe_fs::readable(&p)).then_some(p)
    });
    let first = found.next()?;
    found.next().is_none().then_some(first)
}

/// Why the rank of a device could not be read from a profile ([`load_device_rank`]), as a value:
/// the app says it in its language, the CLI in English (`Display`).
#[derive(Debug, thiserror::Error)]
pub enum DeviceRankError {
    /// Discovery found no profile there.
    #[error(transparent)]
    Discover(#[from] crate::ingest::DiscoverError),
    /// The profile has several ranks, none of this device (`cuda:0`).
    #[error("the profile has no rank of {0}")]
    NoRankOf(String),
    /// The rank could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
}

/// The rank of `device` (`cuda:0`; else the only rank) of the profile at `path`, loaded whole,
/// with its clock's start in Unix ns when it is a PyTorch trace that says
/// ([`base_time_ns`]): what a snapshot of the same run is joined with.
pub fn load_device_rank(
    path: &Path,
    device: &str,
) -> Result<(RankData, Option<i64>), DeviceRankError> {
    let found = crate::ingest::discover(path)?;
    let info = match found
        .ranks
        .iter()
        .find(|r| r.device.as_deref() == Some(device))
    {
        Some(r) => r,
        None if found.ranks.len() == 1 => &found.ranks[0],
        None => return Err(DeviceRankError::NoRankOf(device.to_string())),
    };
    let data = crate::ingest::load_rank(info, &LoadControl::new())?;
    let base = match &data.info.source {
        DataSource::Imported { path, .. } => base_time_ns(path),
        _ => None,
    };
    Ok((data, base))
}

/// A device's name: `cpu`, `cuda:0`, `npu:3` (PrivateUse1, torch_npu), `device20:1`…
pub fn device_name(device_type: i64, device_id: i64) -> String {
    let kind = match device_type {
        0 => return "cpu".into(),
        1 => "cuda",
        6 => "hip",
        12 => "xpu",
        13 => "mps",
        20 => "npu",
        t => return format!("device{t}:{device_id}"),
    };
    format!("{kind}:{device_id}")
}

/// Which memory events belong to a rank's device: [`device_name`] turned around once, so that
/// the millions of events of a big trace are matched by two integers instead of a name each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DeviceOf {
    /// `cpu`: every event of `Device Type` 0, whatever its id.
    Cpu,
    /// Exactly this (`Device Type`, `Device Id`).
    Exactly(i64, i64),
    /// A name [`device_name`] does not give: no event matches.
    Nothing,
}

impl DeviceOf {
    /// The events named `name` by [`device_name`].
    pub fn named(name: &str) -> Self {
        if name == "cpu" {
            return Self::Cpu;
        }
        let Some((kind, id)) = name.rsplit_once(':') else {
            return Self::Nothing;
        };
        let device_type = match kind {
            "cuda" => Some(1),
            "hip" => Some(6),
            "xpu" => Some(12),
            "mps" => Some(13),
            "npu" => Some(20),
            other => other.strip_prefix("device").and_then(|t| t.parse().ok()),
        };
        match (device_type, id.parse()) {
            // Only a name that [`device_name`] gives back as it is ("cuda:01" is no name).
            (Some(t), Ok(id)) if device_name(t, id) == name => Self::Exactly(t, id),
            _ => Self::Nothing,
        }
    }

    /// Whether an event of `device_type` and `device_id` is this device's: the same answer as
    /// `device_name(device_type, device_id) == name`.
    pub fn matches(&self, device_type: i64, device_id: i64) -> bool {
        match *self {
            Self::Cpu => device_type == 0,
            Self::Exactly(t, id) => device_type == t && device_id == id,
            Self::Nothing => false,
        }
    }
}

/// The key of a memory event's device kind, quotes included.
const TYPE_KEY: &[u8] = b"\"Device Type\"";
/// The key of a memory event's device number, quotes included.
const ID_KEY: &[u8] = b"\"Device Id\"";

/// The devices (`Device Type`, `Device Id`) of a trace's `[memory]` events, found by a byte
/// search for their `"Device Type"` argument rather than by parsing every event (0.48 s for a
/// 1.06 GB trace of 3.9M memory events, warm, on the 2-core VM of the README; the load parses
/// it properly).
fn devices_of(mut file: impl Read) -> std::io::Result<BTreeSet<(i64, i64)>> {
    /// Bytes kept from the end of a block: an args object reaches at most this far either
    /// side of its `"Device Type"`.
    const KEEP: usize = 512;
    let finder = memchr::memmem::Finder::new(TYPE_KEY);
    // Built once: a searcher built for every event was 2 % of a big trace's load.
    let id_finder = memchr::memmem::Finder::new(ID_KEY);
    let mut devices = BTreeSet::new();
    let mut buf: Vec<u8> = Vec::with_capacity(BLOCK + KEEP);
    let mut chunk = vec![0u8; BLOCK];
    // Where the search resumes in `buf` (occurrences before it were read).
    let mut from = 0;
    loop {
        let n = file.read(&mut chunk)?;
        let last = n == 0;
        buf.extend_from_slice(&chunk[..n]);
        // An occurrence is read once its object may have been read whole (or at the end).
        let limit = if last {
            buf.len()
        } else {
            buf.len().saturating_sub(KEEP)
        };
        while let Some(at) = finder.find(&buf[from..limit.max(from)]) {
            let at = from + at;
            if let Some(device) = device_at(&buf, at, &id_finder) {
                devices.insert(device);
            }
            from = at + TYPE_KEY.len();
        }
        if last {
            return Ok(devices);
        }
        // A key cut by `limit` is searched again whole next time.
        from = from.max(limit.saturating_sub(TYPE_KEY.len() - 1));
        let drop = from.saturating_sub(KEEP);
        buf.drain(..drop);
        from -= drop;
    }
}

/// The (type, id) of the args object around the `"Device Type"` at `at` (`Device Id` -1, the
/// CPU's, when it has none); `id_finder` searches for [`ID_KEY`].
fn device_at(buf: &[u8], at: usize, id_finder: &memchr::memmem::Finder<'_>) -> Option<(i64, i64)> {
    let open = memchr::memrchr(b'{', &buf[..at])?;
    let close = at + memchr::memchr(b'}', &buf[at..])?;
    let args = &buf[open..=close];
    let id = id_finder
        .find(args)
        .and_then(|k| int_after_key(&args[k + ID_KEY.len()..]))
        .unwrap_or(-1);
    Some((int_after_key(&buf[at + TYPE_KEY.len()..=close])?, id))
}

/// The integer after a key's closing quote: `: 20`, `:"0"`, `: -1` (a JSON number or a numeric
/// string; read by hand, since discovery meets one per memory event).
fn int_after_key(rest: &[u8]) -> Option<i64> {
    let mut i = 0;
    let skip = |i: &mut usize, what: &[u8]| {
        while rest.get(*i).is_some_and(|b| what.contains(b)) {
            *i += 1;
        }
    };
    skip(&mut i, b" \t\r\n");
    (rest.get(i) == Some(&b':')).then_some(())?;
    i += 1;
    skip(&mut i, b" \t\r\n\"");
    let start = i;
    if rest.get(i) == Some(&b'-') {
        i += 1;
    }
    skip(&mut i, b"0123456789");
    std::str::from_utf8(&rest[start..i]).ok()?.parse().ok()
}

/// The size of a [`MemoryEvent`] in a `Vec`.
const EVENT_BYTES: usize = size_of::<MemoryEvent>();

/// One device's memory events as discovery's scan found them (in file order, left in the
/// scan's parts), for its rank's load to take ([`Prefetch`]); counted against
/// [`crate::ingest::prefetch_budget`] until taken or dropped: a folder of big traces is
/// discovered with the byte search alone past it.
#[derive(Debug)]
struct Kept {
    parts: Vec<Vec<MemoryEvent>>,
    /// What is counted for them.
    _counted: Reservation,
}

impl Kept {
    /// `parts`, when the budget has room for them.
    fn within_budget(parts: Vec<Vec<MemoryEvent>>) -> Option<Self> {
        let events: usize = parts.iter().map(Vec::len).sum();
        let counted = Reservation::take(events.saturating_mul(EVENT_BYTES))?;
        Some(Self {
            parts,
            _counted: counted,
        })
    }

    /// The parts, handed over (the budget counts them no more).
    fn into_parts(self) -> Vec<Vec<MemoryEvent>> {
        self.parts
    }
}

/// What a rank of a trace takes from discovery ([`Prefetch`]): its memory events when they
/// were kept, and the file's whole read shared with the file's other ranks (a trace of many
/// devices is read once for all of them, not once a rank).
struct TracePrefetch {
    kept: Option<Kept>,
    shared: Option<Arc<SharedRead<WholeRead>>>,
}

/// The whole read of a trace, memory events skipped, and whether its gzip stream broke off.
type WholeRead = (TraceExtract, bool);

/// What discovery found in a trace: its memory events' devices, and each device's events
/// where they were kept for the load (by device name; `None` once handed to a rank).
struct Found {
    devices: BTreeSet<(i64, i64)>,
    kept: Vec<(String, Option<Kept>)>,
}

/// The devices of a trace's memory events. When the budget may have room (by the file's
/// size: an event is 64 bytes kept for at least 200 written), by the loads' own scan of every
/// memory event, whose events are then kept for the loads ([`Kept`]): a trace is read twice in
/// all, not three times. Else, and when the scan is not sure of every event, by the byte
/// search of [`devices_of`], which keeps nothing. The scan stops once `control` is cancelled.
fn devices_in(path: &Path, control: &LoadControl) -> Result<Found, ScanError> {
    let gzip = is_gzip(path);
    let room = crate::ingest::prefetch_budget::room() as u64;
    let size = std::fs::metadata(path).map_or(u64::MAX, |m| m.len());
    // A gzipped trace is decoded whole by the byte search too: always scanned.
    if gzip || size / 200 * EVENT_BYTES as u64 <= room {
        let (parts, unsure) = scan_file_parts(path, gzip, memory_scan::PART, &|_| true, control)?;
        control.file_done();
        if unsure == 0 {
            return Ok(by_device(parts));
        }
    }
    // In parts, in parallel: every part reads a little past its ends, and a device seen
    // twice is one.
    let parts = in_parts(path, gzip, &|reader, _, _| {
        devices_of(reader).map_err(ScanError::Io)
    })?;
    Ok(Found {
        devices: parts.into_iter().flatten().collect(),
        kept: Vec::new(),
    })
}

/// The devices of the events of `parts` and each device's events (file order kept), within
/// the budget.
fn by_device(parts: Vec<Vec<MemoryEvent>>) -> Found {
    let mut devices = BTreeSet::new();
    let mut last = None;
    for e in parts.iter().flatten() {
        let d = (e.device_type, e.device_id);
        if last != Some(d) {
            devices.insert(d);
            last = Some(d);
        }
    }
    let mut names: Vec<String> = devices.iter().map(|&(t, id)| device_name(t, id)).collect();
    names.dedup();
    let kept = if let [name] = names.as_slice() {
        // One device (the usual case): its events as they are, no copy.
        vec![(name.clone(), Kept::within_budget(parts))]
    } else {
        let of: Vec<DeviceOf> = names.iter().map(|n| DeviceOf::named(n)).collect();
        let mut split: Vec<Vec<MemoryEvent>> = vec![Vec::new(); names.len()];
        for e in parts.into_iter().flatten() {
            if let Some(k) = of
                .iter()
                .position(|d| d.matches(e.device_type, e.device_id))
            {
                split[k].push(e);
            }
        }
        names
            .into_iter()
            .zip(split)
            .map(|(name, events)| (name, Kept::within_budget(vec![events])))
            .collect()
    };
    Found { devices, kept }
}

/// A rank's label from the file name: `worker0.1795….pt.trace.json.gz` → `worker0.1795…`.
fn stem(path: &Path) -> String {
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let lower = name.to_ascii_lowercase();
    for ext in [".pt.trace.json.gz", ".pt.trace.json", ".json.gz", ".json"] {
        if lower.ends_with(ext) {
            return name[..name.len() - ext.len()].to_string();
        }
    }
    name
}

fn unreadable(e: impl std::fmt::Display) -> LoadError {
    LoadError::NoData {
        rank: String::new(),
        reason: NoDataReason::Other(e.to_string()),
    }
}

impl Importer for PyTorchTraces {
    fn name(&self) -> &'static str {
        NAME
    }

    fn looks_for(&self) -> &'static str {
        "*.json / *.json.gz (PyTorch profiler traces)"
    }

    fn wants(&self, file_name: &str) -> bool {
        let l = file_name.to_ascii_lowercase();
        (l.ends_with(".json") || l.ends_with(".json.gz"))
            && l != "trace_view.json"
            && !l.starts_with("profiler_info")
            && !l.starts_with("profiler_metadata")
    }

    fn recognises(&self, path: &Path, head: &[u8]) -> bool {
        let decoded;
        let head = if head.starts_with(&[0x1f, 0x8b]) {
            decoded = decoded_head(path);
            decoded.as_slice()
        } else {
            head
        };
        let start = head.iter().position(|b| !b.is_ascii_whitespace());
        start.is_some_and(|i| head[i] == b'{')
            && (memchr::memmem::find(head, b"\"schemaVersion\"").is_some()
                || memchr::memmem::find(head, b"\"traceEvents\"").is_some())
    }

    /// The trace's memory events are scanned to find its devices (`devices_in`): the scan
    /// tells `control` its progress, and a cancel stops it.
    fn ranks(&self, path: &Path, notes: &mut Vec<Message>, control: &LoadControl) -> Vec<RankInfo> {
        let shown = path.display().to_string();
        let found = match devices_in(path, control) {
            Ok(found) => found,
            Err(cause) => {
                notes.push(Message::PyTorchTraceUnreadable {
                    cause: match &cause {
                        ScanError::Io(e) => {
                            Cause::io(format!("{shown}: {cause}"), Some(shown.clone()), e)
                        }
                        ScanError::Cancelled => Cause::said(format!("{shown}: {cause}")),
                    },
                });
                return Vec::new();
            }
        };
        let Found { devices, mut kept } = found;
        if devices.is_empty() {
            notes.push(Message::TraceWithoutMemory { path: shown });
            return Vec::new();
        }
        let head = decoded_head(path);
        let label = header_value(&head, "distributedInfo")
            .and_then(|d| d.get("rank").and_then(serde_json::Value::as_i64))
            .map_or_else(|| stem(path), |r| r.to_string());
        let host = header_value(&head, "host_name").and_then(|h| h.as_str().map(str::to_string));
        let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
        // One rank per device name: PyTorch writes the CPU's events with Device Id -1 or 0,
        // and both are the one "cpu" (two ranks would each hold all of them, counted twice).
        // Sorted pairs put every CPU id side by side.
        let mut names: Vec<String> = devices.iter().map(|&(t, id)| device_name(t, id)).collect();
        names.dedup();
        let shared = (names.len() > 1).then(|| SharedRead::new(names.len()));
        names
            .iter()
            .map(|dev| {
                let dev = dev.clone();
                let kept = kept
                    .iter_mut()
                    .find(|(name, _)| *name == dev)
                    .and_then(|(_, k)| k.take());
                let prefetch = if kept.is_none() && shared.is_none() {
                    Prefetch::default()
                } else {
                    Prefetch::new(TracePrefetch {
                        kept,
                        shared: shared.clone(),
                    })
                };
                RankInfo {
                    rank: if names.len() == 1 {
                        label.clone()
                    } else {
                        format!("{label} {dev}")
                    },
                    device: Some(dev.clone()),
                    host: host.clone(),
                    format: Format::Imported(NAME),
                    dir: dir.clone(),
                    source: DataSource::Imported {
                        importer: NAME,
                        path: path.to_path_buf(),
                        part: dev,
                        prefetch,
                    },
                    notes: Vec::new(),
                }
            })
            .collect()
    }

    fn load(&self, info: &RankInfo, control: &LoadControl) -> Result<RankData, LoadError> {
        self.load_with_first_look(info, control, &mut |_| {})
    }

    /// The memory events are found first by [`super::memory_scan`] (on every core),
    /// then the whole file is read for the ops, stacks and steps: the curves are the first
    /// look, as soon as the scan ends. (A gzipped file is scanned beside the whole read.)
    fn load_with_first_look(
        &self,
        info: &RankInfo,
        control: &LoadControl,
        early: &mut (dyn FnMut(RankData) + Send),
    ) -> Result<RankData, LoadError> {
        let with_rank = |e: LoadError| match e {
            LoadError::NoData { reason, .. } => LoadError::NoData {
                rank: info.rank.clone(),
                reason,
            },
            other => other,
        };
        let DataSource::Imported {
            path,
            part,
            prefetch,
            ..
        } = &info.source
        else {
            return Err(with_rank(unreadable("not a PyTorch trace rank")));
        };
        let shown = path.display().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let read = |options: ReadOptions| -> Result<TraceExtract, LoadError> {
            let read = if is_gzip(path) {
                let reader = open_noting(path, &cut)
                    .map_err(|e| with_rank(unreadable(format!("{shown}: {e}"))))?;
                read_trace_with(reader, BLOCK, control, &shown, options)
            } else {
                // A plain file: in parts on every core.
                read_trace_file(path, control, &shown, options)
            };
            match read {
                Ok(x) => Ok(x),
                Err(crate::ingest::trace_view::TraceError::Cancelled) => Err(LoadError::Cancelled),
                Err(e) => Err(with_rank(unreadable(e))),
            }
        };
        // The ops, stacks and steps: read once for all the file's ranks when it has several.
        let TracePrefetch { kept, shared } =
            prefetch.take::<TracePrefetch>().unwrap_or(TracePrefetch {
                kept: None,
                shared: None,
            });
        let read_rest = || -> Result<TraceExtract, LoadError> {
            let options = ReadOptions { skip_memory: true };
            let Some(shared) = &shared else {
                return read(options);
            };
            let whole =
                shared.take_or_read(|| read(options).map(|x| (x, cut.load(Ordering::Relaxed))))?;
            let (extract, was_cut) = Arc::unwrap_or_clone(whole);
            if was_cut {
                cut.store(true, Ordering::Relaxed);
            }
            Ok(extract)
        };
        let device = DeviceOf::named(part);
        let keep = |e: &MemoryEvent| device.matches(e.device_type, e.device_id);
        // The curves shown as the first look are the complete rank's too (its records `Arc`).
        // The events stay in the scan's parts: joining them took a tenth of a second and as
        // much memory again on a 1 GB trace.
        let scan_parts = || scan_file_parts(path, is_gzip(path), memory_scan::PART, &keep, control);
        let mut scan_and_show = || {
            let scan = scan_parts();
            let drawn = match &scan {
                Ok((parts, 0)) => show_first_look(info, &slices(parts), early),
                _ => None,
            };
            (scan, drawn)
        };
        // Discovery's scan found this device's events: the first look at once, and only the
        // whole read for the rest.
        let ((scan, drawn), extract) = if let Some(kept) = kept {
            let parts = kept.into_parts();
            let drawn = show_first_look(info, &slices(&parts), early);
            ((Ok((parts, 0)), drawn), read_rest())
        // A plain file's scan takes every core: the first look comes sooner when the whole
        // read waits for it. A gzipped file's scan is one thread: both at once.
        } else if is_gzip(path) {
            std::thread::scope(|s| {
                let thread = std::thread::Builder::new()
                    .name("memory_scan".into())
                    .spawn_scoped(s, &mut scan_and_show);
                match thread {
                    Ok(h) => {
                        let extract = read_rest();
                        let scan = h.join().unwrap_or_else(|_| {
                            let failed = std::io::Error::other("scan failed");
                            (Err(ScanError::Io(failed)), None)
                        });
                        (scan, extract)
                    }
                    // No thread to be had: one after the other, without a first look.
                    Err(_) => ((scan_parts(), None), read_rest()),
                }
            })
        } else {
            let scan = scan_and_show();
            (scan, read_rest())
        };
        let mut extract = extract?;
        let (memory, curves_shown) = match scan {
            Ok((parts, 0)) => (parts, drawn),
            Err(ScanError::Cancelled) => return Err(LoadError::Cancelled),
            // The byte search was not sure of every hit (or an event is unreadable, which
            // only the whole read can count): read everything again, memory events included.
            _ => {
                extract = read(ReadOptions::default())?;
                (vec![std::mem::take(&mut extract.memory)], None)
            }
        };
        let trace_cut = extract.cut_short;
        let mut data = build_rank(info, extract, memory, part, &shown, curves_shown);
        // One note for one cut: a gzip stream cut short says the trace was too.
        if cut.load(Ordering::Relaxed) {
            data.report.warn(Message::GzipEndedEarly {
                path: shown.clone(),
            });
        } else if trace_cut {
            data.report.warn(Message::TraceCutShort {
                path: shown.clone(),
            });
        }
        if data.records.is_empty() && data.operators.is_empty() {
            return Err(with_rank(LoadError::NoData {
                rank: String::new(),
                reason: NoDataReason::NoRows,
            }));
        }
        Ok(data)
    }
}

/// Hands `early` the first look at a rank, the curves of its memory events (none without
/// any), and returns those curves for the complete rank.
fn show_first_look(
    info: &RankInfo,
    parts: &[&[MemoryEvent]],
    early: &mut (dyn FnMut(RankData) + Send),
) -> Option<Arc<MemoryRecords>> {
    if parts.iter().all(|p| p.is_empty()) {
        return None;
    }
    let mut first = RankData::empty(info.clone());
    first.records = Arc::new(curves(parts));
    first.memory_record_rows = first.records.len();
    let records = Arc::clone(&first.records);
    early(first);
    Some(records)
}

/// The Operator Allocated / Reserved curves of a device's memory events (Reserved left out
/// when every event says 0: the CPU has no caching allocator), in time order.
fn curves(parts: &[&[MemoryEvent]]) -> MemoryRecords {
    // Time order, file order on ties (the sort is stable; PyTorch writes them in order, so
    // the copy is rare).
    let sorted: Vec<MemoryEvent>;
    let whole: [&[MemoryEvent]; 1];
    let parts: &[&[MemoryEvent]] = if in_time_order(parts) {
        parts
    } else {
        sorted = {
            let mut copy = parts.concat();
            copy.sort_by_key(|e| e.ns);
            copy
        };
        whole = [&sorted];
        &whole
    };
    let events = || parts.iter().flat_map(|p| p.iter());
    let has_reserved = events().any(|e| e.total_reserved != NULL && e.total_reserved != 0);
    // Column by column, on two cores: a row at a time pushed six columns for each of millions
    // of events, and most of the time is the kernel handing out the columns' fresh pages.
    let n = parts.iter().map(|p| p.len()).sum();
    let column = |value: fn(&MemoryEvent) -> i64| -> Vec<i64> {
        let mut c = Vec::with_capacity(n);
        for p in parts {
            c.extend(p.iter().map(value));
        }
        c
    };
    let ((time_ns, allocated), (reserved, component)) = rayon::join(
        || rayon::join(|| column(|e| e.ns), || column(|e| e.total_allocated)),
        || {
            rayon::join(
                || {
                    if has_reserved {
                        column(|e| e.total_reserved)
                    } else {
                        vec![NULL; n]
                    }
                },
                || vec![Component::PtaGe as u8; n],
            )
        },
    );
    MemoryRecords {
        component,
        time_ns,
        allocated,
        reserved,
        // No Total Active; stream 0, the empty name (an interner's id 0): PyTorch says none.
        active: LazyColumn::filled(n),
        stream: LazyColumn::filled(n),
    }
}

/// Slices of `parts`.
fn slices(parts: &[Vec<MemoryEvent>]) -> Vec<&[MemoryEvent]> {
    parts.iter().map(Vec::as_slice).collect()
}

/// Whether the events of `parts`, one part after the other, are in time order (as a stable
/// sort by time would leave them).
fn in_time_order(parts: &[&[MemoryEvent]]) -> bool {
    parts.iter().all(|p| p.is_sorted_by_key(|e| e.ns))
        && parts
            .iter()
            .filter_map(|p| Some((p.first()?.ns, p.last()?.ns)))
            .is_sorted_by(|a, b| a.1 <= b.0)
}

/// The rank of device `part` from a trace's extract and its memory events (`memory`: in
/// parts, in file order; the extract's own are not looked at).
/// `curves_shown`: the curves of exactly these events already drawn as the first look.
fn build_rank(
    info: &RankInfo,
    extract: TraceExtract,
    mut memory: Vec<Vec<MemoryEvent>>,
    part: &str,
    shown: &str,
    curves_shown: Option<Arc<MemoryRecords>>,
) -> RankData {
    let TraceExtract {
        steps,
        host,
        unreadable,
        ..
    } = extract;
    let mut data = RankData::empty(info.clone());
    if unreadable > 0 {
        data.report.warn(Message::TraceEventsUnreadable {
            path: shown.to_string(),
            count: unreadable,
        });
    }
    let device = DeviceOf::named(part);
    for p in &mut memory {
        p.retain(|e| device.matches(e.device_type, e.device_id));
    }
    let parts = slices(&memory);
    data.records = curves_shown.unwrap_or_else(|| Arc::new(curves(&parts)));
    // The blocks' table at its size at once (doubling it held up to twice its columns).
    let allocations = parts.iter().flat_map(|p| p.iter()).filter(|e| e.bytes > 0);
    let blocks = allocations.count();
    // Time order, file order on ties (the sort is stable), as the curves. Each part is
    // freed once paired.
    let (rows, row_thread) = if in_time_order(&parts) {
        pair_blocks(memory.into_iter().flatten(), blocks, &mut data)
    } else {
        let mut all = parts.concat();
        drop(memory);
        all.sort_by_key(|e| e.ns);
        pair_blocks(all, blocks, &mut data)
    };
    if !steps.is_empty() {
        data.steps = Some(Steps::new(StepSource::Imported(NAME), steps));
    }
    if !host.is_empty() && rows > 0 {
        let stacks = crate::ingest::stacks::attribute_on_threads(
            host,
            &data.operators.alloc_time,
            &row_thread,
            StackSource::Imported(NAME),
        );
        // A block's name is its op's.
        for (r, &op) in stacks.row_op.iter().enumerate() {
            if op != crate::model::NO_STACK {
                let name = data.strings.intern(stacks.op_names.get(op));
                data.operators.name[r] = name;
            }
        }
        data.stacks = Some(stacks);
    }
    data.memory_record_rows = data.records.len();
    data
}

/// Pairs the device's allocations and frees on their address into operator_memory rows;
/// returns how many rows and each row's thread (its allocation's, else its free's).
fn pair_blocks(
    memory: impl IntoIterator<Item = MemoryEvent>,
    blocks: usize,
    data: &mut RankData,
) -> (usize, Vec<u64>) {
    let unnamed = data.strings.intern("");
    let mut open: FxHashMap<u64, usize> = FxHashMap::default();
    let mut row_thread = Vec::with_capacity(blocks);
    data.operators.reserve(blocks);
    let (mut orphans, mut over_held) = (0u64, 0u64);
    let ops = &mut data.operators;
    for e in memory {
        if e.bytes > 0 {
            let row =
                ops.push_allocation(unnamed, e.bytes, e.ns, e.total_allocated, e.total_reserved);
            if open.insert(e.addr, row).is_some() {
                over_held += 1;
            }
            row_thread.push(e.thread);
        } else if e.bytes < 0 {
            match open.remove(&e.addr) {
                Some(r) => ops.close_block(r, e.ns, e.total_allocated, e.total_reserved),
                None => {
                    orphans += 1;
                    ops.push_release_only(
                        unnamed,
                        e.bytes,
                        e.ns,
                        e.total_allocated,
                        e.total_reserved,
                    );
                    row_thread.push(e.thread);
                }
            }
        }
    }
    data.report.warn_unpaired(orphans, over_held);
    (data.operators.len(), row_thread)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// Curves and blocks drawn from a scan's parts, in order or not, are those of the
        /// events joined and sorted by time, file order kept on ties (plain `Vec` work).
        #[test]
        fn events_in_parts_give_what_the_joined_events_give(
            times in proptest::collection::vec(0i64..40, 0..60),
            cuts in proptest::collection::vec(0usize..60, 0..5),
        ) {
            let events: Vec<MemoryEvent> = times
                .iter()
                .enumerate()
                .map(|(i, &ns)| MemoryEvent {
                    ns,
                    thread: 1,
                    device_type: 1,
                    device_id: 0,
                    addr: (i / 2) as u64,
                    bytes: if i % 2 == 0 { 512 } else { -512 },
                    total_allocated: i as i64,
                    total_reserved: 0,
                })
                .collect();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(events.len())).collect();
            cuts.sort_unstable();
            let mut parts = Vec::new();
            let mut at = 0;
            for c in cuts.into_iter().chain([events.len()]) {
                parts.push(events[at..c].to_vec());
                at = c;
            }
            let mut sorted = events.clone();
            sorted.sort_by_key(|e| e.ns);
            let got = curves(&slices(&parts));
            prop_assert_eq!(&got.time_ns, &sorted.iter().map(|e| e.ns).collect::<Vec<_>>());
            prop_assert_eq!(
                &got.allocated,
                &sorted.iter().map(|e| e.total_allocated).collect::<Vec<_>>()
            );
            let info = RankInfo::without_files(
                "r0",
                Format::Imported(NAME),
                PathBuf::from("t"),
            );
            let mut joined = RankData::empty(info.clone());
            let (rows, threads) = pair_blocks(sorted.clone(), 0, &mut joined);
            let built = build_rank(&info, TraceExtract::default(), parts, "cuda:0", "t", None);
            prop_assert_eq!(threads.len(), rows);
            prop_assert_eq!(built.operators.len(), rows);
            prop_assert_eq!(&built.operators.alloc_time, &joined.operators.alloc_time);
            prop_assert_eq!(&built.operators.release_time, &joined.operators.release_time);
            prop_assert_eq!(&built.records.time_ns, &got.time_ns);
        }
    }

    #[test]
    fn devices_and_labels_read_as_pytorch_names_them() {
        assert_eq!(device_name(0, -1), "cpu");
        assert_eq!(device_name(1, 3), "cuda:3");
        assert_eq!(device_name(20, 0), "npu:0");
        assert_eq!(device_name(99, 1), "device99:1");
        assert_eq!(
            stem(Path::new("/x/worker0.1795604.pt.trace.json.gz")),
            "worker0.1795604"
        );
        assert_eq!(stem(Path::new("trace.JSON")), "trace");
        let head = br#"{"schemaVersion": 1, "distributedInfo": {"backend": "gloo", "rank": 3, "ranks": [0, 1]}, "host_name": "node7", "traceEvents": ["#;
        let d = header_value(head, "distributedInfo").unwrap();
        assert_eq!(d["rank"], 3);
        assert_eq!(header_value(head, "host_name").unwrap(), "node7");
        assert!(header_value(head, "missing").is_none());
        // Devices, by a byte search; a block boundary inside an args object loses nothing.
        let trace = br#"{"traceEvents": [{"name": "[memory]", "args": {"Addr": 1, "Bytes": 8, "Device Type": 1, "Device Id": 3}}, {"name": "[memory]", "args": {"Device Id": "0", "Device Type": 20}}, {"name": "[memory]", "args": {"Device Type": 0}}]}"#;
        let found = devices_of(&trace[..]).unwrap();
        assert_eq!(found, BTreeSet::from([(0, -1), (1, 3), (20, 0)]));
        // Past a block: 10 MB of padding before the last event, read in 8 MB blocks.
        let mut long = trace[..trace.len() - 2].to_vec();
        long.extend(std::iter::repeat_n(b' ', 10 << 20));
        long.extend_from_slice(br#", {"args": {"Device Type": 1, "Device Id": 7}}]}"#);
        let found = devices_of(&long[..]).unwrap();
        assert!(found.contains(&(1, 7)) && found.len() == 4, "{found:?}");
        // A key cut off at the end of the head is not a value.
        assert!(header_value(br#"{"distributedInfo": {"rank": 3"#, "distributedInfo").is_none());
    }

    #[test]
    fn a_device_is_matched_as_its_name_would_be() {
        // Every kind device_name knows, and some it does not, with ids around the edges.
        let types = [0, 1, 2, 6, 12, 13, 19, 20, 21, -1, i64::MIN, i64::MAX];
        let ids = [-1, 0, 1, 7, 10, i64::MIN, i64::MAX];
        let names: Vec<String> = types
            .iter()
            .flat_map(|&t| ids.iter().map(move |&id| device_name(t, id)))
            .chain(
                [
                    "cuda:01",
                    "npu",
                    "device1:3",
                    "device:3",
                    "cuda:",
                    "",
                    "CPU",
                ]
                .map(String::from),
            )
            .collect();
        for name in &names {
            let device = DeviceOf::named(name);
            for &t in &types {
                for &id in &ids {
                    assert_eq!(
                        device.matches(t, id),
                        device_name(t, id) == *name,
                        "{name} vs ({t}, {id})"
                    );
                }
            }
        }
    }

    #[test]
    fn wants_json_traces_but_not_the_ascend_exports_files() {
        let p = PyTorchTraces;
        assert!(p.wants("w0.123.pt.trace.json"));
        assert!(p.wants("trace.json.gz"));
        assert!(!p.wants("trace_view.json"));
        assert!(!p.wants("profiler_info_0.json"));
        assert!(!p.wants("memory_record.csv"));
    }
}
