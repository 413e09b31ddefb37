//! PyTorch / torch_npu caching-allocator snapshots (`_dump_snapshot("x.pickle")`), read natively
//! and safely: [`unpickle`] builds data from the pickle and refuses every opcode that would run
//! code; [`model`] turns it into segments, blocks, per-device event traces and interned stacks;
//! [`summary`] computes what `memsight snapshot` prints; [`segments`] lays out each segment's
//! blocks with the fragmentation figures, at the end or after any event; [`timeline`] stacks
//! every allocation as a band over the events (memory_viz's active-memory view); [`oom`] says
//! why an `oom` event happened (fragmentation or exhaustion) and reads the per-module memory
//! torch_npu writes beside an OOM snapshot; [`fragmentation`] splits reserved − allocated into
//! its causes at an event and names the setting that closes the largest; [`compare`] sets two
//! snapshots (or two moments of one) side by side: what grew or shrank, by stack, size and pool;
//! [`phases`] reads the user's annotations (`external_annotations`) as phases of the trace and
//! says which phase allocated what is live; [`compiled`] what `torch.compile`d regions
//! (`compile_context`) allocated; [`pools`] follows each private pool (CUDA graphs, `MemPool`)
//! over the trace; [`pinned`] sums pinned host memory (`host_segments` / `host_traces`); [`fx`]
//! reads FX-augmented frames as the model's; [`join`] joins a snapshot by time with a profile
//! of the same run.

pub mod cluster;
pub mod compare;
pub mod compiled;
pub mod fragmentation;
pub mod fx;
pub mod holder;
pub mod join;
pub mod model;
pub mod oom;
pub mod phases;
pub mod pinned;
pub mod pools;
pub mod segments;
pub mod summary;
pub mod timeline;
pub mod unpickle;

pub use model::{
    Action, AllocatorSnapshot, Annotation, Block, Event, Frame, Segment, SnapshotError, StackId,
};
pub use summary::{DeviceSummary, SnapshotSummary, StackTotal, summarize_snapshot};

/// Why a snapshot is not shown.
#[derive(Debug)]
pub enum SnapshotProblem {
    /// It could not be read (the file, the pickle, or not a snapshot).
    Read(SnapshotError),
    /// Reading it failed unexpectedly (a panic in the reader's job): its message.
    Task(String),
}
