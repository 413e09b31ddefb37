//! Budgets of the analysis engine: re-sampling a 10M-point window (≤ 16 ms, against a naive full
//! scan), live-at-time on 1M allocations (≤ 50 ms), table filter + sort on 1M rows (≤ 50 ms).

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use memsight::analysis::{
    Column, DEFAULT_THRESHOLD, LiveIndex, LodSeries, Series, SortCache, SortDir, TableQuery,
    live_at, query,
};

use memsight::model::{Format, Interner, NULL, OperatorMemory, RankData, RankInfo};

fn random_walk(n: usize) -> Series {
    let mut x = 88172645463325252u64;
    let (mut t, mut v) = (0i64, 1i64 << 33);
    let mut s = Series::new("bench");
    s.times.reserve(n);
    s.values.reserve(n);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 1 + (x % 1000) as i64;
        v += (x % (64 << 20)) as i64 - (32 << 20);
        s.times.push(t);
        s.values.push(v);
    }
    s
}

/// The naive reduction: visit every point of the window once.
fn naive_m4(s: &Series, t0: i64, t1: i64, w: usize) -> usize {
    let mut cols: Vec<Option<(i64, i64)>> = vec![None; w];
    let span = (t1 - t0).max(1) as i128;
    for (&t, &v) in s.times.iter().zip(&s.values) {
        if t < t0 || t > t1 {
            continue;
        }
        let c = (((t - t0) as i128 * w as i128) / span).min(w as i128 - 1) as usize;
        cols[c] = Some(cols[c].map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v))));
    }
    cols.iter().flatten().count()
}

fn lod(c: &mut Criterion) {
    let s = random_walk(10_000_000);
    let (first, last) = (s.times[0], *s.times.last().unwrap());
    let mut g = c.benchmark_group("lod_10M");
    g.sample_size(20);
    g.bench_function("build_pyramid", |b| b.iter(|| LodSeries::new(s.clone())));
    let l = LodSeries::new(s.clone());
    for (label, t0, t1) in [
        ("full", first, last),
        ("zoom_10pct", last / 2, last / 2 + last / 10),
    ] {
        g.bench_with_input(
            BenchmarkId::new("exact_m4_pyramid", label),
            &(t0, t1),
            |b, &(t0, t1)| b.iter(|| l.reduce(t0, t1, 1920, usize::MAX)),
        );
        g.bench_with_input(
            BenchmarkId::new("sampled_lttb_pyramid", label),
            &(t0, t1),
            |b, &(t0, t1)| b.iter(|| l.reduce(t0, t1, 1920, DEFAULT_THRESHOLD)),
        );
        g.bench_with_input(
            BenchmarkId::new("naive_full_scan", label),
            &(t0, t1),
            |b, &(t0, t1)| b.iter(|| naive_m4(&s, t0, t1, 1920)),
        );
    }
    g.finish();
}

/// A rank with `n` synthetic allocations (1% never released, a few release-only rows).
fn rank_with_allocs(n: usize) -> RankData {
    let mut strings = Interner::new();
    let names: Vec<u32> = (0..50)
        .map(|k| strings.intern(&format!("aten::op{k}")))
        .collect();
    let mut o = OperatorMemory::with_capacity(n);
    let mut x = 2463534242u64;
    let mut t = 1_700_000_000_000_000_000i64;
    for i in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        t += 1 + (x % 10_000) as i64;
        let life = if x.is_multiple_of(10) {
            50_000_000
        } else {
            (x % 200_000) as i64 + 1000
        };
        let released = !x.is_multiple_of(100);
        o.name.push(names[i % names.len()]);
        o.size.push(((x >> 8) % (64 << 20)) as i64 + 512);
        o.alloc_time.push(if i % 100_000 == 7 { NULL } else { t });
        o.release_time.push(if released { t + life } else { NULL });
        o.active_release_time
            .push(if released { t + life + 37 } else { NULL });
        o.duration.push(if released { life } else { NULL });
        o.active_duration
            .push(if released { life + 37 } else { NULL });
        let total = (x % (60 << 30)) as i64;
        o.alloc_total_allocated.push(total);
        o.alloc_total_reserved.push(total);
        o.alloc_total_active.push(total);
        let total = if released { total } else { NULL };
        o.release_total_allocated.push(total);
        o.release_total_reserved.push(total);
        o.release_total_active.push(total);
        o.stream.push(0);
    }
    let mut data = RankData::empty(RankInfo::without_files(
        "0",
        Format::TorchNpu,
        Default::default(),
    ));
    data.time_origin_ns = 1_700_000_000_000_000_000;
    data.operators = o;
    data.strings = strings;
    data
}

/// From the rank origin to the last allocation, ns.
fn alloc_span(data: &RankData) -> i64 {
    data.operators
        .alloc_time
        .iter()
        .copied()
        .filter(|&t| t != NULL)
        .max()
        .unwrap_or(data.time_origin_ns)
        - data.time_origin_ns
}

fn live(c: &mut Criterion) {
    let data = rank_with_allocs(1_000_000);
    let span = alloc_span(&data);
    let mut g = c.benchmark_group("live_1M");
    g.sample_size(20);
    g.bench_function("build_index", |b| b.iter(|| LiveIndex::new(&data)));
    let index = LiveIndex::new(&data);
    g.bench_function("live_at_mid", |b| {
        b.iter(|| live_at(&data, &index, span / 2))
    });
    g.finish();
}

fn table(c: &mut Criterion) {
    let data = rank_with_allocs(1_000_000);
    let span = alloc_span(&data);
    let q = TableQuery {
        window: Some((span / 4, span / 2)),
        name: "OP1".into(),
        sort: Some((Column::Size, SortDir::Desc)),
        ..Default::default()
    };
    let mut g = c.benchmark_group("table_1M");
    g.sample_size(20);
    g.bench_function("filter_sort_first_query", |b| {
        b.iter(|| query(&data, &SortCache::new(), &q))
    });
    let cache = SortCache::new();
    query(&data, &cache, &q);
    g.bench_function("filter_sort_cached_order", |b| {
        b.iter(|| query(&data, &cache, &q))
    });
    let last_page = TableQuery {
        page: 5_000,
        ..q.clone()
    };
    g.bench_function("filter_sort_cached_deep_page", |b| {
        b.iter(|| query(&data, &cache, &last_page))
    });
    g.finish();
}

criterion_group!(benches, lod, live, table);
criterion_main!(benches);
