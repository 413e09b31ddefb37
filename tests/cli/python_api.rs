//! The Python API (`python/memsight`) over this build's binary: its unittest suite
//! (`python/tests`, which checks each function against the raw files with Python's own csv and
//! json modules), run with `PYTHONPATH=python` and `MEMSIGHT_BIN` set to the binary cargo built.
//! CI also runs the same suite against each installed wheel, with pandas (scripts/package.sh).

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn the_python_api_passes_its_suite_on_this_binary() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = Command::new("python3")
        .args(["-m", "unittest", "discover", "-v", "-s"])
        .arg(root.join("python/tests"))
        .current_dir(root)
        .env("PYTHONPATH", root.join("python"))
        .env("MEMSIGHT_BIN", env!("CARGO_BIN_EXE_memsight"))
        .env("MEMSIGHT_REPO", root)
        // pandas is not needed to build or test memsight; the wheel check has it.
        .env("MEMSIGHT_PANDAS_OPTIONAL", "1")
        .output();
    let out = match out {
        Ok(o) => o,
        Err(e) => {
            common::skip(&format!("python3 is not available ({e})"));
            return;
        }
    };
    let report = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "python/tests failed:\n{report}");
    // The suite was found and ran (discovery that finds nothing also exits 0).
    let ran: usize = report
        .lines()
        .find_map(|l| l.strip_prefix("Ran ")?.split(' ').next()?.parse().ok())
        .unwrap_or(0);
    assert!(ran >= 15, "{report}");
}
