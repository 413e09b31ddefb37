//! One file read once for all the ranks discovery found in it. A PyTorch trace naming many
//! devices, or an msMemScope dump of many processes, is one file and many ranks; each rank's
//! load used to read the whole file again (a 2.2 MB trace of 3,000 devices took 26 s).
//!
//! Discovery gives each rank of such a file a clone of one [`SharedRead`] (in its
//! [`crate::model::Prefetch`]). The first load reads the file; the loads of the other ranks
//! take what it read. It is held only while ranks that have not taken it remain: the last
//! taker gets it alone (no copy), and it is dropped with the last rank of the file. Loads at
//! the same time (the rank on screen and the overview's) wait for one read, not two. A failed
//! or cancelled read keeps nothing: the next taker reads the file itself.

use std::sync::{Arc, Mutex};

/// A file's read, shared by the `takers` ranks of the file ([`Self::take_or_read`]).
pub struct SharedRead<T> {
    slot: Mutex<Slot<T>>,
}

struct Slot<T> {
    value: Option<Arc<T>>,
    /// Ranks that have not taken it yet.
    left: usize,
}

impl<T> SharedRead<T> {
    /// A read to be shared by `takers` ranks.
    pub fn new(takers: usize) -> Arc<Self> {
        Arc::new(Self {
            slot: Mutex::new(Slot {
                value: None,
                left: takers,
            }),
        })
    }

    /// A read already done (by discovery), to be shared by `takers` ranks.
    pub fn holding(value: T, takers: usize) -> Arc<Self> {
        Arc::new(Self {
            slot: Mutex::new(Slot {
                value: (takers > 0).then(|| Arc::new(value)),
                left: takers,
            }),
        })
    }

    /// What the file's first read gave, or the file read now by `read` (which the other ranks
    /// then take). Each rank calls this once; a rank's reload reads the file itself.
    pub fn take_or_read<E>(&self, read: impl FnOnce() -> Result<T, E>) -> Result<Arc<T>, E> {
        // A read that panicked (the job runner caught it) poisons nothing worth keeping.
        let mut slot = match self.slot.lock() {
            Ok(s) => s,
            Err(poisoned) => {
                let mut s = poisoned.into_inner();
                s.value = None;
                s
            }
        };
        slot.left = slot.left.saturating_sub(1);
        let value = match slot.value.clone() {
            Some(v) => v,
            None => Arc::new(read()?),
        };
        slot.value = (slot.left > 0).then(|| Arc::clone(&value));
        Ok(value)
    }

    /// True while a read is held for ranks still to take it (tests).
    pub fn is_held(&self) -> bool {
        self.slot.lock().is_ok_and(|s| s.value.is_some())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_file_is_read_once_and_let_go_after_the_last_taker() {
        let reads = Cell::new(0);
        let read = || -> Result<Vec<u8>, ()> {
            reads.set(reads.get() + 1);
            Ok(vec![1, 2, 3])
        };
        let shared = SharedRead::new(3);
        let a = shared.take_or_read(read).unwrap();
        assert!(shared.is_held());
        let b = shared.take_or_read(read).unwrap();
        drop((a, b));
        let c = shared.take_or_read(read).unwrap();
        assert_eq!(reads.get(), 1);
        assert!(!shared.is_held());
        // The last taker holds it alone: no copy needed to take it apart.
        assert_eq!(Arc::strong_count(&c), 1);
        // A reload past the takers reads again and keeps nothing.
        shared.take_or_read(read).unwrap();
        assert_eq!(reads.get(), 2);
        assert!(!shared.is_held());
    }

    #[test]
    fn a_read_held_from_the_start_is_not_read_again() {
        let shared = SharedRead::holding(5u8, 1);
        assert!(shared.is_held());
        let got = shared.take_or_read(|| Err::<u8, _>("read again")).unwrap();
        assert_eq!((*got, Arc::strong_count(&got)), (5, 1));
        assert!(!shared.is_held());
    }

    #[test]
    fn a_failed_read_keeps_nothing_and_the_next_taker_reads() {
        let shared = SharedRead::<u8>::new(2);
        assert_eq!(shared.take_or_read(|| Err("cancelled")), Err("cancelled"));
        assert!(!shared.is_held());
        assert_eq!(*shared.take_or_read(|| Ok::<_, ()>(7)).unwrap(), 7);
    }
}
