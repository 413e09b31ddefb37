//! A plain trace read in parts on every core (issue 47) gives exactly what the serial read
//! gives: every op, name, frame, stack, link, module, step, counter and memory event, in the
//! same order and with the same ids, on real traces cut at many part sizes and on generated
//! ones cut at random; and a cut that is not an event's start (a `},{` inside a string) is
//! caught, so the file is read whole instead.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};

use proptest::prelude::*;

use memsight::ingest::LoadControl;
use memsight::ingest::chrome_trace::EventSink;
use memsight::ingest::trace_parts;
use memsight::ingest::trace_view::{
    ReadOptions, TraceExtract, read_trace_file_in_parts, read_trace_with,
};

/// The real traces: PyTorch's (CPU fixtures and the H100 recording beside a snapshot) and
/// Ascend `trace_view.json`s.
fn real_traces() -> Vec<PathBuf> {
    let f = common::fixtures();
    let mut out = vec![
        f.join("pytorch/cnn_adam.pt.trace.json.gz"),
        f.join("snapshots/cuda_join/run.pt.trace.json.gz"),
    ];
    for e in std::fs::read_dir(f.join("pytorch/ddp")).unwrap() {
        out.push(e.unwrap().path());
    }
    let demo = common::first_subdir(&f.join("demo")).join("ASCEND_PROFILER_OUTPUT/trace_view.json");
    if demo.exists() {
        out.push(demo);
    }
    out
}

/// The file's bytes, gunzipped.
fn plain_bytes(path: &Path) -> Vec<u8> {
    let raw = std::fs::read(path).unwrap();
    if raw.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        flate2::read::MultiGzDecoder::new(raw.as_slice())
            .read_to_end(&mut out)
            .unwrap();
        out
    } else {
        raw
    }
}

/// Everything an extract holds, as text (ids included: they must be the serial read's).
fn all_of(x: &TraceExtract) -> String {
    format!("{x:?}")
}

fn serial(bytes: &[u8], options: ReadOptions) -> TraceExtract {
    read_trace_with(bytes, 1 << 16, &LoadControl::new(), "t", options).unwrap()
}

fn in_parts(path: &Path, part: u64, options: ReadOptions) -> TraceExtract {
    read_trace_file_in_parts(path, part, &LoadControl::new(), "t", options).unwrap()
}

/// How many parts the file is read in (0: whole).
fn parts_of(path: &Path, part: u64) -> usize {
    struct Count;
    impl EventSink for Count {
        fn event(&mut self, _: &[u8]) {}
    }
    trace_parts::in_parts(path, part, &|| Count, &LoadControl::new())
        .unwrap()
        .map_or(0, |p| p.sinks.len())
}

#[test]
fn real_traces_read_in_parts_equal_the_serial_read() {
    let tmp = tempfile::tempdir().unwrap();
    let traces = real_traces();
    assert!(traces.len() >= 4, "{traces:?}");
    for trace in traces {
        let bytes = plain_bytes(&trace);
        let path = tmp.path().join("trace.json");
        std::fs::write(&path, &bytes).unwrap();
        let len = bytes.len() as u64;
        for options in [ReadOptions::default(), ReadOptions { skip_memory: true }] {
            let want = all_of(&serial(&bytes, options));
            for part in [len / 7 + 1, len / 3 + 5, 4096, 65_537] {
                let got = all_of(&in_parts(&path, part, options));
                assert!(got == want, "{} in parts of {part}", trace.display());
            }
        }
        // It was read in parts, not whole.
        assert!(parts_of(&path, len / 7 + 1) > 2, "{}", trace.display());
        assert!(
            !serial(&bytes, ReadOptions::default()).cut_short,
            "{}",
            trace.display()
        );
        // Cut two thirds of the way in (a copy broken off): the same in parts, and said.
        let cut = &bytes[..bytes.len() * 2 / 3];
        std::fs::write(&path, cut).unwrap();
        let want = serial(cut, ReadOptions::default());
        assert!(want.cut_short, "{} cut", trace.display());
        for part in [len / 7 + 1, 4096] {
            let got = in_parts(&path, part, ReadOptions::default());
            assert!(
                all_of(&got) == all_of(&want),
                "{} cut, in parts of {part}",
                trace.display()
            );
        }
    }
}

/// A small PyTorch-like trace: ops with stacks from a small set (so stacks repeat across
/// parts), Python spans, flows, async steps that open in one part and close in another,
/// counters, memory events, and strings that hold `},{` (a guessed cut there must be caught).
fn trace_of(seeds: &[(u8, u8)]) -> String {
    let mut events = Vec::new();
    for (k, &(kind, pick)) in seeds.iter().enumerate() {
        let ts = 1000 + k as u64 * 10;
        let stack = ["a.py(1): f", "b.py(2): g\na.py(1): f", "c.py(3): h"][pick as usize % 3];
        let name = ["aten::mm", "aten::add", "x\"},{\"ph\":\"X\"", "aten::relu"][pick as usize % 4];
        events.push(match kind % 8 {
            0 | 1 => format!(
                r#"{{"ph": "X", "cat": "cpu_op", "name": {}, "pid": 1, "tid": {}, "ts": {ts}, "dur": 5, "args": {{"Call stack": {}, "Sequence number": {pick}}}}}"#,
                serde_json::to_string(name).unwrap(),
                pick % 2,
                serde_json::to_string(stack).unwrap()
            ),
            2 => format!(
                r#"{{"ph": "X", "cat": "python_function", "name": "nn.Module: Linear_{}", "pid": 1, "tid": 0, "ts": {ts}, "dur": 30}}"#,
                pick % 3
            ),
            3 => format!(
                r#"{{"ph": "{}", "cat": "fwdbwd", "name": "fwdbwd", "id": {}, "pid": 1, "tid": 0, "ts": {ts}}}"#,
                if pick % 2 == 0 { "s" } else { "f" },
                pick % 4
            ),
            4 => format!(
                r#"{{"ph": "{}", "name": "ProfilerStep#{}", "id": 1, "ts": {ts}, "cat": "mstx"}}"#,
                if pick % 2 == 0 { "b" } else { "e" },
                pick % 3
            ),
            5 => format!(
                r#"{{"ph": "C", "name": "Device/HBM", "pid": 9, "tid": 0, "ts": {ts}, "args": {{"KB": {pick}}}}}"#
            ),
            6 => format!(
                r#"{{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 0, "ts": {ts}, "args": {{"Total Reserved": 4096, "Total Allocated": {}, "Bytes": {}, "Addr": {}, "Device Id": 0, "Device Type": 1}}}}"#,
                512 * u64::from(pick),
                if pick % 2 == 0 { 512 } else { -512 },
                1000 + u64::from(pick % 5)
            ),
            _ => format!(
                r#"{{"ph": "X", "cat": "user_annotation", "name": "Optimizer.step#SGD.step", "pid": 1, "tid": 0, "ts": {ts}, "dur": 3, "args": {{"note": "}},{{"}}}}"#
            ),
        });
    }
    format!(
        "{{\n  \"schemaVersion\": 1,\n  \"traceEvents\": [\n  {}\n  ]\n}}",
        events.join(",\n  ")
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn generated_traces_read_in_parts_equal_the_serial_read(
        seeds in prop::collection::vec((0u8..8, 0u8..12), 1..120),
        part in 16u64..4096,
    ) {
        let text = trace_of(&seeds);
        let tmp = tempfile::tempdir().unwrap();
        let path = tmp.path().join("t.json");
        std::fs::write(&path, &text).unwrap();
        for options in [ReadOptions::default(), ReadOptions { skip_memory: true }] {
            let want = all_of(&serial(text.as_bytes(), options));
            let got = all_of(&in_parts(&path, part, options));
            prop_assert_eq!(got, want);
        }
    }
}

/// A guessed cut inside a string is not an event's start: the part before it does not end
/// between events, so the file is not read in parts (and the read equals the serial one).
#[test]
fn a_cut_inside_a_string_is_caught() {
    // The only `},{` past the first part is inside a name.
    let pad = "p".repeat(200);
    let text = format!(
        r#"[{{"ph": "X", "cat": "cpu_op", "name": "{pad}", "ts": 1, "dur": 1}},
{{"ph": "X", "cat": "cpu_op", "name": "a}},{{b{pad}{pad}", "ts": 2, "dur": 1}}]"#
    );
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("t.json");
    std::fs::write(&path, &text).unwrap();
    let cut_in_string = text.find("a},{b").unwrap() as u64 + 3;
    // Parts from just past the real event start, so the first guess is the one in the string.
    let part = text.find(",\n{").unwrap() as u64 + 4;
    assert!(part < cut_in_string);
    assert_eq!(parts_of(&path, part), 0, "read whole");
    let want = all_of(&serial(text.as_bytes(), ReadOptions::default()));
    assert_eq!(all_of(&in_parts(&path, part, ReadOptions::default())), want);
}
