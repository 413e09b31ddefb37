//! `memsight steps`: each training step's peak, end value and survivors, and whether memory grows
//! from step to step.

use crate::model::plural::count;

use super::{RankInput, RankReport};
use crate::analysis::StepReport;
use crate::model::{RankData, bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Options of `steps`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StepsArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
}

/// Each training step: peak, end value, survivors; and whether memory grows step over step.
pub struct Steps;

/// The steps of one rank.
pub struct StepsAnswer<'a> {
    data: &'a RankData,
    report: &'a StepReport,
}

impl RankReport for Steps {
    type Args = StepsArgs;
    type Answer<'a> = StepsAnswer<'a>;

    fn compute<'a>(input: &RankInput<'a>, _args: &StepsArgs) -> Result<StepsAnswer<'a>, String> {
        Ok(StepsAnswer {
            data: &input.view.data,
            report: input.view.steps(),
        })
    }

    fn json(a: &StepsAnswer<'_>) -> serde_json::Value {
        steps_json(a.data, a.report)
    }

    fn text(a: &StepsAnswer<'_>, _lang: crate::model::Lang) -> String {
        steps_text(a.data, a.report)
    }
}

/// The `--json` document (field names are a contract: scripts and tests read them).
pub fn steps_json(data: &RankData, report: &StepReport) -> serde_json::Value {
    let ms = |t: i64| ns_to_ms(t);
    let steps: Vec<serde_json::Value> = report
        .steps
        .iter()
        .map(|s| {
            serde_json::json!({
                "id": s.step.id,
                "start_ms": ms(s.start),
                "end_ms": ms(s.end),
                "peak_allocated_mib": s.peak_allocated.map(|p| bytes_to_mib(p.0)),
                "peak_at_ms": s.peak_allocated.map(|p| ms(p.1)),
                "peak_reserved_mib": s.peak_reserved.map(|p| bytes_to_mib(p.0)),
                "peak_app_reserved_mib": s.peak_app.map(|p| bytes_to_mib(p.0)),
                "end_allocated_mib": s.end_allocated.map(bytes_to_mib),
                "change_mib": s.change.map(bytes_to_mib),
                "survivors": {"count": s.survivors.len(), "kib": bytes_to_kib(s.survivor_bytes)},
            })
        })
        .collect();
    let growth: Vec<serde_json::Value> = report
        .growth
        .iter()
        .map(|g| {
            serde_json::json!({
                "from_step": report.steps[g.from].step.id,
                "to_step": report.steps[g.to].step.id,
                "rises": g.rises(),
                "mib": bytes_to_mib(g.bytes),
                "operators": g.operators.iter().take(10).map(|&(n, b, c)| serde_json::json!({
                    "name": data.display_name(n), "mib": bytes_to_mib(b), "blocks": c,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    serde_json::json!({
        "rank": data.info.rank,
        "source": data.steps.as_ref().map(|s| s.source.as_str()),
        "steps": steps,
        "growth": growth,
    })
}

/// The aligned text table and, when memory grows, the operators behind it.
pub fn steps_text(data: &RankData, report: &StepReport) -> String {
    let Some(src) = &data.steps else {
        return format!(
            "rank {}: no steps recorded (no STEP_TIME, no ProfilerStep#N in trace_view.json, no Step Id in kernel_details.csv)\n",
            data.info.rank
        );
    };
    let mib = |v: Option<i64>| v.map_or("-".to_string(), |b| format!("{:.2}", bytes_to_mib(b)));
    let ms = |t: i64| format!("{:.3}", ns_to_ms(t));
    let header = [
        "Step",
        "Start(ms)",
        "End(ms)",
        "Duration(ms)",
        "Peak Allocated(MB)",
        "Peak at(ms)",
        "End Allocated(MB)",
        "Change(MB)",
        "Survivors",
        "Survivors(MB)",
    ];
    let mut rows: Vec<Vec<String>> = Vec::with_capacity(report.steps.len());
    for s in &report.steps {
        rows.push(vec![
            format!("#{}", s.step.id),
            ms(s.start),
            ms(s.end),
            ms(s.end.saturating_sub(s.start)),
            mib(s.peak_allocated.map(|p| p.0)),
            s.peak_allocated.map_or("-".into(), |p| ms(p.1)),
            mib(s.end_allocated),
            s.change
                .map_or("-".into(), |c| format!("{:+.2}", bytes_to_mib(c))),
            s.survivors.len().to_string(),
            mib(Some(s.survivor_bytes)),
        ]);
    }
    let mut text = format!(
        "rank {}: {} (from {})\n",
        data.info.rank,
        count(report.steps.len() as u64, "step", "steps"),
        src.source.as_str()
    );
    text.push_str(&super::text::text_table(&header, &rows));
    for g in &report.growth {
        text.push_str(&format!(
            "\npossible leak: end-of-step Operator Allocated rose {} steps in a row (#{} → #{}, {:+.2} MB)\n",
            g.rises(),
            report.steps[g.from].step.id,
            report.steps[g.to].step.id,
            bytes_to_mib(g.bytes)
        ));
        text.push_str("still alive, allocated in those steps, by operator:\n");
        for &(n, b, c) in g.operators.iter().take(10) {
            text.push_str(&format!(
                "  {} {:>10.2} MB  {}\n",
                super::text::pad_end(data.display_name(n), 40),
                bytes_to_mib(b),
                count(c as u64, "block", "blocks")
            ));
        }
    }
    text
}
