//! The ops' spans (an `OP_LAUNCH` start matched to its end on its thread) and a process's
//! host ops.

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::block_rows::cached;
use super::dump::Dump;
use super::events::{Event, OpEvent};
use super::time_order::Events;
use crate::ingest::huge_pages;
use crate::model::{HostOps, NO_STACK, NameId};

/// The host ops of `spans` (a process's), their threads numbered as `Dump::threads`.
pub(super) fn host_ops(dump: &Dump, spans: Vec<OpSpan>) -> HostOps {
    let mut host = HostOps::default();
    host.reserve(spans.len());
    huge_pages::advise(&host.start_ns);
    huge_pages::advise(&host.end_ns);
    huge_pages::advise(&host.seq);
    huge_pages::advise(&host.thread);
    huge_pages::advise(&host.name);
    huge_pages::advise(&host.stack);
    huge_pages::advise(&host.module);
    // Each op's name interned once (by its text's id), not at each of its spans.
    let mut op_names: Vec<Option<NameId>> = vec![None; dump.texts.len()];
    for span in spans {
        let name = cached(&mut op_names, span.what, || {
            host.names.intern(dump.texts.get(span.what))
        });
        host.push(
            span.start,
            span.end,
            u64::from(span.thread),
            name,
            NO_STACK,
            -1,
        );
    }
    host
}

/// The spans of process `pid`'s ops, and its OOM records and MSTX ranges.
pub(super) struct OpSpans {
    /// In the order they end.
    pub(super) spans: Vec<OpSpan>,
    /// In time order.
    pub(super) rare: Vec<Event>,
}

/// An op's span, in 24 bytes (a dump holds a million).
#[derive(Debug, Clone, Copy)]
pub(super) struct OpSpan {
    pub(super) start: i64,
    pub(super) end: i64,
    /// (Process, thread): an index into `Dump::threads`.
    pub(super) thread: u32,
    /// Its name (an id into `Dump::texts`).
    pub(super) what: u32,
}

/// The op spans of every process, per thread, start and end matched last-in first-out by
/// name. The open starts are kept per thread and name: an end finds its start at once (a
/// search of the thread's open starts for each end was quadratic on a dump whose ends match
/// none of them). A thread is one process's, so a process's spans are those of a walk of its
/// ops alone, in the same order.
pub(super) fn all_op_spans(ops: &Events<OpEvent>) -> Vec<OpSpan> {
    // (thread index, name) → the times of its open starts.
    let mut open_ops: FxHashMap<(u32, u32), Vec<i64>> = FxHashMap::default();
    let mut spans = Vec::new();
    for e in ops.iter() {
        if e.start {
            open_ops.entry((e.thread, e.what)).or_default().push(e.ts);
        } else if let Some(start) = open_ops.get_mut(&(e.thread, e.what)).and_then(Vec::pop) {
            spans.push(OpSpan {
                start,
                end: e.ts.max(start),
                thread: e.thread,
                what: e.what,
            });
        }
    }
    spans
}

/// Process `pid`'s op spans (of `all`, the dump's: kept in place when owned), and its OOM
/// records and MSTX ranges.
pub(super) fn op_spans(dump: &Dump, all: Cow<'_, [OpSpan]>, pid: i64) -> OpSpans {
    let of_pid = |t: u32| dump.pid(t) == pid;
    let spans = match all {
        Cow::Owned(mut spans) => {
            spans.retain(|s| of_pid(s.thread));
            spans
        }
        Cow::Borrowed(all) => (all.iter()).filter(|s| of_pid(s.thread)).copied().collect(),
    };
    let rare = dump.rare.iter().filter(|e| e.pid == pid).cloned().collect();
    OpSpans { spans, rare }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::msmemscope::events::NO_DEVICE;
    use proptest::prelude::*;

    proptest! {
        /// Op spans found per thread and name are those of a search of the thread's open
        /// starts for the last of the same name (the walk they replaced), in the same order.
        #[test]
        fn op_spans_match_the_last_open_start_of_their_name(
            ops in proptest::collection::vec((0u32..3, 0u32..3, any::<bool>()), 0..120),
        ) {
            // Threads 0 and 1 are process 1's, thread 2 process 2's.
            let events: Vec<OpEvent> = ops
                .iter()
                .enumerate()
                .map(|(i, &(thread, what, start))| OpEvent {
                    ts: i as i64,
                    order: i as u32,
                    what,
                    thread,
                    device: NO_DEVICE,
                    start,
                })
                .collect();
            let dump = Dump {
                ops: Events::from_list(events.clone()),
                threads: vec![(1, 10), (1, 11), (2, 20)],
                ..Dump::default()
            };
            let all = all_op_spans(&dump.ops);
            let got = op_spans(&dump, Cow::Borrowed(&all), 1);
            let owned = op_spans(&dump, Cow::Owned(all_op_spans(&dump.ops)), 1);
            prop_assert_eq!(format!("{:?}", owned.spans), format!("{:?}", got.spans));
            // The walk it replaced: each thread's open starts in one list, searched from its end.
            let mut open: FxHashMap<u32, Vec<(u32, i64)>> = FxHashMap::default();
            let mut spans = Vec::new();
            for e in events.iter().filter(|e| e.thread < 2) {
                let stack = open.entry(e.thread).or_default();
                if e.start {
                    stack.push((e.what, e.ts));
                } else if let Some(k) = stack.iter().rposition(|&(w, _)| w == e.what) {
                    let (what, start) = stack.remove(k);
                    spans.push((start, e.ts, dump.threads[e.thread as usize], what));
                }
            }
            let got_spans: Vec<_> = got.spans.iter().map(|s| (s.start, s.end, dump.thread(s.thread), s.what)).collect();
            prop_assert_eq!(got_spans, spans);
        }
    }
}
