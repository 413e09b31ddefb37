//! A table cell's value as a sort key, shared by the cluster overview's and the cluster
//! summary's tables: numbers compare as numbers (rank ids too), text in natural order ("node2"
//! before "node10"), and a missing value goes last whichever the direction.

use std::cmp::Ordering;

use crate::analysis::SortDir;

/// A sortable value of a cell.
#[derive(Debug, Clone, PartialEq, PartialOrd)]
pub enum SortKey {
    /// A number.
    Num(f64),
    /// Text.
    Text(String),
    /// No value: sorts last.
    Missing,
}

impl SortKey {
    /// A number, or [`SortKey::Missing`] (also for NaN and infinities).
    pub fn num(v: Option<f64>) -> SortKey {
        v.filter(|v| v.is_finite())
            .map_or(SortKey::Missing, SortKey::Num)
    }

    /// Text, or [`SortKey::Missing`].
    pub fn text(v: Option<&String>) -> SortKey {
        v.map_or(SortKey::Missing, |s| SortKey::Text(s.clone()))
    }

    /// A rank id: its number when it is one ("9" before "10"), else its text.
    pub fn rank(id: &str) -> SortKey {
        id.parse::<f64>()
            .map_or_else(|_| SortKey::Text(id.to_owned()), SortKey::Num)
    }

    /// `self` against `other` in direction `dir`, a missing value last either way.
    pub fn cmp_in(&self, other: &SortKey, dir: SortDir) -> Ordering {
        match (self, other) {
            (SortKey::Missing, SortKey::Missing) => Ordering::Equal,
            (SortKey::Missing, _) => Ordering::Greater,
            (_, SortKey::Missing) => Ordering::Less,
            (x, y) => {
                let ord = match (x, y) {
                    (SortKey::Text(a), SortKey::Text(b)) => natural_cmp(a, b),
                    _ => x.partial_cmp(y).unwrap_or(Ordering::Equal),
                };
                if dir == SortDir::Desc {
                    ord.reverse()
                } else {
                    ord
                }
            }
        }
    }
}

/// `a` against `b` with runs of digits compared as numbers ("node2" < "node10"), the rest as
/// text; equal runs fall back to plain text order, so distinct names never compare equal.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut x, mut y) = (a.chars().peekable(), b.chars().peekable());
    loop {
        match (x.peek().copied(), y.peek().copied()) {
            (None, None) => return a.cmp(b),
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(c), Some(d)) if c.is_ascii_digit() && d.is_ascii_digit() => {
                let run = |it: &mut std::iter::Peekable<std::str::Chars<'_>>| {
                    let mut digits = String::new();
                    while let Some(c) = it.next_if(char::is_ascii_digit) {
                        digits.push(c);
                    }
                    digits
                };
                let (m, n) = (run(&mut x), run(&mut y));
                let (m, n) = (m.trim_start_matches('0'), n.trim_start_matches('0'));
                let ord = m.len().cmp(&n.len()).then_with(|| m.cmp(n));
                if ord != Ordering::Equal {
                    return ord;
                }
            }
            (Some(c), Some(d)) => {
                if c != d {
                    return c.cmp(&d);
                }
                x.next();
                y.next();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_values_go_last_in_both_directions() {
        let (one, two, none) = (SortKey::Num(1.0), SortKey::Num(2.0), SortKey::Missing);
        assert_eq!(one.cmp_in(&two, SortDir::Asc), Ordering::Less);
        assert_eq!(one.cmp_in(&two, SortDir::Desc), Ordering::Greater);
        for dir in [SortDir::Asc, SortDir::Desc] {
            assert_eq!(none.cmp_in(&one, dir), Ordering::Greater);
            assert_eq!(one.cmp_in(&none, dir), Ordering::Less);
        }
        assert!(SortKey::rank("9") < SortKey::rank("10"));
        let host = |h: &str| SortKey::Text(h.into());
        assert_eq!(
            host("node2").cmp_in(&host("node10"), SortDir::Asc),
            Ordering::Less
        );
        assert_eq!(
            host("node10").cmp_in(&host("node9"), SortDir::Desc),
            Ordering::Less
        );
        assert_eq!(natural_cmp("a01", "a1"), "a01".cmp("a1"));
        assert_eq!(natural_cmp("node7", "node70"), Ordering::Less);
        assert_eq!(SortKey::num(Some(f64::NAN)), SortKey::Missing);
    }
}
