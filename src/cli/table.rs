//! `memsight table`: the details table's rows as TSV, exactly as the GUI's Copy writes them.

use std::io::Write;
use std::path::Path;

use super::rank::{load_one, window};
use crate::analysis::{Column, RangeFilter, SortCache, SortDir, TableQuery, WindowMode, query};
use crate::export::rows_tsv;

/// Options of `table`.
#[derive(Debug, Clone, Default)]
pub struct TableArgs {
    /// Rank id.
    pub rank: Option<String>,
    /// Window start, ms from origin.
    pub from_ms: Option<f64>,
    /// Window end.
    pub to_ms: Option<f64>,
    /// Only blocks allocated or released within the window.
    pub within: bool,
    /// Name substring.
    pub name: Option<String>,
    /// Minimum Size(KB).
    pub min_size_kib: Option<f64>,
    /// Maximum Size(KB).
    pub max_size_kib: Option<f64>,
    /// `COLUMN[:asc|desc]`.
    pub sort: Option<String>,
    /// Page, 1-based.
    pub page: usize,
    /// Rows per page.
    pub page_size: usize,
    /// Every matching row.
    pub all: bool,
}

/// Parses `COLUMN[:asc|desc]`.
pub fn parse_sort(s: &str) -> Result<(Column, SortDir), String> {
    let (col, dir) = match s.rsplit_once(':') {
        Some((c, d)) => (c, d),
        None => (s, "asc"),
    };
    let dir = match dir.to_ascii_lowercase().as_str() {
        "asc" => SortDir::Asc,
        "desc" => SortDir::Desc,
        other => return Err(format!("bad sort direction {other:?} (asc or desc)")),
    };
    let col = Column::parse(col).ok_or_else(|| {
        let names: Vec<&str> = Column::ALL.iter().map(|c| c.header()).collect();
        format!("unknown column {col:?} (columns: {})", names.join(", "))
    })?;
    Ok((col, dir))
}

/// Runs `table`; the total count goes to `err`. Returns the exit code.
pub fn table(path: &Path, args: &TableArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    let mut run = |err: &mut dyn Write| -> Result<(), String> {
        let sort = args.sort.as_deref().map(parse_sort).transpose()?;
        if args.page == 0 {
            return Err("--page starts at 1".into());
        }
        if args.page_size == 0 {
            return Err("--page-size must be at least 1".into());
        }
        let data = load_one(path, args.rank.as_deref())?;
        let q = TableQuery {
            window: window(&data, args.from_ms, args.to_ms)?,
            mode: if args.within {
                WindowMode::Within
            } else {
                WindowMode::Overlap
            },
            name: args.name.clone().unwrap_or_default(),
            ranges: if args.min_size_kib.is_some() || args.max_size_kib.is_some() {
                vec![RangeFilter {
                    column: Column::Size,
                    min: args.min_size_kib,
                    max: args.max_size_kib,
                }]
            } else {
                Vec::new()
            },
            sort,
            page_size: if args.all { usize::MAX } else { args.page_size },
            page: if args.all { 0 } else { args.page - 1 },
            require_stream: false,
        };
        let page = query(&data, &SortCache::new(), &q);
        out.write_all(rows_tsv(&data, &page.rows).as_bytes())
            .map_err(|e| e.to_string())?;
        let _ = writeln!(err, "{} rows", page.total);
        Ok(())
    };
    match run(err) {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "memsight: {e}");
            super::EXIT_FAILURE
        }
    }
}
