//! Text out: the `inspect` summary (readable and JSON), table rows as TSV/CSV.

pub mod summary;
pub mod tsv;

pub use summary::{RankSummary, summarize};
pub use tsv::{cell_text, rows_tsv, write_rows_csv};
