//! Python spans joined to the host ops by thread and time: which frames were open when each op
//! started ([`stacks_at_op_starts`]). PyTorch traces write the Python stack this way
//! (`python_function` spans), which gives an op its call stack; and the module spans a profile
//! records apart from the ops (`nn.Module: X` in `trace_view.json`, the `PYTORCH_API` rows of
//! the same name in the DB) give each op its [`HostOps::module`] stack ([`assign_modules`]),
//! which [`super::stacks`] carries to the rows as their modules. Kept apart from the call
//! stacks, so a flame graph never gets module frames at its root.

use std::cmp::Reverse;

use rustc_hash::FxHashMap;

use crate::model::{HostOps, MODULE_FRAME_PREFIX, NO_STACK, NameId};

/// A Python frame open on a thread from `start` to `end` (absolute ns): a module's forward
/// (`nn.Module: Block_0`), or any `python_function` span of a PyTorch trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameSpan {
    /// The thread, numbered as the ops' threads.
    pub thread: u64,
    /// Start, absolute ns.
    pub start: i64,
    /// End, absolute ns.
    pub end: i64,
    /// Its frame (`nn.Module: Block_0`, `train.py(12): step`), interned in the ops' `frames`.
    pub frame: NameId,
}

/// The most frames a stack keeps (its outermost: a module's path from the top stays true, and
/// deeper modules count in their ancestor at this depth): nesting deeper than this is no real
/// program's, and would cost memory by the square of the depth (a stack per op, as deep as
/// the nesting).
pub const MAX_STACK_FRAMES: usize = 256;

/// True when `name` is a module's forward as profilers write it (`nn.Module: Block_0`).
pub fn is_module_frame(name: &str) -> bool {
    name.starts_with(MODULE_FRAME_PREFIX)
}

/// Sets each op's [`HostOps::module`] to the module spans of its thread that enclose its start,
/// innermost first. An op inside a backward node the profiler linked to its forward op gets
/// none here: [`super::stacks`] gives it its forward op's modules through the link (on the
/// CPU the autograd engine runs on the caller's thread, where no module is open).
pub fn assign_modules(ops: &mut HostOps, mut spans: Vec<FrameSpan>) -> StacksAtOpStarts {
    if spans.is_empty() {
        return StacksAtOpStarts::default();
    }
    ops.module.resize(ops.len(), NO_STACK);
    let found = spans_at_op_starts(ops, &mut spans, |_| true, Inside::Recomputed);
    for &(op, id) in &found.stacks {
        ops.module[op] = id;
    }
    found
}

/// What [`stacks_at_op_starts`] found: (op, stack id) for each op in a span, and how many
/// stacks were cut to [`MAX_STACK_FRAMES`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StacksAtOpStarts {
    /// (op, stack id).
    pub stacks: Vec<(usize, u32)>,
    /// Stacks deeper than [`MAX_STACK_FRAMES`], cut to their outermost frames.
    pub cut: u64,
}

/// For each op that `wanted` takes and that does not run inside a linked backward node: the
/// frames of the `spans` of its thread that enclose its start, innermost first, interned in
/// `ops.stacks` — as (op, stack id); an op with no enclosing span is left out. Sorts `spans`.
/// A stack deeper than [`MAX_STACK_FRAMES`] keeps its outermost frames.
pub fn stacks_at_op_starts(
    ops: &mut HostOps,
    spans: &mut [FrameSpan],
    wanted: impl Fn(usize) -> bool,
) -> StacksAtOpStarts {
    spans_at_op_starts(ops, spans, wanted, Inside::Skipped)
}

/// What an op inside a linked backward node gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Inside {
    /// Nothing here: its forward op's, through the link ([`super::stacks`]).
    Skipped,
    /// The spans opened inside that backward node, when one is open at its start: a checkpointed
    /// module's forward run again in backward (recompute) allocates its activations there, and
    /// they are that module's, not the module whose backward started the recompute. None open:
    /// as [`Inside::Skipped`].
    Recomputed,
}

/// [`stacks_at_op_starts`], with what an op inside a linked backward node gets.
fn spans_at_op_starts(
    ops: &mut HostOps,
    spans: &mut [FrameSpan],
    wanted: impl Fn(usize) -> bool,
    inside: Inside,
) -> StacksAtOpStarts {
    let in_backward = backward_test(ops);
    // By thread, then start, the longer first (a span comes after the span it is nested in).
    spans.sort_unstable_by_key(|s| (s.thread, s.start, Reverse(s.end)));
    let mut order: Vec<usize> = (0..ops.len()).filter(|&i| wanted(i)).collect();
    order.sort_unstable_by_key(|&i| (ops.thread[i], ops.start_ns[i]));
    let mut ids: FxHashMap<Vec<NameId>, u32> = FxHashMap::default();
    let mut out = Vec::new();
    let mut cut = 0u64;
    let mut open: Vec<(i64, i64, NameId)> = Vec::new();
    // Ops of a recompute: (op, the frames opened inside its backward node, innermost first).
    let mut recomputed: Vec<(usize, Vec<NameId>)> = Vec::new();
    let (mut k, mut thread) = (0usize, None);
    for i in order {
        let (t, at) = (ops.thread[i], ops.start_ns[i]);
        // Inside a linked backward node: skipped, or only the spans opened inside it (placed
        // once every other op's modules are known).
        let (since, recompute) = match (in_backward(t, at), inside) {
            (None, _) => (i64::MIN, false),
            (Some(_), Inside::Skipped) => continue,
            (Some(node_start), Inside::Recomputed) => (node_start, true),
        };
        if thread != Some(t) {
            thread = Some(t);
            open.clear();
            k = spans.partition_point(|s| s.thread < t);
        }
        while let Some(s) = spans.get(k).filter(|s| s.thread == t && s.start <= at) {
            while open.last().is_some_and(|&(_, end, _)| end < s.start) {
                open.pop();
            }
            open.push((s.start, s.end, s.frame));
            k += 1;
        }
        while open.last().is_some_and(|&(_, end, _)| end < at) {
            open.pop();
        }
        // Spans ended before `at` but under one still open stay until it closes: skip them.
        let frames: Vec<NameId> = open
            .iter()
            .rev()
            .filter(|&&(start, end, _)| end >= at && start >= since)
            .map(|&(_, _, f)| f)
            .collect();
        if frames.is_empty() {
            continue;
        }
        if recompute {
            recomputed.push((i, frames));
            continue;
        }
        out.push((i, intern(ops, &mut ids, frames, &mut cut)));
    }
    // A recompute's modules sit where their first forward ran: the frames around its outermost
    // one there (`Block_0` recomputed in backward is `Stack_0/Block_0`, as in forward).
    if !recomputed.is_empty() {
        let mut around: FxHashMap<NameId, Vec<NameId>> = FxHashMap::default();
        for &(_, id) in &out {
            let stack = &ops.stacks[id as usize];
            for (k, &frame) in stack.iter().enumerate() {
                around
                    .entry(frame)
                    .or_insert_with(|| stack[k + 1..].to_vec());
            }
        }
        for (i, mut frames) in recomputed {
            if let Some(outer) = frames.last().and_then(|f| around.get(f)) {
                frames.extend(outer.iter().copied());
            }
            out.push((i, intern(ops, &mut ids, frames, &mut cut)));
        }
    }
    StacksAtOpStarts { stacks: out, cut }
}

/// The id of `frames` (innermost first) in `ops.stacks`, added once; a stack deeper than
/// [`MAX_STACK_FRAMES`] keeps its outermost frames and counts in `cut`.
fn intern(
    ops: &mut HostOps,
    ids: &mut FxHashMap<Vec<NameId>, u32>,
    mut frames: Vec<NameId>,
    cut: &mut u64,
) -> u32 {
    if frames.len() > MAX_STACK_FRAMES {
        // Innermost first: the outermost are at the end.
        frames.drain(..frames.len() - MAX_STACK_FRAMES);
        *cut += 1;
    }
    let next = ops.stacks.len() as u32;
    *ids.entry(frames).or_insert_with_key(|frames| {
        ops.stacks.push(frames.clone().into_boxed_slice());
        next
    })
}

/// A test of whether an op of a thread starting at a time runs inside a backward node the
/// profiler linked to its forward op (`ops.links`): the innermost such node's start.
pub fn backward_test(ops: &HostOps) -> impl Fn(u64, i64) -> Option<i64> + use<> {
    let mut backward: Vec<(u64, i64, i64)> = ops
        .links
        .iter()
        .filter_map(|&(b, _)| {
            let b = b as usize;
            Some((
                *ops.thread.get(b)?,
                *ops.start_ns.get(b)?,
                *ops.end_ns.get(b)?,
            ))
        })
        .collect();
    backward.sort_unstable();
    move |t: u64, at: i64| {
        let upto = backward.partition_point(|&(bt, bs, _)| (bt, bs) <= (t, at));
        backward[..upto]
            .iter()
            .rev()
            .take_while(|&&(bt, _, _)| bt == t)
            .find(|&&(_, _, be)| be >= at)
            .map(|&(_, bs, _)| bs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frames(ops: &HostOps, i: usize) -> Vec<&str> {
        match ops.stacks.get(ops.module[i] as usize) {
            Some(s) => s.iter().map(|&f| ops.frames.get(f)).collect(),
            None => Vec::new(),
        }
    }

    #[test]
    fn each_op_gets_the_modules_open_on_its_thread_when_it_started() {
        let mut ops = HostOps::default();
        let name = ops.names.intern("aten::mm");
        let gpt = ops.frames.intern("nn.Module: GPT_0");
        let block = ops.frames.intern("nn.Module: Block_0");
        // Thread 1: GPT_0 [0, 100] holds Block_0 [10, 50]; thread 2 runs no module.
        let spans = vec![
            FrameSpan {
                thread: 1,
                start: 10,
                end: 50,
                frame: block,
            },
            FrameSpan {
                thread: 1,
                start: 0,
                end: 100,
                frame: gpt,
            },
        ];
        ops.push(20, 30, 1, name, NO_STACK, -1); // in Block_0
        ops.push(60, 70, 1, name, NO_STACK, -1); // after Block_0, in GPT_0
        ops.push(20, 30, 2, name, NO_STACK, -1); // another thread
        ops.push(150, 160, 1, name, NO_STACK, -1); // after both
        ops.push(40, 45, 1, name, NO_STACK, -1); // a backward node linked to op 0
        ops.links.push((4, 0));
        assign_modules(&mut ops, spans);
        assert_eq!(frames(&ops, 0), ["nn.Module: Block_0", "nn.Module: GPT_0"]);
        assert_eq!(frames(&ops, 1), ["nn.Module: GPT_0"]);
        assert!(frames(&ops, 2).is_empty());
        assert!(frames(&ops, 3).is_empty());
        assert!(
            frames(&ops, 4).is_empty(),
            "takes its forward op's through the link"
        );
        assert!(is_module_frame("nn.Module: X_0") && !is_module_frame("main.py(3): f"));
    }
}
