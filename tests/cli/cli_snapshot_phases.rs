//! The snapshot's `external_annotations` as phases (issue 45, part 3): `memsight snapshot
//! --json`'s `phases` and `live_by_phase` against plain arithmetic over the raw pickle
//! (`tests/reference/snapshot_phases.py`, no memsight code), on the real H100 snapshot taken with
//! the profiler's step, forward, backward and optimizer annotations, and on a made pickle with
//! the awkward cases: an unclosed START, an END without START, a name nested in itself, an
//! entry without a time, another device, and a device whose events have no time. The
//! allocations of `torch.compile`d regions (`compile_contexts`) are checked the same way.

use std::path::{Path, PathBuf};

use crate::common;

/// The reference's document, or None without python3 (a failure in CI).
fn reference(pickle: &Path, device: i64, at: Option<usize>) -> Option<serde_json::Value> {
    let (device, at) = (device.to_string(), at.map(|k| k.to_string()));
    let mut args = vec![pickle.as_os_str(), device.as_ref()];
    args.extend(at.as_deref().map(std::ffi::OsStr::new));
    common::python_reference("snapshot_phases.py", &args)
}

/// Checks memsight's phases and live blocks by phase for `device` at `at` against the
/// reference's; the number of phases.
fn check(pickle: &Path, device: i64, at: Option<usize>) -> Option<usize> {
    let want = reference(pickle, device, at)?;
    let mut args = vec![
        "snapshot".to_string(),
        pickle.display().to_string(),
        "--json".into(),
        "--device".into(),
        device.to_string(),
    ];
    if let Some(k) = at {
        args.extend(["--at-event".into(), k.to_string()]);
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let (code, out, err) = common::memsight(&args);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    let phases: Vec<&serde_json::Value> = got["phases"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["device"] == device)
        .collect();
    let what = format!("{} device {device} at {at:?}", pickle.display());
    assert_eq!(
        phases,
        want["phases"]
            .as_array()
            .unwrap()
            .iter()
            .collect::<Vec<_>>(),
        "{what}"
    );
    let sorted = |v: &serde_json::Value| {
        let mut g: Vec<String> = v
            .as_array()
            .unwrap()
            .iter()
            .map(|g| g.to_string())
            .collect();
        g.sort();
        g
    };
    // serde_json sorts object keys, so equal groups print alike.
    assert_eq!(
        sorted(&got["live_by_phase"]["groups"]),
        sorted(&want["live_by_phase"]),
        "{what}"
    );
    assert_eq!(
        sorted(&got["compile_contexts"]),
        sorted(&want["compile_contexts"]),
        "{what}"
    );
    Some(phases.len())
}

fn real() -> Option<PathBuf> {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return None;
    };
    Some(root.join("cuda_h100/snap/gpt_all_graph_pinned.pickle"))
}

#[test]
fn phases_of_a_real_training_step_match_the_raw_pickle() {
    let Some(p) = real() else { return };
    // At the end, at the peak (event 1963, in step 1's backward) and early in step 0.
    for at in [None, Some(1963), Some(500)] {
        let Some(n) = check(&p, 0, at) else { return };
        assert_eq!(
            n, 12,
            "two steps of step, forward, backward, optimizer, its step, zero_grad"
        );
    }
    // At the peak the activations (allocated in forward) hold the most, as the text says.
    let (code, text, err) =
        common::memsight(&["snapshot", p.to_str().unwrap(), "--at-event", "1963"]);
    assert_eq!(code, 0, "{err}");
    let live = text
        .split("by the phase that allocated them:")
        .nth(1)
        .expect("the live blocks by phase");
    assert!(
        live.lines().nth(1).is_some_and(|l| l.ends_with("forward")),
        "{live}"
    );
    assert!(text.contains("  backward"), "{text}");
}

/// A real torch.compile run on an H200 (fixtures/snapshots/cuda_compiled): its annotations and
/// the allocations of its compiled region, at the end, at the peak and inside the region.
#[test]
fn a_torch_compile_run_names_its_phases_and_compiled_region() {
    let p = common::fixtures().join("snapshots/cuda_compiled/compiled.pickle");
    for at in [None, Some(100), Some(900)] {
        let Some(n) = check(&p, 0, at) else { return };
        assert_eq!(n, 12);
    }
    let (code, out, err) = common::memsight(&["snapshot", p.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&out).unwrap();
    let regions = doc["compile_contexts"].as_array().unwrap();
    assert_eq!(regions.len(), 1, "{regions:?}");
    assert_eq!(regions[0]["context"], "Torch-Compiled Region: 0/0");
}

#[test]
fn awkward_annotations_are_paired_as_the_reference_pairs_them() {
    let tmp = tempfile::tempdir().unwrap();
    let pickle = tmp.path().join("made.pickle");
    let code = r#"
import pickle, sys
ev = lambda a, addr, size, t: {"action": a, "addr": addr, "size": size, "stream": 0,
                               "time_us": t, "frames": []}
d0 = [ev("alloc", 0, 100, 10), ev("alloc", 100, 50, 20), ev("free_requested", 100, 50, 30),
      ev("free_completed", 100, 50, 31), ev("alloc", 200, 70, 40), ev("alloc", 300, 5, 60)]
d1 = [{"action": "alloc", "addr": 0, "size": 8, "stream": 0, "frames": []}]
seg = lambda dev, addr, blocks: {"device": dev, "address": addr, "total_size": 1024,
    "allocated_size": 0, "active_size": 0, "stream": 0, "segment_type": "large",
    "is_expandable": False, "blocks": blocks, "frames": []}
blk = lambda addr, size: {"address": addr, "size": size, "requested_size": size,
                          "state": "active_allocated", "frames": []}
ann = lambda stage, name, t, dev=0: {"stage": stage, "name": name, "device": dev, "time_us": t}
snap = {"segments": [seg(0, 0, [blk(0, 100), blk(200, 70), blk(300, 5)]),
                     seg(1, 0, [blk(0, 8)])],
        "device_traces": [d0, d1],
        "external_annotations": [
            ann("END", "orphan", 5),                     # no START: dropped
            ann("START", "step", 8), ann("START", "step", 15),  # step nested in step
            ann("END", "step", 35), ann("START", "forward", 38),
            {"stage": "START", "name": "no time"},        # no time: dropped
            ann("END", "forward", 45), ann("END", "step", 50),
            ann("START", "tail", 55),                    # never ends
            ann("START", "other", 1, 1), ann("END", "other", 9, 1)]}
pickle.dump(snap, open(sys.argv[1], "wb"))
"#;
    let ran = std::process::Command::new("python3")
        .args(["-c", code])
        .arg(&pickle)
        .status()
        .is_ok_and(|s| s.success());
    if !ran {
        common::skip("python3 not available");
        return;
    }
    for at in [None, Some(1), Some(3), Some(5)] {
        let Some(n) = check(&pickle, 0, at) else {
            return;
        };
        assert_eq!(n, 4, "step, step, forward, tail");
    }
    // Device 1's event has no time: its phase spans no event, and its block is outside it.
    assert_eq!(check(&pickle, 1, None), Some(1));
}
