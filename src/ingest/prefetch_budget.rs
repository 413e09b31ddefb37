//! How much of what discovery read it may keep for the loads to take, in all: a PyTorch
//! trace's memory events ([`super::pytorch::trace`]), an msMemScope dump read whole
//! ([`super::msmemscope`]). A folder of big files is discovered past it without keeping
//! anything more; each load then reads its file itself, as it would without a prefetch.

use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes kept in all, at most.
const BUDGET: usize = 2 << 30;

/// Bytes kept now.
static USED: AtomicUsize = AtomicUsize::new(0);

/// Bytes counted against the budget until the reservation is dropped (with what it counts).
#[derive(Debug)]
pub struct Reservation {
    bytes: usize,
}

impl Reservation {
    /// `bytes` counted, when the budget has room for them.
    pub fn take(bytes: usize) -> Option<Reservation> {
        USED.fetch_update(Ordering::AcqRel, Ordering::Acquire, |used| {
            used.checked_add(bytes).filter(|&u| u <= BUDGET)
        })
        .ok()
        .map(|_| Reservation { bytes })
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        USED.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}

/// Bytes the budget has room for now.
pub fn room() -> usize {
    BUDGET.saturating_sub(USED.load(Ordering::Acquire))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (Other tests take and drop reservations at the same time, so `room()` is not compared
    /// across calls here.)
    #[test]
    fn nothing_past_the_budget_is_taken() {
        let r = Reservation::take(1000).expect("room for 1000 bytes");
        assert!(room() <= BUDGET - 1000, "a held reservation is counted");
        drop(r);
        assert!(Reservation::take(BUDGET + 1).is_none(), "past the budget");
        assert!(Reservation::take(usize::MAX).is_none(), "no overflow");
    }
}
