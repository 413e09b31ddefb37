//! `memsight snapshot`'s answer as text, in English or Chinese: each line written once with its
//! Chinese beside its English, the OOM and fragmentation sentences rendered by their own types
//! ([`crate::snapshot::oom`], [`crate::snapshot::fragmentation`]) as the app shows them.

use std::io::Write;
use std::path::Path;

use super::snapshot::{SnapshotAnswer, SnapshotArgs};
use crate::ingest::msmemscope::{OomDetail, OomDetailKind};
use crate::model::Lang;
use crate::model::bytes_to_mib;
use crate::model::plural::{count, noun};
use crate::snapshot::compiled::by_compile_context;
use crate::snapshot::fragmentation::Fragmentation;
use crate::snapshot::join::ProfileJoin;
use crate::snapshot::oom::{ModuleUsage, OomReport, WHATIF_COMMAND, cli_mb, levers};
use crate::snapshot::phases::{AllocatedIn, live_by_phase, phases};
use crate::snapshot::pinned::pinned_summary;
use crate::snapshot::pools::private_pools;
use crate::snapshot::{AllocatorSnapshot, Frame, SnapshotSummary};

/// `n` of a thing: `3 blocks` in English (`one`, `many`), `3 个块` in Chinese (`zh`).
fn n_of(lang: Lang, n: u64, one: &'static str, many: &'static str, zh: &str) -> String {
    match lang {
        Lang::En => count(n, one, many),
        Lang::Zh => format!("{n} 个{zh}"),
    }
}

/// "at the end" or "after event k", in `lang`.
fn when(lang: Lang, at: Option<usize>) -> String {
    match (at, lang) {
        (None, Lang::En) => "at the end".into(),
        (None, Lang::Zh) => "结束时".into(),
        (Some(k), Lang::En) => format!("after event {k}"),
        (Some(k), Lang::Zh) => format!("事件 {k} 之后"),
    }
}

/// The answer as text in `lang`.
pub fn write_answer(
    a: &SnapshotAnswer,
    args: &SnapshotArgs,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let snap = &a.snap;
    let zh = lang == Lang::Zh;
    if snap.segments.is_empty() && snap.traces.iter().all(Vec::is_empty) {
        // Only pinned host memory (`record_cuda=False`): no device to describe.
        match zh {
            false => writeln!(
                out,
                "no device memory in this snapshot (recorded with record_cuda=False?)"
            )?,
            true => writeln!(out, "此快照没有设备内存（录制时 record_cuda=False？）")?,
        }
        return write_pinned(snap, args.top, lang, out);
    }
    let conf = snap.backend.alloc_conf();
    write_oom(&a.ooms, &a.modules, conf, lang, out)?;
    // The diagnosis of an OOM goes under it; else after the summary.
    let at_oom = !a.ooms_at_diagnosis().is_empty();
    if at_oom {
        write_fragmentation(&a.fragmentation, a.fix_is_not_why(), lang, out)?;
    }
    write_memscope_oom(&a.memscope, lang, out)?;
    write_summary(&a.summary, lang, out)?;
    if !at_oom {
        writeln!(out)?;
        write_fragmentation(&a.fragmentation, false, lang, out)?;
    }
    let device = a.device;
    let at_event = a.at.filter(|x| x.0 == device).map(|x| x.1);
    write_phases(snap, device, at_event, lang, out)?;
    write_compiled(snap, device, at_event, lang, out)?;
    write_pools(snap, device, lang, out)?;
    write_pinned(snap, args.top, lang, out)?;
    if let Some((p, j)) = &a.joined {
        write_join(p, j, args.top, lang, out)?;
    }
    if snap.fx_frames_mapped > 0 {
        let n = snap.fx_frames_mapped;
        match zh {
            false => writeln!(
                out,
                "\n{} of FX-generated code named by the model's line (fx_original_trace)",
                count(n, "frame", "frames")
            )?,
            true => writeln!(
                out,
                "\nFX 生成代码的 {n} 个栈帧已按模型源代码行命名（fx_original_trace）"
            )?,
        }
    }
    Ok(())
}

/// The OOM lines (nothing without an `oom` event or memUsageInfo).
fn write_oom(
    ooms: &[OomReport],
    modules: &[ModuleUsage],
    conf: &str,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    for o in ooms {
        writeln!(out, "{}", o.headline(lang, &cli_mb))?;
        // The advice follows the verdict (OomAdvice): a fragmentation fix only for
        // fragmentation.
        let fix = o.advice.line(lang, conf, &cli_mb);
        if !fix.is_empty() {
            writeln!(out, "  {fix}")?;
            if o.advice.holds_less() {
                let how = levers(lang, WHATIF_COMMAND);
                match lang {
                    Lang::En => writeln!(out, "  how: {how}")?,
                    Lang::Zh => writeln!(out, "  办法：{how}")?,
                }
            }
        }
    }
    if !modules.is_empty() {
        match lang {
            Lang::En => writeln!(out, "memory by CANN module at the OOM (memUsageInfo), MB:")?,
            Lang::Zh => writeln!(out, "内存不足时各 CANN 模块的内存（memUsageInfo），MB：")?,
        }
        for m in modules {
            let (d, name, now, peak) = (m.device, &m.module, m.current_mb, m.peak_mb);
            match lang {
                Lang::En => writeln!(
                    out,
                    "  device {d} {name:<24} current {now:>10.2} peak {peak:>10.2}"
                )?,
                Lang::Zh => writeln!(
                    out,
                    "  设备 {d} {name:<24} 当前 {now:>10.2} 峰值 {peak:>10.2}"
                )?,
            }
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
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mb = |b: i64| format!("{:.2}", bytes_to_mib(b));
    let (d, k) = (f.device, f.at_event);
    let (reserved, allocated) = (mb(f.reserved_bytes), mb(f.allocated_bytes));
    let free = mb(f.reserved_bytes.saturating_sub(f.allocated_bytes));
    match lang {
        Lang::En => writeln!(
            out,
            "fragmentation on device {d} at event {k}: reserved {reserved} MB, allocated {allocated} MB, {free} MB not handed out"
        )?,
        Lang::Zh => writeln!(
            out,
            "设备 {d} 在事件 {k} 的碎片：保留 {reserved} MB，已分配 {allocated} MB，{free} MB 未分出"
        )?,
    }
    for (cause, b) in f.causes.iter().filter(|c| c.1 > 0) {
        let name = match lang {
            Lang::En => cause.as_str(),
            Lang::Zh => cause.name(lang),
        };
        writeln!(out, "  {:>10} MB  {name}", mb(*b))?;
    }
    let fits = mb(f.largest_possible_bytes);
    match lang {
        Lang::En => writeln!(
            out,
            "  the largest request that fits without a new segment: {fits} MB"
        )?,
        Lang::Zh => writeln!(out, "  无需新内存段即可满足的最大申请：{fits} MB")?,
    }
    if let Some((_, b)) = f.largest() {
        let fix = f.fix(lang);
        let b = mb(b);
        match (lang, not_why) {
            (Lang::En, false) => writeln!(out, "  closes the largest cause ({b} MB): {fix}")?,
            (Lang::En, true) => writeln!(
                out,
                "  closes the largest cause ({b} MB): {fix} (not why it ran out: see above)"
            )?,
            (Lang::Zh, false) => writeln!(out, "  可消除最大原因（{b} MB）：{fix}")?,
            (Lang::Zh, true) => writeln!(
                out,
                "  可消除最大原因（{b} MB）：{fix}（并非内存不足的原因：见上方）"
            )?,
        }
    }
    writeln!(out)
}

/// The `OOM_DETAIL` rows of the msMemScope dumps beside the snapshot (nothing without).
fn write_memscope_oom(
    dumps: &[(String, Vec<OomDetail>)],
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let mb = |b: Option<i64>| b.map_or("?".into(), |b| format!("{:.2}", bytes_to_mib(b)));
    for (file, rows) in dumps {
        match zh {
            false => writeln!(out, "msMemScope at the OOM ({file}):")?,
            true => writeln!(out, "内存不足时的 msMemScope 记录（{file}）：")?,
        }
        for r in rows {
            let frame = r.python_stack.first().map_or("", String::as_str);
            match r.kind {
                OomDetailKind::Trigger => {
                    let func = r.func.as_deref().unwrap_or("?");
                    let asked = mb(r.request_bytes);
                    let (pid, device) = (r.pid, &r.device);
                    match zh {
                        false => writeln!(
                            out,
                            "  trigger: {func} asked for {asked} MB{} (pid {pid}, device {device})",
                            r.ret.map_or(String::new(), |c| format!(", ret {c}")),
                        )?,
                        true => writeln!(
                            out,
                            "  触发：{func} 申请 {asked} MB{}（pid {pid}，设备 {device}）",
                            r.ret.map_or(String::new(), |c| format!("，返回 {c}")),
                        )?,
                    }
                }
                kind => {
                    let label = match (kind == OomDetailKind::Top, zh) {
                        (true, false) => "top",
                        (false, false) => "recent",
                        (true, true) => "最大",
                        (false, true) => "最近",
                    };
                    writeln!(
                        out,
                        "  {label:<6} {:>10} MB {:<4} 0x{:x} {frame}",
                        mb(r.size_bytes),
                        r.pool.as_deref().unwrap_or(""),
                        r.ptr.unwrap_or(0)
                    )?;
                }
            }
        }
        writeln!(out)?;
    }
    Ok(())
}

/// Each device's figures, and the live blocks at the event asked (else the end) by stack.
fn write_summary(s: &SnapshotSummary, lang: Lang, out: &mut dyn Write) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let mb = |b: i64| format!("{:.2}", bytes_to_mib(b));
    let list = |m: &std::collections::BTreeMap<String, u64>| {
        m.iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect::<Vec<_>>()
            .join(if zh { "，" } else { ", " })
    };
    for d in &s.devices {
        let segments = n_of(lang, d.segments as u64, "segment", "segments", "内存段");
        let (reserved, allocated) = (mb(d.reserved_bytes), mb(d.allocated_bytes));
        let peak = mb(d.peak_allocated_bytes);
        let at = match (d.peak_event, zh) {
            (None, false) => "before the first event".to_string(),
            (None, true) => "在第一个事件之前".to_string(),
            (Some(e), false) => format!("at event {e}"),
            (Some(e), true) => format!("在事件 {e}"),
        };
        let (free, largest) = (mb(d.free_in_segments_bytes), mb(d.largest_free_block_bytes));
        let (blocks, events) = (list(&d.blocks), list(&d.events));
        match zh {
            false => {
                writeln!(
                    out,
                    "{}: {segments}, reserved {reserved} MB, allocated {allocated} MB, peak allocated {peak} MB {at}",
                    d.label
                )?;
                writeln!(out, "  blocks: {blocks}")?;
                writeln!(out, "  events: {events}")?;
                writeln!(
                    out,
                    "  free inside segments: {free} MB, largest free block {largest} MB"
                )?;
            }
            true => {
                writeln!(
                    out,
                    "{}：{segments}，保留 {reserved} MB，已分配 {allocated} MB，已分配峰值 {peak} MB（{at}）",
                    d.label
                )?;
                writeln!(out, "  块：{blocks}")?;
                writeln!(out, "  事件：{events}")?;
                writeln!(out, "  内存段内空闲：{free} MB，最大空闲块 {largest} MB")?;
            }
        }
    }
    match &s.at_event {
        Some(a) => {
            let (k, device) = (a.event, s.backend.device_label(a.device));
            let segments = n_of(lang, a.segments as u64, "segment", "segments", "内存段");
            let (reserved, pending) = (mb(a.reserved_bytes), mb(a.pending_free_bytes));
            let (free, largest) = (mb(a.free_in_segments_bytes), mb(a.largest_free_block_bytes));
            let allocated = mb(a.allocated_bytes);
            match zh {
                false => {
                    writeln!(
                        out,
                        "\nafter event {k} of {device}: {segments}, reserved {reserved} MB, pending free {pending} MB, free inside segments {free} MB, largest free block {largest} MB"
                    )?;
                    writeln!(
                        out,
                        "{allocated} MB allocated in {}; by stack:",
                        count(a.blocks, "live block", "live blocks")
                    )?;
                }
                true => {
                    writeln!(
                        out,
                        "\n{device} 事件 {k} 之后：{segments}，保留 {reserved} MB，待释放 {pending} MB，内存段内空闲 {free} MB，最大空闲块 {largest} MB"
                    )?;
                    writeln!(
                        out,
                        "{} 个存活块共分配 {allocated} MB；按调用栈：",
                        a.blocks
                    )?;
                }
            }
        }
        None => match zh {
            false => writeln!(out, "\nlive blocks at the end, by stack:")?,
            true => writeln!(out, "\n结束时的存活块，按调用栈：")?,
        },
    }
    for t in &s.top_stacks {
        let mut top = t.frame.as_ref().map_or(
            match zh {
                false => "(no stack recorded)".to_string(),
                true => "（未记录调用栈）".to_string(),
            },
            Frame::text,
        );
        if let Some(via) = &t.via {
            top = match zh {
                false => format!("{top}  (via {})", via.short_text()),
                true => format!("{top}  （经由 {}）", via.short_text()),
            };
        }
        let blocks = match zh {
            false => noun(t.blocks, "block", "blocks"),
            true => "个块",
        };
        writeln!(
            out,
            "{:>12.2} MB {:>7} {:<6}  {top}",
            bytes_to_mib(t.bytes),
            t.blocks,
            blocks
        )?;
    }
    Ok(())
}

/// The phases of `device` (the user's annotations) and the live blocks at `at` (None: the end)
/// by the phase that allocated them; nothing when the snapshot has no annotation for it.
fn write_phases(
    snap: &AllocatorSnapshot,
    device: i64,
    at: Option<usize>,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let ps = phases(snap, device);
    if ps.is_empty() {
        return Ok(());
    }
    match zh {
        false => writeln!(
            out,
            "\nphases (the user's annotations) on device {device}, MB:"
        )?,
        true => writeln!(out, "\n设备 {device} 的阶段（用户的标注），MB：")?,
    }
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
    let header = match zh {
        false => ["Phase", "Events", "Before", "Peak", "After"],
        true => ["阶段", "事件", "之前", "峰值", "之后"],
    };
    write!(out, "{}", super::text_table(&header, &rows))?;
    let when = when(lang, at);
    match zh {
        false => writeln!(
            out,
            "\nlive blocks {when}, by the phase that allocated them:"
        )?,
        true => writeln!(out, "\n{when}的存活块，按分配它们的阶段：")?,
    }
    for h in live_by_phase(snap, device, at) {
        let name = match (h.allocated_in, zh) {
            (AllocatedIn::Phase(n), _) => n.to_string(),
            (AllocatedIn::NoPhase, false) => "(outside every phase)".to_string(),
            (AllocatedIn::NoPhase, true) => "（不在任何阶段内）".to_string(),
            (AllocatedIn::BeforeTrace, false) => "(before the trace)".to_string(),
            (AllocatedIn::BeforeTrace, true) => "（记录开始之前）".to_string(),
        };
        writeln!(
            out,
            "  {:>10.2} MB  {}  {}",
            bytes_to_mib(h.bytes),
            n_of(lang, h.blocks, "block", "blocks", "块"),
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
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let regions = by_compile_context(snap, device, at);
    if regions.is_empty() {
        return Ok(());
    }
    let when = when(lang, at);
    match lang {
        Lang::En => writeln!(
            out,
            "\nallocated in torch.compile regions on device {device} (live {when}):"
        )?,
        Lang::Zh => writeln!(
            out,
            "\n设备 {device} 上 torch.compile 区域的分配（{when}仍存活的部分）："
        )?,
    }
    for r in regions {
        let (alloc, live) = (bytes_to_mib(r.alloc_bytes), bytes_to_mib(r.live_bytes));
        let allocs = n_of(lang, r.allocs, "allocation", "allocations", "分配");
        let blocks = n_of(lang, r.live_blocks, "block", "blocks", "块");
        match lang {
            Lang::En => writeln!(
                out,
                "  {alloc:>10.2} MB in {allocs}, {live:.2} MB live in {blocks}  {}",
                r.context
            )?,
            Lang::Zh => writeln!(
                out,
                "  {alloc:>10.2} MB，{allocs}；存活 {live:.2} MB，{blocks}  {}",
                r.context
            )?,
        }
    }
    Ok(())
}

/// The live blocks by the profile's operator and step.
fn write_join(
    profile: &Path,
    j: &ProfileJoin,
    top: usize,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let p = profile.display();
    let allocs = n_of(
        lang,
        j.alloc_events as u64,
        "allocation",
        "allocations",
        "分配",
    );
    let (matched, within) = (j.matched, j.in_profile);
    match zh {
        false => writeln!(
            out,
            "\njoined by time with the profile {p}: {matched} of {allocs} matched ({within} within its span)"
        )?,
        true => writeln!(
            out,
            "\n按时间与性能数据 {p} 关联：{allocs}中匹配 {matched} 个（{within} 个在其时间范围内）"
        )?,
    }
    let when = when(lang, j.at_event);
    let d = &j.device;
    match zh {
        false => writeln!(
            out,
            "live blocks {when} on device {d}, by the profile's operator and step:"
        )?,
        true => writeln!(out, "设备 {d} {when}的存活块，按性能数据的算子和训练步：")?,
    }
    for g in j.live.iter().take(top) {
        let op = match (&g.op, zh) {
            (None, false) => "(not in the profile)",
            (None, true) => "（不在性能数据中）",
            (Some(o), false) if o.is_empty() => "(no operator)",
            (Some(o), true) if o.is_empty() => "（无算子）",
            (Some(o), _) => o,
        };
        let step = match (g.step, zh) {
            (None, _) => String::new(),
            (Some(s), false) => format!("  step {s}"),
            (Some(s), true) => format!("  第 {s} 步"),
        };
        let blocks = n_of(lang, g.blocks, "block", "blocks", "块");
        let mb = bytes_to_mib(g.bytes);
        match zh {
            false => writeln!(out, "  {mb:>10.2} MB in {blocks}  {op}{step}")?,
            true => writeln!(out, "  {mb:>10.2} MB，{blocks}  {op}{step}")?,
        }
    }
    Ok(())
}

/// The private pools of `device` (CUDA graphs, `MemPool`); nothing without one.
fn write_pools(
    snap: &AllocatorSnapshot,
    device: i64,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let pools = private_pools(snap, device);
    if pools.is_empty() {
        return Ok(());
    }
    match zh {
        false => writeln!(
            out,
            "\nprivate pools (CUDA graphs, MemPool) on device {device}, MB:"
        )?,
        true => writeln!(
            out,
            "\n设备 {device} 的私有内存池（CUDA graph、MemPool），MB："
        )?,
    }
    for p in pools {
        let at = match (p.peak_event, zh) {
            (None, false) => "before the trace".to_string(),
            (None, true) => "记录开始之前".to_string(),
            (Some(k), false) => format!("at event {k}"),
            (Some(k), true) => format!("在事件 {k}"),
        };
        let (a, b) = p.pool;
        let segments = n_of(lang, p.segments as u64, "segment", "segments", "内存段");
        let mb = |x: i64| format!("{:.2}", bytes_to_mib(x));
        let (res, peak_res) = (mb(p.reserved_bytes), mb(p.peak_reserved_bytes));
        let (alloc, peak_alloc) = (mb(p.allocated_bytes), mb(p.peak_allocated_bytes));
        match zh {
            false => writeln!(
                out,
                "  pool ({a}, {b}): {segments}, {res} reserved (peak {peak_res}), {alloc} allocated (peak {peak_alloc} {at})"
            )?,
            true => writeln!(
                out,
                "  内存池 ({a}, {b})：{segments}，保留 {res}（峰值 {peak_res}），已分配 {alloc}（峰值 {peak_alloc}，{at}）"
            )?,
        }
    }
    Ok(())
}

/// The pinned host memory (`host_segments` / `host_traces`); nothing when not recorded.
fn write_pinned(
    snap: &AllocatorSnapshot,
    top: usize,
    lang: Lang,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let zh = lang == Lang::Zh;
    let Some(p) = pinned_summary(snap, top) else {
        return Ok(());
    };
    let mb = |x: i64| format!("{:.2}", bytes_to_mib(x));
    let (res, alloc) = (mb(p.reserved_bytes), mb(p.allocated_bytes));
    let (pending, peak) = (mb(p.pending_free_bytes), mb(p.peak_allocated_bytes));
    let segments = n_of(lang, p.segments as u64, "segment", "segments", "内存段");
    let events = n_of(lang, p.events as u64, "event", "events", "事件");
    match zh {
        false => writeln!(
            out,
            "\npinned host memory (record_pinned_host_memory): {res} MB reserved in {segments}, \
             {alloc} MB allocated, {pending} MB waiting for streams; peak {peak} MB over {events}"
        )?,
        true => writeln!(
            out,
            "\n锁页主机内存（record_pinned_host_memory）：保留 {res} MB，{segments}；\
             已分配 {alloc} MB，{pending} MB 等待 stream；{events}中峰值 {peak} MB"
        )?,
    }
    for t in &p.top_stacks {
        let frame = t.frame.as_ref().map_or_else(
            || match zh {
                false => "(no stack)".into(),
                true => "（无调用栈）".into(),
            },
            |f| f.text(),
        );
        let frame = match (&t.via, zh) {
            (Some(via), false) => format!("{frame}  (via {})", via.short_text()),
            (Some(via), true) => format!("{frame}  （经由 {}）", via.short_text()),
            (None, _) => frame,
        };
        let blocks = n_of(lang, t.blocks, "block", "blocks", "块");
        let mb = bytes_to_mib(t.bytes);
        match zh {
            false => writeln!(out, "  {mb:>10.2} MB in {blocks}  {frame}")?,
            true => writeln!(out, "  {mb:>10.2} MB，{blocks}  {frame}")?,
        }
    }
    Ok(())
}
