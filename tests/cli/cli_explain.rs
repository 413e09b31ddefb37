//! `memsight explain` (issue 46): one short verdict whose every figure equals the command it
//! comes from, on real data: a real H100 training trace (its figures against `inspect`,
//! `steps`, `roles`, `stacks --by line` and `whatif` run by hand), a real OOM snapshot (its
//! fragmentation against plain arithmetic over the raw pickle,
//! `tests/reference/snapshot_fragmentation.py`), a leaking profile, and a cluster summary (its
//! spread against SQL over the summary file). Within 5 KB of JSON and 40 lines of text.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::common;

fn json_of(args: &[&str]) -> Value {
    let (code, out, err) = common::memsight(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap()
}

/// The verdict's JSON and text, checked against the size limits.
fn explain(path: &Path, more: &[&str]) -> (Value, String) {
    let p = path.display().to_string();
    let mut args = vec!["explain", p.as_str(), "--json"];
    args.extend(more);
    let (code, json, err) = common::memsight(&args);
    assert_eq!(code, 0, "{err}");
    assert!(json.len() <= 5 * 1024, "{} bytes: {json}", json.len());
    args.retain(|a| *a != "--json");
    let (code, text, err) = common::memsight(&args);
    assert_eq!(code, 0, "{err}");
    assert!(text.lines().count() <= 40, "{text}");
    (serde_json::from_str(&json).unwrap(), text)
}

/// `memsight summarize` of `profiles` into `dir/sum.db`.
fn summary_of(profiles: &Path, dir: &Path) -> PathBuf {
    let db = dir.join("sum.db");
    let (code, _, err) = common::memsight(&[
        "summarize",
        &profiles.display().to_string(),
        "--out",
        &db.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    db
}

fn h100_trace() -> Option<PathBuf> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    Some(root.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz"))
}

#[test]
fn a_real_training_runs_verdict_equals_the_commands_it_comes_from() {
    let Some(trace) = h100_trace() else { return };
    let t = trace.display().to_string();
    let (v, text) = explain(&trace, &[]);
    assert_eq!(v["schema"], "memsight.explain/1");
    // The rank with the highest peak, not the trace's first (its CPU).
    let inspect = json_of(&["inspect", &t, "--json"]);
    let best = inspect["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .max_by(|a, b| {
            let p = |r: &Value| {
                r["peaks"]["operator_allocated"]["mib"]
                    .as_f64()
                    .unwrap_or(-1.0)
            };
            p(a).total_cmp(&p(b))
        })
        .unwrap();
    let rank = best["rank"].as_str().unwrap();
    assert_eq!(v["rank"], rank);
    assert_eq!(v["peak"]["mib"], best["peaks"]["operator_allocated"]["mib"]);
    assert_eq!(
        v["peak"]["at_ms"],
        best["peaks"]["operator_allocated"]["at_ms"]
    );
    let at = v["peak"]["at_ms"].as_f64().unwrap();
    // The step whose span holds the peak, from `steps`.
    let steps = json_of(&["steps", &t, "--rank", rank, "--json"]);
    let step = steps["steps"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["start_ms"].as_f64().unwrap() <= at && at <= s["end_ms"].as_f64().unwrap())
        .unwrap();
    assert_eq!(v["peak"]["step"], step["id"]);
    assert_eq!(v["leak"]["verdict"], "flat");
    // What the peak is made of: `roles` at the peak, the roles holding memory, most first.
    let roles = json_of(&["roles", &t, "--rank", rank, "--json"]);
    let mut held: Vec<Value> = roles["at_peak"]["roles"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["mib"].as_f64().unwrap() > 0.0)
        .cloned()
        .collect();
    held.sort_by(|a, b| {
        b["mib"]
            .as_f64()
            .unwrap()
            .total_cmp(&a["mib"].as_f64().unwrap())
    });
    assert_eq!(v["made_of"]["roles"], Value::Array(held));
    // The source lines holding the most at the peak: `stacks --by line --at-ms`.
    let at_text = v["peak"]["at_ms"].to_string();
    let lines = json_of(&[
        "stacks", &t, "--rank", rank, "--by", "line", "--at-ms", &at_text, "--top", "3", "--json",
    ]);
    let got = v["made_of"]["lines"].as_array().unwrap();
    assert_eq!(got.len(), 3);
    for (g, want) in got.iter().zip(lines["items"].as_array().unwrap()) {
        assert_eq!(g["line"], want["source_line"]);
        assert_eq!(g["mib"], want["mib"]);
    }
    // Each lever of the what-if table, replayed by `whatif` itself.
    let levers = v["whatif"]["levers"].as_array().unwrap();
    assert!(
        levers.iter().any(|l| l["lever"] == "--micro-batch 2"),
        "{levers:?}"
    );
    assert!(
        levers.iter().any(|l| l["lever"] == "--checkpoint Block"),
        "{levers:?}"
    );
    for l in levers {
        let lever = l["lever"].as_str().unwrap();
        let mut args = vec!["whatif", &t, "--rank", rank, "--json"];
        args.extend(lever.split(' '));
        let w = json_of(&args);
        assert_eq!(l["peak_mib"], w["predicted"]["peak_mib"], "{lever}");
        let change = w["predicted"]["peak_mib"].as_f64().unwrap()
            - w["measured"]["peak_mib"].as_f64().unwrap();
        assert_eq!(l["change_mib"].as_f64().unwrap(), change, "{lever}");
    }
    assert!(text.contains("peak 2581.86 MB"), "{text}");
    assert!(text.contains("--checkpoint Block"), "{text}");
    // The CPU rank when asked for it; an unknown rank says which there are.
    let cpu = explain(&trace, &["--rank", "gpt_b8 cpu"]).0;
    assert_eq!(cpu["rank"], "gpt_b8 cpu");
    let (code, _, err) = common::memsight(&["explain", &t, "--rank", "9"]);
    assert_ne!(code, 0);
    assert!(
        err.contains("no rank \"9\"") && err.contains("gpt_b8 cuda:0"),
        "{err}"
    );
}

/// A profile whose memory grows step over step: the leak verdict is `steps`' growth.
#[test]
fn a_leaking_profile_is_called_growing() {
    let dir = tempfile::tempdir().unwrap();
    let (code, _, err) = common::memsight(&[
        "generate",
        &dir.path().display().to_string(),
        "--steps",
        "8",
        "--leak-mib",
        "300",
        "--allocs",
        "3000",
    ]);
    assert_eq!(code, 0, "{err}");
    let (v, text) = explain(dir.path(), &[]);
    let steps = json_of(&["steps", &dir.path().display().to_string(), "--json"]);
    let g = &steps["growth"][0];
    assert_eq!(v["leak"]["verdict"], "growing");
    assert_eq!(v["leak"]["growth"][0]["mib"], g["mib"]);
    assert_eq!(
        v["leak"]["growth"][0]["top_operator"],
        g["operators"][0]["name"]
    );
    assert!(text.contains("leak: growing"), "{text}");
    // Nothing written into the profile's folder.
    let before = common::files_under(dir.path());
    explain(dir.path(), &[]);
    assert_eq!(common::files_under(dir.path()), before);
}

/// A real OOM (a GPT step under a per-process cap on an H100): the cause is a limit on the
/// process, with the figures of `memsight snapshot --json` at the OOM.
#[test]
fn a_real_oom_snapshots_verdict_names_the_cause_and_its_figures() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let snap = root.join("cuda_h100/oom/gpt/oom_snapshot.pickle");
    let (v, text) = explain(&snap, &[]);
    assert_eq!(v["kind"], "snapshot");
    let s = json_of(&["snapshot", &snap.display().to_string(), "--json"]);
    assert_eq!(v["oom"][0]["verdict"], "process_limit");
    for key in [
        "event",
        "requested_bytes",
        "free_in_segments_bytes",
        "device_free_bytes",
    ] {
        assert_eq!(v["oom"][0][key], s["oom"][0][key], "{key}");
    }
    for key in [
        "at_event",
        "reserved_bytes",
        "allocated_bytes",
        "largest_possible_bytes",
        "fix",
    ] {
        assert_eq!(v["fragmentation"][key], s["fragmentation"][key], "{key}");
    }
    assert_eq!(
        v["devices"][0]["peak_allocated_bytes"],
        s["devices"][0]["peak_allocated_bytes"]
    );
    assert!(text.contains("OUT OF MEMORY on device 0"), "{text}");
    assert!(text.contains("a limit on the process"), "{text}");
}

/// A real snapshot recorded with its profile on an H100: the fragmentation at the end equals
/// plain arithmetic over the raw pickle, the peak's phase is the step `snapshot` puts it in,
/// and the live blocks at the peak are named by the profile's operators.
#[test]
fn a_real_snapshots_verdict_has_its_fragmentation_phase_and_operators() {
    let snap = common::fixtures().join("snapshots/cuda_join/run.pickle");
    let (v, text) = explain(&snap, &[]);
    let want = common::python_reference(
        "snapshot_fragmentation.py",
        &[snap.as_os_str(), "0".as_ref()],
    )
    .unwrap();
    let f = &v["fragmentation"];
    assert_eq!(f["reserved_bytes"], want["reserved_bytes"]);
    assert_eq!(f["allocated_bytes"], want["allocated_bytes"]);
    assert_eq!(f["largest_possible_bytes"], want["largest_possible_bytes"]);
    let causes = f["causes"].as_array().unwrap();
    assert!(!causes.is_empty());
    for c in causes {
        assert_eq!(
            c["bytes"],
            want["causes"][c["kind"].as_str().unwrap()],
            "{c}"
        );
    }
    // Event 275, the peak, lies in the second step's annotation (events 228–414).
    assert_eq!(v["peak_phase"]["name"], "ProfilerStep#1");
    assert_eq!(v["by_operator"]["at_event"], 275);
    assert!(text.contains("by operator aten::"), "{text}");
}

/// A cluster summary: the peaks' spread equals SQL over the file's `ranks` table, and the
/// leak suspects are the ranks the overview marks.
#[test]
fn a_summarys_verdict_gives_the_spread_and_the_suspects() {
    let dir = tempfile::tempdir().unwrap();
    let db = summary_of(&common::fixtures().join("demo"), dir.path());
    let (v, text) = explain(&db, &[]);
    assert_eq!(v["kind"], "summary");
    let conn = rusqlite::Connection::open(&db).unwrap();
    let (n, lo, hi): (i64, f64, f64) = conn
        .query_row(
            "SELECT count(*), min(peak_allocated_mib), max(peak_allocated_mib) FROM ranks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!(v["ranks"], n);
    assert_eq!(v["peak_mib"]["lowest"].as_f64().unwrap(), lo);
    assert_eq!(v["peak_mib"]["highest"].as_f64().unwrap(), hi);
    assert_eq!(v["peak_mib"]["median"].as_f64().unwrap(), (lo + hi) / 2.0);
    // The demo's two ranks both leak (its generator adds a leak each step).
    assert_eq!(v["leak_suspects"].as_array().unwrap().len(), 2);
    assert!(text.contains("leak suspect"), "{text}");
}

/// `tests/reference/operator_live.py` over a rank's ASCEND_PROFILER_OUTPUT (Python's csv
/// module): the blocks' peak and the bytes per operator at `at_ms` (default that peak).
fn python_operators(out: &Path, at_ms: Option<f64>) -> Option<Value> {
    let mut args: Vec<std::ffi::OsString> = vec![out.into()];
    if let Some(t) = at_ms {
        args.push(t.to_string().into());
    }
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_os_str()).collect();
    common::python_reference("operator_live.py", &args)
}

/// On the commonest Ascend export (no host ops, so every role is "unknown"), the verdict says
/// what the peak is made of by operator, as Python sums the raw operator_memory rows alive at
/// the peak; on an export of operator_memory.csv alone, it finds the blocks' peak (Python's
/// sweep over the same rows) instead of "peak - at - ms", and its `live` command has a time.
#[test]
fn an_ascend_export_without_host_ops_is_made_of_its_operators() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let level2 = root.join("xiaobingling93-pixel_Ascend-msinsight/test/st/level2");
    let (v, text) = explain(&level2, &[]);
    let rank = v["rank"].as_str().unwrap();
    let at_ms = v["peak"]["at_ms"].as_f64().unwrap();
    let out = level2.join(format!("rank_{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
    let Some(want) = python_operators(&out, Some(at_ms)) else {
        return;
    };
    let ops = v["made_of"]["operators"].as_array().unwrap();
    assert_eq!(ops.len(), 3);
    for (got, want) in ops.iter().zip(want["by_operator"].as_array().unwrap()) {
        assert_eq!(got["name"], want[0], "{got} {want}");
        let mib = want[1].as_f64().unwrap() / 1048576.0;
        assert!(
            (got["mib"].as_f64().unwrap() - mib).abs() < 1e-6,
            "{got} {mib}"
        );
    }
    let line = text
        .lines()
        .find(|l| l.starts_with("made of (by operator): "))
        .unwrap_or_else(|| panic!("{text}"));
    let first = &want["by_operator"][0];
    assert!(
        line.contains(&format!(
            "{} {:.2} MB",
            first[0].as_str().unwrap(),
            first[1].as_f64().unwrap() / 1048576.0
        )),
        "{line}"
    );
    assert!(!text.contains("made of: unknown"), "{text}");

    let verl = root.join("verl-project_rl-insight/data");
    let (v, text) = explain(&verl, &[]);
    let out = verl.join("recipe/memory_data/20260526_085155_ascend_pt/ASCEND_PROFILER_OUTPUT");
    let Some(want) = python_operators(&out, None) else {
        return;
    };
    let peak_mib = want["peak_bytes"].as_f64().unwrap() / 1048576.0;
    let peak_ms = want["peak_at_ns"].as_f64().unwrap() / 1e6;
    assert!(
        (v["peak"]["mib"].as_f64().unwrap() - peak_mib).abs() < 1e-6,
        "{}",
        v["peak"]
    );
    assert!(
        (v["peak"]["at_ms"].as_f64().unwrap() - peak_ms).abs() < 1e-6,
        "{}",
        v["peak"]
    );
    assert_eq!(v["peak"]["of"], "blocks");
    assert!(!text.contains("peak - at -"), "{text}");
    let live = v["next"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .find(|c| c.contains(" live "))
        .unwrap_or_else(|| panic!("{}", v["next"]));
    let t: f64 = live.rsplit(' ').next().unwrap().parse().unwrap();
    assert!((t - peak_ms).abs() < 1e-6, "{live}");
    // "only 1 step", not "only 1 steps"
    assert!(!text.contains(" 1 steps"), "{text}");
}

/// A 2-rank DDP profile whose peak holds gradients is offered ZeRO-2 over its 2 ranks, the row
/// equal to `memsight whatif --zero 2 --ranks 2` run by hand.
#[test]
fn a_two_rank_profile_is_offered_zero_over_its_ranks() {
    let ddp = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pytorch/ddp");
    let (v, text) = explain(&ddp, &[]);
    let rows = v["whatif"]["levers"].as_array().unwrap();
    let zero = rows
        .iter()
        .find(|r| r["lever"] == "--zero 2 --ranks 2")
        .unwrap_or_else(|| panic!("{}", v["whatif"]));
    let rank = format!("--rank={}", v["rank"].as_str().unwrap());
    let by_hand = json_of(&[
        "whatif",
        ddp.to_str().unwrap(),
        &rank,
        "--zero",
        "2",
        "--ranks",
        "2",
        "--json",
    ]);
    assert_eq!(zero["peak_mib"], by_hand["predicted"]["peak_mib"]);
    assert!(text.contains("--zero 2 --ranks 2"), "{text}");
}

/// A cluster's verdict (issue 87): the leak suspects are the largest growers first, with how
/// many there are (SQL over the summary's step-end values: last − first), not the first five
/// by id; the outliers follow the app's overview's rule (the interquartile rule over the
/// peaks, computed here by hand from SQL) and their count equals the app's; each outlier and
/// suspect carries a command that explains it from its own profile, and it runs.
#[test]
fn a_clusters_suspects_are_the_largest_growers_and_its_outliers_the_apps() {
    use memsight::generate::{GenOptions, generate};
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("job");
    let base = GenOptions {
        allocs: 300,
        steps: 6,
        ..Default::default()
    };
    generate(
        &root.join("steady"),
        &GenOptions {
            ranks: 6,
            ..base.clone()
        },
    )
    .unwrap();
    // Seven leaking ranks; the largest grower is the last by id and folder.
    for (k, mib) in [2, 3, 4, 5, 6, 7, 400].into_iter().enumerate() {
        generate(
            &root.join(format!("leak{k}")),
            &GenOptions {
                ranks: 1,
                seed: 99 + k as u64,
                leak_per_step: mib << 20,
                ..base.clone()
            },
        )
        .unwrap();
    }
    let db = summary_of(&root, dir.path());
    let (v, text) = explain(&db, &[]);

    let conn = rusqlite::Connection::open(&db).unwrap();
    // Growth per rank: the last step's end value less the first's.
    let mut st = conn
        .prepare(
            "SELECT r.path, \
               (SELECT end_allocated_mib FROM steps WHERE rank_id = r.id ORDER BY step DESC LIMIT 1) - \
               (SELECT end_allocated_mib FROM steps WHERE rank_id = r.id ORDER BY step ASC LIMIT 1) \
             FROM ranks r",
        )
        .unwrap();
    let mut growth: Vec<(String, f64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .filter(|(p, _): &(String, f64)| p.contains("leak"))
        .collect();
    growth.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert_eq!(v["leak_suspects_total"], 7, "{}", v["leak_suspects_total"]);
    let suspects = v["leak_suspects"].as_array().unwrap();
    assert_eq!(suspects.len(), 5);
    for (s, (path, g)) in suspects.iter().zip(&growth) {
        assert!(
            (s["mib"].as_f64().unwrap() - g).abs() < 1e-6,
            "{s} {path} {g}"
        );
    }
    assert!(text.contains("7 leak suspects"), "{text}");

    // The outliers by the interquartile rule (type 7 quartiles), highest peak first.
    let mut st = conn
        .prepare("SELECT path, peak_allocated_mib FROM ranks")
        .unwrap();
    let peaks: Vec<(String, f64)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    let mut sorted: Vec<f64> = peaks.iter().map(|p| p.1).collect();
    sorted.sort_by(f64::total_cmp);
    let q = |f: f64| {
        let pos = f * (sorted.len() - 1) as f64;
        let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
        sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
    };
    let (q1, q3) = (q(0.25), q(0.75));
    let mut want: Vec<&(String, f64)> = peaks
        .iter()
        .filter(|p| p.1 > q3 + 1.5 * (q3 - q1) || p.1 < q1 - 1.5 * (q3 - q1))
        .collect();
    want.sort_by(|a, b| b.1.total_cmp(&a.1));
    assert!(!want.is_empty(), "the 400 MiB leak stands out: {peaks:?}");
    assert_eq!(v["outliers_total"], want.len());
    let app = memsight::ui::summary::OpenSummary::read(&db).unwrap();
    assert_eq!(app.outliers_by_peak.len(), want.len(), "the app's count");
    for (o, w) in v["outliers"].as_array().unwrap().iter().zip(&want) {
        assert_eq!(o["peak_mib"].as_f64(), Some(w.1));
    }
    // Each one's command runs.
    let first_outlier = v["outliers"][0]["next"].as_str().unwrap();
    let first_suspect = suspects[0]["next"].as_str().unwrap();
    for cmd in [first_outlier, first_suspect] {
        let bin = env!("CARGO_BIN_EXE_memsight");
        let line = format!("{bin}{}", cmd.strip_prefix("memsight").unwrap());
        let out = std::process::Command::new("bash")
            .args(["-c", &line])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{cmd}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Issue 88: explain speaks Chinese when asked, on each kind of verdict: real OOM snapshots
/// (a cap on the process, fragmentation), a snapshot recorded with its profile, and a cluster
/// summary. The same figures in both; no English in the Chinese but the names its JSON carries
/// (less its sentences: the advice, fixes and how to hold less, which are said in Chinese),
/// units and the terms kept; the Chinese of the advice is the app's own words for it.
#[test]
fn explain_speaks_chinese_on_snapshots_and_summaries() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let db = summary_of(&common::fixtures().join("demo"), dir.path());
    let paths = [
        root.join("cuda_h100/oom/gpt/oom_snapshot.pickle"),
        root.join("cuda_h100/oom/fragmentation/oom_snapshot.pickle"),
        common::fixtures().join("snapshots/cuda_join/run.pickle"),
        db,
    ];
    // Strings of the verdict, less its sentences.
    fn names(v: &Value, key: &str, out: &mut Vec<String>) {
        match v {
            Value::String(s) if !["advice", "how", "fix"].contains(&key) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|x| names(x, key, out)),
            Value::Object(m) => m.iter().for_each(|(k, x)| names(x, k, out)),
            _ => {}
        }
    }
    for path in &paths {
        let p = path.display().to_string();
        let (v, en) = explain(path, &["--lang", "en"]);
        let (_, zh) = explain(path, &["--lang", "zh"]);
        // The allocator's settings and calls are code: said as written.
        let mut carried: Vec<String> = common::ALLOCATOR_CODE.map(String::from).to_vec();
        names(&v, "", &mut carried);
        common::assert_said_in_chinese(&en, &zh, &carried, &[]);
        // The OOM's advice in Chinese is the app's: the typed advice rendered in Chinese.
        for o in v["oom"].as_array().into_iter().flatten() {
            let en_advice = o["advice"].as_str().unwrap();
            assert!(en.contains(en_advice), "{p}");
            assert!(!zh.contains(en_advice), "{p}: {zh}");
        }
        if v["kind"] == "snapshot" && !v["oom"].as_array().unwrap().is_empty() {
            assert!(zh.contains("内存不足"), "{p}: {zh}");
            assert!(zh.contains("修复："), "{p}: {zh}");
        }
    }
}
