//! Pure functions over the model: curves per Group By, peaks.

pub mod peaks;
pub mod series;

pub use peaks::{Peak, peak, peak_in_window};
pub use series::{GroupBy, Quantity, Series, build_series, operator_component};
