//! The hot loops of ingest, alone: the number parser on the cells torch_npu writes, the line
//! splitter on memory_record / operator_memory lines, and the three readers of a PyTorch
//! `[memory]` event (template, one pass, serde). Whole-file figures are in `load`; whole
//! commands are timed with `farm-bench` (README "Performance").

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use memsight::ingest::line_split::LineSplitter;
use memsight::ingest::value::parse_scaled;
use std::hint::black_box;

/// Cells as torch_npu writes them: µs timestamps with 3 decimals and a trailing TAB, MB with 6
/// decimals, whole MB, KB sizes, µs durations.
fn cells() -> Vec<(String, i64)> {
    let mut v = Vec::new();
    for i in 0..100_000u64 {
        v.push((
            format!("{}.{:03}\t", 1_700_000_000_000_000 + i * 37, i % 1000),
            1000,
        ));
        v.push((
            format!("{}.{:06}", 2048 + i % 30_000, (i * 7919) % 1_000_000),
            1 << 20,
        ));
        v.push((format!("{}.0", 3560 + i % 500), 1 << 20));
        v.push((format!("{}.{}", 81 + i % 4000, i % 10), 1024));
        v.push((format!("{}.{:03}\t", 82 + i % 900, i % 1000), 1000));
    }
    v
}

/// The sum of every cell's value (so nothing is optimised away).
fn parse_all(cells: &[(String, i64)]) -> i64 {
    let mut sum = 0i64;
    for (cell, factor) in cells {
        let v = parse_scaled(cell.as_bytes(), *factor).unwrap().unwrap();
        sum = sum.wrapping_add(v.value);
    }
    sum
}

fn number_parser(c: &mut Criterion) {
    let cells = cells();
    let mut g = c.benchmark_group("parse_scaled");
    g.throughput(Throughput::Elements(cells.len() as u64));
    g.bench_function("torch_npu_cells_500k", |b| {
        b.iter(|| black_box(parse_all(&cells)))
    });
    // Each shape alone (every fifth cell of the mix): µs timestamps, MB with 6 decimals, whole
    // MB, KB sizes, µs durations. A change that helps one shape can cost another.
    for (k, name) in ["ts", "mb6", "mb0", "kb1", "dur3"].iter().enumerate() {
        let kind: Vec<(String, i64)> = cells.iter().skip(k).step_by(5).cloned().collect();
        g.bench_function(format!("kind_{name}"), |b| {
            b.iter(|| black_box(parse_all(&kind)))
        });
    }
    g.finish();
}

fn line_splitter(c: &mut Criterion) {
    let mut text = String::new();
    for i in 0..100_000u64 {
        text.push_str(&format!(
            "PTA+GE,{}.{:03}\t,32640.706493,33868.0,31749.096978,187651522637632,NPU:0\n",
            1_700_000_002_347_341u64 + i,
            i % 1000
        ));
        text.push_str(&format!(
            "aten::silu,81.0,{t}.619\t,{t}.241\t,{t}.278\t,82.622\t,82.659\t,2048.079102,2060.0,\
             2050.897906,2080.017578,2100.0,2083.555839,187651539951616,NPU:0\n",
            t = 1_700_000_000_000_007u64 + i
        ));
    }
    let lines: Vec<&[u8]> = text.as_bytes().split(|&b| b == b'\n').collect();
    let mut g = c.benchmark_group("line_split");
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("memory_and_operator_lines_200k", |b| {
        let mut splitter = LineSplitter::new(b',');
        b.iter(|| {
            let mut cells = 0usize;
            for line in &lines {
                cells += splitter.with_cells(line, |r| r.map_or(0, <[&[u8]]>::len));
            }
            black_box(cells)
        })
    });
    g.finish();
}

/// A PyTorch `[memory]` event as torch 2.x writes it, its numbers varied by `k`.
fn memory_event(k: u64) -> String {
    format!(
        "{{\n    \"ph\": \"i\",\n    \n    \"cat\": \"cpu_instant_event\",\n    \"s\": \"t\",\n    \"name\": \"[memory]\",\n    \"pid\": 1555,\n    \"tid\": 1555,\n    \"ts\": {}.{:03}\n    ,\n    \"args\": {{\n      \"Total Reserved\": 0, \"Total Allocated\": {}, \"Bytes\": {}, \"Device Id\": -1, \"Device Type\": 0, \"Addr\": {}, \"finished\": false, \"Ev Idx\": {k}\n    }}\n  }}",
        4_747_689_126_117u64 + k,
        k % 1000,
        196_608 + k * 64,
        64 + k % 4096,
        94_820_774_467_456u64 + k * 512
    )
}

fn memory_event_readers(c: &mut Criterion) {
    use memsight::ingest::pytorch::memory_event::{Template, quick_object};
    use memsight::ingest::trace_view::{memory_event_from, parse_memory_event};
    let events: Vec<String> = (0..10_000).map(memory_event).collect();
    let bytes: u64 = events.iter().map(|e| e.len() as u64).sum();
    let template = Template::of(events[0].as_bytes()).expect("a template of PyTorch's layout");
    let mut g = c.benchmark_group("memory_event_10k");
    g.throughput(Throughput::Bytes(bytes));
    g.bench_function("template", |b| {
        b.iter(|| {
            let read = events
                .iter()
                .filter_map(|e| template.read(e.as_bytes()))
                .filter(|(ev, _)| ev.is_ok())
                .count();
            black_box(read)
        })
    });
    g.bench_function("one_pass", |b| {
        b.iter(|| {
            let read = events
                .iter()
                .filter_map(|e| quick_object(e.as_bytes()))
                .filter_map(|(raw, _)| raw.map(|r| memory_event_from(&r)))
                .filter(Result::is_ok)
                .count();
            black_box(read)
        })
    });
    g.bench_function("serde", |b| {
        b.iter(|| {
            let read = events
                .iter()
                .filter(|e| matches!(parse_memory_event(e.as_bytes()), Ok(Some(_))))
                .count();
            black_box(read)
        })
    });
    g.finish();
}

criterion_group!(benches, number_parser, line_splitter, memory_event_readers);
criterion_main!(benches);
