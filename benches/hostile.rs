//! Hostile inputs take bounded time: each is discovered and loaded through the public entry
//! points the app and the CLI use (`memsight::fuzzing`, which also checks nothing under the
//! folder changed). Tests assert the behaviour; this measures that no input makes a reader
//! crawl (before the input-safety work, the no-line-break file took 43 s per 128 MiB and a
//! `0E2147483647` cell 3.7 s).

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
    g.finish();
}

criterion_group!(benches, hostile);
criterion_main!(benches);
