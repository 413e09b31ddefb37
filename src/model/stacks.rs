//! Who allocated each block: the framework ops the host ran ([`HostOps`], as read from
//! `trace_view.json` or the DB's `PYTORCH_API`) and, once every operator_memory row has been
//! matched to the op running when it was allocated, the Python call stacks behind the rows
//! ([`CallStacks`]).

use super::{Interner, NameId, is_library_frame};

/// "No stack" / "no op" in the per-row and per-op columns.
pub const NONE: u32 = u32::MAX;

/// Where a rank's call stacks came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StackSource {
    /// The SQLite export's `PYTORCH_API` and `PYTORCH_CALLCHAINS`.
    Db,
    /// `cpu_op` events of `trace_view.json` (their `args["Call stack"]`).
    TraceView,
    /// A file read by an importer (`ingest::importer::Importer`), by the importer's name:
    /// `pytorch_trace` (its `cpu_op` events), `msmemscope` (its `ATEN_START`/`ATEN_END` op
    /// spans and `Call Stack(Python)`). A new source names itself; nothing here changes.
    Imported(&'static str),
}

impl StackSource {
    /// The name used in JSON output (`"db"`, `"trace_view"`, or the importer's name).
    pub fn as_str(self) -> &'static str {
        match self {
            StackSource::Db => "db",
            StackSource::TraceView => "trace_view",
            StackSource::Imported(name) => name,
        }
    }
}

/// Framework ops run on the host, columnar, in the order read. Times are absolute ns.
#[derive(Debug, Clone, Default)]
pub struct HostOps {
    /// Start, absolute ns.
    pub start_ns: Vec<i64>,
    /// End, absolute ns (`>= start_ns`).
    pub end_ns: Vec<i64>,
    /// The host thread (a profiler's `tid` or `globalTid`).
    pub thread: Vec<u64>,
    /// Op name, into `names`.
    pub name: Vec<NameId>,
    /// The op's own call stack, into `stacks`, or [`NONE`].
    pub stack: Vec<u32>,
    /// The autograd sequence number (`-1` when none): a backward node shares it with the
    /// forward op it was made by.
    pub seq: Vec<i64>,
    /// Op names.
    pub names: Interner,
    /// Frame texts (`path.py(123): function`).
    pub frames: Interner,
    /// Call stacks as frame ids, innermost first.
    pub stacks: Vec<Box<[NameId]>>,
    /// (backward op, the forward op that made it), as the profiler linked them: the `fwdbwd`
    /// flows of `trace_view.json`, the shared `CONNECTION_IDS` of the DB. Ops are indices.
    pub links: Vec<(u32, u32)>,
    /// Per op: the `nn.Module` forwards open on its thread when it started, as a stack of
    /// module frames only (into `stacks`, innermost first), or [`NONE`]. Kept apart from
    /// `stack`: torch_npu writes each op's own `Call stack`, which names no module, and adding
    /// the module frames to it would put them at the root of every flame graph. [`NONE`]
    /// throughout when the source records no module spans.
    pub module: Vec<u32>,
    /// Stacks nested deeper than a stack keeps, cut to their outermost frames
    /// (`ingest::module_spans::MAX_STACK_FRAMES`).
    pub stacks_cut: u64,
}

impl HostOps {
    /// Number of ops.
    pub fn len(&self) -> usize {
        self.start_ns.len()
    }

    /// True when there are no ops.
    pub fn is_empty(&self) -> bool {
        self.start_ns.is_empty()
    }

    /// Room for `n` more ops in each column.
    pub fn reserve(&mut self, n: usize) {
        self.start_ns.reserve(n);
        self.end_ns.reserve(n);
        self.thread.reserve(n);
        self.name.reserve(n);
        self.stack.reserve(n);
        self.seq.reserve(n);
        self.module.reserve(n);
    }

    /// Adds one op.
    pub fn push(&mut self, start: i64, end: i64, thread: u64, name: NameId, stack: u32, seq: i64) {
        self.start_ns.push(start);
        self.end_ns.push(end);
        self.thread.push(thread);
        self.name.push(name);
        self.stack.push(stack);
        self.seq.push(seq);
        self.module.push(NONE);
    }

    /// Links the ops that `flows` join: each flow `id` has a start (`is_start`) at a forward
    /// op's start on its thread and an end at a backward op's start on its thread (PyTorch's
    /// `fwdbwd` flows). At a (thread, time) where several ops start, the one whose sequence
    /// number is the flow's id is meant, else the longest. A repeated id pairs each end with
    /// the latest start before it.
    pub fn link_flows(&mut self, flows: &[Flow]) {
        if flows.is_empty() {
            return;
        }
        // The ops starting where a flow is: only those places are kept (a trace has a flow for
        // a few of its ops, and a list for every op's place took a quarter second on 1 GB).
        let mut at: rustc_hash::FxHashMap<(u64, i64), Vec<u32>> = flows
            .iter()
            .map(|f| ((f.thread, f.ns), Vec::new()))
            .collect();
        for i in 0..self.len() {
            if let Some(ops) = at.get_mut(&(self.thread[i], self.start_ns[i])) {
                ops.push(i as u32);
            }
        }
        let pick = |thread: u64, ns: i64, id: i64| -> Option<u32> {
            at.get(&(thread, ns))?.iter().copied().max_by_key(|&i| {
                let i = i as usize;
                (self.seq[i] == id, self.end_ns[i] - self.start_ns[i], i)
            })
        };
        let mut starts: Vec<&Flow> = flows.iter().filter(|f| f.is_start).collect();
        starts.sort_by_key(|f| (f.id, f.ns));
        let mut links = Vec::new();
        for end in flows.iter().filter(|f| !f.is_start) {
            let from = starts.partition_point(|s| (s.id, s.ns) <= (end.id, end.ns));
            let Some(start) = from
                .checked_sub(1)
                .map(|k| starts[k])
                .filter(|s| s.id == end.id)
            else {
                continue;
            };
            if let (Some(fwd), Some(bwd)) = (
                pick(start.thread, start.ns, start.id),
                pick(end.thread, end.ns, end.id),
            ) && fwd != bwd
            {
                links.push((bwd, fwd));
            }
        }
        self.links.extend(links);
    }
}

/// One end of a flow event between two ops (`ph` `s` or `f`, `cat` `fwdbwd`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Flow {
    /// The flow's id (PyTorch writes the sequence number).
    pub id: i64,
    /// The start (`s`, at the forward op) or the end (`f`, at the backward op).
    pub is_start: bool,
    /// The thread, numbered as the ops' threads.
    pub thread: u64,
    /// Its time, absolute ns.
    pub ns: i64,
}

/// The call stacks of a rank's operator_memory rows.
#[derive(Debug, Clone)]
pub struct CallStacks {
    /// Where they came from.
    pub source: StackSource,
    /// Frame texts.
    pub frames: Interner,
    /// Call stacks as frame ids, innermost first.
    pub stacks: Vec<Box<[NameId]>>,
    /// Host op names.
    pub op_names: Interner,
    /// How many times each host op name ran (indexed by op name id).
    pub op_calls: Vec<u64>,
    /// Per operator_memory row: the host op running when it was allocated (into `op_names`),
    /// or [`NONE`].
    pub row_op: Vec<u32>,
    /// Per operator_memory row: its call stack (into `stacks`), or [`NONE`].
    pub row_stack: Vec<u32>,
    /// Per operator_memory row: the modules it was allocated in, a stack of module frames
    /// (into `stacks`) from the host ops' [`HostOps::module`], or [`NONE`]. Empty when the
    /// source records modules only as frames of `row_stack` (or not at all).
    pub row_module: Vec<u32>,
    /// Rows no host op was running for (or without an allocation time).
    pub unattributed: usize,
    /// Rows matched to an op for which no stack is known.
    pub without_stack: usize,
    /// Host ops read.
    pub host_ops: usize,
    /// The training phases the host ops show (empty when they show none).
    pub phases: super::Phases,
    /// Per operator_memory row: the end (absolute ns) of the outermost framework op
    /// (`aten::…`) running when it was allocated, or [`crate::model::NULL`] when none was.
    pub row_call_end: Vec<i64>,
    /// Stacks nested deeper than a stack keeps, cut to their outermost frames
    /// ([`HostOps::stacks_cut`]).
    pub stacks_cut: u64,
}

impl CallStacks {
    /// The frames of stack `id`, innermost first (empty for [`NONE`]).
    pub fn frames_of(&self, id: u32) -> &[NameId] {
        self.stacks.get(id as usize).map_or(&[], |s| &s[..])
    }

    /// The frame texts of `row`'s stack, innermost first (empty when unknown).
    pub fn row_frames(&self, row: usize) -> Vec<&str> {
        let id = self.row_stack.get(row).copied().unwrap_or(NONE);
        self.frames_of(id)
            .iter()
            .map(|&f| self.frames.get(f))
            .collect()
    }

    /// The host op behind `row`, if any.
    pub fn row_op_name(&self, row: usize) -> Option<&str> {
        match self.row_op.get(row).copied() {
            Some(id) if id != NONE => Some(self.op_names.get(id)),
            _ => None,
        }
    }

    /// The source line of stack `id`: its innermost frame outside Python's libraries and
    /// installed packages (the user's own code), else its innermost frame.
    pub fn source_line(&self, id: u32) -> Option<NameId> {
        let frames = self.frames_of(id);
        frames
            .iter()
            .copied()
            .find(|&f| !is_library_frame(self.frames.get(f)))
            .or_else(|| frames.first().copied())
    }

    /// The source line of `row`'s stack as text.
    pub fn row_source_line(&self, row: usize) -> Option<&str> {
        let id = self.row_stack.get(row).copied().unwrap_or(NONE);
        self.source_line(id).map(|f| self.frames.get(f))
    }

    /// Bytes held (for the memory budget).
    pub fn heap_bytes(&self) -> usize {
        self.frames.heap_bytes()
            + self.op_names.heap_bytes()
            + self.stacks.iter().map(|s| s.len() * 4 + 16).sum::<usize>()
            + self.op_calls.len() * 8
            + self.row_op.len() * 4
            + self.row_stack.len() * 4
            + self.row_module.len() * 4
            + self.row_call_end.len() * 8
    }
}

/// Is `name` a framework op with a schema (`aten::add`, `npu::…`, `c10d::…`): what PyTorch's
/// memory profiler takes as one op, as opposed to annotations and autograd nodes around it.
pub fn is_schema_op(name: &str) -> bool {
    [
        "aten::",
        "npu::",
        "c10d::",
        "prims::",
        "_c10d_functional::",
        "torch_npu::",
    ]
    .iter()
    .any(|p| name.starts_with(p))
}
