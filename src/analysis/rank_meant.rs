//! The rank a user means when they name none: the device rank with the highest peak.
//!
//! A PyTorch trace holds a device rank and a CPU pseudo-rank, an msMemScope dump host ranks
//! beside its NPUs: answering about the host's few KB when the user asked about their model is
//! a silently wrong answer. The CLI, `explain`, the Python API, MCP and the app all take the
//! rank this module names (one rule), and say which they took.

use super::{GroupBy, OverallCurve, is_host_device, series_peaks};
use crate::model::RankData;

/// One rank as the rule sees it: whether its memory is the host's, and its Operator Allocated
/// peak in bytes when known (not yet loaded, or no memory data: `None`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Seen {
    /// The rank's device is the host (`cpu`, `host`).
    pub host: bool,
    /// Its peak, bytes.
    pub peak: Option<i64>,
}

impl Seen {
    /// A rank seen through its summary: its device's name and its peak in MiB (as
    /// `inspect --json` and the overview carry them).
    pub fn of(device: Option<&str>, peak_mib: Option<f64>) -> Seen {
        Seen {
            host: is_host_device(device),
            peak: peak_mib.map(|m| (m * crate::model::MIB as f64).round() as i64),
        }
    }
}

/// The ranks the rule chooses among: the device ranks, or every rank when all are the host's.
pub fn candidates(devices: &[Option<&str>]) -> Vec<usize> {
    let on_device: Vec<usize> = (0..devices.len())
        .filter(|&i| !is_host_device(devices[i]))
        .collect();
    if on_device.is_empty() {
        (0..devices.len()).collect()
    } else {
        on_device
    }
}

/// How many ranks a job's data parallelism spans: its device ranks (a PyTorch trace's CPU
/// pseudo-rank is not one), or every rank when all are the host's.
pub fn parallel_ranks(devices: &[Option<&str>]) -> usize {
    candidates(devices).len()
}

/// The index of the rank a user means among `ranks`: of the [`candidates`], the one with the
/// highest peak (the first on ties; a rank with a peak before one without); `None` for none.
pub fn rank_meant(ranks: &[Seen]) -> Option<usize> {
    let devices: Vec<Option<&str>> = ranks
        .iter()
        .map(|r| if r.host { Some("host") } else { None })
        .collect();
    candidates(&devices)
        .into_iter()
        .max_by(|&i, &j| ranks[i].peak.cmp(&ranks[j].peak).then_with(|| j.cmp(&i)))
}

/// A loaded rank's Operator Allocated peak, bytes (`None` without memory data).
pub fn allocated_peak(data: &RankData) -> Option<i64> {
    series_peaks(data, GroupBy::Overall)
        .into_iter()
        .find(|(name, _)| name == OverallCurve::OperatorAllocated.label())
        .map(|(_, p)| p.value)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn seen(host: bool, peak: Option<i64>) -> Seen {
        Seen { host, peak }
    }

    #[test]
    fn the_device_rank_wins_over_a_larger_host_rank() {
        let ranks = [seen(true, Some(900)), seen(false, Some(5))];
        assert_eq!(rank_meant(&ranks), Some(1));
    }

    #[test]
    fn the_highest_device_peak_wins_and_the_first_on_ties() {
        let ranks = [
            seen(false, Some(5)),
            seen(false, Some(9)),
            seen(true, Some(50)),
            seen(false, Some(9)),
        ];
        assert_eq!(rank_meant(&ranks), Some(1));
        let unknown = [seen(false, None), seen(false, Some(0))];
        assert_eq!(rank_meant(&unknown), Some(1));
    }

    #[test]
    fn all_host_ranks_are_chosen_among_and_none_is_none() {
        let ranks = [seen(true, Some(1)), seen(true, Some(3))];
        assert_eq!(rank_meant(&ranks), Some(1));
        assert_eq!(rank_meant(&[]), None);
        assert_eq!(candidates(&[Some("cpu"), Some("0"), None]), vec![1, 2]);
    }
}
