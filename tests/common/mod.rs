//! Independent readers for test expectations: plain line splitting, no memsight code.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// A test that cannot run its check here (no samples, no python3) skips with a note, unless
/// `MEMSIGHT_REQUIRE_ALL` is set (CI sets it): then the skip is a failure, so a check can never
/// pass in CI by not running.
pub fn skip(why: &str) {
    if std::env::var_os("MEMSIGHT_REQUIRE_ALL").is_some_and(|v| !v.is_empty() && v != "0") {
        panic!("MEMSIGHT_REQUIRE_ALL is set, and this test cannot run: {why}");
    }
    eprintln!("{why}: skipping");
}

/// A generated msMemScope dump of `allocs` allocations with Python call stacks (`memsight
/// generate DIR --format memscope --stacks`) in a fresh temporary folder: the folder (removed
/// when dropped) and the dump.
pub fn generated_dump(allocs: usize) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let opts = memsight::generate::GenOptions {
        allocs,
        stacks: true,
        format: memsight::model::Format::Imported(memsight::ingest::msmemscope::NAME),
        ..Default::default()
    };
    let file = memsight::generate::generate(tmp.path(), &opts).unwrap()[0].clone();
    (tmp, file)
}

/// `../shared/samples`, from MEMSIGHT_SAMPLES or beside the checkout; `None` prints why (a
/// failure under `MEMSIGHT_REQUIRE_ALL`).
pub fn samples() -> Option<PathBuf> {
    let p = std::env::var_os("MEMSIGHT_SAMPLES")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/samples"));
    if p.is_dir() {
        Some(p)
    } else {
        skip(&format!(
            "samples not found at {} (set MEMSIGHT_SAMPLES)",
            p.display()
        ));
        None
    }
}

/// The committed fixtures folder.
pub fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures")
}

/// The DB fixtures (`db`: a DB with the CSVs beside it; `db_only`: two DB-only ranks), written
/// by the generator once per test process. They are not committed: their file names match the
/// real exports' naming, which the repository's checks reserve for `../shared/samples`.
pub fn db_fixtures() -> PathBuf {
    static DIR: std::sync::OnceLock<tempfile::TempDir> = std::sync::OnceLock::new();
    DIR.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        memsight::generate::write_fixtures(dir.path()).unwrap();
        dir
    })
    .path()
    .to_path_buf()
}

/// A CSV as header + rows of trimmed cells (quotes, tabs, CR removed). No quoted commas allowed.
pub struct RawCsv {
    pub header: Vec<String>,
    pub rows: Vec<Vec<String>>,
}

impl RawCsv {
    pub fn read(path: &Path) -> RawCsv {
        let text = std::fs::read_to_string(path).unwrap();
        let text = text.trim_start_matches('\u{feff}');
        let mut lines = text
            .split('\n')
            .map(|l| l.trim_end_matches('\r'))
            .filter(|l| !l.is_empty());
        let clean = |c: &str| {
            c.trim_matches(|ch: char| ch == '"' || ch == '\t' || ch == ' ')
                .to_string()
        };
        let header = lines
            .next()
            .map(|h| h.split(',').map(clean).collect())
            .unwrap_or_default();
        let rows = lines.map(|l| l.split(',').map(clean).collect()).collect();
        RawCsv { header, rows }
    }
    pub fn col(&self, name: &str) -> usize {
        self.header
            .iter()
            .position(|h| h == name)
            .unwrap_or_else(|| panic!("no column {name} in {:?}", self.header))
    }
    pub fn try_col(&self, name: &str) -> Option<usize> {
        self.header.iter().position(|h| h == name)
    }
}

/// `"1764246877074815.290"` (µs) as exact ns, via integer arithmetic on the digits.
pub fn us_to_ns(s: &str) -> i128 {
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    let mut frac = frac.to_string();
    while frac.len() < 3 {
        frac.push('0');
    }
    int.parse::<i128>().unwrap() * 1000 + frac[..3].parse::<i128>().unwrap()
}

/// Peak of `value_col` (MiB, f64) over rows with `component`, earliest on ties:
/// (mib, ns). Rows with an empty value are ignored.
pub fn raw_peak(csv: &RawCsv, component: &str, value_col: &str, scale: f64) -> Option<(f64, i128)> {
    let c = csv.col("Component");
    let t = csv.col("Timestamp(us)");
    let v = csv.col(value_col);
    let mut rows: Vec<(i128, f64)> = csv
        .rows
        .iter()
        .filter(|r| r[c] == component && !r[v].is_empty() && r[v] != "N/A")
        .map(|r| (us_to_ns(&r[t]), r[v].parse::<f64>().unwrap() * scale))
        .collect();
    rows.sort_by_key(|x| x.0); // stable: file order on equal times
    let mut best: Option<(f64, i128)> = None;
    for (ts, val) in rows {
        if best.is_none_or(|b| val > b.0) {
            best = Some((val, ts));
        }
    }
    best
}

/// Earliest timestamp over the rank's memory files, ns.
pub fn raw_origin(dir: &Path) -> i128 {
    let mut min = i128::MAX;
    for (file, cols) in [
        ("memory_record.csv", &["Timestamp(us)"][..]),
        (
            "operator_memory.csv",
            &["Allocation Time(us)", "Release Time(us)"][..],
        ),
        ("npu_module_mem.csv", &["Timestamp(us)"][..]),
    ] {
        let p = dir.join(file);
        if !p.exists() {
            continue;
        }
        let csv = RawCsv::read(&p);
        for name in cols {
            if let Some(i) = csv.try_col(name) {
                for r in &csv.rows {
                    if r.len() > i && !r[i].is_empty() && r[i] != "N/A" {
                        min = min.min(us_to_ns(&r[i]));
                    }
                }
            }
        }
    }
    min
}

/// The first subfolder of `dir` in name order (a fixture's first rank).
pub fn first_subdir(dir: &Path) -> PathBuf {
    let mut subs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    subs.sort();
    subs.remove(0)
}

/// Discovers `dir` and loads its first rank.
pub fn load_first(dir: &Path) -> memsight::model::RankData {
    let p = memsight::ingest::discover(dir).unwrap();
    memsight::ingest::load_rank(&p.ranks[0], &memsight::ingest::LoadControl::new()).unwrap()
}

/// Runs the real binary: (exit code, stdout, stderr).
pub fn memsight(args: &[&str]) -> (i32, String, String) {
    let args: Vec<&std::ffi::OsStr> = args.iter().map(|a| a.as_ref()).collect();
    memsight_in(Path::new("."), &args)
}

/// Runs the binary in `dir` with `args` (any bytes: a hostile file name); (code, stdout,
/// stderr).
pub fn memsight_in(dir: &Path, args: &[&std::ffi::OsStr]) -> (i32, String, String) {
    // The text's language follows the locale: the tests read English unless they ask.
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_memsight"))
        .current_dir(dir)
        .args(args)
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env_remove("LANG")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A 1400×900 harness around an app already set up (loaded, language chosen), with real
/// frame times; two frames are run (the CJK font is added in the first and used from the next).
#[cfg(feature = "gui")]
pub fn harness(
    app: memsight::ui::MemsightApp,
) -> egui_kittest::Harness<'static, memsight::ui::MemsightApp> {
    harness_sized(app, [1400.0, 900.0])
}

/// [`harness`] with a window of `size` points (`[1280.0, 720.0]`: the smallest screen the
/// issues ask for).
#[cfg(feature = "gui")]
pub fn harness_sized(
    app: memsight::ui::MemsightApp,
    size: [f32; 2],
) -> egui_kittest::Harness<'static, memsight::ui::MemsightApp> {
    let mut h = egui_kittest::Harness::builder()
        .with_size(size)
        .with_max_steps(16)
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(
            |ui, app: &mut memsight::ui::MemsightApp| app.ui_root(ui),
            app,
        );
    h.run();
    h.run();
    h
}

/// The app on `path`, loaded, showing its first rank (not the cluster overview a multi-rank
/// profile opens on), in a 1400×900 kittest harness with real frame times (1/60 s: a
/// double-click is two clicks within 0.3 s); `run()` steps until nothing more is asked for.
#[cfg(feature = "gui")]
pub fn open_app(path: PathBuf) -> egui_kittest::Harness<'static, memsight::ui::MemsightApp> {
    let mut app = memsight::ui::MemsightApp::new(Some(path), Vec::new(), None);
    app.wait_for_load();
    assert!(app.view().is_some(), "{:?}", app.error());
    app.apply(memsight::ui::Command::ShowOverview(false));
    let mut h = egui_kittest::Harness::builder()
        .with_size([1400.0, 900.0])
        .with_max_steps(16)
        .with_step_dt(1.0 / 60.0)
        .build_ui_state(
            |ui, app: &mut memsight::ui::MemsightApp| app.ui_root(ui),
            app,
        );
    h.run();
    h
}

/// The app on `path` in `lang`, loaded, in a 1280×720 harness (the smallest screen the
/// issues ask for) with real frame times; two frames run (the CJK font is added in the first).
#[cfg(feature = "gui")]
pub fn app_at_720p(
    path: &Path,
    lang: memsight::ui::i18n::Lang,
) -> egui_kittest::Harness<'static, memsight::ui::MemsightApp> {
    let mut app = memsight::ui::MemsightApp::new(Some(path.to_path_buf()), Vec::new(), None);
    app.set_language(lang);
    app.wait_for_load();
    assert!(app.view().is_some(), "{:?}", app.error());
    harness_sized(app, [1280.0, 720.0])
}

/// Copies the folder `src` to `dst` (created), recursively.
pub fn copy_dir(src: &Path, dst: &Path) {
    std::fs::create_dir_all(dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let p = e.unwrap().path();
        let t = dst.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &t)
        } else {
            std::fs::copy(&p, &t).map(|_| ()).unwrap();
        }
    }
}

/// One raw operator_memory row: (name, size KB text, alloc ns, release ns).
pub type RawOp = (String, String, Option<i128>, Option<i128>);

/// operator_memory rows of a raw file and the rank's time origin.
pub fn raw_ops(dir: &Path) -> (Vec<RawOp>, i128) {
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    let ops = RawCsv::read(&out.join("operator_memory.csv"));
    let (a, r) = (ops.col("Allocation Time(us)"), ops.col("Release Time(us)"));
    let rows = ops
        .rows
        .iter()
        .map(|x| {
            (
                x[0].clone(),
                x[1].clone(),
                (!x[a].is_empty()).then(|| us_to_ns(&x[a])),
                (!x[r].is_empty()).then(|| us_to_ns(&x[r])),
            )
        })
        .collect();
    (rows, raw_origin(&out))
}

/// Types `text` into the text field labelled `label`.
#[cfg(feature = "gui")]
pub fn type_into(
    h: &mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>,
    label: &str,
    text: &str,
) {
    use egui_kittest::kittest::Queryable;
    let role = egui::accesskit::Role::TextInput;
    h.get_by_role_and_label(role, label).click();
    h.run();
    h.get_by_role_and_label(role, label).type_text(text);
    h.run();
}

/// Clicks Copy all and returns the cells of `column` in every copied row (the header left out).
#[cfg(feature = "gui")]
pub fn copy_all_column(
    h: &mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>,
    column: &str,
) -> Vec<String> {
    use egui_kittest::kittest::Queryable;
    let label = h.state().tr().copy_all;
    h.get_by_label(label).click();
    h.run();
    let text = h.state().details().last_copy().unwrap().to_string();
    let rows: Vec<Vec<&str>> = text.lines().map(|l| l.split('\t').collect()).collect();
    let col = rows[0]
        .iter()
        .position(|c| *c == column)
        .unwrap_or_else(|| panic!("no {column} column in {:?}", rows[0]));
    rows[1..].iter().map(|r| r[col].to_string()).collect()
}

/// eframe's storage, in memory.
#[cfg(feature = "gui")]
#[derive(Default)]
pub struct MemoryStorage(pub std::collections::HashMap<String, String>);

#[cfg(feature = "gui")]
impl eframe::Storage for MemoryStorage {
    fn get_string(&self, key: &str) -> Option<String> {
        self.0.get(key).cloned()
    }
    fn set_string(&mut self, key: &str, value: String) {
        self.0.insert(key.to_owned(), value);
    }
    fn remove_string(&mut self, key: &str) {
        self.0.remove(key);
    }
    fn flush(&mut self) {}
}

/// The Operator curve `column` (`Total Allocated(MB)`, `Total Reserved(MB)`) of the raw
/// memory_record at `t` ns from the origin: the last PTA+GE (or else PTA) sample at or before it,
/// bytes. `None` before the first sample.
pub fn raw_operator_curve(dir: &Path, column: &str, origin: i128, t: i128) -> Option<i128> {
    raw_component_curve(dir, &["PTA+GE", "PTA"], column, origin, t)
}

/// The first of `components` present in the raw memory_record, its `column` held at `t` ns from
/// the origin, bytes.
pub fn raw_component_curve(
    dir: &Path,
    components: &[&str],
    column: &str,
    origin: i128,
    t: i128,
) -> Option<i128> {
    let rec = RawCsv::read(&dir.join("ASCEND_PROFILER_OUTPUT/memory_record.csv"));
    let (c, ts, a) = (
        rec.col("Component"),
        rec.col("Timestamp(us)"),
        rec.col(column),
    );
    let comp = components
        .iter()
        .find(|want| rec.rows.iter().any(|r| r[c] == **want))?;
    let mut rows: Vec<(i128, f64)> = rec
        .rows
        .iter()
        .filter(|r| r[c] == *comp && !r[a].is_empty())
        .map(|r| (us_to_ns(&r[ts]) - origin, r[a].parse::<f64>().unwrap()))
        .collect();
    rows.sort_by_key(|r| r.0);
    rows.iter()
        .rev()
        .find(|r| r.0 <= t)
        .map(|r| (r.1 * 1024.0 * 1024.0).round() as i128)
}

/// Chooses graph `id` in the Graph ID picker of the static view.
#[cfg(feature = "gui")]
pub fn pick_graph(h: &mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>, id: &str) {
    use egui_kittest::kittest::Queryable;
    h.get_by_label("Graph ID").click();
    h.run();
    h.query_all_by_label(id)
        .find(|n| n.rect().min.y < 200.0)
        .unwrap_or_else(|| panic!("the graph {id} option"))
        .click();
    h.run();
}

/// Per operator name (the empty name shown as `Unknown`) of a rank's raw operator_memory: KiB of
/// its rows with size > 0, and how many.
pub fn raw_by_name(rank: &Path) -> std::collections::BTreeMap<String, (f64, usize)> {
    let mut m: std::collections::BTreeMap<String, (f64, usize)> = Default::default();
    for (name, kb, ..) in raw_ops(rank).0 {
        let kb: f64 = kb.parse().unwrap();
        if kb > 0.0 {
            let name = if name.is_empty() {
                "Unknown".into()
            } else {
                name
            };
            let e = m.entry(name).or_default();
            e.0 += kb;
            e.1 += 1;
        }
    }
    m
}

/// The clipboard text of the harness's last frame, if something was copied.
#[cfg(feature = "gui")]
pub fn copied(h: &egui_kittest::Harness<'_, memsight::ui::MemsightApp>) -> Option<String> {
    h.output()
        .platform_output
        .commands
        .iter()
        .find_map(|c| match c {
            egui::OutputCommand::CopyText(t) => Some(t.clone()),
            _ => None,
        })
}

/// A cpu_op as read by the test: start, end (ns), thread, name, own frames, sequence number.
pub struct Op {
    pub start: i128,
    pub end: i128,
    pub thread: String,
    pub name: String,
    pub frames: Vec<String>,
    pub seq: i64,
}

/// Every event of a Chrome trace (a top-level array or `traceEvents`), parsed whole; a file
/// whose name ends in `.gz` is gunzipped first.
pub fn trace_events(trace: &Path) -> Vec<serde_json::Value> {
    let v = trace_json(trace);
    v.as_array()
        .cloned()
        .or_else(|| v["traceEvents"].as_array().cloned())
        .unwrap()
}

/// A Chrome trace parsed whole (its header with it); `.gz` is gunzipped first.
pub fn trace_json(trace: &Path) -> serde_json::Value {
    use std::io::Read;
    let mut text = String::new();
    let f = std::fs::File::open(trace).unwrap();
    if trace.extension().is_some_and(|e| e == "gz") {
        flate2::read::GzDecoder::new(f)
            .read_to_string(&mut text)
            .unwrap();
    } else {
        std::io::BufReader::new(f)
            .read_to_string(&mut text)
            .unwrap();
    }
    serde_json::from_str(&text).unwrap()
}

/// Is a trace event a `user_annotation` span that marks a training phase (`Optimizer.step#…`,
/// `Optimizer.zero_grad#…`, `enumerate(DataLoader)…`)? memsight names blocks allocated directly
/// in one by it, as the Ascend exports (which write them as `cpu_op`) do.
pub fn is_phase_annotation(e: &serde_json::Value) -> bool {
    e["cat"] == "user_annotation"
        && e["name"].as_str().is_some_and(|n| {
            n.starts_with("Optimizer.step#")
                || n.starts_with("Optimizer.zero_grad#")
                || n.starts_with("enumerate(DataLoader)")
        })
}

pub fn trace_ops(trace: &Path) -> Vec<Op> {
    let events = trace_events(trace);
    let us = |x: &serde_json::Value| -> i128 {
        match x {
            serde_json::Value::String(s) => us_to_ns(s),
            other => us_to_ns(&other.to_string()),
        }
    };
    events
        .iter()
        .filter(|e| e["cat"] == "cpu_op" && e["ph"] == "X")
        .map(|e| {
            let start = us(&e["ts"]);
            let frames = e["args"]["Call stack"]
                .as_str()
                .map(|s| {
                    s.split(";\r\n")
                        .map(|f| f.trim().to_string())
                        .filter(|f| !f.is_empty())
                        .collect()
                })
                .unwrap_or_default();
            Op {
                start,
                end: start + us(&e["dur"]),
                thread: format!("{}/{}", e["pid"], e["tid"]),
                name: e["name"].as_str().unwrap().to_string(),
                frames,
                seq: e["args"]["Sequence number"].as_i64().unwrap_or(-1),
            }
        })
        .collect()
}

/// The `fwdbwd` flow events of a trace: (id, is start, thread as `pid/tid`, ns).
pub fn trace_flows(trace: &Path) -> Vec<(i64, bool, String, i128)> {
    trace_events(trace)
        .iter()
        .filter(|e| e["cat"] == "fwdbwd" && (e["ph"] == "s" || e["ph"] == "f"))
        .map(|e| {
            let ts = match &e["ts"] {
                serde_json::Value::String(s) => us_to_ns(s),
                other => us_to_ns(&other.to_string()),
            };
            (
                e["id"].as_i64().unwrap(),
                e["ph"] == "s",
                format!("{}/{}", e["pid"], e["tid"]),
                ts,
            )
        })
        .collect()
}

/// The op running at `t`: of all ops containing it, the one entered last (then the shorter).
pub fn running_at(ops: &[Op], t: i128) -> Option<&Op> {
    ops.iter()
        .filter(|o| o.start <= t && t <= o.end)
        .max_by(|a, b| a.start.cmp(&b.start).then(b.end.cmp(&a.end)))
}

/// Every file and folder under `dir` with its size and modification time.
pub fn list_files(dir: &Path) -> Vec<(PathBuf, u64, std::time::SystemTime)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let m = std::fs::symlink_metadata(&p).unwrap();
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().unwrap()));
        }
    }
    out.sort();
    out
}

/// The five real torch_npu allocator snapshots of the samples, sorted (empty without samples).
pub fn sample_snapshots() -> Vec<PathBuf> {
    let Some(root) = samples() else {
        return Vec::new();
    };
    let dir = root.join("xiaobingling93-pixel_Ascend-msinsight/scripts/MemSnapDump/test/test-data");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "pkl"))
        .collect();
    v.sort();
    assert_eq!(v.len(), 5, "{v:?}");
    v
}

/// The real CUDA allocator snapshots of the samples (an H100, torch 2.11, `context="all"`):
/// the training snapshot and the five OOM snapshots, sorted (empty without samples; the
/// sixth OOM case succeeded and wrote none).
pub fn cuda_snapshots() -> Vec<PathBuf> {
    let Some(root) = samples() else {
        return Vec::new();
    };
    let cuda = root.join("cuda_h100");
    let mut v = vec![cuda.join("snap/gpt_all_graph_pinned.pickle")];
    let oom = cuda.join("oom");
    for e in std::fs::read_dir(&oom).unwrap() {
        let p = e.unwrap().path().join("oom_snapshot.pickle");
        if p.is_file() {
            v.push(p);
        }
    }
    v.sort();
    assert_eq!(v.len(), 6, "{v:?}");
    v
}

/// Python's own figures for a snapshot (`tests/reference/snapshot_summary.py FILE [TOP DEVICE
/// EVENT]`), or None (said on stderr) without python3.
pub fn snapshot_reference(file: &Path, extra: &[&str]) -> Option<serde_json::Value> {
    let mut args = vec![file.as_os_str()];
    args.extend(extra.iter().map(std::ffi::OsStr::new));
    python_reference("snapshot_summary.py", &args)
}

/// The JSON a reference script of `tests/reference/` prints for `args`, or None (said on
/// stderr; a failure under MEMSIGHT_REQUIRE_ALL) when python3 is not there or the script fails.
pub fn python_reference(script: &str, args: &[&std::ffi::OsStr]) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/reference")
        .join(script);
    match std::process::Command::new("python3")
        .arg(script)
        .args(args)
        .output()
    {
        Ok(o) if o.status.success() => Some(serde_json::from_slice(&o.stdout).unwrap()),
        other => {
            skip(&format!("python3 reference not available ({other:?})"));
            None
        }
    }
}

/// Runs Export CSV… with the save dialog answering `path` at once; the status line.
#[cfg(feature = "gui")]
pub fn export_to(
    h: &mut egui_kittest::Harness<'static, memsight::ui::MemsightApp>,
    path: &Path,
    label: &str,
) -> String {
    use egui_kittest::kittest::Queryable;
    let p = path.to_path_buf();
    h.state_mut()
        .details_mut()
        .set_save_picker(move || memsight::ui::file_browser::PickOutcome::Picked(p.clone()));
    h.get_by_label(label).click();
    // Until the status names the file (before, 500 frames 10 ms apart: five seconds, which a
    // busy machine can run past).
    let said = |app: &memsight::ui::MemsightApp| {
        app.details()
            .export_status()
            .filter(|s| s.contains(&path.display().to_string()))
            .map(str::to_string)
    };
    step_until(h, "the export", |h| said(h.state()).is_some());
    said(h.state()).unwrap_or_default()
}

/// Steps the app until `done` holds: for work on another thread (a dialog's answer, an export,
/// a sort, a Group By's curves). It waits on the state, never on the machine being fast
/// enough. The bound only turns a hang into a named failure, ten minutes on: far past any slow
/// machine, so no test depends on the speed of the one it runs on.
#[cfg(feature = "gui")]
pub fn step_until(
    h: &mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>,
    what: &str,
    mut done: impl FnMut(&mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>) -> bool,
) {
    let hang = std::time::Instant::now() + std::time::Duration::from_secs(600);
    while !done(h) {
        assert!(std::time::Instant::now() < hang, "still waiting for {what}");
        std::thread::sleep(std::time::Duration::from_millis(2));
        h.step();
    }
}

/// Runs frames until they settle: a job finishing on another thread (a curve build, a
/// background stage of a load) asks for a repaint, so one `run` may not settle on a busy machine.
#[cfg(feature = "gui")]
pub fn settle(h: &mut egui_kittest::Harness<'_, memsight::ui::MemsightApp>) {
    step_until(h, "the frames to settle", |h| h.try_run().is_ok());
}

/// A file dropped on the window, as the window system hands it over (egui-winit's is private).
#[cfg(feature = "gui")]
#[derive(Debug)]
pub struct DroppedPath(pub PathBuf);

#[cfg(feature = "gui")]
impl egui::DroppedFile for DroppedPath {
    fn path(&self) -> &Path {
        &self.0
    }
    fn bytes(&self) -> Result<Vec<u8>, String> {
        std::fs::read(&self.0).map_err(|e| e.to_string())
    }
}

/// Writes at `out` a CUDA allocator snapshot of `trace`'s own allocations on the allocator's
/// clock, `shift_s` seconds later (tests/reference/make_snapshot_of_trace.py: no GPU here to
/// record both at once); false, after saying why, without Python.
pub fn snapshot_of_trace(trace: &Path, out: &Path, shift_s: &str) -> bool {
    let script =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/make_snapshot_of_trace.py");
    let made = std::process::Command::new("python3")
        .arg(script)
        .arg(trace)
        .arg(out)
        .arg(shift_s)
        .status()
        .is_ok_and(|s| s.success());
    if !made {
        skip("python3 not available");
    }
    made
}

/// Every file under `dir` (recursively), sorted, with its length: to check that a command
/// wrote nothing there.
pub fn files_under(dir: &Path) -> Vec<(PathBuf, u64)> {
    let mut v = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            v.extend(files_under(&p));
        } else {
            let n = p.metadata().unwrap().len();
            v.push((p, n));
        }
    }
    v.sort();
    v
}

/// The lines of `stderr` that are not the note saying which rank a command took on its own
/// ("memsight: rank R: the device rank with the highest peak of N ranks …").
#[allow(dead_code)]
pub fn errors(stderr: &str) -> impl Iterator<Item = &str> {
    stderr
        .lines()
        .filter(|l| !(l.starts_with("memsight: rank ") && l.ends_with("(--rank picks another)")))
}

/// The `nn.Module` names a trace's spans name (`nn.Module: Block_0` → `Block_0`) that start
/// with `prefix`, sorted, each once.
#[allow(dead_code)]
pub fn trace_modules(trace: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = trace_events(trace)
        .iter()
        .filter_map(|e| {
            e["name"]
                .as_str()?
                .strip_prefix("nn.Module: ")
                .map(str::to_string)
        })
        .filter(|n| n.starts_with(prefix))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// Whether the re-run of the real H100 OOM program `case` with `expandable_segments:True` passed
/// (its `result.json` under `samples/cuda_h100/oom/{case}_expandable`).
#[allow(dead_code)]
pub fn expandable_rerun_passed(samples: &Path, case: &str) -> bool {
    let text = std::fs::read_to_string(
        samples.join(format!("cuda_h100/oom/{case}_expandable/result.json")),
    )
    .unwrap();
    let rerun: serde_json::Value = serde_json::from_str(&text).unwrap();
    rerun["ok"].as_bool().unwrap()
}

/// A node's text: its accesskit label, else its value (a text field's).
pub fn label_of(node: &egui_kittest::Node<'_>) -> String {
    use egui_kittest::kittest::NodeT;
    let a = node.accesskit_node();
    a.label()
        .or_else(|| a.value())
        .unwrap_or_default()
        .to_string()
}

/// `text` with each occurrence of `name` that stands whole (no ASCII letter or digit right
/// before or after it) blanked out: `checkpoint` is taken out of `--checkpoint Block`, not
/// out of `checkpointing`.
fn without_whole(text: &str, name: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find(name) {
        let (before, after) = (&rest[..i], &rest[i + name.len()..]);
        let word = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
        out.push_str(before);
        if word(before.chars().last()) || word(after.chars().next()) {
            out.push_str(name);
        } else {
            out.push(' ');
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// The allocator's settings and calls a Chinese answer names as written (they are code).
pub const ALLOCATOR_CODE: [&str; 11] = [
    "PYTORCH_CUDA_ALLOC_CONF",
    "CUDA",
    "torch.cuda.empty_cache()",
    "empty_cache()",
    "garbage_collection_threshold",
    "max_split_size_mb",
    "record_stream",
    "graph_pool_handle()",
    "MemPool",
    "graph",
    "stream",
];

/// The technical terms a Chinese answer keeps in English (as the app's Chinese UI does).
pub const TERMS_KEPT: &[&str] = &[
    "rank",
    "MB",
    "KB",
    "ms",
    "ZeRO",
    "FSDP",
    "DDP",
    "offload",
    "reserved",
    "allocated",
    "trace",
    "deviceProperties",
    "capacity",
    "gib",
    "Operator",
    "Reserved",
    "Allocated",
    "host",
    "step",
    "bucket",
    "gather",
    "Adam",
    "SGD",
    "autograd",
    "micro",
    "batch",
    "activation",
    "checkpointing",
    "in",
    "place",
    "Size",
    "N",
    "memsight",
    "whatif",
    "checkpoint",
    "zero",
    "ranks",
    "expandable",
    "segments",
    "True",
];

/// Asserts that `zh` says what `en` says, in Chinese: the same figures, its first line in
/// Chinese, and no English word on any line but `names` (taken out whole, longest first),
/// [`TERMS_KEPT`] and `terms`.
pub fn assert_said_in_chinese(en: &str, zh: &str, names: &[String], terms: &[&str]) {
    let numbers = |s: &str| -> Vec<String> {
        let mut v: Vec<String> = s
            .split(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
            .filter(|w| w.chars().any(|c| c.is_ascii_digit()))
            .map(str::to_string)
            .collect();
        v.sort();
        v
    };
    assert_eq!(numbers(en), numbers(zh), "the same figures\n{en}\n{zh}");
    assert_ne!(en, zh);
    let cjk = |l: &str| l.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c));
    assert!(
        zh.lines().next().is_some_and(cjk),
        "the first line in Chinese:\n{zh}"
    );
    let mut by_length = names.to_vec();
    by_length.sort_by_key(|n| std::cmp::Reverse(n.len()));
    for line in zh.lines().filter(|l| !l.trim().is_empty()) {
        let mut rest = line.to_string();
        for n in by_length.iter().filter(|n| !n.is_empty()) {
            rest = without_whole(&rest, n);
        }
        for word in rest.split(|c: char| !c.is_ascii_alphabetic()) {
            assert!(
                word.len() < 2 || TERMS_KEPT.contains(&word) || terms.contains(&word),
                "English {word:?} in {line:?}"
            );
        }
    }
}
