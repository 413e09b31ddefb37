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
}
