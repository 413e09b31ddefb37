//! Memory by role on a 1M-allocation, 50-step generated profile with training phases (the
//! issue's budget: ≤ 100 ms off the UI thread): classifying every block (done at load) and the
//! report (role curves, the split at the peak and at each step's peak, the advice), which the
//! app computes in a job the first time the tab is shown; and the what-if replay on the same
//! profile (issue 44's budget: recomputed within 100 ms when a lever moves), which the What if
//! tab runs in a job.

use criterion::{Criterion, criterion_group, criterion_main};
use memsight::analysis::{RankView, role_report};
use memsight::generate::{GenOptions, generate};
use memsight::ingest::{LoadControl, discover, load_rank};

fn roles(c: &mut Criterion) {
    let dir = tempfile::tempdir().unwrap();
    let opts = GenOptions {
        ranks: 1,
        allocs: 1_000_000,
        steps: 50,
        stacks: true,
        phases: true,
        ge: false,
        ..Default::default()
    };
    generate(dir.path(), &opts).unwrap();
    let profile = discover(dir.path()).unwrap();
    let data = load_rank(&profile.ranks[0], &LoadControl::new()).unwrap();
    assert!(data.roles.as_ref().is_some_and(|r| !r.phases.is_empty()));
    let view = RankView::new(data);
    let overall = view.overall_series();
    let mut g = c.benchmark_group("roles_1M_50_steps");
    g.sample_size(10);
    g.bench_function("classify_blocks", |b| {
        b.iter(|| {
            memsight::ingest::roles::classify(&view.data.operators, view.data.stacks.as_ref())
        })
    });
    g.bench_function("role_curves", |b| {
        b.iter(|| memsight::analysis::roles::role_series(&view.data))
    });
    g.bench_function("report", |b| b.iter(|| role_report(&view.data, &overall)));
    use memsight::analysis::whatif::{Scenario, predict_on};
    let twice = Scenario {
        micro_batch: 2.0,
        ..Default::default()
    };
    let zero2 = Scenario {
        zero: Some((2, 8)),
        ..Default::default()
    };
    g.bench_function("whatif_micro_batch_x2", |b| {
        b.iter(|| predict_on(&view, &twice).unwrap())
    });
    g.bench_function("whatif_zero2_over_8", |b| {
        b.iter(|| predict_on(&view, &zero2).unwrap())
    });
    g.finish();
}

criterion_group!(benches, roles);
criterion_main!(benches);
