//! Replays every file under `fuzz/regressions/<target>/` through the fuzz target's entry point
//! (the same code the cargo-fuzz targets call), so CI guards every crash ever found, and every
//! hostile input of the input-safety work, on the stable toolchain.

use std::path::Path;

use memsight::fuzzing::{TARGETS, run};

/// The target that confines the process's reads while it runs: replayed alone, by
/// `tests/process_wide.rs`, so no test beside it finds its files refused.
const PROCESS_WIDE: &str = "mcp_request";

#[test]
fn every_regression_input_runs_clean() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions");
    let mut ran = 0;
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let target = dir.file_name().unwrap().to_string_lossy().into_owned();
        assert!(
            TARGETS.contains(&target.as_str()),
            "unknown target folder {target}"
        );
        if target == PROCESS_WIDE {
            continue;
        }
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for f in files {
            let data = std::fs::read(&f).unwrap();
            eprintln!("{target}: {}", f.display());
            assert!(run(&target, &data));
            ran += 1;
        }
    }
    // Every target has inputs, so a renamed folder cannot silently replay nothing.
    assert!(ran >= TARGETS.len() - 1, "only {ran} inputs replayed");
}
