//! The verdict on one rank of a profile: its peak (value, time, step), what the peak is made
//! of (roles, modules, source lines), whether it leaks, what would lower it, and the what-if
//! table for the levers that apply, each copied from its command's JSON.

use std::path::Path;

use serde_json::{Value, json};

use super::{SCHEMA, first, parsed};
use crate::analysis::RankView;
use crate::analysis::rank_meant::{Seen, parallel_ranks, rank_meant};
use crate::cli;
use crate::export::summary::{identity, summarize};
use crate::ingest::{LoadControl, Profile, load_rank};
use crate::model::{RankData, RankInfo, SourceChoice};
use crate::reports::live::{Live, LiveArgs};
use crate::reports::modules::{Modules, ModulesArgs};
use crate::reports::roles::{Roles, RolesArgs};
use crate::reports::stacks::{Stacks, StacksArgs};
use crate::reports::steps::{Steps, StepsArgs};
use crate::reports::whatif::{Whatif, WhatifArgs};
use crate::reports::{RankInput, json_of};

/// How many entries each list of the verdict keeps.
const TOP: usize = 3;

/// How many ranks the verdict lists by peak.
const RANKS_LISTED: usize = 8;

/// The verdict on `rank` of the profile at `path` (default: the rank with the highest peak).
/// The rank explained is loaded once and every part is a report computed on that load; named
/// by `--rank`, it is the only rank loaded (the others are listed as discovery found them,
/// without a peak), else each rank is loaded once, in turn, to find the highest peak.
pub fn verdict(
    path: &Path,
    source: SourceChoice,
    rank: Option<&str>,
    chinese: &mut super::Chinese,
) -> Result<Value, String> {
    let profile = cli::discover_profile(path)?;
    let Loaded { ranks, data } = load(&profile, source, rank, path)?;
    let chosen = choose(&ranks, rank)?;
    let id = chosen["rank"].as_str().unwrap_or_default().to_string();
    let data = match data {
        Some(d) if d.info.rank == id => d,
        _ => {
            let info = profile
                .ranks
                .iter()
                .find(|i| i.rank == id)
                .ok_or_else(|| format!("no rank {id:?}"))?;
            load_info(info, source).map_err(|e| format!("rank {id}: {e}"))?
        }
    };
    let allocated = &chosen["peaks"]["operator_allocated"];
    let p = path.display().to_string();
    let devices: Vec<Option<&str>> = profile.ranks.iter().map(|r| r.device.as_deref()).collect();
    let view = RankView::new(data);
    let input = RankInput {
        view: &view,
        parallel_ranks: parallel_ranks(&devices),
    };
    let rank_arg = Some(id.clone());

    let steps = json_of::<Steps>(
        &input,
        &StepsArgs {
            rank: rank_arg.clone(),
            json: true,
            lang: None,
        },
    );
    let roles = json_of::<Roles>(
        &input,
        &RolesArgs {
            rank: rank_arg.clone(),
            json: true,
            ..RolesArgs::default()
        },
    );
    // The curve's peak; without memory_record (operator_memory.csv alone), the peak of the
    // blocks' total that `roles` found.
    let (at_ms, peak_of) = match allocated["at_ms"].as_f64() {
        Some(t) => (Some(t), "operator_allocated"),
        None => (
            roles
                .as_ref()
                .ok()
                .and_then(|r| r["at_peak"]["at_ms"].as_f64()),
            "blocks",
        ),
    };
    let modules = json_of::<Modules>(
        &input,
        &ModulesArgs {
            rank: rank_arg.clone(),
            at_ms: None,
            json: true,
            lang: None,
        },
    );
    let operators = match at_ms {
        Some(at) => json_of::<Live>(
            &input,
            &LiveArgs {
                rank: rank_arg.clone(),
                at_ms: at,
                top: TOP,
                json: true,
                lang: None,
            },
        ),
        None => Err("no peak".into()),
    };
    let lines = match at_ms {
        Some(at) => json_of::<Stacks>(
            &input,
            &StacksArgs {
                rank: rank_arg.clone(),
                at_ms: Some(at),
                from_ms: None,
                to_ms: None,
                by: "line".into(),
                top: TOP,
                json: true,
                lang: None,
            },
        ),
        None => Err("no peak".into()),
    };

    // Each part, or why it could not be made.
    let mut unavailable = serde_json::Map::new();
    let mut part = |name: &str, r: Result<Value, String>| {
        r.map_err(|e| unavailable.insert(name.into(), Value::String(e)))
            .ok()
    };
    let (steps, roles, modules, lines, operators) = (
        part("steps", steps),
        part("roles", roles),
        part("modules", modules),
        part("lines", lines),
        part("operators", operators),
    );
    let devices: Vec<Option<&str>> = ranks.iter().map(|r| r["device"].as_str()).collect();
    let device_ranks = crate::analysis::rank_meant::candidates(&devices).len();
    let whatif = whatif_table(&input, &id, roles.as_ref(), device_ranks);
    if roles.is_some() {
        for a in view.advice(input.parallel_ranks).iter() {
            chinese.add(a.english(), a.in_cli(crate::model::Lang::Zh));
        }
    }
    let step = steps
        .as_ref()
        .zip(at_ms)
        .and_then(|(s, t)| step_at(&s["steps"], t));
    Ok(json!({
        "schema": SCHEMA,
        "kind": "profile",
        "path": p,
        "rank": id,
        "device": chosen["device"],
        "ranks": ranks_by_peak(&ranks),
        "peak": {
            "mib": match peak_of {
                "blocks" => operators.as_ref().map_or(Value::Null, |o| o["total_mib"].clone()),
                _ => allocated["mib"].clone(),
            },
            "at_ms": at_ms,
            "of": peak_of,
            "step": step,
            "reserved_mib": chosen["peaks"]["operator_reserved"]["mib"],
            "from": "memsight inspect --json",
        },
        "made_of": {
            "roles": roles.as_ref().map(roles_at_peak),
            "modules": modules.as_ref().map(top_modules),
            "lines": lines.as_ref().map(|l| top_lines(&l["items"])),
            "operators": operators.as_ref().map(|o| first(&o["by_operator"], TOP)),
            "before_profiling_mib": operators.as_ref().map(|o| o["unattributed_mib"].clone()),
            "from": "memsight roles / modules / stacks --by line / live --at-ms PEAK --json",
        },
        "leak": steps.as_ref().map(leak),
        "oom": Value::Null,
        "advice": roles.as_ref().map(|r| {
            first(&r["advice"], 2).iter().map(|a| a["text"].clone()).collect::<Vec<_>>()
        }),
        "whatif": whatif,
        "unavailable": unavailable,
        "next": next_commands(path, &id, at_ms),
    }))
}

/// The profile's ranks as `inspect --json` lists them, and the data of the rank explained when
/// it was loaded among them.
struct Loaded {
    ranks: Vec<Value>,
    data: Option<RankData>,
}

/// Loads `info` from `source`; the error is one line (as `inspect` words it).
fn load_info(info: &RankInfo, source: SourceChoice) -> Result<RankData, String> {
    cli::rank::with_source(info, source)
        .map_err(|e| crate::model::Cause::said(e.to_string()))
        .and_then(|i| load_rank(&i, &LoadControl::new()).map_err(|e| e.cause()))
        .map_err(|e| e.to_string())
}

/// A rank's `inspect --json` entry.
fn entry(summary: &crate::export::summary::RankSummary) -> Value {
    serde_json::to_value(summary).unwrap_or(Value::Null)
}

/// With `rank`: that rank loaded, the others as discovery found them. Without: every rank
/// loaded once, in turn, keeping the data of the one a user means ([`rank_meant`], decided two
/// at a time as the ranks come) and dropping the others'.
fn load(
    profile: &Profile,
    source: SourceChoice,
    rank: Option<&str>,
    path: &Path,
) -> Result<Loaded, String> {
    if let Some(want) = rank {
        let mut data = None;
        let mut ranks = Vec::with_capacity(profile.ranks.len());
        for info in &profile.ranks {
            if info.rank == want {
                let d = load_info(info, source).map_err(|e| format!("rank {want}: {e}"))?;
                ranks.push(entry(&summarize(&d)));
                data = Some(d);
            } else {
                ranks.push(entry(&identity(info)));
            }
        }
        return Ok(Loaded { ranks, data });
    }
    let seen = |v: &Value| {
        Seen::of(
            v["device"].as_str(),
            v["peaks"]["operator_allocated"]["mib"].as_f64(),
        )
    };
    let mut ranks: Vec<Value> = Vec::with_capacity(profile.ranks.len());
    let mut best: Option<(RankData, Seen)> = None;
    let mut failures = Vec::new();
    for info in &profile.ranks {
        match load_info(info, source) {
            Ok(d) => {
                let v = entry(&summarize(&d));
                let s = seen(&v);
                ranks.push(v);
                let better = best
                    .as_ref()
                    .is_none_or(|(_, b)| rank_meant(&[*b, s]) == Some(1));
                if better {
                    best = Some((d, s));
                }
            }
            Err(e) => {
                failures.push(e);
                ranks.push(entry(&identity(info)));
            }
        }
    }
    if best.is_none() {
        return Err(format!(
            "no rank could be loaded from {}: {}",
            path.display(),
            failures.join("; ")
        ));
    }
    Ok(Loaded {
        ranks,
        data: best.map(|(d, _)| d),
    })
}

/// The commands to dig further, each path and rank quoted ([`crate::model::shell`]); `live` only when
/// the rank has a peak to look at.
fn next_commands(path: &Path, id: &str, at_ms: Option<f64>) -> Vec<String> {
    let rank = crate::model::shell::option("--rank", id);
    let mut next = vec![
        crate::model::shell::memsight("steps", path, std::slice::from_ref(&rank)),
        crate::model::shell::memsight("roles", path, std::slice::from_ref(&rank)),
    ];
    if let Some(t) = at_ms {
        next.push(crate::model::shell::memsight(
            "live",
            path,
            &[rank, "--at-ms".into(), t.to_string()],
        ));
    }
    next
}

/// The rank asked for, or the one a user means ([`rank_meant`]: the device rank with the highest
/// Operator Allocated peak, the first on ties).
fn choose<'a>(ranks: &'a [Value], rank: Option<&str>) -> Result<&'a Value, String> {
    let ids = || {
        ranks
            .iter()
            .filter_map(|r| r["rank"].as_str())
            .collect::<Vec<_>>()
            .join(", ")
    };
    match rank {
        Some(want) => ranks
            .iter()
            .find(|r| r["rank"].as_str() == Some(want))
            .ok_or_else(|| format!("no rank {want:?}; the ranks: {}", ids())),
        None => {
            let seen: Vec<Seen> = ranks
                .iter()
                .map(|r| {
                    Seen::of(
                        r["device"].as_str(),
                        r["peaks"]["operator_allocated"]["mib"].as_f64(),
                    )
                })
                .collect();
            rank_meant(&seen)
                .map(|i| &ranks[i])
                .ok_or_else(|| "no rank has memory data".to_string())
        }
    }
}

/// A rank's Operator Allocated peak, MiB (−∞ without one).
fn peak(r: &Value) -> f64 {
    r["peaks"]["operator_allocated"]["mib"]
        .as_f64()
        .unwrap_or(f64::NEG_INFINITY)
}

/// The ranks by peak, highest first: how many, and the first [`RANKS_LISTED`].
fn ranks_by_peak(ranks: &[Value]) -> Value {
    let mut v: Vec<&Value> = ranks.iter().collect();
    v.sort_by(|a, b| peak(b).total_cmp(&peak(a)));
    json!({
        "count": ranks.len(),
        "by_peak": v.iter().take(RANKS_LISTED).map(|r| json!({
            "rank": r["rank"],
            "peak_mib": r["peaks"]["operator_allocated"]["mib"],
        })).collect::<Vec<_>>(),
    })
}

/// The step whose span holds `at_ms` (`memsight steps`' start ≤ t ≤ end), by its id.
fn step_at(steps: &Value, at_ms: f64) -> Option<Value> {
    steps.as_array()?.iter().find_map(|s| {
        let (a, b) = (s["start_ms"].as_f64()?, s["end_ms"].as_f64()?);
        (a <= at_ms && at_ms <= b).then(|| s["id"].clone())
    })
}

/// The roles at the peak that hold memory, most first.
fn roles_at_peak(roles: &Value) -> Vec<Value> {
    let mut v: Vec<Value> = roles["at_peak"]["roles"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|r| r["mib"].as_f64().is_some_and(|m| m > 0.0))
        .collect();
    v.sort_by(|a, b| {
        let m = |x: &Value| x["mib"].as_f64().unwrap_or(0.0);
        m(b).total_cmp(&m(a))
    });
    v
}

/// The modules that hold the most themselves at the peak (not through their children).
fn top_modules(modules: &Value) -> Vec<Value> {
    let mut v: Vec<&Value> = modules["modules"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let held = |x: &Value| x["self_held_mib"].as_f64().unwrap_or(0.0);
    v.retain(|m| held(m) > 0.0);
    v.sort_by(|a, b| held(b).total_cmp(&held(a)));
    v.iter()
        .take(TOP)
        .map(|m| json!({"path": m["path"], "class": m["class"], "mib": m["self_held_mib"]}))
        .collect()
}

/// The source lines holding the most at the peak.
fn top_lines(items: &Value) -> Vec<Value> {
    first(items, TOP)
        .iter()
        .map(|i| json!({"line": i["source_line"], "mib": i["mib"], "blocks": i["blocks"]}))
        .collect()
}

/// The leak verdict from `memsight steps`: growing (memory rose step over step and kept it),
/// flat, or unknown with fewer than three steps.
fn leak(steps: &Value) -> Value {
    let n = steps["steps"].as_array().map_or(0, Vec::len);
    let growth = first(&steps["growth"], 2);
    let verdict = match (growth.is_empty(), n) {
        (false, _) => "growing",
        (true, n) if n >= 3 => "flat",
        _ => "unknown",
    };
    json!({
        "verdict": verdict,
        "steps": n,
        "growth": growth.iter().map(|g| json!({
            "from_step": g["from_step"],
            "to_step": g["to_step"],
            "rises": g["rises"],
            "mib": g["mib"],
            "top_operator": g["operators"][0]["name"],
        })).collect::<Vec<_>>(),
        "from": "memsight steps --json",
    })
}

/// The what-if table: each lever that applies to this run, replayed (`memsight whatif`).
/// Twice the micro-batch when activations or inputs are held at the peak; checkpointing the
/// module class the roles advice names; offloading the optimizer when its state is held; ZeRO
/// over the profile's device ranks when it has several (stage 2 when gradients are held, else
/// stage 1 when optimizer state is).
fn whatif_table(input: &RankInput<'_>, id: &str, roles: Option<&Value>, ranks: usize) -> Value {
    let held = |role: &str| {
        roles.is_some_and(|r| {
            roles_at_peak(r)
                .iter()
                .any(|x| x["role"] == role && x["mib"].as_f64().is_some_and(|m| m > 0.0))
        })
    };
    let mut levers: Vec<Vec<String>> = Vec::new();
    if held("activation") || held("input") {
        levers.push(vec!["--micro-batch".into(), "2".into()]);
    }
    let class = roles.and_then(|r| {
        r["advice"]
            .as_array()?
            .iter()
            .find_map(|a| a["replayed"]["checkpoint"].as_str().map(str::to_string))
    });
    if let Some(c) = class {
        levers.push(vec!["--checkpoint".into(), c]);
    }
    if held("optimizer_state") {
        levers.push(vec!["--offload-optimizer".into()]);
    }
    // ZeRO over the device ranks: stage 1 shards the optimizer state, stage 2 the gradients
    // too; offered when the peak holds either.
    if ranks > 1 {
        let stage = if held("gradient") {
            Some("2")
        } else if held("optimizer_state") {
            Some("1")
        } else {
            None
        };
        if let Some(stage) = stage {
            levers.push(vec![
                "--zero".into(),
                stage.into(),
                "--ranks".into(),
                ranks.to_string(),
            ]);
        }
    }
    let mut measured = Value::Null;
    let rows: Vec<Value> = levers
        .iter()
        .filter_map(|lever| {
            let rank_arg = format!("--rank={id}");
            let mut argv: Vec<&str> = vec![&rank_arg, "--json"];
            argv.extend(lever.iter().map(String::as_str));
            let w = parsed::<WhatifArgs>(&argv)
                .and_then(|a| json_of::<Whatif>(input, &a))
                .ok()?;
            measured = w["measured"]["peak_mib"].clone();
            let (now, then) = (
                w["measured"]["peak_mib"].as_f64()?,
                w["predicted"]["peak_mib"].as_f64()?,
            );
            Some(json!({
                "lever": lever.join(" "),
                "peak_mib": w["predicted"]["peak_mib"],
                "change_mib": then - now,
            }))
        })
        .collect();
    json!({
        "measured_peak_mib": measured,
        "levers": rows,
        "from": "memsight whatif --json",
    })
}
