//! Training steps and the device's own memory counter: what the profiler recorded besides the
//! allocator, read so the memory curves can be split by step and the device total explained.

/// Where a rank's step boundaries came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepSource {
    /// The SQLite export's `STEP_TIME` table.
    Db,
    /// `ProfilerStep#N` events (or mstx ranges of that name) in `trace_view.json`.
    TraceView,
    /// The `Step Id` column of `kernel_details.csv` (the kernels' extent per step).
    KernelDetails,
    /// A file read by an importer (`ingest::importer::Importer`), by the importer's name:
    /// `pytorch_trace` (its `ProfilerStep#N` spans), `msmemscope` (its `MSTX` ranges named
    /// `step start`). A new source names itself; nothing here changes.
    Imported(&'static str),
}

impl StepSource {
    /// The name used in `steps --json` (`"db"`, `"trace_view"`, `"kernel_details"`, or the
    /// importer's name).
    pub fn as_str(self) -> &'static str {
        match self {
            StepSource::Db => "db",
            StepSource::TraceView => "trace_view",
            StepSource::KernelDetails => "kernel_details",
            StepSource::Imported(name) => name,
        }
    }
}

/// One training step: absolute ns, `start_ns <= end_ns`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Step {
    /// The step number as the profiler wrote it (`ProfilerStep#50` → 50).
    pub id: i64,
    /// Start, absolute ns.
    pub start_ns: i64,
    /// End, absolute ns.
    pub end_ns: i64,
}

/// A rank's steps, sorted by start, with their source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Steps {
    /// Where they came from.
    pub source: StepSource,
    /// The steps, sorted by start time (then id).
    pub steps: Vec<Step>,
}

impl Steps {
    /// Sorts `steps` and drops exact duplicates of an id (keeping the union of their spans, as
    /// when a step is both a `ProfilerStep#N` op and an mstx range of the same name).
    pub fn new(source: StepSource, mut steps: Vec<Step>) -> Steps {
        steps.retain(|s| s.start_ns <= s.end_ns);
        steps.sort_by_key(|s| (s.id, s.start_ns));
        let mut merged: Vec<Step> = Vec::with_capacity(steps.len());
        for s in steps {
            match merged.last_mut() {
                Some(m) if m.id == s.id => {
                    m.start_ns = m.start_ns.min(s.start_ns);
                    m.end_ns = m.end_ns.max(s.end_ns);
                }
                _ => merged.push(s),
            }
        }
        merged.sort_by_key(|s| (s.start_ns, s.id));
        Steps {
            source,
            steps: merged,
        }
    }
}

/// The device's total memory in use over time (all processes): trace_view's `NPU MEM`
/// `Device/HBM` + `Device/DDR` counters, or the DB's `NPU_MEM` rows of type `device`.
/// Absolute ns, time-sorted; bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeviceMemory {
    /// Sample times, absolute ns.
    pub time_ns: Vec<i64>,
    /// Bytes in use on the device at that time.
    pub bytes: Vec<i64>,
}

impl DeviceMemory {
    /// True when there are no samples.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Number of samples.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// Sorts the samples by time (stable).
    pub fn sort_by_time(&mut self) {
        let mut pairs: Vec<(i64, i64)> = self
            .time_ns
            .iter()
            .copied()
            .zip(self.bytes.iter().copied())
            .collect();
        pairs.sort_by_key(|p| p.0);
        self.time_ns = pairs.iter().map(|p| p.0).collect();
        self.bytes = pairs.iter().map(|p| p.1).collect();
    }

    /// The value held at absolute time `t` (the last sample at or before it).
    pub fn held_at(&self, t: i64) -> Option<i64> {
        let i = self.time_ns.partition_point(|&x| x <= t);
        (i > 0).then(|| self.bytes[i - 1])
    }
}
