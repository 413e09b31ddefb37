//! The phases of training steps, read from the host ops' names and times (see
//! [`crate::model::PhaseKind`]): what the roles of blocks are judged against.
//!
//! - **Markers** are the ops that name a phase: `enumerate(DataLoader)#…` (data),
//!   `Optimizer.step#…`, `Optimizer.zero_grad#…`, a `*.forward` span
//!   (`DistributedDataParallel.forward`), and the autograd engine's `evaluate_function: …`
//!   nodes, merged into one backward phase while no forward op (one with a sequence number)
//!   starts between them. A marker inside another is ignored.
//! - **Forward** is what leads up to a backward phase: from the first op that records autograd
//!   (an op with a sequence number) or the first `*.forward` span after the previous marker,
//!   to the backward phase's start, less any zero_grad inside.
//! - **Data** is the rest of that gap, before forward: the `DataLoader` span and what follows it
//!   until forward (the batch's copy to the device), or the loop's own batch-making ops when
//!   there is no `DataLoader` span.

use crate::model::{HostOps, Phase, PhaseKind, Phases};

/// What an op's name says about the phase it marks.
fn marker(name: &str) -> Option<PhaseKind> {
    if name.starts_with("enumerate(DataLoader)") {
        Some(PhaseKind::Data)
    } else if name.starts_with("Optimizer.step#") {
        Some(PhaseKind::Optimizer)
    } else if name.starts_with("Optimizer.zero_grad#") {
        Some(PhaseKind::ZeroGrad)
    } else if name.starts_with("autograd::engine::evaluate_function") {
        Some(PhaseKind::Backward)
    } else if name.ends_with(".forward") && !name.contains("::") && !name.contains(' ') {
        Some(PhaseKind::Forward)
    } else {
        None
    }
}

/// The phases of `ops` (empty when no backward pass is seen: then nothing tells forward from
/// the rest).
pub fn phases_of(ops: &HostOps) -> Phases {
    let kinds: Vec<Option<PhaseKind>> = {
        let by_name: Vec<Option<PhaseKind>> = (0..ops.names.len() as u32)
            .map(|id| marker(ops.names.get(id)))
            .collect();
        ops.name
            .iter()
            .map(|&n| by_name.get(n as usize).copied().flatten())
            .collect()
    };
    // Starts of ops that record autograd (forward ops), sorted.
    let mut recorded: Vec<i64> = (0..ops.len())
        .filter(|&i| ops.seq[i] >= 0 && kinds[i].is_none())
        .map(|i| ops.start_ns[i])
        .collect();
    recorded.sort_unstable();
    let recorded_between = |a: i64, b: i64| {
        let i = recorded.partition_point(|&t| t <= a);
        recorded.get(i).is_some_and(|&t| t < b)
    };
    let mut marks: Vec<Phase> = (0..ops.len())
        .filter_map(|i| {
            kinds[i].map(|kind| Phase {
                kind,
                start_ns: ops.start_ns[i],
                end_ns: ops.end_ns[i],
            })
        })
        .collect();
    marks.sort_by_key(|p| (p.start_ns, std::cmp::Reverse(p.end_ns)));
    // Outermost markers only; backward nodes merged into one phase while no forward op starts
    // between them (gradient accumulation runs forward again).
    let mut outer: Vec<Phase> = Vec::with_capacity(marks.len());
    for m in marks {
        match outer.last_mut() {
            Some(last) if m.start_ns <= last.end_ns && m.end_ns <= last.end_ns => {}
            Some(last)
                if last.kind == PhaseKind::Backward
                    && m.kind == PhaseKind::Backward
                    && !recorded_between(last.end_ns, m.start_ns) =>
            {
                last.end_ns = last.end_ns.max(m.end_ns);
            }
            Some(last) if m.start_ns < last.end_ns => {
                // Overlapping markers (another thread): the later starts where the earlier ends.
                let start = last.end_ns;
                outer.push(Phase {
                    start_ns: start,
                    ..m
                });
            }
            _ => outer.push(m),
        }
    }
    if !outer.iter().any(|p| p.kind == PhaseKind::Backward) {
        return Phases::default();
    }

    let mut spans: Vec<Phase> = Vec::with_capacity(outer.len() * 2);
    // The current gap: where it starts, and where its markers (zero_grad, forward spans) begin
    // in `spans`, so filling it never rescans the earlier phases.
    let (mut gap_start, mut gap_from) = (i64::MIN, 0);
    // Per marker: is the next marker other than zero_grad or forward a backward phase?
    let mut leads = vec![false; outer.len()];
    let mut next_backward = false;
    for (k, m) in outer.iter().enumerate().rev() {
        if m.kind != PhaseKind::ZeroGrad && m.kind != PhaseKind::Forward {
            next_backward = m.kind == PhaseKind::Backward;
        }
        leads[k] = next_backward;
    }
    for (k, m) in outer.iter().enumerate() {
        if m.kind == PhaseKind::Backward {
            fill_gap(&mut spans, gap_from, gap_start, m.start_ns, &recorded, ops);
        }
        spans.push(*m);
        // Zero_grad and forward spans in the lead-up to backward stay inside its gap (the
        // filled forward absorbs a forward span); any other marker ends the gap.
        if !(leads[k] && matches!(m.kind, PhaseKind::Forward | PhaseKind::ZeroGrad)) {
            gap_start = m.end_ns;
            gap_from = spans.len();
        }
    }
    spans.sort_by_key(|p| (p.start_ns, p.end_ns));
    Phases {
        spans: merge_forward(spans),
    }
}

/// Fills the lead-up to a backward phase starting at `end` with data then forward, around the
/// markers of the gap (`spans[from..]`, after `start`: zero_grad, explicit forward spans).
fn fill_gap(
    spans: &mut Vec<Phase>,
    from: usize,
    start: i64,
    end: i64,
    recorded: &[i64],
    ops: &HostOps,
) {
    let first_op = if start == i64::MIN {
        ops.start_ns.iter().copied().min().unwrap_or(end)
    } else {
        start
    };
    let explicit_forward = spans[from..]
        .iter()
        .filter(|p| p.kind == PhaseKind::Forward && p.start_ns >= first_op && p.start_ns < end)
        .map(|p| p.start_ns)
        .min();
    let lo = recorded.partition_point(|&t| t < first_op);
    let first_recorded = recorded.get(lo).copied().filter(|&t| t < end);
    let forward_start = match (explicit_forward, first_recorded) {
        (Some(a), Some(b)) => a.min(b),
        (Some(a), None) | (None, Some(a)) => a,
        (None, None) => first_op,
    };
    // The gap less the markers inside it (zero_grad), as data before forward_start and forward
    // after.
    let inside: Vec<(i64, i64)> = spans[from..]
        .iter()
        .filter(|p| p.kind == PhaseKind::ZeroGrad && p.start_ns >= first_op && p.end_ns <= end)
        .map(|p| (p.start_ns, p.end_ns))
        .collect();
    let mut pieces = Vec::new();
    let mut at = first_op;
    for (a, b) in inside {
        if a > at {
            pieces.push((at, a));
        }
        at = at.max(b);
    }
    if end > at {
        pieces.push((at, end));
    }
    for (a, b) in pieces {
        if a < forward_start {
            let data_end = b.min(forward_start);
            spans.push(Phase {
                kind: PhaseKind::Data,
                start_ns: a,
                end_ns: data_end,
            });
        }
        if b > forward_start {
            spans.push(Phase {
                kind: PhaseKind::Forward,
                start_ns: a.max(forward_start),
                end_ns: b,
            });
        }
    }
}

/// Sorted spans with forward and data pieces that touch or overlap (explicit spans inside the
/// filled gap) merged; the later of two overlapping different kinds starts where the earlier
/// ends.
fn merge_forward(spans: Vec<Phase>) -> Vec<Phase> {
    let mut out: Vec<Phase> = Vec::with_capacity(spans.len());
    for p in spans {
        match out.last_mut() {
            Some(last) if last.kind == p.kind && p.start_ns <= last.end_ns => {
                last.end_ns = last.end_ns.max(p.end_ns);
            }
            Some(last) if p.start_ns < last.end_ns => {
                if p.end_ns > last.end_ns {
                    let start = last.end_ns;
                    out.push(Phase {
                        start_ns: start,
                        ..p
                    });
                }
            }
            _ => out.push(p),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::NO_STACK;

    fn ops(list: &[(i64, i64, u64, &str, i64)]) -> HostOps {
        let mut h = HostOps::default();
        for &(s, e, t, n, seq) in list {
            let id = h.names.intern(n);
            h.push(s, e, t, id, NO_STACK, seq);
        }
        h
    }

    fn kinds(p: &Phases) -> Vec<(&'static str, i64, i64)> {
        p.spans
            .iter()
            .map(|s| (s.kind.as_str(), s.start_ns, s.end_ns))
            .collect()
    }

    #[test]
    fn ascend_level1_layout() {
        // The order of the real level1 rank 0: DataLoader, DDP forward, loss, zero_grad,
        // backward on the autograd thread, optimizer.
        let h = ops(&[
            (0, 1000, 1, "ProfilerStep#50", -1),
            (
                10,
                30,
                1,
                "enumerate(DataLoader)#_MultiProcessingDataLoaderIter.__next__",
                -1,
            ),
            (35, 40, 1, "aten::to", -1),
            (50, 200, 1, "DistributedDataParallel.forward", -1),
            (60, 70, 1, "aten::conv2d", 7),
            (210, 220, 1, "aten::nll_loss_forward", 9),
            (300, 310, 1, "Optimizer.zero_grad#SGD.zero_grad", -1),
            (
                320,
                330,
                2,
                "autograd::engine::evaluate_function: NllLossBackward0",
                9,
            ),
            (
                331,
                400,
                2,
                "autograd::engine::evaluate_function: ConvolutionBackward0",
                7,
            ),
            (500, 600, 1, "Optimizer.step#SGD.step", -1),
        ]);
        assert_eq!(
            kinds(&phases_of(&h)),
            vec![
                ("data", 10, 50),
                ("forward", 50, 300),
                ("zero_grad", 300, 310),
                ("forward", 310, 320),
                ("backward", 320, 400),
                ("optimizer", 500, 600),
            ]
        );
    }

    #[test]
    fn batch_made_in_the_loop_is_data_and_accumulation_repeats() {
        // No DataLoader: randn (no sequence number) then the model; two micro-batches.
        let h = ops(&[
            (0, 5, 1, "aten::randn", -1),
            (10, 20, 1, "aten::linear", 1),
            (
                30,
                40,
                1,
                "autograd::engine::evaluate_function: AddmmBackward0",
                1,
            ),
            (50, 55, 1, "aten::randn", -1),
            (60, 70, 1, "aten::linear", 2),
            (
                80,
                90,
                1,
                "autograd::engine::evaluate_function: AddmmBackward0",
                2,
            ),
            (100, 120, 1, "Optimizer.step#AdamW.step", -1),
            (130, 140, 1, "Optimizer.zero_grad#AdamW.zero_grad", -1),
        ]);
        assert_eq!(
            kinds(&phases_of(&h)),
            vec![
                ("data", 0, 10),
                ("forward", 10, 30),
                ("backward", 30, 40),
                ("data", 40, 60),
                ("forward", 60, 80),
                ("backward", 80, 90),
                ("optimizer", 100, 120),
                ("zero_grad", 130, 140),
            ]
        );
    }

    #[test]
    fn no_backward_no_phases() {
        let h = ops(&[
            (0, 5, 1, "aten::linear", 1),
            (10, 20, 1, "Optimizer.step#SGD.step", -1),
        ]);
        assert!(phases_of(&h).is_empty());
    }
}
