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

    /// Sorts shared samples by time ([`Self::sort_by_time`]), copying them only when they are
    /// out of order and shared.
    pub fn sort_shared(this: &mut std::sync::Arc<Self>) {
        if !this.time_ns.is_sorted() {
            std::sync::Arc::make_mut(this).sort_by_time();
        }
    }

    /// Sorts the samples by time (stable). Samples already in order (as most sources write
    /// them) are left as they are: no copy of a curve of millions of samples.
    pub fn sort_by_time(&mut self) {
        if self.time_ns.is_sorted() {
            return;
        }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Samples out of order are sorted by time, equal times in the order they came; samples
    /// in order stay as they are.
    #[test]
    fn device_samples_sort_stably_by_time() {
        let mut d = DeviceMemory {
            time_ns: vec![30, 10, 20, 10],
            bytes: vec![1, 2, 3, 4],
        };
        d.sort_by_time();
        assert_eq!(d.time_ns, [10, 10, 20, 30]);
        assert_eq!(d.bytes, [2, 4, 3, 1]);
        let sorted = d.clone();
        d.sort_by_time();
        assert_eq!(d, sorted);
    }

    /// Shared samples in order are not copied to be sorted; shared samples out of order are
    /// sorted in a copy, the other holder's left as they were.
    #[test]
    fn shared_samples_are_copied_only_when_out_of_order() {
        use std::sync::Arc;
        let mut a = Arc::new(DeviceMemory {
            time_ns: vec![1, 2],
            bytes: vec![5, 6],
        });
        let first_look = Arc::clone(&a);
        DeviceMemory::sort_shared(&mut a);
        assert!(Arc::ptr_eq(&a, &first_look));
        let mut b = Arc::new(DeviceMemory {
            time_ns: vec![2, 1],
            bytes: vec![6, 5],
        });
        let held = Arc::clone(&b);
        DeviceMemory::sort_shared(&mut b);
        assert_eq!(
            (b.time_ns.as_slice(), b.bytes.as_slice()),
            (&[1, 2][..], &[5, 6][..])
        );
        assert_eq!(held.time_ns, [2, 1]);
    }
}
