//! Loading benchmarks: one big rank (parse + sort), discovery of a 1,000-rank cluster, and the
//! inspect summary. Data comes from the project's generator into a temp folder.
//!
//! For the 1M-allocation whole-command figure in the README, use `/usr/bin/time -v memsight
//! inspect` on the peer benchmark's generated folder instead (see README "Performance").

use criterion::{Criterion, criterion_group, criterion_main};
use memsight::generate::{GenOptions, generate};
use memsight::ingest::{LoadControl, discover, load_rank};

fn big_rank(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    generate(
        tmp.path(),
        &GenOptions {
            allocs: 200_000,
            ..Default::default()
        },
    )
    .unwrap();
    let profile = discover(tmp.path()).unwrap();
    let mut g = c.benchmark_group("load");
    g.sample_size(10);
    g.bench_function("rank_200k_allocs_csv", |b| {
        b.iter(|| load_rank(&profile.ranks[0], &LoadControl::new()).unwrap())
    });
    let data = load_rank(&profile.ranks[0], &LoadControl::new()).unwrap();
    g.bench_function("summary_200k_allocs", |b| {
        b.iter(|| memsight::export::summarize(&data))
    });
    g.finish();
}

fn cluster_discovery(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    generate(
        tmp.path(),
        &GenOptions {
            ranks: 1000,
            allocs: 20,
            workspace: false,
            ..Default::default()
        },
    )
    .unwrap();
    let mut g = c.benchmark_group("discover");
    g.sample_size(10);
    g.bench_function("cluster_1000_ranks", |b| {
        b.iter(|| {
            let p = discover(tmp.path()).unwrap();
            assert_eq!(p.ranks.len(), 1000);
        })
    });
    g.finish();
}

criterion_group!(benches, big_rank, cluster_discovery);
criterion_main!(benches);
