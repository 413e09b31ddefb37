//! "What is alive at time t?": an interval index over operator_memory answering in
//! O(log n + k), and the breakdown by operator that explains a peak.

use crate::model::{NULL, NameId, RankData};

/// Allocation lifetimes sorted by start, with an implicit balanced tree of max-ends over them.
#[derive(Debug, Clone, Default)]
pub struct LiveIndex {
    starts: Vec<i64>,
    ends: Vec<i64>,
    /// Max end over the implicit subtree rooted at each index (see `build`).
    max_end: Vec<i64>,
    rows: Vec<u32>,
}

impl LiveIndex {
    /// Indexes every operator_memory row. A missing allocation time is −∞ (allocated before the
    /// capture), a missing release +∞ (never released within it).
    pub fn new(data: &RankData) -> LiveIndex {
        let ops = &data.operators;
        // A row of size 0 or less is a free of memory allocated before profiling (a
        // release-only row), not a block: it is never counted alive (that memory is the part
        // of Operator Allocated no live block explains).
        let mut items: Vec<(i64, i64, u32)> = (0..ops.len())
            .filter(|&i| ops.size[i] > 0)
            .map(|i| {
                let s = if ops.alloc_time[i] == NULL {
                    i64::MIN + 1
                } else {
                    ops.alloc_time[i]
                };
                let e = if ops.release_time[i] == NULL {
                    i64::MAX
                } else {
                    ops.release_time[i]
                };
                (s, e, i as u32)
            })
            .collect();
        items.sort_unstable();
        let mut me = LiveIndex {
            starts: items.iter().map(|x| x.0).collect(),
            ends: items.iter().map(|x| x.1).collect(),
            max_end: vec![i64::MIN; items.len()],
            rows: items.iter().map(|x| x.2).collect(),
        };
        me.build(0, me.starts.len());
        me
    }

    fn build(&mut self, lo: usize, hi: usize) -> i64 {
        if lo >= hi {
            return i64::MIN;
        }
        let mid = lo + (hi - lo) / 2;
        let m = self.ends[mid]
            .max(self.build(lo, mid))
            .max(self.build(mid + 1, hi));
        self.max_end[mid] = m;
        m
    }

    /// operator_memory blocks (size > 0) alive at absolute time `t`: allocated at or before `t`
    /// and released after `t` (or never), in no particular order.
    pub fn alive_at(&self, t: i64) -> Vec<u32> {
        let mut out = Vec::new();
        self.query(0, self.starts.len(), t, &mut out);
        out
    }

    fn query(&self, lo: usize, hi: usize, t: i64, out: &mut Vec<u32>) {
        if lo >= hi {
            return;
        }
        let mid = lo + (hi - lo) / 2;
        if self.max_end[mid] <= t {
            return; // everything below ended by t
        }
        self.query(lo, mid, t, out);
        if self.starts[mid] <= t {
            if self.ends[mid] > t {
                out.push(self.rows[mid]);
            }
            self.query(mid + 1, hi, t, out);
        }
    }
}

/// Allocations alive at one time and their totals per operator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveAt {
    /// The time asked, ns from the rank origin.
    pub time: i64,
    /// Alive rows, largest size first (file order on ties).
    pub rows: Vec<u32>,
    /// Sum of their sizes, bytes.
    pub total: i64,
    /// Per operator name: (name id, bytes, blocks), largest first (name order on ties).
    pub by_name: Vec<(NameId, i64, usize)>,
}

/// What is alive at `t` (ns from the rank origin).
pub fn live_at(data: &RankData, index: &LiveIndex, t: i64) -> LiveAt {
    let ops = &data.operators;
    let mut rows = index.alive_at(data.time_origin_ns.saturating_add(t));
    rows.sort_unstable_by(|&a, &b| {
        ops.size[b as usize]
            .cmp(&ops.size[a as usize])
            .then(a.cmp(&b))
    });
    let mut per_name: Vec<(i64, usize)> = vec![(0, 0); data.strings.len()];
    let mut total = 0i64;
    for &r in &rows {
        let size = ops.size[r as usize];
        total = total.saturating_add(size);
        let slot = &mut per_name[ops.name[r as usize] as usize];
        slot.0 = slot.0.saturating_add(size);
        slot.1 += 1;
    }
    let mut by_name: Vec<(NameId, i64, usize)> = per_name
        .into_iter()
        .enumerate()
        .filter(|(_, (_, n))| *n > 0)
        .map(|(id, (b, n))| (id as NameId, b, n))
        .collect();
    by_name.sort_by(|a, b| {
        b.1.cmp(&a.1)
            .then_with(|| data.strings.get(a.0).cmp(data.strings.get(b.0)))
    });
    LiveAt {
        time: t,
        rows,
        total,
        by_name,
    }
}
