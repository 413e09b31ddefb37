//! The host's framework ops and their Python call stacks from the SQLite export:
//! `PYTORCH_API` rows of type `op` (start, end, thread, name, `callchainId`, `sequenceNumber`)
//! and `PYTORCH_CALLCHAINS` (one row per frame: `id`, `stack` → `STRING_IDS`, `stackDepth`,
//! 0 innermost).

use std::path::Path;

use rusqlite::Connection;
use rustc_hash::FxHashMap;

use super::db::{DbError, TableColumns, has_table, int, open_read_only, text};
use crate::model::{DbSnapshot, HostOps, NO_STACK, NULL};

/// The ops of `path` (or of its snapshot); `Ok(None)` when the DB has no `PYTORCH_API`.
/// Rows without a start or an end, or ending before they start, are counted in `skipped`.
pub fn load_host_ops(
    path: &Path,
    snapshot: Option<&DbSnapshot>,
) -> Result<Option<(HostOps, u64)>, DbError> {
    let conn = open_read_only(path, snapshot)?;
    if !has_table(&conn, "PYTORCH_API") {
        return Ok(None);
    }
    let ids = has_table(&conn, "STRING_IDS");
    let mut ops = HostOps::default();
    let chains = if has_table(&conn, "PYTORCH_CALLCHAINS") {
        read_callchains(&conn, ids, &mut ops)?
    } else {
        FxHashMap::default()
    };
    let mut c = TableColumns::of(&conn, "PYTORCH_API");
    let start = c.require("startNs")?;
    let end = c.require("endNs")?;
    let name = c.require("name")?;
    let tid = c.optional("globalTid");
    let chain = c.optional("callchainId");
    let seq = c.optional("sequenceNumber");
    let connection = c.optional("connectionId");
    // Only framework ops: `queue` and `trace` rows (enqueue/dequeue, python functions) are not
    // where an allocation is made. Without the enum every row counts.
    let only_ops = if c.has("type") && has_table(&conn, "ENUM_API_TYPE") {
        " WHERE type = (SELECT id FROM ENUM_API_TYPE WHERE name = 'op')"
    } else {
        ""
    };
    let name_sql = if ids {
        format!("(SELECT value FROM STRING_IDS WHERE id = {name})")
    } else {
        name.to_string()
    };
    let sql = format!(
        "SELECT {start}, {end}, {tid}, {name_sql}, {chain}, {seq}, {connection} FROM PYTORCH_API{only_ops}"
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut skipped = 0u64;
    // (op, its CONNECTION_IDS id): ops that share a connection are a forward op and its
    // backward node (`fwdbwd`).
    let mut connected: Vec<(u32, i64)> = Vec::new();
    while let Some(r) = rows.next()? {
        let g = |i: usize| r.get_ref(i);
        let s = int(g(0)?).unwrap_or(NULL);
        let e = int(g(1)?).unwrap_or(NULL);
        if s == NULL || e == NULL || e < s {
            skipped += 1;
            continue;
        }
        let thread = int(g(2)?).unwrap_or(0);
        let name = ops.names.intern(&text(g(3)?));
        let stack = match int(g(4)?) {
            Ok(id) if id != NULL => chains.get(&id).copied().unwrap_or(NO_STACK),
            _ => NO_STACK,
        };
        let seq = match int(g(5)?) {
            Ok(v) if v != NULL => v,
            _ => -1,
        };
        if let Ok(c) = int(g(6)?)
            && c != NULL
        {
            connected.push((ops.len() as u32, c));
        }
        ops.push(s, e, thread as u64, name, stack, seq);
    }
    if !connected.is_empty() && has_table(&conn, "CONNECTION_IDS") {
        link_connections(&conn, &connected, &mut ops)?;
    }
    if ids {
        let spans = read_module_spans(&conn, (start, end, tid, name), &mut ops)?;
        let found = super::module_spans::assign_modules(&mut ops, spans);
        ops.stacks_cut = ops.stacks_cut.max(found.cut);
    }
    Ok(Some((ops, skipped)))
}

/// The modules' forward spans: `PYTORCH_API` rows (of any type: torch_npu writes them as
/// `trace`) whose name is `nn.Module: X`, their frames interned in `ops.frames`. Needs
/// `STRING_IDS` (every torch_npu DB has it); rows without times are left out.
fn read_module_spans(
    conn: &Connection,
    (start, end, tid, name): (&str, &str, &str, &str),
    ops: &mut HostOps,
) -> Result<Vec<super::module_spans::FrameSpan>, DbError> {
    let sql = format!(
        "SELECT a.{start}, a.{end}, a.{tid}, s.value FROM PYTORCH_API a \
         JOIN STRING_IDS s ON a.{name} = s.id WHERE s.value LIKE 'nn.Module:%'"
    );
    let mut st = conn.prepare(&sql)?;
    let mut rows = st.query([])?;
    let mut spans = Vec::new();
    while let Some(r) = rows.next()? {
        let g = |i: usize| r.get_ref(i);
        let (Ok(s), Ok(e)) = (int(g(0)?), int(g(1)?)) else {
            continue;
        };
        let frame = text(g(3)?);
        if s == NULL || e == NULL || e < s || !super::module_spans::is_module_frame(&frame) {
            continue;
        }
        spans.push(super::module_spans::FrameSpan {
            thread: int(g(2)?).unwrap_or(0) as u64,
            start: s,
            end: e,
            frame: ops.frames.intern(&frame),
        });
    }
    Ok(spans)
}

/// Links ops that share a connection value in `CONNECTION_IDS` (`id` → `connectionId`, several
/// rows an id): the earliest of them is the forward op, the others its backward nodes.
fn link_connections(
    conn: &Connection,
    connected: &[(u32, i64)],
    ops: &mut HostOps,
) -> Result<(), DbError> {
    let c = TableColumns::of(conn, "CONNECTION_IDS");
    let (Some(id), Some(value)) = (
        c.has("id").then_some("id"),
        c.has("connectionId").then_some("connectionId"),
    ) else {
        return Ok(());
    };
    let mut values: FxHashMap<i64, Vec<i64>> = FxHashMap::default();
    let mut st = conn.prepare(&format!("SELECT {id}, {value} FROM CONNECTION_IDS"))?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let (Ok(i), Ok(v)) = (int(r.get_ref(0)?), int(r.get_ref(1)?))
            && i != NULL
            && v != NULL
        {
            values.entry(i).or_default().push(v);
        }
    }
    let mut by_value: FxHashMap<i64, Vec<u32>> = FxHashMap::default();
    for &(op, cid) in connected {
        for &v in values.get(&cid).map_or(&[][..], Vec::as_slice) {
            by_value.entry(v).or_default().push(op);
        }
    }
    let mut groups: Vec<Vec<u32>> = by_value.into_values().filter(|g| g.len() > 1).collect();
    groups.sort_unstable(); // a stable order of links for the same file
    for mut g in groups {
        g.sort_by_key(|&i| (ops.start_ns[i as usize], i));
        let fwd = g[0];
        for &bwd in &g[1..] {
            if ops.start_ns[bwd as usize] > ops.start_ns[fwd as usize] {
                ops.links.push((bwd, fwd));
            }
        }
    }
    Ok(())
}

/// `callchainId` → stack id in `ops.stacks`, frames innermost first.
fn read_callchains(
    conn: &Connection,
    ids: bool,
    ops: &mut HostOps,
) -> Result<FxHashMap<i64, u32>, DbError> {
    let c = TableColumns::of(conn, "PYTORCH_CALLCHAINS");
    let id = c.require("id")?;
    let stack = c.require("stack")?;
    let depth = c.require("stackDepth")?;
    let frame_sql = if ids {
        format!("(SELECT value FROM STRING_IDS WHERE id = {stack})")
    } else {
        stack.to_string()
    };
    let mut st = conn.prepare(&format!(
        "SELECT {id}, {frame_sql} FROM PYTORCH_CALLCHAINS ORDER BY {id}, {depth}"
    ))?;
    let mut rows = st.query([])?;
    let mut by_chain: Vec<(i64, Vec<u32>)> = Vec::new();
    while let Some(r) = rows.next()? {
        let Ok(chain) = int(r.get_ref(0)?) else {
            continue;
        };
        if chain == NULL {
            continue;
        }
        let frame = text(r.get_ref(1)?);
        if frame.trim().is_empty() {
            continue;
        }
        let f = ops.frames.intern(frame.trim());
        match by_chain.last_mut() {
            Some((c, frames)) if *c == chain => frames.push(f),
            _ => by_chain.push((chain, vec![f])),
        }
    }
    // Identical chains share one stack.
    let mut seen: FxHashMap<Box<[u32]>, u32> = FxHashMap::default();
    let mut out = FxHashMap::default();
    for (chain, frames) in by_chain {
        let frames: Box<[u32]> = frames.into_boxed_slice();
        let next = ops.stacks.len() as u32;
        let sid = *seen.entry(frames.clone()).or_insert_with(|| {
            ops.stacks.push(frames);
            next
        });
        out.insert(chain, sid);
    }
    Ok(out)
}
