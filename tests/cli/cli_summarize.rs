//! `memsight summarize` and `--merge` through the real binary. The summary file is read here with
//! plain SQL (rusqlite), not with memsight's reader, and compared with `inspect --json` and
//! `steps --json`, and with the raw memory_record rows.

use crate::common;

use std::path::{Path, PathBuf};

use common::{RawCsv, fixtures, list_files, memsight, raw_origin, us_to_ns};
use rusqlite::Connection;

fn summarize(inputs: &[&Path], out: &Path) -> (i32, String, String) {
    let mut args: Vec<String> = vec!["summarize".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    memsight(&refs)
}

fn merge(inputs: &[&Path], out: &Path) -> (i32, String, String) {
    let mut args: Vec<String> = vec!["summarize".into(), "--merge".into()];
    args.extend(inputs.iter().map(|p| p.display().to_string()));
    args.extend(["--out".into(), out.display().to_string()]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    memsight(&refs)
}

fn json(text: &str) -> serde_json::Value {
    serde_json::from_str(text).unwrap()
}

/// (rank, path, inspect_json, steps_json, error) of every rank, in id order.
type RankRow = (String, String, String, Option<String>, Option<String>);

fn ranks(db: &Path) -> Vec<RankRow> {
    let c = Connection::open(db).unwrap();
    let mut q = c
        .prepare("SELECT rank, path, inspect_json, steps_json, error FROM ranks ORDER BY id")
        .unwrap();
    q.query_map([], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn each_rank_reads_back_as_inspect_and_steps_print_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("summary.db");
    let cluster = fixtures().join("torch_cluster");
    let traces = fixtures().join("pytorch/roles");
    let (code, stdout, stderr) = summarize(&[&cluster, &traces], &out);
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.contains("5 ranks (0 could not be read)"), "{stdout}");
    let c = Connection::open(&out).unwrap();
    let version: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 1);
    let rows = ranks(&out);
    assert_eq!(rows.len(), 5);
    for input in [&cluster, &traces] {
        let (_, inspect, _) = memsight(&["inspect", input.to_str().unwrap(), "--json"]);
        for want in json(&inspect)["ranks"].as_array().unwrap() {
            let rank = want["rank"].as_str().unwrap();
            let row = rows
                .iter()
                .find(|r| r.0 == rank && json(&r.2)["dir"] == want["dir"])
                .unwrap_or_else(|| panic!("rank {rank} of {} missing", input.display()));
            assert_eq!(&json(&row.2), want, "inspect of rank {rank}");
            // steps: the stored document is what `steps --json` prints, and the steps table
            // holds its figures.
            let (_, steps, _) =
                memsight(&["steps", input.to_str().unwrap(), "--rank", rank, "--json"]);
            let steps = json(&steps);
            let stored = row.3.as_deref().map(json);
            if want["steps"].is_null() {
                assert_eq!(stored, None);
                continue;
            }
            assert_eq!(stored.as_ref(), Some(&steps), "steps of rank {rank}");
            let mut q = c
                .prepare(
                    "SELECT s.step, s.peak_allocated_mib, s.survivors FROM steps s \
                     JOIN ranks r ON r.id = s.rank_id WHERE r.rank = ?1 ORDER BY s.step",
                )
                .unwrap();
            let table: Vec<(i64, Option<f64>, i64)> = q
                .query_map([rank], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
                .unwrap()
                .map(Result::unwrap)
                .collect();
            let from_json: Vec<(i64, Option<f64>, i64)> = steps["steps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| {
                    (
                        s["id"].as_i64().unwrap(),
                        s["peak_allocated_mib"].as_f64(),
                        s["survivors"]["count"].as_i64().unwrap(),
                    )
                })
                .collect();
            // serde_json parses floats to within an ulp (no float_roundtrip): compare so.
            assert_eq!(table.len(), from_json.len());
            for (t, j) in table.iter().zip(&from_json) {
                assert_eq!((t.0, t.2), (j.0, j.2), "steps table of rank {rank}");
                match (t.1, j.1) {
                    (Some(a), Some(b)) => assert!((a - b).abs() <= 1e-12 * b.abs().max(1.0)),
                    (a, b) => assert_eq!(a, b),
                }
            }
        }
    }
}

#[test]
fn the_curves_envelope_every_raw_sample() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.db");
    let rank_dir = fixtures().join("torch_crlf/node0_4000_20261121000000000_ascend_pt");
    assert_eq!(summarize(&[&rank_dir], &out).0, 0);
    // Operator Allocated of torch_npu is the PTA+GE rows' Total Allocated (MB), from the
    // rank's time origin.
    let csv = RawCsv::read(&rank_dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (t, v, comp) = (
        csv.col("Timestamp(us)"),
        csv.col("Total Allocated(MB)"),
        csv.col("Component"),
    );
    let origin = raw_origin(&rank_dir.join("ASCEND_PROFILER_OUTPUT"));
    let samples: Vec<(f64, f64)> = csv
        .rows
        .iter()
        .filter(|r| r[comp] == "PTA+GE" && !r[v].is_empty())
        .map(|r| {
            let ms = (us_to_ns(&r[t]) - origin) as f64 / 1e6;
            (ms, r[v].parse::<f64>().unwrap())
        })
        .collect();
    assert!(samples.len() > 100);
    let c = Connection::open(&out).unwrap();
    let (start, end, n, blob): (f64, f64, i64, Vec<u8>) = c
        .query_row(
            "SELECT start_ms, end_ms, buckets, envelope FROM curves \
             WHERE series = 'Operator Allocated'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    // The BLOB: little-endian f32 (min, max) pairs, one per bucket.
    let f = |i: usize| f64::from(f32::from_le_bytes(blob[i..i + 4].try_into().unwrap()));
    let buckets: Vec<(f64, f64)> = (0..blob.len() / 8)
        .map(|k| (f(8 * k), f(8 * k + 4)))
        .collect();
    assert_eq!(buckets.len() as i64, n);
    assert!(n > 0 && n <= 4096);
    let first = samples.iter().map(|s| s.0).fold(f64::MAX, f64::min);
    let last = samples.iter().map(|s| s.0).fold(f64::MIN, f64::max);
    assert!((start - first).abs() < 1e-9 && (end - last).abs() < 1e-9);
    // f32 values: within a relative 1e-6 of the raw MiB.
    let tol = |v: f64| v.abs() * 1e-6 + 1e-6;
    for &(ms, mib) in &samples {
        // Bucket k spans start + (end - start) * [k, k+1) / n; a sample on an edge may be
        // counted in the bucket either side of it.
        let x = (ms - start) / (end - start) * n as f64;
        let k = (x.floor() as usize).min(buckets.len() - 1);
        let near: Vec<usize> = if (x - x.round()).abs() < 1e-6 {
            vec![k.saturating_sub(1), k, (k + 1).min(buckets.len() - 1)]
        } else {
            vec![k]
        };
        assert!(
            near.iter()
                .any(|&k| buckets[k].0 - tol(mib) <= mib && mib <= buckets[k].1 + tol(mib)),
            "{mib} MiB at {ms} ms outside bucket {k} {:?}",
            buckets[k]
        );
    }
    let raw_max = samples.iter().map(|s| s.1).fold(f64::MIN, f64::max);
    let max = buckets.iter().map(|b| b.1).fold(f64::MIN, f64::max);
    assert!((max - raw_max).abs() < tol(raw_max), "{max} vs {raw_max}");
    let eps = 1e-6;
    let peak: f64 = c
        .query_row("SELECT peak_allocated_mib FROM ranks", [], |r| r.get(0))
        .unwrap();
    assert!((peak - raw_max).abs() < eps);
}

#[test]
fn merge_is_idempotent_and_does_not_depend_on_order() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a.db"), dir.path().join("b.db"));
    assert_eq!(summarize(&[&fixtures().join("torch_cluster")], &a).0, 0);
    assert_eq!(summarize(&[&fixtures().join("pytorch/roles")], &b).0, 0);
    let read = |p: &Path| std::fs::read(p).unwrap();
    let (ab, ba, aa) = (
        dir.path().join("ab.db"),
        dir.path().join("ba.db"),
        dir.path().join("aa.db"),
    );
    assert_eq!(merge(&[&a, &b], &ab).0, 0);
    assert_eq!(merge(&[&b, &a, &ab], &ba).0, 0);
    assert_eq!(merge(&[&a, &a], &aa).0, 0);
    assert_eq!(read(&ab), read(&ba), "merge depends on order or repeats");
    assert_eq!(
        read(&aa),
        read(&a),
        "merging a summary with itself changed it"
    );
    // Summarising both at once is the same file as merging their summaries.
    let both = dir.path().join("both.db");
    let (pc, pr) = (
        fixtures().join("pytorch/roles"),
        fixtures().join("torch_cluster"),
    );
    assert_eq!(summarize(&[&pc, &pr], &both).0, 0);
    assert_eq!(read(&both), read(&ab));
    assert_eq!(ranks(&ab).len(), 5);
}

#[test]
fn the_same_rank_twice_keeps_its_newest_files_and_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("run");
    common::copy_dir(&fixtures().join("torch_crlf"), &profile);
    let (old, new, merged) = (
        dir.path().join("old.db"),
        dir.path().join("new.db"),
        dir.path().join("merged.db"),
    );
    assert_eq!(summarize(&[&profile], &old).0, 0);
    // The profile changes: a row more in memory_record, written later.
    let record = common::first_subdir(&profile).join("ASCEND_PROFILER_OUTPUT/memory_record.csv");
    std::thread::sleep(std::time::Duration::from_millis(20));
    let mut text = std::fs::read_to_string(&record).unwrap();
    text.push_str("APP,1700000000000999.000\t,,9999.0,,,NPU:0\r\n");
    std::fs::write(&record, text).unwrap();
    assert_eq!(summarize(&[&profile], &new).0, 0);
    let (code, _, stderr) = merge(&[&old, &new], &merged);
    assert_eq!(code, 0, "{stderr}");
    assert!(stderr.contains("summarised more than once"), "{stderr}");
    let c = Connection::open(&merged).unwrap();
    let (n, app): (i64, f64) = c
        .query_row(
            "SELECT count(*), max(peak_app_reserved_mib) FROM ranks",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, app), (1, 9999.0));
    let note: String = c
        .query_row("SELECT text FROM notes", [], |r| r.get(0))
        .unwrap();
    assert!(note.contains("newest"), "{note}");
}

#[test]
fn a_rank_that_fails_is_recorded_with_its_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("s.db");
    let malformed = fixtures().join("malformed");
    let (code, stdout, stderr) = summarize(&[&malformed, &dir.path().join("gone")], &out);
    assert_eq!(code, 0, "{stderr}");
    let rows = ranks(&out);
    let empty = rows
        .iter()
        .find(|r| r.0 == "empty_ascend_pt")
        .expect("the empty rank is recorded");
    assert!(
        empty.4.as_deref().unwrap().contains("the file is empty"),
        "{empty:?}"
    );
    let gone = rows
        .iter()
        .find(|r| r.1.ends_with("gone"))
        .expect("the missing path");
    assert!(gone.4.is_some());
    let failed = rows.iter().filter(|r| r.4.is_some()).count();
    assert!(
        stdout.contains(&format!("({failed} could not be read)")),
        "{stdout}"
    );
}

#[test]
fn nothing_is_written_into_a_profile_and_bad_input_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let profile = dir.path().join("run");
    common::copy_dir(&fixtures().join("torch_crlf"), &profile);
    let before = list_files(&profile);
    let inside: PathBuf = common::first_subdir(&profile).join("summary.db");
    let (code, _, stderr) = summarize(&[&profile], &inside);
    assert_eq!(code, 2);
    assert!(
        stderr.contains("never writes into a profile folder"),
        "{stderr}"
    );
    let out = dir.path().join("s.db");
    assert_eq!(summarize(&[&profile], &out).0, 0);
    assert_eq!(list_files(&profile), before, "the profile folder changed");
    // Merging what is not a summary: a clear message, and --out is not written.
    let target = dir.path().join("m.db");
    let readme = Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md");
    let (code, _, stderr) = merge(&[&readme], &target);
    assert_eq!(code, 2);
    assert!(stderr.contains("not a memsight summary"), "{stderr}");
    let (code, _, stderr) = merge(&[&profile], &target);
    assert_eq!(code, 2);
    assert!(stderr.contains("a folder, not a summary file"), "{stderr}");
    assert!(!target.exists());
    // Nor is a failed merge allowed to leave a temp file behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
}

/// A summary given where a profile is expected says what it is and what opens it; the app's
/// reader gives each rank's row, steps and curves as plain SQL reads them.
#[test]
fn a_summary_is_named_as_such_and_reads_back_for_the_app() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("summary.db");
    let cluster = fixtures().join("torch_cluster");
    let (code, _, stderr) = summarize(&[&cluster], &out);
    assert_eq!(code, 0, "{stderr}");
    for cmd in ["inspect", "steps", "table"] {
        let (code, _, stderr) = memsight(&[cmd, out.to_str().unwrap()]);
        assert_eq!(code, 2, "{cmd}");
        assert!(
            stderr.contains("a memsight cluster summary, not a profile"),
            "{cmd}: {stderr}"
        );
    }
    assert!(memsight::export::cluster_db::is_summary(&out));
    assert!(!memsight::export::cluster_db::is_summary(&cluster));
    let file = memsight::export::cluster_db::SummaryFile::open(&out).unwrap();
    let read = file.overview().unwrap();
    let c = Connection::open(&out).unwrap();
    let n: i64 = c
        .query_row("SELECT count(*) FROM ranks", [], |r| r.get(0))
        .unwrap();
    assert_eq!(read.ranks.len() as i64, n);
    for r in &read.ranks {
        let (rank, peak, steps): (String, Option<f64>, i64) = c
            .query_row(
                "SELECT rank, peak_allocated_mib, (SELECT count(*) FROM steps WHERE rank_id = ?1) \
                 FROM ranks WHERE id = ?1",
                [r.id],
                |q| Ok((q.get(0)?, q.get(1)?, q.get(2)?)),
            )
            .unwrap();
        assert_eq!(r.identity.rank, rank);
        assert_eq!(r.peak_allocated_mib, peak);
        assert_eq!(r.steps.len() as i64, steps);
        // Curves: the BLOB is little-endian f32 (min, max) pairs.
        let mut q = c
            .prepare("SELECT series, envelope FROM curves WHERE rank_id = ?1 ORDER BY rowid")
            .unwrap();
        let want: Vec<(String, Vec<(f32, f32)>)> = q
            .query_map([r.id], |q| {
                let blob: Vec<u8> = q.get(1)?;
                let f = |b: &[u8]| f32::from_le_bytes(b.try_into().unwrap());
                Ok((
                    q.get(0)?,
                    blob.chunks(8).map(|p| (f(&p[..4]), f(&p[4..]))).collect(),
                ))
            })
            .unwrap()
            .map(Result::unwrap)
            .collect();
        let got: Vec<(String, Vec<(f32, f32)>)> = file
            .curves(r.id)
            .unwrap()
            .into_iter()
            .map(|(s, e)| (s, e.min_max))
            .collect();
        assert!(!want.is_empty());
        assert_eq!(got, want, "rank {rank}");
    }
}

/// Issue 41 items 1-2: `--out` never replaces an input (a trace, a DB, by any spelling or hard
/// link), never writes into the folder of an input given as a file, and never replaces anything
/// but a regular file (a FIFO, a link to a device). Every refused run leaves the inputs' bytes
/// and the folder's listing as they were.
#[test]
fn out_never_replaces_an_input_or_a_non_regular_file() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    std::fs::create_dir(&run).unwrap();
    let trace = run.join("rank0.pt.trace.json.gz");
    std::fs::copy(fixtures().join("pytorch/cnn_adam.pt.trace.json.gz"), &trace).unwrap();
    let bytes = std::fs::read(&trace).unwrap();
    let before = list_files(dir.path());
    let refused = |inputs: &[&Path], out: &Path, why: &str| {
        let (code, _, stderr) = summarize(inputs, out);
        assert_eq!(code, 2, "{} was accepted", out.display());
        assert!(stderr.contains(why), "{stderr}");
        assert_eq!(std::fs::read(&trace).unwrap(), bytes, "the input changed");
        assert_eq!(list_files(dir.path()), before, "the folder changed");
    };
    // The input itself, by its own path and by another spelling.
    refused(&[&trace], &trace, "is the input");
    let other = run.join("..").join("run").join("rank0.pt.trace.json.gz");
    refused(&[&trace], &other, "is the input");
    // Beside a file input: its folder is the user's profile folder.
    refused(
        &[&trace],
        &run.join("summary.db"),
        "inside the folder of the input",
    );
    #[cfg(unix)]
    {
        // A hard link to the input, outside its folder.
        let link = dir.path().join("hard.db");
        std::fs::hard_link(&trace, &link).unwrap();
        let before = list_files(dir.path());
        let (code, _, stderr) = summarize(&[&trace], &link);
        assert_eq!(code, 2);
        assert!(stderr.contains("is the input"), "{stderr}");
        assert_eq!(std::fs::read(&link).unwrap(), bytes);
        assert_eq!(list_files(dir.path()), before);
        std::fs::remove_file(&link).unwrap();
        // A FIFO, and a link to a character device: refused, left as they are.
        let fifo = dir.path().join("fifo.db");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let (code, _, stderr) = summarize(&[&trace], &fifo);
        assert_eq!(code, 2);
        assert!(stderr.contains("a FIFO, not a regular file"), "{stderr}");
        use std::os::unix::fs::FileTypeExt;
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        let null = dir.path().join("null.db");
        std::os::unix::fs::symlink("/dev/null", &null).unwrap();
        let (code, _, stderr) = summarize(&[&trace], &null);
        assert_eq!(code, 2);
        assert!(stderr.contains("a character device"), "{stderr}");
        assert!(
            std::fs::symlink_metadata(&null)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert!(
            std::fs::metadata("/dev/null")
                .unwrap()
                .file_type()
                .is_char_device()
        );
    }
    // Outside the input's folder, a regular file or nothing: written.
    let out = dir.path().join("summary.db");
    std::fs::write(&out, b"an old file").unwrap();
    let (code, _, stderr) = summarize(&[&trace], &out);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(std::fs::read(&trace).unwrap(), bytes);
    // Merging: never over an input, but beside the summaries it merges is fine.
    let second = dir.path().join("second.db");
    let (code, _, stderr) = merge(&[&out], &out);
    assert_eq!(code, 2);
    assert!(stderr.contains("is the input"), "{stderr}");
    assert_eq!(merge(&[&out], &second).0, 0);
}

/// Issue 41 item 15: a `summarize` stopped by SIGTERM while it writes (as a batch scheduler
/// stops a job) removes its temporary file and writes no `--out`. The writer is held at a known
/// point (MEMSIGHT_HOLD_SUMMARY_WRITE) so that the signal certainly comes mid-write.
#[cfg(unix)]
#[test]
fn a_terminated_summarize_leaves_no_temporary_file() {
    use std::io::BufRead;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("summary.db");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .args(["summarize", "--out"])
        .arg(&out)
        .arg("--")
        .arg(fixtures().join("torch_crlf"))
        .env("MEMSIGHT_HOLD_SUMMARY_WRITE", "1")
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = std::io::BufReader::new(child.stderr.take().unwrap()).lines();
    let temp = loop {
        let line = lines.next().expect("it says what it holds").unwrap();
        if let Some(p) = line.strip_prefix("memsight: holding ") {
            break PathBuf::from(p);
        }
    };
    assert!(temp.exists(), "the temporary file is there while held");
    assert_eq!(temp.parent(), Some(dir.path()));
    let killed = std::process::Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(143), "{status:?}");
    assert!(!temp.exists(), "the temporary file was left behind");
    assert!(!out.exists());
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

/// Issue 41 items 5 and 16: a damaged summary. A curve BLOB far larger than its bucket count
/// (20 MB) is left out with a note, never read; a ranks table that repeats an id keeps the first
/// row of it with all its curves (before: merging kept none); garbage in inspect_json is said.
#[test]
fn a_damaged_summary_merges_what_is_sound_and_says_what_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.db");
    assert_eq!(summarize(&[&fixtures().join("torch_cluster")], &good).0, 0);
    let count = |db: &Path, sql: &str| -> i64 {
        Connection::open(db)
            .unwrap()
            .query_row(sql, [], |r| r.get(0))
            .unwrap()
    };
    let curves = count(&good, "SELECT count(*) FROM curves");
    assert!(curves > 4, "{curves}");
    // Repeated ids (a table rebuilt without its key) and garbage in one inspect_json.
    let repeated = dir.path().join("repeated.db");
    std::fs::copy(&good, &repeated).unwrap();
    Connection::open(&repeated)
        .unwrap()
        .execute_batch(
            "PRAGMA foreign_keys=OFF; CREATE TABLE r2 AS SELECT * FROM ranks; DROP TABLE ranks; \
             ALTER TABLE r2 RENAME TO ranks; INSERT INTO ranks SELECT * FROM ranks WHERE id=1; \
             UPDATE ranks SET inspect_json='{garbage' WHERE id=2;",
        )
        .unwrap();
    let merged = dir.path().join("merged.db");
    let (code, _, stderr) = merge(&[&repeated], &merged);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(count(&merged, "SELECT count(*) FROM curves"), curves);
    assert!(stderr.contains("repeat an id"), "{stderr}");
    assert!(stderr.contains("not valid JSON"), "{stderr}");
    // A 20 MB BLOB where 8 bytes a bucket belong.
    let huge = dir.path().join("huge.db");
    std::fs::copy(&good, &huge).unwrap();
    Connection::open(&huge)
        .unwrap()
        .execute_batch(
            "UPDATE curves SET envelope = zeroblob(20000000) \
             WHERE rowid = (SELECT min(rowid) FROM curves);",
        )
        .unwrap();
    let merged2 = dir.path().join("merged2.db");
    let (code, _, stderr) = merge(&[&huge], &merged2);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(count(&merged2, "SELECT count(*) FROM curves"), curves - 1);
    assert!(stderr.contains("1 curve is damaged"), "{stderr}");
    // The app's reader leaves that curve out too.
    let file = memsight::export::cluster_db::SummaryFile::open(&huge).unwrap();
    let first: i64 = count(&huge, "SELECT rank_id FROM curves ORDER BY rowid LIMIT 1");
    let shown = file.curves(first).unwrap();
    let stored = count(
        &huge,
        &format!("SELECT count(*) FROM curves WHERE rank_id={first}"),
    );
    assert_eq!(shown.len() as i64, stored - 1);
}
