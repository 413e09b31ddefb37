//! Plain-text rendering shared by every report: aligned tables whose widths are terminal columns
//! (Chinese names take two), one-line cells and indented names, bounded so that no name from a
//! file can break a table.

/// The most display columns [`text_table`] pads its first (name) column to.
pub const NAME_WIDTH: usize = 60;

/// Rows as an aligned text table under `header`: the first column left-aligned, the others
/// right-aligned, two spaces apart. Widths are terminal columns, so Chinese names (two columns a
/// character) keep the table aligned.
pub fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
    // Each cell one line of bounded length: a name holding newlines or megabytes (a hostile
    // trace's) cannot break the table or make every row as long as it.
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| r.iter().map(|c| one_line(c).into_owned()).collect())
        .collect();
    let rows = &rows;
    let widths: Vec<usize> = (0..header.len())
        .map(|c| {
            let w = rows
                .iter()
                .filter_map(|r| r.get(c))
                .map(|s| display_width(s))
                .chain([display_width(header[c])])
                .max()
                .unwrap_or(0);
            // The name column pads to at most NAME_WIDTH: a longer name runs on in its own
            // row instead of pushing every row's numbers to the far right.
            if c == 0 {
                w.min(NAME_WIDTH)
            } else {
                w.min(MAX_PADDED_WIDTH)
            }
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

/// The most columns any column but the first pads to.
pub const MAX_PADDED_WIDTH: usize = 64;

/// The most characters a cell of a text table (or an indented name) keeps; longer ones end in
/// `…` (the JSON has them whole).
pub const MAX_CELL_CHARS: usize = 400;

/// The most levels a nested name is indented by in text (deeper ones show their depth).
pub const MAX_INDENT_LEVELS: usize = 24;

/// `s` as one line of at most [`MAX_CELL_CHARS`] characters: control characters (a newline, a
/// terminal's escape) as spaces, the rest cut with `…`.
pub fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
    let long = s.chars().nth(MAX_CELL_CHARS).is_some();
    if !long && !s.chars().any(char::is_control) {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out: String = s
        .chars()
        .take(MAX_CELL_CHARS - usize::from(long))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    if long {
        out.push('…');
    }
    std::borrow::Cow::Owned(out)
}

/// Two spaces a level of `depth`, at most [`MAX_INDENT_LEVELS`] levels; deeper shows `[depth]`.
pub fn indent(depth: usize) -> String {
    match depth > MAX_INDENT_LEVELS {
        true => format!("{}[{depth}] ", "  ".repeat(MAX_INDENT_LEVELS)),
        false => "  ".repeat(depth),
    }
}

/// How many terminal columns `s` takes (CJK characters take two).
pub fn display_width(s: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(s)
}

/// `s` followed by spaces up to `width` terminal columns.
pub fn pad_end(s: &str, width: usize) -> String {
    format!("{s}{}", " ".repeat(width.saturating_sub(display_width(s))))
}

/// Spaces up to `width` terminal columns, then `s`.
pub fn pad_start(s: &str, width: usize) -> String {
    format!("{}{s}", " ".repeat(width.saturating_sub(display_width(s))))
}

#[cfg(test)]
mod tests {
    use super::*;

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
