//! The per-rank summary behind `memsight inspect` (the JSON shape is a public contract).

use crate::model::plural::count;
use serde::Serialize;

use crate::analysis::{GroupBy, OverallCurve, series_peaks};
use crate::model::{RankData, RankInfo, bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Row counts per input file.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Counts {
    /// memory_record rows (DB: MEMORY_RECORD rows; NPU_MEM APP samples not counted).
    pub memory_record: u64,
    /// operator_memory rows.
    pub operator_memory: u64,
    /// npu_module_mem rows.
    pub npu_module_mem: u64,
    /// static_op_mem rows.
    pub static_op_mem: u64,
    /// Rows skipped over all files of the rank.
    pub skipped_rows: u64,
}

/// A peak as JSON: MiB and ms from the rank origin.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct PeakJson {
    /// Peak, MiB.
    pub mib: f64,
    /// When first reached, ms from the time origin.
    pub at_ms: f64,
}

/// The Overall peaks; `None` (JSON null) when the curve does not exist.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Peaks {
    /// Operator Allocated.
    pub operator_allocated: Option<PeakJson>,
    /// Operator Reserved.
    pub operator_reserved: Option<PeakJson>,
    /// Operator Activated.
    pub operator_activated: Option<PeakJson>,
    /// APP Reserved.
    pub app_reserved: Option<PeakJson>,
}

/// The largest operator_memory block.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Largest {
    /// Operator name.
    pub name: String,
    /// Size, KiB.
    pub size_kib: f64,
}

/// How many steps a rank records, and from where.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StepsJson {
    /// `db`, `trace_view` or `kernel_details`.
    pub source: String,
    /// Number of steps.
    pub count: usize,
}

/// What the call stacks cover: how many allocations were matched to a host op and a stack.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct StacksJson {
    /// `db` or `trace_view`.
    pub source: String,
    /// Host ops read.
    pub host_ops: usize,
    /// Distinct call stacks.
    pub stacks: usize,
    /// Allocations matched to a host op and a stack.
    pub attributed: usize,
    /// Allocations matched to an op with no known stack.
    pub without_stack: usize,
    /// Allocations no host op was running for.
    pub unattributed: usize,
}

/// One rank of `inspect --json`.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RankSummary {
    /// Rank id.
    pub rank: String,
    /// Device id.
    pub device: Option<String>,
    /// Host name.
    pub host: Option<String>,
    /// `csv` or `db`.
    pub source: String,
    /// `torch_npu`, `mindspore` or `msprof`.
    pub format: String,
    /// The rank's folder.
    pub dir: String,
    /// Earliest timestamp, absolute ns.
    pub time_origin_ns: i64,
    /// Rows per file.
    pub counts: Counts,
    /// operator_memory rows with no release.
    pub unreleased: u64,
    /// Overall peaks.
    pub peaks: Peaks,
    /// Largest Size in operator_memory.
    pub largest_allocation: Option<Largest>,
    /// Training steps recorded (`memsight steps` gives their figures), when any.
    pub steps: Option<StepsJson>,
    /// Call stacks (`memsight stacks` aggregates them), when the profile recorded host ops.
    pub stacks: Option<StacksJson>,
    /// Load warnings and skipped-row reports (printed in English; the UI shows its language).
    pub warnings: Vec<crate::model::Message>,
}

/// Summarises a loaded rank.
pub fn summarize(data: &RankData) -> RankSummary {
    let peaks = series_peaks(data, GroupBy::Overall);
    let peak_of = |curve: OverallCurve| {
        let found = peaks.iter().find(|(name, _)| name == curve.label());
        found.map(|&(_, p)| PeakJson {
            mib: bytes_to_mib(p.value),
            at_ms: ns_to_ms(p.time),
        })
    };
    let ops = &data.operators;
    let mut largest: Option<usize> = None;
    for i in 0..ops.len() {
        if largest.is_none_or(|j| ops.size[i] > ops.size[j]) {
            largest = Some(i);
        }
    }
    let info = &data.info;
    RankSummary {
        counts: Counts {
            memory_record: data.memory_record_rows as u64,
            operator_memory: ops.len() as u64,
            npu_module_mem: data.modules.len() as u64,
            static_op_mem: data.static_ops.len() as u64,
            skipped_rows: data.report.skipped_rows(),
        },
        unreleased: ops.unreleased_count() as u64,
        peaks: Peaks {
            operator_allocated: peak_of(OverallCurve::OperatorAllocated),
            operator_reserved: peak_of(OverallCurve::OperatorReserved),
            operator_activated: peak_of(OverallCurve::OperatorActivated),
            app_reserved: peak_of(OverallCurve::AppReserved),
        },
        largest_allocation: largest.map(|i| Largest {
            name: data.strings.get(ops.name[i]).to_string(),
            size_kib: bytes_to_kib(ops.size[i]),
        }),
        steps: data.steps.as_ref().map(|s| StepsJson {
            source: s.source.as_str().to_string(),
            count: s.steps.len(),
        }),
        stacks: data.stacks.as_ref().map(|s| StacksJson {
            source: s.source.as_str().to_string(),
            host_ops: s.host_ops,
            stacks: s.stacks.len(),
            attributed: s.row_op.len() - s.unattributed - s.without_stack,
            without_stack: s.without_stack,
            unattributed: s.unattributed,
        }),
        warnings: data.report.all_notes(),
        time_origin_ns: data.time_origin_ns,
        ..identity(info)
    }
}

/// The identity part of a summary, for ranks that failed to load too.
pub fn identity(info: &RankInfo) -> RankSummary {
    RankSummary {
        rank: info.rank.clone(),
        device: info.device.clone(),
        host: info.host.clone(),
        source: info.source.kind().to_string(),
        format: info.format.as_str().to_string(),
        dir: info.dir.display().to_string(),
        time_origin_ns: 0,
        counts: Counts {
            memory_record: 0,
            operator_memory: 0,
            npu_module_mem: 0,
            static_op_mem: 0,
            skipped_rows: 0,
        },
        unreleased: 0,
        peaks: Peaks {
            operator_allocated: None,
            operator_reserved: None,
            operator_activated: None,
            app_reserved: None,
        },
        largest_allocation: None,
        steps: None,
        stacks: None,
        warnings: Vec::new(),
    }
}

/// The readable form of one summary.
pub fn render_text(s: &RankSummary) -> String {
    use std::fmt::Write as _;
    let mut out = String::new();
    let host = s
        .host
        .as_deref()
        .map_or(String::new(), |h| format!(" · host {h}"));
    let device = s.device.as_deref().map_or(String::new(), |d| {
        format!(" · {}", crate::model::device_label(d))
    });
    // An imported source is its own format: named once (`pytorch_trace`, not twice).
    let read_as = if s.format == s.source {
        s.format.clone()
    } else {
        format!("{} {}", s.format, s.source)
    };
    let _ = writeln!(out, "rank {}{device}{host} · {read_as} · {}", s.rank, s.dir);
    let c = &s.counts;
    let _ = writeln!(
        out,
        "  rows: memory_record {}, operator_memory {}, npu_module_mem {}, static_op_mem {}, skipped {}",
        c.memory_record, c.operator_memory, c.npu_module_mem, c.static_op_mem, c.skipped_rows
    );
    let p = &s.peaks;
    for (curve, v) in [
        (OverallCurve::OperatorAllocated, p.operator_allocated),
        (OverallCurve::OperatorReserved, p.operator_reserved),
        (OverallCurve::OperatorActivated, p.operator_activated),
        (OverallCurve::AppReserved, p.app_reserved),
    ] {
        let label = curve.label();
        if let Some(v) = v {
            let _ = writeln!(
                out,
                "  peak {label:<19} {:>12.2} MB at {:.3} ms",
                v.mib, v.at_ms
            );
        }
    }
    let _ = writeln!(out, "  unreleased blocks: {}", s.unreleased);
    if let Some(l) = &s.largest_allocation {
        let _ = writeln!(
            out,
            "  largest allocation: {} ({:.1} KB)",
            if l.name.is_empty() {
                "Unknown"
            } else {
                &l.name
            },
            l.size_kib
        );
    }
    if let Some(st) = &s.steps {
        let _ = writeln!(
            out,
            "  steps: {} (from {}; memsight steps for each one)",
            st.count, st.source
        );
    }
    if let Some(st) = &s.stacks {
        let _ = writeln!(
            out,
            "  call stacks: {} of {} attributed ({} from {}; \
             {} with no stack, {} outside any host op; memsight stacks to aggregate)",
            st.attributed,
            count(c.operator_memory, "allocation", "allocations"),
            count(st.stacks as u64, "distinct stack", "distinct stacks"),
            st.source,
            st.without_stack,
            st.unattributed
        );
    }
    for w in &s.warnings {
        let _ = writeln!(out, "  warning: {w}");
    }
    out
}
