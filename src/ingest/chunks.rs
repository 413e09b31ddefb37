//! Reading one big CSV file in parallel without holding it in memory.
//!
//! The file is read in blocks of [`BLOCK_BYTES`]. Each block is cut after its last line break and
//! split into pieces at line breaks; the pieces are split into cells ([`LineSplitter`]) on rayon's
//! threads, each into its own [`RowSink`], and the sinks come back in file order for the caller to
//! merge. Memory stays at two blocks (at most [`MAX_LINE_BYTES`] each) plus the parsed columns,
//! whatever the file holds:
//!
//! - the header is looked for in the first [`MAX_HEADER_BYTES`] only;
//! - a line longer than [`MAX_LINE_BYTES`] is skipped (and reported) without being held;
//! - every line is one record (the profilers never break a line inside a cell), so a stray
//!   quote costs one row;
//! - CR-only line breaks (classic Mac) are read as line breaks; UTF-16 files (Excel's "Unicode
//!   text", with a BOM) are decoded to UTF-8 on the fly; TAB-separated files are read too.

use std::io::{self, Read};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rayon::prelude::*;

pub use super::line_split::{Fields, LineSplitter, record_text};

/// Bytes read per block (less for a smaller file).
pub const BLOCK_BYTES: usize = 8 << 20;

/// The longest line read: a longer one is skipped, unread, and reported.
pub const MAX_LINE_BYTES: usize = 32 << 20;

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

/// The longest header line looked for: a header is never megabytes.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

/// Why a CSV file cannot be read as a table at all.
#[derive(Debug, thiserror::Error)]
pub enum CsvOpenError {
    /// The file could not be opened or read.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// No line break in the first [`MAX_HEADER_BYTES`].
    #[error("no header line in the first {} KB (not a CSV file?)", MAX_HEADER_BYTES / 1024)]
    NoHeaderLine,
    /// The header is split by a separator memsight does not read.
    #[error(
        "the cells are separated by {0:?} (European Excel?); memsight reads comma-separated files: \
         save it as \"CSV UTF-8 (comma delimited)\" or use the profiler's own file"
    )]
    Separator(char),
}

/// Receives the records of one piece of a file.
pub trait RowSink: Send {
    /// One record; `at` is its byte offset within the piece. Turning offsets into line numbers
    /// costs a scan, so sinks keep offsets for the few rows they report and the reader converts
    /// them in [`RowSink::offsets_to_lines`].
    fn row(&mut self, rec: &Fields<'_>, at: u64);
    /// A line that could not be split into cells (`reason`), at byte offset `at` as for `row`.
    fn bad_line(&mut self, at: u64, reason: crate::model::SkipReason, line: &[u8]);
    /// Replaces every offset the sink kept by `line_of(offset)` (called in increasing order).
    fn offsets_to_lines(&mut self, line_of: &mut dyn FnMut(u64) -> u64);
    /// Empties the sink for the next piece, keeping its allocations.
    fn reset(&mut self);
}

/// Where a CSV file's bytes come from: a regular file, or memory (tests and fuzzing).
type Source = Box<dyn Read + Send>;

/// A CSV file with its header read.
pub struct CsvFile {
    source: Source,
    /// Header cells, trimmed.
    header: Vec<String>,
    delimiter: u8,
    /// Line breaks are lone CRs: every CR is read as LF.
    cr_only: bool,
    /// The encoding the file was decoded from, when not UTF-8.
    decoded_from: Option<&'static str>,
    carry: Vec<u8>,
    eof: bool,
    /// Block size: [`BLOCK_BYTES`], or less for a file known to be smaller.
    block_bytes: usize,
}

impl CsvFile {
    /// Opens `path` (a regular file only: see [`super::safe_fs`]) and reads its header. An empty
    /// file has no header cells.
    pub fn open(path: &Path) -> Result<CsvFile, CsvOpenError> {
        let file = super::safe_fs::open_regular(path)?;
        let len = file.metadata()?.len();
        let mut csv = Self::from_reader(Box::new(file))?;
        // A small file needs no 16 MiB blocks (a 1,000-rank cluster of small files, tests).
        let fits = usize::try_from(len.saturating_add(1)).unwrap_or(usize::MAX);
        csv.block_bytes = fits.clamp(64 << 10, BLOCK_BYTES);
        Ok(csv)
    }

    /// Reads the header from any reader (an in-memory file in tests and fuzzing).
    pub fn from_reader(source: Source) -> Result<CsvFile, CsvOpenError> {
        let (mut source, decoded_from) = decode_utf16(source)?;
        let mut buf = Vec::with_capacity(64 << 10);
        let mut eof = false;
        let mut scanned = 0;
        let mut cr_only = false;
        // Read until the header's line break is in the buffer; scan each byte once.
        let header_end = loop {
            if let Some(p) = memchr::memchr2(b'\n', b'\r', &buf[scanned..]) {
                let pos = scanned + p;
                if buf[pos] == b'\n' {
                    break pos + 1;
                }
                match buf.get(pos + 1) {
                    Some(b'\n') => break pos + 2,
                    Some(_) => {
                        cr_only = true;
                        break pos + 1;
                    }
                    None if eof => break pos + 1,
                    None => scanned = pos, // decide once the next byte is read
                }
            } else {
                scanned = buf.len();
                if eof {
                    break buf.len();
                }
            }
            if buf.len() >= MAX_HEADER_BYTES {
                return Err(CsvOpenError::NoHeaderLine);
            }
            eof = read_some(&mut source, &mut buf, 64 << 10)? == 0;
        };
        let mut header_bytes = &buf[..header_end];
        if header_bytes.starts_with(b"\xEF\xBB\xBF") {
            header_bytes = &header_bytes[3..];
        }
        while let Some(rest) = header_bytes
            .strip_suffix(b"\n")
            .or_else(|| header_bytes.strip_suffix(b"\r"))
        {
            header_bytes = rest;
        }
        let delimiter = delimiter_of(header_bytes)?;
        let header = parse_header(header_bytes, delimiter);
        let mut carry = buf[header_end..].to_vec();
        if cr_only {
            cr_to_lf(&mut carry);
        }
        Ok(CsvFile {
            source,
            header,
            delimiter,
            cr_only,
            decoded_from,
            carry,
            eof,
            block_bytes: BLOCK_BYTES,
        })
    }

    /// The header cells (trimmed of spaces, tabs and quotes).
    pub fn header(&self) -> &[String] {
        &self.header
    }

    /// The cell separator (`,` or TAB).
    pub fn delimiter(&self) -> u8 {
        self.delimiter
    }

    /// The encoding the file was decoded from (`"UTF-16LE"`), `None` for UTF-8.
    pub fn decoded_from(&self) -> Option<&'static str> {
        self.decoded_from
    }

    /// The index of the column named `name` (case-insensitive, spaces ignored).
    pub fn column(&self, name: &str) -> Option<usize> {
        column_index(&self.header, name)
    }

    /// The first data record's cells (for discovery, which reads no more than that), if the
    /// first line after the header is already in memory.
    pub fn first_record(&self) -> Option<Vec<Vec<u8>>> {
        let end = memchr::memchr(b'\n', &self.carry).unwrap_or(self.carry.len());
        let line = self.carry[..end]
            .strip_suffix(b"\r")
            .unwrap_or(&self.carry[..end]);
        LineSplitter::new(self.delimiter).with_cells(line, |r| {
            r.ok().map(|c| c.iter().map(|x| x.to_vec()).collect())
        })
    }

    /// Reads every remaining record into sinks made by `make_sink` (one per piece; it gets the
    /// piece's length in bytes to reserve room) and hands each filled sink to `consume`, in file
    /// order. Three things overlap: the pieces of one block are parsed on every core, the next
    /// block is read, and the sinks of the block before are consumed (merged by the caller). Sinks
    /// are then reset and reused, so their memory is allocated once.
    pub fn read_rows<S, F>(
        mut self,
        control: &LoadControl,
        make_sink: F,
        mut consume: impl FnMut(&mut S) + Send,
    ) -> Result<(), ChunkError>
    where
        S: RowSink,
        F: Fn(usize) -> S + Sync,
    {
        let pieces_per_block = (rayon::current_num_threads() * 4).max(4);
        let delimiter = self.delimiter;
        let cr_only = self.cr_only;
        let block = self.block_bytes;
        let mut cur = Block::new(block.max(self.carry.len()));
        cur.data[..self.carry.len()].copy_from_slice(&self.carry);
        cur.filled = self.carry.len();
        self.carry = Vec::new();
        let mut next = Block::new(block);
        // `parsing` receives the current block; `parsed[..ready]` holds the block before it,
        // waiting to be consumed while the current one parses.
        let mut parsing: Vec<S> = Vec::new();
        let mut parsed: Vec<S> = Vec::new();
        let mut ready = 0;
        let mut consume_ready = |sinks: &mut [S]| {
            for sink in sinks {
                consume(sink);
                sink.reset();
            }
        };
        let mut file_eof = self.eof;
        if !file_eof {
            file_eof = cur.fill(&mut self.source, cr_only)?;
        }
        control.add_done(cur.filled as u64);
        let mut next_line: u64 = 2;
        loop {
            if control.is_cancelled() {
                return Err(ChunkError::Cancelled);
            }
            let buf = &cur.data[..cur.filled];
            let cut = if file_eof {
                buf.len()
            } else if let Some(nl) = memchr::memrchr(b'\n', buf) {
                nl + 1
            } else if cur.data.len() < MAX_LINE_BYTES {
                // No line break yet: make room for a longer line (a file that grew since it
                // was opened may hold lines longer than its first block).
                let before = cur.filled;
                cur.ensure((cur.data.len() * 2).min(MAX_LINE_BYTES));
                file_eof = cur.fill(&mut self.source, cr_only)?;
                control.add_done((cur.filled - before) as u64);
                continue;
            } else {
                // One line longer than a whole block: report it and drop it unread.
                consume_ready(&mut parsed[..ready]);
                if parsed.is_empty() {
                    parsed.push(make_sink(0));
                }
                let sink = &mut parsed[0];
                let reason = crate::model::SkipReason::LineTooLong {
                    mib: (buf.len() >> 20) as u64,
                };
                sink.bad_line(0, reason, &buf[..buf.len().min(200)]);
                sink.offsets_to_lines(&mut |_| next_line);
                ready = 1;
                next_line += 1;
                file_eof = cur.skip_past_line_break(&mut self.source, cr_only, control)?;
                if file_eof && cur.filled == 0 {
                    break;
                }
                continue;
            };
            let pieces = split_at_line_breaks(buf, cut, pieces_per_block);
            // The unparsed tail starts the next block.
            let tail = &buf[cut..];
            let tail_len = tail.len();
            next.ensure(tail.len() + block);
            next.data[..tail.len()].copy_from_slice(tail);
            next.filled = tail.len();
            while parsing.len() < pieces.len() {
                parsing.push(make_sink(cut / pieces.len().max(1) + 1));
            }
            let sinks = &mut parsing[..pieces.len()];
            let source = &mut self.source;
            let waiting = &mut parsed[..ready];
            let (newlines, read) = rayon::join(
                || {
                    sinks
                        .par_iter_mut()
                        .zip(pieces.par_iter())
                        .map(|(sink, &(start, end))| parse_piece(&buf[start..end], delimiter, sink))
                        .collect::<Vec<u64>>()
                },
                || {
                    // Merging the block before is serial: it runs beside the parse.
                    consume_ready(waiting);
                    if file_eof {
                        Ok(true)
                    } else {
                        next.fill(source, cr_only)
                    }
                },
            );
            // Line numbers of the few rows a sink reports, while this block is still in memory.
            let mut line = next_line;
            for ((sink, newlines), &(start, end)) in sinks.iter_mut().zip(newlines).zip(&pieces) {
                let piece = &buf[start..end];
                let mut counted = 0usize;
                let mut at_line = line;
                sink.offsets_to_lines(&mut |off| {
                    let off = (off as usize).min(piece.len());
                    if off > counted {
                        at_line += bytecount::count(&piece[counted..off], b'\n') as u64;
                        counted = off;
                    }
                    at_line
                });
                line += newlines;
            }
            next_line = line;
            ready = pieces.len();
            std::mem::swap(&mut parsing, &mut parsed);
            file_eof = read?;
            std::mem::swap(&mut cur, &mut next);
            // Only what was read into the block counts: the carried tail was counted already.
            control.add_done((cur.filled - tail_len.min(cur.filled)) as u64);
            if file_eof && cur.filled == 0 {
                break;
            }
        }
        consume_ready(&mut parsed[..ready]);
        Ok(())
    }
}

/// Wraps a source whose first bytes are a UTF-16 byte order mark in a decoder to UTF-8.
fn decode_utf16(mut source: Source) -> io::Result<(Source, Option<&'static str>)> {
    let mut head = Vec::with_capacity(2);
    while head.len() < 2 {
        let mut b = [0u8; 2];
        let got = read_into(&mut source, &mut b[..2 - head.len()])?;
        if got == 0 {
            break;
        }
        head.extend_from_slice(&b[..got]);
    }
    let encoding = match head.as_slice() {
        [0xFF, 0xFE] => Some(encoding_rs::UTF_16LE),
        [0xFE, 0xFF] => Some(encoding_rs::UTF_16BE),
        _ => None,
    };
    let rejoined: Source = Box::new(io::Cursor::new(head).chain(source));
    Ok(match encoding {
        Some(enc) => (
            Box::new(
                encoding_rs_io::DecodeReaderBytesBuilder::new()
                    .encoding(Some(enc))
                    .build(rejoined),
            ),
            Some(enc.name()),
        ),
        None => (rejoined, None),
    })
}

/// The cell separator of a header line: `,`, else TAB (Excel's "Unicode text"); a header split
/// only by `;` is refused with a message naming it.
fn delimiter_of(header: &[u8]) -> Result<u8, CsvOpenError> {
    if memchr::memchr(b',', header).is_some() {
        Ok(b',')
    } else if memchr::memchr(b'\t', header).is_some() {
        Ok(b'\t')
    } else if memchr::memchr(b';', header).is_some() {
        Err(CsvOpenError::Separator(';'))
    } else {
        Ok(b',')
    }
}

/// Every CR becomes LF (files whose line breaks are lone CRs).
fn cr_to_lf(bytes: &mut [u8]) {
    let mut from = 0;
    while let Some(p) = memchr::memchr(b'\r', &bytes[from..]) {
        bytes[from + p] = b'\n';
        from += p + 1;
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
    /// Reads until full or end of file; returns true at end of file.
    fn fill(&mut self, source: &mut Source, cr_only: bool) -> io::Result<bool> {
        let start = self.filled;
        let mut eof = false;
        while self.filled < self.data.len() {
            let got = read_into(source, &mut self.data[self.filled..])?;
            if got == 0 {
                eof = true;
                break;
            }
            self.filled += got;
        }
        if cr_only {
            cr_to_lf(&mut self.data[start..self.filled]);
        }
        Ok(eof)
    }
    /// Drops bytes up to and including the next line break, reading as needed (the buffer's
    /// bytes hold no line break). Keeps what follows it. Returns true at end of file.
    fn skip_past_line_break(
        &mut self,
        source: &mut Source,
        cr_only: bool,
        control: &LoadControl,
    ) -> io::Result<bool> {
        loop {
            self.filled = 0;
            let eof = self.fill(source, cr_only)?;
            control.add_done(self.filled as u64);
            if let Some(nl) = memchr::memchr(b'\n', &self.data[..self.filled]) {
                self.data.copy_within(nl + 1..self.filled, 0);
                self.filled -= nl + 1;
                return Ok(eof);
            }
            if eof {
                self.filled = 0;
                return Ok(true);
            }
        }
    }
}

/// Splits `[0, cut)` into about `n` pieces ending at line breaks.
fn split_at_line_breaks(buf: &[u8], cut: usize, n: usize) -> Vec<(usize, usize)> {
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
    pieces
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
fn read_into(source: &mut Source, dst: &mut [u8]) -> io::Result<usize> {
    loop {
        match source.read(dst) {
            Ok(n) => return Ok(n),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Appends up to `want` bytes to `buf`; returns how many (0 at end of file).
fn read_some(source: &mut Source, buf: &mut Vec<u8>, want: usize) -> io::Result<usize> {
    let old = buf.len();
    buf.resize(old + want, 0);
    let got = read_into(source, &mut buf[old..]);
    buf.truncate(old + *got.as_ref().unwrap_or(&0));
    got
}

fn parse_header(line: &[u8], delimiter: u8) -> Vec<String> {
    if line.is_empty() {
        return Vec::new();
    }
    let to_strings = |cells: &Fields<'_>| -> Vec<String> {
        cells
            .iter()
            .map(|c| String::from_utf8_lossy(super::value::trim_cell(c)).into_owned())
            .collect()
    };
    let mut splitter = LineSplitter::new(delimiter);
    splitter.with_cells(line, |r| match r {
        Ok(cells) => to_strings(cells),
        // A header with a stray quote: take its cells as they are (trim_cell drops quotes).
        Err(_) => to_strings(&line.split(|&b| b == delimiter).collect::<Vec<_>>()),
    })
}

/// Splits a piece (whole lines) into records; empty lines are skipped. Returns the number of
/// line breaks in the piece (counted on the way, for line numbers).
fn parse_piece<S: RowSink>(bytes: &[u8], delimiter: u8, sink: &mut S) -> u64 {
    let mut splitter = LineSplitter::new(delimiter);
    let mut start = 0;
    let mut breaks = 0;
    while start < bytes.len() {
        let end = match memchr::memchr(b'\n', &bytes[start..]) {
            Some(p) => {
                breaks += 1;
                start + p
            }
            None => bytes.len(),
        };
        let line = bytes[start..end]
            .strip_suffix(b"\r")
            .unwrap_or(&bytes[start..end]);
        if !line.is_empty() {
            splitter.with_cells(line, |r| match r {
                Ok(cells) => sink.row(cells, start as u64),
                Err(reason) => sink.bad_line(start as u64, reason.into(), line),
            });
        }
        start = end + 1;
    }
    breaks
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows as (line, text); bad lines as (line, "!reason").
    struct Lines(Vec<(u64, String)>);
    impl RowSink for Lines {
        fn row(&mut self, rec: &Fields<'_>, at: u64) {
            self.0.push((at, record_text(rec)));
        }
        fn bad_line(&mut self, at: u64, reason: crate::model::SkipReason, _line: &[u8]) {
            self.0.push((at, format!("!{reason}")));
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
        let csv = CsvFile::from_reader(Box::new(io::Cursor::new(content.to_vec()))).unwrap();
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

    fn rows(v: &[(u64, &str)]) -> Vec<(u64, String)> {
        v.iter().map(|(l, t)| (*l, t.to_string())).collect()
    }

    #[test]
    fn header_bom_crlf_quotes_and_line_numbers() {
        let (h, got) = read_all(b"\xEF\xBB\xBFa,\"b\",c\r\n1,\"x,y\",3\r\n4,5,6\r\n\r\n7,8");
        assert_eq!(h, vec!["a", "b", "c"]);
        assert_eq!(got, rows(&[(2, "1,x,y,3"), (3, "4,5,6"), (5, "7,8")]));
    }

    #[test]
    fn a_stray_quote_costs_one_line() {
        let (_, got) = read_all(b"a,b\n1,\"2\n3,4\n5,\"6\"\n");
        assert_eq!(
            got,
            rows(&[
                (
                    2,
                    &format!("!{}", super::super::line_split::UNBALANCED_QUOTE)
                ),
                (3, "3,4"),
                (4, "5,6")
            ])
        );
    }

    #[test]
    fn cr_only_line_breaks_are_read() {
        let (h, got) = read_all(b"a,b\r1,2\r3,4\r");
        assert_eq!(h, vec!["a", "b"]);
        assert_eq!(got, rows(&[(2, "1,2"), (3, "3,4")]));
    }

    #[test]
    fn utf16_files_are_decoded_and_tabs_split() {
        let text = "Name\tSize(KB)\r\n算子\t1.5\r\n";
        let mut le = vec![0xFF, 0xFE];
        le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
        let (h, got) = read_all(&le);
        assert_eq!(h, vec!["Name", "Size(KB)"]);
        assert_eq!(got, rows(&[(2, "算子,1.5")]));
        let mut be = vec![0xFE, 0xFF];
        be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
        assert_eq!(read_all(&be).1, got);
    }

    #[test]
    fn semicolons_and_headerless_files_are_named() {
        let open = |b: &[u8]| CsvFile::from_reader(Box::new(io::Cursor::new(b.to_vec())));
        assert!(matches!(
            open(b"Name;Size(KB)\nx;1,5\n"),
            Err(CsvOpenError::Separator(';'))
        ));
        let long = vec![b'x'; MAX_HEADER_BYTES + 10];
        assert!(matches!(open(&long), Err(CsvOpenError::NoHeaderLine)));
    }

    #[test]
    fn a_line_longer_than_a_block_is_skipped_alone() {
        let mut f = b"a,b\n1,2\n".to_vec();
        // Longer than the longest line read.
        f.extend(std::iter::repeat_n(b'x', MAX_LINE_BYTES + 5));
        f.extend_from_slice(b"\n3,4\n");
        let (_, got) = read_all(&f);
        let short: Vec<(u64, String)> = got
            .into_iter()
            .map(|(l, t)| (l, t.chars().take(40).collect()))
            .collect();
        assert_eq!(short.len(), 3, "{short:?}");
        assert_eq!(short[0], (2, "1,2".to_string()));
        assert_eq!(short[1].0, 3);
        assert!(short[1].1.contains("longer than"), "{:?}", short[1]);
        assert_eq!(short[2], (4, "3,4".to_string()));
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
            // Some quoted cells so both split paths run.
            if i % 1000 == 0 {
                s.push_str(&format!("{i},\"q,q\"\n"));
            } else {
                s.push_str(&format!("{i},{}\n", i * 2));
            }
        }
        let (_, rows) = read_all(s.as_bytes());
        assert_eq!(rows.len(), n);
        for (k, (line, text)) in rows.iter().enumerate() {
            assert!(text.starts_with(&format!("{k},")), "row {k}: {text}");
            assert_eq!(*line, k as u64 + 2, "row {k}");
        }
    }

    #[test]
    fn progress_counts_every_byte_after_the_header() {
        // Several blocks, so the bytes read while a block parses are counted too.
        let mut s = String::from("i,v\n");
        while s.len() < 3 * BLOCK_BYTES + 12345 {
            s.push_str("123456,7890\n");
        }
        let control = LoadControl::new();
        let csv = CsvFile::from_reader(Box::new(io::Cursor::new(s.clone().into_bytes()))).unwrap();
        csv.read_rows(&control, |_| Lines(Vec::new()), |l| l.0.clear())
            .unwrap();
        assert_eq!(control.bytes_done(), (s.len() - "i,v\n".len()) as u64);
    }

    #[test]
    fn pieces_cover_the_block_exactly() {
        let buf = b"ab\ncd\nef\ngh\nij\nkl\n";
        let p = split_at_line_breaks(buf, buf.len(), 4);
        assert_eq!(p.first().unwrap().0, 0);
        assert_eq!(p.last().unwrap().1, buf.len());
        for w in p.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
        for (_, e) in &p {
            assert_eq!(buf[e - 1], b'\n');
        }
    }
}
