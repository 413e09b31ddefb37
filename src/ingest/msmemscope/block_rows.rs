//! A rank's blocks as the rows of its blocks' table (`OperatorMemory`), made on every core.

use super::dump::Dump;
use super::events::{MemEvent, present};
use super::pairing::{Block, Released};
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
/// free); their addresses when `keep_addr`: [`unnamed_rows`], then [`RowsToName::name`], as
/// a rank's load makes them (with the ops' attribution beside the naming).
#[cfg(test)]
pub(super) fn block_rows(
    dump: &Dump,
    mine: &[Block],
    shown: &[bool],
    keep_addr: bool,
    unnamed: NameId,
    strings: &mut Interner,
) -> BlockRows {
    let (mut made, to_name) = unnamed_rows(dump, mine, shown, keep_addr);
    let texts = [&mut made.owners[..], &mut made.findings[..]];
    (made.table.name, made.orphans) = to_name.name(dump, texts, unnamed, strings);
    made
}

/// The rank's blocks (`mine`, those `shown`) as the rows of a blocks' table, in allocation
/// order (a free-only block at its free), made on every core; their addresses when
/// `keep_addr`. Their texts are still ids in the dump's texts: [`RowsToName::name`] makes them
/// the rank's strings on one core, and what else needs the rows (the ops' attribution) can run
/// beside it. The table's names are empty, its orphans not counted.
pub(super) fn unnamed_rows<'a>(
    dump: &Dump,
    mine: &'a [Block],
    shown: &[bool],
    keep_addr: bool,
) -> (BlockRows, RowsToName<'a>) {
    use rayon::prelude::*;
    // In allocation order (a free-only block at its free); a block with neither makes no row.
    let mut rows: Vec<&Block> = mine
        .iter()
        .zip(shown)
        .filter_map(|(b, &s)| (s && b.first().is_some()).then_some(b))
        .collect();
    rows.sort_by_key(|b| b.first());
    let n = rows.len();
    // Every column at its length (zeros: pages not touched until written).
    let mut table = OperatorMemory::default();
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
    for column in &mut numbers {
        **column = vec![0; n];
        huge_pages::advise(column);
    }
    let mut row_thread: Vec<u64> = vec![0; n];
    let mut row_python: Vec<u32> = vec![0; n];
    let mut owners: Vec<NameId> = vec![0; n];
    let mut findings: Vec<NameId> = vec![0; n];
    let mut row_addr: Vec<Option<u64>> = vec![None; if keep_addr { n } else { 0 }];
    let mut name: Vec<NameId> = vec![0; n];
    huge_pages::advise(&row_thread);
    huge_pages::advise(&row_python);
    huge_pages::advise(&owners);
    huge_pages::advise(&findings);
    huge_pages::advise(&row_addr);
    huge_pages::advise(&name);
    // Each row's numbers and the ids of its texts in the dump, in pieces on every core. (A
    // block's FREE is not looked up, only its MALLOC, in order: the block holds what its
    // FREE says. Looked up among the dump's hundreds of MB of events, each FREE missed the
    // cache, and the texts made on one core beside the numbers took longer still.)
    let mut numbers_at = numbers.each_mut().map(|c| c.chunks_mut(ROWS_A_PIECE));
    let mut thread_at = row_thread.chunks_mut(ROWS_A_PIECE);
    let mut python_at = row_python.chunks_mut(ROWS_A_PIECE);
    let mut owner_at = owners.chunks_mut(ROWS_A_PIECE);
    let mut finding_at = findings.chunks_mut(ROWS_A_PIECE);
    let mut name_at = name.chunks_mut(ROWS_A_PIECE);
    let mut addr_at = row_addr.chunks_mut(ROWS_A_PIECE);
    let pieces: Vec<Piece<'_>> = (rows.chunks(ROWS_A_PIECE))
        .map(|rows| Piece {
            rows,
            numbers: numbers_at.each_mut().map(|c| c.next().unwrap_or_default()),
            thread: thread_at.next().unwrap_or_default(),
            python: python_at.next().unwrap_or_default(),
            owner: owner_at.next().unwrap_or_default(),
            finding: finding_at.next().unwrap_or_default(),
            name: name_at.next().unwrap_or_default(),
            addr: addr_at.next().unwrap_or_default(),
        })
        .collect();
    pieces.into_par_iter().for_each(|p| p.fill(dump));
    table.active_release_time = LazyColumn::filled(n);
    table.active_duration = LazyColumn::filled(n);
    table.alloc_total_active = LazyColumn::filled(n);
    table.release_total_active = LazyColumn::filled(n);
    table.stream = LazyColumn::filled(n);
    let made = BlockRows {
        table,
        orphans: 0,
        row_thread,
        row_python,
        owners,
        findings,
        row_addr,
    };
    (made, RowsToName { rows, pools: name })
}

/// The rows of [`unnamed_rows`] still to be named: their blocks, and each one's pool (an id in
/// the dump's texts).
pub(super) struct RowsToName<'a> {
    rows: Vec<&'a Block>,
    pools: Vec<u32>,
}

impl RowsToName<'_> {
    /// The rows' names and how many blocks have no MALLOC; the rows' `owners` and `findings`
    /// turned from ids in `dump`'s texts into the rank's strings (interned in `strings`), on
    /// one core: each text interned once, not at each of a million rows. A row is named by its
    /// owner (`PTA@model@weight`), else its pool (`PTA block`, `HAL block`) until an op span
    /// names it; a block without its MALLOC is `unnamed`.
    pub(super) fn name(
        self,
        dump: &Dump,
        [owners, findings]: [&mut [NameId]; 2],
        unnamed: NameId,
        strings: &mut Interner,
    ) -> (Vec<NameId>, u64) {
        let RowsToName { rows, mut pools } = self;
        let mut as_string: Vec<Option<NameId>> = vec![None; dump.texts.len()];
        let mut block_names: Vec<Option<NameId>> = vec![None; dump.texts.len()];
        let mut string = |id: u32, strings: &mut Interner| {
            cached(&mut as_string, id, || strings.intern(dump.texts.get(id)))
        };
        let mut orphans = 0;
        // (`pools` becomes the names, row by row.)
        let each = rows.iter().zip(owners).zip(findings).zip(&mut pools);
        for (((b, owner), finding), name) in each {
            if b.malloc().is_none() {
                orphans += 1;
                *name = unnamed;
                continue;
            }
            *owner = string(*owner, strings);
            *finding = string(*finding, strings);
            let pool = *name;
            *name = if *owner != unnamed {
                *owner
            } else {
                match dump.texts.get(pool) {
                    "" | "N/A" => unnamed,
                    text => cached(&mut block_names, pool, || {
                        strings.intern(&format!("{text} block"))
                    }),
                }
            };
        }
        (pools, orphans)
    }
}

/// How many rows each [`Piece`] of [`unnamed_rows`] holds (a few in tests, so that their
/// tables of tens of rows are made in many pieces).
const ROWS_A_PIECE: usize = if cfg!(test) { 3 } else { 1 << 14 };

/// Some rows of the blocks' table and their cells, each column's the same rows.
struct Piece<'a> {
    rows: &'a [&'a Block],
    /// In the order of [`block_numbers`].
    numbers: [&'a mut [i64]; 8],
    thread: &'a mut [u64],
    python: &'a mut [u32],
    /// The ids of the rows' owner, finding and pool in the dump's texts (left 0 for a block
    /// without its MALLOC).
    owner: &'a mut [u32],
    finding: &'a mut [u32],
    name: &'a mut [u32],
    /// Empty when the addresses are not kept.
    addr: &'a mut [Option<u64>],
}

impl Piece<'_> {
    /// The rows' numbers, threads, Python stacks, addresses, and their texts' ids.
    fn fill(self, dump: &Dump) {
        let Piece {
            rows,
            mut numbers,
            thread,
            python,
            owner,
            finding,
            name,
            addr,
        } = self;
        for (k, b) in rows.iter().enumerate() {
            let malloc = b.malloc().map(|i| &dump.mem[i]);
            let freed_size = || b.free().map_or(NULL, |f| dump.mem[f].size);
            let cells = block_numbers(malloc, &b.released, freed_size);
            for (column, cell) in numbers.iter_mut().zip(cells) {
                column[k] = cell;
            }
            match malloc {
                Some(m) => {
                    thread[k] = u64::from(m.thread);
                    python[k] = m.python;
                    owner[k] = m.owner;
                    finding[k] = dump.extras(m).inefficient;
                    name[k] = m.what;
                    if let Some(a) = addr.get_mut(k) {
                        *a = m.addr();
                    }
                }
                // A block's first event's thread (its FREE's here).
                None => thread[k] = u64::from(b.thread),
            }
        }
    }
}

/// A block's numbers in the blocks' table, from its MALLOC (`None` for a block freed without
/// its MALLOC in the dump, whose FREE's `size` `freed_size` tells) and what its FREE said
/// (`released`): size, allocation and release time, duration, and the pool's totals
/// (allocated, reserved) after each; a block freed without its MALLOC has a negative size,
/// as the msprof DB writes it.
pub(super) fn block_numbers(
    malloc: Option<&MemEvent>,
    released: &Released,
    freed_size: impl FnOnce() -> i64,
) -> [i64; 8] {
    let size_of = |size: i64| present(size).unwrap_or(0).abs();
    let Released { ts, used, total } = *released;
    match malloc {
        Some(m) => {
            let duration = if ts != NULL && m.ts != NULL {
                ts.saturating_sub(m.ts)
            } else {
                NULL
            };
            [
                size_of(m.size),
                m.ts,
                ts,
                duration,
                m.used,
                m.total,
                used,
                total,
            ]
        }
        None => [
            -size_of(freed_size()),
            NULL,
            ts,
            NULL,
            NULL,
            NULL,
            used,
            total,
        ],
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

#[cfg(test)]
mod tests {
    use super::super::dump::read_dump_file;
    use super::super::pairing::pair;
    use super::super::test_support::{DUMP_HEADER, generated_dumps};
    use super::*;
    use crate::ingest::LoadControl;

    /// Each row of the blocks' table, made in pieces of a few rows, is what its block's own
    /// MALLOC and FREE events say (looked up in the dump, not in the block): numbers, thread,
    /// stack, owner, finding, name and address; a FREE without its MALLOC makes an orphan
    /// row; rows come in the order of each block's first event.
    #[test]
    fn each_row_is_what_its_blocks_events_say() {
        let dir = tempfile::tempdir().unwrap();
        let generated = generated_dumps(dir.path(), 1, 40);
        let mut text = std::fs::read_to_string(&generated[0]).unwrap();
        // A FREE of no block, a block never freed, one with no owner, one of no pool.
        for row in [
            "9001,FREE,PTA,N/A,1700000000000000001,3101864,3101864,0,0x30,\"{allocation_id:90001,addr:0x30,size:-32,total:4096,used:0}\",,",
            "9002,MALLOC,PTA,N/A,1700000000000000002,3101864,7,0,0x40,\"{allocation_id:90002,addr:0x40,size:8,total:4096,used:8}\",,",
            "9003,MALLOC,HAL,N/A,1700000000000000003,3101864,7,0,0x50,\"{allocation_id:90003,addr:0x50,size:16,total:4096,used:24}\",,",
            "9004,MALLOC,N/A,N/A,1700000000000000004,3101864,7,0,0x60,\"{allocation_id:90004,addr:0x60,size:16,total:4096,used:40}\",,",
            "9005,FREE,HAL,N/A,1700000000000000005,3101864,7,0,0x50,\"{allocation_id:90003,addr:0x50,size:-16,total:4096,used:24}\",,",
        ] {
            text.push_str(row);
            text.push('\n');
        }
        assert!(text.starts_with(DUMP_HEADER));
        let path = dir.path().join("memscope_dump_rows.csv");
        std::fs::write(&path, text).unwrap();
        let dump = read_dump_file(&path, &LoadControl::default()).unwrap();
        let (blocks, _, _) = pair(&dump);
        // Every other block shown.
        let shown: Vec<bool> = (0..blocks.len()).map(|i| i % 3 != 1).collect();
        for keep_addr in [false, true] {
            let mut strings = Interner::default();
            let unnamed = strings.intern("");
            let made = block_rows(&dump, &blocks, &shown, keep_addr, unnamed, &mut strings);
            let mut expected: Vec<&Block> = (blocks.iter().zip(&shown))
                .filter_map(|(b, &s)| s.then_some(b))
                .collect();
            expected.sort_by_key(|b| b.malloc().or(b.free()));
            let t = &made.table;
            assert_eq!(t.size.len(), expected.len());
            assert!(expected.len() > 2 * ROWS_A_PIECE);
            let mut orphans = 0;
            for (r, b) in expected.iter().enumerate() {
                let m = b.malloc().map(|i| &dump.mem[i]);
                let f = b.free().map(|i| &dump.mem[i]);
                let text_of = |id: NameId| strings.get(id).to_string();
                let (ts, used, total) = f.map_or((NULL, NULL, NULL), |f| (f.ts, f.used, f.total));
                let row = [
                    t.size[r],
                    t.alloc_time[r],
                    t.release_time[r],
                    t.duration[r],
                    t.alloc_total_allocated[r],
                    t.alloc_total_reserved[r],
                    t.release_total_allocated[r],
                    t.release_total_reserved[r],
                ];
                let Some(m) = m else {
                    orphans += 1;
                    let f = f.unwrap();
                    assert_eq!(
                        row,
                        [-f.size.abs(), NULL, ts, NULL, NULL, NULL, used, total]
                    );
                    assert_eq!(made.row_thread[r], u64::from(f.thread));
                    assert_eq!(
                        (made.row_python[r], made.owners[r], made.findings[r]),
                        (0, 0, 0)
                    );
                    assert_eq!(t.name[r], unnamed);
                    if keep_addr {
                        assert_eq!(made.row_addr[r], None);
                    }
                    continue;
                };
                let duration = if ts == NULL { NULL } else { ts - m.ts };
                let size = m.size.abs();
                assert_eq!(
                    row,
                    [size, m.ts, ts, duration, m.used, m.total, used, total]
                );
                assert_eq!(made.row_thread[r], u64::from(m.thread));
                assert_eq!(made.row_python[r], m.python);
                let owner = dump.texts.get(m.owner);
                assert_eq!(text_of(made.owners[r]), owner);
                let finding = dump.texts.get(dump.extras(m).inefficient);
                assert_eq!(text_of(made.findings[r]), finding);
                let pool = dump.texts.get(m.what);
                let name = match (owner, pool) {
                    ("", "" | "N/A") => String::new(),
                    ("", pool) => format!("{pool} block"),
                    (owner, _) => owner.to_string(),
                };
                assert_eq!(text_of(t.name[r]), name, "row {r}");
                if keep_addr {
                    assert_eq!(made.row_addr[r], m.addr());
                }
            }
            assert_eq!(made.orphans, orphans);
            assert!(orphans > 0);
            assert!(made.row_addr.len() == if keep_addr { t.size.len() } else { 0 });
        }
    }
}
