//! `memsight compare` against sums computed independently from the raw operator_memory and
//! memory_record files of both sides.

mod common;

use std::path::{Path, PathBuf};

use common::{RawCsv, first_subdir, fixtures, memsight, raw_by_name, raw_peak};

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
    let (a, b) = (raw_by_name(a_rank), raw_by_name(b_rank));
    let names: std::collections::BTreeSet<&String> = a.keys().chain(b.keys()).collect();
    let rows = v["by_operator"].as_array().unwrap();
    assert_eq!(rows.len(), names.len());
    let mut last = f64::INFINITY;
    for r in rows {
        let name = r["name"].as_str().unwrap().to_string();
        let (ak, an) = a.get(&name).copied().unwrap_or_default();
        let (bk, bn) = b.get(&name).copied().unwrap_or_default();
        assert!((r["a_kib"].as_f64().unwrap() - ak).abs() < 1e-6, "{r}");
        assert!((r["b_kib"].as_f64().unwrap() - bk).abs() < 1e-6, "{r}");
        assert!(
            (r["delta_kib"].as_f64().unwrap() - (bk - ak)).abs() < 1e-6,
            "{r}"
        );
        assert_eq!(
            (r["a_blocks"].as_u64(), r["b_blocks"].as_u64()),
            (Some(an as u64), Some(bn as u64))
        );
        let d = (bk - ak).abs();
        assert!(d <= last + 1e-9, "sorted by |delta| descending");
        last = d;
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
    let table: Vec<&str> = out.lines().skip_while(|l| !l.starts_with("Name")).collect();
    assert_eq!(table.len(), 6, "{out}");
    assert!(table.iter().all(|l| l.len() == table[0].len()), "{out}");
    let (code, _, err) = memsight(&["compare", demo.to_str().unwrap(), "/no/such/folder"]);
    assert_eq!(code, 2);
    assert_eq!(err.lines().count(), 1, "{err}");
}
