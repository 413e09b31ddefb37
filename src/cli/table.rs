//! `memsight table`: the details table's rows as TSV, exactly as the GUI's Copy writes them.

use crate::model::plural::count;
use std::io::Write;
use std::path::Path;

use crate::model::{SourceChoice, TagKind};

use super::rank::{load_one, window};
use crate::analysis::{Column, RangeFilter, SortCache, SortDir, TableQuery, WindowMode, query};
use crate::export::rows_tsv;

/// Options of `table`.
#[derive(Debug, Clone, clap::Args)]
pub struct TableArgs {
    /// Rank id; default the device rank with the highest peak.
    #[arg(long, allow_hyphen_values = true)]
    pub rank: Option<String>,
    /// Window start, ms from the rank's time origin.
    #[arg(long, allow_negative_numbers = true)]
    pub from_ms: Option<f64>,
    /// Window end, ms.
    #[arg(long, allow_negative_numbers = true)]
    pub to_ms: Option<f64>,
    /// Only blocks allocated or released within the window (default: lifetime overlaps it).
    #[arg(long)]
    pub within: bool,
    /// Case-insensitive name substring.
    #[arg(long)]
    pub name: Option<String>,
    /// Minimum Size(KB).
    #[arg(long, allow_negative_numbers = true)]
    pub min_size_kib: Option<f64>,
    /// Maximum Size(KB).
    #[arg(long, allow_negative_numbers = true)]
    pub max_size_kib: Option<f64>,
    /// Sort: COLUMN[:asc|desc], e.g. "Size(KB):desc" or size:desc.
    #[arg(long)]
    pub sort: Option<String>,
    /// Page number, from 1.
    #[arg(long, default_value_t = 1)]
    pub page: usize,
    /// Rows per page.
    #[arg(long, default_value_t = 10)]
    pub page_size: usize,
    /// Every matching row (ignores --page and --page-size).
    #[arg(long)]
    pub all: bool,
    /// Case-insensitive substring of the Owner column (msMemScope dumps).
    #[arg(long)]
    pub owner: Option<String>,
    /// Case-insensitive substring of the Inefficient column (msMemScope dumps), e.g.
    /// late_deallocation.
    #[arg(long)]
    pub inefficient: Option<String>,
    /// Case-insensitive substring of the OOM column (msMemScope dumps with OOM_DETAIL rows):
    /// `top`, `recent`, or `top 1`.
    #[arg(long)]
    pub oom: Option<String>,
    /// Case-insensitive substring of the Role column (profiles with training phases):
    /// `activation`, `gradient`, `optimizer_state`, `temporary`, …
    #[arg(long)]
    pub role: Option<String>,
    /// Case-insensitive substring of the Module column (profiles recorded with with_stack or
    /// with_modules): `Block_0` keeps the blocks of Block_0 and of the modules under it.
    #[arg(long)]
    pub module: Option<String>,
}

/// Splits `COLUMN[:asc|desc]` into the column's text and the direction (ascending when none is
/// given); every command's `--sort` reads this way.
pub fn split_sort(s: &str) -> Result<(&str, SortDir), String> {
    let (col, dir) = s.rsplit_once(':').unwrap_or((s, "asc"));
    let dir = match dir.to_ascii_lowercase().as_str() {
        "asc" => SortDir::Asc,
        "desc" => SortDir::Desc,
        other => return Err(format!("bad sort direction {other:?} (asc or desc)")),
    };
    Ok((col, dir))
}

/// Parses `COLUMN[:asc|desc]`.
pub fn parse_sort(s: &str) -> Result<(Column, SortDir), String> {
    let (col, dir) = split_sort(s)?;
    let col = Column::parse(col).ok_or_else(|| {
        let names: Vec<&str> = Column::ALL.iter().map(|c| c.header()).collect();
        format!("unknown column {col:?} (columns: {})", names.join(", "))
    })?;
    Ok((col, dir))
}

/// Runs `table`; the total count goes to `err`. Returns the exit code.
pub fn table(
    path: &Path,
    source: SourceChoice,
    args: &TableArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let mut run = |err: &mut dyn Write| -> Result<(), String> {
        let sort = args.sort.as_deref().map(parse_sort).transpose()?;
        if args.page == 0 {
            return Err("--page starts at 1".into());
        }
        if args.page_size == 0 {
            return Err("--page-size must be at least 1".into());
        }
        let win = window(args.from_ms, args.to_ms)?;
        let data = load_one(path, args.rank.as_deref(), source, err)?;
        let q = TableQuery {
            window: win,
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
            tags: [
                (TagKind::Owner, &args.owner),
                (TagKind::Inefficient, &args.inefficient),
                (TagKind::Oom, &args.oom),
                (TagKind::Role, &args.role),
                (TagKind::Module, &args.module),
            ]
            .into_iter()
            .filter_map(|(k, v)| Some((k, v.clone()?)))
            .collect(),
            only_rows: None,
        };
        let page = query(&data, &SortCache::new(), &q);
        out.write_all(rows_tsv(&data, &page.rows).as_bytes())
            .map_err(|e| e.to_string())?;
        let _ = writeln!(err, "{}", count(page.total as u64, "row", "rows"));
        Ok(())
    };
    let result = run(err);
    super::finish(result, err)
}
