//! Hostile inputs take bounded time: each is discovered and loaded through the public entry
//! points the app and the CLI use (`memsight::fuzzing`, which also checks nothing under the
//! folder changed). Tests assert the behaviour; this measures that no input makes a reader
//! crawl (before the input-safety work, the no-line-break file took 43 s per 128 MiB and a
//! `0E2147483647` cell 3.7 s; an msMemScope dump of 100k pools, 14 s, and one of 100k op ends
//! that match no start, 3 s).

use criterion::{Criterion, criterion_group, criterion_main};

const HEADER: &str = "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type\n";

fn rows(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "PTA+GE,{}.250\t,{}.0,4096.0,{}.0,55,NPU:0\n",
                1_700_000_000_000_000u64 + 1000 * i as u64,
                10 + i % 100,
                10 + i % 100
            )
        })
        .collect()
}

fn hostile(c: &mut Criterion) {
    let inputs: Vec<(&str, Vec<u8>)> = vec![
        // 64 MiB without a line break (header bound) and one 64 MiB line after a header.
        ("no_line_break_64mib", vec![b'x'; 64 << 20]),
        ("one_64mib_line", {
            let mut v = HEADER.as_bytes().to_vec();
            v.extend(std::iter::repeat_n(b'9', 64 << 20));
            v.push(b'\n');
            v
        }),
        // 10,000 cells of `0E2147483647`.
        ("huge_exponents_10k_rows", {
            let mut s = String::from(HEADER);
            for i in 0..10_000u64 {
                s.push_str(&format!(
                    "PTA+GE,{}.0,0E2147483647,0E2147483647,0E2147483647,55,NPU:0\n",
                    1_700_000_000_000_000 + i
                ));
            }
            s.into_bytes()
        }),
        // A quote opened on the first row of 200k rows.
        (
            "stray_quote_200k_rows",
            format!("{HEADER}\"{}", rows(200_000)).into_bytes(),
        ),
        // 200k rows with CR-only line breaks.
        (
            "cr_only_200k_rows",
            format!("{HEADER}{}", rows(200_000))
                .replace('\n', "\r")
                .into_bytes(),
        ),
    ];
    let mut g = c.benchmark_group("hostile");
    g.sample_size(10);
    for (name, data) in &inputs {
        g.bench_function(*name, |b| {
            b.iter(|| memsight::fuzzing::table("memory_record", data))
        });
    }
    // An msMemScope dump of 100k MALLOCs, each in a pool of its own (14 s before the pools'
    // sums were kept running: every pool was summed at each event).
    let pools: String = std::iter::once(
        "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n".to_string(),
    )
    .chain((0..100_000u64).map(|i| {
        format!(
            "{i},MALLOC,P{i},N/A,{},1,1,0,0x{:x},\"{{size:16}}\",,\n",
            1_700_000_000_000_000_000 + i,
            i + 4096
        )
    }))
    .collect();
    g.bench_function("memscope_100k_pools", |b| {
        b.iter(|| memsight::fuzzing::run("msmemscope", pools.as_bytes()))
    });
    // 100k op starts, then 100k ends that match none of them (3 s before the open starts
    // were kept per thread and name: each end searched them all).
    let mut ops = String::from(
        "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n\
         0,MALLOC,PTA,N/A,1700000000000000000,1,1,0,0x1000,\"{size:16}\",,\n",
    );
    for i in 0..200_000u64 {
        let (kind, name) = if i < 100_000 {
            ("ATEN_START", format!("aten::op{i}"))
        } else {
            ("ATEN_END", "aten::zzz".to_string())
        };
        ops.push_str(&format!(
            "{},OP_LAUNCH,{kind},{name},{},1,1,0,N/A,,,\n",
            i + 1,
            1_700_000_000_000_000_001 + i
        ));
    }
    g.bench_function("memscope_100k_unmatched_op_ends", |b| {
        b.iter(|| memsight::fuzzing::run("msmemscope", ops.as_bytes()))
    });
    g.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
