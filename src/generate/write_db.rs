//! Writing a simulated rank as the torch_npu SQLite export (formats.md §3).

use std::collections::HashMap;
use std::fs;
use std::io;
use std::path::Path;

use rusqlite::{Connection, params};

use super::sim::{GE_OPS, MODULES, op_label};
use super::{GenOptions, RankSim};
use crate::model::Format;

fn sql_err(e: rusqlite::Error) -> io::Error {
    io::Error::other(e.to_string())
}

/// Interns strings into STRING_IDS from torch_npu's memory id base.
struct Ids {
    next: i64,
    map: HashMap<String, i64>,
}

impl Ids {
    fn id(&mut self, s: &str) -> i64 {
        if let Some(&i) = self.map.get(s) {
            return i;
        }
        let i = self.next;
        self.next += 1;
        self.map.insert(s.to_string(), i);
        i
    }

    /// (id, string) by id: the same rows in the same order for the same seed (the map's own
    /// order changes from run to run).
    fn in_id_order(&self) -> Vec<(i64, &str)> {
        let mut all: Vec<(i64, &str)> = self.map.iter().map(|(s, &i)| (i, s.as_str())).collect();
        all.sort_unstable();
        all
    }
}

pub(crate) fn write_rank(dir: &Path, sim: &RankSim, opts: &GenOptions) -> io::Result<()> {
    let out = dir.join("ASCEND_PROFILER_OUTPUT");
    fs::create_dir_all(&out)?;
    let name = if opts.format == Format::MindSpore {
        "ascend_mindspore_profiler"
    } else {
        "ascend_pytorch_profiler"
    };
    let path = out.join(format!("{name}_{}.db", sim.rank));
    let _ = fs::remove_file(&path);
    let mut conn = Connection::open(&path).map_err(sql_err)?;
    let tx = conn.transaction().map_err(sql_err)?;
    tx.execute_batch(
        "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
         CREATE TABLE MEMORY_RECORD (component INTEGER, timestamp INTEGER, totalAllocated INTEGER, totalReserved INTEGER, totalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
         CREATE TABLE OP_MEMORY (name INTEGER, size INTEGER, allocationTime INTEGER, releaseTime INTEGER, activeReleaseTime INTEGER, duration INTEGER, activeDuration INTEGER, allocationTotalAllocated INTEGER, allocationTotalReserved INTEGER, allocationTotalActive INTEGER, releaseTotalAllocated INTEGER, releaseTotalReserved INTEGER, releaseTotalActive INTEGER, streamPtr INTEGER, deviceId INTEGER);
         CREATE TABLE NPU_MEM (type INTEGER, ddr NUMERIC, hbm NUMERIC, timestampNs INTEGER, deviceId INTEGER);
         CREATE TABLE NPU_MODULE_MEM (moduleId INTEGER, timestampNs INTEGER, totalReserved NUMERIC, deviceId INTEGER);
         CREATE TABLE ENUM_MODULE (id INTEGER PRIMARY KEY, name TEXT);
         CREATE TABLE HOST_INFO (hostUid TEXT, hostName TEXT);
         CREATE TABLE RANK_DEVICE_MAP (rankId INTEGER, deviceId INTEGER);",
    )
    .map_err(sql_err)?;
    let mut ids = Ids {
        next: 2 << 28,
        map: HashMap::new(),
    };
    let dev = sim.device as i64;
    {
        let mut st = tx
            .prepare("INSERT INTO MEMORY_RECORD VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
            .map_err(sql_err)?;
        for r in &sim.rows {
            let active = r.active.unwrap_or(0); // the DB stores 0 where the CSV is empty
            st.execute(params![
                ids.id(r.comp),
                r.t,
                r.allocated,
                r.reserved,
                active,
                r.stream.map(|s| s as i64),
                dev
            ])
            .map_err(sql_err)?;
        }
        let mut st = tx
            .prepare("INSERT INTO NPU_MEM VALUES (?1, ?2, ?3, ?4, ?5)")
            .map_err(sql_err)?;
        for &(t, total) in &sim.app {
            let ddr = 1 << 20;
            st.execute(params![ids.id("app"), ddr, total - ddr, t, dev])
                .map_err(sql_err)?;
            st.execute(params![
                ids.id("device"),
                0,
                total + sim.other_processes,
                t,
                dev
            ])
            .map_err(sql_err)?;
        }
        let mut st = tx
            .prepare(
                "INSERT INTO OP_MEMORY VALUES (?1,?2,?3,?4,?5,?6,?7,?8,?9,?10,?11,?12,?13,?14,?15)",
            )
            .map_err(sql_err)?;
        for (list, ge) in [(&sim.pta, false), (&sim.ge, true)] {
            for a in list.iter() {
                let name = match a.name {
                    None => String::new(),
                    Some(i) if ge => GE_OPS[i].to_string(),
                    Some(i) => op_label(i).to_string(),
                };
                let rel = a.t_free;
                let act = rel.filter(|_| !ge).map(|r| r + 37);
                st.execute(params![
                    ids.id(&name),
                    a.size,
                    a.t_alloc,
                    rel,
                    act,
                    rel.map(|r| r - a.t_alloc),
                    act.map(|r| r - a.t_alloc),
                    a.at_alloc.0,
                    a.at_alloc.1,
                    if ge { 0 } else { a.at_alloc.2 },
                    a.at_free.map(|f| f.0),
                    a.at_free.map(|f| f.1),
                    a.at_free.map(|f| if ge { 0 } else { f.2 }),
                    (!ge).then(|| sim.stream_ptrs[a.stream] as i64),
                    dev
                ])
                .map_err(sql_err)?;
            }
        }
        let module_id = |m: usize| match MODULES[m] {
            "APP" => 33,
            "GE" => 45,
            _ => m as i64,
        };
        let mut st = tx
            .prepare("INSERT INTO ENUM_MODULE VALUES (?1, ?2)")
            .map_err(sql_err)?;
        for (m, name) in MODULES.iter().enumerate() {
            st.execute(params![module_id(m), name]).map_err(sql_err)?;
        }
        let mut st = tx
            .prepare("INSERT INTO NPU_MODULE_MEM VALUES (?1, ?2, ?3, ?4)")
            .map_err(sql_err)?;
        for &(m, t, r) in &sim.modules {
            st.execute(params![module_id(m), t, r, dev])
                .map_err(sql_err)?;
        }
        if !sim.host_ops.ops.is_empty() {
            write_host_ops(&tx, sim, &mut ids)?;
        }
        let mut st = tx
            .prepare("INSERT INTO STRING_IDS VALUES (?1, ?2)")
            .map_err(sql_err)?;
        for (i, s) in ids.in_id_order() {
            st.execute(params![i, s]).map_err(sql_err)?;
        }
        tx.execute(
            "INSERT INTO HOST_INFO VALUES (?1, ?2)",
            params![
                format!("{}", 3538958389648580163u64 + sim.rank as u64),
                sim.host
            ],
        )
        .map_err(sql_err)?;
        if !sim.steps.is_empty() {
            tx.execute_batch(
                "CREATE TABLE STEP_TIME (id INTEGER, startNs INTEGER, endNs INTEGER);",
            )
            .map_err(sql_err)?;
            let mut st = tx
                .prepare("INSERT INTO STEP_TIME VALUES (?1, ?2, ?3)")
                .map_err(sql_err)?;
            for &(id, s, e) in &sim.steps {
                st.execute(params![id, s, e]).map_err(sql_err)?;
            }
        }
        tx.execute(
            "INSERT INTO RANK_DEVICE_MAP VALUES (?1, ?2)",
            params![sim.rank as i64, dev],
        )
        .map_err(sql_err)?;
    }
    tx.commit().map_err(sql_err)?;
    Ok(())
}

/// `PYTORCH_API` (type `op`, one row per host op, times as TEXT as torch_npu writes them) and
/// `PYTORCH_CALLCHAINS` (one row per frame, depth 0 innermost), with `ENUM_API_TYPE`.
fn write_host_ops(tx: &Connection, sim: &RankSim, ids: &mut Ids) -> io::Result<()> {
    tx.execute_batch(
        "CREATE TABLE ENUM_API_TYPE (id INTEGER PRIMARY KEY, name TEXT);
         INSERT INTO ENUM_API_TYPE VALUES (50001, 'op'), (50002, 'queue'), (50003, 'trace');
         CREATE TABLE PYTORCH_API (startNs TEXT, endNs TEXT, globalTid INTEGER, connectionId INTEGER, name INTEGER, sequenceNumber INTEGER, fwdThreadId INTEGER, inputDtypes INTEGER, inputShapes INTEGER, callchainId INTEGER, type INTEGER, depth INTEGER);
         CREATE TABLE PYTORCH_CALLCHAINS (id INTEGER, stack INTEGER, stackDepth INTEGER);",
    )
    .map_err(sql_err)?;
    let mut st = tx
        .prepare("INSERT INTO PYTORCH_CALLCHAINS VALUES (?1, ?2, ?3)")
        .map_err(sql_err)?;
    for (chain, frames) in sim.host_ops.stacks.iter().enumerate() {
        for (depth, f) in frames.iter().enumerate() {
            st.execute(params![chain as i64, ids.id(f), depth as i64])
                .map_err(sql_err)?;
        }
    }
    let tid = 13_471_134_862_269_421i64 + sim.rank as i64;
    let mut st = tx
        .prepare(
            "INSERT INTO PYTORCH_API VALUES (?1, ?2, ?3, ?4, ?5, -1, 0, NULL, NULL, ?6, 50001, 14)",
        )
        .map_err(sql_err)?;
    for (k, &(s, e, op, stack)) in sim.host_ops.ops.iter().enumerate() {
        st.execute(params![
            s.to_string(),
            e.to_string(),
            tid,
            k as i64,
            ids.id(op_label(op)),
            stack as i64
        ])
        .map_err(sql_err)?;
    }
    // A queue row overlapping everything: not an op, so it must not take the allocations.
    if let (Some(first), Some(last)) = (sim.host_ops.ops.first(), sim.host_ops.ops.last()) {
        tx.execute(
            "INSERT INTO PYTORCH_API VALUES (?1, ?2, ?3, -1, ?4, -1, 0, NULL, NULL, NULL, 50002, 0)",
            params![first.0.to_string(), last.1.to_string(), tid + 1, ids.id("Enqueue")],
        )
        .map_err(sql_err)?;
    }
    Ok(())
}

/// The msprof unified DB (`msprof_*.db` in the `PROF_*` folder, formats.md §3.4): no
/// MEMORY_RECORD, only allocator events in `NPU_OP_MEM` (`allocate`/`release` through
/// `ENUM_MEMORY`, the pool's totals after each event, the operator through `STRING_IDS`). Block
/// addresses are reused once freed, as a real allocator does, so a reader must pair events on
/// their address in time order.
pub(crate) fn write_msprof_rank(dir: &Path, sim: &RankSim) -> io::Result<()> {
    fs::create_dir_all(dir)?;
    let path = dir.join(format!("msprof_{}.db", sim.rank));
    let _ = fs::remove_file(&path);
    let mut conn = Connection::open(&path).map_err(sql_err)?;
    let tx = conn.transaction().map_err(sql_err)?;
    tx.execute_batch(
        "CREATE TABLE STRING_IDS (id INTEGER PRIMARY KEY, value TEXT);
         CREATE TABLE ENUM_MEMORY (id INTEGER PRIMARY KEY, name TEXT);
         INSERT INTO ENUM_MEMORY VALUES (0, 'app'), (1, 'device'), (5, 'allocate'), (6, 'release');
         CREATE TABLE NPU_OP_MEM (operatorName INTEGER, addr INTEGER, type INTEGER, size INTEGER, timestampNs INTEGER, globalTid INTEGER, totalAllocate NUMERIC, totalReserve NUMERIC, component INTEGER, deviceId INTEGER);",
    )
    .map_err(sql_err)?;
    let mut ids = Ids {
        next: 400,
        map: HashMap::new(),
    };
    // (time, is release, block index): releases first at equal times, as the allocator runs.
    let mut events: Vec<(i64, bool, usize)> = Vec::new();
    for (k, a) in sim.ge.iter().enumerate() {
        events.push((a.t_alloc, false, k));
        if let Some(f) = a.t_free {
            events.push((f, true, k));
        }
    }
    events.sort_by_key(|&(t, release, k)| (t, !release, k));
    let mut free: Vec<i64> = Vec::new();
    let mut next_addr = 20_068_255_531_008i64;
    let mut addr_of: HashMap<usize, i64> = HashMap::new();
    let component = ids.id("GE");
    {
        let mut st = tx
            .prepare("INSERT INTO NPU_OP_MEM VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
            .map_err(sql_err)?;
        for (t, release, k) in events {
            let a = &sim.ge[k];
            let name = a.name.map_or(String::new(), |i| GE_OPS[i].to_string());
            let (addr, kind, totals) = if release {
                let addr = addr_of.remove(&k).unwrap_or(0);
                free.push(addr);
                (addr, 6, a.at_free.unwrap_or(a.at_alloc))
            } else {
                let addr = free.pop().unwrap_or_else(|| {
                    next_addr += 1 << 20;
                    next_addr
                });
                addr_of.insert(k, addr);
                (addr, 5, a.at_alloc)
            };
            st.execute(params![
                ids.id(&name),
                addr,
                kind,
                a.size,
                t,
                830_719_689_687_710i64,
                totals.0,
                totals.1,
                component,
                sim.device as i64
            ])
            .map_err(sql_err)?;
        }
        let mut st = tx
            .prepare("INSERT INTO STRING_IDS VALUES (?1, ?2)")
            .map_err(sql_err)?;
        for (i, s) in ids.in_id_order() {
            st.execute(params![i, s]).map_err(sql_err)?;
        }
    }
    tx.commit().map_err(sql_err)?;
    Ok(())
}
