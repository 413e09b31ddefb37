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
    /// One record; `line` is its 1-based line number in the file.
    fn row(&mut self, rec: &ByteRecord, line: u64);
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

    /// Reads every remaining record into sinks made by `make_sink`, one per piece, in file order.
    pub fn read_rows<S, F>(
        mut self,
        control: &LoadControl,
        make_sink: F,
    ) -> Result<Vec<S>, ChunkError>
    where
        S: RowSink,
        F: Fn() -> S + Sync,
    {
        let mut out = Vec::new();
        let pieces_per_block = (rayon::current_num_threads() * 2).max(2);
        let mut buf = std::mem::take(&mut self.carry);
        loop {
            if control.is_cancelled() {
                return Err(ChunkError::Cancelled);
            }
            let before = buf.len();
            while !self.eof && buf.len() < BLOCK_BYTES {
                let want = BLOCK_BYTES - buf.len();
                let got = read_some(&mut self.file, &mut buf, want)?;
                self.eof = got == 0;
            }
            control.add_done((buf.len() - before) as u64);
            let bounds = record_ends(&buf);
            // Everything up to the last boundary, or the whole buffer at end of file.
            let cut = if self.eof {
                buf.len()
            } else {
                bounds.last().copied().unwrap_or(0)
            };
            if cut == 0 && !self.eof {
                // One record longer than a block: read more before cutting.
                let got = read_some(&mut self.file, &mut buf, BLOCK_BYTES)?;
                self.eof = got == 0;
                control.add_done(got as u64);
                continue;
            }
            let usable: Vec<usize> = bounds.iter().copied().filter(|&b| b <= cut).collect();
            let pieces = split_pieces(cut, &usable, pieces_per_block);
            let base_line = self.next_line;
            let results: Vec<S> = pieces
                .par_iter()
                .map(|&(start, end, records_before)| {
                    let mut sink = make_sink();
                    parse_piece(
                        &buf[start..end],
                        base_line + records_before as u64,
                        &mut sink,
                    );
                    sink
                })
                .collect();
            out.extend(results);
            self.next_line +=
                usable.len() as u64 + u64::from(cut > usable.last().copied().unwrap_or(0));
            buf.drain(..cut);
            if self.eof && buf.is_empty() {
                break;
            }
        }
        Ok(out)
    }
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
    if memchr::memchr(b'"', buf).is_none() {
        ends.extend(memchr::memchr_iter(b'\n', buf).map(|p| p + 1));
        return ends;
    }
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

/// Splits `[0, cut)` into about `n` pieces at record ends: (start, end, records before start).
fn split_pieces(cut: usize, ends: &[usize], n: usize) -> Vec<(usize, usize, usize)> {
    let mut pieces = Vec::with_capacity(n);
    let mut start = 0;
    let mut records_before = 0;
    for k in 1..n {
        let target = cut * k / n;
        // The last record end at or before the target.
        let idx = ends.partition_point(|&e| e <= target);
        if idx == 0 || idx <= records_before {
            continue;
        }
        let end = ends[idx - 1];
        if end > start {
            pieces.push((start, end, records_before));
            start = end;
            records_before = idx;
        }
    }
    if cut > start {
        pieces.push((start, cut, records_before));
    }
    pieces
}

fn parse_piece<S: RowSink>(bytes: &[u8], first_line: u64, sink: &mut S) {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut rec = ByteRecord::new();
    loop {
        match rdr.read_byte_record(&mut rec) {
            Ok(true) => {
                let line = first_line + rec.position().map_or(0, |p| p.line().saturating_sub(1));
                sink.row(&rec, line);
            }
            Ok(false) => break,
            // The csv crate only errors on I/O (impossible on a slice) or UTF-8 (not used for
            // byte records); stop this piece rather than loop.
            Err(_) => break,
        }
    }
}

/// The cells of a record joined by commas, for skipped-row reports.
pub fn record_text(rec: &ByteRecord) -> String {
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
        fn row(&mut self, rec: &ByteRecord, line: u64) {
            self.0.push((line, record_text(rec)));
        }
    }

    fn read_all(content: &[u8]) -> (Vec<String>, Vec<(u64, String)>) {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(content).unwrap();
        let csv = CsvFile::open(f.path()).unwrap();
        let header = csv.header().to_vec();
        let sinks = csv
            .read_rows(&LoadControl::new(), || Lines(Vec::new()))
            .unwrap();
        (header, sinks.into_iter().flat_map(|s| s.0).collect())
    }

    #[test]
    fn header_bom_crlf_quotes_and_line_numbers() {
        let (h, rows) = read_all(b"\xEF\xBB\xBFa,\"b\",c\r\n1,\"x,y\",3\r\n4,5,6\r\n7,8");
        assert_eq!(h, vec!["a", "b", "c"]);
        assert_eq!(
            rows,
            vec![
                (2, "1,x,y,3".to_string()),
                (3, "4,5,6".to_string()),
                (4, "7,8".to_string())
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
        for (k, (_, text)) in rows.iter().enumerate() {
            assert!(text.starts_with(&format!("{k},")), "row {k}: {text}");
        }
    }

    #[test]
    fn pieces_cover_the_block_exactly() {
        let ends = vec![3, 7, 12, 20, 21, 30];
        let p = split_pieces(30, &ends, 4);
        assert_eq!(p.first().unwrap().0, 0);
        assert_eq!(p.last().unwrap().1, 30);
        for w in p.windows(2) {
            assert_eq!(w[0].1, w[1].0);
        }
    }
}
