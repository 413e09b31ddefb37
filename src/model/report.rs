//! What went wrong while loading a rank: warnings and skipped rows, kept per file, never
//! swallowed. Plain data (ingest fills it, every layer above reads it).

use std::path::{Path, PathBuf};

/// How many skipped rows are kept verbatim per file.
pub const MAX_SKIPPED_SAMPLES: usize = 20;

/// One skipped row, as the user needs to find it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkippedRow {
    /// 1-based line number in the file (the header is line 1).
    pub line: u64,
    /// Why it was skipped.
    pub reason: super::SkipReason,
    /// The row's text (cells joined by commas, at most 200 characters).
    pub text: String,
}

/// Skipped rows of one file: the count and the first [`MAX_SKIPPED_SAMPLES`] verbatim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SkippedRows {
    /// How many rows were skipped.
    pub count: u64,
    /// The first rows skipped, in line order.
    pub samples: Vec<SkippedRow>,
}

impl SkippedRows {
    /// Records one skipped row.
    pub fn add(
        &mut self,
        line: u64,
        reason: impl Into<super::SkipReason>,
        text: impl FnOnce() -> String,
    ) {
        self.count += 1;
        if self.samples.len() < MAX_SKIPPED_SAMPLES {
            let mut text = text();
            if text.len() > 200 {
                let mut cut = 200;
                while !text.is_char_boundary(cut) {
                    cut -= 1;
                }
                text.truncate(cut);
                text.push('…');
            }
            self.samples.push(SkippedRow {
                line,
                reason: reason.into(),
                text,
            });
        }
    }

    /// Adds the rows of a later part of the same file (parts merge in file order).
    pub fn merge(&mut self, other: SkippedRows) {
        self.count += other.count;
        let room = MAX_SKIPPED_SAMPLES.saturating_sub(self.samples.len());
        self.samples.extend(other.samples.into_iter().take(room));
    }
}

/// What loading one file produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileReport {
    /// The file.
    pub path: PathBuf,
    /// Rows loaded.
    pub rows: u64,
    /// Rows skipped.
    pub skipped: SkippedRows,
}

/// Everything the user should know about one rank's load.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoadReport {
    /// Warnings (missing optional files, lossy timestamps, degraded files), as values: the CLI
    /// prints their English text, the UI its own language.
    pub warnings: Vec<super::Message>,
    /// One entry per file read.
    pub files: Vec<FileReport>,
    /// Files whose timestamps were written in scientific notation (a CSV saved by Excel): their
    /// times lost precision.
    pub lossy_time_files: Vec<PathBuf>,
}

impl LoadReport {
    /// Adds a warning.
    pub fn warn(&mut self, w: impl Into<super::Message>) {
        self.warnings.push(w.into());
    }

    /// The warnings of an importer's pairing of allocations and frees, when it met any:
    /// `orphans` frees without their allocation, `over_held` allocations on an address or id
    /// still held.
    pub fn warn_unpaired(&mut self, orphans: u64, over_held: u64) {
        if orphans > 0 {
            self.warn(super::Message::FreesWithoutAllocation { count: orphans });
        }
        if over_held > 0 {
            self.warn(super::Message::AllocationsOverHeldAddress { count: over_held });
        }
    }

    /// Total skipped rows over all files.
    pub fn skipped_rows(&self) -> u64 {
        self.files.iter().map(|f| f.skipped.count).sum()
    }

    /// How many lines [`all_warnings`](Self::all_warnings) would return, without building them.
    pub fn warning_count(&self) -> usize {
        self.warnings.len() + self.files.iter().filter(|f| f.skipped.count > 0).count()
    }

    /// Warnings plus one per file with skipped rows, as values (the UI shows them).
    pub fn all_notes(&self) -> Vec<super::Message> {
        let mut out = self.warnings.clone();
        for f in &self.files {
            if f.skipped.count > 0 {
                out.push(super::Message::SkippedRows {
                    path: display(&f.path),
                    count: f.skipped.count,
                    first: f
                        .skipped
                        .samples
                        .first()
                        .map(|s| (s.line, s.reason.clone())),
                });
            }
        }
        out
    }

    /// The same in English (what `inspect` prints).
    pub fn all_warnings(&self) -> Vec<String> {
        self.all_notes().iter().map(super::Message::text).collect()
    }
}

/// A path for messages.
pub fn display(p: &Path) -> String {
    p.display().to_string()
}
