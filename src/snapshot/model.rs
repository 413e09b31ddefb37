//! An allocator snapshot (`torch.cuda.memory._snapshot()` / `torch_npu.npu.memory._snapshot()`)
//! as typed, columnar-ish data: segments with their blocks, one event trace per device, and
//! every Python stack interned once.

use std::path::Path;

use rustc_hash::FxHashMap;

use super::unpickle::{Key, Pickle, UnpickleError, Value, unpickle};
use crate::model::{Budget, Built, OverBudget};

/// One Python frame of a stack.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Frame {
    /// Source file.
    pub filename: String,
    /// Line number.
    pub line: i64,
    /// Function name.
    pub name: String,
}

impl Frame {
    /// The frame as PyTorch's profiler writes one, and every view of memsight shows one:
    /// `path/to/file.py(12): name`.
    pub fn text(&self) -> String {
        format!("{}({}): {}", self.filename, self.line, self.name)
    }

    /// [`Frame::text`] without the file's folder: `file.py(12): name`; the name alone for a
    /// frame with no file (a C++ frame the unwinder could not place: `""` or `??`).
    pub fn short_text(&self) -> String {
        let name = without_parameters(&self.name);
        if self.filename.is_empty() || self.filename == "??" {
            return name.to_string();
        }
        let file = self
            .filename
            .rsplit(['/', '\\'])
            .next()
            .unwrap_or(&self.filename);
        format!("{file}({}): {name}", self.line)
    }
}

/// An interned stack: index into [`AllocatorSnapshot::stacks`]. Stack 0 is the empty stack.
pub type StackId = u32;

/// A block's state at the time of the snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Block {
    /// Device address.
    pub address: u64,
    /// Size in bytes.
    pub size: i64,
    /// Bytes the caller asked for.
    pub requested_size: i64,
    /// `active_allocated`, `active_pending_free`, `inactive`, …
    pub state: String,
    /// The block's own stack (often empty on NPU: then the alloc event's stack applies).
    pub stack: StackId,
}

/// A segment of the caching allocator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// Device index.
    pub device: i64,
    /// Device address.
    pub address: u64,
    /// Bytes reserved.
    pub total_size: i64,
    /// Bytes allocated in it.
    pub allocated_size: i64,
    /// Bytes active in it.
    pub active_size: i64,
    /// Stream.
    pub stream: i64,
    /// `large` / `small`.
    pub segment_type: String,
    /// Expandable segment.
    pub is_expandable: bool,
    /// Its memory pool (`segment_pool_id`): (0, 0) for the allocator's own pools, another id
    /// for a private pool (a CUDA graph's, a `torch.cuda.MemPool`).
    pub pool_id: (i64, i64),
    /// Its blocks in address order.
    pub blocks: Vec<Block>,
}

impl Segment {
    /// True when the segment belongs to a private pool (a CUDA graph's, a `MemPool`): only
    /// that pool's allocations can use its free space.
    pub fn in_private_pool(&self) -> bool {
        self.pool_id != (0, 0)
    }
}

/// What an event did. The names the allocator writes; any other is kept by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// `alloc`.
    Alloc,
    /// `free_requested`.
    FreeRequested,
    /// `free_completed`.
    FreeCompleted,
    /// `segment_alloc`.
    SegmentAlloc,
    /// `segment_free`.
    SegmentFree,
    /// `segment_map`.
    SegmentMap,
    /// `segment_unmap`.
    SegmentUnmap,
    /// `snapshot`.
    Snapshot,
    /// `oom`.
    Oom,
    /// `workspace_snapshot` (NPU).
    WorkspaceSnapshot,
    /// Another name: index into [`AllocatorSnapshot::other_actions`].
    Other(u32),
}

const ACTIONS: [(&str, Action); 10] = [
    ("alloc", Action::Alloc),
    ("free_requested", Action::FreeRequested),
    ("free_completed", Action::FreeCompleted),
    ("segment_alloc", Action::SegmentAlloc),
    ("segment_free", Action::SegmentFree),
    ("segment_map", Action::SegmentMap),
    ("segment_unmap", Action::SegmentUnmap),
    ("snapshot", Action::Snapshot),
    ("oom", Action::Oom),
    ("workspace_snapshot", Action::WorkspaceSnapshot),
];

/// One event of a device trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    /// What it did.
    pub action: Action,
    /// Device address.
    pub addr: u64,
    /// Bytes.
    pub size: i64,
    /// Stream.
    pub stream: i64,
    /// Where it was called from.
    pub stack: StackId,
    /// Microseconds (CUDA snapshots; NPU snapshots have none).
    pub time_us: Option<i64>,
    /// What the device had free (`device_free`, on `oom` events only).
    pub device_free: Option<i64>,
    /// The `torch.compile` region it happened in (`compile_context`): an index into
    /// [`AllocatorSnapshot::compile_contexts`], 0 for none (`N/A`, or not recorded).
    pub compile_context: u32,
}

impl Event {
    /// An event on stream 0 with no stack and no time (tests, hand-made traces).
    pub fn bare(action: Action, addr: u64, size: i64) -> Event {
        Event {
            action,
            addr,
            size,
            stream: 0,
            stack: 0,
            time_us: None,
            device_free: None,
            compile_context: 0,
        }
    }
}

/// A user annotation of the trace (`external_annotations`: `record_function` ranges such as
/// `ProfilerStep#3`, `forward`, `backward`, recorded with the memory history), its `START` and
/// `END` paired.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Annotation {
    /// Its name (shared by every annotation of that name: a trace annotating every step
    /// repeats a few names thousands of times).
    pub name: std::sync::Arc<str>,
    /// The device it was recorded on.
    pub device: i64,
    /// When it started, µs (the events' clock).
    pub start_us: i64,
    /// When it ended, µs; None when the snapshot has no `END` for it (still open).
    pub end_us: Option<i64>,
}

/// A whole allocator snapshot.
#[derive(Debug, Clone, Default)]
pub struct AllocatorSnapshot {
    /// Every segment, as listed.
    pub segments: Vec<Segment>,
    /// Events per device index.
    pub traces: Vec<Vec<Event>>,
    /// Interned stacks; index 0 is the empty stack.
    pub stacks: Vec<Vec<Frame>>,
    /// Values that were not what the format says and were read as 0 / empty.
    pub odd_values: u64,
    /// Names of [`Action::Other`] actions.
    pub other_actions: Vec<String>,
    /// The accelerator it was taken on (names its devices).
    pub backend: Backend,
    /// The user's annotations, in the order they started.
    pub annotations: Vec<Annotation>,
    /// The `torch.compile` regions events name (`compile_context`, e.g. `Torch-Compiled
    /// Region: 0/0`); index 0 is none.
    pub compile_contexts: Vec<String>,
    /// Frames of FX-generated code (`fx_generated_*.py`) that PyTorch mapped back to the
    /// model's source (`fx_original_trace`, from `_dump_snapshot(augment_with_fx_traces=True)`)
    /// and that stacks show as the model's own frames instead: how many distinct ones.
    pub fx_frames_mapped: u64,
    /// Pinned host memory (`host_segments` / `host_traces`, recorded with
    /// `record_pinned_host_memory=True`); empty when the snapshot has none.
    pub host: HostMemory,
}

/// The pinned (page-locked) host memory of a snapshot: the host allocator's segments and its
/// event trace, in the same shapes as the device's.
#[derive(Debug, Clone, Default)]
pub struct HostMemory {
    /// `host_segments`.
    pub segments: Vec<Segment>,
    /// `host_traces`, in order (one list, or the lists PyTorch wrote one after another).
    pub trace: Vec<Event>,
    /// Whether the snapshot has either key at all (recorded, even if nothing was pinned).
    pub recorded: bool,
}

/// Why a snapshot could not be read.
#[derive(Debug, thiserror::Error)]
pub enum SnapshotError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a readable pickle (or one that would run code).
    #[error("{path}: {source}")]
    Pickle {
        /// The file.
        path: String,
        /// The cause.
        source: UnpickleError,
    },
    /// Not a pickle at all (a pickle of protocol 2 or later starts with byte 0x80): what it
    /// looks like instead.
    #[error("{path}: not an allocator snapshot: the file is {what}, not a pickle")]
    NotAPickle {
        /// The file.
        path: String,
        /// What it looks like.
        what: FileKind,
    },
    /// A pickle, but not an allocator snapshot.
    #[error("{path}: not an allocator snapshot (no 'segments' or 'device_traces')")]
    NotASnapshot {
        /// The file.
        path: String,
    },
    /// The pickle names the same blocks or events over and over through its memo: the model,
    /// which holds a block or event per reference, would grow far past the file (a 100 KB file
    /// to gigabytes). PyTorch writes every block and event as a dict of its own.
    #[error(
        "{path}: the snapshot refers to {built} blocks, events and segments but holds only \
         {objects} objects (it repeats them by reference, which PyTorch never writes); refused \
         rather than expanded"
    )]
    Repeated {
        /// The file.
        path: String,
        /// Blocks, events and segments the references name.
        built: u64,
        /// Dicts in the whole pickle.
        objects: u64,
    },
    /// What the pickle's references build (stacks of frames shared through the memo, an FX
    /// frame's model frames, annotations) would grow far past the file.
    #[error("{path}: {source}")]
    TooLarge {
        /// The file.
        path: String,
        /// The budget it went past.
        source: OverBudget,
    },
}

/// What a file that is not a snapshot's pickle looks like, from its first bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// No bytes at all.
    Empty,
    /// gzip-compressed.
    Gzip,
    /// A zip archive.
    Zip,
    /// A SQLite database.
    Sqlite,
    /// JSON (an object or an array).
    Json,
    /// Text: a CSV or a tab-separated table.
    Text,
}

impl std::fmt::Display for FileKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            FileKind::Empty => "empty",
            FileKind::Gzip => "gzip-compressed (decompress it first)",
            FileKind::Zip => "a zip archive",
            FileKind::Sqlite => "a SQLite database",
            FileKind::Json => "JSON",
            FileKind::Text => "a CSV or text file",
        })
    }
}

/// What a file that is certainly no pickle looks like; `None` when it may be one (a pickle of
/// protocol 2 or later starts with byte 0x80; older ones start with an opcode, which the reader
/// names, refusing any that would run code). Text counts as a table when its first line has a
/// comma or a tab: no pickle's first line has either before its first newline.
pub fn not_a_pickle(bytes: &[u8]) -> Option<FileKind> {
    let head = &bytes[..bytes.len().min(256)];
    let first_line = head.split(|&b| b == b'\n').next().unwrap_or(head);
    Some(match head {
        [0x80, ..] => return None,
        [] => FileKind::Empty,
        [0x1f, 0x8b, ..] => FileKind::Gzip,
        [b'P', b'K', 3, 4, ..] => FileKind::Zip,
        _ if head.starts_with(b"SQLite format 3") => FileKind::Sqlite,
        [b'{' | b'[', ..] => FileKind::Json,
        _ if first_line.iter().any(|&b| b == b',' || b == b'\t')
            && first_line
                .iter()
                .all(|b| b.is_ascii_graphic() || b.is_ascii_whitespace() || *b >= 0x80) =>
        {
            FileKind::Text
        }
        _ => return None,
    })
}

/// How much of a snapshot's file is read and checked before the rest.
const HEAD_BYTES: u64 = 64 * 1024;

/// References beyond the pickle's own dicts that a snapshot may make before it is refused as
/// repeating its blocks (a few odd non-dict entries are read as empty blocks, as before).
const REPEAT_SLACK: u64 = 4096;

impl AllocatorSnapshot {
    /// Reads a `.pickle` / `.pkl` snapshot (a regular file only; nothing in it is executed).
    pub fn open(path: &Path) -> Result<AllocatorSnapshot, SnapshotError> {
        let shown = || path.display().to_string();
        let mut file =
            crate::ingest::safe_fs::open_regular(path).map_err(|source| SnapshotError::Io {
                path: shown(),
                source,
            })?;
        // Room for the whole file at once: growing by doubling copied it and touched twice
        // the memory. The length is a hint only; read_to_end still reads to the real end.
        let hint = file
            .metadata()
            .ok()
            .and_then(|m| usize::try_from(m.len()).ok())
            .unwrap_or(0);
        // The head first: a file that is no pickle, or one whose first opcodes already fail
        // (2 GB of zeros named `.pickle`), is refused before the rest is read.
        let mut bytes = Vec::new();
        let io = |source| SnapshotError::Io {
            path: shown(),
            source,
        };
        std::io::Read::read_to_end(&mut std::io::Read::take(&mut file, HEAD_BYTES), &mut bytes)
            .map_err(io)?;
        if let Some(what) = not_a_pickle(&bytes) {
            return Err(SnapshotError::NotAPickle {
                path: shown(),
                what,
            });
        }
        if let Err(source) = unpickle(&bytes)
            && !source.truncated
        {
            // The reader goes forward only: what fails in the head fails in the whole file.
            return Err(SnapshotError::Pickle {
                path: shown(),
                source,
            });
        }
        bytes
            .try_reserve_exact(hint.saturating_sub(bytes.len()).saturating_add(1))
            .map_err(|e| {
                io(std::io::Error::new(
                    std::io::ErrorKind::OutOfMemory,
                    e.to_string(),
                ))
            })?;
        std::io::Read::read_to_end(&mut file, &mut bytes).map_err(io)?;
        let p = unpickle(&bytes).map_err(|source| SnapshotError::Pickle {
            path: shown(),
            source,
        });
        let input = bytes.len() as u64;
        drop(bytes); // the pickle holds copies of what it needs: a file's worth less at the peak
        Self::from_pickle(p?, input).map_err(|e| match e {
            SnapshotError::Pickle { source, .. } => SnapshotError::Pickle {
                path: shown(),
                source,
            },
            SnapshotError::Repeated { built, objects, .. } => SnapshotError::Repeated {
                path: shown(),
                built,
                objects,
            },
            SnapshotError::TooLarge { source, .. } => SnapshotError::TooLarge {
                path: shown(),
                source,
            },
            _ => SnapshotError::NotASnapshot { path: shown() },
        })
    }

    /// Reads a snapshot from the bytes of its pickle.
    pub fn from_bytes(bytes: &[u8]) -> Result<AllocatorSnapshot, SnapshotError> {
        let p = unpickle(bytes).map_err(|source| SnapshotError::Pickle {
            path: String::new(),
            source,
        })?;
        Self::from_pickle(p, bytes.len() as u64)
    }

    /// The snapshot in an unpickled file. The pickle's millions of small containers are freed
    /// on a thread of their own (a tenth of the read's time), when one can be started.
    fn from_pickle(p: Pickle, input: u64) -> Result<AllocatorSnapshot, SnapshotError> {
        let out = Self::build(&p, Budget::for_input(input));
        if let Err(e) = std::thread::Builder::new()
            .name("drop-pickle".into())
            .spawn(move || drop(p))
        {
            // No thread: the closure (and the pickle) is dropped here instead.
            drop(e);
        }
        out
    }

    /// The snapshot the pickle holds, built within `budget` (what its references build, in
    /// proportion to the file).
    fn build(p: &Pickle, budget: Budget) -> Result<AllocatorSnapshot, SnapshotError> {
        let root = p.root.unwrap_or(Value::None);
        let segments = p.get(root, "segments");
        let traces = p.get(root, "device_traces");
        let host_segments = p.get(root, "host_segments");
        let host_traces = p.get(root, "host_traces");
        if segments.is_none() && traces.is_none() && host_segments.is_none() {
            return Err(SnapshotError::NotASnapshot {
                path: String::new(),
            });
        }
        // The model holds a block, event and segment per reference, so it is as big as the
        // references: bounded by the pickle's own objects (every real block, event and segment
        // is a dict of its own), memory stays proportional to what the file holds.
        let segment_items = segments.and_then(|v| p.items(v)).unwrap_or(&[]);
        let trace_items = traces.and_then(|v| p.items(v)).unwrap_or(&[]);
        let blocks = block_count(p, segment_items);
        let events: u64 = trace_items
            .iter()
            .map(|&t| p.items(t).map_or(0, <[_]>::len) as u64)
            .sum();
        let host_segment_items = host_segments.and_then(|v| p.items(v)).unwrap_or(&[]);
        let host_event_items = host_events(p, host_traces);
        let host_blocks = block_count(p, host_segment_items);
        let built = (segment_items.len() as u64)
            .saturating_add(blocks)
            .saturating_add(events)
            .saturating_add(host_segment_items.len() as u64)
            .saturating_add(host_blocks)
            .saturating_add(host_event_items.len() as u64);
        let objects = p.dict_count() as u64;
        if built > objects.saturating_add(REPEAT_SLACK) {
            return Err(SnapshotError::Repeated {
                path: String::new(),
                built,
                objects,
            });
        }
        let mut b = Builder {
            p,
            keys: Keys::of(p),
            actions: FxHashMap::default(),
            other_ids: FxHashMap::default(),
            out: AllocatorSnapshot {
                stacks: vec![Vec::new()],
                compile_contexts: vec![String::new()],
                ..Default::default()
            },
            frames: Vec::new(),
            frame_ids: FxHashMap::default(),
            dict_frames: FxHashMap::default(),
            // The empty stack is id 0, whether a value has no frames or an empty list.
            stack_ids: FxHashMap::from_iter([(Vec::new(), 0)]),
            list_stacks: FxHashMap::default(),
            contexts: FxHashMap::default(),
            fx_dict_frames: FxHashMap::default(),
            fx_generated: Default::default(),
            budget,
            over: None,
        };
        for &s in segment_items {
            let seg = b.segment(s);
            b.out.segments.push(seg);
        }
        for &t in trace_items {
            let events = p
                .items(t)
                .unwrap_or(&[])
                .iter()
                .map(|&e| b.event(e))
                .collect();
            b.out.traces.push(events);
        }
        b.out.host.recorded = host_segments.is_some() || host_traces.is_some();
        for &s in host_segment_items {
            let seg = b.segment(s);
            b.out.host.segments.push(seg);
        }
        for e in host_event_items {
            let ev = b.event(e);
            b.out.host.trace.push(ev);
        }
        b.out.backend = backend_of(p, root, &b.frames);
        let annotations = annotations_of(p, root, &mut b.budget);
        let too_large = |source| SnapshotError::TooLarge {
            path: String::new(),
            source,
        };
        if let Some(over) = b.over {
            return Err(too_large(over));
        }
        b.out.annotations = annotations.map_err(too_large)?;
        Ok(b.out)
    }

    /// The event trace of `device` (empty when it has none).
    pub fn trace(&self, device: i64) -> &[Event] {
        usize::try_from(device)
            .ok()
            .and_then(|d| self.traces.get(d))
            .map_or(&[], Vec::as_slice)
    }

    /// The name of an action, as the file spells it.
    pub fn action_name(&self, a: Action) -> &str {
        match a {
            Action::Other(i) => self
                .other_actions
                .get(i as usize)
                .map_or("", String::as_str),
            known => ACTIONS
                .iter()
                .find(|(_, k)| *k == known)
                .map_or("", |(name, _)| name),
        }
    }

    /// The frames of a stack.
    pub fn frames(&self, id: StackId) -> &[Frame] {
        self.stacks.get(id as usize).map_or(&[], Vec::as_slice)
    }

    /// Device indices that have a segment or an event, ascending.
    pub fn devices(&self) -> Vec<i64> {
        let mut d: Vec<i64> = self.segments.iter().map(|s| s.device).collect();
        for (i, t) in self.traces.iter().enumerate() {
            if !t.is_empty() {
                d.push(i as i64);
            }
        }
        d.sort_unstable();
        d.dedup();
        d
    }
}

/// The accelerator of a snapshot: from the allocator settings' variable
/// (`PYTORCH_CUDA_ALLOC_CONF` / `PYTORCH_NPU_ALLOC_CONF`), else from the first frame that names
/// one (the CUDA allocator, `torch/cuda/`, torch_npu), else NPU.
fn backend_of(p: &Pickle, root: Value, frames: &[Frame]) -> Backend {
    let settings = p.get(root, "allocator_settings").unwrap_or(Value::None);
    if p.get(settings, "PYTORCH_CUDA_ALLOC_CONF").is_some() {
        return Backend::Cuda;
    }
    if p.get(settings, "PYTORCH_NPU_ALLOC_CONF").is_some() {
        return Backend::Npu;
    }
    frames
        .iter()
        .find_map(Backend::of_frame)
        .unwrap_or_default()
}

/// What a copy of `f` takes in a stack: the frame and its two strings.
fn frame_bytes(f: &Frame) -> u64 {
    (size_of::<Frame>() + f.filename.len() + f.name.len()) as u64
}

/// How many blocks the segments list.
fn block_count(p: &Pickle, segments: &[Value]) -> u64 {
    segments
        .iter()
        .map(|&s| {
            p.get(s, "blocks")
                .and_then(|b| p.items(b))
                .map_or(0, <[_]>::len) as u64
        })
        .sum()
}

/// The events of `host_traces`: PyTorch's list of event dicts, or lists of them (as
/// `device_traces` is written), read one after another.
fn host_events(p: &Pickle, traces: Option<Value>) -> Vec<Value> {
    let items = traces.and_then(|v| p.items(v)).unwrap_or(&[]);
    let mut out = Vec::new();
    for &item in items {
        match item {
            Value::List(_) | Value::Tuple(_) => out.extend_from_slice(p.items(item).unwrap_or(&[])),
            other => out.push(other),
        }
    }
    out
}

/// The `external_annotations` of a snapshot, each `START` paired with the next `END` of the same
/// name on the same device (nested ranges of one name close innermost first); an entry without
/// a name, a stage or a time is skipped, an `END` without a `START` too.
fn annotations_of(
    p: &Pickle,
    root: Value,
    budget: &mut Budget,
) -> Result<Vec<Annotation>, OverBudget> {
    let items = p
        .get(root, "external_annotations")
        .and_then(|v| p.items(v))
        .unwrap_or(&[]);
    let mut out: Vec<Annotation> = Vec::new();
    // Open starts by (device, the name's text id): indices into `out`.
    let mut open: FxHashMap<(i64, Option<u32>), Vec<usize>> = FxHashMap::default();
    // Each name once, by its text id.
    let mut names: FxHashMap<Option<u32>, std::sync::Arc<str>> = FxHashMap::default();
    for &a in items {
        let text = |k: &str| p.get(a, k).and_then(|v| p.text(v));
        let int = |k: &str| {
            p.get(a, k)
                .and_then(|v| p.int(v))
                .and_then(|v| i64::try_from(v).ok())
        };
        let (Some(stage), Some(name), Some(time)) = (text("stage"), text("name"), int("time_us"))
        else {
            continue;
        };
        let device = int("device").unwrap_or(0);
        let id = p.get(a, "name").and_then(Pickle::text_id);
        let shared = match names.get(&id) {
            Some(n) => std::sync::Arc::clone(n),
            None => {
                let n: std::sync::Arc<str> = name.into();
                names.insert(id, std::sync::Arc::clone(&n));
                n
            }
        };
        // The model shares the name, but every answer writes it out once per phase (the
        // phases' list, its JSON, its text): an entry the memo repeats costs its name that
        // many times, and an annotation and an open index.
        let each = size_of::<Annotation>() + 16 + 3 * name.len();
        budget.charge(Built::SnapshotAnnotations, each as u64)?;
        let key = (device, id);
        if stage.eq_ignore_ascii_case("START") {
            open.entry(key).or_default().push(out.len());
            out.push(Annotation {
                name: shared,
                device,
                start_us: time,
                end_us: None,
            });
        } else if stage.eq_ignore_ascii_case("END")
            && let Some(i) = open.get_mut(&key).and_then(Vec::pop)
        {
            out[i].end_us = Some(time);
        }
    }
    Ok(out)
}

/// The keys read from every event and frame, looked up once.
struct Keys {
    action: Key,
    addr: Key,
    size: Key,
    stream: Key,
    frames: Key,
    time_us: Key,
    device_free: Key,
    compile_context: Key,
    filename: Key,
    line: Key,
    name: Key,
    fx_original_trace: Key,
}

impl Keys {
    fn of(p: &Pickle) -> Keys {
        Keys {
            action: p.key("action"),
            addr: p.key("addr"),
            size: p.key("size"),
            stream: p.key("stream"),
            frames: p.key("frames"),
            time_us: p.key("time_us"),
            device_free: p.key("device_free"),
            compile_context: p.key("compile_context"),
            filename: p.key("filename"),
            line: p.key("line"),
            name: p.key("name"),
            fx_original_trace: p.key("fx_original_trace"),
        }
    }
}

struct Builder<'p> {
    p: &'p Pickle,
    keys: Keys,
    /// Actions by the text id of their name.
    actions: FxHashMap<u32, Action>,
    /// [`Action::Other`] ids by their name.
    other_ids: FxHashMap<String, u32>,
    out: AllocatorSnapshot,
    /// Distinct frames, by content and by the pickle dict they came from (frame dicts are
    /// shared between events through the memo, so each is read once).
    frames: Vec<Frame>,
    frame_ids: FxHashMap<Frame, u32>,
    dict_frames: FxHashMap<u32, u32>,
    /// Stacks by their frames' ids.
    stack_ids: FxHashMap<Vec<u32>, StackId>,
    /// Stacks by the pickle list they came from (shared lists are read once).
    list_stacks: FxHashMap<u32, StackId>,
    /// `compile_context` ids by the text id of their text.
    contexts: FxHashMap<u32, u32>,
    /// The model's frames an FX-generated frame dict stands for (`fx_original_trace`), by
    /// the dict; empty when it has none.
    fx_dict_frames: FxHashMap<u32, Vec<u32>>,
    /// The distinct frames of generated code that were mapped.
    fx_generated: rustc_hash::FxHashSet<u32>,
    /// What the stacks may build: a frame dict shared through the memo is read once, but each
    /// reference to it is a frame of its stack.
    budget: Budget,
    /// The first time the budget ran out; the build stops adding frames from then on, and
    /// the snapshot is refused.
    over: Option<OverBudget>,
}

impl Builder<'_> {
    /// An integer field as `T`; absent or None reads as 0, anything else that does not fit
    /// reads as 0 and is counted in `odd_values`.
    fn number<T: TryFrom<i128> + Default>(&mut self, v: Option<Value>) -> T {
        match v.and_then(|v| self.p.int(v)).map(T::try_from) {
            Some(Ok(n)) => n,
            None if matches!(v, None | Some(Value::None)) => T::default(),
            _ => {
                self.out.odd_values += 1;
                T::default()
            }
        }
    }

    fn int(&mut self, v: Option<Value>) -> i64 {
        self.number(v)
    }

    fn addr(&mut self, v: Option<Value>) -> u64 {
        self.number(v)
    }

    fn text(&self, v: Option<Value>) -> String {
        v.and_then(|v| self.p.text(v)).unwrap_or("").to_string()
    }

    fn stack(&mut self, v: Option<Value>) -> StackId {
        let Some(v @ Value::List(list)) = v else {
            return 0;
        };
        let p = self.p;
        if p.items(v).is_none_or(<[Value]>::is_empty) {
            return 0; // an empty list (every free event has a fresh one): nothing to remember
        }
        if let Some(&id) = self.list_stacks.get(&list) {
            return id;
        }
        if self.over.is_some() {
            return 0;
        }
        let mut ids: Vec<u32> = Vec::new();
        for &f in p.items(v).unwrap_or(&[]) {
            let model = self.fx_frames(f);
            let added = model.len().max(1);
            // Each id is kept twice (the stack's key and the list being built).
            if let Err(e) = self.budget.charge(Built::SnapshotStacks, 8 * added as u64) {
                self.over = Some(e);
                return 0;
            }
            if model.is_empty() {
                ids.push(self.frame(f));
            } else {
                ids.extend_from_slice(&model);
            }
        }
        let id = match self.stack_ids.get(&ids) {
            Some(&id) => id,
            None => {
                let id = self.out.stacks.len() as StackId;
                let bytes: u64 = ids
                    .iter()
                    .map(|&i| frame_bytes(&self.frames[i as usize]))
                    .sum();
                if let Err(e) = self.budget.charge(Built::SnapshotStacks, bytes) {
                    self.over = Some(e);
                    return 0;
                }
                let frames = ids
                    .iter()
                    .map(|&i| self.frames[i as usize].clone())
                    .collect();
                self.out.stacks.push(frames);
                self.stack_ids.insert(ids, id);
                id
            }
        };
        self.list_stacks.insert(list, id);
        id
    }

    /// The model's frames (innermost first) that a frame of FX-generated code stands for, from
    /// its `fx_original_trace`; empty for every other frame. Read once per frame dict.
    fn fx_frames(&mut self, f: Value) -> Vec<u32> {
        let Value::Dict(d) = f else {
            return Vec::new();
        };
        if let Some(ids) = self.fx_dict_frames.get(&d) {
            return ids.clone();
        }
        let p = self.p;
        let trace = p
            .get_key(f, self.keys.fx_original_trace)
            .and_then(|v| p.text(v))
            .unwrap_or("");
        let frames = super::fx::original_frames(trace);
        if !frames.is_empty() {
            let generated = self.frame(f);
            self.fx_generated.insert(generated);
            self.out.fx_frames_mapped = self.fx_generated.len() as u64;
        }
        let ids: Vec<u32> = frames.into_iter().map(|fr| self.intern(fr)).collect();
        self.fx_dict_frames.insert(d, ids.clone());
        ids
    }

    /// The id of a frame, by its content.
    fn intern(&mut self, frame: Frame) -> u32 {
        match self.frame_ids.get(&frame) {
            Some(&id) => id,
            None => {
                let id = self.frames.len() as u32;
                self.frames.push(frame.clone());
                self.frame_ids.insert(frame, id);
                id
            }
        }
    }

    /// The id of one frame dict, read once per dict.
    fn frame(&mut self, f: Value) -> u32 {
        if let Value::Dict(d) = f
            && let Some(&id) = self.dict_frames.get(&d)
        {
            return id;
        }
        let p = self.p;
        let frame = Frame {
            filename: self.text(p.get_key(f, self.keys.filename)),
            line: self.int(p.get_key(f, self.keys.line)),
            name: self.text(p.get_key(f, self.keys.name)),
        };
        let id = self.intern(frame);
        if let Value::Dict(d) = f {
            self.dict_frames.insert(d, id);
        }
        id
    }

    fn segment(&mut self, s: Value) -> Segment {
        let p = self.p;
        let blocks = p
            .items(p.get(s, "blocks").unwrap_or(Value::None))
            .unwrap_or(&[])
            .iter()
            .map(|&b| Block {
                address: self.addr(p.get(b, "address")),
                size: self.int(p.get(b, "size")),
                requested_size: self.int(p.get(b, "requested_size")),
                state: self.text(p.get(b, "state")),
                stack: self.stack(p.get(b, "frames")),
            })
            .collect();
        Segment {
            device: self.int(p.get(s, "device")),
            address: self.addr(p.get(s, "address")),
            total_size: self.int(p.get(s, "total_size")),
            allocated_size: self.int(p.get(s, "allocated_size")),
            active_size: self.int(p.get(s, "active_size")),
            stream: self.int(p.get(s, "stream")),
            segment_type: self.text(p.get(s, "segment_type")),
            is_expandable: matches!(p.get(s, "is_expandable"), Some(Value::Bool(true))),
            pool_id: self.pool_id(p.get(s, "segment_pool_id")),
            blocks,
        }
    }

    /// A `segment_pool_id` pair; (0, 0) when absent or not a pair of integers.
    fn pool_id(&mut self, v: Option<Value>) -> (i64, i64) {
        let p = self.p;
        match v.and_then(|v| p.items(v)) {
            Some(&[a, b]) => (self.int(Some(a)), self.int(Some(b))),
            _ => (0, 0),
        }
    }

    fn action(&mut self, v: Option<Value>) -> Action {
        let id = v.and_then(Pickle::text_id);
        if let Some(a) = id.and_then(|i| self.actions.get(&i)) {
            return *a;
        }
        let a = self.action_by_name(v);
        if let Some(i) = id {
            self.actions.insert(i, a);
        }
        a
    }

    fn action_by_name(&mut self, v: Option<Value>) -> Action {
        let name = v.and_then(|v| self.p.text(v)).unwrap_or("");
        if let Some((_, a)) = ACTIONS.iter().find(|(n, _)| *n == name) {
            return *a;
        }
        // By name: a trace may spell 150,000 different names, each looked up once.
        let others = &mut self.out.other_actions;
        let i = *self.other_ids.entry(name.to_string()).or_insert_with(|| {
            others.push(name.to_string());
            (others.len() - 1) as u32
        });
        Action::Other(i)
    }

    fn event(&mut self, e: Value) -> Event {
        let p = self.p;
        let action = self.action(p.get_key(e, self.keys.action));
        let k = &self.keys;
        let device_free = (action == Action::Oom)
            .then(|| p.get_key(e, k.device_free))
            .flatten()
            .and_then(|v| p.int(v))
            .and_then(|v| i64::try_from(v).ok());
        let (time, addr, size, stream, frames, context) = (
            p.get_key(e, k.time_us),
            p.get_key(e, k.addr),
            p.get_key(e, k.size),
            p.get_key(e, k.stream),
            p.get_key(e, k.frames),
            p.get_key(e, k.compile_context),
        );
        Event {
            action,
            addr: self.addr(addr),
            size: self.int(size),
            stream: self.int(stream),
            stack: self.stack(frames),
            time_us: time
                .and_then(|t| p.int(t))
                .and_then(|t| i64::try_from(t).ok()),
            device_free,
            compile_context: self.compile_context(context),
        }
    }

    /// The id of a `compile_context` text (0 for none: absent, empty or `N/A`), by the text's
    /// id in the pickle, so that a million events of one region cost one lookup each.
    fn compile_context(&mut self, v: Option<Value>) -> u32 {
        let Some((v, id)) = v.and_then(|v| Some((v, Pickle::text_id(v)?))) else {
            return 0;
        };
        if let Some(&c) = self.contexts.get(&id) {
            return c;
        }
        let text = self.p.text(v).unwrap_or_default();
        let c = if text.is_empty() || text == "N/A" {
            0
        } else {
            self.out.compile_contexts.push(text.to_string());
            u32::try_from(self.out.compile_contexts.len() - 1).unwrap_or(0)
        };
        self.contexts.insert(id, c);
        c
    }
}

/// The accelerator a snapshot was taken on, which names its devices.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Backend {
    /// torch_npu (Ascend): `NPU:N`. The default when the file does not say.
    #[default]
    Npu,
    /// PyTorch on CUDA: `CUDA:N`.
    Cuda,
}

impl Backend {
    /// Device `n` as the framework names it: `CUDA:0`, `NPU:3`.
    pub fn device_label(self, n: i64) -> String {
        match self {
            Backend::Npu => format!("NPU:{n}"),
            Backend::Cuda => format!("CUDA:{n}"),
        }
    }

    /// The allocator's settings variable (`PYTORCH_CUDA_ALLOC_CONF`, `PYTORCH_NPU_ALLOC_CONF`),
    /// for advice.
    pub fn alloc_conf(self) -> &'static str {
        match self {
            Backend::Npu => crate::model::NPU_ALLOC_CONF,
            Backend::Cuda => crate::model::CUDA_ALLOC_CONF,
        }
    }

    /// The backend a frame's text points at, if any: the CUDA allocator and `torch/cuda/`, or
    /// torch_npu's.
    pub fn of_frame(f: &Frame) -> Option<Backend> {
        let (file, name) = (f.filename.replace('\\', "/"), &f.name);
        if name.contains("c10_npu::")
            || name.contains("NPUCachingAllocator")
            || file.contains("torch_npu/")
        {
            Some(Backend::Npu)
        } else if name.contains("c10::cuda::")
            || file.ends_with("CUDACachingAllocator.cpp")
            || file.contains("torch/cuda/")
        {
            Some(Backend::Cuda)
        } else {
            None
        }
    }
}

/// A C++ function's name without its parameter list (`at::cuda::setWorkspaceForHandle` for
/// `at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)`), so that a frame
/// fits a table's row; the list is the parenthesis that closes the name, so `(anonymous
/// namespace)` inside it stays. Other names as they are.
fn without_parameters(name: &str) -> &str {
    if !name.ends_with(')') {
        return name;
    }
    let mut depth = 0usize;
    for (i, c) in name.char_indices().rev() {
        match c {
            ')' => depth += 1,
            '(' => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return match name[..i].trim_end() {
                        "" => name,
                        head => head,
                    };
                }
            }
            _ => {}
        }
    }
    name
}

#[cfg(test)]
mod frame_tests {
    use super::*;

    #[test]
    fn a_cpp_frame_is_shown_without_its_parameters() {
        let f = |file: &str, name: &str| Frame {
            filename: file.into(),
            line: 0,
            name: name.into(),
        };
        let t = f(
            "??",
            "at::cuda::setWorkspaceForHandle(cublasContext*, c10::cuda::CUDAStream)",
        );
        assert_eq!(t.short_text(), "at::cuda::setWorkspaceForHandle");
        let t = f(
            "RegisterCUDA_0.cpp",
            "at::(anonymous namespace)::structured_mul::set_output(long, c10::IntArrayRef)",
        );
        assert_eq!(
            t.short_text(),
            "RegisterCUDA_0.cpp(0): at::(anonymous namespace)::structured_mul::set_output"
        );
        assert_eq!(f("/a/m.py", "forward").short_text(), "m.py(0): forward");
        assert_eq!(f("", "(unbalanced))").short_text(), "(unbalanced))");
        assert_eq!(f("", "()").short_text(), "()");
    }
}
