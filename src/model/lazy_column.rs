//! [`LazyColumn`]: a table column that takes no memory while every cell is its fill value
//! ([`NULL`] for numbers, 0 for ids).
//!
//! Most sources leave some of a table's columns empty: a msMemScope dump or a PyTorch trace
//! has no Total Active and no stream, and on a 1 GB dump those columns were 76 MiB of cells
//! that all said [`NULL`]. The column counts such cells and stores them only once one differs.

use std::ops::{Index, IndexMut};

use super::{NULL, NameId};

/// A cell type with the value a [`LazyColumn`] of it is filled with.
pub trait Fill: Copy + PartialEq + std::fmt::Debug {
    /// The value every cell has until one is set.
    const FILL: Self;
}

impl Fill for i64 {
    const FILL: Self = NULL;
}

impl Fill for NameId {
    const FILL: Self = 0;
}

/// A column of `len` cells, stored only once a cell differs from [`Fill::FILL`]: until then
/// it is a count. Reads and writes go through `[i]` as on a `Vec` (a write stores the
/// column); [`LazyColumn::iter`] yields every cell. Stored cells are a prefix: those past its
/// end are the fill (a column of fills appended to a stored one adds none).
#[derive(Debug, Clone)]
pub struct LazyColumn<T: Fill> {
    /// The cells once stored (empty until then).
    cells: Vec<T>,
    /// How many cells there are (stored or not).
    len: usize,
    /// [`Fill::FILL`], held for `[i]` to return a reference to.
    fill: T,
}

impl<T: Fill> Default for LazyColumn<T> {
    fn default() -> Self {
        Self {
            cells: Vec::new(),
            len: 0,
            fill: T::FILL,
        }
    }
}

impl<T: Fill> PartialEq for LazyColumn<T> {
    /// Equal when every cell is, stored or not.
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.iter().eq(other.iter())
    }
}

impl<T: Fill> PartialEq<Vec<T>> for LazyColumn<T> {
    /// Equal when it holds the same cells as the `Vec`, stored or not.
    fn eq(&self, other: &Vec<T>) -> bool {
        self.len == other.len() && self.iter().eq(other.iter().copied())
    }
}

impl<T: Fill> From<Vec<T>> for LazyColumn<T> {
    fn from(cells: Vec<T>) -> Self {
        let mut me = Self::default();
        me.extend(cells);
        me
    }
}

impl<T: Fill> LazyColumn<T> {
    /// `len` cells, each the fill (nothing stored).
    pub fn filled(len: usize) -> Self {
        Self {
            len,
            ..Self::default()
        }
    }

    /// How many cells.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when there are no cells.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// True once a cell differs from the fill, or one was written (the cells then take
    /// memory).
    pub fn is_stored(&self) -> bool {
        !self.cells.is_empty()
    }

    /// Every cell, to change in place, when stored (`None` while every cell is the fill: a
    /// reordering, say, leaves such a column as it is).
    pub fn stored_mut(&mut self) -> Option<&mut Vec<T>> {
        if self.is_stored() {
            self.store();
            Some(&mut self.cells)
        } else {
            None
        }
    }

    /// Stores every cell (each the fill), so that one can be set.
    fn store(&mut self) {
        if self.cells.len() < self.len {
            self.cells.resize(self.len, self.fill);
        }
    }

    /// Appends one cell.
    #[inline]
    pub fn push(&mut self, v: T) {
        if v != self.fill {
            self.store();
            self.cells.push(v);
        }
        self.len += 1;
    }

    /// Bytes its stored cells take (0 while none is stored).
    pub fn heap_bytes(&self) -> usize {
        self.cells.len() * size_of::<T>()
    }

    /// Makes room for `n` more cells once stored (nothing while every cell is the fill).
    pub fn reserve(&mut self, n: usize) {
        if self.is_stored() {
            self.cells.reserve(n);
        }
    }

    /// Every cell, in order.
    pub fn iter(&self) -> impl Iterator<Item = T> + Clone + '_ {
        let unstored = self.len - self.cells.len();
        self.cells
            .iter()
            .copied()
            .chain(std::iter::repeat_n(self.fill, unstored))
    }

    /// Moves every cell of `other` to the end of this column, leaving `other` empty.
    pub fn append(&mut self, other: &mut LazyColumn<T>) {
        if other.is_stored() {
            self.store();
            self.cells.append(&mut other.cells);
        }
        self.len += other.len;
        other.len = 0;
    }

    /// Moves every cell of `other` to the end of this column through `map` (ids renumbered
    /// for another interner, say), leaving `other` empty.
    pub fn append_mapped(&mut self, other: &mut LazyColumn<T>, map: impl Fn(T) -> T) {
        if !other.is_stored() && map(other.fill) == self.fill {
            self.len += other.len;
        } else {
            self.extend(other.iter().map(map));
        }
        other.cells = Vec::new();
        other.len = 0;
    }

    /// Appends `cells` through [`LazyColumn::push`].
    pub fn extend(&mut self, cells: impl IntoIterator<Item = T>) {
        for v in cells {
            self.push(v);
        }
    }
}

impl<T: Fill> Index<usize> for LazyColumn<T> {
    type Output = T;

    /// Cell `i`; panics past the end, as a `Vec` does.
    fn index(&self, i: usize) -> &T {
        assert!(i < self.len, "cell {i} of a column of {}", self.len);
        self.cells.get(i).unwrap_or(&self.fill)
    }
}

impl<T: Fill> IndexMut<usize> for LazyColumn<T> {
    /// Cell `i` to set (the column is stored first); panics past the end, as a `Vec` does.
    fn index_mut(&mut self, i: usize) -> &mut T {
        assert!(i < self.len, "cell {i} of a column of {}", self.len);
        self.store();
        &mut self.cells[i]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fill_cells_take_no_memory_until_one_differs() {
        let mut c = LazyColumn::<i64>::default();
        c.push(NULL);
        c.push(NULL);
        assert_eq!((c.len(), c.is_stored()), (2, false));
        assert_eq!(c[1], NULL);
        c.push(7);
        assert!(c.is_stored());
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![NULL, NULL, 7]);
    }

    #[test]
    fn a_write_stores_the_column() {
        let mut c = LazyColumn::<NameId>::from(vec![0, 0, 0]);
        assert!(!c.is_stored());
        c[1] = 5;
        assert_eq!(c.iter().collect::<Vec<_>>(), vec![0, 5, 0]);
    }

    #[test]
    fn append_keeps_every_cell_in_order() {
        // Each of the four mixes of stored and not stored, against the same cells in a Vec.
        let cells = [vec![NULL, NULL], vec![NULL, 3]];
        for a in &cells {
            for b in &cells {
                let mut x = LazyColumn::from(a.clone());
                let mut y = LazyColumn::from(b.clone());
                x.append(&mut y);
                let want: Vec<i64> = a.iter().chain(b).copied().collect();
                assert_eq!(x.iter().collect::<Vec<_>>(), want);
                assert_eq!(x.len(), want.len());
                assert!(y.is_empty());
            }
        }
    }

    #[test]
    fn append_mapped_maps_every_cell() {
        let remap = |id: NameId| if id == 0 { 0 } else { id + 10 };
        let cases = [vec![0, 0], vec![0, 2]];
        for a in &cases {
            for b in &cases {
                let mut x = LazyColumn::from(a.clone());
                let mut y = LazyColumn::from(b.clone());
                x.append_mapped(&mut y, remap);
                let want: Vec<NameId> = a
                    .iter()
                    .copied()
                    .chain(b.iter().map(|&i| remap(i)))
                    .collect();
                assert_eq!(x.iter().collect::<Vec<_>>(), want);
                assert!(y.is_empty());
            }
        }
        // A map that moves the fill stores the cells it moved.
        let mut x = LazyColumn::<NameId>::filled(1);
        x.append_mapped(&mut LazyColumn::filled(2), |id| id + 1);
        assert_eq!(x.iter().collect::<Vec<_>>(), vec![0, 1, 1]);
    }

    #[test]
    fn equal_whether_stored_or_not() {
        let plain = LazyColumn::from(vec![NULL, NULL]);
        let mut stored = LazyColumn::from(vec![NULL, 1]);
        stored[1] = NULL;
        assert!(stored.is_stored());
        assert_eq!(plain, stored);
        assert_ne!(plain, LazyColumn::from(vec![NULL]));
    }

    /// One step on a column and on the plain `Vec` it stands for.
    #[derive(Debug, Clone)]
    enum Step {
        Push(i64),
        Set(usize, i64),
        Append(Vec<i64>),
        Remap(Vec<i64>),
    }

    fn step() -> impl proptest::strategy::Strategy<Value = Step> {
        use proptest::prelude::*;
        // Mostly the fill, so that columns stay unstored for a while.
        let cell = prop_oneof![3 => Just(NULL), 1 => -3i64..3];
        let cells = proptest::collection::vec(cell.clone(), 0..6);
        prop_oneof![
            cell.clone().prop_map(Step::Push),
            (0usize..20, cell).prop_map(|(i, v)| Step::Set(i, v)),
            cells.clone().prop_map(Step::Append),
            cells.prop_map(Step::Remap),
        ]
    }

    proptest::proptest! {
        /// Any mix of pushes, writes and appends leaves the cells a `Vec` would hold, and
        /// stores them only once one differs from the fill.
        #[test]
        fn a_column_holds_what_a_vec_would(steps in proptest::collection::vec(step(), 0..40)) {
            let mut col = LazyColumn::<i64>::default();
            let mut vec: Vec<i64> = Vec::new();
            // NULL kept, others moved: what an id remap does to a column of ids.
            let remap = |v: i64| if v == NULL { NULL } else { v + 1 };
            // Whether a cell other than the fill went in, or one was written: then, and only
            // then, the column is stored.
            let mut touched = false;
            for s in steps {
                touched |= match &s {
                    Step::Push(v) => *v != NULL,
                    Step::Set(i, _) => *i < vec.len(),
                    Step::Append(c) | Step::Remap(c) => c.iter().any(|&v| v != NULL),
                };
                match s {
                    Step::Push(v) => {
                        col.push(v);
                        vec.push(v);
                    }
                    Step::Set(i, v) if i < vec.len() => {
                        col[i] = v;
                        vec[i] = v;
                    }
                    Step::Set(..) => {}
                    Step::Append(cells) => {
                        col.append(&mut LazyColumn::from(cells.clone()));
                        vec.extend(cells);
                    }
                    Step::Remap(cells) => {
                        col.append_mapped(&mut LazyColumn::from(cells.clone()), remap);
                        vec.extend(cells.into_iter().map(remap));
                    }
                }
                proptest::prop_assert_eq!(col.iter().collect::<Vec<_>>(), vec.clone());
                proptest::prop_assert_eq!(col.len(), vec.len());
                for (i, &v) in vec.iter().enumerate() {
                    proptest::prop_assert_eq!(col[i], v);
                }
                proptest::prop_assert_eq!(col.is_stored(), touched);
                // What a reordering is handed: every cell, or none while all are the fill.
                let mut copy = col.clone();
                if let Some(cells) = copy.stored_mut() {
                    proptest::prop_assert_eq!(&*cells, &vec);
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "cell 2 of a column of 2")]
    fn reading_past_the_end_panics_as_a_vec_does() {
        let c = LazyColumn::from(vec![NULL, NULL]);
        let _ = c[2];
    }
}
