//! Table rows as text: TSV for the clipboard (Excel pastes it as a grid) and CSV files. Numbers
//! are plain and exact: no thousands separators, `.` as the decimal point, sizes in KB, times in
//! ms from the rank origin, totals in MB; a missing value is an empty cell.

use crate::analysis::Column;
use crate::model::units::{kib, mib, ms_exact};
use crate::model::{NULL, RankData, TagKind};

/// One cell as text.
pub fn cell_text(data: &RankData, row: usize, col: Column) -> String {
    let o = &data.operators;
    match col {
        Column::Name => data.strings.get(o.name[row]).to_string(),
        Column::Stream => data.strings.get(o.stream[row]).to_string(),
        _ => {
            let v = col.raw(data, row);
            if v == NULL {
                return String::new();
            }
            match col {
                Column::Size => kib(v),
                Column::AllocationTime | Column::ReleaseTime | Column::ActiveReleaseTime => {
                    ms_exact(v.saturating_sub(data.time_origin_ns))
                }
                Column::Duration | Column::ActiveDuration => ms_exact(v),
                _ => mib(v),
            }
        }
    }
}

/// A column of an export: one of the table's columns, or the call stack column the table shows
/// after the name when the profile recorded stacks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExportColumn {
    /// A details table column.
    Table(Column),
    /// The block's source line: the innermost frame of its stack in the user's own code.
    CallStack,
    /// A text column of the source's ([`crate::model::BlockTags`]).
    Tag(TagKind),
}

/// Header of the call stack column in copies and exports.
pub const CALL_STACK_HEADER: &str = "Call Stack";

impl ExportColumn {
    /// The header (English, as Insight's exports spell theirs).
    pub fn header(self) -> &'static str {
        match self {
            ExportColumn::Table(c) => c.header(),
            ExportColumn::CallStack => CALL_STACK_HEADER,
            ExportColumn::Tag(k) => k.header(),
        }
    }

    /// One cell as text.
    pub fn cell(self, data: &RankData, row: usize) -> String {
        match self {
            ExportColumn::Table(c) => cell_text(data, row, c),
            ExportColumn::CallStack => data
                .stacks
                .as_ref()
                .and_then(|s| s.row_source_line(row))
                .unwrap_or("")
                .to_string(),
            ExportColumn::Tag(k) => data.tag(k, row).to_string(),
        }
    }
}

/// The columns the details table shows for `data`, in its order: every table column, with the
/// call stack right after the name when the profile recorded stacks, then the source's tag
/// columns (msMemScope's Owner, Inefficient).
pub fn export_columns(data: &RankData) -> Vec<ExportColumn> {
    let has_stacks = data.stacks.as_ref().is_some_and(|s| !s.stacks.is_empty());
    let mut cols: Vec<ExportColumn> = Column::ALL
        .iter()
        .map(|&c| ExportColumn::Table(c))
        .collect();
    let mut after_name = 1;
    if has_stacks {
        cols.insert(after_name, ExportColumn::CallStack);
        after_name += 1;
    }
    for (k, t) in data.tags.iter().enumerate() {
        cols.insert(after_name + k, ExportColumn::Tag(t.kind));
    }
    cols
}

/// A cell safe for TSV: tabs and line breaks become spaces.
fn tsv_safe(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// `rows` as TSV with a header row, the columns the table shows ([`export_columns`]), ending in
/// a newline.
pub fn rows_tsv(data: &RankData, rows: &[u32]) -> String {
    let cols = export_columns(data);
    let mut out = String::new();
    let header: Vec<&str> = cols.iter().map(|c| c.header()).collect();
    out.push_str(&header.join("\t"));
    out.push('\n');
    for &r in rows {
        let cells: Vec<String> = cols
            .iter()
            .map(|&c| tsv_safe(&c.cell(data, r as usize)))
            .collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

/// The byte-order mark Excel looks for to read a CSV file as UTF-8 (without it, Chinese Excel
/// reads the file as GBK and Chinese names turn into mojibake).
pub const UTF8_BOM: &str = "\u{feff}";

/// `rows` as a CSV file for Excel: a UTF-8 byte-order mark, a header row and the columns the
/// table shows ([`export_columns`]), quoted by RFC 4180 where a cell needs it.
pub fn write_rows_csv(
    data: &RankData,
    rows: &[u32],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    w.write_all(UTF8_BOM.as_bytes())?;
    let cols = export_columns(data);
    let mut out = csv::Writer::from_writer(w);
    out.write_record(cols.iter().map(|c| c.header()))?;
    for &r in rows {
        out.write_record(cols.iter().map(|c| c.cell(data, r as usize)))?;
    }
    out.flush()
}
