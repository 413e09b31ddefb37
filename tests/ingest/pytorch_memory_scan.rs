//! The PyTorch importer's first look (issue 27, speed): the byte search for `[memory]` events
//! finds exactly the events of the trace — checked against the JSON parsed whole here, on the
//! real traces of `fixtures/pytorch/`, cut into parts of every size and read a few bytes at a
//! time — and gives up (unsure, so the loader reads them the slow way) rather than guess on
//! layouts it cannot be sure of. The first look the loader hands out is the final curves.

use crate::common;

use std::io::Read;
use std::path::{Path, PathBuf};

use memsight::ingest::LoadControl;
use memsight::ingest::pytorch::memory_scan::{quick_fields, scan_file_in_parts, scan_stream};
use memsight::ingest::trace_view::{MemoryEvent, parse_memory_event, read_trace_from};

fn traces() -> Vec<PathBuf> {
    let dir = common::fixtures().join("pytorch");
    let mut out = vec![dir.join("cnn_adam.pt.trace.json.gz")];
    for e in std::fs::read_dir(dir.join("ddp")).unwrap() {
        out.push(e.unwrap().path());
    }
    out.sort();
    assert_eq!(out.len(), 3);
    out
}

fn gz(p: &Path) -> bool {
    p.extension().is_some_and(|e| e == "gz")
}

/// (ns, addr, bytes, total allocated, device type, device id) of every `[memory]` event, in
/// file order, from the JSON parsed whole.
fn raw_memory(path: &Path) -> Vec<(i64, u64, i64, i64, i64, i64)> {
    common::trace_events(path)
        .iter()
        .filter(|e| e["name"] == "[memory]")
        .map(|e| {
            let a = &e["args"];
            (
                (e["ts"].as_f64().unwrap() * 1000.0).round() as i64,
                a["Addr"].as_u64().unwrap(),
                a["Bytes"].as_i64().unwrap(),
                a["Total Allocated"].as_i64().unwrap(),
                a["Device Type"].as_i64().unwrap(),
                a["Device Id"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn fields(m: &[MemoryEvent]) -> Vec<(i64, u64, i64, i64, i64, i64)> {
    m.iter()
        .map(|e| {
            (
                e.ns,
                e.addr,
                e.bytes,
                e.total_allocated,
                e.device_type,
                e.device_id,
            )
        })
        .collect()
}

/// A reader that hands out at most `n` bytes a call (block ends everywhere).
struct Trickle<R>(R, usize);

impl<R: Read> Read for Trickle<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.1);
        self.0.read(&mut buf[..n])
    }
}

fn scan_bytes(bytes: &[u8], trickle: usize) -> memsight::ingest::pytorch::memory_scan::MemoryScan {
    scan_stream(
        Trickle(bytes, trickle),
        0,
        0..u64::MAX,
        &|_| true,
        &LoadControl::new(),
    )
    .unwrap()
}

#[test]
fn the_scan_finds_every_memory_event_of_the_real_traces_in_any_parts() {
    for path in traces() {
        let want = raw_memory(&path);
        assert!(
            want.len() > 100,
            "{}: {} events",
            path.display(),
            want.len()
        );
        // Parts of 1 KiB to one: the file cut everywhere, events read by whichever part
        // holds their name. (A gzipped file is one stream.)
        // The progress told is the file's size, each byte once, however it is cut.
        let len = std::fs::metadata(&path).unwrap().len();
        for part in [1 << 10, 5 << 10, 64 << 10, u64::MAX] {
            let control = LoadControl::new();
            let got = scan_file_in_parts(&path, gz(&path), part, &|_| true, &control).unwrap();
            assert_eq!(got.unsure, 0, "{} part {part}", path.display());
            assert_eq!(fields(&got.events), want, "{} part {part}", path.display());
            let told = (control.bytes_done(), control.bytes_total());
            assert_eq!(told, (len, len), "{} part {part}", path.display());
        }
        // And the same as the whole read's (thread numbers included).
        let text = {
            let mut t = Vec::new();
            let f = std::fs::File::open(&path).unwrap();
            if gz(&path) {
                flate2::read::GzDecoder::new(f).read_to_end(&mut t).unwrap();
            } else {
                std::io::BufReader::new(f).read_to_end(&mut t).unwrap();
            }
            t
        };
        let whole = read_trace_from(&text[..], 1 << 20, &LoadControl::new(), "t").unwrap();
        for trickle in [3, 61, 4096] {
            let got = scan_bytes(&text, trickle);
            assert_eq!(
                got.events,
                whole.memory,
                "{} trickle {trickle}",
                path.display()
            );
        }
    }
}

#[test]
fn keep_chooses_the_device() {
    let path = traces().remove(0);
    let want: Vec<_> = raw_memory(&path).into_iter().filter(|e| e.4 == 0).collect();
    let got = scan_file_in_parts(
        &path,
        true,
        u64::MAX,
        &|e| e.device_type == 0,
        &LoadControl::new(),
    )
    .unwrap();
    assert_eq!(fields(&got.events), want);
}

const MEM: &str = r#"{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 7, "tid": 8, "ts": 1000.5, "args": {"Total Reserved": 4096, "Total Allocated": 512, "Bytes": 512, "Addr": 139000, "Device Id": 0, "Device Type": 20}}"#;

fn trace_of(events: &[&str]) -> String {
    format!("{{\"traceEvents\": [\n{}\n]}}", events.join(",\n"))
}

#[test]
fn layouts_the_scan_reads_or_leaves_to_the_whole_read() {
    let cases: Vec<(&str, String, bool)> = vec![
        ("plain", trace_of(&[MEM, MEM]), true),
        (
            "args before name",
            trace_of(&[
                r#"{"args": {"Bytes": -8, "Addr": 5, "Total Allocated": 0}, "ts": 3, "name": "[memory]"}"#,
                MEM,
            ]),
            true,
        ),
        (
            "the word in another event's args",
            trace_of(&[
                r#"{"ph": "X", "cat": "cpu_op", "name": "aten::x", "ts": 1, "dur": 2, "args": {"label": "[memory]"}}"#,
                MEM,
            ]),
            true,
        ),
        (
            "the word twice in one event",
            trace_of(&[
                r#"{"name": "[memory]", "ts": 2, "args": {"Bytes": 8, "Addr": 9, "note": "[memory]"}}"#,
            ]),
            true,
        ),
        (
            "escapes (serde reads it)",
            trace_of(&[
                r#"{"name": "[memory]", "cat": "a\"b{", "ts": 2, "args": {"Bytes": 8, "Addr": "0x10"}}"#,
            ]),
            true,
        ),
        (
            "a brace in a string before the name",
            trace_of(&[
                r#"{"cat": "x{", "name": "[memory]", "ts": 2, "args": {"Bytes": 8, "Addr": 1}}"#,
            ]),
            false,
        ),
        (
            "bad numbers",
            trace_of(&[r#"{"name": "[memory]", "ts": 01, "args": {"Bytes": 8, "Addr": 1}}"#]),
            false,
        ),
    ];
    for (what, text, sure) in cases {
        let whole = read_trace_from(text.as_bytes(), 1 << 20, &LoadControl::new(), "t").unwrap();
        for trickle in [1, 7, 1 << 20] {
            let got = scan_bytes(text.as_bytes(), trickle);
            if sure {
                assert_eq!(got.unsure, 0, "{what}");
                assert_eq!(got.events, whole.memory, "{what} trickle {trickle}");
            } else {
                // Unsure: the loader reads the events the slow way, the whole read's.
                assert!(got.unsure > 0, "{what}: {got:?}");
            }
        }
    }
}

#[test]
fn the_quick_reader_agrees_with_serde_or_leaves_it_to_serde() {
    let variants = [
        MEM.to_string(),
        MEM.replace("1000.5", "\"1000.5\""),
        MEM.replace("1000.5", "1e3"),
        MEM.replace("1000.5", "-0"),
        MEM.replace("1000.5", "01"),
        MEM.replace("1000.5", "1."),
        MEM.replace("1000.5", "true"),
        MEM.replace("1000.5", "[1]"),
        MEM.replace("139000", "\"0x21ef8\""),
        MEM.replace("\"pid\": 7", "\"pid\": \"7\""),
        MEM.replace("\"s\": \"t\"", "\"s\": {\"x\": 1}"),
        MEM.replace("\"s\": \"t\"", "\"name\": \"[memory]\""),
        MEM.replace("\"Bytes\": 512", "\"Bytes\": 512, \"Bytes\": 1"),
        MEM.replace("[memory]", "[other]"),
        MEM.replace(", \"args\"", ", \"args\": 5, \"x\""),
        MEM.replace("cpu_instant_event", "caf\u{e9}"),
        MEM.replace("cpu_instant_event", "a\tb"),
        MEM.replace("\"ts\": 1000.5", "\"ts\" : 1000.5 "),
        format!("{MEM} x"),
        MEM[..MEM.len() - 1].to_string(),
    ];
    let mut read_by_hand = 0;
    for v in &variants {
        let serde = parse_memory_event(v.as_bytes());
        match quick_fields(v.as_bytes()) {
            None => {} // serde's to read
            Some(None) => assert_eq!(serde, Ok(None), "{v}"),
            Some(Some(raw)) => {
                read_by_hand += 1;
                assert_eq!(
                    memsight::ingest::trace_view::memory_event_from(&raw).map(Some),
                    serde,
                    "{v}"
                );
            }
        }
    }
    assert!(read_by_hand >= 6, "{read_by_hand}");
}

#[test]
fn the_loader_hands_out_the_curves_first() {
    let dir = common::fixtures().join("pytorch/ddp");
    let profile = memsight::ingest::discover(&dir).unwrap();
    for info in &profile.ranks {
        let mut first = Vec::new();
        let data =
            memsight::ingest::load_rank_with(info, &LoadControl::new(), &mut |d| first.push(d))
                .unwrap();
        assert_eq!(first.len(), 1, "{}", info.rank);
        let f = &first[0];
        assert!(f.partial && !data.partial);
        assert_eq!(f.records.time_ns, data.records.time_ns);
        assert_eq!(f.records.allocated, data.records.allocated);
        assert_eq!(f.records.reserved, data.records.reserved);
        assert_eq!(f.time_origin_ns, data.time_origin_ns);
        assert!(f.operators.is_empty() && !data.operators.is_empty());
    }
}

/// Discovery's scan of the memory events is handed to the loads (the trace is read twice, not
/// three times): each rank of a trace with two devices loads with it as it loads without it,
/// its first look comes from it, and a second load of the same rank, with nothing left to
/// take, reads the file again to the same answer. The curves against the raw events.
#[test]
fn discovery_hands_its_scan_to_the_loads() {
    use memsight::model::{DataSource, Prefetch};
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("two_devices.pt.trace.json");
    // Interleaved CPU and cuda:0 events, PyTorch's layout, with an op naming them and a step.
    let mut events = vec![
        r#"{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 9, "tid": 9, "ts": 1000, "dur": 900}"#.to_string(),
        r#"{"ph": "X", "cat": "cpu_op", "name": "aten::empty", "pid": 9, "tid": 9, "ts": 1001, "dur": 800}"#.to_string(),
    ];
    let mut raw: Vec<(i64, i64, i64, i64)> = Vec::new(); // (device type, ns, bytes, total)
    let (mut cpu, mut gpu) = (0i64, 0i64);
    for k in 0..200i64 {
        let (dev_type, dev_id) = if k % 3 == 0 { (0, -1) } else { (1, 0) };
        let total = if dev_type == 0 { &mut cpu } else { &mut gpu };
        let bytes = if k % 5 == 4 {
            -(64 * (k - 4)).max(64)
        } else {
            64 * (k + 1)
        };
        *total += bytes;
        let ts = format!("{}.{:03}", 1002 + k, k * 7 % 1000);
        raw.push((dev_type, 1_002_000 + k * 1000 + k * 7 % 1000, bytes, *total));
        events.push(format!(
            "{{\n    \"ph\": \"i\",\n    \"cat\": \"cpu_instant_event\",\n    \"s\": \"t\",\n    \"name\": \"[memory]\",\n    \"pid\": 9,\n    \"tid\": 9,\n    \"ts\": {ts}\n    ,\n    \"args\": {{\n      \"Total Reserved\": {}, \"Total Allocated\": {total}, \"Bytes\": {bytes}, \"Device Id\": {dev_id}, \"Device Type\": {dev_type}, \"Addr\": {}, \"finished\": false, \"Ev Idx\": {k}\n    }}\n  }}",
            if dev_type == 0 { 0 } else { 1 << 20 },
            4096 + 64 * (k % 7)
        ));
    }
    std::fs::write(
        &path,
        format!(
            "{{\"schemaVersion\": 1, \"traceEvents\": [\n  {}\n]}}",
            events.join(",\n  ")
        ),
    )
    .unwrap();
    let profile = memsight::ingest::discover(&path).unwrap();
    let devices: Vec<_> = profile.ranks.iter().map(|r| r.device.clone()).collect();
    assert_eq!(
        devices,
        [Some("cpu".to_string()), Some("cuda:0".to_string())]
    );
    for (info, dev_type) in profile.ranks.iter().zip([0, 1]) {
        assert!(
            format!("{:?}", info.source).contains("Prefetch(held)"),
            "discovery kept the events: {:?}",
            info.source
        );
        // The same rank without what discovery kept: the load scans the file itself.
        let mut plain = info.clone();
        if let DataSource::Imported { prefetch, .. } = &mut plain.source {
            *prefetch = Prefetch::default();
        }
        let mut first = Vec::new();
        let with =
            memsight::ingest::load_rank_with(info, &LoadControl::new(), &mut |d| first.push(d))
                .unwrap();
        let without = memsight::ingest::load_rank(&plain, &LoadControl::new()).unwrap();
        let again = memsight::ingest::load_rank(info, &LoadControl::new()).unwrap();
        assert!(
            !format!("{:?}", info.source).contains("Prefetch(held)"),
            "taken"
        );
        // The curve: the device's events' totals, in time order (the file's).
        let want: Vec<(i64, i64)> = raw
            .iter()
            .filter(|r| r.0 == dev_type)
            .map(|r| (r.1, r.3))
            .collect();
        for data in [&with, &without, &again, &first[0]] {
            let got: Vec<(i64, i64)> = data
                .records
                .time_ns
                .iter()
                .zip(&data.records.allocated)
                .map(|(&t, &a)| (t, a))
                .collect();
            assert_eq!(got, want, "{}", info.rank);
            assert_eq!(data.time_origin_ns, with.time_origin_ns);
        }
        assert_eq!(first.len(), 1);
        for data in [&without, &again] {
            assert_eq!(data.operators.size, with.operators.size);
            assert_eq!(data.operators.alloc_time, with.operators.alloc_time);
            assert_eq!(data.operators.release_time, with.operators.release_time);
            let names = |d: &memsight::model::RankData| -> Vec<String> {
                (0..d.operators.len())
                    .map(|r| d.strings.get(d.operators.name[r]).to_string())
                    .collect()
            };
            assert_eq!(names(data), names(&with));
            assert_eq!(data.steps.is_some(), with.steps.is_some());
        }
        assert!(names_include(&with, "aten::empty"), "{}", info.rank);
    }
}

fn names_include(d: &memsight::model::RankData, name: &str) -> bool {
    (0..d.operators.len()).any(|r| d.strings.get(d.operators.name[r]) == name)
}
