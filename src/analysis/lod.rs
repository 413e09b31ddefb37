//! Level of detail for big curves (DESIGN.md "Drawing big curves").
//!
//! A [`LodSeries`] owns a series plus a min/max pyramid built once: level 0 holds the arg-min and
//! arg-max of each block of [`BASE`] samples, level j of blocks of `BASE * 2^j`. A range min/max
//! is then a few block lookups plus at most `2 * BASE` raw samples, so reducing any window costs
//! O(pixels · log n), not O(n).
//!
//! - Exact mode (window holds ≤ `threshold` points): per pixel column, the first, min, max and
//!   last sample (M4). Rasterised at that width this draws exactly what every point would.
//! - Sampled mode (more): MinMaxLTTB, M4 over 2× as many columns and then LTTB down to about
//!   two points per pixel, with the window's minimum and maximum always kept.
//!
//! Both add the last sample before the window and the first after it, so step lines enter and
//! leave the window correctly.

use super::series::Series;

/// Samples per level-0 block.
pub const BASE: usize = 64;

/// The default exact-mode limit (points in the visible window).
pub const DEFAULT_THRESHOLD: usize = 3_000_000;

/// A series with its min/max pyramid.
#[derive(Debug, Clone)]
pub struct LodSeries {
    /// The full series.
    pub series: Series,
    /// `levels[j][b]` = (index of min, index of max) over block `b` of `BASE << j` samples.
    levels: Vec<Vec<(u32, u32)>>,
    /// The time of each block's first sample: a small index that keeps time searches in cache.
    block_times: Vec<i64>,
}

/// What a window reduces to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reduced {
    /// Times (ns from origin), non-decreasing.
    pub times: Vec<i64>,
    /// Values (bytes).
    pub values: Vec<i64>,
    /// True when LTTB sampling was used (more points than the threshold).
    pub sampled: bool,
    /// Points of the full series inside the window.
    pub visible: usize,
}

impl LodSeries {
    /// Builds the pyramid (O(n), once).
    pub fn new(series: Series) -> LodSeries {
        let v = &series.values;
        let mut levels = Vec::new();
        if v.len() >= BASE {
            let mut level: Vec<(u32, u32)> = v
                .chunks_exact(BASE)
                .enumerate()
                .map(|(b, chunk)| {
                    let (mut lo, mut hi) = (0, 0);
                    for (i, &x) in chunk.iter().enumerate() {
                        if x < chunk[lo] {
                            lo = i;
                        }
                        if x > chunk[hi] {
                            hi = i;
                        }
                    }
                    ((b * BASE + lo) as u32, (b * BASE + hi) as u32)
                })
                .collect();
            while level.len() > 1 {
                let next: Vec<(u32, u32)> = level
                    .chunks_exact(2)
                    .map(|p| (better_min(v, p[0].0, p[1].0), better_max(v, p[0].1, p[1].1)))
                    .collect();
                levels.push(level);
                level = next;
            }
            levels.push(level);
        }
        let block_times = series.times.iter().step_by(BASE).copied().collect();
        LodSeries {
            series,
            levels,
            block_times,
        }
    }

    /// The first index in `[lo, hi)` whose time is ≥ `t` (`hi` if none): a search of the block
    /// index, then of one block.
    fn first_at_or_after(&self, t: i64, lo: usize, hi: usize) -> usize {
        let times = &self.series.times;
        let b = self.block_times.partition_point(|&x| x < t);
        // The answer lies in block b - 1 (whose first time is < t) or is block b's first sample.
        let from = (b.saturating_sub(1) * BASE).max(lo);
        let to = (b * BASE + 1).min(hi).max(from);
        let i = from + times[from..to].partition_point(|&x| x < t);
        i.clamp(lo, hi)
    }

    /// The series' peak (earliest on ties), from the pyramid: O(log n).
    pub fn peak(&self) -> Option<super::Peak> {
        let (_, mx) = self.range_min_max(0, self.series.len())?;
        Some(super::Peak {
            value: self.series.values[mx],
            time: self.series.times[mx],
        })
    }

    /// Indices of the min and max sample in `[a, b)` (earliest on ties); `None` when empty.
    pub fn range_min_max(&self, a: usize, b: usize) -> Option<(usize, usize)> {
        let v = &self.series.values;
        let b = b.min(v.len());
        if a >= b {
            return None;
        }
        let mut lo = a as u32;
        let mut hi = a as u32;
        let mut take = |i: u32, j: u32| {
            lo = better_min(v, lo, i);
            hi = better_max(v, hi, j);
        };
        let mut i = a;
        // Raw samples up to the first block boundary.
        while i < b && !i.is_multiple_of(BASE) {
            take(i as u32, i as u32);
            i += 1;
        }
        let mut block = i / BASE;
        let end_block = b / BASE;
        while block < end_block && !self.levels.is_empty() {
            // The largest aligned block that fits.
            let mut j = 0;
            while j + 1 < self.levels.len()
                && block.is_multiple_of(2 << j)
                && block + (2 << j) <= end_block
            {
                j += 1;
            }
            let (mn, mx) = self.levels[j][block >> j];
            take(mn, mx);
            block += 1 << j;
        }
        i = i.max(block * BASE);
        while i < b {
            take(i as u32, i as u32);
            i += 1;
        }
        Some((lo as usize, hi as usize))
    }

    /// Reduces the window `[t0, t1]` (ns from origin) for a chart `width_px` pixels wide.
    pub fn reduce(&self, t0: i64, t1: i64, width_px: usize, threshold: usize) -> Reduced {
        let s = &self.series;
        let width = width_px.max(1);
        let start = s.times.partition_point(|&t| t < t0);
        let end = s.times.partition_point(|&t| t <= t1);
        let visible = end.saturating_sub(start);
        let mut idx: Vec<usize> = Vec::new();
        if start > 0 {
            idx.push(start - 1); // the value held into the window
        }
        let sampled = visible > threshold;
        if visible > 0 {
            let columns = if sampled { width * 2 } else { width };
            let m4 = self.m4(start, end, t0, t1, columns);
            if sampled {
                let (mn, mx) = self.range_min_max(start, end).unwrap_or((start, start));
                let mut kept = lttb(s, &m4, width * 2);
                kept.extend([mn, mx]);
                kept.sort_unstable();
                kept.dedup();
                idx.extend(kept);
            } else {
                idx.extend(m4);
            }
        }
        if end < s.len() {
            idx.push(end); // where the line leaves the window
        }
        Reduced {
            times: idx.iter().map(|&i| s.times[i]).collect(),
            values: idx.iter().map(|&i| s.values[i]).collect(),
            sampled,
            visible,
        }
    }

    /// First, min, max and last index of each of `columns` equal time slices of `[t0, t1]`,
    /// restricted to samples `[start, end)`, in index order. Columns run in parallel.
    fn m4(&self, start: usize, end: usize, t0: i64, t1: i64, columns: usize) -> Vec<usize> {
        use rayon::prelude::*;
        let span = (t1 as i128 - t0 as i128).max(1);
        // Column c holds t with floor((t - t0) * columns / span) == c, so each edge is a ceiling.
        let edges: Vec<usize> = (0..columns + 1)
            .into_par_iter()
            .with_min_len(256)
            .map(|c| {
                if c == 0 {
                    return start;
                }
                if c == columns {
                    return end;
                }
                let edge = t0 as i128 + (span * c as i128 + columns as i128 - 1) / columns as i128;
                let edge = edge.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
                self.first_at_or_after(edge, start, end)
            })
            .collect();
        edges
            .par_windows(2)
            .with_min_len(256)
            .flat_map_iter(|w| {
                let (a, b) = (w[0], w[1]);
                let mut four = [usize::MAX; 4];
                if b > a {
                    let (mn, mx) = self.range_min_max(a, b).unwrap_or((a, a));
                    four = [a, mn, mx, b - 1];
                    four.sort_unstable();
                }
                let mut prev = usize::MAX;
                four.into_iter().filter(move |&i| {
                    let keep = i != usize::MAX && i != prev;
                    prev = i;
                    keep
                })
            })
            .collect()
    }
}

fn better_min(v: &[i64], a: u32, b: u32) -> u32 {
    let (x, y) = (v[a as usize], v[b as usize]);
    if y < x || (y == x && b < a) { b } else { a }
}

fn better_max(v: &[i64], a: u32, b: u32) -> u32 {
    let (x, y) = (v[a as usize], v[b as usize]);
    if y > x || (y == x && b < a) { b } else { a }
}

/// Largest-Triangle-Three-Buckets over the candidate indices, down to `n_out` of them.
fn lttb(s: &Series, cand: &[usize], n_out: usize) -> Vec<usize> {
    if cand.len() <= n_out || n_out < 3 {
        return cand.to_vec();
    }
    let x = |i: usize| s.times[cand[i]] as f64;
    let y = |i: usize| s.values[cand[i]] as f64;
    let mut out = Vec::with_capacity(n_out);
    out.push(cand[0]);
    let every = (cand.len() - 2) as f64 / (n_out - 2) as f64;
    let mut a = 0usize;
    for k in 0..n_out - 2 {
        let b_lo = (k as f64 * every) as usize + 1;
        let b_hi = (((k + 1) as f64 * every) as usize + 1).min(cand.len() - 1);
        let n_lo = b_hi;
        let n_hi = (((k + 2) as f64 * every) as usize + 1).min(cand.len());
        let (mut avg_x, mut avg_y) = (0.0, 0.0);
        let n = (n_hi - n_lo).max(1) as f64;
        for i in n_lo..n_hi.max(n_lo + 1).min(cand.len()) {
            avg_x += x(i);
            avg_y += y(i);
        }
        avg_x /= n;
        avg_y /= n;
        let (ax, ay) = (x(a), y(a));
        let mut best = b_lo;
        let mut best_area = -1.0;
        for i in b_lo..b_hi.max(b_lo + 1) {
            let area = ((ax - avg_x) * (y(i) - ay) - (ax - x(i)) * (avg_y - ay)).abs();
            if area > best_area {
                best_area = area;
                best = i;
            }
        }
        out.push(cand[best]);
        a = best;
    }
    out.push(cand[cand.len() - 1]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(n: usize, seed: u64) -> Series {
        let mut x = seed | 1;
        let mut v = 0i64;
        let mut t = 0i64;
        let (mut times, mut values) = (Vec::new(), Vec::new());
        for _ in 0..n {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            t += (x % 5) as i64; // repeated times happen
            v += (x % 2001) as i64 - 1000;
            times.push(t);
            values.push(v);
        }
        Series {
            times,
            values,
            ..Series::new("s")
        }
    }

    #[test]
    fn range_min_max_matches_a_scan() {
        let l = LodSeries::new(series(10_000, 3));
        let v = &l.series.values;
        for (a, b) in [
            (0, 10_000),
            (1, 2),
            (63, 65),
            (64, 128),
            (5, 9_999),
            (4_000, 4_700),
            (9_990, 10_000),
        ] {
            let (mn, mx) = l.range_min_max(a, b).unwrap();
            let want_mn = (a..b).min_by_key(|&i| (v[i], i)).unwrap();
            let want_mx = (a..b)
                .max_by_key(|&i| (v[i], std::cmp::Reverse(i)))
                .unwrap();
            assert_eq!((mn, mx), (want_mn, want_mx), "[{a}, {b})");
        }
        assert_eq!(l.range_min_max(5, 5), None);
    }

    /// Per-pixel-column (min, max) of the samples inside [t0, t1].
    fn raster(
        times: &[i64],
        values: &[i64],
        t0: i64,
        t1: i64,
        w: usize,
    ) -> Vec<Option<(i64, i64)>> {
        let mut cols = vec![None; w];
        let span = (t1 - t0).max(1) as i128;
        for (&t, &v) in times.iter().zip(values) {
            if t < t0 || t > t1 {
                continue;
            }
            let c = (((t - t0) as i128 * w as i128) / span).min(w as i128 - 1) as usize;
            cols[c] = Some(match cols[c] {
                None => (v, v),
                Some((lo, hi)) => (v.min(lo), v.max(hi)),
            });
        }
        cols
    }

    #[test]
    fn exact_mode_rasterises_like_the_full_series() {
        let l = LodSeries::new(series(50_000, 11));
        let s = &l.series;
        let last = *s.times.last().unwrap();
        for (t0, t1, w) in [
            (0, last, 800),
            (last / 3, last / 2, 311),
            (10, 20, 1000),
            (0, last, 1),
        ] {
            let r = l.reduce(t0, t1, w, DEFAULT_THRESHOLD);
            assert!(!r.sampled);
            assert!(r.times.windows(2).all(|p| p[0] <= p[1]), "monotone");
            let (got, want) = (
                raster(&r.times, &r.values, t0, t1, w),
                raster(&s.times, &s.values, t0, t1, w),
            );
            let diff = got.iter().zip(&want).position(|(a, b)| a != b);
            assert!(
                diff.is_none(),
                "[{t0}, {t1}] @ {w}: column {diff:?} differs"
            );
            assert!(r.times.len() <= 4 * w + 2);
        }
    }

    #[test]
    fn sampled_mode_keeps_the_extremes_and_is_small() {
        let l = LodSeries::new(series(200_000, 5));
        let s = &l.series;
        let (t0, t1) = (s.times[1000], s.times[150_000]);
        let r = l.reduce(t0, t1, 500, 10_000);
        assert!(r.sampled);
        assert!(r.times.windows(2).all(|p| p[0] <= p[1]));
        let a = s.times.partition_point(|&t| t < t0);
        let b = s.times.partition_point(|&t| t <= t1);
        let max = s.values[a..b].iter().max().unwrap();
        let min = s.values[a..b].iter().min().unwrap();
        assert!(r.values.contains(max) && r.values.contains(min));
        assert!(r.times.len() <= 2 * 500 + 4, "{}", r.times.len());
        assert_eq!(r.visible, b - a);
    }

    #[test]
    fn pyramid_peak_equals_the_scan() {
        for n in [1, 63, 64, 1000, 50_000] {
            let l = LodSeries::new(series(n, n as u64));
            assert_eq!(l.peak(), crate::analysis::peak(&l.series), "n = {n}");
        }
    }

    #[test]
    fn empty_and_tiny_windows() {
        let l = LodSeries::new(series(1_000, 9));
        let r = l.reduce(-100, -50, 100, DEFAULT_THRESHOLD);
        assert_eq!(r.visible, 0);
        assert_eq!(r.times.len(), 1, "only the first sample after the window");
        let e = LodSeries::new(Series::new("e"));
        let r = e.reduce(0, 10, 100, DEFAULT_THRESHOLD);
        assert!(r.times.is_empty() && !r.sampled);
        let r = l.reduce(5, 4, 100, DEFAULT_THRESHOLD);
        assert_eq!(r.visible, 0);
    }
}
