//! `memsight whatif`: the peak of a run not made (twice the micro-batch, checkpointed modules,
//! ZeRO, an offloaded optimizer), replayed from the measured one ([`crate::analysis::whatif`]).

use super::{RankInput, RankReport};
use crate::analysis::RankView;
use crate::analysis::fit::{Card, CardFrom, Fit, RESERVED_MODEL};
use crate::analysis::whatif::{Prediction, Scenario, check_levers, predict_on};
use crate::ingest::pytorch::trace::{Recorded, recorded};
use crate::model::{Lang, bytes_to_mib, ns_to_ms};

/// Options of `whatif`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WhatifArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// The micro-batch as a multiple of the profiled one (2: twice as large).
    #[arg(long, default_value_t = 1.0)]
    pub micro_batch: f64,
    /// Checkpoint the modules matching this glob: a name as the trace writes it (`Block_*`) or
    /// a class (`Block`); repeatable.
    #[arg(long)]
    pub checkpoint: Vec<String>,
    /// ZeRO stage (1: optimizer state sharded, 2: and gradients, 3: and parameters); needs
    /// --ranks.
    #[arg(long, requires = "ranks", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub zero: Option<u8>,
    /// Ranks the ZeRO stage shards over.
    #[arg(long, requires = "zero")]
    pub ranks: Option<u32>,
    /// Optimizer state on the host.
    #[arg(long)]
    pub offload_optimizer: bool,
    /// The micro-batch as a size (16), when the trace's shapes say the profiled one
    /// (record_shapes=True); instead of --micro-batch.
    #[arg(long, conflicts_with = "micro_batch")]
    pub batch_size: Option<u32>,
    /// The card's memory, GiB (default: what a PyTorch trace records of its device): the
    /// answer says whether the prediction fits and the headroom.
    #[arg(long)]
    pub capacity_gib: Option<f64>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = super::parse_lang)]
    pub lang: Option<Lang>,
}

impl WhatifArgs {
    /// The scenario the options ask for.
    pub fn scenario(&self) -> Scenario {
        Scenario {
            micro_batch: self.micro_batch,
            checkpoint: self.checkpoint.clone(),
            zero: self.zero.zip(self.ranks),
            offload_optimizer: self.offload_optimizer,
        }
    }
}

/// The card given by `--capacity-gib`, checked.
fn given_card(args: &WhatifArgs) -> Result<Option<Card>, String> {
    match args.capacity_gib {
        Some(c) => Card::given_gib(c)
            .map(Some)
            .ok_or_else(|| format!("--capacity-gib must be a positive number of GiB, got {c}")),
        None => Ok(None),
    }
}

/// The peak of a run not made, replayed from the measured one, and whether it fits the card.
pub struct Whatif;

/// A what-if replay on one rank.
pub struct WhatifAnswer<'a> {
    rank: &'a str,
    scenario: Scenario,
    prediction: Prediction,
    fit: Fit,
}

impl RankReport for Whatif {
    type Args = WhatifArgs;
    type Answer<'a> = WhatifAnswer<'a>;

    fn check(args: &WhatifArgs) -> Result<(), String> {
        // The levers first: a bad one is refused before the profile is read.
        check_levers(&args.scenario()).map_err(|e| e.to_string())?;
        given_card(args).map(drop)
    }

    fn compute<'a>(input: &RankInput<'a>, args: &WhatifArgs) -> Result<WhatifAnswer<'a>, String> {
        let mut scenario = args.scenario();
        check_levers(&scenario).map_err(|e| e.to_string())?;
        let given = given_card(args)?;
        let view = input.view;
        let data = &view.data;
        let recorded = recorded(&data.info);
        let profiled = recorded.micro_batch;
        if let Some(size) = args.batch_size {
            let Some(b) = profiled else {
                return Err(format!(
                    "rank {}: the profile does not record its micro-batch (record_shapes=True and \
                     an embedding); give --micro-batch as a multiple of the profiled one",
                    data.info.rank
                ));
            };
            scenario.micro_batch = f64::from(size) / b as f64;
            check_levers(&scenario).map_err(|e| e.to_string())?;
        }
        // Why not, in the language the text is asked in (the JSON's errors are English).
        let lang = match args.json {
            true => Lang::En,
            false => args.lang.unwrap_or_else(super::default_lang),
        };
        let prediction = predict_on(view, &scenario)
            .map_err(|e| format!("rank {}: {}", data.info.rank, e.render(lang)))?;
        let fit = fit_of(view, &prediction, given, &recorded);
        Ok(WhatifAnswer {
            rank: &data.info.rank,
            scenario,
            prediction,
            fit,
        })
    }

    fn json(a: &WhatifAnswer<'_>) -> serde_json::Value {
        json(a.rank, &a.scenario, &a.prediction, &a.fit)
    }

    fn text(a: &WhatifAnswer<'_>, lang: Lang) -> String {
        text(a.rank, &a.scenario, &a.prediction, &a.fit, lang)
    }
}

/// The fit of `p` on the rank's card: the card given, else the trace's; the reserved ratio
/// from the rank's own curves.
fn fit_of(view: &RankView, p: &Prediction, given: Option<Card>, recorded: &Recorded) -> Fit {
    Fit::on(
        view,
        p.predicted.bytes,
        given,
        recorded.card.clone(),
        recorded.micro_batch,
    )
}

/// The fit as the JSON's `fit` object.
fn fit_json(fit: &Fit) -> serde_json::Value {
    serde_json::json!({
        "capacity": fit.card.as_ref().map(|c| serde_json::json!({
            "name": c.name, "mib": bytes_to_mib(c.bytes), "from": c.from.as_str(),
        })),
        "predicted_reserved_mib": fit.reserved().map(bytes_to_mib),
        "reserved_model": RESERVED_MODEL,
        "reserved_ratio": fit.reserved_ratio,
        "headroom_mib": fit.headroom().map(bytes_to_mib),
        "fits": fit.fits(),
        "profiled_micro_batch": fit.profiled_micro_batch,
    })
}

fn json(rank: &str, s: &Scenario, p: &Prediction, fit: &Fit) -> serde_json::Value {
    let by_role: serde_json::Map<String, serde_json::Value> = p
        .by_role
        .iter()
        .map(|(r, b)| (r.as_str().to_string(), serde_json::json!(bytes_to_mib(*b))))
        .collect();
    serde_json::json!({
        "rank": rank,
        "measured": {
            "peak_mib": bytes_to_mib(p.measured.bytes),
            "at_ms": ns_to_ms(p.measured.at_ns),
        },
        "scenario": {
            "micro_batch": s.micro_batch,
            "checkpoint": s.checkpoint,
            "checkpointed_modules": p.checkpointed,
            "zero": s.zero.map(|z| z.0),
            "ranks": s.zero.map(|z| z.1),
            "offload_optimizer": s.offload_optimizer,
        },
        "predicted": {
            "peak_mib": bytes_to_mib(p.predicted.bytes),
            "at_ms": ns_to_ms(p.predicted.at_ns),
            "by_role": by_role,
        },
        "assumptions": p.assumptions.iter().map(ToString::to_string).collect::<Vec<_>>(),
        "fit": fit_json(fit),
    })
}

/// The answer as text in `lang`: each line written once in both languages, side by side.
fn text(rank: &str, s: &Scenario, p: &Prediction, fit: &Fit, lang: Lang) -> String {
    use std::fmt::Write as _;
    let zh = lang == Lang::Zh;
    let mut t = String::new();
    let change = |a: i64, b: i64| {
        crate::model::percent_change(bytes_to_mib(a), bytes_to_mib(b))
            .map_or_else(|| "–".into(), |p| format!("{p:+.1} %"))
    };
    let (peak, at) = (bytes_to_mib(p.measured.bytes), ns_to_ms(p.measured.at_ns));
    let _ = if zh {
        writeln!(t, "rank {rank}：实测峰值 {peak:.2} MB，于 {at:.3} ms")
    } else {
        writeln!(t, "rank {rank}: measured peak {peak:.2} MB at {at:.3} ms")
    };
    let mut levers = Vec::new();
    if s.micro_batch != 1.0 {
        let k = s.micro_batch;
        levers.push(match (fit.profiled_micro_batch, zh) {
            (Some(b), false) => {
                format!(
                    "micro-batch ×{k} ({} of the profiled {b})",
                    (k * b as f64).round()
                )
            }
            (Some(b), true) => {
                format!("微批大小 ×{k}（{}，采集时为 {b}）", (k * b as f64).round())
            }
            (None, false) => format!("micro-batch ×{k}"),
            (None, true) => format!("微批大小 ×{k}"),
        });
    }
    if !p.checkpointed.is_empty() {
        let modules = p.checkpointed.join(", ");
        levers.push(if zh {
            format!("激活重计算 {modules}")
        } else {
            format!("checkpoint {modules}")
        });
    }
    if let Some((stage, ranks)) = s.zero {
        levers.push(if zh {
            format!("ZeRO-{stage}（{ranks} 个 rank）")
        } else {
            format!("ZeRO-{stage} over {ranks} ranks")
        });
    }
    if s.offload_optimizer {
        levers.push(
            if zh {
                "优化器状态 offload 到主机"
            } else {
                "optimizer offloaded"
            }
            .into(),
        );
    }
    if levers.is_empty() {
        levers.push(
            if zh {
                "与采集时相同"
            } else {
                "as profiled"
            }
            .into(),
        );
    }
    let (then, then_at, delta) = (
        bytes_to_mib(p.predicted.bytes),
        ns_to_ms(p.predicted.at_ns),
        change(p.measured.bytes, p.predicted.bytes),
    );
    let _ = if zh {
        writeln!(
            t,
            "预测（{}）：{then:.2} MB，于 {then_at:.3} ms（{delta}）",
            levers.join("；")
        )
    } else {
        writeln!(
            t,
            "predicted with {}: {then:.2} MB at {then_at:.3} ms ({delta})",
            levers.join("; ")
        )
    };
    if let Some(r) = fit.reserved() {
        let (r, ratio) = (bytes_to_mib(r), fit.reserved_ratio.unwrap_or(1.0));
        let _ = if zh {
            writeln!(
                t,
                "预测 reserved：{r:.2} MB（allocated × {ratio:.3}，即峰值处实测的 reserved / allocated）"
            )
        } else {
            writeln!(
                t,
                "predicted reserved: {r:.2} MB (allocated × {ratio:.3}, the measured reserved / allocated at the peak)"
            )
        };
    }
    match (&fit.card, fit.headroom()) {
        (Some(c), Some(h)) => {
            let cap = bytes_to_mib(c.bytes);
            let headroom = bytes_to_mib(h);
            let card = if c.name.is_empty() {
                String::new()
            } else {
                format!("{}, ", c.name)
            };
            let _ = if zh {
                let from = match c.from {
                    CardFrom::Trace => "trace 的 deviceProperties",
                    CardFrom::Given => "--capacity-gib",
                };
                let verdict = if h >= 0 { "放得下" } else { "放不下" };
                writeln!(
                    t,
                    "{verdict}：{card}{cap:.2} MB（{from}）；余量 {headroom:+.2} MB"
                )
            } else {
                let (verdict, from) = (
                    if h >= 0 { "fits" } else { "DOES NOT FIT" },
                    c.from.as_str(),
                );
                writeln!(
                    t,
                    "{verdict}: {card}{cap:.2} MB ({from}); headroom {headroom:+.2} MB"
                )
            };
        }
        _ => {
            let _ = if zh {
                writeln!(t, "卡的容量未知（采集中没有记录）：用 --capacity-gib 指定")
            } else {
                writeln!(
                    t,
                    "capacity unknown (the profile does not record it): --capacity-gib says the card's"
                )
            };
        }
    }
    let heading = if zh {
        "预测峰值处的角色"
    } else {
        "role at the predicted peak"
    };
    let _ = writeln!(t, "\n{:>12}  {heading}", "MB");
    for (r, b) in &p.by_role {
        let _ = writeln!(t, "{:>12.2}  {}", bytes_to_mib(*b), r.as_str());
    }
    let _ = writeln!(t, "{}", if zh { "\n假设：" } else { "\nassumptions:" });
    for a in &p.assumptions {
        let _ = writeln!(t, "- {}", a.render(lang, &mb));
    }
    t
}

/// A size as the text writes it: MiB with two decimals.
fn mb(bytes: i64) -> String {
    format!("{:.2} MB", bytes_to_mib(bytes))
}
