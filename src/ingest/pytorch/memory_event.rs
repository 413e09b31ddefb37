//! One PyTorch `[memory]` event read by hand from its bytes, for the byte search of
//! [`super::memory_scan`]: the same fields serde would read, or `None` to leave the
//! bytes to serde.
//!
//! - [`quick_object`] reads an object of the plain layout PyTorch writes (flat, with one
//!   `args` object; strings of printable ASCII without escapes) in one pass from its `{`, and
//!   finds its end on the way.
//! - [`Template`] is faster still on the events after the first: PyTorch writes every memory
//!   event of a trace with the same keys in the same order and the same white space, and only
//!   the numbers differ. An event whose bytes are a template's with numbers in its gaps is read
//!   with a few byte comparisons instead of a parse.

use super::memory_fields::{FIELD_COUNT, Level, MEMORY_FIELDS, MemoryField};
use crate::ingest::trace_view::{
    MemoryEvent, RawMemoryEvent, UnreadableEvent, memory_event_from, thread_of_text,
};
use crate::ingest::value::{
    POW10, digit_run, plain_int, plain_number_at, plain_signed_at, up_to_eight_digits, whole,
};
use crate::model::NULL;

use super::json_cursor::{Cursor, Span};

/// Which kept field a value is ([`MEMORY_FIELDS`]);
/// `None` for a key the reader does not keep.
type Field = Option<MemoryField>;

/// Where each kept field's raw JSON is in an object's bytes.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
struct Spans {
    has_args: bool,
    at: [Option<Span>; FIELD_COUNT],
}

impl Spans {
    /// Fills `field` once: `None` for a second time (a duplicate field is serde's error).
    fn set(&mut self, field: Field, span: Span) -> Option<()> {
        let Some(field) = field else {
            return Some(());
        };
        let slot = &mut self.at[field.index()];
        slot.is_none().then(|| *slot = Some(span))
    }

    /// Where `field` is.
    fn get(&self, field: MemoryField) -> Option<Span> {
        self.at[field.index()]
    }

    /// The fields as text of `obj` (the object's bytes, through its `}`): `None` when they are
    /// not text, which cannot happen for what the readers here accept (printable ASCII).
    fn raw(self, obj: &[u8]) -> Option<RawMemoryEvent<'_>> {
        // One check of the whole object, then slices.
        let text = std::str::from_utf8(obj).ok()?;
        let mut raw = RawMemoryEvent::default();
        raw.has_args = self.has_args;
        for &(field, _, _) in &MEMORY_FIELDS {
            raw.set(field, self.get(field).and_then(|(s, e)| text.get(s..e)));
        }
        Some(raw)
    }
}

/// More gaps than a template may have (PyTorch's memory events have nine, eleven with
/// `finished` and `Ev Idx`); an object with more makes no template.
const MAX_GAPS: usize = 24;

/// A gap of a [`Template`]: the field it fills and where it is in the object it was made of.
type Gap = (Field, Span);

/// Whether a value is one of a [`Template`]'s gaps: one that may differ from event to event.
/// Those that are not strings (numbers, `true`, `false`, `null`), and every value of a field
/// the reader keeps (a `pid` may be a string).
fn is_gap(field: Field, span: Span, obj: &[u8]) -> bool {
    field.is_some() || obj.get(span.0) != Some(&b'"')
}

/// [`quick_object`] of exactly `obj` (white space may follow its `}`): `Some(None)` for a
/// well-formed object that is another event, `None` when it is not of the plain layout.
pub fn quick_fields(obj: &[u8]) -> Option<Option<RawMemoryEvent<'_>>> {
    let (raw, len) = quick_object(obj)?;
    obj[len..]
        .iter()
        .all(|b| matches!(b, b' ' | b'\n' | b'\r' | b'\t'))
        .then_some(raw)
}

/// The fields of the object that opens at `b[0]`, read by hand in one pass, and its length
/// (through its `}`): `Some((None, len))` for a well-formed object that is another event,
/// `None` when it is not of the plain layout PyTorch writes (a nested value other than `args`,
/// an escape, a control or non-ASCII byte in a string, a duplicate field, bad JSON, or bytes
/// that end before the object does), which the careful path then reads. Only what serde would
/// accept the same way is accepted: numbers by JSON's grammar, keys compared as written
/// (there are no escapes to decode).
pub fn quick_object(b: &[u8]) -> Option<(Option<RawMemoryEvent<'_>>, usize)> {
    let (spans, len, _) = read_object(b, false)?;
    match spans {
        Some(spans) => Some((Some(spans.raw(&b[..len])?), len)),
        None => Some((None, len)),
    }
}

/// [`quick_object`]'s reading: the spans of a `[memory]` event (`None` for another event), the
/// object's length, and, when `gaps` is asked for, where its values that are not strings are.
fn read_object(b: &[u8], gaps: bool) -> Option<(Option<Spans>, usize, Option<Vec<Gap>>)> {
    let mut c = Cursor { b, i: 0 };
    let mut spans = Spans::default();
    let mut name: Option<&[u8]> = None;
    let mut found = gaps.then(Vec::new);
    let mut value = |field: Field, c: &mut Cursor<'_>, spans: &mut Spans| -> Option<()> {
        let span = c.scalar()?;
        if let Some(g) = found.as_mut()
            && is_gap(field, span, b)
        {
            g.push((field, span));
        }
        spans.set(field, span)
    };
    c.object(|key, c| match key {
        b"name" => {
            let (s, e) = c.string()?;
            let text = c.b.get(s..e)?;
            name.is_none().then(|| name = Some(text))
        }
        b"args" => {
            if std::mem::replace(&mut spans.has_args, true) {
                return None;
            }
            c.object(|key, c| value(MemoryField::of_key(Level::Args, key), c, &mut spans))
        }
        key => value(MemoryField::of_key(Level::Event, key), c, &mut spans),
    })?;
    let is_memory = name == Some(b"[memory]");
    Some((is_memory.then_some(spans), c.i, found))
}

/// A memory event's bytes with its values cut out (its numbers, and whatever the fields it
/// keeps hold), made from one event [`quick_object`] read: another event whose bytes are these
/// pieces with a value in each gap is the same object with other values, so [`quick_object`]
/// would read it the same, with its fields in the gaps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Template {
    /// The bytes before the first gap, between each two, and after the last (its `}` last).
    pieces: Vec<Vec<u8>>,
    /// The field each gap fills.
    gaps: Vec<Field>,
    /// Whether the event has `args` (the field is no gap).
    has_args: bool,
    /// Whether [`Self::read_plain`] may read its events: it has `args`, and `ts`, `Bytes` and
    /// `Addr` are among its gaps.
    plain: bool,
}

impl Template {
    /// The template of the `[memory]` event opening at `b[0]`; `None` when [`quick_object`]
    /// does not read it as one.
    pub fn of(b: &[u8]) -> Option<Self> {
        let (Some(spans), len, Some(gaps)) = read_object(b, true)? else {
            return None;
        };
        if gaps.len() > MAX_GAPS {
            return None;
        }
        let mut pieces = Vec::with_capacity(gaps.len() + 1);
        let mut at = 0;
        for &(_, (s, e)) in &gaps {
            pieces.push(b.get(at..s)?.to_vec());
            at = e;
        }
        pieces.push(b.get(at..len)?.to_vec());
        let gaps: Vec<Field> = gaps.iter().map(|&(f, _)| f).collect();
        let has = |f: MemoryField| gaps.contains(&Some(f));
        let plain = spans.has_args
            && has(MemoryField::Ts)
            && has(MemoryField::Bytes)
            && has(MemoryField::Addr);
        Some(Self {
            pieces,
            gaps,
            has_args: spans.has_args,
            plain,
        })
    }

    /// The event of the object opening at `b[0]` (as [`memory_event_from`] makes it of what
    /// [`quick_object`] reads) and the object's length, when its bytes are this template's
    /// with a value (a number, `true`, `false`, `null`, or a string where the template had one)
    /// in each gap. `None` otherwise (the caller reads it the slower way).
    pub fn read(&self, b: &[u8]) -> Option<(Result<MemoryEvent, UnreadableEvent>, usize)> {
        if let Some((event, len)) = self.read_plain(b) {
            return Some((Ok(event), len));
        }
        self.read_spans(b)
    }

    /// [`Self::read`] the general way: every gap's span found, then the numbers read.
    fn read_spans(&self, b: &[u8]) -> Option<(Result<MemoryEvent, UnreadableEvent>, usize)> {
        let mut spans = Spans::default();
        // Each field is in one gap of the template: set never refuses here.
        let len = self.matched(b, |field, span| spans.set(field, span))?;
        spans.has_args = self.has_args;
        let obj = &b[..len];
        // The numbers as PyTorch writes them are read here; anything else as the careful
        // readers do.
        let event = match plain_event(&spans, obj) {
            Some(event) => event,
            None => memory_event_from(&spans.raw(obj)?),
        };
        Some((event, len))
    }
}

impl Template {
    /// [`Self::read`]'s fast way, for events whose numbers are all plain (as
    /// [`plain_event`] reads them, which is all PyTorch writes): each number read as its gap
    /// is matched, in one pass over its digits, instead of found first and read after.
    /// `None` for anything else, which [`Self::read_spans`] then reads; where this reads an
    /// event, that reads the same.
    fn read_plain(&self, b: &[u8]) -> Option<(MemoryEvent, usize)> {
        use MemoryField as F;
        if !self.plain {
            return None;
        }
        let mut event = MemoryEvent {
            ns: 0,
            thread: 0,
            device_type: 0,
            device_id: -1,
            addr: 0,
            bytes: 0,
            total_allocated: NULL,
            total_reserved: NULL,
        };
        let (mut pid, mut tid) = (None, None);
        let mut i = 0usize;
        let mut pieces = self.pieces.iter();
        for &field in &self.gaps {
            let piece = pieces.next()?;
            same(b.get(i..i.checked_add(piece.len())?)?, piece).then_some(())?;
            i += piece.len();
            let rest = b.get(i..)?;
            i += match field {
                None => {
                    let mut c = Cursor { b: rest, i: 0 };
                    c.bare_scalar()?;
                    c.i
                }
                Some(F::Ts) => {
                    let (ns, n) = plain_micros_at(rest)?;
                    event.ns = ns;
                    n
                }
                Some(F::Addr) => {
                    let (v, n) = plain_number_at(rest, 19)?;
                    event.addr = v;
                    n
                }
                Some(f @ (F::Pid | F::Tid)) => {
                    // Their text, for the thread's number (its digits are checked below).
                    let (_, n) = plain_signed_at(rest)?;
                    let text = std::str::from_utf8(&rest[..n]).ok();
                    *(if f == F::Pid { &mut pid } else { &mut tid }) = text;
                    n
                }
                Some(f) => {
                    let (v, n) = plain_signed_at(rest)?;
                    *match f {
                        F::Bytes => &mut event.bytes,
                        F::TotalAllocated => &mut event.total_allocated,
                        F::TotalReserved => &mut event.total_reserved,
                        F::DeviceType => &mut event.device_type,
                        _ => &mut event.device_id,
                    } = v;
                    n
                }
            };
        }
        let last = pieces.next()?;
        same(b.get(i..i.checked_add(last.len())?)?, last).then_some(())?;
        // A block beyond 2⁵⁶ bytes: the general way says it cannot be read.
        if event.bytes.unsigned_abs() >= 1 << 56 {
            return None;
        }
        event.thread = thread_of_text(pid, tid);
        Some((event, i + last.len()))
    }

    /// The length of the object opening at `b[0]` when it is this template's (as
    /// [`Self::read`] would take it), without reading its fields: for a reader that skips
    /// memory events.
    pub fn extent(&self, b: &[u8]) -> Option<usize> {
        self.matched(b, |_, _| Some(()))
    }

    /// Matches `b` against the pieces, handing each gap's field and span to `gap`; the
    /// object's length when every piece and value matched.
    fn matched(&self, b: &[u8], mut gap: impl FnMut(Field, Span) -> Option<()>) -> Option<usize> {
        let mut c = Cursor { b, i: 0 };
        let mut pieces = self.pieces.iter();
        for &field in &self.gaps {
            let piece = pieces.next()?;
            same(b.get(c.i..c.i.checked_add(piece.len())?)?, piece).then_some(())?;
            c.i += piece.len();
            let span = if field.is_none() {
                let start = c.i;
                c.bare_scalar()?;
                (start, c.i)
            } else {
                c.scalar()?
            };
            gap(field, span)?;
        }
        let last = pieces.next()?;
        same(b.get(c.i..c.i.checked_add(last.len())?)?, last).then_some(())?;
        Some(c.i + last.len())
    }
}

/// Whether two slices of one length hold the same bytes, eight at a time: the pieces of a
/// template are short (5 to 70 bytes), where a call to the C library's `memcmp` for each
/// costs more than the comparison.
fn same(a: &[u8], b: &[u8]) -> bool {
    let (mut x, mut y) = (a.chunks_exact(8), b.chunks_exact(8));
    let word = |c: &[u8]| c.try_into().map_or(0, u64::from_ne_bytes);
    a.len() == b.len()
        && (&mut x).zip(&mut y).all(|(p, q)| word(p) == word(q))
        && x.remainder().iter().zip(y.remainder()).all(|(p, q)| p == q)
}

/// [`memory_event_from`] of the fields at `spans` of `obj` when every number among them is
/// plain (an integer of at most 18 digits, a `ts` with at most three decimals, an `Addr` of at
/// most 19 digits, no leading zeros: all PyTorch writes), read straight from the bytes; `None` for anything else.
fn plain_event(spans: &Spans, obj: &[u8]) -> Option<Result<MemoryEvent, UnreadableEvent>> {
    use MemoryField as F;
    let text = |span: Option<Span>| span.and_then(|(s, e)| obj.get(s..e));
    // A present field that is not plain: the careful way. An absent one: its default.
    let int = |span: Option<Span>, absent: i64| match text(span) {
        Some(t) => plain_int(t),
        None => Some(absent),
    };
    let (Some(ts), Some(bytes), Some(addr)) = (
        text(spans.get(F::Ts)),
        text(spans.get(F::Bytes)),
        text(spans.get(F::Addr)),
    ) else {
        // A required field is missing: the careful way says how.
        return None;
    };
    let ns = plain_micros_as_ns(ts)?;
    let size = plain_int(bytes)?;
    let addr = plain_address(addr)?;
    let device_type = int(spans.get(F::DeviceType), 0)?;
    let device_id = int(spans.get(F::DeviceId), -1)?;
    let total_allocated = int(spans.get(F::TotalAllocated), NULL)?;
    let total_reserved = int(spans.get(F::TotalReserved), NULL)?;
    // pid and tid as text, for the thread's number (a string keeps its quotes, as the careful
    // readers hash it).
    let as_text = |span: Option<Span>| match text(span) {
        Some(t) => std::str::from_utf8(t).ok().map(Some),
        None => Some(None),
    };
    let (pid, tid) = (as_text(spans.get(F::Pid))?, as_text(spans.get(F::Tid))?);
    if !spans.has_args || size.unsigned_abs() >= 1 << 56 {
        return Some(Err(UnreadableEvent));
    }
    Some(Ok(MemoryEvent {
        ns,
        thread: thread_of_text(pid, tid),
        device_type,
        device_id,
        addr,
        bytes: size,
        total_allocated,
        total_reserved,
    }))
}

/// A plain address: at most 19 digits, no sign.
fn plain_address(t: &[u8]) -> Option<u64> {
    whole(t, |t| plain_number_at(t, 19))
}

/// A plain µs time as exact ns: [`plain_micros_at`] of all of `t`.
fn plain_micros_as_ns(t: &[u8]) -> Option<i64> {
    whole(t, plain_micros_at)
}

/// A µs time at the start of `b`, `-`?digits(`.` one to three digits)?, at most 18 digits in
/// all (the ns then fit an `i64`), as exact ns and its length.
fn plain_micros_at(b: &[u8]) -> Option<(i64, usize)> {
    let neg = b.first() == Some(&b'-');
    let at = usize::from(neg);
    let whole_len = digit_run(&b[at..]);
    let (frac, frac_len) = match b.get(at + whole_len) {
        Some(b'.') => {
            let rest = &b[at + whole_len + 1..];
            let n = digit_run(rest);
            if n == 0 || n > 3 {
                return None;
            }
            // Fraction digits may start with zeros: read them as they are.
            (up_to_eight_digits(rest, n), n)
        }
        _ => (0, 0),
    };
    let (whole, _) = plain_number_at(&b[at..], 18 - frac_len)?;
    let ns = whole
        .checked_mul(1000)?
        .checked_add(frac * POW10[3 - frac_len])?;
    let ns = i64::try_from(ns).ok()?;
    let len = at + whole_len + if frac_len > 0 { 1 + frac_len } else { 0 };
    Some((if neg { -ns } else { ns }, len))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::value::parse_scaled;
    use proptest::prelude::*;

    proptest! {
        /// Eight bytes at a time, the digits counted are those a byte at a time counts.
        #[test]
        fn digit_runs_are_counted_as_one_byte_at_a_time_counts_them(
            b in proptest::collection::vec(
                prop_oneof![9 => b'0'..=b'9', 1 => any::<u8>()], 0..40
            )
        ) {
            let slow = b.iter().take_while(|c| c.is_ascii_digit()).count();
            prop_assert_eq!(digit_run(&b), slow);
        }

        /// The plain number readers agree with the careful parser on every text they accept.
        #[test]
        fn plain_numbers_read_as_the_careful_parser_reads_them(
            t in "-?[0-9]{0,20}(\\.[0-9]{0,4})?[0-9a-z]?"
        ) {
            let b = t.as_bytes();
            let careful = |factor| parse_scaled(b, factor).ok().flatten().map(|s| s.value);
            if let Some(v) = plain_int(b) {
                prop_assert_eq!(Some(v), careful(1));
            }
            if let Some(v) = plain_micros_as_ns(b) {
                prop_assert_eq!(Some(v), careful(1000));
            }
            if let Some(v) = plain_address(b) {
                prop_assert_eq!(Some(v), crate::ingest::value::parse_address(&t));
            }
        }
    }

    /// PyTorch's own layout (torch 2.x, `export_chrome_trace`).
    const EVENT: &str = "{\n    \"ph\": \"i\",\n    \n    \"cat\": \"cpu_instant_event\",\n    \"s\": \"t\",\n    \"name\": \"[memory]\",\n    \"pid\": 1555,\n    \"tid\": 1555,\n    \"ts\": 4747689126117.062\n    ,\n    \"args\": {\n      \"Total Reserved\": 0, \"Total Allocated\": 196608, \"Bytes\": 196608, \"Device Id\": -1, \"Device Type\": 0, \"Addr\": 94820774467456, \"finished\": false, \"Ev Idx\": 933\n    }\n  }";

    proptest! {
        /// An event with a few bytes replaced, inserted or deleted: what the template reads,
        /// the one-pass reader reads the same (and serde, where the one-pass reader reads).
        #[test]
        fn an_edited_event_reads_the_same_by_template_or_in_one_pass(
            edits in proptest::collection::vec(
                (0usize..1000, 0u8..3, proptest::sample::select(
                    b"0123456789-.eE+ \n\t\"{}[],:tfnx\\\xc3".to_vec()
                )),
                1..4,
            )
        ) {
            let template = Template::of(EVENT.as_bytes()).unwrap();
            let mut b = EVENT.as_bytes().to_vec();
            for (at, how, byte) in edits {
                let at = at % (b.len() + 1);
                match how {
                    0 if at < b.len() => b[at] = byte,
                    1 => b.insert(at, byte),
                    _ if at < b.len() => {
                        b.remove(at);
                    }
                    _ => {}
                }
            }
            if let Some((event, len)) = template.read(&b) {
                let (raw, quick_len) = quick_object(&b).expect("read in one pass");
                prop_assert_eq!(memory_event_from(&raw.expect("a memory event")), event);
                prop_assert_eq!(len, quick_len);
            }
            if let Some(Some(raw)) = quick_fields(&b) {
                prop_assert_eq!(
                    memory_event_from(&raw).map(Some),
                    crate::ingest::trace_view::parse_memory_event(&b)
                );
            }
        }
    }

    proptest! {
        /// Numbers of every plain and not-so-plain shape in every gap of PyTorch's layout:
        /// where the fast way reads an event, the general way reads the same event, to the
        /// same length; and the fast way reads every event whose numbers are PyTorch's own.
        #[test]
        fn the_fast_way_reads_what_the_general_way_reads(
            values in proptest::collection::vec(
                "-?[0-9]{1,21}(\\.[0-9]{0,4})?([eE][0-9])?|null|true", 11
            ),
            plain in proptest::collection::vec(
                (any::<bool>(), 1u64..999_999_999_999_999, 0u32..4), 11
            ),
            use_plain in any::<bool>(),
        ) {
            let template = Template::of(EVENT.as_bytes()).unwrap();
            let texts: Vec<String> = if use_plain {
                // What PyTorch writes: integers, and a `ts` with up to three decimals.
                plain.iter().enumerate().map(|(k, &(neg, v, frac))| {
                    let sign = if neg { "-" } else { "" };
                    match k {
                        2 if frac > 0 => format!(
                            "{sign}{v}.{:0w$}", v % 10u64.pow(frac), w = frac as usize
                        ),
                        // `Addr` has no sign; `finished` is true or false.
                        8 => format!("{v}"),
                        9 => format!("{neg}"),
                        _ => format!("{sign}{v}"),
                    }
                }).collect()
            } else {
                values
            };
            // The gaps in order: pid, tid, ts, the six args, `finished`, `Ev Idx`.
            let mut pieces = template.pieces.iter();
            let mut text = Vec::new();
            for value in &texts {
                text.extend_from_slice(pieces.next().unwrap());
                text.extend_from_slice(value.as_bytes());
            }
            text.extend_from_slice(pieces.next().unwrap());
            let fast = template.read_plain(&text);
            if let Some((event, len)) = fast {
                let (general, general_len) = template.read_spans(&text).expect("read the general way");
                prop_assert_eq!(Ok(event), general);
                prop_assert_eq!(len, general_len);
                prop_assert_eq!(len, text.len());
            }
            if use_plain {
                prop_assert!(fast.is_some(), "{}", String::from_utf8_lossy(&text));
            }
        }
    }

    #[test]
    fn eight_digits_at_a_time_read_as_one_at_a_time() {
        let digits = b"12345678901234567890";
        for start in 0..digits.len() {
            for n in 1..=8.min(digits.len() - start) {
                let b = &digits[start..];
                let slow = b[..n]
                    .iter()
                    .fold(0u64, |v, &d| v * 10 + u64::from(d - b'0'));
                assert_eq!(up_to_eight_digits(b, n), slow, "{start} {n}");
            }
        }
        assert_eq!(
            plain_number_at(b"9999999999999999999,", 19),
            Some((9_999_999_999_999_999_999, 19))
        );
        assert_eq!(plain_number_at(b"0,", 19), Some((0, 1)));
        assert_eq!(plain_number_at(b"01,", 19), None);
        assert_eq!(plain_signed_at(b"-0012"), None);
        assert_eq!(plain_signed_at(b"-512}"), Some((-512, 4)));
        assert_eq!(
            plain_micros_at(b"4700000003068.445\n"),
            Some((4_700_000_003_068_445, 17))
        );
        assert_eq!(plain_micros_at(b"12.05,"), Some((12_050, 5)));
        assert_eq!(plain_micros_at(b"-1.5,"), Some((-1_500, 4)));
        assert_eq!(plain_micros_at(b"1.0625,"), None);
        assert_eq!(plain_micros_at(b"1.,"), None);
    }

    #[test]
    fn same_compares_every_byte() {
        let a: Vec<u8> = (0u8..40).collect();
        for len in 0..40 {
            assert!(same(&a[..len], &a[..len]));
            for k in 0..len {
                let mut b = a[..len].to_vec();
                b[k] ^= 1;
                assert!(!same(&a[..len], &b), "{len} {k}");
            }
        }
        assert!(!same(&a[..3], &a[..4]));
    }

    #[test]
    fn a_template_reads_what_the_one_pass_reader_reads() {
        let t = Template::of(EVENT.as_bytes()).unwrap();
        // Eleven gaps: the nine numbers kept, `finished` and `Ev Idx`.
        assert_eq!(t.gaps.len(), 11);
        // A kept field written as a string is a gap too (its text is the thread's number).
        let quoted = EVENT.replace("\"pid\": 1555", "\"pid\": \"1555\"");
        let tq = Template::of(quoted.as_bytes()).unwrap();
        for v in [
            quoted.replace("1555\"", "77\""),
            quoted.replace("\"1555\"", "77"),
        ] {
            let (event, _) = tq.read(v.as_bytes()).unwrap();
            let (raw, _) = quick_object(v.as_bytes()).unwrap();
            assert_eq!(memory_event_from(&raw.unwrap()), event, "{v}");
        }
        let variants = [
            EVENT.to_string(),
            EVENT.replace("1555", "7"),
            EVENT.replace("4747689126117.062", "1e3"),
            EVENT.replace("196608", "-12"),
            EVENT.replace("false", "true"),
            EVENT.replace("94820774467456", "null"),
            // A kept field may hold a string where the template had a number.
            EVENT.replace("1555", "\"1555\""),
            // Not the template: the careful readers' to read.
            EVENT.replace("1555", "01"),
            EVENT.replace("933", "93x"),
            EVENT.replace("  \"cat\"", " \"cat\""),
            EVENT.replace("[memory]", "[memorx]"),
            EVENT.replace("196608", "1.5.0"),
            EVENT[..EVENT.len() - 3].to_string(),
        ];
        let mut read = 0;
        for v in &variants {
            let b = v.as_bytes();
            if let Some((event, len)) = t.read(b) {
                read += 1;
                let (raw, quick_len) = quick_object(b).unwrap();
                assert_eq!(memory_event_from(&raw.unwrap()), event, "{v}");
                assert_eq!((len, quick_len), (b.len(), b.len()));
            }
        }
        assert_eq!(read, 7);
        // Numbers the plain reader leaves to the careful one still read the same.
        for v in [
            EVENT.replace("4747689126117.062", "4747689126117.0625"),
            EVENT.replace("196608", "1234567890123456789"),
            EVENT.replace("94820774467456", "-5"),
            EVENT.replace("\"Bytes\": 196608", "\"Bytes\": 72057594037927936"),
        ] {
            let (event, _) = t.read(v.as_bytes()).unwrap();
            let (raw, _) = quick_object(v.as_bytes()).unwrap();
            assert_eq!(memory_event_from(&raw.unwrap()), event, "{v}");
        }
        // What follows the object is not read.
        let longer = format!("{EVENT},\n  {{\"ph\": \"X\"}}");
        assert_eq!(t.read(longer.as_bytes()).unwrap().1, EVENT.len());
        // Another event, or too many numbers, makes no template.
        assert!(Template::of(EVENT.replace("[memory]", "aten::add").as_bytes()).is_none());
        let many: String = (0..30).map(|k| format!("\"k{k}\": {k}, ")).collect();
        let crowded = EVENT.replace("\"Ev Idx\"", &format!("{many}\"Ev Idx\""));
        assert!(quick_object(crowded.as_bytes()).is_some());
        assert!(Template::of(crowded.as_bytes()).is_none());
    }
}
