//! Writing a simulated rank as CSV files, in each profiler's own dialect.

use std::fs::{self, File};
use std::io::{self, BufWriter, Write};
use std::path::Path;

use super::sim::{Alloc, GE_OPS, MODULES, op_label};
use super::{GenOptions, RankSim};
use crate::model::Format;
use crate::model::units::{kib, mib, thousandths, us3};

/// Lines of one CSV file with the chosen line ending.
struct Lines {
    w: BufWriter<File>,
    eol: &'static str,
}

impl Lines {
    fn create(path: &Path, crlf: bool) -> io::Result<Lines> {
        Ok(Lines {
            w: BufWriter::with_capacity(1 << 20, File::create(path)?),
            eol: if crlf { "\r\n" } else { "\n" },
        })
    }
    fn line(&mut self, s: &str) -> io::Result<()> {
        self.w.write_all(s.as_bytes())?;
        self.w.write_all(self.eol.as_bytes())
    }
    fn finish(mut self) -> io::Result<()> {
        self.w.flush()
    }
}

/// Writes `header` and `rows` to `dir/name` (or to slices of it for msprof).
fn write_table(
    dir: &Path,
    kind: &str,
    header: &str,
    rows: &[String],
    opts: &GenOptions,
    ts_suffix: Option<&str>,
) -> io::Result<()> {
    let parts = if ts_suffix.is_some() && opts.slices > 1 {
        opts.slices
    } else {
        1
    };
    let per = rows.len().div_ceil(parts).max(1);
    for p in 0..parts {
        let name = match (ts_suffix, parts) {
            (Some(ts), 1) => format!("{kind}_{ts}.csv"),
            (Some(ts), _) => format!("{kind}_slice_{p}_{ts}.csv"),
            (None, _) => format!("{kind}.csv"),
        };
        let mut out = Lines::create(&dir.join(name), opts.crlf)?;
        out.line(header)?;
        for r in rows.iter().skip(p * per).take(per) {
            out.line(r)?;
        }
        out.finish()?;
    }
    Ok(())
}

fn opt<T>(v: Option<T>, f: impl Fn(T) -> String, missing: &str) -> String {
    v.map_or_else(|| missing.to_string(), f)
}

fn op_name(a: &Alloc, ge: bool, prefix_ge: bool) -> String {
    match (a.name, ge) {
        (None, _) => String::new(),
        (Some(i), false) => op_label(i).to_string(),
        (Some(i), true) if prefix_ge => format!("cann::{}", GE_OPS[i]),
        (Some(i), true) => GE_OPS[i].to_string(),
    }
}

/// Writes one rank's folder.
pub(crate) fn write_rank(dir: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    match opts.format {
        Format::TorchNpu => write_torch(dir, sim, opts),
        Format::MindSpore => write_mindspore(dir, sim, opts),
        Format::Msprof => write_msprof(dir, sim, opts),
        Format::Imported(name) => Err(io::Error::other(format!(
            "the generator does not write {name} files"
        ))),
    }
}

fn profiler_info(dir: &Path, rank: usize) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let json = format!(
        "{{\n    \"config\": {{\"common_config\": {{\"profile_memory\": true}}, \"experimental_config\": {{\"_export_type\": [\"text\"]}}}},\n    \"rank_id\": \"{rank}\"\n}}\n"
    );
    fs::write(dir.join(format!("profiler_info_{rank}.json")), json)
}

/// trace_view.json as torch_npu writes it (one line, a top-level array): process names, a few
/// operator spans with call stacks, one `ProfilerStep#N` span per step (`ts` a string of µs with
/// 3 decimals, `dur` a float of µs), and the `NPU MEM` counters (KB) at every APP sample.
fn write_trace_view(out: &Path, sim: &RankSim) -> io::Result<()> {
    let pid = 3_016_828 + sim.rank;
    let mem_pid = 3_089_232_480u64 + sim.rank as u64;
    let mut ev: Vec<String> = vec![
        format!(
            r#"{{"ph": "M", "name": "process_name", "pid": {pid}, "tid": 0, "args": {{"name": "Python"}}}}"#
        ),
        format!(
            r#"{{"name": "process_name", "pid": {mem_pid}, "tid": 0, "args": {{"name": "NPU MEM"}}, "ph": "M"}}"#
        ),
    ];
    for (k, &(id, s, e)) in sim.steps.iter().enumerate() {
        ev.push(format!(
            r#"{{"ph": "X", "name": "aten::mm", "pid": {pid}, "tid": {pid}, "ts": "{}", "dur": 12.5, "cat": "cpu_op", "args": {{"Call stack": "train.py({k}): step {{\"x\": 1}};\r\nmain.py(9): <module>"}}}}"#,
            us3(s + 1_000)
        ));
        ev.push(format!(
            r#"{{"ph": "X", "name": "ProfilerStep#{id}", "pid": {pid}, "tid": {pid}, "ts": "{}", "dur": {}, "cat": "cpu_op", "args": {{"Sequence number": -1}}}}"#,
            us3(s),
            us3(e - s)
        ));
    }
    // One cpu_op per framework allocation, its stack's frames joined by `;\r\n` (escaped).
    let stack_text: Vec<String> = sim
        .host_ops
        .stacks
        .iter()
        .map(|frames| frames.join(";\\r\\n"))
        .collect();
    // The autograd engine's thread (backward ops, with phases) is the next tid.
    let tid = |autograd: bool| if autograd { pid + 1 } else { pid };
    let h = &sim.host_ops;
    for (i, &(s, e, op, stack)) in h.ops.iter().enumerate() {
        ev.push(format!(
            r#"{{"ph": "X", "name": "{}", "pid": {pid}, "tid": {}, "ts": "{}", "dur": {}, "cat": "cpu_op", "args": {{"Sequence number": {}, "Fwd thread id": 0, "Call stack": "{}"}}}}"#,
            op_label(op),
            tid(h.op_autograd.get(i).copied().unwrap_or(false)),
            us3(s),
            us3(e - s),
            h.op_seq.get(i).copied().unwrap_or(-1),
            stack_text[stack]
        ));
    }
    for &(name, s, e, autograd) in &h.markers {
        ev.push(format!(
            r#"{{"ph": "X", "name": "{name}", "pid": {pid}, "tid": {}, "ts": "{}", "dur": {}, "cat": "cpu_op", "args": {{"Sequence number": -1}}}}"#,
            tid(autograd),
            us3(s),
            us3(e - s)
        ));
    }
    for &(t, r) in &sim.app {
        let kb = |b: i64| format!("{}.0", b / 1024);
        for (name, v) in [
            ("APP/DDR", 0),
            ("APP/HBM", r),
            ("Device/DDR", 0),
            ("Device/HBM", r + sim.other_processes),
        ] {
            ev.push(format!(
                r#"{{"name": "{name}", "ts": "{}", "pid": {mem_pid}, "tid": 0, "args": {{"KB": {}}}, "ph": "C"}}"#,
                us3(t),
                kb(v)
            ));
        }
    }
    fs::write(out.join("trace_view.json"), format!("[{}]", ev.join(", ")))
}

fn write_torch(dir: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    profiler_info(dir, sim.rank)?;
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&out)?;
    if !sim.steps.is_empty() || !sim.host_ops.ops.is_empty() {
        write_trace_view(&out, sim)?;
    }
    let dev = format!("NPU:{}", sim.device);
    // memory_record: APP rows first, then the allocator rows (so the file is not time-sorted).
    let mut rec = Vec::with_capacity(sim.app.len() + sim.rows.len());
    for &(t, r) in &sim.app {
        rec.push(format!("APP,{}\t,,{},,,{dev}", us3(t), mib(r)));
    }
    for r in &sim.rows {
        rec.push(format!(
            "{},{}\t,{},{},{},{},{dev}",
            r.comp,
            us3(r.t),
            opt(r.allocated, mib, ""),
            mib(r.reserved),
            opt(r.active, mib, ""),
            opt(r.stream, |s| s.to_string(), "")
        ));
    }
    write_table(
        &out,
        "memory_record",
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Stream Ptr,Device Type",
        &rec,
        opts,
        None,
    )?;

    let mut ops = Vec::with_capacity(sim.pta.len() + sim.ge.len() + 1);
    for (list, ge) in [(&sim.pta, false), (&sim.ge, true)] {
        for a in list.iter() {
            let (aa, ar, ac) = a.at_alloc;
            let rel = a.t_free;
            let act_rel = rel.map(|r| r + 37);
            let stream = if ge {
                String::new()
            } else {
                sim.stream_ptrs[a.stream].to_string()
            };
            let active = |v: i64| if ge { String::new() } else { mib(v) };
            ops.push(format!(
                "{},{},{}\t,{},{},{},{},{},{},{},{},{},{},{stream},{dev}",
                op_name(a, ge, true),
                kib(a.size),
                us3(a.t_alloc),
                opt(rel, |t| format!("{}\t", us3(t)), ""),
                opt(act_rel.filter(|_| !ge), |t| format!("{}\t", us3(t)), ""),
                opt(rel, |t| format!("{}\t", us3(t - a.t_alloc)), ""),
                opt(
                    act_rel.filter(|_| !ge),
                    |t| format!("{}\t", us3(t - a.t_alloc)),
                    ""
                ),
                mib(aa),
                mib(ar),
                active(ac),
                opt(a.at_free, |f| mib(f.0), ""),
                opt(a.at_free, |f| mib(f.1), ""),
                opt(a.at_free.filter(|_| !ge), |f| mib(f.2), ""),
            ));
        }
    }
    // A block allocated before the capture: only its release was seen (negative size, no name).
    if let Some(first) = sim.pta.first() {
        let t = first.t_alloc + 11;
        ops.push(format!(",-{},,{}\t,,,,,,,,,,,{dev}", kib(4 << 20), us3(t)));
    }
    write_table(
        &out,
        "operator_memory",
        "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type",
        &ops,
        opts,
        None,
    )?;

    let mods = module_rows(sim, mib, |t| format!("{}\t", us3(t)), None);
    write_table(
        &out,
        "npu_module_mem",
        "Component,Timestamp(us),Total Reserved(MB),Device",
        &mods,
        opts,
        None,
    )?;
    if !sim.statics.is_empty() {
        write_statics(&out, sim, opts)?;
    }
    Ok(())
}

/// npu_module_mem rows grouped by module, then time (as msprof's assembler sorts them).
fn module_rows(
    sim: &RankSim,
    size: impl Fn(i64) -> String,
    ts: impl Fn(i64) -> String,
    device_id: Option<usize>,
) -> Vec<String> {
    let mut rows: Vec<&(usize, i64, i64)> = sim.modules.iter().collect();
    rows.sort_by_key(|m| (m.0, m.1));
    let prefix = device_id.map_or(String::new(), |d| format!("{d},"));
    rows.iter()
        .map(|&&(m, t, r)| {
            format!(
                "{prefix}{},{},{},NPU:{}",
                MODULES[m],
                ts(t),
                size(r),
                sim.device
            )
        })
        .collect()
}

fn write_statics(out: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    let rows: Vec<String> = sim
        .statics
        .iter()
        .map(|s| {
            format!(
                "host,{},0,{},{},{},{}",
                s.op,
                s.graph,
                s.start,
                s.end,
                kib(s.size)
            )
        })
        .collect();
    write_table(
        out,
        "static_op_mem",
        "Device_id,Op Name,Model Name,Graph ID,Node Index Start,Node Index End,Size(KB)",
        &rows,
        opts,
        None,
    )
}

fn write_mindspore(dir: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    profiler_info(dir, sim.rank)?;
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&out)?;
    let dev = format!("NPU:{}", sim.device);
    // MindSpore's "MB" is KiB / 1000 (MemoryRecordBean.KB_TO_MB = 1000).
    let ms_mb = |b: i64| thousandths(b / 1024);
    let mut rec = Vec::new();
    for r in &sim.rows {
        rec.push(format!(
            "{},{},{},{},{},{dev}",
            r.comp,
            us3(r.t),
            opt(r.allocated, ms_mb, ""),
            ms_mb(r.reserved),
            opt(r.active, ms_mb, "")
        ));
    }
    for &(t, r) in &sim.app {
        rec.push(format!("APP,{},,{},,{dev}", us3(t), ms_mb(r)));
    }
    write_table(
        &out,
        "memory_record",
        "Component,Timestamp(us),Total Allocated(MB),Total Reserved(MB),Total Active(MB),Device Type",
        &rec,
        opts,
        None,
    )?;

    let legacy = sim.rank % 2 == 1;
    let mut ops = Vec::new();
    let mut all: Vec<(&Alloc, bool)> = sim
        .pta
        .iter()
        .map(|a| (a, false))
        .chain(sim.ge.iter().map(|a| (a, true)))
        .collect();
    all.sort_by_key(|(a, _)| a.t_alloc); // MindSpore sorts by allocation time
    for (a, ge) in all {
        let (aa, ar, ac) = a.at_alloc;
        let name = op_name(a, ge, false);
        let name = if name.is_empty() {
            "N/A".to_string()
        } else {
            name
        };
        if legacy {
            ops.push(format!(
                "{name},{},{},{},{},{},{},{},Ascend,",
                kib(a.size),
                us3(a.t_alloc),
                opt(a.t_free, |t| us3(t - a.t_alloc), ""),
                mib(aa),
                mib(ar),
                opt(a.at_free, |f| mib(f.0), ""),
                opt(a.at_free, |f| mib(f.1), ""),
            ));
        } else {
            let na = "N/A";
            ops.push(format!(
                "{name},{},{},{},{},{},{},{},{},{},{},{},{},{na},{dev}",
                kib(a.size),
                us3(a.t_alloc),
                opt(a.t_free, us3, na),
                opt(a.t_free, us3, na),
                opt(a.t_free, |t| us3(t - a.t_alloc), na),
                opt(a.t_free, |t| us3(t - a.t_alloc), na),
                mib(aa),
                mib(ar),
                mib(ac),
                opt(a.at_free, |f| mib(f.0), na),
                opt(a.at_free, |f| mib(f.1), na),
                opt(a.at_free, |f| mib(f.2), na),
            ));
        }
    }
    let header = if legacy {
        "Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Release Total Allocated(MB),Release Total Reserved(MB),Device,"
    } else {
        "Name,Size(KB),Allocation Time(us),Release Time(us),Active Release Time(us),Duration(us),Active Duration(us),Allocation Total Allocated(MB),Allocation Total Reserved(MB),Allocation Total Active(MB),Release Total Allocated(MB),Release Total Reserved(MB),Release Total Active(MB),Stream Ptr,Device Type"
    };
    write_table(&out, "operator_memory", header, &ops, opts, None)?;
    let mods = module_rows(sim, kib, us3, Some(sim.device));
    write_table(
        &out,
        "npu_module_mem",
        "Device_id,Component,Timestamp(us),Total Reserved(KB),Device",
        &mods,
        opts,
        None,
    )?;
    if !sim.statics.is_empty() {
        write_statics(&out, sim, opts)?;
    }
    Ok(())
}

fn write_msprof(dir: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    let out = dir.join("mindstudio_profiler_output");
    fs::create_dir_all(&out)?;
    let d = sim.device;
    let ts = "20261121000000";
    let rec: Vec<String> = sim
        .rows
        .iter()
        .map(|r| {
            format!(
                "{d},{},{}\t,{},{},NPU:{d}",
                r.comp,
                us3(r.t),
                opt(r.allocated, kib, ""),
                kib(r.reserved)
            )
        })
        .collect();
    write_table(
        &out,
        "memory_record",
        "Device_id,Component,Timestamp(us),Total Allocated(KB),Total Reserved(KB),Device",
        &rec,
        opts,
        Some(ts),
    )?;
    let ops: Vec<String> = sim
        .ge
        .iter()
        .map(|a| {
            let (aa, ar, _) = a.at_alloc;
            format!(
                "{d},{},{},{}\t,{},{},{},{},{},NPU:{d}",
                op_name(a, true, false),
                kib(a.size),
                us3(a.t_alloc),
                opt(a.t_free, |t| format!("{}\t", us3(t - a.t_alloc)), ""),
                kib(aa),
                kib(ar),
                opt(a.at_free, |f| kib(f.0), ""),
                opt(a.at_free, |f| kib(f.1), ""),
            )
        })
        .collect();
    write_table(
        &out,
        "operator_memory",
        "Device_id,Name,Size(KB),Allocation Time(us),Duration(us),Allocation Total Allocated(KB),Allocation Total Reserved(KB),Release Total Allocated(KB),Release Total Reserved(KB),Device",
        &ops,
        opts,
        Some(ts),
    )?;
    let mods = module_rows(sim, kib, |t| format!("{}\t", us3(t)), Some(d));
    write_table(
        &out,
        "npu_module_mem",
        "Device_id,Component,Timestamp(us),Total Reserved(KB),Device",
        &mods,
        opts,
        Some(ts),
    )?;
    Ok(())
}
