//! [`RankView`]: everything the app computes for one loaded rank, built lazily once and shared
//! (it is `Sync`): LOD series per Group By, the table's sort orders, the live index, static
//! graphs and the component peak table.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use super::{
    ComponentPeak, GroupBy, LiveIndex, LodSeries, SortCache, StaticGraph, component_peaks,
    static_graphs,
};
use crate::model::{NULL, RankData};

/// A stable identity for one [`RankView`]: never reused within a process, so a cache keyed by
/// it can never serve another rank (an address can be, once the view is freed).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ViewId(u64);

/// The next [`ViewId`].
static NEXT_VIEW_ID: AtomicU64 = AtomicU64::new(1);

/// A loaded rank with its derived structures.
#[derive(Debug)]
pub struct RankView {
    id: ViewId,
    /// The rank's data.
    pub data: Arc<RankData>,
    series: [OnceLock<Arc<[LodSeries]>>; 3],
    /// Cached sort orders of the details table.
    pub sort_cache: SortCache,
    live: OnceLock<LiveIndex>,
    statics: OnceLock<Vec<StaticGraph>>,
    components: OnceLock<Vec<ComponentPeak>>,
    extent: OnceLock<(i64, i64)>,
    apart: OnceLock<Option<super::TablesApart>>,
    steps: OnceLock<super::StepReport>,
    roles: OnceLock<super::RoleReport>,
    not_counted: OnceLock<super::NotCounted>,
    event_order: OnceLock<super::whatif::EventOrder>,
    /// The replayed advice and the rank count it is for ([`RankView::advice`]).
    advice: std::sync::Mutex<Option<(usize, Arc<Vec<super::Advice>>)>>,
}

impl RankView {
    /// Wraps loaded data; nothing is computed yet.
    pub fn new(data: RankData) -> RankView {
        RankView {
            id: ViewId(NEXT_VIEW_ID.fetch_add(1, Ordering::Relaxed)),
            data: Arc::new(data),
            series: Default::default(),
            sort_cache: SortCache::new(),
            live: OnceLock::new(),
            statics: OnceLock::new(),
            components: OnceLock::new(),
            extent: OnceLock::new(),
            apart: OnceLock::new(),
            steps: OnceLock::new(),
            roles: OnceLock::new(),
            not_counted: OnceLock::new(),
            event_order: OnceLock::new(),
            advice: std::sync::Mutex::new(None),
        }
    }

    /// The view of a rank whose first look (`first`, [`RankData::partial`]) is on screen: the
    /// curves already built for it are taken over when they come from the same rows with the
    /// same time origin, so completing a load never builds them twice.
    pub fn completing(data: RankData, first: &RankView) -> RankView {
        let view = RankView::new(data);
        let same_rows = Arc::ptr_eq(&view.data.records, &first.data.records)
            && view.data.time_origin_ns == first.data.time_origin_ns;
        if same_rows {
            for (mine, built) in view.series.iter().zip(&first.series) {
                if let Some(s) = built.get() {
                    let _ = mine.set(Arc::clone(s));
                }
            }
        }
        view
    }

    /// This view's identity, for keying caches of what was computed from it.
    pub fn id(&self) -> ViewId {
        self.id
    }

    /// The series of `group` with their pyramids (built on first use).
    pub fn series(&self, group: GroupBy) -> &[LodSeries] {
        let i = GroupBy::ALL.iter().position(|&g| g == group).unwrap_or(0);
        self.series[i].get_or_init(|| {
            use rayon::prelude::*;
            super::build_series(&self.data, group)
                .into_par_iter()
                .map(LodSeries::new)
                .collect::<Vec<_>>()
                .into()
        })
    }

    /// The series of `group` if they are built already (never blocks).
    pub fn series_built(&self, group: GroupBy) -> Option<&[LodSeries]> {
        let i = GroupBy::ALL.iter().position(|&g| g == group).unwrap_or(0);
        self.series[i].get().map(|s| &s[..])
    }

    /// The live-at-time index (built on first use).
    pub fn live_index(&self) -> &LiveIndex {
        self.live.get_or_init(|| LiveIndex::new(&self.data))
    }

    /// Static graphs (empty when the rank has no static_op_mem).
    pub fn static_graphs(&self) -> &[StaticGraph] {
        self.statics.get_or_init(|| static_graphs(&self.data))
    }

    /// The Overall curves the chart already has, as plain series (the step and role reports
    /// use them: never built a second time).
    pub fn overall_series(&self) -> Vec<&super::Series> {
        self.series(GroupBy::Overall)
            .iter()
            .map(|l| &l.series)
            .collect()
    }

    /// The Operator Allocated curve (PyTorch's Total Allocated), when the rank has one: the
    /// curve the peak, the roles' split and the what-if replay are read from.
    pub fn operator_allocated(&self) -> Option<&super::Series> {
        self.series(GroupBy::Overall)
            .iter()
            .map(|l| &l.series)
            .find(|s| s.name == super::OverallCurve::OperatorAllocated.label())
    }

    /// Each step's figures and the growth runs (empty without steps; computed on first use).
    pub fn steps(&self) -> &super::StepReport {
        self.steps
            .get_or_init(|| super::step_report_on(&self.data, &self.overall_series()))
    }

    /// Memory by role (computed on first use; advice for one rank, see
    /// [`super::RoleReport::advice_for`]).
    pub fn roles(&self) -> &super::RoleReport {
        self.roles
            .get_or_init(|| super::role_report(&self.data, &self.overall_series()))
    }

    /// Is the role report computed?
    pub fn roles_ready(&self) -> bool {
        self.roles.get().is_some()
    }

    /// The Component mode peak table.
    pub fn component_peaks(&self) -> &[ComponentPeak] {
        self.components.get_or_init(|| component_peaks(&self.data))
    }

    /// memory_record and operator_memory when they lie far apart in time
    /// ([`super::tables_apart`]), once.
    pub fn tables_apart(&self) -> Option<super::TablesApart> {
        *self.apart.get_or_init(|| super::tables_apart(&self.data))
    }

    /// The operator_memory rows a comparison leaves out (computed once: it scans every row,
    /// which the Diff tab must not do each frame).
    pub fn not_counted(&self) -> super::NotCounted {
        *self
            .not_counted
            .get_or_init(|| super::not_counted(&self.data))
    }

    /// The roles advice for `ranks` data-parallel ranks with its levers replayed
    /// ([`super::advice_replayed`]); kept for the last rank count asked (it replays the run).
    pub fn advice(&self, ranks: usize) -> Arc<Vec<super::Advice>> {
        if let Some(a) = self.advice_ready(ranks) {
            return a;
        }
        let advice = Arc::new(super::advice_replayed(self, ranks));
        if let Ok(mut slot) = self.advice.lock() {
            *slot = Some((ranks, Arc::clone(&advice)));
        }
        advice
    }

    /// [`RankView::advice`] when it is computed for `ranks` already.
    pub fn advice_ready(&self, ranks: usize) -> Option<Arc<Vec<super::Advice>>> {
        let slot = self.advice.lock().ok()?;
        slot.as_ref()
            .filter(|(n, _)| *n == ranks)
            .map(|(_, a)| Arc::clone(a))
    }

    /// The blocks' events in replay order, for the what-if replay (sorted once).
    pub fn event_order(&self) -> &super::whatif::EventOrder {
        self.event_order
            .get_or_init(|| super::whatif::EventOrder::new(&self.data, self.operator_allocated()))
    }

    /// The time span (ns from origin) covered by the rank's curves and allocations (computed
    /// once: it scans every allocation).
    pub fn time_extent(&self) -> (i64, i64) {
        *self.extent.get_or_init(|| self.compute_extent())
    }

    fn compute_extent(&self) -> (i64, i64) {
        let d = &self.data;
        let o = d.time_origin_ns;
        let mut lo = i64::MAX;
        let mut hi = i64::MIN;
        let mut see = |t: i64| {
            if t != NULL {
                lo = lo.min(t.saturating_sub(o));
                hi = hi.max(t.saturating_sub(o));
            }
        };
        if let (Some(&a), Some(&b)) = (d.records.time_ns.first(), d.records.time_ns.last()) {
            see(a);
            see(b);
        }
        for &t in d
            .operators
            .alloc_time
            .iter()
            .chain(&d.operators.release_time)
        {
            see(t);
        }
        if lo > hi {
            (0, 1)
        } else {
            (lo, hi.max(lo.saturating_add(1)))
        }
    }
}
