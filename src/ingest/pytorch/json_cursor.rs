//! A cursor over one JSON object's bytes for the hand-written readers of PyTorch's plain
//! layouts ([`super::memory_event`], [`super::op_event`]): white space, objects, strings of
//! printable ASCII without escapes, and scalars by JSON's grammar. Each method answers `None`
//! where the bytes are anything else, and the reader then leaves the object to serde_json.

use crate::ingest::value::digit_run;

/// Where a value is in an object's bytes: `start..end`.
pub(crate) type Span = (usize, usize);

/// A position in an object's bytes.
pub(crate) struct Cursor<'a> {
    /// The object's bytes.
    pub(crate) b: &'a [u8],
    /// The position.
    pub(crate) i: usize,
}

impl<'a> Cursor<'a> {
    /// The next byte that is not JSON white space (its position is `self.i`).
    pub(crate) fn peek(&mut self) -> Option<u8> {
        loop {
            match *self.b.get(self.i)? {
                b' ' | b'\n' | b'\r' | b'\t' => self.i += 1,
                c => return Some(c),
            }
        }
    }

    /// `{ "key": value, … }` from the next byte that is not white space, each value read by
    /// `field` (the cursor then at the value's first byte).
    pub(crate) fn object(
        &mut self,
        mut field: impl FnMut(&'a [u8], &mut Self) -> Option<()>,
    ) -> Option<()> {
        (self.peek()? == b'{').then_some(())?;
        self.i += 1;
        if self.peek()? == b'}' {
            self.i += 1;
            return Some(());
        }
        loop {
            self.peek()?;
            let (s, e) = self.string()?;
            let key = self.b.get(s..e)?;
            (self.peek()? == b':').then_some(())?;
            self.i += 1;
            self.peek()?;
            field(key, self)?;
            match self.peek()? {
                b',' => self.i += 1,
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// A string of printable ASCII without escapes at the cursor: where its text is, quotes
    /// left out.
    pub(crate) fn string(&mut self) -> Option<Span> {
        let start = self.i + 1;
        (*self.b.get(self.i)? == b'"').then_some(())?;
        let mut j = start;
        loop {
            match *self.b.get(j)? {
                b'"' => break,
                b'\\' | 0..0x20 | 0x80.. => return None,
                _ => j += 1,
            }
        }
        self.i = j + 1;
        Some((start, j))
    }

    /// A string, number, `true`, `false` or `null` at the cursor: where its raw JSON is (a
    /// string with its quotes); `None` for anything else (objects and arrays included).
    pub(crate) fn scalar(&mut self) -> Option<Span> {
        let start = self.i;
        if *self.b.get(start)? == b'"' {
            self.string()?;
        } else {
            self.bare_scalar()?;
        }
        Some((start, self.i))
    }

    /// A number, `true`, `false` or `null` at the cursor.
    pub(crate) fn bare_scalar(&mut self) -> Option<()> {
        match *self.b.get(self.i)? {
            b't' | b'f' | b'n' => {
                let rest = self.b.get(self.i..)?;
                let word: &[u8] = [&b"true"[..], b"false", b"null"]
                    .into_iter()
                    .find(|w| rest.starts_with(w))?;
                self.i += word.len();
                Some(())
            }
            _ => self.number(),
        }
    }

    /// A number by JSON's grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`
    /// A letter or digit right after it is no number (`01`, `1x`): the caller's next byte then
    /// is no `,` or `}` (nor a template's next piece, which starts with one or white space).
    pub(crate) fn number(&mut self) -> Option<()> {
        if self.b.get(self.i) == Some(&b'-') {
            self.i += 1;
        }
        match *self.b.get(self.i)? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            (self.b.get(self.i)?.is_ascii_digit()).then_some(())?;
            self.digits();
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            (self.b.get(self.i)?.is_ascii_digit()).then_some(())?;
            self.digits();
        }
        Some(())
    }

    fn digits(&mut self) {
        self.i += self.b.get(self.i..).map_or(0, digit_run);
    }
}
