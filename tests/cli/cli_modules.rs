//! `memsight modules` against a brute-force reference over the raw trace
//! (`tests/reference/module_attribution.py`, no memsight code): the real H100 GPT traces of
//! `../shared/samples/cuda_h100/whatif/` and the committed CPU traces of an MLP, a CNN and a
//! transformer.

use std::path::{Path, PathBuf};

use crate::common;

/// What a reference script of `tests/reference/` prints for `args`, or None without python3
/// (a failure in CI).
fn reference(script: &str, args: &[&std::ffi::OsStr]) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(script);
    let out = match std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .output()
    {
        Ok(o) if o.status.success() => o,
        other => {
            common::skip(&format!("python3 reference not available ({other:?})"));
            return None;
        }
    };
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

const MIB: f64 = 1024.0 * 1024.0;

/// Checks `memsight modules --json` on `rank` of the PyTorch `trace` against
/// `module_attribution.py` on a device (at `AT_MS` when given); returns the worst relative
/// error of a module holding a MiB or more (see [`compare`]).
fn check(trace: &Path, rank: &str, device: (u8, u8), at_ms: Option<&str>) -> f64 {
    let (kind, id) = (device.0.to_string(), device.1.to_string());
    let mut args = vec![trace.as_os_str(), kind.as_ref(), id.as_ref()];
    args.extend(at_ms.map(std::ffi::OsStr::new));
    match reference("module_attribution.py", &args) {
        Some(want) => compare(&want, trace, rank, at_ms),
        None => 0.0,
    }
}

/// Checks `memsight modules PATH --rank RANK --json` against a reference's figures: the time,
/// the live bytes, and every module's held and self-held bytes within 0.5 % (of the module's
/// own bytes when it holds a MiB or more, else of the live total); returns the worst relative
/// error of a module holding a MiB or more.
fn compare(want: &serde_json::Value, path: &Path, rank: &str, at_ms: Option<&str>) -> f64 {
    let mut args = vec!["modules", path.to_str().unwrap(), "--rank", rank, "--json"];
    if let Some(t) = at_ms {
        args.extend(["--at-ms", t]);
    }
    let (code, out, err) = common::memsight(&args);
    assert_eq!(code, 0, "{err}");
    let got: serde_json::Value = serde_json::from_str(&out).unwrap();
    let f = |v: &serde_json::Value| v.as_f64().unwrap();
    assert!(
        (f(&got["at_ms"]) - f(&want["at_ms"])).abs() < 1e-6,
        "{rank}: at {} ms, the reference {} ms",
        got["at_ms"],
        want["at_ms"]
    );
    let live = f(&want["live_bytes"]) / MIB;
    assert!(live > 0.0, "{rank}: nothing alive at the time checked");
    assert!(
        (f(&got["live_mib"]) - live).abs() < 1e-6,
        "{rank}: live {} MiB, the reference {live}",
        got["live_mib"]
    );
    let within = |a: f64, b: f64| {
        let scale = if b.abs() >= 1.0 { b.abs() } else { live };
        (a - b).abs() <= 0.005 * scale
    };
    let unattributed = f(&want["unattributed_bytes"]) / MIB;
    assert!(
        within(f(&got["unattributed_mib"]), unattributed),
        "{rank}: unattributed {} MiB, the reference {unattributed}",
        got["unattributed_mib"]
    );
    let modules = got["modules"].as_array().unwrap();
    let ours = |path: &str| modules.iter().find(|m| m["path"] == path);
    let mut worst = 0.0f64;
    for (key, field) in [("held", "held_mib"), ("self", "self_held_mib")] {
        let theirs = want[key].as_object().unwrap();
        assert!(!theirs.is_empty(), "{rank}: the reference found no module");
        for (path, bytes) in theirs {
            let b = f(bytes) / MIB;
            let a = ours(path).map_or(0.0, |m| f(&m[field]));
            assert!(
                within(a, b),
                "{rank}: {path} {key} {a} MiB, the reference {b}"
            );
            if b >= 1.0 {
                worst = worst.max((a - b).abs() / b);
            }
        }
        // A module the reference does not list holds (almost) nothing.
        for m in modules {
            let path = m["path"].as_str().unwrap();
            if !theirs.contains_key(path) {
                assert!(
                    within(f(&m[field]), 0.0),
                    "{rank}: {path} {key} {}",
                    m[field]
                );
            }
        }
    }
    worst
}

fn cuda_trace(name: &str) -> Option<PathBuf> {
    let p = common::samples()?.join(format!("cuda_h100/whatif/{name}.pt.trace.json.gz"));
    assert!(p.is_file(), "{} is missing", p.display());
    Some(p)
}

#[test]
fn modules_at_the_peak_match_the_raw_h100_traces() {
    for name in ["gpt_b8", "gpt_b16", "gpt_b32", "gpt_b8_ckpt"] {
        let Some(trace) = cuda_trace(name) else {
            return;
        };
        let worst = check(&trace, &format!("{name} cuda:0"), (1, 0), None);
        eprintln!("{name}: worst module error {:.3} %", worst * 100.0);
    }
}

#[test]
fn modules_at_the_peak_and_at_a_time_match_the_raw_cpu_traces() {
    for name in ["mlp_sgd", "cnn_adam", "transformer_adamw"] {
        let trace = common::fixtures().join(format!("pytorch/roles/{name}.pt.trace.json.gz"));
        check(&trace, name, (0, 0), None);
        check(&trace, name, (0, 0), Some("5.5"));
    }
    // The what-if runs, recorded with with_modules=True: checkpointed blocks included.
    for name in ["mlp_b64", "cnn_b8", "gpt_b4", "gpt_b4_ckpt"] {
        let trace = common::fixtures().join(format!("pytorch/whatif/{name}.pt.trace.json.gz"));
        let worst = check(&trace, name, (0, 0), None);
        eprintln!("{name}: worst module error {:.3} %", worst * 100.0);
    }
}

/// torch_npu's exports, as text and as a DB: each op carries its own call stack (naming no
/// module), and the modules come from the `nn.Module` spans of `trace_view.json` or of the DB's
/// `PYTORCH_API`, joined to the operator memory rows by time.
#[test]
fn modules_match_the_raw_torch_npu_export_on_both_ranks() {
    let Some(root) = common::samples() else {
        common::skip("no samples");
        return;
    };
    let data = root.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch");
    for (profile, rank) in [
        ("text/level1", "0"),
        ("text/level1", "1"),
        ("db/level2", "0"),
        ("db/level2", "1"),
    ] {
        let profile = data.join(profile);
        assert!(profile.is_dir(), "{} is missing", profile.display());
        let mut output = profile.join(format!("rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT"));
        if profile.ends_with("db/level2") {
            output = output.join(format!("ascend_pytorch_profiler_{rank}.db"));
        }
        // At the peak (the weights' gradients and the classifier's activations), and in the
        // forward pass (the features' activations).
        for at_ms in [None, Some("140")] {
            let mut args = vec![output.as_os_str()];
            args.extend(at_ms.map(std::ffi::OsStr::new));
            let Some(want) = reference("module_attribution_ascend.py", &args) else {
                return;
            };
            let selfs = want["self"].as_object().unwrap();
            assert!(
                selfs.values().filter(|v| v.as_f64() > Some(0.0)).count() >= 3,
                "rank {rank}: the reference attributes too little to be a check: {want}"
            );
            compare(&want, &profile, rank, at_ms);
        }
    }
}

#[test]
fn the_text_report_indents_the_tree_and_counts_what_no_module_holds() {
    let trace = common::fixtures().join("pytorch/roles/mlp_sgd.pt.trace.json.gz");
    let (code, out, err) = common::memsight(&["modules", trace.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("memory by module at"), "{out}");
    assert!(out.contains("outside every module"), "{out}");
    // A child is indented under its parent.
    let line = |name: &str| {
        out.lines()
            .find(|l| l.trim_end().ends_with(name))
            .unwrap_or_else(|| panic!("no {name} in {out}"))
            .to_string()
    };
    let indent = |l: &str| l.len() - l.trim_end().rsplit("  ").next().unwrap().trim_start().len();
    assert!(
        indent(&line("Sequential_0")) > indent(&line("Mlp_0")),
        "{out}"
    );
}

#[test]
fn a_profile_without_modules_says_how_to_record_them() {
    let demo = common::fixtures().join("demo");
    let (code, _, err) = common::memsight(&["modules", demo.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(err.contains("with_modules=True"), "{err}");
    let trace = common::fixtures().join("pytorch/roles/mlp_sgd.pt.trace.json.gz");
    let (code, _, err) = common::memsight(&["modules", trace.to_str().unwrap(), "--at-ms", "NaN"]);
    assert_eq!(code, 2);
    assert!(err.contains("--at-ms"), "{err}");
}
