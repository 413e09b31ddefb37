//! The headless subcommands. Each returns the process exit code and writes to the given streams,
//! so tests can run them in-process.

pub mod compare;
pub mod curve;
pub mod inspect;
pub mod live;
pub mod rank;
pub mod snapshot;
pub mod stacks;
pub mod steps;
pub mod table;

pub use compare::{CompareArgs, compare};
pub use curve::{CurveArgs, curve};
pub use inspect::inspect;
pub use live::{LiveArgs, live};
pub use snapshot::{SnapshotArgs, snapshot};
pub use stacks::{StacksArgs, stacks};
pub use steps::steps;
pub use table::{TableArgs, table};

use std::path::PathBuf;

/// Exit code for "nothing could be done" (bad path, no data, bad arguments).
pub const EXIT_FAILURE: i32 = 2;

/// A command's outcome as an exit code; an error is printed as one line on `err`.
pub(crate) fn finish(result: Result<(), String>, err: &mut dyn std::io::Write) -> i32 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "memsight: {e}");
            EXIT_FAILURE
        }
    }
}

/// Rows as an aligned text table under `header`: the first column left-aligned, the others
/// right-aligned, two spaces apart. Widths are terminal columns, so Chinese names (two columns a
/// character) keep the table aligned.
pub(crate) fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            rows.iter()
                .filter_map(|r| r.get(c))
                .map(|s| display_width(s))
                .chain([display_width(header[c])])
                .max()
                .unwrap_or(0)
        })
        .collect();
    let line = |cells: &mut dyn Iterator<Item = &str>| -> String {
        let s: Vec<String> = cells
            .zip(&widths)
            .enumerate()
            .map(|(i, (c, &w))| {
                if i == 0 {
                    pad_end(c, w)
                } else {
                    pad_start(c, w)
                }
            })
            .collect();
        format!("{}\n", s.join("  ").trim_end())
    };
    let mut text = line(&mut header.iter().copied());
    for r in rows {
        text.push_str(&line(&mut r.iter().map(String::as_str)));
    }
    text
}

/// How many terminal columns `s` takes (CJK characters take two).
pub(crate) fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` followed by spaces up to `width` terminal columns.
pub(crate) fn pad_end(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(display_width(s))))
}

/// Spaces up to `width` terminal columns, then `s`.
pub(crate) fn pad_start(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(display_width(s))))
}

/// The bundled demo profile: `fixtures/demo` of the source tree when it is there, else generated
/// once into the temp folder (for a binary run away from its sources).
pub fn demo_profile_path() -> std::io::Result<PathBuf> {
    let bundled = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join("demo");
    if bundled.is_dir() {
        return Ok(bundled);
    }
    // Named after the demo's version too, so that a changed demo is written again.
    let dir = std::env::temp_dir().join(format!(
        "memsight-demo-{}-{}",
        env!("CARGO_PKG_VERSION"),
        crate::generate::DEMO_VERSION
    ));
    if !dir.is_dir() {
        crate::generate::generate(&dir, &crate::generate::demo_options())?;
    }
    Ok(dir)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Terminal columns counted by hand: CJK ideographs and full-width forms take two.
    fn columns(s: &str) -> usize {
        s.chars()
            .map(|c| {
                if ('\u{4e00}'..='\u{9fff}').contains(&c) || c == '（' || c == '）' {
                    2
                } else {
                    1
                }
            })
            .sum()
    }

    #[test]
    fn chinese_names_keep_the_table_aligned() {
        let rows = vec![
            vec!["aten::mm".to_string(), "1.00".to_string()],
            vec!["自定义算子（前向）".to_string(), "12345.00".to_string()],
            vec!["x".to_string(), "7".to_string()],
        ];
        let text = text_table(&["operator", "MB"], &rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 4);
        // The last column is right-aligned, so every line ends at the same terminal column.
        let ends: Vec<usize> = lines.iter().map(|l| columns(l)).collect();
        assert!(ends.iter().all(|&e| e == ends[0]), "{ends:?}\n{text}");
        // 9 CJK characters are 18 columns: the widest first cell, then two spaces, then 8.
        assert_eq!(ends[0], 18 + 2 + 8, "{text}");
    }
}
