//! `memsight snapshot`'s fragmentation diagnosis (issue 45) against plain segment and block
//! arithmetic over the raw pickles (`tests/reference/snapshot_fragmentation.py`, no memsight
//! code), on every real snapshot of the samples; and the verdict against what really happened
//! when each H100 OOM program was run again with `expandable_segments:True`.

use std::path::{Path, PathBuf};

use crate::common;

/// The reference's figures for `device` of `pickle` at its own state, or None without python3
/// (a failure in CI).
fn reference(pickle: &Path, device: i64) -> Option<serde_json::Value> {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/snapshot_fragmentation.py");
    match std::process::Command::new("python3")
        .arg(script)
        .arg(pickle)
        .arg(device.to_string())
        .output()
    {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        other => {
            common::skip(&format!("python3 reference not available ({other:?})"));
            None
        }
    }
}

/// `memsight snapshot PICKLE --json ARGS`'s document.
fn snapshot_json(pickle: &Path, args: &[&str]) -> serde_json::Value {
    let mut all = vec!["snapshot", pickle.to_str().unwrap(), "--json"];
    all.extend(args);
    let (code, out, err) = common::memsight(&all);
    assert_eq!(code, 0, "{}: {err}", pickle.display());
    serde_json::from_str(&out).unwrap()
}

/// The fragmentation object's causes as {kind: bytes}.
fn causes(f: &serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    f["causes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["kind"].as_str().unwrap().to_string(), c["bytes"].clone()))
        .collect()
}

/// Checks memsight's `fragmentation` against the reference: the same bytes for every cause,
/// reserved, allocated and the largest possible request.
fn assert_matches(got: &serde_json::Value, want: &serde_json::Value, what: &str) {
    assert_eq!(&causes(got), want["causes"].as_object().unwrap(), "{what}");
    for key in [
        "reserved_bytes",
        "allocated_bytes",
        "largest_possible_bytes",
    ] {
        assert_eq!(got[key], want[key], "{what}: {key}");
    }
    let sum: i64 = causes(got).values().map(|v| v.as_i64().unwrap()).sum();
    let free = got["reserved_bytes"].as_i64().unwrap() - got["allocated_bytes"].as_i64().unwrap();
    assert_eq!(
        sum, free,
        "{what}: the causes add up to reserved − allocated"
    );
}

/// The real snapshots; `None` (after saying so) when the samples are not here.
fn real_snapshots() -> Option<Vec<PathBuf>> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    let mut v: Vec<PathBuf> = [
        "exhaustion",
        "exhaustion_expandable",
        "fragmentation",
        "gpt",
        "gpt_expandable",
    ]
    .iter()
    .map(|c| root.join(format!("cuda_h100/oom/{c}/oom_snapshot.pickle")))
    .collect();
    v.push(root.join("cuda_h100/snap/gpt_all_graph_pinned.pickle"));
    v.extend(common::sample_snapshots());
    for p in &v {
        assert!(p.is_file(), "{} is missing", p.display());
    }
    Some(v)
}

#[test]
fn the_causes_match_segment_arithmetic_over_every_real_snapshot() {
    let mut checked = 0;
    let Some(snapshots) = real_snapshots() else {
        return;
    };
    for pickle in snapshots {
        let doc = snapshot_json(&pickle, &[]);
        for d in doc["devices"].as_array().unwrap() {
            let device = d["device"].as_i64().unwrap();
            // The trace's length: its events counted by action.
            let events: u64 = d["events"]
                .as_object()
                .unwrap()
                .values()
                .map(|n| n.as_u64().unwrap())
                .sum();
            let Some(want) = reference(&pickle, device) else {
                return;
            };
            // At the snapshot's own state: its last event.
            let mut args = vec!["--device".to_string(), device.to_string()];
            if events > 0 {
                args.extend(["--at-event".into(), (events - 1).to_string()]);
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let got = snapshot_json(&pickle, &args);
            assert_matches(
                &got["fragmentation"],
                &want,
                &format!("{} device {device}", pickle.display()),
            );
            checked += 1;
        }
    }
    assert!(checked >= 11, "{checked} devices checked");
}

/// The fix named must be the one that worked: `expandable_segments:True` let the fragmentation
/// program pass, and did not save the exhaustion and GPT programs (their reruns' result.json).
#[test]
fn the_oom_verdict_names_the_fix_that_worked_on_the_rerun() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    for case in ["fragmentation", "exhaustion", "gpt"] {
        let dir = root.join(format!("cuda_h100/oom/{case}"));
        let pickle = dir.join("oom_snapshot.pickle");
        let worked = common::expandable_rerun_passed(&root, case);
        let doc = snapshot_json(&pickle, &[]);
        let oom = &doc["oom"][0];
        let f = &doc["fragmentation"];
        assert_eq!(f["at_event"], oom["event"], "{case}: diagnosed at the OOM");
        let (code, text, err) = common::memsight(&["snapshot", pickle.to_str().unwrap()]);
        assert_eq!(code, 0, "{err}");
        let names_expandable =
            text.contains("the fix: PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
        let says_no = text.contains("expandable_segments will not help");
        assert_eq!(names_expandable, worked, "{case}: {text}");
        assert_eq!(says_no, !worked, "{case}: {text}");
        if worked {
            assert_eq!(
                f["causes"][0]["kind"], "split_across_segments",
                "{case}: {f}"
            );
            assert!(
                f["fix"]
                    .as_str()
                    .unwrap()
                    .contains("expandable_segments:True")
            );
            // The OOM is the snapshot's last event: the reference's state is the OOM's.
            if let Some(want) = reference(&pickle, 0) {
                assert_matches(f, &want, case);
            }
            // The request did not fit in the largest piece.
            assert!(f["largest_possible_bytes"].as_i64() < oom["requested_bytes"].as_i64());
        }
        check_advice(case, &pickle, &dir, worked, oom);
    }
}

/// The advice follows the verdict in `snapshot --json` and in `explain` (text and JSON): the
/// fragmentation fix only where it worked on the re-run, never an empty `fix:`, and for a cap
/// or an exhausted device by how much, from PyTorch's own message: the request less what was
/// "reserved by PyTorch but unallocated".
fn check_advice(case: &str, pickle: &Path, dir: &Path, worked: bool, oom: &serde_json::Value) {
    let kind = oom["advice"]["kind"].as_str().unwrap();
    assert_eq!(kind == "defragment", worked, "{case}: {oom}");
    let (code, text, err) = common::memsight(&["explain", pickle.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let fixes: Vec<&str> = text.lines().filter(|l| l.starts_with("fix:")).collect();
    assert_eq!(fixes.len(), 1, "{case}: {text}");
    assert!(fixes[0].len() > "fix: ".len() + 10, "{case}: {text}");
    assert_eq!(
        fixes[0].contains("expandable_segments:True"),
        worked,
        "{text}"
    );
    if !worked {
        assert!(fixes[0].contains("will not help"), "{text}");
        // The fragmentation fix, when there is one, is said not to be why it ran out.
        for l in text
            .lines()
            .filter(|l| l.contains("expandable_segments:True"))
        {
            assert!(l.contains("not why it ran out"), "{case}: {l}");
        }
        let result: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("result.json")).unwrap())
                .unwrap();
        let message = result["error"].as_str().unwrap();
        let asked = amount_before(message, "Tried to allocate ", "");
        let unallocated =
            amount_before(message, ", and ", " is reserved by PyTorch but unallocated");
        let short = oom["advice"]["short_bytes"].as_f64().unwrap();
        // PyTorch prints two decimals.
        assert!(
            (short - (asked - unallocated)).abs() <= 0.01 * 1024.0 * 1024.0,
            "{case}: short {short}, PyTorch: asked {asked} less unallocated {unallocated}"
        );
        assert!(
            fixes[0].contains(&format!("{:.2} MB", short / 1024.0 / 1024.0)),
            "{case}: {}",
            fixes[0]
        );
    }
    let (code, out, err) = common::memsight(&["explain", pickle.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["oom"][0]["advice_kind"], kind, "{case}");
}

/// The amount PyTorch's OOM message prints right after `prefix` (and before `suffix`), in
/// bytes: "384.00 MiB", "1.31 GiB", "0 bytes".
fn amount_before(message: &str, prefix: &str, suffix: &str) -> f64 {
    let start = if suffix.is_empty() {
        message.find(prefix).unwrap() + prefix.len()
    } else {
        let end = message.find(suffix).unwrap();
        message[..end].rfind(prefix).unwrap() + prefix.len()
    };
    let mut words = message[start..].split_whitespace();
    let value: f64 = words.next().unwrap().parse().unwrap();
    let unit = words.next().unwrap().trim_end_matches('.');
    value
        * match unit {
            "bytes" => 1.0,
            "KiB" => 1024.0,
            "MiB" => 1024.0 * 1024.0,
            "GiB" => 1024.0 * 1024.0 * 1024.0,
            other => panic!("unit {other}"),
        }
}

/// Issue 88: `snapshot --lang zh` says the whole report in Chinese, on every real snapshot of
/// the samples and the fixture joined with its profile (OOMs of each verdict, phases, pools,
/// pinned memory, compiled regions, a joined profile): the same figures as the English, no
/// English but the names the JSON carries (frames, phases, operators, block and event kinds),
/// the allocator's settings and calls, and the terms kept; the OOM's advice and the fix are the
/// app's own words, not the English.
#[test]
fn the_snapshot_report_speaks_chinese() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let mut files: Vec<PathBuf> = ["exhaustion", "fragmentation", "gpt"]
        .iter()
        .map(|c| root.join(format!("cuda_h100/oom/{c}/oom_snapshot.pickle")))
        .collect();
    files.push(root.join("cuda_h100/snap/gpt_all_graph_pinned.pickle"));
    files.push(common::fixtures().join("snapshots/cuda_join/run.pickle"));
    // Every string of the JSON but its sentences, and the keys (block and event kinds).
    fn names(v: &serde_json::Value, key: &str, out: &mut Vec<String>) {
        match v {
            serde_json::Value::String(s) if !["advice_text", "fix"].contains(&key) => {
                out.push(s.clone())
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| names(x, key, out)),
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    out.push(k.clone());
                    names(x, k, out);
                }
            }
            _ => {}
        }
    }
    for file in &files {
        let p = file.to_str().unwrap();
        let (code, en, err) = common::memsight(&["snapshot", p, "--lang", "en"]);
        assert_eq!(code, 0, "{err}");
        let (_, zh, _) = common::memsight(&["snapshot", p, "--lang", "zh"]);
        let (_, json, _) = common::memsight(&["snapshot", p, "--json"]);
        let v: serde_json::Value = serde_json::from_str(&json).unwrap();
        let mut carried: Vec<String> = common::ALLOCATOR_CODE.map(String::from).to_vec();
        carried.extend(
            [
                "record_pinned_host_memory",
                "fx_original_trace",
                "torch.compile",
                "FX",
                "pid",
                "memUsageInfo",
                "CANN",
                "msMemScope",
                "record_cuda=False",
            ]
            .map(String::from),
        );
        names(&v, "", &mut carried);
        // The frames the text names, short (`file(line): name`), and what a stack was reached
        // through: as the English prints them, `  (via FRAME)` at a line's end.
        for t in v["top_stacks"].as_array().into_iter().flatten() {
            if let Some(name) = t["frame"]["name"].as_str() {
                carried.push(name.to_string());
            }
            if let Some(file) = t["frame"]["filename"].as_str() {
                carried.push(file.to_string());
            }
        }
        for line in en.lines() {
            if let Some((_, via)) = line.split_once("  (via ") {
                carried.push(via.trim_end_matches(')').to_string());
            }
        }
        common::assert_said_in_chinese(&en, &zh, &carried, &["aten"]);
        for o in v["oom"].as_array().into_iter().flatten() {
            let advice = o["advice_text"].as_str().unwrap();
            assert!(en.contains(advice), "{p}");
            assert!(!zh.contains(advice), "{p}: the advice in Chinese\n{zh}");
        }
    }
}
