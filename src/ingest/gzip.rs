//! gzip input that keeps what is there: a trace whose gzip stream lacks its 8-byte trailer (a
//! copy cut short) or is followed by stray bytes (an append gone wrong) still holds all of its
//! data, and was refused whole. [`Tolerant`] ends the stream where the data ends instead, and
//! says so through its flag so that the load can warn.

use std::io::{self, BufRead, Read};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// A gunzipping reader that ends, rather than fails, when the stream breaks off after its data:
/// at a missing trailer or at bytes that are not another gzip member. A stream that breaks
/// before any data is an error as before.
pub struct Tolerant<R: BufRead> {
    inner: flate2::bufread::MultiGzDecoder<R>,
    produced: bool,
    ended: bool,
    cut: Arc<AtomicBool>,
}

impl<R: BufRead> Tolerant<R> {
    /// Gunzips `reader`; `cut` is set when the stream ended early.
    pub fn new(reader: R, cut: Arc<AtomicBool>) -> Tolerant<R> {
        Tolerant {
            inner: flate2::bufread::MultiGzDecoder::new(reader),
            produced: false,
            ended: false,
            cut,
        }
    }
}

impl<R: BufRead> Read for Tolerant<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.ended {
            return Ok(0);
        }
        match self.inner.read(buf) {
            Ok(n) => {
                self.produced |= n > 0;
                Ok(n)
            }
            Err(e)
                if self.produced
                    && matches!(
                        e.kind(),
                        io::ErrorKind::UnexpectedEof
                            | io::ErrorKind::InvalidInput
                            | io::ErrorKind::InvalidData
                    ) =>
            {
                self.ended = true;
                self.cut.store(true, Ordering::Relaxed);
                Ok(0)
            }
            Err(e) => Err(e),
        }
    }
}

/// Bytes inflated ahead of the caller, in chunks of this size.
const AHEAD_CHUNK: usize = 1 << 20;
/// Chunks inflated ahead of the caller.
const AHEAD: usize = 4;

/// The gunzipped bytes of `file` ([`Tolerant`]: `cut` is set when the stream ended early),
/// inflated on a thread of their own a few MiB ahead of the caller, so that a parse and the
/// inflating share two cores ([`super::read_ahead`]).
pub fn inflate_ahead(file: std::fs::File, cut: Arc<AtomicBool>) -> Box<dyn Read + Send> {
    let gunzip = Tolerant::new(io::BufReader::with_capacity(256 << 10, file), cut);
    super::read_ahead::read_ahead(gunzip, "gunzip", AHEAD_CHUNK, AHEAD)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn gz(data: &[u8]) -> Vec<u8> {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(data).unwrap();
        e.finish().unwrap()
    }

    fn read_all(bytes: &[u8]) -> (io::Result<Vec<u8>>, bool) {
        let cut = Arc::new(AtomicBool::new(false));
        let mut out = Vec::new();
        let r = Tolerant::new(bytes, Arc::clone(&cut)).read_to_end(&mut out);
        (r.map(|_| out), cut.load(Ordering::Relaxed))
    }

    #[test]
    fn all_the_data_is_read_without_its_trailer_or_with_stray_bytes_after() {
        let data: Vec<u8> = (0..200_000u32)
            .flat_map(|i| (i % 251).to_le_bytes())
            .collect();
        let whole = gz(&data);
        let (got, cut) = read_all(&whole);
        assert_eq!(got.unwrap(), data);
        assert!(!cut, "a sound file is not said to be cut");
        let (got, cut) = read_all(&whole[..whole.len() - 8]);
        assert_eq!(got.unwrap(), data, "no trailer");
        assert!(cut);
        let mut stray = whole.clone();
        stray.extend_from_slice(b"garbage after the member");
        let (got, cut) = read_all(&stray);
        assert_eq!(got.unwrap(), data, "stray bytes after");
        assert!(cut);
        // Two members are one stream, as before.
        let mut two = whole.clone();
        two.extend_from_slice(&gz(b"tail"));
        let (got, cut) = read_all(&two);
        assert_eq!(&got.unwrap()[data.len()..], b"tail");
        assert!(!cut);
        // Not gzip at all: an error, not an empty file.
        assert!(read_all(b"not gzip at all").0.is_err());
    }
}
