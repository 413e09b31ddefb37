//! Cell values: trimming, missing markers, and exact decimal → integer conversion.
//!
//! Timestamps such as `1736408883573957.920\t` (µs with 3 decimals) become i64 ns without going
//! through f64, which cannot hold 1.7e18 ns exactly. Sizes in KB/MB become i64 bytes the same way.
//! Scientific notation (`1.69512E+15`, what Excel writes back) is accepted and flagged lossy.

use thiserror::Error;

/// Why a cell could not be read as a number.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum ValueError {
    /// Not a decimal number.
    #[error("not a number: {0:?}")]
    NotANumber(String),
    /// A number too large for the i64 it must become.
    #[error("number out of range: {0:?}")]
    OutOfRange(String),
}

impl ValueError {
    /// The skipped-row reason for this error in `column`.
    pub fn reason(self, column: &str) -> crate::model::SkipReason {
        let column = column.to_string();
        match self {
            ValueError::NotANumber(cell) => crate::model::SkipReason::NotANumber { column, cell },
            ValueError::OutOfRange(cell) => crate::model::SkipReason::OutOfRange { column, cell },
        }
    }
}

/// A parsed number: the i64 value and whether it came from lossy (scientific) notation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Scaled {
    /// The value times the requested factor, rounded half away from zero.
    pub value: i64,
    /// True when the cell used an exponent (`E+15`): digits were already lost upstream.
    pub lossy: bool,
}

/// Strips what writers put around values: whitespace, the trailing TAB torch_npu and msprof add to
/// timestamps, CR, and double quotes (the CSV tokenizer removes quoting; this catches stray ones).
#[inline]
pub fn trim_cell(cell: &[u8]) -> &[u8] {
    let plain = |b: &u8| b.is_ascii_alphanumeric() || *b == b'-' || *b == b'.';
    if cell.first().is_some_and(plain) && cell.last().is_some_and(plain) {
        return cell;
    }
    let is_junk = |b: &u8| matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'');
    let start = cell.iter().position(|b| !is_junk(b)).unwrap_or(cell.len());
    let end = cell
        .iter()
        .rposition(|b| !is_junk(b))
        .map_or(start, |e| e + 1);
    &cell[start..end]
}

/// True for cells that mean "no value": empty, `N/A`, `NULL`, `None`, `nan` (any case).
#[inline]
pub fn is_missing(trimmed: &[u8]) -> bool {
    if trimmed.first().is_some_and(u8::is_ascii_digit) {
        return false;
    }
    trimmed.is_empty()
        || trimmed.eq_ignore_ascii_case(b"N/A")
        || trimmed.eq_ignore_ascii_case(b"NULL")
        || trimmed.eq_ignore_ascii_case(b"None")
        || trimmed.eq_ignore_ascii_case(b"nan")
}

/// Parses a decimal cell and multiplies it by `factor` exactly (e.g. µs → ns is 1000, MiB → bytes
/// is 1048576). Returns `Ok(None)` for a missing cell.
pub fn parse_scaled(cell: &[u8], factor: i64) -> Result<Option<Scaled>, ValueError> {
    let t = trim_cell(cell);
    if is_missing(t) {
        return Ok(None);
    }
    parse_decimal(t, factor).map(Some)
}

/// Like [`parse_scaled`] for integers that have no unit (node indices, DB ids).
pub fn parse_int(cell: &[u8]) -> Result<Option<i64>, ValueError> {
    Ok(parse_scaled(cell, 1)?.map(|s| s.value))
}

/// The most significant digits kept; more cannot change an i64 result after scaling.
const MAX_DIGITS: u32 = 36;

/// 10⁰ to 10¹⁹, looked up (a `pow` loops over the exponent's bits).
pub(crate) const POW10: [u64; 20] = [
    1,
    10,
    100,
    1_000,
    10_000,
    100_000,
    1_000_000,
    10_000_000,
    100_000_000,
    1_000_000_000,
    10_000_000_000,
    100_000_000_000,
    1_000_000_000_000,
    10_000_000_000_000,
    100_000_000_000_000,
    1_000_000_000_000_000,
    10_000_000_000_000_000,
    100_000_000_000_000_000,
    1_000_000_000_000_000_000,
    10_000_000_000_000_000_000,
];

/// The common case in integer registers: `[-]digits[.digits]`, at most 19 digits, result in i64.
/// `None` sends the cell to the general (i128, exponent-aware) path.
#[inline]
fn parse_fast(t: &[u8], factor: i64) -> Option<i64> {
    let (neg, body) = match t.first() {
        Some(b'-') => (true, &t[1..]),
        _ => (false, t),
    };
    if body.is_empty() || body.len() > 20 || factor <= 0 {
        return None;
    }
    // At most 19 digits (20 bytes with a dot, 19 without) cannot overflow a u64, so the loop
    // needs no per-digit check; the dot's position gives the decimals.
    let dot = dot_position(body);
    if body.len() > 19 && dot.is_none() {
        return None;
    }
    let (int_part, frac_part) = match dot {
        Some(i) => (&body[..i], &body[i + 1..]),
        None => (body, &body[..0]),
    };
    let frac_digits = frac_part.len();
    if int_part.len() + frac_digits == 0 {
        return None;
    }
    let m = digits_value(int_part)? * POW10[frac_digits] + digits_value(frac_part)?;
    let f = factor as u64;
    let v = if frac_digits == 0 {
        m.checked_mul(f)?
    } else {
        // value = m * f / 10^k. Cancel the powers of two 10^k = 2^k * 5^k shares with f first, so
        // MiB (2^20) and KiB (2^10) need only u64 arithmetic.
        let div = POW10[frac_digits];
        let tz = f.trailing_zeros().min(frac_digits as u32);
        let (f2, d2) = (f >> tz, div >> tz);
        if f2 == d2 {
            m // e.g. µs with 3 decimals → ns
        } else if let Some(p) = m.checked_mul(f2) {
            // A divisor known at compile time is a multiply, not a ~40-cycle `div`: MiB and KiB
            // factors leave exactly 5^k, so those get constants.
            let q = if tz as usize == frac_digits {
                div_pow5(p, frac_digits)
            } else {
                p / d2
            };
            let r = p - q * d2;
            if r * 2 >= d2 { q + 1 } else { q }
        } else {
            let p = u128::from(m) * u128::from(f2);
            let d = u128::from(d2);
            let (q, r) = (p / d, p % d);
            u64::try_from(if r * 2 >= d { q + 1 } else { q }).ok()?
        }
    };
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// Where the decimal point of `body` is, if anywhere. The profilers write a fixed number of
/// decimals per column (3 for µs, 6 for MB, 1 for KB), so those places are looked at first;
/// a dot found there with another one elsewhere is caught later, by the digit check.
#[inline]
fn dot_position(body: &[u8]) -> Option<usize> {
    let n = body.len();
    for decimals in [3, 6, 1] {
        if let Some(at) = n.checked_sub(decimals + 1)
            && body.get(at) == Some(&b'.')
        {
            return Some(at);
        }
    }
    body.iter().position(|&b| b == b'.')
}

/// The value of a run of at most 19 ASCII digits (`None` if any byte is not a digit): eight at a
/// time in one register (SWAR), which breaks the digit-by-digit multiply chain. A run of eight
/// or more starts with its first `len % 8` digits in a word of their own, padded with `0`s
/// (a loop over the last few digits, of varying length, was most of the time of a dump's
/// numbers); a shorter run is read a digit at a time. (Four to seven digits gathered into one
/// word from two overlapping reads of four were no faster on a dump's process and thread ids.)
#[inline(always)]
fn digits_value(s: &[u8]) -> Option<u64> {
    // Every byte is 0x30..=0x39: its high nibble is 3, and adding 6 keeps it 3.
    let digits =
        |x: u64| x & HIGH == ZEROS && x.wrapping_add(0x0606_0606_0606_0606) & HIGH == ZEROS;
    let head = s.len() % 8;
    let mut v: u64 = 0;
    let mut rest = s;
    if head > 0 {
        let Some(first) = s.first_chunk::<8>() else {
            for &b in s {
                let d = b.wrapping_sub(b'0');
                if d >= 10 {
                    return None;
                }
                v = v * 10 + u64::from(d);
            }
            return Some(v);
        };
        // The first `head` digits moved to the top bytes, '0's below them.
        let x = (u64::from_le_bytes(*first) << (8 * (8 - head))) | (ZEROS >> (8 * head));
        if !digits(x) {
            return None;
        }
        v = eight_digits(x - ZEROS);
        rest = &s[head..];
    }
    while let Some((chunk, tail)) = rest.split_first_chunk::<8>() {
        let x = u64::from_le_bytes(*chunk);
        if !digits(x) {
            return None;
        }
        v = v * 100_000_000 + eight_digits(x - ZEROS);
        rest = tail;
    }
    Some(v)
}

/// Dividends below this divide by 5^k by a multiply ([`DIV5_MAGIC`]); larger ones use `div`.
const DIV5_FAST_BELOW: u64 = 1 << 56;

/// `ceil(2^s / 5^k)` and `s = 56 + ceil(log2 5^k)` for `k` in 0..=19: for every `n < 2^56`,
/// `n / 5^k == (n * m) >> s` (Granlund and Montgomery: `n * m / 2^s` exceeds `n / 5^k` by less than
/// `n / 2^s` < 2^56 / 2^s ≤ 1 / 5^k, too little to reach the next integer). `n * m` < 2^114 fits a
/// u128.
const DIV5_MAGIC: [(u128, u32); 20] = {
    let mut t = [(0u128, 0u32); 20];
    let mut k = 0;
    while k < 20 {
        let d = 5u128.pow(k as u32);
        // ceil(log2 d): the bits of d - 1 (0 for d = 1).
        let bits = 128 - (d - 1).leading_zeros();
        let s = 56 + bits;
        t[k] = ((1u128 << s).div_ceil(d), s);
        k += 1;
    }
    t
};

const HIGH: u64 = 0xF0F0_F0F0_F0F0_F0F0;
const ZEROS: u64 = 0x3030_3030_3030_3030;

/// Lemire's eight-digit reduction of digit values (0..=9, the first digit in the lowest byte):
/// pairs, then quads, then the whole, by multiplies.
#[inline]
fn eight_digits(d: u64) -> u64 {
    const MASK: u64 = 0x0000_00FF_0000_00FF;
    const MUL1: u64 = 100 + (1_000_000 << 32);
    const MUL2: u64 = 1 + (10_000 << 32);
    let d = d.wrapping_mul(10).wrapping_add(d >> 8);
    ((d & MASK).wrapping_mul(MUL1)).wrapping_add(((d >> 16) & MASK).wrapping_mul(MUL2)) >> 32
}

/// `p / 5^k` for `k` ≤ 19: a multiply and a shift for `p < 2^56` (every size this reads), else
/// `div`. (A `match` of constant divisors was folded by the compiler back into one `div` by a
/// table entry.)
#[inline]
fn div_pow5(p: u64, k: usize) -> u64 {
    match DIV5_MAGIC.get(k) {
        Some(&(m, s)) if p < DIV5_FAST_BELOW => ((u128::from(p) * m) >> s) as u64,
        _ => p / 5u64.pow(k as u32),
    }
}

fn parse_decimal(t: &[u8], factor: i64) -> Result<Scaled, ValueError> {
    if let Some(v) = parse_fast(t, factor) {
        return Ok(Scaled {
            value: v,
            lossy: false,
        });
    }
    let bad = || ValueError::NotANumber(String::from_utf8_lossy(t).into_owned());
    let mut i = 0;
    let neg = match t.first() {
        Some(b'-') => {
            i += 1;
            true
        }
        Some(b'+') => {
            i += 1;
            false
        }
        _ => false,
    };
    let mut mantissa: i128 = 0;
    let mut digits = 0u32; // significant digits accumulated
    let mut exp10: i32 = 0; // value = mantissa * 10^exp10
    let mut seen_digit = false;
    let mut seen_dot = false;
    while let Some(&b) = t.get(i) {
        match b {
            b'0'..=b'9' => {
                seen_digit = true;
                if digits < MAX_DIGITS {
                    mantissa = mantissa * 10 + i128::from(b - b'0');
                    if mantissa != 0 {
                        digits += 1;
                    }
                    if seen_dot {
                        exp10 -= 1;
                    }
                } else if !seen_dot {
                    exp10 += 1; // dropped integer digit
                }
            }
            b'.' if !seen_dot => seen_dot = true,
            _ => break,
        }
        i += 1;
    }
    if !seen_digit {
        return Err(bad());
    }
    let mut lossy = false;
    if let Some(&e) = t.get(i) {
        if e != b'e' && e != b'E' {
            return Err(bad());
        }
        i += 1;
        let exp_neg = match t.get(i) {
            Some(b'-') => {
                i += 1;
                true
            }
            Some(b'+') => {
                i += 1;
                false
            }
            _ => false,
        };
        let mut e_val: i32 = 0;
        let mut e_digits = false;
        while let Some(&b) = t.get(i) {
            if !b.is_ascii_digit() {
                return Err(bad());
            }
            e_digits = true;
            e_val = e_val.saturating_mul(10).saturating_add(i32::from(b - b'0'));
            i += 1;
        }
        if !e_digits {
            return Err(bad());
        }
        exp10 = exp10.saturating_add(if exp_neg { -e_val } else { e_val });
        lossy = true;
    }
    let out_of_range = || ValueError::OutOfRange(String::from_utf8_lossy(t).into_owned());
    let mut v = mantissa
        .checked_mul(i128::from(factor))
        .ok_or_else(out_of_range)?;
    if v == 0 {
        // Zero times any power of ten: `0E2147483647` must not loop 2^31 times.
    } else if exp10 > 0 {
        // i64 holds at most 19 digits: a larger exponent of a non-zero value is out of range.
        let scale = u32::try_from(exp10)
            .ok()
            .filter(|&e| e <= 38)
            .map(|e| 10i128.pow(e))
            .ok_or_else(out_of_range)?;
        v = v.checked_mul(scale).ok_or_else(out_of_range)?;
    } else if exp10 < 0 {
        let shift = exp10.unsigned_abs();
        if shift > 38 {
            v = 0;
        } else {
            let div = 10i128.pow(shift);
            let q = v / div;
            let r = v % div;
            v = if r * 2 >= div { q + 1 } else { q };
        }
    }
    if neg {
        v = -v;
    }
    // i64::MIN is the NULL sentinel, so it is out of range too.
    if v > i128::from(i64::MAX) || v <= i128::from(i64::MIN) {
        return Err(out_of_range());
    }
    Ok(Scaled {
        value: v as i64,
        lossy,
    })
}

/// A memory address as the traces write it: decimal or `0x` hex, maybe quoted, up to u64
/// (PyTorch's `Addr`, msMemScope's `Ptr` and `addr`).
pub fn parse_address(text: &str) -> Option<u64> {
    // Nearly every one is `0x` and plain hex digits: read with no trim or search.
    if let Some(v) = plain_hex(text.as_bytes()) {
        return Some(v);
    }
    let t = text.trim().trim_matches('"').trim();
    match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => t.parse::<u64>().ok(),
    }
}

/// The device id from a `Device Type` / `Device` / `Device_id` cell: `NPU:4` → `4`, `4` → `4`.
/// `None` for `CPU`, `host` and empty cells.
pub fn device_id(cell: &[u8]) -> Option<String> {
    let t = trim_cell(cell);
    let s = std::str::from_utf8(t).ok()?;
    let id = s
        .strip_prefix("NPU:")
        .or_else(|| s.strip_prefix("npu:"))
        .unwrap_or(s);
    (!id.is_empty() && id.bytes().all(|b| b.is_ascii_digit())).then(|| id.to_string())
}

/// What `read` takes of the start of `t`, when it takes all of `t`.
pub(crate) fn whole<T>(t: &[u8], read: impl Fn(&[u8]) -> Option<(T, usize)>) -> Option<T> {
    read(t).and_then(|(v, n)| (n == t.len()).then_some(v))
}

/// A plain integer (`-`? and 1 to 18 digits, no leading zero): [`plain_signed_at`] of all of
/// `t`; `None` for any other text, which the careful parsers read.
pub(crate) fn plain_int(t: &[u8]) -> Option<i64> {
    whole(t, plain_signed_at)
}

/// `-`? and 1 to 19 digits (no leading zero) that fit an `i64` and are not
/// [`NULL`](crate::model::NULL), all of `t`; `None` for any other text, which the careful
/// parsers read. (A nanosecond time since 1970 has 19 digits: [`plain_int`] takes 18.)
pub(crate) fn plain_i64(t: &[u8]) -> Option<i64> {
    let neg = t.first() == Some(&b'-');
    let digits = &t[usize::from(neg)..];
    // (A whole cell: no search for the number's end, as `plain_number_at` needs.)
    if digits.is_empty() || digits.len() > 19 || (digits.len() > 1 && digits[0] == b'0') {
        return None;
    }
    let v = digits_value(digits)?;
    // At most i64::MAX: its negation is never i64::MIN, the NULL.
    let v = i64::try_from(v).ok()?;
    Some(if neg { -v } else { v })
}

/// `0x` and 1 to 16 hex digits (either case), all of `t`; `None` for any other text.
pub(crate) fn plain_hex(t: &[u8]) -> Option<u64> {
    let digits = t.strip_prefix(b"0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    digits.iter().try_fold(0u64, |v, &c| {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        Some((v << 4) | u64::from(d))
    })
}

/// The number without a sign at the start of `b` when it is 1 to `max` digits (`max` ≤ 19) by
/// JSON's grammar (no leading zero before another digit): its value and length. Eight digits
/// are converted at a time. What follows is not looked at (the caller's to check: a PyTorch
/// template's next piece, or the end of the text for [`whole`]).
pub(crate) fn plain_number_at(b: &[u8], max: usize) -> Option<(u64, usize)> {
    let max = max.min(19);
    let (mut v, mut n) = (0u64, 0usize);
    // The digits counted and converted in one walk, a word at a time (counted first, then
    // converted, each number was read twice).
    while let Some(chunk) = b.get(n..n + 8) {
        let word = chunk.try_into().map_or(0, u64::from_le_bytes);
        let x = word ^ ZEROS;
        let k = leading_digits(x);
        if n + k > max {
            return None;
        }
        if k == 8 {
            // (At most 11 digits before these eight: below 10^19 < 2^64.)
            v = v * 100_000_000 + eight_digits(x);
            n += 8;
            continue;
        }
        if k > 0 {
            // The first `k` digits moved to the top bytes, zeros below them.
            v = v * POW10[k] + eight_digits(x << (8 * (8 - k)));
            n += k;
        }
        return plain_digits(b, v, n);
    }
    // Fewer than eight bytes left.
    for &c in &b[n..] {
        let d = c.wrapping_sub(b'0');
        if d >= 10 {
            break;
        }
        if n + 1 > max {
            return None;
        }
        v = v * 10 + u64::from(d);
        n += 1;
    }
    plain_digits(b, v, n)
}

/// `(v, n)` when the `n` digits at the start of `b` (worth `v`) are a number by JSON's
/// grammar: at least one, and no leading zero before another digit.
fn plain_digits(b: &[u8], v: u64, n: usize) -> Option<(u64, usize)> {
    (n > 0 && (n == 1 || b[0] != b'0')).then_some((v, n))
}

/// `-`? and a [`plain_number_at`] of at most 18 digits (so it fits an `i64`, and is never
/// [`NULL`](crate::model::NULL)): its value and length.
pub(crate) fn plain_signed_at(b: &[u8]) -> Option<(i64, usize)> {
    let neg = b.first() == Some(&b'-');
    let (v, n) = plain_number_at(&b[usize::from(neg)..], 18)?;
    let v = i64::try_from(v).ok()?;
    Some((if neg { -v } else { v }, n + usize::from(neg)))
}

/// The value of the first `n` (1 to 8) bytes of `b`, all ASCII digits: eight at a time in one
/// word (the multiply-and-shift of simdjson's eight-digit parse), a byte at a time when fewer
/// than eight bytes are left.
pub(crate) fn up_to_eight_digits(b: &[u8], n: usize) -> u64 {
    let Some(word) = b.get(..8).and_then(|w| w.try_into().ok()) else {
        return b[..n].iter().fold(0, |v, &d| v * 10 + u64::from(d - b'0'));
    };
    // The first digit is the lowest byte: the `n` digits moved to the top, '0's below them.
    let word = u64::from_le_bytes(word);
    eight_digits(((word << (8 * (8 - n))) | ZEROS.checked_shr(8 * n as u32).unwrap_or(0)) - ZEROS)
}

/// How many ASCII digits `b` starts with, eight bytes at a time: the numbers of a PyTorch memory
/// event are a third of its bytes, and a byte at a time was a tenth of the scan.
pub(crate) fn digit_run(b: &[u8]) -> usize {
    let mut n = 0;
    while let Some(chunk) = b.get(n..n + 8) {
        let k = leading_digits(chunk.try_into().map_or(0, u64::from_le_bytes) ^ ZEROS);
        if k < 8 {
            return n + k;
        }
        n += 8;
    }
    n + b[n..].iter().take_while(|c| c.is_ascii_digit()).count()
}

/// How many of the eight bytes of a little-endian word XOR '0's (a digit's byte is its value,
/// 0..=9) are digits before the first that is none (8 when all are).
#[inline(always)]
fn leading_digits(x: u64) -> usize {
    // Added to a byte below 10, stays below 0x80; added to 10..0x80, reaches it (a byte from
    // 0x80 has its high bit already). A carry out of a byte happens only from one that is no
    // digit, into the bytes after it, which are not looked at.
    const TO_HIGH_BIT: u64 = u64::from_ne_bytes([0x80 - 10; 8]);
    const HIGH_BITS: u64 = u64::from_ne_bytes([0x80; 8]);
    let not_digit = (x.wrapping_add(TO_HIGH_BIT) | x) & HIGH_BITS;
    (not_digit.trailing_zeros() / 8) as usize
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ns(s: &str) -> i64 {
        parse_scaled(s.as_bytes(), 1000).unwrap().unwrap().value
    }

    #[test]
    fn timestamps_are_exact_nanoseconds() {
        assert_eq!(ns("1736408883573957.920\t"), 1_736_408_883_573_957_920);
        assert_eq!(ns("\"1779785515596661.420\t\""), 1_779_785_515_596_661_420);
        assert_eq!(ns("1695115378653323.5"), 1_695_115_378_653_323_500);
        assert_eq!(ns("12"), 12_000);
        // More than 3 decimals round to the nearest ns.
        assert_eq!(ns("1.0005"), 1001);
        assert_eq!(ns("-1.0005"), -1001);
    }

    #[test]
    fn sizes_convert_units_exactly() {
        let mib = |s: &str| parse_scaled(s.as_bytes(), 1 << 20).unwrap().unwrap().value;
        assert_eq!(mib("935.9951171875"), 981_462_016);
        assert_eq!(mib("0.0625"), 65_536);
        let kib = |s: &str| parse_scaled(s.as_bytes(), 1024).unwrap().unwrap().value;
        assert_eq!(kib("18816.5"), 19_268_096);
        assert_eq!(kib("-512"), -524_288);
    }

    #[test]
    fn scientific_notation_is_accepted_and_lossy() {
        let s = parse_scaled(b"1.69512E+15", 1000).unwrap().unwrap();
        assert_eq!(s.value, 1_695_120_000_000_000_000);
        assert!(s.lossy);
        assert!(!parse_scaled(b"1.5", 1).unwrap().unwrap().lossy);
        assert_eq!(parse_scaled(b"2.5e-1", 1000).unwrap().unwrap().value, 250);
    }

    #[test]
    fn missing_and_bad_cells() {
        for m in ["", "  ", "N/A", "null", "\t", "\"\""] {
            assert_eq!(parse_scaled(m.as_bytes(), 1).unwrap(), None, "{m:?}");
        }
        for b in ["abc", "1.2.3", "1e", "--1", "12x", ".", "e5", "1e+"] {
            assert!(parse_scaled(b.as_bytes(), 1).is_err(), "{b:?}");
        }
        assert!(matches!(
            parse_scaled(b"1e30", 1000),
            Err(ValueError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_scaled(b"99999999999999999999999", 1),
            Err(ValueError::OutOfRange(_))
        ));
        assert!(matches!(
            parse_scaled(b"-9223372036854775808", 1),
            Err(ValueError::OutOfRange(_))
        ));
    }

    #[test]
    fn fast_and_general_paths_agree() {
        for (cell, f) in [
            ("935.9951171875", 1 << 20),
            ("0.5", 1024),
            ("-1.0005", 1000),
            ("12", 1000),
            ("1700000000000005.123", 1000),
            ("3.14159", 7),
        ] {
            let fast = parse_fast(cell.as_bytes(), f);
            let mut general = cell.to_string();
            general.push_str("e0"); // forces the general path
            let slow = parse_decimal(general.as_bytes(), f).unwrap().value;
            assert_eq!(fast, Some(slow), "{cell} * {f}");
        }
        assert_eq!(parse_fast(b"99999999999999999999", 1), None);
    }

    #[test]
    fn plain_i64_takes_nanosecond_times_and_leaves_the_rest_to_the_careful_parser() {
        assert_eq!(
            plain_i64(b"1700000000000031680"),
            Some(1_700_000_000_000_031_680)
        );
        assert_eq!(plain_i64(b"9223372036854775807"), Some(i64::MAX));
        assert_eq!(plain_i64(b"-9223372036854775807"), Some(-i64::MAX));
        // i64::MIN is the NULL: never read as a value here.
        assert_eq!(plain_i64(b"-9223372036854775808"), None);
        assert_eq!(plain_i64(b"9223372036854775808"), None);
        for other in ["", "-", "007", "1 ", "0x10", "12345678901234567890", "+1"] {
            assert_eq!(plain_i64(other.as_bytes()), None, "{other:?}");
        }
        assert_eq!(plain_hex(b"0x000012c000003000"), Some(0x12c0_0000_3000));
        assert_eq!(plain_hex(b"0xFFFFFFFFFFFFFFFF"), Some(u64::MAX));
        for other in ["0x", "0x1FFFFFFFFFFFFFFFF", "0X10", "0x1g", " 0x1", "12"] {
            assert_eq!(plain_hex(other.as_bytes()), None, "{other:?}");
        }
    }

    proptest::proptest! {
        /// What the fast integer and hex paths accept, they read as the standard library does.
        #[test]
        fn plain_i64_and_plain_hex_agree_with_std(
            cell in "-?[0-9]{0,21}|0x[0-9a-fA-F]{0,18}|[0-9a-z +-]{0,6}",
            n in proptest::num::i64::ANY,
            a in proptest::num::u64::ANY,
        ) {
            for text in [cell.clone(), n.to_string(), format!("0x{a:x}"), format!("0x{a:016X}")] {
                if let Some(v) = plain_i64(text.as_bytes()) {
                    proptest::prop_assert_eq!(Some(v), text.parse::<i64>().ok(), "{}", text);
                    proptest::prop_assert!(v != crate::model::NULL);
                }
                if let Some(v) = plain_hex(text.as_bytes()) {
                    let std = text.strip_prefix("0x").and_then(|h| u64::from_str_radix(h, 16).ok());
                    proptest::prop_assert_eq!(Some(v), std, "{}", text);
                }
            }
            // Every i64 but the NULL is taken by the fast path; every u64 in hex too.
            if n != crate::model::NULL {
                proptest::prop_assert_eq!(plain_i64(n.to_string().as_bytes()), Some(n));
            }
            proptest::prop_assert_eq!(plain_hex(format!("0x{a:x}").as_bytes()), Some(a));
        }

        /// A short cell (the bytes around the digits' among its own) is read exactly when it
        /// is a plain number, to the value std reads: each length up to one word and past it.
        #[test]
        fn short_cells_are_read_exactly_when_plain(cell in "-?[0-9/:]{1,9}") {
            let body = cell.strip_prefix('-').unwrap_or(&cell);
            let plain = !body.is_empty()
                && body.bytes().all(|b| b.is_ascii_digit())
                && !(body.len() > 1 && body.starts_with('0'));
            let want = plain.then(|| cell.parse::<i64>().ok()).flatten();
            proptest::prop_assert_eq!(plain_i64(cell.as_bytes()), want, "{}", cell);
        }

        /// Whatever the fast path accepts, it reads exactly as the general path does.
        #[test]
        fn fast_path_equals_general_path(
            int in "[0-9]{0,21}",
            frac in proptest::option::of("[0-9]{0,21}"),
            neg in proptest::bool::ANY,
            factor in proptest::sample::select(vec![1i64, 7, 1000, 1024, 1 << 20, 1000 * 1024, 1_000_000]),
        ) {
            let mut cell = if neg { "-".to_string() } else { String::new() };
            cell.push_str(&int);
            if let Some(f) = &frac {
                cell.push('.');
                cell.push_str(f);
            }
            let general = parse_decimal(format!("{cell}e0").as_bytes(), factor).ok().map(|s| s.value);
            if let Some(v) = parse_fast(cell.as_bytes(), factor) {
                proptest::prop_assert_eq!(Some(v), general, "{}", cell);
            }
            if int.len() + frac.as_ref().map_or(0, String::len) <= 12 && !(int.is_empty() && frac.as_ref().is_none_or(String::is_empty)) {
                // Short numbers always take the fast path.
                proptest::prop_assert!(parse_fast(cell.as_bytes(), factor).is_some(), "{}", cell);
            }
        }

        /// Bytes next to the digits in ASCII (`/`, `:`) or after them anywhere in a cell never
        /// slip through the eight-at-a-time digit check.
        #[test]
        fn fast_path_rejects_what_is_not_a_number(cell in "[-0-9./:@ eEp\u{80}]{1,24}") {
            let general = parse_decimal(cell.as_bytes(), 1000).ok().map(|s| s.value);
            if let Some(v) = parse_fast(cell.as_bytes(), 1000) {
                proptest::prop_assert_eq!(Some(v), general, "{}", cell);
            }
        }

        /// A number at the start of any bytes reads as a byte at a time reads it: its digits
        /// up to the first other byte (none, too many or a leading zero: no number).
        #[test]
        fn a_number_at_the_start_reads_as_one_digit_at_a_time(
            b in proptest::collection::vec(
                proptest::prop_oneof![
                    8 => proptest::sample::select(b"0123456789".to_vec()),
                    1 => proptest::sample::select(b"/:,}. -\xb0\xff\x00".to_vec()),
                ],
                0..32,
            ),
            max in 1usize..=20,
        ) {
            let n = b.iter().take_while(|c| c.is_ascii_digit()).count();
            let want = (n > 0 && n <= max.min(19) && (n == 1 || b[0] != b'0'))
                .then(|| (std::str::from_utf8(&b[..n]).unwrap().parse::<u64>().unwrap(), n));
            proptest::prop_assert_eq!(plain_number_at(&b, max), want);
        }

        /// A run of digits reads as Rust's own integer parser reads it.
        #[test]
        fn digit_runs_read_as_std_does(run in "[0-9]{1,19}|[0-9:/]{8,19}") {
            proptest::prop_assert_eq!(digits_value(run.as_bytes()), run.parse::<u64>().ok());
        }

        /// Trimming drops exactly the junk bytes at both ends.
        #[test]
        fn trim_drops_only_junk_at_the_ends(cell in "[ \t\r\n\"'a-z0-9.]{0,12}") {
            let junk = |c: char| matches!(c, ' ' | '\t' | '\r' | '\n' | '"' | '\'');
            let want = cell.trim_matches(junk);
            proptest::prop_assert_eq!(trim_cell(cell.as_bytes()), want.as_bytes());
        }
    }

    #[test]
    fn division_by_powers_of_five_is_exact_at_the_edges() {
        for k in 0..20usize {
            let d = 5u64.pow(k as u32);
            let mut ps = vec![
                0,
                1,
                d - 1,
                d,
                d + 1,
                DIV5_FAST_BELOW - 1,
                DIV5_FAST_BELOW,
                u64::MAX,
            ];
            // Just below and at the last multiple of d in the fast range.
            let top = (DIV5_FAST_BELOW - 1) / d * d;
            ps.extend([top - 1, top]);
            for p in ps {
                assert_eq!(div_pow5(p, k), p / d, "{p} / 5^{k}");
            }
        }
    }

    proptest::proptest! {
        /// The multiply matches `div` for every power of five and any dividend.
        #[test]
        fn division_by_powers_of_five_matches_div(p in 0u64..u64::MAX, k in 0usize..20) {
            proptest::prop_assert_eq!(div_pow5(p, k), p / 5u64.pow(k as u32));
        }
    }

    #[test]
    fn pathological_numbers_parse_in_bounded_time() {
        // Each of these looped up to 2^31 times, or overflowed in debug builds.
        assert_eq!(
            parse_scaled(b"0E2147483647", 1000).unwrap().unwrap().value,
            0
        );
        assert_eq!(parse_scaled(b"0e-2147483648", 1).unwrap().unwrap().value, 0);
        assert!(parse_scaled(b"1E2147483647", 1000).is_err());
        assert!(parse_scaled(b"1e39", 1).is_err());
        assert_eq!(parse_scaled(b"1e-300", 1000).unwrap().unwrap().value, 0);
        assert_eq!(
            parse_scaled(b"12345678901234567890", 1).unwrap_err(),
            ValueError::OutOfRange("12345678901234567890".into())
        );
        assert_eq!(
            parse_scaled(b"0.1234567890123456789", 1 << 20)
                .unwrap()
                .unwrap()
                .value,
            129_454
        );
        let zeros = format!("0.{}1e3", "0".repeat(100_000));
        assert_eq!(parse_scaled(zeros.as_bytes(), 1).unwrap().unwrap().value, 0);
    }

    #[test]
    fn device_ids() {
        assert_eq!(device_id(b"NPU:4"), Some("4".into()));
        assert_eq!(device_id(b" 7 "), Some("7".into()));
        assert_eq!(device_id(b"CPU"), None);
        assert_eq!(device_id(b"host"), None);
    }
}
