//! Work on the parts of a file, on every core: the parts are handed out one at a time to a
//! few scoped threads (the work may crowd one end of a file), and the answers come back in
//! part order. The memory scan ([`super::pytorch::memory_scan`]) and the whole read of a trace
//! ([`super::trace_parts`]) share it.

use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads at most.
const MAX_WORKERS: usize = 8;

/// `each(i)` for every part `i` in `0..parts`, on up to as many threads as there are cores
/// (`name`d so), in part order. A thread stops at its first error; then the answers stop short
/// of `parts` (the error is among them), as they do when a thread died.
pub fn each_part<T: Send, E: Send>(
    parts: usize,
    name: &str,
    each: &(dyn Fn(usize) -> Result<T, E> + Sync),
) -> Vec<Result<T, E>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    let next = AtomicUsize::new(0);
    let done: Mutex<Vec<(usize, Result<T, E>)>> = Mutex::default();
    let work = || {
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            if i >= parts {
                break;
            }
            let r = each(i);
            let failed = r.is_err();
            if let Ok(mut d) = done.lock() {
                d.push((i, r));
            }
            if failed {
                break;
            }
        }
    };
    std::thread::scope(|s| {
        let spawned = (0..parts.min(cores).min(MAX_WORKERS))
            .filter(|_| {
                std::thread::Builder::new()
                    .name(name.into())
                    .spawn_scoped(s, work)
                    .is_ok()
            })
            .count();
        // No thread to be had: this one does the work.
        if spawned == 0 {
            work();
        }
    });
    let mut done = done.into_inner().unwrap_or_default();
    done.sort_by_key(|(i, _)| *i);
    done.into_iter().map(|(_, r)| r).collect()
}

/// Fills `buf` as far as the reader goes; how many bytes it read.
pub fn read_up_to(r: &mut impl std::io::Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut n = 0;
    while n < buf.len() {
        match r.read(&mut buf[n..]) {
            Ok(0) => break,
            Ok(k) => n += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(n)
}
