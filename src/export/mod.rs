//! Text out: the `inspect` summary, readable and as JSON.

pub mod summary;

pub use summary::{RankSummary, summarize};
