//! An x axis of ranks (one bar per rank at 0, 1, 2, …): a tick under every rank while their
//! labels fit, else under every 2nd, 5th, 10th, … rank, so a bar chart of 8 ranks names each
//! one and one of 1,000 still names some.

use egui_plot::{AxisHints, GridInput, GridMark};

/// Points a character of a tick label takes at most (digits of the body font).
const CHAR_POINTS: f64 = 8.0;

/// Points between two labels at least, beyond the wider label.
const GAP_POINTS: f64 = 10.0;

/// The points a tick needs for the widest of `labels`.
pub fn label_points(labels: &[String]) -> f64 {
    let widest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(1);
    widest.max(1) as f64 * CHAR_POINTS + GAP_POINTS
}

/// Grid marks at whole rank positions, every `step` ranks where `step` (1, 2, 5, 10, 20, …) is
/// the smallest that leaves `label_points` between labels; none when the bounds are not finite.
pub fn rank_grid(input: GridInput, label_points: f64) -> Vec<GridMark> {
    let (lo, hi) = input.bounds;
    if !(lo.is_finite() && hi.is_finite() && hi > lo && input.base_step_size > 0.0) {
        return Vec::new();
    }
    let per_point = input.base_step_size / super::GRID_MIN_POINTS;
    let step = super::nice_step((per_point * label_points).max(1.0));
    let first = (lo.max(0.0) / step).ceil() as i64;
    let last = (hi / step).floor() as i64;
    if last.saturating_sub(first) > 10_000 {
        return Vec::new();
    }
    (first..=last)
        .map(|k| GridMark {
            value: k as f64 * step,
            step_size: step,
        })
        .collect()
}

/// The x axis of a bar per rank: `labels[k]` under bar `k`, titled `title`, labelled as soon as
/// ticks are `label_points` apart (egui_plot's default waits for 60 points).
pub fn rank_axis<'a>(title: &str, labels: Vec<String>) -> (AxisHints<'a>, f64) {
    let points = label_points(&labels);
    let axis = AxisHints::new_x()
        .label(title)
        .formatter(move |m, _| {
            let k = m.value.round();
            if (m.value - k).abs() < 1e-6 && k >= 0.0 {
                labels.get(k as usize).cloned().unwrap_or_default()
            } else {
                String::new()
            }
        })
        .label_spacing((points as f32 - 2.0)..=points as f32);
    (axis, points)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(ranks: f64, width_points: f64, labels: &[String]) -> Vec<f64> {
        let input = GridInput {
            bounds: (-0.5, ranks - 0.5),
            base_step_size: ranks / width_points * super::super::GRID_MIN_POINTS,
        };
        rank_grid(input, label_points(labels))
            .into_iter()
            .map(|m| m.value)
            .collect()
    }

    #[test]
    fn a_few_ranks_each_get_a_tick_and_many_get_one_every_few() {
        let labels = |n: usize| (0..n).map(|k| k.to_string()).collect::<Vec<_>>();
        // 8 ranks over 400 points: 50 points a rank, more than a 1-digit label needs.
        assert_eq!(
            marks(8.0, 400.0, &labels(8)),
            (0..8).map(f64::from).collect::<Vec<_>>()
        );
        // 100 ranks over 400 points: 4 points a rank; labels of 2 digits need 26, so every 10th.
        assert_eq!(
            marks(100.0, 400.0, &labels(100)),
            (0..10).map(|k| f64::from(k) * 10.0).collect::<Vec<_>>()
        );
        // 1,000 ranks over 400 points: 3-digit labels need 34 points, 85 ranks: every 100th.
        let m = marks(1000.0, 400.0, &labels(1000));
        assert_eq!(m.first(), Some(&0.0));
        assert!(
            m.windows(2).all(|w| (w[1] - w[0] - 100.0).abs() < 1e-9),
            "{m:?}"
        );
    }

    #[test]
    fn labels_never_come_closer_than_they_are_wide() {
        for n in [1usize, 3, 12, 64, 257, 1000] {
            let labels: Vec<String> = (0..n).map(|k| k.to_string()).collect();
            let m = marks(n as f64, 300.0, &labels);
            assert!(!m.is_empty(), "{n} ranks get a tick");
            let per_rank = 300.0 / n as f64;
            for w in m.windows(2) {
                assert!((w[1] - w[0]) * per_rank >= label_points(&labels) - 1e-9);
            }
        }
    }
}
