//! Call stacks of the real exports against independent computations: for the text exports a
//! brute-force search over every `cpu_op` of `trace_view.json` read whole with serde_json; for
//! the DB, SQL over `OP_MEMORY`, `PYTORCH_API` and `PYTORCH_CALLCHAINS`.

use crate::common;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use common::{Op, memsight, running_at, trace_flows, trace_ops};
use memsight::model::RankData;

fn pytorch(kind: &str, level: &str) -> Option<PathBuf> {
    let p = common::samples()?
        .join("xiaobingling93-pixel_Ascend-msinsight/test/data/pytorch")
        .join(kind)
        .join(level);
    p.is_dir().then_some(p)
}

/// The op `op` is nested in on its thread: of the ops containing it, the one entered last
/// (then the shorter).
fn parent(ops: &[Op], op: usize) -> Option<usize> {
    let p = &ops[op];
    (0..ops.len())
        .filter(|&i| {
            let o = &ops[i];
            i != op
                && o.thread == p.thread
                && o.start <= p.start
                && p.end <= o.end
                && (o.start, std::cmp::Reverse(o.end), i) < (p.start, std::cmp::Reverse(p.end), op)
        })
        .max_by_key(|&i| (ops[i].start, std::cmp::Reverse(ops[i].end), i))
}

/// An op's own stack, else the nearest one of the ops it is nested in.
fn own_or_enclosing(ops: &[Op], op: usize) -> Vec<String> {
    let mut at = Some(op);
    while let Some(i) = at {
        if !ops[i].frames.is_empty() {
            return ops[i].frames.clone();
        }
        at = parent(ops, i);
    }
    Vec::new()
}

/// The stack an op's blocks get, by brute force over every op and flow of the trace: its own;
/// else, for a backward node a `fwdbwd` flow ends at, the stack (own or enclosing) of the op
/// that flow starts at (the op starting there with the flow's id as its sequence number, else
/// the longest); else the stack its enclosing op gets (by these same rules); else the latest op
/// with its sequence number that started before it (on another thread when there is one).
fn expected_stack(ops: &[Op], flows: &[(i64, bool, String, i128)], op: usize) -> Vec<String> {
    fn at(ops: &[Op], thread: &str, t: i128, id: i64) -> Option<usize> {
        (0..ops.len())
            .filter(|&i| ops[i].thread == thread && ops[i].start == t)
            .max_by_key(|&i| (ops[i].seq == id, ops[i].end - ops[i].start, i))
    }
    let o = &ops[op];
    if !o.frames.is_empty() {
        return o.frames.clone();
    }
    // A flow ending here: the latest start before it with the same id.
    let end = flows
        .iter()
        .filter(|f| !f.1 && f.2 == o.thread && f.3 == o.start)
        .find(|f| at(ops, &f.2, f.3, f.0) == Some(op));
    if let Some(end) = end
        && let Some(start) = flows
            .iter()
            .filter(|f| f.1 && f.0 == end.0 && f.3 <= end.3)
            .max_by_key(|f| f.3)
        && let Some(fwd) = at(ops, &start.2, start.3, start.0)
        && fwd != op
    {
        let s = own_or_enclosing(ops, fwd);
        if !s.is_empty() {
            return s;
        }
    }
    if let Some(p) = parent(ops, op) {
        let s = expected_stack(ops, flows, p);
        if !s.is_empty() {
            return s;
        }
    }
    if o.seq < 0 {
        return Vec::new();
    }
    let before: Vec<usize> = (0..ops.len())
        .filter(|&j| {
            j != op
                && ops[j].seq == o.seq
                && ops[j].start < o.start
                && !own_or_enclosing(ops, j).is_empty()
        })
        .collect();
    let latest = |other_thread: bool| {
        before
            .iter()
            .copied()
            .filter(|&j| !other_thread || ops[j].thread != o.thread)
            .max_by_key(|&j| (ops[j].start, j))
    };
    latest(true)
        .or_else(|| latest(false))
        .map(|j| own_or_enclosing(ops, j))
        .unwrap_or_default()
}

/// Checks rank `dir` (its operator_memory.csv and trace_view.json) against `data`.
/// Returns how many rows had their op's own stack and how many borrowed one.
fn check_text_rank(dir: &Path, data: &RankData) -> (usize, usize) {
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let ops = trace_ops(&out.join("trace_view.json"));
    let flows = trace_flows(&out.join("trace_view.json"));
    let csv = common::RawCsv::read(&out.join("operator_memory.csv"));
    let at = csv.col("Allocation Time(us)");
    let stacks = data.stacks.as_ref().expect("stacks");
    assert_eq!(stacks.row_op.len(), csv.rows.len());
    let (mut own, mut inherited, mut outside) = (0, 0, 0);
    for (r, row) in csv.rows.iter().enumerate() {
        let Some(op) = (!row[at].is_empty())
            .then(|| common::us_to_ns(&row[at]))
            .and_then(|t| running_at(&ops, t))
        else {
            outside += 1;
            assert_eq!(stacks.row_op_name(r), None, "row {r}");
            continue;
        };
        assert_eq!(stacks.row_op_name(r), Some(op.name.as_str()), "row {r}");
        let got: Vec<String> = stacks
            .row_frames(r)
            .into_iter()
            .map(str::to_string)
            .collect();
        if !op.frames.is_empty() {
            own += 1;
            assert_eq!(got, op.frames, "row {r}: the op's own stack");
        } else {
            // The op's index among the trace's ops, then its stack by brute force.
            let index = ops
                .iter()
                .position(|o| std::ptr::eq(o, op))
                .expect("an op of the trace");
            let want = expected_stack(&ops, &flows, index);
            assert_eq!(got, want, "row {r} ({}): its stack by the flows", op.name);
            if !got.is_empty() {
                inherited += 1;
            }
        }
    }
    assert!(own > 50, "many rows have their op's own stack ({own})");
    assert_eq!(stacks.unattributed, outside);
    assert_eq!(
        stacks.without_stack,
        csv.rows.len() - own - inherited - outside,
        "the count of rows without a stack is told"
    );
    (own, inherited)
}

#[test]
fn the_generated_demo_attributes_like_brute_force() {
    let dir = common::first_subdir(&common::fixtures().join("demo"));
    let data = common::load_first(&dir);
    check_text_rank(&dir, &data);
}

#[test]
fn text_exports_attribute_every_allocation_to_the_op_running_then() {
    for level in ["level0", "level1", "level2"] {
        let Some(root) = pytorch("text", level) else {
            return;
        };
        for rank in ["rank0_ascend_pt", "rank1_ascend_pt"] {
            let dir = root.join(rank);
            let data = common::load_first(&dir);
            let (_, inherited) = check_text_rank(&dir, &data);
            assert!(
                inherited > 0,
                "backward rows borrow their forward op's stack"
            );
        }
    }
}

/// A DB opened read-only without touching its folder (some samples carry a WAL).
fn open_db(db: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open_with_flags(
        format!("file:{}?immutable=1", db.display()),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_URI,
    )
    .unwrap()
}

#[test]
fn db_exports_attribute_every_allocation_like_sql_does() {
    for level in ["level0", "level1", "level2"] {
        let Some(root) = pytorch("db", level) else {
            return;
        };
        let dir = root.join("rank0_ascend_pt");
        let db = dir.join("ASCEND_PROFILER_OUTPUT/ascend_pytorch_profiler_0.db");
        let conn = open_db(&db);
        // For each OP_MEMORY row: the op running at its allocation time and its own frames.
        let sql = "SELECT o.allocationTime, o.size, \
            (SELECT a.rowid FROM PYTORCH_API a \
              WHERE a.type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op') \
                AND CAST(a.startNs AS INTEGER) <= o.allocationTime \
                AND CAST(a.endNs AS INTEGER) >= o.allocationTime \
              ORDER BY CAST(a.startNs AS INTEGER) DESC, CAST(a.endNs AS INTEGER) ASC LIMIT 1) \
            FROM OP_MEMORY o ORDER BY o.rowid";
        let rows: Vec<(i64, i64, Option<i64>)> = conn
            .prepare(sql)
            .unwrap()
            .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let op_of = |rowid: i64| -> (String, Vec<String>) {
            let (name, chain): (String, Option<i64>) = conn
                .query_row(
                    "SELECT s.value, a.callchainId FROM PYTORCH_API a \
                     JOIN STRING_IDS s ON s.id = a.name WHERE a.rowid = ?1",
                    [rowid],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                )
                .unwrap();
            let frames = chain.map_or(Vec::new(), |c| {
                conn.prepare(
                    "SELECT s.value FROM PYTORCH_CALLCHAINS c JOIN STRING_IDS s ON s.id = c.stack \
                     WHERE c.id = ?1 ORDER BY c.stackDepth",
                )
                .unwrap()
                .query_map([c], |r| r.get::<_, String>(0))
                .unwrap()
                .map(Result::unwrap)
                .collect()
            });
            (name, frames)
        };
        let data = common::load_first(&dir);
        let stacks = data.stacks.as_ref().expect("stacks from the DB");
        assert_eq!(stacks.source.as_str(), "db");
        // Match rows on (allocation time, size): the loader may keep its own order.
        let mut by_key: HashMap<(i64, i64), Vec<usize>> = HashMap::new();
        for r in 0..data.operators.len() {
            by_key
                .entry((data.operators.alloc_time[r], data.operators.size[r]))
                .or_default()
                .push(r);
        }
        let mut own = 0;
        for (t, size, op) in rows {
            let r = by_key
                .get_mut(&(t, size))
                .and_then(Vec::pop)
                .expect("row loaded");
            let op = op.expect("every sample row falls in a host op");
            let (name, frames) = op_of(op);
            assert_eq!(
                stacks.row_op_name(r),
                Some(name.as_str()),
                "{level} row at {t}"
            );
            if !frames.is_empty() {
                own += 1;
                let got: Vec<&str> = stacks.row_frames(r);
                assert_eq!(got, frames, "{level} row at {t}");
            }
        }
        assert!(own > 50, "{level}: {own} rows with their op's own stack");
    }
}

#[test]
fn cli_stacks_and_live_json_name_the_python_lines() {
    let Some(root) = pytorch("text", "level1") else {
        return;
    };
    let rank = root.join("rank0_ascend_pt");
    let p = rank.to_str().unwrap();
    // By source line, all blocks: the sum over groups is every block, heaviest first.
    let (code, out, err) = memsight(&["stacks", p, "--by", "line", "--json", "--top", "1000"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let items = v["items"].as_array().unwrap();
    let csv = common::RawCsv::read(&rank.join("ASCEND_PROFILER_OUTPUT/operator_memory.csv"));
    let size = csv.col("Size(KB)");
    let total_kib: f64 = csv
        .rows
        .iter()
        .map(|r| r[size].parse::<f64>().unwrap())
        .sum();
    let sum_mib: f64 = items.iter().map(|i| i["mib"].as_f64().unwrap()).sum();
    assert!(
        (sum_mib * 1024.0 - total_kib).abs() < 1e-6,
        "{sum_mib} MiB vs {total_kib} KiB"
    );
    let blocks: u64 = items.iter().map(|i| i["blocks"].as_u64().unwrap()).sum();
    assert_eq!(blocks as usize, csv.rows.len());
    let mibs: Vec<f64> = items.iter().map(|i| i["mib"].as_f64().unwrap()).collect();
    assert!(mibs.windows(2).all(|w| w[0] >= w[1]), "heaviest first");
    // The heaviest line, recomputed: rows whose op's (or ancestor's) stack has it as the
    // innermost frame of the script.
    let top_line = items[0]["source_line"].as_str().unwrap();
    assert!(top_line.contains("imagenet_script/main.py("), "{top_line}");

    // live --json: blocks carry their stack, innermost first.
    let (code, out, err) = memsight(&["live", p, "--at-ms", "150", "--json", "--top", "500"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let with_stack = v["largest"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|b| b["stack"].is_array())
        .count();
    assert!(with_stack > 0, "{out}");

    // Alive at a time, by stack: the blocks are those `live` counts.
    let (code, out, _) = memsight(&["stacks", p, "--at-ms", "150", "--json", "--top", "1000"]);
    assert_eq!(code, 0);
    let s: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(s["blocks"], v["blocks"]);
    assert!((s["mib"].as_f64().unwrap() - v["total_mib"].as_f64().unwrap()).abs() < 1e-9);

    // By op, with calls; the text form names the source line.
    let (code, out, _) = memsight(&["stacks", p, "--by", "op"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("calls") && out.contains("empty_tensor"),
        "{out}"
    );
    let (code, out, _) = memsight(&["stacks", p]);
    assert_eq!(code, 0);
    assert!(
        out.contains(">/home/z30057886/imagenet_script/main.py("),
        "{out}"
    );

    // A profile without host ops says why; bad windows are refused before loading.
    let (code, _, err) = memsight(&[
        "stacks",
        common::fixtures().join("torch_crlf").to_str().unwrap(),
    ]);
    assert_ne!(code, 0);
    assert!(err.contains("with_stack"), "{err}");
    let (code, _, err) = memsight(&["stacks", p, "--from-ms", "5", "--to-ms", "1"]);
    assert_ne!(code, 0);
    assert!(err.contains("after"), "{err}");
}

/// A generated rank with the DB and the CSV files (and trace_view.json) beside it: the DB by
/// default, the CSVs with `--source csv`; both give the framework's blocks the same Python
/// lines (the generator wrote one host op per framework allocation into both).
#[test]
fn the_db_and_the_csv_files_of_one_rank_give_the_same_lines() {
    let dir = common::db_fixtures().join("db");
    let p = dir.to_str().unwrap();
    let lines = |source: &str| -> Vec<(String, u64, String)> {
        let (code, out, err) = memsight(&[
            "stacks", p, "--by", "line", "--json", "--top", "1000", "--source", source,
        ]);
        assert_eq!(code, 0, "{err}");
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        let mut items: Vec<(String, u64, String)> = v["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|i| {
                let line = i["source_line"].as_str()?;
                // The trace's per-step test op (train.py(N): step) exists only in the trace.
                (!line.starts_with("train.py(")).then(|| {
                    (
                        line.to_string(),
                        i["blocks"].as_u64().unwrap(),
                        format!("{:.6}", i["mib"].as_f64().unwrap()),
                    )
                })
            })
            .collect();
        items.sort();
        items
    };
    let db = lines("db");
    assert!(db.len() >= 5, "{db:?}");
    assert_eq!(db, lines("csv"));
    let (_, out, _) = memsight(&["inspect", p, "--json", "--source", "csv"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["ranks"][0]["source"], "csv");
    assert_eq!(v["ranks"][0]["stacks"]["source"], "trace_view");
    // A CSV-only profile cannot be read from a DB: said, not guessed.
    let csv_only = common::fixtures().join("torch_crlf");
    let (code, _, err) = memsight(&["steps", csv_only.to_str().unwrap(), "--source", "db"]);
    assert_ne!(code, 0);
    assert!(err.contains("--source asks for a DB"), "{err}");
}
