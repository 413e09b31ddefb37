//! Every table's sort, kept in one place of the view state under the id of the table's owner
//! (as [`TabId`](crate::ui::state::TabId) names a pane), and changed by one command,
//! [`Command::Sort`](crate::ui::command::Command::Sort). A pane reads its own sort typed
//! ([`Sorts::get`]) by its [`SortTable`] and its column type ([`SortColumn`]); nothing
//! outside it names its columns.
//!
//! Adding a sorted table: a `pub const SORT: SortTable` in the pane's file, its column enum
//! there with `sort_columns!` over it (one line), and `Command::sort(SORT, column)` on a
//! header click. The analysis' and the model's column types are listed here.

use std::collections::BTreeMap;

use crate::analysis::SortDir;

/// A sorted table, named by the pane that owns it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SortTable(pub &'static str);

/// A table's column type: its columns by name (a stable name, never a position).
pub trait SortColumn: Copy + PartialEq + 'static {
    /// Every column.
    const ALL: &'static [Self];
    /// The column's name (its variant's).
    fn name(self) -> &'static str;
}

/// Implements [`SortColumn`] for column enums: every variant listed, so a new variant that is
/// not does not build (the `match` in `name` is exhaustive).
macro_rules! sort_columns {
    ($($ty:ty { $($v:ident),* $(,)? })*) => {$(
        impl $crate::ui::sorts::SortColumn for $ty {
            const ALL: &'static [Self] = &[$(<$ty>::$v),*];
            fn name(self) -> &'static str {
                match self {
                    $(<$ty>::$v => stringify!($v),)*
                }
            }
        }
    )*};
}
pub(crate) use sort_columns;

sort_columns! {
    crate::analysis::Column {
        Name, Size, AllocationTime, ReleaseTime, ActiveReleaseTime, Duration, ActiveDuration,
        AllocTotalAllocated, AllocTotalReserved, AllocTotalActive, ReleaseTotalAllocated,
        ReleaseTotalReserved, ReleaseTotalActive, Stream,
    }
    crate::analysis::ComponentColumn { Component, Peak, Time }
    crate::analysis::StaticColumn { Device, Name, NodeStart, NodeEnd, Size }
    crate::model::cluster::SummaryColumn {
        Rank, Host, Device, PeakAllocated, PeakAt, PeakReserved, Steps, Growth, TopOperator,
        Before, Delta, Folder,
    }
}

/// Every table's sort: the column's name and direction, by table (a table absent is in its
/// own default order).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Sorts(BTreeMap<SortTable, (&'static str, SortDir)>);

impl Sorts {
    /// `table`'s sort as its own column type; `None` when unsorted (or sorted by a column of
    /// another type, which no pane does).
    pub fn get<C: SortColumn>(&self, table: SortTable) -> Option<(C, SortDir)> {
        let &(name, dir) = self.0.get(&table)?;
        C::ALL.iter().find(|c| c.name() == name).map(|&c| (c, dir))
    }

    /// The direction `table` is sorted by `column` in, if it is (the header's arrow).
    pub fn dir_of<C: SortColumn>(&self, table: SortTable, column: C) -> Option<SortDir> {
        self.0
            .get(&table)
            .filter(|(name, _)| *name == column.name())
            .map(|&(_, dir)| dir)
    }

    /// `table`'s sort as text (a table's query key: its page resets when it changes).
    pub fn key(&self, table: SortTable) -> Option<(&'static str, SortDir)> {
        self.0.get(&table).copied()
    }

    /// After a click on `column`'s header: ascending → descending → the default order; another
    /// column starts ascending.
    pub fn cycle(&mut self, table: SortTable, column: &'static str) {
        match self.0.get(&table) {
            Some(&(c, SortDir::Asc)) if c == column => {
                self.0.insert(table, (column, SortDir::Desc));
            }
            Some(&(c, SortDir::Desc)) if c == column => {
                self.0.remove(&table);
            }
            _ => {
                self.0.insert(table, (column, SortDir::Asc));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::panes::steps::StepColumn;

    #[test]
    fn a_header_cycles_ascending_descending_default_and_tables_keep_their_own() {
        let (steps, diff) = (SortTable("steps"), SortTable("diff"));
        let mut s = Sorts::default();
        s.cycle(steps, StepColumn::Change.name());
        assert_eq!(s.get(steps), Some((StepColumn::Change, SortDir::Asc)));
        s.cycle(steps, StepColumn::Change.name());
        assert_eq!(s.get(steps), Some((StepColumn::Change, SortDir::Desc)));
        s.cycle(diff, "Delta");
        s.cycle(steps, StepColumn::Change.name());
        assert_eq!(s.get::<StepColumn>(steps), None);
        assert_eq!(s.key(diff), Some(("Delta", SortDir::Asc)));
        s.cycle(steps, StepColumn::End.name());
        s.cycle(steps, StepColumn::Start.name());
        assert_eq!(s.get(steps), Some((StepColumn::Start, SortDir::Asc)));
    }

    #[test]
    fn every_column_has_its_own_name() {
        fn distinct<C: SortColumn>() {
            let mut names: Vec<&str> = C::ALL.iter().map(|c| c.name()).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), C::ALL.len());
        }
        distinct::<crate::analysis::Column>();
        distinct::<StepColumn>();
        distinct::<crate::model::cluster::SummaryColumn>();
    }
}
