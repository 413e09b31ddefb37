//! `memsight inspect PATH [--json]`: a summary of every rank, loaded one at a time so a 64-rank
//! folder needs one rank's memory, not 64.

use crate::model::plural::count;
use std::io::Write;
use std::path::Path;

use crate::model::SourceChoice;

use super::EXIT_FAILURE;
use crate::export::summary::{RankSummary, identity, render_text, summarize};
use crate::ingest::{LoadControl, load_rank};

/// Runs `inspect`; returns the exit code (0 when at least one rank loaded, else 2).
pub fn inspect(
    path: &Path,
    source: SourceChoice,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let profile = match super::discover_profile(path) {
        Ok(p) => p,
        Err(e) => {
            let _ = writeln!(err, "memsight: {e}");
            return EXIT_FAILURE;
        }
    };
    let mut summaries: Vec<RankSummary> = Vec::with_capacity(profile.ranks.len());
    let mut loaded = 0usize;
    let mut failures = Vec::new();
    for info in &profile.ranks {
        // One rank at a time: its data is dropped before the next is read.
        let loaded_rank = super::rank::with_source(info, source)
            .map_err(|e| crate::model::Cause::said(e.to_string()))
            .and_then(|i| load_rank(&i, &LoadControl::new()).map_err(|e| e.cause()));
        match loaded_rank {
            Ok(data) => {
                loaded += 1;
                let s = summarize(&data);
                if !json {
                    let _ = write!(out, "{}", render_text(&s));
                }
                summaries.push(s);
            }
            Err(e) => {
                let mut s = identity(info);
                s.warnings
                    .push(crate::model::Message::NotLoaded { cause: e.clone() });
                if !json {
                    let _ = write!(out, "{}", render_text(&s));
                }
                failures.push(e.to_string());
                summaries.push(s);
            }
        }
    }
    if json {
        #[derive(serde::Serialize)]
        struct Doc<'a> {
            ranks: &'a [RankSummary],
            notes: &'a [crate::model::Message],
        }
        let doc = Doc {
            ranks: &summaries,
            notes: &profile.notes,
        };
        let _ = writeln!(
            out,
            "{}",
            serde_json::to_string_pretty(&doc).unwrap_or_default()
        );
    } else {
        for n in &profile.notes {
            let _ = writeln!(out, "note: {n}");
        }
        let _ = writeln!(
            out,
            "{loaded} of {} loaded from {}",
            count(profile.ranks.len() as u64, "rank", "ranks"),
            path.display()
        );
    }
    if loaded == 0 {
        let _ = writeln!(
            err,
            "memsight: no rank could be loaded from {}: {}",
            path.display(),
            failures.join("; ")
        );
        return EXIT_FAILURE;
    }
    0
}
