//! A table cell's value as a sort key, shared by the cluster overview's and the cluster
//! summary's tables: numbers compare as numbers (rank ids too), text as text, and a missing
//! value goes last whichever the direction.

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
                let ord = x.partial_cmp(y).unwrap_or(Ordering::Equal);
                if dir == SortDir::Desc {
                    ord.reverse()
                } else {
                    ord
                }
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
        assert_eq!(SortKey::num(Some(f64::NAN)), SortKey::Missing);
    }
}
