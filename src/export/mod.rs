//! Text out: the `inspect` summary (readable and JSON), table rows as TSV/CSV, and the cluster
//! summary file of `memsight summarize` ([`cluster_db`]), and the temporary files a killed
//! process must not leave behind ([`pending_files`]).

pub mod cluster_db;
pub mod pending_files;
pub mod summary;
pub mod tsv;

pub use summary::{RankSummary, summarize};
pub use tsv::{
    CALL_STACK_HEADER, ExportColumn, UTF8_BOM, cell_text, export_columns, rows_tsv, write_rows_csv,
};
