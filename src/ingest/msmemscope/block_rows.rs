//! A rank's blocks as the rows of its blocks' table (`OperatorMemory`), made on every core.

use super::dump::Dump;
use super::events::{MemEvent, present};
use super::pairing::Block;
use crate::ingest::huge_pages;
use crate::model::{Interner, LazyColumn, NULL, NameId, OperatorMemory};

/// What [`block_rows`] made: the blocks' table and what each row needs besides.
pub(super) struct BlockRows {
    /// The blocks' table.
    pub(super) table: OperatorMemory,
    /// Frees without their allocation.
    pub(super) orphans: u64,
    /// Each row's thread (its index into `Dump::threads`, as the host ops'), Python stack and
    /// msMemScope tags.
    pub(super) row_thread: Vec<u64>,
    pub(super) row_python: Vec<u32>,
    pub(super) owners: Vec<NameId>,
    pub(super) findings: Vec<NameId>,
    /// Each row's address (for the OOM records; empty when not asked for).
    pub(super) row_addr: Vec<Option<u64>>,
}

/// The rank's blocks (`mine`, those `shown`) as the rows of a blocks' table, named by their
/// owner or pool (interned in `strings`), in allocation order (a free-only block at its
/// free); their addresses when `keep_addr`.
pub(super) fn block_rows(
    dump: &Dump,
    mine: &[Block],
    shown: &[bool],
    keep_addr: bool,
    unnamed: NameId,
    strings: &mut Interner,
) -> BlockRows {
    use rayon::prelude::*;
    // In allocation order (a free-only block at its free).
    let mut rows: Vec<&Block> = mine
        .iter()
        .zip(shown)
        .filter_map(|(b, &s)| s.then_some(b))
        .collect();
    rows.sort_by_key(|b| b.first());
    let mut table = OperatorMemory::default();
    let mut texts = RowTexts::new(dump, rows.len(), keep_addr, unnamed);
    // The numbers' columns in the order of [`block_numbers`].
    let mut numbers = [
        &mut table.size,
        &mut table.alloc_time,
        &mut table.release_time,
        &mut table.duration,
        &mut table.alloc_total_allocated,
        &mut table.alloc_total_reserved,
        &mut table.release_total_allocated,
        &mut table.release_total_reserved,
    ];
    let name = &mut table.name;
    numbers.iter_mut().for_each(|c| {
        c.reserve(rows.len());
        huge_pages::advise(c);
    });
    name.reserve(rows.len());
    huge_pages::advise(name);
    // Each block's events, a batch at a time, on every core. (A block's MALLOC and FREE lie
    // anywhere among the dump's hundreds of MB of events: looked up in the loop that made
    // each row, each look-up missed the cache and held the row up, 70 % of the table's
    // time. Gathered in a loop of their own, many are fetched at once.) Then the batch's
    // numbers and its names, threads and tags side by side.
    let mut events: Vec<(Option<MemEvent>, Option<MemEvent>)> = Vec::new();
    for batch in rows.chunks(GATHER_BATCH) {
        batch
            .par_iter()
            .map(|b| {
                let event = |i: Option<usize>| i.map(|i| dump.mem[i].clone());
                (event(b.malloc()), event(b.free()))
            })
            .collect_into_vec(&mut events);
        let events = &events;
        rayon::join(
            || {
                for (malloc, free) in events {
                    if let Some(cells) = block_numbers(malloc.as_ref(), free.as_ref()) {
                        for (column, cell) in numbers.iter_mut().zip(cells) {
                            column.push(cell);
                        }
                    }
                }
            },
            || {
                for (malloc, free) in events {
                    if let Some(n) = texts.row(malloc.as_ref(), free.as_ref(), strings) {
                        name.push(n);
                    }
                }
            },
        );
    }
    let n = table.size.len();
    table.active_release_time = LazyColumn::filled(n);
    table.active_duration = LazyColumn::filled(n);
    table.alloc_total_active = LazyColumn::filled(n);
    table.release_total_active = LazyColumn::filled(n);
    table.stream = LazyColumn::filled(n);
    BlockRows {
        table,
        ..texts.made
    }
}

/// How many blocks' events [`block_rows`] gathers at a time (about 3 MB of them: they are
/// read again at once, from the cache).
pub(super) const GATHER_BATCH: usize = 1 << 14;

/// A block's numbers in the blocks' table, from its MALLOC and FREE (either may be
/// missing, not both): size, allocation and release time, duration, and the pool's totals
/// (allocated, reserved) after each; a block freed without its MALLOC in the dump has a
/// negative size, as the msprof DB writes it.
pub(super) fn block_numbers(
    malloc: Option<&MemEvent>,
    free: Option<&MemEvent>,
) -> Option<[i64; 8]> {
    let size_of = |e: &MemEvent| present(e.size).unwrap_or(0).abs();
    let release = |f: Option<&MemEvent>| f.map_or((NULL, NULL, NULL), |f| (f.ts, f.used, f.total));
    Some(match malloc {
        Some(m) => {
            let (released, allocated, reserved) = release(free);
            let duration = if released != NULL && m.ts != NULL {
                released.saturating_sub(m.ts)
            } else {
                NULL
            };
            [
                size_of(m),
                m.ts,
                released,
                duration,
                m.used,
                m.total,
                allocated,
                reserved,
            ]
        }
        None => {
            let f = free?;
            [-size_of(f), NULL, f.ts, NULL, NULL, NULL, f.used, f.total]
        }
    })
}

/// What [`block_rows`] makes of each block besides its numbers: its name, thread, stack and
/// tags.
pub(super) struct RowTexts<'d> {
    pub(super) dump: &'d Dump,
    pub(super) keep_addr: bool,
    pub(super) unnamed: NameId,
    /// What is made (its table left empty: the numbers are made beside it).
    pub(super) made: BlockRows,
    /// The dump's texts (owners, findings) and pools' block names as the rank's strings,
    /// each interned once: not at each of a million blocks.
    pub(super) as_string: Vec<Option<NameId>>,
    pub(super) block_names: Vec<Option<NameId>>,
}

impl<'d> RowTexts<'d> {
    /// Room for `n` rows.
    pub(super) fn new(dump: &'d Dump, n: usize, keep_addr: bool, unnamed: NameId) -> Self {
        RowTexts {
            dump,
            keep_addr,
            unnamed,
            made: BlockRows {
                table: OperatorMemory::default(),
                orphans: 0,
                row_thread: Vec::with_capacity(n),
                row_python: Vec::with_capacity(n),
                owners: Vec::with_capacity(n),
                findings: Vec::with_capacity(n),
                row_addr: Vec::with_capacity(if keep_addr { n } else { 0 }),
            },
            as_string: vec![None; dump.texts.len()],
            block_names: vec![None; dump.texts.len()],
        }
        .advised()
    }

    /// Its lists' room marked for 2 MiB pages ([`huge_pages`]).
    fn advised(self) -> Self {
        let made = &self.made;
        huge_pages::advise(&made.row_thread);
        huge_pages::advise(&made.row_python);
        huge_pages::advise(&made.owners);
        huge_pages::advise(&made.findings);
        huge_pages::advise(&made.row_addr);
        self
    }

    /// A block's row, from its MALLOC and FREE: its name (`None` for no row: a block with
    /// neither).
    pub(super) fn row(
        &mut self,
        malloc: Option<&MemEvent>,
        free: Option<&MemEvent>,
        strings: &mut Interner,
    ) -> Option<NameId> {
        let dump = self.dump;
        let Some(m) = malloc else {
            let f = free?;
            self.made.orphans += 1;
            self.made.row_thread.push(u64::from(f.thread));
            self.made.row_python.push(0);
            self.made.owners.push(0);
            self.made.findings.push(0);
            if self.keep_addr {
                self.made.row_addr.push(None);
            }
            return Some(self.unnamed);
        };
        self.made.row_thread.push(u64::from(m.thread));
        self.made.row_python.push(m.python);
        let as_string = &mut self.as_string;
        let mut string = |id: u32| cached(as_string, id, || strings.intern(dump.texts.get(id)));
        let owner = string(m.owner);
        let finding = string(dump.extras(m).inefficient);
        self.made.owners.push(owner);
        self.made.findings.push(finding);
        if self.keep_addr {
            self.made.row_addr.push(m.addr());
        }
        // Until an op span names it: the dump's owner (`PTA@model@weight`), else its pool
        // (`PTA block`, `HAL block`), not "Unknown".
        Some(if owner != self.unnamed {
            owner
        } else {
            match dump.texts.get(m.what) {
                "" | "N/A" => self.unnamed,
                pool => cached(&mut self.block_names, m.what, || {
                    strings.intern(&format!("{pool} block"))
                }),
            }
        })
    }
}

/// `cache[id]`, made by `make` the first time (and every time for an id past its end).
pub(super) fn cached(
    cache: &mut [Option<NameId>],
    id: u32,
    make: impl FnOnce() -> NameId,
) -> NameId {
    match cache.get_mut(id as usize) {
        Some(Some(n)) => *n,
        Some(slot) => *slot.insert(make()),
        None => make(),
    }
}
