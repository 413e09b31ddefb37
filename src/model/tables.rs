//! Columnar tables, one per input file kind. Struct of Vecs, names interned, [`NULL`] for missing.

use super::{Component, LazyColumn, NULL, NameId};

/// memory_record: allocator samples, sorted by time (stable: file order on ties) after loading.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MemoryRecords {
    /// [`Component`] code of each row.
    pub component: Vec<u8>,
    /// Absolute timestamp, ns.
    pub time_ns: Vec<i64>,
    /// Total Allocated, bytes, or NULL.
    pub allocated: Vec<i64>,
    /// Total Reserved, bytes, or NULL.
    pub reserved: Vec<i64>,
    /// Total Active, bytes, or NULL (not stored while every cell is NULL).
    pub active: LazyColumn<i64>,
    /// Stream Ptr, interned; 0 = none (not stored while every cell is 0).
    pub stream: LazyColumn<NameId>,
}

impl MemoryRecords {
    /// Empty, with room for `n` rows.
    pub fn with_capacity(n: usize) -> Self {
        let mut me = Self::default();
        me.reserve(n);
        me
    }

    /// Makes room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        self.component.reserve(n);
        self.time_ns.reserve(n);
        self.allocated.reserve(n);
        self.reserved.reserve(n);
        self.active.reserve(n);
        self.stream.reserve(n);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Appends one row.
    #[inline]
    pub fn push(&mut self, c: Component, t: i64, alloc: i64, resv: i64, act: i64, stream: NameId) {
        self.component.push(c as u8);
        self.time_ns.push(t);
        self.allocated.push(alloc);
        self.reserved.push(resv);
        self.active.push(act);
        self.stream.push(stream);
    }

    /// Appends all rows of `other`, mapping its stream ids through `remap`.
    pub fn append(&mut self, other: &mut MemoryRecords, remap: &[NameId]) {
        self.component.append(&mut other.component);
        self.time_ns.append(&mut other.time_ns);
        self.allocated.append(&mut other.allocated);
        self.reserved.append(&mut other.reserved);
        self.active.append(&mut other.active);
        self.stream
            .append_mapped(&mut other.stream, |s| remap_id(remap, s));
    }

    /// Sorts rows by time, keeping file order among equal times.
    pub fn sort_by_time(&mut self) {
        if let Some(merge) = TwoRunMerge::of(&self.time_ns) {
            // torch_npu's layout (APP rows first, then the rest in time order): each column is
            // merged in place in one sequential pass, with a copy of the shorter run only.
            use rayon::prelude::*;
            let Self {
                component,
                time_ns,
                allocated,
                reserved,
                active,
                stream,
            } = self;
            let mut wide: Vec<&mut Vec<i64>> = [time_ns, allocated, reserved]
                .into_iter()
                .chain(active.stored_mut())
                .collect();
            wide.par_iter_mut().for_each(|c| merge.apply(c));
            rayon::join(
                || merge.apply(component),
                || {
                    if let Some(s) = stream.stored_mut() {
                        merge.apply(s)
                    }
                },
            );
            return;
        }
        if let Some(perm) = sort_permutation(&self.time_ns) {
            self.component = permute(&self.component, &perm);
            // A column not stored is all one value: its order does not change.
            if let Some(stream) = self.stream.stored_mut() {
                *stream = permute(stream, &perm);
            }
            // The i64 columns share one scratch buffer: fresh memory is touched once.
            let mut scratch = Vec::new();
            let wide = [&mut self.time_ns, &mut self.allocated, &mut self.reserved];
            for col in wide.into_iter().chain(self.active.stored_mut()) {
                permute_into(col, &perm, &mut scratch);
                std::mem::swap(col, &mut scratch);
            }
        }
    }

    /// Bytes its cells take.
    pub fn heap_bytes(&self) -> usize {
        self.len() * (1 + 3 * 8) + self.active.heap_bytes() + self.stream.heap_bytes()
    }

    /// The component of row `i`.
    pub fn component_at(&self, i: usize) -> Component {
        Component::from_code(self.component[i])
    }
}

/// operator_memory: one row per allocation, in file order (the table's default order).
#[derive(Debug, Clone, Default)]
pub struct OperatorMemory {
    /// Operator name, interned (0 = empty/unknown).
    pub name: Vec<NameId>,
    /// Block size, bytes (negative for a release whose allocation predates the capture).
    pub size: Vec<i64>,
    /// Allocation time, absolute ns, or NULL.
    pub alloc_time: Vec<i64>,
    /// Release time, absolute ns, or NULL (never released within the capture).
    pub release_time: Vec<i64>,
    /// Active (block) release time, absolute ns, or NULL (not stored while every cell is NULL).
    pub active_release_time: LazyColumn<i64>,
    /// Duration, ns, or NULL.
    pub duration: Vec<i64>,
    /// Active duration, ns, or NULL (not stored while every cell is NULL).
    pub active_duration: LazyColumn<i64>,
    /// Pool totals at allocation, bytes, or NULL.
    pub alloc_total_allocated: Vec<i64>,
    /// Pool reserved at allocation, bytes, or NULL.
    pub alloc_total_reserved: Vec<i64>,
    /// Pool active at allocation, bytes, or NULL (not stored while every cell is NULL).
    pub alloc_total_active: LazyColumn<i64>,
    /// Pool allocated at release, bytes, or NULL.
    pub release_total_allocated: Vec<i64>,
    /// Pool reserved at release, bytes, or NULL.
    pub release_total_reserved: Vec<i64>,
    /// Pool active at release, bytes, or NULL (not stored while every cell is NULL).
    pub release_total_active: LazyColumn<i64>,
    /// Stream Ptr, interned; 0 = none (not stored while every cell is 0).
    pub stream: LazyColumn<NameId>,
}

/// The i64 columns of [`OperatorMemory`] in table order, for generic code (append, tests).
macro_rules! op_i64_columns {
    ($m:ident) => {
        $m!(
            size,
            alloc_time,
            release_time,
            active_release_time,
            duration,
            active_duration,
            alloc_total_allocated,
            alloc_total_reserved,
            alloc_total_active,
            release_total_allocated,
            release_total_reserved,
            release_total_active
        )
    };
}

/// How many i64 columns [`OperatorMemory`] has (the cells of [`OperatorMemory::push_row`]).
pub const OP_I64_COLUMNS: usize = 12;

impl OperatorMemory {
    /// Adds a block allocated at `t` with the pool's totals after it (the event-pairing sources:
    /// the msprof DB, PyTorch traces, msMemScope dumps); returns its row, to close it later with
    /// [`OperatorMemory::close_block`].
    pub fn push_allocation(
        &mut self,
        name: NameId,
        size: i64,
        t: i64,
        allocated: i64,
        reserved: i64,
    ) -> usize {
        let mut cells = [NULL; OP_I64_COLUMNS];
        (cells[0], cells[1], cells[6], cells[7]) = (size, t, allocated, reserved);
        self.push_row(name, 0, cells);
        self.len() - 1
    }

    /// Closes `row`, released at `t` with the pool's totals after it (its duration follows).
    pub fn close_block(&mut self, row: usize, t: i64, allocated: i64, reserved: i64) {
        if row >= self.len() {
            return;
        }
        self.release_time[row] = t;
        if self.alloc_time[row] != NULL {
            self.duration[row] = t.saturating_sub(self.alloc_time[row]);
        }
        self.release_total_allocated[row] = allocated;
        self.release_total_reserved[row] = reserved;
    }

    /// Adds the release at `t` of a block allocated before the capture: a row of negative size
    /// (as the msprof DB writes it).
    pub fn push_release_only(
        &mut self,
        name: NameId,
        size: i64,
        t: i64,
        allocated: i64,
        reserved: i64,
    ) {
        let mut cells = [NULL; OP_I64_COLUMNS];
        (cells[0], cells[2], cells[9], cells[10]) = (-size.abs(), t, allocated, reserved);
        self.push_row(name, 0, cells);
    }

    /// Empty, with room for `n` rows.
    pub fn with_capacity(n: usize) -> Self {
        let mut me = Self::default();
        me.reserve(n);
        me
    }

    /// Makes room for `n` more rows.
    pub fn reserve(&mut self, n: usize) {
        macro_rules! res {
            ($($c:ident),*) => { $( self.$c.reserve(n); )* };
        }
        op_i64_columns!(res);
        self.name.reserve(n);
        self.stream.reserve(n);
    }

    /// Number of rows.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }

    /// Appends one row: its name and stream ids, and its i64 cells in the column order of
    /// `op_i64_columns` (size, allocation/release/active release time, durations, the six
    /// totals). Every reader pushes rows through here, so the columns are listed once.
    pub fn push_row(&mut self, name: NameId, stream: NameId, cells: [i64; OP_I64_COLUMNS]) {
        let mut cells = cells.into_iter();
        macro_rules! push {
            ($($c:ident),*) => { $( self.$c.push(cells.next().unwrap_or(NULL)); )* };
        }
        op_i64_columns!(push);
        self.name.push(name);
        self.stream.push(stream);
    }

    /// Appends all rows of `other`, mapping its name and stream ids through the remaps.
    pub fn append(&mut self, other: &mut OperatorMemory, names: &[NameId], streams: &[NameId]) {
        macro_rules! app {
            ($($c:ident),*) => { $( self.$c.append(&mut other.$c); )* };
        }
        op_i64_columns!(app);
        self.name
            .extend(other.name.drain(..).map(|s| remap_id(names, s)));
        self.stream
            .append_mapped(&mut other.stream, |s| remap_id(streams, s));
    }

    /// Bytes its cells take.
    pub fn heap_bytes(&self) -> usize {
        let lazy = [
            &self.active_release_time,
            &self.active_duration,
            &self.alloc_total_active,
            &self.release_total_active,
        ];
        let stored: usize = lazy.iter().map(|c| c.heap_bytes()).sum();
        self.len() * ((OP_I64_COLUMNS - lazy.len()) * 8 + size_of::<NameId>())
            + stored
            + self.stream.heap_bytes()
    }

    /// Rows with no release time.
    pub fn unreleased_count(&self) -> usize {
        self.release_time.iter().filter(|&&t| t == NULL).count()
    }
}

/// npu_module_mem: reserved memory per CANN component, sorted by time after loading.
#[derive(Debug, Clone, Default)]
pub struct ModuleMemory {
    /// Component (module) name, interned.
    pub component: Vec<NameId>,
    /// Absolute timestamp, ns.
    pub time_ns: Vec<i64>,
    /// Total Reserved, bytes, or NULL.
    pub reserved: Vec<i64>,
}

impl ModuleMemory {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.time_ns.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.time_ns.is_empty()
    }

    /// Appends all rows of `other`, mapping its names through `remap`.
    pub fn append(&mut self, other: &mut ModuleMemory, remap: &[NameId]) {
        self.component
            .extend(other.component.drain(..).map(|s| remap_id(remap, s)));
        self.time_ns.append(&mut other.time_ns);
        self.reserved.append(&mut other.reserved);
    }

    /// Sorts rows by time, keeping file order among equal times.
    pub fn sort_by_time(&mut self) {
        if let Some(perm) = sort_permutation(&self.time_ns) {
            self.component = permute(&self.component, &perm);
            self.time_ns = permute(&self.time_ns, &perm);
            self.reserved = permute(&self.reserved, &perm);
        }
    }
}

/// static_op_mem: the static-graph memory plan, in file order (TOTAL rows included).
#[derive(Debug, Clone, Default)]
pub struct StaticOpMemory {
    /// Device_id cell (often `host`), interned.
    pub device: Vec<NameId>,
    /// Op Name, interned; `TOTAL` marks a graph's total.
    pub op_name: Vec<NameId>,
    /// Model Name, interned.
    pub model_name: Vec<NameId>,
    /// Graph ID, interned (kept as text: it is an id, not a quantity).
    pub graph_id: Vec<NameId>,
    /// Node Index Start.
    pub node_start: Vec<i64>,
    /// Node Index End (4294967295 = end of graph).
    pub node_end: Vec<i64>,
    /// Size, bytes.
    pub size: Vec<i64>,
}

impl StaticOpMemory {
    /// Number of rows.
    pub fn len(&self) -> usize {
        self.size.len()
    }

    /// True when there are no rows.
    pub fn is_empty(&self) -> bool {
        self.size.is_empty()
    }

    /// Appends all rows of `other`, mapping its ids through `remap`.
    pub fn append(&mut self, other: &mut StaticOpMemory, remap: &[NameId]) {
        for (dst, src) in [
            (&mut self.device, &mut other.device),
            (&mut self.op_name, &mut other.op_name),
            (&mut self.model_name, &mut other.model_name),
            (&mut self.graph_id, &mut other.graph_id),
        ] {
            dst.extend(src.drain(..).map(|s| remap_id(remap, s)));
        }
        self.node_start.append(&mut other.node_start);
        self.node_end.append(&mut other.node_end);
        self.size.append(&mut other.size);
    }
}

fn remap_id(remap: &[NameId], id: NameId) -> NameId {
    remap.get(id as usize).copied().unwrap_or(0)
}

/// The stable permutation that sorts `keys`, or `None` when they are sorted already.
///
/// Profiler files are a few sorted runs (torch_npu writes all APP rows first, then the rest in
/// time order), so runs are merged in O(n log runs); many runs fall back to a parallel sort.
pub(crate) fn sort_permutation(keys: &[i64]) -> Option<Vec<u32>> {
    use rayon::prelude::*;
    let mut starts = vec![0usize];
    starts.extend((1..keys.len()).filter(|&i| keys[i] < keys[i - 1]));
    if starts.len() == 1 {
        return None;
    }
    if starts.len() <= 64 {
        let mut runs: Vec<Vec<u32>> = starts
            .iter()
            .enumerate()
            .map(|(k, &s)| {
                let e = starts.get(k + 1).copied().unwrap_or(keys.len());
                (s as u32..e as u32).collect()
            })
            .collect();
        while runs.len() > 1 {
            let mut merged = Vec::with_capacity(runs.len().div_ceil(2));
            let mut it = runs.into_iter();
            while let Some(a) = it.next() {
                match it.next() {
                    Some(b) => merged.push(merge_runs(keys, &a, &b)),
                    None => merged.push(a),
                }
            }
            runs = merged;
        }
        return runs.pop();
    }
    // (key, index) pairs sorted unstably are a stable sort of the keys: the index breaks ties.
    let mut pairs: Vec<(i64, u32)> = keys
        .iter()
        .enumerate()
        .map(|(i, &k)| (k, i as u32))
        .collect();
    pairs.par_sort_unstable();
    Some(pairs.into_iter().map(|(_, i)| i).collect())
}

/// How to merge keys that are exactly two sorted runs, `[0, split)` and `[split, n)`: for each
/// output position, whether it takes the next row of the second run. Earlier rows win ties, so
/// the merge is stable.
pub(crate) struct TwoRunMerge {
    split: usize,
    from_second: Vec<bool>,
}

impl TwoRunMerge {
    /// The merge of `keys` when they are two sorted runs; `None` when sorted already or when
    /// there are more runs.
    pub(crate) fn of(keys: &[i64]) -> Option<TwoRunMerge> {
        let mut descents = (1..keys.len()).filter(|&i| keys[i] < keys[i - 1]);
        let split = descents.next()?;
        if descents.next().is_some() {
            return None;
        }
        let (a, b) = keys.split_at(split);
        let mut from_second = Vec::with_capacity(keys.len());
        let (mut i, mut j) = (0, 0);
        while i < a.len() && j < b.len() {
            let second = b[j] < a[i];
            from_second.push(second);
            if second {
                j += 1;
            } else {
                i += 1;
            }
        }
        from_second.resize(from_second.len() + (a.len() - i), false);
        from_second.resize(keys.len(), true);
        Some(TwoRunMerge { split, from_second })
    }

    /// Reorders `col` (as long as the keys) in place. The shorter run is copied out; the other
    /// moves towards its final place, never over a row not yet read.
    pub(crate) fn apply<T: Copy>(&self, col: &mut [T]) {
        let (n, split) = (col.len(), self.split);
        if split <= n - split {
            // Forward: the first run is buffered; the second run's next row is never behind
            // the write position.
            let first = col[..split].to_vec();
            let (mut i, mut j) = (0, split);
            for (k, &second) in self.from_second.iter().enumerate() {
                col[k] = if second {
                    j += 1;
                    col[j - 1]
                } else {
                    i += 1;
                    first[i - 1]
                };
            }
        } else {
            // Backward: the second run is buffered; the first run's next row is never ahead.
            let second_run = col[split..].to_vec();
            let (mut i, mut j) = (split, second_run.len());
            for (k, &second) in self.from_second.iter().enumerate().rev() {
                col[k] = if second {
                    j -= 1;
                    second_run[j]
                } else {
                    i -= 1;
                    col[i]
                };
            }
        }
    }
}

/// Merges two index runs sorted by `keys`; `a` (earlier in the file) wins ties.
fn merge_runs(keys: &[i64], a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if keys[b[j] as usize] < keys[a[i] as usize] {
            out.push(b[j]);
            j += 1;
        } else {
            out.push(a[i]);
            i += 1;
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// Writes `v` reordered by `perm` into `out` (cleared first; its allocation is reused).
pub(crate) fn permute_into<T: Copy + Send + Sync>(v: &[T], perm: &[u32], out: &mut Vec<T>) {
    use rayon::prelude::*;
    out.clear();
    out.par_extend(
        perm.par_iter()
            .with_min_len(1 << 16)
            .map(|&i| v[i as usize]),
    );
}

/// `v` reordered so that element `k` is `v[perm[k]]`.
pub(crate) fn permute<T: Copy + Send + Sync>(v: &[T], perm: &[u32]) -> Vec<T> {
    use rayon::prelude::*;
    perm.par_iter()
        .with_min_len(1 << 16)
        .map(|&i| v[i as usize])
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// Two sorted runs merged in place give the stable sort, for any split.
        #[test]
        fn two_runs_merge_in_place_as_a_stable_sort(
            mut a in proptest::collection::vec(0i64..50, 0..200),
            mut b in proptest::collection::vec(0i64..50, 0..200),
        ) {
            a.sort_unstable();
            b.sort_unstable();
            let keys: Vec<i64> = a.iter().chain(&b).copied().collect();
            // Payload: the row's original index, so stability is checked too.
            let mut rows: Vec<usize> = (0..keys.len()).collect();
            let mut want = rows.clone();
            want.sort_by_key(|&i| keys[i]);
            match TwoRunMerge::of(&keys) {
                Some(m) => {
                    m.apply(&mut rows);
                    proptest::prop_assert_eq!(rows, want);
                }
                None => {
                    // Sorted already (or one run): nothing to do.
                    proptest::prop_assert!(keys.windows(2).all(|w| w[0] <= w[1]));
                }
            }
        }
    }

    #[test]
    fn heap_bytes_counts_only_the_stored_cells() {
        let mut r = MemoryRecords::default();
        r.push(Component::PtaGe, 1, 10, 20, NULL, 0);
        r.push(Component::PtaGe, 2, 10, 20, NULL, 0);
        // Component, time, allocated and reserved: 1 + 3 × 8 bytes a row.
        assert_eq!(r.heap_bytes(), 2 * 25);
        r.push(Component::PtaGe, 3, 10, 20, 5, 7);
        assert_eq!(r.heap_bytes(), 3 * 25 + 3 * 8 + 3 * 4);

        let mut o = OperatorMemory::default();
        o.push_allocation(1, 64, 5, 100, 200);
        // Eight i64 columns and the name: the four Active columns and the stream are NULL.
        assert_eq!(o.heap_bytes(), 8 * 8 + 4);
        o.push_row(1, 3, [7; OP_I64_COLUMNS]);
        assert_eq!(o.heap_bytes(), 2 * (OP_I64_COLUMNS * 8 + 2 * 4));
    }

    #[test]
    fn push_row_fills_every_column_in_order() {
        macro_rules! count {
            ($($c:ident),*) => { [$(stringify!($c)),*].len() };
        }
        assert_eq!(op_i64_columns!(count), OP_I64_COLUMNS);
        let mut o = OperatorMemory::default();
        let cells: [i64; OP_I64_COLUMNS] = std::array::from_fn(|i| i as i64 + 100);
        o.push_row(7, 9, cells);
        let got = [
            o.size[0],
            o.alloc_time[0],
            o.release_time[0],
            o.active_release_time[0],
            o.duration[0],
            o.active_duration[0],
            o.alloc_total_allocated[0],
            o.alloc_total_reserved[0],
            o.alloc_total_active[0],
            o.release_total_allocated[0],
            o.release_total_reserved[0],
            o.release_total_active[0],
        ];
        assert_eq!(got, cells);
        assert_eq!((o.name[0], o.stream[0]), (7, 9));
    }

    #[test]
    fn sort_by_time_is_stable_and_moves_every_column() {
        let mut r = MemoryRecords::default();
        r.push(Component::App, 30, NULL, 5, NULL, 0);
        r.push(Component::Pta, 10, 1, 2, 3, 1);
        r.push(Component::PtaGe, 10, 4, 5, 6, 1);
        r.push(Component::Ge, 20, 7, 8, NULL, 0);
        r.sort_by_time();
        assert_eq!(r.time_ns, vec![10, 10, 20, 30]);
        assert_eq!(r.component_at(0), Component::Pta);
        assert_eq!(r.component_at(1), Component::PtaGe);
        assert_eq!(r.allocated, vec![1, 4, 7, NULL]);
        assert_eq!(r.reserved, vec![2, 5, 8, 5]);
        assert_eq!(r.stream, vec![1, 1, 0, 0]);
    }

    #[test]
    fn sorted_input_needs_no_permutation() {
        assert!(sort_permutation(&[1, 1, 2, 3]).is_none());
        assert_eq!(sort_permutation(&[3, 1, 2]), Some(vec![1, 2, 0]));
    }

    #[test]
    fn run_merge_and_fallback_sort_agree_with_a_stable_sort() {
        // Few runs (merge path) and many runs (parallel sort path), ties across runs.
        let mut x: u64 = 7;
        let mut rnd = move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % 50) as i64
        };
        let few: Vec<i64> = (0..300).map(|i| (i % 100) as i64 / 3).collect(); // 3 runs
        let many: Vec<i64> = (0..3000).map(|_| rnd()).collect();
        for keys in [few, many] {
            let mut want: Vec<u32> = (0..keys.len() as u32).collect();
            want.sort_by_key(|&i| keys[i as usize]); // std's stable sort
            assert_eq!(sort_permutation(&keys).unwrap(), want);
        }
    }
}
