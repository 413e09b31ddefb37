//! Training phases for generated profiles (`GenOptions::phases`): each step is laid out as
//! data, forward, backward, optimizer step and zero_grad, every block's lifetime is made to
//! follow the phase it was allocated in, and the host ops get the spans that mark the phases.
//! What each block then is (its role) is known by construction, for the roles' tests and
//! benchmarks.

use super::HostSim;
use super::rng::Rng;
use super::sim::Alloc;

/// A step's phases as fractions of its span: (phase, from, to). Forward has no op of its own
/// (its ops carry sequence numbers); backward is the autograd thread's nodes.
const LAYOUT: [(Phase, f64, f64); 5] = [
    (Phase::Data, 0.0, 0.05),
    (Phase::Forward, 0.05, 0.45),
    (Phase::Backward, 0.45, 0.86),
    (Phase::Optimizer, 0.86, 0.95),
    (Phase::ZeroGrad, 0.95, 0.99),
];

/// A phase of a generated step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Phase {
    Data,
    Forward,
    Backward,
    Optimizer,
    ZeroGrad,
}

/// One phase of one step: (phase, step index, start ns, end ns).
pub(crate) type Span = (Phase, usize, i64, i64);

/// Backward nodes written per step.
const NODES: i64 = 8;

/// Lays out the phases of `steps` and reshapes the lifetimes of `pta` (sorted by allocation)
/// to follow them; returns the phase spans, in time order.
pub(crate) fn shape(rng: &mut Rng, pta: &mut [Alloc], steps: &[(i64, i64, i64)]) -> Vec<Span> {
    let mut spans: Vec<Span> = Vec::with_capacity(steps.len() * LAYOUT.len());
    for (k, &(_, s, e)) in steps.iter().enumerate() {
        let len = (e - s) as f64;
        for (p, a, b) in LAYOUT {
            spans.push((p, k, s + (len * a) as i64, s + (len * b) as i64 - 1));
        }
    }
    // Step k's phases are spans[k * LAYOUT.len()..], in LAYOUT's order.
    let find = |k: usize, p: Phase| {
        let at = LAYOUT.iter().position(|l| l.0 == p)?;
        spans.get(k * LAYOUT.len() + at).copied()
    };
    let between = |rng: &mut Rng, a: i64, b: i64| a + (rng.unit() * (b - a).max(1) as f64) as i64;
    for a in pta.iter_mut() {
        if a.name == Some(super::sim::OPS.len()) {
            continue; // the leaking op keeps its blocks
        }
        let at = spans.partition_point(|x| x.2 <= a.t_alloc);
        let Some(&(phase, k, _, end)) = at.checked_sub(1).map(|i| &spans[i]) else {
            continue;
        };
        if a.t_alloc > end {
            continue; // between phases: left as it is (an unknown)
        }
        let backward = find(k, Phase::Backward);
        let soon = a.t_alloc + 60;
        a.t_free = match phase {
            Phase::Data => backward.map(|b| between(rng, b.2, b.3)),
            Phase::Forward if rng.chance(0.15) => Some(soon),
            Phase::Forward => backward.map(|b| between(rng, b.2.max(a.t_alloc), b.3)),
            Phase::Backward if rng.chance(0.5) => Some(between(rng, a.t_alloc + 1, end)),
            // A gradient: freed by the next step's zero_grad, or kept past the last step.
            Phase::Backward => find(k + 1, Phase::ZeroGrad).map(|z| between(rng, z.2, z.3)),
            Phase::Optimizer if k == 0 && rng.chance(0.6) => None,
            Phase::Optimizer => Some(between(rng, a.t_alloc + 1, end)),
            Phase::ZeroGrad => Some(soon),
        };
    }
    spans
}

/// Adds the phases to the host ops: the ops allocating in forward get sequence numbers, those
/// in backward move to the autograd thread, and each phase gets its marking span.
pub(crate) fn mark(host: &mut HostSim, spans: &[Span]) {
    if spans.is_empty() {
        return;
    }
    for (i, &(start, _, _, _)) in host.ops.iter().enumerate() {
        let at = spans.partition_point(|x| x.2 <= start);
        let Some(&(phase, _, _, end)) = at.checked_sub(1).map(|k| &spans[k]) else {
            continue;
        };
        if start > end {
            continue;
        }
        match phase {
            Phase::Forward => host.op_seq[i] = i as i64,
            Phase::Backward => host.op_autograd[i] = true,
            _ => {}
        }
    }
    for &(phase, _, s, e) in spans {
        match phase {
            Phase::Data => host.markers.push((
                "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                s,
                e,
                false,
            )),
            Phase::Forward => {}
            Phase::Backward => {
                let step = ((e - s) / NODES).max(1);
                for n in 0..NODES {
                    let a = s + n * step;
                    let b = if n == NODES - 1 { e } else { a + step - 1 };
                    host.markers.push((
                        "autograd::engine::evaluate_function: MmBackward0",
                        a,
                        b.max(a),
                        true,
                    ));
                }
            }
            Phase::Optimizer => host
                .markers
                .push(("Optimizer.step#AdamW.step", s, e, false)),
            Phase::ZeroGrad => {
                host.markers
                    .push(("Optimizer.zero_grad#AdamW.zero_grad", s, e, false))
            }
        }
    }
}
