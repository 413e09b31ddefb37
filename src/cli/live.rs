//! `memsight live`: what is alive at a time, largest first, and the totals per operator.

use crate::model::plural::count;
use std::io::Write;
use std::path::Path;

use crate::model::SourceChoice;

use super::rank::{load_one, ms_to_ns};
use crate::analysis::{GroupBy, LiveIndex, OverallCurve, Series, build_series, held_at, live_at};
use crate::model::{bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Options of `live`.
#[derive(Debug, Clone, clap::Args)]
pub struct LiveArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// The time, ms from the rank's time origin.
    #[arg(long, allow_negative_numbers = true)]
    pub at_ms: f64,
    /// How many blocks and operators to list.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Runs `live`; returns the exit code.
pub fn live(
    path: &Path,
    source: SourceChoice,
    args: &LiveArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let (rank, at_ms, top, json) = (args.rank.as_deref(), args.at_ms, args.top, args.json);
    let mut run = || -> Result<(), String> {
        let t = ms_to_ns(at_ms, "--at-ms")?;
        let data = load_one(path, rank, source, err)?;
        let index = LiveIndex::new(&data);
        let live = live_at(&data, &index, t);
        let ops = &data.operators;
        let name = |id: u32| data.display_name(id);
        let io = |e: std::io::Error| e.to_string();
        // Where the memory is at that time: the Overall curves' held values, and the part of
        // Operator Allocated that the live blocks do not explain.
        let overall = build_series(&data, GroupBy::Overall);
        let curve = |name: &str| -> Option<i64> {
            overall
                .iter()
                .find(|s: &&Series| s.name == name)
                .and_then(|s| held_at(s, t))
        };
        let mib = |v: Option<i64>| v.map(bytes_to_mib);
        let allocated = curve(OverallCurve::OperatorAllocated.label());
        if json {
            let blocks: Vec<serde_json::Value> = live
                .rows
                .iter()
                .take(top)
                .map(|&r| {
                    let r = r as usize;
                    let mut item = serde_json::json!({
                        "name": name(ops.name[r]),
                        "size_kib": bytes_to_kib(ops.size[r]),
                        "allocated_ms": (ops.alloc_time[r] != crate::model::NULL).then(|| ns_to_ms(data.rel_ns(ops.alloc_time[r]))),
                        "released_ms": (ops.release_time[r] != crate::model::NULL).then(|| ns_to_ms(data.rel_ns(ops.release_time[r]))),
                    });
                    // Who allocated it, when the profile recorded call stacks.
                    if let Some(s) = &data.stacks {
                        let frames = s.row_frames(r);
                        if !frames.is_empty() {
                            item["stack"] = serde_json::json!(frames);
                        }
                        if let Some(op) = s.row_op_name(r) {
                            item["host_op"] = serde_json::json!(op);
                        }
                    }
                    item
                })
                .collect();
            let by_name: Vec<serde_json::Value> = live
                .by_name
                .iter()
                .take(top)
                .map(|&(id, bytes, n)| serde_json::json!({"name": name(id), "mib": bytes_to_mib(bytes), "blocks": n}))
                .collect();
            let doc = serde_json::json!({
                "rank": &data.info.rank, "at_ms": at_ms, "blocks": live.rows.len(), "total_mib": bytes_to_mib(live.total),
                "largest": blocks, "by_operator": by_name,
                "curve_allocated_mib": mib(allocated),
                "blocks_mib": bytes_to_mib(live.total),
                "unattributed_mib": mib(allocated.map(|a| a.saturating_sub(live.total))),
                "reserved_mib": mib(curve(OverallCurve::OperatorReserved.label())),
                "app_reserved_mib": mib(curve(OverallCurve::AppReserved.label())),
                "workspace_mib": mib(curve("Workspace Reserved")),
                // The device's total over all processes (trace_view's NPU MEM Device/* or the
                // DB's NPU_MEM device rows), null when the data has none.
                "device_mib": mib(data.device_memory.held_at(data.time_origin_ns.saturating_add(t))),
            });
            writeln!(out, "{doc}").map_err(io)?;
        } else {
            writeln!(
                out,
                "alive at {at_ms} ms: {}, {:.2} MB",
                count(live.rows.len() as u64, "block", "blocks"),
                bytes_to_mib(live.total)
            )
            .map_err(io)?;
            // The curve at that time, and what of it no live block explains: memory allocated
            // before profiling began, or by blocks the profile did not record.
            if let Some(a) = allocated {
                writeln!(
                    out,
                    "Operator Allocated at {at_ms} ms: {:.2} MB; not in any live block: {:.2} MB \
                     (allocated before profiling began, or not recorded)",
                    bytes_to_mib(a),
                    bytes_to_mib(a.saturating_sub(live.total))
                )
                .map_err(io)?;
            }
            if let Some(r) = curve(OverallCurve::OperatorReserved.label()) {
                writeln!(
                    out,
                    "Operator Reserved at {at_ms} ms: {:.2} MB",
                    bytes_to_mib(r)
                )
                .map_err(io)?;
            }
            writeln!(
                out,
                "\nlargest blocks\nName\tSize(KB)\tAllocation Time(ms)\tRelease Time(ms)"
            )
            .map_err(io)?;
            for &r in live.rows.iter().take(top) {
                let r = r as usize;
                let cell = |c| crate::export::cell_text(&data, r, c);
                use crate::analysis::Column as C;
                writeln!(
                    out,
                    "{}\t{}\t{}\t{}",
                    name(ops.name[r]),
                    cell(C::Size),
                    cell(C::AllocationTime),
                    cell(C::ReleaseTime)
                )
                .map_err(io)?;
            }
            writeln!(out, "\nby operator\nName\tTotal(MB)\tBlocks").map_err(io)?;
            for &(id, bytes, n) in live.by_name.iter().take(top) {
                writeln!(out, "{}\t{:.2}\t{n}", name(id), bytes_to_mib(bytes)).map_err(io)?;
            }
        }
        Ok(())
    };
    super::finish(run(), err)
}
