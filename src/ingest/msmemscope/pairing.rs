//! A dump's MALLOCs and FREEs paired into blocks (by `allocation_id`, else by pool and
//! address), and the (process, device) each block belongs to.

use rustc_hash::FxHashMap;

use super::dump::Dump;
use super::events::{Event, Extras, MemEvent, NO_DEVICE, OpEvent, present};
use super::op_spans::{OpSpan, all_op_spans};
use super::open_blocks::{BlockKey, OpenBlocks};
use super::time_order::Events;
use crate::ingest::prefetch_budget::Reservation;
use crate::model::NULL;

/// No event, in a [`Block`].
pub(super) const NO_EVENT: u32 = u32::MAX;

/// A block: its MALLOC (or only its FREE) and its FREE, as indices into `Dump::mem`, and
/// what its FREE says of it, in 48 bytes (a dump holds a million; as `Option<usize>`s and
/// nothing more a block was 40).
#[derive(Debug, Clone, Copy)]
pub(super) struct Block {
    /// [`NO_EVENT`] when none.
    pub(super) malloc: u32,
    pub(super) free: u32,
    /// The device (the MALLOC's, else the FREE's), [`NO_DEVICE`] for none.
    pub(super) device: u32,
    /// Its first event's pool (`what`) and thread: kept here, as a look-up of the event for
    /// each block missed the cache (a sixth of the time from the read to the first curves).
    pub(super) pool: u32,
    pub(super) thread: u32,
    /// Its FREE's time and pool totals, taken when the FREE is paired: the blocks' table
    /// reads them here, in block order (looked up in the FREE, anywhere among the dump's
    /// events, each missed the cache: half of the table's time).
    pub(super) released: Released,
}

/// A FREE's time and its pool's `used` and `total` after it ([`NULL`]s for no FREE).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Released {
    pub(super) ts: i64,
    pub(super) used: i64,
    pub(super) total: i64,
}

impl Released {
    /// No FREE.
    pub(super) const NONE: Released = Released {
        ts: NULL,
        used: NULL,
        total: NULL,
    };

    /// What FREE `e` says.
    pub(super) fn of(e: &MemEvent) -> Released {
        Released {
            ts: e.ts,
            used: e.used,
            total: e.total,
        }
    }
}

impl Block {
    /// Its MALLOC's index.
    pub(super) fn malloc(&self) -> Option<usize> {
        (self.malloc != NO_EVENT).then_some(self.malloc as usize)
    }

    /// Its FREE's index.
    pub(super) fn free(&self) -> Option<usize> {
        (self.free != NO_EVENT).then_some(self.free as usize)
    }

    /// Its MALLOC's index, else its FREE's.
    pub(super) fn first(&self) -> Option<usize> {
        self.malloc().or_else(|| self.free())
    }

    /// Its device's index.
    pub(super) fn device(&self) -> Option<u32> {
        (self.device != NO_DEVICE).then_some(self.device)
    }
}

/// Pairs the dump's MALLOC and FREE events into blocks, in time order; returns the blocks,
/// how many MALLOCs landed on a key still held (the earlier block stays never freed), and
/// whether every FREE names its block's pool.
pub(super) fn pair(dump: &Dump) -> (Vec<Block>, u64, bool) {
    let mut open = OpenBlocks::new(dump.mem.len());
    // At most one block an event; the room is reserved, not touched (grown by doubling, the
    // blocks of a 1 GB dump were copied and their pages faulted in again at each step).
    let mut blocks: Vec<Block> = Vec::with_capacity(dump.mem.len());
    crate::ingest::huge_pages::advise(&blocks);
    let mut over_held = 0;
    let mut pools_agree = true;
    for (i, e) in dump.mem.iter().enumerate() {
        // (A dump's events are counted in u32, as their file order is: no dump that fits in
        // memory has more.)
        let Ok(i) = u32::try_from(i) else { break };
        if i == NO_EVENT {
            break;
        }
        let pid = dump.pid(e.thread);
        let key = match (present(e.allocation_id), e.addr()) {
            (Some(id), _) => BlockKey::Id(pid, id),
            (None, Some(addr)) => BlockKey::Addr(pid, e.what, addr),
            (None, None) => continue,
        };
        if e.malloc {
            // (As many blocks as events before this one: fewer than `NO_EVENT`.)
            if open.open(key, blocks.len() as u32) {
                over_held += 1;
            }
            blocks.push(Block {
                malloc: i,
                free: NO_EVENT,
                device: e.device,
                pool: e.what,
                thread: e.thread,
                released: Released::NONE,
            });
        } else {
            match open.close(key) {
                Some(b) => {
                    let b = b as usize;
                    blocks[b].free = i;
                    blocks[b].released = Released::of(e);
                    pools_agree &= blocks[b].pool == e.what;
                    // A MALLOC written with Device Id N/A takes its FREE's device.
                    if blocks[b].device == NO_DEVICE {
                        blocks[b].device = e.device;
                    }
                }
                None => blocks.push(Block {
                    malloc: NO_EVENT,
                    free: i,
                    device: e.device,
                    pool: e.what,
                    thread: e.thread,
                    released: Released::of(e),
                }),
            }
        }
    }
    (blocks, over_held, pools_agree)
}

/// A dump with its blocks paired and placed: what every rank of the dump is built from (made
/// once, shared by the dump's ranks).
pub(super) struct Paired {
    pub(super) dump: Dump,
    pub(super) blocks: Vec<Block>,
    /// MALLOCs on a key still held ([`pair`]).
    pub(super) over_held: u64,
    /// Each block's (process, device name's index in `device_names`).
    pub(super) parts: Parts,
    /// The device names blocks belong to (`npu:0`, `cpu`).
    pub(super) device_names: Vec<String>,
    /// Every process's op spans, in the order they end ([`all_op_spans`]; made with the blocks,
    /// in discovery, and shared by its ranks: the dump's ops are dropped once these are made).
    pub(super) spans: Vec<OpSpan>,
    /// What discovery counts for it while its ranks have not taken it.
    pub(super) counted: Option<Reservation>,
    /// The one place of every block, when the events say so without pairing: the pairing
    /// is then left to the rank's load, after its curves ([`Paired::pair`]).
    pub(super) deferred: Option<OnePlace>,
    /// Whether every FREE names its block's pool (false until paired).
    pub(super) pools_agree: bool,
}

/// The one (process, device) of every block of a dump, known from its MALLOCs and FREEs
/// without pairing them: every one that makes a block names the same process and the same
/// device, and no host pool. (A block's place is then that one, whichever events pair.)
#[derive(Debug, Clone)]
pub(super) struct OnePlace {
    pub(super) pid: i64,
    /// Its device's name (`npu:0`).
    pub(super) device: String,
    /// The pools (`what` ids) of the events that make blocks, and whether each is a
    /// framework pool.
    pub(super) pools: Vec<(u32, bool)>,
}

impl OnePlace {
    /// The one place of `dump`'s blocks, if the events say so (see [`OnePlace`]); a walk
    /// of its MALLOCs and FREEs on every core.
    pub(super) fn of(dump: &Dump) -> Option<OnePlace> {
        use rayon::prelude::*;
        if u32::try_from(dump.mem.len()).is_err() {
            return None;
        }
        let chunk = 1 << 16;
        let seen = (0..dump.mem.len().div_ceil(chunk))
            .into_par_iter()
            .map(|k| {
                let mut seen = Places::default();
                let mut last = None;
                for e in dump.mem.range(k * chunk..(k + 1) * chunk) {
                    // (Most events repeat the one before's thread, device and pool.)
                    let place = (e.thread, e.device, e.what);
                    if !makes_a_block(e) || last == Some(place) {
                        continue;
                    }
                    last = Some(place);
                    seen.see(dump, e)?;
                }
                Some(seen)
            })
            .try_reduce(Places::default, |a, b| a.join(b))?;
        let (pid, device) = seen.place?;
        Some(OnePlace {
            pid,
            device: device_name(dump, Some(device), "")?,
            pools: (seen.pools.into_iter())
                .map(|p| (p, is_framework_pool(dump.texts.get(p))))
                .collect(),
        })
    }
}

/// The places and pools of some MALLOCs and FREEs that make blocks ([`OnePlace::of`]).
#[derive(Default)]
pub(super) struct Places {
    /// Their one (process, device) (`None` before the first).
    pub(super) place: Option<(i64, u32)>,
    pub(super) pools: Vec<u32>,
}

impl Places {
    /// `e` seen; `None` once the events have no one place (another place, a host pool, or
    /// too many pools).
    pub(super) fn see(&mut self, dump: &Dump, e: &MemEvent) -> Option<()> {
        // (An event of no device is at another place than one of a device; when every one
        // names none, the place has no device name.)
        let place = (dump.pid(e.thread), e.device);
        if *self.place.get_or_insert(place) != place {
            return None;
        }
        if !self.pools.contains(&e.what) {
            if is_host_pool(dump.texts.get(e.what)) || self.pools.len() >= MAX_ONE_PLACE_POOLS {
                return None;
            }
            self.pools.push(e.what);
        }
        Some(())
    }

    /// Both's places and pools; `None` when they have no one place or too many pools.
    pub(super) fn join(mut self, other: Places) -> Option<Places> {
        match (self.place, other.place) {
            (Some(a), Some(b)) if a != b => return None,
            (None, b) => self.place = b,
            _ => {}
        }
        for p in other.pools {
            if !self.pools.contains(&p) {
                self.pools.push(p);
            }
        }
        (self.pools.len() <= MAX_ONE_PLACE_POOLS).then_some(self)
    }
}

/// More pools than this and a dump is paired at once (a dump has a handful).
pub(super) const MAX_ONE_PLACE_POOLS: usize = 64;

/// Whether a MALLOC or FREE makes or closes a block: it names an allocation id or an
/// address ([`pair`]'s keys).
pub(super) fn makes_a_block(e: &MemEvent) -> bool {
    e.allocation_id != NULL || e.has_addr
}

impl Paired {
    /// About how many bytes it holds (its events and blocks; texts left out).
    pub(super) fn bytes(&self) -> usize {
        let dump = &self.dump;
        let events = dump
            .mem
            .len()
            .saturating_mul(size_of::<MemEvent>())
            .saturating_add(dump.ops.len().saturating_mul(size_of::<OpEvent>()))
            .saturating_add(dump.rare.len().saturating_mul(size_of::<Event>()))
            .saturating_add(dump.extras.len().saturating_mul(size_of::<Extras>()));
        let blocks = (self.blocks.len().saturating_mul(size_of::<Block>()))
            .saturating_add(self.parts.bytes());
        let spans = (self.spans.len()).saturating_mul(size_of::<OpSpan>());
        events.saturating_add(blocks).saturating_add(spans)
    }

    /// `dump` paired, or its pairing deferred when its blocks have one place
    /// ([`OnePlace`]): the rank's load makes its curves first and then pairs it.
    pub(super) fn of(dump: Dump) -> Self {
        let deferred = OnePlace::of(&dump);
        let mut paired = Self::unpaired(dump);
        match deferred {
            Some(place) => paired.deferred = Some(place),
            None => paired.pair(),
        }
        paired
    }

    /// A paired copy of `other`'s events.
    pub(super) fn paired_copy(other: &Paired) -> Self {
        let mut paired = Self::unpaired(other.dump.clone());
        paired.pair();
        paired
    }

    /// `dump` with nothing paired yet ([`Paired::pair`] pairs it).
    pub(super) fn unpaired(dump: Dump) -> Self {
        Self {
            dump,
            blocks: Vec::new(),
            over_held: 0,
            parts: Parts::default(),
            device_names: Vec::new(),
            spans: Vec::new(),
            counted: None,
            deferred: None,
            pools_agree: false,
        }
    }

    /// Pairs its events into blocks and places them, and makes every process's op spans
    /// (see [`Paired::of`]).
    pub(super) fn pair(&mut self) {
        let one_place = self.deferred.take();
        let dump = &mut self.dump;
        // The ops are their spans from here (a third of their memory): dropped by the arm
        // that makes the spans, beside the longer pairing, not after it.
        let ops = std::mem::take(&mut dump.ops);
        let dump = &*dump;
        // Passes over every event, on every core: the blocks, and each process's device and
        // op spans.
        let ((blocks, over_held, pools_agree), (placing, spans)) = rayon::join(
            || pair(dump),
            move || {
                // Each process's device is looked for only when the blocks have no one place.
                let placing = match one_place {
                    Some(place) => Placing::One(place),
                    None => Placing::ByProcess(device_of_processes(dump, &ops)),
                };
                let spans = all_op_spans(&ops);
                drop(ops);
                (placing, spans)
            },
        );
        let (parts, device_names) = match placing {
            // (Every block has a first event: `pair` makes one from a MALLOC or a FREE.)
            Placing::One(place) => (Parts::All((place.pid, 0)), vec![place.device]),
            Placing::ByProcess(only) => {
                let (parts, names) = block_parts(dump, &blocks, &only);
                (Parts::Each(parts), names)
            }
        };
        self.blocks = blocks;
        self.over_held = over_held;
        self.pools_agree = pools_agree;
        self.parts = parts;
        self.device_names = device_names;
        self.spans = spans;
    }
}

/// How the blocks are placed: all in [`OnePlace`], or each by its process and device
/// ([`block_parts`], with each process's one device, [`device_of_processes`]).
enum Placing {
    One(OnePlace),
    ByProcess(FxHashMap<i64, Option<u32>>),
}

/// Where a dump's blocks belong: their (process, device name's index in the dump's
/// `device_names`), `None` for a block that belongs to no rank.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Parts {
    /// Every block's, when their events all name one place (see [`OnePlace`]): nothing is
    /// kept for each (a 1 GB dump's 950,000 blocks placed one by one took 18 ms on the
    /// pairing's critical path, and 15 MB).
    All((i64, u32)),
    /// Each block's ([`block_parts`]), in the blocks' order.
    Each(Vec<Option<(i64, u32)>>),
}

impl Default for Parts {
    fn default() -> Self {
        Parts::Each(Vec::new())
    }
}

impl Parts {
    /// Block `i`'s part.
    pub(super) fn get(&self, i: usize) -> Option<(i64, u32)> {
        match self {
            Parts::All(part) => Some(*part),
            Parts::Each(parts) => parts.get(i).copied().flatten(),
        }
    }

    /// The bytes it holds.
    fn bytes(&self) -> usize {
        match self {
            Parts::All(_) => 0,
            Parts::Each(parts) => parts.len().saturating_mul(size_of::<Option<(i64, u32)>>()),
        }
    }
}

/// The framework's pools: their blocks are a device's blocks.
pub(super) fn is_framework_pool(pool: &str) -> bool {
    matches!(pool, "PTA" | "MindSpore" | "ATB" | "PTA_WORKSPACE")
}

/// A host pool (`HOST`, `HOST_PINNED`): host memory whatever `Device Id` says.
pub(super) fn is_host_pool(pool: &str) -> bool {
    pool.starts_with("HOST")
}

/// The device name of a rank: `npu:0` for a number, `cpu` for host memory.
pub(super) fn device_name(dump: &Dump, device: Option<u32>, pool: &str) -> Option<String> {
    if is_host_pool(pool) {
        return Some("cpu".into());
    }
    let d = dump.devices.get(device? as usize)?;
    Some(if d.eq_ignore_ascii_case("host") {
        "cpu".into()
    } else if d.bytes().all(|b| b.is_ascii_digit()) {
        format!("npu:{d}")
    } else {
        d.clone()
    })
}

/// The (process, device name) of every block, the name as an index into the names it returns
/// (a `String` for each of a dump's million blocks was a tenth of its discovery). An
/// allocation whose events all say `Device Id` N/A belongs to its process's device when the
/// process has only one; else to no rank (counted by [`allocations_without_device`]).
pub(super) fn block_parts(
    dump: &Dump,
    blocks: &[Block],
    only: &FxHashMap<i64, Option<u32>>,
) -> (Vec<Option<(i64, u32)>>, Vec<String>) {
    use rayon::prelude::*;
    // Each block's (process, device, pool), on every core (serial, this was a tenth of the
    // time to a big dump's first curves).
    let keys: Vec<Option<(i64, Option<u32>, u32)>> = blocks
        .par_iter()
        .map(|b| {
            b.first()?;
            let pid = dump.pid(b.thread);
            // (Free-only blocks keep no device: they are counted as such.)
            let device = b
                .device()
                .or_else(|| b.malloc().and_then(|_| only.get(&pid).copied().flatten()));
            Some((pid, device, b.pool))
        })
        .collect();
    /// A block's (device, pool).
    type Place = (Option<u32>, u32);
    let mut names: Vec<String> = Vec::new();
    // Each (device, pool) named once; most blocks have the one before's.
    let mut ids: FxHashMap<Place, Option<u32>> = FxHashMap::default();
    let mut last: Option<(Place, Option<u32>)> = None;
    let parts = keys
        .into_iter()
        .map(|key| {
            let (pid, device, what) = key?;
            let id = match last {
                Some((k, id)) if k == (device, what) => id,
                _ => {
                    let id = *ids.entry((device, what)).or_insert_with(|| {
                        let name = device_name(dump, device, dump.texts.get(what))?;
                        Some(match names.iter().position(|n| *n == name) {
                            Some(k) => k as u32,
                            None => {
                                names.push(name);
                                (names.len() - 1) as u32
                            }
                        })
                    });
                    last = Some(((device, what), id));
                    id
                }
            };
            Some((pid, id?))
        })
        .collect();
    (parts, names)
}

/// Each process's device when its events name only one (`None` when they name several).
pub(super) fn device_of_processes(
    dump: &Dump,
    ops: &Events<OpEvent>,
) -> FxHashMap<i64, Option<u32>> {
    let mut only: FxHashMap<i64, Option<u32>> = FxHashMap::default();
    // The (thread, device) last seen: seen again, it changes nothing (most events repeat it).
    let mut last = None;
    let compact = (dump.mem.iter().map(|e| (e.thread, e.device)))
        .chain(ops.iter().map(|e| (e.thread, e.device)));
    let events = compact
        .filter(|&(_, d)| d != NO_DEVICE)
        .filter(|&seen| {
            let new = last != Some(seen);
            last = Some(seen);
            new
        })
        .map(|(t, d)| (dump.pid(t), d))
        .chain(
            dump.rare
                .iter()
                .filter_map(|e| e.device.map(|d| (e.pid, d))),
        );
    for (pid, d) in events {
        only.entry(pid)
            .and_modify(|o| {
                if *o != Some(d) {
                    *o = None;
                }
            })
            .or_insert(Some(d));
    }
    only
}

/// Allocations (of process `pid`, or of every process) that no rank can hold: their device
/// is N/A and their process has none or several.
pub(super) fn allocations_without_device(
    dump: &Dump,
    blocks: &[Block],
    parts: &Parts,
    pid: Option<i64>,
) -> u64 {
    unplaced(dump, blocks, parts, pid, |b| b.malloc().is_some())
}

/// Blocks of process `pid` freed without their MALLOC in the dump and naming no device: no
/// rank can hold them.
pub(super) fn frees_without_device(dump: &Dump, blocks: &[Block], parts: &Parts, pid: i64) -> u64 {
    unplaced(dump, blocks, parts, Some(pid), |b| {
        b.malloc().is_none() && b.free().is_some()
    })
}

/// How many of the blocks (of process `pid`, or of every process) that `which` picks belong
/// to no rank.
fn unplaced(
    dump: &Dump,
    blocks: &[Block],
    parts: &Parts,
    pid: Option<i64>,
    which: impl Fn(&Block) -> bool + Sync,
) -> u64 {
    use rayon::prelude::*;
    let Parts::Each(parts) = parts else {
        // (Every block in its place.)
        return 0;
    };
    (blocks.par_iter().zip(parts))
        .filter(|(b, p)| p.is_none() && which(b) && pid.is_none_or(|pid| dump.pid(b.thread) == pid))
        .count() as u64
}
