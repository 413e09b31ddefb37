//! `memsight inspect` through the real binary: the JSON contract and exit codes.

use crate::common;

use common::{fixtures, memsight};

#[test]
fn json_has_the_documented_shape() {
    let dir = fixtures().join("torch_cluster");
    let (code, stdout, _) = memsight(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    let ranks = v["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 2);
    let r = &ranks[1];
    assert_eq!(r["rank"], "1");
    assert_eq!(r["device"], "1");
    assert_eq!(r["host"], "node0");
    assert_eq!(r["source"], "csv");
    assert_eq!(r["format"], "torch_npu");
    assert!(r["dir"].as_str().unwrap().ends_with("_ascend_pt"));
    assert!(r["time_origin_ns"].as_i64().unwrap() > 1_700_000_000_000_000_000);
    for k in [
        "memory_record",
        "operator_memory",
        "npu_module_mem",
        "static_op_mem",
        "skipped_rows",
    ] {
        assert!(r["counts"][k].is_u64(), "counts.{k}");
    }
    for k in [
        "operator_allocated",
        "operator_reserved",
        "operator_activated",
        "app_reserved",
    ] {
        assert!(r["peaks"][k]["mib"].is_f64(), "peaks.{k}");
        assert!(r["peaks"][k]["at_ms"].is_f64(), "peaks.{k}");
    }
    assert!(r["unreleased"].is_u64());
    assert!(r["largest_allocation"]["name"].is_string());
    assert!(r["largest_allocation"]["size_kib"].is_f64());
    assert!(r["warnings"].is_array());
}

#[test]
fn absent_curves_are_null() {
    let dir = fixtures().join("mindspore");
    let (code, stdout, _) = memsight(&["inspect", dir.to_str().unwrap(), "--json"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["ranks"][0]["peaks"]["operator_activated"].is_null());
    assert_eq!(v["ranks"][0]["format"], "mindspore");
}

#[test]
fn exit_codes() {
    let tmp = tempfile::tempdir().unwrap();
    let (code, _, stderr) = memsight(&["inspect", tmp.path().to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("no memory data found"), "{stderr}");
    // It names every kind of file it looked for, the imported sources' too.
    for kind in [
        "memory_record*.csv",
        "ascend_pytorch_profiler*.db",
        "*.json / *.json.gz (PyTorch profiler traces)",
        "*.csv / memscope_dump_*.db (msMemScope dumps)",
    ] {
        assert!(stderr.contains(kind), "{kind}: {stderr}");
    }
    // Some ranks fail but one loads: exit 0, the failures are in the output.
    let (code, stdout, _) = memsight(&["inspect", fixtures().join("malformed").to_str().unwrap()]);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("not loaded") && stdout.contains("2 of 4 ranks loaded"),
        "{stdout}"
    );
    // Only unloadable ranks: exit 2 with the reason.
    let empty = fixtures().join("malformed/empty_ascend_pt");
    let (code, _, stderr) = memsight(&["inspect", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("the file is empty"), "{stderr}");
}

#[test]
fn no_arguments_without_a_display_fails_cleanly() {
    // Plain `memsight` opens the demo in a window; with no display it must say so, not panic.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .env("DISPLAY", "")
        .env("WAYLAND_DISPLAY", "")
        .env_remove("XDG_RUNTIME_DIR")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot open a window"), "{stderr}");
    // And it says what does work there.
    assert!(stderr.contains("memsight inspect PATH"), "{stderr}");
}

#[test]
fn steps_are_counted_with_their_source() {
    let (code, stdout, _) = memsight(&[
        "inspect",
        fixtures().join("demo").to_str().unwrap(),
        "--json",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    for r in v["ranks"].as_array().unwrap() {
        // Independently: the ProfilerStep#N events of the rank's raw trace_view.json.
        let trace = std::path::Path::new(r["dir"].as_str().unwrap())
            .join("ASCEND_PROFILER_OUTPUT/trace_view.json");
        let t: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(trace).unwrap()).unwrap();
        let n = t
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| {
                e["name"]
                    .as_str()
                    .is_some_and(|s| s.starts_with("ProfilerStep#"))
            })
            .count();
        assert_eq!(r["steps"]["count"], n);
        assert_eq!(r["steps"]["source"], "trace_view");
    }
    let (_, stdout, _) = memsight(&[
        "inspect",
        fixtures().join("torch_cluster").to_str().unwrap(),
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert!(v["ranks"][0]["steps"].is_null());
}

/// Issue 43 item 16: `--source` is offered where it chooses something (the commands that read
/// a profile) and neither listed nor accepted by `snapshot` and `generate`.
#[test]
fn source_is_offered_only_where_it_means_something() {
    let help = |cmd: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
            .args([cmd, "--help"])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).to_string()
    };
    for cmd in ["snapshot", "generate"] {
        assert!(!help(cmd).contains("--source"), "{cmd}: {}", help(cmd));
    }
    for cmd in [
        "inspect",
        "curve",
        "table",
        "live",
        "compare",
        "steps",
        "roles",
        "summarize",
        "stacks",
        "components",
        "static",
    ] {
        assert!(help(cmd).contains("--source"), "{cmd}");
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["snapshot", "--source", "csv", "x.pickle"])
        .output()
        .unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--source"));
}
