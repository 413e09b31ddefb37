//! `memsight compare A B`: the peaks of two ranks (of one profile or two), their differences,
//! and what each operator allocated on either side; two allocator snapshots go to
//! [`super::snapshot_compare`].

use std::io::Write;
use std::path::Path;

use crate::ingest::is_snapshot_path;
use crate::model::SourceChoice;
use crate::snapshot::compare::Moment;

use super::rank::load_one_of_many;
use crate::analysis::compare::not_counted_text;
use crate::analysis::{NotCounted, OperatorDelta, not_counted, operator_deltas};
use crate::export::summary::{PeakJson, Peaks, summarize};
use crate::model::Lang;
use crate::model::{MIB, RankData, bytes_to_kib};
use crate::reports::default_lang;

/// Bytes as MiB.
fn mib(b: i64) -> f64 {
    b as f64 / MIB as f64
}

/// Which ranks to compare.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct CompareArgs {
    /// Rank of A (default: its device rank with the highest peak).
    #[arg(long, allow_hyphen_values = true)]
    pub rank_a: Option<String>,
    /// Rank of B (default: its device rank with the highest peak).
    #[arg(long, allow_hyphen_values = true)]
    pub rank_b: Option<String>,
    /// How many operators the text output lists.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Two allocator snapshots: where A is read (`peak`, `end` or an event index).
    #[arg(long, default_value = "peak")]
    pub at_a: Moment,
    /// Two allocator snapshots: where B is read (`peak`, `end` or an event index).
    #[arg(long, default_value = "peak")]
    pub at_b: Moment,
    /// Two allocator snapshots: the device compared (default: each one's OOM device, else its
    /// first device with events).
    #[arg(long)]
    pub device: Option<i64>,
    /// The text's language for two profiles (the JSON has none): en or zh; default the
    /// locale's (LC_ALL, LC_MESSAGES, LANG). Two snapshots compare in English.
    #[arg(long, value_parser = crate::reports::parse_lang)]
    pub lang: Option<Lang>,
}

/// Runs `compare`; returns the exit code.
pub fn compare(
    a: &Path,
    b: &Path,
    source: SourceChoice,
    args: &CompareArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let snapshot = |p: &Path| p.is_file() && is_snapshot_path(p);
    match (snapshot(a), snapshot(b)) {
        (true, true) => return super::finish(super::snapshot_compare::run(a, b, args, out), err),
        (false, false) => {}
        _ => {
            return super::finish(
                Err("compare takes two profiles or two allocator snapshots (.pickle), not one of each".into()),
                err,
            );
        }
    }
    if args.at_a != Moment::Peak || args.at_b != Moment::Peak || args.device.is_some() {
        return super::finish(
            Err("--at-a, --at-b and --device are for two allocator snapshots; for profiles, choose ranks with --rank-a and --rank-b".into()),
            err,
        );
    }
    let mut run = || -> Result<(), String> {
        let lang = args.lang.unwrap_or_else(default_lang);
        let (da, _) = load_one_of_many(a, args.rank_a.as_deref(), source, lang, err)?;
        let (db, _) = load_one_of_many(b, args.rank_b.as_deref(), source, lang, err)?;
        let text = if args.json {
            format!("{}\n", compare_json(a, &da, b, &db))
        } else {
            compare_text(&da, &db, args.top, lang)
        };
        out.write_all(text.as_bytes()).map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}

/// `b − a` of two optional peaks, MiB.
fn delta(a: Option<PeakJson>, b: Option<PeakJson>) -> Option<f64> {
    Some(b?.mib - a?.mib)
}

/// The `--json` document (its field names are a contract).
pub fn compare_json(pa: &Path, a: &RankData, pb: &Path, b: &RankData) -> serde_json::Value {
    let (sa, sb) = (summarize(a), summarize(b));
    let side = |p: &Path, d: &RankData, peaks: &Peaks| serde_json::json!({"path": p.display().to_string(), "rank": d.info.rank, "peaks": peaks});
    let ops: Vec<serde_json::Value> = operator_deltas(a, b)
        .iter()
        .map(|d: &OperatorDelta| {
            serde_json::json!({
                "name": d.name,
                "a_kib": bytes_to_kib(d.a_bytes),
                "b_kib": bytes_to_kib(d.b_bytes),
                "delta_kib": bytes_to_kib(d.delta()),
                "a_blocks": d.a_blocks,
                "b_blocks": d.b_blocks,
                "a_at_peak_mib": mib(d.a_peak_live),
                "b_at_peak_mib": mib(d.b_peak_live),
                "delta_at_peak_mib": mib(d.delta_at_peak()),
            })
        })
        .collect();
    serde_json::json!({
        "a": side(pa, a, &sa.peaks),
        "b": side(pb, b, &sb.peaks),
        "delta": {
            "operator_allocated_mib": delta(sa.peaks.operator_allocated, sb.peaks.operator_allocated),
            "operator_reserved_mib": delta(sa.peaks.operator_reserved, sb.peaks.operator_reserved),
            "app_reserved_mib": delta(sa.peaks.app_reserved, sb.peaks.app_reserved),
        },
        "by_operator": ops,
        "not_counted": {"a": not_counted_json(not_counted(a)), "b": not_counted_json(not_counted(b))},
    })
}

/// Rows left out of `by_operator` (negative sizes: releases of memory allocated before
/// profiling), as `{"rows", "kib"}`.
fn not_counted_json(n: NotCounted) -> serde_json::Value {
    serde_json::json!({"rows": n.rows, "kib": bytes_to_kib(n.bytes)})
}

/// Peak deltas, then the operators that explain the peak's change first, as an aligned table,
/// in `lang`.
pub fn compare_text(a: &RankData, b: &RankData, top: usize, lang: Lang) -> String {
    let (sa, sb) = (summarize(a), summarize(b));
    let (ra, rb) = (&a.info.rank, &b.info.rank);
    let mut text = match lang {
        Lang::En => format!("A: rank {ra}    B: rank {rb}\n"),
        Lang::Zh => format!("比较 A：rank {ra}    B：rank {rb}\n"),
    };
    for (label, x, y) in [
        (
            "Operator Allocated",
            sa.peaks.operator_allocated,
            sb.peaks.operator_allocated,
        ),
        (
            "Operator Reserved",
            sa.peaks.operator_reserved,
            sb.peaks.operator_reserved,
        ),
        ("APP Reserved", sa.peaks.app_reserved, sb.peaks.app_reserved),
    ] {
        let f = |p: Option<PeakJson>| p.map_or("-".to_string(), |p| format!("{:.2}", p.mib));
        let d = match (x, y) {
            (Some(x), Some(y)) => {
                let pct = crate::model::percent_change(x.mib, y.mib)
                    .map_or_else(String::new, |p| format!(" ({p:+.1}%)"));
                format!("{:+.2} MB{pct}", y.mib - x.mib)
            }
            _ => "-".into(),
        };
        let (x, y) = (f(x), f(y));
        text.push_str(&match lang {
            Lang::En => format!("peak {label:<19} A {x:>10}  B {y:>10}  {d}\n"),
            Lang::Zh => format!("峰值 {label:<19} A {x:>10}  B {y:>10}  {d}\n"),
        });
    }
    let rows: Vec<Vec<String>> = operator_deltas(a, b)
        .iter()
        .take(top)
        .map(|d| {
            vec![
                d.name.clone(),
                format!("{:.1}", bytes_to_kib(d.a_bytes)),
                format!("{:.1}", bytes_to_kib(d.b_bytes)),
                format!("{:+.1}", bytes_to_kib(d.delta())),
                d.a_blocks.to_string(),
                d.b_blocks.to_string(),
                format!("{:.2}", mib(d.a_peak_live)),
                format!("{:.2}", mib(d.b_peak_live)),
                format!("{:+.2}", mib(d.delta_at_peak())),
            ]
        })
        .collect();
    let header = crate::analysis::compare::delta_headers(lang);
    text.push('\n');
    text.push_str(&super::text_table(&header, &rows));
    let kb = |b: i64| format!("{:.1}", bytes_to_kib(b));
    if let Some(line) = not_counted_text(not_counted(a), not_counted(b), lang, &kb) {
        text.push('\n');
        text.push_str(&line);
        text.push('\n');
    }
    text
}
