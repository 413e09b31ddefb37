//! The verdict on an allocator snapshot: each device's peak, the out-of-memory cause (the
//! device, a limit the process set, or fragmentation with its causes), the fix that closes the
//! largest cause, who holds the memory and in which phase, each copied from `memsight snapshot
//! --json` (and the profile beside it, when one joins by time).

use std::path::Path;

use serde_json::{Value, json};

use super::{SCHEMA, first, parsed};
use crate::cli;
use crate::model::Lang;
use crate::snapshot::oom::{WHATIF_COMMAND, cli_mb, levers};

/// How many entries each list of the verdict keeps.
const TOP: usize = 3;

/// The verdict on the snapshot at `path`; the Chinese of its advice and fixes go to `chinese`.
pub fn verdict(path: &Path, chinese: &mut super::Chinese) -> Result<Value, String> {
    let args = parsed::<cli::SnapshotArgs>(&["--json", "--top", "3"])?;
    if path.is_dir() {
        return Err(format!("{}: a folder, not a snapshot file", path.display()));
    }
    let answer = cli::snapshot::compute(path, &args, &mut std::io::sink())?;
    let s = cli::snapshot::answer_json(&answer, &args);
    let conf = answer.snap.backend.alloc_conf();
    for o in &answer.ooms {
        let zh = o.advice.render(Lang::Zh, conf, &cli_mb);
        chinese.add(o.advice_text.clone(), zh);
    }
    chinese.add(
        levers(Lang::En, WHATIF_COMMAND),
        levers(Lang::Zh, WHATIF_COMMAND),
    );
    let f = &answer.fragmentation;
    chinese.add(f.fix(Lang::En), f.fix(Lang::Zh));
    let p = path.display().to_string();
    let devices: Vec<Value> = s["devices"]
        .as_array()
        .map(|d| {
            d.iter()
                .map(|d| {
                    json!({
                        "device": d["label"],
                        "peak_allocated_bytes": d["peak_allocated_bytes"],
                        "peak_event": d["peak_event"],
                        "reserved_bytes": d["reserved_bytes"],
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    let frag = &s["fragmentation"];
    // The diagnosis is of an OOM whose verdict is not fragmentation: its fix is not the OOM's.
    let at_oom: Vec<&Value> = s["oom"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|o| o["device"] == frag["device"] && o["event"] == frag["at_event"])
        .collect();
    let not_why = at_oom.iter().any(|o| o["verdict"] != "fragmentation");
    let phase = peak_phase(&s["phases"], &s["devices"][0]);
    let holders: Vec<Value> = first(&s["top_stacks"], TOP)
        .iter()
        .map(|t| {
            let f = &t["frame"];
            let line = match f.is_null() {
                true => Value::Null,
                false => json!(format!(
                    "{}({}): {}",
                    f["filename"].as_str().unwrap_or(""),
                    f["line"],
                    f["name"].as_str().unwrap_or("")
                )),
            };
            json!({"line": line, "bytes": t["bytes"], "blocks": t["blocks"]})
        })
        .collect();
    let ops: Value = match s["profile_join"].is_null() {
        true => Value::Null,
        false => json!({
            "profile": s["profile_join"]["profile"],
            "at_event": s["profile_join"]["at_event"],
            "live": first(&s["profile_join"]["live"], TOP),
        }),
    };
    Ok(json!({
        "schema": SCHEMA,
        "kind": "snapshot",
        "path": p,
        "devices": devices,
        "oom": first(&s["oom"], 2).iter().map(|o| json!({
            "device": o["device"],
            "event": o["event"],
            "verdict": o["verdict"],
            "requested_bytes": o["requested_bytes"],
            "free_in_segments_bytes": o["free_in_segments_bytes"],
            "largest_free_block_bytes": o["largest_free_block_bytes"],
            "device_free_bytes": o["device_free_bytes"],
            "advice": o["advice_text"],
            "advice_kind": o["advice"]["kind"],
            "how": match o["advice"]["kind"].as_str() {
                Some("raise_limit_or_hold_less" | "hold_less") => json!(levers(Lang::En, WHATIF_COMMAND)),
                _ => Value::Null,
            },
        })).collect::<Vec<_>>(),
        "fragmentation": match frag.is_null() {
            true => Value::Null,
            false => json!({
                "at_event": frag["at_event"],
                "reserved_bytes": frag["reserved_bytes"],
                "allocated_bytes": frag["allocated_bytes"],
                "causes": frag["causes"].as_array().map(|c| c.iter()
                    .filter(|c| c["bytes"].as_i64().is_some_and(|b| b > 0))
                    .take(TOP).cloned().collect::<Vec<_>>()),
                "largest_possible_bytes": frag["largest_possible_bytes"],
                "fix": frag["fix"],
                "at_oom": !at_oom.is_empty(),
                "not_why_it_ran_out": not_why,
            }),
        },
        "holders_at_end": holders,
        "peak_phase": phase,
        "by_operator": ops,
        "from": "memsight snapshot --json",
        "next": [
            crate::model::shell::memsight("snapshot", path, &[]),
            crate::model::shell::memsight("snapshot", path, &["--at-event".into(), "N".into()]),
        ],
    }))
}

/// The innermost user phase (`record_function`) whose events hold the first device's peak.
fn peak_phase(phases: &Value, device: &Value) -> Value {
    let (Some(list), Some(peak)) = (phases.as_array(), device["peak_event"].as_u64()) else {
        return Value::Null;
    };
    let holds = |p: &&Value| {
        p["device"] == device["device"]
            && p["first_event"].as_u64().is_some_and(|a| a <= peak)
            && p["last_event"].as_u64().is_some_and(|b| peak <= b)
    };
    list.iter()
        .filter(holds)
        .max_by_key(|p| p["depth"].as_u64().unwrap_or(0))
        .map_or(Value::Null, |p| {
            json!({
                "name": p["name"],
                "peak_allocated_bytes": p["peak_allocated_bytes"],
                "allocated_before_bytes": p["allocated_before_bytes"],
                "allocated_after_bytes": p["allocated_after_bytes"],
            })
        })
}
