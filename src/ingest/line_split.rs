//! Splitting one line of a CSV file into cells.
//!
//! The profilers never put a line break inside a cell, so every line is one record: a stray
//! double quote can cost at most its own line, never the rest of the file. Lines without a quote
//! are split on the delimiter directly (the common, fast case); lines with quotes go through
//! `csv_core` (RFC 4180 quoting and `""` escapes, no allocation per line); a line with an odd
//! number of quotes is malformed and rejected.

/// The cells of one record, borrowed from the line or from the splitter's buffer.
pub type Fields<'a> = [&'a [u8]];

/// Why a line could not be split.
pub const UNBALANCED_QUOTE: &str = "unbalanced double quote (the row ends inside a quoted cell)";

/// Splits lines into cells; reusable across lines (its buffers are kept).
pub struct LineSplitter {
    delimiter: u8,
    /// Built on the first quoted line (building its DFA costs more than splitting a line).
    core: Option<csv_core::Reader>,
    out: Vec<u8>,
    ends: Vec<usize>,
    /// Allocation reused for the cell slices of each line (see [`recycle`]).
    cells: Vec<&'static [u8]>,
}

/// Reuses a vector's allocation for slices of another lifetime (it is emptied first, so no
/// reference survives; the collect is done in place).
fn recycle<'b>(mut v: Vec<&[u8]>) -> Vec<&'b [u8]> {
    v.clear();
    v.into_iter().map(|_| -> &'b [u8] { &[] }).collect()
}

impl LineSplitter {
    /// A splitter for `delimiter` (`,` or TAB).
    pub fn new(delimiter: u8) -> Self {
        LineSplitter {
            delimiter,
            core: None,
            out: Vec::new(),
            ends: Vec::new(),
            cells: Vec::new(),
        }
    }

    /// Splits `line` (without its line break) and calls `f` with the cells, or with the reason
    /// the line is malformed.
    pub fn with_cells<R>(
        &mut self,
        line: &[u8],
        f: impl FnOnce(Result<&Fields<'_>, &'static str>) -> R,
    ) -> R {
        let mut cells = recycle(std::mem::take(&mut self.cells));
        if split_unquoted(line, self.delimiter, &mut cells) {
            let r = f(Ok(&cells));
            self.cells = recycle(cells);
            return r;
        }
        self.cells = recycle(cells);
        if bytecount::count(line, b'"') % 2 == 1 {
            return f(Err(UNBALANCED_QUOTE));
        }
        self.split_quoted(line);
        let mut cells = recycle(std::mem::take(&mut self.cells));
        let mut start = 0;
        for &end in &self.ends {
            cells.push(&self.out[start..end]);
            start = end;
        }
        let r = f(Ok(&cells));
        self.cells = recycle(cells);
        r
    }

    /// Tokenizes a quoted line into `out` (unescaped bytes) and `ends` (cell ends in `out`).
    fn split_quoted(&mut self, line: &[u8]) {
        use csv_core::ReadRecordResult as R;
        let delimiter = self.delimiter;
        let core = self
            .core
            .get_or_insert_with(|| csv_core::ReaderBuilder::new().delimiter(delimiter).build());
        core.reset();
        // Unquoting never lengthens a line, and there is at most one cell per delimiter + 1.
        self.out.clear();
        self.out.resize(line.len() + 1, 0);
        self.ends.clear();
        self.ends
            .resize(bytecount::count(line, self.delimiter) + 2, 0);
        let (mut nout, mut nend) = (0, 0);
        let mut input = line;
        loop {
            let (res, nin, o, e) =
                core.read_record(input, &mut self.out[nout..], &mut self.ends[nend..]);
            input = &input[nin..];
            nout += o;
            nend += e;
            match res {
                // The whole line is consumed: an empty input tells csv_core the record ends.
                R::InputEmpty => {}
                R::Record | R::End => break,
                // Cannot happen with the sizes above; grow rather than lose cells.
                R::OutputFull => self.out.resize(self.out.len() * 2 + 1, 0),
                R::OutputEndsFull => self.ends.resize(self.ends.len() * 2 + 1, 0),
            }
        }
        self.ends.truncate(nend);
        self.out.truncate(nout);
    }
}

/// Splits a line that has no double quote at `delimiter` into `cells`, eight bytes at a time
/// (SWAR: each word's delimiter and quote bytes found with a few integer operations); returns
/// false, with `cells` partly filled, as soon as it meets a quote. One pass instead of a quote
/// search and then a byte-by-byte split.
fn split_unquoted<'a>(line: &'a [u8], delimiter: u8, cells: &mut Vec<&'a [u8]>) -> bool {
    let delimiters = u64::from_ne_bytes([delimiter; 8]);
    let quotes = u64::from_ne_bytes([b'"'; 8]);
    let mut start = 0;
    let mut chunks = line.chunks_exact(8);
    for (k, chunk) in (&mut chunks).enumerate() {
        let mut w = [0u8; 8];
        w.copy_from_slice(chunk);
        let w = u64::from_le_bytes(w);
        if zero_bytes(w ^ quotes) != 0 {
            return false;
        }
        let mut found = zero_bytes(w ^ delimiters);
        while found != 0 {
            let at = 8 * k + (found.trailing_zeros() / 8) as usize;
            cells.push(line.get(start..at).unwrap_or_default());
            start = at + 1;
            found &= found - 1;
        }
    }
    let tail_from = line.len() - chunks.remainder().len();
    for (j, &b) in chunks.remainder().iter().enumerate() {
        if b == b'"' {
            return false;
        }
        if b == delimiter {
            let at = tail_from + j;
            cells.push(line.get(start..at).unwrap_or_default());
            start = at + 1;
        }
    }
    cells.push(line.get(start..).unwrap_or_default());
    true
}

/// The high bit of every byte of `v` that is zero, and no other bit (exact for any byte: the
/// low seven bits are summed apart, so nothing carries into the next byte).
#[inline]
fn zero_bytes(v: u64) -> u64 {
    const LOW_SEVENS: u64 = 0x7F7F_7F7F_7F7F_7F7F;
    !(((v & LOW_SEVENS).wrapping_add(LOW_SEVENS)) | v | LOW_SEVENS)
}

/// The cells of a record joined by the delimiter, for skipped-row reports.
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

    fn split(line: &str) -> Result<Vec<String>, &'static str> {
        LineSplitter::new(b',').with_cells(line.as_bytes(), |r| {
            r.map(|c| {
                c.iter()
                    .map(|x| String::from_utf8_lossy(x).into_owned())
                    .collect()
            })
        })
    }

    #[test]
    fn plain_quoted_and_escaped_cells() {
        assert_eq!(split("a,b,,c").unwrap(), ["a", "b", "", "c"]);
        assert_eq!(split("\"x,y\",2").unwrap(), ["x,y", "2"]);
        assert_eq!(
            split("\"1779785515596661.420\t\",6").unwrap(),
            ["1779785515596661.420\t", "6"]
        );
        assert_eq!(
            split("\"he said \"\"hi\"\"\",1").unwrap(),
            ["he said \"hi\"", "1"]
        );
        assert_eq!(split("").unwrap(), [""]);
        assert_eq!(split("\"\"").unwrap(), [""]);
    }

    #[test]
    fn an_odd_quote_is_an_error() {
        assert_eq!(split("aten::mm,\"12,3").unwrap_err(), UNBALANCED_QUOTE);
    }

    proptest::proptest! {
        /// The word-at-a-time split gives the cells `split` gives, at every length and with
        /// any bytes (UTF-8 names, bytes one off the delimiter), and any quote sends the line
        /// to the quoting path.
        #[test]
        fn word_split_equals_byte_split(line in proptest::collection::vec(
            proptest::sample::select(vec![b',', b'+', b'-', b'"', b'a', b'0', 0x80, 0xAC, 0xFF, 0, b'\t']),
            0..40,
        )) {
            let mut cells = Vec::new();
            let plain = split_unquoted(&line, b',', &mut cells);
            proptest::prop_assert_eq!(plain, !line.contains(&b'"'));
            if plain {
                let want: Vec<&[u8]> = line.split(|&b| b == b',').collect();
                proptest::prop_assert_eq!(cells, want);
            }
        }
    }

    #[test]
    fn many_quoted_lines_reuse_the_splitter() {
        let mut s = LineSplitter::new(b'\t');
        for i in 0..100 {
            let line = format!("\"{i}\"\tb\t\"c\"");
            let n = s.with_cells(line.as_bytes(), |r| {
                let c = r.unwrap();
                assert_eq!(c[0], i.to_string().as_bytes());
                c.len()
            });
            assert_eq!(n, 3);
        }
    }
}
