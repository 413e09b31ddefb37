//! `memsight steps` and `live --json`'s device total against values computed independently: the
//! raw CSV files read line by line, trace_view.json parsed whole with serde_json, and the DB
//! queried with plain SQL. Generated multi-step profiles (one with a leaking operator) and the
//! real single-step exports.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, raw_origin, us_to_ns};
use memsight::generate::{DbMode, GenOptions, LEAK_OP, generate};

/// What a step should show: (id, start, end) in ns from the origin; the peak (bytes, time), the
/// end value, the survivors (count, KiB).
#[derive(Debug)]
struct Expected {
    id: i64,
    start: i128,
    end: i128,
    peak: Option<(i128, i128)>,
    end_value: Option<i128>,
    survivors: (usize, f64),
}

/// A raw step curve (time ns from origin, bytes), time-sorted, file order on ties.
type Curve = Vec<(i128, i128)>;

/// A raw block: (size bytes, alloc ns from origin, release ns from origin).
type Block = (i128, Option<i128>, Option<i128>);

fn held(curve: &Curve, t: i128) -> Option<i128> {
    curve.iter().rev().find(|p| p.0 <= t).map(|p| p.1)
}

/// The semantics, by plain iteration.
fn expect(steps: &[(i64, i128, i128)], curve: &Curve, blocks: &[Block]) -> Vec<Expected> {
    steps
        .iter()
        .map(|&(id, s, e)| {
            let mut peak = held(curve, s).map(|v| (v, s));
            for &(t, v) in curve {
                if t >= s && t <= e && peak.is_none_or(|p| v > p.0) {
                    peak = Some((v, t));
                }
            }
            let surv: Vec<&Block> = blocks
                .iter()
                .filter(|b| {
                    b.0 > 0 && b.1.is_some_and(|a| a >= s && a < e) && b.2.is_none_or(|r| r > e)
                })
                .collect();
            Expected {
                id,
                start: s,
                end: e,
                peak,
                end_value: held(curve, e),
                survivors: (surv.len(), surv.iter().map(|b| b.0 as f64 / 1024.0).sum()),
            }
        })
        .collect()
}

/// ProfilerStep#N spans of a raw trace_view.json, absolute ns.
fn raw_trace_steps(out: &Path) -> Vec<(i64, i128, i128)> {
    let text = std::fs::read_to_string(out.join("trace_view.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut steps: Vec<(i64, i128, i128)> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .filter_map(|e| {
            let id = e["name"].as_str()?.strip_prefix("ProfilerStep#")?;
            let ts = us_to_ns(e["ts"].as_str().unwrap());
            let dur = us_to_ns(&e["dur"].to_string());
            Some((id.parse().unwrap(), ts, ts + dur))
        })
        .collect();
    steps.sort_by_key(|s| s.1);
    steps
}

/// The raw CSV rank folder's expectations (times relative to its origin).
fn expect_csv(rank_dir: &Path) -> Vec<Expected> {
    let out = rank_dir.join("ASCEND_PROFILER_OUTPUT");
    let origin = raw_origin(&out);
    let rec = RawCsv::read(&out.join("memory_record.csv"));
    let (c, t, a) = (
        rec.col("Component"),
        rec.col("Timestamp(us)"),
        rec.col("Total Allocated(MB)"),
    );
    let mut curve: Curve = rec
        .rows
        .iter()
        .filter(|r| r[c] == "PTA+GE")
        .map(|r| {
            let mib: f64 = r[a].parse().unwrap();
            (
                us_to_ns(&r[t]) - origin,
                (mib * 1024.0 * 1024.0).round() as i128,
            )
        })
        .collect();
    curve.sort_by_key(|p| p.0);
    let ops = RawCsv::read(&out.join("operator_memory.csv"));
    let (sz, al, rl) = (
        ops.col("Size(KB)"),
        ops.col("Allocation Time(us)"),
        ops.col("Release Time(us)"),
    );
    let time = |s: &String| (!s.is_empty()).then(|| us_to_ns(s) - origin);
    let blocks: Vec<Block> = ops
        .rows
        .iter()
        .map(|r| {
            let kb: f64 = r[sz].parse().unwrap();
            ((kb * 1024.0).round() as i128, time(&r[al]), time(&r[rl]))
        })
        .collect();
    let steps: Vec<(i64, i128, i128)> = raw_trace_steps(&out)
        .into_iter()
        .map(|(id, s, e)| (id, s - origin, e - origin))
        .collect();
    expect(&steps, &curve, &blocks)
}

/// The DB's expectations, by SQL over its tables.
fn expect_db(db: &Path) -> Vec<Expected> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let origin: i64 = conn
        .query_row(
            "SELECT min(t) FROM (
               SELECT min(timestamp) AS t FROM MEMORY_RECORD
               UNION ALL SELECT min(timestampNs) FROM NPU_MEM
                 WHERE type IN (SELECT id FROM STRING_IDS WHERE value = 'app')
               UNION ALL SELECT min(allocationTime) FROM OP_MEMORY
               UNION ALL SELECT min(releaseTime) FROM OP_MEMORY
               UNION ALL SELECT min(timestampNs) FROM NPU_MODULE_MEM)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let origin = origin as i128;
    let mut st = conn
        .prepare(
            "SELECT timestamp, totalAllocated FROM MEMORY_RECORD
             JOIN STRING_IDS s ON s.id = component WHERE s.value = 'PTA+GE' ORDER BY timestamp, MEMORY_RECORD.rowid",
        )
        .unwrap();
    let curve: Curve = st
        .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
        .unwrap()
        .map(|x| {
            let (t, v) = x.unwrap();
            (t as i128 - origin, v as i128)
        })
        .collect();
    let mut st = conn
        .prepare("SELECT size, allocationTime, releaseTime FROM OP_MEMORY")
        .unwrap();
    let blocks: Vec<Block> = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, Option<i64>>(1)?,
                r.get::<_, Option<i64>>(2)?,
            ))
        })
        .unwrap()
        .map(|x| {
            let (s, a, r) = x.unwrap();
            (
                s as i128,
                a.map(|a| a as i128 - origin),
                r.map(|r| r as i128 - origin),
            )
        })
        .collect();
    let mut st = conn
        .prepare("SELECT id, startNs, endNs FROM STEP_TIME ORDER BY startNs")
        .unwrap();
    let steps: Vec<(i64, i128, i128)> = st
        .query_map([], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, i64>(1)?,
                r.get::<_, i64>(2)?,
            ))
        })
        .unwrap()
        .map(|x| {
            let (id, s, e) = x.unwrap();
            (id, s as i128 - origin, e as i128 - origin)
        })
        .collect();
    expect(&steps, &curve, &blocks)
}

fn run_steps(path: &Path, rank: Option<&str>) -> serde_json::Value {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    let args = memsight::cli::StepsArgs {
        rank: rank.map(str::to_string),
        json: true,
        lang: None,
    };
    let code = memsight::cli::rank::run::<memsight::reports::steps::Steps>(
        path,
        memsight::model::SourceChoice::Auto,
        &args,
        &mut out,
        &mut err,
    );
    assert_eq!(code, 0, "{}", String::from_utf8_lossy(&err));
    serde_json::from_slice(&out).unwrap()
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-6 * b.abs().max(1.0)
}

const MIB: f64 = 1024.0 * 1024.0;

/// Every step field of the JSON equals the independent expectation.
fn check(doc: &serde_json::Value, want: &[Expected], source: &str) {
    assert_eq!(doc["source"], source);
    let got = doc["steps"].as_array().unwrap();
    assert_eq!(got.len(), want.len(), "step count");
    assert!(!want.is_empty());
    let ms = |ns: i128| ns as f64 / 1e6;
    for (g, w) in got.iter().zip(want) {
        assert_eq!(g["id"], w.id);
        assert!(
            close(g["start_ms"].as_f64().unwrap(), ms(w.start)),
            "{g} {w:?}"
        );
        assert!(close(g["end_ms"].as_f64().unwrap(), ms(w.end)), "{g} {w:?}");
        match w.peak {
            Some((v, t)) => {
                assert!(
                    close(g["peak_allocated_mib"].as_f64().unwrap(), v as f64 / MIB),
                    "{g} {w:?}"
                );
                assert!(close(g["peak_at_ms"].as_f64().unwrap(), ms(t)), "{g} {w:?}");
            }
            None => assert!(g["peak_allocated_mib"].is_null()),
        }
        match w.end_value {
            Some(v) => assert!(
                close(g["end_allocated_mib"].as_f64().unwrap(), v as f64 / MIB),
                "{g} {w:?}"
            ),
            None => assert!(g["end_allocated_mib"].is_null()),
        }
        assert_eq!(g["survivors"]["count"], w.survivors.0, "{g} {w:?}");
        assert!(
            close(g["survivors"]["kib"].as_f64().unwrap(), w.survivors.1),
            "{g} {w:?}"
        );
    }
}

fn leaky(db: DbMode) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let opts = GenOptions {
        allocs: 1500,
        steps: 6,
        leak_per_step: 48 << 20,
        unreleased_frac: 0.0,
        db,
        seed: 11,
        ..Default::default()
    };
    let rank = generate(dir.path(), &opts).unwrap().remove(0);
    (dir, rank)
}

#[test]
fn steps_of_a_generated_csv_profile_match_the_raw_files() {
    let (_tmp, rank) = leaky(DbMode::No);
    let want = expect_csv(&rank);
    assert_eq!(want.len(), 6);
    check(&run_steps(&rank, None), &want, "trace_view");
}

#[test]
fn steps_of_a_generated_db_match_sql_over_its_tables() {
    let (_tmp, rank) = leaky(DbMode::Only);
    let db = std::fs::read_dir(rank.join("ASCEND_PROFILER_OUTPUT"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "db"))
        .unwrap();
    let want = expect_db(&db);
    assert_eq!(want.len(), 6);
    check(&run_steps(&rank, None), &want, "db");
}

#[test]
fn a_leak_is_named_and_a_clean_run_is_not_flagged() {
    let (_tmp, rank) = leaky(DbMode::No);
    let doc = run_steps(&rank, None);
    let ends: Vec<f64> = doc["steps"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["end_allocated_mib"].as_f64().unwrap())
        .collect();
    // Independently: the end value rises every step here, so one run covers them all.
    assert!(ends.windows(2).all(|w| w[1] > w[0]), "{ends:?}");
    let growth = doc["growth"].as_array().unwrap();
    assert_eq!(growth.len(), 1, "{doc}");
    assert_eq!(growth[0]["rises"], 5);
    assert_eq!(growth[0]["operators"][0]["name"], LEAK_OP);
    // 2 blocks of 24 MiB in each of the 5 steps after the first, never freed.
    assert!(close(
        growth[0]["operators"][0]["mib"].as_f64().unwrap(),
        240.0
    ));
    assert_eq!(growth[0]["operators"][0]["blocks"], 10);

    let clean = tempfile::tempdir().unwrap();
    let rank = generate(
        clean.path(),
        &GenOptions {
            allocs: 1500,
            steps: 6,
            unreleased_frac: 0.0,
            seed: 11,
            ..Default::default()
        },
    )
    .unwrap()
    .remove(0);
    let doc = run_steps(&rank, None);
    assert_eq!(doc["growth"].as_array().unwrap().len(), 0, "{doc}");
    for s in doc["steps"].as_array().unwrap() {
        assert_eq!(s["survivors"]["count"], 0, "{s}");
    }
}

#[test]
fn steps_text_is_an_aligned_table_with_the_leak_named() {
    let (_tmp, rank) = leaky(DbMode::No);
    let (code, out, err) = common::memsight(&["steps", rank.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines[1].starts_with("Step"), "{out}");
    // Every row of the table has its columns at the same places: same length.
    let width = lines[1].len();
    assert!(lines[2..8].iter().all(|l| l.len() == width), "{out}");
    assert!(out.contains("possible leak"), "{out}");
    assert!(out.contains(LEAK_OP), "{out}");
}

#[test]
fn real_single_step_exports_match_their_raw_files() {
    let Some(s) = common::samples() else { return };
    let base = s.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch");
    for level in ["level0", "level1", "level2"] {
        for rank in ["0", "1"] {
            let text = base.join("text").join(level);
            let want = expect_csv(&text.join(format!("rank{rank}_ascend_pt")));
            assert_eq!(want.len(), 1);
            assert_eq!(want[0].id, 50);
            check(&run_steps(&text, Some(rank)), &want, "trace_view");

            let db_dir = base.join("db").join(level);
            let db = db_dir.join(format!(
                "rank{rank}_ascend_pt/ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_{rank}.db"
            ));
            let want = expect_db(&db);
            assert_eq!(want.len(), 1);
            check(&run_steps(&db_dir, Some(rank)), &want, "db");
        }
    }
}

#[test]
fn live_json_device_total_is_the_npu_mem_counter() {
    let Some(s) = common::samples() else { return };
    let out = s.join(
        "xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT",
    );
    let origin = raw_origin(&out);
    let text = std::fs::read_to_string(out.join("trace_view.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let mut hbm: Vec<(i128, f64)> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "C" && e["name"] == "Device/HBM")
        .map(|e| {
            (
                us_to_ns(e["ts"].as_str().unwrap()) - origin,
                e["args"]["KB"].as_f64().unwrap(),
            )
        })
        .collect();
    hbm.sort_by_key(|p| p.0);
    assert!(hbm.len() > 3);
    // Device/DDR is 0 in this export, so the device total is the HBM counter.
    let at = hbm[2].0 + 5_000_000;
    let want = hbm.iter().rev().find(|p| p.0 <= at).unwrap().1 / 1024.0;
    let (code, json, err) = common::memsight(&[
        "live",
        out.parent().unwrap().parent().unwrap().to_str().unwrap(),
        "--rank",
        "0",
        "--at-ms",
        &format!("{}", at as f64 / 1e6),
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let doc: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert!(close(doc["device_mib"].as_f64().unwrap(), want), "{doc}");
}

/// Issue 43 item 12: a one-step profile says "1 step", and its one-block groups "1 block", in
/// the CLI's text.
#[test]
fn a_count_of_one_reads_in_the_singular() {
    let dir = tempfile::tempdir().unwrap();
    let opts = GenOptions {
        allocs: 300,
        steps: 1,
        unreleased_frac: 0.0,
        seed: 3,
        ..Default::default()
    };
    let rank = generate(dir.path(), &opts).unwrap().remove(0);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .arg("steps")
        .arg(&rank)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.contains(": 1 step (from"), "{text}");
    assert!(!text.contains(" 1 steps"), "{text}");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["inspect"])
        .arg(&rank)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 of 1 rank loaded"), "{text}");
}

/// `memsight generate --steps N` without `--leak-mib` is a clean control (issue 87): no growth;
/// with `--leak-mib 32` the only survivors of the later steps are the leak's, 32 MiB a step, as
/// the raw operator_memory rows never released say.
#[test]
fn a_generated_profile_without_a_leak_is_flat_and_with_one_grows_by_it() {
    let tmp = tempfile::tempdir().unwrap();
    for (leak, name) in [(0u64, "flat"), (32, "leak")] {
        let dir = tmp.path().join(name);
        let (code, _, err) = common::memsight(&[
            "generate",
            dir.to_str().unwrap(),
            "--steps",
            "5",
            "--allocs",
            "2000",
            "--leak-mib",
            &leak.to_string(),
        ]);
        assert_eq!(code, 0, "{err}");
        let (code, out, err) = common::memsight(&["steps", dir.to_str().unwrap(), "--json"]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let growth = v["growth"].as_array().unwrap();
        if leak == 0 {
            assert!(growth.is_empty(), "a clean control: {growth:?}");
            continue;
        }
        // The leak's blocks: the raw rows of its operator that are never released.
        let rank = common::first_subdir(&dir);
        let (ops, _) = common::raw_ops(&rank);
        let leaked: f64 = ops
            .iter()
            .filter(|o| o.0 == "aten::_cached_kv_append" && o.3.is_none())
            .map(|o| o.1.parse::<f64>().unwrap() / 1024.0)
            .sum();
        assert_eq!(leaked, (leak * 5) as f64, "five steps of the leak");
        assert_eq!(growth[0]["operators"][0]["name"], "aten::_cached_kv_append");
        assert_eq!(
            growth[0]["operators"][0]["mib"].as_f64(),
            Some((leak * 4) as f64)
        );
    }
}
