//! What the msMemScope modules' tests share: a dump's events as text, generated dumps, a
//! bare event.

use std::path::{Path, PathBuf};

use super::NAME;
use super::dump::Dump;
use super::events::{Event, Kind};
use crate::model::{Format, NULL};

/// Every event of a dump as text, its ids resolved (ids differ with the order texts
/// were met in).
pub(super) fn described(dump: &Dump) -> Vec<String> {
    let text = |id: u32| dump.texts.get(id).to_string();
    let device = |d: u32| dump.devices.get(d as usize).cloned();
    let mem = dump.mem.iter().map(|e| {
        let extras = dump.extras(e);
        format!(
            "mem {} {} {} {} {} {} {:?} {:?} {:?} {} {} {} {} {} {} {}",
            e.malloc,
            text(e.what),
            e.order,
            text(e.python),
            text(e.owner),
            text(extras.inefficient),
            device(e.device),
            dump.thread(e.thread),
            e.addr(),
            e.ts,
            e.allocation_id,
            e.size,
            e.total,
            e.used,
            extras.process_used,
            extras.device_used,
        )
    });
    let ops = dump.ops.iter().map(|e| {
        format!(
            "op {} {} {} {:?} {:?} {}",
            e.start,
            text(e.what),
            e.order,
            device(e.device),
            dump.thread(e.thread),
            e.ts,
        )
    });
    let rare = dump.rare.iter().map(|e| {
        format!(
            "{:?} {} {} {} {:?} {} {} {} {} {:?}",
            e.kind,
            text(e.what),
            e.order,
            text(e.python),
            e.device.map(|d| dump.devices[d as usize].clone()),
            e.ts,
            e.pid,
            e.tid,
            e.size,
            e.oom
        )
    });
    mem.chain(ops).chain(rare).collect()
}

/// The header of a dump, as msMemScope writes it.
pub(super) const DUMP_HEADER: &str = "ID,Event,Event Type,Name,Timestamp(ns),Process Id,Thread Id,Device Id,Ptr,Attr,Call Stack(Python),Call Stack(C)\n";

/// Generated dumps with Python stacks, one a rank, of `allocs` allocations each.
pub(super) fn generated_dumps(dir: &Path, ranks: usize, allocs: usize) -> Vec<PathBuf> {
    let opts = crate::generate::GenOptions {
        ranks,
        allocs,
        format: Format::Imported(NAME),
        stacks: true,
        ..crate::generate::demo_options()
    };
    crate::generate::generate(dir, &opts).unwrap()
}

/// An event at `ts`, the `i`th of its file (its pid too, to tell them apart).
pub(super) fn event(ts: i64, i: usize) -> Event {
    Event {
        kind: Kind::RangeStart,
        what: 0,
        order: i as u32,
        python: 0,
        device: None,
        ts,
        pid: i as i64,
        tid: 0,
        size: NULL,
        oom: None,
    }
}
