//! How a quantity spreads over ranks: max and min (with the rank), mean, range, and outliers by
//! the interquartile rule (beyond 1.5 × IQR from the quartiles, with 4 ranks or more).

/// The spread of `(rank index, value)` pairs.
#[derive(Debug, Clone, PartialEq)]
pub struct Spread {
    /// (index, value) of the largest value (the first on ties).
    pub max: (usize, f64),
    /// (index, value) of the smallest value (the first on ties).
    pub min: (usize, f64),
    /// Mean of the values.
    pub mean: f64,
    /// `max − min`.
    pub range: f64,
    /// Indices whose value is an outlier, in input order.
    pub outliers: Vec<usize>,
}

/// The spread of `values`; `None` when there are none (non-finite values are ignored).
pub fn spread(values: &[(usize, f64)]) -> Option<Spread> {
    let v: Vec<(usize, f64)> = values.iter().copied().filter(|p| p.1.is_finite()).collect();
    let first = *v.first()?;
    let (mut max, mut min) = (first, first);
    for &p in &v[1..] {
        if p.1 > max.1 {
            max = p;
        }
        if p.1 < min.1 {
            min = p;
        }
    }
    let mean = v.iter().map(|p| p.1).sum::<f64>() / v.len() as f64;
    let mut outliers = Vec::new();
    if v.len() >= 4 {
        let mut sorted: Vec<f64> = v.iter().map(|p| p.1).collect();
        sorted.sort_by(f64::total_cmp);
        let q = |f: f64| {
            // Linear interpolation between closest ranks (type 7, as numpy's default).
            let pos = f * (sorted.len() - 1) as f64;
            let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
            sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
        };
        let (q1, q3) = (q(0.25), q(0.75));
        let iqr = q3 - q1;
        outliers = v
            .iter()
            .filter(|p| p.1 > q3 + 1.5 * iqr || p.1 < q1 - 1.5 * iqr)
            .map(|p| p.0)
            .collect();
    }
    Some(Spread {
        max,
        min,
        mean,
        range: max.1 - min.1,
        outliers,
    })
}

/// Whether a rank's device holds host memory (msMemScope's `cpu` ranks: `HOST` pools and
/// `Device Id` `host`), which is no peer of the accelerators' ranks.
pub fn is_host_device(device: Option<&str>) -> bool {
    device.is_some_and(|d| d.eq_ignore_ascii_case("cpu") || d.eq_ignore_ascii_case("host"))
}

/// The spread of the accelerators' ranks alone (`host(i)`: rank `i` is host memory), or of all
/// of them when every rank is host memory: a host rank's few KB made every NPU rank's peak
/// look high and the host ranks the minimum.
pub fn device_spread(values: &[(usize, f64)], host: impl Fn(usize) -> bool) -> Option<Spread> {
    let devices: Vec<(usize, f64)> = values.iter().copied().filter(|p| !host(p.0)).collect();
    if devices.is_empty() {
        spread(values)
    } else {
        spread(&devices)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_min_mean_range_and_the_one_rank_that_stands_out() {
        let v: Vec<(usize, f64)> = [10.0, 11.0, 10.5, 30.0, 10.2, 9.8, 10.1, 10.4]
            .into_iter()
            .enumerate()
            .collect();
        let s = spread(&v).unwrap();
        assert_eq!(s.max, (3, 30.0));
        assert_eq!(s.min, (5, 9.8));
        assert!((s.mean - 102.0 / 8.0).abs() < 1e-12);
        assert!((s.range - 20.2).abs() < 1e-12);
        assert_eq!(s.outliers, vec![3]);
        // Three ranks are too few to call one an outlier; none at all gives nothing.
        assert!(spread(&v[..3]).unwrap().outliers.is_empty());
        assert!(spread(&[]).is_none());
    }

    #[test]
    fn host_ranks_stay_out_of_the_devices_spread() {
        // Four NPU ranks of 100 MB and one at 130 (an outlier among them), two host ranks of 0.
        let values = [
            (0, 100.0),
            (1, 101.0),
            (2, 99.0),
            (3, 100.0),
            (4, 130.0),
            (5, 0.0),
            (6, 0.0),
        ];
        let s = device_spread(&values, |i| i >= 5).unwrap();
        assert_eq!(s.min, (2, 99.0));
        assert_eq!(s.mean, (100.0 + 101.0 + 99.0 + 100.0 + 130.0) / 5.0);
        assert_eq!(s.outliers, vec![4]);
        // All host: their own spread.
        let all = device_spread(&values[5..], |_| true).unwrap();
        assert_eq!(all.max.1, 0.0);
        assert!(is_host_device(Some("cpu")) && !is_host_device(Some("0")) && !is_host_device(None));
    }
}
