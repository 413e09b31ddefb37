//! The headless subcommands. Each returns the process exit code and writes to the given streams,
//! so tests can run them in-process.

pub mod command_line;
pub mod compare;
pub mod components;
pub mod curve;
pub mod explain;
pub mod inspect;
pub mod live;
pub mod modules;
pub mod rank;
pub mod roles;
pub mod snapshot;
pub mod snapshot_compare;
pub mod stacks;
pub mod static_graph;
pub mod steps;
pub mod summarize;
pub mod table;
pub mod whatif;

pub use compare::{CompareArgs, compare};
pub use components::components;
pub use curve::{CurveArgs, curve};
pub use explain::{ExplainArgs, explain};
pub use inspect::inspect;
pub use live::{LiveArgs, live};
pub use modules::{ModulesArgs, modules};
pub use roles::{RolesArgs, roles};
pub use snapshot::{SnapshotArgs, snapshot};
pub use stacks::{StacksArgs, stacks};
pub use static_graph::{StaticArgs, static_graph};
pub use steps::steps;
pub use summarize::{SummarizeArgs, summarize};
pub use table::{TableArgs, table};
pub use whatif::{WhatifArgs, whatif};

use std::io::Write;
use std::path::{Path, PathBuf};

/// Exit code for "nothing could be done" (bad path, no data, bad arguments).
pub const EXIT_FAILURE: i32 = 2;

/// Discovers the profile at `path`. A cluster summary given where a profile is expected is
/// named as such, with what opens it (discovery alone would say it has no MEMORY_RECORD table).
pub(crate) fn discover_profile(path: &Path) -> Result<crate::ingest::Profile, String> {
    crate::ingest::discover(path).map_err(|e| {
        if crate::export::cluster_db::is_summary(path) {
            format!(
                "{0}: a memsight cluster summary, not a profile: open it in the app (`memsight {0}`), or merge summaries with `memsight summarize --merge A.db B.db --out ALL.db`",
                path.display()
            )
        } else {
            e.to_string()
        }
    })
}

/// A command's outcome as an exit code; an error is printed as one line on `err`.
pub(crate) fn finish(result: Result<(), String>, err: &mut dyn Write) -> i32 {
    match result {
        Ok(()) => 0,
        Err(e) => {
            let _ = writeln!(err, "memsight: {e}");
            EXIT_FAILURE
        }
    }
}

/// Runs a subcommand in-process (`f` writes its JSON to the first stream, its error to the
/// second) and parses its JSON; its error line when it fails.
pub(crate) fn json_of(
    f: impl FnOnce(&mut dyn Write, &mut dyn Write) -> i32,
) -> Result<serde_json::Value, String> {
    let (mut out, mut err) = (Vec::new(), Vec::new());
    if f(&mut out, &mut err) != 0 {
        let e = String::from_utf8_lossy(&err);
        let line = e.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        return Err(line.trim_start_matches("memsight: ").to_string());
    }
    serde_json::from_slice(&out).map_err(|e| format!("a command's JSON did not parse: {e}"))
}

/// The most display columns [`text_table`] pads its first (name) column to.
const NAME_WIDTH: usize = 60;

/// Rows as an aligned text table under `header`: the first column left-aligned, the others
/// right-aligned, two spaces apart. Widths are terminal columns, so Chinese names (two columns a
/// character) keep the table aligned.
pub(crate) fn text_table(header: &[&str], rows: &[Vec<String>]) -> String {
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

/// The bytes of the regular files at or under `path` (links under a folder not followed, 8
/// folders deep, as discovery walks): what a command's output budget is drawn from.
pub(crate) fn bytes_under(path: &Path) -> u64 {
    match std::fs::metadata(path) {
        Ok(m) if m.is_file() => m.len(),
        Ok(m) if m.is_dir() => crate::ingest::safe_fs::files_under(path, 8, &|_| true)
            .iter()
            .filter_map(|f| std::fs::metadata(f).ok())
            .fold(0, |n, m| n.saturating_add(m.len())),
        _ => 0,
    }
}

/// A command's standard output, bounded by the budget of what it read
/// ([`crate::model::Budget`]): past it, a write fails with the refusal, so no input can make a
/// command print far more than it holds.
pub struct BoundedOut<'a> {
    inner: &'a mut dyn Write,
    input: u64,
    left: u64,
}

impl<'a> BoundedOut<'a> {
    /// `inner`, bounded for `input` bytes read.
    pub fn new(inner: &'a mut dyn Write, input: u64) -> BoundedOut<'a> {
        let left = crate::model::Budget::for_input(input).limit();
        BoundedOut { inner, input, left }
    }
}

impl Write for BoundedOut<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if buf.len() as u64 > self.left {
            let limit = crate::model::Budget::for_input(self.input).limit();
            return Err(std::io::Error::other(format!(
                "the output would pass {} MiB for {} KiB of input (over {}× its size): refused",
                limit >> 20,
                self.input.div_ceil(1024),
                crate::model::budget::BYTES_PER_INPUT_BYTE
            )));
        }
        let n = self.inner.write(buf)?;
        self.left -= n as u64;
        Ok(n)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

/// The most columns any column but the first pads to.
const MAX_PADDED_WIDTH: usize = 64;

/// The most characters a cell of a text table (or an indented name) keeps; longer ones end in
/// `…` (the JSON has them whole).
pub(crate) const MAX_CELL_CHARS: usize = 400;

/// The most levels a nested name is indented by in text (deeper ones show their depth).
pub(crate) const MAX_INDENT_LEVELS: usize = 24;

/// `s` as one line of at most [`MAX_CELL_CHARS`] characters: control characters (a newline, a
/// terminal's escape) as spaces, the rest cut with `…`.
pub(crate) fn one_line(s: &str) -> std::borrow::Cow<'_, str> {
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
pub(crate) fn indent(depth: usize) -> String {
    match depth > MAX_INDENT_LEVELS {
        true => format!("{}[{depth}] ", "  ".repeat(MAX_INDENT_LEVELS)),
        false => "  ".repeat(depth),
    }
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

/// The file that marks a demo folder as completely written.
const DEMO_MARKER: &str = ".memsight-demo-complete";

/// The demo profile, generated by the binary itself (the seeded generator writes the same files
/// every time) into the temp folder, once per version: the binary carries no path of the
/// machine it was built on. It is written into a fresh private folder and then renamed into
/// place, so an existing folder (another user's, or a half-written one) is never written into;
/// one that is complete is read as it is.
pub fn demo_profile_path() -> std::io::Result<PathBuf> {
    let tmp = std::env::temp_dir();
    let dir = tmp.join(format!(
        "memsight-demo-{}-{}",
        env!("CARGO_PKG_VERSION"),
        crate::generate::DEMO_VERSION
    ));
    if dir.join(DEMO_MARKER).is_file() {
        return Ok(dir);
    }
    let fresh = tempfile::Builder::new()
        .prefix("memsight-demo-")
        .tempdir_in(&tmp)?;
    crate::generate::generate(fresh.path(), &crate::generate::demo_options())?;
    std::fs::write(fresh.path().join(DEMO_MARKER), b"")?;
    let fresh = fresh.keep();
    if std::fs::rename(&fresh, &dir).is_ok() {
        return Ok(dir);
    }
    // Another process put a demo there first (then use it), or something else holds the name
    // (then this run's private copy is the demo).
    if dir.join(DEMO_MARKER).is_file() {
        let _ = std::fs::remove_dir_all(&fresh);
        return Ok(dir);
    }
    Ok(fresh)
}

/// True when `path` is a demo folder written by [`demo_profile_path`].
pub fn is_demo(path: &Path) -> bool {
    path.join(DEMO_MARKER).is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_past_the_inputs_budget_is_refused() {
        let mut sink = Vec::new();
        let limit = crate::model::Budget::for_input(10).limit() as usize;
        let mut out = BoundedOut::new(&mut sink, 10);
        let chunk = vec![b'x'; 1 << 20];
        let mut written = 0;
        let refused = loop {
            match out.write_all(&chunk) {
                Ok(()) => written += chunk.len(),
                Err(e) => break e,
            }
        };
        assert_eq!(written, limit, "everything up to the limit is written");
        assert!(refused.to_string().contains("refused"), "{refused}");
        assert_eq!(sink.len(), limit);
    }

    #[test]
    fn a_folders_bytes_are_its_files() {
        let d = tempfile::tempdir().unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        std::fs::write(d.path().join("a"), [0u8; 10]).unwrap();
        std::fs::write(d.path().join("sub/b"), [0u8; 5]).unwrap();
        assert_eq!(bytes_under(d.path()), 15);
        assert_eq!(bytes_under(&d.path().join("a")), 10);
        assert_eq!(bytes_under(&d.path().join("missing")), 0);
    }

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

    /// The demo comes from the binary, not from the source tree it was built in, and holds a
    /// profile with the demo's ranks.
    #[test]
    fn the_demo_is_generated_outside_the_source_tree() {
        let dir = demo_profile_path().expect("demo");
        assert!(is_demo(&dir));
        assert!(
            !dir.starts_with(env!("CARGO_MANIFEST_DIR")),
            "{}",
            dir.display()
        );
        let profile = crate::ingest::discover(&dir).expect("a profile");
        assert_eq!(
            profile.ranks.len(),
            crate::generate::demo_options().ranks,
            "{}",
            dir.display()
        );
        assert_eq!(demo_profile_path().expect("again"), dir, "written once");
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
