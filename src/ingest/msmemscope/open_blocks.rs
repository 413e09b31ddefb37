//! The blocks of a dump still open (allocated, not yet freed) while its MALLOCs and FREEs are
//! paired, by the key a FREE names its MALLOC with.
//!
//! msMemScope numbers a process's allocations `1, 2, 3, …` (`allocation_id`): those keys are
//! kept in a list per process, indexed by the id, instead of a hash map (its inserts and
//! removes were most of the pairing of a 1 GB dump's 1.9M events). Ids far past what the
//! dump's events could number, negative ones and address keys go to a map as before; a key
//! always goes to the same one of the two, so either finds what the other would.

use rustc_hash::FxHashMap;

/// How a block is told apart from the others of its process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum BlockKey {
    /// (Process, `allocation_id`).
    Id(i64, i64),
    /// (Process, pool, address).
    Addr(i64, u32, u64),
}

/// A slot of the lists that holds no block.
const NONE: u32 = u32::MAX;

/// The open blocks (each an index into the blocks being paired) by key.
pub(super) struct OpenBlocks {
    /// Each process's list of blocks by allocation id ([`NONE`] for none), with its index
    /// in `lists` found by process.
    lists: Vec<Vec<u32>>,
    list_of: FxHashMap<i64, usize>,
    /// The last process looked up, and its list (most events are the one before's).
    last: Option<(i64, usize)>,
    /// How many slots the lists may hold in all (a hostile dump's ids cannot make them
    /// bigger than its events could need), and how many they hold.
    cap: usize,
    slots: usize,
    /// The other keys.
    map: FxHashMap<BlockKey, u32>,
}

impl OpenBlocks {
    /// For a dump of `events` MALLOCs and FREEs.
    pub(super) fn new(events: usize) -> Self {
        OpenBlocks {
            lists: Vec::new(),
            list_of: FxHashMap::default(),
            last: None,
            cap: events.saturating_mul(2).saturating_add(1024),
            slots: 0,
            map: FxHashMap::default(),
        }
    }

    /// Opens block `block` (not [`u32::MAX`]) at `key`; true when the key held an open block
    /// (which is no longer found by it).
    pub(super) fn open(&mut self, key: BlockKey, block: u32) -> bool {
        match self.slot(key) {
            Some(slot) => std::mem::replace(slot, block) != NONE,
            None => self.map.insert(key, block).is_some(),
        }
    }

    /// The open block at `key`, closed.
    pub(super) fn close(&mut self, key: BlockKey) -> Option<u32> {
        match self.slot(key) {
            Some(slot) => Some(std::mem::replace(slot, NONE)).filter(|&b| b != NONE),
            None => self.map.remove(&key),
        }
    }

    /// The list slot of `key`: an allocation id below the cap, while the lists have room
    /// for it (once a process's list could not grow to an id, it never grows past it: the
    /// slots only add up, so that key stays in the map).
    fn slot(&mut self, key: BlockKey) -> Option<&mut u32> {
        let BlockKey::Id(pid, id) = key else {
            return None;
        };
        let id = usize::try_from(id).ok().filter(|&id| id < self.cap)?;
        let list = match self.last {
            Some((p, k)) if p == pid => k,
            _ => {
                let next = self.lists.len();
                let k = *self.list_of.entry(pid).or_insert(next);
                if k == next {
                    self.lists.push(Vec::new());
                }
                self.last = Some((pid, k));
                k
            }
        };
        let cells = &mut self.lists[list];
        if id >= cells.len() {
            // Room for ids up to twice this one (fewer regrowths), within the cap.
            let grow = id + 1 - cells.len();
            if self.slots.saturating_add(grow) > self.cap {
                return None;
            }
            let room = (id.saturating_mul(2).saturating_add(1) - cells.len())
                .min(self.cap - self.slots)
                .max(grow);
            cells.resize(cells.len() + room, NONE);
            self.slots += room;
        }
        cells.get_mut(id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// An open or a close of a key, as a pairing makes them.
    #[derive(Debug, Clone)]
    enum Step {
        Open(BlockKey),
        Close(BlockKey),
    }

    fn key() -> impl Strategy<Value = BlockKey> {
        prop_oneof![
            // Few processes, small ids (lists), and ids past the cap or negative (the map).
            (0i64..3, 0i64..40).prop_map(|(p, id)| BlockKey::Id(p, id)),
            (
                0i64..3,
                prop_oneof![Just(-1i64), 1_000i64..1_010, Just(i64::MAX)]
            )
                .prop_map(|(p, id)| BlockKey::Id(p, id)),
            (0i64..3, 0u32..2, 0u64..8).prop_map(|(p, pool, a)| BlockKey::Addr(p, pool, a)),
        ]
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![key().prop_map(Step::Open), key().prop_map(Step::Close)]
    }

    proptest! {
        /// The lists and the map find what one hash map of every key finds, for any opens and
        /// closes, whatever the cap (a small one sends ids to the map part of the way).
        #[test]
        fn open_blocks_find_what_a_map_finds(
            steps in proptest::collection::vec(step(), 0..300),
            events in 0usize..600,
        ) {
            let mut open = OpenBlocks::new(events);
            // The cap as the test wants it: from none up to room for every id.
            open.cap = events / 4;
            let mut reference: FxHashMap<BlockKey, u32> = FxHashMap::default();
            for (block, step) in steps.into_iter().enumerate() {
                let block = block as u32;
                match step {
                    Step::Open(k) => {
                        prop_assert_eq!(open.open(k, block), reference.insert(k, block).is_some());
                    }
                    Step::Close(k) => prop_assert_eq!(open.close(k), reference.remove(&k)),
                }
                prop_assert!(open.slots <= open.cap);
            }
        }
    }

    /// msMemScope's ids, 1 up, go to the lists (nothing to the map), and a process's list is
    /// found again after another process's events.
    #[test]
    fn allocation_ids_are_kept_in_lists() {
        let mut open = OpenBlocks::new(1000);
        for id in 1..400i64 {
            assert!(!open.open(BlockKey::Id(7, id), id as u32));
            assert!(!open.open(BlockKey::Id(8, id), 1000 + id as u32));
        }
        assert!(open.map.is_empty());
        assert_eq!(open.lists.len(), 2);
        assert_eq!(open.close(BlockKey::Id(7, 5)), Some(5));
        assert_eq!(open.close(BlockKey::Id(7, 5)), None);
        assert_eq!(open.close(BlockKey::Id(8, 5)), Some(1005));
        assert!(open.slots <= open.cap);
    }
}
