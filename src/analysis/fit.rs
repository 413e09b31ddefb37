//! Will the predicted peak fit the card? The card's capacity (recorded by the trace, or given),
//! the reserved peak predicted beside the allocated one, and the headroom: one answer for the
//! CLI's `whatif`, MCP, the Python API and the app's What if tab.

use super::series::Series;
use super::{OverallCurve, peaks::peak};

/// How the reserved peak is predicted, in words (the JSON's `reserved_model`).
pub const RESERVED_MODEL: &str = "reserved = predicted allocated × the measured peak reserved / \
    peak allocated (the allocator's cache in the same proportion)";

/// Where a card's capacity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CardFrom {
    /// The trace's header (`deviceProperties`: `name`, `totalGlobalMem`).
    Trace,
    /// The user (`--capacity-gib`, the app's card field).
    Given,
}

impl CardFrom {
    /// The source in words, as the JSON's `capacity.from` says it.
    pub fn as_str(self) -> &'static str {
        match self {
            CardFrom::Trace => "the trace's deviceProperties",
            CardFrom::Given => "--capacity-gib",
        }
    }
}

/// A card: its name (empty when given as a number) and its memory in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Card {
    /// The card's name as the trace records it.
    pub name: String,
    /// Its memory, bytes.
    pub bytes: i64,
    /// Where the figure came from.
    pub from: CardFrom,
}

impl Card {
    /// A card given as GiB by the user; `None` unless a positive, finite size under 1e9 GiB.
    pub fn given_gib(gib: f64) -> Option<Card> {
        (gib.is_finite() && gib > 0.0 && gib < 1.0e9).then(|| Card {
            name: String::new(),
            bytes: (gib * (1u64 << 30) as f64).round() as i64,
            from: CardFrom::Given,
        })
    }
}

/// Whether a predicted peak fits the card.
#[derive(Debug, Clone, PartialEq)]
pub struct Fit {
    /// The card, when known.
    pub card: Option<Card>,
    /// The measured Operator Reserved peak over Operator Allocated's, at least 1 (None
    /// without both curves).
    pub reserved_ratio: Option<f64>,
    /// The micro-batch the profile was recorded with, when its shapes say it.
    pub profiled_micro_batch: Option<u64>,
    /// The predicted allocated peak, bytes.
    pub predicted: i64,
}

/// The measured reserved / allocated ratio at the peaks of a rank's Overall curves (`None`
/// without both, or with an allocated peak of 0).
pub fn reserved_ratio(overall: &[&Series]) -> Option<f64> {
    let peak_of = |c: OverallCurve| {
        overall
            .iter()
            .find(|s| s.name == c.label())
            .and_then(|s| peak(s))
    };
    let reserved = peak_of(OverallCurve::OperatorReserved)?;
    let allocated = peak_of(OverallCurve::OperatorAllocated).filter(|a| a.value > 0)?;
    Some((reserved.value as f64 / allocated.value as f64).max(1.0))
}

impl Fit {
    /// The fit of a predicted allocated peak (`predicted`, bytes) on `view`'s rank: on the card
    /// `given`, else the one its trace records (`recorded`: name, bytes); the reserved ratio
    /// from the rank's own curves.
    pub fn on(
        view: &super::RankView,
        predicted: i64,
        given: Option<Card>,
        recorded: Option<(String, i64)>,
        profiled_micro_batch: Option<u64>,
    ) -> Fit {
        Fit {
            card: given.or_else(|| {
                recorded.map(|(name, bytes)| Card {
                    name,
                    bytes,
                    from: CardFrom::Trace,
                })
            }),
            reserved_ratio: reserved_ratio(&view.overall_series()),
            profiled_micro_batch,
            predicted,
        }
    }

    /// The predicted reserved peak, bytes: allocated × the measured ratio.
    pub fn reserved(&self) -> Option<i64> {
        self.reserved_ratio
            .map(|r| (self.predicted as f64 * r).round() as i64)
    }

    /// Capacity less the predicted reserved (else allocated) peak, bytes.
    pub fn headroom(&self) -> Option<i64> {
        let card = self.card.as_ref()?;
        Some(
            card.bytes
                .saturating_sub(self.reserved().unwrap_or(self.predicted)),
        )
    }

    /// Does it fit (`None`: the card is unknown)?
    pub fn fits(&self) -> Option<bool> {
        self.headroom().map(|h| h >= 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn series(name: &str, values: &[i64]) -> Series {
        Series {
            name: name.into(),
            times: (0..values.len() as i64).collect(),
            values: values.to_vec(),
        }
    }

    #[test]
    fn the_ratio_is_the_peaks_ratio_and_the_headroom_is_capacity_less_reserved() {
        let a = series(OverallCurve::OperatorAllocated.label(), &[0, 100, 50]);
        let r = series(OverallCurve::OperatorReserved.label(), &[0, 120, 150]);
        let ratio = reserved_ratio(&[&a, &r]);
        assert_eq!(ratio, Some(1.5));
        let fit = Fit {
            card: Card::given_gib(1.0),
            reserved_ratio: ratio,
            profiled_micro_batch: None,
            predicted: 1 << 29,
        };
        assert_eq!(fit.reserved(), Some(3 << 28));
        assert_eq!(fit.headroom(), Some((1 << 30) - (3 << 28)));
        assert_eq!(fit.fits(), Some(true));
        let over = Fit {
            predicted: 1 << 30,
            ..fit
        };
        assert_eq!(over.fits(), Some(false));
    }

    #[test]
    fn no_card_no_verdict_and_a_bad_size_is_no_card() {
        assert!(Card::given_gib(0.0).is_none());
        assert!(Card::given_gib(f64::NAN).is_none());
        assert!(Card::given_gib(-3.0).is_none());
        let fit = Fit {
            card: None,
            reserved_ratio: None,
            profiled_micro_batch: None,
            predicted: 10,
        };
        assert_eq!((fit.reserved(), fit.fits()), (None, None));
    }
}
