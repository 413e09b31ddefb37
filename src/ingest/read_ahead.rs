//! A reader that runs another reader on a thread of its own, a few chunks ahead: a gzipped
//! trace is inflated on one core while the other parses what came out (issue 47's pipeline).
//!
//! Hand-written rather than `thread_io`: that crate lends its reader to a closure on a scoped
//! thread, and the readers here are handed back, boxed, to code that keeps them.

use std::io::{self, Read};
use std::sync::mpsc::{Receiver, SyncSender, TryRecvError, sync_channel};

/// What the reading thread sends.
enum Chunk {
    /// Bytes: the buffer and how much of it was filled.
    Bytes(Vec<u8>, usize),
    /// The reader ended.
    End,
    /// The reader failed.
    Failed(io::Error),
}

/// Reads `inner` on a thread named `name`, `ahead` chunks of `chunk` bytes ahead of the
/// caller. Where no thread can be had, `inner` is read here, as it would be without this.
/// Dropping the reader stops the thread at its next chunk.
pub fn read_ahead<R: Read + Send + 'static>(
    inner: R,
    name: &str,
    chunk: usize,
    ahead: usize,
) -> Box<dyn Read + Send> {
    let chunk = chunk.max(1);
    let (full_tx, full_rx) = sync_channel::<Chunk>(ahead.max(1));
    let (empty_tx, empty_rx) = sync_channel::<Vec<u8>>(ahead.max(1) + 1);
    // The reader goes to the thread inside a slot, so that a failed spawn can give it back.
    let slot = std::sync::Arc::new(std::sync::Mutex::new(Some(inner)));
    let theirs = std::sync::Arc::clone(&slot);
    let spawned = std::thread::Builder::new()
        .name(name.into())
        .spawn(move || {
            let taken = theirs.lock().ok().and_then(|mut s| s.take());
            drop(theirs);
            if let Some(inner) = taken {
                fill(inner, chunk, &full_tx, &empty_rx);
            }
        });
    if spawned.is_err() {
        let inner = slot.lock().ok().and_then(|mut s| s.take());
        if let Some(inner) = inner {
            return Box::new(inner);
        }
    }
    Box::new(ReadAhead {
        full: full_rx,
        empty: empty_tx,
        current: Vec::new(),
        filled: 0,
        at: 0,
        ended: false,
    })
}

/// The thread's loop: fills chunks (reusing those handed back) and sends them on, until the
/// reader ends or fails or the caller is gone.
fn fill<R: Read>(mut inner: R, chunk: usize, full: &SyncSender<Chunk>, empty: &Receiver<Vec<u8>>) {
    loop {
        let mut buf = match empty.try_recv() {
            Ok(b) => b,
            Err(TryRecvError::Empty) => Vec::new(),
            Err(TryRecvError::Disconnected) => return,
        };
        if buf.len() < chunk {
            buf.resize(chunk, 0);
        }
        let sent = match super::part_pool::read_up_to(&mut inner, &mut buf[..chunk]) {
            Ok(0) => {
                let _ = full.send(Chunk::End);
                return;
            }
            Ok(n) => full.send(Chunk::Bytes(buf, n)),
            Err(e) => {
                let _ = full.send(Chunk::Failed(e));
                return;
            }
        };
        if sent.is_err() {
            return; // the caller dropped the reader
        }
    }
}

/// The caller's end of [`read_ahead`].
struct ReadAhead {
    full: Receiver<Chunk>,
    empty: SyncSender<Vec<u8>>,
    current: Vec<u8>,
    filled: usize,
    at: usize,
    ended: bool,
}

impl Read for ReadAhead {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        while self.at == self.filled {
            if self.ended || buf.is_empty() {
                return Ok(0);
            }
            match self.full.recv() {
                Ok(Chunk::Bytes(bytes, n)) => {
                    let used = std::mem::replace(&mut self.current, bytes);
                    if !used.is_empty() {
                        // Back to the thread; a full queue drops it instead.
                        let _ = self.empty.try_send(used);
                    }
                    self.filled = n;
                    self.at = 0;
                }
                Ok(Chunk::End) => self.ended = true,
                Ok(Chunk::Failed(e)) => {
                    self.ended = true;
                    return Err(e);
                }
                Err(_) => {
                    // The thread died before saying the reader ended.
                    self.ended = true;
                    return Err(io::Error::other("the reading thread stopped"));
                }
            }
        }
        let n = buf.len().min(self.filled - self.at);
        buf[..n].copy_from_slice(&self.current[self.at..self.at + n]);
        self.at += n;
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Gives out `data` a few bytes at a time, then fails if `fail` says so.
    struct Dribble {
        data: Vec<u8>,
        at: usize,
        fail: bool,
    }

    impl Read for Dribble {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            if self.at == self.data.len() {
                return if self.fail {
                    Err(io::Error::new(io::ErrorKind::InvalidData, "broken"))
                } else {
                    Ok(0)
                };
            }
            let n = buf.len().min(7).min(self.data.len() - self.at);
            buf[..n].copy_from_slice(&self.data[self.at..self.at + n]);
            self.at += n;
            Ok(n)
        }
    }

    fn data(n: usize) -> Vec<u8> {
        (0..n).map(|i| (i * 31 % 251) as u8).collect()
    }

    #[test]
    fn the_bytes_come_through_in_order_whatever_the_chunk() {
        for (len, chunk, ahead) in [(0, 4, 1), (1, 1, 1), (1000, 3, 2), (100_000, 4096, 4)] {
            let d = data(len);
            let r = Dribble {
                data: d.clone(),
                at: 0,
                fail: false,
            };
            let mut got = Vec::new();
            read_ahead(r, "test", chunk, ahead)
                .read_to_end(&mut got)
                .unwrap();
            assert_eq!(got, d, "len {len} chunk {chunk}");
        }
    }

    #[test]
    fn an_error_comes_after_the_bytes_read_before_it() {
        let d = data(10_000);
        let r = Dribble {
            data: d.clone(),
            at: 0,
            fail: true,
        };
        let mut reader = read_ahead(r, "test", 1000, 2);
        let mut got = Vec::new();
        let e = reader.read_to_end(&mut got).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidData);
        assert_eq!(got, d);
    }

    /// Endless input that says when the thread let go of it.
    struct Endless(std::sync::mpsc::Sender<()>);

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            buf.fill(1);
            Ok(buf.len())
        }
    }

    impl Drop for Endless {
        fn drop(&mut self) {
            let _ = self.0.send(());
        }
    }

    #[test]
    fn a_reader_dropped_early_stops_its_thread() {
        let (tx, rx) = std::sync::mpsc::channel();
        let mut reader = read_ahead(Endless(tx), "test", 64, 2);
        let mut some = [0u8; 100];
        reader.read_exact(&mut some).unwrap();
        assert!(some.iter().all(|&b| b == 1));
        assert!(rx.try_recv().is_err(), "still reading");
        drop(reader);
        // A liveness guard, not a timing: the thread lets go as soon as it sees the drop.
        let let_go = rx.recv_timeout(std::time::Duration::from_secs(60));
        assert!(
            let_go.is_ok(),
            "the thread kept reading after the reader was dropped"
        );
    }
}
