//! A big CSV file's records read on every core, with the same records, in the same order, as
//! one `simd_csv` reader from its start would read.
//!
//! The file is cut into parts at lines that look like the start of a row (`is_row_start`),
//! and each part is read by a reader of its own. A quoted cell may hold line breaks (an
//! msMemScope dump's call stacks), so a cut is only a guess: it is right when the reader of
//! the part before it ends its last record exactly there. Each part's reader checks that; from
//! the first part whose end is not its successor's cut, the rest of the file is read again on
//! one core, from that part's own cut (which the part before it confirmed). A wrong guess costs
//! time, never a record.
//!
//! Hand-written: the CSV readers (`csv`, `simd_csv`) read one stream, and the parallel CSV readers on crates.io
//! split at every line break, which breaks a quoted cell that holds one.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::part_pool::{each_part, read_up_to};

/// What the records of one part go to (a part read again after a wrong cut has told its first
/// sink about the bytes it read: a progress bar may pass 100 % in that rare case).
pub trait RecordSink: Send {
    /// One record, its cells as bytes (a sink checks as UTF-8 what it reads as text, and only
    /// that: a check of every record's bytes was 5 % of a 1 GB dump's load); `false` stops the
    /// read (the user cancelled).
    fn record(&mut self, record: &simd_csv::ByteRecord) -> bool;
    /// A record that could not be read (a CSV error that is not an I/O one).
    fn unreadable(&mut self);
    /// The file's last record when it does not end as a record does ([`Unfinished`]: a copy
    /// cut short, a file still being written); `false` stops the read. By default read as any
    /// record.
    fn unfinished(&mut self, record: &simd_csv::ByteRecord, how: Unfinished) -> bool {
        let _ = how;
        self.record(record)
    }
    /// `bytes` more of the part were read (told about every [`PROGRESS_BYTES`] or so, and at
    /// its end): for a progress bar. By default nothing.
    fn read(&mut self, bytes: u64) {
        let _ = bytes;
    }
}

/// How a file's last record ends when it does not end with a line break.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unfinished {
    /// Inside a quoted cell (an odd number of quotes: the reader reads every quote as the
    /// start or the end of a quoted part): the file stops in the middle of the cell.
    InsideQuotes,
    /// Outside quotes, with no line break after it: cut short in the middle of the row, or
    /// written without a last line break (the sink tells which by the record's cells).
    WithoutLineBreak,
}

/// About how often a part tells its sink how far it has read.
pub const PROGRESS_BYTES: u64 = 1 << 20;

/// Why a read stopped.
#[derive(Debug)]
pub enum PartsError {
    /// The file could not be read.
    Io(simd_csv::Error),
    /// A sink said stop.
    Stopped,
}

/// How a part's read ended.
enum Ended {
    /// At the next part's cut (or at the end of the file, for the last part).
    AtCut,
    /// Elsewhere: the cut was not a row's start.
    Astray,
}

/// Reads the records of the CSV file at `path` from offset `start` (a record's start: past the
/// header) to its end, in parts of about `part` bytes on every core. A reader of the file's
/// records (no header, rows of any length) gives `sink()` of each part its records in file
/// order; the sinks come back in file order.
pub fn read_in_parts<S: RecordSink>(
    path: &Path,
    start: u64,
    part: u64,
    is_row_start: &(dyn Fn(&[u8]) -> bool + Sync),
    sink: &(dyn Fn() -> S + Sync),
) -> Result<Vec<S>, PartsError> {
    let io = |e: std::io::Error| PartsError::Io(simd_csv::Error::from(e));
    let len = super::safe_fs::open_regular(path)
        .and_then(|f| f.metadata())
        .map_err(io)?
        .len();
    let part = part.max(1);
    let guesses = len.saturating_sub(start) / part;
    let mut cuts = vec![start];
    if guesses > 0 {
        let guesses = usize::try_from(guesses).unwrap_or(usize::MAX);
        let found = each_part(guesses, "csv_cut", &|k| {
            let lo = start + (k as u64 + 1) * part;
            row_start_after(path, lo, lo.saturating_add(part).min(len), is_row_start)
        });
        if found.len() != guesses {
            return Err(found
                .into_iter()
                .find_map(Result::err)
                .map_or_else(|| io(std::io::Error::other("a thread failed")), io));
        }
        cuts.extend(found.into_iter().flatten().flatten());
    }
    cuts.dedup();
    let parts = cuts.len();
    let read = each_part(parts, "csv_part", &|k| {
        let end = cuts.get(k + 1).copied();
        read_part(path, cuts[k], end, len, sink)
    });
    if read.len() != parts {
        return Err(read
            .into_iter()
            .find_map(Result::err)
            .unwrap_or_else(|| io(std::io::Error::other("a thread failed"))));
    }
    let mut sinks = Vec::with_capacity(parts);
    for (k, r) in read.into_iter().enumerate() {
        let (s, ended) = r?;
        if let Ended::Astray = ended {
            // The parts from here on were cut wrong: read again on one core from this one's
            // cut, which the part before confirmed.
            let (s, _) = read_part(path, cuts[k], None, len, sink)?;
            sinks.push(s);
            return Ok(sinks);
        }
        sinks.push(s);
    }
    Ok(sinks)
}

/// The offset of the first line that starts after offset `lo` and before `hi` and that
/// `is_row_start` takes for a row's start; `None` when none does.
fn row_start_after(
    path: &Path,
    lo: u64,
    hi: u64,
    is_row_start: &(dyn Fn(&[u8]) -> bool + Sync),
) -> std::io::Result<Option<u64>> {
    /// How much of a line `is_row_start` sees at most.
    const LOOK: usize = 256;
    let mut file = super::safe_fs::open_regular(path)?;
    file.seek(SeekFrom::Start(lo))?;
    let mut file = file.take(hi.saturating_sub(lo).saturating_add(LOOK as u64));
    let mut buf = vec![0u8; 64 << 10];
    // `buf[..have]` holds the bytes from file offset `base`.
    let (mut base, mut have) = (lo, 0usize);
    loop {
        let n = read_up_to(&mut file, &mut buf[have..])?;
        have += n;
        let last = n == 0;
        // Where the bytes kept for the next round start: past every line looked at.
        let mut keep = have;
        let mut from = 0;
        while let Some(k) = memchr::memchr(b'\n', &buf[from..have]) {
            let line = from + k + 1;
            let at = base + line as u64;
            if at >= hi {
                return Ok(None);
            }
            if have - line < LOOK && !last {
                // Read on from its line feed, so that the line is seen whole (up to LOOK).
                keep = from + k;
                break;
            }
            if is_row_start(&buf[line..have.min(line + LOOK)]) {
                return Ok(Some(at));
            }
            from = line;
        }
        if last {
            return Ok(None);
        }
        buf.copy_within(keep..have, 0);
        base += keep as u64;
        have -= keep;
    }
}

/// Reads the records from offset `cut` (a record's start) into a new sink: up to offset `end`
/// (another part's cut), or to the end of the file, `file_len` bytes long when the read began
/// (its last record is looked at for how it ends, [`RecordSink::unfinished`]). How it ended:
/// at `end` when its last record ends there.
fn read_part<S: RecordSink>(
    path: &Path,
    cut: u64,
    end: Option<u64>,
    file_len: u64,
    sink: &(dyn Fn() -> S + Sync),
) -> Result<(S, Ended), PartsError> {
    let mut file =
        super::safe_fs::open_regular(path).map_err(|e| PartsError::Io(simd_csv::Error::from(e)))?;
    file.seek(SeekFrom::Start(cut))
        .map_err(|e| PartsError::Io(simd_csv::Error::from(e)))?;
    // Reads of 64 KiB (the default 8 KiB is a system call for every few rows).
    let mut reader = simd_csv::ReaderBuilder::with_capacity(64 << 10)
        .flexible(true)
        .has_headers(false)
        .from_reader(file);
    let mut s = sink();
    let mut record = simd_csv::ByteRecord::new();
    let len = end.map(|e| e - cut);
    // How far the sink was told the part is read.
    let mut told = 0;
    loop {
        let at = reader.position();
        if at >= told + PROGRESS_BYTES {
            s.read(at - told);
            told = at;
        }
        if let Some(len) = len {
            // Where the next record starts (after the last one's line feed; a blank line's
            // is read with the record after it). A cut follows a line feed: a reader stopped
            // on that one is in step with one that starts at the cut.
            if at + 1 >= len {
                s.read(len.saturating_sub(told));
                let ended = if at + 1 == len || at == len {
                    Ended::AtCut
                } else {
                    Ended::Astray
                };
                return Ok((s, ended));
            }
        }
        match reader.read_byte_record(&mut record) {
            Ok(false) => {
                s.read(reader.position().saturating_sub(told));
                let ended = if len.is_none() {
                    Ended::AtCut
                } else {
                    // The file ended before the cut: it changed while read.
                    Ended::Astray
                };
                return Ok((s, ended));
            }
            Ok(true) => {
                let to = cut.saturating_add(reader.position());
                // The file's last record (one compare a record; a file that grew while read
                // has its old end's record looked at, which ends as a record does).
                let go_on = if end.is_none() && to >= file_len {
                    last_record(path, cut.saturating_add(at), to, &record, &mut s)?
                } else {
                    s.record(&record)
                };
                if !go_on {
                    return Err(PartsError::Stopped);
                }
            }
            Err(e) if e.is_io_error() => return Err(PartsError::Io(e)),
            Err(_) => s.unreadable(),
        }
    }
}

/// The file's last record, in bytes `from..to` of the file at `path`, to `s`: as
/// [`RecordSink::unfinished`] when it does not end as a record does. Once a file: kept out of
/// the records' loop.
#[cold]
#[inline(never)]
fn last_record<S: RecordSink>(
    path: &Path,
    from: u64,
    to: u64,
    record: &simd_csv::ByteRecord,
    s: &mut S,
) -> Result<bool, PartsError> {
    let how = how_it_ends(path, from, to).map_err(|e| PartsError::Io(simd_csv::Error::from(e)))?;
    Ok(match how {
        Some(how) => s.unfinished(record, how),
        None => s.record(record),
    })
}

/// How the record in bytes `from..to` of the file at `path` ends, when not with a line break
/// (a CR or an LF) outside quotes. Streamed: a stray quote may make the last record most of
/// the file.
fn how_it_ends(path: &Path, from: u64, to: u64) -> std::io::Result<Option<Unfinished>> {
    let mut file = super::safe_fs::open_regular(path)?;
    file.seek(SeekFrom::Start(from))?;
    let mut file = file.take(to.saturating_sub(from));
    let mut buf = vec![0u8; 64 << 10];
    let (mut quotes, mut last) = (0usize, None);
    loop {
        let n = read_up_to(&mut file, &mut buf)?;
        if n == 0 {
            break;
        }
        quotes += memchr::memchr_iter(b'"', &buf[..n]).count();
        last = buf[..n].last().copied();
    }
    Ok(if quotes % 2 == 1 {
        Some(Unfinished::InsideQuotes)
    } else if matches!(last, Some(b'\n' | b'\r')) {
        None
    } else {
        Some(Unfinished::WithoutLineBreak)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Every record's cells, and the unreadable ones as `None`.
    /// And how many bytes the part said it read, and the records said to be unfinished (their
    /// index in the part's list).
    #[derive(Default)]
    struct Collect(Vec<Option<Vec<Vec<u8>>>>, u64, Vec<(usize, Unfinished)>);

    impl RecordSink for Collect {
        fn record(&mut self, record: &simd_csv::ByteRecord) -> bool {
            self.0
                .push(Some(record.iter().map(<[u8]>::to_vec).collect()));
            true
        }
        fn unfinished(&mut self, record: &simd_csv::ByteRecord, how: Unfinished) -> bool {
            self.2.push((self.0.len(), how));
            self.record(record)
        }
        fn unreadable(&mut self) {
            self.0.push(None);
        }
        fn read(&mut self, bytes: u64) {
            self.1 += bytes;
        }
    }

    /// What one reader from `start` reads. (Its cells as bytes: `simd_csv`'s text records
    /// check a record's bytes as a whole, and a cell of a malformed quoted one can start
    /// inside a character, a `str` that is no UTF-8.)
    fn serial(bytes: &[u8], start: usize) -> Vec<Option<Vec<Vec<u8>>>> {
        let mut reader = simd_csv::ReaderBuilder::new()
            .flexible(true)
            .has_headers(false)
            .from_reader(&bytes[start..]);
        let mut out = Collect::default();
        let mut record = simd_csv::ByteRecord::new();
        loop {
            match reader.read_byte_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {
                    out.record(&record);
                }
                Err(_) => out.unreadable(),
            }
        }
        out.0
    }

    /// msMemScope's guess: a line that starts with digits and a comma.
    fn digits_then_comma(line: &[u8]) -> bool {
        let n = line.iter().take_while(|b| b.is_ascii_digit()).count();
        n > 0 && line.get(n) == Some(&b',')
    }

    /// A cell of every kind a dump may hold, and some it should not: quoted line breaks
    /// (some that look like a row's start), doubled quotes, stray quotes, CR LF, blank lines,
    /// bytes that are not UTF-8.
    fn cell() -> impl Strategy<Value = String> {
        prop_oneof![
            4 => "[a-z0-9_]{0,12}",
            2 => "\"[a-z/ ]{0,8}(\n[0-9]{1,3},[A-Z]{1,5}[a-z ]{0,6}){0,3}\"",
            1 => "\"[a-z]{0,4}\"\"[a-z]{0,4}\"",
            1 => "[a-z]{0,3}\"[a-z]{0,3}",
            1 => Just("\u{fffd}".to_string()),
        ]
    }

    fn row() -> impl Strategy<Value = String> {
        (
            0u32..1000,
            proptest::collection::vec(cell(), 0..5),
            prop_oneof![Just("\n"), Just("\r\n"), Just("\n\n"), Just("\r")],
        )
            .prop_map(|(id, cells, end)| {
                let mut r = id.to_string();
                for c in cells {
                    r.push(',');
                    r.push_str(&c);
                }
                r.push_str(end);
                r
            })
    }

    proptest! {
        /// On random cuts (parts of 1 to 200 bytes) of random rows, the records read in parts
        /// are those one reader reads, in order: where a cut falls inside a quoted cell, the
        /// read on one core takes over.
        #[test]
        fn records_read_in_parts_are_those_one_reader_reads(
            rows in proptest::collection::vec(row(), 0..60),
            part in 1u64..200,
            bad_byte in any::<bool>(),
        ) {
            let mut bytes = b"ID,Event,Attr\n".to_vec();
            for r in &rows {
                bytes.extend_from_slice(r.as_bytes());
            }
            if bad_byte && bytes.len() > 20 {
                let at = bytes.len() / 2;
                bytes[at] = 0xff;
            }
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("dump.csv");
            std::fs::write(&path, &bytes).unwrap();
            let start = 14;
            let parts = read_in_parts(&path, start as u64, part, &digits_then_comma, &Collect::default)
                .unwrap_or_else(|e| panic!("{e:?}"));
            // The parts kept said they read every byte after the header, once.
            let told: u64 = parts.iter().map(|c| c.1).sum();
            prop_assert_eq!(told, (bytes.len() - start) as u64);
            // Only the last record may be unfinished, and it is when the bytes after the
            // header hold an odd number of quotes (every record before it ends outside
            // quotes) or do not end with a line break: counted here on the bytes alone.
            let mut unfinished = Vec::new();
            let mut before = 0;
            for c in &parts {
                unfinished.extend(c.2.iter().map(|&(i, how)| (before + i, how)));
                before += c.0.len();
            }
            let read: Vec<_> = parts.into_iter().flat_map(|c| c.0).collect();
            let tail = &bytes[start..];
            let odd = tail.iter().filter(|&&b| b == b'"').count() % 2 == 1;
            let broken = tail.last().is_some_and(|b| !matches!(b, b'\n' | b'\r'));
            // (A record that is no text reaches its sink too: the sink tells.)
            let want = match read.last() {
                Some(_) if odd => vec![(read.len() - 1, Unfinished::InsideQuotes)],
                Some(_) if broken => vec![(read.len() - 1, Unfinished::WithoutLineBreak)],
                _ => vec![],
            };
            prop_assert_eq!(unfinished, want);
            prop_assert_eq!(read, serial(&bytes, start));
        }
    }

    #[test]
    fn a_file_cut_short_says_how_its_last_record_ends() {
        use Unfinished::{InsideQuotes, WithoutLineBreak};
        let head = "ID,Event,Stack\n1,MALLOC,\"frame a\nframe b\"\n";
        for (last, want) in [
            ("2,FREE,\"frame a\nframe b\"\n", None),
            ("2,FREE,\"a \"\"quoted\"\" b\"\r\n", None),
            ("2,FREE,\"frame a\nframe b\"", Some(WithoutLineBreak)),
            ("2,FR", Some(WithoutLineBreak)),
            ("2,FREE,\"frame a\nfra", Some(InsideQuotes)),
            // Cut just after one of a quoted stack's line breaks.
            ("2,FREE,\"frame a\n", Some(InsideQuotes)),
        ] {
            let text = format!("{head}{last}");
            let dir = tempfile::tempdir().unwrap();
            let path = dir.path().join("dump.csv");
            std::fs::write(&path, &text).unwrap();
            for part in [1, 7, 1 << 20] {
                let parts =
                    read_in_parts(&path, 15, part, &digits_then_comma, &Collect::default).unwrap();
                let ends: Vec<_> = parts.iter().flat_map(|c| c.2.iter().map(|e| e.1)).collect();
                assert_eq!(
                    ends,
                    want.into_iter().collect::<Vec<_>>(),
                    "{last:?} in parts of {part}"
                );
                let last_part = parts.last().unwrap();
                if want.is_some() {
                    assert_eq!(last_part.2[0].0, last_part.0.len() - 1, "{last:?}");
                }
                let read: Vec<_> = parts.into_iter().flat_map(|c| c.0).collect();
                assert_eq!(read.len(), 2, "{last:?}");
            }
        }
    }

    #[test]
    fn a_cut_inside_a_quoted_cell_is_read_again_on_one_core() {
        // The quoted stack holds a line that looks like a row: the guess at it is wrong.
        let mut text = String::from("ID,Event,Stack\n");
        for k in 0..200 {
            text.push_str(&format!(
                "{k},MALLOC,\"frame a\n12,FREE,not a row\nframe b\"\n"
            ));
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dump.csv");
        std::fs::write(&path, &text).unwrap();
        let parts = read_in_parts(&path, 15, 256, &digits_then_comma, &Collect::default).unwrap();
        let read: Vec<_> = parts.into_iter().flat_map(|c| c.0).collect();
        assert_eq!(read.len(), 200);
        assert_eq!(read, serial(text.as_bytes(), 15));
    }

    #[test]
    fn a_sink_that_says_stop_stops_the_read() {
        struct Stop;
        impl RecordSink for Stop {
            fn record(&mut self, _: &simd_csv::ByteRecord) -> bool {
                false
            }
            fn unreadable(&mut self) {}
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("dump.csv");
        std::fs::write(&path, "h\n1,a\n2,b\n3,c\n").unwrap();
        assert!(matches!(
            read_in_parts(&path, 2, 4, &digits_then_comma, &|| Stop),
            Err(PartsError::Stopped)
        ));
    }
}
