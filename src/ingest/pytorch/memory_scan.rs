//! The first look at a PyTorch profiler trace: its `[memory]` events found by a byte search for
//! `"[memory]"` instead of by reading every event, in parallel over parts of a plain file (a
//! gzipped one is one stream). The curves and blocks are drawn from them while the whole read
//! ([`crate::ingest::trace_view`]) names the blocks.
//!
//! A hit is read as the smallest object around it that contains it (found by looking back for
//! a `{` and matching braces forward, strings skipped), parsed by the same
//! [`parse_memory_event`] as the whole read. When that cannot be done with certainty (no `{`
//! close enough, an object that does not parse, one that runs on for too long) the hit is
//! counted [`MemoryScan::unsure`], and the caller reads the memory events the slow way: the
//! first look is only ever a faster route to the same events. One known difference: an object
//! named `[memory]` nested inside another event's arguments would be read as an event here and
//! not by the whole read; no writer nests events.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use memchr::memmem;

pub use super::memory_event::quick_fields;
use super::memory_event::{Template, quick_object};
use crate::ingest::chunks::LoadControl;
use crate::ingest::trace_view::{
    BLOCK, MemoryEvent, UnreadableEvent, memory_event_from, parse_memory_event,
};

/// What the search is for: a JSON string that is exactly `[memory]` (the events' name).
const NEEDLE: &[u8] = b"\"[memory]\"";
/// Where a JSON string holds an escape: a `[memory]` name written with one (`"\u005bmemory]"`)
/// is not found by [`NEEDLE`], so it makes the scan unsure ([`escaped_memory_name`]).
const ESCAPE: &[u8] = b"\\u";
/// The longest JSON text of the string `[memory]`: eight `\uXXXX` escapes and two quotes.
const LONGEST_NAME: usize = 8 * 6 + 2;
/// How far before a hit its event's `{` may be.
const BACK: usize = 4 << 10;
/// How long a memory event may be (real ones are about 250 bytes).
const MAX_OBJECT: usize = 64 << 10;
/// A plain file is scanned in parts of this many bytes, by as many threads as there are cores.
pub const PART: u64 = 64 << 20;

/// The memory events a scan found, in file order.
#[derive(Debug, Default)]
pub struct MemoryScan {
    /// The events kept (those `keep` accepted), in file order.
    pub events: Vec<MemoryEvent>,
    /// Hits that could not be read with certainty: when non-zero, read the events the slow way.
    pub unsure: u64,
}

/// Why a scan stopped.
#[derive(Debug, thiserror::Error)]
pub enum ScanError {
    /// The file could not be read.
    #[error("{0}")]
    Io(std::io::Error),
    /// The user cancelled.
    #[error("cancelled")]
    Cancelled,
}

/// Scans the trace at `path` (gunzipped as read when `gzip`), keeping the events `keep` accepts.
/// A plain file is scanned in parts by as many threads as there are cores ([`in_parts`]); the
/// events come back in file order.
pub fn scan_file(
    path: &Path,
    gzip: bool,
    keep: &(dyn Fn(&MemoryEvent) -> bool + Sync),
    control: &LoadControl,
) -> Result<MemoryScan, ScanError> {
    scan_file_in_parts(path, gzip, PART, keep, control)
}

/// [`scan_file`] in parts of `part` bytes (tests cut small files into many).
pub fn scan_file_in_parts(
    path: &Path,
    gzip: bool,
    part: u64,
    keep: &(dyn Fn(&MemoryEvent) -> bool + Sync),
    control: &LoadControl,
) -> Result<MemoryScan, ScanError> {
    let (parts, unsure) = scan_file_parts(path, gzip, part, keep, control)?;
    Ok(MemoryScan {
        events: concat(parts),
        unsure,
    })
}

/// [`scan_file_in_parts`] with each part's events apart, in file order, and the count of
/// hits not read with certainty: for a caller that looks at them before it needs them in one
/// `Vec` ([`concat()`]). The file's bytes are told to `control`'s progress as each part is
/// scanned (a gzipped file's at its end).
pub fn scan_file_parts(
    path: &Path,
    gzip: bool,
    part: u64,
    keep: &(dyn Fn(&MemoryEvent) -> bool + Sync),
    control: &LoadControl,
) -> Result<(Vec<Vec<MemoryEvent>>, u64), ScanError> {
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    control.add_total(len);
    let parts = in_parts_of(path, gzip, part, &|reader, origin, range| {
        let scan = scan_stream(reader, origin, range.clone(), keep, control)?;
        // The bytes this part answers for (a part reads a little past both its ends).
        control.add_done(range.end.min(len).saturating_sub(range.start));
        Ok(scan)
    })?;
    let unsure = parts.iter().map(|p| p.unsure).sum();
    Ok((parts.into_iter().map(|p| p.events).collect(), unsure))
}

/// The events of `parts` in one allocation (growing one part by part copied them again and
/// faulted fresh pages in each time), filled on every core: most of the time is the kernel
/// handing out those pages.
pub fn concat(mut parts: Vec<Vec<MemoryEvent>>) -> Vec<MemoryEvent> {
    use rayon::prelude::*;
    if parts.len() <= 1 {
        return parts.pop().unwrap_or_default();
    }
    let mut starts = Vec::with_capacity(parts.len());
    let mut total = 0usize;
    for p in &parts {
        starts.push(total);
        total += p.len();
    }
    let mut events = Vec::with_capacity(total);
    events.par_extend((0..total).into_par_iter().map(|k| {
        // The last part starting at or before `k` (an empty part starts where the next does).
        let p = starts.partition_point(|&s| s <= k).saturating_sub(1);
        parts[p][k - starts[p]]
    }));
    events
}

/// A reader of part of a file.
pub type PartReader = Box<dyn Read + Send>;

/// Runs `each` over the parts of the file at `path` ([`in_parts_of`] with parts of 64 MiB).
pub fn in_parts<T: Send>(
    path: &Path,
    gzip: bool,
    each: &(dyn Fn(PartReader, u64, std::ops::Range<u64>) -> Result<T, ScanError> + Sync),
) -> Result<Vec<T>, ScanError> {
    in_parts_of(path, gzip, PART, each)
}

/// Runs `each` over the parts of `part` bytes of the file at `path`, on as many threads as
/// there are cores, and returns its answers in file order. Each call gets a reader, the file offset of its first
/// byte, and the offsets it answers for: the reader starts 4 KiB before them and ends 64 KiB
/// after, so an object around an offset of the range is read whole. A
/// gzipped file (`gzip`) is one part, read from its start.
pub fn in_parts_of<T: Send>(
    path: &Path,
    gzip: bool,
    part: u64,
    each: &(dyn Fn(PartReader, u64, std::ops::Range<u64>) -> Result<T, ScanError> + Sync),
) -> Result<Vec<T>, ScanError> {
    let part = part.max(1);
    let file = crate::ingest::safe_fs::open_regular(path).map_err(ScanError::Io)?;
    if gzip {
        // To the end of its data when the stream breaks off after it (the load says so).
        let reader = crate::ingest::gzip::inflate_ahead(file, Default::default());
        return Ok(vec![each(reader, 0, 0..u64::MAX)?]);
    }
    let len = file.metadata().map_err(ScanError::Io)?.len();
    let parts = len.div_ceil(part).max(1);
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get) as u64;
    let workers = parts.min(cores).min(8);
    if workers == 1 {
        return Ok(vec![each(Box::new(file), 0, 0..u64::MAX)?]);
    }
    // Parts handed out one at a time: memory events may crowd one end of a file.
    let parts = usize::try_from(parts).unwrap_or(usize::MAX);
    let done = crate::ingest::part_pool::each_part(parts, "memory_scan", &|i| {
        let lo = i as u64 * part;
        let hi = if i + 1 == parts { u64::MAX } else { lo + part };
        open_part(path, lo, hi).and_then(|(r, start)| each(r, start, lo..hi))
    });
    if done.len() != parts {
        // A part failed (its error is among them) or a thread died.
        return Err(done
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_else(|| ScanError::Io(std::io::Error::other("scan thread failed"))));
    }
    done.into_iter().collect()
}

/// A reader of the bytes around offsets `lo..hi` of a plain file, and the offset it starts at.
fn open_part(path: &Path, lo: u64, hi: u64) -> Result<(PartReader, u64), ScanError> {
    let mut file = crate::ingest::safe_fs::open_regular(path).map_err(ScanError::Io)?;
    let start = lo.saturating_sub(BACK as u64);
    file.seek(SeekFrom::Start(start)).map_err(ScanError::Io)?;
    let until = hi.saturating_add(MAX_OBJECT as u64);
    Ok((Box::new(file.take(until - start)), start))
}

/// Where the object around a hit is.
enum Located {
    /// `buf[start..=end]`.
    Object(usize, usize),
    /// Not an event's name: a second mention inside an object whose first one is read.
    Skip,
    /// Its end is past what was read: read more.
    NeedMore,
    /// It cannot be told with certainty.
    Unsure,
}

/// Scans `reader`, whose first byte is at file offset `origin`, for the hits at offsets in
/// `range`.
pub fn scan_stream(
    mut reader: impl Read,
    origin: u64,
    range: std::ops::Range<u64>,
    keep: &(dyn Fn(&MemoryEvent) -> bool + Sync),
    control: &LoadControl,
) -> Result<MemoryScan, ScanError> {
    let finder = memmem::Finder::new(NEEDLE);
    let escapes = memmem::Finder::new(ESCAPE);
    // Where the search for escaped names resumes in `buf`.
    let mut escapes_from = 0usize;
    let mut out = MemoryScan::default();
    // The bytes read and not yet dropped are `buf[..len]`: blocks are read straight into the
    // room after them (no copy through a second buffer), and what is dropped from the front is
    // at most a few KiB moved down. The thread's buffer of its last part is used again: a new
    // one for every part was zeroed page by page (a third of the scan's system time).
    let mut buf: Vec<u8> = PART_BUFFER.with(|b| b.take());
    let mut len = 0usize;
    // The layouts of the memory events read so far (PyTorch writes one per trace).
    let mut templates: Vec<Template> = Vec::new();
    // Offset of buf[0] in the file, and where in buf the search resumes.
    let (mut base, mut from) = (origin, 0usize);
    loop {
        if control.is_cancelled() {
            return Err(ScanError::Cancelled);
        }
        if buf.len() - len < BLOCK {
            buf.resize(len + BLOCK, 0);
        }
        let n = loop {
            match reader.read(&mut buf[len..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(ScanError::Io(e)),
            }
        };
        len += n;
        let last = n == 0;
        let bytes = &buf[..len];
        // A `[memory]` name written with escapes: only the whole read can read its event.
        loop {
            #[cfg(test)]
            ESCAPE_SEARCHED.with(|c| c.set(c.get() + (len - escapes_from) as u64));
            let Some(k) = escapes.find(&bytes[escapes_from..]) else {
                // None in what was read: the search resumes where an escape cut off at the
                // end could start. (It stayed where it was: the bytes read were never dropped,
                // a part piled up whole and each block searched it all again, so a gzipped
                // trace, read a few KiB at a time, took minutes.)
                escapes_from = escapes_from.max(len.saturating_sub(ESCAPE.len() - 1));
                break;
            };
            let at = escapes_from + k;
            let offset = base + at as u64;
            if offset >= range.end {
                escapes_from = len;
                break;
            }
            match escaped_memory_name(bytes, at, last) {
                Some(escaped) => {
                    if escaped && offset >= range.start {
                        out.unsure += 1;
                    }
                    escapes_from = at + 1;
                }
                None => break,
            }
        }
        let mut past_range = false;
        while let Some(k) = finder.find(&bytes[from..]) {
            let at = from + k;
            let offset = base + at as u64;
            if offset >= range.end {
                past_range = true;
                break;
            }
            if offset < range.start {
                from = at + 1;
                continue;
            }
            // PyTorch's plain layout, read by a template or in one pass from the nearest `{`.
            if let Some((event, end)) = quick_at(bytes, at, &finder, &mut templates) {
                match event {
                    Some(Ok(ev)) if keep(&ev) => out.events.push(ev),
                    Some(Err(UnreadableEvent)) => out.unsure += 1,
                    _ => {}
                }
                from = end;
                continue;
            }
            match locate(bytes, at, last, &finder) {
                Located::Object(s, e) => {
                    match read_event(&bytes[s..=e]) {
                        Ok(Some(ev)) if keep(&ev) => out.events.push(ev),
                        Ok(_) => {}
                        Err(UnreadableEvent) => out.unsure += 1,
                    }
                    from = e + 1;
                }
                Located::Skip => from = at + 1,
                Located::NeedMore => break,
                Located::Unsure => {
                    out.unsure += 1;
                    from = at + 1;
                }
            }
        }
        if past_range || last {
            PART_BUFFER.with(|b| b.replace(buf));
            return Ok(out);
        }
        // A needle cut off at the end is searched again whole with the next block.
        if finder.find(&bytes[from..]).is_none() {
            from = from.max(len.saturating_sub(NEEDLE.len() - 1));
        }
        let drop = from.min(escapes_from).saturating_sub(BACK);
        buf.copy_within(drop..len, 0);
        len -= drop;
        from -= drop;
        escapes_from -= drop;
        base += drop as u64;
    }
}

#[cfg(test)]
thread_local! {
    /// Bytes the escape search has looked at, on this thread (tests: each byte about once).
    static ESCAPE_SEARCHED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

thread_local! {
    /// The buffer a thread's last [`scan_stream`] read into, for its next.
    static PART_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Whether the JSON string around the escape (`\u`) at `at` is `[memory]` spelled with escapes:
/// every pair of quotes around it within [`LONGEST_NAME`] is decoded. `None` when the string
/// may run past the bytes read so far (read more first).
fn escaped_memory_name(buf: &[u8], at: usize, last: bool) -> Option<bool> {
    if !last && at + LONGEST_NAME > buf.len() {
        return None;
    }
    let lo = at.saturating_sub(LONGEST_NAME);
    let hi = (at + LONGEST_NAME).min(buf.len());
    let opens = memchr::memrchr_iter(b'"', &buf[lo..at]).map(|k| lo + k);
    for open in opens {
        let closes = memchr::memchr_iter(b'"', &buf[at..hi]).map(|k| at + k);
        for close in closes.filter(|&c| c - open < LONGEST_NAME) {
            if serde_json::from_slice::<String>(&buf[open..=close]).is_ok_and(|s| s == "[memory]") {
                return Some(true);
            }
        }
    }
    Some(false)
}

/// How many event layouts a scan keeps templates of (PyTorch writes one).
const MAX_TEMPLATES: usize = 4;

/// The object around the hit at `at`, from the nearest `{` before it, with the offset just
/// past it: read by one of `templates` (PyTorch's layout, learned from the events read so far)
/// or else in one pass ([`quick_object`]), which then adds its layout to `templates`. When that
/// object is of the plain layout, holds the hit and names `[memory]` nowhere before it, it is
/// the object [`locate`] would find, and its fields are those [`read_event`] would read.
/// `None` sends the hit the careful way.
fn quick_at(
    buf: &[u8],
    at: usize,
    finder: &memmem::Finder<'_>,
    templates: &mut Vec<Template>,
) -> Option<(Option<Result<MemoryEvent, UnreadableEvent>>, usize)> {
    let floor = at.saturating_sub(BACK);
    let open = floor + memchr::memrchr(b'{', &buf[floor..at])?;
    let obj = &buf[open..];
    let read = match templates.iter().find_map(|t| t.read(obj)) {
        Some((event, len)) => (Some(event), len),
        None => {
            let (raw, len) = quick_object(obj)?;
            if raw.is_some()
                && templates.len() < MAX_TEMPLATES
                && let Some(t) = Template::of(obj)
            {
                templates.push(t);
            }
            (raw.map(|r| memory_event_from(&r)), len)
        }
    };
    let end = open + read.1;
    (end > at && finder.find(&buf[open..at]).is_none()).then_some((read.0, end))
}

/// The object around the hit at `at`: the nearest `{` before it (within [`BACK`], trying at most
/// eight) whose object contains it. A hit that is not the first in its object is a
/// second mention inside an event read already (or to be read by the part that holds the first
/// one): it is skipped.
fn locate(buf: &[u8], at: usize, last: bool, finder: &memmem::Finder<'_>) -> Located {
    /// How many `{` before a hit are tried (a hostile file cannot make a hit cost more).
    const MAX_OPENS: usize = 8;
    let floor = at.saturating_sub(BACK);
    let mut before = at;
    for _ in 0..MAX_OPENS {
        let Some(k) = memchr::memrchr(b'{', &buf[floor..before]) else {
            break;
        };
        let open = floor + k;
        match object_end(&buf[open..]) {
            Some(len) if open + len > at => {
                if finder.find(&buf[open..at]).is_some() {
                    return Located::Skip;
                }
                return Located::Object(open, open + len);
            }
            Some(_) => before = open,
            None if buf.len() - open > MAX_OBJECT || last => return Located::Unsure,
            None => return Located::NeedMore,
        }
    }
    Located::Unsure
}

/// The offset of the `}` closing the object that opens at `obj[0]`, strings skipped; `None`
/// when it does not close within `obj` (or [`MAX_OBJECT`]).
fn object_end(obj: &[u8]) -> Option<usize> {
    let obj = &obj[..obj.len().min(MAX_OBJECT)];
    let (mut depth, mut i) = (0u32, 0usize);
    while i < obj.len() {
        let k = memchr::memchr3(b'"', b'{', b'}', obj.get(i..)?)?;
        i += k;
        match obj[i] {
            b'"' => {
                // Skip the string: to the next quote not escaped.
                i += 1;
                loop {
                    let q = memchr::memchr2(b'"', b'\\', obj.get(i..)?)?;
                    i += q;
                    if obj[i] == b'\\' {
                        i += 2;
                    } else {
                        break;
                    }
                }
            }
            b'{' => depth += 1,
            _ => {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(i);
                }
            }
        }
        i += 1;
    }
    None
}

/// The event of an object's bytes: read by hand ([`quick_fields`]) when it has the plain
/// layout PyTorch writes, else by serde; the same answer either way.
fn read_event(obj: &[u8]) -> Result<Option<MemoryEvent>, UnreadableEvent> {
    match quick_fields(obj) {
        Some(Some(raw)) => memory_event_from(&raw).map(Some),
        Some(None) => Ok(None),
        None => parse_memory_event(obj),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out at most `chunk` bytes a call, as a gzip decoder does.
    struct Trickle<'a> {
        bytes: &'a [u8],
        chunk: usize,
    }

    impl Read for Trickle<'_> {
        fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
            let n = self.chunk.min(out.len()).min(self.bytes.len());
            out[..n].copy_from_slice(&self.bytes[..n]);
            self.bytes = &self.bytes[n..];
            Ok(n)
        }
    }

    /// Read a few KiB at a time, the scan looks at each byte about once for escapes: the bytes
    /// behind it are dropped. (They were kept when no escape was found, so every read searched
    /// the whole trace read so far again: minutes for a gzipped 1 GB trace.)
    #[test]
    fn small_reads_search_each_byte_about_once() {
        let event = r#"{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": 1, "tid": 1, "ts": 10.5, "args": {"Total Reserved": 4096, "Total Allocated": 512, "Bytes": 512, "Addr": 1, "Device Id": 0, "Device Type": 1}}"#;
        let text = format!(
            r#"{{"traceEvents": [{}]}}"#,
            vec![event; 20_000].join(",\n")
        );
        ESCAPE_SEARCHED.with(|c| c.set(0));
        let reader = Trickle {
            bytes: text.as_bytes(),
            chunk: 4096,
        };
        let scan = scan_stream(reader, 0, 0..u64::MAX, &|_| true, &LoadControl::new()).unwrap();
        assert_eq!((scan.events.len(), scan.unsure), (20_000, 0));
        let searched = ESCAPE_SEARCHED.with(std::cell::Cell::get);
        assert!(
            searched < 2 * text.len() as u64,
            "{searched} bytes searched for {} read",
            text.len()
        );
    }
}
