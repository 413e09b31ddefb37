//! Properties of the phases and roles on arbitrary host ops and blocks (proptest): phases come
//! out sorted and never overlapping whatever the ops (nested, overlapping, on many threads,
//! zero-length, far apart), every block gets exactly one role, and a block's role agrees with
//! the phase holding its allocation, found by a linear search.

use memsight::ingest::roles::classify_row;
use memsight::model::{HostOps, NO_STACK, NULL, PhaseKind, Phases, Role};
use proptest::prelude::*;

const NAMES: [&str; 7] = [
    "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
    "aten::mm",
    "autograd::engine::evaluate_function: MmBackward0",
    "Optimizer.step#AdamW.step",
    "Optimizer.zero_grad#AdamW.zero_grad",
    "DistributedDataParallel.forward",
    "ProfilerStep#3",
];

/// (start, duration, thread, name index, sequence number).
fn ops() -> impl Strategy<Value = Vec<(i64, i64, u64, usize, i64)>> {
    proptest::collection::vec(
        (
            0i64..10_000,
            0i64..2_000,
            0u64..3,
            0usize..NAMES.len(),
            -1i64..5,
        ),
        0..60,
    )
}

fn host(list: &[(i64, i64, u64, usize, i64)]) -> HostOps {
    let mut h = HostOps::default();
    for &(s, d, t, n, seq) in list {
        let id = h.names.intern(NAMES[n]);
        h.push(s, s + d, t, id, NO_STACK, seq);
    }
    h
}

fn phases_of(h: &HostOps) -> Phases {
    // Through the public seam every source uses: attribution builds the phases.
    memsight::ingest::stacks::attribute(h.clone(), &[], memsight::model::StackSource::TraceView)
        .phases
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]

    #[test]
    fn phases_are_sorted_and_disjoint(list in ops()) {
        let p = phases_of(&host(&list));
        for w in p.spans.windows(2) {
            prop_assert!(w[0].start_ns <= w[0].end_ns);
            prop_assert!(w[0].end_ns <= w[1].start_ns, "{:?}", p.spans);
        }
        if let Some(last) = p.spans.last() {
            prop_assert!(last.start_ns <= last.end_ns);
        }
        // Phases only exist when a backward node does (one nested in another marker, as in
        // an optimizer step, does not count).
        let backward = list.iter().any(|o| NAMES[o.3].starts_with("autograd::engine"));
        prop_assert!(p.is_empty() || backward);
    }

    #[test]
    fn a_blocks_role_follows_the_phase_at_its_allocation(
        list in ops(),
        blocks in proptest::collection::vec((0i64..12_000, proptest::option::of(0i64..3_000), 1i64..1_000_000), 0..80),
    ) {
        let p = phases_of(&host(&list));
        for (a, life, size) in blocks {
            let release = life.map_or(NULL, |l| a + l);
            let (role, _) = classify_row(&p, size, a, release, NULL);
            // The phase holding `a`, by a linear search (the later where two touch).
            let phase = p.spans.iter().rev().find(|s| s.start_ns <= a && a <= s.end_ns);
            let allowed: &[Role] = match phase.map(|s| s.kind) {
                _ if p.is_empty() => &[Role::Unknown],
                None => &[Role::Unknown],
                Some(PhaseKind::Data) => &[Role::Input],
                Some(PhaseKind::Forward) => &[Role::Activation],
                Some(PhaseKind::Backward) => &[Role::Gradient, Role::BackwardTemporary],
                Some(PhaseKind::Optimizer) => &[Role::OptimizerState, Role::Temporary],
                Some(PhaseKind::ZeroGrad) => &[Role::Temporary, Role::Unknown],
            };
            prop_assert!(allowed.contains(&role), "{role:?} at {a} in {phase:?}");
        }
    }
}
