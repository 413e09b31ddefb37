//! What the whole read of a trace ([`crate::ingest::trace_view`]) reads of a `cpu_op` event:
//! [`OpEvent`], the fields as serde_json reads them, and [`read`], the same fields read by hand
//! from the bytes in one pass, or `None` to leave the bytes to serde_json.
//!
//! Most of a trace with stacks is its ops, and most of an op is its call stack. serde_json
//! reads an op's keys one by one into a struct and scans its stack as a string; this reader
//! takes the stack's bytes with one `memchr2` to its closing quote (an escape in it: `None`),
//! reads the other fields PyTorch writes (short strings of printable ASCII, numbers) with
//! [`Cursor`], and skips any other value by JSON's grammar. It refuses what it cannot read as
//! serde_json would (an escape or a byte that is not printable ASCII outside the stack, a
//! duplicate field, a field of another type, nesting deeper than [`MAX_DEPTH`]); where it
//! reads, serde_json reads the same (a property test holds it so).

use std::borrow::Cow;

use memchr::memchr2;
use serde::Deserialize;
use serde_json::value::RawValue;

use super::json_cursor::{Cursor, Span};

/// The fields of a `cpu_op` event memsight reads, by serde_json; every other field is skipped
/// unparsed, and numbers stay raw JSON text until needed. The call stack is an `S`: a
/// `&RawValue` for the general path (any value, unescaped once, the first time it is seen), a
/// [`PlainString`] for [`OpEvent::fields`].
#[derive(Deserialize)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
pub(crate) struct OpEvent<'a, S> {
    /// `ph`.
    #[serde(default, borrow)]
    pub ph: Cow<'a, str>,
    /// `cat`.
    #[serde(default, borrow)]
    pub cat: Cow<'a, str>,
    /// `name`.
    #[serde(default, borrow)]
    pub name: Cow<'a, str>,
    /// `ts`.
    #[serde(default, borrow)]
    pub ts: Option<&'a RawValue>,
    /// `dur`.
    #[serde(default, borrow)]
    pub dur: Option<&'a RawValue>,
    /// `pid`.
    #[serde(default, borrow)]
    pub pid: Option<&'a RawValue>,
    /// `tid`.
    #[serde(default, borrow)]
    pub tid: Option<&'a RawValue>,
    /// `args`.
    #[serde(default)]
    pub args: Option<OpArgs<'a, S>>,
}

/// The arguments of a `cpu_op` event memsight reads.
#[derive(Deserialize)]
#[serde(bound(deserialize = "S: Deserialize<'de>"))]
pub(crate) struct OpArgs<'a, S> {
    /// `Call stack`.
    #[serde(rename = "Call stack", default)]
    pub call_stack: Option<S>,
    /// `Sequence number`.
    #[serde(rename = "Sequence number", default, borrow)]
    pub seq: Option<&'a RawValue>,
}

/// The bytes between the quotes of a JSON string without escapes, as written: neither checked
/// as UTF-8 nor copied (serde_json hands a string's bytes so when asked for bytes). Any other
/// value (a string with an escape, a number, an array) is an error.
pub(crate) struct PlainString<'a>(pub &'a [u8]);

impl<'de: 'a, 'a> Deserialize<'de> for PlainString<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Borrowed;
        impl<'de> serde::de::Visitor<'de> for Borrowed {
            type Value = &'de [u8];
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string without escapes")
            }
            fn visit_borrowed_bytes<E>(self, v: &'de [u8]) -> Result<&'de [u8], E> {
                Ok(v)
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<&'de [u8], E> {
                Ok(v.as_bytes())
            }
        }
        d.deserialize_bytes(Borrowed).map(PlainString)
    }
}

impl<'a> OpEvent<'a, PlainString<'a>> {
    /// The fields as [`read`] gives them.
    pub(crate) fn fields(&self) -> OpFields<'_> {
        let raw = |v: Option<&'a RawValue>| v.map(RawValue::get);
        let args = self.args.as_ref();
        OpFields {
            ph: &self.ph,
            cat: &self.cat,
            name: &self.name,
            ts: raw(self.ts),
            dur: raw(self.dur),
            pid: raw(self.pid),
            tid: raw(self.tid),
            has_args: args.is_some(),
            call_stack: args.and_then(|a| a.call_stack.as_ref().map(|s| s.0)),
            seq: raw(args.and_then(|a| a.seq)),
        }
    }
}

/// Nesting deeper than this in a value that is skipped: left to serde_json.
const MAX_DEPTH: u32 = 64;

/// The fields of a `cpu_op` event memsight reads, borrowed from its bytes. A number or a
/// string read as raw JSON text (`ts`, `dur`, `pid`, `tid`, `Sequence number`) keeps its
/// quotes, as serde_json's `RawValue` does; `null` is no value, as for an `Option`.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OpFields<'a> {
    /// `ph`.
    pub ph: &'a str,
    /// `cat`.
    pub cat: &'a str,
    /// `name`.
    pub name: &'a str,
    /// `ts`, raw.
    pub ts: Option<&'a str>,
    /// `dur`, raw.
    pub dur: Option<&'a str>,
    /// `pid`, raw.
    pub pid: Option<&'a str>,
    /// `tid`, raw.
    pub tid: Option<&'a str>,
    /// Whether the event has `args` (an object; `null` is none).
    pub has_args: bool,
    /// `args["Call stack"]`: the bytes between its quotes, unchecked (a string without
    /// escapes).
    pub call_stack: Option<&'a [u8]>,
    /// `args["Sequence number"]`, raw.
    pub seq: Option<&'a str>,
}

/// The fields of the event object that is exactly `b` (`{` to `}`), or `None` when it is
/// not of the layout this reader takes (see the module's doc).
pub(crate) fn read(b: &[u8]) -> Option<OpFields<'_>> {
    let mut c = Cursor { b, i: 0 };
    let mut f = OpFields::default();
    let mut seen = 0u16;
    // A field read twice is serde's error.
    let mut once = |bit: u16| -> Option<()> { (seen & bit == 0).then(|| seen |= bit) };
    c.object(|key, c| {
        match key {
            b"ph" => {
                once(1)?;
                f.ph = text(c)?;
            }
            b"cat" => {
                once(2)?;
                f.cat = text(c)?;
            }
            b"name" => {
                once(4)?;
                f.name = text(c)?;
            }
            b"ts" => {
                once(8)?;
                f.ts = raw(c)?;
            }
            b"dur" => {
                once(16)?;
                f.dur = raw(c)?;
            }
            b"pid" => {
                once(32)?;
                f.pid = raw(c)?;
            }
            b"tid" => {
                once(64)?;
                f.tid = raw(c)?;
            }
            b"args" => {
                once(128)?;
                if c.b.get(c.i..)?.starts_with(b"null") {
                    c.i += 4;
                    return Some(());
                }
                f.has_args = true;
                let mut args_seen = 0u8;
                c.object(|key, c| match key {
                    b"Call stack" => {
                        (args_seen & 1 == 0).then(|| args_seen |= 1)?;
                        f.call_stack = stack(c)?;
                        Some(())
                    }
                    b"Sequence number" => {
                        (args_seen & 2 == 0).then(|| args_seen |= 2)?;
                        f.seq = raw(c)?;
                        Some(())
                    }
                    _ => skip(c, 0),
                })?;
            }
            _ => skip(c, 0)?,
        }
        Some(())
    })?;
    // serde_json reads the whole slice: only white space may follow.
    b.get(c.i..)?
        .iter()
        .all(|x| matches!(x, b' ' | b'\n' | b'\r' | b'\t'))
        .then_some(f)
}

/// A string of printable ASCII without escapes, its text.
fn text<'a>(c: &mut Cursor<'a>) -> Option<&'a str> {
    let (s, e) = c.string()?;
    std::str::from_utf8(c.b.get(s..e)?).ok()
}

/// A number or a string of printable ASCII without escapes, its raw JSON text; `None` inside
/// for `null`.
fn raw<'a>(c: &mut Cursor<'a>) -> Option<Option<&'a str>> {
    let (s, e): Span = c.scalar()?;
    let t = std::str::from_utf8(c.b.get(s..e)?).ok()?;
    match t {
        "null" => Some(None),
        "true" | "false" => None,
        t => Some(Some(t)),
    }
}

/// The call stack: a string without escapes, the bytes between its quotes (unchecked, found
/// with one `memchr2`); `None` inside for `null`.
fn stack<'a>(c: &mut Cursor<'a>) -> Option<Option<&'a [u8]>> {
    let rest = c.b.get(c.i..)?;
    if rest.starts_with(b"null") {
        c.i += 4;
        return Some(None);
    }
    (rest.first() == Some(&b'"')).then_some(())?;
    let k = memchr2(b'"', b'\\', &rest[1..])?;
    (rest[1 + k] == b'"').then_some(())?;
    c.i += k + 2;
    Some(Some(&rest[1..1 + k]))
}

/// Any JSON value at the cursor, skipped by JSON's grammar: scalars as [`Cursor::scalar`]
/// reads them, strings with escapes too, arrays and objects to [`MAX_DEPTH`].
fn skip(c: &mut Cursor<'_>, depth: u32) -> Option<()> {
    match *c.b.get(c.i)? {
        b'"' => escaped_string(c),
        b'[' => {
            (depth < MAX_DEPTH).then_some(())?;
            c.i += 1;
            if c.peek()? == b']' {
                c.i += 1;
                return Some(());
            }
            loop {
                c.peek()?;
                skip(c, depth + 1)?;
                match c.peek()? {
                    b',' => c.i += 1,
                    b']' => {
                        c.i += 1;
                        return Some(());
                    }
                    _ => return None,
                }
            }
        }
        b'{' => {
            (depth < MAX_DEPTH).then_some(())?;
            c.object(|_, c| skip(c, depth + 1))
        }
        _ => c.bare_scalar(),
    }
}

/// A string of printable ASCII at the cursor whose escapes are JSON's (`\uXXXX` with four hex
/// digits, as serde_json checks a string it skips).
fn escaped_string(c: &mut Cursor<'_>) -> Option<()> {
    (*c.b.get(c.i)? == b'"').then_some(())?;
    let mut j = c.i + 1;
    loop {
        match *c.b.get(j)? {
            b'"' => break,
            b'\\' => {
                j += 1;
                match *c.b.get(j)? {
                    b'"' | b'\\' | b'/' | b'b' | b'f' | b'n' | b'r' | b't' => j += 1,
                    b'u' => {
                        let hex = c.b.get(j + 1..j + 5)?;
                        hex.iter().all(u8::is_ascii_hexdigit).then_some(())?;
                        j += 5;
                    }
                    _ => return None,
                }
            }
            0..0x20 | 0x80.. => return None,
            _ => j += 1,
        }
    }
    c.i = j + 1;
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The fields as owned values, to compare the two readings.
    type Owned = (
        String,
        String,
        String,
        [Option<String>; 4],
        bool,
        Option<Vec<u8>>,
        Option<String>,
    );

    /// serde_json's reading, as the whole read makes it; `None` when it fails (a stack with an
    /// escape included: the whole read leaves it to its general path).
    fn by_serde(b: &[u8]) -> Option<Owned> {
        let e: OpEvent<'_, PlainString<'_>> = serde_json::from_slice(b).ok()?;
        Some(owned(&e.fields()))
    }

    fn owned(f: &OpFields<'_>) -> Owned {
        let o = |v: Option<&str>| v.map(str::to_owned);
        (
            f.ph.to_owned(),
            f.cat.to_owned(),
            f.name.to_owned(),
            [o(f.ts), o(f.dur), o(f.pid), o(f.tid)],
            f.has_args,
            f.call_stack.map(<[u8]>::to_vec),
            o(f.seq),
        )
    }

    /// Where the hand reader reads, serde_json reads the same.
    fn agrees(text: &str) -> Result<(), TestCaseError> {
        let b = text.as_bytes();
        if let Some(mine) = read(b) {
            prop_assert_eq!(Some(owned(&mine)), by_serde(b), "{}", text);
        }
        Ok(())
    }

    #[test]
    fn reads_what_pytorch_writes() {
        let text = r#"{"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": 4000, "tid": "4001", "ts": 4700000000005.767, "dur": 0.300, "args": {"External id": 12, "Input Dims": [[2, 3], []], "Call stack": "a.py(1): f;b.py(2): g", "Sequence number": 7}}"#;
        let f = read(text.as_bytes()).unwrap();
        assert_eq!((f.ph, f.cat, f.name), ("X", "cpu_op", "aten::mm"));
        assert_eq!((f.pid, f.tid), (Some("4000"), Some("\"4001\"")));
        assert_eq!((f.ts, f.dur), (Some("4700000000005.767"), Some("0.300")));
        assert_eq!(f.call_stack, Some(&b"a.py(1): f;b.py(2): g"[..]));
        assert_eq!(f.seq, Some("7"));
        agrees(text).unwrap();
    }

    #[test]
    fn refuses_what_it_cannot_read_as_serde_would() {
        for text in [
            r#"{"ph": "X", "ph": "X"}"#,
            r#"{"args": {"Call stack": "a", "Call stack": "b"}}"#,
            r#"{"args": {"Call stack": "a\"b"}}"#,
            r#"{"args": {"Call stack": "a\}}"#,
            r#"{"args": {"Call stack": 5}}"#,
            r#"{"name": "a\u0062"}"#,
            r#"{"name": 5}"#,
            r#"{"ts": true}"#,
            r#"{"x": [1 2]}"#,
            r#"{"x": "\q"}"#,
            r#"{"x": 01}"#,
            r#"{"ph": "X"} x"#,
            r#"{"ph": "X""#,
        ] {
            assert!(read(text.as_bytes()).is_none(), "{text}");
        }
        // Nulls are no values, as for serde's `Option`s.
        let f = read(br#"{"ts": null, "args": {"Call stack": null}}"#).unwrap();
        assert_eq!((f.ts, f.call_stack, f.has_args), (None, None, true));
        assert!(!read(br#"{"args": null}"#).unwrap().has_args);
    }

    /// A JSON value to skip, well formed or not.
    fn value() -> impl Strategy<Value = String> {
        let leaf = prop_oneof![
            Just("1".to_string()),
            Just("-0.5e3".to_string()),
            Just("01".to_string()),
            Just("true".to_string()),
            Just("nul".to_string()),
            Just("null".to_string()),
            Just(r#""a\"b\\c\u00e9\n""#.to_string()),
            Just(r#""\x""#.to_string()),
            Just(r#""\u12""#.to_string()),
            Just("\"é\"".to_string()),
            Just("\"a\tb\"".to_string()),
            "[a-z ]{0,6}".prop_map(|s| format!("\"{s}\"")),
        ];
        leaf.prop_recursive(4, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4)
                    .prop_map(|v| format!("[{}]", v.join(", "))),
                prop::collection::vec(inner.clone(), 0..3)
                    .prop_map(|v| format!("[{}]", v.join(" "))),
                prop::collection::vec(("[a-z]{1,3}", inner), 0..3).prop_map(|v| {
                    let kv: Vec<String> = v.iter().map(|(k, v)| format!("\"{k}\": {v}")).collect();
                    format!("{{{}}}", kv.join(","))
                }),
            ]
        })
    }

    /// A value for one of the fields read.
    fn field_value() -> impl Strategy<Value = String> {
        prop_oneof![
            Just("\"X\"".to_string()),
            Just("\"cpu_op\"".to_string()),
            Just("\"aten::mm\"".to_string()),
            Just("\"a.py(1): f;b.py(2): g\"".to_string()),
            Just("\"a\\u0062\"".to_string()),
            Just("\"中\"".to_string()),
            Just("\"a\\}".to_string()),
            Just("12".to_string()),
            Just("4700000000005.767".to_string()),
            Just("\"20.000\"".to_string()),
            Just("null".to_string()),
            Just("false".to_string()),
            Just("[1]".to_string()),
            Just("{}".to_string()),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]
        #[test]
        fn where_it_reads_serde_reads_the_same(
            fields in prop::collection::vec(
                (prop::sample::select(vec!["ph", "cat", "name", "ts", "dur", "pid", "tid", "x", "args"]),
                 field_value(), value()),
                0..9),
            arg_fields in prop::collection::vec(
                (prop::sample::select(vec!["Call stack", "Sequence number", "Input Dims"]),
                 field_value(), value()),
                0..4),
            space in prop::sample::select(vec!["", " ", "\n  "]),
        ) {
            let args: Vec<String> = arg_fields
                .iter()
                .map(|(k, v, other)| {
                    let v = if *k == "Input Dims" { other } else { v };
                    format!("\"{k}\":{space}{v}")
                })
                .collect();
            let args = format!("{{{}}}", args.join(&format!(",{space}")));
            let kv: Vec<String> = fields
                .iter()
                .map(|(k, v, other)| {
                    let v = match *k {
                        "args" => &args,
                        "x" => other,
                        _ => v,
                    };
                    format!("\"{k}\":{space}{v}")
                })
                .collect();
            agrees(&format!("{{{space}{}{space}}}", kv.join(&format!(",{space}"))))?;
        }
    }
}
