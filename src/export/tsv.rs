//! Table rows as text: TSV for the clipboard (Excel pastes it as a grid) and CSV files. Numbers
//! are plain and exact: no thousands separators, `.` as the decimal point, sizes in KB, times in
//! ms from the rank origin, totals in MB; a missing value is an empty cell.

use crate::analysis::Column;
use crate::model::units::{kib, mib, ms_exact};
use crate::model::{NULL, RankData};

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

/// A cell safe for TSV: tabs and line breaks become spaces.
fn tsv_safe(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

/// `rows` as TSV with a header row, every column, ending in a newline.
pub fn rows_tsv(data: &RankData, rows: &[u32]) -> String {
    let mut out = String::new();
    let header: Vec<&str> = Column::ALL.iter().map(|c| c.header()).collect();
    out.push_str(&header.join("\t"));
    out.push('\n');
    for &r in rows {
        let cells: Vec<String> = Column::ALL
            .iter()
            .map(|&c| tsv_safe(&cell_text(data, r as usize, c)))
            .collect();
        out.push_str(&cells.join("\t"));
        out.push('\n');
    }
    out
}

/// A CSV field, quoted when it needs to be.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// `rows` as CSV with a header row, written to `w`.
pub fn write_rows_csv(
    data: &RankData,
    rows: &[u32],
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let header: Vec<String> = Column::ALL.iter().map(|c| csv_field(c.header())).collect();
    writeln!(w, "{}", header.join(","))?;
    for &r in rows {
        let cells: Vec<String> = Column::ALL
            .iter()
            .map(|&c| csv_field(&cell_text(data, r as usize, c)))
            .collect();
        writeln!(w, "{}", cells.join(","))?;
    }
    Ok(())
}
