//! A pickle reader for data only: it builds values and never runs anything from the file.
//!
//! Hand-written because no crate fits: `serde-pickle` 1.2 refuses every real allocator snapshot
//! ("recursive structure found": their frame dicts are shared through the memo) and, with its
//! workaround option, silently drops a third of the frames. This reader keeps shared objects
//! shared: containers live in arenas and a value is an index, so a memo hit is the same object
//! (and a mutation after memoizing — `SETITEMS` into a memoized dict — is seen through every
//! reference), with no recursion anywhere (no stack overflow on deep nesting).
//!
//! Protocols 2–5 and their data opcodes are read, including `FRAME`, `LONG1`/`LONG4` (integers
//! up to 16 bytes exactly, wider ones as [`Value::BigInt`]), `BINUNICODE8`, `BYTEARRAY8`. Every
//! opcode that loads or calls code (`GLOBAL`, `STACK_GLOBAL`, `REDUCE`, `BUILD`, `INST`, `OBJ`,
//! `NEWOBJ`, `NEWOBJ_EX`, `EXT1/2/4`, `PERSID`, `BINPERSID`) and out-of-band buffers are refused
//! with an error naming the opcode. Lengths are checked against the bytes left before anything
//! is allocated, so memory stays within a small multiple of the file's size.

use rustc_hash::FxHashMap;

/// A value of the pickle. Containers and texts are indices into the [`Pickle`]'s arenas.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An integer that fits an i64 (the common case: 16-byte values keep memory low).
    Int(i64),
    /// An integer of 9 to 16 bytes (index into the wide-integer arena).
    Wide(u32),
    /// An integer wider than 16 bytes (kept as a marker: no field of a snapshot is that wide).
    BigInt,
    /// A float.
    Float(f64),
    /// A text (index into [`Pickle::text`]).
    Str(u32),
    /// Bytes or a bytearray (index into the bytes arena).
    Bytes(u32),
    /// A list (index into the list arena).
    List(u32),
    /// A tuple (index into the list arena).
    Tuple(u32),
    /// A dict (index into the dict arena).
    Dict(u32),
    /// A set or frozenset (index into the list arena).
    Set(u32),
}

/// A dict key resolved to its text id once ([`Pickle::key`]); `None` when no such text occurs in
/// the file (then no dict has it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Key(Option<u32>);

/// Why a pickle could not be read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("pickle byte {at}: {msg}")]
pub struct UnpickleError {
    /// Byte offset of the opcode.
    pub at: usize,
    /// What is wrong.
    pub msg: String,
    /// The file ends inside an opcode: it was cut short (a copy still being written?).
    pub truncated: bool,
}

/// A whole unpickled file: its root value and the arenas the values point into.
#[derive(Debug, Default)]
pub struct Pickle {
    /// The value the pickle returns.
    pub root: Option<Value>,
    texts: Vec<Box<str>>,
    /// Each distinct text once: equal texts share an id, so a key lookup compares ids.
    text_index: FxHashMap<Box<str>, u32>,
    wide: Vec<i128>,
    bytes: Vec<Box<[u8]>>,
    lists: Vec<Vec<Value>>,
    dicts: Vec<Vec<(Value, Value)>>,
}

impl Pickle {
    /// How many dicts the pickle holds (each once, however often it is referred to).
    pub fn dict_count(&self) -> usize {
        self.dicts.len()
    }

    /// The text of a [`Value::Str`].
    pub fn text(&self, v: Value) -> Option<&str> {
        match v {
            Value::Str(i) => self.texts.get(i as usize).map(|s| &**s),
            _ => None,
        }
    }

    /// The items of a list, tuple or set.
    pub fn items(&self, v: Value) -> Option<&[Value]> {
        match v {
            Value::List(i) | Value::Tuple(i) | Value::Set(i) => {
                self.lists.get(i as usize).map(Vec::as_slice)
            }
            _ => None,
        }
    }

    /// The value under the text key `key` of a dict.
    pub fn get(&self, dict: Value, key: &str) -> Option<Value> {
        self.get_key(dict, self.key(key))
    }

    /// A text key looked up once, for many [`Pickle::get_key`] calls (a snapshot reads the same
    /// few keys from millions of dicts: hashing the key text each time was a sixth of the read).
    pub fn key(&self, name: &str) -> Key {
        Key(self.text_index.get(name).copied())
    }

    /// The value under `key` of a dict.
    #[inline]
    pub fn get_key(&self, dict: Value, key: Key) -> Option<Value> {
        let (Value::Dict(i), Some(k)) = (dict, key.0) else {
            return None;
        };
        let key = Value::Str(k);
        self.dicts
            .get(i as usize)?
            .iter()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| *v)
    }

    /// The id of a [`Value::Str`] (equal texts share one).
    pub fn text_id(v: Value) -> Option<u32> {
        match v {
            Value::Str(i) => Some(i),
            _ => None,
        }
    }

    /// An integer value as i128 (bools count as 0/1, as in Python).
    pub fn int(&self, v: Value) -> Option<i128> {
        match v {
            Value::Int(i) => Some(i128::from(i)),
            Value::Wide(i) => self.wide.get(i as usize).copied(),
            Value::Bool(b) => Some(i128::from(b)),
            _ => None,
        }
    }
}

/// Opcodes that would import, call or build arbitrary objects: never executed.
fn code_opcode(op: u8) -> Option<&'static str> {
    Some(match op {
        b'c' => "GLOBAL",
        0x93 => "STACK_GLOBAL",
        b'R' => "REDUCE",
        b'b' => "BUILD",
        b'i' => "INST",
        b'o' => "OBJ",
        0x81 => "NEWOBJ",
        0x92 => "NEWOBJ_EX",
        0x82 => "EXT1",
        0x83 => "EXT2",
        0x84 => "EXT4",
        b'P' => "PERSID",
        b'Q' => "BINPERSID",
        _ => return None,
    })
}

/// Reads a pickle (protocols 2–5, data opcodes only).
pub fn unpickle(data: &[u8]) -> Result<Pickle, UnpickleError> {
    Reader {
        data,
        pos: 0,
        out: Pickle::default(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: Memo::default(),
    }
    .run()
}

struct Reader<'a> {
    data: &'a [u8],
    pos: usize,
    out: Pickle,
    stack: Vec<Value>,
    /// Stack heights at each MARK.
    marks: Vec<usize>,
    memo: Memo,
}

/// The pickle memo. `MEMOIZE` numbers entries 0, 1, 2, … (a vector); `PUT` may use any number
/// (a map for those, so a huge index cannot allocate a huge vector).
#[derive(Default)]
struct Memo {
    dense: Vec<Value>,
    sparse: FxHashMap<u64, Value>,
}

impl Memo {
    fn len(&self) -> u64 {
        (self.dense.len() + self.sparse.len()) as u64
    }
    fn insert(&mut self, key: u64, v: Value) {
        let n = self.dense.len() as u64;
        if key < n {
            self.dense[key as usize] = v;
        } else if key == n {
            self.sparse.remove(&key);
            self.dense.push(v);
            // Keys put earlier beyond the end now continue the vector.
            while let Some(next) = self.sparse.remove(&(self.dense.len() as u64)) {
                self.dense.push(next);
            }
        } else {
            self.sparse.insert(key, v);
        }
    }
    fn get(&self, key: u64) -> Option<Value> {
        usize::try_from(key)
            .ok()
            .and_then(|k| self.dense.get(k).copied())
            .or_else(|| self.sparse.get(&key).copied())
    }
}

impl<'a> Reader<'a> {
    fn run(mut self) -> Result<Pickle, UnpickleError> {
        loop {
            let at = self.pos;
            let op = self.take(1, at)?[0];
            if let Some(name) = code_opcode(op) {
                return Err(self.err(
                    at,
                    format!(
                        "opcode {name} would load or run code; memsight reads data only and \
                         never runs anything from a file"
                    ),
                ));
            }
            match op {
                b'.' => {
                    self.out.root = Some(self.pop(at)?);
                    return Ok(self.out);
                }
                0x80 => {
                    let proto = self.take(1, at)?[0];
                    if proto > 5 {
                        return Err(self.err(at, format!("unsupported pickle protocol {proto}")));
                    }
                }
                0x95 => {
                    self.take(8, at)?; // FRAME: a read-ahead hint; the data is all in memory
                }
                b'(' => self.marks.push(self.stack.len()),
                b'0' => {
                    self.pop(at)?;
                }
                b'1' => {
                    self.pop_mark(at)?;
                }
                b'2' => {
                    let top = *self
                        .stack
                        .last()
                        .ok_or_else(|| self.err(at, "DUP on an empty stack"))?;
                    self.stack.push(top);
                }
                b'N' => self.stack.push(Value::None),
                0x88 => self.stack.push(Value::Bool(true)),
                0x89 => self.stack.push(Value::Bool(false)),
                b'J' => {
                    let b = self.take(4, at)?;
                    let v = i32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    self.stack.push(Value::Int(i64::from(v)));
                }
                b'K' => {
                    let v = self.take(1, at)?[0];
                    self.stack.push(Value::Int(i64::from(v)));
                }
                b'M' => {
                    let b = self.take(2, at)?;
                    self.stack
                        .push(Value::Int(i64::from(u16::from_le_bytes([b[0], b[1]]))));
                }
                0x8a => {
                    let n = usize::from(self.take(1, at)?[0]);
                    let b = self.take(n, at)?;
                    let v = self.long(b, at)?;
                    self.stack.push(v);
                }
                0x8b => {
                    let n = self.len_u32(at)?;
                    let b = self.take(n, at)?;
                    let v = self.long(b, at)?;
                    self.stack.push(v);
                }
                b'G' => {
                    let b = self.take(8, at)?;
                    let mut a = [0u8; 8];
                    a.copy_from_slice(b);
                    self.stack.push(Value::Float(f64::from_be_bytes(a)));
                }
                // Texts: BINUNICODE, SHORT_BINUNICODE, BINUNICODE8.
                b'X' | 0x8c | 0x8d => {
                    let n = match op {
                        b'X' => self.len_u32(at)?,
                        0x8c => usize::from(self.take(1, at)?[0]),
                        _ => self.len_u64(at)?,
                    };
                    let b = self.take(n, at)?;
                    let s = std::str::from_utf8(b)
                        .map_err(|_| self.err(at, "a text that is not UTF-8"))?;
                    let id = match self.out.text_index.get(s) {
                        Some(&id) => id,
                        None => {
                            let id = push(&mut self.out.texts, s.into(), at)?;
                            self.out.text_index.insert(s.into(), id);
                            id
                        }
                    };
                    self.stack.push(Value::Str(id));
                }
                // Byte strings: BINSTRING, SHORT_BINSTRING (Python 2 str), BINBYTES,
                // SHORT_BINBYTES, BINBYTES8, BYTEARRAY8.
                b'T' | b'U' | b'B' | b'C' | 0x8e | 0x96 => {
                    let n = match op {
                        b'T' | b'B' => self.len_u32(at)?,
                        b'U' | b'C' => usize::from(self.take(1, at)?[0]),
                        _ => self.len_u64(at)?,
                    };
                    let b = self.take(n, at)?;
                    let id = push(&mut self.out.bytes, b.into(), at)?;
                    self.stack.push(Value::Bytes(id));
                }
                0x97 | 0x98 => {
                    return Err(self.err(
                        at,
                        "out-of-band buffers (NEXT_BUFFER/READONLY_BUFFER) are not in the file",
                    ));
                }
                b']' => self.new_list(Vec::new(), Value::List, at)?,
                b')' => self.new_list(Vec::new(), Value::Tuple, at)?,
                0x8f => self.new_list(Vec::new(), Value::Set, at)?,
                b'}' => {
                    let id = push(&mut self.out.dicts, Vec::new(), at)?;
                    self.stack.push(Value::Dict(id));
                }
                b'l' => {
                    let items = self.pop_mark(at)?;
                    self.new_list(items, Value::List, at)?;
                }
                b't' => {
                    let items = self.pop_mark(at)?;
                    self.new_list(items, Value::Tuple, at)?;
                }
                0x91 => {
                    let items = self.pop_mark(at)?;
                    self.new_list(items, Value::Set, at)?;
                }
                0x85..=0x87 => {
                    let n = usize::from(op - 0x84);
                    if self.stack.len() < n {
                        return Err(self.err(at, "TUPLE with too few items on the stack"));
                    }
                    let items = self.stack.split_off(self.stack.len() - n);
                    self.new_list(items, Value::Tuple, at)?;
                }
                b'd' => {
                    let items = self.pop_mark(at)?;
                    let pairs = pairs(items).ok_or_else(|| self.err(at, "DICT of an odd count"))?;
                    let id = push(&mut self.out.dicts, pairs, at)?;
                    self.stack.push(Value::Dict(id));
                }
                b'a' => {
                    let v = self.pop(at)?;
                    let target = self.top(at)?;
                    self.list_mut(target, at)?.push(v);
                }
                b'e' | 0x90 => {
                    // Straight from the stack into the list: no vector in between.
                    let m = self.mark_start(at)?;
                    let target = match m.checked_sub(1).and_then(|t| self.stack.get(t)) {
                        Some(v) => *v,
                        None => return Err(self.err(at, "APPENDS with no list below its MARK")),
                    };
                    let (Value::List(i) | Value::Set(i)) = target else {
                        return Err(self.err(at, "APPEND to something that is not a list"));
                    };
                    self.out.lists[i as usize].extend_from_slice(&self.stack[m..]);
                    self.stack.truncate(m);
                }
                b's' => {
                    let v = self.pop(at)?;
                    let k = self.pop(at)?;
                    let target = self.top(at)?;
                    self.dict_mut(target, at)?.push((k, v));
                }
                b'u' => {
                    // The pairs straight from the stack: one exact allocation per dict.
                    let m = self.mark_start(at)?;
                    if (self.stack.len() - m) % 2 == 1 {
                        return Err(self.err(at, "SETITEMS of an odd count"));
                    }
                    let new: Vec<(Value, Value)> = self.stack[m..]
                        .chunks_exact(2)
                        .map(|c| (c[0], c[1]))
                        .collect();
                    self.stack.truncate(m);
                    let target = self.top(at)?;
                    let dict = self.dict_mut(target, at)?;
                    if dict.is_empty() {
                        *dict = new; // the usual EMPTY_DICT, SETITEMS: no copy
                    } else {
                        dict.extend(new);
                    }
                }
                0x94 => {
                    let top = self.top(at)?;
                    let key = self.memo.len();
                    self.memo.insert(key, top);
                }
                b'q' => {
                    let key = u64::from(self.take(1, at)?[0]);
                    let top = self.top(at)?;
                    self.memo.insert(key, top);
                }
                b'r' => {
                    let key = self.len_u32(at)? as u64;
                    let top = self.top(at)?;
                    self.memo.insert(key, top);
                }
                b'h' | b'j' => {
                    let key = if op == b'h' {
                        u64::from(self.take(1, at)?[0])
                    } else {
                        self.len_u32(at)? as u64
                    };
                    let v = self
                        .memo
                        .get(key)
                        .ok_or_else(|| self.err(at, format!("memo key {key} is not defined")))?;
                    self.stack.push(v);
                }
                other => {
                    return Err(self.err(
                        at,
                        format!(
                            "unsupported opcode 0x{other:02x} (only protocols 2–5 are read; \
                             save with torch's default pickle protocol)"
                        ),
                    ));
                }
            }
        }
    }

    /// A little-endian two's-complement integer of `b.len()` bytes.
    fn long(&mut self, b: &[u8], at: usize) -> Result<Value, UnpickleError> {
        Ok(match long(b) {
            Some(v) => match i64::try_from(v) {
                Ok(small) => Value::Int(small),
                Err(_) => Value::Wide(push(&mut self.out.wide, v, at)?),
            },
            None => Value::BigInt,
        })
    }

    fn err(&self, at: usize, msg: impl Into<String>) -> UnpickleError {
        UnpickleError {
            at,
            msg: msg.into(),
            truncated: false,
        }
    }

    /// The next `n` bytes; an error (before any allocation) when the file is shorter.
    fn take(&mut self, n: usize, at: usize) -> Result<&'a [u8], UnpickleError> {
        let data: &'a [u8] = self.data;
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| UnpickleError {
                truncated: true,
                ..self.err(at, "the file ends inside an opcode (truncated?)")
            })?;
        let b = &data[self.pos..end];
        self.pos = end;
        Ok(b)
    }

    fn len_u32(&mut self, at: usize) -> Result<usize, UnpickleError> {
        let b = self.take(4, at)?;
        Ok(u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as usize)
    }

    fn len_u64(&mut self, at: usize) -> Result<usize, UnpickleError> {
        let b = self.take(8, at)?;
        let mut a = [0u8; 8];
        a.copy_from_slice(b);
        usize::try_from(u64::from_le_bytes(a)).map_err(|_| self.err(at, "a length beyond memory"))
    }

    fn pop(&mut self, at: usize) -> Result<Value, UnpickleError> {
        self.stack
            .pop()
            .ok_or_else(|| self.err(at, "pop from an empty stack"))
    }

    fn top(&self, at: usize) -> Result<Value, UnpickleError> {
        self.stack
            .last()
            .copied()
            .ok_or_else(|| self.err(at, "the stack is empty"))
    }

    fn pop_mark(&mut self, at: usize) -> Result<Vec<Value>, UnpickleError> {
        let m = self.mark_start(at)?;
        Ok(self.stack.split_off(m))
    }

    /// Pops the last MARK: the stack height it marked (the items above it are the operands).
    fn mark_start(&mut self, at: usize) -> Result<usize, UnpickleError> {
        let m = self
            .marks
            .pop()
            .ok_or_else(|| self.err(at, "no MARK to pop to"))?;
        if m > self.stack.len() {
            return Err(self.err(at, "MARK above the stack"));
        }
        Ok(m)
    }

    fn new_list(
        &mut self,
        items: Vec<Value>,
        make: fn(u32) -> Value,
        at: usize,
    ) -> Result<(), UnpickleError> {
        let id = push(&mut self.out.lists, items, at)?;
        self.stack.push(make(id));
        Ok(())
    }

    fn list_mut(&mut self, v: Value, at: usize) -> Result<&mut Vec<Value>, UnpickleError> {
        match v {
            Value::List(i) | Value::Set(i) => Ok(&mut self.out.lists[i as usize]),
            _ => Err(self.err(at, "APPEND to something that is not a list")),
        }
    }

    fn dict_mut(&mut self, v: Value, at: usize) -> Result<&mut Vec<(Value, Value)>, UnpickleError> {
        match v {
            Value::Dict(i) => Ok(&mut self.out.dicts[i as usize]),
            _ => Err(self.err(at, "SETITEM on something that is not a dict")),
        }
    }
}

/// Adds an item to an arena, returning its index.
fn push<T>(arena: &mut Vec<T>, item: T, at: usize) -> Result<u32, UnpickleError> {
    let id = u32::try_from(arena.len()).map_err(|_| UnpickleError {
        at,
        msg: "more than 4 billion objects".into(),
        truncated: false,
    })?;
    arena.push(item);
    Ok(id)
}

/// Key/value pairs from a flat list (None for an odd count).
fn pairs(items: Vec<Value>) -> Option<Vec<(Value, Value)>> {
    if items.len() % 2 == 1 {
        return None;
    }
    let mut it = items.into_iter();
    let mut out = Vec::with_capacity(it.len() / 2);
    while let (Some(k), Some(v)) = (it.next(), it.next()) {
        out.push((k, v));
    }
    Some(out)
}

/// A little-endian two's-complement integer of `b.len()` bytes; None past 16 bytes.
fn long(b: &[u8]) -> Option<i128> {
    if b.len() > 16 {
        return None;
    }
    let negative = b.last().is_some_and(|x| x & 0x80 != 0);
    let mut a = [if negative { 0xFF } else { 0 }; 16];
    a[..b.len()].copy_from_slice(b);
    Some(i128::from_le_bytes(a))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn longs_of_any_width_up_to_16_bytes() {
        assert_eq!(long(&[]), Some(0));
        assert_eq!(long(&[0xff]), Some(-1));
        assert_eq!(long(&[0x00, 0x80]), Some(-32768));
        // 2^64 needs 9 bytes.
        assert_eq!(long(&[0, 0, 0, 0, 0, 0, 0, 0, 1]), Some(1 << 64));
        assert_eq!(long(&[1; 17]), None);
        assert_eq!(size_of::<Value>(), 16);
    }

    #[test]
    fn memoized_dicts_stay_shared_and_see_later_items() {
        // {'a': d, 'b': d} with d = {'x': 1} set after memoizing (protocol 4 layout).
        let p = b"\x80\x04}\x94(\x8c\x01a\x94}\x94\x8c\x01x\x94K\x01s\x8c\x01b\x94h\x02u.";
        let p = unpickle(p).unwrap();
        let root = p.root.unwrap();
        let a = p.get(root, "a").unwrap();
        assert_eq!(a, p.get(root, "b").unwrap());
        assert_eq!(p.int(p.get(a, "x").unwrap()), Some(1));
    }

    #[test]
    fn code_is_refused_and_truncation_is_an_error() {
        let e = unpickle(b"\x80\x04cos\nsystem\n").unwrap_err();
        assert!(e.msg.contains("GLOBAL"), "{e}");
        assert!(unpickle(b"\x80\x04\x8c\x10abc").is_err());
        assert!(unpickle(b"\x80\x04\x8d\xff\xff\xff\xff\xff\xff\xff\x7f").is_err());
        assert!(unpickle(b"").is_err());
    }
}
