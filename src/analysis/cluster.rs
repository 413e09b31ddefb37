//! Across the ranks of a cluster summary: each step's peak over the ranks (lowest, median,
//! highest and whose), each rank's growth over its steps (the leak suspects), and the matching of
//! two summaries rank by rank (before and after a change).

use std::collections::{BTreeMap, HashMap};

use crate::model::cluster::ClusterRank;

/// A rank whose step-end value rose this many steps in a row is a leak suspect (as
/// `memsight steps` calls a growth run).
pub const LEAK_RISES: usize = 3;

/// The least rise, MiB, that counts across a cluster: `memsight steps` counts any rise in one
/// rank, but among 1,000 ranks allocator noise of a few KB rises three times in a row somewhere.
pub const LEAK_MIN_RISE_MIB: f64 = 1.0;

/// One step across the ranks that have it.
#[derive(Debug, Clone, PartialEq)]
pub struct StepAcross {
    /// Step number.
    pub step: i64,
    /// Ranks with a peak in this step.
    pub ranks: usize,
    /// The lowest peak: (rank index, MiB).
    pub min: (usize, f64),
    /// The median peak, MiB (the mean of the two middle ones for an even count).
    pub median: f64,
    /// The highest peak: (rank index, MiB).
    pub max: (usize, f64),
}

/// Each step's Operator Allocated peak over the ranks, in step order.
pub fn steps_across(ranks: &[ClusterRank]) -> Vec<StepAcross> {
    let mut by_step: BTreeMap<i64, Vec<(usize, f64)>> = BTreeMap::new();
    for (i, r) in ranks.iter().enumerate() {
        for s in &r.steps {
            if let Some(p) = s.peak_allocated_mib.filter(|p| p.is_finite()) {
                by_step.entry(s.step).or_default().push((i, p));
            }
        }
    }
    by_step
        .into_iter()
        .filter_map(|(step, mut v)| {
            // Ties go to the lower rank index, so the answer does not depend on sort stability.
            v.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
            let (&min, &max) = (v.first()?, v.last()?);
            let max = v.iter().copied().find(|p| p.1 == max.1).unwrap_or(max);
            let n = v.len();
            let median = if n % 2 == 1 {
                v[n / 2].1
            } else {
                (v[n / 2 - 1].1 + v[n / 2].1) / 2.0
            };
            Some(StepAcross {
                step,
                ranks: n,
                min,
                median,
                max,
            })
        })
        .collect()
}

/// How a rank's memory at step ends moved over its steps.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Growth {
    /// Operator Allocated at the last step's end minus at the first's, MiB.
    pub mib: f64,
    /// The longest run of steps whose end value rose by [`LEAK_MIN_RISE_MIB`] or more over the
    /// step before.
    pub rises: usize,
    /// A run of [`LEAK_RISES`] rises whose growth every later step keeps (at least half of
    /// it, as `memsight steps` requires): a rise a later step gives back is no leak.
    pub kept: bool,
}

impl Growth {
    /// Rose [`LEAK_RISES`] steps in a row, kept that growth to the end, and ended higher than
    /// it began.
    pub fn is_leak_suspect(&self) -> bool {
        self.rises >= LEAK_RISES && self.kept && self.mib > 0.0
    }
}

/// A rank's growth over its steps; `None` with fewer than two step-end values.
pub fn growth(rank: &ClusterRank) -> Option<Growth> {
    let ends: Vec<f64> = rank
        .steps
        .iter()
        .filter_map(|s| s.end_allocated_mib)
        .filter(|v| v.is_finite())
        .collect();
    let (first, last) = (*ends.first()?, *ends.last()?);
    if ends.len() < 2 {
        return None;
    }
    let (mut run, mut rises, mut kept) = (0usize, 0usize, false);
    for (k, w) in ends.windows(2).enumerate() {
        run = if w[1] - w[0] >= LEAK_MIN_RISE_MIB {
            run + 1
        } else {
            0
        };
        rises = rises.max(run);
        if run >= LEAK_RISES {
            // The run from step k + 1 − run to k + 1: is half its rise held at every later end?
            let (base, top) = (ends[k + 1 - run], w[1]);
            kept |= ends[k + 1..].iter().all(|e| 2.0 * (e - base) >= top - base);
        }
    }
    Some(Growth {
        mib: last - first,
        rises,
        kept,
    })
}

/// What stands out across a cluster's ranks, by one rule that the app's overview and
/// `explain` both show: the outliers of the device ranks' peaks (the interquartile rule,
/// [`super::device_spread`]), highest peak first; the leak suspects ([`Growth::is_leak_suspect`]),
/// most growth first; and the ranks that failed.
#[derive(Debug, Clone, PartialEq)]
pub struct Findings {
    /// The spread of the device ranks' Operator Allocated peaks.
    pub spread: Option<super::Spread>,
    /// The outliers (indices into the ranks), highest peak first.
    pub outliers: Vec<usize>,
    /// Each rank's growth over its steps.
    pub growth: Vec<Option<Growth>>,
    /// The leak suspects, most growth first (the first index on ties).
    pub leak_suspects: Vec<usize>,
    /// The ranks recorded with an error, in the summary's order.
    pub failed: Vec<usize>,
}

/// The [`Findings`] of `ranks`.
pub fn findings(ranks: &[ClusterRank]) -> Findings {
    let peaks: Vec<(usize, f64)> = ranks
        .iter()
        .enumerate()
        .filter_map(|(i, r)| Some((i, r.peak_allocated_mib?)))
        .collect();
    let host = |i: usize| super::is_host_device(ranks[i].identity.device.as_deref());
    let spread = super::device_spread(&peaks, host);
    let peak = |i: usize| ranks[i].peak_allocated_mib.unwrap_or(0.0);
    let mut outliers = spread
        .as_ref()
        .map_or_else(Vec::new, |s| s.outliers.clone());
    outliers.sort_by(|&a, &b| peak(b).total_cmp(&peak(a)).then(a.cmp(&b)));
    let growth: Vec<Option<Growth>> = ranks.iter().map(growth).collect();
    let mut leaks: Vec<(usize, f64)> = growth
        .iter()
        .enumerate()
        .filter_map(|(i, g)| g.filter(Growth::is_leak_suspect).map(|g| (i, g.mib)))
        .collect();
    leaks.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
    Findings {
        spread,
        outliers,
        growth,
        leak_suspects: leaks.into_iter().map(|p| p.0).collect(),
        failed: (0..ranks.len())
            .filter(|&i| ranks[i].error.is_some())
            .collect(),
    }
}

/// For each rank of `now`, the rank of `before` that is the same rank: the same rank id and
/// device (on the same host when `before` has that rank on several hosts). Each rank of
/// `before` matches at most once.
pub fn match_ranks(now: &[ClusterRank], before: &[ClusterRank]) -> Vec<Option<usize>> {
    let mut by_key: HashMap<(&str, Option<&str>), Vec<usize>> = HashMap::new();
    for (j, r) in before.iter().enumerate() {
        by_key
            .entry((r.identity.rank.as_str(), r.identity.device.as_deref()))
            .or_default()
            .push(j);
    }
    let mut used = vec![false; before.len()];
    now.iter()
        .map(|r| {
            let list = by_key.get(&(r.identity.rank.as_str(), r.identity.device.as_deref()))?;
            let free = |j: &&usize| !used[**j];
            let pick = list
                .iter()
                .filter(free)
                .find(|&&j| before[j].identity.host == r.identity.host)
                .or_else(|| list.iter().find(free))
                .copied()?;
            used[pick] = true;
            Some(pick)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::cluster::{RankIdentity, StepRow};

    fn rank(id: &str, host: &str, ends: &[f64], peaks: &[f64]) -> ClusterRank {
        ClusterRank {
            id: 1,
            identity: RankIdentity {
                host: Some(host.into()),
                rank: id.into(),
                device: Some("0".into()),
                path: format!("/p/{host}/{id}"),
                source: "csv".into(),
                format: "torch_npu".into(),
                files: 1,
                files_bytes: 1,
                files_mtime_ns: 0,
            },
            error: None,
            peak_allocated_mib: peaks.iter().copied().reduce(f64::max),
            peak_allocated_at_ms: None,
            peak_reserved_mib: None,
            peak_app_reserved_mib: None,
            unreleased: None,
            steps: ends
                .iter()
                .zip(peaks)
                .enumerate()
                .map(|(k, (&e, &p))| StepRow {
                    step: k as i64 + 1,
                    start_ms: 0.0,
                    end_ms: 1.0,
                    peak_allocated_mib: Some(p),
                    peak_at_ms: None,
                    end_allocated_mib: Some(e),
                    change_mib: None,
                    survivors: 0,
                    survivors_kib: 0.0,
                })
                .collect(),
            top_operator: None,
        }
    }

    #[test]
    fn each_step_has_its_lowest_median_and_highest_rank() {
        let r = [
            rank("0", "a", &[1.0, 1.0], &[10.0, 30.0]),
            rank("1", "a", &[1.0, 1.0], &[20.0, 10.0]),
            rank("2", "b", &[1.0], &[40.0]),
        ];
        let s = steps_across(&r);
        assert_eq!(s.len(), 2);
        assert_eq!(
            (s[0].min, s[0].median, s[0].max),
            ((0, 10.0), 20.0, (2, 40.0))
        );
        assert_eq!(s[0].ranks, 3);
        assert_eq!(
            (s[1].min, s[1].median, s[1].max),
            ((1, 10.0), 20.0, (0, 30.0))
        );
    }

    #[test]
    fn three_rises_in_a_row_make_a_leak_suspect() {
        let g = growth(&rank("0", "a", &[1.0, 2.0, 3.0, 4.0], &[5.0; 4])).unwrap();
        assert_eq!((g.mib, g.rises), (3.0, 3));
        assert!(g.is_leak_suspect());
        let g = growth(&rank("0", "a", &[1.0, 2.0, 1.5, 2.5, 3.5], &[5.0; 5])).unwrap();
        assert_eq!((g.mib, g.rises), (2.5, 2));
        assert!(!g.is_leak_suspect());
        // Rises under a MiB are noise across a cluster.
        let g = growth(&rank("0", "a", &[1.0, 1.5, 2.0, 2.5, 3.0], &[5.0; 5])).unwrap();
        assert_eq!((g.mib, g.rises), (2.0, 0));
        assert!(growth(&rank("0", "a", &[1.0], &[5.0])).is_none());
    }

    /// Issue 43 item 13: +1,714 MB over three steps, then −1,020 MB, ends higher than it began
    /// but gives most of the rise back: no leak. A run the rest keeps is one.
    #[test]
    fn a_rise_a_later_step_gives_back_is_no_leak_suspect() {
        let ends = [1000.0, 1600.0, 2200.0, 2714.0, 1694.0, 1700.0];
        let g = growth(&rank("0", "a", &ends, &[5.0; 6])).unwrap();
        assert_eq!(g.rises, 3);
        assert!(g.mib > 0.0);
        assert!(!g.is_leak_suspect());
        let ends = [1000.0, 1600.0, 2200.0, 2714.0, 2600.0, 2650.0];
        let g = growth(&rank("0", "a", &ends, &[5.0; 6])).unwrap();
        assert!(g.is_leak_suspect());
    }

    #[test]
    fn ranks_match_by_id_and_device_preferring_the_same_host() {
        let now = [
            rank("0", "a", &[], &[]),
            rank("1", "b", &[], &[]),
            rank("9", "a", &[], &[]),
        ];
        let before = [
            rank("1", "a", &[], &[]),
            rank("1", "b", &[], &[]),
            rank("0", "c", &[], &[]),
        ];
        assert_eq!(match_ranks(&now, &before), vec![Some(2), Some(1), None]);
    }
}
