//! A snapshot beside a profile of the same run, joined by time (issue 45, part 4):
//! `memsight snapshot S.pickle --profile TRACE` names the live blocks by the profile's operator
//! and step. Checked against plain arithmetic over the raw files
//! (`tests/reference/snapshot_profile_join.py`, no memsight code) on the real H100 trace of a GPT
//! training step, with a snapshot of that trace's own allocations on the allocator's clock
//! (`tests/reference/make_snapshot_of_trace.py`: no GPU here to record both at once); and the
//! refusals on real files: two real runs 8 s apart, and a torch_npu snapshot, which has no times.

use std::path::{Path, PathBuf};

use crate::common;

fn trace() -> Option<PathBuf> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    Some(root.join("cuda_h100/whatif/gpt_b8.pt.trace.json.gz"))
}

/// A snapshot of `trace`'s allocations, `shift_s` seconds later, written into `dir`.
fn snapshot_of(trace: &Path, dir: &Path, shift_s: &str) -> Option<PathBuf> {
    let out = dir.join(format!("snap_{shift_s}.pickle"));
    common::snapshot_of_trace(trace, &out, shift_s).then_some(out)
}

fn json_of(args: &[&str]) -> serde_json::Value {
    let (code, out, err) = common::memsight(args);
    assert_eq!(code, 0, "{err}");
    serde_json::from_str(&out).unwrap()
}

/// memsight's join at `at` (None: its default, the peak) against the reference's.
fn check(snap: &Path, trace: &Path, at: Option<usize>) -> serde_json::Value {
    let (s, t) = (snap.display().to_string(), trace.display().to_string());
    let k = at.map(|k| k.to_string());
    let mut args = vec!["snapshot", &s, "--profile", &t, "--json"];
    if let Some(k) = &k {
        args.extend(["--at-event", k]);
    }
    let got = json_of(&args);
    let join = &got["profile_join"];
    let moment = join["at_event"].as_u64().unwrap().to_string();
    if at.is_none() {
        // The default moment is the device's allocated peak.
        assert_eq!(join["at_event"], got["devices"][0]["peak_event"]);
    }
    let want = common::python_reference(
        "snapshot_profile_join.py",
        &[snap.as_os_str(), trace.as_os_str(), moment.as_ref()],
    )
    .unwrap();
    for key in [
        "base_time_ns",
        "clock_offset_ns",
        "alloc_events",
        "in_profile",
        "matched",
        "blocks",
    ] {
        assert_eq!(join[key], want[key], "{key} at {moment}");
    }
    // The groups add up to the blocks.
    let total: i64 = join["live"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["bytes"].as_i64().unwrap())
        .sum();
    let blocks: i64 = want["blocks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["size"].as_i64().unwrap())
        .sum();
    assert_eq!(total, blocks);
    got
}

#[test]
fn a_snapshot_of_the_same_run_gets_the_profiles_operators_and_steps() {
    let Some(trace) = trace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(snap) = snapshot_of(&trace, dir.path(), "0") else {
        return;
    };
    let got = check(&snap, &trace, None);
    let join = &got["profile_join"];
    // Every allocation is the trace's own: all matched, and named.
    assert_eq!(join["matched"], join["alloc_events"]);
    assert!(
        join["blocks"]
            .as_array()
            .unwrap()
            .iter()
            .all(|b| b["op"].as_str().is_some_and(|o| o.starts_with("aten::")))
    );
    check(&snap, &trace, Some(1000));
    // Half a millisecond off (clocks read a little apart): still the same allocations.
    let Some(late) = snapshot_of(&trace, dir.path(), "0.0005") else {
        return;
    };
    let got = check(&late, &trace, None);
    assert_eq!(got["profile_join"]["matched"], join["matched"]);
    let (_, text, _) = common::memsight(&[
        "snapshot",
        &snap.display().to_string(),
        "--profile",
        &trace.display().to_string(),
    ]);
    assert!(text.contains("1455 of 1455 allocations matched"), "{text}");
    assert!(text.contains("aten::_softmax  step 1"), "{text}");
}

#[test]
fn a_trace_beside_the_snapshot_is_joined_without_being_named() {
    let Some(trace) = trace() else { return };
    let dir = tempfile::tempdir().unwrap();
    std::fs::copy(&trace, dir.path().join("gpt_b8.pt.trace.json.gz")).unwrap();
    let Some(snap) = snapshot_of(&trace, dir.path(), "0") else {
        return;
    };
    let got = json_of(&["snapshot", &snap.display().to_string(), "--json"]);
    assert_eq!(got["profile_join"]["matched"], 1455);
    // Not of this run: a note, and the snapshot still reads.
    let Some(other) = snapshot_of(&trace, dir.path(), "30") else {
        return;
    };
    let (code, out, err) = common::memsight(&["snapshot", &other.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("note: not joined"), "{err}");
    assert!(
        err.contains("29.") && err.contains("after the profile's last allocation"),
        "{err}"
    );
    assert!(!out.contains("joined by time"), "{out}");
}

#[test]
fn records_that_cannot_be_joined_say_why() {
    let Some(trace) = trace() else { return };
    let root = common::samples().unwrap();
    let t = trace.display().to_string();
    // Two real runs of the same machine, seconds apart.
    let real = root
        .join("cuda_h100/snap/gpt_all_graph_pinned.pickle")
        .display()
        .to_string();
    let (code, _, err) = common::memsight(&["snapshot", &real, "--profile", &t]);
    assert_ne!(code, 0);
    assert!(err.contains("do not overlap in time"), "{err}");
    assert!(err.contains("after the profile's last allocation"), "{err}");
    // torch_npu writes no times.
    let npu = root
        .join("xiaobingling93-pixel_Ascend-msinsight/scripts/MemSnapDump/test/test-data/snapshot_expandable.pkl")
        .display()
        .to_string();
    let (code, _, err) = common::memsight(&["snapshot", &npu, "--profile", &t]);
    assert_ne!(code, 0);
    assert!(err.contains("no times (time_us)"), "{err}");
}

/// What the app's band tooltips name (`ProfileJoin::event_ops`, not in the JSON): the operator
/// and step of each matched allocation event, the same as the reference gives each live
/// block's allocating event, at the peak and at event 1000; and nothing for a free.
#[test]
fn each_matched_allocation_event_names_the_reference_operator_and_step() {
    use memsight::snapshot::Action;
    let Some(trace) = trace() else { return };
    let dir = tempfile::tempdir().unwrap();
    let Some(snap_path) = snapshot_of(&trace, dir.path(), "0") else {
        return;
    };
    let snap = memsight::snapshot::AllocatorSnapshot::open(&snap_path).unwrap();
    let (data, base) =
        memsight::ingest::pytorch::trace::load_device_rank(&trace, "cuda:0").unwrap();
    let s = snap_path.display().to_string();
    let peak = json_of(&["snapshot", &s, "--json"])["devices"][0]["peak_event"]
        .as_u64()
        .unwrap() as usize;
    for at in [peak, 1000] {
        let j = memsight::snapshot::join::join_profile(&snap, 0, Some(at), &data, base).unwrap();
        let moment = at.to_string();
        let want = common::python_reference(
            "snapshot_profile_join.py",
            &[snap_path.as_os_str(), trace.as_os_str(), moment.as_ref()],
        )
        .unwrap();
        let blocks = want["blocks"].as_array().unwrap();
        assert!(!blocks.is_empty());
        for b in blocks {
            let k = b["event"].as_u64().unwrap() as usize;
            let (op, step) = j.event_ops[k].clone().expect("matched");
            assert_eq!(&*op, b["op"].as_str().unwrap(), "event {k}");
            assert_eq!(step, b["step"].as_i64(), "event {k}");
        }
        let trace_events = snap.trace(0);
        assert_eq!(j.event_ops.len(), trace_events.len());
        for (k, e) in trace_events.iter().enumerate() {
            if e.action != Action::Alloc {
                assert!(j.event_ops[k].is_none(), "event {k} is not an allocation");
            }
        }
    }
}

/// A real snapshot and profile recorded at once on an H100 (`fixtures/snapshots/cuda_join`).
fn real_pair() -> (PathBuf, PathBuf) {
    let dir = common::fixtures().join("snapshots/cuda_join");
    (dir.join("run.pickle"), dir.join("run.pt.trace.json.gz"))
}

/// On a real paired recording every allocation is joined, and to the right one: each live
/// block's profile allocation is the trace's `[memory]` event at the block's own address (the
/// trace's `Addr`, which the join does not read), of its size rounded up to the allocator's
/// 512-byte block, at the joined time. The join also agrees with the reference arithmetic, at
/// the peak and mid-step, and the trace beside the snapshot is joined without being named.
#[test]
fn a_real_paired_recording_joins_every_allocation_to_its_own_address() {
    let (snap, trace) = real_pair();
    let oracle =
        common::python_reference("trace_allocations.py", &[trace.as_os_str(), "0".as_ref()])
            .unwrap();
    let allocations: std::collections::HashSet<(u64, i64, i64)> = oracle["allocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a[0].as_u64().unwrap(),
                a[1].as_i64().unwrap(),
                a[2].as_i64().unwrap(),
            )
        })
        .collect();
    assert!(!allocations.is_empty());
    for at in [None, Some(100)] {
        let got = check(&snap, &trace, at);
        let join = &got["profile_join"];
        // 21 of the 213 are scalars of 4 to 64 bytes, which the profile records as 512.
        assert_eq!(join["alloc_events"], 213);
        assert_eq!(join["matched"], 213);
        let blocks = join["blocks"].as_array().unwrap();
        assert!(blocks.len() > 10, "{blocks:?}");
        for b in blocks {
            let size = b["size"].as_i64().unwrap();
            let rounded = (size + 511) / 512 * 512;
            let key = (
                b["addr"].as_u64().unwrap(),
                rounded,
                b["profile_ns"].as_i64().unwrap(),
            );
            assert!(allocations.contains(&key), "{b}");
        }
    }
    // The peak's holders by operator and step, as a user reads them.
    let s = snap.display().to_string();
    let (code, text, err) = common::memsight(&["snapshot", &s]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("213 of 213 allocations matched"), "{text}");
    assert!(
        text.contains("128.00 MB in 2 blocks  aten::gelu  step 1"),
        "{text}"
    );
}

/// Two stacks named by the same line of the user's code (AdamW's two state tensors, both made
/// inside `opt.step()`) are told apart by the innermost frame where they differ.
#[test]
fn two_stacks_named_by_one_line_are_told_apart() {
    let (snap, _) = real_pair();
    let got = json_of(&["snapshot", &snap.display().to_string(), "--json"]);
    let rows = got["top_stacks"].as_array().unwrap();
    let mut shared = 0;
    for (i, a) in rows.iter().enumerate() {
        for b in &rows[i + 1..] {
            if a["frame"].is_null() || a["frame"] != b["frame"] {
                continue;
            }
            shared += 1;
            assert!(!a["via"].is_null() && !b["via"].is_null(), "{a} {b}");
            assert_ne!(a["via"], b["via"]);
            for r in [a, b] {
                assert!(r["frames"].as_array().unwrap().contains(&r["via"]), "{r}");
            }
        }
    }
    assert!(shared >= 1, "{rows:?}");
    let (_, text, _) = common::memsight(&["snapshot", &snap.display().to_string()]);
    assert!(text.contains("(via adam.py(178): _init_group)"), "{text}");
    assert!(text.contains("(via adam.py(182): _init_group)"), "{text}");
}
