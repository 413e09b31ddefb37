//! Memory by role (issue 28), checked against what does not come from memsight: PyTorch's own
//! category of every allocation (`tests/reference/make_pytorch_trace.py roles`), the raw rows
//! of the real Ascend exports (CSV read by hand, the DB through SQL), and a brute-force search
//! of the raw host ops.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{RawCsv, memsight, raw_ops, raw_peak, samples, trace_ops};

const MIB: f64 = 1024.0 * 1024.0;

fn roles_dir() -> PathBuf {
    common::fixtures().join("pytorch/roles")
}

/// memsight's role of each allocation of `trace` joined to PyTorch's category (same ns, same
/// bytes, k-th with that pair in each): (bytes where they agree, bytes PyTorch classifies,
/// bytes memsight calls unknown, all bytes).
fn agreement(name: &str) -> (i64, i64, i64, i64) {
    let dir = roles_dir();
    let trace = dir.join(format!("{name}.pt.trace.json.gz"));
    let cats: Vec<(i128, i64, Option<String>)> = serde_json::from_str(
        &std::fs::read_to_string(dir.join(format!("{name}.categories.json"))).unwrap(),
    )
    .unwrap();
    let mut want: HashMap<(i128, i64), Vec<Option<String>>> = HashMap::new();
    for (ns, bytes, cat) in cats {
        want.entry((ns, bytes)).or_default().push(cat);
    }
    let profile = memsight::ingest::discover(&trace).unwrap();
    let data =
        memsight::ingest::load_rank(&profile.ranks[0], &memsight::ingest::LoadControl::new())
            .unwrap();
    let roles = data.roles.as_ref().expect("roles");
    let ops = &data.operators;
    let mut used: HashMap<(i128, i64), usize> = HashMap::new();
    let (mut agree, mut classified, mut unknown, mut all) = (0, 0, 0, 0);
    for r in 0..ops.len() {
        let (t, size) = (ops.alloc_time[r] as i128, ops.size[r]);
        if size <= 0 {
            continue;
        }
        all += size;
        let role = roles.role[r].as_str();
        if role == "unknown" {
            unknown += size;
        }
        let k = used.entry((t, size)).or_insert(0);
        let cat = want
            .get(&(t, size))
            .and_then(|v| v.get(*k))
            .cloned()
            .flatten();
        *k += 1;
        let Some(cat) = cat else { continue };
        classified += size;
        let theirs = match cat.as_str() {
            "AUTOGRAD_DETAIL" => "backward_temporary".to_string(),
            other => other.to_lowercase(),
        };
        if theirs == role {
            agree += size;
        }
    }
    (agree, classified, unknown, all)
}

#[test]
fn roles_agree_with_pytorchs_own_categories() {
    for name in ["mlp_sgd", "cnn_adam", "transformer_adamw"] {
        let (agree, classified, unknown, all) = agreement(name);
        assert!(classified > 0 && all > 0, "{name}: nothing joined");
        let share = agree as f64 / classified as f64;
        let unknown_share = unknown as f64 / all as f64;
        eprintln!(
            "{name}: {:.1} % of the bytes PyTorch classifies agree; unknown {:.1} % of all bytes",
            share * 100.0,
            unknown_share * 100.0
        );
        assert!(share >= 0.90, "{name}: agreement {share}");
        assert!(unknown_share <= 0.05, "{name}: unknown {unknown_share}");
    }
}

/// `memsight roles --json --blocks` on `path`.
/// `roles --json --blocks` of rank `0` (the raw rows these tests read are rank 0's; without
/// `--rank` the rank with the highest peak is taken).
fn roles_json(path: &Path) -> serde_json::Value {
    let (code, out, err) = memsight(&[
        "roles",
        path.to_str().unwrap(),
        "--rank=0",
        "--json",
        "--blocks",
    ]);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// The at_peak roles of `doc` as role → MiB.
fn at_peak(doc: &serde_json::Value) -> HashMap<String, f64> {
    doc["at_peak"]["roles"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["role"].as_str().unwrap().to_string(),
                r["mib"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Live bytes by role at absolute `t` from raw (size, alloc, release) rows and the roles
/// memsight gave them (same order).
fn live_by_role(
    rows: &[(i64, Option<i128>, Option<i128>)],
    roles: &[String],
    t: i128,
) -> HashMap<String, i64> {
    let mut out: HashMap<String, i64> = HashMap::new();
    for ((size, a, f), role) in rows.iter().zip(roles) {
        if *size > 0 && a.is_some_and(|a| a <= t) && f.is_none_or(|f| f > t) {
            *out.entry(role.clone()).or_default() += size;
        }
    }
    out
}

fn check_adds_up(doc: &serde_json::Value, curve_bytes: i64, live: &HashMap<String, i64>) {
    let got = at_peak(doc);
    let total: f64 = got.values().sum();
    assert!(
        (total - curve_bytes as f64 / MIB).abs() < 1e-6,
        "roles add to {total} MiB, the curve is {}",
        curve_bytes as f64 / MIB
    );
    let blocks: i64 = live.values().sum();
    let before = got.get("before_profiling").copied().unwrap_or(0.0);
    assert!(((curve_bytes - blocks) as f64 / MIB - before).abs() < 1e-6);
    for (role, bytes) in live {
        let mine = got.get(role).copied().unwrap_or(0.0);
        assert!(
            (mine - *bytes as f64 / MIB).abs() < 1e-6,
            "{role}: {mine} vs raw {}",
            *bytes as f64 / MIB
        );
    }
}

fn level1(kind: &str) -> Option<PathBuf> {
    Some(samples()?.join(format!(
        "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/{kind}/level1"
    )))
}

#[test]
fn text_export_roles_add_up_to_operator_allocated_at_the_peak() {
    let Some(dir) = level1("text") else { return };
    let doc = roles_json(&dir);
    assert_eq!(doc["source"], "trace_view");
    let rank = dir.join("rank0_ascend_pt");
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (peak_mib, peak_ns) = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    let (ops, _) = raw_ops(&rank);
    let rows: Vec<(i64, Option<i128>, Option<i128>)> = ops
        .iter()
        .map(|(_, kb, a, f)| ((kb.parse::<f64>().unwrap() * 1024.0).round() as i64, *a, *f))
        .collect();
    let roles: Vec<String> = doc["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["role"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(roles.len(), rows.len());
    let live = live_by_role(&rows, &roles, peak_ns);
    check_adds_up(&doc, (peak_mib * MIB).round() as i64, &live);
    // The roles the rank has: gradients and activations at the peak.
    assert!(live.get("gradient").copied().unwrap_or(0) > 0);
}

#[test]
fn db_export_roles_add_up_to_operator_allocated_at_the_peak() {
    let Some(dir) = level1("db") else { return };
    let doc = roles_json(&dir);
    assert_eq!(doc["source"], "db");
    let db = dir.join("rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
    let c = rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
        .unwrap();
    let (peak, peak_ns): (i64, i64) = c
        .query_row(
            "SELECT totalAllocated, timestamp FROM MEMORY_RECORD JOIN STRING_IDS ON id = component
             WHERE value = 'PTA+GE' ORDER BY totalAllocated DESC, timestamp ASC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let mut st = c
        .prepare("SELECT size, allocationTime, releaseTime FROM OP_MEMORY ORDER BY rowid")
        .unwrap();
    let rows: Vec<(i64, Option<i128>, Option<i128>)> = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<i64>>(1)?.map(i128::from),
                r.get::<_, Option<i64>>(2)?.map(i128::from),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let blocks = doc["blocks"].as_array().unwrap();
    assert_eq!(blocks.len(), rows.len());
    for (b, r) in blocks.iter().zip(&rows) {
        assert!((b["size_kib"].as_f64().unwrap() * 1024.0 - r.0 as f64).abs() < 0.5);
    }
    let roles: Vec<String> = blocks
        .iter()
        .map(|b| b["role"].as_str().unwrap().to_string())
        .collect();
    let live = live_by_role(&rows, &roles, peak_ns as i128);
    check_adds_up(&doc, peak, &live);
}

/// Each block's role agrees with the phase a brute-force search of the raw host ops puts its
/// allocation in: inside an `Optimizer.step#` op → optimizer roles, inside an autograd
/// `evaluate_function` → backward roles, inside the DataLoader → input.
#[test]
fn each_blocks_role_agrees_with_the_raw_ops_around_it() {
    let Some(dir) = level1("text") else { return };
    let doc = roles_json(&dir);
    let rank = dir.join("rank0_ascend_pt");
    let ops = trace_ops(&rank.join("ASCEND_PROFILER_OUTPUT/trace_view.json"));
    let (raw, _) = raw_ops(&rank);
    let blocks = doc["blocks"].as_array().unwrap();
    let mut checked = HashMap::new();
    for ((_, _, alloc, release), b) in raw.iter().zip(blocks) {
        let Some(t) = *alloc else { continue };
        let role = b["role"].as_str().unwrap();
        let within = |prefix: &str| {
            ops.iter()
                .find(|o| o.name.starts_with(prefix) && o.start <= t && t <= o.end)
        };
        // Freed inside the outermost aten op around it: a temporary, whatever the phase.
        let outer_aten = ops
            .iter()
            .filter(|o| o.name.starts_with("aten::") && o.start <= t && t <= o.end)
            .min_by_key(|o| o.start);
        if outer_aten.is_some_and(|o| release.is_some_and(|f| f <= o.end)) {
            assert_eq!(role, "temporary", "{b}");
            *checked.entry("temporary").or_insert(0) += 1;
            continue;
        }
        if let Some(o) = within("Optimizer.step#") {
            let kept = release.is_none_or(|f| f > o.end);
            assert_eq!(
                role,
                if kept { "optimizer_state" } else { "temporary" },
                "{b}"
            );
            *checked.entry("optimizer").or_insert(0) += 1;
        } else if within("autograd::engine::evaluate_function").is_some() {
            assert!(["gradient", "backward_temporary"].contains(&role), "{b}");
            *checked.entry("backward").or_insert(0) += 1;
        } else if within("enumerate(DataLoader)").is_some() {
            assert_eq!(role, "input", "{b}");
            *checked.entry("data").or_insert(0) += 1;
        } else if within("DistributedDataParallel.forward").is_some() {
            assert_eq!(role, "activation", "{b}");
            *checked.entry("forward").or_insert(0) += 1;
        }
    }
    // Every kind of evidence was met at least once.
    for k in ["temporary", "optimizer", "backward", "forward"] {
        assert!(checked.get(k).copied().unwrap_or(0) > 0, "{k}: {checked:?}");
    }
}

#[test]
fn roles_text_says_why_without_host_ops() {
    // The demo fixture's CSV ranks have a trace_view.json; a folder of CSVs alone has none.
    let tmp = tempfile::tempdir().unwrap();
    let src = common::first_subdir(&common::fixtures().join("demo"));
    let dst = tmp.path().join(src.file_name().unwrap());
    common::copy_dir(&src, &dst);
    let _ = std::fs::remove_file(dst.join("ASCEND_PROFILER_OUTPUT/trace_view.json"));
    let (code, out, err) = memsight(&["roles", dst.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("every block is unknown"), "{out}");
}

/// A generated profile with training phases (`generate --steps 5 --stacks --phases`): every
/// role the construction makes is found, `unknown` stays small, and the split at the peak and
/// at each step's peak adds up to the raw Operator Allocated curve.
#[test]
fn generated_phases_give_every_role_and_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        ranks: 1,
        allocs: 20_000,
        steps: 5,
        stacks: true,
        phases: true,
        ..Default::default()
    };
    let dirs = memsight::generate::generate(tmp.path(), &opts).unwrap();
    let rank = &dirs[0];
    let doc = roles_json(rank);
    let blocks = doc["blocks"].as_array().unwrap();
    let mut bytes_by: HashMap<String, f64> = HashMap::new();
    for b in blocks {
        *bytes_by
            .entry(b["role"].as_str().unwrap().to_string())
            .or_default() += b["size_kib"].as_f64().unwrap().max(0.0);
    }
    for role in [
        "input",
        "activation",
        "gradient",
        "optimizer_state",
        "temporary",
        "backward_temporary",
    ] {
        assert!(
            bytes_by.get(role).copied().unwrap_or(0.0) > 0.0,
            "{role}: {bytes_by:?}"
        );
    }
    let all: f64 = bytes_by.values().sum();
    let unknown = bytes_by.get("unknown").copied().unwrap_or(0.0);
    assert!(unknown / all <= 0.05, "unknown {unknown} of {all}");
    // Adds up at the peak, against the raw files.
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (peak_mib, peak_ns) = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    let (ops, origin) = raw_ops(rank);
    let rows: Vec<(i64, Option<i128>, Option<i128>)> = ops
        .iter()
        .map(|(_, kb, a, f)| ((kb.parse::<f64>().unwrap() * 1024.0).round() as i64, *a, *f))
        .collect();
    let roles: Vec<String> = blocks
        .iter()
        .map(|b| b["role"].as_str().unwrap().to_string())
        .collect();
    check_adds_up(
        &doc,
        (peak_mib * MIB).round() as i64,
        &live_by_role(&rows, &roles, peak_ns),
    );
    // Each step's split adds up to the raw curve at its peak time.
    let steps = doc["per_step"].as_array().unwrap();
    assert_eq!(steps.len(), 5);
    for s in steps {
        let at = origin + (s["peak_at_ms"].as_f64().unwrap() * 1e6).round() as i128;
        let curve = common::raw_operator_curve(rank, "Total Allocated(MB)", origin, at - origin)
            .expect("curve at the step's peak");
        let sum: f64 = s["roles"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["mib"].as_f64().unwrap())
            .sum();
        assert!((sum - curve as f64 / MIB).abs() < 1e-6, "{s}");
    }
}
