//! The generator's writers for the sources memsight imports: a PyTorch profiler trace per rank
//! (as `tensorboard_trace_handler` names it) and an msMemScope dump per rank (in the folder
//! layout msMemScope writes), both from the same simulated framework allocations as the Ascend
//! layouts, so their curves and blocks can be checked the same way.

use std::fs;
use std::io::{self, BufWriter, Write};
use std::path::{Path, PathBuf};

use super::sim::op_label;
use super::{GenOptions, RankSim};

/// Where block `k` lives: distinct for every block (addresses are not reused).
fn addr(k: usize) -> u64 {
    0x12c0_0000_0000 + (k as u64) * 0x1000
}

/// One allocator event of the simulation: (time, block index, allocation or free).
fn events(sim: &RankSim) -> Vec<(i64, usize, bool)> {
    let mut ev: Vec<(i64, usize, bool)> = Vec::with_capacity(sim.pta.len() * 2);
    for (k, a) in sim.pta.iter().enumerate() {
        ev.push((a.t_alloc, k, true));
        if let Some(t) = a.t_free {
            ev.push((t, k, false));
        }
    }
    // Time order; on a tie the allocation first (a block is freed after it is made).
    ev.sort_unstable_by_key(|&(t, k, alloc)| (t, !alloc, k));
    ev
}

/// µs with 3 decimals, as PyTorch writes `ts`.
fn us(ns: i64) -> String {
    format!("{}.{:03}", ns.div_euclid(1000), ns.rem_euclid(1000))
}

/// What PyTorch's clock reads when the simulation's clock reads 0: its `ts` count from boot
/// (a real trace's are about 4.7·10⁹ µs), not from the epoch, so a JSON double holds them to the
/// ns, as readers that parse `ts` as a double expect.
const TRACE_CLOCK_SHIFT: i64 = 1_700_000_000_000_000_000 - 4_700_000_000_000_000;

/// A simulation time on PyTorch's clock, as `ts`.
fn trace_ts(ns: i64) -> String {
    us(ns.saturating_sub(TRACE_CLOCK_SHIFT))
}

/// Writes `worker{rank}.{ts}.pt.trace.json` under `out`: the header with `distributedInfo`,
/// `ProfilerStep#N` spans, `cpu_op` spans with their `Call stack` (when the simulation has host
/// ops) and a `[memory]` event per allocation and free on device `npu:{device}` (PrivateUse1).
pub(super) fn write_pytorch_trace(
    out: &Path,
    sim: &RankSim,
    opts: &GenOptions,
) -> io::Result<PathBuf> {
    fs::create_dir_all(out)?;
    let path = out.join(format!(
        "worker{}.{}.pt.trace.json",
        sim.rank,
        1_795_604_718_000_000_000u64 + sim.rank as u64
    ));
    let mut w = BufWriter::with_capacity(1 << 20, fs::File::create(&path)?);
    let (pid, tid) = (4000 + sim.rank, 4000 + sim.rank);
    write!(
        w,
        "{{\n  \"schemaVersion\": 1,\n  \"distributedInfo\": {{\"backend\": \"hccl\", \"rank\": {}, \"world_size\": {}}},\n  \"host_name\": \"{}\",\n  \"traceEvents\": [\n",
        sim.rank, opts.ranks, sim.host
    )?;
    let mut first = true;
    let mut sep = |w: &mut BufWriter<fs::File>| -> io::Result<()> {
        if !std::mem::take(&mut first) {
            w.write_all(b",\n")?;
        }
        Ok(())
    };
    for &(id, start, end) in &sim.steps {
        sep(&mut w)?;
        write!(
            w,
            r#"  {{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#{id}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}}}"#,
            trace_ts(start),
            us(end - start)
        )?;
    }
    for &(start, end, op, stack) in &sim.host_ops.ops {
        sep(&mut w)?;
        let frames = sim.host_ops.stacks[stack].join(";");
        write!(
            w,
            r#"  {{"ph": "X", "cat": "cpu_op", "name": "{}", "pid": {pid}, "tid": {tid}, "ts": {}, "dur": {}, "args": {{"Call stack": {}}}}}"#,
            op_label(op),
            trace_ts(start),
            us(end - start),
            serde_json::Value::from(frames)
        )?;
    }
    for (t, k, alloc) in events(sim) {
        let a = &sim.pta[k];
        let (total, reserved, _) = if alloc {
            a.at_alloc
        } else {
            a.at_free.unwrap_or(a.at_alloc)
        };
        let bytes = if alloc { a.size } else { -a.size };
        sep(&mut w)?;
        write!(
            w,
            r#"  {{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": {pid}, "tid": {tid}, "ts": {}, "args": {{"Total Reserved": {reserved}, "Total Allocated": {total}, "Bytes": {bytes}, "Addr": {}, "Device Id": {}, "Device Type": 20}}}}"#,
            trace_ts(t),
            addr(k),
            sim.device
        )?;
    }
    w.write_all(b"\n  ]\n}\n")?;
    w.flush()?;
    Ok(path)
}

/// What the runtime holds in the process besides the pool's segments (the generator's npu-smi).
const RUNTIME_BYTES: i64 = 256 << 20;

/// msMemScope's finding for block `k`, as its `inefficient` attribute: never freed blocks
/// are `late_deallocation`, every 97th block `early_allocation`, else none.
pub fn inefficient(k: usize, freed: bool) -> Option<&'static str> {
    if !freed {
        Some("late_deallocation")
    } else if k.is_multiple_of(97) {
        Some("early_allocation")
    } else {
        None
    }
}

/// msMemScope's `owner` of a block made by op `name`.
pub fn owner(name: &str) -> String {
    let kind = if name.contains("backward") || name.contains("foreach") {
        "gradient"
    } else {
        "activation"
    };
    format!("PTA@model@{kind}")
}

/// Writes `msmemscope_{pid}_{ts}_ascend/device_{d}/dump/memscope_dump_{ts}.csv` under `out`:
/// `ATEN_START`/`ATEN_END` around each host op (when the simulation has them), a PTA MALLOC or
/// FREE per allocator event with `allocation_id`, `owner`, `inefficient`, the pool's `total` and
/// `used` (and the op's Python stack in `Call Stack(Python)`), `process_used` and `device_used`
/// as msMemScope writes them since mid-2026, and HAL MALLOC/FREE events wherever the pool's reserved bytes grow or shrink. Rows
/// are written out of time order, sixteen at a time reversed, as msMemScope does not sort them.
pub(super) fn write_memscope(out: &Path, sim: &RankSim) -> io::Result<PathBuf> {
    let pid = 3_101_864 + sim.rank;
    let stamp = 20_261_121_000_000u64 + sim.rank as u64;
    let dir = out
        .join(format!("msmemscope_{pid}_{stamp}_ascend"))
        .join(format!("device_{}", sim.device))
        .join("dump");
    fs::create_dir_all(&dir)?;
    let path = dir.join(format!("memscope_dump_{stamp}.csv"));
    // (time, line) of every row.
    let mut rows: Vec<(i64, String)> = Vec::with_capacity(sim.pta.len() * 4);
    let dev = sim.device;
    for &(start, end, op, _) in &sim.host_ops.ops {
        let name = op_label(op);
        rows.push((
            start,
            format!("OP_LAUNCH,ATEN_START,{name},{start},{pid},{pid},{dev},N/A,,,"),
        ));
        rows.push((
            end,
            format!("OP_LAUNCH,ATEN_END,{name},{end},{pid},{pid},{dev},N/A,,,"),
        ));
    }
    let mut reserved = 0i64;
    // What npu-smi would say: the process's memory (its driver segments and the runtime's own)
    // and the whole card's (other processes too), after each event.
    let used_now = |reserved: i64| {
        let process = reserved + RUNTIME_BYTES;
        format!(
            ",process_used:{process},device_used:{}",
            process + sim.other_processes
        )
    };
    let mut segments: Vec<(usize, i64)> = Vec::new(); // HAL segments held: (id, size)
    let mut next_segment = sim.pta.len();
    for (t, k, alloc) in events(sim) {
        let a = &sim.pta[k];
        let (used, total, _) = if alloc {
            a.at_alloc
        } else {
            a.at_free.unwrap_or(a.at_alloc)
        };
        // The driver segments under the pool: one MALLOC per growth, FREEs as it shrinks.
        let segment = |event: &str, id: usize, size: i64, reserved: i64| {
            (
                t,
                format!(
                    "{event},HAL,N/A,{t},{pid},{pid},{dev},{:#018x},\"{{allocation_id:{id},addr:{:#018x},size:{size}{}}}\",,",
                    addr(id),
                    addr(id),
                    used_now(reserved)
                ),
            )
        };
        while total > reserved {
            let size = total - reserved;
            let id = next_segment;
            next_segment += 1;
            segments.push((id, size));
            reserved += size;
            rows.push(segment("MALLOC", id, size, reserved));
        }
        while total < reserved {
            let Some((id, size)) = segments.pop() else {
                break;
            };
            reserved -= size;
            rows.push(segment("FREE", id, size, reserved));
        }
        let line = if alloc {
            // The Python stack of the op that made the block (innermost first, a frame a line).
            let stack = sim
                .host_ops
                .ops
                .binary_search_by_key(&a.t_alloc, |o| o.0)
                .ok()
                .map(|i| sim.host_ops.stacks[sim.host_ops.ops[i].3].join("\n"))
                .map_or(String::new(), |s| format!("\"{}\"", s.replace('"', "\"\"")));
            let mut attr = format!(
                "allocation_id:{k},addr:{:#018x},size:{},owner:{},total:{total},used:{used}",
                addr(k),
                a.size,
                owner(a.name.map_or("", op_label))
            );
            if let Some(f) = inefficient(k, a.t_free.is_some()) {
                attr.push_str(&format!(",inefficient:{f}"));
            }
            attr.push_str(&used_now(reserved));
            format!(
                "MALLOC,PTA,N/A,{t},{pid},{pid},{dev},{:#018x},\"{{{attr}}}\",{stack},",
                addr(k)
            )
        } else {
            format!(
                "FREE,PTA,N/A,{t},{pid},{pid},{dev},{:#018x},\"{{allocation_id:{k},addr:{:#018x},size:{},total:{total},used:{used}{}}}\",,",
                addr(k),
                addr(k),
                a.size,
                used_now(reserved)
            )
        };
        rows.push((t, line));
    }
    rows.sort_by_key(|r| r.0);
    let mut w = BufWriter::with_capacity(1 << 20, fs::File::create(&path)?);
    w.write_all(
        b"ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n",
    )?;
    for (c, chunk) in rows.chunks(16).enumerate() {
        for (i, (_, line)) in chunk.iter().enumerate().rev() {
            writeln!(w, "{},{line}", c * 16 + i + 1)?;
        }
    }
    w.flush()?;
    Ok(path)
}
