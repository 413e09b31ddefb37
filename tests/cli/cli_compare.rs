//! `memsight compare` against sums computed independently from the raw operator_memory and
//! memory_record files (or the DB's tables, by SQL) of both sides: per operator name (the text
//! export's `cann::` prefix matched to the DB's bare name), what it allocated and what it held
//! at each side's Operator Allocated peak.

use crate::common;

use std::path::{Path, PathBuf};

use std::collections::BTreeMap;

use common::{RawCsv, first_subdir, fixtures, memsight, raw_ops, raw_peak};

/// Per operator (by the name without `cann::`): KiB of its rows with size > 0, how many, and
/// MiB of all its rows alive (allocated ≤ t < released; a missing time is open) at the first
/// time the Operator Allocated curve (PTA+GE Total Allocated) reaches its peak.
#[derive(Default, Debug, Clone, Copy)]
struct Raw {
    kib: f64,
    blocks: usize,
    at_peak_mib: f64,
}

fn key(name: &str) -> String {
    let name = if name.is_empty() { "Unknown" } else { name };
    name.strip_prefix("cann::").unwrap_or(name).to_string()
}

/// One side's raw rows: (name, size bytes, alloc ns, release ns) and the peak time (ns).
fn oracle(
    blocks: Vec<(String, f64, Option<i128>, Option<i128>)>,
    peak: i128,
) -> BTreeMap<String, Raw> {
    let mut m: BTreeMap<String, Raw> = BTreeMap::new();
    for (name, bytes, a, r) in blocks {
        let e = m.entry(key(&name)).or_default();
        if bytes > 0.0 {
            e.kib += bytes / 1024.0;
            e.blocks += 1;
        }
        if a.is_none_or(|a| a <= peak) && r.is_none_or(|r| r > peak) {
            e.at_peak_mib += bytes / 1048576.0;
        }
    }
    m
}

fn raw_csv(rank: &Path) -> BTreeMap<String, Raw> {
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let peak = raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0)
        .unwrap()
        .1;
    let blocks = raw_ops(rank)
        .0
        .into_iter()
        .map(|(n, kb, a, r)| (n, kb.parse::<f64>().unwrap() * 1024.0, a, r))
        .collect();
    oracle(blocks, peak)
}

fn raw_db(db: &Path) -> BTreeMap<String, Raw> {
    let conn =
        rusqlite::Connection::open_with_flags(db, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY)
            .unwrap();
    let peak: i64 = conn
        .query_row(
            "SELECT timestamp FROM MEMORY_RECORD JOIN STRING_IDS s ON s.id = component
             WHERE s.value = 'PTA+GE' ORDER BY totalAllocated DESC, timestamp, MEMORY_RECORD.rowid LIMIT 1",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut st = conn
        .prepare(
            "SELECT coalesce(s.value, ''), size, allocationTime, releaseTime FROM OP_MEMORY
             LEFT JOIN STRING_IDS s ON s.id = OP_MEMORY.name",
        )
        .unwrap();
    let blocks = st
        .query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)? as f64,
                r.get::<_, Option<i64>>(2)?.map(i128::from),
                r.get::<_, Option<i64>>(3)?.map(i128::from),
            ))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    oracle(blocks, peak as i128)
}

fn raw_allocated_peak(rank: &Path) -> f64 {
    let rec = RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0)
        .unwrap()
        .0
}

fn ranks(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    v.sort();
    v
}

fn check(a_dir: &Path, a_rank: &Path, ra: &str, b_dir: &Path, b_rank: &Path, rb: &str) {
    let (code, out, err) = memsight(&[
        "compare",
        a_dir.to_str().unwrap(),
        b_dir.to_str().unwrap(),
        "--rank-a",
        ra,
        "--rank-b",
        rb,
        "--json",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["a"]["rank"], ra);
    assert_eq!(v["b"]["rank"], rb);
    let (pa, pb) = (raw_allocated_peak(a_rank), raw_allocated_peak(b_rank));
    assert!(
        (v["a"]["peaks"]["operator_allocated"]["mib"]
            .as_f64()
            .unwrap()
            - pa)
            .abs()
            < 1e-6
    );
    assert!(
        (v["delta"]["operator_allocated_mib"].as_f64().unwrap() - (pb - pa)).abs() < 1e-6,
        "{}",
        v["delta"]
    );
    check_operators(&v, &raw_csv(a_rank), &raw_csv(b_rank));
}

/// The `by_operator` rows of `v` against both sides' oracles: one row per matched name, each
/// value, and the order (|Δ at peak| descending, then |Δ| descending).
fn check_operators(v: &serde_json::Value, a: &BTreeMap<String, Raw>, b: &BTreeMap<String, Raw>) {
    let names: std::collections::BTreeSet<&String> = a
        .iter()
        .chain(b)
        .filter(|(_, r)| r.blocks > 0)
        .map(|(k, _)| k)
        .collect();
    let rows = v["by_operator"].as_array().unwrap();
    assert_eq!(rows.len(), names.len());
    let mut last = (f64::INFINITY, f64::INFINITY);
    let mut seen = std::collections::BTreeSet::new();
    for r in rows {
        let name = key(r["name"].as_str().unwrap());
        assert!(seen.insert(name.clone()), "{name} is listed twice");
        let ra = a.get(&name).copied().unwrap_or_default();
        let rb = b.get(&name).copied().unwrap_or_default();
        let f = |k: &str| r[k].as_f64().unwrap();
        let close = |x: f64, y: f64| (x - y).abs() < 1e-6;
        assert!(close(f("a_kib"), ra.kib), "{r}");
        assert!(close(f("b_kib"), rb.kib), "{r}");
        assert!(close(f("delta_kib"), rb.kib - ra.kib), "{r}");
        assert_eq!(
            (r["a_blocks"].as_u64(), r["b_blocks"].as_u64()),
            (Some(ra.blocks as u64), Some(rb.blocks as u64))
        );
        assert!(close(f("a_at_peak_mib"), ra.at_peak_mib), "{r} {ra:?}");
        assert!(close(f("b_at_peak_mib"), rb.at_peak_mib), "{r} {rb:?}");
        let dp = rb.at_peak_mib - ra.at_peak_mib;
        assert!(close(f("delta_at_peak_mib"), dp), "{r}");
        let here = (dp.abs(), (rb.kib - ra.kib).abs());
        assert!(
            here.0 < last.0 + 1e-9 && (here.0 < last.0 - 1e-9 || here.1 <= last.1 + 1e-9),
            "sorted by |Δ at peak|, then |Δ|: {r} after {last:?}"
        );
        last = here;
    }
}

#[test]
fn two_ranks_of_one_profile() {
    let demo = fixtures().join("demo");
    let r = ranks(&demo);
    check(&demo, &r[0], "0", &demo, &r[1], "1");
}

#[test]
fn two_runs() {
    let (a, b) = (fixtures().join("torch_cluster"), fixtures().join("demo"));
    check(&a, &first_subdir(&a), "0", &b, &first_subdir(&b), "0");
}

#[test]
fn text_output_is_an_aligned_table_and_bad_input_is_one_line() {
    let demo = fixtures().join("demo");
    let (code, out, _) = memsight(&[
        "compare",
        demo.to_str().unwrap(),
        demo.to_str().unwrap(),
        "--rank-b",
        "1",
        "--top",
        "5",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("peak Operator Allocated"), "{out}");
    let table: Vec<&str> = out
        .lines()
        .skip_while(|l| !l.starts_with("Name"))
        .take_while(|l| !l.is_empty())
        .collect();
    assert_eq!(table.len(), 6, "{out}");
    assert!(table.iter().all(|l| l.len() == table[0].len()), "{out}");
    let (code, _, err) = memsight(&["compare", demo.to_str().unwrap(), "/no/such/folder"]);
    assert_eq!(code, 2);
    assert_eq!(common::errors(&err).count(), 1, "{err}");
}

#[test]
fn a_db_export_and_a_text_export_match_operator_names() {
    let Some(samples) = common::samples() else {
        return; // no samples (a failure under MEMSIGHT_REQUIRE_ALL)
    };
    let p = samples.join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch");
    for level in ["level0", "level1", "level2"] {
        let (db_dir, text_dir) = (p.join("db").join(level), p.join("text").join(level));
        let (code, out, err) = memsight(&[
            "compare",
            db_dir.to_str().unwrap(),
            text_dir.to_str().unwrap(),
            // The first rank of each (the raw rows read below); by default each side's rank
            // with the highest peak is taken.
            "--rank-a=0",
            "--rank-b=0",
            "--json",
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let db = first_subdir(&db_dir).join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
        let a = raw_db(&db);
        let b = raw_csv(&first_subdir(&text_dir));
        // The text export's CANN names carry the prefix, the DB's do not: matched, they are
        // one row each (before, 29 operators were listed twice with ±their whole size).
        let text_rank = first_subdir(&text_dir);
        let prefixed = raw_ops(&text_rank)
            .0
            .iter()
            .filter(|o| o.0.starts_with("cann::"))
            .count();
        assert!(
            prefixed > 0,
            "the text export spells CANN operators with the prefix"
        );
        check_operators(&v, &a, &b);
        let rows = v["by_operator"].as_array().unwrap();
        assert!(rows.iter().any(|r| r["name"] == "Conv2D1"), "{level}");
        assert!(
            !rows
                .iter()
                .any(|r| r["name"].as_str().unwrap().starts_with("cann::"))
        );
    }
}

/// Two generated runs, each with a release of memory allocated before profiling (a row of
/// −4,096 KB and no name): the CSV's unnamed rows sum to Unknown's KB plus the rows the
/// comparison says it leaves out (issue 43 item 16: Unknown had 4,096 KB more than the CSV's
/// unnamed rows, unexplained).
#[test]
fn rows_left_out_of_the_comparison_are_said_so_sums_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let mut dirs = Vec::new();
    for (name, seed) in [("a", "1"), ("b", "2")] {
        let out = tmp.path().join(name);
        let (code, _, err) = memsight(&[
            "generate",
            out.to_str().unwrap(),
            "--allocs",
            "2000",
            "--seed",
            seed,
        ]);
        assert_eq!(code, 0, "{err}");
        dirs.push(first_subdir(&out));
    }
    let raw: Vec<(usize, f64, f64)> = dirs
        .iter()
        .map(|d| {
            let ops = raw_ops(d).0;
            let kb = |r: &common::RawOp| r.1.parse::<f64>().unwrap();
            let negative: Vec<f64> = ops.iter().map(kb).filter(|&k| k < 0.0).collect();
            let unnamed: f64 = ops.iter().filter(|r| r.0.trim().is_empty()).map(kb).sum();
            (negative.len(), negative.iter().sum(), unnamed)
        })
        .collect();
    assert!(
        raw.iter().all(|r| r.0 > 0),
        "the generator writes such rows: {raw:?}"
    );
    let (a, b) = (dirs[0].to_str().unwrap(), dirs[1].to_str().unwrap());
    let (code, out, err) = memsight(&["compare", a, b, "--json"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let unknown = v["by_operator"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == "Unknown")
        .expect("an Unknown row");
    for (side, (rows, kib, unnamed)) in ["a", "b"].into_iter().zip(&raw) {
        let left = &v["not_counted"][side];
        assert_eq!(left["rows"].as_u64(), Some(*rows as u64), "{side}");
        assert!(
            (left["kib"].as_f64().unwrap() - kib).abs() < 1e-6,
            "{side}: {left}"
        );
        // Every negative row here is unnamed: Unknown plus what is left out is the CSV's sum.
        let shown = unknown[format!("{side}_kib")].as_f64().unwrap();
        assert!(
            (shown + kib - unnamed).abs() < 1e-6,
            "{side}: {shown} + {kib} vs {unnamed}"
        );
    }
    let (code, text, _) = memsight(&["compare", a, b]);
    assert_eq!(code, 0);
    assert!(
        text.contains("Not counted: ")
            && text.contains(&format!(
                "A {} {} (",
                raw[0].0,
                if raw[0].0 == 1 { "row" } else { "rows" }
            )),
        "{text}"
    );
}

/// Issue 88: `compare --lang zh` says the comparison of two profiles in Chinese, the words of
/// the app's diff tab: the same figures, no English but the operators and ranks it names and
/// Insight's peak names; the rank chosen for a side without --rank-b is said in Chinese too.
#[test]
fn two_profiles_compare_in_chinese() {
    let (a, b) = (fixtures().join("torch_cluster"), fixtures().join("demo"));
    let (a, b) = (a.to_str().unwrap(), b.to_str().unwrap());
    let run = |lang: &str| memsight(&["compare", a, b, "--rank-a", "0", "--lang", lang]);
    let (code, en, en_err) = run("en");
    assert_eq!(code, 0, "{en_err}");
    let (_, zh, zh_err) = run("zh");
    let (_, json, _) = memsight(&["compare", a, b, "--rank-a", "0", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let mut names: Vec<String> = v["by_operator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["name"].as_str().unwrap().to_string())
        .collect();
    names.extend(["APP Reserved".to_string(), "memsight".into()]);
    common::assert_said_in_chinese(&en, &zh, &names, &[]);
    assert!(zh.contains("差值(KB)"), "{zh}");
    if !en_err.is_empty() {
        common::assert_said_in_chinese(&en_err, &zh_err, &names, &[]);
    }
}
