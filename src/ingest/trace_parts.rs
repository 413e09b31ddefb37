//! A plain (not gzipped) Chrome trace read in parts on every core: the file is cut where an
//! event object seems to start, each part is tokenized by a sink of its own
//! ([`super::chrome_trace::for_each_event_of_part`]), and the sinks come back in file order
//! for the caller to merge.
//!
//! A cut is found by a guess (a `{` after `},` and whitespace), and the guess is checked, not
//! trusted: each part must end between events, in the state the next part was read from.
//! Then every part was read exactly as a whole read would have read it. When one does not
//! (the `},{` was inside a string, say), the answer is `None` and the caller reads the file
//! whole. A file smaller than two parts, or without a cut, is not split either. A gzipped
//! trace cannot be cut: it is read whole.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use super::chrome_trace::{
    BLOCK, EventSink, PartStart, TokenizeError, for_each_event_of_part, form_of,
};
use super::chunks::LoadControl;
use super::part_pool::{each_part, read_up_to};

/// Bytes of a part (the last is longer).
pub const PART: u64 = 64 << 20;
/// How far past a part's nominal start a cut is looked for.
const SEARCH: usize = 1 << 20;

/// What a trace read in parts gave.
pub struct Parts<S> {
    /// Each part's sink with its event count, in file order.
    pub sinks: Vec<(S, u64)>,
    /// The file was cut short (its last part's [`PartEnd::cut_short`]).
    ///
    /// [`PartEnd::cut_short`]: super::chrome_trace::PartEnd::cut_short
    pub cut_short: bool,
}

/// The parts of the trace at `path`, read on every core; `None` when the file is not read in
/// parts (too small, no cut found, or a cut that was not an event's start).
pub fn in_parts<S: EventSink + Send>(
    path: &Path,
    part: u64,
    make: &(dyn Fn() -> S + Sync),
    control: &LoadControl,
) -> Result<Option<Parts<S>>, TokenizeError> {
    let mut file = super::safe_fs::open_regular(path).map_err(TokenizeError::Io)?;
    let len = file.metadata().map_err(TokenizeError::Io)?.len();
    let part = part.max(1);
    // Cut on one core too: the same reads, and the same answer, as on many.
    if len < part.saturating_mul(2) {
        return Ok(None);
    }
    let mut head = [0u8; 64];
    let got = read_up_to(&mut file, &mut head).map_err(TokenizeError::Io)?;
    let Some(form) = form_of(&head[..got]) else {
        return Ok(None);
    };
    let cuts = cuts(&mut file, len, part).map_err(TokenizeError::Io)?;
    if cuts.is_empty() {
        return Ok(None);
    }
    // Part 0 from the file's start (a document), the others from their cut (an event).
    let mut bounds = vec![0];
    bounds.extend(&cuts);
    bounds.push(len);
    let parts = bounds.len() - 1;
    let done = each_part(parts, "trace_part", &|i| {
        read_part(path, bounds[i], bounds[i + 1], i == 0, form, make, control)
    });
    if done.len() != parts {
        return match done.into_iter().find_map(Result::err) {
            Some(e) => Err(e),
            None => Ok(None), // a thread died: read it whole
        };
    }
    let mut out = Vec::with_capacity(parts);
    let mut cut_short = false;
    for (i, r) in done.into_iter().enumerate() {
        let (sink, outcome) = r?;
        // Every part but the last must end where the next was read from.
        if i + 1 < parts && !outcome.between_events {
            return Ok(None);
        }
        cut_short = outcome.cut_short;
        out.push((sink, outcome.events));
    }
    Ok(Some(Parts {
        sinks: out,
        cut_short,
    }))
}

/// What reading one part gave.
type PartResult<S> = Result<(S, Outcome), TokenizeError>;

/// A part's event count, whether it ended between events and whether the file was cut short
/// there (the last part's says).
struct Outcome {
    events: u64,
    between_events: bool,
    cut_short: bool,
}

/// Tokenizes `lo..hi` of the file at `path` into a new sink.
fn read_part<S: EventSink>(
    path: &Path,
    lo: u64,
    hi: u64,
    first: bool,
    form: super::chrome_trace::Form,
    make: &(dyn Fn() -> S + Sync),
    control: &LoadControl,
) -> PartResult<S> {
    let mut file = super::safe_fs::open_regular(path).map_err(TokenizeError::Io)?;
    file.seek(SeekFrom::Start(lo)).map_err(TokenizeError::Io)?;
    let reader = file.take(hi - lo);
    let mut sink = make();
    let start = if first {
        PartStart::Document
    } else {
        PartStart::Event(form)
    };
    let end = for_each_event_of_part(reader, start, BLOCK, control, &mut sink)?;
    Ok((
        sink,
        Outcome {
            events: end.events,
            between_events: end.between_events,
            cut_short: end.cut_short,
        },
    ))
}

/// Where the parts after the first start: the first guessed event start past each multiple of
/// `part` (none within [`SEARCH`] bytes: no cut there), in increasing order.
fn cuts(file: &mut std::fs::File, len: u64, part: u64) -> std::io::Result<Vec<u64>> {
    let mut out: Vec<u64> = Vec::new();
    let mut window = vec![0u8; SEARCH];
    let mut at = part;
    while at + part / 2 < len {
        file.seek(SeekFrom::Start(at))?;
        let n = read_up_to(file, &mut window)?;
        if let Some(k) = event_start(&window[..n])
            && out.last().is_none_or(|&last| at + k as u64 > last)
        {
            out.push(at + k as u64);
        }
        at += part;
    }
    Ok(out)
}

/// The first `{` in `buf` that follows `}`, `,` and whitespace: where the next event of a
/// trace's array seems to start.
fn event_start(buf: &[u8]) -> Option<usize> {
    let mut from = 0;
    while let Some(k) = memchr::memchr(b'{', &buf[from..]) {
        let at = from + k;
        let before = buf[..at].trim_ascii_end();
        if let Some(rest) = before.strip_suffix(b",")
            && rest.trim_ascii_end().ends_with(b"}")
        {
            return Some(at);
        }
        from = at + 1;
    }
    None
}
