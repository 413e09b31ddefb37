//! Without `--rank`, every per-rank command answers about the rank a user means: the device
//! rank with the highest peak, not a PyTorch trace's CPU pseudo-rank (which printed zeros and
//! "+100.0 %"), and says which it took. The references are PyTorch's own
//! (`torch.cuda.max_memory_allocated`, in the fixtures' `truth.json`) and SQL over the raw rows.

use crate::common::{self, memsight};
use std::path::{Path, PathBuf};

const MIB: f64 = 1024.0 * 1024.0;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pytorch/whatif_cuda")
}

/// `truth.json`'s runs: (file, max_allocated bytes).
fn truth() -> Vec<(String, f64)> {
    let t: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("truth.json")).unwrap())
            .unwrap();
    t["runs"]
        .as_object()
        .unwrap()
        .values()
        .map(|r| {
            (
                r["file"].as_str().unwrap().to_string(),
                r["max_allocated"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// Runs `args` with `--json`; the document and stderr.
fn json(args: &[&str]) -> (serde_json::Value, String) {
    let mut all = args.to_vec();
    all.push("--json");
    let (code, out, err) = memsight(&all);
    assert_eq!(code, 0, "{args:?}: {err}");
    (serde_json::from_str(&out).unwrap(), err)
}

#[test]
fn a_gpu_trace_answers_about_its_device_in_every_command() {
    let trace = fixtures().join("gpu.pt.trace.json.gz");
    let t = trace.to_str().unwrap();
    let max_allocated = truth()
        .into_iter()
        .find(|(f, _)| f == "gpu.pt.trace.json.gz")
        .unwrap()
        .1;
    for args in [
        vec!["roles", t],
        vec!["modules", t],
        vec!["whatif", t, "--micro-batch", "2"],
        vec!["steps", t],
        vec!["live", t, "--at-ms", "14"],
        vec!["stacks", t],
        vec!["curve", t],
    ] {
        let (v, err) = json(&args);
        assert_eq!(v["rank"], "gpu cuda:0", "{args:?}");
        assert!(
            err.contains("rank gpu cuda:0: the only device rank of 2 ranks"),
            "{args:?} says which rank it took: {err}"
        );
    }
    // The measured peak is PyTorch's own.
    let (v, _) = json(&["whatif", t, "--micro-batch", "2"]);
    let measured = v["measured"]["peak_mib"].as_f64().unwrap();
    assert!(
        (measured - max_allocated / MIB).abs() / (max_allocated / MIB) < 0.005,
        "{measured} MiB against torch's {}",
        max_allocated / MIB
    );
    // And two traces compared: each side's device rank.
    let offload = fixtures().join("offload.pt.trace.json.gz");
    let (v, _) = json(&["compare", t, offload.to_str().unwrap()]);
    assert_eq!(
        (v["a"]["rank"].as_str(), v["b"]["rank"].as_str()),
        (Some("gpu cuda:0"), Some("offload cuda:0"))
    );
}

#[test]
fn a_folder_of_traces_opens_on_the_device_rank_with_the_highest_peak() {
    let dir = fixtures();
    // PyTorch's peaks: the trace whose device peaked highest.
    let (file, _) = truth()
        .into_iter()
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .unwrap();
    let want = format!("{} cuda:0", file.split('.').next().unwrap());
    let (v, err) = json(&["steps", dir.to_str().unwrap()]);
    assert_eq!(v["rank"].as_str(), Some(want.as_str()));
    assert!(
        err.contains(&format!(
            "rank {want}: the device rank with the highest peak of 4 ranks"
        )),
        "{err}"
    );
    // explain takes the same one.
    let (v, _) = json(&["explain", dir.to_str().unwrap()]);
    assert_eq!(v["rank"].as_str(), Some(want.as_str()));
}

#[test]
fn npu_ranks_default_to_the_highest_peak_by_sql_over_the_raw_rows() {
    let Some(samples) = common::samples() else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let dir = samples.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/db/level1");
    // Each rank's PTA+GE peak from its DB; the highest, the first on ties.
    let mut best: Option<(i64, String)> = None;
    for r in ["0", "1"] {
        let db = dir.join(format!(
            "rank{r}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{r}.db"
        ));
        let c =
            rusqlite::Connection::open_with_flags(&db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
                .unwrap();
        let peak: i64 = c
            .query_row(
                "SELECT MAX(totalAllocated) FROM MEMORY_RECORD JOIN STRING_IDS ON id = component \
                 WHERE value = 'PTA+GE'",
                [],
                |row| row.get(0),
            )
            .unwrap();
        if best.as_ref().is_none_or(|b| peak > b.0) {
            best = Some((peak, r.to_string()));
        }
    }
    let (peak, want) = best.unwrap();
    let (v, _) = json(&["roles", dir.to_str().unwrap()]);
    assert_eq!(v["rank"].as_str(), Some(want.as_str()));
    let (v, _) = json(&["whatif", dir.to_str().unwrap()]);
    let measured = v["measured"]["peak_mib"].as_f64().unwrap();
    assert!((measured - peak as f64 / MIB).abs() < 1e-6, "{measured}");
}

#[test]
fn no_percentage_of_a_zero_peak_is_printed() {
    let trace = fixtures().join("gpu.pt.trace.json.gz");
    // The CPU pseudo-rank, asked for by name: its peak prints as 0.00 MB.
    let (code, out, err) = memsight(&[
        "whatif",
        trace.to_str().unwrap(),
        "--rank=gpu cpu",
        "--micro-batch",
        "2",
    ]);
    assert_eq!(code, 0, "{err}");
    let predicted = out.lines().find(|l| l.starts_with("predicted")).unwrap();
    assert!(!predicted.contains('%'), "{predicted}");
    assert!(predicted.ends_with("(–)"), "{predicted}");
}

/// The CPU pseudo-rank is not a data-parallel rank: on a one-GPU trace (one CUDA device in
/// its `[memory]` rows, counted here) the sharding advice says the profile has one rank and
/// replays its example over 8, not "ZeRO-2 over 2 ranks" (the count was the trace's two ranks).
#[test]
fn a_one_gpu_trace_is_one_rank_for_sharding_advice() {
    let trace = fixtures().join("gpu.pt.trace.json.gz");
    let devices: std::collections::BTreeSet<i64> = common::trace_events(&trace)
        .iter()
        .filter(|e| e["name"] == "[memory]" && e["args"]["Device Type"] == 1)
        .filter_map(|e| e["args"]["Device Id"].as_i64())
        .collect();
    assert_eq!(devices.len(), 1);
    let (doc, _) = json(&["roles", trace.to_str().unwrap()]);
    let shard = doc["advice"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"].as_str().unwrap().starts_with("shard"))
        .expect("the trace holds gradients at its peak");
    assert_eq!(shard["replayed"]["ranks"], 8, "{shard}");
    assert!(
        shard["text"].as_str().unwrap().contains("one rank"),
        "{shard}"
    );
}

/// Issue 88: the line that says which rank a command chose is said in the text's language:
/// `--lang zh` (a report) or a Chinese locale (any command), the same rank and count.
#[test]
fn the_rank_chosen_is_said_in_chinese_when_asked() {
    let gpu = fixtures().join("gpu.pt.trace.json.gz");
    let p = gpu.to_str().unwrap();
    let (code, _, en) = memsight(&["steps", p, "--lang", "en"]);
    assert_eq!(code, 0, "{en}");
    assert!(en.contains("the only device rank of 2 ranks"), "{en}");
    let (_, _, zh) = memsight(&["steps", p, "--lang", "zh"]);
    common::assert_said_in_chinese(&en, &zh, &["gpu cuda:0".into(), "memsight".into()], &[]);
    assert!(zh.contains("唯一的设备 rank"), "{zh}");
    // A command without --lang follows the locale.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["curve", p])
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "zh_CN.UTF-8")
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("唯一的设备 rank"), "{err}");
}
