//! Reading one big CSV file in parallel without holding it in memory.
//!
//! The file is read in blocks of [`BLOCK_BYTES`]. Each block is cut at the last record boundary
//! (a newline outside double quotes) and split into pieces at record boundaries; the pieces are
//! tokenized by the `csv` crate on rayon's threads, each into its own [`RowSink`], and the sinks come
//! back in file order for the caller to merge. Memory stays at one block plus the parsed columns.

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use csv::ByteRecord;

/// The cells of one record, borrowed from the file's bytes.
pub type Fields<'a> = [&'a [u8]];
use rayon::prelude::*;

/// Bytes read per block.
pub const BLOCK_BYTES: usize = 16 << 20;

/// Progress and cancellation shared between a loader and whoever watches it (the UI).
#[derive(Debug, Default)]
pub struct LoadControl {
    cancel: AtomicBool,
    bytes_done: AtomicU64,
    bytes_total: AtomicU64,
    files_done: AtomicU64,
}

impl LoadControl {
    /// A fresh control: nothing done, not cancelled.
    pub fn new() -> Self {
        Self::default()
    }
    /// Asks the loader to stop at the next block.
    pub fn cancel(&self) {
        self.cancel.store(true, Ordering::Relaxed);
    }
    /// True once [`cancel`](Self::cancel) was called.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.load(Ordering::Relaxed)
    }
    /// Bytes read so far.
    pub fn bytes_done(&self) -> u64 {
        self.bytes_done.load(Ordering::Relaxed)
    }
    /// Bytes to read in all (known once loading starts).
    pub fn bytes_total(&self) -> u64 {
        self.bytes_total.load(Ordering::Relaxed)
    }
    /// Files finished.
    pub fn files_done(&self) -> u64 {
        self.files_done.load(Ordering::Relaxed)
    }
    pub(crate) fn add_total(&self, n: u64) {
        self.bytes_total.fetch_add(n, Ordering::Relaxed);
    }
    pub(crate) fn add_done(&self, n: u64) {
        self.bytes_done.fetch_add(n, Ordering::Relaxed);
    }
    pub(crate) fn file_done(&self) {
        self.files_done.fetch_add(1, Ordering::Relaxed);
    }
}

/// Errors of the chunked reader.
#[derive(Debug, thiserror::Error)]
pub enum ChunkError {
    /// The file could not be read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// The user cancelled the load.
    #[error("cancelled")]
    Cancelled,
}

/// Receives the records of one piece of a file.
pub trait RowSink: Send {
    /// One record; `at` is its byte offset within the piece. Turning offsets into line numbers
    /// costs a scan, so sinks keep offsets for the few rows they report and the reader converts
    /// them in [`RowSink::offsets_to_lines`].
    fn row(&mut self, rec: &Fields<'_>, at: u64);
    /// Replaces every offset the sink kept by `line_of(offset)` (called in increasing order).
    fn offsets_to_lines(&mut self, line_of: &mut dyn FnMut(u64) -> u64);
    /// Empties the sink for the next piece, keeping its allocations.
    fn reset(&mut self);
}

/// A CSV file with its header read.
pub struct CsvFile {
    file: File,
    /// Header cells, trimmed.
    header: Vec<String>,
    carry: Vec<u8>,
    eof: bool,
    next_line: u64,
}

impl CsvFile {
    /// Opens `path` and reads its header (a UTF-8 BOM is dropped). An empty file has no header.
    pub fn open(path: &Path) -> io::Result<CsvFile> {
        let mut file = File::open(path)?;
        let mut buf = Vec::with_capacity(64 << 10);
        let mut eof = false;
        // Read until the first record boundary (the header line) is in the buffer.
        let header_end = loop {
            if let Some(end) = first_boundary(&buf) {
                break end;
            }
            if eof {
                break buf.len();
            }
            let got = read_some(&mut file, &mut buf, 64 << 10)?;
            eof = got == 0;
        };
        let mut header_bytes = &buf[..header_end];
        if header_bytes.starts_with(b"\xEF\xBB\xBF") {
            header_bytes = &header_bytes[3..];
        }
        let header = parse_header(header_bytes);
        let carry = buf[header_end..].to_vec();
        Ok(CsvFile {
            file,
            header,
            carry,
            eof,
            next_line: 2,
        })
    }

    /// The header cells (trimmed of spaces, tabs and quotes).
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The index of the column named `name` (case-insensitive, spaces ignored).
    pub fn column(&self, name: &str) -> Option<usize> {
        column_index(&self.header, name)
    }

    /// The first data record's cells (for discovery, which reads no more than that).
    pub fn first_record(&self) -> Option<Vec<Vec<u8>>> {
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(&self.carry[..]);
        let mut rec = ByteRecord::new();
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => Some(rec.iter().map(<[u8]>::to_vec).collect()),
            _ => None,
        }
    }

    /// Reads every remaining record into sinks made by `make_sink` (one per piece; it gets the
    /// piece's length in bytes to reserve room) and hands each filled sink to `consume`, in file
    /// order, as soon as its block is done. Sinks are then reset and reused for the next block,
    /// so their memory is allocated once. While the pieces of one block are parsed, the next
    /// block is read (double buffering).
    pub fn read_rows<S, F>(
        mut self,
        control: &LoadControl,
        make_sink: F,
        mut consume: impl FnMut(&mut S),
    ) -> Result<(), ChunkError>
    where
        S: RowSink,
        F: Fn(usize) -> S + Sync,
    {
        let pieces_per_block = (rayon::current_num_threads() * 4).max(4);
        let mut cur = Block::new(BLOCK_BYTES.max(self.carry.len()));
        cur.data[..self.carry.len()].copy_from_slice(&self.carry);
        cur.filled = self.carry.len();
        self.carry = Vec::new();
        let mut next = Block::new(BLOCK_BYTES);
        let mut pool: Vec<S> = Vec::new();
        let mut file_eof = self.eof;
        if !file_eof {
            file_eof = cur.fill(&mut self.file)?;
        }
        control.add_done(cur.filled as u64);
        loop {
            if control.is_cancelled() {
                return Err(ChunkError::Cancelled);
            }
            let buf = &cur.data[..cur.filled];
            let Some((cut, pieces, quoted)) = plan_block(buf, file_eof, pieces_per_block) else {
                // One record longer than a block: grow it and read more.
                let before = cur.filled;
                cur.grow();
                file_eof = cur.fill(&mut self.file)?;
                control.add_done((cur.filled - before) as u64);
                continue;
            };
            // The unparsed tail starts the next block.
            let tail = &buf[cut..];
            next.ensure(tail.len() + BLOCK_BYTES);
            next.data[..tail.len()].copy_from_slice(tail);
            next.filled = tail.len();
            while pool.len() < pieces.len() {
                pool.push(make_sink(cut / pieces.len().max(1) + 1));
            }
            let sinks = &mut pool[..pieces.len()];
            let (newlines, read) = rayon::join(
                || {
                    sinks
                        .par_iter_mut()
                        .zip(pieces.par_iter())
                        .map(|(sink, &(start, end))| {
                            let piece = &buf[start..end];
                            if quoted {
                                parse_quoted_piece(piece, sink);
                            } else {
                                parse_plain_piece(piece, sink);
                            }
                            bytecount::count(piece, b'\n') as u64
                        })
                        .collect::<Vec<u64>>()
                },
                || {
                    if file_eof {
                        Ok(true)
                    } else {
                        next.fill(&mut self.file)
                    }
                },
            );
            let mut line = self.next_line;
            for ((sink, newlines), &(start, end)) in sinks.iter_mut().zip(newlines).zip(&pieces) {
                let piece = &buf[start..end];
                let mut counted = 0usize;
                let mut at_line = line;
                sink.offsets_to_lines(&mut |off| {
                    // Inclusive: after a CR the csv crate reports the record at its LF.
                    let off = (off as usize + 1).min(piece.len());
                    if off > counted {
                        at_line += bytecount::count(&piece[counted..off], b'\n') as u64;
                        counted = off;
                    }
                    at_line
                });
                line += newlines;
                consume(sink);
                sink.reset();
            }
            self.next_line = line;
            let before = next.filled;
            file_eof = read?;
            std::mem::swap(&mut cur, &mut next);
            control.add_done((cur.filled - before.min(cur.filled)) as u64);
            if file_eof && cur.filled == 0 {
                break;
            }
        }
        Ok(())
    }
}

/// A reusable read buffer: `data[..filled]` holds bytes not yet parsed. Zeroed only when it grows.
struct Block {
    data: Vec<u8>,
    filled: usize,
}

impl Block {
    fn new(size: usize) -> Block {
        Block {
            data: vec![0; size],
            filled: 0,
        }
    }
    fn ensure(&mut self, size: usize) {
        if self.data.len() < size {
            self.data.resize(size, 0);
        }
    }
    fn grow(&mut self) {
        let n = self.data.len() * 2;
        self.data.resize(n, 0);
    }
    /// Reads until full or end of file; returns true at end of file.
    fn fill(&mut self, file: &mut File) -> io::Result<bool> {
        while self.filled < self.data.len() {
            let got = read_into(file, &mut self.data[self.filled..])?;
            if got == 0 {
                return Ok(true);
            }
            self.filled += got;
        }
        Ok(false)
    }
}

/// Where to cut a block (after its last complete record; everything at end of file), how to
/// split `[0, cut)` into about `n` pieces at record boundaries, and whether the block holds any
/// double quote. `None` when no record ends in it.
type BlockPlan = (usize, Vec<(usize, usize)>, bool);

fn plan_block(buf: &[u8], eof: bool, n: usize) -> Option<BlockPlan> {
    if memchr::memchr(b'"', buf).is_some() {
        // Quoted cells may hold newlines: find record ends by tracking quotes.
        let ends = record_ends(buf);
        let cut = if eof {
            buf.len()
        } else {
            ends.last().copied()?
        };
        let usable: Vec<usize> = ends.into_iter().filter(|&e| e <= cut).collect();
        return Some((cut, split_pieces(cut, &usable, n), true));
    }
    let cut = if eof {
        buf.len()
    } else {
        memchr::memrchr(b'\n', buf)? + 1
    };
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let target = cut * k / n;
        if target <= start {
            continue;
        }
        if let Some(nl) = memchr::memrchr(b'\n', &buf[start..target]) {
            let end = start + nl + 1;
            pieces.push((start, end));
            start = end;
        }
    }
    if cut > start {
        pieces.push((start, cut));
    }
    Some((cut, pieces, false))
}

/// Index of `name` in `header`, ignoring case and spaces (`Device_id` matches `Device_id`).
pub fn column_index(header: &[String], name: &str) -> Option<usize> {
    let norm = |s: &str| -> String {
        s.chars()
            .filter(|c| !c.is_whitespace())
            .flat_map(char::to_lowercase)
            .collect()
    };
    let want = norm(name);
    header.iter().position(|h| norm(h) == want)
}

/// Reads into `dst`, retrying on interruption; 0 means end of file.
fn read_into(file: &mut File, dst: &mut [u8]) -> io::Result<usize> {
    loop {
        match file.read(dst) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

fn read_some(file: &mut File, buf: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    let old = buf.len();
    buf.resize(old + want, 0);
    let got = loop {
        match file.read(&mut buf[old..]) {
            Ok(n) => break n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                buf.truncate(old);
                return Err(e);
            }
        }
    };
    buf.truncate(old + got);
    Ok(got)
}

fn parse_header(bytes: &[u8]) -> Vec<String> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut rec = ByteRecord::new();
    match rdr.read_byte_record(&mut rec) {
        Ok(true) => rec
            .iter()
            .map(|c| String::from_utf8_lossy(super::value::trim_cell(c)).into_owned())
            .collect(),
        _ => Vec::new(),
    }
}

/// End (exclusive) of the first record, if its newline is in `buf`.
fn first_boundary(buf: &[u8]) -> Option<usize> {
    let mut in_quotes = false;
    for pos in memchr::memchr2_iter(b'"', b'\n', buf) {
        if buf[pos] == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            return Some(pos + 1);
        }
    }
    None
}

/// Ends (exclusive) of every record in `buf`: positions after each newline outside quotes.
fn record_ends(buf: &[u8]) -> Vec<usize> {
    let mut ends = Vec::with_capacity(buf.len() / 64);
    let mut in_quotes = false;
    for pos in memchr::memchr2_iter(b'"', b'\n', buf) {
        if buf[pos] == b'"' {
            in_quotes = !in_quotes;
        } else if !in_quotes {
            ends.push(pos + 1);
        }
    }
    ends
}

/// Splits `[0, cut)` into about `n` pieces at record ends.
fn split_pieces(cut: usize, ends: &[usize], n: usize) -> Vec<(usize, usize)> {
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    for k in 1..n {
        let target = cut * k / n;
        let idx = ends.partition_point(|&e| e <= target);
        if idx == 0 {
            continue;
        }
        let end = ends[idx - 1];
        if end > start {
            pieces.push((start, end));
            start = end;
        }
    }
    if cut > start {
        pieces.push((start, cut));
    }
    pieces
}

/// A piece without any double quote: lines split on `\n`, cells on `,` (a trailing `\r` dropped).
/// Faster than a general CSV tokenizer, and exact for such input.
fn parse_plain_piece<S: RowSink>(bytes: &[u8], sink: &mut S) {
    let mut fields: Vec<&[u8]> = Vec::with_capacity(32);
    let mut start = 0;
    while start < bytes.len() {
        let end = memchr::memchr(b'\n', &bytes[start..]).map_or(bytes.len(), |p| start + p);
        let mut line = &bytes[start..end];
        if let Some(stripped) = line.strip_suffix(b"\r") {
            line = stripped;
        }
        if !line.is_empty() {
            fields.clear();
            fields.extend(line.split(|&b| b == b','));
            sink.row(&fields, start as u64);
        }
        start = end + 1;
    }
}

/// A piece with quotes, through the `csv` crate (RFC 4180 quoting, escaped quotes, CRLF).
fn parse_quoted_piece<S: RowSink>(bytes: &[u8], sink: &mut S) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut rec = ByteRecord::new();
    loop {
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => {
                let at = rec.position().map_or(0, csv::Position::byte);
                let fields: Vec<&[u8]> = rec.iter().collect();
                sink.row(&fields, at);
            }
            Ok(false) => break,
            // The csv crate only errors on I/O (impossible on a slice) or UTF-8 (not used for
            // byte records); stop this piece rather than loop.
            Err(_) => break,
        }
    }
}

/// The cells of a record joined by commas, for skipped-row reports.
pub fn record_text(rec: &Fields<'_>) -> String {
    let parts: Vec<String> = rec
        .iter()
        .map(|c| String::from_utf8_lossy(c).into_owned())
        .collect();
    parts.join(",")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    struct Lines(Vec<(u64, String)>);
    impl RowSink for Lines {
        fn row(&mut self, rec: &Fields<'_>, at: u64) {
            self.0.push((at, record_text(rec)));
        }
        fn offsets_to_lines(&mut self, line_of: &mut dyn FnMut(u64) -> u64) {
            for r in &mut self.0 {
                r.0 = line_of(r.0);
            }
        }
        fn reset(&mut self) {
            self.0.clear();
        }
    }

    fn read_all(content: &[u8]) -> (Vec<String>, Vec<(u64, String)>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        let csv = CsvFile::open(f.path()).unwrap();
        let header = csv.header().to_vec();
        let mut rows = Vec::new();
        csv.read_rows(
            &LoadControl::new(),
            |_| Lines(Vec::new()),
            |s| rows.append(&mut s.0),
        )
        .unwrap();
        (header, rows)
    }

    #[test]
    fn header_bom_crlf_quotes_and_line_numbers() {
        let (h, rows) =
            read_all(b"\xEF\xBB\xBFa,\"b\",c\r\n1,\"x,y\",3\r\n4,5,6\r\n\"q\nq\",1\r\n7,8");
        assert_eq!(h, vec!["a", "b", "c"]);
        assert_eq!(
            rows,
            vec![
                (2, "1,x,y,3".to_string()),
                (3, "4,5,6".to_string()),
                (4, "q\nq,1".to_string()),
                (6, "7,8".to_string())
            ]
        );
    }

    #[test]
    fn empty_and_header_only_files() {
        assert_eq!(read_all(b""), (vec![], vec![]));
        assert_eq!(read_all(b"a,b\n").1, vec![]);
    }

    #[test]
    fn big_file_keeps_every_row_in_order() {
        let mut s = String::from("i,v\n");
        let n = 400_000;
        for i in 0..n {
            // Some quoted cells so both boundary paths run.
            if i % 1000 == 0 {
                s.push_str(&format!("{i},\"q\nq\"\n"));
            } else {
                s.push_str(&format!("{i},{}\n", i * 2));
            }
        }
        let (_, rows) = read_all(s.as_bytes());
        assert_eq!(rows.len(), n);
        let mut want_line = 2;
        for (k, (line, text)) in rows.iter().enumerate() {
            assert!(text.starts_with(&format!("{k},")), "row {k}: {text}");
            assert_eq!(*line, want_line, "row {k}");
            want_line += if k % 1000 == 0 { 2 } else { 1 };
        }
    }

    #[test]
    fn pieces_cover_the_block_exactly() {
        let ends = vec![3, 7, 12, 20, 21, 30];
        let p = split_pieces(30, &ends, 4);
        let q = plan_block(b"ab\ncd\nef\ngh\nij", false, 3).unwrap();
        assert_eq!(q, (12, vec![(0, 3), (3, 6), (6, 12)], false));
        assert!(plan_block(b"no newline yet", false, 3).is_none());
        assert_eq!(p.first().unwrap().0, 0);
        assert_eq!(p.last().unwrap().1, 30);
        for w in p.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
    }
}
