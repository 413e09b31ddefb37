//! Issue 86: the hostile round on the newest commands, each finding as a test on an input made by
//! `memsight::generate::hostile` (or a fixture under a hostile name), through the real binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::common;
use memsight::generate::hostile;

use common::memsight_in as run_in;

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

/// Items 1 and 2: frames shared through the memo, an FX frame standing for many, and one
/// annotation named many times are refused with the budget's words, not built; the same shapes
/// at a real size still read.
#[test]
fn snapshots_that_multiply_through_the_memo_are_refused_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (
            "frames.pickle",
            hostile::shared_frames_snapshot(4, 20_000, 2_000),
        ),
        ("fx.pickle", hostile::fx_frames_snapshot(2, 20_000, 100)),
        (
            "annotations.pickle",
            hostile::annotations_snapshot(50_000, 2_000),
        ),
    ];
    for (name, bytes) in &cases {
        assert!(bytes.len() < 420_000, "{name}: {} bytes", bytes.len());
        let p = write(dir.path(), name, bytes);
        for cmd in ["snapshot", "explain"] {
            let (code, _, err) = run_in(dir.path(), &[cmd.as_ref(), p.as_os_str()]);
            assert_eq!(code, 2, "{cmd} {name}: {err}");
            assert!(
                err.contains("would take more than") && err.contains("refused rather than built"),
                "{cmd} {name}: {err}"
            );
        }
    }
    let before = common::files_under(dir.path());
    // The same shapes, small: read, each reference a frame of its stack.
    let s = memsight::snapshot::AllocatorSnapshot::from_bytes(&hostile::shared_frames_snapshot(
        2, 50, 100,
    ))
    .unwrap();
    assert_eq!(s.frames(s.traces[0][1].stack).len(), 51);
    let s =
        memsight::snapshot::AllocatorSnapshot::from_bytes(&hostile::fx_frames_snapshot(1, 3, 4))
            .unwrap();
    assert_eq!(s.frames(s.traces[0][0].stack).len(), 3 * 4 + 1);
    assert_eq!(common::files_under(dir.path()), before, "nothing written");
}

/// Item 2's text: annotations nested 3,000 deep indent at most 24 levels, and a phase's name
/// 20,000 bytes long is one bounded cell: the text grows with the phases, not their square.
#[test]
fn deeply_nested_and_long_phase_names_print_in_bounded_text() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(
        dir.path(),
        "deep.pickle",
        &hostile::annotations_snapshot(3_000, 8),
    );
    let (code, out, err) = run_in(dir.path(), &["snapshot".as_ref(), deep.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    let longest = out.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 200, "the longest line has {longest} bytes");
    assert!(out.contains("[2999] "), "the deepest shows its depth");
    let long = write(
        dir.path(),
        "long.pickle",
        &hostile::annotations_snapshot(2, 20_000),
    );
    let (code, out, err) = run_in(dir.path(), &["snapshot".as_ref(), long.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    let longest = out.lines().map(str::len).max().unwrap_or(0);
    assert!(longest < 1_000, "the longest line has {longest} bytes");
    // explain's own limits (item 9): 5 KB of JSON, 40 lines of text.
    let (code, json, err) = run_in(
        dir.path(),
        &["explain".as_ref(), long.as_os_str(), "--json".as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(json.trim_end().len() <= 5 * 1024, "{} bytes", json.len());
    let v: Value = serde_json::from_str(&json).unwrap();
    let name = v["peak_phase"]["name"].as_str().unwrap();
    assert!(name.ends_with('…') && name.chars().count() == 160, "{name}");
    // A phase named with 400 newlines and an escape: explain's text stays 40 lines at most,
    // each one line, no control character.
    let lines = write(
        dir.path(),
        "lines.pickle",
        &hostile::annotations_named_snapshot(2, &"x\n\x1b[31m".repeat(400)),
    );
    let (code, text, err) = run_in(dir.path(), &["explain".as_ref(), lines.as_os_str()]);
    assert_eq!(code, 0, "{err}");
    assert!(text.lines().count() <= 40, "{} lines", text.lines().count());
    assert!(!text.contains('\x1b'), "{text}");
    // The phases' table and, after the allocation, the live blocks by phase: one line each.
    let (_, snapshot_text, _) = run_in(
        dir.path(),
        &[
            "snapshot".as_ref(),
            lines.as_os_str(),
            "--at-event".as_ref(),
            "0".as_ref(),
        ],
    );
    assert!(
        snapshot_text.contains("by the phase that allocated them"),
        "{snapshot_text}"
    );
    assert!(!snapshot_text.contains('\x1b'), "{snapshot_text}");
}

/// Item 8: 150,000 action names and 40,000 OOM events before 80,000 allocations: each name
/// kept once, the first and last 8 OOMs explained and the rest counted.
#[test]
fn many_action_names_and_many_ooms_are_read_once_each() {
    let s =
        memsight::snapshot::AllocatorSnapshot::from_bytes(&hostile::many_actions_snapshot(150_000))
            .unwrap();
    assert_eq!(s.other_actions.len(), 150_000);
    assert_eq!(s.action_name(s.traces[0][149_999].action), "act_149999");
    let s = memsight::snapshot::AllocatorSnapshot::from_bytes(&hostile::many_ooms_snapshot(
        40_000, 80_000,
    ))
    .unwrap();
    let reports = memsight::snapshot::oom::oom_reports(&s);
    assert_eq!(reports.len(), 16);
    let events: Vec<usize> = reports.iter().map(|r| r.event).collect();
    let want: Vec<usize> = (0..8).chain(39_992..40_000).collect();
    assert_eq!(events, want);
    assert_eq!(memsight::snapshot::oom::oom_event_count(&s), 40_000);
    let dir = tempfile::tempdir().unwrap();
    let p = write(
        dir.path(),
        "ooms.pickle",
        &hostile::many_ooms_snapshot(40, 10),
    );
    let (code, _, err) = run_in(
        dir.path(),
        &["snapshot".as_ref(), p.as_os_str(), "--json".as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("40 oom events; the first and the last 8"),
        "{err}"
    );
}

/// Item 12: an OOM that asked for 0 or fewer bytes has no verdict, not "fragmentation".
#[test]
fn an_oom_of_no_size_gets_no_verdict() {
    let dir = tempfile::tempdir().unwrap();
    for size in [0, -4096] {
        let p = write(
            dir.path(),
            "oom.pickle",
            &hostile::oom_of_size_snapshot(size),
        );
        let (code, out, err) = run_in(
            dir.path(),
            &["snapshot".as_ref(), p.as_os_str(), "--json".as_ref()],
        );
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["oom"][0]["verdict"], "no_request", "{size}");
        let (_, text, _) = run_in(dir.path(), &["snapshot".as_ref(), p.as_os_str()]);
        assert!(
            text.contains("no verdict (the event asked for no bytes"),
            "{text}"
        );
    }
    // A real request still gets its verdict: 1 MiB in a free 2 MiB segment.
    let p = write(
        dir.path(),
        "oom.pickle",
        &hostile::oom_of_size_snapshot(1 << 20),
    );
    let (_, out, _) = run_in(
        dir.path(),
        &["snapshot".as_ref(), p.as_os_str(), "--json".as_ref()],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["oom"][0]["verdict"], "fragmentation");
}

/// Item 15: 2 GB of zeros named `.pickle` (a sparse file: no disk) is refused at byte 0 from
/// its head; the reader's peak memory stays small (tests/memory_bound.rs measures it).
#[test]
fn a_huge_file_of_zeros_is_refused_from_its_head() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("zeros.pickle");
    let f = std::fs::File::create(&p).unwrap();
    f.set_len(2 << 30).unwrap();
    drop(f);
    let e = memsight::snapshot::AllocatorSnapshot::open(&p).unwrap_err();
    assert!(e.to_string().contains("byte 0"), "{e}");
}

/// Item 13: snapshots of different devices or accelerators say so, in text and JSON.
#[test]
fn comparing_snapshots_of_different_devices_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let cuda = common::fixtures().join("snapshots/cuda_join/run.pickle");
    // An NPU snapshot of the same shape: the generated ones name no accelerator (NPU).
    let npu = write(dir.path(), "npu.pickle", &hostile::many_ooms_snapshot(0, 5));
    let (code, out, err) = run_in(
        dir.path(),
        &[
            "compare".as_ref(),
            cuda.as_os_str(),
            npu.as_os_str(),
            "--json".as_ref(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["different_devices"], true);
    assert_eq!(v["a"]["device_label"], "CUDA:0");
    assert_eq!(v["b"]["device_label"], "NPU:0");
    let (_, text, _) = run_in(
        dir.path(),
        &["compare".as_ref(), cuda.as_os_str(), npu.as_os_str()],
    );
    assert!(
        text.contains("note: A is CUDA:0 and B is NPU:0: different devices and accelerators"),
        "{text}"
    );
    // The same snapshot twice: nothing to say.
    let (_, out, _) = run_in(
        dir.path(),
        &[
            "compare".as_ref(),
            cuda.as_os_str(),
            cuda.as_os_str(),
            "--json".as_ref(),
        ],
    );
    let v: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["different_devices"], false);
}

/// Items 4 and 7: a trace whose name is shell code, or starts with `-`, is explained; every
/// `next:` command, pasted into bash, runs the command it names on that file and nothing else.
#[cfg(unix)]
#[test]
fn explains_next_commands_are_quoted_and_run_as_written() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::fixtures().join("pytorch/cnn_adam.pt.trace.json.gz");
    let bin = Path::new(env!("CARGO_BIN_EXE_memsight"));
    for name in [
        "x'; touch PWNED; echo '.pt.trace.json.gz",
        "$(touch PWNED) a b.pt.trace.json.gz",
        "`touch PWNED`.pt.trace.json.gz",
        "-x.pt.trace.json.gz",
        "line\nbreak.pt.trace.json.gz",
    ] {
        std::fs::copy(&trace, dir.path().join(name)).unwrap();
        let (code, json, err) = run_in(
            dir.path(),
            &[
                "explain".as_ref(),
                format!("./{name}").as_ref(),
                "--json".as_ref(),
            ],
        );
        assert_eq!(code, 0, "{name:?}: {err}");
        let v: Value = serde_json::from_str(&json).unwrap();
        assert!(v["unavailable"].get("roles").is_none(), "{name:?}: {v}");
        let next: Vec<String> = v["next"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c.as_str().unwrap().to_string())
            .collect();
        assert_eq!(next.len(), 3, "{next:?}");
        for line in &next {
            assert!(!line.contains('\n'), "one line: {line:?}");
            let script = line.replacen("memsight", &format!("'{}'", bin.display()), 1);
            let out = Command::new("bash")
                .arg("-c")
                .arg(&script)
                .current_dir(dir.path())
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{line}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::fs::remove_file(dir.path().join(name)).unwrap();
        assert!(!dir.path().join("PWNED").exists(), "{name:?} ran code");
    }
    // The text form has the same commands, one line each.
    std::fs::copy(&trace, dir.path().join("a\nb.pt.trace.json.gz")).unwrap();
    let (code, text, _) = run_in(
        dir.path(),
        &["explain".as_ref(), "a\nb.pt.trace.json.gz".as_ref()],
    );
    assert_eq!(code, 0);
    let next = text.lines().find(|l| l.starts_with("next: ")).unwrap();
    assert!(next.contains(r"$'a\x0ab.pt.trace.json.gz'"), "{next}");
}

/// Item 7: a rank id starting with `-` is a value, not a flag, for every command.
#[test]
fn a_rank_id_starting_with_a_dash_is_taken_as_the_rank() {
    let dir = tempfile::tempdir().unwrap();
    let trace = common::fixtures().join("pytorch/cnn_adam.pt.trace.json.gz");
    std::fs::copy(&trace, dir.path().join("-x.pt.trace.json.gz")).unwrap();
    let path = "./-x.pt.trace.json.gz";
    let (code, out, err) = run_in(
        dir.path(),
        &["inspect".as_ref(), path.as_ref(), "--json".as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let ranks: Vec<String> = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_str().unwrap().to_string())
        .collect();
    let id = ranks.iter().find(|r| r.starts_with('-')).unwrap();
    for cmd in ["steps", "roles", "modules", "explain"] {
        let (code, _, err) = run_in(
            dir.path(),
            &[
                cmd.as_ref(),
                path.as_ref(),
                "--rank".as_ref(),
                id.as_ref(),
                "--json".as_ref(),
            ],
        );
        assert!(!err.contains("unexpected argument"), "{cmd}: {err}");
        assert!(!err.contains("Usage:"), "{cmd}: {err}");
        if cmd == "explain" {
            assert_eq!(code, 0, "{err}");
        }
    }
}

/// Item 10: a lever out of range is refused before the profile is read: even a path that
/// does not exist gets the lever's message.
#[test]
fn whatif_refuses_a_bad_lever_before_reading() {
    let (code, _, err) = common::memsight(&["whatif", "/no/such/profile", "--micro-batch", "0"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("--micro-batch must be a positive multiple"),
        "{err}"
    );
    assert!(!err.contains("no such"), "{err}");
}

/// Items 5 and 11: 12,000 nested modules are read with each stack cut (and said so), and the
/// module paths are one per module: a trimmed name joins its twin, a `/` in a name is escaped.
#[test]
fn deep_and_colliding_module_names_give_one_path_per_module() {
    let dir = tempfile::tempdir().unwrap();
    let deep = write(
        dir.path(),
        "deep.pt.trace.json",
        hostile::nested_modules_trace(12_000).as_bytes(),
    );
    let (code, out, err) = run_in(
        dir.path(),
        &["modules".as_ref(), deep.as_os_str(), "--json".as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let modules = v["modules"].as_array().unwrap();
    let deepest = modules
        .iter()
        .map(|m| m["path"].as_str().unwrap().matches('/').count())
        .max()
        .unwrap();
    assert_eq!(deepest, 255, "a path keeps 256 levels");
    let (_, text, _) = run_in(dir.path(), &["inspect".as_ref(), deep.as_os_str()]);
    assert!(
        text.contains("the stacks of 11744 ops were nested deeper than 256 frames"),
        "{text}"
    );

    let twins = write(
        dir.path(),
        "twins.pt.trace.json",
        hostile::colliding_modules_trace().as_bytes(),
    );
    let (code, out, err) = run_in(
        dir.path(),
        &["modules".as_ref(), twins.as_os_str(), "--json".as_ref()],
    );
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let mut paths: Vec<&str> = v["modules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["path"].as_str().unwrap())
        .collect();
    paths.sort_unstable();
    assert_eq!(
        paths,
        [
            "Net_0",
            "Net_0/Linear_1",
            "Net_0/a",
            "Net_0/a%2Fb",
            "Net_0/a/b"
        ],
    );
}

/// Item 14: a prediction past what 64-bit byte counts hold is refused, not printed as
/// 8,796,093,022,208 MiB. A real run (the MLP of `fixtures/pytorch/whatif/`) with every
/// allocation made 2^30 times larger, replayed at 999,999 times the micro-batch.
#[test]
fn a_saturated_prediction_is_refused() {
    use std::io::Read;
    let gz =
        std::fs::read(common::fixtures().join("pytorch/whatif/mlp_b64.pt.trace.json.gz")).unwrap();
    let mut text = String::new();
    flate2::read::GzDecoder::new(&gz[..])
        .read_to_string(&mut text)
        .unwrap();
    let mut v: Value = serde_json::from_str(&text).unwrap();
    let scale = 1i64 << 30;
    for e in v["traceEvents"].as_array_mut().unwrap() {
        if e["name"] != "[memory]" {
            continue;
        }
        for k in ["Bytes", "Total Allocated", "Total Reserved"] {
            if let Some(b) = e["args"][k].as_i64() {
                e["args"][k] = (b * scale).into();
            }
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let p = write(dir.path(), "big.pt.trace.json", v.to_string().as_bytes());
    let (code, out, err) = run_in(
        dir.path(),
        &[
            "whatif".as_ref(),
            p.as_os_str(),
            "--micro-batch".as_ref(),
            "999999".as_ref(),
        ],
    );
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("passes 4 EiB"), "{err}");
    // The same run at twice the micro-batch is a prediction.
    let (code, out, err) = run_in(
        dir.path(),
        &[
            "whatif".as_ref(),
            p.as_os_str(),
            "--micro-batch".as_ref(),
            "2".as_ref(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("predicted with micro-batch ×2"), "{out}");
}
