//! The Chrome trace tokenizer: the event objects of a Chrome trace (`trace_view.json`, a PyTorch
//! profiler trace), one at a time, as bytes, without building a DOM and without knowing what
//! any event means. What the events mean is the sink's business ([`EventSink`], as ripgrep's
//! `Sink` is a searcher's): the Ascend and PyTorch semantics in [`super::trace_view`].
//!
//! The file can be hundreds of MB. It is read in blocks; a small state machine (strings,
//! escapes, brace depth) finds each event object of the top-level array (or of the
//! `traceEvents` array of the object form), skipping everything between at `memchr` speed. An
//! event larger than [`MAX_EVENT`] is skipped, not buffered. The result does not depend on
//! where the blocks end (the fuzz target compares block sizes). Hand-written because no JSON
//! crate streams the elements of one big array from a reader at this speed (serde_json's reader
//! path goes a byte at a time).

use std::io::Read;

use memchr::{memchr2, memchr3};

use super::chunks::LoadControl;

/// Bytes read at a time: small enough that the kernel's copy of them lands in the core's
/// cache and is scanned from there (8 MiB blocks went to memory and back: the 1 GB trace's
/// complete load took 6 % longer, its copies ~13 % of its CPU).
pub const BLOCK: usize = 256 << 10;
/// An event larger than this is skipped, not buffered (a hostile file cannot make us hold it).
pub const MAX_EVENT: usize = 64 << 20;

/// What receives the event objects of a trace.
pub trait EventSink {
    /// One event object, `{` to `}` inclusive.
    fn event(&mut self, bytes: &[u8]);

    /// The length of the event object that opens at `bytes[0]`, when the sink has read it
    /// whole and needs nothing more of it: the tokenizer then jumps over it without scanning
    /// its strings (it still counts). The length must be the object's exact extent. `None`
    /// (the default): tokenize it and hand it to [`Self::event`].
    fn skip(&mut self, bytes: &[u8]) -> Option<usize> {
        let _ = bytes;
        None
    }
}

/// Why a trace could not be tokenized.
#[derive(Debug)]
pub enum TokenizeError {
    /// The reader failed.
    Io(std::io::Error),
    /// Not a JSON array or object at the top.
    NotATrace,
    /// The user cancelled.
    Cancelled,
}

/// Hands every event object of the trace in `file` to `sink`, reading `block` bytes at a time;
/// returns how many event objects there were (an oversized one counts, but is not handed) and
/// whether the trace was cut short ([`PartEnd::cut_short`]).
pub fn for_each_event(
    file: impl Read,
    block: usize,
    control: &LoadControl,
    sink: &mut impl EventSink,
) -> Result<PartEnd, TokenizeError> {
    for_each_event_of_part(file, PartStart::Document, block, control, sink)
}

/// The form of a trace whose first bytes are `head`: `None` when it is not a JSON array or
/// object (or `head` holds only whitespace).
pub fn form_of(head: &[u8]) -> Option<Form> {
    let head = head.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(head);
    match head.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => Some(Form::Array),
        Some(b'{') => Some(Form::Object),
        _ => None,
    }
}

/// What a part of a trace read on its own found ([`for_each_event_of_part`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartEnd {
    /// Event objects in the part.
    pub events: u64,
    /// The part ended between two events of the trace (outside every string, at the events'
    /// depth): the state the next part was read from. When a part does not, the next part's
    /// start was not an event's start and its events are not to be trusted.
    pub between_events: bool,
    /// The part (the file's last, or the whole file) stops inside an event, a string or the
    /// object form's top-level object: a file cut short (a copy broken off, a profiler still
    /// writing). An array form that stops between its events is not: Chrome's format lets
    /// the closing `]` be left out.
    pub cut_short: bool,
}

/// Where a part of a trace starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartStart {
    /// At the file's start.
    Document,
    /// Where an event object of a trace of this form starts (or after the last one).
    Event(Form),
}

/// [`for_each_event`] over a part of a trace that starts at `start`. Read in parts, a trace
/// gives what it gives read whole when every part but the last ends between events
/// ([`PartEnd::between_events`]): each part was then read from the state the whole read would
/// have been in there.
pub fn for_each_event_of_part(
    file: impl Read,
    start: PartStart,
    block: usize,
    control: &LoadControl,
    sink: &mut impl EventSink,
) -> Result<PartEnd, TokenizeError> {
    let mut scanner = Scanner::new();
    if let PartStart::Event(form) = start {
        scanner.form = form;
        scanner.depth = scanner.event_depth();
    }
    let s = scan_reader(file, scanner, block, control, sink)?;
    Ok(PartEnd {
        events: s.events,
        between_events: !s.in_string
            && !s.escaped
            && !s.oversized
            && s.event_start.is_none()
            && s.depth == s.event_depth(),
        cut_short: s.in_string || s.depth > 0,
    })
}

/// Runs `scanner` over `file` to its end.
fn scan_reader(
    mut file: impl Read,
    mut scanner: Scanner,
    block: usize,
    control: &LoadControl,
    sink: &mut impl EventSink,
) -> Result<Scanner, TokenizeError> {
    let block = block.max(1);
    // The bytes read and not yet handed are `buf[..len]`; each block is read straight into the
    // room after them. The thread's buffer of its last read is used again (a part of a trace
    // read in parts is one read: a new buffer each time was zeroed page by page).
    let mut buf: Vec<u8> = READ_BUFFER.with(std::cell::Cell::take);
    let mut len = 0usize;
    let result = loop {
        if control.is_cancelled() {
            break Err(TokenizeError::Cancelled);
        }
        if buf.len() < len + block {
            buf.resize(len + block, 0);
        }
        let n = match file.read(&mut buf[len..len + block]) {
            Ok(0) => break Ok(()),
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => break Err(TokenizeError::Io(e)),
        };
        len += n;
        let Ok(keep_from) = scanner.scan(&buf[..len], sink) else {
            break Err(TokenizeError::NotATrace);
        };
        buf.copy_within(keep_from..len, 0);
        len -= keep_from;
        scanner.rebase(keep_from);
    };
    // Kept for the thread's next read unless an outsized event grew it.
    if buf.capacity() <= 4 * block {
        READ_BUFFER.with(|b| b.replace(buf));
    }
    result?;
    if scanner.form == Form::Unknown {
        return Err(TokenizeError::NotATrace);
    }
    Ok(scanner)
}

thread_local! {
    /// The buffer a thread's last [`scan_reader`] read into, for its next.
    static READ_BUFFER: std::cell::Cell<Vec<u8>> = const { std::cell::Cell::new(Vec::new()) };
}

/// Where a trace's events are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// Not known yet.
    Unknown,
    /// `[ {event}, … ]`: events open at brace depth 0.
    Array,
    /// `{"traceEvents": [ {event}, … ], …}`: events open at brace depth 1.
    Object,
}

/// The structural state carried from one block to the next.
struct Scanner {
    form: Form,
    /// Position in the buffer where scanning resumes.
    pos: usize,
    in_string: bool,
    escaped: bool,
    depth: u32,
    /// Start of the event being read, in the buffer.
    event_start: Option<usize>,
    /// The event being read outgrew [`MAX_EVENT`]: its bytes are dropped, it is not parsed.
    oversized: bool,
    events: u64,
}

impl Scanner {
    fn new() -> Scanner {
        Scanner {
            form: Form::Unknown,
            pos: 0,
            in_string: false,
            escaped: false,
            depth: 0,
            event_start: None,
            oversized: false,
            events: 0,
        }
    }

    fn event_depth(&self) -> u32 {
        u32::from(self.form == Form::Object)
    }

    /// Scans `buf` from where it stopped; hands finished events to `sink`. Returns how many
    /// leading bytes the caller may drop (everything before the event still being read).
    fn scan(&mut self, buf: &[u8], sink: &mut impl EventSink) -> Result<usize, ()> {
        if self.form == Form::Unknown {
            // Skip a UTF-8 BOM and whitespace, then decide the form.
            let mut i = self.pos;
            const BOM: &[u8] = b"\xEF\xBB\xBF";
            let rest = &buf[i..];
            if !rest.is_empty() && rest.len() < BOM.len() && BOM.starts_with(rest) {
                // The BOM is cut by the block's end: decide with the next block.
                return Ok(i);
            }
            if rest.starts_with(BOM) {
                i += 3;
            }
            while i < buf.len() && buf[i].is_ascii_whitespace() {
                i += 1;
            }
            match buf.get(i) {
                None => {
                    self.pos = i;
                    return Ok(i);
                }
                Some(b'[') => self.form = Form::Array,
                Some(b'{') => {
                    self.form = Form::Object;
                    self.depth = 1;
                }
                Some(_) => return Err(()),
            }
            self.pos = i + 1;
        }
        let mut i = self.pos;
        let n = buf.len();
        while i < n {
            if self.in_string {
                if self.escaped {
                    self.escaped = false;
                    i += 1;
                    continue;
                }
                match memchr2(b'"', b'\\', &buf[i..]) {
                    None => {
                        i = n;
                    }
                    Some(k) => {
                        let at = i + k;
                        if buf[at] == b'\\' {
                            self.escaped = true;
                        } else {
                            self.in_string = false;
                        }
                        i = at + 1;
                    }
                }
                continue;
            }
            let Some(k) = memchr3(b'"', b'{', b'}', &buf[i..]) else {
                i = n;
                break;
            };
            let at = i + k;
            match buf[at] {
                b'"' => self.in_string = true,
                b'{' => {
                    if self.depth == self.event_depth() {
                        if let Some(len) = sink.skip(&buf[at..])
                            && len > 0
                            && at + len <= n
                        {
                            self.events += 1;
                            i = at + len;
                            continue;
                        }
                        self.event_start = Some(at);
                        self.oversized = false;
                    }
                    self.depth = self.depth.saturating_add(1);
                }
                _ => {
                    self.depth = self.depth.saturating_sub(1);
                    if self.depth == self.event_depth() {
                        self.events += 1;
                        if let Some(s) = self.event_start.take()
                            && !self.oversized
                        {
                            sink.event(&buf[s..=at]);
                        }
                        self.oversized = false;
                    }
                }
            }
            i = at + 1;
        }
        self.pos = i;
        match self.event_start {
            Some(s) if n - s > MAX_EVENT => {
                self.event_start = None;
                self.oversized = true;
                Ok(n)
            }
            Some(s) => Ok(s),
            None => Ok(n),
        }
    }

    /// The caller dropped the first `dropped` bytes of the buffer.
    fn rebase(&mut self, dropped: usize) {
        self.pos -= dropped;
        if let Some(s) = &mut self.event_start {
            *s -= dropped;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The events' bytes, as handed.
    #[derive(Default)]
    struct Collect(Vec<String>);

    impl EventSink for Collect {
        fn event(&mut self, bytes: &[u8]) {
            self.0.push(String::from_utf8_lossy(bytes).into_owned());
        }
    }

    fn events(text: &str, block: usize) -> Result<(u64, Vec<String>), ()> {
        let mut sink = Collect::default();
        let end = for_each_event(text.as_bytes(), block, &LoadControl::default(), &mut sink)
            .map_err(|_| ())?;
        Ok((end.events, sink.0))
    }

    /// Whether the trace `text` was cut short, read in blocks of `block` bytes.
    fn cut_short(text: &str, block: usize) -> bool {
        let mut sink = Collect::default();
        for_each_event(text.as_bytes(), block, &LoadControl::default(), &mut sink)
            .unwrap()
            .cut_short
    }

    /// An object-form trace (PyTorch's) cut at any byte is cut short exactly when what is left
    /// is not a whole JSON document (serde_json's answer), but for whitespace after its end;
    /// an array-form trace cut between its events is not (Chrome's format lets the `]` go),
    /// one cut inside an event or a string is.
    #[test]
    fn a_trace_cut_at_any_byte_says_whether_it_was_cut_short() {
        let object = "{\"schemaVersion\": 1, \"traceEvents\": [{\"ph\": \"X\", \"name\": \"a}{\\\"\", \"args\": {\"x\": [1, {\"y\": 2}]}}, {\"ph\": \"i\"}], \"deviceProperties\": [{\"id\": 0}]}\n";
        for cut in 1..=object.len() {
            let Some(text) = object.get(..cut) else {
                continue;
            };
            let whole = serde_json::from_str::<serde_json::Value>(text).is_ok();
            for block in [1, 3, 64] {
                assert_eq!(
                    cut_short(text, block),
                    !whole,
                    "{text:?} in blocks of {block}"
                );
            }
        }
        let array = "[{\"ph\": \"X\", \"args\": {\"s\": \"}\"}}, {\"ph\": \"i\"}]";
        for (text, cut) in [
            (array, false),
            ("[{\"ph\": \"X\", \"args\": {\"s\": \"}\"}}, ", false),
            ("[{\"ph\": \"X\", \"args\": {\"s\": \"}", true),
            ("[{\"ph\": \"X\", \"args\": {\"s\": \"}\"}", true),
        ] {
            assert_eq!(cut_short(text, 2), cut, "{text:?}");
        }
    }

    #[test]
    fn each_event_object_whole_whatever_the_block_size() {
        let text = "\u{feff} [{\"a\": \"}{\\\"\", \"b\": {\"c\": 1}}, {\"d\": 2}]";
        for block in [1, 2, 3, 5, 64] {
            let (n, got) = events(text, block).unwrap();
            assert_eq!(n, 2, "block {block}");
            assert_eq!(
                got,
                ["{\"a\": \"}{\\\"\", \"b\": {\"c\": 1}}", "{\"d\": 2}"],
                "block {block}"
            );
        }
    }

    #[test]
    fn the_object_form_hands_every_object_at_its_top_level_the_sink_tells_them_apart() {
        let text = r#"{"otherData": {"x": 1}, "traceEvents": [{"e": 1}], "more": {"y": 2}}"#;
        let (_, got) = events(text, 4).unwrap();
        assert_eq!(got, [r#"{"x": 1}"#, r#"{"e": 1}"#, r#"{"y": 2}"#]);
    }

    #[test]
    fn what_is_not_a_trace_is_an_error() {
        assert!(events("  hello", 3).is_err());
        assert!(events("", 3).is_err());
    }
}
