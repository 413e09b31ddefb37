//! Which timestamps are plausible for a rank, decided before its rows are read.
//!
//! One corrupt cell (`-5.5`, `12`, `1e-300` among epoch microseconds) must not move the time
//! origin by 54 years. The window is centred on the median of timestamps sampled across the
//! rank's main file (so no single row chooses it), or is the profiler's own session from
//! `profiler_info_*.json` when that agrees with the data. Readers skip and report every row with
//! a timestamp outside it.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Half the width of a window built from the data alone: a profile spans hours, never weeks.
pub const HALF_WIDTH_NS: i64 = 7 * 24 * 3600 * 1_000_000_000;

/// Margin around the profiler's session (profiler_info's start and end).
pub const SESSION_MARGIN_NS: i64 = 3600 * 1_000_000_000;

/// How many rows are sampled to find the bulk of a file's times.
pub const SAMPLES: usize = 257;

/// The accepted timestamps, ns inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeWindow {
    /// Earliest accepted time.
    pub lo: i64,
    /// Latest accepted time.
    pub hi: i64,
}

impl TimeWindow {
    /// Every time is accepted (no data to judge by).
    pub const ANY: TimeWindow = TimeWindow {
        lo: i64::MIN,
        hi: i64::MAX,
    };

    /// True when `t` is inside the window.
    #[inline]
    pub fn contains(self, t: i64) -> bool {
        self.lo <= t && t <= self.hi
    }

    /// The window for a rank: the session (± [`SESSION_MARGIN_NS`]) when it holds the median of
    /// `samples`, else the median ± [`HALF_WIDTH_NS`]; [`TimeWindow::ANY`] without samples.
    pub fn from_samples(mut samples: Vec<i64>, session: Option<(i64, i64)>) -> TimeWindow {
        if samples.is_empty() {
            return TimeWindow::ANY;
        }
        let mid = samples.len() / 2;
        let median = *samples.select_nth_unstable(mid).1;
        if let Some((start, end)) = session {
            let w = TimeWindow {
                lo: start.saturating_sub(SESSION_MARGIN_NS),
                hi: end.saturating_add(SESSION_MARGIN_NS),
            };
            if w.contains(median) {
                return w;
            }
        }
        TimeWindow::around(median)
    }

    /// The window of a bulk whose median time is `median`: ± [`HALF_WIDTH_NS`].
    pub fn around(median: i64) -> TimeWindow {
        TimeWindow {
            lo: median.saturating_sub(HALF_WIDTH_NS),
            hi: median.saturating_add(HALF_WIDTH_NS),
        }
    }

    /// Why `cell` (the time's text) is rejected, for the skipped-row report.
    pub fn reject_reason(self, column: &str, cell: &str) -> crate::model::SkipReason {
        crate::model::SkipReason::OutOfWindow {
            column: column.to_string(),
            cell: cell.trim().to_string(),
        }
    }
}

/// The profiler's session (start, end) in epoch ns from `profiler_info*.json` in `root`:
/// `end_info.collectionTimeEnd`, and the start found by going back the monotonic duration
/// (`MonotonicTimeEnd − start_info.start_monotonic`).
pub fn session_from_profiler_info(root: &Path) -> Option<(i64, i64)> {
    let rd = std::fs::read_dir(root).ok()?;
    let mut names: Vec<std::path::PathBuf> = rd
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("profiler_info") && n.ends_with(".json"))
        })
        .collect();
    names.sort();
    let bytes = super::safe_fs::read_small(names.first()?, 1 << 20).ok()?;
    let v: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    let end = v.pointer("/end_info/collectionTimeEnd")?.as_i64()?;
    let mono_end = v.pointer("/end_info/MonotonicTimeEnd")?.as_i64()?;
    let mono_start = v.pointer("/start_info/start_monotonic")?.as_i64()?;
    let duration = mono_end.checked_sub(mono_start).filter(|d| *d >= 0)?;
    Some((end.checked_sub(duration)?, end))
}

/// Timestamps (ns) of up to [`SAMPLES`] rows spread evenly over a CSV file, read by seeking:
/// cheap whatever the file's size. `column` is the index of the time cell, `delimiter` the
/// file's separator; rows that do not parse are left out.
pub fn sample_csv_times(path: &Path, column: usize, delimiter: u8) -> Vec<i64> {
    sample_csv_cells(path, column, delimiter, |cell| {
        super::value::parse_scaled(cell, 1000)
            .ok()
            .flatten()
            .map(|s| s.value)
    })
}

/// [`sample_csv_times`] for any cell: `parse` turns the cell of `column` of each sampled row into
/// a value (rows it refuses are left out).
pub fn sample_csv_cells<T>(
    path: &Path,
    column: usize,
    delimiter: u8,
    parse: impl Fn(&[u8]) -> Option<T>,
) -> Vec<T> {
    let Ok(mut file) = super::safe_fs::open_regular(path) else {
        return Vec::new();
    };
    let len = file.metadata().map_or(0, |m| m.len());
    if len <= SMALL_FILE_BYTES {
        // Small files are read whole: every row counts, not just those after a seek point.
        return read_small_file_cells(&mut file, column, delimiter, parse);
    }
    let mut head = [0u8; 2];
    let utf16 = match file.read_exact(&mut head) {
        Ok(()) if head == [0xFF, 0xFE] => Some(encoding_rs::UTF_16LE),
        Ok(()) if head == [0xFE, 0xFF] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    let mut buf = vec![0u8; 16 << 10];
    let mut out = Vec::with_capacity(SAMPLES);
    let mut splitter = super::line_split::LineSplitter::new(delimiter);
    for k in 0..SAMPLES as u64 {
        // u128: len * k cannot overflow.
        let at = (u128::from(len) * u128::from(k) / SAMPLES as u128) as u64 & !1;
        if file.seek(SeekFrom::Start(at)).is_err() {
            break;
        }
        let Ok(got) = super::part_pool::read_up_to(&mut file, &mut buf) else {
            break;
        };
        let decoded;
        let chunk: &[u8] = match utf16 {
            Some(enc) => {
                decoded = enc.decode_without_bom_handling(&buf[..got]).0.into_owned();
                decoded.as_bytes()
            }
            None => &buf[..got],
        };
        // The bytes after the first line break (the row at `at` may be cut, or be the header).
        let is_break = |b: &u8| *b == b'\n' || *b == b'\r';
        let Some(first) = chunk.iter().position(is_break) else {
            continue;
        };
        let rest = &chunk[first..];
        let Some(start) = rest.iter().position(|b| !is_break(b)) else {
            continue;
        };
        let rest = &rest[start..];
        let Some(end) = rest.iter().position(is_break) else {
            continue; // the row runs past the buffer
        };
        let t = splitter.with_cells(&rest[..end], |r| {
            let cell = r.ok()?.get(column).copied()?;
            parse(cell)
        });
        if let Some(t) = t {
            out.push(t);
        }
    }
    out
}

/// Files up to this size are sampled by reading every row.
const SMALL_FILE_BYTES: u64 = 4 << 20;

/// The parsed cells of every row of a small file (decoded from UTF-16 when it has that BOM).
fn read_small_file_cells<T>(
    file: &mut std::fs::File,
    column: usize,
    delimiter: u8,
    parse: impl Fn(&[u8]) -> Option<T>,
) -> Vec<T> {
    let mut bytes = Vec::new();
    // The handle we checked is regular (a path could be swapped since): read through it.
    #[allow(clippy::verbose_file_reads)]
    let read = file
        .seek(SeekFrom::Start(0))
        .and_then(|_| file.read_to_end(&mut bytes));
    if read.is_err() {
        return Vec::new();
    }
    let text: Vec<u8> = match bytes.get(..2) {
        Some([0xFF, 0xFE]) => encoding_rs::UTF_16LE
            .decode_with_bom_removal(&bytes)
            .0
            .into_owned()
            .into_bytes(),
        Some([0xFE, 0xFF]) => encoding_rs::UTF_16BE
            .decode_with_bom_removal(&bytes)
            .0
            .into_owned()
            .into_bytes(),
        _ => bytes,
    };
    let mut splitter = super::line_split::LineSplitter::new(delimiter);
    text.split(|b| *b == b'\n' || *b == b'\r')
        .skip_while(|l| l.is_empty())
        .skip(1) // the header
        .filter(|l| !l.is_empty())
        .filter_map(|line| {
            splitter.with_cells(line, |r| {
                let cell = r.ok()?.get(column).copied()?;
                parse(cell)
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_outlier_cannot_move_the_window() {
        let t0 = 1_736_408_883_573_957_920;
        let mut s: Vec<i64> = (0..100).map(|i| t0 + i * 1_000_000).collect();
        s.push(5_000);
        s.push(-5_500);
        let w = TimeWindow::from_samples(s, None);
        assert!(w.contains(t0) && w.contains(t0 + 99_000_000));
        assert!(!w.contains(5_000) && !w.contains(-5_500) && !w.contains(0));
    }

    #[test]
    fn the_session_is_used_when_it_agrees_with_the_data() {
        let t0 = 1_736_408_883_573_957_920;
        let s: Vec<i64> = (0..10).map(|i| t0 + i).collect();
        let w = TimeWindow::from_samples(s.clone(), Some((t0 - 10, t0 + 100)));
        assert_eq!(w.hi, t0 + 100 + SESSION_MARGIN_NS);
        // A session in another clock domain is ignored.
        let w = TimeWindow::from_samples(s, Some((10, 100)));
        assert_eq!(w.lo, t0 + 5 - HALF_WIDTH_NS);
        assert_eq!(TimeWindow::from_samples(vec![], None), TimeWindow::ANY);
    }

    #[test]
    fn samples_come_from_the_whole_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("memory_record.csv");
        let mut text = String::from("Component,Timestamp(us)\r\n");
        for i in 0..20_000 {
            text.push_str(&format!("PTA,{}.500\t\r\n", 1_700_000_000_000_000u64 + i));
        }
        std::fs::write(&p, &text).unwrap();
        let got = sample_csv_times(&p, 1, b',');
        assert!(got.len() > SAMPLES - 5, "{}", got.len());
        assert!(
            got.iter()
                .all(|t| (t - 1_700_000_000_000_000_500) % 1000 == 0)
        );
        assert!(got.iter().max().unwrap() - got.iter().min().unwrap() > 19_000_000 * 1000 / 1000);
    }
}
