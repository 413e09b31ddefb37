//! `memsight summarize PATH… --out FILE.db`: every rank of the profiles, summarised next to its
//! data into one small SQLite file ([`crate::export::cluster_db`]) that a merge combines with
//! others and the overview opens; `memsight summarize --merge A.db B.db … --out ALL.db` merges.
//! Ranks are read one at a time (one rank's memory); a rank that fails is recorded with its
//! error. Only `--out` is written, never a profile folder.

use crate::model::plural::count;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::analysis::stacks::{GroupKey, group_label, group_rows};
use crate::analysis::{GroupBy, LiveIndex, RankView, build_series, live_at, step_report};
use crate::export::cluster_db::{
    Amount, CURVE_BUCKETS, RankIdentity, RankRecord, StepRow, Summary, envelope, read_summary,
    write_summary,
};
use crate::export::summary::{identity, summarize as summarize_rank};
use crate::ingest::{LoadControl, load_rank};
use crate::model::{RankData, RankInfo, SourceChoice, bytes_to_kib, bytes_to_mib, ns_to_ms};

/// Operators and source lines kept per rank, largest at the peak first.
const TOP: usize = 20;

/// Options of `summarize`.
#[derive(Debug, Clone, clap::Args)]
pub struct SummarizeArgs {
    /// Profiling folders, .db files or traces; with --merge, summary files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The summary file to write (replaced when it exists; never inside a profile folder).
    #[arg(long)]
    pub out: PathBuf,
    /// Merge summary files (newest files win for a rank summarised twice) instead.
    #[arg(long)]
    pub merge: bool,
    /// Record the paths as ranks that failed with this message, without reading them (what a
    /// fan-out writes for a rank whose worker kept failing, so that the rank is not lost).
    #[arg(long, value_name = "MESSAGE", conflicts_with = "merge")]
    pub failed: Option<String>,
}

/// Runs `summarize`; returns the exit code.
pub fn summarize(
    source: SourceChoice,
    args: &SummarizeArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> i32 {
    // A scheduler's SIGTERM must not leave the temporary summary behind.
    crate::export::pending_files::remove_on_termination();
    let mut run = || -> Result<(), String> {
        check_out(&args.out, &args.paths, args.merge)?;
        let summary = if args.merge {
            merge_files(&args.paths)?
        } else if let Some(message) = &args.failed {
            Summary {
                ranks: args
                    .paths
                    .iter()
                    .map(|p| unreadable(p, message.clone()))
                    .collect(),
                notes: Vec::new(),
                summarised_on: crate::export::cluster_db::this_machine(),
            }
        } else {
            summarize_paths(&args.paths, source, err)
        };
        let written = write_summary(&args.out, summary).map_err(|e| e.to_string())?;
        for n in &written.notes {
            let _ = writeln!(err, "memsight: note: {n}");
        }
        let failed = written.ranks.iter().filter(|r| r.error.is_some()).count();
        writeln!(
            out,
            "{} ({failed} could not be read) written to {}",
            count(written.ranks.len() as u64, "rank", "ranks"),
            args.out.display()
        )
        .map_err(|e| e.to_string())
    };
    super::finish(run(), err)
}

/// Where `--out` may be written: never over or into an input, never over anything but a
/// regular file.
/// - Not the same file as any input (compared by canonical path and by file identity, so a hard
///   link or another spelling of the input is caught).
/// - Unless merging, not inside the folder of any input: a folder given as input, or the folder
///   holding a file given as input (nothing is ever written into the user's profile folders;
///   `--merge` reads memsight's own summary files, so writing beside them is allowed).
/// - Over nothing, or over a regular file (a link is followed: a link to `/dev/null` is refused;
///   the file is replaced by a rename, so a FIFO or device would not be written through anyway,
///   but it would be replaced).
fn check_out(out: &Path, inputs: &[PathBuf], merge: bool) -> Result<(), String> {
    let parent = match out.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let Ok(parent) = parent.canonicalize() else {
        return Err(format!(
            "cannot write {}: its folder does not exist",
            out.display()
        ));
    };
    match std::fs::metadata(out) {
        Ok(m) if !m.is_file() => {
            return Err(format!(
                "--out {} is {}, not a regular file; memsight writes only a new file \
                 or over a regular one",
                out.display(),
                crate::ingest::safe_fs::file_kind(&m)
            ));
        }
        _ => {}
    }
    let name = out.file_name().unwrap_or_default();
    let spelled = parent.join(name);
    for input in inputs {
        let Ok(canonical) = input.canonicalize() else {
            continue; // reported when it is read
        };
        if canonical == spelled || same_file::is_same_file(out, input).unwrap_or(false) {
            return Err(format!(
                "--out {} is the input {}; memsight never writes over its input",
                out.display(),
                input.display()
            ));
        }
        if merge {
            continue;
        }
        let folder = if canonical.is_dir() {
            canonical.as_path()
        } else {
            canonical.parent().unwrap_or(&canonical)
        };
        if parent.starts_with(folder) {
            return Err(format!(
                "--out {} is inside the folder of the input {}; memsight never writes into a \
                 profile folder: write the summary somewhere else",
                out.display(),
                input.display()
            ));
        }
    }
    Ok(())
}

fn merge_files(paths: &[PathBuf]) -> Result<Summary, String> {
    let mut all = Summary::default();
    let mut machines = std::collections::BTreeSet::new();
    for p in paths {
        let s = read_summary(p).map_err(|e| e.to_string())?;
        all.ranks.extend(s.ranks);
        all.notes.extend(s.notes);
        machines.insert(s.summarised_on);
    }
    // The machine that summarised them, when they all say the same one.
    if machines.len() == 1 {
        all.summarised_on = machines.into_iter().next().flatten();
    }
    Ok(all)
}

fn summarize_paths(paths: &[PathBuf], source: SourceChoice, err: &mut dyn Write) -> Summary {
    let mut summary = Summary {
        summarised_on: crate::export::cluster_db::this_machine(),
        ..Summary::default()
    };
    for path in paths {
        let profile = match super::discover_profile(path) {
            Ok(p) => p,
            Err(e) => {
                // Recorded as a rank of its own, so that a fan-out loses nothing.
                let _ = writeln!(err, "memsight: {e}");
                summary.ranks.push(unreadable(path, e.clone()));
                continue;
            }
        };
        for n in &profile.notes {
            summary.notes.push(format!("{}: {n}", path.display()));
        }
        let devices: Vec<Option<&str>> =
            profile.ranks.iter().map(|r| r.device.as_deref()).collect();
        let count = crate::analysis::rank_meant::parallel_ranks(&devices);
        for info in &profile.ranks {
            let record = record_of(info, source, count);
            if let Some(e) = &record.error {
                let _ = writeln!(err, "memsight: {e}");
            }
            summary.ranks.push(record);
        }
    }
    summary
}

/// A path that is not a profile at all, as a rank with its error.
fn unreadable(path: &Path, error: String) -> RankRecord {
    let (files, files_bytes, files_mtime_ns) = file_stats(&[path.to_path_buf()]);
    let identity = RankIdentity {
        host: None,
        rank: String::new(),
        device: None,
        path: path.display().to_string(),
        source: String::new(),
        format: String::new(),
        files,
        files_bytes,
        files_mtime_ns,
    };
    RankRecord::failed(identity, error, "null".into())
}

/// How many of `files` exist, their total size and newest modification time (ns since the
/// epoch).
fn file_stats(files: &[PathBuf]) -> (i64, i64, i64) {
    let (mut n, mut bytes, mut newest) = (0i64, 0i64, 0i64);
    for f in files {
        let Ok(meta) = std::fs::metadata(f) else {
            continue;
        };
        n = n.saturating_add(1);
        bytes = bytes.saturating_add(i64::try_from(meta.len()).unwrap_or(i64::MAX));
        let mtime = meta
            .modified()
            .ok()
            .and_then(|m| m.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
        newest = newest.max(mtime);
    }
    (n, bytes, newest)
}

fn identity_of(info: &RankInfo) -> RankIdentity {
    let (files, files_bytes, files_mtime_ns) = file_stats(&info.source.files());
    RankIdentity {
        host: info.host.clone(),
        rank: info.rank.clone(),
        device: info.device.clone(),
        // Absolute, so that the summary's links work wherever it is opened from.
        path: std::path::absolute(&info.dir)
            .unwrap_or_else(|_| info.dir.clone())
            .display()
            .to_string(),
        source: info.source.kind().to_string(),
        format: info.format.as_str().to_string(),
        files,
        files_bytes,
        files_mtime_ns,
    }
}

/// One rank's record: loaded, summarised, its data dropped before the next rank is read.
fn record_of(info: &RankInfo, source: SourceChoice, ranks_in_profile: usize) -> RankRecord {
    let id = identity_of(info);
    let loaded = super::rank::with_source(info, source)
        .and_then(|i| load_rank(&i, &LoadControl::new()).map_err(|e| e.to_string()));
    match loaded {
        Ok(data) => record_of_loaded(id, data, ranks_in_profile),
        Err(e) => {
            let mut s = identity(info);
            s.warnings.push(crate::model::Message::NotLoaded {
                cause: e.clone().into(),
            });
            let inspect_json = serde_json::to_string(&s).unwrap_or_else(|_| "null".into());
            RankRecord::failed(id, e, inspect_json)
        }
    }
}

fn record_of_loaded(identity: RankIdentity, data: RankData, ranks: usize) -> RankRecord {
    let summary = summarize_rank(&data);
    let inspect_json = serde_json::to_string(&summary).unwrap_or_else(|_| "null".into());
    let (steps_json, steps) = match data.steps {
        Some(_) => {
            let report = step_report(&data);
            let rows = report
                .steps
                .iter()
                .map(|s| StepRow {
                    step: s.step.id,
                    start_ms: ns_to_ms(s.start),
                    end_ms: ns_to_ms(s.end),
                    peak_allocated_mib: s.peak_allocated.map(|p| bytes_to_mib(p.0)),
                    peak_at_ms: s.peak_allocated.map(|p| ns_to_ms(p.1)),
                    end_allocated_mib: s.end_allocated.map(bytes_to_mib),
                    change_mib: s.change.map(bytes_to_mib),
                    survivors: i64::try_from(s.survivors.len()).unwrap_or(i64::MAX),
                    survivors_kib: bytes_to_kib(s.survivor_bytes),
                })
                .collect();
            (
                Some(crate::reports::steps::steps_json(&data, &report).to_string()),
                rows,
            )
        }
        None => (None, Vec::new()),
    };
    // What held the memory at the Operator Allocated peak.
    let peak_ns = summary
        .peaks
        .operator_allocated
        .as_ref()
        .map(|p| crate::model::ms_to_ns(p.at_ms));
    let (top_operators, top_lines) = match peak_ns {
        Some(t) => top_at(&data, t),
        None => (Vec::new(), Vec::new()),
    };
    let curves = build_series(&data, GroupBy::Overall)
        .into_iter()
        .filter_map(|s| {
            Some((
                s.name.clone(),
                envelope(&s.times, &s.values, CURVE_BUCKETS)?,
            ))
        })
        .collect();
    let view = RankView::new(data);
    let report = view.roles();
    // The advice without its replays: a summary stays one pass over each rank
    // (`memsight roles` replays them).
    let advice = report.advice_for(ranks);
    let roles_json =
        crate::reports::roles::roles_json(&view.data, report, &advice, false).to_string();
    let roles_at_peak = report
        .at_peak
        .as_ref()
        .map(|at| {
            at.roles
                .iter()
                .map(|r| Amount {
                    name: r.role.as_str().to_string(),
                    mib: bytes_to_mib(r.bytes),
                    blocks: i64::try_from(r.blocks).unwrap_or(i64::MAX),
                })
                .collect()
        })
        .unwrap_or_default();
    RankRecord {
        identity,
        error: None,
        inspect_json,
        steps_json,
        roles_json: Some(roles_json),
        steps,
        roles_at_peak,
        top_operators,
        top_lines,
        curves,
    }
}

/// The operators and the source lines holding the most at `t` (ns from the origin).
fn top_at(data: &RankData, t: i64) -> (Vec<Amount>, Vec<Amount>) {
    let index = LiveIndex::new(data);
    let live = live_at(data, &index, t);
    let operators = live
        .by_name
        .iter()
        .take(TOP)
        .map(|&(id, bytes, n)| Amount {
            name: data.display_name(id).to_string(),
            mib: bytes_to_mib(bytes),
            blocks: i64::try_from(n).unwrap_or(i64::MAX),
        })
        .collect();
    let lines = match &data.stacks {
        Some(stacks) => {
            let mut groups = group_rows(data, stacks, &live.rows, GroupKey::SourceLine);
            groups.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.key.cmp(&b.key)));
            groups
                .iter()
                .filter_map(|g| {
                    let label = group_label(stacks, GroupKey::SourceLine, g.key)?;
                    Some(Amount {
                        name: label,
                        mib: bytes_to_mib(g.bytes),
                        blocks: i64::try_from(g.blocks).unwrap_or(i64::MAX),
                    })
                })
                .take(TOP)
                .collect()
        }
        None => Vec::new(),
    };
    (operators, lines)
}
