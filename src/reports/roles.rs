//! `memsight roles`: memory by training role (input, activation, gradient, optimizer state,
//! temporaries, what was allocated before profiling) at the peak, per step and in total, and
//! what would lower the peak.

use std::sync::Arc;

use super::{RankInput, RankReport};
use crate::analysis::{Advice, Lever, RoleBytes, RoleReport, RolesAt};
use crate::model::{Lang, NULL, RankData, bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Options of `roles`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RolesArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// List every block with its role and the rule that gave it.
    #[arg(long)]
    pub blocks: bool,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = super::parse_lang)]
    pub lang: Option<Lang>,
}

/// Memory by training role at the peak, per step and in total, and what would lower the peak.
pub struct Roles;

/// The roles of one rank and the advice on them.
pub struct RolesAnswer<'a> {
    data: &'a RankData,
    report: &'a RoleReport,
    advice: Arc<Vec<Advice>>,
    blocks: bool,
}

impl RankReport for Roles {
    type Args = RolesArgs;
    type Answer<'a> = RolesAnswer<'a>;

    fn compute<'a>(input: &RankInput<'a>, args: &RolesArgs) -> Result<RolesAnswer<'a>, String> {
        let view = input.view;
        Ok(RolesAnswer {
            data: &view.data,
            report: view.roles(),
            advice: view.advice(input.parallel_ranks),
            blocks: args.blocks,
        })
    }

    fn json(a: &RolesAnswer<'_>) -> serde_json::Value {
        roles_json(a.data, a.report, &a.advice, a.blocks)
    }

    fn text(a: &RolesAnswer<'_>, lang: Lang) -> String {
        roles_text(a.data, a.report, &a.advice, a.blocks, lang)
    }
}

fn roles_of(at: &RolesAt, blocks: bool) -> Vec<serde_json::Value> {
    at.roles
        .iter()
        .map(|r| {
            if blocks {
                serde_json::json!({"role": r.role.as_str(), "mib": bytes_to_mib(r.bytes), "blocks": r.blocks})
            } else {
                serde_json::json!({"role": r.role.as_str(), "mib": bytes_to_mib(r.bytes)})
            }
        })
        .collect()
}

/// The `--json` document (field names are a contract: scripts and tests read them).
pub fn roles_json(
    data: &RankData,
    report: &RoleReport,
    advice: &[Advice],
    blocks: bool,
) -> serde_json::Value {
    let phases: Vec<serde_json::Value> = data
        .roles
        .as_ref()
        .map(|r| {
            r.phases
                .spans
                .iter()
                .map(|p| {
                    // The step holding the phase's start (steps are sorted by start).
                    let step = data.steps.as_ref().and_then(|s| {
                        let i = s.steps.partition_point(|st| st.start_ns <= p.start_ns);
                        let st = s.steps.get(i.checked_sub(1)?)?;
                        (p.start_ns <= st.end_ns).then_some(st.id)
                    });
                    serde_json::json!({
                        "step": step,
                        "kind": p.kind.as_str(),
                        "start_ms": ns_to_ms(data.rel_ns(p.start_ns)),
                        "end_ms": ns_to_ms(data.rel_ns(p.end_ns)),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let totals: Vec<serde_json::Value> = report
        .totals
        .iter()
        .map(|t| serde_json::json!({"role": t.role.as_str(), "mib": bytes_to_mib(t.bytes), "blocks": t.blocks}))
        .collect();
    let per_step: Vec<serde_json::Value> = report
        .per_step
        .iter()
        .map(|s| {
            serde_json::json!({
                "step": s.step,
                "peak_at_ms": ns_to_ms(s.at_peak.at_ns),
                "roles": roles_of(&s.at_peak, false),
            })
        })
        .collect();
    let advice: Vec<serde_json::Value> = advice
        .iter()
        .map(|a| {
            let mut v = serde_json::json!({"kind": a.kind.as_str(), "mib": bytes_to_mib(a.bytes), "text": a.english()});
            if let Some(r) = &a.replayed {
                let mut replayed = serde_json::json!({
                    "from_mib": bytes_to_mib(r.from),
                    "to_mib": bytes_to_mib(r.to),
                    "whatif": r.lever.whatif_args(),
                });
                match &r.lever {
                    Lever::Checkpoint(module) => replayed["checkpoint"] = module.as_str().into(),
                    Lever::Zero { stage, ranks } => {
                        replayed["zero"] = (*stage).into();
                        replayed["ranks"] = (*ranks).into();
                    }
                }
                v["replayed"] = replayed;
            }
            v
        })
        .collect();
    let mut doc = serde_json::json!({
        "rank": data.info.rank,
        "source": data.stacks.as_ref().map(|s| s.source.as_str()),
        "phases": phases,
        "totals": totals,
        "at_peak": report.at_peak.as_ref().map(|p| serde_json::json!({
            "at_ms": ns_to_ms(p.at_ns),
            "roles": roles_of(p, true),
        })),
        "per_step": per_step,
        "advice": advice,
        "why_unknown": report.why_unknown.map(|w| w.render(Lang::En)),
    });
    if blocks && let Some(obj) = doc.as_object_mut() {
        obj.insert("blocks".into(), serde_json::Value::Array(block_rows(data)));
    }
    doc
}

fn block_rows(data: &RankData) -> Vec<serde_json::Value> {
    let Some(roles) = data.roles.as_ref() else {
        return Vec::new();
    };
    let ops = &data.operators;
    let ms = |t: i64| (t != NULL).then(|| ns_to_ms(data.rel_ns(t)));
    (0..ops.len())
        .map(|r| {
            serde_json::json!({
                "name": data.display_name(ops.name[r]),
                "size_kib": bytes_to_kib(ops.size[r]),
                "allocated_ms": ms(ops.alloc_time[r]),
                "released_ms": ms(ops.release_time[r]),
                "role": roles.role[r].as_str(),
                "rule": roles.rule[r].as_str(),
            })
        })
        .collect()
}

/// Roles as an aligned table: role, MB, blocks.
fn role_table(roles: &[RoleBytes], zh: bool) -> String {
    let rows: Vec<Vec<String>> = roles
        .iter()
        .map(|r| {
            vec![
                match zh {
                    true => r.role.name(Lang::Zh).to_string(),
                    false => r.role.as_str().to_string(),
                },
                format!("{:.2}", bytes_to_mib(r.bytes)),
                r.blocks.to_string(),
            ]
        })
        .collect();
    let header = if zh {
        ["角色", "MB", "块数"]
    } else {
        ["Role", "MB", "Blocks"]
    };
    super::text::text_table(&header, &rows)
}

/// The aligned text tables and the advice.
pub fn roles_text(
    data: &RankData,
    report: &RoleReport,
    advice: &[Advice],
    blocks: bool,
    lang: Lang,
) -> String {
    let zh = lang == Lang::Zh;
    let (rank, source) = (
        &data.info.rank,
        data.stacks
            .as_ref()
            .map_or(if zh { "无" } else { "nowhere" }, |s| s.source.as_str()),
    );
    let mut text = if zh {
        format!("rank {rank}：按角色的内存（host 算子来自 {source}）\n")
    } else {
        format!("rank {rank}: memory by role (host ops from {source})\n")
    };
    if let Some(why) = report.why_unknown.map(|w| w.render(lang)) {
        text.push_str(&if zh {
            format!("所有内存块的角色均为 unknown：{why}\n")
        } else {
            format!("every block is unknown: {why}\n")
        });
    }
    let mib = |b: i64| format!("{:.2}", bytes_to_mib(b));
    if let Some(p) = &report.at_peak {
        let (at, total) = (ns_to_ms(p.at_ns), mib(p.total));
        text.push_str(&if zh {
            format!("\n峰值时（{at:.3} ms，{total} MB）：\n")
        } else {
            format!("\nat the peak ({at:.3} ms, {total} MB):\n")
        });
        // Roles neither live nor with blocks then are left out of the text.
        let live: Vec<RoleBytes> = p
            .roles
            .iter()
            .copied()
            .filter(|r| r.bytes != 0 || r.blocks != 0)
            .collect();
        text.push_str(&role_table(&live, zh));
    }
    text.push_str(if zh {
        "\n整个采集期间（分配量）：\n"
    } else {
        "\nover the profile (allocated):\n"
    });
    text.push_str(&role_table(&report.totals, zh));
    if !report.per_step.is_empty() {
        let roles: Vec<crate::model::Role> = crate::model::Role::ALL
            .into_iter()
            .filter(|r| report.per_step.iter().any(|s| s.at_peak.bytes(*r) != 0))
            .collect();
        let mut header = if zh {
            vec!["迭代", "峰值时间(ms)", "峰值(MB)"]
        } else {
            vec!["Step", "Peak at(ms)", "Peak(MB)"]
        };
        header.extend(roles.iter().map(|r| r.as_str()));
        let rows: Vec<Vec<String>> = report
            .per_step
            .iter()
            .map(|s| {
                let mut row = vec![
                    format!("#{}", s.step),
                    format!("{:.3}", ns_to_ms(s.at_peak.at_ns)),
                    mib(s.at_peak.total),
                ];
                row.extend(roles.iter().map(|&r| mib(s.at_peak.bytes(r))));
                row
            })
            .collect();
        text.push_str(if zh {
            "\n各迭代峰值时按角色（MB）：\n"
        } else {
            "\neach step's peak by role (MB):\n"
        });
        text.push_str(&super::text::text_table(&header, &rows));
    }
    if !advice.is_empty() {
        text.push_str(if zh {
            "\n如何降低峰值：\n"
        } else {
            "\nwhat would lower the peak:\n"
        });
        for a in advice {
            let line = a.render(lang, &|b| format!("{:.1} MB", bytes_to_mib(b)));
            text.push_str(&format!("- {line}\n"));
        }
    }
    if blocks && let Some(roles) = data.roles.as_ref() {
        let ops = &data.operators;
        let ms = |t: i64| {
            if t == NULL {
                "-".to_string()
            } else {
                format!("{:.3}", ns_to_ms(data.rel_ns(t)))
            }
        };
        let rows: Vec<Vec<String>> = (0..ops.len())
            .map(|r| {
                vec![
                    data.display_name(ops.name[r]).to_string(),
                    format!("{:.2}", bytes_to_kib(ops.size[r])),
                    ms(ops.alloc_time[r]),
                    ms(ops.release_time[r]),
                    roles.role[r].as_str().to_string(),
                    roles.rule[r].as_str().to_string(),
                ]
            })
            .collect();
        let header = if zh {
            [
                "名称",
                "Size(KB)",
                "申请时间(ms)",
                "释放时间(ms)",
                "角色",
                "规则",
            ]
        } else {
            [
                "Name",
                "Size(KB)",
                "Allocated(ms)",
                "Released(ms)",
                "Role",
                "Rule",
            ]
        };
        text.push_str(if zh {
            "\n内存块：\n"
        } else {
            "\nblocks:\n"
        });
        text.push_str(&super::text::text_table(&header, &rows));
    }
    text
}
