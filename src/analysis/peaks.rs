//! Peaks: the maximum of a step series with its time, earliest on ties.

use super::series::Series;

/// A peak: the value (bytes) and when it is first reached (ns from the rank origin).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Peak {
    /// Peak value, bytes.
    pub value: i64,
    /// First time the value is reached, ns from the rank origin.
    pub time: i64,
}

/// The peak over the whole series; `None` for an empty series.
pub fn peak(series: &Series) -> Option<Peak> {
    let mut best: Option<Peak> = None;
    for (&t, &v) in series.times.iter().zip(&series.values) {
        if best.is_none_or(|b| v > b.value) {
            best = Some(Peak { value: v, time: t });
        }
    }
    best
}

/// The peak within `[t0, t1]` (ns from origin). The value held at `t0` from an earlier sample
/// counts, at time `t0`, unless a sample at exactly `t0` replaces it: it is on screen there.
pub fn peak_in_window(series: &Series, t0: i64, t1: i64) -> Option<Peak> {
    if t1 < t0 {
        return None;
    }
    let start = series.times.partition_point(|&t| t < t0);
    let end = series.times.partition_point(|&t| t <= t1);
    let mut best: Option<Peak> = None;
    let sample_at_t0 = series.times.get(start) == Some(&t0);
    if start > 0 && !sample_at_t0 {
        best = Some(Peak {
            value: series.values[start - 1],
            time: t0,
        });
    }
    for i in start..end {
        let v = series.values[i];
        if best.is_none_or(|b| v > b.value) {
            best = Some(Peak {
                value: v,
                time: series.times[i],
            });
        }
    }
    best
}

/// The component peak table's threshold: components below 100 MiB are left out (as Insight).
pub const COMPONENT_PEAK_MIN_BYTES: i64 = 100 * crate::model::MIB;

/// One row of the Component mode table (from npu_module_mem).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ComponentPeak {
    /// CANN component (module) name.
    pub component: String,
    /// Peak Total Reserved, bytes.
    pub peak: i64,
    /// First time the peak is reached, ns from the rank origin.
    pub time: i64,
}

/// Components whose peak reserved is ≥ [`COMPONENT_PEAK_MIN_BYTES`], largest first (ties by name),
/// each with the first time its peak is reached. Values are compared as numbers (the peer
/// TensorBoard plugin compares them as strings and reports 95 MB over 1200 MB).
pub fn component_peaks(data: &crate::model::RankData) -> Vec<ComponentPeak> {
    let m = &data.modules;
    let mut best: Vec<Option<(i64, i64)>> = vec![None; data.strings.len()];
    for i in 0..m.len() {
        let v = m.reserved[i];
        if v == crate::model::NULL {
            continue;
        }
        let slot = &mut best[m.component[i] as usize];
        if slot.is_none_or(|(bv, _)| v > bv) {
            *slot = Some((v, m.time_ns[i]));
        }
    }
    let mut out: Vec<ComponentPeak> = best
        .into_iter()
        .enumerate()
        .filter_map(|(id, b)| {
            let (peak, t) = b?;
            (peak >= COMPONENT_PEAK_MIN_BYTES).then(|| ComponentPeak {
                component: data.strings.get(id as u32).to_string(),
                peak,
                time: data.rel_ns(t),
            })
        })
        .collect();
    out.sort_by(|a, b| {
        b.peak
            .cmp(&a.peak)
            .then_with(|| a.component.cmp(&b.component))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(points: &[(i64, i64)]) -> Series {
        Series {
            times: points.iter().map(|p| p.0).collect(),
            values: points.iter().map(|p| p.1).collect(),
            ..Series::new("x")
        }
    }

    #[test]
    fn earliest_time_wins_ties() {
        let x = s(&[(0, 1), (5, 9), (7, 3), (9, 9)]);
        assert_eq!(peak(&x), Some(Peak { value: 9, time: 5 }));
        assert_eq!(peak(&s(&[])), None);
    }

    #[test]
    fn window_peak_includes_the_value_held_into_the_window() {
        let x = s(&[(0, 10), (5, 2), (8, 4)]);
        assert_eq!(peak_in_window(&x, 3, 9), Some(Peak { value: 10, time: 3 }));
        assert_eq!(peak_in_window(&x, 6, 9), Some(Peak { value: 4, time: 8 }));
        assert_eq!(peak_in_window(&x, 5, 5), Some(Peak { value: 2, time: 5 }));
        assert_eq!(peak_in_window(&x, -5, -1), None);
        assert_eq!(peak_in_window(&x, 9, 1), None);
    }
}

/// A column of the component peak table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComponentColumn {
    /// The component's name.
    Component,
    /// Its peak reserved memory.
    Peak,
    /// When the peak is first reached.
    Time,
}

impl ComponentColumn {
    /// The columns in display order.
    pub const ALL: [ComponentColumn; 3] = [
        ComponentColumn::Component,
        ComponentColumn::Peak,
        ComponentColumn::Time,
    ];

    /// The header, as in Insight.
    pub fn header(self) -> &'static str {
        match self {
            ComponentColumn::Component => "Component",
            ComponentColumn::Peak => "Peak Memory Reserved(MB)",
            ComponentColumn::Time => "Timestamp(ms)",
        }
    }
}

/// Row order of the component table under `sort` (stable: ties keep the default order, which is
/// largest peak first).
pub fn component_order(
    rows: &[ComponentPeak],
    sort: Option<(ComponentColumn, super::SortDir)>,
) -> Vec<usize> {
    let mut order: Vec<usize> = (0..rows.len()).collect();
    if let Some((col, dir)) = sort {
        order.sort_by(|&a, &b| {
            let (x, y) = (&rows[a], &rows[b]);
            let o = match col {
                ComponentColumn::Component => x.component.cmp(&y.component),
                ComponentColumn::Peak => x.peak.cmp(&y.peak),
                ComponentColumn::Time => x.time.cmp(&y.time),
            };
            if dir == super::SortDir::Desc {
                o.reverse()
            } else {
                o
            }
        });
    }
    order
}
