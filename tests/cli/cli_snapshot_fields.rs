//! The 2026 snapshot fields (issue 45, part 3): FX-augmented frames (`fx_original_trace`, which
//! PyTorch 2.15's own `_augment_memory_snapshot_stack_traces` added to a real `torch.compile`
//! graph's generated code) name the model's line, and pinned host memory (`host_segments` /
//! `host_traces`) is summed apart from the devices. `memsight snapshot --json` against plain
//! arithmetic over the raw pickle (`tests/reference/snapshot_fx_pinned.py`, no memsight code).

use std::path::{Path, PathBuf};

use crate::common;

/// A file of `fixtures/snapshots/fx_pinned`, or, with a folder, of `fixtures/snapshots`.
fn fixture(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/snapshots");
    match name.contains('/') {
        true => dir.join(name),
        false => dir.join("fx_pinned").join(name),
    }
}

/// memsight's holder rows as the reference writes them: [frame text, bytes, blocks].
fn rows(v: &serde_json::Value) -> serde_json::Value {
    v.as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let f = &t["frame"];
            if f.is_null() {
                return serde_json::json!([null, t["bytes"], t["blocks"]]);
            }
            let text = format!(
                "{}({}): {}",
                f["filename"].as_str().unwrap(),
                f["line"],
                f["name"].as_str().unwrap()
            );
            serde_json::json!([text, t["bytes"], t["blocks"]])
        })
        .collect()
}

fn check(name: &str) -> serde_json::Value {
    let path = fixture(name);
    let Some(want) =
        common::python_reference("snapshot_fx_pinned.py", &[path.as_os_str(), "10".as_ref()])
    else {
        return serde_json::Value::Null;
    };
    let p = path.display().to_string();
    let (code, out, err) = common::memsight(&["snapshot", &p, "--json", "--top", "10"]);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        rows(&got["top_stacks"]),
        want["top_stacks"],
        "{name}: top stacks"
    );
    assert_eq!(got["fx_frames_mapped"], want["fx_frames_mapped"], "{name}");
    let (mut pinned, want_pinned) = (got["pinned_host"].clone(), &want["pinned_host"]);
    if let Some(o) = pinned.as_object_mut() {
        let top = rows(&o["top_stacks"]);
        o.insert("top_stacks".into(), top);
    }
    assert_eq!(&pinned, want_pinned, "{name}: pinned host memory");
    want
}

/// A real FX-augmented snapshot (`torch.compile(backend="aot_eager")` on an H100, torch 2.11,
/// `_snapshot(augment_with_fx_traces=True)`): the generated code's frames are named by the
/// model's own lines, as the reference reads them.
#[test]
fn a_real_compiled_models_generated_frames_are_named_by_its_lines() {
    let want = check("cuda_join/fx.pickle");
    if want.is_null() {
        return;
    }
    assert_eq!(want["fx_frames_mapped"], 13);
    let p = fixture("cuda_join/fx.pickle").display().to_string();
    let (_, text, _) = common::memsight(&["snapshot", &p]);
    assert!(text.contains("13 frames of FX-generated code"), "{text}");
    assert!(
        text.contains("make_cuda_snapshot_with_profile.py(31): forward"),
        "{text}"
    );
}

#[test]
fn fx_generated_frames_are_named_by_the_models_line() {
    let want = check("fx_pinned.pickle");
    if want.is_null() {
        return;
    }
    // Stated by hand too: the two live blocks ran two lines of generated code, both made by
    // one line of the model (`h = torch.relu(self.up(x))` in the script that made the file);
    // three generated lines were mapped in all.
    let holder = want["top_stacks"][0][0].as_str().unwrap();
    assert!(holder.starts_with("/home/user/model.py("), "{holder}");
    assert_eq!(want["top_stacks"][0][2], 2);
    assert_eq!(want["fx_frames_mapped"], 3);
    let p = fixture("fx_pinned.pickle").display().to_string();
    let (_, text, _) = common::memsight(&["snapshot", &p]);
    assert!(text.contains(holder), "{text}");
    assert!(!text.contains("fx_generated_"), "{text}");
    assert!(text.contains("3 frames of FX-generated code"), "{text}");
}

#[test]
fn pinned_host_memory_is_summed_apart_from_the_devices() {
    let want = check("fx_pinned.pickle");
    if want.is_null() {
        return;
    }
    // 8 MiB live + 4 MiB waiting: 12 MiB at event 3, before the first buffer was freed.
    assert_eq!(want["pinned_host"]["peak_allocated_bytes"], 12 << 20);
    let p = fixture("fx_pinned.pickle").display().to_string();
    let (_, text, _) = common::memsight(&["snapshot", &p]);
    assert!(
        text.contains("pinned host memory (record_pinned_host_memory): 12.00 MB reserved"),
        "{text}"
    );
    // The device's figures do not count it.
    assert!(
        text.contains("reserved 8.00 MB, allocated 5.00 MB"),
        "{text}"
    );
}

#[test]
fn a_snapshot_of_pinned_memory_alone_reads_with_its_trace_as_lists() {
    let want = check("pinned_only.pickle");
    if want.is_null() {
        return;
    }
    assert_eq!(want["pinned_host"]["events"], 8);
    let p = fixture("pinned_only.pickle").display().to_string();
    let (code, text, err) = common::memsight(&["snapshot", &p]);
    assert_eq!(code, 0, "{err}");
    assert!(text.contains("no device memory in this snapshot"), "{text}");
    assert!(!text.contains("fragmentation"), "{text}");
}

#[test]
fn a_snapshot_without_the_fields_says_nothing_of_them() {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/snapshots/cuda_compiled/compiled.pickle")
        .display()
        .to_string();
    let (code, out, err) = common::memsight(&["snapshot", &p, "--json"]);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(got["pinned_host"].is_null());
    assert_eq!(got["fx_frames_mapped"], 0);
}

/// `private_pools` for `device` of `path` against tests/reference/snapshot_pools.py; the pools.
fn check_pools(path: &Path, device: i64) -> Option<serde_json::Value> {
    let d = device.to_string();
    let want = common::python_reference("snapshot_pools.py", &[path.as_os_str(), d.as_ref()])?;
    let p = path.display().to_string();
    let (code, out, err) = common::memsight(&["snapshot", &p, "--json", "--device", &d]);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(got["private_pools"]["device"], device);
    assert_eq!(got["private_pools"]["pools"], want, "{p}");
    Some(want)
}

#[test]
fn private_pools_are_followed_over_the_trace() {
    let compiled = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/snapshots/cuda_compiled/compiled.pickle");
    let Some(want) = check_pools(&compiled, 0) else {
        return;
    };
    // The CUDA graph's pool (1, 0), stated by hand too: three segments.
    assert_eq!(want[0]["pool"], serde_json::json!([1, 0]));
    assert_eq!(want[0]["segments"], 3);
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let graph = check_pools(&root.join("cuda_h100/snap/gpt_all_graph_pinned.pickle"), 0).unwrap();
    assert_eq!(graph.as_array().unwrap().len(), 1);
    // No private pool: an empty list, and no text for it.
    let oom = root.join("cuda_h100/oom/fragmentation/oom_snapshot.pickle");
    assert_eq!(check_pools(&oom, 0).unwrap(), serde_json::json!([]));
    let (_, text, _) = common::memsight(&["snapshot", &oom.display().to_string()]);
    assert!(!text.contains("private pools"), "{text}");
    let (_, text, _) = common::memsight(&["snapshot", &compiled.display().to_string()]);
    assert!(text.contains("pool (1, 0): 3 segments"), "{text}");
}
