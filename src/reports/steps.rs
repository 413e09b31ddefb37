//! `memsight steps`: each training step's peak, end value and survivors, and whether memory grows
//! from step to step.

use crate::model::plural::count;

use super::{RankInput, RankReport};
use crate::analysis::StepReport;
use crate::model::{Lang, RankData, bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Options of `steps`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct StepsArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = super::parse_lang)]
    pub lang: Option<Lang>,
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

    fn text(a: &StepsAnswer<'_>, lang: Lang) -> String {
        steps_text(a.data, a.report, lang)
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
pub fn steps_text(data: &RankData, report: &StepReport, lang: Lang) -> String {
    let zh = lang == Lang::Zh;
    let rank = &data.info.rank;
    let Some(src) = &data.steps else {
        return if zh {
            format!(
                "rank {rank}：没有记录迭代（没有 STEP_TIME，trace_view.json 中没有 ProfilerStep#N，kernel_details.csv 中没有 Step Id）\n"
            )
        } else {
            format!(
                "rank {rank}: no steps recorded (no STEP_TIME, no ProfilerStep#N in trace_view.json, no Step Id in kernel_details.csv)\n"
            )
        };
    };
    let mib = |v: Option<i64>| v.map_or("-".to_string(), |b| format!("{:.2}", bytes_to_mib(b)));
    let ms = |t: i64| format!("{:.3}", ns_to_ms(t));
    let header = if zh {
        [
            "迭代",
            "开始(ms)",
            "结束(ms)",
            "时长(ms)",
            "峰值 Allocated(MB)",
            "峰值时间(ms)",
            "结束时 Allocated(MB)",
            "变化(MB)",
            "存活块",
            "存活(MB)",
        ]
    } else {
        [
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
        ]
    };
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
    let (n, source) = (report.steps.len(), src.source.as_str());
    let mut text = if zh {
        format!("rank {rank}：{n} 个迭代（来自 {source}）\n")
    } else {
        format!(
            "rank {rank}: {} (from {source})\n",
            count(n as u64, "step", "steps")
        )
    };
    text.push_str(&super::text::text_table(&header, &rows));
    for g in &report.growth {
        let (rises, from, to, mb) = (
            g.rises(),
            report.steps[g.from].step.id,
            report.steps[g.to].step.id,
            bytes_to_mib(g.bytes),
        );
        text.push_str(&if zh {
            format!(
                "\n可能泄漏：迭代结束时的 Operator Allocated 连续 {rises} 个迭代上升（#{from} → #{to}，{mb:+.2} MB）\n仍存活、在这些迭代中分配的内存，按算子：\n"
            )
        } else {
            format!(
                "\npossible leak: end-of-step Operator Allocated rose {rises} steps in a row (#{from} → #{to}, {mb:+.2} MB)\nstill alive, allocated in those steps, by operator:\n"
            )
        });
        for &(n, b, c) in g.operators.iter().take(10) {
            let blocks = if zh {
                format!("{c} 个内存块")
            } else {
                count(c as u64, "block", "blocks")
            };
            text.push_str(&format!(
                "  {} {:>10.2} MB  {blocks}\n",
                super::text::pad_end(data.display_name(n), 40),
                bytes_to_mib(b),
            ));
        }
    }
    text
}
