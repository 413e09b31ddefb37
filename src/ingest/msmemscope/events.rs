//! The events memsight keeps of a dump's rows: MALLOCs and FREEs ([`MemEvent`], 80 bytes, and the
//! [`Extras`] runs of them share),
//! ops' starts and ends ([`OpEvent`], 32), and the few OOM records and MSTX ranges ([`Event`]).

use super::cells::{NO_OOM, OomAttr};
use super::time_order::Timed;
use crate::model::NULL;

/// What an event is (the `Event` column), as far as memsight reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    Malloc,
    Free,
    OpStart,
    OpEnd,
    /// `OOM_DETAIL` `OOM_TRIGGER`: the request that failed (`--analysis=oom`).
    OomTrigger,
    /// `OOM_DETAIL` `OOM_TOP_ALLOC`: one of the largest blocks held at the OOM.
    OomTop,
    /// `OOM_DETAIL` `OOM_RECENT_ALLOC`: one of the latest blocks held at the OOM.
    OomRecent,
    /// `MSTX` `Range_start` (its name in `what`).
    RangeStart,
    /// `MSTX` `Range_end`.
    RangeEnd,
}

/// An OOM record or an MSTX range, with what memsight reads of its row (a dump holds a few;
/// its MALLOCs and FREEs are [`MemEvent`]s, its ops [`OpEvent`]s). Texts are ids into
/// `Dump::texts` (0 when absent).
#[derive(Debug, Clone)]
pub(super) struct Event {
    pub(super) kind: Kind,
    /// The `Event Type` of an OOM record, the range's name of an MSTX one.
    pub(super) what: u32,
    /// File order.
    pub(super) order: u32,
    /// `Call Stack(Python)` (0 when empty).
    pub(super) python: u32,
    /// `Device Id`: a number, `host`, or `None` for `N/A`.
    pub(super) device: Option<u32>,
    /// Time as written (scaled to ns once the whole file is read).
    pub(super) ts: i64,
    pub(super) pid: i64,
    pub(super) tid: i64,
    /// `size` (negative on a free in older dumps), [`NULL`] when absent.
    pub(super) size: i64,
    /// An OOM record's keys, its `ptr` else the `Ptr` column (`None` for other events).
    pub(super) oom: Option<Box<OomAttr>>,
}

/// An optional number of an event, [`NULL`] when absent.
#[inline]
pub(super) fn or_null(v: Option<i64>) -> i64 {
    v.unwrap_or(NULL)
}

/// A number of an event, `None` when [`NULL`].
#[inline]
pub(super) fn present(v: i64) -> Option<i64> {
    (v != NULL).then_some(v)
}

impl Event {
    /// Its OOM keys (none for an event that is no OOM record).
    pub(super) fn oom(&self) -> &OomAttr {
        self.oom.as_deref().unwrap_or(&NO_OOM)
    }
}

impl Timed for Event {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

/// A device index that names none (`Device Id` `N/A`) in a compact event.
pub(super) const NO_DEVICE: u32 = u32::MAX;

/// A device index as a compact event keeps it.
#[inline]
pub(super) fn device_slot(device: Option<u32>) -> u32 {
    device.unwrap_or(NO_DEVICE)
}

/// A MALLOC or FREE: what memsight reads of its row, in 80 bytes (a dump holds millions; as
/// an [`Event`] each was 128, the ops' too, and half of a 1 GB dump's peak memory; with its
/// [`Extras`] in it, 96). Numbers are [`NULL`] when absent, texts ids into `Dump::texts` (0
/// when absent).
#[derive(Debug, Clone)]
pub(super) struct MemEvent {
    /// Time as written (scaled to ns once the whole file is read).
    pub(super) ts: i64,
    /// `addr`, else the `Ptr` column (when `has_addr`).
    pub(super) addr: u64,
    /// `allocation_id`.
    pub(super) allocation_id: i64,
    /// `size` (negative on a free in older dumps).
    pub(super) size: i64,
    /// The pool's `total` and `used` ([`Attr`](super::cells::Attr)).
    pub(super) total: i64,
    pub(super) used: i64,
    /// The pool (`Event Type`).
    pub(super) what: u32,
    /// File order.
    pub(super) order: u32,
    /// `Call Stack(Python)`, `owner`.
    pub(super) python: u32,
    pub(super) owner: u32,
    /// Its [`Extras`]: 0 for none, else `k` for `Dump::extras[k - 1]`.
    pub(super) extras: u32,
    /// (Process, thread): an index into `Dump::threads`.
    pub(super) thread: u32,
    /// `Device Id`: an index into `Dump::devices`, [`NO_DEVICE`] for `N/A`.
    pub(super) device: u32,
    /// A MALLOC (else a FREE).
    pub(super) malloc: bool,
    /// Whether `addr` was written.
    pub(super) has_addr: bool,
}

impl MemEvent {
    /// Its address, if written.
    #[inline]
    pub(super) fn addr(&self) -> Option<u64> {
        self.has_addr.then_some(self.addr)
    }
}

/// The cells of a MALLOC or FREE that a row mostly repeats from the row before (the
/// process's and the device's bytes, msMemScope's finding), kept once for each run of rows
/// that repeat them (`Dump::extras`), not in each [`MemEvent`]: a dump whose rows write
/// them holds one for a few rows, one whose rows do not (older dumps) none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Extras {
    /// `process_used`, `device_used` ([`Attr`](super::cells::Attr)), [`NULL`] when absent.
    pub(super) process_used: i64,
    pub(super) device_used: i64,
    /// `inefficient`: a text id (0 when absent).
    pub(super) inefficient: u32,
}

impl Extras {
    /// A row that writes none of them.
    pub(super) const NONE: Extras = Extras {
        process_used: NULL,
        device_used: NULL,
        inefficient: 0,
    };

    /// The extras of `list` (a dump's or a part's) that an event's `extras` names ([`NONE`]
    /// for 0 or one not in it).
    ///
    /// [`NONE`]: Extras::NONE
    #[inline]
    pub(super) fn of(list: &[Extras], k: u32) -> &Extras {
        (k.checked_sub(1))
            .and_then(|i| list.get(i as usize))
            .unwrap_or(&Self::NONE)
    }
}

impl Timed for MemEvent {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

/// An op's start or end (`OP_LAUNCH`), in 32 bytes.
#[derive(Debug, Clone)]
pub(super) struct OpEvent {
    /// Time as written (scaled to ns once the whole file is read).
    pub(super) ts: i64,
    /// File order.
    pub(super) order: u32,
    /// The op's name.
    pub(super) what: u32,
    /// (Process, thread): an index into `Dump::threads`.
    pub(super) thread: u32,
    /// `Device Id`: an index into `Dump::devices`, [`NO_DEVICE`] for `N/A`.
    pub(super) device: u32,
    /// A start (else an end).
    pub(super) start: bool,
}

impl Timed for OpEvent {
    fn key(&self) -> (i64, u32) {
        (self.ts, self.order)
    }
}

#[cfg(test)]
mod tests {
    use super::super::pairing::Block;
    use super::*;

    /// A dump holds millions of events: a MALLOC or FREE stays at 80 bytes, an op at 32 (an
    /// `Attr` in each made them 232, and the 1 GB dump's peak memory 1.4 GiB; one event
    /// type of 128 bytes for both, 1.0 GiB; the process's and device's bytes in each, 96),
    /// a block at 48 (12, and 8 for its pool and thread, 24 for its FREE's time and totals,
    /// which were looked up in its events, a cache miss for each).
    #[test]
    fn events_are_small() {
        assert!(size_of::<MemEvent>() <= 80, "{}", size_of::<MemEvent>());
        assert!(size_of::<OpEvent>() <= 32, "{}", size_of::<OpEvent>());
        assert!(size_of::<Block>() <= 48, "{}", size_of::<Block>());
    }
}
