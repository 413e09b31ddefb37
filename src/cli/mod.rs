//! The headless subcommands. Each returns the process exit code and writes to the given streams,
//! so tests can run them in-process.

pub mod command_line;
pub mod compare;
pub mod components;
pub mod curve;
pub mod explain;
pub mod inspect;
pub mod rank;
pub mod snapshot;
pub mod snapshot_compare;
pub mod snapshot_text;
pub mod static_graph;
pub mod summarize;
pub mod table;

pub use crate::reports::live::LiveArgs;
pub use crate::reports::modules::ModulesArgs;
pub use crate::reports::roles::RolesArgs;
pub use crate::reports::stacks::StacksArgs;
pub use crate::reports::steps::StepsArgs;
pub use crate::reports::whatif::WhatifArgs;
pub use compare::{CompareArgs, compare};
pub use components::components;
pub use curve::{CurveArgs, curve};
pub use explain::{ExplainArgs, explain};
pub use inspect::inspect;
pub use snapshot::{SnapshotArgs, snapshot};
pub use static_graph::{StaticArgs, static_graph};
pub use summarize::{SummarizeArgs, summarize};
pub use table::{TableArgs, table};

use std::io::Write;
use std::path::{Path, PathBuf};

use crate::model::SourceChoice;

pub(crate) use crate::reports::text::{indent, one_line, text_table};

/// Runs `live` (what is alive at a time); returns the exit code.
pub fn live(
    path: &Path,
    source: SourceChoice,
    args: &LiveArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    rank::run::<crate::reports::live::Live>(path, source, args, out, err)
}

/// Runs `modules` (memory by `nn.Module`); returns the exit code.
pub fn modules(
    path: &Path,
    source: SourceChoice,
    args: &ModulesArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    rank::run::<crate::reports::modules::Modules>(path, source, args, out, err)
}

/// Runs `roles` (memory by training role); returns the exit code.
pub fn roles(
    path: &Path,
    source: SourceChoice,
    args: &RolesArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    rank::run::<crate::reports::roles::Roles>(path, source, args, out, err)
}

/// Runs `stacks` (memory by call stack, line, op or role); returns the exit code.
pub fn stacks(
    path: &Path,
    source: SourceChoice,
    args: &StacksArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    rank::run::<crate::reports::stacks::Stacks>(path, source, args, out, err)
}

/// Runs `steps` on `rank` (default the rank a user means); returns the exit code.
pub fn steps(
    path: &Path,
    source: SourceChoice,
    rank: Option<&str>,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    let args = StepsArgs {
        rank: rank.map(str::to_string),
        json,
        lang: None,
    };
    rank::run::<crate::reports::steps::Steps>(path, source, &args, out, err)
}

/// Runs `whatif` (the peak of a run not made); returns the exit code.
pub fn whatif(
    path: &Path,
    source: SourceChoice,
    args: &WhatifArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    rank::run::<crate::reports::whatif::Whatif>(path, source, args, out, err)
}

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
}
