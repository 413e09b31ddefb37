//! Reading what memsight needs from `trace_view.json` (and from any PyTorch profiler trace, the
//! same Chrome trace format) without building a DOM of it: the `ProfilerStep#N` spans, the
//! device's `NPU MEM` counters (`Device/HBM`, `Device/DDR`), the host's framework ops (`cpu_op`
//! events with their `args["Call stack"]`) and PyTorch's `[memory]` instant events.
//!
//! The file can be hundreds of MB. The Chrome-trace tokenizer ([`super::chrome_trace`]) hands
//! each event object's bytes to this module's sink, which holds the semantics: only an event
//! whose bytes contain a marker (`ProfilerStep#`, `Device/`, `cpu_op`, `[memory]`) is read at
//! all. An event that reads as a `cpu_op` span is read first and looked at no further (most of
//! a trace's bytes are ops' call stacks), so a stack that happens to spell another kind's marker
//! does not make its op something else; an op of PyTorch's plain layout is read by hand
//! ([`super::pytorch`]'s `op_event`), any other into a typed serde struct that borrows its
//! strings and skips every other field. Everything else is skipped at `memchr` speed.

use super::pytorch::memory_event::Template;
use super::pytorch::memory_fields::{MemoryField, MemoryObject};
use super::pytorch::op_event::{OpEvent, OpFields, PlainString};
use std::borrow::Cow;
use std::io::Read;
use std::path::Path;

use memchr::memmem;
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::chrome_trace::{EventSink, TokenizeError, for_each_event};
use super::chunks::LoadControl;
use super::safe_fs;
use super::value::parse_scaled;
use crate::model::{DeviceMemory, Flow, HostOps, NO_STACK, NULL, Step};

pub use super::chrome_trace::BLOCK;

/// What a trace_view.json holds for memsight.
#[derive(Debug, Default, Clone)]
pub struct TraceExtract {
    /// `ProfilerStep#N` spans (absolute ns), in file order, duplicates kept.
    pub steps: Vec<Step>,
    /// Device memory in use (HBM + DDR), absolute ns, time-sorted.
    pub device: DeviceMemory,
    /// The host's framework ops (`cat` `cpu_op`, `ph` `X`), file order.
    pub host: HostOps,
    /// PyTorch's `[memory]` instant events (allocations and frees), file order.
    pub memory: Vec<MemoryEvent>,
    /// Event objects seen.
    pub events: u64,
    /// Candidate events that could not be read (bad JSON, missing or bad fields).
    pub unreadable: u64,
    /// The file stops before the trace's end (a copy cut short, a profiler still writing):
    /// the events before the cut were read.
    pub cut_short: bool,
}

/// One `[memory]` instant event of a PyTorch profiler trace (`profile_memory=True`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryEvent {
    /// When, absolute ns.
    pub ns: i64,
    /// The thread ([`thread_number`], as the host ops' threads are numbered).
    pub thread: u64,
    /// `Device Type`: 0 CPU, 1 CUDA, others for other backends (PrivateUse1 for NPU).
    pub device_type: i64,
    /// `Device Id` (-1 for the CPU).
    pub device_id: i64,
    /// `Addr`.
    pub addr: u64,
    /// `Bytes`: positive for an allocation, negative for a free.
    pub bytes: i64,
    /// `Total Allocated` after it, bytes ([`crate::model::NULL`] when absent).
    pub total_allocated: i64,
    /// `Total Reserved` after it, bytes ([`crate::model::NULL`] when absent).
    pub total_reserved: i64,
}

/// Why a trace_view.json gave nothing.
#[derive(Debug, thiserror::Error)]
pub enum TraceError {
    /// Could not be opened or read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a JSON array or object at the top.
    #[error("{0}: not a Chrome trace (expected a JSON array or object)")]
    NotATrace(String),
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl From<&TraceError> for crate::model::Cause {
    fn from(e: &TraceError) -> crate::model::Cause {
        match e {
            TraceError::Io { path, source } => {
                crate::model::Cause::io(e.to_string(), Some(path.clone()), source)
            }
            _ => crate::model::Cause::said(e.to_string()),
        }
    }
}

/// Reads the steps and device counters of `path`, streaming, in parts on every core when it
/// can ([`read_trace_file`]).
pub fn read_trace_view(path: &Path, control: &LoadControl) -> Result<TraceExtract, TraceError> {
    let name = path.display().to_string();
    read_trace_file(path, control, &name, ReadOptions::default())
}

/// [`read_trace_view`] on any reader, `block` bytes at a time (the fuzz target compares block
/// sizes: the result must not depend on where the blocks end); `name` is for messages.
pub fn read_trace_from(
    file: impl Read,
    block: usize,
    control: &LoadControl,
    name: &str,
) -> Result<TraceExtract, TraceError> {
    read_trace_with(file, block, control, name, ReadOptions::default())
}

/// What a read of a trace leaves out.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReadOptions {
    /// `[memory]` events are recognised but not parsed ([`TraceExtract::memory`] stays empty):
    /// the caller read them already, faster (the PyTorch importer's first look).
    pub skip_memory: bool,
}

/// [`read_trace_from`] with [`ReadOptions`].
pub fn read_trace_with(
    file: impl Read,
    block: usize,
    control: &LoadControl,
    name: &str,
    options: ReadOptions,
) -> Result<TraceExtract, TraceError> {
    let mut sink = Sink {
        skip_memory: options.skip_memory,
        ..Sink::default()
    };
    let end = for_each_event(file, block, control, &mut sink).map_err(|e| match e {
        TokenizeError::Io(source) => TraceError::Io {
            path: name.to_string(),
            source,
        },
        TokenizeError::NotATrace => TraceError::NotATrace(name.to_string()),
        TokenizeError::Cancelled => TraceError::Cancelled,
    })?;
    let mut out = sink.finish();
    out.events = end.events;
    out.cut_short = end.cut_short;
    Ok(out)
}

/// [`read_trace_with`] on the plain (not gzipped) file at `path`: in parts on every core when
/// it can be cut where events start ([`super::trace_parts`]), else whole. Both give the same
/// extract.
pub fn read_trace_file(
    path: &Path,
    control: &LoadControl,
    name: &str,
    options: ReadOptions,
) -> Result<TraceExtract, TraceError> {
    read_trace_file_in_parts(path, super::trace_parts::PART, control, name, options)
}

/// [`read_trace_file`] with parts of `part` bytes (tests cut small files into many).
pub fn read_trace_file_in_parts(
    path: &Path,
    part: u64,
    control: &LoadControl,
    name: &str,
    options: ReadOptions,
) -> Result<TraceExtract, TraceError> {
    let make = || Sink {
        skip_memory: options.skip_memory,
        ..Sink::default()
    };
    let failed = |e: TokenizeError| match e {
        TokenizeError::Io(source) => TraceError::Io {
            path: name.to_string(),
            source,
        },
        TokenizeError::NotATrace => TraceError::NotATrace(name.to_string()),
        TokenizeError::Cancelled => TraceError::Cancelled,
    };
    let Some(super::trace_parts::Parts {
        sinks: parts,
        cut_short,
    }) = super::trace_parts::in_parts(path, part, &make, control).map_err(failed)?
    else {
        let file = safe_fs::open_regular(path).map_err(|source| TraceError::Io {
            path: name.to_string(),
            source,
        })?;
        return read_trace_with(file, BLOCK, control, name, options);
    };
    let mut events = 0;
    let mut merged: Option<Sink> = None;
    for (sink, n) in parts {
        events += n;
        match &mut merged {
            None => merged = Some(sink),
            Some(m) => m.absorb(sink),
        }
    }
    let mut out = merged.unwrap_or_else(make).finish();
    out.events = events;
    out.cut_short = cut_short;
    Ok(out)
}

/// Collects steps and counters from candidate events.
#[derive(Default)]
struct Sink {
    steps: Vec<Step>,
    /// (time, bytes) of `Device/HBM` and of `Device/DDR`.
    hbm: Vec<(i64, i64)>,
    ddr: Vec<(i64, i64)>,
    unreadable: u64,
    /// Open async ranges (`ph` `b`/`B` … `e`/`E` named `ProfilerStep#N`, as mstx ranges may be
    /// written): step id → start.
    open: std::collections::HashMap<i64, i64>,
    step_finder: Option<memmem::Finder<'static>>,
    device_finder: Option<memmem::Finder<'static>>,
    op_finder: Option<memmem::Finder<'static>>,
    flow_finder: Option<memmem::Finder<'static>>,
    memory_finder: Option<memmem::Finder<'static>>,
    memory: Vec<MemoryEvent>,
    python_finder: Option<memmem::Finder<'static>>,
    annotation_finder: Option<memmem::Finder<'static>>,
    /// `python_function` spans (PyTorch's `with_stack=True`): (thread, start, end, frame).
    python: Vec<(u64, i64, i64, u32)>,
    host: HostOps,
    /// The `fwdbwd` flow events, linked to their ops once every op is read.
    flows: Vec<Flow>,
    /// Call stack → id in `host.stacks`, keyed by [`stack_key`].
    stack_ids: FxHashMap<Box<[u8]>, u32>,
    /// Memory events are recognised but not read: the caller has them ([`ReadOptions`]).
    skip_memory: bool,
    /// Ends of async step ranges read before any start of their id: (step id, time, how many
    /// steps were read before it). Their start may be in an earlier part ([`Sink::absorb`]).
    pending_ends: Vec<(i64, i64, usize)>,
    /// The step ids whose async range began in what this sink read.
    begun: std::collections::HashSet<i64>,
    /// The layouts of the memory events seen, while they are skipped ([`EventSink::skip`]).
    memory_layouts: Vec<Template>,
}

/// The key of a call stack written as `raw` (JSON text) in [`Sink`]'s `stack_ids`: a string
/// without escapes by the bytes between its quotes (as `PlainString` reads them), anything
/// else by its text as written. The two never meet: the first cannot start with a quote.
fn stack_key(raw: &str) -> &[u8] {
    match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if !inner.contains('\\') => inner.as_bytes(),
        _ => raw.as_bytes(),
    }
}

/// The fields of a `fwdbwd` flow event memsight reads.
#[derive(Deserialize)]
struct FlowEvent<'a> {
    #[serde(default, borrow)]
    ph: Cow<'a, str>,
    #[serde(default, borrow)]
    cat: Cow<'a, str>,
    #[serde(default, borrow)]
    id: Option<&'a RawValue>,
    #[serde(default, borrow)]
    ts: Option<&'a RawValue>,
    #[serde(default, borrow)]
    pid: Option<&'a RawValue>,
    #[serde(default, borrow)]
    tid: Option<&'a RawValue>,
}

/// Whether an event that does not spell `[memory]` plainly is named it with JSON escapes
/// (`"\u005bmemory]"`): only an event with an escape (rare) has its name decoded.
fn named_memory_with_escapes(bytes: &[u8]) -> bool {
    #[derive(Deserialize)]
    struct Named<'a> {
        #[serde(default, borrow)]
        name: Cow<'a, str>,
    }
    memmem::find(bytes, b"\\u").is_some()
        && serde_json::from_slice::<Named<'_>>(bytes).is_ok_and(|e| e.name == "[memory]")
}

/// A raw JSON number or numeric string times `factor`, exactly.
fn raw_scaled(v: &RawValue, factor: i64) -> Option<i64> {
    parse_scaled(v.get().as_bytes(), factor)
        .ok()
        .flatten()
        .map(|s| s.value)
}

/// Memory event layouts a sink learns at most (PyTorch writes one).
const MAX_LAYOUTS: usize = 4;

impl EventSink for Sink {
    /// A memory event of a layout seen before, while memory events are not read: its bytes
    /// are that layout's with a value in each gap, so its length is known without scanning it.
    fn skip(&mut self, bytes: &[u8]) -> Option<usize> {
        if !self.skip_memory {
            return None;
        }
        self.memory_layouts.iter().find_map(|t| t.extent(bytes))
    }

    fn event(&mut self, bytes: &[u8]) {
        // The common kind first: an event that reads as a `cpu_op` span is an op and nothing
        // else this sink looks for, so the searches below (each a pass over its call stack)
        // are not made for it.
        if self
            .op_finder
            .get_or_insert_with(|| memmem::Finder::new(b"cpu_op"))
            .find(bytes)
            .is_some()
            && self.plain_host_op(bytes)
        {
            return;
        }
        if self
            .memory_finder
            .get_or_insert_with(|| memmem::Finder::new(b"[memory]"))
            .find(bytes)
            .is_some()
            || named_memory_with_escapes(bytes)
        {
            self.memory_event(bytes);
            return;
        }
        let op = self
            .op_finder
            .get_or_insert_with(|| memmem::Finder::new(b"cpu_op"))
            .find(bytes)
            .is_some();
        if op {
            self.host_op(bytes);
        }
        if self
            .python_finder
            .get_or_insert_with(|| memmem::Finder::new(b"python_function"))
            .find(bytes)
            .is_some()
        {
            self.python_span(bytes);
            return;
        }
        // Not for ops or Python frames (the common kinds): they are never annotations.
        if !op
            && self
                .annotation_finder
                .get_or_insert_with(|| memmem::Finder::new(b"user_annotation"))
                .find(bytes)
                .is_some()
        {
            self.phase_annotation(bytes);
        }
        if self
            .flow_finder
            .get_or_insert_with(|| memmem::Finder::new(b"fwdbwd"))
            .find(bytes)
            .is_some()
        {
            self.flow(bytes);
        }
        let step = self
            .step_finder
            .get_or_insert_with(|| memmem::Finder::new(b"ProfilerStep#"))
            .find(bytes)
            .is_some();
        let device = !step
            && self
                .device_finder
                .get_or_insert_with(|| memmem::Finder::new(b"Device/"))
                .find(bytes)
                .is_some();
        if step || device {
            self.step_or_counter(bytes, step);
        }
    }
}

impl Sink {
    /// An event that spells `ProfilerStep#` (`step`) or `Device/` somewhere: a step when its
    /// name is `ProfilerStep#N`, a device memory counter when it is `Device/HBM` or
    /// `Device/DDR`.
    fn step_or_counter(&mut self, bytes: &[u8], step: bool) {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(bytes) else {
            self.unreadable += 1;
            return;
        };
        let name = v.get("name").and_then(|n| n.as_str()).unwrap_or("");
        let ph = v.get("ph").and_then(|n| n.as_str()).unwrap_or("");
        if step {
            let Some(id) = name.strip_prefix("ProfilerStep#") else {
                return; // the marker was in an argument, not the name
            };
            let id = id.trim().parse::<i64>().ok();
            if matches!(ph, "b" | "B" | "e" | "E") {
                let t = v.get("ts").and_then(micros_to_ns);
                match (id, t) {
                    (Some(id), Some(t)) if ph.eq_ignore_ascii_case("b") => {
                        self.open.insert(id, t);
                        self.begun.insert(id);
                    }
                    (Some(id), Some(t)) => match self.open.remove(&id) {
                        Some(start) if start <= t => self.steps.push(Step {
                            id,
                            start_ns: start,
                            end_ns: t,
                        }),
                        Some(_) => self.unreadable += 1,
                        None if self.begun.contains(&id) => self.unreadable += 1,
                        // Its start may be in an earlier part of the file ([`Sink::absorb`]).
                        None => self.pending_ends.push((id, t, self.steps.len())),
                    },
                    _ => self.unreadable += 1,
                }
                return;
            }
            if ph != "X" {
                return;
            }
            let start = v.get("ts").and_then(micros_to_ns);
            let dur = v.get("dur").and_then(micros_to_ns);
            match (id, start, dur) {
                (Some(id), Some(start), Some(dur)) if dur >= 0 => match start.checked_add(dur) {
                    Some(end) => self.steps.push(Step {
                        id,
                        start_ns: start,
                        end_ns: end,
                    }),
                    None => self.unreadable += 1,
                },
                _ => self.unreadable += 1,
            }
        } else if ph == "C" && (name == "Device/HBM" || name == "Device/DDR") {
            let t = v.get("ts").and_then(micros_to_ns);
            let kb = v.get("args").and_then(|a| a.get("KB"));
            let bytes = kb.and_then(|x| scaled(x, 1024));
            match (t, bytes) {
                (Some(t), Some(b)) if b >= 0 => {
                    if name == "Device/HBM" {
                        self.hbm.push((t, b));
                    } else {
                        self.ddr.push((t, b));
                    }
                }
                _ => self.unreadable += 1,
            }
        }
    }

    /// A complete (`X`) event of category `cat`: the event, its start and end (absolute ns).
    /// `None` for another kind of event, and for one that cannot be read (counted).
    fn span<'a>(
        &mut self,
        bytes: &'a [u8],
        cat: &str,
    ) -> Option<(OpEvent<'a, &'a RawValue>, i64, i64)> {
        let Ok(ev) = serde_json::from_slice::<OpEvent<'a, &'a RawValue>>(bytes) else {
            self.unreadable += 1;
            return None;
        };
        if ev.cat != cat || ev.ph != "X" {
            return None;
        }
        let start = ev.ts.and_then(|v| raw_scaled(v, 1000));
        let dur = ev.dur.and_then(|v| raw_scaled(v, 1000));
        let end = start
            .zip(dur.filter(|&d| d >= 0))
            .and_then(|(s, d)| s.checked_add(d));
        match (start, end) {
            (Some(start), Some(end)) => Some((ev, start, end)),
            _ => {
                self.unreadable += 1;
                None
            }
        }
    }

    /// A `cpu_op` span (`ph` `X`) read whole, not named `[memory]`, taken as one host op (and
    /// as a step when it is named `ProfilerStep#N`, as the Ascend exports write them): `true`
    /// when it was. `false`, with nothing counted, for any other event and for one that does
    /// not read cleanly, which [`EventSink::event`]'s general path then looks at as before.
    fn plain_host_op(&mut self, bytes: &[u8]) -> bool {
        // By hand when it can be (the layout PyTorch writes), else by serde_json.
        if let Some(f) = super::pytorch::op_event::read(bytes) {
            return self.take_op(bytes, &f);
        }
        let Ok(ev) = serde_json::from_slice::<OpEvent<'_, PlainString<'_>>>(bytes) else {
            return false;
        };
        let f = ev.fields();
        self.take_op(bytes, &f)
    }

    /// [`Self::plain_host_op`] of the fields `f` read of the event `bytes`.
    fn take_op(&mut self, bytes: &[u8], f: &OpFields<'_>) -> bool {
        if f.cat != "cpu_op" || f.ph != "X" || f.name == "[memory]" {
            return false;
        }
        let scaled = |v: Option<&str>, factor| {
            parse_scaled(v?.as_bytes(), factor)
                .ok()
                .flatten()
                .map(|s| s.value)
        };
        let start = scaled(f.ts, 1000);
        let dur = scaled(f.dur, 1000);
        let Some((start, end)) = start
            .zip(dur.filter(|&d| d >= 0))
            .and_then(|(s, d)| Some((s, s.checked_add(d)?)))
        else {
            return false;
        };
        let stack = match f.call_stack {
            None => NO_STACK,
            Some(key) => match self.stack_ids.get(key) {
                Some(&id) => id,
                // Checked as serde checks a string the first time it is seen.
                None => match std::str::from_utf8(key) {
                    Ok(text) if !key.iter().any(|&b| b < 0x20) => self.new_stack(key, text),
                    _ => return false,
                },
            },
        };
        let seq = scaled(f.seq, 1).unwrap_or(-1);
        let step = f.name.starts_with("ProfilerStep#");
        let thread = thread_of_text(f.pid, f.tid);
        let name = self.host.names.intern(f.name);
        self.host.push(start, end, thread, name, stack, seq);
        if step {
            self.step_or_counter(bytes, true);
        }
        true
    }

    /// A `cpu_op` event: one host op, its stack interned.
    fn host_op(&mut self, bytes: &[u8]) {
        let Some((ev, start, end)) = self.span(bytes, "cpu_op") else {
            return;
        };
        let thread = thread_number(ev.pid, ev.tid);
        let (stack, seq) = match &ev.args {
            Some(a) => (
                a.call_stack.map_or(NO_STACK, |raw| self.stack_id(raw)),
                a.seq.and_then(|v| raw_scaled(v, 1)).unwrap_or(-1),
            ),
            None => (NO_STACK, -1),
        };
        let name = self.host.names.intern(&ev.name);
        self.host.push(start, end, thread, name, stack, seq);
    }

    /// A `user_annotation` span that marks a training phase (`Optimizer.step#…`,
    /// `Optimizer.zero_grad#…`, `enumerate(DataLoader)#…`: PyTorch traces write them so, the
    /// Ascend exports as `cpu_op`), kept as a host op for the roles' phases. Other annotations
    /// (`ProfilerStep#N`, the user's own) are not ops.
    fn phase_annotation(&mut self, bytes: &[u8]) {
        let Some((ev, start, end)) = self.span(bytes, "user_annotation") else {
            return;
        };
        if !crate::model::is_phase_annotation(&ev.name) {
            return;
        }
        let thread = thread_number(ev.pid, ev.tid);
        let name = self.host.names.intern(&ev.name);
        self.host.push(start, end, thread, name, NO_STACK, -1);
    }

    /// A `python_function` span: one frame of the Python stack, on its thread.
    fn python_span(&mut self, bytes: &[u8]) {
        let Some((ev, start, end)) = self.span(bytes, "python_function") else {
            return;
        };
        let thread = thread_number(ev.pid, ev.tid);
        let frame = self.host.frames.intern(&ev.name);
        self.python.push((thread, start, end, frame));
    }

    /// The stacks of the ops without a `Call stack` of their own, from the `python_function`
    /// spans of their thread that enclose their start (PyTorch traces write the Python stack
    /// this way): innermost first, as a `Call stack` lists them. An op that runs in a backward
    /// node the profiler linked to its forward op gets none: on the CPU the autograd engine
    /// runs on the caller's thread, whose Python stack is only `loss.backward()`; the forward
    /// op's stack, which [`super::stacks`] gives it through the link, says which line built it.
    fn stacks_from_python(&mut self) {
        if self.python.is_empty() {
            return;
        }
        // Taken: nothing reads the spans after (the modules are read before).
        let mut spans: Vec<super::module_spans::FrameSpan> = std::mem::take(&mut self.python)
            .into_iter()
            .map(
                |(thread, start, end, frame)| super::module_spans::FrameSpan {
                    thread,
                    start,
                    end,
                    frame,
                },
            )
            .collect();
        let own: Vec<bool> = self.host.stack.iter().map(|&s| s != NO_STACK).collect();
        let found = super::module_spans::stacks_at_op_starts(&mut self.host, &mut spans, |i| {
            !own.get(i).copied().unwrap_or(true)
        });
        for (op, id) in found.stacks {
            self.host.stack[op] = id;
        }
        self.host.stacks_cut = self.host.stacks_cut.max(found.cut);
    }

    /// The `python_function` spans of modules' forwards, as [`super::module_spans`] joins
    /// them to the ops.
    fn module_spans(&self) -> Vec<super::module_spans::FrameSpan> {
        self.python
            .iter()
            .filter(|p| super::module_spans::is_module_frame(self.host.frames.get(p.3)))
            .map(
                |&(thread, start, end, frame)| super::module_spans::FrameSpan {
                    thread,
                    start,
                    end,
                    frame,
                },
            )
            .collect()
    }

    /// Each op's modules ([`HostOps::module`]) from the `nn.Module` spans among the
    /// `python_function` spans: torch_npu's ops carry a `Call stack` of their own, which names
    /// no module, so [`Self::stacks_from_python`] leaves them without.
    fn modules_from_python(&mut self) {
        let spans = self.module_spans();
        let found = super::module_spans::assign_modules(&mut self.host, spans);
        self.host.stacks_cut = self.host.stacks_cut.max(found.cut);
    }

    /// A `[memory]` instant event: an allocation (`Bytes` > 0) or a free (< 0) on a device.
    /// Skipped unread when the caller has the memory events already ([`ReadOptions`]).
    fn memory_event(&mut self, bytes: &[u8]) {
        if self.skip_memory {
            // Learnt, so that the next ones of its layout are jumped over.
            if self.memory_layouts.len() < MAX_LAYOUTS
                && let Some(t) = Template::of(bytes)
            {
                self.memory_layouts.push(t);
            }
            return;
        }
        match parse_memory_event(bytes) {
            Ok(Some(e)) => self.memory.push(e),
            Ok(None) => {}
            Err(UnreadableEvent) => self.unreadable += 1,
        }
    }

    /// A `fwdbwd` flow event (`ph` `s` at a forward op, `f` at its backward op).
    fn flow(&mut self, bytes: &[u8]) {
        let Ok(ev) = serde_json::from_slice::<FlowEvent<'_>>(bytes) else {
            return; // the word was elsewhere (a name, an argument): not a flow
        };
        if ev.cat != "fwdbwd" || !matches!(&*ev.ph, "s" | "f") {
            return;
        }
        let id = ev.id.and_then(|v| raw_scaled(v, 1));
        let ns = ev.ts.and_then(|v| raw_scaled(v, 1000));
        let (Some(id), Some(ns)) = (id, ns) else {
            self.unreadable += 1;
            return;
        };
        let thread = thread_number(ev.pid, ev.tid);
        self.flows.push(Flow {
            id,
            is_start: ev.ph == "s",
            thread,
            ns,
        });
    }

    /// The id of a call stack (raw JSON text), interning it and its frames the first time.
    fn stack_id(&mut self, raw: &RawValue) -> u32 {
        let key = stack_key(raw.get());
        if let Some(&id) = self.stack_ids.get(key) {
            return id;
        }
        let Ok(text) = serde_json::from_str::<String>(raw.get()) else {
            return NO_STACK;
        };
        self.new_stack(key, &text)
    }

    /// Interns the call stack `text` under `key` ([`stack_key`]): its id, [`NO_STACK`] for
    /// one without frames.
    fn new_stack(&mut self, key: &[u8], text: &str) -> u32 {
        let frames: Box<[u32]> = split_frames(text)
            .map(|f| self.host.frames.intern(f))
            .collect();
        let id = if frames.is_empty() {
            NO_STACK
        } else {
            self.host.stacks.push(frames);
            self.host.stacks.len() as u32 - 1
        };
        self.stack_ids.insert(key.into(), id);
        id
    }

    /// Takes in `later`, the sink of the part of the file that follows this one's: what the
    /// two read is then what one sink reading both parts would have read (names, frames and
    /// stacks numbered in order of first appearance, ranges closed across the cut).
    fn absorb(&mut self, later: Sink) {
        let Sink {
            steps,
            hbm,
            ddr,
            unreadable,
            open,
            python,
            host,
            flows,
            stack_ids,
            memory,
            pending_ends,
            begun,
            ..
        } = later;
        // Ends read before any start of their id close this part's open range, as one read
        // would have; each step goes where that read would have put it.
        let base = self.steps.len();
        let mut closed: Vec<(usize, Step)> = Vec::new();
        for (id, t, at) in pending_ends {
            match self.open.remove(&id) {
                Some(start) if start <= t => closed.push((
                    at,
                    Step {
                        id,
                        start_ns: start,
                        end_ns: t,
                    },
                )),
                Some(_) => self.unreadable += 1,
                None => self.pending_ends.push((id, t, base + at + closed.len())),
            }
        }
        let mut closed = closed.into_iter().peekable();
        for (i, step) in steps.into_iter().enumerate() {
            while let Some((_, s)) = closed.next_if(|(at, _)| *at <= i) {
                self.steps.push(s);
            }
            self.steps.push(step);
        }
        self.steps.extend(closed.map(|(_, s)| s));
        // A range begun in the later part replaces this part's open one of its id.
        for id in &begun {
            self.open.remove(id);
        }
        self.open.extend(open);
        self.begun.extend(begun);
        self.hbm.extend(hbm);
        self.ddr.extend(ddr);
        self.unreadable += unreadable;
        self.flows.extend(flows);
        self.memory.extend(memory);
        let names = self.host.names.merge(&host.names);
        let frames = self.host.frames.merge(&host.frames);
        self.python.extend(
            python
                .into_iter()
                .map(|(thread, start, end, f)| (thread, start, end, frames[f as usize])),
        );
        // The later part's stacks in its order of first appearance, each the same stack here
        // when this part has its text, else a new one.
        let mut texts: Vec<Option<Box<[u8]>>> = vec![None; host.stacks.len()];
        for (text, id) in stack_ids {
            if let Some(slot) = texts.get_mut(id as usize) {
                *slot = Some(text);
            }
        }
        let mut stacks = Vec::with_capacity(host.stacks.len());
        for (frames_of, text) in host.stacks.iter().zip(texts) {
            let Some(text) = text else {
                stacks.push(NO_STACK);
                continue;
            };
            let id = *self.stack_ids.entry(text).or_insert_with(|| {
                let mapped: Box<[u32]> = frames_of.iter().map(|&f| frames[f as usize]).collect();
                self.host.stacks.push(mapped);
                self.host.stacks.len() as u32 - 1
            });
            stacks.push(id);
        }
        for i in 0..host.len() {
            let stack = match host.stack[i] {
                NO_STACK => NO_STACK,
                s => stacks.get(s as usize).copied().unwrap_or(NO_STACK),
            };
            self.host.push(
                host.start_ns[i],
                host.end_ns[i],
                host.thread[i],
                names[host.name[i] as usize],
                stack,
                host.seq[i],
            );
        }
    }

    /// Device memory = HBM + the DDR sample held at the same time (0 when there is none).
    fn finish(mut self) -> TraceExtract {
        self.unreadable += self.pending_ends.len() as u64;
        self.host.link_flows(&self.flows);
        self.modules_from_python();
        self.stacks_from_python();
        self.hbm.sort_by_key(|p| p.0);
        self.ddr.sort_by_key(|p| p.0);
        let mut device = DeviceMemory::default();
        for &(t, hbm) in &self.hbm {
            let j = self.ddr.partition_point(|p| p.0 <= t);
            let ddr = if j > 0 { self.ddr[j - 1].1 } else { 0 };
            device.time_ns.push(t);
            device.bytes.push(hbm.saturating_add(ddr));
        }
        TraceExtract {
            steps: self.steps,
            device,
            host: self.host,
            memory: self.memory,
            events: 0,
            unreadable: self.unreadable,
            cut_short: false,
        }
    }
}

/// A thread's number: a hash of its `pid` and `tid` (raw JSON text), the same in every pass over
/// a file (the fast memory scan of [`super::pytorch::memory_scan`] and the whole read agree
/// without sharing a table). Only compared, never shown.
pub fn thread_number(pid: Option<&RawValue>, tid: Option<&RawValue>) -> u64 {
    thread_of_text(pid.map(RawValue::get), tid.map(RawValue::get))
}

/// [`thread_number`] of the raw texts. A number is matched as a number: `26922`, `26922.0`,
/// `2.6922e4` and `"26922"` are one thread (a writer that puts floats in `tid` lost every
/// block's op, stack and role when the texts were compared).
pub(crate) fn thread_of_text(pid: Option<&str>, tid: Option<&str>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    id_text(pid.unwrap_or("")).hash(&mut h);
    id_text(tid.unwrap_or("")).hash(&mut h);
    h.finish()
}

/// A pid's or tid's text in one spelling per number: plain integers as they are (the common
/// case, no parsing), other spellings of an integer (a float, an exponent, quoted digits) as
/// that integer, anything else as written.
fn id_text(raw: &str) -> Cow<'_, str> {
    let plain = |t: &str| {
        let digits = t.strip_prefix('-').unwrap_or(t);
        !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())
    };
    if plain(raw) {
        return raw.into();
    }
    let inner = raw
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
        .unwrap_or(raw);
    if plain(inner) {
        return inner.to_string().into();
    }
    match inner.parse::<f64>() {
        Ok(v) if v.is_finite() && v.fract() == 0.0 && v.abs() < 9.0e15 => {
            format!("{}", v as i64).into()
        }
        _ => raw.into(),
    }
}

/// A `[memory]` event that cannot be read: bad JSON, a missing or bad field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a memory event that cannot be read")]
pub struct UnreadableEvent;

pub use super::pytorch::memory_fields::RawMemoryEvent;

/// One `[memory]` event from its object's bytes: `Ok(None)` when the object is another event
/// (the word was elsewhere), `Err` when it cannot be read (bad JSON, missing or bad fields).
pub fn parse_memory_event(bytes: &[u8]) -> Result<Option<MemoryEvent>, UnreadableEvent> {
    let ev = serde_json::from_slice::<MemoryObject<'_>>(bytes).map_err(|_| UnreadableEvent)?;
    if ev.name != "[memory]" {
        return Ok(None);
    }
    let raw = ev.raw();
    memory_event_from(&raw).map(Some)
}

/// The event of a `[memory]` event's raw fields; `Err` when a needed one is missing or bad.
pub fn memory_event_from(raw: &RawMemoryEvent<'_>) -> Result<MemoryEvent, UnreadableEvent> {
    if !raw.has_args {
        return Err(UnreadableEvent);
    }
    let num = |v: Option<&str>, factor: i64| {
        v.and_then(|v| parse_scaled(v.as_bytes(), factor).ok().flatten())
            .map(|s| s.value)
    };
    use MemoryField as F;
    let ns = num(raw.get(F::Ts), 1000);
    let size = num(raw.get(F::Bytes), 1);
    let addr = raw.get(F::Addr).and_then(super::value::parse_address);
    // A block beyond 2⁵⁶ bytes (64 PiB) is no block: a hostile or broken number.
    let size = size.filter(|b| b.unsigned_abs() < 1 << 56);
    let (Some(ns), Some(size), Some(addr)) = (ns, size, addr) else {
        return Err(UnreadableEvent);
    };
    Ok(MemoryEvent {
        ns,
        thread: thread_of_text(raw.get(F::Pid), raw.get(F::Tid)),
        device_type: num(raw.get(F::DeviceType), 1).unwrap_or(0),
        device_id: num(raw.get(F::DeviceId), 1).unwrap_or(-1),
        addr,
        bytes: size,
        total_allocated: num(raw.get(F::TotalAllocated), 1).unwrap_or(NULL),
        total_reserved: num(raw.get(F::TotalReserved), 1).unwrap_or(NULL),
    })
}

/// The frames of a `Call stack` argument, innermost first: separated by `;\r\n` (torch_npu),
/// or by `;` alone when the text has no line breaks; blank frames dropped.
pub fn split_frames(text: &str) -> impl Iterator<Item = &str> {
    let by_line = text.contains('\n');
    text.split(move |c| if by_line { c == '\n' } else { c == ';' })
        .map(|f| f.trim().trim_end_matches(';').trim())
        .filter(|f| !f.is_empty())
}

/// A µs time (a string such as `"1736405443862052.130"`, or a number) as exact ns.
fn micros_to_ns(v: &serde_json::Value) -> Option<i64> {
    scaled(v, 1000)
}

/// A decimal JSON value (string or number) times `factor`, exactly (no f64 on the way).
fn scaled(v: &serde_json::Value, factor: i64) -> Option<i64> {
    let text = match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Number(n) => n.to_string(),
        _ => return None,
    };
    parse_scaled(text.as_bytes(), factor)
        .ok()
        .flatten()
        .map(|s| s.value)
}

#[cfg(test)]
mod thread_tests {
    use super::thread_of_text;

    #[test]
    fn a_thread_is_matched_by_its_number_however_it_is_written() {
        let t = |pid, tid| thread_of_text(Some(pid), Some(tid));
        let plain = t("7", "26922");
        for spelled in ["26922.0", "2.6922e4", "\"26922\"", "26922.000"] {
            assert_eq!(t("7", spelled), plain, "{spelled}");
        }
        assert_eq!(t("7.0", "26922"), plain);
        assert_ne!(t("7", "26923"), plain);
        assert_ne!(t("7", "26922.5"), plain);
        assert_ne!(t("7", "\"main\""), plain);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(text: &[u8], block: usize) -> Result<TraceExtract, ()> {
        let control = LoadControl::default();
        read_trace_from(text, block, &control, "t.json").map_err(|_| ())
    }

    const TRACE: &str = r#"[{"ph": "X", "name": "aten::mm", "ts": "10.000", "dur": 1.5, "args": {"Call stack": "a{b}\"c\\"}},
 {"ph": "X", "name": "ProfilerStep#50", "pid": 1, "ts": "1736405443862052.130", "dur": 136897.82, "args": {"Call stack": "x.py(1): f"}},
 {"name": "Device/HBM", "ts": "1736405443756384.100", "pid": 9, "tid": 0, "args": {"KB": 2402436.0}, "ph": "C"},
 {"name": "Device/DDR", "ts": "1736405443756384.000", "pid": 9, "tid": 0, "args": {"KB": 2.0}, "ph": "C"},
 {"name": "APP/HBM", "ts": "1736405443756384.100", "pid": 9, "tid": 0, "args": {"KB": 1.0}, "ph": "C"},
 {"ph": "X", "name": "ProfilerStep#51", "ts": 1736405443998950.0, "dur": 10}
]"#;

    #[test]
    fn steps_and_device_counters_whatever_the_block_size() {
        for block in [1, 2, 3, 7, 64, 1 << 20] {
            let out = run(TRACE.as_bytes(), block).unwrap();
            assert_eq!(out.events, 6, "block {block}");
            assert_eq!(
                out.steps,
                vec![
                    Step {
                        id: 50,
                        start_ns: 1_736_405_443_862_052_130,
                        end_ns: 1_736_405_443_862_052_130 + 136_897_820,
                    },
                    Step {
                        id: 51,
                        start_ns: 1_736_405_443_998_950_000,
                        end_ns: 1_736_405_443_998_960_000,
                    },
                ]
            );
            assert_eq!(out.device.time_ns, vec![1_736_405_443_756_384_100]);
            assert_eq!(out.device.bytes, vec![(2_402_436 + 2) * 1024]);
        }
    }

    #[test]
    fn an_op_span_is_an_op_and_nothing_its_call_stack_spells() {
        // A stack that spells every other kind's marker; an op named as Ascend writes steps;
        // an op whose time cannot be read.
        let text = br#"[{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 1, "tid": 2, "ts": 10.5, "dur": 2, "args": {"Call stack": "m.py(3): [memory];fwdbwd;Device/HBM;ProfilerStep#9;python_function;user_annotation", "Sequence number": 7}},
            {"ph": "X", "cat": "cpu_op", "name": "ProfilerStep#4", "pid": 1, "tid": 2, "ts": "20.000", "dur": 30},
            {"ph": "X", "cat": "cpu_op", "name": "aten::add", "pid": 1, "tid": 2, "ts": "x", "dur": 1}]"#;
        for block in [3, 64, 1 << 20] {
            let out = run(text, block).unwrap();
            let host = &out.host;
            let names: Vec<&str> = host.name.iter().map(|&n| host.names.get(n)).collect();
            assert_eq!(names, ["aten::mm", "ProfilerStep#4"], "block {block}");
            assert_eq!(host.start_ns, [10_500, 20_000]);
            assert_eq!(host.end_ns, [12_500, 50_000]);
            assert_eq!(host.seq, [7, -1]);
            assert_eq!(host.stacks.len(), 1, "one stack, of the first op");
            assert_eq!(host.stacks[0].len(), 6, "its six frames");
            assert_eq!(
                out.steps,
                [Step {
                    id: 4,
                    start_ns: 20_000,
                    end_ns: 50_000
                }]
            );
            assert!(out.memory.is_empty() && out.device.time_ns.is_empty());
            assert_eq!(out.unreadable, 1, "the op without a time, once");
        }
    }

    #[test]
    fn a_call_stack_is_one_stack_however_often_and_however_it_is_read() {
        let op = |stack: &str| {
            format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "ts": 1, "dur": 1, "args": {{"Call stack": {stack}}}}}"#
            )
        };
        let events = [
            op(r#""a.py(1): f;b.py(2): g""#),
            op(r#""a.py(1): f;b.py(2): g""#),
            // The same text with an escape: read the general way, numbered as before.
            op(r#""a.py(1): f;b.py(2): \u0067""#),
            op(r#""a.py(1): f;b.py(2): \u0067""#),
            op("null"),
            // A raw control character is no JSON string: the op cannot be read.
            op("\"a.py(1):\tf\""),
            op(r#""c.py(3): h""#),
        ];
        let text = format!("[{}]", events.join(",\n"));
        for block in [5, 1 << 20] {
            let out = run(text.as_bytes(), block).unwrap();
            let host = &out.host;
            assert_eq!(host.stack, [0, 0, 1, 1, NO_STACK, 2], "block {block}");
            let frames = |id: usize| -> Vec<&str> {
                host.stacks[id]
                    .iter()
                    .map(|&f| host.frames.get(f))
                    .collect()
            };
            assert_eq!(frames(0), ["a.py(1): f", "b.py(2): g"]);
            assert_eq!(frames(1), frames(0));
            assert_eq!(frames(2), ["c.py(3): h"]);
            assert_eq!(out.unreadable, 1);
        }
    }

    #[test]
    fn async_ranges_of_the_same_name_are_steps_too() {
        let text = br#"[{"ph":"b","name":"ProfilerStep#7","id":1,"ts":"100.000","cat":"mstx"},
            {"ph":"e","name":"ProfilerStep#7","id":1,"ts":"250.500","cat":"mstx"},
            {"ph":"e","name":"ProfilerStep#8","id":2,"ts":"300.000"}]"#;
        let out = run(text, 9).unwrap();
        assert_eq!(
            out.steps,
            vec![Step {
                id: 7,
                start_ns: 100_000,
                end_ns: 250_500
            }]
        );
        assert_eq!(out.unreadable, 1, "an end without a start");
    }

    #[test]
    fn object_form_and_garbage() {
        let obj =
            format!(r#"{{"otherData": {{"name": "ProfilerStep#1"}}, "traceEvents": {TRACE}}}"#);
        let out = run(obj.as_bytes(), 5).unwrap();
        assert_eq!(out.steps.len(), 2);
        assert!(run(b"  hello", 3).is_err());
        // Unterminated, bad fields, a step without dur: nothing panics, nothing invented.
        let bad = br#"[{"ph":"X","name":"ProfilerStep#x","ts":"1","dur":1},{"ph":"X","name":"ProfilerStep#2","ts":"1"},{"ph":"X","name":"ProfilerStep#3","ts":"9e999","dur":1},{"ph":"X","#;
        let out = run(bad, 4).unwrap();
        assert!(out.steps.is_empty());
        assert_eq!(out.unreadable, 3);
    }
}
