//! The details-table engine: window, name and range filters, sort by any column, pages.
//!
//! Filtering is a parallel pass over the rows; sorting uses a stable permutation per column and
//! direction, computed once (in parallel) and cached in a [`SortCache`], so re-querying after a
//! zoom or a filter change walks a cached order instead of sorting again.

use std::sync::OnceLock;

use rayon::prelude::*;

use crate::model::{MIB, NULL, NameId, RankData};

/// The columns of the details table, in display order (formats.md §4.5).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Column {
    /// Operator name.
    Name,
    /// Size(KB).
    Size,
    /// Allocation Time(ms), from the rank origin.
    AllocationTime,
    /// Release Time(ms).
    ReleaseTime,
    /// Active Release Time(ms).
    ActiveReleaseTime,
    /// Duration(ms).
    Duration,
    /// Active Duration(ms).
    ActiveDuration,
    /// Allocation Total Allocated(MB).
    AllocTotalAllocated,
    /// Allocation Total Reserved(MB).
    AllocTotalReserved,
    /// Allocation Total Active(MB).
    AllocTotalActive,
    /// Release Total Allocated(MB).
    ReleaseTotalAllocated,
    /// Release Total Reserved(MB).
    ReleaseTotalReserved,
    /// Release Total Active(MB).
    ReleaseTotalActive,
    /// Stream.
    Stream,
}

/// The display unit of a numeric column.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// KiB (stored as bytes).
    Kib,
    /// Milliseconds (stored as ns).
    Ms,
    /// MiB (stored as bytes).
    Mib,
    /// Text columns.
    Text,
}

impl Unit {
    /// Internal units per display unit.
    pub fn factor(self) -> f64 {
        match self {
            Unit::Kib => 1024.0,
            Unit::Ms => 1e6,
            Unit::Mib => MIB as f64,
            Unit::Text => 1.0,
        }
    }
}

impl Column {
    /// All columns, display order.
    pub const ALL: [Column; 14] = [
        Column::Name,
        Column::Size,
        Column::AllocationTime,
        Column::ReleaseTime,
        Column::ActiveReleaseTime,
        Column::Duration,
        Column::ActiveDuration,
        Column::AllocTotalAllocated,
        Column::AllocTotalReserved,
        Column::AllocTotalActive,
        Column::ReleaseTotalAllocated,
        Column::ReleaseTotalReserved,
        Column::ReleaseTotalActive,
        Column::Stream,
    ];

    /// The header as shown (and copied).
    pub fn header(self) -> &'static str {
        match self {
            Column::Name => "Name",
            Column::Size => "Size(KB)",
            Column::AllocationTime => "Allocation Time(ms)",
            Column::ReleaseTime => "Release Time(ms)",
            Column::ActiveReleaseTime => "Active Release Time(ms)",
            Column::Duration => "Duration(ms)",
            Column::ActiveDuration => "Active Duration(ms)",
            Column::AllocTotalAllocated => "Allocation Total Allocated(MB)",
            Column::AllocTotalReserved => "Allocation Total Reserved(MB)",
            Column::AllocTotalActive => "Allocation Total Active(MB)",
            Column::ReleaseTotalAllocated => "Release Total Allocated(MB)",
            Column::ReleaseTotalReserved => "Release Total Reserved(MB)",
            Column::ReleaseTotalActive => "Release Total Active(MB)",
            Column::Stream => "Stream",
        }
    }

    /// Parses a header (`Size(KB)`) or its name without the unit (`size`, `release time`),
    /// ignoring case, spaces and underscores.
    pub fn parse(s: &str) -> Option<Column> {
        let norm = |x: &str| -> String {
            let base = x.split('(').next().unwrap_or(x);
            base.chars()
                .filter(|c| c.is_alphanumeric())
                .flat_map(char::to_lowercase)
                .collect()
        };
        let want = norm(s);
        Column::ALL.into_iter().find(|c| norm(c.header()) == want)
    }

    /// The display unit.
    pub fn unit(self) -> Unit {
        match self {
            Column::Name | Column::Stream => Unit::Text,
            Column::Size => Unit::Kib,
            Column::AllocationTime
            | Column::ReleaseTime
            | Column::ActiveReleaseTime
            | Column::Duration
            | Column::ActiveDuration => Unit::Ms,
            _ => Unit::Mib,
        }
    }

    /// The stored value of a numeric column for `row` (absolute ns for times), or NULL.
    pub fn raw(self, data: &RankData, row: usize) -> i64 {
        let o = &data.operators;
        match self {
            Column::Name | Column::Stream => NULL,
            Column::Size => o.size[row],
            Column::AllocationTime => o.alloc_time[row],
            Column::ReleaseTime => o.release_time[row],
            Column::ActiveReleaseTime => o.active_release_time[row],
            Column::Duration => o.duration[row],
            Column::ActiveDuration => o.active_duration[row],
            Column::AllocTotalAllocated => o.alloc_total_allocated[row],
            Column::AllocTotalReserved => o.alloc_total_reserved[row],
            Column::AllocTotalActive => o.alloc_total_active[row],
            Column::ReleaseTotalAllocated => o.release_total_allocated[row],
            Column::ReleaseTotalReserved => o.release_total_reserved[row],
            Column::ReleaseTotalActive => o.release_total_active[row],
        }
    }

    /// The value in display units (times from the rank origin), None when missing or text.
    pub fn display_value(self, data: &RankData, row: usize) -> Option<f64> {
        let v = self.raw(data, row);
        if v == NULL || self.unit() == Unit::Text {
            return None;
        }
        let v = if self.is_time() {
            v.saturating_sub(data.time_origin_ns)
        } else {
            v
        };
        Some(v as f64 / self.unit().factor())
    }

    fn is_time(self) -> bool {
        matches!(
            self,
            Column::AllocationTime | Column::ReleaseTime | Column::ActiveReleaseTime
        )
    }

    /// Missing values of release-side columns mean "not yet": they sort as +∞; others as −∞.
    fn null_is_late(self) -> bool {
        matches!(
            self,
            Column::ReleaseTime
                | Column::ActiveReleaseTime
                | Column::Duration
                | Column::ActiveDuration
                | Column::ReleaseTotalAllocated
                | Column::ReleaseTotalReserved
                | Column::ReleaseTotalActive
        )
    }
}

/// Sort direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SortDir {
    /// Smallest first.
    Asc,
    /// Largest first.
    Desc,
}

/// How the time window selects rows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WindowMode {
    /// Every block whose lifetime overlaps the window (unreleased blocks are open-ended).
    #[default]
    Overlap,
    /// Only blocks allocated or released within the window.
    Within,
}

/// A min/max filter on a numeric column, in display units (KB, ms from origin, MB).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RangeFilter {
    /// The column.
    pub column: Column,
    /// Inclusive lower bound.
    pub min: Option<f64>,
    /// Inclusive upper bound.
    pub max: Option<f64>,
}

/// Everything that selects and orders the table's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct TableQuery {
    /// Time window, ns from the rank origin, inclusive.
    pub window: Option<(i64, i64)>,
    /// How the window selects rows.
    pub mode: WindowMode,
    /// Case-insensitive substring of the name; empty for all.
    pub name: String,
    /// Numeric range filters (rows with a missing value fail a filter on that column).
    pub ranges: Vec<RangeFilter>,
    /// Sort column and direction; None = file order.
    pub sort: Option<(Column, SortDir)>,
    /// Rows per page (`usize::MAX` for everything).
    pub page_size: usize,
    /// Page number, 0-based.
    pub page: usize,
    /// Keep only rows with a stream (Group By Stream).
    pub require_stream: bool,
    /// Case-insensitive substrings of tag columns (msMemScope's Owner, Inefficient); a rank
    /// without the column keeps every row.
    pub tags: Vec<(crate::model::TagKind, String)>,
    /// Show exactly these rows (ascending), whatever the other filters say (a step's
    /// survivors).
    pub only_rows: Option<std::sync::Arc<Vec<u32>>>,
}

impl Default for TableQuery {
    fn default() -> Self {
        TableQuery {
            window: None,
            mode: WindowMode::Overlap,
            name: String::new(),
            ranges: Vec::new(),
            sort: None,
            page_size: 10,
            page: 0,
            require_stream: false,
            tags: Vec::new(),
            only_rows: None,
        }
    }
}

/// One page of results.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TablePage {
    /// Rows matching the filters (all pages).
    pub total: usize,
    /// operator_memory row indices of this page, in order.
    pub rows: Vec<u32>,
}

impl TablePage {
    /// Number of pages for `page_size` (at least 1).
    pub fn pages(&self, page_size: usize) -> usize {
        self.total.div_ceil(page_size.max(1)).max(1)
    }
}

/// Cached stable sort orders, per column and direction, for one rank.
#[derive(Debug, Default)]
pub struct SortCache {
    orders: [[OnceLock<Vec<u32>>; 2]; 14],
}

impl SortCache {
    /// An empty cache.
    pub fn new() -> SortCache {
        SortCache::default()
    }

    /// True when the order of `col` in `dir` is computed already.
    pub fn is_cached(&self, col: Column, dir: SortDir) -> bool {
        let ci = Column::ALL.iter().position(|&c| c == col).unwrap_or(0);
        let di = usize::from(dir == SortDir::Desc);
        self.orders[ci][di].get().is_some()
    }

    /// The stable order of all rows by `col` in `dir` (ties keep file order; computed once).
    pub fn order(&self, data: &RankData, col: Column, dir: SortDir) -> &[u32] {
        let ci = Column::ALL.iter().position(|&c| c == col).unwrap_or(0);
        let di = usize::from(dir == SortDir::Desc);
        self.orders[ci][di].get_or_init(|| sort_order(data, col, dir))
    }
}

/// Sort keys for a column: numbers as stored (nulls at −∞ or +∞), text as its rank in byte order.
fn sort_keys(data: &RankData, col: Column) -> Vec<i64> {
    let o = &data.operators;
    let n = o.len();
    match col {
        Column::Name | Column::Stream => {
            let mut by_text: Vec<u32> = (0..data.strings.len() as u32).collect();
            by_text.sort_by(|&a, &b| data.strings.get(a).cmp(data.strings.get(b)));
            let mut rank = vec![0i64; by_text.len()];
            for (r, &id) in by_text.iter().enumerate() {
                rank[id as usize] = r as i64;
            }
            let key = |id: NameId| rank.get(id as usize).copied().unwrap_or(0);
            if col == Column::Name {
                o.name.par_iter().map(|&id| key(id)).collect()
            } else {
                o.stream.iter().map(key).collect()
            }
        }
        _ => {
            // A missing value sorts just past the real values (not at ±2^63, which would make
            // the key span too wide for the 4-pass radix sort).
            let (lo, hi) = (0..n)
                .into_par_iter()
                .map(|i| col.raw(data, i))
                .filter(|&v| v != NULL)
                .fold(
                    || (i64::MAX, i64::MIN),
                    |(lo, hi), v| (lo.min(v), hi.max(v)),
                )
                .reduce(|| (i64::MAX, i64::MIN), |a, b| (a.0.min(b.0), a.1.max(b.1)));
            let null = if col.null_is_late() {
                hi.saturating_add(1)
            } else {
                lo.saturating_sub(1)
            };
            (0..n)
                .into_par_iter()
                .map(|i| {
                    let v = col.raw(data, i);
                    if v == NULL { null } else { v }
                })
                .collect()
        }
    }
}

fn sort_order(data: &RankData, col: Column, dir: SortDir) -> Vec<u32> {
    let keys = sort_keys(data, col);
    // Keys shifted to start at 0 (and mirrored for descending) keep their order; when they span
    // less than 2^32 the radix sort needs 4 passes instead of 8. The sort is stable, so ties keep
    // file order in both directions.
    let lo = keys.iter().copied().min().unwrap_or(0);
    let hi = keys.iter().copied().max().unwrap_or(0);
    let span = hi.abs_diff(lo);
    let rel = |k: i64| -> u64 {
        let d = k.abs_diff(lo);
        if dir == SortDir::Desc { span - d } else { d }
    };
    if u32::try_from(span).is_ok() {
        let mut pairs: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (rel(k) as u32, i as u32))
            .collect();
        radsort::sort_by_key(&mut pairs, |p| p.0);
        pairs.into_iter().map(|(_, i)| i).collect()
    } else {
        let mut pairs: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (rel(k), i as u32))
            .collect();
        radsort::sort_by_key(&mut pairs, |p| p.0);
        pairs.into_iter().map(|(_, i)| i).collect()
    }
}

/// Runs `q` on the rank's operator_memory.
pub fn query(data: &RankData, cache: &SortCache, q: &TableQuery) -> TablePage {
    let mask = filter_mask(data, q);
    let total = mask.iter().filter(|&&m| m).count();
    let skip = q.page.saturating_mul(q.page_size);
    let take = q.page_size;
    let rows: Vec<u32> = match q.sort {
        None => (0..mask.len() as u32)
            .filter(|&i| mask[i as usize])
            .skip(skip)
            .take(take)
            .collect(),
        Some((col, dir)) => cache
            .order(data, col, dir)
            .iter()
            .copied()
            .filter(|&i| mask[i as usize])
            .skip(skip)
            .take(take)
            .collect(),
    };
    TablePage { total, rows }
}

/// Which rows pass the window, name, range and stream filters.
pub fn filter_mask(data: &RankData, q: &TableQuery) -> Vec<bool> {
    let o = &data.operators;
    if let Some(rows) = &q.only_rows {
        let mut mask = vec![false; o.len()];
        for &r in rows.iter() {
            if let Some(m) = mask.get_mut(r as usize) {
                *m = true;
            }
        }
        return mask;
    }
    let origin = data.time_origin_ns;
    let needle = q.name.to_lowercase();
    // Names are interned: decide each distinct name once.
    let name_ok: Option<Vec<bool>> = (!needle.is_empty()).then(|| {
        (0..data.strings.len() as u32)
            .map(|id| data.strings.get(id).to_lowercase().contains(&needle))
            .collect()
    });
    // Tag filters: each column's distinct values decided once, like names.
    let tags: Vec<(&[NameId], Vec<bool>)> = q
        .tags
        .iter()
        .filter(|(_, text)| !text.trim().is_empty())
        .filter_map(|(kind, text)| {
            let col = data.tags.iter().find(|t| t.kind == *kind)?;
            let needle = text.trim().to_lowercase();
            // A module matches by its path or by its innermost-first form (the app's column).
            let module = *kind == crate::model::TagKind::Module;
            let ok = (0..data.strings.len() as u32)
                .map(|id| {
                    let value = data.strings.get(id).to_lowercase();
                    value.contains(&needle)
                        || (module
                            && crate::model::tags::module_innermost_first(&value).contains(&needle))
                })
                .collect();
            Some((col.values.as_slice(), ok))
        })
        .collect();
    let window = q
        .window
        .map(|(a, b)| (origin.saturating_add(a), origin.saturating_add(b)));
    let ranges: Vec<(Column, f64, f64)> = q
        .ranges
        .iter()
        .map(|r| {
            let f = r.column.unit().factor();
            let shift = if r.column.is_time() {
                origin as f64
            } else {
                0.0
            };
            (
                r.column,
                r.min.map_or(f64::NEG_INFINITY, |m| m * f + shift),
                r.max.map_or(f64::INFINITY, |m| m * f + shift),
            )
        })
        .collect();
    (0..o.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            if let Some((t0, t1)) = window {
                let (a, r) = (o.alloc_time[i], o.release_time[i]);
                let ok = match q.mode {
                    WindowMode::Overlap => (r == NULL || r >= t0) && (a == NULL || a <= t1),
                    WindowMode::Within => {
                        (a != NULL && a >= t0 && a <= t1) || (r != NULL && r >= t0 && r <= t1)
                    }
                };
                if !ok {
                    return false;
                }
            }
            if q.require_stream && o.stream[i] == 0 {
                return false;
            }
            if let Some(ok) = &name_ok
                && !ok.get(o.name[i] as usize).copied().unwrap_or(false)
            {
                return false;
            }
            for (values, ok) in &tags {
                let v = values.get(i).copied().unwrap_or(0);
                if !ok.get(v as usize).copied().unwrap_or(false) {
                    return false;
                }
            }
            ranges.iter().all(|&(c, lo, hi)| {
                let v = c.raw(data, i);
                v != NULL && (v as f64) >= lo && (v as f64) <= hi
            })
        })
        .collect()
}
