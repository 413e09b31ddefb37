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

/// The README's way from a clone to `import memsight` (issue 87), run as written in a fresh
/// venv: its `pip install "$(python3 scripts/wheel-from-build.py target/release/memsight dist)"`
/// line (the wheel put in a temporary folder instead of `dist`), then `import memsight` with no
/// `MEMSIGHT_BIN`: the installed command answers, and its peak is the raw file's.
#[test]
fn the_readmes_python_install_line_gives_import_memsight() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let line = readme
        .lines()
        .find(|l| l.starts_with("pip install \"$(python3 scripts/wheel-from-build.py"))
        .expect("the README says how to install the Python API from a clone");
    assert!(line.contains("target/release/memsight"), "{line}");
    let tmp = tempfile::tempdir().unwrap();
    let venv = tmp.path().join("venv");
    let made = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .status();
    if !made.is_ok_and(|s| s.success()) {
        common::skip("python3 -m venv is not available");
        return;
    }
    let wheels = tmp.path().join("wheels");
    let line = line.replace(" dist)", &format!(" {})", wheels.display()));
    let bin = venv.join("bin");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .args(["-c", &line])
        .current_dir(root)
        .env("PATH", &path)
        .env("PIP_DISABLE_PIP_VERSION_CHECK", "1")
        .env("PIP_NO_INDEX", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{line}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let demo_rank = root.join("fixtures/torch_crlf");
    let script = format!(
        "import memsight; d = memsight.inspect({:?}); print(d['ranks'][0]['peaks']['operator_allocated']['mib'])",
        demo_rank.display().to_string()
    );
    let out = Command::new(bin.join("python"))
        .args(["-c", &script])
        .current_dir(tmp.path())
        .env_remove("MEMSIGHT_BIN")
        .env_remove("PYTHONPATH")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let got: f64 = String::from_utf8_lossy(&out.stdout).trim().parse().unwrap();
    // The raw memory_record's PTA+GE Total Allocated maximum.
    let rec = common::RawCsv::read(
        &root.join(
            "fixtures/torch_crlf/node0_4000_20261121000000000_ascend_pt/ASCEND_PROFILER_OUTPUT/memory_record.csv",
        ),
    );
    let (want, _) = common::raw_peak(&rec, "PTA+GE", "Total Allocated(MB)", 1.0).unwrap();
    assert!((got - want).abs() < 1e-6, "{got} {want}");
}
