//! `memsight live`: what is alive at a time, largest first, and the totals per operator.

use crate::model::plural::count;

use super::{RankInput, RankReport, ms_to_ns};
use crate::analysis::{LiveAt, OverallCurve, held_at, live_at};
use crate::model::{Lang, RankData, bytes_to_kib, bytes_to_mib, ns_to_ms};

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
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = super::parse_lang)]
    pub lang: Option<Lang>,
}

/// What is alive at a time: the largest blocks and the totals per operator.
pub struct Live;

/// What is alive on one rank at one time, and the curves' values there.
pub struct LiveAnswer<'a> {
    data: &'a RankData,
    /// The time asked, ms, as given.
    at_ms: f64,
    /// The same, ns from the rank's origin.
    t: i64,
    top: usize,
    live: LiveAt,
    /// The Overall curves' values held at `t`.
    allocated: Option<i64>,
    reserved: Option<i64>,
    app_reserved: Option<i64>,
    workspace: Option<i64>,
}

impl RankReport for Live {
    type Args = LiveArgs;
    type Answer<'a> = LiveAnswer<'a>;

    fn check(args: &LiveArgs) -> Result<(), String> {
        ms_to_ns(args.at_ms, "--at-ms").map(drop)
    }

    fn compute<'a>(input: &RankInput<'a>, args: &LiveArgs) -> Result<LiveAnswer<'a>, String> {
        let t = ms_to_ns(args.at_ms, "--at-ms")?;
        let view = input.view;
        let data = &view.data;
        // Where the memory is at that time: the Overall curves' held values.
        let overall = view.overall_series();
        let curve = |name: &str| -> Option<i64> {
            overall
                .iter()
                .find(|s| s.name == name)
                .and_then(|s| held_at(s, t))
        };
        Ok(LiveAnswer {
            data,
            at_ms: args.at_ms,
            t,
            top: args.top,
            live: live_at(data, view.live_index(), t),
            allocated: curve(OverallCurve::OperatorAllocated.label()),
            reserved: curve(OverallCurve::OperatorReserved.label()),
            app_reserved: curve(OverallCurve::AppReserved.label()),
            workspace: curve("Workspace Reserved"),
        })
    }

    fn json(a: &LiveAnswer<'_>) -> serde_json::Value {
        let (data, live, top, at_ms, t) = (a.data, &a.live, a.top, a.at_ms, a.t);
        let ops = &data.operators;
        let name = |id: u32| data.display_name(id);
        let mib = |v: Option<i64>| v.map(bytes_to_mib);
        let allocated = a.allocated;
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
        serde_json::json!({
            "rank": &data.info.rank, "at_ms": at_ms, "blocks": live.rows.len(), "total_mib": bytes_to_mib(live.total),
            "largest": blocks, "by_operator": by_name,
            "curve_allocated_mib": mib(allocated),
            "blocks_mib": bytes_to_mib(live.total),
            "unattributed_mib": mib(allocated.map(|a| a.saturating_sub(live.total))),
            "reserved_mib": mib(a.reserved),
            "app_reserved_mib": mib(a.app_reserved),
            "workspace_mib": mib(a.workspace),
            // The device's total over all processes (trace_view's NPU MEM Device/* or the
            // DB's NPU_MEM device rows), null when the data has none.
            "device_mib": mib(data.device_memory.held_at(data.time_origin_ns.saturating_add(t))),
        })
    }

    fn text(a: &LiveAnswer<'_>, lang: Lang) -> String {
        use std::fmt::Write as _;
        let zh = lang == Lang::Zh;
        let (data, live, top, at_ms) = (a.data, &a.live, a.top, a.at_ms);
        let ops = &data.operators;
        let name = |id: u32| data.display_name(id);
        let mut s = String::new();
        let (n, total) = (live.rows.len(), bytes_to_mib(live.total));
        let _ = if zh {
            writeln!(s, "{at_ms} ms 时存活：{n} 个内存块，{total:.2} MB")
        } else {
            writeln!(
                s,
                "alive at {at_ms} ms: {}, {total:.2} MB",
                count(n as u64, "block", "blocks")
            )
        };
        // The curve at that time, and what of it no live block explains: memory allocated
        // before profiling began, or by blocks the profile did not record.
        if let Some(held) = a.allocated {
            let (held, outside) = (
                bytes_to_mib(held),
                bytes_to_mib(held.saturating_sub(live.total)),
            );
            let _ = if zh {
                writeln!(
                    s,
                    "{at_ms} ms 时 Operator Allocated：{held:.2} MB；不在任何存活内存块中：{outside:.2} MB（采集开始前分配的，或未被记录）"
                )
            } else {
                writeln!(
                    s,
                    "Operator Allocated at {at_ms} ms: {held:.2} MB; not in any live block: {outside:.2} MB (allocated before profiling began, or not recorded)"
                )
            };
        }
        if let Some(r) = a.reserved {
            let r = bytes_to_mib(r);
            let _ = if zh {
                writeln!(s, "{at_ms} ms 时 Operator Reserved：{r:.2} MB")
            } else {
                writeln!(s, "Operator Reserved at {at_ms} ms: {r:.2} MB")
            };
        }
        // The blocks' columns are Insight's (and the app's table's), in both languages.
        let _ = writeln!(
            s,
            "\n{}\nName\tSize(KB)\tAllocation Time(ms)\tRelease Time(ms)",
            if zh {
                "最大的内存块"
            } else {
                "largest blocks"
            }
        );
        for &r in live.rows.iter().take(top) {
            let r = r as usize;
            let cell = |c| crate::export::cell_text(data, r, c);
            use crate::analysis::Column as C;
            let _ = writeln!(
                s,
                "{}\t{}\t{}\t{}",
                name(ops.name[r]),
                cell(C::Size),
                cell(C::AllocationTime),
                cell(C::ReleaseTime)
            );
        }
        let _ = if zh {
            writeln!(s, "\n按算子\n名称\t合计(MB)\t块数")
        } else {
            writeln!(s, "\nby operator\nName\tTotal(MB)\tBlocks")
        };
        for &(id, bytes, n) in live.by_name.iter().take(top) {
            let _ = writeln!(s, "{}\t{:.2}\t{n}", name(id), bytes_to_mib(bytes));
        }
        s
    }
}
