//! Active memory over events, as PyTorch's memory_viz draws it: every allocation a band whose
//! height is its size, stacked in the order the allocations were made. When a band is freed it
//! ends, and every band above it steps down by its size. The largest allocations get bands of
//! their own; the rest are summed into one band on top, so the drawing stays bounded however
//! long the trace is.
//!
//! The x axis is the event index: the state just after event `k` holds on `[k, k + 1)`, the
//! state before the first event on `[-1, 0)` (the same convention as the allocated curve).

use rustc_hash::FxHashMap;

use super::model::{Action, AllocatorSnapshot, Event, StackId};
use super::segments::BlockKind;

/// One allocation's life: from the event that made it (None: before the trace) to the one that
/// freed it (None: still held at the end).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// Device address.
    pub addr: u64,
    /// Bytes.
    pub size: i64,
    /// Where it was allocated (for one held before the trace and freed in it: where it was
    /// freed; for one held throughout: the block's own stack).
    pub stack: StackId,
    /// The `alloc` event.
    pub allocated_at: Option<usize>,
    /// The `free_completed` event.
    pub freed_at: Option<usize>,
}

/// A stretch of one band at one height: x from `from` to `to` (event indices, see the module
/// doc), bottom at `offset` bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Piece {
    /// Into [`Timeline::allocations`].
    pub allocation: u32,
    /// First x.
    pub from: i64,
    /// End x (exclusive).
    pub to: i64,
    /// Bottom of the band, bytes.
    pub offset: i64,
}

/// The bands of one device's trace.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    /// Every allocation of the trace, and those held before it.
    pub allocations: Vec<Allocation>,
    /// The pieces of the allocations drawn as bands of their own, grouped by allocation, each
    /// allocation's in x order.
    pub pieces: Vec<Piece>,
    /// How many allocations have bands of their own (the largest ones).
    pub banded: usize,
    /// The top of the banded allocations after each x (`-1, 0, 1, …`): where the summed band
    /// starts.
    pub banded_top: Vec<i64>,
    /// All held bytes after each x: the top of the summed band.
    pub total: Vec<i64>,
    /// How many allocations are summed into the top band after each x.
    pub summed_count: Vec<u32>,
}

impl Timeline {
    /// The last x (exclusive): the trace's length.
    pub fn end(&self) -> i64 {
        self.total.len() as i64 - 1
    }

    /// Index into the per-x vectors for `x` (clamped to the trace).
    pub fn slot(&self, x: i64) -> usize {
        let last = self.total.len().saturating_sub(1) as i64;
        (x.saturating_add(1)).clamp(0, last.max(0)) as usize
    }

    /// The banded allocation under (`x`, `bytes`), if any: the piece covering that point.
    pub fn allocation_at(&self, x: i64, bytes: i64) -> Option<usize> {
        self.pieces
            .iter()
            .find(|p| {
                p.from <= x
                    && x < p.to
                    && p.offset <= bytes
                    && bytes
                        < p.offset
                            .saturating_add(self.allocations[p.allocation as usize].size)
            })
            .map(|p| p.allocation as usize)
    }
}

/// The allocations of `trace`, with the blocks `held_at_end` (address → (size, stack)) that no
/// event of the trace allocated: held before it, and still at the end.
fn allocations(trace: &[Event], held_at_end: &[(u64, i64, StackId)]) -> Vec<Allocation> {
    let mut out: Vec<Allocation> = Vec::new();
    let mut open: FxHashMap<u64, usize> = FxHashMap::default();
    let mut before: Vec<Allocation> = Vec::new();
    for (k, e) in trace.iter().enumerate() {
        match e.action {
            Action::Alloc => {
                if let Some(old) = open.insert(e.addr, out.len()) {
                    // Allocated twice without a free between: the trace lost the free.
                    out[old].freed_at = Some(k);
                }
                out.push(Allocation {
                    addr: e.addr,
                    size: e.size.max(0),
                    stack: e.stack,
                    allocated_at: Some(k),
                    freed_at: None,
                });
            }
            Action::FreeCompleted => match open.remove(&e.addr) {
                Some(i) => out[i].freed_at = Some(k),
                None => before.push(Allocation {
                    addr: e.addr,
                    size: e.size.max(0),
                    stack: e.stack,
                    allocated_at: None,
                    freed_at: Some(k),
                }),
            },
            _ => {}
        }
    }
    // Held throughout first (the bottom of the stack: they never move), then those held before
    // the trace and freed in it, then the trace's own.
    let mut all: Vec<Allocation> = held_at_end
        .iter()
        .filter(|(addr, _, _)| !open.contains_key(addr))
        .map(|&(addr, size, stack)| Allocation {
            addr,
            size: size.max(0),
            stack,
            allocated_at: None,
            freed_at: None,
        })
        .collect();
    all.extend(before);
    all.extend(out);
    all
}

/// Blocks held at the end of the snapshot on `device` (allocated or pending free), by address.
fn held_at_end(s: &AllocatorSnapshot, device: i64) -> Vec<(u64, i64, StackId)> {
    let mut v: Vec<(u64, i64, StackId)> = s
        .segments
        .iter()
        .filter(|g| g.device == device)
        .flat_map(|g| &g.blocks)
        .filter(|b| BlockKind::of(&b.state) != BlockKind::Free)
        .map(|b| (b.address, b.size, b.stack))
        .collect();
    v.sort_unstable_by_key(|b| b.0);
    v
}

/// The bands of `device`: at most `max_bands` allocations (the largest) get their own, and
/// fewer if their pieces would pass `max_pieces` (the drawing's budget).
pub fn timeline(
    s: &AllocatorSnapshot,
    device: i64,
    max_bands: usize,
    max_pieces: usize,
) -> Timeline {
    let trace = usize::try_from(device)
        .ok()
        .and_then(|d| s.traces.get(d))
        .map_or(&[][..], Vec::as_slice);
    let allocations = allocations(trace, &held_at_end(s, device));
    let mut by_size: Vec<u32> = (0..allocations.len() as u32).collect();
    by_size.sort_by(|&a, &b| {
        allocations[b as usize]
            .size
            .cmp(&allocations[a as usize].size)
            .then(a.cmp(&b))
    });
    let links = EventLinks::new(trace.len(), &allocations);
    let mut bands = max_bands.min(allocations.len());
    loop {
        let mut banded = vec![false; allocations.len()];
        for &i in &by_size[..bands] {
            banded[i as usize] = true;
        }
        if let Some(t) = stack_up(&links, &allocations, &banded, max_pieces) {
            return Timeline {
                allocations,
                banded: bands,
                ..t
            };
        }
        bands /= 2;
    }
}

/// What each event does to the allocations: the one it starts and the one it ends
/// ([`NO_ALLOCATION`] for none). An event is one action, so at most one of each (an `alloc` at
/// an address still held ends the old allocation and starts the new one).
struct EventLinks {
    starts: Vec<u32>,
    ends: Vec<u32>,
}

/// No allocation, in [`EventLinks`].
const NO_ALLOCATION: u32 = u32::MAX;

impl EventLinks {
    fn new(events: usize, allocations: &[Allocation]) -> EventLinks {
        let mut links = EventLinks {
            starts: vec![NO_ALLOCATION; events],
            ends: vec![NO_ALLOCATION; events],
        };
        for (i, a) in allocations.iter().enumerate() {
            let i = u32::try_from(i).unwrap_or(NO_ALLOCATION);
            if let Some(slot) = a.allocated_at.and_then(|k| links.starts.get_mut(k)) {
                *slot = i;
            }
            if let Some(slot) = a.freed_at.and_then(|k| links.ends.get_mut(k)) {
                *slot = i;
            }
        }
        links
    }
}

/// Stacks the allocations over the trace; None when the banded ones would make more than
/// `max_pieces` pieces (never when none is banded).
fn stack_up(
    links: &EventLinks,
    allocations: &[Allocation],
    banded: &[bool],
    max_pieces: usize,
) -> Option<Timeline> {
    let events = links.starts.len();
    let mut pieces: Vec<Piece> = Vec::new();
    // The banded allocations held now, bottom first, each with its open piece (from, offset).
    let mut stack: Vec<(u32, i64, i64)> = Vec::new();
    let (mut banded_top, mut summed, mut summed_n) = (0i64, 0i64, 0u32);
    for (i, a) in allocations.iter().enumerate() {
        if a.allocated_at.is_none() {
            if banded[i] {
                stack.push((i as u32, -1, banded_top));
                banded_top = banded_top.saturating_add(a.size);
            } else {
                summed = summed.saturating_add(a.size);
                summed_n += 1;
            }
        }
    }
    let mut out = Timeline {
        banded_top: Vec::with_capacity(events + 1),
        total: Vec::with_capacity(events + 1),
        summed_count: Vec::with_capacity(events + 1),
        ..Default::default()
    };
    let record = |out: &mut Timeline, top: i64, summed: i64, n: u32| {
        out.banded_top.push(top);
        out.total.push(top.saturating_add(summed));
        out.summed_count.push(n);
    };
    record(&mut out, banded_top, summed, summed_n);
    for k in 0..events {
        let x = k as i64;
        if let Some(&i) = links.starts.get(k).filter(|&&i| i != NO_ALLOCATION) {
            let a = &allocations[i as usize];
            if banded[i as usize] {
                stack.push((i, x, banded_top));
                banded_top = banded_top.saturating_add(a.size);
            } else {
                summed = summed.saturating_add(a.size);
                summed_n += 1;
            }
        }
        if let Some(&i) = links.ends.get(k).filter(|&&i| i != NO_ALLOCATION) {
            let a = &allocations[i as usize];
            if banded[i as usize] {
                if let Some(pos) = stack.iter().rposition(|s| s.0 == i) {
                    let (_, from, offset) = stack.remove(pos);
                    pieces.push(Piece {
                        allocation: i,
                        from,
                        to: x,
                        offset,
                    });
                    for s in &mut stack[pos..] {
                        pieces.push(Piece {
                            allocation: s.0,
                            from: s.1,
                            to: x,
                            offset: s.2,
                        });
                        s.1 = x;
                        s.2 = s.2.saturating_sub(a.size);
                    }
                    banded_top = banded_top.saturating_sub(a.size);
                }
                if pieces.len() > max_pieces {
                    return None;
                }
            } else {
                summed = summed.saturating_sub(a.size);
                summed_n = summed_n.saturating_sub(1);
            }
        }
        record(&mut out, banded_top, summed, summed_n);
    }
    let end = events as i64;
    for (i, from, offset) in stack {
        pieces.push(Piece {
            allocation: i,
            from,
            to: end,
            offset,
        });
    }
    pieces.sort_unstable_by_key(|p| (p.allocation, p.from));
    out.pieces = pieces;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(action: Action, addr: u64, size: i64) -> Event {
        Event::bare(action, addr, size)
    }

    #[test]
    fn a_freed_band_lets_the_ones_above_step_down() {
        use Action::{Alloc, FreeCompleted as Free};
        let trace = vec![
            ev(Alloc, 1, 10),
            ev(Alloc, 2, 20),
            ev(Alloc, 3, 5),
            ev(Free, 1, 10),
            ev(Free, 9, 7), // held before the trace
        ];
        let allocs = allocations(&trace, &[(2, 20, 0), (3, 5, 0), (50, 1, 0)]);
        // Held throughout (50), held before (9), then the trace's own.
        assert_eq!(
            allocs.iter().map(|a| a.addr).collect::<Vec<_>>(),
            vec![50, 9, 1, 2, 3]
        );
        let links = EventLinks::new(trace.len(), &allocs);
        let mut t = stack_up(&links, &allocs, &[false, true, true, true, true], 100).unwrap();
        t.allocations = allocs;
        // x = -1..4: summed is the 1-byte block throughout.
        assert_eq!(t.total, vec![8, 18, 38, 43, 33, 26]);
        assert_eq!(t.banded_top, vec![7, 17, 37, 42, 32, 25]);
        assert_eq!(t.summed_count, vec![1; 6]);
        // Block 2 (index 3) sits on 9 and 1 until 1 is freed at x = 3, then on 9 alone until 9
        // is freed at x = 4, then on the floor.
        let of = |i: u32| {
            t.pieces
                .iter()
                .filter(|p| p.allocation == i)
                .map(|p| (p.from, p.to, p.offset))
                .collect::<Vec<_>>()
        };
        assert_eq!(of(3), vec![(1, 3, 17), (3, 4, 7), (4, 5, 0)]);
        assert_eq!(of(1), vec![(-1, 4, 0)]);
        assert_eq!(of(2), vec![(0, 3, 7)]);
        assert_eq!(t.allocation_at(2, 20), Some(3));
        assert_eq!(t.allocation_at(4, 20), Some(4));
        assert_eq!(t.allocation_at(4, 25), None);
        assert_eq!(t.allocation_at(4, 8), Some(3));
    }

    #[test]
    fn too_many_pieces_give_fewer_bands() {
        // 200 allocations, freed oldest first: every free moves every band above it.
        let mut trace = Vec::new();
        for i in 0..200u64 {
            trace.push(ev(Action::Alloc, i, 100 + i as i64));
        }
        for i in 0..200u64 {
            trace.push(ev(Action::FreeCompleted, i, 100 + i as i64));
        }
        let s = AllocatorSnapshot {
            traces: vec![trace],
            stacks: vec![Vec::new()],
            ..Default::default()
        };
        let all = timeline(&s, 0, 1000, usize::MAX);
        assert_eq!(all.banded, 200);
        assert_eq!(all.pieces.len(), 200 * 201 / 2);
        let few = timeline(&s, 0, 1000, 5_000);
        assert!(
            few.banded < 200 && few.pieces.len() <= 5_000,
            "{}",
            few.banded
        );
        // Whatever is banded, the totals are the same.
        assert_eq!(few.total, all.total);
        assert_eq!(*few.total.iter().max().unwrap(), (100..300).sum::<i64>());
    }
}
