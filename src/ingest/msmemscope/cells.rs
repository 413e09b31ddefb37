//! A row's text cells: trimming, numbers, and the `Attr` cell in both its dialects
//! (`{allocation_id:4,addr:0x…}` and JSON), read in place for MALLOCs and FREEs.
//! The readers called on every row are `#[inline]`: the loop over the rows is in `dump`,
//! which may be compiled in another codegen unit.

use crate::ingest::value::{self, parse_address as address};

/// A block beyond 2⁵⁶ bytes (64 PiB) is no block: a hostile or broken number.
pub(super) const MAX_SIZE: i64 = 1 << 56;

/// The keys of `Attr` memsight reads.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Attr {
    /// `allocation_id`: the same id is the same block.
    pub allocation_id: Option<i64>,
    /// `addr`.
    pub addr: Option<u64>,
    /// `size` (negative on a free in older dumps).
    pub size: Option<i64>,
    /// `owner`: msMemScope's classification, `A@B@C`.
    pub owner: Option<String>,
    /// `total`: the pool's reserved bytes after the event.
    pub total: Option<i64>,
    /// `used`: the pool's allocated bytes after the event.
    pub used: Option<i64>,
    /// `process_used`: the process's device memory (npu-smi's figure).
    pub process_used: Option<i64>,
    /// `device_used`: the whole card's memory in use.
    pub device_used: Option<i64>,
    /// `inefficient`: `early_allocation`, `late_deallocation`, `temporary_idleness`.
    pub inefficient: Option<String>,
    /// What only an OOM record says (boxed: a dump holds an `Attr` for each of its millions
    /// of events, and a few dozen are OOM records).
    pub oom: Option<Box<OomAttr>>,
}

/// The keys of an OOM record's `Attr`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OomAttr {
    /// `func` (an OOM trigger): the call that failed.
    pub func: Option<String>,
    /// `req_size` (an OOM trigger): the bytes it asked for.
    pub req_size: Option<i64>,
    /// `ret` (an OOM trigger): the driver's return code.
    pub ret: Option<i64>,
    /// `ptr` (an OOM record): the block held at the OOM.
    pub ptr: Option<u64>,
    /// `pool` (an OOM record): `PTA`, `HAL`…
    pub pool: Option<String>,
}

/// An `Attr` without OOM keys.
pub(super) static NO_OOM: OomAttr = OomAttr {
    func: None,
    req_size: None,
    ret: None,
    ptr: None,
    pool: None,
};

/// `attr`'s OOM keys, made when the first is read.
pub(super) fn oom(attr: &mut Attr) -> &mut OomAttr {
    attr.oom.get_or_insert_with(Box::default)
}

impl Attr {
    /// Its OOM keys (none for an event that is no OOM record).
    pub fn oom(&self) -> &OomAttr {
        self.oom.as_deref().unwrap_or(&NO_OOM)
    }
}

/// `s.trim()`, with no search when it starts and ends with a byte that is no white space
/// (nearly every cell: a general trim was a tenth of reading a dump).
#[inline]
pub(super) fn trim(s: &str) -> &str {
    let plain = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !(b as char).is_whitespace());
    if plain(s.as_bytes().first()) && plain(s.as_bytes().last()) {
        s
    } else {
        s.trim()
    }
}

/// [`trim`] of a cell's bytes: `str::trim` of them when they are UTF-8, else the bytes as
/// they are (a cell that is no text is refused by the reader that reads it as text or
/// number).
#[inline]
pub(super) fn trim_bytes(b: &[u8]) -> &[u8] {
    let plain = |b: Option<&u8>| b.is_some_and(|&b| b.is_ascii() && !(b as char).is_whitespace());
    if plain(b.first()) && plain(b.last()) {
        return b;
    }
    std::str::from_utf8(b).map_or(b, |s| s.trim().as_bytes())
}

/// `str::trim_matches('"')` of a cell's bytes.
#[inline]
pub(super) fn trim_quotes(b: &[u8]) -> &[u8] {
    let start = b.iter().position(|&c| c != b'"').unwrap_or(b.len());
    let end = b.iter().rposition(|&c| c != b'"').map_or(start, |e| e + 1);
    &b[start..end]
}

/// A cell's bytes as text, when they are UTF-8.
#[inline]
pub(super) fn text(b: &[u8]) -> Option<&str> {
    std::str::from_utf8(b).ok()
}

/// [`number`] of a cell's bytes (none when they are no UTF-8).
#[inline]
pub(super) fn number_bytes(b: &[u8]) -> Option<i64> {
    value::plain_i64(b).or_else(|| text(b).and_then(number))
}

/// `s.trim_matches('"')`, with no search when it neither starts nor ends with a quote.
#[inline]
pub(super) fn unquote(s: &str) -> &str {
    let b = s.as_bytes();
    if b.first() != Some(&b'"') && b.last() != Some(&b'"') {
        s
    } else {
        s.trim_matches('"')
    }
}

/// A number as msMemScope writes it: decimal (maybe negative) or `0x` hex, maybe quoted.
#[inline]
pub(super) fn number(text: &str) -> Option<i64> {
    // Nearly every one is plain digits: read eight at a time, with no trim or search.
    if let Some(v) = value::plain_i64(text.as_bytes()) {
        return Some(v);
    }
    let t = trim(unquote(trim(text)));
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16)
            .ok()
            .and_then(|v| i64::try_from(v).ok()),
        None => t.parse::<i64>().ok(),
    }
}

/// Parses an `Attr` cell of either dialect; what cannot be read is left out (a cell with
/// unbalanced braces or quotes gives what it can, never an error).
pub fn parse_attr(cell: &str) -> Attr {
    let mut attr = Attr::default();
    let owned = |text: &str| (!text.is_empty()).then(|| text.to_string());
    each_attr(cell, |key, text| match key {
        "allocation_id" => attr.allocation_id = number(text),
        "addr" => attr.addr = address(text),
        "size" => attr.size = size(text),
        "owner" => attr.owner = owned(text),
        "total" => attr.total = number(text),
        "used" => attr.used = number(text),
        "process_used" => attr.process_used = number(text),
        "device_used" => attr.device_used = number(text),
        "inefficient" => attr.inefficient = owned(text),
        "func" => oom(&mut attr).func = owned(text),
        "req_size" => oom(&mut attr).req_size = size(text),
        "ret" => oom(&mut attr).ret = number(text),
        "ptr" => oom(&mut attr).ptr = address(text),
        "pool" => oom(&mut attr).pool = owned(text),
        _ => {}
    });
    attr
}

/// A size as a key gives it: beyond [`MAX_SIZE`] (either sign) it is no size.
pub(super) fn size(text: &str) -> Option<i64> {
    as_size(number(text))
}

/// A number read for a size: beyond [`MAX_SIZE`] (either sign) it is no size.
pub(super) fn as_size(v: Option<i64>) -> Option<i64> {
    v.filter(|s| s.unsigned_abs() < MAX_SIZE as u64)
}

/// The keys of a MALLOC's or FREE's `Attr` ([`parse_attr`]'s, without the OOM keys), texts
/// borrowed from the cell: a dump has millions, and an `owner` copied for each was an
/// allocation per event.
#[derive(Debug, Default, PartialEq, Eq)]
pub(super) struct MemAttr<'a> {
    pub(super) allocation_id: Option<i64>,
    pub(super) addr: Option<u64>,
    pub(super) size: Option<i64>,
    /// `owner`, empty when absent.
    pub(super) owner: &'a str,
    pub(super) total: Option<i64>,
    pub(super) used: Option<i64>,
    pub(super) process_used: Option<i64>,
    pub(super) device_used: Option<i64>,
    /// `inefficient`, empty when absent.
    pub(super) inefficient: &'a str,
}

/// The keys of a MALLOC's or FREE's `Attr` that are read, in the order msMemScope writes them.
pub(super) const MEM_KEYS: [&str; 9] = [
    "allocation_id",
    "addr",
    "size",
    "owner",
    "total",
    "used",
    "process_used",
    "device_used",
    "inefficient",
];

impl<'a> MemAttr<'a> {
    /// The value `text` (trimmed and unquoted) of key `MEM_KEYS[key]`.
    pub(super) fn set(&mut self, key: usize, text: &'a str) {
        match key {
            1 => self.addr = address(text),
            3 => self.owner = text,
            8 => self.inefficient = text,
            _ => self.set_number(key, number(text)),
        }
    }

    /// The number `v` of key `MEM_KEYS[key]` (one of the numeric keys).
    pub(super) fn set_number(&mut self, key: usize, v: Option<i64>) {
        match key {
            0 => self.allocation_id = v,
            2 => self.size = as_size(v),
            4 => self.total = v,
            5 => self.used = v,
            6 => self.process_used = v,
            7 => self.device_used = v,
            _ => {}
        }
    }
}

/// Each of [`MEM_KEYS`] and its colon as the low bytes of a little-endian `u128`, and the mask
/// of those bytes: a part's key is told by one compare of the sixteen bytes it starts with
/// (`starts_with` called `memcmp` for each key of each cell: 5 % of a 1 GB dump's load).
const MEM_KEY_WORDS: [(u128, u128); 9] = {
    let mut words = [(0u128, 0u128); 9];
    let mut k = 0;
    while k < MEM_KEYS.len() {
        let key = MEM_KEYS[k].as_bytes();
        // (Every key and its colon fit sixteen bytes.)
        assert!(key.len() < 16);
        let mut i = 0;
        while i <= key.len() {
            let b = if i < key.len() { key[i] } else { b':' };
            words[k].0 |= (b as u128) << (8 * i);
            words[k].1 |= 0xff << (8 * i);
            i += 1;
        }
        k += 1;
    }
    words
};

/// Whether `rest` starts with `MEM_KEYS[key]` and a colon.
#[inline(always)]
fn starts_with_key(rest: &[u8], key: usize) -> bool {
    match rest.first_chunk::<16>() {
        Some(word) => {
            let (value, mask) = MEM_KEY_WORDS[key];
            u128::from_le_bytes(*word) & mask == value
        }
        None => {
            let k = MEM_KEYS[key].as_bytes();
            rest.starts_with(k) && rest.get(k.len()) == Some(&b':')
        }
    }
}

/// Whether `MEM_KEYS[key]` holds a number (not an address or a text).
pub(super) fn is_numeric_key(key: usize) -> bool {
    matches!(key, 0 | 2 | 4..=7)
}

/// The number that starts at `from` in an `Attr` cell's body when it is written plainly
/// (`-`? and digits, as [`value::plain_i64`] takes them) and a comma or the body's
/// end follows it: its value and where it ends. Read in place, with no search for the comma
/// first; `None` leaves the part to [`MemAttr::set`].
pub(super) fn plain_number_part(bytes: &[u8], from: usize) -> Option<(i64, usize)> {
    let rest = bytes.get(from..)?;
    let neg = rest.first() == Some(&b'-');
    let (v, n) = value::plain_number_at(&rest[usize::from(neg)..], 19)?;
    let to = from + usize::from(neg) + n;
    if bytes.get(to).is_some_and(|&b| b != b',') {
        return None;
    }
    // At most i64::MAX: its negation is never i64::MIN, the NULL.
    let v = i64::try_from(v).ok()?;
    Some((if neg { -v } else { v }, to))
}

/// [`parse_attr`] of a MALLOC's or FREE's cell, with no copies; `None` when it is not
/// written plainly ([`plain_mem_attr`]) and is no UTF-8.
#[inline]
pub(super) fn parse_mem_attr(cell: &[u8]) -> Option<MemAttr<'_>> {
    if let Some(attr) = plain_mem_attr(cell) {
        return Some(attr);
    }
    let cell = std::str::from_utf8(cell).ok()?;
    let mut attr = MemAttr::default();
    each_attr(cell, |key, text| {
        if let Some(k) = MEM_KEYS.iter().position(|&k| k == key) {
            attr.set(k, text);
        }
    });
    Some(attr)
}

/// [`parse_mem_attr`] of a cell written as msMemScope writes it: `{key:value,…}`, ASCII with no
/// quote anywhere and each part starting with one of [`MEM_KEYS`] and a colon; `None` for any
/// other cell (the general cut, [`each_attr`], reads those). A part's end is found by the comma
/// after it alone, and its key by comparing the key msMemScope writes next, not by finding
/// every comma, colon and quote of the cell (that walk and its calls were a tenth of the
/// first look's CPU in `perf`). It reads what the general cut reads: with no quotes, that cut
/// is at every comma, and a part's key ends at its first colon, the one after the key. The
/// cell is read as bytes: checked as UTF-8 whole, it was 3 % of a 1 GB dump's load.
pub(super) fn plain_mem_attr(cell: &[u8]) -> Option<MemAttr<'_>> {
    let bytes = cell.strip_prefix(b"{")?.strip_suffix(b"}")?;
    if bytes.is_empty() || !ascii_without_quotes(bytes) {
        return None;
    }
    let mut attr = MemAttr::default();
    let (mut at, mut next) = (0, 0);
    loop {
        let rest = &bytes[at..];
        let key = if next < MEM_KEYS.len() && starts_with_key(rest, next) {
            next
        } else {
            (0..MEM_KEYS.len()).find(|&k| starts_with_key(rest, k))?
        };
        let from = at + MEM_KEYS[key].len() + 1;
        let to = match plain_number_part(bytes, from).filter(|_| is_numeric_key(key)) {
            Some((v, to)) => {
                attr.set_number(key, Some(v));
                to
            }
            None => {
                let to = memchr::memchr(b',', &bytes[from..]).map_or(bytes.len(), |i| from + i);
                let value = &bytes[from..to];
                // Nearly every `addr` is plain hex, read with no UTF-8 check.
                match value::plain_hex(value).filter(|_| key == 1) {
                    Some(addr) => attr.addr = Some(addr),
                    // (ASCII: always text.)
                    None => attr.set(key, unquote(trim(std::str::from_utf8(value).ok()?))),
                }
                to
            }
        };
        if to == bytes.len() {
            return Some(attr);
        }
        (at, next) = (to + 1, key + 1);
    }
}

/// Whether every byte of `bytes` is ASCII and none is a quote, eight at a time.
fn ascii_without_quotes(bytes: &[u8]) -> bool {
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let quote = u64::from_ne_bytes([b'"'; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let plain = chunks.by_ref().all(|chunk| {
        let word = chunk.try_into().map_or(HIGH_BITS, u64::from_le_bytes);
        (word & HIGH_BITS) | equal(word, quote) == 0
    });
    plain
        && chunks
            .remainder()
            .iter()
            .all(|&b| b.is_ascii() && b != b'"')
}

/// The high bit of each byte of `word` that equals the byte `splat` repeats (exactly: no
/// borrow crosses a byte).
#[inline(always)]
fn equal(word: u64, splat: u64) -> u64 {
    const LOW: u64 = u64::from_ne_bytes([0x7f; 8]);
    let x = word ^ splat;
    !(((x & LOW).wrapping_add(LOW)) | x | LOW)
}

/// Each `key:value` of an `Attr` cell (either dialect: `{k:v,…}` or `{"k":"v",…}`), both
/// trimmed and unquoted, in the cell's order: the cell is cut at each comma outside quotes,
/// and each part at its first colon (a part with none is skipped).
pub(super) fn each_attr<'a>(cell: &'a str, mut read: impl FnMut(&'a str, &'a str)) {
    let body = trim(cell);
    let body = body.strip_prefix('{').unwrap_or(body);
    let body = body.strip_suffix('}').unwrap_or(body);
    let mut part = |start: usize, colon: Option<usize>, end: usize| {
        if let Some(colon) = colon {
            // (`start..colon` and `colon + 1..end` lie on ASCII bytes: char boundaries.)
            let (key, value) = (&body[start..colon], &body[colon + 1..end]);
            read(unquote(trim(key)), unquote(trim(value)));
        }
    };
    let (mut start, mut colon, mut quoted) = (0, None, false);
    each_structural(body.as_bytes(), |i, b| match b {
        b'"' => quoted = !quoted,
        b',' if !quoted => {
            part(start, colon, i);
            (start, colon) = (i + 1, None);
        }
        b':' if colon.is_none() => colon = Some(i),
        _ => {}
    });
    part(start, colon, body.len());
}

/// Calls `f` with the offset and byte of each `,`, `:` and `"` in `bytes`, in order. Eight
/// bytes are looked at a time (an `Attr` cell is ~150 bytes with ~25 such bytes: a `memchr` per
/// part cost more to start than to search, and was most of a dump's time in its cells).
pub(super) fn each_structural(bytes: &[u8], mut f: impl FnMut(usize, u8)) {
    let splat = |b: u8| u64::from_ne_bytes([b; 8]);
    let (comma, colon, quote) = (splat(b','), splat(b':'), splat(b'"'));
    let mut chunks = bytes.chunks_exact(8);
    let mut base = 0;
    for chunk in &mut chunks {
        let word = chunk.try_into().map_or(0, u64::from_le_bytes);
        let mut hits = equal(word, comma) | equal(word, colon) | equal(word, quote);
        while hits != 0 {
            let i = (hits.trailing_zeros() / 8) as usize;
            f(base + i, chunk[i]);
            hits &= hits - 1;
        }
        base += 8;
    }
    for (i, &b) in chunks.remainder().iter().enumerate() {
        if matches!(b, b',' | b':' | b'"') {
            f(base + i, b);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// A number read the quick way (plain digits) is what the standard library reads.
        #[test]
        fn numbers_read_as_the_standard_library_reads_them(
            t in "[ \"]?-?(0x)?[0-9a-f]{0,20}[ \"]?",
        ) {
            let s = t.trim().trim_matches('"').trim();
            let expected = match s.strip_prefix("0x") {
                Some(hex) => u64::from_str_radix(hex, 16).ok().and_then(|v| i64::try_from(v).ok()),
                None => s.parse::<i64>().ok(),
            };
            prop_assert_eq!(number(&t), expected);
        }

        /// The quick trims are the standard ones, on any text.
        #[test]
        fn the_quick_trims_are_the_standard_ones(
            t in "[ \t\u{b}\u{a0}\u{3000}\"a0,]{0,6}",
        ) {
            prop_assert_eq!(trim(&t), t.trim());
            prop_assert_eq!(unquote(&t), t.trim_matches('"'));
        }
    }

    #[test]
    fn a_comma_inside_quotes_does_not_end_a_key() {
        let a = parse_attr(r#"{"owner":"PTA@a,b","size":"5",func:"x",pool:HAL}"#);
        assert_eq!(a.owner.as_deref(), Some("PTA@a,b"));
        assert_eq!(a.size, Some(5));
        assert_eq!(a.oom().func.as_deref(), Some("x"));
        assert_eq!(a.oom().pool.as_deref(), Some("HAL"));
        // Unbalanced quotes: what can be read is, nothing panics.
        let b = parse_attr(r#"{size:7,owner:"open,total:9}"#);
        assert_eq!((b.size, b.total), (Some(7), None));
        assert_eq!(parse_attr(""), Attr::default());
    }

    #[test]
    fn both_attr_dialects_parse() {
        let a = parse_attr(
            "{allocation_id:4,addr:0x000012c041400000,size:16778240,total:20971520,used:16780288}",
        );
        assert_eq!(a.allocation_id, Some(4));
        assert_eq!(a.addr, Some(0x12c041400000));
        assert_eq!(a.size, Some(16778240));
        assert_eq!(a.total, Some(20971520));
        assert_eq!(a.used, Some(16780288));
        let j = parse_attr(
            r#"{"allocation_id":"4","addr":"0x12c0","size":"6356992","owner":"PTA@model@weight","inefficient":"early_allocation"}"#,
        );
        assert_eq!(j.allocation_id, Some(4));
        assert_eq!(j.addr, Some(0x12c0));
        assert_eq!(j.size, Some(6356992));
        assert_eq!(j.owner.as_deref(), Some("PTA@model@weight"));
        assert_eq!(j.inefficient.as_deref(), Some("early_allocation"));
        // Older dumps: decimal addresses, negative sizes on frees, an empty owner.
        let o = parse_attr("{addr:20616935636992,size:-512,owner:,total:2097152,used:3537408}");
        assert_eq!(o.addr, Some(20616935636992));
        assert_eq!(o.size, Some(-512));
        assert_eq!(o.owner, None);
    }

    /// How `each_attr` cut a cell before it looked at eight bytes at a time: a `memchr` for
    /// each comma or quote, then for each part's colon (the reference it must agree with).
    fn each_attr_by_memchr(cell: &str) -> Vec<(String, String)> {
        let mut out = Vec::new();
        let body = trim(cell);
        let body = body.strip_prefix('{').unwrap_or(body);
        let body = body.strip_suffix('}').unwrap_or(body);
        let mut read = |part: &str| {
            if let Some(colon) = memchr::memchr(b':', part.as_bytes()) {
                let (key, value) = (&part[..colon], &part[colon + 1..]);
                out.push((unquote(trim(key)).into(), unquote(trim(value)).into()));
            }
        };
        let (mut start, mut quoted) = (0, false);
        for i in memchr::memchr2_iter(b',', b'"', body.as_bytes()) {
            if body.as_bytes()[i] == b'"' {
                quoted = !quoted;
            } else if !quoted {
                read(&body[start..i]);
                start = i + 1;
            }
        }
        read(&body[start..]);
        out
    }

    proptest! {
        /// The eight-bytes-at-a-time cut of an `Attr` cell gives the parts, keys and values the
        /// `memchr` one gave, on cells of every shape (quotes, colons and commas anywhere,
        /// white space, multi-byte text with the bytes `, : "` with the high bit set, any length around
        /// the eight-byte words); and the
        /// copy-free MALLOC/FREE reading (its plain cut included) reads what `parse_attr` reads.
        #[test]
        fn attr_cells_cut_as_the_memchr_reference_does(
            cell in r#"[{}:,"a-z_0-9 \t中é¬º¢]{0,90}"#,
            keys in proptest::collection::vec(
                (
                    prop_oneof![
                        Just("allocation_id"), Just("addr"), Just("size"), Just("owner"),
                        Just("total"), Just("used"), Just("process_used"),
                        Just("device_used"), Just("inefficient"), Just("ptr"), Just("x"),
                        // Keys that start with one that is read.
                        Just("owner_id"), Just("sizes"),
                    ],
                    prop_oneof![
                        4 => r#"-?[0-9]{1,21}|0x[0-9a-fA-F]{1,17}|[a-zA-Z@_ 0-9"]{0,12}"#,
                        // The ends of an i64 (its least is the NULL), and signs and zeros.
                        1 => proptest::sample::select(vec![
                            "-9223372036854775808", "9223372036854775807",
                            "9223372036854775808", "-9223372036854775807", "-0", "0", "00",
                            "-", "--1", "+1", "1-", "1 ", " 1", "1e3",
                            // A number run into another part (no comma after it).
                            "1xsize:5", "7 used:3", "2owner:a",
                        ]).prop_map(String::from),
                    ],
                    any::<bool>(),
                ),
                0..12,
            ),
        ) {
            let pairs = |c: &str| {
                let mut v: Vec<(String, String)> = Vec::new();
                each_attr(c, |k, t| v.push((k.into(), t.into())));
                v
            };
            prop_assert_eq!(pairs(&cell), each_attr_by_memchr(&cell));
            let built: Vec<String> = keys
                .iter()
                .map(|(k, v, q)| if *q { format!("\"{k}\":\"{v}\"") } else { format!("{k}:{v}") })
                .collect();
            let built = format!("{{{}}}", built.join(","));
            // As msMemScope writes them (the plain cut, `plain_mem_attr`, reads these).
            let plain: Vec<String> = keys.iter().map(|(k, v, _)| format!("{k}:{v}")).collect();
            let plain = format!("{{{}}}", plain.join(","));
            for c in [&cell, &built, &plain] {
                prop_assert_eq!(pairs(c), each_attr_by_memchr(c));
                let (full, mem) = (parse_attr(c), parse_mem_attr(c.as_bytes()).unwrap());
                let text = |t: &str| (!t.is_empty()).then(|| t.to_string());
                prop_assert_eq!(
                    (full.allocation_id, full.addr, full.size, full.total, full.used),
                    (mem.allocation_id, mem.addr, mem.size, mem.total, mem.used)
                );
                prop_assert_eq!(
                    (full.process_used, full.device_used, full.owner, full.inefficient),
                    (mem.process_used, mem.device_used, text(mem.owner), text(mem.inefficient))
                );
            }
        }
    }

    proptest! {
        /// A cell's bytes trimmed of quotes are those of its text trimmed so.
        #[test]
        fn quotes_trimmed_from_bytes_as_from_text(t in r#"["a 中]{0,8}"#) {
            prop_assert_eq!(trim_quotes(t.as_bytes()), t.trim_matches('"').as_bytes());
        }
    }

    #[test]
    fn broken_attrs_give_what_they_can() {
        assert_eq!(parse_attr(""), Attr::default());
        assert_eq!(parse_attr("{size:12").size, Some(12));
        assert_eq!(parse_attr("size:1}}}").size, None);
        assert_eq!(parse_attr("{\"size\":\"7,addr:1}").size, None);
        assert_eq!(parse_attr("{size:-9223372036854775808}").size, None);
        let many: String = (0..100_000).map(|i| format!("k{i}:{i},")).collect();
        assert_eq!(parse_attr(&format!("{{{many}size:5}}")).size, Some(5));
    }
}
