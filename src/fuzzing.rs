//! Entry points shared by the cargo-fuzz targets (`fuzz/`) and the stable regression test
//! (`tests/ingest/fuzz_regressions.rs`), so every input that ever crashed is replayed in CI without
//! nightly. Each takes arbitrary bytes and must return without panicking, hanging, or writing
//! anything into the folder it reads (the folder entry points check that and panic if not).

use std::path::{Path, PathBuf};

use crate::ingest::{self, LoadControl};

/// The fuzz targets, by the name of their folder under `fuzz/regressions/`.
pub const TARGETS: [&str; 16] = [
    "value",
    "memory_record",
    "operator_memory",
    "npu_module_mem",
    "static_op_mem",
    "folder",
    "db",
    "pickle",
    "trace_view",
    "pytorch_trace",
    "msmemscope",
    "summary",
    "mem_usage",
    "snapshot_fields",
    "module_spans",
    "mcp_request",
];

/// Runs the entry point of `target` on `data`; false for an unknown target name.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "value" => value(data),
        "folder" => folder(data),
        "db" => db(data),
        "pickle" => pickle(data),
        "trace_view" => trace_view(data),
        "pytorch_trace" => {
            memory_scan(data);
            imported("trace.pt.trace.json", data);
        }
        "msmemscope" => {
            let _ = ingest::msmemscope::parse_attr(&String::from_utf8_lossy(data));
            imported("memscope_dump_1.csv", data);
        }
        "summary" => summary(data),
        "mem_usage" => mem_usage(data),
        "snapshot_fields" => snapshot_fields(data),
        "module_spans" => module_spans(data),
        "mcp_request" => mcp_request(data),
        "memory_record" | "operator_memory" | "npu_module_mem" | "static_op_mem" => {
            table(target, data)
        }
        _ => return false,
    }
    true
}

/// The PyTorch importer's byte search and hand reader on the bytes: no panic, no hang; what the
/// hand reader accepts, serde reads the same.
pub fn memory_scan(data: &[u8]) {
    use ingest::pytorch::memory_scan::{quick_fields, scan_stream};
    use ingest::trace_view::{memory_event_from, parse_memory_event};
    let control = LoadControl::new();
    let _ = scan_stream(data, 0, 0..u64::MAX, &|_| true, &control);
    match quick_fields(data) {
        None => {}
        Some(None) => assert_eq!(parse_memory_event(data), Ok(None)),
        Some(Some(raw)) => assert_eq!(memory_event_from(&raw).map(Some), parse_memory_event(data)),
    }
    // What a template of PyTorch's layout reads, the one-pass reader reads the same; and the
    // bytes themselves, when they are a memory event, make a template that reads them back.
    let templates = [PYTORCH_EVENT.as_bytes(), data]
        .into_iter()
        .filter_map(ingest::pytorch::memory_event::Template::of);
    for t in templates {
        if let Some((event, len)) = t.read(data) {
            let (raw, quick_len) = ingest::pytorch::memory_event::quick_object(data)
                .expect("a template's read is a one-pass read");
            let raw = raw.expect("a template's read is a memory event");
            assert_eq!((memory_event_from(&raw), quick_len), (event, len));
        }
    }
}

/// A memory event as torch 2.x writes it, for the fuzzer's template.
const PYTORCH_EVENT: &str = "{\n    \"ph\": \"i\", \"cat\": \"cpu_instant_event\", \"s\": \"t\", \"name\": \"[memory]\",\n    \"pid\": 1555, \"tid\": 1555,\n    \"ts\": 4747689126117.062\n    ,\n    \"args\": {\n      \"Total Reserved\": 0, \"Total Allocated\": 196608, \"Bytes\": 196608, \"Device Id\": -1, \"Device Type\": 0, \"Addr\": 94820774467456\n    }\n  }";

/// Every value parser on the bytes as one cell, with the unit factors the readers use.
pub fn value(data: &[u8]) {
    use ingest::value::{device_id, parse_int, parse_scaled, trim_cell};
    for factor in [1, 1000, 1024, 1 << 20, 1_024_000] {
        if let Ok(Some(s)) = parse_scaled(data, factor) {
            assert_ne!(
                s.value,
                crate::model::NULL,
                "a parsed value is never the NULL sentinel"
            );
        }
    }
    let _ = parse_int(data);
    let _ = device_id(data);
    assert!(trim_cell(data).len() <= data.len());
}

/// The bytes as the one CSV file of its kind (`memory_record`, …) in a rank folder, loaded.
pub fn table(kind: &str, data: &[u8]) {
    let dir = scratch();
    let out = dir.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    write(&out.join(format!("{kind}.csv")), data);
    if kind != "memory_record" && kind != "operator_memory" {
        // A rank needs rows to exist: give it a minimal memory_record.
        write(
            &out.join("memory_record.csv"),
            b"Component,Timestamp(us),Total Reserved(MB)\nAPP,1700000000000000.0,1\n",
        );
    }
    load_folder_unchanged(dir.path());
}

/// The bytes split at `\n=====\n` into memory_record, operator_memory, npu_module_mem,
/// static_op_mem and profiler_info_0.json of one rank, discovered and loaded.
pub fn folder(data: &[u8]) {
    let dir = scratch();
    let rank = dir.path().join("host_1_2_ascend_pt");
    let out = rank.join("ASCEND_PROFILER_OUTPUT");
    let names = [
        "memory_record.csv",
        "operator_memory.csv",
        "npu_module_mem.csv",
        "static_op_mem.csv",
    ];
    let mut parts = split_parts(data);
    for (name, part) in names.iter().zip(parts.by_ref()) {
        write(&out.join(name), part);
    }
    if let Some(info) = parts.next() {
        write(&rank.join("profiler_info_0.json"), info);
    }
    load_folder_unchanged(dir.path());
}

/// The bytes as `ascend_pytorch_profiler_0.db` of one rank, discovered and loaded.
pub fn db(data: &[u8]) {
    let dir = scratch();
    let out = dir.path().join("r_ascend_pt/ASCEND_PROFILER_OUTPUT");
    write(&out.join("ascend_pytorch_profiler_0.db"), data);
    load_folder_unchanged(dir.path());
}

/// The bytes as an allocator snapshot pickle: read (never executing anything), summarised at
/// the end and at a few events of each device.
pub fn pickle(data: &[u8]) {
    use crate::snapshot::{AllocatorSnapshot, summarize_snapshot};
    let Ok(snap) = AllocatorSnapshot::from_bytes(data) else {
        return;
    };
    if let Ok(s) = summarize_snapshot(&snap, None, 20) {
        assert!(s.top_stacks.len() <= 20);
    }
    for device in snap.devices() {
        let len = usize::try_from(device)
            .ok()
            .and_then(|d| snap.traces.get(d))
            .map_or(0, Vec::len);
        for k in [0, len / 2, len.saturating_sub(1), len] {
            let _ = summarize_snapshot(&snap, Some((device, k)), 5);
        }
    }
}

/// Runs `memsight ARGS…` in-process (the commands' own code, as the MCP server runs them);
/// its stdout. An argument list clap refuses is no run.
fn command(args: &[&std::ffi::OsStr]) -> Vec<u8> {
    use clap::Parser;
    let all = std::iter::once(std::ffi::OsStr::new("memsight")).chain(args.iter().copied());
    let Ok(parsed) = crate::cli::command_line::Args::try_parse_from(all) else {
        return Vec::new();
    };
    let Some(c) = parsed.command else {
        return Vec::new();
    };
    let (mut out, mut err) = (Vec::new(), Vec::new());
    crate::cli::command_line::run(c, &mut out, &mut err);
    out
}

/// Panics when `out` is larger than what `input` bytes may make ([`crate::model::Budget`]).
fn in_proportion(what: &str, out: &[u8], input: usize) {
    let limit = crate::model::Budget::for_input(input as u64).limit();
    assert!(
        out.len() as u64 <= limit,
        "{what}: {} bytes of output for {input} of input",
        out.len()
    );
}

/// The bytes as an allocator snapshot, through every answer of the newer snapshot fields
/// (`external_annotations` as phases, `compile_context`, pools, pinned host memory, FX frames,
/// the OOM verdicts): `snapshot` in text and JSON at its end and at an event, `explain`, and
/// `compare` with itself. No panic, no hang, nothing written beside it, and every output in
/// proportion to the file.
pub fn snapshot_fields(data: &[u8]) {
    let dir = scratch();
    let path = dir.path().join("s.pickle");
    write(&path, data);
    let before = listing(dir.path());
    let p = path.as_os_str();
    let runs: [&[&std::ffi::OsStr]; 6] = [
        &["snapshot".as_ref(), p],
        &["snapshot".as_ref(), p, "--json".as_ref()],
        &["snapshot".as_ref(), p, "--at-event".as_ref(), "1".as_ref()],
        &["explain".as_ref(), p],
        &["explain".as_ref(), p, "--json".as_ref()],
        &["compare".as_ref(), p, p, "--json".as_ref()],
    ];
    for args in runs {
        let out = command(args);
        in_proportion("snapshot", &out, data.len());
    }
    assert_eq!(
        before,
        listing(dir.path()),
        "the snapshot's folder was written to"
    );
}

/// The bytes as `nn.Module` spans of a PyTorch trace (each 8 bytes: thread, start, length, a
/// name from a list with hostile ones — a trailing space, a `/`, an empty name, a long one —,
/// whether an op runs inside, its allocation), written as a trace and read by `modules` (text
/// and JSON), `inspect` and `whatif --checkpoint`: no panic, no hang, output in proportion.
pub fn module_spans(data: &[u8]) {
    const NAMES: [&str; 8] = [
        "Block_0",
        "Block_0 ",
        "a/b",
        "a",
        "",
        "Linear_1",
        "%2F",
        "Attention_0",
    ];
    let long = "L".repeat(3000);
    let spans: Vec<crate::generate::hostile::Span<'_>> = data
        .chunks_exact(8)
        .map(|c| crate::generate::hostile::Span {
            thread: u64::from(c[0] % 3),
            start: i64::from(u16::from_le_bytes([c[1], c[2]])),
            dur: i64::from(u16::from_le_bytes([c[3], c[4]])),
            name: match c[5] {
                255 => long.as_str(),
                n => NAMES[usize::from(n) % NAMES.len()],
            },
            op: c[6] & 1 == 1,
            bytes: i64::from(c[7]) * 512,
        })
        .collect();
    let text = crate::generate::hostile::trace_of_spans(&spans);
    let dir = scratch();
    let path = dir.path().join("t.pt.trace.json");
    write(&path, text.as_bytes());
    let before = listing(dir.path());
    let p = path.as_os_str();
    let runs: [&[&std::ffi::OsStr]; 5] = [
        &["modules".as_ref(), p],
        &["modules".as_ref(), p, "--json".as_ref()],
        &["inspect".as_ref(), p],
        &[
            "whatif".as_ref(),
            p,
            "--checkpoint".as_ref(),
            "Block*".as_ref(),
        ],
        &["explain".as_ref(), p, "--json".as_ref()],
    ];
    for args in runs {
        let out = command(args);
        in_proportion("module spans", &out, text.len());
    }
    assert_eq!(
        before,
        listing(dir.path()),
        "the trace's folder was written to"
    );
}

/// The bytes as one MCP tool call (`{"tool": name, "arguments": {...}}`; `$ROOT` in a string
/// is the granted root), answered as the server answers it ([`crate::mcp::answer`]) with one
/// root that holds a small trace and links out to a folder with another: no panic, nothing
/// written, and no answer holds what only the outside trace names. Bytes that are no such
/// JSON are the arguments of `explain`.
///
/// It confines the process's reads while it runs, so its regression inputs are replayed by a
/// test binary of their own (`tests/process_wide.rs`), not beside other tests.
pub fn mcp_request(data: &[u8]) {
    #[cfg(feature = "mcp")]
    {
        use serde_json::Value;
        let dir = scratch();
        let (root, outside) = (dir.path().join("root"), dir.path().join("outside"));
        for d in [&root, &outside] {
            std::fs::create_dir_all(d).expect("the fuzz folders");
        }
        let spans = |name| {
            vec![crate::generate::hostile::Span {
                thread: 1,
                start: 0,
                dur: 100,
                name,
                op: true,
                bytes: 4096,
            }]
        };
        let inside = crate::generate::hostile::trace_of_spans(&spans("Inside_0"));
        write(&root.join("in.pt.trace.json"), inside.as_bytes());
        let secret = crate::generate::hostile::trace_of_spans(&spans("OutsideSecret_0"));
        write(&outside.join("secret.pt.trace.json"), secret.as_bytes());
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink(&outside, root.join("linked"));
            let _ = std::os::unix::fs::symlink(
                outside.join("secret.pt.trace.json"),
                root.join("link.pt.trace.json"),
            );
        }
        let before = listing(dir.path());
        let root_text = root.display().to_string();
        let call: Value = serde_json::from_slice(data).unwrap_or_else(
            |_| serde_json::json!({"tool": "explain", "arguments": {"path": String::from_utf8_lossy(data)}}),
        );
        let mut args = call["arguments"].as_object().cloned().unwrap_or_default();
        for v in args.values_mut() {
            if let Value::String(s) = v {
                *s = s.replace("$ROOT", &root_text);
            }
        }
        let name = call["tool"].as_str().unwrap_or("explain");
        if let Ok(answer) = crate::mcp::answer(name, &args, std::slice::from_ref(&root)) {
            assert!(
                !answer.to_string().contains("OutsideSecret"),
                "{name} read outside its root: {answer}"
            );
        }
        assert_eq!(before, listing(dir.path()), "the root was written to");
    }
    #[cfg(not(feature = "mcp"))]
    let _ = data;
}

/// The bytes as a cluster summary file: read as `--merge` reads it (then written merged into a
/// new file) and as the app reads it (the overview, then each rank's curves): no panic, no
/// hang, and a damaged BLOB or table is left out rather than loaded.
pub fn summary(data: &[u8]) {
    use crate::export::cluster_db::{SummaryFile, read_summary, write_summary};
    let dir = scratch();
    let path = dir.path().join("s.db");
    write(&path, data);
    if let Ok(s) = read_summary(&path) {
        let _ = write_summary(&dir.path().join("merged.db"), s);
    }
    if let Ok(file) = SummaryFile::open(&path)
        && let Ok(overview) = file.overview()
    {
        for r in overview.ranks.iter().take(64) {
            let _ = file.curves(r.id);
        }
    }
}

/// The bytes as a memUsageInfo file beside an OOM snapshot: read by header name, what is not
/// read counted.
pub fn mem_usage(data: &[u8]) {
    use crate::snapshot::oom::{read_usage, usage_beside};
    let dir = scratch();
    let path = dir.path().join("device_0_memUsageInfo_20261125101600.csv");
    write(&path, data);
    let _ = read_usage(0, &path);
    let _ = usage_beside(&dir.path().join("oom_snapshot_1_20261125101600.pickle"));
}

/// The bytes as one file named `name` (a PyTorch trace, an msMemScope dump) in a folder,
/// discovered and loaded: a source behind the importer seam, on the same rules as the exports;
/// gzipped too when the name says so and the bytes are a PyTorch trace.
pub fn imported(name: &str, data: &[u8]) {
    let dir = scratch();
    write(&dir.path().join(name), data);
    load_folder_unchanged(dir.path());
    if name.ends_with(".json") {
        use std::io::Write;
        let gz = scratch();
        let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        enc.write_all(data).expect("gzip in memory");
        let bytes = enc.finish().expect("gzip in memory");
        // A cut gzip stream too: the half that was written before a crash.
        write(&gz.path().join(format!("{name}.gz")), &bytes);
        write(
            &gz.path().join(format!("cut_{name}.gz")),
            &bytes[..bytes.len() / 2],
        );
        load_folder_unchanged(gz.path());
    }
}

/// Parts of `data` separated by the line `=====`.
fn split_parts(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    const SEP: &[u8] = b"\n=====\n";
    let mut rest = Some(data);
    std::iter::from_fn(move || {
        let r = rest?;
        match r.windows(SEP.len()).position(|w| w == SEP) {
            Some(i) => {
                rest = Some(&r[i + SEP.len()..]);
                Some(&r[..i])
            }
            None => {
                rest = None;
                Some(r)
            }
        }
    })
}

fn scratch() -> tempfile::TempDir {
    tempfile::tempdir().expect("a temporary folder for the fuzz input")
}

fn write(path: &Path, data: &[u8]) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("create the fuzz folder");
    }
    std::fs::write(path, data).expect("write the fuzz input");
}

/// Discovers and loads every rank under `root`, summarises what loaded, and panics if anything
/// under `root` was created, removed or changed.
fn load_folder_unchanged(root: &Path) {
    let before = listing(root);
    if let Ok(profile) = ingest::discover(root) {
        for rank in &profile.ranks {
            if let Ok(data) = ingest::load_rank(rank, &LoadControl::new()) {
                assert!(data.records.time_ns.windows(2).all(|w| w[0] <= w[1]));
                let _ = crate::export::summarize(&data);
            }
        }
    }
    assert_eq!(before, listing(root), "the loaded folder was written to");
}

/// Paths, sizes and modification times of everything under `dir`.
fn listing(dir: &Path) -> Vec<(PathBuf, u64, Option<std::time::SystemTime>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if m.is_dir() {
                stack.push(p.clone());
            }
            out.push((p, m.len(), m.modified().ok()));
        }
    }
    out.sort();
    out
}

/// The trace_view.json scanner on the bytes, read in one block and in blocks of 1, 7 and 4096
/// bytes: the same steps and counters whatever the block boundaries, and never a panic.
pub fn trace_view(data: &[u8]) {
    use crate::ingest::trace_view::read_trace_from;
    let read = |block: usize| {
        read_trace_from(data, block, &LoadControl::new(), "fuzz").map(|t| {
            let h = &t.host;
            let ops = (
                h.start_ns.clone(),
                h.end_ns.clone(),
                h.thread.clone(),
                h.stack.clone(),
                h.seq.clone(),
                h.stacks.len(),
                h.frames.len(),
            );
            // Attribution over whatever ops were read: every op's start and end, and a
            // missing time, each find an op or none; nothing panics.
            let mut times: Vec<i64> = h.start_ns.iter().chain(&h.end_ns).copied().collect();
            times.push(crate::model::NULL);
            let c = ingest::stacks::attribute(
                t.host.clone(),
                &times,
                crate::model::StackSource::TraceView,
            );
            assert_eq!(c.row_op.len(), times.len());
            assert!(c.unattributed >= 1, "the missing time has no op");
            (
                t.steps,
                t.device.time_ns,
                t.device.bytes,
                t.events,
                t.unreadable,
                ops,
            )
        })
    };
    let whole = read(data.len().max(1));
    for block in [1, 7, 4096] {
        let got = read(block);
        match (&whole, &got) {
            (Ok(a), Ok(b)) => assert_eq!(a, b, "block {block}"),
            (Err(_), Err(_)) => {}
            _ => panic!("block {block}: {:?} vs {:?}", whole.is_ok(), got.is_ok()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_split_at_the_separator_line() {
        let parts: Vec<&[u8]> = split_parts(b"a\n=====\nb\n=====\n").collect();
        assert_eq!(parts, vec![&b"a"[..], &b"b"[..], &b""[..]]);
        assert!(run("value", b"12.5"));
        assert!(!run("nope", b""));
    }
}
