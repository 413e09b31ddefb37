//! `memsight snapshot PATH`: an allocator snapshot's devices, peaks and who holds the memory.

use std::io::Write;
use std::path::Path;

use crate::ingest::msmemscope::OomDetail;
use crate::snapshot::compiled::compiled_json;
use crate::snapshot::fragmentation::{Fragmentation, diagnose, fragmentation_at};
use crate::snapshot::join::{ProfileJoin, join_profile};
use crate::snapshot::oom::{ModuleUsage, OomReport, OomVerdict, oom_reports, usage_beside};
use crate::snapshot::phases::phases_json;
use crate::snapshot::pinned::pinned_summary;
use crate::snapshot::pools::private_pools;
use crate::snapshot::{AllocatorSnapshot, SnapshotSummary, summarize_snapshot};

/// Options of `memsight snapshot`.
#[derive(Debug, Clone, clap::Args)]
pub struct SnapshotArgs {
    /// The state just after this event (0-based index into the device's trace).
    #[arg(long)]
    pub at_event: Option<usize>,
    /// Device for --at-event, the fragmentation diagnosis and the live blocks by phase; default
    /// the device of the first OOM, else the first device with events.
    #[arg(long)]
    pub device: Option<i64>,
    /// How many stacks to list.
    #[arg(long, default_value_t = 20)]
    pub top: usize,
    /// JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// A PyTorch profiler trace (or its folder) of the same run: the live blocks at the peak
    /// (or --at-event) get its operator names and steps, joined by time. A trace beside the
    /// snapshot is joined without it.
    #[arg(long)]
    pub profile: Option<std::path::PathBuf>,
    /// The text's language (the JSON has none): en or zh; default the locale's (LC_ALL,
    /// LC_MESSAGES, LANG).
    #[arg(long, value_parser = crate::reports::parse_lang)]
    pub lang: Option<crate::model::Lang>,
}

/// Runs `memsight snapshot`; returns the exit code.
pub fn snapshot(path: &Path, args: &SnapshotArgs, out: &mut dyn Write, err: &mut dyn Write) -> i32 {
    super::finish(run(path, args, out, err), err)
}

fn run(
    path: &Path,
    args: &SnapshotArgs,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> Result<(), String> {
    if path.is_dir() {
        return run_cluster(path, args, out);
    }
    let answer = compute(path, args, err)?;
    let w = |e: std::io::Error| e.to_string();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &answer_json(&answer, args))
            .map_err(|e| e.to_string())?;
        writeln!(out).map_err(w)
    } else {
        let lang = args.lang.unwrap_or_else(crate::reports::default_lang);
        super::snapshot_text::write_answer(&answer, args, lang, out).map_err(w)
    }
}

/// `memsight snapshot`'s answer on one snapshot file, computed once: what `--json` and the
/// text print, and what `explain` composes.
pub struct SnapshotAnswer {
    /// The snapshot.
    pub snap: AllocatorSnapshot,
    /// `--at-event` on its device.
    pub at: Option<(i64, usize)>,
    /// The device the fragmentation, phases and pools are of.
    pub device: i64,
    /// The devices' figures and top stacks.
    pub summary: SnapshotSummary,
    /// Why it ran out, at each explained `oom` event.
    pub ooms: Vec<OomReport>,
    /// The CANN modules' memory at the OOM (torch_npu's memUsageInfo beside it).
    pub modules: Vec<ModuleUsage>,
    /// msMemScope's `OOM_DETAIL` rows beside it: (dump, rows).
    pub memscope: Vec<(String, Vec<OomDetail>)>,
    /// Why memory is fragmented at the event diagnosed.
    pub fragmentation: Fragmentation,
    /// The profile joined by time, with its path.
    pub joined: Option<(std::path::PathBuf, ProfileJoin)>,
}

impl SnapshotAnswer {
    /// The OOMs at the event the fragmentation is diagnosed at.
    pub fn ooms_at_diagnosis(&self) -> Vec<&OomReport> {
        let f = &self.fragmentation;
        self.ooms
            .iter()
            .filter(|o| o.device == f.device && o.event == f.at_event)
            .collect()
    }

    /// Whether the diagnosis is of an OOM whose verdict is not fragmentation: its fix is not
    /// why it ran out.
    pub fn fix_is_not_why(&self) -> bool {
        self.ooms_at_diagnosis()
            .iter()
            .any(|o| o.verdict != OomVerdict::Fragmentation)
    }
}

/// The answer on the snapshot file at `path`; notes (OOM events not explained, memUsageInfo
/// files unread) go to `err`.
pub fn compute(
    path: &Path,
    args: &SnapshotArgs,
    err: &mut dyn Write,
) -> Result<SnapshotAnswer, String> {
    let snap = AllocatorSnapshot::open(path).map_err(|e| e.to_string())?;
    let at = args.at_event.map(|k| {
        let device = args.device.unwrap_or_else(|| {
            snap.traces
                .iter()
                .position(|t| !t.is_empty())
                .map_or(0, |d| d as i64)
        });
        (device, k)
    });
    let summary = summarize_snapshot(&snap, at, args.top).map_err(|e| e.to_string())?;
    // Why it ran out, when the trace has an `oom` event, and the CANN modules' memory torch_npu
    // wrote beside the OOM snapshot.
    let ooms = oom_reports(&snap);
    let oom_events = crate::snapshot::oom::oom_event_count(&snap);
    if oom_events > ooms.len() {
        let _ = writeln!(
            err,
            "memsight: note: {oom_events} oom events; the first and the last {} of each device \
             are explained",
            crate::snapshot::oom::OOMS_EXPLAINED_AT_EACH_END
        );
    }
    let usage = usage_beside(path);
    for n in &usage.notes {
        let _ = writeln!(err, "memsight: note: {n}");
    }
    let modules = usage.modules;
    let memscope = crate::snapshot::oom::memscope_oom_beside(path);
    // Why it is fragmented: at the chosen event, else (on --device, else on the device of the
    // first OOM) at the first OOM, else at the snapshot's end.
    let device = at
        .map(|a| a.0)
        .or(args.device)
        .or_else(|| ooms.first().map(|o| o.device))
        .unwrap_or_else(|| {
            snap.traces.iter().position(|t| !t.is_empty()).map_or_else(
                || snap.segments.first().map_or(0, |g| g.device),
                |d| d as i64,
            )
        });
    let fragmentation = match at {
        Some((d, k)) => fragmentation_at(&snap, d, k, 0),
        None => diagnose(&snap, device),
    };
    let joined = profile_join(path, &snap, &summary, device, at, args, err)?;
    Ok(SnapshotAnswer {
        snap,
        at,
        device,
        summary,
        ooms,
        modules,
        memscope,
        fragmentation,
        joined,
    })
}

/// The answer as `--json` prints it.
pub fn answer_json(a: &SnapshotAnswer, args: &SnapshotArgs) -> serde_json::Value {
    let SnapshotAnswer {
        snap,
        at,
        device,
        summary,
        ooms,
        modules,
        memscope,
        fragmentation,
        joined,
    } = a;
    let (at, device) = (*at, *device);
    let mut v = serde_json::to_value(summary).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.insert("oom".into(), serde_json::to_value(ooms).unwrap_or_default());
        o.insert(
            "modules_at_oom".into(),
            serde_json::to_value(modules).unwrap_or_default(),
        );
        let dumps: Vec<serde_json::Value> = memscope
            .iter()
            .map(|(file, rows)| serde_json::json!({ "file": file, "rows": rows }))
            .collect();
        o.insert("memscope_oom".into(), serde_json::Value::Array(dumps));
        o.insert("fragmentation".into(), fragmentation.to_json());
        let at_event = at.filter(|a| a.0 == device).map(|a| a.1);
        if let serde_json::Value::Object(p) = phases_json(snap, device, at_event) {
            o.extend(p);
        }
        o.insert(
            "compile_contexts".into(),
            compiled_json(snap, device, at_event),
        );
        o.insert(
            "pinned_host".into(),
            serde_json::to_value(pinned_summary(snap, args.top)).unwrap_or_default(),
        );
        o.insert("fx_frames_mapped".into(), snap.fx_frames_mapped.into());
        o.insert(
            "profile_join".into(),
            joined.as_ref().map_or(serde_json::Value::Null, |(p, j)| {
                let mut v = serde_json::to_value(j).unwrap_or_default();
                if let Some(o) = v.as_object_mut() {
                    o.insert("profile".into(), p.display().to_string().into());
                }
                v
            }),
        );
        o.insert(
            "private_pools".into(),
            serde_json::json!({
                "device": device,
                "pools": serde_json::to_value(private_pools(snap, device)).unwrap_or_default(),
            }),
        );
    }
    v
}

/// A folder of OOM bundles, one per rank: which ranks ran out and how close the others were.
fn run_cluster(dir: &Path, args: &SnapshotArgs, out: &mut dyn Write) -> Result<(), String> {
    let cluster = crate::snapshot::cluster::bundle_cluster(dir);
    if cluster.rows.is_empty() && cluster.unreadable.is_empty() {
        return Err(format!(
            "{}: no allocator snapshot (.pickle, .pkl) in it",
            dir.display()
        ));
    }
    let w = |e: std::io::Error| e.to_string();
    if args.json {
        serde_json::to_writer_pretty(&mut *out, &cluster).map_err(|e| e.to_string())?;
        return writeln!(out).map_err(w);
    }
    write!(out, "{}", crate::snapshot::cluster::cluster_tsv(&cluster)).map_err(w)
}

/// The snapshot joined to the profile of the same run: `--profile`, else a PyTorch trace in the
/// snapshot's own folder (quietly skipped when there is none or it is not of this run). The
/// live blocks are those just after `at`, else at the device's allocated peak.
fn profile_join(
    path: &Path,
    snap: &AllocatorSnapshot,
    summary: &SnapshotSummary,
    device: i64,
    at: Option<(i64, usize)>,
    args: &SnapshotArgs,
    err: &mut dyn Write,
) -> Result<Option<(std::path::PathBuf, ProfileJoin)>, String> {
    let asked = args.profile.is_some();
    let Some(profile) = args
        .profile
        .clone()
        .or_else(|| crate::ingest::pytorch::trace::trace_beside(path))
    else {
        return Ok(None);
    };
    let moment = at.filter(|a| a.0 == device).map(|a| a.1).or_else(|| {
        summary
            .devices
            .iter()
            .find(|d| d.device == device)
            .and_then(|d| d.peak_event)
    });
    let joined = (|| {
        if !crate::snapshot::join::has_times(snap, device) {
            return Err(crate::snapshot::join::JoinError::NoTimes.to_string());
        }
        let (data, base) =
            crate::ingest::pytorch::trace::load_device_rank(&profile, &join_device(snap, device))
                .map_err(|e| e.to_string())?;
        join_profile(snap, device, moment, &data, base).map_err(|e| e.to_string())
    })();
    match joined {
        Ok(j) => Ok(Some((profile, j))),
        Err(e) if asked => Err(format!("{}: {e}", profile.display())),
        Err(e) => {
            let _ = writeln!(
                err,
                "memsight: note: not joined with {}: {e}",
                profile.display()
            );
            Ok(None)
        }
    }
}

/// The profile's name of the snapshot's device: `cuda:0`, `npu:1`.
fn join_device(snap: &AllocatorSnapshot, device: i64) -> String {
    snap.backend.device_label(device).to_ascii_lowercase()
}
