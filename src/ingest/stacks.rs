//! Who allocated each block: reads the host's framework ops (the DB's `PYTORCH_API`, else the
//! `cpu_op` events of `trace_view.json`) and matches every operator_memory row to the op that
//! was running when the block was allocated, and through it to a Python call stack.
//!
//! **The op of a row** is the innermost op containing its allocation time (start and end
//! inclusive). Within a thread ops nest, and the innermost is the one entered last; across
//! threads (operator_memory does not say which thread allocated) the op entered last wins,
//! because it is what was running at that moment (the autograd thread's backward kernels
//! while the main thread waits in its step). Ties go to the shorter op.
//!
//! **The stack of an op** is its own `Call stack` when it has one; else, for a backward node
//! the profiler linked to its forward op (`fwdbwd` flows, the DB's shared `CONNECTION_IDS`),
//! the forward op's stack — the Python line that built that part of the graph; else the stack
//! of the op it is nested in; else, for an op with a sequence number (an autograd node of a
//! profile without links), the stack of the latest op with that number that started before
//! it, on another thread when there is one (the forward thread). Sequence numbers repeat (the
//! DataLoader's ops reuse them), so the first op with a number is not its forward op.

use std::cmp::Reverse;

use rustc_hash::FxHashMap;

use super::chunks::LoadControl;
use super::db_stacks::load_host_ops;
use super::error::LoadError;
use super::layout::RankTrace;
use crate::model::{
    CallStacks, DataSource, HostOps, NO_STACK, NULL, RankData, StackSource, is_schema_op,
};

/// Fills `data.stacks` when the profile recorded call stacks: the DB's `PYTORCH_API`, else the
/// host ops of the rank's `trace_view.json` extract (read once per rank, see [`RankTrace`]). A
/// file that cannot be read is a warning, never an error.
pub fn attach_stacks(
    data: &mut RankData,
    trace: &mut RankTrace,
    control: &LoadControl,
) -> Result<(), LoadError> {
    if data.operators.is_empty() {
        return Ok(());
    }
    let mut found: Option<(HostOps, StackSource)> = None;
    if let DataSource::Db { path, snapshot, .. } = &data.info.source {
        match load_host_ops(path, snapshot.as_ref()) {
            Ok(Some((ops, skipped))) => {
                if skipped > 0 {
                    data.report
                        .warn(crate::model::Message::ApiRowsWithoutTimes {
                            path: path.display().to_string(),
                            count: skipped,
                        });
                }
                if !ops.is_empty() {
                    found = Some((ops, StackSource::Db));
                }
            }
            Ok(None) => {}
            Err(e) => data.report.warn(crate::model::Message::ApiUnreadable {
                path: path.display().to_string(),
                cause: e.into(),
            }),
        }
    }
    let unreadable = |cause| crate::model::Message::StacksUnreadable { cause };
    if found.is_none()
        && let Some(t) = trace.extract(data, control, unreadable)?
        && !t.host.is_empty()
    {
        found = Some((std::mem::take(&mut t.host), StackSource::TraceView));
    }
    if let Some((ops, source)) = found {
        // Kept without any stack too (recorded without with_stack): the per-operator
        // aggregate still has its calls.
        data.stacks = Some(attribute(ops, &data.operators.alloc_time, source));
    }
    Ok(())
}

/// Matches each allocation time (absolute ns, [`NULL`] when missing) to the op running then,
/// and each op to its stack (see the module doc).
pub fn attribute(ops: HostOps, alloc_time: &[i64], source: StackSource) -> CallStacks {
    attribute_on_threads(ops, alloc_time, &[], source)
}

/// [`attribute`] for allocations whose thread is known (`row_thread`, numbered as the ops'
/// threads: a PyTorch trace's `[memory]` events): each takes the innermost op running on its
/// own thread, never another thread's. An empty `row_thread` is [`attribute`].
pub fn attribute_on_threads(
    ops: HostOps,
    alloc_time: &[i64],
    row_thread: &[u64],
    source: StackSource,
) -> CallStacks {
    NestedOps::of(ops).attribute(alloc_time, row_thread, source)
}

/// Host ops with what they say alone, before any allocation is matched to them: how they
/// nest, each op's stack and module, the step's phases. A reader makes it while it builds the
/// rows it then [attributes](NestedOps::attribute) (on a 1 GB msMemScope dump, 60 ms of the
/// attribution's 100).
pub struct NestedOps {
    ops: HostOps,
    /// The ops by thread, start, longest first ([`nesting_order`]).
    order: Vec<u32>,
    /// The op each op is nested in ([`parents`]).
    parent: Vec<u32>,
    /// Each op's effective stack and module (empty: no modules).
    stack_of_op: Vec<u32>,
    module_of_op: Vec<u32>,
    phases: crate::model::Phases,
}

impl NestedOps {
    /// The nesting, stacks, modules and phases of `ops`.
    pub fn of(ops: HostOps) -> NestedOps {
        let order = nesting_order(&ops);
        let parent = parents(&ops, &order);

        // Each op's stack from its own or the ops it runs in; then the backward nodes' from
        // their forward ops; then everything again, so what a backward node runs inherits its
        // stack.
        let stack_of_op = stacks_of_ops(&ops, &ops.stack, &order, &parent);
        // The modules the same way: an op's own, its forward op's, its parent's.
        let module_of_op = if ops.module.iter().any(|&m| m != NO_STACK) {
            let mut modules = ops.module.clone();
            // An op that ran outside every module with a call stack of its own (the loss, the
            // optimizer) stays outside: a sequence number shared with an earlier op is no link.
            let mut forward = forward_stacks(
                &ops,
                &modules,
                &effective_stacks(&modules, &order, &parent, &FxHashMap::default()),
            );
            forward.retain(|&op, f| f.linked || ops.stack.get(op as usize) == Some(&NO_STACK));
            modules = effective_stacks(&modules, &order, &parent, &forward);
            modules
        } else {
            Vec::new()
        };
        let phases = super::phases::phases_of(&ops);
        NestedOps {
            ops,
            order,
            parent,
            stack_of_op,
            module_of_op,
            phases,
        }
    }

    /// Each allocation time (absolute ns, [`NULL`] when missing) matched to the op running
    /// then, on its own thread when `row_thread` is not empty (see [`attribute_on_threads`]).
    pub fn attribute(
        self,
        alloc_time: &[i64],
        row_thread: &[u64],
        source: StackSource,
    ) -> CallStacks {
        let (ops, stack_of_op, module_of_op) = (self.ops, self.stack_of_op, self.module_of_op);
        let n = ops.len();
        let row_op_index = innermost_ops(&ops, &self.order, alloc_time, row_thread);
        let row_call_end = outermost_schema_ends(&ops, &self.order, &self.parent, &row_op_index);
        let mut row_op = vec![NO_STACK; alloc_time.len()];
        let mut row_stack = vec![NO_STACK; alloc_time.len()];
        let mut row_module = if module_of_op.is_empty() {
            Vec::new()
        } else {
            vec![NO_STACK; alloc_time.len()]
        };
        let (mut unattributed, mut without_stack) = (0, 0);
        for (r, &op) in row_op_index.iter().enumerate() {
            if op == NO_STACK {
                unattributed += 1;
                continue;
            }
            row_op[r] = ops.name[op as usize];
            row_stack[r] = stack_of_op[op as usize];
            if let (Some(slot), Some(&m)) = (row_module.get_mut(r), module_of_op.get(op as usize)) {
                *slot = m;
            }
            if row_stack[r] == NO_STACK {
                without_stack += 1;
            }
        }
        let mut op_calls = vec![0u64; ops.names.len()];
        for &name in &ops.name {
            if let Some(c) = op_calls.get_mut(name as usize) {
                *c += 1;
            }
        }
        CallStacks {
            source,
            host_ops: n,
            frames: ops.frames,
            stacks: ops.stacks,
            op_names: ops.names,
            op_calls,
            row_op,
            row_stack,
            row_module,
            unattributed,
            without_stack,
            phases: self.phases,
            row_call_end,
            stacks_cut: ops.stacks_cut,
        }
    }
}

/// Per row: the end of the outermost schema op ([`is_schema_op`]) among the op it was
/// allocated in and the ops that one is nested in, or [`NULL`]. Found once per op, in
/// `order` (an op after the op it is nested in), from its parent's: walking up from each row
/// was a walk as deep as the nesting (hundreds of ops in a dump whose spans nest deep, 0.4 s).
fn outermost_schema_ends(ops: &HostOps, order: &[u32], parent: &[u32], row_op: &[u32]) -> Vec<i64> {
    let schema: Vec<bool> = (0..ops.names.len() as u32)
        .map(|id| is_schema_op(ops.names.get(id)))
        .collect();
    let is_schema = |op: usize| schema.get(ops.name[op] as usize).copied().unwrap_or(false);
    let mut outermost = vec![NULL; ops.len()];
    for &op in order {
        let op = op as usize;
        let above = match parent[op] {
            NO_STACK => NULL,
            p => outermost[p as usize],
        };
        outermost[op] = if above != NULL {
            above
        } else if is_schema(op) {
            ops.end_ns[op]
        } else {
            NULL
        };
    }
    row_op
        .iter()
        .map(|&op| outermost.get(op as usize).copied().unwrap_or(NULL))
        .collect()
}

/// The ops per thread, by start, longer first: an op comes after the op it is nested in.
fn nesting_order(ops: &HostOps) -> Vec<u32> {
    let key = |i: u32| {
        let i = i as usize;
        (ops.thread[i], ops.start_ns[i], Reverse(ops.end_ns[i]), i)
    };
    let n = ops.len() as u32;
    // Ops come about in this order (a dump's in the order they end: an op that others ran in
    // comes after them). The ops in order are kept as they come and the few others (those
    // that ran others) sorted and merged in: a sort of a million ops took 60 ms, a tenth of
    // a big msMemScope dump's work after its curves.
    let mut kept: Vec<u32> = Vec::with_capacity(n as usize);
    let mut strays: Vec<u32> = Vec::new();
    for i in 0..n {
        match kept.last() {
            Some(&last) if key(last) > key(i) => strays.push(i),
            _ => kept.push(i),
        }
        if strays.len() > n as usize / 8 {
            // Far from that order: all sorted, on every core (by their keys looked up, not
            // copied beside them: 32 bytes an op more at the peak of a trace of millions).
            let mut order: Vec<u32> = (0..n).collect();
            rayon::slice::ParallelSliceMut::par_sort_unstable_by_key(&mut order[..], |&i| key(i));
            return order;
        }
    }
    if strays.is_empty() {
        return kept;
    }
    strays.sort_unstable_by_key(|&i| key(i));
    let mut order = Vec::with_capacity(n as usize);
    let (mut a, mut b) = (kept.into_iter().peekable(), strays.into_iter().peekable());
    while let (Some(&x), Some(&y)) = (a.peek(), b.peek()) {
        if key(x) <= key(y) {
            order.push(x);
            a.next();
        } else {
            order.push(y);
            b.next();
        }
    }
    order.extend(a);
    order.extend(b);
    order
}

/// The op each op is nested in ([`NO_STACK`] for none), walking each thread's ops in `order`.
fn parents(ops: &HostOps, order: &[u32]) -> Vec<u32> {
    let mut parent = vec![NO_STACK; ops.len()];
    let mut open: Vec<u32> = Vec::new();
    let mut thread = None;
    for &i in order {
        let iu = i as usize;
        if thread != Some(ops.thread[iu]) {
            open.clear();
            thread = Some(ops.thread[iu]);
        }
        while open
            .last()
            .is_some_and(|&top| ops.end_ns[top as usize] < ops.start_ns[iu])
        {
            open.pop();
        }
        parent[iu] = open.last().copied().unwrap_or(NO_STACK);
        open.push(i);
    }
    parent
}

/// Each op's stack in `own` (its call stack, or its module stack): its own, else from the ops
/// it runs in; then the backward nodes' from their forward ops; then everything again, so what
/// a backward node runs inherits from it.
fn stacks_of_ops(ops: &HostOps, own: &[u32], order: &[u32], parent: &[u32]) -> Vec<u32> {
    // Every stack comes from an op's own: none of those, none at all (an msMemScope dump's
    // ops have none; the walks took a tenth of the attribution of a million ops).
    if own.iter().all(|&s| s == NO_STACK) {
        return vec![NO_STACK; parent.len()];
    }
    let inherited = effective_stacks(own, order, parent, &FxHashMap::default());
    let forward = forward_stacks(ops, own, &inherited);
    effective_stacks(own, order, parent, &forward)
}

/// Each op's stack in `own`: its own, else its forward op's (`by_seq`), else its parent's.
fn effective_stacks(
    own: &[u32],
    order: &[u32],
    parent: &[u32],
    forward: &FxHashMap<u32, Forward>,
) -> Vec<u32> {
    let mut eff = vec![NO_STACK; parent.len()];
    for &i in order {
        let op = i as usize;
        let linked = forward.get(&i).filter(|f| f.linked).map(|f| f.stack);
        let by_seq = forward.get(&i).filter(|f| !f.linked).map(|f| f.stack);
        let from_parent = (parent[op] != NO_STACK)
            .then(|| eff[parent[op] as usize])
            .filter(|&s| s != NO_STACK);
        let mine = own.get(op).copied().unwrap_or(NO_STACK);
        eff[op] = if mine != NO_STACK {
            mine
        } else {
            linked.or(from_parent).or(by_seq).unwrap_or(NO_STACK)
        };
    }
    eff
}

/// The stack a backward node takes from its forward op.
#[derive(Debug, Clone, Copy)]
struct Forward {
    /// The forward op's stack.
    stack: u32,
    /// Found through a link the profiler wrote (else by the sequence number).
    linked: bool,
}

/// For each op without a stack of its own in `own`: its forward op's (`inherited`: own or from the
/// ops it runs in), through the profiler's link, else the latest op with its sequence number
/// that started before it on another thread (else on its own) and has a stack.
fn forward_stacks(ops: &HostOps, own: &[u32], inherited: &[u32]) -> FxHashMap<u32, Forward> {
    let mut out: FxHashMap<u32, Forward> = FxHashMap::default();
    for &(bwd, fwd) in &ops.links {
        let s = inherited.get(fwd as usize).copied().unwrap_or(NO_STACK);
        if s != NO_STACK && own.get(bwd as usize) == Some(&NO_STACK) {
            out.insert(
                bwd,
                Forward {
                    stack: s,
                    linked: true,
                },
            );
        }
    }
    // By sequence number: the ops with each number, by start.
    let mut by_seq: FxHashMap<i64, Vec<u32>> = FxHashMap::default();
    for (i, (&seq, &stack)) in ops.seq.iter().zip(inherited).enumerate() {
        if seq >= 0 && stack != NO_STACK {
            by_seq.entry(seq).or_default().push(i as u32);
        }
    }
    for list in by_seq.values_mut() {
        list.sort_unstable_by_key(|&i| (ops.start_ns[i as usize], i));
    }
    for i in 0..ops.len() {
        let has_own = own.get(i).is_some_and(|&s| s != NO_STACK);
        if ops.seq[i] < 0 || has_own || out.contains_key(&(i as u32)) {
            continue;
        }
        let Some(list) = by_seq.get(&ops.seq[i]) else {
            continue;
        };
        let before = &list[..list.partition_point(|&j| ops.start_ns[j as usize] < ops.start_ns[i])];
        let pick = before
            .iter()
            .rev()
            .find(|&&j| ops.thread[j as usize] != ops.thread[i])
            .or(before.last()); // `before` started strictly earlier: never the op itself
        if let Some(&j) = pick {
            out.insert(
                i as u32,
                Forward {
                    stack: inherited[j as usize],
                    linked: false,
                },
            );
        }
    }
    out
}

/// For each allocation time, the op running then (see the module doc), or [`NO_STACK`]; with
/// `row_thread`, only an op of the row's own thread.
fn innermost_ops(ops: &HostOps, order: &[u32], alloc_time: &[i64], row_thread: &[u64]) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..alloc_time.len() as u32)
        .filter(|&r| alloc_time[r as usize] != NULL)
        .collect();
    rows.sort_unstable_by_key(|&r| alloc_time[r as usize]);
    let mut best = vec![NO_STACK; alloc_time.len()];
    let mut open: Vec<u32> = Vec::new();
    let mut a = 0;
    while a < order.len() {
        let thread = ops.thread[order[a] as usize];
        let b = a + order[a..]
            .iter()
            .position(|&i| ops.thread[i as usize] != thread)
            .unwrap_or(order.len() - a);
        let seg = &order[a..b];
        open.clear();
        let mut k = 0;
        // Only the allocations within this thread's span can fall in its ops: each thread
        // walks its own stretch of the time-sorted rows, not all of them.
        let first = ops.start_ns[seg[0] as usize];
        let last = seg
            .iter()
            .map(|&i| ops.end_ns[i as usize])
            .max()
            .unwrap_or(first);
        let lo = rows.partition_point(|&r| alloc_time[r as usize] < first);
        let hi = rows.partition_point(|&r| alloc_time[r as usize] <= last);
        for &r in &rows[lo..hi] {
            if row_thread.get(r as usize).is_some_and(|&own| own != thread) {
                continue;
            }
            let t = alloc_time[r as usize];
            while k < seg.len() && ops.start_ns[seg[k] as usize] <= t {
                let op = seg[k] as usize;
                while open
                    .last()
                    .is_some_and(|&top| ops.end_ns[top as usize] < ops.start_ns[op])
                {
                    open.pop();
                }
                open.push(seg[k]);
                k += 1;
            }
            while open.last().is_some_and(|&top| ops.end_ns[top as usize] < t) {
                open.pop();
            }
            let Some(&top) = open.last() else {
                continue;
            };
            let cur = &mut best[r as usize];
            let key = |o: u32| (ops.start_ns[o as usize], Reverse(ops.end_ns[o as usize]));
            if *cur == NO_STACK || key(top) > key(*cur) {
                *cur = top;
            }
        }
        a = b;
    }
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An op: (start, end, thread, name, own stack frames, seq).
    type TestOp<'a> = (i64, i64, u64, &'a str, &'a [&'a str], i64);

    fn host(list: &[TestOp<'_>]) -> HostOps {
        let mut ops = HostOps::default();
        for &(s, e, th, name, frames, seq) in list {
            let stack = if frames.is_empty() {
                NO_STACK
            } else {
                let f: Box<[u32]> = frames.iter().map(|f| ops.frames.intern(f)).collect();
                ops.stacks.push(f);
                ops.stacks.len() as u32 - 1
            };
            let n = ops.names.intern(name);
            ops.push(s, e, th, n, stack, seq);
        }
        ops
    }

    proptest::proptest! {
        /// Each row's outermost schema op's end, found once per op, is what walking up from
        /// the row's op through every op it is nested in finds.
        #[test]
        fn outermost_schema_ends_are_those_found_walking_up(
            list in proptest::collection::vec((0i64..60, 0i64..40, 0u64..2, proptest::bool::ANY), 0..40),
            rows in proptest::collection::vec(0usize..50, 0..30),
        ) {
            let named: Vec<TestOp<'_>> = list
                .iter()
                .map(|&(s, len, th, schema)| (s, s + len, th, if schema { "aten::mm" } else { "Step" }, &[][..], -1))
                .collect();
            let ops = host(&named);
            let order = nesting_order(&ops);
            let parent = parents(&ops, &order);
            // Rows in ops, and some in none.
            let row_op: Vec<u32> = rows
                .iter()
                .map(|&r| if r < ops.len() { r as u32 } else { NO_STACK })
                .collect();
            let walked: Vec<i64> = row_op
                .iter()
                .map(|&op| {
                    let (mut end, mut at) = (NULL, op);
                    while at != NO_STACK {
                        if is_schema_op(ops.names.get(ops.name[at as usize])) {
                            end = ops.end_ns[at as usize];
                        }
                        at = parent[at as usize];
                    }
                    end
                })
                .collect();
            proptest::prop_assert_eq!(outermost_schema_ends(&ops, &order, &parent, &row_op), walked);
        }

        /// The nesting order is the ops sorted by thread, start, longer first and index
        /// (compared with a plain sort), whether they came in that order, in it but for a few
        /// moved, or not.
        #[test]
        fn nesting_order_is_the_ops_by_thread_start_longer_first(
            list in proptest::collection::vec((0i64..30, 0i64..10, 0u64..2), 0..60),
            in_order in proptest::bool::ANY,
            moved in proptest::collection::vec((0usize..60, 0usize..60), 0..4),
        ) {
            let mut list = list;
            if in_order {
                list.sort_by_key(|&(s, len, th)| (th, s, Reverse(s + len)));
                for (from, to) in moved {
                    if from < list.len() {
                        let op = list.remove(from);
                        list.insert(to.min(list.len()), op);
                    }
                }
            }
            let named: Vec<TestOp<'_>> = list
                .iter()
                .map(|&(s, len, th)| (s, s + len, th, "aten::mm", &[][..], -1))
                .collect();
            let ops = host(&named);
            let mut want: Vec<u32> = (0..ops.len() as u32).collect();
            want.sort_by_key(|&i| {
                let i = i as usize;
                (ops.thread[i], ops.start_ns[i], Reverse(ops.end_ns[i]), i)
            });
            proptest::prop_assert_eq!(nesting_order(&ops), want);
        }
    }

    fn names(c: &CallStacks) -> Vec<Option<&str>> {
        (0..c.row_op.len()).map(|r| c.row_op_name(r)).collect()
    }

    #[test]
    fn innermost_op_and_its_stack() {
        let ops = host(&[
            (0, 100, 1, "ProfilerStep#1", &["train.py(10): loop"], -1),
            (10, 40, 1, "aten::conv2d", &["model.py(5): forward"], 7),
            (12, 30, 1, "aten::empty", &[], -1),
            // The autograd thread: a backward node linked to conv2d by its sequence number.
            (50, 90, 2, "ConvolutionBackward0", &[], 7),
            (55, 60, 2, "aten::zeros", &[], -1),
        ]);
        let t = [11, 12, 30, 31, 56, 95, 200, NULL];
        let c = attribute(ops, &t, StackSource::TraceView);
        assert_eq!(
            names(&c),
            vec![
                Some("aten::conv2d"),
                Some("aten::empty"),
                Some("aten::empty"),
                Some("aten::conv2d"),
                Some("aten::zeros"),
                Some("ProfilerStep#1"),
                None,
                None
            ]
        );
        let lines: Vec<Option<&str>> = (0..t.len()).map(|r| c.row_source_line(r)).collect();
        assert_eq!(
            lines,
            vec![
                Some("model.py(5): forward"),
                Some("model.py(5): forward"),
                Some("model.py(5): forward"),
                Some("model.py(5): forward"),
                Some("model.py(5): forward"), // via the forward op of its backward node
                Some("train.py(10): loop"),
                None,
                None
            ]
        );
        assert_eq!((c.unattributed, c.without_stack), (2, 0));
        assert_eq!(
            c.op_calls[c.op_names.lookup("aten::empty").unwrap() as usize],
            1
        );
    }

    #[test]
    fn the_op_entered_last_wins_across_threads_and_ends_are_inclusive() {
        let ops = host(&[
            (0, 100, 1, "outer", &["a.py(1): f"], -1),
            (20, 30, 2, "other_thread", &[], -1),
            (30, 30, 1, "instant", &["b.py(2): g"], -1),
        ]);
        let c = attribute(ops, &[25, 30, 31], StackSource::Db);
        assert_eq!(
            names(&c),
            vec![Some("other_thread"), Some("instant"), Some("outer")]
        );
        assert_eq!(
            c.without_stack, 1,
            "other_thread has no stack and no parent"
        );
    }
}
