//! `memsight stacks`: memory by who allocated it (call stack, source line or host operator),
//! heaviest first, for the blocks alive at a time, allocated in a window, or all of them.

use super::{RankInput, RankReport, ms_to_ns};
use crate::analysis::live_at;
use crate::analysis::stacks::{Group, GroupKey, group_label, group_rows};
use crate::model::plural::count;
use crate::model::{CallStacks, Lang, NO_STACK, NULL, RankData, bytes_to_mib};

/// Frames printed per stack in the text output (innermost first; `--json` has them all).
const FRAMES_SHOWN: usize = 6;

/// Options of `stacks`.
#[derive(Debug, Clone, clap::Args)]
pub struct StacksArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// The blocks alive at this time (ms from the rank's origin).
    #[arg(long, allow_negative_numbers = true, conflicts_with_all = ["from_ms", "to_ms"])]
    pub at_ms: Option<f64>,
    /// With --to-ms: the blocks allocated in [FROM, TO] (ms from the origin).
    #[arg(long, allow_negative_numbers = true)]
    pub from_ms: Option<f64>,
    /// Window end, ms.
    #[arg(long, allow_negative_numbers = true)]
    pub to_ms: Option<f64>,
    /// Group by: stack (whole call stack), line (source line), op (host operator) or role
    /// (the block's role in training).
    #[arg(long, default_value = "stack", value_parser = ["stack", "line", "op", "role"])]
    pub by: String,
    /// Groups shown.
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

/// Which blocks are aggregated, in words.
enum Selection {
    All,
    AliveAt(f64),
    AllocatedIn(f64, f64),
}

/// `--at-ms`, `--from-ms` and `--to-ms` in ns, each when given.
type Times = (Option<i64>, Option<i64>, Option<i64>);

/// The arguments' times in ns (`--at-ms`, `--from-ms`, `--to-ms`), checked.
fn times(args: &StacksArgs) -> Result<Times, String> {
    let at = args.at_ms.map(|v| ms_to_ns(v, "--at-ms")).transpose()?;
    let from = args.from_ms.map(|v| ms_to_ns(v, "--from-ms")).transpose()?;
    let to = args.to_ms.map(|v| ms_to_ns(v, "--to-ms")).transpose()?;
    if let (Some(a), Some(b)) = (from, to)
        && a > b
    {
        return Err("--from-ms is after --to-ms".into());
    }
    Ok((at, from, to))
}

/// Memory by call stack, source line, host op or role.
pub struct Stacks;

impl RankReport for Stacks {
    type Args = StacksArgs;
    type Answer<'a> = Report<'a>;

    fn check(args: &StacksArgs) -> Result<(), String> {
        times(args).map(drop)
    }

    fn compute<'a>(input: &RankInput<'a>, args: &StacksArgs) -> Result<Report<'a>, String> {
        let by = GroupKey::ALL
            .into_iter()
            .find(|k| k.as_str() == args.by)
            .unwrap_or(GroupKey::Stack);
        let (at, from, to) = times(args)?;
        let data = &input.view.data;
        let dump = is_memscope_dump(data);
        let Some(stacks) = &data.stacks else {
            let why = if dump {
                "the dump has no op launches (OP_LAUNCH) and no Python call stacks (record \
                 with msMemScope's --call-stack=python, or \
                 msmemscope.config(call_stack=\"python\"); the ops come with its defaults, \
                 --events=alloc,free,launch --level=op, `0` before MindStudio 9.0.0)"
            } else {
                "the profile has no host ops (profile with with_stack=True; torch_npu writes \
                 them to trace_view.json or the DB's PYTORCH_API)"
            };
            return Err(format!("rank {}: no call stacks: {why}", data.info.rank));
        };
        if stacks.stacks.is_empty() && by != GroupKey::Operator {
            let why = if dump {
                "the dump has ops but no Python call stacks (record with msMemScope's \
                 --call-stack=python, or msmemscope.config(call_stack=\"python\")); --by op \
                 still groups by op"
            } else {
                "the profile has host ops but no call stacks (profile with with_stack=True); \
                 --by op still groups by host operator"
            };
            return Err(format!("rank {}: {why}", data.info.rank));
        }
        let (selection, rows) = select(input, at, from, to, args);
        let groups = group_rows(data, stacks, &rows, by);
        Ok(Report {
            data,
            stacks,
            by,
            selection,
            rows,
            groups,
            top: args.top,
        })
    }

    fn json(r: &Report<'_>) -> serde_json::Value {
        stacks_json(r)
    }

    fn text(r: &Report<'_>, lang: Lang) -> String {
        stacks_text(r, lang)
    }
}

/// Whether `data` is a rank of an msMemScope dump, whose ops and call stacks are recorded by
/// msMemScope's own options (the profiler's `with_stack=True` means nothing to it).
pub(super) fn is_memscope_dump(data: &RankData) -> bool {
    data.info.format == crate::model::Format::Imported(crate::ingest::msmemscope::NAME)
}

fn select(
    input: &RankInput<'_>,
    at: Option<i64>,
    from: Option<i64>,
    to: Option<i64>,
    args: &StacksArgs,
) -> (Selection, Vec<u32>) {
    let data = &input.view.data;
    let o = &data.operators;
    if let Some(t) = at {
        let mut rows = live_at(data, input.view.live_index(), t).rows;
        rows.sort_unstable();
        return (Selection::AliveAt(args.at_ms.unwrap_or(0.0)), rows);
    }
    if from.is_none() && to.is_none() {
        return (Selection::All, (0..o.len() as u32).collect());
    }
    let (a, b) = (from.unwrap_or(i64::MIN), to.unwrap_or(i64::MAX));
    let rows = (0..o.len() as u32)
        .filter(|&r| {
            let t = o.alloc_time[r as usize];
            t != NULL && (a..=b).contains(&data.rel_ns(t))
        })
        .collect();
    (
        Selection::AllocatedIn(
            args.from_ms.unwrap_or(f64::NEG_INFINITY),
            args.to_ms.unwrap_or(f64::INFINITY),
        ),
        rows,
    )
}

/// [`unknown_label`] in `lang`, for the text.
fn unknown_label_in(by: GroupKey, lang: Lang) -> &'static str {
    match (by, lang) {
        (_, Lang::En) => unknown_label(by),
        (GroupKey::Operator, Lang::Zh) => "（没有 host 算子在运行）",
        (GroupKey::Stack | GroupKey::SourceLine, Lang::Zh) => "（没有调用栈）",
        (GroupKey::Role, Lang::Zh) => "（没有角色）",
    }
}

/// The label of a group whose key is unknown.
fn unknown_label(by: GroupKey) -> &'static str {
    match by {
        GroupKey::Operator => "(no host op running)",
        GroupKey::Stack | GroupKey::SourceLine => "(no call stack)",
        GroupKey::Role => "(no role)",
    }
}

/// Everything a report prints: the rank, its stacks, the grouping, which blocks and their groups.
pub struct Report<'a> {
    data: &'a RankData,
    stacks: &'a CallStacks,
    by: GroupKey,
    selection: Selection,
    rows: Vec<u32>,
    groups: Vec<Group>,
    top: usize,
}

fn stacks_json(r: &Report<'_>) -> serde_json::Value {
    let Report {
        data,
        stacks,
        by,
        ref selection,
        ref rows,
        ref groups,
        top,
    } = *r;
    let items: Vec<serde_json::Value> = groups
        .iter()
        .take(top)
        .map(|g| {
            let mut item = serde_json::json!({
                "bytes": g.bytes,
                "mib": bytes_to_mib(g.bytes),
                "blocks": g.blocks,
                "peak_live_mib": bytes_to_mib(g.peak_live),
            });
            let known = g.key != NO_STACK;
            match by {
                GroupKey::Stack => {
                    let frames: Vec<&str> = stacks
                        .frames_of(g.key)
                        .iter()
                        .map(|&f| stacks.frames.get(f))
                        .collect();
                    item["stack"] = serde_json::json!(known.then_some(frames));
                    item["source_line"] =
                        serde_json::json!(stacks.source_line(g.key).map(|f| stacks.frames.get(f)));
                }
                GroupKey::SourceLine => {
                    item["source_line"] =
                        serde_json::json!(known.then(|| stacks.frames.get(g.key)));
                }
                GroupKey::Operator => {
                    item["op"] = serde_json::json!(known.then(|| stacks.op_names.get(g.key)));
                    item["calls"] = serde_json::json!(g.calls);
                }
                GroupKey::Role => {
                    item["role"] = serde_json::json!(group_label(stacks, GroupKey::Role, g.key));
                }
            }
            item
        })
        .collect();
    let (what, at_ms, from_ms, to_ms) = match *selection {
        Selection::All => ("all", None, None, None),
        Selection::AliveAt(t) => ("alive_at", Some(t), None, None),
        Selection::AllocatedIn(a, b) => (
            "allocated_in",
            None,
            a.is_finite().then_some(a),
            b.is_finite().then_some(b),
        ),
    };
    let bytes: i64 = groups.iter().map(|g| g.bytes).sum();
    serde_json::json!({
        "rank": data.info.rank,
        "source": stacks.source.as_str(),
        "by": by.as_str(),
        "selection": what, "at_ms": at_ms, "from_ms": from_ms, "to_ms": to_ms,
        "blocks": rows.len(),
        "mib": bytes_to_mib(bytes),
        "groups": groups.len(),
        "unattributed": stacks.unattributed,
        "without_stack": stacks.without_stack,
        "items": items,
    })
}

fn stacks_text(r: &Report<'_>, lang: Lang) -> String {
    let Report {
        data,
        stacks,
        by,
        ref selection,
        ref rows,
        ref groups,
        top,
    } = *r;
    use std::fmt::Write as _;
    let zh = lang == Lang::Zh;
    let mut out = String::new();
    let total = stacks.row_op.len();
    let (rank, source, attributed, without, outside) = (
        &data.info.rank,
        stacks.source.as_str(),
        total - stacks.unattributed - stacks.without_stack,
        stacks.without_stack,
        stacks.unattributed,
    );
    let _ = if zh {
        writeln!(
            out,
            "rank {rank}：调用栈来自 {source}：{total} 次分配中 {attributed} 次有归属，{without} 次属于没有调用栈的算子，{outside} 次不在任何 host 算子内"
        )
    } else {
        writeln!(
            out,
            "rank {rank}: call stacks from {source}: {attributed} of {} attributed, {without} to an op \
             with no stack, {outside} outside any host op",
            count(total as u64, "allocation", "allocations"),
        )
    };
    let bytes = bytes_to_mib(groups.iter().map(|g| g.bytes).sum::<i64>());
    let (n, n_groups, key) = (rows.len(), groups.len(), by.as_str());
    let _ = if zh {
        let what = match *selection {
            Selection::All => "全部内存块".to_string(),
            Selection::AliveAt(t) => format!("{t} ms 时存活的内存块"),
            Selection::AllocatedIn(a, b) => format!("在 [{a}, {b}] ms 内分配的内存块"),
        };
        writeln!(
            out,
            "{what}：{n} 个内存块，{bytes:.2} MB，按 {key} 分为 {n_groups} 组\n"
        )
    } else {
        let what = match *selection {
            Selection::All => "all blocks".to_string(),
            Selection::AliveAt(t) => format!("blocks alive at {t} ms"),
            Selection::AllocatedIn(a, b) => format!("blocks allocated in [{a}, {b}] ms"),
        };
        writeln!(
            out,
            "{what}: {}, {bytes:.2} MB, {} by {key}\n",
            count(n as u64, "block", "blocks"),
            count(n_groups as u64, "group", "groups"),
        )
    };
    let head = match (by, zh) {
        (GroupKey::Stack, false) => "stack (innermost frame first; > marks the source line)",
        (GroupKey::Stack, true) => "调用栈（最内层在前；> 标出源码行）",
        (GroupKey::SourceLine, false) => "source line",
        (GroupKey::SourceLine, true) => "源码行",
        (GroupKey::Operator, false) => "host op",
        (GroupKey::Operator, true) => "host 算子",
        (GroupKey::Role, false) => "role",
        (GroupKey::Role, true) => "角色",
    };
    let heads: [&str; 4] = if zh {
        ["MB", "块数", "存活峰值 MB", "调用次数"]
    } else {
        ["MB", "blocks", "peak live MB", "calls"]
    };
    let pad = super::text::pad_start;
    if by == GroupKey::Operator {
        let _ = writeln!(
            out,
            "{}  {}  {}  {}  {head}",
            pad(heads[0], 12),
            pad(heads[1], 8),
            pad(heads[2], 12),
            pad(heads[3], 8)
        );
    } else {
        let _ = writeln!(
            out,
            "{}  {}  {}  {head}",
            pad(heads[0], 12),
            pad(heads[1], 8),
            pad(heads[2], 12)
        );
    }
    for g in groups.iter().take(top) {
        let label = group_label(stacks, by, g.key);
        let first = match (by, &label) {
            (GroupKey::Stack, Some(_)) => String::new(),
            (_, Some(l)) => l.clone(),
            (_, None) => unknown_label_in(by, lang).to_string(),
        };
        let calls = g.calls.map_or("-".to_string(), |c| c.to_string());
        let figures = if by == GroupKey::Operator {
            format!(
                "{:>12.2}  {:>8}  {:>12.2}  {calls:>8}",
                bytes_to_mib(g.bytes),
                g.blocks,
                bytes_to_mib(g.peak_live)
            )
        } else {
            format!(
                "{:>12.2}  {:>8}  {:>12.2}",
                bytes_to_mib(g.bytes),
                g.blocks,
                bytes_to_mib(g.peak_live)
            )
        };
        if by != GroupKey::Stack || g.key == NO_STACK {
            let _ = writeln!(out, "{figures}  {first}");
            continue;
        }
        let frames = stacks.frames_of(g.key);
        let line = stacks.source_line(g.key);
        let blank = " ".repeat(figures.chars().count());
        for (i, &f) in frames.iter().take(FRAMES_SHOWN).enumerate() {
            let mark = if Some(f) == line { ">" } else { " " };
            let lead = if i == 0 {
                figures.as_str()
            } else {
                blank.as_str()
            };
            let _ = writeln!(out, "{lead} {mark}{}", stacks.frames.get(f));
        }
        let shown = frames.len().min(FRAMES_SHOWN);
        if let Some(l) = line
            && !frames[..shown].contains(&l)
        {
            let _ = writeln!(out, "{blank} >{}", stacks.frames.get(l));
        }
        if frames.len() > shown {
            let more = frames.len() - shown;
            let _ = if zh {
                writeln!(out, "{blank}  …… 另有 {more} 帧")
            } else {
                writeln!(out, "{blank}  … {more} more frames")
            };
        }
    }
    out
}
