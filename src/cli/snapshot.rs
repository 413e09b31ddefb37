//! `memsight snapshot PATH`: an allocator snapshot's devices, peaks and who holds the memory.

use crate::model::plural::{count, noun};
use std::io::Write;
use std::path::Path;

use crate::ingest::msmemscope::{OomDetail, OomDetailKind};
use crate::model::Lang;
use crate::model::bytes_to_mib;
use crate::snapshot::compiled::{by_compile_context, compiled_json};
use crate::snapshot::fragmentation::{Fragmentation, diagnose, fragmentation_at};
use crate::snapshot::join::{ProfileJoin, join_profile};
use crate::snapshot::oom::{
    ModuleUsage, OomReport, OomVerdict, WHATIF_COMMAND, cli_mb, levers, oom_reports, usage_beside,
};
use crate::snapshot::phases::{AllocatedIn, live_by_phase, phases, phases_json};
use crate::snapshot::pinned::pinned_summary;
use crate::snapshot::pools::private_pools;
use crate::snapshot::{AllocatorSnapshot, Frame, SnapshotSummary, summarize_snapshot};

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
        write_answer(&answer, args, out).map_err(w)
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

/// The answer as text.
fn write_answer(
    a: &SnapshotAnswer,
    args: &SnapshotArgs,
    out: &mut dyn Write,
) -> std::io::Result<()> {
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
    if snap.segments.is_empty() && snap.traces.iter().all(Vec::is_empty) {
        // Only pinned host memory (`record_cuda=False`): no device to describe.
        writeln!(
            out,
            "no device memory in this snapshot (recorded with record_cuda=False?)"
        )?;
        write_pinned(snap, args.top, out)?;
    } else {
        write_oom(ooms, modules, snap.backend.alloc_conf(), out)?;
        // The diagnosis of an OOM goes under it; else after the summary.
        let at_oom = !a.ooms_at_diagnosis().is_empty();
        if at_oom {
            write_fragmentation(fragmentation, a.fix_is_not_why(), out)?;
        }
        write_memscope_oom(memscope, out)?;
        write_text(summary, out)?;
        if !at_oom {
            writeln!(out)?;
            write_fragmentation(fragmentation, false, out)?;
        }
        let at_event = at.filter(|a| a.0 == device).map(|a| a.1);
        write_phases(snap, device, at_event, out)?;
        write_compiled(snap, device, at_event, out)?;
        write_pools(snap, device, out)?;
        write_pinned(snap, args.top, out)?;
        if let Some((p, j)) = joined {
            write_join(p, j, args.top, out)?;
        }
        if snap.fx_frames_mapped > 0 {
            writeln!(
                out,
                "\n{} of FX-generated code named by the model's line (fx_original_trace)",
                count(snap.fx_frames_mapped, "frame", "frames")
            )?;
        }
    }
    Ok(())
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

/// The phases of `device` (the user's annotations) and the live blocks at `at` (None: the end)
/// by the phase that allocated them; nothing when the snapshot has no annotation for it.
fn write_phases(
    snap: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let ps = phases(snap, device);
    if ps.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nphases (the user's annotations) on device {device}, MB:"
    )?;
    let rows: Vec<Vec<String>> = ps
        .iter()
        .map(|p| {
            vec![
                format!("{}{}", super::indent(p.depth), super::one_line(&p.name)),
                p.events
                    .map_or_else(|| "-".to_string(), |(f, l)| format!("{f}–{l}")),
                format!("{:.2}", bytes_to_mib(p.allocated_before)),
                format!("{:.2}", bytes_to_mib(p.peak_allocated)),
                format!("{:.2}", bytes_to_mib(p.allocated_after)),
            ]
        })
        .collect();
    write!(
        out,
        "{}",
        super::text_table(&["Phase", "Events", "Before", "Peak", "After"], &rows)
    )?;
    let when = at.map_or_else(|| "at the end".to_string(), |k| format!("after event {k}"));
    writeln!(
        out,
        "\nlive blocks {when}, by the phase that allocated them:"
    )?;
    for h in live_by_phase(snap, device, at) {
        let name = match h.allocated_in {
            AllocatedIn::Phase(n) => n.to_string(),
            AllocatedIn::NoPhase => "(outside every phase)".to_string(),
            AllocatedIn::BeforeTrace => "(before the trace)".to_string(),
        };
        writeln!(
            out,
            "  {:>10.2} MB  {}  {}",
            bytes_to_mib(h.bytes),
            count(h.blocks, "block", "blocks"),
            super::one_line(&name)
        )?;
    }
    Ok(())
}

/// What each `torch.compile`d region of `device` allocated, and what of it is live at `at`;
/// nothing when no event names a region.
fn write_compiled(
    snap: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let regions = by_compile_context(snap, device, at);
    if regions.is_empty() {
        return Ok(());
    }
    let when = at.map_or_else(|| "at the end".to_string(), |k| format!("after event {k}"));
    writeln!(
        out,
        "\nallocated in torch.compile regions on device {device} (live {when}):"
    )?;
    for r in regions {
        writeln!(
            out,
            "  {:>10.2} MB in {}, {:.2} MB live in {}  {}",
            bytes_to_mib(r.alloc_bytes),
            count(r.allocs, "allocation", "allocations"),
            bytes_to_mib(r.live_bytes),
            count(r.live_blocks, "block", "blocks"),
            r.context
        )?;
    }
    Ok(())
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

/// The live blocks by the profile's operator and step.
fn write_join(
    profile: &Path,
    j: &ProfileJoin,
    top: usize,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "\njoined by time with the profile {}: {} of {} matched ({} within its span)",
        profile.display(),
        j.matched,
        count(j.alloc_events as u64, "allocation", "allocations"),
        j.in_profile
    )?;
    let when = j
        .at_event
        .map_or_else(|| "at the end".to_string(), |k| format!("after event {k}"));
    writeln!(
        out,
        "live blocks {when} on device {}, by the profile's operator and step:",
        j.device
    )?;
    for g in j.live.iter().take(top) {
        let op = match &g.op {
            None => "(not in the profile)",
            Some(o) if o.is_empty() => "(no operator)",
            Some(o) => o,
        };
        let step = g.step.map_or_else(String::new, |s| format!("  step {s}"));
        writeln!(
            out,
            "  {:>10.2} MB in {}  {op}{step}",
            bytes_to_mib(g.bytes),
            count(g.blocks, "block", "blocks")
        )?;
    }
    Ok(())
}

/// The private pools of `device` (CUDA graphs, `MemPool`); nothing without one.
fn write_pools(snap: &AllocatorSnapshot, device: i64, out: &mut dyn Write) -> std::io::Result<()> {
    let pools = private_pools(snap, device);
    if pools.is_empty() {
        return Ok(());
    }
    writeln!(
        out,
        "\nprivate pools (CUDA graphs, MemPool) on device {device}, MB:"
    )?;
    for p in pools {
        let at = p.peak_event.map_or_else(
            || "before the trace".to_string(),
            |k| format!("at event {k}"),
        );
        writeln!(
            out,
            "  pool ({}, {}): {}, {:.2} reserved (peak {:.2}), {:.2} allocated (peak {:.2} {at})",
            p.pool.0,
            p.pool.1,
            count(p.segments as u64, "segment", "segments"),
            bytes_to_mib(p.reserved_bytes),
            bytes_to_mib(p.peak_reserved_bytes),
            bytes_to_mib(p.allocated_bytes),
            bytes_to_mib(p.peak_allocated_bytes),
        )?;
    }
    Ok(())
}

/// The pinned host memory (`host_segments` / `host_traces`); nothing when not recorded.
fn write_pinned(snap: &AllocatorSnapshot, top: usize, out: &mut dyn Write) -> std::io::Result<()> {
    let Some(p) = pinned_summary(snap, top) else {
        return Ok(());
    };
    writeln!(
        out,
        "\npinned host memory (record_pinned_host_memory): {:.2} MB reserved in {}, \
         {:.2} MB allocated, {:.2} MB waiting for streams; peak {:.2} MB over {}",
        bytes_to_mib(p.reserved_bytes),
        count(p.segments as u64, "segment", "segments"),
        bytes_to_mib(p.allocated_bytes),
        bytes_to_mib(p.pending_free_bytes),
        bytes_to_mib(p.peak_allocated_bytes),
        count(p.events as u64, "event", "events"),
    )?;
    for t in &p.top_stacks {
        let frame = t
            .frame
            .as_ref()
            .map_or_else(|| "(no stack)".into(), |f| f.text());
        let frame = match &t.via {
            Some(via) => format!("{frame}  (via {})", via.short_text()),
            None => frame,
        };
        writeln!(
            out,
            "  {:>10.2} MB in {}  {frame}",
            bytes_to_mib(t.bytes),
            count(t.blocks, "block", "blocks")
        )?;
    }
    Ok(())
}

/// The OOM lines of the text output (nothing without an `oom` event or memUsageInfo).
fn write_oom(
    ooms: &[OomReport],
    modules: &[ModuleUsage],
    conf: &str,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let en = Lang::En;
    for o in ooms {
        writeln!(out, "{}", o.headline(en, &cli_mb))?;
        // The advice follows the verdict (OomAdvice): a fragmentation fix only for
        // fragmentation.
        let fix = o.advice.line(en, conf, &cli_mb);
        if !fix.is_empty() {
            writeln!(out, "  {fix}")?;
            if o.advice.holds_less() {
                writeln!(out, "  how: {}", levers(en, WHATIF_COMMAND))?;
            }
        }
    }
    if !modules.is_empty() {
        writeln!(out, "memory by CANN module at the OOM (memUsageInfo), MB:")?;
        for m in modules {
            writeln!(
                out,
                "  device {} {:<24} current {:>10.2} peak {:>10.2}",
                m.device, m.module, m.current_mb, m.peak_mb
            )?;
        }
    }
    if !ooms.is_empty() || !modules.is_empty() {
        writeln!(out)?;
    }
    Ok(())
}

/// The fragmentation lines: reserved − allocated by cause, the largest request that fits, the
/// fix of the largest cause.
fn write_fragmentation(
    f: &Fragmentation,
    not_why: bool,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let free = f.reserved_bytes.saturating_sub(f.allocated_bytes);
    writeln!(
        out,
        "fragmentation on device {} at event {}: reserved {:.2} MB, allocated {:.2} MB, {:.2} MB not handed out",
        f.device,
        f.at_event,
        bytes_to_mib(f.reserved_bytes),
        bytes_to_mib(f.allocated_bytes),
        bytes_to_mib(free)
    )?;
    for (cause, b) in f.causes.iter().filter(|c| c.1 > 0) {
        writeln!(out, "  {:>10.2} MB  {}", bytes_to_mib(*b), cause.as_str())?;
    }
    writeln!(
        out,
        "  the largest request that fits without a new segment: {:.2} MB",
        bytes_to_mib(f.largest_possible_bytes)
    )?;
    if let Some((_, b)) = f.largest() {
        writeln!(
            out,
            "  closes the largest cause ({:.2} MB): {}{}",
            bytes_to_mib(b),
            f.fix,
            if not_why {
                " (not why it ran out: see above)"
            } else {
                ""
            }
        )?;
    }
    writeln!(out)
}

/// The `OOM_DETAIL` rows of the msMemScope dumps beside the snapshot (nothing without).
fn write_memscope_oom(
    dumps: &[(String, Vec<OomDetail>)],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for (file, rows) in dumps {
        writeln!(out, "msMemScope at the OOM ({file}):")?;
        for r in rows {
            let frame = r.python_stack.first().map_or("", String::as_str);
            match r.kind {
                OomDetailKind::Trigger => writeln!(
                    out,
                    "  trigger: {} asked for {} MB{} (pid {}, device {})",
                    r.func.as_deref().unwrap_or("?"),
                    r.request_bytes
                        .map_or("?".into(), |b| format!("{:.2}", bytes_to_mib(b))),
                    r.ret.map_or(String::new(), |c| format!(", ret {c}")),
                    r.pid,
                    r.device
                )?,
                kind => writeln!(
                    out,
                    "  {:<6} {:>10} MB {:<4} 0x{:x} {frame}",
                    if kind == OomDetailKind::Top {
                        "top"
                    } else {
                        "recent"
                    },
                    r.size_bytes
                        .map_or("?".into(), |b| format!("{:.2}", bytes_to_mib(b))),
                    r.pool.as_deref().unwrap_or(""),
                    r.ptr.unwrap_or(0)
                )?,
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

fn write_text(s: &SnapshotSummary, out: &mut dyn Write) -> std::io::Result<()> {
    for d in &s.devices {
        writeln!(
            out,
            "{}: {}, reserved {:.2} MB, allocated {:.2} MB, peak allocated {:.2} MB {}",
            d.label,
            count(d.segments as u64, "segment", "segments"),
            bytes_to_mib(d.reserved_bytes),
            bytes_to_mib(d.allocated_bytes),
            bytes_to_mib(d.peak_allocated_bytes),
            d.peak_event
                .map_or("before the first event".to_string(), |e| format!(
                    "at event {e}"
                ))
        )?;
        let blocks: Vec<String> = d.blocks.iter().map(|(k, v)| format!("{k} {v}")).collect();
        let events: Vec<String> = d.events.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(out, "  blocks: {}", blocks.join(", "))?;
        writeln!(out, "  events: {}", events.join(", "))?;
        writeln!(
            out,
            "  free inside segments: {:.2} MB, largest free block {:.2} MB",
            bytes_to_mib(d.free_in_segments_bytes),
            bytes_to_mib(d.largest_free_block_bytes)
        )?;
    }
    match &s.at_event {
        Some(a) => {
            writeln!(
                out,
                "\nafter event {} of {}: {}, reserved {:.2} MB, pending free {:.2} MB, free inside segments {:.2} MB, largest free block {:.2} MB",
                a.event,
                s.backend.device_label(a.device),
                count(a.segments as u64, "segment", "segments"),
                bytes_to_mib(a.reserved_bytes),
                bytes_to_mib(a.pending_free_bytes),
                bytes_to_mib(a.free_in_segments_bytes),
                bytes_to_mib(a.largest_free_block_bytes)
            )?;
            writeln!(
                out,
                "{:.2} MB allocated in {}; by stack:",
                bytes_to_mib(a.allocated_bytes),
                count(a.blocks, "live block", "live blocks")
            )?;
        }
        None => writeln!(out, "\nlive blocks at the end, by stack:")?,
    }
    for t in &s.top_stacks {
        let mut top = t
            .frame
            .as_ref()
            .map_or("(no stack recorded)".to_string(), Frame::text);
        if let Some(via) = &t.via {
            top = format!("{top}  (via {})", via.short_text());
        }
        writeln!(
            out,
            "{:>12.2} MB {:>7} {:<6}  {top}",
            bytes_to_mib(t.bytes),
            t.blocks,
            noun(t.blocks, "block", "blocks")
        )?;
    }
    Ok(())
}
